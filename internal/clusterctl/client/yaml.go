package client

import (
	"context"

	"github.com/capstan-dev/capstan/internal/clusterctl/template"
)

// ProcessYAMLOptions say what YAML to process.
type ProcessYAMLOptions struct {
	// From is a URL, a file, or "-" (or empty) for standard input.
	From string
	// ListVariablesOnly returns the variables without processing the YAML.
	ListVariablesOnly bool
	// RenderOnly returns a template that holds its documents rendered, not its objects, to be printed
	// with WriteYAML (see template.Input).
	RenderOnly bool
}

// ProcessYAML substitutes the variables of any YAML with clusterctl's processor; namespaces are left as
// they are.
func (c *Client) ProcessYAML(ctx context.Context, o ProcessYAMLOptions) (*template.Template, error) {
	raw, err := c.read(ctx, o.From)
	if err != nil {
		return nil, err
	}
	source := o.From
	if source == "" || source == "-" {
		source = "standard input"
	}
	return newTemplate(template.Input{Raw: raw, Variables: c.cfg.Get, ListVariablesOnly: o.ListVariablesOnly, RenderOnly: o.RenderOnly}, source)
}
