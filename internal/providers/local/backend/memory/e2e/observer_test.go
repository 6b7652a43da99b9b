package e2e

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/capstan-dev/capstan/internal/test/procstat"
)

// The environment of an observer process (see observeChanges): the management cluster's kubeconfig, and
// how many diffs of each kind to keep.
const (
	observeEnv     = "CAPSTAN_BENCH_OBSERVE_KUBECONFIG"
	observeKeepEnv = "CAPSTAN_BENCH_OBSERVE_KEEP"
)

// observeIfChild, first in TestMain, makes the process an observer when observeChanges started it: it
// records the management cluster's changes, says "ready" on its standard output once it watches, forgets
// what it recorded at SIGUSR1 (when the measured period starts: listing and watching every kind takes a
// while, and what changed meanwhile is not the period's) and at SIGTERM writes how many objects changed
// and the report, then exits.
func observeIfChild() {
	path := os.Getenv(observeEnv)
	if path == "" {
		return
	}
	if err := observe(path); err != nil {
		fmt.Fprintf(os.Stderr, "observer: %v\n", err)
		os.Exit(1)
	}
	os.Exit(0)
}

func observe(kubeconfig string) error {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, os.Interrupt)
	restart := make(chan os.Signal, 1)
	signal.Notify(restart, syscall.SIGUSR1)
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	cfg.QPS, cfg.Burst = -1, -1
	keep, _ := strconv.Atoi(os.Getenv(observeKeepEnv))
	r, err := recordChanges(cfg, keep, func(format string, args ...any) { fmt.Fprintf(os.Stderr, "observer: "+format+"\n", args...) })
	if err != nil {
		return err
	}
	fmt.Println("ready")
	for {
		select {
		case <-restart:
			r.reset()
			continue
		case <-sig:
		}
		break
	}
	total, report := r.stop()
	fmt.Printf("%d\n%s", total, report)
	return nil
}

// observer is a process that records the management cluster's changes (see recordChanges) apart from
// the managers' process, whose memory the benchmark measures: it keeps a copy of every object.
type observer struct {
	cmd *exec.Cmd
	out *bufio.Reader
}

// observeChanges starts an observer process (the test binary again) keeping the first keep diffs of
// each kind; it returns once the observer watches every kind.
func observeChanges(b testing.TB, keep int) *observer {
	b.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$", "-test.bench=^$") //nolint:gosec // the test binary itself.
	cmd.Env = append(os.Environ(), observeEnv+"="+env.KubeconfigFile(b, ""), observeKeepEnv+"="+strconv.Itoa(keep))
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(fmt.Errorf("starting the observer: %w", err))
	}
	o := &observer{cmd: cmd, out: bufio.NewReader(stdout)}
	ready := make(chan error, 1)
	go func() {
		line, err := o.out.ReadString('\n')
		if err == nil && strings.TrimSpace(line) != "ready" {
			err = fmt.Errorf("the observer said %q", line)
		}
		ready <- err
	}()
	select {
	case err := <-ready:
		if err != nil {
			_ = cmd.Process.Kill()
			b.Fatal(fmt.Errorf("the observer did not start: %w", err))
		}
	case <-time.After(5 * time.Minute):
		_ = cmd.Process.Kill()
		b.Fatal("the observer does not watch after 5 minutes")
	}
	return o
}

// start makes the observer forget what it recorded so far: the measured period starts.
func (o *observer) start(b testing.TB) {
	b.Helper()
	if err := o.cmd.Process.Signal(syscall.SIGUSR1); err != nil {
		b.Fatal(fmt.Errorf("the observer: %w", err))
	}
}

// usage is what the observer used so far.
func (o *observer) usage() (procstat.Usage, error) { return procstat.Of(o.cmd.Process.Pid) }

// stop ends the observer and returns what it recorded (see changeRecorder.stop).
func (o *observer) stop(b testing.TB) (total int, report string) {
	b.Helper()
	_ = o.cmd.Process.Signal(syscall.SIGTERM)
	out, err := io.ReadAll(o.out)
	if werr := o.cmd.Wait(); werr != nil || err != nil {
		b.Fatal(fmt.Errorf("the observer failed: %w", errors.Join(werr, err)))
	}
	first, rest, _ := strings.Cut(string(out), "\n")
	total, err = strconv.Atoi(first)
	if err != nil {
		b.Fatal(fmt.Errorf("the observer's report: %q: %w", first, err))
	}
	return total, rest
}
