package local_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/drone/envsubst/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/capstan-dev/capstan/internal/clusterctl/topologyplan"
	"github.com/capstan-dev/capstan/internal/providers/local/nodeboot"
	"github.com/capstan-dev/capstan/internal/release"
)

func decode(t *testing.T, data []byte) []*unstructured.Unstructured {
	t.Helper()
	var out []*unstructured.Unstructured
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); err != nil {
			if errors.Is(err, io.EOF) {
				return out
			}
			t.Fatal(err)
		}
		if len(u.Object) > 0 {
			out = append(out, u)
		}
	}
}

// The release artifacts follow the clusterctl provider contract: one Namespace, a Deployment whose
// container is `manager`, the CRDs labelled with the contract, the aggregated ClusterRole, every object
// labelled with the provider; templates and metadata published as files.
func TestReleaseArtifacts(t *testing.T) {
	g := NewWithT(t)
	p, err := release.Local()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(p.Label()).To(Equal("infrastructure-local"))
	files, err := p.Files("v0.1.0")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(files).To(HaveKey("metadata.yaml"))
	g.Expect(files).To(HaveKey("cluster-template.yaml"))
	g.Expect(files).To(HaveKey("infrastructure-components.yaml"))

	kinds := map[string]int{}
	aggregated := false
	for _, o := range decode(t, files["infrastructure-components.yaml"]) {
		kinds[o.GetKind()]++
		g.Expect(o.GetLabels()).To(HaveKeyWithValue("cluster.x-k8s.io/provider", "infrastructure-local"), "%s %s", o.GetKind(), o.GetName())
		switch o.GetKind() {
		case "CustomResourceDefinition":
			g.Expect(o.GetLabels()).To(HaveKeyWithValue("cluster.x-k8s.io/v1beta1", "v1alpha1"))
		case "Deployment":
			containers, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
			g.Expect(containers).To(HaveLen(1))
			c := containers[0].(map[string]any)
			g.Expect(c["name"]).To(Equal("manager"))
			g.Expect(c["image"]).To(Equal("ghcr.io/capstan-dev/capstan:v0.1.0"))
			g.Expect(c["command"]).To(Equal([]any{"/capstan"}))
			g.Expect(c["args"]).To(ContainElements("infra-local", "--leader-elect"))
		case "ClusterRole":
			if o.GetLabels()["cluster.x-k8s.io/aggregate-to-manager"] == "true" {
				aggregated = true
			}
		}
		if !slices.Contains([]string{"CustomResourceDefinition", "ClusterRole", "ClusterRoleBinding", "Namespace", "ValidatingWebhookConfiguration"}, o.GetKind()) {
			g.Expect(o.GetNamespace()).To(Equal("capl-system"), "%s %s", o.GetKind(), o.GetName())
		}
	}
	g.Expect(kinds).To(HaveKeyWithValue("Namespace", 1))
	g.Expect(kinds).To(HaveKeyWithValue("Deployment", 1))
	g.Expect(kinds).To(HaveKeyWithValue("ValidatingWebhookConfiguration", 1), "the webhooks that refuse extra arguments the provider does not run")
	g.Expect(kinds).To(HaveKeyWithValue("CustomResourceDefinition", 6), "LocalCluster, LocalMachine, LocalMachinePool and their templates")
	g.Expect(aggregated).To(BeTrue())
}

// Each cluster template uses the common variables and renders to objects that all live in ${NAMESPACE}.
func TestClusterTemplates(t *testing.T) {
	p, err := release.Local()
	if err != nil {
		t.Fatal(err)
	}
	files, err := p.Files("v0.1.0")
	if err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{
		"CLUSTER_NAME": "c1", "NAMESPACE": "ns1", "KUBERNETES_VERSION": "v1.37.1",
		"CONTROL_PLANE_MACHINE_COUNT": "3", "WORKER_MACHINE_COUNT": "2",
	}
	for name, data := range files {
		if !strings.HasPrefix(name, "cluster-template") || name == "cluster-template-topology.yaml" {
			continue // the topology flavor: TestTopologyFlavor
		}
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			text, err := envsubst.Eval(string(data), func(v string) string { return vars[v] })
			g.Expect(err).NotTo(HaveOccurred())
			objs := decode(t, []byte(text))
			kinds := map[string]int{}
			for _, o := range objs {
				kinds[o.GetKind()]++
				g.Expect(o.GetNamespace()).To(Equal("ns1"), "%s %s", o.GetKind(), o.GetName())
				if o.GetKind() == "Secret" {
					// The bootstrap data is what the kubeadm bootstrap provider writes, and the local
					// provider reads it: kubeadm init for the control plane, kubeadm join for the workers.
					value, _, _ := unstructured.NestedString(o.Object, "stringData", "value")
					d, err := nodeboot.Parse("cloud-config", []byte(value))
					g.Expect(err).NotTo(HaveOccurred(), o.GetName())
					want := nodeboot.CommandJoin
					if strings.HasSuffix(o.GetName(), "control-plane-bootstrap") {
						want = nodeboot.CommandInit
						g.Expect(d.Kubeadm.Cluster.KubernetesVersion).To(Equal("v1.37.1"))
					}
					g.Expect(d.Command).To(Equal(want), o.GetName())
				}
				if o.GetKind() == "MachineDeployment" && !strings.HasSuffix(o.GetName(), "control-plane") {
					replicas, _, _ := unstructured.NestedFieldNoCopy(o.Object, "spec", "replicas")
					g.Expect(replicas).To(BeEquivalentTo(2))
					if name == "cluster-template.yaml" {
						// The workers' KubeadmConfigs come from a KubeadmConfigTemplate; the references
						// and the strategy carry what upstream's webhooks would default.
						ref, _, _ := unstructured.NestedStringMap(o.Object, "spec", "template", "spec", "bootstrap", "configRef")
						g.Expect(ref).To(HaveKeyWithValue("kind", "KubeadmConfigTemplate"))
						g.Expect(ref).To(HaveKeyWithValue("namespace", "ns1"))
						strategy, _, _ := unstructured.NestedString(o.Object, "spec", "strategy", "type")
						g.Expect(strategy).To(Equal("RollingUpdate"))
						continue
					}
					secret, _, _ := unstructured.NestedString(o.Object, "spec", "template", "spec", "bootstrap", "dataSecretName")
					g.Expect(secret).To(Equal("c1-bootstrap"))
				}
				if o.GetKind() == "KubeadmControlPlane" {
					replicas, _, _ := unstructured.NestedFieldNoCopy(o.Object, "spec", "replicas")
					g.Expect(replicas).To(BeEquivalentTo(3))
					version, _, _ := unstructured.NestedString(o.Object, "spec", "version")
					g.Expect(version).To(Equal("v1.37.1"))
					ns, _, _ := unstructured.NestedString(o.Object, "spec", "machineTemplate", "infrastructureRef", "namespace")
					g.Expect(ns).To(Equal("ns1"))
				}
			}
			g.Expect(kinds).To(HaveKeyWithValue("Cluster", 1))
			g.Expect(kinds).To(HaveKeyWithValue("LocalCluster", 1))
			if name == "cluster-template.yaml" {
				g.Expect(kinds).To(HaveKeyWithValue("KubeadmControlPlane", 1))
				g.Expect(kinds).To(HaveKeyWithValue("KubeadmConfigTemplate", 1))
				g.Expect(kinds).NotTo(HaveKey("Secret"))
				return
			}
			if name == "cluster-template-machinepool.yaml" {
				// The control plane comes from the KubeadmControlPlane, the pool's join data from its
				// KubeadmConfig: nothing is written by hand.
				g.Expect(kinds).To(HaveKeyWithValue("KubeadmControlPlane", 1))
				g.Expect(kinds).To(HaveKeyWithValue("MachinePool", 1))
				g.Expect(kinds).To(HaveKeyWithValue("LocalMachinePool", 1))
				g.Expect(kinds).To(HaveKeyWithValue("KubeadmConfig", 1))
				g.Expect(kinds).NotTo(HaveKey("Secret"))
				return
			}
			g.Expect(kinds).To(HaveKeyWithValue("Secret", 2))
			g.Expect(kinds).NotTo(HaveKey("KubeadmControlPlane"))
		})
	}
}

// The topology flavor and the ClusterClass "local" are published; the flavor's Cluster names the class,
// and the topology engine computes from them a KubeadmControlPlane whose kube-apiserver enforces the Pod
// Security Standard of the cluster's variable (the book's patch), machines that boot after
// machineStartupDelay, and workers with the node labels of workerNodeLabels overridden per
// MachineDeployment.
func TestTopologyFlavor(t *testing.T) {
	g := NewWithT(t)
	p, err := release.Local()
	g.Expect(err).NotTo(HaveOccurred())
	files, err := p.Files("v0.1.0")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(files).To(HaveKey("clusterclass-local.yaml"))
	g.Expect(files).To(HaveKey("cluster-template-topology.yaml"))
	g.Expect(files["infrastructure-components.yaml"]).NotTo(ContainSubstring("kind: ClusterClass"), "the class is a file of its own")

	vars := map[string]string{
		"CLUSTER_NAME": "c1", "NAMESPACE": "ns1", "KUBERNETES_VERSION": "v1.37.1", "WORKER_MACHINE_COUNT": "2",
		"LOCAL_MACHINE_STARTUP_DELAY": "3s", "POD_SECURITY_STANDARD_ENFORCE": "restricted",
	}
	text, err := envsubst.Eval(string(files["cluster-template-topology.yaml"]), func(v string) string { return vars[v] })
	g.Expect(err).NotTo(HaveOccurred())
	objs := decode(t, []byte(text))
	g.Expect(objs).To(HaveLen(1))
	cluster := objs[0]
	g.Expect(cluster.GetKind()).To(Equal("Cluster"))
	class, _, _ := unstructured.NestedString(cluster.Object, "spec", "topology", "class")
	g.Expect(class).To(Equal("local"), "clusterctl adds clusterclass-%s.yaml", class)
	// md-0 overrides workerNodeLabels, as a user would.
	mds, _, _ := unstructured.NestedSlice(cluster.Object, "spec", "topology", "workers", "machineDeployments")
	g.Expect(mds).To(HaveLen(1))
	mds[0].(map[string]any)["variables"] = map[string]any{"overrides": []any{map[string]any{"name": "workerNodeLabels", "value": "tier=edge"}}}
	g.Expect(unstructured.SetNestedSlice(cluster.Object, mds, "spec", "topology", "workers", "machineDeployments")).To(Succeed())

	in := []unstructured.Unstructured{*cluster}
	for _, o := range decode(t, files["clusterclass-local.yaml"]) {
		g.Expect(o.GetNamespace()).To(BeEmpty(), "clusterctl puts the class in the target namespace")
		o.SetNamespace("ns1")
		in = append(in, *o)
	}
	plans, err := topologyplan.Plan(context.Background(), in, "")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(plans).To(HaveLen(1))
	byKind := map[string][]*unstructured.Unstructured{}
	for _, c := range plans[0].Changes {
		if c.Object.GetKind() == "Cluster" {
			g.Expect(c.Action).To(Equal(topologyplan.Modified), "the Cluster gets its references")
			continue
		}
		g.Expect(c.Action).To(Equal(topologyplan.Created))
		byKind[c.Object.GetKind()] = append(byKind[c.Object.GetKind()], c.Object)
	}
	g.Expect(byKind["LocalCluster"]).To(HaveLen(1))
	g.Expect(byKind["KubeadmControlPlane"]).To(HaveLen(1))
	g.Expect(byKind["KubeadmConfigTemplate"]).To(HaveLen(1))
	g.Expect(byKind["LocalMachineTemplate"]).To(HaveLen(2))
	g.Expect(byKind["MachineDeployment"]).To(HaveLen(1))
	g.Expect(byKind["MachineHealthCheck"]).To(HaveLen(2))

	kcp := byKind["KubeadmControlPlane"][0]
	replicas, _, _ := unstructured.NestedInt64(kcp.Object, "spec", "replicas")
	g.Expect(replicas).To(BeEquivalentTo(1))
	args, _, _ := unstructured.NestedStringMap(kcp.Object, "spec", "kubeadmConfigSpec", "clusterConfiguration", "apiServer", "extraArgs")
	g.Expect(args).To(HaveKeyWithValue("admission-control-config-file", "/etc/kubernetes/kube-apiserver-admission-pss.yaml"))
	kcpFiles, _, _ := unstructured.NestedSlice(kcp.Object, "spec", "kubeadmConfigSpec", "files")
	g.Expect(kcpFiles).To(HaveLen(1))
	content := kcpFiles[0].(map[string]any)["content"].(string)
	g.Expect(content).To(ContainSubstring(`enforce: "restricted"`))
	g.Expect(content).To(ContainSubstring("apiVersion: pod-security.admission.config.k8s.io/v1\n"))

	for _, lmt := range byKind["LocalMachineTemplate"] {
		delay, _, _ := unstructured.NestedString(lmt.Object, "spec", "template", "spec", "startupDelay")
		g.Expect(delay).To(Equal("3s"), lmt.GetName())
	}
	labels, _, _ := unstructured.NestedString(byKind["KubeadmConfigTemplate"][0].Object, "spec", "template", "spec", "joinConfiguration", "nodeRegistration", "kubeletExtraArgs", "node-labels")
	g.Expect(labels).To(Equal("tier=edge"))
	mdReplicas, _, _ := unstructured.NestedInt64(byKind["MachineDeployment"][0].Object, "spec", "replicas")
	g.Expect(mdReplicas).To(BeEquivalentTo(2))

	t.Log("a MachinePool of the class's default-worker MachinePool class, with its own node labels")
	pooled := cluster.DeepCopy()
	g.Expect(unstructured.SetNestedSlice(pooled.Object, []any{map[string]any{"class": "default-worker", "name": "mp-0", "replicas": int64(3),
		"variables": map[string]any{"overrides": []any{map[string]any{"name": "workerNodeLabels", "value": "pool=mp-0"}}}}},
		"spec", "topology", "workers", "machinePools")).To(Succeed())
	in[0] = *pooled
	plans, err = topologyplan.Plan(context.Background(), in, "")
	g.Expect(err).NotTo(HaveOccurred())
	pool := map[string]*unstructured.Unstructured{}
	for _, c := range plans[0].Changes {
		switch c.Object.GetKind() {
		case "MachinePool", "LocalMachinePool", "KubeadmConfig":
			pool[c.Object.GetKind()] = c.Object
		}
	}
	g.Expect(pool).To(HaveLen(3))
	g.Expect(pool["MachinePool"].GetName()).To(HavePrefix(cluster.GetName() + "-mp-0-"))
	poolReplicas, _, _ := unstructured.NestedInt64(pool["MachinePool"].Object, "spec", "replicas")
	g.Expect(poolReplicas).To(BeEquivalentTo(3))
	poolLabels, _, _ := unstructured.NestedString(pool["KubeadmConfig"].Object, "spec", "joinConfiguration", "nodeRegistration", "kubeletExtraArgs", "node-labels")
	g.Expect(poolLabels).To(Equal("pool=mp-0"))
	in[0] = *cluster

	t.Log("podSecurityStandard.enabled false leaves the API server's admission alone; an unknown level is refused")
	off := cluster.DeepCopy()
	vs, _, _ := unstructured.NestedSlice(off.Object, "spec", "topology", "variables")
	for _, v := range vs {
		if v.(map[string]any)["name"] == "podSecurityStandard" {
			v.(map[string]any)["value"].(map[string]any)["enabled"] = false
		}
	}
	g.Expect(unstructured.SetNestedSlice(off.Object, vs, "spec", "topology", "variables")).To(Succeed())
	in[0] = *off
	plans, err = topologyplan.Plan(context.Background(), in, "")
	g.Expect(err).NotTo(HaveOccurred())
	for _, c := range plans[0].Changes {
		if c.Object.GetKind() == "KubeadmControlPlane" {
			g.Expect(unstructured.NestedFieldNoCopy(c.Object.Object, "spec", "kubeadmConfigSpec", "files")).To(BeNil())
		}
	}
	for _, v := range vs {
		if v.(map[string]any)["name"] == "podSecurityStandard" {
			v.(map[string]any)["value"].(map[string]any)["enforce"] = "strict"
		}
	}
	g.Expect(unstructured.SetNestedSlice(off.Object, vs, "spec", "topology", "variables")).To(Succeed())
	in[0] = *off
	_, err = topologyplan.Plan(context.Background(), in, "")
	g.Expect(err).To(MatchError(ContainSubstring("podSecurityStandard")))
}
