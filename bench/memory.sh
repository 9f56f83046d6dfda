#!/usr/bin/env bash
# Memory under sustained load: Portico serves a 1 KiB file to wrk (1 thread, 64 connections)
# until REQUESTS have been answered (default 1,000,000), sampling the RSS of the whole server
# every 2 s: its one process, or with WORKERS above 1 the primary and every worker summed. Prints
# the samples, each process's RSS at the end, and the verdict: final RSS under 100 MB per process
# and no upward trend over the second half. With WORKERS=1 (the default) the server is
# pinned to CPU 0 and wrk to CPU 1; with more, neither is pinned.
# Usage: [WORKERS=N] bench/memory.sh [REQUESTS]. Needs wrk (installed from Debian when missing,
# as root).
set -euo pipefail
cd "$(dirname "$0")/.."
REQUESTS=${1:-1000000}
WORKERS=${WORKERS:-1}
PORT=18490
source bench/common.sh
need wrk:wrk

mkdir -p "$tmp/www"
random_text "$tmp/www/1k.html" 1024
printf 'global:\n  workers: %s\n  port: "127.0.0.1:%s"\n  wwwroot: %s\n' "$WORKERS" "$PORT" "$tmp/www" >"$tmp/portico.yaml"
server_cpu=(taskset -c 0)
client_cpu=(taskset -c 1)
((WORKERS > 1)) && server_cpu=() && client_cpu=()
"${server_cpu[@]}" node "${PORTICO_ARGS[@]}" run -c "$tmp/portico.yaml" 2>"$tmp/err" &
pid=$!
wait_for "http://127.0.0.1:$PORT/1k.html"
# rss — KiB of the server's processes together: the server, or the primary and its workers.
rss() { ps -o rss= --pid "$pid" --ppid "$pid" | awk '{ s += $1 } END { print s }'; }

# A probe run sizes the measurement so it answers about REQUESTS requests.
rate=$("${client_cpu[@]}" wrk -t1 -c64 -d3s "http://127.0.0.1:$PORT/1k.html" | awk '/Requests\/sec/ { printf "%d", $2 }')
seconds=$(( (REQUESTS + rate - 1) / rate + 1 ))
echo "probe: $rate requests/s; measuring for ${seconds}s"
samples=()
"${client_cpu[@]}" wrk -t1 -c64 -d"${seconds}s" "http://127.0.0.1:$PORT/1k.html" > "$tmp/wrk.out" &
wrk_pid=$!
while kill -0 $wrk_pid 2>/dev/null; do
  samples+=("$(rss)")
  sleep 2
done
samples+=("$(rss)")
total=$(awk '/requests in/ { print $1 }' "$tmp/wrk.out")
echo "requests answered: $((total + rate * 3))"
echo "RSS samples (MiB, workers: $WORKERS): $(printf '%s\n' "${samples[@]}" | awk '{ printf "%.1f ", $1 / 1024 }')"
echo "each process at the end, pid: MiB (the server, or the primary then its workers):" \
  "$({ ps -o pid=,rss= --pid "$pid"; ps -o pid=,rss= --ppid "$pid"; } | awk '{ printf "%s: %.1f  ", $1, $2 / 1024 }')"
# Each process under 100 MB: the one server, or the primary and every worker.
processes=$((WORKERS > 1 ? WORKERS + 1 : 1))
printf '%s\n' "${samples[@]}" | awk -v processes="$processes" '
  { v[NR] = $1 } END {
    half = int(NR / 2); a = 0; b = 0
    for (i = half + 1; i <= half + int((NR - half) / 2); i++) { a += v[i]; na++ }
    for (i = half + int((NR - half) / 2) + 1; i <= NR; i++) { b += v[i]; nb++ }
    final = v[NR] / 1024
    printf "final RSS %.1f MiB (target < %d); third quarter mean %.1f MiB, last quarter mean %.1f MiB\n", final, 100 * processes, a / na / 1024, b / nb / 1024
  }'
