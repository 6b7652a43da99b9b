package validation

import (
	"testing"

	. "github.com/onsi/gomega"

	operatorv1 "github.com/capstan-dev/capstan/api/operator/v1alpha2"
)

// TestUpdateInDebugMode: while debug mode is on, or as it is turned on, nothing else may change; the
// message says which of the two happened and what to do.
func TestUpdateInDebugMode(t *testing.T) {
	debugging := func(on bool, gates map[string]bool) *operatorv1.ProviderSpec {
		return &operatorv1.ProviderSpec{Version: "v0.1.0", Manager: &operatorv1.ManagerSpec{Debug: on, FeatureGates: gates}}
	}
	gate := map[string]bool{"MachinePool": true}
	tests := []struct {
		name     string
		old, new *operatorv1.ProviderSpec
		wantErr  string
	}{
		{name: "debug mode turned on alone", old: debugging(false, nil), new: debugging(true, nil)},
		{name: "debug mode turned off alone", old: debugging(true, gate), new: debugging(false, gate)},
		{name: "the version filled in", old: &operatorv1.ProviderSpec{Manager: &operatorv1.ManagerSpec{Debug: true}}, new: debugging(true, nil)},
		{name: "a change in debug mode", old: debugging(true, nil), new: debugging(true, gate),
			wantErr: "spec: Forbidden: the provider is in debug mode (spec.manager.debug: true): no other field may change while it is; set spec.manager.debug to false first, alone"},
		{name: "a change with debug mode turned on", old: debugging(false, nil), new: debugging(true, gate),
			wantErr: "spec: Forbidden: debug mode (spec.manager.debug: true) is turned on alone: no other field may change with it; make the other changes first, then set spec.manager.debug to true alone"},
		{name: "a change with debug mode turned off", old: debugging(true, nil), new: debugging(false, gate),
			wantErr: "spec: Forbidden: the provider is in debug mode (spec.manager.debug: true): no other field may change while it is; set spec.manager.debug to false first, alone"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			errs := Update(tt.old, tt.new)
			if tt.wantErr == "" {
				g.Expect(errs).To(BeEmpty())
				return
			}
			g.Expect(errs.ToAggregate()).To(MatchError(tt.wantErr))
		})
	}
}
