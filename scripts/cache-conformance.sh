#!/usr/bin/env bash
# The public HTTP caching test suite (github.com/http-tests/cache-tests) against Portico's `cache` +
# `rproxy`, as the suite's docker setup runs it against nginx or Varnish: its origin server, Portico
# in front of it, its command-line client through Portico. The suite is not on npm and its code is
# never committed here: this clones it (CACHE_TESTS_REPO, a URL or a local path) into a temporary
# folder at the pinned commit, installs its dependencies there and removes it afterwards.
# Prints the required tests passed out of all required ones, then each required failure.
# Usage: scripts/cache-conformance.sh [TEST-ID] (one test, with the suite's request/response dump).
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=${CACHE_TESTS_REPO:-https://github.com/http-tests/cache-tests.git}
COMMIT=b55b8bda3dbb8c927c04e85bd8d496a8caa3e4ba
ORIGIN_PORT=${ORIGIN_PORT:-18600}
PROXY_PORT=${PROXY_PORT:-18601}

[[ -f dist/cli/main.js ]] || npm run build >/dev/null
tmp=$(mktemp -d)
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$tmp"' EXIT

git clone -q "$REPO" "$tmp/suite"
git -C "$tmp/suite" -c advice.detachedHead=false checkout -q "$COMMIT"
(cd "$tmp/suite" && npm install --silent --no-audit --no-fund --ignore-scripts >/dev/null)

# The origin reads its settings from npm's configuration variables.
(cd "$tmp/suite" && npm_config_protocol=http npm_config_port=$ORIGIN_PORT \
  npm_config_pidfile="$tmp/origin.pid" node test-engine/server/server.mjs >"$tmp/origin.log" 2>&1) &
pids+=($!)

cat >"$tmp/portico.yaml" <<EOF
global:
  port: "127.0.0.1:$PROXY_PORT"
  workers: 1
  loadModules: [cache, rproxy]
  proxyTo: http://127.0.0.1:$ORIGIN_PORT
EOF
node bin/portico.js run -c "$tmp/portico.yaml" 2>"$tmp/portico.log" &
pids+=($!)
for _ in $(seq 100); do
  curl -s -o /dev/null "http://127.0.0.1:$PROXY_PORT/" -m 1 && break
  sleep 0.1
done

cd "$tmp/suite"
if [[ $# -gt 0 ]]; then
  npm_config_base="http://127.0.0.1:$PROXY_PORT" npm_config_id="$1" node --no-warnings test-engine/cli.mjs
  exit 0
fi
npm_config_base="http://127.0.0.1:$PROXY_PORT" npm_config_id= npm_package_config_id= node --no-warnings test-engine/cli.mjs >"$tmp/results.json"
cp "$tmp/results.json" "${RESULTS_OUT:-/dev/null}"
node --no-warnings --input-type=module -e "
import tests from './tests/index.mjs'
import { determineTestResult, resultTypes } from './test-engine/lib/results.mjs'
import { readFileSync } from 'node:fs'
const results = JSON.parse(readFileSync('$tmp/results.json', 'utf8'))
let required = 0, passed = 0
const failures = []
for (const suite of tests) for (const test of suite.tests) {
  if (test.kind !== undefined && test.kind !== 'required') continue
  required++
  const r = determineTestResult(tests, test.id, results)
  if (r === resultTypes.pass) passed++
  else failures.push(test.id + ' ' + r[2] + ' ' + JSON.stringify(results[test.id]))
}
console.log('required tests passed: ' + passed + ' of ' + required)
for (const f of failures) console.log('  ' + f)
"
