package crd_test

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bootstrapv1 "github.com/capstan-dev/capstan/api/bootstrap/kubeadm/v1beta1"
	controlplanev1 "github.com/capstan-dev/capstan/api/controlplane/kubeadm/v1beta1"
)

// TestKubeadmConfigValidation checks the rules upstream's KubeadmConfig webhook enforces, written as CEL.
func TestKubeadmConfigValidation(t *testing.T) {
	secretFile := &bootstrapv1.FileSource{Secret: bootstrapv1.SecretFileSource{Name: "s", Key: "k"}}
	tests := []struct {
		name    string
		spec    bootstrapv1.KubeadmConfigSpec
		wantErr string
	}{
		{name: "a valid spec", spec: bootstrapv1.KubeadmConfigSpec{Files: []bootstrapv1.File{{Path: "/a", Content: "x"}, {Path: "/b", ContentFrom: secretFile}}}},
		{
			name:    "content and contentFrom",
			spec:    bootstrapv1.KubeadmConfigSpec{Files: []bootstrapv1.File{{Path: "/a", Content: "x", ContentFrom: secretFile}}},
			wantErr: "only one of content or contentFrom may be specified for a single file",
		},
		{
			name:    "the same path twice",
			spec:    bootstrapv1.KubeadmConfigSpec{Files: []bootstrapv1.File{{Path: "/a", Content: "x"}, {Path: "/a", Content: "y"}}},
			wantErr: "path property must be unique among all files",
		},
		{
			name:    "passwd and passwdFrom",
			spec:    bootstrapv1.KubeadmConfigSpec{Users: []bootstrapv1.User{{Name: "u", Passwd: ptr.To("h"), PasswdFrom: &bootstrapv1.PasswdSource{Secret: bootstrapv1.SecretPasswdSource{Name: "s", Key: "k"}}}}},
			wantErr: "only one of passwd or passwdFrom may be specified for a single user",
		},
		{
			name:    "ignition settings without the ignition format",
			spec:    bootstrapv1.KubeadmConfigSpec{Ignition: &bootstrapv1.IgnitionSpec{}},
			wantErr: `spec.format: Invalid value: must be set to "ignition" if spec.ignition is set`,
		},
		{
			name:    "boot commands with ignition",
			spec:    bootstrapv1.KubeadmConfigSpec{Format: bootstrapv1.Ignition, BootCommands: []string{"echo"}},
			wantErr: "spec.bootCommands",
		},
		{
			name:    "a gzip file with ignition",
			spec:    bootstrapv1.KubeadmConfigSpec{Format: bootstrapv1.Ignition, Files: []bootstrapv1.File{{Path: "/a", Encoding: bootstrapv1.Gzip, Content: "x"}}},
			wantErr: "files[].encoding gzip and gzip+base64 are not supported",
		},
		{
			name: "a diskLayout of 100%",
			spec: bootstrapv1.KubeadmConfigSpec{DiskSetup: &bootstrapv1.DiskSetup{Partitions: []bootstrapv1.Partition{{Device: "/dev/sdb",
				DiskLayout: []bootstrapv1.PartitionSpec{{Percentage: 50}, {Percentage: 50, PartitionType: "LinuxSwap"}}}}}},
		},
		{
			name: "a diskLayout over 100%",
			spec: bootstrapv1.KubeadmConfigSpec{DiskSetup: &bootstrapv1.DiskSetup{Partitions: []bootstrapv1.Partition{{Device: "/dev/sdb",
				DiskLayout: []bootstrapv1.PartitionSpec{{Percentage: 50}, {Percentage: 51}}}}}},
			wantErr: "spec.diskSetup.partitions[0].diskLayout: Invalid value: the sum of all partition percentages must not be greater than 100",
		},
		{
			name:    "a diskLayout's unknown partition type",
			spec:    bootstrapv1.KubeadmConfigSpec{DiskSetup: &bootstrapv1.DiskSetup{Partitions: []bootstrapv1.Partition{{Device: "/dev/sdb", DiskLayout: []bootstrapv1.PartitionSpec{{Percentage: 50, PartitionType: "ext4"}}}}}},
			wantErr: "partitionType must be one of Linux, LinuxSwap",
		},
		{
			name:    "an mbr partition with ignition",
			spec:    bootstrapv1.KubeadmConfigSpec{Format: bootstrapv1.Ignition, DiskSetup: &bootstrapv1.DiskSetup{Partitions: []bootstrapv1.Partition{{Device: "/dev/sdb", Layout: true, TableType: ptr.To("mbr")}}}},
			wantErr: `only partition type "gpt" is supported`,
		},
		{
			name: "a discovery kubeconfig without credentials",
			spec: bootstrapv1.KubeadmConfigSpec{JoinConfiguration: &bootstrapv1.JoinConfiguration{Discovery: bootstrapv1.Discovery{
				File: &bootstrapv1.FileDiscovery{KubeConfigPath: "/k", KubeConfig: &bootstrapv1.FileDiscoveryKubeConfig{}},
			}}},
			wantErr: "at least one of authProvider or exec must be defined",
		},
		{
			name: "local and external etcd",
			spec: bootstrapv1.KubeadmConfigSpec{ClusterConfiguration: &bootstrapv1.ClusterConfiguration{Etcd: bootstrapv1.Etcd{
				Local: &bootstrapv1.LocalEtcd{}, External: &bootstrapv1.ExternalEtcd{Endpoints: []string{"https://e:2379"}, CAFile: "c", CertFile: "c", KeyFile: "k"},
			}}},
			wantErr: "cannot have both external and local etcd",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			ns := env.NewNamespace(t)
			config := &bootstrapv1.KubeadmConfig{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "c"}, Spec: tt.spec}
			template := &bootstrapv1.KubeadmConfigTemplate{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "t"},
				Spec: bootstrapv1.KubeadmConfigTemplateSpec{Template: bootstrapv1.KubeadmConfigTemplateResource{Spec: tt.spec}}}
			for _, err := range []error{env.Client.Create(context.Background(), config), env.Client.Create(context.Background(), template)} {
				if tt.wantErr == "" {
					g.Expect(err).NotTo(HaveOccurred())
					continue
				}
				g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "got %v", err)
				g.Expect(err.Error()).To(ContainSubstring(tt.wantErr))
			}
		})
	}
}

func kcp(ns string, mutate func(*controlplanev1.KubeadmControlPlaneSpec)) *controlplanev1.KubeadmControlPlane {
	k := &controlplanev1.KubeadmControlPlane{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "kcp"},
		Spec: controlplanev1.KubeadmControlPlaneSpec{
			Replicas: ptr.To[int32](3),
			Version:  "v1.36.0",
			MachineTemplate: controlplanev1.KubeadmControlPlaneMachineTemplate{InfrastructureRef: corev1.ObjectReference{
				APIVersion: "infrastructure.cluster.x-k8s.io/v1alpha1", Kind: "LocalMachineTemplate", Name: "cp", Namespace: ns,
			}},
			KubeadmConfigSpec: bootstrapv1.KubeadmConfigSpec{ClusterConfiguration: &bootstrapv1.ClusterConfiguration{
				Networking: bootstrapv1.Networking{PodSubnet: "192.168.0.0/16"},
			}},
		},
	}
	if mutate != nil {
		mutate(&k.Spec)
	}
	return k
}

// TestKubeadmControlPlaneValidation checks the rules upstream's KubeadmControlPlane webhook enforces,
// written as CEL, and that the scale subresource and defaults are served.
func TestKubeadmControlPlaneValidation(t *testing.T) {
	ctx := context.Background()
	create := []struct {
		name    string
		mutate  func(*controlplanev1.KubeadmControlPlaneSpec)
		wantErr string
	}{
		{name: "a valid control plane"},
		{name: "an even number of replicas with stacked etcd", mutate: func(s *controlplanev1.KubeadmControlPlaneSpec) { s.Replicas = ptr.To[int32](2) },
			wantErr: "cannot be an even number when etcd is stacked"},
		{name: "zero replicas", mutate: func(s *controlplanev1.KubeadmControlPlaneSpec) { s.Replicas = ptr.To[int32](0) },
			wantErr: "cannot be less than or equal to 0"},
		{name: "a version that is not semantic", mutate: func(s *controlplanev1.KubeadmControlPlaneSpec) { s.Version = "1.36" },
			wantErr: "must be a valid semantic version"},
		{name: "maxSurge 2", mutate: func(s *controlplanev1.KubeadmControlPlaneSpec) {
			s.RolloutStrategy = &controlplanev1.RolloutStrategy{Type: controlplanev1.RollingUpdateStrategyType, RollingUpdate: &controlplanev1.RollingUpdate{MaxSurge: ptr.To(intstr.FromInt32(2))}}
		}, wantErr: "value must be 1 or 0"},
		{name: "maxSurge 0 with one replica", mutate: func(s *controlplanev1.KubeadmControlPlaneSpec) {
			s.Replicas = ptr.To[int32](1)
			s.RolloutStrategy = &controlplanev1.RolloutStrategy{Type: controlplanev1.RollingUpdateStrategyType, RollingUpdate: &controlplanev1.RollingUpdate{MaxSurge: ptr.To(intstr.FromInt32(0))}}
		}, wantErr: "replica count needs to be at least 3"},
		{name: "certificatesExpiryDays below 7", mutate: func(s *controlplanev1.KubeadmControlPlaneSpec) {
			s.RolloutBefore = &controlplanev1.RolloutBefore{CertificatesExpiryDays: ptr.To[int32](3)}
		}, wantErr: "must be greater than or equal to 7"},
		{name: "a naming template without random", mutate: func(s *controlplanev1.KubeadmControlPlaneSpec) {
			s.MachineNamingStrategy = &controlplanev1.MachineNamingStrategy{Template: "{{ .cluster.name }}-cp"}
		}, wantErr: "{{ .random }} is missing"},
		{name: "an infrastructureRef without a name", mutate: func(s *controlplanev1.KubeadmControlPlaneSpec) { s.MachineTemplate.InfrastructureRef.Name = "" },
			wantErr: "apiVersion, kind and name cannot be empty"},
	}
	for _, tt := range create {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			err := env.Client.Create(ctx, kcp(env.NewNamespace(t), tt.mutate))
			if tt.wantErr == "" {
				g.Expect(err).NotTo(HaveOccurred())
				return
			}
			g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "got %v", err)
			g.Expect(err.Error()).To(ContainSubstring(tt.wantErr))
		})
	}

	update := []struct {
		name    string
		mutate  func(*controlplanev1.KubeadmControlPlaneSpec)
		wantErr string
	}{
		{name: "an upgrade of one minor", mutate: func(s *controlplanev1.KubeadmControlPlaneSpec) { s.Version = "v1.37.2" }},
		{name: "scaling and API server arguments", mutate: func(s *controlplanev1.KubeadmControlPlaneSpec) {
			s.Replicas = ptr.To[int32](5)
			s.KubeadmConfigSpec.ClusterConfiguration.APIServer.ExtraArgs = map[string]string{"v": "2"}
		}},
		{name: "an upgrade of two minors", mutate: func(s *controlplanev1.KubeadmControlPlaneSpec) { s.Version = "v1.38.0" },
			wantErr: "cannot update Kubernetes version from v1.36.0 to v1.38.0"},
		{name: "a new pod subnet", mutate: func(s *controlplanev1.KubeadmControlPlaneSpec) {
			s.KubeadmConfigSpec.ClusterConfiguration.Networking.PodSubnet = "10.0.0.0/8"
		}, wantErr: "spec.kubeadmConfigSpec.clusterConfiguration.networking.podSubnet: Invalid value"},
		{name: "from local to external etcd", mutate: func(s *controlplanev1.KubeadmControlPlaneSpec) {
			s.KubeadmConfigSpec.ClusterConfiguration.Etcd.External = &bootstrapv1.ExternalEtcd{Endpoints: []string{"https://e:2379"}, CAFile: "c", CertFile: "c", KeyFile: "k"}
		}, wantErr: "cannot change between external and local etcd"},
	}
	for _, tt := range update {
		t.Run("update: "+tt.name, func(t *testing.T) {
			g := NewWithT(t)
			k := kcp(env.NewNamespace(t), func(s *controlplanev1.KubeadmControlPlaneSpec) {
				s.KubeadmConfigSpec.ClusterConfiguration.Etcd.Local = &bootstrapv1.LocalEtcd{}
			})
			g.Expect(env.Client.Create(ctx, k)).To(Succeed())
			tt.mutate(&k.Spec)
			err := env.Client.Update(ctx, k)
			if tt.wantErr == "" {
				g.Expect(err).NotTo(HaveOccurred())
				return
			}
			g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "got %v", err)
			g.Expect(err.Error()).To(ContainSubstring(tt.wantErr))
		})
	}

	t.Run("rolloutStrategy is defaulted and the scale subresource is served", func(t *testing.T) {
		g := NewWithT(t)
		k := kcp(env.NewNamespace(t), nil)
		g.Expect(env.Client.Create(ctx, k)).To(Succeed())
		g.Expect(k.Spec.RolloutStrategy).NotTo(BeNil())
		g.Expect(k.Spec.RolloutStrategy.Type).To(Equal(controlplanev1.RollingUpdateStrategyType))
		g.Expect(k.Spec.RolloutStrategy.RollingUpdate.MaxSurge.IntValue()).To(Equal(1))

		scale := &autoscalingv1.Scale{}
		g.Expect(env.Client.SubResource("scale").Get(ctx, k, scale)).To(Succeed())
		g.Expect(scale.Spec.Replicas).To(Equal(int32(3)))
		scale.Spec.Replicas = 5
		g.Expect(env.Client.SubResource("scale").Update(ctx, k, client.WithSubResourceBody(scale))).To(Succeed())
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(k), k)).To(Succeed())
		g.Expect(k.Spec.Replicas).To(Equal(ptr.To[int32](5)))
	})
}
