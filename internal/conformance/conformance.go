package conformance

import (
	"context"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
)

// Provider describes the infrastructure provider under test.
type Provider struct {
	// Name is the provider's clusterctl name, for example "local"; its manifest label, the name of its
	// folder in the repository and the value of its cluster.x-k8s.io/provider label is
	// "infrastructure-<Name>".
	Name string

	// CRDs are the provider's CRDs: its InfraCluster and InfraMachine, their templates and any other kind
	// it defines.
	CRDs []*apiextensionsv1.CustomResourceDefinition

	// Repository holds the provider's release artifacts in the layout of a clusterctl local repository:
	// infrastructure-<Name>/<version>/{metadata.yaml, infrastructure-components.yaml,
	// cluster-template*.yaml, clusterclass-*.yaml}. Use os.DirFS for a directory. The clusterctl rules are
	// checked on the newest version; nil skips them.
	Repository fs.FS

	// InfraCluster and InfraMachine are the provider's kinds, at the version the kit creates objects with.
	// When empty they are taken from the objects NewInfraCluster and NewInfraMachine return. With no
	// InfraMachine kind at all, the InfraMachine rules are skipped.
	InfraCluster, InfraMachine schema.GroupVersionKind
	// InfraMachinePool is the provider's InfraMachinePool kind, when it supports MachinePools; the
	// InfraMachinePool rules are skipped without it.
	InfraMachinePool schema.GroupVersionKind

	// NewInfraCluster returns a valid InfraCluster the provider can provision, with the given namespace
	// and name; the kit adds the owner references and labels Cluster API's core would.
	NewInfraCluster func(namespace, name string) *unstructured.Unstructured

	// NewInfraMachine returns a valid InfraMachine the provider can provision.
	NewInfraMachine func(namespace, name string) *unstructured.Unstructured

	// Start runs the provider's controllers against the API server at cfg until ctx is done, then returns.
	// The kit calls it once per Check, in a goroutine. When it is nil, the behavioural rules are reported
	// as skipped, never as passed.
	Start func(ctx context.Context, cfg *rest.Config) error

	// StartScoped, when set, runs the provider like Start but as its manager does when started with
	// --namespace=scope.Namespace and --watch-filter=scope.WatchFilter. The kit calls it once, after the
	// provider started by Start has stopped, for the multi tenancy rule; without it the rule is skipped.
	StartScoped func(ctx context.Context, cfg *rest.Config, scope Scope) error

	// ControlPlaneEndpoint, when set, says the provider does not provide a control plane endpoint but waits
	// for the Cluster's: the kit sets it on the first Cluster only after Options.Quiet (the InfraCluster
	// must not be provisioned before), and on every other Cluster from the start, as a user or a control
	// plane provider would.
	ControlPlaneEndpoint *clusterv1.APIEndpoint

	// InfrastructureReady, when set, is called after the kit has done the Cluster controller's part for a
	// Cluster whose InfraCluster is provisioned, before it creates Machines: it does what other providers
	// would (for example write the kubeconfig Secret a control plane provider writes).
	InfrastructureReady func(ctx context.Context, c client.Client, cluster *clusterv1.Cluster) error

	// Implements names optional rules the provider claims to follow. An optional rule that is not
	// followed is a warning, unless it is listed here: then it is a failure.
	Implements []string
}

// Options tune a Check.
type Options struct {
	// Config reaches the API server the behavioural rules run against, as an administrator. The API
	// server must serve Cluster API's CRDs; the kit installs the provider's CRDs when they are missing.
	// nil skips the behavioural rules.
	Config *rest.Config

	// Timeout bounds each wait for the provider to act, for example for an InfraCluster to be
	// provisioned. Default 1m.
	Timeout time.Duration

	// Quiet is how long the kit watches objects the provider must leave alone (no Cluster owner,
	// externally managed, paused). Default 3s.
	Quiet time.Duration

	// Interval is the time between two reads of an object the kit waits on. Default 200ms.
	Interval time.Duration

	// Logf, when set, receives a line for each step of the behavioural scenario.
	Logf func(format string, args ...any)
}

func (o Options) withDefaults() Options {
	if o.Timeout <= 0 {
		o.Timeout = time.Minute
	}
	if o.Quiet <= 0 {
		o.Quiet = 3 * time.Second
	}
	if o.Interval <= 0 {
		o.Interval = 200 * time.Millisecond
	}
	if o.Logf == nil {
		o.Logf = func(string, ...any) {}
	}
	return o
}

// Status is the outcome of one rule.
type Status string

const (
	// Pass means the provider follows the rule.
	Pass Status = "Pass"
	// Fail means the provider breaks the rule: a mandatory rule is not followed, or an optional one is
	// followed wrongly (or not at all when listed in Provider.Implements).
	Fail Status = "Fail"
	// Warn means an optional rule, or a recommendation of a rule, is not followed. It does not fail the kit.
	Warn Status = "Warn"
	// Skip means the rule was not checked, and says why (no API server, no Start, no repository, or an
	// earlier step the rule depends on did not happen).
	Skip Status = "Skip"
)

// Result is the outcome of one rule.
type Result struct {
	// Rule is the rule's name, as in the specification's rule tables (see Rules).
	Rule string
	// Source is the specification the rule comes from.
	Source string
	// Mandatory says whether the specification makes the rule mandatory.
	Mandatory bool
	// Status is the outcome.
	Status Status
	// Message says what the kit saw.
	Message string
}

func (r Result) String() string {
	return fmt.Sprintf("%s %s: %s", r.Status, r.Rule, r.Message)
}

// Report is the outcome of every rule, in the order of Rules.
type Report []Result

// Failed returns the results with status Fail.
func (r Report) Failed() Report {
	return r.With(Fail)
}

// With returns the results with one of the given statuses.
func (r Report) With(statuses ...Status) Report {
	var out Report
	for _, res := range r {
		if slices.Contains(statuses, res.Status) {
			out = append(out, res)
		}
	}
	return out
}

// Passed reports whether no rule failed.
func (r Report) Passed() bool { return len(r.Failed()) == 0 }

// Result returns the result of a rule by name.
func (r Report) Result(rule string) (Result, bool) {
	for _, res := range r {
		if res.Rule == rule {
			return res, true
		}
	}
	return Result{}, false
}

// String renders the report as a table: status, rule, message.
func (r Report) String() string {
	var b strings.Builder
	w := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "STATUS\tRULE\tMESSAGE")
	for _, res := range r {
		fmt.Fprintf(w, "%s\t%s\t%s\n", res.Status, res.Rule, res.Message)
	}
	_ = w.Flush()
	return b.String()
}

// Check checks every rule against the provider: the static rules on its CRDs and release artifacts, and,
// when opts.Config and p.Start are set, the behavioural rules by running the provider against the API
// server while the kit plays Cluster API's core in a namespace of its own.
func Check(ctx context.Context, p Provider, opts Options) Report {
	opts = opts.withDefaults()
	in := newInput(p)
	switch {
	case opts.Config == nil:
		in.runSkipped = "Not checked: no API server (Options.Config)"
	case p.Start == nil:
		in.runSkipped = "Not checked: the provider has no Start function"
	case p.NewInfraCluster == nil:
		in.runSkipped = "Not checked: the provider has no NewInfraCluster function"
	default:
		in.run = scenario{in: in, opts: opts}.run(ctx)
	}
	return in.evaluate()
}
