package backend

import (
	"os"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
)

func TestViolations(t *testing.T) {
	files := []File{{Path: "/etc/kubernetes/admission.yaml"}, {Path: "/etc/kubernetes/audit/policy.yaml"}}
	volumes := []Volume{{HostPath: "/etc/kubernetes/audit", MountPath: "/audit"}}
	tests := []struct {
		name string
		api  []Arg
		etcd []Arg
		want []string
	}{
		{name: "allowed flags", api: []Arg{{"v", "2"}, {"feature-gates", "X=true"}, {"enable-admission-plugins", "NodeRestriction,PodSecurity"}, {"audit-log-path", "-"}},
			etcd: []Arg{{"quota-backend-bytes", "8589934592"}, {"snapshot-count", "100"}}},
		{name: "a file the bootstrap data writes", api: []Arg{{"admission-control-config-file", "/etc/kubernetes/admission.yaml"}}},
		{name: "a file the bootstrap data writes, through an extra volume", api: []Arg{{"audit-policy-file", "/audit/policy.yaml"}}},
		{name: "a file of the machine", api: []Arg{{"admission-control-config-file", "/etc/passwd"}},
			want: []string{`apiServer.extraArgs sets admission-control-config-file to "/etc/passwd", which is not a file of the bootstrap data`}},
		{name: "a relative file", api: []Arg{{"encryption-provider-config", "etc/kubernetes/admission.yaml"}},
			want: []string{`apiServer.extraArgs sets encryption-provider-config to "etc/kubernetes/admission.yaml", which is not a file of the bootstrap data`}},
		{name: "a path that climbs out of a volume", api: []Arg{{"audit-policy-file", "/audit/../../../etc/shadow"}},
			want: []string{`apiServer.extraArgs sets audit-policy-file to "/audit/../../../etc/shadow", which is not a file`}},
		{name: "an audit log file", api: []Arg{{"audit-log-path", "/any/path"}},
			want: []string{`apiServer.extraArgs sets audit-log-path to "/any/path": only "-" (the process's log) is allowed, not a file of this machine`}},
		{name: "weaker authorization", api: []Arg{{"authorization-mode", "AlwaysAllow"}}, want: []string{"apiServer.extraArgs sets authorization-mode, which is not allowed"}},
		{name: "a token file", api: []Arg{{"token-auth-file", "/tmp/tokens"}}, want: []string{"apiServer.extraArgs sets token-auth-file, which is not allowed"}},
		{name: "a webhook calling out", api: []Arg{{"audit-webhook-config-file", "/etc/kubernetes/admission.yaml"}}, want: []string{"apiServer.extraArgs sets audit-webhook-config-file, which is not allowed"}},
		{name: "a reserved flag", api: []Arg{{"bind-address", "0.0.0.0"}}, want: []string{"apiServer.extraArgs sets bind-address, which the local provider sets itself"}},
		{name: "etcd metrics on every address", etcd: []Arg{{"listen-metrics-urls", "http://0.0.0.0:2381"}}, want: []string{"etcd.local.extraArgs sets listen-metrics-urls, which is not allowed"}},
		{name: "etcd log file", etcd: []Arg{{"log-outputs", "/tmp/etcd.log"}}, want: []string{"etcd.local.extraArgs sets log-outputs, which is not allowed"}},
		{name: "etcd reserved", etcd: []Arg{{"data-dir", "/"}}, want: []string{"etcd.local.extraArgs sets data-dir, which the local provider sets itself"}},
		{name: "several, in order", api: []Arg{{"authorization-mode", "AlwaysAllow"}, {"v", "2"}, {"profiling", "true"}, {"oidc-issuer-url", "https://x"}},
			etcd: []Arg{{"wal-dir", "/tmp"}},
			want: []string{"authorization-mode", "oidc-issuer-url", "wal-dir"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			cp := &ControlPlane{APIServerArgs: tt.api, EtcdArgs: tt.etcd, Files: files, APIServerVolumes: volumes}
			got := Violations(cp)
			g.Expect(got).To(HaveLen(len(tt.want)))
			for i, w := range tt.want {
				g.Expect(got[i].Error()).To(ContainSubstring(w))
			}
			err := CheckControlPlane(cp)
			if len(tt.want) == 0 {
				g.Expect(err).NotTo(HaveOccurred())
				return
			}
			g.Expect(err).To(MatchError(HavePrefix("extra arguments refused: ")))
			g.Expect(err).To(MatchError(HaveSuffix(Explanation)))
		})
	}
}

// The user documentation lists exactly the allowed extra arguments.
func TestAllowedArgsAreDocumented(t *testing.T) {
	g := NewWithT(t)
	data, err := os.ReadFile("../../../../docs/providers/local.md")
	g.Expect(err).NotTo(HaveOccurred())
	doc := string(data)
	section := doc[strings.Index(doc, "### Extra arguments"):]
	section = section[:strings.Index(section[4:], "\n#")+4]
	for _, list := range [][]string{AllowedAPIServerArgs, AllowedAPIServerFileArgs, AllowedAPIServerStdoutArgs, AllowedEtcdArgs} {
		for _, name := range list {
			g.Expect(section).To(ContainSubstring("`"+name+"`"), "docs/providers/local.md#extra-arguments lists %s", name)
		}
	}
}
