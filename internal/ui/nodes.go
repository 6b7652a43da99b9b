package ui

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
)

// The states of a Cluster's Nodes view.
const (
	// NodesNotWatched: nobody looks at the page, so the Nodes are not watched.
	NodesNotWatched = "NotWatched"
	// NodesWaiting: the kubeconfig Secret does not exist (yet), or the Nodes are being read.
	NodesWaiting = "Waiting"
	// NodesWatching: the Nodes are watched; Items are they.
	NodesWatching = "Watching"
	// NodesUnavailable: the Secret cannot be read, or the workload cluster does not answer (Message).
	NodesUnavailable = "Unavailable"
)

// kubeconfigKey is the key of the kubeconfig in a <cluster>-kubeconfig Secret.
const kubeconfigKey = "value"

// NodesView is the workload cluster's Nodes.
type NodesView struct {
	State   string     `json:"state"`
	Message string     `json:"message,omitempty"`
	Items   []NodeView `json:"items,omitempty"`
}

// NodeView is a Node of the workload cluster.
type NodeView struct {
	Name string `json:"name"`
	// Roles are the node-role.kubernetes.io/ labels.
	Roles string `json:"roles,omitempty"`
	// Ready is the status of the Ready condition, with its reason and message.
	Ready         string     `json:"ready"`
	ReadyReason   string     `json:"readyReason,omitempty"`
	ReadyMessage  string     `json:"readyMessage,omitempty"`
	Version       string     `json:"version,omitempty"`
	InternalIP    string     `json:"internalIP,omitempty"`
	Machine       string     `json:"machine,omitempty"`
	Unschedulable bool       `json:"unschedulable,omitempty"`
	Created       *time.Time `json:"created,omitempty"`
}

// nodesWatcher watches a Cluster's <cluster>-kubeconfig Secret (that one Secret, by field selector) and,
// with the kubeconfig it holds, the workload cluster's Nodes, for every viewer of the page at once.
type nodesWatcher struct {
	h   *hub
	key key

	cancel context.CancelFunc
	// secretSynced reports whether the Secret's informer has read it (or its absence).
	secretSynced func() bool

	mu         sync.Mutex
	state      string
	message    string
	kubeconfig []byte
	nodes      toolscache.Store
	stopNodes  context.CancelFunc
}

func newNodesWatcher(h *hub, k key) *nodesWatcher {
	return &nodesWatcher{h: h, key: k, state: NodesWaiting, message: fmt.Sprintf("Waiting for the Secret %s-kubeconfig", k.Name)}
}

func (w *nodesWatcher) secretName() string { return w.key.Name + "-kubeconfig" }

// start starts watching the Secret; the Nodes follow.
func (w *nodesWatcher) start(parent context.Context) {
	ctx, cancel := context.WithCancel(parent)
	w.cancel = cancel
	factory := informers.NewSharedInformerFactoryWithOptions(w.h.kube, 0, informers.WithNamespace(w.key.Namespace),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.FieldSelector = fields.OneTermEqualSelector("metadata.name", w.secretName()).String()
		}))
	informer := factory.Core().V1().Secrets().Informer()
	w.secretSynced = informer.HasSynced
	_ = informer.SetWatchErrorHandler(func(_ *toolscache.Reflector, err error) {
		w.set(NodesUnavailable, fmt.Sprintf("Cannot read the Secret %s: %v", w.secretName(), err))
	})
	_, _ = informer.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(o any) { w.secret(ctx, o) },
		UpdateFunc: func(_, o any) { w.secret(ctx, o) },
		DeleteFunc: func(any) {
			w.stopWorkload()
			w.set(NodesWaiting, fmt.Sprintf("Waiting for the Secret %s", w.secretName()))
		},
	})
	factory.Start(ctx.Done())
}

func (w *nodesWatcher) stop() {
	if w.cancel != nil {
		w.cancel()
	}
	w.stopWorkload()
}

func (w *nodesWatcher) set(state, message string) {
	w.mu.Lock()
	changed := w.state != state || w.message != message
	w.state, w.message = state, message
	w.mu.Unlock()
	if changed {
		w.h.markPage(w.key)
	}
}

// secret (re)starts the Node informer when the kubeconfig changes.
func (w *nodesWatcher) secret(ctx context.Context, obj any) {
	s, ok := obj.(*corev1.Secret)
	if !ok {
		return
	}
	data := s.Data[kubeconfigKey]
	w.mu.Lock()
	same := w.nodes != nil && bytes.Equal(data, w.kubeconfig)
	w.mu.Unlock()
	if same {
		return
	}
	w.stopWorkload()
	cfg, err := clientcmd.RESTConfigFromKubeConfig(data)
	if err != nil {
		w.set(NodesUnavailable, fmt.Sprintf("The Secret %s holds no usable kubeconfig under %q: %v", w.secretName(), kubeconfigKey, err))
		return
	}
	cfg.UserAgent = "capstan-ui"
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		w.set(NodesUnavailable, err.Error())
		return
	}
	nodesCtx, cancel := context.WithCancel(ctx)
	factory := informers.NewSharedInformerFactory(kube, 0)
	informer := factory.Core().V1().Nodes().Informer()
	_ = informer.SetWatchErrorHandler(func(_ *toolscache.Reflector, err error) {
		w.set(NodesUnavailable, fmt.Sprintf("The workload cluster's API server (%s) does not answer: %v", cfg.Host, err))
	})
	changed := func(any) {
		if informer.HasSynced() {
			w.set(NodesWatching, "")
		}
		w.h.markPage(w.key)
	}
	_, _ = informer.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc: changed, UpdateFunc: func(_, o any) { changed(o) }, DeleteFunc: changed,
	})
	w.mu.Lock()
	w.kubeconfig, w.nodes, w.stopNodes = data, informer.GetStore(), cancel
	w.mu.Unlock()
	w.set(NodesWaiting, fmt.Sprintf("Reading the Nodes of %s", cfg.Host))
	factory.Start(nodesCtx.Done())
	go func() {
		if toolscache.WaitForCacheSync(nodesCtx.Done(), informer.HasSynced) {
			w.set(NodesWatching, "")
		}
	}()
}

func (w *nodesWatcher) stopWorkload() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stopNodes != nil {
		w.stopNodes()
	}
	w.stopNodes, w.nodes, w.kubeconfig = nil, nil, nil
}

// snapshot is the Nodes view now.
func (w *nodesWatcher) snapshot() NodesView {
	w.mu.Lock()
	defer w.mu.Unlock()
	v := NodesView{State: w.state, Message: w.message}
	if w.nodes == nil || w.state != NodesWatching {
		return v
	}
	for _, o := range w.nodes.List() {
		if n, ok := o.(*corev1.Node); ok {
			v.Items = append(v.Items, nodeView(n))
		}
	}
	slices.SortFunc(v.Items, func(a, b NodeView) int { return cmp.Compare(a.Name, b.Name) })
	return v
}

func nodeView(n *corev1.Node) NodeView {
	v := NodeView{Name: n.Name, Version: n.Status.NodeInfo.KubeletVersion, Machine: n.Annotations["cluster.x-k8s.io/machine"],
		Unschedulable: n.Spec.Unschedulable, Created: objectTime(n.CreationTimestamp), Ready: string(corev1.ConditionUnknown)}
	var roles []string
	for l := range n.Labels {
		if r, ok := strings.CutPrefix(l, "node-role.kubernetes.io/"); ok && r != "" {
			roles = append(roles, r)
		}
	}
	sort.Strings(roles)
	v.Roles = strings.Join(roles, ",")
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			v.Ready, v.ReadyReason, v.ReadyMessage = string(c.Status), c.Reason, c.Message
		}
	}
	for _, a := range n.Status.Addresses {
		if a.Type == corev1.NodeInternalIP {
			v.InternalIP = a.Address
			break
		}
	}
	return v
}
