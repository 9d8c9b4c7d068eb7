#!/usr/bin/env bash
# Overhead of kernel-side denial records (issue 9 §5): a real build — `cargo build` of a
# small crate with a few dependencies from ~/.cargo/registry, offline, from a clean target
# dir each run — bare, under cordon without the supervisor
# (CORDON_DISABLE_LAYERS=denial-records) and under cordon with it. Goal: < 5% over
# cordon-without.
#
# Usage: bench/denials.sh [RUNS]   (default 5). Needs hyperfine and jq (installed via apt if
# missing) and the crates below already in ~/.cargo/registry. Machines here are shared and
# noisy: compare the ratios, not the absolute numbers.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS="${1:-5}"

missing=()
command -v hyperfine >/dev/null || missing+=(hyperfine)
command -v jq >/dev/null || missing+=(jq)
if [ ${#missing[@]} -gt 0 ]; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi

cargo build -q -p cordon
CORDON="$PWD/target/debug/cordon"
CARGO="$(rustup which cargo 2>/dev/null || command -v cargo)"
WORK="$(mktemp -d /var/tmp/cordon-bench-denials.XXXXXX)"
trap 'rm -rf "$WORK"' EXIT
cd "$WORK" && git init -q .
mkdir src
cat > Cargo.toml <<'TOML'
[package]
name = "bench-denials"
version = "0.1.0"
edition = "2021"

[dependencies]
serde_json = "1"
memchr = "2"
itoa = "1"
libc = "0.2"
TOML
echo 'fn main() { println!("{}", serde_json::json!({"n": itoa::Buffer::new().format(1)})); }' > src/main.rs
# Resolve once (offline, from the local registry) so every run compiles the same lock.
"$CARGO" generate-lockfile --offline -q
BUILD="$CARGO build --offline -q -j2"
# The sandbox writes only the workspace; CARGO_HOME stays readable (the registry).
export RUSTUP_HOME="${RUSTUP_HOME:-$HOME/.rustup}" CARGO_HOME="${CARGO_HOME:-$HOME/.cargo}"

hyperfine --warmup 1 --runs "$RUNS" --prepare 'rm -rf target' --export-json "$WORK/h.json" \
  -n bare "$BUILD" \
  -n cordon-without "CORDON_DISABLE_LAYERS=denial-records $CORDON run --yes -- $BUILD" \
  -n cordon-with "$CORDON run --yes -- $BUILD" >/dev/null

jq -r '.results[] | "\(.command)\t\(.median)"' "$WORK/h.json" | {
  declare -A m
  while IFS=$'\t' read -r name med; do m[$name]=$med; done
  printf '%-16s %8.2f s\n' bare "${m[bare]}" cordon-without "${m[cordon-without]}" cordon-with "${m[cordon-with]}"
  awk -v w="${m[cordon-with]}" -v wo="${m[cordon-without]}" -v b="${m[bare]}" 'BEGIN {
    printf "supervisor overhead over cordon-without: %+.1f%% (goal < 5%%)\n", (w / wo - 1) * 100
    printf "cordon-without over bare: %+.1f%%\n", (wo / b - 1) * 100 }'
}
# Count of notifications the build sends (trapped writing path calls), for context.
rm -rf target
echo "writing path calls in one build (strace -f -c, if available):"
if command -v strace >/dev/null; then
  strace -f -c -e trace=openat,open,creat,mkdir,mkdirat,unlink,unlinkat,rename,renameat,renameat2,link,linkat,symlink,symlinkat,truncate -o "$WORK/st" $BUILD || true
  tail -n 20 "$WORK/st"
fi
