package supervisor

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// writePidFile records pid in path atomically: a reader never sees half a pid.
func writePidFile(path string, pid int) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(strconv.Itoa(pid)+"\n"), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// KillStale kills the process recorded in pidFile (see Spec.PidFile) by a supervisor that is gone, for
// example one that was killed on a platform without a parent-death signal, so that the next run does not
// find its data or its port held by the old one. It kills the process only while it still runs with dir,
// or a path below it, on its command line (a pid reused by an unrelated process is left alone), waits up
// to timeout for it to exit and removes the pid file. It reports whether it killed a process.
//
// Telling whether a process holds dir needs /proc; elsewhere KillStale kills nothing.
func KillStale(pidFile, dir string, timeout time.Duration) (bool, error) {
	name := strings.TrimSuffix(filepath.Base(pidFile), ".pid")
	data, err := os.ReadFile(pidFile)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil || pid <= 0 || !holdsDir(pid, dir) {
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

// holdsDir reports whether process pid is alive (not a zombie) and has dir, or a path below it, in its
// command line.
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
