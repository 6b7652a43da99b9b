package machine

import (
	"context"
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
)

// PhaseMetric names the gauge of Machines by namespace, Cluster and phase.
const PhaseMetric = "capstan_machines"

var phaseDesc = prometheus.NewDesc(PhaseMetric,
	"Machines by namespace, Cluster (cluster_name) and status.phase (Pending, Provisioning, Provisioned, Running, Deleting, Deleted, "+
		"Failed, or Unknown for no or another phase); a combination without Machines has no series.",
	[]string{"namespace", "cluster_name", "phase"}, nil)

// phaseCollector counts Machines from the manager's cache when /metrics is scraped, so the figures are
// never stale and cost nothing between scrapes.
type phaseCollector struct {
	reader      client.Reader
	watchFilter string
}

func (c *phaseCollector) Describe(ch chan<- *prometheus.Desc) { ch <- phaseDesc }

func (c *phaseCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	machines := &clusterv1.MachineList{}
	// Read only: the cache's objects are not copied.
	if err := c.reader.List(ctx, machines, client.UnsafeDisableDeepCopy); err != nil {
		ch <- prometheus.NewInvalidMetric(phaseDesc, err)
		return
	}
	type key struct{ namespace, cluster, phase string }
	counts := map[key]int{}
	for i := range machines.Items {
		m := &machines.Items[i]
		if c.watchFilter != "" && m.Labels[clusterv1.WatchLabel] != c.watchFilter {
			continue
		}
		counts[key{m.Namespace, m.Spec.ClusterName, string(m.Status.GetTypedPhase())}]++
	}
	for k, n := range counts {
		ch <- prometheus.MustNewConstMetric(phaseDesc, prometheus.GaugeValue, float64(n), k.namespace, k.cluster, k.phase)
	}
}

// AddPhaseMetrics makes the manager report PhaseMetric on /metrics while it leads (so that the replicas of
// a manager do not report the same Machines twice), counting the Machines of its cache. In a process that
// runs several managers (tests), only the first one reports. With a watch filter (--watch-filter), only the
// Machines with that cluster.x-k8s.io/watch-filter label count.
func AddPhaseMetrics(mgr ctrl.Manager, watchFilter string) error {
	c := &phaseCollector{reader: mgr.GetCache(), watchFilter: watchFilter}
	return mgr.Add(manager.RunnableFunc(func(ctx context.Context) error {
		if err := ctrlmetrics.Registry.Register(c); err != nil {
			if are := (prometheus.AlreadyRegisteredError{}); errors.As(err, &are) {
				ctrl.LoggerFrom(ctx).V(1).Info("Another manager of this process reports the Machines by phase")
				return nil
			}
			return err
		}
		<-ctx.Done()
		ctrlmetrics.Registry.Unregister(c)
		return nil
	}))
}
