//go:build !linux

package supervisor

import "syscall"

// sysProcAttr puts the child in its own process group. Outside Linux there is no parent-death signal.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
