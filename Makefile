# pvebill — make run (embedded default), make test (SQLite + MariaDB when PVEBILL_TEST_MYSQL_DSN is set)
GO        ?= go
PKGS      := ./...
BENCHTIME ?= 1s
BENCHCOUNT ?= 1

.PHONY: run build test test-php test-short lint lint-install deadcode check bench bench-smoke bench-micro fuzz tidy-check promtool
.PHONY: generate openapi-lint openapi-clients grafana-lint php-lint
.PHONY: chaos chaos-galera chaos-galera-short chaos-agent bench-galera

# Pinned analysis tools. golangci-lint is built from the Go module proxy with this toolchain (so
# never with one older than go.mod's) into bin/tools; deadcode runs through go run.
GOLANGCI_LINT_VERSION ?= v2.15.0
DEADCODE_VERSION      ?= v0.52.0
TOOLS_BIN             := $(CURDIR)/bin/tools
GOLANGCI_LINT         ?= $(TOOLS_BIN)/golangci-lint

run:
	$(GO) run . serve

build:
	CGO_ENABLED=0 $(GO) build -trimpath -o bin/pvebill .

test:
	$(GO) test -race -count=1 -timeout 20m $(PKGS)
	@$(MAKE) --no-print-directory test-php

# The WHMCS module's and the FOSSBilling manager's PHP tests against a real `pvebill serve`
# (scripts/whmcs-test.sh, scripts/fossbilling-test.sh). Without
# php they are skipped with a message, except in CI (CI set), where that is a failure.
test-php:
	@if command -v php >/dev/null 2>&1; then scripts/whmcs-test.sh && scripts/fossbilling-test.sh; \
	elif [ -n "$$CI" ]; then echo "test-php: php is missing and CI is set; install php-cli" >&2; exit 1; \
	else echo "test-php: php is not installed; skipping the WHMCS module tests (apt-get install php-cli)"; fi

test-short:
	$(GO) test -count=1 -short $(PKGS)

# The long chaos run (chaos_test.go): three replicas on MariaDB, >= 5,000 operations, >= 50
# SIGKILLs. make test runs the short variant. CHAOS_SEED picks the seed. Like make bench it runs
# on PVEBILL_TEST_MYSQL_DSN or else root without a password on 127.0.0.1:3306, and it fails (never
# skips) when that database is missing.
CHAOS_SEED ?= 1
CHAOS_DSN  ?= $(or $(PVEBILL_TEST_MYSQL_DSN),root:@tcp(127.0.0.1:3306)/)
chaos:
	PVEBILL_TEST_MYSQL_DSN='$(CHAOS_DSN)' PVEBILL_TEST_REQUIRE_MYSQL=1 PVEBILL_TEST_CHAOS=long PVEBILL_TEST_CHAOS_SEED=$(CHAOS_SEED) \
	  $(GO) test -count=1 -timeout 90m -run '^TestChaosReplicas$$' -v .

# The chaos run on a three-node MariaDB Galera cluster started by scripts/galera.sh on loopback
# ports 13306-13308 (chaos_galera_test.go): >= 3,000 operations, >= 20 database-node kills, one
# node at a time. chaos-galera-short is the form .ci/run runs. Both need mariadbd, galera-4 and
# rsync, and fail when they are missing.
chaos-galera:
	PVEBILL_TEST_GALERA=long PVEBILL_TEST_CHAOS_SEED=$(CHAOS_SEED) $(GO) test -count=1 -timeout 120m -run '^TestChaosGalera$$' -v .

chaos-galera-short:
	PVEBILL_TEST_GALERA=short PVEBILL_TEST_CHAOS_SEED=$(CHAOS_SEED) $(GO) test -count=1 -timeout 20m -run '^TestChaosGalera$$' -v .

# The agent's long chaos run (agent_flows_test.go): 3,000 operations through a real agent that is
# killed and whose tunnel is cut without a FIN, in turn every 6 s, at least 30 of each.
chaos-agent:
	PVEBILL_TEST_CHAOS_AGENT=long $(GO) test -count=1 -timeout 90m -run '^TestAgentChaosKillsAndCuts$$' -v .

lint: lint-install
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet $(PKGS)
	$(GO) test -count=1 -run '^TestNoKindComparisonsOutsideKinds$$' ./modules/kinds/
	@$(MAKE) --no-print-directory doccheck
	@$(MAKE) --no-print-directory shell-lint
	$(GOLANGCI_LINT) run $(PKGS)

# The shell scripts (.ci/run and every tracked *.sh) against shellcheck. Without shellcheck it is
# skipped with a message, except in CI (CI set), where .ci/run installs it.
shell-lint:
	@if command -v shellcheck >/dev/null 2>&1; then shellcheck .ci/run $$(git ls-files '*.sh'); \
	elif [ -n "$$CI" ]; then echo "shell-lint: shellcheck is missing and CI is set" >&2; exit 1; \
	else echo "shell-lint: shellcheck is not installed; skipping (apt-get install shellcheck)"; fi

# Comments cite only what the repository holds: rule ids defined in docs/design.md, docs/*.md
# files and their numbered sections, no document outside the repository (scripts/doccheck).
doccheck:
	$(GO) run ./scripts/doccheck

# Installs the pinned golangci-lint unless that version is already there (.ci/run calls it).
lint-install:
	@if ! $(GOLANGCI_LINT) version 2>/dev/null | grep -q 'version $(patsubst v%,%,$(GOLANGCI_LINT_VERSION)) '; then \
	  echo "installing golangci-lint $(GOLANGCI_LINT_VERSION) into $(TOOLS_BIN)"; \
	  GOBIN=$(TOOLS_BIN) $(GO) install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION); fi

# Functions nothing calls, tests included (golang.org/x/tools/cmd/deadcode): fails on any.
deadcode:
	@out=$$($(GO) run golang.org/x/tools/cmd/deadcode@$(DEADCODE_VERSION) -test $(PKGS)); \
	if [ -n "$$out" ]; then echo "$$out"; exit 1; fi

tidy-check:
	$(GO) mod tidy && git diff --exit-code go.mod go.sum

# Prometheus config and alert rules (make test runs the same checks, plus promtool check
# metrics on a real scrape, through TestAlertRules and TestDashboardsAndAlertsUseExportedNames).
promtool:
	cd docker/prometheus && promtool check config prometheus.yml && promtool test rules alerts_test.yml

check: lint tidy-check promtool

# The nine performance scenarios of scripts/bench at full scale (the first seven about 27 minutes
# on 2 cores, 20 of them the usage tiers' three simulated years of 1,000 guests; the scheduled
# backups of scenario 9 about 5 more):
# prints the table, writes scripts/bench/results.json, fails on a missed target. The targets are
# for the production database: the database scenarios run on MariaDB, at PVEBILL_TEST_MYSQL_DSN
# or else root without a password on 127.0.0.1:3306. BENCH_DSN= runs them on SQLite instead,
# whose figures are not what the targets are for (see docs/performance.md).
BENCH_DSN ?= $(or $(PVEBILL_TEST_MYSQL_DSN),root:@tcp(127.0.0.1:3306)/)
bench:
	PVEBILL_TEST_MYSQL_DSN='$(BENCH_DSN)' $(GO) test -count=1 -timeout 60m -run '^TestBench$$' -v ./scripts/bench -args -bench.full -bench.out=results.json

# The webhook scenario on the single MariaDB and on a node of a three-node Galera cluster in the
# same run (scripts/bench-galera.sh): fails when the Galera node's create throughput is below
# 0.6x the single server's.
bench-galera:
	BENCH_DSN='$(BENCH_DSN)' GO=$(GO) scripts/bench-galera.sh

# The same scenarios scaled down to seconds (make test runs them too, through ./...).
bench-smoke:
	$(GO) test -race -count=1 -run '^TestBench$$' -v ./scripts/bench

# Go micro-benchmarks (parsers, signature check); compare runs with benchstat.
bench-micro:
	$(GO) test -run='^$$' -bench=. -benchmem -benchtime=$(BENCHTIME) -count=$(BENCHCOUNT) $(PKGS)

# FUZZTIME per target; each parser's fuzz target runs in turn.
FUZZTIME ?= 60s
FUZZPKGS ?= ./modules/pve/pveconf/ ./server/ ./server/config/ ./i18n/
fuzz:
	@for p in $(FUZZPKGS); do for t in $$($(GO) test -list '^Fuzz' $$p | grep '^Fuzz'); do \
	  echo "== $$p $$t"; $(GO) test -run='^$$' -fuzz="^$$t$$" -fuzztime=$(FUZZTIME) $$p || exit 1; done; done

# The WHMCS module's error-code constants, written from i18n.Codes (scripts/phpcodes; a Go test
# fails when the committed file is stale).
generate:
	$(GO) generate ./scripts/phpcodes

# openapi.yaml against redocly's recommended rules, every warning an error (scripts/redocly.yaml);
# @redocly/cli is pinned in scripts/package-lock.json and installed with npm ci. Needs node >= 20.19.
# It then generates the Go client (oapi-codegen) and the TypeScript client (openapi-typescript) and
# compiles both (make openapi-clients).
openapi-lint:
	npm ci --prefix scripts --no-audit --no-fund --loglevel=error
	scripts/node_modules/.bin/redocly lint --config scripts/redocly.yaml --format=stylish openapi.yaml
	@$(MAKE) --no-print-directory openapi-clients

# The clients generated from openapi.yaml compile: oapi-codegen's Go client under go build and go
# vet, openapi-typescript's types under tsc --strict, each with a small file that uses them
# (scripts/openapi-clients.sh; the Go generator is pinned in scripts/openapi-clients/go.mod, the
# npm ones in scripts/package-lock.json). Needs the npm ci of openapi-lint.
openapi-clients:
	GO=$(GO) scripts/openapi-clients.sh

# The Grafana dashboards against grafana/dashboard-linter, warnings included (--strict). The linter
# is a Go tool pinned in its own module (scripts/grafana-lint/go.mod and go.sum), built on first use.
grafana-lint:
	@for f in docker/grafana/dashboards/*.json; do echo "== $$f"; \
	  GOFLAGS="$$GOFLAGS -modfile=scripts/grafana-lint/go.mod" $(GO) tool dashboard-linter lint --strict "$$f" || exit 1; done

# The WHMCS module and its tests against PSR-12 (whmcs/phpcs.xml names the accepted exceptions);
# warnings fail too. Debian: apt-get install php-codesniffer.
php-lint:
	cd whmcs && phpcs --warning-severity=1
	cd fossbilling && phpcs --warning-severity=1
