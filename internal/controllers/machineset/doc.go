// Package machineset implements the MachineSet controller.
//
// A MachineSet keeps spec.replicas Machines that look like its template. The controller owns the Machines
// that carry a controller ownerReference to the MachineSet and adopts orphan Machines of the same Cluster
// that match its selector. To create a Machine it clones the bootstrap and infrastructure templates (the
// clones carry the cluster.x-k8s.io/cloned-from-* annotations and the MachineSet as owner, until the Machine
// controller takes them over) and then creates the Machine; if that fails, the clones are deleted. When
// scaling down it deletes Machines marked with cluster.x-k8s.io/delete-machine first, then unhealthy ones,
// then by spec.deletePolicy. Labels, annotations, node timeouts and readiness gates of the template are
// propagated in place to existing Machines, and labels and annotations to their InfraMachines and
// BootstrapConfigs. For a MachineSet of a MachineDeployment it sets the Machines' UpToDate condition, by
// comparing its template with the MachineDeployment's. The status counts the Machines (all, ready,
// available for minReadySeconds, up to date) and carries the v1beta1 and v1beta2 conditions.
//
// A MachineSet that no MachineDeployment owns is owned by its Cluster. While the MachineSet is deleted, the
// cluster.x-k8s.io/machineset finalizer keeps it until its Machines are gone.
//
// The controller watches MachineSets, the Machines they own, orphan Machines (to adopt them),
// MachineDeployments (whose template decides whether Machines are up to date) and Clusters (to react to
// spec.paused).
package machineset
