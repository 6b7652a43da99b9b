package move

import (
	"context"
	"fmt"
	"sort"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterctlv1 "github.com/capstan-dev/capstan/api/clusterctl/v1alpha3"
	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
)

// checks says which preflight checks run.
type checks struct {
	// from is the source; nil for a restore from a directory.
	from *Cluster
	// to is the target; nil when writing to a directory or for a dry run without one.
	to *Cluster
	// provisioning: every Cluster's infrastructure is provisioned and every Machine has a node.
	provisioning bool
	// journal is the journal of an interrupted move being resumed; nil for a fresh move.
	journal *journal
	// restore: the objects come from a directory (the journal, if any, is the target's).
	restore bool
}

// preflight returns every reason the move cannot start. It only reads.
func (m *mover) preflight(ctx context.Context, d *discovered, c checks) []string {
	problems := append([]string{}, d.problems...)
	nodes := d.moveNodes()
	if d.nothingToMove() && c.journal == nil {
		where := "namespace " + d.namespace
		if d.namespace == "" {
			where = "the directory"
		}
		problems = append(problems, fmt.Sprintf("nothing to move in %s: it has no Cluster, ClusterClass or ClusterResourceSet and no object labelled %s (choose the namespace with --namespace)",
			where, clusterctlv1.ClusterctlMoveLabel))
	}
	for _, n := range nodes {
		if n.obj.GetDeletionTimestamp() != nil && (c.journal == nil || c.journal.object(n.ref) == nil) {
			problems = append(problems, fmt.Sprintf("%s is being deleted: wait until it is gone, or remove what blocks its deletion", n.ref))
		}
		if c.from != nil && isPausable(n.ref) && isPaused(n.obj) && (c.journal == nil || !c.journal.paused(n.ref)) {
			how := "spec.paused is true"
			if n.ref.is(clusterGroup, clusterClassKind) {
				how = "annotated " + clusterv1.PausedAnnotation
			}
			problems = append(problems, fmt.Sprintf("%s is paused (%s): clusterctl move does not move what someone else paused; unpause it first", n.ref, how))
		}
		if c.provisioning {
			problems = append(problems, provisioningProblems(n)...)
		}
	}
	switch {
	case c.restore:
	case c.journal != nil:
		if data, err := c.journal.encode(); err == nil && len(data) > maxJournalSize {
			problems = append(problems, "too many objects for the move journal: move them in smaller namespaces")
		}
	default:
		if size := estimateJournalSize(nodes); size > maxJournalSize {
			problems = append(problems, fmt.Sprintf("too many objects (%d) for the move journal: move them in smaller namespaces", len(nodes)))
		}
	}
	if c.to != nil {
		problems = append(problems, m.targetProblems(ctx, d, c)...)
	}
	return problems
}

// nothingToMove reports whether no object of the namespace moves. Global objects are copied by every
// move: they alone are not a reason to move.
func (d *discovered) nothingToMove() bool {
	for _, n := range d.moveNodes() {
		if !n.globalHierarchy() || d.namespace == "" {
			return false
		}
	}
	return true
}

func estimateJournalSize(nodes []*node) int {
	j := &journal{Version: journalVersion}
	for _, n := range nodes {
		j.Objects = append(j.Objects, journalObject{Ref: n.ref, UID: n.uid, InTarget: targetExisted})
	}
	data, _ := j.encode()
	return len(data)
}

// provisioningProblems are upstream's checks: a Cluster's infrastructure is provisioned and its control
// plane initialized (ready, when it has a control plane object); a Machine has a node. v1beta2 fields are
// read too.
func provisioningProblems(n *node) []string {
	obj := n.obj.Object
	switch {
	case n.ref.is(clusterGroup, clusterKind):
		if !nestedTrue(obj, "status", "infrastructureReady") && !nestedTrue(obj, "status", "initialization", "infrastructureProvisioned") {
			return []string{fmt.Sprintf("%s is still provisioning its infrastructure: wait until it is provisioned", n.ref)}
		}
		if !conditionTrue(obj, string(clusterv1.ControlPlaneInitializedCondition)) && !nestedTrue(obj, "status", "initialization", "controlPlaneInitialized") {
			return []string{fmt.Sprintf("the control plane of %s is not initialized yet: wait until it is", n.ref)}
		}
		if _, hasCP, _ := unstructured.NestedMap(obj, "spec", "controlPlaneRef"); hasCP &&
			!nestedTrue(obj, "status", "controlPlaneReady") && !nestedTrue(obj, "status", "initialization", "controlPlaneInitialized") {
			return []string{fmt.Sprintf("the control plane of %s is not ready yet: wait until it is", n.ref)}
		}
	case n.ref.is(clusterGroup, machineKind):
		if name, _, _ := unstructured.NestedString(obj, "status", "nodeRef", "name"); name == "" {
			return []string{fmt.Sprintf("%s is still provisioning its node (no status.nodeRef): wait until it has one", n.ref)}
		}
	}
	return nil
}

func nestedTrue(obj map[string]any, fields ...string) bool {
	v, _, _ := unstructured.NestedBool(obj, fields...)
	return v
}

// conditionTrue reports whether a condition is True in status.conditions (v1beta1) or
// status.v1beta2.conditions.
func conditionTrue(obj map[string]any, condition string) bool {
	for _, path := range [][]string{{"status", "conditions"}, {"status", "v1beta2", "conditions"}} {
		list, _, _ := unstructured.NestedSlice(obj, path...)
		for _, item := range list {
			c, ok := item.(map[string]any)
			if ok && c["type"] == condition && c["status"] == string(metav1.ConditionTrue) {
				return true
			}
		}
	}
	return false
}

// targetProblems checks the target: it answers, has the providers, serves every kind, does not manage a
// Cluster of the same name, and accepts every object (a server-side dry run).
func (m *mover) targetProblems(ctx context.Context, d *discovered, c checks) []string {
	if err := c.to.checkReachable(ctx); err != nil {
		return []string{err.Error()}
	}
	var problems []string
	if c.from != nil {
		fromProviders, err := c.from.providers(ctx, m.b.Read)
		if err != nil {
			problems = append(problems, err.Error())
		}
		toProviders, err := c.to.providers(ctx, m.b.Read)
		if err != nil {
			problems = append(problems, err.Error())
		}
		problems = append(problems, checkProviders(fromProviders, toProviders, c.to.Name)...)
	}

	served := map[schema.GroupVersionKind]bool{}
	var missing []string
	for _, n := range d.moveNodes() {
		gvk := n.ref.GroupVersionKind()
		if _, seen := served[gvk]; seen {
			continue
		}
		_, err := c.to.Client.RESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version)
		served[gvk] = err == nil
		if err != nil {
			missing = append(missing, fmt.Sprintf("%s.%s %s", gvk.Kind, gvk.Group, gvk.Version))
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		problems = append(problems, fmt.Sprintf("the target management cluster %s does not serve %v: install the providers that define them there first (clusterctl init)", c.to.Name, missing))
	}

	namespaces := map[string]bool{}
	for _, n := range d.moveNodes() {
		if !served[n.ref.GroupVersionKind()] {
			continue
		}
		existing, found, err := c.to.get(ctx, m.b.Read, n.ref)
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		if found {
			// An interrupted restore may have unpaused its Clusters already: they are not someone else's.
			restored := c.restore && c.journal != nil && c.journal.paused(n.ref)
			if n.ref.is(clusterGroup, clusterKind) && !isPaused(existing) && !restored {
				problems = append(problems, fmt.Sprintf("%s already exists in the target management cluster %s and is not paused: the move would overwrite a cluster the target manages", n.ref, c.to.Name))
			}
			continue
		}
		if ns := n.ref.Namespace; ns != "" {
			exists, ok := namespaces[ns]
			if !ok {
				_, exists, err = c.to.get(ctx, m.b.Read, Ref{APIVersion: coreGroupVersion, Kind: namespaceKind, Name: ns})
				if err != nil {
					problems = append(problems, err.Error())
					continue
				}
				namespaces[ns] = exists
			}
			if !exists { // The namespace is created by the move; the object cannot be tried before.
				continue
			}
		}
		obj := n.obj.DeepCopy()
		stripForTarget(obj)
		if err := c.to.Client.Create(ctx, obj, client.DryRunAll); err != nil && !apierrors.IsAlreadyExists(err) {
			problems = append(problems, fmt.Sprintf("the target management cluster %s rejects %s: %v", c.to.Name, n.ref, err))
		}
	}
	return problems
}
