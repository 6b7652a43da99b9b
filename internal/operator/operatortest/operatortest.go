// Package operatortest helps test the provider operator: releases of capstan's core and local
// infrastructure provider at several versions (rendered from the release manifests), as a clusterctl
// local repository, ConfigMaps or files to serve, and the operator running in-process.
package operatortest

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	clusterctlv1 "github.com/capstan-dev/capstan/api/clusterctl/v1alpha3"
	managementv1 "github.com/capstan-dev/capstan/api/management/v1alpha1"
	operatorv1 "github.com/capstan-dev/capstan/api/operator/v1alpha2"
	"github.com/capstan-dev/capstan/internal/clusterctl/repository"
	"github.com/capstan-dev/capstan/internal/clusterctl/repository/repositorytest"
	"github.com/capstan-dev/capstan/internal/operator"
	"github.com/capstan-dev/capstan/internal/operator/source"
	"github.com/capstan-dev/capstan/internal/release"
	"github.com/capstan-dev/capstan/internal/test/compat"
)

// Test releases of capstan's providers.
const (
	V1 = "v0.1.0"
	V2 = "v0.2.0"
)

// Release is one release of a provider: its label and files.
type Release struct {
	Label   string
	Version string
	Files   map[string][]byte
	// ComponentsFile is the name of the components file in Files.
	ComponentsFile string
}

// Metadata returns the release's metadata.yaml.
func (r Release) Metadata() []byte { return r.Files["metadata.yaml"] }

// Components returns the release's components YAML.
func (r Release) Components() []byte { return r.Files[r.ComponentsFile] }

// ReleaseAt renders one release of capstan's provider label ("cluster-api" or "infrastructure-local") at
// version, whose metadata.yaml maps the v0.1 and v0.2 series to v1beta1 and version's series to contract.
func ReleaseAt(t testing.TB, label, version, contract string) Release {
	t.Helper()
	providers, err := release.Providers()
	if err != nil {
		t.Fatal(err)
	}
	v, err := repository.ParseVersion(version)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range providers {
		if p.Label() != label {
			continue
		}
		files, err := p.Files(version)
		if err != nil {
			t.Fatal(err)
		}
		meta := "apiVersion: clusterctl.cluster.x-k8s.io/v1alpha3\nkind: Metadata\nreleaseSeries:\n"
		for _, minor := range []uint64{1, 2} {
			if minor != v.Minor {
				meta += fmt.Sprintf("- {major: 0, minor: %d, contract: v1beta1}\n", minor)
			}
		}
		meta += fmt.Sprintf("- {major: %d, minor: %d, contract: %s}\n", v.Major, v.Minor, contract)
		files["metadata.yaml"] = []byte(meta)
		return Release{Label: label, Version: version, Files: files, ComponentsFile: p.ComponentsFile()}
	}
	t.Fatalf("capstan has no provider %s", label)
	return Release{}
}

// Releases renders capstan's core ("cluster-api") and local infrastructure provider ("infrastructure-local")
// at V1 and V2, keyed by label then version. The v0.2 series follows contractV2 (v1beta1 when empty), so
// that tests can make V2 a contract upgrade.
func Releases(t testing.TB, contractV2 string) map[string]map[string]Release {
	t.Helper()
	if contractV2 == "" {
		contractV2 = "v1beta1"
	}
	providers, err := release.Providers()
	if err != nil {
		t.Fatal(err)
	}
	meta := func(version string) []byte {
		return fmt.Appendf(nil, "apiVersion: clusterctl.cluster.x-k8s.io/v1alpha3\nkind: Metadata\nreleaseSeries:\n- major: 0\n  minor: 1\n  contract: v1beta1\n- major: 0\n  minor: 2\n  contract: %s\n", contractV2)
	}
	out := map[string]map[string]Release{}
	for _, p := range providers {
		out[p.Label()] = map[string]Release{}
		for _, v := range []string{V1, V2} {
			files, err := p.Files(v)
			if err != nil {
				t.Fatal(err)
			}
			files["metadata.yaml"] = meta(v)
			out[p.Label()][v] = Release{Label: p.Label(), Version: v, Files: files, ComponentsFile: p.ComponentsFile()}
		}
	}
	return out
}

// WriteRepository writes releases into dir in the layout of a clusterctl local repository
// ({dir}/{label}/{version}/{file}).
func WriteRepository(t testing.TB, dir string, releases ...Release) {
	t.Helper()
	for _, r := range releases {
		d := filepath.Join(dir, r.Label, r.Version)
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		for name, data := range r.Files {
			if err := os.WriteFile(filepath.Join(d, name), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// ConfigMap returns the ConfigMap of a release in the proposal's air-gapped layout: named after the
// version, labelled with labels, holding "metadata" and "components" (gzip-compressed in binaryData with
// the compressed annotation when compressed is true).
func ConfigMap(t testing.TB, namespace string, labels map[string]string, r Release, compressed bool) *corev1.ConfigMap {
	t.Helper()
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: r.Version, Labels: labels},
		Data:       map[string]string{operatorv1.MetadataConfigMapKey: string(r.Metadata())},
	}
	if !compressed {
		cm.Data[operatorv1.ComponentsConfigMapKey] = string(r.Components())
		return cm
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	_, _ = zw.Write(r.Components())
	_ = zw.Close()
	cm.Annotations = map[string]string{operatorv1.CompressedAnnotation: operatorv1.TrueValue}
	cm.BinaryData = map[string][]byte{operatorv1.ComponentsConfigMapKey: buf.Bytes()}
	return cm
}

// Start runs the operator against cfg until the test ends.
func Start(t testing.TB, cfg *rest.Config, o operator.Options) {
	t.Helper()
	scheme, err := operator.NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Client:                 client.Options{Cache: &client.CacheOptions{DisableFor: []client.Object{&corev1.ConfigMap{}, &corev1.Secret{}}}},
		// Tests may start the operator more than once in a process.
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		t.Fatal(err)
	}
	if o.Retry == (repository.Retry{}) {
		o.Retry = repository.Retry{Interval: 10 * time.Millisecond, Timeout: 50 * time.Millisecond}
	}
	if err := operator.Setup(mgr, o); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("the operator stopped: %v", err)
		}
	})
}

// AdditionalManifests returns additional manifests for a provider of namespace ns: a ConfigMap extra-a
// whose data "team" is the variable TEAM and, withB, a ConfigMap extra-b.
func AdditionalManifests(ns string, withB bool) string {
	out := fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: extra-a, namespace: %s}\ndata: {team: \"${TEAM}\"}\n", ns)
	if withB {
		out += fmt.Sprintf("---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: extra-b, namespace: %s}\ndata: {kept: \"until it is no longer rendered\"}\n", ns)
	}
	return out
}

// Nudge makes the operator reconcile p now, as any change of it does: the operator picks up a change of
// the content of a provider's configSecret or additional manifests when it next reconciles the provider.
func Nudge(t testing.TB, c client.Client, p operatorv1.GenericProvider) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := c.Get(context.Background(), client.ObjectKeyFromObject(p), p); err != nil {
			return err
		}
		a := p.GetAnnotations()
		if a == nil {
			a = map[string]string{}
		}
		a["test.capstan.dev/nudge"] = time.Now().Format(time.RFC3339Nano)
		p.SetAnnotations(a)
		return c.Update(context.Background(), p)
	})
	if err != nil {
		t.Fatalf("nudging %s %s/%s: %v", p.GetObjectKind().GroupVersionKind().Kind, p.GetNamespace(), p.GetName(), err)
	}
}

// CacheName is the name of the ConfigMap in which the operator caches a fetched release.
func CacheName(label, version string) string { return source.CacheName(label, version) }

// CapstanProvider is one of capstan's providers with what EveryField needs of it.
type CapstanProvider struct {
	// Label is its clusterctl label, ServiceAccount that of its Deployment.
	Label, ServiceAccount string
	// Concurrency are the kinds of its manager's --<kind>-concurrency flags.
	Concurrency []string
	// Webhooks says whether its manager serves webhooks.
	Webhooks bool
}

// CapstanProviders are capstan's providers.
var CapstanProviders = []CapstanProvider{
	{"cluster-api", "capi-manager", []string{"Cluster.cluster.x-k8s.io", "MachineDeployment", "ClusterClass"}, true},
	{"bootstrap-kubeadm", "capi-kubeadm-bootstrap-manager", []string{"KubeadmConfig.bootstrap.cluster.x-k8s.io"}, false},
	{"control-plane-kubeadm", "capi-kubeadm-control-plane-manager", []string{"KubeadmControlPlane.controlplane.cluster.x-k8s.io"}, false},
	{"infrastructure-local", "capl-manager", []string{"LocalCluster", "LocalMachine", "LocalMachinePool"}, true},
}

// EveryField returns a spec of a provider of namespace ns that sets every field of spec.manager and
// spec.deployment of upstream's v1alpha2 API but those capstan refuses everywhere (cacheSyncTimeout,
// recoverPanic), and capstan's debug and image parts. Its Deployment keeps one replica and capstan's image
// (tag), so that it still runs. concurrency are the provider's --<kind>-concurrency kinds; webhooks says
// whether its manager serves webhooks (the webhook fields are set only then: the other managers have no
// webhook flags). serviceAccount is the name of its Deployment's service account.
func EveryField(ns, version, serviceAccount string, concurrency []string, webhooks bool) operatorv1.ProviderSpec {
	gk := map[string]int{}
	for _, k := range concurrency {
		gk[k] = 3
	}
	m := &operatorv1.ManagerSpec{
		ControllerManagerConfiguration: operatorv1.ControllerManagerConfiguration{
			SyncPeriod: &metav1.Duration{Duration: 7 * time.Minute},
			LeaderElection: &operatorv1.LeaderElectionConfiguration{
				LeaderElect: ptr.To(true), LeaseDuration: metav1.Duration{Duration: 20 * time.Second},
				RenewDeadline: metav1.Duration{Duration: 15 * time.Second}, RetryPeriod: metav1.Duration{Duration: 3 * time.Second},
				ResourceLock: "leases", ResourceName: "every-field-lease", ResourceNamespace: ns,
			},
			CacheNamespace:          ns,
			GracefulShutdownTimeout: &metav1.Duration{Duration: 20 * time.Second},
			Controller:              &operatorv1.ControllerConfigurationSpec{GroupKindConcurrency: gk},
			Metrics:                 operatorv1.ControllerMetrics{BindAddress: ":8081", DiagnosticsAddress: ":8443", InsecureDiagnostics: true},
			Health:                  operatorv1.ControllerHealth{HealthProbeBindAddress: ":9440", ReadinessEndpointName: "readyz", LivenessEndpointName: "healthz"},
		},
		ProfilerAddress:         "localhost:6060",
		MaxConcurrentReconciles: 4,
		Verbosity:               2,
		Debug:                   true,
		FeatureGates:            map[string]bool{"MachinePool": true},
		AdditionalArgs:          map[string]string{"--kube-api-qps": "50"},
	}
	if webhooks {
		m.Webhook = operatorv1.ControllerWebhook{Port: ptr.To(9443), Host: "127.0.0.1", CertDir: ""}
	}
	tolerations := []corev1.Toleration{{Key: "node-role.kubernetes.io/control-plane", Effect: corev1.TaintEffectNoSchedule}}
	return operatorv1.ProviderSpec{
		Version: version,
		Manager: m,
		Deployment: &operatorv1.DeploymentSpec{
			Replicas:     ptr.To(1),
			NodeSelector: map[string]string{"kubernetes.io/os": "linux"},
			Tolerations:  &tolerations,
			Affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{{
				Weight: 1, Preference: corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "kubernetes.io/arch", Operator: corev1.NodeSelectorOpExists}}},
			}}}},
			ServiceAccountName: serviceAccount,
			ImagePullSecrets:   []corev1.LocalObjectReference{{Name: "registry-credentials"}},
			Containers: []operatorv1.ContainerSpec{{
				Name:      "manager",
				Image:     &operatorv1.ImageMeta{Tag: version},
				Args:      map[string]string{"--kube-api-burst": "80", "namespace": "ignored"},
				Env:       []corev1.EnvVar{{Name: "EVERY_FIELD", Value: "set"}},
				Resources: &corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")}},
				Command:   []string{"/capstan"},
			}},
		},
	}
}

// ProposalExamples returns the complete provider objects of the operator proposal
// (management.cluster.x-k8s.io/v1alpha1), in the order the proposal gives them.
func ProposalExamples(t testing.TB) []*unstructured.Unstructured {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	docs, err := compat.DocumentsInFile(filepath.Join(filepath.Dir(file), "..", "..", "test", "compat", "testdata", "seeds", "provider-operator-proposal.md"))
	if err != nil {
		t.Fatal(err)
	}
	var out []*unstructured.Unstructured
	for _, d := range docs {
		if d.Object != nil && d.Object.GroupVersionKind().GroupVersion() == managementv1.GroupVersion {
			out = append(out, d.Object)
		}
	}
	return out
}

// ProposalRelease returns the release version of the proposal's infrastructure provider name (not
// capstan's), following contract: its components make a Deployment <prefix>-controller-manager of the image
// registry.example/<name>-controller:<version> in namespace ns, and a ConfigMap "settings" whose region is
// the variable REGION.
func ProposalRelease(t testing.TB, name, version, ns, prefix, contract string) Release {
	t.Helper()
	settings := fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: %s}\ndata: {region: \"${REGION}\"}", ns)
	return FakeRelease(t, name, clusterctlv1.InfrastructureProviderType, version, contract,
		FakeComponents(ns, prefix, "registry.example/"+name+"-controller:"+version, settings))
}

// PublishProposalReleases publishes on gh the GitHub releases the proposal's examples install, following
// contract: aws v0.6.0 and vsphere v0.4.9 where clusterctl's built-in providers are, myazure v0.4.9 from
// another repository, capstan's kubeadm control plane provider v0.3.10. (The air-gapped azure is
// ProposalRelease("azure", "v0.4.9", "capz-system", "capz", contract), in ConfigMaps.)
func PublishProposalReleases(t testing.TB, gh *repositorytest.Server, contract string) {
	t.Helper()
	gh.AddRelease("kubernetes-sigs", "cluster-api-provider-aws", "v0.6.0", ProposalRelease(t, "aws", "v0.6.0", "capa-system", "capa", contract).Files)
	gh.AddRelease("myorg", "awesome-azure-provider", "v0.4.9", ProposalRelease(t, "myazure", "v0.4.9", "capz-system", "myazure", contract).Files)
	gh.AddRelease("kubernetes-sigs", "cluster-api-provider-vsphere", "v0.4.9", ProposalRelease(t, "vsphere", "v0.4.9", "capv-system", "capv", contract).Files)
	gh.AddRelease("capstan-dev", "capstan", "v0.3.10", ReleaseAt(t, "control-plane-kubeadm", "v0.3.10", contract).Files)
}

// FakeRelease returns a release of a provider that is not capstan's (aws, vsphere, ...): its
// metadata.yaml maps version's series to contract, its components file (named as clusterctl names it for
// the type) is components.
func FakeRelease(t testing.TB, name string, providerType clusterctlv1.ProviderType, version, contract, components string) Release {
	t.Helper()
	v, err := repository.ParseVersion(version)
	if err != nil {
		t.Fatal(err)
	}
	meta := fmt.Sprintf("apiVersion: clusterctl.cluster.x-k8s.io/v1alpha3\nkind: Metadata\nreleaseSeries:\n- {major: %d, minor: %d, contract: %s}\n", v.Major, v.Minor, contract)
	file := source.ComponentsFile(providerType)
	return Release{Label: clusterctlv1.ManifestLabel(name, providerType), Version: version, ComponentsFile: file,
		Files: map[string][]byte{"metadata.yaml": []byte(meta), file: []byte(components)}}
}

// FakeComponents returns the components of a provider that is not capstan's: its namespace, a Deployment
// <prefix>-controller-manager whose container "manager" runs image, and more (YAML documents) after them.
func FakeComponents(namespace, prefix, image, more string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Namespace
metadata:
  name: %[1]s
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: %[2]s-controller-manager
  namespace: %[1]s
  labels: {control-plane: %[2]s-controller-manager}
spec:
  replicas: 1
  selector:
    matchLabels: {control-plane: %[2]s-controller-manager}
  template:
    metadata:
      labels: {control-plane: %[2]s-controller-manager}
    spec:
      containers:
      - name: manager
        image: %[3]s
        args: [--leader-elect, --diagnostics-address=:8443]
        resources:
          limits: {cpu: 500m, memory: 500Mi}
---
%[4]s
`, namespace, prefix, image, more)
}
