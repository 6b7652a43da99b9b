package kubeadmconfig

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/metrics/server"

	bootstrapv1 "github.com/capstan-dev/capstan/api/bootstrap/kubeadm/v1beta1"
	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/clustercache"
	"github.com/capstan-dev/capstan/internal/controllermanager"
	"github.com/capstan-dev/capstan/internal/feature"
	"github.com/capstan-dev/capstan/internal/test/envtest"
)

// env is the management cluster; workload the workload cluster every test Cluster points at.
var env, workload *envtest.Environment

// clusterCache is the controller's workload cluster cache: it connects on demand, as the provider's does,
// and drops a cluster after testIdleTimeout without use.
var clusterCache *clustercache.ClusterCache

// gates are the controller's feature gates: KubeadmBootstrapFormatIgnition on, as the tests of Ignition
// data need (TestIgnitionNeedsItsFeatureGate turns it off for a while).
var gates = &feature.Gates{}

// testIdleTimeout is longer than the token checks of Machines without a Node (testTokenTTL/3).
const testIdleTimeout = 5 * time.Second

// testTokenTTL is the bootstrap token TTL of the tests: short, so that refreshes are seen.
const testTokenTTL = 9 * time.Second

func TestMain(m *testing.M) {
	os.Exit(envtest.RunAll(m, []envtest.Options{{}, {}}, func(ctx context.Context, envs []*envtest.Environment) error {
		env, workload = envs[0], envs[1]
		// The manager's requests are counted, so that tests can tell which Secrets are read from the API server.
		cfg := rest.CopyConfig(env.Config)
		cfg.Wrap(liveRequests.wrap)
		mgr, err := ctrl.NewManager(cfg, ctrl.Options{
			Scheme:                 env.Scheme,
			Metrics:                server.Options{BindAddress: "0"},
			HealthProbeBindAddress: "0",
			// As the provider's manager (controllermanager.New): the Secrets labelled with a cluster name are
			// read from the cache, other Secrets and ConfigMaps from the API server.
			Cache:      controllermanager.CacheOptions(cache.Options{}),
			Client:     controllermanager.ClientOptions(),
			NewClient:  controllermanager.NewClient,
			Controller: config.Controller{UsePriorityQueue: ptr.To(true)},
		})
		if err != nil {
			return fmt.Errorf("creating the manager: %w", err)
		}
		if err = gates.Set("KubeadmBootstrapFormatIgnition=true"); err != nil {
			return fmt.Errorf("setting the feature gates: %w", err)
		}
		clusterCache, err = clustercache.New(mgr, clustercache.Options{
			ConnectionRetryInterval: time.Second, IdleTimeout: testIdleTimeout, HealthProbeInterval: 500 * time.Millisecond,
		})
		if err == nil {
			err = (&Reconciler{
				Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), SecretCache: mgr.GetCache(), ClusterCache: clusterCache, TokenTTL: testTokenTTL,
				WaitInterval: time.Second, ConfigInterval: time.Second, FeatureGates: gates,
			}).SetupWithManager(ctx, mgr, controller.Options{MaxConcurrentReconciles: 5})
		}
		if err != nil {
			return fmt.Errorf("setting up the controller: %w", err)
		}
		go func() {
			if err := mgr.Start(ctx); err != nil {
				fmt.Fprintf(os.Stderr, "Manager: %v\n", err)
			}
		}()
		return nil
	}))
}

// requestCounter counts the manager's requests to the API server by method and path.
type requestCounter struct {
	mu     sync.Mutex
	counts map[string]int
}

var liveRequests = &requestCounter{counts: map[string]int{}}

func (c *requestCounter) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripperFunc(func(r *http.Request) (*http.Response, error) {
		c.mu.Lock()
		c.counts[r.Method+" "+r.URL.Path]++
		c.mu.Unlock()
		return rt.RoundTrip(r)
	})
}

// secretGets returns the GETs of single Secrets of namespace ns sent so far, by Secret name.
func (c *requestCounter) secretGets(ns string) map[string]int {
	prefix := "GET /api/v1/namespaces/" + ns + "/secrets/"
	out := map[string]int{}
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, n := range c.counts {
		if name, ok := strings.CutPrefix(k, prefix); ok {
			out[name] += n
		}
	}
	return out
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// createCluster creates a Cluster whose infrastructure is ready, whose endpoint and kubeconfig point at the
// workload API server, and whose control plane is not initialized yet.
func createCluster(t *testing.T, ns, name string) *clusterv1.Cluster {
	t.Helper()
	g := NewWithT(t)
	ctx := context.Background()
	u, err := url.Parse(workload.Config.Host)
	g.Expect(err).NotTo(HaveOccurred())
	host, portText, _ := net.SplitHostPort(u.Host)
	port, _ := strconv.Atoi(portText)
	cluster := &clusterv1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: clusterv1.ClusterSpec{
			ControlPlaneEndpoint: clusterv1.APIEndpoint{Host: host, Port: int32(port)},
			ClusterNetwork:       &clusterv1.ClusterNetwork{Pods: &clusterv1.NetworkRanges{CIDRBlocks: []string{"192.168.0.0/16"}}},
		},
	}
	g.Expect(env.Client.Create(ctx, cluster)).To(Succeed())
	cluster.Status.InfrastructureReady = true
	g.Expect(env.Client.Status().Update(ctx, cluster)).To(Succeed())
	g.Expect(envtest.WriteKubeconfigSecret(ctx, env.Client, ns, name, workload.Config)).To(Succeed())
	return cluster
}

// initializeControlPlane marks the Cluster's control plane initialized, as the core does once the first
// control plane Machine has a Node.
func initializeControlPlane(t *testing.T, cluster *clusterv1.Cluster) {
	t.Helper()
	g := NewWithT(t)
	g.Expect(env.Client.Get(context.Background(), client.ObjectKeyFromObject(cluster), cluster)).To(Succeed())
	cluster.Status.Conditions = append(cluster.Status.Conditions, clusterv1.Condition{
		Type: clusterv1.ControlPlaneInitializedCondition, Status: corev1.ConditionTrue, LastTransitionTime: metav1.Now(),
	})
	g.Expect(env.Client.Status().Update(context.Background(), cluster)).To(Succeed())
}

// createMachine creates a Machine of the Cluster with a KubeadmConfig of spec, owned by the Machine as the
// Machine controller would set it.
func createMachine(t *testing.T, cluster *clusterv1.Cluster, name string, controlPlane bool, spec bootstrapv1.KubeadmConfigSpec) (*clusterv1.Machine, *bootstrapv1.KubeadmConfig) {
	t.Helper()
	g := NewWithT(t)
	ctx := context.Background()
	config := &bootstrapv1.KubeadmConfig{ObjectMeta: metav1.ObjectMeta{Namespace: cluster.Namespace, Name: name}, Spec: spec}
	g.Expect(env.Client.Create(ctx, config)).To(Succeed())
	labels := map[string]string{clusterv1.ClusterNameLabel: cluster.Name}
	if controlPlane {
		labels[clusterv1.MachineControlPlaneLabel] = ""
	}
	machine := &clusterv1.Machine{
		ObjectMeta: metav1.ObjectMeta{Namespace: cluster.Namespace, Name: name, Labels: labels},
		Spec: clusterv1.MachineSpec{
			ClusterName: cluster.Name,
			Version:     ptr.To("v1.36.2"),
			Bootstrap: clusterv1.Bootstrap{ConfigRef: &corev1.ObjectReference{
				APIVersion: bootstrapv1.GroupVersion.String(), Kind: "KubeadmConfig", Name: name, Namespace: cluster.Namespace,
			}},
			InfrastructureRef: corev1.ObjectReference{APIVersion: "infrastructure.cluster.x-k8s.io/v1beta1", Kind: "GenericInfrastructureMachine", Name: name},
		},
	}
	g.Expect(env.Client.Create(ctx, machine)).To(Succeed())
	before := config.DeepCopy()
	config.OwnerReferences = []metav1.OwnerReference{{
		APIVersion: clusterv1.GroupVersion.String(), Kind: "Machine", Name: machine.Name, UID: machine.UID, Controller: ptr.To(true),
	}}
	g.Expect(env.Client.Patch(ctx, config, client.MergeFrom(before))).To(Succeed())
	return machine, config
}

// get reads obj again.
func get(g Gomega, obj client.Object) {
	g.Expect(env.Client.Get(context.Background(), client.ObjectKeyFromObject(obj), obj)).To(Succeed())
}
