package topology

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"text/template"
)

const (
	maxNameLength = 63
	randomLength  = 5
	// randomAlphabet is apimachinery's alphabet for generated names: no vowels, no confusable characters.
	randomAlphabet = "bcdfghjklmnpqrstvwxz2456789"
)

// Default naming templates, as upstream's.
const (
	DefaultInfrastructureNameTemplate     = "{{ .cluster.name }}-{{ .random }}"
	DefaultControlPlaneNameTemplate       = "{{ .cluster.name }}-{{ .random }}"
	DefaultMachineDeploymentNameTemplate  = "{{ .cluster.name }}-{{ .machineDeployment.topologyName }}-{{ .random }}"
	DefaultMachinePoolNameTemplate        = "{{ .cluster.name }}-{{ .machinePool.topologyName }}-{{ .random }}"
	machineDeploymentTemplateNameTemplate = "{{ .cluster.name }}-{{ .machineDeployment.topologyName }}-{{ .random }}"
)

// random returns the ".random" of a name: five characters of the alphabet of generated names, derived
// from seed so that Compute is deterministic (the seed holds the Cluster's UID and what is named).
func random(seed string) string {
	sum := sha256.Sum256([]byte(seed))
	out := make([]byte, randomLength)
	for i := range out {
		out[i] = randomAlphabet[int(sum[i])%len(randomAlphabet)]
	}
	return string(out)
}

// renderName renders a naming template. A name longer than 63 characters is cut to 58 and given a
// random suffix, as upstream does.
func renderName(tmpl, seed, clusterName string, extra map[string]any) (string, error) {
	t, err := template.New("name").Option("missingkey=error").Parse(tmpl)
	if err != nil {
		return "", fmt.Errorf("parsing naming template %q: %w", tmpl, err)
	}
	data := map[string]any{"cluster": map[string]any{"name": clusterName}, "random": random(seed)}
	for k, v := range extra {
		data[k] = v
	}
	var buf bytes.Buffer
	if err := t.Execute(&buf, data); err != nil {
		return "", fmt.Errorf("rendering naming template %q: %w", tmpl, err)
	}
	name := buf.String()
	if len(name) > maxNameLength {
		name = name[:maxNameLength-randomLength] + random(seed+"/long")
	}
	return name, nil
}

// ValidateNameTemplate checks that a naming template parses and renders with the data it may use
// (kind is "infrastructure", "controlPlane", "machineDeployment" or "machinePool").
func ValidateNameTemplate(tmpl, kind string) error {
	extra := map[string]any{}
	switch kind {
	case "machineDeployment":
		extra["machineDeployment"] = map[string]any{"topologyName": "md"}
	case "machinePool":
		extra["machinePool"] = map[string]any{"topologyName": "mp"}
	}
	_, err := renderName(tmpl, "validate", "cluster", extra)
	return err
}
