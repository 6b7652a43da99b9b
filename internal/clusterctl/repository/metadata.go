package repository

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"sigs.k8s.io/yaml"

	clusterctlv1 "github.com/capstan-dev/capstan/api/clusterctl/v1alpha3"
)

// MetadataFile is the name of the metadata file of every release.
const MetadataFile = "metadata.yaml"

var contractPattern = regexp.MustCompile(`^v[0-9]+((alpha|beta)[0-9]+)?$`)

// ParseMetadata decodes a metadata.yaml strictly (unknown or duplicate fields are errors) and validates
// it: the apiVersion and kind are clusterctl's, there is at least one release series, every series names
// a contract such as v1beta1, and no major.minor appears twice.
func ParseMetadata(data []byte) (*clusterctlv1.Metadata, error) {
	m := &clusterctlv1.Metadata{}
	if err := yaml.UnmarshalStrict(data, m); err != nil {
		return nil, decodeError(err)
	}
	if want := clusterctlv1.GroupVersion.String(); m.APIVersion != want {
		return nil, fmt.Errorf("apiVersion is %q, want %s", m.APIVersion, want)
	}
	if m.Kind != "Metadata" {
		return nil, fmt.Errorf("kind is %q, want Metadata", m.Kind)
	}
	if len(m.ReleaseSeries) == 0 {
		return nil, errors.New("releaseSeries is empty: it must map each release series (major.minor) to a contract")
	}
	seen := map[[2]int32]bool{}
	for i, s := range m.ReleaseSeries {
		if s.Major < 0 || s.Minor < 0 {
			return nil, fmt.Errorf("releaseSeries[%d]: major and minor must not be negative", i)
		}
		if !contractPattern.MatchString(s.Contract) {
			return nil, fmt.Errorf("releaseSeries[%d] (v%d.%d): contract %q is not a Cluster API contract such as v1beta1", i, s.Major, s.Minor, s.Contract)
		}
		key := [2]int32{s.Major, s.Minor}
		if seen[key] {
			return nil, fmt.Errorf("releaseSeries[%d]: the series v%d.%d appears more than once", i, s.Major, s.Minor)
		}
		seen[key] = true
	}
	return m, nil
}

// MetadataError is a metadata.yaml that cannot be used.
type MetadataError struct {
	// Label is the provider's manifest label, Version the release and URL the repository.
	Label, Version, URL string
	// Err says what is wrong.
	Err error
}

func (e *MetadataError) Error() string {
	where := e.URL
	if e.Label != "" {
		where = e.Label + " " + e.Version + " (" + e.URL + ")"
	}
	return fmt.Sprintf("invalid %s of %s: %v", MetadataFile, where, e.Err)
}

func (e *MetadataError) Unwrap() error { return e.Err }

// GetMetadata reads and validates the metadata.yaml of a release.
func GetMetadata(ctx context.Context, repo Repository, version string) (*clusterctlv1.Metadata, error) {
	data, err := repo.File(ctx, version, MetadataFile)
	if err != nil {
		return nil, err
	}
	m, err := ParseMetadata(data)
	if err != nil {
		l := label(repo)
		if l == repo.URL() {
			l = ""
		}
		return nil, &MetadataError{Label: l, Version: version, URL: repo.URL(), Err: err}
	}
	return m, nil
}

// ReleaseSeriesFor returns the release series of version in m, or an error that tells the user that the
// provider's release is incomplete.
func ReleaseSeriesFor(m *clusterctlv1.Metadata, label, version string) (*clusterctlv1.ReleaseSeries, error) {
	v, err := ParseVersion(version)
	if err != nil {
		return nil, err
	}
	if s := m.GetReleaseSeriesForVersion(v.Major, v.Minor); s != nil {
		return s, nil
	}
	return nil, fmt.Errorf("the %s of %s %s has no release series for v%d.%d, so its contract is unknown: the release is incomplete; ask the provider's maintainers to add {major: %d, minor: %d, contract: ...} to it, or use another version",
		MetadataFile, label, version, v.Major, v.Minor, v.Major, v.Minor)
}

// decodeError drops the layers of wrapping that sigs.k8s.io/yaml adds ("error unmarshaling JSON: while
// decoding JSON: json: ...") and keeps the cause.
func decodeError(err error) error {
	msg := err.Error()
	for _, marker := range []string{"json: ", "error converting YAML to JSON: "} {
		if i := strings.LastIndex(msg, marker); i >= 0 {
			return errors.New(msg[i+len(marker):])
		}
	}
	return err
}
