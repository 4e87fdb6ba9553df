# opsbot — the two set-up commands are `make run` and `make test`.

GO           ?= go
MODULE       := github.com/opsbot/opsbot
STATICCHECK  := honnef.co/go/tools/cmd/staticcheck@v0.8.2
VERSION      ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT       ?= $(shell git rev-parse --short HEAD 2>/dev/null || echo unknown)
LDFLAGS      := -X main.version=$(VERSION) -X main.commit=$(COMMIT)
# deploy/Dockerfile's build flags (cgo for SQLite, the zone database
# embedded, no build paths). bin/opsbot is built with the same ones, so it,
# the image's binary deploy/ tests build and the Docker build share compiled
# packages: only the link differs (deploy/dockerfile_test.go keeps them equal).
# sqlite_fts5 compiles SQLite's FTS5 into go-sqlite3: the incident memory's
# full-text index (docs/MEMORY.md); without it recall falls back to a scan.
BUILD_FLAGS  := -trimpath -tags timetzdata,sqlite_fts5
# The tags every test run builds with: the same SQLite as the binary's.
TEST_TAGS    := -tags sqlite_fts5
# Debian packages the tests need: a real sshd for hosts, Chromium for the
# web chat's browser tests; curl and jq for the docs/WEB_API.md example the web
# tests run; systemd-analyze for deploy/opsbot.service; strace and
# iproute2 for policy/nsverify, which runs allowed commands for real.
TEST_DEBS    := openssh-server openssh-client chromium curl jq systemd strace iproute2 bubblewrap busybox
# How long make test and make fuzz fuzz the policy against reality.
# make test's is a count of inputs, not a time: with a time, Go 1.26's
# fuzz coordinator can fail the run with a bare "context deadline
# exceeded" at its end, no input to blame, when a worker is mid-input as
# the time runs out (golang/go#75804, fixed in Go 1.27; a cold run here
# failed so). 2,000 inputs take about 20 s on two cores.
FUZZ_SHORT   ?= 2000x
FUZZTIME     ?= 10m
# helm for the chart's lint and template tests (deploy/helm_test.go), built
# from the Go module proxy once per machine into HELM_CACHE, outside the
# clone, and reused by every clone (the build takes several minutes).
# HELM=/path/to/helm uses a helm you have.
HELM_VERSION := v3.22.0
HELM_CACHE   ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/opsbot
HELM         ?= $(HELM_CACHE)/helm-$(HELM_VERSION)
export OPSBOT_HELM := $(abspath $(HELM))
# litestream for the ha failover tests (cmd/opsbot TestHAFailover, the
# database replicated by a Litestream sidecar), built from the Go module
# proxy once per machine into HELM_CACHE, as helm is (about 2 minutes).
# LITESTREAM=/path/to/litestream uses one you have.
LITESTREAM_VERSION := v0.5.18
LITESTREAM   ?= $(HELM_CACHE)/litestream-$(LITESTREAM_VERSION)
export OPSBOT_LITESTREAM := $(abspath $(LITESTREAM))
# Peers the fan-out benchmark measures against.
BENCH_DEBS   := pssh ansible openssh-client openssh-server
# `go test` must see gcc for go-sqlite3 (cgo).
export CGO_ENABLED := 1

.PHONY: run build test test-deploy test-deps fuzz lint bench bench-deps clean

## run: the bot on the embedded default (web chat on http://127.0.0.1:8080),
## its database and session folders in DATA_DIR (outside the checkout), or
## as CONFIG says; LISTEN=host:port moves the web chat
DATA_DIR     ?= $(HOME)/.local/state/opsbot
run: build
	OPSBOT_DATA_DIR_FROM=DATA_DIR ./bin/opsbot run $(if $(CONFIG),--config $(CONFIG),--data-dir $(DATA_DIR)) $(if $(LISTEN),--listen $(LISTEN))

## build: bin/opsbot, stamped with version and commit, built as the image's
## binary is; go build -v names each package as it compiles
build:
	@echo "building bin/opsbot (the first build compiles every dependency: a few minutes; later ones take seconds)..."
	$(GO) build -v $(BUILD_FLAGS) -ldflags "$(LDFLAGS)" -o bin/opsbot ./cmd/opsbot

## test: install what the tests need if missing, then every test but
## deploy/'s under -race, then FUZZ_SHORT (2,000 inputs) of the policy fuzzed against
## reality (see fuzz)
test: test-deps $(LITESTREAM)
	$(GO) test $(TEST_TAGS) -race -count=1 -timeout 30m $$($(GO) list ./... | grep -vx '$(MODULE)/deploy')
	$(GO) test -run '^$$' -fuzz '^FuzzAllowedIsHarmless$$' -fuzztime $(FUZZ_SHORT) ./policy/nsverify/

## test-deploy: deploy/'s checks (CI runs them after make test): the image's
## binary built as deploy/Dockerfile builds it and run as the image runs it,
## systemd-analyze verify and security on the unit, helm lint and helm
## template on the chart. helm is built once per machine (HELM_CACHE); the
## build step compiles what the image's binary needs, with progress.
test-deploy: test-deps $(HELM) build
	$(GO) test $(TEST_TAGS) -race -count=1 -timeout 30m ./deploy/

## fuzz: fuzz the policy against reality for FUZZTIME (default 10m): every
## command line it allows runs in a throwaway namespace and must change nothing
fuzz: test-deps
	$(GO) test -run '^$$' -fuzz '^FuzzAllowedIsHarmless$$' -fuzztime $(FUZZTIME) ./policy/nsverify/

test-deps:
	@./deploy/install-debs.sh $(TEST_DEBS)

# A pinned helm, built once per machine. Each build goes to its own folder
# and is moved into place, so clones building at once do not collide.
$(HELM):
	@echo "building helm $(HELM_VERSION) into $(HELM_CACHE) (once per machine; several minutes)..."
	@mkdir -p $(dir $@)
	tmp=$$(mktemp -d $(dir $@).helm-build.XXXXXX) && \
	  GOBIN=$$tmp CGO_ENABLED=0 $(GO) install helm.sh/helm/v3/cmd/helm@$(HELM_VERSION) && \
	  mv $$tmp/helm $@ && rmdir $$tmp

# A pinned litestream, built the same way.
$(LITESTREAM):
	@echo "building litestream $(LITESTREAM_VERSION) into $(HELM_CACHE) (once per machine; a few minutes)..."
	@mkdir -p $(dir $@)
	tmp=$$(mktemp -d $(dir $@).litestream-build.XXXXXX) && \
	  GOBIN=$$tmp CGO_ENABLED=0 $(GO) install github.com/benbjohnson/litestream/cmd/litestream@$(LITESTREAM_VERSION) && \
	  mv $$tmp/litestream $@ && rmdir $$tmp

## lint: gofmt, go mod tidy (fails when tidy would change go.mod or go.sum,
## printing the change), go vet, staticcheck (pinned)
lint:
	@$(GO) mod tidy -diff || { echo "go mod tidy would change go.mod/go.sum (above): run go mod tidy"; exit 1; }
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) vet $(TEST_TAGS) ./store/
	$(GO) run $(STATICCHECK) ./...

## bench: the benchmarks whose figures docs/BENCHMARKS.md records
## (about 10 minutes: the 100-host fan-out against parallel-ssh and Ansible
## is the long part)
bench: bench-deps
	$(GO) test $(TEST_TAGS) -run '^$$' -bench . -benchmem ./...
	$(GO) run ./bot/bench/idle
	$(GO) run ./bot/bench/idle -connector null
	$(GO) run ./hosts/bench -hosts 100 -runs 5
	$(GO) run ./bot/bench/webflood
	OPSBOT_SLACK_LOAD_MINUTES=10 $(GO) test $(TEST_TAGS) -count=1 -run '^TestConcurrentAnswersWithinTierLimits$$' -v ./connectors/slack
	$(GO) run ./bot/bench/discord -streams 20 -duration 10m
	$(GO) run ./bot/bench/slackbin -answers 5 && $(GO) run ./bot/bench/slackbin -answers 20

bench-deps: test-deps
	@./deploy/install-debs.sh $(BENCH_DEBS)

## soak: issue 12's crash harness, outside make test. soak-kill: the real
## binary killed with SIGKILL at random moments and within 50 ms of an
## Approve click, SOAK_ITERATIONS times (default 200), each restart checked
## (docs/BENCHMARKS.md, "Kill loop"; about 5 minutes)
.PHONY: soak soak-kill
soak: soak-kill soak-load
soak-kill:
	$(GO) test -tags soak,sqlite_fts5 -run '^TestSoakKillLoop$$' -count=1 -timeout 3h -v ./cmd/opsbot/

clean:
	rm -rf bin

## soak-load: the soak harness's load half, not part of make test: it starts the
## real binary and drives it through the web API (100 threads at once, 1,000
## idle event streams, a stalled reader, 200 messages into one thread, replays
## while posting, SOAK_STEADY of steady load); docs/BENCHMARKS.md has the figures
.PHONY: soak-load
SOAK_STEADY ?= 10m
soak-load: build
	$(GO) run ./soak/load -bin bin/opsbot -steady $(SOAK_STEADY)
