package release_test

import (
	"bytes"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"testing/fstest"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	clusterctlv1 "github.com/capstan-dev/capstan/api/clusterctl/v1alpha3"
	"github.com/capstan-dev/capstan/internal/release"
)

const pinned = "ghcr.io/capstan-dev/capstan:v0.3.0@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

func providers(t *testing.T) []release.Provider {
	t.Helper()
	ps, err := release.Providers()
	if err != nil {
		t.Fatal(err)
	}
	return ps
}

// images returns the image of every container of the Deployments of a components file.
func images(t *testing.T, components []byte) []string {
	t.Helper()
	var out []string
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(components), 4096)
	for {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); err != nil {
			break
		}
		if u.GetKind() != "Deployment" {
			continue
		}
		containers, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "containers")
		for _, c := range containers {
			out = append(out, c.(map[string]any)["image"].(string))
		}
	}
	return out
}

func TestImageReference(t *testing.T) {
	g := NewWithT(t)
	g.Expect(release.ImageReference("", "v0.1.0", "")).To(Equal("ghcr.io/capstan-dev/capstan:v0.1.0"))
	g.Expect(release.ImageReference("registry.example/capstan", "v0.1.0", "sha256:ab")).To(Equal("registry.example/capstan:v0.1.0@sha256:ab"))
}

func TestGitHubRelease(t *testing.T) {
	assets, err := release.GitHubRelease(release.GitHubReleaseOptions{
		Options: release.Options{Version: "v0.3.0", Image: pinned},
		Extra:   map[string][]byte{"capstan.spdx.json": []byte(`{}`)},
	}, providers(t)...)
	if err != nil {
		t.Fatal(err)
	}

	t.Run("one flat directory of every provider's files", func(t *testing.T) {
		g := NewWithT(t)
		var names []string
		for n := range assets {
			names = append(names, n)
		}
		sort.Strings(names)
		g.Expect(names).To(Equal([]string{
			"bootstrap-components.yaml", "capstan-operator-0.3.0.tgz", "capstan.spdx.json", "checksums.txt", "cluster-template-control-plane.yaml",
			"cluster-template-machinepool.yaml", "cluster-template.yaml", "clusterctl.yaml", "control-plane-components.yaml",
			"core-components.yaml",
			"infrastructure-components.yaml", "metadata.yaml", "operator-components.yaml",
		}))
	})

	t.Run("every Deployment runs the pinned image", func(t *testing.T) {
		g := NewWithT(t)
		for _, f := range []string{"core-components.yaml", "bootstrap-components.yaml", "control-plane-components.yaml", "infrastructure-components.yaml", "operator-components.yaml"} {
			imgs := images(t, assets[f])
			g.Expect(imgs).NotTo(BeEmpty(), f)
			g.Expect(imgs).To(HaveEach(pinned), f)
		}
		for name, data := range assets {
			g.Expect(string(data)).NotTo(ContainSubstring("capstan:VERSION"), name)
		}
	})

	t.Run("checksums.txt lists every other file", func(t *testing.T) {
		g := NewWithT(t)
		lines := strings.Split(strings.TrimSpace(string(assets["checksums.txt"])), "\n")
		g.Expect(lines).To(HaveLen(len(assets) - 1))
		g.Expect(lines).To(ContainElement(MatchRegexp(`^[0-9a-f]{64}  core-components\.yaml$`)))
	})

	t.Run("clusterctl.yaml points at the release", func(t *testing.T) {
		g := NewWithT(t)
		g.Expect(string(assets["clusterctl.yaml"])).To(ContainSubstring("url: https://github.com/capstan-dev/capstan/releases/v0.3.0/core-components.yaml\n"))
		g.Expect(string(assets["clusterctl.yaml"])).To(ContainSubstring("url: https://github.com/capstan-dev/capstan/releases/v0.3.0/infrastructure-components.yaml\n"))
	})
}

func TestGitHubReleaseRefusesConflicts(t *testing.T) {
	manifests := func(metadata string, extra ...string) fstest.MapFS {
		fs := fstest.MapFS{"metadata.yaml": {Data: []byte(metadata)}}
		for _, n := range extra {
			fs[n] = &fstest.MapFile{Data: []byte("kind: Cluster\n")}
		}
		return fs
	}
	series01 := "apiVersion: clusterctl.cluster.x-k8s.io/v1alpha3\nkind: Metadata\nreleaseSeries:\n- {major: 0, minor: 1, contract: v1beta1}\n"
	series02 := series01 + "- {major: 0, minor: 2, contract: v1beta1}\n"
	tests := []struct {
		name    string
		a, b    release.Provider
		wantErr string
	}{
		{
			name:    "metadata that disagree",
			a:       release.Provider{Name: "cluster-api", Type: clusterctlv1.CoreProviderType, Manifests: manifests(series01)},
			b:       release.Provider{Name: "kubeadm", Type: clusterctlv1.BootstrapProviderType, Manifests: manifests(series02)},
			wantErr: "the release series of bootstrap-kubeadm's metadata.yaml differ from cluster-api's: providers released together must list the same series",
		},
		{
			name:    "two providers with the same file",
			a:       release.Provider{Name: "local", Type: clusterctlv1.InfrastructureProviderType, Manifests: manifests(series01, "cluster-template.yaml")},
			b:       release.Provider{Name: "other", Type: clusterctlv1.BootstrapProviderType, Manifests: manifests(series01, "cluster-template.yaml")},
			wantErr: "infrastructure-local and bootstrap-other both publish cluster-template.yaml: a GitHub release holds one file of each name",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := release.GitHubRelease(release.GitHubReleaseOptions{Options: release.Options{Version: "v0.1.0"}}, tt.a, tt.b)
			NewWithT(t).Expect(err).To(MatchError(tt.wantErr))
		})
	}
}

func TestWriteDirectory(t *testing.T) {
	assets, err := release.GitHubRelease(release.GitHubReleaseOptions{Options: release.Options{Version: "v0.3.0"}}, providers(t)...)
	if err != nil {
		t.Fatal(err)
	}

	t.Run("written, checked, and a changed file is found", func(t *testing.T) {
		g := NewWithT(t)
		dir := filepath.Join(t.TempDir(), "release")
		g.Expect(release.WriteDirectory(dir, assets)).To(Succeed())
		g.Expect(release.VerifyChecksums(dir)).To(Succeed())

		g.Expect(os.WriteFile(filepath.Join(dir, "metadata.yaml"), []byte("changed"), 0o600)).To(Succeed())
		g.Expect(os.WriteFile(filepath.Join(dir, "extra.yaml"), []byte("added"), 0o600)).To(Succeed())
		g.Expect(release.VerifyChecksums(dir)).To(MatchError(ContainSubstring("metadata.yaml: checksum mismatch; extra.yaml: not listed")))

		// Writing again replaces the release.
		g.Expect(release.WriteDirectory(dir, assets)).To(Succeed())
		g.Expect(release.VerifyChecksums(dir)).To(Succeed())
	})

	t.Run("a directory that holds no release is left alone", func(t *testing.T) {
		g := NewWithT(t)
		dir := t.TempDir()
		g.Expect(os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("mine"), 0o600)).To(Succeed())
		g.Expect(release.WriteDirectory(dir, assets)).To(MatchError(ContainSubstring("is not empty and holds no release (checksums.txt)")))
		g.Expect(filepath.Join(dir, "notes.txt")).To(BeAnExistingFile())
	})
}
