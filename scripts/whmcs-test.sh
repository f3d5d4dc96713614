#!/usr/bin/env bash
# Runs the WHMCS module's PHP tests against a real `pvebill serve` on its embedded default
# (SQLite and the built-in Proxmox simulator) listening on a free loopback port, then stops it.
# With PHP's curl extension loaded the suite runs twice, once per HTTP transport of the module
# (curl, then PHP's stream wrapper), each against a fresh server. pvebill's completion callbacks
# go to the module's receiver (whmcs/tests/callback_receiver.php) under PHP's built-in server.
# Usage: scripts/whmcs-test.sh   (PVEBILL_TEST_FILTER=text runs only matching tests)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
command -v php >/dev/null || { echo "php is not installed (Debian: apt-get install php-cli)" >&2; exit 1; }
php -r 'exit(extension_loaded("dom") ? 0 : 1);' || { echo "PHP's dom extension is missing (Debian: apt-get install php-xml)" >&2; exit 1; }
# The client area's templates are rendered with Smarty, as WHMCS renders them.
[ -f /usr/share/php/smarty4/bootstrap.php ] || [ -f /usr/share/php/smarty3/Smarty.class.php ] ||
  { echo "Smarty is missing (Debian: apt-get install smarty4)" >&2; exit 1; }

tmp=$(mktemp -d)
pid=""
rpid=""
stop_server() {
  for p in "$pid" "$rpid"; do
    if [ -n "$p" ] && kill -0 "$p" 2>/dev/null; then
      kill "$p" 2>/dev/null || true
      wait "$p" 2>/dev/null || true
    fi
  done
  pid="" rpid=""
}
trap 'stop_server; rm -rf "$tmp"' EXIT

(cd "$root" && go build -o "$tmp/pvebill" .)

# run_suite TRANSPORT: a fresh server in its own directory, the PHP tests, the server stopped.
run_suite() {
  local dir="$tmp/$1" api="" sim="" secret client status=0 rport cbsecret
  mkdir -p "$dir/callbacks"
  # The billing side of completion callbacks: the module's receiver under PHP's built-in server.
  # shellcheck disable=SC2016 # PHP code: $s is PHP's variable, not the shell's
  rport=$(php -r '$s = stream_socket_server("tcp://127.0.0.1:0"); echo explode(":", stream_socket_get_name($s, false))[1];')
  cbsecret=$(php -r 'echo bin2hex(random_bytes(16));')
  RECEIVER_DIR="$dir/callbacks" RECEIVER_SECRET="$cbsecret" \
    php -S "127.0.0.1:$rport" "$root/whmcs/tests/callback_receiver.php" >"$dir/receiver.log" 2>&1 &
  rpid=$!
  # Port 0: the kernel picks a free port; the banner says which. Usage is sampled every second
  # so that UsageUpdate has figures within the test run.
  (cd "$dir" && PVEBILL_LISTEN=127.0.0.1:0 PVEBILL_JOBS_SWAP_SAMPLING="@every 1s" \
    PVEBILL_CLIENTS_0_CALLBACK_URL="http://127.0.0.1:$rport/modules/servers/pvebill/callback.php?source=pvebill" \
    PVEBILL_CLIENTS_0_CALLBACK_SECRET="$cbsecret" \
    exec "$tmp/pvebill" serve >"$dir/serve.out" 2>"$dir/serve.log") &
  pid=$!
  for _ in $(seq 1 100); do
    api=$(sed -n 's/^  API  *\(http:[^ ]*\).*/\1/p' "$dir/serve.out" 2>/dev/null | head -1)
    sim=$(sed -n 's/.*simulator at \(http:[^ ]*\).*/\1/p' "$dir/serve.out" 2>/dev/null | head -1)
    [ -n "$api" ] && [ -n "$sim" ] && [ -s "$dir/data/demo.yaml" ] && break
    kill -0 "$pid" 2>/dev/null || { echo "pvebill serve exited:" >&2; cat "$dir/serve.log" >&2; return 1; }
    sleep 0.1
  done
  [ -n "$api" ] || { echo "pvebill serve did not start:" >&2; cat "$dir/serve.log" >&2; return 1; }
  secret=$(sed -n 's/^ *secret: *//p' "$dir/data/demo.yaml" | head -1)
  client=$(sed -n 's/^ *- id: *//p' "$dir/data/demo.yaml" | head -1)
  echo "== WHMCS module tests, $1 transport, pvebill at $api"
  PVEBILL_URL="$api" PVEBILL_SIM_URL="$sim" PVEBILL_CLIENT="$client" PVEBILL_SECRET="$secret" \
    PVEBILL_CALLBACK_DIR="$dir/callbacks" PVEBILL_TEST_TRANSPORT="$1" php "$root/whmcs/tests/run.php" || status=$?
  if [ "$status" != 0 ] && [ -n "${PVEBILL_TEST_SHOW_LOG:-}" ]; then
    cat "$dir/serve.log" >&2
  fi
  stop_server
  return "$status"
}

status=0
if php -r 'exit(extension_loaded("curl") ? 0 : 1);'; then
  run_suite curl || status=1
fi
run_suite stream || status=1
exit "$status"
