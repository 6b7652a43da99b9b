package conformance

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/conditions"
	"github.com/capstan-dev/capstan/internal/contract"
)

// managedByKit is the value of the managed-by annotation on the externally managed InfraCluster.
const managedByKit = "capstan-conformance-kit"

// scenario is the behavioural part of a Check. In a namespace of its own, the kit plays Cluster API's core
// (and the bootstrap and control plane providers) around the provider's objects, the way the Cluster and
// Machine controllers would, and records what the provider does:
//
//  1. A Cluster and its InfraCluster; the kit sets the Cluster owner reference, waits for the InfraCluster
//     to be provisioned, then copies the endpoint, failure domains and readiness to the Cluster (and marks
//     the control plane initialized).
//  2. A Machine with a bootstrap data Secret and its InfraMachine; the kit sets the Machine owner reference.
//  3. InfraClusters the provider must leave alone: one with no Cluster owner, one externally managed, one
//     of a paused Cluster, one with the paused annotation; and an InfraMachine with no Machine owner. The
//     kit waits for the InfraMachine of step 2 to be provisioned (so the provider is known to be working)
//     and for Options.Quiet, then reads them again.
//  4. It lifts the pauses and waits for both paused InfraClusters to be provisioned.
//  5. It lists every object in the namespace, for the owner reference and move rules.
//  6. It pauses the first Cluster, deletes its InfraMachine and InfraCluster, waits Options.Quiet,
//     unpauses, and waits for them to go away.
type scenario struct {
	in   *input
	opts Options
}

func (s scenario) run(ctx context.Context) *run {
	r := &run{timeout: s.opts.Timeout}
	r.clusterContract, _ = s.in.contractOf(s.in.p.InfraCluster.GroupKind())
	r.machineContract, _ = s.in.contractOf(s.in.p.InfraMachine.GroupKind())
	k, err := newKit(ctx, s.in.p, s.opts)
	if err != nil {
		r.stopped = err.Error()
		return r
	}
	stop := k.startProvider(ctx)
	if err := s.steps(ctx, k, r); err != nil {
		if exited := k.exited(); exited != nil {
			r.providerErr = exited
		} else {
			r.stopped = err.Error()
		}
	}
	k.cleanup(ctx)
	stop()
	if s.in.p.StartScoped != nil && r.providerErr == nil && r.cluster != nil && r.cluster.provisioned != nil {
		s.tenancy(ctx, r)
	}
	return r
}

// hasMachine says whether the scenario takes an InfraMachine through its life.
func (s scenario) hasMachine() bool {
	return s.in.p.InfraMachine.Kind != "" && s.in.p.NewInfraMachine != nil
}

func (s scenario) newInfraCluster(k *kit, name string) *unstructured.Unstructured {
	obj := s.in.p.NewInfraCluster(k.ns, name)
	obj.SetNamespace(k.ns)
	obj.SetName(name)
	return obj
}

func (s scenario) newInfraMachine(k *kit, name string) *unstructured.Unstructured {
	obj := s.in.p.NewInfraMachine(k.ns, name)
	obj.SetNamespace(k.ns)
	obj.SetName(name)
	return obj
}

// newCluster returns a Cluster referencing an InfraCluster.
func (s scenario) newCluster(name string, infra *unstructured.Unstructured, paused bool) *clusterv1.Cluster {
	c := &clusterv1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: clusterv1.ClusterSpec{
			Paused: paused,
			InfrastructureRef: &corev1.ObjectReference{
				APIVersion: infra.GetAPIVersion(), Kind: infra.GetKind(), Name: infra.GetName(), Namespace: infra.GetNamespace(),
			},
		},
	}
	if s.in.p.ControlPlaneEndpoint != nil {
		c.Spec.ControlPlaneEndpoint = *s.in.p.ControlPlaneEndpoint
	}
	return c
}

// newMachine returns a Machine of a Cluster referencing an InfraMachine, with its bootstrap data ready.
func newMachine(name string, cluster *clusterv1.Cluster, infra *unstructured.Unstructured, dataSecret, failureDomain string) *clusterv1.Machine {
	m := &clusterv1.Machine{
		ObjectMeta: metav1.ObjectMeta{
			Name:            name,
			Labels:          map[string]string{clusterv1.ClusterNameLabel: cluster.Name},
			OwnerReferences: []metav1.OwnerReference{ownerRef("Cluster", cluster)},
		},
		Spec: clusterv1.MachineSpec{
			ClusterName: cluster.Name,
			Bootstrap:   clusterv1.Bootstrap{DataSecretName: ptr.To(dataSecret)},
			InfrastructureRef: corev1.ObjectReference{
				APIVersion: infra.GetAPIVersion(), Kind: infra.GetKind(), Name: infra.GetName(), Namespace: infra.GetNamespace(),
			},
			Version: ptr.To("v1.31.0"),
		},
	}
	if failureDomain != "" {
		m.Spec.FailureDomain = ptr.To(failureDomain)
	}
	return m
}

func (s scenario) steps(ctx context.Context, k *kit, r *run) error {
	cluster, ic, err := s.provisionCluster(ctx, k, r)
	if err != nil || cluster == nil {
		return err
	}
	var machine *clusterv1.Machine
	var im *unstructured.Unstructured
	if s.hasMachine() {
		if machine, im, err = s.createMachine(ctx, k, r, cluster, ic); err != nil {
			return err
		}
	}
	watchedSince := time.Now()
	if err := s.createWatched(ctx, k, r, cluster); err != nil {
		return err
	}
	if s.hasMachine() {
		if err := s.provisionMachine(ctx, k, r, machine, im); err != nil {
			return err
		}
	}
	if err := k.sleep(ctx, time.Until(watchedSince.Add(s.opts.Quiet))); err != nil {
		return err
	}
	if err := s.readWatched(ctx, k, r); err != nil {
		return err
	}
	if err := s.resume(ctx, k, r); err != nil {
		return err
	}
	k.opts.Logf("Listing the objects of namespace %s", k.ns)
	if r.objects, err = k.objects(ctx); err != nil {
		return err
	}
	if r.objects == nil {
		r.objects = []object{}
	}
	if err := s.move(ctx, k, r, cluster, ic, im); err != nil {
		return err
	}
	return s.deleteWhilePaused(ctx, k, r, cluster, ic, im)
}

// provisionCluster creates the first Cluster and its InfraCluster, sets the owner reference and waits for
// the InfraCluster to be provisioned; then it does the Cluster controller's part. It returns a nil Cluster
// when the InfraCluster was not provisioned.
func (s scenario) provisionCluster(ctx context.Context, k *kit, r *run) (*clusterv1.Cluster, *unstructured.Unstructured, error) {
	ic := s.newInfraCluster(k, "main")
	cluster := s.newCluster("main", ic, false)
	endpoint := s.in.p.ControlPlaneEndpoint
	if endpoint != nil {
		// The endpoint comes later, as from a control plane provider: the provider must wait for it.
		cluster.Spec.ControlPlaneEndpoint = clusterv1.APIEndpoint{}
	}
	if err := k.create(ctx, ic); err != nil {
		return nil, nil, err
	}
	if err := k.create(ctx, cluster); err != nil {
		return nil, nil, err
	}
	if err := k.own(ctx, ic, "Cluster", cluster, cluster.Name); err != nil {
		return nil, nil, err
	}
	r.cluster = &lifecycle{}
	if endpoint != nil {
		r.endpoint = &endpointFacts{}
		k.opts.Logf("Watching %s %s for %s while its Cluster has no control plane endpoint", ic.GetKind(), ic.GetName(), s.opts.Quiet)
		if _, err := k.until(ctx, s.opts.Quiet, func(ctx context.Context) (bool, error) {
			obj, err := k.read(ctx, ic)
			if err != nil || obj == nil {
				return false, err
			}
			r.endpoint.before = obj
			provisioned, err := contract.Provisioned(obj, r.clusterContract)
			r.endpoint.provisionedEarly = r.endpoint.provisionedEarly || provisioned
			return false, err
		}); err != nil {
			return nil, nil, err
		}
		k.opts.Logf("Setting the control plane endpoint %s of Cluster %s", endpoint, cluster.Name)
		if err := k.patch(ctx, cluster, false, func() { cluster.Spec.ControlPlaneEndpoint = *endpoint }); err != nil {
			return nil, nil, err
		}
	}
	obj, ok, err := k.waitProvisioned(ctx, ic, r.clusterContract)
	if err != nil {
		return nil, nil, err
	}
	if !ok {
		r.cluster.last = obj
		r.stopped = fmt.Sprintf("the InfraCluster was not provisioned within %s", s.opts.Timeout)
		return nil, nil, nil
	}
	r.cluster.provisioned = obj
	if err := s.clusterControllerPart(ctx, k, cluster, obj); err != nil {
		return nil, nil, err
	}
	return cluster, obj, nil
}

// clusterControllerPart does what Cluster API's Cluster controller does once an InfraCluster is
// provisioned, and plays an initialized control plane: endpoint, failure domains, readiness, conditions.
func (s scenario) clusterControllerPart(ctx context.Context, k *kit, cluster *clusterv1.Cluster, ic *unstructured.Unstructured) error {
	ep, err := contract.ControlPlaneEndpoint(ic)
	if err != nil {
		return err
	}
	if ep.IsValid() && !cluster.Spec.ControlPlaneEndpoint.IsValid() {
		if err := k.patch(ctx, cluster, false, func() { cluster.Spec.ControlPlaneEndpoint = ep }); err != nil {
			return err
		}
	}
	domains, err := contract.FailureDomains(ic)
	if err != nil {
		return err
	}
	k.opts.Logf("Marking Cluster %s infrastructure ready and control plane initialized", cluster.Name)
	if err := k.patch(ctx, cluster, true, func() {
		cluster.Status.InfrastructureReady = true
		cluster.Status.ControlPlaneReady = true
		cluster.Status.FailureDomains = domains
		cluster.Status.Phase = string(clusterv1.ClusterPhaseProvisioned)
		for _, t := range []string{"InfrastructureReady", "ControlPlaneInitialized"} {
			conditions.MarkTrue(cluster, clusterv1.ConditionType(t))
			conditions.SetV1Beta2(cluster, metav1.Condition{Type: t, Status: metav1.ConditionTrue, Reason: t})
		}
	}); err != nil {
		return err
	}
	if s.in.p.InfrastructureReady != nil {
		if err := s.in.p.InfrastructureReady(ctx, othersClient{Client: k.c, k: k}, cluster); err != nil {
			return fmt.Errorf("Provider.InfrastructureReady: %w", err)
		}
	}
	return nil
}

// createMachine creates the bootstrap data Secret, the InfraMachine and the Machine, and sets the Machine
// owner reference as the Machine controller would.
func (s scenario) createMachine(ctx context.Context, k *kit, r *run, cluster *clusterv1.Cluster, ic *unstructured.Unstructured) (*clusterv1.Machine, *unstructured.Unstructured, error) {
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "main-bootstrap", Labels: map[string]string{clusterv1.ClusterNameLabel: cluster.Name}},
		Type:       "cluster.x-k8s.io/secret",
		Data:       map[string][]byte{"value": []byte("#cloud-config\n"), "format": []byte("cloud-config")},
	}
	if err := k.create(ctx, secret); err != nil {
		return nil, nil, err
	}
	domains, _ := contract.FailureDomains(ic)
	if names := sortedKeys(domains); len(names) > 0 {
		r.machineDomain = names[0]
	}
	im := s.newInfraMachine(k, "main")
	r.template = s.fromTemplate(ctx, k, im)
	machine := newMachine("main", cluster, im, secret.Name, r.machineDomain)
	if err := k.create(ctx, im); err != nil {
		return nil, nil, err
	}
	if err := k.create(ctx, machine); err != nil {
		return nil, nil, err
	}
	if err := k.patch(ctx, machine, true, func() { machine.Status.BootstrapReady = true }); err != nil {
		return nil, nil, err
	}
	if err := k.own(ctx, im, "Machine", machine, cluster.Name); err != nil {
		return nil, nil, err
	}
	r.machine = &lifecycle{}
	return machine, im, nil
}

// fromTemplate creates an InfraMachineTemplate with the InfraMachine's spec and the kit's label and
// annotation in spec.template.metadata, and turns the InfraMachine into what Cluster API's core clones from
// it: the template's labels and annotations, and the cloned-from annotations.
func (s scenario) fromTemplate(ctx context.Context, k *kit, im *unstructured.Unstructured) *templateFacts {
	gvk := im.GroupVersionKind()
	gvk.Kind += clusterv1.TemplateSuffix
	if _, ok := s.in.crds[gvk.GroupKind()]; !ok {
		return &templateFacts{notCreated: "the provider has no " + gvk.Kind}
	}
	t := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"template": map[string]any{
		"metadata": map[string]any{
			"labels":      map[string]any{templateLabel: templateValue},
			"annotations": map[string]any{templateAnnotation: templateValue},
		},
		"spec": runtime.DeepCopyJSONValue(im.Object["spec"]),
	}}}}
	if t.Object["spec"].(map[string]any)["template"].(map[string]any)["spec"] == nil {
		t.Object["spec"].(map[string]any)["template"].(map[string]any)["spec"] = map[string]any{}
	}
	t.SetGroupVersionKind(gvk)
	t.SetName(im.GetName())
	if err := k.create(ctx, t); err != nil {
		return &templateFacts{notCreated: err.Error()}
	}
	back, err := k.read(ctx, t)
	if err != nil || back == nil {
		return &templateFacts{notCreated: fmt.Sprintf("reading %s %s back: %v", gvk.Kind, t.GetName(), err)}
	}
	labels, annotations := im.GetLabels(), im.GetAnnotations()
	if labels == nil {
		labels = map[string]string{}
	}
	if annotations == nil {
		annotations = map[string]string{}
	}
	fromTemplate, _, _ := unstructured.NestedStringMap(back.Object, "spec", "template", "metadata", "labels")
	maps.Copy(labels, fromTemplate)
	fromTemplate, _, _ = unstructured.NestedStringMap(back.Object, "spec", "template", "metadata", "annotations")
	maps.Copy(annotations, fromTemplate)
	annotations[clusterv1.TemplateClonedFromNameAnnotation] = t.GetName()
	annotations[clusterv1.TemplateClonedFromGroupKindAnnotation] = gvk.GroupKind().String()
	im.SetLabels(labels)
	im.SetAnnotations(annotations)
	return &templateFacts{readBack: back}
}

// provisionMachine waits for the InfraMachine to be provisioned, then does the Machine controller's part.
func (s scenario) provisionMachine(ctx context.Context, k *kit, r *run, machine *clusterv1.Machine, im *unstructured.Unstructured) error {
	obj, ok, err := k.waitProvisioned(ctx, im, r.machineContract)
	if err != nil {
		return err
	}
	if !ok {
		r.machine.last = obj
		return nil
	}
	r.machine.provisioned = obj
	id, _ := contract.ProviderID(obj)
	addresses, _ := contract.Addresses(obj)
	if id != "" {
		if err := k.patch(ctx, machine, false, func() { machine.Spec.ProviderID = ptr.To(id) }); err != nil {
			return err
		}
	}
	return k.patch(ctx, machine, true, func() {
		machine.Status.InfrastructureReady = true
		machine.Status.Addresses = addresses
	})
}

// createWatched creates the objects the provider must leave alone.
func (s scenario) createWatched(ctx context.Context, k *kit, r *run, main *clusterv1.Cluster) error {
	// An InfraCluster referenced by a Cluster that has not set the owner reference yet.
	orphan := s.newInfraCluster(k, "orphan")
	if err := k.create(ctx, orphan); err != nil {
		return err
	}
	r.orphan = &watched{before: orphan.DeepCopy()}
	if err := k.create(ctx, s.newCluster("orphan", orphan, false)); err != nil {
		return err
	}

	owned := func(name string, paused bool, annotations, extraLabels map[string]string) (*unstructured.Unstructured, error) {
		ic := s.newInfraCluster(k, name)
		cluster := s.newCluster(name, ic, paused)
		if err := k.create(ctx, cluster); err != nil {
			return nil, err
		}
		ic.SetOwnerReferences([]metav1.OwnerReference{ownerRef("Cluster", cluster)})
		labels := ic.GetLabels()
		if labels == nil {
			labels = map[string]string{}
		}
		labels[clusterv1.ClusterNameLabel] = cluster.Name
		maps.Copy(labels, extraLabels)
		ic.SetLabels(labels)
		all := ic.GetAnnotations()
		if all == nil {
			all = map[string]string{}
		}
		for key, value := range annotations {
			all[key] = value
		}
		ic.SetAnnotations(all)
		if err := k.create(ctx, ic); err != nil {
			return nil, err
		}
		return ic.DeepCopy(), nil
	}
	for _, w := range []struct {
		name        string
		paused      bool
		annotations map[string]string
		labels      map[string]string
		facts       **watched
	}{
		{"managed", false, map[string]string{clusterv1.ManagedByAnnotation: managedByKit}, nil, &r.managed},
		{"managed-label", false, nil, map[string]string{clusterv1.ManagedByAnnotation: managedByKit}, &r.managedLabel},
		{"paused", true, nil, nil, &r.paused},
		{"annotated", false, map[string]string{clusterv1.PausedAnnotation: ""}, nil, &r.annotated},
	} {
		ic, err := owned(w.name, w.paused, w.annotations, w.labels)
		if err != nil {
			return err
		}
		*w.facts = &watched{before: ic}
	}

	if s.hasMachine() {
		im := s.newInfraMachine(k, "orphan")
		if err := k.create(ctx, im); err != nil {
			return err
		}
		r.orphanMachine = &watched{before: im.DeepCopy()}
		if err := k.create(ctx, newMachine("orphan", main, im, "main-bootstrap", "")); err != nil {
			return err
		}
	}
	return nil
}

// readWatched reads the watched objects again.
func (s scenario) readWatched(ctx context.Context, k *kit, r *run) error {
	for _, w := range []*watched{r.orphan, r.managed, r.managedLabel, r.paused, r.annotated, r.orphanMachine} {
		if w == nil {
			continue
		}
		after, err := k.read(ctx, w.before)
		if err != nil {
			return err
		}
		w.after = after
	}
	return nil
}

// resume unpauses the paused Cluster, removes the paused annotation and waits for both InfraClusters to be
// provisioned and no longer report Paused True.
func (s scenario) resume(ctx context.Context, k *kit, r *run) error {
	cluster := &clusterv1.Cluster{}
	if err := k.c.Get(ctx, client.ObjectKey{Namespace: k.ns, Name: "paused"}, cluster); err != nil {
		return fmt.Errorf("reading Cluster paused: %w", err)
	}
	k.opts.Logf("Unpausing Cluster paused")
	if err := k.patch(ctx, cluster, false, func() { cluster.Spec.Paused = false }); err != nil {
		return err
	}
	annotated, err := k.read(ctx, r.annotated.before)
	if err != nil || annotated == nil {
		return fmt.Errorf("reading InfraCluster annotated: %w", err)
	}
	k.opts.Logf("Removing the paused annotation of %s annotated", annotated.GetKind())
	if err := k.patch(ctx, annotated, false, func() {
		all := annotated.GetAnnotations()
		delete(all, clusterv1.PausedAnnotation)
		annotated.SetAnnotations(all)
	}); err != nil {
		return err
	}
	r.paused.resumeChecked, r.annotated.resumeChecked = true, true
	_, err = k.until(ctx, s.opts.Timeout, func(ctx context.Context) (bool, error) {
		done := true
		for _, w := range []*watched{r.paused, r.annotated} {
			obj, err := k.read(ctx, w.before)
			if err != nil || obj == nil {
				return false, err
			}
			provisioned, err := contract.Provisioned(obj, r.clusterContract)
			if err != nil {
				return false, err
			}
			c, _ := contract.GetCondition(obj, clusterv1.PausedV1Beta2Condition)
			if provisioned && (c == nil || c.Status != corev1.ConditionTrue) {
				w.resumed = obj
			} else {
				w.resumed, done = nil, false
			}
		}
		return done, nil
	})
	return err
}

// moveTarget is an object the move and deletion steps take through their life, with its facts.
type moveTarget struct {
	obj   *unstructured.Unstructured
	facts *lifecycle
}

// targets returns the provisioned InfraCluster and, when provisioned, the InfraMachine.
func targets(r *run, ic, im *unstructured.Unstructured) []moveTarget {
	out := []moveTarget{{ic, r.cluster}}
	if im != nil && r.machine != nil && r.machine.provisioned != nil {
		out = append(out, moveTarget{im, r.machine})
	}
	return out
}

// move does to the provisioned objects what clusterctl move does: it pauses their Cluster, and they arrive
// on the target without status (the kit removes it); then it unpauses the Cluster and waits for the
// provider to rebuild their status (provisioned again).
func (s scenario) move(ctx context.Context, k *kit, r *run, cluster *clusterv1.Cluster, ic, im *unstructured.Unstructured) error {
	ts := targets(r, ic, im)
	k.opts.Logf("Pausing Cluster %s to move it", cluster.Name)
	if err := k.patch(ctx, cluster, false, func() { cluster.Spec.Paused = true }); err != nil {
		return err
	}
	for _, t := range ts {
		k.opts.Logf("Removing the status of %s %s, as clusterctl move does not restore it", t.obj.GetKind(), t.obj.GetName())
		// The provider may still be reporting the pause in the status: retry on conflicts.
		if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			obj, err := k.read(ctx, t.obj)
			if err != nil || obj == nil {
				return fmt.Errorf("reading %s %s: %w", t.obj.GetKind(), t.obj.GetName(), errors.Join(err, errors.New("not found")))
			}
			unstructured.RemoveNestedField(obj.Object, "status")
			return k.c.Status().Update(ctx, obj)
		}); err != nil {
			return fmt.Errorf("removing the status of %s %s: %w", t.obj.GetKind(), t.obj.GetName(), err)
		}
		t.facts.moved = &moved{}
	}
	k.opts.Logf("Unpausing Cluster %s once moved", cluster.Name)
	if err := k.patch(ctx, cluster, false, func() { cluster.Spec.Paused = false }); err != nil {
		return err
	}
	_, err := k.until(ctx, s.opts.Timeout, func(ctx context.Context) (bool, error) {
		all := true
		for _, t := range ts {
			obj, err := k.read(ctx, t.obj)
			if err != nil || obj == nil {
				return false, err
			}
			c := r.clusterContract
			if t.facts == r.machine {
				c = r.machineContract
			}
			provisioned, err := contract.Provisioned(obj, c)
			if err != nil {
				return false, err
			}
			t.facts.moved.last, t.facts.moved.rebuilt = obj, provisioned
			all = all && provisioned
		}
		return all, nil
	})
	return err
}

// deleteWhilePaused pauses the first Cluster, deletes its InfraMachine and InfraCluster, checks they are
// still there after Options.Quiet, unpauses and waits for the provider to remove its finalizers. The kit
// holds the objects with a finalizer of its own meanwhile, to see their Ready condition once the provider
// is done; then it removes it and waits for them to go.
func (s scenario) deleteWhilePaused(ctx context.Context, k *kit, r *run, cluster *clusterv1.Cluster, ic, im *unstructured.Unstructured) error {
	ts := targets(r, ic, im)
	k.opts.Logf("Pausing Cluster %s", cluster.Name)
	if err := k.patch(ctx, cluster, false, func() { cluster.Spec.Paused = true }); err != nil {
		return err
	}
	// Give the provider Options.Quiet to report a Paused condition, when it reports one.
	if _, err := k.until(ctx, s.opts.Quiet, func(ctx context.Context) (bool, error) {
		all := true
		for _, t := range ts {
			obj, err := k.read(ctx, t.obj)
			if err != nil || obj == nil {
				return false, err
			}
			t.facts.paused = obj
			c, _ := contract.GetCondition(obj, clusterv1.PausedV1Beta2Condition)
			all = all && c != nil && c.Status == corev1.ConditionTrue
		}
		return all, nil
	}); err != nil {
		return err
	}
	for _, t := range slices.Backward(ts) {
		obj := t.facts.paused
		if len(userFinalizers(obj)) > 0 {
			k.opts.Logf("Holding %s %s with finalizer %s", obj.GetKind(), obj.GetName(), holdFinalizer)
			if err := k.patch(ctx, obj, false, func() { obj.SetFinalizers(append(obj.GetFinalizers(), holdFinalizer)) }); err != nil {
				return err
			}
			t.facts.held = true
		}
		k.opts.Logf("Deleting %s %s while its Cluster is paused", t.obj.GetKind(), t.obj.GetName())
		if err := k.c.Delete(ctx, t.obj); err != nil {
			return fmt.Errorf("deleting %s %s: %w", t.obj.GetKind(), t.obj.GetName(), err)
		}
		t.facts.deleted = true
	}
	if err := k.sleep(ctx, s.opts.Quiet); err != nil {
		return err
	}
	for _, t := range ts {
		obj, err := k.read(ctx, t.obj)
		if err != nil {
			return err
		}
		t.facts.whilePaused = obj
	}
	k.opts.Logf("Unpausing Cluster %s", cluster.Name)
	if err := k.patch(ctx, cluster, false, func() { cluster.Spec.Paused = false }); err != nil {
		return err
	}
	// Wait for the provider to remove its finalizers, the kit's holding the objects.
	if _, err := k.until(ctx, s.opts.Timeout, func(ctx context.Context) (bool, error) {
		all := true
		for _, t := range ts {
			obj, err := k.read(ctx, t.obj)
			if err != nil {
				return false, err
			}
			t.facts.remaining, t.facts.gone = obj, obj == nil
			if obj != nil && t.facts.held && len(userFinalizers(obj)) == 0 {
				t.facts.finalized = obj
			}
			all = all && (obj == nil || t.facts.finalized != nil)
		}
		return all, nil
	}); err != nil {
		return err
	}
	for _, t := range ts {
		obj := t.facts.remaining
		if obj == nil || !slices.Contains(obj.GetFinalizers(), holdFinalizer) {
			continue
		}
		k.opts.Logf("Releasing %s %s", obj.GetKind(), obj.GetName())
		if err := k.patch(ctx, obj, false, func() {
			obj.SetFinalizers(slices.DeleteFunc(obj.GetFinalizers(), func(f string) bool { return f == holdFinalizer }))
		}); err != nil && !apierrors.IsNotFound(err) {
			return err
		}
	}
	_, err := k.until(ctx, s.opts.Timeout, func(ctx context.Context) (bool, error) {
		all := true
		for _, t := range ts {
			obj, err := k.read(ctx, t.obj)
			if err != nil {
				return false, err
			}
			if obj != nil && t.facts.finalized == nil {
				t.facts.remaining = obj // still held by the provider: the deletion rule reports it
			}
			t.facts.gone = obj == nil
			// An object the provider did not finalize stays: the deletion rule reports it.
			all = all && (obj == nil || (t.facts.held && t.facts.finalized == nil))
		}
		return all, nil
	})
	return err
}

// othersClient is the client Provider.InfrastructureReady gets: what it creates stands for what other
// providers create, so it counts as the kit's (the owner reference rules judge only the provider's
// objects).
type othersClient struct {
	client.Client
	k *kit
}

func (c othersClient) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	if err := c.Client.Create(ctx, obj, opts...); err != nil {
		return err
	}
	c.k.byKit[string(obj.GetUID())] = true
	return nil
}
