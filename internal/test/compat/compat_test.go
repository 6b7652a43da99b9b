package compat

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	. "github.com/onsi/gomega"

	"github.com/capstan-dev/capstan/config/crd"
)

// upstreamCRDs is the copy of upstream Cluster API v1.10's CRDs that capstan must stay compatible with.
const upstreamCRDs = "testdata/upstream-v1.10/crds"

// notServed lists the CRDs of upstream v1.10 that capstan does not serve, each with the reason. Every other
// upstream CRD must be served: a missing one fails TestSchemasMatchUpstream.
var notServed = map[string]string{
	"metadata.clusterctl.cluster.x-k8s.io": "the type of a provider release's metadata.yaml, a file format; " +
		"upstream generates a CRD for it but never installs it",
}

// allowedAdditions are fields capstan has and upstream v1.10 has not, each with the reason it is harmless.
// Besides these, only the widenings of allowedWidenings are allowed: a missing or different upstream field
// is otherwise always a failure.
var allowedAdditions = func() map[string]string {
	additions := map[string]string{
		"machines.cluster.x-k8s.io .status.nodeInfo.swap": "Kubernetes v1.37's NodeSystemInfo, which status.nodeInfo " +
			"copies from the Node, has this field; upstream v1.10 was generated from an older Kubernetes",
		"machines.cluster.x-k8s.io .status.nodeInfo.runningInUserNamespace": "as .status.nodeInfo.swap",
		"kubeadmconfigs.bootstrap.cluster.x-k8s.io .status.initialization": "the v1beta2 bootstrap contract's " +
			"status.initialization.dataSecretCreated, which capstan's KubeadmConfig also reports",
		"machinehealthchecks.cluster.x-k8s.io .spec.unhealthyMachineConditions": "upstream v1.14's v1beta1 field " +
			"(v1beta2's spec.checks.unhealthyMachineConditions), which capstan implements",
	}
	for _, path := range []string{
		"clusterclasses.cluster.x-k8s.io .spec.controlPlane.machineHealthCheck",
		"clusterclasses.cluster.x-k8s.io .spec.workers.machineDeployments[].machineHealthCheck",
		"clusters.cluster.x-k8s.io .spec.topology.controlPlane.machineHealthCheck",
		"clusters.cluster.x-k8s.io .spec.topology.workers.machineDeployments[].machineHealthCheck",
	} {
		additions[path+".unhealthyMachineConditions"] = "upstream v1.14's v1beta1 field of a ClusterClass's or a " +
			"topology's health check (v1beta2's healthCheck.checks.unhealthyMachineConditions), which capstan implements"
	}
	for _, path := range []string{"machines.cluster.x-k8s.io .spec.taints", "machinesets.cluster.x-k8s.io .spec.template.spec.taints",
		"machinedeployments.cluster.x-k8s.io .spec.template.spec.taints", "machinepools.cluster.x-k8s.io .spec.template.spec.taints",
		"kubeadmcontrolplanes.controlplane.cluster.x-k8s.io .spec.machineTemplate.taints",
		"kubeadmcontrolplanetemplates.controlplane.cluster.x-k8s.io .spec.template.spec.machineTemplate.taints",
		"clusters.cluster.x-k8s.io .spec.topology.controlPlane.taints", "clusters.cluster.x-k8s.io .spec.topology.workers.machineDeployments[].taints",
		"clusters.cluster.x-k8s.io .spec.topology.workers.machinePools[].taints", "clusterclasses.cluster.x-k8s.io .spec.controlPlane.taints",
		"clusterclasses.cluster.x-k8s.io .spec.workers.machineDeployments[].taints", "clusterclasses.cluster.x-k8s.io .spec.workers.machinePools[].taints"} {
		additions[path] = "upstream v1.14's v1beta1 field (as in v1beta2), which capstan implements"
	}
	for _, path := range []string{".spec.topology.controlPlane.rollout", ".spec.topology.workers.machineDeployments[].rollout"} {
		additions["clusters.cluster.x-k8s.io "+path] = "upstream v1.14's v1beta1 field (rollout.after, as in v1beta2), which capstan implements"
		additions["clusters.cluster.x-k8s.io "+path+".after"] = additions["clusters.cluster.x-k8s.io "+path]
	}
	for _, path := range []string{"clusterclasses.cluster.x-k8s.io .spec.kubernetesVersions", "clusterclasses.cluster.x-k8s.io .spec.upgrade"} {
		additions[path] = "upstream v1.14's v1beta1 field (as in v1beta2): chained upgrades (issue 43)"
	}
	for _, path := range []string{".status.v1beta2.controlPlane.upgradePlan", ".status.v1beta2.workers.upgradePlan"} {
		additions["clusters.cluster.x-k8s.io "+path] = "upstream v1.14's v1beta1 status field (as v1beta2's status." +
			"controlPlane/workers.upgradePlan), converted directly and written by the topology controller"
	}
	for _, path := range []string{"machinesets.cluster.x-k8s.io .status.versions", "machinedeployments.cluster.x-k8s.io .status.versions",
		"machinepools.cluster.x-k8s.io .status.versions", "kubeadmcontrolplanes.controlplane.cluster.x-k8s.io .status.versions",
		"clusters.cluster.x-k8s.io .status.v1beta2.controlPlane.versions", "clusters.cluster.x-k8s.io .status.v1beta2.workers.versions"} {
		additions[path] = "upstream v1.14's v1beta1 status field (as in v1beta2), converted directly and written by the controllers"
	}
	for _, path := range []string{".status.deletion.waitForPreDrainHookStartTime", ".status.deletion.waitForPreTerminateHookStartTime"} {
		additions["machines.cluster.x-k8s.io "+path] = "upstream v1.14's v1beta1 status field (as in v1beta2), converted directly and written by the Machine controller"
	}
	// The extraEnvs of the control plane components are Kubernetes EnvVars, which gained fileKeyRef in
	// Kubernetes v1.34; upstream v1.10 was generated from an older Kubernetes.
	kubeadmConfigSpecs := map[string]string{
		"kubeadmconfigs.bootstrap.cluster.x-k8s.io":                  ".spec",
		"kubeadmconfigtemplates.bootstrap.cluster.x-k8s.io":          ".spec.template.spec",
		"kubeadmcontrolplanes.controlplane.cluster.x-k8s.io":         ".spec.kubeadmConfigSpec",
		"kubeadmcontrolplanetemplates.controlplane.cluster.x-k8s.io": ".spec.template.spec.kubeadmConfigSpec",
	}
	for crdName, spec := range kubeadmConfigSpecs {
		for _, component := range []string{"apiServer", "controllerManager", "scheduler", "etcd.local"} {
			path := spec + ".clusterConfiguration." + component + ".extraEnvs[].valueFrom.fileKeyRef"
			additions[crdName+" "+path] = "Kubernetes v1.34's EnvVar has this field; upstream v1.10 was " +
				"generated from an older Kubernetes"
		}
		additions[crdName+" "+spec+".files[].contentFormat"] = "upstream v1.14's v1beta1 field (as in v1beta2), " +
			"which capstan implements"
		additions[crdName+" "+spec+".diskSetup.partitions[].diskLayout"] = additions[crdName+" "+spec+".files[].contentFormat"]
		for _, field := range []string{"certificateValidityPeriodDays", "caCertificateValidityPeriodDays", "encryptionAlgorithm"} {
			additions[crdName+" "+spec+".clusterConfiguration."+field] = additions[crdName+" "+spec+".files[].contentFormat"]
		}
	}
	return additions
}()

// allowedWidenings are differences from upstream v1.10 that only accept more than upstream does, each with
// the reason: every object upstream's schema accepts is accepted the same way.
var allowedWidenings = func() map[string]string {
	out := map[string]string{}
	reason := "definitionFrom as the book describes it (\"Variable definition conflicts\": one value per definition of a " +
		"variable whose definitions conflict, e.g. http-proxy twice); upstream v1.10 deprecated the field and keys the " +
		"list by name only, so capstan keys it by name and definitionFrom, defaulted to \"\" (what upstream stores)"
	for _, list := range []string{".spec.topology.variables", ".spec.topology.controlPlane.variables.overrides",
		".spec.topology.workers.machineDeployments[].variables.overrides", ".spec.topology.workers.machinePools[].variables.overrides"} {
		out["clusters.cluster.x-k8s.io v1beta1 "+list+`: x-kubernetes-list-map-keys: upstream ["name"], capstan ["name","definitionFrom"]`] = reason
		out["clusters.cluster.x-k8s.io v1beta1 "+list+`[].definitionFrom: default: upstream "", capstan "\"\""`] = reason
	}
	return out
}()

func TestSchemasMatchUpstream(t *testing.T) {
	g := NewWithT(t)
	upstream, err := LoadDir(upstreamCRDs)
	g.Expect(err).NotTo(HaveOccurred())
	ours, err := crd.All()
	g.Expect(err).NotTo(HaveOccurred())

	served := map[string]bool{}
	for _, o := range ours {
		served[o.Name] = true
		u, found := upstream[o.Name]
		if !found {
			continue
		}
		for _, v := range o.Spec.Versions {
			if v.Name == "v1beta2" && findVersion(u, v.Name) == nil {
				continue // Upstream v1.14's v1beta2: TestV1beta2SchemasMatchUpstream.
			}
			t.Run(o.Name+"/"+v.Name, func(t *testing.T) {
				diffs := Compare(u, o, v.Name)
				for _, d := range diffs {
					if reason, ok := allowedAdditions[d.CRD+" "+d.Path]; ok && d.What == "not in upstream" {
						t.Logf("allowed: %s (%s)", d, reason)
						continue
					}
					if reason, ok := allowedWidenings[d.String()]; ok {
						t.Logf("allowed: %s (%s)", d, reason)
						continue
					}
					t.Errorf("%s", d)
				}
			})
		}
	}
	for name := range upstream {
		if served[name] {
			continue
		}
		if reason, ok := notServed[name]; ok {
			t.Logf("skipped %s: %s", name, reason)
			continue
		}
		t.Errorf("%s: capstan does not serve this CRD of upstream v1.10", name)
	}
}

func TestCompareReportsDifferences(t *testing.T) {
	g := NewWithT(t)
	upstream, err := LoadDir(upstreamCRDs)
	g.Expect(err).NotTo(HaveOccurred())
	u := upstream["machines.cluster.x-k8s.io"]
	g.Expect(u).NotTo(BeNil())

	broken := u.DeepCopy()
	for i := range broken.Spec.Versions {
		if broken.Spec.Versions[i].Name != "v1beta1" {
			continue
		}
		spec := broken.Spec.Versions[i].Schema.OpenAPIV3Schema.Properties["spec"]
		delete(spec.Properties, "providerID")
		version := spec.Properties["version"]
		version.Type = "integer"
		spec.Properties["version"] = version
		spec.Properties["extra"] = spec.Properties["clusterName"]
		broken.Spec.Versions[i].Schema.OpenAPIV3Schema.Properties["spec"] = spec
		broken.Spec.Versions[i].AdditionalPrinterColumns = broken.Spec.Versions[i].AdditionalPrinterColumns[1:]
	}
	broken.Spec.Names.ShortNames = nil

	var got []string
	for _, d := range Compare(u, broken, "v1beta1") {
		got = append(got, d.Path+": "+d.What)
	}
	g.Expect(got).To(ConsistOf(
		ContainSubstring(".spec.providerID: missing in capstan"),
		ContainSubstring(`.spec.version: type: upstream "string", capstan "integer"`),
		ContainSubstring(".spec.extra: not in upstream"),
		HavePrefix("additionalPrinterColumns: "),
		HavePrefix("names.shortNames: "),
	))
}

// TestTestdataIsCurrent keeps the copy of the shared compatibility material in testdata equal to the
// original when the original is next to this repository (it is not on every CI machine).
func TestTestdataIsCurrent(t *testing.T) {
	for copyDir, original := range map[string]string{
		"testdata/upstream-v1.10": "../../../../shared/compat/upstream-v1.10",
		"testdata/upstream-v1.14": "../../../../shared/compat/upstream-v1.14",
		"testdata/seeds":          "../../../../shared/seeds",
	} {
		if _, err := os.Stat(original); err != nil {
			t.Logf("skipped: %s is not here", original)
			continue
		}
		err := filepath.WalkDir(original, func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			rel, _ := filepath.Rel(original, path)
			want, _ := os.ReadFile(path)
			got, readErr := os.ReadFile(filepath.Join(copyDir, rel))
			if readErr != nil || string(got) != string(want) {
				t.Errorf("%s differs from %s: run `make sync-compat`", filepath.Join(copyDir, rel), path)
			}
			return nil
		})
		if err != nil && !strings.Contains(err.Error(), "no such file") {
			t.Fatal(err)
		}
	}
}
