package operator_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	managementv1 "github.com/capstan-dev/capstan/api/management/v1alpha1"
	operatorv1 "github.com/capstan-dev/capstan/api/operator/v1alpha2"
	clioperator "github.com/capstan-dev/capstan/internal/cli/capstan/operator"
	"github.com/capstan-dev/capstan/internal/cli/clusterctl/clusterctltest"
	"github.com/capstan-dev/capstan/internal/clusterctl/repository/repositorytest"
	"github.com/capstan-dev/capstan/internal/operator"
	"github.com/capstan-dev/capstan/internal/operator/operatortest"
)

// TestProposalExamples: each complete provider object of the operator proposal applies server-side as
// written and installs its provider, whose release an emulated GitHub (or, air-gapped, ConfigMaps)
// serves: the operator translates it into the operator.cluster.x-k8s.io/v1alpha2 object of the same name,
// says so in a Translated condition, and mirrors that object's status.
func TestProposalExamples(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	examples := operatortest.ProposalExamples(t)
	g.Expect(examples).To(HaveLen(6), "the proposal has six complete provider objects")

	gh := repositorytest.NewServer(t)
	operatortest.PublishProposalReleases(t, gh, "v1beta1")

	operatortest.Start(t, env.Config, operator.Options{Transport: gh.Client().Transport, CheckManagerArgs: clioperator.CheckManagerArgs})
	clusterctltest.MarkDeploymentsAvailable(t, env.Client)
	installCore(t, operatortest.V1, operatortest.Releases(t, "")["cluster-api"][operatortest.V1])

	// What the examples refer to: their namespaces, variables Secrets and, air-gapped, ConfigMaps.
	for ns, region := range map[string]string{"capa-system": "eu-west-1", "capi-kubeadm-control-plane-system": "", "capz-system": "westeurope", "capv-system": "dc1"} {
		namespace(t, ns)
		for _, name := range []string{"aws-variables", "capi-variables", "azure-variables", "vsphere-variables"} {
			g.Expect(client.IgnoreAlreadyExists(env.Client.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
				StringData: map[string]string{"REGION": region}}))).To(Succeed())
		}
	}
	for _, v := range []string{"v0.4.8", "v0.4.9"} {
		cm := operatortest.ConfigMap(t, "capz-system", map[string]string{"provider-components": "azure"}, operatortest.ProposalRelease(t, "azure", v, "capz-system", "capz", "v1beta1"), false)
		g.Expect(client.IgnoreAlreadyExists(env.Client.Create(ctx, cm))).To(Succeed())
	}

	type check func(g Gomega, ns string)
	deploymentOf := func(g Gomega, ns, name string) *appsv1.Deployment { return deployment(g, ns, name) }
	checks := []check{
		// 1. aws with controller flags: manager.metricsAddress, syncPeriod in seconds, args as numbers.
		func(g Gomega, ns string) {
			args := deploymentOf(g, ns, "capa-controller-manager").Spec.Template.Spec.Containers[0].Args
			g.Expect(args).To(ContainElements("--metrics-bind-addr=:8181", "--sync-period=660s", "--awscluster-concurrency=12", "--awsmachine-concurrency=11"))
			cm := &corev1.ConfigMap{}
			g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "settings"}, cm)).To(Succeed())
			g.Expect(cm.Data).To(HaveKeyWithValue("region", "eu-west-1"), "variables come from secretName")
		},
		// 2. aws with another image: the built-in source of its name.
		func(g Gomega, ns string) {
			g.Expect(deploymentOf(g, ns, "capa-controller-manager").Spec.Template.Spec.Containers[0].Image).To(Equal("gcr.io/myregistry/capa-controller:v0.6.0-foo"))
		},
		// 3. the kubeadm control plane provider with resource limits: capstan's own, from its GitHub release.
		func(g Gomega, ns string) {
			c := deploymentOf(g, ns, "capi-kubeadm-control-plane-controller-manager").Spec.Template.Spec.Containers[0]
			g.Expect(c.Resources.Limits).To(HaveKeyWithValue(corev1.ResourceMemory, resource.MustParse("30Mi")))
			g.Expect(c.Resources.Requests).To(HaveKeyWithValue(corev1.ResourceCPU, resource.MustParse("100m")))
			g.Expect(c.Image).To(HaveSuffix(":v0.3.10"))
		},
		// 4. myazure from another repository.
		func(g Gomega, ns string) {
			g.Expect(deploymentOf(g, ns, "myazure-controller-manager").Spec.Template.Spec.Containers[0].Image).To(HaveSuffix("myazure-controller:v0.4.9"))
		},
		// 5. vsphere by its name only.
		func(g Gomega, ns string) {
			g.Expect(deploymentOf(g, ns, "capv-controller-manager").Spec.Template.Spec.Containers[0].Image).To(HaveSuffix("vsphere-controller:v0.4.9"))
		},
		// 6. azure, air-gapped, from the ConfigMaps its selector names.
		func(g Gomega, ns string) {
			g.Expect(deploymentOf(g, ns, "capz-controller-manager").Spec.Template.Spec.Containers[0].Image).To(HaveSuffix("azure-controller:v0.4.9"))
		},
	}
	for i, example := range examples {
		t.Run(fmt.Sprintf("%d %s %s", i+1, example.GetKind(), example.GetName()), func(t *testing.T) {
			g := NewWithT(t)
			kind := example.GetKind()
			ns, name := example.GetNamespace(), example.GetName()
			obj := example.DeepCopy()
			g.Expect(env.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(obj), client.FieldOwner("kubectl"))).To(Succeed(), "applied server-side as written")

			in := newProposalKind(t, kind)
			in.SetNamespace(ns)
			in.SetName(name)
			g.Eventually(func(g Gomega) {
				g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(in), in)).To(Succeed())
				st := in.GetProviderStatus()
				c := meta.FindStatusCondition(st.Conditions, managementv1.TranslatedCondition)
				g.Expect(c).NotTo(BeNil(), "conditions: %v", st.Conditions)
				g.Expect(c.Status).To(Equal(metav1.ConditionTrue), "conditions: %v", st.Conditions)
				g.Expect(c.Message).To(Equal(fmt.Sprintf("Installed through %s.operator.cluster.x-k8s.io %s/%s (operator.cluster.x-k8s.io/v1alpha2), which says how the installation goes", kind, ns, name)))
				g.Expect(st.InstalledVersion).To(HaveValue(Equal(in.GetProviderSpec().Version)), "conditions: %v", st.Conditions)
				g.Expect(meta.IsStatusConditionTrue(st.Conditions, operatorv1.ReadyCondition)).To(BeTrue(), "conditions: %v", st.Conditions)
				checks[i](g, ns)
			}, timeout, poll).Should(Succeed())

			// The v1alpha2 object it stands for belongs to it.
			target := newTargetKind(t, kind)
			g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, target)).To(Succeed())
			g.Expect(metav1.IsControlledBy(target, in)).To(BeTrue())

			// Deleting it removes what was installed.
			deleteAndWait(t, in)
			g.Eventually(func() bool {
				return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(target), target))
			}, timeout, poll).Should(BeTrue())
			g.Expect(inventory(g)).NotTo(ContainElement(HavePrefix(ns + "/" + operatorv1.ManifestLabel(target) + " ")))
		})
	}

	t.Run("what v1alpha2 cannot hold is a condition that says what to do", func(t *testing.T) {
		g := NewWithT(t)
		ns := env.NewNamespace(t)
		bad := &unstructured.Unstructured{}
		g.Expect(bad.UnmarshalJSON([]byte(`{"apiVersion": "management.cluster.x-k8s.io/v1alpha1", "kind": "InfrastructureProvider",
			"metadata": {"name": "vsphere", "namespace": "` + ns + `"}, "spec": {"version": "v0.4.9", "manager": {"syncPeriod": "often"}}}`))).To(Succeed())
		g.Expect(env.Client.Create(ctx, bad)).To(Succeed())
		in := &managementv1.InfrastructureProvider{}
		g.Eventually(func(g Gomega) {
			g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(bad), in)).To(Succeed())
			c := meta.FindStatusCondition(in.Status.Conditions, managementv1.TranslatedCondition)
			g.Expect(c).NotTo(BeNil())
			g.Expect(c.Reason).To(Equal(managementv1.TranslationFailedReason))
			g.Expect(c.Message).To(Equal(`Spec.manager.syncPeriod: Invalid value: "often": give a number of seconds (660) or a duration (11m); fix it, the operator cannot install the provider otherwise`))
		}, timeout, poll).Should(Succeed())
		deleteAndWait(t, in)
	})

	// The proposal's examples are infrastructure and control plane providers; the other two kinds it
	// serves are translated the same way.
	for _, kind := range []string{"CoreProvider", "BootstrapProvider"} {
		t.Run("a "+kind+" is translated", func(t *testing.T) {
			g := NewWithT(t)
			ns := env.NewNamespace(t)
			in := newProposalKind(t, kind)
			in.SetNamespace(ns)
			in.SetName("proposal-" + strings.ToLower(kind))
			in.GetProviderSpec().Version = operatortest.V1
			create(t, in)
			target := newTargetKind(t, kind)
			g.Eventually(func(g Gomega) {
				g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(in), in)).To(Succeed())
				c := meta.FindStatusCondition(in.GetProviderStatus().Conditions, managementv1.TranslatedCondition)
				g.Expect(c).NotTo(BeNil(), "conditions: %v", in.GetProviderStatus().Conditions)
				g.Expect(c.Status).To(Equal(metav1.ConditionTrue), "conditions: %v", in.GetProviderStatus().Conditions)
				g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(in), target)).To(Succeed())
				g.Expect(metav1.IsControlledBy(target, in)).To(BeTrue())
				g.Expect(target.GetProviderSpec().Version).To(Equal(operatortest.V1))
			}, timeout, poll).Should(Succeed())
			deleteAndWait(t, in)
			g.Eventually(func() bool {
				return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(target), target))
			}, timeout, poll).Should(BeTrue())
		})
	}

	t.Run("an image by parts", func(t *testing.T) {
		g := NewWithT(t)
		in := &managementv1.InfrastructureProvider{ObjectMeta: metav1.ObjectMeta{Namespace: "capv-system", Name: "vsphere"}}
		in.Spec.Version, in.Spec.SecretName = "v0.4.9", "vsphere-variables"
		in.Spec.Deployment = &managementv1.DeploymentSpec{Containers: []managementv1.ContainerSpec{{Name: "manager",
			Image: &managementv1.Image{Parts: &operatorv1.ImageMeta{Repository: "mirror.internal/capi"}}}}}
		create(t, in)
		g.Eventually(func(g Gomega) {
			g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(in), in)).To(Succeed())
			d := &appsv1.Deployment{}
			g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: "capv-system", Name: "capv-controller-manager"}, d)).To(Succeed(), "conditions: %v", in.Status.Conditions)
			g.Expect(d.Spec.Template.Spec.Containers[0].Image).To(Equal("mirror.internal/capi/vsphere-controller:v0.4.9"))
		}, timeout, poll).Should(Succeed())
		deleteAndWait(t, in)
	})
}

func newProposalKind(t *testing.T, name string) managementv1.Provider {
	for _, k := range managementv1.Kinds() {
		if k.Name == name {
			return k.New()
		}
	}
	t.Fatalf("no kind %s in %s", name, managementv1.GroupVersion)
	return nil
}

func newTargetKind(t *testing.T, name string) operatorv1.GenericProvider {
	for _, k := range operatorv1.Kinds() {
		if strings.EqualFold(k.Name, name) {
			return k.New()
		}
	}
	t.Fatalf("no kind %s in %s", name, operatorv1.GroupVersion)
	return nil
}
