package local

import (
	"context"
	"os"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bootstrapv1 "github.com/capstan-dev/capstan/api/bootstrap/kubeadm/v1beta1"
	controlplanev1 "github.com/capstan-dev/capstan/api/controlplane/kubeadm/v1beta1"
	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/providers/local/backend"
	"github.com/capstan-dev/capstan/internal/test/envtest"
	"github.com/capstan-dev/capstan/internal/webhooks"
	"github.com/capstan-dev/capstan/internal/webhooks/webhookstest"
)

var env *envtest.Environment

func TestMain(m *testing.M) {
	// The API server calls webhooks through the EndpointSlices of their Service.
	os.Exit(envtest.Run(m, envtest.Options{PodNetwork: true}, func(e *envtest.Environment) { env = e }))
}

func serve(t *testing.T, ns string) {
	webhookstest.Serve(t, env, ns, func(c client.Client) webhooks.Set { return Webhooks(c) })
}

// kcp is a KubeadmControlPlane whose machines are of infraKind, with extra arguments.
func kcp(ns, name, infraKind string, apiServer, etcd map[string]string) *controlplanev1.KubeadmControlPlane {
	k := &controlplanev1.KubeadmControlPlane{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: controlplanev1.KubeadmControlPlaneSpec{
			Replicas: ptr.To[int32](1), Version: "v1.37.1",
			MachineTemplate: controlplanev1.KubeadmControlPlaneMachineTemplate{InfrastructureRef: corev1.ObjectReference{
				APIVersion: "infrastructure.cluster.x-k8s.io/v1alpha1", Kind: infraKind, Name: name}},
			KubeadmConfigSpec: bootstrapv1.KubeadmConfigSpec{
				Files: []bootstrapv1.File{{Path: "/etc/kubernetes/admission.yaml", Content: "kind: AdmissionConfiguration"}},
				ClusterConfiguration: &bootstrapv1.ClusterConfiguration{
					APIServer: bootstrapv1.APIServer{ControlPlaneComponent: bootstrapv1.ControlPlaneComponent{ExtraArgs: apiServer,
						ExtraVolumes: []bootstrapv1.HostPathMount{{Name: "admission", HostPath: "/etc/kubernetes/admission.yaml", MountPath: "/etc/kubernetes/admission.yaml"}}}},
				},
			},
		},
	}
	if etcd != nil {
		k.Spec.KubeadmConfigSpec.ClusterConfiguration.Etcd.Local = &bootstrapv1.LocalEtcd{ExtraArgs: etcd}
	}
	return k
}

// Each extra argument the local provider does not run is refused at admission, naming it.
func TestRefusedExtraArguments(t *testing.T) {
	ns := env.NewNamespace(t)
	serve(t, ns)
	tests := []struct {
		name      string
		apiServer map[string]string
		etcd      map[string]string
		want      []string
	}{
		{name: "audit log to a file of the machine", apiServer: map[string]string{"audit-log-path": "/any/path"},
			want: []string{`spec.kubeadmConfigSpec.clusterConfiguration.apiServer.extraArgs[audit-log-path]: Forbidden: apiServer.extraArgs sets audit-log-path to "/any/path": only "-"`}},
		{name: "authorization that allows everything", apiServer: map[string]string{"authorization-mode": "AlwaysAllow"},
			want: []string{"spec.kubeadmConfigSpec.clusterConfiguration.apiServer.extraArgs[authorization-mode]: Forbidden: apiServer.extraArgs sets authorization-mode, which is not allowed"}},
		{name: "a static token file", apiServer: map[string]string{"token-auth-file": "/etc/tokens.csv"},
			want: []string{"apiServer.extraArgs[token-auth-file]: Forbidden"}},
		{name: "an OIDC issuer the API server calls", apiServer: map[string]string{"oidc-issuer-url": "https://issuer.example.com"},
			want: []string{"apiServer.extraArgs[oidc-issuer-url]: Forbidden"}},
		{name: "an audit webhook", apiServer: map[string]string{"audit-webhook-config-file": "/etc/kubernetes/admission.yaml"},
			want: []string{"apiServer.extraArgs[audit-webhook-config-file]: Forbidden"}},
		{name: "an admission configuration that is a file of the machine", apiServer: map[string]string{"admission-control-config-file": "/etc/passwd"},
			want: []string{`apiServer.extraArgs[admission-control-config-file]: Forbidden: apiServer.extraArgs sets admission-control-config-file to "/etc/passwd", which is not a file of the bootstrap data`}},
		{name: "the bind address the provider sets", apiServer: map[string]string{"bind-address": "0.0.0.0"},
			want: []string{"apiServer.extraArgs[bind-address]: Forbidden: apiServer.extraArgs sets bind-address, which the local provider sets itself"}},
		{name: "etcd metrics on every address", etcd: map[string]string{"listen-metrics-urls": "http://0.0.0.0:2381"},
			want: []string{"spec.kubeadmConfigSpec.clusterConfiguration.etcd.local.extraArgs[listen-metrics-urls]: Forbidden: etcd.local.extraArgs sets listen-metrics-urls, which is not allowed"}},
		{name: "etcd logs to a file", etcd: map[string]string{"log-outputs": "/tmp/etcd.log"},
			want: []string{"etcd.local.extraArgs[log-outputs]: Forbidden"}},
		{name: "etcd's write-ahead log elsewhere", etcd: map[string]string{"wal-dir": "/tmp/wal"},
			want: []string{"etcd.local.extraArgs[wal-dir]: Forbidden"}},
		{name: "several at once, each named", apiServer: map[string]string{"authorization-mode": "AlwaysAllow", "v": "2", "profiling": "false"},
			etcd: map[string]string{"listen-metrics-urls": "http://0.0.0.0:2381", "snapshot-count": "100"},
			want: []string{"apiServer.extraArgs[authorization-mode]", "etcd.local.extraArgs[listen-metrics-urls]"}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			ctx := context.Background()
			name := "refused-" + string(rune('a'+i))
			err := env.Client.Create(ctx, kcp(ns, name, "LocalMachineTemplate", tt.apiServer, tt.etcd))
			g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "refused as invalid, got %v", err)
			g.Expect(err.Error()).To(ContainSubstring(`admission webhook "validation.kubeadmcontrolplane.controlplane.cluster.x-k8s.io" denied the request: KubeadmControlPlane.controlplane.cluster.x-k8s.io "` + name + `" is invalid`))
			for _, w := range tt.want {
				g.Expect(err.Error()).To(ContainSubstring(w))
			}
			g.Expect(err.Error()).To(ContainSubstring(backend.Explanation))
			g.Expect(err.Error()).NotTo(ContainSubstring("[v]"), "allowed arguments are not named")

			other := kcp(ns, name, "DockerMachineTemplate", tt.apiServer, tt.etcd)
			g.Expect(env.Client.Create(ctx, other)).To(Succeed(), "another provider's machines may have any argument")
		})
	}
}

func TestAllowedExtraArguments(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	serve(t, ns)
	k := kcp(ns, "allowed", "LocalMachineTemplate",
		map[string]string{"admission-control-config-file": "/etc/kubernetes/admission.yaml", "audit-log-path": "-", "v": "4", "feature-gates": "A=true"},
		map[string]string{"quota-backend-bytes": "8589934592"})
	g.Expect(env.Client.Create(ctx, k)).To(Succeed())

	t.Log("an update that brings in a refused argument is refused")
	k.Spec.KubeadmConfigSpec.ClusterConfiguration.APIServer.ExtraArgs["authorization-mode"] = "AlwaysAllow"
	err := env.Client.Update(ctx, k)
	g.Expect(err).To(MatchError(ContainSubstring("apiServer.extraArgs[authorization-mode]: Forbidden")))
}

// An object admitted before the check (or before the provider was upgraded) can still be changed, as long
// as the change does not add or change a refused argument: its finalizers can be removed.
func TestUpdatesKeepOldArguments(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	old := kcp(ns, "old", "LocalMachineTemplate", map[string]string{"authorization-mode": "AlwaysAllow"}, nil)
	old.Finalizers = []string{"example.com/hold"}
	g.Expect(env.Client.Create(ctx, old)).To(Succeed(), "created before the webhook is served")
	serve(t, ns)

	old.Spec.KubeadmConfigSpec.ClusterConfiguration.APIServer.ExtraArgs["v"] = "2"
	g.Expect(env.Client.Update(ctx, old)).To(Succeed())
	old.Spec.KubeadmConfigSpec.ClusterConfiguration.APIServer.ExtraArgs["authorization-mode"] = "AlwaysAllow,RBAC"
	g.Expect(env.Client.Update(ctx, old)).To(MatchError(ContainSubstring("apiServer.extraArgs[authorization-mode]: Forbidden")), "a changed value is refused")
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(old), old)).To(Succeed())
	old.Finalizers = nil
	g.Expect(env.Client.Update(ctx, old)).To(Succeed())
	g.Expect(env.Client.Delete(ctx, old)).To(Succeed())
}

// A KubeadmConfig is checked when its Cluster's infrastructure is a LocalCluster.
func TestKubeadmConfigOfALocalCluster(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	serve(t, ns)
	for name, kind := range map[string]string{"local": "LocalCluster", "docker": "DockerCluster"} {
		g.Expect(env.Client.Create(ctx, &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: clusterv1.ClusterSpec{InfrastructureRef: &corev1.ObjectReference{APIVersion: "infrastructure.cluster.x-k8s.io/v1alpha1", Kind: kind, Name: name}}})).To(Succeed())
	}
	config := func(name, cluster string) *bootstrapv1.KubeadmConfig {
		kc := &bootstrapv1.KubeadmConfig{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: bootstrapv1.KubeadmConfigSpec{ClusterConfiguration: &bootstrapv1.ClusterConfiguration{
				Etcd: bootstrapv1.Etcd{Local: &bootstrapv1.LocalEtcd{ExtraArgs: map[string]string{"listen-metrics-urls": "http://0.0.0.0:2381"}}}}}}
		if cluster != "" {
			kc.Labels = map[string]string{clusterv1.ClusterNameLabel: cluster}
		}
		return kc
	}
	err := env.Client.Create(ctx, config("local-0", "local"))
	g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "refused, got %v", err)
	g.Expect(err.Error()).To(ContainSubstring(`KubeadmConfig.bootstrap.cluster.x-k8s.io "local-0" is invalid: spec.clusterConfiguration.etcd.local.extraArgs[listen-metrics-urls]: Forbidden`))
	g.Expect(env.Client.Create(ctx, config("docker-0", "docker"))).To(Succeed(), "another provider's cluster")
	g.Expect(env.Client.Create(ctx, config("unlabelled", ""))).To(Succeed(), "no Cluster to tell: the provider checks again")
}

func TestManifestsFileIsUpToDate(t *testing.T) {
	g := NewWithT(t)
	want, err := Manifests()
	g.Expect(err).NotTo(HaveOccurred())
	got, err := os.ReadFile("../../../" + ManifestsFile)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(string(got)).To(Equal(string(want)), "run `make generate` to write %s from the registered webhooks", ManifestsFile)
}
