package labelformat

import (
	"strings"
	"testing"

	. "github.com/onsi/gomega"
)

func TestValue(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{name: "a valid label value is kept", in: "md-0-7f9c4", want: "md-0-7f9c4"},
		{name: "a name too long for a label value is hashed as upstream does", in: strings.Repeat("a", 100), want: "hash_Cgux2Q_z"},
		{name: "a name with characters labels do not allow is hashed", in: "a/b", want: Value("a/b")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			got := Value(tt.in)
			g.Expect(got).To(Equal(tt.want))
			g.Expect(len(got)).To(BeNumerically("<=", 63))
		})
	}
	NewWithT(t).Expect(Value("a/b")).To(HavePrefix("hash_"))
}
