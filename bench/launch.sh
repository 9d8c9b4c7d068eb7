#!/usr/bin/env bash
# Launch cost of one sandboxed command (issue 12): bare `true`, `cordon run -- true` on the
# cold path (--no-server) and through a running `cordon serve`, and `bwrap` with and
# without a network namespace — one interleaved hyperfine run (medians, p95), peak RSS (GNU
# time, median of 15), and throughput with 8 concurrent client loops.
#
# Usage: bench/launch.sh [RUNS] [LOOP_COMMANDS]   (defaults 200, 25 per loop).
# Machines here are shared and noisy: compare the ratios within one run.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS="${1:-200}"
PER_LOOP="${2:-25}"

missing=()
command -v hyperfine >/dev/null || missing+=(hyperfine)
command -v bwrap >/dev/null || missing+=(bubblewrap)
[ -x /usr/bin/time ] || missing+=(time)
command -v jq >/dev/null || missing+=(jq)
if [ ${#missing[@]} -gt 0 ]; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi

cargo build --release -q -p cordon --bin cordon
CORDON="$PWD/target/release/cordon"
WORK="$(mktemp -d /var/tmp/cordon-launch.XXXXXX)"
export CORDON_SERVE_SOCKET="$WORK/run/serve.sock"
"$CORDON" serve --socket "$CORDON_SERVE_SOCKET" 2>/dev/null &
SERVER=$!
trap 'kill $SERVER 2>/dev/null; rm -rf "$WORK"' EXIT
cd "$WORK" && git init -q .
for _ in $(seq 100); do [ -S "$CORDON_SERVE_SOCKET" ] && break; sleep 0.05; done
"$CORDON" run --json -- true 2>&1 | grep -q '"launch":"server"' || { echo "server path not taken" >&2; exit 1; }

BWRAP=(bwrap --unshare-user --unshare-pid --unshare-ipc --die-with-parent
       --ro-bind / / --dev /dev --proc /proc --tmpfs /tmp --bind "$WORK" "$WORK" --chdir "$WORK")

declare -A CMD=(
  [bare]="true"
  [cold]="$CORDON run --no-server -- true"
  [server]="$CORDON run -- true"
  [bwrap-net]="${BWRAP[*]} --unshare-net true"
  [bwrap]="${BWRAP[*]} true"
)
ORDER=(bare cold server bwrap-net bwrap)

args=()
for n in "${ORDER[@]}"; do args+=(-n "$n" "${CMD[$n]}"); done
hyperfine -N --warmup 20 --runs "$RUNS" --export-json "$WORK/h.json" "${args[@]}" >/dev/null

rss() { /usr/bin/time -f '%M' "$@" 2>&1 >/dev/null | tail -1; }
median_rss() { for _ in $(seq 15); do rss "$@"; done | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

# Throughput: 8 concurrent loops of PER_LOOP commands each; commands per second.
throughput() {
  local start end
  start=$(date +%s.%N)
  for _ in $(seq 8); do
    ( for _ in $(seq "$PER_LOOP"); do $1 >/dev/null 2>&1; done ) &
  done
  wait
  end=$(date +%s.%N)
  echo "$start $end" | awk -v n=$((8 * PER_LOOP)) '{printf "%.0f", n / ($2 - $1)}'
}

printf '%-10s %10s %10s %10s %12s\n' what median p95 'peak RSS' '8-loop cmd/s'
for n in "${ORDER[@]}"; do
  # shellcheck disable=SC2086
  r=$(median_rss ${CMD[$n]})
  # shellcheck disable=SC2086
  t=$(throughput "${CMD[$n]}")
  jq -r --arg n "$n" --arg r "$r" --arg t "$t" '
    .results[] | select(.command == $n) |
    (.times | sort) as $s |
    "\($n)\t\(.median*1000*100|round/100) ms\t\($s[(($s|length)*0.95|floor)]*1000*100|round/100) ms\t\($r) KiB\t\($t)"
  ' "$WORK/h.json" | awk -F'\t' '{printf "%-10s %10s %10s %10s %12s\n", $1, $2, $3, $4, $5}'
done
jq -r '
  (.results | map({(.command): .median}) | add) as $m |
  "",
  "cold/bwrap-net median ratio:   \(($m.cold/$m["bwrap-net"])*100|round/100)",
  "server/bwrap-net median ratio: \(($m.server/$m["bwrap-net"])*100|round/100)"
' "$WORK/h.json"
