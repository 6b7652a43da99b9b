package dist_test

import (
	"archive/tar"
	"errors"
	"io"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	. "github.com/onsi/gomega"
	"golang.org/x/mod/modfile"

	"github.com/capstan-dev/capstan/internal/release/dist"
	"github.com/capstan-dev/capstan/internal/release/image"
	"github.com/capstan-dev/capstan/internal/release/sbom"
	"github.com/capstan-dev/capstan/internal/release/signature"
	"github.com/capstan-dev/capstan/internal/test/envtest"
)

var env *envtest.Environment

func TestMain(m *testing.M) {
	envtest.SetupLogging()
	code := envtest.Run(m, envtest.Options{}, func(e *envtest.Environment) { env = e })
	if shared.dir != "" {
		_ = os.RemoveAll(shared.dir)
	}
	os.Exit(code)
}

const version = "v0.1.0"

var amd64 = image.Platform{OS: "linux", Arch: "amd64"}

// fixture is the one image build the tests share: building capstan is the expensive part, so only
// linux/amd64 is built here (`make image` builds arm64 too, with the same code).
type fixture struct {
	dir      string
	img      *dist.Image
	layout   string
	verifier *signature.Verifier
	err      error
}

var (
	once   sync.Once
	shared fixture
)

func built(t *testing.T) *fixture {
	t.Helper()
	once.Do(func() {
		shared.err = func() error {
			dir, err := os.MkdirTemp("", "capstan-dist-test-")
			if err != nil {
				return err
			}
			shared.dir = dir
			privatePEM, publicPEM, err := signature.GenerateKeyPair([]byte("test"))
			if err != nil {
				return err
			}
			signer, err := signature.LoadSigner(privatePEM, []byte("test"))
			if err != nil {
				return err
			}
			if shared.verifier, err = signature.LoadVerifier(publicPEM); err != nil {
				return err
			}
			module, err := filepath.Abs(filepath.Join("..", "..", ".."))
			if err != nil {
				return err
			}
			start := time.Now()
			shared.img, err = dist.BuildImage(t.Context(), dist.ImageOptions{
				Module: module, Version: version, Revision: "0123456789abcdef0123456789abcdef01234567",
				Created: time.Unix(1700000000, 0), Platforms: []image.Platform{amd64},
				Signer: signer, WorkDir: filepath.Join(dir, "bin"),
			})
			if err != nil {
				return err
			}
			t.Logf("Built and signed the linux/amd64 image in %s", time.Since(start).Round(time.Second))
			shared.layout = filepath.Join(dir, "image")
			return image.WriteLayout(shared.layout, shared.img.Entries...)
		}()
	})
	if shared.err != nil {
		t.Fatal(shared.err)
	}
	return &shared
}

func layoutEntries(t *testing.T, f *fixture) image.Entries {
	t.Helper()
	entries, err := image.ReadLayout(f.layout)
	if err != nil {
		t.Fatal(err)
	}
	return entries
}

func TestImage(t *testing.T) {
	f := built(t)
	entries := layoutEntries(t, f)
	idx, err := entries.Get(version)
	if err != nil {
		t.Fatal(err)
	}
	amd, err := image.PlatformOf(idx.Index, amd64)
	if err != nil {
		t.Fatal(err)
	}

	t.Run("capstan version runs from the extracted linux/amd64 file system", func(t *testing.T) {
		if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
			t.Skipf("a linux/amd64 binary does not run on %s/%s", runtime.GOOS, runtime.GOARCH)
		}
		g := NewWithT(t)
		root := t.TempDir()
		extract(t, amd, root)
		out, err := exec.Command(filepath.Join(root, "capstan"), "version").CombinedOutput()
		g.Expect(err).NotTo(HaveOccurred(), string(out))
		g.Expect(string(out)).To(MatchRegexp(`^capstan version: v0\.1\.0 \(commit 0123456789abcdef0123456789abcdef01234567, go[0-9.]+, linux/amd64\)\n$`))
		g.Expect(filepath.Join(root, "etc", "ssl", "certs", "ca-certificates.crt")).To(BeAnExistingFile())
	})

	t.Run("the image runs /capstan as 65532 and carries the OCI labels", func(t *testing.T) {
		g := NewWithT(t)
		cfg, err := amd.ConfigFile()
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(cfg.Config.User).To(Equal("65532:65532"))
		g.Expect(cfg.Config.Entrypoint).To(Equal([]string{"/capstan"}))
		g.Expect(cfg.Config.Labels).To(And(
			HaveKeyWithValue("org.opencontainers.image.source", "https://github.com/capstan-dev/capstan"),
			HaveKeyWithValue("org.opencontainers.image.revision", "0123456789abcdef0123456789abcdef01234567"),
			HaveKeyWithValue("org.opencontainers.image.version", "v0.1.0"),
		))
	})

	t.Run("the layout verifies with the public key and its SBOM lists the binary's Go modules", func(t *testing.T) {
		g := NewWithT(t)
		digest, doc, err := dist.Verify(entries, version, f.verifier)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(digest).To(Equal(f.img.Digest))
		g.Expect(doc).To(MatchJSON(f.img.SBOM))

		parsed, err := sbom.Read(strings.NewReader(string(doc)))
		g.Expect(err).NotTo(HaveOccurred())
		modules := sbom.Modules(parsed, "linux/amd64")
		required := requiredModules(t)
		for _, m := range []string{"sigs.k8s.io/controller-runtime", "k8s.io/client-go", "github.com/spf13/cobra"} {
			g.Expect(modules).To(ContainElement(m+"@"+required[m]), "a module the binary links, at the version of go.mod")
		}
		g.Expect(modules).To(ContainElement("stdlib@" + strings.TrimPrefix(runtime.Version(), "go")))
		for _, m := range []string{"github.com/onsi/gomega", "github.com/google/go-containerregistry"} {
			g.Expect(modules).NotTo(ContainElement(HavePrefix(m+"@")), "%s is in go.mod but not in the binary", m)
		}
	})

	t.Run("a changed image does not verify", func(t *testing.T) {
		g := NewWithT(t)
		changedIndex, ok := mutate.Annotations(idx.Index, map[string]string{"org.opencontainers.image.version": "v9.9.9"}).(v1.ImageIndex)
		g.Expect(ok).To(BeTrue())
		changed, err := changedIndex.Digest()
		g.Expect(err).NotTo(HaveOccurred())

		// The changed image under the tag: no signature of its digest.
		swapped := replace(entries, image.Entry{Tag: version, Index: changedIndex})
		_, _, err = dist.Verify(swapped, version, f.verifier)
		g.Expect(err).To(MatchError(ContainSubstring(changed.String() + " is not signed")))

		// The original signature presented as the changed image's: it names another digest.
		sig, err := entries.Get(signature.SignatureTag(f.img.Digest))
		g.Expect(err).NotTo(HaveOccurred())
		forged := append(swapped, image.Entry{Tag: signature.SignatureTag(changed), Image: sig.Image})
		_, _, err = dist.Verify(forged, version, f.verifier)
		g.Expect(err).To(MatchError(ContainSubstring("a signature is of " + f.img.Digest.String() + ", not of " + changed.String())))
	})

	t.Run("another key does not verify the image", func(t *testing.T) {
		g := NewWithT(t)
		_, publicPEM, err := signature.GenerateKeyPair(nil)
		g.Expect(err).NotTo(HaveOccurred())
		other, err := signature.LoadVerifier(publicPEM)
		g.Expect(err).NotTo(HaveOccurred())
		_, _, err = dist.Verify(entries, version, other)
		g.Expect(err).To(MatchError(ContainSubstring("a signature does not verify with the key")))
	})

	t.Run("pushed to a registry, it verifies there", func(t *testing.T) {
		g := NewWithT(t)
		srv := httptest.NewServer(registry.New())
		t.Cleanup(srv.Close)
		u, err := url.Parse(srv.URL)
		g.Expect(err).NotTo(HaveOccurred())
		repo := u.Host + "/capstan-dev/capstan"
		g.Expect(image.Push(t.Context(), repo, entries)).To(Succeed())
		r, err := name.NewRepository(repo)
		g.Expect(err).NotTo(HaveOccurred())
		digest, _, err := dist.Verify(image.Remote{Repository: r}, version, f.verifier)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(digest).To(Equal(f.img.Digest))
	})
}

// requiredModules returns the versions go.mod requires.
func requiredModules(t *testing.T) map[string]string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "..", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	f, err := modfile.Parse("go.mod", data, nil)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, r := range f.Require {
		out[r.Mod.Path] = r.Mod.Version
	}
	return out
}

func replace(entries image.Entries, e image.Entry) image.Entries {
	out := image.Entries{e}
	for _, x := range entries {
		if x.Tag != e.Tag {
			out = append(out, x)
		}
	}
	return out
}

// extract writes the regular files and directories of the image's file system under root.
func extract(t *testing.T, img v1.Image, root string) {
	t.Helper()
	rc := mutate.Extract(img)
	defer func() { _ = rc.Close() }()
	tr := tar.NewReader(rc)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		target := filepath.Join(root, filepath.FromSlash(hdr.Name))
		if !strings.HasPrefix(target, root+string(filepath.Separator)) {
			t.Fatalf("%s leaves the root", hdr.Name)
		}
		switch hdr.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(target, 0o755); err != nil {
				t.Fatal(err)
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
				t.Fatal(err)
			}
			w, err := os.OpenFile(target, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, os.FileMode(hdr.Mode)&0o777)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := io.Copy(w, tr); err != nil {
				t.Fatal(err)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
		}
	}
}
