package v1alpha2

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Finalizer, labels, annotations and ConfigMap keys of the operator, as upstream's operator names them.
const (
	// ProviderFinalizer is set on every provider object so that deleting it first removes what the
	// operator installed.
	ProviderFinalizer = "provider.cluster.x-k8s.io"

	// ConfigMapVersionLabelName on a ConfigMap of provider artifacts names the version it holds; without
	// it, the ConfigMap's name is the version.
	ConfigMapVersionLabelName = "provider.cluster.x-k8s.io/version"
	// ConfigMapTypeLabel on a ConfigMap the operator writes names the provider type ("infrastructure").
	ConfigMapTypeLabel = "provider.cluster.x-k8s.io/type"
	// ConfigMapNameLabel on a ConfigMap the operator writes names the provider ("aws").
	ConfigMapNameLabel = "provider.cluster.x-k8s.io/name"
	// ConfigMapSourceLabel on a ConfigMap the operator writes says where the artifacts came from
	// ("oci", "url" or "builtin").
	ConfigMapSourceLabel = "provider.cluster.x-k8s.io/source"
	// ManagedByLabel marks the ConfigMaps the operator writes as its cache of fetched artifacts.
	ManagedByLabel = "managed-by.operator.cluster.x-k8s.io"

	// CompressedAnnotation set to "true" on a ConfigMap says its components are gzip-compressed, in
	// binaryData under the components key.
	CompressedAnnotation = "provider.cluster.x-k8s.io/compressed"
	// TrueValue is the value of boolean labels and annotations.
	TrueValue = "true"

	// MetadataConfigMapKey is the ConfigMap key of metadata.yaml.
	MetadataConfigMapKey = "metadata"
	// ComponentsConfigMapKey is the ConfigMap key of the components YAML.
	ComponentsConfigMapKey = "components"
	// AdditionalManifestsConfigMapKey is the key of the ConfigMap named by spec.additionalManifests.
	AdditionalManifestsConfigMapKey = "manifests"

	// OriginalReplicasAnnotation on a paused provider's Deployment records the replicas it had before the
	// operator scaled it to zero (the name the operator proposal gives it).
	OriginalReplicasAnnotation = "management.cluster.x-k8s.io/original-controller-replicas"

	// AppliedSpecHashAnnotation on a provider records the hash of the objects the last successful
	// installation applied (made from the spec, the configSecret, the release, additional manifests and
	// variables of the operator's environment).
	AppliedSpecHashAnnotation = "operator.cluster.x-k8s.io/applied-spec-hash"

	// AppliedFromAnnotation on a provider records short hashes of the parts the last installation was made
	// from (spec, fetchConfig, configSecret, release), so that a change says which part changed.
	AppliedFromAnnotation = "operator.cluster.x-k8s.io/applied-from"
)

// ProviderSpec is the desired state of a provider; every provider kind has it.
// +kubebuilder:validation:XValidation:rule="!(has(self.manifestPatches) && has(self.patches))",message="Cannot set both 'patches' and 'manifestPatches'"
type ProviderSpec struct {
	// version is the provider version to install, for example v1.10.0. When empty, the operator picks
	// the latest release that follows the core's contract and writes it here. Changing it upgrades or
	// downgrades the provider.
	// +optional
	Version string `json:"version,omitempty"`

	// manager sets the flags every Cluster API controller manager has on the "manager" container.
	// +optional
	Manager *ManagerSpec `json:"manager,omitempty"`

	// deployment overrides parts of the provider's Deployment.
	// +optional
	Deployment *DeploymentSpec `json:"deployment,omitempty"`

	// configSecret names a Secret whose keys are the variables of the provider's components (credentials,
	// settings), as clusterctl reads them from its configuration; GITHUB_TOKEN, OCI_USERNAME,
	// OCI_PASSWORD, OCI_ACCESS_TOKEN and OCI_REFRESH_TOKEN authenticate fetches, and "images" overrides
	// images in clusterctl's syntax. The namespace defaults to the provider's.
	// +optional
	ConfigSecret *SecretReference `json:"configSecret,omitempty"`

	// fetchConfig says where the provider's components and metadata come from. When empty, the provider's
	// name and kind select one of clusterctl's built-in providers.
	// +optional
	FetchConfig *FetchConfiguration `json:"fetchConfig,omitempty"`

	// additionalManifests names a ConfigMap whose "manifests" key holds more objects to apply with the
	// provider's components. The namespace defaults to the provider's.
	// +optional
	AdditionalManifestsRef *ConfigmapReference `json:"additionalManifests,omitempty"`

	// manifestPatches are JSON merge patches (RFC 7396), in YAML or JSON, applied in order to the objects
	// of the same kind (and apiVersion, name and namespace, when the patch gives them).
	// +optional
	ManifestPatches []string `json:"manifestPatches,omitempty"`

	// patches are applied in order to the objects their target selects: a list is a JSON patch
	// (RFC 6902), a mapping a merge patch.
	// +optional
	Patches []*Patch `json:"patches,omitempty"`

	// additionalDeployments customises, by Deployment name, Deployments of the provider other than its
	// controller manager.
	// +optional
	AdditionalDeployments map[string]AdditionalDeployments `json:"additionalDeployments,omitempty"`

	// paused scales the provider's Deployments to zero and stops the operator from changing anything else
	// of the provider, recording the replicas in the management.cluster.x-k8s.io/original-controller-replicas
	// annotation. A core upgrade to a new contract waits until every provider still on the old contract
	// is paused; unpausing a provider that is still on an older contract than the core is refused.
	// +optional
	Paused bool `json:"paused,omitempty"`
}

// Patch is a patch of the provider's objects.
type Patch struct {
	// patch is the patch, in YAML or JSON: a list is a JSON patch (RFC 6902), a mapping a merge patch.
	// +optional
	Patch string `json:"patch,omitempty"`
	// target selects the objects to patch; every object when empty.
	Target *PatchSelector `json:"target,omitempty"`
}

// PatchSelector selects objects by group, version, kind, name, namespace and labels; empty fields match
// everything.
type PatchSelector struct {
	// group is the API group.
	// +optional
	Group string `json:"group,omitempty"`

	// version is the API version.
	// +optional
	Version string `json:"version,omitempty"`

	// kind is the kind.
	// +optional
	Kind string `json:"kind,omitempty"`

	// name is the object's name.
	// +optional
	Name string `json:"name,omitempty"`

	// namespace is the object's namespace.
	// +optional
	Namespace string `json:"namespace,omitempty"`

	// labelSelector is a label selector in kubectl's syntax, for example "app=x,tier!=db".
	// +optional
	LabelSelector string `json:"labelSelector,omitempty"`
}

// AdditionalDeployments customises a Deployment of the provider other than its controller manager.
type AdditionalDeployments struct {
	// manager sets controller manager flags on the Deployment's "manager" container (else its first).
	// +optional
	Manager *ManagerSpec `json:"manager,omitempty"`

	// deployment overrides parts of the Deployment.
	// +optional
	Deployment *DeploymentSpec `json:"deployment,omitempty"`
}

// ConfigmapReference names a ConfigMap.
type ConfigmapReference struct {
	// name is the ConfigMap's name.
	Name string `json:"name"`

	// namespace is the ConfigMap's namespace; the provider's when empty.
	// +optional
	Namespace string `json:"namespace,omitempty"`
}

// SecretReference names a Secret.
type SecretReference struct {
	// name is the Secret's name.
	Name string `json:"name"`

	// namespace is the Secret's namespace; the provider's when empty.
	// +optional
	Namespace string `json:"namespace,omitempty"`
}

// ManagerSpec sets the flags every Cluster API controller manager has.
type ManagerSpec struct {
	// ControllerManagerConfiguration holds leader election, sync period, metrics, health and webhook settings.
	ControllerManagerConfiguration `json:",inline"`

	// profilerAddress sets --profiler-address, the pprof endpoint (for example localhost:6060).
	// +optional
	ProfilerAddress string `json:"profilerAddress,omitempty"`

	// maxConcurrentReconciles sets --max-concurrent-reconciles.
	// +optional
	// +kubebuilder:validation:Minimum=1
	MaxConcurrentReconciles int `json:"maxConcurrentReconciles,omitempty"`

	// verbosity sets the log verbosity (--v); 1 leaves the manifest's as it is.
	// +optional
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=0
	Verbosity int `json:"verbosity,omitempty"`

	// debug runs the manager for a debugging session, as the operator proposal describes: --v=5 and
	// --profiler-address=localhost:6060, whatever verbosity and profilerAddress say. While it is true, no
	// other field of the provider's spec may change (a capstan addition from the proposal).
	// +optional
	Debug bool `json:"debug,omitempty"`

	// featureGates are merged into the --feature-gates of the manager.
	FeatureGates map[string]bool `json:"featureGates,omitempty"`

	// additionalArgs sets more flags of the manager, as --name=value.
	// +optional
	AdditionalArgs map[string]string `json:"additionalArgs,omitempty"`
}

// DeploymentSpec overrides parts of a provider's Deployment.
type DeploymentSpec struct {
	// replicas is the number of replicas; the manifest's when unset. A paused provider runs none.
	// +optional
	// +kubebuilder:validation:Minimum=0
	Replicas *int `json:"replicas,omitempty"`

	// nodeSelector replaces the pods' node selector.
	// +optional
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`

	// tolerations replaces the pods' tolerations; an empty list removes them.
	// +optional
	Tolerations *[]corev1.Toleration `json:"tolerations,omitempty"`

	// affinity replaces the pods' affinity.
	// +optional
	Affinity *corev1.Affinity `json:"affinity,omitempty"`

	// containers overrides containers, by name.
	// +optional
	Containers []ContainerSpec `json:"containers,omitempty"`

	// serviceAccountName replaces the pods' service account.
	// +optional
	ServiceAccountName string `json:"serviceAccountName,omitempty"`

	// imagePullSecrets replaces the pods' image pull secrets.
	// +optional
	ImagePullSecrets []corev1.LocalObjectReference `json:"imagePullSecrets,omitempty"`
}

// ContainerSpec overrides parts of one container of a provider's Deployment.
// +kubebuilder:validation:XValidation:rule="!(has(self.imageUrl) && has(self.image))",message="Cannot set both 'imageUrl' and 'image'"
type ContainerSpec struct {
	// name is the container's name; a container of that name must exist.
	Name string `json:"name"`

	// imageUrl replaces the container's image.
	// +optional
	ImageURL *string `json:"imageUrl,omitempty"`

	// image replaces parts of the container's image, keeping the parts it does not give (a capstan
	// addition from the operator proposal). Not with imageUrl.
	// +optional
	Image *ImageMeta `json:"image,omitempty"`

	// args sets flags of the container as --key=value, replacing a flag of the same name. The settings of
	// spec.manager win over these. The key namespace is ignored, as the operator proposal says: providers
	// watch every namespace (spec.manager.cacheNamespace sets --namespace).
	// +optional
	Args map[string]string `json:"args,omitempty"`

	// env sets environment variables, replacing those of the same name.
	// +optional
	Env []corev1.EnvVar `json:"env,omitempty"`

	// resources replaces the container's resource requirements.
	// +optional
	Resources *corev1.ResourceRequirements `json:"resources,omitempty"`

	// command replaces the container's command.
	Command []string `json:"command,omitempty"`
}

// ImageMeta is a container image in parts: repository/name:tag.
type ImageMeta struct {
	// repository is the registry and path of the image, for example registry.internal/capi.
	// +optional
	Repository string `json:"repository,omitempty"`

	// name is the image's name, for example cluster-api-aws-controller.
	// +optional
	Name string `json:"name,omitempty"`

	// tag is the image's tag, for example v2.8.0.
	// +optional
	Tag string `json:"tag,omitempty"`
}

// FetchConfiguration says where a provider's components and metadata come from: exactly one of oci,
// url and selector.
// +kubebuilder:validation:XValidation:rule="[has(self.oci), has(self.url), has(self.selector)].exists_one(x,x)", message="Must specify one and only one of {oci, url, selector}"
type FetchConfiguration struct {
	// OCIConfiguration holds oci.
	OCIConfiguration `json:",inline"`

	// url is a provider repository: a GitHub releases URL (https://github.com/{owner}/{repository}/releases),
	// a GitLab package URL (https://{host}/api/v4/projects/{project}/packages/generic/{package}), or any
	// http(s) URL of a folder laid out as clusterctl's local repositories are ({url}/{version}/{file}, or
	// {url}/{provider label}/{version}/{file}).
	// +optional
	URL string `json:"url,omitempty"`

	// selector selects ConfigMaps in the provider's namespace, one per version, each holding the
	// "metadata" and "components" keys (components may be gzip-compressed in binaryData with the
	// provider.cluster.x-k8s.io/compressed annotation). The version is the provider.cluster.x-k8s.io/version
	// label, else the ConfigMap's name. Nothing is fetched from the network.
	// +optional
	Selector *metav1.LabelSelector `json:"selector,omitempty"`
}

// OCIConfiguration names an OCI artifact holding a provider's components and metadata.
type OCIConfiguration struct {
	// oci is an OCI artifact reference, registry/repository[:tag]; the tag defaults to spec.version. An
	// http:// prefix reaches the registry over plain HTTP.
	// +optional
	OCI string `json:"oci,omitempty"`
}

// ProviderStatus is the observed state of a provider; every provider kind has it.
type ProviderStatus struct {
	// contract is the Cluster API contract the installed version follows, for example v1beta1.
	// +optional
	Contract *string `json:"contract,omitempty"`

	// conditions say how the provider is doing: PreflightCheckPassed, ProviderInstalled,
	// ProviderUpgraded, Paused, Ready and DeletionBlocked.
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// observedGeneration is the generation the operator last acted on.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// installedVersion is the version installed.
	// +optional
	InstalledVersion *string `json:"installedVersion,omitempty"`

	// fetchedRelease pins the release the operator last fetched over the network and keeps in its cache:
	// a cached copy of that version whose digest differs is refused (a capstan addition).
	// +optional
	FetchedRelease *FetchedRelease `json:"fetchedRelease,omitempty"`
}

// FetchedRelease is a release the operator fetched.
type FetchedRelease struct {
	// version is the release's version.
	Version string `json:"version"`

	// digest is sha256:<hex> of the release's metadata.yaml and components, as fetched.
	Digest string `json:"digest"`
}
