package kubeadmcontrolplane

import (
	"cmp"
	"slices"
	"sort"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bootstrapv1 "github.com/capstan-dev/capstan/api/bootstrap/kubeadm/v1beta1"
	controlplanev1 "github.com/capstan-dev/capstan/api/controlplane/kubeadm/v1beta1"
	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/providers/kubeadm/controlplane/etcd"
	"github.com/capstan-dev/capstan/internal/providers/kubeadm/controlplane/workload"
)

// scope is what one reconcile knows of a KubeadmControlPlane: the objects it read and the facts the phases
// found, from which the status is computed (see kubeadmcontrolplane_status.go).
type scope struct {
	kcp     *controlplanev1.KubeadmControlPlane
	cluster *clusterv1.Cluster
	now     time.Time
	// inPlaceUpdates is the InPlaceUpdates gate: without it, the in-place update marks of Machines are not
	// looked at (no wait, no UpToDate Updating), as before the gate existed.
	inPlaceUpdates bool

	// machines are the control plane Machines the KubeadmControlPlane owns, by name.
	machines map[string]*clusterv1.Machine
	// kubeadmConfigs and infraMachines are the Machines' KubeadmConfigs and InfraMachines, by Machine name;
	// missing ones are absent.
	kubeadmConfigs map[string]*bootstrapv1.KubeadmConfig
	infraMachines  map[string]*unstructured.Unstructured
	// notUpToDate holds, for each Machine that does not match the spec, why (log and condition messages).
	notUpToDate map[string]rolloutReasons
	// machineWriters write the Machines' conditions at the end of the reconcile.
	machineWriters map[string]*machineWriter

	// workload is the workload cluster, when it could be reached this reconcile.
	workload *workload.Cluster
	// workloadStatus is what the workload cluster said about its control plane, when read.
	workloadStatus *workload.Status
	// etcdMembers are the etcd members, when they could be listed.
	etcdMembers []*etcd.Member
	// etcdReused: inspectEtcd reused an earlier read (see readEtcdLive); etcdProvisioning is what it was
	// called with.
	etcdReused, etcdProvisioning bool

	// secrets reads the cluster's Secrets once per reconcile; see secretClient.
	secrets *secretReads

	// Facts the phases found.
	certificatesErr        error
	infraTemplateNotFound  bool
	machinesCreatedFailure *machinesCreatedFailure
	preflight              preflightResults
	deletingReason         string
	deletingMessage        string
	healthInspected        bool
	// componentsNotInspected and etcdNotInspected explain why the health of the components and of etcd is
	// unknown (Reason and Message of the v1beta2 conditions); empty once inspected.
	notInspectedReason, notInspectedMessage string
	componentsErrors, etcdErrors            []string
}

type rolloutReasons struct {
	log, condition []string
	// replaceOnly: the Machine is outdated for a reason an in-place update does not remove (its
	// certificates expire, rolloutAfter passed): it is not eligible for one.
	replaceOnly bool
}

type machinesCreatedFailure struct {
	reason, message string
}

// preflightResults are the reasons the last scale or rollout step waited.
type preflightResults struct {
	hasDeletingMachine               bool
	controlPlaneComponentsNotHealthy bool
	etcdClusterNotHealthy            bool
	topologyVersionMismatch          bool
}

// replicas returns spec.replicas, 1 when unset (upstream's webhook default).
func (s *scope) replicas() int32 { return ptr.Deref(s.kcp.Spec.Replicas, 1) }

// maxSurge returns rolloutStrategy.rollingUpdate.maxSurge, 1 when unset.
func (s *scope) maxSurge() int32 {
	rs := s.kcp.Spec.RolloutStrategy
	if rs == nil || rs.RollingUpdate == nil || rs.RollingUpdate.MaxSurge == nil {
		return 1
	}
	return int32(rs.RollingUpdate.MaxSurge.IntValue()) //nolint:gosec // Validated to be 0 or 1.
}

// isEtcdManaged reports whether etcd is stacked on the control plane Machines (not external).
func (s *scope) isEtcdManaged() bool {
	cc := s.kcp.Spec.KubeadmConfigSpec.ClusterConfiguration
	return cc == nil || cc.Etcd.External == nil
}

// all returns the Machines sorted by name.
func (s *scope) all() []*clusterv1.Machine { return sortedMachines(s.machines) }

// deleting returns the Machines being deleted.
func (s *scope) deleting() []*clusterv1.Machine {
	return filter(s.all(), func(m *clusterv1.Machine) bool { return !m.DeletionTimestamp.IsZero() })
}

// active returns the Machines not being deleted.
func (s *scope) active() []*clusterv1.Machine {
	return filter(s.all(), func(m *clusterv1.Machine) bool { return m.DeletionTimestamp.IsZero() })
}

// upToDate reports whether a Machine matches the spec.
func (s *scope) upToDate(m *clusterv1.Machine) bool {
	_, ok := s.notUpToDate[m.Name]
	return !ok
}

// needingRollout returns the Machines, not being deleted, that do not match the spec.
func (s *scope) needingRollout() []*clusterv1.Machine {
	return filter(s.active(), func(m *clusterv1.Machine) bool { return !s.upToDate(m) })
}

// nodeNames returns the Node names of the Machines that have one.
func (s *scope) nodeNames(machines []*clusterv1.Machine) []string {
	var out []string
	for _, m := range machines {
		if m.Status.NodeRef != nil {
			out = append(out, m.Status.NodeRef.Name)
		}
	}
	return out
}

func sortedMachines(in map[string]*clusterv1.Machine) []*clusterv1.Machine {
	out := make([]*clusterv1.Machine, 0, len(in))
	for _, m := range in {
		out = append(out, m)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func filter(in []*clusterv1.Machine, keep func(*clusterv1.Machine) bool) []*clusterv1.Machine {
	var out []*clusterv1.Machine
	for _, m := range in {
		if keep(m) {
			out = append(out, m)
		}
	}
	return out
}

// oldest returns the Machine created first (by name on a tie), nil for none.
func oldest(in []*clusterv1.Machine) *clusterv1.Machine {
	if len(in) == 0 {
		return nil
	}
	return slices.MinFunc(in, byCreation)
}

// newest returns the Machine created last (by name on a tie), nil for none.
func newest(in []*clusterv1.Machine) *clusterv1.Machine {
	if len(in) == 0 {
		return nil
	}
	return slices.MaxFunc(in, byCreation)
}

// byCreation orders Machines by creation time, then by name.
func byCreation(a, b *clusterv1.Machine) int {
	if c := a.CreationTimestamp.Compare(b.CreationTimestamp.Time); c != 0 {
		return c
	}
	return cmp.Compare(a.Name, b.Name)
}

func names(in []*clusterv1.Machine) []string {
	out := make([]string, 0, len(in))
	for _, m := range in {
		out = append(out, m.Name)
	}
	return out
}

// secretClient returns the client that reads each of the cluster's Secrets once per reconcile, made from
// c on first use.
func (s *scope) secretClient(c client.Client) *secretReads {
	if s.secrets == nil {
		s.secrets = newSecretReads(c)
	}
	return s.secrets
}
