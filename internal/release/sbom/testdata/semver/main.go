// Command semver is a small Go program with one module dependency, for the SBOM tests.
package main

import (
	"fmt"

	"github.com/blang/semver/v4"
)

func main() { fmt.Println(semver.MustParse("1.2.3")) }
