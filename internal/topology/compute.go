package topology

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/topology/variables"
)

// Options say how Compute runs.
type Options struct {
	// ExternalPatcher runs external patches; a class with external patches needs one.
	ExternalPatcher ExternalPatcher
	// RuntimeHooks says that the lifecycle hooks of the Runtime SDK are in force: Compute then asks for
	// them (Desired.Hooks) and honours the before-upgrade hold annotations. Without it no hook holds
	// anything.
	RuntimeHooks bool
	// UpgradePlanner asks the upgrade plan extension a ClusterClass names; a Cluster of such a class that
	// is not at its version needs one.
	UpgradePlanner UpgradePlanner
}

// Compute returns the desired state of the topology of current.Cluster built from blueprint. It is
// deterministic: the same input gives the same output (generated names derive from the Cluster's UID).
// It calls no lifecycle hook and writes nothing: Desired.Hooks says which hooks the caller calls (after
// which it computes again with their answers in current.HookResponses) and which it marks pending or
// done in the Cluster's annotations.
func Compute(ctx context.Context, blueprint *Blueprint, current *Current, opts Options) (*Desired, error) {
	c := &computation{ctx: ctx, bp: blueprint, cur: current, opts: opts}
	if err := c.check(); err != nil {
		return nil, err
	}
	return c.run()
}

type computation struct {
	ctx  context.Context
	bp   *Blueprint
	cur  *Current
	opts Options

	cluster  *clusterv1.Cluster
	topology *clusterv1.Topology
	defs     *variables.Definitions
	values   *variables.Resolved
	desired  *Desired
	// cpVersion is the current control plane's spec.version ("" when there is none).
	cpVersion string
}

func (c *computation) check() error {
	if c.bp == nil || c.bp.ClusterClass == nil {
		return errors.New("the blueprint has no ClusterClass")
	}
	if c.cur == nil || c.cur.Cluster == nil || c.cur.Cluster.Spec.Topology == nil {
		return errors.New("the Cluster has no spec.topology")
	}
	c.cluster = c.cur.Cluster
	c.topology = c.cluster.Spec.Topology
	class := c.bp.ClusterClass
	if c.bp.InfrastructureClusterTemplate == nil && class.Spec.Infrastructure.Ref != nil {
		return fmt.Errorf("the blueprint lacks the infrastructure cluster template %s", refString(class.Spec.Infrastructure.Ref))
	}
	if c.bp.ControlPlaneTemplate == nil {
		return fmt.Errorf("the blueprint lacks the control plane template of ClusterClass %s", class.Name)
	}
	if class.Spec.ControlPlane.MachineInfrastructure != nil && c.bp.ControlPlaneMachineInfrastructureTemplate == nil {
		return fmt.Errorf("the blueprint lacks the control plane machine infrastructure template %s", refString(class.Spec.ControlPlane.MachineInfrastructure.Ref))
	}
	if c.topology.Workers != nil {
		for _, mp := range c.topology.Workers.MachinePools {
			if _, ok := c.mpClass(mp.Class); !ok {
				return fmt.Errorf("MachinePool %q uses class %q, which ClusterClass %s does not define", mp.Name, mp.Class, class.Name)
			}
			if t, ok := c.bp.MachinePools[mp.Class]; !ok || t.BootstrapTemplate == nil || t.InfrastructureMachinePoolTemplate == nil {
				return fmt.Errorf("the blueprint lacks the templates of MachinePool class %q", mp.Class)
			}
		}
		for _, md := range c.topology.Workers.MachineDeployments {
			if _, ok := c.mdClass(md.Class); !ok {
				return fmt.Errorf("MachineDeployment %q uses class %q, which ClusterClass %s does not define", md.Name, md.Class, class.Name)
			}
			if t, ok := c.bp.MachineDeployments[md.Class]; !ok || t.BootstrapTemplate == nil || t.InfrastructureMachineTemplate == nil {
				return fmt.Errorf("the blueprint lacks the templates of MachineDeployment class %q", md.Class)
			}
		}
	}
	defs, err := variables.FromClass(class)
	if err != nil {
		return fmt.Errorf("variables of ClusterClass %s: %w", class.Name, err)
	}
	c.defs = defs
	values, err := defs.Resolve(c.ctx, c.topology.Variables, field.NewPath("spec", "topology", "variables"))
	if err != nil {
		return err
	}
	c.values = values
	return nil
}

func refString(ref *corev1.ObjectReference) string {
	if ref == nil {
		return "<nil>"
	}
	return fmt.Sprintf("%s %s/%s", ref.Kind, ref.Namespace, ref.Name)
}

func (c *computation) mdClass(name string) (*clusterv1.MachineDeploymentClass, bool) {
	for i := range c.bp.ClusterClass.Spec.Workers.MachineDeployments {
		if c.bp.ClusterClass.Spec.Workers.MachineDeployments[i].Class == name {
			return &c.bp.ClusterClass.Spec.Workers.MachineDeployments[i], true
		}
	}
	return nil, false
}

// seed is the base of the random parts of generated names.
func (c *computation) seed(what string) string {
	return string(c.cluster.UID) + "/" + c.cluster.Namespace + "/" + c.cluster.Name + "/" + what
}

func (c *computation) run() (*Desired, error) {
	c.desired = &Desired{MachineDeployments: map[string]*MachineDeploymentState{}, MachinePools: map[string]*MachinePoolState{}}
	c.desired.HoldCreate = !c.beforeClusterCreate()
	var err error
	if c.bp.InfrastructureClusterTemplate != nil {
		if c.desired.InfrastructureCluster, err = c.infrastructureCluster(); err != nil {
			return nil, fmt.Errorf("computing the InfrastructureCluster: %w", err)
		}
	}
	if c.bp.ControlPlaneMachineInfrastructureTemplate != nil {
		var currentRef *corev1.ObjectReference
		if c.cur.ControlPlane.Object != nil {
			currentRef = nestedRef(c.cur.ControlPlane.Object, "spec", "machineTemplate", "infrastructureRef")
		}
		infra := c.templateToTemplate(c.bp.ControlPlaneMachineInfrastructureTemplate, c.bp.ClusterClass.Spec.ControlPlane.MachineInfrastructure.Ref, currentRef)
		if infra.GetName() == "" {
			name, err := renderName("{{ .cluster.name }}-{{ .random }}", c.seed("controlplane/"+infra.GetKind()+"/"+specHash(infra)), c.cluster.Name, nil)
			if err != nil {
				return nil, err
			}
			infra.SetName(name)
		}
		c.desired.ControlPlane.InfrastructureMachineTemplate = infra
	}
	for _, md := range c.cur.MachineDeployments {
		if md != nil && md.Object != nil && md.Upgrading {
			c.desired.Upgrade.MachineDeploymentsUpgrading = append(c.desired.Upgrade.MachineDeploymentsUpgrading, md.Object.Name)
		}
	}
	slices.Sort(c.desired.Upgrade.MachineDeploymentsUpgrading)
	for _, mp := range c.cur.MachinePools {
		if mp != nil && mp.Object != nil && mp.Upgrading {
			c.desired.Upgrade.MachinePoolsUpgrading = append(c.desired.Upgrade.MachinePoolsUpgrading, mp.Object.Name)
		}
	}
	slices.Sort(c.desired.Upgrade.MachinePoolsUpgrading)
	if err := c.upgradePlan(); err != nil {
		return nil, fmt.Errorf("computing the upgrade plan: %w", err)
	}
	if c.desired.ControlPlane.Object, err = c.controlPlane(); err != nil {
		return nil, fmt.Errorf("computing the control plane: %w", err)
	}
	// A control plane that waits for a version gets no other change before it takes it.
	c.desired.ControlPlane.Held = c.desired.Upgrade.ControlPlanePendingUpgrade
	if check, ok := healthCheck(c.bp.ClusterClass.Spec.ControlPlane.MachineHealthCheck, c.topology.ControlPlane.MachineHealthCheck); ok {
		c.desired.ControlPlane.MachineHealthCheck = c.machineHealthCheck(c.desired.ControlPlane.Object.GetName(), &metav1.LabelSelector{MatchLabels: map[string]string{
			clusterv1.ClusterTopologyOwnedLabel: "",
			clusterv1.MachineControlPlaneLabel:  "",
		}}, check)
	}
	c.desired.Cluster = c.clusterObject()
	if c.topology.Workers != nil {
		for _, mdt := range c.topology.Workers.MachineDeployments {
			md, err := c.machineDeployment(mdt)
			if err != nil {
				return nil, fmt.Errorf("computing MachineDeployment %q: %w", mdt.Name, err)
			}
			if md != nil {
				c.desired.MachineDeployments[mdt.Name] = md
			}
		}
		for _, mpt := range c.topology.Workers.MachinePools {
			mp, err := c.machinePool(mpt)
			if err != nil {
				return nil, fmt.Errorf("computing MachinePool %q: %w", mpt.Name, err)
			}
			if mp != nil {
				c.desired.MachinePools[mpt.Name] = mp
			}
		}
	}
	if err := c.applyPatches(); err != nil {
		return nil, err
	}
	if err := c.rotateTemplates(); err != nil {
		return nil, err
	}
	c.afterClusterUpgrade()
	return c.desired, nil
}

// templateMetadata returns the labels and annotations of spec.template.metadata of a template.
func templateMetadata(template *unstructured.Unstructured) (map[string]string, map[string]string) {
	labels, _, _ := unstructured.NestedStringMap(template.Object, "spec", "template", "metadata", "labels")
	annotations, _, _ := unstructured.NestedStringMap(template.Object, "spec", "template", "metadata", "annotations")
	return labels, annotations
}

// merge returns the union of maps; earlier maps win.
func merge(ms ...map[string]string) map[string]string {
	out := map[string]string{}
	for i := len(ms) - 1; i >= 0; i-- {
		maps.Copy(out, ms[i])
	}
	return out
}

// workerMetadata returns the labels and annotations of a MachineDeployment or MachinePool of the topology
// and of its Machines: the topology entry's over its class's, without the annotations that steer the
// upgrade sequence (read from the topology, not passed on), labelled with the Cluster, as owned by the
// topology, and with the entry's name under nameLabel.
func (c *computation) workerMetadata(topology, class clusterv1.ObjectMeta, nameLabel, topologyName string) (labels, annotations map[string]string) {
	annotations = merge(topology.Annotations, class.Annotations)
	delete(annotations, clusterv1.ClusterTopologyHoldUpgradeSequenceAnnotation)
	delete(annotations, clusterv1.ClusterTopologyDeferUpgradeAnnotation)
	if len(annotations) == 0 {
		annotations = nil
	}
	labels = merge(topology.Labels, class.Labels)
	labels[clusterv1.ClusterNameLabel] = c.cluster.Name
	labels[clusterv1.ClusterTopologyOwnedLabel] = ""
	labels[nameLabel] = topologyName
	return labels, annotations
}

// override returns the topology entry's value of a field when it sets one, the class's otherwise.
func override[T any](class, topology *T) *T {
	if topology != nil {
		return topology
	}
	return class
}

// overrideList is override for lists: the topology's when it sets one (even empty), else the class's.
func overrideList[T any](class, topology []T) []T {
	if topology != nil {
		return topology
	}
	return class
}

func objectKind(templateKind string) string { return strings.TrimSuffix(templateKind, "Template") }

// templateToObject builds an object (InfraCluster or control plane) from the spec.template of a template.
func (c *computation) templateToObject(template *unstructured.Unstructured, clonedFrom *corev1.ObjectReference, currentRef *corev1.ObjectReference, name string, labels, annotations map[string]string) (*unstructured.Unstructured, error) {
	obj := &unstructured.Unstructured{Object: map[string]any{}}
	obj.SetAPIVersion(template.GetAPIVersion())
	obj.SetKind(objectKind(template.GetKind()))
	obj.SetNamespace(c.cluster.Namespace)
	spec, found, err := unstructured.NestedFieldCopy(template.Object, "spec", "template", "spec")
	if err != nil {
		return nil, fmt.Errorf("reading spec.template.spec of %s %s: %w", template.GetKind(), template.GetName(), err)
	}
	if found {
		obj.Object["spec"] = spec
	}
	tl, ta := templateMetadata(template)
	l := merge(labels, tl)
	l[clusterv1.ClusterNameLabel] = c.cluster.Name
	l[clusterv1.ClusterTopologyOwnedLabel] = ""
	obj.SetLabels(l)
	a := merge(annotations, ta)
	a[clusterv1.TemplateClonedFromNameAnnotation] = clonedFrom.Name
	a[clusterv1.TemplateClonedFromGroupKindAnnotation] = clonedFrom.GroupVersionKind().GroupKind().String()
	obj.SetAnnotations(a)
	// The name of an existing object is kept; the apiVersion is the class's.
	if currentRef != nil && currentRef.Name != "" {
		name = currentRef.Name
	}
	obj.SetName(name)
	return obj, nil
}

// templateToTemplate clones a template for the Cluster. Its name is the current one (templateToTemplate is
// followed by rotateTemplates, which renames it when its spec changes) or a new one.
func (c *computation) templateToTemplate(template *unstructured.Unstructured, clonedFrom *corev1.ObjectReference, currentRef *corev1.ObjectReference) *unstructured.Unstructured {
	obj := template.DeepCopy()
	obj.SetNamespace(c.cluster.Namespace)
	obj.SetResourceVersion("")
	obj.SetUID("")
	obj.SetGeneration(0)
	obj.SetCreationTimestamp(metav1.Time{})
	obj.SetManagedFields(nil)
	obj.SetFinalizers(nil)
	obj.SetGenerateName("")
	delete(obj.Object, "status")
	l := merge(template.GetLabels())
	l[clusterv1.ClusterNameLabel] = c.cluster.Name
	l[clusterv1.ClusterTopologyOwnedLabel] = ""
	obj.SetLabels(l)
	a := merge(template.GetAnnotations())
	delete(a, corev1.LastAppliedConfigAnnotation)
	a[clusterv1.TemplateClonedFromNameAnnotation] = clonedFrom.Name
	a[clusterv1.TemplateClonedFromGroupKindAnnotation] = clonedFrom.GroupVersionKind().GroupKind().String()
	obj.SetAnnotations(a)
	obj.SetOwnerReferences([]metav1.OwnerReference{c.clusterOwnerRef()})
	obj.SetName("")
	if currentRef != nil {
		obj.SetName(currentRef.Name)
	}
	return obj
}

func (c *computation) clusterOwnerRef() metav1.OwnerReference {
	return metav1.OwnerReference{
		APIVersion: clusterv1.GroupVersion.String(),
		Kind:       "Cluster",
		Name:       c.cluster.Name,
		UID:        c.cluster.UID,
	}
}

func nestedRef(obj *unstructured.Unstructured, path ...string) *corev1.ObjectReference {
	m, found, err := unstructured.NestedMap(obj.Object, path...)
	if err != nil || !found {
		return nil
	}
	ref := &corev1.ObjectReference{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, ref); err != nil {
		return nil
	}
	return ref
}

func objectRef(obj *unstructured.Unstructured) *corev1.ObjectReference {
	return &corev1.ObjectReference{
		APIVersion: obj.GetAPIVersion(),
		Kind:       obj.GetKind(),
		Namespace:  obj.GetNamespace(),
		Name:       obj.GetName(),
	}
}

// desiredRef is a reference to obj that keeps the apiVersion of the current reference when group and kind
// match, so that a newer version set by another controller is not reverted.
func desiredRef(current *corev1.ObjectReference, obj *unstructured.Unstructured) *corev1.ObjectReference {
	ref := objectRef(obj)
	if current == nil {
		return ref
	}
	gv, err := schema.ParseGroupVersion(current.APIVersion)
	if err == nil && gv.Group == obj.GroupVersionKind().Group && current.Kind == obj.GetKind() {
		ref.APIVersion = current.APIVersion
	}
	return ref
}

func (c *computation) infrastructureCluster() (*unstructured.Unstructured, error) {
	class := c.bp.ClusterClass
	tmpl := DefaultInfrastructureNameTemplate
	if s := class.Spec.InfrastructureNamingStrategy; s != nil && s.Template != nil {
		tmpl = *s.Template
	}
	name, err := renderName(tmpl, c.seed("infrastructure"), c.cluster.Name, nil)
	if err != nil {
		return nil, err
	}
	obj, err := c.templateToObject(c.bp.InfrastructureClusterTemplate, class.Spec.Infrastructure.Ref, c.cluster.Spec.InfrastructureRef, name, nil, nil)
	if err != nil {
		return nil, err
	}
	if c.cur.InfrastructureCluster != nil {
		obj.SetOwnerReferences(clusterOwnerRefs(c.cur.InfrastructureCluster, c.cluster))
	}
	return obj, nil
}

// clusterOwnerRefs keeps the owner reference to the Cluster that the Cluster controller set, so that
// applying the desired object does not remove it.
func clusterOwnerRefs(current *unstructured.Unstructured, cluster *clusterv1.Cluster) []metav1.OwnerReference {
	for _, ref := range current.GetOwnerReferences() {
		if ref.Kind == "Cluster" && ref.Name == cluster.Name && strings.HasPrefix(ref.APIVersion, clusterv1.GroupVersion.Group+"/") {
			return []metav1.OwnerReference{ref}
		}
	}
	return nil
}

func (c *computation) controlPlane() (*unstructured.Unstructured, error) {
	class := c.bp.ClusterClass
	cpt := c.topology.ControlPlane
	labels := merge(cpt.Metadata.Labels, class.Spec.ControlPlane.Metadata.Labels)
	labels[clusterv1.ClusterNameLabel] = c.cluster.Name
	labels[clusterv1.ClusterTopologyOwnedLabel] = ""
	annotations := merge(cpt.Metadata.Annotations, class.Spec.ControlPlane.Metadata.Annotations)
	tmpl := DefaultControlPlaneNameTemplate
	if s := class.Spec.ControlPlane.NamingStrategy; s != nil && s.Template != nil {
		tmpl = *s.Template
	}
	name, err := renderName(tmpl, c.seed("controlplane"), c.cluster.Name, nil)
	if err != nil {
		return nil, err
	}
	obj, err := c.templateToObject(c.bp.ControlPlaneTemplate, class.Spec.ControlPlane.Ref, c.cluster.Spec.ControlPlaneRef, name, labels, annotations)
	if err != nil {
		return nil, err
	}
	if c.cur.ControlPlane.Object != nil {
		obj.SetOwnerReferences(clusterOwnerRefs(c.cur.ControlPlane.Object, c.cluster))
	}
	if infra := c.desired.ControlPlane.InfrastructureMachineTemplate; infra != nil {
		var currentRef *corev1.ObjectReference
		if c.cur.ControlPlane.Object != nil {
			currentRef = nestedRef(c.cur.ControlPlane.Object, "spec", "machineTemplate", "infrastructureRef")
		}
		if err := setRef(obj, desiredRef(currentRef, infra), "spec", "machineTemplate", "infrastructureRef"); err != nil {
			return nil, err
		}
		ml, _, _ := unstructured.NestedStringMap(obj.Object, "spec", "machineTemplate", "metadata", "labels")
		ma, _, _ := unstructured.NestedStringMap(obj.Object, "spec", "machineTemplate", "metadata", "annotations")
		if err := setStringMap(obj, merge(labels, ml), "spec", "machineTemplate", "metadata", "labels"); err != nil {
			return nil, err
		}
		if a := merge(annotations, ma); len(a) > 0 {
			if err := setStringMap(obj, a, "spec", "machineTemplate", "metadata", "annotations"); err != nil {
				return nil, err
			}
		}
	}
	if cpt.Replicas != nil {
		if err := unstructured.SetNestedField(obj.Object, int64(*cpt.Replicas), "spec", "replicas"); err != nil {
			return nil, err
		}
	}
	if after := cpt.Rollout.After; !after.IsZero() {
		// The control plane's rolloutAfter (upstream v1.14 sets the v1beta2 contract's spec.rollout.after).
		if err := unstructured.SetNestedField(obj.Object, after.UTC().Format(time.RFC3339), "spec", "rolloutAfter"); err != nil {
			return nil, err
		}
	}
	if gates := overrideList(class.Spec.ControlPlane.ReadinessGates, cpt.ReadinessGates); gates != nil {
		if err := setTyped(obj, gates, "spec", "machineTemplate", "readinessGates"); err != nil {
			return nil, err
		}
	}
	// The control plane's taints: the topology's, else the class's (upstream v1.12); unset when neither has.
	if taints := overrideList(class.Spec.ControlPlane.Taints, cpt.Taints); taints != nil {
		if err := setTyped(obj, taints, "spec", "machineTemplate", "taints"); err != nil {
			return nil, err
		}
	}
	for _, d := range []struct {
		field       string
		class, topo *metav1.Duration
	}{
		{"nodeDrainTimeout", class.Spec.ControlPlane.NodeDrainTimeout, cpt.NodeDrainTimeout},
		{"nodeVolumeDetachTimeout", class.Spec.ControlPlane.NodeVolumeDetachTimeout, cpt.NodeVolumeDetachTimeout},
		{"nodeDeletionTimeout", class.Spec.ControlPlane.NodeDeletionTimeout, cpt.NodeDeletionTimeout},
	} {
		v := d.class
		if d.topo != nil {
			v = d.topo
		}
		if v != nil {
			if err := unstructured.SetNestedField(obj.Object, v.Duration.String(), "spec", "machineTemplate", d.field); err != nil {
				return nil, err
			}
		}
	}
	version, err := c.controlPlaneVersion()
	if err != nil {
		return nil, err
	}
	if err := unstructured.SetNestedField(obj.Object, version, "spec", "version"); err != nil {
		return nil, err
	}
	return obj, nil
}

func setRef(obj *unstructured.Unstructured, ref *corev1.ObjectReference, path ...string) error {
	m := map[string]any{"apiVersion": ref.APIVersion, "kind": ref.Kind, "name": ref.Name}
	if ref.Namespace != "" {
		m["namespace"] = ref.Namespace
	}
	return unstructured.SetNestedMap(obj.Object, m, path...)
}

func setStringMap(obj *unstructured.Unstructured, m map[string]string, path ...string) error {
	return unstructured.SetNestedStringMap(obj.Object, m, path...)
}

func setTyped(obj *unstructured.Unstructured, v any, path ...string) error {
	raw, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&struct {
		V any `json:"v"`
	}{v})
	if err != nil {
		return err
	}
	return unstructured.SetNestedField(obj.Object, raw["v"], path...)
}

// healthCheck returns the health check a class and a topology ask for: the topology's fields when it sets
// any, else the class's; enabled when the topology says so or, without a word from it, when the class
// defines one.
func healthCheck(class *clusterv1.MachineHealthCheckClass, topo *clusterv1.MachineHealthCheckTopology) (*clusterv1.MachineHealthCheckClass, bool) {
	check := class
	if topo != nil && !topo.MachineHealthCheckClass.IsZero() { //nolint:staticcheck // the health check's fields, not enable
		check = &topo.MachineHealthCheckClass
	}
	enabled := class != nil
	if topo != nil && topo.Enable != nil {
		enabled = *topo.Enable
	}
	if !enabled || check == nil {
		return nil, false
	}
	return check, true
}

func (c *computation) machineHealthCheck(name string, selector *metav1.LabelSelector, check *clusterv1.MachineHealthCheckClass) *clusterv1.MachineHealthCheck {
	mhc := &clusterv1.MachineHealthCheck{
		TypeMeta: metav1.TypeMeta{APIVersion: clusterv1.GroupVersion.String(), Kind: "MachineHealthCheck"},
		ObjectMeta: metav1.ObjectMeta{
			Name:      name,
			Namespace: c.cluster.Namespace,
			Labels: map[string]string{
				clusterv1.ClusterNameLabel:          c.cluster.Name,
				clusterv1.ClusterTopologyOwnedLabel: "",
			},
			OwnerReferences: []metav1.OwnerReference{c.clusterOwnerRef()},
		},
		Spec: clusterv1.MachineHealthCheckSpec{
			ClusterName:                c.cluster.Name,
			Selector:                   *selector,
			UnhealthyConditions:        check.UnhealthyConditions,
			UnhealthyMachineConditions: check.UnhealthyMachineConditions,
			MaxUnhealthy:               check.MaxUnhealthy,
			UnhealthyRange:             check.UnhealthyRange,
			NodeStartupTimeout:         check.NodeStartupTimeout,
			RemediationTemplate:        check.RemediationTemplate,
		},
	}
	return mhc
}

func (c *computation) clusterObject() *clusterv1.Cluster {
	cluster := c.cluster.DeepCopy()
	if cluster.Labels == nil {
		cluster.Labels = map[string]string{}
	}
	cluster.Labels[clusterv1.ClusterNameLabel] = cluster.Name
	cluster.Labels[clusterv1.ClusterTopologyOwnedLabel] = ""
	if c.desired.InfrastructureCluster != nil {
		cluster.Spec.InfrastructureRef = desiredRef(c.cluster.Spec.InfrastructureRef, c.desired.InfrastructureCluster)
	}
	cluster.Spec.ControlPlaneRef = desiredRef(c.cluster.Spec.ControlPlaneRef, c.desired.ControlPlane.Object)
	// While the Cluster upgrades, the annotation says the version of the current step (the control plane's),
	// so that the control plane and MachineSets create Machines at that version; as upstream v1.14, an
	// upgrade is in progress while AfterClusterUpgrade is pending, or, without the Runtime SDK, while a plan
	// remains.
	if cluster.Annotations == nil {
		cluster.Annotations = map[string]string{}
	}
	version, _, _ := unstructured.NestedString(c.desired.ControlPlane.Object.Object, "spec", "version")
	if c.upgrading() && version != "" {
		cluster.Annotations[clusterv1.ClusterTopologyUpgradeStepAnnotation] = version
	} else {
		delete(cluster.Annotations, clusterv1.ClusterTopologyUpgradeStepAnnotation)
	}
	return cluster
}

// upgrading reports whether an upgrade of the Cluster is in progress: AfterClusterUpgrade pending (or marked
// so by this computation), or, without the Runtime SDK's hooks, a version left in the upgrade plans.
func (c *computation) upgrading() bool {
	if c.opts.RuntimeHooks {
		return c.pending(AfterClusterUpgradeHook) || slices.Contains(c.desired.Hooks.MarkPending, AfterClusterUpgradeHook)
	}
	return len(c.desired.Upgrade.ControlPlanePlan) > 0 || len(c.desired.Upgrade.WorkersPlan) > 0
}

func (c *computation) machineDeployment(mdt clusterv1.MachineDeploymentTopology) (*MachineDeploymentState, error) {
	mdClass, _ := c.mdClass(mdt.Class)
	templates := c.bp.MachineDeployments[mdt.Class]
	current, cw := currentState(c.cur.MachineDeployments, mdt.Name)
	wv := c.workerVersion(c.mdKind(), mdt.Name, cw)
	if !wv.create {
		return nil, nil
	}
	version := wv.version
	out := &MachineDeploymentState{Held: wv.held}
	var currentBootstrapRef, currentInfraRef *corev1.ObjectReference
	if current != nil {
		currentBootstrapRef = current.Object.Spec.Template.Spec.Bootstrap.ConfigRef
		currentInfraRef = &current.Object.Spec.Template.Spec.InfrastructureRef
	}
	out.BootstrapTemplate = c.templateToTemplate(templates.BootstrapTemplate, mdClass.Template.Bootstrap.Ref, currentBootstrapRef)
	out.InfrastructureMachineTemplate = c.templateToTemplate(templates.InfrastructureMachineTemplate, mdClass.Template.Infrastructure.Ref, currentInfraRef)
	for _, t := range []*unstructured.Unstructured{out.BootstrapTemplate, out.InfrastructureMachineTemplate} {
		l := t.GetLabels()
		l[clusterv1.ClusterTopologyMachineDeploymentNameLabel] = mdt.Name
		t.SetLabels(l)
	}
	// New templates need a name now, for the builtin variables and references; rotateTemplates renames
	// them if patches make them differ from the current ones.
	for _, t := range []*unstructured.Unstructured{out.BootstrapTemplate, out.InfrastructureMachineTemplate} {
		if t.GetName() == "" {
			name, err := renderName(machineDeploymentTemplateNameTemplate, c.seed("md/"+mdt.Name+"/"+t.GetKind()+"/"+specHash(t)), c.cluster.Name,
				map[string]any{"machineDeployment": map[string]any{"topologyName": mdt.Name}})
			if err != nil {
				return nil, err
			}
			t.SetName(name)
		}
	}

	tmpl := DefaultMachineDeploymentNameTemplate
	if mdClass.NamingStrategy != nil && mdClass.NamingStrategy.Template != nil {
		tmpl = *mdClass.NamingStrategy.Template
	}
	name, err := renderName(tmpl, c.seed("md/"+mdt.Name), c.cluster.Name, map[string]any{"machineDeployment": map[string]any{"topologyName": mdt.Name}})
	if err != nil {
		return nil, err
	}
	if current != nil {
		name = current.Object.Name
	}
	minReady := override(mdClass.MinReadySeconds, mdt.MinReadySeconds)
	strategy := override(mdClass.Strategy, mdt.Strategy)
	failureDomain := override(mdClass.FailureDomain, mdt.FailureDomain)
	labels, annotations := c.workerMetadata(mdt.Metadata, mdClass.Template.Metadata, clusterv1.ClusterTopologyMachineDeploymentNameLabel, mdt.Name)
	md := &clusterv1.MachineDeployment{
		TypeMeta: metav1.TypeMeta{APIVersion: clusterv1.GroupVersion.String(), Kind: "MachineDeployment"},
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Namespace:   c.cluster.Namespace,
			Labels:      labels,
			Annotations: annotations,
		},
		Spec: clusterv1.MachineDeploymentSpec{
			ClusterName:     c.cluster.Name,
			Replicas:        mdt.Replicas,
			MinReadySeconds: minReady,
			Strategy:        strategy,
			RolloutAfter:    timeOrNil(mdt.Rollout.After),
			Selector: metav1.LabelSelector{MatchLabels: map[string]string{
				clusterv1.ClusterNameLabel:                          c.cluster.Name,
				clusterv1.ClusterTopologyOwnedLabel:                 "",
				clusterv1.ClusterTopologyMachineDeploymentNameLabel: mdt.Name,
			}},
			Template: clusterv1.MachineTemplateSpec{
				ObjectMeta: clusterv1.ObjectMeta{Labels: labels, Annotations: annotations},
				Spec: clusterv1.MachineSpec{
					ClusterName:             c.cluster.Name,
					Version:                 &version,
					Bootstrap:               clusterv1.Bootstrap{ConfigRef: desiredRef(currentBootstrapRef, out.BootstrapTemplate)},
					InfrastructureRef:       *desiredRef(currentInfraRef, out.InfrastructureMachineTemplate),
					FailureDomain:           failureDomain,
					NodeDrainTimeout:        override(mdClass.NodeDrainTimeout, mdt.NodeDrainTimeout),
					NodeVolumeDetachTimeout: override(mdClass.NodeVolumeDetachTimeout, mdt.NodeVolumeDetachTimeout),
					NodeDeletionTimeout:     override(mdClass.NodeDeletionTimeout, mdt.NodeDeletionTimeout),
					ReadinessGates:          overrideList(mdClass.ReadinessGates, mdt.ReadinessGates),
					Taints:                  overrideList(mdClass.Taints, mdt.Taints),
				},
			},
		},
	}
	out.Object = md
	if check, ok := healthCheck(mdClass.MachineHealthCheck, mdt.MachineHealthCheck); ok {
		out.MachineHealthCheck = c.machineHealthCheck(name, &metav1.LabelSelector{MatchLabels: map[string]string{
			clusterv1.ClusterTopologyOwnedLabel:                 "",
			clusterv1.ClusterTopologyMachineDeploymentNameLabel: mdt.Name,
		}}, check)
	}
	return out, nil
}

// timeOrNil is t, or nil when it is zero.
func timeOrNil(t metav1.Time) *metav1.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}
