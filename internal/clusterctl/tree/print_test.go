package tree

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	. "github.com/onsi/gomega"
	"k8s.io/utils/ptr"

	"github.com/capstan-dev/capstan/internal/test/golden"
)

// degraded returns a provisioned cluster of 4 machines where one is not ready, with a multi-line message,
// because its InfraMachine is not ready.
func degraded() *Objects {
	objs := provisioned(4)
	m := &objs.Machines[3]
	notReady(m, "NotReady", "* InfrastructureReady: Waiting for the Node to register\n* NodeHealthy: Waiting for a Node with spec.providerID local://"+m.Name+" to exist", 9*time.Minute)
	objs.MachineInfrastructure[m.Name] = provider("LocalMachine", m.Name, false)
	objs.MachineDeployments[0].Status.V1Beta2.Conditions[0] = v2("Available", "False", "NotAvailable",
		"3 available replicas, at least 4 required (spec.strategy.rollout.maxUnavailable is 0, spec.replicas is 4)", 9*time.Minute)
	return objs
}

func TestPrintGolden(t *testing.T) {
	tests := []struct {
		golden string
		objs   func() *Objects
		opts   Options
		color  bool
	}{
		{golden: "provisioned.txt", objs: func() *Objects { return provisioned(2) }, opts: Options{Grouping: true}},
		{golden: "provisioned-v1beta1.txt", objs: func() *Objects { return provisioned(2) }, opts: Options{Grouping: true, V1Beta1: true}},
		{golden: "degraded.txt", objs: degraded, opts: Options{Grouping: true}},
		{golden: "degraded-v1beta1.txt", objs: degraded, opts: Options{Grouping: true, V1Beta1: true}},
		{golden: "degraded-no-grouping.txt", objs: degraded, opts: Options{}},
		{golden: "degraded-echo.txt", objs: degraded, opts: Options{Echo: true}},
		{golden: "degraded-machinesets-templates.txt", objs: degraded, opts: Options{Grouping: true, ShowMachineSets: true, ShowTemplates: true}},
		{golden: "degraded-conditions.txt", objs: degraded, opts: Options{Grouping: true, ShowConditions: mustFilter(t, "Cluster,MachineDeployment+,Machine/demo-md-0-7f9c4-m3")}},
		{golden: "degraded-conditions-v1beta1.txt", objs: degraded, opts: Options{Grouping: true, V1Beta1: true, ShowConditions: mustFilter(t, "all")}},
		{golden: "degraded-color.txt", objs: degraded, opts: Options{Grouping: true, ShowConditions: mustFilter(t, "MachineDeployment")}, color: true},
	}
	for _, tt := range tests {
		t.Run(tt.golden, func(t *testing.T) {
			var out bytes.Buffer
			if err := Print(&out, Build(tt.objs(), tt.opts), PrintOptions{Now: now, Color: tt.color}); err != nil {
				t.Fatal(err)
			}
			golden.Assert(t, tt.golden, out.Bytes())
		})
	}
}

// names returns the first column of a printed tree.
func names(out string) []string {
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	width := strings.Index(lines[0], "REPLICAS")
	var col []string
	for _, line := range lines[1:] {
		r := []rune(line)
		col = append(col, strings.TrimRight(string(r[:min(width, len(r))]), " "))
	}
	return col
}

func TestTreeLines(t *testing.T) {
	leaf := func(name string, children ...*Node) *Node {
		return &Node{Kind: "Object", Name: name, Children: children}
	}
	withConditions := func(n *Node) *Node {
		n.show = ShowAllConditions
		n.v2 = []Condition{{Type: "C1", Status: "True"}, {Type: "C2", Status: "True"}}
		return n
	}
	withMessage := func(n *Node) *Node {
		n.summary = "Available"
		n.v2 = []Condition{{Type: "Available", Status: "False", Reason: "NotAvailable", Message: "first\nsecond"}}
		return n
	}
	tests := []struct {
		name string
		root *Node
		want []string
	}{
		{
			name: "children get ├─ and the last one └─",
			root: leaf("root", leaf("a"), leaf("b")),
			want: []string{"Object/root", "├─Object/a", "└─Object/b"},
		},
		{
			name: "lines carry on under siblings that follow",
			root: leaf("root", leaf("a", leaf("a1"), leaf("a2")), leaf("b", leaf("b1"))),
			want: []string{"Object/root", "├─Object/a", "│ ├─Object/a1", "│ └─Object/a2", "└─Object/b", "  └─Object/b1"},
		},
		{
			name: "conditions are indented under their object",
			root: leaf("root", withConditions(leaf("a")), withConditions(leaf("b"))),
			want: []string{
				"Object/root",
				"├─Object/a", "│             ├─C1", "│             └─C2",
				"└─Object/b", "              ├─C1", "              └─C2",
			},
		},
		{
			name: "conditions of an object with children keep its line",
			root: leaf("root", withConditions(leaf("a", leaf("a1"))), leaf("b")),
			want: []string{"Object/root", "├─Object/a", "│ │           ├─C1", "│ │           └─C2", "│ └─Object/a1", "└─Object/b"},
		},
		{
			name: "the extra lines of a message carry the lines on",
			root: withMessage(leaf("root", withMessage(leaf("a", withMessage(leaf("a1")))), withMessage(leaf("b")))),
			want: []string{"Object/root", "│", "├─Object/a", "│ │", "│ └─Object/a1", "│", "└─Object/b", ""},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			var out bytes.Buffer
			g.Expect(Print(&out, &Tree{Root: tt.root}, PrintOptions{Now: now})).To(Succeed())
			g.Expect(names(out.String())).To(Equal(tt.want), "%s", out.String())
		})
	}
}

func TestMultiLineMessage(t *testing.T) {
	g := NewWithT(t)
	root := &Node{Kind: "Cluster", Name: "c", summary: "Available", v2: []Condition{
		{Type: "Available", Status: "False", Reason: "NotAvailable", Message: "* A: one\n* B: two", LastTransitionTime: t0},
	}}
	var out bytes.Buffer
	g.Expect(Print(&out, &Tree{Root: root}, PrintOptions{Now: now})).To(Succeed())
	want := "" +
		"NAME       REPLICAS  AVAILABLE  READY  UP TO DATE  STATUS            REASON        SINCE  MESSAGE\n" +
		"Cluster/c                                          Available: False  NotAvailable  10m    * A: one\n" +
		"                                                                                          * B: two\n"
	g.Expect(out.String()).To(Equal(want), cmp.Diff(want, out.String()))
}

func TestWrap(t *testing.T) {
	tests := []struct {
		name    string
		message string
		width   int
		want    string
	}{
		{name: "short", message: "all good", width: 20, want: "all good"},
		{name: "empty", message: "", width: 20, want: ""},
		{name: "wrapped at spaces", message: "one two three four five", width: 10, want: "one two\nthree four\nfive"},
		{name: "line breaks kept", message: "one\ntwo", width: 10, want: "one\ntwo"},
		{name: "indentation kept", message: "* A:\n  * B: one two three", width: 12, want: "* A:\n  * B: one\n    two\n    three"},
		{name: "list items hang", message: "* one two three four", width: 12, want: "* one two\n  three four"},
		{name: "long words stay whole", message: "a averyveryverylongword b", width: 8, want: "a\naveryveryverylongword\nb"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			g.Expect(wrap(tt.message, tt.width)).To(Equal(tt.want))
		})
	}
}

func TestSince(t *testing.T) {
	g := NewWithT(t)
	g.Expect(since(now, now.Add(-10*time.Second))).To(Equal("10s"))
	g.Expect(since(now, now.Add(-3*time.Minute))).To(Equal("3m"))
	g.Expect(since(now, now.Add(-26*time.Hour))).To(Equal("26h"))
	g.Expect(since(now, now.Add(time.Minute))).To(Equal("0s"), "a clock behind the server's")
	g.Expect(since(now, time.Time{})).To(BeEmpty())
}

func TestCut(t *testing.T) {
	g := NewWithT(t)
	g.Expect(cut("short")).To(Equal("short"))
	g.Expect(cut(strings.Repeat("s", 150))).To(Equal(strings.Repeat("s", 100) + " ..."))
}

func TestColors(t *testing.T) {
	tests := []struct {
		condition Condition
		v2, v1    string
	}{
		{condition: Condition{Type: "Ready", Status: "True"}, v2: green, v1: green},
		{condition: Condition{Type: "Ready", Status: "False", Severity: "Error"}, v2: red, v1: red},
		{condition: Condition{Type: "Ready", Status: "False", Severity: "Warning"}, v2: red, v1: yellow},
		{condition: Condition{Type: "Ready", Status: "False", Severity: "Info"}, v2: red, v1: white},
		{condition: Condition{Type: "Ready", Status: "Unknown"}, v2: yellow, v1: white},
		{condition: Condition{Type: "Deleting", Status: "True"}, v2: red, v1: green},
		{condition: Condition{Type: "Paused", Status: "False"}, v2: green, v1: white},
		{condition: Condition{Type: "Ready"}, v2: gray, v1: gray},
	}
	for _, tt := range tests {
		g := NewWithT(t)
		g.Expect(v1beta2Color(&tt.condition)).To(Equal(tt.v2), "%+v", tt.condition)
		g.Expect(v1beta1Color(&tt.condition)).To(Equal(tt.v1), "%+v", tt.condition)
	}
}

func TestVisibleWidth(t *testing.T) {
	g := NewWithT(t)
	g.Expect(visibleWidth("\x1b[90m├─\x1b[0mMachine/\x1b[1mm\x1b[0m")).To(Equal(len("├─Machine/m") - 4))
	var out bytes.Buffer
	tbl := table{}
	tbl.add("\x1b[31mab\x1b[0m", "x")
	tbl.add("abcd", "y")
	g.Expect(tbl.render(&out)).To(Succeed())
	g.Expect(out.String()).To(Equal("\x1b[31mab\x1b[0m    x\nabcd  y\n"))
}

func TestDeletingProvider(t *testing.T) {
	g := NewWithT(t)
	u := provider("LocalCluster", "demo", true)
	u.SetDeletionTimestamp(ptr.To(at(time.Minute)))
	g.Expect(providerNode(u, "ClusterInfrastructure").RowName()).To(Equal("!! DELETED !! ClusterInfrastructure - LocalCluster/demo"))
}
