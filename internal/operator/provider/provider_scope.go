package provider

import (
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	operatorv1 "github.com/capstan-dev/capstan/api/operator/v1alpha2"
	"github.com/capstan-dev/capstan/internal/clusterctl/components"
	"github.com/capstan-dev/capstan/internal/clusterctl/config"
	"github.com/capstan-dev/capstan/internal/operator/source"
)

// scope holds what a reconcile learns, phase after phase; the status is computed from it in one place.
type scope struct {
	provider operatorv1.GenericProvider
	label    string
	result   reconcile.Result

	// Set by preflight.
	preflight    *fact
	config       *config.Config
	coreContract string
	secretData   map[string][]byte

	// Set by fetch.
	src      source.Source
	release  *source.Release
	contract string
	fetchErr *fact

	// Set by checkContract.
	contractErr *fact
	upgradeWait *fact
	unpause     *fact
	// pause is whether the provider is to be paused: spec.paused, or an unpause that is refused.
	pause bool

	// Set by render.
	components *components.Components
	hash       string
	parts      map[string]string
	renderErr  *fact

	// Set by install.
	installed *fact
	upgraded  *fact
	// held says that spec changes wait for the provider to be unpaused.
	held bool

	// Set by observeDeployments.
	deployments *fact
	paused      bool

	// Set by reconcileDelete.
	deletionBlocked *fact
}

// fact is a condition's outcome: a reason and a message; ok makes the condition True.
type fact struct {
	ok      bool
	reason  string
	message string
}

func good(reason, message string) *fact { return &fact{ok: true, reason: reason, message: message} }
func bad(reason, message string) *fact  { return &fact{reason: reason, message: message} }
