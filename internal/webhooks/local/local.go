package local

import (
	"context"
	"fmt"
	"slices"
	"sort"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	bootstrapv1 "github.com/capstan-dev/capstan/api/bootstrap/kubeadm/v1beta1"
	controlplanev1 "github.com/capstan-dev/capstan/api/controlplane/kubeadm/v1beta1"
	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	infrav1 "github.com/capstan-dev/capstan/api/infrastructure/local/v1alpha1"
	"github.com/capstan-dev/capstan/internal/providers/local/backend"
	"github.com/capstan-dev/capstan/internal/webhooks"
)

// Namespace is the namespace of the local provider's manifests.
const Namespace = "capl-system"

// ManifestsFile is where Manifests are kept, from the repository root.
const ManifestsFile = "config/local/webhooks.yaml"

// Webhooks returns the local provider's webhooks; c reads the Clusters of KubeadmConfigs (nil for
// rendering manifests).
func Webhooks(c client.Reader) webhooks.Set {
	return webhooks.Set{
		Prefix:   "capl",
		Selector: map[string]string{"control-plane": "controller-manager"},
		Hooks: []webhooks.Hook{
			// Only the KubeadmControlPlanes whose machines are the provider's reach it: those of other
			// providers are neither held up nor seen.
			webhooks.Validating(&controlplanev1.KubeadmControlPlane{}, KubeadmControlPlane{}).When(admissionregistrationv1.MatchCondition{
				Name: "local-machines",
				Expression: "has(object.spec.machineTemplate.infrastructureRef.kind) && has(object.spec.machineTemplate.infrastructureRef.apiVersion) && " +
					"object.spec.machineTemplate.infrastructureRef.kind == 'LocalMachineTemplate' && " +
					"object.spec.machineTemplate.infrastructureRef.apiVersion.startsWith('" + infrav1.GroupVersion.Group + "/')",
			}),
			// A KubeadmConfig does not say whose machine it is: those with extra arguments reach the
			// hook, which looks at their Cluster.
			webhooks.Validating(&bootstrapv1.KubeadmConfig{}, KubeadmConfig{Client: c}).When(admissionregistrationv1.MatchCondition{
				Name: "extra-arguments",
				Expression: "has(object.spec.clusterConfiguration) && (" +
					"(has(object.spec.clusterConfiguration.apiServer) && has(object.spec.clusterConfiguration.apiServer.extraArgs)) || " +
					"(has(object.spec.clusterConfiguration.etcd) && has(object.spec.clusterConfiguration.etcd.local) && " +
					"has(object.spec.clusterConfiguration.etcd.local.extraArgs)))",
			}),
		},
	}
}

// Manifests renders the webhook Service and configuration of the local provider (ManifestsFile).
func Manifests() ([]byte, error) {
	scheme := runtime.NewScheme()
	if err := controlplanev1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	if err := bootstrapv1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	return Webhooks(nil).ManifestsYAML(scheme, Namespace)
}

// KubeadmControlPlane refuses the extra arguments of a KubeadmControlPlane of LocalMachines that the
// local provider does not run.
type KubeadmControlPlane struct{}

// ValidateCreate validates a new KubeadmControlPlane.
func (KubeadmControlPlane) ValidateCreate(_ context.Context, kcp *controlplanev1.KubeadmControlPlane) (admission.Warnings, error) {
	return nil, kcpInvalid(kcp, nil)
}

// ValidateUpdate validates a changed KubeadmControlPlane: only arguments the update adds or changes are
// refused, so that an object admitted before the check (or before a provider upgrade) can still be
// changed, and its finalizers removed.
func (KubeadmControlPlane) ValidateUpdate(_ context.Context, old, kcp *controlplanev1.KubeadmControlPlane) (admission.Warnings, error) {
	return nil, kcpInvalid(kcp, old)
}

// ValidateDelete accepts every deletion.
func (KubeadmControlPlane) ValidateDelete(context.Context, *controlplanev1.KubeadmControlPlane) (admission.Warnings, error) {
	return nil, nil
}

func kcpInvalid(kcp, old *controlplanev1.KubeadmControlPlane) error {
	if !isLocal(kcp.Spec.MachineTemplate.InfrastructureRef.APIVersion, kcp.Spec.MachineTemplate.InfrastructureRef.Kind, "LocalMachineTemplate") {
		return nil
	}
	var before []backend.Violation
	if old != nil {
		before = backend.Violations(controlPlane(&old.Spec.KubeadmConfigSpec))
	}
	errs := fieldErrors(backend.Violations(controlPlane(&kcp.Spec.KubeadmConfigSpec)), before,
		field.NewPath("spec", "kubeadmConfigSpec", "clusterConfiguration"))
	return invalid(controlplanev1.GroupVersion.WithKind("KubeadmControlPlane").GroupKind(), kcp.Name, errs)
}

// KubeadmConfig refuses the extra arguments of a KubeadmConfig of a Cluster whose infrastructure is a
// LocalCluster that the local provider does not run.
type KubeadmConfig struct {
	// Client reads the KubeadmConfig's Cluster (its cluster.x-k8s.io/cluster-name label).
	Client client.Reader
}

// ValidateCreate validates a new KubeadmConfig.
func (w KubeadmConfig) ValidateCreate(ctx context.Context, kc *bootstrapv1.KubeadmConfig) (admission.Warnings, error) {
	return w.validate(ctx, kc, nil)
}

// ValidateUpdate validates a changed KubeadmConfig: only arguments the update adds or changes are refused.
func (w KubeadmConfig) ValidateUpdate(ctx context.Context, old, kc *bootstrapv1.KubeadmConfig) (admission.Warnings, error) {
	return w.validate(ctx, kc, old)
}

// ValidateDelete accepts every deletion.
func (KubeadmConfig) ValidateDelete(context.Context, *bootstrapv1.KubeadmConfig) (admission.Warnings, error) {
	return nil, nil
}

func (w KubeadmConfig) validate(ctx context.Context, kc, old *bootstrapv1.KubeadmConfig) (admission.Warnings, error) {
	vs := backend.Violations(controlPlane(&kc.Spec))
	if len(vs) == 0 {
		return nil, nil
	}
	name := kc.Labels[clusterv1.ClusterNameLabel]
	if name == "" {
		return admission.Warnings{"the KubeadmConfig has no " + clusterv1.ClusterNameLabel + " label: if its Machine is a LocalMachine, " +
			"the local provider refuses to run extra arguments it does not allow (see docs/providers/local.md#extra-arguments)"}, nil
	}
	cluster := &clusterv1.Cluster{}
	if err := w.Client.Get(ctx, client.ObjectKey{Namespace: kc.Namespace, Name: name}, cluster); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, apierrors.NewInternalError(fmt.Errorf("reading Cluster %s to tell whether its infrastructure is local: %w", name, err))
	}
	ref := cluster.Spec.InfrastructureRef
	if ref == nil || !isLocal(ref.APIVersion, ref.Kind, "LocalCluster") {
		return nil, nil
	}
	var before []backend.Violation
	if old != nil {
		before = backend.Violations(controlPlane(&old.Spec))
	}
	errs := fieldErrors(vs, before, field.NewPath("spec", "clusterConfiguration"))
	return nil, invalid(bootstrapv1.GroupVersion.WithKind("KubeadmConfig").GroupKind(), kc.Name, errs)
}

// isLocal reports whether apiVersion and kind are the local provider's kind.
func isLocal(apiVersion, kind, want string) bool {
	gv, err := schema.ParseGroupVersion(apiVersion)
	return err == nil && gv.Group == infrav1.GroupVersion.Group && kind == want
}

// controlPlane is what the local provider would run of a kubeadm configuration: its extra arguments
// (sorted by name, as a map holds them), extra volumes and files.
func controlPlane(spec *bootstrapv1.KubeadmConfigSpec) *backend.ControlPlane {
	cp := &backend.ControlPlane{}
	for _, f := range spec.Files {
		cp.Files = append(cp.Files, backend.File{Path: f.Path})
	}
	cc := spec.ClusterConfiguration
	if cc == nil {
		return cp
	}
	cp.APIServerArgs = args(cc.APIServer.ExtraArgs)
	for _, v := range cc.APIServer.ExtraVolumes {
		cp.APIServerVolumes = append(cp.APIServerVolumes, backend.Volume{HostPath: v.HostPath, MountPath: v.MountPath})
	}
	if cc.Etcd.Local != nil {
		cp.EtcdArgs = args(cc.Etcd.Local.ExtraArgs)
	}
	return cp
}

func args(m map[string]string) []backend.Arg {
	out := make([]backend.Arg, 0, len(m))
	for k, v := range m {
		out = append(out, backend.Arg{Name: k, Value: v})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// fieldErrors turns the violations that are not in before (same argument, same value) into field errors
// under cc, the clusterConfiguration's path.
func fieldErrors(vs, before []backend.Violation, cc *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, v := range vs {
		if slices.ContainsFunc(before, func(b backend.Violation) bool {
			return b.Component == v.Component && b.Name == v.Name && b.Value == v.Value
		}) {
			continue
		}
		p := cc.Child("apiServer", "extraArgs").Key(v.Name)
		if v.Component == backend.Etcd {
			p = cc.Child("etcd", "local", "extraArgs").Key(v.Name)
		}
		errs = append(errs, field.Forbidden(p, v.Error()+": "+backend.Explanation))
	}
	return errs
}

func invalid(gk schema.GroupKind, name string, errs field.ErrorList) error {
	if len(errs) == 0 {
		return nil
	}
	return apierrors.NewInvalid(gk, name, errs)
}
