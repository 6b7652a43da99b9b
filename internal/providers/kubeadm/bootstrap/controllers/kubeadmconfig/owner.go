package kubeadmconfig

import (
	"context"

	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bootstrapv1 "github.com/capstan-dev/capstan/api/bootstrap/kubeadm/v1beta1"
	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/reconciler"
)

// owner is what a KubeadmConfig bootstraps: one Machine, or every instance of a MachinePool (which join as
// workers, now and on every later scale up).
type owner struct {
	// kind is "Machine" or "MachinePool".
	kind string
	obj  client.Object
	// clusterName, version, labels, dataSecretName: the Machine's, or those of the MachinePool's template.
	clusterName    string
	version        *string
	labels         map[string]string
	dataSecretName *string
	// infrastructureReady and nodeRefs are the owner's status; replicas is 1 for a Machine.
	infrastructureReady bool
	nodeRefs, replicas  int
}

func machineOwner(m *clusterv1.Machine) *owner {
	o := &owner{kind: "Machine", obj: m, clusterName: m.Spec.ClusterName, version: m.Spec.Version, labels: m.Labels,
		dataSecretName: m.Spec.Bootstrap.DataSecretName, infrastructureReady: m.Status.InfrastructureReady, replicas: 1}
	if m.Status.NodeRef != nil {
		o.nodeRefs = 1
	}
	return o
}

func machinePoolOwner(mp *clusterv1.MachinePool) *owner {
	return &owner{kind: "MachinePool", obj: mp, clusterName: mp.Spec.ClusterName, version: mp.Spec.Template.Spec.Version,
		labels: mp.Labels, dataSecretName: mp.Spec.Template.Spec.Bootstrap.DataSecretName,
		infrastructureReady: mp.Status.InfrastructureReady, nodeRefs: len(mp.Status.NodeRefs), replicas: int(ptr.Deref(mp.Spec.Replicas, 1))}
}

// getOwner returns the Machine or MachinePool that owns config, or nil while it has none.
func getOwner(ctx context.Context, c client.Reader, config *bootstrapv1.KubeadmConfig) (*owner, error) {
	machine := &clusterv1.Machine{}
	found, err := reconciler.GetOwner(ctx, c, config, "Machine", machine)
	if err != nil || found {
		return machineOwner(machine), err
	}
	pool := &clusterv1.MachinePool{}
	found, err = reconciler.GetOwner(ctx, c, config, "MachinePool", pool)
	if err != nil || !found {
		return nil, err
	}
	return machinePoolOwner(pool), nil
}

func (o *owner) name() string { return o.obj.GetName() }

func (o *owner) isPool() bool { return o.kind == "MachinePool" }

// isControlPlane reports whether the owner is a control plane Machine; the instances of a MachinePool are
// always workers.
func (o *owner) isControlPlane() bool {
	_, ok := o.labels[clusterv1.MachineControlPlaneLabel]
	return !o.isPool() && ok
}

// hasNodeRefs reports whether every Node the owner expects has joined: the Machine's, or one per replica of
// the MachinePool.
func (o *owner) hasNodeRefs() bool { return o.nodeRefs >= o.replicas }

// provisioned reports whether the owner's infrastructure may have consumed the bootstrap data, so that it
// must not change. A MachinePool's data is read again by every instance it creates later, so it is never
// final: it follows the KubeadmConfig, and a new bootstrap token when the old one goes.
func (o *owner) provisioned() bool {
	return !o.isPool() && (o.infrastructureReady || o.nodeRefs > 0)
}
