package follow

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	hooksv1 "github.com/capstan-dev/capstan/api/runtime/hooks/v1alpha1"
	runtimev1 "github.com/capstan-dev/capstan/api/runtime/v1alpha1"
	"github.com/capstan-dev/capstan/internal/runtime/registry"
	"github.com/capstan-dev/capstan/internal/test/envtest"
)

var env *envtest.Environment

func TestMain(m *testing.M) {
	os.Exit(envtest.Run(m, envtest.Options{}, func(e *envtest.Environment) { env = e }))
}

// The registry gets the handlers the ExtensionConfigs' status lists (at start and as they change) and loses
// those of a deleted ExtensionConfig; nothing is written.
func TestFollow(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	name := "follow-" + ns
	handler := func(hook string) []runtimev1.ExtensionHandler {
		return []runtimev1.ExtensionHandler{{Name: "h." + name, RequestHook: runtimev1.GroupVersionHook{APIVersion: hooksv1.GroupVersion.String(), Hook: hook}}}
	}
	ec := &runtimev1.ExtensionConfig{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: runtimev1.ExtensionConfigSpec{ClientConfig: runtimev1.ClientConfig{URL: ptr.To("https://127.0.0.1:9443")}}}
	g.Expect(env.Client.Create(ctx, ec)).To(Succeed())
	ec.Status.Handlers = handler("CanUpdateMachine")
	g.Expect(env.Client.Status().Update(ctx, ec)).To(Succeed())

	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{Scheme: env.Scheme, Metrics: metricsserver.Options{BindAddress: "0"},
		Controller: config.Controller{SkipNameValidation: ptr.To(true)}})
	g.Expect(err).NotTo(HaveOccurred())
	reg := registry.New()
	g.Expect(Setup(mgr, reg, "", controller.Options{})).To(Succeed())
	mctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = mgr.Start(mctx)
	}()
	t.Cleanup(func() { cancel(); <-done })

	timeout, interval := 30*time.Second, 100*time.Millisecond
	g.Eventually(reg.Ready, timeout, interval).Should(BeTrue())
	g.Eventually(func(g Gomega) {
		r, ok := reg.Get("h." + name)
		g.Expect(ok).To(BeTrue())
		g.Expect(r.Hook).To(Equal(hooksv1.CanUpdateMachine))
	}, timeout, interval).Should(Succeed())

	g.Expect(env.Client.Get(ctx, client.ObjectKey{Name: name}, ec)).To(Succeed())
	ec.Status.Handlers = handler("UpdateMachine")
	g.Expect(env.Client.Status().Update(ctx, ec)).To(Succeed())
	g.Eventually(func(g Gomega) {
		r, ok := reg.Get("h." + name)
		g.Expect(ok).To(BeTrue())
		g.Expect(r.Hook).To(Equal(hooksv1.UpdateMachine))
	}, timeout, interval).Should(Succeed())
	got := &runtimev1.ExtensionConfig{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Name: name}, got)).To(Succeed())
	g.Expect(got.Status.V1Beta2).To(BeNil(), fmt.Sprintf("nothing written: %v", got.Status))

	g.Expect(env.Client.Delete(ctx, got)).To(Succeed())
	g.Eventually(func() bool { _, ok := reg.Get("h." + name); return ok }, timeout, interval).Should(BeFalse())
}
