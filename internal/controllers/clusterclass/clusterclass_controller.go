package clusterclass

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	runtimev1 "github.com/capstan-dev/capstan/api/runtime/v1alpha1"
	"github.com/capstan-dev/capstan/internal/conditions"
	"github.com/capstan-dev/capstan/internal/contract"
	"github.com/capstan-dev/capstan/internal/patch"
	"github.com/capstan-dev/capstan/internal/reconciler"
	runtimeclient "github.com/capstan-dev/capstan/internal/runtime/client"
	"github.com/capstan-dev/capstan/internal/topology/variables"
)

// +kubebuilder:rbac:groups=cluster.x-k8s.io,resources=clusterclasses;clusterclasses/status,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io;controlplane.cluster.x-k8s.io;bootstrap.cluster.x-k8s.io,resources=*,verbs=get;list;watch
// +kubebuilder:rbac:groups=apiextensions.k8s.io,resources=customresourcedefinitions,verbs=get;list;watch

// Reconciler reconciles ClusterClasses.
type Reconciler struct {
	Client    client.Client
	Contracts *contract.Resolver
	// WatchFilter is the value of --watch-filter; "" reconciles everything.
	WatchFilter string
	// RuntimeClient calls the DiscoverVariables hook of external patches; nil when the RuntimeSDK
	// feature gate is off (a class that discovers variables then says so in its VariablesReady condition).
	RuntimeClient *runtimeclient.Client

	writes patch.Writes
}

// SetupWithManager adds the ClusterClass controller to mgr.
func (r *Reconciler) SetupWithManager(_ context.Context, mgr ctrl.Manager, options controller.Options) error {
	if r.Client == nil || r.Contracts == nil {
		return errors.New("the ClusterClass controller needs a Client and Contracts")
	}
	b := ctrl.NewControllerManagedBy(mgr).
		Named("clusterclass").
		For(&clusterv1.ClusterClass{})
	if r.RuntimeClient != nil {
		b = b.Watches(&runtimev1.ExtensionConfig{}, handler.EnqueueRequestsFromMapFunc(r.extensionConfigToClasses))
	}
	return b.WithOptions(options).
		WithEventFilter(reconciler.HasWatchLabel(r.WatchFilter)).
		Complete(reconciler.Guarded(r.Client, &r.writes, r))
}

// Reconcile checks one ClusterClass.
func (r *Reconciler) Reconcile(ctx context.Context, class *clusterv1.ClusterClass) (_ ctrl.Result, reterr error) {
	if !class.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	helper := patch.NewHelper(class, r.Client, patch.WithWrites(&r.writes))
	facts := r.reconcile(ctx, class)
	defer func() {
		setStatus(class, facts)
		if err := helper.Patch(ctx, class); err != nil {
			reterr = errors.Join(reterr, err)
		}
	}()
	if len(facts.refErrs) > 0 {
		// The templates are often created right after the class (clusterclass-*.yaml lists the class
		// first), and nothing else wakes this controller: look again, as upstream's error backoff does.
		return ctrl.Result{RequeueAfter: missingTemplateRequeue}, facts.internalErr
	}
	if facts.discoveryErr != nil && facts.internalErr == nil {
		return ctrl.Result{RequeueAfter: discoveryRetry}, nil
	}
	return ctrl.Result{}, facts.internalErr
}

// missingTemplateRequeue is how soon a class whose templates cannot be used is checked again.
const missingTemplateRequeue = 5 * time.Second

// facts are what a reconcile found, from which the status is computed.
type facts struct {
	// outdated lists references moved to a newer apiVersion ("Kind name: old -> new").
	outdated []string
	// refErrs are references that do not resolve: missing templates or providers without a contract.
	refErrs []string
	// variablesErr says why the variables are not valid.
	variablesErr error
	// internalErr is a transient error to retry.
	internalErr error
	// discoveryErr says why the variables of external patches could not be discovered.
	discoveryErr error
}

func (r *Reconciler) reconcile(ctx context.Context, class *clusterv1.ClusterClass) facts {
	var f facts
	owned := map[string]bool{}
	for _, ref := range refs(class) {
		old := ref.APIVersion
		if _, changed, err := r.Contracts.UpdateReference(ctx, ref); err != nil {
			f.refErrs = append(f.refErrs, fmt.Sprintf("%s %s: %v", ref.Kind, ref.Name, err))
			continue
		} else if changed {
			f.outdated = append(f.outdated, fmt.Sprintf("%s %s: %s -> %s", ref.Kind, ref.Name, old, ref.APIVersion))
		}
		obj := &unstructured.Unstructured{}
		obj.SetGroupVersionKind(schema.FromAPIVersionAndKind(ref.APIVersion, ref.Kind))
		ns := ref.Namespace
		if ns == "" {
			ns = class.Namespace
		}
		if err := r.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: ref.Name}, obj); err != nil {
			if apierrors.IsNotFound(err) {
				f.refErrs = append(f.refErrs, fmt.Sprintf("%s %s does not exist", ref.Kind, ref.Name))
				continue
			}
			f.internalErr = errors.Join(f.internalErr, fmt.Errorf("getting %s %s: %w", ref.Kind, ref.Name, err))
			continue
		}
		// A template referenced twice (the control plane's and a worker class's machines) is owned once.
		if key := obj.GroupVersionKind().GroupKind().String() + "/" + ns + "/" + ref.Name; !owned[key] {
			owned[key] = true
			if err := r.ensureOwner(ctx, class, obj); err != nil {
				f.internalErr = errors.Join(f.internalErr, err)
			}
		}
	}
	if _, err := variables.Compile(class.Spec.Variables); err != nil {
		f.variablesErr = err
	}
	class.Status.Variables = statusVariables(class)
	r.discoverVariables(ctx, class, &f)
	return f
}

// ensureOwner makes the class an owner of a template it references, as upstream's ClusterClass controller
// does: clusterctl move then moves the template with the class, and the garbage collector deletes it with
// the last class that references it.
func (r *Reconciler) ensureOwner(ctx context.Context, class *clusterv1.ClusterClass, obj *unstructured.Unstructured) error {
	if class.UID == "" || slices.ContainsFunc(obj.GetOwnerReferences(), func(o metav1.OwnerReference) bool { return o.UID == class.UID }) {
		return nil
	}
	before := obj.DeepCopy()
	obj.SetOwnerReferences(append(obj.GetOwnerReferences(), metav1.OwnerReference{
		APIVersion: clusterv1.GroupVersion.String(), Kind: "ClusterClass", Name: class.Name, UID: class.UID,
	}))
	ctrl.LoggerFrom(ctx).Info("Setting the ClusterClass as owner of its template", obj.GetKind(), klog.KObj(obj))
	if err := r.Client.Patch(ctx, obj, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("setting ClusterClass %s as owner of %s %s: %w", class.Name, obj.GetKind(), obj.GetName(), err)
	}
	return nil
}

// refs returns pointers to every template reference of a class.
func refs(class *clusterv1.ClusterClass) []*corev1.ObjectReference {
	var out []*corev1.ObjectReference
	add := func(ref *corev1.ObjectReference) {
		if ref != nil {
			out = append(out, ref)
		}
	}
	add(class.Spec.Infrastructure.Ref)
	add(class.Spec.ControlPlane.Ref)
	if mi := class.Spec.ControlPlane.MachineInfrastructure; mi != nil {
		add(mi.Ref)
	}
	for i := range class.Spec.Workers.MachineDeployments {
		md := &class.Spec.Workers.MachineDeployments[i]
		add(md.Template.Bootstrap.Ref)
		add(md.Template.Infrastructure.Ref)
	}
	for i := range class.Spec.Workers.MachinePools {
		mp := &class.Spec.Workers.MachinePools[i]
		add(mp.Template.Bootstrap.Ref)
		add(mp.Template.Infrastructure.Ref)
	}
	return out
}

// statusVariables lists the variables of the class's spec as "inline" definitions, keeping definitions
// that other sources (runtime extensions) added.
func statusVariables(class *clusterv1.ClusterClass) []clusterv1.ClusterClassStatusVariable {
	var out []clusterv1.ClusterClassStatusVariable
	inline := map[string]bool{}
	for _, v := range class.Spec.Variables {
		inline[v.Name] = true
		out = append(out, clusterv1.ClusterClassStatusVariable{
			Name: v.Name,
			Definitions: []clusterv1.ClusterClassStatusVariableDefinition{{
				From: clusterv1.VariableDefinitionFromInline, Required: v.Required, Metadata: v.Metadata, Schema: v.Schema,
			}},
		})
	}
	for _, sv := range class.Status.Variables {
		var external []clusterv1.ClusterClassStatusVariableDefinition
		for _, d := range sv.Definitions {
			if d.From != clusterv1.VariableDefinitionFromInline {
				external = append(external, d)
			}
		}
		if len(external) == 0 {
			continue
		}
		if inline[sv.Name] {
			for i := range out {
				if out[i].Name == sv.Name {
					out[i].Definitions = append(out[i].Definitions, external...)
					out[i].DefinitionsConflict = true
				}
			}
			continue
		}
		sv.Definitions = external
		out = append(out, sv)
	}
	return out
}

// setStatus computes the conditions of a ClusterClass from the facts of a reconcile.
func setStatus(class *clusterv1.ClusterClass, f facts) {
	switch {
	case f.discoveryErr != nil:
		conditions.MarkFalse(class, clusterv1.ClusterClassVariablesReconciledCondition, clusterv1.VariableDiscoveryFailedReason, clusterv1.ConditionSeverityError,
			"%s", f.discoveryErr.Error())
		conditions.SetV1Beta2(class, metav1.Condition{Type: clusterv1.ClusterClassVariablesReadyV1Beta2Condition, Status: metav1.ConditionFalse,
			Reason: clusterv1.ClusterClassVariablesReadyVariableDiscoveryFailedV1Beta2Reason, Message: f.discoveryErr.Error()})
	case f.variablesErr != nil:
		conditions.MarkFalse(class, clusterv1.ClusterClassVariablesReconciledCondition, "VariablesInvalid", clusterv1.ConditionSeverityError,
			"%s", conditions.Capitalise(f.variablesErr.Error()))
		conditions.SetV1Beta2(class, metav1.Condition{Type: clusterv1.ClusterClassVariablesReadyV1Beta2Condition, Status: metav1.ConditionFalse,
			Reason: "VariablesInvalid", Message: conditions.Capitalise(f.variablesErr.Error())})
	default:
		conditions.MarkTrue(class, clusterv1.ClusterClassVariablesReconciledCondition)
		conditions.SetV1Beta2(class, metav1.Condition{Type: clusterv1.ClusterClassVariablesReadyV1Beta2Condition, Status: metav1.ConditionTrue,
			Reason: clusterv1.ClusterClassVariablesReadyV1Beta2Reason})
	}
	refCond := metav1.Condition{Type: clusterv1.ClusterClassRefVersionsUpToDateV1Beta2Condition, Status: metav1.ConditionTrue,
		Reason: clusterv1.ClusterClassRefVersionsUpToDateV1Beta2Reason}
	switch {
	case len(f.refErrs) > 0:
		refCond.Status, refCond.Reason = metav1.ConditionFalse, clusterv1.ClusterClassRefVersionsUpToDateInternalErrorV1Beta2Reason
		refCond.Message = "Templates cannot be used:\n* " + strings.Join(f.refErrs, "\n* ")
	case f.internalErr != nil:
		refCond.Status, refCond.Reason = metav1.ConditionUnknown, clusterv1.ClusterClassRefVersionsUpToDateInternalErrorV1Beta2Reason
		refCond.Message = conditions.InternalErrorMessage
	}
	conditions.SetV1Beta2(class, refCond)
	if len(f.refErrs) == 0 && f.internalErr == nil {
		class.Status.ObservedGeneration = class.Generation
	}
}
