package releasecheck

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/conformance"
)

// providerDeployment is the provider's controller Deployment as clusterctl installed it: the kit's Start
// and StartScoped stop it and start it with --namespace and --watch-filter, as a user of a shared
// management cluster would.
type providerDeployment struct {
	c       client.Client
	key     client.ObjectKey
	timeout time.Duration
	// original is the Deployment as installed, restored after the multi tenancy rule.
	original *appsv1.Deployment
}

// newProviderDeployment finds the Deployment of the provider's components (label
// cluster.x-k8s.io/provider=infrastructure-<name>).
func newProviderDeployment(ctx context.Context, cfg *rest.Config, rel Release, timeout time.Duration) (*providerDeployment, error) {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return nil, err
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, err
	}
	list := &appsv1.DeploymentList{}
	if err := c.List(ctx, list, client.MatchingLabels{clusterv1.ProviderNameLabel: rel.Label()}); err != nil {
		return nil, err
	}
	if len(list.Items) != 1 {
		return nil, fmt.Errorf("expected one Deployment labelled %s=%s, found %d", clusterv1.ProviderNameLabel, rel.Label(), len(list.Items))
	}
	d := &list.Items[0]
	return &providerDeployment{c: c, key: client.ObjectKeyFromObject(d), timeout: timeout, original: d.DeepCopy()}, nil
}

// managerContainer is the index of the manager's container: the one named manager, else the first.
func managerContainer(d *appsv1.Deployment) int {
	return max(0, slices.IndexFunc(d.Spec.Template.Spec.Containers, func(c corev1.Container) bool { return c.Name == "manager" }))
}

// update changes the Deployment and waits until its processes run the change (available when wantReady).
func (p *providerDeployment) update(ctx context.Context, change func(*appsv1.Deployment), wantReady bool) error {
	d := &appsv1.Deployment{}
	if err := p.c.Get(ctx, p.key, d); err != nil {
		return err
	}
	before := d.DeepCopy()
	change(d)
	if err := p.c.Patch(ctx, d, client.MergeFrom(before)); err != nil {
		return fmt.Errorf("updating Deployment %s: %w", p.key, err)
	}
	return wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, p.timeout, true, func(ctx context.Context) (bool, error) {
		if err := p.c.Get(ctx, p.key, d); err != nil {
			return false, err
		}
		s, want := d.Status, ptr.Deref(d.Spec.Replicas, 1)
		done := s.ObservedGeneration >= d.Generation && s.Replicas == want && s.UpdatedReplicas == want
		if wantReady && want > 0 {
			done = done && s.AvailableReplicas >= want
		}
		return done, nil
	})
}

// start is the kit's Provider.Start: the provider already runs (conformance.Running); once the kit is done
// with it, it is stopped (0 replicas), so that only the provider StartScoped starts runs next.
func (p *providerDeployment) start(ctx context.Context, cfg *rest.Config) error {
	if err := conformance.Running(ctx, cfg); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), p.timeout)
	defer cancel()
	return p.update(ctx, func(d *appsv1.Deployment) { d.Spec.Replicas = ptr.To[int32](0) }, false)
}

// startScoped is the kit's Provider.StartScoped: the provider's Deployment runs its manager with
// --namespace and --watch-filter (replacing those it had) until ctx is done, then as installed again.
func (p *providerDeployment) startScoped(ctx context.Context, _ *rest.Config, scope conformance.Scope) error {
	err := p.update(ctx, func(d *appsv1.Deployment) {
		c := &d.Spec.Template.Spec.Containers[managerContainer(d)]
		c.Args = slices.DeleteFunc(c.Args, func(a string) bool {
			return strings.HasPrefix(a, "--namespace") || strings.HasPrefix(a, "--watch-filter")
		})
		c.Args = append(c.Args, "--namespace="+scope.Namespace, "--watch-filter="+scope.WatchFilter)
		d.Spec.Replicas = p.original.Spec.Replicas
	}, true)
	if err != nil {
		return fmt.Errorf("running the provider's manager with --namespace and --watch-filter: %w", err)
	}
	<-ctx.Done()
	restore, cancel := context.WithTimeout(context.WithoutCancel(ctx), p.timeout)
	defer cancel()
	return p.update(restore, func(d *appsv1.Deployment) {
		d.Spec.Template.Spec.Containers = p.original.Spec.Template.Spec.Containers
		d.Spec.Replicas = p.original.Spec.Replicas
	}, true)
}
