#!/usr/bin/env python3
"""Benchmark of cordon's filtering proxy (issue 10 §6), loopback only.

Run through bench/proxy.sh (it builds cordon and starts the proxy). Measures, in one run:
  1. throughput of a GiB-sized transfer through a CONNECT tunnel vs direct loopback;
  2. requests per second for small HTTP responses (absolute-form through the proxy, one
     upstream connection per request, vs direct with one connection per request);
  3. 1,000 concurrent connections held open at once through the proxy (CONNECT and SOCKS5
     to an allowed host, plus connections to a denied host): errors, and leaks (the
     denied host's server counts every connection it receives: must stay 0).
"""
import asyncio, json, os, socket, sys, threading, time

PROXY = sys.argv[1]            # host:port of the running proxy
SIZE = int(sys.argv[2]) if len(sys.argv) > 2 else 1 << 30
RPS_N = int(sys.argv[3]) if len(sys.argv) > 3 else 5000
CONC = int(sys.argv[4]) if len(sys.argv) > 4 else 1000
UP_IP, DENIED_IP = "127.0.0.2", "127.0.0.3"   # mapped by `cordon proxy --map`
SINK_PORT, HTTP_PORT, DENIED_PORT = int(os.environ["SINK_PORT"]), int(os.environ["HTTP_PORT"]), int(os.environ["DENIED_PORT"])
ph, pp = PROXY.rsplit(":", 1); pp = int(pp)
CHUNK = 1 << 20
SOCKS = os.environ.get("SOCKS", "1") == "1"   # srt's HTTP proxy has no SOCKS5 on the same port

def sink_server():
    """Reads each connection to EOF and answers with the byte count."""
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

def tunnel():
    s = socket.create_connection((ph, pp))
    s.sendall(f"CONNECT sink.bench:{SINK_PORT} HTTP/1.1\r\nHost: sink.bench\r\n\r\n".encode())
    head = b""
    while b"\r\n\r\n" not in head:
        head += s.recv(1024)
    assert head.startswith(b"HTTP/1.1 200"), head
    return s

def transfer(s):
    data = memoryview(bytearray(CHUNK)); left = SIZE
    t = time.perf_counter()
    while left:
        k = min(left, CHUNK); s.sendall(data[:k]); left -= k
    s.shutdown(socket.SHUT_WR)
    got = int(s.recv(64)); dt = time.perf_counter() - t
    assert got == SIZE, (got, SIZE)
    return SIZE / dt / 1e6

async def http_server(host, port, hits=None):
    async def h(r, w):
        if hits is not None: hits[0] += 1
        try:
            await r.readuntil(b"\r\n\r\n")
            w.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")
            await w.drain()
        except Exception:
            pass
        w.close()
    return await asyncio.start_server(h, host, port, backlog=4096)

async def one_request(direct):
    if direct:
        r, w = await asyncio.open_connection(UP_IP, HTTP_PORT)
        w.write(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    else:
        r, w = await asyncio.open_connection(ph, pp)
        w.write(f"GET http://web.bench:{HTTP_PORT}/ HTTP/1.1\r\nHost: web.bench\r\nConnection: close\r\n\r\n".encode())
    data = await r.read()
    w.close()
    return data.startswith(b"HTTP/1.1 200") and data.endswith(b"ok")

async def rps(direct, n, par=50):
    ok = 0; sem = asyncio.Semaphore(par)
    async def go():
        nonlocal ok
        async with sem:
            try:
                r = await one_request(direct)
                ok += r
            except Exception:
                pass
    t = time.perf_counter()
    await asyncio.gather(*(go() for _ in range(n)))
    return ok / (time.perf_counter() - t), n - ok

async def hold(kind, barrier, results):
    """Opens one connection through the proxy and keeps it open until all are open."""
    try:
        r, w = await asyncio.open_connection(ph, pp)
        host = "denied.bench" if kind.endswith("denied") else "web.bench"
        port = DENIED_PORT if kind.endswith("denied") else HTTP_PORT
        if kind.startswith("socks") and SOCKS:
            w.write(b"\x05\x01\x00"); await w.drain(); await r.readexactly(2)
            w.write(b"\x05\x01\x00\x03" + bytes([len(host)]) + host.encode() + port.to_bytes(2, "big"))
            rep = await r.readexactly(10); granted = rep[1] == 0
        else:
            w.write(f"CONNECT {host}:{port} HTTP/1.1\r\nHost: {host}\r\n\r\n".encode())
            head = await r.readuntil(b"\r\n\r\n"); granted = head.startswith(b"HTTP/1.1 200")
        await barrier.wait()
        ok = False
        if granted:
            w.write(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"); await w.drain()
            ok = (await r.read()).endswith(b"ok")
        w.close()
        results.append((kind, granted, ok))
    except Exception as e:
        results.append((kind, None, repr(e)))
        await barrier.wait()

async def concurrency(n):
    # 80% to the allowed host (CONNECT and SOCKS5), 20% to the denied one.
    kinds = ["connect", "socks", "connect", "socks", "connect", "socks", "connect", "socks",
             "connect-denied", "socks-denied"]
    plan = [kinds[i % 10] for i in range(n)]
    barrier = asyncio.Barrier(n); results = []
    t = time.perf_counter()
    await asyncio.gather(*(hold(k, barrier, results) for k in plan))
    dt = time.perf_counter() - t
    allowed = [r for r in results if not r[0].endswith("denied")]
    denied = [r for r in results if r[0].endswith("denied")]
    errors = sum(1 for r in allowed if not (r[1] and r[2] is True)) + sum(1 for r in denied if r[1] is not False)
    return dict(connections=n, allowed=len(allowed), denied=len(denied), errors=errors, seconds=round(dt, 2))

async def main():
    threading.Thread(target=sink_server, daemon=True).start()
    hits = [0]
    web = await http_server(UP_IP, HTTP_PORT)
    den = await http_server(DENIED_IP, DENIED_PORT, hits)
    await asyncio.sleep(0.2)
    out = {}
    loop = asyncio.get_running_loop()
    direct = socket.create_connection((UP_IP, SINK_PORT))
    out["direct_MBps"] = round(await loop.run_in_executor(None, transfer, direct), 1)
    out["proxy_MBps"] = round(await loop.run_in_executor(None, transfer, tunnel()), 1)
    out["throughput_ratio"] = round(out["proxy_MBps"] / out["direct_MBps"], 3)
    d, de = await rps(True, RPS_N); p, pe = await rps(False, RPS_N)
    out.update(direct_rps=round(d), direct_rps_errors=de, proxy_rps=round(p), proxy_rps_errors=pe, rps_ratio=round(p / d, 3))
    out["concurrency"] = await concurrency(CONC)
    out["denied_host_leaks"] = hits[0]
    out["transfer_bytes"] = SIZE
    print(json.dumps(out, indent=1))
    web.close(); den.close()

asyncio.run(main())
