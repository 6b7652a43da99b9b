// Command ignorepause is a deliberately broken local provider for the tests of package releasecheck: it
// runs `capstan` (its arguments are those of the local provider's Deployment: infra-local ...) and, beside
// it, reconciles LocalClusters whose Cluster is paused or that carry the paused annotation, which the
// contract forbids: it marks them with an annotation.
package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	infrav1 "github.com/capstan-dev/capstan/api/infrastructure/local/v1alpha1"
	"github.com/capstan-dev/capstan/internal/cli/capstan"
	"github.com/capstan-dev/capstan/internal/cli/iostreams"
)

// reconciledWhilePaused is the annotation the broken manager puts on paused LocalClusters.
const reconciledWhilePaused = "conformance.capstan.dev/reconciled-while-paused"

func main() {
	go ignorePause(context.Background())
	if err := capstan.NewCommand(iostreams.Standard()).Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "Error:", err)
		os.Exit(1)
	}
}

// ignorePause annotates every paused LocalCluster, every half second.
func ignorePause(ctx context.Context) {
	scheme := runtime.NewScheme()
	_ = clusterv1.AddToScheme(scheme)
	cfg, err := ctrl.GetConfig()
	if err != nil {
		fmt.Fprintln(os.Stderr, "ignorepause:", err)
		return
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		fmt.Fprintln(os.Stderr, "ignorepause:", err)
		return
	}
	for range time.Tick(500 * time.Millisecond) {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(infrav1.GroupVersion.WithKind("LocalClusterList"))
		if err := c.List(ctx, list); err != nil {
			fmt.Fprintln(os.Stderr, "ignorepause:", err)
			continue
		}
		for i := range list.Items {
			lc := &list.Items[i]
			if _, done := lc.GetAnnotations()[reconciledWhilePaused]; done || !paused(ctx, c, lc) {
				continue
			}
			before := lc.DeepCopy()
			a := lc.GetAnnotations()
			if a == nil {
				a = map[string]string{}
			}
			a[reconciledWhilePaused] = "true"
			lc.SetAnnotations(a)
			if err := c.Patch(ctx, lc, client.MergeFrom(before)); err != nil {
				fmt.Fprintln(os.Stderr, "ignorepause:", err)
			}
		}
	}
}

// paused says whether a LocalCluster carries the paused annotation or its Cluster is paused.
func paused(ctx context.Context, c client.Client, lc *unstructured.Unstructured) bool {
	if _, ok := lc.GetAnnotations()[clusterv1.PausedAnnotation]; ok {
		return true
	}
	name := lc.GetLabels()[clusterv1.ClusterNameLabel]
	if name == "" {
		return false
	}
	cluster := &clusterv1.Cluster{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: lc.GetNamespace(), Name: name}, cluster); err != nil {
		return false
	}
	return cluster.Spec.Paused
}
