package machinepool

import (
	"context"
	"errors"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/contract"
	"github.com/capstan-dev/capstan/internal/external"
	"github.com/capstan-dev/capstan/internal/labelformat"
	"github.com/capstan-dev/capstan/internal/patch"
	"github.com/capstan-dev/capstan/internal/reconciler"
	"github.com/capstan-dev/capstan/internal/rollout"
)

// scope holds a MachinePool, its Cluster and the facts the phases observed, from which the status is
// computed.
type scope struct {
	// cluster is nil only when the MachinePool is being deleted and its Cluster is gone.
	cluster *clusterv1.Cluster
	mp      *clusterv1.MachinePool

	bootstrap providerFacts
	infra     providerFacts

	// machines are the MachinePool Machines, when the InfraMachinePool creates InfraMachines
	// (machinesRead); they count the v1beta2 replicas.
	machines     []clusterv1.Machine
	machinesRead bool

	// nodes is what the Nodes of spec.providerIDList said, when they could be read.
	nodes *nodeFacts
	// connectionDown: the workload cluster could not be reached.
	connectionDown bool

	// deletingMessage says what a deleting MachinePool waits for.
	deletingMessage string
}

// providerFacts is what a phase observed of a provider object (bootstrap config or InfraMachinePool).
type providerFacts struct {
	obj *unstructured.Unstructured
	// ready is the provider's own readiness (dataSecretCreated / provisioned).
	ready bool
	// notFound is true when the reference points at nothing.
	notFound bool
	// problem says why the object cannot be read in a way the user must fix (another namespace, RBAC).
	problem string
	// failureReason and failureMessage are the provider's terminal failure (v1beta1 contract).
	failureReason, failureMessage string
	// replicas is status.replicas of an InfraMachinePool, when it reports it.
	replicas      int32
	replicasFound bool
}

// nodeFacts are the pool's Nodes.
type nodeFacts struct {
	refs             []corev1.ObjectReference
	ready, available int32
	// versions are the Nodes' kubelet versions, counted.
	versions []clusterv1.StatusVersion
}

// reconcileOwnerAndDefaults makes the Cluster an owner of the MachinePool and applies upstream's webhook
// default of spec.replicas.
func (r *Reconciler) reconcileOwnerAndDefaults(ctx context.Context, s *scope) (ctrl.Result, error) {
	mp := s.mp
	if !slices.ContainsFunc(mp.OwnerReferences, func(ref metav1.OwnerReference) bool {
		return reconciler.RefersTo(ref, clusterv1.GroupVersion.Group, "Cluster")
	}) {
		mp.OwnerReferences = append(mp.OwnerReferences, metav1.OwnerReference{
			APIVersion: clusterv1.GroupVersion.String(), Kind: "Cluster", Name: s.cluster.Name, UID: s.cluster.UID,
		})
	}
	rollout.DefaultSpecReplicas(ctx, &mp.Spec.Replicas, mp.Annotations, mp.Status.ObservedGeneration, mp.Status.Replicas)
	return ctrl.Result{}, nil
}

// reconcileBootstrap makes the MachinePool the controller of its bootstrap config and, once the config
// has created its data secret, copies the secret's name to spec.template.spec.bootstrap.dataSecretName.
// Without a config, a dataSecretName given by the user makes the bootstrap ready.
func (r *Reconciler) reconcileBootstrap(ctx context.Context, s *scope) (ctrl.Result, error) {
	log := ctrl.LoggerFrom(ctx)
	bootstrap := &s.mp.Spec.Template.Spec.Bootstrap
	if bootstrap.ConfigRef == nil {
		s.bootstrap.ready = bootstrap.DataSecretName != nil
		return ctrl.Result{}, nil
	}
	obj, info, res, err := r.ensureExternal(ctx, s, bootstrap.ConfigRef, &s.bootstrap)
	if obj == nil {
		return res, err
	}
	ready, err := contract.DataSecretCreated(obj, info.Contract)
	if err != nil {
		return ctrl.Result{}, err
	}
	s.bootstrap.ready = ready
	if !obj.GetDeletionTimestamp().IsZero() {
		return ctrl.Result{}, nil
	}
	if !ready {
		log.Info("Waiting for the bootstrap provider to create the data secret", obj.GetKind(), klog.KObj(obj))
		return ctrl.Result{}, nil
	}
	name, err := contract.DataSecretName(obj)
	if err != nil {
		return ctrl.Result{}, err
	}
	if name == "" {
		s.bootstrap.ready = false
		return ctrl.Result{}, fmt.Errorf("%s %s says its data secret is created but has no status.dataSecretName", obj.GetKind(), klog.KObj(obj))
	}
	if ptr.Deref(bootstrap.DataSecretName, "") != name {
		log.Info("Bootstrap provider created the data secret", obj.GetKind(), klog.KObj(obj), "Secret", klog.KRef(s.mp.Namespace, name))
		bootstrap.DataSecretName = &name
	}
	return ctrl.Result{}, nil
}

// reconcileInfrastructure makes the MachinePool the controller of its InfraMachinePool and copies what the
// InfraMachinePool reports: its readiness, spec.providerIDList and status.replicas.
func (r *Reconciler) reconcileInfrastructure(ctx context.Context, s *scope) (ctrl.Result, error) {
	log := ctrl.LoggerFrom(ctx)
	mp := s.mp
	obj, info, res, err := r.ensureExternal(ctx, s, &mp.Spec.Template.Spec.InfrastructureRef, &s.infra)
	if obj == nil {
		return res, err
	}
	if !obj.GetDeletionTimestamp().IsZero() {
		return ctrl.Result{}, nil
	}
	ready, err := contract.Provisioned(obj, info.Contract)
	if err != nil {
		return ctrl.Result{}, err
	}
	s.infra.ready = ready
	if s.infra.replicas, s.infra.replicasFound, err = contract.PoolReplicas(obj); err != nil {
		return ctrl.Result{}, err
	}
	if !ready {
		log.Info("Waiting for the infrastructure provider to provision the pool", obj.GetKind(), klog.KObj(obj))
		return ctrl.Result{}, nil
	}
	ids, _, err := contract.ProviderIDList(obj)
	if err != nil {
		return ctrl.Result{}, err
	}
	if len(ids) == 0 && s.infra.replicas != 0 {
		// As upstream: the provider reports instances but not their IDs yet.
		log.Info("The InfraMachinePool reports replicas but no spec.providerIDList yet", "replicas", s.infra.replicas)
		return ctrl.Result{}, nil
	}
	if !slices.Equal(mp.Spec.ProviderIDList, ids) {
		log.Info("Copying spec.providerIDList from the InfraMachinePool", "instances", len(ids))
		mp.Spec.ProviderIDList = ids
	}
	return ctrl.Result{}, nil
}

// ensureExternal resolves the contract of the object ref points at (updating ref's apiVersion), reads it,
// watches its kind, makes the MachinePool its controller and labels it with the cluster name. It records
// in f what went wrong; obj is nil when there is nothing more to do with it, and res and err are then
// what the phase returns.
func (r *Reconciler) ensureExternal(ctx context.Context, s *scope, ref *corev1.ObjectReference, f *providerFacts) (*unstructured.Unstructured, contract.Info, ctrl.Result, error) {
	mp := s.mp
	info, _, err := r.Contracts.UpdateReference(ctx, ref)
	if err != nil {
		if apierrors.IsNotFound(err) {
			// A missing CRD must not read as a missing object.
			return nil, info, ctrl.Result{}, errors.New(err.Error())
		}
		return nil, info, ctrl.Result{}, err
	}
	obj, err := external.GetCached(ctx, r.providers(), r.APIReader, ref, mp.Namespace)
	if err != nil {
		retry := ctrl.Result{RequeueAfter: orDefault(r.ExternalObjectRetryInterval, defaultExternalObjectRetryInterval)}
		if apierrors.IsNotFound(err) {
			f.notFound = true
			if mp.DeletionTimestamp.IsZero() {
				ctrl.LoggerFrom(ctx).Info("Could not find the referenced object, requeuing", ref.Kind, klog.KRef(mp.Namespace, ref.Name))
			}
			return nil, info, retry, nil
		}
		if f.problem = external.ReadProblem(err, ref); f.problem != "" {
			ctrl.LoggerFrom(ctx).Info("Cannot use the referenced object", "problem", f.problem)
			return nil, info, retry, nil
		}
		return nil, info, ctrl.Result{}, err
	}
	if r.tracker != nil {
		if err := r.tracker.Watch(obj, r.ownerHandler); err != nil {
			return nil, info, ctrl.Result{}, err
		}
	}
	f.obj = obj
	if f.failureReason, f.failureMessage, err = contract.Failure(obj); err != nil {
		return nil, info, ctrl.Result{}, err
	}
	if !obj.GetDeletionTimestamp().IsZero() {
		return obj, info, ctrl.Result{}, nil
	}
	helper := patch.NewHelper(obj, r.Client)
	if err := controllerutil.SetControllerReference(mp, obj, r.Client.Scheme()); err != nil {
		return nil, info, ctrl.Result{}, fmt.Errorf("making MachinePool %s the controller of %s %s: %w", mp.Name, obj.GetKind(), obj.GetName(), err)
	}
	reconciler.SetClusterNameLabel(obj, mp.Spec.ClusterName)
	if err := helper.Patch(ctx, obj); err != nil {
		return nil, info, ctrl.Result{}, err
	}
	return obj, info, ctrl.Result{}, nil
}

func orDefault[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

// reconcileMachines creates a MachinePool Machine for each InfraMachine the InfraMachinePool created for
// an instance (status.infrastructureMachineKind, labelled cluster.x-k8s.io/pool-name), and keeps their
// labels and annotations those of spec.template.metadata. The Machines surface the instances in Cluster
// API: deleting one deletes its instance (the Machine controller drains its Node and deletes the
// InfraMachine); a Machine whose InfraMachine is gone is deleted with it by the InfraMachinePool.
func (r *Reconciler) reconcileMachines(ctx context.Context, s *scope) (ctrl.Result, error) {
	log := ctrl.LoggerFrom(ctx)
	mp, infra := s.mp, s.infra.obj
	if infra == nil {
		return ctrl.Result{}, nil
	}
	kind, err := contract.InfrastructureMachineKind(infra)
	if err != nil || kind == "" {
		log.V(4).Info("The InfraMachinePool creates no InfraMachines: no MachinePool Machines")
		return ctrl.Result{}, err
	}
	selector := client.MatchingLabels{clusterv1.MachinePoolNameLabel: labelformat.Value(mp.Name), clusterv1.ClusterNameLabel: mp.Spec.ClusterName}

	sample := &unstructured.Unstructured{}
	sample.SetAPIVersion(infra.GetAPIVersion())
	sample.SetKind(kind)
	if r.tracker != nil {
		if err := r.tracker.Watch(sample, r.infraMachineHandler); err != nil {
			return ctrl.Result{}, err
		}
	}
	infraMachines := &unstructured.UnstructuredList{}
	infraMachines.SetAPIVersion(infra.GetAPIVersion())
	infraMachines.SetKind(kind + "List")
	if err := r.providers().List(ctx, infraMachines, client.InNamespace(mp.Namespace), selector); err != nil {
		return ctrl.Result{}, fmt.Errorf("listing the %ss of MachinePool %s: %w", kind, mp.Name, err)
	}
	machines := &clusterv1.MachineList{}
	if err := r.Client.List(ctx, machines, client.InNamespace(mp.Namespace), selector); err != nil {
		return ctrl.Result{}, fmt.Errorf("listing the Machines of MachinePool %s: %w", mp.Name, err)
	}
	s.machines, s.machinesRead = machines.Items, true

	byInfraName := map[string]*clusterv1.Machine{}
	for i := range machines.Items {
		byInfraName[machines.Items[i].Spec.InfrastructureRef.Name] = &machines.Items[i]
	}
	var errs []error
	for i := range infraMachines.Items {
		im := &infraMachines.Items[i]
		if !im.GetDeletionTimestamp().IsZero() {
			continue
		}
		desired := desiredMachine(mp, im)
		existing := byInfraName[im.GetName()]
		if existing == nil {
			log.Info("Creating a Machine for an instance of the pool", kind, klog.KObj(im), "Machine", klog.KObj(desired))
			if err := r.Client.Create(ctx, desired, client.FieldOwner(fieldOwner)); err != nil && !apierrors.IsAlreadyExists(err) {
				errs = append(errs, fmt.Errorf("creating Machine %s for %s %s: %w", desired.Name, kind, im.GetName(), err))
				continue
			}
			s.machines = append(s.machines, *desired)
			continue
		}
		if updated, changed := updatedMachine(existing, desired); changed {
			log.Info("Updating the labels, annotations, taints and owner of a MachinePool Machine", "Machine", klog.KObj(existing))
			if err := r.Client.Patch(ctx, updated, client.MergeFrom(existing), client.FieldOwner(fieldOwner)); err != nil {
				errs = append(errs, fmt.Errorf("updating Machine %s: %w", existing.Name, err))
			}
		}
	}
	return ctrl.Result{}, errors.Join(errs...)
}

// desiredMachine is the Machine of an InfraMachine of the pool: same name and namespace, controlled by the
// MachinePool, with the template's labels and annotations plus the pool-name and cluster-name labels.
func desiredMachine(mp *clusterv1.MachinePool, im *unstructured.Unstructured) *clusterv1.Machine {
	m := &clusterv1.Machine{
		TypeMeta: metav1.TypeMeta{APIVersion: clusterv1.GroupVersion.String(), Kind: "Machine"},
		ObjectMeta: metav1.ObjectMeta{
			Namespace:       mp.Namespace,
			Name:            im.GetName(),
			Labels:          map[string]string{},
			Annotations:     map[string]string{},
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(mp, clusterv1.GroupVersion.WithKind("MachinePool"))},
		},
		Spec: clusterv1.MachineSpec{
			ClusterName: mp.Spec.ClusterName,
			InfrastructureRef: corev1.ObjectReference{
				APIVersion: im.GetAPIVersion(), Kind: im.GetKind(), Namespace: im.GetNamespace(), Name: im.GetName(),
			},
			Version: mp.Spec.Template.Spec.Version,
			// The pool's taints: the Machine controller puts the same ones on the Node as the MachinePool
			// does (annotateNodes), so the two agree.
			Taints: slices.Clone(mp.Spec.Template.Spec.Taints),
		},
	}
	for k, v := range mp.Spec.Template.Annotations {
		m.Annotations[k] = v
	}
	for k, v := range mp.Spec.Template.Labels {
		m.Labels[k] = v
	}
	m.Labels[clusterv1.MachinePoolNameLabel] = labelformat.Value(mp.Name)
	m.Labels[clusterv1.ClusterNameLabel] = mp.Spec.ClusterName
	return m
}

// updatedMachine returns a copy of an existing MachinePool Machine with the labels, annotations, taints and
// controller of the desired one, and whether that changed anything. Labels and annotations others set
// are kept.
func updatedMachine(existing, desired *clusterv1.Machine) (*clusterv1.Machine, bool) {
	out := existing.DeepCopy()
	changed := false
	if out.Labels == nil {
		out.Labels = map[string]string{}
	}
	if out.Annotations == nil {
		out.Annotations = map[string]string{}
	}
	for k, v := range desired.Labels {
		if out.Labels[k] != v {
			out.Labels[k], changed = v, true
		}
	}
	for k, v := range desired.Annotations {
		if out.Annotations[k] != v {
			out.Annotations[k], changed = v, true
		}
	}
	if !slices.Equal(out.Spec.Taints, desired.Spec.Taints) {
		out.Spec.Taints, changed = slices.Clone(desired.Spec.Taints), true
	}
	if owner := metav1.GetControllerOfNoCopy(out); owner == nil {
		out.OwnerReferences, changed = append(out.OwnerReferences, desired.OwnerReferences[0]), true
	}
	return out, changed
}

// reconcileNodeRefs finds the Nodes of spec.providerIDList in the workload cluster, deletes the Nodes of
// instances the provider removed from the list, and annotates the pool's Nodes as upstream does.
func (r *Reconciler) reconcileNodeRefs(ctx context.Context, s *scope) (ctrl.Result, error) {
	log := ctrl.LoggerFrom(ctx)
	mp, cluster := s.mp, s.cluster
	if len(mp.Spec.ProviderIDList) == 0 && len(mp.Status.NodeRefs) == 0 {
		if ptr.Deref(mp.Spec.Replicas, 1) == 0 || s.infra.ready {
			s.nodes = &nodeFacts{}
		}
		return ctrl.Result{}, nil
	}
	key := client.ObjectKeyFromObject(cluster)
	remote, err := r.ClusterCache.GetClient(ctx, key)
	if err != nil {
		return ctrl.Result{}, err
	}
	if err := r.ClusterCache.WatchNodes(ctx, key, nodeWatchName, r.controller, r.nodeToMachinePool(key)); err != nil {
		return ctrl.Result{}, err
	}
	if err := deleteRetiredNodes(ctx, remote, mp.Status.NodeRefs, mp.Spec.ProviderIDList); err != nil {
		return ctrl.Result{}, err
	}
	nodes := &corev1.NodeList{}
	if err := remote.List(ctx, nodes); err != nil {
		return ctrl.Result{}, fmt.Errorf("listing the Nodes of Cluster %s: %w", cluster.Name, err)
	}
	byProviderID := map[string]*corev1.Node{}
	for i := range nodes.Items {
		if id := nodes.Items[i].Spec.ProviderID; id != "" {
			byProviderID[id] = &nodes.Items[i]
		}
	}
	facts := nodeRefsOf(mp.Spec.ProviderIDList, byProviderID, ptr.Deref(mp.Spec.MinReadySeconds, 0), r.clock())
	s.nodes = &facts
	if len(facts.refs) == 0 && len(mp.Spec.ProviderIDList) > 0 {
		// Node events bring the MachinePool back.
		log.Info("Cannot set the MachinePool's nodeRefs: no Node has a provider ID of spec.providerIDList yet")
		return ctrl.Result{}, nil
	}
	if !equalRefs(mp.Status.NodeRefs, facts.refs) {
		log.Info("Setting the MachinePool's nodeRefs", "nodes", len(facts.refs))
		r.event(mp, corev1.EventTypeNormal, EventSuccessfulSetNodeRefs, "%s", nodeNames(facts.refs))
	}
	if err := annotateNodes(ctx, remote, mp, facts.refs, byProviderID); err != nil {
		r.event(mp, corev1.EventTypeWarning, EventFailedSetNodeRef, "%v", err)
		return ctrl.Result{}, err
	}
	if int32(len(mp.Spec.ProviderIDList)) != facts.ready {
		return ctrl.Result{RequeueAfter: defaultReplicasReadyRetryInterval}, nil
	}
	return ctrl.Result{}, nil
}
