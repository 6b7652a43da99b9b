package process

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	infrav1 "github.com/capstan-dev/capstan/api/infrastructure/local/v1alpha1"
	"github.com/capstan-dev/capstan/internal/providers/local/backend"
	"github.com/capstan-dev/capstan/internal/test/procs"
	testworkload "github.com/capstan-dev/capstan/internal/test/workload"
)

// TestHandOver runs a cluster in one backend and hands it over to a second one, as a move between two
// management clusters on one machine does: the second waits while the first runs the cluster, and once
// the first released it, runs it from the same data (same port, same Node) with one etcd and one
// kube-apiserver — whether the two share their data directory or not.
func TestHandOver(t *testing.T) {
	tests := []struct {
		name   string
		shared bool
	}{
		{name: "shared data directory", shared: true},
		{name: "separate data directories, found through the recorded directory", shared: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			ctx := context.Background()
			root := t.TempDir()
			sourceDir, targetDir := filepath.Join(root, "source"), filepath.Join(root, "target")
			if tt.shared {
				targetDir = sourceDir
			}
			source, target := newBackend(t, sourceDir), newBackend(t, targetDir)
			certs := testworkload.NewCertificates(t)
			key := types.NamespacedName{Namespace: "ns", Name: "c1"}
			spec := backend.Cluster{Key: key, ClusterName: "c1", Certificates: certs}

			status := ensureReady(g, source, spec)
			g.Expect(status.DataDir).To(Equal(source.ClusterDir(key)))
			ensureMachine(g, source, key, controlPlaneMachine("m1"))
			client := adminClient(t, certs.CA, status.Port)
			node, err := client.CoreV1().Nodes().Get(ctx, "m1", metav1.GetOptions{})
			g.Expect(err).NotTo(HaveOccurred())

			t.Log("the target waits while the source runs the cluster, and deleting it there leaves the data alone")
			moved := spec
			moved.DataDir = status.DataDir
			waiting, err := target.EnsureCluster(ctx, moved)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(waiting.Ready).To(BeFalse())
			g.Expect(waiting.Reason).To(Equal(infrav1.DataInUseReason))
			g.Expect(waiting.Message).To(Equal("Waiting for another instance of the provider to stop running this cluster from " + status.DataDir))
			g.Expect(waiting.DataDir).To(BeEmpty(), "the data is not the target's yet")
			if tt.shared {
				g.Expect(target.DeleteCluster(ctx, key)).To(Succeed())
				g.Expect(stateFile(status.DataDir)).To(BeAnExistingFile())
			}
			g.Expect(procs.Find("etcd", root)).To(HaveLen(1))
			g.Expect(procs.Find("kube-apiserver", root)).To(HaveLen(1))
			_, err = client.CoreV1().Nodes().Get(ctx, "m1", metav1.GetOptions{})
			g.Expect(err).NotTo(HaveOccurred())

			t.Log("the source releases the cluster: its processes stop, its data stays")
			g.Expect(source.ReleaseCluster(ctx, key)).To(Succeed())
			g.Expect(procs.Find("etcd", root)).To(BeEmpty())
			g.Expect(procs.Find("kube-apiserver", root)).To(BeEmpty())
			g.Expect(stateFile(status.DataDir)).To(BeAnExistingFile())
			g.Expect(source.ReleaseCluster(ctx, key)).To(Succeed(), "releasing an unknown cluster is a no-op")

			t.Log("the target runs the cluster from the same data, on the same port")
			after := ensureReady(g, target, moved)
			ensureMachine(g, target, key, controlPlaneMachine("m1"))
			g.Expect(after.Port).To(Equal(status.Port))
			g.Expect(after.DataDir).To(Equal(target.ClusterDir(key)))
			if !tt.shared {
				g.Expect(source.ClusterDir(key)).NotTo(BeADirectory(), "the data moved to the target's directory")
				g.Expect(filepath.Dir(source.ClusterDir(key))).NotTo(BeADirectory(), "the empty namespace directory is removed")
			}
			again, err := client.CoreV1().Nodes().Get(ctx, "m1", metav1.GetOptions{})
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(again.UID).To(Equal(node.UID))
			g.Expect(procs.Find("etcd", root)).To(HaveLen(1))
			g.Expect(procs.Find("kube-apiserver", root)).To(HaveLen(1))
			stored, err := target.StoredCertificates(key)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(sameCertificates(stored, certs)).To(BeTrue())

			t.Log("the source, asked again (the LocalCluster is moved back), waits in turn")
			movedBack := spec
			movedBack.DataDir = after.DataDir
			back, err := source.EnsureCluster(ctx, movedBack)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(back.Reason).To(Equal(infrav1.DataInUseReason))
			g.Expect(back.Message).To(HaveSuffix(" from " + after.DataDir))
		})
	}
}

func TestIsMovedData(t *testing.T) {
	root := t.TempDir()
	b := &Backend{opts: Options{DataDir: filepath.Join(root, "target")}}
	c := newCluster(b, types.NamespacedName{Namespace: "ns", Name: "c1"})
	withData := func(dir string) string {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := writeState(dir, state{APIServerPort: 6443}); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	tests := []struct {
		name string
		dir  string
		want bool
	}{
		{name: "none recorded", dir: "", want: false},
		{name: "the backend's own directory", dir: withData(c.dir), want: false},
		{name: "another instance's directory of the same cluster", dir: withData(filepath.Join(root, "source", "ns", "c1")), want: true},
		{name: "the same, not clean", dir: root + "/source/ns/../ns/c1/", want: true},
		{name: "relative", dir: filepath.Join("source", "ns", "c1"), want: false},
		{name: "without data", dir: filepath.Join(root, "empty", "ns", "c1"), want: false},
		{name: "another cluster's", dir: withData(filepath.Join(root, "source", "ns", "c2")), want: false},
		{name: "another namespace's", dir: withData(filepath.Join(root, "source", "other", "c1")), want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			g.Expect(c.isMovedData(tt.dir)).To(Equal(tt.want))
		})
	}
}

func TestLockDir(t *testing.T) {
	g := NewWithT(t)
	dir := t.TempDir()
	first, err := lockDir(dir)
	g.Expect(err).NotTo(HaveOccurred())
	_, err = lockDir(dir)
	var inUse *dataInUseError
	g.Expect(err).To(BeAssignableToTypeOf(inUse), "a second lock, even in the same process, waits for the first")
	first.release()
	second, err := lockDir(dir)
	g.Expect(err).NotTo(HaveOccurred())
	second.release()
	_, err = lockDir(filepath.Join(dir, "missing"))
	g.Expect(os.IsNotExist(err)).To(BeTrue(), "%v", err)
}

func TestCopyTree(t *testing.T) {
	g := NewWithT(t)
	from, to := filepath.Join(t.TempDir(), "from"), filepath.Join(t.TempDir(), "to")
	g.Expect(os.MkdirAll(filepath.Join(from, "etcd", "member", "wal"), 0o700)).To(Succeed())
	g.Expect(os.WriteFile(filepath.Join(from, "etcd", "member", "wal", "0.wal"), []byte("wal"), 0o600)).To(Succeed())
	g.Expect(os.WriteFile(filepath.Join(from, "state.json"), []byte("{}"), 0o644)).To(Succeed())
	g.Expect(copyTree(from, to)).To(Succeed())
	data, err := os.ReadFile(filepath.Join(to, "etcd", "member", "wal", "0.wal"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(string(data)).To(Equal("wal"))
	info, err := os.Stat(filepath.Join(to, "state.json"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(info.Mode().Perm()).To(Equal(os.FileMode(0o644)))
	info, err = os.Stat(filepath.Join(to, "etcd", "member"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(info.Mode().Perm()).To(Equal(os.FileMode(0o700)))
}
