#!/usr/bin/env bash
# Static-file throughput, side by side in one run: Portico, nginx (1 worker), Caddy (GOMAXPROCS=1),
# npm's http-server and a minimal node:http server answering from memory (bench/minimal-server.mjs).
# Each server runs alone, pinned to CPU 0; wrk (1 thread, 64 connections) runs on CPU 1.
# Prints requests/s for a 1 KiB and a 64 KiB file and each server's ratio to the minimal server.
# Usage: bench/static.sh [SECONDS per measurement, default 10]. Installs wrk, nginx and caddy
# from Debian when missing (as root), and http-server from npm into a temporary directory.
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_PER_RUN=${1:-10}
PORT=18480

source bench/common.sh
need wrk:wrk nginx:nginx caddy:caddy taskset:util-linux
mkdir -p "$tmp/www" "$tmp/hs"
head -c 1024 /dev/urandom | base64 -w 76 | head -c 1024 > "$tmp/www/1k.html"
head -c 65536 /dev/urandom | base64 -w 76 | head -c 65536 > "$tmp/www/64k.html"
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
measure() { # path → requests/s
  taskset -c 1 wrk -t1 -c64 -d2s "http://127.0.0.1:$PORT/$1" >/dev/null  # warm-up
  taskset -c 1 wrk -t1 -c64 -d"${SECONDS_PER_RUN}s" "http://127.0.0.1:$PORT/$1" | awk '/Requests\/sec/ { printf "%d", $2 }'
}

declare -A rps1 rps64
run_server() { # name, command...
  local name=$1
  start "$@"
  rps1[$name]=$(measure 1k.html)
  rps64[$name]=$(measure 64k.html)
  stop
  printf '%-12s %9s %9s\n' "$name" "${rps1[$name]}" "${rps64[$name]}"
}

printf '%-12s %9s %9s   (requests/s, wrk -t1 -c64, %ss)\n' server 1k 64k "$SECONDS_PER_RUN"
run_server minimal node bench/minimal-server.mjs "$PORT" "$tmp/www"
run_server portico bin/portico.js run -c "$tmp/portico.yaml"
run_server nginx nginx -c "$tmp/nginx.conf" -g 'daemon off;'
run_server caddy env GOMAXPROCS=1 caddy run --config "$tmp/Caddyfile" --adapter caddyfile
run_server http-server node "$tmp/hs/node_modules/http-server/bin/http-server" "$tmp/www" -a 127.0.0.1 -p "$PORT" -s -c-1

echo
echo "portico / minimal:     1k $(ratio "${rps1[portico]}" "${rps1[minimal]}")   64k $(ratio "${rps64[portico]}" "${rps64[minimal]}")   (target ≥ 0.75)"
echo "portico / caddy:       1k $(ratio "${rps1[portico]}" "${rps1[caddy]}")   (target ≥ 2)"
echo "portico / http-server: 1k $(ratio "${rps1[portico]}" "${rps1[http-server]}")   (target ≥ 4)"
echo "portico / nginx:       1k $(ratio "${rps1[portico]}" "${rps1[nginx]}")   64k $(ratio "${rps64[portico]}" "${rps64[nginx]}")"
