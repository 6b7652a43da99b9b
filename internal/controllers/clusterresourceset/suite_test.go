package clusterresourceset_test

import (
	"context"
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
	os.Exit(envtest.RunAll(m, []envtest.Options{{CRDs: builder.CRDs()}, {}}, func(ctx context.Context, envs []*envtest.Environment) error {
		env, workload = envs[0], envs[1]
		_, err := stack.StartWatched(ctx, env.Config, stack.Options{Workload: workload.Config})
		return err
	}))
}
