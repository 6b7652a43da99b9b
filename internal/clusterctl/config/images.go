package config

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// AllImages is the images key whose override applies to every component.
const AllImages = "all"

// ImageMeta overrides parts of an image reference.
type ImageMeta struct {
	// Repository replaces everything before the image name, for example "registry.example.com/mirror".
	Repository string
	// Name replaces the image name (the last path element).
	Name string
	// Tag replaces the tag; a digest is dropped with it, since it would pin the old content.
	Tag string
}

// ImageOverrides are the images section of the config file, keyed by "all", a component (a provider's
// manifest label such as "infrastructure-aws", or "cert-manager") or "<component>/<image name>".
type ImageOverrides map[string]ImageMeta

// Alter applies the overrides for component to image: "all" first, then the component's, then the
// image's, each field overriding the previous ones.
func (o ImageOverrides) Alter(component, image string) (string, error) {
	if len(o) == 0 {
		return image, nil
	}
	ref, err := ParseImage(image)
	if err != nil {
		return "", err
	}
	var meta ImageMeta
	for _, key := range []string{AllImages, component, component + "/" + ref.Name} {
		m, ok := o[key]
		if !ok {
			continue
		}
		if m.Repository != "" {
			meta.Repository = m.Repository
		}
		if m.Name != "" {
			meta.Name = m.Name
		}
		if m.Tag != "" {
			meta.Tag = m.Tag
		}
	}
	if meta.Repository != "" {
		ref.Repository = strings.TrimSuffix(meta.Repository, "/")
	}
	if meta.Name != "" {
		ref.Name = meta.Name
	}
	if meta.Tag != "" {
		ref.Tag = meta.Tag
		ref.Digest = ""
	}
	return ref.String(), nil
}

// ImageRef is an image reference split into its parts.
type ImageRef struct {
	// Repository is the registry and path before the name, for example "registry.k8s.io/cluster-api".
	Repository string
	// Name is the last path element, for example "cluster-api-controller".
	Name string
	// Tag is the tag, without ':'.
	Tag string
	// Digest is the digest, without '@'.
	Digest string
}

// ParseImage splits an image reference such as registry.k8s.io/cluster-api/controller:v1.10.0@sha256:....
func ParseImage(image string) (ImageRef, error) {
	var ref ImageRef
	rest := image
	if i := strings.Index(rest, "@"); i >= 0 {
		ref.Digest = rest[i+1:]
		rest = rest[:i]
	}
	slash := strings.LastIndex(rest, "/")
	if colon := strings.LastIndex(rest, ":"); colon > slash {
		ref.Tag = rest[colon+1:]
		rest = rest[:colon]
	}
	if slash >= 0 {
		ref.Repository = rest[:slash]
		ref.Name = rest[slash+1:]
	} else {
		ref.Name = rest
	}
	if ref.Name == "" || strings.ContainsAny(image, " \t\n") {
		return ImageRef{}, fmt.Errorf("invalid image reference %q", image)
	}
	return ref, nil
}

// String joins the parts back into a reference.
func (r ImageRef) String() string {
	s := r.Name
	if r.Repository != "" {
		s = r.Repository + "/" + s
	}
	if r.Tag != "" {
		s += ":" + r.Tag
	}
	if r.Digest != "" {
		s += "@" + r.Digest
	}
	return s
}

var tagPattern = regexp.MustCompile(`^[\w][\w.-]{0,127}$`)

func parseImages(raw any) (ImageOverrides, error) {
	if raw == nil {
		return nil, nil
	}
	m, ok := raw.(map[string]any)
	if !ok {
		return nil, errors.New(`images must be a mapping from "all", a component or "<component>/<image>" to {repository, name, tag}`)
	}
	out := make(ImageOverrides, len(m))
	for key, v := range m {
		fields, ok := v.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("images[%s] must be a mapping with repository, name and/or tag", key)
		}
		var meta ImageMeta
		for k, fv := range fields {
			s, ok := fv.(string)
			if !ok && fv != nil {
				return nil, fmt.Errorf("images[%s].%s must be a string", key, k)
			}
			switch strings.ToLower(k) {
			case "repository":
				meta.Repository = s
			case "name":
				meta.Name = s
			case "tag":
				if s != "" && !tagPattern.MatchString(s) {
					return nil, fmt.Errorf("images[%s].tag %q is not a valid image tag", key, s)
				}
				meta.Tag = s
			default:
				return nil, fmt.Errorf("images[%s] has the unknown field %q: use repository, name or tag", key, k)
			}
		}
		if strings.Contains(meta.Name, "/") {
			return nil, fmt.Errorf("images[%s].name %q must not contain '/': put the path in repository", key, meta.Name)
		}
		out[strings.ToLower(key)] = meta
	}
	return out, nil
}
