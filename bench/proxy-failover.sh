#!/usr/bin/env bash
# The proxy under load while one of its two backends dies and comes back, twice: wrk (64
# connections) for 30 s against Portico in front of two Node backends; backend A is killed at 5 s
# and 15 s and restarted at 10 s and 20 s. Prints wrk's totals (failed requests are those in flight
# on A when it died), Portico's error-log lines by code, and its open file descriptors before the
# load, and after it once idle connections have closed. Usage: bench/proxy-failover.sh
set -euo pipefail
cd "$(dirname "$0")/.."
PORT=18780
A=18781
B=18782

source bench/common.sh
need wrk:wrk taskset:util-linux
a=
trap 'for p in "${pids[@]}" $a; do kill "$p" 2>/dev/null || true; done; rm -rf "$tmp"' EXIT

cat > "$tmp/portico.yaml" <<YAML
global:
  workers: 1
  port: "127.0.0.1:$PORT"
  loadModules: [rproxy]
  enableLoadBalancerHealthCheck: true
  errorLogFilePath: $tmp/error.log
  proxyTo: [http://127.0.0.1:$A, http://127.0.0.1:$B]
YAML
node bench/fast-backend.mjs $B & pids+=($!)
node bench/fast-backend.mjs $A & a=$!
taskset -c 0 node "${PORTICO_ARGS[@]}" run -c "$tmp/portico.yaml" & portico=$!; pids+=($portico)
wait_for "http://127.0.0.1:$PORT/"
fds() { ls "/proc/$portico/fd" | wc -l; }
before=$(fds)

(
  for step in kill start kill start; do
    sleep 5
    if [[ $step == kill ]]; then kill -9 $a; echo "  $(date +%T) backend A killed"
    else node bench/fast-backend.mjs $A & a=$!; echo "  $(date +%T) backend A restarted"; fi
  done
  sleep 11; kill $a 2>/dev/null
) &
pids+=($!)
taskset -c 1 wrk -t1 -c64 -d30s "http://127.0.0.1:$PORT/" | grep -E 'requests in|Non-2xx|Socket errors|Requests/sec'
sleep 8 # keep-alive connections to the backends and from wrk close
echo "portico still running: $(kill -0 $portico 2>/dev/null && echo yes || echo no)"
echo "error log lines by code:"; grep -o '\[[a-z-]*\]' "$tmp/error.log" | sort | uniq -c || true
echo "open file descriptors: before $before, after $(fds)"
