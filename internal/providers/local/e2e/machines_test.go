package e2e

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	infrav1 "github.com/capstan-dev/capstan/api/infrastructure/local/v1alpha1"
	"github.com/capstan-dev/capstan/internal/test/cabpk"
)

// createLocalCluster creates a Cluster and its LocalCluster, owned by the Cluster (as the core's Cluster
// controller does).
func createLocalCluster(t *testing.T, ns, name string) *clusterv1.Cluster {
	t.Helper()
	ctx := context.Background()
	cluster := &clusterv1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: clusterv1.ClusterSpec{InfrastructureRef: &corev1.ObjectReference{
			APIVersion: infrav1.GroupVersion.String(), Kind: "LocalCluster", Name: name,
		}},
	}
	if err := env.Client.Create(ctx, cluster); err != nil {
		t.Fatal(err)
	}
	lc := &infrav1.LocalCluster{ObjectMeta: metav1.ObjectMeta{
		Namespace: ns, Name: name, Labels: map[string]string{clusterv1.ClusterNameLabel: name},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: clusterv1.GroupVersion.String(), Kind: "Cluster", Name: name, UID: cluster.UID}},
	}}
	if err := env.Client.Create(ctx, lc); err != nil {
		t.Fatal(err)
	}
	return cluster
}

// setInfrastructureReady does what the core's Cluster controller does once the LocalCluster is ready.
func setInfrastructureReady(g Gomega, cluster *clusterv1.Cluster, endpoint clusterv1.APIEndpoint) {
	ctx := context.Background()
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(cluster), cluster)).To(Succeed())
	cluster.Spec.ControlPlaneEndpoint = endpoint
	g.Expect(env.Client.Update(ctx, cluster)).To(Succeed())
	cluster.Status.InfrastructureReady = true
	g.Expect(env.Client.Status().Update(ctx, cluster)).To(Succeed())
}

// createMachine creates a Machine of the cluster at version, its bootstrap data Secret holding data, and
// its LocalMachine owned by the Machine (as the core's Machine controller does); a control plane Machine
// is labelled cluster.x-k8s.io/control-plane.
func createMachine(t *testing.T, cluster *clusterv1.Cluster, name, version string, controlPlane bool, data []byte) *infrav1.LocalMachine {
	t.Helper()
	ctx := context.Background()
	ns := cluster.Namespace
	if err := env.Client.Create(ctx, cabpk.Secret(ns, name+"-bootstrap", cluster.Name, data)); err != nil {
		t.Fatal(err)
	}
	m := &clusterv1.Machine{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{clusterv1.ClusterNameLabel: cluster.Name}},
		Spec: clusterv1.MachineSpec{
			ClusterName: cluster.Name, Version: ptr.To(version),
			Bootstrap:         clusterv1.Bootstrap{DataSecretName: ptr.To(name + "-bootstrap")},
			InfrastructureRef: corev1.ObjectReference{APIVersion: infrav1.GroupVersion.String(), Kind: "LocalMachine", Name: name},
		},
	}
	if controlPlane {
		m.Labels[clusterv1.MachineControlPlaneLabel] = ""
	}
	if err := env.Client.Create(ctx, m); err != nil {
		t.Fatal(err)
	}
	lm := &infrav1.LocalMachine{ObjectMeta: metav1.ObjectMeta{
		Namespace: ns, Name: name, Labels: map[string]string{clusterv1.ClusterNameLabel: cluster.Name},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: clusterv1.GroupVersion.String(), Kind: "Machine", Name: name, UID: m.UID}},
	}}
	if err := env.Client.Create(ctx, lm); err != nil {
		t.Fatal(err)
	}
	return lm
}
