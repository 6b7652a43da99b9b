package binaries

import (
	"os"
	"path/filepath"
	"testing"

	. "github.com/onsi/gomega"
)

func TestFind(t *testing.T) {
	g := NewWithT(t)
	dir := t.TempDir()
	exe := filepath.Join(dir, "fake-etcd")
	g.Expect(os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755)).To(Succeed())

	got, err := Find("fake-etcd", exe)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(got).To(Equal(exe))

	t.Setenv(DirEnv, dir)
	got, err = Find("fake-etcd", "")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(got).To(Equal(exe))

	_, err = Find("no-such-binary-anywhere", "")
	g.Expect(IsNotFound(err)).To(BeTrue())
	g.Expect(err.Error()).To(ContainSubstring("make tools"))

	_, err = Find("x", filepath.Join(dir, "missing"))
	g.Expect(err).To(MatchError(ContainSubstring("is not an executable file")))
}
