package v1beta2

import (
	"encoding/json"
	"testing"

	corev1 "k8s.io/api/core/v1"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta2"
	"github.com/capstan-dev/capstan/api/internal/apitest"
)

func TestUnsetFieldsAreNotSerialized(t *testing.T) {
	objects, err := apitest.ZeroObjects(AddToScheme, GroupVersion, &KubeadmConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if len(objects) != 4 {
		t.Fatalf("the scheme knows %d types of this package, want the 2 kinds and their lists", len(objects))
	}
	// What a user typically sets, with every other optional struct unset.
	objects["KubeadmConfig of a joining node"] = &KubeadmConfig{Spec: KubeadmConfigSpec{
		JoinConfiguration: JoinConfiguration{NodeRegistration: NodeRegistrationOptions{
			KubeletExtraArgs: []Arg{{Name: "v", Value: new(string)}},
		}},
		Files: []File{{Path: "/etc/motd", Content: "hello"}},
	}}
	objects["KubeadmConfigTemplate with a cluster configuration"] = &KubeadmConfigTemplate{Spec: KubeadmConfigTemplateSpec{
		Template: KubeadmConfigTemplateResource{Spec: KubeadmConfigSpec{
			ClusterConfiguration: ClusterConfiguration{APIServer: APIServer{CertSANs: []string{"example.com"}}},
			InitConfiguration:    InitConfiguration{BootstrapTokens: []BootstrapToken{{Description: "first"}}},
		}},
	}}
	apitest.ExpectNoEmptyObjects(t, objects)
}

func TestNodeRegistrationKeepsAnEmptyTaintList(t *testing.T) {
	// An empty list registers the Node without taints; unset lets kubeadm taint a control plane node.
	for _, c := range []struct {
		taints *[]corev1.Taint
		want   string
	}{{nil, `{"name":"n"}`}, {&[]corev1.Taint{}, `{"name":"n","taints":[]}`}} {
		data, err := json.Marshal(NodeRegistrationOptions{Name: "n", Taints: c.taints})
		if err != nil {
			t.Fatal(err)
		}
		if string(data) != c.want {
			t.Errorf("serialized %s, want %s", data, c.want)
		}
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
	out, err := json.Marshal(bt)
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != `{"token":"abcdef.0123456789abcdef"}` {
		t.Errorf("serialized %s", out)
	}
	if err := json.Unmarshal([]byte(`{"token":"not-a-token"}`), &bt); err == nil {
		t.Error("a malformed token was accepted")
	}
	if out, _ := json.Marshal(BootstrapToken{}); string(out) != `{}` {
		t.Errorf("a token without a value serializes as %s, want {}", out)
	}
}

func TestV1Beta1ConditionsLiveUnderStatusDeprecated(t *testing.T) {
	o := &KubeadmConfig{}
	apitest.ExpectConditionAccessors(t, o, func() any { return o.Status },
		"Ready", clusterv1.Conditions{{Type: "DataSecretAvailable", Status: "True"}}, "DataSecretAvailable")
}
