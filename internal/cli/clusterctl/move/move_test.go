package move_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/cli/clusterctl/clusterctltest"
	"github.com/capstan-dev/capstan/internal/clusterctl/move/movetest"
	"github.com/capstan-dev/capstan/internal/test/envtest"
	"github.com/capstan-dev/capstan/internal/test/golden"
)

var source, target *envtest.Environment

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	ctrllog.SetLogger(logr.Discard())
	ctx := context.Background()
	envs, err := envtest.StartAll(envtest.Options{CRDs: movetest.CRDs()}, envtest.Options{CRDs: movetest.CRDs()})
	if err != nil {
		fmt.Fprintf(os.Stderr, "Starting the test API servers: %v\n", err)
		return 1
	}
	defer envtest.StopAll(envs)
	source, target = envs[0], envs[1]
	for _, env := range envs {
		if err := movetest.PrepareManagementCluster(ctx, env.Client, "v1.0.0"); err != nil {
			fmt.Fprintf(os.Stderr, "Preparing the test API servers: %v\n", err)
			return 1
		}
	}
	return m.Run()
}

// namespace creates a namespace with a fixed name (the output names it) holding the fixture's clusters.
func namespace(t *testing.T, name string, clusters ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := source.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
		t.Fatal(err)
	}
	if err := movetest.CreateClusters(ctx, source.Client, name, clusters...); err != nil {
		t.Fatal(err)
	}
}

// stable replaces the API servers' addresses, which change from run to run.
func stable(s string) string {
	return strings.NewReplacer(source.Config.Host, "https://source", target.Config.Host, "https://target").Replace(s)
}

func TestFlags(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		stderr string
	}{
		{
			name:   "no target",
			args:   []string{"move"},
			stderr: "Error: please specify a target cluster using the --to-kubeconfig flag when not using --dry-run, --to-directory or --from-directory\n",
		},
		{
			name:   "to a directory and a cluster",
			args:   []string{"move", "--to-directory", "x", "--to-kubeconfig", "y"},
			stderr: "Error: if any flags in the group [to-directory to-kubeconfig] are set none of the others can be; [to-directory to-kubeconfig] were all set\n",
		},
		{
			name:   "from and to a directory",
			args:   []string{"move", "--to-directory", "x", "--from-directory", "y"},
			stderr: "Error: if any flags in the group [from-directory to-directory] are set none of the others can be; [from-directory to-directory] were all set\n",
		},
		{
			name:   "from a directory and a source",
			args:   []string{"move", "--from-directory", "x", "--kubeconfig", "y"},
			stderr: "Error: if any flags in the group [from-directory kubeconfig] are set none of the others can be; [from-directory kubeconfig] were all set\n",
		},
		{
			name:   "API warnings",
			args:   []string{"move", "--dry-run", "--hide-api-warnings", "some"},
			stderr: "Error: invalid --hide-api-warnings \"some\": use default, all or none\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			res := clusterctltest.Run(t, tt.args, clusterctltest.Options{})
			g.Expect(res.Code).To(Equal(1))
			g.Expect(res.Stderr).To(Equal(tt.stderr))
			g.Expect(res.Stdout).To(BeEmpty())
		})
	}
}

func TestMove(t *testing.T) {
	g := NewWithT(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	namespace(t, "team-a", "alpha", "bravo")
	from, to := source.KubeconfigFile(t, ""), target.KubeconfigFile(t, "")
	before, err := movetest.Take(ctx, source.Client, "team-a")
	g.Expect(err).NotTo(HaveOccurred())

	// The dry run lists the plan, changes nothing, and logs to stderr.
	res := clusterctltest.Run(t, []string{"move", "--kubeconfig", from, "--to-kubeconfig", to, "-n", "team-a", "--dry-run"}, clusterctltest.Options{})
	g.Expect(res.Code).To(Equal(0), res.Stderr)
	golden.Assert(t, "dry-run.golden.txt", []byte(stable(res.Stdout)))
	g.Expect(res.Stderr).To(HavePrefix("Performing move...\n***"))
	after, err := movetest.Take(ctx, source.Client, "team-a")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(after).To(Equal(before))

	// A paused Cluster stops the move before anything is changed; every problem is listed.
	cluster := &clusterv1.Cluster{}
	g.Expect(source.Client.Get(ctx, client.ObjectKey{Namespace: "team-a", Name: "alpha"}, cluster)).To(Succeed())
	cluster.Spec.Paused = true
	g.Expect(source.Client.Update(ctx, cluster)).To(Succeed())
	machine := &clusterv1.Machine{}
	g.Expect(source.Client.Get(ctx, client.ObjectKey{Namespace: "team-a", Name: "bravo-cp-0"}, machine)).To(Succeed())
	nodeRef := machine.Status.NodeRef
	machine.Status.NodeRef = nil
	g.Expect(source.Client.Status().Update(ctx, machine)).To(Succeed())
	res = clusterctltest.Run(t, []string{"move", "--kubeconfig", from, "--to-kubeconfig", to, "-n", "team-a"}, clusterctltest.Options{})
	g.Expect(res.Code).To(Equal(1))
	g.Expect(res.Stdout).To(BeEmpty())
	golden.Assert(t, "preflight.golden.txt", []byte(stable(res.Stderr)))

	g.Expect(source.Client.Get(ctx, client.ObjectKey{Namespace: "team-a", Name: "alpha"}, cluster)).To(Succeed())
	cluster.Spec.Paused = false
	g.Expect(source.Client.Update(ctx, cluster)).To(Succeed())
	g.Expect(source.Client.Get(ctx, client.ObjectKey{Namespace: "team-a", Name: "bravo-cp-0"}, machine)).To(Succeed())
	machine.Status.NodeRef = nodeRef
	g.Expect(source.Client.Status().Update(ctx, machine)).To(Succeed())

	// The move.
	res = clusterctltest.Run(t, []string{"move", "--kubeconfig", from, "--to-kubeconfig", to, "--namespace", "team-a"}, clusterctltest.Options{})
	g.Expect(res.Code).To(Equal(0), res.Stderr)
	golden.Assert(t, "move.golden.txt", []byte(stable(res.Stdout)))
	g.Expect(res.Stderr).To(Equal(`Performing move...
Discovering Cluster API objects
Moving Cluster API objects Clusters="2" ClusterClasses="1"
Pausing the source objects="3"
Waiting for all resources to be ready to move
Creating objects in the target cluster
Deleting objects from the source cluster
Global objects copied and kept in the source objects="GenericClusterIdentity team-a-identity, Secret generic-system/team-a-identity-credentials"
Resuming the target cluster
`))
	problems := movetest.Verify(ctx, source.Client, target.Client, "team-a", before)
	g.Expect(problems).To(BeEmpty(), strings.Join(problems, "\n"))

	// Run again (as after a kill at the very end): nothing left to do, and it says so.
	res = clusterctltest.Run(t, []string{"move", "--kubeconfig", from, "--to-kubeconfig", to, "--namespace", "team-a"}, clusterctltest.Options{})
	g.Expect(res.Code).To(Equal(0), res.Stderr)
	g.Expect(stable(res.Stdout)).To(Equal("Nothing left to move from namespace team-a of https://source: https://target already has its Clusters.\n"))
	g.Expect(stable(res.Stderr)).To(ContainSubstring("Warning: nothing left to move: the target management cluster https://target already has the Clusters of namespace team-a (alpha, bravo); a previous move finished"))
}

func TestToAndFromDirectory(t *testing.T) {
	g := NewWithT(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	namespace(t, "team-b", "charlie")
	from, to := source.KubeconfigFile(t, ""), target.KubeconfigFile(t, "")
	before, err := movetest.Take(ctx, source.Client, "team-b")
	g.Expect(err).NotTo(HaveOccurred())
	dir := filepath.Join(t.TempDir(), "backup")

	res := clusterctltest.Run(t, []string{"move", "--kubeconfig", from, "-n", "team-b", "--to-directory", dir}, clusterctltest.Options{})
	g.Expect(res.Code).To(Equal(0), res.Stderr)
	// The global identities of team-a (moved by TestMove, kept in the source) are written too.
	g.Expect(stable(res.Stdout)).To(MatchRegexp(`^Wrote \d+ objects \(1 Cluster, 1 ClusterClass\) from namespace team-b of https://source to ` + dir + `\.\n`))

	res = clusterctltest.Run(t, []string{"move", "--to-kubeconfig", to, "--from-directory", dir}, clusterctltest.Options{})
	g.Expect(res.Code).To(Equal(0), res.Stderr)
	g.Expect(stable(res.Stdout)).To(HavePrefix("Restored 2"))
	restored, err := movetest.Take(ctx, target.Client, "team-b")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(restored).To(Equal(before))
}
