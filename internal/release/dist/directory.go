package dist

import (
	"bytes"
	"encoding/json"
	"fmt"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/capstan-dev/capstan/internal/release"
)

// DirectoryOptions describe a GitHub release directory.
type DirectoryOptions struct {
	// Dir is the directory to write.
	Dir string
	// Version is the release version.
	Version string
	// Repository is the image's repository; release.Image when empty.
	Repository string
	// Digest is the digest of the image index the manifests pin.
	Digest v1.Hash
	// SBOM is the image's SBOM, published as capstan.spdx.json.
	SBOM []byte
	// GitHubRepository is the repository ("owner/name") the release is published in.
	GitHubRepository string
}

// WriteDirectory writes the GitHub release of every capstan provider into o.Dir, with the image
// pinned by digest in every manifest.
func WriteDirectory(o DirectoryOptions) (map[string][]byte, error) {
	if o.Digest == (v1.Hash{}) {
		return nil, fmt.Errorf("no image digest to pin the manifests to")
	}
	var sbom bytes.Buffer
	if err := json.Indent(&sbom, o.SBOM, "", "  "); err != nil {
		return nil, fmt.Errorf("the SBOM is not JSON: %w", err)
	}
	providers, err := release.Providers()
	if err != nil {
		return nil, err
	}
	assets, err := release.GitHubRelease(release.GitHubReleaseOptions{
		Options: release.Options{
			Version: o.Version,
			Image:   release.ImageReference(o.Repository, o.Version, o.Digest.String()),
		},
		Repository: o.GitHubRepository,
		Extra:      map[string][]byte{SBOMFile: append(sbom.Bytes(), '\n')},
	}, providers...)
	if err != nil {
		return nil, err
	}
	return assets, release.WriteDirectory(o.Dir, assets)
}
