#!/usr/bin/env bash
# Reverse-proxy throughput, side by side in one run: Portico, nginx (1 worker, upstream keepalive),
# Caddy (GOMAXPROCS=1), HAProxy (one thread), a minimal Node proxy on undici's Pool
# (bench/minimal-proxy.mjs) and npm's http-proxy, each alone on CPU 0 in front of the same backend
# (nginx serving a 1 KiB file from memory) that shares CPU 1 with wrk (1 thread, 64 connections).
# Prints requests/s, p50 and p99 per round and the median ratios. Usage: bench/proxy.sh [SECONDS, default
# 10] [ROUNDS, default 3]. Installs wrk, nginx, caddy and haproxy from Debian when missing (as root),
# and http-proxy from npm into a temporary directory.
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_PER_RUN=${1:-10}
ROUNDS=${2:-3}
PORT=18680
BACKEND=18681

source bench/common.sh
need wrk:wrk nginx:nginx caddy:caddy haproxy:haproxy taskset:util-linux
mkdir -p "$tmp/www" "$tmp/hp"
random_text "$tmp/www/1k.html" 1024
(cd "$tmp/hp" && npm install --silent --no-audit --no-fund http-proxy@1 >/dev/null 2>&1)

nginx_common="pid PIDFILE; error_log $tmp/NAME-error.log; events { worker_connections 4096; }"
cat > "$tmp/backend.conf" <<NGINX
worker_processes 1;
${nginx_common//PIDFILE/$tmp/backend.pid}
http {
  access_log off;
  open_file_cache max=16;
  server { listen 127.0.0.1:$BACKEND; root $tmp/www; keepalive_requests 1000000; }
  client_body_temp_path $tmp; proxy_temp_path $tmp; fastcgi_temp_path $tmp; uwsgi_temp_path $tmp; scgi_temp_path $tmp;
}
NGINX
sed -i "s/NAME/backend/" "$tmp/backend.conf"
cat > "$tmp/nginx.conf" <<NGINX
worker_processes 1;
${nginx_common//PIDFILE/$tmp/nginx.pid}
http {
  access_log off;
  upstream app { server 127.0.0.1:$BACKEND; keepalive 64; }
  server {
    listen 127.0.0.1:$PORT;
    location / { proxy_pass http://app; proxy_http_version 1.1; proxy_set_header Connection ""; }
  }
  client_body_temp_path $tmp; proxy_temp_path $tmp; fastcgi_temp_path $tmp; uwsgi_temp_path $tmp; scgi_temp_path $tmp;
}
NGINX
sed -i "s/NAME/nginx/" "$tmp/nginx.conf"
cat > "$tmp/portico.yaml" <<YAML
global:
  workers: 1
  port: "127.0.0.1:$PORT"
  loadModules: [rproxy]
  proxyTo: http://127.0.0.1:$BACKEND
YAML
cat > "$tmp/Caddyfile" <<CADDY
{
  admin off
  auto_https off
  storage file_system $tmp/caddy
}
http://127.0.0.1:$PORT {
  reverse_proxy 127.0.0.1:$BACKEND
}
CADDY
cat > "$tmp/haproxy.cfg" <<HAPROXY
global
  nbthread 1
defaults
  mode http
  timeout connect 10s
  timeout client 60s
  timeout server 60s
  http-reuse always
frontend f
  bind 127.0.0.1:$PORT
  default_backend b
backend b
  server app 127.0.0.1:$BACKEND
HAPROXY
cat > "$tmp/http-proxy.mjs" <<JS
import http from 'node:http';
import httpProxy from '$tmp/hp/node_modules/http-proxy/index.js';
const proxy = httpProxy.createProxyServer({ target: 'http://127.0.0.1:$BACKEND', agent: new http.Agent({ keepAlive: true, maxSockets: 128 }) });
proxy.on('error', (_e, _req, res) => { res.writeHead?.(502); res.end(); });
http.createServer((req, res) => proxy.web(req, res)).listen($PORT, '127.0.0.1');
JS

taskset -c 1 nginx -c "$tmp/backend.conf" -g 'daemon off;' &
pids+=($!)
for _ in $(seq 100); do curl -sf -o /dev/null "http://127.0.0.1:$BACKEND/1k.html" && break; sleep 0.1; done

check_url="http://127.0.0.1:$PORT/1k.html"

servers=(portico minimal nginx caddy haproxy http-proxy)
printf '%-6s %-15s %9s %9s %9s   (wrk -t1 -c64, %ss, 1 KiB)\n' round server 'req/s' p50 p99 "$SECONDS_PER_RUN"
for round in $(seq "$ROUNDS"); do
  for name in "${servers[@]}"; do
    case $name in
      portico) start portico node "${PORTICO_ARGS[@]}" run -c "$tmp/portico.yaml" ;;
      minimal) start minimal node bench/minimal-proxy.mjs "$PORT" "http://127.0.0.1:$BACKEND" ;;
      nginx) start nginx nginx -c "$tmp/nginx.conf" -g 'daemon off;' ;;
      caddy) start caddy env GOMAXPROCS=1 caddy run --config "$tmp/Caddyfile" --adapter caddyfile ;;
      haproxy) start haproxy haproxy -f "$tmp/haproxy.cfg" ;;
      http-proxy) start http-proxy node "$tmp/http-proxy.mjs" ;;
    esac
    result=$(wrk_latency "$check_url")
    stop
    record "$round" "$name" "$result"
  done
done

echo
medians "${servers[@]}"
echo
echo "portico / minimal undici: $(ratio "${med[portico]}" "${med[minimal]}")   (target ≥ 0.9)"
echo "portico / caddy:          $(ratio "${med[portico]}" "${med[caddy]}")   (target ≥ 1.2)"
echo "portico / http-proxy:     $(ratio "${med[portico]}" "${med[http-proxy]}")   (target ≥ 1.5)"
echo "portico / nginx:          $(ratio "${med[portico]}" "${med[nginx]}")"
echo "portico / haproxy:        $(ratio "${med[portico]}" "${med[haproxy]}")"
