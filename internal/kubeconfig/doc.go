// Package kubeconfig builds the kubeconfig of a workload cluster the way Cluster API does: an admin client
// certificate (user kubernetes-admin, group system:masters) signed by the cluster's CA, which lives in the
// `<cluster>-ca` Secret under tls.crt and tls.key, written to the `<cluster>-kubeconfig` Secret under the
// key `value`. It also creates a `<cluster>-ca` Secret holding a new self-signed CA, and tells when a
// kubeconfig's client certificate needs rotating.
package kubeconfig
