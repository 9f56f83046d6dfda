#!/usr/bin/env bash
# Instructions per request under callgrind: Portico against the minimal servers of bench/static.sh
# and bench/h2.sh (bench/minimal-server.mjs, bench/minimal-h2-server.mjs), with the least head and
# with a static server's head (minimal-head), for a 1 KiB file and a 404 over HTTP/1.1 and the
# 1 KiB file over HTTP/2 (TLS 1.3); and the reverse proxy (h1-proxy: a 1 KiB answer of
# bench/fast-backend.mjs on CPU 1) against bench/minimal-proxy.mjs (minimal; no minimal-head); and
# what locations with a pathRegex cost a prefix hit (h1-locations: Portico alone, the 1 KiB file
# beside 50 of them that do not match it, against the same host without them;
# bench/common.sh's locations_yaml). callgrind counts the same instructions for the same program
# and load whatever else the machine is doing, so it settles differences of a few percent that
# requests/s on a shared machine cannot (there the same server moves by a third between spells);
# it says nothing of cache misses or system calls, which requests/s includes. Each server runs
# alone under valgrind on CPU 0 and h2load (CPU 1, 8 connections, 4 requests in flight on each)
# warms it up with WARM requests (default 40,000) before REQUESTS (default 20,000) are counted.
# TurboFan compiling in the counted window is shown apart: V8 still optimizes now and then, and at
# full speed it does so on another thread. Usage: bench/instructions.sh [REQUESTS] [WARM]. Takes
# ~25 min; CASES and SERVERS (space-separated) narrow it to some of them, e.g.
# CASES=h1-1k SERVERS=portico for one figure in under a minute. PORTICO_GLOBAL adds YAML lines to
# Portico's global block (e.g. $'  setHeaders:\n    X-Frame-Options: DENY\n'), to count what a
# setting costs; PORT (default 18680, and the three above it) moves the listeners. Installs
# valgrind and nghttp2-client from Debian when missing (root).
set -euo pipefail
cd "$(dirname "$0")/.."
REQUESTS=${1:-20000}
WARM=${2:-40000}
for case in ${CASES:-}; do
  [[ $case == @(h1-1k|h1-404|h2-1k|h1-proxy|h1-locations) ]] || { echo "CASES: no case $case (h1-1k h1-404 h2-1k h1-proxy h1-locations)" >&2; exit 2; }
done
for server in ${SERVERS:-}; do
  [[ $server == @(minimal|minimal-head|portico) ]] || { echo "SERVERS: no server $server (minimal minimal-head portico)" >&2; exit 2; }
done
PORT=${PORT:-18680}
source bench/common.sh
need valgrind:valgrind callgrind_control:valgrind h2load:nghttp2-client taskset:util-linux
TLS=test/fixtures/tls

mkdir -p "$tmp/www"
random_text "$tmp/www/1k.html" 1024
# Over HTTP/1.1 a plain listener; over HTTP/2 a secure one (its plain port, unused, redirects).
printf 'global:\n  workers: 1\n  port: "127.0.0.1:%s"\n  wwwroot: %s\n%s' "$PORT" "$tmp/www" "${PORTICO_GLOBAL:-}" >"$tmp/portico-h1.yaml"
portico_tls_yaml "$tmp/portico-h2.yaml" "$((PORT + 2))" "$((PORT + 1))" "$tmp/www"
printf '%s' "${PORTICO_GLOBAL:-}" >>"$tmp/portico-h2.yaml"
BACKEND=$((PORT + 3))
# Without compression, as the minimal proxy (h2load asks for gzip): this measures the proxying;
# bench/compression.sh measures compression.
printf 'global:\n  workers: 1\n  port: "127.0.0.1:%s"\n  enableCompression: false\n  loadModules: [rproxy]\n  proxyTo: http://127.0.0.1:%s\n' \
  "$PORT" "$BACKEND" >"$tmp/portico-proxy.yaml"
for n in 0 50; do locations_yaml "$tmp/portico-locations-$n.yaml" "$PORT" "$tmp/www" "$n"; done

# count NAME PROTOCOL STATUS URL COMMAND… — "instructions/request TurboFan/request" of COMMAND's
# process while it answers REQUESTS requests for URL (h1 or h2), each with STATUS (2xx, 4xx).
count() {
  local name=$1 protocol=$2 status=$3 url=$4 out=$tmp/$1.callgrind
  shift 4
  # TurboFan on the main thread: it compiles when V8 decides rather than when a thread gets a turn.
  taskset -c 0 valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file="$out" \
    node --no-concurrent-recompilation "$@" >"$tmp/$name.log" 2>&1 &
  local vg=$!
  # Any answer will do (a 404 too): the server is up.
  for _ in $(seq 300); do curl -sk -o /dev/null "$url" && break; sleep 0.2; done
  local h1=()
  [[ $protocol == h1 ]] && h1=(--h1)
  taskset -c 1 h2load "${h1[@]}" -n "$WARM" -c 8 -m 4 "$url" >/dev/null 2>&1
  callgrind_control -i on "$vg" >/dev/null 2>&1
  taskset -c 1 h2load "${h1[@]}" -n "$REQUESTS" -c 8 -m 4 "$url" >"$tmp/$name.h2load" 2>&1
  callgrind_control -i off "$vg" >/dev/null 2>&1
  callgrind_control -d "$vg" >/dev/null 2>&1
  sleep 1
  kill -9 "$vg" 2>/dev/null || true
  wait "$vg" 2>/dev/null || true
  if ! grep -q "^requests: $REQUESTS total, $REQUESTS started, $REQUESTS done" "$tmp/$name.h2load" ||
    ! grep -q "^status codes: .*$REQUESTS $status" "$tmp/$name.h2load"; then
    echo "$name: not $REQUESTS answers with $status:" >&2
    cat "$tmp/$name.h2load" "$tmp/$name.log" >&2
    return 1
  fi
  # The dump written on request is the file with a suffix (.1); the one at exit is empty.
  callgrind_annotate --show=Ir --inclusive=no --threshold=100 "$(ls -t "$out".* | head -1)" |
    awk -v n="$REQUESTS" '
      /PROGRAM TOTALS/ { gsub(",", "", $1); total = $1 }
      /v8::internal::compiler::|v8::internal::Turbo|v8::internal::Pipeline|v8::internal::Zone/ { gsub(",", "", $1); turbofan += $1 }
      END { printf "%d %d", total / n, turbofan / n }'
}

declare -A ir tf
minimal=(bench/minimal-server.mjs "$PORT" "$tmp/www")
minimal_proxy=(bench/minimal-proxy.mjs "$PORT" "http://127.0.0.1:$BACKEND")
minimal_h2=(bench/minimal-h2-server.mjs "$((PORT + 1))" "$tmp/www" "$TLS/server.crt" "$TLS/server.key")
portico=("${PORTICO_ARGS[@]}" run -c)
printf '%-22s %12s %10s %18s\n' case 'Ir/request' TurboFan 'Ir without TurboFan'
for case in ${CASES:-h1-1k h1-404 h2-1k h1-proxy h1-locations}; do
  protocol=${case%%-*}
  if [[ $case == h1-locations ]]; then
    for n in 0 50; do
      result=$(count "$case-$n" h1 2xx "http://127.0.0.1:$PORT/1k.html" "${portico[@]}" "$tmp/portico-locations-$n.yaml")
      read -r total turbofan <<<"$result"
      ir[$case $n]=$((total - turbofan))
      printf '%-22s %12d %10d %18d\n' "$case $n" "$total" "$turbofan" "${ir[$case $n]}"
    done
    continue
  fi
  path=/1k.html status=2xx
  [[ $case == h1-404 ]] && path=/missing status=4xx
  if [[ $case == h1-proxy ]]; then
    taskset -c 1 node bench/fast-backend.mjs "$BACKEND" &
    pids+=($!)
  fi
  for server in ${SERVERS:-minimal minimal-head portico}; do
    [[ $case == h1-proxy && $server == minimal-head ]] && continue
    url="http://127.0.0.1:$PORT$path"
    [[ $protocol == h2 ]] && url="https://127.0.0.1:$((PORT + 1))$path"
    case $server in
      portico) command=("${portico[@]}" "$tmp/portico-$protocol.yaml") ;;
      minimal*) [[ $protocol == h2 ]] && command=("${minimal_h2[@]}") || command=("${minimal[@]}") ;;
    esac
    if [[ $case == h1-proxy ]]; then
      [[ $server == portico ]] && command=("${portico[@]}" "$tmp/portico-proxy.yaml") || command=("${minimal_proxy[@]}")
    fi
    [[ $server == minimal-head ]] && command+=(static-head)
    result=$(count "$case-$server" "$protocol" "$status" "$url" "${command[@]}")
    read -r total turbofan <<<"$result"
    ir[$case $server]=$((total - turbofan))
    tf[$case $server]=$turbofan
    printf '%-22s %12d %10d %18d\n' "$case $server" "$total" "$turbofan" "${ir[$case $server]}"
  done
done
echo
echo "Ratios of instructions per request without TurboFan (the fewer, the higher; 1 is equal work):"
for case in ${CASES:-h1-1k h1-404 h2-1k h1-proxy h1-locations}; do
  if [[ $case == h1-locations ]]; then
    echo "$case: portico beside 50 pathRegex locations / without them $(ratio "${ir[$case 50]}" "${ir[$case 0]}") (above 1: what they cost a prefix hit)"
    continue
  fi
  if [[ $case == h1-proxy && -n ${ir[$case minimal]:-} && -n ${ir[$case portico]:-} ]]; then
    echo "$case: minimal / portico $(ratio "${ir[$case minimal]}" "${ir[$case portico]}")"
    continue
  fi
  [[ -n ${ir[$case minimal]:-} && -n ${ir[$case minimal-head]:-} && -n ${ir[$case portico]:-} ]] || continue
  echo "$case: minimal / portico $(ratio "${ir[$case minimal]}" "${ir[$case portico]}")   minimal-head / portico $(ratio "${ir[$case minimal-head]}" "${ir[$case portico]}")   minimal / minimal-head $(ratio "${ir[$case minimal]}" "${ir[$case minimal-head]}")"
done
