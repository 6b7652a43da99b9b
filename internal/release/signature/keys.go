package signature

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"

	"github.com/secure-systems-lab/go-securesystemslib/encrypted"
	"github.com/sigstore/sigstore/pkg/cryptoutils"
	sigstoresignature "github.com/sigstore/sigstore/pkg/signature"
)

// The PEM types of cosign's encrypted private keys: cosign writes the first, and reads both.
const (
	privateKeyPEMType       = "ENCRYPTED SIGSTORE PRIVATE KEY"
	legacyPrivateKeyPEMType = "ENCRYPTED COSIGN PRIVATE KEY"
)

// GenerateKeyPair returns a new ECDSA P-256 key pair in cosign's files: the private key encrypted with
// password (PKCS #8, scrypt and NaCl secretbox, PEM "ENCRYPTED SIGSTORE PRIVATE KEY", what
// `cosign generate-key-pair` writes to cosign.key) and the public key (PKIX PEM, cosign.pub).
func GenerateKeyPair(password []byte) (privatePEM, publicPEM []byte, err error) {
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		return nil, nil, err
	}
	sealed, err := encrypted.Encrypt(der, password)
	if err != nil {
		return nil, nil, fmt.Errorf("encrypting the private key: %w", err)
	}
	publicPEM, err = cryptoutils.MarshalPublicKeyToPEM(priv.Public())
	if err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: privateKeyPEMType, Bytes: sealed}), publicPEM, nil
}

// LoadSigner reads a private key file of cosign (cosign.key, decrypted with password).
func LoadSigner(privatePEM, password []byte) (*Signer, error) {
	block, _ := pem.Decode(privatePEM)
	if block == nil {
		return nil, errors.New("the private key is not PEM: give the cosign.key written by `cosign generate-key-pair` or `make image`")
	}
	if block.Type != privateKeyPEMType && block.Type != legacyPrivateKeyPEMType {
		return nil, fmt.Errorf("the private key is a %q PEM block, not cosign's encrypted key (%q): create one with `cosign generate-key-pair` or `cosign import-key-pair`", block.Type, privateKeyPEMType)
	}
	der, err := encrypted.Decrypt(block.Bytes, password)
	if err != nil {
		return nil, fmt.Errorf("decrypting the private key (is COSIGN_PASSWORD right?): %w", err)
	}
	key, err := x509.ParsePKCS8PrivateKey(der)
	if err != nil {
		return nil, fmt.Errorf("parsing the private key: %w", err)
	}
	sv, err := sigstoresignature.LoadSignerVerifier(key, crypto.SHA256)
	if err != nil {
		return nil, fmt.Errorf("loading the private key: %w", err)
	}
	return &Signer{sv: sv}, nil
}

// LoadVerifier reads a public key file (cosign.pub, PKIX PEM).
func LoadVerifier(publicPEM []byte) (*Verifier, error) {
	pub, err := cryptoutils.UnmarshalPEMToPublicKey(publicPEM)
	if err != nil {
		return nil, fmt.Errorf("reading the public key: %w", err)
	}
	v, err := sigstoresignature.LoadVerifier(pub, crypto.SHA256)
	if err != nil {
		return nil, fmt.Errorf("loading the public key: %w", err)
	}
	return &Verifier{v: v}, nil
}

// PublicKey returns the signer's public key as PKIX PEM.
func (s *Signer) PublicKey() ([]byte, error) {
	pub, err := s.sv.PublicKey()
	if err != nil {
		return nil, err
	}
	return cryptoutils.MarshalPublicKeyToPEM(pub)
}
