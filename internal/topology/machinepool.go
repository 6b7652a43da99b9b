package topology

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
)

// machinePoolObjectNameTemplate names the bootstrap config and the InfraMachinePool of a MachinePool,
// as upstream's <cluster>-<pool>- prefixes.
const machinePoolObjectNameTemplate = "{{ .cluster.name }}-{{ .machinePool.topologyName }}-{{ .random }}"

func (c *computation) mpClass(name string) (*clusterv1.MachinePoolClass, bool) {
	for i := range c.bp.ClusterClass.Spec.Workers.MachinePools {
		if c.bp.ClusterClass.Spec.Workers.MachinePools[i].Class == name {
			return &c.bp.ClusterClass.Spec.Workers.MachinePools[i], true
		}
	}
	return nil, false
}

// machinePool computes a MachinePool of the topology, as upstream does: its bootstrap config and its
// InfraMachinePool are objects made from the spec.template of the class's templates (not templates: a
// MachinePool has one of each), kept under their current names, patched in place.
func (c *computation) machinePool(mpt clusterv1.MachinePoolTopology) (*MachinePoolState, error) {
	mpClass, _ := c.mpClass(mpt.Class)
	templates := c.bp.MachinePools[mpt.Class]
	current, cw := currentState(c.cur.MachinePools, mpt.Name)
	wv := c.workerVersion(c.mpKind(), mpt.Name, cw)
	if !wv.create {
		return nil, nil
	}
	extra := map[string]any{"machinePool": map[string]any{"topologyName": mpt.Name}}
	var currentBootstrapRef, currentInfraRef *corev1.ObjectReference
	if current != nil {
		currentBootstrapRef = current.Object.Spec.Template.Spec.Bootstrap.ConfigRef
		currentInfraRef = &current.Object.Spec.Template.Spec.InfrastructureRef
	}
	out := &MachinePoolState{Held: wv.held}
	object := func(template *unstructured.Unstructured, classRef, currentRef *corev1.ObjectReference, what string) (*unstructured.Unstructured, error) {
		name, err := renderName(machinePoolObjectNameTemplate, c.seed("mp/"+mpt.Name+"/"+what), c.cluster.Name, extra)
		if err != nil {
			return nil, err
		}
		obj, err := c.templateToObject(template, classRef, currentRef, name, nil, nil)
		if err != nil {
			return nil, err
		}
		l := obj.GetLabels()
		l[clusterv1.ClusterTopologyMachinePoolNameLabel] = mpt.Name
		obj.SetLabels(l)
		// Owned by the Cluster until the MachinePool controller adds itself, so that an object whose
		// MachinePool was never created is deleted with the Cluster.
		obj.SetOwnerReferences([]metav1.OwnerReference{c.clusterOwnerRef()})
		return obj, nil
	}
	var err error
	if out.BootstrapObject, err = object(templates.BootstrapTemplate, mpClass.Template.Bootstrap.Ref, currentBootstrapRef, "bootstrap"); err != nil {
		return nil, err
	}
	if out.InfrastructureMachinePoolObject, err = object(templates.InfrastructureMachinePoolTemplate, mpClass.Template.Infrastructure.Ref, currentInfraRef, "infrastructure"); err != nil {
		return nil, err
	}

	tmpl := DefaultMachinePoolNameTemplate
	if mpClass.NamingStrategy != nil && mpClass.NamingStrategy.Template != nil {
		tmpl = *mpClass.NamingStrategy.Template
	}
	name, err := renderName(tmpl, c.seed("mp/"+mpt.Name), c.cluster.Name, extra)
	if err != nil {
		return nil, err
	}
	if current != nil {
		name = current.Object.Name
	}
	minReady := override(mpClass.MinReadySeconds, mpt.MinReadySeconds)
	failureDomains := mpClass.FailureDomains
	if mpt.FailureDomains != nil {
		failureDomains = mpt.FailureDomains
	}
	labels, annotations := c.workerMetadata(mpt.Metadata, mpClass.Template.Metadata, clusterv1.ClusterTopologyMachinePoolNameLabel, mpt.Name)
	version := wv.version
	out.Object = &clusterv1.MachinePool{
		TypeMeta: metav1.TypeMeta{APIVersion: clusterv1.GroupVersion.String(), Kind: "MachinePool"},
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Namespace:   c.cluster.Namespace,
			Labels:      labels,
			Annotations: annotations,
		},
		Spec: clusterv1.MachinePoolSpec{
			ClusterName:     c.cluster.Name,
			Replicas:        mpt.Replicas,
			MinReadySeconds: minReady,
			FailureDomains:  failureDomains,
			Template: clusterv1.MachineTemplateSpec{
				ObjectMeta: clusterv1.ObjectMeta{Labels: labels, Annotations: annotations},
				Spec: clusterv1.MachineSpec{
					ClusterName:             c.cluster.Name,
					Version:                 &version,
					Bootstrap:               clusterv1.Bootstrap{ConfigRef: desiredRef(currentBootstrapRef, out.BootstrapObject)},
					InfrastructureRef:       *desiredRef(currentInfraRef, out.InfrastructureMachinePoolObject),
					NodeDrainTimeout:        override(mpClass.NodeDrainTimeout, mpt.NodeDrainTimeout),
					NodeVolumeDetachTimeout: override(mpClass.NodeVolumeDetachTimeout, mpt.NodeVolumeDetachTimeout),
					NodeDeletionTimeout:     override(mpClass.NodeDeletionTimeout, mpt.NodeDeletionTimeout),
					Taints:                  overrideList(mpClass.Taints, mpt.Taints),
				},
			},
		},
	}
	return out, nil
}
