package kubeadmcontrolplane_test

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	bootstrapv1 "github.com/capstan-dev/capstan/api/bootstrap/kubeadm/v1beta1"
	controlplanev1 "github.com/capstan-dev/capstan/api/controlplane/kubeadm/v1beta1"
	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/core"
	"github.com/capstan-dev/capstan/internal/providers/kubeadm/controlplane"
	"github.com/capstan-dev/capstan/internal/providers/kubeadm/controlplane/workload"
	"github.com/capstan-dev/capstan/internal/test/apicount"
	"github.com/capstan-dev/capstan/internal/test/builder"
	"github.com/capstan-dev/capstan/internal/test/envtest"
	"github.com/capstan-dev/capstan/internal/test/provider"
)

var (
	env, workloadEnv *envtest.Environment
	workloadClient   client.Client
	// broken holds the static Pods (by name) the fake kubelet reports as crashing.
	broken sync.Map
	// managerRequests counts the requests the manager (the core's controllers and the control plane
	// provider's) sends to the management API server.
	managerRequests = apicount.New()
)

// TestMain starts a management API server running the core controllers, the test provider and the
// KubeadmControlPlane controller, and a second API server, the workload cluster. A fake kubeadm stands in
// for the kubeadm bootstrap provider and the Machines' kubelets: it hands out bootstrap data, labels the
// control plane Nodes, serves their static Pods as Running and uploads the kubeadm-config ConfigMap.
// CAPSTAN_TEST_LOGS=1 shows the controllers' logs.
func TestMain(m *testing.M) {
	os.Exit(envtest.RunAll(m, []envtest.Options{{CRDs: builder.CRDs()}, {}}, func(ctx context.Context, envs []*envtest.Environment) error {
		env, workloadEnv = envs[0], envs[1]
		workloadClient = workloadEnv.Client
		ctx = ctrl.LoggerInto(ctx, ctrl.Log)
		if err := startManager(ctx, env.Config, workloadEnv.Config); err != nil {
			return fmt.Errorf("starting the controllers: %w", err)
		}
		go fakeKubeadm(ctx)
		return nil
	}))
}

func startManager(ctx context.Context, cfg, workloadCfg *rest.Config) error {
	// The core's kinds and the provider's, in one manager.
	scheme, err := core.NewScheme()
	if err != nil {
		return err
	}
	if err := bootstrapv1.AddToScheme(scheme); err != nil {
		return err
	}
	if err := controlplanev1.AddToScheme(scheme); err != nil {
		return err
	}
	cfg = rest.CopyConfig(cfg)
	cfg.Wrap(managerRequests.Wrap)
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme: scheme, Metrics: metricsserver.Options{BindAddress: "0"},
		Controller: config.Controller{UsePriorityQueue: ptr.To(true), SkipNameValidation: ptr.To(true)},
		Client:     client.Options{Cache: &client.CacheOptions{DisableFor: []client.Object{&corev1.Secret{}, &corev1.ConfigMap{}}}},
	})
	if err != nil {
		return err
	}
	if err := core.Setup(ctx, mgr, core.Options{Concurrency: core.DefaultConcurrency()}); err != nil {
		return err
	}
	if err := (&provider.Provider{Client: mgr.GetClient(), Workload: workloadCfg}).SetupWithManager(mgr); err != nil {
		return err
	}
	// The fake workload cluster's Pods change without a Machine event (a component made to crash): the
	// health of a healthy control plane is read again every few seconds rather than every 5 minutes.
	opts := controlplane.DefaultOptions()
	opts.HealthInterval = 3 * time.Second
	// In-place updates are on; the CanUpdateMachine extension of a test's namespace is its own (see
	// inPlaceCheckers), none elsewhere.
	opts.InPlaceUpdates, opts.InPlaceUpdateChecker = true, inPlaceCheckers
	if err := controlplane.Setup(ctx, mgr, opts); err != nil {
		return err
	}
	go func() {
		if err := mgr.Start(ctx); err != nil && ctx.Err() == nil {
			panic(err)
		}
	}()
	return nil
}

// fakeKubeadm plays the kubeadm bootstrap provider and kubeadm on the Machines until ctx is done.
func fakeKubeadm(ctx context.Context) {
	wait.UntilWithContext(ctx, func(ctx context.Context) {
		if err := fakeKubeadmOnce(ctx); err != nil && ctx.Err() == nil {
			ctrl.Log.Info("fake kubeadm", "error", err.Error())
		}
	}, 200*time.Millisecond)
}

func fakeKubeadmOnce(ctx context.Context) error {
	configs := &bootstrapv1.KubeadmConfigList{}
	if err := env.Client.List(ctx, configs); err != nil {
		return err
	}
	for i := range configs.Items {
		cfg := &configs.Items[i]
		if cfg.Status.DataSecretName != nil {
			continue
		}
		secret := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: cfg.Namespace, Name: cfg.Name},
			Type:       clusterv1.ClusterSecretType,
			Data:       map[string][]byte{"value": []byte("#cloud-config\n"), "format": []byte("cloud-config")},
		}
		if err := env.Client.Create(ctx, secret); err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
		cfg.Status.DataSecretName = ptr.To(cfg.Name)
		cfg.Status.Ready = true
		if err := env.Client.Status().Update(ctx, cfg); err != nil {
			return err
		}
	}
	machines := &clusterv1.MachineList{}
	if err := env.Client.List(ctx, machines, client.HasLabels{clusterv1.MachineControlPlaneLabel}); err != nil {
		return err
	}
	for _, m := range machines.Items {
		if m.Status.NodeRef == nil || !m.DeletionTimestamp.IsZero() {
			continue
		}
		if err := kubeadmNode(ctx, m.Status.NodeRef.Name); err != nil {
			return err
		}
	}
	return nil
}

// kubeadmNode does what kubeadm and the kubelet do on a control plane Node: the role label, the static
// Pods, and (first) the kubeadm-config ConfigMap.
func kubeadmNode(ctx context.Context, name string) error {
	node := &corev1.Node{}
	if err := workloadClient.Get(ctx, client.ObjectKey{Name: name}, node); err != nil {
		return client.IgnoreNotFound(err)
	}
	if _, ok := node.Labels[workload.ControlPlaneNodeRoleLabel]; !ok {
		before := node.DeepCopy()
		if node.Labels == nil {
			node.Labels = map[string]string{}
		}
		node.Labels[workload.ControlPlaneNodeRoleLabel] = ""
		if err := workloadClient.Patch(ctx, node, client.MergeFrom(before)); err != nil {
			return err
		}
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: metav1.NamespaceSystem, Name: workload.KubeadmConfigMap},
		Data: map[string]string{workload.ClusterConfigurationKey: "apiVersion: kubeadm.k8s.io/v1beta4\nkind: ClusterConfiguration\nkubernetesVersion: v1.36.0\n"}}
	if err := workloadClient.Create(ctx, cm); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	for _, c := range []string{"kube-apiserver", "kube-controller-manager", "kube-scheduler", "etcd"} {
		_, isBroken := broken.Load(workload.StaticPodName(c, name))
		if err := staticPod(ctx, c, name, !isBroken); err != nil {
			return err
		}
	}
	return nil
}

// staticPod creates the mirror Pod of a component on a Node (when missing) and sets it Running, ready or not.
func staticPod(ctx context.Context, component, node string, ready bool) error {
	pod := &corev1.Pod{}
	key := client.ObjectKey{Namespace: metav1.NamespaceSystem, Name: workload.StaticPodName(component, node)}
	if err := workloadClient.Get(ctx, key, pod); err != nil {
		if !apierrors.IsNotFound(err) {
			return err
		}
		pod = &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name,
				Labels:      map[string]string{"component": component, "tier": "control-plane"},
				Annotations: map[string]string{"kubernetes.io/config.mirror": "fake", "kubernetes.io/config.source": "file"}},
			Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: component, Image: "registry.k8s.io/" + component}}},
		}
		if err := workloadClient.Create(ctx, pod); err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
	}
	status := corev1.ConditionTrue
	if !ready {
		status = corev1.ConditionFalse
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady && c.Status == status && pod.Status.Phase == corev1.PodRunning {
			return nil
		}
	}
	now := metav1.Now()
	pod.Status = corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{
		{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: now},
		{Type: corev1.PodInitialized, Status: corev1.ConditionTrue, LastTransitionTime: now},
		{Type: corev1.PodReady, Status: status, LastTransitionTime: now},
	}}
	if !ready {
		pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: component, State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}},
			LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1}}}}
	}
	return workloadClient.Status().Update(ctx, pod)
}
