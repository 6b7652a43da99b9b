package conformance

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	clusterctlv1 "github.com/capstan-dev/capstan/api/clusterctl/v1alpha3"
	clusterctlcomponents "github.com/capstan-dev/capstan/internal/clusterctl/components"
	clusterctlconfig "github.com/capstan-dev/capstan/internal/clusterctl/config"
)

// The rules of the clusterctl provider contract about the images of the components' Deployments.

// The override the image overrides rule asks clusterctl init to apply, as a user's clusterctl.yaml would:
//
//	images:
//	  infrastructure-<name>:
//	    repository: registry.conformance.example/mirror
//	    tag: v0.0.0-conformance
const (
	overrideRepository = "registry.conformance.example/mirror"
	overrideTag        = "v0.0.0-conformance"
)

// canonicalImageProblem says why an image reference is not canonical: a registry host, a path and a name,
// and a tag or a digest that is not "latest". Empty when it is canonical.
func canonicalImageProblem(image string) string {
	ref, err := clusterctlconfig.ParseImage(image)
	if err != nil {
		return err.Error()
	}
	first, _, _ := strings.Cut(ref.Repository, "/")
	switch {
	case ref.Repository == "" || (!strings.ContainsAny(first, ".:") && first != "localhost"):
		return fmt.Sprintf("%q names no registry host (for example registry.k8s.io/...)", image)
	case ref.Tag == "" && ref.Digest == "":
		return fmt.Sprintf("%q has no tag or digest", image)
	case ref.Tag == "latest" && ref.Digest == "":
		return fmt.Sprintf("%q is tagged latest, which names no release", image)
	}
	return ""
}

// podImages returns "<container>: <image>" for the containers and init containers of a Deployment.
func podImages(d *unstructured.Unstructured) [][2]string {
	var out [][2]string
	for _, field := range []string{"initContainers", "containers"} {
		containers, _, _ := unstructured.NestedSlice(d.Object, "spec", "template", "spec", field)
		for _, c := range containers {
			m, _ := c.(map[string]any)
			name, _ := m["name"].(string)
			image, _ := m["image"].(string)
			out = append(out, [2]string{name, image})
		}
	}
	return out
}

func checkImages(in *input) verdict {
	c, v, ok := in.componentObjects()
	if !ok {
		return v
	}
	deployments := c.ofKind("apps", "Deployment")
	if len(deployments) == 0 {
		return skip("Not checked: %s has no Deployment", c.file)
	}
	var problems, images []string
	for _, d := range deployments {
		for _, ci := range podImages(d) {
			if ci[1] == "" {
				problems = append(problems, fmt.Sprintf("container %s of Deployment %s has no image", ci[0], d.GetName()))
				continue
			}
			if len(variables(ci[1]).names) > 0 {
				images = append(images, ci[1])
				continue // set by the user through a variable: canonical once substituted, if the default is
			}
			if p := canonicalImageProblem(ci[1]); p != "" {
				problems = append(problems, fmt.Sprintf("container %s of Deployment %s: %s", ci[0], d.GetName(), p))
				continue
			}
			images = append(images, ci[1])
		}
	}
	if len(problems) > 0 {
		return missing("Images should have canonical names (registry, path, name and a tag or digest): %s", strings.Join(problems, "; "))
	}
	return pass("The Deployments' images have canonical names: %s", strings.Join(images, ", "))
}

func checkImageOverrides(in *input) verdict {
	c, v, ok := in.componentObjects()
	if !ok {
		return v
	}
	if in.p.Name == "" {
		return skip("Not checked: the provider has no name (Provider.Name), so no image override key")
	}
	label := in.label()
	values := map[string]string{}
	for _, name := range variables(c.text).names {
		values[name] = "conformance"
	}
	built, err := clusterctlcomponents.New(clusterctlcomponents.Input{
		Provider:  clusterctlconfig.Provider{Name: in.p.Name, Type: clusterctlv1.InfrastructureProviderType},
		Version:   in.repo.version.String(),
		Raw:       []byte(c.text),
		Variables: func(name string) (string, bool) { v, ok := values[name]; return v, ok },
		Images:    clusterctlconfig.ImageOverrides{label: {Repository: overrideRepository, Tag: overrideTag}},
	})
	switch {
	case err != nil && strings.Contains(err.Error(), "applying image overrides"):
		return fail("clusterctl init cannot apply the image override %s: {repository: %s, tag: %s} to %s: %v",
			label, overrideRepository, overrideTag, c.file, err)
	case err != nil:
		return skip("Not checked: clusterctl init refuses %s (other rules say why): %v", c.file, err)
	}
	var problems, overridden []string
	deployments, managers := 0, 0
	for _, obj := range built.Objects() {
		if obj.GroupVersionKind().Group != "apps" || obj.GetKind() != "Deployment" {
			continue
		}
		deployments++
		m, found := managerContainer(&obj)
		if !found {
			continue // the controller rule reports it
		}
		managers++
		image, _ := m["image"].(string)
		ref, err := clusterctlconfig.ParseImage(image)
		if err != nil || ref.Repository != overrideRepository || ref.Tag != overrideTag {
			problems = append(problems, fmt.Sprintf("the manager container of Deployment %s runs %q once installed, not the overridden image %s/<name>:%s",
				obj.GetName(), image, overrideRepository, overrideTag))
			continue
		}
		overridden = append(overridden, obj.GetName()+": "+image)
	}
	switch {
	case deployments == 0:
		return fail("%s has no Deployment whose image clusterctl init could override", c.file)
	case managers == 0:
		return skip("Not checked: no Deployment of %s has a container named manager (the controller rule)", c.file)
	case len(problems) > 0:
		return fail("The image override %s of clusterctl init does not apply: %s", label, strings.Join(problems, "; "))
	}
	return pass("clusterctl init applies the image override %s: %s", label, strings.Join(overridden, ", "))
}
