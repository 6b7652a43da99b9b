package ui

import (
	"bytes"
	"cmp"
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/capstan-dev/capstan/internal/clusterctl/tree"
)

//go:embed web
var web embed.FS

func staticFiles() http.Handler {
	sub, err := fs.Sub(web, "web")
	if err != nil {
		panic(err)
	}
	return http.FileServer(http.FS(sub))
}

// serveIndex serves the single page; its script reads the path.
func (s *Server) serveIndex(w http.ResponseWriter, _ *http.Request) {
	data, err := web.ReadFile("web/index.html")
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	_, _ = w.Write(data)
}

// ClusterList is the answer of /api/clusters.
type ClusterList struct {
	Clusters []*ClusterRow `json:"clusters"`
	// Notice says why there are no Clusters to show (Cluster API not installed).
	Notice string `json:"notice,omitempty"`
}

func (s *Server) serveClusters(w http.ResponseWriter, _ *http.Request) {
	rows := s.hub.snapshotRows()
	sortRows(rows)
	writeJSON(w, ClusterList{Clusters: rows, Notice: s.hub.currentNotice()})
}

func (s *Server) serveCluster(w http.ResponseWriter, r *http.Request) {
	k := key{Namespace: r.PathValue("namespace"), Name: r.PathValue("name")}
	d, err := s.hub.discover(r.Context(), k)
	if err != nil {
		writeError(w, err)
		return
	}
	s.hub.mu.Lock()
	var nodes *nodesWatcher
	if p := s.hub.pages[k]; p != nil {
		nodes = p.nodes
	}
	s.hub.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(encodePage(d.page(r.Context(), viewOptionsFrom(r.URL.Query()), nodes)))
}

// ObjectDetails is what a row of the tree opens to: the object's conditions, Events and YAML.
type ObjectDetails struct {
	APIVersion string      `json:"apiVersion"`
	Kind       string      `json:"kind"`
	Name       string      `json:"name"`
	Conditions []Condition `json:"conditions"`
	// V1Beta1Conditions are the v1beta1 conditions (with severities).
	V1Beta1Conditions []Condition `json:"v1beta1Conditions"`
	Events            []EventView `json:"events"`
	YAML              string      `json:"yaml"`
}

// EventView is an Event about an object.
type EventView struct {
	Type    string     `json:"type"`
	Reason  string     `json:"reason"`
	Message string     `json:"message"`
	Count   int32      `json:"count"`
	Source  string     `json:"source,omitempty"`
	Last    *time.Time `json:"last,omitempty"`
}

// serveObject answers the details of an object of a Cluster's tree. Only the objects of the Cluster's
// tree (with every option on) can be read: the view does not read arbitrary kinds, nor Secrets.
func (s *Server) serveObject(w http.ResponseWriter, r *http.Request) {
	k := key{Namespace: r.PathValue("namespace"), Name: r.PathValue("name")}
	q := r.URL.Query()
	apiVersion, kind, name := q.Get("apiVersion"), q.Get("kind"), q.Get("name")
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil || kind == "" || name == "" || gv.Group == "" {
		http.Error(w, "apiVersion (of a group), kind and name are required", http.StatusBadRequest)
		return
	}
	d, err := s.hub.discover(r.Context(), k)
	if err != nil {
		writeError(w, err)
		return
	}
	full := tree.Build(d.objs, tree.Options{ShowMachineSets: true, ShowTemplates: true, Echo: true, ShowResourceSets: true})
	if !inTree(full.Root, apiVersion, kind, name) {
		http.Error(w, fmt.Sprintf("%s %s is not an object of Cluster %s", kind, name, k), http.StatusNotFound)
		return
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gv.WithKind(kind))
	rd := &clusterReader{h: s.hub, cluster: k.Name}
	if err := rd.Get(r.Context(), client.ObjectKey{Namespace: k.Namespace, Name: name}, u); err != nil {
		writeError(w, err)
		return
	}
	v2, v1 := tree.ObjectConditions(u)
	out := ObjectDetails{APIVersion: apiVersion, Kind: kind, Name: name,
		Conditions: conditionsOf(v2, false), V1Beta1Conditions: conditionsOf(v1, true), Events: []EventView{}}
	events := &corev1.EventList{}
	if err := s.hub.cache.List(r.Context(), events, client.InNamespace(k.Namespace), client.MatchingFields{involvedUIDField: string(u.GetUID())}); err != nil {
		writeError(w, err)
		return
	}
	for _, e := range events.Items {
		last := cmp.Or(e.LastTimestamp.Time, e.EventTime.Time, e.FirstTimestamp.Time, e.CreationTimestamp.Time)
		ev := EventView{Type: e.Type, Reason: e.Reason, Message: e.Message, Count: max(e.Count, 1), Source: cmp.Or(e.Source.Component, e.ReportingController)}
		if !last.IsZero() {
			ev.Last = &last
		}
		out.Events = append(out.Events, ev)
	}
	slices.SortStableFunc(out.Events, func(a, b EventView) int {
		return cmp.Compare(timeOrZero(b.Last).UnixNano(), timeOrZero(a.Last).UnixNano())
	})
	data, err := yaml.Marshal(u.Object)
	if err != nil {
		writeError(w, err)
		return
	}
	out.YAML = string(data)
	writeJSON(w, out)
}

func timeOrZero(t *time.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return *t
}

// inTree reports whether an object (or a member of a group row) is in the tree.
func inTree(n *tree.Node, apiVersion, kind, name string) bool {
	if !n.Virtual && n.APIVersion == apiVersion && n.Kind == kind && (n.Name == name || slices.Contains(n.Items, name)) {
		return true
	}
	for _, c := range n.Children {
		if inTree(c, apiVersion, kind, name) {
			return true
		}
	}
	return false
}

// watchClusters streams the list: a "rows" event with every row, then one with the rows that changed
// (upsert) and the Clusters that are gone (delete) after each change.
func (s *Server) watchClusters(w http.ResponseWriter, r *http.Request) {
	stream, ok := newEventStream(w)
	if !ok {
		return
	}
	sub := s.hub.subscribeList()
	defer s.hub.unsubscribeList(sub)
	rows := s.hub.snapshotRows()
	sortRows(rows)
	if stream.send("rows", rowsEvent{Reset: true, Upsert: rows, Delete: []string{}, Notice: s.hub.currentNotice()}) != nil {
		return
	}
	stream.follow(r.Context(), sub.notify, func() error {
		ev := rowsEvent{Upsert: []*ClusterRow{}, Delete: []string{}, Notice: s.hub.currentNotice()}
		for k, row := range sub.take() {
			if row == nil {
				ev.Delete = append(ev.Delete, k.String())
			} else {
				ev.Upsert = append(ev.Upsert, row)
			}
		}
		return stream.send("rows", ev)
	})
}

type rowsEvent struct {
	// Reset says that the rows are all the rows.
	Reset  bool          `json:"reset,omitempty"`
	Upsert []*ClusterRow `json:"upsert"`
	// Delete are namespace/name of Clusters that are gone.
	Delete []string `json:"delete"`
	// Notice says why there are no Clusters to show (Cluster API not installed).
	Notice string `json:"notice,omitempty"`
}

// watchCluster streams a Cluster's page: a "page" event with the page for the viewer's options, then
// one after each change; "gone" when the Cluster does not exist (any more).
func (s *Server) watchCluster(w http.ResponseWriter, r *http.Request) {
	k := key{Namespace: r.PathValue("namespace"), Name: r.PathValue("name")}
	stream, ok := newEventStream(w)
	if !ok {
		return
	}
	sub := s.hub.subscribePage(k, viewOptionsFrom(r.URL.Query()))
	defer s.hub.unsubscribePage(sub)
	// The first page is computed for this viewer; the next ones are the hub's, shared.
	s.hub.markPage(k)
	var last []byte
	stream.follow(r.Context(), sub.notify, func() error {
		data := sub.take()
		if data == nil || bytes.Equal(data, last) {
			return nil
		}
		last = data
		return stream.sendRaw("page", data)
	})
}

// eventStream writes server-sent events.
type eventStream struct {
	w         http.ResponseWriter
	rc        *http.ResponseController
	heartbeat *time.Ticker
}

func newEventStream(w http.ResponseWriter) (*eventStream, bool) {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	s := &eventStream{w: w, rc: http.NewResponseController(w), heartbeat: time.NewTicker(20 * time.Second)}
	if err := s.rc.Flush(); err != nil {
		return nil, false
	}
	return s, true
}

// follow calls send after each notification, and pings the viewer every 20 s, until the request ends
// or a write fails.
func (s *eventStream) follow(ctx context.Context, notify <-chan struct{}, send func() error) {
	defer s.heartbeat.Stop()
	for {
		var err error
		select {
		case <-ctx.Done():
			return
		case <-s.heartbeat.C:
			err = s.ping()
		case <-notify:
			err = send()
		}
		if err != nil {
			return
		}
	}
}

func (s *eventStream) send(event string, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return s.sendRaw(event, data)
}

func (s *eventStream) sendRaw(event string, data []byte) error {
	if _, err := fmt.Fprintf(s.w, "event: %s\ndata: %s\n\n", event, data); err != nil {
		return err
	}
	return s.rc.Flush()
}

func (s *eventStream) ping() error {
	if _, err := fmt.Fprint(s.w, ": ping\n\n"); err != nil {
		return err
	}
	return s.rc.Flush()
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	if err := json.NewEncoder(w).Encode(v); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
	}
}

func writeError(w http.ResponseWriter, err error) {
	switch {
	case errors.Is(err, errGone), apierrors.IsNotFound(err):
		http.Error(w, err.Error(), http.StatusNotFound)
	default:
		http.Error(w, err.Error(), http.StatusInternalServerError)
	}
}
