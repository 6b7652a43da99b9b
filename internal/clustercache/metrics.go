package clustercache

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// The ClusterCache's metrics, with upstream Cluster API's names and labels (controllers/clustercache), in
// controller-runtime's registry, which the diagnostics endpoint serves. A Cluster's series disappear when
// the ClusterCache forgets it (the Cluster is deleted, or its kubeconfig Secret is gone).
var (
	healthCheck = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "capi_cluster_cache_healthcheck",
		Help: "Result of the last health probe of the connection to a workload cluster: 1 when it answered, 0 when it did not.",
	}, []string{"cluster_name", "cluster_namespace"})
	healthChecksTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "capi_cluster_cache_healthchecks_total",
		Help: "Health probes of the connections to workload clusters, by result (status: success or error).",
	}, []string{"cluster_name", "cluster_namespace", "status"})
	connectionUp = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "capi_cluster_cache_connection_up",
		Help: "Whether there is a connection to a workload cluster: 1 connected, 0 not connected (being made, failed, or dropped after failed probes).",
	}, []string{"cluster_name", "cluster_namespace"})
	registerMetrics sync.Once
)

func registerClusterCacheMetrics() {
	registerMetrics.Do(func() { ctrlmetrics.Registry.MustRegister(healthCheck, healthChecksTotal, connectionUp) })
}

// recordConnection sets whether a cluster is connected.
func recordConnection(cluster client.ObjectKey, up bool) {
	connectionUp.WithLabelValues(cluster.Name, cluster.Namespace).Set(boolValue(up))
}

// recordProbe counts a health probe of a connected cluster.
func recordProbe(cluster client.ObjectKey, ok bool) {
	status := "success"
	if !ok {
		status = "error"
	}
	healthCheck.WithLabelValues(cluster.Name, cluster.Namespace).Set(boolValue(ok))
	healthChecksTotal.WithLabelValues(cluster.Name, cluster.Namespace, status).Inc()
}

// forgetMetrics removes a cluster's series.
func forgetMetrics(cluster client.ObjectKey) {
	labels := map[string]string{"cluster_name": cluster.Name, "cluster_namespace": cluster.Namespace}
	healthCheck.DeletePartialMatch(labels)
	healthChecksTotal.DeletePartialMatch(labels)
	connectionUp.DeletePartialMatch(labels)
}

func boolValue(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
