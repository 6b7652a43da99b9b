package manifest

import (
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// podSpecPath returns the path of the Pod spec in objects of the given kind, nil for other kinds.
func podSpecPath(kind string) []string {
	switch kind {
	case "Deployment", "DaemonSet", "StatefulSet", "ReplicaSet", "Job", "ReplicationController":
		return []string{"spec", "template", "spec"}
	case "CronJob":
		return []string{"spec", "jobTemplate", "spec", "template", "spec"}
	case "Pod":
		return []string{"spec"}
	}
	return nil
}

// Images returns the images of the containers and init containers of every workload in objs, sorted and
// without duplicates.
func Images(objs []unstructured.Unstructured) []string {
	var images []string
	for i := range objs {
		_ = visitImages(&objs[i], func(image string) (string, error) {
			images = append(images, image)
			return image, nil
		})
	}
	slices.Sort(images)
	return slices.Compact(images)
}

// ReplaceImages replaces the image of every container and init container of every workload in objs with
// what alter returns for it.
func ReplaceImages(objs []unstructured.Unstructured, alter func(image string) (string, error)) error {
	for i := range objs {
		if err := visitImages(&objs[i], alter); err != nil {
			return err
		}
	}
	return nil
}

func visitImages(obj *unstructured.Unstructured, visit func(string) (string, error)) error {
	path := podSpecPath(obj.GetKind())
	if path == nil {
		return nil
	}
	spec, found, err := unstructured.NestedMap(obj.Object, path...)
	if err != nil || !found {
		return nil //nolint:nilerr // Objects without a well-formed Pod spec have no images to visit.
	}
	changed := false
	for _, field := range []string{"initContainers", "containers"} {
		containers, ok := spec[field].([]any)
		if !ok {
			continue
		}
		for _, c := range containers {
			container, ok := c.(map[string]any)
			if !ok {
				continue
			}
			image, ok := container["image"].(string)
			if !ok || image == "" {
				continue
			}
			altered, err := visit(image)
			if err != nil {
				return fmt.Errorf("%s %s, container %v: %w", obj.GetKind(), obj.GetName(), container["name"], err)
			}
			if altered != image {
				container["image"] = altered
				changed = true
			}
		}
	}
	if changed {
		return unstructured.SetNestedMap(obj.Object, spec, path...)
	}
	return nil
}
