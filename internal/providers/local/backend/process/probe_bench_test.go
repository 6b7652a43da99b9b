package process

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"

	"github.com/capstan-dev/capstan/internal/test/procstat"
)

// BenchmarkReadyProbe measures one probe of a ready API server, as the probe loop makes every
// ProbeInterval for each control plane machine: a new TLS connection and a GET of /readyz. It reports the
// CPU time it costs the provider (this process) and the API server. A cluster of 3 control plane machines
// probed every second costs 3 times that per second.
func BenchmarkReadyProbe(b *testing.B) {
	g := NewWithT(b)
	bk, key, _, _ := clusterOfOne(b, g)
	c := bk.get(key)
	g.Expect(c.probe(context.Background())).To(BeTrue())
	apiserver := pidOf(b, c.dir, "a", "kube-apiserver")
	cpu := func() (self, server float64) {
		s, err := procstat.Self()
		g.Expect(err).NotTo(HaveOccurred())
		a, err := procstat.Of(apiserver)
		g.Expect(err).NotTo(HaveOccurred())
		return s.CPUSeconds, a.CPUSeconds
	}
	// The loop's own probes go on beside the benchmark's: stop it.
	c.stopLoop()
	<-c.loopDone
	self0, server0 := cpu()
	b.ResetTimer()
	for b.Loop() {
		if !c.probe(context.Background()) {
			b.Fatal("the API server is not ready")
		}
	}
	b.StopTimer()
	self1, server1 := cpu()
	b.ReportMetric((self1-self0)*1e3/float64(b.N), "provider-cpu-ms/op")
	b.ReportMetric((server1-server0)*1e3/float64(b.N), "apiserver-cpu-ms/op")
}
