package provider

import (
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1 "github.com/capstan-dev/capstan/api/operator/v1alpha2"
	"github.com/capstan-dev/capstan/internal/operator/source"
)

func TestSetStatus(t *testing.T) {
	type want struct {
		t, status, reason, message string
	}
	tests := []struct {
		name  string
		scope func(p operatorv1.GenericProvider) *scope
		want  []want
		gen   int64
	}{
		{
			name: "installed and ready",
			scope: func(p operatorv1.GenericProvider) *scope {
				return &scope{provider: p, preflight: good(operatorv1.PreflightChecksPassedReason, ""), installed: good(operatorv1.ProviderInstalledReason, ""),
					deployments: good(operatorv1.DeploymentAvailableReason, "")}
			},
			want: []want{
				{operatorv1.PreflightCheckCondition, "True", operatorv1.PreflightChecksPassedReason, ""},
				{operatorv1.ProviderInstalledCondition, "True", operatorv1.ProviderInstalledReason, ""},
				{operatorv1.ReadyCondition, "True", operatorv1.DeploymentAvailableReason, ""},
			},
			gen: 3,
		},
		{
			name: "a fetch error shows on ProviderInstalled, the generation is not observed",
			scope: func(p operatorv1.GenericProvider) *scope {
				return &scope{provider: p, preflight: good(operatorv1.PreflightChecksPassedReason, ""), fetchErr: bad(operatorv1.ComponentsFetchErrorReason, "version v9 not found.")}
			},
			want: []want{
				{operatorv1.PreflightCheckCondition, "True", operatorv1.PreflightChecksPassedReason, ""},
				{operatorv1.ProviderInstalledCondition, "False", operatorv1.ComponentsFetchErrorReason, "Version v9 not found"},
			},
		},
		{
			name: "a contract mismatch fails the preflight",
			scope: func(p operatorv1.GenericProvider) *scope {
				return &scope{provider: p, preflight: good(operatorv1.PreflightChecksPassedReason, ""), contractErr: bad(operatorv1.CAPIVersionIncompatibilityReason, "wrong contract")}
			},
			want: []want{{operatorv1.PreflightCheckCondition, "False", operatorv1.CAPIVersionIncompatibilityReason, "Wrong contract"}},
		},
		{
			name: "a refused unpause keeps Paused true and says why",
			scope: func(p operatorv1.GenericProvider) *scope {
				return &scope{provider: p, unpause: bad(operatorv1.UnpauseRefusedReason, "refused"), paused: true}
			},
			want: []want{{operatorv1.PausedCondition, "True", operatorv1.UnpauseRefusedReason, "Refused"}},
		},
		{
			name: "a blocked deletion",
			scope: func(p operatorv1.GenericProvider) *scope {
				return &scope{provider: p, deletionBlocked: &fact{ok: true, reason: operatorv1.ClustersExistReason, message: "in use"}}
			},
			want: []want{{operatorv1.DeletionBlockedCondition, "True", operatorv1.ClustersExistReason, "In use"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			p := &operatorv1.InfrastructureProvider{ObjectMeta: metav1.ObjectMeta{Name: "local", Generation: 3}}
			setStatus(tt.scope(p))
			for _, w := range tt.want {
				c := meta.FindStatusCondition(p.Status.Conditions, w.t)
				g.Expect(c).NotTo(BeNil(), w.t)
				g.Expect([]string{string(c.Status), c.Reason, c.Message}).To(Equal([]string{w.status, w.reason, w.message}), w.t)
				g.Expect(c.ObservedGeneration).To(BeEquivalentTo(3))
			}
			g.Expect(p.Status.Conditions).To(HaveLen(len(tt.want)))
			g.Expect(p.Status.ObservedGeneration).To(Equal(tt.gen))
		})
	}
}

func TestConfigFromSecret(t *testing.T) {
	g := NewWithT(t)
	env := map[string]string{"AWS_REGION": "us-east-1", "AWS_PROFILE": "default"}
	cfg, err := source.ConfigFromSecret(map[string][]byte{
		"AWS_REGION": []byte("eu-west-1"),
		"images":     []byte("all: {repository: registry.internal/capi}\n"),
	}, func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	g.Expect(err).NotTo(HaveOccurred())
	v, ok := cfg.Get("AWS_REGION")
	g.Expect(ok).To(BeTrue())
	g.Expect(v).To(Equal("eu-west-1"), "the configSecret wins over the operator's environment")
	v, ok = cfg.Get("AWS_PROFILE")
	g.Expect(ok).To(BeTrue())
	g.Expect(v).To(Equal("default"), "a variable only the operator's environment has")
	image, err := cfg.ImageOverrides().Alter("infrastructure-aws", "registry.k8s.io/capa/manager:v2.8.0")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(image).To(Equal("registry.internal/capi/manager:v2.8.0"))

	_, err = source.ConfigFromSecret(map[string][]byte{"images": []byte("all: [")}, nil)
	g.Expect(err).To(MatchError(ContainSubstring("key images is not YAML")))
}
