// Package chaos is capstan's chaos suite (its tests; docs/reliability.md): on a real embedded management
// cluster (`capstan up`, `clusterctl init --infrastructure local`) whose providers run as local processes
// and whose workload clusters are real etcd members and kube-apiservers of the local provider's process
// backend, it runs operations — control plane scaling and rolling upgrades, MachineDeployment rollouts,
// topology upgrades, remediation, `clusterctl move`, Cluster deletion, `capstan down` / `capstan up` —
// and injects faults at random points chosen from a printed seed: SIGKILL of a manager, of `capstan up`,
// of a workload etcd member or kube-apiserver, a restart of the management kube-apiserver or etcd, a
// stalled connection to the management API. Invariants are sampled every 200 ms while it runs (the
// workload API answers, etcd keeps quorum, data written before is still there) and checked at the end
// (nothing leaked, orphaned, paused or left with a finalizer; the operation converged within its bound).
//
// The tests run only with CAPSTAN_CHAOS=smoke (make chaos-smoke: the control plane scale scenario, a fixed seed) or
// CAPSTAN_CHAOS=full (make chaos); CAPSTAN_CHAOS_SEED replays a run.
package chaos
