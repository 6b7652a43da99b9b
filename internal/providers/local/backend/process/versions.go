package process

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/blang/semver/v4"
)

// apiServerBinaries finds the kube-apiserver of a Machine's minor version: the default one
// (Options.KubeAPIServerPath) when its minor matches, else a kube-apiserver-v1.<minor> next to it (as
// `make tools` builds them), else the default one, reported as a fallback.
type apiServerBinaries struct {
	defaultPath string

	mu       sync.Mutex
	versions map[string]string // path -> version ("v1.37.1"), "" when it cannot tell
}

// choice is the kube-apiserver a machine runs.
type choice struct {
	Path, Version string
	// Fallback says why the binary is not of the Machine's minor; empty when it is.
	Fallback string
}

func (b *apiServerBinaries) forVersion(want string) choice {
	def := choice{Path: b.defaultPath, Version: b.version(b.defaultPath)}
	wanted, err := semver.ParseTolerant(want)
	if want == "" || err != nil {
		return def
	}
	if v, err := semver.ParseTolerant(def.Version); err == nil && v.Major == wanted.Major && v.Minor == wanted.Minor {
		return def
	}
	candidate := filepath.Join(filepath.Dir(b.defaultPath), fmt.Sprintf("kube-apiserver-v%d.%d", wanted.Major, wanted.Minor))
	if info, err := os.Stat(candidate); err == nil && info.Mode()&0o111 != 0 {
		return choice{Path: candidate, Version: b.version(candidate)}
	}
	def.Fallback = fmt.Sprintf("No kube-apiserver v%d.%d is available (looked for %s): the API server runs %s",
		wanted.Major, wanted.Minor, candidate, orUnknown(def.Version))
	return def
}

func orUnknown(v string) string {
	if v == "" {
		return "an unknown version"
	}
	return v
}

// version returns a binary's version from `--version` ("Kubernetes v1.37.1"), remembered per path.
func (b *apiServerBinaries) version(path string) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if v, ok := b.versions[path]; ok {
		return v
	}
	if b.versions == nil {
		b.versions = map[string]string{}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, path, "--version").Output()
	v := ""
	if err == nil {
		fields := strings.Fields(string(out))
		if len(fields) > 0 {
			v = fields[len(fields)-1]
		}
	}
	b.versions[path] = v
	return v
}
