// Package conditions sets and reads the conditions of Cluster API objects: the v1beta1 conditions in
// status.conditions (with severity) and the v1beta2 conditions in status.v1beta2.conditions
// (metav1.Condition). Setting a condition keeps its lastTransitionTime unless its status changes, so
// repeated reconciles do not rewrite objects.
package conditions
