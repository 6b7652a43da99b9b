package core

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/feature"
	"github.com/capstan-dev/capstan/internal/test/builder"
)

// reconciled plays the ClusterClass controller: status.observedGeneration and status.variables.
func reconciled(ctx context.Context, g Gomega, class *clusterv1.ClusterClass, statusVariables []clusterv1.ClusterClassStatusVariable) {
	g.Eventually(func(g Gomega) {
		got := &clusterv1.ClusterClass{}
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(class), got)).To(Succeed())
		got.Status.ObservedGeneration = got.Generation
		got.Status.Variables = statusVariables
		g.Expect(env.Client.Status().Update(ctx, got)).To(Succeed())
	}).Should(Succeed())
}

func jsonRaw(s string) apiextensionsv1.JSON { return apiextensionsv1.JSON{Raw: []byte(s)} }

// TestVariablesAreDefaultedAtAdmission: the defaulting webhook writes the defaults of the variables into
// spec.topology.variables, as upstream's, so that the stored Cluster shows the values patches use; the
// book's definitionFrom example (a value per conflicting definition) is accepted.
func TestVariablesAreDefaultedAtAdmission(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	install(t, ns)
	startManager(t, ns)

	class := topologyClass(ns)
	class.Spec.Variables = []clusterv1.ClusterClassVariable{
		{Name: "replicasHint", Required: true, Schema: clusterv1.VariableSchema{OpenAPIV3Schema: clusterv1.JSONSchemaProps{
			Type: "integer", Default: ptr.To(jsonRaw(`2`))}}},
		{Name: "proxy", Schema: clusterv1.VariableSchema{OpenAPIV3Schema: clusterv1.JSONSchemaProps{Type: "object", Properties: map[string]clusterv1.JSONSchemaProps{
			"url": {Type: "string"}, "enabled": {Type: "boolean", Default: ptr.To(jsonRaw(`true`))}}}}},
		{Name: "http-proxy", Schema: clusterv1.VariableSchema{OpenAPIV3Schema: clusterv1.JSONSchemaProps{Type: "string", Default: ptr.To(jsonRaw(`"proxy.example.com"`))}}},
	}
	class.Spec.Patches = []clusterv1.ClusterClassPatch{{Name: "lbImageRepository", External: &clusterv1.ExternalPatchDefinition{GenerateExtension: ptr.To("generate.ext")}}}
	g.Expect(env.Client.Create(ctx, class)).To(Succeed())
	lbSchema := clusterv1.VariableSchema{OpenAPIV3Schema: clusterv1.JSONSchemaProps{Type: "object", Properties: map[string]clusterv1.JSONSchemaProps{
		"host": {Type: "string"}, "port": {Type: "integer"}}}}
	reconciled(ctx, g, class, []clusterv1.ClusterClassStatusVariable{{
		Name: "http-proxy", DefinitionsConflict: true,
		Definitions: []clusterv1.ClusterClassStatusVariableDefinition{
			{From: "inline", Schema: class.Spec.Variables[2].Schema},
			{From: "lbImageRepository", Required: true, Schema: lbSchema},
		},
	}})

	cluster := topologyCluster(ns, "defaults", "1.30.0", `3`)
	cluster.Spec.Topology.Variables = []clusterv1.ClusterVariable{
		{Name: "proxy", Value: jsonRaw(`{"url":"http://proxy:3128"}`)},
		{Name: "http-proxy", DefinitionFrom: "lbImageRepository", Value: jsonRaw(`{"host":"proxy.example2.com","port":1234}`)},
	}
	g.Expect(env.Client.Create(ctx, cluster)).To(Succeed())
	got := &clusterv1.Cluster{}
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(cluster), got)).To(Succeed())
	g.Expect(got.Spec.Topology.Version).To(Equal("v1.30.0"), "the version gets its v")
	values := map[string]string{}
	for _, v := range got.Spec.Topology.Variables {
		values[v.Name+"/"+v.DefinitionFrom] = string(v.Value.Raw)
	}
	g.Expect(values).To(Equal(map[string]string{
		"proxy/":                       `{"enabled":true,"url":"http://proxy:3128"}`,
		"http-proxy/lbImageRepository": `{"host":"proxy.example2.com","port":1234}`,
		"http-proxy/inline":            `"proxy.example.com"`,
		"replicasHint/":                `2`,
	}), "the defaults are written, one per conflicting definition")

	// A conflicting variable set without definitionFrom is refused, saying what to do.
	bad := topologyCluster(ns, "conflict", "v1.30.0", `3`)
	bad.Spec.Topology.Variables = []clusterv1.ClusterVariable{{Name: "http-proxy", Value: jsonRaw(`"x"`)}}
	err := env.Client.Create(ctx, bad)
	g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "%v", err)
	g.Expect(err.Error()).To(ContainSubstring(`variable "http-proxy" has conflicting definitions (from "inline", "lbImageRepository"): set one value per definition with definitionFrom`))
}

// TestVersionChangeAgainstTheClusterState: a new spec.topology.version is accepted only when the control
// plane runs the old one and is neither provisioning nor upgrading, and every topology MachineDeployment
// and MachinePool runs it and is not upgrading; the refusal names what is still upgrading (upstream's
// messages).
func TestVersionChangeAgainstTheClusterState(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	install(t, ns)
	startManager(t, ns)
	class := topologyClass(ns)
	g.Expect(env.Client.Create(ctx, class)).To(Succeed())
	cluster := topologyCluster(ns, "c", "v1.31.0", `3`)
	g.Expect(env.Client.Create(ctx, cluster)).To(Succeed())

	// The state the topology controller left: the control plane still on v1.30 (BeforeClusterUpgrade
	// holds it), a MachineDeployment on v1.30, a MachinePool on v1.30.
	p := builder.V1Beta1
	cp := p.Object(p.ControlPlaneGroup, builder.ControlPlaneKind, ns, "c-cp")
	_ = unstructured.SetNestedField(cp.Object, "v1.30.0", "spec", "version")
	g.Expect(env.Client.Create(ctx, cp)).To(Succeed())
	_ = unstructured.SetNestedField(cp.Object, "v1.30.0", "status", "version")
	g.Expect(env.Client.Status().Update(ctx, cp)).To(Succeed())
	owned := map[string]string{clusterv1.ClusterNameLabel: "c", clusterv1.ClusterTopologyOwnedLabel: ""}
	label := func(k, v string) map[string]string {
		l := map[string]string{k: v}
		for key, value := range owned {
			l[key] = value
		}
		return l
	}
	md := &clusterv1.MachineDeployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "c-md-0", Labels: label(clusterv1.ClusterTopologyMachineDeploymentNameLabel, "md-0")},
		Spec: clusterv1.MachineDeploymentSpec{ClusterName: "c", Template: clusterv1.MachineTemplateSpec{Spec: clusterv1.MachineSpec{
			ClusterName: "c", Version: ptr.To("v1.30.0"), InfrastructureRef: *builder.Ref(p.Object(p.Infrastructure, builder.InfraMachineTemplateKind, ns, "w"))}}}}
	g.Expect(env.Client.Create(ctx, md)).To(Succeed())
	mp := &clusterv1.MachinePool{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "c-mp-0", Labels: label(clusterv1.ClusterTopologyMachinePoolNameLabel, "mp-0")},
		Spec: clusterv1.MachinePoolSpec{ClusterName: "c", Template: clusterv1.MachineTemplateSpec{Spec: clusterv1.MachineSpec{
			ClusterName: "c", Version: ptr.To("v1.30.0"), Bootstrap: clusterv1.Bootstrap{DataSecretName: ptr.To("data")},
			InfrastructureRef: *builder.Ref(p.InfraMachinePool(ns, "pool", false))}}}}
	g.Expect(env.Client.Create(ctx, mp)).To(Succeed())
	g.Eventually(func(g Gomega) {
		c := &clusterv1.Cluster{}
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(cluster), c)).To(Succeed())
		c.Spec.ControlPlaneRef = builder.Ref(cp)
		g.Expect(env.Client.Update(ctx, c)).To(Succeed())
	}).Should(Succeed())

	setVersion := func(version string) error {
		c := &clusterv1.Cluster{}
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(cluster), c)).To(Succeed())
		c.Spec.Topology.Version = version
		return env.Client.Update(ctx, c)
	}
	// The wedge of issue 36: v1.32 while v1.31 has not reached the control plane.
	err := setVersion("v1.32.0")
	g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "%v", err)
	g.Expect(err.Error()).To(ContainSubstring(`spec.topology.version: Invalid value: "v1.32.0": version cannot be changed: [` +
		`Cluster.spec.topology.version v1.31.0 was not propagated to control plane yet (control plane version v1.30.0), ` +
		`there are still MachineDeployments completing a previous upgrade: [c-md-0], ` +
		`there are still MachinePools completing a previous upgrade: [c-mp-0]]`))

	// The control plane upgrading.
	_ = unstructured.SetNestedField(cp.Object, "v1.31.0", "spec", "version")
	g.Expect(env.Client.Update(ctx, cp)).To(Succeed())
	err = setVersion("v1.32.0")
	g.Expect(err).To(MatchError(ContainSubstring("control plane is still completing a previous upgrade")))

	// Everything on v1.31: accepted. Skipping a minor never is.
	_ = unstructured.SetNestedField(cp.Object, "v1.31.0", "status", "version")
	g.Expect(env.Client.Status().Update(ctx, cp)).To(Succeed())
	for _, o := range []client.Object{md, mp} {
		g.Eventually(func(g Gomega) {
			g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(o), o)).To(Succeed())
			switch w := o.(type) {
			case *clusterv1.MachineDeployment:
				w.Spec.Template.Spec.Version = ptr.To("v1.31.0")
			case *clusterv1.MachinePool:
				w.Spec.Template.Spec.Version = ptr.To("v1.31.0")
			}
			g.Expect(env.Client.Update(ctx, o)).To(Succeed())
		}).Should(Succeed())
	}
	g.Expect(setVersion("v1.33.0")).To(MatchError(ContainSubstring(`version cannot be increased from "v1.31.0" to "v1.33.0"`)))
	g.Eventually(func() error { return setVersion("v1.32.0") }).Should(Succeed())
}

// TestClusterClassChangesThatWouldBreakClusters: an in-place change of a template's kind or group is
// refused naming the Clusters that use the class; so is a rebase to an incompatible class; "inline" is
// reserved as a patch name; external patches need the RuntimeSDK gate; and with ClusterTopology off
// neither ClusterClasses nor topology Clusters are accepted.
func TestClusterClassChangesThatWouldBreakClusters(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	install(t, ns)
	gates := &feature.Gates{}
	g.Expect(gates.Set("RuntimeSDK=false")).To(Succeed())
	startManagerWith(t, ns, Options{FeatureGates: gates})
	class := topologyClass(ns)
	g.Expect(env.Client.Create(ctx, class)).To(Succeed())
	g.Expect(env.Client.Create(ctx, topologyCluster(ns, "user", "v1.30.0", `3`))).To(Succeed())

	changed := &clusterv1.ClusterClass{}
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(class), changed)).To(Succeed())
	changed.Spec.Workers.MachineDeployments[0].Template.Infrastructure.Ref.Kind = "OtherMachineTemplate"
	changed.Spec.ControlPlane.Ref.APIVersion = "controlplane.example.com/v1"
	err := env.Client.Update(ctx, changed)
	g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "%v", err)
	g.Expect(err.Error()).To(And(
		ContainSubstring(`spec.workers.machineDeployments[0].ref.kind: Forbidden: apiVersion.kind cannot be changed from "GenericInfrastructureMachineTemplate" to "OtherMachineTemplate" to prevent incompatible changes in the Clusters: it would break Cluster(s) `+ns+`/user`),
		ContainSubstring(`spec.controlPlane.ref.apiVersion: Forbidden: apiVersion.group cannot be changed from "controlplane.cluster.x-k8s.io" to "controlplane.example.com"`)))

	// A rebase to a class with another control plane kind.
	other := topologyClass(ns)
	other.Name = "other"
	other.Spec.ControlPlane.Ref.Kind = "OtherControlPlaneTemplate"
	g.Expect(env.Client.Create(ctx, other)).To(Succeed())
	c := &clusterv1.Cluster{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "user"}, c)).To(Succeed())
	c.Spec.Topology.Class = "other"
	err = env.Client.Update(ctx, c)
	g.Expect(err).To(MatchError(ContainSubstring(`cannot rebase from ClusterClass class to other: spec.controlPlane.ref.kind: Forbidden: apiVersion.kind cannot be changed from "GenericControlPlaneTemplate" to "OtherControlPlaneTemplate"`)))

	// "inline" is the source of the class's own variables; external patches need the Runtime SDK.
	patched := topologyClass(ns)
	patched.Name = "patched"
	patched.Spec.Patches = []clusterv1.ClusterClassPatch{
		{Name: "inline", Definitions: []clusterv1.PatchDefinition{{Selector: clusterv1.PatchSelector{APIVersion: "v1", Kind: "X"},
			JSONPatches: []clusterv1.JSONPatch{{Op: "add", Path: "/spec/template/spec/x", Value: ptr.To(jsonRaw(`1`))}}}}},
		{Name: "ext", External: &clusterv1.ExternalPatchDefinition{GenerateExtension: ptr.To("generate.ext")}},
	}
	err = env.Client.Create(ctx, patched)
	g.Expect(err).To(MatchError(And(
		ContainSubstring(`spec.patches[0].name: Required value: "inline" can not be used as the name of a patch`),
		ContainSubstring(`spec.patches[1].external: Forbidden: patch.external can be used only if the RuntimeSDK feature flag is enabled`))))

	// ClusterTopology off.
	off := &feature.Gates{}
	g.Expect(off.Set("ClusterTopology=false")).To(Succeed())
	err = invalid("ClusterClass", "x", ClusterClass{FeatureGates: off}.validateClusterClass(topologyClass(ns)))
	g.Expect(err).To(MatchError(ContainSubstring("can be set only if the ClusterTopology feature flag is enabled")))
	_, err = Cluster{FeatureGates: off}.ValidateCreate(ctx, topologyCluster(ns, "x", "v1.30.0", `3`))
	g.Expect(err).To(MatchError(ContainSubstring("spec.topology: Forbidden: can be set only if the ClusterTopology feature flag is enabled")))
}
