package v1beta2

import (
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
	apitest.ExpectNoEmptyObjects(t, objects)
}

func TestV1Beta1ConditionsLiveUnderStatusDeprecated(t *testing.T) {
	o := &Machine{}
	apitest.ExpectConditionAccessors(t, o, func() any { return o.Status },
		"Available", Conditions{{Type: "Ready", Status: "True"}}, "Ready")
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
