#!/usr/bin/env bash
# Toolchains under cordon vs bare (issue 11 benchmark): cold and warm second runs of
# `cargo build --offline` (one registry dependency, itoa, copied from your cargo home into
# a scratch HOME) and `npm ci` (one package from a local registry served on 127.0.0.1 by
# `python3 -m http.server`), measured with hyperfine.
#
#   cold: empty caches (bare: the scratch ~/.cargo/registry/src and ~/.npm emptied; cordon:
#         also its per-workspace copy-on-write layers cleared), target/ or node_modules/ gone
#   warm: caches as the previous run left them (cordon: in the private layer), only
#         target/ or node_modules/ removed before each run
#
# cordon runs the default profile with `caches = "overlay"`: cargo with --network off, npm
# with --allow-network (its registry is on 127.0.0.1). Target: warm within 10% of bare.
#
# Usage: bench/toolchains.sh [RUNS]   (default 10). CORDON=path uses that binary instead of
# building target/release/cordon. Needs hyperfine, npm, python3, jq. Machines here are
# shared and noisy: compare ratios.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS="${1:-10}"
if [ -z "${CORDON:-}" ]; then
  cargo build --release -q -p cordon
  CORDON="$PWD/target/release/cordon"
fi
for t in hyperfine npm python3 jq; do
  command -v "$t" >/dev/null || { echo "bench/toolchains.sh: $t is required" >&2; exit 1; }
done
REAL_CARGO_HOME="${CARGO_HOME:-$HOME/.cargo}"
CARGO_BIN="$(dirname "$(command -v cargo)")"
if command -v rustup >/dev/null; then CARGO_BIN="$(dirname "$(rustup which cargo)")"; fi
PY="$(python3 -c 'import sys; print(sys.executable)')"
idx=$(ls -d "$REAL_CARGO_HOME"/registry/index/index.crates.io-* | head -1)
crate=$(ls "$REAL_CARGO_HOME"/registry/cache/"$(basename "$idx")"/itoa-*.crate | head -1)
ver=$(basename "$crate" .crate); ver=${ver#itoa-}

WORK="$(mktemp -d /var/tmp/cordon-bench-toolchains.XXXXXX)"
SERVER=""
cleanup() { [ -n "$SERVER" ] && kill "$SERVER" 2>/dev/null; rm -rf "$WORK"; }
trap cleanup EXIT
export HOME="$WORK/home" CARGO_HOME="$WORK/home/.cargo" PATH="$CARGO_BIN:$PATH"
unset CARGO_TARGET_DIR RUSTC_WRAPPER npm_config_registry
mkdir -p "$HOME/.npm"

# cargo: the registry holds the index entry and the .crate (no unpacked sources).
i="$CARGO_HOME/registry/index/$(basename "$idx")"
c="$CARGO_HOME/registry/cache/$(basename "$idx")"
mkdir -p "$i/.cache/it/oa" "$c"
cp "$idx/config.json" "$i/" 2>/dev/null || true
cp "$idx/.cache/it/oa/itoa" "$i/.cache/it/oa/"
cp "$crate" "$c/"
mkdir -p "$WORK/cargo-proj/src"
( cd "$WORK/cargo-proj" && git init -q . )
printf '[package]\nname = "t"\nversion = "0.1.0"\nedition = "2021"\n[dependencies]\nitoa = "=%s"\n' \
  "$ver" > "$WORK/cargo-proj/Cargo.toml"
echo 'fn main() { println!("{}", itoa::Buffer::new().format(1)); }' > "$WORK/cargo-proj/src/main.rs"

# npm: a local registry with one package (packument + tarball), served on a free port.
mkdir -p "$WORK/registry"
"$PY" -u -m http.server --bind 127.0.0.1 0 --directory "$WORK/registry" > "$WORK/server.log" 2>/dev/null &
SERVER=$!
for _ in $(seq 50); do grep -q port "$WORK/server.log" 2>/dev/null && break; sleep 0.1; done
PORT=$(sed -n 's/.* port \([0-9]*\) .*/\1/p' "$WORK/server.log" | head -1)
"$PY" - "$WORK/registry" "$PORT" <<'EOF'
import base64, hashlib, io, json, os, sys, tarfile
root, port = sys.argv[1], sys.argv[2]
os.makedirs(f"{root}/tinylib/-", exist_ok=True)
pkg = {"name": "tinylib", "version": "1.0.0", "main": "index.js"}
buf = io.BytesIO()
with tarfile.open(fileobj=buf, mode="w:gz") as t:
    for name, data in [("package/package.json", json.dumps(pkg).encode()),
                       ("package/index.js", b"module.exports = () => 'tiny ok';\n")]:
        info = tarfile.TarInfo(name); info.size = len(data); info.mode = 0o644
        t.addfile(info, io.BytesIO(data))
tgz = buf.getvalue()
open(f"{root}/tinylib/-/tinylib-1.0.0.tgz", "wb").write(tgz)
dist = {"tarball": f"http://127.0.0.1:{port}/tinylib/-/tinylib-1.0.0.tgz",
        "shasum": hashlib.sha1(tgz).hexdigest(),
        "integrity": "sha512-" + base64.b64encode(hashlib.sha512(tgz).digest()).decode()}
doc = {"name": "tinylib", "dist-tags": {"latest": "1.0.0"},
       "versions": {"1.0.0": dict(pkg, dist=dist)}}
open(f"{root}/tinylib/index.html", "w").write(json.dumps(doc))
EOF
mkdir -p "$WORK/npm-proj"
( cd "$WORK/npm-proj" && git init -q . \
  && echo '{"name":"p","version":"1.0.0","dependencies":{"tinylib":"1.0.0"}}' > package.json \
  && npm install -q --registry "http://127.0.0.1:$PORT/" --no-audit --no-fund >/dev/null \
  && rm -rf node_modules )
export NPM_ARGS="--registry http://127.0.0.1:$PORT/ --no-audit --no-fund --no-update-notifier -q"
export CORDON WORK

clear_caches="rm -rf $CARGO_HOME/registry/src $HOME/.npm && mkdir -p $HOME/.npm && rm -rf $HOME/.cache/cordon/overlays"
results="$WORK/results"
mkdir -p "$results"
bench() { # name dir prepare bare-cmd cordon-cmd
  local name=$1 dir=$2 prep=$3 bare=$4 conf=$5
  ( cd "$dir" && hyperfine -N --runs "$RUNS" --style basic --prepare "bash -c '$prep'" \
      --export-json "$results/$name.json" -n "$name bare" "$bare" -n "$name cordon" "$conf" )
}
cargo_cmd="cargo build --offline -q"
npm_cmd="npm ci $NPM_ARGS"
bench cargo-cold "$WORK/cargo-proj" "$clear_caches && rm -rf target" \
  "$cargo_cmd" "$CORDON run --network off -- $cargo_cmd"
# Warm: one run of each to fill the caches (host and private layer), then measured.
( cd "$WORK/cargo-proj" && $cargo_cmd && $CORDON run --network off -- $cargo_cmd )
bench cargo-warm "$WORK/cargo-proj" "rm -rf target" \
  "$cargo_cmd" "$CORDON run --network off -- $cargo_cmd"
bench npm-cold "$WORK/npm-proj" "$clear_caches && rm -rf node_modules" \
  "$npm_cmd" "$CORDON run --allow-network -- $npm_cmd"
( cd "$WORK/npm-proj" && $npm_cmd && $CORDON run --allow-network -- $npm_cmd )
bench npm-warm "$WORK/npm-proj" "rm -rf node_modules" \
  "$npm_cmd" "$CORDON run --allow-network -- $npm_cmd"

echo
printf '%-11s %10s %10s %8s\n' case "bare ms" "cordon ms" ratio
for n in cargo-cold cargo-warm npm-cold npm-warm; do
  jq -r --arg n "$n" '[.results[].median] | "\($n) \(.[0]*1000) \(.[1]*1000) \(.[1]/.[0])"' \
    "$results/$n.json" | awk '{printf "%-11s %10.0f %10.0f %8.2f\n", $1, $2, $3, $4}'
done

# hyperfine runs all of one command's runs, then the other's: on a shared, loaded machine the
# load drifts between the blocks (warm cargo read 0.98, 1.56 and 1.13 in three runs). The
# warm cases again, interleaved (bare, cordon, `cordon run -- true` in turn), medians of
# wall time and of CPU time (user + sys of the whole tree):
med() { sort -n | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}'; }
interleave() { # name dir clean bare-cmd cordon-flags
  local name=$1 dir=$2 clean=$3 bare=$4 flags=$5 ilog="$WORK/interleaved-$1.txt"
  for _ in $(seq "$RUNS"); do
    ( cd "$dir" && rm -rf "$clean" \
      && /usr/bin/time -f "bare %e %U %S" -a -o "$ilog" $bare >/dev/null \
      && rm -rf "$clean" \
      && /usr/bin/time -f "cordon %e %U %S" -a -o "$ilog" $CORDON run $flags -- $bare >/dev/null \
      && /usr/bin/time -f "startup %e %U %S" -a -o "$ilog" $CORDON run $flags -- true )
  done
  echo "$name interleaved ($RUNS rounds):"
  for k in bare cordon startup; do
    printf '  %-8s wall %6.0f ms  cpu %6.0f ms\n' "$k" \
      "$(grep "^$k " "$ilog" | awk '{print $2*1000}' | med)" \
      "$(grep "^$k " "$ilog" | awk '{print ($3+$4)*1000}' | med)"
  done
}
echo
interleave cargo-warm "$WORK/cargo-proj" target "$cargo_cmd" "--network off"
interleave npm-warm "$WORK/npm-proj" node_modules "$npm_cmd" "--allow-network"
