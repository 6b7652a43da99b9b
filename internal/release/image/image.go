// Package image builds capstan's container image without a container runtime or a registry: the static
// capstan binary of each platform, cross-compiled by `go build`, in one layer on an empty (scratch) base
// together with the few files a distroless "static" image carries (passwd, group, nsswitch.conf, CA
// certificates, /tmp, the non-root user's home); the platforms' images are combined in one OCI image
// index. The image runs as 65532:65532 with /capstan as its entrypoint and carries the OCI labels source,
// revision and version. The package also writes and reads OCI image layouts and pushes them to a
// registry.
package image

import (
	"bytes"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// The OCI annotation and label keys the image carries
// (https://github.com/opencontainers/image-spec/blob/main/annotations.md).
const (
	LabelSource   = "org.opencontainers.image.source"
	LabelRevision = "org.opencontainers.image.revision"
	LabelVersion  = "org.opencontainers.image.version"
	LabelTitle    = "org.opencontainers.image.title"
	LabelCreated  = "org.opencontainers.image.created"
	// RefName is the annotation of an OCI layout's index.json entry that names it (its tag).
	RefName = "org.opencontainers.image.ref.name"
)

// Platform is an operating system and architecture, for example linux/amd64.
type Platform struct {
	OS   string
	Arch string
}

// String returns "os/arch".
func (p Platform) String() string { return p.OS + "/" + p.Arch }

// ParsePlatform parses "os/arch".
func ParsePlatform(s string) (Platform, error) {
	osName, arch, ok := strings.Cut(strings.TrimSpace(s), "/")
	if !ok || osName == "" || arch == "" || strings.Contains(arch, "/") {
		return Platform{}, fmt.Errorf("platform %q is not of the form os/arch, for example linux/amd64", s)
	}
	return Platform{OS: osName, Arch: arch}, nil
}

// ParsePlatforms parses a comma-separated list of platforms.
func ParsePlatforms(s string) ([]Platform, error) {
	var out []Platform
	for _, part := range strings.Split(s, ",") {
		p, err := ParsePlatform(part)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

// Options describe the image to build.
type Options struct {
	// Version is the version label, for example v0.1.0.
	Version string
	// Revision is the source revision (git commit) label.
	Revision string
	// Source is the URL of the source repository label.
	Source string
	// Created is the creation time in the image configuration and of every file; builds of the same
	// inputs with the same time give the same digests.
	Created time.Time
	// Binaries maps each platform of the image to its built capstan binary.
	Binaries map[Platform]string
}

// PlatformImage is the image of one platform.
type PlatformImage struct {
	Platform Platform
	Image    v1.Image
	// Binary is the file of the capstan binary the image carries.
	Binary string
}

// Built is a built multi-platform image.
type Built struct {
	// Index is the image index over the platforms' images.
	Index v1.ImageIndex
	// Platforms are the platforms' images, in the order of the index.
	Platforms []PlatformImage
}

// Labels returns the OCI labels of the image.
func (o Options) Labels() map[string]string {
	labels := map[string]string{LabelTitle: "capstan", LabelCreated: o.Created.UTC().Format(time.RFC3339)}
	for k, v := range map[string]string{LabelSource: o.Source, LabelRevision: o.Revision, LabelVersion: o.Version} {
		if v != "" {
			labels[k] = v
		}
	}
	return labels
}

// Build builds the image of every platform of o.Binaries and their index.
func Build(o Options) (*Built, error) {
	if len(o.Binaries) == 0 {
		return nil, fmt.Errorf("no binaries to build an image from")
	}
	platforms := make([]Platform, 0, len(o.Binaries))
	for p := range o.Binaries {
		platforms = append(platforms, p)
	}
	sort.Slice(platforms, func(i, j int) bool { return platforms[i].String() < platforms[j].String() })

	out := &Built{}
	var adds []mutate.IndexAddendum
	for _, p := range platforms {
		img, err := platformImage(o, p, o.Binaries[p])
		if err != nil {
			return nil, fmt.Errorf("building the %s image: %w", p, err)
		}
		out.Platforms = append(out.Platforms, PlatformImage{Platform: p, Image: img, Binary: o.Binaries[p]})
		adds = append(adds, mutate.IndexAddendum{
			Add:        img,
			Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: p.OS, Architecture: p.Arch}},
		})
	}
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	idx = mutate.AppendManifests(idx, adds...)
	annotated, ok := mutate.Annotations(idx, o.Labels()).(v1.ImageIndex)
	if !ok {
		return nil, fmt.Errorf("annotating the image index")
	}
	out.Index = annotated
	return out, nil
}

func platformImage(o Options, p Platform, binary string) (v1.Image, error) {
	files := append(baseFiles(), file{name: BinaryPath[1:], mode: 0o755, path: binary})
	tarball, err := rootfs(files, o.Created)
	if err != nil {
		return nil, err
	}
	layer, err := layerOf(tarball)
	if err != nil {
		return nil, err
	}
	created := v1.Time{Time: o.Created.UTC()}
	cfg := &v1.ConfigFile{
		Architecture: p.Arch,
		OS:           p.OS,
		Created:      created,
		Config: v1.Config{
			User:       User,
			Entrypoint: []string{BinaryPath},
			WorkingDir: "/home/nonroot",
			Env: []string{
				"PATH=/",
				"HOME=/home/nonroot",
				"SSL_CERT_FILE=" + CACertificatesPath,
			},
			Labels: o.Labels(),
		},
		RootFS: v1.RootFS{Type: "layers"},
	}
	base := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	base = mutate.ConfigMediaType(base, types.OCIConfigJSON)
	img, err := mutate.ConfigFile(base, cfg)
	if err != nil {
		return nil, err
	}
	return mutate.Append(img, mutate.Addendum{
		Layer:     layer,
		MediaType: types.OCILayer,
		History:   v1.History{Created: created, CreatedBy: "capstan image builder: " + BinaryPath + " and the base files", Comment: p.String()},
	})
}

// layerOf returns a gzip-compressed OCI layer of an uncompressed tar.
func layerOf(tar []byte) (v1.Layer, error) {
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(tar)), nil
	}, tarball.WithMediaType(types.OCILayer), tarball.WithCompressedCaching)
}
