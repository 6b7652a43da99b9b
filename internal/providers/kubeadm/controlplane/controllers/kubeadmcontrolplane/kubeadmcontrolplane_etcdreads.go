package kubeadmcontrolplane

import (
	"slices"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/capstan-dev/capstan/internal/providers/kubeadm/controlplane/workload"
)

// DefaultEtcdHealthReuse is how long a read of etcd that found every member healthy stands in for the next
// ones (Reconciler.EtcdHealthReuse): a KubeadmControlPlane is reconciled on every change of its Machines
// (a dozen while one is created), and each read of etcd opens a port-forward, a TLS connection and an etcd
// client per member. It is shorter than the 20 seconds after which a control plane that is not ready is
// read again, so that the periodic reads always reach etcd. A reused read serves the status only: before
// a step that changes the control plane, readEtcdLive reads etcd again.
const DefaultEtcdHealthReuse = 15 * time.Second

// etcdReads remembers, per workload cluster, the last read of etcd that found every member of the Machines
// healthy: the state it read, through which Nodes, and when. A read is reused only for the same Nodes
// (a Machine added, deleted or given its Node reads again) and while it is recent; one that found a
// problem is never reused. Entries of a cluster go when its KubeadmControlPlane is deleted, or when they
// are too old to be reused. It caches reads of the workload cluster's etcd, which the wrapper's guard
// (reconciler.Guarded, about the management cluster's objects) has nothing to do with. What it saves, at
// N=200 (docs/dev/scale-history.md, runs 5 and 6): the control plane provider's idle CPU went from 1.18 s
// to 0.25 s, its port-forwards' from 1.8 s to 0.25 s, idle requests from 12.8/s to 2.2/s, and the
// managers' CPU while creating from 180 s to 157 s.
type etcdReads struct {
	mu    sync.Mutex
	reads map[types.NamespacedName]etcdRead
}

type etcdRead struct {
	at    time.Time
	nodes string
	state *workload.EtcdState
}

// nodesKey is the key of a set of Node names, independent of their order.
func nodesKey(nodes []string) string {
	sorted := slices.Clone(nodes)
	slices.Sort(sorted)
	return strings.Join(sorted, ",")
}

// get returns the healthy state of the cluster's etcd read through nodes less than maxAge before now, or
// nil.
func (e *etcdReads) get(cluster types.NamespacedName, nodes []string, now time.Time, maxAge time.Duration) *workload.EtcdState {
	if maxAge <= 0 {
		return nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	r, ok := e.reads[cluster]
	if !ok || r.nodes != nodesKey(nodes) || now.Sub(r.at) >= maxAge || now.Before(r.at) {
		return nil
	}
	return r.state
}

// put records a read that found every member healthy, and drops the entries too old to be reused.
func (e *etcdReads) put(cluster types.NamespacedName, nodes []string, state *workload.EtcdState, now time.Time, maxAge time.Duration) {
	if maxAge <= 0 {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.reads == nil {
		e.reads = map[types.NamespacedName]etcdRead{}
	}
	for k, r := range e.reads {
		if now.Sub(r.at) >= maxAge {
			delete(e.reads, k)
		}
	}
	e.reads[cluster] = etcdRead{at: now, nodes: nodesKey(nodes), state: state}
}

// forget drops what is known of the cluster's etcd: it changed (a member removed, the leadership moved) or
// the cluster goes.
func (e *etcdReads) forget(cluster types.NamespacedName) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.reads, cluster)
}
