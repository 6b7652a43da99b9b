// Package supervisor runs child processes and keeps them running: a process that exits is restarted with
// exponential backoff, its output is appended to a log file (truncated at a start when it has grown past a
// limit), its pid can be recorded in a pid file so that a later supervisor can find and kill a process an
// earlier one left behind (KillStale), and on Linux it is started with a parent-death signal so that it
// never outlives the process that supervises it, even when that process is killed with SIGKILL. Stop
// terminates a process (SIGTERM, then SIGKILL after a grace period) and ends its supervision.
package supervisor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/go-logr/logr"
)

// Spec describes a process to run.
type Spec struct {
	// Name identifies the process in logs and errors, for example "etcd".
	Name string
	// Path is the executable; Args its arguments (without the program name).
	Path string
	Args []string
	// Env is the environment; the supervisor's own environment when nil.
	Env []string
	// Dir is the working directory.
	Dir string
	// LogFile receives the process's stdout and stderr, appended; discarded when empty.
	LogFile string
	// MaxLogSize is the size above which LogFile is truncated when the process starts; no limit when zero.
	MaxLogSize int64
	// PidFile, when set, holds the pid of the current run: it is written at each start and removed when
	// the run ends, so that KillStale can find a process left behind by a supervisor that was killed.
	PidFile string
	// Ready, when set, is called before each start; while it returns an error the process is not started,
	// the error is reported as State().Err and Ready is called again after the backoff.
	Ready func(ctx context.Context) error
}

// Options tune supervision.
type Options struct {
	// MinBackoff and MaxBackoff bound the wait before a restart; it doubles after each quick exit
	// (default 500ms and 30s).
	MinBackoff, MaxBackoff time.Duration
	// StableAfter is how long a process must run for the backoff to reset (default 1m).
	StableAfter time.Duration
	// StopTimeout is how long Stop waits after SIGTERM before sending SIGKILL (default 10s).
	StopTimeout time.Duration
	// OnChange, when set, is called after the process's State changed (it started, exited, or could not
	// start). It must not block.
	OnChange func()
	// Log receives "Starting", "Exited" and "Restarting" messages.
	Log logr.Logger
}

func (o Options) withDefaults() Options {
	if o.MinBackoff == 0 {
		o.MinBackoff = 500 * time.Millisecond
	}
	if o.MaxBackoff == 0 {
		o.MaxBackoff = 30 * time.Second
	}
	if o.StableAfter == 0 {
		o.StableAfter = time.Minute
	}
	if o.StopTimeout == 0 {
		o.StopTimeout = 10 * time.Second
	}
	return o
}

// State is what the supervisor knows of its process.
type State struct {
	// Running says a run of the process is under way; Pid is its process id (0 when not running).
	Running bool
	Pid     int
	// Starts counts the runs started; Exits the runs that ended on their own (not stopped by Stop).
	Starts, Exits int
	// Err says why the process is not running: how its last run ended, or why it could not start (an
	// error of Spec.Ready included). It is nil while the process runs.
	Err error
}

func (s State) equal(o State) bool {
	return s.Running == o.Running && s.Pid == o.Pid && s.Starts == o.Starts && s.Exits == o.Exits &&
		fmt.Sprint(s.Err) == fmt.Sprint(o.Err)
}

// Process is a supervised process.
type Process struct {
	spec   Spec
	opts   Options
	cancel context.CancelFunc
	done   chan struct{}

	mu       sync.Mutex
	state    State
	lastExit error
}

// Start starts the process and supervises it until Stop is called or ctx is done (which stops it too).
// It returns an error only when the first start fails (for example, the executable does not exist, or
// Spec.Ready fails).
func Start(ctx context.Context, spec Spec, opts Options) (*Process, error) {
	p, ctx := newProcess(ctx, spec, opts)
	err := p.ready(ctx)
	var cmd *exec.Cmd
	if err == nil {
		cmd, err = p.start()
	}
	if err != nil {
		p.cancel()
		close(p.done)
		return nil, err
	}
	go p.supervise(ctx, cmd)
	return p, nil
}

// Run supervises the process until Stop is called or ctx is done, like Start, but never fails: the first
// start happens in the background and, when it fails, it is reported in State and tried again after the
// backoff, like a restart.
func Run(ctx context.Context, spec Spec, opts Options) *Process {
	p, ctx := newProcess(ctx, spec, opts)
	go p.supervise(ctx, nil)
	return p
}

// newProcess returns a process and the context of its supervision, which Stop cancels.
func newProcess(ctx context.Context, spec Spec, opts Options) (*Process, context.Context) {
	p := &Process{spec: spec, opts: opts.withDefaults(), done: make(chan struct{})}
	ctx, p.cancel = context.WithCancel(ctx)
	return p, ctx
}

// Name returns the process's name.
func (p *Process) Name() string { return p.spec.Name }

// State returns what the supervisor knows of the process now.
func (p *Process) State() State {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.state
}

// Pid returns the process id of the current run, 0 when it is not running.
func (p *Process) Pid() int { return p.State().Pid }

// Starts returns how many times the process has been started.
func (p *Process) Starts() int { return p.State().Starts }

// LastExit returns how the previous run ended (nil when no run has ended yet). Unlike State().Err, it is
// kept while the next run is under way.
func (p *Process) LastExit() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.lastExit
}

// Done is closed when supervision has ended and the process is gone.
func (p *Process) Done() <-chan struct{} { return p.done }

// Stop ends supervision: SIGTERM, then SIGKILL after the stop timeout. It returns once the process is gone.
func (p *Process) Stop() {
	p.cancel()
	<-p.done
}

func (p *Process) setState(f func(*State)) {
	p.mu.Lock()
	before := p.state
	f(&p.state)
	changed := !before.equal(p.state)
	p.mu.Unlock()
	if changed && p.opts.OnChange != nil {
		p.opts.OnChange()
	}
}

func (p *Process) ready(ctx context.Context) error {
	if p.spec.Ready == nil {
		return nil
	}
	return p.spec.Ready(ctx)
}

// start starts a run of the process and records it.
func (p *Process) start() (*exec.Cmd, error) {
	cmd := exec.Command(p.spec.Path, p.spec.Args...)
	cmd.Env = p.spec.Env
	cmd.Dir = p.spec.Dir
	cmd.SysProcAttr = sysProcAttr()
	out := io.Discard
	if p.spec.LogFile != "" {
		f, err := openLog(p.spec.LogFile, p.spec.MaxLogSize)
		if err != nil {
			return nil, fmt.Errorf("opening the log file of %s: %w", p.spec.Name, err)
		}
		out = f
		defer func() { _ = f.Close() }() // the child keeps its own descriptor
	}
	cmd.Stdout, cmd.Stderr = out, out
	p.opts.Log.V(1).Info("Starting process", "process", p.spec.Name, "path", p.spec.Path)
	if err := spawn(cmd); err != nil {
		return nil, fmt.Errorf("starting %s: %w", p.spec.Name, err)
	}
	if p.spec.PidFile != "" {
		if err := writePidFile(p.spec.PidFile, cmd.Process.Pid); err != nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			return nil, fmt.Errorf("writing the pid file of %s: %w", p.spec.Name, err)
		}
	}
	p.setState(func(s *State) { s.Running, s.Pid, s.Starts, s.Err = true, cmd.Process.Pid, s.Starts+1, nil })
	return cmd, nil
}

func openLog(path string, maxSize int64) (*os.File, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	flags := os.O_CREATE | os.O_WRONLY | os.O_APPEND
	if info, err := os.Stat(path); err == nil && maxSize > 0 && info.Size() > maxSize {
		flags |= os.O_TRUNC
	}
	return os.OpenFile(path, flags, 0o600)
}

// supervise waits for the current run (cmd, nil when none is under way) to end and starts the next one,
// until ctx is done.
func (p *Process) supervise(ctx context.Context, cmd *exec.Cmd) {
	defer close(p.done)
	backoff := p.opts.MinBackoff
	wait := func() bool {
		t := time.NewTimer(backoff)
		defer t.Stop()
		backoff = min(2*backoff, p.opts.MaxBackoff)
		select {
		case <-ctx.Done():
			return false
		case <-t.C:
			return true
		}
	}
	for {
		if cmd == nil {
			err := p.ready(ctx)
			if err == nil {
				if cmd, err = p.start(); err != nil {
					p.opts.Log.Error(err, "Starting process failed", "process", p.spec.Name)
				}
			}
			if err != nil {
				if ctx.Err() != nil {
					return
				}
				p.setState(func(s *State) { s.Running, s.Pid, s.Err = false, 0, err })
				if !wait() {
					return
				}
				continue
			}
		}
		started := time.Now()
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		select {
		case err := <-exited:
			p.ended(exitError(err), true)
			if time.Since(started) > p.opts.StableAfter {
				backoff = p.opts.MinBackoff // it ran for a while: this is a new crash, not a crash loop
			}
			p.opts.Log.Info("Process exited, restarting it", "process", p.spec.Name, "status", fmt.Sprint(p.LastExit()), "after", backoff)
			cmd = nil
			if !wait() {
				return
			}
		case <-ctx.Done():
			p.terminate(cmd, exited)
			return
		}
	}
}

// ended records the end of a run: crashed says it ended on its own rather than being stopped.
func (p *Process) ended(err error, crashed bool) {
	if p.spec.PidFile != "" {
		_ = os.Remove(p.spec.PidFile)
	}
	p.mu.Lock()
	p.lastExit = err
	p.mu.Unlock()
	p.setState(func(s *State) {
		s.Running, s.Pid = false, 0
		if crashed {
			s.Exits++
			s.Err = err
			if err == nil {
				s.Err = errors.New("exited")
			}
		}
	})
}

// terminate asks the process to stop, and kills it when it has not exited after the stop timeout.
func (p *Process) terminate(cmd *exec.Cmd, exited <-chan error) {
	p.opts.Log.V(1).Info("Stopping process", "process", p.spec.Name, "pid", cmd.Process.Pid)
	_ = cmd.Process.Signal(syscall.SIGTERM)
	t := time.NewTimer(p.opts.StopTimeout)
	defer t.Stop()
	select {
	case err := <-exited:
		p.ended(exitError(err), false)
	case <-t.C:
		p.opts.Log.Info("Process did not stop in time, killing it", "process", p.spec.Name)
		_ = cmd.Process.Kill()
		p.ended(exitError(<-exited), false)
	}
}

func exitError(err error) error {
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) {
		return errors.New(exitErr.String())
	}
	return err
}
