package core

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/feature"
	"github.com/capstan-dev/capstan/internal/topology"
	"github.com/capstan-dev/capstan/internal/topology/variables"
	"github.com/capstan-dev/capstan/internal/topologystate"
)

// Cluster defaults and validates the topology of Clusters against their ClusterClass: it writes the
// defaults of the variables into spec.topology.variables (and the overrides), and checks variables,
// MachineDeployment and MachinePool classes, the version against the class's kubernetesVersions, version
// changes against the class, the pending hooks and the state of the Cluster, and class rebases. The
// topology controller runs the same variable checks, and those of the version against the state of the
// Cluster, and reports them in TopologyReconciled, so nothing depends on this webhook alone.
type Cluster struct {
	// Client reads ClusterClasses and the objects of a Cluster's topology.
	Client client.Reader
	// FeatureGates are the manager's; a Cluster with a topology is refused when ClusterTopology is off.
	FeatureGates *feature.Gates
	// Workload reads a workload cluster (the Nodes of its MachinePools, whether they run the pool's
	// version); without it MachinePools are judged by their version alone.
	Workload func(ctx context.Context, cluster client.ObjectKey) (client.Reader, error)
}

// classPoll is how long admission waits for the ClusterClass of a Cluster to exist and be reconciled, as
// upstream's: clusterctl applies a class and its Clusters at once.
const (
	classPollInterval = 200 * time.Millisecond
	classPollTimeout  = 2 * time.Second
)

// errClassNotReconciled says that the ClusterClass controller has not reconciled a class's latest
// generation (or its variables).
var errClassNotReconciled = errors.New("ClusterClass is not successfully reconciled")

// Default defaults a Cluster's topology as upstream's defaulting webhook: the version gets its "v", and
// the variables their defaults (those that are not set and whose schema has a top-level default are
// added; objects get their nested defaults), validated against the class, so that
// `kubectl get cluster -o yaml` shows the values the patches use.
func (w Cluster) Default(ctx context.Context, c *clusterv1.Cluster) error {
	t := c.Spec.Topology
	if t == nil || !c.DeletionTimestamp.IsZero() {
		return nil
	}
	if t.Version != "" && !strings.HasPrefix(t.Version, "v") {
		t.Version = "v" + t.Version
	}
	if t.Class == "" {
		return invalid("Cluster", c.Name, field.ErrorList{field.Required(field.NewPath("spec", "topology", "class"), "class cannot be empty")})
	}
	defaultRemediationNamespace(c)
	if w.Client == nil {
		return nil
	}
	class, err := w.pollClass(ctx, c)
	if err != nil {
		if apierrors.IsNotFound(err) || errors.Is(err, errClassNotReconciled) {
			return nil // validation warns; the topology controller waits for the class
		}
		return apierrors.NewInternalError(fmt.Errorf("Cluster %s cannot be defaulted: ClusterClass %s cannot be read: %w", c.Name, t.Class, err))
	}
	defs, err := variables.FromClass(class)
	if err != nil {
		return nil // the class's condition says it; validation refuses the Cluster
	}
	var old *clusterv1.Cluster
	if req, err := admission.RequestFromContext(ctx); err == nil && len(req.OldObject.Raw) > 0 {
		old = &clusterv1.Cluster{}
		if err := json.Unmarshal(req.OldObject.Raw, old); err != nil {
			return apierrors.NewBadRequest(fmt.Sprintf("decoding the old Cluster: %v", err))
		}
	}
	return invalid("Cluster", c.Name, defaultAndValidateVariables(ctx, c, old, defs))
}

// defaultRemediationNamespace puts the remediation templates of the topology's health checks in the
// Cluster's namespace when they name none, as upstream.
func defaultRemediationNamespace(c *clusterv1.Cluster) {
	set := func(h *clusterv1.MachineHealthCheckTopology) {
		if h != nil && h.RemediationTemplate != nil && h.RemediationTemplate.Namespace == "" {
			h.RemediationTemplate.Namespace = c.Namespace
		}
	}
	set(c.Spec.Topology.ControlPlane.MachineHealthCheck)
	if w := c.Spec.Topology.Workers; w != nil {
		for i := range w.MachineDeployments {
			set(w.MachineDeployments[i].MachineHealthCheck)
		}
	}
}

// defaultAndValidateVariables writes the defaults of the variables and overrides of a topology, then
// validates them (with the old values for CEL transition rules).
func defaultAndValidateVariables(ctx context.Context, c, old *clusterv1.Cluster, defs *variables.Definitions) field.ErrorList {
	t := c.Spec.Topology
	path := field.NewPath("spec", "topology")
	var errs field.ErrorList
	var oldT *clusterv1.Topology
	if old != nil {
		oldT = old.Spec.Topology
	}
	defaulted, verrs := defs.Default(t.Variables, path.Child("variables"))
	if len(verrs) > 0 {
		return verrs
	}
	t.Variables = defaulted
	overrides := func(values *[]clusterv1.ClusterVariable, p *field.Path) {
		if len(*values) == 0 {
			return
		}
		out, verrs := defs.DefaultOverrides(*values, p)
		if len(verrs) > 0 {
			errs = append(errs, verrs...)
			return
		}
		*values = out
	}
	if v := t.ControlPlane.Variables; v != nil {
		overrides(&v.Overrides, path.Child("controlPlane", "variables", "overrides"))
	}
	if w := t.Workers; w != nil {
		for i := range w.MachineDeployments {
			if v := w.MachineDeployments[i].Variables; v != nil {
				overrides(&v.Overrides, path.Child("workers", "machineDeployments").Key(w.MachineDeployments[i].Name).Child("variables", "overrides"))
			}
		}
		for i := range w.MachinePools {
			if v := w.MachinePools[i].Variables; v != nil {
				overrides(&v.Overrides, path.Child("workers", "machinePools").Key(w.MachinePools[i].Name).Child("variables", "overrides"))
			}
		}
	}
	if len(errs) > 0 {
		return errs
	}
	return validateVariables(ctx, t, oldT, defs, path)
}

// validateVariables validates the variables and overrides of a topology against the definitions of its
// class.
func validateVariables(ctx context.Context, t, old *clusterv1.Topology, defs *variables.Definitions, path *field.Path) field.ErrorList {
	var oldVars, oldCP []clusterv1.ClusterVariable
	oldMD, oldMP := map[string][]clusterv1.ClusterVariable{}, map[string][]clusterv1.ClusterVariable{}
	if old != nil {
		oldVars = old.Variables
		if old.ControlPlane.Variables != nil {
			oldCP = old.ControlPlane.Variables.Overrides
		}
		if old.Workers != nil {
			for _, md := range old.Workers.MachineDeployments {
				if md.Variables != nil {
					oldMD[md.Name] = md.Variables.Overrides
				}
			}
			for _, mp := range old.Workers.MachinePools {
				if mp.Variables != nil {
					oldMP[mp.Name] = mp.Variables.Overrides
				}
			}
		}
	}
	errs := defs.Validate(ctx, t.Variables, oldVars, path.Child("variables"))
	if v := t.ControlPlane.Variables; v != nil {
		errs = append(errs, defs.ValidateOverrides(ctx, v.Overrides, oldCP, path.Child("controlPlane", "variables", "overrides"))...)
	}
	if w := t.Workers; w != nil {
		for _, md := range w.MachineDeployments {
			if md.Variables != nil {
				errs = append(errs, defs.ValidateOverrides(ctx, md.Variables.Overrides, oldMD[md.Name],
					path.Child("workers", "machineDeployments").Key(md.Name).Child("variables", "overrides"))...)
			}
		}
		for _, mp := range w.MachinePools {
			if mp.Variables != nil {
				errs = append(errs, defs.ValidateOverrides(ctx, mp.Variables.Overrides, oldMP[mp.Name],
					path.Child("workers", "machinePools").Key(mp.Name).Child("variables", "overrides"))...)
			}
		}
	}
	return errs
}

// pollClass reads the ClusterClass of a Cluster, waiting up to two seconds for it to exist and be
// reconciled.
func (w Cluster) pollClass(ctx context.Context, c *clusterv1.Cluster) (*clusterv1.ClusterClass, error) {
	ns, name := c.GetClassKey()
	class := &clusterv1.ClusterClass{}
	var last error
	_ = wait.PollUntilContextTimeout(ctx, classPollInterval, classPollTimeout, true, func(ctx context.Context) (bool, error) {
		if last = w.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, class); last != nil {
			return false, nil
		}
		if class.Generation != class.Status.ObservedGeneration {
			last = errClassNotReconciled
			return false, nil
		}
		return true, nil
	})
	if last != nil {
		return nil, last
	}
	return class, nil
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
	path := field.NewPath("spec", "topology")
	if !w.FeatureGates.Enabled(feature.ClusterTopology) {
		return nil, invalid("Cluster", c.Name, field.ErrorList{field.Forbidden(path,
			"can be set only if the ClusterTopology feature flag is enabled: start the core manager with --feature-gates=ClusterTopology=true (clusterctl: CLUSTER_TOPOLOGY=true)")})
	}
	// Updates that leave the topology as it is (finalizers, labels, references set by the controllers)
	// are not checked again: a class changed since must not block them.
	if old != nil && equality.Semantic.DeepEqual(old.Spec.Topology, t) {
		return nil, nil
	}
	var errs field.ErrorList
	var warnings admission.Warnings
	if old != nil && old.Spec.Topology == nil {
		if _, ok := c.Annotations[clusterv1.ClusterTopologyUnsafeUpdateClassNameAnnotation]; !ok {
			return nil, invalid("Cluster", c.Name, field.ErrorList{field.Forbidden(path.Child("class"), "class cannot be set on an existing Cluster")})
		}
	}
	if w.Client == nil {
		if old != nil && old.Spec.Topology != nil {
			errs = append(errs, versionChange(topology.VersionChange{Old: old.Spec.Topology.Version, New: t.Version, Cluster: c}, path.Child("version"))...)
		}
		return nil, invalid("Cluster", c.Name, errs)
	}
	ns, name := c.GetClassKey()
	class := &clusterv1.ClusterClass{}
	if err := w.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, class); err != nil {
		if !apierrors.IsNotFound(err) {
			return nil, apierrors.NewInternalError(fmt.Errorf("getting ClusterClass %s/%s: %w", ns, name, err))
		}
		if old != nil && old.Spec.Topology != nil {
			// An update needs the class, to check it against the change.
			return nil, invalid("Cluster", c.Name, field.ErrorList{field.InternalError(path.Child("class"),
				fmt.Errorf("ClusterClass %s/%s does not exist: create it before changing the Cluster's topology", ns, name))})
		}
		// The class may be created right after the Cluster (clusterctl applies a template at once);
		// the topology controller waits for it.
		return admission.Warnings{fmt.Sprintf("Cluster refers to ClusterClass %s/%s, which does not exist: its topology has not been fully validated", ns, name)}, nil
	}
	errs = append(errs, validateTopologyAgainstClass(ctx, c, class, path)...)
	// Not part of validateTopologyAgainstClass, whose errors a class change would repeat with
	// kubernetesVersionsOfClusters'.
	if err := topology.CheckVersionInClass(t.Version, class.Spec.KubernetesVersions); err != nil {
		errs = append(errs, field.Invalid(path.Child("version"), t.Version, err.Error()))
	}
	if old != nil && old.Spec.Topology != nil {
		if old.Spec.Topology.Version != t.Version {
			if _, ok := c.Annotations[clusterv1.ClusterTopologyUnsafeUpdateVersionAnnotation]; ok {
				warnings = append(warnings, fmt.Sprintf("Skipping version validation for Cluster because annotation %q is set.", clusterv1.ClusterTopologyUnsafeUpdateVersionAnnotation))
			} else {
				change := topology.VersionChange{Old: old.Spec.Topology.Version, New: t.Version, Class: class, Cluster: c}
				e, err := w.validateVersionChange(ctx, old, change, path.Child("version"))
				if err != nil {
					return nil, apierrors.NewInternalError(err)
				}
				errs = append(errs, e...)
			}
		}
		oldNS, oldName := old.GetClassKey()
		if oldNS != ns || oldName != name {
			oldClass := &clusterv1.ClusterClass{}
			if err := w.Client.Get(ctx, client.ObjectKey{Namespace: oldNS, Name: oldName}, oldClass); err != nil {
				errs = append(errs, field.Forbidden(path.Child("class"), fmt.Sprintf("valid ClusterClass with name %q could not be retrieved, change from class %[1]q to class %q cannot be validated. Error: %s",
					oldNS+"/"+oldName, ns+"/"+name, err.Error())))
			} else {
				for _, e := range classesCompatible(oldClass, class, field.NewPath("spec")) {
					errs = append(errs, field.Forbidden(path.Child("class"), fmt.Sprintf("cannot rebase from ClusterClass %s to %s: %s", oldName, name, e.Error())))
				}
			}
		}
	}
	return warnings, invalid("Cluster", c.Name, errs)
}

// versionChange is the check of a version change without the state of the Cluster: no decrease, no
// skipped minor unless the class does chained upgrades, no pending AfterClusterUpgrade hook.
func versionChange(change topology.VersionChange, path *field.Path) field.ErrorList {
	if err := topology.CheckVersionChange(&topology.Current{}, change); err != nil {
		return field.ErrorList{field.Invalid(path, change.New, err.Error())}
	}
	return nil
}

// validateVersionChange checks a change of spec.topology.version against the state of the Cluster (read
// with the same gatherer as the topology controller), once the checks that need no state pass.
func (w Cluster) validateVersionChange(ctx context.Context, old *clusterv1.Cluster, change topology.VersionChange, path *field.Path) (field.ErrorList, error) {
	if errs := versionChange(change, path); len(errs) > 0 {
		return errs, nil
	}
	g := &topologystate.Gatherer{Reader: w.Client, Workload: w.Workload}
	cur, err := g.Current(ctx, old)
	if err != nil {
		return nil, fmt.Errorf("reading the state of Cluster %s to check the version change: %w", old.Name, err)
	}
	if err := topology.CheckVersionChange(cur, change); err != nil {
		return field.ErrorList{field.Invalid(path, change.New, err.Error())}, nil
	}
	return nil, nil
}

// validateTopologyAgainstClass checks variables, overrides, and MachineDeployment and MachinePool
// classes.
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
		withDefaults := *t
		withDefaults.Variables = values
		errs = append(errs, validateVariables(ctx, &withDefaults, nil, defs, path)...)
	}
	if t.Workers != nil {
		mdClasses, mpClasses := map[string]bool{}, map[string]bool{}
		for _, md := range class.Spec.Workers.MachineDeployments {
			mdClasses[md.Class] = true
		}
		for _, mp := range class.Spec.Workers.MachinePools {
			mpClasses[mp.Class] = true
		}
		for _, md := range t.Workers.MachineDeployments {
			if !mdClasses[md.Class] {
				errs = append(errs, field.Invalid(path.Child("workers", "machineDeployments").Key(md.Name).Child("class"), md.Class,
					fmt.Sprintf("ClusterClass %s has no MachineDeployment class %q", class.Name, md.Class)))
			}
		}
		for _, mp := range t.Workers.MachinePools {
			if !mpClasses[mp.Class] {
				errs = append(errs, field.Invalid(path.Child("workers", "machinePools").Key(mp.Name).Child("class"), mp.Class,
					fmt.Sprintf("ClusterClass %s has no MachinePool class %q", class.Name, mp.Class)))
			}
		}
	}
	return append(errs, validateHealthChecksAgainstClass(t, class, path)...)
}

// validateHealthChecksAgainstClass checks the topology's health checks as upstream's Cluster webhook does:
// the control plane's can be defined only if the class's control plane has machineInfrastructure (it has
// Machines to check), and enable: true needs a definition in the topology or the class.
func validateHealthChecksAgainstClass(t *clusterv1.Topology, class *clusterv1.ClusterClass, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	noDefinition := func(enable *bool, topology clusterv1.MachineHealthCheckClass, inClass *clusterv1.MachineHealthCheckClass, p *field.Path) {
		if enable != nil && *enable && topology.IsZero() && inClass == nil {
			errs = append(errs, field.Forbidden(p.Child("enable"),
				"cannot be set to true as MachineHealthCheck definition is not available in the Cluster topology or the ClusterClass"))
		}
	}
	if hc := t.ControlPlane.MachineHealthCheck; hc != nil {
		p := path.Child("controlPlane", "machineHealthCheck")
		if !hc.MachineHealthCheckClass.IsZero() && class.Spec.ControlPlane.MachineInfrastructure == nil { //nolint:staticcheck // the health check's fields, not enable
			errs = append(errs, field.Forbidden(p, "can be set only if spec.controlPlane.machineInfrastructure is set in ClusterClass"))
		}
		noDefinition(hc.Enable, hc.MachineHealthCheckClass, class.Spec.ControlPlane.MachineHealthCheck, p)
	}
	if t.Workers == nil {
		return errs
	}
	for _, md := range t.Workers.MachineDeployments {
		if md.MachineHealthCheck == nil {
			continue
		}
		for _, mdClass := range class.Spec.Workers.MachineDeployments {
			if mdClass.Class == md.Class {
				noDefinition(md.MachineHealthCheck.Enable, md.MachineHealthCheck.MachineHealthCheckClass, mdClass.MachineHealthCheck,
					path.Child("workers", "machineDeployments").Key(md.Name).Child("machineHealthCheck"))
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

// classesCompatible checks, with upstream's rules and messages, that the Clusters of class current can
// use class desired (a change of the class, or a Cluster's rebase from one class to another): the
// templates of the InfraCluster, the control plane and its machines, and the infrastructure templates of
// the MachineDeployment and MachinePool classes both have keep their API group and kind.
func classesCompatible(current, desired *clusterv1.ClusterClass, spec *field.Path) field.ErrorList {
	var errs field.ErrorList
	check := func(a, b *corev1.ObjectReference, p *field.Path) {
		ga, gb := groupKind(a), groupKind(b)
		if a == nil || b == nil {
			return
		}
		if ga.Group != gb.Group {
			errs = append(errs, field.Forbidden(p.Child("ref", "apiVersion"),
				fmt.Sprintf("apiVersion.group cannot be changed from %q to %q to prevent incompatible changes in the Clusters", ga.Group, gb.Group)))
		}
		if ga.Kind != gb.Kind {
			errs = append(errs, field.Forbidden(p.Child("ref", "kind"),
				fmt.Sprintf("apiVersion.kind cannot be changed from %q to %q to prevent incompatible changes in the Clusters", ga.Kind, gb.Kind)))
		}
	}
	check(current.Spec.Infrastructure.Ref, desired.Spec.Infrastructure.Ref, spec.Child("infrastructure"))
	check(current.Spec.ControlPlane.Ref, desired.Spec.ControlPlane.Ref, spec.Child("controlPlane"))
	if current.Spec.ControlPlane.MachineInfrastructure != nil && desired.Spec.ControlPlane.MachineInfrastructure != nil {
		check(current.Spec.ControlPlane.MachineInfrastructure.Ref, desired.Spec.ControlPlane.MachineInfrastructure.Ref,
			spec.Child("controlPlane", "machineInfrastructure"))
	}
	for _, md := range desired.Spec.Workers.MachineDeployments {
		for i, oldMD := range current.Spec.Workers.MachineDeployments {
			if md.Class == oldMD.Class {
				check(oldMD.Template.Infrastructure.Ref, md.Template.Infrastructure.Ref, spec.Child("workers", "machineDeployments").Index(i))
			}
		}
	}
	for _, mp := range desired.Spec.Workers.MachinePools {
		for i, oldMP := range current.Spec.Workers.MachinePools {
			if mp.Class == oldMP.Class {
				check(oldMP.Template.Infrastructure.Ref, mp.Template.Infrastructure.Ref, spec.Child("workers", "machinePools").Index(i))
			}
		}
	}
	return errs
}
