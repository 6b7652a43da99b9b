package topology

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/blang/semver/v4"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
)

// UpgradeConcurrencyAnnotation on a Cluster sets how many MachineDeployments (and, apart, how many
// MachinePools) may upgrade at once (1 when absent), as upstream's
// topology.cluster.x-k8s.io/upgrade-concurrency.
const UpgradeConcurrencyAnnotation = "topology.cluster.x-k8s.io/upgrade-concurrency"

// controlPlaneFacts reads what the upgrade sequence needs from the control plane object.
type controlPlaneFacts struct {
	version      string
	provisioning bool
	upgrading    bool
	scaling      bool
}

// readControlPlane reads the version and state of a control plane by contract: spec.version,
// status.version (none yet: provisioning; older: upgrading) and the replica counts.
func readControlPlane(obj *unstructured.Unstructured) (controlPlaneFacts, error) {
	var f controlPlaneFacts
	v, found, err := unstructured.NestedString(obj.Object, "spec", "version")
	if err != nil || !found {
		return f, fmt.Errorf("reading spec.version of %s %s: not set", obj.GetKind(), obj.GetName())
	}
	f.version = v
	statusVersion, found, _ := unstructured.NestedString(obj.Object, "status", "version")
	if !found || statusVersion == "" {
		f.provisioning = true
		return f, nil
	}
	spec, err1 := semver.ParseTolerant(v)
	status, err2 := semver.ParseTolerant(statusVersion)
	if err1 == nil && err2 == nil {
		f.upgrading = status.LT(spec)
	} else {
		f.upgrading = v != statusVersion
	}
	if replicas, found, _ := unstructured.NestedInt64(obj.Object, "spec", "replicas"); found {
		get := func(name string) (int64, bool) {
			n, ok, _ := unstructured.NestedInt64(obj.Object, "status", name)
			return n, ok
		}
		st, ok := get("replicas")
		updated, _ := get("updatedReplicas")
		ready, _ := get("readyReplicas")
		unavailable, _ := get("unavailableReplicas")
		f.scaling = !ok || st != replicas || updated != replicas || ready != replicas || unavailable > 0
	}
	return f, nil
}

// ReadControlPlane reads, by contract, a control plane's spec.version and whether it is provisioning (no
// status.version yet) or upgrading (status.version older than spec.version), as the engine does; the
// admission check of version changes uses it too.
func ReadControlPlane(obj *unstructured.Unstructured) (version string, provisioning, upgrading bool, err error) {
	f, err := readControlPlane(obj)
	return f.version, f.provisioning, f.upgrading, err
}

// controlPlaneStable: the control plane may be upgraded or have workers upgrade against it.
func (u *UpgradeStatus) controlPlaneStable() bool {
	return u.controlPlaneSettled() && !u.ControlPlanePendingUpgrade
}

// controlPlaneSettled: the control plane is not changing: not provisioning, upgrading, scaling or
// starting an upgrade.
func (u *UpgradeStatus) controlPlaneSettled() bool {
	return !u.ControlPlaneProvisioning && !u.ControlPlaneUpgrading && !u.ControlPlaneScaling && !u.ControlPlaneStartingUpgrade
}

// upgradePlan computes the upgrade plan (upstream's ComputeUpgradePlan) once the control plane exists:
// the versions the control plane goes through to spec.topology.version, one minor at a time, and those
// the MachineDeployments and MachinePools go through, skipping what the version skew policy allows.
// The control plane's plan comes from the ClusterClass's upgrade plan extension when it names one, else
// from its kubernetesVersions when it lists some, else it is spec.topology.version alone (at most one
// minor above the control plane's). A plan that breaks the rules fails the computation.
func (c *computation) upgradePlan() error {
	if c.cur.ControlPlane.Object == nil {
		return nil
	}
	f, err := readControlPlane(c.cur.ControlPlane.Object)
	if err != nil {
		return err
	}
	want := c.topology.Version
	up := &c.desired.Upgrade
	workers := c.currentWorkerVersions()
	minWorkers, err := minWorkersVersion(f.version, workers)
	if err != nil {
		return err
	}
	up.PlanComputed = true
	up.MinWorkersVersion = minWorkers
	desired, cp, err := parseUpgradeEnds(want, f.version)
	if err != nil {
		return err
	}
	if desired.LT(cp) {
		return c.checkVersionChange(f.version, want)
	}
	if cp.String() == desired.String() && (minWorkers == "" || versionKey(minWorkers) == vString(desired)) {
		return nil
	}
	class := c.bp.ClusterClass
	var cpPlan, workersPlan []string
	switch {
	case class.Spec.Upgrade.External.GenerateUpgradePlanExtension != "":
		name := class.Spec.Upgrade.External.GenerateUpgradePlanExtension
		if c.opts.UpgradePlanner == nil {
			return fmt.Errorf("ClusterClass %s gets its upgrade plans from the Runtime Extension %q, which cannot be called here", class.Name, name)
		}
		cpPlan, workersPlan, err = c.opts.UpgradePlanner.GenerateUpgradePlan(c.ctx, &UpgradePlanRequest{
			Cluster: c.cluster, Extension: name,
			FromControlPlaneKubernetesVersion: f.version, FromWorkersKubernetesVersion: minWorkers, ToKubernetesVersion: want,
		})
		if err != nil {
			return fmt.Errorf("failed to get the upgrade plan from %s: %w", name, err)
		}
	case len(class.Spec.KubernetesVersions) > 0:
		if cpPlan, err = upgradePlanFromVersions(class.Spec.KubernetesVersions, want, f.version); err != nil {
			return err
		}
	default:
		// Without a plan from the class, the version moves one minor at a time, as admission says.
		if err := c.checkVersionChange(f.version, want); err != nil {
			return err
		}
		if cpPlan, err = upgradePlanOneMinor(want, f.version); err != nil {
			return err
		}
	}
	if workersPlan, err = defaultAndValidateUpgradePlans(want, f.version, minWorkers, cpPlan, workersPlan); err != nil {
		return err
	}
	up.ControlPlanePlan = cpPlan
	if len(workers) > 0 {
		up.WorkersPlan = workersPlan
	}
	return nil
}

// currentWorkerVersions are the versions of the current MachineDeployments and MachinePools, each kind
// by name.
func (c *computation) currentWorkerVersions() []workerAt {
	mds, mps := currentWorkers(c.cur)
	var out []workerAt
	add := func(kind string, ws []currentWorker) {
		var some []workerAt
		for _, w := range ws {
			name, version, _ := w.versionFacts()
			some = append(some, workerAt{kind: kind, name: name, version: version})
		}
		slices.SortFunc(some, func(a, b workerAt) int { return strings.Compare(a.name, b.name) })
		out = append(out, some...)
	}
	add("MachineDeployment", mds)
	add("MachinePool", mps)
	return out
}

// controlPlaneVersion is the version of the desired control plane: the next step of the upgrade plan
// once the control plane may take it, else the version it has (upstream's computeControlPlaneVersion).
// The control plane takes a step when it runs its current version and is neither provisioning nor
// upgrading; the hooks of the previous step have let it go (AfterControlPlaneUpgrade,
// BeforeWorkersUpgrade, AfterWorkersUpgrade); no MachineDeployment or MachinePool upgrades and none must
// take the control plane's version first (the workers' plan starts with it); and BeforeClusterUpgrade
// (once per upgrade) and BeforeControlPlaneUpgrade (at every step) let it. While it waits, the control
// plane is held: no other change of the topology reaches it before it takes the version.
func (c *computation) controlPlaneVersion() (string, error) {
	want := c.topology.Version
	up := &c.desired.Upgrade
	if c.cur.ControlPlane.Object == nil {
		return want, nil
	}
	f, err := readControlPlane(c.cur.ControlPlane.Object)
	if err != nil {
		return "", err
	}
	c.cpVersion = f.version
	up.ControlPlaneProvisioning = f.provisioning
	up.ControlPlaneUpgrading = f.upgrading
	up.ControlPlaneScaling = f.scaling
	up.ControlPlanePendingUpgrade = f.version != want
	if f.provisioning || f.upgrading {
		return f.version, nil
	}
	// The previous step ends with AfterControlPlaneUpgrade; BeforeWorkersUpgrade opens the workers' step.
	if !c.afterControlPlaneUpgrade(f.version) || !c.beforeWorkersUpgrade(f.version) {
		return f.version, nil
	}
	if len(up.WorkersPlan) > 0 && up.WorkersPlan[0] == f.version {
		// The workers take the control plane's version before it goes on (version skew).
		up.ControlPlaneWaitingForWorkers = true
		if up.ControlPlanePendingUpgrade {
			up.ControlPlaneWaitingFor = c.waitingFor(f.version)
		}
		return f.version, nil
	}
	if len(up.MachineDeploymentsUpgrading) > 0 || len(up.MachinePoolsUpgrading) > 0 {
		if up.ControlPlanePendingUpgrade {
			up.ControlPlaneWaitingFor = c.waitingFor(f.version)
		}
		return f.version, nil
	}
	if !c.afterWorkersUpgrade(f.version) || !up.ControlPlanePendingUpgrade {
		return f.version, nil
	}
	if !c.beforeClusterUpgrade(f.version, want) {
		return f.version, nil
	}
	if len(up.ControlPlanePlan) == 0 {
		return "", errors.New("cannot compute the control plane version if the control plane is pending upgrade and the upgrade plan is not set")
	}
	next := up.ControlPlanePlan[0]
	if !c.beforeControlPlaneUpgrade(f.version, next) {
		return f.version, nil
	}
	up.ControlPlanePendingUpgrade = false
	up.ControlPlaneStartingUpgrade = true
	return next, nil
}

// waitingFor names the topology MachineDeployments and MachinePools that do not run version or are
// upgrading, for the message of a control plane that waits for them.
func (c *computation) waitingFor(version string) string {
	behind := workersWhere(c.cur, func(_, have string, upgrading bool) bool { return upgrading || have != version })
	if len(behind) == 0 {
		return ""
	}
	return fmt.Sprintf("%s not on version %s yet or still upgrading", strings.Join(behind, ", "), version)
}

// workersWhere names the current MachineDeployments and MachinePools for which keep holds, as
// "MachineDeployment(s) a, b" and "MachinePool(s) c".
func workersWhere(cur *Current, keep func(name, version string, upgrading bool) bool) []string {
	pick := func(ws []currentWorker) []string {
		var names []string
		for _, w := range ws {
			if name, version, upgrading := w.versionFacts(); keep(name, version, upgrading) {
				names = append(names, name)
			}
		}
		slices.Sort(names)
		return names
	}
	mds, mps := currentWorkers(cur)
	var out []string
	if names := pick(mds); len(names) > 0 {
		out = append(out, "MachineDeployment(s) "+strings.Join(names, ", "))
	}
	if names := pick(mps); len(names) > 0 {
		out = append(out, "MachinePool(s) "+strings.Join(names, ", "))
	}
	return out
}

// currentWorkers are the current MachineDeployments and MachinePools of the topology.
func currentWorkers(cur *Current) (mds, mps []currentWorker) {
	for _, md := range cur.MachineDeployments {
		if md.exists() {
			mds = append(mds, md)
		}
	}
	for _, mp := range cur.MachinePools {
		if mp.exists() {
			mps = append(mps, mp)
		}
	}
	return mds, mps
}

func (c *computation) upgradeConcurrency() int {
	if v, ok := c.cluster.Annotations[UpgradeConcurrencyAnnotation]; ok {
		if n, err := strconv.Atoi(v); err == nil && n > 0 {
			return n
		}
	}
	return 1
}

// workerVersion decides the version of a desired MachineDeployment or MachinePool: the version it picks
// up now, whether it is held (waits for an upgrade: nothing else of it changes meanwhile), or that it
// waits to be created.
type workerVersion struct {
	version string
	create  bool
	held    bool
}

// workerKind is what the upgrade sequence tracks for MachineDeployments or MachinePools.
type workerKind struct {
	pendingCreate, pendingUpgrade, deferred, upgrading *[]string
	// deferredByAnnotations reports whether the topology entry of name holds its upgrade.
	deferredByAnnotations func(name string) bool
}

func (c *computation) mdKind() workerKind {
	up := &c.desired.Upgrade
	return workerKind{&up.MachineDeploymentsPendingCreate, &up.MachineDeploymentsPendingUpgrade, &up.MachineDeploymentsDeferred,
		&up.MachineDeploymentsUpgrading, c.mdDeferred}
}

func (c *computation) mpKind() workerKind {
	up := &c.desired.Upgrade
	return workerKind{&up.MachinePoolsPendingCreate, &up.MachinePoolsPendingUpgrade, &up.MachinePoolsDeferred,
		&up.MachinePoolsUpgrading, c.mpDeferred}
}

// currentWorker is a current MachineDeployment or MachinePool, as the upgrade sequence reads it.
type currentWorker interface {
	// versionFacts returns the object's name, version ("" when unset) and whether it upgrades.
	versionFacts() (name, version string, upgrading bool)
}

// workerState is the state of a MachineDeployment or MachinePool.
type workerState interface {
	*MachineDeploymentState | *MachinePoolState
	currentWorker
	// exists reports whether the state has its object: a current state may be a leftover without it.
	exists() bool
}

// currentState returns the current state of the topology's worker name, and the same as the upgrade
// sequence reads it; nil for both when there is none or only a leftover without its object.
func currentState[S workerState](states map[string]S, name string) (S, currentWorker) {
	s := states[name]
	if !s.exists() {
		var none S
		return none, nil
	}
	return s, s
}

func (s *MachineDeploymentState) exists() bool { return s != nil && s.Object != nil }

func (s *MachinePoolState) exists() bool { return s != nil && s.Object != nil }

func (s *MachineDeploymentState) versionFacts() (string, string, bool) {
	v := ""
	if s.Object.Spec.Template.Spec.Version != nil {
		v = *s.Object.Spec.Template.Spec.Version
	}
	return s.Object.Name, v, s.Upgrading
}

func (s *MachinePoolState) versionFacts() (string, string, bool) {
	v := ""
	if s.Object.Spec.Template.Spec.Version != nil {
		v = *s.Object.Spec.Template.Spec.Version
	}
	return s.Object.Name, v, s.Upgrading
}

// workerVersion is the version of a MachineDeployment or MachinePool of the topology (topologyName),
// whose current state is current (nil: to be created), as upstream's computeMachineDeploymentVersion.
// A worker behind spec.topology.version takes the next step of the workers' plan once the control plane
// runs it and is stable (or waits for the workers), in turn (upgrade concurrency), unless deferred or held
// by a hook (AfterControlPlaneUpgrade, BeforeWorkersUpgrade); a worker that runs the first step already
// waits for the control plane's next one.
func (c *computation) workerVersion(k workerKind, topologyName string, current currentWorker) workerVersion {
	want := c.topology.Version
	up := &c.desired.Upgrade
	if current == nil {
		if !c.controlPlaneInitialized() || !up.controlPlaneStable() || c.hookHoldsWorkers() {
			*k.pendingCreate = append(*k.pendingCreate, topologyName)
			return workerVersion{}
		}
		return workerVersion{version: want, create: true}
	}
	objectName, have, upgrading := current.versionFacts()
	if have == want {
		return workerVersion{version: have, create: true}
	}
	// The worker waits for an upgrade: held until it takes a version.
	hold := func() workerVersion {
		if !upgrading {
			*k.pendingUpgrade = append(*k.pendingUpgrade, objectName)
		}
		return workerVersion{version: have, create: true, held: true}
	}
	target := want
	if len(up.WorkersPlan) > 0 {
		target = up.WorkersPlan[0]
	}
	switch {
	case k.deferredByAnnotations(topologyName):
		*k.deferred = append(*k.deferred, objectName)
		*k.pendingUpgrade = append(*k.pendingUpgrade, objectName)
		return workerVersion{version: have, create: true, held: true}
	case have == target,
		c.hookHoldsWorkers(),
		len(*k.upgrading) >= c.upgradeConcurrency(),
		!up.controlPlaneSettled(),
		up.ControlPlanePendingUpgrade && !up.ControlPlaneWaitingForWorkers:
		return hold()
	}
	if !upgrading {
		*k.upgrading = append(*k.upgrading, objectName)
	}
	return workerVersion{version: target, create: true}
}

// controlPlaneInitialized: new MachineDeployments are created only once the control plane accepts
// requests, which the Cluster's ControlPlaneInitialized condition records.
func (c *computation) controlPlaneInitialized() bool {
	if c.cur.ControlPlane.Object == nil {
		return false
	}
	if c.cluster.Status.ControlPlaneReady {
		return true
	}
	for _, cond := range c.cluster.Status.Conditions {
		if cond.Type == clusterv1.ControlPlaneInitializedCondition && cond.Status == "True" {
			return true
		}
	}
	initialized, _, _ := unstructured.NestedBool(c.cur.ControlPlane.Object.Object, "status", "initialized")
	return initialized
}

// deferred reports whether a topology entry (with annotations) or one before it in its list (the
// annotations of the entries in order) holds its upgrade: defer-upgrade on itself, hold-upgrade-sequence
// on itself or an earlier one.
func deferred(annotations []map[string]string, self int) bool {
	if _, ok := annotations[self][clusterv1.ClusterTopologyDeferUpgradeAnnotation]; ok {
		return true
	}
	for i := 0; i <= self; i++ {
		if _, ok := annotations[i][clusterv1.ClusterTopologyHoldUpgradeSequenceAnnotation]; ok {
			return true
		}
	}
	return false
}

func (c *computation) mdDeferred(name string) bool {
	var annotations []map[string]string
	self := -1
	for i, md := range c.topology.Workers.MachineDeployments {
		annotations = append(annotations, md.Metadata.Annotations)
		if md.Name == name {
			self = i
		}
	}
	return self >= 0 && deferred(annotations, self)
}

func (c *computation) mpDeferred(name string) bool {
	var annotations []map[string]string
	self := -1
	for i, mp := range c.topology.Workers.MachinePools {
		annotations = append(annotations, mp.Metadata.Annotations)
		if mp.Name == name {
			self = i
		}
	}
	return self >= 0 && deferred(annotations, self)
}

// checkVersionChange refuses what admission refuses, so that nothing depends on it: a version lower than
// the control plane's, or, for a class without an upgrade plan of its own (kubernetesVersions or an
// upgrade plan extension), one that skips a minor version; the error names what still runs the control
// plane's version.
func (c *computation) checkVersionChange(current, want string) error {
	cv, err1 := semver.ParseTolerant(current)
	w, err2 := semver.ParseTolerant(want)
	if err1 != nil || err2 != nil || current == want {
		return nil
	}
	if w.LT(cv) {
		return fmt.Errorf("spec.topology.version %s is lower than the control plane's version %s: versions cannot be decreased", want, current)
	}
	if w.Major != cv.Major || w.Minor > cv.Minor+1 {
		on := []string{fmt.Sprintf("the control plane %s %s", c.cur.ControlPlane.Object.GetKind(), c.cur.ControlPlane.Object.GetName())}
		on = append(on, c.workersOn(current)...)
		return fmt.Errorf("spec.topology.version %s skips a minor version: %s still run %s; set v%d.%d.x first and let it roll out",
			want, strings.Join(on, ", "), current, cv.Major, cv.Minor+1)
	}
	return nil
}

// workersOn names the topology MachineDeployments and MachinePools whose version is version or older.
func (c *computation) workersOn(version string) []string {
	v, err := semver.ParseTolerant(version)
	if err != nil {
		return nil
	}
	return workersWhere(c.cur, func(_, have string, _ bool) bool {
		h, err := semver.ParseTolerant(have)
		return err == nil && h.LTE(v)
	})
}
