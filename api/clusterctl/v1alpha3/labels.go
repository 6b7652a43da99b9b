package v1alpha3

import "fmt"

// Labels and annotations that clusterctl sets and reads.
const (
	// ClusterctlLabel is set on every object clusterctl installs (components, CRDs, inventory); its value
	// names the part, for example "inventory" or "cert-manager" on clusterctl's own objects.
	ClusterctlLabel = "clusterctl.cluster.x-k8s.io"

	// ClusterctlCoreLabel marks objects of clusterctl's own (the inventory CRD, cert-manager).
	ClusterctlCoreLabel = "clusterctl.cluster.x-k8s.io/core"

	// ClusterctlCoreLabelInventoryValue is the ClusterctlCoreLabel value of the inventory CRD.
	ClusterctlCoreLabelInventoryValue = "inventory"

	// ClusterctlCoreLabelCertManagerValue is the ClusterctlCoreLabel value of cert-manager's objects.
	ClusterctlCoreLabelCertManagerValue = "cert-manager"

	// ClusterctlMoveLabel on a CRD (or an object) makes clusterctl move its objects even when nothing owns them.
	ClusterctlMoveLabel = "clusterctl.cluster.x-k8s.io/move"

	// ClusterctlMoveHierarchyLabel on a CRD (or an object) makes clusterctl move its objects together with
	// everything they own.
	ClusterctlMoveHierarchyLabel = "clusterctl.cluster.x-k8s.io/move-hierarchy"

	// BlockMoveAnnotation on an object makes clusterctl move wait until the annotation is removed.
	BlockMoveAnnotation = "clusterctl.cluster.x-k8s.io/block-move"

	// DeleteForMoveAnnotation is added to objects that clusterctl move deletes from the source, so their
	// controllers know not to act on the deletion.
	DeleteForMoveAnnotation = "clusterctl.cluster.x-k8s.io/delete-for-move"

	// SkipCRDNamePreflightCheckAnnotation on a CRD skips clusterctl's check that it is named <plural>.<group>.
	SkipCRDNamePreflightCheckAnnotation = "clusterctl.cluster.x-k8s.io/skip-crd-name-preflight-check"

	// CertManagerVersionAnnotation records the version of cert-manager that clusterctl installed.
	CertManagerVersionAnnotation = "cert-manager.clusterctl.cluster.x-k8s.io/version"
)

// ManifestLabel returns the label clusterctl uses for a provider's objects and in repository paths:
// "cluster-api" for the core provider and "<type prefix>-<name>" for the others, for example
// "infrastructure-local" or "control-plane-kubeadm".
func ManifestLabel(name string, providerType ProviderType) string {
	switch providerType {
	case CoreProviderType:
		return name
	case BootstrapProviderType:
		return fmt.Sprintf("bootstrap-%s", name)
	case ControlPlaneProviderType:
		return fmt.Sprintf("control-plane-%s", name)
	case InfrastructureProviderType:
		return fmt.Sprintf("infrastructure-%s", name)
	case IPAMProviderType:
		return fmt.Sprintf("ipam-%s", name)
	case RuntimeExtensionProviderType:
		return fmt.Sprintf("runtime-extension-%s", name)
	case AddonProviderType:
		return fmt.Sprintf("addon-%s", name)
	default:
		return name
	}
}
