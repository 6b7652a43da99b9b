package remotebackend

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/capstan-dev/capstan/internal/providers/local/backend/memory"
	"github.com/capstan-dev/capstan/internal/test/procstat"
)

// The environment of a child started by Start: the socket to serve on, and the memory backend's start-up
// delay and jitter.
const (
	socketEnv = "CAPSTAN_REMOTE_BACKEND_SOCKET"
	delayEnv  = "CAPSTAN_REMOTE_BACKEND_STARTUP_DELAY"
	jitterEnv = "CAPSTAN_REMOTE_BACKEND_STARTUP_JITTER"
)

// ServeIfChild must be called first in the TestMain of a package whose tests call Start: in the child
// process Start runs (the test binary again), it serves a memory backend until SIGTERM and exits;
// otherwise it returns at once.
func ServeIfChild() {
	sock := os.Getenv(socketEnv)
	if sock == "" {
		return
	}
	if err := serveChild(sock); err != nil {
		fmt.Fprintf(os.Stderr, "memory backend: %v\n", err)
		os.Exit(1)
	}
	os.Exit(0)
}

func serveChild(sock string) error {
	var opts memory.Options
	var err error
	if opts.StartupDelay, err = envDuration(delayEnv); err != nil {
		return err
	}
	if opts.StartupJitter, err = envDuration(jitterEnv); err != nil {
		return err
	}
	l, err := net.Listen("unix", sock)
	if err != nil {
		return fmt.Errorf("listening on %s: %w", sock, err)
	}
	b := memory.New(opts)
	defer b.Shutdown()
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	go func() {
		<-ctx.Done()
		_ = l.Close()
	}()
	if err := Serve(l, b); ctx.Err() == nil {
		return err
	}
	return nil
}

func envDuration(name string) (time.Duration, error) {
	v := os.Getenv(name)
	if v == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", name, err)
	}
	return d, nil
}

// Child is a memory backend served by a child process (see Start).
type Child struct {
	// Client is the backend, for the local provider.
	*Client
	cmd *exec.Cmd
}

// Start runs a memory backend of opts (its start-up delay and jitter; the child logs nothing) in a child
// process, the test binary run again (whose TestMain calls ServeIfChild), connects to it and stops it when
// the test ends. The child is killed if this process dies first.
func Start(t testing.TB, opts memory.Options) *Child {
	t.Helper()
	// A short directory: a unix socket's path is limited to 107 bytes.
	dir, err := os.MkdirTemp("", "capstan-backend-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	sock := filepath.Join(dir, "backend.sock")
	cmd := exec.Command(os.Args[0], "-test.run=^$", "-test.bench=^$") //nolint:gosec // the test binary itself.
	cmd.Env = append(os.Environ(), socketEnv+"="+sock, delayEnv+"="+opts.StartupDelay.String(), jitterEnv+"="+opts.StartupJitter.String())
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(fmt.Errorf("starting the memory backend's process: %w", err))
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	c := &Child{cmd: cmd}
	t.Cleanup(func() {
		if c.Client != nil {
			_ = c.Close()
		}
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case err := <-exited:
			if err != nil {
				t.Errorf("the memory backend's process: %v", err)
			}
		case <-time.After(time.Minute):
			_ = cmd.Process.Kill()
			t.Errorf("the memory backend's process did not stop within a minute of SIGTERM: killed")
		}
	})
	deadline := time.Now().Add(time.Minute)
	for {
		cl, err := Dial("unix", sock)
		if err == nil {
			c.Client = cl
			return c
		}
		select {
		case err := <-exited:
			exited <- err
			t.Fatal(fmt.Errorf("the memory backend's process exited: %w", err))
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatal(fmt.Errorf("the memory backend's process does not serve on %s after a minute: %w", sock, err))
		}
	}
}

// Pid is the child's process id.
func (c *Child) Pid() int { return c.cmd.Process.Pid }

// Usage is what the child used so far.
func (c *Child) Usage() (procstat.Usage, error) {
	return procstat.Of(c.Pid())
}
