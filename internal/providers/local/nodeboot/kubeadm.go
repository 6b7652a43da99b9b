package nodeboot

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"

	"github.com/capstan-dev/capstan/internal/manifest"
)

// kubeadmGroup is the API group of kubeadm's configuration; v1beta3 and v1beta4 are read (CABPK writes
// v1beta4 for Kubernetes v1.31 and later, v1beta3 before).
const kubeadmGroup = "kubeadm.k8s.io"

// KubeadmConfig is the kubeadm configuration a kubeadm command reads: its documents by kind. Documents of
// other kinds (KubeletConfiguration, KubeProxyConfiguration) are ignored.
type KubeadmConfig struct {
	APIVersion string
	Init       *InitConfiguration
	Join       *JoinConfiguration
	Cluster    *ClusterConfiguration
}

// InitConfiguration is the part of kubeadm's InitConfiguration the local provider honours.
type InitConfiguration struct {
	NodeRegistration NodeRegistration `json:"nodeRegistration"`
}

// JoinConfiguration is the part of kubeadm's JoinConfiguration the local provider honours.
type JoinConfiguration struct {
	NodeRegistration NodeRegistration `json:"nodeRegistration"`
	// ControlPlane, when set, makes the node join as a control plane node.
	ControlPlane *struct{} `json:"controlPlane,omitempty"`
}

// NodeRegistration is kubeadm's nodeRegistration.
type NodeRegistration struct {
	Name string `json:"name,omitempty"`
	// Taints are the Node's taints; nil means kubeadm's default (the control-plane taint on control plane
	// nodes), an empty list means none.
	Taints           []corev1.Taint `json:"taints"`
	KubeletExtraArgs Args           `json:"kubeletExtraArgs,omitempty"`
}

// ClusterConfiguration is the part of kubeadm's ClusterConfiguration the local provider honours.
type ClusterConfiguration struct {
	KubernetesVersion string                `json:"kubernetesVersion,omitempty"`
	ClusterName       string                `json:"clusterName,omitempty"`
	APIServer         ControlPlaneComponent `json:"apiServer"`
	ControllerManager ControlPlaneComponent `json:"controllerManager"`
	Scheduler         ControlPlaneComponent `json:"scheduler"`
	// EncryptionAlgorithm and CertificateValidityPeriod (kubeadm v1beta4) are how the machines'
	// certificates are issued.
	EncryptionAlgorithm       string           `json:"encryptionAlgorithm,omitempty"`
	CertificateValidityPeriod *metav1.Duration `json:"certificateValidityPeriod,omitempty"`
	Etcd                      struct {
		Local *struct {
			ExtraArgs Args `json:"extraArgs,omitempty"`
		} `json:"local,omitempty"`
		External *struct {
			Endpoints []string `json:"endpoints"`
		} `json:"external,omitempty"`
	} `json:"etcd"`
}

// ControlPlaneComponent is the configuration of kube-apiserver, kube-controller-manager or kube-scheduler.
type ControlPlaneComponent struct {
	ExtraArgs    Args         `json:"extraArgs,omitempty"`
	ExtraVolumes []HostVolume `json:"extraVolumes,omitempty"`
}

// HostVolume is a host directory or file mounted into a control plane component's static Pod.
type HostVolume struct {
	Name      string `json:"name"`
	HostPath  string `json:"hostPath"`
	MountPath string `json:"mountPath"`
	ReadOnly  bool   `json:"readOnly,omitempty"`
}

// Arg is one extra argument of a component.
type Arg struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Args are a component's extra arguments, in order. kubeadm v1beta3 writes them as a map, v1beta4 as a
// list of name/value pairs; both are read.
type Args []Arg

// UnmarshalJSON reads a map (sorted by name) or a list.
func (a *Args) UnmarshalJSON(data []byte) error {
	data = bytes.TrimSpace(data)
	if bytes.Equal(data, []byte("null")) {
		*a = nil
		return nil
	}
	if len(data) > 0 && data[0] == '{' {
		m := map[string]string{}
		if err := json.Unmarshal(data, &m); err != nil {
			return err
		}
		out := make(Args, 0, len(m))
		for k, v := range m {
			out = append(out, Arg{Name: k, Value: v})
		}
		sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
		*a = out
		return nil
	}
	var list []Arg
	if err := json.Unmarshal(data, &list); err != nil {
		return err
	}
	*a = list
	return nil
}

// Get returns the value of the last argument named name.
func (a Args) Get(name string) (string, bool) {
	for i := len(a) - 1; i >= 0; i-- {
		if a[i].Name == name {
			return a[i].Value, true
		}
	}
	return "", false
}

// parseKubeadm reads a multi-document kubeadm configuration.
func parseKubeadm(data []byte) (*KubeadmConfig, error) {
	out := &KubeadmConfig{}
	for i, doc := range manifest.Documents(data) {
		var meta struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
		}
		if err := yaml.Unmarshal(doc, &meta); err != nil {
			return nil, fmt.Errorf("document %d is not valid YAML: %w", i+1, err)
		}
		if meta.APIVersion == "" && meta.Kind == "" {
			continue // empty document
		}
		group, version, _ := strings.Cut(meta.APIVersion, "/")
		if group != kubeadmGroup {
			continue // KubeletConfiguration, KubeProxyConfiguration, ...
		}
		if version != "v1beta3" && version != "v1beta4" {
			return nil, fmt.Errorf("%s %s: unsupported kubeadm API version, expected %s/v1beta3 or v1beta4", meta.APIVersion, meta.Kind, kubeadmGroup)
		}
		out.APIVersion = meta.APIVersion
		var target any
		switch meta.Kind {
		case "InitConfiguration":
			out.Init = &InitConfiguration{}
			target = out.Init
		case "JoinConfiguration":
			out.Join = &JoinConfiguration{}
			target = out.Join
		case "ClusterConfiguration":
			out.Cluster = &ClusterConfiguration{}
			target = out.Cluster
		default:
			continue
		}
		if err := yaml.Unmarshal(doc, target); err != nil {
			return nil, fmt.Errorf("%s: %w", meta.Kind, err)
		}
	}
	if out.Init == nil && out.Join == nil && out.Cluster == nil {
		return nil, fmt.Errorf("no %s InitConfiguration, JoinConfiguration or ClusterConfiguration found", kubeadmGroup)
	}
	return out, nil
}

// Node is what the kubelet of a node registers, as derived from nodeRegistration.
type Node struct {
	// Name is nodeRegistration.name (or kubelet's --hostname-override), empty when unset or a template
	// the node resolves at boot (cloud-init's `{{ ds.meta_data.local_hostname }}`).
	Name string
	// Labels come from kubelet's --node-labels.
	Labels map[string]string
	// Taints are nodeRegistration.taints plus kubelet's --register-with-taints; DefaultTaints says
	// nodeRegistration.taints was not set, so that kubeadm's defaults apply.
	Taints        []corev1.Taint
	DefaultTaints bool
}

// Node returns what the node registers as; for data without a kubeadm command, DefaultTaints and nothing
// else.
func (d *Data) Node() (Node, error) {
	n := Node{DefaultTaints: true}
	nr := d.NodeRegistration()
	if nr == nil {
		return n, nil
	}
	n.Name = nr.Name
	if v, ok := nr.KubeletExtraArgs.Get("hostname-override"); ok && n.Name == "" {
		n.Name = v
	}
	if strings.Contains(n.Name, "{{") || strings.Contains(n.Name, "${") {
		n.Name = ""
	}
	if n.Name != "" {
		if errs := validation.IsDNS1123Subdomain(n.Name); len(errs) > 0 {
			return n, fmt.Errorf("nodeRegistration.name %q is not a valid Node name: %s", n.Name, strings.Join(errs, "; "))
		}
	}
	if v, ok := nr.KubeletExtraArgs.Get("node-labels"); ok && v != "" {
		n.Labels = map[string]string{}
		for _, kv := range strings.Split(v, ",") {
			k, val, _ := strings.Cut(strings.TrimSpace(kv), "=")
			if errs := validation.IsQualifiedName(k); len(errs) > 0 {
				return n, fmt.Errorf("kubelet --node-labels: label %q: %s", k, strings.Join(errs, "; "))
			}
			if errs := validation.IsValidLabelValue(val); len(errs) > 0 {
				return n, fmt.Errorf("kubelet --node-labels: value %q of label %s: %s", val, k, strings.Join(errs, "; "))
			}
			n.Labels[k] = val
		}
	}
	if nr.Taints != nil {
		n.DefaultTaints = false
		n.Taints = append(n.Taints, nr.Taints...)
	}
	if v, ok := nr.KubeletExtraArgs.Get("register-with-taints"); ok && v != "" {
		for _, spec := range strings.Split(v, ",") {
			t, err := parseTaint(strings.TrimSpace(spec))
			if err != nil {
				return n, fmt.Errorf("kubelet --register-with-taints: %w", err)
			}
			n.Taints = append(n.Taints, t)
		}
	}
	return n, nil
}

// parseTaint reads key[=value]:Effect.
func parseTaint(s string) (corev1.Taint, error) {
	kv, effect, ok := strings.Cut(s, ":")
	if !ok {
		return corev1.Taint{}, fmt.Errorf("taint %q has no effect (key[=value]:Effect)", s)
	}
	k, v, _ := strings.Cut(kv, "=")
	t := corev1.Taint{Key: k, Value: v, Effect: corev1.TaintEffect(effect)}
	switch t.Effect {
	case corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute:
	default:
		return corev1.Taint{}, fmt.Errorf("taint %q: unknown effect %q", s, effect)
	}
	if errs := validation.IsQualifiedName(k); len(errs) > 0 {
		return corev1.Taint{}, fmt.Errorf("taint %q: %s", s, strings.Join(errs, "; "))
	}
	return t, nil
}

// ParseClusterConfiguration reads a kubeadm ClusterConfiguration document, as the kube-system/kubeadm-config
// ConfigMap holds it.
func ParseClusterConfiguration(data []byte) (*ClusterConfiguration, error) {
	cfg, err := parseKubeadm(data)
	if err != nil {
		return nil, err
	}
	if cfg.Cluster == nil {
		return nil, fmt.Errorf("no %s ClusterConfiguration found", kubeadmGroup)
	}
	return cfg.Cluster, nil
}

// ClusterConfigurationDocument returns the ClusterConfiguration document of the kubeadm configuration the
// data's command reads, as written, nil when there is none.
func (d *Data) ClusterConfigurationDocument() []byte {
	if d.Kubeadm == nil || d.Kubeadm.Cluster == nil {
		return nil
	}
	f, ok := d.File(d.ConfigPath)
	if !ok {
		return nil
	}
	for _, doc := range manifest.Documents(f.Content) {
		var meta struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
		}
		if yaml.Unmarshal(doc, &meta) == nil && meta.Kind == "ClusterConfiguration" && strings.HasPrefix(meta.APIVersion, kubeadmGroup+"/") {
			return []byte(strings.TrimSpace(string(doc)) + "\n")
		}
	}
	return nil
}
