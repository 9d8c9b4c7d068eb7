#!/usr/bin/env python3
"""Throughput part of bench/proxy_bench.py only (same sink, same client, same 1 MiB
chunks, same process layout: the sink is a thread of the client's process), run against
several relays in turn, each paired with a direct transfer just before it.

Usage: SINK_PORT=P proxy_ceiling.py BYTES ROUNDS LABEL=HOST:PORT[/raw][@PID] ...
  /raw: the relay forwards every connection to the sink, no CONNECT (socat, haproxy).
  @PID: the relay's process, whose CPU time (all threads) per transfer is reported; the
  client's own (client and sink threads) is reported for every transfer.
Before each pair it waits (up to QUIET_WAIT s, default 120) for a quiet second; a pair is "quiet" when other
processes used < QUIET (default 0.1) of the machine during both transfers (from
/proc/stat less this process's and the relay's CPU). Prints one JSON line per pair, then
a table of medians over all pairs and over the quiet ones (* marks the others)."""
import json, os, socket, statistics, sys, threading, time

SIZE, ROUNDS = int(sys.argv[1]), int(sys.argv[2])
TARGETS = [a.split("=", 1) for a in sys.argv[3:]]
TARGETS = [(l, *(a.split("@") + [None])[:2]) for l, a in TARGETS]
TICK = os.sysconf("SC_CLK_TCK")

def cpu(pid):
    """CPU seconds of process pid (None: this one), all threads."""
    if pid is None:
        t = os.times(); return t.user + t.system
    try:
        f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    except FileNotFoundError:
        return 0
    kids = set()
    for t in os.listdir(f"/proc/{pid}/task"):
        try:
            kids.update(open(f"/proc/{pid}/task/{t}/children").read().split())
        except FileNotFoundError:
            pass
    # its own, its reaped children's and its live descendants' (socat forks per connection)
    return sum(int(x) for x in f[11:15]) / TICK + sum(cpu(int(k)) for k in kids)

def busy():
    """CPU seconds the whole machine has been busy (all cores)."""
    f = [int(x) for x in open("/proc/stat").readline().split()[1:]]
    return (sum(f[:8]) - f[3] - f[4]) / TICK

def wait_quiet(limit=float(os.environ.get("QUIET_WAIT", "120"))):
    """Waits (up to limit s) for a second in which the machine is < 10% busy: other work
    on the shared machine moves the numbers more than anything measured here."""
    end = time.time() + limit
    while time.time() < end:
        b = busy(); time.sleep(1)
        if busy() - b < 0.1 * os.cpu_count():
            return True
    return False
QUIET = float(os.environ.get("QUIET", "0.1"))
UP_IP, SINK_PORT, CHUNK = "127.0.0.2", int(os.environ["SINK_PORT"]), 1 << 20

def sink_server():
    l = socket.socket(); l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    l.bind((UP_IP, SINK_PORT)); l.listen(64)
    def serve(c):
        n, buf = 0, bytearray(CHUNK)
        while True:
            k = c.recv_into(buf)
            if not k: break
            n += k
        c.sendall(str(n).encode()); c.close()
    while True:
        c, _ = l.accept(); threading.Thread(target=serve, args=(c,), daemon=True).start()

def tunnel(addr):
    raw = addr.endswith("/raw"); addr = addr.removesuffix("/raw")
    h, p = addr.rsplit(":", 1)
    s = socket.create_connection((h, int(p)))
    if not raw:
        s.sendall(f"CONNECT sink.bench:{SINK_PORT} HTTP/1.1\r\nHost: sink.bench\r\n\r\n".encode())
        head = b""
        while b"\r\n\r\n" not in head:
            head += s.recv(1024)
        assert head.startswith(b"HTTP/1.1 200"), head
    return s

def transfer(s, pid=None):
    """MB/s, this process's CPU s, the relay's CPU s, others' share of the machine."""
    c0, r0, b0 = cpu(None), (cpu(pid) if pid else 0), busy()
    data = memoryview(bytearray(CHUNK)); left = SIZE
    t = time.perf_counter()
    while left:
        k = min(left, CHUNK); s.sendall(data[:k]); left -= k
    s.shutdown(socket.SHUT_WR)
    got = int(s.recv(64)); dt = time.perf_counter() - t
    assert got == SIZE, (got, SIZE)
    s.close()
    c, r = cpu(None) - c0, (cpu(pid) - r0 if pid else 0)
    return SIZE / dt / 1e6, c, r, max(0, busy() - b0 - c - r) / (dt * os.cpu_count())

threading.Thread(target=sink_server, daemon=True).start()
time.sleep(0.2)
res = {label: [] for label, *_ in TARGETS}
for r in range(ROUNDS):
    for label, addr, pid in TARGETS:
        wait_quiet()
        d, dc, _, do = transfer(socket.create_connection((UP_IP, SINK_PORT)))
        p, pc, rc, po = transfer(tunnel(addr), pid)
        quiet = max(do, po) < QUIET
        res[label].append((d, p, p / d, dc, pc, rc, quiet))
        print(json.dumps(dict(round=r, relay=label, direct_MBps=round(d), relay_MBps=round(p), ratio=round(p / d, 3),
                              client_cpu_direct=round(dc, 2), client_cpu_relay=round(pc, 2), relay_cpu=round(rc, 2),
                              others_direct=round(do, 2), others_relay=round(po, 2), quiet=quiet)), flush=True)
med = lambda v, i: statistics.median(x[i] for x in v)
print(f"all pairs; 'quiet': pairs in which other processes used < {QUIET:.0%} of the machine")
print(f"| {'relay':<18} | {'direct MB/s':>11} | {'relay MB/s':>10} | {'ratio':>6} | {'client CPU s direct/relay':>25} | {'relay CPU s':>11} | {'quiet ratio':>11} | ratios")
print("|" + "|".join("-" * w for w in (20, 13, 12, 8, 27, 13, 13, 8)) + "|")
for label, v in res.items():
    print(f"| {label:<18} | {med(v, 0):>11.0f} | {med(v, 1):>10.0f} | {med(v, 2):>6.3f} | "
          f"{med(v, 3):>12.2f} / {med(v, 4):<10.2f} | {med(v, 5):>11.2f} | "
          f"{(f'{statistics.median(x[2] for x in q):.3f} ({len(q)})' if (q := [x for x in v if x[6]]) else '-'):>11} | "
          f"{' '.join(f'{x[2]:.2f}' + ('' if x[6] else '*') for x in v)}")
