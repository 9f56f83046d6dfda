#!/usr/bin/env bash
# Static-file throughput, side by side in one run: Portico, nginx (1 worker), Caddy (GOMAXPROCS=1),
# npm's http-server and a minimal node:http server answering from memory (bench/minimal-server.mjs),
# twice: with the least head (type and length) and with a static server's head (minimal-head:
# Accept-Ranges, Last-Modified, ETag, Vary and Server too, as Portico and nginx send), which tells
# node:http's cost for those fields apart from Portico's own work. All six run at once, each on
# its own port and pinned to CPU 0; wrk (1 thread, 64 connections, CPU 1) loads one at a time, so
# the others sit idle. Each path is measured on every server back to back, in reverse order on
# even rounds, so the two figures of a ratio are taken seconds apart rather than a minute apart
# (the shared machine's slow spells last tens of seconds). Every server stays up for the whole
# run, so each is as warm as the others in every round. Each then waits about a minute between its
# measurements: long enough for V8's memory reducer to run a full GC, which in Portico (its heap
# arms the reducer; the minimal servers' stays too small to) dropped the optimized code of ~50
# functions whose object shapes had no live object left (--trace-deopt: "weak objects"), so its
# next seconds were spent compiling again. Portico runs with its launcher's flags (bin/portico.js),
# --no-memory-reducer among them. Prints requests/s, p50 and p99 for a 1 KiB file, a missing one
# (404) and a 64 KiB file per round, the medians and Portico's ratios.
# Usage: bench/static.sh [SECONDS per measurement, default 10] [ROUNDS, default 3]. Installs wrk,
# nginx and caddy from Debian when missing (as root), and http-server from npm into a temporary
# directory.
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_PER_RUN=${1:-10}
ROUNDS=${2:-3}
PORT=18480
# Each server's port: PORT + its index in servers[].
servers=(minimal minimal-head portico nginx caddy http-server)
declare -A port
for i in "${!servers[@]}"; do port[${servers[$i]}]=$((PORT + i)); done

source bench/common.sh
need wrk:wrk nginx:nginx caddy:caddy taskset:util-linux
mkdir -p "$tmp/www" "$tmp/hs"
random_text "$tmp/www/1k.html" 1024
random_text "$tmp/www/64k.html" 65536
(cd "$tmp/hs" && npm install --silent --no-audit --no-fund http-server@14 >/dev/null 2>&1)

cat > "$tmp/portico.yaml" <<YAML
global:
  workers: 1
  port: "127.0.0.1:${port[portico]}"
  wwwroot: $tmp/www
YAML
cat > "$tmp/nginx.conf" <<NGINX
worker_processes 1;
pid $tmp/nginx.pid;
error_log $tmp/nginx-error.log;
events { worker_connections 1024; }
http {
  access_log off;
  sendfile on;
  default_type text/html;
  server { listen 127.0.0.1:${port[nginx]}; root $tmp/www; }
  client_body_temp_path $tmp; proxy_temp_path $tmp; fastcgi_temp_path $tmp; uwsgi_temp_path $tmp; scgi_temp_path $tmp;
}
NGINX
cat > "$tmp/Caddyfile" <<CADDY
{
  admin off
  auto_https off
  storage file_system $tmp/caddy
}
http://127.0.0.1:${port[caddy]} {
  root * $tmp/www
  file_server
}
CADDY

declare -A runs p50s p99s cpus server_pid
paths=(1k.html missing 64k.html)
for name in "${servers[@]}"; do
  check_url="http://127.0.0.1:${port[$name]}/1k.html"
  case $name in
    minimal) start "$name" node bench/minimal-server.mjs "${port[$name]}" "$tmp/www" ;;
    minimal-head) start "$name" node bench/minimal-server.mjs "${port[$name]}" "$tmp/www" static-head ;;
    portico) start "$name" node "${PORTICO_ARGS[@]}" run -c "$tmp/portico.yaml" ;;
    nginx) start "$name" nginx -c "$tmp/nginx.conf" -g 'daemon off;' ;;
    caddy) start "$name" env GOMAXPROCS=1 caddy run --config "$tmp/Caddyfile" --adapter caddyfile ;;
    http-server) start "$name" node "$tmp/hs/node_modules/http-server/bin/http-server" "$tmp/www" -a 127.0.0.1 -p "${port[$name]}" -s -c-1 ;;
  esac
  server_pid[$name]=${pids[-1]}
done
printf '%-6s %-12s %-9s %9s %9s %9s %9s   (wrk -t1 -c64, %ss)\n' round server path 'req/s' p50 p99 'CPU µs/req' "$SECONDS_PER_RUN"
for round in $(seq "$ROUNDS"); do
  order=("${servers[@]}")
  ((round % 2 == 0)) && order=($(printf '%s\n' "${servers[@]}" | tac))
  for path in "${paths[@]}"; do
    for name in "${order[@]}"; do
      result=$(wrk_latency "http://127.0.0.1:${port[$name]}/$path" "${server_pid[$name]}")
      read -r rps p50 p99 cpu <<<"$result"
      runs[$name $path]+="$rps "
      p50s[$name $path]+="$p50 "
      p99s[$name $path]+="$p99 "
      cpus[$name $path]+="$cpu "
      printf '%-6s %-12s %-9s %9s %9s %9s %9s\n' "$round" "$name" "$path" $result
    done
  done
done

declare -A med
echo
for name in "${servers[@]}"; do
  for path in "${paths[@]}"; do
    med[$name $path]=$(median "${runs[$name $path]}")
    printf 'median %-12s %-9s %9s   p50 of each round: %s  p99: %s  CPU µs/req: %s\n' "$name" "$path" "${med[$name $path]}" "${p50s[$name $path]}" "${p99s[$name $path]}" "${cpus[$name $path]}"
  done
done
echo
r() { ratio "${med[$1 $3]}" "${med[$2 $3]}"; }
echo "portico / minimal:     1k $(r portico minimal 1k.html)   404 $(r portico minimal missing)   64k $(r portico minimal 64k.html)   (targets ≥ 0.85 for 1k and 404)"
echo "minimal-head / minimal (the head's fields alone): 1k $(r minimal-head minimal 1k.html)   404 $(r minimal-head minimal missing)"
echo "portico / minimal-head (Portico's own work): 1k $(r portico minimal-head 1k.html)   404 $(r portico minimal-head missing)   CPU per request, median of each round's: 1k $(round_ratios "${cpus[minimal-head 1k.html]}" "${cpus[portico 1k.html]}")   404 $(round_ratios "${cpus[minimal-head missing]}" "${cpus[portico missing]}")"
echo "portico / caddy:       1k $(r portico caddy 1k.html)   404 $(r portico caddy missing)   (404 target ≥ 1.5)"
echo "portico / http-server: 1k $(r portico http-server 1k.html)"
echo "median of each round's portico / minimal: 1k $(round_ratios "${runs[portico 1k.html]}" "${runs[minimal 1k.html]}")   404 $(round_ratios "${runs[portico missing]}" "${runs[minimal missing]}")"
# One core each, requests/s is the inverse of CPU time per request; the latter leaves out the time
# other tenants of the machine took the core.
echo "CPU per request, minimal / portico, median of each round's: 1k $(round_ratios "${cpus[minimal 1k.html]}" "${cpus[portico 1k.html]}")   404 $(round_ratios "${cpus[minimal missing]}" "${cpus[portico missing]}")"
echo "portico / nginx:       1k $(r portico nginx 1k.html)   404 $(r portico nginx missing)   64k $(r portico nginx 64k.html)"
