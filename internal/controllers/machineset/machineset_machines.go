package machineset

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"text/template"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/conditions"
	"github.com/capstan-dev/capstan/internal/external"
	"github.com/capstan-dev/capstan/internal/labelformat"
)

const (
	// defaultMachineNameTemplate is how Machines are named when spec.machineNamingStrategy is empty.
	defaultMachineNameTemplate = "{{ .machineSet.name }}-{{ .random }}"

	// maxNameLength is the longest Machine name generated; longer names are cut and get a new random suffix,
	// as upstream does, so that the name can also be a label value and a host name.
	maxNameLength = 63
	randomLength  = 5

	// missingTemplateRequeue is how often a MachineSet whose templates do not exist checks again; templates
	// are not watched.
	missingTemplateRequeue = 30 * time.Second
)

// syncReplicas creates or deletes Machines until the MachineSet has spec.replicas of them.
func (r *Reconciler) syncReplicas(ctx context.Context, s *scope) (ctrl.Result, error) {
	log := ctrl.LoggerFrom(ctx)
	ms := s.ms
	want := int(ptr.Deref(ms.Spec.Replicas, 1))
	diff := len(s.machines) - want
	switch {
	case diff < 0:
		if _, ok := ms.Annotations[clusterv1.DisableMachineCreateAnnotation]; ok {
			log.V(4).Info("Not creating Machines: the MachineSet has the disable-machine-create annotation")
			return ctrl.Result{}, nil
		}
		if s.invalidConfiguration != "" {
			log.Info("Not creating Machines: the MachineSet's spec is invalid", "reason", s.invalidConfiguration)
			return ctrl.Result{}, nil
		}
		if s.infrastructureTemplateNotFound || s.bootstrapTemplateNotFound {
			log.Info("Not creating Machines: a template does not exist")
			return ctrl.Result{RequeueAfter: missingTemplateRequeue}, nil
		}
		if s.preflightProblems = r.preflightProblems(ctx, s, "Scale up"); len(s.preflightProblems) > 0 {
			return ctrl.Result{RequeueAfter: preflightFailedRequeueAfter}, nil
		}
		return ctrl.Result{}, r.createMachines(ctx, s, -diff)
	case diff > 0:
		return ctrl.Result{}, r.deleteMachines(ctx, s, diff)
	}
	return ctrl.Result{}, nil
}

func (r *Reconciler) createMachines(ctx context.Context, s *scope, count int) error {
	created := make([]client.ObjectKey, 0, count)
	for i := range count {
		m, err := r.createMachine(ctx, s, i+1, count)
		if err != nil {
			return err
		}
		created = append(created, client.ObjectKeyFromObject(m))
	}
	// The next reconcile must count these Machines, or it would create them again.
	return r.waitForCache(ctx, created, func(m *clusterv1.Machine, err error) bool { return err == nil })
}

// resumeClones creates again a clone that a Machine of this MachineSet refers to and that does not exist:
// createMachine creates the Machine before its clones, so a manager stopped between the two (or a failed
// clean-up after a failed clone) leaves a Machine waiting for a clone that nothing else would create. The
// Machine controller reports a missing clone (reason DoesNotExist) only once a new Machine's grace period
// for its clones is over, so the clone is created then, from the MachineSet's template and owned by the
// Machine, as createMachine would have created it. A clone of a Machine that was provisioned with it
// (bootstrap data, infrastructure ready) is not created again: the Machine reports its deletion.
func (r *Reconciler) resumeClones(ctx context.Context, ms *clusterv1.MachineSet, m *clusterv1.Machine) error {
	if !m.DeletionTimestamp.IsZero() || !metav1.IsControlledBy(m, ms) {
		return nil
	}
	for _, part := range []struct {
		condition, reason string
		provisioned       bool
		ref, tpl          *corev1.ObjectReference
	}{
		{clusterv1.MachineBootstrapConfigReadyV1Beta2Condition, clusterv1.MachineBootstrapConfigDoesNotExistV1Beta2Reason,
			m.Status.BootstrapReady || m.Spec.Bootstrap.DataSecretName != nil, m.Spec.Bootstrap.ConfigRef, ms.Spec.Template.Spec.Bootstrap.ConfigRef},
		{clusterv1.MachineInfrastructureReadyV1Beta2Condition, clusterv1.MachineInfrastructureDoesNotExistV1Beta2Reason,
			m.Status.InfrastructureReady, &m.Spec.InfrastructureRef, &ms.Spec.Template.Spec.InfrastructureRef},
	} {
		c := conditions.GetV1Beta2(m, part.condition)
		if part.provisioned || part.ref == nil || part.tpl == nil || c == nil || c.Reason != part.reason {
			continue
		}
		clone, err := external.Generate(ctx, r.Client, external.CloneInput{
			Template: part.tpl, Namespace: m.Namespace, Name: part.ref.Name, ClusterName: ms.Spec.ClusterName,
			Labels: m.Labels, Annotations: ms.Spec.Template.Annotations,
			Owner: metav1.NewControllerRef(m, clusterv1.GroupVersion.WithKind("Machine")),
		})
		if err != nil {
			return fmt.Errorf("creating the missing %s %s of Machine %s from template %s: %w", part.ref.Kind, part.ref.Name, m.Name, part.tpl.Name, err)
		}
		if clone.GetKind() != part.ref.Kind || clone.GetAPIVersion() != part.ref.APIVersion {
			continue // the template is no longer the Machine's: the Machine keeps reporting what is missing
		}
		ctrl.LoggerFrom(ctx).Info("Creating the missing clone of a Machine", "Machine", klog.KObj(m), part.ref.Kind, klog.KObj(clone))
		if err := r.Client.Create(ctx, clone, client.FieldOwner(fieldOwner)); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating the missing %s %s of Machine %s: %w", part.ref.Kind, part.ref.Name, m.Name, err)
		}
	}
	return nil
}

// createMachine creates a Machine and the clones of the bootstrap and infrastructure templates it refers
// to. The Machine is created first, so that its clones are created already owned by it (controller owner
// reference, cluster-name label): the Machine controller has no ownership to write to them afterwards, one
// write per clone saved (upstream creates the clones owned by the MachineSet and the Machine controller
// patches them). When a clone cannot be created, the Machine and the clones made so far are deleted.
func (r *Reconciler) createMachine(ctx context.Context, s *scope, n, count int) (*clusterv1.Machine, error) {
	ms := s.ms
	m, err := newMachine(ms, utilrand.String(randomLength))
	if err != nil {
		s.createFailure = &failure{clusterv1.MachineSetMachineCreationFailedReason, conditions.Capitalise(err.Error())}
		return nil, err
	}
	log := ctrl.LoggerFrom(ctx).WithValues("Machine", klog.KObj(m))
	log.Info(fmt.Sprintf("Creating Machine (scaling up, %d of %d)", n, count))

	// The clones carry the Machine's labels and the template's annotations from the start, written as this
	// controller's (its field owner), as syncMachines would propagate them: it has nothing left to write to
	// them, as upstream's clones. They are generated (templates read) before anything is created, so that a
	// missing template creates nothing.
	var bootstrap *unstructured.Unstructured
	if tpl := ms.Spec.Template.Spec.Bootstrap.ConfigRef; tpl != nil {
		if bootstrap, err = r.generateClone(ctx, s, m, tpl, clusterv1.MachineSetBootstrapTemplateCloningFailedReason, "bootstrap"); err != nil {
			return nil, err
		}
		m.Spec.Bootstrap.ConfigRef = external.RefFor(bootstrap)
	}
	tpl := &ms.Spec.Template.Spec.InfrastructureRef
	infra, err := r.generateClone(ctx, s, m, tpl, clusterv1.MachineSetInfrastructureTemplateCloningFailedReason, "infrastructure")
	if err != nil {
		return nil, err
	}
	m.Spec.InfrastructureRef = *external.RefFor(infra)

	if err := r.Client.Create(ctx, m, client.FieldOwner(fieldOwner)); err != nil {
		s.createFailure = &failure{clusterv1.MachineSetMachineCreationFailedReason, "Creating a Machine failed"}
		r.recorder().Eventf(ms, corev1.EventTypeWarning, EventFailedCreate, "Failed to create machine: %v", err)
		return nil, fmt.Errorf("creating Machine %s: %w", m.Name, err)
	}

	owner := *metav1.NewControllerRef(m, clusterv1.GroupVersion.WithKind("Machine"))
	var created []client.Object
	cleanup := func() {
		for _, obj := range append(created, client.Object(m)) {
			if err := r.Client.Delete(ctx, obj); err != nil && !apierrors.IsNotFound(err) {
				log.Error(err, "Deleting what was created for a Machine after creating a clone failed",
					obj.GetObjectKind().GroupVersionKind().Kind, klog.KObj(obj))
			}
		}
	}
	for _, clone := range []struct {
		obj    *unstructured.Unstructured
		reason string
		what   string
		tpl    *corev1.ObjectReference
	}{
		{bootstrap, clusterv1.MachineSetBootstrapTemplateCloningFailedReason, "bootstrap", ms.Spec.Template.Spec.Bootstrap.ConfigRef},
		{infra, clusterv1.MachineSetInfrastructureTemplateCloningFailedReason, "infrastructure", tpl},
	} {
		if clone.obj == nil {
			continue
		}
		clone.obj.SetOwnerReferences([]metav1.OwnerReference{owner})
		if err := r.Client.Create(ctx, clone.obj, client.FieldOwner(fieldOwner)); err != nil {
			cleanup()
			s.createFailure = cloneFailure(clone.reason, clone.tpl)
			return nil, fmt.Errorf("cloning the %s template: creating %s %s from template %s: %w",
				clone.what, clone.obj.GetKind(), clone.obj.GetName(), clone.tpl.Name, err)
		}
		created = append(created, clone.obj)
	}
	r.recorder().Eventf(ms, corev1.EventTypeNormal, EventSuccessfulCreate, "Created machine %q", m.Name)
	return m, nil
}

// generateClone generates the clone of tpl (the what template: bootstrap or infrastructure) for Machine m,
// without creating it; when that fails, the MachineSet reports reason.
func (r *Reconciler) generateClone(ctx context.Context, s *scope, m *clusterv1.Machine, tpl *corev1.ObjectReference, reason, what string) (*unstructured.Unstructured, error) {
	clone, err := external.Generate(ctx, r.Client, external.CloneInput{
		Template: tpl, Namespace: s.ms.Namespace, Name: m.Name, ClusterName: s.ms.Spec.ClusterName,
		Labels: m.Labels, Annotations: s.ms.Spec.Template.Annotations,
	})
	if err != nil {
		s.createFailure = cloneFailure(reason, tpl)
		return nil, fmt.Errorf("cloning the %s template: %w", what, err)
	}
	return clone, nil
}

func cloneFailure(reason string, tpl *corev1.ObjectReference) *failure {
	return &failure{reason, fmt.Sprintf("Cloning %s %s failed", tpl.Kind, tpl.Name)}
}

// newMachine returns the Machine the MachineSet creates, without its bootstrap and infrastructure
// references; random is the random part of its name.
func newMachine(ms *clusterv1.MachineSet, random string) (*clusterv1.Machine, error) {
	tpl := defaultMachineNameTemplate
	if ms.Spec.MachineNamingStrategy != nil && ms.Spec.MachineNamingStrategy.Template != "" {
		tpl = ms.Spec.MachineNamingStrategy.Template
	}
	name, err := machineName(tpl, ms, random)
	if err != nil {
		return nil, err
	}
	spec := ms.Spec.Template.Spec.DeepCopy()
	spec.ClusterName = ms.Spec.ClusterName
	spec.InfrastructureRef = corev1.ObjectReference{}
	spec.Bootstrap.ConfigRef = nil
	m := &clusterv1.Machine{
		TypeMeta: metav1.TypeMeta{APIVersion: clusterv1.GroupVersion.String(), Kind: "Machine"},
		ObjectMeta: metav1.ObjectMeta{
			Name:            name,
			Namespace:       ms.Namespace,
			Labels:          machineLabels(ms),
			Annotations:     maps.Clone(ms.Spec.Template.Annotations),
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(ms, clusterv1.GroupVersion.WithKind("MachineSet"))},
			// Set on creation, as upstream does, so that a Machine deleted before the Machine controller first
			// sees it still gets its infrastructure and bootstrap objects cleaned up.
			Finalizers: []string{clusterv1.MachineFinalizer},
		},
		Spec: *spec,
	}
	return m, nil
}

// machineName renders a naming template ({{ .machineSet.name }}, {{ .cluster.name }}, {{ .random }}).
// The template must use {{ .random }}, so that names do not repeat. A name longer than 63 characters is
// cut and gets a new random suffix.
func machineName(tpl string, ms *clusterv1.MachineSet, random string) (string, error) {
	if !strings.Contains(tpl, "{{ .random }}") {
		return "", errors.New("it must contain {{ .random }}")
	}
	t, err := template.New("machine name").Option("missingkey=error").Parse(tpl)
	if err != nil {
		return "", err
	}
	var buf bytes.Buffer
	data := map[string]any{
		"cluster":    map[string]any{"name": ms.Spec.ClusterName},
		"machineSet": map[string]any{"name": ms.Name},
		"random":     random,
	}
	if err := t.Execute(&buf, data); err != nil {
		return "", err
	}
	name := buf.String()
	if len(name) > maxNameLength {
		name = name[:maxNameLength-randomLength] + random
	}
	return name, nil
}

// machineLabels are the labels of the MachineSet's Machines: the template's, the Cluster's, the MachineSet's
// name (hashed when it cannot be a label value) and, when it has one, the MachineDeployment's name.
func machineLabels(ms *clusterv1.MachineSet) map[string]string {
	out := effectiveTemplateLabels(ms)
	out[clusterv1.MachineSetNameLabel] = labelformat.Value(ms.Name)
	if md, ok := ms.Labels[clusterv1.MachineDeploymentNameLabel]; ok {
		out[clusterv1.MachineDeploymentNameLabel] = md
	}
	return out
}

// deleteMachines deletes count Machines, chosen by the delete policy.
func (r *Reconciler) deleteMachines(ctx context.Context, s *scope, count int) error {
	log := ctrl.LoggerFrom(ctx)
	policy := clusterv1.MachineSetDeletePolicy(s.ms.Spec.DeletePolicy)
	victims := machinesToDelete(s.machines, count, policy)
	keys := make([]client.ObjectKey, 0, len(victims))
	for i, m := range victims {
		keys = append(keys, client.ObjectKeyFromObject(m))
		if !m.DeletionTimestamp.IsZero() {
			log.V(4).Info(fmt.Sprintf("Waiting for Machine to be deleted (scaling down, %d of %d)", i+1, count), "Machine", klog.KObj(m))
			continue
		}
		log.Info(fmt.Sprintf("Deleting Machine (scaling down, %d of %d)", i+1, count), "Machine", klog.KObj(m), "deletePolicy", policy)
		if err := r.Client.Delete(ctx, m); err != nil && !apierrors.IsNotFound(err) {
			r.recorder().Eventf(s.ms, corev1.EventTypeWarning, EventFailedDelete, "Failed to delete machine %q: %v", m.Name, err)
			return fmt.Errorf("deleting Machine %s: %w", m.Name, err)
		}
		r.recorder().Eventf(s.ms, corev1.EventTypeNormal, EventSuccessfulDelete, "Deleted machine %q", m.Name)
	}
	// The next reconcile must see these Machines as deleting, or it would delete others too.
	return r.waitForCache(ctx, keys, func(m *clusterv1.Machine, err error) bool {
		return apierrors.IsNotFound(err) || (err == nil && !m.DeletionTimestamp.IsZero())
	})
}

// waitForCache polls the cache until done holds for every Machine, or the cache sync timeout passes.
func (r *Reconciler) waitForCache(ctx context.Context, keys []client.ObjectKey, done func(*clusterv1.Machine, error) bool) error {
	for _, key := range keys {
		err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, r.cacheSyncTimeout(), true, func(ctx context.Context) (bool, error) {
			m := &clusterv1.Machine{}
			return done(m, r.Client.Get(ctx, key, m)), nil
		})
		if err != nil {
			return fmt.Errorf("waiting for the cache to show the change to Machine %s: %w", key.Name, err)
		}
	}
	return nil
}
