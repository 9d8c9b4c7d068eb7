#!/usr/bin/env bash
# Throughput, small-response rps and 1,000 concurrent connections through `cordon proxy`
# vs direct loopback (issue 10 §6). Loopback only: upstream test servers on 127.0.0.2/.3,
# names mapped by the proxy's resolver hook (--map), so no DNS and no other host.
#
# Usage: bench/proxy.sh [BYTES] [RPS_REQUESTS] [CONCURRENT]
#        (defaults: 1 GiB, 5000 requests, 1000 connections). Needs python3 >= 3.11.
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
export SINK_PORT="$(free_port)" HTTP_PORT="$(free_port)" DENIED_PORT="$(free_port)"
LOG="$(mktemp /var/tmp/cordon-proxy-bench.XXXXXX.jsonl)"
"$CORDON" proxy --json --threads 2 --log "$LOG" \
  --allow sink.bench --allow web.bench --allow 127.0.0.2 \
  --allow denied.bench --deny denied.bench \
  --map sink.bench=127.0.0.2 --map web.bench=127.0.0.2 --map denied.bench=127.0.0.3 \
  > "$LOG.addr" &
PROXY_PID=$!
trap 'kill "$PROXY_PID" 2>/dev/null; rm -f "$LOG" "$LOG.addr"' EXIT
for _ in $(seq 50); do [ -s "$LOG.addr" ] && break; sleep 0.1; done
ADDR="$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["listen"])' "$LOG.addr")"
python3 bench/proxy_bench.py "$ADDR" "$SIZE" "$RPS_N" "$CONC"
echo "decision log lines: $(wc -l < "$LOG") (allow: $(grep -c '"allow"' "$LOG"), deny: $(grep -c '"deny"' "$LOG"))"
