package v1beta2

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The conditions of v1beta2 objects are metav1.Conditions in status.conditions; their v1beta1 conditions,
// kept while v1beta1 is served, are under status.deprecated.v1beta1.conditions.

// GetConditions returns the conditions.
func (c *Cluster) GetConditions() []metav1.Condition { return c.Status.Conditions }

// SetConditions sets the conditions.
func (c *Cluster) SetConditions(conditions []metav1.Condition) { c.Status.Conditions = conditions }

// GetV1Beta1Conditions returns the v1beta1 conditions.
func (c *Cluster) GetV1Beta1Conditions() Conditions {
	if c.Status.Deprecated == nil || c.Status.Deprecated.V1Beta1 == nil {
		return nil
	}
	return c.Status.Deprecated.V1Beta1.Conditions
}

// SetV1Beta1Conditions sets the v1beta1 conditions.
func (c *Cluster) SetV1Beta1Conditions(conditions Conditions) {
	if c.Status.Deprecated == nil {
		c.Status.Deprecated = &ClusterDeprecatedStatus{}
	}
	if c.Status.Deprecated.V1Beta1 == nil {
		c.Status.Deprecated.V1Beta1 = &ClusterV1Beta1DeprecatedStatus{}
	}
	c.Status.Deprecated.V1Beta1.Conditions = conditions
}

// GetConditions returns the conditions.
func (c *ClusterClass) GetConditions() []metav1.Condition { return c.Status.Conditions }

// SetConditions sets the conditions.
func (c *ClusterClass) SetConditions(conditions []metav1.Condition) { c.Status.Conditions = conditions }

// GetV1Beta1Conditions returns the v1beta1 conditions.
func (c *ClusterClass) GetV1Beta1Conditions() Conditions {
	if c.Status.Deprecated == nil || c.Status.Deprecated.V1Beta1 == nil {
		return nil
	}
	return c.Status.Deprecated.V1Beta1.Conditions
}

// SetV1Beta1Conditions sets the v1beta1 conditions.
func (c *ClusterClass) SetV1Beta1Conditions(conditions Conditions) {
	if c.Status.Deprecated == nil {
		c.Status.Deprecated = &ClusterClassDeprecatedStatus{}
	}
	if c.Status.Deprecated.V1Beta1 == nil {
		c.Status.Deprecated.V1Beta1 = &ClusterClassV1Beta1DeprecatedStatus{}
	}
	c.Status.Deprecated.V1Beta1.Conditions = conditions
}

// GetConditions returns the conditions.
func (m *Machine) GetConditions() []metav1.Condition { return m.Status.Conditions }

// SetConditions sets the conditions.
func (m *Machine) SetConditions(conditions []metav1.Condition) { m.Status.Conditions = conditions }

// GetV1Beta1Conditions returns the v1beta1 conditions.
func (m *Machine) GetV1Beta1Conditions() Conditions {
	if m.Status.Deprecated == nil || m.Status.Deprecated.V1Beta1 == nil {
		return nil
	}
	return m.Status.Deprecated.V1Beta1.Conditions
}

// SetV1Beta1Conditions sets the v1beta1 conditions.
func (m *Machine) SetV1Beta1Conditions(conditions Conditions) {
	if m.Status.Deprecated == nil {
		m.Status.Deprecated = &MachineDeprecatedStatus{}
	}
	if m.Status.Deprecated.V1Beta1 == nil {
		m.Status.Deprecated.V1Beta1 = &MachineV1Beta1DeprecatedStatus{}
	}
	m.Status.Deprecated.V1Beta1.Conditions = conditions
}

// GetConditions returns the conditions.
func (m *MachineSet) GetConditions() []metav1.Condition { return m.Status.Conditions }

// SetConditions sets the conditions.
func (m *MachineSet) SetConditions(conditions []metav1.Condition) { m.Status.Conditions = conditions }

// GetV1Beta1Conditions returns the v1beta1 conditions.
func (m *MachineSet) GetV1Beta1Conditions() Conditions {
	if m.Status.Deprecated == nil || m.Status.Deprecated.V1Beta1 == nil {
		return nil
	}
	return m.Status.Deprecated.V1Beta1.Conditions
}

// SetV1Beta1Conditions sets the v1beta1 conditions.
func (m *MachineSet) SetV1Beta1Conditions(conditions Conditions) {
	if m.Status.Deprecated == nil {
		m.Status.Deprecated = &MachineSetDeprecatedStatus{}
	}
	if m.Status.Deprecated.V1Beta1 == nil {
		m.Status.Deprecated.V1Beta1 = &MachineSetV1Beta1DeprecatedStatus{}
	}
	m.Status.Deprecated.V1Beta1.Conditions = conditions
}

// GetConditions returns the conditions.
func (m *MachineDeployment) GetConditions() []metav1.Condition { return m.Status.Conditions }

// SetConditions sets the conditions.
func (m *MachineDeployment) SetConditions(conditions []metav1.Condition) {
	m.Status.Conditions = conditions
}

// GetV1Beta1Conditions returns the v1beta1 conditions.
func (m *MachineDeployment) GetV1Beta1Conditions() Conditions {
	if m.Status.Deprecated == nil || m.Status.Deprecated.V1Beta1 == nil {
		return nil
	}
	return m.Status.Deprecated.V1Beta1.Conditions
}

// SetV1Beta1Conditions sets the v1beta1 conditions.
func (m *MachineDeployment) SetV1Beta1Conditions(conditions Conditions) {
	if m.Status.Deprecated == nil {
		m.Status.Deprecated = &MachineDeploymentDeprecatedStatus{}
	}
	if m.Status.Deprecated.V1Beta1 == nil {
		m.Status.Deprecated.V1Beta1 = &MachineDeploymentV1Beta1DeprecatedStatus{}
	}
	m.Status.Deprecated.V1Beta1.Conditions = conditions
}

// GetConditions returns the conditions.
func (m *MachineHealthCheck) GetConditions() []metav1.Condition { return m.Status.Conditions }

// SetConditions sets the conditions.
func (m *MachineHealthCheck) SetConditions(conditions []metav1.Condition) {
	m.Status.Conditions = conditions
}

// GetV1Beta1Conditions returns the v1beta1 conditions.
func (m *MachineHealthCheck) GetV1Beta1Conditions() Conditions {
	if m.Status.Deprecated == nil || m.Status.Deprecated.V1Beta1 == nil {
		return nil
	}
	return m.Status.Deprecated.V1Beta1.Conditions
}

// SetV1Beta1Conditions sets the v1beta1 conditions.
func (m *MachineHealthCheck) SetV1Beta1Conditions(conditions Conditions) {
	if m.Status.Deprecated == nil {
		m.Status.Deprecated = &MachineHealthCheckDeprecatedStatus{}
	}
	if m.Status.Deprecated.V1Beta1 == nil {
		m.Status.Deprecated.V1Beta1 = &MachineHealthCheckV1Beta1DeprecatedStatus{}
	}
	m.Status.Deprecated.V1Beta1.Conditions = conditions
}

// GetConditions returns the conditions.
func (m *MachinePool) GetConditions() []metav1.Condition { return m.Status.Conditions }

// SetConditions sets the conditions.
func (m *MachinePool) SetConditions(conditions []metav1.Condition) { m.Status.Conditions = conditions }

// GetV1Beta1Conditions returns the v1beta1 conditions.
func (m *MachinePool) GetV1Beta1Conditions() Conditions {
	if m.Status.Deprecated == nil || m.Status.Deprecated.V1Beta1 == nil {
		return nil
	}
	return m.Status.Deprecated.V1Beta1.Conditions
}

// SetV1Beta1Conditions sets the v1beta1 conditions.
func (m *MachinePool) SetV1Beta1Conditions(conditions Conditions) {
	if m.Status.Deprecated == nil {
		m.Status.Deprecated = &MachinePoolDeprecatedStatus{}
	}
	if m.Status.Deprecated.V1Beta1 == nil {
		m.Status.Deprecated.V1Beta1 = &MachinePoolV1Beta1DeprecatedStatus{}
	}
	m.Status.Deprecated.V1Beta1.Conditions = conditions
}
