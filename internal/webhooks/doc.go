// Package webhooks is what a capstan manager needs to serve admission webhooks: a Hook per validating or
// mutating check (built from a controller-runtime admission.Validator or Defaulter), a Set that serves the
// hooks of one manager with self-managed certificates (package certs) and makes the manager ready only
// when the API server can call them, and the manifests — the webhook Service and the
// Validating/MutatingWebhookConfigurations — rendered from the same Set, so that what is served and what
// is registered cannot drift apart. Webhooks are only for the rules that the CRD schema and CEL cannot
// express; see docs/development.md ("Adding a webhook").
package webhooks
