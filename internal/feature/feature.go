// Package feature holds the feature gates of capstan's managers: upstream Cluster API's gate names, set
// with --feature-gates=Gate=true|false. An unknown gate is an error that lists the known ones.
package feature

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
)

// Gate is the name of a feature gate.
type Gate string

// Upstream Cluster API's feature gates.
const (
	// MachinePool runs the MachinePool controller in the core manager.
	MachinePool Gate = "MachinePool"
	// ClusterResourceSet runs the ClusterResourceSet and ClusterResourceSetBinding controllers in the core
	// manager.
	ClusterResourceSet Gate = "ClusterResourceSet"
	// ClusterTopology enables managed topologies (ClusterClass); on by default in capstan.
	ClusterTopology Gate = "ClusterTopology"
	// RuntimeSDK enables Runtime Extensions; on by default in capstan.
	RuntimeSDK Gate = "RuntimeSDK"
	// KubeadmBootstrapFormatIgnition lets KubeadmConfigs produce Ignition.
	KubeadmBootstrapFormatIgnition Gate = "KubeadmBootstrapFormatIgnition"
	// MachineSetPreflightChecks makes MachineSets run their preflight checks before creating or
	// remediating Machines.
	MachineSetPreflightChecks Gate = "MachineSetPreflightChecks"
	// MachineWaitForVolumeDetachConsiderVolumeAttachments makes a Machine's deletion also wait for the
	// VolumeAttachments of its Node.
	MachineWaitForVolumeDetachConsiderVolumeAttachments Gate = "MachineWaitForVolumeDetachConsiderVolumeAttachments"
	// InPlaceUpdates lets the owners of Machines update them in place through the Runtime SDK's update
	// extensions (upstream v1.12, alpha, off by default).
	InPlaceUpdates Gate = "InPlaceUpdates"
	// PriorityQueue is controller-runtime's priority queue, which capstan always uses: the gate is
	// accepted and has no effect.
	PriorityQueue Gate = "PriorityQueue"
)

// Defaults are the gates' default values: upstream v1.10's, except ClusterTopology, RuntimeSDK and
// PriorityQueue, which capstan has on.
func Defaults() map[Gate]bool {
	return map[Gate]bool{
		MachinePool:                    true,
		ClusterResourceSet:             true,
		ClusterTopology:                true,
		RuntimeSDK:                     true,
		KubeadmBootstrapFormatIgnition: false,
		MachineSetPreflightChecks:      true,
		MachineWaitForVolumeDetachConsiderVolumeAttachments: true,
		InPlaceUpdates: false,
		PriorityQueue:  true,
	}
}

// Gates is a set of feature gate values. The zero value has the defaults.
type Gates struct {
	mu     sync.RWMutex
	values map[Gate]bool
}

// Enabled reports whether g is on.
func (f *Gates) Enabled(g Gate) bool {
	if f == nil {
		return Defaults()[g]
	}
	f.mu.RLock()
	defer f.mu.RUnlock()
	if v, ok := f.values[g]; ok {
		return v
	}
	return Defaults()[g]
}

// Set parses "Gate=true,Other=false", as --feature-gates takes it. An unknown gate or a value that is not a
// boolean is an error, and nothing is changed.
func (f *Gates) Set(value string) error {
	parsed := map[Gate]bool{}
	for _, pair := range strings.Split(value, ",") {
		pair = strings.TrimSpace(pair)
		if pair == "" {
			continue
		}
		k, v, ok := strings.Cut(pair, "=")
		k = strings.TrimSpace(k)
		if !ok {
			return fmt.Errorf("feature gate %q: want %s=true or %s=false", pair, k, k)
		}
		if _, known := Defaults()[Gate(k)]; !known {
			return fmt.Errorf("unrecognized feature gate %q: known gates are %s", k, strings.Join(Known(), ", "))
		}
		switch strings.ToLower(strings.TrimSpace(v)) {
		case "true":
			parsed[Gate(k)] = true
		case "false":
			parsed[Gate(k)] = false
		default:
			return fmt.Errorf("feature gate %s: %q is not true or false", k, v)
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.values == nil {
		f.values = map[Gate]bool{}
	}
	maps.Copy(f.values, parsed)
	return nil
}

// String renders the gates set explicitly, sorted.
func (f *Gates) String() string {
	if f == nil {
		return ""
	}
	f.mu.RLock()
	defer f.mu.RUnlock()
	parts := make([]string, 0, len(f.values))
	for _, k := range slices.Sorted(maps.Keys(f.values)) {
		parts = append(parts, fmt.Sprintf("%s=%t", k, f.values[k]))
	}
	return strings.Join(parts, ",")
}

// Type is the flag's type name.
func (f *Gates) Type() string { return "mapStringBool" }

// Known returns the names of the gates, sorted.
func Known() []string {
	out := make([]string, 0, len(Defaults()))
	for g := range Defaults() {
		out = append(out, string(g))
	}
	slices.Sort(out)
	return out
}
