package localmachine

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/capstan-dev/capstan/api/infrastructure/local/v1alpha1"
	"github.com/capstan-dev/capstan/internal/providers/local/backend"
	"github.com/capstan-dev/capstan/internal/providers/local/nodeboot"
)

// errBootstrapDataInvalid wraps what makes a Machine's bootstrap data unusable.
var errBootstrapDataInvalid = errors.New("invalid bootstrap data")

// readBootstrapData reads and parses the Machine's bootstrap data Secret (keys `value` and `format`).
func (r *Reconciler) readBootstrapData(ctx context.Context, s *scope) (*nodeboot.Data, error) {
	name := ptr.Deref(s.machine.Spec.Bootstrap.DataSecretName, "")
	secret := &corev1.Secret{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: s.machine.Namespace, Name: name}, secret); err != nil {
		return nil, fmt.Errorf("getting the bootstrap data Secret %s: %w", name, err)
	}
	value, ok := secret.Data["value"]
	if !ok {
		return nil, fmt.Errorf("%w: Secret %s has no value key", errBootstrapDataInvalid, name)
	}
	d, err := nodeboot.Parse(string(secret.Data["format"]), value)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errBootstrapDataInvalid, err)
	}
	return d, nil
}

// desiredMachine is what the backend runs for the Machine, as a node booted with its bootstrap data would:
// the Node's name, labels and taints from nodeRegistration, and for a control plane Machine (labelled
// cluster.x-k8s.io/control-plane, or whose data runs kubeadm init or join --control-plane) the API
// server's and etcd's configuration from the kubeadm ClusterConfiguration: the data's own for kubeadm
// init, the one kubeadm init uploaded to the workload cluster for kubeadm join.
func (r *Reconciler) desiredMachine(ctx context.Context, s *scope, d *nodeboot.Data, providerID string) (backend.Machine, error) {
	m := s.machine
	node, err := d.Node()
	if err != nil {
		return backend.Machine{}, fmt.Errorf("%w: %w", errBootstrapDataInvalid, err)
	}
	out := backend.Machine{
		Name: m.Name, NodeName: node.Name, ProviderID: providerID, Version: ptr.Deref(m.Spec.Version, ""),
		FailureDomain: ptr.Deref(m.Spec.FailureDomain, ""),
		Labels:        node.Labels, Taints: node.Taints, DefaultTaints: node.DefaultTaints,
		Ready: s.localMachine.Annotations[infrav1.NodeReadyAnnotation],
	}
	if out.NodeName == "" {
		out.NodeName = m.Name
	}
	if !isControlPlane(m) && !d.ControlPlane() {
		return out, nil
	}
	cp := &backend.ControlPlane{}
	for _, f := range d.Files {
		cp.Files = append(cp.Files, backend.File{Path: f.Path, Content: f.Content, Mode: f.Mode})
	}
	var cc *nodeboot.ClusterConfiguration
	switch d.Command {
	case nodeboot.CommandInit:
		cc = d.Kubeadm.Cluster
		cp.ClusterConfiguration = d.ClusterConfigurationDocument()
	case nodeboot.CommandJoin:
		key, _ := backend.ClusterOf(s.cluster)
		raw, err := r.Backend.ClusterConfiguration(ctx, key)
		switch {
		case errors.Is(err, backend.ErrClusterNotReady):
			// No API server answers: after all the control plane machines stopped, the one that
			// answers may need this machine's etcd member for quorum. A machine that ran starts with what
			// it last ran with, as a node restarts its static Pods from their manifests.
			cp.KeepConfiguration = true
		case err != nil:
			return backend.Machine{}, err
		}
		if raw != nil {
			if cc, err = nodeboot.ParseClusterConfiguration(raw); err != nil {
				return backend.Machine{}, fmt.Errorf("reading the workload cluster's kube-system/kubeadm-config ConfigMap: %w", err)
			}
		}
	}
	if cc != nil {
		if cc.Etcd.External != nil {
			return backend.Machine{}, fmt.Errorf("%w: etcd.external is not supported: the local provider runs a local etcd member on each control plane machine", errBootstrapDataInvalid)
		}
		for _, a := range cc.APIServer.ExtraArgs {
			cp.APIServerArgs = append(cp.APIServerArgs, backend.Arg{Name: a.Name, Value: a.Value})
		}
		for _, v := range cc.APIServer.ExtraVolumes {
			cp.APIServerVolumes = append(cp.APIServerVolumes, backend.Volume{HostPath: v.HostPath, MountPath: v.MountPath})
		}
		cp.Certificates.KeyAlgorithm = cc.EncryptionAlgorithm
		if cc.CertificateValidityPeriod != nil {
			cp.Certificates.Validity = cc.CertificateValidityPeriod.Duration
		}
		if cc.Etcd.Local != nil {
			for _, a := range cc.Etcd.Local.ExtraArgs {
				cp.EtcdArgs = append(cp.EtcdArgs, backend.Arg{Name: a.Name, Value: a.Value})
			}
		}
	}
	if err := backend.CheckControlPlane(cp); err != nil {
		return backend.Machine{}, fmt.Errorf("%w: %w", errBootstrapDataInvalid, err)
	}
	out.ControlPlane = cp
	return out, nil
}
