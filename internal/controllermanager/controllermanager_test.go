package controllermanager

import (
	"os"
	"path/filepath"
	"testing"

	. "github.com/onsi/gomega"
	"github.com/spf13/pflag"

	"github.com/capstan-dev/capstan/internal/feature"
)

// TestFeatureGatesRefuseUnknownGates: upstream's gate names are accepted, an unknown name or value is
// refused with a message naming the known gates, as upstream's managers refuse them.
func TestFeatureGatesRefuseUnknownGates(t *testing.T) {
	tests := []struct {
		name, value, wantErr string
	}{
		{name: "upstream gates", value: "MachinePool=true,ClusterResourceSet=false,MachineSetPreflightChecks=false"},
		{name: "unknown gate", value: "MachinePool=true,NoSuchGate=true", wantErr: `unrecognized feature gate "NoSuchGate": known gates are ClusterResourceSet, ClusterTopology`},
		{name: "not a boolean", value: "ClusterTopology=yes", wantErr: `feature gate ClusterTopology: "yes" is not true or false`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
			DefaultOptions("test-manager").AddFlags(fs)
			err := fs.Parse([]string{"--feature-gates", tt.value})
			if tt.wantErr == "" {
				g.Expect(err).NotTo(HaveOccurred())
				return
			}
			g.Expect(err).To(MatchError(ContainSubstring(tt.wantErr)))
		})
	}
}

func TestSharedFlags(t *testing.T) {
	g := NewWithT(t)
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	g.Expect(os.WriteFile(kubeconfig, []byte(`apiVersion: v1
kind: Config
clusters: [{name: mgmt, cluster: {server: "https://127.0.0.1:6443"}}]
users: [{name: admin, user: {token: secret}}]
contexts: [{name: mgmt, context: {cluster: mgmt, user: admin}}]
current-context: mgmt
`), 0o600)).To(Succeed())

	o := DefaultOptions("test-manager")
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	o.AddFlags(fs)
	g.Expect(fs.Parse([]string{"--kubeconfig", kubeconfig, "-v", "2", "--zap-log-level", "debug", "--feature-gates", "MachinePool=false,ClusterTopology=true"})).To(Succeed())
	g.Expect(o.Verbosity).To(Equal(2))
	g.Expect(o.Zap.Level).NotTo(BeNil(), "the zap flags are registered")
	g.Expect(o.FeatureGates.Enabled(feature.MachinePool)).To(BeFalse())
	g.Expect(o.FeatureGates.Enabled(feature.ClusterTopology)).To(BeTrue())
	g.Expect(o.FeatureGates.Enabled(feature.RuntimeSDK)).To(BeTrue(), "capstan has RuntimeSDK on by default")

	cfg, err := o.RESTConfig()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cfg.Host).To(Equal("https://127.0.0.1:6443"))
	g.Expect(cfg.BearerToken).To(Equal("secret"))
}

// TestMaxConcurrentReconciles: --max-concurrent-reconciles sets every concurrency flag not given, and a
// --<kind>-concurrency flag given wins for its controller.
func TestMaxConcurrentReconciles(t *testing.T) {
	g := NewWithT(t)
	o := DefaultOptions("test-manager")
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	o.AddFlags(fs)
	cluster, machine, workers := 10, 50, 1
	fs.IntVar(&cluster, "cluster-concurrency", cluster, "")
	fs.IntVar(&machine, "machine-concurrency", machine, "")
	fs.IntVar(&workers, "concurrency", workers, "")
	g.Expect(fs.Parse([]string{"--max-concurrent-reconciles=7", "--machine-concurrency=3"})).To(Succeed())
	g.Expect(o.maxConcurrentReconciles()).To(Succeed())
	g.Expect([]int{cluster, machine, workers}).To(Equal([]int{7, 3, 7}))

	// Not given: every controller keeps its own default.
	o = DefaultOptions("test-manager")
	fs = pflag.NewFlagSet("test", pflag.ContinueOnError)
	o.AddFlags(fs)
	cluster = 10
	fs.IntVar(&cluster, "cluster-concurrency", cluster, "")
	g.Expect(fs.Parse(nil)).To(Succeed())
	g.Expect(o.maxConcurrentReconciles()).To(Succeed())
	g.Expect(cluster).To(Equal(10))
}

func TestLeaderElectionID(t *testing.T) {
	tests := []struct {
		name, id, namespace, wantNamespace, wantName, wantErr string
	}{
		{name: "default", namespace: "capi-system", wantNamespace: "capi-system", wantName: "test-manager-leader-election"},
		{name: "a name", id: "my-lease", namespace: "capi-system", wantNamespace: "capi-system", wantName: "my-lease"},
		{name: "namespace/name, as upstream's operator writes it", id: "leases/my-lease", namespace: "capi-system", wantNamespace: "leases", wantName: "my-lease"},
		{name: "not a name", id: "My Lease", wantErr: `--leader-election-id "My Lease" is not a Lease name or namespace/name`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			o := DefaultOptions("test-manager")
			o.LeaderElectionID, o.LeaderElectionNamespace = tt.id, tt.namespace
			ns, name, err := o.leaderElection()
			if tt.wantErr != "" {
				g.Expect(err).To(MatchError(tt.wantErr))
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect([]string{ns, name}).To(Equal([]string{tt.wantNamespace, tt.wantName}))
		})
	}
}
