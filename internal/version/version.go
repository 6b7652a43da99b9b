// Package version reports the version of capstan's binaries, set at build time with -ldflags
// "-X github.com/capstan-dev/capstan/internal/version.version=v0.1.0 ...".
package version

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// Set with -ldflags -X at build time.
var (
	version   = ""
	gitCommit = ""
	buildDate = ""
)

// Info describes a build.
type Info struct {
	Major        string `json:"major,omitempty"`
	Minor        string `json:"minor,omitempty"`
	GitVersion   string `json:"gitVersion"`
	GitCommit    string `json:"gitCommit"`
	GitTreeState string `json:"gitTreeState,omitempty"`
	BuildDate    string `json:"buildDate"`
	GoVersion    string `json:"goVersion"`
	Compiler     string `json:"compiler"`
	Platform     string `json:"platform"`
}

// Get returns the build's version information. Without -ldflags the version is "dev" and the commit comes
// from the Go build information when available.
func Get() Info {
	info := Info{
		GitVersion: version, GitCommit: gitCommit, BuildDate: buildDate,
		GoVersion: runtime.Version(), Compiler: runtime.Compiler,
		Platform: fmt.Sprintf("%s/%s", runtime.GOOS, runtime.GOARCH),
	}
	if info.GitVersion == "" {
		info.GitVersion = "dev"
	}
	if bi, ok := debug.ReadBuildInfo(); ok && info.GitCommit == "" {
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				info.GitCommit = s.Value
			case "vcs.modified":
				if s.Value == "true" {
					info.GitTreeState = "dirty"
				} else {
					info.GitTreeState = "clean"
				}
			}
		}
	}
	return info
}

// String returns the version, for example "v0.1.0".
func (i Info) String() string { return i.GitVersion }
