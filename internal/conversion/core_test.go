package conversion_test

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/apitesting/fuzzer"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	runtimeserializer "k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crconversion "sigs.k8s.io/controller-runtime/pkg/webhook/conversion"
	"sigs.k8s.io/randfill"

	clusterv1beta1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta2"
	"github.com/capstan-dev/capstan/internal/conversion"
	"github.com/capstan-dev/capstan/internal/test/conversiontest"
)

// providerKinds are the providers' kinds the references of the tests name, with the version their CRDs
// serve for the contract.
var providerKinds = []schema.GroupVersionKind{
	{Group: "controlplane.cluster.x-k8s.io", Version: "v1beta2", Kind: "KubeadmControlPlane"},
	{Group: "bootstrap.cluster.x-k8s.io", Version: "v1beta2", Kind: "KubeadmConfig"},
	{Group: "infrastructure.cluster.x-k8s.io", Version: "v1beta1", Kind: "DockerMachine"},
	{Group: "infrastructure.cluster.x-k8s.io", Version: "v1alpha7", Kind: "ExampleCluster"},
}

// providerVersions is the APIVersions of a management cluster with providerKinds' CRDs.
func providerVersions(_ context.Context, gk schema.GroupKind) (string, error) {
	for _, gvk := range providerKinds {
		if gvk.GroupKind() == gk {
			return gvk.GroupVersion().String(), nil
		}
	}
	return "", fmt.Errorf("no CRD for %s", gk)
}

func coreScheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	scheme := runtime.NewScheme()
	add := runtime.NewSchemeBuilder(clusterv1beta1.AddToScheme, clusterv1.AddToScheme)
	if err := add.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	return scheme
}

func coreConverter(t *testing.T, scheme *runtime.Scheme, kind string) crconversion.Converter {
	t.Helper()
	registry, err := conversion.Core(providerVersions).Registry(scheme)
	if err != nil {
		t.Fatal(err)
	}
	c, ok := registry.GetConverter(schema.GroupKind{Group: clusterv1.GroupVersion.Group, Kind: kind})
	if !ok {
		t.Fatalf("no converter for %s", kind)
	}
	return c
}

func TestCoreRoundTrips(t *testing.T) {
	scheme := coreScheme(t)
	tests := []struct {
		hub, spoke client.Object
	}{
		{&clusterv1.Machine{}, &clusterv1beta1.Machine{}},
		{&clusterv1.MachineSet{}, &clusterv1beta1.MachineSet{}},
		{&clusterv1.MachineDeployment{}, &clusterv1beta1.MachineDeployment{}},
		{&clusterv1.Cluster{}, &clusterv1beta1.Cluster{}},
		{&clusterv1.MachineHealthCheck{}, &clusterv1beta1.MachineHealthCheck{}},
		{&clusterv1.MachinePool{}, &clusterv1beta1.MachinePool{}},
		{&clusterv1.MachineDrainRule{}, &clusterv1beta1.MachineDrainRule{}},
		{&clusterv1.ClusterClass{}, &clusterv1beta1.ClusterClass{}},
	}
	for _, tt := range tests {
		kind := reflect.TypeOf(tt.hub).Elem().Name()
		t.Run(kind, conversiontest.RoundTrip{Scheme: scheme, Converter: coreConverter(t, scheme, kind),
			Hub: tt.hub, Spoke: tt.spoke, Funcs: []fuzzer.FuzzerFuncs{coreFuzzerFuncs}}.Run)
	}
}

// testNamespace is the namespace of every random object: a v1beta1 reference's namespace is the referring
// object's (v1beta2 references have none).
const testNamespace = "ns"

// coreFuzzerFuncs keep random objects to what a real object of the API server can hold, and to what
// upstream's conversion, which capstan follows, keeps.
func coreFuzzerFuncs(_ runtimeserializer.CodecFactory) []any {
	return append(slices.Concat(spokeNamingStrategies, spokePatches),
		// Objects live in a namespace, which their v1beta1 references repeat.
		func(in *clusterv1beta1.Machine, c randfill.Continue) {
			c.FillNoCustom(in)
			in.Namespace = testNamespace
		},
		func(in *clusterv1beta1.MachineSet, c randfill.Continue) {
			c.FillNoCustom(in)
			in.Namespace = testNamespace
		},
		func(in *clusterv1beta1.MachineDeployment, c randfill.Continue) {
			c.FillNoCustom(in)
			in.Namespace = testNamespace
		},
		func(in *clusterv1beta1.MachinePool, c randfill.Continue) {
			c.FillNoCustom(in)
			in.Namespace = testNamespace
		},
		func(in *clusterv1beta1.MachineHealthCheck, c randfill.Continue) {
			c.FillNoCustom(in)
			in.Namespace = testNamespace
		},
		func(in *clusterv1beta1.Cluster, c randfill.Continue) {
			c.FillNoCustom(in)
			in.Namespace = testNamespace
		},
		func(in *clusterv1beta1.ClusterClass, c randfill.Continue) {
			c.FillNoCustom(in)
			in.Namespace = testNamespace
		},
		// An empty status.v1beta2 is unset in v1beta2 (no controller writes it empty).
		func(in *clusterv1beta1.MachineStatus, c randfill.Continue) {
			spokeMachineStatus(in, c)
			if in.V1Beta2 != nil && len(in.V1Beta2.Conditions) == 0 {
				in.V1Beta2 = nil
			}
		},
		func(in *clusterv1beta1.MachineSetStatus, c randfill.Continue) {
			c.FillNoCustom(in)
			if reflect.DeepEqual(in.V1Beta2, &clusterv1beta1.MachineSetV1Beta2Status{}) {
				in.V1Beta2 = nil
			}
		},
		func(in *clusterv1beta1.MachineDeploymentStatus, c randfill.Continue) {
			c.FillNoCustom(in)
			if reflect.DeepEqual(in.V1Beta2, &clusterv1beta1.MachineDeploymentV1Beta2Status{}) {
				in.V1Beta2 = nil
			}
		},
		func(in *clusterv1beta1.MachinePoolStatus, c randfill.Continue) {
			c.FillNoCustom(in)
			if reflect.DeepEqual(in.V1Beta2, &clusterv1beta1.MachinePoolV1Beta2Status{}) {
				in.V1Beta2 = nil
			}
		},
		func(in *clusterv1beta1.MachineHealthCheckStatus, c randfill.Continue) {
			c.FillNoCustom(in)
			if reflect.DeepEqual(in.V1Beta2, &clusterv1beta1.MachineHealthCheckV1Beta2Status{}) {
				in.V1Beta2 = nil
			}
		},
		func(in *clusterv1beta1.ClusterClassStatus, c randfill.Continue) {
			c.FillNoCustom(in)
			if reflect.DeepEqual(in.V1Beta2, &clusterv1beta1.ClusterClassV1Beta2Status{}) {
				in.V1Beta2 = nil
			}
		},
		func(in *clusterv1beta1.ClusterStatus, c randfill.Continue) {
			c.FillNoCustom(in)
			if reflect.DeepEqual(in.V1Beta2, &clusterv1beta1.ClusterV1Beta2Status{}) {
				in.V1Beta2 = nil
			}
		},
		// A v1beta1 reference keeps, in v1beta2, its group, kind and name: its version is the one the
		// provider's CRD serves for the contract, and uid, resourceVersion and fieldPath are dropped, as
		// upstream does (Cluster API itself never sets them).
		func(in *corev1.ObjectReference, c randfill.Continue) {
			c.FillNoCustom(in)
			gvk := providerKinds[c.Intn(len(providerKinds))]
			*in = corev1.ObjectReference{APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind, Namespace: testNamespace, Name: "n" + in.Name}
		},
		func(in *clusterv1.ContractVersionedObjectReference, c randfill.Continue) {
			c.FillNoCustom(in)
			if in.IsDefined() {
				gvk := providerKinds[c.Intn(len(providerKinds))]
				in.APIGroup, in.Kind = gvk.Group, gvk.Kind
			}
		},
		// v1beta2 counts durations in whole seconds that fit an int32.
		func(in *metav1.Duration, c randfill.Continue) {
			in.Duration = time.Duration(c.Int31()) * time.Second
		},
		// A variable's value is JSON.
		func(in *apiextensionsv1.JSON, c randfill.Continue) {
			in.Raw = []byte(strconv.FormatBool(c.Bool()))
		},
		spokeMachineSpec,
		spokeMachineSet,
		spokeMachineDeploymentSpec,
		spokeMachineDeploymentStrategy,
		spokeMachineHealthCheckClass,
		spokeMachineHealthCheckSpec,
		spokeClusterSpec,
		spokeTopology,
		spokeControlPlaneTopology,
		spokeMachineDeploymentTopology,
		spokeMachinePoolTopology,
		spokeClusterVariable,
		spokeClusterNetwork,
		hubUnhealthyNodeCondition,
		hubUnhealthyMachineCondition,
		hubClusterStatus,
		hubMachineStatus,
		hubMachineSetStatus,
		hubMachineDeploymentStatus,
		hubMachinePoolStatus,
		hubMachineHealthCheckStatus,
		hubClusterClassStatus,
		spokeJSONSchemaProps,
		hubJSONSchemaProps,
	)
}

// nonEmpty is in, or nil for an empty list: JSON does not tell them apart.
func nonEmpty[T any](in []T) []T {
	if len(in) == 0 {
		return nil
	}
	return in
}

// emptyToNil is nil for a pointer to an empty string: upstream converts both to an unset value, which every
// controller reads the same.
func emptyToNil(s **string) {
	if *s != nil && **s == "" {
		*s = nil
	}
}

// zeroTimeToNil is nil for a pointer to the zero time, which JSON writes as null.
func zeroTimeToNil(t **metav1.Time) {
	if *t != nil && (*t).IsZero() {
		*t = nil
	}
}

func spokeMachineSpec(in *clusterv1beta1.MachineSpec, c randfill.Continue) {
	c.FillNoCustom(in)
	emptyToNil(&in.Version)
	emptyToNil(&in.ProviderID)
	emptyToNil(&in.FailureDomain)
}

func spokeMachineStatus(in *clusterv1beta1.MachineStatus, c randfill.Continue) {
	c.FillNoCustom(in)
	// v1beta2's nodeRef is the Node's name: the Machine controller writes nothing else.
	if in.NodeRef != nil {
		in.NodeRef = &corev1.ObjectReference{APIVersion: "v1", Kind: "Node", Name: "node-" + in.NodeRef.Name}
	}
	zeroTimeToNil(&in.LastUpdated)
	zeroTimeToNil(&in.CertificatesExpiryDate)
	if in.Deletion != nil {
		zeroTimeToNil(&in.Deletion.NodeDrainStartTime)
		zeroTimeToNil(&in.Deletion.WaitForNodeVolumeDetachStartTime)
		zeroTimeToNil(&in.Deletion.WaitForPreDrainHookStartTime)
		zeroTimeToNil(&in.Deletion.WaitForPreTerminateHookStartTime)
	}
	// v1beta1 has no Updating phase: v1beta2's shows as Running.
	if in.Phase == string(clusterv1.MachinePhaseUpdating) {
		in.Phase = string(clusterv1beta1.MachinePhaseRunning)
	}
}

func spokeMachineSet(in *clusterv1beta1.MachineSetSpec, c randfill.Continue) {
	c.FillNoCustom(in)
	if in.MachineNamingStrategy != nil && in.MachineNamingStrategy.Template == "" {
		in.MachineNamingStrategy = nil
	}
}

func spokeMachineDeploymentSpec(in *clusterv1beta1.MachineDeploymentSpec, c randfill.Continue) {
	c.FillNoCustom(in)
	// v1beta2 has neither: no version of Cluster API implemented them, and upstream drops them.
	in.ProgressDeadlineSeconds, in.RevisionHistoryLimit = nil, nil
	zeroTimeToNil(&in.RolloutAfter)
	if in.MachineNamingStrategy != nil && in.MachineNamingStrategy.Template == "" {
		in.MachineNamingStrategy = nil
	}
}

// spokeMachineDeploymentStrategy leaves out empty parts of a strategy, which v1beta2 has no way to tell
// from unset ones, as upstream's fuzzer does; an empty delete policy is not in the field's enum.
func spokeMachineDeploymentStrategy(in *clusterv1beta1.MachineDeploymentStrategy, c randfill.Continue) {
	c.FillNoCustom(in)
	if in.RollingUpdate != nil {
		emptyToNil(&in.RollingUpdate.DeletePolicy)
		if reflect.DeepEqual(in.RollingUpdate, &clusterv1beta1.MachineRollingUpdateDeployment{}) {
			in.RollingUpdate = nil
		}
	}
	if in.Remediation != nil && in.Remediation.MaxInFlight == nil {
		in.Remediation = nil
	}
	if in.Type == "" && in.RollingUpdate == nil && in.Remediation == nil {
		// An empty strategy is made nil by its parent's conversion; the fuzzer cannot set the parent's
		// pointer, so it gives the strategy a type.
		in.Type = clusterv1beta1.RollingUpdateMachineDeploymentStrategyType
	}
}

func spokeMachineHealthCheckClass(in *clusterv1beta1.MachineHealthCheckClass, c randfill.Continue) {
	c.FillNoCustom(in)
	emptyToNil(&in.UnhealthyRange)
	in.UnhealthyConditions = nonEmpty(in.UnhealthyConditions)
	if reflect.DeepEqual(in, &clusterv1beta1.MachineHealthCheckClass{}) {
		// As spokeMachineDeploymentStrategy: an empty health check is unset in v1beta2.
		in.NodeStartupTimeout = &metav1.Duration{Duration: time.Minute}
	}
}

func spokeMachineHealthCheckSpec(in *clusterv1beta1.MachineHealthCheckSpec, c randfill.Continue) {
	c.FillNoCustom(in)
	emptyToNil(&in.UnhealthyRange)
	in.UnhealthyConditions = nonEmpty(in.UnhealthyConditions)
}

func spokeClusterSpec(in *clusterv1beta1.ClusterSpec, c randfill.Continue) {
	c.FillNoCustom(in)
	if in.Topology != nil && reflect.DeepEqual(in.Topology, &clusterv1beta1.Topology{}) {
		in.Topology = nil
	}
}

func spokeTopology(in *clusterv1beta1.Topology, c randfill.Continue) {
	c.FillNoCustom(in)
	// No version of Cluster API implemented rolloutAfter; v1beta2 has no such field and upstream drops it.
	in.RolloutAfter = nil
	if in.Workers != nil && reflect.DeepEqual(in.Workers, &clusterv1beta1.WorkersTopology{}) {
		in.Workers = nil
	}
	// The topology's MachineDeployments and MachinePools have unique names (a list map in the schema).
	if in.Workers != nil {
		for i := range in.Workers.MachineDeployments {
			in.Workers.MachineDeployments[i].Name = fmt.Sprintf("md-%d", i)
		}
		for i := range in.Workers.MachinePools {
			in.Workers.MachinePools[i].Name = fmt.Sprintf("mp-%d", i)
		}
	}
}

func spokeControlPlaneTopology(in *clusterv1beta1.ControlPlaneTopology, c randfill.Continue) {
	c.FillNoCustom(in)
	if in.Variables != nil && len(in.Variables.Overrides) == 0 {
		in.Variables = nil
	}
}

func spokeMachineDeploymentTopology(in *clusterv1beta1.MachineDeploymentTopology, c randfill.Continue) {
	c.FillNoCustom(in)
	emptyToNil(&in.FailureDomain)
	if in.Variables != nil && len(in.Variables.Overrides) == 0 {
		in.Variables = nil
	}
}

func spokeMachinePoolTopology(in *clusterv1beta1.MachinePoolTopology, c randfill.Continue) {
	c.FillNoCustom(in)
	if in.Variables != nil && len(in.Variables.Overrides) == 0 {
		in.Variables = nil
	}
}

func spokeClusterVariable(in *clusterv1beta1.ClusterVariable, c randfill.Continue) {
	c.FillNoCustom(in)
	// definitionFrom is gone in v1beta2; upstream's v1beta1 already refused it being set.
	in.DefinitionFrom = ""
}

func spokeClusterNetwork(in *clusterv1beta1.ClusterNetwork, c randfill.Continue) {
	c.FillNoCustom(in)
	// Port 0 is the API server's default: v1beta2 shows it unset, as v1beta1 does with nil.
	if in.APIServerPort != nil && *in.APIServerPort == 0 {
		in.APIServerPort = nil
	}
	if in.Services != nil && in.Services.CIDRBlocks == nil {
		in.Services = nil
	}
	if in.Pods != nil && in.Pods.CIDRBlocks == nil {
		in.Pods = nil
	}
	if reflect.DeepEqual(in, &clusterv1beta1.ClusterNetwork{}) {
		in.ServiceDomain = "cluster.local"
	}
}

// The hub's unhealthy conditions require a timeout.

func hubUnhealthyNodeCondition(in *clusterv1.UnhealthyNodeCondition, c randfill.Continue) {
	c.FillNoCustom(in)
	if in.TimeoutSeconds == nil {
		in.TimeoutSeconds = ptr.To[int32](0)
	}
}

func hubUnhealthyMachineCondition(in *clusterv1.UnhealthyMachineCondition, c randfill.Continue) {
	c.FillNoCustom(in)
	if in.TimeoutSeconds == nil {
		in.TimeoutSeconds = ptr.To[int32](0)
	}
}

func hubClusterStatus(in *clusterv1.ClusterStatus, c randfill.Continue) {
	c.FillNoCustom(in)
	if in.Deprecated != nil && (in.Deprecated.V1Beta1 == nil || reflect.DeepEqual(in.Deprecated.V1Beta1, &clusterv1.ClusterV1Beta1DeprecatedStatus{})) {
		in.Deprecated = nil
	}
	// Failure domains are a list map keyed by a non-empty name (v1beta1's is a map), which the Cluster
	// controller keeps sorted; controlPlane is required.
	for i := range in.FailureDomains {
		in.FailureDomains[i].Name = fmt.Sprintf("fd-%02d-%s", i, in.FailureDomains[i].Name)
		if in.FailureDomains[i].ControlPlane == nil {
			in.FailureDomains[i].ControlPlane = ptr.To(false)
		}
	}
	slices.SortFunc(in.FailureDomains, func(a, b clusterv1.FailureDomain) int { return strings.Compare(a.Name, b.Name) })
}

func hubMachineStatus(in *clusterv1.MachineStatus, c randfill.Continue) {
	c.FillNoCustom(in)
	if in.Deprecated != nil && (in.Deprecated.V1Beta1 == nil || reflect.DeepEqual(in.Deprecated.V1Beta1, &clusterv1.MachineV1Beta1DeprecatedStatus{})) {
		in.Deprecated = nil
	}
}

func hubMachineHealthCheckStatus(in *clusterv1.MachineHealthCheckStatus, c randfill.Continue) {
	c.FillNoCustom(in)
	if in.Deprecated != nil && (in.Deprecated.V1Beta1 == nil || reflect.DeepEqual(in.Deprecated.V1Beta1, &clusterv1.MachineHealthCheckV1Beta1DeprecatedStatus{})) {
		in.Deprecated = nil
	}
}

func hubClusterClassStatus(in *clusterv1.ClusterClassStatus, c randfill.Continue) {
	c.FillNoCustom(in)
	if in.Deprecated != nil && (in.Deprecated.V1Beta1 == nil || reflect.DeepEqual(in.Deprecated.V1Beta1, &clusterv1.ClusterClassV1Beta1DeprecatedStatus{})) {
		in.Deprecated = nil
	}
}

// namingTemplate is a naming strategy's template: v1beta2 has the template alone, so an empty strategy (no
// template, or "") is an unset one. The fuzzer cannot unset the strategy from here, so it gives it a
// template.
func namingTemplate(s **string) {
	if *s == nil || **s == "" {
		*s = ptr.To("{{ .cluster.name }}-{{ .random }}")
	}
}

var spokeNamingStrategies = []any{
	func(in *clusterv1beta1.InfrastructureNamingStrategy, c randfill.Continue) {
		c.FillNoCustom(in)
		namingTemplate(&in.Template)
	},
	func(in *clusterv1beta1.ControlPlaneClassNamingStrategy, c randfill.Continue) {
		c.FillNoCustom(in)
		namingTemplate(&in.Template)
	},
	func(in *clusterv1beta1.MachineDeploymentClassNamingStrategy, c randfill.Continue) {
		c.FillNoCustom(in)
		namingTemplate(&in.Template)
	},
	func(in *clusterv1beta1.MachinePoolClassNamingStrategy, c randfill.Continue) {
		c.FillNoCustom(in)
		namingTemplate(&in.Template)
	},
}

// Schemas nest without end: the fuzzer fills two levels of them, each with random scalar fields (as
// upstream's), and valid JSON in enum and default.

func spokeJSONSchemaProps(in *clusterv1beta1.JSONSchemaProps, c randfill.Continue) {
	fillSpokeSchema(in, c)
	in.Properties = map[string]clusterv1beta1.JSONSchemaProps{}
	for range c.Intn(3) {
		in.Properties[c.String(0)] = *fillSpokeSchema(&clusterv1beta1.JSONSchemaProps{}, c)
	}
	in.Items = fillSpokeSchema(&clusterv1beta1.JSONSchemaProps{}, c)
	in.AdditionalProperties = fillSpokeSchema(&clusterv1beta1.JSONSchemaProps{}, c)
	in.AllOf = []clusterv1beta1.JSONSchemaProps{*fillSpokeSchema(&clusterv1beta1.JSONSchemaProps{}, c)}
	in.Not = fillSpokeSchema(&clusterv1beta1.JSONSchemaProps{}, c)
}

func fillSpokeSchema(in *clusterv1beta1.JSONSchemaProps, c randfill.Continue) *clusterv1beta1.JSONSchemaProps {
	in.Description, in.Type, in.Format, in.Pattern = c.String(0), c.String(0), c.String(0), c.String(0)
	in.Required = []string{c.String(0)}
	if c.Bool() {
		in.MaxItems, in.MinItems, in.MaxLength, in.Maximum = ptr.To(c.Int63()), ptr.To(c.Int63()), ptr.To(c.Int63()), ptr.To(c.Int63())
	}
	in.UniqueItems, in.ExclusiveMaximum, in.XPreserveUnknownFields, in.XIntOrString = c.Bool(), c.Bool(), c.Bool(), c.Bool()
	in.Enum = []apiextensionsv1.JSON{{Raw: []byte(`"a"`)}, {Raw: []byte(`"b"`)}}
	in.Default = &apiextensionsv1.JSON{Raw: []byte(strconv.FormatBool(c.Bool()))}
	if c.Bool() {
		in.XMetadata = &clusterv1beta1.VariableSchemaMetadata{Labels: map[string]string{"l": c.String(0)}}
	}
	if c.Bool() {
		in.XValidations = []clusterv1beta1.ValidationRule{{Rule: c.String(0), Message: c.String(0), Reason: clusterv1beta1.FieldValueInvalid, FieldPath: c.String(0)}}
	}
	return in
}

func hubJSONSchemaProps(in *clusterv1.JSONSchemaProps, c randfill.Continue) {
	fillHubSchema(in, c)
	in.Properties = map[string]clusterv1.JSONSchemaProps{}
	for range c.Intn(3) {
		in.Properties[c.String(0)] = *fillHubSchema(&clusterv1.JSONSchemaProps{}, c)
	}
	in.Items = fillHubSchema(&clusterv1.JSONSchemaProps{}, c)
	in.AdditionalProperties = fillHubSchema(&clusterv1.JSONSchemaProps{}, c)
	in.OneOf = []clusterv1.JSONSchemaProps{*fillHubSchema(&clusterv1.JSONSchemaProps{}, c)}
	in.Not = fillHubSchema(&clusterv1.JSONSchemaProps{}, c)
}

// fillHubSchema leaves v1beta2's optional booleans unset or not at random: the conversion restores an
// unchanged variable whole.
func fillHubSchema(in *clusterv1.JSONSchemaProps, c randfill.Continue) *clusterv1.JSONSchemaProps {
	in.Description, in.Type, in.Format, in.Pattern = c.String(0), c.String(0), c.String(0), c.String(0)
	in.Required = []string{c.String(0)}
	if c.Bool() {
		in.MaxItems, in.MinLength, in.Minimum = ptr.To(c.Int63()), ptr.To(c.Int63()), ptr.To(c.Int63())
		in.UniqueItems, in.ExclusiveMinimum, in.XPreserveUnknownFields = ptr.To(c.Bool()), ptr.To(c.Bool()), ptr.To(c.Bool())
	}
	in.Enum = []apiextensionsv1.JSON{{Raw: []byte(`"a"`)}}
	in.Default = &apiextensionsv1.JSON{Raw: []byte(strconv.FormatBool(c.Bool()))}
	if c.Bool() {
		in.XMetadata = clusterv1.VariableSchemaMetadata{Annotations: map[string]string{"a": c.String(0)}}
	}
	return in
}

// A patch's optional strings are values in v1beta2: "" is unset, as upstream's fuzzer has it.
var spokePatches = []any{
	func(in *clusterv1beta1.MachineDeploymentClass, c randfill.Continue) {
		c.FillNoCustom(in)
		emptyToNil(&in.FailureDomain)
	},
	func(in *clusterv1beta1.ClusterClassPatch, c randfill.Continue) {
		c.FillNoCustom(in)
		emptyToNil(&in.EnabledIf)
	},
	func(in *clusterv1beta1.ExternalPatchDefinition, c randfill.Continue) {
		c.FillNoCustom(in)
		emptyToNil(&in.GenerateExtension)
		emptyToNil(&in.ValidateExtension)
		emptyToNil(&in.DiscoverVariablesExtension)
	},
	func(in *clusterv1beta1.JSONPatchValue, c randfill.Continue) {
		c.FillNoCustom(in)
		emptyToNil(&in.Variable)
		emptyToNil(&in.Template)
	},
}

// convertCore converts src to a new object of dst's type with the kind's converter, as the webhook does.
func convertCore(t *testing.T, scheme *runtime.Scheme, kind string, src, dst runtime.Object) error {
	t.Helper()
	for _, o := range []runtime.Object{src, dst} {
		gvks, _, err := scheme.ObjectKinds(o)
		if err != nil {
			t.Fatal(err)
		}
		o.GetObjectKind().SetGroupVersionKind(gvks[0])
	}
	return coreConverter(t, scheme, kind).ConvertObject(t.Context(), src, dst)
}

// A v1beta1 MachineDeployment read in v1beta2 shows its strategy, delete policy, remediation and
// timeouts under v1beta2's names and units.
func TestMachineDeploymentStrategyInV1beta2(t *testing.T) {
	scheme := coreScheme(t)
	maxSurge := intstr.FromInt32(2)
	maxInFlight := intstr.FromString("50%")
	spoke := &clusterv1beta1.MachineDeployment{
		ObjectMeta: metav1.ObjectMeta{Name: "md", Namespace: "ns"},
		Spec: clusterv1beta1.MachineDeploymentSpec{
			ClusterName: "prod",
			Strategy: &clusterv1beta1.MachineDeploymentStrategy{Type: clusterv1beta1.RollingUpdateMachineDeploymentStrategyType,
				RollingUpdate: &clusterv1beta1.MachineRollingUpdateDeployment{MaxSurge: &maxSurge, DeletePolicy: ptr.To("Oldest")},
				Remediation:   &clusterv1beta1.RemediationStrategy{MaxInFlight: &maxInFlight}},
			MinReadySeconds: ptr.To[int32](30),
			Template: clusterv1beta1.MachineTemplateSpec{Spec: clusterv1beta1.MachineSpec{
				ClusterName: "prod",
				InfrastructureRef: corev1.ObjectReference{APIVersion: "infrastructure.cluster.x-k8s.io/v1beta1", Kind: "DockerMachineTemplate",
					Namespace: "ns", Name: "workers"},
				NodeDrainTimeout: &metav1.Duration{Duration: 90 * time.Second},
			}},
		},
	}
	hub := &clusterv1.MachineDeployment{}
	if err := convertCore(t, scheme, "MachineDeployment", spoke, hub); err != nil {
		t.Fatal(err)
	}
	want := clusterv1.MachineDeploymentSpec{
		ClusterName: "prod",
		Rollout: clusterv1.MachineDeploymentRolloutSpec{Strategy: clusterv1.MachineDeploymentRolloutStrategy{
			Type: clusterv1.RollingUpdateMachineDeploymentStrategyType, RollingUpdate: clusterv1.MachineDeploymentRolloutStrategyRollingUpdate{MaxSurge: &maxSurge}}},
		Deletion:    clusterv1.MachineDeploymentDeletionSpec{Order: clusterv1.OldestMachineSetDeletionOrder},
		Remediation: clusterv1.MachineDeploymentRemediationSpec{MaxInFlight: &maxInFlight},
		Template: clusterv1.MachineTemplateSpec{Spec: clusterv1.MachineSpec{
			ClusterName:       "prod",
			InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: "infrastructure.cluster.x-k8s.io", Kind: "DockerMachineTemplate", Name: "workers"},
			MinReadySeconds:   ptr.To[int32](30),
			Deletion:          clusterv1.MachineDeletionSpec{NodeDrainTimeoutSeconds: ptr.To[int32](90)},
		}},
	}
	if diff := cmp.Diff(want, hub.Spec); diff != "" {
		t.Errorf("the v1beta2 spec (-want +got):\n%s", diff)
	}
}

// A v1beta2 Machine read in v1beta1 names its infrastructure with the version the provider's CRD serves
// for the contract, and writing it back keeps what v1beta1 cannot show (taints, minReadySeconds).
func TestMachineInV1beta1AndBack(t *testing.T) {
	scheme := coreScheme(t)
	hub := &clusterv1.Machine{
		ObjectMeta: metav1.ObjectMeta{Name: "m", Namespace: "ns"},
		Spec: clusterv1.MachineSpec{
			ClusterName:       "prod",
			InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: "infrastructure.cluster.x-k8s.io", Kind: "DockerMachine", Name: "m"},
			Bootstrap:         clusterv1.Bootstrap{ConfigRef: clusterv1.ContractVersionedObjectReference{APIGroup: "bootstrap.cluster.x-k8s.io", Kind: "KubeadmConfig", Name: "m"}},
			MinReadySeconds:   ptr.To[int32](0),
			Taints:            []clusterv1.MachineTaint{{Key: "dedicated", Value: "gpu", Effect: corev1.TaintEffectNoSchedule, Propagation: clusterv1.MachineTaintPropagationAlways}},
		},
		Status: clusterv1.MachineStatus{
			// The phase of a Machine whose Updating condition is True: v1beta1 shows Running and keeps the
			// condition, which brings the phase back.
			Phase:          string(clusterv1.MachinePhaseUpdating),
			Conditions:     []metav1.Condition{{Type: clusterv1beta1.MachineUpdatingV1Beta2Condition, Status: metav1.ConditionTrue, Reason: clusterv1beta1.MachineInPlaceUpdatingV1Beta2Reason}},
			Initialization: clusterv1.MachineInitializationStatus{BootstrapDataSecretCreated: ptr.To(true), InfrastructureProvisioned: ptr.To(false)},
		},
	}
	spoke := &clusterv1beta1.Machine{}
	if err := convertCore(t, scheme, "Machine", hub.DeepCopy(), spoke); err != nil {
		t.Fatal(err)
	}
	wantInfra := corev1.ObjectReference{APIVersion: "infrastructure.cluster.x-k8s.io/v1beta1", Kind: "DockerMachine", Namespace: "ns", Name: "m"}
	if diff := cmp.Diff(wantInfra, spoke.Spec.InfrastructureRef); diff != "" {
		t.Errorf("v1beta1 infrastructureRef (-want +got):\n%s", diff)
	}
	if spoke.Spec.Bootstrap.ConfigRef == nil || spoke.Spec.Bootstrap.ConfigRef.APIVersion != "bootstrap.cluster.x-k8s.io/v1beta2" {
		t.Errorf("v1beta1 bootstrap.configRef = %+v, want apiVersion bootstrap.cluster.x-k8s.io/v1beta2", spoke.Spec.Bootstrap.ConfigRef)
	}
	if spoke.Status.Phase != "Running" || !spoke.Status.BootstrapReady || spoke.Status.InfrastructureReady {
		t.Errorf("v1beta1 status: phase %q, bootstrapReady %t, infrastructureReady %t; want Running, true, false",
			spoke.Status.Phase, spoke.Status.BootstrapReady, spoke.Status.InfrastructureReady)
	}
	back := &clusterv1.Machine{}
	if err := convertCore(t, scheme, "Machine", spoke, back); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(hub.Spec, back.Spec); diff != "" {
		t.Errorf("back in v1beta2 the spec changed (-before +after):\n%s", diff)
	}
	if diff := cmp.Diff(hub.Status, back.Status); diff != "" {
		t.Errorf("back in v1beta2 the status changed (-before +after):\n%s", diff)
	}
	if len(back.Annotations) != 0 {
		t.Errorf("back in v1beta2 the conversion's annotation is left: %v", back.Annotations)
	}
}

// A reference to a kind no installed CRD serves cannot be shown in v1beta1: the conversion says so rather
// than writing a reference without a version.
func TestReferenceWithoutCRD(t *testing.T) {
	scheme := coreScheme(t)
	hub := &clusterv1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "ns"},
		Spec: clusterv1.ClusterSpec{InfrastructureRef: clusterv1.ContractVersionedObjectReference{
			APIGroup: "infrastructure.example.com", Kind: "UnknownCluster", Name: "c"}},
	}
	err := convertCore(t, scheme, "Cluster", hub, &clusterv1beta1.Cluster{})
	if err == nil || !strings.Contains(err.Error(), "UnknownCluster") {
		t.Errorf("converting a reference to a kind without CRD: error %v, want one naming UnknownCluster", err)
	}
}

// A v1beta1 Cluster's readiness, conditions and ClusterClass variables' metadata read in v1beta2 are
// under v1beta2's names.
func TestClusterAndClusterClassInV1beta2(t *testing.T) {
	scheme := coreScheme(t)
	cluster := &clusterv1beta1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "ns"},
		Spec:       clusterv1beta1.ClusterSpec{Topology: &clusterv1beta1.Topology{Class: "quick-start", ClassNamespace: "shared", Version: "v1.33.0"}},
		Status: clusterv1beta1.ClusterStatus{
			ControlPlaneReady: true,
			Conditions:        clusterv1beta1.Conditions{{Type: "Ready", Status: corev1.ConditionTrue}},
		},
	}
	hub := &clusterv1.Cluster{}
	if err := convertCore(t, scheme, "Cluster", cluster, hub); err != nil {
		t.Fatal(err)
	}
	if got := hub.Spec.Topology.ClassRef; got != (clusterv1.ClusterClassRef{Name: "quick-start", Namespace: "shared"}) {
		t.Errorf("v1beta2 topology.classRef = %+v, want quick-start in shared", got)
	}
	if got := hub.Status.Initialization; !reflect.DeepEqual(got, clusterv1.ClusterInitializationStatus{ControlPlaneInitialized: ptr.To(true)}) {
		t.Errorf("v1beta2 status.initialization = %+v, want controlPlaneInitialized alone", got)
	}
	if got := hub.GetV1Beta1Conditions(); len(got) != 1 || got[0].Type != "Ready" || len(hub.Status.Conditions) != 0 {
		t.Errorf("v1beta2 conditions: deprecated.v1beta1 %+v, conditions %+v; want the v1beta1 Ready condition under deprecated alone", got, hub.Status.Conditions)
	}

	class := &clusterv1beta1.ClusterClass{
		ObjectMeta: metav1.ObjectMeta{Name: "quick-start", Namespace: "shared"},
		Spec: clusterv1beta1.ClusterClassSpec{Variables: []clusterv1beta1.ClusterClassVariable{{
			Name: "region", Metadata: clusterv1beta1.ClusterClassVariableMetadata{Labels: map[string]string{"team": "a"}},
			Schema: clusterv1beta1.VariableSchema{OpenAPIV3Schema: clusterv1beta1.JSONSchemaProps{Type: "string"}},
		}}},
	}
	hubClass := &clusterv1.ClusterClass{}
	if err := convertCore(t, scheme, "ClusterClass", class, hubClass); err != nil {
		t.Fatal(err)
	}
	want := clusterv1.ClusterClassVariable{Name: "region", Required: ptr.To(false),
		DeprecatedV1Beta1Metadata: clusterv1.ClusterClassVariableMetadata{Labels: map[string]string{"team": "a"}},
		Schema:                    clusterv1.VariableSchema{OpenAPIV3Schema: clusterv1.JSONSchemaProps{Type: "string", UniqueItems: ptr.To(false), ExclusiveMaximum: ptr.To(false), ExclusiveMinimum: ptr.To(false), XPreserveUnknownFields: ptr.To(false), XIntOrString: ptr.To(false)}},
	}
	if diff := cmp.Diff([]clusterv1.ClusterClassVariable{want}, hubClass.Spec.Variables); diff != "" {
		t.Errorf("v1beta2 variables (-want +got):\n%s", diff)
	}
}

// A status.deprecated without v1beta1 is not written by any controller (v1beta2 relies on omitzero); the
// conversion keeps an unset one unset.

func hubMachineSetStatus(in *clusterv1.MachineSetStatus, c randfill.Continue) {
	c.FillNoCustom(in)
	if in.Deprecated != nil && in.Deprecated.V1Beta1 == nil {
		in.Deprecated = nil
	}
}

func hubMachineDeploymentStatus(in *clusterv1.MachineDeploymentStatus, c randfill.Continue) {
	c.FillNoCustom(in)
	if in.Deprecated != nil && in.Deprecated.V1Beta1 == nil {
		in.Deprecated = nil
	}
}

func hubMachinePoolStatus(in *clusterv1.MachinePoolStatus, c randfill.Continue) {
	c.FillNoCustom(in)
	if in.Deprecated != nil && in.Deprecated.V1Beta1 == nil {
		in.Deprecated = nil
	}
}

// A topology's health check shows its unhealthy machine conditions in v1beta1 (upstream v1.14's v1beta1
// field), and a v1beta1 client that removes the health check removes it whole.
func TestTopologyHealthCheckRemovedInV1beta1(t *testing.T) {
	scheme := coreScheme(t)
	hub := &clusterv1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "ns"},
		Spec: clusterv1.ClusterSpec{Topology: clusterv1.Topology{ClassRef: clusterv1.ClusterClassRef{Name: "quick-start"}, Version: "v1.33.0",
			ControlPlane: clusterv1.ControlPlaneTopology{HealthCheck: clusterv1.ControlPlaneTopologyHealthCheck{Checks: clusterv1.ControlPlaneTopologyHealthCheckChecks{
				UnhealthyNodeConditions:    []clusterv1.UnhealthyNodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionFalse, TimeoutSeconds: ptr.To[int32](300)}},
				UnhealthyMachineConditions: []clusterv1.UnhealthyMachineCondition{{Type: "Ready", Status: metav1.ConditionFalse, TimeoutSeconds: ptr.To[int32](300)}},
			}}},
		}},
	}
	spoke := &clusterv1beta1.Cluster{}
	if err := convertCore(t, scheme, "Cluster", hub.DeepCopy(), spoke); err != nil {
		t.Fatal(err)
	}
	want := []clusterv1beta1.UnhealthyMachineCondition{{Type: "Ready", Status: metav1.ConditionFalse, Timeout: metav1.Duration{Duration: 5 * time.Minute}}}
	if got := spoke.Spec.Topology.ControlPlane.MachineHealthCheck.UnhealthyMachineConditions; !reflect.DeepEqual(got, want) {
		t.Errorf("v1beta1 shows the unhealthy machine conditions %+v, want %+v", got, want)
	}
	unchanged := &clusterv1.Cluster{}
	if err := convertCore(t, scheme, "Cluster", spoke.DeepCopy(), unchanged); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(hub.Spec.Topology.ControlPlane.HealthCheck, unchanged.Spec.Topology.ControlPlane.HealthCheck); diff != "" {
		t.Errorf("an unchanged v1beta1 Cluster changed the health check (-before +after):\n%s", diff)
	}
	spoke.Spec.Topology.ControlPlane.MachineHealthCheck = nil
	removed := &clusterv1.Cluster{}
	if err := convertCore(t, scheme, "Cluster", spoke, removed); err != nil {
		t.Fatal(err)
	}
	if hc := removed.Spec.Topology.ControlPlane.HealthCheck; !reflect.ValueOf(hc).IsZero() {
		t.Errorf("the health check removed in v1beta1 is %+v in v1beta2, want none", hc)
	}
}

// A ClusterClass's kubernetesVersions and upgrade, and a Cluster's upgrade plans, are upstream v1.14's
// v1beta1 fields: v1beta1 shows them, and a v1beta1 client's edit of them is kept rather than overwritten
// by what the conversion's annotation holds.
func TestUpgradeFieldsEditedInV1beta1(t *testing.T) {
	scheme := coreScheme(t)
	hub := &clusterv1.ClusterClass{
		ObjectMeta: metav1.ObjectMeta{Name: "quick-start", Namespace: "ns"},
		Spec: clusterv1.ClusterClassSpec{
			KubernetesVersions: []string{"v1.31.4", "v1.32.2"},
			Upgrade:            clusterv1.ClusterClassUpgrade{External: clusterv1.ClusterClassUpgradeExternal{GenerateUpgradePlanExtension: "plan.ext"}},
		},
	}
	spoke := &clusterv1beta1.ClusterClass{}
	if err := convertCore(t, scheme, "ClusterClass", hub.DeepCopy(), spoke); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"v1.31.4", "v1.32.2"}, spoke.Spec.KubernetesVersions); diff != "" {
		t.Errorf("v1beta1 kubernetesVersions (-want +got):\n%s", diff)
	}
	if got := spoke.Spec.Upgrade.External.GenerateUpgradePlanExtension; got != "plan.ext" {
		t.Errorf("v1beta1 upgrade.external.generateUpgradePlanExtension = %q, want plan.ext", got)
	}
	spoke.Spec.KubernetesVersions = append(spoke.Spec.KubernetesVersions, "v1.33.0")
	spoke.Spec.Upgrade = clusterv1beta1.ClusterClassUpgrade{}
	edited := &clusterv1.ClusterClass{}
	if err := convertCore(t, scheme, "ClusterClass", spoke, edited); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"v1.31.4", "v1.32.2", "v1.33.0"}, edited.Spec.KubernetesVersions); diff != "" {
		t.Errorf("v1beta2 kubernetesVersions after the v1beta1 edit (-want +got):\n%s", diff)
	}
	if edited.Spec.Upgrade != (clusterv1.ClusterClassUpgrade{}) {
		t.Errorf("v1beta2 upgrade after v1beta1 removed it: %+v, want none", edited.Spec.Upgrade)
	}

	cluster := &clusterv1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "ns"},
		Status: clusterv1.ClusterStatus{
			ControlPlane: &clusterv1.ClusterControlPlaneStatus{UpgradePlan: []clusterv1.StatusUpgradePlanVersion{{Version: "v1.32.2"}, {Version: "v1.33.0"}}},
			Workers:      &clusterv1.WorkersStatus{UpgradePlan: []clusterv1.StatusUpgradePlanVersion{{Version: "v1.33.0"}}},
		},
	}
	spokeCluster := &clusterv1beta1.Cluster{}
	if err := convertCore(t, scheme, "Cluster", cluster.DeepCopy(), spokeCluster); err != nil {
		t.Fatal(err)
	}
	if v := spokeCluster.Status.V1Beta2; v == nil || v.ControlPlane == nil || v.Workers == nil ||
		!reflect.DeepEqual(v.ControlPlane.UpgradePlan, []clusterv1beta1.StatusUpgradePlanVersion{{Version: "v1.32.2"}, {Version: "v1.33.0"}}) ||
		!reflect.DeepEqual(v.Workers.UpgradePlan, []clusterv1beta1.StatusUpgradePlanVersion{{Version: "v1.33.0"}}) {
		t.Errorf("v1beta1 status.v1beta2 = %+v, want the control plane's and workers' upgrade plans", v)
	}
	spokeCluster.Status.V1Beta2.ControlPlane.UpgradePlan = spokeCluster.Status.V1Beta2.ControlPlane.UpgradePlan[1:]
	back := &clusterv1.Cluster{}
	if err := convertCore(t, scheme, "Cluster", spokeCluster, back); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]clusterv1.StatusUpgradePlanVersion{{Version: "v1.33.0"}}, back.Status.ControlPlane.UpgradePlan); diff != "" {
		t.Errorf("v1beta2 control plane upgradePlan after the v1beta1 edit (-want +got):\n%s", diff)
	}
}

// status.versions of a MachineSet, MachineDeployment and MachinePool, and of a Cluster's control plane and
// workers, are upstream v1.14's v1beta1 fields: v1beta1 shows them, and a v1beta1 writer's versions (the
// controllers write v1beta1) are what v1beta2 shows, not the older ones the conversion's annotation holds.
func TestStatusVersionsEditedInV1beta1(t *testing.T) {
	scheme := coreScheme(t)
	hubVersions := []clusterv1.StatusVersion{{Version: "v1.32.2", Replicas: 1}, {Version: "v1.33.0", Replicas: 2}}
	spokeVersions := []clusterv1beta1.StatusVersion{{Version: "v1.32.2", Replicas: 1}, {Version: "v1.33.0", Replicas: 2}}
	edited := []clusterv1beta1.StatusVersion{{Version: "v1.33.0", Replicas: 3}}
	wantEdited := []clusterv1.StatusVersion{{Version: "v1.33.0", Replicas: 3}}
	meta := metav1.ObjectMeta{Name: "o", Namespace: testNamespace}

	tests := []struct {
		name, kind string
		hub, spoke client.Object
		// spokeVersions are the v1beta1 object's versions, to read and to edit.
		spokeVersions func(client.Object) *[]clusterv1beta1.StatusVersion
		hubVersions   func(client.Object) []clusterv1.StatusVersion
	}{
		{
			name:  "MachineSet",
			kind:  "MachineSet",
			hub:   &clusterv1.MachineSet{ObjectMeta: meta, Status: clusterv1.MachineSetStatus{Versions: hubVersions}},
			spoke: &clusterv1beta1.MachineSet{},
			spokeVersions: func(o client.Object) *[]clusterv1beta1.StatusVersion {
				return &o.(*clusterv1beta1.MachineSet).Status.Versions
			},
			hubVersions: func(o client.Object) []clusterv1.StatusVersion { return o.(*clusterv1.MachineSet).Status.Versions },
		},
		{
			name:  "MachineDeployment",
			kind:  "MachineDeployment",
			hub:   &clusterv1.MachineDeployment{ObjectMeta: meta, Status: clusterv1.MachineDeploymentStatus{Versions: hubVersions}},
			spoke: &clusterv1beta1.MachineDeployment{},
			spokeVersions: func(o client.Object) *[]clusterv1beta1.StatusVersion {
				return &o.(*clusterv1beta1.MachineDeployment).Status.Versions
			},
			hubVersions: func(o client.Object) []clusterv1.StatusVersion {
				return o.(*clusterv1.MachineDeployment).Status.Versions
			},
		},
		{
			name:  "MachinePool",
			kind:  "MachinePool",
			hub:   &clusterv1.MachinePool{ObjectMeta: meta, Status: clusterv1.MachinePoolStatus{Versions: hubVersions}},
			spoke: &clusterv1beta1.MachinePool{},
			spokeVersions: func(o client.Object) *[]clusterv1beta1.StatusVersion {
				return &o.(*clusterv1beta1.MachinePool).Status.Versions
			},
			hubVersions: func(o client.Object) []clusterv1.StatusVersion { return o.(*clusterv1.MachinePool).Status.Versions },
		},
		{
			name:  "Cluster control plane",
			kind:  "Cluster",
			hub:   &clusterv1.Cluster{ObjectMeta: meta, Status: clusterv1.ClusterStatus{ControlPlane: &clusterv1.ClusterControlPlaneStatus{Versions: hubVersions}}},
			spoke: &clusterv1beta1.Cluster{},
			spokeVersions: func(o client.Object) *[]clusterv1beta1.StatusVersion {
				return &o.(*clusterv1beta1.Cluster).Status.V1Beta2.ControlPlane.Versions
			},
			hubVersions: func(o client.Object) []clusterv1.StatusVersion {
				return o.(*clusterv1.Cluster).Status.ControlPlane.Versions
			},
		},
		{
			name:  "Cluster workers",
			kind:  "Cluster",
			hub:   &clusterv1.Cluster{ObjectMeta: meta, Status: clusterv1.ClusterStatus{Workers: &clusterv1.WorkersStatus{Versions: hubVersions}}},
			spoke: &clusterv1beta1.Cluster{},
			spokeVersions: func(o client.Object) *[]clusterv1beta1.StatusVersion {
				return &o.(*clusterv1beta1.Cluster).Status.V1Beta2.Workers.Versions
			},
			hubVersions: func(o client.Object) []clusterv1.StatusVersion { return o.(*clusterv1.Cluster).Status.Workers.Versions },
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := convertCore(t, scheme, tt.kind, tt.hub.DeepCopyObject(), tt.spoke); err != nil {
				t.Fatal(err)
			}
			versions := tt.spokeVersions(tt.spoke)
			if diff := cmp.Diff(spokeVersions, *versions); diff != "" {
				t.Errorf("v1beta1 versions (-want +got):\n%s", diff)
			}
			*versions = edited
			back := reflect.New(reflect.TypeOf(tt.hub).Elem()).Interface().(client.Object)
			if err := convertCore(t, scheme, tt.kind, tt.spoke, back); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(wantEdited, tt.hubVersions(back)); diff != "" {
				t.Errorf("v1beta2 versions after the v1beta1 edit (-want +got):\n%s", diff)
			}
		})
	}
}

// The start times of the deletion hooks are v1beta1 fields (as in upstream v1.14's v1beta1): what a v1beta1
// client writes is what v1beta2 reads, not what the conversion annotation remembered.
func TestDeletionHookStartTimesEditedInV1beta1(t *testing.T) {
	scheme := coreScheme(t)
	drain := metav1.NewTime(time.Date(2026, 12, 8, 10, 0, 0, 0, time.UTC))
	terminate := metav1.NewTime(drain.Add(time.Minute))
	hub := &clusterv1.Machine{
		ObjectMeta: metav1.ObjectMeta{Name: "m", Namespace: testNamespace},
		Status: clusterv1.MachineStatus{Deletion: &clusterv1.MachineDeletionStatus{
			WaitForPreDrainHookStartTime: drain, WaitForPreTerminateHookStartTime: terminate,
		}},
	}
	spoke := &clusterv1beta1.Machine{}
	if err := convertCore(t, scheme, "Machine", hub.DeepCopy(), spoke); err != nil {
		t.Fatal(err)
	}
	if d := spoke.Status.Deletion; d == nil || !d.WaitForPreDrainHookStartTime.Equal(&drain) || !d.WaitForPreTerminateHookStartTime.Equal(&terminate) {
		t.Fatalf("v1beta1 status.deletion = %+v, want the hub's start times %v and %v", d, drain, terminate)
	}

	later := metav1.NewTime(terminate.Add(time.Hour))
	spoke.Status.Deletion.WaitForPreDrainHookStartTime = nil
	spoke.Status.Deletion.WaitForPreTerminateHookStartTime = &later
	back := &clusterv1.Machine{}
	if err := convertCore(t, scheme, "Machine", spoke, back); err != nil {
		t.Fatal(err)
	}
	if back.Status.Deletion == nil {
		t.Fatal("v1beta2 status.deletion is nil after the v1beta1 edit")
	}
	if got := back.Status.Deletion.WaitForPreDrainHookStartTime; !got.IsZero() {
		t.Errorf("waitForPreDrainHookStartTime = %v after v1beta1 removed it, want unset", got)
	}
	if got := back.Status.Deletion.WaitForPreTerminateHookStartTime; !got.Equal(&later) {
		t.Errorf("waitForPreTerminateHookStartTime = %v, want the v1beta1 edit %v", got, later)
	}
}
