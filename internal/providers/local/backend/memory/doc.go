// Package memory is the local provider's `memory` backend: workload clusters without processes, for
// scale tests. One HTTPS server in the provider's process serves every workload cluster's Kubernetes API
// (discovery, Nodes, Pods, ConfigMaps, Secrets, RBAC, Leases... with watch) from an in-memory object
// store per cluster, on the cluster's endpoint port, and answers the etcd member API a control plane
// provider uses through the pods/portforward subresource of the etcd Pods.
package memory
