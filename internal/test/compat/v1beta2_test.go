package compat

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// upstreamV114CRDs is the copy of upstream Cluster API v1.14's CRDs, whose v1beta2 schemas the v1beta2 types
// must match.
const upstreamV114CRDs = "testdata/upstream-v1.14/crds"

// servedCRDs are the CRDs capstan installs.
const servedCRDs = "../../../config/crd/bases"

// v1beta2Kinds are the CRDs that upstream v1.14 serves as v1beta2 and capstan has v1beta2 types for.
var v1beta2Kinds = []string{
	"clusters.cluster.x-k8s.io",
	"clusterclasses.cluster.x-k8s.io",
	"machines.cluster.x-k8s.io",
	"machinesets.cluster.x-k8s.io",
	"machinedeployments.cluster.x-k8s.io",
	"machinehealthchecks.cluster.x-k8s.io",
	"machinepools.cluster.x-k8s.io",
	"machinedrainrules.cluster.x-k8s.io",

	"kubeadmconfigs.bootstrap.cluster.x-k8s.io",
	"kubeadmconfigtemplates.bootstrap.cluster.x-k8s.io",

	"kubeadmcontrolplanes.controlplane.cluster.x-k8s.io",
	"kubeadmcontrolplanetemplates.controlplane.cluster.x-k8s.io",

	"clusterresourcesets.addons.cluster.x-k8s.io",
	"clusterresourcesetbindings.addons.cluster.x-k8s.io",

	"ipaddresses.ipam.cluster.x-k8s.io",
	"ipaddressclaims.ipam.cluster.x-k8s.io",

	"extensionconfigs.runtime.cluster.x-k8s.io",
}

// v1beta2AllowedAdditions are fields the v1beta2 types have and upstream v1.14's have not, each with the
// reason it is harmless.
var v1beta2AllowedAdditions = map[string]string{
	"machines.cluster.x-k8s.io .status.nodeInfo.runningInUserNamespace": "Kubernetes v1.37's NodeSystemInfo, which " +
		"status.nodeInfo copies from the Node, has this field; upstream v1.14 was generated from an older Kubernetes",
}

// v1beta2Pending are the kinds whose v1beta2 schema does not match upstream v1.14's yet, each with the reason;
// their differences are logged and the kind is skipped.
var v1beta2Pending = map[string]string{}

// v1beta2AllowedRules are the CEL rules the v1beta2 CRDs have beyond upstream v1.14's, keyed by
// "<crd> <path> (<fieldPath>): <message>" (celRule.key), each with the reason. Each is a rule of the kind's
// v1beta1 (IPAM: v1alpha1 and v1beta1) CRD, adapted to v1beta2's fields, and checks what upstream checks
// in its v1beta2 admission webhook: without it, a v1beta2 write would skip the check (the API server
// validates an object against the schema of the version it is written in).
var v1beta2AllowedRules = func() map[string]string {
	allowed := map[string]string{}
	allow := func(crdName, webhook string, rules ...string) {
		for _, r := range rules {
			allowed[crdName+" "+r] = "upstream validates this in its v1beta2 webhook " + webhook
		}
	}
	const (
		clusterNameImmutable = "clusterName is immutable"
		semver               = "version must be a valid semantic version, for example v1.31.0"
	)
	core := func(kind string) string {
		return kind + " (core/webhooks/admission/" + strings.ToLower(kind) + ".go)"
	}
	allow("clusters.cluster.x-k8s.io", core("Cluster"),
		".: spec.topology cannot be removed from a Cluster that uses a ClusterClass",
		".spec.topology (.version): "+semver)
	allow("machines.cluster.x-k8s.io", core("Machine"),
		".spec (.version): "+semver,
		".spec.clusterName: "+clusterNameImmutable)
	// The webhooks of the kinds with a Machine template also require the template's clusterName to be the
	// kind's, so it cannot change either.
	for crdName, kind := range map[string]string{
		"machinesets.cluster.x-k8s.io":        "MachineSet",
		"machinedeployments.cluster.x-k8s.io": "MachineDeployment",
		"machinepools.cluster.x-k8s.io":       "MachinePool",
	} {
		allow(crdName, core(kind),
			".spec.clusterName: "+clusterNameImmutable,
			".spec.template.spec (.version): "+semver,
			".spec.template.spec.clusterName: "+clusterNameImmutable)
	}
	allow("machinepools.cluster.x-k8s.io", core("MachinePool"),
		".spec (.template.spec.bootstrap): expected either spec.template.spec.bootstrap.dataSecretName or "+
			"spec.template.spec.bootstrap.configRef to be populated")
	allow("machinehealthchecks.cluster.x-k8s.io", core("MachineHealthCheck"),
		".spec (.selector): selector must not be empty: an empty selector would check every Machine of the Cluster",
		".spec.clusterName: "+clusterNameImmutable)

	allow("clusterresourcesets.addons.cluster.x-k8s.io", core("ClusterResourceSet"),
		".spec (.strategy): strategy is immutable",
		".spec.clusterSelector: clusterSelector is immutable",
		".spec.clusterSelector: clusterSelector must not be empty: it would select no Cluster")
	allow("clusterresourcesetbindings.addons.cluster.x-k8s.io", core("ClusterResourceSetBinding"),
		".spec (.clusterName): "+clusterNameImmutable)

	allow("ipaddresses.ipam.cluster.x-k8s.io", core("IPAddress"),
		".spec: IPAddress spec is immutable: delete the IPAddress and create a new one",
		".spec (.prefix): prefix is too large for the address (at most 32 for IPv4, 128 for IPv6)",
		".spec.address: not a valid IP address",
		".spec.gateway: not a valid IP address")
	allow("ipaddressclaims.ipam.cluster.x-k8s.io", core("IPAddressClaim"),
		".spec: IPAddressClaim spec is immutable: delete the IPAddressClaim and create a new one")

	allow("extensionconfigs.runtime.cluster.x-k8s.io", core("ExtensionConfig"),
		".spec.clientConfig: exactly one of url or service must be set: use service for an Extension server "+
			"that runs in the management cluster, url otherwise",
		".spec.clientConfig: url must be an https:// URL")

	// The KubeadmConfigSpec rules, in the four kinds that embed it; the control plane's webhooks call the
	// KubeadmConfig webhook's validation.
	const (
		kcpWebhook  = "KubeadmControlPlane (controlplane/kubeadm/webhooks/admission/kubeadmcontrolplane.go)"
		kcptWebhook = "KubeadmControlPlaneTemplate (controlplane/kubeadm/webhooks/admission/kubeadmcontrolplanetemplate.go)"
	)
	for _, k := range []struct{ crdName, spec, webhook string }{
		{"kubeadmconfigs.bootstrap.cluster.x-k8s.io", ".spec",
			"KubeadmConfig (bootstrap/kubeadm/webhooks/admission/kubeadmconfig.go)"},
		{"kubeadmconfigtemplates.bootstrap.cluster.x-k8s.io", ".spec.template.spec",
			"KubeadmConfigTemplate (bootstrap/kubeadm/webhooks/admission/kubeadmconfigtemplate.go)"},
		{"kubeadmcontrolplanes.controlplane.cluster.x-k8s.io", ".spec.kubeadmConfigSpec", kcpWebhook},
		{"kubeadmcontrolplanetemplates.controlplane.cluster.x-k8s.io", ".spec.template.spec.kubeadmConfigSpec", kcptWebhook},
	} {
		const ignition = ` is set to "ignition"`
		allow(k.crdName, k.webhook,
			k.spec+` (.format): must be set to "ignition" if spec.ignition is set`,
			k.spec+" (.users): users[].inactive is not supported when spec.format"+ignition,
			k.spec+" (.files): files[].encoding gzip and gzip+base64 are not supported when spec.format"+ignition,
			k.spec+" (.bootCommands): not supported when spec.format"+ignition,
			k.spec+` (.diskSetup): diskSetup.partitions[].tableType: only partition type "gpt" is supported when spec.format`+ignition,
			k.spec+" (.diskSetup): diskSetup.filesystems[].replaceFS and partition are not supported when spec.format"+ignition,
			k.spec+".files: path property must be unique among all files",
			k.spec+".files[]: only one of content or contentFrom may be specified for a single file",
			k.spec+".users[]: only one of passwd or passwdFrom may be specified for a single user",
			k.spec+".joinConfiguration.discovery.file.kubeConfig.user: either authProvider or exec must be defined",
			k.spec+".diskSetup.partitions[] (.diskLayout): the sum of all partition percentages must not be greater than 100")
		etcd := k.spec + ".clusterConfiguration (.etcd): cannot have both external and local etcd"
		allow(k.crdName, kcpWebhook, etcd)
		if !strings.HasPrefix(k.crdName, "kubeadmcontrolplane") {
			// The rule is on the ClusterConfiguration type, as in capstan's v1beta1.
			allowed[k.crdName+" "+etcd] += " for a control plane's ClusterConfiguration; a KubeadmConfig(Template) " +
				"has the rule too because it is on the ClusterConfiguration type, as in capstan's v1beta1"
		}
	}

	// The taint key rules of upstream's internal/util/taints, called by the webhooks of every kind with
	// taints; capstan has them on the MachineTaint type, so on every list of taints.
	taintRules := []string{
		"taint key is not allowed",
		"taint key must not have the prefix node.kubernetes.io/, except for node.kubernetes.io/out-of-service",
		"taint key must not have the prefix node.cloudprovider.kubernetes.io/",
		"taint is deprecated since 1.24 and should not be used anymore",
	}
	for crdName, paths := range map[string][]string{
		"machines.cluster.x-k8s.io":           {".spec.taints[]"},
		"machinesets.cluster.x-k8s.io":        {".spec.template.spec.taints[]"},
		"machinedeployments.cluster.x-k8s.io": {".spec.template.spec.taints[]"},
		"machinepools.cluster.x-k8s.io":       {".spec.template.spec.taints[]"},
		"clusters.cluster.x-k8s.io": {".spec.topology.controlPlane.taints[]", ".spec.topology.workers.machineDeployments[].taints[]",
			".spec.topology.workers.machinePools[].taints[]"},
		"clusterclasses.cluster.x-k8s.io": {".spec.controlPlane.taints[]", ".spec.workers.machineDeployments[].taints[]",
			".spec.workers.machinePools[].taints[]"},
		"kubeadmcontrolplanes.controlplane.cluster.x-k8s.io":         {".spec.machineTemplate.spec.taints[]"},
		"kubeadmcontrolplanetemplates.controlplane.cluster.x-k8s.io": {".spec.template.spec.machineTemplate.spec.taints[]"},
	} {
		for _, path := range paths {
			for _, message := range taintRules {
				allow(crdName, "of its kind (internal/util/taints/validation.go)", path+" (.key): "+message)
			}
		}
	}

	allow("kubeadmcontrolplanes.controlplane.cluster.x-k8s.io", kcpWebhook,
		".spec (.replicas): cannot be less than or equal to 0",
		".spec (.replicas): cannot be an even number when etcd is stacked",
		".spec (.version): must be a valid semantic version",
		".spec (.version): 'cannot update Kubernetes version from ' + oldSelf.version + ' to ' + self.version",
		".spec (.rollout.strategy.rollingUpdate): when KubeadmControlPlane is configured to scale-in, replica count needs to be at least 3",
		".spec (.kubeadmConfigSpec.clusterConfiguration.etcd): cannot change between external and local etcd",
		".spec.machineNaming (.template): invalid template, {{ .random }} is missing",
		".spec.rollout.strategy.rollingUpdate (.maxSurge): value must be 1 or 0")
	allow("kubeadmcontrolplanes.controlplane.cluster.x-k8s.io", kcpWebhook+
		" (its update check allows changes to a list of paths only, which does not have this one)",
		".spec (.kubeadmConfigSpec.clusterConfiguration.controlPlaneEndpoint): is immutable",
		".spec (.kubeadmConfigSpec.clusterConfiguration.certificatesDir): is immutable")
	allow("kubeadmcontrolplanetemplates.controlplane.cluster.x-k8s.io", kcptWebhook,
		".spec.template.spec: KubeadmControlPlaneTemplate spec.template.spec field is immutable. Please create new resource instead",
		".spec.template.spec.machineNaming (.template): invalid template, {{ .random }} is missing",
		".spec.template.spec.rollout.strategy.rollingUpdate (.maxSurge): value must be 1 or 0")
	return allowed
}()

// TestV1beta2SchemasMatchUpstream compares the v1beta2 version of the served CRDs with upstream v1.14's, kind
// by kind: fields, shapes, defaults, validations, printer columns, names and subresources.
func TestV1beta2SchemasMatchUpstream(t *testing.T) {
	g := NewWithT(t)
	upstream, err := LoadDir(upstreamV114CRDs)
	g.Expect(err).NotTo(HaveOccurred())
	ours, err := LoadDir(servedCRDs)
	g.Expect(err).NotTo(HaveOccurred())

	allowedRulesSeen := map[string]bool{}
	for _, name := range v1beta2Kinds {
		t.Run(name, func(t *testing.T) {
			u, o := upstream[name], ours[name]
			if u == nil {
				t.Fatalf("%s is not in %s: run `make sync-compat`", name, upstreamV114CRDs)
			}
			if o == nil || findVersion(o, "v1beta2") == nil {
				t.Fatalf("%s in %s does not serve v1beta2: no v1beta2 package has such a kind, or run `make generate`", name, servedCRDs)
			}
			diffs := Compare(u, o, "v1beta2")
			if reason, pending := v1beta2Pending[name]; pending {
				for _, d := range diffs {
					t.Logf("left: %s", d)
				}
				t.Skipf("%d differences left (%s)", len(diffs), reason)
			}
			// Compare lets capstan add CEL rules; v1beta2 has upstream's rules exactly, with their messages,
			// and only the additions of v1beta2AllowedRules.
			uRules, oRules := celRules(u, "v1beta2"), celRules(o, "v1beta2")
			for _, r := range uRules {
				if !slices.ContainsFunc(oRules, r.equal) {
					t.Errorf("%s v1beta2: upstream CEL rule missing or different: %s", name, r)
				}
			}
			for _, r := range oRules {
				if slices.ContainsFunc(uRules, r.equal) {
					continue
				}
				key := name + " " + r.key()
				if reason, ok := v1beta2AllowedRules[key]; ok {
					allowedRulesSeen[key] = true
					t.Logf("allowed: CEL rule %s (%s)", r, reason)
					continue
				}
				if field, ok := refusedField(r); ok {
					t.Logf("allowed: CEL rule %s (capstan refuses %s: it has no behaviour yet)", r, field)
					continue
				}
				t.Errorf("%s v1beta2: CEL rule not in upstream: %s", name, r)
			}
			for _, d := range diffs {
				if reason, ok := v1beta2AllowedAdditions[d.CRD+" "+d.Path]; ok && d.What == "not in upstream" {
					t.Logf("allowed: %s (%s)", d, reason)
					continue
				}
				t.Errorf("%s", d)
			}
		})
	}
	for name, o := range ours {
		if findVersion(o, "v1beta2") != nil && !slices.Contains(v1beta2Kinds, name) {
			t.Errorf("%s in %s serves v1beta2 but is not in v1beta2Kinds: compare it with upstream v1.14's", name, servedCRDs)
		}
	}
	if !t.Failed() {
		for key := range v1beta2AllowedRules {
			if !allowedRulesSeen[key] {
				t.Errorf("v1beta2AllowedRules: %s is not a CEL rule of the v1beta2 CRDs beyond upstream's: remove it", key)
			}
		}
	}
}

// servedBeforeV1beta2 are the versions the CRDs of v1beta2Kinds served before v1beta2: v1beta1, unless listed
// here. They are still served, and the first is still the storage version.
var servedBeforeV1beta2 = map[string][]string{
	"extensionconfigs.runtime.cluster.x-k8s.io": {"v1alpha1"},
	"ipaddresses.ipam.cluster.x-k8s.io":         {"v1alpha1", "v1beta1"},
	"ipaddressclaims.ipam.cluster.x-k8s.io":     {"v1alpha1", "v1beta1"},
}

// TestV1beta2IsServed checks each CRD with v1beta2 types serves v1beta2 beside the versions it served
// before, and keeps storing objects in the newest of those: the controllers still read and write v1beta1,
// and with v1beta2 as the storage version every one of their reads and watch events would go through the
// conversion webhook (docs/dev/v1beta2.md). The storage version moves to v1beta2 with the controllers.
func TestV1beta2IsServed(t *testing.T) {
	g := NewWithT(t)
	served, err := LoadDir(servedCRDs)
	g.Expect(err).NotTo(HaveOccurred())
	for _, name := range v1beta2Kinds {
		crd := served[name]
		g.Expect(crd).NotTo(BeNil(), name)
		before, ok := servedBeforeV1beta2[name]
		if !ok {
			before = []string{"v1beta1"}
		}
		g.Expect(versionNames(crd)).To(ConsistOf(append(slices.Clone(before), "v1beta2")), name)
		storage := ""
		for _, v := range crd.Spec.Versions {
			g.Expect(v.Served).To(BeTrue(), "%s %s", name, v.Name)
			if v.Storage {
				storage = v.Name
			}
		}
		g.Expect(storage).To(Equal(before[len(before)-1]), name)
	}
}

func versionNames(crd *apiextensionsv1.CustomResourceDefinition) []string {
	var names []string
	for _, v := range crd.Spec.Versions {
		names = append(names, v.Name)
	}
	return names
}

// celRule is an x-kubernetes-validations rule of a schema, with the path of the schema that holds it.
// v1beta2Refused are the v1beta2 fields capstan refuses because it has no behaviour for them yet (fields of
// upstream v1.11–v1.14; docs/api.md lists them), each with the rule that refuses it where it is. One that
// v1beta1 has too (an upstream v1.14 v1beta1 field) would carry the same rule there, which
// TestV1beta2HasTheV1beta1Rules pairs with v1beta2's. TestV1beta2RulesWork checks that each is refused.
var v1beta2Refused = map[string]string{
	"minReadySeconds of a Machine": "!has(self.spec) || !has(self.spec.minReadySeconds)",
}

// refusedField returns the field r refuses, when r is one of v1beta2Refused's rules with its message.
func refusedField(r celRule) (string, bool) {
	field, _, ok := strings.Cut(r.Message, " is not supported by capstan yet: remove it")
	return field, ok && v1beta2Refused[field] != "" && v1beta2Refused[field] == r.Rule
}

type celRule struct {
	path string
	apiextensionsv1.ValidationRule
}

// String is "path: rule, message, messageExpression, reason, fieldPath".
func (r celRule) String() string {
	return fmt.Sprintf("%s: %q, %q, %q, %q, %q", r.path, r.Rule, r.Message, r.MessageExpression,
		stringValue((*string)(r.Reason)), r.FieldPath)
}

func (r celRule) equal(other celRule) bool { return r.String() == other.String() }

// key names a rule by where it is and what it says, not by its expression: "path (fieldPath): message",
// the fieldPath part only when set, messageExpression when there is no message.
func (r celRule) key() string {
	where := r.path
	if r.FieldPath != "" {
		where += " (" + r.FieldPath + ")"
	}
	message := r.Message
	if message == "" {
		message = r.MessageExpression
	}
	return where + ": " + message
}

// celRules lists every x-kubernetes-validations rule of a version's schema.
func celRules(crd *apiextensionsv1.CustomResourceDefinition, version string) []celRule {
	v := findVersion(crd, version)
	if v == nil || v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
		return nil
	}
	var out []celRule
	var walk func(path string, s *apiextensionsv1.JSONSchemaProps)
	walk = func(path string, s *apiextensionsv1.JSONSchemaProps) {
		for _, r := range s.XValidations {
			out = append(out, celRule{path: path, ValidationRule: r})
		}
		for _, name := range sortedKeys(s.Properties) {
			p := s.Properties[name]
			walk(join(path, name), &p)
		}
		if s.Items != nil && s.Items.Schema != nil {
			walk(path+"[]", s.Items.Schema)
		}
		if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
			walk(path+"{}", s.AdditionalProperties.Schema)
		}
	}
	walk(".", v.Schema.OpenAPIV3Schema)
	return out
}
