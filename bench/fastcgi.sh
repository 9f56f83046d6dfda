#!/usr/bin/env bash
# PHP over FastCGI, side by side in one run: a one-line hello.php through Portico (fcgi, kept
# connections), nginx (1 worker, fastcgi_keep_conn on with an upstream keepalive) and Caddy
# (php_fastcgi, GOMAXPROCS=1), each alone on CPU 0, all three to the same php-fpm pool (static,
# 4 children) that shares CPU 1 with wrk (1 thread, 64 connections). Prints requests/s, p50 and p99 per
# round and the median ratios. Then a CGI shell script (a process per request) through Portico (cgi)
# and Apache (mod_cgid, one event-MPM process), both on CPU 0 with their scripts.
# Read nginx's figure with its p99: with an upstream keepalive, a connection opened beyond
# php-fpm's children waits in its listen queue behind kept ones (a second and more), and wrk counts
# only the requests answered. Portico learns how many connections php-fpm answers on and keeps the
# other requests waiting, in order, on its side.
# Usage: bench/fastcgi.sh [SECONDS, default 10] [ROUNDS, default 3].
# Installs wrk, nginx, caddy, php-fpm and apache2 from Debian when missing (as root).
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_PER_RUN=${1:-10}
ROUNDS=${2:-3}
PORT=18790

source bench/common.sh
need wrk:wrk nginx:nginx caddy:caddy taskset:util-linux php-fpm8.2:php-fpm apache2:apache2
mkdir -p "$tmp/www"
nginx_common="pid $tmp/nginx.pid; error_log $tmp/nginx-error.log; events { worker_connections 4096; }"
nginx_temp="client_body_temp_path $tmp; proxy_temp_path $tmp; fastcgi_temp_path $tmp; uwsgi_temp_path $tmp; scgi_temp_path $tmp;"
echo '<?php echo "hello\n";' > "$tmp/www/hello.php"

cat > "$tmp/fpm.conf" <<FPM
[global]
pid = $tmp/fpm.pid
error_log = $tmp/fpm.log
daemonize = no
[www]
listen = $tmp/fpm.sock
pm = static
pm.max_children = 4
FPM
taskset -c 1 php-fpm8.2 -R -F -y "$tmp/fpm.conf" &
pids+=($!)
for _ in $(seq 100); do [[ -S $tmp/fpm.sock ]] && break; sleep 0.1; done

cat > "$tmp/portico.yaml" <<YAML
global:
  workers: 1
  port: "127.0.0.1:$PORT"
  wwwroot: $tmp/www
  loadModules: [fcgi]
  fcgiScriptExtensions: [.php]
  fcgiTo: unix://$tmp/fpm.sock
YAML
cat > "$tmp/nginx.conf" <<NGINX
user root;
worker_processes 1;
$nginx_common
http {
  access_log off;
  upstream php { server unix:$tmp/fpm.sock; keepalive 64; }
  server {
    listen 127.0.0.1:$PORT;
    root $tmp/www;
    location ~ \.php$ {
      include /etc/nginx/fastcgi_params;
      fastcgi_param SCRIPT_FILENAME \$document_root\$fastcgi_script_name;
      fastcgi_keep_conn on;
      fastcgi_pass php;
    }
  }
  $nginx_temp
}
NGINX
cat > "$tmp/Caddyfile" <<CADDY
{
  admin off
  auto_https off
}
http://127.0.0.1:$PORT {
  root * $tmp/www
  php_fastcgi unix/$tmp/fpm.sock
}
CADDY

check_url="http://127.0.0.1:$PORT/hello.php"
servers=(portico nginx caddy)
printf '%-6s %-15s %9s %9s %9s   (wrk -t1 -c64, %ss, hello.php)\n' round server 'req/s' p50 p99 "$SECONDS_PER_RUN"
for round in $(seq "$ROUNDS"); do
  for name in "${servers[@]}"; do
    case $name in
      portico) start "$name" node "${PORTICO_ARGS[@]}" run -c "$tmp/portico.yaml" ;;
      nginx) start "$name" nginx -c "$tmp/nginx.conf" -g 'daemon off;' ;;
      caddy) start "$name" env GOMAXPROCS=1 caddy run --config "$tmp/Caddyfile" --adapter caddyfile ;;
    esac
    [[ $(curl -s "$check_url") == hello ]] || echo "warning: $name did not run hello.php"
    result=$(wrk_latency "$check_url")
    stop
    record "$round" "$name" "$result"
  done
done

echo
medians "${servers[@]}"
echo
echo "portico / nginx: $(ratio "${med[portico]}" "${med[nginx]}")   (target ≥ 0.9)"
echo "portico / caddy: $(ratio "${med[portico]}" "${med[caddy]}")   (target ≥ 1.2)"
echo "median of each round's portico / nginx: $(round_ratios "${runs[portico]}" "${runs[nginx]}")"

# ── CGI: a shell script per request ─────────────────────────────────────────────────────────────
# Apache runs its CGI daemon as www-data: the directory must be readable by it.
chmod 755 "$tmp" "$tmp/www"
mkdir -p "$tmp/www/cgi-bin"
printf '#!/bin/sh\nprintf "Content-Type: text/plain\\r\\n\\r\\nhello\\n"\n' > "$tmp/www/cgi-bin/hello.sh"
chmod 755 "$tmp/www/cgi-bin" "$tmp/www/cgi-bin/hello.sh"
cat > "$tmp/portico-cgi.yaml" <<YAML
global:
  workers: 1
  port: "127.0.0.1:$PORT"
  wwwroot: $tmp/www
  loadModules: [cgi]
YAML
cat > "$tmp/apache.conf" <<APACHE
ServerRoot /etc/apache2
LoadModule mpm_event_module /usr/lib/apache2/modules/mod_mpm_event.so
LoadModule authz_core_module /usr/lib/apache2/modules/mod_authz_core.so
LoadModule cgid_module /usr/lib/apache2/modules/mod_cgid.so
ServerName localhost
Listen 127.0.0.1:$PORT
PidFile $tmp/apache.pid
ErrorLog $tmp/apache-error.log
ScriptSock $tmp/cgid.sock
User www-data
Group www-data
DocumentRoot $tmp/www
ServerLimit 1
StartServers 1
ThreadsPerChild 64
MaxRequestWorkers 64
<Directory $tmp/www/cgi-bin>
  Options +ExecCGI
  SetHandler cgi-script
  Require all granted
</Directory>
APACHE

check_url="http://127.0.0.1:$PORT/cgi-bin/hello.sh"
cgi_servers=(portico-cgi apache)
echo
printf '%-6s %-15s %9s %9s %9s   (wrk -t1 -c64, %ss, cgi-bin/hello.sh)\n' round server 'req/s' p50 p99 "$SECONDS_PER_RUN"
for round in $(seq "$ROUNDS"); do
  for name in "${cgi_servers[@]}"; do
    case $name in
      portico-cgi) start "$name" node "${PORTICO_ARGS[@]}" run -c "$tmp/portico-cgi.yaml" ;;
      apache) start "$name" apache2 -f "$tmp/apache.conf" -DFOREGROUND ;;
    esac
    [[ $(curl -s "$check_url") == hello ]] || echo "warning: $name did not run hello.sh"
    result=$(wrk_latency "$check_url")
    stop
    record "$round" "$name" "$result"
  done
done
echo
medians "${cgi_servers[@]}"
echo "portico / apache (CGI): $(ratio "${med[portico-cgi]}" "${med[apache]}")"
