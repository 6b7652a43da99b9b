package kubeadmcontrolplane

import (
	"context"
	"errors"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/clustercache"
	"github.com/capstan-dev/capstan/internal/external"
	"github.com/capstan-dev/capstan/internal/patch"
	"github.com/capstan-dev/capstan/internal/providers/kubeadm/controlplane/workload"
)

// reconcile runs the phases of a KubeadmControlPlane that is not being deleted, in upstream's order: the
// machine template's owner, certificates, kubeconfig, in-place changes of the Machines, health, etcd
// members, Machines being deleted, remediation, then rollout or scaling.
func (r *Reconciler) reconcile(ctx context.Context, s *scope) (ctrl.Result, error) {
	log := ctrl.LoggerFrom(ctx)
	if err := r.reconcileInfrastructureTemplate(ctx, s); err != nil {
		return ctrl.Result{}, err
	}
	if !s.cluster.Status.InfrastructureReady {
		s.notInspectedReason, s.notInspectedMessage = "InspectionFailed", "Waiting for Cluster status.infrastructureReady to be true"
		log.Info("Waiting for the Cluster's infrastructure to be ready")
		return ctrl.Result{}, nil
	}
	if err := r.reconcileCertificates(ctx, s); err != nil {
		return ctrl.Result{}, err
	}
	if !s.cluster.Spec.ControlPlaneEndpoint.IsValid() {
		s.notInspectedReason, s.notInspectedMessage = "InspectionFailed", "Waiting for Cluster spec.controlPlaneEndpoint to be set"
		log.Info("Waiting for the Cluster's control plane endpoint")
		return ctrl.Result{}, nil
	}
	if res, err := r.reconcileKubeconfig(ctx, s); err != nil || !res.IsZero() {
		return res, err
	}
	if err := r.syncMachines(ctx, s); err != nil {
		return ctrl.Result{}, fmt.Errorf("syncing the Machines: %w", err)
	}
	r.connect(ctx, s)
	return r.reconcileControlPlane(ctx, s)
}

// reconcileControlPlane runs the phases that read the workload cluster, once connected (or not): health,
// etcd members, Machines being deleted, remediation, then rollout or scaling.
func (r *Reconciler) reconcileControlPlane(ctx context.Context, s *scope) (ctrl.Result, error) {
	log := ctrl.LoggerFrom(ctx)
	r.inspectHealth(ctx, s)
	if err := r.reconcileEtcdMembers(ctx, s); err != nil {
		return ctrl.Result{}, err
	}
	if res, err := r.reconcilePreTerminateHook(ctx, s); err != nil || !res.IsZero() {
		return res, err
	}
	// An in-place update whose trigger stopped half way is completed.
	if done, err := r.completeInPlaceTriggers(ctx, s); err != nil || done {
		return ctrl.Result{}, err
	}
	if acted, err := r.reconcileUnhealthyMachines(ctx, s); err != nil || acted {
		return ctrl.Result{Requeue: acted}, err //nolint:staticcheck // Requeue is what upstream does after a remediation.
	}
	// One operation at a time: the in-place updates in progress complete first (the Machines' changes bring
	// the control plane back). A Machine that becomes unhealthy meanwhile is remediated above.
	if inProgress := s.inPlaceUpdatesInProgress(); len(inProgress) > 0 {
		for _, m := range inProgress {
			log.Info(fmt.Sprintf("Waiting for in-place update of Machine %s to complete", klog.KObj(m)), "Machine", klog.KObj(m))
		}
		return ctrl.Result{}, nil
	}

	if outdated := s.needingRollout(); len(outdated) > 0 {
		var msgs []string
		for _, m := range outdated {
			msgs = append(msgs, fmt.Sprintf("Machine %s needs rollout: %s", m.Name, strings.Join(s.notUpToDate[m.Name].log, ",")))
		}
		log.Info("Rolling out control plane Machines: " + strings.Join(msgs, ", "))
		return r.rollout(ctx, s, outdated)
	}

	current, desired := int32(len(s.machines)), s.replicas()
	switch {
	case current == 0 && desired > 0:
		log.Info("Initializing the control plane", "desired", desired)
		return r.initialize(ctx, s)
	case current < desired:
		log.Info("Scaling up the control plane", "desired", desired, "existing", current)
		return r.scaleUp(ctx, s)
	case current > desired:
		log.Info("Scaling down the control plane", "desired", desired, "existing", current)
		return r.scaleDown(ctx, s, nil)
	}

	if s.workload == nil {
		// The connection coming up brings the control plane back (ClusterSource); this is in case it does not.
		return pollAfter(notReadyRequeueAfter), nil
	}
	if err := s.workload.AllowBootstrapTokensToGetNodes(ctx); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{}, r.reconcileCertificateExpiries(ctx, s)
}

// reconcileInfrastructureTemplate makes the Cluster an owner of the machine template, as upstream does, so
// that clusterctl move takes it along.
func (r *Reconciler) reconcileInfrastructureTemplate(ctx context.Context, s *scope) error {
	ref := s.kcp.Spec.MachineTemplate.InfrastructureRef
	tpl, err := external.Get(ctx, r.Client, &ref, s.kcp.Namespace)
	if err != nil {
		if apierrors.IsNotFound(err) {
			s.infraTemplateNotFound = true
		}
		return fmt.Errorf("getting the machine template %s %s: %w", ref.Kind, ref.Name, err)
	}
	for _, o := range tpl.GetOwnerReferences() {
		if o.UID == s.cluster.UID {
			return nil
		}
	}
	h := patch.NewHelper(tpl, r.Client)
	tpl.SetOwnerReferences(append(tpl.GetOwnerReferences(), metav1.OwnerReference{
		APIVersion: clusterv1.GroupVersion.String(), Kind: "Cluster", Name: s.cluster.Name, UID: s.cluster.UID,
	}))
	return h.Patch(ctx, tpl)
}

// connect gets the workload cluster, once the control plane could have an API server, and reads what it
// says about the control plane (initialized when the kubeadm-config ConfigMap exists).
func (r *Reconciler) connect(ctx context.Context, s *scope) {
	log := ctrl.LoggerFrom(ctx)
	if len(s.machines) == 0 {
		return
	}
	key := client.ObjectKeyFromObject(s.cluster)
	c, err := r.ClusterCache.GetClient(ctx, key)
	if err != nil {
		if !errors.Is(err, clustercache.ErrClusterNotConnected) {
			log.Error(err, "Failed to get the workload cluster's client")
		}
		return
	}
	cfg, err := r.ClusterCache.GetRESTConfig(ctx, key)
	if err != nil {
		return
	}
	etcdOpts := workload.EtcdOptions{DialTimeout: r.EtcdDialTimeout, CallTimeout: r.EtcdCallTimeout, Logger: r.EtcdLogger}
	if s.isEtcdManaged() {
		if etcdOpts.CA, etcdOpts.ClientCert, err = r.etcdTLS(ctx, s); err != nil {
			log.Error(err, "Failed to get the etcd client certificate")
			return
		}
	}
	w, err := workload.New(c, cfg, etcdOpts)
	if err != nil {
		log.Error(err, "Failed to reach the workload cluster")
		return
	}
	status, err := w.Status(ctx)
	if err != nil {
		log.Error(err, "Failed to read the workload cluster's control plane")
		return
	}
	s.workload, s.workloadStatus = w, &status
	if status.HasKubeadmConfig {
		s.kcp.Status.Initialized = true
	}
}
