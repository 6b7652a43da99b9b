// Package tree builds and prints the "at a glance" view of a Cluster that `clusterctl describe cluster`
// shows: the Cluster, its infrastructure, its control plane and their Machines, the workers
// (MachineDeployments, optionally their MachineSets, and Machines), and optionally templates and
// ClusterResourceSets, with the state of each as upstream clusterctl prints it.
//
// It works in three steps, so that the middle one can be tested with plain objects:
//   - Discover reads the objects of a Cluster from a management cluster into Objects;
//   - Build turns Objects into a Tree: it drops echoes (provider objects of a Machine whose state adds
//     nothing to the Machine's), groups sibling Machines in the same state on one row and marks the objects
//     whose conditions are all listed (--show-conditions);
//   - Print renders a Tree as a table, in the v1beta2 layout (NAME REPLICAS AVAILABLE READY UP TO DATE
//     STATUS REASON SINCE MESSAGE) or the v1beta1 one (NAME READY SEVERITY REASON SINCE MESSAGE), with or
//     without colors, measuring SINCE from a clock the caller gives.
package tree
