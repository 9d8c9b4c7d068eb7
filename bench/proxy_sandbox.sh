#!/usr/bin/env bash
# The managed network as a command sees it (issue 10 §5): a bulk upload of BYTES through a
# CONNECT tunnel to a sink on the host's 127.0.0.2, from inside `cordon run --network
# managed` (the proxy accepts on the port init bound inside the sandbox), vs the same client
# on the host straight to the sink, vs the same client on the host through a standalone
# `cordon proxy`. Loopback only; repeated RUNS times, medians printed.
#
# Usage: bench/proxy_sandbox.sh [BYTES] [RUNS]   (defaults: 256 MiB, 3)
# The machine is shared and has 2 cores: compare the ratios, not the absolute numbers.
set -euo pipefail
cd "$(dirname "$0")/.."
SIZE="${1:-268435456}"; RUNS="${2:-3}"
if [ -z "${CORDON:-}" ]; then   # CORDON=/path/to/cordon skips the build
  cargo build --release -q -p cordon
  CORDON="$PWD/target/release/cordon"
fi
TMP="$(mktemp -d /var/tmp/cordon-proxy-sandbox.XXXXXX)"
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$TMP"; }
trap cleanup EXIT

cat > "$TMP/sink.py" <<'PY'
import socket, sys, threading
l = socket.socket(); l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
l.bind(("127.0.0.2", 0)); l.listen(16); print(l.getsockname()[1], flush=True)
def serve(c):
    n, buf = 0, bytearray(1 << 20)
    while True:
        k = c.recv_into(buf)
        if not k: break
        n += k
    c.sendall(str(n).encode()); c.close()
while True:
    c, _ = l.accept(); threading.Thread(target=serve, args=(c,), daemon=True).start()
PY
cat > "$TMP/client.py" <<'PY'
import socket, sys, time
size, port, via = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
if via == "direct":
    s = socket.create_connection(("127.0.0.2", port))
else:
    h, p = via.rsplit(":", 1)
    s = socket.create_connection((h, int(p)))
    s.sendall(f"CONNECT 127.0.0.2:{port} HTTP/1.1\r\nHost: 127.0.0.2\r\n\r\n".encode())
    head = b""
    while b"\r\n\r\n" not in head:
        head += s.recv(1024)
    assert head.startswith(b"HTTP/1.1 200"), head
data = memoryview(bytearray(1 << 20)); left = size
t = time.perf_counter()
while left:
    k = min(left, 1 << 20); s.sendall(data[:k]); left -= k
s.shutdown(socket.SHUT_WR)
got = int(s.recv(64)); dt = time.perf_counter() - t
assert got == size, (got, size)
print(round(size / dt / 1e6, 1))
PY
python3 "$TMP/sink.py" > "$TMP/port" &
PIDS+=($!)
for _ in $(seq 50); do [ -s "$TMP/port" ] && break; sleep 0.1; done
PORT="$(cat "$TMP/port")"

mkdir -p "$TMP/cfg" "$TMP/work"
cat > "$TMP/cfg/config.toml" <<'TOML'
default_profile = "bench"
[profiles.bench]
extends = "workspace-write"
[profiles.bench.network]
mode = "managed"
allow = ["127.0.0.2"]
TOML
"$CORDON" proxy --json --allow 127.0.0.2 > "$TMP/proxy.addr" &
PIDS+=($!)
for _ in $(seq 50); do [ -s "$TMP/proxy.addr" ] && break; sleep 0.1; done
PROXY="$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["listen"])' "$TMP/proxy.addr")"

: > "$TMP/direct"; : > "$TMP/proxy"; : > "$TMP/sandbox"
for _ in $(seq "$RUNS"); do
  python3 "$TMP/client.py" "$SIZE" "$PORT" direct >> "$TMP/direct"
  python3 "$TMP/client.py" "$SIZE" "$PORT" "$PROXY" >> "$TMP/proxy"
  (cd "$TMP/work" && "$CORDON" run --no-server --config "$TMP/cfg/config.toml" -- \
     python3 "$TMP/client.py" "$SIZE" "$PORT" 127.0.0.1:3128) >> "$TMP/sandbox"
done
python3 - "$TMP" "$SIZE" <<'PY'
import statistics, sys, os
d, size = sys.argv[1], int(sys.argv[2])
med = {n: statistics.median(float(x) for x in open(os.path.join(d, n)) if x.strip())
       for n in ("direct", "proxy", "sandbox")}
print(f"{size / 2**20:.0f} MiB upload, median MB/s:")
print(f"| direct | cordon proxy (host) | vs direct | cordon run --network managed | vs direct |")
print(f"|-------:|--------------------:|----------:|-----------------------------:|----------:|")
print(f"| {med['direct']} | {med['proxy']} | {med['proxy'] / med['direct']:.2f} | "
      f"{med['sandbox']} | {med['sandbox'] / med['direct']:.2f} |")
PY
