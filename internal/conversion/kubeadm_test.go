package conversion_test

import (
	"context"
	"encoding/json"
	"maps"
	"reflect"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"k8s.io/apimachinery/pkg/api/apitesting/fuzzer"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	runtimeserializer "k8s.io/apimachinery/pkg/runtime/serializer"
	"sigs.k8s.io/randfill"

	bootstrapv1beta1 "github.com/capstan-dev/capstan/api/bootstrap/kubeadm/v1beta1"
	bootstrapv1 "github.com/capstan-dev/capstan/api/bootstrap/kubeadm/v1beta2"
	controlplanev1beta1 "github.com/capstan-dev/capstan/api/controlplane/kubeadm/v1beta1"
	controlplanev1 "github.com/capstan-dev/capstan/api/controlplane/kubeadm/v1beta2"
	clusterv1beta1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta2"
	"github.com/capstan-dev/capstan/internal/conversion"
	"github.com/capstan-dev/capstan/internal/test/conversiontest"
)

func kubeadmBootstrapScheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	scheme := runtime.NewScheme()
	add := runtime.NewSchemeBuilder(bootstrapv1.AddToScheme, bootstrapv1beta1.AddToScheme)
	if err := add.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	return scheme
}

func TestKubeadmBootstrapRoundTrips(t *testing.T) {
	scheme := kubeadmBootstrapScheme(t)
	group := bootstrapv1.GroupVersion.Group
	t.Run("KubeadmConfig", conversiontest.RoundTrip{Scheme: scheme,
		Converter: converterOf(t, conversion.KubeadmBootstrap(), scheme, schema.GroupKind{Group: group, Kind: "KubeadmConfig"}),
		Hub:       &bootstrapv1.KubeadmConfig{}, Spoke: &bootstrapv1beta1.KubeadmConfig{},
		Funcs: []fuzzer.FuzzerFuncs{kubeadmConfigFuzzFuncs}}.Run)
	t.Run("KubeadmConfigTemplate", conversiontest.RoundTrip{Scheme: scheme,
		Converter: converterOf(t, conversion.KubeadmBootstrap(), scheme, schema.GroupKind{Group: group, Kind: "KubeadmConfigTemplate"}),
		Hub:       &bootstrapv1.KubeadmConfigTemplate{}, Spoke: &bootstrapv1beta1.KubeadmConfigTemplate{},
		Funcs: []fuzzer.FuzzerFuncs{kubeadmConfigFuzzFuncs}}.Run)
}

// kubeadmConfigFuzzFuncs fill the kubeadm configuration as a real object can be: each says why.
func kubeadmConfigFuzzFuncs(_ runtimeserializer.CodecFactory) []any {
	return []any{
		// A bootstrap token matches [a-z0-9]{6}.[a-z0-9]{16} (the schema's pattern; JSON carries it as that
		// string, which must parse).
		func(in *bootstrapv1.BootstrapTokenString, c randfill.Continue) {
			in.ID, in.Secret = tokenPart(c, 6), tokenPart(c, 16)
		},
		func(in *bootstrapv1beta1.BootstrapTokenString, c randfill.Continue) {
			in.ID, in.Secret = tokenPart(c, 6), tokenPart(c, 16)
		},
		// token is required in v1beta1; an expiry read from JSON is a time or unset, never a pointer to the
		// zero time (which JSON writes as null).
		func(in *bootstrapv1beta1.BootstrapToken, c randfill.Continue) {
			c.FillNoCustom(in)
			if in.Token == nil {
				in.Token = &bootstrapv1beta1.BootstrapTokenString{}
				c.Fill(in.Token)
			}
			if in.Expires != nil && in.Expires.IsZero() {
				in.Expires = nil
			}
		},
		func(in *bootstrapv1beta1.KubeadmConfigSpec, c randfill.Continue) {
			c.FillNoCustom(in)
			// A v1beta1 pointer to an empty struct that v1beta2 holds as a value (omitted when empty) means
			// what an unset one does.
			nilEmptyV1beta1Structs(reflect.ValueOf(in).Elem())
			// These strings may not be empty in v1beta1 (minLength 1, or an enum).
			for i := range in.Users {
				u := &in.Users[i]
				for _, s := range []**string{&u.Gecos, &u.Groups, &u.HomeDir, &u.Shell, &u.Passwd, &u.PrimaryGroup, &u.Sudo} {
					dropEmptyString(s)
				}
			}
			if in.DiskSetup != nil {
				for i := range in.DiskSetup.Partitions {
					dropEmptyString(&in.DiskSetup.Partitions[i].TableType)
				}
				for i := range in.DiskSetup.Filesystems {
					dropEmptyString(&in.DiskSetup.Filesystems[i].Partition)
					dropEmptyString(&in.DiskSetup.Filesystems[i].ReplaceFS)
				}
			}
		},
		func(in *bootstrapv1beta1.KubeadmConfigStatus, c randfill.Continue) {
			c.FillNoCustom(in)
			// The v1beta1 controllers write status.v1beta2 with its conditions, and a data secret's name,
			// never an empty one.
			if in.V1Beta2 != nil && in.V1Beta2.Conditions == nil {
				in.V1Beta2 = nil
			}
			dropEmptyString(&in.DataSecretName)
		},
		// The webhook reads the v1beta2 object from JSON: no pointer to a nil list (null is an unset pointer),
		// no struct whose empty lists make it look set but is written as {}.
		func(in *bootstrapv1.KubeadmConfigSpec, c randfill.Continue) {
			c.FillNoCustom(in)
			viaJSON(in)
		},
		func(in *bootstrapv1.KubeadmConfigStatus, c randfill.Continue) {
			c.FillNoCustom(in)
			viaJSON(in)
		},
		// Up to four arguments, names repeated (v1beta2's lists may repeat a flag, v1beta1's maps cannot), in
		// any order: the fuzzer's lists have one element at most.
		func(in *[]bootstrapv1.Arg, c randfill.Continue) {
			n := c.Intn(5)
			if n == 0 {
				*in = nil
				return
			}
			names := []string{"a", "b", c.String(0)}
			*in = make([]bootstrapv1.Arg, n)
			for i := range *in {
				value := c.String(0)
				(*in)[i] = bootstrapv1.Arg{Name: names[c.Intn(len(names))], Value: &value}
			}
		},
	}
}

// v1beta1EmptiedStructs are the v1beta1 types a pointer to which is a value in v1beta2.
var v1beta1EmptiedStructs = map[reflect.Type]bool{}

func init() {
	for _, v := range []any{
		bootstrapv1beta1.ClusterConfiguration{}, bootstrapv1beta1.InitConfiguration{}, bootstrapv1beta1.JoinConfiguration{},
		bootstrapv1beta1.DiskSetup{}, bootstrapv1beta1.NTP{}, bootstrapv1beta1.IgnitionSpec{}, bootstrapv1beta1.ContainerLinuxConfig{},
		bootstrapv1beta1.Patches{}, bootstrapv1beta1.LocalEtcd{}, bootstrapv1beta1.ExternalEtcd{}, bootstrapv1beta1.BootstrapTokenDiscovery{},
		bootstrapv1beta1.FileDiscovery{}, bootstrapv1beta1.FileDiscoveryKubeConfig{}, bootstrapv1beta1.KubeConfigCluster{},
		bootstrapv1beta1.KubeConfigAuthProvider{}, bootstrapv1beta1.KubeConfigAuthExec{}, bootstrapv1beta1.FileSource{},
		bootstrapv1beta1.PasswdSource{},
	} {
		v1beta1EmptiedStructs[reflect.TypeOf(v)] = true
	}
}

// nilEmptyV1beta1Structs unsets, depth first, the pointers to empty v1beta1EmptiedStructs under v.
func nilEmptyV1beta1Structs(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return
		}
		nilEmptyV1beta1Structs(v.Elem())
		if v1beta1EmptiedStructs[v.Elem().Type()] && v.Elem().IsZero() {
			v.Set(reflect.Zero(v.Type()))
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				nilEmptyV1beta1Structs(v.Field(i))
			}
		}
	case reflect.Slice:
		for i := range v.Len() {
			nilEmptyV1beta1Structs(v.Index(i))
		}
	}
}

func tokenPart(c randfill.Continue, n int) string {
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[c.Intn(len(alphabet))]
	}
	return string(b)
}

func dropEmptyString(s **string) {
	if *s != nil && **s == "" {
		*s = nil
	}
}

// viaJSON replaces *v with its JSON's decoding.
func viaJSON[T any](v *T) {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	var out T
	if err := json.Unmarshal(b, &out); err != nil {
		panic(err)
	}
	*v = out
}

// A v1beta1 KubeadmConfig as a user writes it, read in v1beta2: the timeouts and extraArgs in their v1beta2
// places; the fields v1beta2 dropped come back when it is read in v1beta1 again.
func TestKubeadmConfigFromV1beta1(t *testing.T) {
	scheme := kubeadmBootstrapScheme(t)
	c := converterOf(t, conversion.KubeadmBootstrap(), scheme, schema.GroupKind{Group: bootstrapv1.GroupVersion.Group, Kind: "KubeadmConfig"})
	spoke := &bootstrapv1beta1.KubeadmConfig{
		ObjectMeta: metav1.ObjectMeta{Name: "cp-0", Namespace: "ns"},
		Spec: bootstrapv1beta1.KubeadmConfigSpec{
			ClusterConfiguration: &bootstrapv1beta1.ClusterConfiguration{
				KubernetesVersion: "v1.33.1", ClusterName: "prod",
				Networking: bootstrapv1beta1.Networking{PodSubnet: "10.244.0.0/16"},
				APIServer: bootstrapv1beta1.APIServer{
					ControlPlaneComponent:  bootstrapv1beta1.ControlPlaneComponent{ExtraArgs: map[string]string{"v": "2", "audit-log-path": "-"}},
					TimeoutForControlPlane: &metav1.Duration{Duration: 5 * time.Minute},
				},
			},
			JoinConfiguration:        &bootstrapv1beta1.JoinConfiguration{Discovery: bootstrapv1beta1.Discovery{Timeout: &metav1.Duration{Duration: 90 * time.Second}}},
			UseExperimentalRetryJoin: true, //nolint:staticcheck // a v1beta1 object may still have it
		},
		Status: bootstrapv1beta1.KubeadmConfigStatus{Ready: true, DataSecretName: ptr.To("cp-0")},
	}
	hub := &bootstrapv1.KubeadmConfig{}
	convertWith(t, scheme, c, spoke, hub)

	wantArgs := []bootstrapv1.Arg{{Name: "audit-log-path", Value: ptr.To("-")}, {Name: "v", Value: ptr.To("2")}}
	if diff := cmp.Diff(wantArgs, hub.Spec.ClusterConfiguration.APIServer.ExtraArgs); diff != "" {
		t.Errorf("v1beta2 apiServer.extraArgs (-want +got):\n%s", diff)
	}
	wantInit := bootstrapv1.Timeouts{ControlPlaneComponentHealthCheckSeconds: ptr.To[int32](300)}
	wantJoin := bootstrapv1.Timeouts{ControlPlaneComponentHealthCheckSeconds: ptr.To[int32](300), TLSBootstrapSeconds: ptr.To[int32](90)}
	if diff := cmp.Diff([]bootstrapv1.Timeouts{wantInit, wantJoin}, []bootstrapv1.Timeouts{hub.Spec.InitConfiguration.Timeouts, hub.Spec.JoinConfiguration.Timeouts}); diff != "" {
		t.Errorf("v1beta2 init and join timeouts (-want +got):\n%s", diff)
	}
	if hub.Status.Initialization.DataSecretCreated == nil || !*hub.Status.Initialization.DataSecretCreated || hub.Status.DataSecretName != "cp-0" {
		t.Errorf("v1beta2 status = %+v, want the data secret cp-0 created", hub.Status)
	}

	back := &bootstrapv1beta1.KubeadmConfig{}
	convertWith(t, scheme, c, hub, back)
	delete(back.Annotations, conversion.DataAnnotation)
	if len(back.Annotations) == 0 {
		back.Annotations = nil
	}
	if diff := cmp.Diff(spoke, back); diff != "" {
		t.Errorf("read in v1beta1 again (-before +after):\n%s", diff)
	}
}

// A v1beta2 KubeadmConfig read in v1beta1 and changed there (a user's kubectl edit of an older manifest):
// the change lands, and what v1beta1 cannot express and the user did not touch stays as it was.
func TestKubeadmConfigEditedInV1beta1(t *testing.T) {
	scheme := kubeadmBootstrapScheme(t)
	c := converterOf(t, conversion.KubeadmBootstrap(), scheme, schema.GroupKind{Group: bootstrapv1.GroupVersion.Group, Kind: "KubeadmConfig"})
	args := []bootstrapv1.Arg{{Name: "tls-cipher-suites", Value: ptr.To("b")}, {Name: "feature-gates", Value: ptr.To("X=true")}, {Name: "feature-gates", Value: ptr.To("Y=true")}}
	hub := &bootstrapv1.KubeadmConfig{
		ObjectMeta: metav1.ObjectMeta{Name: "cp-0", Namespace: "ns"},
		Spec: bootstrapv1.KubeadmConfigSpec{
			ClusterConfiguration: bootstrapv1.ClusterConfiguration{
				EncryptionAlgorithm: bootstrapv1.EncryptionAlgorithmECDSAP256, CertificateValidityPeriodDays: 100,
				APIServer: bootstrapv1.APIServer{ExtraArgs: args},
			},
			InitConfiguration: bootstrapv1.InitConfiguration{Timeouts: bootstrapv1.Timeouts{
				ControlPlaneComponentHealthCheckSeconds: ptr.To[int32](300), KubeletHealthCheckSeconds: ptr.To[int32](40)}},
			Files: []bootstrapv1.File{{Path: "/etc/motd", Content: "{{ .Name }}", ContentFormat: bootstrapv1.FileContentFormatTemplate}},
		},
	}
	spoke := &bootstrapv1beta1.KubeadmConfig{}
	convertWith(t, scheme, c, hub, spoke)
	if got := spoke.Spec.ClusterConfiguration.APIServer.ExtraArgs; !maps.Equal(got, map[string]string{"tls-cipher-suites": "b", "feature-gates": "Y=true"}) {
		t.Errorf("v1beta1 apiServer.extraArgs = %v, want the last feature-gates", got)
	}

	t.Run("another field", func(t *testing.T) {
		edited := spoke.DeepCopy()
		edited.Spec.PreKubeadmCommands = []string{"echo hi"}
		back := &bootstrapv1.KubeadmConfig{}
		convertWith(t, scheme, c, edited, back)
		want := hub.DeepCopy()
		want.Spec.PreKubeadmCommands = []string{"echo hi"}
		if diff := cmp.Diff(want.Spec, back.Spec); diff != "" {
			t.Errorf("v1beta2 after the edit (-want +got):\n%s", diff)
		}
	})
	t.Run("the arguments and the timeout", func(t *testing.T) {
		edited := spoke.DeepCopy()
		edited.Spec.ClusterConfiguration.APIServer.ExtraArgs["v"] = "4"
		edited.Spec.ClusterConfiguration.APIServer.TimeoutForControlPlane = &metav1.Duration{Duration: time.Minute}
		back := &bootstrapv1.KubeadmConfig{}
		convertWith(t, scheme, c, edited, back)
		wantArgs := []bootstrapv1.Arg{{Name: "feature-gates", Value: ptr.To("Y=true")}, {Name: "tls-cipher-suites", Value: ptr.To("b")}, {Name: "v", Value: ptr.To("4")}}
		if diff := cmp.Diff(wantArgs, back.Spec.ClusterConfiguration.APIServer.ExtraArgs); diff != "" {
			t.Errorf("v1beta2 apiServer.extraArgs (-want +got):\n%s", diff)
		}
		wantInit := bootstrapv1.Timeouts{ControlPlaneComponentHealthCheckSeconds: ptr.To[int32](60), KubeletHealthCheckSeconds: ptr.To[int32](40)}
		if diff := cmp.Diff(wantInit, back.Spec.InitConfiguration.Timeouts); diff != "" {
			t.Errorf("v1beta2 init timeouts (-want +got):\n%s", diff)
		}
		if back.Spec.ClusterConfiguration.EncryptionAlgorithm != bootstrapv1.EncryptionAlgorithmECDSAP256 || back.Spec.Files[0].ContentFormat != bootstrapv1.FileContentFormatTemplate {
			t.Errorf("v1beta2 lost encryptionAlgorithm or contentFormat: %+v", back.Spec)
		}
	})
	t.Run("contentFormat, which v1beta1 shows", func(t *testing.T) {
		if spoke.Spec.Files[0].ContentFormat != bootstrapv1beta1.FileContentFormatTemplate {
			t.Fatalf("v1beta1 files[0].contentFormat = %q, want Template", spoke.Spec.Files[0].ContentFormat)
		}
		edited := spoke.DeepCopy()
		edited.Spec.Files[0].ContentFormat = ""
		back := &bootstrapv1.KubeadmConfig{}
		convertWith(t, scheme, c, edited, back)
		if got := back.Spec.Files[0].ContentFormat; got != "" {
			t.Errorf("a contentFormat removed in v1beta1 is %q in v1beta2, want none", got)
		}
	})
}

func kubeadmControlPlaneScheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	scheme := runtime.NewScheme()
	add := runtime.NewSchemeBuilder(controlplanev1.AddToScheme, controlplanev1beta1.AddToScheme)
	if err := add.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	return scheme
}

// contractVersions is the manager's APIVersions in tests: every provider's contract version is v1beta2.
func contractVersions(_ context.Context, gk schema.GroupKind) (string, error) {
	return schema.GroupVersion{Group: gk.Group, Version: "v1beta2"}.String(), nil
}

func TestKubeadmControlPlaneRoundTrips(t *testing.T) {
	scheme := kubeadmControlPlaneScheme(t)
	group := controlplanev1.GroupVersion.Group
	kinds := conversion.KubeadmControlPlane(contractVersions)
	t.Run("KubeadmControlPlane", conversiontest.RoundTrip{Scheme: scheme,
		Converter: converterOf(t, kinds, scheme, schema.GroupKind{Group: group, Kind: "KubeadmControlPlane"}),
		Hub:       &controlplanev1.KubeadmControlPlane{}, Spoke: &controlplanev1beta1.KubeadmControlPlane{},
		Funcs: []fuzzer.FuzzerFuncs{kubeadmConfigFuzzFuncs, kubeadmControlPlaneFuzzFuncs}}.Run)
	t.Run("KubeadmControlPlaneTemplate", conversiontest.RoundTrip{Scheme: scheme,
		Converter: converterOf(t, kinds, scheme, schema.GroupKind{Group: group, Kind: "KubeadmControlPlaneTemplate"}),
		Hub:       &controlplanev1.KubeadmControlPlaneTemplate{}, Spoke: &controlplanev1beta1.KubeadmControlPlaneTemplate{},
		Funcs: []fuzzer.FuzzerFuncs{kubeadmConfigFuzzFuncs, kubeadmControlPlaneFuzzFuncs}}.Run)
}

// kubeadmControlPlaneFuzzFuncs fill the control plane's fields as a real object can be: each says why.
func kubeadmControlPlaneFuzzFuncs(_ runtimeserializer.CodecFactory) []any {
	return []any{
		func(in *controlplanev1beta1.KubeadmControlPlaneSpec, c randfill.Continue) {
			c.FillNoCustom(in)
			normalizeV1beta1Rollout(&in.RolloutBefore, &in.RolloutAfter, &in.RolloutStrategy, &in.MachineNamingStrategy)
			// A reference the controller can follow has an apiVersion that parses.
			in.MachineTemplate.InfrastructureRef.APIVersion = apiVersion(c)
		},
		func(in *controlplanev1beta1.KubeadmControlPlaneTemplateResourceSpec, c randfill.Continue) {
			c.FillNoCustom(in)
			normalizeV1beta1Rollout(&in.RolloutBefore, &in.RolloutAfter, &in.RolloutStrategy, &in.MachineNamingStrategy)
			// An empty machine template means what an unset one does (v1beta2 holds it as a value).
			if in.MachineTemplate != nil && reflect.ValueOf(*in.MachineTemplate).IsZero() {
				in.MachineTemplate = nil
			}
		},
		func(in *controlplanev1beta1.KubeadmControlPlaneStatus, c randfill.Continue) {
			c.FillNoCustom(in)
			// The v1beta1 controller writes status.v1beta2 with something in it, and a version, never an
			// empty one (minLength 1).
			if in.V1Beta2 != nil && reflect.ValueOf(*in.V1Beta2).IsZero() {
				in.V1Beta2 = nil
			}
			dropEmptyString(&in.Version)
		},
		// The webhook reads the v1beta2 object from JSON (see kubeadmConfigFuzzFuncs); an apiGroup is a DNS
		// subdomain (the schema's pattern).
		func(in *controlplanev1.KubeadmControlPlaneSpec, c randfill.Continue) {
			c.FillNoCustom(in)
			if in.MachineTemplate.Spec.InfrastructureRef.APIGroup != "" {
				in.MachineTemplate.Spec.InfrastructureRef.APIGroup = "infrastructure.example.com"
			}
			viaJSON(in)
		},
		func(in *controlplanev1.KubeadmControlPlaneTemplateResourceSpec, c randfill.Continue) {
			c.FillNoCustom(in)
			viaJSON(in)
		},
		func(in *controlplanev1.KubeadmControlPlaneStatus, c randfill.Continue) {
			c.FillNoCustom(in)
			viaJSON(in)
		},
	}
}

// normalizeV1beta1Rollout leaves out the v1beta1 values a real object cannot have: an empty struct where
// v1beta2 has a value (the same as an unset one), a zero time (JSON's null), certificatesExpiryDays under 7
// and an empty machine naming template (the schema's rules).
func normalizeV1beta1Rollout(before **controlplanev1beta1.RolloutBefore, after **metav1.Time, strategy **controlplanev1beta1.RolloutStrategy, naming **controlplanev1beta1.MachineNamingStrategy) {
	if b := *before; b != nil && (b.CertificatesExpiryDays == nil || *b.CertificatesExpiryDays < 7) {
		*before = nil
	}
	if *after != nil && (*after).IsZero() {
		*after = nil
	}
	if s := *strategy; s != nil {
		if s.RollingUpdate != nil && s.RollingUpdate.MaxSurge == nil {
			s.RollingUpdate = nil
		}
		if reflect.ValueOf(*s).IsZero() {
			*strategy = nil
		}
	}
	if *naming != nil && (*naming).Template == "" {
		*naming = nil
	}
}

func apiVersion(c randfill.Continue) string {
	versions := []string{"", "v1", "infrastructure.example.com/v1beta1", "infrastructure.example.com/v1beta2"}
	return versions[c.Intn(len(versions))]
}

// A v1beta1 KubeadmControlPlane as a user writes it, read in v1beta2: rollout, remediation and the machine
// template's timeouts in their v1beta2 places; read in v1beta1 again, it is as written, the
// infrastructureRef's apiVersion too (v1beta2 keeps the group alone).
func TestKubeadmControlPlaneFromV1beta1(t *testing.T) {
	scheme := kubeadmControlPlaneScheme(t)
	c := converterOf(t, conversion.KubeadmControlPlane(contractVersions), scheme, schema.GroupKind{Group: controlplanev1.GroupVersion.Group, Kind: "KubeadmControlPlane"})
	after := metav1.Unix(1800000000, 0)
	surge := intstr.FromInt32(0)
	spoke := &controlplanev1beta1.KubeadmControlPlane{
		ObjectMeta: metav1.ObjectMeta{Name: "cp", Namespace: "ns"},
		Spec: controlplanev1beta1.KubeadmControlPlaneSpec{
			Replicas: ptr.To[int32](3), Version: "v1.33.1",
			MachineTemplate: controlplanev1beta1.KubeadmControlPlaneMachineTemplate{
				InfrastructureRef: corev1.ObjectReference{APIVersion: "infrastructure.example.com/v1beta1", Kind: "DockerMachineTemplate", Name: "cp"},
				NodeDrainTimeout:  &metav1.Duration{Duration: 10 * time.Minute},
			},
			KubeadmConfigSpec: bootstrapv1beta1.KubeadmConfigSpec{ClusterConfiguration: &bootstrapv1beta1.ClusterConfiguration{ClusterName: "prod"}},
			RolloutBefore:     &controlplanev1beta1.RolloutBefore{CertificatesExpiryDays: ptr.To[int32](21)},
			RolloutAfter:      &after,
			RolloutStrategy: &controlplanev1beta1.RolloutStrategy{Type: controlplanev1beta1.RollingUpdateStrategyType,
				RollingUpdate: &controlplanev1beta1.RollingUpdate{MaxSurge: &surge}},
			RemediationStrategy: &controlplanev1beta1.RemediationStrategy{MaxRetry: ptr.To[int32](5), RetryPeriod: metav1.Duration{Duration: 5 * time.Minute},
				MinHealthyPeriod: &metav1.Duration{Duration: 2 * time.Hour}},
		},
		Status: controlplanev1beta1.KubeadmControlPlaneStatus{Replicas: 3, ReadyReplicas: 2, UpdatedReplicas: 3, Initialized: true, Ready: true},
	}
	hub := &controlplanev1.KubeadmControlPlane{}
	convertWith(t, scheme, c, spoke, hub)

	want := controlplanev1.KubeadmControlPlaneSpec{
		Replicas: ptr.To[int32](3), Version: "v1.33.1",
		MachineTemplate: controlplanev1.KubeadmControlPlaneMachineTemplate{Spec: controlplanev1.KubeadmControlPlaneMachineTemplateSpec{
			InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: "infrastructure.example.com", Kind: "DockerMachineTemplate", Name: "cp"},
			Deletion:          controlplanev1.KubeadmControlPlaneMachineTemplateDeletionSpec{NodeDrainTimeoutSeconds: ptr.To[int32](600)},
		}},
		Rollout: controlplanev1.KubeadmControlPlaneRolloutSpec{
			Before: controlplanev1.KubeadmControlPlaneRolloutBeforeSpec{CertificatesExpiryDays: 21}, After: after,
			Strategy: controlplanev1.KubeadmControlPlaneRolloutStrategy{Type: controlplanev1.RollingUpdateStrategyType,
				RollingUpdate: controlplanev1.KubeadmControlPlaneRolloutStrategyRollingUpdate{MaxSurge: &surge}},
		},
		Remediation: controlplanev1.KubeadmControlPlaneRemediationSpec{MaxRetry: ptr.To[int32](5), RetryPeriodSeconds: ptr.To[int32](300), MinHealthyPeriodSeconds: ptr.To[int32](7200)},
	}
	if diff := cmp.Diff(want, hub.Spec); diff != "" {
		t.Errorf("v1beta2 spec (-want +got):\n%s", diff)
	}
	if got := hub.Status.Initialization.ControlPlaneInitialized; got == nil || !*got {
		t.Errorf("v1beta2 status.initialization.controlPlaneInitialized = %v, want true", got)
	}
	if d := hub.Status.Deprecated; d == nil || d.V1Beta1 == nil || d.V1Beta1.ReadyReplicas != 2 || d.V1Beta1.UpdatedReplicas != 3 {
		t.Errorf("v1beta2 status.deprecated = %+v, want v1beta1's replica counts", d)
	}

	back := &controlplanev1beta1.KubeadmControlPlane{}
	convertWith(t, scheme, c, hub, back)
	delete(back.Annotations, conversion.DataAnnotation)
	if len(back.Annotations) == 0 {
		back.Annotations = nil
	}
	if diff := cmp.Diff(spoke, back); diff != "" {
		t.Errorf("read in v1beta1 again (-before +after):\n%s", diff)
	}
}

// A KubeadmControlPlane written in v1beta2, read in v1beta1: the infrastructureRef has the contract's
// apiVersion and the control plane's namespace; a v1beta1 edit keeps the machine template's taints.
func TestKubeadmControlPlaneFromV1beta2(t *testing.T) {
	scheme := kubeadmControlPlaneScheme(t)
	c := converterOf(t, conversion.KubeadmControlPlane(contractVersions), scheme, schema.GroupKind{Group: controlplanev1.GroupVersion.Group, Kind: "KubeadmControlPlane"})
	taints := []clusterv1.MachineTaint{{Key: "dedicated", Value: "cp", Effect: corev1.TaintEffectNoSchedule, Propagation: "Always"}}
	hub := &controlplanev1.KubeadmControlPlane{
		ObjectMeta: metav1.ObjectMeta{Name: "cp", Namespace: "ns"},
		Spec: controlplanev1.KubeadmControlPlaneSpec{Version: "v1.33.1",
			MachineTemplate: controlplanev1.KubeadmControlPlaneMachineTemplate{Spec: controlplanev1.KubeadmControlPlaneMachineTemplateSpec{
				InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: "infrastructure.example.com", Kind: "DockerMachineTemplate", Name: "cp"},
				Taints:            taints,
			}},
		},
	}
	spoke := &controlplanev1beta1.KubeadmControlPlane{}
	convertWith(t, scheme, c, hub, spoke)
	wantRef := corev1.ObjectReference{APIVersion: "infrastructure.example.com/v1beta2", Kind: "DockerMachineTemplate", Namespace: "ns", Name: "cp"}
	if diff := cmp.Diff(wantRef, spoke.Spec.MachineTemplate.InfrastructureRef); diff != "" {
		t.Errorf("v1beta1 infrastructureRef (-want +got):\n%s", diff)
	}

	spoke.Spec.Replicas = ptr.To[int32](5)
	back := &controlplanev1.KubeadmControlPlane{}
	convertWith(t, scheme, c, spoke, back)
	if diff := cmp.Diff(taints, back.Spec.MachineTemplate.Spec.Taints); diff != "" || back.Spec.Replicas == nil || *back.Spec.Replicas != 5 {
		t.Errorf("v1beta2 after the v1beta1 edit: replicas %v, taints (-want +got):\n%s", back.Spec.Replicas, diff)
	}
	if _, ok := back.Annotations["conversion.cluster.x-k8s.io/v1beta1-data"]; ok {
		t.Errorf("v1beta2 has the v1beta1 data annotation though v1beta1 added nothing: %v", back.Annotations)
	}
}

// A KubeadmControlPlane's status.versions is upstream v1.14's v1beta1 field: v1beta1 shows it, and the
// v1beta1 controller's versions are what v1beta2 shows, not the older ones the conversion's annotation holds.
func TestKubeadmControlPlaneVersionsEditedInV1beta1(t *testing.T) {
	scheme := kubeadmControlPlaneScheme(t)
	c := converterOf(t, conversion.KubeadmControlPlane(contractVersions), scheme, schema.GroupKind{Group: controlplanev1.GroupVersion.Group, Kind: "KubeadmControlPlane"})
	hub := &controlplanev1.KubeadmControlPlane{
		ObjectMeta: metav1.ObjectMeta{Name: "cp", Namespace: "ns"},
		Spec:       controlplanev1.KubeadmControlPlaneSpec{Version: "v1.33.1"},
		Status: controlplanev1.KubeadmControlPlaneStatus{Replicas: ptr.To[int32](3),
			Versions: []clusterv1.StatusVersion{{Version: "v1.32.4", Replicas: 2}, {Version: "v1.33.1", Replicas: 1}}},
	}
	spoke := &controlplanev1beta1.KubeadmControlPlane{}
	convertWith(t, scheme, c, hub, spoke)
	want := []clusterv1beta1.StatusVersion{{Version: "v1.32.4", Replicas: 2}, {Version: "v1.33.1", Replicas: 1}}
	if diff := cmp.Diff(want, spoke.Status.Versions); diff != "" {
		t.Errorf("v1beta1 versions (-want +got):\n%s", diff)
	}

	spoke.Status.Versions = []clusterv1beta1.StatusVersion{{Version: "v1.33.1", Replicas: 3}}
	back := &controlplanev1.KubeadmControlPlane{}
	convertWith(t, scheme, c, spoke, back)
	if diff := cmp.Diff([]clusterv1.StatusVersion{{Version: "v1.33.1", Replicas: 3}}, back.Status.Versions); diff != "" {
		t.Errorf("v1beta2 versions after the v1beta1 edit (-want +got):\n%s", diff)
	}
}

// A v1beta1 KubeadmControlPlaneTemplate's rolloutStrategy may leave out its type (v1beta1 defaults it in
// the control plane only): v1beta2 requires it, so it is RollingUpdate there, and unset again in v1beta1.
func TestKubeadmControlPlaneTemplateRolloutStrategyType(t *testing.T) {
	scheme := kubeadmControlPlaneScheme(t)
	c := converterOf(t, conversion.KubeadmControlPlane(contractVersions), scheme, schema.GroupKind{Group: controlplanev1.GroupVersion.Group, Kind: "KubeadmControlPlaneTemplate"})
	surge := intstr.FromInt32(1)
	spoke := &controlplanev1beta1.KubeadmControlPlaneTemplate{
		ObjectMeta: metav1.ObjectMeta{Name: "cp", Namespace: "ns"},
		Spec: controlplanev1beta1.KubeadmControlPlaneTemplateSpec{Template: controlplanev1beta1.KubeadmControlPlaneTemplateResource{
			Spec: controlplanev1beta1.KubeadmControlPlaneTemplateResourceSpec{
				RolloutStrategy: &controlplanev1beta1.RolloutStrategy{RollingUpdate: &controlplanev1beta1.RollingUpdate{MaxSurge: &surge}},
			},
		}},
	}
	hub := &controlplanev1.KubeadmControlPlaneTemplate{}
	convertWith(t, scheme, c, spoke, hub)
	if got := hub.Spec.Template.Spec.Rollout.Strategy.Type; got != controlplanev1.RollingUpdateStrategyType {
		t.Errorf("v1beta2 rollout.strategy.type = %q, want RollingUpdate", got)
	}
	back := &controlplanev1beta1.KubeadmControlPlaneTemplate{}
	convertWith(t, scheme, c, hub, back)
	if got := back.Spec.Template.Spec.RolloutStrategy; got == nil || got.Type != "" || got.RollingUpdate == nil || *got.RollingUpdate.MaxSurge != surge {
		t.Errorf("v1beta1 rolloutStrategy = %+v, want no type and maxSurge 1", got)
	}
}

// A v1beta1 KubeadmConfig whose controller set ready alone (no status.initialization): v1beta2 shows the
// data secret created, and v1beta1 reads back ready alone.
func TestKubeadmConfigReadyAlone(t *testing.T) {
	scheme := kubeadmBootstrapScheme(t)
	c := converterOf(t, conversion.KubeadmBootstrap(), scheme, schema.GroupKind{Group: bootstrapv1.GroupVersion.Group, Kind: "KubeadmConfig"})
	spoke := &bootstrapv1beta1.KubeadmConfig{
		ObjectMeta: metav1.ObjectMeta{Name: "w-0", Namespace: "ns"},
		Status:     bootstrapv1beta1.KubeadmConfigStatus{Ready: true, DataSecretName: ptr.To("w-0")},
	}
	hub := &bootstrapv1.KubeadmConfig{}
	convertWith(t, scheme, c, spoke, hub)
	if got := hub.Status.Initialization.DataSecretCreated; got == nil || !*got {
		t.Errorf("v1beta2 status.initialization.dataSecretCreated = %v, want true", got)
	}
	back := &bootstrapv1beta1.KubeadmConfig{}
	convertWith(t, scheme, c, hub, back)
	if !back.Status.Ready || back.Status.Initialization != nil {
		t.Errorf("v1beta1 status: ready %v, initialization %+v; want ready alone", back.Status.Ready, back.Status.Initialization)
	}
}
