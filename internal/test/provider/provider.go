// Package provider is a test provider that provisions the generic test kinds of package builder at once,
// the way a real infrastructure and bootstrap provider would: InfraClusters get an endpoint and become
// ready (and their Cluster a kubeconfig Secret pointing at a workload API server), BootstrapConfigs get a
// data Secret, and InfraMachines get a providerID and a Ready Node in the workload API server. Tests and
// benchmarks of the core controllers run it next to them.
package provider

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/contract"
	"github.com/capstan-dev/capstan/internal/test/builder"
	"github.com/capstan-dev/capstan/internal/test/envtest"
)

// Provider provisions the test kinds of both contract versions.
type Provider struct {
	// Client writes to the management cluster.
	Client client.Client
	// Workload is the API server where Nodes are registered and that the kubeconfig Secrets point at.
	Workload *rest.Config
	// Concurrency of each of its controllers; 50 when zero, so that the provider does not hold back
	// benchmarks of the core controllers, which run 50 or more reconciles at once.
	Concurrency int

	workload client.Client
	// cache reads the provider's objects: the informers that trigger its reconciles. (The manager's client
	// reads unstructured objects from the API server.)
	cache client.Reader
}

// SetupWithManager adds the provider's controllers to mgr.
func (p *Provider) SetupWithManager(mgr ctrl.Manager) error {
	wc, err := client.New(p.Workload, client.Options{Scheme: mgr.GetScheme()})
	if err != nil {
		return err
	}
	p.workload = wc
	p.cache = mgr.GetCache()
	if p.Concurrency == 0 {
		p.Concurrency = 50
	}
	for _, v := range []builder.Provider{builder.V1Beta1, builder.V1Beta2} {
		for _, k := range []struct {
			group, kind string
			fn          func(context.Context, builder.Provider, *unstructured.Unstructured) error
		}{
			{v.Infrastructure, builder.InfraClusterKind, p.infraCluster},
			{v.Bootstrap, builder.BootstrapConfigKind, p.bootstrapConfig},
			{v.Infrastructure, builder.InfraMachineKind, p.infraMachine},
		} {
			obj := &unstructured.Unstructured{}
			obj.SetGroupVersionKind(schema.GroupVersionKind{Group: k.group, Version: v.Version, Kind: k.kind})
			v, fn, gvk := v, k.fn, obj.GroupVersionKind()
			err := ctrl.NewControllerManagedBy(mgr).
				Named(fmt.Sprintf("test-provider-%s-%s", v.Version, k.kind)).
				For(obj).
				WithOptions(controller.Options{MaxConcurrentReconciles: p.Concurrency}).
				Complete(reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
					u := &unstructured.Unstructured{}
					u.SetGroupVersionKind(gvk)
					if err := p.cache.Get(ctx, req.NamespacedName, u); err != nil {
						return reconcile.Result{}, client.IgnoreNotFound(err)
					}
					if !u.GetDeletionTimestamp().IsZero() {
						return reconcile.Result{}, nil
					}
					return reconcile.Result{}, fn(ctx, v, u)
				}))
			if err != nil {
				return err
			}
		}
	}
	return nil
}

func ownerOfKind(obj metav1.Object, kind string) *metav1.OwnerReference {
	for _, ref := range obj.GetOwnerReferences() {
		if ref.Kind == kind && schema.FromAPIVersionAndKind(ref.APIVersion, ref.Kind).Group == clusterv1.GroupVersion.Group {
			return &ref
		}
	}
	return nil
}

func (p *Provider) setReady(v builder.Provider, u *unstructured.Unstructured, field string) {
	if v.Contract == contract.V1Beta2 {
		_ = unstructured.SetNestedField(u.Object, true, "status", "initialization", field)
		return
	}
	_ = unstructured.SetNestedField(u.Object, true, "status", "ready")
}

// isReady reports whether setReady was done.
func isReady(v builder.Provider, u *unstructured.Unstructured, field string) bool {
	path := []string{"status", "ready"}
	if v.Contract == contract.V1Beta2 {
		path = []string{"status", "initialization", field}
	}
	ready, _, _ := unstructured.NestedBool(u.Object, path...)
	return ready
}

// patch sends the changes made to u since before, if any; status says whether to the status subresource.
func (p *Provider) patch(ctx context.Context, u, before *unstructured.Unstructured, status bool) error {
	if equality.Semantic.DeepEqual(u.Object, before.Object) {
		return nil
	}
	if status {
		return p.Client.Status().Patch(ctx, u, client.MergeFrom(before))
	}
	return p.Client.Patch(ctx, u, client.MergeFrom(before))
}

func (p *Provider) infraCluster(ctx context.Context, v builder.Provider, u *unstructured.Unstructured) error {
	owner := ownerOfKind(u, "Cluster")
	if owner == nil {
		return nil // as the contract says: wait for the Cluster owner
	}
	if isReady(v, u, "provisioned") {
		return nil // the kubeconfig was written before
	}
	server, err := url.Parse(p.Workload.Host)
	if err != nil {
		return err
	}
	host, portText, _ := net.SplitHostPort(server.Host)
	port, _ := strconv.Atoi(portText)
	if err := p.writeKubeconfig(ctx, u.GetNamespace(), owner); err != nil {
		return err
	}
	before := u.DeepCopy()
	_ = unstructured.SetNestedField(u.Object, host, "spec", "controlPlaneEndpoint", "host")
	_ = unstructured.SetNestedField(u.Object, int64(port), "spec", "controlPlaneEndpoint", "port")
	if err := p.patch(ctx, u, before, false); err != nil {
		return err
	}
	before = u.DeepCopy()
	p.setReady(v, u, "provisioned")
	return p.patch(ctx, u, before, true)
}

func (p *Provider) bootstrapConfig(ctx context.Context, v builder.Provider, u *unstructured.Unstructured) error {
	if ownerOfKind(u, "Machine") == nil {
		return nil
	}
	if name, _, _ := unstructured.NestedString(u.Object, "status", "dataSecretName"); name != "" && isReady(v, u, "dataSecretCreated") {
		return nil
	}
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: u.GetNamespace(), Name: u.GetName(),
			OwnerReferences: []metav1.OwnerReference{{APIVersion: u.GetAPIVersion(), Kind: u.GetKind(), Name: u.GetName(), UID: u.GetUID()}}},
		Type: clusterv1.ClusterSecretType,
		Data: map[string][]byte{"value": []byte("#cloud-config\n"), "format": []byte("cloud-config")},
	}
	if err := p.Client.Create(ctx, secret); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	before := u.DeepCopy()
	_ = unstructured.SetNestedField(u.Object, secret.Name, "status", "dataSecretName")
	p.setReady(v, u, "dataSecretCreated")
	return p.patch(ctx, u, before, true)
}

// ProviderID returns the providerID the test provider gives an InfraMachine.
func ProviderID(namespace, name string) string { return "test://" + namespace + "/" + name }

func (p *Provider) infraMachine(ctx context.Context, v builder.Provider, u *unstructured.Unstructured) error {
	if ownerOfKind(u, "Machine") == nil {
		return nil
	}
	if isReady(v, u, "provisioned") {
		return nil // the Node was registered before
	}
	id := ProviderID(u.GetNamespace(), u.GetName())
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: u.GetNamespace() + "-" + u.GetName()},
		Spec:       corev1.NodeSpec{ProviderID: id},
	}
	if err := p.workload.Create(ctx, node); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	if err := p.workload.Get(ctx, client.ObjectKeyFromObject(node), node); err != nil {
		return err
	}
	if len(node.Status.Conditions) == 0 {
		now := metav1.NewTime(time.Now())
		node.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
			LastHeartbeatTime: now, LastTransitionTime: now}}
		node.Status.NodeInfo.KubeletVersion = "v1.31.0"
		if err := p.workload.Status().Update(ctx, node); err != nil {
			return err
		}
	}
	before := u.DeepCopy()
	_ = unstructured.SetNestedField(u.Object, id, "spec", "providerID")
	if err := p.patch(ctx, u, before, false); err != nil {
		return err
	}
	before = u.DeepCopy()
	p.setReady(v, u, "provisioned")
	_ = unstructured.SetNestedSlice(u.Object, []any{map[string]any{"type": "InternalIP", "address": "10.0.0.1"}}, "status", "addresses")
	return p.patch(ctx, u, before, true)
}

// writeKubeconfig writes the Cluster's kubeconfig Secret, owned by the Cluster, unless one exists (a test
// may point a Cluster somewhere else).
func (p *Provider) writeKubeconfig(ctx context.Context, namespace string, cluster *metav1.OwnerReference) error {
	data, err := envtest.Kubeconfig(p.Workload, cluster.Name)
	if err != nil {
		return err
	}
	secret := envtest.KubeconfigSecret(namespace, cluster.Name, data)
	secret.OwnerReferences = []metav1.OwnerReference{{APIVersion: cluster.APIVersion, Kind: cluster.Kind, Name: cluster.Name, UID: cluster.UID}}
	if err := p.Client.Create(ctx, secret); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	return nil
}
