package controllermanager

import (
	"testing"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/reconciler"
)

// TestListsOfOneClusterUseTheIndex: a list of an indexed kind by the cluster-name label is answered from
// reconciler.ClusterNameIndex, its label selector kept; other lists are left as they are.
func TestListsOfOneClusterUseTheIndex(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := clusterv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	idx := &clusterIndexes{scheme: scheme}
	idx.indexed(&clusterv1.Machine{}, reconciler.ClusterNameIndex)
	idx.indexed(&clusterv1.MachineSet{}, "another-index")

	fieldsOf := func(list client.ObjectList, opts ...client.ListOption) (fields.Selector, labels.Selector, string) {
		o := &client.ListOptions{}
		o.ApplyOptions(idx.listOptions(list, opts))
		return o.FieldSelector, o.LabelSelector, o.Namespace
	}

	f, l, ns := fieldsOf(&clusterv1.MachineList{}, client.InNamespace("ns"),
		client.MatchingLabels{clusterv1.ClusterNameLabel: "c1", clusterv1.MachineDeploymentNameLabel: "md"})
	if f == nil || f.String() != reconciler.ClusterNameIndex+"=c1" {
		t.Errorf("a list of Machines by cluster-name is not answered from the index: field selector %v", f)
	}
	if l == nil || !l.Matches(labels.Set{clusterv1.ClusterNameLabel: "c1", clusterv1.MachineDeploymentNameLabel: "md"}) ||
		l.Matches(labels.Set{clusterv1.ClusterNameLabel: "c1"}) || ns != "ns" {
		t.Errorf("the list lost its label selector or namespace: %v, %q", l, ns)
	}

	for name, c := range map[string]struct {
		list client.ObjectList
		opts []client.ListOption
	}{
		"a kind without the index": {&clusterv1.MachineSetList{}, []client.ListOption{client.MatchingLabels{clusterv1.ClusterNameLabel: "c1"}}},
		"no cluster-name label":    {&clusterv1.MachineList{}, []client.ListOption{client.MatchingLabels{clusterv1.MachineDeploymentNameLabel: "md"}}},
		"a field selector already": {&clusterv1.MachineList{}, []client.ListOption{client.MatchingLabels{clusterv1.ClusterNameLabel: "c1"}, client.MatchingFields{"other": "x"}}},
		"any cluster-name":         {&clusterv1.MachineList{}, []client.ListOption{client.HasLabels{clusterv1.ClusterNameLabel}}},
		"no selector":              {&clusterv1.MachineList{}, nil},
	} {
		if f, _, _ := fieldsOf(c.list, c.opts...); f != nil && f.String() != "other=x" {
			t.Errorf("%s: the list was changed to select %v", name, f)
		}
	}
}
