package convert_test

import (
	"os"
	"path/filepath"
	"testing"

	. "github.com/onsi/gomega"

	"github.com/capstan-dev/capstan/internal/cli/clusterctl/clusterctltest"
	"github.com/capstan-dev/capstan/internal/test/golden"
)

const warning = "WARNING: This command is EXPERIMENTAL and may be removed in a future release!\n"

func TestConvert(t *testing.T) {
	template := "../../../../config/local/cluster-template.yaml"
	summary := "Converted 2 resource(s) to v1beta2. 5 resource(s) passed through unchanged.\n"

	t.Run("a file to standard output", func(t *testing.T) {
		g := NewWithT(t)
		res := clusterctltest.Run(t, []string{"convert", template}, clusterctltest.Options{})
		g.Expect(res.Code).To(Equal(0), res.Stderr)
		g.Expect(res.Stderr).To(Equal(warning + summary))
		golden.Assert(t, "cluster-template.golden.yaml", []byte(res.Stdout))
	})

	t.Run("standard input to a file", func(t *testing.T) {
		g := NewWithT(t)
		data, err := os.ReadFile(template)
		g.Expect(err).NotTo(HaveOccurred())
		out := filepath.Join(t.TempDir(), "converted.yaml")
		res := clusterctltest.Run(t, []string{"convert", "-o", out, "--to-version", "v1beta2"}, clusterctltest.Options{Stdin: string(data)})
		g.Expect(res.Code).To(Equal(0), res.Stderr)
		g.Expect(res.Stdout).To(BeEmpty())
		g.Expect(res.Stderr).To(Equal(warning + summary))
		written, err := os.ReadFile(out)
		g.Expect(err).NotTo(HaveOccurred())
		golden.Assert(t, "cluster-template.golden.yaml", written)
	})

	t.Run("an unsupported version", func(t *testing.T) {
		g := NewWithT(t)
		res := clusterctltest.Run(t, []string{"convert", template, "--to-version", "v1beta1"}, clusterctltest.Options{})
		g.Expect(res.Code).To(Equal(1))
		g.Expect(res.Stdout).To(BeEmpty())
		g.Expect(res.Stderr).To(Equal("Error: invalid --to-version value \"v1beta1\". Supported versions are: v1beta2\n"))
	})

	t.Run("a file that does not exist", func(t *testing.T) {
		g := NewWithT(t)
		res := clusterctltest.Run(t, []string{"convert", "missing.yaml"}, clusterctltest.Options{})
		g.Expect(res.Code).To(Equal(1))
		g.Expect(res.Stderr).To(Equal("Error: reading the input file: open missing.yaml: no such file or directory\n"))
	})

	t.Run("an object that cannot be converted", func(t *testing.T) {
		g := NewWithT(t)
		out := filepath.Join(t.TempDir(), "converted.yaml")
		res := clusterctltest.Run(t, []string{"convert", "-o", out}, clusterctltest.Options{
			Stdin: "apiVersion: cluster.x-k8s.io/v1beta1\nkind: Cluster\nmetadata: {name: c}\nspec: {pausd: true}\n"})
		g.Expect(res.Code).To(Equal(1))
		g.Expect(res.Stderr).To(Equal(warning + "Error: conversion failed: YAML document 1 (Cluster c): strict decoding error: unknown field \"spec.pausd\": v1beta1 has no such field, so converting would drop it; remove or fix it\n"))
		g.Expect(out).NotTo(BeAnExistingFile(), "nothing is written")
	})
}
