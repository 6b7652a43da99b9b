package v1alpha1

import (
	"bytes"
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	operatorv1 "github.com/capstan-dev/capstan/api/operator/v1alpha2"
)

// ProviderSpec is the desired state of a provider, as the operator proposal defines it.
type ProviderSpec struct {
	// version is the provider version to install, for example v0.4.9; when empty, the latest release
	// that follows the core's contract, written back here.
	// +optional
	Version string `json:"version,omitempty"`

	// manager sets the flags of the provider's controller manager.
	// +optional
	Manager *ManagerSpec `json:"manager,omitempty"`

	// deployment overrides parts of the provider's Deployment.
	// +optional
	Deployment *DeploymentSpec `json:"deployment,omitempty"`

	// secretName names the Secret whose keys are the variables of the provider's components
	// (credentials, settings); GITHUB_TOKEN authenticates fetches.
	// +optional
	SecretName string `json:"secretName,omitempty"`

	// secretNamespace is the namespace of the Secret; the provider's when empty.
	// +optional
	SecretNamespace string `json:"secretNamespace,omitempty"`

	// fetchConfig says where the provider's components and metadata come from; when empty, clusterctl's
	// built-in provider of the object's name and kind.
	// +optional
	FetchConfig *FetchConfiguration `json:"fetchConfig,omitempty"`

	// paused scales the provider's Deployments to zero and holds every other change but its version
	// (contract upgrades).
	// +optional
	Paused bool `json:"paused,omitempty"`
}

// ManagerSpec sets the flags of a provider's controller manager.
type ManagerSpec struct {
	// ControllerManagerConfigurationSpec holds leader election, sync period, metrics, health and webhook
	// settings.
	ControllerManagerConfigurationSpec `json:",inline"`

	// metricsAddress sets --metrics-bind-addr, as metrics.bindAddress does (the proposal's examples use
	// this name).
	// +optional
	MetricsAddress string `json:"metricsAddress,omitempty"`

	// profilerAddress sets --profiler-address, for example localhost:6060.
	// +optional
	ProfilerAddress string `json:"profilerAddress,omitempty"`

	// maxConcurrentReconciles sets --max-concurrent-reconciles; a --<kind>-concurrency flag in the
	// container's args wins for its controller.
	// +optional
	// +kubebuilder:validation:Minimum=1
	MaxConcurrentReconciles int `json:"maxConcurrentReconciles,omitempty"`

	// verbosity sets --v; 1 leaves the manifest's as it is.
	// +optional
	// +kubebuilder:validation:Minimum=0
	Verbosity *int `json:"verbosity,omitempty"`

	// debug runs the manager for a debugging session (--v=5, --profiler-address=localhost:6060); while it
	// is true, no other field of the spec may change.
	// +optional
	Debug bool `json:"debug,omitempty"`

	// featureGates are merged into the manager's --feature-gates.
	// +optional
	FeatureGates map[string]bool `json:"featureGates,omitempty"`
}

// ControllerManagerConfigurationSpec is controller-runtime's component configuration, as the proposal
// embeds it.
type ControllerManagerConfigurationSpec struct {
	// syncPeriod sets --sync-period: a number of seconds (660), or a duration (11m).
	// +optional
	SyncPeriod *intstr.IntOrString `json:"syncPeriod,omitempty"`

	// leaderElection sets the --leader-elect flags.
	// +optional
	LeaderElection *operatorv1.LeaderElectionConfiguration `json:"leaderElection,omitempty"`

	// cacheNamespace sets --namespace.
	// +optional
	CacheNamespace string `json:"cacheNamespace,omitempty"`

	// gracefulShutDown sets --graceful-shutdown-timeout.
	// +optional
	GracefulShutdownTimeout *metav1.Duration `json:"gracefulShutDown,omitempty"`

	// metrics sets the metrics flags.
	// +optional
	Metrics operatorv1.ControllerMetrics `json:"metrics,omitempty"`

	// health sets the health probe flags.
	// +optional
	Health operatorv1.ControllerHealth `json:"health,omitempty"`

	// webhook sets the webhook server flags.
	// +optional
	Webhook operatorv1.ControllerWebhook `json:"webhook,omitempty"`
}

// DeploymentSpec overrides parts of a provider's Deployment.
type DeploymentSpec struct {
	// replicas is the number of replicas; the manifest's when unset.
	// +optional
	// +kubebuilder:validation:Minimum=0
	Replicas *int `json:"replicas,omitempty"`

	// nodeSelector replaces the pods' node selector.
	// +optional
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`

	// tolerations replaces the pods' tolerations.
	// +optional
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`

	// affinity replaces the pods' affinity.
	// +optional
	Affinity *corev1.Affinity `json:"affinity,omitempty"`

	// containers overrides containers, by name.
	// +optional
	Containers []ContainerSpec `json:"containers,omitempty"`
}

// ContainerSpec overrides parts of one container of a provider's Deployment.
type ContainerSpec struct {
	// name is the container's name.
	Name string `json:"name"`

	// image replaces the container's image: a whole reference as a string
	// (gcr.io/myregistry/capa-controller:v0.6.0-foo), or parts of it as an object (repository, name, tag),
	// the parts not given kept.
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	Image *Image `json:"image,omitempty"`

	// args sets flags of the container as --key=value; values are strings or numbers. The key namespace is
	// ignored: providers watch every namespace. The settings of manager win over these.
	// +optional
	Args map[string]intstr.IntOrString `json:"args,omitempty"`

	// env sets environment variables, replacing those of the same name.
	// +optional
	Env []corev1.EnvVar `json:"env,omitempty"`

	// resources replaces the container's resource requirements.
	// +optional
	Resources *corev1.ResourceRequirements `json:"resources,omitempty"`
}

// Image is a container image: a reference, or parts of one.
// +kubebuilder:validation:Type=""
type Image struct {
	// Reference is the whole reference, when the image is given as a string.
	Reference string `json:"-"`
	// Parts are the parts, when the image is given as an object.
	Parts *operatorv1.ImageMeta `json:"-"`
	// Invalid holds an image that is neither (the schema cannot refuse it): the operator refuses it.
	Invalid json.RawMessage `json:"-"`
}

// UnmarshalJSON reads a string or an object of repository, name and tag; anything else is kept in
// Invalid, so that the object can still be read (and the mistake reported).
func (i *Image) UnmarshalJSON(data []byte) error {
	*i = Image{}
	var ref string
	if err := json.Unmarshal(data, &ref); err == nil {
		i.Reference = ref
		return nil
	}
	var parts operatorv1.ImageMeta
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&parts); err == nil {
		i.Parts = &parts
		return nil
	}
	i.Invalid = append(json.RawMessage{}, data...)
	return nil
}

// MarshalJSON writes the string, the object, or what was invalid.
func (i Image) MarshalJSON() ([]byte, error) {
	switch {
	case len(i.Invalid) > 0:
		return i.Invalid, nil
	case i.Parts != nil:
		return json.Marshal(i.Parts)
	default:
		return json.Marshal(i.Reference)
	}
}

// Validate says what is wrong with the image.
func (i *Image) Validate() error {
	if len(i.Invalid) > 0 {
		return fmt.Errorf("%s is neither a string nor an object of repository, name and tag", i.Invalid)
	}
	return nil
}

// FetchConfiguration says where a provider's components and metadata come from: exactly one of url and
// selector.
// +kubebuilder:validation:XValidation:rule="has(self.url) != has(self.selector)",message="Must specify one and only one of {url, selector}"
type FetchConfiguration struct {
	// url is a provider repository, for example https://github.com/{owner}/{repository}/releases, or any
	// http(s) folder in clusterctl's local repository layout.
	// +optional
	URL string `json:"url,omitempty"`

	// selector selects ConfigMaps of the provider's namespace, one per version, holding "metadata" and
	// "components".
	// +optional
	Selector *metav1.LabelSelector `json:"selector,omitempty"`
}

// ProviderStatus is the observed state of a provider: the status of the operator.cluster.x-k8s.io/v1alpha2
// object it is translated into, and the Translated condition.
type ProviderStatus struct {
	// contract is the Cluster API contract the installed version follows.
	// +optional
	Contract *string `json:"contract,omitempty"`

	// conditions are those of the v1alpha2 object, and Translated, which names it.
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// observedGeneration is the generation the operator last acted on.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// installedVersion is the version installed.
	// +optional
	InstalledVersion *string `json:"installedVersion,omitempty"`
}

// TranslatedCondition is True when the object is translated into its v1alpha2 object, which the message
// names.
const TranslatedCondition = "Translated"

// Reasons of TranslatedCondition.
const (
	// TranslatedReason says the v1alpha2 object is up to date.
	TranslatedReason = "Translated"
	// TranslationFailedReason says the spec cannot be translated (the message says why).
	TranslationFailedReason = "TranslationFailed"
	// NameTakenReason says a v1alpha2 object of the same kind, name and namespace exists that another
	// object owns.
	NameTakenReason = "NameTaken"
)
