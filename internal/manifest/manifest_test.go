package manifest

import (
	"errors"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name      string
		data      string
		wantKinds []string
		wantErr   string
		wantLine  int
	}{
		{name: "empty", data: "", wantKinds: nil},
		{name: "one document", data: "kind: A\n", wantKinds: []string{"A"}},
		{
			name:      "separators, comments and empty documents",
			data:      "---\n# only a comment\n---\nkind: A\n--- # a comment\nkind: B\n---\n\n---\nkind: C\n...\n",
			wantKinds: []string{"A", "B", "C"},
		},
		{name: "no trailing newline", data: "kind: A\n---\nkind: B", wantKinds: []string{"A", "B"}},
		{name: "--- inside a block scalar is text", data: "kind: A\ndata: |\n  ---x\n", wantKinds: []string{"A"}},
		{name: "malformed document", data: "kind: A\n---\nkind: B\n  bad: indent\n", wantErr: "YAML document 2 (starting at line 3)", wantLine: 3},
		{name: "not a mapping", data: "kind: A\n---\n- a\n- b\n", wantErr: "YAML document 2 (starting at line 3): not a mapping of keys to values"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			objs, err := Parse([]byte(tt.data))
			if tt.wantErr != "" {
				g.Expect(err).To(MatchError(ContainSubstring(tt.wantErr)))
				var docErr *DocumentError
				g.Expect(errors.As(err, &docErr)).To(BeTrue())
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			var kinds []string
			for _, o := range objs {
				kinds = append(kinds, o.GetKind())
			}
			g.Expect(kinds).To(Equal(tt.wantKinds))
		})
	}
}

func TestParseKeepsIntegers(t *testing.T) {
	g := NewWithT(t)
	objs, err := Parse([]byte("kind: A\nspec:\n  replicas: 3\n  ratio: 0.5\n"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(objs[0].Object["spec"]).To(Equal(map[string]any{"replicas": int64(3), "ratio": 0.5}))
	// Unstructured objects can be deep-copied only with int64 numbers.
	g.Expect(func() { objs[0].DeepCopy() }).NotTo(Panic())
}

func TestMarshal(t *testing.T) {
	g := NewWithT(t)
	objs, err := Parse([]byte("kind: B\napiVersion: v1\nmetadata: {name: b}\n---\napiVersion: v1\nkind: A\n"))
	g.Expect(err).NotTo(HaveOccurred())
	out, err := Marshal(objs)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(string(out)).To(Equal("apiVersion: v1\nkind: B\nmetadata:\n  name: b\n---\napiVersion: v1\nkind: A"))
	empty, err := Marshal(nil)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(empty).To(BeEmpty())
}

func TestScope(t *testing.T) {
	g := NewWithT(t)
	objs, err := Parse([]byte(strings.Join([]string{
		"apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nspec:\n  group: example.com\n  scope: Cluster\n  names: {kind: Global}\n",
		"apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nspec:\n  group: example.com\n  scope: Namespaced\n  names: {kind: Local}\n",
		"apiVersion: example.com/v1\nkind: Global\n",
		"apiVersion: example.com/v1\nkind: Local\n",
		"apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\n",
		"apiVersion: v1\nkind: ConfigMap\n",
	}, "---\n")))
	g.Expect(err).NotTo(HaveOccurred())
	s := NewScope(objs)
	var scoped []bool
	for i := range objs {
		scoped = append(scoped, s.IsClusterScoped(&objs[i]))
	}
	g.Expect(scoped).To(Equal([]bool{true, true, true, false, true, false}))
}

func TestImages(t *testing.T) {
	g := NewWithT(t)
	objs, err := Parse([]byte(`apiVersion: apps/v1
kind: Deployment
spec:
  template:
    spec:
      initContainers:
      - {name: init, image: busybox:1}
      containers:
      - {name: manager, image: registry.k8s.io/capi/manager:v1}
      - {name: sidecar, image: registry.k8s.io/capi/manager:v1}
---
apiVersion: batch/v1
kind: CronJob
spec:
  jobTemplate:
    spec:
      template:
        spec:
          containers:
          - {name: job, image: registry.k8s.io/job:v2}
---
apiVersion: v1
kind: Pod
spec:
  containers:
  - {name: pod, image: registry.k8s.io/pod:v3}
---
apiVersion: v1
kind: ConfigMap
data:
  image: not-an-image
`))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(Images(objs)).To(Equal([]string{"busybox:1", "registry.k8s.io/capi/manager:v1", "registry.k8s.io/job:v2", "registry.k8s.io/pod:v3"}))

	g.Expect(ReplaceImages(objs, func(image string) (string, error) { return "mirror/" + image, nil })).To(Succeed())
	g.Expect(Images(objs)).To(Equal([]string{"mirror/busybox:1", "mirror/registry.k8s.io/capi/manager:v1", "mirror/registry.k8s.io/job:v2", "mirror/registry.k8s.io/pod:v3"}))

	err = ReplaceImages(objs, func(string) (string, error) { return "", errors.New("boom") })
	g.Expect(err).To(MatchError(ContainSubstring("Deployment , container init: boom")))
}

func TestDocuments(t *testing.T) {
	g := NewWithT(t)
	docs := Documents([]byte("a: 1\n--- # comment\nb: 2\n---\r\nc: |\n  ---x\n"))
	var got []string
	for _, d := range docs {
		got = append(got, string(d))
	}
	g.Expect(got).To(Equal([]string{"a: 1\n", "b: 2\n", "c: |\n  ---x\n"}))
	g.Expect(Documents(nil)).To(BeEmpty())
}
