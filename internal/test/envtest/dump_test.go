package envtest

import (
	"fmt"
	"testing"
)

func TestLogRingKeepsTheLastLines(t *testing.T) {
	r := &logRing{size: 4}
	for i := range 10 {
		fmt.Fprintf(r, "line %d of ns-%d\n", i, i%2)
	}
	got := r.matching("ns-1", 10)
	want := []string{"line 7 of ns-1", "line 9 of ns-1"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("lines of ns-1: got %q, want %q", got, want)
	}
	if got := r.matching("line", 3); fmt.Sprint(got) != fmt.Sprint([]string{"line 7 of ns-1", "line 8 of ns-0", "line 9 of ns-1"}) {
		t.Fatalf("last 3 lines: got %q", got)
	}
}
