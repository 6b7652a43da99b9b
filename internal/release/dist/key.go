package dist

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/capstan-dev/capstan/internal/release/signature"
)

// KeyOptions say where the signing key of a build is and how it may be had.
type KeyOptions struct {
	// Path is the cosign private key file (cosign.key).
	Path string
	// PublicKeyPath is where the public key (cosign.pub) is written.
	PublicKeyPath string
	// Password decrypts the key, and encrypts a new one (COSIGN_PASSWORD). It must not be empty.
	Password []byte
	// Publishing says the build is pushed (-push): the key must exist then, as users verify the release
	// with a public key published beforehand; a key made for the occasion would prove nothing.
	Publishing bool
	// Log tells that a key was created; discarded when nil.
	Log io.Writer
}

// SigningKey loads the key of o.Path, or, for a build that is not published, creates a key pair there
// when the file does not exist; it writes the public key to o.PublicKeyPath. It refuses an empty
// password, and a missing key when publishing.
func SigningKey(o KeyOptions) (*signature.Signer, error) {
	if len(o.Password) == 0 {
		return nil, errors.New("COSIGN_PASSWORD is empty: set it to the signing key's password (a new key is encrypted with it); " +
			"a key with an empty password is as good as unencrypted, so capstan neither makes nor uses one")
	}
	data, err := os.ReadFile(o.Path)
	switch {
	case errors.Is(err, os.ErrNotExist) && o.Publishing:
		return nil, fmt.Errorf("the signing key %s does not exist: publishing (-push, IMAGE_REPO) signs with an existing key only, whose public key "+
			"users already trust; point -key (COSIGN_KEY) at it, or create one first with `cosign generate-key-pair` or a build without -push", o.Path)
	case errors.Is(err, os.ErrNotExist):
		privatePEM, _, err := signature.GenerateKeyPair(o.Password)
		if err != nil {
			return nil, err
		}
		if err := os.MkdirAll(filepath.Dir(o.Path), 0o700); err != nil {
			return nil, err
		}
		// O_EXCL: never overwrite a key that appeared meanwhile.
		f, err := os.OpenFile(o.Path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return nil, fmt.Errorf("creating the signing key: %w", err)
		}
		if _, err := f.Write(privatePEM); err != nil {
			_ = f.Close()
			return nil, fmt.Errorf("writing the signing key %s: %w", o.Path, err)
		}
		if err := f.Close(); err != nil {
			return nil, err
		}
		if o.Log != nil {
			_, _ = fmt.Fprintf(o.Log, "Generated the signing key %s (password: $COSIGN_PASSWORD) and its public key %s; keep them to sign later builds with the same key\n", o.Path, o.PublicKeyPath)
		}
		data = privatePEM
	case err != nil:
		return nil, fmt.Errorf("reading the signing key: %w", err)
	}
	signer, err := signature.LoadSigner(data, o.Password)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", o.Path, err)
	}
	publicPEM, err := signer.PublicKey()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(o.PublicKeyPath), 0o755); err != nil {
		return nil, err
	}
	return signer, os.WriteFile(o.PublicKeyPath, publicPEM, 0o644) //nolint:gosec // a public key is public
}
