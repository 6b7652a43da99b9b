package memory

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"maps"
	"net"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	infrav1 "github.com/capstan-dev/capstan/api/infrastructure/local/v1alpha1"
	"github.com/capstan-dev/capstan/internal/pki"
	"github.com/capstan-dev/capstan/internal/providers/local/backend"
)

// kubeadm's ConfigMap of the cluster's configuration, in kube-system, and its key.
const (
	kubeadmConfigMap        = "kubeadm-config"
	clusterConfigurationKey = "ClusterConfiguration"
)

// cluster is one workload cluster of the memory backend.
type cluster struct {
	backend     *Backend
	key         types.NamespacedName
	clusterName string
	certs       backend.Certificates
	port        int
	listener    net.Listener
	tlsConfig   *tls.Config
	store       *store
	done        chan struct{}
	stopOnce    sync.Once

	mu       sync.Mutex
	machines map[string]*machine
	members  []member
	leader   uint64
	etcdTLSC *tls.Config
}

// machine is a machine of a memory cluster.
type machine struct {
	spec    backend.Machine
	readyAt time.Time
	timer   *time.Timer
	// running says the machine started: its Node is registered, and for a control plane machine its
	// etcd member and API server run.
	running bool
}

func newCluster(b *Backend, spec backend.Cluster) (*cluster, error) {
	serving := pki.APIServerCertConfig()
	if spec.ClusterName != "" {
		serving.DNSNames = append(serving.DNSNames, spec.ClusterName)
	}
	if ip := net.ParseIP(b.opts.Host); ip != nil && !ip.IsLoopback() {
		serving.IPs = append(serving.IPs, ip)
	}
	cfg, err := servingConfig(spec.Certificates.CA, serving)
	if err != nil {
		return nil, err
	}
	c := &cluster{backend: b, key: spec.Key, clusterName: spec.ClusterName, certs: spec.Certificates, tlsConfig: cfg,
		store: newStore(), done: make(chan struct{}), machines: map[string]*machine{}}
	for _, ns := range []string{metav1.NamespaceSystem, metav1.NamespaceDefault, metav1.NamespacePublic, corev1.NamespaceNodeLease} {
		if _, err := c.store.create(namespacesResource, toUnstructured(&corev1.Namespace{
			TypeMeta:   metav1.TypeMeta{Kind: "Namespace", APIVersion: "v1"},
			ObjectMeta: metav1.ObjectMeta{Name: ns},
			Status:     corev1.NamespaceStatus{Phase: corev1.NamespaceActive},
		})); err != nil {
			return nil, err
		}
	}
	return c, nil
}

func (c *cluster) status(host string) backend.ClusterStatus {
	return backend.ClusterStatus{Host: host, Port: int32(c.port), Ready: true, APIServers: c.apiServers()} //nolint:gosec // a port fits
}

func (c *cluster) stopped() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

func (c *cluster) stop() {
	c.stopOnce.Do(func() {
		close(c.done)
		_ = c.listener.Close()
		c.mu.Lock()
		for _, m := range c.machines {
			if m.timer != nil {
				m.timer.Stop()
			}
		}
		c.mu.Unlock()
	})
}

// machineNames returns the names of the cluster's machines, sorted.
func (c *cluster) machineNames() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Sorted(maps.Keys(c.machines))
}

// apiServers is how many control plane machines run.
func (c *cluster) apiServers() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, m := range c.machines {
		if m.running && m.spec.ControlPlane != nil {
			n++
		}
	}
	return n
}

// controlPlaneVersion is the version the API reports: that of the machine of node when given, else the
// newest of the running control plane machines' (the API servers behind a load balancer answer with
// theirs, the newest during an upgrade).
func (c *cluster) controlPlaneVersion(node string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	v := ""
	for _, m := range c.machines {
		if node != "" && m.spec.NodeName == node {
			return m.spec.Version
		}
		if m.running && m.spec.ControlPlane != nil && m.spec.Version > v {
			v = m.spec.Version
		}
	}
	return v
}

func (c *cluster) ensureMachine(spec backend.Machine) (backend.MachineStatus, error) {
	c.mu.Lock()
	m := c.machines[spec.Name]
	if m == nil {
		m = &machine{readyAt: time.Now().Add(c.backend.startupDelay())}
		c.machines[spec.Name] = m
	}
	m.spec = spec
	// A worker's kubelet registers through an API server: it waits for a control plane machine.
	if spec.ControlPlane == nil && !slices.ContainsFunc(mapValues(c.machines), func(o *machine) bool { return o.running && o.spec.ControlPlane != nil }) {
		c.mu.Unlock()
		return backend.MachineStatus{}, backend.ErrClusterNotReady
	}
	now := time.Now()
	if now.Before(m.readyAt) {
		if m.timer == nil {
			key := c.key
			m.timer = time.AfterFunc(m.readyAt.Sub(now), func() { c.backend.Notify(key) })
		}
		c.mu.Unlock()
		status := backend.MachineStatus{}
		if spec.ControlPlane != nil {
			status.Reason, status.Message = infrav1.ControlPlaneStartingReason, "Starting etcd and kube-apiserver"
		}
		return status, nil
	}
	first := !m.running
	m.running = true
	if spec.ControlPlane != nil {
		id := memberID(c.key, spec.NodeName)
		if first && !slices.ContainsFunc(c.members, func(x member) bool { return x.id == id }) {
			c.members = append(c.members, member{id: id, name: spec.NodeName})
			if c.leader == 0 {
				c.leader = id
			}
		}
	}
	c.mu.Unlock()
	if err := c.registerNode(spec); err != nil {
		return backend.MachineStatus{}, err
	}
	if spec.ControlPlane != nil {
		if err := c.ensureMirrorPods(spec); err != nil {
			return backend.MachineStatus{}, err
		}
		if len(spec.ControlPlane.ClusterConfiguration) > 0 {
			c.uploadClusterConfiguration(spec.ControlPlane.ClusterConfiguration)
		}
	}
	if first {
		c.backend.Notify(c.key)
	}
	status := backend.MachineStatus{NodeRegistered: true, ControlPlaneReady: spec.ControlPlane != nil}
	for _, a := range nodeAddresses(spec.NodeName) {
		status.Addresses = append(status.Addresses, backend.NodeAddress{Type: string(a.Type), Address: a.Address})
	}
	return status, nil
}

func mapValues[K comparable, V any](m map[K]V) []V {
	out := make([]V, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

func (c *cluster) deleteMachine(name string) {
	c.mu.Lock()
	m := c.machines[name]
	if m == nil {
		c.mu.Unlock()
		return
	}
	delete(c.machines, name)
	if m.timer != nil {
		m.timer.Stop()
	}
	if m.spec.ControlPlane != nil {
		c.removeEtcdMemberLocked(memberID(c.key, m.spec.NodeName))
	}
	c.mu.Unlock()
	if m.spec.ControlPlane != nil {
		c.deleteMirrorPods(m.spec.NodeName)
	}
	c.deleteNode(m.spec.NodeName)
	c.backend.Notify(c.key)
}

func (c *cluster) etcdMembers() []member {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.members)
}

func (c *cluster) etcdLeader() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.leader
}

func (c *cluster) removeEtcdMember(id uint64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.removeEtcdMemberLocked(id)
}

// removeEtcdMemberLocked removes a member; when it led, the next member leads.
func (c *cluster) removeEtcdMemberLocked(id uint64) bool {
	i := slices.IndexFunc(c.members, func(m member) bool { return m.id == id })
	if i < 0 {
		return false
	}
	c.members = slices.Delete(c.members, i, i+1)
	if c.leader == id {
		c.leader = 0
		if len(c.members) > 0 {
			c.leader = c.members[0].id
		}
	}
	return true
}

func (c *cluster) moveEtcdLeader(id uint64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !slices.ContainsFunc(c.members, func(m member) bool { return m.id == id }) {
		return false
	}
	c.leader = id
	return true
}

// etcdTLS is the TLS configuration of the cluster's etcd members: a serving certificate of the etcd CA,
// client certificates of the etcd CA only.
func (c *cluster) etcdTLS(node string) (*tls.Config, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.etcdTLSC != nil {
		return c.etcdTLSC, nil
	}
	cfg, err := servingConfig(c.certs.EtcdCA, pki.CertConfig{CommonName: "etcd", DNSNames: []string{"localhost", node},
		IPs: []net.IP{net.ParseIP("127.0.0.1")}, Usages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}})
	if err != nil {
		return nil, fmt.Errorf("issuing the etcd serving certificate: %w", err)
	}
	cfg.NextProtos = []string{"h2"}
	c.etcdTLSC = cfg
	return cfg, nil
}

func (c *cluster) clusterConfiguration() []byte {
	cm, err := c.store.get(configMapsResource, metav1.NamespaceSystem, kubeadmConfigMap)
	if err != nil {
		return nil
	}
	data, _, _ := unstructuredString(cm.Object, "data", clusterConfigurationKey)
	if data == "" {
		return nil
	}
	return []byte(data)
}
