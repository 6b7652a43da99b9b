package webhooks

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
)

type clusterDefaulter struct{}

func (clusterDefaulter) Default(context.Context, *clusterv1.Cluster) error { return nil }

type clusterValidator struct{}

func (clusterValidator) ValidateCreate(context.Context, *clusterv1.Cluster) (admission.Warnings, error) {
	return nil, nil
}
func (clusterValidator) ValidateUpdate(context.Context, *clusterv1.Cluster, *clusterv1.Cluster) (admission.Warnings, error) {
	return nil, nil
}
func (clusterValidator) ValidateDelete(context.Context, *clusterv1.Cluster) (admission.Warnings, error) {
	return nil, nil
}

func TestManifestsFollowTheHooks(t *testing.T) {
	g := NewWithT(t)
	scheme := runtime.NewScheme()
	g.Expect(clusterv1.AddToScheme(scheme)).To(Succeed())
	set := Set{Prefix: "capi-test", Selector: map[string]string{"app": "test"}, Hooks: []Hook{
		Validating(&clusterv1.Cluster{}, clusterValidator{}).On(admissionregistrationv1.Delete),
		Mutating(&clusterv1.Cluster{}, clusterDefaulter{}),
	}}
	objs, err := set.Manifests(scheme, "test-system")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(objs).To(HaveLen(3))

	svc := objs[0].(*corev1.Service)
	g.Expect(svc.Name).To(Equal("capi-test-webhook-service"))
	g.Expect(svc.Namespace).To(Equal("test-system"))
	g.Expect(svc.Spec.Selector).To(Equal(map[string]string{"app": "test"}))
	g.Expect(svc.Spec.Ports[0].TargetPort.StrVal).To(Equal(PortName))

	validating := objs[1].(*admissionregistrationv1.ValidatingWebhookConfiguration)
	g.Expect(validating.Name).To(Equal("capi-test-validating-webhook-configuration"))
	w := validating.Webhooks[0]
	g.Expect(w.Name).To(Equal("validation.cluster.cluster.x-k8s.io"))
	g.Expect(*w.ClientConfig.Service).To(Equal(admissionregistrationv1.ServiceReference{
		Namespace: "test-system", Name: "capi-test-webhook-service", Path: ptr.To("/validate-cluster-x-k8s-io-v1beta1-cluster")}))
	g.Expect(w.Rules[0].Operations).To(Equal([]admissionregistrationv1.OperationType{admissionregistrationv1.Delete}))
	g.Expect(w.Rules[0].Resources).To(Equal([]string{"clusters"}))
	g.Expect(*w.FailurePolicy).To(Equal(admissionregistrationv1.Fail))
	g.Expect(*w.TimeoutSeconds).To(BeEquivalentTo(TimeoutSeconds))

	mutating := objs[2].(*admissionregistrationv1.MutatingWebhookConfiguration)
	g.Expect(mutating.Name).To(Equal("capi-test-mutating-webhook-configuration"))
	g.Expect(mutating.Webhooks[0].Name).To(Equal("default.cluster.cluster.x-k8s.io"))
	g.Expect(*mutating.Webhooks[0].ClientConfig.Service.Path).To(Equal("/mutate-cluster-x-k8s-io-v1beta1-cluster"))
	g.Expect(mutating.Webhooks[0].Rules[0].Operations).To(Equal([]admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update}))
}

func TestNamespace(t *testing.T) {
	g := NewWithT(t)
	t.Setenv("POD_NAMESPACE", "capi-system")
	g.Expect(Namespace()).To(Equal("capi-system"))
}
