//go:build tools

// Package tools pins the kube-apiserver of Kubernetes v1.35 that `make test-e2e-chained` builds from
// k8s.io/kubernetes as bin/kube-apiserver-v1.35: the local provider runs it for control plane Machines at
// v1.35, so that the chained upgrade check (v1.35 → v1.37 in one change) sees each minor's API server.
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
)
