package envtest

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strconv"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	certutil "k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crconversion "sigs.k8s.io/controller-runtime/pkg/webhook/conversion"

	"github.com/capstan-dev/capstan/config/crd"
	"github.com/capstan-dev/capstan/internal/conversion"
)

// Conversions are the conversions the harness's API server calls: those of every capstan manager (core,
// kubeadm bootstrap and control plane); versions gives the apiVersion of v1beta1 references.
func Conversions(versions conversion.APIVersions) conversion.Kinds {
	return slices.Concat(conversion.Core(versions), conversion.Addons(), conversion.IPAMV1beta2(), conversion.Runtime(),
		conversion.KubeadmBootstrap(), conversion.KubeadmControlPlane(versions))
}

// serveConversion serves the conversion webhook of Conversions on a loopback port, as the managers do on
// their webhook Service, and returns the CRD conversion that calls it (by URL, which the API server dials
// directly: the egress proxy of Options.PodNetwork carries calls to Services only) and what stops it.
// reader returns the client the references' apiVersions are read with (the CRDs' contract labels, as a
// manager reads them): the API server does not run yet.
func serveConversion(scheme *runtime.Scheme, reader func() client.Reader) (*apiextensionsv1.CustomResourceConversion, func(), error) {
	versions := func(ctx context.Context, gk schema.GroupKind) (string, error) {
		return conversion.ContractAPIVersions(reader())(ctx, gk)
	}
	registry, err := Conversions(versions).Registry(scheme)
	if err != nil {
		return nil, nil, err
	}
	host := "127.0.0.1"
	certPEM, keyPEM, err := certutil.GenerateSelfSignedCertKey(host, []net.IP{net.ParseIP(host)}, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("creating the conversion webhook's certificate: %w", err)
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, nil, err
	}
	l, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12})
	if err != nil {
		return nil, nil, fmt.Errorf("listening for the conversion webhook: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle(crd.ConversionPath, crconversion.NewWebhookHandler(scheme, registry))
	server := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := server.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
			fmt.Printf("the test API server's conversion webhook stopped: %v\n", err)
		}
	}()
	url := "https://" + net.JoinHostPort(host, strconv.Itoa(l.Addr().(*net.TCPAddr).Port)) + crd.ConversionPath
	conversion := &apiextensionsv1.CustomResourceConversion{
		Strategy: apiextensionsv1.WebhookConverter,
		Webhook: &apiextensionsv1.WebhookConversion{
			ClientConfig:             &apiextensionsv1.WebhookClientConfig{URL: ptr.To(url), CABundle: certPEM},
			ConversionReviewVersions: []string{"v1"},
		},
	}
	return conversion, func() { _ = server.Close() }, nil
}

// convertThrough sets conversion on every installed CRD of crds that serves several versions.
// (controller-runtime's envtest installs them without a conversion webhook: it keeps those of the kinds
// that implement its Hub and Convertible interfaces only, which capstan's converters do not.)
func convertThrough(ctx context.Context, c client.Client, crds []*apiextensionsv1.CustomResourceDefinition, conversion *apiextensionsv1.CustomResourceConversion) error {
	for _, want := range crds {
		if !crd.Converted(want) {
			continue
		}
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			installed := &apiextensionsv1.CustomResourceDefinition{}
			if err := c.Get(ctx, client.ObjectKey{Name: want.Name}, installed); err != nil {
				return err
			}
			installed.Spec.Conversion = conversion.DeepCopy()
			return c.Update(ctx, installed)
		})
		if err != nil {
			return fmt.Errorf("setting the conversion webhook of CRD %s: %w", want.Name, err)
		}
	}
	return nil
}

// ConvertServiceWebhooks points every CRD whose conversion webhook is a Service (as the components
// clusterctl installs have it: capstan's and upstream's) at the harness's conversion webhook, which
// converts capstan's kinds. It plays the managers' webhook Service and CA injection for tests that install
// components: call it after they are applied, before anything reads a kind in another version than its
// storage version.
func (e *Environment) ConvertServiceWebhooks(ctx context.Context) error {
	list := &apiextensionsv1.CustomResourceDefinitionList{}
	if err := e.Client.List(ctx, list); err != nil {
		return err
	}
	for i := range list.Items {
		c := list.Items[i].Spec.Conversion
		if c == nil || c.Webhook == nil || c.Webhook.ClientConfig == nil || c.Webhook.ClientConfig.Service == nil {
			continue
		}
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			installed := &apiextensionsv1.CustomResourceDefinition{}
			if err := e.Client.Get(ctx, client.ObjectKey{Name: list.Items[i].Name}, installed); err != nil {
				return err
			}
			installed.Spec.Conversion = e.conversion.DeepCopy()
			return e.Client.Update(ctx, installed)
		})
		if err != nil {
			return fmt.Errorf("setting the conversion webhook of CRD %s: %w", list.Items[i].Name, err)
		}
	}
	return nil
}
