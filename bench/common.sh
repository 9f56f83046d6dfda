# Sourced by the bench scripts: what each of them does before measuring. Run from the repository
# root (the scripts cd there first).

# need TOOL:PACKAGE... — installs Debian's PACKAGE for every TOOL that is missing (as root).
need() {
  local missing=()
  for pair in "$@"; do command -v "${pair%%:*}" >/dev/null || missing+=("${pair#*:}"); done
  ((${#missing[@]} == 0)) && return 0
  [[ $(id -u) == 0 ]] || { echo "missing: ${missing[*]} (install them, or run as root)"; exit 1; }
  apt-get update -qq && apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

[[ -f dist/cli/main.js ]] || npm run build >/dev/null

# Portico as `node PORTICO_ARGS… run …`: the Node flags its launcher starts the server with
# (src/cli/node-flags.ts, so a bench never runs it with other flags than users get), spelled out
# so that taskset or valgrind measures the serving process itself rather than the launcher.
read -r -a PORTICO_ARGS <<<"$(node --input-type=module -e \
  "import { NODE_FLAGS } from './dist/cli/node-flags.js'; console.log(NODE_FLAGS.join(' '))") bin/portico.js"

# A temporary directory, and the server in $pid (when set) stopped, whatever way the script ends.
tmp=$(mktemp -d)
pid=

# random_text FILE BYTES — BYTES of random base64 text in 76-column lines. Truncated by size rather
# than by `| head -c`: head closing the pipe early kills base64 with SIGPIPE, which pipefail and
# set -e then turn into a silent exit of the whole script.
random_text() {
  head -c "$2" /dev/urandom | base64 -w 76 >"$1"
  truncate -s "$2" "$1"
}

# wait_for URL — until it answers (10 s at most; curl -k: the test certificates).
wait_for() {
  for _ in $(seq 100); do curl -skf -o /dev/null "$1" && return 0; sleep 0.1; done
  echo "no answer from $1"; [[ -f $tmp/err ]] && cat "$tmp/err"; exit 1
}

# For scripts that run several servers one after another: every process started is in pids[],
# killed with the temporary directory whatever way the script ends.
pids=()
trap 'for p in "${pids[@]}" $pid; do kill "$p" 2>/dev/null || true; done; rm -rf "$tmp"' EXIT

# start_unpinned NAME COMMAND... — runs a server, free to use every CPU, until $check_url answers
# (START_TRIES tenths of a second at most, default 100).
start_unpinned() {
  local name=$1; shift
  "$@" >"$tmp/$name.out" 2>&1 &
  pids+=($!)
  for _ in $(seq "${START_TRIES:-100}"); do curl -sf -o /dev/null "$check_url" && return 0; sleep 0.1; done
  echo "$name did not start:"; cat "$tmp/$name.out"; exit 1
}
# start NAME COMMAND... — as start_unpinned, alone on CPU 0.
start() { start_unpinned "$1" taskset -c 0 "${@:2}"; }
# stop — the server started last, and a pause for its port to be free.
stop() { kill "${pids[-1]}"; wait "${pids[-1]}" 2>/dev/null || true; unset 'pids[-1]'; sleep 0.5; }

# wrk_latency URL [PID] — 2 s of warm-up, then $SECONDS_PER_RUN s (wrk -t1 -c64 on CPU 1) →
# "requests/s p50 p99", and with PID a fourth figure: the server's CPU time per request in µs.
wrk_latency() {
  taskset -c 1 wrk -t1 -c64 -d2s "$1" >/dev/null
  local before=0 report
  [[ -z ${2:-} ]] || before=$(cpu_ticks "$2")
  report=$(taskset -c 1 wrk -t1 -c64 -d"${SECONDS_PER_RUN}s" --latency "$1")
  wrk_figures <<<"$report"
  [[ -z ${2:-} ]] ||
    per_request_us "$(($(cpu_ticks "$2") - before))" "$(awk '/ requests in / { print $1 }' <<<"$report")"
}
# wrk_figures — wrk --latency's report on stdin → "requests/s p50 p99".
wrk_figures() {
  awk '/Requests\/sec/ { r = $2 } /^ +50%/ { m = $2 } /^ +99%/ { p = $2 } END { printf "%d %s %s", r, m, p }'
}
# cpu_ticks PID — user and system CPU time of PID and its children (nginx's worker), in clock ticks.
# CPU time per request does not count the time a shared machine's other tenants take the core,
# which requests/s does; a slow spell moves it less.
cpu_ticks() {
  local total=0 p
  for p in "$1" $(pgrep -P "$1"); do
    total=$((total + $(awk '{ print $14 + $15 }' "/proc/$p/stat" 2>/dev/null || echo 0)))
  done
  echo "$total"
}
# per_request_us TICKS REQUESTS — " µs" of CPU per request, one decimal.
per_request_us() {
  awk -v t="$1" -v n="$2" -v hz="$(getconf CLK_TCK)" 'BEGIN { printf " %.1f", t / hz * 1e6 / n }'
}
# median "N N N…" — the middle value.
median() { tr ' ' '\n' <<<"$1" | grep . | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
# ratio A B — A / B with two decimals.
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
# round_ratios "A1 A2…" "B1 B2…" — A/B of each round, then their median: servers measured in one
# round ran within a minute of each other, so the shared machine's slow spells (which move a
# server's figure by a third from one round to the next) weigh less than in a ratio of medians.
round_ratios() {
  local a=($1) b=($2) each=() i
  for i in "${!a[@]}"; do each+=("$(ratio "${a[$i]}" "${b[$i]}")"); done
  printf '%s (each round: %s)' "$(median "${each[*]}")" "${each[*]}"
}

# Several servers measured over rounds: `record ROUND NAME "REQ/S P99…"` prints the round's line and
# keeps its requests/s; `medians NAME...` prints each server's median and leaves it in med[NAME].
declare -A runs med
record() { runs[$2]+="${3%% *} "; printf '%-6s %-15s' "$1" "$2"; printf ' %9s' $3; echo; }
medians() {
  local name
  for name in "$@"; do
    med[$name]=$(median "${runs[$name]}")
    printf 'median %-15s %9s\n' "$name" "${med[$name]}"
  done
}

# portico_tls_yaml FILE PLAIN_PORT SECURE_PORT WWWROOT — a Portico configuration serving WWWROOT over
# TLS 1.3 with the test certificates (bench/h2.sh, bench/instructions.sh).
portico_tls_yaml() {
  cat >"$1" <<YAML
global:
  workers: 1
  port: "127.0.0.1:$2"
  sport: "127.0.0.1:$3"
  secure: true
  cert: $PWD/test/fixtures/tls/server.crt
  key: $PWD/test/fixtures/tls/server.key
  tlsMinVersion: TLSv1.3
  wwwroot: $4
YAML
}

# locations_yaml FILE PORT WWWROOT COUNT — Portico serving WWWROOT on 127.0.0.1:PORT for any host,
# with COUNT (50 at most) locations that have a pathRegex, as sites write them (file extensions, API
# versions, languages, dates, ids), none of which matches /1k.html: what nginx's order makes a
# prefix hit pay, as each is tried before the prefix location answers (bench/locations.sh,
# bench/instructions.sh).
locations_yaml() {
  local patterns=(
    '\\.css$' '\\.js$' '\\.mjs$' '\\.map$' '\\.png$' '\\.jpe?g$' '\\.gif$' '\\.svg$' '\\.webp$'
    '\\.avif$' '\\.ico$' '\\.woff2?$' '\\.ttf$' '\\.otf$' '\\.json$' '\\.xml$' '\\.txt$' '\\.pdf$'
    '\\.zip$' '\\.mp4$' '\\.webm$' '\\.mp3$' '\\.wasm$' '\\.php$' '\\.(bak|old|orig|swp)$'
    '^/api/v[0-9]+/users(/|$)' '^/api/v[0-9]+/orders(/|$)' '^/api/v[0-9]+/items(/|$)'
    '^/api/v[0-9]+/search$' '^/api/v[0-9]+/auth/' '^/(en|de|fr|es|it)/docs/'
    '^/(en|de|fr|es|it)/blog/' '^/(en|de|fr|es|it)/shop/' '^/blog/[0-9]{4}/[0-9]{2}/'
    '^/news/[0-9]{4}-[0-9]{2}-[0-9]{2}-' '^/users/[0-9]+/avatar$' '^/users/[0-9]+/settings$'
    '^/orders/[0-9a-f]{8}-[0-9a-f]{4}-' '/\\.well-known/(?!acme-challenge/)' '/\\.(git|svn|hg)/'
    '^/wp-(admin|login|content)' '^/admin(/|$)' '^/graphql$' '^/health(z)?$' '^/metrics$'
    '^/download/[^/]+\\.tar\\.gz$' '^/static/v[0-9]+/' '^/thumbs/[0-9]+x[0-9]+/'
    '^/(?i)legacy/' '/index\\.php/'
  )
  {
    printf 'global:\n  workers: 1\n  port: "127.0.0.1:%s"\nhosts:\n  - domain: "*"\n    wwwroot: %s\n' "$2" "$3"
    (($4 > 0)) && printf '    locations:\n'
    for p in "${patterns[@]:0:$4}"; do
      printf '      - pathRegex: "%s"\n        customHeaders:\n          Cache-Control: no-cache\n' "$p"
    done
  } >"$1"
}
