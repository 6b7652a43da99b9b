package topology

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	utilcache "k8s.io/apimachinery/pkg/util/cache"
	"k8s.io/utils/clock"
	"k8s.io/utils/lru"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-dev/capstan/internal/topology"
)

const (
	// noDiffTTL is how long a dry-run apply that found nothing to change is trusted for the same current
	// object and desired state (upstream's 10 minutes).
	noDiffTTL = 10 * time.Minute
	// noDiffEntries bounds the memory of what is remembered: a few keys per Cluster with a topology.
	noDiffEntries = 100_000
)

// noDiffCache remembers the applies that a dry run found would change nothing, as upstream's SSA cache
// does: a reconcile that would send the same desired state for the same version of an object skips the
// dry-run apply (a PATCH to the API server) until the object or the desired state changes. The topology
// controller is reconciled at every change of its Cluster, control plane and MachineDeployments' status, so
// without it every reconcile dry-runs each of the cluster's objects again. It remembers the server's
// answers to dry runs, which the wrapper's guard (reconciler.Guarded, about copies older than the
// controller's own writes) does not know. What it saves (docs/dev/scale-history.md): the core's writes
// per Machine of a ClusterClass cluster went from 68 to 41.5 (N=2) with keys; with applied, the
// applies and dry runs per Cluster from 4.5 / 4.1 / 3.4 to 2.1 / 2.1 / 2.0 (MachineHealthChecks, machine
// templates, MachineDeployment) and all 150 Clusters were Available in 183 s instead of 258 s.
type noDiffCache struct {
	keys *utilcache.LRUExpireCache
	// applied maps an object's UID to the hash of the desired state last applied to it, by an apply or
	// found applied by a dry run that changed nothing (see holdsApplied). Unlike keys, its entries do not
	// expire: holdsApplied checks each use against the current object, so an old entry is as good as a new
	// one. With a time limit, a Cluster whose objects wait longer than noDiffTTL between two changes (a
	// thousand Clusters created at once) dry-ran each of its objects again when it moved on.
	applied *lru.Cache
}

func newNoDiffCache() *noDiffCache {
	return newNoDiffCacheWithClock(clock.RealClock{})
}

func newNoDiffCacheWithClock(clk clock.PassiveClock) *noDiffCache {
	return &noDiffCache{keys: utilcache.NewLRUExpireCacheWithClock(noDiffEntries, clk), applied: lru.New(noDiffEntries)}
}

// key identifies an apply: the current object's kind, namespace, name and uid, a hash of what the apply
// can change of it (everything but its status, resourceVersion and managed fields: an apply of the spec and
// metadata gives the same result whatever the status, which its controller writes as it works), and the
// desired object (desiredHash, and its owner references, which that hash leaves out). A change of either
// makes a new key, so the apply is dry-run again. cur is the current object in unstructured form.
func (c *noDiffCache) key(desired *unstructured.Unstructured, hash string, current client.Object, cur map[string]any) (string, error) {
	cur = maps.Clone(cur) // an Unstructured's own map: the object is not changed
	delete(cur, "status")
	if meta, ok := cur["metadata"].(map[string]any); ok {
		meta = maps.Clone(meta)
		delete(meta, "resourceVersion")
		delete(meta, "managedFields")
		cur["metadata"] = meta
	}
	refs, _, _ := unstructured.NestedFieldNoCopy(desired.Object, "metadata", "ownerReferences")
	sum := sha256.New()
	for _, o := range []any{cur, refs} {
		data, err := json.Marshal(o) // maps are encoded with sorted keys: the same state, the same bytes
		if err != nil {
			return "", fmt.Errorf("hashing %s %s: %w", desired.GetKind(), desired.GetName(), err)
		}
		sum.Write(data)
		sum.Write([]byte{0})
	}
	sum.Write([]byte(hash))
	return fmt.Sprintf("%s/%s/%s/%s/%s", desired.GroupVersionKind(), current.GetNamespace(), current.GetName(),
		current.GetUID(), hex.EncodeToString(sum.Sum(nil))), nil
}

func (c *noDiffCache) has(key string) bool {
	if c == nil {
		return false
	}
	_, ok := c.keys.Get(key)
	return ok
}

func (c *noDiffCache) add(key string) {
	if c == nil {
		return
	}
	c.keys.Add(key, struct{}{}, noDiffTTL)
}

// desiredHash identifies a desired state, leaving out its owner references: the topology carries the
// owner reference to the Cluster that the Cluster controller sets on the InfrastructureCluster and the
// control plane over from the current object (so that an apply does not remove it), which is not a change of
// what the topology wants, and holdsApplied checks that the current object holds every owner reference of
// the desired one anyway. Without this, the Cluster controller's owner reference would cost each of them a
// dry run after their creation.
func desiredHash(desired *unstructured.Unstructured) (string, error) {
	obj := desired.Object
	if meta, ok := obj["metadata"].(map[string]any); ok {
		if _, ok := meta["ownerReferences"]; ok {
			meta = maps.Clone(meta)
			delete(meta, "ownerReferences")
			obj = maps.Clone(obj)
			obj["metadata"] = meta
		}
	}
	data, err := json.Marshal(obj)
	if err != nil {
		return "", fmt.Errorf("hashing %s %s: %w", desired.GetKind(), desired.GetName(), err)
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:]), nil
}

// recordApplied notes that the object uid holds the desired state of hash as this controller applied it.
func (c *noDiffCache) recordApplied(uid types.UID, hash string) {
	if c == nil || uid == "" {
		return
	}
	c.applied.Add(uid, hash)
}

// holdsApplied reports whether an apply of desired (of hash) to current would change nothing, without
// asking the API server: the same desired state was applied to the object last (so this controller owns
// the same fields as the apply would), and the object still holds every value of it. Other controllers'
// changes of other fields (owner references, finalizers, labels, annotations, status) do not matter; a
// change of one of the desired values does, and so does a restart (nothing is remembered), and the apply
// is dry-run then.
func (c *noDiffCache) holdsApplied(desired *unstructured.Unstructured, hash string, current map[string]any, uid types.UID) bool {
	if c == nil {
		return false
	}
	last, ok := c.applied.Get(uid)
	if !ok || last != hash {
		return false
	}
	for k, v := range desired.Object {
		if k == "apiVersion" || k == "kind" { // a typed object read from the cache has no type meta
			continue
		}
		if !topology.Holds(current[k], v, k == "metadata") {
			return false
		}
	}
	return true
}
