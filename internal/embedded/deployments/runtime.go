package deployments

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/capstan-dev/capstan/internal/localnet"
	"github.com/capstan-dev/capstan/internal/supervisor"
)

// Condition reasons the runtime writes on Deployments it cannot run.
const (
	// ReasonImageNotRunnable says a container's image is not one the runtime can run locally.
	ReasonImageNotRunnable = "ImageNotRunnableLocally"
	// ReasonCannotStart says the runtime could not start the Deployment's processes.
	ReasonCannotStart = "CannotStartLocally"
)

// Runtime runs capstan Deployments as local processes.
type Runtime struct {
	// Client is the manager's client.
	Client client.Client
	// Capstan is the path of the capstan executable that runs every replica.
	Capstan string
	// Images are the image repositories that are capstan's (without tag), e.g. ghcr.io/capstan-dev/capstan.
	Images []string
	// Executables maps other image repositories (without tag) to the local executable that stands for
	// the image's entrypoint: containers of those images run it with their arguments, as capstan's run
	// Capstan. `capstan conformance --executable` fills it for a provider author's own manager.
	Executables map[string]string
	// Dir holds per-replica files: kubeconfigs, tokens and logs.
	Dir string
	// Server and CAData describe the API server for the replicas' kubeconfigs.
	Server string
	CAData []byte
	// FreePort returns a free loopback port.
	FreePort func() (int, error)
	// Supervisor tunes how processes are restarted.
	Supervisor supervisor.Options

	mu        sync.Mutex
	runs      map[types.NamespacedName]*run
	addresses localnet.Allocator
}

// run is the processes of one Deployment.
type run struct {
	hash     string
	replicas []*replica
	tokenAt  time.Time
}

type replica struct {
	name string
	// address is the replica's address in the pod network, for EndpointSlices.
	address string
	proc    *supervisor.Process
	health  string
	// ports maps the ports the container's flags named to the loopback ports that replace them.
	ports   map[int32]int32
	volumes *volumes
	isReady atomic.Bool
	started time.Time
}

// SetupWithManager adds the runtime's controller to mgr.
func (r *Runtime) SetupWithManager(mgr ctrl.Manager) error {
	r.runs = map[types.NamespacedName]*run{}
	err := ctrl.NewControllerManagedBy(mgr).
		For(&appsv1.Deployment{}).
		// The files of Secret and ConfigMap volumes follow the objects.
		Watches(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(r.deploymentsUsing)).
		Watches(&corev1.ConfigMap{}, handler.EnqueueRequestsFromMapFunc(r.deploymentsUsing)).
		WithOptions(controller.Options{MaxConcurrentReconciles: 4}).
		Named("local-runtime").
		Complete(r)
	if err != nil {
		return err
	}
	return r.setupServices(mgr)
}

// deploymentsUsing returns the Deployments the runtime runs in the namespace of a Secret or ConfigMap
// whose volumes use it.
func (r *Runtime) deploymentsUsing(ctx context.Context, o client.Object) []reconcile.Request {
	_, isSecret := o.(*corev1.Secret)
	r.mu.Lock()
	var keys []types.NamespacedName
	for key, rn := range r.runs {
		if key.Namespace == o.GetNamespace() && len(rn.replicas) > 0 {
			keys = append(keys, key)
		}
	}
	r.mu.Unlock()
	var out []reconcile.Request
	for _, key := range keys {
		d := &appsv1.Deployment{}
		if err := r.Client.Get(ctx, key, d); err != nil {
			continue
		}
		if usesObject(d, o.GetName(), isSecret) {
			out = append(out, reconcile.Request{NamespacedName: key})
		}
	}
	return out
}

// usesObject reports whether a Deployment's volumes use the Secret (or ConfigMap) called name.
func usesObject(d *appsv1.Deployment, name string, secret bool) bool {
	for _, v := range d.Spec.Template.Spec.Volumes {
		switch {
		case secret && v.Secret != nil && v.Secret.SecretName == name, !secret && v.ConfigMap != nil && v.ConfigMap.Name == name:
			return true
		case v.Projected != nil:
			for _, src := range v.Projected.Sources {
				if secret && src.Secret != nil && src.Secret.Name == name || !secret && src.ConfigMap != nil && src.ConfigMap.Name == name {
					return true
				}
			}
		}
	}
	return false
}

// Stop stops every process the runtime started.
func (r *Runtime) Stop() {
	r.mu.Lock()
	runs := r.runs
	r.runs = map[types.NamespacedName]*run{}
	r.mu.Unlock()
	var wg sync.WaitGroup
	for _, rn := range runs {
		for _, rep := range rn.replicas {
			wg.Add(1)
			go func() { defer wg.Done(); rep.proc.Stop() }()
		}
	}
	wg.Wait()
}

// Reconcile makes the local processes of one Deployment match it and writes its status.
func (r *Runtime) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	log := ctrl.LoggerFrom(ctx)
	d := &appsv1.Deployment{}
	if err := r.Client.Get(ctx, req.NamespacedName, d); err != nil {
		if apierrors.IsNotFound(err) {
			r.stop(req.NamespacedName, 0, log)
			return reconcile.Result{}, nil
		}
		return reconcile.Result{}, err
	}
	if !d.DeletionTimestamp.IsZero() {
		r.stop(req.NamespacedName, 0, log)
		return reconcile.Result{}, nil
	}
	if reason := r.notRunnable(d); reason != "" {
		r.stop(req.NamespacedName, 0, log)
		return reconcile.Result{}, r.writeUnrunnable(ctx, d, ReasonImageNotRunnable, reason)
	}
	if reason := unsupportedVolume(d); reason != "" {
		r.stop(req.NamespacedName, 0, log)
		return reconcile.Result{}, r.writeUnrunnable(ctx, d, ReasonVolumeNotSupported, reason)
	}

	desired := int(ptr.Deref(d.Spec.Replicas, 1))
	hash := templateHash(d)
	rn := r.get(req.NamespacedName)
	if rn.hash != hash {
		if len(rn.replicas) > 0 {
			log.Info("Rolling out a new template", "Deployment", klogKey(d))
		}
		r.stop(req.NamespacedName, 0, log)
		rn = r.get(req.NamespacedName)
		rn.hash = hash
	}
	if len(rn.replicas) > desired {
		log.Info("Scaling down", "Deployment", klogKey(d), "replicas", desired)
		r.stop(req.NamespacedName, desired, log)
	}
	if len(rn.replicas) < desired {
		kubeconfig, err := r.kubeconfig(ctx, d, rn)
		if err == nil {
			for i := len(rn.replicas); i < desired; i++ {
				var rep *replica
				if rep, err = r.start(ctx, d, i, kubeconfig); err != nil {
					break
				}
				r.mu.Lock()
				rn.replicas = append(rn.replicas, rep)
				r.mu.Unlock()
			}
		}
		if err != nil {
			log.Error(err, "Starting local processes failed", "Deployment", klogKey(d))
			return reconcile.Result{RequeueAfter: 10 * time.Second}, r.writeUnrunnable(ctx, d, ReasonCannotStart, err.Error())
		}
	} else if desired > 0 && time.Since(rn.tokenAt) > 12*time.Hour {
		if _, err := r.kubeconfig(ctx, d, rn); err != nil {
			return reconcile.Result{}, err
		}
	}

	ready := 0
	requeue := 15 * time.Second
	for _, rep := range rn.replicas {
		// Secrets and ConfigMaps change, tokens expire: the files of the volumes follow.
		if err := r.syncVolumes(ctx, d, rep.name, rep.volumes); err != nil {
			log.Error(err, "Updating the files of the volumes failed", "Deployment", klogKey(d), "replica", rep.name)
		}
		if t := rep.volumes.tokenRenewal; !t.IsZero() {
			requeue = min(requeue, max(time.Until(t), time.Second))
		}
		ok := rep.ready(ctx)
		rep.isReady.Store(ok)
		if ok {
			ready++
		}
	}
	if err := r.writeStatus(ctx, d, len(rn.replicas), ready); err != nil {
		return reconcile.Result{}, err
	}
	// Readiness and crashes are not API events: look again soon while not every replica is ready.
	if ready < desired {
		return reconcile.Result{RequeueAfter: time.Second}, nil
	}
	return reconcile.Result{RequeueAfter: requeue}, nil
}

func klogKey(d *appsv1.Deployment) string { return d.Namespace + "/" + d.Name }

func (r *Runtime) get(key types.NamespacedName) *run {
	r.mu.Lock()
	defer r.mu.Unlock()
	rn, ok := r.runs[key]
	if !ok {
		rn = &run{}
		r.runs[key] = rn
	}
	return rn
}

// stop stops the replicas of a Deployment from index keep on.
func (r *Runtime) stop(key types.NamespacedName, keep int, log logr.Logger) {
	r.mu.Lock()
	rn, ok := r.runs[key]
	if !ok || len(rn.replicas) <= keep {
		if ok && keep == 0 {
			delete(r.runs, key)
		}
		r.mu.Unlock()
		return
	}
	victims := rn.replicas[keep:]
	rn.replicas = rn.replicas[:keep]
	if keep == 0 {
		delete(r.runs, key)
	}
	r.mu.Unlock()
	for _, rep := range victims {
		log.Info("Stopping local process", "Deployment", key.String(), "replica", rep.name, "pid", rep.proc.Pid())
		rep.proc.Stop()
		_ = os.RemoveAll(rep.volumes.dir)
	}
}

// notRunnable returns why a Deployment cannot run here, or "".
func (r *Runtime) notRunnable(d *appsv1.Deployment) string {
	if len(d.Spec.Template.Spec.Containers) == 0 {
		return "the Deployment has no containers"
	}
	for _, c := range d.Spec.Template.Spec.Containers {
		if r.executable(c.Image) == "" {
			return fmt.Sprintf("container %s uses image %s: the local runtime of the embedded management cluster only runs capstan's own images (%s)",
				c.Name, c.Image, strings.Join(r.Images, ", "))
		}
	}
	return ""
}

// executable returns the local executable that runs containers of an image, "" when there is none.
func (r *Runtime) executable(image string) string {
	repo := imageRepository(image)
	if path, ok := r.Executables[repo]; ok {
		return path
	}
	if slices.Contains(r.Images, repo) {
		return r.Capstan
	}
	return ""
}

// imageRepository strips the tag and digest of an image reference.
func imageRepository(image string) string {
	repo := image
	if i := strings.Index(repo, "@"); i >= 0 {
		repo = repo[:i]
	}
	if i := strings.LastIndex(repo, ":"); i > strings.LastIndex(repo, "/") {
		repo = repo[:i]
	}
	return repo
}

// templateHash identifies the pod template; a change means a rollout.
func templateHash(d *appsv1.Deployment) string {
	data, _ := json.Marshal(d.Spec.Template)
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:8])
}

// kubeconfig writes a kubeconfig for the Deployment's processes that authenticates with a token of its
// ServiceAccount, and refreshes the token.
func (r *Runtime) kubeconfig(ctx context.Context, d *appsv1.Deployment, rn *run) (string, error) {
	sa := d.Spec.Template.Spec.ServiceAccountName
	if sa == "" {
		sa = "default"
	}
	tr := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](48 * 3600)}}
	account := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: d.Namespace, Name: sa}}
	if err := r.Client.SubResource("token").Create(ctx, account, tr); err != nil {
		return "", fmt.Errorf("requesting a token for ServiceAccount %s/%s: %w", d.Namespace, sa, err)
	}
	dir := filepath.Join(r.Dir, d.Namespace, d.Name)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	tokenFile := filepath.Join(dir, "token")
	if err := writeFileAtomic(tokenFile, []byte(tr.Status.Token)); err != nil {
		return "", err
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["capstan"] = &clientcmdapi.Cluster{Server: r.Server, CertificateAuthorityData: r.CAData}
	cfg.AuthInfos["capstan"] = &clientcmdapi.AuthInfo{TokenFile: tokenFile}
	cfg.Contexts["capstan"] = &clientcmdapi.Context{Cluster: "capstan", AuthInfo: "capstan", Namespace: d.Namespace}
	cfg.CurrentContext = "capstan"
	data, err := clientcmd.Write(*cfg)
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, "kubeconfig")
	if err := writeFileAtomic(path, data); err != nil {
		return "", err
	}
	rn.tokenAt = time.Now()
	return path, nil
}

func writeFileAtomic(path string, data []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// start starts replica i of a Deployment.
func (r *Runtime) start(ctx context.Context, d *appsv1.Deployment, i int, kubeconfig string) (*replica, error) {
	c := &d.Spec.Template.Spec.Containers[0]
	if len(d.Spec.Template.Spec.Containers) > 1 {
		return nil, fmt.Errorf("the Deployment has %d containers; the local runtime runs one container per replica", len(d.Spec.Template.Spec.Containers))
	}
	name := fmt.Sprintf("%s-%s-%d", d.Name, templateHash(d)[:6], i)
	env, err := environment(ctx, r.Client, d, c, name)
	if err != nil {
		return nil, err
	}
	args := expandArgs(c.Args, env)
	// The image's entrypoint is the capstan binary; a command other than it is appended as arguments.
	if len(c.Command) > 1 {
		args = append(expandArgs(c.Command[1:], env), args...)
	}
	args, health, ports, err := rewritePorts(args, r.FreePort)
	if err != nil {
		return nil, err
	}
	// The volumes' files live in a directory per replica; the container's arguments and environment name
	// their mount paths, which are rewritten to those directories.
	vols := &volumes{dir: filepath.Join(r.Dir, d.Namespace, d.Name, "volumes", name)}
	if err := r.syncVolumes(ctx, d, name, vols); err != nil {
		return nil, err
	}
	mounts := vols.mounts(c)
	args = rewritePaths(args, mounts)
	env = rewriteEnvPaths(env, mounts)
	// As a Pod has a filesystem of its own, each Deployment's processes get a HOME of their own, so providers
	// that keep data under $HOME (infra-local's --data-dir) do not share it across management clusters.
	home := filepath.Join(r.Dir, d.Namespace, d.Name, "home")
	if err := os.MkdirAll(home, 0o700); err != nil {
		return nil, err
	}
	// There is no cluster DNS here: capstan's components reach Services through their EndpointSlices.
	env = append(append(os.Environ(), env...), "KUBECONFIG="+kubeconfig, "HOME="+home,
		localnet.RoutingEnv+"="+localnet.RoutingEndpointSlices)
	p, err := supervisor.Start(context.WithoutCancel(ctx), supervisor.Spec{
		Name: d.Namespace + "/" + name, Path: r.executable(c.Image), Args: args, Env: env,
		LogFile: filepath.Join(r.Dir, d.Namespace, d.Name, name+".log"),
	}, r.Supervisor)
	if err != nil {
		return nil, err
	}
	ctrl.LoggerFrom(ctx).Info("Started local process", "Deployment", klogKey(d), "replica", name, "pid", p.Pid(), "args", strings.Join(args, " "))
	return &replica{name: name, address: r.addresses.Next(), proc: p, health: health, ports: ports, volumes: vols, started: time.Now()}, nil
}

// ready reports whether a replica is running and, when it has a health address, answers /readyz.
func (rep *replica) ready(ctx context.Context) bool {
	if rep.proc.Pid() == 0 {
		return false
	}
	if rep.health == "" {
		return time.Since(rep.started) > 2*time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+rep.health+"/readyz", nil)
	if err != nil {
		return false
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	_ = resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// writeStatus writes Deployment status as the Deployment controller would, so rollout tools work.
func (r *Runtime) writeStatus(ctx context.Context, d *appsv1.Deployment, running, ready int) error {
	desired := ptr.Deref(d.Spec.Replicas, 1)
	st := appsv1.DeploymentStatus{
		ObservedGeneration:  d.Generation,
		Replicas:            int32(running),
		UpdatedReplicas:     int32(running),
		ReadyReplicas:       int32(ready),
		AvailableReplicas:   int32(ready),
		UnavailableReplicas: max(desired-int32(ready), 0),
	}
	available := corev1.ConditionFalse
	availableReason, availableMsg := "MinimumReplicasUnavailable", "Deployment does not have minimum availability."
	if int32(ready) >= desired {
		available, availableReason, availableMsg = corev1.ConditionTrue, "MinimumReplicasAvailable", "Deployment has minimum availability."
	}
	progressingReason, progressingMsg := "ReplicaSetUpdated", fmt.Sprintf("Running %d of %d replicas as local processes.", ready, desired)
	if int32(ready) == desired && int32(running) == desired {
		progressingReason, progressingMsg = "NewReplicaSetAvailable", "Every replica runs as a local process."
	}
	st.Conditions = []appsv1.DeploymentCondition{
		condition(d, appsv1.DeploymentAvailable, available, availableReason, availableMsg),
		condition(d, appsv1.DeploymentProgressing, corev1.ConditionTrue, progressingReason, progressingMsg),
	}
	return r.patchStatus(ctx, d, st)
}

// writeUnrunnable says on the Deployment why it does not run.
func (r *Runtime) writeUnrunnable(ctx context.Context, d *appsv1.Deployment, reason, message string) error {
	st := appsv1.DeploymentStatus{
		ObservedGeneration:  d.Generation,
		UnavailableReplicas: ptr.Deref(d.Spec.Replicas, 1),
		Conditions: []appsv1.DeploymentCondition{
			condition(d, appsv1.DeploymentAvailable, corev1.ConditionFalse, reason, message),
			condition(d, appsv1.DeploymentProgressing, corev1.ConditionFalse, reason, message),
		},
	}
	return r.patchStatus(ctx, d, st)
}

// condition returns a Deployment condition, keeping the transition time of an unchanged status.
func condition(d *appsv1.Deployment, t appsv1.DeploymentConditionType, status corev1.ConditionStatus, reason, message string) appsv1.DeploymentCondition {
	now := metav1.Now()
	c := appsv1.DeploymentCondition{Type: t, Status: status, Reason: reason, Message: message, LastUpdateTime: now, LastTransitionTime: now}
	for _, old := range d.Status.Conditions {
		if old.Type == t && old.Status == status {
			c.LastTransitionTime = old.LastTransitionTime
			if old.Reason == reason && old.Message == message {
				c.LastUpdateTime = old.LastUpdateTime
			}
		}
	}
	return c
}

func (r *Runtime) patchStatus(ctx context.Context, d *appsv1.Deployment, st appsv1.DeploymentStatus) error {
	sort.Slice(st.Conditions, func(i, j int) bool { return st.Conditions[i].Type < st.Conditions[j].Type })
	current := d.Status.DeepCopy()
	sort.Slice(current.Conditions, func(i, j int) bool { return current.Conditions[i].Type < current.Conditions[j].Type })
	if equalStatus(*current, st) {
		return nil
	}
	before := d.DeepCopy()
	d.Status = st
	if err := r.Client.Status().Patch(ctx, d, client.MergeFrom(before)); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("writing the status of Deployment %s: %w", klogKey(d), err)
	}
	return nil
}

func equalStatus(a, b appsv1.DeploymentStatus) bool {
	strip := func(s appsv1.DeploymentStatus) string {
		for i := range s.Conditions {
			s.Conditions[i].LastUpdateTime = metav1.Time{}
			s.Conditions[i].LastTransitionTime = metav1.Time{}
		}
		data, _ := json.Marshal(s)
		return string(data)
	}
	return strip(*a.DeepCopy()) == strip(*b.DeepCopy())
}
