package topology

import (
	"k8s.io/apimachinery/pkg/api/equality"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
)

// clusterChangeIsRelevant lets through every event of a Cluster but an update that changes only its
// v1beta2 status (and so its resourceVersion and managed fields), which the topology controller does not
// read: upstream's predicate of the same name. Resyncs pass.
func clusterChangeIsRelevant() predicate.Predicate {
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		o, ok1 := e.ObjectOld.(*clusterv1.Cluster)
		n, ok2 := e.ObjectNew.(*clusterv1.Cluster)
		if !ok1 || !ok2 || o.ResourceVersion == n.ResourceVersion {
			return true
		}
		return !equality.Semantic.DeepEqual(withoutV1Beta2(o), withoutV1Beta2(n))
	}}
}

func withoutV1Beta2(c *clusterv1.Cluster) *clusterv1.Cluster {
	c = c.DeepCopy()
	c.ResourceVersion, c.ManagedFields, c.Status.V1Beta2 = "", nil, nil
	return c
}

// machineDeploymentChangeIsRelevant is the same for a MachineDeployment (upstream's predicate of the same
// name).
func machineDeploymentChangeIsRelevant() predicate.Predicate {
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		o, ok1 := e.ObjectOld.(*clusterv1.MachineDeployment)
		n, ok2 := e.ObjectNew.(*clusterv1.MachineDeployment)
		if !ok1 || !ok2 || o.ResourceVersion == n.ResourceVersion {
			return true
		}
		strip := func(md *clusterv1.MachineDeployment) *clusterv1.MachineDeployment {
			md = md.DeepCopy()
			md.ResourceVersion, md.ManagedFields, md.Status.V1Beta2 = "", nil, nil
			return md
		}
		return !equality.Semantic.DeepEqual(strip(o), strip(n))
	}}
}

// machinePoolChangeIsRelevant is the same for a MachinePool: its status other than the v1beta2 block
// (nodeRefs, replicas) matters, as whether it upgrades is read from its Nodes.
func machinePoolChangeIsRelevant() predicate.Predicate {
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		o, ok1 := e.ObjectOld.(*clusterv1.MachinePool)
		n, ok2 := e.ObjectNew.(*clusterv1.MachinePool)
		if !ok1 || !ok2 || o.ResourceVersion == n.ResourceVersion {
			return true
		}
		strip := func(mp *clusterv1.MachinePool) *clusterv1.MachinePool {
			mp = mp.DeepCopy()
			mp.ResourceVersion, mp.ManagedFields, mp.Status.V1Beta2 = "", nil, nil
			return mp
		}
		return !equality.Semantic.DeepEqual(strip(o), strip(n))
	}}
}

// machineChangeIsRelevant lets through the creation and deletion of a Machine and an update of what the
// topology controller reads of it: its version and its MachineDeployment (whether a MachineDeployment is
// still upgrading), and its deletion. Its status, which changes a few times as it provisions, does not
// matter. Resyncs pass.
func machineChangeIsRelevant() predicate.Predicate {
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		o, ok1 := e.ObjectOld.(*clusterv1.Machine)
		n, ok2 := e.ObjectNew.(*clusterv1.Machine)
		if !ok1 || !ok2 || o.ResourceVersion == n.ResourceVersion {
			return true
		}
		return !equality.Semantic.DeepEqual(o.Spec.Version, n.Spec.Version) ||
			o.Labels[clusterv1.MachineDeploymentNameLabel] != n.Labels[clusterv1.MachineDeploymentNameLabel] ||
			!o.DeletionTimestamp.Equal(n.DeletionTimestamp)
	}}
}
