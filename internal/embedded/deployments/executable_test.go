package deployments

import (
	"testing"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

// TestExecutable: containers of capstan's image run the capstan executable, those of an image given in
// Executables run its executable (whatever the tag or digest), and any other image is not runnable.
func TestExecutable(t *testing.T) {
	r := &Runtime{
		Capstan: "/bin/capstan", Images: []string{"ghcr.io/capstan-dev/capstan"},
		Executables: map[string]string{"example.com/foo/manager": "/tmp/manager"},
	}
	for image, want := range map[string]string{
		"ghcr.io/capstan-dev/capstan:v0.1.0":                 "/bin/capstan",
		"ghcr.io/capstan-dev/capstan:v0.1.0@sha256:0123abcd": "/bin/capstan",
		"example.com/foo/manager:v1.2.3":                     "/tmp/manager",
		"example.com/foo/manager@sha256:0123abcd":            "/tmp/manager",
		"example.com/foo/other:v1.2.3":                       "",
		"registry.k8s.io/capstan-dev/capstan:v0.1.0":         "",
	} {
		NewWithT(t).Expect(r.executable(image)).To(Equal(want), image)
		d := &appsv1.Deployment{Spec: appsv1.DeploymentSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "manager", Image: image}},
		}}}}
		if want == "" {
			NewWithT(t).Expect(r.notRunnable(d)).To(ContainSubstring("uses image "+image), image)
		} else {
			NewWithT(t).Expect(r.notRunnable(d)).To(BeEmpty(), image)
		}
	}
}
