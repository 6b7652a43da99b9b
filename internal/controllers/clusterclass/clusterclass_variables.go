package clusterclass

import (
	"context"
	"strings"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/runtime/mutation"
)

// The variables that Runtime Extensions define (topology mutation hooks): for every patch with
// external.discoverVariablesExtension the DiscoverVariables hook is called and its variables are listed
// in status.variables with the patch's name as their "from", as upstream does.

// discoveryRetry is how soon a failed variable discovery is tried again.
const discoveryRetry = 10 * time.Second

// hasDiscovery reports whether a patch of class discovers variables from an extension.
func hasDiscovery(class *clusterv1.ClusterClass) bool {
	for _, p := range class.Spec.Patches {
		if p.External != nil && p.External.DiscoverVariablesExtension != nil {
			return true
		}
	}
	return false
}

// discoverVariables replaces status.variables with the inline and discovered variables; when discovery
// fails, status.variables keeps what it had and f says why.
func (r *Reconciler) discoverVariables(ctx context.Context, class *clusterv1.ClusterClass, f *facts) {
	if !hasDiscovery(class) {
		return
	}
	vars, err := mutation.DiscoverVariables(ctx, r.RuntimeClient, class)
	if err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Discovering the variables of the ClusterClass")
		f.discoveryErr = err
		return
	}
	class.Status.Variables = vars
}

// extensionConfigToClasses maps an ExtensionConfig to the ClusterClasses whose external patches name
// one of its handlers (<handler>.<ExtensionConfig>), so that a newly discovered extension's variables
// are picked up at once.
func (r *Reconciler) extensionConfigToClasses(ctx context.Context, o client.Object) []reconcile.Request {
	classes := &clusterv1.ClusterClassList{}
	if err := r.Client.List(ctx, classes); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Listing ClusterClasses for an ExtensionConfig")
		return nil
	}
	var out []reconcile.Request
	for i := range classes.Items {
		c := &classes.Items[i]
		for _, p := range c.Spec.Patches {
			if p.External != nil && p.External.DiscoverVariablesExtension != nil && strings.HasSuffix(*p.External.DiscoverVariablesExtension, "."+o.GetName()) {
				out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(c)})
				break
			}
		}
	}
	return out
}
