package operator

import (
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	operatorv1 "github.com/capstan-dev/capstan/api/operator/v1alpha2"
	"github.com/capstan-dev/capstan/internal/clusterctl/components"
	"github.com/capstan-dev/capstan/internal/clusterctl/config"
	"github.com/capstan-dev/capstan/internal/operator/customize"
	"github.com/capstan-dev/capstan/internal/operator/operatortest"
	"github.com/capstan-dev/capstan/internal/release"
)

// render renders the components of one of capstan's providers with spec applied as the operator does.
func render(t *testing.T, label string, spec *operatorv1.ProviderSpec) []unstructured.Unstructured {
	t.Helper()
	g := NewWithT(t)
	providers, err := release.Providers()
	g.Expect(err).NotTo(HaveOccurred())
	for _, p := range providers {
		if p.Label() != label {
			continue
		}
		files, err := p.Files(operatortest.V1)
		g.Expect(err).NotTo(HaveOccurred())
		comps, err := components.New(components.Input{
			Provider: config.Provider{Name: p.Name, Type: p.Type}, Version: operatortest.V1, Raw: files[p.ComponentsFile()],
			Variables: func(string) (string, bool) { return "", false }, TargetNamespace: "provider-system",
		})
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(comps.Customize(func(objs []unstructured.Unstructured) error { return customize.Deployments(objs, spec) })).To(Succeed())
		return comps.Objects()
	}
	t.Fatalf("no provider %s", label)
	return nil
}

func managerArgs(t *testing.T, objs []unstructured.Unstructured) []string {
	t.Helper()
	for _, o := range objs {
		if o.GetKind() != "Deployment" {
			continue
		}
		containers, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
		args, _, _ := unstructured.NestedStringSlice(containers[0].(map[string]any), "args")
		return args
	}
	t.Fatal("no Deployment")
	return nil
}

// TestEveryFieldIsAFlagOfEachCapstanManager: with every field of spec.manager and spec.deployment set,
// each of capstan's providers runs its manager with arguments the manager accepts.
func TestEveryFieldIsAFlagOfEachCapstanManager(t *testing.T) {
	for _, p := range operatortest.CapstanProviders {
		t.Run(p.Label, func(t *testing.T) {
			g := NewWithT(t)
			spec := operatortest.EveryField("provider-system", operatortest.V1, p.ServiceAccount, p.Concurrency, p.Webhooks)
			args := managerArgs(t, render(t, p.Label, &spec))
			g.Expect(CheckManagerArgs(args)).To(Succeed(), "args: %v", args)
			g.Expect(args).To(ContainElements("--max-concurrent-reconciles=4", "--leader-election-id=provider-system/every-field-lease",
				"--graceful-shutdown-timeout=20s", "--v=5", "--profiler-address=localhost:6060", "--namespace=provider-system"))
			g.Expect(args).NotTo(ContainElement("--namespace=ignored"), "the namespace key of container args is ignored")
			if p.Webhooks {
				g.Expect(args).To(ContainElement("--webhook-host=127.0.0.1"))
			}
		})
	}
}

// TestManagerArgsCheckRefusesWhatAManagerLacks: a flag a manager does not have, a feature gate it does not
// know, a malformed value and a stray argument are refused, naming them; other programs are not checked.
func TestManagerArgsCheckRefusesWhatAManagerLacks(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{name: "a concurrency flag of the core manager", args: []string{"bootstrap-kubeadm", "--machine-concurrency=3"}, wantErr: "capstan bootstrap-kubeadm: unknown flag: --machine-concurrency"},
		{name: "the webhook flags of a manager that serves them", args: []string{"bootstrap-kubeadm", "--webhook-port=9443"}},
		{name: "an unknown feature gate", args: []string{"bootstrap-kubeadm", "--feature-gates=NoSuchGate=true"}, wantErr: `unrecognized feature gate "NoSuchGate"`},
		{name: "a malformed duration", args: []string{"manager", "--sync-period=often"}, wantErr: `invalid argument "often" for "--sync-period"`},
		{name: "a concurrency flag of another manager", args: []string{"controlplane-kubeadm", "--localcluster-concurrency=3"}, wantErr: "unknown flag: --localcluster-concurrency"},
		{name: "a stray argument", args: []string{"manager", "extra"}, wantErr: `capstan manager: unknown command "extra"`},
		{name: "the operator's own flags", args: []string{"operator", "--fetch-timeout=1m", "--allowed-reference-namespaces=a,b"}},
		{name: "another program", args: []string{"--anything=goes"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			err := CheckManagerArgs(tt.args)
			if tt.wantErr == "" {
				g.Expect(err).NotTo(HaveOccurred())
				return
			}
			g.Expect(err).To(MatchError(ContainSubstring(tt.wantErr)))
		})
	}
}
