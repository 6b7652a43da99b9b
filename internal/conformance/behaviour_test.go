package conformance

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/contract"
)

// obj returns a FixtureCluster with the given content merged over apiVersion, kind and metadata.
func obj(content map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	for k, v := range content {
		u.Object[k] = v
	}
	u.SetGroupVersionKind(fixtureClusterGVK)
	if u.GetName() == "" {
		u.SetName("main")
	}
	return u
}

func withStatus(fields map[string]any) *unstructured.Unstructured {
	return obj(map[string]any{"status": fields})
}

const someTime = "2025-01-01T00:00:00Z"

func TestChanges(t *testing.T) {
	before := obj(map[string]any{"metadata": map[string]any{"name": "main", "resourceVersion": "1"}, "spec": map[string]any{}})
	tests := []struct {
		name              string
		after             map[string]any
		conditionsAllowed bool
		want              []string
	}{
		{
			name:  "nothing but the resourceVersion",
			after: map[string]any{"metadata": map[string]any{"name": "main", "resourceVersion": "7"}, "spec": map[string]any{}},
		},
		{
			name: "conditions only, allowed",
			after: map[string]any{"metadata": map[string]any{"name": "main"}, "spec": map[string]any{}, "status": map[string]any{
				"conditions": []any{map[string]any{"type": "Ready"}},
				"v1beta2":    map[string]any{"conditions": []any{map[string]any{"type": "Paused"}}},
			}},
			conditionsAllowed: true,
		},
		{
			name: "conditions, not allowed",
			after: map[string]any{"metadata": map[string]any{"name": "main"}, "spec": map[string]any{}, "status": map[string]any{
				"conditions": []any{map[string]any{"type": "Ready"}},
			}},
			want: []string{".status.conditions"},
		},
		{
			name: "reconciled: finalizer, endpoint, ready",
			after: map[string]any{
				"metadata": map[string]any{"name": "main", "finalizers": []any{"x"}},
				"spec":     map[string]any{"controlPlaneEndpoint": map[string]any{"host": "h", "port": int64(1)}},
				"status":   map[string]any{"ready": true, "failureDomains": map[string]any{"a": map[string]any{}}, "conditions": []any{}},
			},
			conditionsAllowed: true,
			want:              []string{".metadata.finalizers", ".spec.controlPlaneEndpoint", ".status.failureDomains", ".status.ready"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := changes(before, obj(tt.after), tt.conditionsAllowed)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("changes (-want +got):\n%s", diff)
			}
		})
	}
}

func TestConditionsVerdict(t *testing.T) {
	ready := map[string]any{"type": "Ready", "status": "True", "lastTransitionTime": someTime}
	tests := []struct {
		name    string
		status  map[string]any
		want    outcome
		message string
	}{
		{name: "none", status: map[string]any{"ready": true}, want: unmet, message: "reports no conditions"},
		{name: "Cluster API Ready condition", status: map[string]any{"conditions": []any{ready}}, want: met, message: "Ready is True"},
		{
			name: "v1beta2 conditions only",
			status: map[string]any{"v1beta2": map[string]any{"conditions": []any{
				map[string]any{"type": "Ready", "status": "False", "reason": "NotReady", "lastTransitionTime": someTime, "observedGeneration": int64(1)},
			}}},
			want: met, message: "Ready is False",
		},
		{
			name:   "no Ready condition",
			status: map[string]any{"conditions": []any{map[string]any{"type": "LoadBalancerReady", "status": "True", "lastTransitionTime": someTime}}},
			want:   unmet, message: "have no Ready condition",
		},
		{
			name:   "status not True, False or Unknown",
			status: map[string]any{"conditions": []any{map[string]any{"type": "Ready", "status": "Yes", "lastTransitionTime": someTime}}},
			want:   broken, message: "has status Yes, want True, False or Unknown",
		},
		{
			name:   "no lastTransitionTime",
			status: map[string]any{"conditions": []any{map[string]any{"type": "Ready", "status": "True"}}},
			want:   broken, message: "has no lastTransitionTime",
		},
		{
			name:   "unknown severity",
			status: map[string]any{"conditions": []any{map[string]any{"type": "Ready", "status": "False", "severity": "Fatal", "lastTransitionTime": someTime}}},
			want:   broken, message: "has severity Fatal",
		},
		{
			name:   "not a Cluster API condition",
			status: map[string]any{"conditions": []any{map[string]any{"type": "Ready", "status": "True", "lastTransitionTime": someTime, "lastProbeTime": someTime}}},
			want:   broken, message: "has field lastProbeTime",
		},
		{
			name:   "repeated type",
			status: map[string]any{"conditions": []any{ready, ready}},
			want:   broken, message: "is repeated",
		},
		{
			name:   "not a list",
			status: map[string]any{"conditions": map[string]any{"Ready": "True"}},
			want:   broken, message: "want a list",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			v := conditionsVerdict(withStatus(tt.status), contract.V1Beta1)
			g.Expect(v.outcome).To(Equal(tt.want), v.message)
			g.Expect(v.message).To(ContainSubstring(tt.message))
		})
	}
}

func TestFailureDomainsVerdict(t *testing.T) {
	tests := []struct {
		name     string
		domains  any
		contract contract.Version
		want     outcome
		message  string
	}{
		{name: "none", contract: contract.V1Beta1, want: unmet, message: "reports no status.failureDomains"},
		{
			name:    "v1beta1 map",
			domains: map[string]any{"b": map[string]any{"controlPlane": false, "attributes": map[string]any{"zone": "b"}}, "a": map[string]any{"controlPlane": true}},
			want:    met, contract: contract.V1Beta1, message: "a (control plane), b",
		},
		{
			name:    "v1beta2 list",
			domains: []any{map[string]any{"name": "a", "controlPlane": true}},
			want:    met, contract: contract.V1Beta2, message: "a (control plane)",
		},
		{
			name:    "list under the v1beta1 contract",
			domains: []any{map[string]any{"name": "a"}},
			want:    broken, contract: contract.V1Beta1, message: "the v1beta1 contract wants a map",
		},
		{
			name:    "list item without a name",
			domains: []any{map[string]any{"controlPlane": true}},
			want:    broken, contract: contract.V1Beta2, message: "status.failureDomains[0] has no name",
		},
		{
			name:    "controlPlane not a bool",
			domains: map[string]any{"a": map[string]any{"controlPlane": "yes"}},
			want:    broken, contract: contract.V1Beta1, message: "status.failureDomains.a.controlPlane is a string, want a bool",
		},
		{
			name:    "attribute not a string",
			domains: map[string]any{"a": map[string]any{"attributes": map[string]any{"weight": int64(3)}}},
			want:    broken, contract: contract.V1Beta1, message: "status.failureDomains.a.attributes.weight is a int64, want a string",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			fields := map[string]any{"ready": true}
			if tt.domains != nil {
				fields["failureDomains"] = tt.domains
			}
			v := failureDomainsVerdict(withStatus(fields), tt.contract)
			g.Expect(v.outcome).To(Equal(tt.want), v.message)
			g.Expect(v.message).To(ContainSubstring(tt.message))
		})
	}
}

func TestEndpointVerdict(t *testing.T) {
	tests := []struct {
		name         string
		endpoint     map[string]any
		byOtherMeans *clusterv1.APIEndpoint
		want         outcome
	}{
		{name: "host and port", endpoint: map[string]any{"host": "10.0.0.1", "port": int64(6443)}, want: met},
		{name: "host only", endpoint: map[string]any{"host": "10.0.0.1"}, want: broken},
		{name: "none", want: broken},
		{name: "none, provided by other means", byOtherMeans: &clusterv1.APIEndpoint{Host: "lb", Port: 443}, want: met},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := map[string]any{}
			if tt.endpoint != nil {
				spec["controlPlaneEndpoint"] = tt.endpoint
			}
			v := endpointVerdict(obj(map[string]any{"spec": spec}), tt.byOtherMeans)
			NewWithT(t).Expect(v.outcome).To(Equal(tt.want), v.message)
		})
	}
}

func TestPausedProblems(t *testing.T) {
	before := obj(map[string]any{"spec": map[string]any{}})
	pausedTrue := withStatus(map[string]any{"v1beta2": map[string]any{"conditions": []any{
		map[string]any{"type": "Paused", "status": "True", "reason": "Paused", "lastTransitionTime": someTime},
	}}})
	pausedTrue.Object["spec"] = map[string]any{}
	pausedFalse := pausedTrue.DeepCopy()
	_ = unstructured.SetNestedSlice(pausedFalse.Object, []any{
		map[string]any{"type": "Paused", "status": "False", "reason": "NotPaused", "lastTransitionTime": someTime},
	}, "status", "v1beta2", "conditions")
	provisioned := withStatus(map[string]any{"ready": true})
	tests := []struct {
		name string
		w    watched
		want []string
	}{
		{name: "left alone and resumed", w: watched{before: before, after: pausedTrue, resumed: provisioned, resumeChecked: true}},
		{
			name: "reconciled while paused",
			w:    watched{before: before, after: provisioned},
			want: []string{"it was reconciled while paused (.status.ready)"},
		},
		{
			name: "Paused False while paused",
			w:    watched{before: before, after: pausedFalse},
			want: []string{"it reports Paused False while paused"},
		},
		{
			name: "not resumed",
			w:    watched{before: before, after: before, resumeChecked: true},
			want: []string{"it was not provisioned within 1m0s once unpaused"},
		},
		{
			name: "still Paused once unpaused",
			w:    watched{before: before, after: pausedTrue, resumed: pausedTrue, resumeChecked: true},
			want: []string{"it still reports Paused True once unpaused"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, pausedProblems(&tt.w, "it", time.Minute)); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDeletionPausedProblems(t *testing.T) {
	withFinalizer := obj(map[string]any{"metadata": map[string]any{"name": "main", "finalizers": []any{"x.example.com"}}})
	noFinalizer := obj(nil)
	tests := []struct {
		name string
		l    lifecycle
		want []string
	}{
		{name: "held while paused", l: lifecycle{paused: withFinalizer, deleted: true, whilePaused: withFinalizer}},
		{
			name: "deleted while paused",
			l:    lifecycle{paused: withFinalizer, deleted: true},
			want: []string{"the InfraCluster was deleted (its finalizer removed) while its Cluster was paused"},
		},
		{
			name: "only the kit's hold left while paused",
			l:    lifecycle{paused: withFinalizer, deleted: true, whilePaused: obj(map[string]any{"metadata": map[string]any{"name": "main", "finalizers": []any{holdFinalizer}}})},
			want: []string{"the InfraCluster was deleted (its finalizer removed) while its Cluster was paused"},
		},
		{name: "no finalizer: not observable", l: lifecycle{paused: noFinalizer, deleted: true}},
		{name: "not deleted", l: lifecycle{paused: withFinalizer}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, deletionPausedProblems(&tt.l, "InfraCluster")); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
		})
	}
}

func TestStatusOfVerdicts(t *testing.T) {
	tests := []struct {
		outcome            outcome
		mandatory, claimed bool
		want               Status
	}{
		{outcome: met, want: Pass},
		{outcome: broken, want: Fail},
		{outcome: unmet, want: Warn},
		{outcome: unmet, mandatory: true, want: Fail},
		{outcome: unmet, claimed: true, want: Fail},
		{outcome: unchecked, mandatory: true, want: Skip},
	}
	for _, tt := range tests {
		got := status(verdict{outcome: tt.outcome}, tt.mandatory, tt.claimed)
		if got != tt.want {
			t.Errorf("status(%v, mandatory=%t, claimed=%t) = %s, want %s", tt.outcome, tt.mandatory, tt.claimed, got, tt.want)
		}
	}
}

func TestImplementsTurnsWarningsIntoFailures(t *testing.T) {
	g := NewWithT(t)
	p, err := fixtureProvider(fixtureBehaviour{})
	g.Expect(err).NotTo(HaveOccurred())
	p.Repository = nil
	p.CRDs = p.CRDs[:1] // no templates
	in := newInput(p)

	warned := in.evaluate()
	res, _ := warned.Result(RuleInfraClusterTemplateDefinition)
	g.Expect(res.Status).To(Equal(Warn), res.Message)

	p.Implements = []string{RuleInfraClusterTemplateDefinition}
	claimed := newInput(p).evaluate()
	res, _ = claimed.Result(RuleInfraClusterTemplateDefinition)
	g.Expect(res.Status).To(Equal(Fail), res.Message)
	g.Expect(res.Message).To(ContainSubstring("ClusterClasses cannot use the provider"))
}

func TestCanonicalImageProblem(t *testing.T) {
	tests := []struct {
		image, want string
	}{
		{image: "registry.k8s.io/cluster-api/cluster-api-controller:v1.10.0"},
		{image: "ghcr.io/capstan-dev/fixture@sha256:0123"},
		{image: "localhost:5000/fixture:dev"},
		{image: "localhost/fixture:dev"},
		{image: "fixture:dev", want: "names no registry host"},
		{image: "capstan-dev/fixture:v1", want: "names no registry host"},
		{image: "ghcr.io/capstan-dev/fixture", want: "has no tag or digest"},
		{image: "ghcr.io/capstan-dev/fixture:latest", want: "is tagged latest"},
		{image: "ghcr.io/capstan-dev/fix ture:v1", want: "invalid image reference"},
	}
	for _, tt := range tests {
		t.Run(tt.image, func(t *testing.T) {
			got := canonicalImageProblem(tt.image)
			if tt.want == "" {
				NewWithT(t).Expect(got).To(BeEmpty())
			} else {
				NewWithT(t).Expect(got).To(ContainSubstring(tt.want))
			}
		})
	}
}

func TestReadyDeletionVerdict(t *testing.T) {
	ready := func(status, reason string) *unstructured.Unstructured {
		return withStatus(map[string]any{
			"conditions": []any{map[string]any{"type": "Ready", "status": status, "reason": reason, "lastTransitionTime": someTime}},
			"v1beta2":    map[string]any{"conditions": []any{map[string]any{"type": "Ready", "status": status, "reason": reason, "lastTransitionTime": someTime}}},
		})
	}
	tests := []struct {
		name    string
		cluster lifecycle
		want    outcome
		message string
	}{
		{name: "False, Deleting", cluster: lifecycle{deleted: true, held: true, finalized: ready("False", "Deleting")}, want: met},
		{name: "True", cluster: lifecycle{deleted: true, held: true, finalized: ready("True", "Ready")}, want: broken, message: "still reports Ready True"},
		{name: "False, another reason", cluster: lifecycle{deleted: true, held: true, finalized: ready("False", "Provisioning")}, want: unmet, message: `reason "Provisioning"`},
		{name: "no Ready condition", cluster: lifecycle{deleted: true, held: true, finalized: withStatus(map[string]any{})}, want: unmet, message: "reports no Ready condition"},
		{name: "no finalizer to hold it by", cluster: lifecycle{deleted: true}, want: unchecked, message: "has no finalizer"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			in := &input{run: &run{cluster: &tt.cluster}}
			v := checkReadyDeletion(in)
			g.Expect(v.outcome).To(Equal(tt.want), v.message)
			g.Expect(v.message).To(ContainSubstring(tt.message))
		})
	}
}

// TestOwnerVerdicts: an InfraCluster (InfraMachine) without its Cluster (Machine) owner reference must be
// left alone; what changed is named, and a watch the scenario did not get to is a skip, never a pass.
func TestOwnerVerdicts(t *testing.T) {
	before := obj(map[string]any{"metadata": map[string]any{"name": "orphan"}, "spec": map[string]any{}})
	changed := obj(map[string]any{"metadata": map[string]any{"name": "orphan"}, "spec": map[string]any{"ready": true}})
	machines := Provider{InfraMachine: fixtureMachineGVK, NewInfraMachine: func(string, string) *unstructured.Unstructured { return nil }}
	tests := []struct {
		name    string
		in      *input
		check   func(*input) verdict
		want    outcome
		message string
	}{
		{name: "InfraCluster left alone", in: &input{run: &run{orphan: &watched{before: before, after: before}}}, check: checkInfraClusterOwner,
			want: met, message: "An InfraCluster with no Cluster owner reference was not reconciled"},
		{name: "InfraCluster reconciled", in: &input{run: &run{orphan: &watched{before: before, after: changed}}}, check: checkInfraClusterOwner,
			want: broken, message: "The provider reconciled an InfraCluster with no Cluster owner reference: .spec.ready"},
		{name: "InfraCluster not watched", in: &input{run: &run{orphan: &watched{before: before}}}, check: checkInfraClusterOwner,
			want: unchecked, message: "did not get to watching the InfraCluster without a Cluster owner"},
		{name: "InfraMachine left alone", in: &input{p: machines, run: &run{orphanMachine: &watched{before: before, after: before}}}, check: checkInfraMachineOwner,
			want: met, message: "An InfraMachine with no Machine owner reference was not reconciled"},
		{name: "InfraMachine reconciled", in: &input{p: machines, run: &run{orphanMachine: &watched{before: before, after: changed}}}, check: checkInfraMachineOwner,
			want: broken, message: "The provider reconciled an InfraMachine with no Machine owner reference: .spec.ready"},
		{name: "InfraMachine not watched", in: &input{p: machines, run: &run{}}, check: checkInfraMachineOwner,
			want: unchecked, message: "did not get to watching the InfraMachine without a Machine owner"},
		{name: "no InfraMachine kind", in: &input{run: &run{}}, check: checkInfraMachineOwner,
			want: unchecked, message: "the provider has no InfraMachine kind"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			v := tt.check(tt.in)
			g.Expect(v.outcome).To(Equal(tt.want), v.message)
			g.Expect(v.message).To(ContainSubstring(tt.message))
		})
	}
}
