package extension

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/utils/ptr"

	hooksv1 "github.com/capstan-dev/capstan/api/runtime/hooks/v1alpha1"
)

type deleteHandler = Handler[*hooksv1.BeforeClusterDeleteRequest, *hooksv1.BeforeClusterDeleteResponse]

func post(s *Server, path, body string) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, path, strings.NewReader(body)))
	return rec
}

func TestServerServesDiscoveryAndHandlers(t *testing.T) {
	g := NewWithT(t)
	s := NewServer(Options{})
	g.Expect(AddHandler(s, deleteHandler{Hook: hooksv1.BeforeClusterDelete, Name: "cleanup", TimeoutSeconds: ptr.To[int32](5),
		Func: func(_ context.Context, req *hooksv1.BeforeClusterDeleteRequest, resp *hooksv1.BeforeClusterDeleteResponse) {
			resp.RetryAfterSeconds = 3
			resp.Message = "cleaning " + req.Cluster.Name + " " + req.Settings["mode"]
		}})).To(Succeed())
	g.Expect(AddHandler(s, deleteHandler{Hook: hooksv1.BeforeClusterDelete, Name: "panics",
		Func: func(context.Context, *hooksv1.BeforeClusterDeleteRequest, *hooksv1.BeforeClusterDeleteResponse) {
			panic("boom")
		}})).To(Succeed())

	rec := post(s, "/hooks.runtime.cluster.x-k8s.io/v1alpha1/discovery", `{"apiVersion":"hooks.runtime.cluster.x-k8s.io/v1alpha1","kind":"DiscoveryRequest"}`)
	g.Expect(rec.Code).To(Equal(http.StatusOK))
	disc := &hooksv1.DiscoveryResponse{}
	g.Expect(json.Unmarshal(rec.Body.Bytes(), disc)).To(Succeed())
	g.Expect(disc.Kind).To(Equal("DiscoveryResponse"))
	g.Expect(disc.Status).To(Equal(hooksv1.ResponseStatusSuccess))
	g.Expect(disc.Handlers).To(HaveLen(2))
	g.Expect(disc.Handlers[0]).To(Equal(hooksv1.ExtensionHandler{Name: "cleanup", TimeoutSeconds: ptr.To[int32](5),
		RequestHook: hooksv1.GroupVersionHook{APIVersion: "hooks.runtime.cluster.x-k8s.io/v1alpha1", Hook: "BeforeClusterDelete"}}))

	rec = post(s, "/hooks.runtime.cluster.x-k8s.io/v1alpha1/beforeclusterdelete/cleanup?timeout=10s",
		`{"apiVersion":"hooks.runtime.cluster.x-k8s.io/v1alpha1","kind":"BeforeClusterDeleteRequest","settings":{"mode":"fast"},"cluster":{"metadata":{"name":"c1"}}}`)
	g.Expect(rec.Code).To(Equal(http.StatusOK))
	g.Expect(rec.Body.String()).To(MatchJSON(`{"apiVersion":"hooks.runtime.cluster.x-k8s.io/v1alpha1","kind":"BeforeClusterDeleteResponse",
		"status":"Success","message":"cleaning c1 fast","retryAfterSeconds":3}`))

	rec = post(s, "/hooks.runtime.cluster.x-k8s.io/v1alpha1/beforeclusterdelete/panics",
		`{"apiVersion":"hooks.runtime.cluster.x-k8s.io/v1alpha1","kind":"BeforeClusterDeleteRequest","cluster":{}}`)
	g.Expect(rec.Code).To(Equal(http.StatusOK))
	g.Expect(rec.Body.String()).To(ContainSubstring(`"status":"Failure","message":"handler panics panicked"`))

	rec = post(s, "/hooks.runtime.cluster.x-k8s.io/v1alpha1/beforeclusterdelete/cleanup", `{"apiVersion":"v1","kind":"Pod"}`)
	g.Expect(rec.Code).To(Equal(http.StatusBadRequest))
	g.Expect(rec.Body.String()).To(ContainSubstring("not a BeforeClusterDeleteRequest"))
	rec = post(s, "/hooks.runtime.cluster.x-k8s.io/v1alpha1/beforeclusterdelete/cleanup", `not json`)
	g.Expect(rec.Code).To(Equal(http.StatusBadRequest))
	rec = post(s, "/hooks.runtime.cluster.x-k8s.io/v1alpha1/beforeclusterdelete/unknown", `{}`)
	g.Expect(rec.Code).To(Equal(http.StatusNotFound))
}

func TestAddHandlerRefusesWhatCannotBeServed(t *testing.T) {
	noop := func(context.Context, *hooksv1.BeforeClusterDeleteRequest, *hooksv1.BeforeClusterDeleteResponse) {}
	tests := []struct {
		name string
		h    deleteHandler
		want string
	}{
		{"types of another hook", deleteHandler{Hook: hooksv1.BeforeClusterCreate, Name: "x", Func: noop}, "BeforeClusterCreate takes a *v1alpha1.BeforeClusterCreateRequest"},
		{"discovery", deleteHandler{Hook: hooksv1.Discovery, Name: "x", Func: noop}, "not a hook a handler can serve"},
		{"name not a DNS label", deleteHandler{Hook: hooksv1.BeforeClusterDelete, Name: "Not_A_Label", Func: noop}, "is not a DNS label"},
		{"timeout over 30s", deleteHandler{Hook: hooksv1.BeforeClusterDelete, Name: "x", Func: noop, TimeoutSeconds: ptr.To[int32](31)}, "timeoutSeconds must be between 0 and 30"},
		{"no func", deleteHandler{Hook: hooksv1.BeforeClusterDelete, Name: "x"}, "has no Func"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			err := AddHandler(NewServer(Options{}), tt.h)
			g.Expect(err).To(MatchError(ContainSubstring(tt.want)))
		})
	}
	g := NewWithT(t)
	s := NewServer(Options{})
	g.Expect(AddHandler(s, deleteHandler{Hook: hooksv1.BeforeClusterDelete, Name: "x", Func: noop})).To(Succeed())
	g.Expect(AddHandler(s, deleteHandler{Hook: hooksv1.BeforeClusterDelete, Name: "x", Func: noop})).To(MatchError(ContainSubstring("already registered")))
}

func TestStartRefusesAMissingCertificate(t *testing.T) {
	g := NewWithT(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	g.Expect(err).NotTo(HaveOccurred())
	err = NewServer(Options{CertDir: t.TempDir()}).Serve(context.Background(), l)
	g.Expect(err).To(MatchError(ContainSubstring("reading the serving certificate")))
}
