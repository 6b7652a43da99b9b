package operator_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorv1 "github.com/capstan-dev/capstan/api/operator/v1alpha2"
	"github.com/capstan-dev/capstan/internal/cli/clusterctl/clusterctltest"
	"github.com/capstan-dev/capstan/internal/httpclient"
	"github.com/capstan-dev/capstan/internal/operator"
	"github.com/capstan-dev/capstan/internal/operator/operatortest"
)

// installCore installs the core provider at version from ConfigMaps in a namespace of its own and waits
// until it is Ready; it is deleted when the test ends (before the operator stops, so register it after
// operatortest.Start).
func installCore(t *testing.T, version string, release operatortest.Release) *operatorv1.CoreProvider {
	t.Helper()
	ns := env.NewNamespace(t)
	labels := map[string]string{"provider-components": "core"}
	create(t, operatortest.ConfigMap(t, ns, labels, release, false))
	core := &operatorv1.CoreProvider{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cluster-api"}}
	core.Spec.Version = version
	core.Spec.FetchConfig = &operatorv1.FetchConfiguration{Selector: &metav1.LabelSelector{MatchLabels: labels}}
	create(t, core)
	t.Cleanup(func() { deleteAndWait(t, core) })
	waitInstalled(t, core, version, "v1beta1")
	return core
}

// deleteAndWait deletes objects and waits until they are gone.
func deleteAndWait(t *testing.T, objs ...client.Object) {
	t.Helper()
	g := NewWithT(t)
	ctx := context.Background()
	for _, o := range objs {
		g.Expect(client.IgnoreNotFound(env.Client.Delete(ctx, o))).To(Succeed())
	}
	for _, o := range objs {
		g.Eventually(func() bool { return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(o), o)) }, timeout, poll).
			Should(BeTrue(), "%s %s is not deleted", o.GetObjectKind().GroupVersionKind().Kind, o.GetName())
	}
}

// TestFetchFromAStalledServer: a server that accepts the connection and never answers holds the
// operator's worker for the fetch timeout only: the provider says so in a condition, and another provider
// of the same kind, waiting for the only worker, is installed meanwhile.
func TestFetchFromAStalledServer(t *testing.T) {
	g := NewWithT(t)
	var calls atomic.Int32
	stop := make(chan struct{})
	stalled := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		select {
		case <-stop:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(stalled.Close)
	t.Cleanup(func() { close(stop) })

	operatortest.Start(t, env.Config, operator.Options{Concurrency: 1, HTTP: httpclient.Limits{Timeout: 2 * time.Second}})
	clusterctltest.MarkDeploymentsAvailable(t, env.Client)
	releases := operatortest.Releases(t, "")
	installCore(t, operatortest.V1, releases["cluster-api"][operatortest.V1])

	ns := env.NewNamespace(t)
	slow := &operatorv1.InfrastructureProvider{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "slow"}}
	slow.Spec.Version = operatortest.V1
	slow.Spec.FetchConfig = &operatorv1.FetchConfiguration{URL: stalled.URL + "/releases"}
	localNS := env.NewNamespace(t)
	labels := map[string]string{"provider-components": "local"}
	create(t, operatortest.ConfigMap(t, localNS, labels, releases["infrastructure-local"][operatortest.V1], false))
	local := &operatorv1.InfrastructureProvider{ObjectMeta: metav1.ObjectMeta{Namespace: localNS, Name: "local"}}
	local.Spec.Version = operatortest.V1
	local.Spec.FetchConfig = &operatorv1.FetchConfiguration{Selector: &metav1.LabelSelector{MatchLabels: labels}}
	t.Cleanup(func() { deleteAndWait(t, slow, local) })

	start := time.Now()
	create(t, slow)
	g.Eventually(calls.Load, timeout, poll).Should(BeNumerically(">", 0), "the operator calls the stalled server")
	create(t, local)
	g.Eventually(func(g Gomega) {
		c := condition(g, slow, operatorv1.ProviderInstalledCondition)
		g.Expect(c.Reason).To(Equal(operatorv1.ComponentsFetchErrorReason))
		g.Expect(c.Message).To(ContainSubstring("no complete answer within 2s"))
	}, timeout, poll).Should(Succeed())
	// The timeout is 2 s, and tests retry a failed download for 50 ms: a minute leaves room for a loaded
	// machine, and is far from the stalled server's forever.
	g.Expect(time.Since(start)).To(BeNumerically("<", time.Minute))
	waitInstalled(t, local, operatortest.V1, "v1beta1")
}
