//! The proxy end to end on loopback (issue 10 §4): upstream test servers on 127.0.0.x,
//! names mapped by the resolver hook; allowed hosts over plain HTTP, CONNECT and SOCKS5;
//! denied, unlisted, private-literal and rebinding cases refused over all three, with the
//! rule in the 403 and in the JSONL log.

use cordon_proxy::socks5::{self, Command, Host, Request};
use cordon_proxy::{spawn, DecisionLog, ProxyConfig, ProxyPolicy, Resolver, Running};
use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{IpAddr, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// An HTTP/1.1 server answering every request with `body`; counts connections.
fn upstream(ip: &str, body: &'static str) -> (u16, Arc<AtomicUsize>) {
    let l = TcpListener::bind((ip, 0)).unwrap();
    let port = l.local_addr().unwrap().port();
    let hits = Arc::new(AtomicUsize::new(0));
    let h = Arc::clone(&hits);
    std::thread::spawn(move || {
        for s in l.incoming() {
            let Ok(s) = s else { continue };
            h.fetch_add(1, Ordering::SeqCst);
            std::thread::spawn(move || {
                let mut r = BufReader::new(s.try_clone().unwrap());
                let mut line = String::new();
                loop {
                    line.clear();
                    if r.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                        break;
                    }
                }
                let mut s = s;
                let _ = write!(
                    s,
                    "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
            });
        }
    });
    (port, hits)
}

struct Fixture {
    proxy: Running,
    port: u16,
    rebind_port: u16,
    rebind_hits: Arc<AtomicUsize>,
    log: tempfile::NamedTempFile,
}

fn fixture() -> Fixture {
    let (port, _) = upstream("127.0.0.2", "hello from upstream");
    let (rebind_port, rebind_hits) = upstream("127.0.0.3", "internal service");
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    // allowed.test resolves to 127.0.0.2, which an address rule allows explicitly;
    // rebind.test is allowed by name but resolves to 127.0.0.3, which nothing allows.
    let policy = ProxyPolicy::new(
        &s(&["allowed.test", "**.rebind.test", "denied.test", "127.0.0.2"]),
        &s(&["denied.test"]),
        &[],
    )
    .unwrap();
    let mut map: HashMap<String, Vec<IpAddr>> = HashMap::new();
    map.insert("allowed.test".into(), vec!["127.0.0.2".parse().unwrap()]);
    map.insert("denied.test".into(), vec!["127.0.0.2".parse().unwrap()]);
    map.insert("rebind.test".into(), vec!["127.0.0.3".parse().unwrap()]);
    map.insert(
        "www.rebind.test".into(),
        vec!["::ffff:127.0.0.3".parse().unwrap()],
    );
    map.insert("unlisted.test".into(), vec!["127.0.0.2".parse().unwrap()]);
    let log = tempfile::NamedTempFile::new().unwrap();
    let mut cfg = ProxyConfig::new(policy);
    cfg.resolver = Resolver::Map(map);
    cfg.log = DecisionLog::open(log.path()).unwrap();
    cfg.connect_timeout = Duration::from_secs(2);
    let proxy = spawn(cfg, "127.0.0.1:0".parse().unwrap(), 2).unwrap();
    Fixture {
        proxy,
        port,
        rebind_port,
        rebind_hits,
        log,
    }
}

fn connect(addr: SocketAddr) -> TcpStream {
    let s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    s
}

fn read_all(mut s: TcpStream) -> String {
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    String::from_utf8_lossy(&out).into_owned()
}

/// Plain HTTP, absolute form.
fn http_get(f: &Fixture, host: &str, port: u16) -> String {
    let mut s = connect(f.proxy.addr);
    write!(
        s,
        "GET http://{host}:{port}/x HTTP/1.1\r\nHost: {host}:{port}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    read_all(s)
}

/// CONNECT, then a plain request through the tunnel.
fn connect_get(f: &Fixture, host: &str, port: u16) -> String {
    let mut s = connect(f.proxy.addr);
    write!(
        s,
        "CONNECT {host}:{port} HTTP/1.1\r\nHost: {host}:{port}\r\n\r\n"
    )
    .unwrap();
    let mut r = BufReader::new(s.try_clone().unwrap());
    let mut status = String::new();
    r.read_line(&mut status).unwrap();
    if !status.contains(" 200") {
        let mut rest = String::new();
        let _ = r.read_to_string(&mut rest);
        return status + &rest;
    }
    let mut line = String::new();
    loop {
        line.clear();
        if r.read_line(&mut line).unwrap() == 0 || line == "\r\n" {
            break;
        }
    }
    write!(
        s,
        "GET /x HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut rest = String::new();
    let _ = r.read_to_string(&mut rest);
    format!("{status}{rest}")
}

/// SOCKS5 with a name (socks5h) or an address; returns the reply code and the response.
fn socks_get(f: &Fixture, host: Host, port: u16) -> (u8, String) {
    let mut s = connect(f.proxy.addr);
    s.write_all(&[5, 1, 0]).unwrap();
    let mut m = [0u8; 2];
    s.read_exact(&mut m).unwrap();
    assert_eq!(m, [5, 0]);
    s.write_all(&socks5::encode_request(&Request {
        command: Command::Connect,
        host,
        port,
    }))
    .unwrap();
    let mut head = [0u8; 4];
    s.read_exact(&mut head).unwrap();
    let rest = match head[3] {
        1 => 4 + 2,
        4 => 16 + 2,
        _ => panic!("unexpected address type"),
    };
    let mut skip = vec![0u8; rest];
    s.read_exact(&mut skip).unwrap();
    if head[1] != 0 {
        return (head[1], String::new());
    }
    write!(s, "GET /x HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").unwrap();
    (0, read_all(s))
}

fn log_lines(f: &Fixture) -> Vec<serde_json::Value> {
    std::fs::read_to_string(f.log.path())
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn allowed_host_over_http_connect_and_socks5() {
    let f = fixture();
    let r = http_get(&f, "allowed.test", f.port);
    assert!(r.starts_with("HTTP/1.1 200"), "{r}");
    assert!(r.ends_with("hello from upstream"), "{r}");
    // Case and a trailing dot are normalised.
    let r = http_get(&f, "ALLOWED.test.", f.port);
    assert!(r.ends_with("hello from upstream"), "{r}");
    let r = connect_get(&f, "allowed.test", f.port);
    assert!(r.ends_with("hello from upstream"), "{r}");
    let (code, r) = socks_get(&f, Host::Domain("allowed.test".into()), f.port);
    assert_eq!(code, 0);
    assert!(r.ends_with("hello from upstream"), "{r}");
    // The explicitly allowed address works as a literal too.
    let (code, _) = socks_get(&f, Host::Ip("127.0.0.2".parse().unwrap()), f.port);
    assert_eq!(code, 0);
    let log = log_lines(&f);
    assert!(log.iter().all(|l| l["decision"] == "allow"), "{log:?}");
    assert!(log.iter().any(|l| l["proto"] == "socks5"));
    assert!(log.iter().any(|l| l["proto"] == "connect"));
    assert_eq!(log[0]["rule"], "allow allowed.test");
    assert_eq!(log[0]["addr"], format!("127.0.0.2:{}", f.port));
}

#[test]
fn denied_and_unlisted_hosts_are_blocked_over_all_three_with_the_rule() {
    let f = fixture();
    for (host, rule) in [
        ("denied.test", "deny denied.test"),
        ("unlisted.test", "not in network.allow"),
    ] {
        let r = http_get(&f, host, f.port);
        assert!(r.starts_with("HTTP/1.1 403"), "{r}");
        assert!(
            r.to_ascii_lowercase()
                .contains(&format!("x-cordon-blocked: {rule}")),
            "{r}"
        );
        assert!(r.contains(&format!("blocked: {rule}")), "{r}");
        let r = connect_get(&f, host, f.port);
        assert!(r.starts_with("HTTP/1.1 403"), "{r}");
        assert!(r.contains(rule), "{r}");
        let (code, _) = socks_get(&f, Host::Domain(host.into()), f.port);
        assert_eq!(code, socks5::reply::NOT_ALLOWED, "{host}");
    }
    let log = log_lines(&f);
    assert_eq!(log.len(), 6, "{log:?}");
    assert!(log.iter().all(|l| l["decision"] == "deny"), "{log:?}");
    assert!(log
        .iter()
        .any(|l| l["proto"] == "socks5" && l["rule"] == "deny denied.test"));
}

#[test]
fn private_literals_and_rebinding_are_refused() {
    let f = fixture();
    // A literal nothing allows.
    let r = http_get(&f, "127.0.0.3", f.rebind_port);
    assert!(r.starts_with("HTTP/1.1 403"), "{r}");
    let (code, _) = socks_get(&f, Host::Ip("127.0.0.3".parse().unwrap()), f.rebind_port);
    assert_eq!(code, socks5::reply::NOT_ALLOWED);
    let r = connect_get(&f, "[::1]", f.rebind_port);
    assert!(r.starts_with("HTTP/1.1 403"), "{r}");
    // Names allowed by the list that resolve to an internal address (also IPv4-mapped).
    for name in ["rebind.test", "www.rebind.test"] {
        let r = http_get(&f, name, f.rebind_port);
        assert!(r.starts_with("HTTP/1.1 403"), "{name}: {r}");
        assert!(r.contains("internal address"), "{r}");
        let r = connect_get(&f, name, f.rebind_port);
        assert!(r.contains("internal address"), "{r}");
        let (code, _) = socks_get(&f, Host::Domain(name.into()), f.rebind_port);
        assert_eq!(code, socks5::reply::NOT_ALLOWED);
    }
    assert_eq!(
        f.rebind_hits.load(Ordering::SeqCst),
        0,
        "an internal service was reached"
    );
    let log = log_lines(&f);
    assert!(log
        .iter()
        .any(|l| l["addr"] == "127.0.0.3" && l["decision"] == "deny"));
}

#[test]
fn garbage_and_unsupported_requests_get_errors_not_hangs() {
    let f = fixture();
    let mut s = connect(f.proxy.addr);
    s.write_all(b"GET /relative HTTP/1.1\r\nHost: allowed.test\r\nConnection: close\r\n\r\n")
        .unwrap();
    let r = read_all(s);
    assert!(r.starts_with("HTTP/1.1 400"), "{r}");
    // Refused before any host was judged, and still logged as refusals naming what was
    // asked for (breaker, stop 18: 400s were missing from the run's report).
    for req in [
        "GET https://secret.test/x HTTP/1.1\r\nHost: secret.test\r\nConnection: close\r\n\r\n",
        "CONNECT noport.test HTTP/1.1\r\nHost: noport.test\r\n\r\n",
        // Named with the `Host` header's port (attack pass 186 F6: recorded as :80).
        "OPTIONS * HTTP/1.1\r\nHost: star.test:18188\r\nConnection: close\r\n\r\n",
    ] {
        let mut s = connect(f.proxy.addr);
        s.write_all(req.as_bytes()).unwrap();
        let r = read_all(s);
        assert!(r.starts_with("HTTP/1.1 400"), "{r}");
    }
    let lines = log_lines(&f);
    for (host, port) in [
        ("allowed.test", 80),
        ("secret.test", 443),
        ("noport.test", 0),
        ("star.test", 18188),
    ] {
        assert!(
            lines.iter().any(|l| l["host"] == host
                && l["port"] == port
                && l["decision"] == "deny"
                && l["rule"].as_str().unwrap().starts_with("bad request")),
            "{host}: {lines:?}"
        );
    }
    // SOCKS5 BIND is not served.
    let mut s = connect(f.proxy.addr);
    s.write_all(&[5, 1, 0]).unwrap();
    let mut m = [0u8; 2];
    s.read_exact(&mut m).unwrap();
    s.write_all(&socks5::encode_request(&Request {
        command: Command::Bind,
        host: Host::Domain("allowed.test".into()),
        port: f.port,
    }))
    .unwrap();
    let mut head = [0u8; 2];
    s.read_exact(&mut head).unwrap();
    assert_eq!(head[1], socks5::reply::COMMAND_NOT_SUPPORTED);
    // SOCKS5 that offers only username/password gets "no acceptable method".
    let mut s = connect(f.proxy.addr);
    s.write_all(&[5, 1, 2]).unwrap();
    let mut m = [0u8; 2];
    s.read_exact(&mut m).unwrap();
    assert_eq!(m, [5, 0xff]);
}

mod props {
    use super::*;
    use proptest::prelude::*;

    /// Feeds `bytes` to one connection of a deny-all proxy through an in-memory pipe;
    /// returns what it answered (up to the end of the first response head, or EOF) and
    /// its decision log.
    fn front(bytes: Vec<u8>, half_close: bool) -> (Vec<u8>, String) {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let dir = tempfile::tempdir().unwrap();
        let log_path = dir.path().join("log.jsonl");
        let mut cfg = ProxyConfig::new(ProxyPolicy::default());
        cfg.log = DecisionLog::open(&log_path).unwrap();
        cfg.resolver = Resolver::Map(Default::default());
        let proxy = cordon_proxy::Proxy::new(cfg);
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let out = rt.block_on(async move {
            let (mut client, server) = tokio::io::duplex(64 * 1024);
            let task = tokio::spawn(proxy.serve_io(server));
            let _ = client.write_all(&bytes).await;
            if half_close {
                let _ = client.shutdown().await;
            }
            let mut out = Vec::new();
            let _ = tokio::time::timeout(std::time::Duration::from_secs(5), async {
                let mut buf = [0u8; 4096];
                loop {
                    match client.read(&mut buf).await {
                        Ok(0) | Err(_) => break,
                        Ok(n) => out.extend_from_slice(&buf[..n]),
                    }
                    if out.windows(4).any(|w| w == b"\r\n\r\n") || out.first() == Some(&5) {
                        break;
                    }
                }
            })
            .await;
            task.abort();
            out
        });
        (out, std::fs::read_to_string(&log_path).unwrap_or_default())
    }

    fn host() -> impl Strategy<Value = Host> {
        prop_oneof![
            any::<[u8; 4]>().prop_map(|a| Host::Ip(IpAddr::from(a))),
            any::<[u8; 16]>().prop_map(|a| Host::Ip(IpAddr::from(a))),
            "[a-z0-9.-]{1,64}".prop_map(Host::Domain),
        ]
    }

    proptest! {
        #[test]
        fn request_round_trips_and_every_prefix_is_incomplete(
            h in host(), port in any::<u16>(), cmd in 1u8..4, tail in proptest::collection::vec(any::<u8>(), 0..8)
        ) {
            let command = match cmd { 1 => Command::Connect, 2 => Command::Bind, _ => Command::UdpAssociate };
            let r = Request { command, host: h, port };
            let mut b = socks5::encode_request(&r);
            let n = b.len();
            for i in 0..n {
                prop_assert_eq!(socks5::parse_request(&b[..i]), Ok(None));
            }
            b.extend_from_slice(&tail);
            prop_assert_eq!(socks5::parse_request(&b), Ok(Some((r, n))));
        }

        /// The HTTP/CONNECT/SOCKS5 front with a policy that allows nothing: whatever the
        /// client sends (arbitrary bytes, or a request line with an arbitrary target), no
        /// connection is allowed, nothing panics, and an HTTP answer is never a success.
        #[test]
        fn the_front_allows_nothing_a_deny_all_policy_denies(
            raw in proptest::collection::vec(any::<u8>(), 0..300),
            target in "[ -~]{0,80}",
            method in prop_oneof![Just("CONNECT "), Just("GET http://"), Just("GET "), Just("POST http://")],
            structured in any::<bool>(),
        ) {
            let (bytes, half_close) = if structured {
                (format!("{method}{target} HTTP/1.1\r\nHost: x\r\n\r\n").into_bytes(), false)
            } else {
                (raw, true)
            };
            let (out, log) = front(bytes, half_close);
            prop_assert!(!out.starts_with(b"HTTP/1.1 2"), "{}", String::from_utf8_lossy(&out));
            prop_assert!(!log.contains("\"allow\""), "{}", log);
            if structured && !out.is_empty() {
                let status = String::from_utf8_lossy(&out[..out.len().min(12)]).into_owned();
                prop_assert!(status.ends_with("400") || status.ends_with("403"), "{}", status);
            }
        }

        #[test]
        fn arbitrary_bytes_never_panic(b in proptest::collection::vec(any::<u8>(), 0..300)) {
            if let Ok(Some((_, n))) = socks5::parse_request(&b) { prop_assert!(n <= b.len()); }
            if let Ok(Some((_, n))) = socks5::parse_greeting(&b) { prop_assert!(n <= b.len()); }
            let _ = cordon_policy::hosts::parse_target(&String::from_utf8_lossy(&b));
            let _ = cordon_policy::hosts::HostRule::parse(&String::from_utf8_lossy(&b));
        }
    }
}

/// Breaker (stop 18): the command names the host, so a record shows a name cut to 255
/// characters with everything a host name cannot hold percent-encoded: a SOCKS5 name
/// `x:443: approved once by terminal`, a newline or an escape sequence cannot forge the
/// text of another decision or reach a terminal.
#[test]
fn logged_host_names_cannot_forge_records() {
    let f = fixture();
    let forged = "exfil.test:443: approved once by terminal\n\u{1b}[2J";
    let (code, _) = socks_get(&f, Host::Domain(forged.into()), 443);
    assert_ne!(code, 0);
    let long = "a".repeat(240) + &".b".repeat(40);
    let r = http_get(&f, &long, 80);
    assert!(r.contains("403") || r.contains("400"), "{r}");
    let lines = log_lines(&f);
    let hosts: Vec<&str> = lines.iter().filter_map(|l| l["host"].as_str()).collect();
    assert!(
        hosts.contains(&"exfil.test:443:%20approved%20once%20by%20terminal%0A%1B[2J"),
        "{hosts:?}"
    );
    let cut = hosts.iter().find(|h| h.starts_with("aaaa")).unwrap();
    assert_eq!(cut.chars().count(), 256, "{cut}");
    assert!(cut.ends_with('…'));
    for l in &lines {
        let rule = l["rule"].as_str().unwrap();
        assert!(!rule.chars().any(char::is_control), "{rule:?}");
    }
}

/// The decision log stops at its cap with one record saying so (the command drives it: a
/// flood of refused names grew it without bound).
#[test]
fn decision_log_stops_at_its_cap_and_says_so() {
    let file = tempfile::NamedTempFile::new().unwrap();
    let mut log = DecisionLog::default();
    log.add_file(file.reopen().unwrap());
    let policy = ProxyPolicy::new(&[], &[], &[]).unwrap();
    let mut cfg = ProxyConfig::new(policy);
    cfg.log = log.capped(8 * 1024);
    cfg.resolver = Resolver::Map(HashMap::new());
    let proxy = spawn(cfg, "127.0.0.1:0".parse().unwrap(), 2).unwrap();
    let f = Fixture {
        proxy,
        port: 0,
        rebind_port: 0,
        rebind_hits: Arc::new(AtomicUsize::new(0)),
        log: file,
    };
    // Each refusal is ~300 bytes: enough of them to pass the (lowered) cap.
    let name = "n".repeat(200);
    let cap = 8 * 1024u64;
    let n = cap / 250 + 40;
    let mut handles = Vec::new();
    for t in 0..4 {
        let addr = f.proxy.addr;
        let name = name.clone();
        handles.push(std::thread::spawn(move || {
            for i in 0..n / 4 {
                let mut s = connect(addr);
                let _ = write!(
                    s,
                    "GET http://{name}{t}x{i}.test/ HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
                );
                let mut sink = Vec::new();
                let _ = s.read_to_end(&mut sink);
            }
        }));
    }
    for h in handles {
        h.join().unwrap();
    }
    let size = std::fs::metadata(f.log.path()).unwrap().len();
    assert!(size <= cap + 1024, "{size} bytes past the cap");
    let lines = log_lines(&f);
    let full: Vec<_> = lines
        .iter()
        .filter(|l| l["rule"] == cordon_proxy::LOG_FULL_RULE)
        .collect();
    assert_eq!(full.len(), 1, "one marker");
    assert_eq!(lines.last().unwrap()["rule"], cordon_proxy::LOG_FULL_RULE);
}

/// Attack pass 45, M7: on an absolute-form `http://` request the upstream gets the
/// request-target's host as `Host` (RFC 9112 §3.2.2), never the client's: the allow list
/// judged the target, and a shared front end routes by `Host`. Twin: a request whose
/// `Host` already names the target arrives unchanged.
#[test]
fn the_upstream_host_header_is_the_request_targets() {
    let l = std::net::TcpListener::bind("127.0.0.2:0").unwrap();
    let port = l.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for s in l.incoming() {
            let Ok(s) = s else { continue };
            std::thread::spawn(move || {
                let mut r = BufReader::new(s.try_clone().unwrap());
                let mut head = String::new();
                let mut line = String::new();
                loop {
                    line.clear();
                    if r.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                        break;
                    }
                    head.push_str(&line.to_ascii_lowercase());
                }
                let mut s = s;
                let _ = write!(
                    s,
                    "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{head}",
                    head.len()
                );
            });
        }
    });
    let policy = ProxyPolicy::new(
        &["allowed.test".to_string(), "127.0.0.2".to_string()],
        &[],
        &[],
    )
    .unwrap();
    let mut map: HashMap<String, Vec<IpAddr>> = HashMap::new();
    map.insert("allowed.test".into(), vec!["127.0.0.2".parse().unwrap()]);
    let mut cfg = ProxyConfig::new(policy);
    cfg.resolver = Resolver::Map(map);
    cfg.connect_timeout = Duration::from_secs(2);
    let proxy = spawn(cfg, "127.0.0.1:0".parse().unwrap(), 2).unwrap();
    for sent in ["other.example", "allowed.test"] {
        let mut s = connect(proxy.addr);
        write!(
            s,
            "GET http://allowed.test:{port}/x HTTP/1.1\r\nHost: {sent}\r\nConnection: close\r\n\r\n"
        )
        .unwrap();
        let out = read_all(s);
        assert!(out.contains(" 200 "), "{out}");
        assert!(
            out.contains(&format!("host: allowed.test:{port}\r\n"))
                && !out.contains("other.example"),
            "{sent}: {out}"
        );
    }
}
