package v1beta2

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta2"
)

// An IPAddressClaim's conditions are metav1.Conditions in status.conditions; its v1beta1 conditions, kept
// while v1beta1 is served, are under status.deprecated.v1beta1.conditions.

// GetConditions returns the conditions.
func (c *IPAddressClaim) GetConditions() []metav1.Condition { return c.Status.Conditions }

// SetConditions sets the conditions.
func (c *IPAddressClaim) SetConditions(conditions []metav1.Condition) {
	c.Status.Conditions = conditions
}

// GetV1Beta1Conditions returns the v1beta1 conditions.
func (c *IPAddressClaim) GetV1Beta1Conditions() clusterv1.Conditions {
	if c.Status.Deprecated == nil || c.Status.Deprecated.V1Beta1 == nil {
		return nil
	}
	return c.Status.Deprecated.V1Beta1.Conditions
}

// SetV1Beta1Conditions sets the v1beta1 conditions.
func (c *IPAddressClaim) SetV1Beta1Conditions(conditions clusterv1.Conditions) {
	if c.Status.Deprecated == nil {
		c.Status.Deprecated = &IPAddressClaimDeprecatedStatus{}
	}
	if c.Status.Deprecated.V1Beta1 == nil {
		c.Status.Deprecated.V1Beta1 = &IPAddressClaimV1Beta1DeprecatedStatus{}
	}
	c.Status.Deprecated.V1Beta1.Conditions = conditions
}
