package core

import (
	"context"
	"fmt"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/feature"
	"github.com/capstan-dev/capstan/internal/topology"
	"github.com/capstan-dev/capstan/internal/topology/variables"
)

// ClusterClass validates ClusterClasses: variables, naming templates, patches and kubernetesVersions; an
// update keeps the template kinds and groups (upstream's compatibility rules), keeps the MachineDeployment
// and MachinePool classes and the Kubernetes versions in use, and may not break the variables of the
// Clusters that use the class; a class in use may not be deleted. Refusals name the Clusters that would break.
type ClusterClass struct {
	// Client lists the Clusters of a class.
	Client client.Reader
	// FeatureGates are the manager's: ClusterClasses are refused with ClusterTopology off, external
	// patches with RuntimeSDK off.
	FeatureGates *feature.Gates
}

// ValidateCreate validates a new ClusterClass.
func (w ClusterClass) ValidateCreate(_ context.Context, cc *clusterv1.ClusterClass) (admission.Warnings, error) {
	return nil, invalid("ClusterClass", cc.Name, w.validateClusterClass(cc))
}

// ValidateUpdate validates a changed ClusterClass against the old one and the Clusters that use it.
func (w ClusterClass) ValidateUpdate(ctx context.Context, old, cc *clusterv1.ClusterClass) (admission.Warnings, error) {
	errs := w.validateClusterClass(cc)
	if len(errs) > 0 {
		return nil, invalid("ClusterClass", cc.Name, errs)
	}
	var clusters []clusterv1.Cluster
	if w.Client != nil {
		var err error
		if clusters, err = w.clustersUsing(ctx, cc); err != nil {
			return nil, apierrors.NewInternalError(err)
		}
	}
	names := make([]string, 0, len(clusters))
	for _, c := range clusters {
		names = append(names, c.Namespace+"/"+c.Name)
	}
	for _, e := range classesCompatible(old, cc, field.NewPath("spec")) {
		if len(names) > 0 {
			e.Detail += fmt.Sprintf(": it would break Cluster(s) %s", strings.Join(names, ", "))
		}
		errs = append(errs, e)
	}
	errs = append(errs, kubernetesVersionsOfClusters(cc, clusters)...)
	errs = append(errs, removedClassesInUse(old, cc, clusters)...)
	for i := range clusters {
		c := &clusters[i]
		for _, e := range validateTopologyAgainstClass(ctx, c, cc, field.NewPath("spec", "topology")) {
			errs = append(errs, field.Forbidden(field.NewPath("spec"), fmt.Sprintf("the change would break Cluster %s/%s: %s", c.Namespace, c.Name, e.Error())))
		}
	}
	return nil, invalid("ClusterClass", cc.Name, errs)
}

// kubernetesVersionsOfClusters refuses, as upstream, a class whose kubernetesVersions leave out the version
// of a Cluster that uses it (the Cluster's version must be one of them).
func kubernetesVersionsOfClusters(cc *clusterv1.ClusterClass, clusters []clusterv1.Cluster) field.ErrorList {
	var errs field.ErrorList
	for _, c := range clusters {
		if topology.CheckVersionInClass(c.Spec.Topology.Version, cc.Spec.KubernetesVersions) != nil {
			errs = append(errs, field.Forbidden(field.NewPath("spec", "kubernetesVersions"),
				fmt.Sprintf("Kubernetes Version %s is used by Cluster %q but not set in ClusterClass", c.Spec.Topology.Version, c.Name)))
		}
	}
	return errs
}

// removedClassesInUse refuses to remove a MachineDeployment or MachinePool class that a Cluster uses, as
// upstream.
func removedClassesInUse(old, cc *clusterv1.ClusterClass, clusters []clusterv1.Cluster) field.ErrorList {
	mdClasses, mpClasses := map[string]bool{}, map[string]bool{}
	for _, md := range cc.Spec.Workers.MachineDeployments {
		mdClasses[md.Class] = true
	}
	for _, mp := range cc.Spec.Workers.MachinePools {
		mpClasses[mp.Class] = true
	}
	var errs field.ErrorList
	for _, c := range clusters {
		if c.Spec.Topology.Workers == nil {
			continue
		}
		for _, md := range c.Spec.Topology.Workers.MachineDeployments {
			if !mdClasses[md.Class] && slices.ContainsFunc(old.Spec.Workers.MachineDeployments, func(m clusterv1.MachineDeploymentClass) bool { return m.Class == md.Class }) {
				errs = append(errs, field.Forbidden(field.NewPath("spec", "workers", "machineDeployments"),
					fmt.Sprintf("MachineDeploymentClass %q cannot be deleted because it is used by Cluster %q", md.Class, c.Name)))
			}
		}
		for _, mp := range c.Spec.Topology.Workers.MachinePools {
			if !mpClasses[mp.Class] && slices.ContainsFunc(old.Spec.Workers.MachinePools, func(m clusterv1.MachinePoolClass) bool { return m.Class == mp.Class }) {
				errs = append(errs, field.Forbidden(field.NewPath("spec", "workers", "machinePools"),
					fmt.Sprintf("MachinePoolClass %q cannot be deleted because it is used by Cluster %q", mp.Class, c.Name)))
			}
		}
	}
	return errs
}

// ValidateDelete refuses to delete a ClusterClass that Clusters use.
func (w ClusterClass) ValidateDelete(ctx context.Context, cc *clusterv1.ClusterClass) (admission.Warnings, error) {
	if w.Client == nil {
		return nil, nil
	}
	clusters, err := w.clustersUsing(ctx, cc)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	if len(clusters) == 0 {
		return nil, nil
	}
	names := make([]string, 0, len(clusters))
	for _, c := range clusters {
		names = append(names, c.Namespace+"/"+c.Name)
	}
	return nil, apierrors.NewForbidden(clusterv1.GroupVersion.WithResource("clusterclasses").GroupResource(), cc.Name,
		fmt.Errorf("ClusterClass is used by Cluster(s) %s: delete them or move them to another class first", strings.Join(names, ", ")))
}

func (w ClusterClass) clustersUsing(ctx context.Context, cc *clusterv1.ClusterClass) ([]clusterv1.Cluster, error) {
	list := &clusterv1.ClusterList{}
	if err := w.Client.List(ctx, list); err != nil {
		return nil, fmt.Errorf("listing Clusters: %w", err)
	}
	var out []clusterv1.Cluster
	for _, c := range list.Items {
		if c.Spec.Topology == nil {
			continue
		}
		if ns, name := c.GetClassKey(); ns == cc.Namespace && name == cc.Name {
			out = append(out, c)
		}
	}
	return out, nil
}

func (w ClusterClass) validateClusterClass(cc *clusterv1.ClusterClass) field.ErrorList {
	spec := field.NewPath("spec")
	var errs field.ErrorList
	if !w.FeatureGates.Enabled(feature.ClusterTopology) {
		return field.ErrorList{field.Forbidden(spec,
			"can be set only if the ClusterTopology feature flag is enabled: start the core manager with --feature-gates=ClusterTopology=true (clusterctl: CLUSTER_TOPOLOGY=true)")}
	}
	for i, mp := range cc.Spec.Workers.MachinePools {
		if s := mp.NamingStrategy; s != nil && s.Template != nil {
			if err := topology.ValidateNameTemplate(*s.Template, "machinePool"); err != nil {
				errs = append(errs, field.Invalid(spec.Child("workers", "machinePools").Index(i).Child("namingStrategy", "template"), *s.Template, err.Error()))
			}
		}
	}
	errs = append(errs, topology.CheckKubernetesVersions(cc.Spec.KubernetesVersions, spec.Child("kubernetesVersion"))...)
	patchNames := map[string]bool{}
	if _, err := variables.Compile(cc.Spec.Variables); err != nil {
		errs = append(errs, field.Invalid(spec.Child("variables"), "", err.Error()))
	}
	nameTemplate := func(t *string, kind string, p *field.Path) {
		if t == nil {
			return
		}
		if err := topology.ValidateNameTemplate(*t, kind); err != nil {
			errs = append(errs, field.Invalid(p, *t, err.Error()))
		}
	}
	if s := cc.Spec.InfrastructureNamingStrategy; s != nil {
		nameTemplate(s.Template, "infrastructure", spec.Child("infrastructureNamingStrategy", "template"))
	}
	if s := cc.Spec.ControlPlane.NamingStrategy; s != nil {
		nameTemplate(s.Template, "controlPlane", spec.Child("controlPlane", "namingStrategy", "template"))
	}
	for i, md := range cc.Spec.Workers.MachineDeployments {
		if s := md.NamingStrategy; s != nil {
			nameTemplate(s.Template, "machineDeployment", spec.Child("workers", "machineDeployments").Index(i).Child("namingStrategy", "template"))
		}
	}
	for i, p := range cc.Spec.Patches {
		pp := spec.Child("patches").Index(i)
		switch {
		case p.Name == clusterv1.VariableDefinitionFromInline:
			errs = append(errs, field.Required(pp.Child("name"), fmt.Sprintf("%q can not be used as the name of a patch: it is the source of the ClusterClass's own variables", clusterv1.VariableDefinitionFromInline)))
		case patchNames[p.Name]:
			errs = append(errs, field.Invalid(pp.Child("name"), p.Name, fmt.Sprintf("patch names must be unique. Patch with name %q is defined more than once", p.Name)))
		}
		patchNames[p.Name] = true
		if p.External != nil && !w.FeatureGates.Enabled(feature.RuntimeSDK) {
			errs = append(errs, field.Forbidden(pp.Child("external"),
				"patch.external can be used only if the RuntimeSDK feature flag is enabled: start the core manager with --feature-gates=RuntimeSDK=true (clusterctl: EXP_RUNTIME_SDK=true)"))
		}
		if (len(p.Definitions) > 0) == (p.External != nil) {
			errs = append(errs, field.Invalid(pp, p.Name, "exactly one of definitions and external must be set"))
		}
		for j, d := range p.Definitions {
			for k, jp := range d.JSONPatches {
				jpp := pp.Child("definitions").Index(j).Child("jsonPatches").Index(k)
				if !strings.HasPrefix(jp.Path, "/spec/") {
					errs = append(errs, field.Invalid(jpp.Child("path"), jp.Path, "must start with /spec/"))
				}
				hasFrom := jp.ValueFrom != nil && (jp.ValueFrom.Variable != nil) != (jp.ValueFrom.Template != nil)
				switch {
				case jp.Op == "remove" && (jp.Value != nil || jp.ValueFrom != nil):
					errs = append(errs, field.Invalid(jpp, jp.Op, "a remove operation takes no value or valueFrom"))
				case jp.Op != "remove" && (jp.Value != nil) == (jp.ValueFrom != nil):
					errs = append(errs, field.Invalid(jpp, jp.Op, "exactly one of value and valueFrom must be set"))
				case jp.ValueFrom != nil && !hasFrom:
					errs = append(errs, field.Invalid(jpp.Child("valueFrom"), "", "exactly one of variable and template must be set"))
				}
			}
		}
	}
	return errs
}
