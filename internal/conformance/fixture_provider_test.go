package conformance

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/patch"
	"github.com/capstan-dev/capstan/internal/reconciler"
)

// The fixture provider: a small infrastructure provider written to follow the contract, used to check
// that the kit passes a conformant provider and fails broken ones. Its kinds are FixtureCluster and
// FixtureMachine in infrastructure.cluster.x-k8s.io/v1beta1; its CRDs and release artifacts are under
// testdata/repository.

var (
	fixtureClusterGVK = schema.GroupVersionKind{Group: infrastructureGroup, Version: "v1beta1", Kind: "FixtureCluster"}
	fixtureMachineGVK = schema.GroupVersionKind{Group: infrastructureGroup, Version: "v1beta1", Kind: "FixtureMachine"}
)

const (
	fixtureClusterFinalizer = "fixturecluster.infrastructure.cluster.x-k8s.io"
	fixtureMachineFinalizer = "fixturemachine.infrastructure.cluster.x-k8s.io"
	fixtureRepository       = "testdata/repository"
)

// fixtureBehaviour says how the fixture provider deviates from the contract; the zero value follows it.
type fixtureBehaviour struct {
	// ignorePause reconciles objects of paused Clusters and objects with the paused annotation.
	ignorePause bool
	// ignoreManagedByLabel reconciles InfraClusters with the cluster.x-k8s.io/managed-by label (it only
	// honours the annotation).
	ignoreManagedByLabel bool
	// readyWhileDeleting leaves the Ready conditions True while deleting.
	readyWhileDeleting bool
	// replaceMachineLabels overwrites the labels of its FixtureMachines with its own.
	replaceMachineLabels bool
	// statusOnce reports provisioned only when it creates the infrastructure, remembering in memory what
	// it created: an object that arrives without status after a move is never provisioned again.
	statusOnce bool
	// endpointFromCluster provides no endpoint and waits for the Cluster's (Provider.ControlPlaneEndpoint);
	// with noEndpointWait it does not wait.
	endpointFromCluster, noEndpointWait bool
	// ignoreScope, started with a Scope, reconciles every namespace and every object.
	ignoreScope bool
}

// fixtureProvider describes the fixture provider to the kit.
func fixtureProvider(b fixtureBehaviour) (Provider, error) {
	crds, err := fixtureCRDs()
	if err != nil {
		return Provider{}, err
	}
	return Provider{
		Name:       "fixture",
		CRDs:       crds,
		Repository: os.DirFS(fixtureRepository),
		NewInfraCluster: func(namespace, name string) *unstructured.Unstructured {
			return newFixtureObject(fixtureClusterGVK, namespace, name)
		},
		NewInfraMachine: func(namespace, name string) *unstructured.Unstructured {
			return newFixtureObject(fixtureMachineGVK, namespace, name)
		},
		Start: func(ctx context.Context, cfg *rest.Config) error { return b.start(ctx, cfg, Scope{}) },
		StartScoped: func(ctx context.Context, cfg *rest.Config, scope Scope) error {
			if b.ignoreScope {
				scope = Scope{}
			}
			return b.start(ctx, cfg, scope)
		},
		ControlPlaneEndpoint: b.endpoint(),
	}, nil
}

// endpoint is the endpoint the fixture's users provide when the fixture provides none.
func (b fixtureBehaviour) endpoint() *clusterv1.APIEndpoint {
	if !b.endpointFromCluster {
		return nil
	}
	return &clusterv1.APIEndpoint{Host: "10.0.0.100", Port: 6443}
}

// fixtureCRDs returns the CRDs of the fixture provider's components.
func fixtureCRDs() ([]*apiextensionsv1.CustomResourceDefinition, error) {
	data, err := os.ReadFile(filepath.Join(fixtureRepository, "infrastructure-fixture", "v0.1.0", componentsFile))
	if err != nil {
		return nil, err
	}
	objs, err := decodeDocuments(string(data))
	if err != nil {
		return nil, err
	}
	c := &components{objects: objs}
	return c.crds()
}

func newFixtureObject(gvk schema.GroupVersionKind, namespace, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{}}}
	u.SetGroupVersionKind(gvk)
	u.SetNamespace(namespace)
	u.SetName(name)
	return u
}

// start runs the fixture provider's controllers until ctx is done, as its manager does with --namespace and
// --watch-filter set to the scope's.
func (b fixtureBehaviour) start(ctx context.Context, cfg *rest.Config, scope Scope) error {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, clusterv1.AddToScheme} {
		if err := add(scheme); err != nil {
			return err
		}
	}
	opts := ctrl.Options{
		Scheme:     scheme,
		Metrics:    metricsserver.Options{BindAddress: "0"},
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	}
	if scope.Namespace != "" {
		opts.Cache.DefaultNamespaces = map[string]cache.Config{scope.Namespace: {}}
	}
	mgr, err := ctrl.NewManager(cfg, opts)
	if err != nil {
		return err
	}
	c := mgr.GetClient()
	clusters := &fixtureClusterReconciler{client: c, behaviour: b}
	if err := ctrl.NewControllerManagedBy(mgr).Named("fixturecluster").
		For(newFixtureObject(fixtureClusterGVK, "", "")).
		WithEventFilter(reconciler.HasWatchLabel(scope.WatchFilter)).
		Watches(&clusterv1.Cluster{}, handler.EnqueueRequestsFromMapFunc(clusterToInfraCluster)).
		Complete(reconciler.RequeueOnConflict(clusters)); err != nil {
		return err
	}
	machines := &fixtureMachineReconciler{client: c, behaviour: b}
	if err := ctrl.NewControllerManagedBy(mgr).Named("fixturemachine").
		For(newFixtureObject(fixtureMachineGVK, "", "")).
		WithEventFilter(reconciler.HasWatchLabel(scope.WatchFilter)).
		Watches(&clusterv1.Machine{}, handler.EnqueueRequestsFromMapFunc(machineToInfraMachine)).
		Watches(&clusterv1.Cluster{}, handler.EnqueueRequestsFromMapFunc(machines.clusterToInfraMachines)).
		Complete(reconciler.RequeueOnConflict(machines)); err != nil {
		return err
	}
	return mgr.Start(ctx)
}

func clusterToInfraCluster(_ context.Context, obj client.Object) []reconcile.Request {
	ref := obj.(*clusterv1.Cluster).Spec.InfrastructureRef
	if ref == nil || ref.Kind != fixtureClusterGVK.Kind {
		return nil
	}
	return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: obj.GetNamespace(), Name: ref.Name}}}
}

func machineToInfraMachine(_ context.Context, obj client.Object) []reconcile.Request {
	ref := obj.(*clusterv1.Machine).Spec.InfrastructureRef
	if ref.Kind != fixtureMachineGVK.Kind {
		return nil
	}
	return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: obj.GetNamespace(), Name: ref.Name}}}
}

// fixtureOwner returns the owner of a kind from Cluster API's group, nil when there is none yet.
func fixtureOwner(ctx context.Context, c client.Client, obj *unstructured.Unstructured, owner client.Object, kind string) (bool, error) {
	for _, ref := range obj.GetOwnerReferences() {
		gv, err := schema.ParseGroupVersion(ref.APIVersion)
		if err != nil || gv.Group != clusterv1.GroupVersion.Group || ref.Kind != kind {
			continue
		}
		if err := c.Get(ctx, client.ObjectKey{Namespace: obj.GetNamespace(), Name: ref.Name}, owner); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		return true, nil
	}
	return false, nil
}

// setFixtureConditions sets the Ready condition (Cluster API v1beta1 condition) and the v1beta2 Ready and
// Paused conditions, keeping lastTransitionTime when a status does not change.
func setFixtureConditions(obj *unstructured.Unstructured, ready, paused bool) {
	status := func(b bool) string {
		if b {
			return string(metav1.ConditionTrue)
		}
		return string(metav1.ConditionFalse)
	}
	set := func(path []string, cond map[string]any) { setCondition(obj, path, cond) }
	if ready {
		set([]string{"status", "conditions"}, map[string]any{"type": "Ready", "status": "True"})
	} else {
		set([]string{"status", "conditions"}, map[string]any{"type": "Ready", "status": "False", "severity": "Info", "reason": "Provisioning"})
	}
	readyReason := "NotReady"
	if ready {
		readyReason = "Ready"
	}
	set([]string{"status", "v1beta2", "conditions"}, map[string]any{"type": "Ready", "status": status(ready), "reason": readyReason})
	pausedReason := clusterv1.NotPausedV1Beta2Reason
	if paused {
		pausedReason = clusterv1.PausedV1Beta2Reason
	}
	set([]string{"status", "v1beta2", "conditions"}, map[string]any{"type": clusterv1.PausedV1Beta2Condition, "status": status(paused), "reason": pausedReason})
}

// deleting sets the Ready conditions False with reason Deleting, as the provider deletes the object.
func (b fixtureBehaviour) deleting(obj *unstructured.Unstructured) {
	if b.readyWhileDeleting {
		return
	}
	setCondition(obj, []string{"status", "conditions"}, map[string]any{"type": "Ready", "status": "False", "severity": "Info", "reason": clusterv1.DeletingReason})
	setCondition(obj, []string{"status", "v1beta2", "conditions"}, map[string]any{"type": "Ready", "status": "False", "reason": clusterv1.DeletingReason})
}

// setCondition sets a condition in the list at path, keeping lastTransitionTime when its status does not
// change.
func setCondition(obj *unstructured.Unstructured, path []string, cond map[string]any) {
	list, _, _ := unstructured.NestedSlice(obj.Object, path...)
	now := time.Now().UTC().Truncate(time.Second).Format(time.RFC3339)
	cond["lastTransitionTime"] = now
	for i, item := range list {
		if m, ok := item.(map[string]any); ok && m["type"] == cond["type"] {
			if m["status"] == cond["status"] {
				cond["lastTransitionTime"] = m["lastTransitionTime"]
			}
			list[i] = cond
			_ = unstructured.SetNestedSlice(obj.Object, list, path...)
			return
		}
	}
	_ = unstructured.SetNestedSlice(obj.Object, append(list, cond), path...)
}

type fixtureClusterReconciler struct {
	client    client.Client
	behaviour fixtureBehaviour
	// created holds the UIDs of the objects whose infrastructure the provider created.
	created sync.Map
}

func (r *fixtureClusterReconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	obj := newFixtureObject(fixtureClusterGVK, req.Namespace, req.Name)
	if err := r.client.Get(ctx, req.NamespacedName, obj); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if _, ok := obj.GetAnnotations()[clusterv1.ManagedByAnnotation]; ok {
		return reconcile.Result{}, nil
	}
	if _, ok := obj.GetLabels()[clusterv1.ManagedByAnnotation]; ok && !r.behaviour.ignoreManagedByLabel {
		return reconcile.Result{}, nil
	}
	cluster := &clusterv1.Cluster{}
	if found, err := fixtureOwner(ctx, r.client, obj, cluster, "Cluster"); err != nil || !found {
		return reconcile.Result{}, err
	}
	helper := patch.NewHelper(obj, r.client)
	paused := reconciler.IsPaused(cluster, obj) && !r.behaviour.ignorePause
	ready, _, _ := unstructured.NestedBool(obj.Object, "status", "ready")
	setFixtureConditions(obj, ready, paused)
	if paused {
		return reconcile.Result{}, helper.Patch(ctx, obj)
	}
	if !obj.GetDeletionTimestamp().IsZero() {
		r.behaviour.deleting(obj)
		controllerutil.RemoveFinalizer(obj, fixtureClusterFinalizer)
		return reconcile.Result{}, helper.Patch(ctx, obj)
	}
	if _, done := r.created.Load(obj.GetUID()); done && r.behaviour.statusOnce {
		return reconcile.Result{}, helper.Patch(ctx, obj)
	}
	controllerutil.AddFinalizer(obj, fixtureClusterFinalizer)
	if err := r.ensureLoadBalancer(ctx, obj); err != nil {
		return reconcile.Result{}, err
	}
	if r.behaviour.endpointFromCluster {
		if !cluster.Spec.ControlPlaneEndpoint.IsValid() && !r.behaviour.noEndpointWait {
			return reconcile.Result{}, helper.Patch(ctx, obj) // waiting for the Cluster's endpoint
		}
	} else if host, _, _ := unstructured.NestedString(obj.Object, "spec", "controlPlaneEndpoint", "host"); host == "" {
		_ = unstructured.SetNestedMap(obj.Object, map[string]any{"host": "127.0.0.1", "port": int64(6443)}, "spec", "controlPlaneEndpoint")
	}
	_ = unstructured.SetNestedField(obj.Object, true, "status", "ready")
	_ = unstructured.SetNestedMap(obj.Object, map[string]any{
		"fd-a": map[string]any{"controlPlane": true},
		"fd-b": map[string]any{"controlPlane": false, "attributes": map[string]any{"zone": "b"}},
	}, "status", "failureDomains")
	setFixtureConditions(obj, true, false)
	r.created.Store(obj.GetUID(), true)
	return reconcile.Result{}, helper.Patch(ctx, obj)
}

// ensureLoadBalancer creates the ConfigMap standing for the cluster's load balancer, owned by the
// FixtureCluster so that it links to the Cluster.
func (r *fixtureClusterReconciler) ensureLoadBalancer(ctx context.Context, obj *unstructured.Unstructured) error {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: obj.GetNamespace(), Name: obj.GetName() + "-lb"}}
	_, err := controllerutil.CreateOrUpdate(ctx, r.client, cm, func() error {
		cm.Data = map[string]string{"address": "127.0.0.1:6443"}
		return controllerutil.SetOwnerReference(obj, cm, r.client.Scheme())
	})
	if err != nil {
		return fmt.Errorf("ensuring the load balancer of %s: %w", obj.GetName(), err)
	}
	return nil
}

type fixtureMachineReconciler struct {
	client    client.Client
	behaviour fixtureBehaviour
	// created holds the UIDs of the objects whose infrastructure the provider created.
	created sync.Map
}

func (r *fixtureMachineReconciler) clusterToInfraMachines(ctx context.Context, obj client.Object) []reconcile.Request {
	machines := &clusterv1.MachineList{}
	if err := r.client.List(ctx, machines, client.InNamespace(obj.GetNamespace()), client.MatchingLabels{clusterv1.ClusterNameLabel: obj.GetName()}); err != nil {
		return nil
	}
	var out []reconcile.Request
	for i := range machines.Items {
		out = append(out, machineToInfraMachine(ctx, &machines.Items[i])...)
	}
	return out
}

func (r *fixtureMachineReconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	obj := newFixtureObject(fixtureMachineGVK, req.Namespace, req.Name)
	if err := r.client.Get(ctx, req.NamespacedName, obj); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	machine := &clusterv1.Machine{}
	if found, err := fixtureOwner(ctx, r.client, obj, machine, "Machine"); err != nil || !found {
		return reconcile.Result{}, err
	}
	cluster := &clusterv1.Cluster{}
	if err := r.client.Get(ctx, client.ObjectKey{Namespace: obj.GetNamespace(), Name: machine.Spec.ClusterName}, cluster); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	helper := patch.NewHelper(obj, r.client)
	paused := reconciler.IsPaused(cluster, obj) && !r.behaviour.ignorePause
	ready, _, _ := unstructured.NestedBool(obj.Object, "status", "ready")
	setFixtureConditions(obj, ready, paused)
	if paused {
		return reconcile.Result{}, helper.Patch(ctx, obj)
	}
	if !obj.GetDeletionTimestamp().IsZero() {
		r.behaviour.deleting(obj)
		controllerutil.RemoveFinalizer(obj, fixtureMachineFinalizer)
		return reconcile.Result{}, helper.Patch(ctx, obj)
	}
	if r.behaviour.replaceMachineLabels {
		obj.SetLabels(map[string]string{clusterv1.ClusterNameLabel: cluster.Name})
	}
	if _, done := r.created.Load(obj.GetUID()); done && r.behaviour.statusOnce {
		return reconcile.Result{}, helper.Patch(ctx, obj)
	}
	controllerutil.AddFinalizer(obj, fixtureMachineFinalizer)
	if !cluster.Status.InfrastructureReady || machine.Spec.Bootstrap.DataSecretName == nil {
		return reconcile.Result{}, helper.Patch(ctx, obj)
	}
	_ = unstructured.SetNestedField(obj.Object, fmt.Sprintf("fixture://%s/%s", obj.GetNamespace(), obj.GetName()), "spec", "providerID")
	if machine.Spec.FailureDomain != nil {
		_ = unstructured.SetNestedField(obj.Object, *machine.Spec.FailureDomain, "spec", "failureDomain")
	}
	_ = unstructured.SetNestedField(obj.Object, true, "status", "ready")
	_ = unstructured.SetNestedSlice(obj.Object, []any{
		map[string]any{"type": "InternalIP", "address": "10.0.0.10"},
		map[string]any{"type": "Hostname", "address": obj.GetName()},
	}, "status", "addresses")
	setFixtureConditions(obj, true, false)
	r.created.Store(obj.GetUID(), true)
	return reconcile.Result{}, helper.Patch(ctx, obj)
}
