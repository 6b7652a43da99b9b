// Package core holds the admission webhooks of the core manager (capi-controller-manager) for the rules
// the CRD schema and CEL cannot express: a MachineDeployment's or MachineSet's selector against its
// template's labels, and the MachineHealthCheck fields upstream validates in its webhook. The controllers
// make the same checks and report them in conditions, so nothing depends on admission alone.
package core
