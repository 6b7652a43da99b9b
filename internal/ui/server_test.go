package ui

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/clusterctl/tree"
)

func TestNewChecksAccess(t *testing.T) {
	cfg := &rest.Config{Host: "https://127.0.0.1:6443"}
	tests := []struct {
		name    string
		opts    Options
		wantErr string
	}{
		{name: "a random token by default", opts: Options{}},
		{name: "no token on loopback", opts: Options{Address: "127.0.0.1:8080", NoToken: true}},
		{name: "no token on localhost", opts: Options{Address: "localhost:8080", NoToken: true}},
		{name: "no token on another address", opts: Options{Address: "0.0.0.0:8080", NoToken: true}, wantErr: "only on a loopback address"},
		{name: "no token on every interface", opts: Options{Address: ":8080", NoToken: true}, wantErr: "only on a loopback address"},
		{name: "not host:port", opts: Options{Address: "8080"}, wantErr: "is not host:port"},
		{name: "a token and no token", opts: Options{Address: "127.0.0.1:1", NoToken: true, Token: "x"}, wantErr: "exclude each other"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			tt.opts.Config = cfg
			s, err := New(tt.opts)
			if tt.wantErr != "" {
				g.Expect(err).To(MatchError(ContainSubstring(tt.wantErr)))
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			if !tt.opts.NoToken {
				g.Expect(len(s.opts.Token)).To(BeNumerically(">=", 32), "a random token")
			}
		})
	}
	a, err := New(Options{Config: cfg})
	g := NewWithT(t)
	g.Expect(err).NotTo(HaveOccurred())
	b, err := New(Options{Config: cfg})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(a.opts.Token).NotTo(Equal(b.opts.Token))
	g.Expect(a.cookieName()).NotTo(Equal(b.cookieName()), "two views on one host keep their own cookie")
	g.Expect(a.opts.Address).To(Equal("127.0.0.1:0"), "loopback by default")
}

func TestTokenIsAskedFor(t *testing.T) {
	g := NewWithT(t)
	s := &Server{opts: Options{Token: "secret-token"}}
	h := securityHeaders(s.authenticate(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte("the view"))
	})))
	srv := httptest.NewServer(h)
	defer srv.Close()
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	do := func(path string, mutate func(*http.Request)) (*http.Response, string) {
		req, err := http.NewRequest(http.MethodGet, srv.URL+path, nil)
		g.Expect(err).NotTo(HaveOccurred())
		if mutate != nil {
			mutate(req)
		}
		resp, err := noRedirect.Do(req)
		g.Expect(err).NotTo(HaveOccurred())
		defer func() { _ = resp.Body.Close() }()
		body, _ := io.ReadAll(resp.Body)
		return resp, string(body)
	}

	resp, body := do("/api/clusters", nil)
	g.Expect(resp.StatusCode).To(Equal(http.StatusUnauthorized))
	g.Expect(body).To(ContainSubstring("needs its token"))
	g.Expect(resp.Header.Get("Content-Security-Policy")).To(ContainSubstring("default-src 'self'"))

	resp, _ = do("/?token=wrong", nil)
	g.Expect(resp.StatusCode).To(Equal(http.StatusUnauthorized))
	g.Expect(resp.Cookies()).To(BeEmpty())

	resp, _ = do("/clusters/ns/a?grouping=0&token=secret-token", nil)
	g.Expect(resp.StatusCode).To(Equal(http.StatusSeeOther))
	g.Expect(resp.Header.Get("Location")).To(Equal("/clusters/ns/a?grouping=0"), "the token leaves the URL")
	cookies := resp.Cookies()
	g.Expect(cookies).To(HaveLen(1))
	g.Expect(cookies[0].Value).To(Equal("secret-token"))
	g.Expect(cookies[0].HttpOnly).To(BeTrue())
	g.Expect(cookies[0].SameSite).To(Equal(http.SameSiteStrictMode))

	resp, body = do("/clusters/ns/a", func(r *http.Request) { r.AddCookie(cookies[0]) })
	g.Expect(resp.StatusCode).To(Equal(http.StatusOK))
	g.Expect(body).To(Equal("the view"))
	resp, _ = do("/", func(r *http.Request) { r.AddCookie(&http.Cookie{Name: cookies[0].Name, Value: "wrong"}) })
	g.Expect(resp.StatusCode).To(Equal(http.StatusUnauthorized))
	resp, _ = do("/api/clusters", func(r *http.Request) { r.Header.Set("Authorization", "Bearer secret-token") })
	g.Expect(resp.StatusCode).To(Equal(http.StatusOK))
}

func TestClusterRow(t *testing.T) {
	created := metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	available := metav1.Condition{Type: "Available", Status: metav1.ConditionFalse, Reason: "NotAvailable", Message: "* ControlPlaneAvailable: no"}
	tests := []struct {
		name    string
		cluster clusterv1.Cluster
		want    ClusterRow
	}{
		{
			name: "topology, counters and Available",
			cluster: clusterv1.Cluster{
				ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a", CreationTimestamp: created},
				Spec:       clusterv1.ClusterSpec{Topology: &clusterv1.Topology{Class: "local", ClassNamespace: "classes", Version: "v1.37.1"}},
				Status: clusterv1.ClusterStatus{Phase: "Provisioned", V1Beta2: &clusterv1.ClusterV1Beta2Status{
					Conditions:   []metav1.Condition{available},
					ControlPlane: &clusterv1.ClusterControlPlaneStatus{DesiredReplicas: ptr.To[int32](3), ReadyReplicas: ptr.To[int32](2)},
					Workers:      &clusterv1.WorkersStatus{DesiredReplicas: ptr.To[int32](2), ReadyReplicas: ptr.To[int32](2)},
				}},
			},
			want: ClusterRow{Namespace: "ns", Name: "a", Class: "classes/local", Version: "v1.37.1", Phase: "Provisioned",
				ControlPlane: "2/3", Workers: "2/2", WorkersReady: true, Available: "False", AvailableReason: "NotAvailable",
				AvailableMessage: "* ControlPlaneAvailable: no", Created: "2026-01-02T03:04:05Z"},
		},
		{
			name: "a control plane with only the v1beta1 flag, paused, deleting",
			cluster: clusterv1.Cluster{
				ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "b", CreationTimestamp: created, DeletionTimestamp: &created,
					Annotations: map[string]string{clusterv1.PausedAnnotation: ""}},
				Spec:   clusterv1.ClusterSpec{ControlPlaneRef: &corev1.ObjectReference{Kind: "KubeadmControlPlane", Name: "b"}, Paused: true},
				Status: clusterv1.ClusterStatus{Phase: "Deleting", ControlPlaneReady: true},
			},
			want: ClusterRow{Namespace: "ns", Name: "b", Phase: "Deleting", ControlPlane: "ready", ControlPlaneReady: true,
				Created: "2026-01-02T03:04:05Z", Deleting: true, Paused: true},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			g.Expect(*clusterRow(&tt.cluster)).To(Equal(tt.want))
		})
	}
}

func TestUpgradeView(t *testing.T) {
	g := NewWithT(t)
	machine := func(name, version string, labels map[string]string, node string) clusterv1.Machine {
		m := clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
			Spec: clusterv1.MachineSpec{Version: ptr.To(version)}, Status: clusterv1.MachineStatus{Phase: "Running"}}
		if node != "" {
			m.Status.NodeRef = &corev1.ObjectReference{Name: node}
		}
		return m
	}
	cp := map[string]string{clusterv1.MachineControlPlaneLabel: ""}
	md := map[string]string{clusterv1.MachineDeploymentNameLabel: "md-0"}
	objs := &tree.Objects{
		Cluster: &clusterv1.Cluster{Spec: clusterv1.ClusterSpec{Topology: &clusterv1.Topology{Version: "v1.37.2"}}},
		MachineDeployments: []clusterv1.MachineDeployment{{ObjectMeta: metav1.ObjectMeta{Name: "md-0"},
			Spec: clusterv1.MachineDeploymentSpec{Template: clusterv1.MachineTemplateSpec{Spec: clusterv1.MachineSpec{Version: ptr.To("v1.37.1")}}}}},
		Machines: []clusterv1.Machine{
			machine("cp-b", "v1.37.2", cp, "cp-b"), machine("cp-a", "v1.37.1", cp, "cp-a"),
			machine("w-1", "v1.37.1", md, "w-1"), machine("loose", "v1.37.1", nil, ""),
		},
	}
	v := upgradeView(objs, []NodeView{{Name: "cp-b", Version: "v1.37.2"}, {Name: "cp-a", Version: "v1.37.1"}})
	g.Expect(v.Target).To(Equal("v1.37.2"))
	g.Expect(v.Groups).To(HaveLen(2), "no control plane object: its Machines are with the other Machines")
	g.Expect(v.Groups[0].Kind).To(Equal("MachineDeployment"))
	g.Expect(v.Groups[0].Version).To(Equal("v1.37.1"))
	g.Expect(v.Groups[0].Machines).To(HaveLen(1))
	names := func(g VersionGroup) []string {
		var out []string
		for _, m := range g.Machines {
			out = append(out, fmt.Sprintf("%s=%s/%s", m.Name, m.Version, m.NodeVersion))
		}
		return out
	}
	g.Expect(names(v.Groups[1])).To(Equal([]string{"cp-a=v1.37.1/v1.37.1", "cp-b=v1.37.2/v1.37.2", "loose=v1.37.1/"}))
	g.Expect(v.Groups[1].AtTarget).To(Equal(1))
}

// TestObjectsOutsideTheTreeAreRefused: the details of an object are served only for the objects of the
// Cluster's tree: not a Secret, not another Cluster's MachineDeployment.
func TestObjectsOutsideTheTreeAreRefused(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	for _, name := range []string{"a", "b"} {
		g.Expect(env.Client.Create(ctx, &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}})).To(Succeed())
		md := &clusterv1.MachineDeployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name + "-md"},
			Spec: clusterv1.MachineDeploymentSpec{ClusterName: name, Selector: metav1.LabelSelector{MatchLabels: map[string]string{"a": "b"}},
				Template: clusterv1.MachineTemplateSpec{ObjectMeta: clusterv1.ObjectMeta{Labels: map[string]string{"a": "b"}},
					Spec: clusterv1.MachineSpec{ClusterName: name, InfrastructureRef: corev1.ObjectReference{APIVersion: "infrastructure.cluster.x-k8s.io/v1alpha1", Kind: "LocalMachineTemplate", Name: "x"}}}}}
		g.Expect(env.Client.Create(ctx, md)).To(Succeed())
	}
	g.Expect(env.Client.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "a-kubeconfig"}, StringData: map[string]string{"value": "x"}})).To(Succeed())
	s := startServer(t, nil, Options{})
	object := func(apiVersion, kind, name string) (int, string) {
		q := url.Values{"apiVersion": {apiVersion}, "kind": {kind}, "name": {name}}
		req, err := http.NewRequest(http.MethodGet, fmt.Sprintf("http://%s/api/clusters/%s/a/object?%s", s.Addr(), ns, q.Encode()), nil)
		g.Expect(err).NotTo(HaveOccurred())
		req.Header.Set("Authorization", "Bearer "+s.opts.Token)
		resp, err := http.DefaultClient.Do(req)
		g.Expect(err).NotTo(HaveOccurred())
		defer func() { _ = resp.Body.Close() }()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	g.Eventually(func(g Gomega) {
		code, body := object(clusterv1.GroupVersion.String(), "MachineDeployment", "a-md")
		g.Expect(code).To(Equal(http.StatusOK), body)
		g.Expect(body).To(ContainSubstring("name: a-md"))
	}, wait, interval).Should(Succeed())
	code, body := object("v1", "Secret", "a-kubeconfig")
	g.Expect(code).To(Equal(http.StatusBadRequest), body)
	code, body = object(clusterv1.GroupVersion.String(), "MachineDeployment", "b-md")
	g.Expect(code).To(Equal(http.StatusNotFound), body)
	g.Expect(strings.Contains(body, "is not an object of Cluster")).To(BeTrue(), body)
}
