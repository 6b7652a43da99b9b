package alpha

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	controlplanev1 "github.com/capstan-dev/capstan/api/controlplane/kubeadm/v1beta1"
	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	clusterctlcli "github.com/capstan-dev/capstan/internal/cli/clusterctl"
	"github.com/capstan-dev/capstan/internal/cli/iostreams"
	clusterctlclient "github.com/capstan-dev/capstan/internal/clusterctl/client"
	"github.com/capstan-dev/capstan/internal/clusterctl/cluster"
	"github.com/capstan-dev/capstan/internal/test/envtest"
)

var env *envtest.Environment

func TestMain(m *testing.M) {
	os.Exit(envtest.Run(m, envtest.Options{}, func(e *envtest.Environment) { env = e }))
}

var now = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

func TestParseResources(t *testing.T) {
	md := kinds[0]
	tests := []struct {
		name    string
		args    []string
		want    []resource
		wantErr string
	}{
		{name: "TYPE/NAME", args: []string{"machinedeployment/md-0"}, want: []resource{{md, "md-0"}}},
		{name: "several TYPE/NAME", args: []string{"machinedeployment/a", "MachineDeployment/b"}, want: []resource{{md, "a"}, {md, "b"}}},
		{name: "TYPE NAME...", args: []string{"machinedeployment", "a", "b"}, want: []resource{{md, "a"}, {md, "b"}}},
		{name: "aliases", args: []string{"md/a", "machinedeployments/b", "machinedeployment.cluster.x-k8s.io/c"}, want: []resource{{md, "a"}, {md, "b"}, {md, "c"}}},
		{name: "nothing", args: nil, wantErr: "required resource not specified: give one as TYPE/NAME, e.g. machinedeployment/my-md-0 (supported types: machinedeployment, kubeadmcontrolplane)"},
		{name: "an unsupported type", args: []string{"deployment/a"}, wantErr: `invalid resource type "deployment": supported types are machinedeployment, kubeadmcontrolplane`},
		{name: "an unsupported type, kubectl style", args: []string{"machineset", "a"}, wantErr: `invalid resource type "machineset": supported types are machinedeployment, kubeadmcontrolplane`},
		{name: "a type without name", args: []string{"machinedeployment"}, wantErr: "no name given for machinedeployment: use machinedeployment/NAME"},
		{name: "an empty name", args: []string{"machinedeployment/"}, wantErr: `"machinedeployment/" is not a resource: give it as TYPE/NAME`},
		{name: "mixed forms", args: []string{"machinedeployment", "a/b"}, wantErr: `"a/b": give resources either as TYPE NAME... or as TYPE/NAME..., not both`},
		{name: "a name among TYPE/NAME", args: []string{"machinedeployment/a", "b"}, wantErr: `"b" is not a resource: give it as TYPE/NAME`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			got, err := parseResources(tt.args)
			if tt.wantErr != "" {
				g.Expect(err).To(MatchError(ContainSubstring(tt.wantErr)))
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(got).To(Equal(tt.want))
		})
	}
}

// rollout runs `clusterctl alpha rollout args...` at now.
func rollout(t *testing.T, kubeconfig string, args ...string) (string, error) {
	t.Helper()
	deps := &clusterctlcli.Deps{
		LookupEnv: func(string) (string, bool) { return "", false },
		ManagementCluster: func(k cluster.Kubeconfig) clusterctlclient.ManagementCluster {
			return cluster.New(k)
		},
	}
	var stdout, stderr bytes.Buffer
	cmd := newCommand(iostreams.Streams{In: strings.NewReader(""), Out: &stdout, ErrOut: &stderr}, deps, func() time.Time { return now })
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	cmd.SetOut(&stdout)
	cmd.SetErr(&stderr)
	cmd.SetArgs(append(append([]string{"rollout"}, args...), "--kubeconfig", kubeconfig))
	err := cmd.ExecuteContext(context.Background())
	return stdout.String(), err
}

func createMachineDeployment(t *testing.T, ns, name string, change func(*clusterv1.MachineDeployment)) {
	t.Helper()
	labels := map[string]string{clusterv1.ClusterNameLabel: "demo", clusterv1.MachineDeploymentNameLabel: name}
	md := &clusterv1.MachineDeployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: clusterv1.MachineDeploymentSpec{
			ClusterName: "demo", Replicas: ptr.To[int32](1),
			Selector: metav1.LabelSelector{MatchLabels: labels},
			Template: clusterv1.MachineTemplateSpec{
				ObjectMeta: clusterv1.ObjectMeta{Labels: labels},
				Spec: clusterv1.MachineSpec{ClusterName: "demo", InfrastructureRef: corev1.ObjectReference{
					APIVersion: "infrastructure.cluster.x-k8s.io/v1alpha1", Kind: "LocalMachineTemplate", Name: "demo"}},
			},
		},
	}
	if change != nil {
		change(md)
	}
	if err := env.Client.Create(context.Background(), md); err != nil {
		t.Fatal(err)
	}
}

func getMachineDeployment(g Gomega, ns, name string) *clusterv1.MachineDeployment {
	md := &clusterv1.MachineDeployment{}
	g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, md)).To(Succeed())
	return md
}

func TestRestart(t *testing.T) {
	ns := env.NewNamespace(t)
	kubeconfig := env.KubeconfigFile(t, ns)
	createMachineDeployment(t, ns, "md-0", nil)
	createMachineDeployment(t, ns, "md-1", nil)
	createMachineDeployment(t, ns, "paused", func(md *clusterv1.MachineDeployment) { md.Spec.Paused = true })
	createMachineDeployment(t, ns, "scheduled", func(md *clusterv1.MachineDeployment) {
		md.Spec.RolloutAfter = ptr.To(metav1.NewTime(now.Add(time.Hour)))
	})
	createMachineDeployment(t, ns, "past", func(md *clusterv1.MachineDeployment) {
		md.Spec.RolloutAfter = ptr.To(metav1.NewTime(now.Add(-time.Hour)))
	})

	t.Run("sets spec.rolloutAfter to now", func(t *testing.T) {
		g := NewWithT(t)
		out, err := rollout(t, kubeconfig, "restart", "machinedeployment/md-0", "machinedeployment/md-1")
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(out).To(Equal("machinedeployment.cluster.x-k8s.io/md-0 restarted\nmachinedeployment.cluster.x-k8s.io/md-1 restarted\n"))
		for _, name := range []string{"md-0", "md-1"} {
			md := getMachineDeployment(g, ns, name)
			g.Expect(md.Spec.RolloutAfter).NotTo(BeNil())
			g.Expect(md.Spec.RolloutAfter.Time).To(BeTemporally("==", now))
			// Nothing else changed.
			g.Expect(md.Spec.Paused).To(BeFalse())
			g.Expect(*md.Spec.Replicas).To(Equal(int32(1)))
		}
	})
	t.Run("a rolloutAfter in the past is replaced", func(t *testing.T) {
		g := NewWithT(t)
		_, err := rollout(t, kubeconfig, "restart", "machinedeployment", "past")
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(getMachineDeployment(g, ns, "past").Spec.RolloutAfter.Time).To(BeTemporally("==", now))
	})
	t.Run("refuses a paused MachineDeployment", func(t *testing.T) {
		g := NewWithT(t)
		_, err := rollout(t, kubeconfig, "restart", "machinedeployment/paused")
		g.Expect(err).To(MatchError("machinedeployment/paused is paused: resume it first with clusterctl alpha rollout resume machinedeployment/paused"))
		g.Expect(getMachineDeployment(g, ns, "paused").Spec.RolloutAfter).To(BeNil())
	})
	t.Run("refuses to move a rollout scheduled later", func(t *testing.T) {
		g := NewWithT(t)
		_, err := rollout(t, kubeconfig, "restart", "machinedeployment/scheduled")
		g.Expect(err).To(MatchError(ContainSubstring("machinedeployment/scheduled already has a rollout scheduled at 2026-01-01T13:00:00Z (spec.rolloutAfter): remove spec.rolloutAfter first")))
	})
	t.Run("a MachineDeployment that does not exist", func(t *testing.T) {
		g := NewWithT(t)
		_, err := rollout(t, kubeconfig, "restart", "machinedeployment/nope")
		g.Expect(err).To(MatchError(fmt.Sprintf("machinedeployment/nope not found in namespace %s: check the name, or give its namespace with --namespace", ns)))
	})
	t.Run("--namespace", func(t *testing.T) {
		g := NewWithT(t)
		_, err := rollout(t, kubeconfig, "restart", "machinedeployment/md-0", "-n", "default")
		g.Expect(err).To(MatchError(ContainSubstring("machinedeployment/md-0 not found in namespace default")))
	})
}

func TestPauseResume(t *testing.T) {
	g := NewWithT(t)
	ns := env.NewNamespace(t)
	kubeconfig := env.KubeconfigFile(t, ns)
	createMachineDeployment(t, ns, "md-0", nil)

	out, err := rollout(t, kubeconfig, "pause", "machinedeployment/md-0")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(out).To(Equal("machinedeployment.cluster.x-k8s.io/md-0 paused\n"))
	g.Expect(getMachineDeployment(g, ns, "md-0").Spec.Paused).To(BeTrue())

	_, err = rollout(t, kubeconfig, "pause", "machinedeployment/md-0")
	g.Expect(err).To(MatchError("machinedeployment/md-0 is already paused"))

	out, err = rollout(t, kubeconfig, "resume", "md/md-0")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(out).To(Equal("machinedeployment.cluster.x-k8s.io/md-0 resumed\n"))
	g.Expect(getMachineDeployment(g, ns, "md-0").Spec.Paused).To(BeFalse())

	_, err = rollout(t, kubeconfig, "resume", "machinedeployment/md-0")
	g.Expect(err).To(MatchError("machinedeployment/md-0 is not paused"))

	_, err = rollout(t, kubeconfig, "pause", "machineset/ms")
	g.Expect(err).To(MatchError(`invalid resource type "machineset": supported types are machinedeployment, kubeadmcontrolplane`))
}

// A KubeadmControlPlane is paused with the cluster.x-k8s.io/paused annotation, as upstream, and restarted
// with spec.rolloutAfter.
func TestKubeadmControlPlane(t *testing.T) {
	g := NewWithT(t)
	ns := env.NewNamespace(t)
	kubeconfig := env.KubeconfigFile(t, ns)
	kcp := &controlplanev1.KubeadmControlPlane{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cp"},
		Spec: controlplanev1.KubeadmControlPlaneSpec{Version: "v1.37.1", MachineTemplate: controlplanev1.KubeadmControlPlaneMachineTemplate{
			InfrastructureRef: corev1.ObjectReference{APIVersion: "infrastructure.cluster.x-k8s.io/v1alpha1", Kind: "LocalMachineTemplate", Name: "cp"}}},
	}
	g.Expect(env.Client.Create(context.Background(), kcp)).To(Succeed())
	get := func() *controlplanev1.KubeadmControlPlane {
		out := &controlplanev1.KubeadmControlPlane{}
		g.Expect(env.Client.Get(context.Background(), client.ObjectKeyFromObject(kcp), out)).To(Succeed())
		return out
	}

	out, err := rollout(t, kubeconfig, "pause", "kcp/cp")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(out).To(Equal("kubeadmcontrolplane.controlplane.cluster.x-k8s.io/cp paused\n"))
	g.Expect(get().Annotations).To(HaveKeyWithValue(clusterv1.PausedAnnotation, "true"))
	_, err = rollout(t, kubeconfig, "restart", "kubeadmcontrolplane/cp")
	g.Expect(err).To(MatchError("kubeadmcontrolplane/cp is paused: resume it first with clusterctl alpha rollout resume kubeadmcontrolplane/cp"))

	out, err = rollout(t, kubeconfig, "resume", "kubeadmcontrolplane/cp")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(out).To(Equal("kubeadmcontrolplane.controlplane.cluster.x-k8s.io/cp resumed\n"))
	g.Expect(get().Annotations).NotTo(HaveKey(clusterv1.PausedAnnotation))

	_, err = rollout(t, kubeconfig, "restart", "kubeadmcontrolplane/cp")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(get().Spec.RolloutAfter.Time).To(BeTemporally("==", now))
}
