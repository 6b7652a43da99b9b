package provider

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterctlv1 "github.com/capstan-dev/capstan/api/clusterctl/v1alpha3"
	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	operatorv1 "github.com/capstan-dev/capstan/api/operator/v1alpha2"
	"github.com/capstan-dev/capstan/internal/clusterctl/cluster"
	"github.com/capstan-dev/capstan/internal/clusterctl/repository"
	"github.com/capstan-dev/capstan/internal/operator/source"
	"github.com/capstan-dev/capstan/internal/operator/validation"
	"github.com/capstan-dev/capstan/internal/patch"
	"github.com/capstan-dev/capstan/internal/reconciler"
)

// waitInterval is how often a provider that waits for another (the core to be Ready, providers to be
// paused, Clusters to be deleted) looks again.
const waitInterval = 5 * time.Second

// fetchRetryInterval is how long a provider whose release could not be fetched waits before trying again.
const fetchRetryInterval = 30 * time.Second

// FetchRetry is how the operator retries failed downloads: briefly, since the reconcile is retried anyway.
var FetchRetry = repository.Retry{Interval: 2 * time.Second, Timeout: 6 * time.Second}

// Reconciler reconciles the objects of one provider kind.
type Reconciler struct {
	// Client reads from the cache and writes.
	Client client.Client
	// APIReader reads what is not cached: ConfigMaps, Secrets, CRDs, the objects of providers' kinds.
	APIReader client.Reader
	// Cluster is the management cluster as clusterctl's library reaches it.
	Cluster *cluster.Client
	// Kind is the provider kind.
	Kind operatorv1.Kind
	// HTTPClient makes every download; it must bound its calls (package httpclient).
	HTTPClient *http.Client
	// Retry is the retry policy of downloads; FetchRetry when zero.
	Retry repository.Retry
	// Validation are the settings of the rules a provider's spec must follow (package validation).
	Validation validation.Options
	// CheckManagerArgs checks the arguments of a container of capstan's own image (an image named
	// capstan) as the capstan subcommand they name would parse them, so that a setting that would make one
	// of capstan's managers exit at start is refused; nil checks nothing.
	CheckManagerArgs func(args []string) error
	// LookupEnv reads the operator's environment, whose variables the components may use (the
	// configSecret's win); os.LookupEnv when nil.
	LookupEnv func(string) (string, bool)
}

func (r *Reconciler) lookupEnv() func(string) (string, bool) {
	if r.LookupEnv != nil {
		return r.LookupEnv
	}
	return os.LookupEnv
}

// SetupWithManager registers the reconciler.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager, options controller.Options) error {
	b := ctrl.NewControllerManagedBy(mgr).
		Named(r.Kind.Name).
		For(r.Kind.New()).
		WithOptions(options).
		Watches(&appsv1.Deployment{}, handler.EnqueueRequestsFromMapFunc(r.deploymentToProvider))
	if r.Kind.Type != clusterctlv1.CoreProviderType {
		b = b.Watches(&operatorv1.CoreProvider{}, handler.EnqueueRequestsFromMapFunc(r.allProviders))
	} else {
		// The core's contract upgrade waits for the other providers to be paused.
		for _, k := range operatorv1.Kinds() {
			if k.Type != clusterctlv1.CoreProviderType {
				b = b.Watches(k.New(), handler.EnqueueRequestsFromMapFunc(r.allProviders))
			}
		}
	}
	_, err := b.Build(reconciler.RequeueOnConflict(r))
	return err
}

// deploymentToProvider maps a provider's Deployment (labelled cluster.x-k8s.io/provider) to the
// provider of this kind in its namespace whose label it has.
func (r *Reconciler) deploymentToProvider(ctx context.Context, o client.Object) []reconcile.Request {
	label := o.GetLabels()[clusterv1.ProviderNameLabel]
	if label == "" {
		return nil
	}
	list := r.Kind.NewList()
	if err := r.Client.List(ctx, list, client.InNamespace(o.GetNamespace())); err != nil {
		return nil
	}
	var out []reconcile.Request
	for _, p := range list.GetItems() {
		if operatorv1.ManifestLabel(p) == label {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKey{Namespace: p.GetNamespace(), Name: p.GetName()}})
		}
	}
	return out
}

// allProviders maps any change to every provider of this kind.
func (r *Reconciler) allProviders(ctx context.Context, _ client.Object) []reconcile.Request {
	list := r.Kind.NewList()
	if err := r.Client.List(ctx, list); err != nil {
		return nil
	}
	var out []reconcile.Request
	for _, p := range list.GetItems() {
		out = append(out, reconcile.Request{NamespacedName: client.ObjectKey{Namespace: p.GetNamespace(), Name: p.GetName()}})
	}
	return out
}

// Reconcile brings the provider's installation to its spec.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (_ reconcile.Result, retErr error) {
	p := r.Kind.New()
	if err := r.Client.Get(ctx, req.NamespacedName, p); err != nil {
		if apierrors.IsNotFound(err) {
			return reconcile.Result{}, nil
		}
		return reconcile.Result{}, err
	}
	p.GetObjectKind().SetGroupVersionKind(operatorv1.GroupVersion.WithKind(r.Kind.Name))
	log := ctrl.LoggerFrom(ctx).WithValues(r.Kind.Name, klog.KObj(p))
	ctx = ctrl.LoggerInto(ctx, log)

	helper := patch.NewHelper(p, r.Client)
	s := &scope{provider: p, label: operatorv1.ManifestLabel(p)}
	defer func() {
		if err := r.observeDeployments(ctx, s); err != nil {
			retErr = errors.Join(retErr, err)
		}
		if err := r.writeBack(ctx, helper, s); err != nil {
			retErr = errors.Join(retErr, err)
		}
	}()

	if !p.GetDeletionTimestamp().IsZero() {
		return r.reconcileDelete(ctx, s)
	}
	if controllerutil.AddFinalizer(p, operatorv1.ProviderFinalizer) {
		// Written by the deferred patch before anything is installed, so that a deletion always finds it;
		// the write brings the provider back.
		return reconcile.Result{}, nil
	}

	// Each phase may end the reconcile (reconciler.Stop); what to requeue is recorded in s.result.
	_, err := reconciler.RunPhases(ctx, s, r.preflight, r.fetch, r.checkContract, r.render, r.install)
	return s.result, err
}

// writeBack computes the provider's status and writes what the reconcile changed.
func (r *Reconciler) writeBack(ctx context.Context, helper *patch.Helper, s *scope) error {
	p := s.provider
	setStatus(s)
	err := helper.Patch(ctx, p)
	if apierrors.IsConflict(err) {
		err = r.writeStatusAgain(ctx, s, client.ObjectKeyFromObject(p), p.GetGeneration(), err)
	}
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// writeStatusAgain writes the conditions this reconcile computed onto the provider as the API server has
// it now, after the status write was refused because the copy read was older: what the reconcile did is
// already done (its annotations written), so a later reconcile finds nothing to do and would never say
// what changed (ProviderUpgraded's "Applied ... again as an upgrade: ...; deleted what it no longer has").
// When the spec changed meanwhile the conflict is returned: the reconcile of the new spec writes its own.
func (r *Reconciler) writeStatusAgain(ctx context.Context, s *scope, key client.ObjectKey, generation int64, conflict error) error {
	fresh := r.Kind.New()
	if err := r.APIReader.Get(ctx, key, fresh); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("reading %s again to write its status: %w", key, err)
	}
	if fresh.GetGeneration() != generation || !fresh.GetDeletionTimestamp().IsZero() {
		return conflict
	}
	fresh.GetObjectKind().SetGroupVersionKind(operatorv1.GroupVersion.WithKind(r.Kind.Name))
	helper := patch.NewHelper(fresh, r.Client)
	s.provider = fresh
	setStatus(s)
	if err := helper.Patch(ctx, fresh); err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	return nil
}

// coreProvider returns the CoreProvider, nil when there is none.
func (r *Reconciler) coreProvider(ctx context.Context) (*operatorv1.CoreProvider, error) {
	list := &operatorv1.CoreProviderList{}
	if err := r.Client.List(ctx, list); err != nil {
		return nil, fmt.Errorf("listing CoreProviders: %w", err)
	}
	var core *operatorv1.CoreProvider
	for i := range list.Items {
		c := &list.Items[i]
		if c.Name != "cluster-api" {
			continue
		}
		if core == nil || c.CreationTimestamp.Before(&core.CreationTimestamp) {
			core = c
		}
	}
	return core, nil
}

func isTrue(p operatorv1.GenericProvider, t string) bool {
	return meta.IsStatusConditionTrue(p.GetProviderStatus().Conditions, t)
}

// newer reports whether a was created after b (names break ties), so that of two providers of the same
// kind and name the older one is kept.
func newer(a, b metav1.Object) bool {
	ta, tb := a.GetCreationTimestamp(), b.GetCreationTimestamp()
	if !ta.Equal(&tb) {
		return tb.Before(&ta)
	}
	return a.GetNamespace() > b.GetNamespace()
}

// cacheFor returns the operator's cache of releases.
func (r *Reconciler) cacheFor() *source.Cache {
	return &source.Cache{Client: r.Client, Reader: r.APIReader}
}
