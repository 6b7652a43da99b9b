//go:build tools

// Package tools pins the kube-apiserver that `make tools` builds from k8s.io/kubernetes.
package tools

import _ "k8s.io/kubernetes/cmd/kube-apiserver"
