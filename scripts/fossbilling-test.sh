#!/usr/bin/env bash
# Runs the FOSSBilling server manager's PHP tests (fossbilling/tests) against a real
# `pvebill serve` on its embedded default (SQLite and the built-in Proxmox simulator) listening
# on a free loopback port, then stops it.
# Usage: scripts/fossbilling-test.sh   (PVEBILL_TEST_FILTER=text runs only matching tests)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
command -v php >/dev/null || { echo "php is not installed (Debian: apt-get install php-cli)" >&2; exit 1; }

tmp=$(mktemp -d)
pid=""
# shellcheck disable=SC2317 # called by the EXIT trap below
stop_server() {
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  fi
  pid=""
}
trap 'stop_server; rm -rf "$tmp"' EXIT

(cd "$root" && go build -o "$tmp/pvebill" .)

dir="$tmp/serve"
mkdir -p "$dir"
# Port 0: the kernel picks a free port; the banner says which.
(cd "$dir" && PVEBILL_LISTEN=127.0.0.1:0 exec "$tmp/pvebill" serve >"$dir/serve.out" 2>"$dir/serve.log") &
pid=$!
api="" sim=""
for _ in $(seq 1 100); do
  api=$(sed -n 's/^  API  *\(http:[^ ]*\).*/\1/p' "$dir/serve.out" 2>/dev/null | head -1)
  sim=$(sed -n 's/.*simulator at \(http:[^ ]*\).*/\1/p' "$dir/serve.out" 2>/dev/null | head -1)
  [ -n "$api" ] && [ -n "$sim" ] && [ -s "$dir/data/demo.yaml" ] && break
  kill -0 "$pid" 2>/dev/null || { echo "pvebill serve exited:" >&2; cat "$dir/serve.log" >&2; exit 1; }
  sleep 0.1
done
[ -n "$api" ] || { echo "pvebill serve did not start:" >&2; cat "$dir/serve.log" >&2; exit 1; }
secret=$(sed -n 's/^ *secret: *//p' "$dir/data/demo.yaml" | head -1)
client=$(sed -n 's/^ *- id: *//p' "$dir/data/demo.yaml" | head -1)
echo "== FOSSBilling server manager tests, pvebill at $api"
status=0
PVEBILL_URL="$api" PVEBILL_SIM_URL="$sim" PVEBILL_CLIENT="$client" PVEBILL_SECRET="$secret" \
  php "$root/fossbilling/tests/run.php" || status=$?
if [ "$status" != 0 ] && [ -n "${PVEBILL_TEST_SHOW_LOG:-}" ]; then
  cat "$dir/serve.log" >&2
fi
exit "$status"
