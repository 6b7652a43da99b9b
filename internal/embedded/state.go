package embedded

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/spf13/pflag"

	"github.com/capstan-dev/capstan/internal/loopback"
)

// State is the directory of one embedded management cluster and the files in it.
type State struct {
	Dir string
}

// DefaultStateDir returns ~/.capstan/<name>.
func DefaultStateDir(name string) (string, error) {
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("finding the home directory for the state of %q: %w (use --state-dir)", name, err)
	}
	return filepath.Join(home, ".capstan", name), nil
}

// PKIDir holds the certificates and keys.
func (s State) PKIDir() string { return filepath.Join(s.Dir, "pki") }

// EtcdDir is etcd's data directory: every object of the cluster.
func (s State) EtcdDir() string { return filepath.Join(s.Dir, "etcd") }

// LogDir holds one log file per process.
func (s State) LogDir() string { return filepath.Join(s.Dir, "logs") }

// Kubeconfig is the administrator's kubeconfig.
func (s State) Kubeconfig() string { return filepath.Join(s.Dir, "kubeconfig") }

// RepositoryDir is the clusterctl local repository of capstan's own providers.
func (s State) RepositoryDir() string { return filepath.Join(s.Dir, "repository") }

// ClusterctlConfig is a clusterctl configuration file that points at RepositoryDir.
func (s State) ClusterctlConfig() string { return filepath.Join(s.Dir, "clusterctl.yaml") }

// PidFile holds the pid of the running capstan up.
func (s State) PidFile() string { return filepath.Join(s.Dir, "capstan.pid") }

// PortsFile records the ports chosen on first start.
func (s State) PortsFile() string { return filepath.Join(s.Dir, "ports.json") }

// RuntimeDir holds the files of the local runtime's processes (kubeconfigs, tokens).
func (s State) RuntimeDir() string { return filepath.Join(s.Dir, "runtime") }

// Ports are the loopback ports of the cluster's servers; they are chosen once and kept, so the kubeconfig
// stays valid across restarts.
type Ports struct {
	APIServer  int `json:"apiServer"`
	EtcdClient int `json:"etcdClient"`
	EtcdPeer   int `json:"etcdPeer"`
}

// LoadOrAllocatePorts reads the ports of a previous run, or picks free ones and records them. Ports that
// another program took in between are replaced, which changes the kubeconfig.
func (s State) LoadOrAllocatePorts() (Ports, error) {
	var p Ports
	if data, err := os.ReadFile(s.PortsFile()); err == nil {
		if err := json.Unmarshal(data, &p); err != nil {
			return Ports{}, fmt.Errorf("reading %s: %w (delete it to choose new ports)", s.PortsFile(), err)
		}
	}
	for _, port := range []*int{&p.APIServer, &p.EtcdClient, &p.EtcdPeer} {
		if *port != 0 && loopback.PortFree(*port) {
			continue
		}
		free, err := loopback.FreePort()
		if err != nil {
			return Ports{}, err
		}
		*port = free
	}
	data, _ := json.MarshalIndent(p, "", "  ")
	if err := os.WriteFile(s.PortsFile(), data, 0o600); err != nil {
		return Ports{}, err
	}
	return p, nil
}

// ErrNotRunning says no capstan up is running for a state directory.
var ErrNotRunning = errors.New("not running")

// WritePid records the pid of the running capstan up; it fails when another one is running.
func (s State) WritePid() error {
	if pid, err := s.RunningPid(); err == nil {
		return fmt.Errorf("capstan up is already running for %s (pid %d): stop it with `capstan down` first", s.Dir, pid)
	}
	return os.WriteFile(s.PidFile(), []byte(strconv.Itoa(os.Getpid())), 0o600)
}

// RemovePid removes the pid file if it still names this process.
func (s State) RemovePid() {
	if data, err := os.ReadFile(s.PidFile()); err == nil && strings.TrimSpace(string(data)) == strconv.Itoa(os.Getpid()) {
		_ = os.Remove(s.PidFile())
	}
}

// RunningPid returns the pid of the capstan up running for this state directory, or ErrNotRunning.
func (s State) RunningPid() (int, error) {
	data, err := os.ReadFile(s.PidFile())
	if err != nil {
		return 0, ErrNotRunning
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil || pid <= 0 || !processAlive(pid) {
		return 0, ErrNotRunning
	}
	return pid, nil
}

func processAlive(pid int) bool {
	if err := syscall.Kill(pid, 0); err != nil {
		return false
	}
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	fields := strings.Fields(string(data))
	return len(fields) < 3 || fields[2] != "Z"
}

// StateFlags name an embedded management cluster on the command line: --name and --state-dir.
type StateFlags struct {
	// Name is the cluster's name, "default" unless given.
	Name string
	// Dir is the cluster's state directory; ~/.capstan/<name> when empty.
	Dir string
}

// AddFlags registers --name and --state-dir, which fill f.
func (f *StateFlags) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&f.Name, "name", "default", "Name of the management cluster.")
	fs.StringVar(&f.Dir, "state-dir", "", "Directory of the cluster's state; ~/.capstan/<name> when empty.")
}

// State returns the state directory of the cluster the flags name (ResolveState).
func (f StateFlags) State() (State, error) {
	return ResolveState(f.Name, f.Dir)
}

// ResolveState returns the state directory of the cluster called name: dir when set, ~/.capstan/<name>
// otherwise.
func ResolveState(name, dir string) (State, error) {
	if dir != "" {
		abs, err := filepath.Abs(dir)
		return State{Dir: abs}, err
	}
	d, err := DefaultStateDir(name)
	return State{Dir: d}, err
}

// LoadPorts reads the ports recorded by the last start.
func (s State) LoadPorts() (Ports, error) {
	var p Ports
	data, err := os.ReadFile(s.PortsFile())
	if err != nil {
		return p, err
	}
	return p, json.Unmarshal(data, &p)
}
