package machine

import (
	"context"
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	ipamv1 "github.com/capstan-dev/capstan/api/ipam/v1beta1"
)

// waitingForIPAddressClaimsReason is the reason of the InfrastructureReady condition (v1beta1) of a Machine
// that waits for its IPAddressClaims; capstan's own, upstream's core has none.
const waitingForIPAddressClaimsReason = "WaitingForIPAddressClaims"

// claimHandler requeues the Machine that owns an IPAddressClaim (as controller or not).
func claimHandler(mgr ctrl.Manager) handler.EventHandler {
	return handler.EnqueueRequestForOwner(mgr.GetScheme(), mgr.GetRESTMapper(), &clusterv1.Machine{})
}

// unboundClaims returns, sorted, the names of the IPAddressClaims of the Machine's namespace that the
// Machine owns and that no IPAM provider has bound to an IPAddress yet (status.addressRef).
func (r *Reconciler) unboundClaims(ctx context.Context, m *clusterv1.Machine) ([]string, error) {
	claims := &ipamv1.IPAddressClaimList{}
	if err := r.Client.List(ctx, claims, client.InNamespace(m.Namespace)); err != nil {
		return nil, fmt.Errorf("listing the IPAddressClaims of Machine %s: %w", m.Name, err)
	}
	var out []string
	for i := range claims.Items {
		c := &claims.Items[i]
		if c.IsBound() || !c.DeletionTimestamp.IsZero() {
			continue
		}
		if slices.ContainsFunc(c.OwnerReferences, func(ref metav1.OwnerReference) bool { return ref.UID == m.UID }) {
			out = append(out, c.Name)
		}
	}
	slices.Sort(out)
	return out, nil
}

// claimsMessage says which claims a Machine waits for.
func claimsMessage(names []string) string {
	kind := "IPAddressClaim"
	if len(names) > 1 {
		kind = "IPAddressClaims"
	}
	return fmt.Sprintf("Waiting for %s %s to be bound to an IPAddress", kind, strings.Join(names, ", "))
}
