#!/usr/bin/env bash
# Launch cost of one sandboxed `true` (issue 12), in ONE interleaved hyperfine run:
#   bare         `true`
#   cold         `cordon run --no-server -- true`        (the helper is executed)
#   template     `cordon run -- true` through `cordon serve` (forked from a prepared template)
#   server       the same through `cordon serve --no-templates` (per-command helper forked)
#   git-cold     `cordon run --no-server -- true` in a git repository
#   git-served   `cordon run -- true` there with the server running (sent back to cold)
#   bwrap-net    bubblewrap, user+pid+ipc+net namespaces, ro root, /tmp, workspace bound
#   bwrap        the same without a net namespace
#   nono         `nono run --allow WS -- true`             (cargo install nono-cli)
#   srt          `srt true`                                (npm @anthropic-ai/sandbox-runtime)
#   codex        `codex sandbox -- true`                   (npm @openai/codex, its native binary)
# plus the per-call latency of `cordon mcp`'s exec_command ["true"] (Python MCP client, in
# .ci-venv), peak RSS (GNU time, median of 15: the largest process, the client), the
# helper's own peak RSS (from the run report) and throughput with 8 concurrent client loops.
# Every row runs in the same workspace: a directory outside any git repository (a git
# repository's .git/config copy is per command: a server with templates sends it back to
# the cold path; the "server" row is a `--no-templates` server in the same workspace).
#
# Usage: bench/launch.sh [RUNS] [LOOP_COMMANDS]   (defaults 200, 25 per loop);
# CORDON_STATIC=1 measures a statically linked cordon (see below).
# Peers are installed under $PEERS (default /var/tmp/cordon-bench-peers) when missing;
# NONO_INSTALL=1 also tries `cargo install nono-cli` (bounded to 10 minutes).
# Machines here are shared and noisy: compare the ratios within one run.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"
RUNS="${1:-200}"
PER_LOOP="${2:-25}"
PEERS="${PEERS:-/var/tmp/cordon-bench-peers}"

missing=()
command -v hyperfine >/dev/null || missing+=(hyperfine)
command -v bwrap >/dev/null || missing+=(bubblewrap)
[ -x /usr/bin/time ] || missing+=(time)
command -v jq >/dev/null || missing+=(jq)
command -v rg >/dev/null || missing+=(ripgrep) # srt needs rg and socat
command -v socat >/dev/null || missing+=(socat)
if [ ${#missing[@]} -gt 0 ]; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi
if [ ! -x "$PEERS/node_modules/.bin/srt" ] || [ ! -x "$PEERS/node_modules/.bin/codex" ]; then
  mkdir -p "$PEERS"
  npm install -s --no-audit --no-fund --prefix "$PEERS" @anthropic-ai/sandbox-runtime @openai/codex \
    >/dev/null 2>&1 || true
fi
if ! command -v nono >/dev/null && [ "${NONO_INSTALL:-0}" = 1 ]; then
  timeout 600 cargo install -q --locked nono-cli >/dev/null 2>&1 || true
fi

# CORDON_STATIC=1: cordon linked statically (glibc's libc.a, non-PIE), which saves the
# dynamic loader's work at each of its execs (measured on this machine: `cordon --version`
# 0.92 -> 0.55 ms task-clock). Proc-macro crates cannot be built with crt-static, so it
# needs an explicit --target (the flags then apply to the target's crates only).
if [ "${CORDON_STATIC:-0}" = 1 ]; then
  triple="$(rustc -vV | sed -n 's/^host: //p')"
  RUSTFLAGS="-C target-feature=+crt-static -C relocation-model=static" \
    cargo build --release -q -p cordon --bin cordon --target "$triple"
  CORDON="$ROOT/target/$triple/release/cordon"
  echo "cordon: static build ($CORDON)"
else
  cargo build --release -q -p cordon --bin cordon
  CORDON="$ROOT/target/release/cordon"
fi
WORK="$(mktemp -d /var/tmp/cordon-launch.XXXXXX)"
WS="$WORK/ws"
mkdir -p "$WS" "$WORK/run" "$WORK/run2" "$WORK/home"
# A home of its own: the launch is measured, not this machine's package caches (a
# `~/.cargo` without `git/` is layered whole, and such a workspace takes the per-command
# helper, never a template: see README "cordon serve").
export HOME="$WORK/home"
chmod 700 "$WORK/run" "$WORK/run2"
export CORDON_SERVE_SOCKET="$WORK/run/serve.sock"
PLAIN_SOCKET="$WORK/run2/serve.sock"
"$CORDON" serve --socket "$CORDON_SERVE_SOCKET" 2>/dev/null &
SERVER=$!
"$CORDON" serve --no-templates --socket "$PLAIN_SOCKET" 2>/dev/null &
SERVER2=$!
trap 'kill $SERVER $SERVER2 2>/dev/null; rm -rf "$WORK"' EXIT
cd "$WS"
for _ in $(seq 100); do [ -S "$CORDON_SERVE_SOCKET" ] && [ -S "$PLAIN_SOCKET" ] && break; sleep 0.05; done
launch_of() { "$@" 2>&1 >/dev/null | grep -o '"launch":"[a-z]*"' | tail -1; }
# Twice: the first run creates the cache layers' directories, which changes the plan.
launch_of "$CORDON" run --json -- true >/dev/null
[ "$(launch_of "$CORDON" run --json -- true)" = '"launch":"template"' ] ||
  { echo "template path not taken" >&2; exit 1; }
[ "$(launch_of env CORDON_SERVE_SOCKET="$PLAIN_SOCKET" "$CORDON" run --json -- true)" = '"launch":"server"' ] ||
  { echo "server path not taken" >&2; exit 1; }
# A git repository: its `.git/config` copy is per command, so the server with templates
# sends its commands back to the cold path ("git-served" against "git-cold").
GITWS="$WORK/gitws"
mkdir -p "$GITWS" && git -C "$GITWS" init -q && echo x > "$GITWS/a" && git -C "$GITWS" add a &&
  git -C "$GITWS" -c user.email=b@b -c user.name=b commit -qm b
launch_of env -C "$GITWS" "$CORDON" run --json -- true >/dev/null
[ "$(launch_of env -C "$GITWS" "$CORDON" run --json -- true)" = '"launch":"cold"' ] ||
  { echo "git repository not sent back to the cold path" >&2; exit 1; }

BWRAP=(bwrap --unshare-user --unshare-pid --unshare-ipc --die-with-parent
       --ro-bind / / --dev /dev --proc /proc --tmpfs /tmp --bind "$WS" "$WS" --chdir "$WS")
CODEX_BIN="$(find "$PEERS/node_modules/@openai" -path '*/bin/codex' -type f 2>/dev/null | head -1)"

declare -A CMD=(
  [bare]="true"
  [cold]="$CORDON run --no-server -- true"
  [template]="$CORDON run -- true"
  [server]="env CORDON_SERVE_SOCKET=$PLAIN_SOCKET $CORDON run -- true"
  [git-cold]="env -C $GITWS $CORDON run --no-server -- true"
  [git-served]="env -C $GITWS $CORDON run -- true"
  [bwrap-net]="${BWRAP[*]} --unshare-net true"
  [bwrap]="${BWRAP[*]} true"
)
ORDER=(bare cold template server git-cold git-served bwrap-net bwrap)
OWN=8 # the rows above: RUNS runs each; the peers after them fewer
NOT_INSTALLED=()
peer() { # name, probe command..., then the command string in PEER_CMD
  local name=$1; shift
  if "$@" >/dev/null 2>&1; then CMD[$name]="$PEER_CMD"; ORDER+=("$name"); else NOT_INSTALLED+=("$name"); fi
}
PEER_CMD="nono run --allow $WS -- true"; peer nono nono run --allow "$WS" -- true
PEER_CMD="$PEERS/node_modules/.bin/srt true"; peer srt "$PEERS/node_modules/.bin/srt" true
PEER_CMD="$CODEX_BIN sandbox -- true"; peer codex "${CODEX_BIN:-/nonexistent}" sandbox -- true

# cordon and bwrap rows: RUNS each; the peers (hundreds of ms to seconds per command):
# PEER_RUNS each, in a second run.
args=()
for n in "${ORDER[@]:0:$OWN}"; do args+=(-n "$n" "${CMD[$n]}"); done
hyperfine -N --warmup 10 --runs "$RUNS" --export-json "$WORK/h1.json" "${args[@]}" >/dev/null 2>&1
args=()
for n in "${ORDER[@]:$OWN}"; do args+=(-n "$n" "${CMD[$n]}"); done
if [ ${#args[@]} -gt 0 ]; then
  hyperfine -N --warmup 2 --runs "${PEER_RUNS:-20}" --export-json "$WORK/h2.json" "${args[@]}" >/dev/null 2>&1
else
  echo '{"results": []}' > "$WORK/h2.json"
fi
jq -s '{results: (.[0].results + .[1].results)}' "$WORK/h1.json" "$WORK/h2.json" > "$WORK/h.json"

rss() { /usr/bin/time -f '%M' "$@" 2>&1 >/dev/null | tail -1; }
median_rss() { for _ in $(seq "${REPS:-15}"); do rss "$@"; done | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
# The helper's own peak RSS (issue 12's "peak RSS of the helper"): GNU time's %M above is
# the largest process of the tree, the client; the helper says its own (getrusage) in the
# run report, read here from `--json-fd 3`. "-" for rows that are not `cordon run`.
helper_rss() {
  case "$*" in *"$CORDON run "*) ;; *) echo -; return ;; esac
  local all="$*"
  local cmd=${all/"$CORDON run "/"$CORDON run --json-fd 3 "}
  for _ in $(seq "${REPS:-15}"); do
    # shellcheck disable=SC2086
    $cmd 3>"$WORK/report.json" >/dev/null 2>&1
    jq -r '.helper_peak_rss_kib // empty' "$WORK/report.json"
  done | sort -n | awk '{a[NR]=$1} END {if (NR) print a[int((NR+1)/2)] " KiB"; else print "-"}'
}

# Throughput: 8 concurrent loops of PER_LOOP commands each (2 for the peers); commands
# per second.
throughput() {
  local start end per=$2
  start=$(date +%s.%N)
  for _ in $(seq 8); do
    ( for _ in $(seq "$per"); do $1 >/dev/null 2>&1; done ) &
  done
  wait
  end=$(date +%s.%N)
  echo "$start $end" | awk -v n=$((8 * per)) '{printf "%.0f", n / ($2 - $1)}'
}

printf '%-10s %10s %10s %10s %12s %11s\n' what median p95 'peak RSS' '8-loop cmd/s' 'helper RSS'
i=0
for n in "${ORDER[@]}"; do
  per=$PER_LOOP; reps=15
  if [ $i -ge $OWN ]; then per=2; reps=3; fi
  i=$((i + 1))
  # shellcheck disable=SC2086
  r=$(REPS=$reps median_rss ${CMD[$n]})
  # shellcheck disable=SC2086
  hr=$(REPS=$reps helper_rss ${CMD[$n]})
  # shellcheck disable=SC2086
  t=$(throughput "${CMD[$n]}" "$per")
  jq -r --arg n "$n" --arg r "$r" --arg t "$t" --arg hr "$hr" '
    .results[] | select(.command == $n) |
    (.times | sort) as $s |
    "\($n)\t\(.median*1000*100|round/100) ms\t\($s[(($s|length)*0.95|floor)]*1000*100|round/100) ms\t\($r) KiB\t\($t)\t\($hr)"
  ' "$WORK/h.json" | awk -F'\t' '{printf "%-10s %10s %10s %10s %12s %11s\n", $1, $2, $3, $4, $5, $6}'
done

# `cordon mcp`: per-call latency of exec_command ["true"] from the Python MCP client.
PY="$ROOT/.ci-venv/bin/python"
if [ -x "$PY" ] && "$PY" -c 'import mcp' 2>/dev/null; then
  "$PY" "$ROOT/bench/mcp_latency.py" "$CORDON" "$RUNS" | awk '{printf "%-10s %10s %10s %10s %12s\n", $1, $2" ms", $3" ms", "-", "-"}'
else
  echo "mcp        not measured (no .ci-venv with the mcp package; .ci/run creates it)"
fi
for n in "${NOT_INSTALLED[@]}"; do printf '%-10s not installed\n' "$n"; done

jq -r '
  (.results | map({(.command): .median}) | add) as $m |
  "",
  "cold/bwrap-net median ratio:     \(($m.cold/$m["bwrap-net"])*100|round/100)",
  "template/bwrap-net median ratio: \(($m.template/$m["bwrap-net"])*100|round/100)",
  "server/bwrap-net median ratio:   \(($m.server/$m["bwrap-net"])*100|round/100)",
  "git-served/git-cold median ratio: \(($m["git-served"]/$m["git-cold"])*100|round/100)"
' "$WORK/h.json"
