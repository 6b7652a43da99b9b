package kubeadmcontrolplane

import (
	"sync"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
)

// controlPlaneMachinesIndex indexes the control plane Machines in the manager's cache by their Cluster's
// name: the Machines of a control plane are read from the cache on every reconcile, and a label selector
// alone makes the cache scan every Machine of the namespace (a thousand Clusters in one namespace have two
// thousand Machines). Worker Machines are not indexed.
const controlPlaneMachinesIndex = "controlplane.cluster.x-k8s.io/control-plane-machines-of"

// controlPlaneMachineOf is the index function of controlPlaneMachinesIndex.
func controlPlaneMachineOf(obj client.Object) []string {
	labels := obj.GetLabels()
	if _, ok := labels[clusterv1.MachineControlPlaneLabel]; !ok {
		return nil
	}
	if name := labels[clusterv1.ClusterNameLabel]; name != "" {
		return []string{name}
	}
	return nil
}

// machineWritesTTL bounds how long a Machine this controller created or deleted, that the cache does not
// show yet, makes the reads of its control plane go to the API server: the cache normally shows it within
// milliseconds; past this, it was deleted by someone else before the cache saw it, or the cache missed it
// and the watch's re-list brings it.
const machineWritesTTL = 2 * time.Minute

// machineWrites remembers, per KubeadmControlPlane, the Machines this controller created or deleted until
// the manager's cache shows them (upstream's MachineSet and ReplicaSet controllers call this
// "expectations"). The control plane's Machines are read from the cache — a steady control plane, read
// again every few minutes for its health, sends no request to the API server for them — except while the
// cache may not show a write of this controller yet: a Machine just created and missing would be created
// again, one just deleted and still there would make a scale down delete a second one. Then they are read
// from the API server, as upstream always does. Not the wrapper's guard (reconciler.Guarded), which knows
// the versions of objects the cache shows: this knows Machines the cache does not show yet, or shows
// still. What it saves: the idle "list machines" of every control plane, 2.78 of the 2.85 requests a
// second the managers sent to the management API server while idle at N=1000 (docs/dev/scale-history.md,
// the kubeadm control plane's idle reads).
type machineWrites struct {
	mu    sync.Mutex
	byKCP map[client.ObjectKey]map[string]machineWrite
}

type machineWrite struct {
	deleted bool
	at      time.Time
}

// created records that the KubeadmControlPlane kcp created the Machine name.
func (w *machineWrites) created(kcp client.ObjectKey, name string) { w.record(kcp, name, false) }

// deleted records that the KubeadmControlPlane kcp deleted the Machine name.
func (w *machineWrites) deleted(kcp client.ObjectKey, name string) { w.record(kcp, name, true) }

func (w *machineWrites) record(kcp client.ObjectKey, name string, deleted bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.byKCP == nil {
		w.byKCP = map[client.ObjectKey]map[string]machineWrite{}
	}
	if w.byKCP[kcp] == nil {
		w.byKCP[kcp] = map[string]machineWrite{}
	}
	w.byKCP[kcp][name] = machineWrite{deleted: deleted, at: time.Now()}
}

// shownBy reports whether the Machines read from the cache show every write of kcp's controller: each Machine
// created is there, each one deleted is gone or being deleted. The writes they show, and those older than
// machineWritesTTL, are forgotten.
func (w *machineWrites) shownBy(kcp client.ObjectKey, cached []clusterv1.Machine, now time.Time) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	pending := w.byKCP[kcp]
	if len(pending) == 0 {
		return true
	}
	byName := make(map[string]*clusterv1.Machine, len(cached))
	for i := range cached {
		byName[cached[i].Name] = &cached[i]
	}
	for name, write := range pending {
		m, found := byName[name]
		shown := found && !write.deleted || write.deleted && (!found || !m.DeletionTimestamp.IsZero())
		if shown || now.Sub(write.at) > machineWritesTTL {
			delete(pending, name)
		}
	}
	if len(pending) == 0 {
		delete(w.byKCP, kcp)
		return true
	}
	return false
}

// forget drops what is remembered of kcp (it is gone).
func (w *machineWrites) forget(kcp client.ObjectKey) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.byKCP, kcp)
}
