package reconciler

import (
	"context"
	"errors"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
)

// Phase is one step of a reconcile over a scope S, in which it records what it found.
type Phase[S any] func(ctx context.Context, s S) (ctrl.Result, error)

// PhaseOptions say how RunPhasesWith runs phases. The zero value is RunPhases: the first error ends the run.
type PhaseOptions struct {
	// All runs every phase even after one fails, so that each records what it observed (and the status
	// computed from the scope reflects all of it); the errors of all are returned, joined.
	All bool
	// Requeue, when set, is asked about each error: when it returns true the error is no failure but a
	// reason to try again after the duration it returns. The run goes on and, when no phase failed, asks
	// for the soonest requeue.
	Requeue func(ctx context.Context, err error) (time.Duration, bool)
}

// errStop is what Stop makes a phase return to end the run without error.
var errStop = errors.New("the remaining phases are skipped")

// Stop is what a phase returns to end the run without error: the later phases do not run (a phase that
// waits for something records in its scope what to requeue). Stop(err) with an error is that error, which
// ends the run unless PhaseOptions.All.
func Stop(err error) (ctrl.Result, error) {
	if err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{}, errStop
}

// RunPhases runs the phases in order, stops at the first error and returns the soonest requeue asked for.
func RunPhases[S any](ctx context.Context, s S, phases ...Phase[S]) (ctrl.Result, error) {
	return RunPhasesWith(ctx, s, PhaseOptions{}, phases...)
}

// RunPhasesWith runs the phases in order as o says, until one returns Stop, and returns the errors or
// the soonest requeue asked for.
func RunPhasesWith[S any](ctx context.Context, s S, o PhaseOptions, phases ...Phase[S]) (ctrl.Result, error) {
	var (
		res  ctrl.Result
		errs []error
	)
	for _, p := range phases {
		r, err := p(ctx, s)
		if errors.Is(err, errStop) {
			break
		}
		if err != nil && o.Requeue != nil {
			if after, ok := o.Requeue(ctx, err); ok {
				res = LowestNonZero(res, ctrl.Result{RequeueAfter: after})
				continue
			}
		}
		switch {
		case err != nil && !o.All:
			return ctrl.Result{}, err
		case err != nil:
			errs = append(errs, err)
		default:
			res = LowestNonZero(res, r)
		}
	}
	if len(errs) > 0 {
		return ctrl.Result{}, errors.Join(errs...)
	}
	return res, nil
}

// LowestNonZero returns the result that requeues sooner; a zero RequeueAfter means no requeue.
func LowestNonZero(a, b ctrl.Result) ctrl.Result {
	switch {
	case a.RequeueAfter == 0:
		return b
	case b.RequeueAfter == 0:
		return a
	case b.RequeueAfter < a.RequeueAfter:
		return b
	default:
		return a
	}
}

// Clock returns now() when set, time.Now otherwise: controllers keep a now field that tests replace.
func Clock(now func() time.Time) time.Time {
	if now != nil {
		return now()
	}
	return time.Now()
}

// OrDefault returns d, or def when d is zero: the getters of a Reconciler's tunable intervals.
func OrDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}
