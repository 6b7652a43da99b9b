// Package variables compiles the variable definitions of a ClusterClass into apiextensions-apiserver
// structural schemas, and defaults and validates the variable values of a Cluster topology with them
// (OpenAPI v3 validation, CEL x-kubernetes-validations, pruning of unknown fields), the way the API server
// handles custom resources. The name "builtin" is reserved for the builtin variables.
package variables
