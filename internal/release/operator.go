package release

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"fmt"
	"io/fs"
	"maps"
	"path"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/capstan-dev/capstan/charts"
	"github.com/capstan-dev/capstan/config/crd"
)

// operatorAssets are the provider operator's release assets, as upstream Cluster API Operator publishes
// them: operator-components.yaml and the Helm chart packaged as `helm package` does,
// capstan-operator-<version without v>.tgz. Both run the release's image (Options.Image, pinned by digest
// in `make release`).
func operatorAssets(o Options) (map[string][]byte, error) {
	components, err := operatorComponents(o)
	if err != nil {
		return nil, fmt.Errorf("rendering %s: %w", OperatorComponentsFile, err)
	}
	name, chart, err := OperatorChart(o)
	if err != nil {
		return nil, fmt.Errorf("packaging the operator's Helm chart: %w", err)
	}
	return map[string][]byte{OperatorComponentsFile: components, name: chart}, nil
}

var (
	chartVersionLine    = regexp.MustCompile(`(?m)^version: .*$`)
	chartAppVersionLine = regexp.MustCompile(`(?m)^appVersion: .*$`)
)

// OperatorChart packages the provider operator's Helm chart for the release o: chart version o.Version
// without its "v" (Helm's convention, as upstream's operator chart), appVersion o.Version, and the image
// values set to the release's image (repository, tag and digest of Options.Image). It returns the
// package's file name, capstan-operator-<chart version>.tgz, and its content: a gzipped tar of the
// chart's folder, as `helm package` writes it (and `helm install` reads it), the same bytes for the same
// input.
func OperatorChart(o Options) (string, []byte, error) {
	chartVersion := strings.TrimPrefix(o.Version, "v")
	repo, tag, digest := splitImage(o.image())
	files := map[string][]byte{}
	err := fs.WalkDir(charts.Operator, charts.OperatorName, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(charts.Operator, p)
		files[p] = data
		return err
	})
	if err != nil {
		return "", nil, err
	}
	chartFile := path.Join(charts.OperatorName, "Chart.yaml")
	chart := chartVersionLine.ReplaceAll(files[chartFile], []byte("version: "+chartVersion))
	files[chartFile] = chartAppVersionLine.ReplaceAll(chart, []byte("appVersion: "+o.Version))
	valuesFile := path.Join(charts.OperatorName, "values.yaml")
	values := string(files[valuesFile])
	for _, r := range []struct{ from, to string }{
		{"  repository: " + Image + "\n", "  repository: " + repo + "\n"},
		{"  tag: \"\"\n", fmt.Sprintf("  tag: %q\n", tag)},
		{"  digest: \"\"\n", fmt.Sprintf("  digest: %q\n", digest)},
	} {
		if !strings.Contains(values, r.from) {
			return "", nil, fmt.Errorf("%s has no line %q to set the release's image in", valuesFile, strings.TrimSpace(r.from))
		}
		values = strings.Replace(values, r.from, r.to, 1)
	}
	files[valuesFile] = []byte(values)
	crds, err := crd.OperatorFiles()
	if err != nil {
		return "", nil, err
	}
	for name, data := range crds {
		files[path.Join(charts.OperatorName, "crds", name)] = data
	}
	data, err := tarGzip(files)
	if err != nil {
		return "", nil, err
	}
	return fmt.Sprintf("%s-%s.tgz", charts.OperatorName, chartVersion), data, nil
}

// splitImage splits an image reference repo[:tag][@digest].
func splitImage(ref string) (repo, tag, digest string) {
	repo, digest, _ = strings.Cut(ref, "@")
	if i := strings.LastIndex(repo, ":"); i > strings.LastIndex(repo, "/") {
		repo, tag = repo[:i], repo[i+1:]
	}
	return repo, tag, digest
}

// tarGzip writes the files into a gzipped tar, in name order, with fixed times and modes.
func tarGzip(files map[string][]byte) ([]byte, error) {
	names := slices.Sorted(maps.Keys(files))
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, n := range names {
		hdr := &tar.Header{Name: n, Mode: 0o644, Size: int64(len(files[n])), ModTime: time.Unix(0, 0), Typeflag: tar.TypeReg, Format: tar.FormatPAX}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, err
		}
		if _, err := tw.Write(files[n]); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
