package procs

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
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
		time.Sleep(10 * time.Millisecond)
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
