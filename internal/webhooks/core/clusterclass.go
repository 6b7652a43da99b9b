package core

import (
	"context"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/topology"
	"github.com/capstan-dev/capstan/internal/topology/variables"
)

// ClusterClass validates ClusterClasses: variables, naming templates and patches; an update may not break
// the Clusters that use the class, and a class in use may not be deleted.
type ClusterClass struct {
	// Client lists the Clusters of a class.
	Client client.Reader
}

// ValidateCreate validates a new ClusterClass.
func (w ClusterClass) ValidateCreate(_ context.Context, cc *clusterv1.ClusterClass) (admission.Warnings, error) {
	return nil, invalid("ClusterClass", cc.Name, validateClusterClass(cc))
}

// ValidateUpdate validates a changed ClusterClass against the Clusters that use it.
func (w ClusterClass) ValidateUpdate(ctx context.Context, _, cc *clusterv1.ClusterClass) (admission.Warnings, error) {
	errs := validateClusterClass(cc)
	if len(errs) == 0 && w.Client != nil {
		clusters, err := w.clustersUsing(ctx, cc)
		if err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		for i := range clusters {
			c := &clusters[i]
			for _, e := range validateTopologyAgainstClass(ctx, c, cc, field.NewPath("spec", "topology")) {
				errs = append(errs, field.Forbidden(field.NewPath("spec"), fmt.Sprintf("the change would break Cluster %s: %s", c.Name, e.Error())))
			}
		}
	}
	return nil, invalid("ClusterClass", cc.Name, errs)
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

func validateClusterClass(cc *clusterv1.ClusterClass) field.ErrorList {
	spec := field.NewPath("spec")
	var errs field.ErrorList
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
