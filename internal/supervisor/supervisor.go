// Package supervisor runs child processes and keeps them running: a process that exits is restarted with
// exponential backoff, its output is appended to a log file, and on Linux it is started with a parent-death
// signal so that it never outlives the process that supervises it, even when that process is killed with
// SIGKILL. Stop terminates a process (SIGTERM, then SIGKILL after a grace period) and ends its supervision.
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
}

// Options tune supervision.
type Options struct {
	// MinBackoff and MaxBackoff bound the wait before a restart; it doubles after each quick exit.
	MinBackoff, MaxBackoff time.Duration
	// StableAfter is how long a process must run for the backoff to reset.
	StableAfter time.Duration
	// StopTimeout is how long Stop waits after SIGTERM before sending SIGKILL.
	StopTimeout time.Duration
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

// Process is a supervised process.
type Process struct {
	spec Spec
	opts Options

	mu       sync.Mutex
	cmd      *exec.Cmd
	starts   int
	lastErr  error
	stopping bool
	stopCh   chan struct{}
	done     chan struct{}
}

// Start starts the process and supervises it until Stop is called or ctx is done (which stops it too).
// It returns an error only when the first start fails (for example, the executable does not exist).
func Start(ctx context.Context, spec Spec, opts Options) (*Process, error) {
	p := &Process{spec: spec, opts: opts.withDefaults(), stopCh: make(chan struct{}), done: make(chan struct{})}
	if err := p.start(); err != nil {
		close(p.done)
		return nil, err
	}
	go p.supervise(ctx)
	return p, nil
}

// Name returns the process's name.
func (p *Process) Name() string { return p.spec.Name }

// Pid returns the process id of the current run, 0 when it is not running.
func (p *Process) Pid() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil || p.cmd.Process == nil {
		return 0
	}
	return p.cmd.Process.Pid
}

// Starts returns how many times the process has been started.
func (p *Process) Starts() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.starts
}

// LastExit returns how the previous run ended (nil when it has not ended yet).
func (p *Process) LastExit() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.lastErr
}

// Done is closed when supervision has ended and the process is gone.
func (p *Process) Done() <-chan struct{} { return p.done }

// Stop ends supervision: SIGTERM, then SIGKILL after the stop timeout. It returns once the process is gone.
func (p *Process) Stop() {
	p.mu.Lock()
	if !p.stopping {
		p.stopping = true
		close(p.stopCh)
	}
	p.mu.Unlock()
	<-p.done
}

func (p *Process) start() error {
	cmd := exec.Command(p.spec.Path, p.spec.Args...)
	cmd.Env = p.spec.Env
	cmd.Dir = p.spec.Dir
	cmd.SysProcAttr = sysProcAttr()
	out := io.Discard
	if p.spec.LogFile != "" {
		if err := os.MkdirAll(filepath.Dir(p.spec.LogFile), 0o755); err != nil {
			return err
		}
		f, err := os.OpenFile(p.spec.LogFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return fmt.Errorf("opening the log file of %s: %w", p.spec.Name, err)
		}
		out = f
		defer func() { _ = f.Close() }() // the child keeps its own descriptor
	}
	cmd.Stdout, cmd.Stderr = out, out
	p.opts.Log.V(1).Info("Starting process", "name", p.spec.Name, "path", p.spec.Path)
	if err := spawn(cmd); err != nil {
		return fmt.Errorf("starting %s (%s): %w", p.spec.Name, p.spec.Path, err)
	}
	p.mu.Lock()
	p.cmd = cmd
	p.starts++
	p.mu.Unlock()
	return nil
}

func (p *Process) supervise(ctx context.Context) {
	defer close(p.done)
	backoff := p.opts.MinBackoff
	for {
		p.mu.Lock()
		cmd := p.cmd
		p.mu.Unlock()
		started := time.Now()
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()

		select {
		case err := <-exited:
			p.mu.Lock()
			p.lastErr = exitError(err)
			p.cmd = nil
			p.mu.Unlock()
			if time.Since(started) > p.opts.StableAfter {
				backoff = p.opts.MinBackoff
			}
			p.opts.Log.Info("Process exited, restarting", "name", p.spec.Name, "exit", fmt.Sprint(p.lastErr), "after", backoff)
			select {
			case <-time.After(backoff):
			case <-p.stopCh:
				return
			case <-ctx.Done():
				return
			}
			backoff = min(backoff*2, p.opts.MaxBackoff)
			for {
				err := p.start()
				if err == nil {
					break
				}
				p.opts.Log.Error(err, "Restarting process failed", "name", p.spec.Name)
				select {
				case <-time.After(backoff):
				case <-p.stopCh:
					return
				case <-ctx.Done():
					return
				}
				backoff = min(backoff*2, p.opts.MaxBackoff)
			}
		case <-p.stopCh:
			p.terminate(cmd, exited)
			return
		case <-ctx.Done():
			p.terminate(cmd, exited)
			return
		}
	}
}

func (p *Process) terminate(cmd *exec.Cmd, exited <-chan error) {
	p.opts.Log.V(1).Info("Stopping process", "name", p.spec.Name, "pid", cmd.Process.Pid)
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-exited:
		p.recordStop(err)
	case <-time.After(p.opts.StopTimeout):
		_ = cmd.Process.Kill()
		p.recordStop(<-exited)
	}
}

func (p *Process) recordStop(err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.lastErr = exitError(err)
	p.cmd = nil
}

func exitError(err error) error {
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) {
		return fmt.Errorf("%s", exitErr.String())
	}
	return err
}
