// Package clusterctltest runs clusterctl command lines in tests the way the binary does (root.Main), with
// the outside world replaced: a temporary home, a fake environment, the provider repositories under
// internal/cli/clusterctl/testdata, a loopback stand-in for GitHub, the Go module proxy and GitLab, and
// optionally a management cluster in memory. Nothing reaches the network and downloads retry fast.
package clusterctltest

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	clusterctlcli "github.com/capstan-dev/capstan/internal/cli/clusterctl"
	"github.com/capstan-dev/capstan/internal/cli/clusterctl/root"
	"github.com/capstan-dev/capstan/internal/cli/iostreams"
	"github.com/capstan-dev/capstan/internal/clusterctl/client"
	"github.com/capstan-dev/capstan/internal/clusterctl/cluster"
	"github.com/capstan-dev/capstan/internal/clusterctl/repository"
	"github.com/capstan-dev/capstan/internal/clusterctl/repository/repositorytest"
	"github.com/capstan-dev/capstan/internal/version"
)

// Options change the world a command runs in.
type Options struct {
	// Env is added to the environment (HOME, a temporary folder, and CLUSTERCTL_REPOSITORY_PATH, the
	// test repositories, are set unless given).
	Env map[string]string
	// Stdin is the standard input.
	Stdin string
	// Server answers HTTP requests; a new, empty one when nil.
	Server *repositorytest.Server
	// Cluster is the management cluster; none when nil.
	Cluster client.ManagementCluster
	// Plugins finds plugins; none when nil.
	Plugins clusterctlcli.PluginHandler
	// Version is what `clusterctl version` reports.
	Version version.Info
}

// Result is what a command did.
type Result struct {
	Stdout string
	Stderr string
	Code   int
}

// Run runs clusterctl with args.
func Run(t testing.TB, args []string, o Options) Result {
	t.Helper()
	return RunMain(t, args, o, root.Main)
}

// RunMain runs main, a command's entry point such as root.Main, with args in the world of o, as Run runs
// clusterctl's (capstan's commands that work with clusterctl's library, such as `capstan adopt`, are
// tested this way).
func RunMain(t testing.TB, args []string, o Options, main func(context.Context, []string, iostreams.Streams, *clusterctlcli.Deps) int) Result {
	t.Helper()
	vars := map[string]string{"CLUSTERCTL_REPOSITORY_PATH": RepositoryPath(t)}
	for k, v := range o.Env {
		vars[k] = v
	}
	if _, ok := vars["HOME"]; !ok {
		vars["HOME"] = t.TempDir()
	}
	srv := o.Server
	if srv == nil {
		srv = repositorytest.NewServer(t)
	}
	deps := &clusterctlcli.Deps{
		LookupEnv: func(k string) (string, bool) {
			v, ok := vars[k]
			return v, ok
		},
		HTTPClient: srv.Client(),
		Retry:      repository.Retry{Interval: time.Millisecond, Timeout: 20 * time.Millisecond},
		Plugins:    o.Plugins,
		Version:    func() version.Info { return o.Version },
		Options:    clusterctlcli.GlobalOptions{Verbosity: -1},
	}
	if o.Cluster != nil {
		deps.ManagementCluster = func(cluster.Kubeconfig) client.ManagementCluster { return o.Cluster }
	}
	var stdout, stderr bytes.Buffer
	streams := iostreams.Streams{In: strings.NewReader(o.Stdin), Out: &stdout, ErrOut: &stderr}
	code := main(context.Background(), args, streams, deps)
	return Result{Stdout: stdout.String(), Stderr: stderr.String(), Code: code}
}

// testdata returns the absolute path of internal/cli/clusterctl/testdata.
func testdata(t testing.TB) string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("cannot locate the clusterctltest package")
	}
	return filepath.Join(filepath.Dir(file), "..", "testdata")
}

// RepositoryPath returns the folder of the test repositories (testdata/repository).
func RepositoryPath(t testing.TB) string { return filepath.Join(testdata(t), "repository") }

// ConfigPath returns the clusterctl.yaml of the tests (testdata/clusterctl.yaml), which points the docker,
// cluster-api and kubeadm providers and cert-manager at the test repositories.
func ConfigPath(t testing.TB) string { return filepath.Join(testdata(t), "clusterctl.yaml") }

// CopyRepository copies the test repositories to a temporary folder, applies changes (path relative to
// the repository root -> content; empty content deletes the file) and returns the folder.
func CopyRepository(t testing.TB, changes map[string]string) string {
	t.Helper()
	dst := t.TempDir()
	copyTree(t, RepositoryPath(t), dst)
	for rel, content := range changes {
		p := filepath.Join(dst, filepath.FromSlash(rel))
		if content == "" {
			if err := os.Remove(p); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := write(p, []byte(content)); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// ReadRepositoryFile returns a file of the test repositories.
func ReadRepositoryFile(t testing.TB, rel string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(RepositoryPath(t), filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// copyTree copies the files below src to the same paths below dst.
func copyTree(t testing.TB, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return write(filepath.Join(dst, rel), data)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func write(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o600)
}
