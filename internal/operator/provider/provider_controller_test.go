package provider

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	operatorv1 "github.com/capstan-dev/capstan/api/operator/v1alpha2"
	"github.com/capstan-dev/capstan/internal/patch"
)

// TestWhatChangedIsSaidAfterAConcurrentStatusWrite: a reconcile reads a provider, applies a change of its
// additional manifests in place (recording the parts it applied in the annotations) and deletes what is no
// longer rendered; meanwhile another reconcile wrote the provider's status, so this one's status write
// conflicts. The annotations are written already, so no later reconcile would find the change again: the
// conditions are written over the provider read again, and ProviderUpgraded says what changed (CI once
// saw the previous change's message stay for good).
func TestWhatChangedIsSaidAfterAConcurrentStatusWrite(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	scheme := runtime.NewScheme()
	g.Expect(operatorv1.AddToScheme(scheme)).To(Succeed())
	kind := operatorv1.Kinds()[3]
	g.Expect(kind.Name).To(Equal("InfrastructureProvider"))

	p := &operatorv1.InfrastructureProvider{ObjectMeta: metav1.ObjectMeta{Namespace: "capl-system", Name: "local", Generation: 4,
		Annotations: map[string]string{operatorv1.AppliedFromAnnotation: "additionalManifests=aaa"}}}
	p.Status.Conditions = []metav1.Condition{{Type: operatorv1.ProviderUpgradedCondition, Status: metav1.ConditionTrue,
		Reason: operatorv1.ConfigSecretChangedReason, Message: "Applied v0.2.0 again as an upgrade: the content of the configSecret capl-system/local-variables changed"}}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(p).WithStatusSubresource(p).Build()

	read := &operatorv1.InfrastructureProvider{}
	g.Expect(c.Get(ctx, client.ObjectKeyFromObject(p), read)).To(Succeed())
	helper := patch.NewHelper(read, c)

	// The other write, after the read.
	other := &operatorv1.InfrastructureProvider{}
	g.Expect(c.Get(ctx, client.ObjectKeyFromObject(p), other)).To(Succeed())
	meta.SetStatusCondition(&other.Status.Conditions, metav1.Condition{Type: operatorv1.ReadyCondition, Status: metav1.ConditionTrue, Reason: operatorv1.DeploymentAvailableReason})
	g.Expect(c.Status().Update(ctx, other)).To(Succeed())

	// This reconcile's work.
	read.Annotations[operatorv1.AppliedFromAnnotation] = "additionalManifests=bbb"
	message := "Applied v0.2.0 again as an upgrade: the additional manifests changed; deleted what it no longer has: ConfigMap capl-system/extra-b"
	s := &scope{provider: read, upgraded: good(operatorv1.SpecChangedReason, message)}
	r := &Reconciler{Client: c, APIReader: c, Kind: kind}
	g.Expect(r.writeBack(ctx, helper, s)).To(Succeed())

	got := &operatorv1.InfrastructureProvider{}
	g.Expect(c.Get(ctx, client.ObjectKeyFromObject(p), got)).To(Succeed())
	g.Expect(got.Annotations).To(HaveKeyWithValue(operatorv1.AppliedFromAnnotation, "additionalManifests=bbb"))
	upgraded := meta.FindStatusCondition(got.Status.Conditions, operatorv1.ProviderUpgradedCondition)
	g.Expect(upgraded).NotTo(BeNil())
	g.Expect(upgraded.Message).To(Equal(message))
	g.Expect(meta.FindStatusCondition(got.Status.Conditions, operatorv1.ReadyCondition)).NotTo(BeNil(), "the other write's condition is kept")

	// A change of the spec meanwhile: its own reconcile writes the status, this one says it conflicted.
	g.Expect(c.Get(ctx, client.ObjectKeyFromObject(p), read)).To(Succeed())
	helper = patch.NewHelper(read, c)
	g.Expect(c.Get(ctx, client.ObjectKeyFromObject(p), other)).To(Succeed())
	other.Spec.Version = "v0.3.0"
	other.Generation++
	g.Expect(c.Update(ctx, other)).To(Succeed())
	g.Expect(c.Get(ctx, client.ObjectKeyFromObject(p), other)).To(Succeed())
	meta.SetStatusCondition(&other.Status.Conditions, metav1.Condition{Type: operatorv1.ReadyCondition, Status: metav1.ConditionFalse, Reason: "Changed"})
	g.Expect(c.Status().Update(ctx, other)).To(Succeed())
	s = &scope{provider: read, upgraded: good(operatorv1.SpecChangedReason, "Applied v0.2.0 again as an upgrade: the spec changed")}
	err := r.writeBack(ctx, helper, s)
	g.Expect(err).To(HaveOccurred())
	g.Expect(apierrors.IsConflict(err)).To(BeTrue(), "%v", err)
}
