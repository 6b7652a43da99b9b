package clustercache

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/conditions"
	"github.com/capstan-dev/capstan/internal/reconciler"
)

// +kubebuilder:rbac:groups=cluster.x-k8s.io,resources=clusters,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch

// SetupWithManager adds the ClusterCache's controller to mgr: it watches Clusters (only those matching
// Options.WatchFilter) and the metadata of `*-kubeconfig` Secrets (whatever their labels: kubeconfig Secrets
// written by providers rarely carry the watch-filter label). Every connection stops when mgr stops.
// Client and APIReader default to the manager's.
func (cc *ClusterCache) SetupWithManager(_ context.Context, mgr ctrl.Manager, options controller.Options) error {
	cc.init()
	if cc.Client == nil {
		cc.Client = mgr.GetClient()
	}
	if cc.APIReader == nil {
		cc.APIReader = mgr.GetAPIReader()
	}
	cc.secretMetadata = mgr.GetCache()
	err := ctrl.NewControllerManagedBy(mgr).
		Named("clustercache").
		For(&clusterv1.Cluster{}, builder.WithPredicates(reconciler.HasWatchLabel(cc.opts.WatchFilter), clusterChanged())).
		WatchesMetadata(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(secretToCluster),
			builder.WithPredicates(predicate.NewPredicateFuncs(isKubeconfigSecret))).
		WatchesRawSource(source.Channel(cc.self, &handler.EnqueueRequestForObject{})).
		WithOptions(options).
		Complete(reconciler.RequeueOnConflict(cc))
	if err != nil {
		return fmt.Errorf("creating the clustercache controller: %w", err)
	}
	return mgr.Add(manager.RunnableFunc(func(ctx context.Context) error {
		<-ctx.Done()
		cc.stopAll()
		return nil
	}))
}

// stopAll drops every connection and stops every connection attempt.
func (cc *ClusterCache) stopAll() {
	cc.cancel()
	cc.mu.Lock()
	accessors := cc.accessors
	cc.accessors = map[client.ObjectKey]*accessor{}
	cc.mu.Unlock()
	for key, acc := range accessors {
		acc.disconnect()
		forgetMetrics(key)
	}
}

// clusterChanged lets through the Cluster events that matter for connections: creation, deletion, label
// changes (the watch filter) and changes of what the Cluster says about its control plane
// (reachabilityOf). The start of a deletion does not matter: as upstream's, the connection stays until the
// Cluster is gone, so that its Machines and control plane are seen to the end.
func clusterChanged() predicate.Predicate {
	return predicate.Funcs{
		UpdateFunc: func(e event.UpdateEvent) bool {
			if !equalStringMaps(e.ObjectOld.GetLabels(), e.ObjectNew.GetLabels()) {
				return true
			}
			oldCluster, okOld := e.ObjectOld.(*clusterv1.Cluster)
			newCluster, okNew := e.ObjectNew.(*clusterv1.Cluster)
			return okOld && okNew && reachabilityOf(oldCluster) != reachabilityOf(newCluster)
		},
	}
}

// reachabilityOf sums up what a Cluster says about whether its API server can answer: the control plane
// endpoint, status.infrastructureReady, the ControlPlaneInitialized condition and status.controlPlaneReady.
// A workload cluster that could not be reached is tried again at once when it changes.
func reachabilityOf(c *clusterv1.Cluster) string {
	initialized := conditions.IsTrue(c, clusterv1.ControlPlaneInitializedCondition) ||
		conditions.IsV1Beta2True(c, clusterv1.ClusterControlPlaneInitializedV1Beta2Condition)
	return fmt.Sprintf("endpoint=%s:%d infrastructureReady=%t initialized=%t controlPlaneReady=%t",
		c.Spec.ControlPlaneEndpoint.Host, c.Spec.ControlPlaneEndpoint.Port, c.Status.InfrastructureReady, initialized, c.Status.ControlPlaneReady)
}

func equalStringMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func isKubeconfigSecret(obj client.Object) bool {
	return strings.HasSuffix(obj.GetName(), KubeconfigSecretSuffix) && len(obj.GetName()) > len(KubeconfigSecretSuffix)
}

func secretToCluster(_ context.Context, obj client.Object) []reconcile.Request {
	if !isKubeconfigSecret(obj) {
		return nil
	}
	name := strings.TrimSuffix(obj.GetName(), KubeconfigSecretSuffix)
	return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: obj.GetNamespace(), Name: name}}}
}

// Reconcile connects a Cluster's workload cluster, or drops the connection when the Cluster or its
// kubeconfig goes away or the kubeconfig changes. It never waits for the workload cluster: connections are
// made in the background and end with a requeue of the Cluster here and an event on every ClusterSource.
func (cc *ClusterCache) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	cc.init()
	log := ctrl.LoggerFrom(ctx)
	key := req.NamespacedName

	cluster := &clusterv1.Cluster{}
	if err := cc.Client.Get(ctx, key, cluster); err != nil {
		if apierrors.IsNotFound(err) {
			if cc.forget(key) {
				log.Info("Disconnected from the workload cluster: the Cluster is gone")
			}
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, fmt.Errorf("getting Cluster %s: %w", key, err)
	}
	if cc.opts.WatchFilter != "" && cluster.Labels[clusterv1.WatchLabel] != cc.opts.WatchFilter {
		if cc.forget(key) {
			log.Info("Disconnected from the workload cluster: the Cluster no longer matches the watch filter")
		}
		return ctrl.Result{}, nil
	}

	secretKey := client.ObjectKey{Namespace: key.Namespace, Name: key.Name + KubeconfigSecretSuffix}
	secretMeta := &metav1.PartialObjectMetadata{}
	secretMeta.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
	if err := cc.secretMetadataReader().Get(ctx, secretKey, secretMeta); err != nil {
		if apierrors.IsNotFound(err) {
			if cc.forget(key) {
				log.Info("Disconnected from the workload cluster: its kubeconfig Secret is gone", "Secret", klogRef(secretKey))
			}
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, fmt.Errorf("getting the metadata of Secret %s: %w", secretKey, err)
	}

	// Connected on demand: a Cluster nobody asked for is not connected (nor read, nor retried).
	var acc *accessor
	if cc.onDemand() {
		if acc = cc.lookup(key); acc == nil {
			return ctrl.Result{}, nil
		}
		acc.requested.Store(false)
	} else {
		acc = cc.getOrCreate(key)
	}
	reach := reachabilityOf(cluster)
	acc.mu.RLock()
	connected, connecting := acc.conn != nil, acc.connecting
	secretVersion, hash := acc.secretVersion, acc.kubeconfigHash
	retryAt, failedSecretVersion, failedKubeconfig := acc.retryAt, acc.failedSecretVersion, acc.failedKubeconfig
	failedReach := acc.reachability
	acc.mu.RUnlock()

	var kubeconfig []byte
	if connected && secretVersion != secretMeta.ResourceVersion {
		data, err := cc.readKubeconfig(ctx, secretKey)
		if err != nil {
			return cc.kubeconfigUnusable(ctx, key, secretKey, err)
		}
		if sha256.Sum256(data) == hash {
			acc.mu.Lock()
			if acc.conn != nil {
				acc.secretVersion = secretMeta.ResourceVersion
			}
			acc.mu.Unlock()
			return ctrl.Result{}, nil
		}
		log.Info("Reconnecting to the workload cluster: its kubeconfig changed", "Secret", klogRef(secretKey))
		acc.disconnect()
		recordConnection(key, false)
		cc.notifyListeners(key)
		connected = false
		kubeconfig = data
	}
	if connected || connecting {
		return ctrl.Result{}, nil
	}
	if cc.onDemand() && !cc.usedRecently(acc, time.Now()) {
		return ctrl.Result{}, nil
	}
	// After a failure, wait before trying again (see Options.retryDelay), unless the kubeconfig or what the
	// Cluster says about its control plane changed since: then try at once, with short waits again.
	resetBackoff := false
	if !retryAt.IsZero() {
		switch {
		case failedSecretVersion != secretMeta.ResourceVersion:
			resetBackoff = true
		case failedReach != reach:
			log.V(2).Info("Connecting to the workload cluster at once: its control plane changed", "controlPlane", reach)
			resetBackoff = true
			kubeconfig = failedKubeconfig
		default:
			if wait := time.Until(retryAt); wait > 0 {
				return ctrl.Result{RequeueAfter: wait}, nil
			}
			kubeconfig = failedKubeconfig
		}
	}
	if kubeconfig == nil {
		data, err := cc.readKubeconfig(ctx, secretKey)
		if err != nil {
			return cc.kubeconfigUnusable(ctx, key, secretKey, err)
		}
		kubeconfig = data
	}
	cc.startConnect(ctx, acc, attempt{secretVersion: secretMeta.ResourceVersion, kubeconfig: kubeconfig, reachability: reach, resetBackoff: resetBackoff})
	return ctrl.Result{}, nil
}

func (cc *ClusterCache) secretMetadataReader() client.Reader {
	if cc.secretMetadata != nil {
		return cc.secretMetadata
	}
	return cc.Client
}

// errNoKubeconfig says that a kubeconfig Secret exists but holds no kubeconfig.
var errNoKubeconfig = errors.New("no kubeconfig")

// kubeconfigUnusable drops the connection of a Cluster whose kubeconfig Secret vanished or is empty; other
// errors are returned to be retried.
func (cc *ClusterCache) kubeconfigUnusable(ctx context.Context, key, secretKey client.ObjectKey, err error) (ctrl.Result, error) {
	if !apierrors.IsNotFound(err) && !errors.Is(err, errNoKubeconfig) {
		return ctrl.Result{}, err
	}
	cc.forget(key)
	ctrl.LoggerFrom(ctx).Info("Not connecting to the workload cluster: no kubeconfig", "Secret", klogRef(secretKey), "reason", err.Error())
	return ctrl.Result{}, nil
}

// readKubeconfig reads the kubeconfig from its Secret, uncached.
func (cc *ClusterCache) readKubeconfig(ctx context.Context, secretKey client.ObjectKey) ([]byte, error) {
	secret := &corev1.Secret{}
	if err := cc.APIReader.Get(ctx, secretKey, secret); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, err
		}
		return nil, fmt.Errorf("getting Secret %s: %w", secretKey, err)
	}
	data := secret.Data[KubeconfigSecretKey]
	if len(data) == 0 {
		return nil, fmt.Errorf("Secret %s has no %q key: %w", secretKey, KubeconfigSecretKey, errNoKubeconfig) //nolint:staticcheck // Kinds are capitalised.
	}
	return data, nil
}

func klogRef(key client.ObjectKey) klog.ObjectRef { return klog.KRef(key.Namespace, key.Name) }
