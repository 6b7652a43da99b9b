package controllermanager

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
)

// ErrAnotherLeader is returned by RunAcrossLeaseLoss when, after this process lost the lease, another
// instance of the manager took it.
var ErrAnotherLeader = errors.New("another instance of the manager holds the leader election lease")

// leaseLost is the error controller-runtime's manager returns from Start when it lost its lease (it has
// no sentinel for it).
const leaseLost = "leader election lost"

// RunAcrossLeaseLoss builds managers with New and sets each up with setup, then runs them one after
// another until ctx ends. Every manager
// exits when it cannot renew its lease within --leader-elect-renew-deadline (a management API server that
// restarts slowly, a network stall): a provider that holds state outside its managers — the local
// provider's workload clusters, whose processes are its children — would lose it by exiting. Here the next
// manager campaigns for the lease again while the process keeps that state; each manager holds the lease
// under its own identity (LeaderElectionIdentity). While it campaigns, the lease is watched: if another
// instance takes it, RunAcrossLeaseLoss returns ErrAnotherLeader, so that the process exits and that
// instance can take the state over. Without leader election it is one manager's Start.
// An error of setup ends it: only building a manager, which reads the API server, is tried again.
func (o *Options) RunAcrossLeaseLoss(ctx context.Context, cfg *rest.Config, scheme *runtime.Scheme, setup func(ctrl.Manager) error) error {
	log := ctrl.Log.WithName("setup")
	host, err := os.Hostname()
	if err != nil {
		host = "localhost"
	}
	base := host + "_" + rand.String(10)
	mine := map[string]bool{}
	for gen := 0; ; gen++ {
		o.LeaderElectionIdentity = fmt.Sprintf("%s-%d", base, gen)
		mine[o.LeaderElectionIdentity] = true
		o.again = gen > 0
		mgr, err := o.newManagerAgain(ctx, cfg, scheme, gen)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		if err := setup(mgr); err != nil {
			return err
		}
		mctx, cancel := context.WithCancel(ctx)
		watchDone := make(chan error, 1)
		if gen > 0 && o.LeaderElect {
			go func() {
				err := o.watchLease(mctx, cfg, mgr.Elected(), mine)
				if errors.Is(err, ErrAnotherLeader) {
					cancel()
				}
				watchDone <- err
			}()
		} else {
			watchDone <- nil
		}
		err = mgr.Start(mctx)
		cancel()
		if werr := <-watchDone; errors.Is(werr, ErrAnotherLeader) {
			return werr
		}
		if ctx.Err() != nil || !o.LeaderElect || err == nil || !strings.Contains(err.Error(), leaseLost) {
			if err != nil {
				return fmt.Errorf("running the controller manager: %w", err)
			}
			return nil
		}
		log.Info("Lost the leader election lease; campaigning for it again, the state this process holds (the workload clusters it runs) keeps running meanwhile",
			"lease", o.Name, "identity", o.LeaderElectionIdentity)
		// The manager's servers close their listeners as its context ends, without being waited for.
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(o.LeaderElectRetryPeriod):
		}
	}
}

// newManagerAgain builds a manager. After a lost lease it tries again every second for as long as it
// takes: building one reads the API server (its REST mappings), which may still be unreachable, and the
// last manager's health probe listener may still be closing.
func (o *Options) newManagerAgain(ctx context.Context, cfg *rest.Config, scheme *runtime.Scheme, gen int) (ctrl.Manager, error) {
	log := ctrl.Log.WithName("setup")
	for attempt := 0; ; attempt++ {
		mgr, err := o.New(cfg, scheme)
		if err == nil || gen == 0 {
			return mgr, err
		}
		if attempt%30 == 0 {
			log.Info("Building the controller manager again", "error", err.Error())
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

// watchLease reads the lease every retry period until elected is closed or ctx ends, and returns
// ErrAnotherLeader when a holder that is not one of mine holds it and renewed it within its duration.
func (o *Options) watchLease(ctx context.Context, cfg *rest.Config, elected <-chan struct{}, mine map[string]bool) error {
	namespace, name, err := o.LeaseNamespace()
	if err != nil {
		return err
	}
	cfg = rest.CopyConfig(cfg)
	cfg.Timeout = max(o.LeaderElectRenewDeadline/2, time.Second)
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	log := ctrl.Log.WithName("setup")
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-elected:
			log.Info("Leading again", "lease", name, "identity", o.LeaderElectionIdentity)
			return nil
		case <-time.After(o.LeaderElectRetryPeriod):
		}
		lease, err := cs.CoordinationV1().Leases(namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			if !apierrors.IsNotFound(err) && ctx.Err() == nil {
				log.V(4).Info("Reading the leader election lease", "error", err.Error())
			}
			continue
		}
		holder := ""
		if lease.Spec.HolderIdentity != nil {
			holder = *lease.Spec.HolderIdentity
		}
		if holder == "" || mine[holder] || lease.Spec.RenewTime == nil || lease.Spec.LeaseDurationSeconds == nil {
			continue
		}
		if time.Since(lease.Spec.RenewTime.Time) < time.Duration(*lease.Spec.LeaseDurationSeconds)*time.Second {
			log.Info("Another instance took the leader election lease: stopping, so that it can take over", "lease", name, "holder", holder)
			return ErrAnotherLeader
		}
	}
}
