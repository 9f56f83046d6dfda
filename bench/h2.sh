#!/usr/bin/env bash
# HTTP/2 over TLS 1.3 throughput: h2load (16 connections, 10 streams each) for a 1 KiB file against
# Portico and a minimal node:http2 server on the core stream API answering from memory
# (bench/minimal-h2-server.mjs), each alone on CPU 0 with h2load on CPU 1, alternating over rounds.
# Prints requests/s with p50 and p99 per round (from h2load's per-request log), the medians and
# the ratio (target ≥ 0.8).
# Usage: bench/h2.sh [SECONDS per measurement, default 10] [ROUNDS, default 3]. Installs Debian's
# nghttp2-client when missing (root).
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_PER_RUN=${1:-10}
ROUNDS=${2:-3}
PORT=18580
source bench/common.sh
need h2load:nghttp2-client taskset:util-linux
TLS=test/fixtures/tls

mkdir -p "$tmp/www"
random_text "$tmp/www/1k.html" 1024
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

url="https://127.0.0.1:$PORT/1k.html"
# h2load_p99 — 2 s of warm-up, then $SECONDS_PER_RUN s → "requests/s p50 p99" (latencies in ms).
h2load_p99() {
  taskset -c 1 h2load -c16 -m10 -D 2 "$url" >/dev/null 2>&1
  local rps
  rps=$(taskset -c 1 h2load -c16 -m10 -D "$SECONDS_PER_RUN" --log-file="$tmp/requests.log" "$url" 2>/dev/null |
    awk '/^finished in/ { gsub(",", "", $4); printf "%d", $4 }')
  sort -n -k3 "$tmp/requests.log" |
    awk -v rps="$rps" '{ d[NR] = $3 } END { printf "%d %.2fms %.2fms", rps, d[int(NR * 0.5)] / 1000, d[int(NR * 0.99)] / 1000 }'
}

printf '%-6s %-15s %9s %9s %9s   (h2load -c16 -m10, 1 KiB over TLS 1.3, %ss)\n' round server 'req/s' p50 p99 "$SECONDS_PER_RUN"
for round in $(seq "$ROUNDS"); do
  for name in minimal portico; do
    case $name in
      minimal) taskset -c 0 node bench/minimal-h2-server.mjs "$PORT" "$tmp/www" "$TLS/server.crt" "$TLS/server.key" >"$tmp/$name.out" 2>&1 & ;;
      portico) taskset -c 0 node --max-semi-space-size=8 bin/portico.js run -c "$tmp/portico.yaml" >"$tmp/$name.out" 2>&1 & ;;
    esac
    pids+=($!)
    wait_for "$url"
    record "$round" "$name" "$(h2load_p99)"
    stop
  done
done
echo
medians minimal portico
echo "portico / minimal: $(ratio "${med[portico]}" "${med[minimal]}") (target >= 0.8)"
echo "median of each round's portico / minimal: $(round_ratios "${runs[portico]}" "${runs[minimal]}")"
