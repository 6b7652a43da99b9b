package repository

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/capstan-dev/capstan/internal/clusterctl/config"
	"github.com/capstan-dev/capstan/internal/clusterctl/repository/repositorytest"
)

var fastRetry = Retry{Interval: time.Millisecond, Timeout: 50 * time.Millisecond}

func metadata(series ...string) []byte {
	var b strings.Builder
	b.WriteString("apiVersion: clusterctl.cluster.x-k8s.io/v1alpha3\nkind: Metadata\nreleaseSeries:\n")
	for _, s := range series {
		var major, minor, contract string
		parts := strings.Split(s, " ")
		mm := strings.Split(parts[0], ".")
		major, minor, contract = mm[0], mm[1], parts[1]
		b.WriteString("- major: " + major + "\n  minor: " + minor + "\n  contract: " + contract + "\n")
	}
	return []byte(b.String())
}

func env(vars map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		v, ok := vars[k]
		return v, ok
	}
}

func newFactory(t *testing.T, srv *repositorytest.Server, cfgYAML string, vars map[string]string) *Factory {
	t.Helper()
	if vars == nil {
		vars = map[string]string{}
	}
	if _, ok := vars["HOME"]; !ok {
		vars["HOME"] = t.TempDir()
	}
	cfg, err := config.New([]byte(cfgYAML), env(vars))
	if err != nil {
		t.Fatal(err)
	}
	return NewFactory(cfg, WithHTTPClient(srv.Client()), WithRetry(fastRetry))
}

func gitHubProvider(owner, repo, version string) config.Provider {
	return config.Provider{Name: "foo", Type: "InfrastructureProvider",
		URL: "https://github.com/" + owner + "/" + repo + "/releases/" + version + "/infrastructure-components.yaml"}
}

func TestGitHubVersions(t *testing.T) {
	tests := []struct {
		name         string
		goproxy      string
		setup        func(s *repositorytest.Server)
		want         []string
		wantAPICalls bool
	}{
		{
			name: "from the Go module proxy, across major versions",
			setup: func(s *repositorytest.Server) {
				s.SetModuleVersions("github.com/org/repo", "v0.9.0", "v1.0.0", "v1.1.0", "v2.0.0+incompatible")
				s.SetModuleVersions("github.com/org/repo/v2", "v2.0.0", "v2.1.0-rc.0")
				s.SetModuleVersions("github.com/org/repo/v3", "v3.0.0")
			},
			want: []string{"v0.9.0", "v1.0.0", "v1.1.0", "v2.0.0", "v2.1.0-rc.0", "v3.0.0"},
		},
		{
			name: "a module that only exists at /v2",
			setup: func(s *repositorytest.Server) {
				s.SetModuleVersions("github.com/org/repo/v2", "v2.0.0")
			},
			want: []string{"v2.0.0"},
		},
		{
			name:    "GOPROXY=off asks the GitHub API",
			goproxy: "off",
			setup: func(s *repositorytest.Server) {
				s.AddRelease("org", "repo", "v1.0.0", nil)
				s.AddRelease("org", "repo", "not-a-version", nil)
				s.AddDraftRelease("org", "repo", "v9.0.0")
			},
			want:         []string{"v1.0.0"},
			wantAPICalls: true,
		},
		{
			name:    "GOPROXY=direct asks the GitHub API",
			goproxy: "direct",
			setup: func(s *repositorytest.Server) {
				s.AddRelease("org", "repo", "v1.0.0", nil)
			},
			want:         []string{"v1.0.0"},
			wantAPICalls: true,
		},
		{
			name: "a proxy that does not know the module falls back to the GitHub API",
			setup: func(s *repositorytest.Server) {
				s.AddRelease("org", "repo", "v1.2.0", nil)
			},
			want:         []string{"v1.2.0"},
			wantAPICalls: true,
		},
		{
			name:    "a custom proxy with a path",
			goproxy: "https://goproxy.example.com/artifactory/api/go/go,direct",
			setup: func(s *repositorytest.Server) {
				s.SetModuleVersions("artifactory/api/go/go/github.com/org/repo", "v1.0.0")
			},
			want: []string{"v1.0.0"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			srv := repositorytest.NewServer(t)
			tt.setup(srv)
			vars := map[string]string{}
			if tt.goproxy != "" {
				vars["GOPROXY"] = tt.goproxy
			}
			repo, err := newFactory(t, srv, "", vars).Repository(gitHubProvider("org", "repo", "latest"))
			g.Expect(err).NotTo(HaveOccurred())
			got, err := repo.Versions(context.Background())
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(got).To(ConsistOf(tt.want))
			g.Expect(srv.Count("api.github.com/") > 0).To(Equal(tt.wantAPICalls))
		})
	}
}

func TestGitHubReleasesPagination(t *testing.T) {
	g := NewWithT(t)
	srv := repositorytest.NewServer(t)
	var want []string
	for i := 0; i < 250; i++ {
		tag := "v1." + strconv.Itoa(i) + ".0"
		srv.AddRelease("org", "repo", tag, nil)
		want = append(want, tag)
	}
	repo, err := newFactory(t, srv, "", map[string]string{"GOPROXY": "off"}).Repository(gitHubProvider("org", "repo", "latest"))
	g.Expect(err).NotTo(HaveOccurred())
	got, err := repo.Versions(context.Background())
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(got).To(ConsistOf(want))
	g.Expect(srv.Count("api.github.com/repos/org/repo/releases")).To(Equal(3))
}

func TestGoProxyFor(t *testing.T) {
	tests := []struct {
		name string
		vars map[string]string
		want string
	}{
		{name: "default", want: "https://proxy.golang.org"},
		{name: "off", vars: map[string]string{"GOPROXY": "off"}, want: ""},
		{name: "direct", vars: map[string]string{"GOPROXY": "direct"}, want: ""},
		{name: "first URL of a list", vars: map[string]string{"GOPROXY": "https://a.example.com|https://b.example.com,direct"}, want: "https://a.example.com"},
		{name: "no scheme means https", vars: map[string]string{"GOPROXY": "goproxy.example.com/"}, want: "https://goproxy.example.com"},
		{name: "direct first disables", vars: map[string]string{"GOPROXY": "direct,https://a.example.com"}, want: ""},
		{name: "GONOPROXY", vars: map[string]string{"GONOPROXY": "github.com/org/*"}, want: ""},
		{name: "GOPRIVATE", vars: map[string]string{"GOPRIVATE": "github.com/org"}, want: ""},
		{name: "GOPRIVATE of another org", vars: map[string]string{"GOPRIVATE": "github.com/other"}, want: "https://proxy.golang.org"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			f := newFactory(t, repositorytest.NewServer(t), "", tt.vars)
			got := f.goProxyFor("github.com/org/repo")
			if tt.want == "" {
				g.Expect(got).To(BeNil())
				return
			}
			g.Expect(got).NotTo(BeNil())
			g.Expect(got.String()).To(Equal(tt.want))
		})
	}
}

func TestGitHubFiles(t *testing.T) {
	ctx := context.Background()

	t.Run("plain download, cached", func(t *testing.T) {
		g := NewWithT(t)
		srv := repositorytest.NewServer(t)
		srv.AddRelease("org", "repo", "v1.0.0", map[string][]byte{"infrastructure-components.yaml": []byte("kind: X")})
		repo, _ := newFactory(t, srv, "", nil).Repository(gitHubProvider("org", "repo", "v1.0.0"))
		for range 3 {
			data, err := repo.File(ctx, "", "infrastructure-components.yaml")
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(string(data)).To(Equal("kind: X"))
		}
		g.Expect(srv.Requests()).To(Equal([]string{"github.com/org/repo/releases/download/v1.0.0/infrastructure-components.yaml"}))
	})

	t.Run("private repository: the API with GITHUB_TOKEN", func(t *testing.T) {
		g := NewWithT(t)
		srv := repositorytest.NewServer(t)
		srv.AddRelease("org", "repo", "v1.0.0", map[string][]byte{"metadata.yaml": []byte("meta")})
		srv.SetPrivate("org", "repo")
		srv.SetToken("s3cret")
		repo, _ := newFactory(t, srv, "", map[string]string{"GITHUB_TOKEN": "s3cret"}).Repository(gitHubProvider("org", "repo", "v1.0.0"))
		data, err := repo.File(ctx, "v1.0.0", "metadata.yaml")
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(string(data)).To(Equal("meta"))
		g.Expect(srv.Count("api.github.com/repos/org/repo/releases/tags/v1.0.0")).To(Equal(1))
	})

	t.Run("the token can come from the config file", func(t *testing.T) {
		g := NewWithT(t)
		srv := repositorytest.NewServer(t)
		srv.AddRelease("org", "repo", "v1.0.0", map[string][]byte{"metadata.yaml": []byte("meta")})
		srv.SetPrivate("org", "repo")
		srv.SetToken("s3cret")
		repo, _ := newFactory(t, srv, "GITHUB_TOKEN: s3cret\n", nil).Repository(gitHubProvider("org", "repo", "v1.0.0"))
		_, err := repo.File(ctx, "v1.0.0", "metadata.yaml")
		g.Expect(err).NotTo(HaveOccurred())
	})

	t.Run("rate limit tells the user to set GITHUB_TOKEN", func(t *testing.T) {
		g := NewWithT(t)
		srv := repositorytest.NewServer(t)
		srv.SetRateLimited(true)
		repo, _ := newFactory(t, srv, "", map[string]string{"GOPROXY": "off"}).Repository(gitHubProvider("org", "repo", "latest"))
		_, err := repo.Versions(ctx)
		var rate *RateLimitError
		g.Expect(errors.As(err, &rate)).To(BeTrue(), "got %v", err)
		g.Expect(err.Error()).To(ContainSubstring("set the GITHUB_TOKEN environment variable"))
		g.Expect(srv.Count("api.github.com/")).To(Equal(1), "rate limits are not retried")
	})

	t.Run("transient failures are retried", func(t *testing.T) {
		g := NewWithT(t)
		srv := repositorytest.NewServer(t)
		srv.AddRelease("org", "repo", "v1.0.0", map[string][]byte{"metadata.yaml": []byte("meta")})
		srv.FailNext("github.com/org/repo/releases/download/", 2)
		repo, _ := newFactory(t, srv, "", nil).Repository(gitHubProvider("org", "repo", "v1.0.0"))
		data, err := repo.File(ctx, "v1.0.0", "metadata.yaml")
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(string(data)).To(Equal("meta"))
		g.Expect(srv.Count("github.com/org/repo/releases/download/")).To(Equal(3))
	})

	t.Run("failures that outlast the retries are reported", func(t *testing.T) {
		g := NewWithT(t)
		srv := repositorytest.NewServer(t)
		srv.FailNext("github.com/", 1000)
		repo, _ := newFactory(t, srv, "", nil).Repository(gitHubProvider("org", "repo", "v1.0.0"))
		_, err := repo.File(ctx, "v1.0.0", "metadata.yaml")
		g.Expect(err).To(MatchError(ContainSubstring("503 Service Unavailable")))
	})

	t.Run("a missing file of an existing release", func(t *testing.T) {
		g := NewWithT(t)
		srv := repositorytest.NewServer(t)
		srv.AddRelease("org", "repo", "v1.0.0", map[string][]byte{"metadata.yaml": []byte("meta")})
		srv.SetModuleVersions("github.com/org/repo", "v1.0.0")
		repo, _ := newFactory(t, srv, "", nil).Repository(gitHubProvider("org", "repo", "v1.0.0"))
		_, err := repo.File(ctx, "v1.0.0", "cluster-template-nope.yaml")
		var missing *FileNotFoundError
		g.Expect(errors.As(err, &missing)).To(BeTrue(), "got %v", err)
		g.Expect(errors.Is(err, ErrNotFound)).To(BeTrue())
	})

	t.Run("a version that does not exist", func(t *testing.T) {
		g := NewWithT(t)
		srv := repositorytest.NewServer(t)
		srv.AddRelease("org", "repo", "v1.0.0", map[string][]byte{"metadata.yaml": []byte("meta")})
		srv.SetModuleVersions("github.com/org/repo", "v1.0.0")
		repo, _ := newFactory(t, srv, "", nil).Repository(gitHubProvider("org", "repo", "latest"))
		_, err := repo.File(ctx, "v9.9.9", "metadata.yaml")
		g.Expect(err).To(MatchError("version v9.9.9 of infrastructure-foo not found in https://github.com/org/repo/releases/latest/infrastructure-components.yaml: use one of v1.0.0"))
	})
}

func TestLatestContractRelease(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name     string
		contract string
		releases map[string][]byte // tag -> metadata.yaml (nil: a tag without release)
		want     string
		wantErr  string
	}{
		{
			name:     "the latest release follows the contract",
			contract: "v1beta1",
			releases: map[string][]byte{"v1.0.0": metadata("1.0 v1beta1"), "v1.1.0": metadata("1.1 v1beta1", "1.0 v1beta1")},
			want:     "v1.1.0",
		},
		{
			name:     "GA releases win over newer pre-releases",
			contract: "v1beta1",
			releases: map[string][]byte{"v1.1.0": metadata("1.1 v1beta1"), "v1.2.0-rc.0": metadata("1.2 v1beta1", "1.1 v1beta1")},
			want:     "v1.1.0",
		},
		{
			name:     "only pre-releases",
			contract: "v1beta1",
			releases: map[string][]byte{"v0.1.0-alpha.1": metadata("0.1 v1beta1"), "v0.1.0-alpha.2": metadata("0.1 v1beta1")},
			want:     "v0.1.0-alpha.2",
		},
		{
			name:     "the latest release follows a newer contract: latest patch of the newest matching series",
			contract: "v1beta1",
			releases: map[string][]byte{
				"v1.9.0": metadata("1.9 v1beta1"), "v1.9.3": metadata("1.9 v1beta1"), "v1.8.9": metadata("1.8 v1beta1"),
				"v2.0.0": metadata("2.0 v1beta2", "1.9 v1beta1", "1.8 v1beta1"),
			},
			want: "v1.9.3",
		},
		{
			name:     "a tag without release assets is skipped",
			contract: "v1beta1",
			releases: map[string][]byte{"v1.0.0": metadata("1.0 v1beta1"), "v1.1.0": nil},
			want:     "v1.0.0",
		},
		{
			name:     "no series for the contract: the latest release",
			contract: "v1beta1",
			releases: map[string][]byte{"v3.0.0": metadata("3.0 v1beta2")},
			want:     "v3.0.0",
		},
		{
			name:     "a malformed metadata.yaml is an error",
			contract: "v1beta1",
			releases: map[string][]byte{"v1.0.0": []byte("apiVersion: clusterctl.cluster.x-k8s.io/v1alpha3\nkind: Metadata\nreleaseSeries: {}\n")},
			wantErr:  "invalid metadata.yaml of infrastructure-foo v1.0.0",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			srv := repositorytest.NewServer(t)
			var tags []string
			for tag, meta := range tt.releases {
				tags = append(tags, tag)
				if meta != nil {
					srv.AddRelease("org", "repo", tag, map[string][]byte{"metadata.yaml": meta})
				}
			}
			srv.SetModuleVersions("github.com/org/repo", tags...)
			f := newFactory(t, srv, "", nil)
			repo, err := f.Repository(gitHubProvider("org", "repo", "latest"))
			g.Expect(err).NotTo(HaveOccurred())
			got, err := LatestContractRelease(ctx, repo, tt.contract)
			if tt.wantErr != "" {
				g.Expect(err).To(MatchError(ContainSubstring(tt.wantErr)))
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(got).To(Equal(tt.want))
		})
	}
}

func TestGitLab(t *testing.T) {
	ctx := context.Background()
	g := NewWithT(t)
	srv := repositorytest.NewServer(t)
	srv.AddGitLabFile("myorg%2Fmyrepo/cluster-api/v1.2.3/core-components.yaml", []byte("core"))
	srv.AddGitLabFile("myorg%2Fmyrepo/cluster-api/v1.2.3/metadata.yaml", []byte("meta"))
	srv.SetGitLabToken("glpat")
	p := config.Provider{Name: "cluster-api", Type: "CoreProvider",
		URL: "https://gitlab.example.com/api/v4/projects/myorg%2Fmyrepo/packages/generic/cluster-api/v1.2.3/core-components.yaml"}

	repo, err := newFactory(t, srv, "", map[string]string{"GITLAB_ACCESS_TOKEN": "glpat"}).Repository(p)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(repo.ComponentsPath()).To(Equal("core-components.yaml"))
	v, err := repo.DefaultVersion(ctx)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(v).To(Equal("v1.2.3"))
	versions, err := repo.Versions(ctx)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(versions).To(Equal([]string{"v1.2.3"}))
	data, err := repo.File(ctx, "", "core-components.yaml")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(string(data)).To(Equal("core"))

	noToken, err := newFactory(t, srv, "", nil).Repository(p)
	g.Expect(err).NotTo(HaveOccurred())
	_, err = noToken.File(ctx, "", "metadata.yaml")
	g.Expect(err).To(MatchError(ContainSubstring("401 Unauthorized")))

	_, err = newFactory(t, srv, "", nil).Repository(config.Provider{Name: "cluster-api", Type: "CoreProvider",
		URL: "https://gitlab.example.com/api/v4/projects/42/packages/generic/cluster-api/latest/core-components.yaml"})
	g.Expect(err).To(MatchError(ContainSubstring("the package version must be a semantic version")))
}

func writeFiles(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

func TestLocal(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	writeFiles(t, root, map[string]string{
		"infrastructure-foo/v1.0.0/metadata.yaml":                  string(metadata("1.0 v1beta1")),
		"infrastructure-foo/v1.1.0/metadata.yaml":                  string(metadata("1.1 v1beta1")),
		"infrastructure-foo/v1.1.0/infrastructure-components.yaml": "v1.1.0 components",
		"infrastructure-foo/v1.2.0-rc.1/metadata.yaml":             string(metadata("1.2 v1beta1")),
		"infrastructure-foo/not-a-version/metadata.yaml":           "ignored",
	})
	overrides := t.TempDir()
	writeFiles(t, overrides, map[string]string{"infrastructure-foo/v1.1.0/cluster-template.yaml": "from overrides"})

	tests := []struct {
		name    string
		url     string
		check   func(g Gomega, repo Repository)
		wantErr string
	}{
		{
			name: "latest is the newest GA version",
			url:  root + "/infrastructure-foo/latest/infrastructure-components.yaml",
			check: func(g Gomega, repo Repository) {
				v, err := repo.DefaultVersion(ctx)
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(v).To(Equal("v1.1.0"))
				versions, err := repo.Versions(ctx)
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(versions).To(ConsistOf("v1.0.0", "v1.1.0", "v1.2.0-rc.1"))
				data, err := repo.File(ctx, "latest", "infrastructure-components.yaml")
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(string(data)).To(Equal("v1.1.0 components"))
			},
		},
		{
			name: "file:// URL with a pinned version",
			url:  "file://" + root + "/infrastructure-foo/v1.0.0/infrastructure-components.yaml",
			check: func(g Gomega, repo Repository) {
				v, err := repo.DefaultVersion(ctx)
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(v).To(Equal("v1.0.0"))
			},
		},
		{
			name: "the overrides folder wins",
			url:  root + "/infrastructure-foo/latest/infrastructure-components.yaml",
			check: func(g Gomega, repo Repository) {
				data, err := repo.File(ctx, "", "cluster-template.yaml")
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(string(data)).To(Equal("from overrides"))
				files, err := repo.(FileLister).Files(ctx, "v1.1.0")
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(files).To(Equal([]string{"cluster-template.yaml", "infrastructure-components.yaml", "metadata.yaml"}))
			},
		},
		{
			name:    "the folder must be the provider label",
			url:     root + "/infrastructure-bar/latest/infrastructure-components.yaml",
			wantErr: `the folder above the version must be the provider label "infrastructure-foo", found "infrastructure-bar"`,
		},
		{
			name:    "the version folder must be a version",
			url:     root + "/infrastructure-foo/current/infrastructure-components.yaml",
			wantErr: `the version folder must be "latest" or a semantic version`,
		},
		{
			name: "an unreachable repository",
			url:  root + "/nowhere/infrastructure-foo/latest/infrastructure-components.yaml",
			check: func(g Gomega, repo Repository) {
				_, err := repo.DefaultVersion(ctx)
				g.Expect(err).To(MatchError(ContainSubstring("cannot read local repository")))
				g.Expect(err).To(MatchError(ContainSubstring("does not exist: check the provider url")))
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			f := newFactory(t, repositorytest.NewServer(t), "overridesFolder: "+overrides+"\n", nil)
			repo, err := f.Repository(config.Provider{Name: "foo", Type: "InfrastructureProvider", URL: tt.url})
			if tt.wantErr != "" {
				g.Expect(err).To(MatchError(ContainSubstring(tt.wantErr)))
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			tt.check(g, repo)
		})
	}
}

func TestUnsupportedURLs(t *testing.T) {
	tests := []struct {
		url     string
		wantErr string
	}{
		{"https://example.com/components.yaml", "unsupported url"},
		{"https://github.com/org/repo/blob/main/components.yaml", "invalid GitHub url"},
		{"https://github.com/org/repo/releases/newest/components.yaml", "the release must be \"latest\" or a semantic version"},
		{"https://gitlab.example.com/api/v4/projects/42/components.yaml", "invalid GitLab url"},
		{"ftp://example.com/components.yaml", "unsupported url scheme"},
		{"./components.yaml", "invalid local repository path"},
	}
	for _, tt := range tests {
		t.Run(tt.url, func(t *testing.T) {
			g := NewWithT(t)
			_, err := newFactory(t, repositorytest.NewServer(t), "", nil).Repository(config.Provider{Name: "foo", Type: "InfrastructureProvider", URL: tt.url})
			g.Expect(err).To(MatchError(ContainSubstring(tt.wantErr)))
		})
	}
}

func TestReadURL(t *testing.T) {
	ctx := context.Background()
	g := NewWithT(t)
	srv := repositorytest.NewServer(t)
	srv.AddFile("org", "public", "main", "templates/cluster.yaml", []byte("public template"))
	srv.AddFile("org", "private", "main", "cluster.yaml", []byte("private template"))
	srv.SetPrivate("org", "private")
	srv.SetToken("s3cret")
	srv.AddRelease("org", "public", "v1.0.0", map[string][]byte{"cluster-template.yaml": []byte("release template")})
	f := newFactory(t, srv, "", map[string]string{"GITHUB_TOKEN": "s3cret"})

	data, err := f.ReadURL(ctx, "https://github.com/org/public/blob/main/templates/cluster.yaml")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(string(data)).To(Equal("public template"))
	g.Expect(srv.Count("api.github.com/")).To(Equal(0), "public files are read without the API")

	data, err = f.ReadURL(ctx, "https://github.com/org/private/blob/main/cluster.yaml")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(string(data)).To(Equal("private template"))

	data, err = f.ReadURL(ctx, "https://github.com/org/public/releases/download/v1.0.0/cluster-template.yaml")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(string(data)).To(Equal("release template"))

	srv.AddFile("org", "public", "main", "x.yaml", nil)
	_, err = f.ReadURL(ctx, "https://github.com/org/public/tree/main/x.yaml")
	g.Expect(err).To(MatchError(ContainSubstring("unsupported GitHub URL")))

	_, err = f.ReadURL(ctx, "https://example.com/missing.yaml")
	g.Expect(errors.Is(err, ErrNotFound)).To(BeTrue())
}

func TestParseMetadata(t *testing.T) {
	header := "apiVersion: clusterctl.cluster.x-k8s.io/v1alpha3\nkind: Metadata\n"
	tests := []struct {
		name    string
		data    string
		wantErr string
	}{
		{name: "valid", data: header + "releaseSeries:\n- major: 1\n  minor: 10\n  contract: v1beta1\n- major: 0\n  minor: 3\n  contract: v1alpha3\n"},
		{name: "unknown field", data: header + "releaseSeries:\n- major: 1\n  minor: 10\n  contrac: v1beta1\n", wantErr: `unknown field "contrac"`},
		{name: "wrong apiVersion", data: "apiVersion: v1\nkind: Metadata\nreleaseSeries:\n- {major: 1, minor: 0, contract: v1beta1}\n", wantErr: `apiVersion is "v1", want clusterctl.cluster.x-k8s.io/v1alpha3`},
		{name: "wrong kind", data: "apiVersion: clusterctl.cluster.x-k8s.io/v1alpha3\nkind: Provider\nreleaseSeries:\n- {major: 1, minor: 0, contract: v1beta1}\n", wantErr: `kind is "Provider"`},
		{name: "no series", data: header, wantErr: "releaseSeries is empty"},
		{name: "bad contract", data: header + "releaseSeries:\n- {major: 1, minor: 0, contract: beta}\n", wantErr: `contract "beta" is not a Cluster API contract`},
		{name: "missing contract", data: header + "releaseSeries:\n- {major: 1, minor: 0}\n", wantErr: `contract "" is not a Cluster API contract`},
		{name: "duplicate series", data: header + "releaseSeries:\n- {major: 1, minor: 0, contract: v1beta1}\n- {major: 1, minor: 0, contract: v1beta2}\n", wantErr: "the series v1.0 appears more than once"},
		{name: "not YAML", data: "releaseSeries: [", wantErr: "yaml: line 1: did not find expected node content"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			m, err := ParseMetadata([]byte(tt.data))
			if tt.wantErr != "" {
				g.Expect(err).To(MatchError(ContainSubstring(tt.wantErr)))
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(m.ReleaseSeries).To(HaveLen(2))
		})
	}
}

func TestReleaseSeriesFor(t *testing.T) {
	g := NewWithT(t)
	m, err := ParseMetadata(metadata("1.10 v1beta1"))
	g.Expect(err).NotTo(HaveOccurred())
	s, err := ReleaseSeriesFor(m, "infrastructure-foo", "v1.10.3")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(s.Contract).To(Equal("v1beta1"))
	_, err = ReleaseSeriesFor(m, "infrastructure-foo", "v1.11.0")
	g.Expect(err).To(MatchError(ContainSubstring("has no release series for v1.11")))
}
