#!/usr/bin/env bash
# Fetches the browser console's client libraries from the npm registry at the versions pinned in
# package-lock.json (npm ci checks each tarball against the integrity hash recorded there),
# copies only the files the console page loads into modules/console/assets/vendor, and writes
# modules/console/assets/vendor/SHA256SUMS: the package versions and integrity hashes, then a
# SHA-256 per copied file. The copied files are committed, so building and testing pvebill needs
# no network; TestVendoredAssetsMatchTheLock (modules/console) checks them against both files.
# Usage: scripts/console-assets/fetch.sh   (to upgrade: change package.json, run
# `npm install --package-lock-only` here, then this script)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out="$root/modules/console/assets/vendor"
command -v npm >/dev/null || { echo "npm is not installed (Debian: apt-get install npm)" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp "$here/package.json" "$here/package-lock.json" "$tmp/"
npm ci --prefix "$tmp" --ignore-scripts --no-audit --no-fund --loglevel=error
nm="$tmp/node_modules"

rm -rf "$out"
mkdir -p "$out/xterm" "$out/novnc"
# xterm.js: the ES module build, its stylesheet and the fit add-on.
cp "$nm/@xterm/xterm/lib/xterm.mjs" "$nm/@xterm/xterm/css/xterm.css" "$out/xterm/"
cp "$nm/@xterm/xterm/LICENSE" "$out/xterm/LICENSE"
cp "$nm/@xterm/addon-fit/lib/addon-fit.mjs" "$out/xterm/"
cp "$nm/@xterm/addon-fit/LICENSE" "$out/xterm/LICENSE.addon-fit"
# noVNC: its ES modules as published (core/ and the pako it imports), served unbundled.
(cd "$nm/@novnc/novnc" && find core vendor/pako -name "*.js" | while read -r f; do install -D -m 0644 "$f" "$out/novnc/$f"; done)
cp "$nm/@novnc/novnc/LICENSE.txt" "$out/novnc/LICENSE.txt"
cp "$nm/@novnc/novnc/vendor/pako/LICENSE" "$out/novnc/vendor/pako/LICENSE"

{
  echo "# Written by scripts/console-assets/fetch.sh; do not edit."
  node -e '
    const lock = require(process.argv[1]);
    for (const [k, v] of Object.entries(lock.packages)) {
      if (k) console.log("# package " + k.replace("node_modules/", "") + " " + v.version + " " + v.integrity);
    }' "$here/package-lock.json"
  (cd "$out" && find . -type f ! -name SHA256SUMS | sed 's|^\./||' | LC_ALL=C sort | xargs sha256sum)
} > "$tmp/SHA256SUMS"
mv "$tmp/SHA256SUMS" "$out/SHA256SUMS"
echo "console assets written to ${out#"$root"/}"
