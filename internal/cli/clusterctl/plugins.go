package clusterctl

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/capstan-dev/capstan/internal/cli/iostreams"
)

// PluginPrefix prefixes the names of plugin executables.
const PluginPrefix = "clusterctl-"

// ExecPlugins finds plugins on PATH and runs them as child processes.
type ExecPlugins struct {
	// LookupEnv reads PATH.
	LookupEnv func(string) (string, bool)
}

// Lookup returns the path of clusterctl-<name> on PATH.
func (p ExecPlugins) Lookup(name string) (string, bool) {
	path, _ := p.LookupEnv("PATH")
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			continue
		}
		candidate := filepath.Join(dir, PluginPrefix+name)
		if fi, err := os.Stat(candidate); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return candidate, true
		}
	}
	return "", false
}

// Execute runs the plugin with the process's environment and the command's streams.
func (p ExecPlugins) Execute(path string, args []string, streams iostreams.Streams) error {
	cmd := exec.Command(path, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = streams.In, streams.Out, streams.ErrOut
	cmd.Env = os.Environ()
	err := cmd.Run()
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) {
		return &ExitError{Code: exitErr.ExitCode()}
	}
	return err
}

// FindPlugin looks for the plugin that args name, kubectl-style: the longest run of leading non-flag
// arguments, joined with '-', that names an executable clusterctl-<name>. It returns the plugin's path
// and the arguments to pass to it.
func FindPlugin(h PluginHandler, args []string) (string, []string, bool) {
	var names []string
	for _, a := range args {
		if strings.HasPrefix(a, "-") {
			break
		}
		names = append(names, strings.ReplaceAll(a, "-", "_"))
	}
	for n := len(names); n > 0; n-- {
		if path, ok := h.Lookup(strings.Join(names[:n], "-")); ok {
			return path, args[n:], true
		}
	}
	return "", nil, false
}
