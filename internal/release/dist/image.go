// Package dist builds capstan's release: the multi-platform container image, its SBOM and signatures in
// cosign's format, written as an OCI image layout and pushed to a registry when asked (`make image`);
// and the GitHub release directory whose manifests pin that image by digest (`make release`).
// hack/release runs it. It lives apart from package release, which capstan's binary links, so that the
// binary carries none of the image and signing libraries.
package dist

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/capstan-dev/capstan/internal/release"
	"github.com/capstan-dev/capstan/internal/release/image"
	"github.com/capstan-dev/capstan/internal/release/sbom"
	"github.com/capstan-dev/capstan/internal/release/signature"
)

// SBOMFile is the name of the image's SBOM beside the layout and in the GitHub release.
const SBOMFile = "capstan.spdx.json"

// ImageOptions describe an image build.
type ImageOptions struct {
	// Module is the directory of capstan's Go module.
	Module string
	// Version is the release version: the image's tag, its version label and the binary's version.
	Version string
	// Revision is the git commit of the source.
	Revision string
	// Created is the time of the build's files and configuration; the same inputs and time give the
	// same digests.
	Created time.Time
	// Platforms are the platforms to build.
	Platforms []image.Platform
	// Repository is the image's repository, as its signatures and SBOM name it; release.Image when empty.
	Repository string
	// Signer signs the image and its SBOM.
	Signer *signature.Signer
	// WorkDir receives the binaries.
	WorkDir string
	// Log receives progress.
	Log io.Writer
}

// Image is a built, signed image.
type Image struct {
	Built *image.Built
	// Digest is the digest of the image index.
	Digest v1.Hash
	// SBOM is the SPDX JSON document of the image's binaries.
	SBOM []byte
	// Entries are the image, its signatures and its attestations, as the OCI layout and the registry
	// hold them.
	Entries []image.Entry
}

// ldflags returns the -ldflags of the image's binary: its version information (internal/version),
// without symbol tables (the Go build information, which the SBOM reads, stays).
func (o ImageOptions) ldflags() string {
	const pkg = "github.com/capstan-dev/capstan/internal/version"
	return fmt.Sprintf("-s -w -X %s.version=%s -X %s.gitCommit=%s -X %s.buildDate=%s",
		pkg, o.Version, pkg, o.Revision, pkg, o.Created.UTC().Format(time.RFC3339))
}

// BuildImage builds the binaries of every platform, the image, its SBOM and signatures.
func BuildImage(ctx context.Context, o ImageOptions) (*Image, error) {
	if o.Repository == "" {
		o.Repository = release.Image
	}
	if o.Signer == nil {
		return nil, fmt.Errorf("no key to sign the image with")
	}
	logf := func(format string, args ...any) {
		if o.Log != nil {
			fmt.Fprintf(o.Log, format+"\n", args...)
		}
	}
	gb := image.GoBuild{Dir: o.Module, Package: "./cmd/capstan", LDFlags: o.ldflags(), OutDir: o.WorkDir}
	binaries := map[image.Platform]string{}
	var described []sbom.Binary
	for _, p := range o.Platforms {
		logf("Building capstan for %s", p)
		start := time.Now()
		path, err := gb.Build(ctx, p)
		if err != nil {
			return nil, err
		}
		logf("Built capstan for %s in %s", p, time.Since(start).Round(time.Second))
		binaries[p] = path
		described = append(described, sbom.Binary{Platform: p.String(), Path: path})
	}
	built, err := image.Build(image.Options{
		Version: o.Version, Revision: o.Revision, Source: "https://github.com/" + release.GitHubRepository,
		Created: o.Created, Binaries: binaries,
	})
	if err != nil {
		return nil, err
	}
	digest, err := built.Index.Digest()
	if err != nil {
		return nil, err
	}
	logf("Image %s:%s is %s", o.Repository, o.Version, digest)

	doc, err := sbom.Build(sbom.Options{Name: o.Repository, Version: o.Version, Created: o.Created, Binaries: described})
	if err != nil {
		return nil, err
	}
	sbomJSON, err := sbom.JSON(doc)
	if err != nil {
		return nil, err
	}

	repo, err := name.NewRepository(o.Repository)
	if err != nil {
		return nil, fmt.Errorf("image repository %q: %w", o.Repository, err)
	}
	indexSig, err := o.Signer.Sign(repo.Digest(digest.String()))
	if err != nil {
		return nil, err
	}
	atts, err := o.Signer.Attest(repo.Digest(digest.String()), sbom.PredicateType, sbomJSON)
	if err != nil {
		return nil, err
	}
	entries := []image.Entry{
		{Tag: o.Version, Index: built.Index, Annotations: map[string]string{signature.KindAnnotation: signature.KindImageIndex}},
		{Tag: signature.SignatureTag(digest), Image: indexSig, Annotations: map[string]string{signature.KindAnnotation: signature.KindSignatures}},
		{Tag: signature.AttestationTag(digest), Image: atts, Annotations: map[string]string{signature.KindAnnotation: signature.KindAttestations}},
	}
	// Each platform's image is signed too: a Pod's image resolves to one of them.
	for _, p := range built.Platforms {
		d, err := p.Image.Digest()
		if err != nil {
			return nil, err
		}
		sig, err := o.Signer.Sign(repo.Digest(d.String()))
		if err != nil {
			return nil, err
		}
		entries = append(entries, image.Entry{Tag: signature.SignatureTag(d), Image: sig})
	}
	logf("Signed the image and attached its SBOM")
	return &Image{Built: built, Digest: digest, SBOM: sbomJSON, Entries: entries}, nil
}

// Verify checks, with the verifier's key, the signatures of the image tagged version and of each of its
// platforms' images, and its SBOM attestation, in an OCI layout or a registry; it returns the image
// index's digest and the SBOM.
func Verify(src image.Source, version string, v *signature.Verifier) (v1.Hash, []byte, error) {
	idx, err := src.Get(version)
	if err != nil {
		return v1.Hash{}, nil, fmt.Errorf("the image tagged %s: %w", version, err)
	}
	if idx.Index == nil {
		return v1.Hash{}, nil, fmt.Errorf("the image tagged %s is not a multi-platform image index", version)
	}
	digest, err := idx.Index.Digest()
	if err != nil {
		return v1.Hash{}, nil, err
	}
	if err := verifySignature(src, digest, v); err != nil {
		return v1.Hash{}, nil, err
	}
	m, err := idx.Index.IndexManifest()
	if err != nil {
		return v1.Hash{}, nil, err
	}
	for _, d := range m.Manifests {
		if err := verifySignature(src, d.Digest, v); err != nil {
			return v1.Hash{}, nil, fmt.Errorf("the %s image: %w", d.Platform, err)
		}
	}
	atts, err := src.Get(signature.AttestationTag(digest))
	if err != nil {
		return v1.Hash{}, nil, fmt.Errorf("the image %s has no SBOM attestation: %w", digest, err)
	}
	if atts.Image == nil {
		return v1.Hash{}, nil, fmt.Errorf("%s is not an attestation manifest", signature.AttestationTag(digest))
	}
	doc, err := v.VerifyAttestation(digest, atts.Image, sbom.PredicateType)
	if err != nil {
		return v1.Hash{}, nil, err
	}
	return digest, doc, nil
}

func verifySignature(src image.Source, d v1.Hash, v *signature.Verifier) error {
	sig, err := src.Get(signature.SignatureTag(d))
	if err != nil {
		return fmt.Errorf("%s is not signed: %w", d, err)
	}
	if sig.Image == nil {
		return fmt.Errorf("%s is not a signature manifest", signature.SignatureTag(d))
	}
	return v.Verify(d, sig.Image)
}
