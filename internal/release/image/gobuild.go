package image

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// GoBuild cross-compiles a static Go binary with `go build` (CGO_ENABLED=0, -trimpath).
type GoBuild struct {
	// Dir is the module directory `go build` runs in.
	Dir string
	// Package is the main package, for example ./cmd/capstan.
	Package string
	// LDFlags are passed as -ldflags (the version variables).
	LDFlags string
	// OutDir receives the binaries, one per platform: <OutDir>/<os>_<arch>/<name>.
	OutDir string
}

// Build builds the binary for p and returns its path.
func (b GoBuild) Build(ctx context.Context, p Platform) (string, error) {
	out := filepath.Join(b.OutDir, p.OS+"_"+p.Arch, filepath.Base(b.Package))
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return "", err
	}
	args := []string{"build", "-trimpath", "-o", out}
	if b.LDFlags != "" {
		args = append(args, "-ldflags", b.LDFlags)
	}
	args = append(args, b.Package)
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = b.Dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+p.OS, "GOARCH="+p.Arch)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.Stdout = &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("go build %s for %s: %w: %s", b.Package, p, err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}
