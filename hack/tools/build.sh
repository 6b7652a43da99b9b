#!/usr/bin/env bash
# Builds one pinned tool into bin/ from its Go module under hack/tools/, unless bin/ already holds the
# pinned version. Usage: hack/tools/build.sh <tool> <version>
set -euo pipefail

tool=$1
version=$2
root=$(cd "$(dirname "$0")/../.." && pwd)
bin="$root/bin"
mkdir -p "$bin"

current=""
case "$tool" in
  kube-apiserver|kube-controller-manager|kube-apiserver-v1.*) want="Kubernetes $version"; mod=k8s.io/kubernetes ;;
  kubectl)        want="Client Version: $version"; mod=k8s.io/kubernetes ;;
  etcd)           want="etcd Version: ${version#v}"; mod=go.etcd.io/etcd/server/v3 ;;
  controller-gen) want="Version: $version"; mod=sigs.k8s.io/controller-tools ;;
  conversion-gen) want="k8s.io/code-generator $version"; mod=k8s.io/code-generator ;;
  golangci-lint)  want="has version ${version#v} "; mod=github.com/golangci/golangci-lint/v2 ;;
  *) echo "unknown tool $tool" >&2; exit 2 ;;
esac

dir="$root/hack/tools/$tool"
case "$tool" in
  golangci-lint) dir="$root/hack/tools/lint" ;;
  kube-apiserver|kube-controller-manager|kubectl) dir="$root/hack/tools/kubernetes" ;;
  # The kube-apiserver of another minor, kube-apiserver-v1.<minor>, from hack/tools/kubernetes-1.<minor>.
  kube-apiserver-v1.*) dir="$root/hack/tools/kubernetes-${tool#kube-apiserver-v}" ;;
esac
pinned=$(cd "$dir" && go list -m -f '{{.Version}}' "$mod")
if [ "$pinned" != "$version" ]; then
  echo "hack/tools/versions.mk pins $tool $version but $dir/go.mod requires $mod $pinned: make them agree" >&2
  exit 1
fi

# first_version_line prints the first line of the tool's version output. The output is captured whole
# before it is cut: piping into `head` would close the pipe early, and with pipefail the tool's SIGPIPE
# (exit 141) would fail the build.
first_version_line() {
  local out
  if [ "$tool" = kubectl ]; then
    out=$("$bin/$tool" version --client 2>/dev/null) || return 1
  elif [ "$tool" = conversion-gen ]; then
    # conversion-gen has no --version: the module version Go recorded in the binary.
    out=$(go version -m "$bin/$tool" 2>/dev/null | awk '$1 == "mod" { print $2, $3 }') || return 1
  else
    out=$("$bin/$tool" --version 2>/dev/null) || return 1
  fi
  printf '%s\n' "${out%%$'\n'*}"
}

if [ -x "$bin/$tool" ]; then
  current=$(first_version_line || true)
  if [[ "$current" == *"$want"* ]]; then
    exit 0
  fi
fi

msg="Building $tool $version into bin/"
[[ "$tool" == kube-apiserver* ]] && msg="$msg (the first build takes several minutes)"
echo "$msg" >&2
cd "$dir"
case "$tool" in
  kube-apiserver|kube-controller-manager|kubectl|kube-apiserver-v1.*)
    minor=$(echo "$version" | cut -d. -f2)
    ldflags="-s -w"
    for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
      ldflags="$ldflags -X $pkg.gitVersion=$version -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor -X $pkg.gitTreeState=clean"
    done
    CGO_ENABLED=0 go build -trimpath -ldflags "$ldflags" -o "$bin/$tool" "k8s.io/kubernetes/cmd/${tool%-v1.*}" ;;
  etcd)
    CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$bin/etcd" . ;;
  controller-gen)
    go build -trimpath -o "$bin/controller-gen" sigs.k8s.io/controller-tools/cmd/controller-gen ;;
  conversion-gen)
    go build -trimpath -o "$bin/conversion-gen" k8s.io/code-generator/cmd/conversion-gen ;;
  golangci-lint)
    go build -trimpath -ldflags "-X main.version=${version#v}" -o "$bin/golangci-lint" github.com/golangci/golangci-lint/v2/cmd/golangci-lint ;;
esac
first_version_line >&2 || { echo "$bin/$tool was built but does not report its version" >&2; exit 1; }
