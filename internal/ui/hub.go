package ui

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
)

// Index names of the cache.
const (
	// clusterNameField indexes the Cluster API kinds that have spec.clusterName, so that a Cluster's
	// page reads its own objects and not its namespace's.
	clusterNameField = "spec.clusterName"
	// involvedUIDField indexes Events by the object they are about.
	involvedUIDField = "involvedObject.uid"
)

var (
	clusterGVK = clusterv1.GroupVersion.WithKind("Cluster")
	// byClusterName are the kinds indexed by clusterNameField.
	byClusterName = []schema.GroupVersionKind{
		clusterv1.GroupVersion.WithKind("MachineDeployment"),
		clusterv1.GroupVersion.WithKind("MachineSet"),
		clusterv1.GroupVersion.WithKind("Machine"),
		clusterv1.GroupVersion.WithKind("MachinePool"),
	}
)

// key names a Cluster.
type key struct{ Namespace, Name string }

func (k key) String() string { return k.Namespace + "/" + k.Name }

// objKey names an object of a Cluster's page (its group left out, as Events name objects).
type objKey struct{ Kind, Namespace, Name string }

// hub holds the informer cache every viewer shares, keeps the rows of the Cluster list, recomputes
// what a change touches after a short debounce, and pushes it to the viewers subscribed to it.
type hub struct {
	opts   Options
	scheme *runtime.Scheme
	cache  cache.Cache
	kube   kubernetes.Interface

	mu         sync.Mutex
	rows       map[key]*ClusterRow
	listSubs   map[*listSub]struct{}
	pages      map[key]*pageState
	owners     map[objKey]map[key]struct{}
	dirtyRows  map[key]struct{}
	dirtyPages map[key]struct{}
	kick       chan struct{}
	// warmed is closed once warm has started the informers of the Clusters' kinds.
	warmed chan struct{}
	// notice is what the list says when it cannot show Clusters (Cluster API not installed).
	notice  string
	indexed map[schema.GroupVersionKind]bool

	kindsMu sync.Mutex
	kinds   map[schema.GroupVersionKind]*kindState

	ctx context.Context
	wg  sync.WaitGroup
}

// missingRetry is how long a kind found not served (or not readable) is taken as such.
const missingRetry = 10 * time.Second

// kindState is what the hub knows of a kind it reads: whether its informer runs, or when it was last
// found not served (or not readable), not to ask the API server again at every computation.
type kindState struct {
	mu        sync.Mutex
	watched   bool
	missingAt time.Time
	err       error
}

// pageState is a Cluster page that someone looks at.
type pageState struct {
	subs map[*pageSub]struct{}
	// objects are the objects of the page's last computation (for owners).
	objects []objKey
	nodes   *nodesWatcher
	linger  *time.Timer
}

func newHub(o Options) (*hub, error) {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return nil, err
	}
	if err := apiextensionsv1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	cacheOpts := cache.Options{Scheme: scheme, DefaultTransform: cache.TransformStripManagedFields()}
	if o.Namespace != "" {
		cacheOpts.DefaultNamespaces = map[string]cache.Config{o.Namespace: {}}
		// CRDs are cluster-scoped.
		cacheOpts.ByObject = map[client.Object]cache.ByObject{
			&apiextensionsv1.CustomResourceDefinition{}: {Namespaces: map[string]cache.Config{cache.AllNamespaces: {}}},
		}
	}
	c, err := cache.New(o.Config, cacheOpts)
	if err != nil {
		return nil, fmt.Errorf("creating the informer cache: %w", err)
	}
	kube, err := kubernetes.NewForConfig(o.Config)
	if err != nil {
		return nil, err
	}
	return &hub{
		opts: o, scheme: scheme, cache: c, kube: kube,
		rows: map[key]*ClusterRow{}, listSubs: map[*listSub]struct{}{}, pages: map[key]*pageState{},
		owners: map[objKey]map[key]struct{}{}, dirtyRows: map[key]struct{}{}, dirtyPages: map[key]struct{}{},
		kick: make(chan struct{}, 1), warmed: make(chan struct{}), indexed: map[schema.GroupVersionKind]bool{}, kinds: map[schema.GroupVersionKind]*kindState{},
	}, nil
}

// start registers the indexes, starts the cache and waits until the Clusters are read, then computes
// the list's rows and starts pushing changes.
func (h *hub) start(ctx context.Context) error {
	h.ctx = ctx
	if err := h.cache.IndexField(ctx, &corev1.Event{}, involvedUIDField, func(o client.Object) []string {
		return []string{string(o.(*corev1.Event).InvolvedObject.UID)}
	}); err != nil {
		return fmt.Errorf("indexing Events: %w", err)
	}
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		if err := h.cache.Start(ctx); err != nil {
			h.opts.Log.Error(err, "The informer cache stopped")
		}
	}()
	syncCtx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	if !h.cache.WaitForCacheSync(syncCtx) {
		return errors.New("the informer cache did not start within 2 minutes")
	}
	if err := h.watch(syncCtx, &corev1.Event{}); err != nil {
		return fmt.Errorf("watching Events: %w; the web view needs to get, list and watch Clusters, Cluster API objects and Events (see docs/ui.md)", err)
	}
	err := h.startClusters(syncCtx)
	switch {
	case meta.IsNoMatchError(err):
		// `capstan up --ui` starts before `clusterctl init` installs Cluster API.
		h.setNotice("Cluster API is not installed in this management cluster yet: it serves no Cluster kind (install it with clusterctl init). The Clusters show here once it is.")
		h.wg.Add(1)
		go func() {
			defer h.wg.Done()
			h.waitForClusterAPI(ctx)
		}()
	case err != nil:
		return fmt.Errorf("watching Clusters: %w; the web view needs to get, list and watch Clusters, Cluster API objects and Events (see docs/ui.md)", err)
	default:
		h.wg.Add(1)
		go func() {
			defer h.wg.Done()
			h.warm(ctx)
		}()
	}
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		h.loop(ctx)
	}()
	return nil
}

// startClusters watches the Clusters and the kinds indexed by cluster name, and computes the rows.
func (h *hub) startClusters(ctx context.Context) error {
	clusters := &unstructured.Unstructured{}
	clusters.SetGroupVersionKind(clusterGVK)
	if err := h.watch(ctx, clusters); err != nil {
		return err
	}
	for _, gvk := range byClusterName {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(gvk)
		if !h.indexed[gvk] {
			err := h.cache.IndexField(ctx, u, clusterNameField, func(o client.Object) []string {
				name, _, _ := unstructured.NestedString(o.(*unstructured.Unstructured).Object, "spec", "clusterName")
				return []string{name}
			})
			if meta.IsNoMatchError(err) {
				continue
			}
			if err != nil {
				return fmt.Errorf("indexing %ss by %s: %w", gvk.Kind, clusterNameField, err)
			}
			h.indexed[gvk] = true
		}
		if err := h.watch(ctx, u); err != nil && !isMissing(err) {
			return fmt.Errorf("watching %ss: %w", gvk.Kind, err)
		}
	}
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(clusterGVK.GroupVersion().WithKind("ClusterList"))
	if err := h.cache.List(ctx, list, client.UnsafeDisableDeepCopy); err != nil {
		return fmt.Errorf("listing Clusters: %w", err)
	}
	rows := map[key]*ClusterRow{}
	for i := range list.Items {
		row, err := h.computeRow(ctx, &list.Items[i])
		if err != nil {
			return err
		}
		rows[key{Namespace: row.Namespace, Name: row.Name}] = row
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for k, row := range rows {
		h.rows[k] = row
	}
	for s := range h.listSubs {
		s.add(rows)
	}
	return nil
}

// waitForClusterAPI watches the Clusters once their kind is served.
func (h *hub) waitForClusterAPI(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			close(h.warmed)
			return
		case <-time.After(missingRetry):
		}
		err := h.startClusters(ctx)
		if err == nil {
			h.opts.Log.Info("Cluster API is installed: watching the Clusters")
			h.setNotice("")
			h.warm(ctx)
			return
		}
		if !meta.IsNoMatchError(err) {
			h.opts.Log.Error(err, "Watching the Clusters")
		}
	}
}

// setNotice sets what the list says instead of its rows, and tells the list's viewers.
func (h *hub) setNotice(notice string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.notice = notice
	for s := range h.listSubs {
		s.add(nil)
	}
}

func (h *hub) currentNotice() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.notice
}

// warm starts, in the background and all at once, the informers a Cluster's page reads besides those
// of start: ClusterClasses, the CRDs' metadata (for contracts), ClusterResourceSetBindings, and the kinds
// the Clusters and Machines refer to, so that the first look at a page does not wait for them.
func (h *hub) warm(ctx context.Context) {
	defer close(h.warmed)
	objs := []client.Object{}
	for _, kind := range []string{"ClusterClass"} {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(clusterv1.GroupVersion.WithKind(kind))
		objs = append(objs, u)
	}
	crds := &metav1.PartialObjectMetadata{}
	crds.SetGroupVersionKind(apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition"))
	bindings := &unstructured.Unstructured{}
	bindings.SetGroupVersionKind(schema.GroupVersionKind{Group: "addons.cluster.x-k8s.io", Version: "v1beta1", Kind: "ClusterResourceSetBinding"})
	objs = append(objs, crds, bindings)
	kinds := map[schema.GroupVersionKind]bool{}
	addRef := func(m map[string]any, path ...string) {
		ref, _, _ := unstructured.NestedMap(m, path...)
		apiVersion, _ := ref["apiVersion"].(string)
		kind, _ := ref["kind"].(string)
		if apiVersion != "" && kind != "" {
			kinds[schema.FromAPIVersionAndKind(apiVersion, kind)] = true
		}
	}
	for _, kind := range []string{"Cluster", "Machine", "MachinePool"} {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(clusterv1.GroupVersion.WithKind(kind + "List"))
		if err := h.cache.List(ctx, list, client.UnsafeDisableDeepCopy); err != nil {
			continue
		}
		for _, o := range list.Items {
			addRef(o.Object, "spec", "infrastructureRef")
			addRef(o.Object, "spec", "controlPlaneRef")
			addRef(o.Object, "spec", "bootstrap", "configRef")
			addRef(o.Object, "spec", "template", "spec", "infrastructureRef")
			addRef(o.Object, "spec", "template", "spec", "bootstrap", "configRef")
		}
	}
	for gvk := range kinds {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(gvk)
		objs = append(objs, u)
	}
	var wg sync.WaitGroup
	for _, o := range objs {
		wg.Go(func() {
			if err := h.watch(ctx, o); err != nil && !isMissing(err) {
				h.opts.Log.Info("Not watching a kind", "kind", o.GetObjectKind().GroupVersionKind().Kind, "reason", err.Error())
			}
		})
	}
	wg.Wait()
}

func (h *hub) wait() { h.wg.Wait() }

// watch makes sure the informer of obj's kind runs and tells the hub of its changes; it waits until
// the informer has read its objects. A kind that is not served, or that the server cannot read, is
// tried again at most every missingRetry.
func (h *hub) watch(ctx context.Context, obj client.Object) error {
	gvk := obj.GetObjectKind().GroupVersionKind()
	if gvk.Empty() {
		var err error
		if gvk, err = apiutil.GVKForObject(obj, h.scheme); err != nil {
			return err
		}
	}
	h.kindsMu.Lock()
	k := h.kinds[gvk]
	if k == nil {
		k = &kindState{}
		h.kinds[gvk] = k
	}
	h.kindsMu.Unlock()

	k.mu.Lock()
	defer k.mu.Unlock()
	if k.watched {
		return nil
	}
	if !k.missingAt.IsZero() && time.Since(k.missingAt) < missingRetry {
		return k.err
	}
	// A first read of a kind waits for its informer; a kind that cannot be read must not hold a page.
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	informer, err := h.cache.GetInformer(ctx, obj)
	if err == nil {
		_, err = informer.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
			AddFunc:    h.changed,
			UpdateFunc: func(_, o any) { h.changed(o) },
			DeleteFunc: h.changed,
		})
	}
	if err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("the %s informer did not sync within 30s (can the view's user list and watch them?): %w", gvk.Kind, err)
		}
		k.missingAt, k.err = time.Now(), err
		return err
	}
	k.watched = true
	return nil
}

// changed is called by the informers: it marks the Clusters an object belongs to.
func (h *hub) changed(obj any) {
	if t, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	if e, ok := obj.(*corev1.Event); ok {
		h.mu.Lock()
		for k := range h.owners[objKey{Kind: e.InvolvedObject.Kind, Namespace: e.InvolvedObject.Namespace, Name: e.InvolvedObject.Name}] {
			h.dirtyPages[k] = struct{}{}
		}
		h.mu.Unlock()
		h.signal()
		return
	}
	o, ok := obj.(client.Object)
	if !ok {
		return
	}
	kind := o.GetObjectKind().GroupVersionKind().Kind
	ns := o.GetNamespace()
	h.mu.Lock()
	mark := func(k key) {
		h.dirtyRows[k] = struct{}{}
		if _, watched := h.pages[k]; watched {
			h.dirtyPages[k] = struct{}{}
		}
	}
	if o.GetObjectKind().GroupVersionKind().GroupKind() == clusterGVK.GroupKind() {
		mark(key{Namespace: ns, Name: o.GetName()})
	}
	if name := o.GetLabels()[clusterv1.ClusterNameLabel]; name != "" {
		mark(key{Namespace: ns, Name: name})
	}
	if u, ok := o.(*unstructured.Unstructured); ok {
		if name, _, _ := unstructured.NestedString(u.Object, "spec", "clusterName"); name != "" {
			mark(key{Namespace: ns, Name: name})
		}
	}
	for _, ref := range o.GetOwnerReferences() {
		if ref.Kind == "Cluster" && schema.FromAPIVersionAndKind(ref.APIVersion, ref.Kind).Group == clusterv1.GroupVersion.Group {
			mark(key{Namespace: ns, Name: ref.Name})
		}
	}
	// A ClusterClass is not in its Clusters' namespace necessarily; the pages that read it are its owners.
	for k := range h.owners[objKey{Kind: kind, Namespace: ns, Name: o.GetName()}] {
		mark(k)
	}
	h.mu.Unlock()
	h.signal()
}

func (h *hub) markPage(k key) {
	h.mu.Lock()
	h.dirtyPages[k] = struct{}{}
	h.mu.Unlock()
	h.signal()
}

func (h *hub) signal() {
	select {
	case h.kick <- struct{}{}:
	default:
	}
}

// loop recomputes what changed, at most once per debounce period.
func (h *hub) loop(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			h.stopPages()
			return
		case <-h.kick:
		}
		select {
		case <-ctx.Done():
			h.stopPages()
			return
		case <-time.After(h.opts.Debounce):
		}
		h.flush(ctx)
	}
}

func (h *hub) flush(ctx context.Context) {
	h.mu.Lock()
	rows, pages := h.dirtyRows, h.dirtyPages
	h.dirtyRows, h.dirtyPages = map[key]struct{}{}, map[key]struct{}{}
	h.mu.Unlock()

	changes := map[key]*ClusterRow{}
	for k := range rows {
		row, err := h.readRow(ctx, k)
		if err != nil {
			h.opts.Log.Error(err, "Reading a Cluster", "cluster", k.String())
			continue
		}
		changes[k] = row
	}
	h.mu.Lock()
	for k, row := range changes {
		old := h.rows[k]
		switch {
		case row == nil && old == nil:
			delete(changes, k)
		case row == nil:
			delete(h.rows, k)
		case old != nil && *old == *row:
			delete(changes, k)
		default:
			h.rows[k] = row
		}
	}
	if len(changes) > 0 {
		for s := range h.listSubs {
			s.add(changes)
		}
	}
	h.mu.Unlock()

	for k := range pages {
		h.pushPage(ctx, k)
	}
}

// readRow reads a Cluster from the cache and computes its row; nil when it is gone.
func (h *hub) readRow(ctx context.Context, k key) (*ClusterRow, error) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(clusterGVK)
	if err := h.cache.Get(ctx, client.ObjectKey{Namespace: k.Namespace, Name: k.Name}, u); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, err
	}
	return h.computeRow(ctx, u)
}

// snapshotRows returns the rows of the list.
func (h *hub) snapshotRows() []*ClusterRow {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]*ClusterRow, 0, len(h.rows))
	for _, r := range h.rows {
		out = append(out, r)
	}
	return out
}

// subscribeList adds a viewer of the list, with every row pending.
func (h *hub) subscribeList() *listSub {
	s := newListSub()
	h.mu.Lock()
	defer h.mu.Unlock()
	h.listSubs[s] = struct{}{}
	return s
}

func (h *hub) unsubscribeList(s *listSub) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.listSubs, s)
}

// subscribePage adds a viewer of a Cluster's page and starts watching the workload cluster's Nodes
// if nobody did.
func (h *hub) subscribePage(k key, opts viewOptions) *pageSub {
	s := &pageSub{key: k, opts: opts, notify: make(chan struct{}, 1)}
	h.mu.Lock()
	p := h.pages[k]
	if p == nil {
		p = &pageState{subs: map[*pageSub]struct{}{}}
		h.pages[k] = p
	}
	if p.linger != nil {
		p.linger.Stop()
		p.linger = nil
	}
	if p.nodes == nil {
		p.nodes = newNodesWatcher(h, k)
		p.nodes.start(h.ctx)
	}
	p.subs[s] = struct{}{}
	h.mu.Unlock()
	return s
}

// unsubscribePage removes a viewer; the page's watches stop NodesLinger after its last viewer left.
func (h *hub) unsubscribePage(s *pageSub) {
	h.mu.Lock()
	defer h.mu.Unlock()
	p := h.pages[s.key]
	if p == nil {
		return
	}
	delete(p.subs, s)
	if len(p.subs) > 0 {
		return
	}
	p.linger = time.AfterFunc(h.opts.NodesLinger, func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		if len(p.subs) > 0 || h.pages[s.key] != p {
			return
		}
		p.nodes.stop()
		h.setOwners(s.key, p, nil)
		delete(h.pages, s.key)
	})
}

func (h *hub) stopPages() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, p := range h.pages {
		if p.linger != nil {
			p.linger.Stop()
		}
		p.nodes.stop()
	}
}

// setOwners records the objects a page read, so that their changes and Events reach it. h.mu is held.
func (h *hub) setOwners(k key, p *pageState, objects []objKey) {
	for _, o := range p.objects {
		delete(h.owners[o], k)
		if len(h.owners[o]) == 0 {
			delete(h.owners, o)
		}
	}
	p.objects = objects
	for _, o := range objects {
		if h.owners[o] == nil {
			h.owners[o] = map[key]struct{}{}
		}
		h.owners[o][k] = struct{}{}
	}
}

// pushPage recomputes a watched Cluster's page once per set of view options and sends it to the
// page's viewers.
func (h *hub) pushPage(ctx context.Context, k key) {
	h.mu.Lock()
	p := h.pages[k]
	var subs []*pageSub
	if p != nil {
		for s := range p.subs {
			subs = append(subs, s)
		}
	}
	h.mu.Unlock()
	if len(subs) == 0 {
		return
	}
	data, err := h.discover(ctx, k)
	if errors.Is(err, errGone) {
		for _, s := range subs {
			s.set([]byte(`{"gone":true}`))
		}
		return
	}
	if err != nil {
		h.opts.Log.Error(err, "Reading a Cluster's objects", "cluster", k.String())
		return
	}
	h.mu.Lock()
	if h.pages[k] == p {
		h.setOwners(k, p, data.owned())
	}
	h.mu.Unlock()
	pages := map[viewOptions][]byte{}
	for _, s := range subs {
		out, ok := pages[s.opts]
		if !ok {
			out = encodePage(data.page(ctx, s.opts, p.nodes))
			pages[s.opts] = out
		}
		s.set(out)
	}
}

// isMissing reports whether err says that a kind is not served or that an object does not exist.
func isMissing(err error) bool {
	return err != nil && (apierrors.IsNotFound(err) || meta.IsNoMatchError(err))
}

// listSub is a viewer of the list: the rows changed since its last read, nil for a deleted Cluster.
type listSub struct {
	mu      sync.Mutex
	pending map[key]*ClusterRow
	notify  chan struct{}
}

func newListSub() *listSub {
	return &listSub{pending: map[key]*ClusterRow{}, notify: make(chan struct{}, 1)}
}

func (s *listSub) add(changes map[key]*ClusterRow) {
	s.mu.Lock()
	for k, r := range changes {
		s.pending[k] = r
	}
	s.mu.Unlock()
	select {
	case s.notify <- struct{}{}:
	default:
	}
}

func (s *listSub) take() map[key]*ClusterRow {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.pending
	s.pending = map[key]*ClusterRow{}
	return out
}

// pageSub is a viewer of a Cluster's page: the latest page for its options.
type pageSub struct {
	key    key
	opts   viewOptions
	mu     sync.Mutex
	latest []byte
	notify chan struct{}
}

func (s *pageSub) set(data []byte) {
	s.mu.Lock()
	s.latest = data
	s.mu.Unlock()
	select {
	case s.notify <- struct{}{}:
	default:
	}
}

func (s *pageSub) take() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.latest
	s.latest = nil
	return out
}

// errGone says that a Cluster does not exist (any more).
var errGone = errors.New("the Cluster does not exist")

// objectTime is a Kubernetes time as JSON: nil for the zero time.
func objectTime(t metav1.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	out := t.Time
	return &out
}
