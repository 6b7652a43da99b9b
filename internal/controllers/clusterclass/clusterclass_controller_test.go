package clusterclass

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/conditions"
	"github.com/capstan-dev/capstan/internal/contract"
	"github.com/capstan-dev/capstan/internal/reconciler"
	"github.com/capstan-dev/capstan/internal/test/builder"
	"github.com/capstan-dev/capstan/internal/test/envtest"
)

func TestReconcileClusterClass(t *testing.T) {
	scheme, err := envtest.NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	p := builder.V1Beta1
	ns := "default"
	infra := p.Object(p.Infrastructure, builder.InfraClusterTemplateKind, ns, "infra")
	cp := p.Object(p.ControlPlaneGroup, builder.ControlPlaneTemplateKind, ns, "cp")
	// The control plane's CRD serves a newer version of the contract than the class references.
	cpCRD := builder.GenericCRD(p.ControlPlaneGroup, "v1beta1", builder.ControlPlaneTemplateKind, contract.V1Beta1)
	cpCRD.Labels[contract.V1Beta1.Label()] = "v1alpha4_v1beta1"
	infraCRD := builder.GenericCRD(p.Infrastructure, "v1beta1", builder.InfraClusterTemplateKind, contract.V1Beta1)

	tests := []struct {
		name       string
		objects    []client.Object
		variables  []clusterv1.ClusterClassVariable
		wantRefs   metav1.ConditionStatus
		wantRefMsg string
		wantVars   metav1.ConditionStatus
		wantVarMsg string
		wantCPAPI  string
		wantObsGen bool
	}{
		{
			name:      "valid class: references bumped to the newest version, variables listed",
			objects:   []client.Object{infraCRD, cpCRD, infra, cp},
			variables: []clusterv1.ClusterClassVariable{{Name: "region", Required: true, Schema: clusterv1.VariableSchema{OpenAPIV3Schema: clusterv1.JSONSchemaProps{Type: "string"}}}},
			wantRefs:  metav1.ConditionTrue, wantVars: metav1.ConditionTrue, wantCPAPI: "controlplane.cluster.x-k8s.io/v1beta1", wantObsGen: true,
		},
		{
			name:     "missing template",
			objects:  []client.Object{infraCRD, cpCRD, cp},
			wantRefs: metav1.ConditionFalse, wantRefMsg: "GenericInfrastructureClusterTemplate infra does not exist",
			wantVars: metav1.ConditionTrue, wantCPAPI: "controlplane.cluster.x-k8s.io/v1beta1",
		},
		{
			name:      "invalid variable",
			objects:   []client.Object{infraCRD, cpCRD, infra, cp},
			variables: []clusterv1.ClusterClassVariable{{Name: "builtin", Schema: clusterv1.VariableSchema{OpenAPIV3Schema: clusterv1.JSONSchemaProps{Type: "string"}}}},
			wantRefs:  metav1.ConditionTrue, wantVars: metav1.ConditionFalse, wantVarMsg: `"builtin" is a reserved variable name`,
			wantCPAPI: "controlplane.cluster.x-k8s.io/v1beta1", wantObsGen: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			cpRef := builder.Ref(cp)
			cpRef.APIVersion = "controlplane.cluster.x-k8s.io/v1alpha4"
			class := &clusterv1.ClusterClass{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "class", Generation: 1, UID: "class-uid"},
				Spec: clusterv1.ClusterClassSpec{
					Infrastructure: clusterv1.LocalObjectTemplate{Ref: builder.Ref(infra)},
					ControlPlane:   clusterv1.ControlPlaneClass{LocalObjectTemplate: clusterv1.LocalObjectTemplate{Ref: cpRef}},
					Variables:      tt.variables,
				},
			}
			objs := make([]client.Object, 0, len(tt.objects)+1)
			for _, o := range tt.objects {
				objs = append(objs, o.DeepCopyObject().(client.Object))
			}
			objs = append(objs, class)
			c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).WithStatusSubresource(class).Build()
			r := &Reconciler{Client: c, Contracts: &contract.Resolver{Client: c}}
			res, err := reconciler.Guarded(c, &r.writes, r).Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKeyFromObject(class)})
			g.Expect(err).NotTo(HaveOccurred())
			// A class waiting for its templates is looked at again: nothing else wakes the controller.
			g.Expect(res.RequeueAfter > 0).To(Equal(tt.wantRefs == metav1.ConditionFalse))
			got := &clusterv1.ClusterClass{}
			g.Expect(c.Get(context.Background(), client.ObjectKeyFromObject(class), got)).To(Succeed())
			g.Expect(got.Spec.ControlPlane.Ref.APIVersion).To(Equal(tt.wantCPAPI))
			refs := conditions.GetV1Beta2(got, clusterv1.ClusterClassRefVersionsUpToDateV1Beta2Condition)
			g.Expect(refs.Status).To(Equal(tt.wantRefs))
			g.Expect(refs.Message).To(ContainSubstring(tt.wantRefMsg))
			vars := conditions.GetV1Beta2(got, clusterv1.ClusterClassVariablesReadyV1Beta2Condition)
			g.Expect(vars.Status).To(Equal(tt.wantVars))
			g.Expect(vars.Message).To(ContainSubstring(tt.wantVarMsg))
			g.Expect(got.Status.Variables).To(HaveLen(len(tt.variables)))
			g.Expect(got.Status.ObservedGeneration == got.Generation).To(Equal(tt.wantObsGen))
			// The class owns the templates it references, as upstream's: clusterctl move carries them with it.
			for _, tmpl := range []client.Object{infra, cp} {
				u := tmpl.DeepCopyObject().(client.Object)
				if err := c.Get(context.Background(), client.ObjectKeyFromObject(tmpl), u); err != nil {
					continue // not created in this case
				}
				g.Expect(u.GetOwnerReferences()).To(ContainElement(And(HaveField("Kind", "ClusterClass"), HaveField("Name", "class"), HaveField("UID", BeEquivalentTo("class-uid")))),
					"%s", u.GetName())
			}
		})
	}
}
