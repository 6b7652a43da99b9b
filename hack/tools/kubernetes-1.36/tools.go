//go:build tools

// Package tools pins the kube-apiserver of the previous Kubernetes minor that `make tools` builds from
// k8s.io/kubernetes as bin/kube-apiserver-v1.36: the local provider runs it for control plane Machines
// at v1.36, so that a workload cluster's API server reports the Machine's version.
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
)
