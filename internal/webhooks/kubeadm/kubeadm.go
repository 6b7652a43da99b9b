// Package kubeadm holds the webhooks of the kubeadm bootstrap and control plane managers. Their kinds are
// validated by CEL rules in their CRDs; what needs a webhook is the conversion between the versions the
// CRDs serve (v1beta1 and v1beta2), which each manager serves for its own kinds, as upstream's do.
package kubeadm

import (
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/capstan-dev/capstan/internal/conversion"
	"github.com/capstan-dev/capstan/internal/webhooks"
)

// The namespaces of the providers' manifests (clusterctl moves them to --target-namespace), upstream's.
const (
	BootstrapNamespace    = "capi-kubeadm-bootstrap-system"
	ControlPlaneNamespace = "capi-kubeadm-control-plane-system"
)

// Where the manifests of the Sets are kept, from the repository root.
const (
	BootstrapManifestsFile    = "config/kubeadm-bootstrap/webhooks.yaml"
	ControlPlaneManifestsFile = "config/kubeadm-control-plane/webhooks.yaml"
)

// selector selects the manager Pods of either provider in its namespace.
var selector = map[string]string{"control-plane": "controller-manager"}

// Bootstrap returns the kubeadm bootstrap manager's webhooks: the conversion of KubeadmConfig and
// KubeadmConfigTemplate.
func Bootstrap() webhooks.Set {
	return webhooks.Set{Prefix: "capi-kubeadm-bootstrap", Selector: selector, Conversions: conversion.KubeadmBootstrap()}
}

// ControlPlane returns the kubeadm control plane manager's webhooks: the conversion of
// KubeadmControlPlane and KubeadmControlPlaneTemplate; versions gives the apiVersion of the
// infrastructure templates their v1beta1 references name (nil for rendering manifests).
func ControlPlane(versions conversion.APIVersions) webhooks.Set {
	return webhooks.Set{Prefix: "capi-kubeadm-control-plane", Selector: selector, Conversions: conversion.KubeadmControlPlane(versions)}
}

// BootstrapManifests renders the webhook Service of the bootstrap manager (BootstrapManifestsFile).
func BootstrapManifests() ([]byte, error) {
	return Bootstrap().ManifestsYAML(runtime.NewScheme(), BootstrapNamespace)
}

// ControlPlaneManifests renders the webhook Service of the control plane manager (ControlPlaneManifestsFile).
func ControlPlaneManifests() ([]byte, error) {
	return ControlPlane(nil).ManifestsYAML(runtime.NewScheme(), ControlPlaneNamespace)
}
