package reconciler

import (
	"time"

	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// FirstErrorBackoff is how long controller-runtime's rate limiter waits before retrying a request whose
// reconcile failed for the first time; each failure in a row doubles it.
const FirstErrorBackoff = 5 * time.Millisecond

// ErrorBackoff is the rate limiter controller-runtime gives a controller with a priority queue (a
// per-request backoff that doubles from 5 ms with each failure in a row, or each Requeue) with the backoff
// capped at maxDelay rather than at 1,000 seconds. A controller whose reconciles fail while something
// outside the management cluster does not answer (a workload cluster whose etcd is electing, its API server
// being replaced) sees a burst of failures, one at each event; with the default cap, the retry after the
// last of, say, 18 failures in a row comes 11 minutes later, when nothing else brings the object back.
func ErrorBackoff(maxDelay time.Duration) workqueue.TypedRateLimiter[reconcile.Request] {
	return workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](FirstErrorBackoff, maxDelay)
}
