package cluster

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/go-logr/logr"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// migrationPageSize is how many objects a storage migration lists at a time.
const migrationPageSize = 500

// A CRD keeps in status.storedVersions every version objects may be stored in. When an upgrade changes
// the storage version, or stops serving a version objects are stored in, every object has to be written
// again in the storage version, then storedVersions can be reduced to it; otherwise the API server
// refuses a later CRD that drops the old version (or objects stored in it become unreadable).
//
// CheckCRDUpgrades, MigrateBeforeApply and MigrateAfterApply do this around the application of new CRDs.

// CheckCRDUpgrades returns an error when a new CRD among objs cannot replace the installed one because it
// does not have the installed storage version: the objects could not be read to be migrated.
func (c *Client) CheckCRDUpgrades(ctx context.Context, label string, objs []unstructured.Unstructured) error {
	pairs, err := c.crdPairs(ctx, objs)
	if err != nil {
		return err
	}
	for _, p := range pairs {
		current := storageVersion(p.current)
		if !hasVersion(p.next, current) {
			return fmt.Errorf("the new CRD %s of %s does not have the version %s its objects are stored in, so they cannot be migrated: upgrade to an intermediate release of %s first",
				p.next.Name, label, current, label)
		}
	}
	return nil
}

// CheckCRDStoredVersions returns an error when a new CRD among objs does not serve every version the
// installed CRD's objects may be stored in (status.storedVersions): objects of such a version could be
// read neither by the new release nor, once the old one is gone, migrated. It is the check of a change
// of implementation (capstan adopt), where no old conversion webhook runs to migrate them first.
func (c *Client) CheckCRDStoredVersions(ctx context.Context, label string, objs []unstructured.Unstructured) error {
	pairs, err := c.crdPairs(ctx, objs)
	if err != nil {
		return err
	}
	for _, p := range pairs {
		for _, stored := range p.current.Status.StoredVersions {
			if !slices.Contains(ServedVersions(p.next), stored) {
				return fmt.Errorf("objects of CRD %s may be stored as %s, which the new release of %s does not serve: migrate them to a version it serves (%s) with the installed release first",
					p.current.Name, stored, label, strings.Join(ServedVersions(p.next), ", "))
			}
		}
	}
	return nil
}

// ServedVersions returns the names of the versions crd serves.
func ServedVersions(crd *apiextensionsv1.CustomResourceDefinition) []string {
	var out []string
	for _, v := range crd.Spec.Versions {
		if v.Served {
			out = append(out, v.Name)
		}
	}
	return out
}

// MigrateBeforeApply prepares the installed CRDs for the new ones among objs: when a new CRD drops a
// version that objects may still be stored in, every object is written again in the current storage
// version and storedVersions is reduced to it.
func (c *Client) MigrateBeforeApply(ctx context.Context, objs []unstructured.Unstructured) error {
	return c.migrateWhere(ctx, objs, func(p crdPair) bool {
		return slices.ContainsFunc(p.current.Status.StoredVersions, func(stored string) bool { return !hasVersion(p.next, stored) })
	})
}

// MigrateAfterApply finishes the storage migration of the CRDs among objs once they are applied: when
// objects may be stored in versions other than the storage version, every object is written again and
// storedVersions is reduced to the storage version.
func (c *Client) MigrateAfterApply(ctx context.Context, objs []unstructured.Unstructured) error {
	return c.migrateWhere(ctx, objs, func(p crdPair) bool {
		storage := storageVersion(p.current)
		return storage != "" && !slices.Equal(p.current.Status.StoredVersions, []string{storage})
	})
}

// migrateWhere migrates the installed CRDs among objs for which needed holds.
func (c *Client) migrateWhere(ctx context.Context, objs []unstructured.Unstructured, needed func(crdPair) bool) error {
	pairs, err := c.crdPairs(ctx, objs)
	if err != nil {
		return err
	}
	for _, p := range pairs {
		if !needed(p) {
			continue
		}
		if err := c.migrate(ctx, p.current); err != nil {
			return err
		}
	}
	return nil
}

// hasVersion reports whether crd has the version called name.
func hasVersion(crd *apiextensionsv1.CustomResourceDefinition, name string) bool {
	return slices.ContainsFunc(crd.Spec.Versions, func(v apiextensionsv1.CustomResourceDefinitionVersion) bool { return v.Name == name })
}

type crdPair struct {
	current *apiextensionsv1.CustomResourceDefinition
	next    *apiextensionsv1.CustomResourceDefinition
}

// crdPairs returns the CRDs among objs that are installed, with their installed version.
func (c *Client) crdPairs(ctx context.Context, objs []unstructured.Unstructured) ([]crdPair, error) {
	cl, err := c.connect()
	if err != nil {
		return nil, err
	}
	var out []crdPair
	for i := range objs {
		if !isCRD(&objs[i]) {
			continue
		}
		next := &apiextensionsv1.CustomResourceDefinition{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(objs[i].Object, next); err != nil {
			return nil, fmt.Errorf("reading CRD %s: %w", objs[i].GetName(), err)
		}
		current := &apiextensionsv1.CustomResourceDefinition{}
		if err := cl.Get(ctx, client.ObjectKey{Name: next.Name}, current); err != nil {
			if apierrors.IsNotFound(err) {
				continue
			}
			return nil, fmt.Errorf("reading CRD %s: %w", next.Name, err)
		}
		out = append(out, crdPair{current: current, next: next})
	}
	return out, nil
}

// servedVersionWait bounds how long a list waits for a version the CRD was just changed to serve: the API
// server's discovery shows a new version of a CRD a moment after the CRD is updated.
const servedVersionWait = 30 * time.Second

// listServed lists like cl.List, and when the kind's version is not in the API server's discovery yet
// (a CRD applied a moment ago) tries again until it is, for up to servedVersionWait.
func listServed(ctx context.Context, cl client.Client, list *unstructured.UnstructuredList, opts ...client.ListOption) error {
	var err error
	waitErr := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, servedVersionWait, true, func(ctx context.Context) (bool, error) {
		err = cl.List(ctx, list, opts...)
		return !meta.IsNoMatchError(err), nil
	})
	if err == nil && waitErr != nil {
		return waitErr
	}
	return err
}

// migrate writes every object of crd again, so that the API server stores it in the storage version,
// then sets status.storedVersions to the storage version alone. It can be run again after an
// interruption.
func (c *Client) migrate(ctx context.Context, crd *apiextensionsv1.CustomResourceDefinition) error {
	cl, err := c.connect()
	if err != nil {
		return err
	}
	storage := storageVersion(crd)
	log := logr.FromContextOrDiscard(ctx)
	log.Info("Migrating stored objects", "kind", crd.Spec.Names.Kind, "storageVersion", storage,
		"storedVersions", strings.Join(crd.Status.StoredVersions, ","))
	gvk := schema.GroupVersionKind{Group: crd.Spec.Group, Version: storage, Kind: crd.Spec.Names.Kind}
	count := 0
	cont := ""
	for {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		if err := listServed(ctx, cl, list, client.Limit(migrationPageSize), client.Continue(cont)); err != nil {
			return fmt.Errorf("listing the %s objects to migrate: %w", gvk.Kind, err)
		}
		for i := range list.Items {
			if err := rewrite(ctx, cl, &list.Items[i]); err != nil {
				return fmt.Errorf("migrating %s to %s: %w", describe(&list.Items[i]), storage, err)
			}
			count++
		}
		if cont = list.GetContinue(); cont == "" {
			break
		}
	}
	latest := &apiextensionsv1.CustomResourceDefinition{}
	if err := cl.Get(ctx, client.ObjectKey{Name: crd.Name}, latest); err != nil {
		return fmt.Errorf("reading CRD %s: %w", crd.Name, err)
	}
	latest.Status.StoredVersions = []string{storage}
	if err := cl.Status().Update(ctx, latest); err != nil {
		return fmt.Errorf("updating the stored versions of CRD %s: %w", crd.Name, err)
	}
	log.V(1).Info("Migrated stored objects", "kind", crd.Spec.Names.Kind, "count", count)
	return nil
}

// rewrite updates obj without changing it, which makes the API server store it in the storage version.
func rewrite(ctx context.Context, cl client.Client, obj *unstructured.Unstructured) error {
	for attempt := 0; ; attempt++ {
		err := cl.Update(ctx, obj)
		switch {
		case err == nil, apierrors.IsNotFound(err):
			return nil
		case apierrors.IsConflict(err) && attempt < 5:
			fresh := &unstructured.Unstructured{}
			fresh.SetGroupVersionKind(obj.GroupVersionKind())
			if err := cl.Get(ctx, client.ObjectKeyFromObject(obj), fresh); err != nil {
				if apierrors.IsNotFound(err) {
					return nil
				}
				return err
			}
			obj = fresh
		default:
			return err
		}
	}
}
