package topology

import (
	"context"
	"errors"
	"regexp"

	"k8s.io/apimachinery/pkg/util/validation/field"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/topology/variables"
)

// perTemplate matches the builtin variables that differ from one template of a Cluster to another.
var perTemplate = regexp.MustCompile(`\.builtin\.(controlPlane|machineDeployment|machinePool)\b`)

// PatchState says whether a patch of a ClusterClass is enabled for a Cluster.
type PatchState struct {
	// Name is the patch's name.
	Name string
	// Enabled is the result of its enabledIf (true when it has none).
	Enabled bool
	// Err says why enabledIf could not be evaluated at the Cluster's level (a template that reads
	// variables of one template, such as builtin.machineDeployment, is evaluated for each template).
	Err error
}

// PatchesEnabled evaluates the enabledIf of each patch of class for cluster, with the Cluster's variables
// (defaulted as the topology controller resolves them) and the Cluster's builtin variables
// (builtin.cluster), as the topology controller evaluates external patches. It is what a view of the
// Cluster shows as "applied"; an inline patch is also limited by its selectors, which this ignores.
func PatchesEnabled(ctx context.Context, class *clusterv1.ClusterClass, cluster *clusterv1.Cluster) ([]PatchState, error) {
	if cluster.Spec.Topology == nil {
		return nil, errors.New("the Cluster has no spec.topology")
	}
	defs, err := variables.FromClass(class)
	if err != nil {
		return nil, err
	}
	resolved, err := defs.Resolve(ctx, cluster.Spec.Topology.Variables, field.NewPath("spec", "topology", "variables"))
	if err != nil {
		return nil, err
	}
	c := &computation{ctx: ctx, bp: &Blueprint{ClusterClass: class}, cluster: cluster, topology: cluster.Spec.Topology}
	builtin := map[string]any{"cluster": c.builtinCluster()}
	out := make([]PatchState, 0, len(class.Spec.Patches))
	for _, p := range class.Spec.Patches {
		if p.EnabledIf != nil && perTemplate.MatchString(*p.EnabledIf) {
			out = append(out, PatchState{Name: p.Name, Err: errors.New("enabledIf reads the variables of each template (builtin.controlPlane, .machineDeployment or .machinePool)")})
			continue
		}
		// Each patch sees the variables of its source (its own definitions for an external patch).
		ok, err := enabled(p.EnabledIf, withBuiltin(resolved.For(patchSource(p)), builtin))
		out = append(out, PatchState{Name: p.Name, Enabled: ok, Err: err})
	}
	return out, nil
}
