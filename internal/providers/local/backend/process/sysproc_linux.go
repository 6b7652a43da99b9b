package process

import "syscall"

// sysProcAttr puts a child in its own process group (a terminal's Ctrl-C reaches the provider, which stops
// its children in order) and has the kernel kill it when the thread that started it dies. Children are
// started from one OS thread that never exits (see spawner), so that is when the provider dies.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
