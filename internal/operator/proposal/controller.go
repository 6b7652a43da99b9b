package proposal

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	managementv1 "github.com/capstan-dev/capstan/api/management/v1alpha1"
	operatorv1 "github.com/capstan-dev/capstan/api/operator/v1alpha2"
	"github.com/capstan-dev/capstan/internal/operator/provider"
	"github.com/capstan-dev/capstan/internal/patch"
	"github.com/capstan-dev/capstan/internal/reconciler"
)

// Finalizer holds a v1alpha1 provider until the v1alpha2 object it was translated into is gone, so that
// deleting it removes what the operator installed (when nothing uses the provider).
const Finalizer = "management.cluster.x-k8s.io/translated"

// DeletionRefusedReason says the translated v1alpha2 object's deletion was refused (the message says why).
const DeletionRefusedReason = "DeletionRefused"

// retryInterval is how often a provider whose translation is refused, or whose deletion waits, looks again.
const retryInterval = 10 * time.Second

// Reconciler translates the objects of one v1alpha1 kind.
type Reconciler struct {
	Client client.Client
	// Kind is the v1alpha1 kind; its v1alpha2 kind has the same name.
	Kind managementv1.Kind
}

// target returns the v1alpha2 kind of r's kind.
func (r *Reconciler) target() (operatorv1.Kind, error) { return operatorv1.KindFor(r.Kind.Type) }

// SetupWithManager registers the reconciler.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager, options controller.Options) error {
	target, err := r.target()
	if err != nil {
		return err
	}
	_, err = ctrl.NewControllerManagedBy(mgr).
		Named("proposal-" + r.Kind.Name).
		For(r.Kind.New()).
		Owns(target.New()).
		WithOptions(options).
		Build(reconciler.RequeueOnConflict(r))
	return err
}

// Reconcile brings the v1alpha2 object to the v1alpha1 object's spec, and the v1alpha1 object's status to
// the v1alpha2 object's.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (_ reconcile.Result, retErr error) {
	in := r.Kind.New()
	if err := r.Client.Get(ctx, req.NamespacedName, in); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	in.GetObjectKind().SetGroupVersionKind(managementv1.GroupVersion.WithKind(r.Kind.Name))
	ctx = ctrl.LoggerInto(ctx, ctrl.LoggerFrom(ctx).WithValues(r.Kind.Name, klog.KObj(in)))
	helper := patch.NewHelper(in, r.Client)
	var translated *metav1.Condition
	var out operatorv1.GenericProvider
	defer func() {
		mirror(in, out, translated)
		if err := helper.Patch(ctx, in); err != nil && !apierrors.IsNotFound(err) {
			retErr = errors.Join(retErr, err)
		}
	}()

	kind, err := r.target()
	if err != nil {
		return reconcile.Result{}, err
	}
	desc := fmt.Sprintf("%s.%s %s/%s", kind.Name, operatorv1.GroupVersion.Group, in.GetNamespace(), in.GetName())
	existing := kind.New()
	switch err := r.Client.Get(ctx, req.NamespacedName, existing); {
	case apierrors.IsNotFound(err):
		existing = nil
	case err != nil:
		return reconcile.Result{}, err
	}
	owned := existing != nil && metav1.IsControlledBy(existing, in)
	if owned {
		out = existing
	}

	if !in.GetDeletionTimestamp().IsZero() {
		if !owned {
			controllerutil.RemoveFinalizer(in, Finalizer)
			return reconcile.Result{}, nil
		}
		if existing.GetDeletionTimestamp().IsZero() {
			ctrl.LoggerFrom(ctx).Info("Deleting the translated provider", "provider", desc)
			if err := r.Client.Delete(ctx, existing); err != nil && !apierrors.IsNotFound(err) {
				// Refused at admission while Clusters use the provider: say why, and look again.
				translated = &metav1.Condition{Type: operatorv1.DeletionBlockedCondition, Status: metav1.ConditionTrue, Reason: DeletionRefusedReason,
					Message: fmt.Sprintf("%s cannot be deleted yet: %s", desc, statusMessage(err))}
				return reconcile.Result{RequeueAfter: retryInterval}, nil
			}
		}
		// The finalizer goes once the v1alpha2 object is gone (its own finalizer removes the components).
		return reconcile.Result{RequeueAfter: time.Second}, nil
	}
	if controllerutil.AddFinalizer(in, Finalizer) {
		return reconcile.Result{}, nil
	}

	spec, err := Spec(in.GetProviderSpec())
	if err != nil {
		translated = failed(managementv1.TranslationFailedReason, fmt.Sprintf("%v; fix it, the operator cannot install the provider otherwise", err))
		return reconcile.Result{}, nil
	}
	if existing != nil && !owned {
		translated = failed(managementv1.NameTakenReason, fmt.Sprintf(
			"%s exists already and is not this object's: a provider is installed once; delete one of them", desc))
		return reconcile.Result{RequeueAfter: retryInterval}, nil
	}
	// The operator writes the version it picked into the v1alpha2 object: the proposal writes it here too.
	if spec.Version == "" && existing != nil && existing.GetProviderSpec().Version != "" {
		spec.Version = existing.GetProviderSpec().Version
		in.GetProviderSpec().Version = spec.Version
	}
	if existing == nil {
		obj := kind.New()
		obj.SetNamespace(in.GetNamespace())
		obj.SetName(in.GetName())
		*obj.GetProviderSpec() = *spec
		if err := controllerutil.SetControllerReference(in, obj, r.Client.Scheme()); err != nil {
			return reconcile.Result{}, err
		}
		ctrl.LoggerFrom(ctx).Info("Creating the translated provider", "provider", desc)
		if err := r.Client.Create(ctx, obj); err != nil {
			if apierrors.IsInvalid(err) || apierrors.IsForbidden(err) {
				translated = failed(managementv1.TranslationFailedReason, statusMessage(err))
				return reconcile.Result{RequeueAfter: retryInterval}, nil
			}
			return reconcile.Result{}, err
		}
		out = obj
	} else if !reflect.DeepEqual(existing.GetProviderSpec(), spec) {
		*existing.GetProviderSpec() = *spec
		if err := r.Client.Update(ctx, existing); err != nil {
			if apierrors.IsInvalid(err) || apierrors.IsForbidden(err) {
				translated = failed(managementv1.TranslationFailedReason, statusMessage(err))
				return reconcile.Result{RequeueAfter: retryInterval}, nil
			}
			return reconcile.Result{}, err
		}
	}
	translated = &metav1.Condition{Type: managementv1.TranslatedCondition, Status: metav1.ConditionTrue, Reason: managementv1.TranslatedReason,
		Message: fmt.Sprintf("Installed through %s (%s), which says how the installation goes", desc, operatorv1.GroupVersion)}
	return reconcile.Result{}, nil
}

func failed(reason, message string) *metav1.Condition {
	return &metav1.Condition{Type: managementv1.TranslatedCondition, Status: metav1.ConditionFalse, Reason: reason, Message: message}
}

// statusMessage returns the message of an API error (an admission webhook's refusal).
func statusMessage(err error) string {
	var status apierrors.APIStatus
	if errors.As(err, &status) && status.Status().Message != "" {
		return status.Status().Message
	}
	return err.Error()
}

// mirror writes the v1alpha2 object's status (nil: not created) into the v1alpha1 object's, with the
// translation's condition (nil: left as it is).
func mirror(in managementv1.Provider, out operatorv1.GenericProvider, translated *metav1.Condition) {
	st := in.GetProviderStatus()
	if out != nil {
		src := out.GetProviderStatus()
		st.Contract, st.InstalledVersion = src.Contract, src.InstalledVersion
		var keep []metav1.Condition
		if c := meta.FindStatusCondition(st.Conditions, managementv1.TranslatedCondition); c != nil {
			keep = append(keep, *c)
		}
		st.Conditions = append(keep, src.Conditions...)
		if src.ObservedGeneration == out.GetGeneration() && meta.IsStatusConditionTrue(st.Conditions, managementv1.TranslatedCondition) {
			st.ObservedGeneration = in.GetGeneration()
		}
	}
	if translated != nil {
		translated.ObservedGeneration = in.GetGeneration()
		translated.Message = provider.ConditionMessage(translated.Message)
		meta.SetStatusCondition(&st.Conditions, *translated)
	}
}
