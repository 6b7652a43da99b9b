// Package rollout holds what the MachineDeployment and MachineSet controllers decide the same way about a
// Machine template: which of its fields need new Machines when they change (TemplateDiff, the comparison
// that both finds a MachineDeployment's new MachineSet and sets the Machines' UpToDate condition), when
// spec.rolloutAfter asks for new Machines, which template references are allowed and how they are kept up
// to date, which template metadata keys a controller set itself (OwnedKeys), and the replicas a
// MachineDeployment or MachineSet gets when spec.replicas is empty. Upstream Cluster API keeps the same
// rules in its MachineDeployment rollout helpers (mdutil).
package rollout
