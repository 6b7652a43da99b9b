package topology

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
)

func jsonValue(s string) apiextensionsv1.JSON { return apiextensionsv1.JSON{Raw: []byte(s)} }

// withPatches returns the book class with variables and patches (YAML lists) added.
func withPatches(t *testing.T, vars, patches string) *clusterv1.ClusterClass {
	t.Helper()
	class := mustClass(t, bookClass)
	if vars != "" {
		if err := yaml.UnmarshalStrict([]byte(vars), &class.Spec.Variables); err != nil {
			t.Fatal(err)
		}
	}
	if err := yaml.UnmarshalStrict([]byte(patches), &class.Spec.Patches); err != nil {
		t.Fatal(err)
	}
	return class
}

// computeReady computes the state of a Cluster whose control plane is initialized, so that
// MachineDeployments exist.
func computeReady(t *testing.T, class *clusterv1.ClusterClass, cluster *clusterv1.Cluster) (*Desired, error) {
	t.Helper()
	bp := blueprint(t, class)
	first, err := Compute(context.Background(), bp, &Current{Cluster: cluster}, Options{})
	if err != nil {
		return nil, err
	}
	return Compute(context.Background(), bp, asCurrent(t, cluster, first), Options{})
}

const kcpSelector = `
      selector:
        apiVersion: controlplane.cluster.x-k8s.io/v1beta1
        kind: KubeadmControlPlaneTemplate
        matchResources:
          controlPlane: true`

const workerSelector = `
      selector:
        apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
        kind: DockerMachineTemplate
        matchResources:
          machineDeploymentClass:
            names:
            - default-worker`

func TestInlinePatchesFromTheBook(t *testing.T) {
	type check struct {
		obj   string // cp, cpInfra, infra, md0, md1 (infrastructure), md0boot
		path  []string
		value any // nil: the field must be absent
	}
	tests := []struct {
		name      string
		vars      string
		patches   string
		variables map[string]string
		overrides map[string]map[string]string // per MD topology name
		checks    []check
		wantErr   string
	}{
		{
			name: "imageRepository from a variable with a default",
			vars: `
- name: imageRepository
  required: true
  schema:
    openAPIV3Schema:
      type: string
      default: registry.k8s.io`,
			patches: `
- name: imageRepository
  definitions:
    - ` + kcpSelector[7:] + `
      jsonPatches:
      - op: add
        path: /spec/template/spec/kubeadmConfigSpec/clusterConfiguration/imageRepository
        valueFrom:
          variable: imageRepository`,
			checks: []check{{"cp", []string{"spec", "kubeadmConfigSpec", "clusterConfiguration", "imageRepository"}, "registry.k8s.io"}},
		},
		{
			name: "imageRepository set in the Cluster",
			vars: `
- name: imageRepository
  required: true
  schema:
    openAPIV3Schema:
      type: string
      default: registry.k8s.io`,
			patches: `
- name: imageRepository
  definitions:
    - ` + kcpSelector[7:] + `
      jsonPatches:
      - op: add
        path: /spec/template/spec/kubeadmConfigSpec/clusterConfiguration/imageRepository
        valueFrom:
          variable: imageRepository`,
			variables: map[string]string{"imageRepository": `"my.custom.registry"`},
			checks:    []check{{"cp", []string{"spec", "kubeadmConfigSpec", "clusterConfiguration", "imageRepository"}, "my.custom.registry"}},
		},
		{
			name: "MachineDeployment variable overrides",
			vars: `
- name: workerMachineType
  required: true
  schema:
    openAPIV3Schema:
      type: string
      default: t3.large`,
			patches: `
- name: workerMachineType
  definitions:
    - ` + workerSelector[7:] + `
      jsonPatches:
      - op: add
        path: /spec/template/spec/instanceType
        valueFrom:
          variable: workerMachineType`,
			variables: map[string]string{"workerMachineType": `"t3.large"`},
			overrides: map[string]map[string]string{"md-0": {"workerMachineType": `"t3.small"`}},
			checks: []check{
				{"md0", []string{"spec", "template", "spec", "instanceType"}, "t3.small"},
				{"md1", []string{"spec", "template", "spec", "instanceType"}, "t3.large"},
				{"cpInfra", []string{"spec", "template", "spec", "instanceType"}, nil},
			},
		},
		{
			name: "builtin variable",
			patches: `
- name: clusterName
  definitions:
    - ` + kcpSelector[7:] + `
      jsonPatches:
      - op: add
        path: /spec/template/spec/kubeadmConfigSpec/clusterConfiguration/controllerManager/extraArgs/cluster-name
        valueFrom:
          variable: builtin.cluster.name`,
			checks: []check{{"cp", []string{"spec", "kubeadmConfigSpec", "clusterConfiguration", "controllerManager", "extraArgs", "cluster-name"}, "my-docker-cluster"}},
		},
		{
			name: "image from the MachineDeployment version (template)",
			patches: `
- name: customImage
  description: "Sets the container image that is used for running dockerMachines."
  definitions:
    - ` + workerSelector[7:] + `
      jsonPatches:
      - op: add
        path: /spec/template/spec/customImage
        valueFrom:
          template: |
            kindest/node:{{ .builtin.machineDeployment.version }}`,
			checks: []check{{"md0", []string{"spec", "template", "spec", "customImage"}, "kindest/node:v1.22.4"}},
		},
		{
			name: "complex variables: fields, map lookups, arrays and indexes",
			vars: `
- name: httpProxy
  schema:
    openAPIV3Schema:
      type: object
      properties:
        url:
          type: string
        noProxy:
          type: string
- name: mdConfig
  schema:
    openAPIV3Schema:
      type: object
      additionalProperties:
        type: object
        properties:
          osImage:
            type: string
- name: dnsServers
  schema:
    openAPIV3Schema:
      type: array
      items:
        type: string`,
			patches: `
- name: complex
  definitions:
    - ` + workerSelector[7:] + `
      jsonPatches:
      - op: add
        path: /spec/template/spec/httpProxy
        value: {}
      - op: add
        path: /spec/template/spec/httpProxy/url
        valueFrom:
          variable: httpProxy.url
      - op: add
        path: /spec/template/spec/customImage
        valueFrom:
          template: "{{ (index .mdConfig .builtin.machineDeployment.class).osImage }}"
      - op: add
        path: /spec/template/spec/dnsServers
        valueFrom:
          variable: dnsServers
      - op: add
        path: /spec/template/spec/dnsServer
        valueFrom:
          variable: dnsServers[0]`,
			variables: map[string]string{
				"httpProxy":  `{"url":"http://proxy:3128","noProxy":"10.0.0.0/8"}`,
				"mdConfig":   `{"default-worker":{"osImage":"ubuntu-2204"}}`,
				"dnsServers": `["1.1.1.1","8.8.8.8"]`,
			},
			checks: []check{
				{"md0", []string{"spec", "template", "spec", "httpProxy", "url"}, "http://proxy:3128"},
				{"md0", []string{"spec", "template", "spec", "customImage"}, "ubuntu-2204"},
				{"md0", []string{"spec", "template", "spec", "dnsServers"}, []any{"1.1.1.1", "8.8.8.8"}},
				{"md0", []string{"spec", "template", "spec", "dnsServer"}, "1.1.1.1"},
			},
		},
		{
			name: "template rendered as YAML, and a hard-coded value",
			vars: `
- name: etcdImageTag
  schema:
    openAPIV3Schema:
      type: string`,
			patches: `
- name: etcdImageTag
  definitions:
    - ` + kcpSelector[7:] + `
      jsonPatches:
      - op: add
        path: /spec/template/spec/kubeadmConfigSpec/clusterConfiguration/etcd
        valueFrom:
          template: |
            local:
              imageTag: {{ .etcdImageTag }}
- name: imageRepository
  definitions:
    - ` + kcpSelector[7:] + `
      jsonPatches:
      - op: add
        path: /spec/template/spec/kubeadmConfigSpec/clusterConfiguration/imageRepository
        value: "my.custom.registry"`,
			variables: map[string]string{"etcdImageTag": `"3.5.1-0"`},
			checks: []check{
				{"cp", []string{"spec", "kubeadmConfigSpec", "clusterConfiguration", "etcd"}, map[string]any{"local": map[string]any{"imageTag": "3.5.1-0"}}},
				{"cp", []string{"spec", "kubeadmConfigSpec", "clusterConfiguration", "imageRepository"}, "my.custom.registry"},
			},
		},
		{
			name: "defaulting in a template",
			vars: `
- name: vnetName
  schema:
    openAPIV3Schema:
      type: string`,
			patches: `
- name: vnet
  definitions:
    - selector:
        apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
        kind: DockerClusterTemplate
        matchResources:
          infrastructureCluster: true
      jsonPatches:
      - op: add
        path: /spec/template/spec/vnetName
        valueFrom:
          template: "{{ if .vnetName }}{{.vnetName}}{{else}}{{.builtin.cluster.name}}-vnet{{end}}"`,
			checks: []check{{"infra", []string{"spec", "vnetName"}, "my-docker-cluster-vnet"}},
		},
		{
			name: "sprig's hermetic functions",
			patches: `
- name: upper
  definitions:
    - ` + kcpSelector[7:] + `
      jsonPatches:
      - op: add
        path: /spec/template/spec/kubeadmConfigSpec/clusterConfiguration/clusterName
        valueFrom:
          template: '{{ .builtin.cluster.name | upper | trunc 9 }}'`,
			checks: []check{{"cp", []string{"spec", "kubeadmConfigSpec", "clusterConfiguration", "clusterName"}, "MY-DOCKER"}},
		},
		{
			name: "non-hermetic sprig functions are refused",
			patches: `
- name: random
  definitions:
    - ` + kcpSelector[7:] + `
      jsonPatches:
      - op: add
        path: /spec/template/spec/x
        valueFrom:
          template: '{{ randAlpha 5 }}'`,
			wantErr: `function "randAlpha" not defined`,
		},
		{
			name: "adding to an existing array, and replace and remove",
			patches: `
- name: add file
  definitions:
    - selector:
        apiVersion: bootstrap.cluster.x-k8s.io/v1beta1
        kind: KubeadmConfigTemplate
        matchResources:
          machineDeploymentClass:
            names: ["*"]
      jsonPatches:
      - op: add
        path: /spec/template/spec/files/-
        value:
          content: Some content.
          path: /some/file
      - op: replace
        path: /spec/template/spec/joinConfiguration/nodeRegistration
        value: {name: node}
      - op: remove
        path: /spec/template/spec/joinConfiguration/nodeRegistration/name`,
			checks: []check{
				{"md0boot", []string{"spec", "template", "spec", "files"}, []any{
					map[string]any{"content": "Some other content", "path": "/some/other/file"},
					map[string]any{"content": "Some content.", "path": "/some/file"},
				}},
				{"md0boot", []string{"spec", "template", "spec", "joinConfiguration", "nodeRegistration"}, map[string]any{}},
			},
		},
		{
			name: "adding below a missing field fails with the template named",
			patches: `
- name: missing parent
  definitions:
    - ` + kcpSelector[7:] + `
      jsonPatches:
      - op: add
        path: /spec/template/spec/nope/deeper
        value: x`,
			wantErr: `patch "missing parent": applying to KubeadmControlPlaneTemplate`,
		},
		{
			name: "selector names with prefix and suffix wildcards",
			patches: `
- name: prefix
  definitions:
    - selector:
        apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
        kind: DockerMachineTemplate
        matchResources:
          machineDeploymentClass:
            names: ["default-*"]
      jsonPatches:
      - op: add
        path: /spec/template/spec/prefix
        value: "yes"
- name: suffix
  definitions:
    - selector:
        apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
        kind: DockerMachineTemplate
        matchResources:
          machineDeploymentClass:
            names: ["*-worker"]
      jsonPatches:
      - op: add
        path: /spec/template/spec/suffix
        value: "yes"
- name: other
  definitions:
    - selector:
        apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
        kind: DockerMachineTemplate
        matchResources:
          machineDeploymentClass:
            names: ["other"]
      jsonPatches:
      - op: add
        path: /spec/template/spec/other
        value: "yes"`,
			checks: []check{
				{"md0", []string{"spec", "template", "spec", "prefix"}, "yes"},
				{"md0", []string{"spec", "template", "spec", "suffix"}, "yes"},
				{"md0", []string{"spec", "template", "spec", "other"}, nil},
				{"cpInfra", []string{"spec", "template", "spec", "prefix"}, nil},
			},
		},
		{
			name: "the control plane selector also matches its machine template",
			patches: `
- name: cpMachine
  definitions:
    - selector:
        apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
        kind: DockerMachineTemplate
        matchResources:
          controlPlane: true
      jsonPatches:
      - op: add
        path: /spec/template/spec/customImage
        valueFrom:
          template: "kindest/node:{{ .builtin.controlPlane.version }}"`,
			checks: []check{
				{"cpInfra", []string{"spec", "template", "spec", "customImage"}, "kindest/node:v1.22.4"},
				{"md0", []string{"spec", "template", "spec", "customImage"}, nil},
			},
		},
		{
			name: "a patch cannot change what the topology sets on the control plane",
			patches: `
- name: version
  definitions:
    - ` + kcpSelector[7:] + `
      jsonPatches:
      - op: add
        path: /spec/template/spec/version
        value: v1.0.0`,
			checks: []check{{"cp", []string{"spec", "version"}, "v1.22.4"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			class := withPatches(t, tt.vars, tt.patches)
			cluster := mustCluster(t, bookCluster)
			cluster.Spec.Topology.Workers.MachineDeployments = append(cluster.Spec.Topology.Workers.MachineDeployments,
				clusterv1.MachineDeploymentTopology{Class: "default-worker", Name: "md-1"})
			for name, v := range tt.variables {
				cluster.Spec.Topology.Variables = append(cluster.Spec.Topology.Variables, clusterv1.ClusterVariable{Name: name, Value: jsonValue(v)})
			}
			for i, md := range cluster.Spec.Topology.Workers.MachineDeployments {
				for name, v := range tt.overrides[md.Name] {
					if md.Variables == nil {
						cluster.Spec.Topology.Workers.MachineDeployments[i].Variables = &clusterv1.MachineDeploymentVariables{}
					}
					o := cluster.Spec.Topology.Workers.MachineDeployments[i].Variables
					o.Overrides = append(o.Overrides, clusterv1.ClusterVariable{Name: name, Value: jsonValue(v)})
				}
			}
			d, err := computeReady(t, class, cluster)
			if tt.wantErr != "" {
				g.Expect(err).To(MatchError(ContainSubstring(tt.wantErr)))
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			objs := map[string]map[string]any{
				"cp":      d.ControlPlane.Object.Object,
				"cpInfra": d.ControlPlane.InfrastructureMachineTemplate.Object,
				"infra":   d.InfrastructureCluster.Object,
				"md0":     d.MachineDeployments["md-0"].InfrastructureMachineTemplate.Object,
				"md1":     d.MachineDeployments["md-1"].InfrastructureMachineTemplate.Object,
				"md0boot": d.MachineDeployments["md-0"].BootstrapTemplate.Object,
			}
			for _, c := range tt.checks {
				v, found := lookupPath(objs[c.obj], c.path)
				if c.value == nil {
					g.Expect(found).To(BeFalse(), "%s %v", c.obj, c.path)
					continue
				}
				g.Expect(found).To(BeTrue(), "%s %v", c.obj, c.path)
				g.Expect(v).To(Equal(c.value), "%s %v", c.obj, c.path)
			}
		})
	}
}

func lookupPath(obj map[string]any, path []string) (any, bool) {
	var cur any = obj
	for _, p := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[p]; !ok {
			return nil, false
		}
	}
	return cur, true
}

func TestEnabledIfFromTheBook(t *testing.T) {
	vars := `
- name: httpProxy
  schema:
    openAPIV3Schema:
      type: string
- name: httpProxyEnabled
  schema:
    openAPIV3Schema:
      type: boolean
      default: false
- name: proxy
  schema:
    openAPIV3Schema:
      type: object
      properties:
        enabled:
          type: boolean`
	tests := []struct {
		name      string
		enabledIf string
		variables map[string]string
		version   string
		want      bool
	}{
		{"set variable enables", `"{{ if .httpProxy }}true{{end}}"`, map[string]string{"httpProxy": `"http://proxy"`}, "", true},
		{"unset variable disables", `"{{ if .httpProxy }}true{{end}}"`, nil, "", false},
		{"empty variable disables", `"{{ if .httpProxy }}true{{end}}"`, map[string]string{"httpProxy": `""`}, "", false},
		{"hard-coded false", `false`, nil, "", false},
		{"boolean variable, default false", `"{{ .httpProxyEnabled }}"`, nil, "", false},
		{"boolean variable set", `"{{ .httpProxyEnabled }}"`, map[string]string{"httpProxyEnabled": `true`}, "", true},
		{"boolean field of an object", `"{{ .proxy.enabled }}"`, map[string]string{"proxy": `{"enabled":true}`}, "", true},
		{"semverCompare on the control plane version, equal", `'{{ semverCompare "1.21.1" .builtin.controlPlane.version }}'`, nil, "v1.21.1", true},
		{"semverCompare on the control plane version, other", `'{{ semverCompare "1.21.1" .builtin.controlPlane.version }}'`, nil, "v1.22.4", false},
		{"semverCompare with coalesce", `'{{ semverCompare "^1.22.0" (coalesce .builtin.controlPlane.version .builtin.machineDeployment.version )}}'`, nil, "v1.22.4", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			class := withPatches(t, vars, `
- name: httpProxy
  enabledIf: `+tt.enabledIf+`
  definitions:
    - `+kcpSelector[7:]+`
      jsonPatches:
      - op: add
        path: /spec/template/spec/patched
        value: "yes"`)
			cluster := mustCluster(t, bookCluster)
			if tt.version != "" {
				cluster.Spec.Topology.Version = tt.version
			}
			for name, v := range tt.variables {
				cluster.Spec.Topology.Variables = append(cluster.Spec.Topology.Variables, clusterv1.ClusterVariable{Name: name, Value: jsonValue(v)})
			}
			d, err := computeReady(t, class, cluster)
			g.Expect(err).NotTo(HaveOccurred())
			_, found := lookupPath(d.ControlPlane.Object.Object, []string{"spec", "patched"})
			g.Expect(found).To(Equal(tt.want))
		})
	}
}

type fakeExternalPatcher struct {
	requests  []*ExternalPatchRequest
	validated int
}

func (f *fakeExternalPatcher) GeneratePatches(_ context.Context, req *ExternalPatchRequest) ([]GeneratedPatch, error) {
	f.requests = append(f.requests, req)
	var out []GeneratedPatch
	for _, it := range req.Items {
		if it.Object.GetKind() == "DockerMachineTemplate" && it.HolderReference.Kind == "MachineDeployment" {
			out = append(out, GeneratedPatch{UID: it.UID, PatchType: JSONMergePatchType, Patch: []byte(`{"spec":{"template":{"spec":{"fromExtension":"` + req.Patch.External.Settings["value"] + `"}}}}`)})
		}
	}
	return out, nil
}

func (f *fakeExternalPatcher) ValidateTopology(context.Context, *ExternalPatchRequest) error {
	f.validated++
	return nil
}

func TestExternalPatches(t *testing.T) {
	g := NewWithT(t)
	class := withPatches(t, "", `
- name: external
  external:
    generateExtension: generate.my-extension
    validateExtension: validate.my-extension
    settings:
      value: from-settings
- name: inline-after
  definitions:
    - `+workerSelector[7:]+`
      jsonPatches:
      - op: add
        path: /spec/template/spec/inline
        valueFrom:
          variable: builtin.machineDeployment.topologyName`)
	cluster := mustCluster(t, bookCluster)
	bp := blueprint(t, class)

	_, err := Compute(context.Background(), bp, &Current{Cluster: cluster}, Options{})
	g.Expect(err).To(MatchError(ContainSubstring("external patches are not available here")))

	f := &fakeExternalPatcher{}
	first, err := Compute(context.Background(), bp, &Current{Cluster: cluster}, Options{ExternalPatcher: f})
	g.Expect(err).NotTo(HaveOccurred())
	d, err := Compute(context.Background(), bp, asCurrent(t, cluster, first), Options{ExternalPatcher: f})
	g.Expect(err).NotTo(HaveOccurred())
	md := d.MachineDeployments["md-0"].InfrastructureMachineTemplate
	g.Expect(nested(t, md, "spec", "template", "spec", "fromExtension")).To(Equal("from-settings"))
	g.Expect(nested(t, md, "spec", "template", "spec", "inline")).To(Equal("md-0"))
	g.Expect(f.validated).To(Equal(2))
	last := f.requests[len(f.requests)-1]
	g.Expect(last.Items).NotTo(BeEmpty())
	g.Expect(last.Items[0].HolderReference.FieldPath).To(Equal("spec.infrastructureRef"))
	g.Expect(last.Items[0].Variables).To(HaveKey("builtin"))
}
