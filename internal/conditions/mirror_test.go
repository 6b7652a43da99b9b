package conditions

import (
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/contract"
)

func TestTruncate(t *testing.T) {
	tests := []struct {
		in   string
		n    int
		want string
	}{
		{in: "short", n: 10, want: "short"},
		{in: "exactly10!", n: 10, want: "exactly10!"},
		{in: "a little too long", n: 10, want: "a littl..."},
		{in: "ééééé", n: 8, want: "éé..."},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			NewWithT(t).Expect(Truncate(tt.in, tt.n)).To(Equal(tt.want))
		})
	}
}

func TestCapitalise(t *testing.T) {
	g := NewWithT(t)
	g.Expect(Capitalise("")).To(Equal(""))
	g.Expect(Capitalise("reading status")).To(Equal("Reading status"))
	g.Expect(Capitalise("Already")).To(Equal("Already"))
	g.Expect(Capitalise("éclair")).To(Equal("Éclair"))
	g.Expect(Capitalise("\xffbad")).To(Equal("\xffbad"))
}

func TestMirrorV1Beta1(t *testing.T) {
	ltt := metav1.Date(2026, 1, 2, 3, 4, 5, 0, metav1.Now().Location())
	unknownWithSeverity := &contract.Condition{Status: corev1.ConditionUnknown, Reason: "Probing", Severity: "Warning", LastTransitionTime: ltt}
	falseWithout := &contract.Condition{Status: corev1.ConditionFalse, Reason: "Booting", Message: strings.Repeat("m", MaxV1Beta1MessageLength+10)}
	tests := []struct {
		name         string
		src          *contract.Condition
		o            MirrorOptions
		wantStatus   corev1.ConditionStatus
		wantReason   string
		wantSeverity clusterv1.ConditionSeverity
		wantLTT      bool
	}{
		{name: "no condition: the fallback", src: nil, wantStatus: corev1.ConditionFalse, wantReason: "Waiting", wantSeverity: clusterv1.ConditionSeverityInfo},
		{name: "Unknown has no severity", src: unknownWithSeverity, wantStatus: corev1.ConditionUnknown, wantReason: "Probing"},
		{name: "Unknown keeps its severity when asked", src: unknownWithSeverity, o: MirrorOptions{KeepSeverity: true, KeepTransitionTime: true},
			wantStatus: corev1.ConditionUnknown, wantReason: "Probing", wantSeverity: clusterv1.ConditionSeverityWarning, wantLTT: true},
		{name: "False gets at least Info", src: falseWithout, wantStatus: corev1.ConditionFalse, wantReason: "Booting", wantSeverity: clusterv1.ConditionSeverityInfo},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			m := &clusterv1.Machine{}
			MirrorV1Beta1(m, clusterv1.InfrastructureReadyCondition, tt.src, ReadyFallbackV1Beta1(false, "Waiting"), tt.o)
			got := Get(m, clusterv1.InfrastructureReadyCondition)
			g.Expect(got).NotTo(BeNil())
			g.Expect(got.Status).To(Equal(tt.wantStatus))
			g.Expect(got.Reason).To(Equal(tt.wantReason))
			g.Expect(got.Severity).To(Equal(tt.wantSeverity))
			g.Expect(len(got.Message)).To(BeNumerically("<=", MaxV1Beta1MessageLength))
			g.Expect(got.LastTransitionTime.Equal(&ltt)).To(Equal(tt.wantLTT))
		})
	}
}

func TestMirrorReadyV1Beta2(t *testing.T) {
	reasons := ProviderReasons{Ready: "Ready", NotReady: "NotReady", Invalid: "InvalidConditionReported"}
	provider := func(status map[string]any) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"status": status}}
		u.SetKind("FooMachine")
		u.SetName("m-1")
		return u
	}
	tests := []struct {
		name       string
		obj        *unstructured.Unstructured
		ready      bool
		wantStatus metav1.ConditionStatus
		wantReason string
		wantMsg    string
	}{
		{name: "no condition, not ready", obj: provider(map[string]any{}), wantStatus: metav1.ConditionFalse, wantReason: "NotReady", wantMsg: "FooMachine is not provisioned yet"},
		{name: "no condition, ready", obj: provider(map[string]any{}), ready: true, wantStatus: metav1.ConditionTrue, wantReason: "Ready"},
		{name: "the v1beta2 preview comes first", obj: provider(map[string]any{
			"conditions": []any{map[string]any{"type": "Ready", "status": "False", "reason": "Old"}},
			"v1beta2":    map[string]any{"conditions": []any{map[string]any{"type": "Ready", "status": "True", "reason": "AllGood"}}},
		}), wantStatus: metav1.ConditionTrue, wantReason: "AllGood"},
		{name: "a v1beta1 condition without reason", obj: provider(map[string]any{
			"conditions": []any{map[string]any{"type": "Ready", "status": "False", "message": "booting"}},
		}), wantStatus: metav1.ConditionFalse, wantReason: "NotReady", wantMsg: "booting"},
		{name: "an unreadable condition", obj: provider(map[string]any{
			"conditions": []any{map[string]any{"type": "Ready", "status": "Maybe"}},
		}), wantStatus: metav1.ConditionUnknown, wantReason: "InvalidConditionReported"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			m := &clusterv1.Machine{}
			MirrorReadyV1Beta2(m, "InfrastructureReady", tt.obj, tt.ready, reasons, "FooMachine is not provisioned yet")
			got := GetV1Beta2(m, "InfrastructureReady")
			g.Expect(got).NotTo(BeNil())
			g.Expect(got.Status).To(Equal(tt.wantStatus))
			g.Expect(got.Reason).To(Equal(tt.wantReason))
			if tt.wantStatus == metav1.ConditionUnknown {
				g.Expect(got.Message).To(HavePrefix("Reading condition Ready of FooMachine m-1"))
			} else {
				g.Expect(got.Message).To(Equal(tt.wantMsg))
			}
		})
	}
}

// TestNotReadyMessage: the message names the field that says the provider object is not ready, as its
// contract spells it.
func TestNotReadyMessage(t *testing.T) {
	tests := []struct {
		contract contract.Version
		want     string
	}{
		{contract.V1Beta1, "DockerMachine status.ready is false"},
		{contract.V1Beta2, "DockerMachine status.initialization.provisioned is false"},
	}
	for _, tt := range tests {
		t.Run(string(tt.contract), func(t *testing.T) {
			NewWithT(t).Expect(NotReadyMessage("DockerMachine", tt.contract, "status.initialization.provisioned")).To(Equal(tt.want))
		})
	}
}

func TestMirrorOwnV1Beta2(t *testing.T) {
	g := NewWithT(t)
	m := &clusterv1.Machine{}
	MirrorOwnV1Beta2(m, clusterv1.ReadyCondition, "Ready")
	g.Expect(GetV1Beta2(m, "Ready")).To(BeNil(), "nothing to mirror")
	MarkTrue(m, clusterv1.ReadyCondition)
	MarkFalse(m, "Other", "", clusterv1.ConditionSeverityInfo, "no reason")
	MirrorOwnV1Beta2(m, clusterv1.ReadyCondition, "Ready")
	MirrorOwnV1Beta2(m, "Other", "Ready")
	g.Expect(GetV1Beta2(m, "Ready").Reason).To(Equal("Ready"))
	g.Expect(GetV1Beta2(m, "Other").Reason).To(Equal("Unknown"))
	g.Expect(GetV1Beta2(m, "Other").Status).To(Equal(metav1.ConditionFalse))
}
