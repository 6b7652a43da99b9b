// Package kubeversion orders Kubernetes versions as Cluster API does, build metadata included, and counts
// them for the status.versions of MachineSets, MachineDeployments, MachinePools, control planes and
// Clusters (upstream Cluster API v1.14's internal/util/version).
package kubeversion
