package reconciler

import (
	"context"
	"errors"
	"fmt"
	"net"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus/testutil"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// fixed is a reconciler that always returns the same outcome.
type fixed struct {
	res reconcile.Result
	err error
}

func (f fixed) Reconcile(context.Context, reconcile.Request) (reconcile.Result, error) {
	return f.res, f.err
}

// TestReconcileResultsByReason: every reconcile counts in capstan_reconcile_results_total under the
// controller's name, its result and why; a conflict counts as a requeue with reason Conflict and is
// still turned into a quiet requeue.
func TestReconcileResultsByReason(t *testing.T) {
	gr := schema.GroupResource{Group: "cluster.x-k8s.io", Resource: "machines"}
	tests := []struct {
		name           string
		res            reconcile.Result
		err            error
		result, reason string
	}{
		{name: "success", result: "success", reason: "Success"},
		{name: "requeue after", res: reconcile.Result{RequeueAfter: time.Second}, result: "requeue_after", reason: "RequeueAfter"},
		{name: "conflict", err: fmt.Errorf("patching: %w", apierrors.NewConflict(gr, "m", errors.New("changed"))), result: "requeue", reason: "Conflict"},
		{name: "not found", err: fmt.Errorf("getting: %w", apierrors.NewNotFound(gr, "m")), result: "error", reason: "NotFound"},
		{name: "throttled", err: apierrors.NewTooManyRequests("slow down", 1), result: "error", reason: "TooManyRequests"},
		{name: "forbidden", err: apierrors.NewForbidden(gr, "m", errors.New("no")), result: "error", reason: "Forbidden"},
		{name: "terminal", err: reconcile.TerminalError(errors.New("bad spec")), result: "error", reason: "Terminal"},
		{name: "timeout", err: fmt.Errorf("waiting: %w", context.DeadlineExceeded), result: "error", reason: "Timeout"},
		{name: "network", err: fmt.Errorf("probing: %w", &net.OpError{Op: "dial", Err: errors.New("connection refused")}), result: "error", reason: "NetworkError"},
		{name: "other", err: errors.New("something else"), result: "error", reason: "Error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			counter := results.WithLabelValues("reconciler", tt.result, tt.reason)
			before := testutil.ToFloat64(counter)
			res, err := RequeueOnConflict(fixed{res: tt.res, err: tt.err}).Reconcile(t.Context(), reconcile.Request{})
			g.Expect(testutil.ToFloat64(counter)).To(Equal(before + 1))
			if tt.reason == "Conflict" {
				g.Expect(err).NotTo(HaveOccurred(), "conflicts are requeued quietly")
				g.Expect(res.Requeue).To(BeTrue()) //nolint:staticcheck // What RequeueOnConflict sets.
				return
			}
			g.Expect(errors.Is(err, tt.err) && (err == nil) == (tt.err == nil)).To(BeTrue(), "the error is returned as it is: %v", err)
			g.Expect(res).To(Equal(tt.res))
		})
	}
}

func TestControllerName(t *testing.T) {
	g := NewWithT(t)
	g.Expect(controllerName(fixed{})).To(Equal("reconciler"))
	g.Expect(controllerName(&fixed{})).To(Equal("reconciler"))
}
