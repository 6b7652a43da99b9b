// Package managedtopology holds the end-to-end checks of managed topologies that issue 36 asked for, on
// the local provider with the kubeadm providers, the core's webhooks served as in the embedded management
// cluster, and the sample Runtime Extension: no double rollout while BeforeClusterUpgrade blocks, a
// ClusterClass change that would break a Cluster refused, a MachinePool topology that becomes Available
// and upgrades, and variables defaulted at admission. They run with CAPSTAN_E2E_TOPOLOGY=1.
package managedtopology
