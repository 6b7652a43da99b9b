package topology

import (
	"context"
	"encoding/json"
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
)

// machinePoolClass adds a MachinePool class "default-worker" to the book's class.
const machinePoolClass = `
- class: default-worker
  namingStrategy:
    template: '{{ .cluster.name }}-pool-{{ .machinePool.topologyName }}-{{ .random }}'
  template:
    metadata:
      labels: {fromClass: "yes"}
    bootstrap:
      ref:
        apiVersion: bootstrap.cluster.x-k8s.io/v1beta1
        kind: KubeadmConfigTemplate
        name: docker-clusterclass-v0.1.0-default-worker-pool
        namespace: default
    infrastructure:
      ref:
        apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
        kind: DockerMachinePoolTemplate
        name: docker-clusterclass-v0.1.0-default-worker-machinepooltemplate
        namespace: default
`

// withMachinePools returns class with machinePoolClass.
func withMachinePools(t testing.TB, class *clusterv1.ClusterClass) *clusterv1.ClusterClass {
	t.Helper()
	if err := yaml.UnmarshalStrict([]byte(machinePoolClass), &class.Spec.Workers.MachinePools); err != nil {
		t.Fatal(err)
	}
	return class
}

// TestBuiltinVariables checks every builtin variable of the book (and upstream v1.10's additions:
// uid, metadata, classNamespace), by copying "builtin" as a whole into each template with a patch.
func TestBuiltinVariables(t *testing.T) {
	g := NewWithT(t)
	dump := func(kind, apiVersion, match string) string {
		return `
    - selector:
        apiVersion: ` + apiVersion + `
        kind: ` + kind + `
        matchResources:
` + match + `
      jsonPatches:
      - op: add
        path: /spec/template/spec/builtin
        valueFrom:
          template: '{{ toJson .builtin }}'`
	}
	class := withMachinePools(t, withPatches(t, "", `
- name: dump
  definitions:`+
		dump("DockerClusterTemplate", "infrastructure.cluster.x-k8s.io/v1beta1", "          infrastructureCluster: true")+
		dump("KubeadmControlPlaneTemplate", "controlplane.cluster.x-k8s.io/v1beta1", "          controlPlane: true")+
		dump("DockerMachineTemplate", "infrastructure.cluster.x-k8s.io/v1beta1", "          controlPlane: true\n          machineDeploymentClass: {names: [default-worker]}")+
		dump("DockerMachinePoolTemplate", "infrastructure.cluster.x-k8s.io/v1beta1", "          machinePoolClass: {names: [default-worker]}")))
	cluster := mustCluster(t, bookCluster)
	cluster.Labels = map[string]string{"env": "prod"}
	cluster.Annotations = map[string]string{"note": "x"}
	cluster.Spec.ClusterNetwork = &clusterv1.ClusterNetwork{
		ServiceDomain: "cluster.local",
		Services:      &clusterv1.NetworkRanges{CIDRBlocks: []string{"10.128.0.0/12"}},
		Pods:          &clusterv1.NetworkRanges{CIDRBlocks: []string{"192.168.0.0/16", "fd00:100::/48"}},
	}
	cluster.Spec.Topology.Workers.MachinePools = []clusterv1.MachinePoolTopology{{Class: "default-worker", Name: "mp-0", Replicas: ptrInt32(2),
		Metadata: clusterv1.ObjectMeta{Annotations: map[string]string{"mpAnnotation": "v"}}}}
	bp := blueprint(t, class)
	first := compute(t, bp, &Current{Cluster: cluster})
	d := compute(t, bp, asCurrent(t, cluster, first))

	builtin := func(obj *unstructured.Unstructured) string {
		var v any
		switch obj.GetKind() {
		case "KubeadmControlPlane", "DockerCluster", "DockerMachinePool":
			v = nested(t, obj, "spec", "builtin")
		default:
			v = nested(t, obj, "spec", "template", "spec", "builtin")
		}
		// The names of templates are those before this computation rotated them (the builtins are computed
		// first, upstream's too): checked apart, as names of the Cluster's.
		b := v.(map[string]any)
		for _, k := range []string{"controlPlane", "machineDeployment", "machinePool"} {
			w, ok := b[k].(map[string]any)
			if !ok {
				continue
			}
			if mt, ok := w["machineTemplate"].(map[string]any); ok {
				g.Expect(mt["infrastructureRef"].(map[string]any)["name"]).To(HavePrefix("my-docker-cluster-"))
				delete(w, "machineTemplate")
			}
			for _, ref := range []string{"bootstrap", "infrastructureRef"} {
				r, ok := w[ref].(map[string]any)
				if !ok {
					continue
				}
				if ref == "bootstrap" {
					r = r["configRef"].(map[string]any)
				}
				g.Expect(r["name"]).To(HavePrefix("my-docker-cluster-"))
				delete(w, ref)
			}
		}
		raw, err := json.Marshal(b)
		g.Expect(err).NotTo(HaveOccurred())
		return string(raw)
	}
	clusterBuiltin := `{
	  "name": "my-docker-cluster", "namespace": "default", "uid": "6b1f5b4e-0000-4000-8000-000000000001",
	  "metadata": {"labels": {"env": "prod", "cluster.x-k8s.io/cluster-name": "my-docker-cluster", "topology.cluster.x-k8s.io/owned": ""}, "annotations": {"note": "x"}},
	  "topology": {"version": "v1.22.4", "class": "docker-clusterclass-v0.1.0", "classNamespace": "default"},
	  "network": {"serviceDomain": "cluster.local", "services": ["10.128.0.0/12"], "pods": ["192.168.0.0/16", "fd00:100::/48"], "ipFamily": "DualStack"}
	}`
	g.Expect(builtin(d.InfrastructureCluster)).To(MatchJSON(`{"cluster": ` + clusterBuiltin + `}`))
	cp := d.ControlPlane.Object
	cpBuiltin := `{"cluster": ` + clusterBuiltin + `, "controlPlane": {"name": "` + cp.GetName() + `", "version": "v1.22.4", "replicas": 3,
	  "metadata": {"labels": {"cpLabel": "cpLabelValue", "cluster.x-k8s.io/cluster-name": "my-docker-cluster", "topology.cluster.x-k8s.io/owned": ""},
	               "annotations": {"cpAnnotation": "cpAnnotationValue", "cluster.x-k8s.io/cloned-from-name": "docker-clusterclass-v0.1.0",
	                               "cluster.x-k8s.io/cloned-from-groupkind": "KubeadmControlPlaneTemplate.controlplane.cluster.x-k8s.io"}}}}`
	g.Expect(builtin(cp)).To(MatchJSON(cpBuiltin))
	g.Expect(builtin(d.ControlPlane.InfrastructureMachineTemplate)).To(MatchJSON(cpBuiltin))
	md := d.MachineDeployments["md-0"]
	g.Expect(builtin(md.InfrastructureMachineTemplate)).To(MatchJSON(`{"cluster": ` + clusterBuiltin + `, "machineDeployment": {
	  "name": "` + md.Object.Name + `", "class": "default-worker", "topologyName": "md-0", "version": "v1.22.4", "replicas": 4,
	  "metadata": {"labels": {"mdLabel": "mdLabelValue", "cluster.x-k8s.io/cluster-name": "my-docker-cluster", "topology.cluster.x-k8s.io/owned": "",
	               "topology.cluster.x-k8s.io/deployment-name": "md-0"}, "annotations": {"mdAnnotation": "mdAnnotationValue"}}}}`))
	mp := d.MachinePools["mp-0"]
	g.Expect(builtin(mp.InfrastructureMachinePoolObject)).To(MatchJSON(`{"cluster": ` + clusterBuiltin + `, "machinePool": {
	  "name": "` + mp.Object.Name + `", "class": "default-worker", "topologyName": "mp-0", "version": "v1.22.4", "replicas": 2,
	  "metadata": {"labels": {"fromClass": "yes", "cluster.x-k8s.io/cluster-name": "my-docker-cluster", "topology.cluster.x-k8s.io/owned": "",
	               "topology.cluster.x-k8s.io/pool-name": "mp-0"}, "annotations": {"mpAnnotation": "v"}}}}`))
}

func ptrInt32(n int32) *int32 { return &n }

func TestIPFamily(t *testing.T) {
	tests := []struct {
		name           string
		pods, services []string
		want           string
	}{
		{"no CIDR blocks", nil, nil, "IPv4"},
		{"IPv4", []string{"192.168.0.0/16"}, []string{"10.128.0.0/12"}, "IPv4"},
		{"IPv6", []string{"fd00:100::/48"}, []string{"fd00:200::/108"}, "IPv6"},
		{"dual-stack pods", []string{"192.168.0.0/16", "fd00:100::/48"}, []string{"10.128.0.0/12"}, "DualStack"},
		{"services only", nil, []string{"fd00:200::/108"}, "IPv6"},
		{"pods only", []string{"192.168.0.0/16"}, nil, "IPv4"},
		{"pods and services disagree", []string{"192.168.0.0/16"}, []string{"fd00:200::/108"}, "Invalid"},
		{"not a CIDR", []string{"nope"}, nil, "Invalid"},
		{"three CIDR blocks", []string{"10.0.0.0/8", "11.0.0.0/8", "12.0.0.0/8"}, nil, "Invalid"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := &clusterv1.ClusterNetwork{}
			if tt.pods != nil {
				n.Pods = &clusterv1.NetworkRanges{CIDRBlocks: tt.pods}
			}
			if tt.services != nil {
				n.Services = &clusterv1.NetworkRanges{CIDRBlocks: tt.services}
			}
			if got := ipFamily(n); got != tt.want {
				t.Errorf("ipFamily = %s, want %s", got, tt.want)
			}
		})
	}
}

// TestMachinePoolTopology: a MachinePool of the topology, with its bootstrap config and InfraMachinePool
// made from the class's templates, its naming strategy, metadata, patches and its place in an upgrade.
func TestMachinePoolTopology(t *testing.T) {
	g := NewWithT(t)
	class := withMachinePools(t, withPatches(t, "", `
- name: pool
  definitions:
    - selector:
        apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
        kind: DockerMachinePoolTemplate
        matchResources:
          machinePoolClass: {names: ["default-*"]}
      jsonPatches:
      - op: add
        path: /spec/template/spec/template/customImage
        valueFrom:
          template: 'kindest/node:{{ .builtin.machinePool.version }}'
    - selector:
        apiVersion: bootstrap.cluster.x-k8s.io/v1beta1
        kind: KubeadmConfigTemplate
        matchResources:
          machinePoolClass: {names: [default-worker]}
      jsonPatches:
      - op: add
        path: /spec/template/spec/joinConfiguration/nodeRegistration/name
        value: pool-node`))
	cluster := mustCluster(t, bookCluster)
	cluster.Spec.Topology.Version = "v1.30.0"
	cluster.Spec.Topology.Workers.MachinePools = []clusterv1.MachinePoolTopology{{Class: "default-worker", Name: "mp-0", Replicas: ptrInt32(3),
		FailureDomains: []string{"fd-1"}, Metadata: clusterv1.ObjectMeta{Labels: map[string]string{"mpLabel": "yes"},
			Annotations: map[string]string{clusterv1.ClusterTopologyDeferUpgradeAnnotation: "", "kept": "yes"}}}}
	bp := blueprint(t, class)

	first := compute(t, bp, &Current{Cluster: cluster})
	g.Expect(first.MachinePools).To(BeEmpty(), "created once the control plane is initialized")
	g.Expect(first.Upgrade.MachinePoolsPendingCreate).To(Equal([]string{"mp-0"}))
	cur := apply(t, &Current{Cluster: cluster}, first, true)
	d := compute(t, bp, cur)
	mp := d.MachinePools["mp-0"]
	g.Expect(mp).NotTo(BeNil())
	g.Expect(mp.Object.Name).To(MatchRegexp(`^my-docker-cluster-pool-mp-0-[a-z0-9]{5}$`), "the class's naming strategy with .machinePool.topologyName")
	g.Expect(mp.Object.Spec.Replicas).To(Equal(ptrInt32(3)))
	g.Expect(mp.Object.Spec.FailureDomains).To(Equal([]string{"fd-1"}))
	g.Expect(*mp.Object.Spec.Template.Spec.Version).To(Equal("v1.30.0"))
	g.Expect(mp.Object.Labels).To(And(HaveKeyWithValue("mpLabel", "yes"), HaveKeyWithValue("fromClass", "yes"),
		HaveKeyWithValue(clusterv1.ClusterTopologyMachinePoolNameLabel, "mp-0"), HaveKey(clusterv1.ClusterTopologyOwnedLabel)))
	g.Expect(mp.Object.Annotations).To(Equal(map[string]string{"kept": "yes"}), "the upgrade annotations stay on the topology")

	bootstrap, infra := mp.BootstrapObject, mp.InfrastructureMachinePoolObject
	g.Expect(bootstrap.GetKind()).To(Equal("KubeadmConfig"))
	g.Expect(infra.GetKind()).To(Equal("DockerMachinePool"))
	for _, o := range []*unstructured.Unstructured{bootstrap, infra} {
		g.Expect(o.GetName()).To(HavePrefix("my-docker-cluster-mp-0-"))
		g.Expect(o.GetLabels()).To(HaveKeyWithValue(clusterv1.ClusterTopologyMachinePoolNameLabel, "mp-0"))
		g.Expect(o.GetOwnerReferences()).To(HaveLen(1))
		g.Expect(o.GetOwnerReferences()[0].Kind).To(Equal("Cluster"))
	}
	g.Expect(mp.Object.Spec.Template.Spec.Bootstrap.ConfigRef.Name).To(Equal(bootstrap.GetName()))
	g.Expect(mp.Object.Spec.Template.Spec.InfrastructureRef.Name).To(Equal(infra.GetName()))
	g.Expect(nested(t, bootstrap, "spec", "joinConfiguration", "nodeRegistration", "name")).To(Equal("pool-node"))
	g.Expect(nested(t, infra, "spec", "template", "customImage")).To(Equal("kindest/node:v1.30.0"))

	// The pool is upgraded after the control plane (and is deferred while annotated).
	cur = apply(t, cur, d, true)
	cur.Cluster.Spec.Topology.Version = "v1.31.0"
	d = compute(t, bp, cur)
	g.Expect(cpVersion(t, d)).To(Equal("v1.31.0"))
	g.Expect(*d.MachinePools["mp-0"].Object.Spec.Template.Spec.Version).To(Equal("v1.30.0"))
	g.Expect(d.MachinePools["mp-0"].Held).To(BeTrue())
	cur = apply(t, cur, d, true)
	d = compute(t, bp, cur)
	g.Expect(d.Upgrade.MachinePoolsDeferred).To(Equal([]string{mp.Object.Name}))
	cur.Cluster.Spec.Topology.Workers.MachinePools[0].Metadata.Annotations = nil
	d = compute(t, bp, cur)
	g.Expect(*d.MachinePools["mp-0"].Object.Spec.Template.Spec.Version).To(Equal("v1.31.0"))
	g.Expect(d.Upgrade.MachinePoolsUpgrading).To(Equal([]string{mp.Object.Name}))
	g.Expect(nested(t, d.MachinePools["mp-0"].InfrastructureMachinePoolObject, "spec", "template", "customImage")).To(Equal("kindest/node:v1.31.0"))
	g.Expect(d.MachinePools["mp-0"].BootstrapObject.GetName()).To(Equal(bootstrap.GetName()), "the pool's objects are changed in place")

	// While the pool rolls out, the control plane takes no new version.
	cur = apply(t, cur, d, true, "mp-0")
	cur.Cluster.Spec.Topology.Version = "v1.32.0"
	d = compute(t, bp, cur)
	g.Expect(cpVersion(t, d)).To(Equal("v1.31.0"))
	g.Expect(d.Upgrade.ControlPlaneWaitingFor).To(Equal("MachinePool(s) " + mp.Object.Name + " not on version v1.31.0 yet or still upgrading"))
}

// TestDefinitionFromInPatches: with the book's conflicting http-proxy definitions, inline patches see the
// value set for the inline definition and an external patch the one for its own definition.
func TestDefinitionFromInPatches(t *testing.T) {
	g := NewWithT(t)
	class := withPatches(t, `
- name: http-proxy
  required: false
  schema:
    openAPIV3Schema: {type: string}`, `
- name: inline-proxy
  definitions:
    - `+workerSelector[7:]+`
      jsonPatches:
      - op: add
        path: /spec/template/spec/proxy
        valueFrom:
          variable: http-proxy
- name: lbImageRepository
  external:
    generateExtension: generate.my-extension`)
	class.Status.Variables = []clusterv1.ClusterClassStatusVariable{{
		Name: "http-proxy", DefinitionsConflict: true,
		Definitions: []clusterv1.ClusterClassStatusVariableDefinition{
			{From: "inline", Schema: class.Spec.Variables[0].Schema},
			{From: "lbImageRepository", Schema: clusterv1.VariableSchema{OpenAPIV3Schema: clusterv1.JSONSchemaProps{Type: "object",
				Properties: map[string]clusterv1.JSONSchemaProps{"host": {Type: "string"}, "port": {Type: "integer"}}}}},
		},
	}}
	cluster := mustCluster(t, bookCluster)
	cluster.Spec.Topology.Variables = []clusterv1.ClusterVariable{
		{Name: "http-proxy", DefinitionFrom: "inline", Value: jsonValue(`"http://proxy.example2.com:1234"`)},
		{Name: "http-proxy", DefinitionFrom: "lbImageRepository", Value: jsonValue(`{"host":"proxy.example2.com","port":1234}`)},
	}
	f := &fakeExternalPatcher{}
	bp := blueprint(t, class)
	first, err := Compute(context.Background(), bp, &Current{Cluster: cluster}, Options{ExternalPatcher: f})
	g.Expect(err).NotTo(HaveOccurred())
	d, err := Compute(context.Background(), bp, asCurrent(t, cluster, first), Options{ExternalPatcher: f})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(nested(t, d.MachineDeployments["md-0"].InfrastructureMachineTemplate, "spec", "template", "spec", "proxy")).To(Equal("http://proxy.example2.com:1234"))
	last := f.requests[len(f.requests)-1]
	g.Expect(string(last.Variables["http-proxy"].Raw)).To(MatchJSON(`{"host":"proxy.example2.com","port":1234}`))

	// Without definitionFrom the conflicting variable is refused.
	cluster.Spec.Topology.Variables = []clusterv1.ClusterVariable{{Name: "http-proxy", Value: jsonValue(`"x"`)}}
	_, err = Compute(context.Background(), bp, &Current{Cluster: cluster}, Options{ExternalPatcher: f})
	g.Expect(err).To(MatchError(ContainSubstring(`variable "http-proxy" has conflicting definitions`)))
}

// TestPatchesChangeOnlyTheTemplateSpec: what a patch writes outside spec.template.spec of a template is
// dropped, as upstream's.
func TestPatchesChangeOnlyTheTemplateSpec(t *testing.T) {
	g := NewWithT(t)
	class := withPatches(t, "", `
- name: outside
  definitions:
    - `+workerSelector[7:]+`
      jsonPatches:
      - op: add
        path: /spec/template/metadata
        value: {labels: {patched: "yes"}}
      - op: add
        path: /spec/other
        value: x
      - op: add
        path: /spec/template/spec/inside
        value: inside`)
	d, err := computeReady(t, class, mustCluster(t, bookCluster))
	g.Expect(err).NotTo(HaveOccurred())
	tmpl := d.MachineDeployments["md-0"].InfrastructureMachineTemplate
	g.Expect(nested(t, tmpl, "spec", "template", "spec", "inside")).To(Equal("inside"))
	_, found, _ := unstructured.NestedFieldNoCopy(tmpl.Object, "spec", "other")
	g.Expect(found).To(BeFalse())
	_, found, _ = unstructured.NestedFieldNoCopy(tmpl.Object, "spec", "template", "metadata")
	g.Expect(found).To(BeFalse())
}
