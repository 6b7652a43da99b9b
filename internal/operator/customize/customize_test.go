package customize

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"

	operatorv1 "github.com/capstan-dev/capstan/api/operator/v1alpha2"
	"github.com/capstan-dev/capstan/internal/manifest"
)

const components = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: capx-controller-manager
  namespace: capx-system
  labels: {cluster.x-k8s.io/provider: infrastructure-x}
spec:
  replicas: 2
  selector: {matchLabels: {app: x}}
  template:
    metadata: {labels: {app: x}}
    spec:
      containers:
      - name: manager
        image: registry.example/x:v1
        args: [--leader-elect, "--feature-gates=A=true,B=false", --v, "2"]
        env: [{name: KEEP, value: k}, {name: REPLACE, value: old}]
        livenessProbe: {httpGet: {path: /healthz, port: 9440}}
      - name: sidecar
        image: registry.example/sidecar:v1
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: aso-controller-manager, namespace: capx-system}
spec:
  selector: {matchLabels: {app: aso}}
  template:
    metadata: {labels: {app: aso}}
    spec:
      containers:
      - name: manager
        image: registry.example/aso:v1
---
apiVersion: v1
kind: Service
metadata: {name: webhook, namespace: capx-system, labels: {tier: web}}
spec: {ports: [{port: 443}]}
`

func objects(t *testing.T) []unstructured.Unstructured {
	t.Helper()
	objs, err := manifest.Parse([]byte(components))
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

func findContainer(g Gomega, objs []unstructured.Unstructured, deployment, name string) map[string]any {
	for _, o := range objs {
		if o.GetKind() != "Deployment" || o.GetName() != deployment {
			continue
		}
		cs, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
		for _, c := range cs {
			if m := c.(map[string]any); m["name"] == name {
				return m
			}
		}
	}
	g.Expect(false).To(BeTrue(), "no container %s in %s", name, deployment)
	return nil
}

func TestDeployments(t *testing.T) {
	tests := []struct {
		name    string
		spec    operatorv1.ProviderSpec
		wantErr string
		check   func(g Gomega, objs []unstructured.Unstructured)
	}{
		{
			name: "manager flags go to the manager container of the controller manager, merged into existing flags",
			spec: operatorv1.ProviderSpec{Manager: &operatorv1.ManagerSpec{
				ControllerManagerConfiguration: operatorv1.ControllerManagerConfiguration{
					SyncPeriod:     &metav1.Duration{Duration: 5 * time.Minute},
					LeaderElection: &operatorv1.LeaderElectionConfiguration{LeaderElect: ptr.To(true), LeaseDuration: metav1.Duration{Duration: 20 * time.Second}},
					Controller:     &operatorv1.ControllerConfigurationSpec{GroupKindConcurrency: map[string]int{"AWSCluster.infrastructure.cluster.x-k8s.io": 5}},
					Health:         operatorv1.ControllerHealth{HealthProbeBindAddress: ":9441", LivenessEndpointName: "live"},
				},
				Verbosity: 4, FeatureGates: map[string]bool{"B": true, "C": true}, AdditionalArgs: map[string]string{"--leader-elect": "false", "extra": "1"},
				MaxConcurrentReconciles: 3,
			}},
			check: func(g Gomega, objs []unstructured.Unstructured) {
				c := findContainer(g, objs, "capx-controller-manager", "manager")
				g.Expect(c["args"]).To(Equal([]any{"--leader-elect=false", "--feature-gates=A=true,B=true,C=true", "--v=4",
					"--awscluster-concurrency=5", "--max-concurrent-reconciles=3", "--health-addr=:9441",
					"--leader-elect-lease-duration=20s", "--sync-period=300s", "--extra=1"}))
				g.Expect(c["livenessProbe"]).To(HaveKeyWithValue("httpGet", HaveKeyWithValue("path", "/live")))
				g.Expect(findContainer(g, objs, "aso-controller-manager", "manager")).NotTo(HaveKey("args"))
			},
		},
		{
			name: "deployment overrides",
			spec: operatorv1.ProviderSpec{Deployment: &operatorv1.DeploymentSpec{
				Replicas: ptr.To(3), NodeSelector: map[string]string{"disk": "ssd"}, Tolerations: &[]corev1.Toleration{},
				Containers: []operatorv1.ContainerSpec{{
					Name: "manager", ImageURL: ptr.To("mirror.example/x:v1"), Args: map[string]string{"foo-concurrency": "9"},
					Env:       []corev1.EnvVar{{Name: "REPLACE", Value: "new"}},
					Resources: &corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}},
				}},
			}},
			check: func(g Gomega, objs []unstructured.Unstructured) {
				replicas, _, _ := unstructured.NestedInt64(objs[0].Object, "spec", "replicas")
				g.Expect(replicas).To(BeEquivalentTo(3))
				sel, _, _ := unstructured.NestedStringMap(objs[0].Object, "spec", "template", "spec", "nodeSelector")
				g.Expect(sel).To(Equal(map[string]string{"disk": "ssd"}))
				c := findContainer(g, objs, "capx-controller-manager", "manager")
				g.Expect(c["image"]).To(Equal("mirror.example/x:v1"))
				g.Expect(c["args"]).To(ContainElement("--foo-concurrency=9"))
				g.Expect(c["env"]).To(Equal([]any{map[string]any{"name": "KEEP", "value": "k"}, map[string]any{"name": "REPLACE", "value": "new"}}))
				g.Expect(c["resources"]).To(Equal(map[string]any{"limits": map[string]any{"cpu": "1"}}))
			},
		},
		{
			name: "additional deployments",
			spec: operatorv1.ProviderSpec{AdditionalDeployments: map[string]operatorv1.AdditionalDeployments{
				"aso-controller-manager": {Manager: &operatorv1.ManagerSpec{FeatureGates: map[string]bool{"X": true}, Verbosity: 1}},
			}},
			check: func(g Gomega, objs []unstructured.Unstructured) {
				g.Expect(findContainer(g, objs, "aso-controller-manager", "manager")["args"]).To(Equal([]any{"--feature-gates=X=true"}))
			},
		},
		{
			name: "paused: every Deployment at zero, the replicas it would have recorded",
			spec: operatorv1.ProviderSpec{Paused: true, Deployment: &operatorv1.DeploymentSpec{Replicas: ptr.To(3)}},
			check: func(g Gomega, objs []unstructured.Unstructured) {
				for i, want := range []string{"3", "1"} {
					replicas, _, _ := unstructured.NestedInt64(objs[i].Object, "spec", "replicas")
					g.Expect(replicas).To(BeZero())
					g.Expect(objs[i].GetAnnotations()).To(HaveKeyWithValue(operatorv1.OriginalReplicasAnnotation, want))
				}
			},
		},
		{
			name:    "a container that does not exist",
			spec:    operatorv1.ProviderSpec{Deployment: &operatorv1.DeploymentSpec{Containers: []operatorv1.ContainerSpec{{Name: "nope"}}}},
			wantErr: `the Deployment capx-controller-manager: spec.deployment.containers names the container "nope", which the Deployment has not (it has manager, sidecar)`,
		},
		{
			name:    "an additional deployment that does not exist",
			spec:    operatorv1.ProviderSpec{AdditionalDeployments: map[string]operatorv1.AdditionalDeployments{"nope": {}}},
			wantErr: `spec.additionalDeployments names the Deployment "nope", which the provider's components do not have`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			objs := objects(t)
			err := Deployments(objs, &tt.spec)
			if tt.wantErr != "" {
				g.Expect(err).To(MatchError(tt.wantErr))
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			tt.check(g, objs)
		})
	}
}

func TestPatches(t *testing.T) {
	tests := []struct {
		name    string
		spec    operatorv1.ProviderSpec
		wantErr string
		check   func(g Gomega, objs []unstructured.Unstructured)
	}{
		{
			name: "manifestPatches: merge patches by kind and name",
			spec: operatorv1.ProviderSpec{ManifestPatches: []string{"apiVersion: v1\nkind: Service\nmetadata: {name: webhook, labels: {patched: \"yes\"}}\n"}},
			check: func(g Gomega, objs []unstructured.Unstructured) {
				g.Expect(objs[2].GetLabels()).To(Equal(map[string]string{"tier": "web", "patched": "yes"}))
				g.Expect(objs[0].GetLabels()).NotTo(HaveKey("patched"))
			},
		},
		{
			name: "patches: a JSON patch on the objects a label selector targets, and a merge patch",
			spec: operatorv1.ProviderSpec{Patches: []*operatorv1.Patch{
				{Target: &operatorv1.PatchSelector{LabelSelector: "tier=web"}, Patch: `[{"op": "replace", "path": "/spec/ports/0/port", "value": 8443}]`},
				{Target: &operatorv1.PatchSelector{Group: "apps", Kind: "Deployment", Name: "aso-controller-manager"}, Patch: "spec: {replicas: 4}"},
			}},
			check: func(g Gomega, objs []unstructured.Unstructured) {
				ports, _, _ := unstructured.NestedSlice(objs[2].Object, "spec", "ports")
				g.Expect(ports[0]).To(HaveKeyWithValue("port", BeEquivalentTo(8443)))
				replicas, _, _ := unstructured.NestedInt64(objs[1].Object, "spec", "replicas")
				g.Expect(replicas).To(BeEquivalentTo(4))
			},
		},
		{
			name:    "a target that matches nothing",
			spec:    operatorv1.ProviderSpec{Patches: []*operatorv1.Patch{{Target: &operatorv1.PatchSelector{Kind: "ConfigMap"}, Patch: "data: {a: b}"}}},
			wantErr: "spec.patches[0]: the target {kind=ConfigMap} matches none of the provider's objects",
		},
		{
			name:    "a manifest patch without a kind",
			spec:    operatorv1.ProviderSpec{ManifestPatches: []string{"metadata: {name: x}"}},
			wantErr: "spec.manifestPatches[0]: a merge patch must be a mapping that names the kind of the objects it patches (and may name their apiVersion, name and namespace)",
		},
		{
			name:    "an invalid JSON patch",
			spec:    operatorv1.ProviderSpec{Patches: []*operatorv1.Patch{{Patch: `[{"op": "replace", "path": "/nope/x", "value": 1}]`}}},
			wantErr: "spec.patches[0]: patching Deployment capx-controller-manager: ",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			objs := objects(t)
			err := Patches(objs, &tt.spec)
			if tt.wantErr != "" {
				g.Expect(err).To(MatchError(HavePrefix(tt.wantErr)))
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			tt.check(g, objs)
		})
	}
}

func TestSetArg(t *testing.T) {
	tests := []struct {
		args        []string
		name, value string
		want        []string
	}{
		{[]string{"--a=1"}, "a", "2", []string{"--a=2"}},
		{[]string{"--a", "1", "--b"}, "--a", "2", []string{"--a=2", "--b"}},
		{[]string{"--a", "--b"}, "--a", "false", []string{"--a=false", "--b"}},
		{nil, "c", "3", []string{"--c=3"}},
	}
	for _, tt := range tests {
		NewWithT(t).Expect(SetArg(tt.args, tt.name, tt.value)).To(Equal(tt.want))
	}
}

func TestReplaceImageParts(t *testing.T) {
	tests := []struct {
		image string
		parts operatorv1.ImageMeta
		want  string
	}{
		{"registry.k8s.io/cluster-api-aws/cluster-api-aws-controller:v2.8.0", operatorv1.ImageMeta{Tag: "v2.8.1"}, "registry.k8s.io/cluster-api-aws/cluster-api-aws-controller:v2.8.1"},
		{"registry.k8s.io/cluster-api-aws/cluster-api-aws-controller:v2.8.0", operatorv1.ImageMeta{Repository: "mirror.internal/capi/"}, "mirror.internal/capi/cluster-api-aws-controller:v2.8.0"},
		{"registry.k8s.io/cluster-api-aws/cluster-api-aws-controller:v2.8.0", operatorv1.ImageMeta{Name: "capa-manager"}, "registry.k8s.io/cluster-api-aws/capa-manager:v2.8.0"},
		{"localhost:5000/capstan:v0.1.0@sha256:abc", operatorv1.ImageMeta{Repository: "mirror:5000/x"}, "mirror:5000/x/capstan:v0.1.0@sha256:abc"},
		{"localhost:5000/capstan:v0.1.0@sha256:abc", operatorv1.ImageMeta{Tag: "v0.2.0"}, "localhost:5000/capstan:v0.2.0"},
		{"capstan", operatorv1.ImageMeta{Repository: "ghcr.io/capstan-dev", Tag: "v1"}, "ghcr.io/capstan-dev/capstan:v1"},
	}
	for _, tt := range tests {
		t.Run(tt.image+" "+tt.want, func(t *testing.T) {
			NewWithT(t).Expect(ReplaceImageParts(tt.image, tt.parts)).To(Equal(tt.want))
		})
	}
}

func TestCapstanImage(t *testing.T) {
	g := NewWithT(t)
	for _, image := range []string{"ghcr.io/capstan-dev/capstan:v0.1.0", "mirror.internal:5000/capstan@sha256:abc", "capstan"} {
		g.Expect(CapstanImage(image)).To(BeTrue(), image)
	}
	for _, image := range []string{"registry.k8s.io/cluster-api/cluster-api-controller:v1.10.0", "ghcr.io/capstan-dev/capstan-ui:v1", "capstan.io/manager:v1"} {
		g.Expect(CapstanImage(image)).To(BeFalse(), image)
	}
}
