#!/usr/bin/env bash
# The cost of a rate limit that lets every request through: wrk (1 thread, 64 connections) fetches
# the same 1 KiB file from a location without a limit and from one with a `rateLimit` far above
# what wrk can send, from one Portico run, the two measured back to back in each round (in reverse
# order on even rounds). With WORKERS above 1 the buckets are the workers' shared LMDB ones and
# Portico runs unpinned; with 1 (the default) they are the process's own, and Portico is pinned to
# CPU 0, wrk to CPU 1. Prints requests/s, p50, p99 and the server's CPU time per request of each,
# and the ratios (target: limited / open ≥ 0.90).
# Usage: bench/rate-limit.sh [SECONDS per measurement, default 10] [ROUNDS, default 3] [WORKERS,
# default 1]. Needs wrk (installed from Debian when missing, as root).
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_PER_RUN=${1:-10}
ROUNDS=${2:-3}
WORKERS=${3:-1}
PORT=18497
source bench/common.sh
need wrk:wrk taskset:util-linux

mkdir -p "$tmp/www/open" "$tmp/www/limited"
random_text "$tmp/www/open/1k.html" 1024
cp "$tmp/www/open/1k.html" "$tmp/www/limited/1k.html"
# A billion requests a second per client: every request takes a token, none is refused.
cat > "$tmp/portico.yaml" <<YAML
global:
  workers: $WORKERS
  port: "127.0.0.1:$PORT"
  wwwroot: $tmp/www
hosts:
  - domain: 127.0.0.1
    locations:
      - path: /limited
        rateLimit: { requests: 1000000000, per: 1s }
YAML

check_url="http://127.0.0.1:$PORT/open/1k.html"
if ((WORKERS == 1)); then
  start portico node "${PORTICO_ARGS[@]}" run -c "$tmp/portico.yaml"
else
  start_unpinned portico node "${PORTICO_ARGS[@]}" run -c "$tmp/portico.yaml"
fi
server=${pids[-1]}
limited_url="http://127.0.0.1:$PORT/limited/1k.html"
[[ $(curl -s -o /dev/null -w '%{http_code}' "$limited_url") == 200 ]] || { echo "the limited file is not served"; cat "$tmp/portico.out"; exit 1; }

declare -A cpus
paths=(open limited)
printf '%-6s %-8s %9s %9s %9s %11s   (wrk -t1 -c64, %ss, workers: %s)\n' round path 'req/s' p50 p99 'CPU µs/req' "$SECONDS_PER_RUN" "$WORKERS"
for round in $(seq "$ROUNDS"); do
  order=("${paths[@]}")
  ((round % 2 == 0)) && order=(limited open)
  for path in "${order[@]}"; do
    result=$(wrk_latency "http://127.0.0.1:$PORT/$path/1k.html" "$server")
    read -r rps p50 p99 cpu <<<"$result"
    runs[$path]+="$rps "
    cpus[$path]+="$cpu "
    printf '%-6s %-8s %9s %9s %9s %11s\n' "$round" "$path" $result
  done
done
echo
medians open limited
# The limit never refused: each of its requests was a 200 (wrk counts other statuses as errors).
[[ $(curl -s -o /dev/null -w '%{http_code}' "$limited_url") == 200 ]] || { echo "the limit refused a request"; exit 1; }
echo "limited / open requests/s: $(ratio "${med[limited]}" "${med[open]}"), median of each round's: $(round_ratios "${runs[limited]}" "${runs[open]}")   (target ≥ 0.90)"
echo "CPU per request, open / limited, median of each round's: $(round_ratios "${cpus[open]}" "${cpus[limited]}")"
