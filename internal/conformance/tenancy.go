package conformance

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
)

// The multi tenancy rule: a provider's manager started with --namespace and --watch-filter reconciles only
// the objects of that namespace carrying the cluster.x-k8s.io/watch-filter label with that value.

// Scope is how the kit starts the provider for the multi tenancy rule: what its manager's --namespace and
// --watch-filter flags would be.
type Scope struct {
	// Namespace is the only namespace the manager watches (--namespace).
	Namespace string
	// WatchFilter is the value of the cluster.x-k8s.io/watch-filter label of the objects the manager
	// reconciles (--watch-filter).
	WatchFilter string
}

// tenancyWatchFilter is the --watch-filter value the kit starts the provider with.
const tenancyWatchFilter = "conformance-tenant"

// tenancyFacts is what the kit saw of the provider started with a Scope.
type tenancyFacts struct {
	scope Scope
	// selected is the InfraCluster in the namespace with the watch-filter label, once provisioned; nil
	// when it was not within the timeout (last is the object then).
	selected, last *unstructured.Unstructured
	// unlabelled (in the namespace, without the label) and outside (labelled, in another namespace) must
	// be left alone.
	unlabelled, outside *watched
	// stopped says why the kit did not get to the end.
	stopped string
}

// tenancy starts the provider with StartScoped and checks what it reconciles. The provider started by
// Start must be stopped: it would reconcile everything.
func (s scenario) tenancy(ctx context.Context, r *run) {
	f := &tenancyFacts{}
	r.tenancy = f
	if err := s.runTenancy(ctx, r, f); err != nil {
		f.stopped = err.Error()
	}
}

func (s scenario) runTenancy(ctx context.Context, r *run, f *tenancyFacts) (err error) {
	in, err := newKit(ctx, s.in.p, s.opts)
	if err != nil {
		return err
	}
	out, err := newKit(ctx, s.in.p, s.opts)
	if err != nil {
		return err
	}
	f.scope = Scope{Namespace: in.ns, WatchFilter: tenancyWatchFilter}
	start := s.in.p.StartScoped
	in.p.Start = func(ctx context.Context, cfg *rest.Config) error { return start(ctx, cfg, f.scope) }
	s.opts.Logf("Starting the provider with --namespace=%s --watch-filter=%s", f.scope.Namespace, f.scope.WatchFilter)
	stop := in.startProvider(ctx)
	defer stop()
	defer out.cleanup(ctx)
	defer in.cleanup(ctx)
	defer func() {
		if exited := in.exited(); exited != nil {
			err = fmt.Errorf("the provider started with --namespace and --watch-filter stopped: %w", exited)
		}
	}()

	owned := func(k *kit, name string, labelled bool) (*unstructured.Unstructured, error) {
		ic := s.newInfraCluster(k, name)
		cluster := s.newCluster(name, ic, false)
		if labelled {
			cluster.Labels = map[string]string{clusterv1.WatchLabel: tenancyWatchFilter}
		}
		if err := k.create(ctx, cluster); err != nil {
			return nil, err
		}
		labels := ic.GetLabels()
		if labels == nil {
			labels = map[string]string{}
		}
		labels[clusterv1.ClusterNameLabel] = cluster.Name
		if labelled {
			labels[clusterv1.WatchLabel] = tenancyWatchFilter
		}
		ic.SetLabels(labels)
		if err := k.create(ctx, ic); err != nil {
			return nil, err
		}
		if err := k.own(ctx, ic, "Cluster", cluster, cluster.Name); err != nil {
			return nil, err
		}
		return ic, nil
	}
	selected, err := owned(in, "selected", true)
	if err != nil {
		return err
	}
	unlabelled, err := owned(in, "unlabelled", false)
	if err != nil {
		return err
	}
	outside, err := owned(out, "outside", true)
	if err != nil {
		return err
	}
	f.unlabelled, f.outside = &watched{before: unlabelled.DeepCopy()}, &watched{before: outside.DeepCopy()}
	obj, ok, err := in.waitProvisioned(ctx, selected, r.clusterContract)
	if err != nil {
		return err
	}
	if ok {
		f.selected = obj
	} else {
		f.last = obj
	}
	if err := in.sleep(ctx, s.opts.Quiet); err != nil {
		return err
	}
	for _, w := range []struct {
		k *kit
		w *watched
	}{{in, f.unlabelled}, {out, f.outside}} {
		if w.w.after, err = w.k.read(ctx, w.w.before); err != nil {
			return err
		}
	}
	return nil
}

func checkMultiTenancy(in *input) verdict {
	if in.p.StartScoped == nil {
		if in.run == nil {
			return skip("%s", in.runSkipped)
		}
		return skip("Not checked: the provider has no StartScoped function to start it with --namespace and --watch-filter")
	}
	if in.run == nil || in.run.tenancy == nil {
		return in.notReached("starting the provider with --namespace and --watch-filter")
	}
	f := in.run.tenancy
	flags := fmt.Sprintf("--namespace=%s --watch-filter=%s", f.scope.Namespace, f.scope.WatchFilter)
	if f.stopped != "" {
		return skip("Not checked: %s", f.stopped)
	}
	if f.selected == nil {
		return fail("Started with %s, the provider did not provision an InfraCluster of that namespace labelled %s=%s within %s: %s",
			flags, clusterv1.WatchLabel, f.scope.WatchFilter, in.run.timeout, summarize(f.last))
	}
	var problems []string
	for _, w := range []struct {
		w    *watched
		what string
	}{
		{f.unlabelled, "an InfraCluster of namespace " + f.scope.Namespace + " without the " + clusterv1.WatchLabel + " label"},
		{f.outside, "a labelled InfraCluster of another namespace"},
	} {
		if w.w == nil || w.w.after == nil {
			continue
		}
		if changed := changes(w.w.before, w.w.after, false); len(changed) > 0 {
			problems = append(problems, fmt.Sprintf("it changed %s (%s)", w.what, strings.Join(changed, ", ")))
		}
	}
	if len(problems) > 0 {
		return missing("Started with %s, %s", flags, strings.Join(problems, "; "))
	}
	return pass("Started with %s, the provider provisioned only the labelled InfraCluster of that namespace", flags)
}
