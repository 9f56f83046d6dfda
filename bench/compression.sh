#!/usr/bin/env bash
# Compression of a proxied page, side by side in one run: a 64 KiB HTML page (test/helpers/
# html-page.ts) from a backend nginx, proxied and gzip-compressed by Portico (enableCompression) and
# by nginx (`gzip on`, gzip_comp_level 1: Portico's level and nginx's default), each alone on CPU 0;
# the backend shares CPU 1 with wrk (1 thread, 64 connections, Accept-Encoding: gzip). Portico is
# also measured with brotli and without a coding. Prints the coded sizes, then requests/s, p50,
# p99 and the server's CPU µs per request per round, and the median ratios. Usage:
# bench/compression.sh [SECONDS, default 10] [ROUNDS, default 3]. Installs wrk and nginx from Debian
# when missing (as root).
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_PER_RUN=${1:-10}
ROUNDS=${2:-3}
PORT=18700
BACKEND=18701

source bench/common.sh
need wrk:wrk nginx:nginx taskset:util-linux
mkdir -p "$tmp/www"
node --import tsx -e "
  import { writeFileSync } from 'node:fs';
  import { htmlPage } from './test/helpers/html-page.ts';
  writeFileSync('$tmp/www/page.html', htmlPage(64 * 1024));
"

nginx_common="pid PIDFILE; error_log $tmp/NAME-error.log; events { worker_connections 4096; }"
nginx_temp="client_body_temp_path $tmp; proxy_temp_path $tmp; fastcgi_temp_path $tmp; uwsgi_temp_path $tmp; scgi_temp_path $tmp;"
cat > "$tmp/backend.conf" <<NGINX
worker_processes 1;
${nginx_common//PIDFILE/$tmp/backend.pid}
http {
  access_log off;
  include /etc/nginx/mime.types;
  open_file_cache max=16;
  server { listen 127.0.0.1:$BACKEND; root $tmp/www; keepalive_requests 1000000; }
  $nginx_temp
}
NGINX
sed -i "s/NAME/backend/" "$tmp/backend.conf"
cat > "$tmp/nginx.conf" <<NGINX
worker_processes 1;
${nginx_common//PIDFILE/$tmp/nginx.pid}
http {
  access_log off;
  gzip on;
  gzip_comp_level 1;
  gzip_proxied any;
  gzip_vary on;
  upstream app { server 127.0.0.1:$BACKEND; keepalive 64; }
  server {
    listen 127.0.0.1:$PORT;
    location / { proxy_pass http://app; proxy_http_version 1.1; proxy_set_header Connection ""; }
  }
  $nginx_temp
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

taskset -c 1 nginx -c "$tmp/backend.conf" -g 'daemon off;' &
pids+=($!)
for _ in $(seq 100); do curl -sf -o /dev/null "http://127.0.0.1:$BACKEND/page.html" && break; sleep 0.1; done

check_url="http://127.0.0.1:$PORT/page.html"

# coded CODING — the size of the page as the server just started sends it with that coding, after
# checking that it decodes to the page.
coded() {
  local ae=$1
  curl -s --compressed -H "Accept-Encoding: $ae" -o "$tmp/decoded" "$check_url"
  cmp -s "$tmp/decoded" "$tmp/www/page.html" || { echo "$1: not the page after decoding"; exit 1; }
  curl -s -H "Accept-Encoding: $ae" -o /dev/null -w '%{size_download}' "$check_url"
}

# measure CODING — as wrk_latency, with that Accept-Encoding.
measure() {
  local report before
  taskset -c 1 wrk -t1 -c64 -d2s -H "Accept-Encoding: $1" "$check_url" >/dev/null
  before=$(cpu_ticks "${pids[-1]}")
  report=$(taskset -c 1 wrk -t1 -c64 -d"${SECONDS_PER_RUN}s" --latency -H "Accept-Encoding: $1" "$check_url")
  wrk_figures <<<"$report"
  per_request_us "$(($(cpu_ticks "${pids[-1]}") - before))" "$(awk '/ requests in / { print $1 }' <<<"$report")"
}

echo "page: $(stat -c %s "$tmp/www/page.html") bytes"
start portico node "${PORTICO_ARGS[@]}" run -c "$tmp/portico.yaml"
echo "portico gzip: $(coded gzip) bytes, br: $(coded br) bytes"
stop
start nginx nginx -c "$tmp/nginx.conf" -g 'daemon off;'
echo "nginx gzip:   $(coded gzip) bytes"
stop
echo

rows=(portico-gzip nginx-gzip portico-br portico-plain)
printf '%-6s %-15s %9s %9s %9s %9s   (wrk -t1 -c64, %ss, 64 KiB page)\n' round server 'req/s' p50 p99 'CPU µs' "$SECONDS_PER_RUN"
for round in $(seq "$ROUNDS"); do
  start portico node "${PORTICO_ARGS[@]}" run -c "$tmp/portico.yaml"
  record "$round" portico-gzip "$(measure gzip)"
  record "$round" portico-br "$(measure br)"
  record "$round" portico-plain "$(measure identity)"
  stop
  start nginx nginx -c "$tmp/nginx.conf" -g 'daemon off;'
  record "$round" nginx-gzip "$(measure gzip)"
  stop
done

echo
medians "${rows[@]}"
echo
echo "portico gzip / nginx gzip: $(round_ratios "${runs[portico-gzip]}" "${runs[nginx-gzip]}")"
echo "portico br / portico gzip: $(round_ratios "${runs[portico-br]}" "${runs[portico-gzip]}")"
