package controllermanager_test

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/capstan-dev/capstan/internal/controllermanager"
)

// TestLeaderElectionIDAndGracefulShutdown: --leader-election-id namespace/name is the Lease the manager
// holds, and --graceful-shutdown-timeout bounds how long a controller that does not stop holds the
// manager's exit.
func TestLeaderElectionIDAndGracefulShutdown(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "lease-"}}
	g.Expect(env.Client.Create(ctx, ns)).To(Succeed())

	o := controllermanager.DefaultOptions("test-lease")
	o.HealthAddr, o.DiagnosticsAddress = "0", "0"
	o.LeaderElect, o.LeaderElectionID, o.LeaderElectionNamespace = true, ns.Name+"/my-lease", "default"
	o.GracefulShutdownTimeout = time.Second
	mgr, err := o.New(env.Config, env.Scheme)
	g.Expect(err).NotTo(HaveOccurred())
	stuck := make(chan struct{})
	defer close(stuck)
	g.Expect(mgr.Add(manager.RunnableFunc(func(ctx context.Context) error {
		<-ctx.Done()
		<-stuck // a runnable that does not stop when told to
		return nil
	}))).To(Succeed())
	mctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- mgr.Start(mctx) }()
	g.Eventually(func() error {
		return env.Client.Get(ctx, client.ObjectKey{Namespace: ns.Name, Name: "my-lease"}, &coordinationv1.Lease{})
	}, 30*time.Second, 100*time.Millisecond).Should(Succeed(), "the manager holds the Lease --leader-election-id names")
	<-mgr.Elected()

	cancel()
	var stopErr error
	g.Eventually(done, 20*time.Second).Should(Receive(&stopErr), "the manager stops after the grace period although a runnable does not")
	g.Expect(stopErr).To(MatchError(ContainSubstring("grace period")))
}
