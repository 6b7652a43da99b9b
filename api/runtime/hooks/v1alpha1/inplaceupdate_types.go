package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	clusterv1beta2 "github.com/capstan-dev/capstan/api/core/v1beta2"
)

// The in-place update hooks of upstream Cluster API v1.14 (its InPlaceUpdates feature). Their requests
// carry the Machine and the MachineSet as cluster.x-k8s.io/v1beta2, as upstream's do (capstan's lifecycle
// hooks carry a v1beta1 Cluster), and the provider's objects as they are, in runtime.RawExtensions. Only
// the specs matter: status is not sent.

// CanUpdateMachineRequest is the request of the CanUpdateMachine hook, with which the control plane asks
// whether the difference between a control plane Machine (and its infrastructure machine and bootstrap
// config) and what it should be can be applied in place.
// +kubebuilder:object:root=true
type CanUpdateMachineRequest struct {
	metav1.TypeMeta `json:",inline"`

	// CommonRequest contains fields common to all request types.
	CommonRequest `json:",inline"`

	// current holds the Machine and its objects as they are.
	// +required
	Current CanUpdateMachineRequestObjects `json:"current,omitempty,omitzero"`

	// desired holds the Machine and its objects as they should be.
	// +required
	Desired CanUpdateMachineRequestObjects `json:"desired,omitempty,omitzero"`
}

// CanUpdateMachineRequestObjects are the objects of one Machine, in a CanUpdateMachineRequest.
type CanUpdateMachineRequestObjects struct {
	// machine is the whole Machine object.
	// +required
	Machine clusterv1beta2.Machine `json:"machine,omitempty,omitzero"`

	// infrastructureMachine is the Machine's infrastructure machine object.
	// +required
	InfrastructureMachine runtime.RawExtension `json:"infrastructureMachine,omitempty,omitzero"`

	// bootstrapConfig is the Machine's bootstrap config object, when it has one.
	// +optional
	BootstrapConfig runtime.RawExtension `json:"bootstrapConfig,omitempty,omitzero"`
}

var _ ResponseObject = &CanUpdateMachineResponse{}

// CanUpdateMachineResponse is the response of the CanUpdateMachine hook: for each object, a patch that,
// applied to the current object, covers the changes the extension can make in place. Changes no patch
// covers are rolled out by replacing the Machine. It does not block.
// +kubebuilder:object:root=true
type CanUpdateMachineResponse struct {
	metav1.TypeMeta `json:",inline"`

	// CommonResponse contains Status and Message fields common to all response types.
	CommonResponse `json:",inline"`

	// machinePatch, applied to the current Machine, gives the changes the extension updates in place.
	// Only the fields of spec need to be covered.
	// +optional
	MachinePatch Patch `json:"machinePatch,omitempty,omitzero"`

	// infrastructureMachinePatch does the same for the infrastructure machine.
	// Only the fields of spec need to be covered.
	// +optional
	InfrastructureMachinePatch Patch `json:"infrastructureMachinePatch,omitempty,omitzero"`

	// bootstrapConfigPatch does the same for the bootstrap config.
	// Only the fields of spec need to be covered.
	// +optional
	BootstrapConfigPatch Patch `json:"bootstrapConfigPatch,omitempty,omitzero"`
}

// Patch is one patch of an object, a JSON patch or a JSON merge patch, of one or more operations.
type Patch struct {
	// patchType is JSONPatch or JSONMergePatch.
	// +required
	PatchType PatchType `json:"patchType,omitempty"`

	// patch is the patch of the object, of type patchType.
	// +required
	Patch []byte `json:"patch,omitempty"`
}

// IsDefined reports whether the patch has a type or content.
func (p *Patch) IsDefined() bool {
	return p.PatchType != "" || len(p.Patch) > 0
}

// CanUpdateMachineSetRequest is the request of the CanUpdateMachineSet hook, with which a
// MachineDeployment asks whether the difference between a MachineSet (and its infrastructure machine
// template and bootstrap config template) and what it should be can be applied in place to its Machines.
// +kubebuilder:object:root=true
type CanUpdateMachineSetRequest struct {
	metav1.TypeMeta `json:",inline"`

	// CommonRequest contains fields common to all request types.
	CommonRequest `json:",inline"`

	// current holds the MachineSet and its templates as they are.
	// +required
	Current CanUpdateMachineSetRequestObjects `json:"current,omitempty,omitzero"`

	// desired holds the MachineSet and its templates as they should be.
	// +required
	Desired CanUpdateMachineSetRequestObjects `json:"desired,omitempty,omitzero"`
}

// CanUpdateMachineSetRequestObjects are the objects of one MachineSet, in a CanUpdateMachineSetRequest.
type CanUpdateMachineSetRequestObjects struct {
	// machineSet is the whole MachineSet object.
	// Only the fields of spec.template.spec need to be covered by the patch.
	// +required
	MachineSet clusterv1beta2.MachineSet `json:"machineSet,omitempty,omitzero"`

	// infrastructureMachineTemplate is the MachineSet's infrastructure machine template object.
	// Only the fields of spec.template.spec need to be covered by the patch.
	// +required
	InfrastructureMachineTemplate runtime.RawExtension `json:"infrastructureMachineTemplate,omitempty,omitzero"`

	// bootstrapConfigTemplate is the MachineSet's bootstrap config template object, when it has one.
	// Only the fields of spec.template.spec need to be covered by the patch.
	// +optional
	BootstrapConfigTemplate runtime.RawExtension `json:"bootstrapConfigTemplate,omitempty,omitzero"`
}

var _ ResponseObject = &CanUpdateMachineSetResponse{}

// CanUpdateMachineSetResponse is the response of the CanUpdateMachineSet hook: for each object, a patch
// that, applied to the current object, covers the changes the extension can make in place. It does not
// block.
// +kubebuilder:object:root=true
type CanUpdateMachineSetResponse struct {
	metav1.TypeMeta `json:",inline"`

	// CommonResponse contains Status and Message fields common to all response types.
	CommonResponse `json:",inline"`

	// machineSetPatch, applied to the current MachineSet, gives the changes the extension updates in
	// place.
	// +optional
	MachineSetPatch Patch `json:"machineSetPatch,omitempty,omitzero"`

	// infrastructureMachineTemplatePatch does the same for the infrastructure machine template.
	// +optional
	InfrastructureMachineTemplatePatch Patch `json:"infrastructureMachineTemplatePatch,omitempty,omitzero"`

	// bootstrapConfigTemplatePatch does the same for the bootstrap config template.
	// +optional
	BootstrapConfigTemplatePatch Patch `json:"bootstrapConfigTemplatePatch,omitempty,omitzero"`
}

// UpdateMachineRequest is the request of the UpdateMachine hook, with which the Machine controller has the
// extension update a Machine in place, to what it should be.
// +kubebuilder:object:root=true
type UpdateMachineRequest struct {
	metav1.TypeMeta `json:",inline"`

	// CommonRequest contains fields common to all request types.
	CommonRequest `json:",inline"`

	// desired holds the Machine and its objects as they should be.
	// +required
	Desired UpdateMachineRequestObjects `json:"desired,omitempty,omitzero"`
}

// UpdateMachineRequestObjects are the objects of one Machine, in an UpdateMachineRequest.
type UpdateMachineRequestObjects struct {
	// machine is the whole Machine object.
	// +required
	Machine clusterv1beta2.Machine `json:"machine,omitempty,omitzero"`

	// infrastructureMachine is the Machine's infrastructure machine object.
	// +required
	InfrastructureMachine runtime.RawExtension `json:"infrastructureMachine,omitempty,omitzero"`

	// bootstrapConfig is the Machine's bootstrap config object, when it has one.
	// +optional
	BootstrapConfig runtime.RawExtension `json:"bootstrapConfig,omitempty,omitzero"`
}

var _ RetryResponseObject = &UpdateMachineResponse{}

// UpdateMachineResponse is the response of the UpdateMachine hook, which is called until the update is
// over:
//   - status Success and a non-zero retryAfterSeconds: the update is in progress, call again;
//   - status Success and retryAfterSeconds 0: the update is done;
//   - status Failure: the update failed.
//
// +kubebuilder:object:root=true
type UpdateMachineResponse struct {
	metav1.TypeMeta `json:",inline"`

	// CommonRetryResponse contains Status, Message and RetryAfterSeconds fields.
	CommonRetryResponse `json:",inline"`
}
