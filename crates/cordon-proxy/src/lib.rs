//! cordon's filtering proxy (issue 10 §4, `cordon proxy`): one TCP port that speaks
//!
//! - HTTP/1.1 absolute-form requests for plain `http://` (`GET http://host/path`),
//! - `CONNECT host:port` (HTTPS and anything else tunnelled), and
//! - SOCKS5 `CONNECT` with addresses or names (`socks5h://`: the proxy resolves),
//!
//! told apart by the first byte (5 = SOCKS5), and judges all three with one
//! [`ProxyPolicy`]: deny list, allow list (deny wins), optional port list, then every
//! resolved address just before connecting to exactly that address (internal addresses
//! need an explicit address rule — DNS rebinding gets nothing). A blocked HTTP request
//! gets `403` with an `X-Cordon-Blocked` header and a body naming the rule; a blocked
//! SOCKS5 request gets reply 2 ("not allowed by ruleset"). A destination no rule names is
//! put to the caller through an [`ask::Asker`] when one is configured (else denied). Every
//! decision is one JSON line in the decision log ([`DecisionLog`]).
//!
//! HTTP is parsed by hyper; the SOCKS5 parser ([`socks5`]) is small, fuzzed and
//! property-tested.

pub mod ask;
pub mod policy;
pub mod socks5;

pub use policy::{ProxyPolicy, Verdict};

use bytes::Bytes;
use http_body_util::{combinators::BoxBody, BodyExt, Empty, Full};
use hyper::body::Incoming;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::convert::Infallible;
use std::io::Write;
use std::net::{IpAddr, SocketAddr};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};

/// Name of the response header of a blocked request; its value is the rule.
pub const BLOCKED_HEADER: &str = "x-cordon-blocked";

/// How names are resolved.
#[derive(Debug, Clone, Default)]
pub enum Resolver {
    /// The system resolver (`getaddrinfo` through tokio).
    #[default]
    System,
    /// A fixed table (the test and benchmark hook): names not in it do not resolve.
    /// Keys are normalised names (lower case, no trailing dot).
    Map(HashMap<String, Vec<IpAddr>>),
}

impl Resolver {
    async fn resolve(&self, name: &str, port: u16) -> std::io::Result<Vec<IpAddr>> {
        match self {
            Resolver::System => Ok(tokio::net::lookup_host((name, port))
                .await?
                .map(|a| a.ip())
                .collect()),
            Resolver::Map(m) => m.get(name).cloned().ok_or_else(|| {
                std::io::Error::new(std::io::ErrorKind::NotFound, format!("{name}: no address"))
            }),
        }
    }
}

/// One decision, as written to the log (one JSON object per line).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LogRecord {
    /// Seconds since the Unix epoch.
    pub ts: f64,
    /// `http`, `connect`, `socks5` or `local` (a `network.local` forward).
    pub proto: String,
    /// The destination host as the client named it.
    pub host: String,
    /// The destination port.
    pub port: u16,
    /// `allow`, `deny` or `error` (allowed but the connection failed).
    pub decision: String,
    /// The rule (see [`Verdict::rule`]) or the error.
    pub rule: String,
    /// The address connected to (allow) or refused (internal address).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub addr: Option<String>,
}

/// Most bytes the decision log writes to each file; past it one [`LOG_FULL_RULE`] record
/// is written and later decisions are not (the command drives the log: without a cap a
/// flood of refused, long names grew it without bound, breaker stop 18).
pub const LOG_MAX_BYTES: u64 = 16 * 1024 * 1024;

/// The rule of the record written once when the log reached [`LOG_MAX_BYTES`] (decision
/// `deny`, host `*`, port 0): later decisions, refusals among them, are not in the log.
pub const LOG_FULL_RULE: &str = "the decision log is full: later decisions were not recorded";

/// Longest host name kept in a record (a DNS name has at most 253 characters); longer
/// names are cut, with `…` at the end.
const LOG_HOST_MAX: usize = 255;

/// The host name as a record shows it: cut to [`LOG_HOST_MAX`] characters, and every
/// character that cannot occur in a host name or an address literal (`A-Z a-z 0-9 . - _ :
/// [ ] *`) percent-encoded, so a name the command chose cannot forge the text of another
/// record, or carry control characters into a terminal (breaker, stop 18: a SOCKS5 name
/// `x:443: approved once by the person at the terminal` passed for an answered question).
pub fn log_safe_host(host: &str) -> String {
    let mut out = String::new();
    for (i, c) in host.chars().enumerate() {
        if i == LOG_HOST_MAX {
            out.push('…');
            break;
        }
        if c.is_ascii_alphanumeric() || ".-_:[]*".contains(c) {
            out.push(c);
        } else {
            let mut b = [0u8; 4];
            for byte in c.encode_utf8(&mut b).bytes() {
                out.push_str(&format!("%{byte:02X}"));
            }
        }
    }
    out
}

/// A rule text as a record shows it: control characters replaced by `?`, cut to 512
/// characters (a rule may quote what the command sent).
fn log_safe_rule(rule: &str) -> String {
    rule.chars()
        .take(512)
        .map(|c| if c.is_control() { '?' } else { c })
        .collect()
}

/// The JSONL decision log: files written to (each line one `write`), possibly none, each
/// up to [`LOG_MAX_BYTES`].
#[derive(Debug)]
pub struct DecisionLog {
    files: Vec<Mutex<(std::fs::File, u64)>>,
    cap: u64,
}

impl Default for DecisionLog {
    fn default() -> Self {
        DecisionLog {
            files: Vec::new(),
            cap: LOG_MAX_BYTES,
        }
    }
}

impl DecisionLog {
    /// Appends to `path` (created if missing).
    ///
    /// Errors: the file cannot be opened.
    pub fn open(path: &Path) -> std::io::Result<DecisionLog> {
        let mut l = DecisionLog::default();
        l.add_path(path)?;
        Ok(l)
    }

    /// Also appends to `path` (created if missing).
    ///
    /// Errors: the file cannot be opened.
    pub fn add_path(&mut self, path: &Path) -> std::io::Result<()> {
        let f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)?;
        self.add_file(f);
        Ok(())
    }

    /// Also writes to an open file (e.g. the memory file `cordon run` reads the run's
    /// decisions from, which the command never holds).
    pub fn add_file(&mut self, f: std::fs::File) {
        self.files.push(Mutex::new((f, 0)));
    }

    /// The same log with a lower cap than [`LOG_MAX_BYTES`] (bytes per file; never
    /// higher: the reader of the run's log reads that much at most).
    pub fn capped(mut self, bytes: u64) -> DecisionLog {
        self.cap = bytes.min(LOG_MAX_BYTES);
        self
    }

    fn record(&self, r: &LogRecord) {
        if self.files.is_empty() {
            return;
        }
        let line = |r: &LogRecord| {
            let mut l = serde_json::to_vec(r).unwrap_or_default();
            l.push(b'\n');
            l
        };
        let this = line(r);
        for f in &self.files {
            if let Ok(mut g) = f.lock() {
                let (file, written) = &mut *g;
                if *written >= self.cap {
                    continue;
                }
                let next = *written + this.len() as u64;
                let marker;
                let out: &[u8] = if next <= self.cap {
                    &this
                } else {
                    marker = line(&LogRecord {
                        ts: r.ts,
                        proto: r.proto.clone(),
                        host: "*".into(),
                        port: 0,
                        decision: "deny".into(),
                        rule: LOG_FULL_RULE.into(),
                        addr: None,
                    });
                    &marker
                };
                // Past the cap (the marker included) nothing more is written.
                *written = next.min(self.cap);
                let _ = file.write_all(out);
            }
        }
    }
}

/// Parses a decision log (JSONL); lines that are not records are skipped.
pub fn parse_log(text: &str) -> Vec<LogRecord> {
    text.lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// Everything the proxy needs.
#[derive(Debug)]
pub struct ProxyConfig {
    /// The policy.
    pub policy: ProxyPolicy,
    /// Name resolution.
    pub resolver: Resolver,
    /// Where decisions go.
    pub log: DecisionLog,
    /// Upper bound for one upstream connect.
    pub connect_timeout: Duration,
    /// Who is asked about destinations no rule names (`None`: they are denied at once,
    /// rule `not in network.allow`).
    pub asker: Option<ask::Asker>,
    /// The most client connections served at once (each one, tunnels included, holds a
    /// slot until it ends); one more is accepted and closed at once. Bounds the proxy's
    /// memory, which a sandbox's run pays for (breaker, stop 20: 15,000 idle connections
    /// got the helper killed by the run's memory limit). Default [`MAX_CONNECTIONS`].
    pub max_connections: usize,
}

/// The default [`ProxyConfig::max_connections`]: above the 1,000 concurrent connections
/// the benchmark holds, a few tens of MiB of idle connections at most.
pub const MAX_CONNECTIONS: usize = 4096;

impl ProxyConfig {
    /// A configuration with the system resolver, no log and a 10 s connect timeout.
    pub fn new(policy: ProxyPolicy) -> ProxyConfig {
        ProxyConfig {
            policy,
            resolver: Resolver::System,
            log: DecisionLog::default(),
            connect_timeout: Duration::from_secs(10),
            asker: None,
            max_connections: MAX_CONNECTIONS,
        }
    }
}

/// The proxy (cheap to clone; one per listener or many).
#[derive(Debug, Clone)]
pub struct Proxy {
    inner: Arc<ProxyConfig>,
    /// Free connection slots ([`ProxyConfig::max_connections`]).
    slots: Arc<tokio::sync::Semaphore>,
    /// The slot of the connection this clone serves (moved into its tunnel task).
    held: Option<Arc<tokio::sync::OwnedSemaphorePermit>>,
}

enum OpenError {
    Blocked(Verdict),
    Failed(String),
}

type Body = BoxBody<Bytes, hyper::Error>;

fn full(s: String) -> Body {
    Full::new(Bytes::from(s)).map_err(|n| match n {}).boxed()
}

fn empty() -> Body {
    Empty::<Bytes>::new().map_err(|n| match n {}).boxed()
}

fn text_response(status: StatusCode, body: String) -> Response<Body> {
    let mut r = Response::new(full(body));
    *r.status_mut() = status;
    r.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    r
}

/// The 403 of a blocked request: header and body name the rule.
fn blocked(host: &str, port: u16, v: &Verdict) -> Response<Body> {
    let mut r = text_response(
        StatusCode::FORBIDDEN,
        format!("cordon proxy: {host}:{port} blocked: {}\n", v.rule),
    );
    let printable: String = v
        .rule
        .chars()
        .map(|c| {
            if c.is_ascii_graphic() || c == ' ' {
                c
            } else {
                '?'
            }
        })
        .collect();
    if let Ok(h) = hyper::header::HeaderValue::from_str(&printable) {
        r.headers_mut().insert(BLOCKED_HEADER, h);
    }
    r
}

fn now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

impl Proxy {
    /// A proxy with `cfg`.
    pub fn new(cfg: ProxyConfig) -> Proxy {
        Proxy {
            slots: Arc::new(tokio::sync::Semaphore::new(cfg.max_connections)),
            inner: Arc::new(cfg),
            held: None,
        }
    }

    /// A clone holding one connection slot, or `None` when all are taken.
    fn admit(&self) -> Option<Proxy> {
        let permit = Arc::clone(&self.slots).try_acquire_owned().ok()?;
        Some(Proxy {
            inner: Arc::clone(&self.inner),
            slots: Arc::clone(&self.slots),
            held: Some(Arc::new(permit)),
        })
    }

    fn log(
        &self,
        proto: &'static str,
        host: &str,
        port: u16,
        decision: &'static str,
        rule: &str,
        addr: Option<String>,
    ) {
        self.inner.log.record(&LogRecord {
            ts: now(),
            proto: proto.to_string(),
            host: log_safe_host(host),
            port,
            decision: decision.to_string(),
            rule: log_safe_rule(rule),
            addr,
        });
    }

    /// Judges and connects: stage 1 on the name, then each resolved address judged and
    /// connected to in turn (exactly the judged address).
    async fn open(
        &self,
        proto: &'static str,
        host: &str,
        port: u16,
    ) -> Result<TcpStream, OpenError> {
        let p = &self.inner.policy;
        let (target, mut v) = p.judge_host(host, port);
        // No rule names it: asked (R-P4 `ask`) when someone can answer; the answer is the
        // rule (`approved once by the person at the terminal`, `denied by the scripted answers`).
        if let (Some(t), true, Some(a)) = (&target, v.unknown, &self.inner.asker) {
            let (allowed, rule) = a.ask(proto, &t.to_string(), port).await;
            v = Verdict::answered(allowed, rule);
        }
        let target = match target {
            Some(t) if v.allowed => t,
            _ => {
                self.log(proto, host, port, "deny", &v.rule, None);
                return Err(OpenError::Blocked(v));
            }
        };
        let addrs = match &target {
            cordon_policy::hosts::Target::Ip(ip) => vec![*ip],
            cordon_policy::hosts::Target::Name(n) => {
                match self.inner.resolver.resolve(n, port).await {
                    Ok(a) if !a.is_empty() => a,
                    Ok(_) | Err(_) => {
                        let msg = format!("cannot resolve {n}");
                        self.log(proto, host, port, "error", &msg, None);
                        return Err(OpenError::Failed(msg));
                    }
                }
            }
        };
        let mut refused: Option<(Verdict, IpAddr)> = None;
        let mut failure = None;
        for a in addrs {
            let v2 = p.judge_addr(a, port, &v);
            if !v2.allowed {
                refused.get_or_insert((v2, a));
                continue;
            }
            let to = SocketAddr::new(a, port);
            match tokio::time::timeout(self.inner.connect_timeout, TcpStream::connect(to)).await {
                Ok(Ok(s)) => {
                    let _ = s.set_nodelay(true);
                    self.log(proto, host, port, "allow", &v2.rule, Some(to.to_string()));
                    return Ok(s);
                }
                Ok(Err(e)) => failure = Some(format!("connecting to {to}: {e}")),
                Err(_) => failure = Some(format!("connecting to {to}: timed out")),
            }
        }
        match (failure, refused) {
            (Some(f), _) => {
                self.log(proto, host, port, "error", &f, None);
                Err(OpenError::Failed(f))
            }
            (None, Some((v2, a))) => {
                self.log(proto, host, port, "deny", &v2.rule, Some(a.to_string()));
                Err(OpenError::Blocked(v2))
            }
            (None, None) => Err(OpenError::Failed("no address".into())),
        }
    }

    /// Serves `listener` until the task is dropped. Connection errors end that connection
    /// only; an accept error (e.g. out of descriptors) is retried after a pause.
    pub async fn run(self, listener: TcpListener) {
        loop {
            match listener.accept().await {
                Ok((s, _)) => {
                    // Over the cap: closed at once (the client sees the connection end).
                    let Some(me) = self.admit() else { continue };
                    tokio::spawn(async move { me.serve_conn(s).await });
                }
                Err(_) => tokio::time::sleep(Duration::from_millis(20)).await,
            }
        }
    }

    /// Serves a `network.local` forward (issue 10 §6) until the task is dropped: every
    /// connection on `listener` (bound inside the sandbox) is carried to exactly `target`, a
    /// host loopback address and port; each is logged as proto `local`, rule
    /// `network.local`.
    pub async fn run_forward(self, listener: TcpListener, target: SocketAddr) {
        loop {
            match listener.accept().await {
                Ok((s, _)) => {
                    let Some(me) = self.admit() else { continue };
                    tokio::spawn(async move { me.forward_one(s, target).await });
                }
                Err(_) => tokio::time::sleep(Duration::from_millis(20)).await,
            }
        }
    }

    async fn forward_one<S>(self, s: S, target: SocketAddr)
    where
        S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
    {
        let host = target.ip().to_string();
        let connected =
            tokio::time::timeout(self.inner.connect_timeout, TcpStream::connect(target)).await;
        match connected {
            Ok(Ok(up)) => {
                let _ = up.set_nodelay(true);
                self.log(
                    "local",
                    &host,
                    target.port(),
                    "allow",
                    "network.local",
                    Some(target.to_string()),
                );
                tunnel(up, &[], s).await;
            }
            Ok(Err(e)) => self.log(
                "local",
                &host,
                target.port(),
                "error",
                &format!("connecting to {target}: {e}"),
                None,
            ),
            Err(_) => self.log(
                "local",
                &host,
                target.port(),
                "error",
                &format!("connecting to {target}: timed out"),
                None,
            ),
        }
    }

    async fn serve_conn(self, s: TcpStream) {
        let _ = s.set_nodelay(true);
        self.serve_stream(BufReader::new(s)).await
    }

    /// Serves one client connection given as any byte stream (the listeners' per-connection
    /// step; public for the fuzz target and property tests, which feed arbitrary bytes
    /// through an in-memory pipe).
    pub async fn serve_io<S>(self, s: S)
    where
        S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
    {
        self.serve_stream(BufReader::new(s)).await
    }

    async fn serve_stream<S>(self, mut s: BufReader<S>)
    where
        S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
    {
        let first = match tokio::time::timeout(Duration::from_secs(30), s.fill_buf()).await {
            Ok(Ok(b)) if !b.is_empty() => b[0],
            _ => return,
        };
        if first == socks5::VERSION {
            let _ = tokio::time::timeout(Duration::from_secs(30), self.socks5_handshake(s))
                .await
                .map(|r| {
                    r.map(|(up, down)| {
                        let held = self.held.clone();
                        tokio::spawn(async move {
                            let _held = held;
                            tunnel_buffered(up, &[], down).await
                        })
                    })
                });
            return;
        }
        let me = self.clone();
        let svc = hyper::service::service_fn(move |req| {
            let me = me.clone();
            async move { Ok::<_, Infallible>(me.http(req).await) }
        });
        let _ = hyper::server::conn::http1::Builder::new()
            .serve_connection(TokioIo::new(s), svc)
            .with_upgrades()
            .await;
    }

    async fn http(&self, mut req: Request<Incoming>) -> Response<Body> {
        // A request refused before any host was judged is a refusal too: logged (deny,
        // with what the client named), so the run's report lists it (breaker, stop 18).
        let bad = |proto: &'static str, host: &str, port: u16, rule: &str, msg: &str| {
            self.log(proto, host, port, "deny", rule, None);
            text_response(StatusCode::BAD_REQUEST, format!("cordon proxy: {msg}\n"))
        };
        if req.method() == Method::CONNECT {
            let Some(auth) = req.uri().authority().cloned() else {
                let named = req.uri().to_string();
                return bad(
                    "connect",
                    &named,
                    0,
                    "bad request: CONNECT without host:port",
                    "CONNECT needs host:port",
                );
            };
            let Some(port) = auth.port_u16() else {
                return bad(
                    "connect",
                    auth.host(),
                    0,
                    "bad request: CONNECT without a port",
                    "CONNECT needs host:port",
                );
            };
            let host = auth.host().to_string();
            return match self.open("connect", &host, port).await {
                Ok(up) => {
                    let on = hyper::upgrade::on(&mut req);
                    let held = self.held.clone();
                    tokio::spawn(async move {
                        let _held = held;
                        if let Ok(u) = on.await {
                            tunnel_upgraded(up, u).await;
                        }
                    });
                    Response::new(empty())
                }
                Err(OpenError::Blocked(v)) => blocked(&host, port, &v),
                Err(OpenError::Failed(e)) => {
                    text_response(StatusCode::BAD_GATEWAY, format!("cordon proxy: {e}\n"))
                }
            };
        }
        let uri = req.uri().clone();
        let (Some("http"), Some(host)) = (uri.scheme_str(), uri.host()) else {
            // Named by the request-target when it has a host, else by the `Host` header,
            // its port included (attack pass 186 F6: `OPTIONS *` with `Host: h:18188` was
            // recorded as h:80).
            let by_header = || {
                req.headers()
                    .get(hyper::header::HOST)
                    .and_then(|h| h.to_str().ok())
                    .and_then(|h| h.parse::<hyper::http::uri::Authority>().ok())
            };
            let (named, port) = match uri.host() {
                Some(h) => (h.to_string(), uri.port_u16()),
                None => {
                    by_header().map_or(("?".into(), None), |a| (a.host().to_string(), a.port_u16()))
                }
            };
            let port = port.unwrap_or(match uri.scheme_str() {
                Some("https") => 443,
                _ => 80,
            });
            return bad(
                "http",
                &named,
                port,
                "bad request: not an absolute-form http:// request",
                "send absolute-form http:// requests, or CONNECT host:port (https:// goes \
                 through CONNECT)",
            );
        };
        let host = host.to_string();
        let port = uri.port_u16().unwrap_or(80);
        let up = match self.open("http", &host, port).await {
            Ok(s) => s,
            Err(OpenError::Blocked(v)) => return blocked(&host, port, &v),
            Err(OpenError::Failed(e)) => {
                return text_response(StatusCode::BAD_GATEWAY, format!("cordon proxy: {e}\n"))
            }
        };
        let (mut sender, conn) = match hyper::client::conn::http1::handshake(TokioIo::new(up)).await
        {
            Ok(x) => x,
            Err(e) => {
                return text_response(StatusCode::BAD_GATEWAY, format!("cordon proxy: {e}\n"))
            }
        };
        tokio::spawn(conn);
        let origin = uri
            .path_and_query()
            .map(|p| p.as_str().to_string())
            .unwrap_or_else(|| "/".into());
        if let Ok(u) = origin.parse() {
            *req.uri_mut() = u;
        }
        let h = req.headers_mut();
        h.remove("proxy-connection");
        h.remove("proxy-authorization");
        // The request-target's host, never the client's `Host` (RFC 9112 §3.2.2: a proxy
        // MUST replace it): the allow list judged the target, and a shared front end
        // routes by `Host` (attack pass 45, M7: `GET http://allowed/` with `Host:
        // other.example` reached another site behind the same CDN).
        let authority = match uri.port_u16() {
            Some(p) => format!("{host}:{p}"),
            None => host.clone(),
        };
        match hyper::header::HeaderValue::from_str(&authority) {
            Ok(v) => {
                h.insert(hyper::header::HOST, v);
            }
            Err(_) => {
                h.remove(hyper::header::HOST);
            }
        }
        match sender.send_request(req).await {
            Ok(resp) => resp.map(|b| b.boxed()),
            Err(e) => text_response(StatusCode::BAD_GATEWAY, format!("cordon proxy: {e}\n")),
        }
    }

    /// The SOCKS5 exchange up to the reply; returns the upstream and the client (with any
    /// bytes the client sent early already forwarded).
    async fn socks5_handshake<S>(&self, mut s: S) -> Option<(TcpStream, S)>
    where
        S: AsyncRead + AsyncWrite + Unpin,
    {
        let mut buf: Vec<u8> = Vec::with_capacity(300);
        let methods = loop {
            match socks5::parse_greeting(&buf) {
                Ok(Some((m, n))) => {
                    buf.drain(..n);
                    break m;
                }
                Ok(None) => read_more(&mut s, &mut buf).await?,
                Err(_) => return None,
            }
        };
        if !methods.contains(&socks5::METHOD_NO_AUTH) {
            let _ = s.write_all(&[socks5::VERSION, socks5::METHOD_NONE]).await;
            return None;
        }
        s.write_all(&[socks5::VERSION, socks5::METHOD_NO_AUTH])
            .await
            .ok()?;
        let req = loop {
            match socks5::parse_request(&buf) {
                Ok(Some((r, n))) => {
                    buf.drain(..n);
                    break r;
                }
                Ok(None) => read_more(&mut s, &mut buf).await?,
                Err(socks5::Socks5Error::AddressType(_)) => {
                    let _ = s
                        .write_all(&socks5::encode_reply(
                            socks5::reply::ADDRESS_TYPE_NOT_SUPPORTED,
                            None,
                        ))
                        .await;
                    return None;
                }
                Err(_) => {
                    let _ = s
                        .write_all(&socks5::encode_reply(socks5::reply::GENERAL_FAILURE, None))
                        .await;
                    return None;
                }
            }
        };
        let host = match &req.host {
            socks5::Host::Ip(ip) => ip.to_string(),
            socks5::Host::Domain(d) => d.clone(),
        };
        if req.command != socks5::Command::Connect {
            self.log(
                "socks5",
                &host,
                req.port,
                "deny",
                "only SOCKS5 CONNECT is served",
                None,
            );
            let _ = s
                .write_all(&socks5::encode_reply(
                    socks5::reply::COMMAND_NOT_SUPPORTED,
                    None,
                ))
                .await;
            return None;
        }
        match self.open("socks5", &host, req.port).await {
            Ok(mut up) => {
                let bound = up.local_addr().ok();
                s.write_all(&socks5::encode_reply(socks5::reply::SUCCEEDED, bound))
                    .await
                    .ok()?;
                if !buf.is_empty() {
                    up.write_all(&buf).await.ok()?;
                }
                Some((up, s))
            }
            Err(OpenError::Blocked(_)) => {
                let _ = s
                    .write_all(&socks5::encode_reply(socks5::reply::NOT_ALLOWED, None))
                    .await;
                None
            }
            Err(OpenError::Failed(_)) => {
                let _ = s
                    .write_all(&socks5::encode_reply(socks5::reply::HOST_UNREACHABLE, None))
                    .await;
                None
            }
        }
    }
}

async fn read_more<S: AsyncRead + Unpin>(s: &mut S, buf: &mut Vec<u8>) -> Option<()> {
    if buf.len() > 1024 {
        return None;
    }
    let mut tmp = [0u8; 512];
    match s.read(&mut tmp).await {
        Ok(0) | Err(_) => None,
        Ok(n) => {
            buf.extend_from_slice(&tmp[..n]);
            Some(())
        }
    }
}

/// Bytes per read/write of a tunnel, each direction (one heap buffer per direction,
/// allocated once per connection, zeroed: fresh pages, resident only once a transfer has
/// used them). 1 MiB: a loopback bulk transfer moves up to the socket buffer per call; on
/// 2 cores the proxy's CPU per GiB fell from ~0.37 s (256 KiB) to ~0.29 s, and
/// `bench/proxy.sh`'s throughput ratio rose from ~0.5 to ~0.6. (A splice(2) tunnel cut
/// the proxy's CPU as far but cost the client more, its sent pages held until the far
/// end read them, and ratio fell to ~0.45.)
const TUNNEL_BUF: usize = 1 << 20;

/// Copies both ways until both sides are done ([`TUNNEL_BUF`] buffers).
async fn copy<A, B>(mut a: A, mut b: B)
where
    A: AsyncRead + AsyncWrite + Unpin,
    B: AsyncRead + AsyncWrite + Unpin,
{
    let _ = tokio::io::copy_bidirectional_with_sizes(&mut a, &mut b, TUNNEL_BUF, TUNNEL_BUF).await;
}

/// Carries bytes both ways between the upstream `up` and the client `down` until both
/// sides are done: first `early` to `up` (bytes of the client's the proxy had read while
/// serving its request, in order), then by [`copy`].
async fn tunnel<S>(mut up: TcpStream, early: &[&[u8]], down: S)
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    for b in early {
        if !b.is_empty() && up.write_all(b).await.is_err() {
            return;
        }
    }
    copy(up, down).await
}

/// [`tunnel`] for a client read through a `BufReader`: `early`, then what the reader holds,
/// go upstream first.
async fn tunnel_buffered<S>(up: TcpStream, early: &[u8], down: BufReader<S>)
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let held = down.buffer().to_vec();
    tunnel(up, &[early, &held], down.into_inner()).await
}

/// [`tunnel`] for a CONNECT: the client's stream taken back from hyper when it is one of
/// the listeners' (bytes hyper read past the request head go upstream first), else the
/// upgraded connection as it is.
async fn tunnel_upgraded(up: TcpStream, u: hyper::upgrade::Upgraded) {
    let u = match u.downcast::<TokioIo<BufReader<TcpStream>>>() {
        Ok(p) => return tunnel_buffered(up, &p.read_buf, p.io.into_inner()).await,
        Err(u) => u,
    };
    tunnel(up, &[], TokioIo::new(u)).await
}

/// A proxy running on its own thread and runtime (for `cordon proxy`, the sandbox and
/// tests): the address it listens on, and a handle that stops it when dropped.
pub struct Running {
    /// The listening address.
    pub addr: SocketAddr,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Binds `addr` (port 0 picks one) and serves `cfg` on a background thread with a
/// `threads`-worker runtime until the returned [`Running`] is dropped.
///
/// Errors: the runtime cannot be built or the address cannot be bound.
pub fn spawn(cfg: ProxyConfig, addr: SocketAddr, threads: usize) -> std::io::Result<Running> {
    let rt = runtime(threads)?;
    let listener = rt.block_on(TcpListener::bind(addr))?;
    let local = listener.local_addr()?;
    let proxy = Proxy::new(cfg);
    start(rt, local, move |p: Proxy| p.run(listener), proxy)
}

/// A `network.local` forward (issue 10 §6): a listener bound inside the sandbox's network
/// namespace on the forwarded address (handed to the host side over `SCM_RIGHTS`), and
/// the host loopback address every connection accepted on it is carried to.
#[derive(Debug)]
pub struct LocalForward {
    /// The bound listener (a socket of the sandbox's namespace).
    pub listener: std::net::TcpListener,
    /// The host loopback address and port.
    pub target: SocketAddr,
}

/// Serves already-bound TCP listeners on a background runtime of `threads` workers: the
/// filtering proxy on each of `proxy` (none: a restricted network with `network.local` has
/// only forwards) and each [`LocalForward`], one decision log for all. The managed
/// network's listeners are bound by the sandbox's init inside the command's private
/// network namespace and passed to the helper, so a connection the command makes to
/// `127.0.0.1:3128` is accepted here, on the host side, with no relay in between; the
/// upstream connections are made from this process's (the host's) namespace. The
/// returned [`Running::addr`] is `0.0.0.0:0`.
///
/// Errors: the runtime cannot be built or a listener cannot be registered.
pub fn spawn_with(
    cfg: ProxyConfig,
    proxy: Vec<std::net::TcpListener>,
    forwards: Vec<LocalForward>,
    threads: usize,
) -> std::io::Result<Running> {
    let rt = runtime(threads)?;
    let register = |l: std::net::TcpListener| -> std::io::Result<TcpListener> {
        l.set_nonblocking(true)?;
        let _g = rt.enter();
        TcpListener::from_std(l)
    };
    let proxy_listeners = proxy
        .into_iter()
        .map(register)
        .collect::<std::io::Result<Vec<_>>>()?;
    let forwards = forwards
        .into_iter()
        .map(|f| Ok((register(f.listener)?, f.target)))
        .collect::<std::io::Result<Vec<_>>>()?;
    start(
        rt,
        SocketAddr::from(([0, 0, 0, 0], 0)),
        move |p: Proxy| async move {
            let mut set = tokio::task::JoinSet::new();
            for (l, t) in forwards {
                set.spawn(p.clone().run_forward(l, t));
            }
            for l in proxy_listeners {
                set.spawn(p.clone().run(l));
            }
            while set.join_next().await.is_some() {}
        },
        Proxy::new(cfg),
    )
}

/// Threads the runtime may start for blocking work (name lookups): tokio's default is 512,
/// which a command resolving many slow names at once could make the proxy start, each a
/// task counted against the run's pids limit (breaker, stop 19).
pub const BLOCKING_THREADS: usize = 8;

/// The most threads a proxy started with `threads` workers runs: the workers, the blocking
/// pool ([`BLOCKING_THREADS`]) and the thread that drives the runtime. A sandbox's run adds these to its pids limit when the proxy's process
/// counts against it, so the command keeps the budget its profile gives.
pub const fn max_threads(threads: usize) -> u64 {
    let workers = if threads == 0 { 1 } else { threads };
    (workers + BLOCKING_THREADS + 1) as u64
}

fn runtime(threads: usize) -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(threads.max(1))
        .max_blocking_threads(BLOCKING_THREADS)
        .enable_all()
        .build()
}

fn start<F, Fut>(
    rt: tokio::runtime::Runtime,
    local: SocketAddr,
    serve: F,
    proxy: Proxy,
) -> std::io::Result<Running>
where
    F: FnOnce(Proxy) -> Fut + Send + 'static,
    Fut: std::future::Future<Output = ()> + Send + 'static,
{
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let thread = std::thread::Builder::new()
        .name("cordon-proxy".into())
        .spawn(move || {
            rt.block_on(async move {
                // The accept loops run on a worker, not on this thread: a connection task
                // spawned from a worker starts on that worker, where one spawned from
                // here waited for a worker to be woken (a thread handoff per
                // connection).
                let serving = tokio::spawn(serve(proxy));
                tokio::select! {
                    _ = serving => {}
                    _ = rx => {}
                }
            });
            rt.shutdown_background();
        })?;
    Ok(Running {
        addr: local,
        stop: Some(tx),
        thread: Some(thread),
    })
}
