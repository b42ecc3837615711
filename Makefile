# contextd — the two commands a new user needs:
#   make run    serve on the embedded default (SQLite + embedded index, no LLM)
#   make test   run the whole test suite (starts a throwaway Postgres itself)
GO        ?= go
BIN       := bin/contextd
LOCOMO    ?= ../shared/bench/locomo/locomo-dev.json
FUZZTIME  ?= 10s
VERSION   := $(shell git describe --always --dirty 2>/dev/null || echo dev)

.PHONY: run build test test-race bench bench-http eval fuzz vet fmt check-config clean

run: build
	./$(BIN) serve

build:
	$(GO) build -ldflags "-X main.version=$(VERSION)" -o $(BIN) ./cmd/contextd

test:
	$(GO) vet ./...
	$(GO) test -count=1 -timeout 15m ./...

test-race:
	$(GO) test -race -count=1 -timeout 20m ./...

bench:
	$(GO) test -run '^$$' -bench . -benchtime 2s ./...

# The HTTP read/write paths under wrk, as shares of a no-op handler (see
# docs/performance.md); installs wrk from Debian when missing.
bench-http:
	bash scripts/bench-http/run.sh

eval: build
	./$(BIN) eval locomo --data $(LOCOMO) --budgets 1000,2000,4000,8000

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
