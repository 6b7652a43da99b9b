// Package convert implements `clusterctl convert`: it converts the cluster.x-k8s.io objects of a
// multi-document YAML from v1beta1 to v1beta2 with the conversions the core manager's webhook serves
// (internal/conversion), and passes every other document through as it was.
package convert

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	crconversion "sigs.k8s.io/controller-runtime/pkg/webhook/conversion"

	clusterv1beta1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta2"
	"github.com/capstan-dev/capstan/internal/conversion"
	"github.com/capstan-dev/capstan/internal/manifest"
)

// SupportedTargetVersions are the versions Convert converts to (upstream's list).
var SupportedTargetVersions = []string{clusterv1.GroupVersion.Version}

// Result is what Convert did.
type Result struct {
	// Output is the converted YAML.
	Output []byte
	// Converted is the number of objects converted.
	Converted int
	// PassedThrough is the number of objects written as they were.
	PassedThrough int
}

// Convert converts the cluster.x-k8s.io/v1beta1 objects of input, a multi-document YAML, to toVersion;
// every other document (objects of other groups, or already at toVersion) is written as it was, comments
// included. Documents that hold only comments are dropped. A converted object is written in the canonical
// form (keys sorted, no comments). It fails, converting nothing, when a document is not an object with an
// apiVersion and a kind, or when a v1beta1 object has a field v1beta1 does not have (the conversion would
// drop it).
func Convert(ctx context.Context, input []byte, toVersion string) (Result, error) {
	if err := ValidateVersion(toVersion); err != nil {
		return Result{}, err
	}
	scheme := runtime.NewScheme()
	if err := errors.Join(clusterv1beta1.AddToScheme(scheme), clusterv1.AddToScheme(scheme)); err != nil {
		return Result{}, err
	}
	// Converting to the hub (v1beta2) needs no reference versions: those are only looked up towards v1beta1.
	registry, err := conversion.Core(nil).Registry(scheme)
	if err != nil {
		return Result{}, err
	}
	target := schema.GroupVersion{Group: clusterv1.GroupVersion.Group, Version: toVersion}

	var out bytes.Buffer
	var res Result
	for i, doc := range manifest.Documents(input) {
		objs, err := manifest.Parse(doc)
		if de := (*manifest.DocumentError)(nil); errors.As(err, &de) {
			err = de.Err
		}
		if err != nil {
			return Result{}, fmt.Errorf("YAML document %d: %w", i+1, err)
		}
		if len(objs) == 0 {
			continue
		}
		obj := &objs[0]
		gvk := obj.GroupVersionKind()
		if obj.GetAPIVersion() == "" || gvk.Kind == "" {
			return Result{}, fmt.Errorf("YAML document %d: missing apiVersion or kind: every document must be a Kubernetes object", i+1)
		}
		if out.Len() > 0 {
			out.WriteString("---\n")
		}
		if gvk.GroupVersion() != clusterv1beta1.GroupVersion || gvk.Version == target.Version {
			out.Write(doc)
			if !bytes.HasSuffix(doc, []byte("\n")) {
				out.WriteByte('\n')
			}
			res.PassedThrough++
			continue
		}
		converted, err := convertObject(ctx, scheme, registry, obj, target)
		if err != nil {
			return Result{}, fmt.Errorf("YAML document %d (%s %s): %w", i+1, gvk.Kind, name(obj), err)
		}
		data, err := manifest.Marshal([]unstructured.Unstructured{*converted})
		if err != nil {
			return Result{}, err
		}
		out.Write(data)
		if !bytes.HasSuffix(data, []byte("\n")) {
			out.WriteByte('\n')
		}
		res.Converted++
	}
	res.Output = out.Bytes()
	return res, nil
}

// ValidateVersion fails unless version is one of SupportedTargetVersions.
func ValidateVersion(version string) error {
	if !slices.Contains(SupportedTargetVersions, version) {
		return fmt.Errorf("invalid --to-version value %q. Supported versions are: %s", version, strings.Join(SupportedTargetVersions, ", "))
	}
	return nil
}

// convertObject converts obj, a cluster.x-k8s.io/v1beta1 object, to target through its typed versions.
func convertObject(ctx context.Context, scheme *runtime.Scheme, registry crconversion.Registry, obj *unstructured.Unstructured, target schema.GroupVersion) (*unstructured.Unstructured, error) {
	gvk := obj.GroupVersionKind()
	_, hasStatus := obj.Object["status"]
	converter, ok := registry.GetConverter(gvk.GroupKind())
	if !ok {
		return nil, fmt.Errorf("cluster.x-k8s.io/v1beta1 has no kind %s", gvk.Kind)
	}
	src, err := scheme.New(gvk)
	if err != nil {
		return nil, err
	}
	vars := &placeholders{}
	if err := vars.replace(obj.Object, reflect.TypeOf(src)); err != nil {
		return nil, err
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(obj.Object, src, true); err != nil {
		if strings.Contains(err.Error(), "unknown field") {
			return nil, fmt.Errorf("%w: v1beta1 has no such field, so converting would drop it; remove or fix it", err)
		}
		return nil, fmt.Errorf("not a valid v1beta1 %s: %w (a clusterctl variable can stand in for a string or a number only)", gvk.Kind, err)
	}
	dst, err := scheme.New(target.WithKind(gvk.Kind))
	if err != nil {
		return nil, err
	}
	dst.GetObjectKind().SetGroupVersionKind(target.WithKind(gvk.Kind))
	if err := converter.ConvertObject(ctx, src, dst); err != nil {
		return nil, err
	}
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(dst)
	if err != nil {
		return nil, err
	}
	// A manifest's status is never applied: an object written without one is converted without one (the
	// conversion fills v1beta2's status with v1beta1's zero counters).
	if !hasStatus {
		delete(u, "status")
	}
	converted := &unstructured.Unstructured{Object: vars.restore(u).(map[string]any)}
	converted.SetGroupVersionKind(target.WithKind(gvk.Kind))
	return converted, nil
}

// name is the object's namespace/name, or its name.
func name(obj *unstructured.Unstructured) string {
	if obj.GetNamespace() == "" {
		return obj.GetName()
	}
	return obj.GetNamespace() + "/" + obj.GetName()
}
