# The one place where the versions of the tools `make tools` builds are pinned. The go.mod files under
# hack/tools/<tool>/ (kube-apiserver, kube-controller-manager and kubectl come from hack/tools/kubernetes) must
# require the same versions; hack/tools/build.sh refuses to build when they do not.
KUBERNETES_VERSION    := v1.37.1
# The previous minor's kube-apiserver (bin/kube-apiserver-v1.36, from hack/tools/kubernetes-1.36): the local
# provider runs it for control plane Machines of that minor. Its minor must match the directory's name.
KUBERNETES_PREVIOUS_VERSION := v1.36.3
# The kube-apiserver two minors back (bin/kube-apiserver-v1.35, from hack/tools/kubernetes-1.35), built by
# `make test-e2e-chained` only: the chained upgrade check runs its v1.35 Machines with it.
KUBERNETES_CHAINED_VERSION := v1.35.4
ETCD_VERSION          := v3.6.16
CONTROLLER_GEN_VERSION := v0.23.0
CONVERSION_GEN_VERSION := v0.37.2
GOLANGCI_LINT_VERSION := v2.15.0
