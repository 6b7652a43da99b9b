package apicount

import (
	"net/http"
	"net/http/httptest"
	"testing"

	. "github.com/onsi/gomega"
)

// TestCounter: requests are counted by agent, HTTP verb, Kubernetes verb, namespace and resource, and
// WrapAs counts them as the component's whatever their User-Agent.
func TestCounter(t *testing.T) {
	g := NewWithT(t)
	c := New()
	ok := roundTripper(func(*http.Request) (*http.Response, error) { return &http.Response{StatusCode: http.StatusOK}, nil })
	send := func(rt http.RoundTripper, method, url string) {
		req := httptest.NewRequest(method, url, nil)
		req.Header.Set("User-Agent", "capstan/v0.1.0 (linux/amd64)")
		_, err := rt.RoundTrip(req)
		g.Expect(err).NotTo(HaveOccurred())
	}
	core, local := c.Wrap(ok), c.WrapAs("local")(ok)
	send(core, http.MethodGet, "https://api/apis/cluster.x-k8s.io/v1beta1/namespaces/ns/machines/m0")
	send(core, http.MethodGet, "https://api/apis/cluster.x-k8s.io/v1beta1/namespaces/ns/machines")
	send(core, http.MethodGet, "https://api/apis/cluster.x-k8s.io/v1beta1/machines?watch=true")
	send(core, http.MethodPatch, "https://api/apis/cluster.x-k8s.io/v1beta1/namespaces/ns/machines/m0/status")
	send(local, http.MethodGet, "https://api/api/v1/namespaces/ns")
	send(local, http.MethodPost, "https://api/api/v1/namespaces/ns/secrets")
	send(local, http.MethodPut, "https://api/api/v1/namespaces/ns/secrets/s")

	g.Expect(c.Snapshot()).To(Equal(Counts{
		{Agent: "capstan", Verb: "GET", Action: "get", Namespace: "ns", Resource: "cluster.x-k8s.io/machines"}:            1,
		{Agent: "capstan", Verb: "GET", Action: "list", Namespace: "ns", Resource: "cluster.x-k8s.io/machines"}:           1,
		{Agent: "capstan", Verb: "GET", Action: "watch", Resource: "cluster.x-k8s.io/machines"}:                           1,
		{Agent: "capstan", Verb: "PATCH", Action: "patch", Namespace: "ns", Resource: "cluster.x-k8s.io/machines/status"}: 1,
		{Agent: "local", Verb: "GET", Action: "get", Resource: "namespaces"}:                                              1,
		{Agent: "local", Verb: "POST", Action: "create", Namespace: "ns", Resource: "secrets"}:                            1,
		{Agent: "local", Verb: "PUT", Action: "update", Namespace: "ns", Resource: "secrets"}:                             1,
	}))
	writes := c.Snapshot().Sum(func(k Key) bool { return IsWrite(k.Verb) })
	g.Expect(writes).To(Equal(3))
}

// TestConflicts: the requests answered 409 Conflict are counted apart, as well as among the requests.
func TestConflicts(t *testing.T) {
	g := NewWithT(t)
	c := New()
	status := http.StatusOK
	rt := c.Wrap(roundTripper(func(*http.Request) (*http.Response, error) { return &http.Response{StatusCode: status}, nil }))
	patch := func() {
		_, err := rt.RoundTrip(httptest.NewRequest(http.MethodPatch, "https://api/apis/cluster.x-k8s.io/v1beta1/namespaces/ns/machines/m0/status", nil))
		g.Expect(err).NotTo(HaveOccurred())
	}
	patch()
	status = http.StatusConflict
	patch()
	patch()
	key := Key{Verb: "PATCH", Action: "patch", Namespace: "ns", Resource: "cluster.x-k8s.io/machines/status"}
	g.Expect(c.Snapshot()).To(Equal(Counts{key: 3}))
	g.Expect(c.Conflicts()).To(Equal(Counts{key: 2}))
}

// TestApplyDryRunAndMediaTypes: server-side apply patches and dry runs are told apart from other patches,
// and the responses are counted by the media type the API server answered in.
func TestApplyDryRunAndMediaTypes(t *testing.T) {
	g := NewWithT(t)
	c := New()
	answer := "application/json"
	rt := c.Wrap(roundTripper(func(*http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: http.StatusOK, Header: http.Header{"Content-Type": {answer}}}, nil
	}))
	send := func(method, url, contentType string) {
		req := httptest.NewRequest(method, url, nil)
		req.Header.Set("Content-Type", contentType)
		_, err := rt.RoundTrip(req)
		g.Expect(err).NotTo(HaveOccurred())
	}
	const mhc = "https://api/apis/cluster.x-k8s.io/v1beta1/namespaces/ns/machinehealthchecks/m"
	send(http.MethodPatch, mhc+"?fieldManager=capi-topology&force=true&dryRun=All", "application/apply-patch+yaml")
	send(http.MethodPatch, mhc+"?fieldManager=capi-topology&force=true", "application/apply-patch+yaml")
	answer = "application/cbor"
	send(http.MethodPatch, mhc, "application/merge-patch+json")
	send(http.MethodPost, "https://api/apis/cluster.x-k8s.io/v1beta1/namespaces/ns/machinehealthchecks?dryRun=All", "application/cbor")

	resource := "cluster.x-k8s.io/machinehealthchecks"
	g.Expect(c.Snapshot()).To(Equal(Counts{
		{Verb: "PATCH", Action: "apply (dry run)", Namespace: "ns", Resource: resource}: 1,
		{Verb: "PATCH", Action: "apply", Namespace: "ns", Resource: resource}:           1,
		{Verb: "PATCH", Action: "patch", Namespace: "ns", Resource: resource}:           1,
		{Verb: "POST", Action: "create (dry run)", Namespace: "ns", Resource: resource}: 1,
	}))
	g.Expect(c.MediaTypes()).To(Equal(map[string]int{"application/json": 2, "application/cbor": 2}))
}
