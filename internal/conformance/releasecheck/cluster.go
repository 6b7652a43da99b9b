package releasecheck

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/go-logr/logr"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/wait"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	clusterctlv1 "github.com/capstan-dev/capstan/api/clusterctl/v1alpha3"
	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	clusterctlclient "github.com/capstan-dev/capstan/internal/clusterctl/client"
	"github.com/capstan-dev/capstan/internal/clusterctl/cluster"
	"github.com/capstan-dev/capstan/internal/clusterctl/config"
	"github.com/capstan-dev/capstan/internal/embedded"
	"github.com/capstan-dev/capstan/internal/manifest"
	capstanrelease "github.com/capstan-dev/capstan/internal/release"
)

// managementCluster is the embedded management cluster the provider is checked in.
type managementCluster struct {
	state embedded.State
	cfg   *rest.Config
	stop  func()
}

// startCluster starts an embedded management cluster with its state under work and returns once it and
// its local runtime (running o.ImageExecutables for their images) run.
func startCluster(ctx context.Context, work string, o *Options) (*managementCluster, error) {
	name := "conformance-" + rand.String(6)
	state := embedded.State{Dir: filepath.Join(work, "cluster")}
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	ready := make(chan *rest.Config, 1)
	done := make(chan error, 1)
	go func() {
		done <- embedded.Up(ctx, embedded.UpOptions{
			Name: name, State: state, Binaries: o.Binaries, Capstan: o.Capstan, Out: io.Discard, Log: o.Log,
			EtcdUnsafeNoFsync: true, Executables: o.ImageExecutables,
			Ready: func(cfg *rest.Config) { ready <- cfg },
		})
	}()
	// The cluster's error once it stops is of no use any more: the report is written.
	stop := func() {
		cancel()
		if err := <-done; err != nil {
			o.Log.V(1).Info("The embedded management cluster stopped", "error", err.Error())
		}
	}
	select {
	case cfg := <-ready:
		return &managementCluster{state: state, cfg: cfg, stop: stop}, nil
	case err := <-done:
		cancel()
		return nil, fmt.Errorf("starting the embedded management cluster: %w", err)
	}
}

// install installs capstan's core and the provider with clusterctl init, as a user would, and waits for
// their Deployments. The core's controllers are then restricted to the core's own namespace
// (--namespace): the kit plays the core in the namespace of its scenario, where no core controller may
// act; the core's webhooks still serve every namespace.
func (m *managementCluster) install(ctx context.Context, rel Release, timeout time.Duration, log logr.Logger) error {
	core, err := capstanrelease.Core()
	if err != nil {
		return err
	}
	type entry struct {
		Name string `json:"name"`
		Type string `json:"type"`
		URL  string `json:"url"`
	}
	data, err := yaml.Marshal(map[string][]entry{"providers": {
		{Name: core.Name, Type: string(core.Type), URL: filepath.Join(m.state.RepositoryDir(), core.Label(), "latest", core.ComponentsFile())},
		{Name: rel.Name, Type: string(clusterctlv1.InfrastructureProviderType), URL: rel.components()},
	}})
	if err != nil {
		return err
	}
	cfg, err := config.New(data, os.LookupEnv)
	if err != nil {
		return err
	}
	mc := cluster.New(cluster.Kubeconfig{Path: m.state.Kubeconfig()})
	cc := clusterctlclient.New(clusterctlclient.Options{Config: cfg, Cluster: mc})
	if _, err := cc.Init(logr.NewContext(ctx, log), clusterctlclient.InitOptions{
		Providers: clusterctlclient.Providers{
			CoreProvider:            core.Name,
			BootstrapProviders:      []string{clusterctlclient.NoProvider},
			ControlPlaneProviders:   []string{clusterctlclient.NoProvider},
			InfrastructureProviders: []string{rel.Name},
		},
		WaitProviders: true, WaitProviderTimeout: timeout,
	}); err != nil {
		return fmt.Errorf("clusterctl init: %w", err)
	}
	return m.restrictCore(ctx, timeout)
}

// restrictCore adds --namespace=<its namespace> to the core's manager and waits for the new process.
func (m *managementCluster) restrictCore(ctx context.Context, timeout time.Duration) error {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return err
	}
	c, err := client.New(m.cfg, client.Options{Scheme: scheme})
	if err != nil {
		return err
	}
	list := &appsv1.DeploymentList{}
	if err := c.List(ctx, list, client.MatchingLabels{clusterv1.ProviderNameLabel: "cluster-api"}); err != nil {
		return err
	}
	if len(list.Items) != 1 {
		return fmt.Errorf("expected one Deployment of the core provider, found %d", len(list.Items))
	}
	d := &list.Items[0]
	i := slices.IndexFunc(d.Spec.Template.Spec.Containers, func(c corev1.Container) bool { return c.Name == "manager" })
	if i < 0 {
		return fmt.Errorf("the core's Deployment %s has no manager container", d.Name)
	}
	flag := "--namespace=" + d.Namespace
	if !slices.ContainsFunc(d.Spec.Template.Spec.Containers[i].Args, func(a string) bool { return strings.HasPrefix(a, "--namespace") }) {
		before := d.DeepCopy()
		d.Spec.Template.Spec.Containers[i].Args = append(d.Spec.Template.Spec.Containers[i].Args, flag)
		if err := c.Patch(ctx, d, client.MergeFrom(before)); err != nil {
			return fmt.Errorf("restricting the core's controllers to %s: %w", d.Namespace, err)
		}
	}
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, client.ObjectKeyFromObject(d), d); err != nil {
			return false, err
		}
		s := d.Status
		return s.ObservedGeneration >= d.Generation && s.UpdatedReplicas >= 1 && s.AvailableReplicas >= 1 && s.Replicas == s.UpdatedReplicas, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for the core's Deployment %s with %s: %w", d.Name, flag, err)
	}
	return nil
}

// providerCRDs returns the CRDs of the provider's components.
func providerCRDs(rel Release) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	data, err := os.ReadFile(rel.components())
	if err != nil {
		return nil, err
	}
	tmpl, err := manifest.Parse(data)
	if err != nil {
		return nil, err
	}
	var out []*apiextensionsv1.CustomResourceDefinition
	for i := range tmpl {
		if tmpl[i].GetKind() != "CustomResourceDefinition" {
			continue
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(tmpl[i].Object, crd); err != nil {
			return nil, fmt.Errorf("reading CRD %s: %w", tmpl[i].GetName(), err)
		}
		out = append(out, crd)
	}
	if len(out) == 0 {
		return nil, errors.New("the components YAML holds no CRD")
	}
	return out, nil
}

// machinePoolKind returns the provider's InfraMachinePool kind: the kind of its CRDs in the InfraCluster's
// group named <Prefix>MachinePool, at its storage version; empty when there is none (MachinePools are
// optional).
func machinePoolKind(crds []*apiextensionsv1.CustomResourceDefinition, group string) schema.GroupVersionKind {
	for _, crd := range crds {
		if crd.Spec.Group != group || !strings.HasSuffix(crd.Spec.Names.Kind, "MachinePool") {
			continue
		}
		for _, v := range crd.Spec.Versions {
			if v.Storage {
				return schema.GroupVersionKind{Group: group, Version: v.Name, Kind: crd.Spec.Names.Kind}
			}
		}
	}
	return schema.GroupVersionKind{}
}
