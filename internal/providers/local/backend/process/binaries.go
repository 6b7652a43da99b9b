package process

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// FindBinary returns the path of the named program (kube-apiserver or etcd). It looks, in order: at
// explicit when it is set (a flag value), next to the running executable, in a bin/ directory of the
// working directory or of one of its parents, then in PATH. The error says where it looked and what to do.
func FindBinary(name, explicit string) (string, error) {
	if explicit != "" {
		if isExecutable(explicit) {
			return explicit, nil
		}
		return "", fmt.Errorf("%s not found at %s: fix the path, or run `make tools` in the capstan repository to build it into bin/", name, explicit)
	}
	var looked []string
	if exe, err := os.Executable(); err == nil {
		if resolved, err := filepath.EvalSymlinks(exe); err == nil {
			exe = resolved
		}
		p := filepath.Join(filepath.Dir(exe), name)
		if isExecutable(p) {
			return p, nil
		}
		looked = append(looked, filepath.Dir(exe))
	}
	if wd, err := os.Getwd(); err == nil {
		for dir := wd; ; {
			p := filepath.Join(dir, "bin", name)
			if isExecutable(p) {
				return p, nil
			}
			parent := filepath.Dir(dir)
			if parent == dir {
				break
			}
			dir = parent
		}
		looked = append(looked, "bin/ above "+wd)
	}
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	} else if !errors.Is(err, exec.ErrNotFound) {
		return "", fmt.Errorf("looking for %s in PATH: %w", name, err)
	}
	looked = append(looked, "PATH")
	return "", fmt.Errorf("%s not found (looked next to the capstan binary, in %v): run `make tools` in the capstan repository to build it into bin/, or pass its path with --%s-path", name, looked, name)
}

func isExecutable(p string) bool {
	info, err := os.Stat(p)
	return err == nil && !info.IsDir() && info.Mode()&0o111 != 0
}
