package v1alpha3

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// +kubebuilder:object:root=true

// Metadata is the content of a provider release's metadata.yaml: which release series follows which Cluster
// API contract. It is a file format, not a CRD.
type Metadata struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// releaseSeries maps release series (major.minor) to the contract they follow.
	// +optional
	ReleaseSeries []ReleaseSeries `json:"releaseSeries"`
}

// ReleaseSeries maps one release series (major.minor) to a Cluster API contract.
type ReleaseSeries struct {
	// major is the major version of the series.
	// +optional
	Major int32 `json:"major,omitempty"`

	// minor is the minor version of the series.
	// +optional
	Minor int32 `json:"minor,omitempty"`

	// contract is the Cluster API contract the series follows, for example "v1beta1".
	// +optional
	Contract string `json:"contract,omitempty"`
}

// GetReleaseSeriesForVersion returns the release series of a version given as major and minor, or nil.
func (m *Metadata) GetReleaseSeriesForVersion(major, minor uint64) *ReleaseSeries {
	for i := range m.ReleaseSeries {
		s := &m.ReleaseSeries[i]
		if uint64(s.Major) == major && uint64(s.Minor) == minor {
			return s
		}
	}
	return nil
}

// GetReleaseSeriesForContract returns the release series that follow a contract.
func (m *Metadata) GetReleaseSeriesForContract(contract string) []ReleaseSeries {
	var out []ReleaseSeries
	for _, s := range m.ReleaseSeries {
		if s.Contract == contract {
			out = append(out, s)
		}
	}
	return out
}
