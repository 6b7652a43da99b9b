package conformance

import (
	"bytes"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	. "github.com/onsi/gomega"

	"github.com/capstan-dev/capstan/internal/cli/iostreams"
	"github.com/capstan-dev/capstan/internal/conformance"
	"github.com/capstan-dev/capstan/internal/conformance/releasecheck"
)

// TestBadInput checks the errors on sources and flags the command cannot use.
func TestBadInput(t *testing.T) {
	empty := t.TempDir()
	for _, tc := range []struct {
		name string
		o    Options
		want string
	}{
		{"missing directory", Options{Options: releasecheck.Options{Source: filepath.Join(empty, "nope")}}, "give a release directory or a clusterctl repository URL"},
		{"not a release", Options{Options: releasecheck.Options{Source: empty}}, "neither a clusterctl local repository"},
		{"unknown output", Options{Options: releasecheck.Options{Source: empty}, Output: "yaml"}, `invalid --output "yaml": use text or json`},
		{"bad executable", Options{Options: releasecheck.Options{Source: empty}, Executables: []string{"example.com/img"}}, `invalid --executable "example.com/img": use IMAGE=PATH`},
		{"missing executable", Options{Options: releasecheck.Options{Source: empty}, Executables: []string{"example.com/img=" + filepath.Join(empty, "manager")}}, "--executable example.com/img: stat " + filepath.Join(empty, "manager")},
		{"GitHub URL without name", Options{Options: releasecheck.Options{Source: "https://github.com/o/r/releases/latest/infrastructure-components.yaml"}}, "give it with --provider-name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			if tc.o.Output == "" {
				tc.o.Output = "text"
			}
			var out bytes.Buffer
			err := tc.o.Run(t.Context(), iostreams.Streams{Out: &out, ErrOut: &out})
			g.Expect(err).To(MatchError(ContainSubstring(tc.want)))
		})
	}
}

// TestTextReport: the table lists every rule with its status and message, and a summary.
func TestTextReport(t *testing.T) {
	g := NewWithT(t)
	report := conformance.Report{
		{Rule: conformance.RuleScope, Status: conformance.Pass, Message: "namespaced"},
		{Rule: conformance.RuleController, Status: conformance.Fail, Message: "no container named manager"},
		{Rule: conformance.RuleMultiTenancy, Status: conformance.Skip, Message: "not checked"},
	}
	var out bytes.Buffer
	g.Expect(printReport(&out, "text", releasecheck.Release{Name: "foo", Version: "v1.0.0"}, report)).To(Succeed())
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	g.Expect(lines).To(HaveLen(6))
	g.Expect(lines[2]).To(MatchRegexp(`^Fail +Clusterctl support: components YAML controller +no container named manager$`))
	g.Expect(lines[5]).To(Equal("infrastructure-foo v1.0.0: 1 passed, 1 failed, 0 warnings, 1 skipped"))
	g.Expect(slices.ContainsFunc(lines, func(l string) bool { return strings.HasPrefix(l, "Skip") && strings.HasSuffix(l, "not checked") })).To(BeTrue())
}

// TestJSONReport: --output json is a document with the provider, the version, whether no rule failed, and every rule with its source, status and message.
func TestJSONReport(t *testing.T) {
	g := NewWithT(t)
	report := conformance.Report{
		{Rule: conformance.RuleScope, Source: "InfraCluster contract", Mandatory: true, Status: conformance.Pass, Message: "namespaced"},
		{Rule: conformance.RuleController, Source: "clusterctl provider contract", Mandatory: true, Status: conformance.Fail, Message: "no container named manager"},
	}
	var out bytes.Buffer
	g.Expect(printReport(&out, "json", releasecheck.Release{Name: "foo", Version: "v1.0.0"}, report)).To(Succeed())
	g.Expect(out.String()).To(MatchJSON(`{
		"provider": "infrastructure-foo", "version": "v1.0.0", "passed": false,
		"results": [
			{"rule": "` + conformance.RuleScope + `", "source": "InfraCluster contract", "mandatory": true, "status": "Pass", "message": "namespaced"},
			{"rule": "` + conformance.RuleController + `", "source": "clusterctl provider contract", "mandatory": true, "status": "Fail", "message": "no container named manager"}
		]}`))

	out.Reset()
	g.Expect(printReport(&out, "json", releasecheck.Release{Name: "foo", Version: "v1.0.0"}, report[:1])).To(Succeed())
	g.Expect(out.String()).To(ContainSubstring(`"passed": true`))
}
