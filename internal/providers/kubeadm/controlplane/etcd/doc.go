// Package etcd talks to the members of a workload cluster's stacked etcd: it lists the members, the alarms
// and the leader, moves leadership and removes members. Connections are dialed by the caller: the kubeadm
// control plane provider dials each member through a port-forward of the workload API server to the member's
// `etcd-<node>` Pod, so a Client is made per Node, named after it.
package etcd
