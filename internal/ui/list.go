package ui

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
)

// ClusterRow is a Cluster in the list: the columns of the list, comparable as a value so that the
// hub pushes only the rows that changed.
type ClusterRow struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// Class is the ClusterClass of a managed topology ("" for none), with its namespace when it is not
	// the Cluster's.
	Class string `json:"class"`
	// Version is spec.topology.version, or the control plane's spec.version.
	Version string `json:"version"`
	Phase   string `json:"phase"`
	// ControlPlane and Workers are "ready/desired" Machines; "" when the Cluster does not say.
	ControlPlane string `json:"controlPlane"`
	Workers      string `json:"workers"`
	// ControlPlaneReady and WorkersReady say that all the desired Machines are ready.
	ControlPlaneReady bool `json:"controlPlaneReady"`
	WorkersReady      bool `json:"workersReady"`
	// Available is the status of the v1beta2 Available condition ("" when the Cluster has none), with its
	// reason and message.
	Available        string `json:"available"`
	AvailableReason  string `json:"availableReason"`
	AvailableMessage string `json:"availableMessage"`
	// Created is the creation time (RFC 3339), for the age.
	Created  string `json:"created"`
	Deleting bool   `json:"deleting"`
	Paused   bool   `json:"paused"`
}

// computeRow computes the row of a Cluster read from the cache; the control plane's version is read
// from the cache too when the Cluster has no topology.
func (h *hub) computeRow(ctx context.Context, u *unstructured.Unstructured) (*ClusterRow, error) {
	c := &clusterv1.Cluster{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, c); err != nil {
		return nil, fmt.Errorf("reading Cluster %s/%s: %w", u.GetNamespace(), u.GetName(), err)
	}
	row := clusterRow(c)
	if row.Version == "" && c.Spec.ControlPlaneRef != nil && c.Spec.ControlPlaneRef.Name != "" {
		ref := c.Spec.ControlPlaneRef
		cp := &unstructured.Unstructured{}
		cp.SetGroupVersionKind(schema.FromAPIVersionAndKind(ref.APIVersion, ref.Kind))
		if err := h.watch(ctx, cp); err == nil {
			err = h.cache.Get(ctx, client.ObjectKey{Namespace: c.Namespace, Name: ref.Name}, cp)
			if err == nil {
				row.Version, _, _ = unstructured.NestedString(cp.Object, "spec", "version")
			} else if !apierrors.IsNotFound(err) && !meta.IsNoMatchError(err) {
				return nil, err
			}
		}
	}
	return row, nil
}

// clusterRow is the row of a Cluster from the Cluster alone.
func clusterRow(c *clusterv1.Cluster) *ClusterRow {
	row := &ClusterRow{
		Namespace: c.Namespace, Name: c.Name, Phase: c.Status.Phase,
		Created:  c.CreationTimestamp.UTC().Format(time.RFC3339),
		Deleting: !c.DeletionTimestamp.IsZero(),
		Paused:   c.Spec.Paused || c.Annotations[clusterv1.PausedAnnotation] != "",
	}
	if t := c.Spec.Topology; t != nil {
		row.Class, row.Version = t.Class, t.Version
		if t.ClassNamespace != "" && t.ClassNamespace != c.Namespace {
			row.Class = t.ClassNamespace + "/" + t.Class
		}
	}
	if s := c.Status.V1Beta2; s != nil {
		if cp := s.ControlPlane; cp != nil && cp.DesiredReplicas != nil {
			row.ControlPlane, row.ControlPlaneReady = readiness(cp.ReadyReplicas, cp.DesiredReplicas)
		}
		if w := s.Workers; w != nil && w.DesiredReplicas != nil {
			row.Workers, row.WorkersReady = readiness(w.ReadyReplicas, w.DesiredReplicas)
		}
		for _, cond := range s.Conditions {
			if cond.Type == clusterv1.ClusterAvailableV1Beta2Condition {
				row.Available, row.AvailableReason, row.AvailableMessage = string(cond.Status), cond.Reason, cond.Message
			}
		}
	}
	if row.ControlPlane == "" && c.Spec.ControlPlaneRef != nil {
		// A core that reports no v1beta2 counters: the v1beta1 flag.
		row.ControlPlane, row.ControlPlaneReady = "not ready", c.Status.ControlPlaneReady
		if c.Status.ControlPlaneReady {
			row.ControlPlane = "ready"
		}
	}
	return row
}

func readiness(ready, desired *int32) (string, bool) {
	r, d := ptr.Deref(ready, 0), ptr.Deref(desired, 0)
	return fmt.Sprintf("%d/%d", r, d), r >= d
}

// sortRows orders rows by namespace and name.
func sortRows(rows []*ClusterRow) {
	slices.SortFunc(rows, func(a, b *ClusterRow) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
}
