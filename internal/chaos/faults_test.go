package chaos

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"syscall"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/test/procs"
)

// fault is one kind of fault the suite injects. inject injects it and returns once what it broke runs
// again (a killed process was restarted, a stall ended), with a detail for the report.
type fault struct {
	name string
	// workloadDown: every workload cluster goes down with the fault (its processes are children of the
	// local provider, or of capstan up) and must come back.
	workloadDown bool
	// ha: the fault needs a workload cluster of 3 control plane Machines or more.
	ha     bool
	inject func(ctx context.Context, r *run) (string, error)
}

// managerRestartBound bounds how long a killed manager takes to run again: the local runtime restarts its
// process, which waits for the last leader's lease to expire (15 s).
const managerRestartBound = 3 * time.Minute

// workloadBackBound bounds how long the workload clusters take to answer again after a fault took them
// down.
const workloadBackBound = 5 * time.Minute

func killManager(m manager, workloadDown bool) fault {
	return fault{name: "SIGKILL of the " + m.name, workloadDown: workloadDown, inject: func(ctx context.Context, r *run) (string, error) {
		before := r.h.managerPids(m)
		if len(before) == 0 {
			return "", fmt.Errorf("the %s is not running", m.name)
		}
		for _, pid := range before {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		return fmt.Sprintf("pid %d", before[0]), r.h.waitManagerReady(ctx, m, before, managerRestartBound)
	}}
}

var (
	faultKillCore          = killManager(managers[0], false)
	faultKillBootstrap     = killManager(managers[1], false)
	faultKillControlPlane  = killManager(managers[2], false)
	faultKillLocalProvider = killManager(managers[3], true)

	faultRestartAPIServer = fault{name: "restart of the management kube-apiserver", inject: func(_ context.Context, r *run) (string, error) {
		return restartManagementProcess(r.h, r.h.apiServerPids)
	}}
	faultRestartEtcd = fault{name: "restart of the management etcd", inject: func(_ context.Context, r *run) (string, error) {
		return restartManagementProcess(r.h, r.h.etcdPids)
	}}

	faultDownUp = fault{name: "capstan down, capstan up", workloadDown: true, inject: func(ctx context.Context, r *run) (string, error) {
		if err := r.h.down(); err != nil {
			return "", err
		}
		return "", upAgain(ctx, r)
	}}
	faultKillUp = fault{name: "SIGKILL of capstan up, capstan up", workloadDown: true, inject: func(ctx context.Context, r *run) (string, error) {
		if err := r.h.kill(); err != nil {
			return "", err
		}
		return "", upAgain(ctx, r)
	}}

	faultKillWorkloadEtcd = fault{name: "SIGKILL of a workload etcd member", ha: true, inject: func(_ context.Context, r *run) (string, error) {
		return killWorkloadProcess(r, "etcd")
	}}
	faultKillWorkloadAPIServer = fault{name: "SIGKILL of a workload kube-apiserver", ha: true, inject: func(_ context.Context, r *run) (string, error) {
		return killWorkloadProcess(r, "kube-apiserver")
	}}

	faultStall = fault{name: "stalled management API", inject: func(_ context.Context, r *run) (string, error) {
		p := r.h.proxy
		if p == nil {
			return "", errors.New("the managers do not go through the stalling proxy")
		}
		d := time.Duration(5+r.rng.IntN(20)) * time.Second
		detail := ""
		if r.rng.IntN(2) == 0 {
			delay := time.Duration(500+r.rng.IntN(2500)) * time.Millisecond
			p.SetDelay(delay)
			detail = fmt.Sprintf("every chunk delayed %s for %s", delay, d)
		} else {
			p.SetDrop(true)
			detail = fmt.Sprintf("connections dropped and refused for %s", d)
		}
		// The fault lasts d.
		time.Sleep(d)
		p.SetDelay(0)
		p.SetDrop(false)
		return detail, nil
	}}
)

// outageFor is how long faultOutage keeps the management API unreachable: three times the managers' renew
// deadline (10 s), so that every manager loses its lease.
const outageFor = 30 * time.Second

// faultOutage makes the management API unreachable for the managers for outageFor: the local provider
// loses its lease, and the workload clusters it runs must keep answering meanwhile.
var faultOutage = fault{name: "management API unreachable for 30 s", inject: func(_ context.Context, r *run) (string, error) {
	p := r.h.proxy
	if p == nil {
		return "", errors.New("the managers do not go through the stalling proxy")
	}
	p.SetDrop(true)
	// The outage lasts outageFor.
	time.Sleep(outageFor)
	p.SetDrop(false)
	return "connections dropped and refused", nil
}}

// managerFaults are the faults of the management side that every operation can take.
var managerFaults = []fault{faultKillCore, faultKillBootstrap, faultKillControlPlane, faultKillLocalProvider, faultRestartAPIServer, faultRestartEtcd, faultOutage}

// restartManagementProcess kills the management cluster's kube-apiserver or etcd; capstan up's supervisor
// restarts it.
func restartManagementProcess(h *harness, pidsOf func() []int) (string, error) {
	before := pidsOf()
	if len(before) != 1 {
		return "", fmt.Errorf("expected one process, found %v", before)
	}
	if err := syscall.Kill(before[0], syscall.SIGKILL); err != nil {
		return "", err
	}
	return fmt.Sprintf("pid %d", before[0]), h.waitAPIServer(before, pidsOf, 2*time.Minute)
}

// upAgain starts capstan up again and waits for every manager to run.
func upAgain(ctx context.Context, r *run) error {
	if err := r.h.start(); err != nil {
		return err
	}
	for _, m := range managers {
		if err := r.h.waitManagerReady(ctx, m, nil, managerRestartBound); err != nil {
			return err
		}
	}
	return nil
}

// killWorkloadProcess kills the etcd member or kube-apiserver of one control plane machine of a workload
// cluster of 3 or more, chosen at random, and waits for the local provider to restart it (or the machine
// to be gone: it may be deleted meanwhile).
func killWorkloadProcess(r *run, program string) (string, error) {
	type target struct{ cluster, machine, dir string }
	var targets []target
	for _, name := range r.clusterNames() {
		w := r.clusters[name]
		entries, _ := os.ReadDir(filepath.Join(w.dir(), "machines"))
		var alive []target
		for _, e := range entries {
			dir := filepath.Join(w.dir(), "machines", e.Name())
			if pid, err := procs.ReadPidFile(filepath.Join(dir, program+".pid")); err == nil && procs.Alive(pid) {
				alive = append(alive, target{cluster: name, machine: e.Name(), dir: dir})
			}
		}
		if len(alive) >= 3 {
			targets = append(targets, alive...)
		}
	}
	if len(targets) == 0 {
		return "", errSkipFault
	}
	sort.Slice(targets, func(i, j int) bool { return targets[i].dir < targets[j].dir })
	t := targets[r.rng.IntN(len(targets))]
	pidFile := filepath.Join(t.dir, program+".pid")
	pid, err := procs.ReadPidFile(pidFile)
	if err != nil {
		return "", err
	}
	_ = syscall.Kill(pid, syscall.SIGKILL)
	detail := fmt.Sprintf("machine %s of cluster %s", t.machine, t.cluster)
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		if _, err := os.Stat(t.dir); os.IsNotExist(err) {
			return detail + " (deleted since)", nil
		}
		if now, err := procs.ReadPidFile(pidFile); err == nil && now != pid && procs.Alive(now) {
			return detail, nil
		}
		// Polled until the process runs again.
		time.Sleep(100 * time.Millisecond)
	}
	return detail, fmt.Errorf("the %s of machine %s was not restarted within 2 minutes", program, t.machine)
}

// faultStallWorkloadEtcd stops (SIGSTOP) the etcd member of a control plane Machine of a cluster of 3 or
// more — neither its oldest Machine (which scale down removes first) nor its newest (to which the
// leadership moves) — for 25 to 40 s, then continues it: a member that stops answering, as on a stalled
// disk, while its process runs. It returns at once: the stall lasts while the operation runs.
var faultStallWorkloadEtcd = fault{name: "stall of a workload etcd member (SIGSTOP, 25-40 s)", ha: true, inject: func(ctx context.Context, r *run) (string, error) {
	type target struct{ cluster, machine string }
	var targets []target
	for _, name := range r.clusterNames() {
		machines := &clusterv1.MachineList{}
		if err := r.hOf(name).client.List(ctx, machines, client.InNamespace(r.ns), client.MatchingLabels{clusterv1.ClusterNameLabel: name},
			client.HasLabels{clusterv1.MachineControlPlaneLabel}); err != nil {
			return "", err
		}
		ms := machines.Items
		if len(ms) < 3 {
			continue
		}
		sort.Slice(ms, func(i, j int) bool {
			if !ms[i].CreationTimestamp.Equal(&ms[j].CreationTimestamp) {
				return ms[i].CreationTimestamp.Before(&ms[j].CreationTimestamp)
			}
			return ms[i].Name < ms[j].Name
		})
		for _, m := range ms[1 : len(ms)-1] {
			targets = append(targets, target{cluster: name, machine: m.Name})
		}
	}
	if len(targets) == 0 {
		return "", errSkipFault
	}
	t := targets[r.rng.IntN(len(targets))]
	pid, err := procs.ReadPidFile(filepath.Join(r.clusters[t.cluster].dir(), "machines", t.machine, "etcd.pid"))
	if err != nil {
		return "", err
	}
	d := time.Duration(25+r.rng.IntN(16)) * time.Second
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		return "", err
	}
	r.whereMu.Lock()
	r.resume[pid] = true
	r.whereMu.Unlock()
	time.AfterFunc(d, func() {
		_ = syscall.Kill(pid, syscall.SIGCONT)
		r.whereMu.Lock()
		delete(r.resume, pid)
		r.whereMu.Unlock()
	})
	return fmt.Sprintf("machine %s of cluster %s, for %s", t.machine, t.cluster, d), nil
}}

// errSkipFault says a fault cannot be injected now (no target); another is chosen.
var errSkipFault = errors.New("no target for the fault now")
