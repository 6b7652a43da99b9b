package localmachine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	infrav1 "github.com/capstan-dev/capstan/api/infrastructure/local/v1alpha1"
	"github.com/capstan-dev/capstan/internal/conditions"
	"github.com/capstan-dev/capstan/internal/providers/local/backend"
)

// scope is what one reconcile works on; phases record what they find in facts.
type scope struct {
	localMachine *infrav1.LocalMachine
	machine      *clusterv1.Machine // nil only while deleting
	cluster      *clusterv1.Cluster // nil only while deleting
	facts        facts
}

// ProviderID returns the provider ID of a machine: local://<namespace>/<cluster>/<machine>.
func ProviderID(namespace, clusterName, machineName string) string {
	return infrav1.ProviderIDPrefix + namespace + "/" + clusterName + "/" + machineName
}

// reconcileNormal runs the phases of a LocalMachine that is not being deleted, in order.
func (r *Reconciler) reconcileNormal(ctx context.Context, s *scope) (ctrl.Result, error) {
	log := ctrl.LoggerFrom(ctx)
	lm, m, cluster := s.localMachine, s.machine, s.cluster
	if controllerutil.AddFinalizer(lm, infrav1.LocalMachineFinalizer) {
		log.Info("Adding the LocalMachine finalizer")
	}
	providerID := ProviderID(lm.Namespace, cluster.Name, m.Name)
	if lm.Spec.ProviderID != nil && *lm.Spec.ProviderID != providerID {
		s.facts.failure = &failure{
			reason:  clusterv1.InvalidConfigurationMachineError,
			message: fmt.Sprintf("spec.providerID %s is not this machine's provider ID %s", *lm.Spec.ProviderID, providerID),
		}
		return ctrl.Result{}, nil
	}
	if !cluster.Status.InfrastructureReady {
		s.facts.waiting = infrav1.WaitingForClusterInfrastructureReason
		return ctrl.Result{}, nil
	}
	if m.Spec.Bootstrap.DataSecretName == nil {
		s.facts.waiting = infrav1.WaitingForBootstrapDataReason
		return ctrl.Result{}, nil
	}
	key, ok := backend.ClusterOf(cluster)
	if !ok {
		s.facts.notLocal = true
		return ctrl.Result{}, nil
	}

	// The simulated machine boots for spec.startupDelay, counted from the first reconcile that found
	// everything ready (recorded in status.startupStartTime, so restarts do not reset it). A machine whose
	// Node was registered (spec.providerID is set) has booted: a move, which does not restore the status,
	// does not make it boot again.
	now := r.Now()
	start := now
	if lm.Status.StartupStartTime != nil {
		start = lm.Status.StartupStartTime.Time
	}
	s.facts.startupStart = ptr.To(metav1.NewTime(start))
	if lm.Spec.StartupDelay != nil && lm.Spec.ProviderID == nil {
		if remaining := start.Add(lm.Spec.StartupDelay.Duration).Sub(now); remaining > 0 {
			s.facts.waiting = infrav1.StartingUpReason
			return ctrl.Result{RequeueAfter: remaining}, nil
		}
	}

	data, err := r.readBootstrapData(ctx, s)
	if err != nil {
		if errors.Is(err, errBootstrapDataInvalid) {
			s.facts.bootstrapInvalid = invalidMessage(err)
			log.Info("The Machine's bootstrap data is invalid", "reason", s.facts.bootstrapInvalid)
			return ctrl.Result{RequeueAfter: bootstrapRetryInterval}, nil
		}
		return ctrl.Result{}, err
	}
	desired, err := r.desiredMachine(ctx, s, data, providerID)
	switch {
	case errors.Is(err, errBootstrapDataInvalid):
		s.facts.bootstrapInvalid = invalidMessage(err)
		log.Info("The Machine's bootstrap data is invalid", "reason", s.facts.bootstrapInvalid)
		return ctrl.Result{RequeueAfter: bootstrapRetryInterval}, nil
	case errors.Is(err, backend.ErrClusterNotReady):
		s.facts.waiting = infrav1.WaitingForControlPlaneReason
		return ctrl.Result{RequeueAfter: r.RetryInterval}, nil
	case err != nil:
		return ctrl.Result{}, err
	}
	s.facts.controlPlane = desired.ControlPlane != nil
	status, err := r.Backend.EnsureMachine(ctx, key, desired)
	if errors.Is(err, backend.ErrClusterNotReady) {
		s.facts.waiting = infrav1.WaitingForControlPlaneReason
		return ctrl.Result{RequeueAfter: r.RetryInterval}, nil
	}
	if err != nil {
		s.facts.registrationFailed = true
		return ctrl.Result{}, fmt.Errorf("running machine %s: %w", desired.Name, err)
	}
	s.facts.machine = &status
	if !status.NodeRegistered {
		s.facts.waiting = infrav1.WaitingForControlPlaneReason
		return ctrl.Result{RequeueAfter: r.RetryInterval}, nil
	}
	if lm.Spec.ProviderID == nil {
		log.Info("Node registered", "Node", desired.NodeName, "providerID", providerID)
		lm.Spec.ProviderID = ptr.To(providerID)
	}
	s.facts.registered = true
	s.facts.failureDomain = desired.FailureDomain
	for _, a := range status.Addresses {
		s.facts.addresses = append(s.facts.addresses, clusterv1.MachineAddress{Type: clusterv1.MachineAddressType(a.Type), Address: a.Address})
	}
	return ctrl.Result{}, nil
}

// bootstrapRetryInterval is how soon a Machine whose bootstrap data is invalid is looked at again: the
// bootstrap provider may rewrite the Secret, which is not watched.
const bootstrapRetryInterval = 30 * time.Second

// invalidMessage is the condition message of invalid bootstrap data.
func invalidMessage(err error) string {
	return conditions.Capitalise(strings.TrimPrefix(err.Error(), errBootstrapDataInvalid.Error()+": "))
}

func isControlPlane(m *clusterv1.Machine) bool {
	_, ok := m.Labels[clusterv1.MachineControlPlaneLabel]
	return ok
}
