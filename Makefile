# pv-controller-manager. `make help` lists the targets.
SHELL := /usr/bin/env bash
.DEFAULT_GOAL := help

MODULE   := github.com/fastpv/pv-controller-manager
BIN_DIR  := $(CURDIR)/bin
VERSION  ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo v0.0.0-dev)
COMMIT   ?= $(shell git rev-parse --short HEAD 2>/dev/null || echo unknown)
UPSTREAM := $(shell tr -d '[:space:]' < patches/UPSTREAM)
LDFLAGS  := -s -w \
	-X $(MODULE)/pkg/version.Version=$(VERSION) \
	-X $(MODULE)/pkg/version.Upstream=$(UPSTREAM) \
	-X $(MODULE)/pkg/version.GitCommit=$(COMMIT)
GO_TEST_FLAGS ?=

# The Kubernetes release to build for: the default one (patches/UPSTREAM) in this tree, or another
# carried release (releases/<line>/, docs/releases.md) in its own generated tree, where every target
# below runs (hack/release-tree.sh). Its binaries are copied to bin/<release>/, images get a
# -k8s<release> tag.
KUBE_VERSION ?= $(UPSTREAM)
RELEASES := $(UPSTREAM) $(sort $(foreach f,$(wildcard releases/*/UPSTREAM),$(shell tr -d '[:space:]' < $(f))))

ifneq ($(KUBE_VERSION),$(UPSTREAM))
DELEGATED := $(filter-out help,$(shell sed -n 's/^\([a-zA-Z0-9_-]*\):.*\#\# .*/\1/p' $(firstword $(MAKEFILE_LIST))))
.PHONY: help $(DELEGATED)
help:
	@echo "KUBE_VERSION=$(KUBE_VERSION): every target runs in hack/release-tree.sh $(KUBE_VERSION)'s tree; make help lists them."
$(DELEGATED):
	@tree="$$(hack/release-tree.sh $(KUBE_VERSION))" && \
	GOWORK=off $(MAKE) -C "$$tree" $@ KUBE_VERSION=$(KUBE_VERSION) VERSION=$(VERSION) COMMIT=$(COMMIT) \
		IMAGE_TAG=$(VERSION)-k8s$(KUBE_VERSION:v%=%) IMAGE_TAR=$(CURDIR)/_output/image/pv-controller-manager-$(KUBE_VERSION).tar && \
	if [ -d "$$tree/bin" ]; then mkdir -p bin/$(KUBE_VERSION) && cp -p "$$tree"/bin/* bin/$(KUBE_VERSION)/; fi
else

.PHONY: help
help: ## List the targets
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z0-9_-]+:.*## / {printf "  %-18s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

.PHONY: build
build: ## Build bin/pv-controller-manager and the kubectl plugin bin/kubectl-pvc_why (static, version stamped)
	CGO_ENABLED=0 go build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN_DIR)/pv-controller-manager ./cmd/pv-controller-manager
	CGO_ENABLED=0 go build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN_DIR)/kubectl-pvc_why ./cmd/kubectl-pvc_why

IMAGE_REPO ?= docker.io/fastpv/pv-controller-manager
IMAGE_TAG  ?= $(VERSION)
IMAGE      ?= $(IMAGE_REPO):$(IMAGE_TAG)
IMAGE_TAR  ?= $(CURDIR)/_output/image/pv-controller-manager.tar
.PHONY: image
image: build ## Image tarball without a container engine (go-containerregistry): _output/image/pv-controller-manager.tar, IMAGE=...
	cd hack/tools/image && GOWORK=off CGO_ENABLED=0 go run . --tag $(IMAGE) \
		--file $(BIN_DIR)/pv-controller-manager=usr/local/bin/pv-controller-manager \
		--file $(BIN_DIR)/kubectl-pvc_why=usr/local/bin/kubectl-pvc_why \
		--out $(IMAGE_TAR) --version $(VERSION) --revision $(COMMIT)

.PHONY: verify-image
verify-image: image ## Import the image into a private containerd (apt-get containerd runc) and run --version in it
	IMAGE=$(IMAGE) IMAGE_TAR=$(IMAGE_TAR) WANT_VERSION=$(VERSION) hack/check-image.sh

.PHONY: rollout-tool
rollout-tool: ## Build bin/pv-rollout (static), the manifest editor behind hack/rollout.sh
	CGO_ENABLED=0 go build -trimpath -o $(BIN_DIR)/pv-rollout ./cmd/pv-rollout

# client-go's detectors, on in unit tests and the model torture (docs/torture.md): an informer's
# object mutated in place (a fast path that forgets to copy) panics; a watch-list answer that
# differs from a list fails. Not yet in test-integration and e2e: with the mutation detector on,
# TestRetroactiveStorageClassAssignment hung in 2 of 4 runs under load, with no binder goroutine
# left in the dump (docs/torture.md, "Open"); e2e waits until that is understood.
DETECTORS := KUBE_CACHE_MUTATION_DETECTOR=true KUBE_WATCHLIST_INCONSISTENCY_DETECTOR=true

.PHONY: test
test: ## Unit tests: upstream's tests on the patched copy and our packages (-race), then the short model torture
	$(DETECTORS) go test -race $(GO_TEST_FLAGS) ./pkg/... ./cmd/... ./deploy/...
	cd hack/tools/benchreport && GOWORK=off go test $(GO_TEST_FLAGS) .
	cd hack/tools/kind-lb && GOWORK=off go test -race $(GO_TEST_FLAGS) .
	cd hack/tools/runc-dropcap && GOWORK=off go test -race $(GO_TEST_FLAGS) .
	$(MAKE) --no-print-directory torture-short

# The model torture (test/torture, docs/torture.md): random workloads and API faults against ours
# and upstream's binder of this release, in virtual time. TORTURE_FIRST_SEED=S starts at seed S
# (default: from the clock, printed); a failing seed prints the command that replays it.
# make test runs fixed seeds (1-400, then 401-440 under -race), so that a CI run fails on a
# change, not on the draw; make torture draws from the clock.
TORTURE_SEEDS ?= 400
TORTURE_RACE_SEEDS ?= 40
TORTURE_DURATION ?= 30m
.PHONY: torture-short
torture-short: ## The model torture as make test runs it: seeds 1-TORTURE_SEEDS, then TORTURE_RACE_SEEDS more under -race
	$(DETECTORS) TORTURE_FIRST_SEED=1 TORTURE_SEEDS=$(TORTURE_SEEDS) go test -count=1 -timeout 20m -run '^TestTorture(Regressions)?$$' ./test/torture/
	$(DETECTORS) TORTURE_FIRST_SEED=$$(($(TORTURE_SEEDS)+1)) TORTURE_SEEDS=$(TORTURE_RACE_SEEDS) go test -race -count=1 -timeout 20m -run '^TestTorture$$' ./test/torture/

.PHONY: torture
torture: ## The model torture for TORTURE_DURATION (default 30m); report in _output/torture/report.md
	mkdir -p _output/torture
	$(DETECTORS) TORTURE_DURATION=$(TORTURE_DURATION) TORTURE_REPORT=$(CURDIR)/_output/torture/report.md \
		go test -count=1 -timeout 0 -v -run '^TestTorture$$' ./test/torture/ | tee _output/torture/torture.log

INTEGRATION_FLAGS ?=
.PHONY: test-integration
test-integration: ## Upstream's PV integration tests (+ ours) on the patched controller, in-process apiserver + our etcd: upstream settings, then 15s/1000 objects
	hack/build-tools.sh etcd
	PATH="$(CURDIR)/_output/tools/bin:$$PATH" go test -count=1 -timeout 40m $(INTEGRATION_FLAGS) ./test/integration/...
	PATH="$(CURDIR)/_output/tools/bin:$$PATH" KUBE_INTEGRATION_PV_SYNC_PERIOD=15s KUBE_INTEGRATION_PV_OBJECTS=1000 \
		go test -count=1 -timeout 40m $(INTEGRATION_FLAGS) ./test/integration/...

.PHONY: verify
verify: ## Vendored copy matches upstream+patches, gofmt, go vet, go.mod tidy
	hack/verify-all.sh

.PHONY: verify-releases
verify-releases: ## make verify for every other carried release (releases/*, docs/releases.md)
	@for v in $(filter-out $(UPSTREAM),$(RELEASES)); do echo "=== verify $$v"; $(MAKE) --no-print-directory verify KUBE_VERSION=$$v || exit 1; done

.PHONY: test-releases
test-releases: ## make test (unit tests, -race) for every other carried release
	@for v in $(filter-out $(UPSTREAM),$(RELEASES)); do echo "=== test $$v"; $(MAKE) --no-print-directory test KUBE_VERSION=$$v || exit 1; done

.PHONY: rebase
rebase: ## Carry the series to a new upstream tag: make rebase TO=v1.36.4 (hack/rebase.sh)
	hack/rebase.sh $(TO)

.PHONY: update
update: ## Regenerate the vendored controller from patches/UPSTREAM + patches/series
	hack/update-vendored.sh

.PHONY: clean
clean: ## Remove build output
	rm -rf $(BIN_DIR) _output

.PHONY: tools
tools: ## Build etcd, kube-apiserver, KCM, kube-scheduler, kwok, kwokctl, ginkgo from Go modules (cached)
	hack/build-tools.sh

.PHONY: local-up
local-up: ## Local kwokctl cluster (KCM without its binder) + pv-controller-manager; ARM=upstream for KCM's binder
	hack/local-up.sh

.PHONY: local-down
local-down: ## Stop pv-controller-manager and delete the local cluster
	hack/local-down.sh

DEMO_COUNT ?= 300
DEMO_CONCURRENCY ?= 50
DEMO_QPS ?= 1000
.PHONY: demo
demo: ## The seed workload on the local cluster: DEMO_COUNT pre-bound PV+PVC+Pod, progress and latency summary
	KUBE_API_QPS=$(DEMO_QPS) KUBE_API_BURST=$(DEMO_QPS) hack/local-up.sh
	go build -o $(BIN_DIR)/pv-load ./cmd/pv-load
	$(BIN_DIR)/pv-load --kubeconfig _output/local/$${CLUSTER_NAME:-pv-local}/kubeconfig --scenario prebound \
		--with-pods --count $(DEMO_COUNT) --concurrency $(DEMO_CONCURRENCY)

.PHONY: bench
bench: ## Side-by-side benchmark, upstream KCM vs ours, fresh cluster per arm, write ceiling, report.md + CDF PNGs (hack/bench.sh)
	hack/bench.sh

.PHONY: bench-quick
bench-quick: ## Small-N smoke run of the benchmark (100 pairs) into _output/bench-quick
	hack/bench.sh --quick

E2E_FLAGS ?= --label-filter='!slow && !node'
.PHONY: e2e
e2e: ## ginkgo e2e suite on the local cluster (sync period 5m, so only the fast path can bind late PVs); E2E_FLAGS=... to select
	SYNC_PERIOD=5m hack/local-up.sh
	go build -o $(BIN_DIR)/pv-load ./cmd/pv-load
	go build -o $(BIN_DIR)/kubectl-pvc_why ./cmd/kubectl-pvc_why
	hack/build-tools.sh ginkgo
	cd test/e2e && GOWORK=off KUBECONFIG=$(CURDIR)/_output/local/$${CLUSTER_NAME:-pv-local}/kubeconfig \
		E2E_LONG_SYNC_PERIOD=1 E2E_METRICS_URL=https://127.0.0.1:$${SECURE_PORT:-10267}/metrics E2E_PV_LOAD=$(BIN_DIR)/pv-load \
		E2E_PVC_WHY=$(BIN_DIR)/kubectl-pvc_why \
		E2E_PVCM_BINARY=$(BIN_DIR)/pv-controller-manager E2E_PVCM_PIDFILE=$(CURDIR)/_output/local/$${CLUSTER_NAME:-pv-local}/pv-controller-manager.pid \
		E2E_PVCM_KUBECONFIG=$(CURDIR)/_output/kwok/clusters/$${CLUSTER_NAME:-pv-local}/kubeconfig.yaml \
		$(CURDIR)/_output/tools/bin/ginkgo -v --timeout=40m $(E2E_FLAGS) .

.PHONY: e2e-slow
e2e-slow: ## The whole e2e suite, slow specs included (1000 pairs)
	$(MAKE) e2e E2E_FLAGS="--label-filter='!node'"

.PHONY: e2e-kind
e2e-kind: ## e2e on kind, 3 control-plane nodes + 1 worker, after the rollout node by node; Docker from apt, node image built offline (hack/e2e-kind.sh)
	hack/e2e-kind.sh

.PHONY: e2e-node
e2e-node: ## Static-pod rollout on a real kubelet + containerd (root; apt-get): KCM static pod, rollout enable/disable, guard, liveness
	hack/e2e-node.sh

.PHONY: e2e-node-down
e2e-node-down: ## Stop what e2e-node left running (E2E_NODE_KEEP=1)
	hack/e2e-node.sh down

endif
