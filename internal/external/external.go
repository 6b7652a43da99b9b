// Package external reads and creates the provider objects that Cluster API objects reference
// (infrastructure, bootstrap and control plane objects), as unstructured objects, and clones them from
// templates.
package external

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
)

// CrossNamespaceError says that a reference names another namespace than the referring object's:
// Cluster API objects only ever reference objects of their own namespace, and capstan never reads, changes
// or deletes an object of another namespace for them, so that a user of one namespace cannot reach
// another's objects through the controllers.
type CrossNamespaceError struct {
	Kind, Name, Namespace string
	// Want is the namespace of the referring object.
	Want string
}

func (e *CrossNamespaceError) Error() string {
	return fmt.Sprintf("the reference to %s %s names namespace %s: references must stay in the namespace %s of the object that holds them",
		e.Kind, e.Name, e.Namespace, e.Want)
}

// Get reads the object a reference points at, in namespace: a reference without a namespace is read
// there, and a reference to another namespace is refused with a *CrossNamespaceError.
func Get(ctx context.Context, c client.Reader, ref *corev1.ObjectReference, namespace string) (*unstructured.Unstructured, error) {
	if ref == nil {
		return nil, fmt.Errorf("reference is not set")
	}
	if ref.Namespace != "" && ref.Namespace != namespace {
		return nil, &CrossNamespaceError{Kind: ref.Kind, Name: ref.Name, Namespace: ref.Namespace, Want: namespace}
	}
	obj := &unstructured.Unstructured{}
	obj.SetAPIVersion(ref.APIVersion)
	obj.SetKind(ref.Kind)
	if err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: ref.Name}, obj); err != nil {
		return nil, fmt.Errorf("getting %s %s/%s: %w", ref.Kind, namespace, ref.Name, err)
	}
	return obj, nil
}

// CacheReadTimeout bounds a read of a provider object from the manager's cache in GetCached: an informer
// that cannot list its kind (RBAC forbids it, the CRD went away) never syncs, and the read would wait for
// it forever.
const CacheReadTimeout = 15 * time.Second

// GetCached reads the object a reference points at from cached (the manager's cache) as Get does; when the
// cache does not answer within CacheReadTimeout, it reads from live (the API server) instead, so that the
// caller learns why (for example that the manager is forbidden to read the kind) rather than waiting.
func GetCached(ctx context.Context, cached, live client.Reader, ref *corev1.ObjectReference, namespace string) (*unstructured.Unstructured, error) {
	if live == nil {
		return Get(ctx, cached, ref, namespace)
	}
	cacheCtx, cancel := context.WithTimeout(ctx, CacheReadTimeout)
	defer cancel()
	obj, err := Get(cacheCtx, cached, ref, namespace)
	if err == nil || ctx.Err() != nil || cacheCtx.Err() == nil {
		return obj, err
	}
	return Get(ctx, live, ref, namespace)
}

// ReadProblem says, in a condition message, why a provider object could not be read, when the cause is
// one the user must fix and that stays until they do: a reference to another namespace, or RBAC that
// forbids the manager to read the kind. It returns "" for other errors.
func ReadProblem(err error, ref *corev1.ObjectReference) string {
	var cross *CrossNamespaceError
	switch {
	case errors.As(err, &cross):
		return fmt.Sprintf("Refusing %s %s in namespace %s: references must stay in the namespace of the object that holds them", ref.Kind, ref.Name, cross.Namespace)
	case apierrors.IsForbidden(err):
		return fmt.Sprintf("Cannot read %s %s: the controller is forbidden to get %s; grant it with a ClusterRole labelled %s: \"true\"",
			ref.Kind, ref.Name, resourceOf(ref), clusterv1.AggregateToManagerLabel)
	}
	return ""
}

// resourceOf guesses the resource of a kind for messages: lower case, plural, with its group.
func resourceOf(ref *corev1.ObjectReference) string {
	gv, _ := schema.ParseGroupVersion(ref.APIVersion)
	name := strings.ToLower(ref.Kind) + "s"
	if gv.Group == "" {
		return name
	}
	return name + "." + gv.Group
}

// RefFor returns a reference to obj.
func RefFor(obj client.Object) *corev1.ObjectReference {
	gvk := obj.GetObjectKind().GroupVersionKind()
	return &corev1.ObjectReference{
		APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind,
		Namespace: obj.GetNamespace(), Name: obj.GetName(), UID: obj.GetUID(),
	}
}

// CloneInput says which template to clone and how to label and own the clone.
type CloneInput struct {
	// Template is the template to clone; its kind must end in "Template".
	Template *corev1.ObjectReference
	// Namespace is where the clone is created (and where the template is read when its reference has no
	// namespace).
	Namespace string
	// Name of the clone; generated from the template's name when empty.
	Name string
	// ClusterName is set as the cluster-name label.
	ClusterName string
	// Owner, when set, becomes the clone's controller owner.
	Owner *metav1.OwnerReference
	// Labels and Annotations are added to those of the template's spec.template.metadata.
	Labels      map[string]string
	Annotations map[string]string
}

// Clone creates an object from a template's spec.template (metadata and spec) and returns a reference to
// it. The clone carries the cloned-from annotations and the cluster-name label.
func Clone(ctx context.Context, c client.Client, in CloneInput) (*corev1.ObjectReference, error) {
	obj, err := Generate(ctx, c, in)
	if err != nil {
		return nil, err
	}
	if err := c.Create(ctx, obj); err != nil {
		return nil, fmt.Errorf("creating %s %s from template %s: %w", obj.GetKind(), obj.GetName(), in.Template.Name, err)
	}
	return RefFor(obj), nil
}

// Generate returns, without creating it, the object Clone would create.
func Generate(ctx context.Context, c client.Reader, in CloneInput) (*unstructured.Unstructured, error) {
	tpl, err := Get(ctx, c, in.Template, in.Namespace)
	if err != nil {
		return nil, err
	}
	templateSpec, found, err := unstructured.NestedMap(tpl.Object, "spec", "template")
	if err != nil || !found {
		return nil, fmt.Errorf("%s %s has no spec.template: it is not a Cluster API template", tpl.GetKind(), tpl.GetName())
	}
	kind, ok := strings.CutSuffix(tpl.GetKind(), clusterv1.TemplateSuffix)
	if !ok {
		return nil, fmt.Errorf("%s %s is not a template: its kind does not end in %q", tpl.GetKind(), tpl.GetName(), clusterv1.TemplateSuffix)
	}

	obj := &unstructured.Unstructured{Object: map[string]any{}}
	if spec, ok := templateSpec["spec"].(map[string]any); ok {
		obj.Object["spec"] = spec
	}
	obj.SetAPIVersion(tpl.GetAPIVersion())
	obj.SetKind(kind)
	obj.SetNamespace(in.Namespace)
	name := in.Name
	if name == "" {
		name = GenerateName(tpl.GetName() + "-")
	}
	obj.SetName(name)

	labels := map[string]string{}
	annotations := map[string]string{}
	if md, ok := templateSpec["metadata"].(map[string]any); ok {
		copyStrings(labels, md["labels"])
		copyStrings(annotations, md["annotations"])
	}
	for k, v := range in.Labels {
		labels[k] = v
	}
	for k, v := range in.Annotations {
		annotations[k] = v
	}
	if in.ClusterName != "" {
		labels[clusterv1.ClusterNameLabel] = in.ClusterName
	}
	annotations[clusterv1.TemplateClonedFromNameAnnotation] = tpl.GetName()
	annotations[clusterv1.TemplateClonedFromGroupKindAnnotation] = schema.FromAPIVersionAndKind(tpl.GetAPIVersion(), tpl.GetKind()).GroupKind().String()
	obj.SetLabels(labels)
	obj.SetAnnotations(annotations)
	if in.Owner != nil {
		obj.SetOwnerReferences([]metav1.OwnerReference{*in.Owner})
	}
	return obj, nil
}

func copyStrings(dst map[string]string, src any) {
	m, ok := src.(map[string]any)
	if !ok {
		return
	}
	for k, v := range m {
		if s, ok := v.(string); ok {
			dst[k] = s
		}
	}
}

// GenerateName appends five random characters to base, shortening base so the name fits in 63 characters,
// as the API server's generateName does.
func GenerateName(base string) string {
	const maxBase = 63 - 5
	if len(base) > maxBase {
		base = base[:maxBase]
	}
	return base + utilrand.String(5)
}
