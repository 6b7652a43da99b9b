// Package binaries finds the executables capstan runs as child processes — kube-apiserver,
// kube-controller-manager, etcd, and capstan itself — the same way everywhere.
package binaries

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// DirEnv names an environment variable holding a directory searched first.
const DirEnv = "CAPSTAN_BIN_DIR"

// Find returns the path of an executable. explicit, when set, is used as is. Otherwise it looks in
// $CAPSTAN_BIN_DIR, next to the running executable, in a bin/ directory in the working directory or one of
// its parents (where `make tools` builds them), and on $PATH.
func Find(name, explicit string) (string, error) {
	if explicit != "" {
		if isExecutable(explicit) {
			return explicit, nil
		}
		return "", fmt.Errorf("%s is not an executable file", explicit)
	}
	var looked []string
	try := func(dir string) string {
		if dir == "" {
			return ""
		}
		p := filepath.Join(dir, name)
		looked = append(looked, dir)
		if isExecutable(p) {
			return p
		}
		return ""
	}
	if p := try(os.Getenv(DirEnv)); p != "" {
		return p, nil
	}
	if self, err := os.Executable(); err == nil {
		if p := try(filepath.Dir(self)); p != "" {
			return p, nil
		}
	}
	if wd, err := os.Getwd(); err == nil {
		for dir := wd; ; dir = filepath.Dir(dir) {
			if p := try(filepath.Join(dir, "bin")); p != "" {
				return p, nil
			}
			if filepath.Dir(dir) == dir {
				break
			}
		}
	}
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	looked = append(looked, "$PATH")
	return "", &NotFoundError{Name: name, Looked: looked}
}

// NotFoundError says where an executable was looked for.
type NotFoundError struct {
	Name   string
	Looked []string
}

func (e *NotFoundError) Error() string {
	return fmt.Sprintf("%s not found (looked in %s): build it with `make tools` in the capstan repository, or set %s to the directory that holds it",
		e.Name, strings.Join(e.Looked, ", "), DirEnv)
}

// IsNotFound reports whether err is a NotFoundError.
func IsNotFound(err error) bool {
	var nf *NotFoundError
	return errors.As(err, &nf)
}

func isExecutable(path string) bool {
	info, err := os.Stat(path)
	return err == nil && !info.IsDir() && info.Mode()&0o111 != 0
}
