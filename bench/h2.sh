#!/usr/bin/env bash
# HTTP/2 over TLS 1.3 throughput: h2load (16 connections, 10 streams each) for a 1 KiB file against
# Portico and a minimal node:http2 server on the core stream API answering from memory
# (bench/minimal-h2-server.mjs),
# each alone on CPU 0 with h2load on CPU 1. Prints requests/s and the ratio (target ≥ 0.8).
# Usage: bench/h2.sh [SECONDS, default 10]. Installs Debian's nghttp2-client when missing (root).
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_PER_RUN=${1:-10}
PORT=18580
source bench/common.sh
need h2load:nghttp2-client
TLS=test/fixtures/tls

mkdir -p "$tmp/www"
head -c 1024 /dev/urandom | base64 -w 76 | head -c 1024 > "$tmp/www/1k.html"
cat > "$tmp/portico.yaml" <<YAML
global:
  port: "127.0.0.1:$((PORT + 1))"
  sport: "127.0.0.1:$PORT"
  secure: true
  cert: $PWD/$TLS/server.crt
  key: $PWD/$TLS/server.key
  tlsMinVersion: TLSv1.3
  wwwroot: $tmp/www
YAML

measure() { # name, command...
  local name=$1; shift
  taskset -c 0 "$@" >"$tmp/$name.out" 2>&1 &
  pid=$!
  wait_for "https://127.0.0.1:$PORT/1k.html"
  taskset -c 1 h2load -c16 -m10 -D 2 "https://127.0.0.1:$PORT/1k.html" >/dev/null 2>&1  # warm-up
  local rps
  rps=$(taskset -c 1 h2load -c16 -m10 -D "$SECONDS_PER_RUN" "https://127.0.0.1:$PORT/1k.html" 2>/dev/null | awk '/^finished in/ { gsub(",", "", $4); printf "%d", $4 }')
  kill $pid; wait $pid 2>/dev/null || true; pid=
  printf '%-10s %9s req/s\n' "$name" "$rps"
  echo "$rps" > "$tmp/$name.rps"
}

echo "h2load -c16 -m10, 1 KiB over TLS 1.3, ${SECONDS_PER_RUN}s"
measure minimal node bench/minimal-h2-server.mjs "$PORT" "$tmp/www" "$TLS/server.crt" "$TLS/server.key"
measure portico node --max-semi-space-size=8 bin/portico.js run -c "$tmp/portico.yaml"
awk -v p="$(cat "$tmp/portico.rps")" -v m="$(cat "$tmp/minimal.rps")" 'BEGIN { printf "portico / minimal: %.2f (target >= 0.8)\n", p / m }'
