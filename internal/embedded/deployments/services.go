package deployments

import (
	"context"
	"fmt"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// ManagedBy is the endpointslice.kubernetes.io/managed-by value of the EndpointSlices the runtime writes.
const ManagedBy = "local-runtime.capstan.dev"

// setupServices adds the controller that gives the Services selecting the runtime's processes their
// EndpointSlices.
func (r *Runtime) setupServices(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&corev1.Service{}).
		Owns(&discoveryv1.EndpointSlice{}).
		// A Deployment's status changes when its processes start, stop or become ready.
		Watches(&appsv1.Deployment{}, handler.EnqueueRequestsFromMapFunc(r.servicesOf)).
		WithOptions(controller.Options{MaxConcurrentReconciles: 2}).
		Named("local-runtime-services").
		Complete(reconcile.Func(r.reconcileService))
}

// servicesOf returns the Services of a Deployment's namespace whose selector matches its Pods.
func (r *Runtime) servicesOf(ctx context.Context, o client.Object) []reconcile.Request {
	d, ok := o.(*appsv1.Deployment)
	if !ok {
		return nil
	}
	list := &corev1.ServiceList{}
	if err := r.Client.List(ctx, list, client.InNamespace(d.Namespace)); err != nil {
		return nil
	}
	var out []reconcile.Request
	for _, svc := range list.Items {
		if len(svc.Spec.Selector) > 0 && labels.SelectorFromSet(svc.Spec.Selector).Matches(labels.Set(d.Spec.Template.Labels)) {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&svc)})
		}
	}
	return out
}

// endpoint is a replica a Service selects.
type endpoint struct {
	name      string
	address   string
	container *corev1.Container
	ports     map[int32]int32
	ready     bool
}

// endpointsOf returns the running replicas whose Pod template labels match selector in namespace.
func (r *Runtime) endpointsOf(ctx context.Context, namespace string, selector labels.Selector) ([]endpoint, error) {
	r.mu.Lock()
	type candidate struct {
		key      types.NamespacedName
		replicas []*replica
	}
	var candidates []candidate
	for key, rn := range r.runs {
		if key.Namespace == namespace && len(rn.replicas) > 0 {
			candidates = append(candidates, candidate{key: key, replicas: slices.Clone(rn.replicas)})
		}
	}
	r.mu.Unlock()

	var out []endpoint
	for _, c := range candidates {
		d := &appsv1.Deployment{}
		if err := r.Client.Get(ctx, c.key, d); err != nil {
			if apierrors.IsNotFound(err) {
				continue
			}
			return nil, err
		}
		if !selector.Matches(labels.Set(d.Spec.Template.Labels)) || len(d.Spec.Template.Spec.Containers) == 0 {
			continue
		}
		for _, rep := range c.replicas {
			if rep.proc.Pid() == 0 {
				continue
			}
			out = append(out, endpoint{name: rep.name, address: rep.address, container: &d.Spec.Template.Spec.Containers[0],
				ports: rep.ports, ready: rep.isReady.Load()})
		}
	}
	slices.SortFunc(out, func(a, b endpoint) int { return strings.Compare(a.name, b.name) })
	return out, nil
}

// reconcileService writes one EndpointSlice per selected replica (each replica listens on loopback ports
// of its own, and an EndpointSlice has one set of ports), and deletes the slices of replicas that are
// gone. Services the runtime's processes do not back are left alone.
func (r *Runtime) reconcileService(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	svc := &corev1.Service{}
	if err := r.Client.Get(ctx, req.NamespacedName, svc); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	var endpoints []endpoint
	if len(svc.Spec.Selector) > 0 && svc.DeletionTimestamp.IsZero() {
		var err error
		if endpoints, err = r.endpointsOf(ctx, svc.Namespace, labels.SelectorFromSet(svc.Spec.Selector)); err != nil {
			return reconcile.Result{}, err
		}
	}
	existing := &discoveryv1.EndpointSliceList{}
	if err := r.Client.List(ctx, existing, client.InNamespace(svc.Namespace), client.MatchingLabels{
		discoveryv1.LabelServiceName: svc.Name, discoveryv1.LabelManagedBy: ManagedBy}); err != nil {
		return reconcile.Result{}, err
	}
	want := map[string]bool{}
	for _, ep := range endpoints {
		slice := desiredSlice(svc, ep)
		want[slice.Name] = true
		if err := r.applySlice(ctx, slice); err != nil {
			return reconcile.Result{}, err
		}
	}
	for i := range existing.Items {
		if s := &existing.Items[i]; !want[s.Name] {
			ctrl.LoggerFrom(ctx).Info("Deleting the EndpointSlice of a stopped process", "EndpointSlice", s.Namespace+"/"+s.Name)
			if err := r.Client.Delete(ctx, s); client.IgnoreNotFound(err) != nil {
				return reconcile.Result{}, err
			}
		}
	}
	return reconcile.Result{}, nil
}

// desiredSlice is the EndpointSlice of a Service for one replica: the replica's address in the pod
// network (which stands for 127.0.0.1, see package localnet: the API server refuses loopback addresses
// in EndpointSlices), and for each port of the Service the loopback port its target port is mapped to.
func desiredSlice(svc *corev1.Service, ep endpoint) *discoveryv1.EndpointSlice {
	slice := &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: svc.Namespace,
			Name:      sliceName(svc.Name, ep.name),
			Labels:    map[string]string{discoveryv1.LabelServiceName: svc.Name, discoveryv1.LabelManagedBy: ManagedBy},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Service", Name: svc.Name, UID: svc.UID,
				Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}},
		},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints: []discoveryv1.Endpoint{{
			Addresses:  []string{ep.address},
			Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(ep.ready), Serving: ptr.To(ep.ready), Terminating: ptr.To(false)},
		}},
	}
	for _, p := range svc.Spec.Ports {
		if p.Protocol == "" {
			p.Protocol = corev1.ProtocolTCP
		}
		slice.Ports = append(slice.Ports, discoveryv1.EndpointPort{
			Name: ptr.To(p.Name), Port: ptr.To(localPort(p, ep)), Protocol: ptr.To(p.Protocol),
			AppProtocol: p.AppProtocol,
		})
	}
	return slice
}

// localPort returns the loopback port a Service port reaches on a replica: its target port (by name, a
// container port's number; by number, itself) through the replica's port map; a port no flag moved is
// used as it is.
func localPort(p corev1.ServicePort, ep endpoint) int32 {
	target := p.Port
	switch {
	case p.TargetPort.Type == intstr.String && p.TargetPort.StrVal != "":
		for _, cp := range ep.container.Ports {
			if cp.Name == p.TargetPort.StrVal {
				target = cp.ContainerPort
			}
		}
	case p.TargetPort.IntVal != 0:
		target = p.TargetPort.IntVal
	}
	if local, ok := ep.ports[target]; ok {
		return local
	}
	return target
}

// sliceName names the EndpointSlice of a Service for a replica.
func sliceName(service, replica string) string {
	name := service + "-" + replica
	if len(name) > 253 {
		name = name[:253]
	}
	return name
}

// applySlice creates or updates an EndpointSlice.
func (r *Runtime) applySlice(ctx context.Context, want *discoveryv1.EndpointSlice) error {
	current := &discoveryv1.EndpointSlice{}
	err := r.Client.Get(ctx, client.ObjectKeyFromObject(want), current)
	if apierrors.IsNotFound(err) {
		if err := r.Client.Create(ctx, want); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating EndpointSlice %s/%s: %w", want.Namespace, want.Name, err)
		}
		return nil
	}
	if err != nil {
		return err
	}
	if equalSlices(current, want) {
		return nil
	}
	want.ResourceVersion = current.ResourceVersion
	if err := r.Client.Update(ctx, want); err != nil {
		return fmt.Errorf("updating EndpointSlice %s/%s: %w", want.Namespace, want.Name, err)
	}
	return nil
}

func equalSlices(a, b *discoveryv1.EndpointSlice) bool {
	return a.AddressType == b.AddressType &&
		fmt.Sprint(a.Labels) == fmt.Sprint(b.Labels) &&
		fmt.Sprintf("%+v", deref(a.Endpoints)) == fmt.Sprintf("%+v", deref(b.Endpoints)) &&
		fmt.Sprintf("%+v", derefPorts(a.Ports)) == fmt.Sprintf("%+v", derefPorts(b.Ports))
}

func deref(eps []discoveryv1.Endpoint) []string {
	out := make([]string, 0, len(eps))
	for _, e := range eps {
		out = append(out, fmt.Sprintf("%v %t %t %t", e.Addresses, ptr.Deref(e.Conditions.Ready, false),
			ptr.Deref(e.Conditions.Serving, false), ptr.Deref(e.Conditions.Terminating, false)))
	}
	return out
}

func derefPorts(ps []discoveryv1.EndpointPort) []string {
	out := make([]string, 0, len(ps))
	for _, p := range ps {
		out = append(out, fmt.Sprintf("%s %d %s", ptr.Deref(p.Name, ""), ptr.Deref(p.Port, 0), ptr.Deref(p.Protocol, "")))
	}
	return out
}
