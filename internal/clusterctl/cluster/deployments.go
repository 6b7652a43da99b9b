package cluster

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-logr/logr"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
)

// ReplicasBeforeUpgradeAnnotation on a provider's Deployment records its replicas while an upgrade keeps
// it scaled to zero, so that they can be restored if the upgrade stops before reaching the provider.
const ReplicasBeforeUpgradeAnnotation = "clusterctl.cluster.x-k8s.io/replicas-before-upgrade"

// progressInterval is how often a long wait says what it is waiting for.
const progressInterval = 15 * time.Second

// ProviderDeployments returns the Deployments of a provider's components, sorted by name.
func (c *Client) ProviderDeployments(ctx context.Context, label, namespace string) ([]appsv1.Deployment, error) {
	cl, err := c.connect()
	if err != nil {
		return nil, err
	}
	list := &appsv1.DeploymentList{}
	if err := cl.List(ctx, list, client.InNamespace(namespace), client.MatchingLabels{clusterv1.ProviderNameLabel: label}); err != nil {
		return nil, fmt.Errorf("listing the Deployments of %s: %w", label, err)
	}
	slices.SortFunc(list.Items, func(a, b appsv1.Deployment) int { return strings.Compare(a.Name, b.Name) })
	return list.Items, nil
}

// ScaleDownDeployments scales a provider's Deployments to zero replicas, recording the replicas they had
// (once: scaling down again keeps the first record).
func (c *Client) ScaleDownDeployments(ctx context.Context, label, namespace string) error {
	cl, err := c.connect()
	if err != nil {
		return err
	}
	deployments, err := c.ProviderDeployments(ctx, label, namespace)
	if err != nil {
		return err
	}
	for i := range deployments {
		d := &deployments[i]
		replicas := int32(1)
		if d.Spec.Replicas != nil {
			replicas = *d.Spec.Replicas
		}
		if replicas == 0 {
			continue
		}
		before := d.DeepCopy()
		if d.Annotations == nil {
			d.Annotations = map[string]string{}
		}
		if _, ok := d.Annotations[ReplicasBeforeUpgradeAnnotation]; !ok {
			d.Annotations[ReplicasBeforeUpgradeAnnotation] = strconv.Itoa(int(replicas))
		}
		zero := int32(0)
		d.Spec.Replicas = &zero
		if err := cl.Patch(ctx, d, client.MergeFrom(before)); err != nil {
			return fmt.Errorf("scaling down Deployment %s/%s: %w", d.Namespace, d.Name, err)
		}
	}
	return nil
}

// RestoreDeployments gives a provider's Deployments back the replicas ScaleDownDeployments recorded.
func (c *Client) RestoreDeployments(ctx context.Context, label, namespace string) error {
	cl, err := c.connect()
	if err != nil {
		return err
	}
	deployments, err := c.ProviderDeployments(ctx, label, namespace)
	if err != nil {
		return err
	}
	for i := range deployments {
		d := &deployments[i]
		recorded, ok := d.Annotations[ReplicasBeforeUpgradeAnnotation]
		if !ok {
			continue
		}
		n, err := strconv.Atoi(recorded)
		if err != nil || n < 0 {
			n = 1
		}
		before := d.DeepCopy()
		delete(d.Annotations, ReplicasBeforeUpgradeAnnotation)
		replicas := int32(n) //nolint:gosec // A replica count recorded from an int32.
		d.Spec.Replicas = &replicas
		if err := cl.Patch(ctx, d, client.MergeFrom(before)); err != nil {
			return fmt.Errorf("scaling Deployment %s/%s back up: %w", d.Namespace, d.Name, err)
		}
	}
	return nil
}

// WaitDeploymentsAvailable waits until the Deployments are Available (for their current generation),
// saying every progressInterval which ones it still waits for and why. After timeout the error names the
// Deployments that are not, with the messages of their conditions.
func (c *Client) WaitDeploymentsAvailable(ctx context.Context, keys []client.ObjectKey, timeout time.Duration) error {
	cl, err := c.connect()
	if err != nil {
		return err
	}
	log := logr.FromContextOrDiscard(ctx)
	pending := slices.Clone(keys)
	reasons := map[client.ObjectKey]string{}
	lastReport := time.Now()
	err = c.pollUntil(ctx, timeout, func(ctx context.Context) (bool, error) {
		if time.Since(lastReport) >= progressInterval && len(pending) > 0 {
			lastReport = time.Now()
			parts := make([]string, 0, len(pending))
			for _, key := range pending {
				parts = append(parts, fmt.Sprintf("%s (%s)", key, reasons[key]))
			}
			log.Info("Still waiting", "deployments", strings.Join(parts, ", "))
		}
		var still []client.ObjectKey
		for _, key := range pending {
			d := &appsv1.Deployment{}
			if err := cl.Get(ctx, key, d); err != nil {
				if apierrors.IsNotFound(err) {
					reasons[key] = "not found"
					still = append(still, key)
					continue
				}
				return false, fmt.Errorf("reading Deployment %s: %w", key, err)
			}
			if ok, reason := deploymentAvailable(d); !ok {
				reasons[key] = reason
				still = append(still, key)
				continue
			}
			log.V(1).Info("Deployment is available", "deployment", key.String())
		}
		pending = still
		return len(pending) == 0, nil
	})
	if errors.Is(err, errTimeout) {
		parts := make([]string, 0, len(pending))
		for _, key := range pending {
			parts = append(parts, fmt.Sprintf("%s (%s)", key, reasons[key]))
		}
		return fmt.Errorf("not available after %s: Deployment %s: look at their Pods with kubectl describe", timeout, strings.Join(parts, ", Deployment "))
	}
	return err
}

// deploymentAvailable reports whether a Deployment is Available for its current generation, and why not.
func deploymentAvailable(d *appsv1.Deployment) (bool, string) {
	if d.Status.ObservedGeneration == 0 && len(d.Status.Conditions) == 0 {
		return false, "no status yet"
	}
	if d.Status.ObservedGeneration < d.Generation {
		return false, "its latest change is not rolled out yet"
	}
	for _, cond := range d.Status.Conditions {
		if cond.Type != appsv1.DeploymentAvailable {
			continue
		}
		if cond.Status == corev1.ConditionTrue {
			return true, ""
		}
		msg := "Available=" + string(cond.Status)
		if cond.Reason != "" {
			msg += ", " + cond.Reason
		}
		if cond.Message != "" {
			msg += ": " + cond.Message
		}
		return false, msg
	}
	return false, "no Available condition yet"
}
