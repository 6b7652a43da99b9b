// Package e2e holds the end-to-end tests of the local infrastructure provider against the test API server:
// the released cluster template provisioned by the core controllers and the provider together, and the
// provider killed and started again as a separate process.
package e2e
