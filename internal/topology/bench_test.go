package topology

import (
	"context"
	"fmt"
	"strings"
	"testing"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
)

// BenchmarkCompute computes a steady Cluster with 10 MachineDeployments and 20 patches (target: under 5 ms
// per computation).
func BenchmarkCompute(b *testing.B) {
	var vars, patches strings.Builder
	for i := range 20 {
		fmt.Fprintf(&vars, "\n- name: v%d\n  required: false\n  schema:\n    openAPIV3Schema:\n      type: string\n      default: value-%d\n      x-kubernetes-validations:\n      - rule: self.size() < 64\n", i, i)
		selector := kcpSelector[7:]
		path := fmt.Sprintf("/spec/template/spec/kubeadmConfigSpec/p%d", i)
		if i%2 == 1 {
			selector = workerSelector[7:]
			path = fmt.Sprintf("/spec/template/spec/p%d", i)
		}
		fmt.Fprintf(&patches, "\n- name: p%d\n  enabledIf: '{{ if .v%d }}true{{ end }}'\n  definitions:\n    - %s\n      jsonPatches:\n      - op: add\n        path: %s\n        valueFrom:\n          template: '{{ .v%d }}-{{ .builtin.cluster.name }}'\n", i, i, selector, path, i)
	}
	class := mustClass(b, bookClass)
	if err := yamlInto(vars.String(), &class.Spec.Variables); err != nil {
		b.Fatal(err)
	}
	if err := yamlInto(patches.String(), &class.Spec.Patches); err != nil {
		b.Fatal(err)
	}
	cluster := mustCluster(b, bookCluster)
	cluster.Spec.Topology.Workers.MachineDeployments = nil
	for i := range 10 {
		cluster.Spec.Topology.Workers.MachineDeployments = append(cluster.Spec.Topology.Workers.MachineDeployments,
			clusterv1.MachineDeploymentTopology{Class: "default-worker", Name: fmt.Sprintf("md-%d", i)})
	}
	bp := blueprint(b, class)
	first := compute(b, bp, &Current{Cluster: cluster})
	cur := asCurrent(b, cluster, compute(b, bp, asCurrent(b, cluster, first)))
	if len(cur.MachineDeployments) != 10 {
		b.Fatalf("%d MachineDeployments", len(cur.MachineDeployments))
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := Compute(context.Background(), bp, cur, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}
