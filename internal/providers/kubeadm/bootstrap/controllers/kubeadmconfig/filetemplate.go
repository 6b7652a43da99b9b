package kubeadmconfig

import (
	"bytes"
	"context"
	"fmt"
	"text/template"

	"github.com/blang/semver/v4"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bootstrapv1 "github.com/capstan-dev/capstan/api/bootstrap/kubeadm/v1beta1"
	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/contract"
)

// maxRenderedFileBytes bounds what one file of contentFormat Template may render to (upstream's 1 MiB).
const maxRenderedFileBytes = 1 << 20

// fileTemplateData is what a file of contentFormat Template is rendered with, upstream's names:
// .controlPlane.version, the control plane's spec.version as "v"-prefixed semver, when the Cluster's
// control plane has one; without it there is no .controlPlane (so {{ if .controlPlane }} tells).
func fileTemplateData(controlPlaneVersion string) (map[string]any, error) {
	if controlPlaneVersion == "" {
		return map[string]any{}, nil
	}
	v, err := semver.ParseTolerant(controlPlaneVersion)
	if err != nil {
		return nil, configErrorf("the control plane's version %q, for the files of contentFormat Template, is not a version: %v", controlPlaneVersion, err)
	}
	return map[string]any{"controlPlane": map[string]any{"version": "v" + v.String()}}, nil
}

// renderFileTemplates renders the content of the files of contentFormat Template (their contentFrom
// already read) with data, and clears their contentFormat. A template that does not parse or execute is a
// configError naming the file.
func renderFileTemplates(files []bootstrapv1.File, data map[string]any) ([]bootstrapv1.File, error) {
	for i := range files {
		f := &files[i]
		if f.ContentFormat != bootstrapv1.FileContentFormatTemplate {
			continue
		}
		tmpl, err := template.New(f.Path).Option("missingkey=default").Parse(f.Content)
		if err != nil {
			return nil, configErrorf("spec.files[%d] (path %s) is not a valid Go template: %v", i, f.Path, err)
		}
		var out bytes.Buffer
		if err := tmpl.Execute(&limitedWriter{w: &out, left: maxRenderedFileBytes}, data); err != nil {
			return nil, configErrorf("rendering spec.files[%d] (path %s): %v", i, f.Path, err)
		}
		f.Content, f.ContentFormat = out.String(), ""
	}
	return files, nil
}

// limitedWriter fails a write past its limit.
type limitedWriter struct {
	w    *bytes.Buffer
	left int
}

func (l *limitedWriter) Write(p []byte) (int, error) {
	if len(p) > l.left {
		return 0, fmt.Errorf("the rendered content is larger than %d bytes", maxRenderedFileBytes)
	}
	l.left -= len(p)
	return l.w.Write(p)
}

// hasFileTemplates reports whether a file of the spec has contentFormat Template.
func hasFileTemplates(files []bootstrapv1.File) bool {
	for _, f := range files {
		if f.ContentFormat == bootstrapv1.FileContentFormatTemplate {
			return true
		}
	}
	return false
}

// controlPlaneVersion returns the spec.version of the Cluster's control plane, read from the API server
// as upstream does; "" when the Cluster has no control plane or it has no version.
func (r *Reconciler) controlPlaneVersion(ctx context.Context, cluster *clusterv1.Cluster) (string, error) {
	ref := cluster.Spec.ControlPlaneRef
	if ref == nil {
		return "", nil
	}
	obj := &unstructured.Unstructured{}
	obj.SetAPIVersion(ref.APIVersion)
	obj.SetKind(ref.Kind)
	var reader client.Reader = r.Client
	if r.APIReader != nil {
		reader = r.APIReader
	}
	if err := reader.Get(ctx, client.ObjectKey{Namespace: cluster.Namespace, Name: ref.Name}, obj); err != nil {
		if apierrors.IsForbidden(err) {
			return "", configErrorf("the files of contentFormat Template need the control plane's version, and the kubeadm "+
				"bootstrap provider may read a KubeadmControlPlane's only (as upstream's), not %s %s: %v", ref.Kind, ref.Name, err)
		}
		return "", fmt.Errorf("reading the control plane %s %s for the files of contentFormat Template: %w", ref.Kind, ref.Name, err)
	}
	return contract.ControlPlaneVersion(obj)
}
