package kubeversion

import (
	"testing"

	"github.com/blang/semver/v4"
	. "github.com/onsi/gomega"
)

func TestCompare(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"1.31.0", "1.31.0", 0},
		{"1.31.0", "1.31.1", -1},
		{"1.32.0", "1.31.9", 1},
		{"1.31.0-rc.0", "1.31.0", -1},
		{"1.31.0+2", "1.31.0+10", -1},     // numbers compare as numbers
		{"1.31.0+10", "1.31.0+abc", -1},   // a number is lower than a word
		{"1.31.0+abc", "1.31.0+abc", 0},   // equal words
		{"1.31.0+abc", "1.31.0+abd", 2},   // different words cannot be ordered
		{"1.31.0+foo.1", "1.31.0+foo", 1}, // equal so far: the longer is greater
		{"1.31.0", "1.31.0+foo", -1},      // no build metadata is the shorter
		{"1.31.1+zzz", "1.31.0+aaa", 1},   // the version decides first
		{"1.31.1+foo.2-bar.1", "1.31.1+foo.1-bar.1", 2},
	}
	for _, tt := range tests {
		t.Run(tt.a+" vs "+tt.b, func(t *testing.T) {
			g := NewWithT(t)
			g.Expect(Compare(semver.MustParse(tt.a), semver.MustParse(tt.b))).To(Equal(tt.want))
		})
	}
}
