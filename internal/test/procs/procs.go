// Package procs lets tests look at the processes of this machine through /proc (Linux): whether a pid
// runs, which processes of a program work below a directory or have a variable in their environment, the
// pid a pid file names, and the TCP sockets processes listen on.
package procs

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Alive reports whether pid is a process that exists and is not a zombie (a zombie has exited; only its
// parent has not collected it yet).
func Alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// The command name, in parentheses, may hold spaces and parentheses: the state follows the last ')'.
	fields := strings.Fields(string(data[bytes.LastIndexByte(data, ')')+1:]))
	return len(fields) > 0 && fields[0] != "Z"
}

// Find returns the pids of the live processes whose executable is named program (etcd, kube-apiserver,
// ...) and whose command line holds a path below dir.
func Find(program, dir string) []int {
	below := dir + string(filepath.Separator)
	return find(program, func(_ string, cmdline string, _ []string) bool { return strings.Contains(cmdline, below) })
}

// find returns the pids of the live processes whose executable is named program and whose command line
// (whole, and split into its arguments after the executable) matches; dir is the process's /proc directory.
func find(program string, matches func(dir, cmdline string, args []string) bool) []int {
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || len(cmdline) == 0 {
			continue
		}
		args := strings.Split(string(cmdline), "\x00")
		if filepath.Base(args[0]) == program && matches(filepath.Join("/proc", e.Name()), string(cmdline), args[1:]) && Alive(pid) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// ReadPidFile returns the pid written in a pid file.
func ReadPidFile(path string) (int, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		return 0, fmt.Errorf("pid file %s: %w", path, err)
	}
	return pid, nil
}

// Descendants returns the pids of the live processes below pid (its children, theirs, ...).
func Descendants(pid int) []int {
	children := map[int][]int{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// The command name may hold spaces and parentheses: the fields after the last ')' are fixed.
		fields := strings.Fields(string(data[bytes.LastIndexByte(data, ')')+1:]))
		if len(fields) < 2 || fields[0] == "Z" {
			continue
		}
		ppid, _ := strconv.Atoi(fields[1])
		children[ppid] = append(children[ppid], p)
	}
	var out []int
	queue := []int{pid}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range children[p] {
			out = append(out, c)
			queue = append(queue, c)
		}
	}
	return out
}

// Cmdline returns the command line of pid, its arguments separated by spaces; "" when it is gone.
func Cmdline(pid int) string {
	data, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	return strings.TrimSpace(strings.ReplaceAll(string(data), "\x00", " "))
}

// FindWithArg returns the pids of the live processes whose executable is named program and one of whose
// arguments is arg exactly (for example "--data-dir=/tmp/k8s_test_framework_1234").
func FindWithArg(program, arg string) []int {
	return find(program, func(_, _ string, args []string) bool { return slices.Contains(args, arg) })
}

// FindWithEnv returns the pids of the live processes whose executable is named program and whose
// environment holds variable exactly (for example "KUBECONFIG=/tmp/state/runtime/ns/name/kubeconfig").
// Only the processes of this user show their environment.
func FindWithEnv(program, variable string) []int {
	return find(program, func(dir, _ string, _ []string) bool {
		env, err := os.ReadFile(filepath.Join(dir, "environ"))
		return err == nil && slices.Contains(strings.Split(string(env), "\x00"), variable)
	})
}
