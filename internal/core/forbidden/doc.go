// Package forbidden holds the integration test of the core controllers running with less than the RBAC
// they need: the core's ClusterRole without the infrastructure provider group. The Cluster and Machine say
// in a condition that the core is forbidden to read their infrastructure objects, rather than the
// reconcile hanging on a cache that never syncs.
package forbidden
