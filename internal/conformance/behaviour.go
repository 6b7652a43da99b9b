package conformance

import (
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/contract"
)

// run is what the kit saw the provider do in the behavioural scenario. Every fact is recorded by the
// scenario and judged by the plain functions below, which need no API server.
type run struct {
	// timeout is Options.Timeout, for messages.
	timeout time.Duration
	// stopped says why the scenario stopped before the end; facts it did not reach are nil.
	stopped string
	// providerErr is set when the provider's Start returned before the end of the scenario.
	providerErr error

	// clusterContract and machineContract are the contracts the kit read the provider's objects by.
	clusterContract, machineContract contract.Version

	// cluster and machine are the InfraCluster and InfraMachine taken through their whole life.
	cluster, machine *lifecycle
	// orphan, managed, paused and annotated are InfraClusters the provider must leave alone: without a
	// Cluster owner, externally managed, of a paused Cluster, with the paused annotation.
	orphan, managed, paused, annotated *watched
	// managedLabel is an InfraCluster with the cluster.x-k8s.io/managed-by label, as the contract text
	// names it (managed carries the annotation upstream's predicate reads).
	managedLabel *watched
	// template is what the kit saw of the InfraMachineTemplate it created the InfraMachine from.
	template *templateFacts
	// endpoint is what the kit saw of an InfraCluster waiting for its Cluster's endpoint; nil unless
	// Provider.ControlPlaneEndpoint is set.
	endpoint *endpointFacts
	// tenancy is what the kit saw of the provider started with --namespace and --watch-filter.
	tenancy *tenancyFacts
	// orphanMachine is an InfraMachine without a Machine owner.
	orphanMachine *watched

	// objects are the objects in the namespace once everything was provisioned.
	objects []object
	// machineDomain is the failure domain the kit gave the Machine, empty for none.
	machineDomain string
}

// lifecycle is what the kit saw of one object the provider provisions and then deletes.
type lifecycle struct {
	// provisioned is the object when first seen provisioned; nil when it was not within the timeout.
	provisioned *unstructured.Unstructured
	// last is the object when the kit stopped waiting for it to be provisioned.
	last *unstructured.Unstructured
	// paused is the object once its Cluster was paused, before the kit deleted it; nil when not reached.
	paused *unstructured.Unstructured
	// whilePaused is the object after it was deleted and Options.Quiet passed with its Cluster still
	// paused; nil when it was already gone.
	whilePaused *unstructured.Unstructured
	// deleted says whether the kit deleted the object; gone whether it went away within the timeout once
	// its Cluster was unpaused, and remaining is the object when it did not.
	deleted, gone bool
	remaining     *unstructured.Unstructured
	// held says whether the kit held the deleted object with holdFinalizer; finalized is the object once
	// the provider removed its finalizers (the kit's holding it), nil when it did not within the timeout.
	held      bool
	finalized *unstructured.Unstructured
	// moved is what the kit saw once it removed the object's status as clusterctl move does; nil when not
	// reached.
	moved *moved
}

// moved is what the kit saw of an object after a simulated clusterctl move.
type moved struct {
	// last is the object when the kit stopped waiting; rebuilt whether it was provisioned again.
	last    *unstructured.Unstructured
	rebuilt bool
}

// endpointFacts is what the kit saw of an InfraCluster whose Cluster had no control plane endpoint yet,
// for a provider that does not provide one (Provider.ControlPlaneEndpoint).
type endpointFacts struct {
	// before is the InfraCluster when the kit set the Cluster's endpoint; provisionedEarly whether it
	// was seen provisioned before.
	before           *unstructured.Unstructured
	provisionedEarly bool
}

// holdFinalizer is the finalizer the kit holds deleted objects with, to see them once the provider is done.
const holdFinalizer = "conformance.cluster.x-k8s.io/hold"

// watched is what the kit saw of an object the provider must leave alone for a while.
type watched struct {
	// before is the object as created, after the object after Options.Quiet.
	before, after *unstructured.Unstructured
	// resumed is the object once provisioned after the kit lifted the pause; nil when it was not within
	// the timeout. Only recorded when resumeChecked.
	resumed       *unstructured.Unstructured
	resumeChecked bool
}

// notReached is the verdict of a rule whose facts the scenario did not reach.
func (in *input) notReached(what string) verdict {
	switch {
	case in.run == nil:
		return skip("%s", in.runSkipped)
	case in.run.providerErr != nil:
		return fail("The provider stopped before %s: %v", what, in.run.providerErr)
	case in.run.stopped != "":
		return skip("Not checked: %s", in.run.stopped)
	}
	return skip("Not checked: the scenario did not get to %s", what)
}

// provisionedCluster returns the provisioned InfraCluster, or the verdict of a rule that needs it.
func (in *input) provisionedCluster() (*unstructured.Unstructured, verdict, bool) {
	if in.run == nil || in.run.cluster == nil {
		return nil, in.notReached("provisioning the InfraCluster"), false
	}
	if in.run.cluster.provisioned == nil {
		return nil, skip("Not checked: the InfraCluster was not provisioned"), false
	}
	return in.run.cluster.provisioned, verdict{}, true
}

// noMachine returns the verdict of the behavioural InfraMachine rules when the provider has no
// InfraMachine the kit can create.
func (in *input) noMachine() (verdict, bool) {
	if in.p.InfraMachine.Kind == "" {
		return skip("Not checked: the provider has no InfraMachine kind (Provider.InfraMachine or NewInfraMachine)"), true
	}
	if in.p.NewInfraMachine == nil && in.run != nil {
		return skip("Not checked: the provider has no NewInfraMachine function"), true
	}
	return verdict{}, false
}

func (in *input) provisionedMachine() (*unstructured.Unstructured, verdict, bool) {
	if v, ok := in.noMachine(); ok {
		return nil, v, false
	}
	if in.run == nil || in.run.machine == nil {
		return nil, in.notReached("provisioning the InfraMachine"), false
	}
	if in.run.machine.provisioned == nil {
		return nil, skip("Not checked: the InfraMachine was not provisioned"), false
	}
	return in.run.machine.provisioned, verdict{}, true
}

// withStatic combines the verdict of the static part of a rule with the behavioural one: a broken static
// part decides; otherwise the behavioural verdict, saying when it was skipped that the static part held.
func withStatic(static []string, behaviour func() verdict) verdict {
	if len(static) > 0 {
		return fail("%s", strings.Join(static, "; "))
	}
	return behaviour()
}

func checkControlPlaneEndpoint(in *input) verdict {
	_, s := in.contractOf(in.p.InfraCluster.GroupKind())
	var static []string
	if _, declared := field(s, "spec", "controlPlaneEndpoint"); declared != nil {
		for _, p := range []string{fieldProblem(s, "object", "spec", "controlPlaneEndpoint"),
			fieldProblem(s, "string", "spec", "controlPlaneEndpoint", "host"),
			fieldProblem(s, "integer", "spec", "controlPlaneEndpoint", "port")} {
			if p != "" {
				static = append(static, p)
			}
		}
	}
	return withStatic(static, func() verdict {
		obj, v, ok := in.provisionedCluster()
		if !ok {
			return v
		}
		v = endpointVerdict(obj, in.p.ControlPlaneEndpoint)
		if ep, _ := contract.ControlPlaneEndpoint(obj); v.outcome == met && ep.IsZero() && in.run.endpoint != nil {
			if in.run.endpoint.provisionedEarly {
				return fail("The InfraCluster provides no endpoint but reported it was provisioned before its Cluster had one: it must wait for the Cluster's spec.controlPlaneEndpoint")
			}
			return pass("The InfraCluster provides no endpoint (it is provided by other means, %s) and waited for the Cluster's before reporting it was provisioned", in.p.ControlPlaneEndpoint)
		}
		return v
	})
}

func endpointVerdict(obj *unstructured.Unstructured, byOtherMeans *clusterv1.APIEndpoint) verdict {
	ep, err := contract.ControlPlaneEndpoint(obj)
	switch {
	case err != nil:
		return fail("%v", err)
	case ep.IsValid():
		return pass("The provisioned InfraCluster has spec.controlPlaneEndpoint %s", ep)
	case !ep.IsZero():
		return fail("spec.controlPlaneEndpoint of the provisioned InfraCluster is incomplete: host %q, port %d", ep.Host, ep.Port)
	case byOtherMeans != nil:
		return pass("The InfraCluster provides no endpoint; it is provided by other means (%s)", byOtherMeans)
	}
	return fail("The provisioned InfraCluster has no spec.controlPlaneEndpoint and no endpoint is provided by other means (Provider.ControlPlaneEndpoint)")
}

func checkFailureDomains(in *input) verdict {
	c, s := in.contractOf(in.p.InfraCluster.GroupKind())
	want := "object"
	if c == contract.V1Beta2 {
		want = "array"
	}
	var static []string
	if _, declared := field(s, "status", "failureDomains"); declared != nil {
		if p := fieldProblem(s, want, "status", "failureDomains"); p != "" {
			static = append(static, p+" (contract "+string(c)+")")
		}
	}
	return withStatic(static, func() verdict {
		obj, v, ok := in.provisionedCluster()
		if !ok {
			return v
		}
		return failureDomainsVerdict(obj, c)
	})
}

func failureDomainsVerdict(obj *unstructured.Unstructured, c contract.Version) verdict {
	raw, found, _ := unstructured.NestedFieldNoCopy(obj.Object, "status", "failureDomains")
	if !found || raw == nil {
		return missing("The provisioned InfraCluster reports no status.failureDomains")
	}
	var problems []string
	check := func(at string, fd any) {
		m, ok := fd.(map[string]any)
		if !ok {
			problems = append(problems, fmt.Sprintf("%s is a %T, want an object", at, fd))
			return
		}
		if cp, ok := m["controlPlane"]; ok {
			if _, isBool := cp.(bool); !isBool {
				problems = append(problems, fmt.Sprintf("%s.controlPlane is a %T, want a bool", at, cp))
			}
		}
		if attrs, ok := m["attributes"]; ok {
			am, isMap := attrs.(map[string]any)
			if !isMap {
				problems = append(problems, fmt.Sprintf("%s.attributes is a %T, want a map of strings", at, attrs))
			}
			for k, v := range am {
				if _, isString := v.(string); !isString {
					problems = append(problems, fmt.Sprintf("%s.attributes.%s is a %T, want a string", at, k, v))
				}
			}
		}
	}
	switch v := raw.(type) {
	case map[string]any:
		if c == contract.V1Beta2 {
			problems = append(problems, "status.failureDomains is a map; the v1beta2 contract wants a list")
		}
		for _, name := range sortedKeys(v) {
			check("status.failureDomains."+name, v[name])
		}
	case []any:
		if c != contract.V1Beta2 {
			problems = append(problems, "status.failureDomains is a list; the v1beta1 contract wants a map")
		}
		for i, item := range v {
			at := fmt.Sprintf("status.failureDomains[%d]", i)
			if m, ok := item.(map[string]any); !ok || m["name"] == nil || m["name"] == "" {
				problems = append(problems, at+" has no name")
			}
			check(at, item)
		}
	default:
		problems = append(problems, fmt.Sprintf("status.failureDomains is a %T, want a map or a list", raw))
	}
	if len(problems) > 0 {
		sort.Strings(problems)
		return fail("%s", strings.Join(problems, "; "))
	}
	fds, err := contract.FailureDomains(obj)
	if err != nil {
		return fail("%v", err)
	}
	names := make([]string, 0, len(fds))
	for _, name := range sortedKeys(fds) {
		if fds[name].ControlPlane {
			name += " (control plane)"
		}
		names = append(names, name)
	}
	return pass("The InfraCluster reports failure domains %s", strings.Join(names, ", "))
}

func checkInfraClusterInitialization(in *input) verdict {
	return checkInitialization(in, in.p.InfraCluster.GroupKind(), "InfraCluster", func() *lifecycle {
		if in.run == nil {
			return nil
		}
		return in.run.cluster
	})
}

func checkInfraMachineInitialization(in *input) verdict {
	if in.p.InfraMachine.Kind == "" {
		return skip("Not checked: the provider has no InfraMachine kind (Provider.InfraMachine or NewInfraMachine)")
	}
	return checkInitialization(in, in.p.InfraMachine.GroupKind(), "InfraMachine", func() *lifecycle {
		if in.run == nil {
			return nil
		}
		return in.run.machine
	})
}

// readyPath is the field that says a provider object is provisioned under a contract.
func readyPath(c contract.Version) []string {
	if c == contract.V1Beta2 {
		return []string{"status", "initialization", "provisioned"}
	}
	return []string{"status", "ready"}
}

func checkInitialization(in *input, gk schema.GroupKind, role string, l func() *lifecycle) verdict {
	c, s := in.contractOf(gk)
	var static []string
	if p := fieldProblem(s, "boolean", readyPath(c)...); p != "" {
		static = append(static, fmt.Sprintf("%s: the provider cannot report that the %s is provisioned", p, role))
	}
	return withStatic(static, func() verdict {
		facts := l()
		if facts == nil || (facts.provisioned == nil && in.run.providerErr != nil) {
			return in.notReached("provisioning the " + role)
		}
		if facts.provisioned == nil {
			return fail("The %s was not provisioned within %s (.%s is not true): %s", role, in.run.timeout,
				strings.Join(readyPath(c), "."), summarize(facts.last))
		}
		return pass(".%s of the %s became true", strings.Join(readyPath(c), "."), role)
	})
}

// summarize renders what matters of a provider object for a message: finalizers and status.
func summarize(obj *unstructured.Unstructured) string {
	if obj == nil {
		return "not found"
	}
	status, _, _ := unstructured.NestedMap(obj.Object, "status")
	return fmt.Sprintf("finalizers %v, status %v", obj.GetFinalizers(), status)
}

func checkInfraClusterConditions(in *input) verdict {
	obj, v, ok := in.provisionedCluster()
	if !ok {
		return v
	}
	return conditionsVerdict(obj, in.run.clusterContract)
}

func checkInfraMachineConditions(in *input) verdict {
	obj, v, ok := in.provisionedMachine()
	if !ok {
		return v
	}
	return conditionsVerdict(obj, in.run.machineContract)
}

// conditionKeys are the fields of Cluster API conditions (v1beta1) and of metav1.Condition.
var conditionKeys = []string{"type", "status", "severity", "lastTransitionTime", "reason", "message", "observedGeneration"}

// conditionsVerdict judges the conditions of a provisioned provider object: status.conditions and, for
// v1beta1-contract providers previewing v1beta2 conditions, status.v1beta2.conditions.
func conditionsVerdict(obj *unstructured.Unstructured, c contract.Version) verdict {
	var problems, types []string
	found := false
	for _, p := range [][]string{{"status", "conditions"}, {"status", "v1beta2", "conditions"}} {
		raw, ok, _ := unstructured.NestedFieldNoCopy(obj.Object, p...)
		if !ok || raw == nil {
			continue
		}
		found = true
		at := "." + strings.Join(p, ".")
		list, isList := raw.([]any)
		if !isList {
			problems = append(problems, fmt.Sprintf("%s is a %T, want a list", at, raw))
			continue
		}
		seen := map[string]bool{}
		for i, item := range list {
			m, isMap := item.(map[string]any)
			if !isMap {
				problems = append(problems, fmt.Sprintf("%s[%d] is not an object", at, i))
				continue
			}
			t, _ := m["type"].(string)
			where := fmt.Sprintf("%s[%d] (%s)", at, i, t)
			switch {
			case t == "":
				problems = append(problems, where+" has no type")
			case seen[t]:
				problems = append(problems, where+" is repeated")
			}
			seen[t] = true
			if len(p) == 3 {
				types = append(types, "v1beta2 "+t)
			} else {
				types = append(types, t)
			}
			switch m["status"] {
			case string(corev1.ConditionTrue), string(corev1.ConditionFalse), string(corev1.ConditionUnknown):
			default:
				problems = append(problems, fmt.Sprintf("%s has status %v, want True, False or Unknown", where, m["status"]))
			}
			if ts, _ := m["lastTransitionTime"].(string); ts == "" {
				problems = append(problems, where+" has no lastTransitionTime")
			} else if _, err := time.Parse(time.RFC3339, ts); err != nil {
				problems = append(problems, fmt.Sprintf("%s has lastTransitionTime %q, not RFC 3339", where, ts))
			}
			if sev, ok := m["severity"]; ok {
				switch sev {
				case "", string(clusterv1.ConditionSeverityError), string(clusterv1.ConditionSeverityWarning), string(clusterv1.ConditionSeverityInfo):
				default:
					problems = append(problems, fmt.Sprintf("%s has severity %v, want Error, Warning or Info", where, sev))
				}
			}
			for _, k := range sortedKeys(m) {
				if !slices.Contains(conditionKeys, k) {
					problems = append(problems, fmt.Sprintf("%s has field %s, which Cluster API conditions do not have", where, k))
				}
			}
		}
	}
	switch {
	case len(problems) > 0:
		return fail("The conditions are not Cluster API conditions: %s", strings.Join(problems, "; "))
	case !found:
		return missing("The provisioned object reports no conditions")
	}
	ready, err := contract.GetCondition(obj, string(clusterv1.ReadyCondition))
	if err != nil {
		return fail("%v", err)
	}
	if ready == nil {
		return missing("The conditions (%s) have no Ready condition for Cluster API to mirror", strings.Join(types, ", "))
	}
	return pass("Cluster API conditions (%s); Ready is %s once provisioned (contract %s)", strings.Join(types, ", "), ready.Status, c)
}

func checkInfraClusterTerminalFailures(in *input) verdict {
	return checkTerminalFailures(in, in.p.InfraCluster.GroupKind(), "InfraCluster", func() (*unstructured.Unstructured, verdict, bool) {
		return in.provisionedCluster()
	})
}

func checkInfraMachineTerminalFailures(in *input) verdict {
	if in.p.InfraMachine.Kind == "" {
		return skip("Not checked: the provider has no InfraMachine kind (Provider.InfraMachine or NewInfraMachine)")
	}
	return checkTerminalFailures(in, in.p.InfraMachine.GroupKind(), "InfraMachine", in.provisionedMachine)
}

func checkTerminalFailures(in *input, gk schema.GroupKind, role string, provisioned func() (*unstructured.Unstructured, verdict, bool)) verdict {
	c, s := in.contractOf(gk)
	if c == contract.V1Beta2 {
		return skip("Not checked: the v1beta2 contract has no terminal failures")
	}
	var static []string
	declared := true
	for _, f := range []string{"failureReason", "failureMessage"} {
		if _, d := field(s, "status", f); d == nil {
			declared = false
			continue
		}
		if p := fieldProblem(s, "string", "status", f); p != "" {
			static = append(static, p)
		}
	}
	return withStatic(static, func() verdict {
		obj, v, ok := provisioned()
		if ok {
			if reason, message, _ := contract.Failure(obj); reason != "" || message != "" {
				return fail("The healthy %s reports a terminal failure: reason %q, message %q", role, reason, message)
			}
		}
		switch {
		case !declared:
			return missing("The %s schema does not declare status.failureReason and status.failureMessage", role)
		case !ok:
			return skip("%s (the schema declares status.failureReason and status.failureMessage as strings)", v.message)
		}
		return pass("status.failureReason and status.failureMessage are declared as strings and unset while the %s is healthy", role)
	})
}

func checkExternallyManaged(in *input) verdict {
	if in.run == nil || in.run.managed == nil || in.run.managed.after == nil {
		return in.notReached("watching the externally managed InfraCluster")
	}
	var problems []string
	if changed := changes(in.run.managed.before, in.run.managed.after, false); len(changed) > 0 {
		problems = append(problems, fmt.Sprintf("the provider changed an InfraCluster annotated %s (what Cluster API's predicate reads): %s",
			clusterv1.ManagedByAnnotation, strings.Join(changed, ", ")))
	}
	if w := in.run.managedLabel; w != nil && w.after != nil {
		if changed := changes(w.before, w.after, false); len(changed) > 0 {
			problems = append(problems, fmt.Sprintf("the provider changed an InfraCluster labelled %s (as the contract text names it): %s",
				clusterv1.ManagedByAnnotation, strings.Join(changed, ", ")))
		}
	}
	if len(problems) > 0 {
		return missing("%s", strings.Join(problems, "; "))
	}
	return pass("InfraClusters annotated and labelled %s were left untouched", clusterv1.ManagedByAnnotation)
}

func checkReadyDeletion(in *input) verdict {
	if in.run == nil || in.run.cluster == nil || !in.run.cluster.deleted {
		return in.notReached("deleting the InfraCluster")
	}
	var problems, notes, seen []string
	for _, t := range []struct {
		role string
		l    *lifecycle
	}{{"InfraCluster", in.run.cluster}, {"InfraMachine", in.run.machine}} {
		if t.l == nil || !t.l.deleted {
			continue
		}
		if !t.l.held {
			notes = append(notes, fmt.Sprintf("the %s has no finalizer, so its deletion cannot be observed", t.role))
			continue
		}
		if t.l.finalized == nil {
			continue // the deletion rules report it
		}
		ready := readyConditions(t.l.finalized)
		if len(ready) == 0 {
			problems = append(problems, fmt.Sprintf("the deleted %s reports no Ready condition", t.role))
			continue
		}
		for at, c := range ready {
			switch {
			case c["status"] == string(corev1.ConditionTrue):
				return fail("The deleted %s still reports Ready True at %s once the provider ran its deletion: Cluster API shows it as ready", t.role, at)
			case c["status"] != string(corev1.ConditionFalse) || !strings.Contains(strings.ToLower(fmt.Sprint(c["reason"])), "delet"):
				problems = append(problems, fmt.Sprintf("the deleted %s reports Ready %v with reason %q at %s, want False with a deleting reason", t.role, c["status"], c["reason"], at))
			default:
				seen = append(seen, fmt.Sprintf("%s %s: False, %s", t.role, at, c["reason"]))
			}
		}
	}
	switch {
	case len(problems) > 0:
		return missing("%s", strings.Join(problems, "; "))
	case len(seen) == 0:
		return skip("Not checked: %s", strings.Join(notes, "; "))
	}
	msg := "Ready is False with a deleting reason while the provider deletes: " + strings.Join(seen, "; ")
	if len(notes) > 0 {
		msg += " (" + strings.Join(notes, "; ") + ")"
	}
	return pass("%s", msg)
}

// readyConditions returns the Ready conditions of an object, by where they are: status.conditions and
// status.v1beta2.conditions.
func readyConditions(obj *unstructured.Unstructured) map[string]map[string]any {
	out := map[string]map[string]any{}
	for _, p := range [][]string{{"status", "conditions"}, {"status", "v1beta2", "conditions"}} {
		list, _, _ := unstructured.NestedSlice(obj.Object, p...)
		for _, item := range list {
			if m, ok := item.(map[string]any); ok && m["type"] == string(clusterv1.ReadyCondition) {
				out["."+strings.Join(p, ".")] = m
			}
		}
	}
	return out
}

func checkMoveStatus(in *input) verdict {
	if in.run == nil || in.run.cluster == nil || in.run.cluster.moved == nil {
		return in.notReached("moving the provisioned InfraCluster")
	}
	var problems, rebuilt []string
	for _, t := range []struct {
		role string
		l    *lifecycle
	}{{"InfraCluster", in.run.cluster}, {"InfraMachine", in.run.machine}} {
		if t.l == nil || t.l.moved == nil {
			continue
		}
		if !t.l.moved.rebuilt {
			problems = append(problems, fmt.Sprintf("the %s was not provisioned again within %s once its Cluster was unpaused: %s", t.role, in.run.timeout, summarize(t.l.moved.last)))
			continue
		}
		rebuilt = append(rebuilt, t.role)
	}
	if len(problems) > 0 {
		return fail("Moved without status (clusterctl move never restores it), %s", strings.Join(problems, "; "))
	}
	return pass("The provider rebuilt the status of the %s moved without status", strings.Join(rebuilt, " and "))
}

func checkInfraClusterOwner(in *input) verdict {
	return checkNotOwned(in, func(r *run) *watched { return r.orphan }, "InfraCluster", "Cluster")
}

func checkInfraMachineOwner(in *input) verdict {
	if v, ok := in.noMachine(); ok {
		return v
	}
	return checkNotOwned(in, func(r *run) *watched { return r.orphanMachine }, "InfraMachine", "Machine")
}

// checkNotOwned checks that the provider left alone the object of kind the kit created without an owner
// reference to its owner kind, as watched (the orphan of the run).
func checkNotOwned(in *input, orphan func(*run) *watched, kind, owner string) verdict {
	var w *watched
	if in.run != nil {
		w = orphan(in.run)
	}
	if w == nil || w.after == nil {
		return in.notReached(fmt.Sprintf("watching the %s without a %s owner", kind, owner))
	}
	if changed := changes(w.before, w.after, true); len(changed) > 0 {
		return fail("The provider reconciled an %s with no %s owner reference: %s", kind, owner, strings.Join(changed, ", "))
	}
	return pass("An %s with no %s owner reference was not reconciled", kind, owner)
}

func checkInfraClusterPausing(in *input) verdict {
	if in.run == nil || in.run.paused == nil || in.run.paused.after == nil || in.run.annotated == nil || in.run.annotated.after == nil {
		return in.notReached("watching the paused InfraClusters")
	}
	var problems, notes []string
	for _, w := range []struct {
		facts *watched
		how   string
	}{{in.run.paused, "of a Cluster with spec.paused"}, {in.run.annotated, "annotated " + clusterv1.PausedAnnotation}} {
		problems = append(problems, pausedProblems(w.facts, "an InfraCluster "+w.how, in.run.timeout)...)
	}
	problems = append(problems, deletionPausedProblems(in.run.cluster, "InfraCluster")...)
	if in.run.cluster != nil && in.run.cluster.paused != nil && len(userFinalizers(in.run.cluster.paused)) == 0 {
		notes = append(notes, "deleting while paused could not be observed: the InfraCluster has no finalizer")
	}
	if len(problems) > 0 {
		return fail("The provider does not respect pausing, which clusterctl move relies on: %s", strings.Join(problems, "; "))
	}
	msg := "InfraClusters of a paused Cluster or with the paused annotation were left alone and reconciled once unpaused"
	if reportsPaused(in.run.paused.after) || reportsPaused(in.run.annotated.after) {
		msg += "; the Paused condition follows"
	} else {
		notes = append(notes, "no Paused condition is reported (optional)")
	}
	if len(notes) > 0 {
		msg += " (" + strings.Join(notes, "; ") + ")"
	}
	return pass("%s", msg)
}

func checkInfraMachinePausing(in *input) verdict {
	if _, v, ok := in.provisionedMachine(); !ok {
		return v
	}
	m := in.run.machine
	if m.paused == nil {
		return in.notReached("pausing the InfraMachine's Cluster")
	}
	if len(userFinalizers(m.paused)) == 0 {
		return skip("Not observable: the InfraMachine has no finalizer, so deleting it while paused cannot be held")
	}
	if problems := deletionPausedProblems(m, "InfraMachine"); len(problems) > 0 {
		return fail("The provider does not respect pausing, which clusterctl move relies on: %s", strings.Join(problems, "; "))
	}
	msg := "Deleting an InfraMachine of a paused Cluster waited until the Cluster was unpaused"
	if !reportsPaused(m.paused) {
		msg += " (no Paused condition is reported, optional)"
	}
	return pass("%s", msg)
}

// pausedProblems judges an InfraCluster the provider must not reconcile while paused.
func pausedProblems(w *watched, what string, timeout time.Duration) []string {
	var out []string
	if changed := changes(w.before, w.after, true); len(changed) > 0 {
		out = append(out, fmt.Sprintf("%s was reconciled while paused (%s)", what, strings.Join(changed, ", ")))
	}
	if c, _ := contract.GetCondition(w.after, clusterv1.PausedV1Beta2Condition); c != nil && c.Status != corev1.ConditionTrue {
		out = append(out, fmt.Sprintf("%s reports Paused %s while paused", what, c.Status))
	}
	if w.resumeChecked {
		if w.resumed == nil {
			out = append(out, fmt.Sprintf("%s was not provisioned within %s once unpaused", what, timeout))
		} else if c, _ := contract.GetCondition(w.resumed, clusterv1.PausedV1Beta2Condition); c != nil && c.Status == corev1.ConditionTrue {
			out = append(out, fmt.Sprintf("%s still reports Paused True once unpaused", what))
		}
	}
	return out
}

// deletionPausedProblems judges an object deleted while its Cluster was paused.
func deletionPausedProblems(l *lifecycle, role string) []string {
	if l == nil || l.paused == nil || !l.deleted {
		return nil
	}
	var out []string
	if c, _ := contract.GetCondition(l.paused, clusterv1.PausedV1Beta2Condition); c != nil && c.Status != corev1.ConditionTrue {
		out = append(out, fmt.Sprintf("the %s of a paused Cluster reports Paused %s", role, c.Status))
	}
	if len(userFinalizers(l.paused)) > 0 && (l.whilePaused == nil || len(userFinalizers(l.whilePaused)) == 0) {
		out = append(out, fmt.Sprintf("the %s was deleted (its finalizer removed) while its Cluster was paused", role))
	}
	return out
}

func reportsPaused(obj *unstructured.Unstructured) bool {
	c, _ := contract.GetCondition(obj, clusterv1.PausedV1Beta2Condition)
	return c != nil
}

// userFinalizers returns the finalizers of an object other than Kubernetes' own.
func userFinalizers(obj *unstructured.Unstructured) []string {
	var out []string
	for _, f := range obj.GetFinalizers() {
		if f != "orphan" && f != "foregroundDeletion" && f != holdFinalizer {
			out = append(out, f)
		}
	}
	return out
}

func checkInfraClusterFinalizer(in *input) verdict {
	obj, v, ok := in.provisionedCluster()
	if !ok {
		return v
	}
	if f := userFinalizers(obj); len(f) > 0 {
		return pass("The provider added finalizer %s", strings.Join(f, ", "))
	}
	return missing("The provisioned InfraCluster has no finalizer: its infrastructure may outlive it")
}

func checkInfraClusterDeletion(in *input) verdict {
	if in.run == nil || in.run.cluster == nil || !in.run.cluster.deleted {
		return in.notReached("deleting the InfraCluster")
	}
	return deletionVerdict(in.run.cluster, "InfraCluster", in.run.timeout)
}

func checkInfraMachineDeletion(in *input) verdict {
	if v, ok := in.noMachine(); ok {
		return v
	}
	if in.run == nil || in.run.machine == nil || !in.run.machine.deleted {
		return in.notReached("deleting the InfraMachine")
	}
	return deletionVerdict(in.run.machine, "InfraMachine", in.run.timeout)
}

func deletionVerdict(l *lifecycle, role string, timeout time.Duration) verdict {
	if !l.gone {
		return fail("The deleted %s was still there %s after its Cluster was unpaused: %s", role, timeout, summarize(l.remaining))
	}
	return pass("The deleted %s went away", role)
}

func checkProviderID(in *input) verdict {
	obj, v, ok := in.provisionedMachine()
	if !ok {
		return v
	}
	id, err := contract.ProviderID(obj)
	switch {
	case err != nil:
		return fail("%v", err)
	case id == "":
		return fail("The provisioned InfraMachine has no spec.providerID: Cluster API cannot match it to a Node")
	}
	return pass("The provisioned InfraMachine has spec.providerID %s", id)
}

// addressTypes are the machine address types Cluster API knows.
var addressTypes = []string{"Hostname", "ExternalIP", "InternalIP", "ExternalDNS", "InternalDNS"}

func checkAddresses(in *input) verdict {
	obj, v, ok := in.provisionedMachine()
	if !ok {
		return v
	}
	raw, found, _ := unstructured.NestedFieldNoCopy(obj.Object, "status", "addresses")
	if !found || raw == nil {
		return missing("The provisioned InfraMachine reports no status.addresses")
	}
	list, isList := raw.([]any)
	if !isList {
		return fail("status.addresses is a %T, want a list", raw)
	}
	var problems, seen []string
	for i, item := range list {
		m, _ := item.(map[string]any)
		t, _ := m["type"].(string)
		a, _ := m["address"].(string)
		if !slices.Contains(addressTypes, t) {
			problems = append(problems, fmt.Sprintf("status.addresses[%d] has type %q, want one of %s", i, t, strings.Join(addressTypes, ", ")))
		}
		if a == "" {
			problems = append(problems, fmt.Sprintf("status.addresses[%d] has no address", i))
		}
		seen = append(seen, t+" "+a)
	}
	if len(problems) > 0 {
		return fail("%s", strings.Join(problems, "; "))
	}
	return pass("The InfraMachine reports addresses %s", strings.Join(seen, ", "))
}

func checkMachineFailureDomain(in *input) verdict {
	obj, v, ok := in.provisionedMachine()
	if !ok {
		return v
	}
	fd, err := contract.MachineFailureDomain(obj)
	if err != nil {
		return fail("%v", err)
	}
	if fd == "" {
		return missing("The provisioned InfraMachine reports no failure domain")
	}
	domains, _ := contract.FailureDomains(in.run.cluster.provisioned)
	if _, ok := domains[fd]; !ok {
		return fail("The InfraMachine is in failure domain %q, which the InfraCluster does not report (%s)", fd, strings.Join(sortedKeys(domains), ", "))
	}
	if in.run.machineDomain != "" && fd != in.run.machineDomain {
		return fail("The InfraMachine is in failure domain %q, but its Machine asked for %q", fd, in.run.machineDomain)
	}
	return pass("The InfraMachine is in failure domain %s, one of the InfraCluster's", fd)
}

// changes returns the paths at which two versions of an object differ, ignoring what the API server
// changes by itself (resourceVersion, managedFields, generation) and, when conditionsAllowed, the
// conditions.
func changes(before, after *unstructured.Unstructured, conditionsAllowed bool) []string {
	ignore := map[string]bool{".metadata.resourceVersion": true, ".metadata.managedFields": true, ".metadata.generation": true}
	if conditionsAllowed {
		ignore[".status.conditions"] = true
		ignore[".status.v1beta2.conditions"] = true
	}
	// Paths are reported two levels deep (.status.ready, .spec.controlPlaneEndpoint), deeper only on the way
	// to an ignored path.
	leadsToIgnored := func(at string) bool {
		for p := range ignore {
			if strings.HasPrefix(p, at+".") {
				return true
			}
		}
		return false
	}
	var out []string
	var diff func(a, b any, at string)
	diff = func(a, b any, at string) {
		if ignore[at] {
			return
		}
		am, aIsMap := a.(map[string]any)
		bm, bIsMap := b.(map[string]any)
		shallow := strings.Count(at, ".") < 2 || leadsToIgnored(at)
		if shallow && (aIsMap || a == nil) && (bIsMap || b == nil) && (aIsMap || bIsMap) {
			keys := map[string]bool{}
			for k := range am {
				keys[k] = true
			}
			for k := range bm {
				keys[k] = true
			}
			for _, k := range sortedKeys(keys) {
				diff(am[k], bm[k], at+"."+k)
			}
			return
		}
		if !reflect.DeepEqual(a, b) {
			out = append(out, at)
		}
	}
	var a, b map[string]any
	if before != nil {
		a = before.Object
	}
	if after != nil {
		b = after.Object
	}
	diff(a, b, "")
	return out
}
