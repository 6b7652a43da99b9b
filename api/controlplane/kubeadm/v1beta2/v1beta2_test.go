package v1beta2

import (
	"testing"

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
	apitest.ExpectNoEmptyObjects(t, objects)
}

func TestV1Beta1ConditionsLiveUnderStatusDeprecated(t *testing.T) {
	o := &KubeadmControlPlane{}
	apitest.ExpectConditionAccessors(t, o, func() any { return o.Status },
		"Available", clusterv1.Conditions{{Type: "MachinesReady", Status: "True"}}, "MachinesReady")
}
