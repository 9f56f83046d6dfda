#!/usr/bin/env bash
# HTTP/2 over TLS 1.3 throughput: h2load (16 connections, 10 streams each) for a 1 KiB file against
# Portico and a minimal node:http2 server on the core stream API answering from memory
# (bench/minimal-h2-server.mjs), twice: with the least head (type and length) and with a static
# server's head (minimal-head: Accept-Ranges, Last-Modified, ETag, Vary and Server too, as Portico
# and nginx send), which tells node:http2's cost for those fields apart from Portico's own work.
# All run at once on CPU 0, each on its own port; h2load (CPU 1) loads one at a time, back to back
# in each round, in reverse order on even rounds (see bench/static.sh: pairs measured within one
# of the shared machine's slow spells). All stay up for the whole run, as a server in production
# does: under HTTP/2 load a fresh Node process promotes nothing to the old generation for its
# first seconds (Portico ~5 s, the minimal server ~2 s), then every stream's objects
# (--trace-gc-nvp: ~0.9 MB per scavenge, pauses 0.6 → 2.5-3.8 ms), so a server restarted for each
# measurement is measured in its cheap first seconds (Portico read 0.84-0.96 that way, 0.57-0.77
# long-lived). Prints requests/s with p50 and p99 (from h2load's per-request log) and the
# server's CPU time per request per round, the medians and the ratios (target ≥ 0.8 against the
# least head). Usage: bench/h2.sh [SECONDS per measurement, default 10] [ROUNDS, default 3].
# Installs Debian's nghttp2-client when missing (root).
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
portico_tls_yaml "$tmp/portico.yaml" "$((PORT + 1))" "$PORT" "$tmp/www"

declare -A port=([portico]=$PORT [minimal]=$((PORT + 2)) [minimal-head]=$((PORT + 3))) server_pid cpus
# h2load_p99 URL PID — 2 s of warm-up, then $SECONDS_PER_RUN s → "requests/s p50 p99 CPU-µs/request"
# (latencies in ms).
h2load_p99() {
  taskset -c 1 h2load -c16 -m10 -D 2 "$1" >/dev/null 2>&1
  local rps before
  # h2load appends to its log: each measurement starts with an empty one.
  rm -f "$tmp/requests.log"
  before=$(cpu_ticks "$2")
  rps=$(taskset -c 1 h2load -c16 -m10 -D "$SECONDS_PER_RUN" --log-file="$tmp/requests.log" "$1" 2>/dev/null |
    awk '/^finished in/ { gsub(",", "", $4); printf "%d", $4 }')
  local ticks=$(($(cpu_ticks "$2") - before))
  sort -n -k3 "$tmp/requests.log" |
    awk -v rps="$rps" '{ d[NR] = $3 } END { printf "%d %.2fms %.2fms", rps, d[int(NR * 0.5)] / 1000, d[int(NR * 0.99)] / 1000 }'
  per_request_us "$ticks" "$(wc -l <"$tmp/requests.log")"
}

for name in minimal minimal-head portico; do
  url="https://127.0.0.1:${port[$name]}/1k.html"
  case $name in
    minimal) taskset -c 0 node bench/minimal-h2-server.mjs "${port[$name]}" "$tmp/www" "$TLS/server.crt" "$TLS/server.key" >"$tmp/$name.out" 2>&1 & ;;
    minimal-head) taskset -c 0 node bench/minimal-h2-server.mjs "${port[$name]}" "$tmp/www" "$TLS/server.crt" "$TLS/server.key" static-head >"$tmp/$name.out" 2>&1 & ;;
    portico) taskset -c 0 node "${PORTICO_ARGS[@]}" run -c "$tmp/portico.yaml" >"$tmp/$name.out" 2>&1 & ;;
  esac
  pids+=($!)
  server_pid[$name]=$!
  wait_for "$url"
done
printf '%-6s %-15s %9s %9s %9s %9s   (h2load -c16 -m10, 1 KiB over TLS 1.3, %ss)\n' round server 'req/s' p50 p99 'CPU µs/req' "$SECONDS_PER_RUN"
for round in $(seq "$ROUNDS"); do
  order=(minimal minimal-head portico)
  ((round % 2 == 0)) && order=(portico minimal-head minimal)
  for name in "${order[@]}"; do
    result=$(h2load_p99 "https://127.0.0.1:${port[$name]}/1k.html" "${server_pid[$name]}")
    cpus[$name]+="${result##* } "
    record "$round" "$name" "$result"
  done
done
echo
medians minimal minimal-head portico
echo "portico / minimal: $(ratio "${med[portico]}" "${med[minimal]}") (target >= 0.8)"
echo "median of each round's portico / minimal: $(round_ratios "${runs[portico]}" "${runs[minimal]}")"
echo "CPU per request, minimal / portico, median of each round's: $(round_ratios "${cpus[minimal]}" "${cpus[portico]}")"
# The same minimal server sending a static server's whole head: node:http2's cost for those fields
# on one side, Portico's own work on the other.
echo "minimal-head / minimal (the head's fields alone): $(ratio "${med[minimal-head]}" "${med[minimal]}")"
echo "portico / minimal-head (Portico's own work): $(ratio "${med[portico]}" "${med[minimal-head]}")   CPU per request, median of each round's: $(round_ratios "${cpus[minimal-head]}" "${cpus[portico]}")"
