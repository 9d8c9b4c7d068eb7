#!/usr/bin/env bash
# Copy-on-write package caches (issue 11): cold vs warm `cargo build --offline` of a tiny
# project with one registry dependency (itoa, copied from your cargo home into a scratch
# HOME), bare vs under `cordon run` (default profile, network off, caches = "overlay").
#
#   cold: the registry holds only the .crate (cargo unpacks it: under cordon into the
#         project's private layer), target/ empty
#   warm: the second build after `rm -rf target` (sources already unpacked)
#
# Prints the median wall time of RUNS rounds for each case and the cordon/bare ratios.
# Usage: bench/cargo_cache.sh [RUNS]   (default 5). CORDON=path uses that binary instead of
# building target/release/cordon. Machines here are shared and noisy: compare ratios.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS="${1:-5}"
if [ -z "${CORDON:-}" ]; then
  cargo build --release -q -p cordon
  CORDON="$PWD/target/release/cordon"
fi
REAL_CARGO_HOME="${CARGO_HOME:-$HOME/.cargo}"
CARGO_BIN="$(dirname "$(command -v rustc)")"
if [ -x "$(command -v rustup)" ]; then
  CARGO_BIN="$(dirname "$(rustup which cargo)")"
fi
idx=$(ls -d "$REAL_CARGO_HOME"/registry/index/index.crates.io-* | head -1)
crate=$(ls "$REAL_CARGO_HOME"/registry/cache/"$(basename "$idx")"/itoa-*.crate | head -1)
ver=$(basename "$crate" .crate); ver=${ver#itoa-}

WORK="$(mktemp -d /var/tmp/cordon-bench-cargo.XXXXXX)"
trap 'rm -rf "$WORK"' EXIT
fresh_home() {
  rm -rf "$WORK/home"
  local i="$WORK/home/.cargo/registry/index/$(basename "$idx")"
  local c="$WORK/home/.cargo/registry/cache/$(basename "$idx")"
  mkdir -p "$i/.cache/it/oa" "$c"
  cp "$idx/config.json" "$i/" 2>/dev/null || true
  cp "$idx/.cache/it/oa/itoa" "$i/.cache/it/oa/"
  cp "$crate" "$c/"
}
mkdir -p "$WORK/proj/src"
cd "$WORK/proj"
git init -q .
printf '[package]\nname = "t"\nversion = "0.1.0"\nedition = "2021"\n[dependencies]\nitoa = "=%s"\n' "$ver" > Cargo.toml
echo 'fn main() { println!("{}", itoa::Buffer::new().format(1)); }' > src/main.rs

export HOME="$WORK/home" CARGO_HOME="$WORK/home/.cargo" PATH="$CARGO_BIN:$PATH"
unset CARGO_TARGET_DIR RUSTC_WRAPPER
build() { "$@" "$CARGO_BIN/cargo" build --offline -q; }
now() { date +%s.%N; }
declare -A T
for r in $(seq "$RUNS"); do
  for mode in bare cordon; do
    fresh_home; rm -rf target
    if [ $mode = bare ]; then pre=(); else pre=("$CORDON" run --network off --); fi
    a=$(now); build "${pre[@]}"; b=$(now)
    rm -rf target
    c=$(now); build "${pre[@]}"; d=$(now)
    T[$mode-cold]+="$(echo "$b - $a" | bc) "
    T[$mode-warm]+="$(echo "$d - $c" | bc) "
  done
done
median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
printf '%-12s %8s\n' case "median s"
for k in bare-cold cordon-cold bare-warm cordon-warm; do
  printf '%-12s %8.3f\n' "$k" "$(echo "${T[$k]}" | median)"
done
for k in cold warm; do
  b=$(echo "${T[bare-$k]}" | median); c=$(echo "${T[cordon-$k]}" | median)
  printf 'cordon/bare %s: %.2f\n' "$k" "$(echo "$c / $b" | bc -l)"
done
