package cluster

import (
	"context"
	"fmt"

	clusterctlv1 "github.com/capstan-dev/capstan/api/clusterctl/v1alpha3"
	"github.com/capstan-dev/capstan/internal/clusterctl/components"
)

// InstallProvider applies a provider's components, then records the provider in the inventory: a
// provider is in the inventory only once all its components are, and running InstallProvider again
// after an interruption finishes the job.
func (c *Client) InstallProvider(ctx context.Context, comps *components.Components) error {
	if err := c.Apply(ctx, comps.Objects()); err != nil {
		return fmt.Errorf("installing %s %s: %w", comps.ManifestLabel(), comps.Version(), err)
	}
	return c.SaveProvider(ctx, comps.InventoryObject())
}

// UpgradeProvider replaces the components of an installed provider with next's, in an order that can be
// interrupted and run again: the old components are deleted (keeping the CRDs, the Namespace, the
// inventory and every user object) and waited for; CRDs that drop a version objects may be stored in are
// migrated first; the new components are applied; objects stored in an older version are written again
// in the new storage version; last, the inventory records the new version and clears
// UpgradeToAnnotation. The provider's Deployments are expected to be scaled down already.
func (c *Client) UpgradeProvider(ctx context.Context, current clusterctlv1.Provider, next *components.Components) error {
	return c.replaceProvider(ctx, current, next, true)
}

// ReplaceProvider is UpgradeProvider without the storage migration after the new components are applied:
// when the new release comes from another implementation (capstan adopt), objects stored in the old
// storage version can be written again only through the new release's conversion webhook, that is once
// its Deployments are available; the caller runs MigrateAfterApply then.
func (c *Client) ReplaceProvider(ctx context.Context, current clusterctlv1.Provider, next *components.Components) error {
	return c.replaceProvider(ctx, current, next, false)
}

func (c *Client) replaceProvider(ctx context.Context, current clusterctlv1.Provider, next *components.Components, migrate bool) error {
	label := current.ManifestLabel()
	if err := c.MigrateBeforeApply(ctx, next.Objects()); err != nil {
		return err
	}
	if err := c.DeleteComponents(ctx, label, current.Namespace, DeleteComponentsOptions{Wait: true}); err != nil {
		return err
	}
	if err := c.Apply(ctx, next.Objects()); err != nil {
		return fmt.Errorf("installing %s %s: %w", label, next.Version(), err)
	}
	if migrate {
		if err := c.MigrateAfterApply(ctx, next.Objects()); err != nil {
			return err
		}
	}
	inventory := next.InventoryObject()
	inventory.Namespace = current.Namespace
	inventory.WatchedNamespace = current.WatchedNamespace
	return c.SaveProvider(ctx, inventory)
}
