package release_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	"helm.sh/helm/v4/pkg/chart/common"
	"helm.sh/helm/v4/pkg/chart/common/util"
	"helm.sh/helm/v4/pkg/chart/v2/lint"
	"helm.sh/helm/v4/pkg/chart/v2/lint/support"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	"helm.sh/helm/v4/pkg/engine"

	"github.com/capstan-dev/capstan/internal/release"
)

// TestOperatorChart: the release's chart is a package Helm loads, lints and installs, of the release's
// version, that runs the release's image by digest and holds the operator's CRDs.
func TestOperatorChart(t *testing.T) {
	g := NewWithT(t)
	name, data, err := release.OperatorChart(release.Options{Version: "v0.3.0", Image: pinned})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(name).To(Equal("capstan-operator-0.3.0.tgz"))
	_, again, err := release.OperatorChart(release.Options{Version: "v0.3.0", Image: pinned})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(again).To(Equal(data), "the same release gives the same package")

	chrt, err := loader.LoadArchive(bytes.NewReader(data))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(chrt.Metadata.Version).To(Equal("0.3.0"))
	g.Expect(chrt.Metadata.AppVersion).To(Equal("v0.3.0"))
	var crds []string
	for _, f := range chrt.CRDObjects() {
		crds = append(crds, filepath.Base(f.Filename))
	}
	g.Expect(crds).To(HaveLen(11), "the 7 kinds of operator.cluster.x-k8s.io, the proposal's 4 of management.cluster.x-k8s.io")
	g.Expect(crds).To(ContainElements("operator.cluster.x-k8s.io_infrastructureproviders.yaml", "management.cluster.x-k8s.io_infrastructureproviders.yaml"))

	rv, err := util.ToRenderValues(chrt, map[string]any{}, common.ReleaseOptions{Name: "capstan", Namespace: "capi-operator-system", IsInstall: true}, common.DefaultCapabilities)
	g.Expect(err).NotTo(HaveOccurred())
	files, err := engine.Render(chrt, rv)
	g.Expect(err).NotTo(HaveOccurred())
	deployment := files["capstan-operator/templates/deployment.yaml"]
	g.Expect(images(t, []byte(deployment))).To(Equal([]string{pinned}))
	g.Expect(files["capstan-operator/templates/webhooks.yaml"]).To(ContainSubstring("kind: ValidatingWebhookConfiguration"))

	// helm lint of the unpacked package.
	dir := t.TempDir()
	untar(t, data, dir)
	linter := lint.RunAll(filepath.Join(dir, "capstan-operator"), nil, "capi-operator-system")
	for _, m := range linter.Messages {
		if m.Severity >= support.WarningSev {
			t.Errorf("helm lint: %s", m)
		}
	}
}

// TestOperatorChartImage: without a digest, the chart runs the release's tag.
func TestOperatorChartImage(t *testing.T) {
	g := NewWithT(t)
	_, data, err := release.OperatorChart(release.Options{Version: "v0.2.0", Image: "registry.example:5000/capstan:v0.2.0"})
	g.Expect(err).NotTo(HaveOccurred())
	chrt, err := loader.LoadArchive(bytes.NewReader(data))
	g.Expect(err).NotTo(HaveOccurred())
	rv, err := util.ToRenderValues(chrt, map[string]any{}, common.ReleaseOptions{Name: "capstan", Namespace: "ns", IsInstall: true}, common.DefaultCapabilities)
	g.Expect(err).NotTo(HaveOccurred())
	files, err := engine.Render(chrt, rv)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(images(t, []byte(files["capstan-operator/templates/deployment.yaml"]))).To(Equal([]string{"registry.example:5000/capstan:v0.2.0"}))
}

func untar(t *testing.T, data []byte, dir string) {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(hdr.Name, "..") {
			t.Fatalf("unexpected path %s", hdr.Name)
		}
		p := filepath.Join(dir, hdr.Name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		content, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, content, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
