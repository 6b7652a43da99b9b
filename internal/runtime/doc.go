// Package runtime is the core side of the Runtime SDK: registry holds the handlers that discovery found,
// client calls them over HTTPS, hooks tracks on Clusters which lifecycle hooks are still to be called.
// The ExtensionConfig controller (internal/controllers/extensionconfig) fills the registry.
package runtime
