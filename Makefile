# opsbot — the two set-up commands are `make run` and `make test`.

GO           ?= go
STATICCHECK  := honnef.co/go/tools/cmd/staticcheck@v0.8.2
VERSION      ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT       ?= $(shell git rev-parse --short HEAD 2>/dev/null || echo unknown)
LDFLAGS      := -X main.version=$(VERSION) -X main.commit=$(COMMIT)
# Debian packages the tests need: a real sshd for hosts, Chromium for the
# web chat's browser tests; curl and jq for the docs/WEB_API.md example the web tests run.
TEST_DEBS    := openssh-server openssh-client chromium curl jq
# Peers the fan-out benchmark measures against.
BENCH_DEBS   := pssh ansible openssh-client openssh-server
# `go test` must see gcc for go-sqlite3 (cgo).
export CGO_ENABLED := 1

.PHONY: run build test test-deps lint bench bench-deps clean

## run: the bot on the embedded default (web chat on http://127.0.0.1:8080)
run: build
	./bin/opsbot run $(if $(CONFIG),--config $(CONFIG))

## build: bin/opsbot, stamped with version and commit
build:
	$(GO) build -ldflags "$(LDFLAGS)" -o bin/opsbot ./cmd/opsbot

## test: install what the tests need if missing, then every test under -race
test: test-deps
	$(GO) test -race -count=1 ./...

test-deps:
	@./deploy/install-debs.sh $(TEST_DEBS)

## lint: gofmt, go vet, staticcheck (pinned)
lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) run $(STATICCHECK) ./...

## bench: the benchmarks whose figures docs/BENCHMARKS.md records
## (about 10 minutes: the 100-host fan-out against parallel-ssh and Ansible
## is the long part)
bench: bench-deps
	$(GO) test -run '^$$' -bench . -benchmem ./...
	$(GO) run ./bot/bench/idle
	$(GO) run ./bot/bench/idle -connector null
	$(GO) run ./hosts/bench -hosts 100 -runs 5

bench-deps: test-deps
	@./deploy/install-debs.sh $(BENCH_DEBS)

clean:
	rm -rf bin
