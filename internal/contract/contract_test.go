package contract

import (
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
)

func object(t *testing.T, text string) *unstructured.Unstructured {
	t.Helper()
	obj := map[string]any{}
	if err := yaml.Unmarshal([]byte(text), &obj); err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{Object: obj}
	u.SetKind("FooCluster")
	u.SetName("foo")
	return u
}

func TestInfraClusterByContract(t *testing.T) {
	v1beta1 := `
spec:
  controlPlaneEndpoint: {host: 10.0.0.1, port: 6443}
status:
  ready: true
  failureDomains:
    fd1: {controlPlane: true, attributes: {zone: a}}
    fd2: {}
  failureReason: CreateError
  failureMessage: quota exceeded
  conditions:
  - {type: Ready, status: "False", severity: Warning, reason: Provisioning, message: waiting, lastTransitionTime: "2026-01-01T00:00:00Z"}
`
	v1beta2 := `
spec:
  controlPlaneEndpoint: {host: lb.example.com, port: 443}
status:
  initialization: {provisioned: true}
  failureDomains:
  - {name: fd1, controlPlane: true}
  - {name: fd2, attributes: {rack: "7"}}
  conditions:
  - {type: Ready, status: "True", reason: Ready}
`
	g := NewWithT(t)

	old := object(t, v1beta1)
	ready, err := Provisioned(old, V1Beta1)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(ready).To(BeTrue())
	ready, err = Provisioned(old, V1Beta2)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(ready).To(BeFalse(), "a v1beta2 reader must not take status.ready")
	ep, err := ControlPlaneEndpoint(old)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(ep).To(Equal(clusterv1.APIEndpoint{Host: "10.0.0.1", Port: 6443}))
	fds, err := FailureDomains(old)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(fds).To(Equal(clusterv1.FailureDomains{
		"fd1": {ControlPlane: true, Attributes: map[string]string{"zone": "a"}},
		"fd2": {},
	}))
	reason, message, err := Failure(old)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect([]string{reason, message}).To(Equal([]string{"CreateError", "quota exceeded"}))
	cond, err := GetCondition(old, "Ready")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cond.Status).To(Equal(corev1.ConditionFalse))
	g.Expect(cond.Severity).To(Equal("Warning"))
	g.Expect(cond.LastTransitionTime.Year()).To(Equal(2026))

	cur := object(t, v1beta2)
	ready, err = Provisioned(cur, V1Beta2)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(ready).To(BeTrue())
	fds, err = FailureDomains(cur)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(fds).To(Equal(clusterv1.FailureDomains{
		"fd1": {ControlPlane: true},
		"fd2": {Attributes: map[string]string{"rack": "7"}},
	}))
	cond, err = GetCondition(cur, "Ready")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cond.Status).To(Equal(corev1.ConditionTrue))
	cond, err = GetCondition(cur, "Other")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cond).To(BeNil())
}

func TestMalformedFieldsAreErrors(t *testing.T) {
	g := NewWithT(t)
	_, err := Provisioned(object(t, `status: {ready: "yes"}`), V1Beta1)
	g.Expect(err).To(MatchError(ContainSubstring(".status.ready of FooCluster foo")))
	_, err = FailureDomains(object(t, `status: {failureDomains: [{controlPlane: true}]}`))
	g.Expect(err).To(MatchError(ContainSubstring("want an object with a name")))
	_, err = GetCondition(object(t, `status: {conditions: [{type: Ready, status: "yes"}]}`), "Ready")
	g.Expect(err).To(MatchError(ContainSubstring(`status "yes" is not True, False or Unknown`)))
}

func TestMachineContracts(t *testing.T) {
	g := NewWithT(t)
	infra := object(t, `
spec: {providerID: "local://m1", failureDomain: fd1}
status:
  initialization: {provisioned: true}
  addresses: [{type: InternalIP, address: 10.0.0.5}]
`)
	id, err := ProviderID(infra)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(id).To(Equal("local://m1"))
	fd, err := MachineFailureDomain(infra)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(fd).To(Equal("fd1"))
	addrs, err := Addresses(infra)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(addrs).To(Equal(clusterv1.MachineAddresses{{Type: clusterv1.MachineInternalIP, Address: "10.0.0.5"}}))

	bootstrap := object(t, `status: {ready: true, dataSecretName: m1-bootstrap, initialization: {dataSecretCreated: false}}`)
	created, err := DataSecretCreated(bootstrap, V1Beta1)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(created).To(BeTrue())
	created, err = DataSecretCreated(bootstrap, V1Beta2)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(created).To(BeFalse())
	name, err := DataSecretName(bootstrap)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(name).To(Equal("m1-bootstrap"))
}

func TestControlPlaneContract(t *testing.T) {
	g := NewWithT(t)
	v1 := object(t, `
spec:
  replicas: 3
  version: v1.31.0
  machineTemplate: {infrastructureRef: {apiVersion: infrastructure.cluster.x-k8s.io/v1beta1, kind: FooMachineTemplate, name: cp}}
status: {initialized: true, ready: false, replicas: 3, readyReplicas: 2, updatedReplicas: 3, unavailableReplicas: 1, selector: "a=b", version: v1.30.0}
`)
	init, err := ControlPlaneInitialized(v1, V1Beta1)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(init).To(BeTrue())
	ready, err := ControlPlaneReady(v1, V1Beta1)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(ready).To(BeFalse())
	r, err := Replicas(v1, V1Beta1)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(*r.Desired).To(BeEquivalentTo(3))
	g.Expect(*r.Ready).To(BeEquivalentTo(2))
	g.Expect(*r.Unavailable).To(BeEquivalentTo(1))
	g.Expect(r.UpToDate).To(BeNil())
	ref, err := MachineTemplateInfrastructureRef(v1, V1Beta1)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(ref.Kind).To(Equal("FooMachineTemplate"))

	v2 := object(t, `
spec:
  replicas: 1
  machineTemplate: {spec: {infrastructureRef: {apiGroup: infrastructure.cluster.x-k8s.io, kind: FooMachineTemplate, name: cp}}}
status: {initialization: {controlPlaneInitialized: true}, availableReplicas: 1, upToDateReplicas: 1}
`)
	init, err = ControlPlaneInitialized(v2, V1Beta2)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(init).To(BeTrue())
	r, err = Replicas(v2, V1Beta2)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(*r.Available).To(BeEquivalentTo(1))
	g.Expect(*r.UpToDate).To(BeEquivalentTo(1))
	ref, err = MachineTemplateInfrastructureRef(v2, V1Beta2)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(ref.Name).To(Equal("cp"))
}

func TestControlPlaneVersions(t *testing.T) {
	tests := []struct {
		name      string
		status    string
		want      []clusterv1.StatusVersion
		wantFound bool
		wantErr   string
	}{
		{name: "absent", status: `{replicas: 3}`},
		{name: "empty", status: `{versions: []}`, wantFound: true},
		{
			name:      "oldest first",
			status:    `{versions: [{version: v1.32.4, replicas: 2}, {version: v1.33.1, replicas: 1}]}`,
			want:      []clusterv1.StatusVersion{{Version: "v1.32.4", Replicas: 2}, {Version: "v1.33.1", Replicas: 1}},
			wantFound: true,
		},
		{
			name:      "without replicas (a provider that has no notion of them)",
			status:    `{versions: [{version: v1.33.1}]}`,
			want:      []clusterv1.StatusVersion{{Version: "v1.33.1"}},
			wantFound: true,
		},
		{
			name:      "unorderable build metadata",
			status:    `{versions: [{version: v1.33.1+bbb, replicas: 1}, {version: v1.33.1+aaa, replicas: 1}]}`,
			want:      []clusterv1.StatusVersion{{Version: "v1.33.1+bbb", Replicas: 1}, {Version: "v1.33.1+aaa", Replicas: 1}},
			wantFound: true,
		},
		{name: "out of order", status: `{versions: [{version: v1.33.1, replicas: 1}, {version: v1.32.4, replicas: 2}]}`,
			wantErr: `version "v1.33.1" and "v1.32.4" are in the wrong order`},
		{name: "not a version", status: `{versions: [{version: latest, replicas: 1}]}`, wantErr: ".status.versions[0].version"},
		{name: "negative replicas", status: `{versions: [{version: v1.33.1, replicas: -1}]}`, wantErr: ".status.versions[0].replicas"},
		{name: "not a list", status: `{versions: v1.33.1}`, wantErr: "not a list"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			got, found, err := ControlPlaneVersions(object(t, "status: "+tt.status))
			if tt.wantErr != "" {
				g.Expect(err).To(MatchError(ContainSubstring(tt.wantErr)))
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(found).To(Equal(tt.wantFound))
			g.Expect(got).To(Equal(tt.want))
		})
	}
}
