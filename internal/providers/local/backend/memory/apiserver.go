package memory

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	jsonpatch "github.com/evanphx/json-patch/v5"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/apimachinery/pkg/watch"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/yaml"
)

// codecs decode the protobuf bodies of built-in types.
var codecs = serializer.NewCodecFactory(clientgoscheme.Scheme)

// maxBody bounds request bodies.
const maxBody = 8 << 20

// request is a parsed resource request.
type request struct {
	res                          resource
	namespace, name, subresource string
}

// serveAPI serves the Kubernetes API of the workload cluster c.
func (c *cluster) serveAPI(w http.ResponseWriter, r *http.Request) {
	path := strings.Trim(r.URL.Path, "/")
	switch path {
	case "":
		writeJSON(w, http.StatusOK, &metav1.RootPaths{Paths: []string{"/api", "/api/v1", "/apis", "/healthz", "/livez", "/readyz", "/version"}})
		return
	case "healthz", "readyz", "livez":
		if c.apiServers() == 0 {
			http.Error(w, "no API server runs", http.StatusServiceUnavailable)
			return
		}
		_, _ = io.WriteString(w, "ok")
		return
	case "version":
		node, _ := r.Context().Value(nodeContextKey{}).(string)
		writeJSON(w, http.StatusOK, c.version(node))
		return
	case "api":
		writeJSON(w, http.StatusOK, &metav1.APIVersions{TypeMeta: metav1.TypeMeta{Kind: "APIVersions"}, Versions: []string{"v1"},
			ServerAddressByClientCIDRs: []metav1.ServerAddressByClientCIDR{{ClientCIDR: "0.0.0.0/0", ServerAddress: r.Host}}})
		return
	case "apis":
		writeJSON(w, http.StatusOK, apiGroups())
		return
	case "api/v1":
		writeJSON(w, http.StatusOK, apiResources(schema.GroupVersion{Version: "v1"}))
		return
	}
	segs := strings.Split(path, "/")
	var group, ver string
	switch {
	case len(segs) >= 2 && segs[0] == "api" && segs[1] == "v1":
		ver, segs = "v1", segs[2:]
	case len(segs) >= 3 && segs[0] == "apis":
		group, ver, segs = segs[1], segs[2], segs[3:]
		if len(segs) == 0 {
			writeJSON(w, http.StatusOK, apiResources(schema.GroupVersion{Group: group, Version: ver}))
			return
		}
	default:
		writeStatus(w, apierrors.NewNotFound(schema.GroupResource{Resource: path}, ""))
		return
	}
	req, ok := parse(group, ver, segs)
	if !ok {
		writeStatus(w, apierrors.NewNotFound(schema.GroupResource{Group: group, Resource: strings.Join(segs, "/")}, ""))
		return
	}
	c.serveResource(w, r, req)
}

// parse reads [namespaces/<ns>/]<resource>[/<name>[/<subresource>]].
func parse(group, ver string, segs []string) (request, bool) {
	var out request
	namespaceSubresource := group == "" && len(segs) == 3 && (segs[2] == "status" || segs[2] == "finalize")
	if len(segs) >= 3 && segs[0] == "namespaces" && !namespaceSubresource {
		out.namespace, segs = segs[1], segs[2:]
	}
	if len(segs) == 0 || len(segs) > 3 {
		return out, false
	}
	res, ok := lookupResource(group, ver, segs[0])
	if !ok {
		return out, false
	}
	out.res = res
	if len(segs) > 1 {
		out.name = segs[1]
	}
	if len(segs) > 2 {
		out.subresource = segs[2]
	}
	return out, true
}

func (c *cluster) serveResource(w http.ResponseWriter, r *http.Request, req request) {
	gr := req.res.gvr.GroupResource()
	q := r.URL.Query()
	if req.subresource == "portforward" && gr == podsResource {
		c.portForward(w, r, req.namespace, req.name)
		return
	}
	if req.subresource == "eviction" && gr == podsResource && r.Method == http.MethodPost {
		if _, err := c.store.remove(gr, req.namespace, req.name); err != nil {
			writeStatus(w, err)
			return
		}
		writeJSON(w, http.StatusCreated, &metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: metav1.StatusSuccess, Code: http.StatusCreated})
		return
	}
	if req.subresource != "" && req.subresource != "status" {
		writeStatus(w, apierrors.NewNotFound(gr, req.name+"/"+req.subresource))
		return
	}
	switch {
	case r.Method == http.MethodGet && req.name == "" && (q.Get("watch") == "true" || q.Get("watch") == "1"):
		c.serveWatch(w, r, req)
	case r.Method == http.MethodGet && req.name == "":
		ls, fs, err := selectors(q)
		if err != nil {
			writeStatus(w, err)
			return
		}
		items, rv := c.store.list(gr, req.namespace, ls, fs)
		list := map[string]any{"kind": req.res.kind + "List", "apiVersion": req.res.gvr.GroupVersion().String(),
			"metadata": map[string]any{"resourceVersion": rv}}
		objs := make([]any, 0, len(items))
		for _, it := range items {
			objs = append(objs, it.Object)
		}
		list["items"] = objs
		writeJSON(w, http.StatusOK, list)
	case r.Method == http.MethodGet:
		obj, err := c.store.get(gr, req.namespace, req.name)
		reply(w, http.StatusOK, obj, err)
	case r.Method == http.MethodPost && req.name == "":
		obj, err := readObject(r, req)
		if err != nil {
			writeStatus(w, err)
			return
		}
		obj, err = c.store.create(gr, obj)
		reply(w, http.StatusCreated, obj, err)
	case r.Method == http.MethodPut && req.name != "":
		obj, err := readObject(r, req)
		if err != nil {
			writeStatus(w, err)
			return
		}
		if obj.GetName() != req.name {
			writeStatus(w, apierrors.NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", obj.GetName(), req.name)))
			return
		}
		obj, err = c.store.update(gr, obj, req.subresource)
		reply(w, http.StatusOK, obj, err)
	case r.Method == http.MethodPatch && req.name != "":
		c.servePatch(w, r, req)
	case r.Method == http.MethodDelete && req.name != "":
		obj, err := c.store.remove(gr, req.namespace, req.name)
		reply(w, http.StatusOK, obj, err)
	default:
		writeStatus(w, apierrors.NewMethodNotSupported(gr, r.Method))
	}
}

func (c *cluster) servePatch(w http.ResponseWriter, r *http.Request, req request) {
	gr := req.res.gvr.GroupResource()
	patch, err := io.ReadAll(io.LimitReader(r.Body, maxBody))
	if err != nil {
		writeStatus(w, apierrors.NewBadRequest(err.Error()))
		return
	}
	contentType := strings.TrimSpace(strings.Split(r.Header.Get("Content-Type"), ";")[0])
	var apply func(orig []byte) ([]byte, error)
	switch types.PatchType(contentType) {
	case types.MergePatchType:
		apply = func(orig []byte) ([]byte, error) { return jsonpatch.MergePatch(orig, patch) }
	case types.JSONPatchType:
		p, err := jsonpatch.DecodePatch(patch)
		if err != nil {
			writeStatus(w, apierrors.NewBadRequest(err.Error()))
			return
		}
		apply = p.Apply
	case types.StrategicMergePatchType:
		proto, err := req.res.prototype()
		if err != nil {
			writeStatus(w, apierrors.NewInternalError(err))
			return
		}
		apply = func(orig []byte) ([]byte, error) { return strategicpatch.StrategicMergePatch(orig, patch, proto) }
	case types.ApplyYAMLPatchType, types.ApplyCBORPatchType:
		// Server-side apply is approximated by a merge patch of the applied configuration (no managed
		// fields): enough for the fields a controller owns alone.
		js, err := yaml.YAMLToJSON(patch)
		if err != nil {
			writeStatus(w, apierrors.NewBadRequest(err.Error()))
			return
		}
		if _, err := c.store.get(gr, req.namespace, req.name); apierrors.IsNotFound(err) {
			obj := &unstructured.Unstructured{}
			if err := obj.UnmarshalJSON(js); err != nil {
				writeStatus(w, apierrors.NewBadRequest(err.Error()))
				return
			}
			obj.SetNamespace(req.namespace)
			obj, err = c.store.create(gr, obj)
			reply(w, http.StatusCreated, obj, err)
			return
		}
		apply = func(orig []byte) ([]byte, error) { return jsonpatch.MergePatch(orig, js) }
	default:
		writeStatus(w, apierrors.NewGenericServerResponse(http.StatusUnsupportedMediaType, "patch", gr, req.name,
			fmt.Sprintf("the patch type %q is not supported", contentType), 0, false))
		return
	}
	obj, err := c.store.patch(gr, req.namespace, req.name, req.subresource, func(orig *unstructured.Unstructured) (*unstructured.Unstructured, error) {
		js, err := orig.MarshalJSON()
		if err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		patched, err := apply(js)
		if err != nil {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("applying the patch: %v", err))
		}
		out := &unstructured.Unstructured{}
		if err := out.UnmarshalJSON(patched); err != nil {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("the patched object: %v", err))
		}
		return out, nil
	})
	reply(w, http.StatusOK, obj, err)
}

func (c *cluster) serveWatch(w http.ResponseWriter, r *http.Request, req request) {
	q := r.URL.Query()
	ls, fs, err := selectors(q)
	if err != nil {
		writeStatus(w, err)
		return
	}
	var since uint64
	if v := q.Get("resourceVersion"); v != "" {
		if since, err = strconv.ParseUint(v, 10, 64); err != nil {
			writeStatus(w, apierrors.NewBadRequest(fmt.Sprintf("invalid resourceVersion %q", v)))
			return
		}
	}
	initialEvents := q.Get("sendInitialEvents") == "true"
	gr := req.res.gvr.GroupResource()
	flusher, _ := w.(http.Flusher)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Transfer-Encoding", "chunked")
	enc := json.NewEncoder(w)
	wt, rv, err := c.store.watch(gr, req.namespace, ls, fs, since, since == 0 || initialEvents)
	w.WriteHeader(http.StatusOK)
	if err != nil {
		status := apiStatus(err)
		_ = enc.Encode(map[string]any{"type": watch.Error, "object": status})
		return
	}
	defer c.store.stopWatch(wt)
	timeout := 30 * time.Minute
	if v, err := strconv.Atoi(q.Get("timeoutSeconds")); err == nil && v > 0 {
		timeout = time.Duration(v) * time.Second
	}
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	if initialEvents {
		// Every ADDED event of the objects is queued; the bookmark that ends them follows.
		for len(wt.ch) > 0 {
			ev := <-wt.ch
			if enc.Encode(map[string]any{"type": ev.typ, "object": ev.obj.Object}) != nil {
				return
			}
		}
		bookmark := map[string]any{"kind": req.res.kind, "apiVersion": req.res.gvr.GroupVersion().String(), "metadata": map[string]any{
			"resourceVersion": strconv.FormatUint(rv, 10), "annotations": map[string]any{metav1.InitialEventsAnnotationKey: "true"}}}
		if enc.Encode(map[string]any{"type": watch.Bookmark, "object": bookmark}) != nil {
			return
		}
	}
	if flusher != nil {
		flusher.Flush()
	}
	for {
		select {
		case ev := <-wt.ch:
			if enc.Encode(map[string]any{"type": ev.typ, "object": ev.obj.Object}) != nil {
				return
			}
			if flusher != nil && len(wt.ch) == 0 {
				flusher.Flush()
			}
		case <-wt.overflow:
			return
		case <-timer.C:
			return
		case <-c.done:
			return
		case <-r.Context().Done():
			return
		}
	}
}

func selectors(q map[string][]string) (labels.Selector, fields.Selector, error) {
	ls, fs := labels.Everything(), fields.Everything()
	var err error
	if v := first(q["labelSelector"]); v != "" {
		if ls, err = labels.Parse(v); err != nil {
			return nil, nil, apierrors.NewBadRequest(fmt.Sprintf("invalid labelSelector: %v", err))
		}
	}
	if v := first(q["fieldSelector"]); v != "" {
		if fs, err = fields.ParseSelector(v); err != nil {
			return nil, nil, apierrors.NewBadRequest(fmt.Sprintf("invalid fieldSelector: %v", err))
		}
	}
	return ls, fs, nil
}

func first(v []string) string {
	if len(v) == 0 {
		return ""
	}
	return v[0]
}

// readObject decodes the object of a create or update.
func readObject(r *http.Request, req request) (*unstructured.Unstructured, error) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody))
	if err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	obj := &unstructured.Unstructured{}
	if strings.HasPrefix(r.Header.Get("Content-Type"), runtime.ContentTypeProtobuf) {
		// controller-runtime's clients send built-in types as protobuf.
		typed, gvk, err := codecs.UniversalDeserializer().Decode(body, nil, nil)
		if err != nil {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("decoding the object: %v", err))
		}
		obj = toUnstructured(typed)
		obj.SetGroupVersionKind(*gvk)
	} else if err := obj.UnmarshalJSON(body); err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("decoding the object: %v", err))
	}
	if obj.GetKind() != req.res.kind {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("the object is a %s, not a %s", obj.GetKind(), req.res.kind))
	}
	if req.res.namespaced {
		if ns := obj.GetNamespace(); ns != "" && ns != req.namespace {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("the namespace of the object (%s) does not match the namespace on the request (%s)", ns, req.namespace))
		}
		obj.SetNamespace(req.namespace)
	}
	if req.name != "" && obj.GetName() == "" {
		obj.SetName(req.name)
	}
	return obj, nil
}

// version is the version of the API server of the machine of node, else the cluster's.
func (c *cluster) version(node string) *version.Info {
	v := c.controlPlaneVersion(node)
	major, minor := "1", ""
	if parts := strings.SplitN(strings.TrimPrefix(v, "v"), ".", 3); len(parts) >= 2 {
		major, minor = parts[0], parts[1]
	}
	return &version.Info{Major: major, Minor: minor, GitVersion: v, Platform: "linux/amd64", GoVersion: "memory"}
}

func reply(w http.ResponseWriter, code int, obj *unstructured.Unstructured, err error) {
	if err != nil {
		writeStatus(w, err)
		return
	}
	writeJSON(w, code, obj.Object)
}

func apiStatus(err error) *metav1.Status {
	var status apierrors.APIStatus
	if s, ok := err.(apierrors.APIStatus); ok {
		status = s
	} else {
		status = apierrors.NewInternalError(err)
	}
	st := status.Status()
	st.Kind, st.APIVersion = "Status", "v1"
	return &st
}

func writeStatus(w http.ResponseWriter, err error) {
	st := apiStatus(err)
	writeJSON(w, int(st.Code), st)
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}
