package process

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/capstan-dev/capstan/internal/providers/local/backend"
)

// state is what a cluster directory remembers across provider restarts: the endpoint's port and each
// machine's node name and ports.
type state struct {
	// APIServerPort is the port of the LocalCluster's endpoint, where the load balancer listens.
	APIServerPort int `json:"apiServerPort"`
	// Machines are the machines that ran in the cluster, by Machine name.
	Machines map[string]*machineState `json:"machines,omitempty"`
}

// machineState is what a machine keeps.
type machineState struct {
	NodeName     string `json:"nodeName"`
	ControlPlane bool   `json:"controlPlane,omitempty"`
	// KubeletPort is the simulated kubelet's port (the Node's daemonEndpoints.kubeletEndpoint.port).
	KubeletPort int `json:"kubeletPort"`
	// APIServerPort, EtcdClientPort and EtcdPeerPort are a control plane machine's.
	APIServerPort  int `json:"apiServerPort,omitempty"`
	EtcdClientPort int `json:"etcdClientPort,omitempty"`
	EtcdPeerPort   int `json:"etcdPeerPort,omitempty"`
	// EtcdJoined: the machine's etcd member was created (the first member) or added to the cluster; its
	// data directory then holds the member and etcd starts from it.
	EtcdJoined bool `json:"etcdJoined,omitempty"`
	// EtcdLearner: the member was added as a learner (as kubeadm join adds it) and is not promoted to a
	// voting member yet; the machine's API server starts once it is.
	EtcdLearner bool `json:"etcdLearner,omitempty"`
	// InitialCluster and InitialClusterState are etcd's --initial-cluster and --initial-cluster-state when
	// the member was made (etcd ignores them once its data directory holds the member).
	InitialCluster      string `json:"initialCluster,omitempty"`
	InitialClusterState string `json:"initialClusterState,omitempty"`
	// Configuration is what the machine's processes last ran with, from the kubeadm configuration: a
	// machine whose configuration cannot be read again (backend.ControlPlane.KeepConfiguration) starts
	// with it.
	Configuration *processConfiguration `json:"configuration,omitempty"`
}

// processConfiguration is the part of a control plane machine's configuration that comes from the kubeadm
// ClusterConfiguration.
type processConfiguration struct {
	APIServerArgs    []backend.Arg    `json:"apiServerArgs,omitempty"`
	EtcdArgs         []backend.Arg    `json:"etcdArgs,omitempty"`
	APIServerVolumes []backend.Volume `json:"apiServerVolumes,omitempty"`
	// Certificates are how the machine's certificates are issued.
	Certificates backend.CertificateSettings `json:"certificates,omitzero"`
}

func stateFile(dir string) string { return filepath.Join(dir, "state.json") }

func readState(dir string) (state, error) {
	var st state
	data, err := os.ReadFile(stateFile(dir))
	if errors.Is(err, os.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return st, err
	}
	if err := json.Unmarshal(data, &st); err != nil {
		return state{}, fmt.Errorf("reading %s: %w", stateFile(dir), err)
	}
	return st, nil
}

func writeState(dir string, st state) error {
	data, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	return writeFile(stateFile(dir), append(data, '\n'))
}
