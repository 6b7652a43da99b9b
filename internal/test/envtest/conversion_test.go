package envtest_test

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	ipamv1alpha1 "github.com/capstan-dev/capstan/api/ipam/v1alpha1"
	ipamv1 "github.com/capstan-dev/capstan/api/ipam/v1beta1"
	"github.com/capstan-dev/capstan/internal/test/envtest"
)

// The harness's API server converts between the versions a CRD serves without a manager, with or without
// the pod network: a test may write an IPAddressClaim in v1alpha1 and read it in v1beta1.
func TestTheAPIServerConverts(t *testing.T) {
	for _, podNetwork := range []bool{false, true} {
		t.Run(map[bool]string{false: "loopback", true: "pod network"}[podNetwork], func(t *testing.T) {
			g := NewWithT(t)
			env, err := envtest.Start(envtest.Options{PodNetwork: podNetwork})
			g.Expect(err).NotTo(HaveOccurred())
			t.Cleanup(func() { _ = env.Stop() })
			ctx := context.Background()
			ns := env.NewNamespace(t)
			g.Expect(env.Client.Create(ctx, &ipamv1alpha1.IPAddressClaim{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "c", Labels: map[string]string{clusterv1.ClusterNameLabel: "dev"}},
				Spec: ipamv1alpha1.IPAddressClaimSpec{PoolRef: corev1.TypedLocalObjectReference{
					APIGroup: ptr.To("ipam.example.com"), Kind: "Pool", Name: "p"}},
			})).To(Succeed())
			got := &ipamv1.IPAddressClaim{}
			g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "c"}, got)).To(Succeed())
			g.Expect(got.Spec.ClusterName).To(Equal("dev"), "converted by the webhook, not copied as is")
		})
	}
}
