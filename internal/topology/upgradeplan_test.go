package topology

import (
	"testing"

	"github.com/blang/semver/v4"
	"github.com/google/go-cmp/cmp"
	. "github.com/onsi/gomega"
)

// fooParse is the message of semver.ParseTolerant for "foo".
const fooParse = `Invalid character(s) found in major number "0foo"`

func TestLowerThanMinVersion(t *testing.T) {
	tests := []struct {
		name       string
		v, min, cp string
		want       bool
	}{
		{name: "equal", v: "1.30.1", min: "1.30.1", cp: "1.30.1"},
		{name: "lower", v: "1.29.0", min: "1.30.1", cp: "1.30.1", want: true},
		{name: "higher", v: "1.30.1", min: "1.29.0", cp: "1.30.1"},
		{name: "equal pre-release", v: "1.30.1-alpha.1", min: "1.30.1-alpha.1", cp: "1.30.1-alpha.1"},
		{name: "lower pre-release", v: "1.30.1-alpha.0", min: "1.30.1-alpha.1", cp: "1.30.1-alpha.1", want: true},
		{name: "equal build metadata", v: "1.31.1+foo.2-bar.1", min: "1.31.1+foo.2-bar.1", cp: "1.31.1+foo.2-bar.1"},
		{name: "unordered build metadata, not the control plane's", v: "1.31.1+foo.1-bar.1", min: "1.31.1+foo.2-bar.1", cp: "1.31.1+foo.2-bar.1", want: true},
		{name: "unordered build metadata, the control plane's", v: "1.31.1+foo.2-bar.1", min: "1.31.1+foo.1-bar.1", cp: "1.31.1+foo.2-bar.1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			got := lowerThanMinVersion(semver.MustParse(tt.v), semver.MustParse(tt.min), semver.MustParse(tt.cp))
			g.Expect(got).To(Equal(tt.want))
		})
	}
}

func TestMinWorkersVersion(t *testing.T) {
	md := func(name, version string) workerAt { return workerAt{"MachineDeployment", name, version} }
	mp := func(name, version string) workerAt { return workerAt{"MachinePool", name, version} }
	tests := []struct {
		name    string
		cp      string
		workers []workerAt
		want    string
		wantErr string
	}{
		{name: "no workers", cp: "v1.31.0"},
		{name: "workers without a version", cp: "v1.31.0", workers: []workerAt{md("a", "")}},
		{name: "the lowest of MachineDeployments and MachinePools", cp: "v1.31.0",
			workers: []workerAt{md("a", "v1.31.0"), md("b", "v1.30.2"), mp("c", "v1.29.5"), mp("d", "v1.31.0")}, want: "v1.29.5"},
		{name: "written with a v", cp: "1.31.0", workers: []workerAt{md("a", "1.30.0")}, want: "v1.30.0"},
		{name: "unordered build metadata: the one that is not the control plane's", cp: "v1.31.1+foo.2-bar.1",
			workers: []workerAt{md("a", "v1.31.1+foo.1-bar.1"), md("b", "v1.31.1+foo.2-bar.1")}, want: "v1.31.1+foo.1-bar.1"},
		{name: "unordered build metadata, the other order", cp: "v1.31.1+foo.2-bar.1",
			workers: []workerAt{md("a", "v1.31.1+foo.2-bar.1"), md("b", "v1.31.1+foo.1-bar.1")}, want: "v1.31.1+foo.1-bar.1"},
		{name: "an invalid control plane version", cp: "foo", workers: []workerAt{md("a", "v1.30.0")},
			wantErr: "failed to parse ControlPlane version foo: " + fooParse},
		{name: "an invalid MachineDeployment version", cp: "v1.31.0", workers: []workerAt{md("a", "foo")},
			wantErr: "failed to parse version foo of MachineDeployment a: " + fooParse},
		{name: "an invalid MachinePool version", cp: "v1.31.0", workers: []workerAt{md("a", "v1.30.0"), mp("b", "foo")},
			wantErr: "failed to parse version foo of MachinePool b: " + fooParse},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			got, err := minWorkersVersion(tt.cp, tt.workers)
			if tt.wantErr != "" {
				g.Expect(err).To(MatchError(tt.wantErr))
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(got).To(Equal(tt.want))
		})
	}
}

func TestUpgradePlanOneMinor(t *testing.T) {
	tests := []struct {
		name        string
		desired, cp string
		want        []string
		wantErr     string
	}{
		{name: "up to date", desired: "v1.31.0", cp: "v1.31.0"},
		{name: "the next minor", desired: "v1.32.0", cp: "v1.31.0", want: []string{"v1.32.0"}},
		{name: "a patch", desired: "v1.31.4", cp: "v1.31.0", want: []string{"v1.31.4"}},
		{name: "a pre-release", desired: "v1.32.0-alpha.2", cp: "v1.32.0-alpha.1", want: []string{"v1.32.0-alpha.2"}},
		{name: "build metadata", desired: "v1.32.0+foo.2-bar.1", cp: "v1.32.0+foo.1-bar.1", want: []string{"v1.32.0+foo.2-bar.1"}},
		{name: "two minors", desired: "v1.33.0", cp: "v1.31.0", wantErr: "cannot compute an upgrade plan from v1.31.0 to v1.33.0"},
		{name: "an invalid desired version", desired: "foo", cp: "v1.31.0", wantErr: "failed to parse desired version: " + fooParse},
		{name: "an invalid control plane version", desired: "v1.31.0", cp: "foo", wantErr: "failed to parse current ControlPlane version: " + fooParse},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			got, err := upgradePlanOneMinor(tt.desired, tt.cp)
			if tt.wantErr != "" {
				g.Expect(err).To(MatchError(tt.wantErr))
				g.Expect(got).To(BeNil())
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(got).To(Equal(tt.want), cmp.Diff(tt.want, got))
		})
	}
}

func TestUpgradePlanFromVersions(t *testing.T) {
	tests := []struct {
		name        string
		versions    []string
		desired, cp string
		want        []string
		wantErr     string
	}{
		{name: "up to date", versions: []string{"v1.31.0"}, desired: "v1.31.0", cp: "v1.31.0"},
		{name: "one minor", versions: []string{"v1.31.0", "v1.32.0", "v1.32.1"}, desired: "v1.32.0", cp: "v1.31.0",
			want: []string{"v1.32.0"}},
		{name: "the next patch", versions: []string{"v1.35.1", "v1.35.2"}, desired: "v1.35.2", cp: "v1.35.1",
			want: []string{"v1.35.2"}},
		{name: "a later patch, skipping one", versions: []string{"v1.35.1", "v1.35.2", "v1.35.3"}, desired: "v1.35.3", cp: "v1.35.1",
			want: []string{"v1.35.3"}},
		{name: "a patch that is not the last listed", versions: []string{"v1.35.1", "v1.35.2", "v1.35.3"}, desired: "v1.35.2", cp: "v1.35.1",
			want: []string{"v1.35.2"}},
		{name: "several minors", versions: []string{"v1.31.0", "v1.32.0", "v1.33.0"}, desired: "v1.33.0", cp: "v1.31.0",
			want: []string{"v1.32.0", "v1.33.0"}},
		{name: "the last patch of each intermediate minor", versions: []string{"v1.31.0", "v1.31.1", "v1.32.0", "v1.32.2", "v1.32.3", "v1.33.0", "v1.33.1"},
			desired: "v1.33.1", cp: "v1.31.0", want: []string{"v1.32.3", "v1.33.1"}},
		{name: "the last pre-release of a minor", versions: []string{"v1.31.0", "v1.31.1", "v1.32.0-alpha.0", "v1.32.0-alpha.1", "v1.32.0-alpha.2", "v1.33.0", "v1.33.1"},
			desired: "v1.33.1", cp: "v1.31.0", want: []string{"v1.32.0-alpha.2", "v1.33.1"}},
		{name: "the last build of a minor", versions: []string{"v1.31.0", "v1.31.1", "v1.32.0+foo.1-bar.1", "v1.32.0+foo.2-bar.1", "v1.32.0+foo.2-bar.2", "v1.33.0", "v1.33.1"},
			desired: "v1.33.1", cp: "v1.31.0", want: []string{"v1.32.0+foo.2-bar.2", "v1.33.1"}},
		{name: "unordered build metadata: the list's order, up to the desired build", versions: []string{
			"v1.31.0+a", "v1.31.0+b", "v1.31.0+c", // the control plane's patch
			"v1.31.1+a", // the control plane's minor
			"v1.32.0+a", "v1.32.0+b", "v1.32.0+c",
			"v1.33.0+b",
			"v1.33.1+a", "v1.33.1+b", "v1.33.1+c", // +c comes after the desired +b
		}, desired: "v1.33.1+b", cp: "v1.31.0+b", want: []string{"v1.32.0+c", "v1.33.1+b"}},
		{name: "a control plane version older than the list's of its minor", versions: []string{"v1.31.1", "v1.32.0", "v1.33.0"},
			desired: "v1.33.0", cp: "v1.31.0", want: []string{"v1.32.0", "v1.33.0"}},
		{name: "a control plane version newer than the list's of its minor", versions: []string{"v1.31.0", "v1.32.0", "v1.33.0"},
			desired: "v1.33.0", cp: "v1.31.2", want: []string{"v1.32.0", "v1.33.0"}},
		{name: "a minor missing from the list: a plan the validation refuses", versions: []string{"v1.32.0", "v1.33.0"},
			desired: "v1.33.0", cp: "v1.30.2", want: []string{"v1.32.0", "v1.33.0"}},
		{name: "the desired version missing from the list: a plan that ends short", versions: []string{"v1.31.0", "v1.32.0", "v1.33.0", "v1.34.0"},
			desired: "v1.33.1", cp: "v1.31.0", want: []string{"v1.32.0", "v1.33.0"}},
		{name: "a change of build metadata only: no plan (upstream's rule)", versions: []string{"v1.31.0+1", "v1.31.0+2"},
			desired: "v1.31.0+2", cp: "v1.31.0+1"},
		{name: "nothing above the control plane", versions: []string{"v1.30.0", "v1.31.0"}, desired: "v1.32.0", cp: "v1.31.0"},
		{name: "an invalid listed version", versions: []string{"v1.31.0", "foo"}, desired: "v1.32.0", cp: "v1.31.0",
			wantErr: "failed to parse version foo: " + fooParse},
		{name: "an invalid desired version", versions: []string{"v1.31.0"}, desired: "foo", cp: "v1.31.0",
			wantErr: "failed to parse desired version: " + fooParse},
		{name: "an invalid control plane version", versions: []string{"v1.31.0"}, desired: "v1.31.0", cp: "foo",
			wantErr: "failed to parse current ControlPlane version: " + fooParse},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			got, err := upgradePlanFromVersions(tt.versions, tt.desired, tt.cp)
			if tt.wantErr != "" {
				g.Expect(err).To(MatchError(tt.wantErr))
				g.Expect(got).To(BeNil())
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(got).To(Equal(tt.want), cmp.Diff(tt.want, got))
		})
	}
}

// TestUpgradePlanFromVersionsValidated: the plans from a list that lacks a minor, or for a change of
// build metadata only, are refused by the validation with the message the user sees.
func TestUpgradePlanFromVersionsValidated(t *testing.T) {
	g := NewWithT(t)
	plan, err := upgradePlanFromVersions([]string{"v1.32.0", "v1.33.0"}, "v1.33.0", "v1.30.2")
	g.Expect(err).NotTo(HaveOccurred())
	_, err = defaultAndValidateUpgradePlans("v1.33.0", "v1.30.2", "v1.30.2", plan, nil)
	g.Expect(err).To(MatchError("invalid ControlPlane upgrade plan: item 0; expecting a version with minor 30 or 31, found version v1.32.0"))

	// A change of build metadata only gets no plan from the list, which the validation refuses.
	plan, err = upgradePlanFromVersions([]string{"v1.31.0+1", "v1.31.0+2"}, "v1.31.0+2", "v1.31.0+1")
	g.Expect(err).NotTo(HaveOccurred())
	_, err = defaultAndValidateUpgradePlans("v1.31.0+2", "v1.31.0+1", "v1.31.0+1", plan, nil)
	g.Expect(err).To(MatchError("invalid ControlPlane upgrade plan: control plane upgrade plan must end with version v1.31.0+2, ends with v1.31.0+1 instead"))
}

func TestDefaultAndValidateUpgradePlans(t *testing.T) {
	tests := []struct {
		name string
		// desired is spec.topology.version, cp the control plane's version, workers the lowest workers'
		// version ("" without workers).
		desired, cp, workers string
		cpPlan, workersPlan  []string
		want                 []string
		wantErr              string
	}{
		// Up to date.
		{name: "everything up to date", desired: "v1.33.1", cp: "v1.33.1", workers: "v1.33.1"},
		{name: "no workers, control plane up to date", desired: "v1.33.1", cp: "v1.33.1"},

		// Invalid versions.
		{name: "an invalid desired version", desired: "foo", cp: "v1.33.1", wantErr: "failed to parse Cluster version foo: " + fooParse},
		{name: "an invalid control plane version", desired: "v1.33.1", cp: "foo", wantErr: "failed to parse ControlPlane version foo: " + fooParse},
		{name: "an invalid min workers version", desired: "v1.33.1", cp: "v1.33.1", workers: "foo",
			wantErr: "failed to parse min workers version foo: " + fooParse},

		// The control plane's plan.
		{name: "an invalid version in the control plane's plan", desired: "v1.33.1", cp: "v1.30.0", cpPlan: []string{"foo"},
			wantErr: "invalid ControlPlane upgrade plan: item 0; failed to parse version foo: " + fooParse},
		{name: "control plane's plan starting at its version", desired: "v1.33.1", cp: "v1.30.0", cpPlan: []string{"v1.30.0"},
			wantErr: "invalid ControlPlane upgrade plan: item 0; version v1.30.0 must be greater than v1.30.0"},
		{name: "control plane's plan skipping a minor", desired: "v1.33.1", cp: "v1.30.0", cpPlan: []string{"v1.32.1"},
			wantErr: "invalid ControlPlane upgrade plan: item 0; expecting a version with minor 30 or 31, found version v1.32.1"},
		{name: "control plane's plan going down", desired: "v1.33.1", cp: "v1.30.0", cpPlan: []string{"v1.31.1", "v1.30.0"},
			wantErr: "invalid ControlPlane upgrade plan: item 1; version v1.30.0 must be greater than v1.31.1"},
		{name: "control plane's plan stopping short", desired: "v1.33.1", cp: "v1.30.0", cpPlan: []string{"v1.31.1", "v1.32.0"},
			wantErr: "invalid ControlPlane upgrade plan: control plane upgrade plan must end with version v1.33.1, ends with v1.32.0 instead"},
		{name: "control plane's plan going past", desired: "v1.33.1", cp: "v1.30.0", cpPlan: []string{"v1.31.1", "v1.32.0", "v1.33.1", "v1.34.1"},
			wantErr: "invalid ControlPlane upgrade plan: control plane upgrade plan must end with version v1.33.1, ends with v1.34.1 instead"},
		{name: "empty control plane's plan for an upgrade", desired: "v1.31.0", cp: "v1.30.0",
			wantErr: "invalid ControlPlane upgrade plan: control plane upgrade plan must end with version v1.31.0, ends with v1.30.0 instead"},
		{name: "control plane's plan with the control plane up to date", desired: "v1.33.1", cp: "v1.33.1", workers: "v1.30.0", cpPlan: []string{"v1.33.1"},
			wantErr: "invalid ControlPlane upgrade plan: control plane is already at the desired version"},

		// The workers' plan given.
		{name: "workers' plan with a version the control plane does not go through", desired: "v1.33.1", cp: "v1.30.0", workers: "v1.30.0",
			cpPlan: []string{"v1.31.1", "v1.32.0", "v1.33.1"}, workersPlan: []string{"v1.32.2", "v1.33.1", "v1.32.3", "v1.32.2"},
			wantErr: "invalid workers upgrade plan: versions v1.32.2,v1.32.3 doesn't match any versions in the control plane upgrade plan nor the control plane version"},
		{name: "workers' plan going down", desired: "v1.33.1", cp: "v1.30.0", workers: "v1.30.0",
			cpPlan: []string{"v1.31.1", "v1.32.0", "v1.33.1"}, workersPlan: []string{"v1.33.1", "v1.32.0"},
			wantErr: "invalid workers upgrade plan, item 1; version v1.32.0 must be greater than v1.33.1"},
		{name: "an invalid version in the workers' plan", desired: "v1.33.1", cp: "v1.33.1", workers: "v1.30.0", workersPlan: []string{"foo"},
			wantErr: "invalid workers upgrade plan, item 0; failed to parse version foo: " + fooParse},
		{name: "workers' plan starting at their version", desired: "v1.33.1", cp: "v1.33.1", workers: "v1.30.0", workersPlan: []string{"v1.30.0"},
			wantErr: "invalid workers upgrade plan, item 0; version v1.30.0 must be greater than v1.30.0"},
		{name: "workers' plan stopping short", desired: "v1.33.1", cp: "v1.33.1", workers: "v1.30.0", workersPlan: []string{"v1.32.1"},
			wantErr: "invalid workers upgrade plan; workers upgrade plan must end with version v1.33.1, ends with v1.32.1 instead"},
		{name: "workers' plan going past", desired: "v1.33.1", cp: "v1.33.1", workers: "v1.31.0", workersPlan: []string{"v1.34.1"},
			wantErr: "invalid workers upgrade plan; workers upgrade plan must end with version v1.33.1, ends with v1.34.1 instead"},
		{name: "workers' plan breaking the skew policy", desired: "v1.34.1", cp: "v1.34.1", workers: "v1.30.0", workersPlan: []string{"v1.34.1"},
			wantErr: "invalid workers upgrade plan, item 0; workers cannot go from minor 30 (v1.30.0) to minor 34 (v1.34.1), an intermediate step is required to comply with Kubernetes version skew rules"},
		{name: "workers' plan without workers", desired: "v1.33.1", cp: "v1.30.0",
			cpPlan: []string{"v1.31.1", "v1.32.0", "v1.33.1"}, workersPlan: []string{"v1.35.1"},
			wantErr: "invalid worker upgrade plan; there are no workers or workers already at the desired version"},
		{name: "workers' plan with workers up to date", desired: "v1.33.1", cp: "v1.33.1", workers: "v1.33.1",
			workersPlan: []string{"v1.33.1"},
			wantErr:     "invalid worker upgrade plan; there are no workers or workers already at the desired version"},

		// Control plane only.
		{name: "control plane only, from v1.30", desired: "v1.33.1", cp: "v1.30.0", cpPlan: []string{"v1.31.1", "v1.32.0", "v1.33.1"}},
		{name: "control plane only, from v1.32", desired: "v1.33.1", cp: "v1.32.0", cpPlan: []string{"v1.33.1"}},

		// The workers' plan defaulted: the desired version when within the skew policy.
		{name: "two minors, workers at the end", desired: "v1.32.0", cp: "v1.30.0", workers: "v1.30.0",
			cpPlan: []string{"v1.31.1", "v1.32.0"}, want: []string{"v1.32.0"}},
		{name: "two minors, after the control plane's first step", desired: "v1.32.0", cp: "v1.31.1", workers: "v1.30.0",
			cpPlan: []string{"v1.32.0"}, want: []string{"v1.32.0"}},
		{name: "two minors, after the control plane's last step", desired: "v1.32.0", cp: "v1.32.0", workers: "v1.30.0",
			want: []string{"v1.32.0"}},
		{name: "a patch", desired: "v1.30.5", cp: "v1.30.0", workers: "v1.30.0", cpPlan: []string{"v1.30.5"}, want: []string{"v1.30.5"}},

		// The workers' plan defaulted: a step every third minor.
		{name: "four minors, from v1.30", desired: "v1.34.1", cp: "v1.30.0", workers: "v1.30.0",
			cpPlan: []string{"v1.31.1", "v1.32.0", "v1.33.1", "v1.34.1"}, want: []string{"v1.33.1", "v1.34.1"}},
		{name: "four minors, control plane at v1.31", desired: "v1.34.1", cp: "v1.31.1", workers: "v1.30.0",
			cpPlan: []string{"v1.32.0", "v1.33.1", "v1.34.1"}, want: []string{"v1.33.1", "v1.34.1"}},
		{name: "four minors, control plane at v1.33", desired: "v1.34.1", cp: "v1.33.1", workers: "v1.30.0",
			cpPlan: []string{"v1.34.1"}, want: []string{"v1.33.1", "v1.34.1"}},
		{name: "four minors, workers at v1.33", desired: "v1.34.1", cp: "v1.33.1", workers: "v1.33.1",
			cpPlan: []string{"v1.34.1"}, want: []string{"v1.34.1"}},
		{name: "four minors, control plane done", desired: "v1.34.1", cp: "v1.34.1", workers: "v1.33.1",
			want: []string{"v1.34.1"}},
		{name: "seven minors: two intermediate steps", desired: "v1.37.0", cp: "v1.30.0", workers: "v1.30.0",
			cpPlan: []string{"v1.31.0", "v1.32.0", "v1.33.0", "v1.34.0", "v1.35.0", "v1.36.0", "v1.37.0"}, want: []string{"v1.33.0", "v1.36.0", "v1.37.0"}},
		{name: "six minors: one intermediate step", desired: "v1.36.0", cp: "v1.30.0", workers: "v1.30.0",
			cpPlan: []string{"v1.31.0", "v1.32.0", "v1.33.0", "v1.34.0", "v1.35.0", "v1.36.0"}, want: []string{"v1.33.0", "v1.36.0"}},
		{name: "many patches of a minor: the last one", desired: "v1.34.1", cp: "v1.30.0", workers: "v1.30.0",
			cpPlan: []string{"v1.31.1", "v1.31.2", "v1.32.0", "v1.33.1", "v1.33.2", "v1.34.1"}, want: []string{"v1.33.2", "v1.34.1"}},
		{name: "pre-releases", desired: "v1.34.1", cp: "v1.30.0", workers: "v1.30.0",
			cpPlan: []string{"v1.31.1", "v1.32.0", "v1.33.2", "v1.34.1-beta.0", "v1.34.1-rc.0", "v1.34.1"}, want: []string{"v1.33.2", "v1.34.1"}},
		{name: "no version of an intermediate minor", desired: "v1.32.0", cp: "v1.31.0", workers: "v1.27.0",
			cpPlan: []string{"v1.32.0"}, wantErr: "invalid upgrade plan; unable to identify version for minor 30"},

		// The workers' plan given: steps that are not needed, and steps the skew policy needs.
		{name: "an extra workers' step", desired: "v1.33.1", cp: "v1.30.0", workers: "v1.30.0",
			cpPlan: []string{"v1.31.1", "v1.32.0", "v1.33.1"}, workersPlan: []string{"v1.31.1", "v1.33.1"}, want: []string{"v1.31.1", "v1.33.1"}},
		{name: "an extra workers' step, control plane at v1.31", desired: "v1.33.1", cp: "v1.31.1", workers: "v1.30.0",
			cpPlan: []string{"v1.32.0", "v1.33.1"}, workersPlan: []string{"v1.31.1", "v1.33.1"}, want: []string{"v1.31.1", "v1.33.1"}},
		{name: "an extra workers' step, workers at v1.31", desired: "v1.33.1", cp: "v1.31.1", workers: "v1.31.1",
			cpPlan: []string{"v1.32.0", "v1.33.1"}, workersPlan: []string{"v1.33.1"}, want: []string{"v1.33.1"}},
		{name: "workers' plan with the control plane done", desired: "v1.33.1", cp: "v1.33.1", workers: "v1.31.1",
			workersPlan: []string{"v1.33.1"}, want: []string{"v1.33.1"}},
		{name: "an extra step and a skew step", desired: "v1.35.2", cp: "v1.30.0", workers: "v1.30.0",
			cpPlan: []string{"v1.31.1", "v1.32.0", "v1.33.1", "v1.34.2", "v1.35.2"}, workersPlan: []string{"v1.31.1", "v1.34.2", "v1.35.2"},
			want: []string{"v1.31.1", "v1.34.2", "v1.35.2"}},
		{name: "an extra step and a skew step, control plane at v1.34", desired: "v1.35.2", cp: "v1.34.2", workers: "v1.31.1",
			cpPlan: []string{"v1.35.2"}, workersPlan: []string{"v1.34.2", "v1.35.2"}, want: []string{"v1.34.2", "v1.35.2"}},

		// Build metadata.
		{name: "build metadata, defaulted", desired: "v1.32.1+foo.1-bar.1", cp: "v1.30.0+foo.1-bar.1", workers: "v1.30.0+foo.1-bar.1",
			cpPlan: []string{"v1.31.1+foo.1-bar.1", "v1.31.1+foo.2-bar.1", "v1.32.1+foo.1-bar.1"}, want: []string{"v1.32.1+foo.1-bar.1"}},
		{name: "build metadata, control plane between two builds", desired: "v1.32.1+foo.1-bar.1", cp: "v1.31.1+foo.1-bar.1", workers: "v1.30.0+foo.1-bar.1",
			cpPlan: []string{"v1.31.1+foo.2-bar.1", "v1.32.1+foo.1-bar.1"}, want: []string{"v1.32.1+foo.1-bar.1"}},
		{name: "build metadata, control plane done", desired: "v1.32.1+foo.1-bar.1", cp: "v1.32.1+foo.1-bar.1", workers: "v1.30.0+foo.1-bar.1",
			want: []string{"v1.32.1+foo.1-bar.1"}},
		{name: "build metadata, up to date", desired: "v1.32.1+foo.1-bar.1", cp: "v1.32.1+foo.1-bar.1", workers: "v1.32.1+foo.1-bar.1"},
		{name: "build metadata, workers' plan out of the control plane's order", desired: "v1.32.1+foo.1-bar.1", cp: "v1.30.0+foo.1-bar.1", workers: "v1.30.0+foo.1-bar.1",
			cpPlan:      []string{"v1.31.1+foo.1-bar.1", "v1.31.1+foo.2-bar.1", "v1.32.1+foo.1-bar.1"},
			workersPlan: []string{"v1.31.1+foo.2-bar.1", "v1.31.1+foo.1-bar.1", "v1.32.1+foo.1-bar.1"},
			wantErr:     "invalid workers upgrade plan, item 1; version v1.31.1+foo.1-bar.1 must be before v1.31.1+foo.2-bar.1"},
		{name: "build metadata, workers' plan in the control plane's order", desired: "v1.32.1+foo.1-bar.1", cp: "v1.30.0+foo.1-bar.1", workers: "v1.30.0+foo.1-bar.1",
			cpPlan:      []string{"v1.31.1+foo.1-bar.1", "v1.31.1+foo.2-bar.1", "v1.32.1+foo.1-bar.1"},
			workersPlan: []string{"v1.31.1+foo.1-bar.1", "v1.31.1+foo.2-bar.1", "v1.32.1+foo.1-bar.1"},
			want:        []string{"v1.31.1+foo.1-bar.1", "v1.31.1+foo.2-bar.1", "v1.32.1+foo.1-bar.1"}},
		{name: "build metadata, workers' plan through the control plane's version", desired: "v1.32.1+foo.1-bar.1", cp: "v1.31.1+foo.1-bar.1", workers: "v1.30.0+foo.1-bar.1",
			cpPlan:      []string{"v1.31.1+foo.2-bar.1", "v1.32.1+foo.1-bar.1"},
			workersPlan: []string{"v1.31.1+foo.1-bar.1", "v1.31.1+foo.2-bar.1", "v1.32.1+foo.1-bar.1"},
			want:        []string{"v1.31.1+foo.1-bar.1", "v1.31.1+foo.2-bar.1", "v1.32.1+foo.1-bar.1"}},
		{name: "build metadata, workers skipping a build", desired: "v1.32.1+foo.1-bar.1", cp: "v1.30.0+foo.1-bar.1", workers: "v1.30.0+foo.1-bar.1",
			cpPlan:      []string{"v1.31.1+foo.1-bar.1", "v1.31.1+foo.2-bar.1", "v1.32.1+foo.1-bar.1"},
			workersPlan: []string{"v1.31.1+foo.1-bar.1", "v1.32.1+foo.1-bar.1"},
			want:        []string{"v1.31.1+foo.1-bar.1", "v1.32.1+foo.1-bar.1"}},
		{name: "build metadata, a workers' version of unknown order", desired: "v1.31.1+b", cp: "v1.31.1+b", workers: "v1.31.1+a",
			workersPlan: []string{"v1.31.1+b"},
			wantErr:     "failer to determine version v1.31.1+a order"},
		{name: "build metadata, a step of unknown order", desired: "v1.31.1+c", cp: "v1.31.1+c", workers: "v1.31.1+a",
			workersPlan: []string{"v1.31.1+b", "v1.31.1+c"},
			wantErr:     "invalid workers upgrade plan, item 0; failer to determine version v1.31.1+b order"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			cpPlan := append([]string(nil), tt.cpPlan...)
			got, err := defaultAndValidateUpgradePlans(tt.desired, tt.cp, tt.workers, tt.cpPlan, tt.workersPlan)
			if tt.wantErr != "" {
				g.Expect(err).To(MatchError(tt.wantErr))
				g.Expect(got).To(BeNil())
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(got).To(Equal(tt.want), cmp.Diff(tt.want, got))
			// The control plane's plan is the caller's: it is read, never changed.
			g.Expect(tt.cpPlan).To(Equal(cpPlan))
		})
	}
}
