#!/usr/bin/env bash
# Throughput, small-response rps and 1,000 concurrent connections through `cordon proxy`,
# vs direct loopback, vs srt's proxy (@anthropic-ai/sandbox-runtime, installed from npm
# into a temp prefix here) — issue 10. Loopback only: upstream test servers on
# 127.0.0.2/.3, names mapped by each proxy's resolver hook (`cordon proxy --map`, srt's
# lookupFor), so no DNS and no other host.
#
# Usage: bench/proxy.sh [BYTES] [RPS_REQUESTS] [CONCURRENT]
#        (defaults: 1 GiB, 5000 requests, 1000 connections). Needs python3 >= 3.11;
#        node >= 22 and npm for the srt column (SKIP_SRT=1 leaves it out).
# The machine is shared and has 2 cores: the client, the upstream servers (Python) and the
# proxy compete for them, so compare the ratios, not the absolute numbers.
set -euo pipefail
cd "$(dirname "$0")/.."
SIZE="${1:-1073741824}"; RPS_N="${2:-5000}"; CONC="${3:-1000}"
ulimit -n 16384 2>/dev/null || ulimit -n "$(ulimit -Hn)"
if [ -z "${CORDON:-}" ]; then   # CORDON=/path/to/cordon skips the build
  cargo build --release -q -p cordon
  CORDON="$PWD/target/release/cordon"
fi
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
TMP="$(mktemp -d /var/tmp/cordon-proxy-bench.XXXXXX)"
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$TMP"; }
trap cleanup EXIT
wait_addr() {
  for _ in $(seq 100); do [ -s "$1" ] && break; sleep 0.1; done
  python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["listen"])' "$1"
}
run_client() {   # LABEL ADDR [SOCKS=0|1]
  SINK_PORT="$(free_port)" HTTP_PORT="$(free_port)" DENIED_PORT="$(free_port)" SOCKS="${3:-1}" \
    python3 bench/proxy_bench.py "$2" "$SIZE" "$RPS_N" "$CONC" > "$TMP/$1.json"
}

LOG="$TMP/cordon.jsonl"
"$CORDON" proxy --json --threads "${THREADS:-2}" --log "$LOG" \
  --allow sink.bench --allow web.bench --allow 127.0.0.2 \
  --allow denied.bench --deny denied.bench \
  --map sink.bench=127.0.0.2 --map web.bench=127.0.0.2 --map denied.bench=127.0.0.3 \
  > "$TMP/cordon.addr" &
PIDS+=($!)
run_client cordon "$(wait_addr "$TMP/cordon.addr")" 1
kill "${PIDS[0]}" 2>/dev/null || true
echo "cordon decision log lines: $(wc -l < "$LOG") (allow: $(grep -c '"allow"' "$LOG" || true), deny: $(grep -c '"deny"' "$LOG" || true))"

if [ -z "${SKIP_SRT:-}" ]; then
  SRT_PREFIX="$TMP/srt"
  npm install --silent --no-audit --no-fund --prefix "$SRT_PREFIX" @anthropic-ai/sandbox-runtime >/dev/null
  echo "srt: $(node -p "require('$SRT_PREFIX/node_modules/@anthropic-ai/sandbox-runtime/package.json').version")"
  node bench/srt_proxy.mjs "$SRT_PREFIX" > "$TMP/srt.addr" &
  PIDS+=($!)
  run_client srt "$(wait_addr "$TMP/srt.addr")" 0
fi

python3 - "$TMP" <<'PY'
import json, os, sys
d = sys.argv[1]
rows = [(n, json.load(open(os.path.join(d, n + ".json")))) for n in ("cordon", "srt")
        if os.path.exists(os.path.join(d, n + ".json"))]
print(f"| {'':<8} | {'1 GiB MB/s':>10} | {'vs direct':>9} | {'small req/s':>11} | {'vs direct':>9} | {'concurrent (errors)':>19} | {'denied leaks':>12} |")
print("|" + "|".join("-" * w for w in (10, 12, 11, 13, 11, 21, 14)) + "|")
for n, r in rows:
    c = r["concurrency"]
    print(f"| {'direct':<8} | {r['direct_MBps']:>10} | {'1.0':>9} | {r['direct_rps']:>11} | {'1.0':>9} | {'':>19} | {'':>12} |")
    print(f"| {n:<8} | {r['proxy_MBps']:>10} | {r['throughput_ratio']:>9} | {r['proxy_rps']:>11} | {r['rps_ratio']:>9} | "
          f"{str(c['connections']) + ' (' + str(c['errors']) + ')':>19} | {r['denied_host_leaks']:>12} |")
if len(rows) == 2:
    (_, a), (_, b) = rows
    print(f"cordon / srt: throughput {a['proxy_MBps'] / b['proxy_MBps']:.1f}x, req/s {a['proxy_rps'] / b['proxy_rps']:.1f}x")
PY
