# contextd — the two commands a new user needs:
#   make run    serve on the embedded default (SQLite + embedded index, no LLM)
#   make test   run the whole test suite (starts a throwaway Postgres itself)
GO        ?= go
BIN       := bin/contextd
# LoCoMo (CC BY-NC 4.0) is not shipped with contextd: `make eval` says where
# to get it. bench/ is ignored by git.
LOCOMO    ?= bench/locomo10.json
BEAM      ?= data/beam/100K
FUZZTIME  ?= 10s
VERSION   := $(shell git describe --always --dirty 2>/dev/null || echo dev)
COMMIT    := $(shell git rev-parse HEAD 2>/dev/null)
LDFLAGS   := -X main.version=$(VERSION) -X main.commit=$(COMMIT)

.PHONY: run build test test-go test-python test-ts test-docs lint-openapi test-k8s node chromium eval-replay eval-beam test-race bench bench-append bench-http eval fuzz vet fmt check-config clean

run: build
	./$(BIN) serve

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/contextd

test: chromium test-docs lint-openapi test-k8s test-go test-python test-ts

test-go:
	$(GO) vet ./...
	$(GO) test -count=1 -timeout 15m ./...

# The Python client's tests run against the real binary with Debian's
# python3-httpx and python3-pytest (installed here when missing). Debian's
# /usr/bin/python3 is used: a pyenv python on PATH does not see them.
PYTHON ?= /usr/bin/python3
test-python: build
	@$(PYTHON) -c 'import httpx, pytest, setuptools, ensurepip' 2>/dev/null || { \
	  echo "test-python: installing python3-httpx python3-pytest python3-setuptools python3-venv (Debian)"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq python3-httpx python3-pytest python3-setuptools python3-venv >/dev/null; }
	CONTEXTD_BIN=$(CURDIR)/$(BIN) $(PYTHON) -m pytest -q -p no:cacheprovider clients/python
	@# The README's offline install, from a copy (pip builds in the source
	@# tree): no index, Debian's setuptools and httpx through the venv.
	@tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && cp -r clients/python "$$tmp/src" && \
	  $(PYTHON) -m venv --system-site-packages "$$tmp/venv" && \
	  "$$tmp/venv/bin/pip" install -q --no-build-isolation --no-index "$$tmp/src" && \
	  cd "$$tmp" && "$$tmp/venv/bin/python" -c 'import contextd, sys; assert "/venv/" in contextd.__file__, contextd.__file__; contextd.Client; print("test-python: offline install ok")'

# The TypeScript client (clients/typescript) with its AI SDK and OpenAI Agents
# adapters, tested by Node's own runner against the real binary. The pinned
# packages are installed with npm ci when node_modules is missing or older
# than the lockfile; Node and npm come from Debian when missing.
TS_DIR   := clients/typescript
TS_TESTS  = $(notdir $(wildcard $(TS_DIR)/test/*.test.mjs))
test-ts: build node
	@cd $(TS_DIR) && { [ node_modules/.package-lock.json -nt package-lock.json ] || npm ci --ignore-scripts --no-audit --no-fund; }
	cd $(TS_DIR) && node node_modules/typescript/bin/tsc -p tsconfig.json
	cd $(TS_DIR) && CONTEXTD_BIN=$(CURDIR)/$(BIN) node --test --test-concurrency=1 $(addprefix test/,$(TS_TESTS))

node:
	@if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then \
	  echo "make: installing nodejs and npm (Debian)"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq nodejs npm >/dev/null; \
	fi

# Every relative link in README.md and docs/*.md resolves, and nothing
# points outside the repository.
test-docs:
	$(PYTHON) scripts/check-docs.py

# docs/openapi.yaml is linted by @redocly/cli (pinned in tools/openapi's
# lockfile, installed with npm ci; Node from the node target); the Go tests
# keep it equal to the routes and check the binary's answers against it.
OPENAPI_DIR := tools/openapi
lint-openapi: node
	@cd $(OPENAPI_DIR) && { [ node_modules/.package-lock.json -nt package-lock.json ] || npm ci --engine-strict --ignore-scripts --no-audit --no-fund; }
	cd $(OPENAPI_DIR) && REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_UPDATE_NOTICE=true node node_modules/@redocly/cli/bin/cli.js lint --config redocly.yaml --format=stylish ../../docs/openapi.yaml

# deploy/k8s, the kustomize base, decoded strictly into the Kubernetes API
# types offline by its own module (deploy/k8s/check), so contextd's go.mod
# does not carry k8s.io/api.
test-k8s:
	cd deploy/k8s/check && $(GO) vet ./... && $(GO) test -count=1 ./...

# chromium: the inspector's browser tests (transport/ui/browser_test.go) drive Debian's
# chromium; install it when missing and we are root or have sudo, else the
# tests skip locally (and fail under CI=true).
chromium:
	@if [ ! -x /usr/bin/chromium ]; then \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	  elif sudo -n true 2>/dev/null; then sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	  fi || true; \
	  [ -x /usr/bin/chromium ] || echo "make: chromium could not be installed: the browser tests skip (and fail under CI=true)"; \
	fi

test-race:
	$(GO) test -race -count=1 -timeout 20m ./...

bench:
	$(GO) test -run '^$$' -bench . -benchtime 2s ./...

# The HTTP read/write paths under wrk, as shares of a no-op handler (see
# docs/performance.md); installs wrk from Debian when missing.
# A 1,500-turn chat appended in batches of 100, BASE (default 09245c8) and
# this tree alternately: BASE=<commit> ROUNDS=5 make bench-append.
bench-append:
	bash scripts/bench-append.sh

bench-http:
	bash scripts/bench-http/run.sh

LOCOMO_MISSING = echo "LoCoMo data not found at $(LOCOMO): get data/locomo10.json from github.com/snap-research/LoCoMo (CC BY-NC 4.0), then make $@ LOCOMO=path/to/locomo10.json"

eval: build
	@if [ ! -f "$(LOCOMO)" ]; then \
	  echo "make eval: no LoCoMo data at $(LOCOMO)."; \
	  echo "  LoCoMo is the benchmark of https://github.com/snap-research/LoCoMo (CC BY-NC 4.0); its file is data/locomo10.json:"; \
	  echo "    mkdir -p bench && curl -fL -o bench/locomo10.json https://raw.githubusercontent.com/snap-research/LoCoMo/main/data/locomo10.json"; \
	  echo "  or point at a copy: make eval LOCOMO=/path/to/locomo10.json (docs/evaluation.md has the details)"; \
	  exit 1; \
	fi
	./$(BIN) eval locomo --data $(LOCOMO) --budgets 1000,2000,4000,8000

# The LLM path without weights: contextd summarises with a replay LLM that
# answers from LoCoMo's own observations and session summaries.
eval-replay: build
	@test -f $(LOCOMO) || { $(LOCOMO_MISSING); exit 1; }
	./$(BIN) eval locomo --llm replay --data $(LOCOMO) --budgets 1000,2000,4000,8000

# BEAM (github.com/mohammadtavakoli78/BEAM): a directory of chats, <n>/chat.json
# and <n>/probing_questions/probing_questions.json (its chats/100K).
eval-beam: build
	@test -d $(BEAM) || { echo "BEAM chats not found at $(BEAM): copy chats/100K of github.com/mohammadtavakoli78/BEAM (or huggingface.co/datasets/Mohammadta/BEAM) there, or make eval-beam BEAM=path/to/100K"; exit 1; }
	./$(BIN) eval beam --data $(BEAM) --budgets 2000,8000

# Run every fuzz target briefly (go test -fuzz takes one target at a time).
fuzz:
	@set -e; for pkg in $$($(GO) list ./...); do \
	  for t in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz' || true); do \
	    echo "fuzz $$pkg $$t"; $(GO) test -run '^$$' -fuzz "^$$t$$" -fuzztime $(FUZZTIME) $$pkg; \
	  done; done

vet:
	$(GO) vet ./...

fmt:
	gofmt -w $$(git ls-files '*.go')

check-config: build
	./$(BIN) check-config --config agents.yaml

clean:
	rm -rf bin data
