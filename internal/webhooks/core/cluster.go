package core

import (
	"context"
	"fmt"

	"github.com/blang/semver/v4"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/topology/variables"
)

// Cluster validates the topology of Clusters against their ClusterClass: variables, MachineDeployment
// classes, version changes and class rebases. The topology controller runs the same variable checks and
// reports them in TopologyReconciled, so nothing depends on this webhook alone.
type Cluster struct {
	// Client reads ClusterClasses.
	Client client.Reader
}

// ValidateCreate validates a new Cluster.
func (w Cluster) ValidateCreate(ctx context.Context, c *clusterv1.Cluster) (admission.Warnings, error) {
	return w.validate(ctx, nil, c)
}

// ValidateUpdate validates a changed Cluster.
func (w Cluster) ValidateUpdate(ctx context.Context, old, c *clusterv1.Cluster) (admission.Warnings, error) {
	return w.validate(ctx, old, c)
}

// ValidateDelete accepts every deletion.
func (Cluster) ValidateDelete(context.Context, *clusterv1.Cluster) (admission.Warnings, error) {
	return nil, nil
}

func (w Cluster) validate(ctx context.Context, old, c *clusterv1.Cluster) (admission.Warnings, error) {
	t := c.Spec.Topology
	if t == nil || !c.DeletionTimestamp.IsZero() {
		return nil, nil
	}
	// Updates that leave the topology as it is (finalizers, labels, references set by the controllers)
	// are not checked again: a class changed since must not block them.
	if old != nil && equality.Semantic.DeepEqual(old.Spec.Topology, t) {
		return nil, nil
	}
	path := field.NewPath("spec", "topology")
	var errs field.ErrorList
	if old != nil && old.Spec.Topology != nil {
		errs = append(errs, validateVersionChange(old.Spec.Topology.Version, t.Version, path.Child("version"))...)
	}
	if t.Workers != nil && len(t.Workers.MachinePools) > 0 {
		errs = append(errs, field.Forbidden(path.Child("workers", "machinePools"),
			"MachinePool topologies are not supported by capstan yet: use machineDeployments, or create the MachinePools without a topology (see docs/machinepools.md)"))
	}
	if w.Client == nil {
		return nil, invalid("Cluster", c.Name, errs)
	}
	ns, name := c.GetClassKey()
	class := &clusterv1.ClusterClass{}
	if err := w.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, class); err != nil {
		if apierrors.IsNotFound(err) {
			// The class may be created right after the Cluster (clusterctl applies a template at once);
			// the topology controller waits for it.
			return admission.Warnings{fmt.Sprintf("Cluster refers to ClusterClass %s/%s, which does not exist: its topology has not been fully validated", ns, name)},
				invalid("Cluster", c.Name, errs)
		}
		return nil, apierrors.NewInternalError(fmt.Errorf("getting ClusterClass %s/%s: %w", ns, name, err))
	}
	errs = append(errs, validateTopologyAgainstClass(ctx, c, class, path)...)
	if old != nil && old.Spec.Topology != nil {
		oldNS, oldName := old.GetClassKey()
		if oldNS != ns || oldName != name {
			oldClass := &clusterv1.ClusterClass{}
			if err := w.Client.Get(ctx, client.ObjectKey{Namespace: oldNS, Name: oldName}, oldClass); err == nil {
				errs = append(errs, classesCompatible(oldClass, class, c, path.Child("class"))...)
			}
		}
	}
	return nil, invalid("Cluster", c.Name, errs)
}

// validateVersionChange refuses a downgrade and an upgrade by more than one minor version.
func validateVersionChange(oldVersion, newVersion string, path *field.Path) field.ErrorList {
	if oldVersion == newVersion {
		return nil
	}
	o, err1 := semver.ParseTolerant(oldVersion)
	n, err2 := semver.ParseTolerant(newVersion)
	if err1 != nil || err2 != nil {
		return nil // the CRD's pattern refuses invalid versions
	}
	if n.LT(o) {
		return field.ErrorList{field.Forbidden(path, fmt.Sprintf("version cannot be decreased from %q to %q", oldVersion, newVersion))}
	}
	if n.Major != o.Major || n.Minor > o.Minor+1 {
		return field.ErrorList{field.Forbidden(path, fmt.Sprintf("version cannot be increased from %q to %q: upgrade one minor version at a time (to v%d.%d.x first)", oldVersion, newVersion, o.Major, o.Minor+1))}
	}
	return nil
}

// validateTopologyAgainstClass checks variables, overrides and MachineDeployment classes.
func validateTopologyAgainstClass(ctx context.Context, c *clusterv1.Cluster, class *clusterv1.ClusterClass, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	defs, err := variables.FromClass(class)
	if err != nil {
		return field.ErrorList{field.Invalid(path.Child("class"), class.Name, fmt.Sprintf("ClusterClass has invalid variables: %v", err))}
	}
	t := c.Spec.Topology
	values, verrs := defs.Default(t.Variables, path.Child("variables"))
	if len(verrs) > 0 {
		errs = append(errs, verrs...)
	} else {
		errs = append(errs, defs.Validate(ctx, values, nil, path.Child("variables"))...)
	}
	if v := t.ControlPlane.Variables; v != nil {
		errs = append(errs, defs.ValidateOverrides(ctx, v.Overrides, nil, path.Child("controlPlane", "variables", "overrides"))...)
	}
	if t.Workers != nil {
		classes := map[string]bool{}
		for _, md := range class.Spec.Workers.MachineDeployments {
			classes[md.Class] = true
		}
		for _, md := range t.Workers.MachineDeployments {
			mdPath := path.Child("workers", "machineDeployments").Key(md.Name)
			if !classes[md.Class] {
				errs = append(errs, field.Invalid(mdPath.Child("class"), md.Class, fmt.Sprintf("ClusterClass %s has no MachineDeployment class %q", class.Name, md.Class)))
			}
			if md.Variables != nil {
				errs = append(errs, defs.ValidateOverrides(ctx, md.Variables.Overrides, nil, mdPath.Child("variables", "overrides"))...)
			}
		}
	}
	return errs
}

func groupKind(ref *corev1.ObjectReference) schema.GroupKind {
	if ref == nil {
		return schema.GroupKind{}
	}
	return schema.FromAPIVersionAndKind(ref.APIVersion, ref.Kind).GroupKind()
}

// classesCompatible checks that a Cluster can move from one class to another: the templates of its
// objects keep their group and kind, and the MachineDeployment classes it uses exist with templates of the
// same kinds.
func classesCompatible(from, to *clusterv1.ClusterClass, c *clusterv1.Cluster, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	check := func(what string, a, b *corev1.ObjectReference) {
		if groupKind(a) != groupKind(b) {
			errs = append(errs, field.Forbidden(path, fmt.Sprintf("cannot rebase from ClusterClass %s to %s: %s changes from %s to %s", from.Name, to.Name, what, groupKind(a), groupKind(b))))
		}
	}
	check("the infrastructure cluster template", from.Spec.Infrastructure.Ref, to.Spec.Infrastructure.Ref)
	check("the control plane template", from.Spec.ControlPlane.Ref, to.Spec.ControlPlane.Ref)
	var fromMI, toMI *corev1.ObjectReference
	if from.Spec.ControlPlane.MachineInfrastructure != nil {
		fromMI = from.Spec.ControlPlane.MachineInfrastructure.Ref
	}
	if to.Spec.ControlPlane.MachineInfrastructure != nil {
		toMI = to.Spec.ControlPlane.MachineInfrastructure.Ref
	}
	check("the control plane machine template", fromMI, toMI)
	mdClasses := func(cc *clusterv1.ClusterClass) map[string]clusterv1.MachineDeploymentClass {
		out := map[string]clusterv1.MachineDeploymentClass{}
		for _, md := range cc.Spec.Workers.MachineDeployments {
			out[md.Class] = md
		}
		return out
	}
	fromMDs, toMDs := mdClasses(from), mdClasses(to)
	if c.Spec.Topology.Workers != nil {
		for _, md := range c.Spec.Topology.Workers.MachineDeployments {
			a, okA := fromMDs[md.Class]
			b, okB := toMDs[md.Class]
			if !okB {
				errs = append(errs, field.Forbidden(path, fmt.Sprintf("cannot rebase to ClusterClass %s: it has no MachineDeployment class %q, used by %q", to.Name, md.Class, md.Name)))
				continue
			}
			if okA {
				check(fmt.Sprintf("the bootstrap template of MachineDeployment class %q", md.Class), a.Template.Bootstrap.Ref, b.Template.Bootstrap.Ref)
				check(fmt.Sprintf("the infrastructure template of MachineDeployment class %q", md.Class), a.Template.Infrastructure.Ref, b.Template.Infrastructure.Ref)
			}
		}
	}
	return errs
}
