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
	return c.patchProviderDeployments(ctx, label, namespace, "scaling down Deployment %s/%s: %w", func(d *appsv1.Deployment) bool {
		replicas := int32(1)
		if d.Spec.Replicas != nil {
			replicas = *d.Spec.Replicas
		}
		if replicas == 0 {
			return false
		}
		if d.Annotations == nil {
			d.Annotations = map[string]string{}
		}
		if _, ok := d.Annotations[ReplicasBeforeUpgradeAnnotation]; !ok {
			d.Annotations[ReplicasBeforeUpgradeAnnotation] = strconv.Itoa(int(replicas))
		}
		zero := int32(0)
		d.Spec.Replicas = &zero
		return true
	})
}

// RestoreDeployments gives a provider's Deployments back the replicas ScaleDownDeployments recorded.
func (c *Client) RestoreDeployments(ctx context.Context, label, namespace string) error {
	return c.patchProviderDeployments(ctx, label, namespace, "scaling Deployment %s/%s back up: %w", func(d *appsv1.Deployment) bool {
		recorded, ok := d.Annotations[ReplicasBeforeUpgradeAnnotation]
		if !ok {
			return false
		}
		n, err := strconv.Atoi(recorded)
		if err != nil || n < 0 {
			n = 1
		}
		delete(d.Annotations, ReplicasBeforeUpgradeAnnotation)
		replicas := int32(n) //nolint:gosec // A replica count recorded from an int32.
		d.Spec.Replicas = &replicas
		return true
	})
}

// patchProviderDeployments patches each of a provider's Deployments that change changes (it returns false
// to leave one as it is). failed is the format of the error of a failed patch, given the Deployment's
// namespace, name and the error.
func (c *Client) patchProviderDeployments(ctx context.Context, label, namespace, failed string, change func(*appsv1.Deployment) bool) error {
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
		before := d.DeepCopy()
		if !change(d) {
			continue
		}
		if err := cl.Patch(ctx, d, client.MergeFrom(before)); err != nil {
			return fmt.Errorf(failed, d.Namespace, d.Name, err)
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
	pending := newPendingSet(keys)
	lastReport := time.Now()
	err = c.pollUntil(ctx, timeout, func(ctx context.Context) (bool, error) {
		if time.Since(lastReport) >= progressInterval && len(pending.keys) > 0 {
			lastReport = time.Now()
			log.Info("Still waiting", "deployments", pending.describe(", "))
		}
		return pending.check(func(key client.ObjectKey) (bool, string, error) {
			d := &appsv1.Deployment{}
			if err := cl.Get(ctx, key, d); err != nil {
				if apierrors.IsNotFound(err) {
					return false, "not found", nil
				}
				return false, "", fmt.Errorf("reading Deployment %s: %w", key, err)
			}
			ok, reason := deploymentAvailable(d)
			if ok {
				log.V(1).Info("Deployment is available", "deployment", key.String())
			}
			return ok, reason, nil
		})
	})
	if errors.Is(err, errTimeout) {
		return fmt.Errorf("not available after %s: Deployment %s: look at their Pods with kubectl describe", timeout, pending.describe(", Deployment "))
	}
	return err
}

// pendingSet is what a wait still waits for, and why.
type pendingSet[K comparable] struct {
	keys    []K
	reasons map[K]string
}

func newPendingSet[K comparable](keys []K) *pendingSet[K] {
	return &pendingSet[K]{keys: slices.Clone(keys), reasons: map[K]string{}}
}

// check keeps the keys that ready reports not ready, with the reason it gives, and reports whether none is
// left.
func (p *pendingSet[K]) check(ready func(K) (bool, string, error)) (bool, error) {
	var still []K
	for _, key := range p.keys {
		ok, reason, err := ready(key)
		if err != nil {
			return false, err
		}
		if !ok {
			p.reasons[key] = reason
			still = append(still, key)
		}
	}
	p.keys = still
	return len(p.keys) == 0, nil
}

// describe lists the pending keys with their reasons, "key (reason)", joined by sep.
func (p *pendingSet[K]) describe(sep string) string {
	parts := make([]string, 0, len(p.keys))
	for _, key := range p.keys {
		parts = append(parts, fmt.Sprintf("%v (%s)", key, p.reasons[key]))
	}
	return strings.Join(parts, sep)
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
