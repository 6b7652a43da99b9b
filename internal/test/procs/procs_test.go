package procs

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	. "github.com/onsi/gomega"
)

func TestFindAndAlive(t *testing.T) {
	dir := t.TempDir()
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep command")
	}
	// Run sleep through a symlink below dir, so that its command line holds the directory.
	link := filepath.Join(dir, "bin", "sleep")
	if err := os.MkdirAll(filepath.Dir(link), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(sleep, link); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(link, "30")
	cmd.Env = append(os.Environ(), "PROCS_TEST_DIR="+dir)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })

	if !Alive(pid) {
		t.Fatalf("Alive(%d) = false for a running process", pid)
	}
	// Right after the exec, the kernel may not show the new command line yet.
	deadline := time.Now().Add(10 * time.Second)
	for got := Find("sleep", dir); len(got) != 1 || got[0] != pid; got = Find("sleep", dir) {
		if time.Now().After(deadline) {
			t.Fatalf("Find(sleep, %s) = %v, want [%d]", dir, got, pid)
		}
		// Polled until the deadline.
		time.Sleep(10 * time.Millisecond)
	}
	if got := FindWithEnv("sleep", "PROCS_TEST_DIR="+dir); len(got) != 1 || got[0] != pid {
		t.Fatalf("FindWithEnv(sleep, PROCS_TEST_DIR=%s) = %v, want [%d]", dir, got, pid)
	}
	if got := FindWithEnv("sleep", "PROCS_TEST_DIR="+dir+"/other"); len(got) != 0 {
		t.Fatalf("FindWithEnv with another value = %v, want none", got)
	}
	if got := Find("sleep", filepath.Join(dir, "other")); len(got) != 0 {
		t.Fatalf("Find below another directory = %v, want none", got)
	}
	if got := Find("etcd", dir); len(got) != 0 {
		t.Fatalf("Find(etcd) = %v, want none", got)
	}

	pidFile := filepath.Join(dir, "sleep.pid")
	if err := os.WriteFile(pidFile, []byte(strconv.Itoa(pid)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, err := ReadPidFile(pidFile); err != nil || got != pid {
		t.Fatalf("ReadPidFile = %d, %v; want %d", got, err, pid)
	}

	// Killed but not yet collected by its parent (this test), the process is a zombie: not alive.
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	deadline = time.Now().Add(10 * time.Second)
	for Alive(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("process %d still alive 10s after SIGKILL", pid)
		}
		// Polled until the deadline.
		time.Sleep(20 * time.Millisecond)
	}
	if got := Find("sleep", dir); len(got) != 0 {
		t.Fatalf("Find after kill = %v, want none", got)
	}
}

func TestReadPidFileErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := ReadPidFile(filepath.Join(dir, "missing.pid")); !os.IsNotExist(err) {
		t.Fatalf("missing file: got %v, want a not-exist error", err)
	}
	bad := filepath.Join(dir, "bad.pid")
	if err := os.WriteFile(bad, []byte("not a pid"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadPidFile(bad); err == nil {
		t.Fatal("a pid file without a number was accepted")
	}
}

func TestListeners(t *testing.T) {
	g := NewWithT(t)
	l4, err := net.Listen("tcp4", "127.0.0.1:0")
	g.Expect(err).NotTo(HaveOccurred())
	defer func() { _ = l4.Close() }()
	listeners, err := Listeners([]int{os.Getpid()})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(listeners).To(ContainElement(HaveField("Addr.Port", l4.Addr().(*net.TCPAddr).Port)))
	for _, l := range listeners {
		if l.Addr.Port == l4.Addr().(*net.TCPAddr).Port {
			g.Expect(l.Addr.IP.Equal(net.IPv4(127, 0, 0, 1))).To(BeTrue(), "%s", l)
			g.Expect(l.Pid).To(Equal(os.Getpid()))
		}
	}
	if l6, err := net.Listen("tcp6", "[::1]:0"); err == nil {
		defer func() { _ = l6.Close() }()
		listeners, err := Listeners([]int{os.Getpid()})
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(listeners).To(ContainElement(HaveField("Addr.IP", Equal(net.IPv6loopback))))
	}
	// A server on every address (what a bare port gives) is seen as such.
	all, err := net.Listen("tcp", ":0")
	g.Expect(err).NotTo(HaveOccurred())
	defer func() { _ = all.Close() }()
	listeners, err = Listeners([]int{os.Getpid()})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(listeners).To(ContainElement(And(HaveField("Addr.Port", all.Addr().(*net.TCPAddr).Port),
		WithTransform(func(l Listener) bool { return l.Addr.IP.IsUnspecified() && !l.Addr.IP.IsLoopback() }, BeTrue()))))
	g.Expect(Listeners([]int{-1})).To(BeEmpty(), "no such process")
}

func TestParseProcAddr(t *testing.T) {
	g := NewWithT(t)
	a, err := parseProcAddr("0100007F:1F90")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(a.String()).To(Equal("127.0.0.1:8080"))
	a, err = parseProcAddr("00000000000000000000000001000000:0050")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(a.String()).To(Equal("[::1]:80"))
	a, err = parseProcAddr("00000000:24D4")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(a.IP.IsUnspecified()).To(BeTrue())
	_, err = parseProcAddr("zz:1")
	g.Expect(err).To(HaveOccurred())
}
