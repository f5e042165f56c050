# reftrack — see README.md. `make run` serves on :8080; `make test` is what CI runs.
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
GO ?= go
# Go sources of this repository (not npm installs or local data).
GO_FILES = $(shell find . -name '*.go' -not -path '*/node_modules/*' -not -path './.data/*' -not -path './bin/*')
NPM_DEPS := openapi/node_modules/.package-lock.json
TRACKER_DEPS := tracker/node_modules/.package-lock.json
SDK_TS_DEPS := sdk/typescript/node_modules/.package-lock.json

.PHONY: generate build lint run test test-deps vet fmt-check generate-check spec-breaking go-test go-test-race go-test-plain go-test-sweeps bench fuzz fuzz-targets chaos cluster test-cluster cluster-deps test-ua-full model clients

# oasdiff judges changes to the spec (breaking or not); pinned, built into bin/ once.
OASDIFF_VERSION := v1.36.0
OASDIFF := bin/oasdiff-$(OASDIFF_VERSION)/oasdiff
# Mailpit, the real SMTP server the mail tests send to (pkg/mail); pinned, built into bin/ once (about 30 s).
MAILPIT_VERSION := v1.27.11
MAILPIT := bin/mailpit-$(MAILPIT_VERSION)/mailpit

## generate: regenerate gen/ (server and client) and the Go SDK's client (sdk/client) from openapi/openapi.yaml
generate:
	$(GO) generate ./gen/...

## build: build reftrackd into bin/
build:
	$(GO) build -o bin/ ./cmd/...

# The spec linters and the TypeScript client's tools are pinned in openapi/package-lock.json and
# installed locally, never globally.
$(NPM_DEPS): openapi/package.json openapi/package-lock.json
	cd openapi && npm ci --no-audit --no-fund --loglevel=error

# playwright-core drives Debian's chromium-headless-shell in the tracker's browser tests (it downloads no browser).
$(TRACKER_DEPS): tracker/package.json tracker/package-lock.json
	cd tracker && npm ci --no-audit --no-fund --loglevel=error

# The TypeScript SDK's build tools (openapi-typescript, tsc; the package itself has no runtime dependency),
# for pkg/e2e's TestTypeScriptSDK.
$(SDK_TS_DEPS): sdk/typescript/package.json sdk/typescript/package-lock.json
	cd sdk/typescript && npm ci --no-audit --no-fund --loglevel=error

## lint: Spectral (spectral:oas) and Redocly (recommended) on the spec; any error fails
lint: bin/lint.stamp

# The linters' verdict depends only on the spec, their configuration and their versions: it is kept (the
# stamp, in the git-ignored bin/) until one of those changes, so a `make test` with the spec unchanged
# does not start them again. A fresh clone (CI) always runs them.
bin/lint.stamp: openapi/openapi.yaml openapi/redocly.yaml openapi/package-lock.json $(NPM_DEPS)
	cd openapi && ./node_modules/.bin/spectral lint --fail-severity=error openapi.yaml
	cd openapi && ./node_modules/.bin/redocly lint --config redocly.yaml openapi.yaml
	@mkdir -p bin && touch $@

## run: Postgres (found or started), database, migrations, demo program, server on :8080
run:
	$(GO) run ./cmd/reftrackd dev

## test: (installing chromium, gcc and npm when missing and it can) vet, gofmt, generated code up to date,
## spec lint, all tests with the race detector (including the
## Go SDK module against a real server and from a brand's module, the independent TypeScript client
## generated from the served spec, the TypeScript SDK packed and installed into a project of its own, and
## the tracker in headless Chromium)
## The checks that only read run beside the tests (most of the tests' time is spent waiting on PostgreSQL and
## the browser); generate-check rewrites gen/ in place, so it runs first, alone.
test: test-deps bin/generate.stamp
	@$(MAKE) --no-print-directory -j5 --output-sync=target vet fmt-check lint spec-breaking go-test

# The Go SDK (sdk/) is a module of its own: ./... at the root does not enter it.
vet:
	$(GO) vet ./...
	cd sdk && $(GO) vet ./...

fmt-check:
	@out=$$(gofmt -l $(GO_FILES)); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

$(MAILPIT):
	GOBIN=$(CURDIR)/$(dir $(MAILPIT)) $(GO) install github.com/axllent/mailpit@$(MAILPIT_VERSION)

$(OASDIFF):
	GOBIN=$(CURDIR)/$(dir $(OASDIFF)) $(GO) install github.com/oasdiff/oasdiff@$(OASDIFF_VERSION)

## spec-breaking: fail on a breaking change to the spec (oasdiff) since the last commit on main unless
## its commit message carries the line `Spec-Breaking: deliberate`
spec-breaking: $(OASDIFF)
	openapi/breaking.sh $(OASDIFF)

# Generated code: gen/, and the SDK's client, generated into the SDK's module.
GENERATED := gen sdk/client

# generate-check's verdict depends only on the spec, the generators' configuration and version (go.mod) and
# the generated files: make test keeps it (a stamp in the git-ignored bin/) until one of them changes, as
# it keeps the linters' (about 3.5 s, before anything else starts). A fresh clone (CI) always checks.
bin/generate.stamp: openapi/openapi.yaml $(wildcard gen/*/*.yaml gen/*/*.go sdk/client/*.go) go.mod go.sum
	@$(MAKE) --no-print-directory generate-check
	@mkdir -p bin && touch $@

# Regenerates $(GENERATED) and fails when that changed anything (the change is left in place to commit).
generate-check:
	@tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	for d in $(GENERATED); do mkdir -p "$$tmp/$$d"; cp -r "$$d/." "$$tmp/$$d"; done; \
	$(MAKE) --no-print-directory generate >/dev/null; \
	for d in $(GENERATED); do \
		if ! diff -r "$$tmp/$$d" "$$d" >/dev/null; then \
			echo "$$d/ was out of date with openapi/openapi.yaml; \`make generate\` has updated it: commit the result."; \
			diff -r "$$tmp/$$d" "$$d" | head -40; exit 1; \
		fi; \
	done

# REFTRACK_REQUIRE_TOOLS: the TypeScript SDK's test (pkg/e2e) and the browser tests (tracker, pkg/dashboard…)
# fail, not skip, without their npm packages or Chromium. Then the SDK module's own tests, in sdk/ (its
# tests against a real server, and its examples, run from the root module's pkg/e2e).
# Independent tests run in parallel (t.Parallel), each on its own database cloned from a migrated template;
# they wait on Postgres and the browser far more than on the CPU, hence more of them at once than cores.
# The race detector multiplies the CPU our Go code costs five to seven times, and `make test` is CPU-bound
# on two cores. It watches every package whose tests run our concurrent Go code (the server, the delivery
# worker, the limiters, the stores, the SDK); the packages whose tests spend their time in a browser, in npm
# tools, in the CLI's one-at-a-time commands, in parsing the spec and User-Agents or in reading the
# repository's files (docs) run without it (PLAIN_PKGS: the server code they reach is the code pkg/api's
# tests run under the detector). The two sets
# run side by side, each starting with its longest package (go test starts packages in the order given).
# Some of pkg/api's tests send their requests one at a time, where the detector has no concurrency to
# watch and five times the CPU to spend: the two sweeps of thousands of requests, the request bodies'
# members of every type (hundreds of refusals, a route's in turn), the fuzz targets' seed corpora (hundreds
# each), and the partner portal's tests (one person's requests in turn). They run in the plain set (SWEEPS).
# A race-enabled binary sleeps a second at exit by default (GORACE atexit_sleep_ms) for late reports;
# every test here has finished its goroutines by then, and the second per package adds up. -vet=off: the
# vet target runs every analyzer beside the tests (`make test`), so go test need not run its subset again.
# GOGC=400: a test process's heap is small, so collecting a quarter as often costs little memory and a
# tenth of the CPU; -ldflags='-s -w': test binaries are linked on every run, a third faster without the
# symbol table and DWARF (race reports and panics name their functions and lines from the pclntab).
# -o $(TEST_BINS)/…/: go test links every test binary again on every run (about 40 s of CPU for the 69
# binaries here, a sixth of a warm run's), unless it writes them to a file of its own: then, as go build
# does, it relinks only a binary whose inputs changed (its build ID says) and still runs the tests. Two
# packages' binaries in one directory must differ in name, so only packages with tests are listed.
TEST_BINS := $(CURDIR)/bin/test
PLAIN_PKGS := tracker pkg/dashboard pkg/demoshop pkg/apidocs openapi cmd/reftrack cmd/loadgen docs \
	pkg/useragent pkg/api/route
GO_TEST := REFTRACK_REQUIRE_TOOLS=1 MAILPIT=$(CURDIR)/$(MAILPIT) GOGC=400 $(GO) test -count=1 -parallel 8 -vet=off -ldflags='-s -w'
MODULE := github.com/reftrack/reftrack
# pkg/api's tests that send one request at a time (the detector has nothing to watch in them): the sweeps,
# the fuzz targets' seeds, the portal's, and the tables of roles, refusals, ranges and shapes per route.
SWEEP_TESTS := TestHostileInputNever5xx TestAccountRoutesLimitedPerToken TestBodyMembersOfEveryType Fuzz.* TestPortal.* \
	TestPartnerRoutesRoles TestLedgerRoles TestWebhookRoles TestManagementRoles TestLead401And403 \
	TestSessionCheckedBeforeCSRF TestRequiredCredentialsFromThePolicy TestEveryOperationAnswers TestSpecIsServed \
	TestErrorShapesPerRoute TestEveryErrorCarriesACode TestBodyNotAnObjectAfterAccess TestUnstorableTextRefused \
	TestRequestValidation TestSaleValidation TestNullOptionalFieldsAccepted TestLedgerConflictsAndNotFound \
	TestUpdateProgramRanges TestUpdateProgramFieldTypes TestCliInitRanges TestLedgerInputRanges TestPerformanceRefusals \
	TestWebhookSchemaExamplesFit TestWebhookSamplesFitTheSpec TestMalformedFormsAndQueriesOnPages \
	TestPagesAnswerHostileSegmentsWithNotFound TestSecurityHeaders
empty :=
space := $(empty) $(empty)
SWEEPS := ^($(subst $(space),|,$(strip $(SWEEP_TESTS))))$$
go-test: $(TRACKER_DEPS) $(SDK_TS_DEPS) $(MAILPIT)
	@$(MAKE) --no-print-directory -j3 --output-sync=target go-test-race go-test-plain go-test-sweeps

go-test-race:
	GORACE=atexit_sleep_ms=0 $(GO_TEST) -race -o $(TEST_BINS)/race/ -skip '$(SWEEPS)' ./pkg/api $$($(GO) list -f '{{if or .TestGoFiles .XTestGoFiles}}{{.ImportPath}}{{end}}' ./... | grep -v -x -F $(foreach p,pkg/api $(PLAIN_PKGS),-e $(MODULE)/$(p)))
	cd sdk && GORACE=atexit_sleep_ms=0 $(GO_TEST) -race -o $(TEST_BINS)/sdk-race/ ./...

go-test-plain:
	$(GO_TEST) -o $(TEST_BINS)/plain/ $(foreach p,$(PLAIN_PKGS),./$(p))

# The sweeps beside the plain packages, not after them: the browser tests there mostly wait on Chromium.
go-test-sweeps:
	$(GO_TEST) -o $(TEST_BINS)/sweeps/ -run '$(SWEEPS)' ./pkg/api

# The client generators integrators use (orval, @hey-api/openapi-ts, openapi-typescript + openapi-fetch,
# swagger-typescript-api, tsc), pinned in clients/package-lock.json; ogen is pinned by clients/ogen/go.mod.
CLIENTS_DEPS := clients/node_modules/.package-lock.json
$(CLIENTS_DEPS): clients/package.json clients/package-lock.json
	cd clients && npm ci --no-audit --no-fund --loglevel=error

## clients: generate clients from the served spec with ogen, openapi-typescript + openapi-fetch,
## @hey-api/openapi-ts, orval and swagger-typescript-api, compile them strictly (go build, tsc --strict, the
## generated code too) and drive each through a click, a server-mode lead, a sale, the duplicate sale's
## typed 409, a refund and readiness against a real server (clients/clients_test.go; about four minutes,
## so a CI step of its own, not part of `make test`)
clients: $(CLIENTS_DEPS)
	REFTRACK_CLIENTS=1 REFTRACK_REQUIRE_TOOLS=1 $(GO) test -count=1 -run '^TestGeneratedClients$$' ./clients/

## test-ua-full: the fast crawler check against crawlerdetect's own on its whole browser list (165,634
## User-Agents, from the module cache) and crawler list; about three minutes, so not part of `make test`
test-ua-full:
	REFTRACK_UA_FULL=1 $(GO) test -count=1 -run 'TestSameAsReferenceOnAllDevices' -v ./pkg/useragent/

## model: the ledger's model-based test at length (pkg/api/ledger_model_test.go): MODEL_STEPS random requests
## (default 10,000) in concurrent batches on MODEL_SERVERS servers, checked against the model after each
## batch; MODEL_SEED repeats a run's choices. `make test` runs 150 of them.
MODEL_STEPS ?= 10000
MODEL_SERVERS ?= 4
MODEL_SEED ?=
model:
	REFTRACK_MODEL_STEPS=$(MODEL_STEPS) REFTRACK_MODEL_RUNNERS=$(MODEL_SERVERS) REFTRACK_MODEL_SEED=$(MODEL_SEED) \
		GORACE=atexit_sleep_ms=0 $(GO) test -race -count=1 -parallel $(MODEL_SERVERS) -timeout 60m -run '^TestLedgerModel$$' -v ./pkg/api/ | grep -v '^=== \(RUN\|PAUSE\|CONT\)'

## bench: load benchmark of the click (a few User-Agents, and click-ua: one of its own per request), lead, sale
## and refund routes against a real server and Postgres, each beside its pgbench anchor in the same run, with the Go load generator and wrk (when installed); Markdown
## report on stdout (docs/performance.md keeps the latest). BENCH_FLAGS passes flags, e.g. '-runs 3' for the
## spread or '-profile prof' for CPU profiles of the server.
BENCH_FLAGS ?=
bench: build
	$(GO) build -o bin/loadgen ./cmd/loadgen
	./bin/loadgen -reftrackd bin/reftrackd $(BENCH_FLAGS)

# apt-ensure installs the Debian package of each missing command (pairs command:package) when apt-get can (as
# root or through passwordless sudo), else names the command that installs them and fails.
define apt-ensure
	@missing=""; for pair in $(1); do command -v "$${pair%%:*}" >/dev/null || missing="$$missing $${pair##*:}"; done; \
	if [ -n "$$missing" ]; then \
		if command -v apt-get >/dev/null && { [ "$$(id -u)" -eq 0 ] || sudo -n true 2>/dev/null; }; then \
			echo "installing$$missing (Debian packages)"; sudo=""; [ "$$(id -u)" -eq 0 ] || sudo=sudo; \
			$$sudo apt-get update -qq && $$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
		else echo "$(2) needs:$$missing (sudo apt-get install -y$$missing)"; exit 1; fi; \
	fi
endef

# make test needs Debian's chromium-headless-shell (the browser tests; Chromium's old headless mode, which
# costs a third of the CPU of the full browser's), gcc (the race detector uses cgo) and npm (the spec
# linters, the TypeScript SDK, playwright-core); installed when missing and apt-get can.
test-deps:
	$(call apt-ensure,chromium-headless-shell:chromium-headless-shell gcc:gcc npm:npm,make test)

# The cluster runs Debian's pgbouncer (1.18), haproxy and redis-server beside PostgreSQL's binaries; installed
# when missing and apt-get can.
cluster-deps:
	$(call apt-ensure,pgbouncer:pgbouncer haproxy:haproxy redis-server:redis-server,make cluster)

## cluster: three reftrackd replicas behind HAProxy, PgBouncer (transaction pooling), Redis and a PostgreSQL
## cluster of their own, with a seeded program; prints the one URL to use; Ctrl-C stops and removes it all
cluster: build cluster-deps
	./bin/cluster -reftrackd bin/reftrackd

## test-cluster: the cluster tests (pkg/platform/localcluster): the flow through the balancer, a rate limit held
## across replicas, mixed load through the pooler with every counter checked, a replica killed under load,
## outbound webhooks delivered by the replicas through the pooler (and with a replica killed while sending)
test-cluster: cluster-deps
	REFTRACK_CLUSTER=1 $(GO) test -count=1 -v -timeout 15m ./pkg/platform/localcluster/

## chaos: faults under load on a PostgreSQL cluster of its own (never the shared one): SIGKILL of reftrackd,
## then a PostgreSQL stop and start, and webhook receivers of 30 programs going down and up; prints acknowledged
## vs stored clicks and sales, 5xx, connection errors and recovery times, then waits for the webhook deliveries
## and prints delivered, duplicates and failed attempts; fails when an acknowledged event is missing or its
## sale.created never reached its receiver, or a receiver got another program's event (docs/reliability.md
## keeps runs). About 2 minutes; not part of `make test`. CHAOS_FLAGS passes flags, e.g.
## CHAOS_FLAGS='-duration 60s -concurrency 8' or '-receivers 0' (no webhooks).
CHAOS_FLAGS ?=
chaos: build
	./bin/chaos -reftrackd bin/reftrackd $(CHAOS_FLAGS)

# Every fuzz target of every package (the routes outsiders write to in pkg/api, the User-Agent parser in
# pkg/useragent, any added later; the Go SDK's module too), found in the test files' sources as
# `dir:FuzzName` words: `func FuzzName(f *testing.F)` at the start of a line, as gofmt writes it.
# `make test` runs their seeds and committed corpus (testdata/fuzz/<target>); `make fuzz` explores further.
# docs/fuzz_test.go (TestMakeFuzzRunsEveryTarget) checks this list against the Go parser's.
FUZZ_TARGETS = $(shell grep -rEo --include='*_test.go' --exclude-dir=node_modules --exclude-dir=testdata \
	--exclude-dir=.git --exclude-dir=.data --exclude-dir=bin '^func Fuzz[A-Za-z0-9_]*[(]([A-Za-z0-9_]+ )?[*]testing[.]F[)]' . \
	| sed -E 's|^(.*)/[^/]*:func (Fuzz[A-Za-z0-9_]*).*$$|\1:\2|' | LC_ALL=C sort -u)
FUZZTIME ?= 30s
# Minimising each new interesting input takes up to a minute by default, a whole short run's worth.
FUZZMINIMIZETIME ?= 1s

## fuzz-targets: list every fuzz target `make fuzz` runs, one `dir:FuzzName` a line
fuzz-targets:
	@printf '%s\n' $(FUZZ_TARGETS)

## fuzz: fuzz every target of every package for FUZZTIME (default 30s), one after another (go test fuzzes one
## target of one package at a time); an input that fails is written to <package>/testdata/fuzz/<target>/
## (commit it: it becomes a regression seed) and the run fails at the end
# Go 1.26's fuzzing can end a target with a bare "context deadline exceeded" when -fuzztime runs out while a
# worker is busy (golang/go#75804, fixed in Go 1.27): no input failed and none is written, so that is said
# and not counted as a finding.
fuzz:
	@failed=""; out=$$(mktemp); trap 'rm -f "$$out"' EXIT; \
	for x in $(FUZZ_TARGETS); do dir=$${x%%:*}; t=$${x##*:}; \
		echo "== $$dir $$t ($(FUZZTIME))"; \
		if ! (cd "$$dir" && $(GO) test -run '^$$' -fuzz "^$$t\$$" -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZETIME) .) 2>&1 | tee "$$out"; then \
			if grep -qx '    context deadline exceeded' "$$out" && ! grep -q 'Failing input written to' "$$out"; then \
				echo "(not a finding: the fuzzer's own deadline at the end of -fuzztime, golang/go#75804)"; \
			else failed="$$failed $$dir:$$t"; fi; \
		fi; \
	done; \
	if [ -n "$$failed" ]; then echo "fuzzing found failures in:$$failed"; exit 1; fi
