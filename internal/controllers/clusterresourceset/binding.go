package clusterresourceset

import (
	"context"
	"errors"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	addonsv1 "github.com/capstan-dev/capstan/api/addons/v1beta1"
	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
)

// applyToCluster applies the set's resources to one Cluster's workload cluster as the strategy says, and
// records what it applied in the Cluster's ClusterResourceSetBinding (created when missing, named after
// the Cluster). Resources that could not be read are skipped (their failure is in s already).
func (r *Reconciler) applyToCluster(ctx context.Context, s *scope, cluster *clusterv1.Cluster, resources []*resource) (reterr error) {
	log := ctrl.LoggerFrom(ctx).WithValues("Cluster", klog.KObj(cluster))
	ctx = ctrl.LoggerInto(ctx, log)
	crs := s.crs

	binding, err := r.getOrCreateBinding(ctx, cluster, crs)
	if err != nil {
		s.fail(failure{reason: addonsv1.ApplyFailedReason, severity: clusterv1.ConditionSeverityWarning,
			v2Reason: addonsv1.ResourcesAppliedInternalErrorV1Beta2Reason, message: err.Error()})
		return err
	}
	before := binding.DeepCopy()
	defer func() {
		if equalBindings(before, binding) {
			return
		}
		if err := r.Client.Patch(ctx, binding, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil {
			reterr = errors.Join(reterr, fmt.Errorf("updating ClusterResourceSetBinding %s: %w", binding.Name, err))
		}
	}()
	if !slices.ContainsFunc(binding.OwnerReferences, func(ref metav1.OwnerReference) bool { return ref.UID == crs.UID }) {
		binding.OwnerReferences = append(binding.OwnerReferences, crsOwnerRef(crs))
	}
	record := binding.GetOrCreateBinding(crs)

	var pending []*resource
	for _, res := range resources {
		if res != nil && needsApply(crs, record, res) {
			pending = append(pending, res)
		}
	}
	if len(pending) == 0 {
		return nil
	}
	remote, err := r.ClusterCache.GetClient(ctx, client.ObjectKeyFromObject(cluster))
	if err != nil {
		s.fail(failure{reason: addonsv1.RemoteClusterClientFailedReason, severity: clusterv1.ConditionSeverityError,
			v2Reason: addonsv1.ResourcesAppliedInternalErrorV1Beta2Reason,
			message:  fmt.Sprintf("Cannot reach the workload cluster of Cluster %s: %v", cluster.Name, err)})
		return err
	}
	// As upstream: the API server's Service must exist before anything else is created, or an object's
	// Service could take its IP.
	if err := remote.Get(ctx, client.ObjectKey{Namespace: metav1.NamespaceDefault, Name: "kubernetes"}, &corev1.Service{}); err != nil {
		return fmt.Errorf("waiting for the kubernetes Service of the workload cluster of Cluster %s: %w", cluster.Name, err)
	}

	var errs []error
	for _, res := range pending {
		now := metav1.NewTime(r.clock().UTC())
		if res.parseErr != nil {
			record.SetBinding(addonsv1.ResourceBinding{ResourceRef: res.ref, Applied: false, LastAppliedTime: &now})
			s.fail(failure{reason: addonsv1.ApplyFailedReason, severity: clusterv1.ConditionSeverityWarning,
				v2Reason: addonsv1.ResourcesNotAppliedV1Beta2Reason, message: res.parseErr.Error()})
			errs = append(errs, res.parseErr)
			continue
		}
		apply := applyOnce
		if crs.Spec.Strategy == string(addonsv1.ClusterResourceSetStrategyReconcile) {
			apply = applyReconcile
		}
		err := apply(ctx, remote, res.objs)
		if err != nil {
			log.Error(err, "Applying a resource of the ClusterResourceSet failed", res.ref.Kind, klog.KRef(crs.Namespace, res.ref.Name))
			s.fail(failure{reason: addonsv1.ApplyFailedReason, severity: clusterv1.ConditionSeverityWarning,
				v2Reason: addonsv1.ResourcesNotAppliedV1Beta2Reason, message: err.Error()})
			errs = append(errs, err)
		} else {
			log.Info("Applied a resource of the ClusterResourceSet", res.ref.Kind, klog.KRef(crs.Namespace, res.ref.Name), "objects", len(res.objs))
		}
		record.SetBinding(addonsv1.ResourceBinding{ResourceRef: res.ref, Hash: res.hash(), Applied: err == nil, LastAppliedTime: &now})
	}
	return errors.Join(errs...)
}

// needsApply: ApplyOnce applies a resource until it was applied once; Reconcile also when its hash changed.
func needsApply(crs *addonsv1.ClusterResourceSet, record *addonsv1.ResourceSetBinding, res *resource) bool {
	recorded := record.GetResource(res.ref)
	if recorded == nil || !recorded.Applied {
		return true
	}
	return crs.Spec.Strategy == string(addonsv1.ClusterResourceSetStrategyReconcile) && recorded.Hash != res.hash()
}

func crsOwnerRef(crs *addonsv1.ClusterResourceSet) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: addonsv1.GroupVersion.String(), Kind: "ClusterResourceSet", Name: crs.Name, UID: crs.UID}
}

func equalBindings(a, b *addonsv1.ClusterResourceSetBinding) bool {
	return slices.EqualFunc(a.OwnerReferences, b.OwnerReferences, func(x, y metav1.OwnerReference) bool { return x.UID == y.UID }) &&
		slices.EqualFunc(a.Spec.Bindings, b.Spec.Bindings, func(x, y *addonsv1.ResourceSetBinding) bool {
			return x.ClusterResourceSetName == y.ClusterResourceSetName && slices.EqualFunc(x.Resources, y.Resources,
				func(p, q addonsv1.ResourceBinding) bool {
					return p.ResourceRef == q.ResourceRef && p.Hash == q.Hash && p.Applied == q.Applied &&
						p.LastAppliedTime.Equal(q.LastAppliedTime)
				})
		})
}

// getOrCreateBinding returns the Cluster's ClusterResourceSetBinding, creating it (owned by the set) when
// there is none.
func (r *Reconciler) getOrCreateBinding(ctx context.Context, cluster *clusterv1.Cluster, crs *addonsv1.ClusterResourceSet) (*addonsv1.ClusterResourceSetBinding, error) {
	binding := &addonsv1.ClusterResourceSetBinding{}
	key := client.ObjectKeyFromObject(cluster)
	err := r.Client.Get(ctx, key, binding)
	if err == nil {
		return binding, nil
	}
	if !apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("getting ClusterResourceSetBinding %s: %w", key.Name, err)
	}
	binding = &addonsv1.ClusterResourceSetBinding{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: cluster.Namespace, Name: cluster.Name,
			Labels:          map[string]string{clusterv1.ClusterNameLabel: cluster.Name},
			OwnerReferences: []metav1.OwnerReference{crsOwnerRef(crs)},
		},
		Spec: addonsv1.ClusterResourceSetBindingSpec{ClusterName: cluster.Name},
	}
	ctrl.LoggerFrom(ctx).Info("Creating the ClusterResourceSetBinding of the Cluster", "ClusterResourceSetBinding", klog.KObj(binding))
	if err := r.Client.Create(ctx, binding); err != nil {
		if !apierrors.IsAlreadyExists(err) {
			return nil, fmt.Errorf("creating ClusterResourceSetBinding %s: %w", key.Name, err)
		}
		if err := r.Client.Get(ctx, key, binding); err != nil {
			return nil, fmt.Errorf("getting ClusterResourceSetBinding %s: %w", key.Name, err)
		}
	}
	return binding, nil
}

// removeFromBindings removes the set from the bindings of the namespace that list it, except those of the
// Clusters in keep (all of them when keep is nil: the set is deleted). A binding left empty is deleted.
// What the set applied stays in the workload clusters, as upstream.
func (r *Reconciler) removeFromBindings(ctx context.Context, crs *addonsv1.ClusterResourceSet, keep map[string]bool) error {
	log := ctrl.LoggerFrom(ctx)
	list := &addonsv1.ClusterResourceSetBindingList{}
	if err := r.Client.List(ctx, list, client.InNamespace(crs.Namespace)); err != nil {
		return fmt.Errorf("listing the ClusterResourceSetBindings: %w", err)
	}
	var errs []error
	for i := range list.Items {
		binding := &list.Items[i]
		cluster := binding.Spec.ClusterName
		if cluster == "" {
			cluster = binding.Name
		}
		listed := slices.ContainsFunc(binding.Spec.Bindings, func(b *addonsv1.ResourceSetBinding) bool { return b.ClusterResourceSetName == crs.Name })
		owned := slices.ContainsFunc(binding.OwnerReferences, func(ref metav1.OwnerReference) bool {
			return ref.Kind == "ClusterResourceSet" && ref.Name == crs.Name
		})
		if (!listed && !owned) || keep[cluster] {
			continue
		}
		before := binding.DeepCopy()
		binding.RemoveBinding(crs)
		binding.OwnerReferences = slices.DeleteFunc(binding.OwnerReferences, func(ref metav1.OwnerReference) bool {
			return ref.Kind == "ClusterResourceSet" && ref.Name == crs.Name
		})
		if len(binding.Spec.Bindings) == 0 {
			log.Info("Deleting a ClusterResourceSetBinding left without ClusterResourceSets", "ClusterResourceSetBinding", klog.KObj(binding))
			if err := r.Client.Delete(ctx, binding, client.Preconditions{ResourceVersion: &binding.ResourceVersion}); err != nil && !apierrors.IsNotFound(err) {
				errs = append(errs, fmt.Errorf("deleting ClusterResourceSetBinding %s: %w", binding.Name, err))
			}
			continue
		}
		log.Info("Removing the ClusterResourceSet from the binding of a Cluster it no longer applies to", "ClusterResourceSetBinding", klog.KObj(binding))
		if err := r.Client.Patch(ctx, binding, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil {
			errs = append(errs, fmt.Errorf("updating ClusterResourceSetBinding %s: %w", binding.Name, err))
		}
	}
	return errors.Join(errs...)
}
