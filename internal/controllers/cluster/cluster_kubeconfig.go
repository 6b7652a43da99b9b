package cluster

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/clustersecret"
	"github.com/capstan-dev/capstan/internal/kubeconfig"
)

// reconcileKubeconfig writes the `<cluster>-kubeconfig` Secret of a Cluster without control plane object
// (a control plane provider writes its own) once the endpoint is known and the `<cluster>-ca` Secret
// exists, recreates it when it is deleted and regenerates it when its client certificate nears expiry, the
// CA changes or the endpoint changes. A kubeconfig Secret the Cluster does not control is left alone.
//
// Secrets are read through the manager's client (from its cache of the Secrets labelled with a cluster
// name, from the API server for others); their metadata is cached too (the controller watches it), and
// while neither Secret has a new resourceVersion, the endpoint is the same and the certificate is not due,
// what was found at the last look still holds and neither Secret is read again.
func (r *Reconciler) reconcileKubeconfig(ctx context.Context, s *scope) (ctrl.Result, error) {
	cluster := s.cluster
	if cluster.Spec.ControlPlaneRef != nil || !cluster.Spec.ControlPlaneEndpoint.IsValid() {
		return ctrl.Result{}, nil
	}
	log := ctrl.LoggerFrom(ctx)
	key := client.ObjectKey{Namespace: cluster.Namespace, Name: clustersecret.Name(cluster.Name, clustersecret.Kubeconfig)}
	caKey := client.ObjectKey{Namespace: cluster.Namespace, Name: clustersecret.Name(cluster.Name, clustersecret.ClusterCA)}
	server := kubeconfig.Server(cluster.Spec.ControlPlaneEndpoint)
	now := time.Now()
	if r.kubeconfigs.holds(cluster, r.secretVersion(ctx, key), r.secretVersion(ctx, caKey), server, now) {
		return ctrl.Result{}, nil
	}

	existing := &corev1.Secret{}
	switch err := r.Client.Get(ctx, key, existing); {
	case apierrors.IsNotFound(err):
		existing = nil
	case err != nil:
		return ctrl.Result{}, fmt.Errorf("getting Secret %s: %w", key, err)
	case !metav1.IsControlledBy(existing, cluster):
		r.kubeconfigs.remember(cluster, kubeconfigCheck{kubeconfigVersion: existing.ResourceVersion, notOurs: true})
		return ctrl.Result{}, nil
	}

	caSecret := &corev1.Secret{}
	if err := r.Client.Get(ctx, caKey, caSecret); err != nil {
		if apierrors.IsNotFound(err) {
			log.V(2).Info("Waiting for the CA Secret to write the kubeconfig", "Secret", klog.KRef(caKey.Namespace, caKey.Name))
			return ctrl.Result{RequeueAfter: r.requeueAfter()}, nil
		}
		return ctrl.Result{}, fmt.Errorf("getting Secret %s: %w", caKey, err)
	}
	ca, err := kubeconfig.CAFromSecret(caSecret)
	if err != nil {
		return ctrl.Result{}, err
	}
	good := func(secret *corev1.Secret) {
		cert, err := kubeconfig.ClientCertificate(secret.Data[kubeconfig.ValueKey])
		if err != nil {
			return
		}
		r.kubeconfigs.remember(cluster, kubeconfigCheck{
			kubeconfigVersion: secret.ResourceVersion, caVersion: caSecret.ResourceVersion, server: server,
			rotateAt: cert.NotAfter.Add(-kubeconfig.RotationThreshold),
		})
	}

	if existing == nil {
		data, err := kubeconfig.Generate(cluster.Name, server, ca, now)
		if err != nil {
			return ctrl.Result{}, err
		}
		secret := kubeconfig.NewSecret(cluster, data)
		log.Info("Creating kubeconfig Secret", "Secret", klog.KObj(secret))
		if err := r.Client.Create(ctx, secret); err != nil {
			if apierrors.IsAlreadyExists(err) {
				return ctrl.Result{}, nil // its event brings the Cluster back
			}
			return ctrl.Result{}, fmt.Errorf("creating Secret %s: %w", key, err)
		}
		good(secret)
		return ctrl.Result{}, nil
	}

	rotate, why, err := kubeconfig.NeedsRotation(existing.Data[kubeconfig.ValueKey], ca, server, now)
	if err != nil {
		rotate, why = true, "it cannot be read"
	}
	if !rotate {
		good(existing)
		return ctrl.Result{}, nil
	}
	data, err := kubeconfig.Generate(cluster.Name, server, ca, now)
	if err != nil {
		return ctrl.Result{}, err
	}
	before := existing.DeepCopy()
	if existing.Data == nil {
		existing.Data = map[string][]byte{}
	}
	existing.Data[kubeconfig.ValueKey] = data
	log.Info("Rotating kubeconfig Secret", "Secret", klog.KObj(existing), "reason", why)
	if err := r.Client.Patch(ctx, existing, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil {
		return ctrl.Result{}, fmt.Errorf("patching Secret %s: %w", key, err)
	}
	good(existing)
	return ctrl.Result{}, nil
}

// secretVersion returns the resourceVersion of a Secret from the cache of Secret metadata, or "" when it is
// not there.
func (r *Reconciler) secretVersion(ctx context.Context, key client.ObjectKey) string {
	if r.secretMetadata == nil {
		return ""
	}
	secret := &metav1.PartialObjectMetadata{}
	secret.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
	if err := r.secretMetadata.Get(ctx, key, secret); err != nil {
		return ""
	}
	return secret.ResourceVersion
}

// kubeconfigChecks remembers, for each Cluster, what its last look at its kubeconfig found.
type kubeconfigChecks struct {
	mu     sync.Mutex
	checks map[types.NamespacedName]kubeconfigCheck
}

// kubeconfigCheck is what a look at a Cluster's kubeconfig found: the Secret is not the Cluster's, or it
// is good for the server until rotateAt; with the resourceVersions of the Secrets it read.
type kubeconfigCheck struct {
	cluster                      types.UID
	kubeconfigVersion, caVersion string
	notOurs                      bool
	server                       string
	rotateAt                     time.Time
}

// holds reports whether the last look at the Cluster's kubeconfig still holds: the Secrets have the same
// resourceVersions (from the cache, "" when unknown), and, for a kubeconfig of the Cluster, the server is
// the same and the client certificate is not due for rotation.
func (k *kubeconfigChecks) holds(cluster *clusterv1.Cluster, kubeconfigVersion, caVersion, server string, now time.Time) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	c, ok := k.checks[types.NamespacedName{Namespace: cluster.Namespace, Name: cluster.Name}]
	switch {
	case !ok || c.cluster != cluster.UID || kubeconfigVersion == "" || c.kubeconfigVersion != kubeconfigVersion:
		return false
	case c.notOurs:
		return true
	default:
		return caVersion != "" && c.caVersion == caVersion && c.server == server && now.Before(c.rotateAt)
	}
}

func (k *kubeconfigChecks) remember(cluster *clusterv1.Cluster, c kubeconfigCheck) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.checks == nil {
		k.checks = map[types.NamespacedName]kubeconfigCheck{}
	}
	c.cluster = cluster.UID
	k.checks[types.NamespacedName{Namespace: cluster.Namespace, Name: cluster.Name}] = c
}

// forget drops what is known of a Cluster that is gone.
func (k *kubeconfigChecks) forget(cluster types.NamespacedName) {
	k.mu.Lock()
	defer k.mu.Unlock()
	delete(k.checks, cluster)
}
