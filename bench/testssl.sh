#!/usr/bin/env bash
# testssl.sh (Debian's testssl.sh package) against Portico's default TLS settings on 127.0.0.1,
# with the committed test certificate. Prints the vulnerability section and the rating summary.
# Usage: bench/testssl.sh. Installs testssl.sh when missing (as root).
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/common.sh
need testssl:testssl.sh
PORT=18780
mkdir -p "$tmp/www" && echo ok > "$tmp/www/index.html"
printf 'global:\n  workers: 1\n  port: "127.0.0.1:%s"\n  sport: "127.0.0.1:%s"\n  secure: true\n  cert: %s\n  key: %s\n  wwwroot: %s\n' \
  "$((PORT + 1))" "$PORT" "$PWD/test/fixtures/tls/server.crt" "$PWD/test/fixtures/tls/server.key" "$tmp/www" > "$tmp/portico.yaml"
bin/portico.js run -c "$tmp/portico.yaml" 2>"$tmp/err" &
pid=$!
wait_for "https://127.0.0.1:$PORT/"
testssl --quiet --color 0 --warnings off --protocols --vulnerable "127.0.0.1:$PORT" > "$tmp/testssl.out" 2>&1 || true
grep -vE '^\s*$|^ (Start|Done|rDNS|Service)' "$tmp/testssl.out"
flagged=$(grep -E 'VULNERABLE|potentially' "$tmp/testssl.out" | grep -vc 'not vulnerable' || true)
echo
echo "flagged: $flagged"
[[ $flagged == 0 ]]
