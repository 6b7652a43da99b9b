package root_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	clusterctlcli "github.com/capstan-dev/capstan/internal/cli/clusterctl"
	"github.com/capstan-dev/capstan/internal/cli/clusterctl/clusterctltest"
	"github.com/capstan-dev/capstan/internal/cli/iostreams"
	"github.com/capstan-dev/capstan/internal/clusterctl/repository/repositorytest"
	"github.com/capstan-dev/capstan/internal/test/golden"
)

// plugins is a PluginHandler with a fixed set of plugins that record how they were run.
type plugins struct {
	names []string
	ran   []string
}

func (p *plugins) Lookup(name string) (string, bool) {
	for _, n := range p.names {
		if n == name {
			return "/plugins/clusterctl-" + name, true
		}
	}
	return "", false
}

func (p *plugins) Execute(path string, args []string, streams iostreams.Streams) error {
	p.ran = append(p.ran, path+" "+strings.Join(args, " "))
	_, _ = streams.Out.Write([]byte("plugin output\n"))
	if strings.Contains(path, "fail") {
		return &clusterctlcli.ExitError{Code: 3}
	}
	return nil
}

func TestPlugins(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		wantRan  []string
		wantCode int
		wantOut  string
		wantErr  string
	}{
		{name: "a plugin", args: []string{"foo", "a", "--flag"}, wantRan: []string{"/plugins/clusterctl-foo a --flag"}, wantOut: "plugin output\n"},
		{name: "the longest match", args: []string{"foo", "bar", "x"}, wantRan: []string{"/plugins/clusterctl-foo-bar x"}, wantOut: "plugin output\n"},
		{name: "dashes in names", args: []string{"my-tool"}, wantRan: []string{"/plugins/clusterctl-my_tool "}, wantOut: "plugin output\n"},
		{name: "the plugin's exit code", args: []string{"fail"}, wantRan: []string{"/plugins/clusterctl-fail "}, wantCode: 3, wantOut: "plugin output\n"},
		{name: "built-in commands win", args: []string{"version", "-o", "short"}, wantOut: "v0.1.0\n"},
		{name: "an unknown command", args: []string{"xyzzy"}, wantCode: 1, wantErr: "Error: unknown command \"xyzzy\" for \"clusterctl\"\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			p := &plugins{names: []string{"foo", "foo-bar", "my_tool", "fail", "version"}}
			opts := clusterctltest.Options{Plugins: p}
			opts.Version.GitVersion = "v0.1.0"
			res := clusterctltest.Run(t, tt.args, opts)
			g.Expect(res.Code).To(Equal(tt.wantCode))
			g.Expect(p.ran).To(Equal(tt.wantRan))
			g.Expect(res.Stdout).To(Equal(tt.wantOut))
			g.Expect(res.Stderr).To(Equal(tt.wantErr))
		})
	}
}

func TestExecPlugins(t *testing.T) {
	g := NewWithT(t)
	dir := t.TempDir()
	script := filepath.Join(dir, "clusterctl-hello")
	g.Expect(os.WriteFile(script, []byte("#!/bin/sh\necho hello \"$@\"\nexit 3\n"), 0o755)).To(Succeed())
	g.Expect(os.WriteFile(filepath.Join(dir, "clusterctl-not-executable"), []byte(""), 0o644)).To(Succeed())
	p := clusterctlcli.ExecPlugins{LookupEnv: func(k string) (string, bool) { return "/nonexistent" + string(os.PathListSeparator) + dir, k == "PATH" }}

	path, ok := p.Lookup("hello")
	g.Expect(ok).To(BeTrue())
	g.Expect(path).To(Equal(script))
	_, ok = p.Lookup("not-executable")
	g.Expect(ok).To(BeFalse())

	var out strings.Builder
	err := p.Execute(path, []string{"a", "b"}, iostreams.Streams{In: strings.NewReader(""), Out: &out, ErrOut: &out})
	var exit *clusterctlcli.ExitError
	g.Expect(errors.As(err, &exit)).To(BeTrue())
	g.Expect(exit.Code).To(Equal(3))
	g.Expect(out.String()).To(Equal("hello a b\n"))
}

func TestHelp(t *testing.T) {
	g := NewWithT(t)
	res := clusterctltest.Run(t, []string{"--help"}, clusterctltest.Options{})
	g.Expect(res.Code).To(Equal(0))
	golden.Assert(t, "help.golden.txt", []byte(res.Stdout))

	res = clusterctltest.Run(t, []string{"generate", "cluster", "demo", "--nope"}, clusterctltest.Options{})
	g.Expect(res.Code).To(Equal(1))
	g.Expect(res.Stderr).To(Equal("Error: unknown flag: --nope (see 'clusterctl generate cluster --help')\n"))
}

func TestCompletion(t *testing.T) {
	for _, shell := range []string{"bash", "zsh", "fish"} {
		t.Run(shell, func(t *testing.T) {
			g := NewWithT(t)
			res := clusterctltest.Run(t, []string{"completion", shell}, clusterctltest.Options{})
			g.Expect(res.Code).To(Equal(0))
			g.Expect(res.Stdout).To(ContainSubstring("clusterctl"))
			g.Expect(len(res.Stdout)).To(BeNumerically(">", 1000))
		})
	}
	g := NewWithT(t)
	res := clusterctltest.Run(t, []string{"completion", "powershell"}, clusterctltest.Options{})
	g.Expect(res.Code).To(Equal(1))
	g.Expect(res.Stderr).To(Equal("Error: unsupported shell \"powershell\": use bash, zsh or fish\n"))
	res = clusterctltest.Run(t, []string{"completion"}, clusterctltest.Options{})
	g.Expect(res.Stderr).To(Equal("Error: name the shell: bash, zsh or fish\n"))
}

func TestVerbosity(t *testing.T) {
	// An override of the cluster template makes clusterctl log at level 1.
	home := t.TempDir()
	template := clusterctltest.ReadRepositoryFile(t, "infrastructure-docker/v1.10.10/cluster-template.yaml")
	override := filepath.Join(home, ".config", "cluster-api", "overrides", "infrastructure-docker", "v1.10.10", "cluster-template.yaml")
	if err := os.MkdirAll(filepath.Dir(override), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(override, template, 0o600); err != nil {
		t.Fatal(err)
	}
	args := []string{"--config", clusterctltest.ConfigPath(t), "generate", "cluster", "demo", "-i", "docker", "--kubernetes-version", "v1.31.0"}
	tests := []struct {
		name    string
		args    []string
		env     map[string]string
		wantLog bool
	}{
		{name: "quiet by default", args: args},
		{name: "-v", args: append([]string{"-v", "1"}, args...), wantLog: true},
		{name: "--v=2", args: append([]string{"--v=2"}, args...), wantLog: true},
		{name: "CLUSTERCTL_LOG_LEVEL", args: args, env: map[string]string{"CLUSTERCTL_LOG_LEVEL": "1"}, wantLog: true},
		{name: "-v overrides CLUSTERCTL_LOG_LEVEL", args: append([]string{"-v", "0"}, args...), env: map[string]string{"CLUSTERCTL_LOG_LEVEL": "5"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			env := map[string]string{"HOME": home}
			for k, v := range tt.env {
				env[k] = v
			}
			res := clusterctltest.Run(t, tt.args, clusterctltest.Options{Env: env})
			g.Expect(res.Code).To(Equal(0))
			if tt.wantLog {
				g.Expect(res.Stderr).To(ContainSubstring(`Using override file="` + override + `" provider="infrastructure-docker" version="v1.10.10"`))
			} else {
				g.Expect(res.Stderr).To(BeEmpty())
			}
			g.Expect(res.Stdout).To(ContainSubstring("kind: Cluster\n"), "logs do not go to stdout")
		})
	}
}

// TestHTTPLimits checks that a stalled repository server and an oversized download fail within the
// limits of --http-timeout and --http-max-response-size, with errors that say so.
func TestHTTPLimits(t *testing.T) {
	srv := repositorytest.NewServer(t)
	srv.AddRelease("example", "big", "v1.0.0", map[string][]byte{
		"infrastructure-components.yaml": []byte("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: big-system\n" + strings.Repeat("# padding\n", 1000)),
		"metadata.yaml":                  []byte("apiVersion: clusterctl.cluster.x-k8s.io/v1alpha3\nkind: Metadata\nreleaseSeries:\n- {major: 1, minor: 0, contract: v1beta1}\n"),
	})
	srv.Stall("github.com/example/slow/")
	dir := t.TempDir()
	cfg := filepath.Join(dir, "clusterctl.yaml")
	if err := os.WriteFile(cfg, []byte(`providers:
- name: slow
  url: https://github.com/example/slow/releases/latest/infrastructure-components.yaml
  type: InfrastructureProvider
- name: big
  url: https://github.com/example/big/releases/latest/infrastructure-components.yaml
  type: InfrastructureProvider
`), 0o600); err != nil {
		t.Fatal(err)
	}

	t.Run("a stalled server", func(t *testing.T) {
		g := NewWithT(t)
		start := time.Now()
		res := clusterctltest.Run(t, []string{"generate", "provider", "--config", cfg, "-i", "slow:v1.0.0", "--raw", "--http-timeout", "1s"},
			clusterctltest.Options{Server: srv})
		g.Expect(res.Code).To(Equal(1))
		g.Expect(res.Stderr).To(ContainSubstring("cannot reach https://github.com/example/slow/releases/download/v1.0.0/metadata.yaml: no complete answer within 1s"))
		// One attempt and the test's fast retries: far less than the server would hold the call.
		g.Expect(time.Since(start)).To(BeNumerically("<", 30*time.Second))
	})
	t.Run("a response over the limit", func(t *testing.T) {
		g := NewWithT(t)
		res := clusterctltest.Run(t, []string{"generate", "provider", "--config", cfg, "-i", "big:v1.0.0", "--raw", "--http-max-response-size", "1Ki"},
			clusterctltest.Options{Server: srv})
		g.Expect(res.Code).To(Equal(1))
		g.Expect(res.Stderr).To(ContainSubstring("the response of https://github.com/example/big/releases/download/v1.0.0/infrastructure-components.yaml is larger than 1Ki"))
		res = clusterctltest.Run(t, []string{"generate", "provider", "--config", cfg, "-i", "big:v1.0.0", "--raw"},
			clusterctltest.Options{Server: srv})
		g.Expect(res.Stderr).To(BeEmpty())
		g.Expect(res.Code).To(Equal(0))
	})
}
