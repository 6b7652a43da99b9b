package clusterctltest

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"testing/fstest"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-dev/capstan/internal/clusterctl/cluster"
	"github.com/capstan-dev/capstan/internal/release"
)

// Releases of capstan's own providers in a management repository.
const (
	ReleaseV1 = "v0.1.0"
	ReleaseV2 = "v0.2.0"
)

// ManagementRepository is a local provider repository for tests against a management cluster.
type ManagementRepository struct {
	// Path is the repository's folder: pass it as CLUSTERCTL_REPOSITORY_PATH.
	Path string
	// Config is a clusterctl.yaml that points the providers and cert-manager at the repository.
	Config string
}

// Env returns the environment commands need to use the repository.
func (r ManagementRepository) Env() map[string]string {
	return map[string]string{"CLUSTERCTL_REPOSITORY_PATH": r.Path}
}

// Run runs clusterctl args with the repository's configuration and environment against the management
// cluster of the kubeconfig file.
func (r ManagementRepository) Run(t testing.TB, kubeconfig string, args ...string) Result {
	t.Helper()
	args = append([]string{"--config", r.Config}, args...)
	return Run(t, append(args, "--kubeconfig", kubeconfig), Options{Env: r.Env(), Cluster: ManagementCluster(kubeconfig)})
}

// ManagementRepositoryOptions tune a ManagementRepository.
type ManagementRepositoryOptions struct {
	// CertManagerVersion is the cert-manager version of the config; the default when empty.
	CertManagerVersion string
}

// NewManagementRepository writes a local repository with capstan's core (cluster-api), kubeadm bootstrap,
// kubeadm control plane and local infrastructure providers at ReleaseV1 and ReleaseV2, rendered from the
// release artifacts, and the test providers of testdata/management/repository (fixture, webhooks, badcrd,
// a stand-in cert-manager), with a clusterctl.yaml that names them.
func NewManagementRepository(t testing.TB, o ManagementRepositoryOptions) ManagementRepository {
	t.Helper()
	dir := t.TempDir()
	providers, err := release.Providers()
	if err != nil {
		t.Fatal(err)
	}
	for i := range providers {
		providers[i] = withoutWebhooks(t, providers[i])
	}
	for _, v := range []string{ReleaseV1, ReleaseV2} {
		if err := release.WriteRepository(dir, v, providers...); err != nil {
			t.Fatal(err)
		}
	}
	// The release artifacts map only the series of this build; the tests' second release needs its own.
	for _, p := range providers {
		for _, v := range []string{ReleaseV1, ReleaseV2} {
			path := filepath.Join(dir, p.Label(), v, "metadata.yaml")
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Contains(data, []byte("minor: 2")) {
				data = append(bytes.TrimRight(data, "\n"), []byte("\n- major: 0\n  minor: 2\n  contract: v1beta1\n")...)
			}
			if err := os.WriteFile(path, data, 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	copyTree(t, filepath.Join(testdata(t), "management", "repository"), dir)
	certManager := ""
	if o.CertManagerVersion != "" {
		certManager = "\n  version: " + o.CertManagerVersion
	}
	config := fmt.Sprintf(`providers:
- {name: cluster-api, type: CoreProvider, url: "${CLUSTERCTL_REPOSITORY_PATH}/cluster-api/latest/core-components.yaml"}
- {name: kubeadm, type: BootstrapProvider, url: "${CLUSTERCTL_REPOSITORY_PATH}/bootstrap-kubeadm/latest/bootstrap-components.yaml"}
- {name: kubeadm, type: ControlPlaneProvider, url: "${CLUSTERCTL_REPOSITORY_PATH}/control-plane-kubeadm/latest/control-plane-components.yaml"}
- {name: local, type: InfrastructureProvider, url: "${CLUSTERCTL_REPOSITORY_PATH}/infrastructure-local/latest/infrastructure-components.yaml"}
- {name: fixture, type: InfrastructureProvider, url: "${CLUSTERCTL_REPOSITORY_PATH}/infrastructure-fixture/latest/infrastructure-components.yaml"}
- {name: webhooks, type: InfrastructureProvider, url: "${CLUSTERCTL_REPOSITORY_PATH}/infrastructure-webhooks/latest/infrastructure-components.yaml"}
- {name: badcrd, type: InfrastructureProvider, url: "${CLUSTERCTL_REPOSITORY_PATH}/infrastructure-badcrd/latest/infrastructure-components.yaml"}
cert-manager:
  url: "${CLUSTERCTL_REPOSITORY_PATH}/cert-manager/latest/cert-manager.yaml"
  timeout: 20s%s
`, certManager)
	configPath := filepath.Join(t.TempDir(), "clusterctl.yaml")
	if err := os.WriteFile(configPath, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	return ManagementRepository{Path: dir, Config: configPath}
}

// ManagementCluster returns the management cluster of a kubeconfig file, with waits that look again
// every 20ms.
func ManagementCluster(kubeconfig string) *cluster.Client {
	return cluster.New(cluster.Kubeconfig{Path: kubeconfig}, cluster.WithPollInterval(20*time.Millisecond))
}

// MarkDeploymentsAvailable plays the Deployment controller of an API server that has none (the test API
// server): until the test ends, the Deployments in namespaces get status Available=True for their
// generation (every namespace when none is given).
func MarkDeploymentsAvailable(t testing.TB, c client.Client, namespaces ...string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			MarkAvailable(ctx, c, namespaces...)
		}
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
}

// MarkAvailable gives the Deployments in namespaces (every namespace when none is given) status
// Available=True for their generation, once; MarkDeploymentsAvailable does it until the test ends.
func MarkAvailable(ctx context.Context, c client.Client, namespaces ...string) {
	if len(namespaces) == 0 {
		namespaces = []string{""}
	}
	for _, ns := range namespaces {
		list := &appsv1.DeploymentList{}
		if err := c.List(ctx, list, client.InNamespace(ns)); err != nil {
			continue
		}
		for i := range list.Items {
			d := &list.Items[i]
			if d.Status.ObservedGeneration == d.Generation && len(d.Status.Conditions) > 0 {
				continue
			}
			d.Status.ObservedGeneration = d.Generation
			d.Status.Conditions = []appsv1.DeploymentCondition{{
				Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue, Reason: "MinimumReplicasAvailable",
				Message: "Deployment has minimum availability.", LastUpdateTime: metav1.Now(), LastTransitionTime: metav1.Now(),
			}}
			_ = c.Status().Update(ctx, d)
		}
	}
}

// withoutWebhooks drops the webhook configurations of a provider's manifests: the tests install the
// providers on a test API server and run their controllers in-process, without the webhook server the
// configurations would send every request to (webhooks are tested in internal/webhooks and end to end in
// the embedded management cluster).
func withoutWebhooks(t testing.TB, p release.Provider) release.Provider {
	t.Helper()
	files := fstest.MapFS{}
	err := fs.WalkDir(p.Manifests, ".", func(path string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() || path == "webhooks.yaml" {
			return err
		}
		data, err := fs.ReadFile(p.Manifests, path)
		files[path] = &fstest.MapFile{Data: data}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	p.Manifests = files
	return p
}
