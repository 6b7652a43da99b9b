// Package clienttest gives tests a Runtime SDK client wired to a runtimetest Extension: the registry, the
// discovery of the Extension's handlers and their registration, as the ExtensionConfig controller does. It is
// a package of its own because the client's internal tests import runtimetest.
package clienttest

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	runtimev1 "github.com/capstan-dev/capstan/api/runtime/v1alpha1"
	runtimeclient "github.com/capstan-dev/capstan/internal/runtime/client"
	"github.com/capstan-dev/capstan/internal/runtime/registry"
	"github.com/capstan-dev/capstan/internal/runtime/runtimetest"
)

// New runs ext's handlers behind an ExtensionConfig named name and returns a client that calls them.
func New(t testing.TB, name string, ext *runtimetest.Extension) *runtimeclient.Client {
	t.Helper()
	reg := registry.New()
	if err := reg.WarmUp(nil); err != nil {
		t.Fatal(err)
	}
	c := &runtimeclient.Client{Registry: reg}
	ec := &runtimev1.ExtensionConfig{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: runtimev1.ExtensionConfigSpec{ClientConfig: runtimev1.ClientConfig{URL: ptr.To(ext.URL), CABundle: ext.CA}}}
	handlers, err := c.Discover(context.Background(), ec)
	if err != nil {
		t.Fatal(err)
	}
	ec.Status.Handlers = handlers
	if err := reg.Add(ec); err != nil {
		t.Fatal(err)
	}
	return c
}
