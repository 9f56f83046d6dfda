#!/usr/bin/env bash
# Python applications, side by side in one run (issue 13). The same Flask "hello" through Portico
# `wsgid` (one process per CPU), through nginx (1 worker) in front of gunicorn (sync workers, as
# many, Unix socket) and through gunicorn alone; the same Starlette "hello" through Portico `asgi`
# and uvicorn alone (1 worker). Nothing is pinned: the Python processes are the work, and every
# setup gets the same 2 CPUs with wrk (1 thread, 64 connections) beside it. Prints requests/s,
# p50 and p99 per round and the median ratios. Usage: bench/python.sh [SECONDS, default 10] [ROUNDS, default 3].
# Uses Debian's python3 with python3-flask, python3-starlette, gunicorn and python3-uvicorn.
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_PER_RUN=${1:-10}
ROUNDS=${2:-3}
PORT=18791
PY=/usr/bin/python3

source bench/common.sh
need wrk:wrk nginx:nginx gunicorn:gunicorn
$PY -c 'import flask, starlette, uvicorn' 2>/dev/null ||
  { apt-get update -qq && apt-get install -y -qq --no-install-recommends python3-flask python3-starlette python3-uvicorn >/dev/null; }
WORKERS=$(nproc)
apps=$PWD/bench/python

# The servers' Python processes need the CPUs (start_unpinned), and time to import.
START_TRIES=200
wrk_free() {
  wrk -t1 -c64 -d2s "$1" >/dev/null
  wrk -t1 -c64 -d"${SECONDS_PER_RUN}s" --latency "$1" | wrk_figures
}

cat > "$tmp/wsgid.yaml" <<YAML
global:
  workers: 1
  port: "127.0.0.1:$PORT"
  loadModules: [wsgid]
  pythonExecutable: $PY
  wsgidApplicationPath: $apps/hello_flask.py
YAML
cat > "$tmp/asgi.yaml" <<YAML
global:
  workers: 1
  port: "127.0.0.1:$PORT"
  loadModules: [asgi]
  pythonExecutable: $PY
  asgiApplicationPath: $apps/hello_starlette.py
YAML
cat > "$tmp/nginx.conf" <<NGINX
user root;
worker_processes 1;
pid $tmp/nginx.pid; error_log $tmp/nginx-error.log; events { worker_connections 4096; }
http {
  access_log off;
  server {
    listen 127.0.0.1:$PORT;
    location / { proxy_pass http://unix:$tmp/gunicorn.sock; proxy_set_header Host \$host; }
  }
  client_body_temp_path $tmp; proxy_temp_path $tmp; fastcgi_temp_path $tmp; uwsgi_temp_path $tmp; scgi_temp_path $tmp;
}
NGINX

check_url="http://127.0.0.1:$PORT/"
servers=(portico-wsgid nginx-gunicorn gunicorn portico-asgi uvicorn)
printf '%-6s %-15s %9s %9s   (wrk -t1 -c64, %ss, "hello", %s Python processes for WSGI)\n' round server 'req/s' p50 p99 "$SECONDS_PER_RUN" "$WORKERS"
for round in $(seq "$ROUNDS"); do
  for name in "${servers[@]}"; do
    case $name in
      portico-wsgid) start_unpinned "$name" node "${PORTICO_ARGS[@]}" run -c "$tmp/wsgid.yaml" ;;
      portico-asgi) start_unpinned "$name" node "${PORTICO_ARGS[@]}" run -c "$tmp/asgi.yaml" ;;
      nginx-gunicorn)
        "$PY" -m gunicorn --chdir "$apps" -w "$WORKERS" -k sync -b "unix:$tmp/gunicorn.sock" hello_flask:app >"$tmp/gunicorn-nginx.out" 2>&1 &
        pids+=($!)
        for _ in $(seq 100); do [[ -S $tmp/gunicorn.sock ]] && break; sleep 0.1; done
        start_unpinned "$name" nginx -c "$tmp/nginx.conf" -g 'daemon off;' ;;
      gunicorn) start_unpinned "$name" "$PY" -m gunicorn --chdir "$apps" -w "$WORKERS" -k sync -b "127.0.0.1:$PORT" hello_flask:app ;;
      uvicorn) start_unpinned "$name" "$PY" -m uvicorn --app-dir "$apps" --workers 1 --no-access-log --port "$PORT" --host 127.0.0.1 hello_starlette:app ;;
    esac
    [[ $(curl -s "$check_url") == hello ]] || echo "warning: $name did not answer hello"
    result=$(wrk_free "$check_url")
    stop
    if [[ $name == nginx-gunicorn ]]; then stop; rm -f "$tmp/gunicorn.sock"; fi
    record "$round" "$name" "$result"
  done
done

echo
medians "${servers[@]}"
echo
echo "portico wsgid / nginx + gunicorn: $(ratio "${med[portico-wsgid]}" "${med[nginx-gunicorn]}")   (target ≥ 1.0)"
echo "portico wsgid / gunicorn alone:   $(ratio "${med[portico-wsgid]}" "${med[gunicorn]}")"
echo "portico asgi / uvicorn alone:     $(ratio "${med[portico-asgi]}" "${med[uvicorn]}")   (target ≥ 0.8)"
