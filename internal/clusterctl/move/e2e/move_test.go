package e2e

import (
	"context"
	"fmt"
	"os"
	"sort"
	"testing"
	"time"

	"github.com/go-logr/logr"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	clusterctlv1 "github.com/capstan-dev/capstan/api/clusterctl/v1alpha3"
	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/clusterctl/move"
	"github.com/capstan-dev/capstan/internal/clusterctl/move/movetest"
	"github.com/capstan-dev/capstan/internal/test/builder"
	"github.com/capstan-dev/capstan/internal/test/envtest"
	"github.com/capstan-dev/capstan/internal/test/stack"
)

var source, target, workload *envtest.Environment

func TestMain(m *testing.M) {
	ctrllog.SetLogger(logr.Discard())
	opts := []envtest.Options{{CRDs: builder.CRDs()}, {CRDs: builder.CRDs()}, {}}
	os.Exit(envtest.RunAll(m, opts, func(ctx context.Context, envs []*envtest.Environment) error {
		source, target, workload = envs[0], envs[1], envs[2]
		for _, env := range []*envtest.Environment{source, target} {
			if err := movetest.PrepareManagementCluster(ctx, env.Client, "v1.0.0"); err != nil {
				return fmt.Errorf("preparing a management cluster: %w", err)
			}
			// The core controllers and the test provider, whose Nodes register in the workload API server.
			if _, err := stack.Start(ctx, env.Config, stack.Options{Workload: workload.Config}); err != nil {
				return fmt.Errorf("starting the controllers: %w", err)
			}
		}
		return nil
	}))
}

// newCluster creates a Cluster with a control plane Machine and a MachineDeployment of workers.
func newCluster(ctx context.Context, g Gomega, ns, name string, workers int32) {
	p := builder.V1Beta1
	infra := p.InfraCluster(ns, name)
	g.Expect(source.Client.Create(ctx, infra)).To(Succeed())
	infraTpl := p.InfraMachineTemplate(ns, name+"-md")
	g.Expect(source.Client.Create(ctx, infraTpl)).To(Succeed())
	bootTpl := p.BootstrapTemplate(ns, name+"-md")
	g.Expect(source.Client.Create(ctx, bootTpl)).To(Succeed())
	g.Expect(source.Client.Create(ctx, builder.Cluster(ns, name, infra, nil))).To(Succeed())
	g.Expect(source.Client.Create(ctx, builder.MachineDeployment(ns, name+"-md", name, workers, infraTpl, bootTpl))).To(Succeed())

	cpInfra := p.InfraMachine(ns, name+"-cp")
	g.Expect(source.Client.Create(ctx, cpInfra)).To(Succeed())
	cpBoot := p.BootstrapConfig(ns, name+"-cp")
	g.Expect(source.Client.Create(ctx, cpBoot)).To(Succeed())
	cp := builder.Machine(ns, name+"-cp", name, cpInfra, cpBoot)
	cp.Labels[clusterv1.MachineControlPlaneLabel] = ""
	g.Expect(source.Client.Create(ctx, cp)).To(Succeed())
}

// state is what must not change when a cluster changes management cluster: the Machines (name ->
// providerID) and the MachineSets of each MachineDeployment.
type state struct {
	Machines    map[string]string
	MachineSets []string
}

func stateOf(ctx context.Context, g Gomega, c client.Client, ns string) state {
	s := state{Machines: map[string]string{}}
	machines := &clusterv1.MachineList{}
	g.Expect(c.List(ctx, machines, client.InNamespace(ns))).To(Succeed())
	for _, m := range machines.Items {
		s.Machines[m.Name] = ptr.Deref(m.Spec.ProviderID, "")
	}
	sets := &clusterv1.MachineSetList{}
	g.Expect(c.List(ctx, sets, client.InNamespace(ns))).To(Succeed())
	for _, ms := range sets.Items {
		s.MachineSets = append(s.MachineSets, ms.Name)
	}
	sort.Strings(s.MachineSets)
	return s
}

// provisioned waits until every Cluster is provisioned with its control plane initialized and every
// Machine is Running with a node.
func provisioned(ctx context.Context, g Gomega, c client.Client, ns string, clusters, machines int) {
	g.Eventually(func(g Gomega) {
		list := &clusterv1.ClusterList{}
		g.Expect(c.List(ctx, list, client.InNamespace(ns))).To(Succeed())
		g.Expect(list.Items).To(HaveLen(clusters))
		for _, cl := range list.Items {
			g.Expect(cl.Spec.Paused).To(BeFalse(), cl.Name)
			g.Expect(cl.Status.Phase).To(Equal(string(clusterv1.ClusterPhaseProvisioned)), cl.Name)
			g.Expect(cl.Status.InfrastructureReady).To(BeTrue(), cl.Name)
			g.Expect(cl.Status.Conditions).To(ContainElement(And(
				HaveField("Type", clusterv1.ControlPlaneInitializedCondition), HaveField("Status", corev1.ConditionTrue))), cl.Name)
		}
		ms := &clusterv1.MachineList{}
		g.Expect(c.List(ctx, ms, client.InNamespace(ns))).To(Succeed())
		g.Expect(ms.Items).To(HaveLen(machines))
		for _, m := range ms.Items {
			g.Expect(m.Status.Phase).To(Equal(string(clusterv1.MachinePhaseRunning)), m.Name)
			g.Expect(m.Status.NodeRef).NotTo(BeNil(), m.Name)
		}
	}, 2*time.Minute, 250*time.Millisecond).Should(Succeed())
}

// TestMoveWithControllers moves three provisioned clusters between two management clusters whose
// controllers run: the target takes them over, unpaused, with the same Machines (same providerIDs, none
// created or deleted) and MachineSets, and the source has none of their objects left.
func TestMoveWithControllers(t *testing.T) {
	g := NewWithT(t)
	ctx, cancel := context.WithTimeout(logr.NewContext(context.Background(), logr.Discard()), 4*time.Minute)
	defer cancel()
	ns := source.NewNamespace(t)
	clusters := []string{"alpha", "bravo", "charlie"}
	for _, name := range clusters {
		newCluster(ctx, g, ns, name, 2)
	}
	cm := &corev1.ConfigMap{}
	cm.Namespace, cm.Name = ns, "cpi-config"
	cm.Labels = map[string]string{clusterctlv1.ClusterctlMoveLabel: ""}
	g.Expect(source.Client.Create(ctx, cm)).To(Succeed())
	provisioned(ctx, g, source.Client, ns, 3, 9)
	before := stateOf(ctx, g, source.Client, ns)
	g.Expect(before.Machines).To(HaveLen(9))
	g.Expect(before.MachineSets).To(HaveLen(3))

	scheme, err := move.NewScheme()
	g.Expect(err).NotTo(HaveOccurred())
	from, err := client.New(source.Config, client.Options{Scheme: scheme})
	g.Expect(err).NotTo(HaveOccurred())
	to, err := client.New(target.Config, client.Options{Scheme: scheme})
	g.Expect(err).NotTo(HaveOccurred())
	res, err := move.Move(ctx, &move.Cluster{Client: from, Name: "source"}, &move.Cluster{Client: to, Name: "target"}, move.Options{Namespace: ns})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res.Plan.Count("Machine")).To(Equal(9))
	g.Expect(res.Plan.Count("Secret")).To(BeNumerically(">=", 3+9)) // kubeconfigs and bootstrap data

	// The target runs the clusters: same Machines, same MachineSets; and keeps running them.
	provisioned(ctx, g, target.Client, ns, 3, 9)
	g.Expect(stateOf(ctx, g, target.Client, ns)).To(Equal(before))
	g.Consistently(func(g Gomega) {
		g.Expect(stateOf(ctx, g, target.Client, ns)).To(Equal(before))
	}, 3*time.Second, 250*time.Millisecond).Should(Succeed())
	g.Expect(target.Client.Get(ctx, client.ObjectKeyFromObject(cm), cm)).To(Succeed())

	// The source has nothing left; its controllers did not tear anything down in the workload cluster.
	g.Expect(stateOf(ctx, g, source.Client, ns)).To(Equal(state{Machines: map[string]string{}}))
	list := &clusterv1.ClusterList{}
	g.Expect(source.Client.List(ctx, list, client.InNamespace(ns))).To(Succeed())
	g.Expect(list.Items).To(BeEmpty())
	err = source.Client.Get(ctx, client.ObjectKeyFromObject(cm), &corev1.ConfigMap{})
	g.Expect(apierrors.IsNotFound(err)).To(BeTrue())
	nodes := &corev1.NodeList{}
	g.Expect(workload.Client.List(ctx, nodes)).To(Succeed())
	providerIDs := map[string]bool{}
	for _, n := range nodes.Items {
		providerIDs[n.Spec.ProviderID] = true
	}
	for m, id := range before.Machines {
		g.Expect(providerIDs).To(HaveKey(id), "the node of Machine %s is gone", m)
	}
}
