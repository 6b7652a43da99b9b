package local_test

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/drone/envsubst/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/capstan-dev/capstan/internal/providers/local/bootstrapdata"
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
		if o.GetKind() != "CustomResourceDefinition" && o.GetKind() != "ClusterRole" && o.GetKind() != "ClusterRoleBinding" && o.GetKind() != "Namespace" {
			g.Expect(o.GetNamespace()).To(Equal("capl-system"), "%s %s", o.GetKind(), o.GetName())
		}
	}
	g.Expect(kinds).To(HaveKeyWithValue("Namespace", 1))
	g.Expect(kinds).To(HaveKeyWithValue("Deployment", 1))
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
		if !strings.HasPrefix(name, "cluster-template") {
			continue
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
					d, err := bootstrapdata.Parse("cloud-config", []byte(value))
					g.Expect(err).NotTo(HaveOccurred(), o.GetName())
					want := bootstrapdata.CommandJoin
					if strings.HasSuffix(o.GetName(), "control-plane-bootstrap") {
						want = bootstrapdata.CommandInit
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
