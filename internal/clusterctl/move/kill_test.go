package move_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-logr/logr"
	. "github.com/onsi/gomega"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/capstan-dev/capstan/internal/clusterctl/move"
	"github.com/capstan-dev/capstan/internal/clusterctl/move/movetest"
)

// The child process: the test binary run again with these variables moves a namespace and kills itself
// with SIGKILL at a checkpoint.
const (
	childEnv             = "CAPSTAN_MOVE_TEST_CHILD" // the checkpoint to die at, with "NS" for the namespace
	childSourceEnv       = "CAPSTAN_MOVE_TEST_SOURCE"
	childTargetEnv       = "CAPSTAN_MOVE_TEST_TARGET"
	childNamespaceEnv    = "CAPSTAN_MOVE_TEST_NAMESPACE"
	killedMessage        = "killing myself at checkpoint "
	namespacePlaceholder = "NS"
)

func runChild() int {
	ctrllog.SetLogger(logr.Discard())
	ns := os.Getenv(childNamespaceEnv)
	killAt := strings.ReplaceAll(os.Getenv(childEnv), namespacePlaceholder+"/", ns+"/")
	clusterFrom := func(env, name string) (*move.Cluster, error) {
		data, err := os.ReadFile(os.Getenv(env))
		if err != nil {
			return nil, err
		}
		cfg, err := clientcmd.RESTConfigFromKubeConfig(data)
		if err != nil {
			return nil, err
		}
		cfg.QPS, cfg.Burst = 100, 200
		scheme, err := move.NewScheme()
		if err != nil {
			return nil, err
		}
		c, err := client.New(cfg, client.Options{Scheme: scheme})
		if err != nil {
			return nil, err
		}
		return &move.Cluster{Client: c, Name: name}, nil
	}
	from, err := clusterFrom(childSourceEnv, "source")
	if err == nil {
		var to *move.Cluster
		if to, err = clusterFrom(childTargetEnv, "target"); err == nil {
			_, err = move.Move(context.Background(), from, to, move.Options{Namespace: ns, Backoffs: fastBackoffs(), Checkpoint: func(name string) {
				if name == killAt {
					fmt.Fprintln(os.Stderr, killedMessage+name)
					_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
					// SIGKILL is on its way: the process never gets further.
					time.Sleep(time.Minute)
				}
			}})
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Fprintln(os.Stderr, "the move finished without reaching checkpoint "+killAt)
	return 2
}

// killPoints picks n checkpoints spread evenly over a move, from the first to the last, plus the
// boundaries between its phases.
func killPoints(names []string, n int) []string {
	var own []string // Checkpoints of the global identities of other namespaces vary from run to run.
	for _, name := range names {
		if !strings.Contains(name, movetest.IdentityKind) || strings.Contains(name, namespacePlaceholder+"-identity") {
			own = append(own, name)
		}
	}
	seen := map[string]bool{}
	var out []string
	add := func(name string) {
		if !seen[name] {
			seen[name] = true
			out = append(out, name)
		}
	}
	for i := range n {
		add(own[i*(len(own)-1)/(n-1)])
	}
	for _, boundary := range []string{"journal", "pause Cluster NS/bravo", "group 3", "unblocked", "deleting", "unpausing", "unpause Cluster NS/bravo"} {
		add(boundary)
	}
	return out
}

// TestMoveKilledAndRunAgain kills `move` with SIGKILL at points spread over the whole sequence, then runs
// the same move again: every time, it converges to the end state of an uninterrupted move, and between
// the two runs nothing is lost (every object is in the source or in the target).
func TestMoveKilledAndRunAgain(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a child process per kill point")
	}
	g := NewWithT(t)
	ctx := testContext(t)

	// An uninterrupted move records the checkpoints.
	ns := newNamespace(t, threeClusters...)
	var names []string
	before, err := movetest.Take(ctx, source.Client, ns)
	g.Expect(err).NotTo(HaveOccurred())
	_, err = move.Move(ctx, clusterOf(t, source, "source"), clusterOf(t, target, "target"), move.Options{Namespace: ns, Backoffs: fastBackoffs(),
		Checkpoint: func(name string) { names = append(names, strings.ReplaceAll(name, ns, namespacePlaceholder)) }})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(movetest.Verify(ctx, source.Client, target.Client, ns, before)).To(BeEmpty())
	g.Expect(names[0]).To(Equal("preflight"))
	g.Expect(names[len(names)-1]).To(Equal("done"))

	sourceKubeconfig := source.KubeconfigFile(t, "")
	targetKubeconfig := target.KubeconfigFile(t, "")
	points := killPoints(names, 6)
	g.Expect(len(points)).To(BeNumerically(">=", 10))
	for _, point := range points {
		t.Run("killed at "+point, func(t *testing.T) {
			g := NewWithT(t)
			ctx := testContext(t)
			ns := newNamespace(t, threeClusters...)
			before, err := movetest.Take(ctx, source.Client, ns)
			g.Expect(err).NotTo(HaveOccurred())

			cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			cmd.Env = append(os.Environ(), childEnv+"="+point, childSourceEnv+"="+sourceKubeconfig,
				childTargetEnv+"="+targetKubeconfig, childNamespaceEnv+"="+ns)
			err = cmd.Run()
			var exit *exec.ExitError
			g.Expect(errors.As(err, &exit)).To(BeTrue(), "%v: %s", err, stderr.String())
			status, _ := exit.Sys().(syscall.WaitStatus)
			g.Expect(status.Signaled() && status.Signal() == syscall.SIGKILL).To(BeTrue(), "the move was not killed: %s", stderr.String())
			g.Expect(stderr.String()).To(ContainSubstring(killedMessage))

			// Nothing is lost: every object is somewhere.
			inSource, err := movetest.Take(ctx, source.Client, ns)
			g.Expect(err).NotTo(HaveOccurred())
			inTarget, err := movetest.Take(ctx, target.Client, ns)
			g.Expect(err).NotTo(HaveOccurred())
			for key := range before {
				_, s := inSource[key]
				_, tg := inTarget[key]
				g.Expect(s || tg).To(BeTrue(), "%s is neither in the source nor in the target", key)
			}

			res, err := move.Move(ctx, clusterOf(t, source, "source"), clusterOf(t, target, "target"), move.Options{Namespace: ns, Backoffs: fastBackoffs()})
			g.Expect(err).NotTo(HaveOccurred())
			switch point {
			case "preflight":
				g.Expect(res.Resumed).To(BeEmpty())
			case "done": // The move had finished: the second run says so.
				g.Expect(res.Warnings).To(ConsistOf(ContainSubstring("nothing left to move")))
			default:
				g.Expect(res.Resumed).NotTo(BeEmpty())
			}
			problems := movetest.Verify(ctx, source.Client, target.Client, ns, before)
			g.Expect(problems).To(BeEmpty(), strings.Join(problems, "\n"))
		})
	}
}
