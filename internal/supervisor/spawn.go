package supervisor

import (
	"os/exec"
	"runtime"
	"sync"
)

// The parent-death signal is tied to the thread that forked the child, not to the process: if that thread
// ended, the child would be killed although its supervisor still runs. Go ends an OS thread when a goroutine
// locked to it returns, so children are started from one goroutine locked to its thread for the life of the
// process.
var (
	spawnOnce     sync.Once
	spawnRequests chan spawnRequest
)

type spawnRequest struct {
	cmd  *exec.Cmd
	done chan error
}

func spawn(cmd *exec.Cmd) error {
	spawnOnce.Do(func() {
		spawnRequests = make(chan spawnRequest)
		go func() {
			runtime.LockOSThread() // never unlocked: this thread lives as long as the process
			for r := range spawnRequests {
				r.done <- r.cmd.Start()
			}
		}()
	})
	done := make(chan error, 1)
	spawnRequests <- spawnRequest{cmd: cmd, done: done}
	return <-done
}

// StartChild starts cmd as a child that does not outlive this process: in its own process group and, on
// Linux, with the parent-death signal SIGKILL, forked from the thread that lives as long as the process
// (as the supervised processes are). Unlike Start, nothing restarts it.
func StartChild(cmd *exec.Cmd) error {
	cmd.SysProcAttr = sysProcAttr()
	return spawn(cmd)
}
