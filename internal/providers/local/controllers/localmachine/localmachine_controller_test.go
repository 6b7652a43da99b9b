package localmachine

import (
	"context"
	"strconv"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	infrav1 "github.com/capstan-dev/capstan/api/infrastructure/local/v1alpha1"
	"github.com/capstan-dev/capstan/internal/conditions"
	"github.com/capstan-dev/capstan/internal/providers/local/backend"
	"github.com/capstan-dev/capstan/internal/test/cabpk"
	"github.com/capstan-dev/capstan/internal/test/workload"
)

func get(g Gomega, obj client.Object) {
	g.Expect(env.Client.Get(context.Background(), client.ObjectKeyFromObject(obj), obj)).To(Succeed())
}

// createCluster creates a Cluster and its LocalCluster, owned by the Cluster when owned is true (as the
// core's Cluster controller would do).
func createCluster(t *testing.T, ns, name string, owned bool) (*clusterv1.Cluster, *infrav1.LocalCluster) {
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
	lc := &infrav1.LocalCluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	if owned {
		lc.OwnerReferences = []metav1.OwnerReference{{APIVersion: clusterv1.GroupVersion.String(), Kind: "Cluster", Name: cluster.Name, UID: cluster.UID}}
	}
	if err := env.Client.Create(ctx, lc); err != nil {
		t.Fatal(err)
	}
	return cluster, lc
}

// setInfrastructureReady does what the core's Cluster controller does once the LocalCluster is ready.
func setInfrastructureReady(g Gomega, cluster *clusterv1.Cluster, lc *infrav1.LocalCluster) {
	get(g, cluster)
	cluster.Spec.ControlPlaneEndpoint = lc.Spec.ControlPlaneEndpoint
	g.Expect(env.Client.Update(context.Background(), cluster)).To(Succeed())
	cluster.Status.InfrastructureReady = true
	g.Expect(env.Client.Status().Update(context.Background(), cluster)).To(Succeed())
}

type machineOptions struct {
	controlPlane bool
	noBootstrap  bool
	startupDelay time.Duration
	providerID   string
	owned        bool
	lmLabels     map[string]string
	lmAnnots     map[string]string
	// bootstrap is the bootstrap data; CABPK's init data for a control plane machine, join data for a
	// worker, when empty.
	bootstrap []byte
}

// createMachine creates a Machine of the cluster and its LocalMachine, owned by the Machine when
// o.owned is set (as the core's Machine controller would do).
func createMachine(t *testing.T, cluster *clusterv1.Cluster, name string, o machineOptions) (*clusterv1.Machine, *infrav1.LocalMachine) {
	t.Helper()
	ctx := context.Background()
	m := &clusterv1.Machine{
		ObjectMeta: metav1.ObjectMeta{Namespace: cluster.Namespace, Name: name, Labels: map[string]string{clusterv1.ClusterNameLabel: cluster.Name}},
		Spec: clusterv1.MachineSpec{
			ClusterName:       cluster.Name,
			Version:           ptr.To("v1.37.1"),
			InfrastructureRef: corev1.ObjectReference{APIVersion: infrav1.GroupVersion.String(), Kind: "LocalMachine", Name: name},
		},
	}
	data := o.bootstrap
	if data == nil {
		data = cabpk.CloudConfig(cabpk.Data{Kubeadm: cabpk.JoinConfiguration("127.0.0.1:6443", name, false, "")})
		if o.controlPlane {
			data = cabpk.CloudConfig(cabpk.Data{Init: true, Kubeadm: cabpk.InitConfiguration(cluster.Name, "v1.37.1", "", "", name)})
		}
	}
	if err := env.Client.Create(ctx, cabpk.Secret(cluster.Namespace, name+"-bootstrap", cluster.Name, data)); err != nil {
		t.Fatal(err)
	}
	if !o.noBootstrap {
		m.Spec.Bootstrap.DataSecretName = ptr.To(name + "-bootstrap")
	}
	if o.controlPlane {
		m.Labels[clusterv1.MachineControlPlaneLabel] = ""
	}
	if err := env.Client.Create(ctx, m); err != nil {
		t.Fatal(err)
	}
	labels := map[string]string{clusterv1.ClusterNameLabel: cluster.Name}
	for k, v := range o.lmLabels {
		labels[k] = v
	}
	lm := &infrav1.LocalMachine{ObjectMeta: metav1.ObjectMeta{Namespace: cluster.Namespace, Name: name, Labels: labels, Annotations: o.lmAnnots}}
	if o.owned {
		lm.OwnerReferences = []metav1.OwnerReference{{APIVersion: clusterv1.GroupVersion.String(), Kind: "Machine", Name: m.Name, UID: m.UID}}
	}
	if o.startupDelay > 0 {
		lm.Spec.StartupDelay = &metav1.Duration{Duration: o.startupDelay}
	}
	if o.providerID != "" {
		lm.Spec.ProviderID = ptr.To(o.providerID)
	}
	if err := env.Client.Create(ctx, lm); err != nil {
		t.Fatal(err)
	}
	return m, lm
}

// workloadClient builds the workload cluster's client the way the core writes `<cluster>-kubeconfig`:
// from the `<cluster>-ca` Secret, with an admin client certificate.
func workloadClient(g Gomega, ns, clusterName string, endpoint clusterv1.APIEndpoint) kubernetes.Interface {
	cfg, err := workload.FromCA(context.Background(), env.Client, ns, clusterName, endpoint)
	g.Expect(err).NotTo(HaveOccurred())
	return kubernetes.NewForConfigOrDie(cfg)
}

func nodeRegisteredReason(g Gomega, lm *infrav1.LocalMachine) string {
	get(g, lm)
	c := conditions.Get(lm, infrav1.NodeRegisteredCondition)
	if c == nil {
		return ""
	}
	if c.Status == corev1.ConditionTrue {
		return infrav1.NodeRegisteredReason
	}
	return c.Reason
}

func TestLocalMachineLifecycle(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	p := startProvider(t, t.TempDir())
	cluster, lc := createCluster(t, ns, "c1", true)

	t.Log("machines wait for the Cluster's infrastructure")
	_, cp := createMachine(t, cluster, "cp-0", machineOptions{owned: true, controlPlane: true})
	g.Eventually(func(g Gomega) string { return nodeRegisteredReason(g, cp) }, 10*time.Second, 100*time.Millisecond).
		Should(Equal(infrav1.WaitingForClusterInfrastructureReason))
	g.Expect(cp.Finalizers).To(ContainElement(infrav1.LocalMachineFinalizer))
	g.Expect(cp.Status.Ready).To(BeFalse())

	g.Eventually(func(g Gomega) {
		get(g, lc)
		g.Expect(lc.Status.Ready).To(BeTrue())
	}, 60*time.Second, 200*time.Millisecond).Should(Succeed())
	setInfrastructureReady(g, cluster, lc)
	wc := workloadClient(g, ns, "c1", lc.Spec.ControlPlaneEndpoint)

	t.Log("a control plane machine runs the control plane and registers a control plane Node")
	g.Eventually(func(g Gomega) {
		get(g, cp)
		g.Expect(cp.Status.Ready).To(BeTrue())
	}, 90*time.Second, 100*time.Millisecond).Should(Succeed())
	g.Expect(conditions.IsTrue(cp, infrav1.ControlPlaneRunningCondition)).To(BeTrue())
	g.Expect(conditions.IsTrue(cp, infrav1.KubernetesVersionAvailableCondition)).To(BeTrue())
	g.Expect(cp.Spec.ProviderID).To(HaveValue(Equal("local://" + ns + "/c1/cp-0")))
	g.Expect(cp.Status.Initialization).To(Equal(&infrav1.LocalMachineInitializationStatus{Provisioned: ptr.To(true)}))
	g.Expect(cp.Status.Addresses).To(ConsistOf(
		clusterv1.MachineAddress{Type: clusterv1.MachineInternalIP, Address: "127.0.0.1"},
		clusterv1.MachineAddress{Type: clusterv1.MachineHostName, Address: "cp-0"},
	))
	g.Expect(conditions.IsTrue(cp, clusterv1.ReadyCondition)).To(BeTrue())
	g.Expect(conditions.IsV1Beta2True(cp, string(infrav1.NodeRegisteredCondition))).To(BeTrue())
	node, err := wc.CoreV1().Nodes().Get(ctx, "cp-0", metav1.GetOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(node.Spec.ProviderID).To(Equal(*cp.Spec.ProviderID))
	g.Expect(node.Labels).To(HaveKey("node-role.kubernetes.io/control-plane"))
	g.Expect(node.Status.NodeInfo.KubeletVersion).To(Equal("v1.37.1"))
	g.Expect(node.Status.Conditions).To(ContainElement(And(HaveField("Type", corev1.NodeReady), HaveField("Status", corev1.ConditionTrue))))
	_, err = wc.CoordinationV1().Leases("kube-node-lease").Get(ctx, "cp-0", metav1.GetOptions{})
	g.Expect(err).NotTo(HaveOccurred())

	t.Log("a machine whose bootstrap data cannot be read says why; the others are not affected")
	_, broken := createMachine(t, cluster, "broken", machineOptions{owned: true, bootstrap: []byte("#!/bin/sh\nkubeadm join\n")})
	g.Eventually(func(g Gomega) {
		get(g, broken)
		c := conditions.Get(broken, infrav1.NodeRegisteredCondition)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Reason).To(Equal(infrav1.BootstrapDataInvalidReason))
		g.Expect(c.Severity).To(Equal(clusterv1.ConditionSeverityError))
		g.Expect(c.Message).To(Equal("The bootstrap data is not a cloud-config document: its first line must be #cloud-config"))
	}, 30*time.Second, 100*time.Millisecond).Should(Succeed())
	g.Expect(conditions.GetV1Beta2(broken, string(infrav1.NodeRegisteredCondition))).To(HaveField("Reason", infrav1.BootstrapDataInvalidReason))
	g.Expect(broken.Status.Ready).To(BeFalse())

	t.Log("a control plane machine whose bootstrap data sets extra arguments the provider does not run says which, and runs nothing")
	refusedData := cabpk.CloudConfig(cabpk.Data{Init: true, Kubeadm: cabpk.InitConfiguration(cluster.Name, "v1.37.1",
		"  extraArgs:\n  - name: authorization-mode\n    value: AlwaysAllow\n  - name: audit-log-path\n    value: /tmp/audit.log\n",
		"  local:\n    extraArgs:\n    - name: listen-metrics-urls\n      value: http://0.0.0.0:2381\n", "refused")})
	_, refused := createMachine(t, cluster, "refused", machineOptions{owned: true, controlPlane: true, bootstrap: refusedData})
	g.Eventually(func(g Gomega) {
		get(g, refused)
		c := conditions.Get(refused, infrav1.NodeRegisteredCondition)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Reason).To(Equal(infrav1.BootstrapDataInvalidReason))
		g.Expect(c.Message).To(Equal(`Extra arguments refused: apiServer.extraArgs sets authorization-mode, which is not allowed; ` +
			`apiServer.extraArgs sets audit-log-path to "/tmp/audit.log": only "-" (the process's log) is allowed, not a file of this machine; ` +
			`etcd.local.extraArgs sets listen-metrics-urls, which is not allowed; ` + backend.Explanation))
	}, 30*time.Second, 100*time.Millisecond).Should(Succeed())
	g.Expect(p.backend.Machines(ctx, client.ObjectKeyFromObject(lc))).NotTo(ContainElement("refused"))

	t.Log("a machine without bootstrap data waits for it")
	m1, w1 := createMachine(t, cluster, "worker-1", machineOptions{owned: true, noBootstrap: true})
	g.Eventually(func(g Gomega) string { return nodeRegisteredReason(g, w1) }, 10*time.Second, 100*time.Millisecond).
		Should(Equal(infrav1.WaitingForBootstrapDataReason))
	get(g, m1)
	m1.Spec.Bootstrap.DataSecretName = ptr.To("worker-1-bootstrap")
	g.Expect(env.Client.Update(ctx, m1)).To(Succeed())
	g.Eventually(func(g Gomega) string { return nodeRegisteredReason(g, w1) }, 30*time.Second, 100*time.Millisecond).
		Should(Equal(infrav1.NodeRegisteredReason))
	worker, err := wc.CoreV1().Nodes().Get(ctx, "worker-1", metav1.GetOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(worker.Labels).NotTo(HaveKey("node-role.kubernetes.io/control-plane"))

	t.Log("a machine with a start-up delay registers its Node after it")
	_, w2 := createMachine(t, cluster, "worker-2", machineOptions{owned: true, startupDelay: 3 * time.Second})
	g.Eventually(func(g Gomega) string { return nodeRegisteredReason(g, w2) }, 10*time.Second, 100*time.Millisecond).
		Should(Equal(infrav1.StartingUpReason))
	g.Expect(w2.Status.StartupStartTime).NotTo(BeNil())
	g.Eventually(func(g Gomega) string { return nodeRegisteredReason(g, w2) }, 30*time.Second, 100*time.Millisecond).
		Should(Equal(infrav1.NodeRegisteredReason))
	node2, err := wc.CoreV1().Nodes().Get(ctx, "worker-2", metav1.GetOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(node2.CreationTimestamp.Sub(w2.Status.StartupStartTime.Time)).To(BeNumerically(">=", 2*time.Second))

	t.Log("deleting a LocalMachine removes its Node and Lease")
	g.Expect(env.Client.Delete(ctx, w2)).To(Succeed())
	g.Eventually(func() bool {
		return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(w2), w2))
	}, 30*time.Second, 100*time.Millisecond).Should(BeTrue())
	_, err = wc.CoreV1().Nodes().Get(ctx, "worker-2", metav1.GetOptions{})
	g.Expect(apierrors.IsNotFound(err)).To(BeTrue())
	_, err = wc.CoordinationV1().Leases("kube-node-lease").Get(ctx, "worker-2", metav1.GetOptions{})
	g.Expect(apierrors.IsNotFound(err)).To(BeTrue())
	nodes, err := wc.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(nodes.Items).To(HaveLen(2))

	t.Log("deleting the LocalCluster first lets the LocalMachines go with it")
	g.Expect(env.Client.Delete(ctx, lc)).To(Succeed())
	g.Eventually(func() bool {
		return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(lc), lc))
	}, 30*time.Second, 100*time.Millisecond).Should(BeTrue())
	for _, lm := range []*infrav1.LocalMachine{cp, w1, broken} {
		g.Expect(env.Client.Delete(ctx, lm)).To(Succeed())
		g.Eventually(func() bool {
			return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(lm), lm))
		}, 30*time.Second, 100*time.Millisecond).Should(BeTrue())
	}
}

func TestLocalMachineIsLeftAlone(t *testing.T) {
	ns := env.NewNamespace(t)
	startProvider(t, t.TempDir())
	tests := []struct {
		name   string
		opts   machineOptions
		paused bool
		pause  func(*clusterv1.Cluster)
	}{
		{name: "without a Machine owner", opts: machineOptions{}},
		{name: "externally managed", opts: machineOptions{owned: true, lmAnnots: map[string]string{clusterv1.ManagedByAnnotation: "x"}}},
		{name: "externally managed (label)", opts: machineOptions{owned: true, lmLabels: map[string]string{clusterv1.ManagedByAnnotation: "x"}}},
		{name: "paused annotation", opts: machineOptions{owned: true, lmAnnots: map[string]string{clusterv1.PausedAnnotation: ""}}, paused: true},
		{name: "paused Cluster", opts: machineOptions{owned: true}, paused: true, pause: func(c *clusterv1.Cluster) { c.Spec.Paused = true }},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			cluster, _ := createCluster(t, ns, "c"+strconv.Itoa(i), false)
			if tt.pause != nil {
				tt.pause(cluster)
				g.Expect(env.Client.Update(context.Background(), cluster)).To(Succeed())
			}
			_, lm := createMachine(t, cluster, "m"+strconv.Itoa(i), tt.opts)
			if tt.paused {
				g.Eventually(func(g Gomega) {
					get(g, lm)
					g.Expect(conditions.GetV1Beta2(lm, clusterv1.PausedV1Beta2Condition)).To(HaveField("Status", metav1.ConditionTrue))
				}, 10*time.Second, 100*time.Millisecond).Should(Succeed())
			}
			g.Consistently(func(g Gomega) {
				get(g, lm)
				g.Expect(lm.Finalizers).To(BeEmpty())
				g.Expect(lm.Status.Conditions).To(BeEmpty())
				g.Expect(lm.Status.StartupStartTime).To(BeNil())
				if !tt.paused {
					g.Expect(lm.Status.V1Beta2).To(BeNil())
				}
			}, 2*time.Second, 200*time.Millisecond).Should(Succeed())
		})
	}
}

func TestLocalMachineTerminalFailure(t *testing.T) {
	g := NewWithT(t)
	ns := env.NewNamespace(t)
	startProvider(t, t.TempDir())
	cluster, _ := createCluster(t, ns, "c1", false)
	_, lm := createMachine(t, cluster, "m1", machineOptions{owned: true, providerID: "local://elsewhere/c9/m1"})
	g.Eventually(func(g Gomega) {
		get(g, lm)
		g.Expect(lm.Status.FailureReason).To(HaveValue(Equal(clusterv1.InvalidConfigurationMachineError)))
	}, 10*time.Second, 100*time.Millisecond).Should(Succeed())
	g.Expect(lm.Status.FailureMessage).To(HaveValue(ContainSubstring("local://elsewhere/c9/m1")))
	g.Expect(lm.Status.Ready).To(BeFalse())
	g.Expect(conditions.Get(lm, clusterv1.ReadyCondition)).To(HaveField("Severity", clusterv1.ConditionSeverityError))
}
