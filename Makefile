# capstan — run `make help` for the targets.

SHELL := /usr/bin/env bash -o pipefail
.DEFAULT_GOAL := help

include hack/tools/versions.mk

ROOT := $(abspath .)
BIN := $(ROOT)/bin
GO_TEST_FLAGS ?=
GO_TEST_TIMEOUT ?= 30m
SHARED ?= $(ROOT)/../shared

##@ General

.PHONY: help
help: ## Show this help
	@awk 'BEGIN {FS = ":.*##"; printf "Usage: make <target>\n"} /^[a-zA-Z0-9_-]+:.*?##/ { printf "  \033[36m%-20s\033[0m %s\n", $$1, $$2 } /^##@/ { printf "\n\033[1m%s\033[0m\n", substr($$0, 5) }' $(MAKEFILE_LIST)

##@ Tools

.PHONY: tools
tools: test-tools $(BIN)/controller-gen $(BIN)/conversion-gen $(BIN)/golangci-lint ## Build every pinned tool into bin/ (kube-apiserver, kube-controller-manager, kubectl, etcd, controller-gen, conversion-gen, golangci-lint)

.PHONY: test-tools
test-tools: ## Build the Kubernetes binaries and etcd that tests and `capstan up` run (does nothing when bin/ has the pinned versions)
	@hack/tools/build.sh kube-apiserver $(KUBERNETES_VERSION)
	@hack/tools/build.sh kube-apiserver-v$(word 1,$(subst ., ,$(KUBERNETES_PREVIOUS_VERSION:v%=%))).$(word 2,$(subst ., ,$(KUBERNETES_PREVIOUS_VERSION))) $(KUBERNETES_PREVIOUS_VERSION)
	@hack/tools/build.sh kube-controller-manager $(KUBERNETES_VERSION)
	@hack/tools/build.sh kubectl $(KUBERNETES_VERSION)
	@hack/tools/build.sh etcd $(ETCD_VERSION)

.PHONY: browser-tools
browser-tools: ## Install Debian's chromium for the web view's browser tests when it is missing (as root or with passwordless sudo; they skip without it)
	@hack/tools/chromium.sh

.PHONY: $(BIN)/controller-gen $(BIN)/conversion-gen $(BIN)/golangci-lint
$(BIN)/controller-gen:
	@hack/tools/build.sh controller-gen $(CONTROLLER_GEN_VERSION)
$(BIN)/conversion-gen:
	@hack/tools/build.sh conversion-gen $(CONVERSION_GEN_VERSION)
$(BIN)/golangci-lint:
	@hack/tools/build.sh golangci-lint $(GOLANGCI_LINT_VERSION)

##@ Development

.PHONY: generate
generate: $(BIN)/controller-gen $(BIN)/conversion-gen ## Generate deepcopy code, conversions and CRDs from api/, and the webhook manifests from internal/webhooks
	cd api && $(BIN)/controller-gen object paths=./...
	@# The conversions between the versions of a group: every package whose doc.go names its peer with
	@# +k8s:conversion-gen=<package> gets a zz_generated.conversion.go (upstream's way, docs/development.md).
	cd api && find . -name zz_generated.conversion.go -delete && \
		pkgs=$$(grep -rl --include=doc.go '^// +k8s:conversion-gen=' . | xargs -r -n1 dirname | sort); \
		if [ -n "$$pkgs" ]; then $(BIN)/conversion-gen --output-file=zz_generated.conversion.go $$pkgs; fi
	cd api && $(BIN)/controller-gen crd paths=./... output:crd:dir=../config/crd/bases
	@# metadata.yaml is a file format, not a served resource.
	rm -f config/crd/bases/clusterctl.cluster.x-k8s.io_metadata.yaml
	@# The operator's Helm chart carries its CRDs.
	cp config/crd/bases/operator.cluster.x-k8s.io_*.yaml config/crd/bases/management.cluster.x-k8s.io_*.yaml charts/capstan-operator/crds/
	go run ./hack/webhook-manifests

.PHONY: fmt
fmt: ## Format Go code
	gofmt -w $$(git ls-files '*.go' | grep -v /testdata/)

.PHONY: lint
# --allow-serial-runners: another golangci-lint running on the machine (another checkout's) makes this one
# wait for it instead of failing.
lint: $(BIN)/golangci-lint ## Run golangci-lint on every module
	$(BIN)/golangci-lint run --allow-serial-runners ./...
	cd api && $(BIN)/golangci-lint run --allow-serial-runners --config ../.golangci.yml ./...

.PHONY: verify
verify: generate lint verify-deps ## Check that generated code, formatting and go.mod files are up to date and lint passes
	@test -z "$$(gofmt -l $$(git ls-files '*.go' | grep -v /testdata/))" || { echo "gofmt would change:"; gofmt -l $$(git ls-files '*.go' | grep -v /testdata/); exit 1; }
	go mod tidy
	cd api && go mod tidy
	@for d in hack/tools/*/; do (cd $$d && go mod tidy) || exit 1; done
	@git diff --exit-code -- . || { echo "The tree changed: run 'make generate', 'gofmt' and 'go mod tidy' and commit the result."; exit 1; }
	@test -z "$$(git status --porcelain --untracked-files=all -- api config charts)" || { echo "Untracked generated files:"; git status --porcelain -- api config charts; exit 1; }

.PHONY: verify-deps
verify-deps: ## Check that the shipped binaries (./cmd/...) depend on no test-only package (internal/test/...)
	@bad="$$(go list -f '{{.ImportPath}}: {{join .Imports " "}}' -deps ./cmd/... | grep -v '^[^:]*/internal/test/' | grep '/internal/test/' || true)"; \
	test -z "$$bad" || { echo "The shipped binaries (./cmd/...) depend on test-only packages under internal/test/: move what they need out of internal/test/. Importers:"; echo "$$bad" | cut -d: -f1; exit 1; }

.PHONY: sync-compat
sync-compat: ## Refresh the copy of ../shared compatibility material under internal/test/compat/testdata
	rm -rf internal/test/compat/testdata/upstream-v1.10 internal/test/compat/testdata/upstream-v1.14 internal/test/compat/testdata/seeds
	cp -r $(SHARED)/compat/upstream-v1.10 $(SHARED)/compat/upstream-v1.14 internal/test/compat/testdata/
	mkdir -p internal/test/compat/testdata/seeds && cp $(SHARED)/seeds/*.md internal/test/compat/testdata/seeds/

##@ Build

VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
VERSION_PKG := github.com/capstan-dev/capstan/internal/version
LDFLAGS := -X $(VERSION_PKG).version=$(VERSION) -X $(VERSION_PKG).gitCommit=$(shell git rev-parse HEAD 2>/dev/null) \
	-X $(VERSION_PKG).buildDate=$(shell date -u +%Y-%m-%dT%H:%M:%SZ)

.PHONY: build
build: ## Build the binaries into bin/ (VERSION=v0.1.0 sets their version; git describe by default)
	go build -ldflags "$(LDFLAGS)" -o $(BIN)/ ./cmd/...

.PHONY: run
run: test-tools build ## The main job: start the embedded management cluster, create the workload cluster "demo" (2 workers) from the ClusterClass "local", stay up until Ctrl-C
	hack/run.sh

RELEASE_VERSION ?= v0.1.0

.PHONY: release-manifests
release-manifests: ## Render the providers' release artifacts into out/ as a clusterctl local repository (RELEASE_VERSION=v0.1.0)
	go run ./hack/release-manifests -version $(RELEASE_VERSION) -out out

##@ Release (docs/release.md)

IMAGE_PLATFORMS ?= linux/amd64,linux/arm64
IMAGE_REPO ?=
COSIGN_KEY ?= out/cosign.key
SOURCE_DATE_EPOCH ?= $(shell git log -1 --format=%ct 2>/dev/null || echo 0)
RELEASE_FLAGS = -version $(RELEASE_VERSION) -out out $(if $(IMAGE_REPO),-repo $(IMAGE_REPO))

.PHONY: image
image: ## Build the capstan image (IMAGE_PLATFORMS) without Docker into out/image (OCI layout), with its SBOM, signed with COSIGN_KEY (password COSIGN_PASSWORD; made when missing, unless pushing); push it when IMAGE_REPO is set
	go run ./hack/release image $(RELEASE_FLAGS) -platforms $(IMAGE_PLATFORMS) -key $(COSIGN_KEY) \
		-revision $(shell git rev-parse HEAD 2>/dev/null) -created $(SOURCE_DATE_EPOCH) $(if $(IMAGE_REPO),-push)

.PHONY: release
release: image ## Build the image, then write out/release: every provider's GitHub release assets with the image pinned by digest, checksums.txt, the SBOM
	go run ./hack/release directory $(RELEASE_FLAGS)

##@ Test

.PHONY: test
test: test-tools browser-tools ## Run every test, including integration tests against a real kube-apiserver and etcd, and the web view's in headless Chromium (E2E=1: with the long end-to-end parts on, as CI runs it)
	$(if $(E2E),$(foreach v,$(filter-out $(E2E_SKIP),$(E2E_VARS)),$(v)=1)) go test -timeout $(GO_TEST_TIMEOUT) $(GO_TEST_FLAGS) ./...
	cd api && go test $(GO_TEST_FLAGS) ./...

FUZZTIME ?= 1m
# Every parser of input that someone other than the machine's owner controls (docs/security.md).
FUZZ_TARGETS := ./internal/clusterctl/yamlprocessor:FuzzSubstitution ./internal/clusterctl/yamlprocessor:FuzzParse \
	./internal/clusterctl/repository:FuzzParseMetadata ./internal/clusterctl/components:FuzzNew \
	./internal/clusterctl/move:FuzzDirectory \
	./internal/topology/variables:FuzzVariables ./internal/topology:FuzzRender ./internal/topology:FuzzPatches \
	./internal/providers/kubeadm/bootstrap/userdata:FuzzRender \
	./internal/providers/local/nodeboot:FuzzParse ./internal/providers/local/nodeboot:FuzzParseClusterConfiguration \
	./internal/operator/source:FuzzReleaseFromConfigMap ./internal/operator/source:FuzzOCIRelease

.PHONY: fuzz
fuzz: ## Run each Go fuzz test for FUZZTIME (default 1m); `make test` runs only their seed corpus
	@for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; name=$${t##*:}; \
		echo "go test $$pkg -fuzz $$name -fuzztime $(FUZZTIME)"; \
		go test $$pkg -run '^$$' -fuzz "^$$name\$$" -fuzztime $(FUZZTIME) || exit 1; \
	done

.PHONY: bench
bench: test-tools ## Run the Go benchmarks
	go test -run '^$$' -bench . -benchmem -timeout $(GO_TEST_TIMEOUT) ./...

# The scale benchmark: N clusters (1 KubeadmControlPlane Machine + 1 worker each) created C at a time on
# the local provider's memory backend, idle for IDLE seconds, then deleted (docs/scale.md). CLASS=1 creates them
# from the local provider's ClusterClass "local" (the topology flavor) instead of the default flavor.
N ?= 1000
C ?= 50
IDLE ?= 300
.PHONY: bench-scale
bench-scale: test-tools ## Run the scale benchmark (N clusters, C at a time, IDLE seconds idle, CLASS=1 from the ClusterClass; see docs/scale.md)
	CAPSTAN_BENCH_SCALE=1 CAPSTAN_BENCH_N=$(N) CAPSTAN_BENCH_C=$(C) CAPSTAN_BENCH_IDLE=$(IDLE) CAPSTAN_BENCH_CLUSTERCLASS=$(CLASS) CAPSTAN_BENCH_IDLE_PROFILE=$(IDLE_PROFILE) CAPSTAN_BENCH_DELETE_PROFILE=$(DELETE_PROFILE) \
		CAPSTAN_BENCH_HEAP_PROFILE=$(HEAP_PROFILE) CAPSTAN_BENCH_IN_PROCESS=$(IN_PROCESS) CAPSTAN_BENCH_APISERVER_PROFILE=$(APISERVER_PROFILE) CAPSTAN_BENCH_APISERVER_DELETE_PROFILE=$(APISERVER_DELETE_PROFILE) \
		go test -count=1 -run '^$$' -bench '^BenchmarkScale$$' -benchtime 1x -timeout 180m -v $(if $(PROFILE),-cpuprofile $(PROFILE)) ./internal/providers/local/backend/memory/e2e/

# The environment variables that turn on the long end-to-end parts of tests (each part calls t.Skip with the
# reason without its variable): every CAPSTAN_E2E_* name a test file mentions, so that a new gated test is
# picked up by test-e2e without a change here.
# E2E_SKIP names the parts E2E=1 leaves off (none by default; for example E2E_SKIP=CAPSTAN_E2E_ROLLOUT).
E2E_SKIP ?=
E2E_VARS = $(sort $(shell grep -rhoE 'CAPSTAN_E2E_[A-Z0-9_]+' --include='*_test.go' internal cmd pkg 2>/dev/null))

.PHONY: test-e2e
test-e2e: ## Run every test, with the long end-to-end parts on (each CAPSTAN_E2E_* variable a test names, but E2E_SKIP's): what CI runs, `make test E2E=1`
	$(MAKE) test E2E=1

.PHONY: test-stress
test-stress: test-tools ## Run tests with every CPU kept busy by other processes (STRESS_PKGS, default ./...; STRESS_COUNT, default 3; STRESS_RUN; STRESS_HOGS)
	hack/test-stress.sh

# The chaos suite (docs/reliability.md): CHAOS_SEED replays a run, CHAOS_ROUNDS repeats each scenario,
# CHAOS_RUN picks scenarios (a regular expression of their names), CHAOS_REPORT writes the figures as JSON,
# CHAOS_FAULTS is the most faults a step plans (5 by default).
CHAOS_SEED ?=
CHAOS_ROUNDS ?=
CHAOS_FAULTS ?=
CHAOS_RUN ?=
CHAOS_REPORT ?=
CHAOS_ENV = CAPSTAN_CHAOS_SEED=$(CHAOS_SEED) CAPSTAN_CHAOS_ROUNDS=$(CHAOS_ROUNDS) CAPSTAN_CHAOS_FAULTS=$(CHAOS_FAULTS) CAPSTAN_CHAOS_REPORT=$(CHAOS_REPORT)

.PHONY: chaos
chaos: test-tools ## Run the chaos suite: every scenario, faults at random points from a printed seed (CHAOS_SEED, CHAOS_ROUNDS, CHAOS_FAULTS, CHAOS_RUN, CHAOS_REPORT; docs/reliability.md)
	CAPSTAN_CHAOS=full $(CHAOS_ENV) go test -count=1 -v -timeout 0 $(if $(CHAOS_RUN),-run 'TestChaos/($(CHAOS_RUN))$$') ./internal/chaos/

.PHONY: chaos-smoke
chaos-smoke: test-tools ## Run the chaos suite's smoke: the control plane scale scenario with a fixed seed (CI runs it)
	CAPSTAN_CHAOS=smoke $(CHAOS_ENV) go test -count=1 -v -timeout 40m ./internal/chaos/

.PHONY: test-e2e-rollout
test-e2e-rollout: test-tools ## Run the long kubeadm control plane end-to-end check: a 3-machine local control plane upgraded, a Machine replaced, scaled down
	CAPSTAN_E2E_ROLLOUT=1 go test -count=1 -v -timeout 60m -run TestHighlyAvailableControlPlane ./internal/providers/kubeadm/controlplane/e2e/

.PHONY: test-e2e-chained
test-e2e-chained: test-tools ## Run the chained upgrade end-to-end check: a Cluster of the class "local" moved from v1.35 to v1.37 in one change (builds bin/kube-apiserver-v1.35 first, so that the workload API server reports each minor)
	@hack/tools/build.sh kube-apiserver-v1.35 $(KUBERNETES_CHAINED_VERSION)
	CAPSTAN_E2E_CHAINED=1 go test -count=1 -v -timeout 30m -run TestChainedUpgradeLocal ./internal/providers/local/e2e/

.PHONY: test-e2e-operator
test-e2e-operator: test-tools ## Run the long provider operator end-to-end checks on the embedded cluster: a contract upgrade with pause, every spec.manager/spec.deployment field, the proposal's provider objects from an emulated GitHub
	CAPSTAN_E2E_OPERATOR=1 go test -count=1 -v -p 1 -timeout 40m -run TestOperatorInTheEmbeddedCluster ./internal/operator/e2e/

.PHONY: test-e2e-topology
test-e2e-topology: test-tools ## Run the long ClusterClass end-to-end checks: a Cluster of the class "local" upgraded, scaled, an MD added, re-labelled and removed, then steady; no double rollout while a hook blocks, a MachinePool topology; a topology Cluster moved
	CAPSTAN_E2E_TOPOLOGY=1 go test -count=1 -v -p 1 -timeout 45m -run 'TestClusterClassLocal|TestManagedTopology|TestMoveTopologyCluster' \
		./internal/providers/local/e2e/ ./internal/providers/local/e2e/managedtopology/ ./internal/providers/local/e2e/move/
