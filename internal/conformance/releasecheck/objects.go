package releasecheck

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bootstrapv1 "github.com/capstan-dev/capstan/api/bootstrap/kubeadm/v1beta1"
	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/clusterctl/yamlprocessor"
	"github.com/capstan-dev/capstan/internal/manifest"
	"github.com/capstan-dev/capstan/internal/providers/kubeadm/bootstrap/userdata"
	"github.com/capstan-dev/capstan/internal/providers/kubeadm/kubeadmapi"
)

// templateClusterName is the Cluster name the cluster template is rendered with.
const templateClusterName = "conformance"

// prototypes are the objects the kit creates copies of: the InfraCluster and InfraMachine (from the
// cluster template or the files the author gives), and, when the template's control plane is a
// KubeadmControlPlane, the InfraMachine of its machine template and its Kubernetes version.
type prototypes struct {
	infraCluster, infraMachine *unstructured.Unstructured
	controlPlaneMachine        *unstructured.Unstructured
	kubernetesVersion          string
}

// newObject returns a copy of a prototype with a namespace and name, without what the API server set.
func newObject(proto *unstructured.Unstructured, namespace, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	for k, v := range proto.DeepCopy().Object {
		if k != "status" && k != "metadata" {
			u.Object[k] = v
		}
	}
	u.SetNamespace(namespace)
	u.SetName(name)
	if l := proto.GetLabels(); len(l) > 0 {
		u.SetLabels(l)
	}
	if a := proto.GetAnnotations(); len(a) > 0 {
		u.SetAnnotations(a)
	}
	return u
}

// loadPrototypes reads the objects from the files the author gives, and the rest from the cluster template
// of a flavor.
func loadPrototypes(r Release, o *Options) (*prototypes, error) {
	p := &prototypes{kubernetesVersion: o.KubernetesVersion}
	var err error
	if o.InfraCluster != "" {
		if p.infraCluster, err = readObject(o.InfraCluster); err != nil {
			return nil, err
		}
	}
	if o.InfraMachine != "" {
		if p.infraMachine, err = readObject(o.InfraMachine); err != nil {
			return nil, err
		}
	}
	if p.infraCluster != nil && p.infraMachine != nil {
		return p, nil
	}
	file := "cluster-template.yaml"
	if o.Flavor != "" {
		file = "cluster-template-" + o.Flavor + ".yaml"
	}
	objs, err := renderTemplate(filepath.Join(r.versionDir(), file), o.KubernetesVersion)
	if err != nil {
		return nil, fmt.Errorf("%w; give the InfraCluster and InfraMachine with --infra-cluster and --infra-machine instead", err)
	}
	if err := p.fromTemplate(objs, file); err != nil {
		return nil, fmt.Errorf("%w; give them with --infra-cluster and --infra-machine instead", err)
	}
	return p, nil
}

// readObject reads a YAML file holding one object.
func readObject(path string) (*unstructured.Unstructured, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	objs, err := manifest.Parse(data)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	if len(objs) != 1 {
		return nil, fmt.Errorf("%s holds %d objects: give one object per file", path, len(objs))
	}
	return &objs[0], nil
}

// renderTemplate substitutes the common variables of a cluster template (the environment's values
// first, as clusterctl generate cluster does) and decodes its objects.
func renderTemplate(path, kubernetesVersion string) ([]unstructured.Unstructured, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading the cluster template: %w", err)
	}
	tmpl, err := yamlprocessor.Parse(data)
	if err != nil {
		return nil, fmt.Errorf("parsing %s: %w", filepath.Base(path), err)
	}
	common := map[string]string{
		"CLUSTER_NAME": templateClusterName, "NAMESPACE": "default", "KUBERNETES_VERSION": kubernetesVersion,
		"CONTROL_PLANE_MACHINE_COUNT": "1", "WORKER_MACHINE_COUNT": "1",
	}
	out, err := tmpl.Execute(func(name string) (string, bool) {
		if v, ok := os.LookupEnv(name); ok {
			return v, true
		}
		v, ok := common[name]
		return v, ok
	})
	if err != nil {
		return nil, fmt.Errorf("rendering %s (set its variables in the environment): %w", filepath.Base(path), err)
	}
	return manifest.Parse(out)
}

// fromTemplate finds the prototypes the author did not give in a cluster template's objects: the Cluster's
// infrastructureRef, the InfraMachineTemplate of a MachineDeployment (or of the control plane), and the
// control plane's InfraMachineTemplate when it is a KubeadmControlPlane.
func (p *prototypes) fromTemplate(objs []unstructured.Unstructured, file string) error {
	find := func(ref map[string]any) *unstructured.Unstructured {
		kind, _ := ref["kind"].(string)
		name, _ := ref["name"].(string)
		for i := range objs {
			if objs[i].GetKind() == kind && objs[i].GetName() == name {
				return &objs[i]
			}
		}
		return nil
	}
	machineOf := func(tmplRef map[string]any) *unstructured.Unstructured {
		tmpl := find(tmplRef)
		if tmpl == nil {
			return nil
		}
		spec, _, _ := unstructured.NestedMap(tmpl.Object, "spec", "template", "spec")
		m := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
		m.SetAPIVersion(tmpl.GetAPIVersion())
		m.SetKind(strings.TrimSuffix(tmpl.GetKind(), "Template"))
		if l, ok, _ := unstructured.NestedStringMap(tmpl.Object, "spec", "template", "metadata", "labels"); ok {
			m.SetLabels(l)
		}
		if a, ok, _ := unstructured.NestedStringMap(tmpl.Object, "spec", "template", "metadata", "annotations"); ok {
			m.SetAnnotations(a)
		}
		return m
	}
	var cluster *unstructured.Unstructured
	for i := range objs {
		if objs[i].GetKind() == "Cluster" && objs[i].GroupVersionKind().Group == clusterv1.GroupVersion.Group {
			cluster = &objs[i]
		}
	}
	if cluster == nil {
		return fmt.Errorf("%s holds no Cluster", file)
	}
	if p.infraCluster == nil {
		ref, ok, _ := unstructured.NestedMap(cluster.Object, "spec", "infrastructureRef")
		if !ok {
			return fmt.Errorf("the Cluster of %s has no spec.infrastructureRef (a ClusterClass-based template?): choose another flavor with --flavor", file)
		}
		if p.infraCluster = find(ref); p.infraCluster == nil {
			return fmt.Errorf("%s has no %v %v, the Cluster's infrastructureRef", file, ref["kind"], ref["name"])
		}
	}
	if ref, ok, _ := unstructured.NestedMap(cluster.Object, "spec", "controlPlaneRef"); ok {
		if cp := find(ref); cp != nil && cp.GetKind() == "KubeadmControlPlane" {
			if infra, ok, _ := unstructured.NestedMap(cp.Object, "spec", "machineTemplate", "infrastructureRef"); ok {
				p.controlPlaneMachine = machineOf(infra)
			}
			if v, ok, _ := unstructured.NestedString(cp.Object, "spec", "version"); ok {
				p.kubernetesVersion = v
			}
		}
	}
	if p.infraMachine == nil {
		for i := range objs {
			if objs[i].GetKind() != "MachineDeployment" {
				continue
			}
			if ref, ok, _ := unstructured.NestedMap(objs[i].Object, "spec", "template", "spec", "infrastructureRef"); ok {
				p.infraMachine = machineOf(ref)
			}
		}
		if p.infraMachine == nil {
			p.infraMachine = p.controlPlaneMachine
		}
		if p.infraMachine == nil {
			return fmt.Errorf("%s has no MachineDeployment or KubeadmControlPlane whose infrastructure template it holds", file)
		}
	}
	return nil
}

// controlPlane does what a kubeadm control plane provider would once the kit has marked a Cluster's
// infrastructure ready: one control plane Machine, with `kubeadm init` bootstrap data, of the control
// plane's InfraMachine. Providers whose worker machines wait for a control plane (capstan's local
// provider) need it; it does nothing when the template's control plane is not a KubeadmControlPlane.
func (p *prototypes) controlPlane(ctx context.Context, c client.Client, cluster *clusterv1.Cluster) error {
	if p.controlPlaneMachine == nil {
		return nil
	}
	name := cluster.Name + "-control-plane"
	data, err := initData(cluster, p.kubernetesVersion, name)
	if err != nil {
		return err
	}
	infra := newObject(p.controlPlaneMachine, cluster.Namespace, name)
	m := &clusterv1.Machine{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: cluster.Namespace, Name: name,
			Labels: map[string]string{clusterv1.ClusterNameLabel: cluster.Name, clusterv1.MachineControlPlaneLabel: ""},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: clusterv1.GroupVersion.String(), Kind: "Cluster", Name: cluster.Name, UID: cluster.UID,
			}},
		},
		Spec: clusterv1.MachineSpec{
			ClusterName: cluster.Name, Version: ptr.To(p.kubernetesVersion),
			Bootstrap: clusterv1.Bootstrap{DataSecretName: ptr.To(name)},
			InfrastructureRef: corev1.ObjectReference{
				APIVersion: infra.GetAPIVersion(), Kind: infra.GetKind(), Name: name, Namespace: cluster.Namespace,
			},
		},
	}
	if err := c.Create(ctx, m); err != nil {
		return fmt.Errorf("creating the control plane Machine: %w", err)
	}
	// As a bootstrap provider's data Secret, it belongs to the Machine (through its bootstrap config).
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: cluster.Namespace, Name: name, Labels: map[string]string{clusterv1.ClusterNameLabel: cluster.Name},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: clusterv1.GroupVersion.String(), Kind: "Machine", Name: name, UID: m.UID}},
		},
		Type: clusterv1.ClusterSecretType,
		Data: map[string][]byte{"value": data, "format": []byte(bootstrapv1.CloudConfig)},
	}
	if err := c.Create(ctx, secret); err != nil {
		return fmt.Errorf("creating the control plane's bootstrap data: %w", err)
	}
	infra.SetOwnerReferences([]metav1.OwnerReference{{
		APIVersion: clusterv1.GroupVersion.String(), Kind: "Machine", Name: name, UID: m.UID, Controller: ptr.To(true),
	}})
	labels := infra.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels[clusterv1.ClusterNameLabel] = cluster.Name
	infra.SetLabels(labels)
	if err := c.Create(ctx, infra); err != nil {
		return fmt.Errorf("creating the control plane's %s: %w", infra.GetKind(), err)
	}
	return nil
}

// initData is the `kubeadm init` bootstrap data of the control plane Machine nodeName of cluster, rendered
// as the kubeadm bootstrap provider renders a KubeadmConfig with no configuration of its own: the
// ClusterConfiguration filled from the Cluster (name, endpoint, networks) and the Kubernetes version, the
// InitConfiguration naming the Node, in the kubeadm API version of that Kubernetes version, as cloud-config.
// No certificates are written: the providers `capstan conformance` checks read only the kubeadm configuration.
func initData(cluster *clusterv1.Cluster, kubernetesVersion, nodeName string) ([]byte, error) {
	version, err := kubeadmapi.ParseVersion(kubernetesVersion)
	if err != nil {
		return nil, fmt.Errorf("rendering the control plane's bootstrap data: %w; set the Kubernetes version with --kubernetes-version", err)
	}
	cc := &bootstrapv1.ClusterConfiguration{ClusterName: cluster.Name, KubernetesVersion: kubernetesVersion}
	if cluster.Spec.ControlPlaneEndpoint.IsValid() {
		cc.ControlPlaneEndpoint = cluster.Spec.ControlPlaneEndpoint.String()
	}
	if n := cluster.Spec.ClusterNetwork; n != nil {
		cc.Networking.DNSDomain = n.ServiceDomain
		if n.Services != nil {
			cc.Networking.ServiceSubnet = strings.Join(n.Services.CIDRBlocks, ",")
		}
		if n.Pods != nil {
			cc.Networking.PodSubnet = strings.Join(n.Pods.CIDRBlocks, ",")
		}
	}
	initCfg := &bootstrapv1.InitConfiguration{NodeRegistration: bootstrapv1.NodeRegistrationOptions{
		Name: nodeName, ImagePullPolicy: string(corev1.PullIfNotPresent),
	}}
	clusterYAML, err := kubeadmapi.ClusterConfiguration(cc, version)
	if err != nil {
		return nil, fmt.Errorf("rendering the control plane's ClusterConfiguration: %w", err)
	}
	initYAML, err := kubeadmapi.InitConfiguration(initCfg, cc, version)
	if err != nil {
		return nil, fmt.Errorf("rendering the control plane's InitConfiguration: %w", err)
	}
	return userdata.CloudConfig(&userdata.Input{Step: userdata.Init, ClusterConfiguration: clusterYAML, InitConfiguration: initYAML})
}
