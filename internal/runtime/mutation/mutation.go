// Package mutation calls the topology mutation hooks of the Runtime SDK: GeneratePatches and
// ValidateTopology for the external patches of a ClusterClass (spec.patches[].external), as the
// topology engine's ExternalPatcher, and DiscoverVariables for the ClusterClass controller, which lists
// the discovered variables in status.variables with the patch's name as their "from".
package mutation

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	runtimehooksv1 "github.com/capstan-dev/capstan/api/runtime/hooks/v1alpha1"
	runtimeclient "github.com/capstan-dev/capstan/internal/runtime/client"
	"github.com/capstan-dev/capstan/internal/topology"
	"github.com/capstan-dev/capstan/internal/topology/variables"
)

// Patcher runs external patches by calling the extensions they name; it implements
// topology.ExternalPatcher.
type Patcher struct {
	Runtime *runtimeclient.Client
}

var _ topology.ExternalPatcher = &Patcher{}

// GeneratePatches calls the patch's generateExtension with the templates and variables of the request.
func (p *Patcher) GeneratePatches(ctx context.Context, in *topology.ExternalPatchRequest) ([]topology.GeneratedPatch, error) {
	ext := in.Patch.External
	if ext == nil || ext.GenerateExtension == nil {
		return nil, nil
	}
	req := &runtimehooksv1.GeneratePatchesRequest{Variables: hookVariables(in.Variables)}
	req.Settings = ext.Settings
	for _, it := range in.Items {
		raw, err := json.Marshal(it.Object.Object)
		if err != nil {
			return nil, err
		}
		req.Items = append(req.Items, runtimehooksv1.GeneratePatchesRequestItem{
			UID: types.UID(it.UID), HolderReference: holder(it.HolderReference),
			Object: runtime.RawExtension{Raw: raw}, Variables: hookVariables(it.Variables),
		})
	}
	resp := &runtimehooksv1.GeneratePatchesResponse{}
	if err := p.Runtime.Call(ctx, runtimehooksv1.GeneratePatches, *ext.GenerateExtension, in.Cluster, req, resp); err != nil {
		return nil, err
	}
	out := make([]topology.GeneratedPatch, 0, len(resp.Items))
	for _, it := range resp.Items {
		out = append(out, topology.GeneratedPatch{UID: string(it.UID), PatchType: topology.PatchType(it.PatchType), Patch: it.Patch})
	}
	return out, nil
}

// ValidateTopology calls the patch's validateExtension with the patched templates.
func (p *Patcher) ValidateTopology(ctx context.Context, in *topology.ExternalPatchRequest) error {
	ext := in.Patch.External
	if ext == nil || ext.ValidateExtension == nil {
		return nil
	}
	req := &runtimehooksv1.ValidateTopologyRequest{Variables: hookVariables(in.Variables)}
	req.Settings = ext.Settings
	for _, it := range in.Items {
		raw, err := json.Marshal(it.Object.Object)
		if err != nil {
			return err
		}
		req.Items = append(req.Items, &runtimehooksv1.ValidateTopologyRequestItem{
			HolderReference: holder(it.HolderReference), Object: runtime.RawExtension{Raw: raw}, Variables: hookVariables(it.Variables),
		})
	}
	resp := &runtimehooksv1.ValidateTopologyResponse{}
	return p.Runtime.Call(ctx, runtimehooksv1.ValidateTopology, *ext.ValidateExtension, in.Cluster, req, resp)
}

// DiscoverVariables calls the discoverVariablesExtension of every external patch of class and returns
// status.variables: the inline variables of the spec (from "inline") and the discovered ones (from the
// patch's name), sorted by name; a variable defined more than once with different definitions has
// definitionsConflict set. An error names the patches whose discovery failed.
func DiscoverVariables(ctx context.Context, rc *runtimeclient.Client, class *clusterv1.ClusterClass) ([]clusterv1.ClusterClassStatusVariable, error) {
	byName := map[string]*clusterv1.ClusterClassStatusVariable{}
	add := func(v clusterv1.ClusterClassVariable, from string) {
		d := clusterv1.ClusterClassStatusVariableDefinition{From: from, Required: v.Required, Metadata: v.Metadata, Schema: v.Schema}
		sv, ok := byName[v.Name]
		if !ok {
			byName[v.Name] = &clusterv1.ClusterClassStatusVariable{Name: v.Name, Definitions: []clusterv1.ClusterClassStatusVariableDefinition{d}}
			return
		}
		first := sv.Definitions[0]
		if first.Required != d.Required || !reflect.DeepEqual(first.Schema, d.Schema) || !reflect.DeepEqual(first.Metadata, d.Metadata) {
			sv.DefinitionsConflict = true
		}
		sv.Definitions = append(sv.Definitions, d)
	}
	for _, v := range class.Spec.Variables {
		add(v, clusterv1.VariableDefinitionFromInline)
	}
	var errs []string
	for _, p := range class.Spec.Patches {
		if p.External == nil || p.External.DiscoverVariablesExtension == nil {
			continue
		}
		if rc == nil {
			errs = append(errs, fmt.Sprintf("patch %s: the Runtime SDK is disabled (feature gate RuntimeSDK)", p.Name))
			continue
		}
		req := &runtimehooksv1.DiscoverVariablesRequest{}
		req.Settings = p.External.Settings
		resp := &runtimehooksv1.DiscoverVariablesResponse{}
		if err := rc.Call(ctx, runtimehooksv1.DiscoverVariables, *p.External.DiscoverVariablesExtension, class, req, resp); err != nil {
			errs = append(errs, fmt.Sprintf("failed to call DiscoverVariables for patch %s: %v", p.Name, err))
			continue
		}
		if _, err := variables.Compile(resp.Variables); err != nil {
			errs = append(errs, fmt.Sprintf("patch %s: the discovered variables are not valid: %v", p.Name, err))
			continue
		}
		for _, v := range resp.Variables {
			add(v, p.Name)
		}
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("VariableDiscovery failed: %s", strings.Join(errs, "; "))
	}
	out := make([]clusterv1.ClusterClassStatusVariable, 0, len(byName))
	for _, sv := range byName {
		out = append(out, *sv)
	}
	slices.SortFunc(out, func(a, b clusterv1.ClusterClassStatusVariable) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

func holder(h topology.HolderReference) runtimehooksv1.HolderReference {
	return runtimehooksv1.HolderReference{APIVersion: h.APIVersion, Kind: h.Kind, Namespace: h.Namespace, Name: h.Name, FieldPath: h.FieldPath}
}

// hookVariables lists a map of variables sorted by name, as upstream sends them.
func hookVariables(m map[string]apiextensionsv1.JSON) []runtimehooksv1.Variable {
	out := make([]runtimehooksv1.Variable, 0, len(m))
	for name, v := range m {
		out = append(out, runtimehooksv1.Variable{Name: name, Value: v})
	}
	slices.SortFunc(out, func(a, b runtimehooksv1.Variable) int { return strings.Compare(a.Name, b.Name) })
	return out
}
