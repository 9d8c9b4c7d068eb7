//! The managed network's relay (issue 10 §5), run by init inside the command's private
//! network namespace: it listens on `127.0.0.1:`[`PROXY_PORT`] (and `[::1]` when the
//! namespace has IPv6) and carries every connection to the filtering proxy, which serves
//! a unix socket on the host (`cordon-proxy`, started by the helper). The socket file is
//! pinned by an `O_PATH` descriptor opened before the root is rebuilt and connected to
//! through `/proc/self/fd/N`, so the command never sees its path (and the unix-socket
//! guard refuses it anyway: it lives on a read-only mount). Nothing else leaves the
//! namespace: a program that ignores the proxy variables reaches nothing, and direct DNS
//! fails at once (no route, or a refused port on the private loopback).
//!
//! `network.local` (issue 10 §6) uses the same relay: for each listed host loopback port,
//! init listens on the same address and port inside the namespace and carries every
//! connection to a unix socket the helper serves on the host, which connects to exactly
//! that host port. Nothing else of the host's loopback is reachable.

use std::io;
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::path::Path;

/// The port the proxy answers on inside the sandbox (`HTTP_PROXY=http://127.0.0.1:3128`).
pub const PROXY_PORT: u16 = 3128;

/// Opens the proxy's socket file (`O_PATH`) in the current — host's — view.
///
/// Errors: the path cannot be opened.
pub fn pin(path: &Path) -> io::Result<OwnedFd> {
    super::sys::open_path(path, false)
}

/// Listens on `127.0.0.1:PROXY_PORT` and, if possible, `[::1]:PROXY_PORT` (before the
/// command starts, so its first connection is queued, not refused).
///
/// Errors: the IPv4 listener cannot be bound (the loopback must be up).
pub fn listen() -> io::Result<Vec<TcpListener>> {
    let mut v = vec![TcpListener::bind(("127.0.0.1", PROXY_PORT))?];
    if let Ok(l) = TcpListener::bind(("::1", PROXY_PORT)) {
        v.push(l);
    }
    Ok(v)
}

/// Listens on `addr` inside the namespace (a `network.local` forward), before the command
/// starts.
///
/// Errors: the address cannot be bound (e.g. `::1` without IPv6 in the namespace).
pub fn listen_on(addr: SocketAddr) -> io::Result<TcpListener> {
    TcpListener::bind(addr)
}

/// Starts one accept thread per listener; each connection gets a fresh connection to the
/// proxy and two copy threads.
///
/// Errors: a thread could not be started.
pub fn start(listeners: Vec<TcpListener>, target: OwnedFd) -> io::Result<()> {
    let via = std::sync::Arc::new(format!("/proc/self/fd/{}", target.as_raw_fd()));
    // The descriptor must outlive every connection: init keeps it until it exits.
    std::mem::forget(target);
    for l in listeners {
        let via = std::sync::Arc::clone(&via);
        std::thread::Builder::new()
            .name("proxy-relay".into())
            .spawn(move || {
                for c in l.incoming() {
                    let Ok(c) = c else { continue };
                    let via = std::sync::Arc::clone(&via);
                    let _ = std::thread::Builder::new()
                        .stack_size(128 * 1024)
                        .spawn(move || relay_one(c, &via));
                }
            })?;
    }
    Ok(())
}

fn relay_one(c: TcpStream, via: &str) {
    let Ok(up) = UnixStream::connect(via) else {
        return;
    };
    let _ = c.set_nodelay(true);
    let (Ok(c2), Ok(up2)) = (c.try_clone(), up.try_clone()) else {
        return;
    };
    let t = std::thread::Builder::new()
        .stack_size(128 * 1024)
        .spawn(move || {
            let (mut r, mut w) = (c2, up2);
            let _ = copy(&mut r, &mut w);
            let _ = w.shutdown(Shutdown::Write);
        });
    let (mut r, mut w) = (up, c);
    let _ = copy(&mut r, &mut w);
    let _ = w.shutdown(Shutdown::Write);
    if let Ok(t) = t {
        let _ = t.join();
    }
}

/// Bytes moved per `read`/`write` by the relay (`io::copy` uses 8 KiB between two
/// sockets: a bulk transfer then costs a syscall pair per 8 KiB on this hop).
const RELAY_BUF: usize = 256 * 1024;

/// Copies `r` to `w` until end of input, [`RELAY_BUF`] bytes at a time (heap buffer: the
/// relay threads have small stacks).
fn copy(r: &mut impl io::Read, w: &mut impl io::Write) -> io::Result<u64> {
    let mut buf = vec![0u8; RELAY_BUF];
    let mut total = 0u64;
    loop {
        let n = match r.read(&mut buf) {
            Ok(0) => return Ok(total),
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        w.write_all(&buf[..n])?;
        total += n as u64;
    }
}

/// Names the descriptor of the run's proxy decision log in the helper's environment
/// (set by `cordon run`, see [`DecisionChannel`]).
pub const DECISIONS_FD_ENV: &str = "CORDON_PROXY_DECISIONS_FD";

/// The caller's side of the proxy's decision log for one run (issue 10 §4): a memory file
/// the helper inherits (descriptor number in [`DECISIONS_FD_ENV`]) and its proxy appends
/// every decision to, one JSON line each. The command never holds it (the helper marks
/// every inherited descriptor close-on-exec), so what the caller reads back after the run
/// — e.g. `network-denied{host, rule}` — cannot be forged by the command.
pub struct DecisionChannel {
    fd: OwnedFd,
}

/// At most this many bytes of decisions are read back: all the proxy writes
/// ([`cordon_proxy::LOG_MAX_BYTES`], its last record saying when it stopped).
const DECISIONS_MAX: u64 = cordon_proxy::LOG_MAX_BYTES;

impl DecisionChannel {
    /// A new, empty, inheritable memory file.
    ///
    /// Errors: `memfd_create` failed.
    pub fn new() -> io::Result<DecisionChannel> {
        use std::os::fd::FromRawFd;
        // SAFETY: the name is NUL-terminated; flags 0 leave the descriptor inheritable.
        let fd = unsafe { libc::memfd_create(c"cordon-proxy-decisions".as_ptr(), 0) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `fd` is a fresh descriptor owned by nothing else.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        Ok(DecisionChannel { fd })
    }

    /// `(name, value)` to add to the helper's environment.
    pub fn env(&self) -> (String, String) {
        (
            DECISIONS_FD_ENV.to_string(),
            self.fd.as_raw_fd().to_string(),
        )
    }

    /// After the helper exited: every decision its proxy logged, in order.
    pub fn read(self) -> Vec<cordon_proxy::LogRecord> {
        use std::io::Read;
        let f = std::fs::File::from(self.fd);
        let mut bytes = Vec::new();
        // Read from the start through a positioned reader (the helper moved the offset).
        // Bytes, then lossy text: a cap cutting a UTF-8 character (or any invalid byte)
        // made the whole read fail and every denial vanish from the report (review).
        let mut r = io::Read::take(PositionedFile { f, pos: 0 }, DECISIONS_MAX);
        let _ = r.read_to_end(&mut bytes);
        cordon_proxy::parse_log(&String::from_utf8_lossy(&bytes))
    }
}

struct PositionedFile {
    f: std::fs::File,
    pos: u64,
}

impl io::Read for PositionedFile {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        use std::os::unix::fs::FileExt;
        let n = self.f.read_at(buf, self.pos)?;
        self.pos += n as u64;
        Ok(n)
    }
}

/// Helper side: the decision log descriptor named by [`DECISIONS_FD_ENV`], if any (checked
/// open, close-on-exec).
pub fn decisions_from_env() -> Option<std::fs::File> {
    let fd = std::env::var(DECISIONS_FD_ENV).ok()?.parse::<i32>().ok()?;
    super::sys::take_inherited_fd(fd)
        .ok()
        .map(std::fs::File::from)
}

/// Names the descriptor of the run's ask channel in the helper's environment (set by
/// `cordon run` when someone can be asked, see [`AskChannel`]).
pub const ASK_FD_ENV: &str = "CORDON_PROXY_ASK_FD";

/// How long the proxy waits for an answer about an unknown host before denying it.
pub const ASK_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(120);

/// The caller's side of the proxy's ask channel for one run (issue 10 §4, R-P4 `ask`): a
/// unix stream pair; the helper inherits one end (number in [`ASK_FD_ENV`], close-on-exec
/// in the helper, so the command never holds it) and its proxy asks about every
/// destination no rule names ([`cordon_proxy::ask`]); the caller answers on the other end.
/// Without the channel, unknown hosts are denied at once.
pub struct AskChannel {
    ours: std::os::unix::net::UnixStream,
    helpers: Option<OwnedFd>,
}

impl AskChannel {
    /// A new pair; the helper's end is inheritable until [`AskChannel::into_caller`].
    ///
    /// Errors: `socketpair` failed.
    pub fn new() -> io::Result<AskChannel> {
        let (ours, theirs) = std::os::unix::net::UnixStream::pair()?;
        let theirs = OwnedFd::from(theirs);
        // SAFETY: F_SETFD on a descriptor this function owns; clearing FD_CLOEXEC lets
        // the spawned helper inherit it.
        if unsafe { libc::fcntl(theirs.as_raw_fd(), libc::F_SETFD, 0) } < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(AskChannel {
            ours,
            helpers: Some(theirs),
        })
    }

    /// `(name, value)` to add to the helper's environment.
    pub fn env(&self) -> (String, String) {
        (
            ASK_FD_ENV.to_string(),
            self.helpers
                .as_ref()
                .map(|f| f.as_raw_fd().to_string())
                .unwrap_or_default(),
        )
    }

    /// After the helper was started: closes the helper's end here and returns the
    /// caller's end (read [`cordon_proxy::ask::HostAsk`] lines, write
    /// [`cordon_proxy::ask::HostReply`] lines).
    pub fn into_caller(mut self) -> std::os::unix::net::UnixStream {
        self.helpers = None;
        self.ours
    }
}

/// Helper side: the ask channel named by [`ASK_FD_ENV`], if any (checked open,
/// close-on-exec).
pub fn ask_from_env() -> Option<std::os::unix::net::UnixStream> {
    let fd = std::env::var(ASK_FD_ENV).ok()?.parse::<i32>().ok()?;
    super::sys::take_inherited_fd(fd)
        .ok()
        .map(std::os::unix::net::UnixStream::from)
}
