// Package golden compares test output with golden files under testdata/. Run the tests with -update to
// rewrite the golden files from the current output.
package golden

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// update is the -update flag of the test binaries that compare with golden files.
var update = flag.Bool("update", false, "rewrite golden files under testdata/ from the current output")

// Assert compares got with the file testdata/<name>, or writes the file when -update is given.
func Assert(t testing.TB, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o600); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading golden file (run the test with -update to create it): %v", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("output differs from %s (-want +got; run with -update if the change is intended):\n%s", path, diff)
	}
}
