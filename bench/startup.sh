#!/usr/bin/env bash
# Startup overhead of `cordon run -- true` vs bare `true` vs `bwrap` with the same
# namespaces (user, mount, pid, net, ipc; read-only root, private /tmp, fresh /proc, /dev).
# Prints median wall time (hyperfine) and peak RSS (GNU time) of each, and the ratios.
#
# Usage: bench/startup.sh [RUNS]   (default 200). Installs hyperfine, bubblewrap and time
# via apt if missing. Machines here are shared and noisy: compare the ratios, not the
# absolute numbers.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS="${1:-200}"

missing=()
command -v hyperfine >/dev/null || missing+=(hyperfine)
command -v bwrap >/dev/null || missing+=(bubblewrap)
[ -x /usr/bin/time ] || missing+=(time)
command -v jq >/dev/null || missing+=(jq)
if [ ${#missing[@]} -gt 0 ]; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi

cargo build --release -q -p cordon
CORDON="$PWD/target/release/cordon"
WORK="$(mktemp -d /var/tmp/cordon-bench.XXXXXX)"
trap 'rm -rf "$WORK"' EXIT
cd "$WORK" && git init -q .

BWRAP=(bwrap --unshare-user --unshare-pid --unshare-net --unshare-ipc --die-with-parent
       --ro-bind / / --dev /dev --proc /proc --tmpfs /tmp --bind "$WORK" "$WORK" --chdir "$WORK")

# The helper's own share: `--sandbox forbid` runs the same CLI (parse, trust profile,
# decision, resolution) without the helper, so cordon − forbid ≈ the helper's cost. (The
# payload is no longer in the dry-run JSON: it carries environment values.)
FORBID=("$CORDON" run --sandbox forbid -- true)

hyperfine -N --warmup 20 --runs "$RUNS" --export-json "$WORK/h.json" \
  -n bare "true" \
  -n cordon "$CORDON run -- true" \
  -n forbid "${FORBID[*]}" \
  -n bwrap "${BWRAP[*]} true" >/dev/null

rss() { /usr/bin/time -f '%M' "$@" 2>&1 >/dev/null | tail -1; }
median_rss() { for _ in $(seq 15); do rss "$@"; done | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

R_BARE=$(median_rss true)
R_CORDON=$(median_rss "$CORDON" run -- true)
R_HELPER=$(median_rss "${FORBID[@]}")
R_BWRAP=$(median_rss "${BWRAP[@]}" true)

jq -r --arg rb "$R_BARE" --arg rc "$R_CORDON" --arg rh "$R_HELPER" --arg rw "$R_BWRAP" '
  (.results | map({(.command): .median}) | add) as $m |
  "what      median wall   peak RSS",
  "bare      \($m.bare*1000|.*100|round/100) ms   \($rb) KiB",
  "cordon    \($m.cordon*1000|.*100|round/100) ms   \($rc) KiB",
  "forbid    \($m.forbid*1000|.*100|round/100) ms   \($rh) KiB   (CLI without the helper)",
  "bwrap     \($m.bwrap*1000|.*100|round/100) ms   \($rw) KiB",
  "",
  "cordon/bwrap wall ratio: \(($m.cordon/$m.bwrap)*100|round/100)",
  "helper share (cordon - forbid): \((($m.cordon-$m.forbid)*1000)*100|round/100) ms"
' "$WORK/h.json"
