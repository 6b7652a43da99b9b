package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	utilcache "k8s.io/apimachinery/pkg/util/cache"

	runtimehooksv1 "github.com/capstan-dev/capstan/api/runtime/hooks/v1alpha1"
	runtimeclient "github.com/capstan-dev/capstan/internal/runtime/client"
	"github.com/capstan-dev/capstan/internal/topology"
)

// PlanCacheTTL is how long an answer of a GenerateUpgradePlan extension is used again for the same
// Cluster and versions, as upstream's (util/cache.DefaultTTL): the topology is computed at every change
// of the Cluster and of its objects, and the plan of an upgrade does not change while it runs.
const PlanCacheTTL = 10 * time.Minute

// planCacheEntries bounds the answers kept; the least recently used goes first. One Cluster needs a few
// (one per step of its upgrade).
const planCacheEntries = 4096

// Planner asks the GenerateUpgradePlan extension a ClusterClass names in
// spec.upgrade.external.generateUpgradePlanExtension for the upgrade plan of a Cluster; it implements
// topology.UpgradePlanner. Answers are kept for PlanCacheTTL per Cluster (namespace, name and UID),
// extension and versions, as upstream's GenerateUpgradePlanCacheEntry; failures are not kept. A Planner
// must not be copied after first use.
type Planner struct {
	// Runtime calls the extension; nil when the RuntimeSDK feature gate is off, and then every call fails.
	Runtime *runtimeclient.Client

	// clock is the cache's; the real one when nil.
	clock utilcache.Clock
	once  sync.Once
	plans *utilcache.LRUExpireCache
}

var _ topology.UpgradePlanner = &Planner{}

// planKey identifies a cached answer.
type planKey struct {
	namespace, name, uid              string
	extension                         string
	fromControlPlane, fromWorkers, to string
}

// plan is a cached answer.
type plan struct {
	controlPlane, workers []string
}

// GenerateUpgradePlan calls the extension named in.Extension (<handler>.<ExtensionConfig>) and returns
// the versions of its controlPlaneUpgrades and workersUpgrades. A failed call or an answer with status
// Failure is an error that names the extension (a *runtimeclient.HandlerError when the handler failed).
func (p *Planner) GenerateUpgradePlan(ctx context.Context, in *topology.UpgradePlanRequest) (controlPlane, workers []string, err error) {
	if p.Runtime == nil {
		return nil, nil, fmt.Errorf("can not use GenerateUpgradePlan extension %q if RuntimeSDK feature flag is disabled", in.Extension)
	}
	key := planKey{
		namespace: in.Cluster.Namespace, name: in.Cluster.Name, uid: string(in.Cluster.UID),
		extension:        in.Extension,
		fromControlPlane: in.FromControlPlaneKubernetesVersion, fromWorkers: in.FromWorkersKubernetesVersion,
		to: in.ToKubernetesVersion,
	}
	if v, ok := p.cache().Get(key); ok {
		if cached, ok := v.(plan); ok {
			return slices.Clone(cached.controlPlane), slices.Clone(cached.workers), nil
		}
	}

	cluster := hookCluster(in.Cluster)
	req := &runtimehooksv1.GenerateUpgradePlanRequest{
		Cluster:                           *cluster,
		FromControlPlaneKubernetesVersion: in.FromControlPlaneKubernetesVersion,
		FromWorkersKubernetesVersion:      in.FromWorkersKubernetesVersion,
		ToKubernetesVersion:               in.ToKubernetesVersion,
	}
	resp := &runtimehooksv1.GenerateUpgradePlanResponse{}
	if err := p.Runtime.Call(ctx, runtimehooksv1.GenerateUpgradePlan, in.Extension, cluster, req, resp); err != nil {
		var handlerErr *runtimeclient.HandlerError
		if errors.As(err, &handlerErr) {
			return nil, nil, err // it names the extension and its ExtensionConfig
		}
		return nil, nil, fmt.Errorf("calling the GenerateUpgradePlan extension %s: %w", in.Extension, err)
	}
	answer := plan{controlPlane: versions(resp.ControlPlaneUpgrades), workers: versions(resp.WorkersUpgrades)}
	p.cache().Add(key, answer, PlanCacheTTL)
	return slices.Clone(answer.controlPlane), slices.Clone(answer.workers), nil
}

func (p *Planner) cache() *utilcache.LRUExpireCache {
	p.once.Do(func() {
		if p.clock == nil {
			p.plans = utilcache.NewLRUExpireCache(planCacheEntries)
			return
		}
		p.plans = utilcache.NewLRUExpireCacheWithClock(planCacheEntries, p.clock)
	})
	return p.plans
}

// versions are the versions of the steps of an upgrade plan; none for an empty plan.
func versions(steps []runtimehooksv1.UpgradeStep) []string {
	if len(steps) == 0 {
		return nil
	}
	out := make([]string, 0, len(steps))
	for _, s := range steps {
		out = append(out, s.Version)
	}
	return out
}
