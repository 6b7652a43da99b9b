package kubeadmcontrolplane

import (
	"context"
	"crypto/tls"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	controlplanev1 "github.com/capstan-dev/capstan/api/controlplane/kubeadm/v1beta1"
	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/conditions"
	"github.com/capstan-dev/capstan/internal/patch"
	"github.com/capstan-dev/capstan/internal/providers/kubeadm/controlplane/portforward"
	"github.com/capstan-dev/capstan/internal/providers/kubeadm/controlplane/workload"
)

// forwardLeadership moves the etcd leadership from the member of from to the member of to, when from's
// member leads.
func (r *Reconciler) forwardLeadership(ctx context.Context, s *scope, from, to *clusterv1.Machine) error {
	if from.Status.NodeRef == nil || to.Status.NodeRef == nil || s.workload == nil {
		return nil
	}
	r.etcdReads.forget(client.ObjectKeyFromObject(s.cluster))
	return s.workload.ForwardLeadership(ctx, s.nodeNames(s.all()), from.Status.NodeRef.Name, to.Status.NodeRef.Name)
}

// reconcileEtcdMembers removes the etcd members whose Machine and Node are gone, when etcd is reported
// unhealthy and no Machine is still provisioning (a member removal that a deleted Machine's hook missed).
func (r *Reconciler) reconcileEtcdMembers(ctx context.Context, s *scope) error {
	if !s.isEtcdManaged() || len(s.machines) == 0 || s.etcdMembers == nil || len(s.etcdErrors) == 0 {
		return nil
	}
	nodes := s.nodeNames(s.all())
	if len(nodes) != len(s.machines) {
		return nil
	}
	r.etcdReads.forget(client.ObjectKeyFromObject(s.cluster))
	removed, err := s.workload.RemoveMembersWithoutNodes(ctx, nodes)
	if err != nil {
		return fmt.Errorf("removing the etcd members without a Machine: %w", err)
	}
	if len(removed) > 0 {
		ctrl.LoggerFrom(ctx).Info("Etcd members without nodes removed from the cluster", "members", removed)
		r.recorder.Eventf(s.kcp, corev1.EventTypeNormal, "EtcdMemberRemoved", "Removed etcd members without a Machine: %s", strings.Join(removed, ", "))
	}
	return nil
}

// reconcilePreTerminateHook removes the etcd member of a deleted Machine once the Machine controller waits
// for the kcp-cleanup pre-terminate hook (the Node is drained), then removes the hook, one Machine at a
// time. The leadership is moved away first, in case the Machine leads again or was deleted by hand.
func (r *Reconciler) reconcilePreTerminateHook(ctx context.Context, s *scope) (ctrl.Result, error) {
	deleting := s.deleting()
	if len(deleting) == 0 {
		return ctrl.Result{}, nil
	}
	for _, m := range deleting {
		if _, ok := m.Annotations[controlplanev1.PreTerminateHookCleanupAnnotation]; !ok {
			// Wait for this one to go before removing another member.
			return ctrl.Result{RequeueAfter: deleteRequeueAfter}, nil
		}
	}
	m := deleting[0]
	for _, d := range deleting[1:] {
		if d.DeletionTimestamp.Before(m.DeletionTimestamp) {
			m = d
		}
	}
	log := ctrl.LoggerFrom(ctx).WithValues("Machine", klog.KObj(m))
	for k := range m.Annotations {
		if strings.HasPrefix(k, clusterv1.PreTerminateDeleteHookAnnotationPrefix) && k != controlplanev1.PreTerminateHookCleanupAnnotation {
			// Ours runs last, while the other hooks still have a working kubelet.
			return ctrl.Result{RequeueAfter: deleteRequeueAfter}, nil
		}
	}
	c := conditions.Get(m, clusterv1.PreTerminateDeleteHookSucceededCondition)
	if c == nil || c.Status != corev1.ConditionFalse || c.Reason != clusterv1.WaitingExternalHookReason {
		return ctrl.Result{RequeueAfter: deleteRequeueAfter}, nil
	}
	if len(s.machines) > 1 && s.isEtcdManaged() && m.Status.NodeRef != nil {
		if s.workload == nil {
			return ctrl.Result{}, fmt.Errorf("cannot remove the etcd member of Machine %s: the workload cluster cannot be reached", m.Name)
		}
		r.readEtcdLive(ctx, s)
		if ok, why := r.memberRemovalKeepsQuorum(ctx, s, m); !ok {
			log.Info("Waiting to remove the etcd member of the deleted Machine: "+why, "Node", m.Status.NodeRef.Name)
			r.recorder.Eventf(s.kcp, corev1.EventTypeWarning, "EtcdMemberRemovalDeferred", "Waiting to remove the etcd member of Machine %s: %s", m.Name, why)
			return ctrl.Result{RequeueAfter: deleteRequeueAfter}, nil
		}
		if candidate := newest(s.active()); candidate != nil {
			if err := r.forwardLeadership(ctx, s, m, candidate); err != nil {
				return ctrl.Result{}, fmt.Errorf("moving the etcd leadership to Machine %s: %w", candidate.Name, err)
			}
		}
		log.Info("Removing the etcd member of the deleted Machine", "Node", m.Status.NodeRef.Name)
		r.etcdReads.forget(client.ObjectKeyFromObject(s.cluster))
		if err := s.workload.RemoveMember(ctx, s.nodeNames(s.all()), m.Status.NodeRef.Name); err != nil {
			return ctrl.Result{}, fmt.Errorf("removing the etcd member of Machine %s: %w", m.Name, err)
		}
		r.recorder.Eventf(s.kcp, corev1.EventTypeNormal, "EtcdMemberRemoved", "Removed the etcd member of Machine %s (Node %s)", m.Name, m.Status.NodeRef.Name)
	}
	if err := r.removePreTerminateHook(ctx, s, m); err != nil {
		return ctrl.Result{}, err
	}
	log.Info("Waiting for Machines to be deleted", "machines", strings.Join(names(deleting), ", "))
	return ctrl.Result{RequeueAfter: deleteRequeueAfter}, nil
}

// memberRemovalKeepsQuorum reports whether the etcd member of the deleted Machine m can be removed
// without losing quorum, from the members read in this reconcile and each member answering now: a member
// that does not answer (or is gone) can always be removed; a live one only when the members left that
// answer are a majority of the members left. Otherwise it says why. (Upstream removes the member
// regardless, and etcd's strict reconfiguration check refuses a removal that would leave too few started
// members; this waits with the reason instead, and never removes a live member while another is down.)
func (r *Reconciler) memberRemovalKeepsQuorum(ctx context.Context, s *scope, m *clusterv1.Machine) (bool, string) {
	if s.etcdMembers == nil {
		return false, "the etcd members could not be read"
	}
	node := m.Status.NodeRef.Name
	if workload.MemberForName(s.etcdMembers, node) == nil || s.workload.MemberAnswers(ctx, node, nil) != nil {
		return true, ""
	}
	left, answering := 0, 0
	var down []string
	for _, mb := range s.etcdMembers {
		if mb.Name == node {
			continue
		}
		left++
		if mb.Name != "" && s.workload.MemberAnswers(ctx, mb.Name, nil) == nil {
			answering++
		} else {
			down = append(down, mb.Name)
		}
	}
	if quorum := left/2 + 1; answering < quorum {
		return false, fmt.Sprintf("%d of the %d other etcd members answer (%s down), at least %d required for etcd quorum without it", answering, left, strings.Join(down, ", "), quorum)
	}
	return true, ""
}

// removePreTerminateHook removes the kcp-cleanup annotation of a Machine.
func (r *Reconciler) removePreTerminateHook(ctx context.Context, s *scope, m *clusterv1.Machine) error {
	if _, ok := m.Annotations[controlplanev1.PreTerminateHookCleanupAnnotation]; !ok {
		return nil
	}
	before := m.DeepCopy()
	delete(m.Annotations, controlplanev1.PreTerminateHookCleanupAnnotation)
	if err := r.Client.Patch(ctx, m, client.MergeFrom(before)); err != nil {
		return fmt.Errorf("removing the pre-terminate hook of Machine %s: %w", m.Name, err)
	}
	s.machineWriters[m.Name] = newMachineWriter(m, r.Client)
	return nil
}

// reconcileCertificateExpiries records, on the KubeadmConfig of each Machine with a Node, when its API
// server's serving certificate expires (the certificates-expiry annotation the Machine controller copies to
// status.certificatesExpiryDate, which rolloutBefore.certificatesExpiryDays reads). The certificate is read
// through a port-forward to the Machine's kube-apiserver Pod.
func (r *Reconciler) reconcileCertificateExpiries(ctx context.Context, s *scope) error {
	if !s.kcp.Status.Initialized || s.workload == nil {
		return nil
	}
	log := ctrl.LoggerFrom(ctx)
	var toRead []*clusterv1.Machine
	for _, m := range s.active() {
		kc, ok := s.kubeadmConfigs[m.Name]
		if !ok || m.Status.NodeRef == nil {
			continue
		}
		if _, ok := kc.Annotations[clusterv1.MachineCertificatesExpiryDateAnnotation]; !ok {
			toRead = append(toRead, m)
		}
	}
	if len(toRead) == 0 {
		return nil
	}
	cfg, err := r.ClusterCache.GetRESTConfig(ctx, client.ObjectKeyFromObject(s.cluster))
	if err != nil {
		return nil //nolint:nilerr // The connection went down since; the next reconcile tries again.
	}
	dialer, err := portforward.NewDialer(cfg, r.EtcdDialTimeout)
	if err != nil {
		return err
	}
	for _, m := range toRead {
		kc := s.kubeadmConfigs[m.Name]
		expiry, err := apiServerCertificateExpiry(ctx, dialer, m.Status.NodeRef.Name)
		if err != nil {
			log.V(2).Info("Cannot read the API server certificate's expiry yet", "Machine", klog.KObj(m), "reason", err.Error())
			continue
		}
		h := patch.NewHelper(kc, r.Client)
		if kc.Annotations == nil {
			kc.Annotations = map[string]string{}
		}
		kc.Annotations[clusterv1.MachineCertificatesExpiryDateAnnotation] = expiry.UTC().Format(time.RFC3339)
		if err := h.Patch(ctx, kc); err != nil {
			return fmt.Errorf("recording the certificate expiry of Machine %s: %w", m.Name, err)
		}
	}
	return nil
}

// apiServerCertificateExpiry reads the serving certificate of the kube-apiserver Pod on node.
func apiServerCertificateExpiry(ctx context.Context, dialer *portforward.Dialer, node string) (time.Time, error) {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	conn, err := dialer.Dial(ctx, metav1.NamespaceSystem, workload.StaticPodName("kube-apiserver", node), 6443)
	if err != nil {
		return time.Time{}, err
	}
	defer func() { _ = conn.Close() }()
	tc := tls.Client(conn, &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS12}) //nolint:gosec // Only the certificate's expiry is read.
	if err := tc.HandshakeContext(ctx); err != nil {
		return time.Time{}, err
	}
	certs := tc.ConnectionState().PeerCertificates
	if len(certs) == 0 {
		return time.Time{}, fmt.Errorf("the API server on %s presented no certificate", node)
	}
	return certs[0].NotAfter, nil
}
