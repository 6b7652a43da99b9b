package move

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/blang/semver/v4"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterctlv1 "github.com/capstan-dev/capstan/api/clusterctl/v1alpha3"
)

// Cluster is a management cluster that objects move from or to.
type Cluster struct {
	// Client reads and writes the cluster. Its RESTMapper must discover kinds (controller-runtime's
	// default) and its scheme must know corev1, apiextensionsv1 and clusterctl's v1alpha3.
	Client client.Client
	// Name identifies the cluster in messages and in the journal, for example its API server URL.
	Name string
}

// NewScheme returns the scheme a Cluster's client needs.
func NewScheme() (*runtime.Scheme, error) {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{corev1.AddToScheme, apiextensionsv1.AddToScheme, clusterctlv1.AddToScheme} {
		if err := add(scheme); err != nil {
			return nil, err
		}
	}
	return scheme, nil
}

// Backoffs are the retry policies of a move.
type Backoffs struct {
	// Read retries reads.
	Read wait.Backoff
	// Write retries writes.
	Write wait.Backoff
	// BlockMove is how long the move waits for objects to drop the block-move annotation.
	BlockMove wait.Backoff
}

// DefaultBackoffs returns upstream's policies: reads 250ms ×1.5 9 times, writes 500ms ×1.5 13 times, and
// about two minutes for block-move (5s ×1.5, 10 steps).
func DefaultBackoffs() Backoffs {
	return Backoffs{
		Read:      wait.Backoff{Duration: 250 * time.Millisecond, Factor: 1.5, Steps: 9, Jitter: 0.1},
		Write:     wait.Backoff{Duration: 500 * time.Millisecond, Factor: 1.5, Steps: 13, Jitter: 0.4},
		BlockMove: wait.Backoff{Duration: 5 * time.Second, Factor: 1.5, Steps: 10, Jitter: 0.1},
	}
}

// retry runs fn until it succeeds, returns an error that retrying cannot fix, or the backoff is spent;
// it returns fn's last error.
func retry(ctx context.Context, b wait.Backoff, fn func(context.Context) error) error {
	for {
		err := fn(ctx)
		if err == nil || !retriable(err) || b.Steps <= 1 {
			return err
		}
		t := time.NewTimer(b.Step())
		select {
		case <-ctx.Done():
			t.Stop()
			return errors.Join(err, ctx.Err())
		case <-t.C:
		}
	}
}

// retriable reports whether an error may go away by itself.
func retriable(err error) bool {
	switch {
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded),
		apierrors.IsNotFound(err), apierrors.IsAlreadyExists(err), apierrors.IsInvalid(err),
		apierrors.IsBadRequest(err), apierrors.IsForbidden(err), apierrors.IsUnauthorized(err),
		apierrors.IsMethodNotSupported(err), apierrors.IsGone(err), isMissingKind(err):
		return false
	}
	var nr *nonRetriable
	return !errors.As(err, &nr)
}

// nonRetriable marks an error of the move's own making that retrying cannot fix.
type nonRetriable struct{ err error }

func (e *nonRetriable) Error() string { return e.err.Error() }
func (e *nonRetriable) Unwrap() error { return e.err }

func isMissingKind(err error) bool {
	return meta.IsNoMatchError(err) || discovery.IsGroupDiscoveryFailedError(err)
}

// get reads an object; found is false when it does not exist.
func (c *Cluster) get(ctx context.Context, b wait.Backoff, ref Ref) (obj *unstructured.Unstructured, found bool, err error) {
	err = retry(ctx, b, func(ctx context.Context) error {
		obj = ref.unstructured()
		return c.Client.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, obj)
	})
	if apierrors.IsNotFound(err) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("reading %s from %s: %w", ref, c.Name, err)
	}
	return obj, true, nil
}

// checkReachable returns an error when the cluster does not answer.
func (c *Cluster) checkReachable(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	if err := c.Client.List(ctx, &corev1.NamespaceList{}, client.Limit(1)); err != nil {
		return fmt.Errorf("the management cluster %s does not answer: %w", c.Name, err)
	}
	return nil
}

// providers returns clusterctl's inventory; none when the inventory CRD is not installed.
func (c *Cluster) providers(ctx context.Context, b wait.Backoff) ([]clusterctlv1.Provider, error) {
	list := &clusterctlv1.ProviderList{}
	err := retry(ctx, b, func(ctx context.Context) error { return c.Client.List(ctx, list) })
	if isMissingKind(err) || apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the provider inventory of %s: %w", c.Name, err)
	}
	return list.Items, nil
}

// checkProviders compares the inventories: the target must have every provider of the source, at the
// same or a newer version.
func checkProviders(from, to []clusterctlv1.Provider, target string) []string {
	var problems []string
	for _, sp := range from {
		sv, err := semver.ParseTolerant(sp.Version)
		if err != nil {
			problems = append(problems, fmt.Sprintf("provider %s in the source has an invalid version %q", sp.InstanceName(), sp.Version))
			continue
		}
		var best *semver.Version
		for _, tp := range to {
			if !sp.SameAs(tp) {
				continue
			}
			tv, err := semver.ParseTolerant(tp.Version)
			if err != nil {
				continue
			}
			if best == nil || tv.GT(*best) {
				best = &tv
			}
		}
		switch {
		case best == nil:
			problems = append(problems, fmt.Sprintf("provider %s (%s %s) is not installed in the target management cluster %s: install it there first (clusterctl init)",
				sp.ManifestLabel(), sp.Type, sp.Version, target))
		case best.LT(sv):
			problems = append(problems, fmt.Sprintf("provider %s in the target management cluster is older than in the source (source %s, target v%s): upgrade it there first (clusterctl upgrade apply)",
				sp.ManifestLabel(), sp.Version, best))
		}
	}
	return problems
}
