package operator_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterctlv1 "github.com/capstan-dev/capstan/api/clusterctl/v1alpha3"
	operatorv1 "github.com/capstan-dev/capstan/api/operator/v1alpha2"
	"github.com/capstan-dev/capstan/internal/cli/clusterctl/clusterctltest"
	"github.com/capstan-dev/capstan/internal/clusterctl/repository/repositorytest"
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

// TestBuiltinSourceWithCredentialsFromTheConfigSecret: the most common path. A provider without
// fetchConfig is fetched from clusterctl's built-in repository of its name (GitHub, emulated on loopback),
// with the GITHUB_TOKEN of its configSecret (the repository is private: without the token nothing is
// found); spec.version, left empty, becomes the latest release of the core's contract; the components'
// variables come from the operator's environment and from the configSecret, the Secret winning.
func TestBuiltinSourceWithCredentialsFromTheConfigSecret(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	gh := repositorytest.NewServer(t)
	gh.SetPrivate("kubernetes-sigs", "cluster-api-provider-aws")
	gh.SetToken("s3cr3t")
	gh.SetModuleVersions("github.com/kubernetes-sigs/cluster-api-provider-aws", "v2.7.0", "v2.8.0", "v3.0.0")
	settings := `apiVersion: v1
kind: ConfigMap
metadata:
  name: capa-settings
  namespace: capa-system
data:
  region: ${AWS_REGION}
  profile: ${AWS_PROFILE}`
	for _, r := range []struct{ version, contract string }{{"v2.7.0", "v1beta1"}, {"v2.8.0", "v1beta1"}, {"v3.0.0", "v1beta2"}} {
		rel := operatortest.FakeRelease(t, "aws", clusterctlv1.InfrastructureProviderType, r.version, r.contract,
			operatortest.FakeComponents("capa-system", "capa", "registry.k8s.io/cluster-api-aws/cluster-api-aws-controller:"+r.version, settings))
		gh.AddRelease("kubernetes-sigs", "cluster-api-provider-aws", r.version, rel.Files)
	}

	environment := map[string]string{"AWS_REGION": "us-east-1", "AWS_PROFILE": "operations"}
	operatortest.Start(t, env.Config, operator.Options{Transport: gh.Client().Transport,
		LookupEnv: func(k string) (string, bool) { v, ok := environment[k]; return v, ok }})
	clusterctltest.MarkDeploymentsAvailable(t, env.Client)
	installCore(t, operatortest.V1, operatortest.Releases(t, "")["cluster-api"][operatortest.V1])

	ns := env.NewNamespace(t)
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "aws-variables"},
		StringData: map[string]string{"AWS_REGION": "eu-west-1"}}
	aws := &operatorv1.InfrastructureProvider{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "aws"}}
	aws.Spec.ConfigSecret = &operatorv1.SecretReference{Name: secret.Name}
	t.Cleanup(func() { deleteAndWait(t, aws) })
	create(t, secret, aws)

	// Without the token, the private repository has nothing to give.
	g.Eventually(func(g Gomega) {
		c := condition(g, aws, operatorv1.ProviderInstalledCondition)
		g.Expect(c.Reason).To(Equal(operatorv1.ComponentsFetchErrorReason))
		g.Expect(c.Message).To(ContainSubstring("infrastructure-aws"))
	}, timeout, poll).Should(Succeed())

	// With it in the configSecret, the provider installs (the change is picked up at the next reconcile:
	// any change of the provider, or the sync period).
	g.Eventually(func() error {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(secret), secret); err != nil {
			return err
		}
		secret.Data["GITHUB_TOKEN"] = []byte("s3cr3t")
		return env.Client.Update(ctx, secret)
	}, timeout, poll).Should(Succeed())
	operatortest.Nudge(t, env.Client, aws)
	waitInstalled(t, aws, "v2.8.0", "v1beta1")
	g.Expect(get(g, aws).GetProviderSpec().Version).To(Equal("v2.8.0"), "the latest release of the core's contract is written to spec.version")
	settingsCM := &corev1.ConfigMap{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "capa-settings"}, settingsCM)).To(Succeed())
	g.Expect(settingsCM.Data).To(Equal(map[string]string{"region": "eu-west-1", "profile": "operations"}),
		"AWS_REGION from the configSecret wins over the operator's environment; AWS_PROFILE comes from the environment")
	g.Expect(deployment(g, ns, "capa-controller-manager").Spec.Template.Spec.Containers[0].Image).To(HaveSuffix(":v2.8.0"))
}
