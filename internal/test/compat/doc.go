// Package compat compares capstan's CustomResourceDefinitions with upstream Cluster API's, so that any
// manifest written for upstream is accepted by capstan unchanged. It reports every difference in names,
// scope, subresources, printer columns and, for each field path of the upstream schema, type, format,
// enum, default, required fields, list and map semantics and value constraints.
package compat
