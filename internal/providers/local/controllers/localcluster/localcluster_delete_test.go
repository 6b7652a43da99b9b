package localcluster

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterctlv1 "github.com/capstan-dev/capstan/api/clusterctl/v1alpha3"
	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	infrav1 "github.com/capstan-dev/capstan/api/infrastructure/local/v1alpha1"
	"github.com/capstan-dev/capstan/internal/conditions"
	"github.com/capstan-dev/capstan/internal/test/procs"
)

// TestLocalClusterMovedAway deletes a LocalCluster the way clusterctl move deletes what it moved, its
// Cluster paused and the delete-for-move annotation set, while the provider's finalizer is still on it:
// the provider releases it (processes stopped, data kept) rather than tearing it down. The LocalCluster
// then arrives, with its recorded data directory, in a management cluster whose provider has another data
// directory: that provider takes the data over and runs the workload cluster from it, on the same endpoint
// with the same objects.
func TestLocalClusterMovedAway(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	first := startProvider(t, t.TempDir())
	cluster, lc := createCluster(t, ns, "c1", true, nil)
	g.Eventually(func(g Gomega) {
		get(g, lc)
		g.Expect(conditions.IsTrue(lc, clusterv1.ReadyCondition)).To(BeTrue())
	}, 60*time.Second, 200*time.Millisecond).Should(Succeed())
	dir := first.backend.ClusterDir(client.ObjectKeyFromObject(lc))
	g.Expect(lc.Annotations).To(HaveKeyWithValue(infrav1.DataDirAnnotation, dir))
	endpoint := lc.Spec.ControlPlaneEndpoint
	startControlPlane(g, first, lc)
	wc := workloadClient(g, ns, "c1", endpoint)
	_, err := wc.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "kept"}}, metav1.CreateOptions{})
	g.Expect(err).NotTo(HaveOccurred())

	t.Log("deleted for a move while paused, the LocalCluster is released: its processes stop, its data stays")
	get(g, cluster)
	cluster.Spec.Paused = true
	g.Expect(env.Client.Update(ctx, cluster)).To(Succeed())
	etcdPid, apiPid := pidOf(g, dir, "etcd"), pidOf(g, dir, "kube-apiserver")
	annotate := client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"annotations":{"`+clusterctlv1.DeleteForMoveAnnotation+`":"true"}}}`))
	g.Expect(env.Client.Patch(ctx, lc, annotate)).To(Succeed())
	g.Expect(env.Client.Delete(ctx, lc)).To(Succeed())
	g.Eventually(func() bool {
		return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(lc), &infrav1.LocalCluster{}))
	}, 30*time.Second, 100*time.Millisecond).Should(BeTrue())
	g.Expect(procs.Alive(etcdPid)).To(BeFalse())
	g.Expect(procs.Alive(apiPid)).To(BeFalse())
	g.Expect(filepath.Join(dir, "state.json")).To(BeAnExistingFile())
	first.stop()

	t.Log("the provider of the management cluster it was moved to takes the data over from the recorded directory")
	second := startProvider(t, t.TempDir())
	moved := &infrav1.LocalCluster{ObjectMeta: metav1.ObjectMeta{
		Namespace: ns, Name: "c1",
		Labels:          map[string]string{clusterv1.ClusterNameLabel: "c1"},
		Annotations:     map[string]string{infrav1.DataDirAnnotation: dir},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: clusterv1.GroupVersion.String(), Kind: "Cluster", Name: cluster.Name, UID: cluster.UID}},
	}, Spec: infrav1.LocalClusterSpec{ControlPlaneEndpoint: endpoint}}
	g.Expect(env.Client.Create(ctx, moved)).To(Succeed())
	get(g, cluster)
	cluster.Spec.Paused = false
	g.Expect(env.Client.Update(ctx, cluster)).To(Succeed())
	g.Eventually(func(g Gomega) {
		get(g, moved)
		g.Expect(conditions.IsTrue(moved, clusterv1.ReadyCondition)).To(BeTrue())
	}, 60*time.Second, 200*time.Millisecond).Should(Succeed())
	newDir := second.backend.ClusterDir(client.ObjectKeyFromObject(moved))
	g.Expect(moved.Annotations).To(HaveKeyWithValue(infrav1.DataDirAnnotation, newDir))
	g.Expect(moved.Spec.ControlPlaneEndpoint).To(Equal(endpoint))
	startControlPlane(g, second, moved)
	_, err = wc.CoreV1().ConfigMaps("default").Get(ctx, "kept", metav1.GetOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	_, err = os.Stat(dir)
	g.Expect(os.IsNotExist(err)).To(BeTrue(), "the data left the first provider's directory")
}
