package supervisor

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	. "github.com/onsi/gomega"
)

// The test binary doubles as the supervised program: SUPERVISOR_TEST_MODE selects what it does.
func TestMain(m *testing.M) {
	switch os.Getenv("SUPERVISOR_TEST_MODE") {
	case "":
		os.Exit(m.Run())
	case "sleep":
		fmt.Println("sleeping")
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
		time.Sleep(time.Hour)
	}
	os.Exit(0)
}

func alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	// A zombie still answers signal 0; read its state to tell.
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return syscall.Kill(pid, 0) == nil
	}
	fields := strings.Fields(string(data))
	return len(fields) > 2 && fields[2] != "Z"
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
	g.Expect(alive(pid)).To(BeTrue())
	p.Stop()
	g.Eventually(func() bool { return alive(pid) }, 5*time.Second).Should(BeFalse())
	g.Expect(p.Pid()).To(BeZero())
	select {
	case <-p.Done():
	default:
		t.Fatal("Done is not closed after Stop")
	}
}

func TestStartFailsForAMissingExecutable(t *testing.T) {
	_, err := Start(context.Background(), Spec{Name: "ghost", Path: "/does/not/exist"}, Options{})
	NewWithT(t).Expect(err).To(MatchError(ContainSubstring("starting ghost (/does/not/exist)")))
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
	g.Expect(alive(childPid)).To(BeTrue())

	g.Expect(parent.Process.Kill()).To(Succeed()) // SIGKILL: the parent cannot clean up
	_ = parent.Wait()
	g.Eventually(func() bool { return alive(childPid) }, 5*time.Second, 20*time.Millisecond).Should(BeFalse(),
		"the child must not outlive its supervisor")
}
