// Package config reads clusterctl's configuration: the clusterctl.yaml file (from
// $XDG_CONFIG_HOME/cluster-api, $HOME/.cluster-api, a --config path or an http(s) URL) overlaid with the
// environment. It owns the provider list (built-in providers plus those of the file), image overrides,
// cert-manager settings, the overrides folder, and every other key as a variable for substitution.
//
// A value is looked up in this order: values set by the command (With), the environment (the name as
// given, then upper-cased with '-' replaced by '_'; empty environment variables count as unset), then the
// file, whose keys are case-insensitive.
package config

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"sigs.k8s.io/yaml"
)

// Well-known names of files, folders and keys.
const (
	// FileName is the name of the configuration file.
	FileName = "clusterctl.yaml"
	// Folder is the configuration folder below $XDG_CONFIG_HOME.
	Folder = "cluster-api"
	// LegacyFolder is the configuration folder below $HOME used before clusterctl followed XDG.
	LegacyFolder = ".cluster-api"
	// OverridesFolderName is the default overrides folder below the configuration folder.
	OverridesFolderName = "overrides"

	providersKey       = "providers"
	imagesKey          = "images"
	certManagerKey     = "cert-manager"
	overridesFolderKey = "overridesfolder"

	// RepositoryPathVariable may be used as ${CLUSTERCTL_REPOSITORY_PATH} in provider URLs.
	RepositoryPathVariable = "CLUSTERCTL_REPOSITORY_PATH"
	// LogLevelVariable sets the log level when -v is not given.
	LogLevelVariable = "CLUSTERCTL_LOG_LEVEL"
)

// Config is clusterctl's configuration. It is immutable; With returns a copy with more values.
type Config struct {
	source          string
	file            map[string]any
	set             map[string]string
	lookupEnv       func(string) (string, bool)
	home            string
	providers       []Provider
	images          ImageOverrides
	certManager     CertManager
	overridesFolder string
}

// LoadOptions tell Load where to read from.
type LoadOptions struct {
	// Path is the --config flag: a file path, an http(s) URL, or empty for the default locations.
	Path string
	// LookupEnv reads the environment; os.LookupEnv when nil.
	LookupEnv func(string) (string, bool)
	// HTTPClient downloads a remote configuration file; http.DefaultClient when nil.
	HTTPClient *http.Client
}

// Load reads the configuration file (a missing default file is an empty configuration) and validates it.
func Load(ctx context.Context, opts LoadOptions) (*Config, error) {
	lookup := opts.LookupEnv
	if lookup == nil {
		lookup = os.LookupEnv
	}
	home, err := homeDir(lookup)
	if err != nil {
		return nil, err
	}
	c := &Config{lookupEnv: lookup, home: home, file: map[string]any{}}

	data, source, err := readFile(ctx, opts, c.configDirs())
	if err != nil {
		return nil, err
	}
	c.source = source
	if len(bytes.TrimSpace(data)) > 0 {
		if c.file, err = decode(data); err != nil {
			return nil, fmt.Errorf("invalid clusterctl config file %s: %w", source, err)
		}
	}
	if err := c.parse(); err != nil {
		if source == "" {
			return nil, err
		}
		return nil, fmt.Errorf("invalid clusterctl config file %s: %w", source, err)
	}
	return c, nil
}

// New returns a configuration made of the given file content (may be empty) and environment, for tests
// and for callers that hold the configuration in memory.
func New(data []byte, lookupEnv func(string) (string, bool)) (*Config, error) {
	if lookupEnv == nil {
		lookupEnv = func(string) (string, bool) { return "", false }
	}
	home, _ := homeDir(lookupEnv)
	c := &Config{lookupEnv: lookupEnv, home: home, file: map[string]any{}}
	if len(bytes.TrimSpace(data)) > 0 {
		var err error
		if c.file, err = decode(data); err != nil {
			return nil, fmt.Errorf("invalid clusterctl config: %w", err)
		}
	}
	if err := c.parse(); err != nil {
		return nil, fmt.Errorf("invalid clusterctl config: %w", err)
	}
	return c, nil
}

func (c *Config) parse() error {
	var err error
	if c.providers, err = c.parseProviders(); err != nil {
		return err
	}
	if c.images, err = parseImages(c.file[imagesKey]); err != nil {
		return err
	}
	if c.certManager, err = parseCertManager(c.file[certManagerKey]); err != nil {
		return err
	}
	if c.certManager.URL, err = c.expandProviderURL(c.certManager.URL); err != nil {
		return fmt.Errorf("cert-manager: %w", err)
	}
	return c.parseOverridesFolder()
}

// Source returns the file or URL the configuration was read from, empty when there was none.
func (c *Config) Source() string { return c.source }

// Get returns the value of a variable and whether it is set.
func (c *Config) Get(name string) (string, bool) {
	if v, ok := c.set[name]; ok {
		return v, true
	}
	if v, ok := c.lookupEnv(name); ok && v != "" {
		return v, true
	}
	if envName := strings.ToUpper(strings.ReplaceAll(name, "-", "_")); envName != name {
		if v, ok := c.lookupEnv(envName); ok && v != "" {
			return v, true
		}
	}
	raw, ok := c.file[strings.ToLower(name)]
	if !ok {
		return "", false
	}
	return stringify(raw), true
}

// With returns a copy of the configuration in which values take precedence over the environment and the
// file. Commands use it for the values of their flags (CLUSTER_NAME, NAMESPACE, ...).
func (c *Config) With(values map[string]string) *Config {
	cp := *c
	cp.set = make(map[string]string, len(c.set)+len(values))
	maps.Copy(cp.set, c.set)
	maps.Copy(cp.set, values)
	return &cp
}

// ImageOverrides returns the images section of the file.
func (c *Config) ImageOverrides() ImageOverrides { return c.images }

// CertManager returns the cert-manager settings, defaults filled in.
func (c *Config) CertManager() CertManager { return c.certManager }

// OverridesFolder returns the folder whose files replace those of provider repositories.
func (c *Config) OverridesFolder() string { return c.overridesFolder }

// HomeDir returns the user's home directory.
func (c *Config) HomeDir() string { return c.home }

func (c *Config) parseOverridesFolder() error {
	if raw, ok := c.file[overridesFolderKey]; ok {
		folder, err := expand(stringify(raw), c.Get)
		if err != nil {
			return fmt.Errorf("invalid overridesFolder: %w", err)
		}
		c.overridesFolder = expandHome(folder, c.home)
		return nil
	}
	dirs := c.configDirs()
	c.overridesFolder = filepath.Join(dirs[0], OverridesFolderName)
	for _, d := range dirs {
		if fi, err := os.Stat(filepath.Join(d, OverridesFolderName)); err == nil && fi.IsDir() {
			c.overridesFolder = filepath.Join(d, OverridesFolderName)
			break
		}
	}
	return nil
}

// configDirs returns $XDG_CONFIG_HOME/cluster-api and the legacy $HOME/.cluster-api, in lookup order.
func (c *Config) configDirs() []string {
	xdg, ok := c.lookupEnv("XDG_CONFIG_HOME")
	if !ok || xdg == "" {
		xdg = filepath.Join(c.home, ".config")
	}
	return []string{filepath.Join(xdg, Folder), filepath.Join(c.home, LegacyFolder)}
}

func readFile(ctx context.Context, opts LoadOptions, dirs []string) ([]byte, string, error) {
	if opts.Path != "" {
		if u, err := url.Parse(opts.Path); err == nil && (u.Scheme == "http" || u.Scheme == "https") {
			data, err := download(ctx, opts.HTTPClient, opts.Path)
			return data, opts.Path, err
		}
		data, err := os.ReadFile(opts.Path)
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return nil, "", fmt.Errorf("clusterctl config file %s does not exist: check the --config flag", opts.Path)
			}
			return nil, "", fmt.Errorf("reading clusterctl config file: %w", err)
		}
		return data, opts.Path, nil
	}
	for _, dir := range dirs {
		for _, name := range []string{FileName, "clusterctl.yml"} {
			path := filepath.Join(dir, name)
			data, err := os.ReadFile(path)
			if err == nil {
				return data, path, nil
			}
			if !errors.Is(err, os.ErrNotExist) {
				return nil, "", fmt.Errorf("reading clusterctl config file: %w", err)
			}
		}
	}
	return nil, "", nil
}

// maxConfigBytes is the largest remote configuration file read.
const maxConfigBytes = 1 << 20

func download(ctx context.Context, client *http.Client, rawURL string) ([]byte, error) {
	if client == nil {
		client = http.DefaultClient
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return nil, fmt.Errorf("invalid --config URL %s: %w", rawURL, err)
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("downloading clusterctl config file: %w", err)
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("downloading clusterctl config file %s: the server answered %s", rawURL, resp.Status)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxConfigBytes+1))
	if err != nil {
		return nil, fmt.Errorf("downloading clusterctl config file %s: %w", rawURL, err)
	}
	if len(data) > maxConfigBytes {
		return nil, fmt.Errorf("downloading clusterctl config file %s: it is larger than 1 MiB, which is not a clusterctl configuration", rawURL)
	}
	return data, nil
}

// decode parses YAML into a map with lower-cased top-level keys, keeping numbers as written.
func decode(data []byte) (map[string]any, error) {
	js, err := yaml.YAMLToJSON(data)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.UseNumber()
	var raw any
	if err := dec.Decode(&raw); err != nil {
		return nil, err
	}
	if raw == nil {
		return map[string]any{}, nil
	}
	m, ok := raw.(map[string]any)
	if !ok {
		return nil, errors.New("the file must be a YAML mapping of keys to values")
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[strings.ToLower(k)] = v
	}
	return out, nil
}

// stringify renders a file value as a variable: scalars as written, lists and maps as JSON (valid YAML).
func stringify(v any) string {
	switch t := v.(type) {
	case nil:
		return ""
	case string:
		return t
	case json.Number:
		return t.String()
	case bool:
		if t {
			return "true"
		}
		return "false"
	default:
		b, err := json.Marshal(t)
		if err != nil {
			return fmt.Sprint(t)
		}
		return string(b)
	}
}

func homeDir(lookup func(string) (string, bool)) (string, error) {
	if h, ok := lookup("HOME"); ok && h != "" {
		return h, nil
	}
	if h, ok := lookup("USERPROFILE"); ok && h != "" {
		return h, nil
	}
	h, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("cannot find the home directory: set HOME: %w", err)
	}
	return h, nil
}

func expandHome(path, home string) string {
	if path == "~" {
		return home
	}
	if strings.HasPrefix(path, "~/") {
		return filepath.Join(home, path[2:])
	}
	return path
}

// expand replaces ${NAME} in s with the value of the variable NAME; an unset variable is an error.
func expand(s string, get func(string) (string, bool)) (string, error) {
	var missing []string
	out := os.Expand(s, func(name string) string {
		v, ok := get(name)
		if !ok {
			missing = append(missing, name)
		}
		return v
	})
	if len(missing) > 0 {
		return "", fmt.Errorf("%q uses variables that are not set: %s", s, strings.Join(missing, ", "))
	}
	return out, nil
}
