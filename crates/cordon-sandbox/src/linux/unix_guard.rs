//! The unix-socket guard (R-L2, issue 10 §1–§3): which pathname unix sockets the command
//! may `connect(2)` to, judged by init for every process of the command's tree.
//!
//! Why a guard: a host socket under a read-only bind is still connectable (`connect`
//! needs write permission on the socket *inode*, which DAC grants to its owner; the
//! read-only mount flag is not consulted), Landlock up to ABI 7 has no right for
//! connecting to a pathname socket, and seccomp cannot read the address. So:
//!
//! 1. The command carries a second seccomp program
//!    ([`super::seccomp_filter::build_unix_guard`]): every `connect(2)` becomes a user
//!    notification; `AF_UNIX` datagram sockets (whose `sendto` names a peer the guard
//!    never sees) are refused; `pidfd_getfd(2)` is denied to the command.
//! 2. Init (pid 1 of the sandbox, same Landlock domain and credentials as the command, no
//!    capabilities, not under that program) receives each notification on a thread,
//!    takes a duplicate of the caller's socket (`pidfd_getfd`), copies the address once,
//!    and performs the `connect` itself on that duplicate — the same socket, so the
//!    caller ends up connected. Nothing is re-read from the caller's memory afterwards,
//!    so a racing thread cannot swap the address (no `SECCOMP_USER_NOTIF_FLAG_CONTINUE`).
//! 3. A pathname is resolved in the caller's view (`/proc/<tid>/cwd`, `/proc/<tid>/root`)
//!    to an `O_PATH` descriptor pinning the inode, judged, and connected to through
//!    `/proc/self/fd/N` — the judged inode, not a second lookup. Allowed: a socket on a
//!    writable mount of the sandbox (writable roots, the private `/tmp`, `/dev/shm`:
//!    places where the command could have created it — a hard link or rename from a
//!    read-only mount is `EXDEV`), or one listed in `network.unix_sockets`. Anything else
//!    gets `EACCES` and a `cordon:` line on stderr.
//! 4. Abstract addresses: connected to by init, which carries the command's Landlock
//!    abstract-socket scope (ABI ≥ 6) — or, in a private network namespace, sees only the
//!    namespace's own abstract sockets. Without either, abstract connects get `EPERM`.
//!
//! Other families (`AF_INET`, `AF_INET6`) are connected to as asked: the network policy
//! for them is the namespace (and, later, the proxy), not this guard.
//!
//! The same program and listener also carry the denial-record supervisor's writing path
//! calls (`super::denial_records`): the serve loop dispatches on the syscall number —
//! `connect` here, every other number to [`GuardConfig::denials`].

use super::seccomp_filter;
use super::sys::SockFilter;
use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// What the guard allows besides sockets on writable mounts.
#[derive(Debug, Default)]
pub struct GuardConfig {
    /// Abstract unix addresses may be connected to (a Landlock scope or a private network
    /// namespace confines them); otherwise they are refused with `EPERM`.
    pub abstract_ok: bool,
    /// `network.unix_sockets`: absolute paths (symlinks resolved) of host sockets the
    /// command may connect to, each with an `O_PATH` descriptor opened in the host's view
    /// before the sandbox's root was built ([`pin_allowed`]) — so a socket the mounts
    /// hide (under the private `/tmp`, or a denied directory) is still reachable by the
    /// path the profile names, and only that inode.
    pub allowed: Vec<(PathBuf, Option<OwnedFd>)>,
    /// The denial-record supervisor sharing this listener (every notification that is not
    /// a `connect` or a brokered rename is its: `super::denial_records`).
    pub denials: Option<Arc<super::denial_records::Supervisor>>,
    /// The `.git/config` copies whose renames the supervisor emulates
    /// ([`super::git_config_broker`]); empty = renames are not notified for it.
    pub git_configs: Arc<Vec<super::git_config_broker::Copy>>,
    /// In a private network namespace: the index of its listening unix sockets
    /// ([`super::unix_listeners`]), asked before a socket on a writable mount is connected
    /// to, so one no listener of the sandbox is bound to is refused without a connection
    /// (`None`: judged by connecting, as with a shared namespace).
    pub listeners: Option<super::unix_listeners::ListenerIndex>,
    /// When the sandbox's network namespace is not the host's: why an internet connection
    /// cannot leave it. Such connects are then recorded as network attempts
    /// ([`super::denial_records::Supervisor::note_network`]).
    pub network_rule: Option<String>,
}

/// Opens each allowed socket (`O_PATH`, following symlinks) in the current — host's —
/// view. A socket that does not exist yet gets no descriptor: it is then reachable only
/// if the sandbox sees it at that path.
pub fn pin_allowed(paths: &[PathBuf]) -> Vec<(PathBuf, Option<OwnedFd>)> {
    paths
        .iter()
        .map(|p| {
            let fd = CString::new(p.as_os_str().as_bytes()).ok().and_then(|c| {
                // SAFETY: `c` is a valid NUL-terminated path.
                let fd = unsafe { libc::open(c.as_ptr(), libc::O_PATH | libc::O_CLOEXEC) };
                check_fd(fd as libc::c_long).ok()
            });
            let fd = fd.filter(|f| {
                super::sys::fstat(f.as_raw_fd())
                    .is_ok_and(|st| st.st_mode & libc::S_IFMT == libc::S_IFSOCK)
            });
            (p.clone(), fd)
        })
        .collect()
}

/// How host unix sockets are kept out of reach on a host with `features`, in words for
/// `cordon status` (issue 10 §1, §2): the pathname mechanism per kernel, and the abstract
/// one. Landlock has no right for connecting to a pathname socket up to ABI 7, so the guard
/// (seccomp user notification, judged by init) is the mechanism wherever rung 1 runs.
pub fn mechanism(features: &super::LinuxFeatures) -> (String, String) {
    let abi = features.landlock.value().copied().unwrap_or(0);
    let userns = features.user_namespaces.is_available();
    let seccomp = features.seccomp.is_available();
    let pathname = if userns && seccomp {
        format!(
            "unix-socket guard (seccomp user notification on connect, judged by the \
             sandbox's init: only sockets on writable mounts or in network.unix_sockets; \
             unix datagram sockets refused){}",
            if abi >= 8 {
                "; this build does not use Landlock ABI 8's pathname-socket right yet"
            } else {
                "; Landlock ABI <= 7 has no pathname-socket right"
            }
        )
    } else if seccomp {
        "no guard on rung 2 (no user namespaces): socket() is denied with the network off; \
         runs with the network on or with network.unix_sockets are refused"
            .to_string()
    } else {
        "none (seccomp unavailable): runs with the network off or on, or with \
         network.unix_sockets, are refused"
            .to_string()
    };
    let abstract_ = if abi >= super::LANDLOCK_ABI_SCOPE {
        format!("Landlock abstract-unix scope (ABI {abi}), every network mode")
    } else if userns {
        "private network namespace with the network off; refused by the guard with it on"
            .to_string()
    } else {
        "unconfined with the network on (no Landlock scope before ABI 6)".to_string()
    };
    (pathname, abstract_)
}

fn errno() -> i32 {
    io::Error::last_os_error()
        .raw_os_error()
        .unwrap_or(libc::EIO)
}

/// A connected pair of `AF_UNIX` stream sockets (close-on-exec) to pass the listener from
/// the command's process to init: `(init's end, the command's end)`.
pub fn channel() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: `fds` is a valid array of two ints.
    let r = unsafe {
        libc::socketpair(
            libc::AF_UNIX,
            libc::SOCK_STREAM | libc::SOCK_CLOEXEC,
            0,
            fds.as_mut_ptr(),
        )
    };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: both descriptors are fresh and owned by nothing else.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// In the command's process (after `no_new_privs`, before exec): stacks the guard program
/// with `SECCOMP_FILTER_FLAG_NEW_LISTENER` and sends the listener to init over `chan`
/// (`SCM_RIGHTS`).
///
/// With `denial_records` the same program also traps the writing path calls
/// ([`seccomp_filter::build_unix_guard_with`]).
///
/// Errors: the filter or the send failed (message names the step).
pub fn install_in_child(chan: &OwnedFd, denial_records: bool, renames: bool) -> Result<(), String> {
    let also = if renames {
        super::git_config_broker::rename_syscalls()
    } else {
        Vec::new()
    };
    let prog = seccomp_filter::build_unix_guard_with(denial_records, &also);
    let listener = install_with_listener(&prog)
        .map_err(|e| format!("sandbox setup failed: seccomp listener: {e}"))?;
    let fds = [listener.as_raw_fd()];
    let iov = [io::IoSlice::new(b"L")];
    let cmsg = [nix::sys::socket::ControlMessage::ScmRights(&fds)];
    nix::sys::socket::sendmsg::<()>(
        chan.as_raw_fd(),
        &iov,
        &cmsg,
        nix::sys::socket::MsgFlags::empty(),
        None,
    )
    .map_err(|e| format!("sandbox setup failed: passing the seccomp listener: {e}"))?;
    Ok(())
}

/// In init: receives the listener sent by [`install_in_child`].
///
/// Errors: nothing (or no descriptor) arrived.
pub fn receive_listener(chan: &OwnedFd) -> io::Result<OwnedFd> {
    let mut byte = [0u8; 1];
    let (_, fds) = super::sys::recv_with_fds::<1>(chan.as_raw_fd(), &mut byte)?;
    if let Some(fd) = fds.into_iter().next() {
        return Ok(fd);
    }
    Err(io::Error::other("no seccomp listener was received"))
}

#[repr(C)]
struct SockFprog {
    len: libc::c_ushort,
    filter: *const SockFilter,
}

fn install_with_listener(prog: &[SockFilter]) -> io::Result<OwnedFd> {
    let fprog = SockFprog {
        len: prog.len() as libc::c_ushort,
        filter: prog.as_ptr(),
    };
    // SAFETY: `fprog` points at `prog`, which outlives the call; the kernel copies it.
    let r = unsafe {
        libc::syscall(
            libc::SYS_seccomp,
            libc::SECCOMP_SET_MODE_FILTER,
            libc::SECCOMP_FILTER_FLAG_NEW_LISTENER as libc::c_uint,
            &fprog as *const SockFprog,
        )
    };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: the kernel returned a new descriptor (O_CLOEXEC) that we own.
    Ok(unsafe { OwnedFd::from_raw_fd(r as RawFd) })
}

/// Starts the guard thread in init. It answers notifications until every process using
/// the filter is gone (or init exits).
///
/// Errors: the thread could not be started (then nothing answers, and the command's
/// `connect` calls would hang: the caller must not run the command).
pub fn start(listener: OwnedFd, cfg: GuardConfig) -> io::Result<()> {
    let listener = Arc::new(listener);
    let cfg = Arc::new(cfg);
    std::thread::Builder::new()
        .name("unix-guard".into())
        .spawn(move || serve(listener, cfg))
        .map(|_| ())
}

fn serve(listener: Arc<OwnedFd>, cfg: Arc<GuardConfig>) {
    loop {
        let mut pfd = libc::pollfd {
            fd: listener.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: `pfd` is one valid pollfd.
        let r = unsafe { libc::poll(&mut pfd, 1, -1) };
        if r < 0 {
            if errno() == libc::EINTR {
                continue;
            }
            return;
        }
        if pfd.revents & libc::POLLIN == 0 {
            return; // POLLHUP: no process uses the filter any more
        }
        // SAFETY: seccomp_notif is plain old data; the kernel wants it zeroed.
        let mut n: libc::seccomp_notif = unsafe { std::mem::zeroed() };
        // SAFETY: `n` is a valid, zeroed seccomp_notif for SECCOMP_IOCTL_NOTIF_RECV.
        if unsafe { libc::ioctl(listener.as_raw_fd(), libc::SECCOMP_IOCTL_NOTIF_RECV, &mut n) } < 0
        {
            match errno() {
                libc::EINTR | libc::ENOENT => continue, // the caller went away
                _ => return,
            }
        }
        if n.data.nr != libc::SYS_connect as i32 {
            // Answered inline (a few file operations, never a blocking one): first the
            // `.git/config` broker's emulated rename, then the denial records' judgement.
            if super::git_config_broker::is_rename(n.data.nr) {
                if let Some(r) = super::git_config_broker::handle(&n, &cfg.git_configs, || {
                    id_valid(&listener, n.id)
                }) {
                    respond(&listener, n.id, r);
                    continue;
                }
            }
            let answer = match &cfg.denials {
                Some(sup) => super::denial_records::handle(sup, &n, || id_valid(&listener, n.id)),
                None => super::denial_records::Answer::Continue,
            };
            use super::denial_records::Answer;
            match answer {
                Answer::Continue => respond_continue(&listener, n.id),
                Answer::Deny(e) => respond(&listener, n.id, Err(e)),
                Answer::Done(v) => respond(&listener, n.id, Ok(v)),
                Answer::Install { fd, cloexec, made } => {
                    if !respond_fd(&listener, n.id, &fd, cloexec) {
                        if let Some(m) = made {
                            m.undo(&fd);
                        }
                    }
                }
                Answer::Wait(w) => {
                    let l = Arc::clone(&listener);
                    let id = n.id;
                    // A FIFO's writer waits for a reader (or a device's open for its
                    // driver) on a thread of its own; the loop answers the others.
                    let spawned =
                        std::thread::Builder::new()
                            .stack_size(256 * 1024)
                            .spawn(move || match w.finish(|| id_valid(&l, id)) {
                                Ok((fd, cloexec)) => {
                                    respond_fd(&l, id, &fd, cloexec);
                                }
                                Err(e) => respond(&l, id, Err(e)),
                            });
                    if spawned.is_err() {
                        respond(&listener, n.id, Err(libc::EAGAIN));
                    }
                }
            }
            continue;
        }
        let l = Arc::clone(&listener);
        let c = Arc::clone(&cfg);
        // One thread per call: a blocking connect must not hold up the others.
        let spawned = std::thread::Builder::new()
            .stack_size(256 * 1024)
            .spawn(move || respond(&l, n.id, connect_for(&l, &n, &c)));
        if spawned.is_err() {
            respond(&listener, n.id, Err(libc::EAGAIN));
        }
    }
}

fn respond(listener: &OwnedFd, id: u64, result: Result<i64, i32>) {
    let (val, error) = match result {
        Ok(v) => (v, 0),
        Err(e) => (0, -e),
    };
    let mut resp = libc::seccomp_notif_resp {
        id,
        val,
        error,
        flags: 0,
    };
    // SAFETY: `resp` is a valid seccomp_notif_resp. A failure means the caller is gone.
    unsafe {
        libc::ioctl(
            listener.as_raw_fd(),
            libc::SECCOMP_IOCTL_NOTIF_SEND,
            &mut resp,
        )
    };
}

/// `SECCOMP_IOCTL_NOTIF_ADDFD` on `listener` with `add` (seccomp_unotify(2)): the number
/// of the descriptor installed in the caller, or the errno (`ENOENT`: the caller is gone
/// or its wait was interrupted; `EINVAL`: a flag this kernel lacks).
fn notif_addfd(listener: &OwnedFd, mut add: libc::seccomp_notif_addfd) -> Result<i64, i32> {
    // SAFETY: `add` is a valid seccomp_notif_addfd for this listener's notification.
    let r = unsafe {
        libc::ioctl(
            listener.as_raw_fd(),
            libc::SECCOMP_IOCTL_NOTIF_ADDFD,
            &mut add,
        )
    };
    if r < 0 {
        Err(errno())
    } else {
        Ok(r as i64)
    }
}

/// Answers the notification `id` with a new descriptor of the caller for `fd` (its
/// number is the call's result), close-on-exec when `cloexec`: `SECCOMP_IOCTL_NOTIF_ADDFD`
/// with `SECCOMP_ADDFD_FLAG_SEND` installs it and answers in one step (Linux 5.14), so a
/// caller interrupted in between gets neither. Before 5.14 the flag is `EINVAL`: the
/// descriptor is installed, then the answer sent. An install the caller's table refuses
/// (`EMFILE`) is the call's error. Returns whether the caller got the descriptor.
fn respond_fd(listener: &OwnedFd, id: u64, fd: &OwnedFd, cloexec: bool) -> bool {
    let addfd = |flags: u32| {
        notif_addfd(
            listener,
            libc::seccomp_notif_addfd {
                id,
                flags,
                srcfd: fd.as_raw_fd() as u32,
                newfd: 0,
                newfd_flags: if cloexec { libc::O_CLOEXEC as u32 } else { 0 },
            },
        )
    };
    match addfd(libc::SECCOMP_ADDFD_FLAG_SEND as u32) {
        Ok(_) => true,
        Err(libc::EINVAL) => match addfd(0) {
            Ok(n) => {
                respond(listener, id, Ok(n));
                true
            }
            Err(e) => {
                respond(listener, id, Err(e));
                false
            }
        },
        Err(libc::ENOENT) => false, // the caller is gone (or was interrupted)
        Err(e) => {
            respond(listener, id, Err(e));
            false
        }
    }
}

/// `SECCOMP_USER_NOTIF_FLAG_CONTINUE`: the kernel performs the call with its own checks.
fn respond_continue(listener: &OwnedFd, id: u64) {
    let mut resp = libc::seccomp_notif_resp {
        id,
        val: 0,
        error: 0,
        flags: libc::SECCOMP_USER_NOTIF_FLAG_CONTINUE as u32,
    };
    // SAFETY: `resp` is a valid seccomp_notif_resp. A failure means the caller is gone.
    unsafe {
        libc::ioctl(
            listener.as_raw_fd(),
            libc::SECCOMP_IOCTL_NOTIF_SEND,
            &mut resp,
        )
    };
}

fn id_valid(listener: &OwnedFd, id: u64) -> bool {
    let mut id = id;
    // SAFETY: `id` is a valid u64 for SECCOMP_IOCTL_NOTIF_ID_VALID.
    unsafe {
        libc::ioctl(
            listener.as_raw_fd(),
            libc::SECCOMP_IOCTL_NOTIF_ID_VALID,
            &mut id,
        ) == 0
    }
}

/// The thread group of thread `tid` (from `/proc/<tid>/status`).
pub(crate) fn tgid_of(tid: u32) -> Result<i32, i32> {
    let s = std::fs::read_to_string(format!("/proc/{tid}/status")).map_err(|_| libc::ESRCH)?;
    s.lines()
        .find_map(|l| l.strip_prefix("Tgid:"))
        .and_then(|v| v.trim().parse().ok())
        .ok_or(libc::ESRCH)
}

fn check_fd(r: libc::c_long) -> Result<OwnedFd, i32> {
    if r < 0 {
        return Err(errno());
    }
    // SAFETY: the kernel returned a new descriptor that we own.
    Ok(unsafe { OwnedFd::from_raw_fd(r as RawFd) })
}

/// Performs the caller's `connect(2)`: returns the syscall's value or an errno.
fn connect_for(listener: &OwnedFd, n: &libc::seccomp_notif, cfg: &GuardConfig) -> Result<i64, i32> {
    let tid = n.pid;
    let fd_num = n.data.args[0] as i32;
    let addr_ptr = n.data.args[1];
    // The kernel reads addrlen as an int: only the low 32 bits count.
    let addrlen = n.data.args[2] as u32 as i32;
    if !(0..=128).contains(&addrlen) {
        return Err(libc::EINVAL);
    }
    let tgid = tgid_of(tid)?;
    // SAFETY: pidfd_open takes a pid and flags; no memory is passed.
    let pidfd = check_fd(unsafe { libc::syscall(libc::SYS_pidfd_open, tgid, 0) })
        .map_err(|_| libc::ESRCH)?;
    // SAFETY: pidfd_getfd takes descriptors and flags; no memory is passed.
    let sock =
        check_fd(unsafe { libc::syscall(libc::SYS_pidfd_getfd, pidfd.as_raw_fd(), fd_num, 0) })
            .map_err(|e| if e == libc::EBADF { e } else { libc::EPERM })?;
    let mut addr = [0u8; 128];
    let len = addrlen as usize;
    if len > 0 {
        let mem = std::fs::File::open(format!("/proc/{tid}/mem")).map_err(|_| libc::EPERM)?;
        use std::os::unix::fs::FileExt;
        mem.read_exact_at(&mut addr[..len], addr_ptr)
            .map_err(|_| libc::EFAULT)?;
    }
    // The pid may have been reused between the notification and the lookups above.
    if !id_valid(listener, n.id) {
        return Err(libc::ENOENT);
    }
    let domain = socket_domain(&sock)?;
    let family = u16::from_ne_bytes([addr[0], addr[1]]) as i32;
    if domain == libc::AF_UNIX && family == libc::AF_UNIX && len > 2 {
        let path = &addr[2..len];
        if path[0] == 0 {
            if !cfg.abstract_ok {
                say(
                    b"\0abstract",
                    "cordon: refused connect to an abstract unix socket (no Landlock scope \
                     on this kernel to keep it inside the sandbox)"
                        .to_string(),
                );
                return Err(libc::EPERM);
            }
            return raw_connect(&sock, &addr[..len]);
        }
        let end = path.iter().position(|b| *b == 0).unwrap_or(path.len());
        let asked = &path[..end];
        let seen = pin_socket(tid, asked);
        let judged = match &seen {
            Ok(t) => judge(t, asked, cfg),
            Err(e) => Err(*e),
        };
        let (via_fd, reach) = match judged {
            Ok(r) => (seen.as_ref().map(|t| t.as_raw_fd()).map_err(|e| *e)?, r),
            // Not reachable as the sandbox sees it: a listed socket is still reachable by
            // the path the profile names, through the descriptor pinned at start.
            Err(e) => match pinned_for(tid, asked, cfg) {
                Some(fd) => (fd, Reach::Listed),
                None => {
                    if e == libc::EACCES {
                        refused(asked, seen.as_ref().ok());
                    }
                    return Err(e);
                }
            },
        };
        let via = format!("/proc/self/fd/{via_fd}");
        let mut un = [0u8; 2 + 108];
        un[..2].copy_from_slice(&(libc::AF_UNIX as u16).to_ne_bytes());
        un[2..2 + via.len()].copy_from_slice(via.as_bytes());
        let target = &un[..2 + via.len() + 1];
        if reach == Reach::Listed {
            return raw_connect(&sock, target);
        }
        // No listener of the sandbox bound to it: refused before any connection, so a
        // host daemon listening there sees nothing (attack pass 160, F1).
        if let (Some(index), Ok(t)) = (&cfg.listeners, &seen) {
            if index.has_listener(t) == Some(false) {
                say(
                    &socket_key(asked, Some(t)),
                    format!(
                        "cordon: refused connect to the unix socket {}: no process of the \
                         sandbox listens on it (it lies in a writable root; a process outside \
                         the sandbox listens on it, or none does); list it in \
                         network.unix_sockets to allow a host listener",
                        String::from_utf8_lossy(asked),
                    ),
                );
                return Err(libc::ECONNREFUSED);
            }
        }
        // On a writable mount: only a listener of the sandbox's own. Judged on a connection
        // of init's, which then *becomes* the caller's descriptor (SECCOMP_ADDFD_FLAG_SETFD),
        // so the caller's socket is never connected to anything judged outside (breaker,
        // stop 19: judged on the caller's socket after connecting, a sibling thread's send
        // reached a host daemon before the shutdown, 3 of 3 tries). The listener sees one
        // connection either way, as it would from the caller.
        return connect_judged(listener, n, &sock, fd_num, target).inspect_err(|e| {
            if *e == libc::ECONNREFUSED {
                say(
                    &socket_key(asked, seen.as_ref().ok()),
                    format!(
                        "cordon: refused connect to the unix socket {}: a process outside the \
                         sandbox listens on it (it lies in a writable root, but it is not the \
                         command's); list it in network.unix_sockets to allow it",
                        String::from_utf8_lossy(asked),
                    ),
                );
            }
        });
    }
    let r = raw_connect(&sock, &addr[..len]);
    if let (Some(sup), Some(rule)) = (&cfg.denials, &cfg.network_rule) {
        if family == libc::AF_INET || family == libc::AF_INET6 {
            sup.note_network(&addr[..len], r.err(), rule);
        }
    }
    r
}

fn socket_domain(sock: &OwnedFd) -> Result<i32, i32> {
    let mut v: libc::c_int = 0;
    let mut l = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: `v`/`l` are a valid int and its length for SO_DOMAIN.
    let r = unsafe {
        libc::getsockopt(
            sock.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_DOMAIN,
            &mut v as *mut libc::c_int as *mut libc::c_void,
            &mut l,
        )
    };
    if r < 0 {
        return Err(errno());
    }
    Ok(v)
}

fn raw_connect(sock: &OwnedFd, addr: &[u8]) -> Result<i64, i32> {
    // SAFETY: `addr` is a readable buffer of the given length; the kernel copies it.
    let r = unsafe {
        libc::connect(
            sock.as_raw_fd(),
            addr.as_ptr() as *const libc::sockaddr,
            addr.len() as libc::socklen_t,
        )
    };
    if r < 0 {
        Err(errno())
    } else {
        Ok(0)
    }
}

/// Opens the socket file the caller named, resolved as the caller would (relative to its
/// working directory, `/proc/self` meaning the caller), following symlinks like
/// `connect(2)` does. The descriptor pins the inode that is judged and connected to.
fn pin_socket(tid: u32, path: &[u8]) -> Result<OwnedFd, i32> {
    let p = Path::new(std::ffi::OsStr::from_bytes(path));
    let full = if p.is_absolute() {
        let rest = p.strip_prefix("/").unwrap_or(p);
        let rest = rest
            .strip_prefix("proc/self")
            .or_else(|_| rest.strip_prefix("proc/thread-self"))
            .map(|r| Path::new("proc").join(tid.to_string()).join(r))
            .unwrap_or_else(|_| rest.to_path_buf());
        Path::new(&format!("/proc/{tid}/root")).join(rest)
    } else {
        Path::new(&format!("/proc/{tid}/cwd")).join(p)
    };
    let c = CString::new(full.as_os_str().as_bytes()).map_err(|_| libc::EINVAL)?;
    // SAFETY: `c` is a valid NUL-terminated path.
    let fd = unsafe { libc::open(c.as_ptr(), libc::O_PATH | libc::O_CLOEXEC) };
    check_fd(fd as libc::c_long)
}

/// Whether the pinned socket may be connected to (see the module docs, step 3).
/// Why a pathname socket may be connected to ([`judge`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reach {
    /// Listed in `network.unix_sockets`: whoever listens on it.
    Listed,
    /// On a writable mount of the sandbox: only when a process of the sandbox listens
    /// ([`listener_outside`]).
    Writable,
}

fn judge(target: &OwnedFd, asked: &[u8], cfg: &GuardConfig) -> Result<Reach, i32> {
    let st = super::sys::fstat(target.as_raw_fd()).map_err(|_| libc::ENOENT)?;
    if st.st_mode & libc::S_IFMT != libc::S_IFSOCK {
        return Err(libc::ECONNREFUSED);
    }
    let _ = asked;
    let real = std::fs::read_link(format!("/proc/self/fd/{}", target.as_raw_fd())).ok();
    if real
        .as_ref()
        .is_some_and(|r| cfg.allowed.iter().any(|(a, _)| a == r))
    {
        return Ok(Reach::Listed);
    }
    // SAFETY: statvfs is plain old data; the kernel fills it.
    let mut vfs: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: `vfs` is a valid statvfs; the descriptor is open.
    if unsafe { libc::fstatvfs(target.as_raw_fd(), &mut vfs) } == 0
        && vfs.f_flag & libc::ST_RDONLY == 0
    {
        return Ok(Reach::Writable);
    }
    Err(libc::EACCES)
}

/// The connect of a socket on a writable mount ([`Reach::Writable`]): init connects a
/// socket of its own, of the caller's type and blocking mode, to `addr`; refuses
/// (`ECONNREFUSED`, the connection closed) when the listener is outside the sandbox
/// ([`listener_outside`]); otherwise installs it as the caller's descriptor `fd_num`
/// (`SECCOMP_IOCTL_NOTIF_ADDFD` with `SECCOMP_ADDFD_FLAG_SETFD`, keeping close-on-exec as
/// the caller had it) and answers 0. Options the caller set on its socket before the
/// connect are not carried over. Errors: the connect's errno, or the install's.
fn connect_judged(
    listener: &OwnedFd,
    n: &libc::seccomp_notif,
    sock: &OwnedFd,
    fd_num: i32,
    addr: &[u8],
) -> Result<i64, i32> {
    let mut ty: libc::c_int = 0;
    let mut l = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: `ty`/`l` are a valid int and its length for SO_TYPE.
    if unsafe {
        libc::getsockopt(
            sock.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_TYPE,
            &mut ty as *mut libc::c_int as *mut libc::c_void,
            &mut l,
        )
    } < 0
    {
        return Err(errno());
    }
    // SAFETY: fcntl on a descriptor we hold.
    let status = unsafe { libc::fcntl(sock.as_raw_fd(), libc::F_GETFL) };
    let nonblock = status >= 0 && status & libc::O_NONBLOCK != 0;
    let flags = ty | libc::SOCK_CLOEXEC | if nonblock { libc::SOCK_NONBLOCK } else { 0 };
    // SAFETY: socket takes plain integers; the result is checked.
    let mine = check_fd(unsafe { libc::socket(libc::AF_UNIX, flags, 0) } as libc::c_long)?;
    raw_connect(&mine, addr)?;
    if listener_outside(&mine) {
        return Err(libc::ECONNREFUSED);
    }
    let cloexec = std::fs::read_to_string(format!("/proc/{}/fdinfo/{fd_num}", n.pid))
        .ok()
        .and_then(|t| {
            t.lines()
                .find_map(|l| l.strip_prefix("flags:"))
                .and_then(|v| u32::from_str_radix(v.trim(), 8).ok())
        })
        .is_some_and(|f| f & libc::O_CLOEXEC as u32 != 0);
    notif_addfd(
        listener,
        libc::seccomp_notif_addfd {
            id: n.id,
            flags: libc::SECCOMP_ADDFD_FLAG_SETFD as u32,
            srcfd: mine.as_raw_fd() as u32,
            newfd: fd_num as u32,
            newfd_flags: if cloexec { libc::O_CLOEXEC as u32 } else { 0 },
        },
    )?;
    Ok(0)
}

/// Whether the process listening on the socket `sock` is connected to lives outside the
/// sandbox's pid namespace: `SO_PEERCRED` gives the listener's pid as init (pid 1 of that
/// namespace) sees it, 0 for a process outside. A socket on a writable mount is not the
/// command's just because it lies there: a host daemon started with its socket in the
/// workspace or `$TMPDIR` (an `ssh-agent -a $TMPDIR/agent.sock`, a dev tool's control
/// socket) answered the command (breaker, stop 19). Unknown (the call failed): outside.
fn listener_outside(sock: &OwnedFd) -> bool {
    // SAFETY: ucred is plain old data; the kernel fills it.
    let mut cred: libc::ucred = unsafe { std::mem::zeroed() };
    let mut l = std::mem::size_of::<libc::ucred>() as libc::socklen_t;
    // SAFETY: `cred`/`l` are a valid ucred and its length for SO_PEERCRED.
    let r = unsafe {
        libc::getsockopt(
            sock.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_PEERCRED,
            &mut cred as *mut libc::ucred as *mut libc::c_void,
            &mut l,
        )
    };
    r < 0 || cred.pid <= 0
}

fn refused(asked: &[u8], target: Option<&OwnedFd>) {
    let real = target
        .and_then(|t| std::fs::read_link(format!("/proc/self/fd/{}", t.as_raw_fd())).ok())
        .map(|p| format!(" ({})", p.display()))
        .unwrap_or_default();
    say(
        &socket_key(asked, target),
        format!(
            "cordon: refused connect to the host unix socket {}{real}: it is outside the \
             writable roots and not in network.unix_sockets",
            String::from_utf8_lossy(asked),
        ),
    );
}

/// Which socket a refusal is about, for [`say`]: the file the pinned descriptor `target`
/// reached (`socks/s0` and `socks/../socks/s0` are one socket: attack pass 167, finding 4),
/// else the address as asked.
fn socket_key(asked: &[u8], target: Option<&OwnedFd>) -> Vec<u8> {
    use std::os::unix::ffi::OsStrExt as _;
    target
        .and_then(|t| std::fs::read_link(format!("/proc/self/fd/{}", t.as_raw_fd())).ok())
        .map(|p| p.as_os_str().as_bytes().to_vec())
        .unwrap_or_else(|| asked.to_vec())
}

/// How many refusal lines a run's guard writes to the command's stderr at most.
const SAID_AT_MOST: usize = 8;

/// Writes one refusal `line` to stderr (the command's), once per socket `key` and at most
/// [`SAID_AT_MOST`] in all, then one line saying the rest are not shown: a command that
/// retries a refused socket in a loop (a client polling for its daemon) flooded its own
/// stderr with one line per try.
fn say(key: &[u8], line: String) {
    static SAID: std::sync::Mutex<Vec<Vec<u8>>> = std::sync::Mutex::new(Vec::new());
    let mut said = SAID.lock().unwrap_or_else(|e| e.into_inner());
    if said.len() > SAID_AT_MOST || said.iter().any(|k| k == key) {
        return;
    }
    if said.len() == SAID_AT_MOST {
        said.push(Vec::new());
        eprintln!("cordon: more unix-socket connects were refused; they are not shown");
        return;
    }
    said.push(key.to_vec());
    eprintln!("{line}");
}

/// The pinned descriptor of a listed socket whose path is the one asked (made absolute
/// against the caller's working directory, lexically).
fn pinned_for(tid: u32, asked: &[u8], cfg: &GuardConfig) -> Option<RawFd> {
    let p = Path::new(std::ffi::OsStr::from_bytes(asked));
    let abs = if p.is_absolute() {
        p.to_path_buf()
    } else {
        std::fs::read_link(format!("/proc/{tid}/cwd")).ok()?.join(p)
    };
    let abs = cordon_policy::paths::lexical_normalize(&abs, Path::new("/"));
    cfg.allowed
        .iter()
        .find(|(a, _)| *a == abs)
        .and_then(|(_, fd)| fd.as_ref().map(|f| f.as_raw_fd()))
}
