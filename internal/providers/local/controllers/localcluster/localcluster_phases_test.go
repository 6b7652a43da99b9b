package localcluster

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/kubeconfig"
)

// A CA recovered from a cluster's data makes a Secret shaped as the one kubeconfig.NewCASecret makes, that
// reads back as the same CA.
func TestCASecretFromStoredCA(t *testing.T) {
	g := NewWithT(t)
	owner := metav1.OwnerReference{APIVersion: "infrastructure.cluster.x-k8s.io/v1alpha1", Kind: "LocalCluster", Name: "c1", UID: "u"}
	fresh, err := kubeconfig.NewCASecret(client.ObjectKey{Namespace: "ns", Name: "c1"}, &owner, time.Now())
	g.Expect(err).NotTo(HaveOccurred())
	ca, err := kubeconfig.CAFromSecret(fresh)
	g.Expect(err).NotTo(HaveOccurred())

	recovered, err := caSecret(client.ObjectKeyFromObject(fresh), ca, owner)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(recovered.ObjectMeta).To(Equal(fresh.ObjectMeta))
	g.Expect(recovered.Type).To(Equal(fresh.Type))
	g.Expect(recovered.Labels).To(HaveKeyWithValue(clusterv1.ClusterNameLabel, "c1"))
	g.Expect(recovered.Data).To(Equal(fresh.Data), "an RSA CA is written back byte for byte")
	back, err := kubeconfig.CAFromSecret(recovered)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(back.Cert.Equal(ca.Cert)).To(BeTrue())
}
