// Command release-manifests writes the release artifacts of capstan's providers into a clusterctl local
// repository layout: `go run ./hack/release-manifests -version v0.1.0 -out out/`.
package main

import (
	"flag"
	"fmt"
	"os"

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
	for _, p := range providers {
		fmt.Printf("%s/%s/%s\n", *out, p.Label(), *version)
	}
}
