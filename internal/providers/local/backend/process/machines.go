package process

import (
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	infrav1 "github.com/capstan-dev/capstan/api/infrastructure/local/v1alpha1"
	"github.com/capstan-dev/capstan/internal/loopback"
	"github.com/capstan-dev/capstan/internal/providers/local/backend"
)

// ensureMachine starts a machine or brings it to its spec, then registers its Node (a worker's once an
// API server is ready behind the endpoint, a control plane machine's once its own API server is ready).
func (c *cluster) ensureMachine(ctx context.Context, spec backend.Machine) (backend.MachineStatus, error) {
	c.mu.Lock()
	if !c.started || c.removed {
		c.mu.Unlock()
		return backend.MachineStatus{}, backend.ErrClusterNotReady
	}
	if spec.NodeName == "" {
		spec.NodeName = spec.Name
	}
	m, err := c.machine(spec)
	if err != nil {
		c.mu.Unlock()
		return backend.MachineStatus{}, err
	}
	st := m.state()
	status := backend.MachineStatus{}
	if m.kubelet == nil {
		if m.kubelet, err = startKubelet(st.KubeletPort, st.NodeName, c.certs.CA, m.staticPod, m.log); err != nil {
			c.mu.Unlock()
			return status, fmt.Errorf("starting the simulated kubelet of Node %s: %w", st.NodeName, err)
		}
	}
	ownAPIReady := true
	if spec.ControlPlane != nil {
		reason, msg, err := m.ensureControlPlane(ctx)
		if err != nil {
			c.mu.Unlock()
			return status, err
		}
		if reason != "" {
			status.Reason, status.Message = reason, msg
		} else {
			status.ControlPlaneReady, status.Reason, status.Message = m.controlPlaneStatus()
		}
		status.VersionFallback = m.binary.Fallback
		if status.Message != m.lastStatus && status.Reason != "" {
			m.log.Info("The control plane machine is not ready: "+status.Message, "reason", status.Reason)
		}
		m.lastStatus = status.Message
		// The probe loop sees a crash a moment after the supervisor does.
		ownAPIReady = m.apiReady && m.apiserver.State().Running && m.etcd.State().Running
		if !ownAPIReady && status.ControlPlaneReady {
			status.ControlPlaneReady = false
			status.Reason, status.Message = infrav1.ControlPlaneStartingReason, "Waiting for kube-apiserver to be ready"
		}
	}
	node := newNodeSpec(spec, st.KubeletPort)
	c.mu.Unlock()

	client, ready := c.readyClient()
	if !ready || !ownAPIReady {
		if spec.ControlPlane != nil {
			return status, nil
		}
		return status, backend.ErrClusterNotReady
	}
	c.nodeOps.Lock()
	if err := registerNode(ctx, client, node); err != nil {
		c.nodeOps.Unlock()
		return status, err
	}
	c.statusMu.Lock()
	c.nodes[spec.Name] = node
	c.statusMu.Unlock()
	c.nodeOps.Unlock()
	if spec.ControlPlane != nil && len(spec.ControlPlane.ClusterConfiguration) > 0 {
		if err := uploadClusterConfiguration(ctx, client, spec.ControlPlane.ClusterConfiguration); err != nil {
			return status, err
		}
	}
	status.NodeRegistered = true
	for _, a := range nodeAddresses(node.Name) {
		status.Addresses = append(status.Addresses, backend.NodeAddress{Type: string(a.Type), Address: a.Address})
	}
	if spec.ControlPlane != nil {
		c.pokeNodes()
	}
	return status, nil
}

// machine returns the machine of spec, created (ports chosen, recorded) when new. Called with mu held.
func (c *cluster) machine(spec backend.Machine) (*machine, error) {
	st := c.st.Machines[spec.Name]
	if st == nil {
		st = &machineState{NodeName: spec.NodeName}
		c.st.Machines[spec.Name] = st
	}
	changed := false
	if st.NodeName != spec.NodeName {
		if st.EtcdJoined || c.hasNode(spec.Name) {
			return nil, fmt.Errorf("the Node of machine %s is %s: its name cannot change to %s", spec.Name, st.NodeName, spec.NodeName)
		}
		st.NodeName, changed = spec.NodeName, true
	}
	if spec.ControlPlane != nil && !st.ControlPlane {
		if c.hasNode(spec.Name) {
			return nil, fmt.Errorf("machine %s joined as a worker: it cannot become a control plane machine", spec.Name)
		}
		st.ControlPlane, changed = true, true
	}
	for _, p := range []*int{&st.KubeletPort, &st.APIServerPort, &st.EtcdClientPort, &st.EtcdPeerPort} {
		if !st.ControlPlane && p != &st.KubeletPort {
			continue
		}
		if *p == 0 || (!c.portOwned(*p) && !loopback.PortFree(*p)) {
			port, err := loopback.FreePort()
			if err != nil {
				return nil, err
			}
			*p, changed = port, true
		}
	}
	if changed {
		if err := c.saveState(); err != nil {
			return nil, err
		}
	}
	m := c.machines[spec.Name]
	if m == nil {
		m = &machine{c: c, name: spec.Name, dir: machineDir(c.dir, spec.Name), podStatus: map[string]string{},
			log: c.log.WithValues("Machine", spec.Name)}
		c.machines[spec.Name] = m
	}
	m.spec = spec
	return m, nil
}

// portOwned reports whether one of the cluster's running machines listens on port (so it is not free,
// but not taken by another process either). Called with mu held.
func (c *cluster) portOwned(port int) bool {
	for name, m := range c.machines {
		st := c.st.Machines[name]
		if st == nil {
			continue
		}
		for _, p := range []int{st.KubeletPort, st.APIServerPort, st.EtcdClientPort, st.EtcdPeerPort} {
			if p == port && (m.kubelet != nil || m.etcd != nil) {
				return true
			}
		}
	}
	return false
}

func (c *cluster) hasNode(machineName string) bool {
	c.statusMu.Lock()
	defer c.statusMu.Unlock()
	_, ok := c.nodes[machineName]
	return ok
}

// machineNames returns the names of the machines in the cluster's state, sorted.
func (c *cluster) machineNames() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Sorted(maps.Keys(c.st.Machines))
}

// deleteMachine removes a machine: its Node (and mirror Pods), its etcd member when it is still in the
// cluster (a control plane provider may have removed it already), its processes and data.
func (c *cluster) deleteMachine(ctx context.Context, name string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := c.st.Machines[name]
	if st == nil {
		return nil
	}
	c.statusMu.Lock()
	delete(c.nodes, name)
	c.statusMu.Unlock()
	m := c.machines[name]
	otherControlPlanes := 0
	for n, o := range c.st.Machines {
		if n != name && o.ControlPlane {
			otherControlPlanes++
		}
	}
	// The Node goes first, while an API server can still delete it.
	client, ready := c.readyClient()
	switch {
	case ready:
		c.nodeOps.Lock()
		err := deleteMirrorPods(ctx, client, st.NodeName)
		if err == nil {
			err = deleteNode(ctx, client, st.NodeName)
		}
		c.nodeOps.Unlock()
		if err != nil {
			return err
		}
	case otherControlPlanes > 0 || !st.ControlPlane:
		return backend.ErrClusterNotReady
	}
	if st.ControlPlane && st.EtcdJoined {
		if err := c.removeEtcdMember(ctx, name, st); err != nil {
			return err
		}
	}
	if m != nil {
		// Out of the endpoint, its connections kept: the API server stops as on SIGTERM, finishing the
		// requests in flight.
		m.apiReady, m.leaving = false, true
		c.updateBackends()
		m.stop()
		delete(c.machines, name)
	}
	if _, err := killStaleMachine(machineDir(c.dir, name), c.b.opts.StopTimeout); err != nil {
		return err
	}
	if err := os.RemoveAll(machineDir(c.dir, name)); err != nil {
		return fmt.Errorf("removing the data of machine %s: %w", name, err)
	}
	delete(c.st.Machines, name)
	c.log.Info("Deleted machine", "Machine", name)
	return c.saveState()
}

// removeEtcdMember removes a machine's etcd member through the other members, unless it is not a member
// anymore (removed by a control plane provider) or it is the last one. Called with mu held.
func (c *cluster) removeEtcdMember(ctx context.Context, name string, st *machineState) error {
	var others []int
	for n, o := range c.st.Machines {
		if n != name && o.ControlPlane && o.EtcdJoined {
			others = append(others, o.EtcdClientPort)
		}
	}
	if len(others) == 0 {
		return nil
	}
	members, err := etcdMembers(ctx, c.etcdTLS, others...)
	if err != nil {
		return fmt.Errorf("listing the etcd members to remove machine %s's: %w", name, err)
	}
	peer := etcdURL(st.EtcdPeerPort)
	for _, mem := range members.Members {
		for _, u := range mem.PeerURLs {
			if u != peer {
				continue
			}
			cli, err := etcdClient(c.etcdTLS, others...)
			if err != nil {
				return err
			}
			rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			_, err = cli.MemberRemove(rctx, mem.ID)
			cancel()
			_ = cli.Close()
			if err != nil {
				return fmt.Errorf("removing the etcd member of machine %s: %w", name, err)
			}
			c.log.Info("Removed the machine's etcd member", "Machine", name, "member", st.NodeName)
			return nil
		}
	}
	return nil
}

// refreshMirrorPods writes the mirror Pods of the registered control plane machines whose components'
// state changed.
func (c *cluster) refreshMirrorPods(ctx context.Context) {
	client, ready := c.readyClient()
	if !ready {
		return
	}
	type pending struct {
		m     *machine
		node  string
		pods  []*corev1.Pod
		state []podState
	}
	var work []pending
	c.mu.Lock()
	for name, m := range c.machines {
		if m.spec.ControlPlane == nil || m.etcd == nil || !c.hasNode(name) {
			continue
		}
		st := m.state()
		p := pending{m: m, node: st.NodeName}
		etcdState := stateOf(m.etcd.State(), true, m.startedAt)
		apiState := stateOf(m.apiserver.State(), m.apiReady, m.startedAt)
		simulated := podState{running: true, ready: true, startedAt: m.startedAt}
		version := m.binary.Version
		p.pods = []*corev1.Pod{
			mirrorPod(componentEtcd, st.NodeName, nil, version, append([]string{"etcd"}, m.etcdArgs...), map[int32]int{2379: st.EtcdClientPort, 2380: st.EtcdPeerPort}, false),
			mirrorPod(componentAPIServer, st.NodeName, nil, version, append([]string{"kube-apiserver"}, m.apiServerArgs...), map[int32]int{6443: st.APIServerPort}, false),
			mirrorPod(componentControllerManager, st.NodeName, nil, version, []string{"kube-controller-manager"}, nil, true),
			mirrorPod(componentScheduler, st.NodeName, nil, version, []string{"kube-scheduler"}, nil, true),
		}
		p.state = []podState{etcdState, apiState, simulated, simulated}
		work = append(work, p)
	}
	c.mu.Unlock()
	c.nodeOps.Lock()
	defer c.nodeOps.Unlock()
	for _, p := range work {
		var node *corev1.Node
		for i, pod := range p.pods {
			key := statusKey(p.state[i]) + "/" + pod.Annotations[mirrorAnnotation]
			// podStatus is guarded by nodeOps, held here: taking mu under nodeOps would deadlock with
			// deleteMachine, which takes nodeOps under mu.
			if p.m.podStatus[pod.Name] == key {
				continue
			}
			if node == nil {
				n, err := client.CoreV1().Nodes().Get(ctx, p.node, metav1.GetOptions{})
				if err != nil {
					c.log.V(1).Info("Reading the Node of mirror Pods", "Node", p.node, "error", err.Error())
					break
				}
				node = n
			}
			pod.OwnerReferences = mirrorPod(pod.Labels["component"], p.node, node, "", nil, nil, false).OwnerReferences
			if err := ensureMirrorPod(ctx, client, pod, mirrorPodStatus(pod.Labels["component"], p.state[i])); err != nil {
				if ctx.Err() == nil {
					c.log.Error(err, "Writing a mirror Pod", "Pod", pod.Name)
				}
				continue
			}
			p.m.podStatus[pod.Name] = key
		}
	}
}
