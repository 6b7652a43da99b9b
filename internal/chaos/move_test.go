package chaos

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/supervisor"
)

// target is the second management cluster clusters are moved to; started by the first scenario that
// needs it.
var target *harness

// startTarget starts the second management cluster with capstan's providers, once.
func startTarget() error {
	if target != nil {
		return nil
	}
	h := newHarness(mgmt.root(), "chaos-target", mgmt.capstan, mgmt.clusterctl)
	if err := h.start(); err != nil {
		return err
	}
	target = h
	return h.initProviders()
}

// moveRun is `clusterctl move` of a scenario's namespace from the management cluster to the target, run
// again after it was killed or failed (as a user would: a rerun resumes from the move's journal).
type moveRun struct {
	from, to *harness
	ns       string
	logPath  string

	mu        sync.Mutex
	cmd       *exec.Cmd
	exited    chan struct{}
	err       error
	runs      int
	succeeded bool
}

func (m *moveRun) start() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	logFile, err := os.OpenFile(m.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer func() { _ = logFile.Close() }()
	m.runs++
	fmt.Fprintf(logFile, "--- %s run %d\n", time.Now().Format(time.RFC3339), m.runs)
	cmd := exec.Command(m.from.clusterctl, "move", "--kubeconfig", m.from.state.Kubeconfig(), "--to-kubeconfig", m.to.state.Kubeconfig(),
		"--namespace", m.ns, "-v", "1")
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := supervisor.StartChild(cmd); err != nil {
		return err
	}
	exited := make(chan struct{})
	m.cmd, m.exited, m.err = cmd, exited, nil
	go func() {
		err := cmd.Wait()
		m.mu.Lock()
		m.err, m.succeeded = err, err == nil
		m.mu.Unlock()
		close(exited)
	}()
	return nil
}

// kill kills the running move with SIGKILL; false when none runs.
func (m *moveRun) kill() bool {
	m.mu.Lock()
	cmd, exited := m.cmd, m.exited
	m.mu.Unlock()
	select {
	case <-exited:
		return false
	default:
	}
	_ = syscall.Kill(cmd.Process.Pid, syscall.SIGKILL)
	<-exited
	return true
}

// finished reports whether a run succeeded; a run that failed is started again.
func (m *moveRun) finished() (bool, error) {
	m.mu.Lock()
	exited, succeeded, err, runs := m.exited, m.succeeded, m.err, m.runs
	m.mu.Unlock()
	select {
	case <-exited:
	default:
		return false, nil
	}
	if succeeded {
		return true, nil
	}
	if runs >= 10 {
		return false, fmt.Errorf("clusterctl move failed %d times; the last: %w (log %s)", runs, err, m.logPath)
	}
	return false, m.start()
}

var faultKillMove = fault{name: "SIGKILL of clusterctl move, run again", inject: func(_ context.Context, r *run) (string, error) {
	if r.move == nil || !r.move.kill() {
		return "", errSkipFault
	}
	return fmt.Sprintf("run %d", r.move.runs), r.move.start()
}}

// onTarget is a fault of the target management cluster.
func onTarget(f fault) fault {
	return fault{name: f.name + " (target management cluster)", workloadDown: f.workloadDown, ha: f.ha,
		inject: func(ctx context.Context, r *run) (string, error) {
			moved := *r
			moved.h = target
			return f.inject(ctx, &moved)
		}}
}

func startMove(ctx context.Context, g Gomega, r *run) {
	g.Expect(startTarget()).To(Succeed())
	r.move = &moveRun{from: r.h, to: target, ns: r.ns, logPath: mgmt.logPath + "." + r.ns + ".move.log"}
	g.Expect(r.move.start()).To(Succeed())
}

// moved checks that the move finished: every Cluster of the scenario is in the target and none in the
// source; the suite then reads them there.
func moved(ctx context.Context, g Gomega, r *run) {
	done, err := r.move.finished()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(done).To(BeTrue(), "clusterctl move finished")
	for _, name := range r.clusterNames() {
		err := r.h.client.Get(ctx, key(r.ns, name), &clusterv1.Cluster{})
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "Cluster %s is gone from the source", name)
		g.Expect(target.client.Get(ctx, key(r.ns, name), &clusterv1.Cluster{})).To(Succeed())
		r.setHarness(name, target)
		g.Expect(r.clusters[name].readDataDir(ctx, target.client)).To(Succeed())
	}
}
