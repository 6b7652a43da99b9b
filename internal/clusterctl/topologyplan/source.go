package topologyplan

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	jsonpatch "github.com/evanphx/json-patch/v5"
	corev1 "k8s.io/api/core/v1"
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

// classesUsing adds to classes the ClusterClasses of the management cluster that reference a template of
// the input.
func (s *source) classesUsing(ctx context.Context, objs []unstructured.Unstructured, classes map[key]bool) error {
	templates := map[key]bool{}
	for i := range objs {
		k := keyOf(&objs[i], "")
		if k.gk != clusterClassGK && k.gk != clusterGK {
			templates[k] = true
		}
	}
	if len(templates) > 0 {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(clusterv1.GroupVersion.WithKind("ClusterClassList"))
		if err := s.client.List(ctx, list); err != nil {
			return fmt.Errorf("listing the ClusterClasses of the management cluster: %w", err)
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
	return nil
}

// clustersOf returns the Clusters of the management cluster, not in the input, of the ClusterClasses
// classes.
func (s *source) clustersOf(ctx context.Context, classes map[key]bool) ([]*unstructured.Unstructured, error) {
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

// apply is current as the topology controller's server-side apply of desired leaves it. For an object read
// from the management cluster it is a dry-run apply there, as the controller's; for an object of the
// input, applyOffline.
func (s *source) apply(ctx context.Context, current, desired *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	if s.client == nil || !s.objs.Stored(topologystate.KeyOf(current)) {
		return applyOffline(current, desired)
	}
	dry := desired.DeepCopy()
	if err := s.client.Apply(ctx, client.ApplyConfigurationFromUnstructured(dry), client.FieldOwner(FieldManager), client.ForceOwnership, client.DryRunAll); err != nil {
		return nil, fmt.Errorf("dry-run applying %s %s/%s on the management cluster: %w", desired.GetKind(), desired.GetNamespace(), desired.GetName(), err)
	}
	return dry, nil
}
