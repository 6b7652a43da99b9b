package rollout

import (
	ctrl "sigs.k8s.io/controller-runtime"

	"context"

	"fmt"
	"strconv"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
)

// DefaultReplicas returns the replicas of a MachineSet or MachineDeployment whose spec.replicas is empty,
// as upstream's defaulting webhook computes them. With both cluster autoscaler annotations set, it is the
// minimum size for a new object and, for an object handed over to the autoscaler by removing
// spec.replicas, its current number of Machines (current) kept within the autoscaler's range. Otherwise
// it is 1. An annotation that is not a number is an error, and the annotations are then ignored.
func DefaultReplicas(annotations map[string]string, current *int32) (int32, error) {
	minRaw, hasMin := annotations[clusterv1.AutoscalerMinSizeAnnotation]
	maxRaw, hasMax := annotations[clusterv1.AutoscalerMaxSizeAnnotation]
	if !hasMin || !hasMax {
		return 1, nil
	}
	minSize, err := strconv.ParseInt(minRaw, 10, 32)
	if err != nil {
		return 1, fmt.Errorf("parsing annotation %s: %w", clusterv1.AutoscalerMinSizeAnnotation, err)
	}
	maxSize, err := strconv.ParseInt(maxRaw, 10, 32)
	if err != nil {
		return 1, fmt.Errorf("parsing annotation %s: %w", clusterv1.AutoscalerMaxSizeAnnotation, err)
	}
	switch {
	case current == nil || int64(*current) < minSize:
		return int32(minSize), nil
	case int64(*current) > maxSize:
		return int32(maxSize), nil
	default:
		return *current, nil
	}
}

// DefaultSpecReplicas fills in the spec.replicas of a MachineDeployment, MachineSet or MachinePool, *replicas,
// when it is empty, as upstream's defaulting webhook does (DefaultReplicas): the object's
// current number of Machines is its status.replicas once it has been reconciled (observedGeneration above
// zero). Cluster autoscaler annotations that are not numbers are logged and ignored.
func DefaultSpecReplicas(ctx context.Context, replicas **int32, annotations map[string]string, observedGeneration int64, statusReplicas int32) {
	if *replicas != nil {
		return
	}
	log := ctrl.LoggerFrom(ctx)
	var current *int32
	if observedGeneration > 0 {
		current = &statusReplicas
	}
	defaulted, err := DefaultReplicas(annotations, current)
	if err != nil {
		log.Error(err, "Ignoring the cluster autoscaler annotations")
	}
	log.Info("Defaulting spec.replicas", "replicas", defaulted)
	*replicas = &defaulted
}
