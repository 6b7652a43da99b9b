package topology

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
)

func TestPatchesEnabled(t *testing.T) {
	g := NewWithT(t)
	class := &clusterv1.ClusterClass{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "local"},
		Spec: clusterv1.ClusterClassSpec{
			Variables: []clusterv1.ClusterClassVariable{{Name: "pss", Schema: clusterv1.VariableSchema{OpenAPIV3Schema: clusterv1.JSONSchemaProps{
				Type: "boolean", Default: &apiextensionsv1.JSON{Raw: []byte("true")}}}}},
			Patches: []clusterv1.ClusterClassPatch{
				{Name: "always"},
				{Name: "by-default", EnabledIf: ptr.To("{{ .pss }}")},
				{Name: "by-version", EnabledIf: ptr.To(`{{ semverCompare ">= v1.37.0" .builtin.cluster.topology.version }}`)},
				{Name: "by-name", EnabledIf: ptr.To(`{{ eq .builtin.cluster.name "other" }}`)},
				{Name: "per-template", EnabledIf: ptr.To(`{{ .builtin.machineDeployment.class }}`)},
			},
		},
	}
	cluster := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a"},
		Spec: clusterv1.ClusterSpec{Topology: &clusterv1.Topology{Class: "local", Version: "v1.37.1"}}}
	states, err := PatchesEnabled(context.Background(), class, cluster)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(states).To(HaveLen(5))
	for i, want := range []bool{true, true, true, false} {
		g.Expect(states[i].Err).NotTo(HaveOccurred(), states[i].Name)
		g.Expect(states[i].Enabled).To(Equal(want), states[i].Name)
	}
	g.Expect(states[4].Err).To(MatchError(ContainSubstring("each template")))

	cluster.Spec.Topology.Variables = []clusterv1.ClusterVariable{{Name: "pss", Value: apiextensionsv1.JSON{Raw: []byte("false")}}}
	states, err = PatchesEnabled(context.Background(), class, cluster)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(states[1].Enabled).To(BeFalse(), "the Cluster's value wins over the default")
}
