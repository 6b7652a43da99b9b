// Package conversion converts Cluster API objects between the versions a CRD serves, for the conversion
// webhooks of the managers: one Converter a kind (controller-runtime's hub and spoke converters, the hub
// being the storage version), and the annotation that keeps, on an object read in an older version, what
// that version cannot express, so that writing it back loses nothing (upstream's MarshalData and
// UnmarshalData).
package conversion

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	apiconversion "k8s.io/apimachinery/pkg/conversion"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	crconversion "sigs.k8s.io/controller-runtime/pkg/webhook/conversion"
)

// DataAnnotation holds, on an object converted to an older version, the fields of the newer version it
// came from (all but metadata, as JSON), so that converting it back restores what the older version
// cannot express. Upstream's name.
const DataAnnotation = "cluster.x-k8s.io/conversion-data"

// Kind is the conversion of one kind between the versions its CRD serves.
type Kind struct {
	// GroupKind is the kind converted.
	GroupKind schema.GroupKind
	// Converter makes the kind's converter for a scheme that has every version of it
	// (crconversion.NewHubSpokeConverter).
	Converter func(*runtime.Scheme) (crconversion.Converter, error)
}

// Kinds are the conversions one manager's webhook serves.
type Kinds []Kind

// Registry returns the registry of the conversion webhook handler (crconversion.NewWebhookHandler).
func (ks Kinds) Registry(scheme *runtime.Scheme) (crconversion.Registry, error) {
	registry := crconversion.NewRegistry()
	for _, k := range ks {
		c, err := k.Converter(scheme)
		if err != nil {
			return nil, fmt.Errorf("the conversion of %s: %w", k.GroupKind, err)
		}
		if err := registry.RegisterConverter(k.GroupKind, c); err != nil {
			return nil, err
		}
	}
	return registry, nil
}

// GroupKinds returns the kinds converted.
func (ks Kinds) GroupKinds() []schema.GroupKind {
	out := make([]schema.GroupKind, len(ks))
	for i, k := range ks {
		out[i] = k.GroupKind
	}
	return out
}

// MarshalData keeps src, but for its metadata, in dst's DataAnnotation: src is the object in the newer
// version, dst its conversion to an older one.
func MarshalData(src runtime.Object, dst metav1.Object) error {
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(src)
	if err != nil {
		return err
	}
	delete(u, "metadata")
	return setAnnotationJSON(dst, DataAnnotation, u)
}

// UnmarshalData reads from's DataAnnotation into to and removes the annotation from from; it reports
// false when from has none. from is the object in the older version, to the newer one's fields to restore.
func UnmarshalData(from metav1.Object, to any) (bool, error) {
	return takeAnnotationJSON(from, DataAnnotation, to)
}

// setAnnotationJSON sets dst's annotation key to data as JSON.
func setAnnotationJSON(dst metav1.Object, key string, data any) error {
	b, err := json.Marshal(data)
	if err != nil {
		return err
	}
	annotations := maps.Clone(dst.GetAnnotations())
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[key] = string(b)
	dst.SetAnnotations(annotations)
	return nil
}

// takeAnnotationJSON reads from's annotation key (JSON) into to and removes it from from; it reports false
// when from has none.
func takeAnnotationJSON(from metav1.Object, key string, to any) (bool, error) {
	data, ok := from.GetAnnotations()[key]
	if !ok {
		return false, nil
	}
	if err := json.Unmarshal([]byte(data), to); err != nil {
		return false, fmt.Errorf("reading the %s annotation: %w", key, err)
	}
	annotations := maps.Clone(from.GetAnnotations())
	delete(annotations, key)
	if len(annotations) == 0 {
		annotations = nil
	}
	from.SetAnnotations(annotations)
	return true, nil
}

// generated adapts a generated conversion function (Convert_<from>_To_<to>, which needs no conversion
// scope) to the converter's signature, for the kinds whose generated conversion is all there is.
func generated[S, D any](convert func(S, D, apiconversion.Scope) error) func(context.Context, S, D) error {
	return func(_ context.Context, src S, dst D) error { return convert(src, dst, nil) }
}
