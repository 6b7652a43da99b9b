package dist_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	. "github.com/onsi/gomega"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterctlv1 "github.com/capstan-dev/capstan/api/clusterctl/v1alpha3"
	"github.com/capstan-dev/capstan/internal/cli/clusterctl/clusterctltest"
	"github.com/capstan-dev/capstan/internal/clusterctl/repository/repositorytest"
	"github.com/capstan-dev/capstan/internal/manifest"
	"github.com/capstan-dev/capstan/internal/release"
	"github.com/capstan-dev/capstan/internal/release/dist"
)

// TestRelease publishes the release directory of the built image on a loopback stand-in for GitHub,
// as the release's assets, and installs it with clusterctl as a user would.
func TestRelease(t *testing.T) {
	f := built(t)
	dir := filepath.Join(t.TempDir(), "release")
	assets, err := dist.WriteDirectory(dist.DirectoryOptions{Dir: dir, Version: version, Digest: f.img.Digest, SBOM: f.img.SBOM})
	if err != nil {
		t.Fatal(err)
	}
	pinned := release.ImageReference("", version, f.img.Digest.String())

	t.Run("the directory matches its checksums", func(t *testing.T) {
		g := NewWithT(t)
		g.Expect(release.VerifyChecksums(dir)).To(Succeed())
		g.Expect(filepath.Join(dir, "capstan.spdx.json")).To(BeAnExistingFile())
	})

	srv := repositorytest.NewServer(t)
	published := map[string][]byte{}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		published[e.Name()] = data
	}
	srv.AddRelease("capstan-dev", "capstan", version, published)
	srv.SetModuleVersions("github.com/capstan-dev/capstan", version)
	config := filepath.Join(t.TempDir(), "clusterctl.yaml")
	if err := os.WriteFile(config, assets[release.ClusterctlConfigFile], 0o600); err != nil {
		t.Fatal(err)
	}
	kubeconfig := env.KubeconfigFile(t, "")
	run := func(args ...string) clusterctltest.Result {
		return clusterctltest.Run(t, append([]string{"--config", config}, args...), clusterctltest.Options{
			Server: srv, Cluster: clusterctltest.ManagementCluster(kubeconfig),
		})
	}

	t.Run("clusterctl init installs the providers with the image pinned by digest", func(t *testing.T) {
		g := NewWithT(t)
		res := run("init", "--infrastructure", "local", "--kubeconfig", kubeconfig)
		g.Expect(res.Code).To(Equal(0), res.Stderr)
		g.Expect(srv.Requests()).To(ContainElements(
			"github.com/capstan-dev/capstan/releases/download/v0.1.0/core-components.yaml",
			"github.com/capstan-dev/capstan/releases/download/v0.1.0/bootstrap-components.yaml",
			"github.com/capstan-dev/capstan/releases/download/v0.1.0/control-plane-components.yaml",
			"github.com/capstan-dev/capstan/releases/download/v0.1.0/infrastructure-components.yaml",
		))

		for _, key := range []client.ObjectKey{
			{Namespace: "capi-system", Name: "capi-controller-manager"},
			{Namespace: "capl-system", Name: "capl-controller-manager"},
			{Namespace: "capi-kubeadm-bootstrap-system", Name: "capi-kubeadm-bootstrap-controller-manager"},
			{Namespace: "capi-kubeadm-control-plane-system", Name: "capi-kubeadm-control-plane-controller-manager"},
		} {
			d := &appsv1.Deployment{}
			g.Expect(env.Client.Get(t.Context(), key, d)).To(Succeed())
			g.Expect(d.Spec.Template.Spec.Containers).To(HaveLen(1))
			g.Expect(d.Spec.Template.Spec.Containers[0].Image).To(Equal(pinned), key.String())
		}
		providers := &clusterctlv1.ProviderList{}
		g.Expect(env.Client.List(t.Context(), providers)).To(Succeed())
		var installed []string
		for _, p := range providers.Items {
			installed = append(installed, p.Namespace+"/"+p.Name+" "+p.Version)
		}
		// A first init adds the kubeadm bootstrap and control plane providers, as upstream's does.
		g.Expect(installed).To(ConsistOf("capi-system/cluster-api v0.1.0", "capl-system/infrastructure-local v0.1.0",
			"capi-kubeadm-bootstrap-system/bootstrap-kubeadm v0.1.0", "capi-kubeadm-control-plane-system/control-plane-kubeadm v0.1.0"))
	})

	t.Run("the operator's manifests and chart package run the built image by digest", func(t *testing.T) {
		g := NewWithT(t)
		objs, err := manifest.Parse(published[release.OperatorComponentsFile])
		g.Expect(err).NotTo(HaveOccurred())
		var images []string
		for _, o := range objs {
			if o.GetKind() == "Deployment" {
				cs, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
				images = append(images, cs[0].(map[string]any)["image"].(string))
			}
		}
		g.Expect(images).To(Equal([]string{pinned}))
		chart, err := loader.LoadArchive(bytes.NewReader(published["capstan-operator-0.1.0.tgz"]))
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(chart.Values).To(HaveKeyWithValue("image", And(
			HaveKeyWithValue("tag", version), HaveKeyWithValue("digest", f.img.Digest.String()))))
	})

	t.Run("clusterctl generate cluster reads the release's templates", func(t *testing.T) {
		g := NewWithT(t)
		res := run("generate", "cluster", "demo", "--infrastructure", "local", "--kubernetes-version", "v1.37.1",
			"--worker-machine-count", "2", "--target-namespace", "team-a")
		g.Expect(res.Code).To(Equal(0), res.Stderr)
		g.Expect(res.Stdout).To(ContainSubstring("kind: LocalCluster\nmetadata:\n  name: demo\n  namespace: team-a\n"))
		g.Expect(srv.Requests()).To(ContainElement("github.com/capstan-dev/capstan/releases/download/v0.1.0/cluster-template.yaml"))
	})
}
