// Package userdata renders the bootstrap data of a machine, what it runs on its first boot to become a
// Kubernetes node, in the formats of upstream's kubeadm bootstrap provider: cloud-init's #cloud-config
// and Ignition v3. Both write the same files (the kubeadm configuration included) and run the same
// commands, at the paths upstream uses, so that anything that reads upstream's bootstrap data reads these.
package userdata

import (
	"fmt"

	bootstrapv1 "github.com/capstan-dev/capstan/api/bootstrap/kubeadm/v1beta1"
)

// Step is what kubeadm does on the machine.
type Step int

const (
	// Init runs `kubeadm init`: the first control plane machine.
	Init Step = iota
	// JoinControlPlane runs `kubeadm join` as an additional control plane machine.
	JoinControlPlane
	// JoinWorker runs `kubeadm join` as a worker.
	JoinWorker
)

// Paths and commands of the bootstrap data, as upstream's.
const (
	// CloudInitKubeadmInitConfig is where cloud-init writes the kubeadm configuration of `kubeadm init`.
	CloudInitKubeadmInitConfig = "/run/kubeadm/kubeadm.yaml"
	// CloudInitKubeadmJoinConfig is where cloud-init writes the kubeadm configuration of `kubeadm join`.
	CloudInitKubeadmJoinConfig = "/run/kubeadm/kubeadm-join-config.yaml"
	// IgnitionKubeadmConfig is where Ignition writes the kubeadm configuration (init or join).
	IgnitionKubeadmConfig = "/etc/kubeadm.yml"
	// IgnitionKubeadmScript is the script Ignition's kubeadm.service runs.
	IgnitionKubeadmScript = "/etc/kubeadm.sh"
	// SentinelFile is written once kubeadm succeeded.
	SentinelFile = "/run/cluster-api/bootstrap-success.complete"
	// PlaceholderFile creates /run/cluster-api with cloud-init (mkdir does not work on Windows).
	PlaceholderFile = "/run/cluster-api/placeholder"
	// RetryJoinScript retries `kubeadm join` when useExperimentalRetryJoin is set.
	RetryJoinScript = "/usr/local/bin/kubeadm-bootstrap-script"
)

// Input is everything the bootstrap data of one machine holds.
type Input struct {
	// Step says which kubeadm command runs.
	Step Step
	// ClusterConfiguration and InitConfiguration are the kubeadm YAML of an Init step.
	ClusterConfiguration, InitConfiguration string
	// JoinConfiguration is the kubeadm YAML of a join step.
	JoinConfiguration string

	// Files are written before kubeadm runs: the cluster certificates first, then the KubeadmConfig's
	// files, whose contentFrom is already resolved into content.
	Files []bootstrapv1.File
	// Users are created, with passwdFrom already resolved into passwd.
	Users []bootstrapv1.User

	NTP                      *bootstrapv1.NTP
	DiskSetup                *bootstrapv1.DiskSetup
	Mounts                   []bootstrapv1.MountPoints
	BootCommands             []string
	PreKubeadmCommands       []string
	PostKubeadmCommands      []string
	Verbosity                *int32
	UseExperimentalRetryJoin bool
}

// verbosityFlag is kubeadm's --v flag, "" when unset.
func (in *Input) verbosityFlag() string {
	if in.Verbosity == nil {
		return ""
	}
	return fmt.Sprintf("--v %d", *in.Verbosity)
}

// subcommand is "init" or "join".
func (in *Input) subcommand() string {
	if in.Step == Init {
		return "init"
	}
	return "join"
}

// Render returns the bootstrap data of input in format; ignition is the KubeadmConfig's spec.ignition.
// The second result lists warnings about ignition's additionalConfig.
func Render(format bootstrapv1.Format, input *Input, ignition *bootstrapv1.IgnitionSpec) ([]byte, []string, error) {
	switch format {
	case "", bootstrapv1.CloudConfig:
		data, err := CloudConfig(input)
		return data, nil, err
	case bootstrapv1.Ignition:
		return Ignition(input, ignition)
	default:
		return nil, nil, fmt.Errorf("unknown format %q: use cloud-config or ignition", format)
	}
}
