package reconciler

import (
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
)

// PausedCondition returns the v1beta2 Paused condition of obj, an object of kind: when paused, it says
// why (the Cluster's spec.paused, obj's cluster.x-k8s.io/paused annotation). cluster may be nil.
func PausedCondition(cluster *clusterv1.Cluster, obj client.Object, kind string, paused bool) metav1.Condition {
	if !paused {
		return metav1.Condition{Type: clusterv1.PausedV1Beta2Condition, Status: metav1.ConditionFalse, Reason: clusterv1.NotPausedV1Beta2Reason}
	}
	var why []string
	if cluster != nil && cluster.Spec.Paused {
		why = append(why, "Cluster spec.paused is set to true")
	}
	if _, ok := obj.GetAnnotations()[clusterv1.PausedAnnotation]; ok {
		why = append(why, kind+" has the cluster.x-k8s.io/paused annotation")
	}
	return metav1.Condition{Type: clusterv1.PausedV1Beta2Condition, Status: metav1.ConditionTrue, Reason: clusterv1.PausedV1Beta2Reason,
		Message: strings.Join(why, ", ")}
}

// ProviderPausedCondition returns the v1beta2 Paused condition of an object of the local and kubeadm
// bootstrap providers, which do not say which of the two pauses it.
func ProviderPausedCondition(paused bool) metav1.Condition {
	if !paused {
		return metav1.Condition{Type: clusterv1.PausedV1Beta2Condition, Status: metav1.ConditionFalse, Reason: clusterv1.NotPausedV1Beta2Reason}
	}
	return metav1.Condition{Type: clusterv1.PausedV1Beta2Condition, Status: metav1.ConditionTrue, Reason: clusterv1.PausedV1Beta2Reason,
		Message: "Reconciliation is paused by the Cluster's spec.paused or the cluster.x-k8s.io/paused annotation"}
}
