package client

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/clusterctl/repository"
	"github.com/capstan-dev/capstan/internal/clusterctl/template"
)

// addClusterClasses puts in front of t the definitions of the ClusterClasses its Clusters use, read from
// the provider's repository, except those already in the management cluster. Without a reachable
// management cluster every definition is added.
func (c *Client) addClusterClasses(ctx context.Context, r *release, t *template.Template, in template.Input) (*template.Template, error) {
	refs := template.ClusterClasses(t.Objects(), t.TargetNamespace())
	if len(refs) == 0 {
		return t, nil
	}
	log := logr.FromContextOrDiscard(ctx)
	inCluster := c.clusterAvailable(ctx) == nil
	var parts []*template.Template
	for _, ref := range refs {
		if inCluster {
			class := &unstructured.Unstructured{}
			class.SetGroupVersionKind(clusterv1.GroupVersion.WithKind("ClusterClass"))
			class.SetNamespace(ref.Namespace)
			class.SetName(ref.Name)
			exists, err := c.cluster.Exists(ctx, class)
			if err != nil {
				return nil, err
			}
			if exists {
				log.V(1).Info("The ClusterClass is in the management cluster; not adding its definition", "clusterClass", ref.String())
				continue
			}
		}
		file := template.ClusterClassFile(ref.Name)
		raw, err := r.repo.File(ctx, r.version, file)
		if err != nil {
			if errors.Is(err, repository.ErrNotFound) {
				return nil, fmt.Errorf("the template uses ClusterClass %q, which %s has no definition of (%s): create the ClusterClass in the management cluster first, or use another flavor",
					ref.Name, r, file)
			}
			return nil, err
		}
		classIn := in
		classIn.Raw = raw
		classIn.TargetNamespace = ref.Namespace
		ct, err := newTemplate(classIn, file+" of "+r.String())
		if err != nil {
			return nil, err
		}
		if inCluster {
			for _, obj := range ct.Objects() {
				exists, err := c.cluster.Exists(ctx, &obj)
				if err != nil {
					return nil, err
				}
				if exists {
					return nil, fmt.Errorf("%s %s/%s of ClusterClass %q already exists in the management cluster, but the ClusterClass does not: delete it, or create the ClusterClass first",
						obj.GetKind(), obj.GetNamespace(), obj.GetName(), ref.Name)
				}
			}
		}
		parts = append(parts, ct)
	}
	return template.Merge(append(parts, t)...)
}
