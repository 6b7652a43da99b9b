package controllermanager_test

import (
	"context"
	"errors"
	"net/url"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/capstan-dev/capstan/internal/controllermanager"
	"github.com/capstan-dev/capstan/internal/test/stallproxy"
)

// leaseLossOptions are the options of a manager whose lease is short, so that a stall of a few seconds
// costs it.
func leaseLossOptions(ns, name string) *controllermanager.Options {
	o := controllermanager.DefaultOptions(name)
	o.HealthAddr, o.DiagnosticsAddress = "0", "0"
	o.LeaderElect, o.LeaderElectionNamespace = true, ns
	o.LeaderElectLeaseDuration, o.LeaderElectRenewDeadline, o.LeaderElectRetryPeriod = 3*time.Second, 2*time.Second, 500*time.Millisecond
	return o
}

// behindProxy returns the test API server's config reached through a stalling proxy.
func behindProxy(t *testing.T) (*rest.Config, *stallproxy.Proxy) {
	t.Helper()
	u, err := url.Parse(env.Config.Host)
	if err != nil {
		t.Fatal(err)
	}
	p, err := stallproxy.New(u.Host)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	cfg := rest.CopyConfig(env.Config)
	cfg.Host = "https://" + p.Addr()
	return cfg, p
}

// countingSetup sets a manager up with a controller named name (which the next manager takes again) and a
// runnable that runs while the manager leads; built counts the managers, led their runs as leaders.
func countingSetup(name string, built, led *atomic.Int32) func(ctrl.Manager) error {
	return func(mgr ctrl.Manager) error {
		built.Add(1)
		if err := ctrl.NewControllerManagedBy(mgr).Named(name).For(&coordinationv1.Lease{}).
			Complete(reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) { return reconcile.Result{}, nil })); err != nil {
			return err
		}
		return mgr.Add(manager.RunnableFunc(func(ctx context.Context) error {
			led.Add(1)
			<-ctx.Done()
			return nil
		}))
	}
}

// TestAManagerThatLostItsLeaseIsFollowedByAnother: the management API is unreachable for longer than the
// renew deadline, so the manager loses its lease. The local provider used to exit then, and its workload
// clusters (its child processes) went down with it. RunAcrossLeaseLoss keeps the process: a new manager
// campaigns, leads again once the API answers, and the state the process holds outside its managers (here
// a counter of the leader's runs) was never stopped.
func TestAManagerThatLostItsLeaseIsFollowedByAnother(t *testing.T) {
	g := NewWithT(t)
	ns := env.NewNamespace(t)
	cfg, proxy := behindProxy(t)
	o := leaseLossOptions(ns, "test-lease-loss")

	built, led := &atomic.Int32{}, &atomic.Int32{}
	setup := countingSetup(o.Name, built, led)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- o.RunAcrossLeaseLoss(ctx, cfg, env.Scheme, setup) }()
	g.Eventually(led.Load, 30*time.Second, 100*time.Millisecond).Should(BeEquivalentTo(1), "the first manager leads")

	// Unreachable for three times the renew deadline: the lease is lost, and no manager can be built.
	proxy.SetDrop(true)
	g.Consistently(done, 6*time.Second, 100*time.Millisecond).ShouldNot(Receive(), "the process does not end")
	proxy.SetDrop(false)
	g.Eventually(led.Load, 60*time.Second, 100*time.Millisecond).Should(BeEquivalentTo(2), "a second manager leads once the API answers")
	g.Expect(built.Load()).To(BeEquivalentTo(2))
	lease := &coordinationv1.Lease{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "test-lease-loss-leader-election"}, lease)).To(Succeed())
	g.Expect(*lease.Spec.HolderIdentity).To(HaveSuffix("-1"), "the second manager holds the lease under its own identity")

	cancel()
	g.Eventually(done, 30*time.Second).Should(Receive(BeNil()), "it ends with its context")
}

// TestAnotherInstanceTakingTheLeaseEndsTheProcess: while the process campaigns again after a lost lease,
// another instance holds the lease and renews it: RunAcrossLeaseLoss returns ErrAnotherLeader, so that the
// process exits and lets the other instance take its state (the workload clusters' data directories)
// over.
func TestAnotherInstanceTakingTheLeaseEndsTheProcess(t *testing.T) {
	g := NewWithT(t)
	ns := env.NewNamespace(t)
	cfg, proxy := behindProxy(t)
	o := leaseLossOptions(ns, "test-lease-taken")

	built, led := &atomic.Int32{}, &atomic.Int32{}
	setup := countingSetup(o.Name, built, led)
	done := make(chan error, 1)
	go func() { done <- o.RunAcrossLeaseLoss(t.Context(), cfg, env.Scheme, setup) }()
	g.Eventually(led.Load, 30*time.Second, 100*time.Millisecond).Should(BeEquivalentTo(1))

	proxy.SetDrop(true)
	g.Consistently(done, 6*time.Second, 100*time.Millisecond).ShouldNot(Receive(), "three times the renew deadline: the lease is lost, the process does not end")
	// Another instance takes the expired lease and keeps renewing it.
	key := client.ObjectKey{Namespace: ns, Name: "test-lease-taken-leader-election"}
	renew := func() error {
		lease := &coordinationv1.Lease{}
		if err := env.Client.Get(t.Context(), key, lease); err != nil {
			return err
		}
		lease.Spec.HolderIdentity = ptr.To("another-host_abc")
		lease.Spec.RenewTime = &metav1.MicroTime{Time: time.Now()}
		lease.Spec.LeaseDurationSeconds = ptr.To[int32](3)
		return env.Client.Update(t.Context(), lease)
	}
	g.Eventually(renew, 10*time.Second, 100*time.Millisecond).Should(Succeed())
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(500 * time.Millisecond):
				_ = renew()
			}
		}
	}()
	proxy.SetDrop(false)
	var err error
	g.Eventually(done, 30*time.Second).Should(Receive(&err))
	g.Expect(errors.Is(err, controllermanager.ErrAnotherLeader)).To(BeTrue(), "%v", err)
	g.Expect(led.Load()).To(BeEquivalentTo(1), "the second manager never led")
}
