// Package extensionconfig is the ExtensionConfig controller of the Runtime SDK. It injects the CA of the
// runtime.cluster.x-k8s.io/inject-ca-from-secret annotation into spec.clientConfig.caBundle, calls the
// Extension server's discovery, records the handlers in status.handlers and in the registry the Runtime
// SDK client calls from, and says in the Discovered condition (and with an event) what failed when
// discovery fails; a failed discovery is retried with the controller's exponential backoff.
//
// It watches ExtensionConfigs and the metadata of Secrets (to follow a rotated CA). At start, before the
// controllers that call hooks need them, the registry is filled from the handlers that every
// ExtensionConfig's status already lists, so that a restart neither waits for nor depends on the
// Extension servers.
package extensionconfig
