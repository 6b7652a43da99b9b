package v1beta2

import (
	"encoding/json"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/capstan-dev/capstan/api/internal/apitest"
)

func TestUnsetFieldsAreNotSerialized(t *testing.T) {
	objects, err := apitest.ZeroObjects(AddToScheme, GroupVersion, &Cluster{})
	if err != nil {
		t.Fatal(err)
	}
	if len(objects) != 16 {
		t.Fatalf("the scheme knows %d types of this package, want the 8 kinds and their lists", len(objects))
	}
	// The fields a user sets, with every optional struct unset.
	objects["Machine with its required fields"] = &Machine{Spec: MachineSpec{
		ClusterName:       "c",
		Bootstrap:         Bootstrap{DataSecretName: new(string)},
		InfrastructureRef: ContractVersionedObjectReference{APIGroup: "infrastructure.cluster.x-k8s.io", Kind: "LocalMachine", Name: "m"},
	}}
	objects["Cluster with a topology"] = &Cluster{Spec: ClusterSpec{Topology: Topology{ClassRef: ClusterClassRef{Name: "cc"}, Version: "v1.34.0",
		Workers: WorkersTopology{MachineDeployments: []MachineDeploymentTopology{{Class: "default", Name: "md"}}}}}}
	objects["MachineHealthCheck with its required fields"] = &MachineHealthCheck{Spec: MachineHealthCheckSpec{ClusterName: "c",
		Selector: metav1.LabelSelector{MatchLabels: map[string]string{"a": "b"}}}}
	for name, obj := range objects {
		empty, err := apitest.EmptyObjects(obj)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(empty) > 0 {
			t.Errorf("%s serializes empty objects at %v", name, empty)
		}
	}
}

func TestV1Beta1ConditionsLiveUnderStatusDeprecated(t *testing.T) {
	m := &Machine{}
	if got := m.GetV1Beta1Conditions(); got != nil {
		t.Fatalf("a new Machine has v1beta1 conditions %v", got)
	}
	m.SetV1Beta1Conditions(Conditions{{Type: "Ready", Status: "True"}})
	m.SetConditions([]metav1.Condition{{Type: "Available", Status: metav1.ConditionTrue}})
	data, err := json.Marshal(m.Status)
	if err != nil {
		t.Fatal(err)
	}
	var status struct {
		Conditions []struct{ Type string } `json:"conditions"`
		Deprecated struct {
			V1Beta1 struct {
				Conditions []struct{ Type string } `json:"conditions"`
			} `json:"v1beta1"`
		} `json:"deprecated"`
	}
	if err := json.Unmarshal(data, &status); err != nil {
		t.Fatal(err)
	}
	if len(status.Conditions) != 1 || status.Conditions[0].Type != "Available" ||
		len(status.Deprecated.V1Beta1.Conditions) != 1 || status.Deprecated.V1Beta1.Conditions[0].Type != "Ready" {
		t.Errorf("status is %s, want Available in status.conditions and Ready in status.deprecated.v1beta1.conditions", data)
	}
}

func TestTypedPhases(t *testing.T) {
	for _, c := range []struct{ phase, want string }{
		{"Updating", "Updating"}, {"Running", "Running"}, {"", "Unknown"}, {"Sleeping", "Unknown"},
	} {
		s := MachineStatus{Phase: c.phase}
		if got := s.GetTypedPhase(); string(got) != c.want {
			t.Errorf("Machine phase %q reads as %q, want %q", c.phase, got, c.want)
		}
	}
	var cs ClusterStatus
	cs.SetTypedPhase(ClusterPhaseProvisioned)
	if cs.Phase != "Provisioned" || cs.GetTypedPhase() != ClusterPhaseProvisioned {
		t.Errorf("Cluster phase %q, want Provisioned", cs.Phase)
	}
}
