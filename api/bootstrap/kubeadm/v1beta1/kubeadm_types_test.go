package v1beta1

import (
	"encoding/json"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestNodeRegistrationOptionsKeepsAnEmptyTaintList(t *testing.T) {
	tests := []struct {
		name   string
		taints []corev1.Taint
		want   string
	}{
		{"unset taints are omitted: kubeadm applies its default", nil, `{"name":"n1"}`},
		{"an empty list is kept: no taint at all", []corev1.Taint{}, `{"name":"n1","taints":[]}`},
		{"taints are written", []corev1.Taint{{Key: "k", Effect: corev1.TaintEffectNoSchedule}}, `{"name":"n1","taints":[{"key":"k","effect":"NoSchedule"}]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := json.Marshal(NodeRegistrationOptions{Name: "n1", Taints: tt.taints})
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
			// Through a pointer, as a field of InitConfiguration, too.
			got, err = json.Marshal(&InitConfiguration{NodeRegistration: NodeRegistrationOptions{Name: "n1", Taints: tt.taints}})
			if err != nil {
				t.Fatal(err)
			}
			var back InitConfiguration
			if err := json.Unmarshal(got, &back); err != nil {
				t.Fatal(err)
			}
			if (back.NodeRegistration.Taints == nil) != (tt.taints == nil) {
				t.Errorf("round trip of %s lost the difference between unset and empty taints", got)
			}
		})
	}
}

func TestBootstrapTokenString(t *testing.T) {
	var bt BootstrapToken
	if err := json.Unmarshal([]byte(`{"token":"abcdef.0123456789abcdef"}`), &bt); err != nil {
		t.Fatal(err)
	}
	if bt.Token.ID != "abcdef" || bt.Token.Secret != "0123456789abcdef" {
		t.Errorf("parsed %+v", bt.Token)
	}
	out, _ := json.Marshal(bt)
	if string(out) != `{"token":"abcdef.0123456789abcdef"}` {
		t.Errorf("marshalled %s", out)
	}
	if err := json.Unmarshal([]byte(`{"token":"not-a-token"}`), &bt); err == nil {
		t.Error("a malformed token was accepted")
	}
}
