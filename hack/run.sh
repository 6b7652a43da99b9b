#!/usr/bin/env bash
# The main job (`make run`): start the embedded management cluster, install capstan's providers with
# clusterctl, create the workload cluster "demo" from the local provider's ClusterClass "local" (the topology
# flavor: a control plane machine and two workers), show it, and stay up until Ctrl-C.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=$PWD/bin
NAME=${CAPSTAN_NAME:-default}
CLUSTER=${CLUSTER_NAME:-demo}
WORKERS=${WORKER_MACHINE_COUNT:-2}
K8S_VERSION=${KUBERNETES_VERSION:-v1.37.1}

step() { printf '\n\033[1m==> %s\033[0m\n' "$*"; }

step "Starting the embedded management cluster \"$NAME\""
# The status is read whole before it is matched: `status | grep -q` would close the pipe at the first
# match, and with pipefail a SIGPIPE in `capstan status` would read as "not running".
status=$("$BIN/capstan" status --name "$NAME" || true)
if [[ "$status" == *"is running"* ]]; then
  echo "Already running; reusing it."
else
  "$BIN/capstan" up --name "$NAME" --detach --ui
fi
export KUBECONFIG
KUBECONFIG=$("$BIN/capstan" kubeconfig --name "$NAME" --path)
STATE=$(dirname "$KUBECONFIG")
CONFIG="$STATE/clusterctl.yaml"
stop() {
  step "Stopping the management cluster (its state stays in $STATE; \`make run\` again resumes it)"
  "$BIN/capstan" down --name "$NAME" || true
}
trap 'stop; exit 0' INT TERM

step "Installing the core, the kubeadm bootstrap and control plane and the local infrastructure providers (clusterctl init)"
"$BIN/clusterctl" init --config "$CONFIG" --infrastructure local --wait-providers

step "Creating the workload cluster \"$CLUSTER\" from the ClusterClass \"local\": a control plane machine and $WORKERS workers"
# The topology flavor's Cluster names the class; clusterctl adds clusterclass-local.yaml in front unless the
# class is already in the management cluster.
"$BIN/clusterctl" generate cluster "$CLUSTER" --config "$CONFIG" --infrastructure local --flavor topology \
  --kubernetes-version "$K8S_VERSION" --worker-machine-count "$WORKERS" | "$BIN/kubectl" apply -f -

step "Waiting until \"$CLUSTER\" is provisioned and its machines are running"
"$BIN/kubectl" wait "cluster/$CLUSTER" --for=jsonpath='{.status.v1beta2.conditions[?(@.type=="TopologyReconciled")].status}'=True --timeout=5m
"$BIN/kubectl" wait "cluster/$CLUSTER" --for=jsonpath='{.status.phase}'=Provisioned --timeout=5m
"$BIN/kubectl" wait machines -l "cluster.x-k8s.io/cluster-name=$CLUSTER" --for=jsonpath='{.status.phase}'=Running --timeout=5m
# The Cluster sums its workers up a moment after the Machines change.
"$BIN/kubectl" wait "cluster/$CLUSTER" --for=jsonpath='{.status.v1beta2.conditions[?(@.type=="WorkersAvailable")].status}'=True --timeout=2m
"$BIN/kubectl" wait "cluster/$CLUSTER" --for=jsonpath='{.status.v1beta2.conditions[?(@.type=="Available")].status}'=True --timeout=3m

step "The ClusterClass, and the KubeadmControlPlane and MachineDeployment the topology controller made for \"$CLUSTER\""
"$BIN/kubectl" get clusterclass local
"$BIN/kubectl" get kubeadmcontrolplane,machinedeployment -l "cluster.x-k8s.io/cluster-name=$CLUSTER"

step "clusterctl describe cluster $CLUSTER"
"$BIN/clusterctl" describe cluster "$CLUSTER"

WORKLOAD_KUBECONFIG="$STATE/$CLUSTER.kubeconfig"
"$BIN/clusterctl" get kubeconfig "$CLUSTER" > "$WORKLOAD_KUBECONFIG"
step "The workload cluster's nodes"
# A resumed management cluster restarts the workload cluster's API server: give it time to answer.
for _ in $(seq 1 60); do
  "$BIN/kubectl" --kubeconfig "$WORKLOAD_KUBECONFIG" get nodes --request-timeout=5s >/dev/null 2>&1 && break
  sleep 2
done
"$BIN/kubectl" --kubeconfig "$WORKLOAD_KUBECONFIG" get nodes

cat <<MSG

The management cluster "$NAME" and the workload cluster "$CLUSTER" are running. In another terminal:

  export KUBECONFIG=$KUBECONFIG
  $BIN/clusterctl describe cluster $CLUSTER
  $BIN/clusterctl get kubeconfig $CLUSTER > $CLUSTER.kubeconfig
  $BIN/kubectl --kubeconfig $CLUSTER.kubeconfig get nodes

Upgrade it through its topology (the control plane first, then the workers):

  $BIN/kubectl patch cluster $CLUSTER --type merge -p '{"spec":{"topology":{"version":"v1.37.2"}}}'

MSG
# `capstan up --ui` keeps the web view's URL (with its token) in the state directory while it runs.
if [[ -s "$STATE/ui-url" ]]; then
  echo "Watch it in a browser (the web view, docs/ui.md): $(cat "$STATE/ui-url")"
else
  echo "The web view runs with \`capstan up --ui\`; for this management cluster: $BIN/capstan ui --kubeconfig $KUBECONFIG"
fi
echo
echo "Press Ctrl-C to stop everything."
while true; do sleep 3600 & wait $!; done
