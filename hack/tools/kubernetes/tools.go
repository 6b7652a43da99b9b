//go:build tools

// Package tools pins the Kubernetes binaries that `make tools` builds from k8s.io/kubernetes:
// kube-apiserver, kube-controller-manager (garbage collection and namespace lifecycle for the embedded
// management cluster) and kubectl.
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kubectl"
)
