package cluster

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// crdEstablishTimeout bounds the wait for a CRD to be served after it is applied.
const crdEstablishTimeout = time.Minute

// Apply creates or updates objects with server-side apply (field manager "clusterctl", taking over fields
// others own), so that applying the same objects again changes nothing and an interrupted apply can be
// run again. CRDs that exist are replaced instead (see replaceCRD). Namespaces go first, then CRDs
// (waiting until they are served), built-in kinds, custom resources and, last, webhook configurations.
func (c *Client) Apply(ctx context.Context, objs []unstructured.Unstructured) error {
	cl, err := c.connect()
	if err != nil {
		return err
	}
	sorted := slices.Clone(objs)
	slices.SortStableFunc(sorted, func(a, b unstructured.Unstructured) int { return applyRank(&a) - applyRank(&b) })
	var crds []string
	crdsWaited := false
	for i := range sorted {
		obj := &sorted[i]
		if applyRank(obj) > rankCRD && len(crds) > 0 && !crdsWaited {
			if err := c.waitCRDsEstablished(ctx, crds); err != nil {
				return err
			}
			crdsWaited = true
		}
		if err := applyOne(ctx, cl, obj); err != nil {
			return fmt.Errorf("applying %s: %w", describe(obj), err)
		}
		if isCRD(obj) {
			crds = append(crds, obj.GetName())
		}
	}
	if len(crds) > 0 && !crdsWaited {
		return c.waitCRDsEstablished(ctx, crds)
	}
	return nil
}

func applyOne(ctx context.Context, cl client.Client, obj *unstructured.Unstructured) error {
	if isCRD(obj) {
		existing := &unstructured.Unstructured{}
		existing.SetGroupVersionKind(obj.GroupVersionKind())
		err := cl.Get(ctx, client.ObjectKeyFromObject(obj), existing)
		if err == nil {
			return replaceCRD(ctx, cl, obj, existing)
		}
		if !apierrors.IsNotFound(err) {
			return err
		}
	}
	return cl.Apply(ctx, client.ApplyConfigurationFromUnstructured(obj), client.FieldOwner(FieldOwner), client.ForceOwnership)
}

// replaceCRD updates an existing CRD to be exactly obj, as upstream clusterctl does: server-side apply
// would keep the versions and fields other managers own (those of a CRD created by kubectl, or by
// upstream clusterctl's updates), and a new release must be able to drop them. The CA bundle that
// cert-manager injects into a conversion webhook is kept when obj has none.
func replaceCRD(ctx context.Context, cl client.Client, obj, existing *unstructured.Unstructured) error {
	for attempt := 0; ; attempt++ {
		desired := obj.DeepCopy()
		desired.SetResourceVersion(existing.GetResourceVersion())
		path := []string{"spec", "conversion", "webhook", "clientConfig", "caBundle"}
		if bundle, found, _ := unstructured.NestedString(existing.Object, path...); found && bundle != "" {
			if _, has, _ := unstructured.NestedString(desired.Object, path...); !has {
				if _, webhook, _ := unstructured.NestedMap(desired.Object, path[:len(path)-1]...); webhook {
					_ = unstructured.SetNestedField(desired.Object, bundle, path...)
				}
			}
		}
		err := cl.Update(ctx, desired, client.FieldOwner(FieldOwner))
		if !apierrors.IsConflict(err) || attempt >= 3 {
			return err
		}
		if err := cl.Get(ctx, client.ObjectKeyFromObject(obj), existing); err != nil {
			return err
		}
	}
}

const (
	rankNamespace = iota
	rankCRD
	rankBuiltin
	rankCustom
	rankWebhook
)

func applyRank(obj *unstructured.Unstructured) int {
	gvk := obj.GroupVersionKind()
	switch {
	case gvk.Group == "" && gvk.Kind == "Namespace":
		return rankNamespace
	case isCRD(obj):
		return rankCRD
	case gvk.Group == "admissionregistration.k8s.io" && strings.HasSuffix(gvk.Kind, "WebhookConfiguration"):
		return rankWebhook
	case isBuiltinGroup(gvk.Group):
		return rankBuiltin
	default:
		return rankCustom
	}
}

// isBuiltinGroup reports whether group is one of Kubernetes' own API groups.
func isBuiltinGroup(group string) bool {
	return group == "" || !strings.Contains(group, ".") || strings.HasSuffix(group, ".k8s.io")
}

func isCRD(obj *unstructured.Unstructured) bool {
	return obj.GetKind() == "CustomResourceDefinition" && obj.GroupVersionKind().Group == apiextensionsv1.GroupName
}

// describe names an object for messages: "Kind namespace/name" or "Kind name".
func describe(obj client.Object) string {
	kind := obj.GetObjectKind().GroupVersionKind().Kind
	if obj.GetNamespace() == "" {
		return kind + " " + obj.GetName()
	}
	return kind + " " + obj.GetNamespace() + "/" + obj.GetName()
}

// waitCRDsEstablished waits until the named CRDs are established (their kinds are served).
func (c *Client) waitCRDsEstablished(ctx context.Context, names []string) error {
	cl, err := c.connect()
	if err != nil {
		return err
	}
	pending := newPendingSet(names)
	err = c.pollUntil(ctx, crdEstablishTimeout, func(ctx context.Context) (bool, error) {
		return pending.check(func(name string) (bool, string, error) {
			crd := &apiextensionsv1.CustomResourceDefinition{}
			if err := cl.Get(ctx, client.ObjectKey{Name: name}, crd); err != nil {
				if apierrors.IsNotFound(err) {
					return false, "not found", nil
				}
				return false, "", fmt.Errorf("reading CRD %s: %w", name, err)
			}
			ok, reason := crdEstablished(crd)
			return ok, reason, nil
		})
	})
	if errors.Is(err, errTimeout) {
		return fmt.Errorf("CRDs not established after %s: %s", crdEstablishTimeout, pending.describe(", "))
	}
	return err
}

// crdEstablished reports whether a CRD is established, and why not.
func crdEstablished(crd *apiextensionsv1.CustomResourceDefinition) (bool, string) {
	for _, cond := range crd.Status.Conditions {
		if cond.Type == apiextensionsv1.Established {
			if cond.Status == apiextensionsv1.ConditionTrue {
				return true, ""
			}
			return false, cond.Reason + ": " + cond.Message
		}
	}
	return false, "not established yet"
}

var errTimeout = errors.New("timed out")

// pollUntil calls done every poll interval until it returns true or an error, or until timeout passes
// (errTimeout) or ctx ends.
func (c *Client) pollUntil(ctx context.Context, timeout time.Duration, done func(context.Context) (bool, error)) error {
	deadline := time.Now().Add(timeout)
	interval := c.poll
	if interval <= 0 {
		interval = DefaultPollInterval
	}
	for {
		ok, err := done(ctx)
		if err != nil || ok {
			return err
		}
		if !time.Now().Before(deadline) {
			return errTimeout
		}
		t := time.NewTimer(interval)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}
