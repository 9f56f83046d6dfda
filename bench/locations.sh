#!/usr/bin/env bash
# What locations with a pathRegex cost a request they do not take: two Portico servers side by side,
# the same host serving the same files, one beside 50 pathRegex locations (bench/common.sh's
# locations_yaml: extensions, API versions, languages, dates, ids), one without. nginx's order makes
# a prefix hit try each of them before the prefix location answers; their patterns are joined into
# one gate, so one search tells such a path apart. Both pinned to CPU 0, wrk (1 thread, 64
# connections) on CPU 1 loads one at a time: /1k.html (a prefix hit, which no pattern takes) and
# /1k.css (taken by the first pattern, `\.css$`), each measured on both servers back to back, in
# reverse order on even rounds. Prints requests/s, p50, p99 and the server's CPU time per request,
# the medians, and with/without for each path (target ≥ 0.90 for the prefix hit).
# Usage: bench/locations.sh [SECONDS per measurement, default 10] [ROUNDS, default 3]. Installs wrk
# from Debian when missing (as root).
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_PER_RUN=${1:-10}
ROUNDS=${2:-3}
PORT=18500
source bench/common.sh
need wrk:wrk taskset:util-linux

mkdir -p "$tmp/www"
random_text "$tmp/www/1k.html" 1024
cp "$tmp/www/1k.html" "$tmp/www/1k.css"
servers=(none regex50)
declare -A port=([none]=$PORT [regex50]=$((PORT + 1))) count=([none]=0 [regex50]=50)
declare -A server_pid
for name in "${servers[@]}"; do
  locations_yaml "$tmp/$name.yaml" "${port[$name]}" "$tmp/www" "${count[$name]}"
  check_url="http://127.0.0.1:${port[$name]}/1k.html"
  start "$name" node "${PORTICO_ARGS[@]}" run -c "$tmp/$name.yaml"
  server_pid[$name]=${pids[-1]}
done
# The locations are there: the css file gets their Cache-Control on one server only.
curl -sI "http://127.0.0.1:${port[regex50]}/1k.css" | grep -qi '^cache-control: no-cache' ||
  { echo "regex50: /1k.css is not taken by its pathRegex location"; exit 1; }
curl -sI "http://127.0.0.1:${port[none]}/1k.css" | grep -qi '^cache-control' &&
  { echo "none: /1k.css has a location's Cache-Control"; exit 1; }

declare -A cpus
paths=(1k.html 1k.css)
printf '%-6s %-8s %-8s %9s %9s %9s %11s   (wrk -t1 -c64, %ss)\n' round server path 'req/s' p50 p99 'CPU µs/req' "$SECONDS_PER_RUN"
for round in $(seq "$ROUNDS"); do
  order=("${servers[@]}")
  ((round % 2 == 0)) && order=($(printf '%s\n' "${servers[@]}" | tac))
  for path in "${paths[@]}"; do
    for name in "${order[@]}"; do
      result=$(wrk_latency "http://127.0.0.1:${port[$name]}/$path" "${server_pid[$name]}")
      runs[$name $path]+="${result%% *} "
      cpus[$name $path]+="$(awk '{ print $4 }' <<<"$result") "
      printf '%-6s %-8s %-8s %9s %9s %9s %11s\n' "$round" "$name" "$path" $result
    done
  done
done

echo
for path in "${paths[@]}"; do
  for name in "${servers[@]}"; do
    med[$name $path]=$(median "${runs[$name $path]}")
    printf 'median %-8s %-8s %9s req/s   CPU µs/req of each round: %s\n' "$name" "$path" "${med[$name $path]}" "${cpus[$name $path]}"
  done
  echo "$path: regex50 / none $(ratio "${med[regex50 $path]}" "${med[none $path]}") requests/s;" \
    "CPU per request, none / regex50, median of each round's: $(round_ratios "${cpus[none $path]}" "${cpus[regex50 $path]}")"
done
echo "(target for the prefix hit, 1k.html: ≥ 0.90)"
