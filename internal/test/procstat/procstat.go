// Package procstat reads a process's CPU time and memory from /proc (Linux), for benchmarks that measure
// several processes apart.
package procstat

import (
	"fmt"

	"github.com/prometheus/procfs"
)

// Usage is what a process used so far.
type Usage struct {
	// CPUSeconds is the process's user and system CPU time (/proc/<pid>/stat utime + stime).
	CPUSeconds float64
	// PeakRSSMiB is the process's peak resident set size (/proc/<pid>/status VmHWM).
	PeakRSSMiB float64
	// RSSMiB is the process's resident set size now (/proc/<pid>/status VmRSS).
	RSSMiB float64
}

// Of reads the usage of the process pid.
func Of(pid int) (Usage, error) {
	p, err := procfs.NewProc(pid)
	if err != nil {
		return Usage{}, fmt.Errorf("reading process %d: %w", pid, err)
	}
	return read(p)
}

// Self reads the usage of this process.
func Self() (Usage, error) {
	p, err := procfs.Self()
	if err != nil {
		return Usage{}, fmt.Errorf("reading this process: %w", err)
	}
	return read(p)
}

func read(p procfs.Proc) (Usage, error) {
	st, err := p.Stat()
	if err != nil {
		return Usage{}, fmt.Errorf("reading the CPU time of process %d: %w", p.PID, err)
	}
	status, err := p.NewStatus()
	if err != nil {
		return Usage{}, fmt.Errorf("reading the memory of process %d: %w", p.PID, err)
	}
	const mib = 1 << 20
	return Usage{CPUSeconds: st.CPUTime(), PeakRSSMiB: float64(status.VmHWM) / mib, RSSMiB: float64(status.VmRSS) / mib}, nil
}
