#!/usr/bin/env bash
# make bench-galera: the webhook scenario of make bench (scenario 2, full scale) on the single
# MariaDB at BENCH_DSN and, in the same run, on node 1 of a three-node Galera cluster started by
# scripts/galera.sh; prints both signed-create throughputs and their ratio, and fails when the
# Galera node reaches less than 0.6x of the single server (R51; docs/operations.md, pvebill on a MariaDB
# Galera cluster). The scenario's own targets are printed, not enforced here (make bench does).
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
single=${BENCH_DSN:-root:@tcp(127.0.0.1:3306)/}
work=$(mktemp -d /tmp/pvebill-bench-galera.XXXXXX)
chmod 0755 "$work" # the nodes run as mysql, which must reach their folder
trap 'scripts/galera.sh down "$work/cluster" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT

scripts/galera.sh up "$work/cluster"
galera=$(scripts/galera.sh dsns | sed -n 1p)

run() { # NAME DSN
  echo "== webhook scenario on $1 ($2)"
  PVEBILL_TEST_MYSQL_DSN="$2" $GO test -count=1 -timeout 15m -run '^TestBench$' ./scripts/bench \
    -args -bench.full -bench.only=2 -bench.out="$work/$1.json" >"$work/$1.log" 2>&1 || true
  grep -E '^\| 2 webhook \| (signed create|create throughput)' "$work/$1.log" || { tail -n 40 "$work/$1.log"; exit 1; }
}
create() { # NAME -> req/s of the signed create through pvebill
  awk '/"name": "signed create, pvebill"/ { getline; gsub(/[^0-9.]/, ""); print; exit }' "$work/$1.json"
}

run single "$single"
run galera "$galera"
s=$(create single)
g=$(create galera)
awk -v s="$s" -v g="$g" 'BEGIN {
  r = g / s
  printf "signed create through pvebill: single MariaDB %.0f req/s, Galera node %.0f req/s, ratio %.2fx (target >= 0.6x)\n", s, g, r
  exit (r >= 0.6 ? 0 : 1)
}'
