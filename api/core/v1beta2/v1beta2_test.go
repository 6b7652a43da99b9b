package v1beta2

import (
	"slices"
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
	conditions, v1beta1, err := apitest.ConditionTypes(m.Status)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(conditions, []string{"Available"}) || !slices.Equal(v1beta1, []string{"Ready"}) {
		t.Errorf("status.conditions has %v, status.deprecated.v1beta1.conditions %v; want [Available] and [Ready]", conditions, v1beta1)
	}
	if got := m.GetV1Beta1Conditions(); len(got) != 1 || got[0].Type != "Ready" {
		t.Errorf("GetV1Beta1Conditions returns %v", got)
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
