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
  kube-apiserver) want="Kubernetes $version"; mod=k8s.io/kubernetes ;;
  etcd)           want="etcd Version: ${version#v}"; mod=go.etcd.io/etcd/server/v3 ;;
  controller-gen) want="Version: $version"; mod=sigs.k8s.io/controller-tools ;;
  golangci-lint)  want="has version ${version#v} "; mod=github.com/golangci/golangci-lint/v2 ;;
  *) echo "unknown tool $tool" >&2; exit 2 ;;
esac

dir="$root/hack/tools/$tool"
[ "$tool" = golangci-lint ] && dir="$root/hack/tools/lint"
pinned=$(cd "$dir" && go list -m -f '{{.Version}}' "$mod")
if [ "$pinned" != "$version" ]; then
  echo "hack/tools/versions.mk pins $tool $version but $dir/go.mod requires $mod $pinned: make them agree" >&2
  exit 1
fi

if [ -x "$bin/$tool" ]; then
  current=$("$bin/$tool" --version 2>/dev/null | head -n 1 || true)
  if [[ "$current" == *"$want"* ]]; then
    exit 0
  fi
fi

msg="Building $tool $version into bin/"
[ "$tool" = kube-apiserver ] && msg="$msg (the first build takes several minutes)"
echo "$msg" >&2
cd "$dir"
case "$tool" in
  kube-apiserver)
    minor=$(echo "$version" | cut -d. -f2)
    ldflags="-s -w -X k8s.io/component-base/version.gitVersion=$version -X k8s.io/component-base/version.gitMajor=1"
    ldflags="$ldflags -X k8s.io/component-base/version.gitMinor=$minor -X k8s.io/component-base/version.gitTreeState=clean"
    CGO_ENABLED=0 go build -trimpath -ldflags "$ldflags" -o "$bin/kube-apiserver" k8s.io/kubernetes/cmd/kube-apiserver ;;
  etcd)
    CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$bin/etcd" . ;;
  controller-gen)
    go build -trimpath -o "$bin/controller-gen" sigs.k8s.io/controller-tools/cmd/controller-gen ;;
  golangci-lint)
    go build -trimpath -ldflags "-X main.version=${version#v}" -o "$bin/golangci-lint" github.com/golangci/golangci-lint/v2/cmd/golangci-lint ;;
esac
"$bin/$tool" --version | head -n 1 >&2
