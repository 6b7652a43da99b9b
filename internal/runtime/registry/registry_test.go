package registry

import (
	"testing"

	. "github.com/onsi/gomega"

	runtimehooksv1 "github.com/capstan-dev/capstan/api/runtime/hooks/v1alpha1"
)

func TestCalled(t *testing.T) {
	tests := []struct {
		hook runtimehooksv1.Hook
		want bool
	}{
		{runtimehooksv1.Discovery, true},
		{runtimehooksv1.BeforeClusterCreate, true},
		{runtimehooksv1.AfterControlPlaneInitialized, true},
		{runtimehooksv1.BeforeClusterUpgrade, true},
		{runtimehooksv1.AfterControlPlaneUpgrade, true},
		{runtimehooksv1.AfterClusterUpgrade, true},
		{runtimehooksv1.BeforeClusterDelete, true},
		{runtimehooksv1.GeneratePatches, true},
		{runtimehooksv1.ValidateTopology, true},
		{runtimehooksv1.DiscoverVariables, true},
		// Chained upgrades.
		{runtimehooksv1.BeforeControlPlaneUpgrade, true},
		{runtimehooksv1.BeforeWorkersUpgrade, true},
		{runtimehooksv1.AfterWorkersUpgrade, true},
		{runtimehooksv1.GenerateUpgradePlan, true},
		// In-place updates: known, not called by the controllers yet.
		{runtimehooksv1.CanUpdateMachine, true},
		{runtimehooksv1.CanUpdateMachineSet, false},
		{runtimehooksv1.UpdateMachine, true},
		{"BeforeMachineCreate", false},
	}
	for _, tt := range tests {
		t.Run(string(tt.hook), func(t *testing.T) {
			g := NewWithT(t)
			g.Expect(Called(tt.hook)).To(Equal(tt.want))
		})
	}
	// Every hook of the API is in the table: a new one must be decided on.
	inTable := map[runtimehooksv1.Hook]bool{}
	for _, tt := range tests {
		inTable[tt.hook] = true
	}
	for _, h := range runtimehooksv1.Hooks() {
		if !inTable[h] {
			t.Errorf("hook %s is not in the table", h)
		}
	}
}
