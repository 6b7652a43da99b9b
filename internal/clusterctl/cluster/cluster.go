// Package cluster reaches a management cluster through a kubeconfig (--kubeconfig, --kubeconfig-context,
// else the usual KUBECONFIG and ~/.kube/config rules). It offers the read-only operations that offline
// commands consult when a management cluster is at hand (the current namespace, ConfigMaps, the provider
// inventory, whether objects exist) and the changes init, upgrade and delete make: the inventory,
// applying and deleting provider components, waiting for Deployments, CRD storage migration and
// cert-manager's state. Nothing here connects before it has to.
package cluster

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterctlv1 "github.com/capstan-dev/capstan/api/clusterctl/v1alpha3"
)

// availabilityTimeout bounds the check that the management cluster answers.
const availabilityTimeout = 10 * time.Second

// DefaultPollInterval is how often waits look at the management cluster again.
const DefaultPollInterval = time.Second

// Kubeconfig says which cluster to talk to.
type Kubeconfig struct {
	// Path is the kubeconfig file; empty follows the default loading rules.
	Path string
	// Context is the context to use; empty is the current context.
	Context string
}

func (k Kubeconfig) String() string {
	s := k.Path
	if s == "" {
		s = "the default kubeconfig"
	}
	if k.Context != "" {
		s += ", context " + k.Context
	}
	return s
}

// Client is a management cluster.
type Client struct {
	kubeconfig Kubeconfig
	rest       *rest.Config
	poll       time.Duration

	once   sync.Once
	config *rest.Config
	client client.Client
	err    error
}

// Option configures a Client.
type Option func(*Client)

// WithPollInterval sets how often waits (CRDs established, objects deleted, Deployments available) look
// again; DefaultPollInterval when not given.
func WithPollInterval(d time.Duration) Option { return func(c *Client) { c.poll = d } }

// New returns the management cluster of a kubeconfig. It does not connect.
func New(kubeconfig Kubeconfig, opts ...Option) *Client {
	c := &Client{kubeconfig: kubeconfig, poll: DefaultPollInterval}
	for _, o := range opts {
		o(c)
	}
	return c
}

// NewFromClient returns a management cluster served by c (a fake client in tests); kubeconfig only
// provides the current namespace. Operations that need API discovery (deleting provider components) are
// not available.
func NewFromClient(c client.Client, kubeconfig Kubeconfig, opts ...Option) *Client {
	cl := New(kubeconfig, opts...)
	cl.client = c
	cl.once.Do(func() {})
	return cl
}

// NewForConfig returns the management cluster a REST configuration reaches (a controller's own); it
// offers every operation. It does not connect.
func NewForConfig(cfg *rest.Config, opts ...Option) *Client {
	c := New(Kubeconfig{}, opts...)
	c.rest = rest.CopyConfig(cfg)
	return c
}

// Kube returns the client of the management cluster, connecting on first use.
func (c *Client) Kube() (client.Client, error) { return c.connect() }

// RESTConfig returns the configuration the client connects with; an error for a client made by
// NewFromClient.
func (c *Client) RESTConfig() (*rest.Config, error) {
	if _, err := c.connect(); err != nil {
		return nil, err
	}
	if c.config == nil {
		return nil, errors.New("the management cluster client has no REST configuration")
	}
	return rest.CopyConfig(c.config), nil
}

func (c *Client) clientConfig() clientcmd.ClientConfig {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = c.kubeconfig.Path
	return clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: c.kubeconfig.Context})
}

// CurrentNamespace returns the namespace of the kubeconfig's context, "default" when the context names
// none or when there is no kubeconfig at all.
func (c *Client) CurrentNamespace() (string, error) {
	ns, _, err := c.clientConfig().Namespace()
	if err != nil {
		if clientcmd.IsEmptyConfig(err) && c.kubeconfig.Path == "" && c.kubeconfig.Context == "" {
			return "default", nil
		}
		return "", fmt.Errorf("reading the current namespace from %s: %w", c.kubeconfig, err)
	}
	if ns == "" {
		ns = "default"
	}
	return ns, nil
}

func (c *Client) restConfig() (*rest.Config, error) {
	if c.rest != nil {
		return rest.CopyConfig(c.rest), nil
	}
	return c.clientConfig().ClientConfig()
}

func (c *Client) connect() (client.Client, error) {
	c.once.Do(func() {
		cfg, err := c.restConfig()
		if err != nil {
			if clientcmd.IsEmptyConfig(err) {
				c.err = errors.New("no kubeconfig found: set --kubeconfig or KUBECONFIG")
				return
			}
			c.err = fmt.Errorf("loading %s: %w", c.kubeconfig, err)
			return
		}
		if c.rest == nil {
			cfg.QPS, cfg.Burst = 20, 100
		}
		scheme := runtime.NewScheme()
		for _, add := range []func(*runtime.Scheme) error{
			corev1.AddToScheme, appsv1.AddToScheme, apiextensionsv1.AddToScheme, clusterctlv1.AddToScheme,
		} {
			if err := add(scheme); err != nil {
				c.err = err
				return
			}
		}
		c.config = cfg
		c.client, c.err = client.New(cfg, client.Options{Scheme: scheme})
		if c.err != nil {
			c.err = fmt.Errorf("connecting to the management cluster (%s): %w", c.kubeconfig, c.err)
		}
	})
	return c.client, c.err
}

// CheckAvailable returns an error when the management cluster cannot be reached.
func (c *Client) CheckAvailable(ctx context.Context) error {
	if _, err := c.connect(); err != nil {
		return err
	}
	if c.config == nil { // A client given by NewFromClient.
		return nil
	}
	cfg := rest.CopyConfig(c.config)
	cfg.Timeout = availabilityTimeout
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return fmt.Errorf("connecting to the management cluster (%s): %w", c.kubeconfig, err)
	}
	if _, err := dc.ServerVersion(); err != nil {
		return fmt.Errorf("the management cluster (%s) does not answer: %w", c.kubeconfig, err)
	}
	return nil
}

// ConfigMap returns a ConfigMap.
func (c *Client) ConfigMap(ctx context.Context, namespace, name string) (*corev1.ConfigMap, error) {
	cl, err := c.connect()
	if err != nil {
		return nil, err
	}
	cm := &corev1.ConfigMap{}
	if err := cl.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, cm); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("ConfigMap %s/%s not found in the management cluster (%s)", namespace, name, c.kubeconfig)
		}
		return nil, fmt.Errorf("reading ConfigMap %s/%s: %w", namespace, name, err)
	}
	return cm, nil
}

// InstalledProviders returns the providers of clusterctl's inventory; none when the inventory CRD is not
// installed (the cluster is not a management cluster yet).
func (c *Client) InstalledProviders(ctx context.Context) ([]clusterctlv1.Provider, error) {
	cl, err := c.connect()
	if err != nil {
		return nil, err
	}
	list := &clusterctlv1.ProviderList{}
	if err := cl.List(ctx, list); err != nil {
		if isMissingKind(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("listing the providers installed in the management cluster: %w", err)
	}
	return list.Items, nil
}

// Exists reports whether an object exists; false when its kind is not served.
func (c *Client) Exists(ctx context.Context, obj *unstructured.Unstructured) (bool, error) {
	cl, err := c.connect()
	if err != nil {
		return false, err
	}
	got := &unstructured.Unstructured{}
	got.SetGroupVersionKind(obj.GroupVersionKind())
	err = cl.Get(ctx, client.ObjectKeyFromObject(obj), got)
	switch {
	case err == nil:
		return true, nil
	case apierrors.IsNotFound(err), isMissingKind(err):
		return false, nil
	}
	return false, fmt.Errorf("reading %s %s: %w", obj.GetKind(), client.ObjectKeyFromObject(obj), err)
}

func isMissingKind(err error) bool {
	var noKind *meta.NoKindMatchError
	return errors.As(err, &noKind) || meta.IsNoMatchError(err) || discovery.IsGroupDiscoveryFailedError(err)
}
