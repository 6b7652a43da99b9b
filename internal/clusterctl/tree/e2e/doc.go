// Package e2e holds the end-to-end tests of `clusterctl describe cluster`, `get kubeconfig` and
// `alpha rollout` against a Cluster that the core controllers and the local infrastructure provider, run
// in-process against the test API server, provision from the provider's released cluster template.
package e2e
