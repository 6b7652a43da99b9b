// Package releasecheck checks an infrastructure provider's release (a directory or a clusterctl repository
// URL) against the Cluster API provider contract, as `capstan conformance` does: it installs capstan's core
// and the provider with clusterctl init in an embedded management cluster, and runs the conformance kit
// (package conformance) with the provider's Deployment as the provider under test. Its errors name the
// flags of `capstan conformance` that set the Options at fault (--provider-name, --version, ...).
package releasecheck

import (
	"context"
	"net/http"
	"os"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/conformance"
	"github.com/capstan-dev/capstan/internal/embedded"
)

// Options say which release to check and how.
type Options struct {
	// Source is the provider's release: a clusterctl local repository (a directory holding
	// infrastructure-<name>/<version>/), a release directory in the layout of a GitHub release, or a
	// clusterctl repository URL.
	Source string
	// ProviderName is the provider's clusterctl name; read from the repository's folder or the
	// components' cluster.x-k8s.io/provider label when empty.
	ProviderName string
	// Version is the release to check; the newest of the repository (or metadata.yaml's newest series for
	// a release directory) when empty.
	Version string
	// Flavor is the cluster template flavor the InfraCluster and InfraMachine are taken from.
	Flavor string
	// InfraCluster and InfraMachine are YAML files of the objects the kit creates copies of, instead of
	// those of the cluster template.
	InfraCluster, InfraMachine string
	// KubernetesVersion is KUBERNETES_VERSION for the cluster template.
	KubernetesVersion string
	// ImageExecutables map images (without tag) to the local executables the local runtime runs for their
	// containers.
	ImageExecutables map[string]string
	// Timeout bounds each wait for the provider; Quiet is how long objects the provider must leave alone
	// are watched.
	Timeout, Quiet time.Duration
	// Binaries are the embedded cluster's etcd, kube-apiserver and kube-controller-manager.
	Binaries embedded.Binaries
	// Capstan is the capstan executable the local runtime runs for capstan's images; the running
	// executable when empty (tests set it: a test binary is not capstan).
	Capstan string
	// HTTPClient fetches repository URLs; a client bounded by repository.DefaultHTTPLimits when nil.
	HTTPClient *http.Client

	// Log receives the embedded cluster's and clusterctl's logs.
	Log logr.Logger
	// Printf, when set, receives a line as each stage begins: the release checked, the installation, the
	// kit.
	Printf func(format string, args ...any)
	// Logf, when set, receives a line for each step in detail, the kit's included.
	Logf func(format string, args ...any)

	// cluster, when set, is a running management cluster to install the provider in instead of starting
	// one (the tests share one between runs; its runtime's executables are its own then).
	cluster *managementCluster
}

// Result is what a check found.
type Result struct {
	// Release is the release checked.
	Release Release
	// Report has the outcome of every rule of the kit.
	Report conformance.Report
}

// Run checks the release of o.Source. The error says why the release could not be checked; the rules
// that failed are in the Result's report.
func Run(ctx context.Context, o Options) (Result, error) {
	printf, logf := o.Printf, o.Logf
	if printf == nil {
		printf = func(string, ...any) {}
	}
	if logf == nil {
		logf = func(string, ...any) {}
	}
	work, err := os.MkdirTemp("", "capstan-conformance-")
	if err != nil {
		return Result{}, err
	}
	defer func() { _ = os.RemoveAll(work) }()
	rel, err := loadRelease(ctx, o.Source, o.ProviderName, o.Version, work, o.HTTPClient)
	if err != nil {
		return Result{}, err
	}
	protos, err := loadPrototypes(rel, &o)
	if err != nil {
		return Result{}, err
	}
	crds, err := providerCRDs(rel)
	if err != nil {
		return Result{}, err
	}
	printf("Checking %s %s from %s", rel.Label(), rel.Version, o.Source)

	cl := o.cluster
	if cl == nil {
		logf("Starting an embedded management cluster")
		if cl, err = startCluster(ctx, work, &o); err != nil {
			return Result{}, err
		}
		defer cl.stop()
	}
	printf("Installing capstan's core and %s with clusterctl init", rel.Label())
	if err := cl.install(ctx, rel, o.Timeout, o.Log); err != nil {
		return Result{}, err
	}
	deployment, err := newProviderDeployment(ctx, cl.cfg, rel, o.Timeout)
	if err != nil {
		return Result{}, err
	}
	printf("Running the conformance kit")
	logf("The core and the provider run")
	report := conformance.Check(ctx, conformance.Provider{
		Name:       rel.Name,
		CRDs:       crds,
		Repository: os.DirFS(rel.Dir),
		NewInfraCluster: func(namespace, name string) *unstructured.Unstructured {
			return newObject(protos.infraCluster, namespace, name)
		},
		NewInfraMachine: func(namespace, name string) *unstructured.Unstructured {
			return newObject(protos.infraMachine, namespace, name)
		},
		InfraMachinePool: machinePoolKind(crds, protos.infraCluster.GroupVersionKind().Group),
		Start:            deployment.start,
		StartScoped:      deployment.startScoped,
		InfrastructureReady: func(ctx context.Context, c client.Client, cluster *clusterv1.Cluster) error {
			return protos.controlPlane(ctx, c, cluster)
		},
	}, conformance.Options{Config: rest.CopyConfig(cl.cfg), Timeout: o.Timeout, Quiet: o.Quiet, Logf: logf})
	return Result{Release: rel, Report: report}, nil
}
