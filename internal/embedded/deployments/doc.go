// Package deployments is the local runtime of the embedded management cluster: it watches Deployments and runs
// each replica of a Deployment whose containers use capstan's image as a local process of the matching
// `capstan` subcommand — with the container's arguments and environment, a kubeconfig holding a token of the
// Deployment's ServiceAccount (so RBAC applies as in a real cluster), and free loopback ports for the flags
// that bind ports. It follows scaling (including to zero), rolls out template changes, restarts crashed
// processes with backoff, stops the processes of deleted Deployments, and writes Deployment status so that
// `kubectl rollout status` and `clusterctl init --wait-providers` work. A Deployment with another image gets
// conditions saying it cannot run here.
package deployments
