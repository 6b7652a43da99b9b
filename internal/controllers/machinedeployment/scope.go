package machinedeployment

import (
	"time"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
)

// scope is what one reconcile of a MachineDeployment knows: the objects it read and the facts its phases
// recorded. The status is computed from it, with no client.
type scope struct {
	md      *clusterv1.MachineDeployment
	cluster *clusterv1.Cluster
	// now is the time of the reconcile, for spec.rolloutAfter.
	now time.Time

	// strategy is the effective rollout strategy; valid unless invalidConfiguration is set.
	strategy strategy
	// invalidConfiguration, when not empty, says why the spec cannot work; nothing is rolled out or
	// scaled while it is set.
	invalidConfiguration string

	// infrastructureTemplateNotFound and bootstrapTemplateNotFound are set when a referenced template does
	// not exist; nothing is rolled out or scaled while they are set.
	infrastructureTemplateNotFound bool
	bootstrapTemplateNotFound      bool

	// machineSets are the MachineSets the MachineDeployment owns; valid when getMachineSetsSucceeded.
	machineSets             []*clusterv1.MachineSet
	getMachineSetsSucceeded bool
	// newMS is the MachineSet matching the template (nil when there is none yet); oldMSs are the others.
	newMS  *clusterv1.MachineSet
	oldMSs []*clusterv1.MachineSet

	// machines are the Machines of those MachineSets; valid when getMachinesSucceeded.
	machines             []*clusterv1.Machine
	getMachinesSucceeded bool
}

// replicas is spec.replicas, defaulted earlier in the reconcile.
func (s *scope) replicas() int32 {
	if s.md.Spec.Replicas == nil {
		return 1
	}
	return *s.md.Spec.Replicas
}
