package controllermanager

import (
	"fmt"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/capstan-dev/capstan/internal/webhooks"
)

// SetupWebhooks serves the webhooks of set in mgr with the webhook flags wo and the manager's TLS settings
// (--tls-min-version, --tls-cipher-suites), in the namespace the manager runs in (webhooks.Namespace);
// nothing when wo.Port is negative.
func (o *Options) SetupWebhooks(mgr ctrl.Manager, set webhooks.Set, wo webhooks.Options) error {
	if wo.Port < 0 {
		return nil
	}
	namespace, err := webhooks.Namespace()
	if err != nil {
		return err
	}
	if wo.TLSOpts, err = o.TLSOptions(); err != nil {
		return err
	}
	if err := set.Setup(mgr, wo, namespace); err != nil {
		return fmt.Errorf("setting up the webhooks: %w", err)
	}
	return nil
}
