package crd_test

import (
	"context"
	"os"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"
	"k8s.io/utils/ptr"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/config/crd"
	"github.com/capstan-dev/capstan/internal/contract"
	"github.com/capstan-dev/capstan/internal/test/envtest"
)

var env *envtest.Environment

func TestMain(m *testing.M) {
	os.Exit(envtest.Run(m, envtest.Options{}, func(e *envtest.Environment) { env = e }))
}

func TestCRDNamesAndContractLabels(t *testing.T) {
	g := NewWithT(t)
	crds, err := crd.All()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(crds).NotTo(BeEmpty())
	for _, c := range crds {
		g.Expect(c.Name).To(Equal(contract.CalculateCRDName(c.Spec.Group, c.Spec.Names.Kind)), "CRD %s", c.Name)
		if c.Spec.Group == clusterv1.GroupVersion.Group {
			g.Expect(c.Labels).To(HaveKeyWithValue("cluster.x-k8s.io/v1beta1", "v1beta1"), "CRD %s", c.Name)
		}
	}
}

func TestServerIsTheRealKubeAPIServer(t *testing.T) {
	g := NewWithT(t)
	dc, err := discovery.NewDiscoveryClientForConfig(env.Config)
	g.Expect(err).NotTo(HaveOccurred())
	v, err := dc.ServerVersion()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(v.Major + "." + v.Minor).To(Equal("1.37"))
}

func machine(ns string) *clusterv1.Machine {
	return &clusterv1.Machine{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "m1"},
		Spec: clusterv1.MachineSpec{
			ClusterName:       "c1",
			Bootstrap:         clusterv1.Bootstrap{DataSecretName: ptr.To("bootstrap")},
			InfrastructureRef: corev1.ObjectReference{APIVersion: "infrastructure.cluster.x-k8s.io/v1alpha1", Kind: "LocalMachine", Name: "m1"},
			Version:           ptr.To("v1.31.0"),
		},
	}
}

func TestValidationReplacesWebhooks(t *testing.T) {
	ctx := context.Background()

	t.Run("a Machine's clusterName cannot change", func(t *testing.T) {
		g := NewWithT(t)
		m := machine(env.NewNamespace(t))
		g.Expect(env.Client.Create(ctx, m)).To(Succeed())
		m.Spec.ClusterName = "other"
		err := env.Client.Update(ctx, m)
		g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "got %v", err)
		g.Expect(err.Error()).To(ContainSubstring("clusterName is immutable"))
	})

	t.Run("a Machine's version must be semantic", func(t *testing.T) {
		g := NewWithT(t)
		m := machine(env.NewNamespace(t))
		m.Spec.Version = ptr.To("1.31")
		err := env.Client.Create(ctx, m)
		g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "got %v", err)
		g.Expect(err.Error()).To(ContainSubstring("spec.version: Invalid value"))
		g.Expect(err.Error()).To(ContainSubstring("must be a valid semantic version"))
	})

	t.Run("a Machine's taints use no reserved key", func(t *testing.T) {
		g := NewWithT(t)
		m := machine(env.NewNamespace(t))
		m.Spec.Taints = []clusterv1.MachineTaint{{Key: "node.cloudprovider.kubernetes.io/uninitialized", Effect: corev1.TaintEffectNoSchedule, Propagation: clusterv1.MachineTaintPropagationAlways}}
		err := env.Client.Create(ctx, m)
		g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "got %v", err)
		g.Expect(err.Error()).To(ContainSubstring("spec.taints[0].key: Invalid value: taint key must not have the prefix node.cloudprovider.kubernetes.io/"))
		m.Spec.Taints[0].Key = "node.kubernetes.io/out-of-service"
		g.Expect(env.Client.Create(ctx, m)).To(Succeed(), "the one node.kubernetes.io/ key allowed")
	})

	t.Run("a MachineHealthCheck's selector cannot be empty", func(t *testing.T) {
		g := NewWithT(t)
		mhc := &clusterv1.MachineHealthCheck{
			ObjectMeta: metav1.ObjectMeta{Namespace: env.NewNamespace(t), Name: "mhc"},
			Spec:       clusterv1.MachineHealthCheckSpec{ClusterName: "c1"},
		}
		err := env.Client.Create(ctx, mhc)
		g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "got %v", err)
		g.Expect(err.Error()).To(ContainSubstring("selector must not be empty"))
	})

	t.Run("a Cluster's topology cannot be removed", func(t *testing.T) {
		g := NewWithT(t)
		c := &clusterv1.Cluster{
			ObjectMeta: metav1.ObjectMeta{Namespace: env.NewNamespace(t), Name: "c1"},
			Spec:       clusterv1.ClusterSpec{Topology: &clusterv1.Topology{Class: "quick-start", Version: "v1.31.0"}},
		}
		g.Expect(env.Client.Create(ctx, c)).To(Succeed())
		c.Spec.Topology = nil
		err := env.Client.Update(ctx, c)
		g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "got %v", err)
		g.Expect(err.Error()).To(ContainSubstring("spec.topology cannot be removed"))
	})
}
