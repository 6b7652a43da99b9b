package conversion

import (
	crconversion "sigs.k8s.io/controller-runtime/pkg/webhook/conversion"

	runtimev1alpha1 "github.com/capstan-dev/capstan/api/runtime/v1alpha1"
	runtimev1beta2 "github.com/capstan-dev/capstan/api/runtime/v1beta2"
)

// Runtime returns the conversion of the runtime.cluster.x-k8s.io kind once v1beta2 is its storage version:
// v1alpha1 ⇄ v1beta2. v1alpha1 has every v1beta2 field, so the generated conversions are all there is:
// nothing is kept in DataAnnotation.
func Runtime() Kinds {
	return Kinds{
		{GroupKind: runtimev1beta2.GroupVersion.WithKind("ExtensionConfig").GroupKind(), Converter: crconversion.NewHubSpokeConverter(&runtimev1beta2.ExtensionConfig{},
			crconversion.NewSpokeConverter(&runtimev1alpha1.ExtensionConfig{},
				generated(runtimev1alpha1.Convert_v1beta2_ExtensionConfig_To_v1alpha1_ExtensionConfig),
				generated(runtimev1alpha1.Convert_v1alpha1_ExtensionConfig_To_v1beta2_ExtensionConfig)))},
	}
}
