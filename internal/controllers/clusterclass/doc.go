// Package clusterclass holds the ClusterClass controller: it checks that the templates a ClusterClass
// references exist, moves their references to the newest API version of their provider's contract, lists
// the class's variables in status.variables and says how it went in the VariablesReady (v1beta1
// VariablesReconciled) and RefVersionsUpToDate conditions. It watches ClusterClasses.
package clusterclass
