package sbom_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/capstan-dev/capstan/internal/release/sbom"
)

// program builds testdata/semver, a Go program whose one dependency is github.com/blang/semver/v4
// v4.0.0 (test binaries carry no module list).
func program(t *testing.T) string {
	t.Helper()
	build.Do(func() {
		built.path = filepath.Join(os.TempDir(), fmt.Sprintf("capstan-sbom-test-%d", os.Getpid()))
		if b, err := exec.Command("go", "build", "-o", built.path, "./testdata/semver").CombinedOutput(); err != nil {
			built.err = fmt.Errorf("go build: %w: %s", err, b)
		}
	})
	if built.err != nil {
		t.Fatal(built.err)
	}
	return built.path
}

var (
	build sync.Once
	built struct {
		path string
		err  error
	}
)

func TestMain(m *testing.M) {
	code := m.Run()
	if built.path != "" {
		_ = os.Remove(built.path)
	}
	os.Exit(code)
}

func TestBuildListsTheModulesOfTheBinary(t *testing.T) {
	g := NewWithT(t)
	platform := runtime.GOOS + "/" + runtime.GOARCH

	doc, err := sbom.Build(sbom.Options{
		Name: "ghcr.io/capstan-dev/capstan", Version: "v0.1.0", Created: time.Unix(1700000000, 0),
		Binaries: []sbom.Binary{{Platform: platform, Path: program(t)}},
	})
	g.Expect(err).NotTo(HaveOccurred())
	data, err := sbom.JSON(doc)
	g.Expect(err).NotTo(HaveOccurred())

	// What a reader of the JSON gets back.
	read, err := sbom.Read(bytes.NewReader(data))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(read.SPDXVersion).To(Equal("SPDX-2.3"))
	g.Expect(read.CreationInfo.Created).To(Equal("2023-11-14T22:13:20Z"))
	g.Expect(sbom.Modules(read, platform)).To(Equal([]string{
		"github.com/blang/semver/v4@v4.0.0",
		"stdlib@" + strings.TrimPrefix(runtime.Version(), "go"),
	}))
	g.Expect(sbom.Modules(read, "linux/s390x")).To(BeEmpty(), "no binary of that platform")

	g.Expect(string(data)).To(ContainSubstring(`"referenceLocator": "pkg:golang/github.com/blang/semver/v4@v4.0.0"`))
	g.Expect(string(data)).To(ContainSubstring(`"referenceLocator": "pkg:golang/github.com/capstan-dev/capstan@v0.1.0?goos=`))
	g.Expect(string(data)).To(ContainSubstring(`"relationshipType": "DESCRIBES"`))
}

// The same module in the binaries of two platforms is one package of the document.
func TestBuildSharesModulesAcrossPlatforms(t *testing.T) {
	g := NewWithT(t)
	bin := program(t)
	doc, err := sbom.Build(sbom.Options{
		Name: "capstan", Version: "v0.1.0",
		Binaries: []sbom.Binary{{Platform: "linux/amd64", Path: bin}, {Platform: "linux/arm64", Path: bin}},
	})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(sbom.Modules(doc, "linux/arm64")).To(Equal(sbom.Modules(doc, "linux/amd64")))
	var names []string
	for _, p := range doc.Packages {
		names = append(names, p.PackageName+"@"+p.PackageVersion)
	}
	g.Expect(names).To(ConsistOf(
		// The binary of each platform, named by its main package.
		"github.com/capstan-dev/capstan/internal/release/sbom/testdata/semver@v0.1.0",
		"github.com/capstan-dev/capstan/internal/release/sbom/testdata/semver@v0.1.0",
		"github.com/blang/semver/v4@v4.0.0", "stdlib@"+strings.TrimPrefix(runtime.Version(), "go")))
}

func TestBuildRefusesWhatIsNotAGoBinary(t *testing.T) {
	g := NewWithT(t)
	_, err := sbom.Build(sbom.Options{Name: "capstan", Version: "v0.1.0", Binaries: []sbom.Binary{{Platform: "linux/amd64", Path: "sbom_test.go"}}})
	g.Expect(err).To(MatchError(ContainSubstring("reading the Go build information of sbom_test.go")))
	_, err = sbom.Build(sbom.Options{Name: "capstan", Version: "v0.1.0"})
	g.Expect(err).To(MatchError("no binaries to describe"))
}
