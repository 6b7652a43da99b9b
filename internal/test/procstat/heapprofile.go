package procstat

import (
	"os"
	"runtime"
	"runtime/pprof"
	"testing"
)

// WriteHeapProfile writes a heap profile of this process into the file the environment variable env
// names, if set, after a garbage collection: what is live, by allocation site (go tool pprof
// -sample_index=inuse_space). Benchmarks call it where the heap they measure is in use.
func WriteHeapProfile(tb testing.TB, env string) {
	tb.Helper()
	path := os.Getenv(env)
	if path == "" {
		return
	}
	runtime.GC()
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		tb.Fatal(err)
	}
	tb.Logf("heap profile of this process: %s", path)
}
