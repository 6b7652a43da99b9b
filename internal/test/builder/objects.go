package builder

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
)

// Object returns an empty object of the test provider: group, kind, namespace and name, with spec {}.
func (p Provider) Object(group, kind, namespace, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{}}}
	u.SetGroupVersionKind(schema.GroupVersionKind{Group: group, Version: p.Version, Kind: kind})
	u.SetNamespace(namespace)
	u.SetName(name)
	return u
}

// InfraCluster returns an InfraCluster of the test provider.
func (p Provider) InfraCluster(namespace, name string) *unstructured.Unstructured {
	return p.Object(p.Infrastructure, InfraClusterKind, namespace, name)
}

// InfraMachine returns an InfraMachine of the test provider.
func (p Provider) InfraMachine(namespace, name string) *unstructured.Unstructured {
	return p.Object(p.Infrastructure, InfraMachineKind, namespace, name)
}

// InfraMachineTemplate returns an InfraMachineTemplate of the test provider with an empty spec.template.
func (p Provider) InfraMachineTemplate(namespace, name string) *unstructured.Unstructured {
	u := p.Object(p.Infrastructure, InfraMachineTemplateKind, namespace, name)
	_ = unstructured.SetNestedMap(u.Object, map[string]any{"spec": map[string]any{}}, "spec", "template")
	return u
}

// InfraMachinePool returns an InfraMachinePool of the test provider. With machines, it reports
// status.infrastructureMachineKind and creates an InfraMachine for each of its instances, for which the core
// creates MachinePool Machines.
func (p Provider) InfraMachinePool(namespace, name string, machines bool) *unstructured.Unstructured {
	u := p.Object(p.Infrastructure, InfraMachinePoolKind, namespace, name)
	if machines {
		_ = unstructured.SetNestedField(u.Object, true, "spec", "machines")
	}
	return u
}

// BootstrapConfig returns a BootstrapConfig of the test provider.
func (p Provider) BootstrapConfig(namespace, name string) *unstructured.Unstructured {
	return p.Object(p.Bootstrap, BootstrapConfigKind, namespace, name)
}

// BootstrapTemplate returns a BootstrapConfigTemplate of the test provider with an empty spec.template.
func (p Provider) BootstrapTemplate(namespace, name string) *unstructured.Unstructured {
	u := p.Object(p.Bootstrap, BootstrapTemplateKind, namespace, name)
	_ = unstructured.SetNestedMap(u.Object, map[string]any{"spec": map[string]any{}}, "spec", "template")
	return u
}

// ControlPlane returns a ControlPlane of the test provider.
func (p Provider) ControlPlane(namespace, name string) *unstructured.Unstructured {
	return p.Object(p.ControlPlaneGroup, ControlPlaneKind, namespace, name)
}

// MachinePool returns a MachinePool of a Cluster with replicas, whose bootstrap config and InfraMachinePool
// are the objects given.
func MachinePool(namespace, name, clusterName string, replicas int32, infraPool, bootstrap *unstructured.Unstructured) *clusterv1.MachinePool {
	return &clusterv1.MachinePool{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec: clusterv1.MachinePoolSpec{
			ClusterName: clusterName,
			Replicas:    ptr.To(replicas),
			Template: clusterv1.MachineTemplateSpec{Spec: clusterv1.MachineSpec{
				ClusterName:       clusterName,
				Bootstrap:         clusterv1.Bootstrap{ConfigRef: Ref(bootstrap)},
				InfrastructureRef: *Ref(infraPool),
				Version:           ptr.To("v1.31.0"),
			}},
		},
	}
}

// Ref returns a reference to an object.
func Ref(obj *unstructured.Unstructured) *corev1.ObjectReference {
	return &corev1.ObjectReference{APIVersion: obj.GetAPIVersion(), Kind: obj.GetKind(), Namespace: obj.GetNamespace(), Name: obj.GetName()}
}

// Cluster returns a Cluster referencing an InfraCluster and, when controlPlane is not nil, a ControlPlane.
func Cluster(namespace, name string, infra, controlPlane *unstructured.Unstructured) *clusterv1.Cluster {
	c := &clusterv1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec:       clusterv1.ClusterSpec{},
	}
	if infra != nil {
		c.Spec.InfrastructureRef = Ref(infra)
	}
	if controlPlane != nil {
		c.Spec.ControlPlaneRef = Ref(controlPlane)
	}
	return c
}

// Machine returns a Machine of a Cluster referencing an InfraMachine and a BootstrapConfig.
func Machine(namespace, name, clusterName string, infra, bootstrap *unstructured.Unstructured) *clusterv1.Machine {
	m := &clusterv1.Machine{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, Labels: map[string]string{clusterv1.ClusterNameLabel: clusterName}},
		Spec: clusterv1.MachineSpec{
			ClusterName:       clusterName,
			InfrastructureRef: *Ref(infra),
			Version:           ptr.To("v1.31.0"),
		},
	}
	if bootstrap != nil {
		m.Spec.Bootstrap.ConfigRef = Ref(bootstrap)
	}
	return m
}

// MachineDeployment returns a MachineDeployment of a Cluster whose Machines are cloned from the given
// templates.
func MachineDeployment(namespace, name, clusterName string, replicas int32, infraTemplate, bootstrapTemplate *unstructured.Unstructured) *clusterv1.MachineDeployment {
	labels := map[string]string{"pool": name}
	md := &clusterv1.MachineDeployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec: clusterv1.MachineDeploymentSpec{
			ClusterName: clusterName,
			Replicas:    ptr.To(replicas),
			Selector:    metav1.LabelSelector{MatchLabels: labels},
			Template: clusterv1.MachineTemplateSpec{
				ObjectMeta: clusterv1.ObjectMeta{Labels: labels},
				Spec: clusterv1.MachineSpec{
					ClusterName:       clusterName,
					InfrastructureRef: *Ref(infraTemplate),
					Version:           ptr.To("v1.31.0"),
				},
			},
		},
	}
	if bootstrapTemplate != nil {
		md.Spec.Template.Spec.Bootstrap.ConfigRef = Ref(bootstrapTemplate)
	}
	return md
}
