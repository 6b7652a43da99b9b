package tree

import (
	"testing"

	. "github.com/onsi/gomega"
)

func TestParseConditionFilter(t *testing.T) {
	type match struct {
		kind, name string
		want       ShowConditions
	}
	tests := []struct {
		name    string
		value   string
		wantErr string
		matches []match
	}{
		{name: "empty shows none", value: "", matches: []match{{"Cluster", "demo", ShowNoConditions}}},
		{name: "all", value: "all", matches: []match{{"Cluster", "demo", ShowAllConditions}, {"Machine", "m1", ShowAllConditions}}},
		{name: "ALL is all", value: "ALL", matches: []match{{"Machine", "m1", ShowAllConditions}}},
		{name: "a kind, any case", value: "machinedeployment", matches: []match{
			{"MachineDeployment", "md-0", ShowAllConditions}, {"Machine", "md-0", ShowNoConditions},
		}},
		{name: "kind/name matches only that object", value: "Machine/m1", matches: []match{
			{"Machine", "m1", ShowAllConditions}, {"Machine", "m2", ShowNoConditions}, {"MachineSet", "m1", ShowNoConditions},
		}},
		{name: "names are case-sensitive", value: "Machine/M1", matches: []match{{"Machine", "m1", ShowNoConditions}}},
		{name: "a list with spaces", value: " Cluster , Machine/m1 ", matches: []match{
			{"Cluster", "demo", ShowAllConditions}, {"Machine", "m1", ShowAllConditions}, {"Machine", "m2", ShowNoConditions},
		}},
		{name: "+ lists the conditions that say something", value: "Machine+", matches: []match{{"Machine", "m1", ShowNonZeroConditions}}},
		{name: "all+", value: "all+", matches: []match{{"Cluster", "demo", ShowNonZeroConditions}}},
		{name: "the entry that lists more wins", value: "Machine+,Machine/m1", matches: []match{
			{"Machine", "m1", ShowAllConditions}, {"Machine", "m2", ShowNonZeroConditions},
		}},
		{name: "empty items are ignored", value: ",Cluster,", matches: []match{{"Cluster", "demo", ShowAllConditions}}},
		{name: "too many slashes", value: "Machine/a/b", wantErr: `"Machine/a/b" is not a kind, kind/name or all`},
		{name: "a name without kind", value: "/m1", wantErr: `"/m1" is not a kind, kind/name or all`},
		{name: "a kind without name", value: "Machine/", wantErr: `"Machine/" is not a kind, kind/name or all`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			f, err := ParseConditionFilter(tt.value)
			if tt.wantErr != "" {
				g.Expect(err).To(MatchError(ContainSubstring(tt.wantErr)))
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			for _, m := range tt.matches {
				g.Expect(f.Match(m.kind, m.name)).To(Equal(m.want), "%s/%s", m.kind, m.name)
			}
		})
	}
}
