#!/usr/bin/env bash
# gRPC unary calls per second through Portico against a direct connection to the same server: a
# grpc-js server (bench/grpc-server.mjs: one server on an h2c port and a TLS port) and a grpc-js
# load client (bench/grpc-load.mjs: CONCURRENCY calls in flight on one channel) share CPU 1;
# Portico (client over TLS, HTTP/2 by ALPN; backend over h2c) runs alone on CPU 0, up for the whole
# run as the servers of bench/h2.sh are. Each round measures the server directly over h2c and over
# TLS, then through Portico; printed: calls/s, and Portico's CPU time per call (µs), the proxy's
# share of the cost. The backend and client reach their limit on CPU 1 before Portico does on CPU
# 0 when the ratio is near 1: the CPU figure then says more. Usage: bench/grpc.sh [SECONDS,
# default 10] [ROUNDS, default 3] [CONCURRENCY, default 64].
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_PER_RUN=${1:-10}
ROUNDS=${2:-3}
CONCURRENCY=${3:-64}
PORT=18690
SPORT=18691
BACKEND=18692
BACKEND_TLS=18693
WARM=2

source bench/common.sh
need taskset:util-linux

cat >"$tmp/portico.yaml" <<YAML
global:
  workers: 1
  port: "127.0.0.1:$PORT"
  sport: "127.0.0.1:$SPORT"
  secure: true
  cert: $PWD/test/fixtures/tls/server.crt
  key: $PWD/test/fixtures/tls/server.key
  loadModules: [rproxy]
  proxyTo: h2c://127.0.0.1:$BACKEND
YAML

taskset -c 1 node bench/grpc-server.mjs "$BACKEND" "$BACKEND_TLS" >"$tmp/backend.out" 2>&1 &
pids+=($!)
for _ in $(seq 100); do grep -qs serving "$tmp/backend.out" && break; sleep 0.1; done
grep -qs serving "$tmp/backend.out" || { echo "the gRPC backend did not start:"; cat "$tmp/backend.out"; exit 1; }

# The plain port answers every request with a redirect to the TLS one: Portico is up.
check_url="http://127.0.0.1:$PORT/"
start portico node "${PORTICO_ARGS[@]}" run -c "$tmp/portico.yaml"
portico_pid=${pids[-1]}

# load TARGET MODE [PID] — $WARM s of warm-up, then $SECONDS_PER_RUN s counted: "calls/s errors",
# and with PID the CPU µs per call of PID.
load() {
  local before=0 result
  taskset -c 1 node bench/grpc-load.mjs "$1" "$2" "$CONCURRENCY" "$WARM" >/dev/null
  [[ -z ${3:-} ]] || before=$(cpu_ticks "$3")
  result=$(taskset -c 1 node bench/grpc-load.mjs "$1" "$2" "$CONCURRENCY" "$SECONDS_PER_RUN")
  printf '%s' "$result"
  [[ -z ${3:-} ]] ||
    per_request_us "$(($(cpu_ticks "$3") - before))" "$((${result%% *} * SECONDS_PER_RUN))"
}

servers=(direct-h2c direct-tls portico)
printf '%-6s %-15s %9s %9s %9s   (grpc-js unary, %s in flight, %ss)\n' round server 'calls/s' errors 'µs/call' "$CONCURRENCY" "$SECONDS_PER_RUN"
for round in $(seq "$ROUNDS"); do
  record "$round" direct-h2c "$(load "127.0.0.1:$BACKEND" h2c)"
  record "$round" direct-tls "$(load "127.0.0.1:$BACKEND_TLS" tls)"
  record "$round" portico "$(load "127.0.0.1:$SPORT" tls "$portico_pid")"
done

echo
medians "${servers[@]}"
echo
echo "portico / direct over TLS: $(ratio "${med[portico]}" "${med[direct-tls]}")"
echo "portico / direct over h2c: $(ratio "${med[portico]}" "${med[direct-h2c]}")"
