package config

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	clusterctlv1 "github.com/capstan-dev/capstan/api/clusterctl/v1alpha3"
)

func env(vars map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		v, ok := vars[k]
		return v, ok
	}
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestLoadLocations(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name    string
		files   map[string]string // relative to HOME
		vars    map[string]string
		path    string
		want    string // value of WHERE
		wantErr string
	}{
		{name: "no file at all", want: ""},
		{name: "XDG_CONFIG_HOME", files: map[string]string{"xdg/cluster-api/clusterctl.yaml": "WHERE: xdg"}, vars: map[string]string{"XDG_CONFIG_HOME": "xdg"}, want: "xdg"},
		{name: "default XDG folder", files: map[string]string{".config/cluster-api/clusterctl.yaml": "WHERE: dot-config"}, want: "dot-config"},
		{
			name:  "XDG wins over the legacy folder",
			files: map[string]string{".config/cluster-api/clusterctl.yaml": "WHERE: xdg", ".cluster-api/clusterctl.yaml": "WHERE: legacy"},
			want:  "xdg",
		},
		{name: "legacy folder", files: map[string]string{".cluster-api/clusterctl.yaml": "WHERE: legacy"}, want: "legacy"},
		{name: ".yml", files: map[string]string{".cluster-api/clusterctl.yml": "WHERE: yml"}, want: "yml"},
		{name: "--config", files: map[string]string{"mine.yaml": "WHERE: flag", ".cluster-api/clusterctl.yaml": "WHERE: legacy"}, path: "mine.yaml", want: "flag"},
		{name: "--config that does not exist", path: "nope.yaml", wantErr: "does not exist: check the --config flag"},
		{name: "not a mapping", files: map[string]string{".cluster-api/clusterctl.yaml": "- a\n- b\n"}, wantErr: "the file must be a YAML mapping"},
		{name: "not YAML", files: map[string]string{".cluster-api/clusterctl.yaml": "a: [\n"}, wantErr: "invalid clusterctl config file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			home := t.TempDir()
			for name, content := range tt.files {
				write(t, filepath.Join(home, name), content)
			}
			vars := map[string]string{"HOME": home}
			for k, v := range tt.vars {
				vars[k] = filepath.Join(home, v)
			}
			path := tt.path
			if path != "" {
				path = filepath.Join(home, path)
			}
			cfg, err := Load(ctx, LoadOptions{Path: path, LookupEnv: env(vars)})
			if tt.wantErr != "" {
				g.Expect(err).To(MatchError(ContainSubstring(tt.wantErr)))
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			got, _ := cfg.Get("WHERE")
			g.Expect(got).To(Equal(tt.want))
		})
	}
}

func TestLoadRemote(t *testing.T) {
	g := NewWithT(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/clusterctl.yaml":
			_, _ = w.Write([]byte("WHERE: remote\n"))
		case "/huge.yaml":
			_, _ = w.Write([]byte(strings.Repeat("# padding\n", 110_000)))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	vars := env(map[string]string{"HOME": t.TempDir()})

	cfg, err := Load(context.Background(), LoadOptions{Path: srv.URL + "/clusterctl.yaml", LookupEnv: vars, HTTPClient: srv.Client()})
	g.Expect(err).NotTo(HaveOccurred())
	got, _ := cfg.Get("WHERE")
	g.Expect(got).To(Equal("remote"))
	g.Expect(cfg.Source()).To(Equal(srv.URL + "/clusterctl.yaml"))

	_, err = Load(context.Background(), LoadOptions{Path: srv.URL + "/missing.yaml", LookupEnv: vars, HTTPClient: srv.Client()})
	g.Expect(err).To(MatchError(ContainSubstring("404 Not Found")))

	_, err = Load(context.Background(), LoadOptions{Path: srv.URL + "/huge.yaml", LookupEnv: vars, HTTPClient: srv.Client()})
	g.Expect(err).To(MatchError(ContainSubstring("huge.yaml: it is larger than 1 MiB, which is not a clusterctl configuration")))
}

func TestVariables(t *testing.T) {
	g := NewWithT(t)
	cfg, err := New([]byte(`
Aws_Region: file-region
ONLY_IN_FILE: file
IN_BOTH: file
COUNT: 3
ENABLED: true
RATIO: 1.50
EMPTY:
CIDRS: ["10.0.0.0/8"]
gitlab-access-token: from-file
`), env(map[string]string{"IN_BOTH": "env", "EMPTY_ENV": "", "ONLY_IN_ENV": "env", "GITLAB_ACCESS_TOKEN": "from-env"}))
	g.Expect(err).NotTo(HaveOccurred())

	tests := []struct {
		name   string
		want   string
		wantOK bool
	}{
		{"ONLY_IN_FILE", "file", true},
		{"ONLY_IN_ENV", "env", true},
		{"IN_BOTH", "env", true},
		{"AWS_REGION", "file-region", true},
		{"COUNT", "3", true},
		{"ENABLED", "true", true},
		{"RATIO", "1.5", true},
		{"EMPTY", "", true},
		{"EMPTY_ENV", "", false},
		{"CIDRS", `["10.0.0.0/8"]`, true},
		{"gitlab-access-token", "from-env", true},
		{"NOT_SET", "", false},
	}
	for _, tt := range tests {
		got, ok := cfg.Get(tt.name)
		g.Expect(ok).To(Equal(tt.wantOK), tt.name)
		g.Expect(got).To(Equal(tt.want), tt.name)
	}

	with := cfg.With(map[string]string{"IN_BOTH": "flag"})
	got, _ := with.Get("IN_BOTH")
	g.Expect(got).To(Equal("flag"))
	got, _ = cfg.Get("IN_BOTH")
	g.Expect(got).To(Equal("env"), "With does not change the original")
}

func TestProviders(t *testing.T) {
	home := t.TempDir()
	tests := []struct {
		name    string
		file    string
		vars    map[string]string
		check   func(g Gomega, cfg *Config)
		wantErr string
	}{
		{
			name: "add a provider and override a built-in",
			file: `
providers:
  - name: my-infra
    url: ${HOME}/repo/infrastructure-my-infra/latest/infrastructure-components.yaml
    type: InfrastructureProvider
  - name: aws
    url: ${CLUSTERCTL_REPOSITORY_PATH}/infrastructure-aws/v2.0.0/infrastructure-components.yaml
    type: InfrastructureProvider
  - name: "cluster-api"
    url: "https://gitlab.example.com/api/v4/projects/external-packages%2Fcluster-api/packages/generic/cluster-api/v1.2.3/core-components.yaml"
    type: "CoreProvider"
`,
			vars: map[string]string{"CLUSTERCTL_REPOSITORY_PATH": "/repos"},
			check: func(g Gomega, cfg *Config) {
				p, err := cfg.Provider("my-infra", clusterctlv1.InfrastructureProviderType)
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(p.URL).To(Equal(home + "/repo/infrastructure-my-infra/latest/infrastructure-components.yaml"))
				p, err = cfg.Provider("aws", clusterctlv1.InfrastructureProviderType)
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(p.URL).To(Equal("/repos/infrastructure-aws/v2.0.0/infrastructure-components.yaml"))
				p, err = cfg.Provider("cluster-api", clusterctlv1.CoreProviderType)
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(p.URL).To(HavePrefix("https://gitlab.example.com/"))
				g.Expect(cfg.Providers()).To(HaveLen(len(BuiltinProviders()) + 1))
			},
		},
		{
			name: "providers are sorted by type, then name",
			file: "providers:\n- {name: aaa, url: /x/addon-aaa/v1.0.0/addon-components.yaml, type: AddonProvider}\n",
			check: func(g Gomega, cfg *Config) {
				ps := cfg.Providers()
				g.Expect(ps[0].Name).To(Equal("cluster-api"))
				for i := 1; i < len(ps); i++ {
					g.Expect(ps[i-1].Less(ps[i])).To(BeTrue(), "%v before %v", ps[i-1], ps[i])
				}
			},
		},
		{
			name:    "upper case names are invalid",
			file:    "providers:\n- {name: MyInfra, url: /x, type: InfrastructureProvider}\n",
			wantErr: `providers[0]: invalid provider name "MyInfra": a lowercase RFC 1123 label`,
		},
		{
			name:    "names may not have dots",
			file:    "providers:\n- {name: my.infra, url: /x, type: InfrastructureProvider}\n",
			wantErr: `invalid provider name "my.infra"`,
		},
		{
			name:    "names are at most 63 characters",
			file:    "providers:\n- {name: " + strings.Repeat("a", 64) + ", url: /x, type: InfrastructureProvider}\n",
			wantErr: "must be no more than 63 characters",
		},
		{
			name:    "cluster-api is the core provider only",
			file:    "providers:\n- {name: cluster-api, url: /x, type: InfrastructureProvider}\n",
			wantErr: "the name cluster-api must be used with the type CoreProvider",
		},
		{
			name:    "the core provider is cluster-api",
			file:    "providers:\n- {name: my-core, url: /x, type: CoreProvider}\n",
			wantErr: "the name cluster-api must be used with the type CoreProvider",
		},
		{
			name:    "unknown type",
			file:    "providers:\n- {name: foo, url: /x, type: InfraProvider}\n",
			wantErr: `invalid type "InfraProvider": use one of CoreProvider, BootstrapProvider`,
		},
		{
			name:    "missing url",
			file:    "providers:\n- {name: foo, type: InfrastructureProvider}\n",
			wantErr: `provider "foo": the url is empty`,
		},
		{
			name:    "unknown field",
			file:    "providers:\n- {name: foo, url: /x, typ: InfrastructureProvider}\n",
			wantErr: `unknown field "typ"`,
		},
		{
			name:    "CLUSTERCTL_REPOSITORY_PATH must be set when used",
			file:    "providers:\n- {name: foo, url: '${CLUSTERCTL_REPOSITORY_PATH}/x', type: InfrastructureProvider}\n",
			wantErr: "uses ${CLUSTERCTL_REPOSITORY_PATH}, which is not set",
		},
		{
			name:    "providers must be a list",
			file:    "providers: foobar\n",
			wantErr: "providers must be a list",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			vars := map[string]string{"HOME": home}
			for k, v := range tt.vars {
				vars[k] = v
			}
			cfg, err := New([]byte(tt.file), env(vars))
			if tt.wantErr != "" {
				g.Expect(err).To(MatchError(ContainSubstring(tt.wantErr)))
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			tt.check(g, cfg)
		})
	}
}

func TestProviderNotFound(t *testing.T) {
	g := NewWithT(t)
	cfg, err := New(nil, nil)
	g.Expect(err).NotTo(HaveOccurred())
	_, err = cfg.Provider("dockr", clusterctlv1.InfrastructureProviderType)
	g.Expect(err).To(MatchError(`unknown InfrastructureProvider "dockr": run "clusterctl config repositories" to list the available providers, or add it to the providers of the clusterctl config file; did you mean "docker"?`))
	_, err = cfg.Provider("docker", clusterctlv1.BootstrapProviderType)
	g.Expect(err).To(MatchError(HavePrefix(`unknown BootstrapProvider "docker"`)))
}

// TestBuiltinProviders checks what makes each built-in provider usable: a valid entry, one per type and
// name, a URL of a GitHub release. The list itself, as `clusterctl config repositories` prints it, is the
// golden file of internal/cli/clusterctl/config/repositories.
func TestBuiltinProviders(t *testing.T) {
	g := NewWithT(t)
	ps := BuiltinProviders()
	seen := map[string]bool{}
	for _, p := range ps {
		g.Expect(ValidateProvider(p)).To(Succeed())
		key := string(p.Type) + "/" + p.Name
		g.Expect(seen[key]).To(BeFalse(), "duplicate %s", key)
		seen[key] = true
		g.Expect(p.URL).To(HavePrefix("https://github.com/"))
		g.Expect(p.URL).To(ContainSubstring("/releases/latest/"))
	}
	capstan := map[string]string{
		"CoreProvider/cluster-api":         "https://github.com/capstan-dev/capstan/releases/latest/core-components.yaml",
		"BootstrapProvider/kubeadm":        "https://github.com/capstan-dev/capstan/releases/latest/bootstrap-components.yaml",
		"ControlPlaneProvider/kubeadm":     "https://github.com/capstan-dev/capstan/releases/latest/control-plane-components.yaml",
		"InfrastructureProvider/local":     "https://github.com/capstan-dev/capstan/releases/latest/infrastructure-components.yaml",
		"InfrastructureProvider/docker":    "https://github.com/kubernetes-sigs/cluster-api/releases/latest/infrastructure-components-development.yaml",
		"InfrastructureProvider/aws":       "https://github.com/kubernetes-sigs/cluster-api-provider-aws/releases/latest/infrastructure-components.yaml",
		"RuntimeExtensionProvider/nutanix": "https://github.com/nutanix-cloud-native/cluster-api-runtime-extensions-nutanix/releases/latest/runtime-extensions-components.yaml",
	}
	for _, p := range ps {
		if want, ok := capstan[string(p.Type)+"/"+p.Name]; ok {
			g.Expect(p.URL).To(Equal(want))
		}
	}
}

func TestImageOverrides(t *testing.T) {
	cfg, err := New([]byte(`
images:
  all:
    repository: mirror.example.com/all
  cert-manager:
    tag: v1.5.3
  infrastructure-aws:
    repository: mirror.example.com/aws/
  infrastructure-aws/cluster-api-aws-controller:
    name: capa-manager
    tag: v9.9.9
`), nil)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		component, image, want string
	}{
		{"cluster-api", "registry.k8s.io/cluster-api/cluster-api-controller:v1.10.0", "mirror.example.com/all/cluster-api-controller:v1.10.0"},
		{"cert-manager", "quay.io/jetstack/cert-manager-webhook:v1.21.1", "mirror.example.com/all/cert-manager-webhook:v1.5.3"},
		{"infrastructure-aws", "registry.k8s.io/cluster-api-aws/cluster-api-aws-controller:v2.8.0", "mirror.example.com/aws/capa-manager:v9.9.9"},
		{"infrastructure-aws", "registry.k8s.io/cluster-api-aws/other:v2.8.0", "mirror.example.com/aws/other:v2.8.0"},
		{"cluster-api", "nginx", "mirror.example.com/all/nginx"},
		{"cluster-api", "registry:5000/capi/controller:v1@sha256:abc", "mirror.example.com/all/controller:v1@sha256:abc"},
		{"cert-manager", "quay.io/jetstack/cert-manager-webhook@sha256:abc", "mirror.example.com/all/cert-manager-webhook:v1.5.3"},
	}
	for _, tt := range tests {
		got, err := cfg.ImageOverrides().Alter(tt.component, tt.image)
		if err != nil {
			t.Fatalf("Alter(%q, %q): %v", tt.component, tt.image, err)
		}
		if got != tt.want {
			t.Errorf("Alter(%q, %q) = %q, want %q", tt.component, tt.image, got, tt.want)
		}
	}

	for file, wantErr := range map[string]string{
		"images: [a]\n":                        "images must be a mapping",
		"images:\n  all: x\n":                  "images[all] must be a mapping",
		"images:\n  all:\n    repo: x\n":       `unknown field "repo"`,
		"images:\n  all:\n    tag: 'v 1'\n":    "is not a valid image tag",
		"images:\n  all:\n    name: a/b\n":     "must not contain '/'",
		"images:\n  all:\n    repository: 1\n": "images[all].repository must be a string",
	} {
		if _, err := New([]byte(file), nil); err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Errorf("New(%q) error = %v, want %q", file, err, wantErr)
		}
	}
}

func TestCertManager(t *testing.T) {
	g := NewWithT(t)
	cfg, err := New(nil, env(map[string]string{"HOME": "/home/me"}))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cfg.CertManager()).To(Equal(CertManager{URL: CertManagerDefaultURL, Version: CertManagerDefaultVersion, Timeout: 10 * time.Minute}))

	cfg, err = New([]byte("cert-manager:\n  url: ${HOME}/cm/cert-manager/latest/cert-manager.yaml\n  version: v1.5.3\n  timeout: 15m\n  externallyProvisioned: true\n"),
		env(map[string]string{"HOME": "/home/me"}))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cfg.CertManager()).To(Equal(CertManager{URL: "/home/me/cm/cert-manager/latest/cert-manager.yaml", Version: "v1.5.3", Timeout: 15 * time.Minute, ExternallyProvisioned: true}))

	for file, wantErr := range map[string]string{
		"cert-manager:\n  version: latest\n":             "is not a semantic version",
		"cert-manager:\n  timeout: soon\n":               "is not a positive duration",
		"cert-manager:\n  externallyProvisioned: yes2\n": "must be true or false",
		"cert-manager:\n  urls: x\n":                     `unknown field "urls"`,
	} {
		_, err := New([]byte(file), nil)
		g.Expect(err).To(MatchError(ContainSubstring(wantErr)), file)
	}
}

func TestOverridesFolder(t *testing.T) {
	g := NewWithT(t)
	home := t.TempDir()

	cfg, err := New(nil, env(map[string]string{"HOME": home}))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cfg.OverridesFolder()).To(Equal(filepath.Join(home, ".config", "cluster-api", "overrides")))

	write(t, filepath.Join(home, ".cluster-api", "overrides", "x"), "")
	cfg, err = New(nil, env(map[string]string{"HOME": home}))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cfg.OverridesFolder()).To(Equal(filepath.Join(home, ".cluster-api", "overrides")), "the legacy folder when only it exists")

	cfg, err = New([]byte("overridesFolder: ${WORK}/overrides\n"), env(map[string]string{"HOME": home, "WORK": "/work"}))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cfg.OverridesFolder()).To(Equal("/work/overrides"))

	cfg, err = New([]byte("overridesFolder: ~/o\n"), env(map[string]string{"HOME": home}))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cfg.OverridesFolder()).To(Equal(filepath.Join(home, "o")))
}
