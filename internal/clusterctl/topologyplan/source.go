package topologyplan

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/topologystate"
)

// FieldManager is the field manager of the topology controller's applies, which the online plan
// dry-runs as.
const FieldManager = "capi-topology"

var (
	clusterGK      = schema.GroupKind{Group: clusterv1.GroupVersion.Group, Kind: "Cluster"}
	clusterClassGK = schema.GroupKind{Group: clusterv1.GroupVersion.Group, Kind: "ClusterClass"}
)

// source finds objects in the input first and, online, in the management cluster (through objs, the
// reader the topology state is gathered with).
type source struct {
	objs   *topologystate.Objects
	client client.Client
}

func (s *source) orCluster() string {
	if s.client != nil {
		return " nor in the management cluster"
	}
	return ""
}

// lookup returns the object ref names (in namespace when ref has none), nil when there is none.
func (s *source) lookup(ctx context.Context, ref *corev1.ObjectReference, namespace string) (*unstructured.Unstructured, error) {
	if ref == nil || ref.Name == "" {
		return nil, nil
	}
	ns := ref.Namespace
	if ns == "" {
		ns = namespace
	}
	return s.objs.Lookup(ctx, schema.FromAPIVersionAndKind(ref.APIVersion, ref.Kind), ns, ref.Name)
}

// applyOverStored turns each Cluster of the input that exists in the management cluster into the stored
// Cluster with the input merged over it (a JSON merge patch, as upstream's plan does): its uid, references
// and status come from the cluster, what the input says wins.
func (s *source) applyOverStored(ctx context.Context, clusters []*unstructured.Unstructured) error {
	for _, u := range clusters {
		stored := &unstructured.Unstructured{}
		stored.SetGroupVersionKind(u.GroupVersionKind())
		err := s.client.Get(ctx, client.ObjectKeyFromObject(u), stored)
		switch {
		case apierrors.IsNotFound(err):
			continue
		case err != nil:
			return fmt.Errorf("reading Cluster %s/%s from the management cluster: %w", u.GetNamespace(), u.GetName(), err)
		}
		original, err := json.Marshal(stored.Object)
		if err != nil {
			return err
		}
		modified, err := json.Marshal(u.Object)
		if err != nil {
			return err
		}
		merged, err := jsonpatch.MergePatch(original, modified)
		if err != nil {
			return fmt.Errorf("applying the input's Cluster %s/%s over the stored one: %w", u.GetNamespace(), u.GetName(), err)
		}
		obj := map[string]any{}
		if err := json.Unmarshal(merged, &obj); err != nil {
			return err
		}
		u.Object = obj
	}
	return nil
}

// clustersUsing returns the Clusters of the management cluster, not in the input, whose ClusterClass is in
// the input or references a template of the input.
func (s *source) clustersUsing(ctx context.Context, objs []unstructured.Unstructured) ([]*unstructured.Unstructured, error) {
	classes := map[key]bool{}
	templates := map[key]bool{}
	for i := range objs {
		k := keyOf(&objs[i], "")
		switch k.gk {
		case clusterClassGK:
			classes[k] = true
		case clusterGK:
		default:
			templates[k] = true
		}
	}
	if len(templates) > 0 {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(clusterv1.GroupVersion.WithKind("ClusterClassList"))
		if err := s.client.List(ctx, list); err != nil {
			return nil, fmt.Errorf("listing the ClusterClasses of the management cluster: %w", err)
		}
		for i := range list.Items {
			cc := &clusterv1.ClusterClass{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(list.Items[i].Object, cc); err != nil {
				continue
			}
			for _, ref := range topologystate.Refs(cc) {
				gk := schema.FromAPIVersionAndKind(ref.APIVersion, ref.Kind).GroupKind()
				ns := ref.Namespace
				if ns == "" {
					ns = cc.Namespace
				}
				if templates[key{gk, ns, ref.Name}] {
					classes[key{clusterClassGK, cc.Namespace, cc.Name}] = true
				}
			}
		}
	}
	if len(classes) == 0 {
		return nil, nil
	}
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(clusterv1.GroupVersion.WithKind("ClusterList"))
	if err := s.client.List(ctx, list); err != nil {
		return nil, fmt.Errorf("listing the Clusters of the management cluster: %w", err)
	}
	var out []*unstructured.Unstructured
	for i := range list.Items {
		u := &list.Items[i]
		if s.objs.Has(topologystate.KeyOf(u)) {
			continue
		}
		c := &clusterv1.Cluster{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, c); err != nil || c.Spec.Topology == nil {
			continue
		}
		ns, name := c.GetClassKey()
		if classes[key{clusterClassGK, ns, name}] {
			s.objs.Remember(u, topologystate.KeyOf(u))
			out = append(out, u)
		}
	}
	slices.SortFunc(out, func(a, b *unstructured.Unstructured) int {
		return strings.Compare(a.GetNamespace()+"/"+a.GetName(), b.GetNamespace()+"/"+b.GetName())
	})
	return out, nil
}

// diff is the difference desired makes to current, "" when none. For an object read from the management
// cluster it is found as the topology controller finds it: a dry-run server-side apply as its field
// manager, compared with the stored object (managedFields aside).
func (s *source) diff(ctx context.Context, current, desired *unstructured.Unstructured) (string, error) {
	if s.client == nil || !s.objs.Stored(topologystate.KeyOf(current)) {
		return objectDiff(current, desired), nil
	}
	dry := desired.DeepCopy()
	if err := s.client.Apply(ctx, client.ApplyConfigurationFromUnstructured(dry), client.FieldOwner(FieldManager), client.ForceOwnership, client.DryRunAll); err != nil {
		return "", fmt.Errorf("dry-run applying %s %s/%s on the management cluster: %w", desired.GetKind(), desired.GetNamespace(), desired.GetName(), err)
	}
	c := current.DeepCopy()
	for _, u := range []*unstructured.Unstructured{c, dry} {
		unstructured.RemoveNestedField(u.Object, "metadata", "managedFields")
	}
	if equality.Semantic.DeepEqual(c.Object, dry.Object) {
		return "", nil
	}
	return cmp.Diff(c.Object, dry.Object), nil
}
