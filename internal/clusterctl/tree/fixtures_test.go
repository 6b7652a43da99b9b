package tree

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
)

// t0 is when the fixtures' conditions changed; now is when the tests print them.
var (
	t0  = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	now = t0.Add(10 * time.Minute)
)

func at(d time.Duration) metav1.Time { return metav1.NewTime(t0.Add(d)) }

func v2(t string, status metav1.ConditionStatus, reason, message string, d time.Duration) metav1.Condition {
	return metav1.Condition{Type: t, Status: status, Reason: reason, Message: message, LastTransitionTime: at(d)}
}

func v1(t string, status corev1.ConditionStatus, severity clusterv1.ConditionSeverity, reason, message string, d time.Duration) clusterv1.Condition {
	return clusterv1.Condition{Type: clusterv1.ConditionType(t), Status: status, Severity: severity, Reason: reason, Message: message, LastTransitionTime: at(d)}
}

// provisioned returns the objects of a Cluster demo provisioned by capstan's controllers with the local
// provider: no control plane object, a MachineDeployment demo-md-0 of replicas Running Machines.
func provisioned(replicas int) *Objects {
	cluster := &clusterv1.Cluster{
		TypeMeta:   metav1.TypeMeta{APIVersion: clusterv1.GroupVersion.String(), Kind: "Cluster"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "demo", UID: "cluster-uid"},
		Spec: clusterv1.ClusterSpec{
			InfrastructureRef: &corev1.ObjectReference{APIVersion: "infrastructure.cluster.x-k8s.io/v1alpha1", Kind: "LocalCluster", Name: "demo"},
		},
		Status: clusterv1.ClusterStatus{
			Phase: string(clusterv1.ClusterPhaseProvisioned), InfrastructureReady: true,
			Conditions: clusterv1.Conditions{
				v1("Ready", corev1.ConditionTrue, "", "", "", 2*time.Minute),
				v1("InfrastructureReady", corev1.ConditionTrue, "", "", "", time.Minute),
				v1("ControlPlaneReady", corev1.ConditionFalse, clusterv1.ConditionSeverityInfo, "WaitingForControlPlane", "", time.Minute),
			},
			V1Beta2: &clusterv1.ClusterV1Beta2Status{
				Conditions: []metav1.Condition{
					v2("Available", metav1.ConditionFalse, "NotAvailable", "* ControlPlaneAvailable: DoesNotExist", 2*time.Minute),
					v2("InfrastructureReady", metav1.ConditionTrue, "Ready", "", time.Minute),
					v2("ControlPlaneAvailable", metav1.ConditionFalse, "DoesNotExist", "", 0),
					v2("ControlPlaneInitialized", metav1.ConditionTrue, "Initialized", "", 3*time.Minute),
					v2("WorkersAvailable", metav1.ConditionTrue, "Available", "", 4*time.Minute),
					v2("Deleting", metav1.ConditionFalse, "NotDeleting", "", 0),
					v2("Paused", metav1.ConditionFalse, "NotPaused", "", 0),
				},
				ControlPlane: &clusterv1.ClusterControlPlaneStatus{
					DesiredReplicas: ptr.To[int32](0), Replicas: ptr.To[int32](0), UpToDateReplicas: ptr.To[int32](0),
					ReadyReplicas: ptr.To[int32](0), AvailableReplicas: ptr.To[int32](0),
				},
				Workers: &clusterv1.WorkersStatus{
					DesiredReplicas: ptr.To(int32(replicas)), Replicas: ptr.To(int32(replicas)), UpToDateReplicas: ptr.To(int32(replicas)),
					ReadyReplicas: ptr.To(int32(replicas)), AvailableReplicas: ptr.To(int32(replicas)),
				},
			},
		},
	}
	infra := provider("LocalCluster", "demo", true)

	md := clusterv1.MachineDeployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: clusterv1.GroupVersion.String(), Kind: "MachineDeployment"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "demo-md-0", UID: "md-uid"},
		Spec: clusterv1.MachineDeploymentSpec{
			ClusterName: "demo", Replicas: ptr.To(int32(replicas)),
			Template: clusterv1.MachineTemplateSpec{Spec: clusterv1.MachineSpec{
				ClusterName:       "demo",
				Bootstrap:         clusterv1.Bootstrap{DataSecretName: ptr.To("demo-bootstrap")},
				InfrastructureRef: corev1.ObjectReference{APIVersion: "infrastructure.cluster.x-k8s.io/v1alpha1", Kind: "LocalMachineTemplate", Name: "demo"},
			}},
		},
		Status: clusterv1.MachineDeploymentStatus{
			Replicas: int32(replicas), ReadyReplicas: int32(replicas), AvailableReplicas: int32(replicas), UpdatedReplicas: int32(replicas),
			Conditions: clusterv1.Conditions{
				v1("Ready", corev1.ConditionTrue, "", "", "", 3*time.Minute),
				v1("Available", corev1.ConditionTrue, "", "", "", 3*time.Minute),
			},
			V1Beta2: &clusterv1.MachineDeploymentV1Beta2Status{
				Conditions: []metav1.Condition{
					v2("Available", metav1.ConditionTrue, "Available", "", 4*time.Minute),
					v2("MachinesReady", metav1.ConditionTrue, "Ready", "", 4*time.Minute),
					v2("MachinesUpToDate", metav1.ConditionTrue, "UpToDate", "", time.Minute),
					v2("RollingOut", metav1.ConditionFalse, "NotRollingOut", "", time.Minute),
					v2("ScalingUp", metav1.ConditionFalse, "NotScalingUp", "", 4*time.Minute),
					v2("ScalingDown", metav1.ConditionFalse, "NotScalingDown", "", time.Minute),
					v2("Deleting", metav1.ConditionFalse, "NotDeleting", "", time.Minute),
					v2("Paused", metav1.ConditionFalse, "NotPaused", "", time.Minute),
				},
				ReadyReplicas: ptr.To(int32(replicas)), AvailableReplicas: ptr.To(int32(replicas)), UpToDateReplicas: ptr.To(int32(replicas)),
			},
		},
	}
	ms := clusterv1.MachineSet{
		TypeMeta: metav1.TypeMeta{APIVersion: clusterv1.GroupVersion.String(), Kind: "MachineSet"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "demo-md-0-7f9c4", UID: "ms-uid",
			OwnerReferences: []metav1.OwnerReference{controller("MachineDeployment", "demo-md-0", md.UID)}},
		Spec: clusterv1.MachineSetSpec{ClusterName: "demo", Replicas: ptr.To(int32(replicas))},
		Status: clusterv1.MachineSetStatus{
			Replicas: int32(replicas), ReadyReplicas: int32(replicas), AvailableReplicas: int32(replicas),
			V1Beta2: &clusterv1.MachineSetV1Beta2Status{
				Conditions: []metav1.Condition{
					v2("MachinesReady", metav1.ConditionTrue, "Ready", "", 4*time.Minute),
					v2("ScalingUp", metav1.ConditionFalse, "NotScalingUp", "", 4*time.Minute),
				},
				ReadyReplicas: ptr.To(int32(replicas)), AvailableReplicas: ptr.To(int32(replicas)), UpToDateReplicas: ptr.To(int32(replicas)),
			},
		},
	}
	objs := &Objects{
		Cluster:               cluster,
		Infrastructure:        infra,
		MachineDeployments:    []clusterv1.MachineDeployment{md},
		MachineSets:           []clusterv1.MachineSet{ms},
		MachineInfrastructure: map[string]*unstructured.Unstructured{},
		BootstrapConfigs:      map[string]*unstructured.Unstructured{},
	}
	for i := range replicas {
		m := running(fmt.Sprintf("demo-md-0-7f9c4-m%d", i), time.Duration(5+i)*time.Minute)
		m.OwnerReferences = []metav1.OwnerReference{controller("MachineSet", ms.Name, ms.UID)}
		objs.Machines = append(objs.Machines, *m)
		objs.MachineInfrastructure[m.Name] = provider("LocalMachine", m.Name, true)
	}
	return objs
}

// running returns a Running Machine whose Ready condition changed at t0+readyAt.
func running(name string, readyAt time.Duration) *clusterv1.Machine {
	return &clusterv1.Machine{
		TypeMeta:   metav1.TypeMeta{APIVersion: clusterv1.GroupVersion.String(), Kind: "Machine"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, UID: types.UID(name + "-uid")},
		Spec: clusterv1.MachineSpec{
			ClusterName:       "demo",
			Bootstrap:         clusterv1.Bootstrap{DataSecretName: ptr.To("demo-bootstrap")},
			InfrastructureRef: corev1.ObjectReference{APIVersion: "infrastructure.cluster.x-k8s.io/v1alpha1", Kind: "LocalMachine", Name: name},
			ProviderID:        ptr.To("local://" + name),
		},
		Status: clusterv1.MachineStatus{
			Phase:      string(clusterv1.MachinePhaseRunning),
			Conditions: clusterv1.Conditions{v1("Ready", corev1.ConditionTrue, "", "", "", readyAt)},
			V1Beta2: &clusterv1.MachineV1Beta2Status{Conditions: []metav1.Condition{
				v2("Available", metav1.ConditionTrue, "Available", "", readyAt),
				v2("Ready", metav1.ConditionTrue, "Ready", "", readyAt),
				v2("UpToDate", metav1.ConditionTrue, "UpToDate", "", readyAt),
				v2("BootstrapConfigReady", metav1.ConditionTrue, "DataSecretProvided", "", time.Minute),
				v2("InfrastructureReady", metav1.ConditionTrue, "Ready", "", readyAt),
				v2("NodeHealthy", metav1.ConditionTrue, "NodeHealthy", "", readyAt),
				v2("Deleting", metav1.ConditionFalse, "NotDeleting", "", time.Minute),
				v2("Paused", metav1.ConditionFalse, "NotPaused", "", time.Minute),
			}},
		},
	}
}

// notReady makes a Machine not ready, with a reason and a message.
func notReady(m *clusterv1.Machine, reason, message string, d time.Duration) *clusterv1.Machine {
	m.Status.Phase = string(clusterv1.MachinePhaseProvisioning)
	m.Status.Conditions = clusterv1.Conditions{v1("Ready", corev1.ConditionFalse, clusterv1.ConditionSeverityWarning, reason, message, d)}
	m.Status.V1Beta2.Conditions = []metav1.Condition{
		v2("Available", metav1.ConditionFalse, "NotReady", "* Ready: "+message, d),
		v2("Ready", metav1.ConditionFalse, reason, message, d),
		v2("UpToDate", metav1.ConditionTrue, "UpToDate", "", d),
	}
	return m
}

// provider returns a provider object with v1beta1 and v1beta2 Ready conditions.
func provider(kind, name string, ready bool) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("infrastructure.cluster.x-k8s.io/v1alpha1")
	u.SetKind(kind)
	u.SetNamespace("default")
	u.SetName(name)
	status, reason, message := "True", "Ready", ""
	if !ready {
		status, reason, message = "False", "WaitingForNode", "Waiting for the Node to register"
	}
	ts := t0.Add(time.Minute).Format(time.RFC3339)
	u.Object["status"] = map[string]any{
		"ready": ready,
		"conditions": []any{map[string]any{"type": "Ready", "status": status, "severity": map[bool]string{true: "", false: "Info"}[ready],
			"reason": map[bool]string{true: "", false: reason}[ready], "message": message, "lastTransitionTime": ts}},
		"v1beta2": map[string]any{"conditions": []any{
			map[string]any{"type": "Ready", "status": status, "reason": reason, "message": message, "lastTransitionTime": ts},
			map[string]any{"type": "Paused", "status": "False", "reason": "NotPaused", "lastTransitionTime": ts},
		}},
	}
	return u
}

func controller(kind, name string, uid types.UID) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: clusterv1.GroupVersion.String(), Kind: kind, Name: name, UID: uid, Controller: ptr.To(true)}
}
