// Package conformancetest runs the provider contract conformance kit (internal/conformance) from a Go test:
// each rule becomes a subtest named after it. It is the kit's entry point for provider tests; the kit
// itself has no dependency on package testing, so that `capstan conformance` can ship it.
package conformancetest

import (
	"testing"

	"github.com/capstan-dev/capstan/internal/conformance"
)

// Run checks the provider like conformance.Check and reports each rule as a subtest named after the rule:
// Fail fails the subtest, Skip skips it, Warn and Pass log the message. It returns the report.
func Run(t *testing.T, p conformance.Provider, opts conformance.Options) conformance.Report {
	t.Helper()
	if opts.Logf == nil {
		opts.Logf = t.Logf
	}
	report := conformance.Check(t.Context(), p, opts)
	for _, res := range report {
		t.Run(res.Rule, func(t *testing.T) {
			switch res.Status {
			case conformance.Fail:
				t.Error(res.Message)
			case conformance.Skip:
				t.Skip(res.Message)
			default:
				t.Logf("%s: %s", res.Status, res.Message)
			}
		})
	}
	return report
}
