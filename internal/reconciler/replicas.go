package reconciler

import (
	"context"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/capstan-dev/capstan/internal/rollout"
)

// DefaultReplicas fills in the spec.replicas of a MachineDeployment, MachineSet or MachinePool, *replicas,
// when it is empty, as upstream's defaulting webhook does (see rollout.DefaultReplicas): the object's
// current number of Machines is its status.replicas once it has been reconciled (observedGeneration above
// zero). Cluster autoscaler annotations that are not numbers are logged and ignored.
func DefaultReplicas(ctx context.Context, replicas **int32, annotations map[string]string, observedGeneration int64, statusReplicas int32) {
	if *replicas != nil {
		return
	}
	log := ctrl.LoggerFrom(ctx)
	var current *int32
	if observedGeneration > 0 {
		current = &statusReplicas
	}
	defaulted, err := rollout.DefaultReplicas(annotations, current)
	if err != nil {
		log.Error(err, "Ignoring the cluster autoscaler annotations")
	}
	log.Info("Defaulting spec.replicas", "replicas", defaulted)
	*replicas = &defaulted
}
