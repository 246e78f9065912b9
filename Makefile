# Scriptorium — every entry point a developer or CI needs. `make help` lists them.
#
# Node.js 24 is required. When the machine's `node` is older, tools/ensure-node.sh installs
# Node 24 from the npm registry into a cache folder outside the repo and we put it first on PATH.
SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

export SCRIPTORIUM_CACHE ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/scriptorium
NODE_BIN := $(shell bash tools/ensure-node.sh)
export PATH := $(NODE_BIN):$(CURDIR)/node_modules/.bin:$(PATH)

DEPS_STAMP := node_modules/.scriptorium-deps
# A timed step (tools/build/lib.sh): one `step:` line, and a row in $SCRIPTORIUM_STEPS when CI sets it.
STEP := bash tools/build/step.sh
WORKSPACE_MANIFESTS := package.json package-lock.json $(wildcard packages/*/package.json services/*/package.json operator/package.json harness/package.json)

.PHONY: help deps dev test test-unit test-integration lint format typecheck bench crds crds-check \
        chart-lint kube-bins tlog-bins scorpio fuzzer images e2e-kind clean kubectl-plugin web ci-warm

help: ## List the targets
	@grep -hE '^[a-zA-Z0-9_-]+:.*## ' $(MAKEFILE_LIST) | sort | awk -F':.*## ' '{printf "  \033[1m%-18s\033[0m %s\n", $$1, $$2}'

# A fresh checkout gets exactly the lockfile (npm ci, through a snapshot of its result kept in the cache:
# tools/build/npm-deps.sh); an existing node_modules is updated in place, because npm ci would first delete it under
# anything else running from this checkout.
$(DEPS_STAMP): $(WORKSPACE_MANIFESTS)
	if [ -d node_modules ]; then $(STEP) npm-deps npm install --no-audit --no-fund --loglevel=error; \
	else bash tools/build/npm-deps.sh; fi
	@touch $@

deps: $(DEPS_STAMP) ## Install Node 24 (if needed) and the npm dependencies

# The browser apps: the translation service's (services/translation/web/dist) and the ledger node's /ui console
# (services/ledger-node/console/dist): content-hashed files and a manifest, never committed. Each serves what it finds.
web: deps ## Build the browser apps (translation web app, ledger /ui console) with esbuild
	@$(STEP) web bash -c 'node services/translation/src/web/build.ts && node services/ledger-node/src/console/build.ts'

dev: deps web ## Run the whole system locally: PGlite, the pseudo provider, 4 local validators, 2 witnesses
	node tools/dev.ts

RESULTS := .test-results
VITEST_JSON = --reporter=default --reporter=json --outputFile.json=$(RESULTS)/$(1).json

# Runs every stage even when one fails, then prints one summary line and fails if anything did.
test: deps kube-bins tlog-bins scorpio fuzzer web ## Lint, then every unit and integration test, then one summary line
	@rm -rf $(RESULTS); mkdir -p $(RESULTS); rc=0; \
	$(STEP) lint $(MAKE) --no-print-directory lint || rc=1; \
	$(STEP) unit vitest run --project unit $(call VITEST_JSON,unit) || rc=1; \
	if [ -n "$${CI_PREBUILD:-}" ]; then (setsid $$CI_PREBUILD >$(RESULTS)/prebuild.log 2>&1 </dev/null &); fi; \
	$(STEP) integration vitest run --project integration $(call VITEST_JSON,integration) || rc=1; \
	node tools/test-summary.ts $(RESULTS)/unit.json $(RESULTS)/integration.json; \
	exit $$rc

test-unit: deps ## Unit and simulation tests (pure logic, no processes)
	vitest run --project unit

test-integration: deps kube-bins tlog-bins scorpio fuzzer web ## Integration tests against real PostgreSQL, processes and servers
	vitest run --project integration

lint: deps ## Biome (format + lint) and the TypeScript type checks (Node code; the browser apps with the DOM library)
	biome check .
	tsc -p tsconfig.json
	tsc -p services/translation/web/tsconfig.json
	tsc -p services/ledger-node/console/tsconfig.json

format: deps ## Rewrite files with Biome's formatter and safe fixes
	biome check --write .

typecheck: deps ## TypeScript type check only
	tsc -p tsconfig.json
	tsc -p services/translation/web/tsconfig.json
	tsc -p services/ledger-node/console/tsconfig.json

bench: deps ## Benchmarks; figures are printed and written to bench/results/
	node bench/run.ts

crds: deps ## Generate crds/ (and the chart's copy) from the operator's zod schemas
	node operator/src/crd/generate.ts

crds-check: crds ## Fail when crds/ is stale (the generator's output differs from what is committed)
	@test -z "$$(git status --porcelain -- crds charts/scriptorium-operator/crds)" || \
	  { git status --short -- crds charts/scriptorium-operator/crds; echo "crds/ is stale: run make crds and commit" >&2; exit 1; }

chart-lint: deps kube-bins ## helm lint, then helm template applied with server-side dry-run
	bash charts/lint.sh

fuzzer: ## Install (or reuse from the cache) schemathesis, the OpenAPI-driven fuzzer the integration tests run
	@bash tools/schemathesis/build.sh >/dev/null

kube-bins: ## Build (or reuse from the cache) etcd, kube-apiserver, kube-controller-manager, helm, kind, weed (SeaweedFS), the CloudNativePG manifest
	bash tools/kube/build.sh

tlog-bins: ## Build (or reuse from the cache) litewitness and note-verify, the independent C2SP implementations the witness tests use
	bash tools/tlog/build.sh >/dev/null

scorpio: ## Build (or reuse from the cache) FIWARE Scorpio, the real NGSI-LD broker of the ledger watch's tests
	bash tools/scorpio/build.sh >/dev/null

ci-warm: ## Build every cache a CI run uses (packages, Node, npm, Go binaries, Scorpio, images), run no test (root for images)
	bash tools/build/warm.sh

images: ## Build the three product images (needs a Docker engine)
	@command -v docker >/dev/null && docker info >/dev/null 2>&1 || { echo "make images: no Docker engine answers here" >&2; exit 2; }
	docker build -f operator/Dockerfile -t scriptorium/operator:dev .
	docker build -f services/translation/Dockerfile -t scriptorium/translation:dev .
	docker build -f services/ledger-node/Dockerfile -t scriptorium/ledger-node:dev .

e2e-kind: deps kube-bins ## End-to-end suite (deploy/e2e) on kind; without a registry: engine and node image of tools/kind (root)
	bash deploy/e2e-kind.sh

e2e-local: deps ## End-to-end suite (deploy/e2e) on the local cluster: cluster-up, images rebuilt when changed (root)
	@mkdir -p $(RESULTS)
	bash deploy/e2e-local.sh

# The kubectl plugin: kubectl runs any `kubectl-<name>` on PATH as `kubectl <name>`.
BINDIR ?= $(CURDIR)/bin
kubectl-plugin: deps ## Install kubectl-scriptorium into BINDIR (default ./bin; add it to PATH): kubectl scriptorium …
	@mkdir -p "$(BINDIR)"
	@printf '#!/usr/bin/env bash\n# kubectl scriptorium (installed by make kubectl-plugin)\nexec %q %q "$$@"\n' \
	  "$(NODE_BIN)/node" "$(CURDIR)/operator/src/plugin/main.ts" >"$(BINDIR)/kubectl-scriptorium"
	@chmod 755 "$(BINDIR)/kubectl-scriptorium"
	@echo "installed $(BINDIR)/kubectl-scriptorium (PATH=$(BINDIR):\$$PATH kubectl scriptorium --help)"

clean: ## Remove build output and node_modules (the Node 24 and Go caches stay)
	rm -rf node_modules */node_modules */*/node_modules coverage .dev $(RESULTS) services/*/web/dist services/ledger-node/console/dist

.PHONY: cluster-up cluster-down e2e-local
cluster-up: deps ## Start a real single-node Kubernetes cluster with the demo (DEMO=0: without) (root; tools/cluster/README.md)
	bash tools/cluster/up.sh

cluster-down: ## Remove everything cluster-up made (processes, mounts, iptables rules, bridge, data)
	bash tools/cluster/down.sh
