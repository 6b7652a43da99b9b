package provider

import (
	"context"
	"errors"
	"fmt"

	ctrl "sigs.k8s.io/controller-runtime"

	clusterctlv1 "github.com/capstan-dev/capstan/api/clusterctl/v1alpha3"
	operatorv1 "github.com/capstan-dev/capstan/api/operator/v1alpha2"
	"github.com/capstan-dev/capstan/internal/clusterctl/repository"
	"github.com/capstan-dev/capstan/internal/httpclient"
	"github.com/capstan-dev/capstan/internal/operator/source"
	"github.com/capstan-dev/capstan/internal/reconciler"
)

// supportedContracts are the Cluster API contracts of the providers the operator installs.
var supportedContracts = []string{"v1beta1", "v1beta2"}

// fetch finds the provider's source and release: spec.version, or (when empty) the latest version that
// follows the core's contract, written back to spec.version. A release fetched over the network is
// cached in a ConfigMap and read from there afterwards, so a provider whose release is cached makes no
// network call.
func (r *Reconciler) fetch(ctx context.Context, s *scope) (ctrl.Result, error) {
	p := s.provider
	spec := p.GetProviderSpec()
	fail := func(err error) (ctrl.Result, error) {
		s.fetchErr = bad(operatorv1.ComponentsFetchErrorReason, err.Error())
		s.result.RequeueAfter = fetchRetryInterval
		return reconciler.Stop(nil)
	}
	src, err := r.source(s)
	if err != nil {
		s.preflight = bad(operatorv1.FetchConfigValidationErrorReason, err.Error())
		return reconciler.Stop(nil)
	}
	s.src = src

	version := spec.Version
	if version == "" {
		contract := s.coreContract
		if v, err := source.Latest(ctx, src, s.label, contract); err == nil {
			version = v
		} else {
			return fail(fmt.Errorf("finding the latest version of %s in %s: %w", s.label, src, err))
		}
		ctrl.LoggerFrom(ctx).Info("Using the latest version", "version", version, "source", src.String())
		spec.Version = version
	}

	cache := r.cacheFor()
	rel, err := cache.Get(ctx, p, src, version)
	if err != nil {
		return reconciler.Stop(err)
	}
	if rel != nil {
		// A cached release is used only as the operator fetched it: pinned by the digest recorded then.
		pin := p.GetProviderStatus().FetchedRelease
		switch {
		case pin == nil || pin.Version != version:
			rel = nil // not pinned: fetched again, and cached anew
		case source.Digest(rel) != pin.Digest:
			s.fetchErr = bad(operatorv1.CachedReleaseModifiedReason, fmt.Sprintf(
				"The cached release %s %s (ConfigMap %s/%s) is not what the operator fetched: its digest is %s, %s was recorded when it was fetched; delete the ConfigMap and the operator fetches the release again",
				s.label, version, p.GetNamespace(), source.CacheName(s.label, version), source.Digest(rel), pin.Digest))
			s.result.RequeueAfter = fetchRetryInterval
			return reconciler.Stop(nil)
		}
	}
	if rel == nil {
		if src.Remote() {
			ctrl.LoggerFrom(ctx).Info("Fetching the release", "version", version, "source", src.String())
		}
		if rel, err = src.Release(ctx, version); err != nil {
			return fail(r.explainFetch(s.label, version, src, err))
		}
		if src.Remote() {
			if err := cache.Put(ctx, p, src, rel); err != nil {
				return reconciler.Stop(err)
			}
			p.GetProviderStatus().FetchedRelease = &operatorv1.FetchedRelease{Version: version, Digest: source.Digest(rel)}
		}
	}
	s.release = rel
	if s.contract, err = source.ContractOf(s.label, rel); err != nil {
		return fail(err)
	}
	return ctrl.Result{}, nil
}

// explainFetch turns a failed fetch into a message that says what to do.
func (r *Reconciler) explainFetch(label, version string, src source.Source, err error) error {
	var vnf *repository.VersionNotFoundError
	var connect *httpclient.ConnectTimeoutError
	var timeout interface{ Timeout() bool }
	var repoTimeout *repository.TimeoutError
	switch {
	case !src.Remote():
		// ConfigMaps: the error names the ConfigMap and what it lacks; retrying cannot fix it.
		return err
	case errors.As(err, &vnf):
		return err
	case errors.Is(err, repository.ErrNotFound):
		return fmt.Errorf("%w; check spec.version and spec.fetchConfig", err)
	case errors.As(err, &repoTimeout):
		// The download says how long it waited.
		return fmt.Errorf("fetching version %s of %s from %s: %w (--fetch-timeout); the operator tries again", version, label, src, err)
	case r.HTTPClient != nil && r.HTTPClient.Timeout > 0 && !errors.As(err, &connect) && errors.As(err, &timeout) && timeout.Timeout():
		// The client's own message ("Client.Timeout exceeded") does not say how long it waited.
		return fmt.Errorf("fetching version %s of %s from %s: no complete answer within %s (--fetch-timeout): %w; the operator tries again",
			version, label, src, r.HTTPClient.Timeout, err)
	}
	return fmt.Errorf("fetching version %s of %s from %s: %w; the operator tries again", version, label, src, err)
}

// source returns where the provider's releases come from.
func (r *Reconciler) source(s *scope) (source.Source, error) {
	retry := r.Retry
	if retry == (repository.Retry{}) {
		retry = FetchRetry
	}
	return source.ForProvider(s.provider, source.ProviderOptions{
		Reader: r.APIReader, Config: s.config, HTTPClient: r.HTTPClient, Retry: retry, Contract: s.coreContract,
	})
}

// isSupportedContract reports whether the operator installs providers of a contract.
func isSupportedContract(c string) bool {
	for _, s := range supportedContracts {
		if s == c {
			return true
		}
	}
	return false
}

// coreType reports whether p is the core provider.
func coreType(p operatorv1.GenericProvider) bool {
	return p.ProviderType() == clusterctlv1.CoreProviderType
}
