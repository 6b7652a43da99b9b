package v1beta2

import (
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	bootstrapv1 "github.com/capstan-dev/capstan/api/bootstrap/kubeadm/v1beta2"
	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta2"
	"github.com/capstan-dev/capstan/api/internal/apitest"
)

func TestUnsetFieldsAreNotSerialized(t *testing.T) {
	objects, err := apitest.ZeroObjects(AddToScheme, GroupVersion, &KubeadmControlPlane{})
	if err != nil {
		t.Fatal(err)
	}
	if len(objects) != 4 {
		t.Fatalf("the scheme knows %d types of this package, want the 2 kinds and their lists", len(objects))
	}
	maxSurge := intstr.FromInt32(0)
	// What a user typically sets, with every other optional struct unset.
	objects["KubeadmControlPlane with its required fields"] = &KubeadmControlPlane{Spec: KubeadmControlPlaneSpec{
		Version: "v1.34.0",
		MachineTemplate: KubeadmControlPlaneMachineTemplate{Spec: KubeadmControlPlaneMachineTemplateSpec{
			InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: "infrastructure.cluster.x-k8s.io", Kind: "LocalMachineTemplate", Name: "cp"},
		}},
		KubeadmConfigSpec: bootstrapv1.KubeadmConfigSpec{ClusterConfiguration: bootstrapv1.ClusterConfiguration{CertificatesDir: "/pki"}},
		Rollout:           KubeadmControlPlaneRolloutSpec{Strategy: KubeadmControlPlaneRolloutStrategy{RollingUpdate: KubeadmControlPlaneRolloutStrategyRollingUpdate{MaxSurge: &maxSurge}}},
	}}
	objects["KubeadmControlPlaneTemplate with taints"] = &KubeadmControlPlaneTemplate{Spec: KubeadmControlPlaneTemplateSpec{
		Template: KubeadmControlPlaneTemplateResource{Spec: KubeadmControlPlaneTemplateResourceSpec{
			MachineTemplate: KubeadmControlPlaneTemplateMachineTemplate{Spec: KubeadmControlPlaneTemplateMachineTemplateSpec{
				Taints: []clusterv1.MachineTaint{{Key: "k", Effect: "NoSchedule"}},
			}},
		}},
	}}
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
	kcp := &KubeadmControlPlane{}
	if got := kcp.GetV1Beta1Conditions(); got != nil {
		t.Fatalf("a new KubeadmControlPlane has v1beta1 conditions %v", got)
	}
	kcp.SetV1Beta1Conditions(clusterv1.Conditions{{Type: "MachinesReady", Status: "True"}})
	kcp.SetConditions([]metav1.Condition{{Type: "Available", Status: metav1.ConditionTrue}})
	conditions, v1beta1, err := apitest.ConditionTypes(kcp.Status)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(conditions, []string{"Available"}) || !slices.Equal(v1beta1, []string{"MachinesReady"}) {
		t.Errorf("status.conditions has %v, status.deprecated.v1beta1.conditions %v; want [Available] and [MachinesReady]", conditions, v1beta1)
	}
	if got := kcp.GetV1Beta1Conditions(); len(got) != 1 || got[0].Type != "MachinesReady" {
		t.Errorf("GetV1Beta1Conditions returns %v", got)
	}
}
