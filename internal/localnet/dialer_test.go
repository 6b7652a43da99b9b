package localnet

import (
	"bufio"
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
			// An address of the pod network stands for 127.0.0.1.
			Endpoints: []discoveryv1.Endpoint{{Addresses: []string{"10.244.0.7"}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}}},
			Ports:     []discoveryv1.EndpointPort{{Name: ptr.To("https"), Port: ptr.To(int32(port))}}},
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

func TestProxyConnectsToThePodNetworkOnly(t *testing.T) {
	g := NewWithT(t)
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "hello through the proxy") }))
	defer server.Close()
	_, port, _ := net.SplitHostPort(server.Listener.Addr().String())
	l, err := net.Listen("tcp", "127.0.0.1:0")
	g.Expect(err).NotTo(HaveOccurred())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = ServeProxy(ctx, l) }()
	// Tunnel by hand, as kube-apiserver does.
	conn, err := net.Dial("tcp", l.Addr().String())
	g.Expect(err).NotTo(HaveOccurred())
	_, _ = io.WriteString(conn, "CONNECT 10.244.3.9:"+port+" HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\nGET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
	body, err := io.ReadAll(conn)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(string(body)).To(And(HavePrefix("HTTP/1.1 200 Connection established"), ContainSubstring("hello through the proxy")))

	conn, err = net.Dial("tcp", l.Addr().String())
	g.Expect(err).NotTo(HaveOccurred())
	defer func() { _ = conn.Close() }()
	_, _ = io.WriteString(conn, "CONNECT 192.0.2.1:443 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(resp.StatusCode).To(Equal(http.StatusForbidden), "other destinations are refused")
}

func TestAllocator(t *testing.T) {
	g := NewWithT(t)
	a := &Allocator{}
	g.Expect(a.Next()).To(Equal("10.244.0.1"))
	g.Expect(a.Next()).To(Equal("10.244.0.2"))
	a.next = 65533
	g.Expect(a.Next()).To(Equal("10.244.255.254"))
	g.Expect(a.Next()).To(Equal("10.244.0.1"), "the range is reused")
	local, ok := Loopback("10.244.9.9:8443")
	g.Expect(ok).To(BeTrue())
	g.Expect(local).To(Equal("127.0.0.1:8443"))
	_, ok = Loopback("10.96.0.1:443")
	g.Expect(ok).To(BeFalse())
}
