package compat

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsvalidation "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"sigs.k8s.io/yaml"

	"github.com/capstan-dev/capstan/config/crd"
)

// v1beta2NotApplicable are the CEL rules capstan's v1beta1 (IPAM: v1alpha1 and v1beta1; runtime: v1alpha1)
// CRDs have beyond upstream v1.10's that the v1beta2 CRDs have no counterpart of, keyed by the v1beta1
// rule's "<crd> <path> (<fieldPath>): <message>" (celRule.key), each with the reason.
var v1beta2NotApplicable = func() map[string]string {
	out := map[string]string{}
	for _, k := range []struct{ crdName, spec string }{
		{"kubeadmconfigs.bootstrap.cluster.x-k8s.io", ".spec"},
		{"kubeadmconfigtemplates.bootstrap.cluster.x-k8s.io", ".spec.template.spec"},
		{"kubeadmcontrolplanes.controlplane.cluster.x-k8s.io", ".spec.kubeadmConfigSpec"},
		{"kubeadmcontrolplanetemplates.controlplane.cluster.x-k8s.io", ".spec.template.spec.kubeadmConfigSpec"},
	} {
		out[k.crdName+" "+k.spec+` (.useExperimentalRetryJoin): not supported when spec.format is set to "ignition"`] =
			"v1beta2 has no useExperimentalRetryJoin"
		out[k.crdName+" "+k.spec+".joinConfiguration.discovery.file.kubeConfig.user: at least one of authProvider or exec must be defined"] =
			"upstream v1.14's v1beta2 schema has minProperties: 1 on user, whose only fields are authProvider and exec"
	}
	const kcp = "kubeadmcontrolplanes.controlplane.cluster.x-k8s.io "
	out[kcp+".spec (.machineTemplate.infrastructureRef): apiVersion, kind and name cannot be empty"] = "v1beta2's " +
		"machineTemplate.spec.infrastructureRef has apiGroup, kind and name, which upstream v1.14's v1beta2 schema " +
		"requires, with minLength 1"
	for _, field := range []string{"networking.serviceSubnet", "networking.podSubnet", "networking.dnsDomain",
		"kubernetesVersion", "clusterName"} {
		out[kcp+".spec (.kubeadmConfigSpec.clusterConfiguration."+field+"): is immutable"] = "v1beta2's " +
			"ClusterConfiguration has no networking, kubernetesVersion and clusterName: the controllers take them " +
			"from the Cluster and the KubeadmControlPlane"
	}
	for _, k := range []struct{ crdName, spec string }{
		{"kubeadmcontrolplanes.controlplane.cluster.x-k8s.io", ".spec"},
		{"kubeadmcontrolplanetemplates.controlplane.cluster.x-k8s.io", ".spec.template.spec"},
	} {
		out[k.crdName+" "+k.spec+".rolloutBefore (.certificatesExpiryDays): must be greater than or equal to 7"] =
			"upstream v1.14's v1beta2 schema has minimum: 7 on rollout.before.certificatesExpiryDays"
	}
	for _, crdName := range []string{"ipaddresses.ipam.cluster.x-k8s.io", "ipaddressclaims.ipam.cluster.x-k8s.io"} {
		out[crdName+" .spec.poolRef: the pool reference needs to contain a group (apiGroup)"] = "upstream v1.14's " +
			"v1beta2 schema requires poolRef.apiGroup, with minLength 1"
	}
	out["ipaddresses.ipam.cluster.x-k8s.io .spec.prefix: prefix cannot be negative"] = "upstream v1.14's v1beta2 " +
		"schema has minimum: 0 on prefix"
	return out
}()

// v1beta2Renames turns the field paths of a v1beta1 rule's key into v1beta2's.
var v1beta2Renames = strings.NewReplacer(
	".rolloutStrategy.", ".rollout.strategy.",
	".rolloutBefore", ".rollout.before",
	".machineNamingStrategy", ".machineNaming",
	".machineTemplate.infrastructureRef", ".machineTemplate.spec.infrastructureRef",
	".machineTemplate.taints", ".machineTemplate.spec.taints",
	".spec.unhealthyMachineConditions", ".spec.checks.unhealthyMachineConditions",
	".machineHealthCheck.unhealthyMachineConditions", ".healthCheck.checks.unhealthyMachineConditions",
)

// TestV1beta2HasTheV1beta1Rules checks that every CEL rule capstan's served versions of the v1beta2 kinds
// have beyond upstream v1.10's (they replace upstream's admission webhooks) has its counterpart in the
// kind's v1beta2 CRD, with the same message at the same place (v1beta2's field names), or is in
// v1beta2NotApplicable: otherwise a v1beta2 write would skip the check.
func TestV1beta2HasTheV1beta1Rules(t *testing.T) {
	g := NewWithT(t)
	upstream, err := LoadDir(upstreamCRDs)
	g.Expect(err).NotTo(HaveOccurred())
	served, err := crd.All()
	g.Expect(err).NotTo(HaveOccurred())

	notApplicableSeen := map[string]bool{}
	extras := 0
	for _, o := range served {
		if !slices.Contains(v1beta2Kinds, o.Name) {
			continue
		}
		u := upstream[o.Name]
		g.Expect(u).NotTo(BeNil(), o.Name)
		v1beta2Rules := celRules(o, "v1beta2")
		for _, v := range o.Spec.Versions {
			if v.Name == "v1beta2" {
				continue // The counterparts themselves.
			}
			upstreamRules := celRules(u, v.Name)
			for _, r := range celRules(o, v.Name) {
				if slices.ContainsFunc(upstreamRules, r.equal) {
					continue
				}
				extras++
				key := o.Name + " " + r.key()
				if reason, ok := v1beta2NotApplicable[key]; ok {
					notApplicableSeen[key] = true
					t.Logf("not applicable in v1beta2: %s %s (%s)", v.Name, key, reason)
					continue
				}
				want := v1beta2Renames.Replace(r.key())
				if !slices.ContainsFunc(v1beta2Rules, func(c celRule) bool { return c.key() == want }) {
					t.Errorf("%s %s: the rule %s has no v1beta2 counterpart %q: add it to the v1beta2 types, or "+
						"to v1beta2NotApplicable with the reason", o.Name, v.Name, r, want)
				}
			}
		}
	}
	t.Logf("%d rules beyond upstream v1.10's in the served versions of the v1beta2 kinds", extras)
	g.Expect(extras).To(BeNumerically(">", 0), "no rule beyond upstream's found: is the comparison broken?")
	for key := range v1beta2NotApplicable {
		if !notApplicableSeen[key] {
			t.Errorf("v1beta2NotApplicable: %s is not a rule of a served version beyond upstream's: remove it", key)
		}
	}
}

// TestV1beta2CRDsAreValid runs the API server's validation of a CRD on the CRDs that serve v1beta2: among
// others, every CEL rule must compile and stay within the cost budget.
func TestV1beta2CRDsAreValid(t *testing.T) {
	g := NewWithT(t)
	served, err := LoadDir(servedCRDs)
	g.Expect(err).NotTo(HaveOccurred())
	for _, name := range v1beta2Kinds {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			v1 := served[name].DeepCopy()
			g.Expect(v1).NotTo(BeNil())
			apiextensionsv1.SetObjectDefaults_CustomResourceDefinition(v1)
			internal := &apiextensions.CustomResourceDefinition{}
			g.Expect(apiextensionsv1.Convert_v1_CustomResourceDefinition_To_apiextensions_CustomResourceDefinition(v1, internal, nil)).To(Succeed())
			g.Expect(apiextensionsvalidation.ValidateCustomResourceDefinition(context.Background(), internal)).To(BeEmpty())
		})
	}
}

// TestV1beta2RulesWork validates v1beta2 objects with the served CRDs' CEL rules offline, as the API server
// does on a create (no old object) or an update: one valid and one invalid object per family of rules. A
// refused field v1beta1 has too is checked in v1beta1 as well (the object's apiVersion names the version).
func TestV1beta2RulesWork(t *testing.T) {
	const (
		kcp = "kubeadmcontrolplanes.controlplane.cluster.x-k8s.io"
		kc  = "kubeadmconfigs.bootstrap.cluster.x-k8s.io"
	)
	kcpObject := func(spec string) string {
		return `
apiVersion: controlplane.cluster.x-k8s.io/v1beta2
kind: KubeadmControlPlane
metadata: {name: cp, namespace: default}
spec:
  version: v1.31.0
  machineTemplate:
    spec:
      infrastructureRef: {apiGroup: infrastructure.cluster.x-k8s.io, kind: DockerMachineTemplate, name: cp}
` + spec
	}
	kubeadmConfig := func(spec string) string {
		return `
apiVersion: bootstrap.cluster.x-k8s.io/v1beta2
kind: KubeadmConfig
metadata: {name: kc, namespace: default}
spec:
` + spec
	}
	kcpTemplate := func(spec string) string {
		return `
apiVersion: controlplane.cluster.x-k8s.io/v1beta2
kind: KubeadmControlPlaneTemplate
metadata: {name: cpt, namespace: default}
spec:
  template:
    spec:
      kubeadmConfigSpec: {format: cloud-config}
` + spec
	}
	machine := func(clusterName, version string) string {
		return `
apiVersion: cluster.x-k8s.io/v1beta2
kind: Machine
metadata: {name: m, namespace: default}
spec:
  clusterName: ` + clusterName + `
  version: "` + version + `"
  bootstrap: {dataSecretName: data}
  infrastructureRef: {apiGroup: infrastructure.cluster.x-k8s.io, kind: DockerMachine, name: m}
`
	}
	machineOwner := func(kind, templateSpec string) string {
		return `
apiVersion: cluster.x-k8s.io/v1beta2
kind: ` + kind + `
metadata: {name: o, namespace: default}
spec:
  clusterName: c
  template:
    spec:
      clusterName: c
      bootstrap: {dataSecretName: data}
      infrastructureRef: {apiGroup: infrastructure.cluster.x-k8s.io, kind: DockerMachine, name: m}
      ` + templateSpec + `
`
	}
	cluster := func(topology string) string {
		return `
apiVersion: cluster.x-k8s.io/v1beta2
kind: Cluster
metadata: {name: c, namespace: default}
spec:
  topology:
    classRef: {name: class}
    version: v1.31.0
` + topology + "\n"
	}
	clusterClass := func(spec string) string {
		return `
apiVersion: cluster.x-k8s.io/v1beta2
kind: ClusterClass
metadata: {name: class, namespace: default}
spec:
` + spec + "\n"
	}
	v1beta1 := func(object string) string {
		return strings.Replace(object, "/v1beta2\n", "/v1beta1\n", 1)
	}
	ipAddress := func(address string, prefix int) string {
		return `
apiVersion: ipam.cluster.x-k8s.io/v1beta2
kind: IPAddress
metadata: {name: ip, namespace: default}
spec:
  claimRef: {name: claim}
  poolRef: {apiGroup: ipam.example.com, kind: Pool, name: pool}
  address: "` + address + `"
  prefix: ` + strconv.Itoa(prefix) + `
`
	}

	tests := []struct {
		name    string
		crd     string
		object  string
		old     string
		wantErr string
	}{
		{name: "KCP: odd replicas with stacked etcd", crd: kcp, object: kcpObject("  replicas: 3\n")},
		{name: "KCP: even replicas with external etcd", crd: kcp, object: kcpObject(`  replicas: 2
  kubeadmConfigSpec:
    clusterConfiguration:
      etcd:
        external: {endpoints: ["https://etcd:2379"], caFile: ca, certFile: cert, keyFile: key}
`)},
		{name: "KCP: even replicas with stacked etcd", crd: kcp, object: kcpObject("  replicas: 2\n"),
			wantErr: "cannot be an even number when etcd is stacked"},
		{name: "KCP: zero replicas", crd: kcp, object: kcpObject(`  replicas: 0
  kubeadmConfigSpec:
    clusterConfiguration:
      etcd:
        external: {endpoints: ["https://etcd:2379"], caFile: ca, certFile: cert, keyFile: key}
`), wantErr: "cannot be less than or equal to 0"},
		{name: "KCP: maxSurge 0 with 3 replicas", crd: kcp, object: kcpObject(`  replicas: 3
  rollout: {strategy: {type: RollingUpdate, rollingUpdate: {maxSurge: 0}}}
`)},
		{name: "KCP: maxSurge 0 with 1 replica", crd: kcp, object: kcpObject(`  replicas: 1
  rollout: {strategy: {type: RollingUpdate, rollingUpdate: {maxSurge: 0}}}
`), wantErr: "when KubeadmControlPlane is configured to scale-in, replica count needs to be at least 3"},
		{name: "KCP: maxSurge 2", crd: kcp, object: kcpObject(`  replicas: 3
  rollout: {strategy: {type: RollingUpdate, rollingUpdate: {maxSurge: "2"}}}
`), wantErr: "value must be 1 or 0"},
		{name: "KCP: version without v", crd: kcp, object: strings.Replace(kcpObject(""), "v1.31.0", "1.31.0", 1),
			wantErr: "must be a valid semantic version"},
		{name: "KCP: upgrade by one minor", crd: kcp, object: strings.Replace(kcpObject(""), "v1.31.0", "v1.32.3", 1),
			old: kcpObject("")},
		{name: "KCP: upgrade by two minors", crd: kcp, object: strings.Replace(kcpObject(""), "v1.31.0", "v1.33.0", 1),
			old: kcpObject(""), wantErr: "cannot update Kubernetes version from v1.31.0 to v1.33.0"},
		{name: "KCP: stacked etcd made external", crd: kcp, object: kcpObject(`  kubeadmConfigSpec:
    clusterConfiguration:
      etcd:
        external: {endpoints: ["https://etcd:2379"], caFile: ca, certFile: cert, keyFile: key}
`), old: kcpObject(""), wantErr: "cannot change between external and local etcd"},
		{name: "KCP: certificatesDir changed", crd: kcp,
			object:  kcpObject("  kubeadmConfigSpec: {clusterConfiguration: {certificatesDir: /etc/pki}}\n"),
			old:     kcpObject("  kubeadmConfigSpec: {clusterConfiguration: {certificatesDir: /etc/kubernetes/pki}}\n"),
			wantErr: "is immutable"},
		{name: "KCP: machine naming with random", crd: kcp,
			object: kcpObject(`  machineNaming: {template: "{{ .kubeadmControlPlane.name }}-{{ .random }}"}` + "\n")},
		{name: "KCP: machine naming without random", crd: kcp,
			object:  kcpObject(`  machineNaming: {template: "{{ .kubeadmControlPlane.name }}"}` + "\n"),
			wantErr: "invalid template, {{ .random }} is missing"},

		{name: "KCPTemplate: spec changed", crd: "kubeadmcontrolplanetemplates.controlplane.cluster.x-k8s.io",
			object: kcpTemplate("      machineNaming: {template: \"{{ .random }}\"}\n"), old: kcpTemplate(""),
			wantErr: "KubeadmControlPlaneTemplate spec.template.spec field is immutable"},
		{name: "KCPTemplate: metadata changed", crd: "kubeadmcontrolplanetemplates.controlplane.cluster.x-k8s.io",
			object: strings.Replace(kcpTemplate(""), "name: cpt", "name: cpt, labels: {a: b}", 1), old: kcpTemplate("")},

		{name: "KubeadmConfig: file with content", crd: kc, object: kubeadmConfig(`  files: [{path: /etc/a, content: a}]`)},
		{name: "KubeadmConfig: file with content and contentFrom", crd: kc, object: kubeadmConfig(
			`  files: [{path: /etc/a, content: a, contentFrom: {secret: {name: s, key: k}}}]`),
			wantErr: "only one of content or contentFrom may be specified for a single file"},
		{name: "KubeadmConfig: two files with a path", crd: kc, object: kubeadmConfig(
			`  files: [{path: /etc/a, content: a}, {path: /etc/a, content: b}]`),
			wantErr: "path property must be unique among all files"},
		{name: "KubeadmConfig: ignition with format ignition", crd: kc, object: kubeadmConfig(
			`  {format: ignition, ignition: {containerLinuxConfig: {additionalConfig: "storage: {}"}}}`)},
		{name: "KubeadmConfig: ignition without format", crd: kc, object: kubeadmConfig(
			`  {ignition: {containerLinuxConfig: {additionalConfig: "storage: {}"}}}`),
			wantErr: `must be set to "ignition" if spec.ignition is set`},
		{name: "KubeadmConfig: ignition with gzip files", crd: kc, object: kubeadmConfig(
			`  {format: ignition, files: [{path: /etc/a, content: a, encoding: gzip}]}`),
			wantErr: "files[].encoding gzip and gzip+base64 are not supported"},
		{name: "KubeadmConfig: discovery user with authProvider and exec", crd: kc, object: kubeadmConfig(`  joinConfiguration:
    discovery:
      file:
        kubeConfig:
          cluster: {server: "https://cp:6443", certificateAuthorityData: Y2E=}
          user: {authProvider: {name: p}, exec: {command: c}}
`), wantErr: "either authProvider or exec must be defined"},

		{name: "Machine: semantic version", crd: "machines.cluster.x-k8s.io", object: machine("c", "v1.31.0")},
		{name: "Machine: pre-release and build", crd: "machines.cluster.x-k8s.io", object: machine("c", "v1.31.0-rc.1+build.5")},
		{name: "Machine: version without v", crd: "machines.cluster.x-k8s.io", object: machine("c", "1.31.0"),
			wantErr: "version must be a valid semantic version, for example v1.31.0"},
		{name: "Machine: pre-release with a leading zero", crd: "machines.cluster.x-k8s.io", object: machine("c", "v1.31.0-01"),
			wantErr: "version must be a valid semantic version, for example v1.31.0"},
		{name: "Machine: version without patch", crd: "machines.cluster.x-k8s.io", object: machine("c", "v1.31"),
			wantErr: "version must be a valid semantic version, for example v1.31.0"},
		{name: "Machine: clusterName unchanged", crd: "machines.cluster.x-k8s.io", object: machine("c", "v1.31.0"),
			old: machine("c", "v1.30.0")},
		{name: "Machine: clusterName changed", crd: "machines.cluster.x-k8s.io", object: machine("d", "v1.31.0"),
			old: machine("c", "v1.31.0"), wantErr: "clusterName is immutable"},

		// v1beta2 fields capstan has no behaviour for yet are refused (v1beta2Refused); the others are accepted.
		{name: "Machine: taints (implemented)", crd: "machines.cluster.x-k8s.io", object: machine("c", "v1.31.0") + "  taints: [{key: a, effect: NoSchedule, propagation: Always}]\n"},
		{name: "Machine: a reserved taint key", crd: "machines.cluster.x-k8s.io", object: machine("c", "v1.31.0") + "  taints: [{key: node.kubernetes.io/unreachable, effect: NoExecute, propagation: Always}]\n",
			wantErr: "spec.taints[0].key: Invalid value: taint key must not have the prefix node.kubernetes.io/, except for node.kubernetes.io/out-of-service"},
		{name: "Machine: minReadySeconds", crd: "machines.cluster.x-k8s.io", object: machine("c", "v1.31.0") + "  minReadySeconds: 5\n",
			wantErr: "spec.minReadySeconds: Invalid value: minReadySeconds of a Machine is not supported by capstan yet"},
		{name: "MachineDeployment: template taints (implemented)", crd: "machinedeployments.cluster.x-k8s.io", object: machineOwner("MachineDeployment", "taints: [{key: a, effect: NoSchedule, propagation: Always}]")},
		{name: "MachineSet: template minReadySeconds", crd: "machinesets.cluster.x-k8s.io", object: machineOwner("MachineSet", "minReadySeconds: 5")},
		{name: "MachinePool: template taints (implemented)", crd: "machinepools.cluster.x-k8s.io", object: machineOwner("MachinePool", "taints: [{key: a, effect: NoSchedule, propagation: Always}]")},
		{name: "MachineHealthCheck: unhealthyMachineConditions (implemented)", crd: "machinehealthchecks.cluster.x-k8s.io", object: `
apiVersion: cluster.x-k8s.io/v1beta2
kind: MachineHealthCheck
metadata: {name: mhc, namespace: default}
spec:
  clusterName: c
  selector: {matchLabels: {a: b}}
  checks: {unhealthyMachineConditions: [{type: DiskPressure, status: "True", timeoutSeconds: 300}]}
`},
		{name: "Cluster: topology without refused fields", crd: "clusters.cluster.x-k8s.io", object: cluster("")},
		{name: "Cluster: control plane rollout.after (implemented)", crd: "clusters.cluster.x-k8s.io", object: cluster(`    controlPlane: {rollout: {after: "2026-01-01T00:00:00Z"}}`)},
		{name: "Cluster: control plane taints (implemented)", crd: "clusters.cluster.x-k8s.io", object: cluster(`    controlPlane: {taints: [{key: a, effect: NoSchedule, propagation: Always}]}`)},
		{name: "Cluster: control plane unhealthyMachineConditions (implemented)", crd: "clusters.cluster.x-k8s.io", object: cluster(`    controlPlane: {healthCheck: {checks: {unhealthyMachineConditions: [{type: DiskPressure, status: "True", timeoutSeconds: 300}]}}}`)},
		{name: "Cluster: MachineDeployment rollout.strategy", crd: "clusters.cluster.x-k8s.io", object: cluster(`    workers: {machineDeployments: [{name: md, class: w, rollout: {strategy: {type: OnDelete}}}]}`)},
		{name: "Cluster: MachineDeployment rollout.after (implemented)", crd: "clusters.cluster.x-k8s.io", object: cluster(`    workers: {machineDeployments: [{name: md, class: w, rollout: {after: "2026-01-01T00:00:00Z"}}]}`)},
		{name: "Cluster: MachineDeployment taints (implemented)", crd: "clusters.cluster.x-k8s.io", object: cluster(`    workers: {machineDeployments: [{name: md, class: w, taints: [{key: a, effect: NoSchedule, propagation: Always}]}]}`)},
		{name: "Cluster: MachineDeployment unhealthyMachineConditions (implemented)", crd: "clusters.cluster.x-k8s.io", object: cluster(`    workers: {machineDeployments: [{name: md, class: w, healthCheck: {checks: {unhealthyMachineConditions: [{type: DiskPressure, status: "True", timeoutSeconds: 300}]}}}]}`)},
		{name: "Cluster: MachinePool taints (implemented)", crd: "clusters.cluster.x-k8s.io", object: cluster(`    workers: {machinePools: [{name: mp, class: w, taints: [{key: a, effect: NoSchedule, propagation: Always}]}]}`)},
		{name: "ClusterClass: upgrade (implemented)", crd: "clusterclasses.cluster.x-k8s.io", object: clusterClass(`  upgrade: {external: {generateUpgradePlanExtension: ext}}`)},
		{name: "ClusterClass: kubernetesVersions (implemented)", crd: "clusterclasses.cluster.x-k8s.io", object: clusterClass(`  kubernetesVersions: [v1.31.0, v1.32.2]`)},
		{name: "ClusterClass v1beta1: upgrade (implemented)", crd: "clusterclasses.cluster.x-k8s.io", object: v1beta1(clusterClass(`  upgrade: {external: {generateUpgradePlanExtension: ext}}`))},
		{name: "ClusterClass v1beta1: kubernetesVersions (implemented)", crd: "clusterclasses.cluster.x-k8s.io", object: v1beta1(clusterClass(`  kubernetesVersions: [v1.31.0, v1.32.2]`))},
		{name: "ClusterClass v1beta1: variables", crd: "clusterclasses.cluster.x-k8s.io", object: v1beta1(clusterClass(`  variables: [{name: v, required: false, schema: {openAPIV3Schema: {type: string}}}]`))},
		{name: "ClusterClass: control plane taints (implemented)", crd: "clusterclasses.cluster.x-k8s.io", object: clusterClass(`  controlPlane: {templateRef: {apiVersion: controlplane.cluster.x-k8s.io/v1beta2, kind: KubeadmControlPlaneTemplate, name: cp}, taints: [{key: a, effect: NoSchedule, propagation: Always}]}`)},
		{name: "ClusterClass: MachineDeployment class unhealthyMachineConditions (implemented)", crd: "clusterclasses.cluster.x-k8s.io", object: clusterClass(`  workers: {machineDeployments: [{class: w, healthCheck: {checks: {unhealthyMachineConditions: [{type: DiskPressure, status: "True", timeoutSeconds: 300}]}}}]}`)},
		{name: "ClusterClass: MachinePool class taints (implemented)", crd: "clusterclasses.cluster.x-k8s.io", object: clusterClass(`  workers: {machinePools: [{class: w, taints: [{key: a, effect: NoSchedule, propagation: Always}]}]}`)},
		{name: "KCP: machine template taints (implemented)", crd: kcp, object: strings.Replace(kcpObject(""), "      infrastructureRef:", "      taints: [{key: a, effect: NoSchedule, propagation: Always}]\n      infrastructureRef:", 1)},
		{name: "KCP: encryptionAlgorithm (implemented)", crd: kcp, object: kcpObject("  kubeadmConfigSpec: {clusterConfiguration: {encryptionAlgorithm: ECDSA-P256}}\n")},
		{name: "KCPTemplate: machine template taints (implemented)", crd: "kubeadmcontrolplanetemplates.controlplane.cluster.x-k8s.io",
			object: kcpTemplate("      machineTemplate: {spec: {taints: [{key: a, effect: NoSchedule, propagation: Always}]}}\n")},
		{name: "KubeadmConfig: certificateValidityPeriodDays (implemented)", crd: kc, object: kubeadmConfig(`  clusterConfiguration: {certificateValidityPeriodDays: 100}`)},
		{name: "KubeadmConfig: caCertificateValidityPeriodDays (implemented)", crd: kc, object: kubeadmConfig(`  clusterConfiguration: {caCertificateValidityPeriodDays: 100}`)},
		{name: "KubeadmConfig: file contentFormat (implemented)", crd: kc, object: kubeadmConfig(`  files: [{path: /etc/a, content: a, contentFormat: Template}]`)},
		{name: "KubeadmConfig: partition layout", crd: kc, object: kubeadmConfig(`  diskSetup: {partitions: [{device: /dev/sdb, layout: true}]}`)},
		{name: "KubeadmConfig: partition diskLayout (implemented)", crd: kc, object: kubeadmConfig(`  diskSetup: {partitions: [{device: /dev/sdb, diskLayout: [{percentage: 60}, {percentage: 40, partitionType: LinuxSwap}]}]}`)},
		{name: "KubeadmConfig: partition diskLayout over 100%", crd: kc, object: kubeadmConfig(`  diskSetup: {partitions: [{device: /dev/sdb, diskLayout: [{percentage: 60}, {percentage: 41}]}]}`),
			wantErr: "spec.diskSetup.partitions[0].diskLayout: Invalid value: the sum of all partition percentages must not be greater than 100"},
		{name: "KubeadmConfigTemplate: encryptionAlgorithm (implemented)", crd: "kubeadmconfigtemplates.bootstrap.cluster.x-k8s.io", object: `
apiVersion: bootstrap.cluster.x-k8s.io/v1beta2
kind: KubeadmConfigTemplate
metadata: {name: kct, namespace: default}
spec: {template: {spec: {clusterConfiguration: {encryptionAlgorithm: RSA-3072}}}}
`},

		{name: "IPAddress: IPv4 /24", crd: "ipaddresses.ipam.cluster.x-k8s.io", object: ipAddress("10.0.0.1", 24)},
		{name: "IPAddress: IPv4 /33", crd: "ipaddresses.ipam.cluster.x-k8s.io", object: ipAddress("10.0.0.1", 33),
			wantErr: "prefix is too large for the address"},
		{name: "IPAddress: not an address", crd: "ipaddresses.ipam.cluster.x-k8s.io", object: ipAddress("10.0.0", 24),
			wantErr: "not a valid IP address"},
		{name: "IPAddress: spec unchanged", crd: "ipaddresses.ipam.cluster.x-k8s.io", object: ipAddress("10.0.0.1", 24),
			old: ipAddress("10.0.0.1", 24)},
		{name: "IPAddress: spec changed", crd: "ipaddresses.ipam.cluster.x-k8s.io", object: ipAddress("10.0.0.2", 24),
			old: ipAddress("10.0.0.1", 24), wantErr: "IPAddress spec is immutable"},

		{name: "ExtensionConfig: https URL", crd: "extensionconfigs.runtime.cluster.x-k8s.io", object: `
apiVersion: runtime.cluster.x-k8s.io/v1beta2
kind: ExtensionConfig
metadata: {name: ext}
spec: {clientConfig: {url: "https://ext.example.com"}}
`},
		{name: "ExtensionConfig: http URL", crd: "extensionconfigs.runtime.cluster.x-k8s.io", object: `
apiVersion: runtime.cluster.x-k8s.io/v1beta2
kind: ExtensionConfig
metadata: {name: ext}
spec: {clientConfig: {url: "http://ext.example.com"}}
`, wantErr: "url must be an https:// URL"},
	}

	served, err := LoadDir(servedCRDs)
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			got := validateCEL(g, served[tt.crd], tt.object, tt.old)
			if tt.wantErr == "" {
				g.Expect(got).To(BeEmpty())
				return
			}
			g.Expect(got).NotTo(BeEmpty())
			g.Expect(got).To(HaveEach(ContainSubstring(tt.wantErr)))
		})
	}
}

// validateCEL validates an object, given in YAML, with the CEL rules of the CRD's schema of the object's
// version as the API server does, with the old object on an update ("" on a create), and returns the errors.
func validateCEL(g Gomega, v1 *apiextensionsv1.CustomResourceDefinition, object, old string) []string {
	g.Expect(v1).NotTo(BeNil())
	meta := struct {
		APIVersion string `json:"apiVersion"`
	}{}
	g.Expect(yaml.Unmarshal([]byte(object), &meta)).To(Succeed())
	_, name, _ := strings.Cut(meta.APIVersion, "/")
	version := findVersion(v1, name)
	g.Expect(version).NotTo(BeNil(), "%s serves no %s", v1.Name, meta.APIVersion)
	internal := &apiextensions.JSONSchemaProps{}
	g.Expect(apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(version.Schema.OpenAPIV3Schema, internal, nil)).To(Succeed())
	structural, err := schema.NewStructural(internal)
	g.Expect(err).NotTo(HaveOccurred())
	validator := cel.NewValidator(structural, true, celconfig.PerCallLimit)
	g.Expect(validator).NotTo(BeNil())

	decode := func(doc string) any {
		if doc == "" {
			return nil
		}
		data, err := yaml.YAMLToJSON([]byte(doc))
		g.Expect(err).NotTo(HaveOccurred())
		out := map[string]any{}
		g.Expect(utiljson.Unmarshal(data, &out)).To(Succeed())
		return out
	}
	errs, _ := validator.Validate(context.Background(), nil, structural, decode(object), decode(old), celconfig.RuntimeCELCostBudget)
	var out []string
	for _, e := range errs {
		out = append(out, e.Error())
	}
	return out
}
