// Package webhookstest serves a manager's webhooks to the API server of a test, as the embedded
// management cluster does: their manifests installed (the validating and mutating configurations
// renamed and limited to the test's namespaces), a manager serving them on a loopback port, and an
// EndpointSlice that routes their Service there (the API server runs with envtest.Options.PodNetwork).
package webhookstest

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	capstancrd "github.com/capstan-dev/capstan/config/crd"
	"github.com/capstan-dev/capstan/internal/loopback"
	"github.com/capstan-dev/capstan/internal/test/envtest"
	"github.com/capstan-dev/capstan/internal/webhooks"
)

// Serve installs the webhooks of the Set that set returns for the manager's client, for requests about
// objects of namespace ns, points the CRDs of the kinds it converts at its conversion webhook, runs a
// manager serving them (as if in ns) until the test ends, and waits until the API server can call them.
// The CRDs are cluster-wide: a package's tests that Serve a Set with Conversions must not run in parallel.
func Serve(t *testing.T, env *envtest.Environment, ns string, set func(client.Client) webhooks.Set) {
	t.Helper()
	g := gomega.NewWithT(t)
	ctx := context.Background()
	objs, err := set(nil).Manifests(env.Scheme, ns)
	g.Expect(err).NotTo(gomega.HaveOccurred())
	selector := &metav1.LabelSelector{MatchLabels: map[string]string{corev1.LabelMetadataName: ns}}
	for _, obj := range objs {
		switch wc := obj.(type) {
		case *admissionregistrationv1.ValidatingWebhookConfiguration:
			wc.Name += "-" + ns
			for i := range wc.Webhooks {
				wc.Webhooks[i].NamespaceSelector = selector
			}
			t.Cleanup(func() { _ = env.Client.Delete(context.Background(), wc) })
		case *admissionregistrationv1.MutatingWebhookConfiguration:
			wc.Name += "-" + ns
			for i := range wc.Webhooks {
				wc.Webhooks[i].NamespaceSelector = selector
			}
			t.Cleanup(func() { _ = env.Client.Delete(context.Background(), wc) })
		}
		g.Expect(env.Client.Create(ctx, obj)).To(gomega.Succeed())
	}

	Convert(t, env, ns, set(nil))

	webhookPort, err := loopback.FreePort()
	g.Expect(err).NotTo(gomega.HaveOccurred())
	healthPort, err := loopback.FreePort()
	g.Expect(err).NotTo(gomega.HaveOccurred())
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{
		Scheme: env.Scheme, Metrics: metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: fmt.Sprintf("127.0.0.1:%d", healthPort),
		Controller:             config.Controller{SkipNameValidation: ptr.To(true)},
		Client:                 client.Options{Cache: &client.CacheOptions{DisableFor: []client.Object{&corev1.Secret{}}}},
	})
	g.Expect(err).NotTo(gomega.HaveOccurred())
	o := webhooks.DefaultOptions()
	o.Host, o.Port = "127.0.0.1", webhookPort
	s := set(mgr.GetClient())
	g.Expect(s.Setup(mgr, o, ns)).To(gomega.Succeed())
	mctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := mgr.Start(mctx); err != nil {
			t.Errorf("manager: %v", err)
		}
	}()
	t.Cleanup(func() { cancel(); <-done })

	g.Expect(env.Client.Create(ctx, &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Namespace: ns, Name: s.ServiceName() + "-local", Labels: map[string]string{discoveryv1.LabelServiceName: s.ServiceName()}},
		AddressType: discoveryv1.AddressTypeIPv4,
		// An address of the pod network stands for 127.0.0.1 (package localnet).
		Endpoints: []discoveryv1.Endpoint{{Addresses: []string{"10.244.0.1"}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}}},
		Ports:     []discoveryv1.EndpointPort{{Name: ptr.To(""), Port: ptr.To(int32(webhookPort)), Protocol: ptr.To(corev1.ProtocolTCP)}},
	})).To(gomega.Succeed())
	g.Eventually(func() error {
		resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/readyz", healthPort))
		if err != nil {
			return err
		}
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("readyz: %s", resp.Status)
		}
		return nil
	}, 60*time.Second, 200*time.Millisecond).Should(gomega.Succeed(), "the manager becomes ready once the API server can call its webhooks")
}

// Convert points the CRDs of the kinds s converts at its conversion webhook in ns (its Service, as
// clusterctl init installs them) until the test ends, when their conversion is put back.
func Convert(t *testing.T, env *envtest.Environment, ns string, s webhooks.Set) {
	t.Helper()
	ctx := context.Background()
	for _, gk := range s.Conversions.GroupKinds() {
		name := webhooks.CRDName(gk)
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := env.Client.Get(ctx, client.ObjectKey{Name: name}, crd); err != nil {
			t.Fatal(err)
		}
		before := crd.Spec.Conversion.DeepCopy()
		capstancrd.WithConversionWebhook([]*apiextensionsv1.CustomResourceDefinition{crd}, ns, s.ServiceName())
		if crd.Spec.Conversion == nil || crd.Spec.Conversion.Strategy != apiextensionsv1.WebhookConverter {
			t.Fatalf("CRD %s serves one version: there is nothing to convert", name)
		}
		if err := env.Client.Update(ctx, crd); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = retry.RetryOnConflict(retry.DefaultRetry, func() error {
				crd := &apiextensionsv1.CustomResourceDefinition{}
				if err := env.Client.Get(context.Background(), client.ObjectKey{Name: name}, crd); err != nil {
					return err
				}
				crd.Spec.Conversion = before
				return env.Client.Update(context.Background(), crd)
			})
		})
	}
}
