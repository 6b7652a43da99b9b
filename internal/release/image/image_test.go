package image_test

import (
	"archive/tar"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"io"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"
	. "github.com/onsi/gomega"

	"github.com/capstan-dev/capstan/internal/release/image"
)

var (
	amd64 = image.Platform{OS: "linux", Arch: "amd64"}
	arm64 = image.Platform{OS: "linux", Arch: "arm64"}
)

// build builds an image whose "binaries" are small files with the platform's name in them: the
// packaging is what is tested here; internal/release/dist runs a real one.
func build(t *testing.T) *image.Built {
	t.Helper()
	dir := t.TempDir()
	binaries := map[image.Platform]string{}
	for _, p := range []image.Platform{arm64, amd64} {
		path := filepath.Join(dir, p.Arch)
		if err := os.WriteFile(path, []byte("capstan for "+p.String()), 0o755); err != nil {
			t.Fatal(err)
		}
		binaries[p] = path
	}
	built, err := image.Build(image.Options{
		Version: "v0.1.0", Revision: "0123abc", Source: "https://github.com/capstan-dev/capstan",
		Created: time.Unix(1700000000, 0), Binaries: binaries,
	})
	if err != nil {
		t.Fatal(err)
	}
	return built
}

// files returns the files of an image's file system: name -> header and content.
func files(t *testing.T, img v1.Image) map[string]*tarEntry {
	t.Helper()
	rc := mutate.Extract(img)
	defer func() { _ = rc.Close() }()
	out := map[string]*tarEntry{}
	tr := tar.NewReader(rc)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		out[hdr.Name] = &tarEntry{hdr: hdr, data: data}
	}
}

type tarEntry struct {
	hdr  *tar.Header
	data []byte
}

func TestBuild(t *testing.T) {
	built := build(t)

	t.Run("an OCI index of both platforms with the labels as annotations", func(t *testing.T) {
		g := NewWithT(t)
		m, err := built.Index.IndexManifest()
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(m.MediaType).To(BeEquivalentTo("application/vnd.oci.image.index.v1+json"))
		var platforms []string
		for _, d := range m.Manifests {
			g.Expect(d.MediaType).To(BeEquivalentTo("application/vnd.oci.image.manifest.v1+json"))
			platforms = append(platforms, d.Platform.OS+"/"+d.Platform.Architecture)
		}
		g.Expect(platforms).To(Equal([]string{"linux/amd64", "linux/arm64"}))
		g.Expect(m.Annotations).To(HaveKeyWithValue("org.opencontainers.image.version", "v0.1.0"))
		g.Expect(m.Annotations).To(HaveKeyWithValue("org.opencontainers.image.revision", "0123abc"))
		g.Expect(m.Annotations).To(HaveKeyWithValue("org.opencontainers.image.source", "https://github.com/capstan-dev/capstan"))
	})

	t.Run("each image runs /capstan as the non-root user", func(t *testing.T) {
		for _, p := range built.Platforms {
			g := NewWithT(t)
			cfg, err := p.Image.ConfigFile()
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(cfg.OS).To(Equal("linux"))
			g.Expect(cfg.Architecture).To(Equal(p.Platform.Arch))
			g.Expect(cfg.Config.User).To(Equal("65532:65532"))
			g.Expect(cfg.Config.Entrypoint).To(Equal([]string{"/capstan"}))
			g.Expect(cfg.Config.Labels).To(HaveKeyWithValue("org.opencontainers.image.version", "v0.1.0"))
			g.Expect(cfg.Config.Labels).To(HaveKeyWithValue("org.opencontainers.image.revision", "0123abc"))
			g.Expect(cfg.Config.Labels).To(HaveKeyWithValue("org.opencontainers.image.source", "https://github.com/capstan-dev/capstan"))
			g.Expect(cfg.Created.Time.Equal(time.Unix(1700000000, 0))).To(BeTrue())
			layers, err := p.Image.Layers()
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(layers).To(HaveLen(1), "one layer on scratch")
		}
	})

	t.Run("the file system is the binary and a distroless-like base", func(t *testing.T) {
		g := NewWithT(t)
		fs := files(t, built.Platforms[1].Image)
		g.Expect(string(fs["capstan"].data)).To(Equal("capstan for linux/arm64"))
		g.Expect(fs["capstan"].hdr.Mode).To(BeEquivalentTo(0o755))
		g.Expect(string(fs["etc/passwd"].data)).To(ContainSubstring("nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n"))
		g.Expect(string(fs["etc/group"].data)).To(ContainSubstring("nonroot:x:65532:\n"))
		g.Expect(fs["home/nonroot"].hdr.Uid).To(Equal(65532))
		g.Expect(fs["tmp"].hdr.Mode).To(BeEquivalentTo(0o1777))
		g.Expect(fs).To(HaveKey("etc/nsswitch.conf"))

		pool := x509.NewCertPool()
		g.Expect(pool.AppendCertsFromPEM(fs["etc/ssl/certs/ca-certificates.crt"].data)).To(BeTrue())
		rest, n := fs["etc/ssl/certs/ca-certificates.crt"].data, 0
		for {
			var block *pem.Block
			block, rest = pem.Decode(rest)
			if block == nil {
				break
			}
			_, err := x509.ParseCertificate(block.Bytes)
			g.Expect(err).NotTo(HaveOccurred())
			n++
		}
		g.Expect(n).To(BeNumerically(">", 100), "the Mozilla roots")
	})

	t.Run("the same inputs give the same digest", func(t *testing.T) {
		g := NewWithT(t)
		a, err := built.Index.Digest()
		g.Expect(err).NotTo(HaveOccurred())
		b, err := build(t).Index.Digest()
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(a).To(Equal(b))
	})
}

func TestBuildRefusesNoBinaries(t *testing.T) {
	_, err := image.Build(image.Options{Version: "v0.1.0"})
	NewWithT(t).Expect(err).To(MatchError("no binaries to build an image from"))
}

func TestParsePlatforms(t *testing.T) {
	g := NewWithT(t)
	ps, err := image.ParsePlatforms("linux/amd64, linux/arm64")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(ps).To(Equal([]image.Platform{amd64, arm64}))
	for _, bad := range []string{"linux", "linux/arm/v7", "/amd64", ""} {
		_, err := image.ParsePlatforms(bad)
		g.Expect(err).To(MatchError(ContainSubstring("is not of the form os/arch")), bad)
	}
}

func TestLayout(t *testing.T) {
	built := build(t)
	sig, err := random.Image(16, 1)
	if err != nil {
		t.Fatal(err)
	}
	entries := []image.Entry{
		{Tag: "v0.1.0", Index: built.Index, Annotations: map[string]string{"kind": "dev.cosignproject.cosign/imageIndex"}},
		{Tag: "sha256-abc.sig", Image: sig},
	}

	t.Run("written and read back", func(t *testing.T) {
		g := NewWithT(t)
		dir := filepath.Join(t.TempDir(), "image")
		g.Expect(image.WriteLayout(dir, entries...)).To(Succeed())
		g.Expect(filepath.Join(dir, "oci-layout")).To(BeAnExistingFile())
		read, err := image.ReadLayout(dir)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(read).To(HaveLen(2))
		idx, err := image.Entries(read).Get("v0.1.0")
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(idx.Annotations).To(HaveKeyWithValue("kind", "dev.cosignproject.cosign/imageIndex"))
		g.Expect(idx.Digest()).To(Equal(must(built.Index.Digest())))
		amd, err := image.PlatformOf(idx.Index, amd64)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(string(files(t, amd)["capstan"].data)).To(Equal("capstan for linux/amd64"))
		_, err = image.PlatformOf(idx.Index, image.Platform{OS: "linux", Arch: "s390x"})
		g.Expect(err).To(MatchError("the image has no linux/s390x platform"))
		_, err = image.Entries(read).Get("v0.2.0")
		g.Expect(err).To(MatchError(image.ErrNotFound))

		// Writing again replaces the layout.
		g.Expect(image.WriteLayout(dir, entries[0])).To(Succeed())
		read, err = image.ReadLayout(dir)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(read).To(HaveLen(1))
	})

	t.Run("a directory that is not a layout is left alone", func(t *testing.T) {
		g := NewWithT(t)
		dir := t.TempDir()
		g.Expect(os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("mine"), 0o600)).To(Succeed())
		g.Expect(image.WriteLayout(dir, entries...)).To(MatchError(ContainSubstring("is not empty and not an OCI image layout")))
		g.Expect(filepath.Join(dir, "notes.txt")).To(BeAnExistingFile())
		_, err := image.ReadLayout(dir)
		g.Expect(err).To(MatchError(ContainSubstring("is not an OCI image layout (run `make image` first)")))
	})

	t.Run("pushed to a registry under the entries' tags", func(t *testing.T) {
		g := NewWithT(t)
		srv := httptest.NewServer(registry.New())
		t.Cleanup(srv.Close)
		u, _ := url.Parse(srv.URL)
		repo := u.Host + "/capstan-dev/capstan"
		g.Expect(image.Push(t.Context(), repo, entries)).To(Succeed())

		r, err := name.NewRepository(repo)
		g.Expect(err).NotTo(HaveOccurred())
		remote := image.Remote{Repository: r}
		idx, err := remote.Get("v0.1.0")
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(idx.Index).NotTo(BeNil())
		g.Expect(idx.Digest()).To(Equal(must(built.Index.Digest())))
		s, err := remote.Get("sha256-abc.sig")
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(s.Digest()).To(Equal(must(sig.Digest())))
		_, err = remote.Get("v0.2.0")
		g.Expect(err).To(MatchError(image.ErrNotFound))
	})
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
