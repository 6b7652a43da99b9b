package rollout

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/contract"
)

// TemplateRefsProblem returns why the references of a Machine template cannot be cloned for each Machine,
// or "" when they can: both must point at templates (kinds ending in "Template") in namespace, the
// namespace of the MachineSet or MachineDeployment.
func TemplateRefsProblem(spec *clusterv1.MachineSpec, namespace string) string {
	for _, ref := range []*corev1.ObjectReference{&spec.InfrastructureRef, spec.Bootstrap.ConfigRef} {
		if ref != nil && ref.Namespace != "" && ref.Namespace != namespace {
			return fmt.Sprintf("Spec.template.spec references %s %s in namespace %s: references must stay in namespace %s", ref.Kind, ref.Name, ref.Namespace, namespace)
		}
	}
	if !strings.HasSuffix(spec.InfrastructureRef.Kind, clusterv1.TemplateSuffix) {
		return fmt.Sprintf("Spec.template.spec.infrastructureRef must point at a template (a kind ending in %s), not at a %q",
			clusterv1.TemplateSuffix, spec.InfrastructureRef.Kind)
	}
	if ref := spec.Bootstrap.ConfigRef; ref != nil && !strings.HasSuffix(ref.Kind, clusterv1.TemplateSuffix) {
		return fmt.Sprintf("Spec.template.spec.bootstrap.configRef must point at a template (a kind ending in %s), not at a %q",
			clusterv1.TemplateSuffix, ref.Kind)
	}
	return ""
}

// ReconcileTemplates is ReconcileTemplate for the infrastructure and bootstrap templates of a Machine
// template's spec (a MachineSet's or MachineDeployment's): it reports which of them do not exist.
func ReconcileTemplates(ctx context.Context, c client.Client, contracts *contract.Resolver,
	cluster *clusterv1.Cluster, spec *clusterv1.MachineSpec, namespace string,
) (infrastructureNotFound, bootstrapNotFound bool, err error) {
	infrastructureNotFound, err = ReconcileTemplate(ctx, c, contracts, cluster, &spec.InfrastructureRef, namespace)
	if err != nil {
		return false, false, err
	}
	bootstrapNotFound, err = ReconcileTemplate(ctx, c, contracts, cluster, spec.Bootstrap.ConfigRef, namespace)
	return infrastructureNotFound, bootstrapNotFound, err
}

// ReconcileTemplate updates a template reference to the newest API version of its contract, and makes the
// Cluster an owner of the template. It reports whether the template does not exist. References that are
// not templates (their kind does not end in "Template") are left alone, and so are references to another
// namespace, which TemplateRefsProblem refuses: another namespace's template is never read nor owned.
func ReconcileTemplate(ctx context.Context, c client.Client, contracts *contract.Resolver,
	cluster *clusterv1.Cluster, ref *corev1.ObjectReference, namespace string,
) (notFound bool, err error) {
	if ref == nil || ref.Name == "" || !strings.HasSuffix(ref.Kind, clusterv1.TemplateSuffix) {
		return false, nil
	}
	if ref.Namespace != "" && ref.Namespace != namespace {
		return false, nil
	}
	if _, _, err := contracts.UpdateReference(ctx, ref); err != nil {
		if apierrors.IsNotFound(err) {
			return true, nil // no CRD for the kind
		}
		return false, err
	}
	obj := &metav1.PartialObjectMetadata{}
	obj.SetGroupVersionKind(schema.FromAPIVersionAndKind(ref.APIVersion, ref.Kind))
	ns := ref.Namespace
	if ns == "" {
		ns = namespace
	}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: ref.Name}, obj); err != nil {
		if apierrors.IsNotFound(err) || meta.IsNoMatchError(err) {
			return true, nil
		}
		return false, fmt.Errorf("getting %s %s/%s: %w", ref.Kind, ns, ref.Name, err)
	}
	for _, o := range obj.OwnerReferences {
		if o.UID == cluster.UID {
			return false, nil
		}
	}
	before := obj.DeepCopy()
	obj.OwnerReferences = append(obj.OwnerReferences, metav1.OwnerReference{
		APIVersion: clusterv1.GroupVersion.String(), Kind: "Cluster", Name: cluster.Name, UID: cluster.UID,
	})
	ctrl.LoggerFrom(ctx).Info("Setting the Cluster as owner of the template", ref.Kind, klog.KRef(ns, ref.Name))
	if err := c.Patch(ctx, obj, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil {
		return false, fmt.Errorf("setting the Cluster as owner of %s %s/%s: %w", ref.Kind, ns, ref.Name, err)
	}
	return false, nil
}
