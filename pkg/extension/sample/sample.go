// Package sample is a sample Runtime Extension, built on package extension: the handlers of
// `capstan extension-sample`, and an example to start an Extension from.
//
// Lifecycle hooks: BeforeClusterCreate, BeforeClusterUpgrade, BeforeControlPlaneUpgrade,
// BeforeWorkersUpgrade, AfterWorkersUpgrade and BeforeClusterDelete hold their operation while the Cluster
// has the annotation extension-sample.capstan.dev/hold-create, hold-upgrade, hold-control-plane-upgrade,
// hold-workers-upgrade, hold-after-workers-upgrade or hold-delete, asking to be called again after the
// annotation's value in seconds (5 when it is not a number); AfterControlPlaneInitialized logs. Upgrade
// plan: GenerateUpgradePlan steps the control plane through the .0 release of every minor between its
// version and the target, and leaves the workers' steps to capstan. Topology mutation: GeneratePatches adds
// `echo <banner>` to the preKubeadmCommands of the KubeadmConfigTemplates and KubeadmControlPlaneTemplates
// of a topology whose variable sampleBanner is set, and DiscoverVariables defines sampleBanner.
package sample

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/blang/semver/v4"
	"github.com/go-logr/logr"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	hooksv1 "github.com/capstan-dev/capstan/api/runtime/hooks/v1alpha1"
	"github.com/capstan-dev/capstan/pkg/extension"
)

// The annotations that hold the lifecycle operations, and the variable of the patches.
const (
	HoldCreateAnnotation              = "extension-sample.capstan.dev/hold-create"
	HoldUpgradeAnnotation             = "extension-sample.capstan.dev/hold-upgrade"
	HoldControlPlaneUpgradeAnnotation = "extension-sample.capstan.dev/hold-control-plane-upgrade"
	HoldWorkersUpgradeAnnotation      = "extension-sample.capstan.dev/hold-workers-upgrade"
	HoldAfterWorkersUpgradeAnnotation = "extension-sample.capstan.dev/hold-after-workers-upgrade"
	HoldDeleteAnnotation              = "extension-sample.capstan.dev/hold-delete"
	BannerVariable                    = "sampleBanner"
)

// defaultHoldSeconds is how long a hold asks to wait when its annotation is not a number.
const defaultHoldSeconds = 5

// Register adds the sample's handlers to s.
func Register(s *extension.Server) error {
	errs := []error{
		extension.AddHandler(s, extension.Handler[*hooksv1.BeforeClusterCreateRequest, *hooksv1.BeforeClusterCreateResponse]{
			Hook: hooksv1.BeforeClusterCreate, Name: "before-cluster-create",
			Func: func(ctx context.Context, req *hooksv1.BeforeClusterCreateRequest, resp *hooksv1.BeforeClusterCreateResponse) {
				hold(ctx, &req.Cluster, HoldCreateAnnotation, &resp.CommonRetryResponse)
			},
		}),
		extension.AddHandler(s, extension.Handler[*hooksv1.BeforeClusterUpgradeRequest, *hooksv1.BeforeClusterUpgradeResponse]{
			Hook: hooksv1.BeforeClusterUpgrade, Name: "before-cluster-upgrade",
			Func: func(ctx context.Context, req *hooksv1.BeforeClusterUpgradeRequest, resp *hooksv1.BeforeClusterUpgradeResponse) {
				hold(ctx, &req.Cluster, HoldUpgradeAnnotation, &resp.CommonRetryResponse)
			},
		}),
		extension.AddHandler(s, extension.Handler[*hooksv1.BeforeControlPlaneUpgradeRequest, *hooksv1.BeforeControlPlaneUpgradeResponse]{
			Hook: hooksv1.BeforeControlPlaneUpgrade, Name: "before-control-plane-upgrade",
			Func: func(ctx context.Context, req *hooksv1.BeforeControlPlaneUpgradeRequest, resp *hooksv1.BeforeControlPlaneUpgradeResponse) {
				hold(ctx, &req.Cluster, HoldControlPlaneUpgradeAnnotation, &resp.CommonRetryResponse)
			},
		}),
		extension.AddHandler(s, extension.Handler[*hooksv1.BeforeWorkersUpgradeRequest, *hooksv1.BeforeWorkersUpgradeResponse]{
			Hook: hooksv1.BeforeWorkersUpgrade, Name: "before-workers-upgrade",
			Func: func(ctx context.Context, req *hooksv1.BeforeWorkersUpgradeRequest, resp *hooksv1.BeforeWorkersUpgradeResponse) {
				hold(ctx, &req.Cluster, HoldWorkersUpgradeAnnotation, &resp.CommonRetryResponse)
			},
		}),
		extension.AddHandler(s, extension.Handler[*hooksv1.AfterWorkersUpgradeRequest, *hooksv1.AfterWorkersUpgradeResponse]{
			Hook: hooksv1.AfterWorkersUpgrade, Name: "after-workers-upgrade",
			Func: func(ctx context.Context, req *hooksv1.AfterWorkersUpgradeRequest, resp *hooksv1.AfterWorkersUpgradeResponse) {
				hold(ctx, &req.Cluster, HoldAfterWorkersUpgradeAnnotation, &resp.CommonRetryResponse)
			},
		}),
		extension.AddHandler(s, extension.Handler[*hooksv1.GenerateUpgradePlanRequest, *hooksv1.GenerateUpgradePlanResponse]{
			Hook: hooksv1.GenerateUpgradePlan, Name: "generate-upgrade-plan", Func: GenerateUpgradePlan,
		}),
		extension.AddHandler(s, extension.Handler[*hooksv1.BeforeClusterDeleteRequest, *hooksv1.BeforeClusterDeleteResponse]{
			Hook: hooksv1.BeforeClusterDelete, Name: "before-cluster-delete",
			Func: func(ctx context.Context, req *hooksv1.BeforeClusterDeleteRequest, resp *hooksv1.BeforeClusterDeleteResponse) {
				hold(ctx, &req.Cluster, HoldDeleteAnnotation, &resp.CommonRetryResponse)
			},
		}),
		extension.AddHandler(s, extension.Handler[*hooksv1.AfterControlPlaneInitializedRequest, *hooksv1.AfterControlPlaneInitializedResponse]{
			Hook: hooksv1.AfterControlPlaneInitialized, Name: "after-control-plane-initialized",
			Func: func(ctx context.Context, req *hooksv1.AfterControlPlaneInitializedRequest, _ *hooksv1.AfterControlPlaneInitializedResponse) {
				logr.FromContextOrDiscard(ctx).Info("The control plane is initialized", "cluster", req.Cluster.Namespace+"/"+req.Cluster.Name)
			},
		}),
		extension.AddHandler(s, extension.Handler[*hooksv1.GeneratePatchesRequest, *hooksv1.GeneratePatchesResponse]{
			Hook: hooksv1.GeneratePatches, Name: "generate-patches", Func: GeneratePatches,
		}),
		extension.AddHandler(s, extension.Handler[*hooksv1.DiscoverVariablesRequest, *hooksv1.DiscoverVariablesResponse]{
			Hook: hooksv1.DiscoverVariables, Name: "discover-variables", Func: DiscoverVariables,
		}),
	}
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// hold asks to be called again while the Cluster has the annotation.
func hold(ctx context.Context, c *clusterv1.Cluster, annotation string, resp *hooksv1.CommonRetryResponse) {
	value, ok := c.Annotations[annotation]
	if !ok {
		return
	}
	seconds, err := strconv.Atoi(value)
	if err != nil || seconds <= 0 {
		seconds = defaultHoldSeconds
	}
	logr.FromContextOrDiscard(ctx).Info("Holding", "cluster", c.Namespace+"/"+c.Name, "annotation", annotation)
	resp.RetryAfterSeconds = int32(seconds) //nolint:gosec // a few seconds
	resp.Message = fmt.Sprintf("Cluster has the %s annotation", annotation)
}

// GenerateUpgradePlan steps the control plane through the .0 release of every minor between its version
// and the target (v1.30.5 to v1.33.2: v1.31.0, v1.32.0, v1.33.2; a patch or one-minor upgrade is one step)
// and answers no workers' steps: capstan then upgrades the workers as few times as the version skew
// policy allows. An extension for production would pick the versions its machine images exist for.
func GenerateUpgradePlan(ctx context.Context, req *hooksv1.GenerateUpgradePlanRequest, resp *hooksv1.GenerateUpgradePlanResponse) {
	logr.FromContextOrDiscard(ctx).Info("Generating the upgrade plan", "cluster", req.Cluster.Namespace+"/"+req.Cluster.Name,
		"fromControlPlane", req.FromControlPlaneKubernetesVersion, "fromWorkers", req.FromWorkersKubernetesVersion, "to", req.ToKubernetesVersion)
	from, err := semver.ParseTolerant(req.FromControlPlaneKubernetesVersion)
	if err != nil {
		resp.Status, resp.Message = hooksv1.ResponseStatusFailure, fmt.Sprintf("the control plane's version %q is not a semantic version", req.FromControlPlaneKubernetesVersion)
		return
	}
	to, err := semver.ParseTolerant(req.ToKubernetesVersion)
	if err != nil {
		resp.Status, resp.Message = hooksv1.ResponseStatusFailure, fmt.Sprintf("the target version %q is not a semantic version", req.ToKubernetesVersion)
		return
	}
	switch {
	case from.Major != to.Major:
		resp.Status, resp.Message = hooksv1.ResponseStatusFailure, fmt.Sprintf("cannot upgrade from %s to another major version, %s", req.FromControlPlaneKubernetesVersion, req.ToKubernetesVersion)
		return
	case to.LT(from):
		resp.Status, resp.Message = hooksv1.ResponseStatusFailure, fmt.Sprintf("the target version %s is lower than the control plane's, %s", req.ToKubernetesVersion, req.FromControlPlaneKubernetesVersion)
		return
	case from.Equals(to) && slices.Equal(from.Build, to.Build):
		return // the control plane runs the target already; only the workers upgrade
	}
	for minor := from.Minor + 1; minor < to.Minor; minor++ {
		resp.ControlPlaneUpgrades = append(resp.ControlPlaneUpgrades, hooksv1.UpgradeStep{Version: fmt.Sprintf("v%d.%d.0", to.Major, minor)})
	}
	resp.ControlPlaneUpgrades = append(resp.ControlPlaneUpgrades, hooksv1.UpgradeStep{Version: req.ToKubernetesVersion})
}

// GeneratePatches adds `echo <sampleBanner>` to the preKubeadmCommands of the kubeadm templates.
func GeneratePatches(_ context.Context, req *hooksv1.GeneratePatchesRequest, resp *hooksv1.GeneratePatchesResponse) {
	for _, item := range req.Items {
		banner, found, err := stringVariable(BannerVariable, req.Variables, item.Variables)
		if err != nil {
			resp.Status, resp.Message = hooksv1.ResponseStatusFailure, err.Error()
			return
		}
		if !found {
			continue
		}
		var obj struct {
			APIVersion string         `json:"apiVersion"`
			Kind       string         `json:"kind"`
			Spec       map[string]any `json:"spec"`
		}
		if err := json.Unmarshal(item.Object.Raw, &obj); err != nil {
			resp.Status, resp.Message = hooksv1.ResponseStatusFailure, fmt.Sprintf("template %s is not an object: %v", item.HolderReference.Name, err)
			return
		}
		if !strings.HasPrefix(obj.APIVersion, "bootstrap.cluster.x-k8s.io/") && !strings.HasPrefix(obj.APIVersion, "controlplane.cluster.x-k8s.io/") {
			continue
		}
		var path []string
		switch obj.Kind {
		case "KubeadmConfigTemplate":
			path = []string{"spec", "template", "spec", "preKubeadmCommands"}
		case "KubeadmControlPlaneTemplate":
			path = []string{"spec", "template", "spec", "kubeadmConfigSpec", "preKubeadmCommands"}
		default:
			continue
		}
		patch := addToList(map[string]any{"spec": obj.Spec}, path, "echo "+banner)
		data, err := json.Marshal(patch)
		if err != nil {
			resp.Status, resp.Message = hooksv1.ResponseStatusFailure, err.Error()
			return
		}
		resp.Items = append(resp.Items, hooksv1.GeneratePatchesResponseItem{UID: item.UID, PatchType: hooksv1.JSONPatchType, Patch: data})
	}
}

// addToList returns the JSON patch that appends value to the list at path, creating the parents that
// are missing.
func addToList(obj map[string]any, path []string, value string) []map[string]any {
	current := any(obj)
	for i, key := range path {
		m, ok := current.(map[string]any)
		if !ok {
			break
		}
		next, exists := m[key]
		if !exists {
			// Create what is missing from here in one operation.
			var v any = []any{value}
			for j := len(path) - 1; j > i; j-- {
				v = map[string]any{path[j]: v}
			}
			return []map[string]any{{"op": "add", "path": "/" + strings.Join(path[:i+1], "/"), "value": v}}
		}
		current = next
	}
	return []map[string]any{{"op": "add", "path": "/" + strings.Join(path, "/") + "/-", "value": value}}
}

// stringVariable returns a string variable, the template's value before the global one.
func stringVariable(name string, global, template []hooksv1.Variable) (string, bool, error) {
	for _, list := range [][]hooksv1.Variable{template, global} {
		for _, v := range list {
			if v.Name != name {
				continue
			}
			var s string
			if err := json.Unmarshal(v.Value.Raw, &s); err != nil {
				return "", false, fmt.Errorf("variable %s must be a string: %w", name, err)
			}
			return s, true, nil
		}
	}
	return "", false, nil
}

// DiscoverVariables defines sampleBanner.
func DiscoverVariables(_ context.Context, _ *hooksv1.DiscoverVariablesRequest, resp *hooksv1.DiscoverVariablesResponse) {
	resp.Variables = []clusterv1.ClusterClassVariable{{
		Name: BannerVariable,
		Schema: clusterv1.VariableSchema{OpenAPIV3Schema: clusterv1.JSONSchemaProps{
			Type: "string", Description: "sampleBanner is echoed by the nodes' preKubeadmCommands.", MaxLength: ptrInt64(200),
		}},
	}}
}

func ptrInt64(v int64) *int64 { return &v }
