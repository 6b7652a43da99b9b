// Package machinehealthcheck is the MachineHealthCheck controller: it checks the Machines a
// MachineHealthCheck selects in its Cluster (a failure reported by a provider, the remediate-machine
// annotation, a Node that never appeared within nodeStartupTimeout, a Node that was deleted, a Node that
// held one of the unhealthyConditions for its timeout) and marks them, as upstream Cluster API does.
//
// What it owns:
//   - on the MachineHealthCheck: the cluster-name label, an ownerReference to the Cluster, and the status
//     (expectedMachines, currentHealthy, remediationsAllowed, targets, RemediationAllowed in both condition
//     flavours, the external remediation conditions, Paused);
//   - on the Machines it checks: the HealthCheckSucceeded condition (v1beta1 and v1beta2) and, on an
//     unhealthy Machine, OwnerRemediated set False for the Machine's owner to act on (a MachineSet deletes
//     the Machine, a control plane follows its own rules) or, with spec.remediationTemplate, a remediation
//     request cloned from the template and named after the Machine (ExternallyRemediated False);
//   - the remediation requests it created, which it deletes once their Machine is healthy again.
//
// maxUnhealthy (100% when empty) or unhealthyRange short-circuit remediation: with too many unhealthy
// Machines nothing is marked for remediation, the RemediationAllowed condition says why and a
// RemediationRestricted event is recorded.
//
// What it watches: MachineHealthChecks; Machines (mapped to the MachineHealthChecks whose selector matches
// them); Clusters (their pause and readiness); the Nodes of each workload cluster through the clustercache,
// and the clustercache's connection events.
package machinehealthcheck
