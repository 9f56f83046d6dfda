#!/usr/bin/env bash
# The cost of basic authentication for a logged-in client: wrk (1 thread, 64 connections) fetches
# the same 1 KiB file unprotected and behind a 401 entry with the right credentials (an Argon2id
# hash made like `portico passwd` makes it), from one Portico run. Portico is pinned to CPU 0,
# wrk to CPU 1. Prints both requests/s and their ratio (target ≥ 0.60): the credential cache
# should leave a header parse, a SHA-256 and a map look-up per request, not an Argon2 hash.
# Usage: bench/auth.sh [SECONDS per measurement, default 10]. Needs wrk (installed from Debian
# when missing, as root).
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_PER_RUN=${1:-10}
PORT=18495
source bench/common.sh
need wrk:wrk

mkdir -p "$tmp/www/open" "$tmp/www/private"
random_text "$tmp/www/open/1k.html" 1024
cp "$tmp/www/open/1k.html" "$tmp/www/private/1k.html"
hash=$(node --input-type=module -e "import { hashPassword } from './dist/auth/password.js'; console.log(await hashPassword('bench-password'))")
cat > "$tmp/portico.yaml" <<YAML
global:
  workers: 1
  port: "127.0.0.1:$PORT"
  wwwroot: $tmp/www
  users:
    - name: bench
      pass: "$hash"
  nonStandardCodes:
    - scode: 401
      regex: "^/private/"
YAML
credentials="Authorization: Basic $(printf 'bench:bench-password' | base64)"

taskset -c 0 bin/portico.js run -c "$tmp/portico.yaml" 2>"$tmp/err" &
pid=$!
wait_for "http://127.0.0.1:$PORT/open/1k.html"
[[ $(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT/private/1k.html") == 401 ]] || { echo "the private file is not protected"; cat "$tmp/err"; exit 1; }
[[ $(curl -s -o /dev/null -w '%{http_code}' -H "$credentials" "http://127.0.0.1:$PORT/private/1k.html") == 200 ]] || { echo "the credentials are refused"; cat "$tmp/err"; exit 1; }

measure() { # path, extra wrk arguments… → requests/s
  local path=$1; shift
  taskset -c 1 wrk -t1 -c64 -d2s "$@" "http://127.0.0.1:$PORT/$path" >/dev/null # warm-up
  taskset -c 1 wrk -t1 -c64 -d"${SECONDS_PER_RUN}s" "$@" "http://127.0.0.1:$PORT/$path" | awk '/Requests\/sec/ { printf "%d", $2 }'
}

open=$(measure open/1k.html)
protected=$(measure private/1k.html -H "$credentials")
printf '%-28s %9s requests/s\n' "unprotected 1 KiB" "$open" "basic auth, right password" "$protected"
echo "protected / unprotected: $(awk -v a="$protected" -v b="$open" 'BEGIN { printf "%.2f", a / b }')   (target ≥ 0.60)"
