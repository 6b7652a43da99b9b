package topology

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilcache "k8s.io/apimachinery/pkg/util/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
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
// without it every reconcile dry-runs each of the cluster's objects again.
type noDiffCache struct {
	keys *utilcache.LRUExpireCache
}

func newNoDiffCache() *noDiffCache {
	return &noDiffCache{keys: utilcache.NewLRUExpireCache(noDiffEntries)}
}

// key identifies an apply: the current object's kind, namespace, name and uid, a hash of what the apply
// can change of it (everything but its status, resourceVersion and managed fields: an apply of the spec and
// metadata gives the same result whatever the status, which its controller writes as it works), and a hash
// of the desired object. A change of either makes a new key, so the apply is dry-run again.
func (c *noDiffCache) key(desired *unstructured.Unstructured, current client.Object) (string, error) {
	cur, err := runtime.DefaultUnstructuredConverter.ToUnstructured(current)
	if err != nil {
		return "", fmt.Errorf("reading the current %s %s: %w", desired.GetKind(), desired.GetName(), err)
	}
	cur = maps.Clone(cur) // an Unstructured's own map: the object is not changed
	delete(cur, "status")
	if meta, ok := cur["metadata"].(map[string]any); ok {
		meta = maps.Clone(meta)
		delete(meta, "resourceVersion")
		delete(meta, "managedFields")
		cur["metadata"] = meta
	}
	sum := sha256.New()
	for _, o := range []any{cur, desired.Object} {
		data, err := json.Marshal(o) // maps are encoded with sorted keys: the same state, the same bytes
		if err != nil {
			return "", fmt.Errorf("hashing %s %s: %w", desired.GetKind(), desired.GetName(), err)
		}
		sum.Write(data)
		sum.Write([]byte{0})
	}
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
