# pv-controller-manager. `make help` lists the targets.
SHELL := /usr/bin/env bash
.DEFAULT_GOAL := help

MODULE   := github.com/fastpv/pv-controller-manager
# VERSION (the file) names the release being prepared (semver, CHANGELOG.md has its entry). A build
# of the commit tagged with it is that release; any other build is a dev build of it:
# v0.1.0-dev.g<commit>[.dirty] (a valid semver pre-release and image tag).
COMMIT          ?= $(shell git rev-parse --short HEAD 2>/dev/null || echo unknown)
RELEASE_VERSION := $(shell tr -d '[:space:]' < VERSION)
VERSION  ?= $(shell if [ "$$(git describe --tags --exact-match 2>/dev/null)" = "$(RELEASE_VERSION)" ] && git diff --quiet HEAD 2>/dev/null; \
	then echo "$(RELEASE_VERSION)"; else echo "$(RELEASE_VERSION)-dev.g$(COMMIT)$$(git diff --quiet HEAD 2>/dev/null || echo .dirty)"; fi)
GO_TEST_FLAGS ?=

# The Kubernetes release to build for (docs/maintainers/patches-and-releases.md): the default line's
# tag (releases/DEFAULT), or another carried release, which builds in this same tree: go gets the
# line's module files (-modfile) and its generated files (-overlay, hack/release/release-overlay.sh,
# run before every target). Its binaries go to bin/<release>, its upstream tools to
# _output/releases/<release>/tools/bin, images get a -k8s<release> tag.
DEFAULT_LINE := $(shell tr -d '[:space:]' < releases/DEFAULT)
UPSTREAM     := $(shell tr -d '[:space:]' < releases/$(DEFAULT_LINE)/UPSTREAM)
RELEASES     := $(sort $(foreach f,$(wildcard releases/*/UPSTREAM),$(shell tr -d '[:space:]' < $(f))))
# A line with a PREVIEW file is on an upstream pre-release (the file says why): checked like every
# other line (verify-releases, test-releases), left out of make dist until upstream's release is out.
PREVIEW_RELEASES := $(sort $(foreach d,$(wildcard releases/*/PREVIEW),$(shell tr -d '[:space:]' < $(dir $(d))UPSTREAM)))
CHECKED_RELEASES := $(RELEASES)
SHIPPED_RELEASES := $(filter-out $(PREVIEW_RELEASES),$(RELEASES))
KUBE_VERSION ?= $(UPSTREAM)
ifeq ($(KUBE_VERSION),$(UPSTREAM))
BIN_DIR      := $(CURDIR)/bin
TOOLS_BIN    := $(CURDIR)/_output/tools/bin
IMAGE_TAG    := $(VERSION)-k8s$(UPSTREAM:v%=%)
IMAGE_TAR    := $(CURDIR)/_output/image/pv-controller-manager.tar
GO_FLAGS     :=
RELEASE_GEN  :=
else
LINE         := $(shell KUBE_VERSION=$(KUBE_VERSION) bash -c 'source hack/lib.sh && echo "$$RELEASE_LINE"')
ifeq ($(LINE),)
$(error KUBE_VERSION=$(KUBE_VERSION) is not a carried release: $(RELEASES))
endif
BIN_DIR      := $(CURDIR)/bin/$(KUBE_VERSION)
TOOLS_BIN    := $(CURDIR)/_output/releases/$(KUBE_VERSION)/tools/bin
IMAGE_TAG    := $(VERSION)-k8s$(KUBE_VERSION:v%=%)
IMAGE_TAR    := $(CURDIR)/_output/image/pv-controller-manager-$(KUBE_VERSION).tar
GO_FLAGS     := -modfile=$(CURDIR)/releases/$(LINE)/go.mod -overlay=$(CURDIR)/_output/releases/$(KUBE_VERSION)/overlay.json
RELEASE_GEN  := release-gen
export GOWORK := off
# A line whose release needs a newer Go than the default line's names it on its go.mod's toolchain
# line (v1.38: go1.27.3); the go command fetches that toolchain from the module proxy. Other lines
# keep the local Go (line_toolchain in hack/release/series.sh does the same for the scripts).
LINE_TOOLCHAIN := $(shell sed -n 's/^toolchain[[:space:]]*//p' releases/$(LINE)/go.mod)
ifneq ($(LINE_TOOLCHAIN),)
export GOTOOLCHAIN := $(LINE_TOOLCHAIN)
endif
endif
export KUBE_VERSION BIN_DIR TOOLS_BIN
LDFLAGS  := -s -w \
	-X $(MODULE)/pkg/version.Version=$(VERSION) \
	-X $(MODULE)/pkg/version.Upstream=$(KUBE_VERSION) \
	-X $(MODULE)/pkg/version.GitCommit=$(COMMIT)

.PHONY: help
help: ## List the targets
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z0-9_-]+:.*## / {printf "  %-18s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

.PHONY: release-gen
release-gen: # the generated files of KUBE_VERSION's line (a prerequisite when it is not the default)
	@hack/release/release-overlay.sh $(KUBE_VERSION) >/dev/null

.PHONY: build
build: $(RELEASE_GEN) ## Build bin/pv-controller-manager and the kubectl plugin bin/kubectl-pvc_why (static, version stamped; bin/<release>/ for another KUBE_VERSION)
	CGO_ENABLED=0 go build $(GO_FLAGS) -trimpath -ldflags '$(LDFLAGS)' -o $(BIN_DIR)/pv-controller-manager ./cmd/pv-controller-manager
	CGO_ENABLED=0 go build $(GO_FLAGS) -trimpath -ldflags '$(LDFLAGS)' -o $(BIN_DIR)/kubectl-pvc_why ./cmd/kubectl-pvc_why

.PHONY: plugin
plugin: $(RELEASE_GEN) ## Build only the kubectl plugin bin/kubectl-pvc_why (GOOS and GOARCH from the environment)
	CGO_ENABLED=0 go build $(GO_FLAGS) -trimpath -ldflags '$(LDFLAGS)' -o $(BIN_DIR)/kubectl-pvc_why ./cmd/kubectl-pvc_why

DIST_VERSION ?= $(VERSION)
.PHONY: dist
dist: release-notes ## Release archives for every carried release, linux/darwin amd64/arm64 plugin, OCI images, SHA256SUMS, krew manifest: _output/dist/<version>/ (hack/release/dist.sh)
	VERSION=$(DIST_VERSION) RELEASES="$(SHIPPED_RELEASES)" UPSTREAM=$(UPSTREAM) IMAGE_REPO=$(IMAGE_REPO) hack/release/dist.sh

.PHONY: release-notes
release-notes: ## Print CHANGELOG.md's entry for VERSION; fails when it has none (hack/release/release-notes.sh)
	@hack/release/release-notes.sh $(RELEASE_VERSION)

# Image names: REGISTRY is where you push them (no registry publishes ours). The default names a
# registry that resolves nowhere, so an image that was not pushed or imported fails to pull.
REGISTRY   ?= registry.example
IMAGE_REPO ?= $(REGISTRY)/pv-controller-manager
IMAGE      ?= $(IMAGE_REPO):$(IMAGE_TAG)
.PHONY: image
image: build ## Image tarball without a container engine (go-containerregistry): _output/image/pv-controller-manager.tar, IMAGE=...
	cd hack/cmd/image && GOWORK=off CGO_ENABLED=0 GOFLAGS= go run . --tag $(IMAGE) \
		--file $(BIN_DIR)/pv-controller-manager=usr/local/bin/pv-controller-manager \
		--file $(BIN_DIR)/kubectl-pvc_why=usr/local/bin/kubectl-pvc_why \
		--out $(IMAGE_TAR) --version $(VERSION) --revision $(COMMIT)

# make push REGISTRY=registry.example.com/team: pushes make image's tarball with crane (built from
# go-containerregistry's module, hack/cluster/build-tools.sh) and prints IMAGE@sha256:..., the
# reference to put in the static pod (docs/install.md). crane reads registry credentials from
# ~/.docker/config.json (docker login); PUSH_FLAGS=--insecure for a registry served over plain HTTP.
PUSH_FLAGS ?=
.PHONY: push
push: image ## Push the image to REGISTRY (crane) and print its digest reference: make push REGISTRY=host/path
	@hack/cluster/build-tools.sh crane >/dev/null
	@$(TOOLS_BIN)/crane push $(PUSH_FLAGS) $(IMAGE_TAR) $(IMAGE)

.PHONY: verify-image
verify-image: image ## Import the image into a private containerd (apt-get containerd runc) and run --version in it
	IMAGE=$(IMAGE) IMAGE_TAR=$(IMAGE_TAR) WANT_VERSION=$(VERSION) hack/e2e/check-image.sh

.PHONY: rollout-tool
rollout-tool: $(RELEASE_GEN) ## Build bin/pv-rollout (static), the manifest editor behind deploy/rollout.sh
	CGO_ENABLED=0 go build $(GO_FLAGS) -trimpath -o $(BIN_DIR)/pv-rollout ./cmd/pv-rollout

# client-go's detectors (docs/maintainers/torture.md), on in unit tests, the model torture, the
# integration tests, e2e (the test process and the binder) and the cluster torture (its binders: a
# replica that panics is a violation): an informer's object mutated in place (a fast path that
# forgets to copy) panics; a watch-list answer that differs from a list fails.
DETECTORS := KUBE_CACHE_MUTATION_DETECTOR=true KUBE_WATCHLIST_INCONSISTENCY_DETECTOR=true

TESTED_TOOL_MODULES := $(shell bash -c 'source hack/lib.sh && echo "$${TESTED_TOOL_MODULES[@]}"')
# TEST_RACE= runs make test (and torture-short) without the race detector: CI's check of the other
# releases (.ci/run), where the race build of each k8s.io/kubernetes tree costs ~5 min cold.
TEST_RACE ?= -race
.PHONY: test
test: $(RELEASE_GEN) ## Unit tests: upstream's tests on the patched copy, our packages and the harness's (-race; TEST_RACE= without), then the short model torture
	$(DETECTORS) go test $(GO_FLAGS) $(TEST_RACE) $(GO_TEST_FLAGS) ./pkg/... ./cmd/... ./deploy/... ./test/upstreambugs/... \
		./test/invariants/... ./test/harness/... ./test/torture/cluster/...
	$(DETECTORS) go test $(GO_FLAGS) $(TEST_RACE) $(GO_TEST_FLAGS) -skip '^TestTorture(Regressions)?$$' ./test/torture/
	@[ -n "$(GO_FLAGS)" ] || for m in $(TESTED_TOOL_MODULES); do echo "go test $$m"; (cd $$m && GOWORK=off go test $(TEST_RACE) $(GO_TEST_FLAGS) .) || exit 1; done
	$(MAKE) --no-print-directory torture-short

# The model torture (test/torture, docs/maintainers/torture.md): random workloads and API faults against ours
# and upstream's binder of this release, in virtual time. TORTURE_FIRST_SEED=S starts at seed S
# (default: from the clock, printed); a failing seed prints the command that replays it.
# make test runs fixed seeds (1-400, then 401-440 under -race), so that a CI run fails on a
# change, not on the draw; make torture draws from the clock.
TORTURE_SEEDS ?= 400
TORTURE_RACE_SEEDS ?= 40
TORTURE_DURATION ?= 30m
.PHONY: torture-short
torture-short: $(RELEASE_GEN) ## The model torture as make test runs it: seeds 1-TORTURE_SEEDS, then TORTURE_RACE_SEEDS more under -race (not with TEST_RACE=)
	$(DETECTORS) TORTURE_FIRST_SEED=1 TORTURE_SEEDS=$(TORTURE_SEEDS) go test $(GO_FLAGS) -count=1 -timeout 20m -run '^TestTorture(Regressions)?$$' ./test/torture/
	$(if $(TEST_RACE),$(DETECTORS) TORTURE_FIRST_SEED=$$(($(TORTURE_SEEDS)+1)) TORTURE_SEEDS=$(TORTURE_RACE_SEEDS) go test $(GO_FLAGS) -race -count=1 -timeout 20m -run '^TestTorture$$' ./test/torture/,@echo "torture-short: no -race seeds (TEST_RACE is empty)")

.PHONY: torture
torture: $(RELEASE_GEN) ## The model torture for TORTURE_DURATION (default 30m); report in _output/torture/report.md
	mkdir -p _output/torture
	$(DETECTORS) TORTURE_DURATION=$(TORTURE_DURATION) TORTURE_REPORT=$(CURDIR)/_output/torture/report.md \
		go test $(GO_FLAGS) -count=1 -timeout 0 -v -run '^TestTorture$$' ./test/torture/ | tee _output/torture/torture.log

# CI's draw of new seeds (.ci/run): 2 minutes from the clock, after make test's fixed seeds. A
# failing seed fails CI with its replay command in the log (and _output/torture/report.md).
TORTURE_CI_DURATION ?= 2m
.PHONY: torture-ci
torture-ci: ## The model torture for TORTURE_CI_DURATION (2m) on seeds from the clock, as CI runs it
	$(MAKE) --no-print-directory torture TORTURE_DURATION=$(TORTURE_CI_DURATION)

.PHONY: torture-cluster
torture-cluster: $(RELEASE_GEN) ## The cluster torture: both arms behind a fault proxy on a local cluster, replicas, apiserver and etcd killed (TORTURE_CLUSTER_DURATION=5m per arm); _output/torture-cluster/report.md
	$(DETECTORS) hack/torture/torture-cluster.sh

.PHONY: torture-cluster-short
# CI checks ours alone (TORTURE_CLUSTER_SHORT_ARMS=upstream,ours adds upstream's arm to compare with).
TORTURE_CLUSTER_SHORT_ARMS ?= ours
torture-cluster-short: $(RELEASE_GEN) ## The cluster torture as CI runs it: ours, 90 s of faults (the control plane crashed every ~30 s), seed from the clock, no recovery runs
	$(DETECTORS) TORTURE_ARMS=$(TORTURE_CLUSTER_SHORT_ARMS) TORTURE_CLUSTER_DURATION=90s TORTURE_FLAGS="--mode=torture --restart-every=30s --compact-every=20s $(TORTURE_FLAGS)" hack/torture/torture-cluster.sh

INTEGRATION_FLAGS ?=
# INTEGRATION_STRESS=0 runs upstream's settings only (CI; the 15s/1000 pass is a release-time check).
INTEGRATION_STRESS ?= 1
.PHONY: test-integration
test-integration: $(RELEASE_GEN) ## Upstream's PV integration tests (+ ours) on the patched controller, in-process apiserver + our etcd: upstream settings, then 15s/1000 objects (INTEGRATION_STRESS=0: not)
	hack/cluster/build-tools.sh etcd
	PATH="$(TOOLS_BIN):$$PATH" $(DETECTORS) go test $(GO_FLAGS) -count=1 -timeout 40m $(INTEGRATION_FLAGS) ./test/integration/...
	[ "$(INTEGRATION_STRESS)" = 0 ] || PATH="$(TOOLS_BIN):$$PATH" $(DETECTORS) KUBE_INTEGRATION_PV_SYNC_PERIOD=15s KUBE_INTEGRATION_PV_OBJECTS=1000 \
		go test $(GO_FLAGS) -count=1 -timeout 40m $(INTEGRATION_FLAGS) ./test/integration/...

.PHONY: verify
verify: ## Vendored copy matches upstream+patches, gofmt, go vet, go.mod tidy, docs' links and wording (hack/verify; another KUBE_VERSION: hack/verify/release-line.sh)
ifeq ($(GO_FLAGS),)
	hack/verify/verify-all.sh
else
	hack/verify/release-line.sh $(KUBE_VERSION)
endif

MONITORING_SELECTOR ?= job="pv-controller-manager"

.PHONY: monitoring
monitoring: ## Regenerate deploy/monitoring (alerts, dashboard) from hack/monitoring; MONITORING_SELECTOR='job="pv-controller-manager"'
	cd hack/monitoring && GOWORK=off go run . -out ../../deploy/monitoring -selector '$(MONITORING_SELECTOR)'

.PHONY: recipes
recipes: ## Regenerate deploy/cluster-api/kubeadm-control-plane.yaml from deploy/ (hack/cmd/capi; Cluster API's types)
	cd hack/cmd/capi && GOWORK=off go run .

.PHONY: verify-releases
verify-releases: ## make verify for every other carried release (releases/, docs/maintainers/patches-and-releases.md)
	@for v in $(filter-out $(UPSTREAM),$(CHECKED_RELEASES)); do echo "=== verify $$v"; $(MAKE) --no-print-directory verify KUBE_VERSION=$$v || exit 1; done

.PHONY: test-releases
# The model is the same on every line; what differs is upstream's code under it, so the other lines
# run fewer fixed seeds than the default line (RELEASES_TORTURE_SEEDS=400 at release time).
RELEASES_TORTURE_SEEDS ?= 100
test-releases: ## make test (unit tests, -race) for every other carried release, RELEASES_TORTURE_SEEDS (100) model seeds; CI runs it with TEST_RACE= (no race build per tree)
	@for v in $(filter-out $(UPSTREAM),$(CHECKED_RELEASES)); do echo "=== test $$v"; $(MAKE) --no-print-directory test KUBE_VERSION=$$v TEST_RACE=$(TEST_RACE) TORTURE_SEEDS=$(RELEASES_TORTURE_SEEDS) || exit 1; done

.PHONY: rebase
rebase: ## Carry the series to a new upstream tag: make rebase TO=v1.36.4 (hack/release/rebase.sh)
	hack/release/rebase.sh $(TO)

.PHONY: move-line
move-line: ## Move a release line to a new upstream tag and check it (rebase, seams, verify, unit tests, 100 model seeds): make move-line TO=v1.38.0 (hack/release/move-line.sh)
	hack/release/move-line.sh $(TO)

.PHONY: update
update: ## Regenerate the vendored controller and the integration port of the default line (releases/DEFAULT) from patches/
	hack/release/update-vendored.sh
	hack/release/update-integration.sh

.PHONY: clean
clean: ## Remove build output
	rm -rf bin _output

.PHONY: tools
tools: ## Build etcd, kube-apiserver, KCM, kube-scheduler, kwok, kwokctl, ginkgo from Go modules (cached)
	hack/cluster/build-tools.sh

.PHONY: local-up
local-up: $(RELEASE_GEN) ## Local kwokctl cluster (KCM without its binder) + pv-controller-manager; ARM=upstream for KCM's binder
	hack/cluster/local-up.sh

.PHONY: local-down
local-down: ## Stop pv-controller-manager and delete the local cluster
	hack/cluster/local-down.sh

DEMO_COUNT ?= 300
DEMO_CONCURRENCY ?= 50
DEMO_QPS ?= 1000
.PHONY: demo
demo: $(RELEASE_GEN) ## The seed workload on the local cluster: DEMO_COUNT pre-bound PV+PVC+Pod, progress and latency summary
	KUBE_API_QPS=$(DEMO_QPS) KUBE_API_BURST=$(DEMO_QPS) hack/cluster/local-up.sh
	go build $(GO_FLAGS) -o $(BIN_DIR)/pv-load ./test/cmd/pv-load
	$(BIN_DIR)/pv-load --kubeconfig _output/local/$${CLUSTER_NAME:-pv-local}/kubeconfig --scenario prebound \
		--with-pods --count $(DEMO_COUNT) --concurrency $(DEMO_CONCURRENCY)

.PHONY: bench
bench: $(RELEASE_GEN) ## Side-by-side benchmark, upstream KCM vs ours, fresh cluster per arm, write ceiling, report.md + CDF PNGs (hack/bench/bench.sh)
	hack/bench/bench.sh

.PHONY: bench-quick
bench-quick: $(RELEASE_GEN) ## Small-N smoke run of the benchmark (100 pairs) into _output/bench-quick
	hack/bench/bench.sh --quick

E2E_FLAGS ?= --label-filter='!slow && !node'
.PHONY: e2e
e2e: $(RELEASE_GEN) ## ginkgo e2e suite on the local cluster (sync period 5m, so only the fast path can bind late PVs); E2E_FLAGS=... to select
	SYNC_PERIOD=5m PVCM_ENV="$(DETECTORS) $(PVCM_ENV)" hack/cluster/local-up.sh
	go build $(GO_FLAGS) -o $(BIN_DIR)/pv-load ./test/cmd/pv-load
	go build $(GO_FLAGS) -o $(BIN_DIR)/kubectl-pvc_why ./cmd/kubectl-pvc_why
	hack/cluster/build-tools.sh ginkgo
	cd test/e2e && $(DETECTORS) GOWORK=off GOFLAGS= KUBECONFIG=$(CURDIR)/_output/local/$${CLUSTER_NAME:-pv-local}/kubeconfig \
		E2E_LONG_SYNC_PERIOD=1 E2E_METRICS_URL=https://127.0.0.1:$${SECURE_PORT:-10267}/metrics E2E_PV_LOAD=$(BIN_DIR)/pv-load \
		E2E_PVC_WHY=$(BIN_DIR)/kubectl-pvc_why \
		E2E_PVCM_BINARY=$(BIN_DIR)/pv-controller-manager E2E_PVCM_PIDFILE=$(CURDIR)/_output/local/$${CLUSTER_NAME:-pv-local}/pv-controller-manager.pid \
		E2E_PVCM_KUBECONFIG=$(CURDIR)/_output/local/$${CLUSTER_NAME:-pv-local}/pv-controller-manager.kubeconfig \
		E2E_BINDER_IDENTITY=$${BINDER_IDENTITY:-binder} \
		$(TOOLS_BIN)/ginkgo -v --timeout=40m $(E2E_FLAGS) .

.PHONY: e2e-shadow
e2e-shadow: $(RELEASE_GEN) ## Shadow mode (--shadow) beside KCM's binder, on its own local cluster with an audit log: outcomes, events, nothing stored
	CLUSTER_NAME=pv-shadow SECURE_PORT=10268 ARM=upstream SHADOW=1 AUDIT=1 PVCM_ENV="$(DETECTORS) $(PVCM_ENV)" hack/cluster/local-up.sh
	go build $(GO_FLAGS) -o $(BIN_DIR)/kubectl-pvc_why ./cmd/kubectl-pvc_why
	hack/cluster/build-tools.sh ginkgo
	cd test/e2e && $(DETECTORS) GOWORK=off GOFLAGS= KUBECONFIG=$(CURDIR)/_output/local/pv-shadow/kubeconfig E2E_SHADOW=1 \
		E2E_METRICS_URL=https://127.0.0.1:10268/metrics E2E_AUDIT_LOG=$(CURDIR)/_output/kwok/clusters/pv-shadow/logs/audit.log E2E_PVC_WHY=$(BIN_DIR)/kubectl-pvc_why \
		$(TOOLS_BIN)/ginkgo -v --timeout=10m --label-filter='shadow || monitoring' .
	CLUSTER_NAME=pv-shadow hack/cluster/local-down.sh

.PHONY: bench-shadow
bench-shadow: $(RELEASE_GEN) build ## Shadow mode beside KCM's binder at COUNT (1000) claims per scenario: agreement, lead, dry-run writes per claim, KCM's time alone and beside it; _output/bench-shadow/report.md
	hack/bench/bench-shadow.sh

.PHONY: bench-scale
bench-scale: $(RELEASE_GEN) build ## A binder on a large settled cluster, both arms on one population (RESIDENT=10000, FRESH, IDLE=5m, FAILOVER=1): sync time, fresh binds, idle CPU, memory, failover; _output/bench-scale/
	hack/bench/bench-scale.sh

.PHONY: e2e-slow
e2e-slow: ## The whole e2e suite, slow specs included (1000 pairs)
	$(MAKE) e2e E2E_FLAGS="--label-filter='!node'"

.PHONY: e2e-kind
e2e-kind: $(RELEASE_GEN) ## e2e on kind, 3 control-plane nodes + 1 worker, after the rollout node by node, then a cluster from the kubeadm recipe; Docker from apt, node image built offline (hack/e2e/e2e-kind.sh)
	hack/e2e/e2e-kind.sh

# CI's part of make e2e-kind: the same cluster, the rollout from the registry, the suite, upstream's
# storage e2e (ci specs), rollback and uninstall; the upgrade and the kubeadm recipe's cluster scraped
# by Prometheus run at release time (docs/maintainers/patches-and-releases.md).
.PHONY: e2e-kind-short
e2e-kind-short: $(RELEASE_GEN) ## CI's make e2e-kind: rollout from the registry, suite, upstream's ci specs, rollback, uninstall (no upgrade, no kubeadm-recipe cluster)
	E2E_KIND_CLUSTERS=existing E2E_KIND_PASSES="rollout suite upstream disable" hack/e2e/e2e-kind.sh

# Kubernetes' own storage e2e (k8s.io/kubernetes/test/e2e at the line's tag, unmodified; the specs in
# test/upstream-e2e/specs.txt) on make e2e-kind's cluster shape, both binders: KCM's first, then ours
# after the rollout; the parity table in _output/upstream-e2e/parity.md fails the target when a spec
# passed with KCM's binder and not with ours (docs/maintainers/upstream-e2e.md). make e2e-kind runs
# the ci specs with ours alone.
.PHONY: e2e-upstream
e2e-upstream: $(RELEASE_GEN) ## Upstream's storage e2e on kind with KCM's binder, then with ours; parity table _output/upstream-e2e/parity.md
	E2E_KIND_CLUSTERS=existing E2E_KIND_PASSES="upstream-kcm rollout upstream disable" E2E_UPSTREAM_SET=$${E2E_UPSTREAM_SET:-full} hack/e2e/e2e-kind.sh

.PHONY: e2e-node
e2e-node: $(RELEASE_GEN) ## Static-pod rollout on a real kubelet + containerd (root; apt-get): KCM static pod, rollout enable/disable, guard, liveness
	hack/e2e/e2e-node.sh

.PHONY: e2e-node-down
e2e-node-down: ## Stop what e2e-node left running (E2E_NODE_KEEP=1)
	hack/e2e/e2e-node.sh down
