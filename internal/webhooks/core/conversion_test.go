package core

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	clusterv1beta2 "github.com/capstan-dev/capstan/api/core/v1beta2"
	ipamv1alpha1 "github.com/capstan-dev/capstan/api/ipam/v1alpha1"
	ipamv1 "github.com/capstan-dev/capstan/api/ipam/v1beta1"
	"github.com/capstan-dev/capstan/config/crd"
	"github.com/capstan-dev/capstan/internal/conversion"
	"github.com/capstan-dev/capstan/internal/webhooks"
	"github.com/capstan-dev/capstan/internal/webhooks/certs"
	"github.com/capstan-dev/capstan/internal/webhooks/webhookstest"
)

// An IPAM provider written against v1alpha1 and capstan's controllers, on v1beta1, share IPAddressClaims:
// the API server converts through the core manager's webhook, and what v1alpha1 cannot express survives a
// v1alpha1 write.
func TestIPAMv1alpha1IsConvertedByTheCoreManager(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	install(t, ns)
	webhookstest.Convert(t, env, ns, Webhooks(nil))
	startManager(t, ns)
	// The API server calls the manager, not the harness's own conversion webhook: the CRDs point at the
	// manager's Service, with the CA of its certificate Secret.
	secret := &corev1.Secret{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "capi-webhook-service-cert"}, secret)).To(Succeed())
	for _, name := range []string{"ipaddresses.ipam.cluster.x-k8s.io", "ipaddressclaims.ipam.cluster.x-k8s.io"} {
		c := &apiextensionsv1.CustomResourceDefinition{}
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Name: name}, c)).To(Succeed())
		g.Expect(c.Spec.Conversion.Webhook.ClientConfig.Service).NotTo(BeNil())
		g.Expect(c.Spec.Conversion.Webhook.ClientConfig.Service.Namespace).To(Equal(ns))
		g.Expect(c.Spec.Conversion.Webhook.ClientConfig.CABundle).To(Equal(secret.Data[certs.CAKey]))
	}

	pool := corev1.TypedLocalObjectReference{APIGroup: ptr.To("ipam.example.com"), Kind: "Pool", Name: "p"}
	claim := &ipamv1.IPAddressClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "m-0", Labels: map[string]string{"team": "a"}},
		Spec:       ipamv1.IPAddressClaimSpec{ClusterName: "prod", PoolRef: pool},
	}
	g.Expect(env.Client.Create(ctx, claim)).To(Succeed())
	ready := []metav1.Condition{{Type: "Ready", Status: metav1.ConditionFalse, Reason: "PoolExhausted", Message: "no free address",
		LastTransitionTime: metav1.NewTime(time.Now().Truncate(time.Second))}}
	claim.Status.V1Beta2 = &ipamv1.IPAddressClaimV1Beta2Status{Conditions: ready}
	g.Expect(env.Client.Status().Update(ctx, claim)).To(Succeed())

	// The provider reads it in v1alpha1: the Cluster is the label.
	old := &ipamv1alpha1.IPAddressClaim{}
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(claim), old)).To(Succeed())
	g.Expect(old.Labels).To(HaveKeyWithValue(clusterv1.ClusterNameLabel, "prod"))
	g.Expect(old.Spec.PoolRef).To(Equal(pool))

	// It binds the claim in v1alpha1 and adds an IPAddress in v1alpha1.
	old.Status.AddressRef.Name = "m-0"
	old.Status.Conditions = clusterv1.Conditions{{Type: clusterv1.ReadyCondition, Status: corev1.ConditionTrue,
		LastTransitionTime: metav1.NewTime(time.Now().Truncate(time.Second))}}
	g.Expect(env.Client.Status().Update(ctx, old)).To(Succeed())
	addr := &ipamv1alpha1.IPAddress{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "m-0"},
		Spec: ipamv1alpha1.IPAddressSpec{ClaimRef: corev1.LocalObjectReference{Name: "m-0"}, PoolRef: pool,
			Address: "10.0.0.5", Prefix: 24, Gateway: "10.0.0.1"},
	}
	g.Expect(env.Client.Create(ctx, addr)).To(Succeed())

	// In v1beta1 nothing is lost: clusterName, the v1beta2 conditions, the labels as they were, and what
	// the provider wrote.
	got := &ipamv1.IPAddressClaim{}
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(claim), got)).To(Succeed())
	g.Expect(got.Spec.ClusterName).To(Equal("prod"))
	g.Expect(got.Labels).To(Equal(map[string]string{"team": "a"}))
	g.Expect(got.Annotations).NotTo(HaveKey(conversion.DataAnnotation))
	g.Expect(got.Status.V1Beta2).NotTo(BeNil())
	g.Expect(got.Status.V1Beta2.Conditions).To(HaveLen(1))
	g.Expect(got.Status.V1Beta2.Conditions[0].Reason).To(Equal("PoolExhausted"))
	g.Expect(got.IsBound()).To(BeTrue())
	g.Expect(got.Status.Conditions).To(HaveLen(1))
	gotAddr := &ipamv1.IPAddress{}
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(addr), gotAddr)).To(Succeed())
	g.Expect(gotAddr.Spec.Address).To(Equal("10.0.0.5"))
	g.Expect(gotAddr.Spec.Prefix).To(Equal(24))

	// A claim created in v1alpha1 with the label gets clusterName.
	g.Expect(env.Client.Create(ctx, &ipamv1alpha1.IPAddressClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "m-1", Labels: map[string]string{clusterv1.ClusterNameLabel: "dev"}},
		Spec:       ipamv1alpha1.IPAddressClaimSpec{PoolRef: pool},
	})).To(Succeed())
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "m-1"}, got)).To(Succeed())
	g.Expect(got.Spec.ClusterName).To(Equal("dev"))

	// The CRD rules hold in v1alpha1 too.
	bad := addr.DeepCopy()
	bad.ResourceVersion, bad.Name, bad.Spec.Address = "", "bad", "10.0.0.300"
	g.Expect(env.Client.Create(ctx, bad)).To(MatchError(ContainSubstring("not a valid IP address")))
}

// The core components that clusterctl installs (the core and runtime CRDs) point exactly the kinds the core
// manager converts at its webhook Service.
func TestCoreCRDsCallTheConversionWebhook(t *testing.T) {
	g := NewWithT(t)
	crds, err := crd.Core()
	g.Expect(err).NotTo(HaveOccurred())
	runtimeCRDs, err := crd.Runtime()
	g.Expect(err).NotTo(HaveOccurred())
	crds = append(crds, runtimeCRDs...)
	crd.WithConversionWebhook(crds, Namespace, Webhooks(nil).ServiceName())
	var converted []string
	for _, c := range crds {
		if c.Spec.Conversion != nil {
			g.Expect(c.Spec.Conversion.Webhook.ClientConfig.Service.Name).To(Equal("capi-webhook-service"))
			g.Expect(*c.Spec.Conversion.Webhook.ClientConfig.Service.Path).To(Equal("/convert"))
			converted = append(converted, c.Name)
		}
	}
	var want []string
	for _, gk := range Webhooks(nil).Conversions.GroupKinds() {
		want = append(want, webhooks.CRDName(gk))
	}
	g.Expect(converted).To(ConsistOf(want), "every CRD serving several versions is converted by the core manager, and no other")
}

// A client on v1beta2 and capstan's controllers, on v1beta1, share Machines: the core manager converts, and
// the apiVersion of a v1beta1 reference is the version the provider's CRD serves for the contract.
func TestV1beta2IsConvertedByTheCoreManager(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	install(t, ns)
	webhookstest.Convert(t, env, ns, Webhooks(nil))
	startManager(t, ns)

	m := &clusterv1beta2.Machine{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "m-0"},
		Spec: clusterv1beta2.MachineSpec{
			ClusterName: "prod", Version: "v1.37.1",
			Bootstrap:         clusterv1beta2.Bootstrap{DataSecretName: ptr.To("m-0-bootstrap")},
			InfrastructureRef: clusterv1beta2.ContractVersionedObjectReference{APIGroup: "infrastructure.cluster.x-k8s.io", Kind: "LocalMachine", Name: "m-0"},
			Deletion:          clusterv1beta2.MachineDeletionSpec{NodeDrainTimeoutSeconds: ptr.To[int32](90)},
		},
	}
	g.Expect(env.Client.Create(ctx, m)).To(Succeed())

	old := &clusterv1.Machine{}
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(m), old)).To(Succeed())
	g.Expect(old.Spec.InfrastructureRef).To(Equal(corev1.ObjectReference{APIVersion: "infrastructure.cluster.x-k8s.io/v1alpha1",
		Kind: "LocalMachine", Namespace: ns, Name: "m-0"}))
	g.Expect(old.Spec.NodeDrainTimeout).To(HaveValue(Equal(metav1.Duration{Duration: 90 * time.Second})))

	// A v1beta1 write keeps what the v1beta2 client wrote.
	old.Labels = map[string]string{"team": "a"}
	g.Expect(env.Client.Update(ctx, old)).To(Succeed())
	got := &clusterv1beta2.Machine{}
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(m), got)).To(Succeed())
	g.Expect(got.Labels).To(HaveKeyWithValue("team", "a"))
	g.Expect(got.Spec.InfrastructureRef).To(Equal(m.Spec.InfrastructureRef))
	g.Expect(got.Spec.Deletion.NodeDrainTimeoutSeconds).To(HaveValue(BeEquivalentTo(90)))
	g.Expect(got.Annotations).NotTo(HaveKey(conversion.DataAnnotation))
}
