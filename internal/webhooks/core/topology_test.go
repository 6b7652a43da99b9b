package core

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/test/builder"
)

func topologyClass(ns string) *clusterv1.ClusterClass {
	p := builder.V1Beta1
	ref := func(group, kind, name string) *clusterv1.LocalObjectTemplate {
		return &clusterv1.LocalObjectTemplate{Ref: builder.Ref(p.Object(group, kind, ns, name))}
	}
	return &clusterv1.ClusterClass{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "class"},
		Spec: clusterv1.ClusterClassSpec{
			Infrastructure: *ref(p.Infrastructure, builder.InfraClusterTemplateKind, "infra"),
			ControlPlane:   clusterv1.ControlPlaneClass{LocalObjectTemplate: *ref(p.ControlPlaneGroup, builder.ControlPlaneTemplateKind, "cp")},
			Workers: clusterv1.WorkersClass{MachineDeployments: []clusterv1.MachineDeploymentClass{{
				Class: "default-worker",
				Template: clusterv1.MachineDeploymentClassTemplate{
					Bootstrap:      *ref(p.Bootstrap, builder.BootstrapTemplateKind, "boot"),
					Infrastructure: *ref(p.Infrastructure, builder.InfraMachineTemplateKind, "worker"),
				},
			}}},
			Variables: []clusterv1.ClusterClassVariable{{
				Name: "replicasHint", Required: true,
				Schema: clusterv1.VariableSchema{OpenAPIV3Schema: clusterv1.JSONSchemaProps{Type: "integer", Minimum: ptrTo[int64](1), Maximum: ptrTo[int64](5)}},
			}},
		},
	}
}

func ptrTo[T any](v T) *T { return &v }

func topologyCluster(ns, name, version, hint string) *clusterv1.Cluster {
	return &clusterv1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: clusterv1.ClusterSpec{Topology: &clusterv1.Topology{
			Class: "class", Version: version,
			Variables: []clusterv1.ClusterVariable{{Name: "replicasHint", Value: apiextensionsv1.JSON{Raw: []byte(hint)}}},
			Workers: &clusterv1.WorkersTopology{MachineDeployments: []clusterv1.MachineDeploymentTopology{
				{Class: "default-worker", Name: "md-0"},
			}},
		}},
	}
}

func TestTopologyAdmission(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	install(t, ns)
	startManager(t, ns)

	// A ClusterClass with a reserved variable name or a bad naming template is refused.
	bad := topologyClass(ns)
	bad.Spec.Variables[0].Name = "builtin"
	name := "{{ .cluster.nme "
	bad.Spec.ControlPlane.NamingStrategy = &clusterv1.ControlPlaneClassNamingStrategy{Template: &name}
	err := env.Client.Create(ctx, bad)
	g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "%v", err)
	g.Expect(err.Error()).To(And(ContainSubstring(`"builtin" is a reserved variable name`), ContainSubstring("spec.controlPlane.namingStrategy.template")))

	class := topologyClass(ns)
	g.Expect(env.Client.Create(ctx, class)).To(Succeed())

	// A Cluster with an invalid variable value is refused, naming the variable.
	err = env.Client.Create(ctx, topologyCluster(ns, "bad", "v1.30.0", `9`))
	g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "%v", err)
	g.Expect(err.Error()).To(ContainSubstring("spec.topology.variables[replicasHint].value"))
	err = env.Client.Create(ctx, &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "missing"},
		Spec: clusterv1.ClusterSpec{Topology: &clusterv1.Topology{Class: "class", Version: "v1.30.0"}}})
	g.Expect(err).To(MatchError(ContainSubstring(`required variable "replicasHint" is not set`)))

	// A MachinePool of a class the ClusterClass does not have is refused.
	pools := topologyCluster(ns, "pools", "v1.30.0", `3`)
	pools.Spec.Topology.Workers.MachinePools = []clusterv1.MachinePoolTopology{{Class: "default-worker", Name: "mp-0"}}
	err = env.Client.Create(ctx, pools)
	g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "%v", err)
	g.Expect(err.Error()).To(ContainSubstring(`spec.topology.workers.machinePools[mp-0].class: Invalid value: "default-worker": ClusterClass class has no MachinePool class "default-worker"`))

	// Health checks, as upstream's webhook: enable: true needs a definition in the topology or the class,
	// and the control plane's needs the class's control plane to have Machines (machineInfrastructure).
	noDefinition := topologyCluster(ns, "no-health-check", "v1.30.0", `3`)
	noDefinition.Spec.Topology.Workers.MachineDeployments[0].MachineHealthCheck = &clusterv1.MachineHealthCheckTopology{Enable: ptrTo(true)}
	err = env.Client.Create(ctx, noDefinition)
	g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "%v", err)
	g.Expect(err.Error()).To(ContainSubstring("spec.topology.workers.machineDeployments[md-0].machineHealthCheck.enable: Forbidden: " +
		"cannot be set to true as MachineHealthCheck definition is not available in the Cluster topology or the ClusterClass"))
	noMachines := topologyCluster(ns, "no-machines", "v1.30.0", `3`)
	noMachines.Spec.Topology.ControlPlane.MachineHealthCheck = &clusterv1.MachineHealthCheckTopology{
		MachineHealthCheckClass: clusterv1.MachineHealthCheckClass{MaxUnhealthy: ptrTo(intstr.FromInt32(1))}}
	err = env.Client.Create(ctx, noMachines)
	g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "%v", err)
	g.Expect(err.Error()).To(ContainSubstring("spec.topology.controlPlane.machineHealthCheck: Forbidden: can be set only if spec.controlPlane.machineInfrastructure is set in ClusterClass"))
	defined := topologyCluster(ns, "defined", "v1.30.0", `3`)
	defined.Spec.Topology.Workers.MachineDeployments[0].MachineHealthCheck = &clusterv1.MachineHealthCheckTopology{Enable: ptrTo(true),
		MachineHealthCheckClass: clusterv1.MachineHealthCheckClass{MaxUnhealthy: ptrTo(intstr.FromInt32(1))}}
	g.Expect(env.Client.Create(ctx, defined)).To(Succeed(), "enable: true with a definition in the topology")
	g.Expect(env.Client.Delete(ctx, defined)).To(Succeed())

	cluster := topologyCluster(ns, "good", "v1.30.0", `3`)
	g.Expect(env.Client.Create(ctx, cluster)).To(Succeed())

	// Version: no downgrade, no skipping a minor.
	for version, want := range map[string]string{
		"v1.29.5": `version cannot be decreased from "v1.30.0" to "v1.29.5"`,
		"v1.32.0": `version cannot be increased from "v1.30.0" to "v1.32.0"`,
	} {
		c := &clusterv1.Cluster{}
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(cluster), c)).To(Succeed())
		c.Spec.Topology.Version = version
		g.Expect(env.Client.Update(ctx, c)).To(MatchError(ContainSubstring(want)))
	}
	c := &clusterv1.Cluster{}
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(cluster), c)).To(Succeed())
	c.Spec.Topology.Version = "v1.31.2"
	g.Expect(env.Client.Update(ctx, c)).To(Succeed(), "one minor at a time is allowed")

	// A class change that would break the Cluster is refused, and so is deleting a class in use.
	cc := &clusterv1.ClusterClass{}
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(class), cc)).To(Succeed())
	cc.Spec.Workers.MachineDeployments[0].Class = "other-worker"
	g.Expect(env.Client.Update(ctx, cc)).To(MatchError(ContainSubstring(`MachineDeploymentClass "default-worker" cannot be deleted because it is used by Cluster "good"`)))
	err = env.Client.Delete(ctx, class)
	g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "%v", err)
	g.Expect(err.Error()).To(ContainSubstring("ClusterClass is used by Cluster(s) " + ns + "/good"))

	g.Expect(env.Client.Delete(ctx, c)).To(Succeed())
	g.Eventually(func() error { return env.Client.Delete(ctx, class) }, 60*time.Second, 200*time.Millisecond).Should(Succeed(), "an unused class can be deleted")
}
