package machineset

import (
	"time"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
)

// scope is what one reconcile of a MachineSet knows: the objects it read and the facts its phases
// recorded. The status is computed from it, with no client.
type scope struct {
	ms      *clusterv1.MachineSet
	cluster *clusterv1.Cluster
	// owningMD is the MachineDeployment that controls ms, if any; it decides whether Machines are up to
	// date.
	owningMD *clusterv1.MachineDeployment
	// now is the time of the reconcile, for availability and stuck deletions.
	now time.Time

	// invalidConfiguration, when not empty, says why the spec cannot work (for example a selector that does
	// not match the template's labels); no Machine is created while it is set.
	invalidConfiguration string

	// infrastructureTemplateNotFound and bootstrapTemplateNotFound are set when a referenced template does
	// not exist; no Machine is created while they are set.
	infrastructureTemplateNotFound bool
	bootstrapTemplateNotFound      bool

	// machines are the Machines the MachineSet owns, sorted by name; valid when getMachinesSucceeded.
	machines             []*clusterv1.Machine
	getMachinesSucceeded bool

	// preflightProblems say why the preflight checks held up creating Machines in this reconcile.
	preflightProblems []string

	// createFailure records why creating a Machine failed in this reconcile.
	createFailure *failure
}

// failure is a reason and a message for a condition.
type failure struct {
	reason  string
	message string
}
