package portforward

import (
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/client-go/rest"
)

func TestURL(t *testing.T) {
	tests := []struct{ host, want string }{
		{"https://127.0.0.1:6443", "https://127.0.0.1:6443/api/v1/namespaces/kube-system/pods/etcd-n1/portforward"},
		{"https://example.com/prefix", "https://example.com/prefix/api/v1/namespaces/kube-system/pods/etcd-n1/portforward"},
		{"127.0.0.1:6443", "https://127.0.0.1:6443/api/v1/namespaces/kube-system/pods/etcd-n1/portforward"},
	}
	for _, tt := range tests {
		t.Run(tt.host, func(t *testing.T) {
			g := NewWithT(t)
			d, err := NewDialer(&rest.Config{Host: tt.host, TLSClientConfig: rest.TLSClientConfig{Insecure: true}}, 0)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(d.URL("kube-system", "etcd-n1").String()).To(Equal(tt.want))
		})
	}
}
