package signature_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/static"
	. "github.com/onsi/gomega"

	"github.com/capstan-dev/capstan/internal/release/signature"
)

func keys(t *testing.T, password string) (*signature.Signer, *signature.Verifier, []byte) {
	t.Helper()
	g := NewWithT(t)
	privatePEM, publicPEM, err := signature.GenerateKeyPair([]byte(password))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(string(privatePEM)).To(HavePrefix("-----BEGIN ENCRYPTED SIGSTORE PRIVATE KEY-----\n"))
	g.Expect(string(publicPEM)).To(HavePrefix("-----BEGIN PUBLIC KEY-----\n"))
	s, err := signature.LoadSigner(privatePEM, []byte(password))
	g.Expect(err).NotTo(HaveOccurred())
	v, err := signature.LoadVerifier(publicPEM)
	g.Expect(err).NotTo(HaveOccurred())
	return s, v, privatePEM
}

func randomImage(t *testing.T, size, layers int64) v1.Image {
	t.Helper()
	img, err := random.Image(size, layers)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

func digestOf(t *testing.T, img v1.Image) v1.Hash {
	t.Helper()
	d, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestSignAndVerify(t *testing.T) {
	signer, verifier, _ := keys(t, "secret")
	_, otherVerifier, _ := keys(t, "")
	img, err := random.Image(64, 1)
	if err != nil {
		t.Fatal(err)
	}
	repo, _ := name.NewRepository("ghcr.io/capstan-dev/capstan")
	d := digestOf(t, img)

	sig, err := signer.Sign(repo.Digest(d.String()))
	if err != nil {
		t.Fatal(err)
	}

	t.Run("the signature is cosign's simple signing layer", func(t *testing.T) {
		g := NewWithT(t)
		g.Expect(signature.SignatureTag(d)).To(Equal("sha256-" + d.Hex + ".sig"))
		m, err := sig.Manifest()
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(m.MediaType).To(BeEquivalentTo("application/vnd.oci.image.manifest.v1+json"))
		g.Expect(m.Layers).To(HaveLen(1))
		g.Expect(m.Layers[0].MediaType).To(BeEquivalentTo("application/vnd.dev.cosign.simplesigning.v1+json"))
		g.Expect(m.Layers[0].Annotations).To(HaveKey("dev.cosignproject.cosign/signature"))
		l, err := sig.LayerByDigest(m.Layers[0].Digest)
		g.Expect(err).NotTo(HaveOccurred())
		rc, err := l.Uncompressed()
		g.Expect(err).NotTo(HaveOccurred())
		var payload struct {
			Critical struct {
				Identity struct {
					DockerReference string `json:"docker-reference"`
				} `json:"identity"`
				Image struct {
					DockerManifestDigest string `json:"docker-manifest-digest"`
				} `json:"image"`
				Type string `json:"type"`
			} `json:"critical"`
		}
		g.Expect(json.NewDecoder(rc).Decode(&payload)).To(Succeed())
		g.Expect(payload.Critical.Type).To(Equal("cosign container image signature"))
		g.Expect(payload.Critical.Identity.DockerReference).To(Equal("ghcr.io/capstan-dev/capstan"))
		g.Expect(payload.Critical.Image.DockerManifestDigest).To(Equal(d.String()))
	})

	t.Run("it verifies with the public key", func(t *testing.T) {
		NewWithT(t).Expect(verifier.Verify(d, sig)).To(Succeed())
	})

	t.Run("it does not verify for a changed image", func(t *testing.T) {
		g := NewWithT(t)
		changed, err := mutate.Config(img, v1.Config{User: "0"})
		g.Expect(err).NotTo(HaveOccurred())
		err = verifier.Verify(digestOf(t, changed), sig)
		g.Expect(err).To(MatchError(ContainSubstring("a signature is of " + d.String() + ", not of " + digestOf(t, changed).String())))
	})

	t.Run("it does not verify with another key", func(t *testing.T) {
		err := otherVerifier.Verify(d, sig)
		NewWithT(t).Expect(err).To(MatchError(ContainSubstring("a signature does not verify with the key")))
	})

	t.Run("a payload changed after signing does not verify", func(t *testing.T) {
		g := NewWithT(t)
		m, err := sig.Manifest()
		g.Expect(err).NotTo(HaveOccurred())
		other, err := signer.Sign(repo.Digest(digestOf(t, randomImage(t, 64, 1)).String()))
		g.Expect(err).NotTo(HaveOccurred())
		om, err := other.Manifest()
		g.Expect(err).NotTo(HaveOccurred())
		// The other payload (another digest) under this signature.
		l, err := other.LayerByDigest(om.Layers[0].Digest)
		g.Expect(err).NotTo(HaveOccurred())
		body, err := l.Uncompressed()
		g.Expect(err).NotTo(HaveOccurred())
		var b bytes.Buffer
		_, _ = b.ReadFrom(body)
		forged, err := mutate.Append(randomImage(t, 1, 0), mutate.Addendum{
			Layer:       static.NewLayer(b.Bytes(), signature.SimpleSigningMediaType),
			Annotations: m.Layers[0].Annotations,
		})
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(verifier.Verify(d, forged)).To(MatchError(ContainSubstring("does not verify with the key")))
	})

	t.Run("a manifest without signatures", func(t *testing.T) {
		err := verifier.Verify(d, randomImage(t, 8, 1))
		NewWithT(t).Expect(err).To(MatchError("no valid signature of " + d.String() + ": there is none"))
	})
}

func TestAttestAndVerify(t *testing.T) {
	signer, verifier, _ := keys(t, "")
	_, otherVerifier, _ := keys(t, "")
	repo, _ := name.NewRepository("ghcr.io/capstan-dev/capstan")
	d := digestOf(t, randomImage(t, 64, 1))
	predicate := []byte(`{"spdxVersion":"SPDX-2.3","name":"capstan"}`)

	att, err := signer.Attest(repo.Digest(d.String()), "https://spdx.dev/Document", predicate)
	if err != nil {
		t.Fatal(err)
	}

	t.Run("the attestation is cosign's DSSE layer of an in-toto statement", func(t *testing.T) {
		g := NewWithT(t)
		g.Expect(signature.AttestationTag(d)).To(Equal("sha256-" + d.Hex + ".att"))
		m, err := att.Manifest()
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(m.Layers).To(HaveLen(1))
		g.Expect(m.Layers[0].MediaType).To(BeEquivalentTo("application/vnd.dsse.envelope.v1+json"))
		g.Expect(m.Layers[0].Annotations).To(Equal(map[string]string{
			"dev.cosignproject.cosign/signature": "", "predicateType": "https://spdx.dev/Document",
		}))
		l, err := att.LayerByDigest(m.Layers[0].Digest)
		g.Expect(err).NotTo(HaveOccurred())
		rc, err := l.Uncompressed()
		g.Expect(err).NotTo(HaveOccurred())
		var env struct {
			PayloadType string `json:"payloadType"`
			Payload     string `json:"payload"`
			Signatures  []struct {
				Sig string `json:"sig"`
			} `json:"signatures"`
		}
		g.Expect(json.NewDecoder(rc).Decode(&env)).To(Succeed())
		g.Expect(env.PayloadType).To(Equal("application/vnd.in-toto+json"))
		g.Expect(env.Signatures).To(HaveLen(1))
		statement, err := base64.StdEncoding.DecodeString(env.Payload)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(string(statement)).To(MatchJSON(`{
			"_type": "https://in-toto.io/Statement/v0.1",
			"predicateType": "https://spdx.dev/Document",
			"subject": [{"name": "ghcr.io/capstan-dev/capstan", "digest": {"sha256": "` + d.Hex + `"}}],
			"predicate": {"spdxVersion": "SPDX-2.3", "name": "capstan"}
		}`))
	})

	t.Run("it verifies and gives the predicate back", func(t *testing.T) {
		g := NewWithT(t)
		got, err := verifier.VerifyAttestation(d, att, "https://spdx.dev/Document")
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(got).To(MatchJSON(predicate))
	})

	t.Run("it is not about another image", func(t *testing.T) {
		other := digestOf(t, randomImage(t, 64, 1))
		_, err := verifier.VerifyAttestation(other, att, "https://spdx.dev/Document")
		NewWithT(t).Expect(err).To(MatchError(ContainSubstring("attestation is about another image than " + other.String())))
	})

	t.Run("another predicate type is not found", func(t *testing.T) {
		_, err := verifier.VerifyAttestation(d, att, "https://cyclonedx.org/bom")
		NewWithT(t).Expect(err).To(MatchError(ContainSubstring("an attestation is of predicate type https://spdx.dev/Document")))
	})

	t.Run("another key does not verify it", func(t *testing.T) {
		_, err := otherVerifier.VerifyAttestation(d, att, "https://spdx.dev/Document")
		NewWithT(t).Expect(err).To(MatchError(ContainSubstring("does not verify with the key")))
	})

	t.Run("the predicate must be JSON", func(t *testing.T) {
		_, err := signer.Attest(repo.Digest(d.String()), "https://spdx.dev/Document", []byte("SPDXVersion: SPDX-2.3"))
		NewWithT(t).Expect(err).To(MatchError("the https://spdx.dev/Document predicate is not JSON"))
	})
}

func TestKeys(t *testing.T) {
	_, _, privatePEM := keys(t, "right")
	tests := []struct {
		name     string
		key      []byte
		password string
		wantErr  string
	}{
		{name: "a wrong password", key: privatePEM, password: "wrong", wantErr: "decrypting the private key (is COSIGN_PASSWORD right?)"},
		{name: "not PEM", key: []byte("cosign"), wantErr: "the private key is not PEM"},
		{
			name:    "an unencrypted key",
			key:     []byte("-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIA==\n-----END EC PRIVATE KEY-----\n"),
			wantErr: `the private key is a "EC PRIVATE KEY" PEM block, not cosign's encrypted key`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := signature.LoadSigner(tt.key, []byte(tt.password))
			NewWithT(t).Expect(err).To(MatchError(ContainSubstring(tt.wantErr)))
		})
	}
	t.Run("a public key that is not one", func(t *testing.T) {
		_, err := signature.LoadVerifier([]byte("not a key"))
		NewWithT(t).Expect(err).To(MatchError(ContainSubstring("reading the public key")))
	})
}
