package releasecheck

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	. "github.com/onsi/gomega"

	"github.com/capstan-dev/capstan/internal/clusterctl/repository/repositorytest"
	capstanrelease "github.com/capstan-dev/capstan/internal/release"
)

// releaseFiles lists the files of a loaded release.
func releaseFiles(t *testing.T, r Release) []string {
	t.Helper()
	entries, err := os.ReadDir(r.versionDir())
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

// wantFiles are the files of the local provider's release the kit reads.
var wantFiles = []string{
	"metadata.yaml", "infrastructure-components.yaml", "cluster-template.yaml", "cluster-template-control-plane.yaml",
	"cluster-template-machinepool.yaml", "cluster-template-topology.yaml", "clusterclass-local.yaml",
}

// TestLoadRelease loads the local provider's release from each kind of source `capstan conformance` takes: a
// clusterctl local repository, the GitHub release directory `make release` writes, a GitHub release URL
// and an http folder URL (both served on loopback), and a file:// URL.
func TestLoadRelease(t *testing.T) {
	repo := localProviderRepository(t)
	providers, err := capstanrelease.Providers()
	if err != nil {
		t.Fatal(err)
	}
	assets, err := capstanrelease.GitHubRelease(capstanrelease.GitHubReleaseOptions{Options: capstanrelease.Options{Version: capstanrelease.DefaultVersion}}, providers...)
	if err != nil {
		t.Fatal(err)
	}
	ghDir := filepath.Join(t.TempDir(), "release")
	if err := capstanrelease.WriteDirectory(ghDir, assets); err != nil {
		t.Fatal(err)
	}
	gh := repositorytest.NewServer(t)
	gh.AddRelease("example", "cluster-api-provider-local", capstanrelease.DefaultVersion, assets)
	folder := httptest.NewServer(http.FileServer(http.Dir(repo)))
	t.Cleanup(folder.Close)

	for _, tc := range []struct {
		name, source, providerName string
		client                     *http.Client
	}{
		{name: "local repository", source: repo},
		{name: "GitHub release directory", source: ghDir},
		{name: "GitHub release URL", source: "https://github.com/example/cluster-api-provider-local/releases/latest/infrastructure-components.yaml",
			providerName: "local", client: gh.Client()},
		{name: "http folder URL", source: folder.URL + "/infrastructure-local/latest/infrastructure-components.yaml"},
		{name: "file URL", source: "file://" + filepath.Join(repo, "infrastructure-local", capstanrelease.DefaultVersion, "infrastructure-components.yaml")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			r, err := loadRelease(t.Context(), tc.source, tc.providerName, "", t.TempDir(), tc.client)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(r.Name).To(Equal("local"))
			g.Expect(r.Version).To(Equal(capstanrelease.DefaultVersion))
			files := releaseFiles(t, r)
			if tc.name == "http folder URL" {
				// An http folder cannot be listed: the default template comes with the components.
				g.Expect(files).To(ConsistOf("metadata.yaml", "infrastructure-components.yaml", "cluster-template.yaml"))
			} else {
				g.Expect(files).To(ConsistOf(wantFiles))
			}
			crds, err := providerCRDs(r)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(machinePoolKind(crds, "infrastructure.cluster.x-k8s.io").Kind).To(Equal("LocalMachinePool"))
			protos, err := loadPrototypes(r, &Options{KubernetesVersion: "v1.37.1"})
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(protos.infraCluster.GetKind()).To(Equal("LocalCluster"))
			g.Expect(protos.infraMachine.GetKind()).To(Equal("LocalMachine"))
			g.Expect(protos.controlPlaneMachine.GetKind()).To(Equal("LocalMachine"))
			g.Expect(protos.kubernetesVersion).To(Equal("v1.37.1"))
		})
	}
}
