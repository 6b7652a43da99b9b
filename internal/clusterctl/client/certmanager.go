package client

import (
	"context"
	"fmt"
	"path"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	clusterctlv1 "github.com/capstan-dev/capstan/api/clusterctl/v1alpha3"
	"github.com/capstan-dev/capstan/internal/clusterctl/cluster"
	"github.com/capstan-dev/capstan/internal/clusterctl/config"
	"github.com/capstan-dev/capstan/internal/clusterctl/repository"
	"github.com/capstan-dev/capstan/internal/manifest"
)

// certManagerStep is what init or upgrade does about cert-manager once every check has passed.
type certManagerStep struct {
	// action is logged before objs are applied: "Installing cert-manager", ...
	action string
	// version is the cert-manager version applied, or waited for.
	version string
	// objs are applied when apply is set; their Deployments are waited for in any case.
	objs  []unstructured.Unstructured
	apply bool
	// replace deletes the cert-manager clusterctl installed (but its CRDs and Namespace) first.
	replace bool
}

// certManagerManifest returns the objects of a cert-manager release, as clusterctl installs them: image
// overrides applied, labelled clusterctl.cluster.x-k8s.io/core=cert-manager and annotated with the
// version.
func (c *Client) certManagerManifest(ctx context.Context, version string) ([]unstructured.Unstructured, error) {
	cm := c.cfg.CertManager()
	repo, err := c.repos.Repository(config.Provider{Name: config.CertManagerName, URL: cm.URL})
	if err != nil {
		return nil, fmt.Errorf("cert-manager: %w: check cert-manager.url in the clusterctl config file", err)
	}
	raw, err := repo.File(ctx, version, path.Base(repo.ComponentsPath()))
	if err != nil {
		return nil, fmt.Errorf("fetching cert-manager %s: %w", version, err)
	}
	objs, err := manifest.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("cert-manager %s manifest: %w", version, err)
	}
	overrides := c.cfg.ImageOverrides()
	if err := manifest.ReplaceImages(objs, func(image string) (string, error) { return overrides.Alter(config.CertManagerName, image) }); err != nil {
		return nil, fmt.Errorf("applying image overrides to cert-manager: %w", err)
	}
	for i := range objs {
		labels := objs[i].GetLabels()
		if labels == nil {
			labels = map[string]string{}
		}
		labels[clusterctlv1.ClusterctlLabel] = ""
		labels[clusterctlv1.ClusterctlCoreLabel] = clusterctlv1.ClusterctlCoreLabelCertManagerValue
		objs[i].SetLabels(labels)
		annotations := objs[i].GetAnnotations()
		if annotations == nil {
			annotations = map[string]string{}
		}
		annotations[clusterctlv1.CertManagerVersionAnnotation] = version
		objs[i].SetAnnotations(annotations)
	}
	return objs, nil
}

// planCertManagerInstall decides what init does about cert-manager when a provider needs it: nothing
// when it is externally provisioned (a warning when it is not there) or installed by someone else;
// finishing an interrupted installation, or waiting, when clusterctl installed it; installing the
// configured version otherwise. The manifest is fetched now, so that init fails before any change when
// it cannot be.
func (c *Client) planCertManagerInstall(ctx context.Context, mc *cluster.Client) (*certManagerStep, error) {
	log := logr.FromContextOrDiscard(ctx)
	cfg := c.cfg.CertManager()
	state, err := mc.CertManager(ctx)
	if err != nil {
		return nil, err
	}
	switch {
	case cfg.ExternallyProvisioned:
		if !state.Installed {
			log.Info("Warning: cert-manager is externally provisioned (cert-manager.externallyProvisioned in the clusterctl config), but it is not installed; providers that need it will not work until it is")
		}
		return nil, nil
	case state.Installed && !state.ByClusterctl:
		log.Info("Skipping installing cert-manager as it is already installed")
		return nil, nil
	case state.ByClusterctl:
		version := state.Version
		if version == "" {
			version = cfg.Version
		}
		objs, err := c.certManagerManifest(ctx, version)
		if err != nil {
			return nil, err
		}
		missing, err := mc.MissingObjects(ctx, objs)
		if err != nil {
			return nil, err
		}
		if len(missing) == 0 {
			log.Info("Skipping installing cert-manager as it is already installed")
			return &certManagerStep{version: version, objs: objs}, nil
		}
		return &certManagerStep{action: "Resuming the installation of cert-manager", version: version, objs: objs, apply: true}, nil
	}
	objs, err := c.certManagerManifest(ctx, cfg.Version)
	if err != nil {
		return nil, err
	}
	return &certManagerStep{action: "Installing cert-manager", version: cfg.Version, objs: objs, apply: true}, nil
}

// runCertManager carries out a step and waits, up to cert-manager.timeout, for cert-manager's
// Deployments to be available.
func (c *Client) runCertManager(ctx context.Context, mc *cluster.Client, step *certManagerStep) error {
	if step == nil {
		return nil
	}
	log := logr.FromContextOrDiscard(ctx)
	if step.replace {
		log.Info("Deleting cert-manager", "version", step.version)
		if err := mc.DeleteCertManager(ctx); err != nil {
			return err
		}
	}
	if step.apply {
		log.Info(step.action, "version", step.version)
		if err := mc.Apply(ctx, step.objs); err != nil {
			return fmt.Errorf("installing cert-manager %s: %w", step.version, err)
		}
	}
	timeout := c.cfg.CertManager().Timeout
	log.Info("Waiting for cert-manager to be available...")
	if err := mc.WaitDeploymentsAvailable(ctx, cluster.DeploymentKeys(step.objs), timeout); err != nil {
		return fmt.Errorf("cert-manager %s is %w (cert-manager.timeout in the clusterctl config sets how long to wait)", step.version, err)
	}
	return nil
}

// CertManagerPlan says what an upgrade does to cert-manager.
type CertManagerPlan struct {
	// ExternallyProvisioned is true when the config says someone else manages cert-manager.
	ExternallyProvisioned bool
	// Managed is true when clusterctl installed cert-manager, and so upgrades it.
	Managed bool
	// From is the installed version, To the configured one.
	From, To string
	// ShouldUpgrade is true when To is newer than From.
	ShouldUpgrade bool
}

// PlanCertManagerUpgrade says whether an upgrade would upgrade cert-manager.
func (c *Client) PlanCertManagerUpgrade(ctx context.Context) (CertManagerPlan, error) {
	logr.FromContextOrDiscard(ctx).Info("Checking cert-manager version...")
	cfg := c.cfg.CertManager()
	plan := CertManagerPlan{ExternallyProvisioned: cfg.ExternallyProvisioned, To: cfg.Version}
	if cfg.ExternallyProvisioned {
		return plan, nil
	}
	mc, err := c.writable(ctx)
	if err != nil {
		return plan, err
	}
	state, err := mc.CertManager(ctx)
	if err != nil {
		return plan, err
	}
	if !state.ByClusterctl {
		return plan, nil
	}
	plan.Managed, plan.From = true, state.Version
	from, errFrom := repository.ParseVersion(state.Version)
	to, errTo := repository.ParseVersion(cfg.Version)
	plan.ShouldUpgrade = errTo == nil && (errFrom != nil || from.LT(to))
	return plan, nil
}

// planCertManagerUpgrade decides what an upgrade does about cert-manager: upgrading the cert-manager
// clusterctl installed when the configured version is newer, installing it when the new components
// need it and it is missing, nothing otherwise.
func (c *Client) planCertManagerUpgrade(ctx context.Context, mc *cluster.Client, needed bool) (*certManagerStep, error) {
	log := logr.FromContextOrDiscard(ctx)
	plan, err := c.PlanCertManagerUpgrade(ctx)
	if err != nil {
		return nil, err
	}
	switch {
	case plan.ShouldUpgrade:
		objs, err := c.certManagerManifest(ctx, plan.To)
		if err != nil {
			return nil, err
		}
		return &certManagerStep{action: "Installing cert-manager", version: plan.To, objs: objs, apply: true, replace: true}, nil
	case plan.Managed:
		log.Info("Cert-manager is already up to date")
		return nil, nil
	case needed:
		return c.planCertManagerInstall(ctx, mc)
	}
	return nil, nil
}

// semverLess reports whether version a is older than b; versions that do not parse are not ordered.
func semverLess(a, b string) bool {
	va, errA := repository.ParseVersion(a)
	vb, errB := repository.ParseVersion(b)
	return errA == nil && errB == nil && va.LT(vb)
}
