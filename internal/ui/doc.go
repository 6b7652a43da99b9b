// Package ui is capstan's web view of a management cluster (`capstan ui`, `capstan up --ui`): a
// filterable list of every Cluster, and a page per Cluster with the tree `clusterctl describe cluster`
// prints (built by package tree), each object's conditions, events and YAML, its ClusterClass, the
// version of each Machine during an upgrade and the workload cluster's Nodes, all kept up to date from
// watches and pushed to the browser with server-sent events.
//
// The server reads the management cluster through one informer cache shared by every viewer: a viewer
// adds no request to the API server. The workload cluster's Nodes are watched while someone looks at
// the Cluster's page, with the kubeconfig of its <cluster>-kubeconfig Secret. The view is read-only: it
// has no handler that writes and its client only reads.
//
// Access: the server binds loopback and asks for a random token, given once in the URL it prints and
// then kept in a cookie; see docs/ui.md for running it in a cluster behind `kubectl port-forward`.
//
// The frontend (web/) is plain HTML, CSS and JavaScript with no build step, embedded in the binary.
package ui
