package move_test

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	addonsv1 "github.com/capstan-dev/capstan/api/addons/v1beta1"
	ipamv1 "github.com/capstan-dev/capstan/api/ipam/v1beta1"
	"github.com/capstan-dev/capstan/internal/clusterctl/move"
	"github.com/capstan-dev/capstan/internal/test/builder"
)

// TestMoveClusterResourceSetsAndIPAM: a ClusterResourceSet with its ConfigMap, the Cluster's
// ClusterResourceSetBinding, and an IPAddressClaim of an InfraMachine with its IPAddress all arrive in the
// target, with ownerReferences to the target's owners.
func TestMoveClusterResourceSetsAndIPAM(t *testing.T) {
	g := NewWithT(t)
	ctx := testContext(t)
	ns := newNamespace(t, "alpha", "bravo")

	crs := &addonsv1.ClusterResourceSet{ObjectMeta: objectMeta(ns, "cni"), Spec: addonsv1.ClusterResourceSetSpec{
		ClusterSelector: metav1.LabelSelector{MatchLabels: map[string]string{"cni": "calico"}},
		Resources:       []addonsv1.ResourceRef{{Kind: "ConfigMap", Name: "cni"}},
	}}
	g.Expect(source.Client.Create(ctx, crs)).To(Succeed())
	crsOwner := metav1.OwnerReference{APIVersion: addonsv1.GroupVersion.String(), Kind: "ClusterResourceSet", Name: "cni", UID: crs.UID}
	cm := &corev1.ConfigMap{ObjectMeta: objectMeta(ns, "cni"), Data: map[string]string{"cni.yaml": "kind: Namespace"}}
	cm.OwnerReferences = []metav1.OwnerReference{crsOwner}
	g.Expect(source.Client.Create(ctx, cm)).To(Succeed())
	binding := &addonsv1.ClusterResourceSetBinding{ObjectMeta: objectMeta(ns, "alpha"), Spec: addonsv1.ClusterResourceSetBindingSpec{
		ClusterName: "alpha",
		Bindings: []*addonsv1.ResourceSetBinding{{ClusterResourceSetName: "cni", Resources: []addonsv1.ResourceBinding{
			{ResourceRef: addonsv1.ResourceRef{Kind: "ConfigMap", Name: "cni"}, Applied: true, Hash: "sha256:abc"}}}},
	}}
	binding.OwnerReferences = []metav1.OwnerReference{crsOwner}
	g.Expect(source.Client.Create(ctx, binding)).To(Succeed())

	infraMachine := "alpha-md-0-x7k2p-a"
	imAPIVersion := builder.V1Beta1.Infrastructure + "/" + builder.V1Beta1.Version
	imUID := uidIn(ctx, t, source.Client, imAPIVersion, builder.InfraMachineKind, ns, infraMachine)
	claim := &ipamv1.IPAddressClaim{ObjectMeta: objectMeta(ns, infraMachine+"-eth0"), Spec: ipamv1.IPAddressClaimSpec{
		ClusterName: "alpha",
		PoolRef:     corev1.TypedLocalObjectReference{APIGroup: ptr.To("ipam.cluster.x-k8s.io"), Kind: "InClusterIPPool", Name: "pool"},
	}}
	claim.OwnerReferences = []metav1.OwnerReference{{APIVersion: imAPIVersion,
		Kind: builder.InfraMachineKind, Name: infraMachine, UID: imUID, Controller: ptr.To(true)}}
	g.Expect(source.Client.Create(ctx, claim)).To(Succeed())
	address := &ipamv1.IPAddress{ObjectMeta: objectMeta(ns, claim.Name), Spec: ipamv1.IPAddressSpec{
		ClaimRef: corev1.LocalObjectReference{Name: claim.Name}, PoolRef: claim.Spec.PoolRef,
		Address: "10.0.1.5", Prefix: 24, Gateway: "10.0.1.1",
	}}
	address.OwnerReferences = []metav1.OwnerReference{{APIVersion: ipamv1.GroupVersion.String(), Kind: "IPAddressClaim", Name: claim.Name, UID: claim.UID, Controller: ptr.To(true)}}
	g.Expect(source.Client.Create(ctx, address)).To(Succeed())
	claim.Status.AddressRef.Name = address.Name
	g.Expect(source.Client.Status().Update(ctx, claim)).To(Succeed())

	_, err := move.Move(ctx, clusterOf(t, source, "source"), clusterOf(t, target, "target"), move.Options{Namespace: ns, Backoffs: fastBackoffs()})
	g.Expect(err).NotTo(HaveOccurred())

	// Each object is in the target, owned by the target's copy of its owner, and gone from the source.
	owner := func(kind, name string, obj client.Object) {
		t.Helper()
		refs := obj.GetOwnerReferences()
		g.Expect(refs).To(HaveLen(1), "%s %s", obj.GetObjectKind().GroupVersionKind().Kind, obj.GetName())
		g.Expect(refs[0].Kind).To(Equal(kind))
		g.Expect(refs[0].Name).To(Equal(name))
		var targetOwner client.Object
		switch kind {
		case "ClusterResourceSet":
			targetOwner = &addonsv1.ClusterResourceSet{}
		case "IPAddressClaim":
			targetOwner = &ipamv1.IPAddressClaim{}
		default:
			g.Expect(refs[0].UID).To(Equal(uidIn(ctx, t, target.Client, imAPIVersion, kind, ns, name)))
			return
		}
		g.Expect(target.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, targetOwner)).To(Succeed())
		g.Expect(refs[0].UID).To(Equal(targetOwner.GetUID()))
	}
	movedCRS := &addonsv1.ClusterResourceSet{}
	g.Expect(target.Client.Get(ctx, client.ObjectKeyFromObject(crs), movedCRS)).To(Succeed())
	g.Expect(movedCRS.Spec.Resources).To(Equal(crs.Spec.Resources))
	movedCM := &corev1.ConfigMap{}
	g.Expect(target.Client.Get(ctx, client.ObjectKeyFromObject(cm), movedCM)).To(Succeed())
	owner("ClusterResourceSet", "cni", movedCM)
	movedBinding := &addonsv1.ClusterResourceSetBinding{}
	g.Expect(target.Client.Get(ctx, client.ObjectKeyFromObject(binding), movedBinding)).To(Succeed())
	owner("ClusterResourceSet", "cni", movedBinding)
	g.Expect(movedBinding.Spec).To(Equal(binding.Spec))
	movedClaim := &ipamv1.IPAddressClaim{}
	g.Expect(target.Client.Get(ctx, client.ObjectKeyFromObject(claim), movedClaim)).To(Succeed())
	owner(builder.InfraMachineKind, infraMachine, movedClaim)
	movedAddress := &ipamv1.IPAddress{}
	g.Expect(target.Client.Get(ctx, client.ObjectKeyFromObject(address), movedAddress)).To(Succeed())
	owner("IPAddressClaim", claim.Name, movedAddress)
	g.Expect(movedAddress.Spec).To(Equal(address.Spec))

	for _, obj := range []client.Object{&addonsv1.ClusterResourceSet{}, &addonsv1.ClusterResourceSetBinding{}, &ipamv1.IPAddressClaim{}, &ipamv1.IPAddress{}} {
		var name string
		switch obj.(type) {
		case *addonsv1.ClusterResourceSet:
			name = "cni"
		case *addonsv1.ClusterResourceSetBinding:
			name = "alpha"
		default:
			name = claim.Name
		}
		err := source.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, obj)
		g.Expect(err).To(HaveOccurred(), "%T %s is still in the source", obj, name)
	}
}

func uidIn(ctx context.Context, t testing.TB, c client.Client, apiVersion, kind, ns, name string) types.UID {
	t.Helper()
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, u); err != nil {
		t.Fatal(err)
	}
	return u.GetUID()
}
