// Package certs keeps the certificates of a manager's webhooks without cert-manager: a CA and a serving
// certificate for the webhook Service in a Secret of the manager's namespace, shared by every replica,
// reused across restarts, recreated when deleted, renewed before expiry, with the CA bundle written into
// the webhook configurations and CRD conversion settings that point at the Service (Rotator).
package certs
