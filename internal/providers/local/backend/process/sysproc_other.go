//go:build !linux

package process

import "syscall"

// sysProcAttr puts a child in its own process group. Without a parent-death signal on this platform,
// children of a provider that was killed are found through their pid files and killed on the next start.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
