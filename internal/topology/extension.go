package topology

import (
	"context"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
)

// ExternalPatcher runs the external patches of a ClusterClass (patches with spec.patches[].external), for
// example by calling the GeneratePatches and ValidateTopology hooks of Runtime Extensions. Compute calls
// it, when Options.ExternalPatcher is set, at the position of each external patch in spec.patches (inline
// and external patches run in the order of the list), and calls ValidateTopology for every patch with a
// validateExtension once all patches are applied. A class with external patches and no ExternalPatcher is
// an error.
type ExternalPatcher interface {
	// GeneratePatches returns the patches that the patch's generateExtension computes for the items.
	GeneratePatches(ctx context.Context, req *ExternalPatchRequest) ([]GeneratedPatch, error)
	// ValidateTopology asks the patch's validateExtension whether the patched items are valid; an error
	// (with the extension's message) fails the computation.
	ValidateTopology(ctx context.Context, req *ExternalPatchRequest) error
}

// ExternalPatchRequest is what an external patch receives: the templates of the desired state, with
// their variables, as upstream's GeneratePatchesRequest and ValidateTopologyRequest carry them.
type ExternalPatchRequest struct {
	// Cluster is the Cluster whose topology is computed.
	Cluster *clusterv1.Cluster
	// Patch is the ClusterClass patch being run; Patch.External names the extensions and their settings.
	Patch clusterv1.ClusterClassPatch
	// Variables are the Cluster's variable values (defaulted and validated), without builtins.
	Variables map[string]apiextensionsv1.JSON
	// Items are the templates to patch, in a deterministic order.
	Items []PatchItem
}

// PatchItem is one template of the desired state offered to an external patch. The InfraCluster and the
// control plane are offered as templates (their spec under spec.template.spec), as upstream does.
type PatchItem struct {
	// UID identifies the item within the request.
	UID string
	// HolderReference names the object that references the template and the field that does.
	HolderReference HolderReference
	// Object is the template; an ExternalPatcher must not change it (it returns patches instead).
	Object *unstructured.Unstructured
	// Variables are the variables specific to the item: "builtin" and the MachineDeployment overrides.
	Variables map[string]apiextensionsv1.JSON
}

// HolderReference names the object that references a template and the field that does.
type HolderReference struct {
	APIVersion string
	Kind       string
	Namespace  string
	Name       string
	// FieldPath is the field of the holder, for example spec.infrastructureRef or
	// spec.template.spec.bootstrap.configRef.
	FieldPath string
}

// PatchType is the format of a GeneratedPatch.
type PatchType string

const (
	// JSONPatchType is an RFC 6902 JSON patch.
	JSONPatchType PatchType = "JSONPatch"
	// JSONMergePatchType is an RFC 7386 JSON merge patch.
	JSONMergePatchType PatchType = "JSONMergePatch"
)

// GeneratedPatch is a patch an external patch returns for one item.
type GeneratedPatch struct {
	// UID is the UID of the item to patch.
	UID string
	// PatchType is the format of Patch.
	PatchType PatchType
	// Patch is the patch document.
	Patch []byte
}

// HookResponse is the answer of a blocking lifecycle hook.
type HookResponse struct {
	// RetryAfter blocks the operation and asks to try again after this long when not zero.
	RetryAfter time.Duration
	// Message says why the hook blocks.
	Message string
}

// Blocking reports whether the hook holds the operation back.
func (r HookResponse) Blocking() bool { return r.RetryAfter > 0 }
