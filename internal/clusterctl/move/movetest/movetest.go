// Package movetest builds, in a test API server, the management cluster objects that clusterctl move tests
// move: workload Clusters with their MachineDeployments, MachineSets, Machines (with providerIDs and
// nodes), the test provider's objects, Secrets, a ClusterClass, a ConfigMap labelled for move, a global
// identity; and it compares a namespace before and after a move.
package movetest

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterctlv1 "github.com/capstan-dev/capstan/api/clusterctl/v1alpha3"
	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/contract"
	"github.com/capstan-dev/capstan/internal/test/builder"
)

// The namespaces of the fixture's providers, and the kind of its global identity.
const (
	CoreNamespace  = "capstan-system"
	InfraNamespace = "generic-system"
	IdentityKind   = "GenericClusterIdentity"
	// UnrelatedConfigMap is a ConfigMap of every fixture namespace that the move leaves.
	UnrelatedConfigMap = "unrelated"
	// MoveConfigMap is a ConfigMap without owner, labelled clusterctl.cluster.x-k8s.io/move.
	MoveConfigMap = "cpi-config"
	// ClusterClass is the fixture's ClusterClass; the last Cluster of a fixture uses it.
	ClusterClass = "quick-start"
)

var p = builder.V1Beta1

// CRDs returns the CRDs the fixture needs besides capstan's: the test provider's, and a cluster-scoped
// identity kind labelled clusterctl.cluster.x-k8s.io/move-hierarchy.
func CRDs() []*apiextensionsv1.CustomResourceDefinition {
	id := builder.GenericCRD(builder.InfrastructureGroup, p.Version, IdentityKind, contract.V1Beta1)
	id.Spec.Scope = apiextensionsv1.ClusterScoped
	id.Labels[clusterctlv1.ClusterctlMoveHierarchyLabel] = ""
	return append(builder.CRDs(), id)
}

// PrepareManagementCluster makes a test API server look like a management cluster clusterctl initialized:
// every CRD but the inventory's is labelled clusterctl.cluster.x-k8s.io, and the inventory lists the core
// provider (cluster-api v0.1.0) and the infrastructure provider "generic" at infraVersion.
func PrepareManagementCluster(ctx context.Context, c client.Client, infraVersion string) error {
	crds := &apiextensionsv1.CustomResourceDefinitionList{}
	if err := c.List(ctx, crds); err != nil {
		return err
	}
	for i := range crds.Items {
		crd := &crds.Items[i]
		if crd.Spec.Group == clusterctlv1.GroupVersion.Group {
			continue
		}
		patch := client.MergeFrom(crd.DeepCopy())
		if crd.Labels == nil {
			crd.Labels = map[string]string{}
		}
		crd.Labels[clusterctlv1.ClusterctlLabel] = ""
		if err := c.Patch(ctx, crd, patch); err != nil {
			return err
		}
	}
	for _, ns := range []string{CoreNamespace, InfraNamespace} {
		if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
	}
	if err := SetProvider(ctx, c, CoreNamespace, "cluster-api", clusterctlv1.CoreProviderType, "v0.1.0"); err != nil {
		return err
	}
	return SetProvider(ctx, c, InfraNamespace, "generic", clusterctlv1.InfrastructureProviderType, infraVersion)
}

// SetProvider writes an inventory entry.
func SetProvider(ctx context.Context, c client.Client, namespace, name string, t clusterctlv1.ProviderType, version string) error {
	pr := &clusterctlv1.Provider{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: clusterctlv1.ManifestLabel(name, t)}}
	err := c.Get(ctx, client.ObjectKeyFromObject(pr), pr)
	switch {
	case apierrors.IsNotFound(err):
		pr.ProviderName, pr.Type, pr.Version = name, string(t), version
		return c.Create(ctx, pr)
	case err != nil:
		return err
	}
	pr.ProviderName, pr.Type, pr.Version = name, string(t), version
	return c.Update(ctx, pr)
}

func owned(obj client.Object, owner client.Object, controller bool) {
	gvk := owner.GetObjectKind().GroupVersionKind()
	ref := metav1.OwnerReference{APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind, Name: owner.GetName(), UID: owner.GetUID()}
	if controller {
		ref.Controller, ref.BlockOwnerDeletion = ptrTo(true), ptrTo(true)
	}
	obj.SetOwnerReferences(append(obj.GetOwnerReferences(), ref))
}

func ptrTo[T any](v T) *T { return &v }

type creator struct {
	ctx context.Context
	c   client.Client
	err error
}

func (cr *creator) create(obj client.Object) client.Object {
	if cr.err != nil {
		return obj
	}
	gvk := obj.GetObjectKind().GroupVersionKind()
	if err := cr.c.Create(cr.ctx, obj); err != nil {
		cr.err = fmt.Errorf("creating %s %s: %w", gvk.Kind, obj.GetName(), err)
	}
	obj.GetObjectKind().SetGroupVersionKind(gvk)
	return obj
}

func (cr *creator) status(obj *unstructured.Unstructured, status map[string]any) {
	if cr.err != nil {
		return
	}
	obj.Object["status"] = status
	if err := cr.c.Status().Update(cr.ctx, obj); err != nil {
		cr.err = fmt.Errorf("writing the status of %s %s: %w", obj.GetKind(), obj.GetName(), err)
	}
}

func unstructuredOf(apiVersion, kind, namespace, name string, spec map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	u.SetNamespace(namespace)
	u.SetName(name)
	return u
}

func ref(obj client.Object) map[string]any {
	gvk := obj.GetObjectKind().GroupVersionKind()
	return map[string]any{"apiVersion": gvk.GroupVersion().String(), "kind": gvk.Kind, "namespace": obj.GetNamespace(), "name": obj.GetName()}
}

// ProviderID is the providerID of a fixture Machine.
func ProviderID(namespace, machine string) string { return "generic://" + namespace + "/" + machine }

// IdentityName is the name of the global identity of a fixture namespace.
func IdentityName(namespace string) string { return namespace + "-identity" }

// CreateClusters creates, in namespace, a provisioned workload Cluster per name (the last one a topology
// Cluster of the ClusterClass), each with its InfraCluster, a control plane Machine, a MachineDeployment of
// two Machines (MachineSet, InfraMachines with providerIDs, BootstrapConfigs, bootstrap data Secrets),
// templates, a `<cluster>-kubeconfig` Secret owned by the Cluster and a user-provided `<cluster>-ca`
// Secret; plus the ClusterClass and its template, a ConfigMap labelled for move, an unrelated ConfigMap,
// and a global identity with its credentials Secret in the infrastructure provider's namespace.
func CreateClusters(ctx context.Context, c client.Client, namespace string, names ...string) error {
	cr := &creator{ctx: ctx, c: c}
	now := time.Now().UTC().Format(time.RFC3339)
	cv := clusterv1.GroupVersion.String()

	cct := p.Object(p.Infrastructure, builder.InfraClusterTemplateKind, namespace, ClusterClass)
	_ = unstructured.SetNestedMap(cct.Object, map[string]any{"spec": map[string]any{}}, "spec", "template")
	cc := unstructuredOf(cv, "ClusterClass", namespace, ClusterClass, map[string]any{
		"infrastructure": map[string]any{"ref": ref(cct)},
	})
	cr.create(cc)
	owned(cct, cc, false)
	cr.create(cct)

	for i, name := range names {
		infra := p.InfraCluster(namespace, name)
		infra.Object["spec"] = map[string]any{"controlPlaneEndpoint": map[string]any{"host": "10.0.0." + fmt.Sprint(i+1), "port": int64(6443)}}
		spec := map[string]any{
			"infrastructureRef":    ref(infra),
			"controlPlaneEndpoint": map[string]any{"host": "10.0.0." + fmt.Sprint(i+1), "port": int64(6443)},
		}
		if i == len(names)-1 {
			spec["topology"] = map[string]any{"class": ClusterClass, "version": "v1.31.0"}
		}
		cluster := unstructuredOf(cv, "Cluster", namespace, name, spec)
		cluster.SetFinalizers([]string{"cluster.cluster.x-k8s.io"})
		cr.create(cluster)
		cr.status(cluster, map[string]any{
			"infrastructureReady": true, "controlPlaneReady": true, "phase": "Provisioned",
			"conditions": []any{map[string]any{"type": "ControlPlaneInitialized", "status": "True", "lastTransitionTime": now}},
		})
		owned(infra, cluster, false)
		infra.SetFinalizers([]string{"genericcluster.infrastructure.cluster.x-k8s.io"})
		cr.create(infra)
		cr.status(infra, map[string]any{"ready": true})

		kubeconfig := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name + "-kubeconfig",
			Labels: map[string]string{clusterv1.ClusterNameLabel: name}},
			Type: "cluster.x-k8s.io/secret", Data: map[string][]byte{"value": []byte("kubeconfig of " + name)}}
		kubeconfig.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
		owned(kubeconfig, cluster, true)
		cr.create(kubeconfig)
		ca := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name + "-ca"},
			Data: map[string][]byte{"tls.crt": []byte("user-provided CA of " + name), "tls.key": []byte("key")}}
		ca.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
		cr.create(ca)

		imt := p.InfraMachineTemplate(namespace, name+"-md-0")
		owned(imt, cluster, false)
		cr.create(imt)
		bt := p.BootstrapTemplate(namespace, name+"-md-0")
		owned(bt, cluster, false)
		cr.create(bt)
		template := map[string]any{
			"metadata": map[string]any{"labels": map[string]any{"pool": name + "-md-0"}},
			"spec": map[string]any{"clusterName": name, "version": "v1.31.0", "infrastructureRef": ref(imt),
				"bootstrap": map[string]any{"configRef": ref(bt)}},
		}
		md := unstructuredOf(cv, "MachineDeployment", namespace, name+"-md-0", map[string]any{
			"clusterName": name, "replicas": int64(2),
			"selector": map[string]any{"matchLabels": map[string]any{"pool": name + "-md-0"}},
			"template": template,
		})
		md.SetLabels(map[string]string{clusterv1.ClusterNameLabel: name})
		owned(md, cluster, false)
		cr.create(md)
		ms := unstructuredOf(cv, "MachineSet", namespace, name+"-md-0-x7k2p", map[string]any{
			"clusterName": name, "replicas": int64(2),
			"selector": map[string]any{"matchLabels": map[string]any{"pool": name + "-md-0"}},
			"template": template,
		})
		ms.SetLabels(map[string]string{clusterv1.ClusterNameLabel: name, clusterv1.MachineDeploymentNameLabel: name + "-md-0"})
		owned(ms, md, true)
		cr.create(ms)

		machines := []struct {
			name  string
			owner client.Object
			cp    bool
		}{{name + "-cp-0", cluster, true}, {name + "-md-0-x7k2p-a", ms, false}, {name + "-md-0-x7k2p-b", ms, false}}
		for _, m := range machines {
			im := p.InfraMachine(namespace, m.name)
			im.Object["spec"] = map[string]any{"providerID": ProviderID(namespace, m.name)}
			bc := p.BootstrapConfig(namespace, m.name)
			labels := map[string]string{clusterv1.ClusterNameLabel: name}
			if m.cp {
				labels[clusterv1.MachineControlPlaneLabel] = ""
			} else {
				labels[clusterv1.MachineSetNameLabel] = ms.GetName()
				labels[clusterv1.MachineDeploymentNameLabel] = md.GetName()
			}
			machine := unstructuredOf(cv, "Machine", namespace, m.name, map[string]any{
				"clusterName": name, "version": "v1.31.0", "providerID": ProviderID(namespace, m.name),
				"infrastructureRef": ref(im), "bootstrap": map[string]any{"configRef": ref(bc), "dataSecretName": m.name + "-bootstrap"},
			})
			machine.SetLabels(labels)
			machine.SetFinalizers([]string{"machine.cluster.x-k8s.io"})
			owned(machine, m.owner, true)
			cr.create(machine)
			cr.status(machine, map[string]any{"phase": "Running", "infrastructureReady": true, "bootstrapReady": true,
				"nodeRef": map[string]any{"apiVersion": "v1", "kind": "Node", "name": m.name}})
			owned(im, machine, true)
			cr.create(im)
			owned(bc, machine, true)
			cr.create(bc)
			data := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: m.name + "-bootstrap",
				Labels: map[string]string{clusterv1.ClusterNameLabel: name}},
				Type: "cluster.x-k8s.io/secret", Data: map[string][]byte{"value": []byte("cloud-init of " + m.name)}}
			data.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
			owned(data, bc, true)
			cr.create(data)
		}
	}

	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: MoveConfigMap,
		Labels: map[string]string{clusterctlv1.ClusterctlMoveLabel: ""}}, Data: map[string]string{"cloud.conf": "[Global]"}}
	cm.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ConfigMap"))
	cr.create(cm)
	unrelated := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: UnrelatedConfigMap}, Data: map[string]string{"a": "b"}}
	cr.create(unrelated)

	id := p.Object(p.Infrastructure, IdentityKind, "", IdentityName(namespace))
	cr.create(id)
	creds := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: InfraNamespace, Name: IdentityName(namespace) + "-credentials"},
		Data: map[string][]byte{"token": []byte("secret")}}
	creds.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
	owned(creds, id, false)
	cr.create(creds)
	return cr.err
}

// Object is what a comparison keeps of an object.
type Object struct {
	Kind, Namespace, Name string
	// Owners are the owners' "Kind/name", sorted.
	Owners []string
	// ProviderID is a Machine's or InfraMachine's spec.providerID.
	ProviderID string
	// Content is a Secret's or ConfigMap's data.
	Content string
	// Global: a global object, kept in the source.
	Global bool
}

func (o Object) key() string { return o.Kind + "/" + o.Namespace + "/" + o.Name }

// Kinds are the kinds a snapshot reads.
var Kinds = []schema.GroupVersionKind{
	clusterv1.GroupVersion.WithKind("Cluster"), clusterv1.GroupVersion.WithKind("ClusterClass"),
	clusterv1.GroupVersion.WithKind("MachineDeployment"), clusterv1.GroupVersion.WithKind("MachineSet"),
	clusterv1.GroupVersion.WithKind("Machine"),
	{Group: p.Infrastructure, Version: p.Version, Kind: builder.InfraClusterKind},
	{Group: p.Infrastructure, Version: p.Version, Kind: builder.InfraClusterTemplateKind},
	{Group: p.Infrastructure, Version: p.Version, Kind: builder.InfraMachineKind},
	{Group: p.Infrastructure, Version: p.Version, Kind: builder.InfraMachineTemplateKind},
	{Group: p.Bootstrap, Version: p.Version, Kind: builder.BootstrapConfigKind},
	{Group: p.Bootstrap, Version: p.Version, Kind: builder.BootstrapTemplateKind},
	corev1.SchemeGroupVersion.WithKind("Secret"), corev1.SchemeGroupVersion.WithKind("ConfigMap"),
}

// Snapshot is the objects of a fixture namespace (without the unrelated ConfigMap and the move journal),
// with its global identity and the identity's Secret.
type Snapshot map[string]Object

// Take reads the snapshot of a namespace.
func Take(ctx context.Context, c client.Client, namespace string) (Snapshot, error) {
	s := Snapshot{}
	for _, gvk := range Kinds {
		objs, err := listKind(ctx, c, gvk, namespace)
		if err != nil {
			return nil, err
		}
		for i := range objs {
			obj := &objs[i]
			if obj.GetName() == UnrelatedConfigMap || strings.HasPrefix(obj.GetName(), "clusterctl-move-journal") ||
				obj.GetName() == "kube-root-ca.crt" {
				continue
			}
			o := objectOf(obj)
			s[o.key()] = o
		}
	}
	for _, r := range []struct {
		gvk      schema.GroupVersionKind
		ns, name string
	}{
		{schema.GroupVersionKind{Group: p.Infrastructure, Version: p.Version, Kind: IdentityKind}, "", IdentityName(namespace)},
		{corev1.SchemeGroupVersion.WithKind("Secret"), InfraNamespace, IdentityName(namespace) + "-credentials"},
	} {
		obj := &unstructured.Unstructured{}
		obj.SetGroupVersionKind(r.gvk)
		if err := c.Get(ctx, client.ObjectKey{Namespace: r.ns, Name: r.name}, obj); err != nil {
			if apierrors.IsNotFound(err) {
				continue
			}
			return nil, err
		}
		o := objectOf(obj)
		o.Global = true
		s[o.key()] = o
	}
	return s, nil
}

func listKind(ctx context.Context, c client.Client, gvk schema.GroupVersionKind, namespace string) ([]unstructured.Unstructured, error) {
	l := &unstructured.UnstructuredList{}
	l.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	if err := c.List(ctx, l, client.InNamespace(namespace)); err != nil {
		return nil, fmt.Errorf("listing %s: %w", gvk.Kind, err)
	}
	return l.Items, nil
}

func objectOf(obj *unstructured.Unstructured) Object {
	o := Object{Kind: obj.GetKind(), Namespace: obj.GetNamespace(), Name: obj.GetName()}
	for _, r := range obj.GetOwnerReferences() {
		o.Owners = append(o.Owners, r.Kind+"/"+r.Name)
	}
	sort.Strings(o.Owners)
	o.ProviderID, _, _ = unstructured.NestedString(obj.Object, "spec", "providerID")
	if data, ok := obj.Object["data"]; ok {
		b, _ := json.Marshal(data)
		o.Content = string(b)
	}
	return o
}

// Verify compares the source and the target after a move of namespace with before, the snapshot of the
// source taken before the move, and returns every difference: each object must be in the target with the
// same owners (ownerReferences carrying the target's UIDs), providerID and content, and gone from the
// source unless global; the unrelated ConfigMap stays in the source only; nothing is paused; no journal is
// left.
func Verify(ctx context.Context, from, to client.Client, namespace string, before Snapshot) []string {
	var problems []string
	after, err := Take(ctx, to, namespace)
	if err != nil {
		return []string{err.Error()}
	}
	left, err := Take(ctx, from, namespace)
	if err != nil {
		return []string{err.Error()}
	}
	for key, want := range before {
		got, ok := after[key]
		if !ok {
			problems = append(problems, key+" is not in the target")
			continue
		}
		if fmt.Sprint(got.Owners) != fmt.Sprint(want.Owners) || got.ProviderID != want.ProviderID || got.Content != want.Content {
			problems = append(problems, fmt.Sprintf("%s differs in the target: got %+v, want %+v", key, got, want))
		}
		if _, stays := left[key]; stays && !want.Global {
			problems = append(problems, key+" is still in the source")
		}
		if !stays(left, key) && want.Global {
			problems = append(problems, key+" (global) was deleted from the source")
		}
	}
	for key := range after {
		if _, ok := before[key]; !ok && !strings.HasPrefix(key, IdentityKind+"/") {
			problems = append(problems, key+" is in the target but was not in the source")
		}
	}
	problems = append(problems, checkOwnerUIDs(ctx, to, namespace)...)
	problems = append(problems, checkUnpaused(ctx, to, namespace, "target")...)
	problems = append(problems, checkUnpaused(ctx, from, namespace, "source")...)

	cm := &corev1.ConfigMap{}
	if err := from.Get(ctx, client.ObjectKey{Namespace: namespace, Name: UnrelatedConfigMap}, cm); err != nil {
		problems = append(problems, "the unrelated ConfigMap is not in the source: "+err.Error())
	}
	if err := to.Get(ctx, client.ObjectKey{Namespace: namespace, Name: UnrelatedConfigMap}, cm); !apierrors.IsNotFound(err) {
		problems = append(problems, "the unrelated ConfigMap was moved to the target")
	}
	for _, c := range []client.Client{from, to} {
		if err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: "clusterctl-move-journal"}, cm); !apierrors.IsNotFound(err) {
			problems = append(problems, "a move journal is left")
		}
	}
	sort.Strings(problems)
	return problems
}

func stays(s Snapshot, key string) bool { _, ok := s[key]; return ok }

// checkOwnerUIDs checks that every ownerReference of the namespace's objects names an object that exists
// with that UID.
func checkOwnerUIDs(ctx context.Context, c client.Client, namespace string) []string {
	var problems []string
	for _, gvk := range Kinds {
		objs, err := listKind(ctx, c, gvk, namespace)
		if err != nil {
			return []string{err.Error()}
		}
		for _, obj := range objs {
			for _, r := range obj.GetOwnerReferences() {
				owner := &unstructured.Unstructured{}
				owner.SetAPIVersion(r.APIVersion)
				owner.SetKind(r.Kind)
				err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: r.Name}, owner)
				switch {
				case err != nil:
					problems = append(problems, fmt.Sprintf("%s %s: owner %s %s: %v", obj.GetKind(), obj.GetName(), r.Kind, r.Name, err))
				case owner.GetUID() != r.UID:
					problems = append(problems, fmt.Sprintf("%s %s: the ownerReference to %s %s has UID %s, the owner has %s", obj.GetKind(), obj.GetName(), r.Kind, r.Name, r.UID, owner.GetUID()))
				}
			}
		}
	}
	return problems
}

func checkUnpaused(ctx context.Context, c client.Client, namespace, where string) []string {
	var problems []string
	for _, kind := range []string{"Cluster", "ClusterClass"} {
		objs, err := listKind(ctx, c, clusterv1.GroupVersion.WithKind(kind), namespace)
		if err != nil {
			return []string{err.Error()}
		}
		for _, obj := range objs {
			if paused, _, _ := unstructured.NestedBool(obj.Object, "spec", "paused"); paused {
				problems = append(problems, fmt.Sprintf("%s %s is paused in the %s", kind, obj.GetName(), where))
			}
			if _, ok := obj.GetAnnotations()[clusterv1.PausedAnnotation]; ok {
				problems = append(problems, fmt.Sprintf("%s %s has the paused annotation in the %s", kind, obj.GetName(), where))
			}
		}
	}
	return problems
}

// UIDs returns the UIDs of the objects of a namespace, by "Kind/name".
func UIDs(ctx context.Context, c client.Client, namespace string) (map[string]types.UID, error) {
	out := map[string]types.UID{}
	for _, gvk := range Kinds {
		objs, err := listKind(ctx, c, gvk, namespace)
		if err != nil {
			return nil, err
		}
		for _, obj := range objs {
			out[obj.GetKind()+"/"+obj.GetName()] = obj.GetUID()
		}
	}
	return out, nil
}
