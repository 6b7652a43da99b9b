package config

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/blang/semver/v4"
)

// cert-manager defaults, as in upstream clusterctl.
const (
	// CertManagerDefaultVersion is the cert-manager version installed when the config file names none.
	CertManagerDefaultVersion = "v1.21.1"
	// CertManagerDefaultURL is where cert-manager's manifest is downloaded from; the version picks the release.
	CertManagerDefaultURL = "https://github.com/cert-manager/cert-manager/releases/latest/cert-manager.yaml"
	// CertManagerDefaultTimeout is how long clusterctl waits for cert-manager to become available.
	CertManagerDefaultTimeout = 10 * time.Minute
	// CertManagerName is the name of cert-manager's component, used in paths and image overrides.
	CertManagerName = "cert-manager"
)

// CertManager holds the cert-manager settings of the config file.
type CertManager struct {
	// URL is the URL of cert-manager's manifest (its repository, in the sense of provider repositories).
	URL string
	// Version is the cert-manager version.
	Version string
	// Timeout is how long to wait for cert-manager to become available.
	Timeout time.Duration
	// ExternallyProvisioned tells clusterctl that cert-manager is managed by someone else: it never
	// installs nor upgrades it.
	ExternallyProvisioned bool
}

func parseCertManager(raw any) (CertManager, error) {
	cm := CertManager{URL: CertManagerDefaultURL, Version: CertManagerDefaultVersion, Timeout: CertManagerDefaultTimeout}
	if raw == nil {
		return cm, nil
	}
	m, ok := raw.(map[string]any)
	if !ok {
		return CertManager{}, errors.New("cert-manager must be a mapping with url, version, timeout and/or externallyProvisioned")
	}
	for k, v := range m {
		switch strings.ToLower(k) {
		case "url":
			if s := stringify(v); s != "" {
				cm.URL = s
			}
		case "version":
			if s := stringify(v); s != "" {
				if _, err := semver.Parse(strings.TrimPrefix(s, "v")); err != nil {
					return CertManager{}, fmt.Errorf("cert-manager.version %q is not a semantic version (for example %s)", s, CertManagerDefaultVersion)
				}
				cm.Version = s
			}
		case "timeout":
			if s := stringify(v); s != "" {
				d, err := time.ParseDuration(s)
				if err != nil || d <= 0 {
					return CertManager{}, fmt.Errorf("cert-manager.timeout %q is not a positive duration (for example 10m)", s)
				}
				cm.Timeout = d
			}
		case "externallyprovisioned":
			b, ok := v.(bool)
			if !ok {
				return CertManager{}, fmt.Errorf("cert-manager.externallyProvisioned must be true or false")
			}
			cm.ExternallyProvisioned = b
		default:
			return CertManager{}, fmt.Errorf("cert-manager has the unknown field %q: use url, version, timeout or externallyProvisioned", k)
		}
	}
	return cm, nil
}
