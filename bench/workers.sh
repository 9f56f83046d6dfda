#!/usr/bin/env bash
# One core against all cores, side by side in one run: Portico with `workers: 1` and `workers: auto`
# (a primary process and one worker process per CPU, sharing the listeners), nginx with
# `worker_processes 1;` and `auto;`, Caddy with GOMAXPROCS=1 and unset, for four workloads: a 1 KiB
# file (static-1k) and a missing one (static-404) over HTTP/1.1, a reverse-proxied 1 KiB answer of
# bench/fast-backend.mjs over HTTP/1.1 (proxy-1k), and the 1 KiB file over HTTP/2 with TLS 1.3
# (h2-static-1k, the certificates of test/fixtures/tls). Tells whether Portico's workers scale with
# the cores as nginx's do: the target is a Portico auto/1 ratio at most 0.1 below nginx's for
# static-1k and proxy-1k.
# All six servers are started once and stay up for the whole run, each on its own two ports (plain
# HTTP/1.1 for the three HTTP/1.1 workloads, /proxy/ going to the backend; TLS for HTTP/2). Portico
# has one plain and one secure listener (Ferron 1.x's model), so it proxies through a location of a
# host matched by its ip (127.0.0.1); nginx and Caddy get a location and a matcher on the same port,
# so every server routes the same way; nginx keeps a connection for 1,000,000 requests rather than
# 1,000, as h2load opens no new connection after a GOAWAY. The -1 rows run pinned to CPU 0 with the
# load generator (wrk -t1 -c64; h2load -c16 -m10) on CPU 1, as in the other bench scripts; the -auto
# rows and their load generator run unpinned, sharing every CPU (2 shared, noisy cores on the
# machine this was written for, so the all-core figure includes what the load generator itself
# takes). The backend is one bench/fast-backend.mjs process for every server, moved before each
# proxy-1k measurement (taskset -a -p) to where the load generator runs: on CPU 1 beside it for a -1
# row, as bench/proxy.sh keeps its backend beside wrk, unpinned for an -auto row. Each workload is
# measured on every server back to back, in reverse order on even rounds (see bench/static.sh: the
# two figures of a ratio are taken seconds apart, within one of the shared machine's slow spells).
# Every server being warm from its earlier measurements, each measurement has 1 s of warm-up (the
# other scripts' 2 s would take the default run past 15 minutes). Prints requests/s, p50, p99 and
# the server's CPU time per request (all its processes) per round, the medians, each family's
# all-cores/one-core ratio per workload, Portico-auto / Caddy-auto and Portico-auto / nginx-auto,
# and Portico's auto/1 ratio minus nginx's.
# Usage: [WORKLOADS="proxy-1k …"] bench/workers.sh [SECONDS per measurement, default 10] [ROUNDS,
# default 3] (the defaults: all four workloads, ~14 min). Installs wrk, nghttp2-client (h2load),
# nginx and caddy from Debian when missing (as root).
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_PER_RUN=${1:-10}
ROUNDS=${2:-3}
PORT=18800
# Each server's ports: plain PORT + 2 × its index in servers[], secure the next one.
servers=(portico-1 portico-auto nginx-1 nginx-auto caddy-1 caddy-auto)
BACKEND=$((PORT + 2 * ${#servers[@]}))
declare -A port sport
for i in "${!servers[@]}"; do
  port[${servers[$i]}]=$((PORT + 2 * i))
  sport[${servers[$i]}]=$((PORT + 2 * i + 1))
done
read -ra workloads <<<"${WORKLOADS:-static-1k static-404 proxy-1k h2-static-1k}"
declare -A path=([static-1k]=/1k.html [static-404]=/missing [proxy-1k]=/proxy/1k [h2-static-1k]=/1k.html)

source bench/common.sh
need wrk:wrk h2load:nghttp2-client nginx:nginx caddy:caddy taskset:util-linux
TLS=$PWD/test/fixtures/tls
# The CPUs this script may use: an unpinned process's.
all_cpus=$(taskset -pc $$ | awk '{ print $NF }')

# common.sh's trap stops pids[] without waiting: Portico's primary stops its workers on SIGTERM,
# nginx's master its workers. This one waits 5 s for them all, then kills what is left.
stop_all() {
  local p c left children=()
  for p in "${pids[@]}"; do
    for c in $(pgrep -P "$p" || true); do children+=("$c"); done
  done
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for _ in $(seq 50); do
    left=0
    for p in "${pids[@]}" "${children[@]}"; do kill -0 "$p" 2>/dev/null && left=1; done
    ((left == 0)) && break
    sleep 0.1
  done
  for p in "${pids[@]}" "${children[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  rm -rf "$tmp"
}
trap stop_all EXIT

mkdir -p "$tmp/www"
random_text "$tmp/www/1k.html" 1024

# portico_yaml NAME WORKERS — portico_tls_yaml's TLS 1.3 server with `workers: WORKERS`, its plain
# port serving too (no redirect to HTTPS) and /proxy sent to the backend.
portico_yaml() {
  local file=$tmp/$1.yaml
  portico_tls_yaml "$file" "${port[$1]}" "${sport[$1]}" "$tmp/www"
  sed -i "/^  workers:/d; s/^global:\$/global:\n  workers: $2/" "$file"
  cat >>"$file" <<YAML
  disableToHTTPSRedirect: true
  loadModules: [rproxy]
hosts:
  - ip: 127.0.0.1
    locations:
      - path: /proxy
        proxyTo: http://127.0.0.1:$BACKEND
YAML
  grep -q "^  workers: $2\$" "$file" || { echo "$file: no workers: $2 line"; exit 1; }
}
# nginx_conf NAME WORKER_PROCESSES — bench/static.sh's static server and bench/proxy.sh's proxy
# (upstream keepalive) on the plain port, the same files over TLS 1.3 and HTTP/2 on the secure one.
nginx_conf() {
  cat >"$tmp/$1.conf" <<NGINX
worker_processes $2;
pid $tmp/$1.pid;
error_log $tmp/$1-error.log;
events { worker_connections 4096; }
http {
  access_log off;
  sendfile on;
  default_type text/html;
  upstream app { server 127.0.0.1:$BACKEND; keepalive 64; }
  server {
    listen 127.0.0.1:${port[$1]};
    listen 127.0.0.1:${sport[$1]} ssl http2;
    ssl_certificate $TLS/server.crt;
    ssl_certificate_key $TLS/server.key;
    ssl_protocols TLSv1.3;
    root $tmp/www;
    # h2load opens no new connection when one ends: without this, nginx's GOAWAY after 1,000
    # requests (its default) would end every connection within the first second.
    keepalive_requests 1000000;
    location /proxy/ { proxy_pass http://app; proxy_http_version 1.1; proxy_set_header Connection ""; }
  }
  client_body_temp_path $tmp; proxy_temp_path $tmp; fastcgi_temp_path $tmp; uwsgi_temp_path $tmp; scgi_temp_path $tmp;
}
NGINX
}
# caddy_file NAME — bench/static.sh's and bench/proxy.sh's sites on the plain port, the same files
# over TLS 1.3 on the secure one (HTTP/2 by ALPN).
caddy_file() {
  cat >"$tmp/$1.Caddyfile" <<CADDY
{
  admin off
  auto_https off
  storage file_system $tmp/$1-storage
}
http://127.0.0.1:${port[$1]} {
  root * $tmp/www
  reverse_proxy /proxy/* 127.0.0.1:$BACKEND
  file_server
}
https://127.0.0.1:${sport[$1]} {
  tls $TLS/server.crt $TLS/server.key {
    protocols tls1.3
  }
  root * $tmp/www
  file_server
}
CADDY
}
portico_yaml portico-1 1
portico_yaml portico-auto auto
nginx_conf nginx-1 1
nginx_conf nginx-auto auto
caddy_file caddy-1
caddy_file caddy-auto


node bench/fast-backend.mjs "$BACKEND" &
pids+=($!)
backend_pid=$!
check_url="http://127.0.0.1:$BACKEND/"
for _ in $(seq 100); do curl -sf -o /dev/null "$check_url" && break; sleep 0.1; done

declare -A server_pid
for name in "${servers[@]}"; do
  check_url="http://127.0.0.1:${port[$name]}/1k.html"
  launch=start
  [[ $name == *-auto ]] && launch=start_unpinned
  case $name in
    portico-*) $launch "$name" node "${PORTICO_ARGS[@]}" run -c "$tmp/$name.yaml" ;;
    nginx-*) $launch "$name" nginx -c "$tmp/$name.conf" -g 'daemon off;' ;;
    caddy-1) $launch "$name" env GOMAXPROCS=1 caddy run --config "$tmp/$name.Caddyfile" --adapter caddyfile ;;
    caddy-auto) $launch "$name" env -u GOMAXPROCS caddy run --config "$tmp/$name.Caddyfile" --adapter caddyfile ;;
  esac
  server_pid[$name]=${pids[-1]}
  wait_for "http://127.0.0.1:${port[$name]}/proxy/1k"
  wait_for "https://127.0.0.1:${sport[$name]}/1k.html"
done
# What each row runs as: its processes and the CPUs they may use.
for name in "${servers[@]}"; do
  p=${server_pid[$name]}
  printf '%-13s pid %-8s %s child processes, CPUs %s\n' "$name" "$p" "$(pgrep -c -P "$p" || true)" \
    "$(taskset -pc "$p" | awk '{ print $NF }')"
done
echo "backend     pid $backend_pid (bench/fast-backend.mjs), moved to the load generator's CPUs for proxy-1k"
echo

# measure NAME WORKLOAD — 1 s of warm-up, then $SECONDS_PER_RUN s of WORKLOAD on server NAME, the
# load generator (and for proxy-1k the backend) on CPU 1 for a -1 row, unpinned for an -auto row →
# "requests/s p50 p99 CPU-µs/request" (the server's processes' CPU time).
measure() {
  local name=$1 workload=$2 cpus=1 loader before report requests
  [[ $name == *-auto ]] && cpus=$all_cpus
  loader=(taskset -c "$cpus")
  [[ $workload == proxy-1k ]] && taskset -a -p -c "$cpus" "$backend_pid" >/dev/null
  if [[ $workload == h2-* ]]; then
    local url="https://127.0.0.1:${sport[$name]}${path[$workload]}"
    "${loader[@]}" h2load -c16 -m10 -D 1 "$url" >/dev/null 2>&1
    # h2load appends to its log: each measurement starts with an empty one.
    rm -f "$tmp/requests.log"
    before=$(cpu_ticks "${server_pid[$name]}")
    report=$("${loader[@]}" h2load -c16 -m10 -D "$SECONDS_PER_RUN" --log-file="$tmp/requests.log" "$url" 2>&1)
    requests=$(wc -l <"$tmp/requests.log")
    grep -q '^requests: .* 0 failed, 0 errored' <<<"$report" || echo "$name $workload: $(grep '^requests:' <<<"$report")" >&2
    sort -n -k3 "$tmp/requests.log" |
      awk -v rps="$(awk '/^finished in/ { gsub(",", "", $4); printf "%d", $4 }' <<<"$report")" \
        '{ d[NR] = $3 } END { printf "%d %.2fms %.2fms", rps, d[int(NR * 0.5)] / 1000, d[int(NR * 0.99)] / 1000 }'
  else
    local url="http://127.0.0.1:${port[$name]}${path[$workload]}"
    "${loader[@]}" wrk -t1 -c64 -d1s "$url" >/dev/null
    before=$(cpu_ticks "${server_pid[$name]}")
    report=$("${loader[@]}" wrk -t1 -c64 -d"${SECONDS_PER_RUN}s" --latency "$url")
    requests=$(awk '/ requests in / { print $1 }' <<<"$report")
    # Every answer a 404 for static-404, none for the others.
    local non2xx
    non2xx=$(awk '/Non-2xx or 3xx responses:/ { print $NF }' <<<"$report")
    if [[ $workload == static-404 ]]; then
      [[ ${non2xx:-0} == "$requests" ]] || echo "$name $workload: $non2xx of $requests answers not 2xx/3xx" >&2
    else
      [[ -z $non2xx ]] || echo "$name $workload: $non2xx answers not 2xx/3xx" >&2
    fi
    grep -q 'Socket errors' <<<"$report" && echo "$name $workload: $(grep 'Socket errors' <<<"$report")" >&2
    wrk_figures <<<"$report"
  fi
  per_request_us "$(($(cpu_ticks "${server_pid[$name]}") - before))" "$requests"
}

declare -A runs p50s p99s cpus med
printf '%-6s %-13s %-13s %9s %9s %9s %11s   (wrk -t1 -c64 / h2load -c16 -m10, %ss)\n' \
  round server workload 'req/s' p50 p99 'CPU µs/req' "$SECONDS_PER_RUN"
for round in $(seq "$ROUNDS"); do
  order=("${servers[@]}")
  if ((round % 2 == 0)); then mapfile -t order < <(printf '%s\n' "${servers[@]}" | tac); fi
  for workload in "${workloads[@]}"; do
    for name in "${order[@]}"; do
      read -r rps p50 p99 cpu <<<"$(measure "$name" "$workload")"
      runs[$name $workload]+="$rps "
      p50s[$name $workload]+="$p50 "
      p99s[$name $workload]+="$p99 "
      cpus[$name $workload]+="$cpu "
      printf '%-6s %-13s %-13s %9s %9s %9s %11s\n' "$round" "$name" "$workload" "$rps" "$p50" "$p99" "$cpu"
    done
  done
done

echo
for name in "${servers[@]}"; do
  for workload in "${workloads[@]}"; do
    med[$name $workload]=$(median "${runs[$name $workload]}")
    printf 'median %-13s %-13s %9s   p50 of each round: %s  p99: %s  CPU µs/req: %s\n' "$name" "$workload" \
      "${med[$name $workload]}" "${p50s[$name $workload]}" "${p99s[$name $workload]}" "${cpus[$name $workload]}"
  done
done
echo
# r A B WORKLOAD — the ratio of the medians, then the median of each round's ratio.
r() {
  printf '%s   median of each round'\''s: %s' "$(ratio "${med[$1 $3]}" "${med[$2 $3]}")" \
    "$(round_ratios "${runs[$1 $3]}" "${runs[$2 $3]}")"
}
for family in portico nginx caddy; do
  for workload in "${workloads[@]}"; do
    echo "$family auto/1 $workload $(r "$family-auto" "$family-1" "$workload")"
  done
done
echo
for other in caddy nginx; do
  for workload in "${workloads[@]}"; do
    echo "portico-auto / $other-auto $workload $(r portico-auto "$other-auto" "$workload")"
  done
done
echo
for workload in "${workloads[@]}"; do
  target=
  [[ $workload == static-1k || $workload == proxy-1k ]] && target='   (target ≥ -0.1)'
  difference=$(awk -v a="$(ratio "${med[portico-auto $workload]}" "${med[portico-1 $workload]}")" \
    -v b="$(ratio "${med[nginx-auto $workload]}" "${med[nginx-1 $workload]}")" 'BEGIN { printf "%.2f", a - b }')
  echo "portico ratio minus nginx ratio $workload $difference$target"
done
