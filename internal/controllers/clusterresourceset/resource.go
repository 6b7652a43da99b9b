package clusterresourceset

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	addonsv1 "github.com/capstan-dev/capstan/api/addons/v1beta1"
	"github.com/capstan-dev/capstan/internal/manifest"
)

// errWrongSecretType is returned for a Secret resource whose type is not addons.cluster.x-k8s.io/resource-set.
var errWrongSecretType = fmt.Errorf("only Secrets of type %s can be applied by a ClusterResourceSet", addonsv1.ClusterResourceSetSecretType)

// resource is a Secret or ConfigMap of a ClusterResourceSet: its data, in the order of its keys, and the
// objects the data holds.
type resource struct {
	ref addonsv1.ResourceRef
	// obj is the Secret or ConfigMap as read.
	obj client.Object
	// data are the values of the data keys, sorted by key (Secret values decoded).
	data [][]byte
	// objs are the objects of the data, in order: the documents of each key in turn, each key's objects
	// sorted so that Namespaces and CustomResourceDefinitions come first.
	objs []unstructured.Unstructured
	// parseErr is why the data cannot be parsed into objects.
	parseErr error
}

// hash is the hash the ClusterResourceSetBinding records: sha256 over the values in key order, as upstream
// computes it, so that bindings written by upstream's controller stay valid.
func (r *resource) hash() string {
	h := sha256.New()
	for _, d := range r.data {
		h.Write(d)
	}
	return fmt.Sprintf("sha256:%x", h.Sum(nil))
}

// getResource reads a ClusterResourceSet's resource from namespace. A Secret must be of the ClusterResourceSet
// type (errWrongSecretType otherwise).
func getResource(ctx context.Context, c client.Reader, ref addonsv1.ResourceRef, namespace string) (*resource, error) {
	key := client.ObjectKey{Namespace: namespace, Name: ref.Name}
	values := map[string][]byte{}
	var obj client.Object
	switch addonsv1.ClusterResourceSetResourceKind(ref.Kind) {
	case addonsv1.ConfigMapClusterResourceSetResourceKind:
		cm := &corev1.ConfigMap{}
		if err := c.Get(ctx, key, cm); err != nil {
			return nil, err
		}
		for k, v := range cm.Data {
			values[k] = []byte(v)
		}
		obj = cm
	case addonsv1.SecretClusterResourceSetResourceKind:
		s := &corev1.Secret{}
		if err := c.Get(ctx, key, s); err != nil {
			return nil, err
		}
		if s.Type != addonsv1.ClusterResourceSetSecretType {
			return nil, fmt.Errorf("secret %s is of type %q: %w", ref.Name, s.Type, errWrongSecretType)
		}
		values = s.Data
		obj = s
	default:
		return nil, fmt.Errorf("resource %s has kind %q: only Secret and ConfigMap are supported", ref.Name, ref.Kind)
	}
	r := &resource{ref: ref, obj: obj}
	keys := slices.Sorted(maps.Keys(values))
	for _, k := range keys {
		r.data = append(r.data, values[k])
	}
	for i, d := range r.data {
		objs, err := parseObjects(d)
		if err != nil {
			r.parseErr = fmt.Errorf("%s %s, key %s: %w", ref.Kind, ref.Name, keys[i], err)
			break
		}
		r.objs = append(r.objs, objs...)
	}
	return r, nil
}

// parseObjects decodes a value of a resource: YAML or JSON documents, or a JSON list of objects.
func parseObjects(data []byte) ([]unstructured.Unstructured, error) {
	var objs []unstructured.Unstructured
	if trimmed := bytes.TrimSpace(data); bytes.HasPrefix(trimmed, []byte("[")) {
		var list []map[string]any
		if err := json.Unmarshal(trimmed, &list); err != nil {
			return nil, fmt.Errorf("decoding a JSON list of objects: %w", err)
		}
		for _, o := range list {
			objs = append(objs, unstructured.Unstructured{Object: o})
		}
	} else {
		parsed, err := manifest.Parse(data)
		if err != nil {
			return nil, err
		}
		objs = parsed
	}
	for i := range objs {
		if objs[i].GetAPIVersion() == "" || objs[i].GetKind() == "" {
			return nil, fmt.Errorf("object %d has no apiVersion or kind", i+1)
		}
	}
	// Namespaces and CRDs first, so that what lives in them can be created in the same pass.
	slices.SortStableFunc(objs, func(a, b unstructured.Unstructured) int { return createPriority(a) - createPriority(b) })
	return objs, nil
}

func createPriority(o unstructured.Unstructured) int {
	switch o.GetKind() {
	case "Namespace":
		return 0
	case "CustomResourceDefinition":
		return 1
	default:
		return 2
	}
}

// workloadObject returns a copy of an object of a resource to write to a workload cluster: a namespaced
// object without a namespace goes to "default", as kubectl apply would put it.
func workloadObject(c client.Client, o *unstructured.Unstructured) *unstructured.Unstructured {
	obj := o.DeepCopy()
	if obj.GetNamespace() == "" {
		if namespaced, err := c.IsObjectNamespaced(obj); err == nil && namespaced {
			obj.SetNamespace(corev1.NamespaceDefault)
		}
	}
	return obj
}

// applyOnce creates each object; one that exists already is left as it is.
func applyOnce(ctx context.Context, c client.Client, objs []unstructured.Unstructured) error {
	var errs []error
	for i := range objs {
		obj := workloadObject(c, &objs[i])
		if err := c.Create(ctx, obj); err != nil && !apierrors.IsAlreadyExists(err) {
			errs = append(errs, fmt.Errorf("creating %s %s: %w", obj.GetKind(), klog.KObj(obj), err))
		}
	}
	return errors.Join(errs...)
}

// applyReconcile creates each object, or patches an existing one to what the resource says (a merge patch
// from the object in the workload cluster to the resource's object, as upstream).
func applyReconcile(ctx context.Context, c client.Client, objs []unstructured.Unstructured) error {
	var errs []error
	for i := range objs {
		obj := workloadObject(c, &objs[i])
		current := &unstructured.Unstructured{}
		current.SetGroupVersionKind(obj.GroupVersionKind())
		err := c.Get(ctx, client.ObjectKeyFromObject(obj), current)
		switch {
		case apierrors.IsNotFound(err):
			if err := c.Create(ctx, obj); err != nil {
				errs = append(errs, fmt.Errorf("creating %s %s: %w", obj.GetKind(), klog.KObj(obj), err))
			}
			continue
		case err != nil:
			errs = append(errs, fmt.Errorf("reading %s %s: %w", obj.GetKind(), klog.KObj(obj), err))
			continue
		}
		obj.SetResourceVersion(current.GetResourceVersion())
		if err := c.Patch(ctx, obj, client.MergeFrom(current)); err != nil {
			errs = append(errs, fmt.Errorf("patching %s %s: %w", obj.GetKind(), klog.KObj(obj), err))
		}
	}
	return errors.Join(errs...)
}
