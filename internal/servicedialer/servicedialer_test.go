package servicedialer

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

func TestDialsServicesThroughTheirEndpointSlices(t *testing.T) {
	g := NewWithT(t)
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "hello from the extension") }))
	defer server.Close()
	_, portText, _ := net.SplitHostPort(server.Listener.Addr().String())
	port, _ := strconv.Atoi(portText)

	scheme := runtime.NewScheme()
	g.Expect(clientgoscheme.AddToScheme(scheme)).To(Succeed())
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(
		&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "ext", Name: "hooks"},
			Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "https", Port: 443}}}},
		&discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: "ext", Name: "hooks-not-ready", Labels: map[string]string{discoveryv1.LabelServiceName: "hooks"}},
			AddressType: discoveryv1.AddressTypeIPv4,
			Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{"127.0.0.1"}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(false)}}},
			Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("https"), Port: ptr.To(int32(1))}}},
		&discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: "ext", Name: "hooks-ready", Labels: map[string]string{discoveryv1.LabelServiceName: "hooks"}},
			AddressType: discoveryv1.AddressTypeIPv4,
			Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{"127.0.0.1"}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}}},
			Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("https"), Port: ptr.To(int32(port))}}},
	).Build()
	d := &Dialer{Client: c}
	hc := &http.Client{Transport: &http.Transport{DialContext: d.DialContext}}
	for _, host := range []string{"hooks.ext.svc", "hooks.ext.svc.cluster.local"} {
		resp, err := hc.Get("http://" + host + ":443/")
		g.Expect(err).NotTo(HaveOccurred())
		body, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		g.Expect(string(body)).To(Equal("hello from the extension"), "only the ready endpoint is used")
	}

	_, err := d.DialContext(context.Background(), "tcp", "hooks.ext.svc:80")
	g.Expect(err).To(MatchError("service ext/hooks has no port 80"))
	_, err = d.DialContext(context.Background(), "tcp", "missing.ext.svc:443")
	g.Expect(err).To(MatchError(ContainSubstring("resolving Service ext/missing")))
	// Other names are dialled as they are.
	conn, err := d.DialContext(context.Background(), "tcp", server.Listener.Addr().String())
	g.Expect(err).NotTo(HaveOccurred())
	_ = conn.Close()
}

func TestServiceName(t *testing.T) {
	tests := []struct {
		host, service, namespace string
		ok                       bool
	}{
		{"a.b.svc", "a", "b", true},
		{"a.b.svc.cluster.local", "a", "b", true},
		{"a.b.svc.cluster.local.", "a", "b", true},
		{"example.com", "", "", false},
		{"a.svc", "", "", false},
		{"a.b.c.svc", "", "", false},
	}
	for _, tt := range tests {
		g := NewWithT(t)
		s, n, ok := ServiceName(tt.host)
		g.Expect([]any{s, n, ok}).To(Equal([]any{tt.service, tt.namespace, tt.ok}), tt.host)
	}
}
