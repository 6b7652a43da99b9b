package crd_test

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	addonsv1 "github.com/capstan-dev/capstan/api/addons/v1beta1"
	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	ipamv1 "github.com/capstan-dev/capstan/api/ipam/v1beta1"
)

func machinePool(ns string) *clusterv1.MachinePool {
	return &clusterv1.MachinePool{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "mp"},
		Spec: clusterv1.MachinePoolSpec{
			ClusterName: "c1",
			Template: clusterv1.MachineTemplateSpec{Spec: clusterv1.MachineSpec{
				ClusterName:       "c1",
				Bootstrap:         clusterv1.Bootstrap{DataSecretName: ptr.To("bootstrap")},
				InfrastructureRef: corev1.ObjectReference{APIVersion: "infrastructure.cluster.x-k8s.io/v1alpha1", Kind: "LocalMachinePool", Name: "mp"},
				Version:           ptr.To("v1.31.0"),
			}},
		},
	}
}

func resourceSet(ns string) *addonsv1.ClusterResourceSet {
	return &addonsv1.ClusterResourceSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "crs"},
		Spec: addonsv1.ClusterResourceSetSpec{
			ClusterSelector: metav1.LabelSelector{MatchLabels: map[string]string{"cni": "calico"}},
			Resources:       []addonsv1.ResourceRef{{Kind: "ConfigMap", Name: "calico"}},
		},
	}
}

func ipAddress(ns string) *ipamv1.IPAddress {
	return &ipamv1.IPAddress{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "ip"},
		Spec: ipamv1.IPAddressSpec{
			ClaimRef: corev1.LocalObjectReference{Name: "ip"},
			PoolRef:  corev1.TypedLocalObjectReference{APIGroup: ptr.To("ipam.cluster.x-k8s.io"), Kind: "InClusterIPPool", Name: "pool"},
			Address:  "10.0.0.10",
			Prefix:   24,
			Gateway:  "10.0.0.1",
		},
	}
}

// TestPoolsAddonsAndIPAMValidation checks the CEL rules that stand for upstream's MachinePool,
// ClusterResourceSet and IPAM admission webhooks against the real API server.
func TestPoolsAddonsAndIPAMValidation(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name string
		// create is created first (and must be accepted) when update is set; update changes it.
		create client.Object
		update func(client.Object)
		// bad is refused at creation when create is nil.
		bad     client.Object
		message string
	}{
		{
			name: "a MachinePool needs bootstrap data or a bootstrap config",
			bad: func() client.Object {
				mp := machinePool("")
				mp.Spec.Template.Spec.Bootstrap = clusterv1.Bootstrap{}
				return mp
			}(),
			message: "expected either spec.template.spec.bootstrap.dataSecretName or spec.template.spec.bootstrap.configRef to be populated",
		},
		{
			name: "a MachinePool's version must be semantic",
			bad: func() client.Object {
				mp := machinePool("")
				mp.Spec.Template.Spec.Version = ptr.To("1.31")
				return mp
			}(),
			message: "must be a valid semantic version",
		},
		{
			name:    "a MachinePool's clusterName cannot change",
			create:  machinePool(""),
			update:  func(o client.Object) { o.(*clusterv1.MachinePool).Spec.ClusterName = "c2" },
			message: "clusterName is immutable",
		},
		{
			name: "a ClusterResourceSet's selector cannot be empty",
			bad: func() client.Object {
				crs := resourceSet("")
				crs.Spec.ClusterSelector = metav1.LabelSelector{}
				return crs
			}(),
			message: "clusterSelector must not be empty",
		},
		{
			name:   "a ClusterResourceSet's selector cannot change",
			create: resourceSet(""),
			update: func(o client.Object) {
				o.(*addonsv1.ClusterResourceSet).Spec.ClusterSelector.MatchLabels["cni"] = "cilium"
			},
			message: "clusterSelector is immutable",
		},
		{
			name:    "a ClusterResourceSet's strategy cannot change (unset is ApplyOnce)",
			create:  resourceSet(""),
			update:  func(o client.Object) { o.(*addonsv1.ClusterResourceSet).Spec.Strategy = "Reconcile" },
			message: "strategy is immutable",
		},
		{
			name: "a ClusterResourceSetBinding's clusterName cannot change",
			create: &addonsv1.ClusterResourceSetBinding{
				ObjectMeta: metav1.ObjectMeta{Name: "c1"},
				Spec:       addonsv1.ClusterResourceSetBindingSpec{ClusterName: "c1"},
			},
			update:  func(o client.Object) { o.(*addonsv1.ClusterResourceSetBinding).Spec.ClusterName = "c2" },
			message: "clusterName is immutable",
		},
		{
			name: "an IPAddress must hold an IP address",
			bad: func() client.Object {
				ip := ipAddress("")
				ip.Spec.Address = "10.0.0.300"
				return ip
			}(),
			message: "not a valid IP address",
		},
		{
			name: "an IPAddress's prefix must fit its address family",
			bad: func() client.Object {
				ip := ipAddress("")
				ip.Spec.Prefix = 33
				return ip
			}(),
			message: "prefix is too large for the address",
		},
		{
			name: "an IPAddress's pool reference needs a group",
			bad: func() client.Object {
				ip := ipAddress("")
				ip.Spec.PoolRef.APIGroup = nil
				return ip
			}(),
			message: "the pool reference needs to contain a group",
		},
		{
			name:    "an IPAddress cannot change",
			create:  ipAddress(""),
			update:  func(o client.Object) { o.(*ipamv1.IPAddress).Spec.Address = "10.0.0.11" },
			message: "IPAddress spec is immutable",
		},
		{
			name: "an IPAddressClaim cannot change",
			create: &ipamv1.IPAddressClaim{
				ObjectMeta: metav1.ObjectMeta{Name: "claim"},
				Spec: ipamv1.IPAddressClaimSpec{ClusterName: "c1", PoolRef: corev1.TypedLocalObjectReference{
					APIGroup: ptr.To("ipam.cluster.x-k8s.io"), Kind: "InClusterIPPool", Name: "pool",
				}},
			},
			update:  func(o client.Object) { o.(*ipamv1.IPAddressClaim).Spec.PoolRef.Name = "other" },
			message: "IPAddressClaim spec is immutable",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			ns := env.NewNamespace(t)
			var err error
			if tt.create != nil {
				tt.create.SetNamespace(ns)
				g.Expect(env.Client.Create(ctx, tt.create)).To(Succeed())
				tt.update(tt.create)
				err = env.Client.Update(ctx, tt.create)
			} else {
				tt.bad.SetNamespace(ns)
				err = env.Client.Create(ctx, tt.bad)
			}
			g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "got %v", err)
			g.Expect(err.Error()).To(ContainSubstring(tt.message))
		})
	}

	t.Run("valid objects are accepted, an IPv6 address with a /64 too", func(t *testing.T) {
		g := NewWithT(t)
		ns := env.NewNamespace(t)
		ip := ipAddress(ns)
		ip.Spec.Address, ip.Spec.Prefix, ip.Spec.Gateway = "fd00::10", 64, "fd00::1"
		for _, o := range []client.Object{machinePool(ns), resourceSet(ns), ip} {
			g.Expect(env.Client.Create(ctx, o)).To(Succeed())
		}
	})
}
