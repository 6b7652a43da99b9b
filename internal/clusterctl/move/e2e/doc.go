// Package e2e moves workload clusters between two management clusters that both run the core controllers
// and a test infrastructure and bootstrap provider, all sharing one workload API server: the target takes
// the clusters over without replacing any Machine.
package e2e
