package move_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/capstan-dev/capstan/internal/clusterctl/move"
	"github.com/capstan-dev/capstan/internal/clusterctl/move/movetest"
	"github.com/capstan-dev/capstan/internal/test/envtest"
)

// source and target are the two management clusters of the tests.
var source, target *envtest.Environment

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		os.Exit(runChild())
	}
	flag.Parse()
	if fuzzing() {
		// FuzzDirectory reads files only: `go test -fuzz` (make fuzz) runs without the two API servers,
		// which its coordinator and each of its workers would otherwise start.
		os.Exit(m.Run())
	}
	os.Exit(run(m))
}

// fuzzing tells whether this process is a fuzzing run of `go test -fuzz`: its coordinator or a worker.
func fuzzing() bool {
	if f := flag.Lookup("test.fuzz"); f != nil && f.Value.String() != "" {
		return true
	}
	f := flag.Lookup("test.fuzzworker")
	return f != nil && f.Value.String() == "true"
}

func run(m *testing.M) int {
	ctx := context.Background()
	ctrllog.SetLogger(logr.Discard())
	envs, err := envtest.StartAll(envtest.Options{CRDs: movetest.CRDs()}, envtest.Options{CRDs: movetest.CRDs()})
	if err != nil {
		fmt.Fprintf(os.Stderr, "Starting the test API servers: %v\n", err)
		return 1
	}
	defer envtest.StopAll(envs)
	source, target = envs[0], envs[1]
	if err := movetest.PrepareManagementCluster(ctx, source.Client, "v1.0.0"); err != nil {
		fmt.Fprintf(os.Stderr, "Preparing the source: %v\n", err)
		return 1
	}
	if err := movetest.PrepareManagementCluster(ctx, target.Client, "v1.1.0"); err != nil {
		fmt.Fprintf(os.Stderr, "Preparing the target: %v\n", err)
		return 1
	}
	return m.Run()
}

// fastBackoffs keep the tests short: retries and the block-move wait take milliseconds.
func fastBackoffs() *move.Backoffs {
	return &move.Backoffs{
		Read:      wait.Backoff{Duration: 10 * time.Millisecond, Factor: 1.5, Steps: 5},
		Write:     wait.Backoff{Duration: 10 * time.Millisecond, Factor: 1.5, Steps: 5},
		BlockMove: wait.Backoff{Duration: 50 * time.Millisecond, Factor: 1, Steps: 10},
	}
}

// clusterOf returns a move.Cluster with a client of its own, as the command builds it.
func clusterOf(t testing.TB, env *envtest.Environment, name string) *move.Cluster {
	t.Helper()
	scheme, err := move.NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New(env.Config, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	return &move.Cluster{Client: c, Name: name}
}

func testContext(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return logr.NewContext(ctx, logr.Discard())
}

// newNamespace creates a namespace in the source with the fixture's clusters. Namespaces are unique: the
// target's are left behind (the test API server has no namespace controller to empty them anyway).
func newNamespace(t testing.TB, clusters ...string) string {
	t.Helper()
	ns := source.NewNamespace(t)
	if len(clusters) > 0 {
		if err := movetest.CreateClusters(testContext(t), source.Client, ns, clusters...); err != nil {
			t.Fatal(err)
		}
	}
	return ns
}

func objectMeta(namespace, name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Namespace: namespace, Name: name}
}
