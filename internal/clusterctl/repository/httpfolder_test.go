package repository

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	. "github.com/onsi/gomega"

	"github.com/capstan-dev/capstan/internal/clusterctl/config"
)

const testMetadata = "apiVersion: clusterctl.cluster.x-k8s.io/v1alpha3\nkind: Metadata\nreleaseSeries:\n- {major: 0, minor: 1, contract: v1beta1}\n- {major: 0, minor: 2, contract: v1beta1}\n"

// serveFolder serves dir over http on loopback, as a web server with index pages does.
func serveFolder(t *testing.T, dir string, handler func(http.Handler) http.Handler) string {
	t.Helper()
	h := http.FileServer(http.Dir(dir))
	if handler != nil {
		h = handler(h)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}

func writeRelease(t *testing.T, dir, label, version string) {
	t.Helper()
	d := filepath.Join(dir, label, version)
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string]string{
		"metadata.yaml":                  testMetadata,
		"infrastructure-components.yaml": "# " + version + "\n",
	} {
		if err := os.WriteFile(filepath.Join(d, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

func TestHTTPFolder(t *testing.T) {
	dir := t.TempDir()
	writeRelease(t, dir, "infrastructure-foo", "v0.1.0")
	writeRelease(t, dir, "infrastructure-foo", "v0.2.0")
	if err := os.MkdirAll(filepath.Join(dir, "infrastructure-foo", "not-a-version"), 0o755); err != nil {
		t.Fatal(err)
	}
	withIndex := serveFolder(t, dir, nil)
	// A server without index pages: folders answer 404, so versions come from versions.txt.
	noIndex := serveFolder(t, dir, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path[len(r.URL.Path)-1] == '/' {
				http.NotFound(w, r)
				return
			}
			h.ServeHTTP(w, r)
		})
	})

	tests := []struct {
		name         string
		base         string
		versionsTxt  string
		wantVersions []string
		wantDefault  string
		wantErr      string
	}{
		{name: "index page", base: withIndex, wantVersions: []string{"v0.1.0", "v0.2.0"}, wantDefault: "v0.2.0"},
		{name: "versions.txt", base: noIndex, versionsTxt: "v0.1.0\nv0.2.0\n", wantVersions: []string{"v0.1.0", "v0.2.0"}, wantDefault: "v0.2.0"},
		{name: "neither", base: noIndex, wantErr: "has no index page linking the version folders and no versions.txt"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			txt := filepath.Join(dir, "infrastructure-foo", "versions.txt")
			_ = os.Remove(txt)
			if tt.versionsTxt != "" {
				g.Expect(os.WriteFile(txt, []byte(tt.versionsTxt), 0o600)).To(Succeed())
			}
			cfg, err := config.New(nil, nil)
			g.Expect(err).NotTo(HaveOccurred())
			f := NewFactory(cfg, WithRetry(fastRetry))
			repo, err := f.Repository(config.Provider{Name: "foo", Type: "InfrastructureProvider", URL: tt.base + "/infrastructure-foo/latest/infrastructure-components.yaml"})
			g.Expect(err).NotTo(HaveOccurred())
			versions, err := repo.Versions(t.Context())
			if tt.wantErr != "" {
				g.Expect(err).To(MatchError(ContainSubstring(tt.wantErr)))
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(versions).To(ConsistOf(tt.wantVersions))
			v, err := repo.DefaultVersion(t.Context())
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(v).To(Equal(tt.wantDefault))
			data, err := repo.File(t.Context(), "v0.1.0", repo.ComponentsPath())
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(string(data)).To(Equal("# v0.1.0\n"))
			_, err = repo.File(t.Context(), "v0.3.0", repo.ComponentsPath())
			g.Expect(err).To(MatchError(ContainSubstring("version v0.3.0 of infrastructure-foo not found")))
		})
	}
}

func TestHTTPFolderURLs(t *testing.T) {
	g := NewWithT(t)
	cfg, err := config.New(nil, nil)
	g.Expect(err).NotTo(HaveOccurred())
	f := NewFactory(cfg)
	_, err = f.Repository(config.Provider{Name: "foo", Type: "InfrastructureProvider", URL: "https://example.com/repo/infrastructure-bar/v1.0.0/infrastructure-components.yaml"})
	g.Expect(err).To(MatchError(ContainSubstring(`the folder above the version must be the provider label "infrastructure-foo", found "infrastructure-bar"`)))
	_, err = f.Repository(config.Provider{Name: "foo", Type: "InfrastructureProvider", URL: "https://example.com/repo/infrastructure-foo/newest/infrastructure-components.yaml"})
	g.Expect(err).To(MatchError(ContainSubstring(`the version folder must be "latest" or a semantic version`)))
}
