#!/usr/bin/env bash
# The ceiling of a CONNECT relay's throughput on this machine (issue 10): the throughput
# part of bench/proxy.sh (same Python client and sink, 1 MiB chunks, the sink a thread of
# the client's process) through ideal relays — a minimal blocking C relay (bench/relay.c,
# one thread per direction, read/write or splice), socat, haproxy and nginx in tcp mode
# when installed — and through `cordon proxy`, each paired with a direct transfer run just
# before it. Relays without CONNECT (socat, haproxy, nginx) forward every connection to
# the sink; the timed part (the bytes after the handshake) is the same.
#
# Usage: bench/proxy_ceiling.sh [BYTES] [ROUNDS]   (defaults: 1 GiB, 5)
#   RELAYS="c-rw c-splice ..." picks relays (default: all found); CORDON=path skips the
#   build; THREADS="1 2" the `cordon proxy --threads` values to run; SRT=1 adds srt's
#   proxy (installed from npm into a temp prefix; SRT_PREFIX=dir reuses an install).
# Needs gcc; socat, haproxy, nginx (with libnginx-mod-stream) are used when present.
#
# On the 2-core dev machine (shared, so pairs range ~0.4-1.0; medians of 10-24 pairs)
# every relay lands at 0.5-0.7x direct: C read/write 0.64, C splice 0.54, socat 0.62,
# haproxy 0.62, nginx 0.70, cordon 0.58-0.66, srt 0.26. Both cases keep ~1.3-1.4 cores
# busy, so the ratio follows CPU per GiB: direct ~0.42 s (client and sink), a relay adds
# its own ~0.3-0.4 s (splice: ~0.29, but the client's cost rises ~0.05), and
# ratio ~ 0.42 / (0.42 + relay). 0.9x would need a relay at <0.05 s/GiB.
set -euo pipefail
cd "$(dirname "$0")/.."
SIZE="${1:-1073741824}"; ROUNDS="${2:-5}"
if [ -z "${CORDON:-}" ]; then
  cargo build --release -q -p cordon
  CORDON="$PWD/target/release/cordon"
fi
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
TMP="$(mktemp -d /var/tmp/cordon-proxy-ceiling.XXXXXX)"
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$TMP"; }
trap cleanup EXIT
gcc -O2 -pthread -o "$TMP/relay" bench/relay.c
SINK_PORT="$(free_port)"; SINK="127.0.0.2:$SINK_PORT"
ALL="c-rw c-rw-64k c-splice c-splice-64k socat haproxy haproxy-splice nginx cordon srt"
want() { [[ " ${RELAYS:-$ALL} " == *" $1 "* ]]; }
ARGS=()
add() { ARGS+=("$1=127.0.0.1:$2$3@$4"); }   # LABEL PORT SUFFIX PID

c_relay() {   # LABEL MODE SIZE
  local p; p="$(free_port)"
  RELAY_TARGET="$SINK" "$TMP/relay" "$p" "$2" "$3" & PIDS+=($!); add "$1" "$p" "" $!
}
want c-rw && c_relay c-rw rw 1048576
want c-rw-64k && c_relay c-rw-64k rw 65536
want c-splice && c_relay c-splice splice 1048576
want c-splice-64k && c_relay c-splice-64k splice 65536
if want socat && command -v socat >/dev/null; then
  p="$(free_port)"
  socat -b 1048576 "TCP-LISTEN:$p,bind=127.0.0.1,reuseaddr,fork" "TCP:$SINK" & PIDS+=($!)
  add socat "$p" /raw $!   # forks per connection: its CPU is not counted (the child's)
fi
haproxy_cfg() {   # PORT SPLICE(0|1)
  cat <<CFG
global
  nbthread 2
  maxconn 1000
  tune.bufsize 1048576
  $( [ "$2" = 1 ] || echo "nosplice" )
defaults
  mode tcp
  timeout connect 5s
  timeout client 60s
  timeout server 60s
  $( [ "$2" = 1 ] && echo "option splice-request" ; [ "$2" = 1 ] && echo "  option splice-response" )
listen r
  bind 127.0.0.1:$1
  server s $SINK
CFG
}
for v in haproxy haproxy-splice; do
  if want "$v" && command -v haproxy >/dev/null; then
    p="$(free_port)"; haproxy_cfg "$p" "$([ "$v" = haproxy ] && echo 0 || echo 1)" > "$TMP/$v.cfg"
    haproxy -db -f "$TMP/$v.cfg" & PIDS+=($!); add "$v" "$p" /raw $!
  fi
done
NGX_MOD=/usr/lib/nginx/modules/ngx_stream_module.so
if want nginx && command -v nginx >/dev/null && [ -e "$NGX_MOD" ]; then
  p="$(free_port)"; mkdir -p "$TMP/nginx"
  cat > "$TMP/nginx.conf" <<CFG
load_module $NGX_MOD;
daemon off; master_process off; worker_processes 1; pid $TMP/nginx/pid; error_log stderr error;
events { worker_connections 1024; }
stream { server { listen 127.0.0.1:$p; proxy_pass $SINK; proxy_buffer_size 1m; proxy_half_close on; tcp_nodelay on; } }
CFG
  nginx -p "$TMP/nginx" -c "$TMP/nginx.conf" -e stderr & PIDS+=($!); add nginx "$p" /raw $!
fi
if want cordon; then
  for t in ${THREADS:-1 2}; do
    "$CORDON" proxy --json --threads "$t" --allow sink.bench --allow 127.0.0.2 --map sink.bench=127.0.0.2 \
      > "$TMP/cordon$t.addr" & PIDS+=($!)
    for _ in $(seq 100); do [ -s "$TMP/cordon$t.addr" ] && break; sleep 0.1; done
    a="$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["listen"])' "$TMP/cordon$t.addr")"
    ARGS+=("cordon-t$t=$a@$!")
  done
fi
if want srt && [ -n "${SRT_PREFIX:-}${SRT:-}" ]; then   # srt's proxy, as bench/proxy.sh runs it
  if [ -z "${SRT_PREFIX:-}" ]; then
    SRT_PREFIX="$TMP/srt"
    npm install --silent --no-audit --no-fund --prefix "$SRT_PREFIX" @anthropic-ai/sandbox-runtime >/dev/null
  fi
  node bench/srt_proxy.mjs "$SRT_PREFIX" > "$TMP/srt.addr" & PIDS+=($!)
  for _ in $(seq 100); do [ -s "$TMP/srt.addr" ] && break; sleep 0.1; done
  ARGS+=("srt=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["listen"])' "$TMP/srt.addr")@$!")
fi
sleep 0.5
SINK_PORT="$SINK_PORT" python3 bench/proxy_ceiling.py "$SIZE" "$ROUNDS" "${ARGS[@]}"
