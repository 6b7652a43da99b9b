package release

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"

	clusterctlv1 "github.com/capstan-dev/capstan/api/clusterctl/v1alpha3"
)

// GitHubRepository is the GitHub repository ("owner/name") whose releases carry capstan's providers.
const GitHubRepository = "capstan-dev/capstan"

// ChecksumsFile is the asset of a GitHub release that lists the SHA-256 of every other asset, in the
// format of `sha256sum` (`sha256sum -c checksums.txt` checks a downloaded release).
const ChecksumsFile = "checksums.txt"

// ClusterctlConfigFile is the asset of a GitHub release with the clusterctl configuration that points
// clusterctl at the release's providers.
const ClusterctlConfigFile = "clusterctl.yaml"

// AssetSource renders release assets besides the providers' manifests (for example a Helm chart).
type AssetSource func(o Options) (map[string][]byte, error)

// otherAssets are the sources of the GitHub release's assets that are not a provider's: the provider
// operator's operator-components.yaml and Helm chart.
var otherAssets = []AssetSource{operatorAssets}

// GitHubReleaseOptions say how a GitHub release is rendered.
type GitHubReleaseOptions struct {
	Options
	// Repository is the GitHub repository ("owner/name") the release is published in; GitHubRepository
	// when empty. The clusterctl.yaml asset points there.
	Repository string
	// Extra are more assets, for example the image's SBOM.
	Extra map[string][]byte
}

// GitHubRelease renders the assets of one GitHub release of capstan, in the layout clusterctl reads
// from `https://github.com/{owner}/{repo}/releases/{version}/{file}`: every provider's components file
// (core-components.yaml, infrastructure-components.yaml, ...), their cluster templates and ClusterClass
// files, one metadata.yaml (the providers are released together: their metadata must agree), the
// other assets, clusterctl.yaml, and checksums.txt.
func GitHubRelease(o GitHubReleaseOptions, providers ...Provider) (map[string][]byte, error) {
	if o.Repository == "" {
		o.Repository = GitHubRepository
	}
	assets := map[string][]byte{}
	owner := map[string]string{}
	add := func(from, name string, data []byte) error {
		if prev, ok := owner[name]; ok {
			return fmt.Errorf("%s and %s both publish %s: a GitHub release holds one file of each name", prev, from, name)
		}
		owner[name] = from
		assets[name] = data
		return nil
	}
	var metadata *clusterctlv1.Metadata
	for _, p := range providers {
		files, err := p.Render(o.Options)
		if err != nil {
			return nil, fmt.Errorf("rendering %s: %w", p.Label(), err)
		}
		for name, data := range files {
			if name != "metadata.yaml" {
				if err := add(p.Label(), name, data); err != nil {
					return nil, err
				}
				continue
			}
			m := &clusterctlv1.Metadata{}
			if err := yaml.Unmarshal(data, m); err != nil {
				return nil, fmt.Errorf("%s's metadata.yaml: %w", p.Label(), err)
			}
			if metadata == nil {
				metadata = m
				assets[name] = data
				continue
			}
			if !reflect.DeepEqual(metadata.ReleaseSeries, m.ReleaseSeries) {
				return nil, fmt.Errorf("the release series of %s's metadata.yaml differ from %s's: providers released together must list the same series", p.Label(), providers[0].Label())
			}
		}
	}
	for _, source := range otherAssets {
		files, err := source(o.Options)
		if err != nil {
			return nil, err
		}
		for name, data := range files {
			if err := add("another asset", name, data); err != nil {
				return nil, err
			}
		}
	}
	for name, data := range o.Extra {
		if err := add("an extra asset", name, data); err != nil {
			return nil, err
		}
	}
	config, err := ClusterctlConfig(fmt.Sprintf("https://github.com/%s/releases/%s", o.Repository, o.Version), providers...)
	if err != nil {
		return nil, err
	}
	if err := add("the release", ClusterctlConfigFile, config); err != nil {
		return nil, err
	}
	if err := add("the release", ChecksumsFile, Checksums(assets)); err != nil {
		return nil, err
	}
	return assets, nil
}

// ClusterctlConfig returns a clusterctl configuration whose providers entries point at the components
// files of the providers under releaseURL, for example
// https://github.com/capstan-dev/capstan/releases/v0.1.0.
func ClusterctlConfig(releaseURL string, providers ...Provider) ([]byte, error) {
	data, err := ProvidersConfig(func(p Provider) string { return strings.TrimSuffix(releaseURL, "/") + "/" + p.ComponentsFile() }, providers...)
	if err != nil {
		return nil, err
	}
	header := "# capstan's providers for clusterctl: `clusterctl init --config clusterctl.yaml --infrastructure local`,\n" +
		"# or copy the entries into ~/.config/cluster-api/clusterctl.yaml. See docs/release.md.\n"
	return append([]byte(header), data...), nil
}

// ProvidersConfig returns a clusterctl configuration of the providers entries of providers, each with the
// URL of its components file that url returns.
func ProvidersConfig(url func(Provider) string, providers ...Provider) ([]byte, error) {
	type entry struct {
		Name string `json:"name"`
		Type string `json:"type"`
		URL  string `json:"url"`
	}
	cfg := struct {
		Providers []entry `json:"providers"`
	}{}
	for _, p := range providers {
		cfg.Providers = append(cfg.Providers, entry{Name: p.Name, Type: string(p.Type), URL: url(p)})
	}
	return yaml.Marshal(cfg)
}

// Checksums returns checksums.txt of the files: "<sha256 hex>  <name>" lines in name order.
func Checksums(files map[string][]byte) []byte {
	names := make([]string, 0, len(files))
	for n := range files {
		if n != ChecksumsFile {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	var buf bytes.Buffer
	for _, n := range names {
		sum := sha256.Sum256(files[n])
		fmt.Fprintf(&buf, "%s  %s\n", hex.EncodeToString(sum[:]), n)
	}
	return buf.Bytes()
}

// WriteDirectory writes assets into dir, replacing a release written there before. It refuses a dir
// that holds other files than a release's (no checksums.txt).
func WriteDirectory(dir string, assets map[string][]byte) error {
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return err
	case len(entries) > 0:
		if _, err := os.Stat(filepath.Join(dir, ChecksumsFile)); err != nil {
			return fmt.Errorf("%s is not empty and holds no release (%s): choose another directory", dir, ChecksumsFile)
		}
		if err := os.RemoveAll(dir); err != nil {
			return err
		}
	}
	return writeFiles(dir, assets)
}

// VerifyChecksums checks every file that checksums.txt in dir lists, and that it lists every file.
func VerifyChecksums(dir string) error {
	data, err := os.ReadFile(filepath.Join(dir, ChecksumsFile))
	if err != nil {
		return err
	}
	listed := map[string]bool{ChecksumsFile: true}
	var problems []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		sum, name, ok := strings.Cut(sc.Text(), "  ")
		if !ok {
			return fmt.Errorf("%s: line %q is not \"<sha256>  <file>\"", ChecksumsFile, sc.Text())
		}
		listed[name] = true
		content, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		got := sha256.Sum256(content)
		if hex.EncodeToString(got[:]) != sum {
			problems = append(problems, name+": checksum mismatch")
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if !listed[e.Name()] {
			problems = append(problems, e.Name()+": not listed")
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("the release in %s does not match %s: %s", dir, ChecksumsFile, strings.Join(problems, "; "))
	}
	return nil
}
