// Package webhooktest serves a manager's admission webhooks (package webhooks) to a test API server
// started with envtest.Options.PodNetwork, as the embedded management cluster serves them: the Set's
// manifests are installed (their configurations renamed and limited to the test's namespace, so that
// tests do not see each other's webhooks), a manager serves the webhooks with its self-managed
// certificates, and an EndpointSlice points the webhook Service at it.
package webhooktest

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/capstan-dev/capstan/internal/loopback"
	"github.com/capstan-dev/capstan/internal/test/envtest"
	"github.com/capstan-dev/capstan/internal/webhooks"
)

// Serve serves the webhooks that set returns (given the serving manager's client) for the objects of
// namespace ns, until the test ends; it returns once the API server can call them.
func Serve(t testing.TB, env *envtest.Environment, ns string, set func(c client.Reader) webhooks.Set) {
	t.Helper()
	ctx := context.Background()
	objs, err := set(nil).Manifests(env.Scheme, ns)
	if err != nil {
		t.Fatal(err)
	}
	limit := &metav1.LabelSelector{MatchLabels: map[string]string{corev1.LabelMetadataName: ns}}
	for _, obj := range objs {
		switch c := obj.(type) {
		case *admissionregistrationv1.ValidatingWebhookConfiguration:
			c.Name += "-" + ns
			for i := range c.Webhooks {
				c.Webhooks[i].NamespaceSelector = limit
			}
		case *admissionregistrationv1.MutatingWebhookConfiguration:
			c.Name += "-" + ns
			for i := range c.Webhooks {
				c.Webhooks[i].NamespaceSelector = limit
			}
		}
		if err := env.Client.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
		if obj.GetNamespace() == "" {
			t.Cleanup(func() { _ = env.Client.Delete(context.Background(), obj) })
		}
	}

	webhookPort, err := loopback.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	healthPort, err := loopback.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{
		Scheme: env.Scheme, Metrics: metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: fmt.Sprintf("127.0.0.1:%d", healthPort),
		Controller:             config.Controller{SkipNameValidation: ptr.To(true)},
		Client:                 client.Options{Cache: &client.CacheOptions{DisableFor: []client.Object{&corev1.Secret{}}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	o := webhooks.DefaultOptions()
	o.Port = webhookPort
	if err := set(mgr.GetClient()).Setup(mgr, o, ns); err != nil {
		t.Fatal(err)
	}
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := mgr.Start(runCtx); err != nil {
			t.Errorf("webhook manager: %v", err)
		}
	}()
	t.Cleanup(func() { cancel(); <-done })

	service := set(nil).ServiceName()
	slice := &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Namespace: ns, Name: service + "-local", Labels: map[string]string{discoveryv1.LabelServiceName: service}},
		AddressType: discoveryv1.AddressTypeIPv4,
		// An address of the pod network stands for 127.0.0.1 (package localnet).
		Endpoints: []discoveryv1.Endpoint{{Addresses: []string{"10.244.0.1"}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}}},
		Ports:     []discoveryv1.EndpointPort{{Name: ptr.To(""), Port: ptr.To(int32(webhookPort)), Protocol: ptr.To(corev1.ProtocolTCP)}},
	}
	if err := env.Client.Create(ctx, slice); err != nil {
		t.Fatal(err)
	}
	readyz := fmt.Sprintf("http://127.0.0.1:%d/readyz", healthPort)
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 60*time.Second, true, func(context.Context) (bool, error) {
		resp, err := http.Get(readyz) //nolint:gosec // a loopback URL of the test
		if err != nil {
			return false, nil
		}
		_ = resp.Body.Close()
		return resp.StatusCode == http.StatusOK, nil
	})
	if err != nil {
		t.Fatalf("the webhooks did not become ready (the API server cannot call them): %v", err)
	}
}
