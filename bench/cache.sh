#!/usr/bin/env bash
# Cache hits, side by side in one run: 1 KiB responses served from Portico's cache in front of its
# proxy (cache-hit-1k), the same file from Portico's static handler (static-1k), nginx with
# proxy_cache (1 worker) and Varnish (default VCL, one thread pool), each alone on CPU 0 in front of
# the same backend (nginx serving the file with `expires 1h`) that shares CPU 1 with wrk (1 thread,
# 64 connections). Every answer is a hit after the warm-up. Prints requests/s, p50 and p99 per round and
# the median ratios. Usage: bench/cache.sh [SECONDS, default 10] [ROUNDS, default 3]. Installs wrk,
# nginx and varnish from Debian when missing (as root). WORKERS=2 runs both Portico rows with two
# worker processes, unpinned (two processes sharing one CPU measure their switching, not their
# work), so that hits are read from the store the workers share; SERVERS picks rows (default: all).
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_PER_RUN=${1:-10}
ROUNDS=${2:-3}
PORT=18690
BACKEND=18691

source bench/common.sh
need wrk:wrk nginx:nginx varnishd:varnish taskset:util-linux
mkdir -p "$tmp/www" "$tmp/nginx-cache"
random_text "$tmp/www/1k.html" 1024

nginx_common="pid PIDFILE; error_log $tmp/NAME-error.log; events { worker_connections 4096; }"
nginx_temp="client_body_temp_path $tmp; proxy_temp_path $tmp; fastcgi_temp_path $tmp; uwsgi_temp_path $tmp; scgi_temp_path $tmp;"
cat > "$tmp/backend.conf" <<NGINX
worker_processes 1;
${nginx_common//PIDFILE/$tmp/backend.pid}
http {
  access_log off;
  server { listen 127.0.0.1:$BACKEND; root $tmp/www; expires 1h; keepalive_requests 1000000; }
  $nginx_temp
}
NGINX
sed -i "s/NAME/backend/" "$tmp/backend.conf"
cat > "$tmp/nginx.conf" <<NGINX
worker_processes 1;
${nginx_common//PIDFILE/$tmp/nginx.pid}
http {
  access_log off;
  proxy_cache_path $tmp/nginx-cache keys_zone=c:10m;
  upstream app { server 127.0.0.1:$BACKEND; keepalive 64; }
  server {
    listen 127.0.0.1:$PORT;
    location / {
      proxy_cache c;
      proxy_pass http://app; proxy_http_version 1.1; proxy_set_header Connection "";
    }
  }
  $nginx_temp
}
NGINX
sed -i "s/NAME/nginx/" "$tmp/nginx.conf"
cat > "$tmp/cache.yaml" <<YAML
global:
  workers: ${WORKERS:-1}
  port: "127.0.0.1:$PORT"
  loadModules: [cache, rproxy]
  proxyTo: http://127.0.0.1:$BACKEND
YAML
cat > "$tmp/static.yaml" <<YAML
global:
  workers: ${WORKERS:-1}
  port: "127.0.0.1:$PORT"
  wwwroot: $tmp/www
YAML

taskset -c 1 nginx -c "$tmp/backend.conf" -g 'daemon off;' &
pids+=($!)
for _ in $(seq 100); do curl -sf -o /dev/null "http://127.0.0.1:$BACKEND/1k.html" && break; sleep 0.1; done

check_url="http://127.0.0.1:$PORT/1k.html"
portico_start=start
[[ ${WORKERS:-1} == 1 ]] || portico_start=start_unpinned
read -ra servers <<<"${SERVERS:-portico-cache portico-static nginx-cache varnish}"
printf '%-6s %-15s %9s %9s %9s   (wrk -t1 -c64, %ss, 1 KiB)\n' round server 'req/s' p50 p99 "$SECONDS_PER_RUN"
for round in $(seq "$ROUNDS"); do
  for name in "${servers[@]}"; do
    case $name in
      portico-cache) $portico_start "$name" node "${PORTICO_ARGS[@]}" run -c "$tmp/cache.yaml" ;;
      portico-static) $portico_start "$name" node "${PORTICO_ARGS[@]}" run -c "$tmp/static.yaml" ;;
      nginx-cache) start "$name" nginx -c "$tmp/nginx.conf" -g 'daemon off;' ;;
      varnish) start "$name" varnishd -F -b "127.0.0.1:$BACKEND" -a "127.0.0.1:$PORT" \
        -n "$tmp/varnish" -s malloc,64m -p thread_pools=1 ;;
    esac
    # Every answer after this one should be a hit: say so if it is not.
    curl -s -o /dev/null "$check_url"
    curl -sI "$check_url" | grep -qiE '^(cache-status: .*hit|age: [0-9]|x-cache-status: hit)' ||
      [[ $name == portico-static || $name == nginx-cache ]] || echo "warning: $name did not answer from its cache"
    result=$(wrk_latency "$check_url")
    stop
    record "$round" "$name" "$result"
  done
done

echo
medians "${servers[@]}"
echo
echo "cache-hit-1k / static-1k:   $(ratio "${med[portico-cache]}" "${med[portico-static]}")   (target ≥ 0.8)"
if [[ -n ${med[varnish]:-} ]]; then
  echo "cache-hit-1k / varnish:     $(ratio "${med[portico-cache]}" "${med[varnish]}")   (target ≥ 0.5)"
fi
if [[ -n ${med[nginx-cache]:-} ]]; then
  echo "cache-hit-1k / nginx-cache: $(ratio "${med[portico-cache]}" "${med[nginx-cache]}")"
fi
