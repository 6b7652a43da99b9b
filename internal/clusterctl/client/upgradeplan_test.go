package client

import (
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	clusterctlv1 "github.com/capstan-dev/capstan/api/clusterctl/v1alpha3"
	"github.com/capstan-dev/capstan/internal/clusterctl/config"
	"github.com/capstan-dev/capstan/internal/clusterctl/repository"
	"github.com/capstan-dev/capstan/internal/clusterctl/repository/repositorytest"
)

// planClient returns a client over a local repository holding, for the core and the infrastructure
// provider foo, the releases given (version -> metadata series lines).
func planClient(t *testing.T, cluster ManagementCluster, core, foo map[string]string) *Client {
	t.Helper()
	root := t.TempDir()
	files := map[string]string{}
	add := func(label, components string, releases map[string]string) {
		for version, series := range releases {
			files[label+"/"+version+"/metadata.yaml"] = "apiVersion: clusterctl.cluster.x-k8s.io/v1alpha3\nkind: Metadata\nreleaseSeries:\n" + series
			files[label+"/"+version+"/"+components] = componentsYAML
		}
	}
	add("cluster-api", "core-components.yaml", core)
	add("infrastructure-foo", "infrastructure-components.yaml", foo)
	writeFiles(t, root, files)
	cfg, err := config.New([]byte(`providers:
- {name: foo, type: InfrastructureProvider, url: "`+root+`/infrastructure-foo/latest/infrastructure-components.yaml"}
- {name: cluster-api, type: CoreProvider, url: "`+root+`/cluster-api/latest/core-components.yaml"}
`), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	srv := repositorytest.NewServer(t)
	repos := repository.NewFactory(cfg, repository.WithHTTPClient(srv.Client()),
		repository.WithRetry(repository.Retry{Interval: time.Millisecond, Timeout: 10 * time.Millisecond}))
	return New(Options{Config: cfg, Repositories: repos, Cluster: cluster})
}

func installedProvider(name string, t clusterctlv1.ProviderType, version, namespace string) clusterctlv1.Provider {
	return clusterctlv1.Provider{
		ObjectMeta:   metav1.ObjectMeta{Namespace: namespace, Name: clusterctlv1.ManifestLabel(name, t)},
		ProviderName: name, Type: string(t), Version: version,
	}
}

func TestPlanUpgrade(t *testing.T) {
	const v1beta1 = "- {major: 1, minor: 0, contract: v1beta1}\n- {major: 1, minor: 1, contract: v1beta1}\n"
	const v1beta2 = v1beta1 + "- {major: 2, minor: 0, contract: v1beta2}\n"
	const v1beta3 = v1beta1 + "- {major: 2, minor: 0, contract: v1beta3}\n"
	installed := []clusterctlv1.Provider{
		installedProvider("foo", clusterctlv1.InfrastructureProviderType, "v1.0.0", "foo-system"),
		installedProvider("cluster-api", clusterctlv1.CoreProviderType, "v1.0.0", "capi-system"),
	}
	type row struct{ name, next string }
	tests := []struct {
		name      string
		core, foo map[string]string
		want      map[string][]row
	}{
		{
			name: "newer releases of the contract",
			core: map[string]string{"v1.0.0": v1beta1, "v1.1.0": v1beta1, "v1.1.1": v1beta1, "v1.2.0-rc.0": v1beta1},
			foo:  map[string]string{"v1.0.0": v1beta1, "v1.0.3": v1beta1},
			want: map[string][]row{"v1beta1": {{"cluster-api", "v1.1.1"}, {"infrastructure-foo", "v1.0.3"}}},
		},
		{
			name: "up to date",
			core: map[string]string{"v1.0.0": v1beta1},
			foo:  map[string]string{"v1.0.0": v1beta1},
			want: map[string][]row{"v1beta1": {{"cluster-api", ""}, {"infrastructure-foo", ""}}},
		},
		{
			name: "a newer contract every provider has a release for",
			core: map[string]string{"v1.0.0": v1beta1, "v2.0.0": v1beta2},
			foo:  map[string]string{"v1.0.0": v1beta1, "v1.1.0": v1beta1, "v2.0.1": v1beta2},
			want: map[string][]row{
				"v1beta1": {{"cluster-api", ""}, {"infrastructure-foo", "v1.1.0"}},
				"v1beta2": {{"cluster-api", "v2.0.0"}, {"infrastructure-foo", "v2.0.1"}},
			},
		},
		{
			// A v1beta2 core works with v1beta1 providers (upstream's rule): the provider stays.
			name: "a newer contract a provider has no release for, whose core accepts the provider's",
			core: map[string]string{"v1.0.0": v1beta1, "v2.0.0": v1beta2},
			foo:  map[string]string{"v1.0.0": v1beta1},
			want: map[string][]row{"v1beta1": {{"cluster-api", ""}, {"infrastructure-foo", ""}}, "v1beta2": {{"cluster-api", "v2.0.0"}, {"infrastructure-foo", ""}}},
		},
		{
			name: "a newer contract a provider has no release for",
			core: map[string]string{"v1.0.0": v1beta1, "v2.0.0": v1beta3},
			foo:  map[string]string{"v1.0.0": v1beta1},
			want: map[string][]row{"v1beta1": {{"cluster-api", ""}, {"infrastructure-foo", ""}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			c := planClient(t, &fakeCluster{providers: installed}, tt.core, tt.foo)
			plans, err := c.PlanUpgrade(t.Context())
			g.Expect(err).NotTo(HaveOccurred())
			got := map[string][]row{}
			for _, p := range plans {
				for _, item := range p.Providers {
					got[p.Contract] = append(got[p.Contract], row{item.Name, item.NextVersion})
				}
			}
			g.Expect(got).To(Equal(tt.want))
		})
	}
}

func TestPlanUpgradeWithoutCore(t *testing.T) {
	g := NewWithT(t)
	c := planClient(t, &fakeCluster{}, nil, nil)
	_, err := c.PlanUpgrade(t.Context())
	g.Expect(err).To(MatchError("the management cluster has no core provider: run 'clusterctl init' first"))
}

func TestCheckSkippedMinors(t *testing.T) {
	tests := []struct {
		provider clusterctlv1.Provider
		to       string
		wantErr  string
	}{
		{provider: installedProvider("cluster-api", clusterctlv1.CoreProviderType, "v1.10.2", "ns"), to: "v1.13.0"},
		{provider: installedProvider("cluster-api", clusterctlv1.CoreProviderType, "v1.10.2", "ns"), to: "v1.14.0",
			wantErr: "upgrading cluster-api from v1.10.2 to v1.14.0 skips more than 3 minor releases, which it does not support: upgrade to v1.13 first"},
		{provider: installedProvider("kubeadm", clusterctlv1.ControlPlaneProviderType, "v1.11.0", "ns"), to: "v1.15.0",
			wantErr: "upgrading control-plane-kubeadm from v1.11.0 to v1.15.0 skips more than 3 minor releases"},
		{provider: installedProvider("cluster-api", clusterctlv1.CoreProviderType, "v1.9.0", "ns"), to: "v1.14.0"},
		{provider: installedProvider("cluster-api", clusterctlv1.CoreProviderType, "v0.1.0", "ns"), to: "v0.9.0"},
		{provider: installedProvider("aws", clusterctlv1.InfrastructureProviderType, "v1.10.0", "ns"), to: "v1.20.0"},
	}
	for _, tt := range tests {
		err := checkSkippedMinors(tt.provider, tt.to)
		if tt.wantErr == "" {
			if err != nil {
				t.Errorf("%s %s to %s: %v", tt.provider.ManifestLabel(), tt.provider.Version, tt.to, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
			t.Errorf("%s %s to %s: error %v, want %q", tt.provider.ManifestLabel(), tt.provider.Version, tt.to, err, tt.wantErr)
		}
	}
}

func TestSelectForDelete(t *testing.T) {
	installed := []clusterctlv1.Provider{
		installedProvider("cluster-api", clusterctlv1.CoreProviderType, "v1.0.0", "capi-system"),
		installedProvider("foo", clusterctlv1.InfrastructureProviderType, "v1.0.0", "shared"),
		installedProvider("bar", clusterctlv1.InfrastructureProviderType, "v2.0.0", "shared"),
	}
	tests := []struct {
		name    string
		opts    DeleteOptions
		want    []string
		wantErr string
	}{
		{name: "all, dependents first", opts: DeleteOptions{All: true}, want: []string{"infrastructure-foo", "infrastructure-bar", "cluster-api"}},
		{name: "by name and version", opts: DeleteOptions{Providers: Providers{InfrastructureProviders: []string{"foo:v1.0.0"}, CoreProvider: "cluster-api"}}, want: []string{"infrastructure-foo", "cluster-api"}},
		{name: "nothing named", wantErr: "no provider to delete: name at least one with --core, --bootstrap, --control-plane, --infrastructure, --ipam, --runtime-extension or --addon, or use --all"},
		{name: "not installed", opts: DeleteOptions{Providers: Providers{InfrastructureProviders: []string{"baz"}}},
			wantErr: "infrastructure-baz is not installed in the management cluster; installed are: cluster-api v1.0.0, infrastructure-foo v1.0.0, infrastructure-bar v2.0.0"},
		{name: "another version", opts: DeleteOptions{Providers: Providers{InfrastructureProviders: []string{"bar:v1.0.0"}}},
			wantErr: "infrastructure-bar is installed at version v2.0.0, not v1.0.0: give the installed version, or none"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			got, err := selectForDelete(installed, tt.opts)
			if tt.wantErr != "" {
				g.Expect(err).To(MatchError(tt.wantErr))
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			var labels []string
			for _, p := range got {
				labels = append(labels, p.ManifestLabel())
			}
			g.Expect(labels).To(Equal(tt.want))
		})
	}

	g := NewWithT(t)
	err := checkNamespacesUnshared(installed, installed[1:2])
	g.Expect(err).To(MatchError("cannot delete namespace shared: it also hosts infrastructure-bar, which is not being deleted; delete it too, or run without --include-namespace"))
	g.Expect(checkNamespacesUnshared(installed, installed[1:])).To(Succeed())
}

func TestUpgradeErrorMessage(t *testing.T) {
	g := NewWithT(t)
	err := &UpgradeError{
		Err:        errTest,
		Done:       []string{"cluster-api v0.2.0"},
		InProgress: "infrastructure-fixture (v0.1.0 to v0.2.0)",
		NotStarted: []string{"infrastructure-local (v0.1.0 to v0.2.0)"},
	}
	g.Expect(err.Error()).To(Equal("upgrading infrastructure-fixture (v0.1.0 to v0.2.0): boom; upgraded: cluster-api v0.2.0; stopped part way: infrastructure-fixture (v0.1.0 to v0.2.0), whose controllers are scaled down; not started: infrastructure-local (v0.1.0 to v0.2.0); run the same command again to finish the upgrade"))
	g.Expect(err).To(MatchError(errTest))
}

type testError struct{}

func (testError) Error() string { return "boom" }

var errTest error = testError{}

func TestCompatibleContracts(t *testing.T) {
	g := NewWithT(t)
	g.Expect(compatibleContracts("v1beta2", false)).To(Equal([]string{"v1beta2", "v1beta1"}), "upstream's rule")
	g.Expect(compatibleContracts("v1beta1", true)).To(Equal([]string{"v1beta1", "v1beta2"}), "a v1beta1 core that serves v1beta2")
	g.Expect(compatibleContracts("v1beta1", false)).To(Equal([]string{"v1beta1"}), "upstream's v1beta1 cores")
	g.Expect(compatibleContracts("v1beta3", true)).To(Equal([]string{"v1beta3"}))

	crd := func(versions ...string) unstructured.Unstructured {
		u := unstructured.Unstructured{Object: map[string]any{"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
			"metadata": map[string]any{"name": clustersCRD}}}
		var vs []any
		for _, v := range versions {
			vs = append(vs, map[string]any{"name": v, "served": true, "storage": v == versions[0]})
		}
		_ = unstructured.SetNestedSlice(u.Object, vs, "spec", "versions")
		return u
	}
	serves, err := coreServesV1beta2(t.Context(), nil, []unstructured.Unstructured{crd("v1beta1", "v1beta2")})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(serves).To(BeTrue())
	serves, err = coreServesV1beta2(t.Context(), nil, []unstructured.Unstructured{crd("v1beta1")})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(serves).To(BeFalse())
	serves, err = coreServesV1beta2(t.Context(), &fakeCluster{}, nil)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(serves).To(BeFalse(), "a management cluster whose CRDs cannot be read")
}
