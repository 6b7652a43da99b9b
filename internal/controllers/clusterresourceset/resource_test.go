package clusterresourceset

import (
	"crypto/sha256"
	"fmt"
	"testing"

	. "github.com/onsi/gomega"
)

func TestParseObjects(t *testing.T) {
	tests := []struct {
		name    string
		data    string
		want    []string // kind/name in order
		wantErr string
	}{
		{name: "YAML documents, Namespaces and CRDs first",
			data: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: ns}\n---\napiVersion: v1\nkind: Namespace\nmetadata: {name: ns}\n---\n" +
				"apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: foos.example.com}\n",
			want: []string{"Namespace/ns", "CustomResourceDefinition/foos.example.com", "ConfigMap/a"}},
		{name: "a JSON object", data: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"}}`, want: []string{"ConfigMap/a"}},
		{name: "a JSON list", data: ` [{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"}},{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"n"}}]`,
			want: []string{"Namespace/n", "ConfigMap/a"}},
		{name: "comments only", data: "# nothing\n", want: nil},
		{name: "no kind", data: "apiVersion: v1\nmetadata: {name: a}\n", wantErr: "object 1 has no apiVersion or kind"},
		{name: "not YAML", data: "a: [b\n", wantErr: "document 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			objs, err := parseObjects([]byte(tt.data))
			if tt.wantErr != "" {
				g.Expect(err).To(MatchError(ContainSubstring(tt.wantErr)))
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			var got []string
			for _, o := range objs {
				got = append(got, o.GetKind()+"/"+o.GetName())
			}
			g.Expect(got).To(Equal(tt.want))
		})
	}
}

// TestHashIsUpstreams: the binding's hash is sha256 over the values in key order, as upstream's, so that
// bindings written by upstream's controller are not applied again after a move or an upgrade.
func TestHashIsUpstreams(t *testing.T) {
	g := NewWithT(t)
	r := &resource{data: [][]byte{[]byte("a: 1"), []byte("b: 2")}}
	g.Expect(r.hash()).To(Equal(fmt.Sprintf("sha256:%x", sha256.Sum256([]byte("a: 1b: 2")))))
}
