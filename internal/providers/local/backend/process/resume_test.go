package process

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	infrav1 "github.com/capstan-dev/capstan/api/infrastructure/local/v1alpha1"
	"github.com/capstan-dev/capstan/internal/providers/local/backend"
	testworkload "github.com/capstan-dev/capstan/internal/test/workload"
)

// TestControlPlaneResumesWithoutItsConfiguration: a cluster of 3 control plane machines whose processes all
// stopped (the provider stopped: capstan down, a power cut) comes back when the provider starts again. The
// machines that joined read their configuration from the workload cluster's kubeadm-config, which no API
// server can serve until etcd has quorum again, which needs their members: they start with the
// configuration they last ran with (backend.ControlPlane.KeepConfiguration), and the machine that waits for
// them says so.
func TestControlPlaneResumesWithoutItsConfiguration(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	dataDir := t.TempDir()
	certs := testworkload.NewCertificates(t)
	key := types.NamespacedName{Namespace: "ns", Name: "c1"}
	spec := backend.Cluster{Key: key, ClusterName: "c1", Certificates: certs}
	joined := func(name string) backend.Machine {
		m := controlPlaneMachine(name)
		// What the joining machines read from kubeadm-config: an extra argument of their API servers.
		m.ControlPlane.APIServerArgs = []backend.Arg{{Name: "audit-log-maxage", Value: "7"}}
		return m
	}
	first := newBackend(t, dataDir)
	status := ensureReady(g, first, spec)
	t.Log("a cluster of 3 control plane machines, b and c joined with an argument read from the cluster")
	for _, m := range []backend.Machine{controlPlaneMachine("a"), joined("b"), joined("c")} {
		ensureMachine(g, first, key, m)
	}
	client := adminClient(t, certs.CA, status.Port)
	_, err := client.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "kept"}, Data: map[string]string{"written": "before"}}, metav1.CreateOptions{})
	g.Expect(err).NotTo(HaveOccurred())

	t.Log("every process stops; the provider starts again")
	first.Shutdown()
	second := newBackend(t, dataDir)
	ensureReady(g, second, spec)

	t.Log("the first machine alone waits for the others' etcd members, and says so")
	g.Eventually(func(g Gomega) {
		st, err := second.EnsureMachine(ctx, key, controlPlaneMachine("a"))
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(st.Reason).To(Equal(infrav1.WaitingForEtcdReason), st.Message)
		g.Expect(st.Message).To(Equal("Waiting for etcd quorum: 1 of 3 members run, 2 needed; waiting for the members of machines b, c to start"))
	}, 60*time.Second, 200*time.Millisecond).Should(Succeed())

	t.Log("a machine that never ran cannot start without its configuration")
	st, err := second.EnsureMachine(ctx, key, backend.Machine{Name: "d", NodeName: "d", ProviderID: "local://ns/c1/d", Version: "v1.37.1",
		ControlPlane: &backend.ControlPlane{KeepConfiguration: true}})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(st.Reason).To(Equal(infrav1.WaitingForControlPlaneReason), st.Message)

	t.Log("the joined machines start with the configuration they last ran with: the cluster is back with its data")
	for _, name := range []string{"b", "c"} {
		m := controlPlaneMachine(name)
		m.ControlPlane.KeepConfiguration = true
		g.Eventually(func(g Gomega) {
			st, err := second.EnsureMachine(ctx, key, m)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(st.Reason).NotTo(Equal(infrav1.WaitingForControlPlaneReason), st.Message)
		}, 60*time.Second, 200*time.Millisecond).Should(Succeed())
	}
	for _, m := range []backend.Machine{controlPlaneMachine("a"), keep(controlPlaneMachine("b")), keep(controlPlaneMachine("c"))} {
		ensureMachine(g, second, key, m)
	}
	g.Expect(second.DeleteMachine(ctx, key, "d")).To(Succeed())
	got, err := client.CoreV1().ConfigMaps("default").Get(ctx, "kept", metav1.GetOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(got.Data).To(HaveKeyWithValue("written", "before"))
	for _, name := range []string{"b", "c"} {
		cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pidOf(t, second.ClusterDir(key), name, componentAPIServer)))
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(strings.Split(string(cmdline), "\x00")).To(ContainElement("--audit-log-maxage=7"), "machine %s", name)
	}
}

func keep(m backend.Machine) backend.Machine {
	m.ControlPlane.KeepConfiguration = true
	return m
}
