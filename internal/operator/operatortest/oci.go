package operatortest

import (
	"context"
	"io"
	"log"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2"
	"oras.land/oras-go/v2/content/memory"
	"oras.land/oras-go/v2/registry/remote"
)

// Registry is an OCI registry on loopback (go-containerregistry's in-memory registry) that stops when the
// test ends.
type Registry struct {
	// Host is host:port.
	Host string
}

// NewRegistry starts a Registry.
func NewRegistry(t testing.TB) *Registry {
	t.Helper()
	srv := httptest.NewServer(registry.New(registry.Logger(nopLogger())))
	t.Cleanup(srv.Close)
	return &Registry{Host: strings.TrimPrefix(srv.URL, "http://")}
}

// Push pushes files as an OCI artifact, one layer per file titled with its name, to repository:tag.
func (r *Registry) Push(t testing.TB, repository, tag string, files map[string][]byte) {
	t.Helper()
	ctx := context.Background()
	store := memory.New()
	var layers []ocispec.Descriptor
	for name, data := range files {
		desc := ocispec.Descriptor{
			MediaType:   "application/vnd.cluster.x-k8s.io.provider.file.v1+yaml",
			Digest:      digest.FromBytes(data),
			Size:        int64(len(data)),
			Annotations: map[string]string{ocispec.AnnotationTitle: name},
		}
		if err := store.Push(ctx, desc, strings.NewReader(string(data))); err != nil {
			t.Fatal(err)
		}
		layers = append(layers, desc)
	}
	manifest, err := oras.PackManifest(ctx, store, oras.PackManifestVersion1_1, "application/vnd.cluster.x-k8s.io.provider.v1", oras.PackManifestOptions{Layers: layers})
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Tag(ctx, manifest, tag); err != nil {
		t.Fatal(err)
	}
	repo, err := remote.NewRepository(r.Host + "/" + repository)
	if err != nil {
		t.Fatal(err)
	}
	repo.PlainHTTP = true
	if _, err := oras.Copy(ctx, store, tag, repo, tag, oras.DefaultCopyOptions); err != nil {
		t.Fatal(err)
	}
}

func nopLogger() *log.Logger { return log.New(io.Discard, "", 0) }
