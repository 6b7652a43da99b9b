// Package signature signs images and attaches attestations in cosign's formats, and verifies them, so
// that `cosign verify --key cosign.pub` and `cosign verify-attestation --key cosign.pub` accept what it
// makes without capstan:
//
//   - a signature is the manifest tagged sha256-<hex>.sig (hex: the signed manifest's digest) whose
//     layers are simple-signing payloads (application/vnd.dev.cosign.simplesigning.v1+json, naming the
//     image's docker-manifest-digest) with the base64 ECDSA P-256/SHA-256 signature in the
//     dev.cosignproject.cosign/signature annotation;
//   - an attestation is the manifest tagged sha256-<hex>.att whose layers are DSSE envelopes
//     (application/vnd.dsse.envelope.v1+json) of signed in-toto statements about the image, such as its
//     SBOM.
//
// In an OCI image layout, the image, its signatures and its attestations carry cosign's "kind"
// annotations, so `cosign verify --local-image` reads the layout too. The cryptography is
// github.com/sigstore/sigstore's; keys are cosign's files (cosign.key, cosign.pub).
package signature

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
	sigstoresignature "github.com/sigstore/sigstore/pkg/signature"
	"github.com/sigstore/sigstore/pkg/signature/dsse"
	"github.com/sigstore/sigstore/pkg/signature/payload"
)

// cosign's media types, annotations and tag suffixes.
const (
	// SignatureAnnotation carries a layer's base64 signature (empty for attestations, whose signature is
	// in the envelope).
	SignatureAnnotation = "dev.cosignproject.cosign/signature"
	// SimpleSigningMediaType is the media type of a signature layer.
	SimpleSigningMediaType types.MediaType = "application/vnd.dev.cosign.simplesigning.v1+json"
	// DSSEMediaType is the media type of an attestation layer.
	DSSEMediaType types.MediaType = "application/vnd.dsse.envelope.v1+json"
	// InTotoPayloadType is the DSSE payload type of an in-toto statement.
	InTotoPayloadType = "application/vnd.in-toto+json"
	// StatementType is the in-toto statement type cosign writes.
	StatementType = "https://in-toto.io/Statement/v0.1"
	// PredicateTypeAnnotation names the predicate type of an attestation layer.
	PredicateTypeAnnotation = "predicateType"

	signatureSuffix   = "sig"
	attestationSuffix = "att"
)

// The "kind" annotations cosign gives the entries of an OCI layout it saves (`cosign save`) and reads
// (`cosign verify --local-image`).
const (
	KindAnnotation   = "kind"
	KindImageIndex   = "dev.cosignproject.cosign/imageIndex"
	KindImage        = "dev.cosignproject.cosign/image"
	KindSignatures   = "dev.cosignproject.cosign/sigs"
	KindAttestations = "dev.cosignproject.cosign/atts"
)

// SignatureTag returns the tag of the signatures of the manifest with digest d: sha256-<hex>.sig.
func SignatureTag(d v1.Hash) string { return tagFor(d, signatureSuffix) }

// AttestationTag returns the tag of the attestations of the manifest with digest d: sha256-<hex>.att.
func AttestationTag(d v1.Hash) string { return tagFor(d, attestationSuffix) }

func tagFor(d v1.Hash, suffix string) string { return d.Algorithm + "-" + d.Hex + "." + suffix }

// Signer signs with a private key.
type Signer struct {
	sv sigstoresignature.SignerVerifier
}

// Verifier verifies with a public key.
type Verifier struct {
	v sigstoresignature.Verifier
}

// Sign returns the signature manifest of the image ref (repository@digest): one simple-signing layer.
func (s *Signer) Sign(ref name.Digest) (v1.Image, error) {
	body, err := payload.Cosign{Image: ref}.MarshalJSON()
	if err != nil {
		return nil, err
	}
	sig, err := s.sv.SignMessage(bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("signing %s: %w", ref, err)
	}
	return manifestOf(static.NewLayer(body, SimpleSigningMediaType), map[string]string{
		SignatureAnnotation: base64.StdEncoding.EncodeToString(sig),
	})
}

// Statement is an in-toto statement about an image.
type Statement struct {
	Type          string          `json:"_type"`
	PredicateType string          `json:"predicateType"`
	Subject       []Subject       `json:"subject"`
	Predicate     json.RawMessage `json:"predicate"`
}

// Subject is what a statement is about.
type Subject struct {
	Name   string            `json:"name"`
	Digest map[string]string `json:"digest"`
}

// Attest returns the attestation manifest of the image ref: one DSSE envelope of an in-toto statement
// with the predicate (JSON) of predicateType, for example an SPDX document.
func (s *Signer) Attest(ref name.Digest, predicateType string, predicate []byte) (v1.Image, error) {
	if !json.Valid(predicate) {
		return nil, fmt.Errorf("the %s predicate is not JSON", predicateType)
	}
	h, err := v1.NewHash(ref.DigestStr())
	if err != nil {
		return nil, err
	}
	statement, err := json.Marshal(Statement{
		Type:          StatementType,
		PredicateType: predicateType,
		Subject:       []Subject{{Name: ref.Repository.Name(), Digest: map[string]string{h.Algorithm: h.Hex}}},
		Predicate:     predicate,
	})
	if err != nil {
		return nil, err
	}
	envelope, err := dsse.WrapSigner(s.sv, InTotoPayloadType).SignMessage(bytes.NewReader(statement))
	if err != nil {
		return nil, fmt.Errorf("signing the %s attestation of %s: %w", predicateType, ref, err)
	}
	return manifestOf(static.NewLayer(envelope, DSSEMediaType), map[string]string{
		SignatureAnnotation:     "",
		PredicateTypeAnnotation: predicateType,
	})
}

// manifestOf returns an OCI manifest of one layer, as cosign writes signatures and attestations.
func manifestOf(layer v1.Layer, annotations map[string]string) (v1.Image, error) {
	base := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	base = mutate.ConfigMediaType(base, types.OCIConfigJSON)
	return mutate.Append(base, mutate.Addendum{Layer: layer, Annotations: annotations})
}

// Verify checks that the signature manifest sigs holds a signature, made with the verifier's key, of
// the manifest with digest d. It fails when no signature verifies or when the signed payload names
// another digest (a changed image).
func (v *Verifier) Verify(d v1.Hash, sigs v1.Image) error {
	layers, err := layersOf(sigs, SimpleSigningMediaType)
	if err != nil {
		return err
	}
	var reasons []string
	for _, l := range layers {
		sig, err := base64.StdEncoding.DecodeString(l.annotations[SignatureAnnotation])
		if err != nil {
			reasons = append(reasons, "a signature is not base64")
			continue
		}
		if err := v.v.VerifySignature(bytes.NewReader(sig), bytes.NewReader(l.body)); err != nil {
			reasons = append(reasons, "a signature does not verify with the key: "+err.Error())
			continue
		}
		var p payload.Cosign
		if err := json.Unmarshal(l.body, &p); err != nil {
			reasons = append(reasons, "a signed payload is not a cosign payload: "+err.Error())
			continue
		}
		if p.Image.DigestStr() != d.String() {
			reasons = append(reasons, fmt.Sprintf("a signature is of %s, not of %s", p.Image.DigestStr(), d))
			continue
		}
		return nil
	}
	return fmt.Errorf("no valid signature of %s: %s", d, strings.Join(reasonsOrNone(reasons), "; "))
}

// VerifyAttestation checks that the attestation manifest atts holds an in-toto statement of
// predicateType about the manifest with digest d, signed with the verifier's key, and returns its
// predicate.
func (v *Verifier) VerifyAttestation(d v1.Hash, atts v1.Image, predicateType string) ([]byte, error) {
	layers, err := layersOf(atts, DSSEMediaType)
	if err != nil {
		return nil, err
	}
	var reasons []string
	for _, l := range layers {
		var decoded []byte
		verifier := dsse.WrapVerifier(v.v, dsse.WithExpectedPayloadType(InTotoPayloadType), dsse.WithDecodedPayload(&decoded))
		if err := verifier.VerifySignature(bytes.NewReader(l.body), nil); err != nil {
			reasons = append(reasons, "an attestation does not verify with the key: "+err.Error())
			continue
		}
		var st Statement
		if err := json.Unmarshal(decoded, &st); err != nil {
			reasons = append(reasons, "an attestation is not an in-toto statement: "+err.Error())
			continue
		}
		if st.PredicateType != predicateType {
			reasons = append(reasons, "an attestation is of predicate type "+st.PredicateType)
			continue
		}
		for _, s := range st.Subject {
			if s.Digest[d.Algorithm] == d.Hex {
				return st.Predicate, nil
			}
		}
		reasons = append(reasons, fmt.Sprintf("a %s attestation is about another image than %s", predicateType, d))
	}
	return nil, fmt.Errorf("no valid %s attestation of %s: %s", predicateType, d, strings.Join(reasonsOrNone(reasons), "; "))
}

func reasonsOrNone(r []string) []string {
	if len(r) == 0 {
		return []string{"there is none"}
	}
	return r
}

type layer struct {
	body        []byte
	annotations map[string]string
}

// layersOf returns the layers of mediaType of a signature or attestation manifest, with their
// annotations.
func layersOf(img v1.Image, mediaType types.MediaType) ([]layer, error) {
	m, err := img.Manifest()
	if err != nil {
		return nil, err
	}
	var out []layer
	for _, d := range m.Layers {
		if d.MediaType != mediaType {
			continue
		}
		l, err := img.LayerByDigest(d.Digest)
		if err != nil {
			return nil, err
		}
		rc, err := l.Compressed()
		if err != nil {
			return nil, err
		}
		var buf bytes.Buffer
		_, err = buf.ReadFrom(rc)
		_ = rc.Close()
		if err != nil {
			return nil, err
		}
		out = append(out, layer{body: buf.Bytes(), annotations: d.Annotations})
	}
	return out, nil
}
