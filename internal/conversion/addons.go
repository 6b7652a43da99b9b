package conversion

import (
	crconversion "sigs.k8s.io/controller-runtime/pkg/webhook/conversion"

	addonsv1beta1 "github.com/capstan-dev/capstan/api/addons/v1beta1"
	addonsv1beta2 "github.com/capstan-dev/capstan/api/addons/v1beta2"
)

// Addons returns the conversions of the addons.cluster.x-k8s.io kinds once v1beta2 is their storage
// version: v1beta1 ⇄ v1beta2. v1beta1 has every v1beta2 field, so the generated conversions are all there
// is: nothing is kept in DataAnnotation.
func Addons() Kinds {
	return Kinds{
		{GroupKind: addonsv1beta2.GroupVersion.WithKind("ClusterResourceSet").GroupKind(), Converter: crconversion.NewHubSpokeConverter(&addonsv1beta2.ClusterResourceSet{},
			crconversion.NewSpokeConverter(&addonsv1beta1.ClusterResourceSet{},
				generated(addonsv1beta1.Convert_v1beta2_ClusterResourceSet_To_v1beta1_ClusterResourceSet),
				generated(addonsv1beta1.Convert_v1beta1_ClusterResourceSet_To_v1beta2_ClusterResourceSet)))},
		{GroupKind: addonsv1beta2.GroupVersion.WithKind("ClusterResourceSetBinding").GroupKind(), Converter: crconversion.NewHubSpokeConverter(&addonsv1beta2.ClusterResourceSetBinding{},
			crconversion.NewSpokeConverter(&addonsv1beta1.ClusterResourceSetBinding{},
				generated(addonsv1beta1.Convert_v1beta2_ClusterResourceSetBinding_To_v1beta1_ClusterResourceSetBinding),
				generated(addonsv1beta1.Convert_v1beta1_ClusterResourceSetBinding_To_v1beta2_ClusterResourceSetBinding)))},
	}
}
