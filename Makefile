# opsbot — the two set-up commands are `make run` and `make test`.

GO           ?= go
STATICCHECK  := honnef.co/go/tools/cmd/staticcheck@v0.8.2
VERSION      ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT       ?= $(shell git rev-parse --short HEAD 2>/dev/null || echo unknown)
LDFLAGS      := -X main.version=$(VERSION) -X main.commit=$(COMMIT)
# Debian packages the tests need: a real sshd for hosts, Chromium for the
# web chat's browser tests; curl and jq for the docs/WEB_API.md example the web
# tests run; systemd-analyze for deploy/opsbot.service; strace and
# iproute2 for approvals/nsverify, which runs allowed commands for real.
TEST_DEBS    := openssh-server openssh-client chromium curl jq systemd strace iproute2 bubblewrap
# How long make test and make fuzz fuzz the policy against reality.
FUZZ_SHORT   ?= 20s
FUZZTIME     ?= 10m
# helm for the chart's lint and template tests (deploy/helm_test.go), built
# once from the Go module proxy into bin/ and reused.
HELM_VERSION := v3.22.0
HELM         := bin/helm-$(HELM_VERSION)
export OPSBOT_HELM := $(CURDIR)/$(HELM)
# Peers the fan-out benchmark measures against.
BENCH_DEBS   := pssh ansible openssh-client openssh-server
# `go test` must see gcc for go-sqlite3 (cgo).
export CGO_ENABLED := 1

.PHONY: run build test test-deps fuzz lint bench bench-deps clean

## run: the bot on the embedded default (web chat on http://127.0.0.1:8080),
## its database and session folders in DATA_DIR (outside the checkout), or
## as CONFIG says; LISTEN=host:port moves the web chat
DATA_DIR     ?= $(HOME)/.local/state/opsbot
run: build
	OPSBOT_DATA_DIR_FROM=DATA_DIR ./bin/opsbot run $(if $(CONFIG),--config $(CONFIG),--data-dir $(DATA_DIR)) $(if $(LISTEN),--listen $(LISTEN))

## build: bin/opsbot, stamped with version and commit
build:
	$(GO) build -ldflags "$(LDFLAGS)" -o bin/opsbot ./cmd/opsbot

## test: install what the tests need if missing, then every test under -race
## (deploy/ builds the image's binary, runs systemd-analyze verify and
## security on the unit, helm lint and helm template on the chart), then
## FUZZ_SHORT (20s) of the policy fuzzed against reality (see fuzz)
# The image's binary is built first, on its own: cold (its own flags, so its
# own cache) it may take longer than go test's default timeout on a busy
# machine; the suite then finds it in the build cache.
test: test-deps $(HELM)
	$(GO) test -count=1 -timeout 60m -run '^TestImageBuildSettings$$' ./deploy/
	$(GO) test -race -count=1 ./...
	$(GO) test -run '^$$' -fuzz '^FuzzAllowedIsHarmless$$' -fuzztime $(FUZZ_SHORT) ./approvals/nsverify/

## fuzz: fuzz the policy against reality for FUZZTIME (default 10m): every
## command line it allows runs in a throwaway namespace and must change nothing
fuzz: test-deps
	$(GO) test -run '^$$' -fuzz '^FuzzAllowedIsHarmless$$' -fuzztime $(FUZZTIME) ./approvals/nsverify/

test-deps:
	@./deploy/install-debs.sh $(TEST_DEBS)

# A pinned helm; the first build takes a few minutes.
$(HELM):
	GOBIN=$(CURDIR)/bin/.helm-build CGO_ENABLED=0 $(GO) install helm.sh/helm/v3/cmd/helm@$(HELM_VERSION)
	mv bin/.helm-build/helm $@ && rmdir bin/.helm-build

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
	$(GO) run ./bot/bench/webflood
	OPSBOT_SLACK_LOAD_MINUTES=10 $(GO) test -count=1 -run '^TestConcurrentAnswersWithinTierLimits$$' -v ./connectors/slack
	$(GO) run ./bot/bench/discord -streams 20 -duration 10m

bench-deps: test-deps
	@./deploy/install-debs.sh $(BENCH_DEBS)

## soak: issue 12's crash harness, outside make test. soak-kill: the real
## binary killed with SIGKILL at random moments and within 50 ms of an
## Approve click, SOAK_ITERATIONS times (default 200), each restart checked
## (docs/BENCHMARKS.md, "Kill loop"; about 5 minutes)
.PHONY: soak soak-kill
soak: soak-kill soak-load
soak-kill:
	$(GO) test -tags soak -run '^TestSoakKillLoop$$' -count=1 -timeout 3h -v ./cmd/opsbot/

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
