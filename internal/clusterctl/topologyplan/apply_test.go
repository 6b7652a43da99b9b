package topologyplan

import (
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

func object(t *testing.T, text string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(text), &u.Object); err != nil {
		t.Fatal(err)
	}
	return u
}

// TestApplyOfflineOwnership: a field the topology set before (in the current object's managedFields) and no
// longer sets is removed, one that another writer set stays; without managedFields every current field is
// another writer's. Lists are replaced whole.
func TestApplyOfflineOwnership(t *testing.T) {
	desired := `apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
kind: DockerMachineTemplate
metadata: {name: t, namespace: default}
spec:
  template:
    spec:
      extraMounts: [{containerPath: /a, hostPath: /a}]
`
	tests := []struct {
		name    string
		current string
		want    map[string]any
	}{
		{
			name: "without managedFields",
			current: `apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
kind: DockerMachineTemplate
metadata: {name: t, namespace: default}
spec:
  template:
    spec:
      customImage: kindest/node
      extraMounts: [{containerPath: /b, hostPath: /b}, {containerPath: /c, hostPath: /c}]
`,
			want: map[string]any{"customImage": "kindest/node", "extraMounts": []any{map[string]any{"containerPath": "/a", "hostPath": "/a"}}},
		},
		{
			name: "a field the topology set is dropped",
			current: `apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
kind: DockerMachineTemplate
metadata:
  name: t
  namespace: default
  managedFields:
  - manager: capi-topology
    operation: Apply
    apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
    fieldsType: FieldsV1
    fieldsV1: {"f:spec": {"f:template": {"f:spec": {"f:customImage": {}, "f:extraMounts": {}}}}}
  - manager: someone-else
    operation: Update
    apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
    fieldsType: FieldsV1
    fieldsV1: {"f:spec": {"f:template": {"f:spec": {"f:preLoadImages": {}}}}}
spec:
  template:
    spec:
      customImage: kindest/node
      preLoadImages: [busybox]
      extraMounts: [{containerPath: /a, hostPath: /a}]
`,
			want: map[string]any{"preLoadImages": []any{"busybox"}, "extraMounts": []any{map[string]any{"containerPath": "/a", "hostPath": "/a"}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			after, err := applyOffline(object(t, tt.current), object(t, desired))
			g.Expect(err).NotTo(HaveOccurred())
			spec, _, _ := unstructured.NestedMap(after.Object, "spec", "template", "spec")
			g.Expect(spec).To(Equal(tt.want))
		})
	}
}
