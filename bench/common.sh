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

# A temporary directory, and the server in $pid (when set) stopped, whatever way the script ends.
tmp=$(mktemp -d)
pid=
trap '[[ -n $pid ]] && kill $pid 2>/dev/null; rm -rf "$tmp"' EXIT

# wait_for URL — until it answers (10 s at most; curl -k: the test certificates).
wait_for() {
  for _ in $(seq 100); do curl -skf -o /dev/null "$1" && return 0; sleep 0.1; done
  echo "no answer from $1"; [[ -f $tmp/err ]] && cat "$tmp/err"; exit 1
}
