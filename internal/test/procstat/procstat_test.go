package procstat

import (
	"os"
	"testing"

	. "github.com/onsi/gomega"
)

func TestSelf(t *testing.T) {
	g := NewWithT(t)
	// Touch 64 MiB so that the resident set and its peak grow by at least that much.
	buf := make([]byte, 64<<20)
	for i := range buf {
		buf[i] = byte(i)
	}
	u, err := Self()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(u.RSSMiB).To(BeNumerically(">=", 64))
	g.Expect(u.PeakRSSMiB).To(BeNumerically(">=", u.RSSMiB))
	g.Expect(u.CPUSeconds).To(BeNumerically(">", 0))
	_ = buf[len(buf)-1]

	byPid, err := Of(os.Getpid())
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(byPid.PeakRSSMiB).To(BeNumerically(">=", 64))

	_, err = Of(-1)
	g.Expect(err).To(MatchError(ContainSubstring("process -1")))
}
