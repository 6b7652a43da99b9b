package topologystate

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
)

// Key identifies an object of a set: its group and kind, namespace and name.
type Key struct {
	GroupKind schema.GroupKind
	Namespace string
	Name      string
}

// KeyOf returns the key of an object.
func KeyOf(u *unstructured.Unstructured) Key {
	return Key{u.GroupVersionKind().GroupKind(), u.GetNamespace(), u.GetName()}
}

// Objects is a client.Reader over a set of objects (the files given to `clusterctl alpha topology
// plan`) and, when Fallback is set, a management cluster behind them: what the set lacks is read there
// (and remembered); the set's objects win.
type Objects struct {
	// Fallback reads what the set does not hold; nil reads nothing else.
	Fallback client.Reader

	mu     sync.Mutex
	scheme *runtime.Scheme
	index  map[Key]*unstructured.Unstructured
	// stored says which objects of index were read from Fallback (nil: not there).
	stored map[Key]bool
}

// NewObjects returns a reader of objs (they are not copied) with fallback behind them.
func NewObjects(objs []*unstructured.Unstructured, fallback client.Reader) (*Objects, error) {
	scheme := runtime.NewScheme()
	if err := clusterv1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	if err := corev1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	o := &Objects{Fallback: fallback, scheme: scheme, index: map[Key]*unstructured.Unstructured{}, stored: map[Key]bool{}}
	for _, u := range objs {
		o.index[KeyOf(u)] = u
	}
	return o, nil
}

// Lookup returns the object of a key from the set, or from Fallback (remembered, nil when not there).
func (o *Objects) Lookup(ctx context.Context, gvk schema.GroupVersionKind, namespace, name string) (*unstructured.Unstructured, error) {
	k := Key{gvk.GroupKind(), namespace, name}
	o.mu.Lock()
	u, ok := o.index[k]
	o.mu.Unlock()
	if ok || o.Fallback == nil {
		return u, nil
	}
	u = &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	err := o.Fallback.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, u)
	switch {
	case apierrors.IsNotFound(err) || meta.IsNoMatchError(err):
		u = nil
	case err != nil:
		return nil, fmt.Errorf("reading %s %s/%s from the management cluster: %w", gvk.Kind, namespace, name, err)
	}
	o.Remember(u, k)
	return u, nil
}

// Remember adds an object read from Fallback to the set (nil remembers that k is not there).
func (o *Objects) Remember(u *unstructured.Unstructured, k Key) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.index[k] = u
	if u != nil {
		o.stored[k] = true
	}
}

// Has reports whether the set holds k (given, or read from Fallback).
func (o *Objects) Has(k Key) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	_, ok := o.index[k]
	return ok
}

// Stored reports whether an object of the set was read from Fallback.
func (o *Objects) Stored(k Key) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.stored[k]
}

// Items returns the objects of the set of a group and kind, sorted by namespace and name.
func (o *Objects) Items(gk schema.GroupKind) []*unstructured.Unstructured {
	o.mu.Lock()
	defer o.mu.Unlock()
	var out []*unstructured.Unstructured
	for k, u := range o.index {
		if u != nil && k.GroupKind == gk {
			out = append(out, u)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		return out[i].GetNamespace()+"/"+out[i].GetName() < out[j].GetNamespace()+"/"+out[j].GetName()
	})
	return out
}

func (o *Objects) gvk(obj runtime.Object) (schema.GroupVersionKind, error) {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		return u.GroupVersionKind(), nil
	}
	if u, ok := obj.(*unstructured.UnstructuredList); ok {
		return u.GroupVersionKind(), nil
	}
	return apiutil.GVKForObject(obj, o.scheme)
}

// into copies u into obj.
func into(u *unstructured.Unstructured, obj runtime.Object) error {
	if out, ok := obj.(*unstructured.Unstructured); ok {
		u.DeepCopyInto(out)
		return nil
	}
	return runtime.DefaultUnstructuredConverter.FromUnstructured(u.DeepCopy().Object, obj)
}

// Get reads an object of the set (or of Fallback).
func (o *Objects) Get(ctx context.Context, key client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	gvk, err := o.gvk(obj)
	if err != nil {
		return err
	}
	u, err := o.Lookup(ctx, gvk, key.Namespace, key.Name)
	if err != nil {
		return err
	}
	if u == nil {
		return apierrors.NewNotFound(schema.GroupResource{Group: gvk.Group, Resource: strings.ToLower(gvk.Kind)}, key.Name)
	}
	return into(u, obj)
}

// List lists the objects of the set (and of Fallback, remembered) of a kind, in a namespace and with
// labels as opts say (field selectors are not supported).
func (o *Objects) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	gvk, err := o.gvk(list)
	if err != nil {
		return err
	}
	itemGVK := gvk.GroupVersion().WithKind(strings.TrimSuffix(gvk.Kind, "List"))
	lo := (&client.ListOptions{}).ApplyOptions(opts)
	if lo.FieldSelector != nil && !lo.FieldSelector.Empty() {
		return fmt.Errorf("listing %s: field selectors are not supported over files", itemGVK.Kind)
	}
	if o.Fallback != nil {
		stored := &unstructured.UnstructuredList{}
		stored.SetGroupVersionKind(itemGVK.GroupVersion().WithKind(itemGVK.Kind + "List"))
		err := o.Fallback.List(ctx, stored, opts...)
		switch {
		case meta.IsNoMatchError(err):
		case err != nil:
			return fmt.Errorf("listing %s in the management cluster: %w", itemGVK.Kind, err)
		default:
			for i := range stored.Items {
				u := &stored.Items[i]
				if k := KeyOf(u); !o.Has(k) {
					o.Remember(u, k)
				}
			}
		}
	}
	var items []runtime.Object
	for _, u := range o.Items(itemGVK.GroupKind()) {
		if lo.Namespace != "" && u.GetNamespace() != lo.Namespace {
			continue
		}
		if lo.LabelSelector != nil && !lo.LabelSelector.Matches(labels.Set(u.GetLabels())) {
			continue
		}
		if _, ok := list.(*unstructured.UnstructuredList); ok {
			items = append(items, u.DeepCopy())
			continue
		}
		typed, err := o.scheme.New(itemGVK)
		if err != nil {
			return err
		}
		if err := into(u, typed); err != nil {
			return fmt.Errorf("reading %s %s: %w", itemGVK.Kind, u.GetName(), err)
		}
		items = append(items, typed)
	}
	return meta.SetList(list, items)
}
