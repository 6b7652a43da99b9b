// Package clustercache keeps one connection per workload cluster — a client whose Node reads come from an
// informer cache, an uncached client, the rest.Config — built from the Cluster's `<cluster>-kubeconfig`
// Secret (key `value`), so controllers of the management cluster can reach workload clusters without
// listing them on every reconcile and without one slow cluster holding up the others.
//
// What it owns: the connections, keyed by Cluster namespace/name. A ClusterCache is a small controller of
// its own (New, or SetupWithManager) that watches Clusters (those matching Options.WatchFilter) and the
// metadata of `*-kubeconfig` Secrets (which needs a metadata-only informer on Secrets in the manager's
// cache; the kubeconfig itself is read uncached):
//
//   - A Cluster with a kubeconfig Secret gets connected. The connection is created in a goroutine of its
//     own, bounded by Options.ConnectionTimeout, holding no lock that another cluster needs: an unreachable
//     workload cluster occupies one goroutine and nothing else. A failed attempt is retried after
//     Options.ConnectionRetryInitialInterval, doubling up to Options.ConnectionRetryMaxInitialInterval
//     for Options.ConnectionRetryInitialPeriod, then every Options.ConnectionRetryInterval; at once when
//     the Secret changes or when the Cluster's control plane endpoint, infrastructureReady,
//     ControlPlaneInitialized or controlPlaneReady changes. Retries reuse the clients of the kubeconfig.
//   - A connected cluster is probed (one GET /, never retried by client-go, every
//     Options.HealthProbeInterval, with Options.HealthProbeTimeout). While a probe fails GetClient reports the cluster as not connected;
//     after Options.HealthProbeFailureThreshold consecutive failures the connection is dropped and
//     recreated later.
//   - The connection is dropped when the Cluster is deleted (or starts deleting), when its kubeconfig
//     Secret disappears, and when the Secret's kubeconfig changes (then a new one is made).
//
// What callers use: GetClient (cached Node reads, everything else live), GetUncachedClient, GetRESTConfig
// and Health never block: when there is no healthy connection they return ErrClusterNotConnected at once
// and the caller requeues. Watch adds a watch on a kind of the workload cluster (for example Nodes) to a
// controller, once per connection. ClusterSource is a source that enqueues a Cluster's objects whenever
// its connection comes up, goes down or recovers, so callers that requeued see the change at once.
//
// Node lookups by providerID use the field index NodeProviderIDField on every workload cluster's cache.
package clustercache
