// Package move holds the end-to-end test of `clusterctl move` with the local infrastructure provider: two
// management clusters on one machine, each running the core controllers and its own instance of the
// provider with its own data directory, and workload clusters moved from one to the other without
// replacing a Machine, a Node or an endpoint.
package move
