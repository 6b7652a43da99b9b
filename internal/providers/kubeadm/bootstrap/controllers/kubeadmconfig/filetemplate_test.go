package kubeadmconfig

import (
	"context"
	"errors"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bootstrapv1 "github.com/capstan-dev/capstan/api/bootstrap/kubeadm/v1beta1"
	controlplanev1 "github.com/capstan-dev/capstan/api/controlplane/kubeadm/v1beta1"
	"github.com/capstan-dev/capstan/internal/conditions"
)

func TestRenderFileTemplates(t *testing.T) {
	data, err := fileTemplateData("1.35")
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	tests := []struct {
		name    string
		data    map[string]any
		file    bootstrapv1.File
		want    string
		wantErr string
	}{
		{name: "the control plane's version, as v-prefixed semver", data: data,
			file: bootstrapv1.File{Path: "/v", Content: "version={{ .controlPlane.version }}", ContentFormat: bootstrapv1.FileContentFormatTemplate},
			want: "version=v1.35.0"},
		{name: "without a control plane version there is no .controlPlane", data: map[string]any{},
			file: bootstrapv1.File{Path: "/v", Content: "{{ if .controlPlane }}{{ .controlPlane.version }}{{ else }}none{{ end }}", ContentFormat: bootstrapv1.FileContentFormatTemplate},
			want: "none"},
		{name: "Raw is written as it is", data: data,
			file: bootstrapv1.File{Path: "/r", Content: "{{ .controlPlane.version }}", ContentFormat: bootstrapv1.FileContentFormatRaw},
			want: "{{ .controlPlane.version }}"},
		{name: "no contentFormat is Raw", data: data,
			file: bootstrapv1.File{Path: "/r", Content: "{{ x }}"},
			want: "{{ x }}"},
		{name: "a template that does not parse", data: data,
			file:    bootstrapv1.File{Path: "/bad", Content: "{{ .controlPlane.version ", ContentFormat: bootstrapv1.FileContentFormatTemplate},
			wantErr: "spec.files[0] (path /bad) is not a valid Go template"},
		{name: "a template that renders more than 1 MiB", data: data,
			file:    bootstrapv1.File{Path: "/big", Content: "{{ range $i := .n }}" + strings.Repeat("x", 1024) + "{{ end }}", ContentFormat: bootstrapv1.FileContentFormatTemplate},
			wantErr: "rendering spec.files[0] (path /big): the rendered content is larger than 1048576 bytes"},
	}
	big := make([]int, 1025)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			in := tt.data
			if tt.file.Path == "/big" {
				in = map[string]any{"n": big}
			}
			out, err := renderFileTemplates([]bootstrapv1.File{tt.file}, in)
			if tt.wantErr != "" {
				g.Expect(err).To(MatchError(ContainSubstring(tt.wantErr)))
				var configErr *configError
				g.Expect(errors.As(err, &configErr)).To(BeTrue(), "a bad template is the user's to fix")
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(out[0].Content).To(Equal(tt.want))
			g.Expect(out[0].ContentFormat).NotTo(Equal(bootstrapv1.FileContentFormatTemplate))
		})
	}
	_, err = fileTemplateData("latest")
	NewWithT(t).Expect(err).To(MatchError(ContainSubstring(`the control plane's version "latest"`)))
}

// TestFilesOfContentFormatTemplate: a file of contentFormat Template is written rendered with the
// control plane's version; one that does not parse is reported on the KubeadmConfig.
func TestFilesOfContentFormatTemplate(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	cluster := createCluster(t, ns, "templates")
	kcp := &controlplanev1.KubeadmControlPlane{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cp"},
		Spec: controlplanev1.KubeadmControlPlaneSpec{Version: "v1.35.2", MachineTemplate: controlplanev1.KubeadmControlPlaneMachineTemplate{
			InfrastructureRef: corev1.ObjectReference{APIVersion: "infrastructure.cluster.x-k8s.io/v1beta1", Kind: "LocalMachineTemplate", Name: "cp"}}},
	}
	g.Expect(env.Client.Create(ctx, kcp)).To(Succeed())
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(cluster), cluster)).To(Succeed())
	cluster.Spec.ControlPlaneRef = &corev1.ObjectReference{APIVersion: controlplanev1.GroupVersion.String(), Kind: "KubeadmControlPlane", Name: kcp.Name, Namespace: ns}
	g.Expect(env.Client.Update(ctx, cluster)).To(Succeed())
	initializeControlPlane(t, cluster)
	createClusterCA(t, cluster)

	_, good := createMachine(t, cluster, "good", false, bootstrapv1.KubeadmConfigSpec{Files: []bootstrapv1.File{
		{Path: "/etc/kubernetes-version", Content: "{{ .controlPlane.version }}", ContentFormat: bootstrapv1.FileContentFormatTemplate},
		{Path: "/etc/raw", Content: "{{ .controlPlane.version }}"},
	}})
	_, bad := createMachine(t, cluster, "bad", false, bootstrapv1.KubeadmConfigSpec{Files: []bootstrapv1.File{
		{Path: "/etc/bad", Content: "{{ .controlPlane.version", ContentFormat: bootstrapv1.FileContentFormatTemplate},
	}})
	g.Eventually(func(g Gomega) {
		get(g, good)
		g.Expect(good.Status.Ready).To(BeTrue())
	}, timeout).Should(Succeed())
	files := writtenFiles(g, dataSecret(g, good).Data["value"])
	g.Expect(files).To(HaveKeyWithValue("/etc/kubernetes-version", "v1.35.2"))
	g.Expect(files).To(HaveKeyWithValue("/etc/raw", "{{ .controlPlane.version }}"))
	g.Eventually(func(g Gomega) {
		get(g, bad)
		g.Expect(bad.Status.Ready).To(BeFalse())
		c := conditions.Get(bad, bootstrapv1.DataSecretAvailableCondition)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Reason).To(Equal(bootstrapv1.DataSecretGenerationFailedReason))
		g.Expect(c.Message).To(ContainSubstring("spec.files[0] (path /etc/bad) is not a valid Go template"))
	}, timeout).Should(Succeed())
}
