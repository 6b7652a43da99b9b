package topology

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
)

// TestBookBehaviours checks behaviours of the book's ClusterClass pages that the other tests do not: in-place
// metadata propagation, node timeouts and minReadySeconds (class, then topology), a MachineDeployment class
// added to the class, a rebase to a compatible class, and the Pod Security Standard patch's v1beta1
// configuration below Kubernetes 1.25.
func TestBookBehaviours(t *testing.T) {
	running := func(t *testing.T, class *clusterv1.ClusterClass, cluster *clusterv1.Cluster) (*Blueprint, *Current) {
		bp := blueprint(t, class)
		cur := apply(t, &Current{Cluster: cluster}, compute(t, bp, &Current{Cluster: cluster}), true)
		return bp, apply(t, cur, compute(t, bp, cur), true)
	}
	t.Run("metadata changes are applied in place, templates keep their names", func(t *testing.T) {
		g := NewWithT(t)
		bp, cur := running(t, mustClass(t, bookClass), mustCluster(t, bookCluster))
		md := cur.MachineDeployments["md-0"]
		cur.Cluster.Spec.Topology.Workers.MachineDeployments[0].Metadata.Labels["new"] = "label"
		cur.Cluster.Spec.Topology.ControlPlane.Metadata.Annotations["new"] = "annotation"
		d := compute(t, bp, cur)
		got := d.MachineDeployments["md-0"]
		g.Expect(got.Object.Labels).To(HaveKeyWithValue("new", "label"))
		g.Expect(got.Object.Spec.Template.Labels).To(HaveKeyWithValue("new", "label"), "propagated to the Machines")
		g.Expect(got.InfrastructureMachineTemplate.GetName()).To(Equal(md.InfrastructureMachineTemplate.GetName()))
		g.Expect(got.BootstrapTemplate.GetName()).To(Equal(md.BootstrapTemplate.GetName()))
		g.Expect(d.ControlPlane.Object.GetAnnotations()).To(HaveKeyWithValue("new", "annotation"))
		g.Expect(nested(t, d.ControlPlane.Object, "spec", "machineTemplate", "metadata", "annotations")).To(HaveKeyWithValue("new", "annotation"))
		g.Expect(d.ControlPlane.InfrastructureMachineTemplate.GetName()).To(Equal(cur.ControlPlane.InfrastructureMachineTemplate.GetName()))
	})
	t.Run("node timeouts and minReadySeconds: the class's, overridden by the topology", func(t *testing.T) {
		g := NewWithT(t)
		class := mustClass(t, bookClass)
		class.Spec.ControlPlane.NodeDrainTimeout = &metav1.Duration{Duration: time.Minute}
		class.Spec.ControlPlane.NodeDeletionTimeout = &metav1.Duration{Duration: 2 * time.Minute}
		mdClass := &class.Spec.Workers.MachineDeployments[0]
		mdClass.NodeDrainTimeout = &metav1.Duration{Duration: 3 * time.Minute}
		mdClass.NodeVolumeDetachTimeout = &metav1.Duration{Duration: 4 * time.Minute}
		mdClass.MinReadySeconds = ptrInt32(10)
		cluster := mustCluster(t, bookCluster)
		cluster.Spec.Topology.ControlPlane.NodeDrainTimeout = &metav1.Duration{Duration: 5 * time.Minute}
		cluster.Spec.Topology.Workers.MachineDeployments[0].MinReadySeconds = ptrInt32(20)
		_, cur := running(t, class, cluster)
		cp := cur.ControlPlane.Object
		g.Expect(nested(t, cp, "spec", "machineTemplate", "nodeDrainTimeout")).To(Equal("5m0s"), "the topology's")
		g.Expect(nested(t, cp, "spec", "machineTemplate", "nodeDeletionTimeout")).To(Equal("2m0s"), "the class's")
		md := cur.MachineDeployments["md-0"].Object
		g.Expect(md.Spec.Template.Spec.NodeDrainTimeout.Duration).To(Equal(3 * time.Minute))
		g.Expect(md.Spec.Template.Spec.NodeVolumeDetachTimeout.Duration).To(Equal(4 * time.Minute))
		g.Expect(*md.Spec.MinReadySeconds).To(Equal(int32(20)), "the topology's")
	})
	t.Run("a MachineDeployment class added to the class can be used at once", func(t *testing.T) {
		g := NewWithT(t)
		class := mustClass(t, bookClass)
		bp, cur := running(t, class, mustCluster(t, bookCluster))
		added := class.Spec.Workers.MachineDeployments[0]
		added.Class = "large-worker"
		class.Spec.Workers.MachineDeployments = append(class.Spec.Workers.MachineDeployments, added)
		bp.MachineDeployments["large-worker"] = bp.MachineDeployments["default-worker"]
		cur.Cluster.Spec.Topology.Workers.MachineDeployments = append(cur.Cluster.Spec.Topology.Workers.MachineDeployments,
			clusterv1.MachineDeploymentTopology{Class: "large-worker", Name: "md-large", Replicas: ptrInt32(1)})
		d := compute(t, bp, cur)
		g.Expect(d.MachineDeployments).To(HaveKey("md-large"))
		g.Expect(d.MachineDeployments["md-large"].Object.Name).To(HavePrefix("my-docker-cluster-md-large-"))
		g.Expect(d.MachineDeployments["md-0"].Object.Name).To(Equal(cur.MachineDeployments["md-0"].Object.Name))
	})
	t.Run("a rebase to a compatible class keeps the objects and takes the new class's templates", func(t *testing.T) {
		g := NewWithT(t)
		_, cur := running(t, mustClass(t, bookClass), mustCluster(t, bookCluster))
		other := mustClass(t, bookClass)
		other.Name = "docker-clusterclass-v0.2.0"
		obp := blueprint(t, other)
		_ = unstructured.SetNestedField(obp.MachineDeployments["default-worker"].InfrastructureMachineTemplate.Object, "v0.2.0", "spec", "template", "spec", "customImage")
		cur.Cluster.Spec.Topology.Class = other.Name
		d := compute(t, obp, cur)
		g.Expect(d.ControlPlane.Object.GetName()).To(Equal(cur.ControlPlane.Object.GetName()))
		g.Expect(d.InfrastructureCluster.GetName()).To(Equal(cur.InfrastructureCluster.GetName()))
		md := d.MachineDeployments["md-0"]
		g.Expect(md.Object.Name).To(Equal(cur.MachineDeployments["md-0"].Object.Name))
		g.Expect(nested(t, md.InfrastructureMachineTemplate, "spec", "template", "spec", "customImage")).To(Equal("v0.2.0"))
		g.Expect(md.InfrastructureMachineTemplate.GetName()).NotTo(Equal(cur.MachineDeployments["md-0"].InfrastructureMachineTemplate.GetName()), "rotated")
	})
	t.Run("the Pod Security Standard patch writes the v1beta1 configuration below Kubernetes 1.25", func(t *testing.T) {
		g := NewWithT(t)
		class := withPatches(t, `
- name: podSecurityStandard
  required: false
  schema:
    openAPIV3Schema:
      type: object
      default: {}
      properties:
        enabled: {type: boolean, default: true}
        enforce: {type: string, default: baseline}`, `
- name: podSecurityStandard
  enabledIf: "{{ .podSecurityStandard.enabled }}"
  definitions:
    - `+kcpSelector[7:]+`
      jsonPatches:
      - op: add
        path: /spec/template/spec/kubeadmConfigSpec/files
        valueFrom:
          template: |
            - content: |
                apiVersion: pod-security.admission.config.k8s.io/v1{{ if semverCompare "< v1.25" .builtin.controlPlane.version }}beta1{{ end }}
                kind: PodSecurityConfiguration
              path: /etc/kubernetes/kube-apiserver-admission-pss.yaml`)
		for version, want := range map[string]string{"v1.24.9": "pod-security.admission.config.k8s.io/v1beta1", "v1.25.0": "pod-security.admission.config.k8s.io/v1"} {
			cluster := mustCluster(t, bookCluster)
			cluster.Spec.Topology.Version = version
			d := compute(t, blueprint(t, class), &Current{Cluster: cluster})
			files := nested(t, d.ControlPlane.Object, "spec", "kubeadmConfigSpec", "files").([]any)
			var config map[string]any
			g.Expect(yaml.Unmarshal([]byte(files[0].(map[string]any)["content"].(string)), &config)).To(Succeed())
			g.Expect(config["apiVersion"]).To(Equal(want), version)
		}
	})
}
