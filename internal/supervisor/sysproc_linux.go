package supervisor

import "syscall"

// sysProcAttr puts the child in its own process group (so a terminal's Ctrl-C reaches only the supervisor,
// which stops children in order) and asks the kernel to kill it when the supervisor dies.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
