package describe

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	infrav1 "github.com/capstan-dev/capstan/api/infrastructure/local/v1alpha1"
	clusterctlcli "github.com/capstan-dev/capstan/internal/cli/clusterctl"
	"github.com/capstan-dev/capstan/internal/cli/iostreams"
	clusterctlclient "github.com/capstan-dev/capstan/internal/clusterctl/client"
	"github.com/capstan-dev/capstan/internal/clusterctl/cluster"
	"github.com/capstan-dev/capstan/internal/test/envtest"
	"github.com/capstan-dev/capstan/internal/test/golden"
)

var env *envtest.Environment

func TestMain(m *testing.M) {
	os.Exit(envtest.Run(m, envtest.Options{
		SchemeBuilders: []func(*runtime.Scheme) error{infrav1.AddToScheme},
		CRDs:           []*apiextensionsv1.CustomResourceDefinition{clusterResourceSetBindingCRD()},
	}, func(e *envtest.Environment) { env = e }))
}

// clusterResourceSetBindingCRD is a schemaless CRD of ClusterResourceSetBindings (capstan has no
// ClusterResourceSet controller yet), so that --show-resourcesets has something to show.
func clusterResourceSetBindingCRD() *apiextensionsv1.CustomResourceDefinition {
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "clusterresourcesetbindings.addons.cluster.x-k8s.io"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "addons.cluster.x-k8s.io",
			Names: apiextensionsv1.CustomResourceDefinitionNames{Kind: "ClusterResourceSetBinding", ListKind: "ClusterResourceSetBindingList",
				Plural: "clusterresourcesetbindings", Singular: "clusterresourcesetbinding"},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1beta1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", XPreserveUnknownFields: ptr.To(true)}},
			}},
		},
	}
}

// t0 is when the conditions of the test objects changed; now is when the tests describe them.
var (
	t0  = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	now = t0.Add(10 * time.Minute)
)

func at(d time.Duration) metav1.Time { return metav1.NewTime(t0.Add(d)) }

func cond(t string, status metav1.ConditionStatus, reason, message string, d time.Duration) metav1.Condition {
	return metav1.Condition{Type: t, Status: status, Reason: reason, Message: message, LastTransitionTime: at(d)}
}

func v1cond(t string, status corev1.ConditionStatus, d time.Duration) clusterv1.Condition {
	return clusterv1.Condition{Type: clusterv1.ConditionType(t), Status: status, LastTransitionTime: at(d)}
}

// createProvisioned creates, in namespace ns, the objects of a Cluster demo provisioned by capstan's
// controllers with the local provider, with the status they write: a LocalCluster, no control plane
// object, and a MachineDeployment demo-md-0 with a MachineSet and 2 Running Machines and their
// LocalMachines.
func createProvisioned(t *testing.T, ns string) {
	t.Helper()
	g := NewWithT(t)
	ctx := context.Background()
	create := func(obj client.Object, status func()) {
		t.Helper()
		g.Expect(env.Client.Create(ctx, obj)).To(Succeed(), "creating %T %s", obj, obj.GetName())
		if status != nil {
			status()
			g.Expect(env.Client.Status().Update(ctx, obj)).To(Succeed(), "writing the status of %T %s", obj, obj.GetName())
		}
	}

	lc := &infrav1.LocalCluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "demo", Labels: map[string]string{clusterv1.ClusterNameLabel: "demo"}}}
	create(lc, func() {
		lc.Status.Ready = true
		lc.Status.Initialization = &infrav1.LocalClusterInitializationStatus{Provisioned: ptr.To(true)}
		lc.Status.Conditions = clusterv1.Conditions{v1cond("Ready", corev1.ConditionTrue, time.Minute), v1cond("ProcessesRunning", corev1.ConditionTrue, time.Minute)}
		lc.Status.V1Beta2 = &infrav1.LocalClusterV1Beta2Status{Conditions: []metav1.Condition{
			cond("Ready", metav1.ConditionTrue, "Ready", "", time.Minute),
			cond("ProcessesRunning", metav1.ConditionTrue, "ProcessesRunning", "", time.Minute),
			cond("Paused", metav1.ConditionFalse, "NotPaused", "", 0),
		}}
	})

	c := &clusterv1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "demo"},
		Spec: clusterv1.ClusterSpec{InfrastructureRef: &corev1.ObjectReference{
			APIVersion: infrav1.GroupVersion.String(), Kind: "LocalCluster", Name: "demo", Namespace: ns}},
	}
	create(c, func() {
		c.Status.Phase = string(clusterv1.ClusterPhaseProvisioned)
		c.Status.InfrastructureReady = true
		c.Status.Conditions = clusterv1.Conditions{v1cond("Ready", corev1.ConditionTrue, 2*time.Minute), v1cond("InfrastructureReady", corev1.ConditionTrue, time.Minute)}
		c.Status.V1Beta2 = &clusterv1.ClusterV1Beta2Status{
			Conditions: []metav1.Condition{
				cond("Available", metav1.ConditionFalse, "NotAvailable", "* ControlPlaneAvailable: DoesNotExist", 2*time.Minute),
				cond("InfrastructureReady", metav1.ConditionTrue, "Ready", "", time.Minute),
				cond("ControlPlaneAvailable", metav1.ConditionFalse, "DoesNotExist", "", 0),
				cond("ControlPlaneInitialized", metav1.ConditionFalse, "NotInitialized", "Waiting for the first control plane machine to have status.nodeRef set", 0),
				cond("WorkersAvailable", metav1.ConditionTrue, "Available", "", 4*time.Minute),
				cond("Deleting", metav1.ConditionFalse, "NotDeleting", "", 0),
				cond("Paused", metav1.ConditionFalse, "NotPaused", "", 0),
			},
			ControlPlane: &clusterv1.ClusterControlPlaneStatus{DesiredReplicas: ptr.To[int32](0), Replicas: ptr.To[int32](0),
				UpToDateReplicas: ptr.To[int32](0), ReadyReplicas: ptr.To[int32](0), AvailableReplicas: ptr.To[int32](0)},
			Workers: &clusterv1.WorkersStatus{DesiredReplicas: ptr.To[int32](2), Replicas: ptr.To[int32](2),
				UpToDateReplicas: ptr.To[int32](2), ReadyReplicas: ptr.To[int32](2), AvailableReplicas: ptr.To[int32](2)},
		}
	})

	template := clusterv1.MachineSpec{
		ClusterName: "demo", Version: ptr.To("v1.37.1"),
		Bootstrap:         clusterv1.Bootstrap{DataSecretName: ptr.To("demo-bootstrap")},
		InfrastructureRef: corev1.ObjectReference{APIVersion: infrav1.GroupVersion.String(), Kind: "LocalMachineTemplate", Name: "demo"},
	}
	selector := map[string]string{clusterv1.ClusterNameLabel: "demo", clusterv1.MachineDeploymentNameLabel: "demo-md-0"}
	md := &clusterv1.MachineDeployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "demo-md-0", Labels: map[string]string{clusterv1.ClusterNameLabel: "demo"}},
		Spec: clusterv1.MachineDeploymentSpec{
			ClusterName: "demo", Replicas: ptr.To[int32](2),
			Selector: metav1.LabelSelector{MatchLabels: selector},
			Template: clusterv1.MachineTemplateSpec{ObjectMeta: clusterv1.ObjectMeta{Labels: selector}, Spec: template},
		},
	}
	create(md, func() {
		md.Status = clusterv1.MachineDeploymentStatus{
			Replicas: 2, UpdatedReplicas: 2, ReadyReplicas: 2, AvailableReplicas: 2, Phase: "Running",
			Conditions: clusterv1.Conditions{v1cond("Ready", corev1.ConditionTrue, 3*time.Minute), v1cond("Available", corev1.ConditionTrue, 3*time.Minute)},
			V1Beta2: &clusterv1.MachineDeploymentV1Beta2Status{
				Conditions: []metav1.Condition{
					cond("Available", metav1.ConditionTrue, "Available", "", 4*time.Minute),
					cond("MachinesReady", metav1.ConditionTrue, "Ready", "", 4*time.Minute),
					cond("MachinesUpToDate", metav1.ConditionTrue, "UpToDate", "", time.Minute),
					cond("RollingOut", metav1.ConditionFalse, "NotRollingOut", "", time.Minute),
					cond("ScalingUp", metav1.ConditionFalse, "NotScalingUp", "", 4*time.Minute),
					cond("ScalingDown", metav1.ConditionFalse, "NotScalingDown", "", time.Minute),
					cond("Deleting", metav1.ConditionFalse, "NotDeleting", "", time.Minute),
					cond("Paused", metav1.ConditionFalse, "NotPaused", "", time.Minute),
				},
				ReadyReplicas: ptr.To[int32](2), AvailableReplicas: ptr.To[int32](2), UpToDateReplicas: ptr.To[int32](2),
			},
		}
	})

	msLabels := map[string]string{clusterv1.ClusterNameLabel: "demo", clusterv1.MachineDeploymentNameLabel: "demo-md-0", clusterv1.MachineDeploymentUniqueLabel: "7f9c4"}
	ms := &clusterv1.MachineSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "demo-md-0-7f9c4", Labels: msLabels,
			OwnerReferences: []metav1.OwnerReference{ownerRef("MachineDeployment", md)}},
		Spec: clusterv1.MachineSetSpec{
			ClusterName: "demo", Replicas: ptr.To[int32](2),
			Selector: metav1.LabelSelector{MatchLabels: msLabels},
			Template: clusterv1.MachineTemplateSpec{ObjectMeta: clusterv1.ObjectMeta{Labels: msLabels}, Spec: template},
		},
	}
	create(ms, func() {
		ms.Status = clusterv1.MachineSetStatus{
			Replicas: 2, FullyLabeledReplicas: 2, ReadyReplicas: 2, AvailableReplicas: 2,
			V1Beta2: &clusterv1.MachineSetV1Beta2Status{
				Conditions: []metav1.Condition{
					cond("MachinesReady", metav1.ConditionTrue, "Ready", "", 4*time.Minute),
					cond("MachinesUpToDate", metav1.ConditionTrue, "UpToDate", "", time.Minute),
					cond("ScalingUp", metav1.ConditionFalse, "NotScalingUp", "", 4*time.Minute),
					cond("ScalingDown", metav1.ConditionFalse, "NotScalingDown", "", time.Minute),
				},
				ReadyReplicas: ptr.To[int32](2), AvailableReplicas: ptr.To[int32](2), UpToDateReplicas: ptr.To[int32](2),
			},
		}
	})

	for i, suffix := range []string{"k8mzp", "x2v9q"} {
		name := "demo-md-0-7f9c4-" + suffix
		readyAt := time.Duration(5+i) * time.Minute
		lm := &infrav1.LocalMachine{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{clusterv1.ClusterNameLabel: "demo"}},
			Spec: infrav1.LocalMachineSpec{ProviderID: ptr.To(infrav1.ProviderIDPrefix + ns + "/" + name)}}
		create(lm, func() {
			lm.Status.Ready = true
			lm.Status.Conditions = clusterv1.Conditions{v1cond("Ready", corev1.ConditionTrue, readyAt), v1cond("NodeRegistered", corev1.ConditionTrue, readyAt)}
			lm.Status.V1Beta2 = &infrav1.LocalMachineV1Beta2Status{Conditions: []metav1.Condition{
				cond("Ready", metav1.ConditionTrue, "Ready", "", readyAt),
				cond("NodeRegistered", metav1.ConditionTrue, "NodeRegistered", "", readyAt),
			}}
		})
		spec := template
		spec.InfrastructureRef = corev1.ObjectReference{APIVersion: infrav1.GroupVersion.String(), Kind: "LocalMachine", Name: name}
		spec.ProviderID = lm.Spec.ProviderID
		m := &clusterv1.Machine{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: msLabels,
				OwnerReferences: []metav1.OwnerReference{ownerRef("MachineSet", ms)}},
			Spec: spec,
		}
		create(m, func() {
			m.Status.Phase = string(clusterv1.MachinePhaseRunning)
			m.Status.NodeRef = &corev1.ObjectReference{Kind: "Node", Name: name}
			m.Status.Conditions = clusterv1.Conditions{v1cond("Ready", corev1.ConditionTrue, readyAt)}
			m.Status.V1Beta2 = &clusterv1.MachineV1Beta2Status{Conditions: []metav1.Condition{
				cond("Available", metav1.ConditionTrue, "Available", "", readyAt),
				cond("Ready", metav1.ConditionTrue, "Ready", "", readyAt),
				cond("UpToDate", metav1.ConditionTrue, "UpToDate", "", time.Minute),
				cond("BootstrapConfigReady", metav1.ConditionTrue, "DataSecretProvided", "", time.Minute),
				cond("InfrastructureReady", metav1.ConditionTrue, "Ready", "", readyAt),
				cond("NodeHealthy", metav1.ConditionTrue, "NodeHealthy", "", readyAt),
				cond("NodeReady", metav1.ConditionTrue, "KubeletReady", "* Node.Ready: Simulated node by capstan infra-local is ready", readyAt),
				cond("Deleting", metav1.ConditionFalse, "NotDeleting", "", time.Minute),
				cond("Paused", metav1.ConditionFalse, "NotPaused", "", time.Minute),
			}}
		})
	}
}

// createBinding binds ClusterResourceSets to the Cluster demo of namespace ns.
func createBinding(t *testing.T, ns string, sets ...string) {
	t.Helper()
	var bindings []any
	for _, s := range sets {
		bindings = append(bindings, map[string]any{"clusterResourceSetName": s})
	}
	u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"clusterName": "demo", "bindings": bindings}}}
	u.SetAPIVersion("addons.cluster.x-k8s.io/v1beta1")
	u.SetKind("ClusterResourceSetBinding")
	u.SetNamespace(ns)
	u.SetName("demo")
	if err := env.Client.Create(context.Background(), u); err != nil {
		t.Fatal(err)
	}
}

func ownerRef(kind string, owner client.Object) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: clusterv1.GroupVersion.String(), Kind: kind, Name: owner.GetName(), UID: owner.GetUID(),
		Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}
}

type result struct {
	stdout, stderr string
	err            error
}

// run runs `clusterctl describe args...` against the test API server through a kubeconfig file, as the
// binary does, with env as the environment.
func run(t *testing.T, vars map[string]string, args ...string) result {
	t.Helper()
	deps := &clusterctlcli.Deps{
		LookupEnv: func(k string) (string, bool) { v, ok := vars[k]; return v, ok },
		ManagementCluster: func(k cluster.Kubeconfig) clusterctlclient.ManagementCluster {
			return cluster.New(k)
		},
	}
	var stdout, stderr bytes.Buffer
	cmd := newCommand(iostreams.Streams{In: strings.NewReader(""), Out: &stdout, ErrOut: &stderr}, deps, func() time.Time { return now })
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	cmd.SetOut(&stdout)
	cmd.SetErr(&stderr)
	cmd.SetArgs(args)
	err := cmd.ExecuteContext(context.Background())
	return result{stdout: stdout.String(), stderr: stderr.String(), err: err}
}

func TestDescribeGolden(t *testing.T) {
	ns := env.NewNamespace(t)
	createProvisioned(t, ns)
	createBinding(t, ns, "cni", "csi")
	kubeconfig := env.KubeconfigFile(t, "")
	tests := []struct {
		golden string
		args   []string
		stderr string
	}{
		{golden: "provisioned.txt"},
		{golden: "provisioned-v1beta1.txt", args: []string{"--v1beta2=false"}, stderr: "Flag --v1beta2 has been deprecated"},
		{golden: "provisioned-no-grouping-echo.txt", args: []string{"--grouping=false", "--echo"}},
		{golden: "provisioned-disable-grouping.txt", args: []string{"--disable-grouping"}, stderr: "Flag --disable-grouping has been deprecated, use --grouping=false instead"},
		{golden: "provisioned-machinesets-templates.txt", args: []string{"--show-machinesets", "--show-templates", "--show-resourcesets"}},
		{golden: "provisioned-conditions.txt", args: []string{"--show-conditions", "Cluster,MachineDeployment+,localcluster"}},
	}
	for _, tt := range tests {
		t.Run(tt.golden, func(t *testing.T) {
			g := NewWithT(t)
			res := run(t, nil, append([]string{"cluster", "demo", "-n", ns, "--kubeconfig", kubeconfig}, tt.args...)...)
			g.Expect(res.err).NotTo(HaveOccurred())
			if tt.stderr != "" {
				g.Expect(res.stderr).To(ContainSubstring(tt.stderr))
			} else {
				g.Expect(res.stderr).To(BeEmpty())
			}
			golden.Assert(t, tt.golden, []byte(res.stdout))
		})
	}
}

func TestDescribeNamespaceOfTheContext(t *testing.T) {
	g := NewWithT(t)
	ns := env.NewNamespace(t)
	createProvisioned(t, ns)
	res := run(t, nil, "cluster", "demo", "--kubeconfig", env.KubeconfigFile(t, ns))
	g.Expect(res.err).NotTo(HaveOccurred())
	g.Expect(res.stdout).To(HavePrefix("NAME "))
	g.Expect(res.stdout).To(ContainSubstring("└─2 Machines..."))
}

func TestDescribeColor(t *testing.T) {
	ns := env.NewNamespace(t)
	createProvisioned(t, ns)
	kubeconfig := env.KubeconfigFile(t, ns)
	tests := []struct {
		name  string
		vars  map[string]string
		args  []string
		color bool
	}{
		{name: "not a terminal: no colors", color: false},
		{name: "--color", args: []string{"--color"}, color: true},
		{name: "-c", args: []string{"-c"}, color: true},
		{name: "NO_COLOR wins over --color", vars: map[string]string{"NO_COLOR": "1"}, args: []string{"--color"}, color: false},
		{name: "an empty NO_COLOR is not set", vars: map[string]string{"NO_COLOR": ""}, args: []string{"--color"}, color: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			res := run(t, tt.vars, append([]string{"cluster", "demo", "--kubeconfig", kubeconfig}, tt.args...)...)
			g.Expect(res.err).NotTo(HaveOccurred())
			g.Expect(strings.Contains(res.stdout, "\x1b[")).To(Equal(tt.color))
		})
	}
}

func TestDescribeErrors(t *testing.T) {
	ns := env.NewNamespace(t)
	kubeconfig := env.KubeconfigFile(t, ns)
	tests := []struct {
		name string
		args []string
		want string
	}{
		{name: "no name", args: []string{"cluster"}, want: "please specify a cluster name: clusterctl describe cluster NAME"},
		{name: "two names", args: []string{"cluster", "a", "b"}, want: "please specify a cluster name"},
		{name: "a cluster that does not exist", args: []string{"cluster", "nope", "--kubeconfig", kubeconfig},
			want: fmt.Sprintf("no Cluster nope in namespace %s: check the name, or give the Cluster's namespace with --namespace", ns)},
		{name: "an invalid --show-conditions", args: []string{"cluster", "demo", "--kubeconfig", kubeconfig, "--show-conditions", "a/b/c"},
			want: `--show-conditions: "a/b/c" is not a kind, kind/name or all`},
		{name: "a kubeconfig that does not exist", args: []string{"cluster", "demo", "--kubeconfig", filepath.Join(t.TempDir(), "nope")},
			want: "nope"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			res := run(t, nil, tt.args...)
			g.Expect(res.err).To(MatchError(ContainSubstring(tt.want)))
			g.Expect(res.stdout).To(BeEmpty())
		})
	}
}

func TestDescribeMissingProviderObjects(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	createProvisioned(t, ns)
	// The LocalCluster and a LocalMachine are gone (deleted, or not created yet): the tree shows the rest.
	g.Expect(env.Client.Delete(ctx, &infrav1.LocalCluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "demo"}})).To(Succeed())
	g.Expect(env.Client.Delete(ctx, &infrav1.LocalMachine{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "demo-md-0-7f9c4-k8mzp"}})).To(Succeed())
	res := run(t, nil, "cluster", "demo", "--kubeconfig", env.KubeconfigFile(t, ns), "--grouping=false", "--echo")
	g.Expect(res.err).NotTo(HaveOccurred())
	g.Expect(res.stdout).NotTo(ContainSubstring("ClusterInfrastructure"))
	g.Expect(res.stdout).NotTo(ContainSubstring("LocalMachine/demo-md-0-7f9c4-k8mzp"))
	g.Expect(res.stdout).To(ContainSubstring("LocalMachine/demo-md-0-7f9c4-x2v9q"))
}

func TestDescribeCompletion(t *testing.T) {
	g := NewWithT(t)
	ns := env.NewNamespace(t)
	createProvisioned(t, ns)
	res := run(t, nil, "__complete", "cluster", "--kubeconfig", env.KubeconfigFile(t, ns), "")
	g.Expect(res.err).NotTo(HaveOccurred())
	g.Expect(res.stdout).To(Equal("demo\n:4\n"))
}
