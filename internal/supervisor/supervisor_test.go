package supervisor

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/capstan-dev/capstan/internal/test/procs"
)

// The test binary doubles as the supervised program: SUPERVISOR_TEST_MODE selects what it does.
func TestMain(m *testing.M) {
	switch os.Getenv("SUPERVISOR_TEST_MODE") {
	case "":
		os.Exit(m.Run())
	case "sleep":
		fmt.Println("sleeping")
		// The child runs until the test stops it.
		time.Sleep(time.Hour)
	case "crash":
		// Count the runs in a file, then crash.
		f := os.Getenv("SUPERVISOR_TEST_FILE")
		data, _ := os.ReadFile(f)
		n, _ := strconv.Atoi(strings.TrimSpace(string(data)))
		_ = os.WriteFile(f, []byte(strconv.Itoa(n+1)), 0o644)
		os.Exit(3)
	case "parent":
		// Supervise a sleeping child, print its pid, then wait to be killed.
		p, err := Start(context.Background(), Spec{Name: "child", Path: os.Args[0], Env: append(os.Environ(), "SUPERVISOR_TEST_MODE=sleep")}, Options{})
		if err != nil {
			fmt.Println("error", err)
			os.Exit(1)
		}
		fmt.Println(p.Pid())
		// The child runs until the test stops it.
		time.Sleep(time.Hour)
	}
	os.Exit(0)
}

func TestRestartsWithBackoffAndLogs(t *testing.T) {
	g := NewWithT(t)
	dir := t.TempDir()
	counter := filepath.Join(dir, "runs")
	logFile := filepath.Join(dir, "logs", "crash.log")
	p, err := Start(context.Background(), Spec{
		Name: "crash", Path: os.Args[0], LogFile: logFile,
		Env: append(os.Environ(), "SUPERVISOR_TEST_MODE=crash", "SUPERVISOR_TEST_FILE="+counter),
	}, Options{MinBackoff: 10 * time.Millisecond, MaxBackoff: 40 * time.Millisecond})
	g.Expect(err).NotTo(HaveOccurred())
	defer p.Stop()
	g.Eventually(func() int {
		data, _ := os.ReadFile(counter)
		n, _ := strconv.Atoi(string(data))
		return n
	}, 10*time.Second, 10*time.Millisecond).Should(BeNumerically(">=", 4))
	g.Expect(p.Starts()).To(BeNumerically(">=", 4))
	g.Expect(p.LastExit()).To(MatchError(ContainSubstring("exit status 3")))
	g.Expect(logFile).To(BeAnExistingFile())
}

func TestStopTerminatesTheProcess(t *testing.T) {
	g := NewWithT(t)
	p, err := Start(context.Background(), Spec{Name: "sleep", Path: os.Args[0], Env: append(os.Environ(), "SUPERVISOR_TEST_MODE=sleep")}, Options{})
	g.Expect(err).NotTo(HaveOccurred())
	pid := p.Pid()
	g.Expect(procs.Alive(pid)).To(BeTrue())
	p.Stop()
	g.Eventually(func() bool { return procs.Alive(pid) }, 5*time.Second).Should(BeFalse())
	g.Expect(p.Pid()).To(BeZero())
	select {
	case <-p.Done():
	default:
		t.Fatal("Done is not closed after Stop")
	}
}

func TestStartFailsForAMissingExecutable(t *testing.T) {
	_, err := Start(context.Background(), Spec{Name: "ghost", Path: "/does/not/exist"}, Options{})
	NewWithT(t).Expect(err).To(MatchError(And(ContainSubstring("starting ghost: "), ContainSubstring("/does/not/exist"))))
}

func TestChildrenDieWithTheirSupervisor(t *testing.T) {
	g := NewWithT(t)
	parent := exec.Command(os.Args[0])
	parent.Env = append(os.Environ(), "SUPERVISOR_TEST_MODE=parent")
	out, err := parent.StdoutPipe()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(parent.Start()).To(Succeed())
	line, err := bufio.NewReader(out).ReadString('\n')
	g.Expect(err).NotTo(HaveOccurred())
	childPid, err := strconv.Atoi(strings.TrimSpace(line))
	g.Expect(err).NotTo(HaveOccurred(), "parent printed %q", line)
	g.Expect(procs.Alive(childPid)).To(BeTrue())

	g.Expect(parent.Process.Kill()).To(Succeed()) // SIGKILL: the parent cannot clean up
	_ = parent.Wait()
	g.Eventually(func() bool { return procs.Alive(childPid) }, 5*time.Second, 20*time.Millisecond).Should(BeFalse(),
		"the child must not outlive its supervisor")
}

func TestRunReportsStartFailuresAndRetries(t *testing.T) {
	g := NewWithT(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "program")
	changes := make(chan struct{}, 100)
	p := Run(context.Background(), Spec{Name: "late", Path: path, Env: append(os.Environ(), "SUPERVISOR_TEST_MODE=sleep")}, Options{
		MinBackoff: 10 * time.Millisecond, MaxBackoff: 20 * time.Millisecond,
		OnChange: func() {
			select {
			case changes <- struct{}{}:
			default:
			}
		},
	})
	defer p.Stop()
	g.Eventually(func() error { return p.State().Err }, 5*time.Second, 10*time.Millisecond).Should(MatchError(ContainSubstring("starting late: ")))
	g.Expect(p.State().Running).To(BeFalse())
	g.Expect(changes).To(Receive())

	// Once the executable exists, the next attempt starts it.
	g.Expect(os.Symlink(os.Args[0], path)).To(Succeed())
	g.Eventually(func() State { return p.State() }, 10*time.Second, 10*time.Millisecond).Should(And(
		HaveField("Running", BeTrue()), HaveField("Err", BeNil()), HaveField("Starts", 1)))
}

func TestReadyDelaysTheStart(t *testing.T) {
	g := NewWithT(t)
	notReady := errors.New("port 1234 is in use")
	var mu sync.Mutex
	ready := notReady
	p := Run(context.Background(), Spec{
		Name: "sleep", Path: os.Args[0], Env: append(os.Environ(), "SUPERVISOR_TEST_MODE=sleep"),
		Ready: func(context.Context) error { mu.Lock(); defer mu.Unlock(); return ready },
	}, Options{MinBackoff: 10 * time.Millisecond, MaxBackoff: 20 * time.Millisecond})
	defer p.Stop()
	g.Eventually(func() error { return p.State().Err }, 5*time.Second, 10*time.Millisecond).Should(MatchError(notReady))
	g.Consistently(func() int { return p.State().Starts }, 100*time.Millisecond, 10*time.Millisecond).Should(BeZero())

	mu.Lock()
	ready = nil
	mu.Unlock()
	g.Eventually(func() bool { return p.State().Running }, 5*time.Second, 10*time.Millisecond).Should(BeTrue())
	g.Expect(p.State().Err).To(BeNil())
}

func TestPidFileAndStateFollowTheRuns(t *testing.T) {
	g := NewWithT(t)
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "sleep.pid")
	p, err := Start(context.Background(), Spec{
		Name: "sleep", Path: os.Args[0], Env: append(os.Environ(), "SUPERVISOR_TEST_MODE=sleep"), PidFile: pidFile,
	}, Options{MinBackoff: 10 * time.Millisecond, MaxBackoff: 20 * time.Millisecond})
	g.Expect(err).NotTo(HaveOccurred())
	defer p.Stop()
	first := p.Pid()
	g.Expect(procs.ReadPidFile(pidFile)).To(Equal(first))
	g.Expect(p.State()).To(Equal(State{Running: true, Pid: first, Starts: 1}))

	g.Expect(syscall.Kill(first, syscall.SIGKILL)).To(Succeed())
	g.Eventually(func() int { return p.State().Exits }, 5*time.Second, 10*time.Millisecond).Should(Equal(1))
	g.Eventually(func() bool { return p.State().Running }, 5*time.Second, 10*time.Millisecond).Should(BeTrue())
	g.Expect(p.Pid()).NotTo(Equal(first))
	g.Expect(procs.ReadPidFile(pidFile)).To(Equal(p.Pid()))
	g.Expect(p.LastExit()).To(MatchError("signal: killed"))

	p.Stop()
	g.Expect(pidFile).NotTo(BeAnExistingFile())
	g.Expect(p.State()).To(HaveField("Running", BeFalse()))
	g.Expect(p.State().Exits).To(Equal(1), "a stop is not an exit")
}

func TestLogIsTruncatedAboveItsLimit(t *testing.T) {
	g := NewWithT(t)
	dir := t.TempDir()
	logFile := filepath.Join(dir, "logs", "sleep.log")
	g.Expect(os.MkdirAll(filepath.Dir(logFile), 0o700)).To(Succeed())
	g.Expect(os.WriteFile(logFile, []byte(strings.Repeat("x", 100)), 0o600)).To(Succeed())
	spec := Spec{Name: "sleep", Path: os.Args[0], Env: append(os.Environ(), "SUPERVISOR_TEST_MODE=sleep"), LogFile: logFile, MaxLogSize: 1000}

	p, err := Start(context.Background(), spec, Options{})
	g.Expect(err).NotTo(HaveOccurred())
	g.Eventually(func() (string, error) { data, err := os.ReadFile(logFile); return string(data), err }, 5*time.Second).
		Should(Equal(strings.Repeat("x", 100)+"sleeping\n"), "below the limit, the log is appended to")
	p.Stop()

	spec.MaxLogSize = 50
	p, err = Start(context.Background(), spec, Options{})
	g.Expect(err).NotTo(HaveOccurred())
	defer p.Stop()
	g.Eventually(func() (string, error) { data, err := os.ReadFile(logFile); return string(data), err }, 5*time.Second).
		Should(Equal("sleeping\n"), "above the limit, the log starts again")
}

func TestKillStale(t *testing.T) {
	g := NewWithT(t)
	dir := t.TempDir()
	// A process holding the directory on its command line, as etcd does with --data-dir=<dir>/etcd.
	stale := exec.Command("sh", "-c", "sleep 60; true", filepath.Join(dir, "etcd"))
	g.Expect(stale.Start()).To(Succeed())
	exited := make(chan struct{})
	go func() { _ = stale.Wait(); close(exited) }()
	t.Cleanup(func() { _ = stale.Process.Kill() })
	// Right after the exec, the kernel may not show the new command line yet; a stale process of a
	// supervisor that is gone has been running for long.
	g.Eventually(func() bool { return holdsDir(stale.Process.Pid, dir) }, 5*time.Second, 10*time.Millisecond).Should(BeTrue())
	// An unrelated process whose pid a stale pid file might name.
	other := exec.Command("sleep", "60")
	g.Expect(other.Start()).To(Succeed())
	t.Cleanup(func() { _ = other.Process.Kill(); _ = other.Wait() })

	otherPidFile := filepath.Join(dir, "kube-apiserver.pid")
	g.Expect(os.WriteFile(otherPidFile, []byte(strconv.Itoa(other.Process.Pid)), 0o600)).To(Succeed())
	killed, err := KillStale(otherPidFile, dir, 5*time.Second)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(killed).To(BeFalse(), "a process that does not hold the directory is left alone")
	g.Expect(other.ProcessState).To(BeNil())
	g.Expect(otherPidFile).NotTo(BeAnExistingFile())

	pidFile := filepath.Join(dir, "etcd.pid")
	g.Expect(os.WriteFile(pidFile, []byte(strconv.Itoa(stale.Process.Pid)), 0o600)).To(Succeed())
	killed, err = KillStale(pidFile, dir, 5*time.Second)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(killed).To(BeTrue())
	g.Eventually(exited, 5*time.Second).Should(BeClosed())

	killed, err = KillStale(pidFile, dir, time.Second)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(killed).To(BeFalse(), "no pid file, nothing to kill")
}
