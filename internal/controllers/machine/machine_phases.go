package machine

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/contract"
	"github.com/capstan-dev/capstan/internal/external"
	"github.com/capstan-dev/capstan/internal/patch"
	"github.com/capstan-dev/capstan/internal/reconciler"
)

// reconcileOwner makes a stand-alone Machine owned by its Cluster. Machines of a MachineSet or of a control
// plane get their owner from it: adopting them here would race with it (after a restore from backup).
func (r *Reconciler) reconcileOwner(_ context.Context, s *scope) (ctrl.Result, error) {
	m := s.machine
	if s.cluster == nil || !shouldAdopt(m) {
		return ctrl.Result{}, nil
	}
	m.SetOwnerReferences(append(m.GetOwnerReferences(), metav1.OwnerReference{
		APIVersion: clusterv1.GroupVersion.String(),
		Kind:       "Cluster",
		Name:       s.cluster.Name,
		UID:        s.cluster.UID,
	}))
	return ctrl.Result{}, nil
}

func shouldAdopt(m *clusterv1.Machine) bool {
	if metav1.GetControllerOf(m) != nil {
		return false
	}
	for _, ref := range m.GetOwnerReferences() {
		if reconciler.RefersTo(ref, clusterv1.GroupVersion.Group, "Cluster") {
			return false
		}
	}
	_, fromMachineSet := m.Labels[clusterv1.MachineSetNameLabel]
	_, fromControlPlane := m.Labels[clusterv1.MachineControlPlaneNameLabel]
	_, fromMachinePool := m.Labels[clusterv1.MachinePoolNameLabel]
	return !fromMachineSet && !fromControlPlane && !fromMachinePool
}

// reconcileBootstrap follows the bootstrap config until it has produced its data secret, and copies the
// secret's name to spec.bootstrap.dataSecretName.
func (r *Reconciler) reconcileBootstrap(ctx context.Context, s *scope) (ctrl.Result, error) {
	log := ctrl.LoggerFrom(ctx)
	m := s.machine
	ref := m.Spec.Bootstrap.ConfigRef
	if ref == nil {
		// The user gives the data secret directly.
		if m.Spec.Bootstrap.DataSecretName != nil {
			m.Status.BootstrapReady = true
		}
		return ctrl.Result{}, nil
	}
	obj, info, err := r.ensureExternal(ctx, s, ref)
	if err != nil {
		return r.readFailed(ctx, m, ref, &s.bootstrap, "bootstrap config", err)
	}
	ready, err := observeProvider(m, &s.bootstrap, obj, info.Contract, contract.DataSecretCreated)
	if err != nil {
		return ctrl.Result{}, err
	}

	if m.Spec.Bootstrap.DataSecretName != nil {
		m.Status.BootstrapReady = true
		return ctrl.Result{}, nil
	}
	if !obj.GetDeletionTimestamp().IsZero() {
		return ctrl.Result{}, nil
	}
	if !ready {
		log.Info("Waiting for the bootstrap provider to create the data secret", ref.Kind, klog.KObj(obj))
		return ctrl.Result{}, nil
	}
	name, err := contract.DataSecretName(obj)
	if err != nil {
		return ctrl.Result{}, err
	}
	if name == "" {
		return ctrl.Result{}, fmt.Errorf("%s %s says its data secret is created but has no status.dataSecretName", ref.Kind, klog.KObj(obj))
	}
	log.Info("Bootstrap provider created the data secret", ref.Kind, klog.KObj(obj), "Secret", klog.KRef(m.Namespace, name))
	m.Spec.Bootstrap.DataSecretName = &name
	m.Status.BootstrapReady = true
	return ctrl.Result{}, nil
}

// reconcileInfrastructure follows the InfraMachine until it is provisioned, then copies its providerID,
// addresses and failure domain.
func (r *Reconciler) reconcileInfrastructure(ctx context.Context, s *scope) (ctrl.Result, error) {
	log := ctrl.LoggerFrom(ctx)
	m := s.machine
	ref := &m.Spec.InfrastructureRef
	if !m.Status.InfrastructureReady && m.DeletionTimestamp.IsZero() {
		// As upstream's IPAM contract: the addresses the Machine claimed are allocated before its
		// infrastructure is provisioned. A claim's binding requeues the Machine.
		claims, err := r.unboundClaims(ctx, m)
		if err != nil {
			return ctrl.Result{}, err
		}
		if len(claims) > 0 {
			s.infra.unboundClaims = claims
			log.Info(claimsMessage(claims))
			return ctrl.Result{}, nil
		}
	}
	obj, info, err := r.ensureExternal(ctx, s, ref)
	if apierrors.IsNotFound(err) && m.DeletionTimestamp.IsZero() && m.Status.InfrastructureReady {
		// The infrastructure went away under a provisioned Machine: nothing brings it back.
		s.infra.notFound = true
		log.Error(err, "The InfraMachine has been deleted after being ready, the Machine has failed")
		reason := clusterv1.InvalidConfigurationMachineError
		m.Status.FailureReason = &reason
		msg := fmt.Sprintf("Machine infrastructure resource %s with name %q has been deleted after being ready",
			schema.FromAPIVersionAndKind(ref.APIVersion, ref.Kind), ref.Name)
		m.Status.FailureMessage = &msg
		return ctrl.Result{}, nil
	}
	if err != nil {
		return r.readFailed(ctx, m, ref, &s.infra, "InfraMachine", err)
	}
	ready, err := observeProvider(m, &s.infra, obj, info.Contract, contract.Provisioned)
	if err != nil {
		return ctrl.Result{}, err
	}
	if ready && !m.Status.InfrastructureReady {
		log.Info("Infrastructure provider has provisioned the machine", ref.Kind, klog.KObj(obj))
	}
	if !obj.GetDeletionTimestamp().IsZero() {
		return ctrl.Result{}, nil
	}
	// Once ready, a Machine stays ready: only the copies below follow the InfraMachine.
	if !ready && !m.Status.InfrastructureReady {
		log.Info("Waiting for the infrastructure provider to provision the machine", ref.Kind, klog.KObj(obj))
		return ctrl.Result{}, nil
	}

	providerID, err := contract.ProviderID(obj)
	if err != nil {
		return ctrl.Result{}, err
	}
	if providerID == "" {
		return ctrl.Result{}, fmt.Errorf("%s %s is provisioned but has no spec.providerID", ref.Kind, klog.KObj(obj))
	}
	addresses, err := contract.Addresses(obj)
	if err != nil {
		return ctrl.Result{}, err
	}
	if addresses != nil {
		m.Status.Addresses = addresses
	}
	failureDomain, err := contract.MachineFailureDomain(obj)
	if err != nil {
		return ctrl.Result{}, err
	}
	if failureDomain != "" {
		m.Spec.FailureDomain = &failureDomain
	}
	m.Spec.ProviderID = &providerID
	m.Status.InfrastructureReady = true
	return ctrl.Result{}, nil
}

// observeProvider records in f the provider object obj, which follows contract c, and whether it is ready
// (readyOf reads it: dataSecretCreated, provisioned), and copies its terminal failure to the Machine.
func observeProvider(m *clusterv1.Machine, f *providerFacts, obj *unstructured.Unstructured, c contract.Version,
	readyOf func(*unstructured.Unstructured, contract.Version) (bool, error)) (bool, error) {
	f.obj, f.contract = obj, c
	ready, err := readyOf(obj, c)
	if err != nil {
		return false, err
	}
	f.ready = ready
	return ready, copyFailure(m, obj, c)
}

// copyFailure copies a v1beta1-contract provider object's terminal failure to the Machine. The v1beta2
// contract has no terminal failures.
func copyFailure(m *clusterv1.Machine, obj *unstructured.Unstructured, c contract.Version) error {
	if c != contract.V1Beta1 {
		return nil
	}
	reason, message, err := contract.Failure(obj)
	if err != nil {
		return err
	}
	if reason != "" {
		r := clusterv1.MachineStatusError(reason)
		m.Status.FailureReason = &r
	}
	if message != "" {
		msg := fmt.Sprintf("Failure detected from referenced resource %s with name %q: %s", obj.GroupVersionKind(), obj.GetName(), message)
		m.Status.FailureMessage = &msg
	}
	return nil
}

// readFailed records in f why the object ref points at (what it is: the bootstrap config or the
// InfraMachine) could not be read, and returns what the phase returns: a retry while it does not exist
// or cannot be used, unless the Machine is being deleted.
func (r *Reconciler) readFailed(ctx context.Context, m *clusterv1.Machine, ref *corev1.ObjectReference, f *providerFacts, what string, err error) (ctrl.Result, error) {
	log := ctrl.LoggerFrom(ctx)
	retry := ctrl.Result{RequeueAfter: reconciler.OrDefault(r.ExternalObjectRetryInterval, defaultExternalObjectRetryInterval)}
	if apierrors.IsNotFound(err) {
		f.notFound = true
		if !m.DeletionTimestamp.IsZero() {
			return ctrl.Result{}, nil
		}
		log.Info("Could not find the "+what+", requeuing", ref.Kind, klog.KRef(m.Namespace, ref.Name))
		return retry, nil
	}
	f.getErr = true
	if f.problem = external.ReadProblem(err, ref); f.problem != "" {
		log.Info("Cannot use the "+what, "problem", f.problem)
		return retry, nil
	}
	return ctrl.Result{}, err
}

// ensureExternal brings a reference to the newest apiVersion of its contract, reads the object, watches its
// kind, and makes the Machine its controller owner with the cluster-name label.
func (r *Reconciler) ensureExternal(ctx context.Context, s *scope, ref *corev1.ObjectReference) (*unstructured.Unstructured, contract.Info, error) {
	m := s.machine
	info, _, err := r.Contracts.UpdateReference(ctx, ref)
	if err != nil {
		if apierrors.IsNotFound(err) {
			// A missing CRD must not read as a missing object.
			return nil, contract.Info{}, errors.New(err.Error())
		}
		return nil, contract.Info{}, err
	}
	obj, err := external.GetCached(ctx, r.providers(), r.APIReader, ref, m.Namespace)
	if err != nil {
		if apierrors.IsNotFound(err) && r.tracker != nil {
			// Its creation brings the Machine back: a MachineSet creates a Machine before its clones.
			kind := &unstructured.Unstructured{}
			kind.SetGroupVersionKind(schema.FromAPIVersionAndKind(ref.APIVersion, ref.Kind))
			if werr := r.tracker.Watch(kind, r.externalHandler); werr != nil {
				return nil, info, werr
			}
		}
		return nil, info, err
	}
	if r.tracker != nil {
		if err := r.tracker.Watch(obj, r.externalHandler); err != nil {
			return nil, info, err
		}
	}

	helper := patch.NewHelper(obj, r.Client)
	// A MachineSet owns the objects it clones until their Machine takes them over: the Machine alone owns
	// them from then on, so that the ownership is the same whether it was created or restored.
	for _, owner := range obj.GetOwnerReferences() {
		if owner.UID != m.UID && reconciler.RefersTo(owner, clusterv1.GroupVersion.Group, "MachineSet") {
			obj.SetOwnerReferences(removeOwnerRef(obj.GetOwnerReferences(), owner.UID))
		}
	}
	if err := controllerutil.SetControllerReference(m, obj, r.Client.Scheme()); err != nil {
		return nil, info, fmt.Errorf("making Machine %s the controller of %s %s: %w", m.Name, obj.GetKind(), obj.GetName(), err)
	}
	reconciler.SetClusterNameLabel(obj, m.Spec.ClusterName)
	if err := helper.Patch(ctx, obj); err != nil {
		return nil, info, err
	}
	return obj, info, nil
}

func removeOwnerRef(refs []metav1.OwnerReference, uid types.UID) []metav1.OwnerReference {
	var out []metav1.OwnerReference
	for _, ref := range refs {
		if ref.UID != uid {
			out = append(out, ref)
		}
	}
	return out
}

// reconcileCertificateExpiry copies the certificates expiry date of a control plane Machine, from its
// annotation or else its bootstrap config's, to status.certificatesExpiryDate.
func (r *Reconciler) reconcileCertificateExpiry(_ context.Context, s *scope) (ctrl.Result, error) {
	m := s.machine
	if _, ok := m.Labels[clusterv1.MachineControlPlaneLabel]; !ok {
		return ctrl.Result{}, nil
	}
	value, ok := m.Annotations[clusterv1.MachineCertificatesExpiryDateAnnotation]
	if !ok && s.bootstrap.obj != nil {
		value, ok = s.bootstrap.obj.GetAnnotations()[clusterv1.MachineCertificatesExpiryDateAnnotation]
	}
	if !ok {
		m.Status.CertificatesExpiryDate = nil
		return ctrl.Result{}, nil
	}
	expiry, err := time.Parse(time.RFC3339, value)
	if err != nil {
		return ctrl.Result{}, fmt.Errorf("reading the %s annotation %q: %w", clusterv1.MachineCertificatesExpiryDateAnnotation, value, err)
	}
	t := metav1.NewTime(expiry)
	m.Status.CertificatesExpiryDate = &t
	return ctrl.Result{}, nil
}
