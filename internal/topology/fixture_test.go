package topology

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
)

// bookClass is the book's basic ClusterClass ("Writing a ClusterClass") with its MachineHealthChecks.
const bookClass = `
apiVersion: cluster.x-k8s.io/v1beta1
kind: ClusterClass
metadata:
  name: docker-clusterclass-v0.1.0
  namespace: default
spec:
  controlPlane:
    ref:
      apiVersion: controlplane.cluster.x-k8s.io/v1beta1
      kind: KubeadmControlPlaneTemplate
      name: docker-clusterclass-v0.1.0
      namespace: default
    machineInfrastructure:
      ref:
        kind: DockerMachineTemplate
        apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
        name: docker-clusterclass-v0.1.0
        namespace: default
    machineHealthCheck:
      maxUnhealthy: 33%
      nodeStartupTimeout: 15m
      unhealthyConditions:
      - type: Ready
        status: Unknown
        timeout: 300s
      - type: Ready
        status: "False"
        timeout: 300s
  infrastructure:
    ref:
      apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
      kind: DockerClusterTemplate
      name: docker-clusterclass-v0.1.0-control-plane
      namespace: default
  workers:
    machineDeployments:
    - class: default-worker
      template:
        bootstrap:
          ref:
            apiVersion: bootstrap.cluster.x-k8s.io/v1beta1
            kind: KubeadmConfigTemplate
            name: docker-clusterclass-v0.1.0-default-worker
            namespace: default
        infrastructure:
          ref:
            apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
            kind: DockerMachineTemplate
            name: docker-clusterclass-v0.1.0-default-worker
            namespace: default
      machineHealthCheck:
        unhealthyRange: "[0-2]"
        nodeStartupTimeout: 10m
        unhealthyConditions:
        - type: Ready
          status: Unknown
          timeout: 300s
        - type: Ready
          status: "False"
          timeout: 300s
`

// bookCluster is the book's Cluster using the class.
const bookCluster = `
apiVersion: cluster.x-k8s.io/v1beta1
kind: Cluster
metadata:
  name: my-docker-cluster
  namespace: default
  uid: 6b1f5b4e-0000-4000-8000-000000000001
spec:
  topology:
    class: docker-clusterclass-v0.1.0
    version: v1.22.4
    controlPlane:
      replicas: 3
      metadata:
        labels:
          cpLabel: cpLabelValue
        annotations:
          cpAnnotation: cpAnnotationValue
    workers:
      machineDeployments:
      - class: default-worker
        name: md-0
        replicas: 4
        metadata:
          labels:
            mdLabel: mdLabelValue
          annotations:
            mdAnnotation: mdAnnotationValue
        failureDomain: region
`

const (
	kcpTemplate = `
apiVersion: controlplane.cluster.x-k8s.io/v1beta1
kind: KubeadmControlPlaneTemplate
metadata:
  name: docker-clusterclass-v0.1.0
  namespace: default
spec:
  template:
    spec:
      kubeadmConfigSpec:
        clusterConfiguration:
          controllerManager:
            extraArgs:
              enable-hostpath-provisioner: "true"
`
	dockerClusterTemplate = `
apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
kind: DockerClusterTemplate
metadata:
  name: docker-clusterclass-v0.1.0-control-plane
  namespace: default
spec:
  template:
    metadata:
      labels:
        fromTemplate: "yes"
    spec:
      loadBalancer: {}
`
	dockerMachineTemplate = `
apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
kind: DockerMachineTemplate
metadata:
  name: NAME
  namespace: default
spec:
  template:
    spec:
      extraMounts:
      - containerPath: /var/run/docker.sock
        hostPath: /var/run/docker.sock
`
	dockerMachinePoolTemplate = `
apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
kind: DockerMachinePoolTemplate
metadata:
  name: docker-clusterclass-v0.1.0-default-worker-machinepooltemplate
  namespace: default
spec:
  template:
    spec:
      template:
        extraMounts:
        - containerPath: /var/run/docker.sock
          hostPath: /var/run/docker.sock
`
	kubeadmConfigTemplate = `
apiVersion: bootstrap.cluster.x-k8s.io/v1beta1
kind: KubeadmConfigTemplate
metadata:
  name: docker-clusterclass-v0.1.0-default-worker
  namespace: default
spec:
  template:
    spec:
      files:
      - content: Some other content
        path: /some/other/file
      joinConfiguration:
        nodeRegistration: {}
`
)

func mustUnstructured(t testing.TB, y string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(y), &u.Object); err != nil {
		t.Fatal(err)
	}
	return u
}

func mustClass(t testing.TB, y string) *clusterv1.ClusterClass {
	t.Helper()
	c := &clusterv1.ClusterClass{}
	if err := yaml.UnmarshalStrict([]byte(y), c); err != nil {
		t.Fatal(err)
	}
	return c
}

func mustCluster(t testing.TB, y string) *clusterv1.Cluster {
	t.Helper()
	c := &clusterv1.Cluster{}
	if err := yaml.UnmarshalStrict([]byte(y), c); err != nil {
		t.Fatal(err)
	}
	return c
}

// blueprint returns the blueprint of class with the book's templates.
func blueprint(t testing.TB, class *clusterv1.ClusterClass) *Blueprint {
	t.Helper()
	cpInfra := mustUnstructured(t, dockerMachineTemplate)
	cpInfra.SetName("docker-clusterclass-v0.1.0")
	mdInfra := mustUnstructured(t, dockerMachineTemplate)
	mdInfra.SetName("docker-clusterclass-v0.1.0-default-worker")
	bp := &Blueprint{
		ClusterClass:                              class,
		InfrastructureClusterTemplate:             mustUnstructured(t, dockerClusterTemplate),
		ControlPlaneTemplate:                      mustUnstructured(t, kcpTemplate),
		ControlPlaneMachineInfrastructureTemplate: cpInfra,
		MachineDeployments:                        map[string]MachineDeploymentTemplates{},
		MachinePools:                              map[string]MachinePoolTemplates{},
	}
	for _, md := range class.Spec.Workers.MachineDeployments {
		bp.MachineDeployments[md.Class] = MachineDeploymentTemplates{
			BootstrapTemplate:             mustUnstructured(t, kubeadmConfigTemplate),
			InfrastructureMachineTemplate: mdInfra.DeepCopy(),
		}
	}
	for _, mp := range class.Spec.Workers.MachinePools {
		bootstrap := mustUnstructured(t, kubeadmConfigTemplate)
		bootstrap.SetName(mp.Template.Bootstrap.Ref.Name)
		bp.MachinePools[mp.Class] = MachinePoolTemplates{
			BootstrapTemplate:                 bootstrap,
			InfrastructureMachinePoolTemplate: mustUnstructured(t, dockerMachinePoolTemplate),
		}
	}
	return bp
}

func compute(t testing.TB, bp *Blueprint, cur *Current) *Desired {
	t.Helper()
	d, err := Compute(context.Background(), bp, cur, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// initialized marks the Cluster's control plane initialized, as the Cluster controller does.
func initialized(c *clusterv1.Cluster) {
	c.Status.Conditions = append(c.Status.Conditions, clusterv1.Condition{Type: clusterv1.ControlPlaneInitializedCondition, Status: "True", LastTransitionTime: metav1.Now()})
}

// field returns a nested field of an object, or fails.
func nested(t testing.TB, obj *unstructured.Unstructured, path ...string) any {
	t.Helper()
	v, ok, err := unstructured.NestedFieldNoCopy(obj.Object, path...)
	if err != nil || !ok {
		t.Fatalf("%s %s has no field %v (err %v)", obj.GetKind(), obj.GetName(), path, err)
	}
	return v
}

// asCurrent turns a desired state into the current state a controller would read after applying it,
// with the control plane reporting status.version (stable) and the Cluster initialized.
func asCurrent(t testing.TB, cluster *clusterv1.Cluster, d *Desired) *Current {
	t.Helper()
	cur := &Current{Cluster: d.Cluster.DeepCopy(), MachineDeployments: map[string]*MachineDeploymentState{}}
	initialized(cur.Cluster)
	cur.InfrastructureCluster = d.InfrastructureCluster.DeepCopy()
	cp := d.ControlPlane.Object.DeepCopy()
	v, _, _ := unstructured.NestedString(cp.Object, "spec", "version")
	_ = unstructured.SetNestedField(cp.Object, v, "status", "version")
	if r, ok, _ := unstructured.NestedInt64(cp.Object, "spec", "replicas"); ok {
		for _, f := range []string{"replicas", "updatedReplicas", "readyReplicas"} {
			_ = unstructured.SetNestedField(cp.Object, r, "status", f)
		}
	}
	cur.ControlPlane.Object = cp
	if d.ControlPlane.InfrastructureMachineTemplate != nil {
		cur.ControlPlane.InfrastructureMachineTemplate = d.ControlPlane.InfrastructureMachineTemplate.DeepCopy()
	}
	for name, md := range d.MachineDeployments {
		cur.MachineDeployments[name] = &MachineDeploymentState{
			Object:                        md.Object.DeepCopy(),
			BootstrapTemplate:             md.BootstrapTemplate.DeepCopy(),
			InfrastructureMachineTemplate: md.InfrastructureMachineTemplate.DeepCopy(),
		}
	}
	cur.MachinePools = map[string]*MachinePoolState{}
	for name, mp := range d.MachinePools {
		cur.MachinePools[name] = &MachinePoolState{
			Object:                          mp.Object.DeepCopy(),
			BootstrapObject:                 mp.BootstrapObject.DeepCopy(),
			InfrastructureMachinePoolObject: mp.InfrastructureMachinePoolObject.DeepCopy(),
		}
	}
	return cur
}

func yamlInto(y string, v any) error { return yaml.UnmarshalStrict([]byte(y), v) }

// workerMachineTypeClass is the book's class with the workerMachineType variable patched into the
// workers' machine template ("Writing a ClusterClass").
func workerMachineTypeClass(t *testing.T) *clusterv1.ClusterClass {
	t.Helper()
	return withPatches(t, `
- name: workerMachineType
  required: true
  schema:
    openAPIV3Schema:
      type: string
      default: t3.large`, `
- name: workerMachineType
  definitions:
    - `+workerSelector[7:]+`
      jsonPatches:
      - op: add
        path: /spec/template/spec/instanceType
        valueFrom:
          variable: workerMachineType`)
}
