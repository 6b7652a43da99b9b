// Package chart checks the Helm chart of the provider operator (charts/capstan-operator) with Helm's own
// Go packages: it lints, renders with typical values, and the render is applied with a server-side dry
// run against a real API server.
package chart
