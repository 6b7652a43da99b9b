package image

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"os"
	"path/filepath"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
)

// Entry is a manifest of an OCI image layout's index.json, named by the tag it gets in a registry.
type Entry struct {
	// Tag is the entry's name (annotation org.opencontainers.image.ref.name) and its tag when pushed.
	Tag string
	// Exactly one of Index and Image is set.
	Index v1.ImageIndex
	Image v1.Image
	// Annotations are added to the entry's descriptor in index.json.
	Annotations map[string]string
}

// Digest returns the digest of the entry's manifest.
func (e Entry) Digest() (v1.Hash, error) {
	if e.Index != nil {
		return e.Index.Digest()
	}
	return e.Image.Digest()
}

// WriteLayout writes the entries as an OCI image layout in dir (https://github.com/opencontainers/image-spec/blob/main/image-layout.md),
// replacing the layout already there. It refuses a dir that is neither empty nor an OCI layout.
func WriteLayout(dir string, entries ...Entry) error {
	des, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return err
	case len(des) > 0:
		if _, err := os.Stat(filepath.Join(dir, "oci-layout")); err != nil {
			return fmt.Errorf("%s is not empty and not an OCI image layout: choose another directory for the image", dir)
		}
		if err := os.RemoveAll(dir); err != nil {
			return err
		}
	}
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return err
	}
	for _, e := range entries {
		annotations := map[string]string{RefName: e.Tag}
		maps.Copy(annotations, e.Annotations)
		switch {
		case e.Index != nil:
			err = p.AppendIndex(e.Index, layout.WithAnnotations(annotations))
		case e.Image != nil:
			err = p.AppendImage(e.Image, layout.WithAnnotations(annotations))
		default:
			err = fmt.Errorf("entry %s has neither an index nor an image", e.Tag)
		}
		if err != nil {
			return fmt.Errorf("writing %s to the OCI layout %s: %w", e.Tag, dir, err)
		}
	}
	return nil
}

// ReadLayout reads the entries of the OCI image layout in dir.
func ReadLayout(dir string) ([]Entry, error) {
	p, err := layout.FromPath(dir)
	if err != nil {
		return nil, fmt.Errorf("%s is not an OCI image layout (run `make image` first): %w", dir, err)
	}
	idx, err := p.ImageIndex()
	if err != nil {
		return nil, err
	}
	m, err := idx.IndexManifest()
	if err != nil {
		return nil, err
	}
	var out []Entry
	for _, d := range m.Manifests {
		e := Entry{Tag: d.Annotations[RefName], Annotations: d.Annotations}
		switch {
		case d.MediaType.IsIndex():
			e.Index, err = idx.ImageIndex(d.Digest)
		case d.MediaType.IsImage():
			e.Image, err = idx.Image(d.Digest)
		default:
			err = fmt.Errorf("entry %s of %s has media type %s, which is neither an image nor an index", d.Digest, dir, d.MediaType)
		}
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
}

// PlatformOf returns the image of platform p in an index.
func PlatformOf(idx v1.ImageIndex, p Platform) (v1.Image, error) {
	m, err := idx.IndexManifest()
	if err != nil {
		return nil, err
	}
	for _, d := range m.Manifests {
		if d.Platform != nil && d.Platform.OS == p.OS && d.Platform.Architecture == p.Arch && d.MediaType.IsImage() {
			return idx.Image(d.Digest)
		}
	}
	return nil, fmt.Errorf("the image has no %s platform", p)
}

// Push pushes every entry to the repository, each under its tag, with the credentials of the Docker
// configuration (~/.docker/config.json) unless options say otherwise.
func Push(ctx context.Context, repo string, entries []Entry, opts ...remote.Option) error {
	r, err := name.NewRepository(repo)
	if err != nil {
		return fmt.Errorf("image repository %q: %w", repo, err)
	}
	opts = append([]remote.Option{remote.WithContext(ctx), remote.WithAuthFromKeychain(authn.DefaultKeychain)}, opts...)
	for _, e := range entries {
		if e.Tag == "" {
			return fmt.Errorf("an entry of the layout has no tag (%s)", RefName)
		}
		tag := r.Tag(e.Tag)
		if e.Index != nil {
			err = remote.WriteIndex(tag, e.Index, opts...)
		} else {
			err = remote.Write(tag, e.Image, opts...)
		}
		if err != nil {
			return fmt.Errorf("pushing %s: %w", tag, err)
		}
	}
	return nil
}

// ErrNotFound is returned by a Source that has no manifest of a tag.
var ErrNotFound = errors.New("not found")

// Source finds manifests by tag: the entries of an OCI layout (Entries) or a registry repository
// (Remote).
type Source interface {
	// Get returns the manifest tagged tag, or an error wrapping ErrNotFound.
	Get(tag string) (Entry, error)
}

// Entries are the entries of an OCI layout, as a Source.
type Entries []Entry

// Get implements Source.
func (es Entries) Get(tag string) (Entry, error) {
	for _, e := range es {
		if e.Tag == tag {
			return e, nil
		}
	}
	return Entry{}, fmt.Errorf("%s: %w", tag, ErrNotFound)
}

// Remote is a registry repository, as a Source.
type Remote struct {
	Repository name.Repository
	Options    []remote.Option
}

// Get implements Source.
func (r Remote) Get(tag string) (Entry, error) {
	ref := r.Repository.Tag(tag)
	opts := append([]remote.Option{remote.WithAuthFromKeychain(authn.DefaultKeychain)}, r.Options...)
	desc, err := remote.Get(ref, opts...)
	if err != nil {
		var terr *transport.Error
		if errors.As(err, &terr) && terr.StatusCode == http.StatusNotFound {
			return Entry{}, fmt.Errorf("%s: %w", ref, ErrNotFound)
		}
		return Entry{}, fmt.Errorf("getting %s: %w", ref, err)
	}
	e := Entry{Tag: tag}
	if desc.MediaType.IsIndex() {
		e.Index, err = desc.ImageIndex()
	} else {
		e.Image, err = desc.Image()
	}
	return e, err
}
