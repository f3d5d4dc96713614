#!/usr/bin/env bash
# Generates the two clients an integrator would generate from openapi.yaml and compiles them, so
# that the contract stays usable by code generators (make openapi-clients, part of make
# openapi-lint):
#   - Go: oapi-codegen, pinned with its checksums in scripts/openapi-clients/go.mod and go.sum,
#     writes the client into a temporary module (a copy of that go.mod) that go build and go vet
#     compile together with scripts/openapi-clients/usage.go;
#   - TypeScript: openapi-typescript, pinned in scripts/package-lock.json, writes the types that
#     tsc (typescript, pinned there too) checks with --strict together with
#     scripts/openapi-clients/usage.ts.
# Needs go (GO names another) and the packages of `npm ci --prefix scripts`.
set -euo pipefail
go=${GO:-go}
root=$(cd "$(dirname "$0")/.." && pwd)
here="$root/scripts/openapi-clients"
bin="$root/scripts/node_modules/.bin"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "== Go client (oapi-codegen)"
mkdir "$tmp/go"
cp "$here/go.mod" "$here/go.sum" "$here/usage.go" "$tmp/go/"
(cd "$here" && "$go" tool oapi-codegen -config oapi-codegen.yaml -o "$tmp/go/pvebill.gen.go" "$root/openapi.yaml")
(cd "$tmp/go" && "$go" build -tags openapiclient ./... && "$go" vet -tags openapiclient ./...)
echo "generated $(wc -l <"$tmp/go/pvebill.gen.go") lines; go build and go vet passed"

echo "== TypeScript client (openapi-typescript)"
mkdir "$tmp/ts"
cp "$here/usage.ts" "$tmp/ts/"
"$bin/openapi-typescript" "$root/openapi.yaml" -o "$tmp/ts/pvebill.ts"
"$bin/tsc" --noEmit --strict --target es2022 --module nodenext --moduleResolution nodenext \
  "$tmp/ts/pvebill.ts" "$tmp/ts/usage.ts"
echo "generated $(wc -l <"$tmp/ts/pvebill.ts") lines; tsc --noEmit --strict passed"
