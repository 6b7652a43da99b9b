package source

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterctlv1 "github.com/capstan-dev/capstan/api/clusterctl/v1alpha3"
	operatorv1 "github.com/capstan-dev/capstan/api/operator/v1alpha2"
)

// FuzzReleaseFromConfigMap checks that no ConfigMap of provider artifacts (plain, or gzip-compressed
// components) makes reading it panic, and that what it reads is what the ConfigMap holds.
func FuzzReleaseFromConfigMap(f *testing.F) {
	var zipped bytes.Buffer
	zw := gzip.NewWriter(&zipped)
	_, _ = zw.Write([]byte("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: x\n"))
	_ = zw.Close()
	f.Add("apiVersion: clusterctl.cluster.x-k8s.io/v1alpha3\nkind: Metadata\n", "apiVersion: v1\nkind: Namespace\n", []byte(nil), false)
	f.Add("kind: Metadata\n", "", zipped.Bytes(), true)
	f.Add(" ", "x", []byte("not gzip"), true)
	f.Fuzz(func(t *testing.T, metadata, components string, binary []byte, compressed bool) {
		cm := &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "infrastructure-local-v1.0.0", Labels: map[string]string{operatorv1.ConfigMapVersionLabelName: "v1.0.0"}},
			Data:       map[string]string{operatorv1.MetadataConfigMapKey: metadata, operatorv1.ComponentsConfigMapKey: components},
		}
		if compressed {
			cm.Annotations = map[string]string{operatorv1.CompressedAnnotation: operatorv1.TrueValue}
			cm.BinaryData = map[string][]byte{operatorv1.ComponentsConfigMapKey: binary}
		}
		r, err := ReleaseFromConfigMap(cm)
		if err != nil {
			return
		}
		if string(r.Metadata) != metadata || (!compressed && string(r.Components) != components) {
			t.Fatalf("the release read is not the ConfigMap's")
		}
	})
}

// registry serves one OCI artifact from memory, as a registry would: the manifest for any tag, and any
// blob by its digest.
type registry struct {
	manifest []byte
	blobs    map[string][]byte
}

func (r *registry) RoundTrip(req *http.Request) (*http.Response, error) {
	respond := func(code int, contentType string, body []byte) *http.Response {
		sum := sha256.Sum256(body)
		h := http.Header{"Content-Type": {contentType}, "Docker-Content-Digest": {"sha256:" + hex.EncodeToString(sum[:])}}
		return &http.Response{StatusCode: code, Header: h, Body: io.NopCloser(bytes.NewReader(body)), ContentLength: int64(len(body)), Request: req}
	}
	switch {
	case strings.Contains(req.URL.Path, "/manifests/"):
		return respond(http.StatusOK, "application/vnd.oci.image.manifest.v1+json", r.manifest), nil
	case strings.Contains(req.URL.Path, "/blobs/"):
		if b, ok := r.blobs[req.URL.Path[strings.LastIndex(req.URL.Path, "/")+1:]]; ok {
			return respond(http.StatusOK, "application/octet-stream", b), nil
		}
	}
	return respond(http.StatusNotFound, "application/json", []byte(`{"errors":[{"code":"NOT_FOUND"}]}`)), nil
}

func digest(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// FuzzOCIRelease checks that no OCI artifact (its manifest and its layers, which the registry's owner
// controls) makes reading a release from it panic, and that the layers read are the artifact's.
func FuzzOCIRelease(f *testing.F) {
	manifest := func(meta, comps []byte, metaTitle, compsTitle string) string {
		return fmt.Sprintf(`{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json",
"config":{"mediaType":"application/vnd.oci.empty.v1+json","digest":"%s","size":2},
"layers":[{"mediaType":"application/yaml","digest":"%s","size":%d,"annotations":{"org.opencontainers.image.title":"%s"}},
{"mediaType":"application/yaml","digest":"%s","size":%d,"annotations":{"org.opencontainers.image.title":"%s"}}]}`,
			digest([]byte("{}")), digest(meta), len(meta), metaTitle, digest(comps), len(comps), compsTitle)
	}
	meta, comps := []byte("kind: Metadata\n"), []byte("kind: Namespace\n")
	f.Add(manifest(meta, comps, "metadata.yaml", "infrastructure-components.yaml"), meta, comps)
	f.Add(manifest(meta, comps, "infrastructure-local-v1.0.0-metadata.yaml", "infrastructure-local-v1.0.0-components.yaml"), meta, comps)
	f.Add(manifest(meta, comps, "metadata.yaml", "other.yaml"), meta, comps)
	f.Add(`{"layers":[{"digest":"sha256:00","size":-1,"annotations":{"org.opencontainers.image.title":"metadata.yaml"}}]}`, meta, comps)
	f.Add(`[]`, meta, comps)
	f.Fuzz(func(t *testing.T, manifestJSON string, layerA, layerB []byte) {
		reg := &registry{manifest: []byte(manifestJSON), blobs: map[string][]byte{digest(layerA): layerA, digest(layerB): layerB, digest([]byte("{}")): []byte("{}")}}
		o, err := NewOCI(OCIOptions{Ref: "http://registry.invalid/capi/local:v1.0.0", Name: "local", Type: clusterctlv1.InfrastructureProviderType,
			HTTPClient: &http.Client{Transport: reg}})
		if err != nil {
			t.Fatal(err)
		}
		r, err := o.Release(context.Background(), "v1.0.0")
		if err != nil {
			return
		}
		for _, b := range [][]byte{r.Metadata, r.Components} {
			if !bytes.Equal(b, layerA) && !bytes.Equal(b, layerB) {
				t.Fatalf("read %q, which is no layer of the artifact", b)
			}
		}
	})
}
