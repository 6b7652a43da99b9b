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
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
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
			{v.Infrastructure, builder.InfraMachinePoolKind, p.infraMachinePool},
		} {
			obj := &unstructured.Unstructured{}
			obj.SetGroupVersionKind(schema.GroupVersionKind{Group: k.group, Version: v.Version, Kind: k.kind})
			v, fn, gvk := v, k.fn, obj.GroupVersionKind()
			b := ctrl.NewControllerManagedBy(mgr).
				Named(fmt.Sprintf("test-provider-%s-%s", v.Version, k.kind)).
				For(obj).
				WithOptions(controller.Options{MaxConcurrentReconciles: p.Concurrency})
			if k.kind == builder.InfraMachinePoolKind {
				// A pool follows the replicas of its MachinePool.
				b = b.Watches(&clusterv1.MachinePool{}, handler.EnqueueRequestsFromMapFunc(infraPoolOf(gvk)))
			}
			err := b.Complete(reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
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

// infraPoolOf maps a MachinePool to its InfraMachinePool when it is of kind gvk.
func infraPoolOf(gvk schema.GroupVersionKind) handler.MapFunc {
	return func(_ context.Context, obj client.Object) []reconcile.Request {
		mp, ok := obj.(*clusterv1.MachinePool)
		if !ok {
			return nil
		}
		ref := mp.Spec.Template.Spec.InfrastructureRef
		if schema.FromAPIVersionAndKind(ref.APIVersion, ref.Kind).GroupKind() != gvk.GroupKind() {
			return nil
		}
		return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: mp.Namespace, Name: ref.Name}}}
	}
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
	if ownerOfKind(u, "Machine") == nil && ownerOfKind(u, "MachinePool") == nil {
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

// registerNode creates a Ready Node with a provider ID in the workload API server, unless it exists.
func (p *Provider) registerNode(ctx context.Context, name, providerID string) error {
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.NodeSpec{ProviderID: providerID}}
	if err := p.workload.Create(ctx, node); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	if err := p.workload.Get(ctx, client.ObjectKeyFromObject(node), node); err != nil {
		return err
	}
	if len(node.Status.Conditions) > 0 {
		return nil
	}
	now := metav1.NewTime(time.Now())
	node.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
		LastHeartbeatTime: now, LastTransitionTime: now}}
	node.Status.NodeInfo.KubeletVersion = "v1.31.0"
	return p.workload.Status().Update(ctx, node)
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
	if err := p.registerNode(ctx, u.GetNamespace()+"-"+u.GetName(), id); err != nil {
		return err
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

// infraMachinePool runs the instances of a MachinePool: instance i of pool p is the Node <namespace>-<p>-<i>
// with provider ID test://<namespace>/<p>-<i>, for i below the MachinePool's spec.replicas. Instances above
// are dropped from spec.providerIDList (the core deletes their Nodes). With spec.machines, each instance
// also has an InfraMachine named <p>-<i>, labelled with the pool's and the cluster's names, and
// status.infrastructureMachineKind names their kind; the Machine of a dropped instance is deleted.
func (p *Provider) infraMachinePool(ctx context.Context, v builder.Provider, u *unstructured.Unstructured) error {
	owner := ownerOfKind(u, "MachinePool")
	if owner == nil {
		return nil
	}
	mp := &clusterv1.MachinePool{}
	if err := p.Client.Get(ctx, client.ObjectKey{Namespace: u.GetNamespace(), Name: owner.Name}, mp); err != nil {
		return client.IgnoreNotFound(err)
	}
	replicas := int(ptr.Deref(mp.Spec.Replicas, 1))
	withMachines, _, _ := unstructured.NestedBool(u.Object, "spec", "machines")
	var ids []any
	for i := range replicas {
		name := fmt.Sprintf("%s-%d", u.GetName(), i)
		id := ProviderID(u.GetNamespace(), name)
		if err := p.registerNode(ctx, u.GetNamespace()+"-"+name, id); err != nil {
			return err
		}
		if withMachines {
			if err := p.poolMachine(ctx, v, u, mp, name, id); err != nil {
				return err
			}
		}
		ids = append(ids, id)
	}
	if withMachines {
		if err := p.dropPoolMachines(ctx, v, u, replicas); err != nil {
			return err
		}
	}
	before := u.DeepCopy()
	_ = unstructured.SetNestedSlice(u.Object, ids, "spec", "providerIDList")
	if err := p.patch(ctx, u, before, false); err != nil {
		return err
	}
	before = u.DeepCopy()
	p.setReady(v, u, "provisioned")
	_ = unstructured.SetNestedField(u.Object, int64(replicas), "status", "replicas")
	if withMachines {
		_ = unstructured.SetNestedField(u.Object, builder.InfraMachineKind, "status", "infrastructureMachineKind")
	}
	return p.patch(ctx, u, before, true)
}

// poolMachine creates the InfraMachine of a pool instance, provisioned, owned by the InfraMachinePool.
func (p *Provider) poolMachine(ctx context.Context, v builder.Provider, pool *unstructured.Unstructured, mp *clusterv1.MachinePool, name, id string) error {
	im := v.InfraMachine(pool.GetNamespace(), name)
	im.SetLabels(map[string]string{clusterv1.ClusterNameLabel: mp.Spec.ClusterName, clusterv1.MachinePoolNameLabel: mp.Name})
	im.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: pool.GetAPIVersion(), Kind: pool.GetKind(), Name: pool.GetName(), UID: pool.GetUID()}})
	_ = unstructured.SetNestedField(im.Object, id, "spec", "providerID")
	if err := p.Client.Create(ctx, im); err != nil {
		if apierrors.IsAlreadyExists(err) {
			return nil
		}
		return err
	}
	before := im.DeepCopy()
	p.setReady(v, im, "provisioned")
	return p.patch(ctx, im, before, true)
}

// dropPoolMachines deletes the Machines (or, without one yet, the InfraMachines) of the pool's instances
// from keep on.
func (p *Provider) dropPoolMachines(ctx context.Context, v builder.Provider, pool *unstructured.Unstructured, keep int) error {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(schema.GroupVersionKind{Group: v.Infrastructure, Version: v.Version, Kind: builder.InfraMachineKind + "List"})
	if err := p.Client.List(ctx, list, client.InNamespace(pool.GetNamespace())); err != nil {
		return err
	}
	for i := range list.Items {
		im := &list.Items[i]
		var index int
		if _, err := fmt.Sscanf(strings.TrimPrefix(im.GetName(), pool.GetName()+"-"), "%d", &index); err != nil ||
			!strings.HasPrefix(im.GetName(), pool.GetName()+"-") || index < keep {
			continue
		}
		var target client.Object = im
		if m := ownerOfKind(im, "Machine"); m != nil {
			target = &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: im.GetNamespace(), Name: m.Name}}
		}
		if err := p.Client.Delete(ctx, target); err != nil && !apierrors.IsNotFound(err) {
			return err
		}
	}
	return nil
}
