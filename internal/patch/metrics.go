package patch

import (
	"github.com/prometheus/client_golang/prometheus"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// StaleReadsMetric names the counter of the reads of an object, from a controller's cache, at a version
// that the controller's own writes had replaced (see Writes).
const StaleReadsMetric = "capstan_stale_reads_total"

// The outcome label's values.
const (
	// staleReadWaited: the reconcile stopped and waited for the cache to show the newer version.
	staleReadWaited = "waited"
	// staleReadExpired: the write was older than writesExpireAfter; the copy was worked on. A cache that
	// lags this much makes the controller repeat writes and fail with conflicts.
	staleReadExpired = "expired"
)

var staleReads = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: StaleReadsMetric,
	Help: "Reads of an object from the cache at a version the controller's own writes had replaced, by outcome: waited (the reconcile " +
		"stopped until the cache caught up) or expired (the write was remembered longer than 2 minutes, and the stale copy was reconciled).",
}, []string{"outcome"})

func init() {
	ctrlmetrics.Registry.MustRegister(staleReads)
}
