package reconciler

import (
	"context"
	"errors"
	"net"
	"reflect"
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// ResultsMetric names the counter of reconcile results by controller, result and reason.
const ResultsMetric = "capstan_reconcile_results_total"

// The result label's values, as controller-runtime's controller_runtime_reconcile_total names them.
const (
	ResultSuccess      = "success"
	ResultRequeue      = "requeue"
	ResultRequeueAfter = "requeue_after"
	ResultError        = "error"
)

var (
	results = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: ResultsMetric,
		Help: "Reconciles by controller, result (success, requeue, requeue_after, error) and reason: for errors the Kubernetes API " +
			"status reason (NotFound, Forbidden, Invalid, TooManyRequests, ...), Terminal, Timeout, Canceled, NetworkError or Error; " +
			"Conflict for the conflicts that are requeued quietly; Success, Requeue or RequeueAfter otherwise.",
	}, []string{"controller", "result", "reason"})
	registerResults sync.Once
)

// resultsOf returns the counter of a controller's reconcile results, registering ResultsMetric in
// controller-runtime's registry (served on /metrics) on first use.
func resultsOf(controller string) *prometheus.CounterVec {
	registerResults.Do(func() { ctrlmetrics.Registry.MustRegister(results) })
	return results.MustCurryWith(prometheus.Labels{"controller": controller})
}

// controllerName returns the last element of the package path of r's type ("machine" for
// *machine.Reconciler), or the type's name when it has no package.
func controllerName(r any) string {
	t := reflect.TypeOf(r)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if p := t.PkgPath(); p != "" {
		return p[strings.LastIndex(p, "/")+1:]
	}
	return t.String()
}

// classify returns the result and reason labels of a reconcile's outcome, before RequeueOnConflict turns
// a conflict into a quiet requeue.
func classify(res reconcile.Result, err error) (string, string) {
	if err == nil {
		switch {
		case res.RequeueAfter > 0:
			return ResultRequeueAfter, "RequeueAfter"
		case res.Requeue: //nolint:staticcheck // Requeue is still set by RequeueOnConflict and others.
			return ResultRequeue, "Requeue"
		}
		return ResultSuccess, "Success"
	}
	var netErr net.Error
	switch {
	case isConflict(err):
		return ResultRequeue, "Conflict"
	case errors.Is(err, reconcile.TerminalError(nil)):
		return ResultError, "Terminal"
	case apierrors.ReasonForError(err) != "":
		return ResultError, string(apierrors.ReasonForError(err))
	case errors.Is(err, context.DeadlineExceeded):
		return ResultError, "Timeout"
	case errors.Is(err, context.Canceled):
		return ResultError, "Canceled"
	case errors.As(err, &netErr):
		return ResultError, "NetworkError"
	}
	return ResultError, "Error"
}
