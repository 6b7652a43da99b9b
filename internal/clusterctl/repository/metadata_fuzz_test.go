package repository

import (
	"fmt"
	"testing"

	"sigs.k8s.io/yaml"
)

// FuzzParseMetadata checks that no metadata.yaml makes ParseMetadata panic, that what it accepts is valid
// (every series has a contract, no series twice) and survives a round trip, and that looking a release up
// in accepted metadata never panics.
func FuzzParseMetadata(f *testing.F) {
	for _, s := range []string{
		"apiVersion: clusterctl.cluster.x-k8s.io/v1alpha3\nkind: Metadata\nreleaseSeries:\n- major: 1\n  minor: 10\n  contract: v1beta1\n",
		"apiVersion: clusterctl.cluster.x-k8s.io/v1alpha3\nkind: Metadata\nreleaseSeries:\n- {major: 0, minor: 1, contract: v1beta1}\n- {major: 0, minor: 2, contract: v1beta2}\n",
		"apiVersion: clusterctl.cluster.x-k8s.io/v1alpha3\nkind: Metadata\nreleaseSeries: []\n",
		"apiVersion: clusterctl.cluster.x-k8s.io/v1alpha3\nkind: Metadata\nreleaseSeries:\n- major: -1\n  minor: 0\n  contract: v1beta1\n",
		"kind: Metadata\nunknown: field\n", "{}", "- a\n- b\n", "",
	} {
		f.Add([]byte(s), "v1.10.3")
	}
	f.Fuzz(func(t *testing.T, data []byte, version string) {
		m, err := ParseMetadata(data)
		if err != nil {
			return
		}
		if len(m.ReleaseSeries) == 0 {
			t.Fatal("accepted metadata without release series")
		}
		seen := map[string]bool{}
		for _, s := range m.ReleaseSeries {
			key := fmt.Sprintf("%d.%d", s.Major, s.Minor)
			if seen[key] || !contractPattern.MatchString(s.Contract) {
				t.Fatalf("accepted an invalid series %s (%s)", key, s.Contract)
			}
			seen[key] = true
		}
		again, err := yaml.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ParseMetadata(again); err != nil {
			t.Fatalf("accepted metadata does not survive a round trip: %v\n%s", err, again)
		}
		_, _ = ReleaseSeriesFor(m, "infrastructure-fuzz", version)
	})
}
