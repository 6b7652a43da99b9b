// Package version implements `clusterctl version`, in upstream's formats: the default Go-syntax line,
// yaml, json and short.
package version

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	clusterctlcli "github.com/capstan-dev/capstan/internal/cli/clusterctl"
	"github.com/capstan-dev/capstan/internal/cli/iostreams"
	"github.com/capstan-dev/capstan/internal/version"
)

// Version is the document printed with -o yaml and -o json.
type Version struct {
	ClientVersion *version.Info `json:"clusterctl"`
}

// NewCommand returns the `version` command.
func NewCommand(streams iostreams.Streams, deps *clusterctlcli.Deps) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print clusterctl version",
		Long:  "Print clusterctl version: release, git commit, build date, Go version and platform.",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			info := deps.Version()
			info.Major, info.Minor = majorMinor(info.GitVersion)
			return printVersion(streams.Out, output, &info)
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "", "Output format; available options are 'yaml', 'json' and 'short'")
	return cmd
}

func printVersion(w io.Writer, output string, info *version.Info) error {
	switch output {
	case "":
		_, err := fmt.Fprintf(w, "clusterctl version: %#v\n", info)
		return err
	case "short":
		_, err := fmt.Fprintln(w, info.GitVersion)
		return err
	case "yaml":
		out, err := yaml.Marshal(Version{ClientVersion: info})
		if err != nil {
			return err
		}
		_, err = w.Write(out)
		return err
	case "json":
		out, err := json.MarshalIndent(Version{ClientVersion: info}, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintln(w, string(out))
		return err
	}
	return fmt.Errorf("invalid output format %q: use yaml, json or short", output)
}

// majorMinor returns the major and minor numbers of a version such as "v1.10.0-rc.1".
func majorMinor(v string) (string, string) {
	parts := strings.SplitN(strings.TrimPrefix(v, "v"), ".", 3)
	if len(parts) < 2 || !isNumber(parts[0]) || !isNumber(parts[1]) {
		return "", ""
	}
	return parts[0], parts[1]
}

func isNumber(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}
