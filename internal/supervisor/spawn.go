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
