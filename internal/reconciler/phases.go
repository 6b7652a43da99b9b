package reconciler

import (
	"context"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
)

// Phase is one step of a reconcile over a scope S, in which it records what it found.
type Phase[S any] func(ctx context.Context, s S) (ctrl.Result, error)

// RunPhases runs the phases in order, stops at the first error and returns the soonest requeue asked for.
func RunPhases[S any](ctx context.Context, s S, phases ...Phase[S]) (ctrl.Result, error) {
	var res ctrl.Result
	for _, p := range phases {
		r, err := p(ctx, s)
		if err != nil {
			return ctrl.Result{}, err
		}
		res = LowestNonZero(res, r)
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
