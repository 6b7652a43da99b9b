package controllermanager_test

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/controllermanager"
	"github.com/capstan-dev/capstan/internal/reconciler"
	"github.com/capstan-dev/capstan/internal/test/apicount"
)

// TestManagerClientReadsThroughTheCache: the manager's client reads Secrets labelled with a cluster name
// and provider objects (unstructured) from its cache, not from the API server; a Secret without the label
// (certificates a user provided) is still found, on the API server; no other Secret is held in the cache.
func TestManagerClientReadsThroughTheCache(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "cache-reads-"}}
	g.Expect(env.Client.Create(ctx, ns)).To(Succeed())

	labelled := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "c1-ca",
		Labels: map[string]string{clusterv1.ClusterNameLabel: "c1"}}, Data: map[string][]byte{"tls.crt": []byte("crt")}}
	unlabelled := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "c1-etcd"}, Data: map[string][]byte{"tls.crt": []byte("user")}}
	md := &clusterv1.MachineDeployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "md"},
		Spec: clusterv1.MachineDeploymentSpec{ClusterName: "c1", Template: clusterv1.MachineTemplateSpec{Spec: clusterv1.MachineSpec{
			ClusterName: "c1", InfrastructureRef: corev1.ObjectReference{APIVersion: "infrastructure.cluster.x-k8s.io/v1beta1", Kind: "LocalMachineTemplate", Name: "t"},
		}}}}
	for _, o := range []client.Object{labelled, unlabelled, md} {
		g.Expect(env.Client.Create(ctx, o)).To(Succeed())
	}

	counter := apicount.New()
	cfg := rest.CopyConfig(env.Config)
	cfg.Wrap(counter.Wrap)
	o := controllermanager.DefaultOptions("test-cache-reads")
	o.HealthAddr, o.DiagnosticsAddress = "0", "0"
	mgr := run(t, o, cfg)
	c := mgr.GetClient()
	gets := func(resource string) int {
		return counter.Snapshot().Sum(func(k apicount.Key) bool { return k.Action == "get" && k.Resource == resource })
	}

	// The first read starts the informers; once they have the objects, reads do not reach the API server.
	secret := &corev1.Secret{}
	readsCached := func(key client.ObjectKey, obj client.Object, resource string) func() int {
		return func() int {
			before := gets(resource)
			g.Expect(c.Get(ctx, key, obj)).To(Succeed())
			return gets(resource) - before
		}
	}
	g.Eventually(readsCached(client.ObjectKeyFromObject(labelled), secret, "secrets"), 30*time.Second, 100*time.Millisecond).Should(BeZero(),
		"a Secret labelled with a cluster name is read from the cache")
	g.Expect(secret.Data).To(HaveKeyWithValue("tls.crt", []byte("crt")))
	g.Expect(secret.ManagedFields).To(BeEmpty(), "cached Secrets are held without their managedFields")

	u := &unstructured.Unstructured{}
	u.SetAPIVersion(clusterv1.GroupVersion.String())
	u.SetKind("MachineDeployment")
	g.Eventually(readsCached(client.ObjectKeyFromObject(md), u, "cluster.x-k8s.io/machinedeployments"), 30*time.Second, 100*time.Millisecond).Should(BeZero(),
		"an unstructured provider object is read from the cache")
	g.Expect(u.GetName()).To(Equal("md"))

	before := gets("secrets")
	g.Expect(c.Get(ctx, client.ObjectKeyFromObject(unlabelled), secret)).To(Succeed(), "a Secret without the label is found")
	g.Expect(secret.Data).To(HaveKeyWithValue("tls.crt", []byte("user")))
	g.Expect(gets("secrets")-before).To(Equal(1), "a Secret without the label is read from the API server")

	// Built-in kinds read as unstructured are read from the API server: no informer of every ConfigMap.
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "cm"}}
	g.Expect(env.Client.Create(ctx, cm)).To(Succeed())
	ucm := &unstructured.Unstructured{}
	ucm.SetAPIVersion("v1")
	ucm.SetKind("ConfigMap")
	before = gets("configmaps")
	g.Expect(c.Get(ctx, client.ObjectKeyFromObject(cm), ucm)).To(Succeed())
	g.Expect(gets("configmaps")-before).To(Equal(1), "an unstructured ConfigMap is read from the API server")

	// Only labelled Secrets are in the cache.
	cached := &corev1.SecretList{}
	g.Expect(mgr.GetCache().List(ctx, cached, client.InNamespace(ns.Name))).To(Succeed())
	g.Expect(cached.Items).To(HaveLen(1))
	g.Expect(cached.Items[0].Name).To(Equal(labelled.Name))

	// A Secret created after the cache started is found, whether or not the cache has seen it yet.
	fresh := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "c1-kubeconfig",
		Labels: map[string]string{clusterv1.ClusterNameLabel: "c1"}}}
	g.Expect(env.Client.Create(ctx, fresh)).To(Succeed())
	g.Expect(c.Get(ctx, client.ObjectKeyFromObject(fresh), &corev1.Secret{})).To(Succeed())
}

// TestManagerClientReadsWhatItsCacheCannotListFromTheAPIServer: when RBAC lets the manager's user get a kind
// but not list and watch it, the cache's informer of the kind never syncs; the client reads the kind from
// the API server at once (it used to wait CacheReadTimeout, 15 s, for the informer first), and a kind the
// user may not even get returns the API server's Forbidden error, as promptly.
func TestManagerClientReadsWhatItsCacheCannotListFromTheAPIServer(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "cache-rbac-"}}
	g.Expect(env.Client.Create(ctx, ns)).To(Succeed())

	// The user may get MachineDeployments and Secrets, not list or watch them; nothing else.
	user := "cache-rbac-" + ns.Name
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "get-only"}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{clusterv1.GroupVersion.Group}, Resources: []string{"machinedeployments"}, Verbs: []string{"get"}},
		{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get"}},
	}}
	binding := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "get-only"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}}}
	md := &clusterv1.MachineDeployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "md"},
		Spec: clusterv1.MachineDeploymentSpec{ClusterName: "c1", Template: clusterv1.MachineTemplateSpec{Spec: clusterv1.MachineSpec{
			ClusterName: "c1", InfrastructureRef: corev1.ObjectReference{APIVersion: "infrastructure.cluster.x-k8s.io/v1beta1", Kind: "LocalMachineTemplate", Name: "t"},
		}}}}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "c1-ca",
		Labels: map[string]string{clusterv1.ClusterNameLabel: "c1"}}, Data: map[string][]byte{"tls.crt": []byte("crt")}}
	for _, o := range []client.Object{role, binding, md, secret} {
		g.Expect(env.Client.Create(ctx, o)).To(Succeed())
	}
	cfg, err := env.AddUser(user)
	g.Expect(err).NotTo(HaveOccurred())

	o := controllermanager.DefaultOptions("test-cache-rbac")
	o.HealthAddr, o.DiagnosticsAddress, o.Namespace = "0", "0", ns.Name
	mgr := run(t, o, cfg)
	g.Expect(mgr.GetCache().WaitForCacheSync(ctx)).To(BeTrue(), "the cache starts")
	c := mgr.GetClient()

	// Each read must answer well before the 15 s the client used to wait for the informer (5 s leaves
	// room for a loaded machine); the second read of a kind too, as the informer keeps failing.
	read := func(obj client.Object) error {
		readCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		return c.Get(readCtx, client.ObjectKeyFromObject(obj), obj)
	}
	for range 2 {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion(clusterv1.GroupVersion.String())
		u.SetKind("MachineDeployment")
		u.SetNamespace(ns.Name)
		u.SetName(md.Name)
		g.Expect(read(u)).To(Succeed(), "a kind the cache cannot list is read from the API server")
		g.Expect(u.GetUID()).To(Equal(md.UID))

		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: secret.Name}}
		g.Expect(read(s)).To(Succeed(), "a Secret is read from the API server when the cache cannot list Secrets")
		g.Expect(s.Data).To(HaveKeyWithValue("tls.crt", []byte("crt")))

		ms := &unstructured.Unstructured{}
		ms.SetAPIVersion(clusterv1.GroupVersion.String())
		ms.SetKind("MachineSet")
		ms.SetNamespace(ns.Name)
		ms.SetName("ms")
		err := read(ms)
		g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "a kind the user may not read returns the API server's Forbidden error, got %v", err)

		list := &unstructured.UnstructuredList{}
		list.SetAPIVersion(clusterv1.GroupVersion.String())
		list.SetKind("MachineDeploymentList")
		listCtx, cancelList := context.WithTimeout(ctx, 5*time.Second)
		err = c.List(listCtx, list, client.InNamespace(ns.Name))
		cancelList()
		g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "a list the user may not make returns the API server's Forbidden error, got %v", err)
	}
}

// TestManagerCacheListsOneClustersObjects: with the cluster-name index set up, the manager's client lists a
// Cluster's Machines by their labels as it did without it: only that Cluster's, filtered by every label
// asked for, and a Machine created after the cache started among them.
func TestManagerCacheListsOneClustersObjects(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "cache-index-"}}
	g.Expect(env.Client.Create(ctx, ns)).To(Succeed())
	machine := func(name, cluster string, extra map[string]string) *clusterv1.Machine {
		l := map[string]string{clusterv1.ClusterNameLabel: cluster}
		for k, v := range extra {
			l[k] = v
		}
		return &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: name, Labels: l},
			Spec: clusterv1.MachineSpec{ClusterName: cluster, InfrastructureRef: corev1.ObjectReference{
				APIVersion: "infrastructure.cluster.x-k8s.io/v1beta1", Kind: "LocalMachine", Name: name}}}
	}
	for _, m := range []*clusterv1.Machine{
		machine("c1-a", "c1", map[string]string{clusterv1.MachineDeploymentNameLabel: "md"}),
		machine("c1-b", "c1", nil),
		machine("c2-a", "c2", map[string]string{clusterv1.MachineDeploymentNameLabel: "md"}),
	} {
		g.Expect(env.Client.Create(ctx, m)).To(Succeed())
	}

	o := controllermanager.DefaultOptions("test-cache-index")
	o.HealthAddr, o.DiagnosticsAddress = "0", "0"
	mgr := runWith(t, o, env.Config, func(mgr ctrl.Manager) error {
		return reconciler.IndexByClusterName(ctx, mgr.GetFieldIndexer(), &clusterv1.Machine{})
	})
	names := func(labels client.MatchingLabels) func() []string {
		return func() []string {
			list := &clusterv1.MachineList{}
			g.Expect(mgr.GetClient().List(ctx, list, client.InNamespace(ns.Name), labels)).To(Succeed())
			var out []string
			for _, m := range list.Items {
				out = append(out, m.Name)
			}
			return out
		}
	}
	g.Eventually(names(client.MatchingLabels{clusterv1.ClusterNameLabel: "c1"}), 30*time.Second, 100*time.Millisecond).
		Should(ConsistOf("c1-a", "c1-b"))
	g.Expect(names(client.MatchingLabels{clusterv1.ClusterNameLabel: "c1", clusterv1.MachineDeploymentNameLabel: "md"})()).
		To(ConsistOf("c1-a"), "every label asked for still selects")
	g.Expect(names(client.MatchingLabels{clusterv1.ClusterNameLabel: "c3"})()).To(BeEmpty())

	g.Expect(env.Client.Create(ctx, machine("c1-c", "c1", nil))).To(Succeed())
	g.Eventually(names(client.MatchingLabels{clusterv1.ClusterNameLabel: "c1"}), 30*time.Second, 100*time.Millisecond).
		Should(ConsistOf("c1-a", "c1-b", "c1-c"), "a Machine created after the cache started is listed")
}
