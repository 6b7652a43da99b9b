package v1beta2

import (
	corev1 "k8s.io/api/core/v1"
)

// StatusVersion is a version and the number of replicas that run it.
type StatusVersion struct {
	// version is a Kubernetes version.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	Version string `json:"version,omitempty"`

	// replicas is the number of replicas at this version.
	// +optional
	// +kubebuilder:validation:Minimum=1
	Replicas int32 `json:"replicas,omitempty"`
}

// StatusUpgradePlanVersion is one step of an upgrade plan.
type StatusUpgradePlanVersion struct {
	// version is a Kubernetes version.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	Version string `json:"version,omitempty"`
}

// MachineAddressType is the type of a Machine's address.
// +kubebuilder:validation:Enum=Hostname;ExternalIP;InternalIP;ExternalDNS;InternalDNS
type MachineAddressType string

const (
	// MachineHostName is a host name.
	MachineHostName MachineAddressType = "Hostname"
	// MachineExternalIP is an IP address reachable from outside the cluster.
	MachineExternalIP MachineAddressType = "ExternalIP"
	// MachineInternalIP is an IP address reachable inside the cluster.
	MachineInternalIP MachineAddressType = "InternalIP"
	// MachineExternalDNS is a DNS name reachable from outside the cluster.
	MachineExternalDNS MachineAddressType = "ExternalDNS"
	// MachineInternalDNS is a DNS name reachable inside the cluster.
	MachineInternalDNS MachineAddressType = "InternalDNS"
)

// MachineAddress is an address of a Machine.
type MachineAddress struct {
	// type of the address.
	// +required
	Type MachineAddressType `json:"type,omitempty"`

	// address is the address itself.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	Address string `json:"address,omitempty"`
}

// MachineAddresses is a list of a Machine's addresses.
// +kubebuilder:validation:MaxItems=256
// +listType=atomic
type MachineAddresses []MachineAddress

// ObjectMeta is the metadata (labels and annotations) that capstan puts on the objects it creates.
// +kubebuilder:validation:MinProperties=1
type ObjectMeta struct {
	// labels to put on the objects.
	// +optional
	Labels map[string]string `json:"labels,omitempty"`

	// annotations to put on the objects.
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`
}

// ContractVersionedObjectReference references an object of a provider by API group, kind and name, in
// the namespace of the referrer; the version is the one the provider's contract label names.
type ContractVersionedObjectReference struct {
	// kind of the object.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-zA-Z]([-a-zA-Z0-9]*[a-zA-Z0-9])?$`
	Kind string `json:"kind,omitempty"`

	// name of the object.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	Name string `json:"name,omitempty"`

	// apiGroup of the object.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	APIGroup string `json:"apiGroup,omitempty"`
}

// IsDefined says whether any field of the reference is set.
func (r *ContractVersionedObjectReference) IsDefined() bool {
	return r != nil && (r.Kind != "" || r.Name != "" || r.APIGroup != "")
}

// MachineTaint is a taint that a Machine puts on its Node.
// +kubebuilder:validation:XValidation:rule="!(self.key in ['node.cluster.x-k8s.io/uninitialized', 'node.cluster.x-k8s.io/outdated-revision'])",message="taint key is not allowed",fieldPath=".key"
// +kubebuilder:validation:XValidation:rule="!self.key.startsWith('node.kubernetes.io/') || self.key == 'node.kubernetes.io/out-of-service'",message="taint key must not have the prefix node.kubernetes.io/, except for node.kubernetes.io/out-of-service",fieldPath=".key"
// +kubebuilder:validation:XValidation:rule="!self.key.startsWith('node.cloudprovider.kubernetes.io/')",message="taint key must not have the prefix node.cloudprovider.kubernetes.io/",fieldPath=".key"
// +kubebuilder:validation:XValidation:rule="self.key != 'node-role.kubernetes.io/master'",message="taint is deprecated since 1.24 and should not be used anymore",fieldPath=".key"
type MachineTaint struct {
	// key of the taint.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=317
	// +kubebuilder:validation:Pattern=^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$
	Key string `json:"key,omitempty"`

	// value of the taint.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$
	Value string `json:"value,omitempty"`

	// effect of the taint.
	// +required
	// +kubebuilder:validation:Enum=NoSchedule;PreferNoSchedule;NoExecute
	Effect corev1.TaintEffect `json:"effect,omitempty"`

	// propagation says when the taint is put on the Node: Always, or OnInitialization only.
	// +required
	Propagation MachineTaintPropagation `json:"propagation,omitempty"`
}

// MachineTaintPropagation says when a MachineTaint is put on the Node.
// +kubebuilder:validation:Enum=Always;OnInitialization
type MachineTaintPropagation string

const (
	// MachineTaintPropagationAlways keeps the taint on the Node.
	MachineTaintPropagationAlways MachineTaintPropagation = "Always"
	// MachineTaintPropagationOnInitialization puts the taint on the Node when it is created only.
	MachineTaintPropagationOnInitialization MachineTaintPropagation = "OnInitialization"
)

// ConditionPolarity says whether a condition is good when True (Positive) or when False (Negative).
// +kubebuilder:validation:Enum=Positive;Negative
type ConditionPolarity string

const (
	// PositivePolarityCondition is a condition that is good when True.
	PositivePolarityCondition ConditionPolarity = "Positive"
	// NegativePolarityCondition is a condition that is good when False.
	NegativePolarityCondition ConditionPolarity = "Negative"
)
