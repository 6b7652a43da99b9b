package dist_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	. "github.com/onsi/gomega"

	"github.com/capstan-dev/capstan/internal/release/dist"
	"github.com/capstan-dev/capstan/internal/release/signature"
)

func TestSigningKey(t *testing.T) {
	password := []byte("s3cret")

	t.Run("a local build creates a missing key, then reuses it", func(t *testing.T) {
		g := NewWithT(t)
		dir := t.TempDir()
		o := dist.KeyOptions{Path: filepath.Join(dir, "keys", "cosign.key"), PublicKeyPath: filepath.Join(dir, "cosign.pub"), Password: password, Log: &bytes.Buffer{}}
		s1, err := dist.SigningKey(o)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(o.Log.(*bytes.Buffer).String()).To(ContainSubstring("Generated the signing key"))
		info, err := os.Stat(o.Path)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(info.Mode().Perm()).To(Equal(os.FileMode(0o600)))
		pub1, err := os.ReadFile(o.PublicKeyPath)
		g.Expect(err).NotTo(HaveOccurred())

		o.Publishing = true
		s2, err := dist.SigningKey(o)
		g.Expect(err).NotTo(HaveOccurred(), "an existing key signs a published build")
		p1, _ := s1.PublicKey()
		p2, _ := s2.PublicKey()
		g.Expect(p2).To(Equal(p1))
		g.Expect(pub1).To(Equal(p1))
	})

	t.Run("publishing never creates a key", func(t *testing.T) {
		g := NewWithT(t)
		dir := t.TempDir()
		o := dist.KeyOptions{Path: filepath.Join(dir, "cosign.key"), PublicKeyPath: filepath.Join(dir, "cosign.pub"), Password: password, Publishing: true}
		_, err := dist.SigningKey(o)
		g.Expect(err).To(MatchError(ContainSubstring("the signing key " + o.Path + " does not exist: publishing (-push, IMAGE_REPO) signs with an existing key only")))
		g.Expect(o.Path).NotTo(BeAnExistingFile())
		g.Expect(o.PublicKeyPath).NotTo(BeAnExistingFile())
	})

	t.Run("an empty password is refused", func(t *testing.T) {
		for _, publishing := range []bool{false, true} {
			g := NewWithT(t)
			dir := t.TempDir()
			// Even for a key that exists and was made with an empty password.
			privatePEM, _, err := signature.GenerateKeyPair(nil)
			g.Expect(err).NotTo(HaveOccurred())
			existing := filepath.Join(dir, "existing.key")
			g.Expect(os.WriteFile(existing, privatePEM, 0o600)).To(Succeed())
			for _, path := range []string{existing, filepath.Join(dir, "missing.key")} {
				_, err := dist.SigningKey(dist.KeyOptions{Path: path, PublicKeyPath: filepath.Join(dir, "cosign.pub"), Publishing: publishing})
				g.Expect(err).To(MatchError(ContainSubstring("COSIGN_PASSWORD is empty: set it to the signing key's password")))
			}
			g.Expect(filepath.Join(dir, "missing.key")).NotTo(BeAnExistingFile())
		}
	})

	t.Run("a wrong password says so", func(t *testing.T) {
		g := NewWithT(t)
		dir := t.TempDir()
		o := dist.KeyOptions{Path: filepath.Join(dir, "cosign.key"), PublicKeyPath: filepath.Join(dir, "cosign.pub"), Password: password}
		_, err := dist.SigningKey(o)
		g.Expect(err).NotTo(HaveOccurred())
		o.Password = []byte("wrong")
		_, err = dist.SigningKey(o)
		g.Expect(err).To(MatchError(ContainSubstring("is COSIGN_PASSWORD right?")))
	})
}
