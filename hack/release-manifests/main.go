// Command release-manifests writes the release artifacts of capstan's providers into a clusterctl local
// repository layout, and the provider operator's operator-components.yaml next to them:
// `go run ./hack/release-manifests -version v0.1.0 -out out/`.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/capstan-dev/capstan/internal/release"
)

func main() {
	version := flag.String("version", release.Version(), "Release version of the artifacts.")
	out := flag.String("out", "out", "Directory of the local repository.")
	flag.Parse()
	providers, err := release.Providers()
	if err == nil {
		err = release.WriteRepository(*out, *version, providers...)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "Error:", err)
		os.Exit(1)
	}
	operator, err := release.OperatorComponents(*version)
	if err == nil {
		err = os.WriteFile(filepath.Join(*out, release.OperatorComponentsFile), operator, 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "Error:", err)
		os.Exit(1)
	}
	for _, p := range providers {
		fmt.Printf("%s/%s/%s\n", *out, p.Label(), *version)
	}
	fmt.Printf("%s/%s\n", *out, release.OperatorComponentsFile)
}
