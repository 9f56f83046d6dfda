#!/usr/bin/env bash
# Static-file throughput, side by side in one run: Portico, nginx (1 worker), Caddy (GOMAXPROCS=1),
# npm's http-server and a minimal node:http server answering from memory (bench/minimal-server.mjs).
# Each server runs alone, pinned to CPU 0; wrk (1 thread, 64 connections) runs on CPU 1.
# Prints requests/s, p50 and p99 for a 1 KiB file, a missing one (404) and a 64 KiB file per round, the
# medians and Portico's ratios. Usage: bench/static.sh [SECONDS per measurement, default 10]
# [ROUNDS, default 3]. Installs wrk, nginx and caddy
# from Debian when missing (as root), and http-server from npm into a temporary directory.
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_PER_RUN=${1:-10}
ROUNDS=${2:-3}
PORT=18480

source bench/common.sh
need wrk:wrk nginx:nginx caddy:caddy taskset:util-linux
mkdir -p "$tmp/www" "$tmp/hs"
random_text "$tmp/www/1k.html" 1024
random_text "$tmp/www/64k.html" 65536
(cd "$tmp/hs" && npm install --silent --no-audit --no-fund http-server@14 >/dev/null 2>&1)

cat > "$tmp/portico.yaml" <<YAML
global:
  port: "127.0.0.1:$PORT"
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
  server { listen 127.0.0.1:$PORT; root $tmp/www; }
  client_body_temp_path $tmp; proxy_temp_path $tmp; fastcgi_temp_path $tmp; uwsgi_temp_path $tmp; scgi_temp_path $tmp;
}
NGINX
cat > "$tmp/Caddyfile" <<CADDY
{
  admin off
  auto_https off
  storage file_system $tmp/caddy
}
http://127.0.0.1:$PORT {
  root * $tmp/www
  file_server
}
CADDY

check_url="http://127.0.0.1:$PORT/1k.html"
declare -A runs p50s p99s
servers=(minimal portico nginx caddy http-server)
paths=(1k.html missing 64k.html)
printf '%-6s %-12s %-9s %9s %9s %9s   (wrk -t1 -c64, %ss)\n' round server path 'req/s' p50 p99 "$SECONDS_PER_RUN"
for round in $(seq "$ROUNDS"); do
  for name in "${servers[@]}"; do
    case $name in
      minimal) start "$name" node bench/minimal-server.mjs "$PORT" "$tmp/www" ;;
      portico) start "$name" node --max-semi-space-size=8 bin/portico.js run -c "$tmp/portico.yaml" ;;
      nginx) start "$name" nginx -c "$tmp/nginx.conf" -g 'daemon off;' ;;
      caddy) start "$name" env GOMAXPROCS=1 caddy run --config "$tmp/Caddyfile" --adapter caddyfile ;;
      http-server) start "$name" node "$tmp/hs/node_modules/http-server/bin/http-server" "$tmp/www" -a 127.0.0.1 -p "$PORT" -s -c-1 ;;
    esac
    for path in "${paths[@]}"; do
      result=$(wrk_latency "http://127.0.0.1:$PORT/$path")
      runs[$name $path]+="${result%% *} "
      p50s[$name $path]+="$(cut -d' ' -f2 <<<"$result") "
      p99s[$name $path]+="${result##* } "
      printf '%-6s %-12s %-9s %9s %9s %9s\n' "$round" "$name" "$path" $result
    done
    stop
  done
done

declare -A med
echo
for name in "${servers[@]}"; do
  for path in "${paths[@]}"; do
    med[$name $path]=$(median "${runs[$name $path]}")
    printf 'median %-12s %-9s %9s   p50 of each round: %s  p99: %s\n' "$name" "$path" "${med[$name $path]}" "${p50s[$name $path]}" "${p99s[$name $path]}"
  done
done
echo
r() { ratio "${med[$1 $3]}" "${med[$2 $3]}"; }
echo "portico / minimal:     1k $(r portico minimal 1k.html)   404 $(r portico minimal missing)   64k $(r portico minimal 64k.html)   (targets ≥ 0.85 for 1k and 404)"
echo "portico / caddy:       1k $(r portico caddy 1k.html)   404 $(r portico caddy missing)   (404 target ≥ 1.5)"
echo "portico / http-server: 1k $(r portico http-server 1k.html)"
echo "median of each round's portico / minimal: 1k $(round_ratios "${runs[portico 1k.html]}" "${runs[minimal 1k.html]}")   404 $(round_ratios "${runs[portico missing]}" "${runs[minimal missing]}")"
echo "portico / nginx:       1k $(r portico nginx 1k.html)   404 $(r portico nginx missing)   64k $(r portico nginx 64k.html)"
