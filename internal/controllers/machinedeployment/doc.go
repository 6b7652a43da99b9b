// Package machinedeployment implements the MachineDeployment controller.
//
// A MachineDeployment rolls Machines out through MachineSets. The controller owns the MachineSets that
// carry a controller ownerReference to it and adopts orphan MachineSets labelled with its name that its
// selector matches. The MachineSet whose template matches the MachineDeployment's (comparing the fields that
// need new Machines; labels, annotations, node timeouts and readiness gates are propagated in place) is the
// new one; the others are old. When none matches, or spec.rolloutAfter has passed since the newest was
// created, a new MachineSet is created, labelled with a hash of the template (machine-template-hash) and
// named after the MachineDeployment. RollingUpdate replaces Machines within maxSurge and maxUnavailable;
// OnDelete replaces a Machine only when the user deletes an old one. When spec.replicas changes during a
// rollout, or while spec.paused stops rollouts, the MachineSets are resized in proportion to their size.
// MachineSets carry the revision annotations; old MachineSets scaled to zero are deleted beyond
// spec.revisionHistoryLimit (1 when empty).
//
// A MachineDeployment is owned by its Cluster. While it is deleted, the cluster.x-k8s.io/machinedeployment
// finalizer keeps it until its MachineSets are gone.
//
// The controller watches MachineDeployments, their MachineSets, orphan MachineSets (to adopt them) and
// Clusters (to react to spec.paused). It relies on the MachineSet controller to create and delete Machines,
// and reads the Machines (through the cache) for the status and the OnDelete strategy.
package machinedeployment
