package release

import (
	"slices"
	"testing"

	. "github.com/onsi/gomega"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/capstan-dev/capstan/internal/clusterctl/components"
	"github.com/capstan-dev/capstan/internal/manifest"
)

// capstan's providers serve their webhooks with certificates they manage themselves: clusterctl init
// must not install cert-manager for them.
func TestProvidersNeedNoCertManager(t *testing.T) {
	g := NewWithT(t)
	providers, err := Providers()
	g.Expect(err).NotTo(HaveOccurred())
	webhooks := 0
	for _, p := range providers {
		data, err := p.Components(DefaultVersion)
		g.Expect(err).NotTo(HaveOccurred())
		objs, err := manifest.Parse(data)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(components.NeedsCertManager(objs)).To(BeFalse(), "%s needs cert-manager", p.Label())
		for _, o := range objs {
			if o.GetKind() == "ValidatingWebhookConfiguration" {
				webhooks++
			}
		}
	}
	g.Expect(webhooks).To(BeNumerically(">", 0), "the core's webhooks are among the components")
}

// The CRDs served in several versions (v1beta1 and v1beta2; IPAM's and runtime's v1alpha1) call the
// conversion webhook of the manager that owns them: a Service that the provider's components hold, in their
// namespace, and the manager may write the CA bundle into each.
func TestConversionWebhooksAreServicesOfTheComponents(t *testing.T) {
	for _, tt := range []struct {
		name      string
		provider  func() (Provider, error)
		converted []string
	}{
		{"core", Core, []string{
			"clusters.cluster.x-k8s.io", "clusterclasses.cluster.x-k8s.io", "machines.cluster.x-k8s.io",
			"machinesets.cluster.x-k8s.io", "machinedeployments.cluster.x-k8s.io", "machinehealthchecks.cluster.x-k8s.io",
			"machinepools.cluster.x-k8s.io", "machinedrainrules.cluster.x-k8s.io",
			"clusterresourcesets.addons.cluster.x-k8s.io", "clusterresourcesetbindings.addons.cluster.x-k8s.io",
			"ipaddressclaims.ipam.cluster.x-k8s.io", "ipaddresses.ipam.cluster.x-k8s.io", "extensionconfigs.runtime.cluster.x-k8s.io",
		}},
		{"kubeadm bootstrap", KubeadmBootstrap, []string{"kubeadmconfigs.bootstrap.cluster.x-k8s.io", "kubeadmconfigtemplates.bootstrap.cluster.x-k8s.io"}},
		{"kubeadm control plane", KubeadmControlPlane, []string{
			"kubeadmcontrolplanes.controlplane.cluster.x-k8s.io", "kubeadmcontrolplanetemplates.controlplane.cluster.x-k8s.io"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			p, err := tt.provider()
			g.Expect(err).NotTo(HaveOccurred())
			data, err := p.Components(DefaultVersion)
			g.Expect(err).NotTo(HaveOccurred())
			objs, err := manifest.Parse(data)
			g.Expect(err).NotTo(HaveOccurred())
			services := map[string]bool{}
			for _, o := range objs {
				if o.GetKind() == "Service" {
					services[o.GetNamespace()+"/"+o.GetName()] = true
				}
			}
			var converted []string
			for _, o := range objs {
				if o.GetKind() != "CustomResourceDefinition" {
					continue
				}
				strategy, _, _ := unstructured.NestedString(o.Object, "spec", "conversion", "strategy")
				if strategy != "Webhook" {
					continue
				}
				svc, _, _ := unstructured.NestedStringMap(o.Object, "spec", "conversion", "webhook", "clientConfig", "service")
				g.Expect(services).To(HaveKey(svc["namespace"]+"/"+svc["name"]), "the conversion webhook of %s is a Service of the components", o.GetName())
				g.Expect(svc["path"]).To(Equal("/convert"))
				converted = append(converted, o.GetName())
			}
			g.Expect(converted).To(ConsistOf(tt.converted))
			for _, name := range converted {
				g.Expect(mayUpdateCRD(g, objs, name)).To(BeTrue(), "the provider's ClusterRole lets the manager update CRD %s", name)
			}
		})
	}
}

// mayUpdateCRD reports whether a ClusterRole of objs grants update on the CustomResourceDefinition name.
func mayUpdateCRD(g Gomega, objs []unstructured.Unstructured, name string) bool {
	for _, o := range objs {
		if o.GetKind() != "ClusterRole" {
			continue
		}
		role := &rbacv1.ClusterRole{}
		g.Expect(runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, role)).To(Succeed())
		for _, r := range role.Rules {
			if slices.Contains(r.APIGroups, "apiextensions.k8s.io") && slices.Contains(r.Resources, "customresourcedefinitions") &&
				slices.Contains(r.Verbs, "update") && (len(r.ResourceNames) == 0 || slices.Contains(r.ResourceNames, name)) {
				return true
			}
		}
	}
	return false
}
