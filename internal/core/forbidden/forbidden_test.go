package forbidden_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	configcore "github.com/capstan-dev/capstan/config/core"
	"github.com/capstan-dev/capstan/internal/conditions"
	"github.com/capstan-dev/capstan/internal/manifest"
	"github.com/capstan-dev/capstan/internal/test/builder"
	"github.com/capstan-dev/capstan/internal/test/envtest"
	"github.com/capstan-dev/capstan/internal/test/stack"
)

// coreUser is the user the core controllers run as in this test.
const coreUser = "capstan-core-without-infrastructure"

var env *envtest.Environment

// TestMain starts an API server that enforces RBAC, grants coreUser the core's real ClusterRole (the
// capi-manager-role of config/core/rbac.yaml) without the infrastructure provider group, and runs the
// core controllers as coreUser.
func TestMain(m *testing.M) {
	opts := envtest.Options{CRDs: builder.CRDs(), APIServerFlags: map[string]string{"authorization-mode": "RBAC"}}
	os.Exit(envtest.RunAll(m, []envtest.Options{opts}, func(ctx context.Context, envs []*envtest.Environment) error {
		env = envs[0]
		if err := grantCoreRoleWithout(ctx, builder.InfrastructureGroup); err != nil {
			return fmt.Errorf("granting the core's ClusterRole: %w", err)
		}
		cfg := rest.CopyConfig(env.Config)
		cfg.Impersonate = rest.ImpersonationConfig{UserName: coreUser}
		_, err := stack.StartWatched(ctx, cfg, stack.Options{})
		return err
	}))
}

// grantCoreRoleWithout binds coreUser to a copy of the core's ClusterRole from which group is removed.
func grantCoreRoleWithout(ctx context.Context, group string) error {
	data, err := configcore.Files.ReadFile("rbac.yaml")
	if err != nil {
		return err
	}
	objs, err := manifest.Parse(data)
	if err != nil {
		return err
	}
	var role *rbacv1.ClusterRole
	for i := range objs {
		if objs[i].GetKind() == "ClusterRole" && objs[i].GetName() == "capi-manager-role" {
			role = &rbacv1.ClusterRole{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(objs[i].Object, role); err != nil {
				return err
			}
		}
	}
	if role == nil {
		return fmt.Errorf("rbac.yaml has no ClusterRole capi-manager-role")
	}
	granted := false
	var rules []rbacv1.PolicyRule
	for _, rule := range role.Rules {
		if slices.Contains(rule.APIGroups, group) {
			granted = true
			rule.APIGroups = slices.DeleteFunc(slices.Clone(rule.APIGroups), func(g string) bool { return g == group })
			if len(rule.APIGroups) == 0 {
				continue
			}
		}
		rules = append(rules, rule)
	}
	if !granted {
		return fmt.Errorf("the core's ClusterRole does not grant %s: this test would prove nothing", group)
	}
	reduced := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: coreUser}, Rules: rules}
	if err := env.Client.Create(ctx, reduced); err != nil {
		return err
	}
	return env.Client.Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: coreUser},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: coreUser},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: coreUser}},
	})
}

// TestForbiddenProviderObjectsAreReported: the core may not read InfraClusters and InfraMachines; within a
// minute the Cluster's and the Machine's InfrastructureReady conditions say so and what to grant.
func TestForbiddenProviderObjectsAreReported(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	p := builder.V1Beta1
	infraCluster := p.InfraCluster(ns, "c")
	g.Expect(env.Client.Create(ctx, infraCluster)).To(Succeed())
	cluster := builder.Cluster(ns, "c", infraCluster, nil)
	g.Expect(env.Client.Create(ctx, cluster)).To(Succeed())
	infraMachine := p.InfraMachine(ns, "m")
	g.Expect(env.Client.Create(ctx, infraMachine)).To(Succeed())
	machine := builder.Machine(ns, "m", "c", infraMachine, nil)
	machine.Spec.Bootstrap.DataSecretName = ptr.To("data")
	g.Expect(env.Client.Create(ctx, machine)).To(Succeed())

	forbidden := func(kind string) string {
		return "Cannot read " + kind + " "
	}
	g.Eventually(func(g Gomega) {
		c := &clusterv1.Cluster{}
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(cluster), c)).To(Succeed())
		cond := conditions.GetV1Beta2(c, clusterv1.ClusterInfrastructureReadyV1Beta2Condition)
		g.Expect(cond).NotTo(BeNil())
		g.Expect(cond.Status).NotTo(Equal(metav1.ConditionTrue))
		g.Expect(cond.Message).To(HavePrefix(forbidden(infraCluster.GetKind())))
		g.Expect(cond.Message).To(ContainSubstring("forbidden to get"))
		g.Expect(cond.Message).To(ContainSubstring(clusterv1.AggregateToManagerLabel))
	}, time.Minute, 500*time.Millisecond).Should(Succeed())
	g.Eventually(func(g Gomega) {
		m := &clusterv1.Machine{}
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(machine), m)).To(Succeed())
		cond := conditions.GetV1Beta2(m, clusterv1.MachineInfrastructureReadyV1Beta2Condition)
		g.Expect(cond).NotTo(BeNil())
		g.Expect(cond.Status).NotTo(Equal(metav1.ConditionTrue))
		g.Expect(cond.Message).To(HavePrefix(forbidden(infraMachine.GetKind())))
		g.Expect(cond.Message).To(ContainSubstring("forbidden to get"))
	}, time.Minute, 500*time.Millisecond).Should(Succeed())
}
