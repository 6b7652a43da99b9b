// Package localnet is the pod network of the embedded management cluster, whose local runtime runs Pods
// as processes on 127.0.0.1. The API server refuses loopback addresses in EndpointSlices, so each replica
// gets an address of PodNetwork in its Service's EndpointSlices, with the loopback port it listens on; an
// address of PodNetwork stands for 127.0.0.1. Three pieces use that rule:
//
//   - the runtime, which allocates the addresses (Allocator);
//   - the egress proxy of kube-apiserver (Proxy, EgressSelectorConfiguration): the API server resolves a
//     webhook's, conversion webhook's or aggregated API's Service to an endpoint through its EndpointSlices
//     (--enable-aggregator-routing) and dials it through the proxy, which connects to 127.0.0.1;
//   - capstan's components that call Services themselves (the Runtime SDK client), through Dialer, which
//     resolves <service>.<namespace>.svc the same way where there is no cluster DNS.
package localnet
