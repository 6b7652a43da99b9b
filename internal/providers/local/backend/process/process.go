package process

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/go-logr/logr"
)

// maxLogSize is the size above which a process's log file is truncated when the process starts again.
const maxLogSize = 10 << 20

// spawner starts every child process from one goroutine locked to its OS thread for the life of the
// provider: the parent-death signal fires when the thread that forked a child exits, and Go may end the
// threads of other goroutines.
type spawner struct {
	requests chan spawnRequest
}

type spawnRequest struct {
	cmd  *exec.Cmd
	done chan error
}

var (
	theSpawner     *spawner
	theSpawnerOnce sync.Once
)

func getSpawner() *spawner {
	theSpawnerOnce.Do(func() {
		s := &spawner{requests: make(chan spawnRequest)}
		go func() {
			// Never unlocked and never returns: the thread must live as long as the process.
			runtime.LockOSThread()
			for r := range s.requests {
				r.done <- r.cmd.Start()
			}
		}()
		theSpawner = s
	})
	return theSpawner
}

func (s *spawner) start(cmd *exec.Cmd) error {
	done := make(chan error, 1)
	s.requests <- spawnRequest{cmd: cmd, done: done}
	return <-done
}

// procState is what a supervisor knows of its process, for status messages.
type procState struct {
	Running  bool
	Pid      int
	Restarts int
	// LastError says why the process is not running: how it exited, or why it could not start.
	LastError string
	// PortInUse is set when the process cannot start because its port is taken by another process.
	PortInUse int
}

// supervisor runs one program and restarts it when it exits, until its context is cancelled.
type supervisor struct {
	name string
	path string
	dir  string // the cluster directory: pid file <dir>/<name>.pid, log <dir>/logs/<name>.log
	// args returns the arguments of the next start.
	args func() []string
	// ready is called before each start; an error delays the start (a *portInUseError is reported as such).
	ready       func(ctx context.Context) error
	stopTimeout time.Duration
	minBackoff  time.Duration
	maxBackoff  time.Duration
	changed     func()
	log         logr.Logger

	mu    sync.Mutex
	state procState
	done  chan struct{}
}

type portInUseError struct{ port int }

func (e *portInUseError) Error() string {
	return fmt.Sprintf("port %d is in use by another process", e.port)
}

func (s *supervisor) State() procState {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state
}

func (s *supervisor) setState(f func(*procState)) {
	s.mu.Lock()
	before := s.state
	f(&s.state)
	after := s.state
	s.mu.Unlock()
	if before != after && s.changed != nil {
		s.changed()
	}
}

func (s *supervisor) pidFile() string { return filepath.Join(s.dir, s.name+".pid") }

// run supervises the process until ctx is done, then stops it and returns.
func (s *supervisor) run(ctx context.Context) {
	defer close(s.done)
	backoff := s.minBackoff
	wait := func() bool {
		t := time.NewTimer(backoff)
		defer t.Stop()
		backoff = min(2*backoff, s.maxBackoff)
		select {
		case <-ctx.Done():
			return false
		case <-t.C:
			return true
		}
	}
	for ctx.Err() == nil {
		if s.ready != nil {
			if err := s.ready(ctx); err != nil {
				if ctx.Err() != nil {
					return
				}
				s.setState(func(st *procState) {
					st.Running, st.Pid, st.LastError, st.PortInUse = false, 0, err.Error(), 0
					var p *portInUseError
					if errors.As(err, &p) {
						st.PortInUse = p.port
					}
				})
				if !wait() {
					return
				}
				continue
			}
		}
		cmd, err := s.start()
		if err != nil {
			s.log.Error(err, "Starting process", "process", s.name)
			s.setState(func(st *procState) { st.Running, st.Pid, st.LastError, st.PortInUse = false, 0, err.Error(), 0 })
			if !wait() {
				return
			}
			continue
		}
		started := time.Now()
		s.setState(func(st *procState) { st.Running, st.Pid, st.LastError, st.PortInUse = true, cmd.Process.Pid, "", 0 })
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		select {
		case <-ctx.Done():
			s.stop(cmd, exited)
			_ = os.Remove(s.pidFile())
			s.setState(func(st *procState) { st.Running, st.Pid = false, 0 })
			return
		case err := <-exited:
			_ = os.Remove(s.pidFile())
			msg := "exited"
			if err != nil {
				msg = err.Error()
			}
			s.log.Info("Process exited, restarting it", "process", s.name, "status", msg)
			if time.Since(started) > 2*s.maxBackoff {
				backoff = s.minBackoff // it ran for a while: this is a new crash, not a crash loop
			}
			s.setState(func(st *procState) {
				st.Running, st.Pid, st.Restarts, st.PortInUse = false, 0, st.Restarts+1, 0
				st.LastError = msg
			})
			if !wait() {
				return
			}
		}
	}
}

func (s *supervisor) start() (*exec.Cmd, error) {
	logDir := filepath.Join(s.dir, "logs")
	if err := os.MkdirAll(logDir, 0o700); err != nil {
		return nil, err
	}
	logPath := filepath.Join(logDir, s.name+".log")
	flags := os.O_CREATE | os.O_WRONLY | os.O_APPEND
	if info, err := os.Stat(logPath); err == nil && info.Size() > maxLogSize {
		flags |= os.O_TRUNC
	}
	logFile, err := os.OpenFile(logPath, flags, 0o600)
	if err != nil {
		return nil, err
	}
	defer func() { _ = logFile.Close() }() // the child has its own descriptor once started
	cmd := exec.Command(s.path, s.args()...)
	cmd.Dir = s.dir
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = sysProcAttr()
	s.log.V(1).Info("Starting process", "process", s.name, "path", s.path)
	if err := getSpawner().start(cmd); err != nil {
		return nil, fmt.Errorf("starting %s: %w", s.name, err)
	}
	if err := os.WriteFile(s.pidFile(), []byte(strconv.Itoa(cmd.Process.Pid)+"\n"), 0o600); err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return nil, fmt.Errorf("writing the pid file of %s: %w", s.name, err)
	}
	return cmd, nil
}

// stop asks the process to terminate, and kills it when it has not exited after stopTimeout.
func (s *supervisor) stop(cmd *exec.Cmd, exited <-chan error) {
	_ = cmd.Process.Signal(syscall.SIGTERM)
	t := time.NewTimer(s.stopTimeout)
	defer t.Stop()
	select {
	case err := <-exited:
		s.log.V(1).Info("Process stopped", "process", s.name, "status", fmt.Sprint(err))
	case <-t.C:
		s.log.Info("Process did not stop in time, killing it", "process", s.name)
		_ = cmd.Process.Kill()
		err := <-exited
		s.log.V(1).Info("Process killed", "process", s.name, "status", fmt.Sprint(err))
	}
}

// killStale kills a process recorded in a pid file of dir by an earlier run of the provider, when it still
// runs with dir on its command line (so a pid reused by an unrelated process is left alone), and waits for
// it to exit. It reports whether it killed one.
func killStale(dir, name string, timeout time.Duration) (bool, error) {
	pidFile := filepath.Join(dir, name+".pid")
	data, err := os.ReadFile(pidFile)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil || pid <= 0 {
		_ = os.Remove(pidFile)
		return false, nil
	}
	if !holdsDir(pid, dir) {
		_ = os.Remove(pidFile)
		return false, nil
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return false, fmt.Errorf("killing stale %s (pid %d): %w", name, pid, err)
	}
	deadline := time.Now().Add(timeout)
	for holdsDir(pid, dir) {
		if time.Now().After(deadline) {
			return true, fmt.Errorf("stale %s (pid %d) did not exit after SIGKILL", name, pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
	_ = os.Remove(pidFile)
	return true, nil
}

// holdsDir reports whether process pid is alive (not a zombie) and has dir in its command line. It needs
// /proc; elsewhere it reports false and stale processes are left to the parent-death signal.
func holdsDir(pid int, dir string) bool {
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil || len(cmdline) == 0 {
		return false // gone, or a zombie (whose cmdline is empty)
	}
	for _, arg := range bytes.Split(cmdline, []byte{0}) {
		if strings.Contains(string(arg), dir+string(filepath.Separator)) || string(arg) == dir {
			return true
		}
	}
	return false
}
