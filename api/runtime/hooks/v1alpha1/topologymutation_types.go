package v1alpha1

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
)

// GeneratePatchesRequest is the request of the GeneratePatches hook: every template of a Cluster's
// topology, with the variables, in one call.
// +kubebuilder:object:root=true
type GeneratePatchesRequest struct {
	metav1.TypeMeta `json:",inline"`

	// CommonRequest contains Settings field common to all request types.
	CommonRequest `json:",inline"`

	// variables are global variables for all templates.
	// +optional
	Variables []Variable `json:"variables,omitempty"`

	// items is the list of templates to generate patches for.
	Items []GeneratePatchesRequestItem `json:"items"`
}

// GeneratePatchesRequestItem is a template to generate patches for.
type GeneratePatchesRequestItem struct {
	// uid is an identifier for this template. It allows us to correlate the template in the request
	// with the corresponding generated patches in the response.
	// +required
	UID types.UID `json:"uid"`

	// holderReference is a reference to the object where the template is used.
	// +required
	HolderReference HolderReference `json:"holderReference"`

	// object contains the template as a raw object.
	// +required
	Object runtime.RawExtension `json:"object"`

	// variables are variables specific for the current template.
	// For example some builtin variables like MachineDeployment replicas and version are context-sensitive
	// and thus are only added to templates for MachineDeployments and with values which correspond to the
	// current MachineDeployment.
	// +optional
	Variables []Variable `json:"variables,omitempty"`
}

var _ ResponseObject = &GeneratePatchesResponse{}

// GeneratePatchesResponse is the response of the GeneratePatches hook. Its patches are applied in order to
// the templates of the request.
// +kubebuilder:object:root=true
type GeneratePatchesResponse struct {
	metav1.TypeMeta `json:",inline"`

	// CommonResponse contains Status and Message fields common to all response types.
	CommonResponse `json:",inline"`

	// items is the list of generated patches.
	// +optional
	Items []GeneratePatchesResponseItem `json:"items,omitempty"`
}

// GeneratePatchesResponseItem is a patch of one template of the request.
type GeneratePatchesResponseItem struct {
	// uid identifies the corresponding template in the request on which
	// the patch should be applied.
	// +required
	UID types.UID `json:"uid"`

	// patchType defines the type of the patch.
	// One of: "JSONPatch" or "JSONMergePatch".
	// +required
	PatchType PatchType `json:"patchType"`

	// patch contains the patch which should be applied to the template.
	// It must be of the corresponding PatchType.
	// +required
	Patch []byte `json:"patch"`
}

// PatchType is the kind of a generated patch.
// +enum
type PatchType string

const (
	// JSONPatchType identifies a https://datatracker.ietf.org/doc/html/rfc6902 JSON patch.
	JSONPatchType PatchType = "JSONPatch"

	// JSONMergePatchType identifies a https://datatracker.ietf.org/doc/html/rfc7386 JSON merge patch.
	JSONMergePatchType PatchType = "JSONMergePatch"
)

// ValidateTopologyRequest is the request of the ValidateTopology hook: every template of a Cluster's
// topology after all patches were applied.
// +kubebuilder:object:root=true
type ValidateTopologyRequest struct {
	metav1.TypeMeta `json:",inline"`

	// CommonRequest contains Settings field common to all request types.
	CommonRequest `json:",inline"`

	// variables are global variables for all templates.
	// +optional
	Variables []Variable `json:"variables,omitempty"`

	// items is the list of templates to validate.
	// +required
	Items []*ValidateTopologyRequestItem `json:"items"`
}

// ValidateTopologyRequestItem is a template to validate.
type ValidateTopologyRequestItem struct {
	// holderReference is a reference to the object where the template is used.
	// +required
	HolderReference HolderReference `json:"holderReference"`

	// object contains the template as a raw object.
	// +required
	Object runtime.RawExtension `json:"object"`

	// variables are variables specific for the current template.
	// For example some builtin variables like MachineDeployment replicas and version are context-sensitive
	// and thus are only added to templates for MachineDeployments and with values which correspond to the
	// current MachineDeployment.
	// +optional
	Variables []Variable `json:"variables,omitempty"`
}

var _ ResponseObject = &ValidateTopologyResponse{}

// ValidateTopologyResponse is the response of the ValidateTopology hook; status Failure refuses the
// topology with the message.
// +kubebuilder:object:root=true
type ValidateTopologyResponse struct {
	metav1.TypeMeta `json:",inline"`

	// CommonResponse contains Status and Message fields common to all response types.
	CommonResponse `json:",inline"`
}

// Variable is the value of a variable.
type Variable struct {
	// name of the variable.
	// +required
	Name string `json:"name"`

	// value of the variable.
	// +required
	Value apiextensionsv1.JSON `json:"value"`
}

// HolderReference is a reference to the object that uses a template.
type HolderReference struct {
	// apiVersion of the referent.
	// +required
	APIVersion string `json:"apiVersion"`

	// kind of the referent.
	// More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds
	// +required
	Kind string `json:"kind"`

	// namespace of the referent.
	// More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/namespaces/
	// +required
	Namespace string `json:"namespace"`

	// name of the referent.
	// More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names/#names
	// +required
	Name string `json:"name"`

	// fieldPath is the path to the field of the object which references the template.
	// +required
	FieldPath string `json:"fieldPath"`
}

// DiscoverVariablesRequest is the request of the DiscoverVariables hook.
// +kubebuilder:object:root=true
type DiscoverVariablesRequest struct {
	metav1.TypeMeta `json:",inline"`

	// CommonRequest contains Settings field common to all request types.
	CommonRequest `json:",inline"`
}

var _ ResponseObject = &DiscoverVariablesResponse{}

// DiscoverVariablesResponse is the response of the DiscoverVariables hook: the definitions of the
// variables the extension's patches use.
// +kubebuilder:object:root=true
type DiscoverVariablesResponse struct {
	metav1.TypeMeta `json:",inline"`

	// CommonResponse contains Status and Message fields common to all response types.
	CommonResponse `json:",inline"`

	// variables are variable schemas for variables defined by the DiscoverVariables hook.
	// +optional
	Variables []clusterv1.ClusterClassVariable `json:"variables,omitempty"`
}
