package clusterresourceset_test

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/capstan-dev/capstan/internal/test/builder"
	"github.com/capstan-dev/capstan/internal/test/envtest"
	"github.com/capstan-dev/capstan/internal/test/stack"
)

var (
	env      *envtest.Environment
	workload *envtest.Environment
)

// TestMain starts the management API server with the core controllers and the test provider, and a second
// API server that is the workload cluster of every Cluster. CAPSTAN_TEST_LOGS=1 shows the controllers' logs.
func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	envtest.SetupLogging()
	envs, err := envtest.StartAll(envtest.Options{CRDs: builder.CRDs()}, envtest.Options{})
	if err != nil {
		fmt.Fprintf(os.Stderr, "Starting the test API servers: %v\n", err)
		return 1
	}
	defer envtest.StopAll(envs)
	env, workload = envs[0], envs[1]
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s, err := stack.Start(ctx, env.Config, stack.Options{Workload: workload.Config})
	if err != nil {
		fmt.Fprintf(os.Stderr, "Starting the controllers: %v\n", err)
		return 1
	}
	go func() {
		if err := s.Wait(); err != nil && ctx.Err() == nil {
			panic(err)
		}
	}()
	return m.Run()
}
