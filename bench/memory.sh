#!/usr/bin/env bash
# Memory under sustained load: Portico serves a 1 KiB file to wrk (1 thread, 64 connections)
# until REQUESTS have been answered (default 1,000,000), sampling its RSS every 2 s. Prints the
# samples and the verdict: final RSS under 100 MB and no upward trend over the second half.
# Usage: bench/memory.sh [REQUESTS]. Needs wrk (installed from Debian when missing, as root).
set -euo pipefail
cd "$(dirname "$0")/.."
REQUESTS=${1:-1000000}
PORT=18490
source bench/common.sh
need wrk:wrk

mkdir -p "$tmp/www"
random_text "$tmp/www/1k.html" 1024
printf 'global:\n  workers: 1\n  port: "127.0.0.1:%s"\n  wwwroot: %s\n' "$PORT" "$tmp/www" > "$tmp/portico.yaml"
taskset -c 0 node "${PORTICO_ARGS[@]}" run -c "$tmp/portico.yaml" 2>"$tmp/err" &
pid=$!
wait_for "http://127.0.0.1:$PORT/1k.html"

# A probe run sizes the measurement so it answers about REQUESTS requests.
rate=$(taskset -c 1 wrk -t1 -c64 -d3s "http://127.0.0.1:$PORT/1k.html" | awk '/Requests\/sec/ { printf "%d", $2 }')
seconds=$(( (REQUESTS + rate - 1) / rate + 1 ))
echo "probe: $rate requests/s; measuring for ${seconds}s"
samples=()
taskset -c 1 wrk -t1 -c64 -d"${seconds}s" "http://127.0.0.1:$PORT/1k.html" > "$tmp/wrk.out" &
wrk_pid=$!
while kill -0 $wrk_pid 2>/dev/null; do
  samples+=("$(ps -o rss= -p $pid | tr -d ' ')")
  sleep 2
done
samples+=("$(ps -o rss= -p $pid | tr -d ' ')")
total=$(awk '/requests in/ { print $1 }' "$tmp/wrk.out")
echo "requests answered: $((total + rate * 3))"
echo "RSS samples (MiB): $(printf '%s\n' "${samples[@]}" | awk '{ printf "%.1f ", $1 / 1024 }')"
printf '%s\n' "${samples[@]}" | awk '
  { v[NR] = $1 } END {
    half = int(NR / 2); a = 0; b = 0
    for (i = half + 1; i <= half + int((NR - half) / 2); i++) { a += v[i]; na++ }
    for (i = half + int((NR - half) / 2) + 1; i <= NR; i++) { b += v[i]; nb++ }
    final = v[NR] / 1024
    printf "final RSS %.1f MiB (target < 100); third quarter mean %.1f MiB, last quarter mean %.1f MiB\n", final, a / na / 1024, b / nb / 1024
  }'
