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
}

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
		return endpointVerdict(obj, in.p.ControlPlaneEndpoint)
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
	w := in.run.managed
	if changed := changes(w.before, w.after, false); len(changed) > 0 {
		return missing("The provider changed an InfraCluster annotated %s: %s", clusterv1.ManagedByAnnotation, strings.Join(changed, ", "))
	}
	return pass("An InfraCluster annotated %s was left untouched", clusterv1.ManagedByAnnotation)
}

func checkInfraClusterOwner(in *input) verdict {
	if in.run == nil || in.run.orphan == nil || in.run.orphan.after == nil {
		return in.notReached("watching the InfraCluster without a Cluster owner")
	}
	if changed := changes(in.run.orphan.before, in.run.orphan.after, true); len(changed) > 0 {
		return fail("The provider reconciled an InfraCluster with no Cluster owner reference: %s", strings.Join(changed, ", "))
	}
	return pass("An InfraCluster with no Cluster owner reference was not reconciled")
}

func checkInfraMachineOwner(in *input) verdict {
	if v, ok := in.noMachine(); ok {
		return v
	}
	if in.run == nil || in.run.orphanMachine == nil || in.run.orphanMachine.after == nil {
		return in.notReached("watching the InfraMachine without a Machine owner")
	}
	if changed := changes(in.run.orphanMachine.before, in.run.orphanMachine.after, true); len(changed) > 0 {
		return fail("The provider reconciled an InfraMachine with no Machine owner reference: %s", strings.Join(changed, ", "))
	}
	return pass("An InfraMachine with no Machine owner reference was not reconciled")
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
	if len(userFinalizers(l.paused)) > 0 && l.whilePaused == nil {
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
		if f != "orphan" && f != "foregroundDeletion" {
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
