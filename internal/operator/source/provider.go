package source

import (
	"fmt"
	"net/http"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	operatorv1 "github.com/capstan-dev/capstan/api/operator/v1alpha2"
	"github.com/capstan-dev/capstan/internal/clusterctl/config"
	"github.com/capstan-dev/capstan/internal/clusterctl/repository"
	"github.com/capstan-dev/capstan/internal/httpclient"
)

// ProviderOptions say how to reach a provider's source.
type ProviderOptions struct {
	// Reader reads the ConfigMaps of fetchConfig.selector.
	Reader client.Reader
	// Config is the provider's configuration (ConfigFromSecret): credentials, the "providers" of its
	// configSecret.
	Config *config.Config
	// HTTPClient makes the downloads; a client of DefaultHTTPLimits when nil.
	HTTPClient *http.Client
	// Retry is the retry policy of downloads.
	Retry repository.Retry
	// Contract is the core's contract, which the latest version of a repository follows; empty for any.
	Contract string
}

// ForProvider returns where a provider's releases come from, as its spec.fetchConfig says: ConfigMaps
// of its namespace (selector), an OCI artifact (oci), the repository of a URL (url), or clusterctl's
// built-in provider of its name and kind (none), as its configuration knows them.
func ForProvider(p operatorv1.GenericProvider, o ProviderOptions) (Source, error) {
	spec := p.GetProviderSpec()
	fc := spec.FetchConfig
	if fc != nil && fc.Selector != nil {
		return &ConfigMaps{Label: operatorv1.ManifestLabel(p), Reader: o.Reader, Namespace: p.GetNamespace(), Selector: fc.Selector}, nil
	}
	hc := o.HTTPClient
	if hc == nil {
		hc = httpclient.New(DefaultHTTPLimits)
	}
	if fc != nil && fc.OCI != "" {
		return NewOCI(OCIOptions{Ref: fc.OCI, Name: p.GetName(), Type: p.ProviderType(), Variables: o.Config.Get, HTTPClient: hc})
	}
	opts := []repository.Option{repository.WithHTTPClient(hc)}
	if o.Retry != (repository.Retry{}) {
		opts = append(opts, repository.WithRetry(o.Retry))
	}
	if o.Contract != "" {
		opts = append(opts, repository.WithContract(o.Contract))
	}
	factory := repository.NewFactory(o.Config, opts...)
	var cp config.Provider
	var err error
	if fc != nil && fc.URL != "" {
		cp, err = ProviderForURL(p.GetName(), p.ProviderType(), fc.URL, spec.Version)
	} else {
		cp, err = o.Config.Provider(p.GetName(), p.ProviderType())
	}
	if err != nil {
		return nil, err
	}
	return NewRepository(factory, cp)
}

// ConfigFromSecret turns a configSecret's data into a clusterctl configuration: every key is a variable,
// which wins over a variable of the same name of lookupEnv (the operator's environment), as the operator
// proposal says; "images" (clusterctl's image overrides, in YAML) and "providers" are read as clusterctl's
// config file reads them.
func ConfigFromSecret(data map[string][]byte, lookupEnv func(string) (string, bool)) (*config.Config, error) {
	doc := map[string]any{}
	vars := map[string]string{}
	for k, v := range data {
		switch strings.ToLower(k) {
		case "images", "providers":
			var parsed any
			if err := yaml.Unmarshal(v, &parsed); err != nil {
				return nil, fmt.Errorf("key %s is not YAML: %w", k, err)
			}
			doc[k] = parsed
		default:
			vars[k] = string(v)
		}
	}
	raw, err := yaml.Marshal(doc)
	if err != nil {
		return nil, err
	}
	cfg, err := config.New(raw, lookupEnv)
	if err != nil {
		return nil, err
	}
	return cfg.With(vars), nil
}
