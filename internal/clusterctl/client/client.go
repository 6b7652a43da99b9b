// Package client is the entry point of the clusterctl library: it combines the configuration, the provider
// repositories and, when there is one, a management cluster into the operations commands run: provider
// components, cluster templates, YAML processing and the images that init needs, and, against a
// management cluster, init, upgrade (plan and apply) and delete.
//
// The management cluster is optional: offline, templates go to the current namespace of the kubeconfig (or
// "default"), versions are the repositories' latest, and ClusterClass definitions are always added.
package client

import (
	"context"
	"io"
	"sync"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	clusterctlv1 "github.com/capstan-dev/capstan/api/clusterctl/v1alpha3"
	"github.com/capstan-dev/capstan/internal/clusterctl/config"
	"github.com/capstan-dev/capstan/internal/clusterctl/repository"
)

// ManagementCluster is what the client reads from a management cluster. *cluster.Client implements it.
type ManagementCluster interface {
	// CurrentNamespace returns the namespace of the kubeconfig's current context.
	CurrentNamespace() (string, error)
	// CheckAvailable returns an error when the cluster cannot be reached.
	CheckAvailable(ctx context.Context) error
	// ConfigMap returns a ConfigMap.
	ConfigMap(ctx context.Context, namespace, name string) (*corev1.ConfigMap, error)
	// InstalledProviders returns clusterctl's inventory.
	InstalledProviders(ctx context.Context) ([]clusterctlv1.Provider, error)
	// Exists reports whether an object exists.
	Exists(ctx context.Context, obj *unstructured.Unstructured) (bool, error)
}

// Options configure a Client.
type Options struct {
	// Config is the configuration; required.
	Config *config.Config
	// Repositories makes provider repositories; repository.NewFactory(Config) when nil.
	Repositories *repository.Factory
	// Cluster is the management cluster; nil when there is none.
	Cluster ManagementCluster
	// Stdin is read for templates given as "-".
	Stdin io.Reader
}

// Client runs clusterctl's operations.
type Client struct {
	cfg     *config.Config
	repos   *repository.Factory
	cluster ManagementCluster
	stdin   io.Reader

	availableOnce sync.Once
	availableErr  error
}

// New returns a Client.
func New(o Options) *Client {
	repos := o.Repositories
	if repos == nil {
		repos = repository.NewFactory(o.Config)
	}
	return &Client{cfg: o.Config, repos: repos, cluster: o.Cluster, stdin: o.Stdin}
}

// Config returns the configuration.
func (c *Client) Config() *config.Config { return c.cfg }

// clusterAvailable returns nil when there is a management cluster and it answers; the answer is
// remembered for the life of the client.
func (c *Client) clusterAvailable(ctx context.Context) error {
	if c.cluster == nil {
		return errNoCluster
	}
	c.availableOnce.Do(func() {
		c.availableErr = c.cluster.CheckAvailable(ctx)
		if c.availableErr != nil {
			logr.FromContextOrDiscard(ctx).V(1).Info("Continuing without the management cluster", "reason", c.availableErr.Error())
		}
	})
	return c.availableErr
}

type noClusterError struct{}

func (noClusterError) Error() string { return "no management cluster" }

var errNoCluster error = noClusterError{}
