// Package provider implements `clusterctl generate provider`: it prints a provider's components as
// clusterctl would install them (variables substituted, namespace enforced, labels added), the raw
// components (--raw), or a description of them (--describe).
package provider

import (
	"fmt"
	"io"
	"path"
	"strings"

	"github.com/spf13/cobra"

	clusterctlv1 "github.com/capstan-dev/capstan/api/clusterctl/v1alpha3"
	clusterctlcli "github.com/capstan-dev/capstan/internal/cli/clusterctl"
	"github.com/capstan-dev/capstan/internal/cli/iostreams"
	"github.com/capstan-dev/capstan/internal/clusterctl/client"
	"github.com/capstan-dev/capstan/internal/clusterctl/components"
)

type options struct {
	core             string
	bootstrap        string
	controlPlane     string
	infrastructure   string
	ipam             string
	runtimeExtension string
	addon            string
	targetNamespace  string
	describe         bool
	raw              bool
	outputFile       string
}

// NewCommand returns the `generate provider` command.
func NewCommand(streams iostreams.Streams, deps *clusterctlcli.Deps) *cobra.Command {
	o := &options{}
	cmd := &cobra.Command{
		Use:   "provider",
		Short: "Generate templates for provider components",
		Long: `Generate templates for provider components.

clusterctl fetches the provider components from the provider repository and performs variable substitution.

Variable values are either sourced from the clusterctl config file or from environment variables.`,
		Example: `  # Generate a yaml file for creating a provider with variable values using
  # components defined in the provider repository.
  clusterctl generate provider --infrastructure aws

  # Generate a yaml file for a specific version of a provider.
  clusterctl generate provider --infrastructure aws:v2.8.0

  # Display information about a provider, including the variables it needs and its images.
  clusterctl generate provider --infrastructure aws --describe
  clusterctl generate provider --infrastructure aws:v2.8.0 --describe

  # Generate a yaml file for a specific version of a provider without substituting variables.
  clusterctl generate provider --infrastructure aws:v2.8.0 --raw`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return o.run(cmd, streams, deps) },
	}
	f := cmd.Flags()
	f.StringVar(&o.core, "core", "", "Core provider version (e.g. cluster-api:v1.1.5) to generate the components of")
	f.StringVarP(&o.bootstrap, "bootstrap", "b", "", "Bootstrap provider and version (e.g. kubeadm:v1.1.5) to generate the components of")
	f.StringVarP(&o.controlPlane, "control-plane", "c", "", "Control plane provider and version (e.g. kubeadm:v1.1.5) to generate the components of")
	f.StringVarP(&o.infrastructure, "infrastructure", "i", "", "Infrastructure provider and version (e.g. aws:v0.5.0) to generate the components of")
	f.StringVar(&o.ipam, "ipam", "", "IPAM provider and version (e.g. infoblox:v0.0.1) to generate the components of")
	f.StringVar(&o.runtimeExtension, "runtime-extension", "", "Runtime extension provider and version (e.g. my-extension:v0.0.1) to generate the components of")
	f.StringVar(&o.addon, "addon", "", "Add-on provider and version (e.g. helm:v0.1.0) to generate the components of")
	f.StringVarP(&o.targetNamespace, "target-namespace", "n", "", "The target namespace where the provider should be deployed. If unspecified, the components default namespace is used.")
	f.BoolVar(&o.describe, "describe", false, "Describe the provider: its version, namespace, required variables and images.")
	f.BoolVar(&o.raw, "raw", false, "Generate configuration without variable substitution.")
	f.StringVar(&o.outputFile, "write-to", "", "Specify the output file to write the provider components to, defaults to STDOUT if the flag is not set")
	cmd.MarkFlagsMutuallyExclusive("describe", "raw")
	return cmd
}

// provider returns the one provider that the flags name.
func (o *options) provider() (clusterctlv1.ProviderType, string, error) {
	given := []struct {
		flag  string
		t     clusterctlv1.ProviderType
		value string
	}{
		{"--core", clusterctlv1.CoreProviderType, o.core},
		{"--bootstrap", clusterctlv1.BootstrapProviderType, o.bootstrap},
		{"--control-plane", clusterctlv1.ControlPlaneProviderType, o.controlPlane},
		{"--infrastructure", clusterctlv1.InfrastructureProviderType, o.infrastructure},
		{"--ipam", clusterctlv1.IPAMProviderType, o.ipam},
		{"--runtime-extension", clusterctlv1.RuntimeExtensionProviderType, o.runtimeExtension},
		{"--addon", clusterctlv1.AddonProviderType, o.addon},
	}
	var flags, set []string
	var t clusterctlv1.ProviderType
	var value string
	for _, g := range given {
		flags = append(flags, g.flag)
		if g.value != "" {
			set = append(set, g.flag)
			t, value = g.t, g.value
		}
	}
	switch len(set) {
	case 0:
		return "", "", fmt.Errorf("name the provider to generate with one of %s", strings.Join(flags, ", "))
	case 1:
		return t, value, nil
	}
	return "", "", fmt.Errorf("generate provider generates one provider at a time, but %s were given", strings.Join(set, " and "))
}

func (o *options) run(cmd *cobra.Command, streams iostreams.Streams, deps *clusterctlcli.Deps) error {
	t, name, err := o.provider()
	if err != nil {
		return err
	}
	ctx, c, err := deps.NewClient(cmd.Context(), streams, clusterctlcli.ClientOptions{})
	if err != nil {
		return err
	}
	comps, err := c.ProviderComponents(ctx, client.ComponentsOptions{
		Type:            t,
		Provider:        name,
		TargetNamespace: o.targetNamespace,
		SkipVariables:   o.raw || o.describe,
	})
	if err != nil {
		return err
	}
	if o.describe {
		return describe(streams.Out, comps)
	}
	out, err := comps.YAML()
	if err != nil {
		return err
	}
	return clusterctlcli.WriteOutput(o.outputFile, out, streams.Out)
}

func describe(w io.Writer, c *components.Components) error {
	dir, file := path.Split(c.URL())
	var b strings.Builder
	line := func(format string, args ...any) { b.WriteString(fmt.Sprintf(format, args...) + "\n") }
	line("Name:               %s", c.Name())
	line("Type:               %s", c.Type())
	line("URL:                %s", dir)
	line("Version:            %s", c.Version())
	line("File:               %s", file)
	line("TargetNamespace:    %s", c.TargetNamespace())
	if len(c.Variables()) > 0 {
		line("Variables:")
		for _, v := range c.Variables() {
			line("  - %s", v)
		}
	}
	if len(c.Images()) > 0 {
		line("Images:")
		for _, v := range c.Images() {
			line("  - %s", v)
		}
	}
	line("")
	_, err := io.WriteString(w, b.String())
	return err
}
