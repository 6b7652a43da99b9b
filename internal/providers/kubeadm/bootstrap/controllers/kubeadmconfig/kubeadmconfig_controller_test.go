package kubeadmconfig

import (
	"context"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	bootstrapv1 "github.com/capstan-dev/capstan/api/bootstrap/kubeadm/v1beta1"
	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/clustersecret"
	"github.com/capstan-dev/capstan/internal/conditions"
	"github.com/capstan-dev/capstan/internal/providers/kubeadm/certs"
)

const timeout = 60 * time.Second

// dataSecret returns the bootstrap data Secret of a KubeadmConfig, or nil.
func dataSecret(g Gomega, config *bootstrapv1.KubeadmConfig) *corev1.Secret {
	s := &corev1.Secret{}
	err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: config.Namespace, Name: config.Name}, s)
	if apierrors.IsNotFound(err) {
		return nil
	}
	g.Expect(err).NotTo(HaveOccurred())
	return s
}

// writtenFiles returns the files of cloud-config user data, by path.
func writtenFiles(g Gomega, data []byte) map[string]string {
	var doc struct {
		WriteFiles []struct{ Path, Content string } `json:"write_files"`
	}
	g.Expect(yaml.Unmarshal(data, &doc)).To(Succeed())
	out := map[string]string{}
	for _, f := range doc.WriteFiles {
		out[f.Path] = f.Content
	}
	return out
}

func tokenExpiration(g Gomega, token string) time.Time {
	s := &corev1.Secret{}
	g.Expect(workload.Client.Get(context.Background(), client.ObjectKey{Namespace: metav1.NamespaceSystem, Name: tokenSecretName(token)}, s)).To(Succeed())
	exp, err := time.Parse(time.RFC3339, string(s.Data["expiration"]))
	g.Expect(err).NotTo(HaveOccurred())
	return exp
}

// createClusterCA creates the Cluster's <cluster>-ca Secret, as the first control plane Machine's
// KubeadmConfig (or a control plane provider) would have.
func createClusterCA(t *testing.T, cluster *clusterv1.Cluster) {
	t.Helper()
	owner := metav1.OwnerReference{APIVersion: clusterv1.GroupVersion.String(), Kind: "Cluster", Name: cluster.Name, UID: cluster.UID}
	err := certs.ForWorker("").LookupOrGenerate(context.Background(), env.Client, client.ObjectKeyFromObject(cluster), owner)
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
}

// updateConfig changes a KubeadmConfig, retrying on the conflicts with the controller's own writes.
func updateConfig(g Gomega, config *bootstrapv1.KubeadmConfig, mutate func(*bootstrapv1.KubeadmConfig)) {
	g.Eventually(func(g Gomega) {
		get(g, config)
		mutate(config)
		g.Expect(env.Client.Update(context.Background(), config)).To(Succeed())
	}, timeout).Should(Succeed())
}

func TestFirstControlPlaneInitsAndWorkersJoinOnceInitialized(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	cluster := createCluster(t, ns, "demo")
	g.Expect(env.Client.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "audit"},
		Data:       map[string][]byte{"policy": []byte("apiVersion: audit.k8s.io/v1\nkind: Policy\n")},
	})).To(Succeed())

	_, cp := createMachine(t, cluster, "cp-0", true, bootstrapv1.KubeadmConfigSpec{
		ClusterConfiguration: &bootstrapv1.ClusterConfiguration{},
		InitConfiguration: &bootstrapv1.InitConfiguration{NodeRegistration: bootstrapv1.NodeRegistrationOptions{
			KubeletExtraArgs: map[string]string{"node-labels": "tier=control"},
		}},
		Files: []bootstrapv1.File{{Path: "/etc/kubernetes/audit.yaml", ContentFrom: &bootstrapv1.FileSource{
			Secret: bootstrapv1.SecretFileSource{Name: "audit", Key: "policy"},
		}}},
		PreKubeadmCommands: []string{"echo before init"},
	})
	worker, wc := createMachine(t, cluster, "worker-0", false, bootstrapv1.KubeadmConfigSpec{
		JoinConfiguration: &bootstrapv1.JoinConfiguration{NodeRegistration: bootstrapv1.NodeRegistrationOptions{
			KubeletExtraArgs: map[string]string{"node-labels": "tier=web"},
			Taints:           []corev1.Taint{{Key: "dedicated", Value: "web", Effect: corev1.TaintEffectNoSchedule}},
		}},
	})

	// The first control plane Machine gets `kubeadm init` data with the cluster certificates, generated
	// and owned by its KubeadmConfig.
	g.Eventually(func(g Gomega) {
		get(g, cp)
		g.Expect(cp.Status.Ready).To(BeTrue())
		g.Expect(cp.Status.DataSecretName).To(Equal(ptr.To("cp-0")))
		g.Expect(cp.Status.Initialization).NotTo(BeNil())
		g.Expect(cp.Status.Initialization.DataSecretCreated).To(Equal(ptr.To(true)))
		g.Expect(conditions.IsV1Beta2True(cp, bootstrapv1.KubeadmConfigReadyV1Beta2Condition)).To(BeTrue())
	}, timeout).Should(Succeed())
	s := dataSecret(g, cp)
	g.Expect(s).NotTo(BeNil())
	g.Expect(s.Type).To(Equal(clusterv1.ClusterSecretType))
	g.Expect(s.Labels).To(HaveKeyWithValue(clusterv1.ClusterNameLabel, "demo"))
	g.Expect(metav1.IsControlledBy(s, cp)).To(BeTrue())
	g.Expect(string(s.Data["format"])).To(Equal("cloud-config"))
	files := writtenFiles(g, s.Data["value"])
	g.Expect(files).To(HaveKey("/etc/kubernetes/pki/ca.key"))
	g.Expect(files).To(HaveKey("/etc/kubernetes/pki/etcd/ca.crt"))
	g.Expect(files).To(HaveKey("/etc/kubernetes/pki/sa.pub"))
	g.Expect(files).To(HaveKeyWithValue("/etc/kubernetes/audit.yaml", "apiVersion: audit.k8s.io/v1\nkind: Policy\n"))
	g.Expect(files["/run/kubeadm/kubeadm.yaml"]).To(ContainSubstring("kind: ClusterConfiguration"))
	g.Expect(files["/run/kubeadm/kubeadm.yaml"]).To(ContainSubstring("controlPlaneEndpoint: " + cluster.Spec.ControlPlaneEndpoint.String()))
	g.Expect(files["/run/kubeadm/kubeadm.yaml"]).To(ContainSubstring("podSubnet: 192.168.0.0/16"))
	g.Expect(files["/run/kubeadm/kubeadm.yaml"]).To(ContainSubstring("value: tier=control"))
	g.Expect(string(s.Data["value"])).To(ContainSubstring("kubeadm init --config /run/kubeadm/kubeadm.yaml"))
	for _, p := range []clustersecret.Purpose{clustersecret.ClusterCA, clustersecret.EtcdCA, clustersecret.FrontProxyCA, clustersecret.ServiceAccount} {
		cert := &corev1.Secret{}
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: clustersecret.Name("demo", p)}, cert)).To(Succeed())
		g.Expect(metav1.IsControlledBy(cert, cp)).To(BeTrue(), "certificate %s", p)
	}
	// The files were resolved into the data, not into the KubeadmConfig.
	get(g, cp)
	g.Expect(cp.Spec.Files[0].ContentFrom).NotTo(BeNil())

	// The worker waits for the control plane: no data, no token.
	g.Consistently(func(g Gomega) {
		get(g, wc)
		g.Expect(wc.Status.Ready).To(BeFalse())
		g.Expect(dataSecret(g, wc)).To(BeNil())
		c := conditions.Get(wc, bootstrapv1.DataSecretAvailableCondition)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Reason).To(Equal(bootstrapv1.WaitingForControlPlaneAvailableReason))
	}, 3*time.Second, 500*time.Millisecond).Should(Succeed())

	initializeControlPlane(t, cluster)

	// Now the worker joins: a token in the workload cluster, the discovery filled in, join data.
	g.Eventually(func(g Gomega) {
		get(g, wc)
		g.Expect(wc.Status.Ready).To(BeTrue())
	}, timeout).Should(Succeed())
	bt := wc.Spec.JoinConfiguration.Discovery.BootstrapToken
	g.Expect(bt).NotTo(BeNil())
	g.Expect(bt.APIServerEndpoint).To(Equal(cluster.Spec.ControlPlaneEndpoint.String()))
	g.Expect(bt.CACertHashes).To(HaveLen(1))
	g.Expect(bt.CACertHashes[0]).To(HavePrefix("sha256:"))
	token := bt.Token
	g.Expect(tokenSecretName(token)).NotTo(BeEmpty())
	first := tokenExpiration(g, token)

	files = writtenFiles(g, dataSecret(g, wc).Data["value"])
	join := files["/run/kubeadm/kubeadm-join-config.yaml"]
	g.Expect(join).To(ContainSubstring("kind: JoinConfiguration"))
	g.Expect(join).To(ContainSubstring("token: " + token))
	g.Expect(join).To(ContainSubstring("key: node.cluster.x-k8s.io/uninitialized"))
	g.Expect(join).To(ContainSubstring("value: tier=web"))
	g.Expect(files).NotTo(HaveKey("/etc/kubernetes/pki/ca.key"), "a worker gets no cluster certificate: discovery fetches the CA")
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "demo-lock"}, &corev1.ConfigMap{})).To(
		MatchError(apierrors.IsNotFound, "the init lock is released once the control plane is initialized"))

	// The token is refreshed while the Machine has no Node...
	g.Eventually(func(g Gomega) {
		g.Expect(tokenExpiration(g, token)).To(BeTemporally(">", first))
	}, timeout).Should(Succeed())

	// ...and left to expire once it has one.
	get(g, worker)
	worker.Status.NodeRef = &corev1.ObjectReference{Kind: "Node", Name: "worker-0"}
	g.Expect(env.Client.Status().Update(ctx, worker)).To(Succeed())
	// A reconcile that read the Machine before its Node was set may refresh the token once more: the
	// expiration is taken once it stopped changing.
	var last time.Time
	g.Eventually(func(g Gomega) {
		before := tokenExpiration(g, token)
		g.Consistently(func(g Gomega) {
			g.Expect(tokenExpiration(g, token)).To(Equal(before))
		}, 2*time.Second, 200*time.Millisecond).Should(Succeed())
		last = before
	}, timeout).Should(Succeed())
	g.Consistently(func(g Gomega) {
		g.Expect(tokenExpiration(g, token)).To(Equal(last))
	}, testTokenTTL, time.Second).Should(Succeed())

	// The workload cluster, connected on demand for the token, is disconnected once no Machine needs it.
	g.Eventually(func() bool {
		h := clusterCache.Health(client.ObjectKeyFromObject(cluster))
		return h.Connected || h.Connecting
	}, timeout).Should(BeFalse(), "the workload cluster is no longer connected once every Node joined")
}

func TestBadInputIsReportedAndOtherConfigsKeepReconciling(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	cluster := createCluster(t, ns, "bad")
	initializeControlPlane(t, cluster)
	createClusterCA(t, cluster)

	_, missing := createMachine(t, cluster, "missing-secret", false, bootstrapv1.KubeadmConfigSpec{
		Files: []bootstrapv1.File{{Path: "/etc/app.conf", ContentFrom: &bootstrapv1.FileSource{
			Secret: bootstrapv1.SecretFileSource{Name: "app-config", Key: "app.conf"},
		}}},
	})
	_, invalid := createMachine(t, cluster, "invalid-ignition", false, bootstrapv1.KubeadmConfigSpec{
		Format: bootstrapv1.Ignition,
		Ignition: &bootstrapv1.IgnitionSpec{ContainerLinuxConfig: &bootstrapv1.ContainerLinuxConfig{
			AdditionalConfig: "systemd:\n  units:\n  - name: foo.service\n    enable: true\n",
		}},
	})
	_, good := createMachine(t, cluster, "good", false, bootstrapv1.KubeadmConfigSpec{Format: bootstrapv1.Ignition})

	failed := func(config *bootstrapv1.KubeadmConfig, want string) func(g Gomega) {
		return func(g Gomega) {
			get(g, config)
			g.Expect(config.Status.Ready).To(BeFalse())
			c := conditions.Get(config, bootstrapv1.DataSecretAvailableCondition)
			g.Expect(c).NotTo(BeNil())
			g.Expect(c.Reason).To(Equal(bootstrapv1.DataSecretGenerationFailedReason))
			g.Expect(c.Message).To(ContainSubstring(want))
			v2 := conditions.GetV1Beta2(config, bootstrapv1.KubeadmConfigDataSecretAvailableV1Beta2Condition)
			g.Expect(v2).NotTo(BeNil())
			g.Expect(v2.Message).To(ContainSubstring(want))
		}
	}
	g.Eventually(failed(missing, "Secret "+ns+"/app-config referenced by spec.files[0].contentFrom (path /etc/app.conf) is not found"), timeout).Should(Succeed())
	g.Eventually(failed(invalid, "invalid spec.ignition.containerLinuxConfig.additionalConfig"), timeout).Should(Succeed())
	g.Eventually(func(g Gomega) {
		get(g, good)
		g.Expect(good.Status.Ready).To(BeTrue())
		g.Expect(string(dataSecret(g, good).Data["format"])).To(Equal("ignition"))
	}, timeout).Should(Succeed())

	// Fixing the input fixes the config.
	g.Expect(env.Client.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "app-config"},
		Data:       map[string][]byte{"app.conf": []byte("key=value\n")},
	})).To(Succeed())
	g.Eventually(func(g Gomega) {
		get(g, missing)
		g.Expect(missing.Status.Ready).To(BeTrue())
		g.Expect(conditions.IsTrue(missing, bootstrapv1.DataSecretAvailableCondition)).To(BeTrue())
	}, timeout).Should(Succeed())
	g.Expect(writtenFiles(g, dataSecret(g, missing).Data["value"])).To(HaveKeyWithValue("/etc/app.conf", "key=value\n"))
}

func TestDataIsRenderedAgainUntilTheMachineIsProvisioned(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	cluster := createCluster(t, ns, "regen")
	initializeControlPlane(t, cluster)
	createClusterCA(t, cluster)
	machine, config := createMachine(t, cluster, "w", false, bootstrapv1.KubeadmConfigSpec{PreKubeadmCommands: []string{"echo one"}})

	runcmd := func(g Gomega) string {
		s := dataSecret(g, config)
		g.Expect(s).NotTo(BeNil())
		return string(s.Data["value"])
	}
	g.Eventually(runcmd, timeout).Should(ContainSubstring("echo one"))

	updateConfig(g, config, func(c *bootstrapv1.KubeadmConfig) { c.Spec.PreKubeadmCommands = []string{"echo two"} })
	g.Eventually(runcmd, timeout).Should(ContainSubstring("echo two"))

	// Once the Machine's infrastructure is provisioned, the data it consumed stays.
	get(g, machine)
	machine.Status.InfrastructureReady = true
	g.Expect(env.Client.Status().Update(ctx, machine)).To(Succeed())
	// No object tells when the controller's cache holds the provisioned Machine; a config change that came
	// before would be rendered, rightly, from the Machine the controller knew.
	time.Sleep(time.Second)
	updateConfig(g, config, func(c *bootstrapv1.KubeadmConfig) { c.Spec.PreKubeadmCommands = []string{"echo three"} })
	g.Consistently(runcmd, 3*time.Second, 500*time.Millisecond).Should(And(ContainSubstring("echo two"), Not(ContainSubstring("echo three"))))
}

func TestPausedClusterIsLeftAlone(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	cluster := createCluster(t, ns, "paused")
	get(g, cluster)
	cluster.Spec.Paused = true
	g.Expect(env.Client.Update(ctx, cluster)).To(Succeed())
	_, config := createMachine(t, cluster, "cp", true, bootstrapv1.KubeadmConfigSpec{ClusterConfiguration: &bootstrapv1.ClusterConfiguration{}})

	g.Eventually(func(g Gomega) {
		get(g, config)
		g.Expect(conditions.IsV1Beta2True(config, clusterv1.PausedV1Beta2Condition)).To(BeTrue())
	}, timeout).Should(Succeed())
	g.Consistently(func(g Gomega) {
		g.Expect(dataSecret(g, config)).To(BeNil())
	}, 2*time.Second, 500*time.Millisecond).Should(Succeed())

	cluster.Spec.Paused = false
	g.Expect(env.Client.Update(ctx, cluster)).To(Succeed())
	g.Eventually(func(g Gomega) {
		get(g, config)
		g.Expect(config.Status.Ready).To(BeTrue())
		g.Expect(conditions.IsV1Beta2True(config, clusterv1.PausedV1Beta2Condition)).To(BeFalse())
	}, timeout).Should(Succeed())
	g.Expect(strings.Contains(string(dataSecret(g, config).Data["value"]), "kubeadm init")).To(BeTrue())
}

// TestMachinePoolJoinsWorkersAndKeepsATokenForScaleUps: a KubeadmConfig owned by a MachinePool gets worker
// join data once the control plane is initialized; its token is refreshed while the pool's Nodes have not all
// joined, then rotated (a new token, the data rendered again) so that a later scale up can still join.
func TestMachinePoolJoinsWorkersAndKeepsATokenForScaleUps(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	cluster := createCluster(t, ns, "pools")
	createClusterCA(t, cluster)

	config := &bootstrapv1.KubeadmConfig{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "pool-config"},
		Spec: bootstrapv1.KubeadmConfigSpec{JoinConfiguration: &bootstrapv1.JoinConfiguration{
			NodeRegistration: bootstrapv1.NodeRegistrationOptions{KubeletExtraArgs: map[string]string{"node-labels": "pool=blue"}},
		}}}
	g.Expect(env.Client.Create(ctx, config)).To(Succeed())
	pool := &clusterv1.MachinePool{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "pool", Labels: map[string]string{clusterv1.ClusterNameLabel: "pools"}},
		Spec: clusterv1.MachinePoolSpec{
			ClusterName: "pools",
			Replicas:    ptr.To[int32](2),
			Template: clusterv1.MachineTemplateSpec{Spec: clusterv1.MachineSpec{
				ClusterName: "pools",
				Version:     ptr.To("v1.37.1"),
				Bootstrap: clusterv1.Bootstrap{ConfigRef: &corev1.ObjectReference{
					APIVersion: bootstrapv1.GroupVersion.String(), Kind: "KubeadmConfig", Name: config.Name, Namespace: ns,
				}},
				InfrastructureRef: corev1.ObjectReference{APIVersion: "infrastructure.cluster.x-k8s.io/v1beta1", Kind: "GenericInfrastructureMachinePool", Name: "pool"},
			}},
		},
	}
	g.Expect(env.Client.Create(ctx, pool)).To(Succeed())
	before := config.DeepCopy()
	config.OwnerReferences = []metav1.OwnerReference{{
		APIVersion: clusterv1.GroupVersion.String(), Kind: "MachinePool", Name: pool.Name, UID: pool.UID, Controller: ptr.To(true),
	}}
	g.Expect(env.Client.Patch(ctx, config, client.MergeFrom(before))).To(Succeed())

	// The pool's instances join as workers: nothing before the control plane is initialized.
	g.Eventually(func(g Gomega) {
		get(g, config)
		c := conditions.Get(config, bootstrapv1.DataSecretAvailableCondition)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Reason).To(Equal(bootstrapv1.WaitingForControlPlaneAvailableReason))
	}, timeout).Should(Succeed())
	g.Expect(dataSecret(g, config)).To(BeNil())

	initializeControlPlane(t, cluster)
	g.Eventually(func(g Gomega) {
		get(g, config)
		g.Expect(config.Status.Ready).To(BeTrue())
		g.Expect(config.Status.DataSecretName).To(Equal(ptr.To("pool-config")))
	}, timeout).Should(Succeed())
	token := config.Spec.JoinConfiguration.Discovery.BootstrapToken.Token
	join := writtenFiles(g, dataSecret(g, config).Data["value"])["/run/kubeadm/kubeadm-join-config.yaml"]
	g.Expect(join).To(ContainSubstring("token: " + token))
	g.Expect(join).To(ContainSubstring("value: pool=blue"))
	g.Expect(join).NotTo(ContainSubstring("controlPlane:"))

	// While the pool's Nodes have not all joined, the token is refreshed, not replaced.
	first := tokenExpiration(g, token)
	g.Eventually(func(g Gomega) {
		g.Expect(tokenExpiration(g, token)).To(BeTemporally(">", first))
	}, timeout).Should(Succeed())
	get(g, config)
	g.Expect(config.Spec.JoinConfiguration.Discovery.BootstrapToken.Token).To(Equal(token))

	// Once every replica has a Node, the token is rotated before it expires: a new token in the workload
	// cluster and in the data, for the next instance the pool creates.
	get(g, pool)
	pool.Status.NodeRefs = []corev1.ObjectReference{{Kind: "Node", Name: "pool-0"}, {Kind: "Node", Name: "pool-1"}}
	pool.Status.InfrastructureReady = true
	g.Expect(env.Client.Status().Update(ctx, pool)).To(Succeed())
	var rotated string
	g.Eventually(func(g Gomega) {
		get(g, config)
		rotated = config.Spec.JoinConfiguration.Discovery.BootstrapToken.Token
		g.Expect(rotated).NotTo(Equal(token))
		g.Expect(writtenFiles(g, dataSecret(g, config).Data["value"])["/run/kubeadm/kubeadm-join-config.yaml"]).To(ContainSubstring("token: " + rotated))
	}, timeout).Should(Succeed())
	g.Expect(tokenExpiration(g, rotated)).To(BeTemporally(">", time.Now()))

	// A token deleted in the workload cluster is replaced too: the pool can always scale up.
	g.Expect(workload.Client.Delete(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: metav1.NamespaceSystem, Name: tokenSecretName(rotated)}})).To(Succeed())
	g.Eventually(func(g Gomega) {
		get(g, config)
		next := config.Spec.JoinConfiguration.Discovery.BootstrapToken.Token
		g.Expect(next).NotTo(Equal(rotated))
		g.Expect(tokenExpiration(g, next)).To(BeTemporally(">", time.Now()))
	}, timeout).Should(Succeed())
}

// TestSecretsThatDoNotExistYetAreNotReadFromTheAPIServer: a KubeadmConfig waiting for its control plane is
// reconciled many times before its bootstrap data Secret exists; the provider's client reads a Secret the
// manager's cache does not have from the API server, so the data Secret is looked up in the cache only.
func TestSecretsThatDoNotExistYetAreNotReadFromTheAPIServer(t *testing.T) {
	g := NewWithT(t)
	ns := env.NewNamespace(t)
	cluster := createCluster(t, ns, "reads")
	_, wc := createMachine(t, cluster, "worker-0", false, bootstrapv1.KubeadmConfigSpec{JoinConfiguration: &bootstrapv1.JoinConfiguration{}})
	_, cp := createMachine(t, cluster, "cp-0", true, bootstrapv1.KubeadmConfigSpec{ClusterConfiguration: &bootstrapv1.ClusterConfiguration{}})
	g.Eventually(func(g Gomega) {
		get(g, cp)
		g.Expect(cp.Status.Ready).To(BeTrue())
	}, timeout).Should(Succeed())
	// The worker waits for the control plane, looked at every WaitInterval (1 s here).
	g.Consistently(func(g Gomega) {
		get(g, wc)
		g.Expect(wc.Status.Ready).To(BeFalse())
	}, 3*time.Second, 500*time.Millisecond).Should(Succeed())
	initializeControlPlane(t, cluster)
	g.Eventually(func(g Gomega) {
		get(g, wc)
		g.Expect(wc.Status.Ready).To(BeTrue())
	}, timeout).Should(Succeed())

	gets := liveRequests.secretGets(ns)
	t.Logf("Secret GETs sent to the API server: %v", gets)
	g.Expect(gets).NotTo(HaveKey("worker-0"), "the worker's data Secret is not read from the API server while it does not exist")
	g.Expect(gets).NotTo(HaveKey("cp-0"), "nor the control plane Machine's")
	// The certificates are looked up in the API server before they are generated (the only reads that
	// miss): a stale cache must never make the provider generate a second set. The cluster cache reads
	// the kubeconfig when it connects, uncached by design.
	delete(gets, "reads-kubeconfig")
	for name, n := range gets {
		g.Expect(name).To(HavePrefix("reads-"), "only the Cluster's certificates are read from the API server")
		g.Expect(n).To(Equal(1), "the certificate Secret %s is read from the API server once, before it is generated", name)
	}
}

// TestIgnitionNeedsItsFeatureGate: with the KubeadmBootstrapFormatIgnition gate off (the default, as
// upstream's), a KubeadmConfig of format ignition gets no data and says which gate to turn on.
func TestIgnitionNeedsItsFeatureGate(t *testing.T) {
	g := NewWithT(t)
	g.Expect(gates.Set("KubeadmBootstrapFormatIgnition=false")).To(Succeed())
	t.Cleanup(func() { _ = gates.Set("KubeadmBootstrapFormatIgnition=true") })
	ns := env.NewNamespace(t)
	cluster := createCluster(t, ns, "gated")
	initializeControlPlane(t, cluster)
	createClusterCA(t, cluster)
	_, config := createMachine(t, cluster, "ignition", false, bootstrapv1.KubeadmConfigSpec{Format: bootstrapv1.Ignition})
	g.Eventually(func(g Gomega) {
		get(g, config)
		g.Expect(config.Status.Ready).To(BeFalse())
		c := conditions.Get(config, bootstrapv1.DataSecretAvailableCondition)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Message).To(ContainSubstring("spec.format is ignition, which needs the KubeadmBootstrapFormatIgnition feature gate: " +
			"start the bootstrap provider with --feature-gates=KubeadmBootstrapFormatIgnition=true"))
	}, timeout).Should(Succeed())
}
