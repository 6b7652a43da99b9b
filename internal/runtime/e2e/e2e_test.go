// Package e2e runs the Runtime SDK end to end in the embedded management cluster with the real binaries:
// the sample Extension (`capstan extension-sample`) deployed as a Deployment behind a Service from
// examples/extension-sample, discovered by the core; the variables of a ClusterClass's external patch
// discovered and BeforeClusterCreate holding a Cluster, through the Service; BeforeClusterDelete holding a
// Cluster's deletion until the Extension lets it go; a broken ExtensionConfig reported while the core goes
// on. TestTopologyHooks runs the topology hooks end to end against a kube-apiserver, with the sample on
// loopback.
package e2e

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/yaml"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	runtimev1 "github.com/capstan-dev/capstan/api/runtime/v1alpha1"
	"github.com/capstan-dev/capstan/internal/conditions"
	"github.com/capstan-dev/capstan/internal/contract"
	"github.com/capstan-dev/capstan/internal/core"
	"github.com/capstan-dev/capstan/internal/embedded"
	"github.com/capstan-dev/capstan/internal/manifest"
	"github.com/capstan-dev/capstan/internal/test/builder"
	"github.com/capstan-dev/capstan/pkg/extension/sample"
)

const timeout = 3 * time.Minute

func TestMain(m *testing.M) {
	// E2E_LOG=1 shows the controllers' log.
	if os.Getenv("E2E_LOG") != "" {
		ctrl.SetLogger(zap.New(zap.UseDevMode(true)))
	} else {
		ctrl.SetLogger(logr.Discard())
	}
	os.Exit(m.Run())
}

func run(t *testing.T, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\nstdout:\n%s\nstderr:\n%s", filepath.Base(name), strings.Join(args, " "), err, out.String(), errOut.String())
	}
	return out.String()
}

func TestSampleExtensionInTheEmbeddedCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("runs capstan up, clusterctl init and the sample Extension")
	}
	g := NewWithT(t)
	ctx := context.Background()
	bin := t.TempDir()
	build := exec.Command("go", "build", "-o", bin+"/", "github.com/capstan-dev/capstan/cmd/capstan", "github.com/capstan-dev/capstan/cmd/clusterctl")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the binaries: %v\n%s", err, out)
	}
	capstan, clusterctl := filepath.Join(bin, "capstan"), filepath.Join(bin, "clusterctl")
	state := embedded.State{Dir: filepath.Join(t.TempDir(), "state")}
	run(t, capstan, "up", "--name", "runtime-e2e", "--state-dir", state.Dir, "--detach", "--etcd-unsafe-no-fsync")
	t.Cleanup(func() { _ = exec.Command(capstan, "down", "--name", "runtime-e2e", "--state-dir", state.Dir).Run() })
	t.Setenv("KUBECONFIG", state.Kubeconfig())
	run(t, clusterctl, "init", "--config", state.ClusterctlConfig(), "--wait-providers")

	cfg, err := clientcmd.BuildConfigFromFlags("", state.Kubeconfig())
	g.Expect(err).NotTo(HaveOccurred())
	scheme, err := core.NewScheme()
	g.Expect(err).NotTo(HaveOccurred())
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	g.Expect(err).NotTo(HaveOccurred())

	// The certificate Secret, then the Deployment, Service and ExtensionConfig of the example.
	secret := &corev1.Secret{}
	g.Expect(yaml.Unmarshal([]byte(run(t, capstan, "extension-sample", "certificate", "--namespace", "default", "--service", "extension-sample")), secret)).To(Succeed())
	g.Expect(c.Create(ctx, secret)).To(Succeed())
	data, err := os.ReadFile("../../../examples/extension-sample/extension.yaml")
	g.Expect(err).NotTo(HaveOccurred())
	objs, err := manifest.Parse(data)
	g.Expect(err).NotTo(HaveOccurred())
	for i := range objs {
		g.Expect(c.Create(ctx, &objs[i])).To(Succeed(), "creating %s %s", objs[i].GetKind(), objs[i].GetName())
	}
	g.Eventually(func(g Gomega) {
		ec := &runtimev1.ExtensionConfig{}
		g.Expect(c.Get(ctx, client.ObjectKey{Name: "extension-sample"}, ec)).To(Succeed())
		g.Expect(ec.Spec.ClientConfig.CABundle).To(Equal(secret.Data["ca.crt"]))
		g.Expect(conditions.IsV1Beta2True(ec, runtimev1.ExtensionConfigDiscoveredV1Beta2Condition)).To(BeTrue())
		g.Expect(ec.Status.Handlers).To(HaveLen(10))
	}, timeout, time.Second).Should(Succeed())

	// A broken Extension is reported; the core goes on with the others.
	g.Expect(c.Create(ctx, &runtimev1.ExtensionConfig{ObjectMeta: metav1.ObjectMeta{Name: "broken"},
		Spec: runtimev1.ExtensionConfigSpec{ClientConfig: runtimev1.ClientConfig{URL: ptr.To("https://127.0.0.1:1")}}})).To(Succeed())
	g.Eventually(func(g Gomega) {
		ec := &runtimev1.ExtensionConfig{}
		g.Expect(c.Get(ctx, client.ObjectKey{Name: "broken"}, ec)).To(Succeed())
		d := conditions.GetV1Beta2(ec, runtimev1.ExtensionConfigDiscoveredV1Beta2Condition)
		g.Expect(d).NotTo(BeNil())
		g.Expect(d.Status).To(Equal(metav1.ConditionFalse))
		g.Expect(d.Message).To(ContainSubstring("connection refused"))
	}, timeout, time.Second).Should(Succeed())

	// Through the Service: the sample's DiscoverVariables defines the variable of a ClusterClass's external
	// patch, and its BeforeClusterCreate holds a Cluster of that class (nothing is created).
	// No infrastructure provider is installed: the test provider's generic kinds stand in (nothing is
	// created from them while the Cluster is held).
	for _, kind := range []string{builder.InfraClusterTemplateKind, builder.InfraMachineTemplateKind} {
		g.Expect(c.Create(ctx, builder.GenericCRD(builder.InfrastructureGroup, "v1beta1", kind, contract.V1Beta1))).To(Succeed())
	}
	for _, tmpl := range []string{
		`{"apiVersion":"infrastructure.cluster.x-k8s.io/v1beta1","kind":"GenericInfrastructureClusterTemplate","metadata":{"name":"sample","namespace":"default"},"spec":{"template":{"spec":{}}}}`,
		`{"apiVersion":"infrastructure.cluster.x-k8s.io/v1beta1","kind":"GenericInfrastructureMachineTemplate","metadata":{"name":"sample","namespace":"default"},"spec":{"template":{"spec":{}}}}`,
		`{"apiVersion":"controlplane.cluster.x-k8s.io/v1beta1","kind":"KubeadmControlPlaneTemplate","metadata":{"name":"sample","namespace":"default"},"spec":{"template":{"spec":{"kubeadmConfigSpec":{}}}}}`,
	} {
		u := &unstructured.Unstructured{}
		g.Expect(u.UnmarshalJSON([]byte(tmpl))).To(Succeed())
		g.Eventually(func() error { return c.Create(ctx, u.DeepCopy()) }, timeout, time.Second).Should(Succeed(), "creating %s", u.GetKind())
	}
	ref := func(apiVersion, kind string) *corev1.ObjectReference {
		return &corev1.ObjectReference{APIVersion: apiVersion, Kind: kind, Name: "sample", Namespace: "default"}
	}
	g.Expect(c.Create(ctx, &clusterv1.ClusterClass{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "sample"},
		Spec: clusterv1.ClusterClassSpec{
			Infrastructure: clusterv1.LocalObjectTemplate{Ref: ref("infrastructure.cluster.x-k8s.io/v1beta1", builder.InfraClusterTemplateKind)},
			ControlPlane: clusterv1.ControlPlaneClass{
				LocalObjectTemplate:   clusterv1.LocalObjectTemplate{Ref: ref("controlplane.cluster.x-k8s.io/v1beta1", "KubeadmControlPlaneTemplate")},
				MachineInfrastructure: &clusterv1.LocalObjectTemplate{Ref: ref("infrastructure.cluster.x-k8s.io/v1beta1", builder.InfraMachineTemplateKind)},
			},
			Patches: []clusterv1.ClusterClassPatch{{Name: "sample-patch", External: &clusterv1.ExternalPatchDefinition{
				GenerateExtension: ptr.To("generate-patches.extension-sample"), DiscoverVariablesExtension: ptr.To("discover-variables.extension-sample"),
			}}},
		},
	})).To(Succeed())
	g.Eventually(func(g Gomega) {
		class := &clusterv1.ClusterClass{}
		g.Expect(c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "sample"}, class)).To(Succeed())
		g.Expect(class.Status.Variables).To(ContainElement(And(HaveField("Name", sample.BannerVariable),
			HaveField("Definitions", ConsistOf(HaveField("From", "sample-patch"))))))
	}, timeout, time.Second).Should(Succeed())
	creating := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "creating",
		Annotations: map[string]string{sample.HoldCreateAnnotation: "5"}},
		Spec: clusterv1.ClusterSpec{Topology: &clusterv1.Topology{Class: "sample", Version: "v1.31.0",
			Variables: []clusterv1.ClusterVariable{{Name: sample.BannerVariable, Value: apiextensionsv1.JSON{Raw: []byte(`"hi"`)}}}}}}
	g.Expect(c.Create(ctx, creating)).To(Succeed())
	g.Eventually(func(g Gomega) {
		got := &clusterv1.Cluster{}
		g.Expect(c.Get(ctx, client.ObjectKeyFromObject(creating), got)).To(Succeed())
		cond := conditions.GetV1Beta2(got, clusterv1.ClusterTopologyReconciledV1Beta2Condition)
		g.Expect(cond).NotTo(BeNil())
		g.Expect(cond.Reason).To(Equal("ClusterCreating"))
		g.Expect(cond.Message).To(Equal("Following hooks are blocking Cluster topology creation: BeforeClusterCreate: Cluster has the " + sample.HoldCreateAnnotation + " annotation"))
		g.Expect(got.Spec.ControlPlaneRef).To(BeNil())
	}, timeout, time.Second).Should(Succeed())
	g.Expect(c.Delete(ctx, creating)).To(Succeed())

	// BeforeClusterDelete holds the deletion of a Cluster with a topology while it has the sample's
	// annotation; a Cluster without topology is deleted meanwhile.
	held := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "held",
		Annotations: map[string]string{sample.HoldDeleteAnnotation: "2"}},
		Spec: clusterv1.ClusterSpec{Topology: &clusterv1.Topology{Class: "quick-start", Version: "v1.31.0"}}}
	plain := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "plain"}}
	g.Expect(c.Create(ctx, held)).To(Succeed())
	g.Expect(c.Create(ctx, plain)).To(Succeed())
	g.Eventually(func(g Gomega) {
		for _, cl := range []*clusterv1.Cluster{held, plain} {
			got := &clusterv1.Cluster{}
			g.Expect(c.Get(ctx, client.ObjectKeyFromObject(cl), got)).To(Succeed())
			g.Expect(got.Finalizers).To(ContainElement(clusterv1.ClusterFinalizer))
		}
	}, timeout, time.Second).Should(Succeed())
	g.Expect(c.Delete(ctx, held)).To(Succeed())
	g.Expect(c.Delete(ctx, plain)).To(Succeed())
	g.Eventually(func(g Gomega) {
		got := &clusterv1.Cluster{}
		g.Expect(c.Get(ctx, client.ObjectKeyFromObject(held), got)).To(Succeed())
		d := conditions.GetV1Beta2(got, clusterv1.ClusterDeletingV1Beta2Condition)
		g.Expect(d).NotTo(BeNil())
		g.Expect(d.Reason).To(Equal(clusterv1.ClusterDeletingWaitingForBeforeDeleteHookV1Beta2Reason))
		g.Expect(d.Message).To(Equal("Waiting for BeforeClusterDelete hook: Cluster has the " + sample.HoldDeleteAnnotation + " annotation"))
		g.Expect(apierrors.IsNotFound(c.Get(ctx, client.ObjectKeyFromObject(plain), &clusterv1.Cluster{}))).To(BeTrue())
	}, timeout, time.Second).Should(Succeed())

	g.Eventually(func() error {
		got := &clusterv1.Cluster{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(held), got); err != nil {
			return err
		}
		delete(got.Annotations, sample.HoldDeleteAnnotation)
		return c.Update(ctx, got)
	}, timeout, time.Second).Should(Succeed())
	g.Eventually(func() bool {
		return apierrors.IsNotFound(c.Get(ctx, client.ObjectKeyFromObject(held), &clusterv1.Cluster{}))
	}, timeout, time.Second).Should(BeTrue())
}
