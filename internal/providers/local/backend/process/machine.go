package process

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	infrav1 "github.com/capstan-dev/capstan/api/infrastructure/local/v1alpha1"
	"github.com/capstan-dev/capstan/internal/loopback"
	"github.com/capstan-dev/capstan/internal/providers/local/backend"
	"github.com/capstan-dev/capstan/internal/supervisor"
)

// machine is one machine of a cluster: its simulated kubelet and, for a control plane machine, its etcd
// member and kube-apiserver, with their data under <cluster>/machines/<machine>/.
type machine struct {
	c    *cluster
	name string
	dir  string
	log  logr.Logger

	spec    backend.Machine
	kubelet *kubelet

	// Control plane machines only.
	etcd, apiserver *supervisor.Process
	binary          choice
	etcdArgs        []string
	apiServerArgs   []string
	startedAt       metav1.Time
	// apiReady: the probe loop found the API server's /readyz answering.
	apiReady bool
	// probeFailures counts the probes in a row that found a ready API server not answering; it stops
	// being ready at probeFallThreshold (a slow answer on a loaded machine is not a failure).
	probeFailures int
	// lastStatus is the message of the machine's status last reported, to log each new one once.
	lastStatus string
	// leaving: the machine's Machine is being deleted and its API server was taken out of the endpoint
	// (leaveEndpoint); it is not started again.
	leaving bool
	// podStatus remembers the mirror Pods' states last written, by component; guarded by the cluster's
	// nodeOps (only refreshMirrorPods uses it).
	podStatus map[string]string
}

func machineDir(clusterDir, name string) string { return filepath.Join(clusterDir, "machines", name) }

func (m *machine) pki() machinePKI   { return machinePKI{dir: filepath.Join(m.dir, "pki")} }
func (m *machine) filesRoot() string { return filepath.Join(m.dir, "files") }
func (m *machine) logFile(name string) string {
	return filepath.Join(m.dir, "logs", name+".log")
}

// state returns the machine's persisted state (never nil for a machine of c.machines).
func (m *machine) state() *machineState { return m.c.st.Machines[m.name] }

// ensureControlPlane starts the machine's etcd member (creating the cluster's first member, or adding
// the member to the cluster as `kubeadm join --control-plane` does) and API server, or restarts them
// when their configuration changed. It returns a status reason and message while it cannot start them.
func (m *machine) ensureControlPlane(ctx context.Context) (string, string, error) {
	st := m.state()
	cp := m.spec.ControlPlane
	if cp.KeepConfiguration {
		if !st.EtcdJoined || st.Configuration == nil {
			return infrav1.WaitingForControlPlaneReason, "Waiting for a kube-apiserver of the cluster to answer: joining reads the kubeadm configuration from it", nil
		}
		if m.etcd == nil {
			m.log.Info("Starting etcd and kube-apiserver with the configuration they last ran with: no kube-apiserver of the cluster answers to read the kubeadm configuration")
		}
		kept := *cp
		kept.APIServerArgs, kept.EtcdArgs, kept.APIServerVolumes = st.Configuration.APIServerArgs, st.Configuration.EtcdArgs, st.Configuration.APIServerVolumes
		kept.Certificates = st.Configuration.Certificates
		cp = &kept
	}
	if err := m.writeFiles(cp.Files); err != nil {
		return "", "", err
	}
	if !st.EtcdJoined {
		reason, msg, err := m.joinEtcd(ctx)
		if err != nil || reason != "" {
			return reason, msg, err
		}
	}
	m.binary = m.c.b.binaries.forVersion(m.spec.Version)
	etcdArgs := m.etcdArgsFor(cp)
	apiArgs := m.apiServerArgsFor(cp)
	if conf := (processConfiguration{APIServerArgs: cp.APIServerArgs, EtcdArgs: cp.EtcdArgs, APIServerVolumes: cp.APIServerVolumes, Certificates: cp.Certificates}); st.Configuration == nil || !reflect.DeepEqual(*st.Configuration, conf) {
		st.Configuration = &conf
		if err := m.c.saveState(); err != nil {
			return "", "", err
		}
	}
	certsChanged := certsVersion(m.c.certsVersion, cp.Certificates) != m.certsVersion()
	if m.etcd == nil || certsChanged || !equal(etcdArgs, m.etcdArgs) || m.apiserver == nil || !equal(apiArgs, m.apiServerArgs) {
		if err := m.pki().issue(m.c.certs, m.c.clusterName, st.NodeName, cp.Certificates, time.Now()); err != nil {
			return "", "", err
		}
		m.markCerts(cp.Certificates)
	}
	if m.etcd == nil || certsChanged || !equal(etcdArgs, m.etcdArgs) {
		if m.etcd != nil {
			m.log.Info("Restarting etcd: its configuration changed")
			m.etcd.Stop()
		}
		m.etcdArgs = etcdArgs
		ports := []int{st.EtcdClientPort, st.EtcdPeerPort}
		m.etcd = m.c.run(m.dir, componentEtcd, m.c.b.opts.EtcdPath, etcdArgs, func(context.Context) error {
			for _, port := range ports {
				if !loopback.PortFree(port) {
					return &portInUseError{port: port}
				}
			}
			return nil
		}, m.log)
		m.startedAt = metav1.Now()
	}
	if st.EtcdLearner {
		// A member that does not run cannot catch up: why it does not run says more than etcd's refusal.
		if msg := etcdFailure(m.etcd.State()); msg != "" {
			return infrav1.ProcessesFailedReason, msg, nil
		}
		if reason, msg := m.promoteEtcd(ctx); reason != "" {
			return reason, msg, nil
		}
	}
	if m.leaving {
		return infrav1.LeftEndpointReason, "The Machine is being deleted: its kube-apiserver left the cluster's endpoint and stopped", nil
	}
	if m.apiserver == nil || certsChanged || !equal(apiArgs, m.apiServerArgs) {
		if m.apiserver != nil {
			m.log.Info("Restarting kube-apiserver: its configuration or version changed", "binary", m.binary.Path)
			m.apiserver.Stop()
		}
		m.apiServerArgs = apiArgs
		m.apiReady = false
		m.apiserver = m.c.run(m.dir, componentAPIServer, m.binary.Path, apiArgs, m.waitForEtcd, m.log)
	}
	return "", "", nil
}

func equal(a, b []string) bool { return strings.Join(a, "\x00") == strings.Join(b, "\x00") }

func (m *machine) certsVersion() string {
	data, _ := os.ReadFile(filepath.Join(m.pki().dir, "certs-version"))
	return string(data)
}

func (m *machine) markCerts(settings backend.CertificateSettings) {
	_ = writeFile(filepath.Join(m.pki().dir, "certs-version"), []byte(certsVersion(m.c.certsVersion, settings)))
}

// certsVersion is what the machine's certificates were issued from: the cluster's CAs (their version) and
// how they are issued, so that a change of either issues them again.
func certsVersion(cas string, settings backend.CertificateSettings) string {
	if settings == (backend.CertificateSettings{}) {
		return cas
	}
	return fmt.Sprintf("%s %s %s", cas, settings.KeyAlgorithm, settings.Validity)
}

// joinEtcd makes the machine's etcd member: the first of the cluster when no other machine has one,
// otherwise a member added to the cluster through the others, as kubeadm join adds it (EtcdLearnerMode, on
// by default since Kubernetes v1.32): a learner, which does not count for quorum until it is promoted
// (promoteEtcd), then the process starts with --initial-cluster-state=existing. A voting member added
// before it runs would leave a cluster of one without quorum until it started.
func (m *machine) joinEtcd(ctx context.Context) (string, string, error) {
	st := m.state()
	peer := etcdURL(st.EtcdPeerPort)
	var others []int
	for name, o := range m.c.st.Machines {
		if name != m.name && o.ControlPlane && o.EtcdJoined {
			others = append(others, o.EtcdClientPort)
		}
	}
	if len(others) == 0 {
		m.log.Info("Creating the cluster's first etcd member", "member", st.NodeName)
		st.InitialCluster = st.NodeName + "=" + peer
		st.InitialClusterState = "new"
	} else {
		members, err := etcdMembers(ctx, m.c.etcdTLS, others...)
		if err != nil {
			return infrav1.WaitingForEtcdReason, "Waiting for a healthy etcd member to add this machine's member to the cluster", nil
		}
		found, learner := false, false
		for _, mem := range members.Members {
			for _, u := range mem.PeerURLs {
				if u == peer {
					found, learner = true, mem.IsLearner
				}
			}
		}
		if !found {
			cli, err := etcdClient(m.c.etcdTLS, others...)
			if err != nil {
				return "", "", err
			}
			actx, cancel := context.WithTimeout(ctx, 10*time.Second)
			resp, err := cli.MemberAddAsLearner(actx, []string{peer})
			cancel()
			_ = cli.Close()
			if err != nil {
				m.log.Info("Adding the etcd member failed; retrying", "error", err.Error())
				return infrav1.WaitingForEtcdReason, fmt.Sprintf("Adding the etcd member to the cluster: %s", err), nil
			}
			m.log.Info("Added the machine's etcd member to the cluster as a learner", "member", st.NodeName, "id", fmt.Sprintf("%x", resp.Member.ID))
			members.Members, learner = resp.Members, true
		}
		st.EtcdLearner = learner
		var initial []string
		for _, mem := range members.Members {
			name := mem.Name
			for _, u := range mem.PeerURLs {
				if u == peer {
					name = st.NodeName
				}
				if name != "" {
					initial = append(initial, name+"="+u)
				}
			}
		}
		sort.Strings(initial)
		st.InitialCluster = strings.Join(initial, ",")
		st.InitialClusterState = "existing"
	}
	st.EtcdJoined = true
	if err := m.c.saveState(); err != nil {
		return "", "", err
	}
	return "", "", nil
}

// promoteEtcd promotes the machine's learner member to a voting member, as kubeadm join does once the
// member runs; etcd refuses until the learner has caught up with the leader, and the machine waits (its
// API server starts once the member votes). It returns the reason and message of the wait, "" once
// promoted.
func (m *machine) promoteEtcd(ctx context.Context) (string, string) {
	st := m.state()
	waiting := func(msg string) (string, string) {
		return infrav1.WaitingForEtcdReason, "Waiting for the etcd member to catch up with the leader before it becomes a voting member: " + msg
	}
	var others []int
	for name, o := range m.c.st.Machines {
		if name != m.name && o.ControlPlane && o.EtcdJoined && !o.EtcdLearner {
			others = append(others, o.EtcdClientPort)
		}
	}
	if len(others) == 0 {
		return waiting("no voting member to promote it through")
	}
	cli, err := etcdClient(m.c.etcdTLS, others...)
	if err != nil {
		return waiting(err.Error())
	}
	defer func() { _ = cli.Close() }()
	lctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	members, err := cli.MemberList(lctx)
	cancel()
	if err != nil {
		return waiting(err.Error())
	}
	peer := etcdURL(st.EtcdPeerPort)
	for _, mem := range members.Members {
		if !slices.Contains(mem.PeerURLs, peer) {
			continue
		}
		if mem.IsLearner {
			pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			_, err := cli.MemberPromote(pctx, mem.ID)
			cancel()
			if err != nil {
				return waiting(err.Error())
			}
			m.log.Info("Promoted the machine's etcd member to a voting member", "member", st.NodeName, "id", fmt.Sprintf("%x", mem.ID))
		}
		st.EtcdLearner = false
		if err := m.c.saveState(); err != nil {
			return waiting(err.Error())
		}
		return "", ""
	}
	return waiting("the member is not in the cluster")
}

// writeFiles writes the bootstrap data's files under the machine's files/ directory, the root of the
// simulated node's file system.
func (m *machine) writeFiles(files []backend.File) error {
	for _, f := range files {
		p := filepath.Join(m.filesRoot(), filepath.FromSlash(path.Clean("/"+f.Path)))
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			return err
		}
		mode := f.Mode.Perm()
		if mode == 0 {
			mode = 0o600
		}
		old, err := os.ReadFile(p)
		if err == nil && string(old) == string(f.Content) {
			continue
		}
		if err := os.WriteFile(p, f.Content, mode|0o600); err != nil {
			return fmt.Errorf("writing %s: %w", f.Path, err)
		}
	}
	return nil
}

// nodePath maps a path an argument names, as the component sees it (through extraVolumes), to the file
// the bootstrap data wrote under files/; other values are kept.
func (m *machine) nodePath(value string, volumes []backend.Volume) string {
	if !strings.HasPrefix(value, "/") {
		return value
	}
	host := value
	for _, v := range volumes {
		mp := path.Clean(v.MountPath)
		if value == mp || strings.HasPrefix(value, mp+"/") {
			host = path.Join(v.HostPath, strings.TrimPrefix(value, mp))
			break
		}
	}
	p := filepath.Join(m.filesRoot(), filepath.FromSlash(path.Clean(host)))
	if _, err := os.Stat(p); err == nil {
		return p
	}
	return value
}

func (m *machine) etcdArgsFor(cp *backend.ControlPlane) []string {
	st := m.state()
	p := m.pki()
	args := map[string]string{
		"name":                        st.NodeName,
		"data-dir":                    filepath.Join(m.dir, "etcd"),
		"listen-client-urls":          etcdURL(st.EtcdClientPort),
		"advertise-client-urls":       etcdURL(st.EtcdClientPort),
		"listen-peer-urls":            etcdURL(st.EtcdPeerPort),
		"initial-advertise-peer-urls": etcdURL(st.EtcdPeerPort),
		"initial-cluster":             st.InitialCluster,
		"initial-cluster-state":       st.InitialClusterState,
		"client-cert-auth":            "true",
		"trusted-ca-file":             p.cert("etcd-ca"),
		"cert-file":                   p.cert("etcd-server"),
		"key-file":                    p.key("etcd-server"),
		"peer-client-cert-auth":       "true",
		"peer-trusted-ca-file":        p.cert("etcd-ca"),
		"peer-cert-file":              p.cert("etcd-peer"),
		"peer-key-file":               p.key("etcd-peer"),
		"snapshot-count":              "10000",
		// A development cluster on one machine: skipping fsync makes writes fast; a process crash loses
		// nothing, a power cut may.
		"unsafe-no-fsync": "true",
	}
	for _, a := range cp.EtcdArgs {
		args[a.Name] = m.nodePath(a.Value, nil)
	}
	return flags(args)
}

func (m *machine) apiServerArgsFor(cp *backend.ControlPlane) []string {
	st := m.state()
	p := m.pki()
	c := m.c
	args := map[string]string{
		"advertise-address":                  "127.0.0.1",
		"bind-address":                       "127.0.0.1",
		"secure-port":                        strconv.Itoa(st.APIServerPort),
		"etcd-servers":                       etcdURL(st.EtcdClientPort),
		"etcd-cafile":                        p.cert("etcd-ca"),
		"etcd-certfile":                      p.cert("apiserver-etcd-client"),
		"etcd-keyfile":                       p.key("apiserver-etcd-client"),
		"tls-cert-file":                      p.cert("apiserver"),
		"tls-private-key-file":               p.key("apiserver"),
		"client-ca-file":                     p.cert("ca"),
		"kubelet-client-certificate":         p.cert("apiserver-kubelet-client"),
		"kubelet-client-key":                 p.key("apiserver-kubelet-client"),
		"kubelet-certificate-authority":      p.cert("ca"),
		"kubelet-preferred-address-types":    "InternalIP",
		"proxy-client-cert-file":             p.cert("front-proxy-client"),
		"proxy-client-key-file":              p.key("front-proxy-client"),
		"requestheader-client-ca-file":       p.cert("front-proxy-ca"),
		"requestheader-allowed-names":        "front-proxy-client",
		"requestheader-extra-headers-prefix": "X-Remote-Extra-",
		"requestheader-group-headers":        "X-Remote-Group",
		"requestheader-username-headers":     "X-Remote-User",
		"service-account-key-file":           c.pki.serviceAccountPub(),
		"service-account-signing-key-file":   c.pki.serviceAccount(),
		"service-account-issuer":             "https://kubernetes.default.svc.cluster.local",
		"service-cluster-ip-range":           serviceCIDR,
		"authorization-mode":                 "Node,RBAC",
		"enable-admission-plugins":           "NodeRestriction",
		// No controller-manager creates the default ServiceAccounts nor removes the not-ready taint of
		// new Nodes, so the admission plugins that rely on them are off.
		"disable-admission-plugins": "ServiceAccount,TaintNodesByCondition",
		"allow-privileged":          "true",
		// The API servers listen on loopback only, which the `kubernetes` Service's endpoints may not
		// hold; nothing in the cluster runs pods that would use them.
		"endpoint-reconciler-type":     "none",
		"enable-priority-and-fairness": "false",
		"profiling":                    "false",
	}
	for _, a := range cp.APIServerArgs {
		args[a.Name] = m.nodePath(a.Value, cp.APIServerVolumes)
	}
	return flags(args)
}

// flags renders arguments as --name=value, sorted by name.
func flags(args map[string]string) []string {
	out := make([]string, 0, len(args))
	for k, v := range args {
		out = append(out, "--"+k+"="+v)
	}
	sort.Strings(out)
	return out
}

// waitForEtcd delays kube-apiserver's start until the machine's etcd member answers, and until its own
// port is free.
func (m *machine) waitForEtcd(ctx context.Context) error {
	st := m.state()
	client := &http.Client{Timeout: time.Second, Transport: &http.Transport{TLSClientConfig: m.c.etcdTLS}}
	defer client.CloseIdleConnections()
	deadline := time.Now().Add(60 * time.Second)
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, etcdURL(st.EtcdClientPort)+"/health", nil)
		if err != nil {
			return err
		}
		resp, err := client.Do(req)
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("waiting for etcd to answer on port %d", st.EtcdClientPort)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	if !loopback.PortFree(st.APIServerPort) {
		return &portInUseError{port: st.APIServerPort}
	}
	return nil
}

// staticPod returns what the simulated kubelet serves of one of the machine's static Pods.
func (m *machine) staticPod(namespace, name string) (staticPod, bool) {
	st := m.state()
	if namespace != metav1.NamespaceSystem || m.spec.ControlPlane == nil {
		return staticPod{}, false
	}
	switch name {
	case componentEtcd + "-" + st.NodeName:
		return staticPod{container: componentEtcd, logFile: m.logFile(componentEtcd),
			ports: map[int32]int{2379: st.EtcdClientPort, 2380: st.EtcdPeerPort}}, true
	case componentAPIServer + "-" + st.NodeName:
		return staticPod{container: componentAPIServer, logFile: m.logFile(componentAPIServer),
			ports: map[int32]int{6443: st.APIServerPort}}, true
	case componentControllerManager + "-" + st.NodeName, componentScheduler + "-" + st.NodeName:
		c := strings.TrimSuffix(name, "-"+st.NodeName)
		return staticPod{container: c, logFile: m.logFile(c), ports: map[int32]int{}}, true
	}
	return staticPod{}, false
}

// controlPlaneStatus derives a control plane machine's state from its processes.
func (m *machine) controlPlaneStatus() (bool, string, string) {
	if m.etcd == nil || m.apiserver == nil {
		return false, infrav1.ControlPlaneStartingReason, "Starting etcd and kube-apiserver"
	}
	etcd, api := m.etcd.State(), m.apiserver.State()
	failed := func(format string, args ...any) (bool, string, string) {
		return false, infrav1.ProcessesFailedReason, fmt.Sprintf(format, args...)
	}
	switch {
	case portInUse(etcd) != 0:
		return failed("%s", etcdFailure(etcd))
	case portInUse(api) != 0:
		return failed("Port %d of kube-apiserver is in use by another process", portInUse(api))
	case !etcd.Running && etcd.Err != nil && etcd.Exits > 0:
		return failed("%s", etcdFailure(etcd))
	case !api.Running && api.Err != nil && api.Exits > 0:
		return failed("kube-apiserver exited (%s); restarting it", api.Err)
	case !etcd.Running && etcd.Err != nil:
		return failed("%s", etcdFailure(etcd))
	case etcd.Running && !m.apiReady && m.c.etcdQuorumWait() != "":
		return false, infrav1.WaitingForEtcdReason, m.c.etcdQuorumWait()
	case !etcd.Running || !api.Running:
		return false, infrav1.ControlPlaneStartingReason, "Starting etcd and kube-apiserver"
	case !m.apiReady:
		return false, infrav1.ControlPlaneStartingReason, "Waiting for kube-apiserver to be ready"
	}
	return true, "", ""
}

// etcdFailure says why the etcd process of a machine does not run, "" while it runs or starts.
func etcdFailure(s supervisor.State) string {
	switch {
	case portInUse(s) != 0:
		return fmt.Sprintf("Port %d of etcd is in use by another process", portInUse(s))
	case s.Running || s.Err == nil:
		return ""
	case s.Exits > 0:
		return fmt.Sprintf("etcd exited (%s); restarting it", s.Err)
	default:
		return fmt.Sprintf("etcd cannot start: %s", s.Err)
	}
}

// etcdQuorumWait says, while fewer of the cluster's etcd members run than its quorum, which members it
// waits for; "" otherwise. The members are those of the control plane machines that joined etcd; each
// member's process starts when its machine is ensured. Called with mu held.
func (c *cluster) etcdQuorumWait() string {
	var members, waiting []string
	for name, st := range c.st.Machines {
		if !st.ControlPlane || !st.EtcdJoined || st.EtcdLearner {
			continue
		}
		members = append(members, name)
		if m := c.machines[name]; m == nil || m.etcd == nil || !m.etcd.State().Running {
			waiting = append(waiting, name)
		}
	}
	running, quorum := len(members)-len(waiting), len(members)/2+1
	if running >= quorum {
		return ""
	}
	sort.Strings(waiting)
	return fmt.Sprintf("Waiting for etcd quorum: %d of %d members run, %d needed; waiting for the members of machines %s to start",
		running, len(members), quorum, strings.Join(waiting, ", "))
}

// stop stops the machine's processes and its kubelet.
func (m *machine) stop() {
	if m.apiserver != nil {
		m.apiserver.Stop()
	}
	if m.etcd != nil {
		m.etcd.Stop()
	}
	if m.kubelet != nil {
		m.kubelet.stop()
		m.kubelet = nil
	}
}

// portInUseError says a process cannot start because its port is taken by another process.
type portInUseError struct{ port int }

func (e *portInUseError) Error() string {
	return fmt.Sprintf("port %d is in use by another process", e.port)
}

// portInUse returns the port a process cannot start on because another process holds it, 0 when none.
func portInUse(s supervisor.State) int {
	var p *portInUseError
	if errors.As(s.Err, &p) {
		return p.port
	}
	return 0
}

// hashOf returns a short hash of strings.
func hashOf(parts ...string) string {
	h := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
	return hex.EncodeToString(h[:8])
}
