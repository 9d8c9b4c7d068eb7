//! The tunnels with real sockets (issue 10 §6): bytes the client sends in the same write
//! as its CONNECT or SOCKS5 request arrive upstream first and in order, a half-close is
//! carried, megabytes arrive intact both ways at once, and an upstream reset ends the
//! tunnel without leaving a descriptor behind.
//!
//! The tests run one at a time ([`serial`]): the leak check counts the process's open
//! descriptors.

use cordon_proxy::socks5::{self, Command, Host, Request};
use cordon_proxy::{spawn, spawn_with, LocalForward, ProxyConfig, ProxyPolicy, Resolver, Running};
use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{IpAddr, Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::{mpsc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// Held for a whole test: the descriptor count is the process's.
fn serial() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

/// The name the proxy maps to the upstream's address (127.0.0.2, allowed by address).
const HOST: &str = "up.test";

fn config() -> ProxyConfig {
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    let policy = ProxyPolicy::new(&s(&[HOST, "127.0.0.2"]), &[], &[]).unwrap();
    let mut map: HashMap<String, Vec<IpAddr>> = HashMap::new();
    map.insert(HOST.into(), vec!["127.0.0.2".parse().unwrap()]);
    let mut cfg = ProxyConfig::new(policy);
    cfg.resolver = Resolver::Map(map);
    cfg.connect_timeout = Duration::from_secs(2);
    cfg
}

fn proxy() -> Running {
    spawn(config(), "127.0.0.1:0".parse().unwrap(), 2).unwrap()
}

/// An upstream on 127.0.0.2 serving each connection with `serve` on its own thread.
fn upstream<F>(serve: F) -> u16
where
    F: Fn(TcpStream) + Send + Sync + Clone + 'static,
{
    let l = TcpListener::bind(("127.0.0.2", 0)).unwrap();
    let port = l.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for s in l.incoming() {
            let Ok(s) = s else { continue };
            let serve = serve.clone();
            std::thread::spawn(move || serve(s));
        }
    });
    port
}

/// Greets, reads to EOF, then answers with everything it read (so the client sees the
/// order, and the answer comes only after the client's half-close).
fn echo_after_eof(mut s: TcpStream) {
    let _ = s.write_all(b"hi\n");
    let mut got = Vec::new();
    if s.read_to_end(&mut got).is_ok() {
        let _ = s.write_all(&got);
    }
}

/// Reads up to and including the end of an HTTP response head (byte by byte: the tunnel's
/// first bytes may follow it at once).
fn read_head(s: &mut impl Read) -> String {
    let mut head = Vec::new();
    let mut b = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        assert_eq!(s.read(&mut b).unwrap(), 1, "EOF in the response head");
        head.push(b[0]);
    }
    String::from_utf8(head).unwrap()
}

/// A CONNECT tunnel to `port`; `early` goes in the same write as the request.
fn connect_tunnel<S: Read + Write>(mut s: S, port: u16, early: &[u8]) -> S {
    let mut req =
        format!("CONNECT {HOST}:{port} HTTP/1.1\r\nHost: {HOST}:{port}\r\n\r\n").into_bytes();
    req.extend_from_slice(early);
    s.write_all(&req).unwrap();
    let head = read_head(&mut s);
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    s
}

/// A SOCKS5 tunnel to `port`; greeting, request and `early` go in one write.
fn socks_tunnel<S: Read + Write>(mut s: S, port: u16, early: &[u8]) -> S {
    let mut req = vec![5, 1, 0];
    req.extend(socks5::encode_request(&Request {
        command: Command::Connect,
        host: Host::Domain(HOST.into()),
        port,
    }));
    req.extend_from_slice(early);
    s.write_all(&req).unwrap();
    let mut reply = [0u8; 2 + 10];
    s.read_exact(&mut reply).unwrap();
    assert_eq!(
        &reply[..4],
        &[5, 0, 5, socks5::reply::SUCCEEDED],
        "{reply:?}"
    );
    s
}

fn tcp(addr: SocketAddr) -> TcpStream {
    let s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s
}

/// `n` bytes of a pattern that `seed` varies (not periodic over short spans).
fn pattern(n: usize, seed: u64) -> Vec<u8> {
    let mut x = seed | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

/// FNV-1a.
fn hash(b: &[u8]) -> u64 {
    b.iter().fold(0xcbf29ce484222325, |h, &c| {
        (h ^ c as u64).wrapping_mul(0x100000001b3)
    })
}

/// The half-close and pipelining exchange on an open tunnel: the greeting comes back,
/// more bytes follow `early`, the client shuts down writing, and the whole of what the
/// upstream read comes back after it.
fn half_close_exchange<S: Read + Write>(s: &mut S, early: &[u8], shutdown: impl FnOnce(&S)) {
    let mut hi = [0u8; 3];
    s.read_exact(&mut hi).unwrap();
    assert_eq!(&hi, b"hi\n");
    let later = pattern(5000, 7);
    s.write_all(&later).unwrap();
    shutdown(s);
    let mut back = Vec::new();
    s.read_to_end(&mut back).unwrap();
    let sent = [early, &later].concat();
    assert_eq!(back.len(), sent.len());
    assert!(back == sent, "the upstream got the bytes out of order");
}

#[test]
fn pipelined_bytes_arrive_first_and_half_close_is_carried() {
    let _g = serial();
    let p = proxy();
    let port = upstream(echo_after_eof);
    // Shorter than hyper's first read, and longer than it and the proxy's read buffer.
    for n in [17, 40_000] {
        let early = pattern(n, n as u64);
        let mut s = connect_tunnel(tcp(p.addr), port, &early);
        half_close_exchange(&mut s, &early, |s| s.shutdown(Shutdown::Write).unwrap());
        // SOCKS5: the handshake reads 512 bytes at a time, so part of these is forwarded
        // by the handshake and the rest by the tunnel.
        let mut s = socks_tunnel(tcp(p.addr), port, &early);
        half_close_exchange(&mut s, &early, |s| s.shutdown(Shutdown::Write).unwrap());
    }
}

/// Sends `n` bytes of one pattern on `s` and shuts it down for writing while reading what
/// comes back on `reader` (a clone of `s`) to EOF; returns the hash of that.
fn exchange<S>(mut s: S, mut reader: S, n: usize, shutdown: impl FnOnce(&S) + Send + 'static) -> u64
where
    S: Read + Write + Send + 'static,
{
    let writer = std::thread::spawn(move || {
        s.write_all(&pattern(n, 1)).unwrap();
        shutdown(&s);
        s
    });
    let mut back = Vec::new();
    reader.read_to_end(&mut back).unwrap();
    drop(writer.join().unwrap());
    assert_eq!(back.len(), n);
    hash(&back)
}

/// An upstream that sends `n` bytes of another pattern while reading to EOF, and reports
/// the hash of what it read.
fn bulk_upstream(n: usize) -> (u16, mpsc::Receiver<u64>) {
    let (tx, rx) = mpsc::channel();
    let tx = std::sync::Arc::new(Mutex::new(tx));
    let port = upstream(move |mut s: TcpStream| {
        let mut w = s.try_clone().unwrap();
        let writer = std::thread::spawn(move || w.write_all(&pattern(n, 2)).unwrap());
        let mut got = Vec::new();
        s.read_to_end(&mut got).unwrap();
        writer.join().unwrap();
        let _ = tx.lock().unwrap().send(hash(&got));
    });
    (port, rx)
}

#[test]
fn megabytes_arrive_intact_both_ways_at_once() {
    let _g = serial();
    let p = proxy();
    const N: usize = 12 << 20;
    let (port, got) = bulk_upstream(N);
    let want_up = hash(&pattern(N, 1));
    let want_down = hash(&pattern(N, 2));
    for socks in [false, true] {
        let s = if socks {
            socks_tunnel(tcp(p.addr), port, b"")
        } else {
            connect_tunnel(tcp(p.addr), port, b"")
        };
        let r = s.try_clone().unwrap();
        let down = exchange(s, r, N, |s| s.shutdown(Shutdown::Write).unwrap());
        assert_eq!(down, want_down, "socks {socks}: upstream to client");
        let up = got.recv_timeout(Duration::from_secs(10)).unwrap();
        assert_eq!(up, want_up, "socks {socks}: client to upstream");
    }
}

/// Listeners bound elsewhere and handed over ([`spawn_with`]: the sandbox's init binds the
/// proxy port and each `network.local` address inside its namespace): the same exchanges
/// through the proxy listener and two forwards.
#[test]
fn handed_over_listeners_and_local_forwards_are_carried() {
    let _g = serial();
    let port = upstream(echo_after_eof);
    const N: usize = 6 << 20;
    let (bulk_port, got) = bulk_upstream(N);
    let bind = || TcpListener::bind("127.0.0.1:0").unwrap();
    let (proxy_l, fwd_l, bulk_l) = (bind(), bind(), bind());
    let (proxy_a, fwd_a, bulk_a) = (
        proxy_l.local_addr().unwrap(),
        fwd_l.local_addr().unwrap(),
        bulk_l.local_addr().unwrap(),
    );
    let forwards = vec![
        LocalForward {
            listener: fwd_l,
            target: SocketAddr::from(([127, 0, 0, 2], port)),
        },
        LocalForward {
            listener: bulk_l,
            target: SocketAddr::from(([127, 0, 0, 2], bulk_port)),
        },
    ];
    let _p = spawn_with(config(), vec![proxy_l], forwards, 2).unwrap();
    let shut = |s: &TcpStream| s.shutdown(Shutdown::Write).unwrap();
    let early = pattern(3000, 3);
    let mut s = connect_tunnel(tcp(proxy_a), port, &early);
    half_close_exchange(&mut s, &early, shut);
    let mut s = socks_tunnel(tcp(proxy_a), port, &early);
    half_close_exchange(&mut s, &early, shut);
    let mut s = tcp(fwd_a);
    s.write_all(&early).unwrap();
    half_close_exchange(&mut s, &early, shut);
    let s = tcp(bulk_a);
    let r = s.try_clone().unwrap();
    assert_eq!(exchange(s, r, N, shut), hash(&pattern(N, 2)));
    assert_eq!(
        got.recv_timeout(Duration::from_secs(10)).unwrap(),
        hash(&pattern(N, 1))
    );
}

fn open_fds() -> usize {
    std::fs::read_dir("/proc/self/fd").unwrap().count()
}

/// An upstream that resets the connection (closes it with bytes unread) ends the tunnel:
/// the client's connection is closed, and every descriptor the tunnel held is released.
#[test]
#[cfg(target_os = "linux")]
fn an_upstream_reset_ends_the_tunnel() {
    let _g = serial();
    let p = proxy();
    let port = upstream(|mut s: TcpStream| {
        let mut b = [0u8; 1];
        let _ = s.read_exact(&mut b);
        std::thread::sleep(Duration::from_millis(200));
        // Dropped with unread bytes: a reset.
    });
    for socks in [false, true] {
        std::thread::sleep(Duration::from_millis(100));
        let before = open_fds();
        let s = tcp(p.addr);
        let mut s = if socks {
            socks_tunnel(s, port, b"")
        } else {
            connect_tunnel(s, port, b"")
        };
        s.write_all(&pattern(64 * 1024, 4)).unwrap();
        let start = Instant::now();
        let mut sink = Vec::new();
        let r = s.read_to_end(&mut sink);
        assert!(
            !matches!(&r, Err(e) if e.kind() == std::io::ErrorKind::WouldBlock
                || e.kind() == std::io::ErrorKind::TimedOut),
            "socks {socks}: the client's connection stayed open ({r:?})"
        );
        assert!(start.elapsed() < Duration::from_secs(5));
        // The client keeps its end open: the proxy must let go of its own.
        let mut now = open_fds();
        let deadline = Instant::now() + Duration::from_secs(5);
        while now > before + 1 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
            now = open_fds();
        }
        assert_eq!(now, before + 1, "socks {socks}: descriptors left behind");
        drop(s);
    }
}

/// At most `max_connections` client connections are served at once, tunnels included
/// (breaker, stop 20: idle connections without bound got the sandbox's helper killed by
/// the run's memory limit); one over the cap is closed at once, and a slot freed by a
/// connection that ended is served again (twin).
#[test]
fn connections_beyond_the_cap_are_closed_and_slots_come_back() {
    let _g = serial();
    let port = upstream(echo_after_eof);
    let mut cfg = config();
    cfg.max_connections = 2;
    let p = spawn(cfg, "127.0.0.1:0".parse().unwrap(), 2).unwrap();
    let early = pattern(100, 5);
    // Two tunnels held open take both slots.
    let t1 = connect_tunnel(tcp(p.addr), port, &early);
    let t2 = socks_tunnel(tcp(p.addr), port, &early);
    let mut third = tcp(p.addr);
    let _ = third.write_all(b"\x05\x01\x00");
    let mut b = [0u8; 2];
    assert!(
        matches!(third.read(&mut b), Ok(0) | Err(_)),
        "a connection over the cap was served"
    );
    drop(t1);
    // The freed slot is served again (within a moment: the tunnel task has to end).
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let mut s = tcp(p.addr);
        let _ = s.write_all(b"\x05\x01\x00");
        if matches!(s.read(&mut b), Ok(2)) {
            assert_eq!(b, [5, 0]);
            break;
        }
        assert!(Instant::now() < deadline, "the slot did not come back");
        std::thread::sleep(Duration::from_millis(50));
    }
    drop(t2);
}
