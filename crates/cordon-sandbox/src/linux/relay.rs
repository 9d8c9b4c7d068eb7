//! The managed network's plumbing inside the sandbox (issue 10 §5). Init, inside the
//! command's private network namespace, binds `127.0.0.1:`[`PROXY_PORT`] (and `[::1]`
//! when the namespace has IPv6) before the command starts, and hands the listening
//! sockets to the helper on the host side over `SCM_RIGHTS` ([`send_listeners`]). The
//! helper's filtering proxy (`cordon-proxy`) accepts on them directly: a connection the
//! command makes to the proxy port is a socket of the sandbox's namespace that only the
//! proxy holds the other end of, and the proxy's upstream connections are made from the
//! host's namespace. No socket file exists on the host, no thread relays bytes inside
//! the sandbox, and nothing else leaves the namespace: a program that ignores the proxy
//! variables reaches nothing, and direct DNS fails at once (no route, or a refused port
//! on the private loopback).
//!
//! `network.local` (issue 10 §6) works the same way: for each listed host loopback port,
//! init binds the same address and port inside the namespace and hands the listener over;
//! the proxy carries every connection accepted on it to exactly that host port. Nothing
//! else of the host's loopback is reachable.

use std::io;
use std::net::{SocketAddr, TcpListener};
use std::os::fd::{AsRawFd, OwnedFd, RawFd};

/// The port the proxy answers on inside the sandbox (`HTTP_PROXY=http://127.0.0.1:3128`).
pub const PROXY_PORT: u16 = cordon_policy::network::MANAGED_PROXY_PORT;

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

/// The listeners init binds inside the namespace, as the helper receives them: the proxy
/// port's (empty when the network is not managed) and one per `network.local` address, in
/// the plan's order.
#[derive(Debug, Default)]
pub struct Listeners {
    /// `127.0.0.1:3128` and, with IPv6, `[::1]:3128`.
    pub proxy: Vec<TcpListener>,
    /// One per `network.local` entry.
    pub local: Vec<TcpListener>,
}

/// The most descriptors one `SCM_RIGHTS` message carries (the kernel's `SCM_MAX_FD`).
const MAX_FDS: usize = 253;

/// Init → helper: sends every listener in one message on `chan` (data: the number of
/// proxy listeners and of forwards, one byte each).
///
/// Errors: more than 251 `network.local` entries, or the send failed (helper gone).
pub fn send_listeners(chan: &OwnedFd, l: &Listeners) -> io::Result<()> {
    use nix::sys::socket::{sendmsg, ControlMessage, MsgFlags};
    let fds: Vec<RawFd> = l
        .proxy
        .iter()
        .chain(&l.local)
        .map(|s| s.as_raw_fd())
        .collect();
    if fds.len() > MAX_FDS || l.proxy.len() > 2 {
        return Err(io::Error::other(format!(
            "{} network.local entries: at most {} can be forwarded",
            l.local.len(),
            MAX_FDS - 2
        )));
    }
    let head = [l.proxy.len() as u8, l.local.len() as u8];
    let iov = [io::IoSlice::new(&head)];
    let cmsg = [ControlMessage::ScmRights(&fds)];
    sendmsg::<()>(chan.as_raw_fd(), &iov, &cmsg, MsgFlags::MSG_NOSIGNAL, None)
        .map(|_| ())
        .map_err(io::Error::from)
}

/// Helper side of [`send_listeners`]: blocks until init has sent its listeners.
///
/// Errors: init closed its end first (it failed; its status says why), or the message is
/// not what init sends.
pub fn receive_listeners(chan: &OwnedFd) -> io::Result<Listeners> {
    let mut head = [0u8; 2];
    let (bytes, fds) = super::sys::recv_with_fds::<MAX_FDS>(chan.as_raw_fd(), &mut head)?;
    if bytes == 0 {
        return Err(io::Error::other(
            "the sandbox's init ended before its listeners were up",
        ));
    }
    let (np, nl) = (head[0] as usize, head[1] as usize);
    if bytes != 2 || fds.len() != np + nl {
        return Err(io::Error::other(
            "malformed listener message from the sandbox's init",
        ));
    }
    let mut it = fds.into_iter().map(TcpListener::from);
    Ok(Listeners {
        proxy: it.by_ref().take(np).collect(),
        local: it.collect(),
    })
}

/// Names the descriptor of the run's proxy decision log in the helper's environment
/// (set by `cordon run`, see [`DecisionChannel`]).
pub const DECISIONS_FD_ENV: &str = "CORDON_PROXY_DECISIONS_FD";

/// The caller's side of the proxy's decision log for one run (issue 10 §4): a memory file
/// passed to the helper (descriptor number in [`DECISIONS_FD_ENV`]; close-on-exec here,
/// passed to that one helper by its spawn, [`super::pass_descriptors`]) and its proxy appends
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
    /// A new, empty memory file (close-on-exec: the helper's spawn passes it).
    ///
    /// Errors: `memfd_create` failed.
    pub fn new() -> io::Result<DecisionChannel> {
        use std::os::fd::FromRawFd;
        // SAFETY: the name is NUL-terminated.
        let fd =
            unsafe { libc::memfd_create(c"cordon-proxy-decisions".as_ptr(), libc::MFD_CLOEXEC) };
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
    /// A new pair; the helper's end is open here until [`AskChannel::into_caller`],
    /// close-on-exec (the helper's spawn passes it, [`super::pass_descriptors`]).
    ///
    /// Errors: `socketpair` failed.
    pub fn new() -> io::Result<AskChannel> {
        let (ours, theirs) = std::os::unix::net::UnixStream::pair()?;
        let theirs = OwnedFd::from(theirs);
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
