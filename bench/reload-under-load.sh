#!/usr/bin/env bash
# Zero-downtime reload: wrk (1 thread, 64 connections, 20 s) against a static file while the admin
# API's POST /reload runs 20 times, every other one switching the host's wwwroot between two
# directories. After each reload the new content must be served. Prints wrk's socket errors and
# non-2xx count (both must be 0) and exits 1 on any failure.
# Usage: bench/reload-under-load.sh. Needs wrk and curl (wrk installed from Debian when missing).
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/common.sh
need wrk:wrk
PORT=18680
ADMIN=18681

mkdir -p "$tmp/a" "$tmp/b"
echo "content A" > "$tmp/a/index.html"
echo "content B" > "$tmp/b/index.html"
write() { printf 'global:\n  workers: 1\n  port: "127.0.0.1:%s"\n  admin:\n    listen: "127.0.0.1:%s"\nhosts:\n  - domain: "*"\n    wwwroot: %s\n' "$PORT" "$ADMIN" "$1" > "$tmp/portico.yaml"; }
write "$tmp/a"
taskset -c 0 bin/portico.js run -c "$tmp/portico.yaml" 2>"$tmp/err" &
pid=$!
wait_for "http://127.0.0.1:$PORT/"

taskset -c 1 wrk -t1 -c64 -d20s "http://127.0.0.1:$PORT/index.html" > "$tmp/wrk.out" &
wrk_pid=$!
sleep 0.5
failures=0
current=a
for i in $(seq 1 20); do
  if (( i % 2 == 0 )); then current=$([[ $current == a ]] && echo b || echo a); fi
  write "$tmp/$current"
  status=$(curl -s -o "$tmp/reload.out" -w '%{http_code}' -X POST "http://127.0.0.1:$ADMIN/reload")
  served=$(curl -s "http://127.0.0.1:$PORT/index.html")
  expected="content ${current^^}"
  if [[ $status != 200 || $served != "$expected" ]]; then
    echo "reload $i: status $status, served '$served', expected '$expected'"; cat "$tmp/reload.out"; failures=$((failures + 1))
  fi
  sleep 0.9
done
wait $wrk_pid
cat "$tmp/wrk.out" | grep -E 'Requests/sec|requests in|Socket errors|Non-2xx' || true
socket_errors=$(awk '/Socket errors/ { gsub(",", ""); print $4 + $6 + $8 + $10 }' "$tmp/wrk.out")
non2xx=$(awk '/Non-2xx/ { print $5 }' "$tmp/wrk.out")
echo "reloads: 20, failed: $failures; socket errors: ${socket_errors:-0}; non-2xx responses: ${non2xx:-0}"
[[ $failures == 0 && ${socket_errors:-0} == 0 && ${non2xx:-0} == 0 ]]
