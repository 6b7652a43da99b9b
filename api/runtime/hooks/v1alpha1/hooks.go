package v1alpha1

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupVersion is the group and version of the hook requests and responses.
var GroupVersion = schema.GroupVersion{Group: "hooks.runtime.cluster.x-k8s.io", Version: "v1alpha1"}

// Hook is the name of a Runtime Hook, as discovery responses and ExtensionConfig handlers give it.
type Hook string

// The hooks of this version.
const (
	// Discovery asks an Extension server which handlers it serves. The core calls it when it reconciles an
	// ExtensionConfig.
	Discovery Hook = "Discovery"

	// CanUpdateMachine asks whether the changes of a control plane Machine, its infrastructure machine and
	// bootstrap config can be made in place; it answers patches of what it can update.
	CanUpdateMachine Hook = "CanUpdateMachine"
	// CanUpdateMachineSet asks the same for the Machines of a MachineSet, from the MachineSet and its
	// templates.
	CanUpdateMachineSet Hook = "CanUpdateMachineSet"
	// UpdateMachine updates a Machine in place; it is called again while it answers retryAfterSeconds.
	UpdateMachine Hook = "UpdateMachine"

	// BeforeClusterCreate is called before the objects of a Cluster's topology are created; it blocks.
	BeforeClusterCreate Hook = "BeforeClusterCreate"
	// AfterControlPlaneInitialized is called once after the control plane of a Cluster with a topology is
	// initialized; it does not block.
	AfterControlPlaneInitialized Hook = "AfterControlPlaneInitialized"
	// BeforeClusterUpgrade is called before a new spec.topology.version reaches the control plane, once
	// per upgrade; it blocks.
	BeforeClusterUpgrade Hook = "BeforeClusterUpgrade"
	// BeforeControlPlaneUpgrade is called before each version of the upgrade plan reaches the control
	// plane; it blocks.
	BeforeControlPlaneUpgrade Hook = "BeforeControlPlaneUpgrade"
	// AfterControlPlaneUpgrade is called once the control plane has a version of the upgrade plan and
	// before the workers or the control plane take the next; it blocks.
	AfterControlPlaneUpgrade Hook = "AfterControlPlaneUpgrade"
	// BeforeWorkersUpgrade is called before a version of the upgrade plan reaches the workers; it blocks.
	BeforeWorkersUpgrade Hook = "BeforeWorkersUpgrade"
	// AfterWorkersUpgrade is called once the workers have a version of the upgrade plan; it blocks.
	AfterWorkersUpgrade Hook = "AfterWorkersUpgrade"
	// AfterClusterUpgrade is called once the whole Cluster has the new version; it blocks the next
	// upgrade (since upstream Cluster API v1.12).
	AfterClusterUpgrade Hook = "AfterClusterUpgrade"
	// BeforeClusterDelete is called before the objects of a deleted Cluster with a topology are deleted;
	// it blocks.
	BeforeClusterDelete Hook = "BeforeClusterDelete"

	// GeneratePatches computes patches of the templates of a Cluster's topology.
	GeneratePatches Hook = "GeneratePatches"
	// ValidateTopology validates the templates of a Cluster's topology after every patch.
	ValidateTopology Hook = "ValidateTopology"
	// DiscoverVariables returns the definitions of the variables an external patch uses.
	DiscoverVariables Hook = "DiscoverVariables"

	// GenerateUpgradePlan returns the versions an upgrade of a Cluster's topology goes through, for a
	// ClusterClass that names the handler in spec.upgrade.external.generateUpgradePlanExtension.
	GenerateUpgradePlan Hook = "GenerateUpgradePlan"
)

// hookTypes are the request and response of each hook.
var hookTypes = map[Hook]func() (runtime.Object, ResponseObject){
	Discovery: func() (runtime.Object, ResponseObject) { return &DiscoveryRequest{}, &DiscoveryResponse{} },
	CanUpdateMachine: func() (runtime.Object, ResponseObject) {
		return &CanUpdateMachineRequest{}, &CanUpdateMachineResponse{}
	},
	CanUpdateMachineSet: func() (runtime.Object, ResponseObject) {
		return &CanUpdateMachineSetRequest{}, &CanUpdateMachineSetResponse{}
	},
	UpdateMachine: func() (runtime.Object, ResponseObject) {
		return &UpdateMachineRequest{}, &UpdateMachineResponse{}
	},
	BeforeClusterCreate: func() (runtime.Object, ResponseObject) {
		return &BeforeClusterCreateRequest{}, &BeforeClusterCreateResponse{}
	},
	AfterControlPlaneInitialized: func() (runtime.Object, ResponseObject) {
		return &AfterControlPlaneInitializedRequest{}, &AfterControlPlaneInitializedResponse{}
	},
	BeforeClusterUpgrade: func() (runtime.Object, ResponseObject) {
		return &BeforeClusterUpgradeRequest{}, &BeforeClusterUpgradeResponse{}
	},
	BeforeControlPlaneUpgrade: func() (runtime.Object, ResponseObject) {
		return &BeforeControlPlaneUpgradeRequest{}, &BeforeControlPlaneUpgradeResponse{}
	},
	AfterControlPlaneUpgrade: func() (runtime.Object, ResponseObject) {
		return &AfterControlPlaneUpgradeRequest{}, &AfterControlPlaneUpgradeResponse{}
	},
	BeforeWorkersUpgrade: func() (runtime.Object, ResponseObject) {
		return &BeforeWorkersUpgradeRequest{}, &BeforeWorkersUpgradeResponse{}
	},
	AfterWorkersUpgrade: func() (runtime.Object, ResponseObject) {
		return &AfterWorkersUpgradeRequest{}, &AfterWorkersUpgradeResponse{}
	},
	AfterClusterUpgrade: func() (runtime.Object, ResponseObject) {
		return &AfterClusterUpgradeRequest{}, &AfterClusterUpgradeResponse{}
	},
	BeforeClusterDelete: func() (runtime.Object, ResponseObject) {
		return &BeforeClusterDeleteRequest{}, &BeforeClusterDeleteResponse{}
	},
	GeneratePatches: func() (runtime.Object, ResponseObject) {
		return &GeneratePatchesRequest{}, &GeneratePatchesResponse{}
	},
	ValidateTopology: func() (runtime.Object, ResponseObject) {
		return &ValidateTopologyRequest{}, &ValidateTopologyResponse{}
	},
	DiscoverVariables: func() (runtime.Object, ResponseObject) {
		return &DiscoverVariablesRequest{}, &DiscoverVariablesResponse{}
	},
	GenerateUpgradePlan: func() (runtime.Object, ResponseObject) {
		return &GenerateUpgradePlanRequest{}, &GenerateUpgradePlanResponse{}
	},
}

// Hooks returns every hook of this version, Discovery first, in the order upstream's catalog registers
// them (the order of its files): the in-place update hooks, the lifecycle hooks, the topology mutation
// hooks, the upgrade plan hook.
func Hooks() []Hook {
	return []Hook{
		Discovery,
		CanUpdateMachine, CanUpdateMachineSet, UpdateMachine,
		BeforeClusterCreate, AfterControlPlaneInitialized, BeforeClusterUpgrade, BeforeControlPlaneUpgrade,
		AfterControlPlaneUpgrade, BeforeWorkersUpgrade, AfterWorkersUpgrade, AfterClusterUpgrade,
		BeforeClusterDelete,
		GeneratePatches, ValidateTopology, DiscoverVariables,
		GenerateUpgradePlan,
	}
}

// Known reports whether h is a hook of this version.
func (h Hook) Known() bool {
	_, ok := hookTypes[h]
	return ok
}

// New returns an empty request and response of the hook, their apiVersion and kind set.
func (h Hook) New() (runtime.Object, ResponseObject, error) {
	f, ok := hookTypes[h]
	if !ok {
		return nil, nil, fmt.Errorf("hook %q is not a hook of %s", h, GroupVersion)
	}
	req, resp := f()
	req.GetObjectKind().SetGroupVersionKind(h.RequestKind())
	resp.GetObjectKind().SetGroupVersionKind(h.ResponseKind())
	return req, resp, nil
}

// RequestKind is the apiVersion and kind of the hook's request.
func (h Hook) RequestKind() schema.GroupVersionKind {
	return GroupVersion.WithKind(string(h) + "Request")
}

// ResponseKind is the apiVersion and kind of the hook's response.
func (h Hook) ResponseKind() schema.GroupVersionKind {
	return GroupVersion.WithKind(string(h) + "Response")
}

// Blocking reports whether the hook's response has retryAfterSeconds, with which a handler holds what
// the hook precedes.
func (h Hook) Blocking() bool {
	f, ok := hookTypes[h]
	if !ok {
		return false
	}
	_, resp := f()
	_, retry := resp.(RetryResponseObject)
	return retry
}

// Path is the URL path of a handler of the hook, below the Extension server's base path:
// /hooks.runtime.cluster.x-k8s.io/v1alpha1/<hook in lower case>/<handler in lower case>. Discovery has no
// handler name.
func (h Hook) Path(handler string) string {
	p := "/" + GroupVersion.Group + "/" + GroupVersion.Version + "/" + strings.ToLower(string(h))
	if handler != "" {
		p += "/" + strings.ToLower(handler)
	}
	return p
}
