//! `cordon serve` (issue 12 item 2): a per-user launch server that starts the sandbox
//! helper by `fork` from a warm, single-threaded process instead of `execve` of the whole
//! cordon binary, so a command pays neither the second dynamic load and relocation nor the
//! helper's start-up.
//!
//! Protocol (JSON lines over a unix stream socket, one connection per command):
//!
//! ```text
//! client → server  {"args": ["__sandbox-helper", …], "cwd": "/w", "env": [["K","V"],…],
//!                   "fds": [0,1,2,5,7]}          + SCM_RIGHTS: one descriptor per "fds" entry
//! server → client  {"pid": 1234}                  (the handler: signal it as the helper;
//!                  or {"template": 1234}          when forked from a template)
//! server → client  {"status": 0}                  (raw wait status of the helper)
//! client closes the connection                    (the handler's pid stays valid until then)
//! ```
//!
//! Process tree per command:
//!
//! ```text
//! cordon serve ─ handler (one per connection, forked ahead of it: [`SpareHandler`];
//!                  │      forwards signals; dies when the client hangs up, or the server
//!                  │      dies: PR_SET_PDEATHSIG)
//!                  └─ helper (exactly `helper_main(args)` with the client's descriptors,
//!                       cwd and environment) ─ init (new user+mount+pid+ipc+net ns) ─ command
//! ```
//!
//! The server reads the request itself and, when the command fits, hands it to a prepared
//! template ([`super::template`], process tree there); otherwise:
//!
//! Every command still gets its own namespaces, mount plan, Landlock, seccomp and report:
//! the helper code is the cold path's, run from a fork. What differs from the cold path:
//! the command starts in the server's cgroup and with the server's resource limits (the
//! profile's own limits are applied as on the cold path).
//!
//! Who may connect: the socket is 0600 in a 0700 directory of the user's; the peer's uid
//! (`SO_PEERCRED`, its pid pinned by `SO_PEERPIDFD` on Linux ≥ 6.5) must be the server's;
//! and the peer must be no more confined than the
//! server (same user, mount, network and pid namespaces, no more seccomp filters, not
//! `no_new_privs` unless the server is): a sandboxed command must not reach an unconfined
//! launcher. A refused peer gets its connection closed and falls back to the cold path,
//! which nests inside its sandbox.
//!
//! Which server a client trusts ([`connect_trusted`]): the same checks the other way — a
//! private directory of ours reached without following symlinks, a socket we own, and a
//! server process of our uid in our namespaces and no more confined than the client, so a
//! same-uid listener planted by a sandboxed command is never sent a request.

use super::process;
use super::sys;
use serde::{Deserialize, Serialize};
use std::ffi::OsString;
use std::io::{self, BufRead, BufReader, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};

/// The environment variable naming the server socket to use instead of the default
/// ([`socket_path`]); `cordon serve --socket` and tests set it.
pub const SOCKET_ENV: &str = "CORDON_SERVE_SOCKET";

/// Largest request line (arguments and environment; the payload travels as a descriptor).
const REQUEST_LIMIT: usize = 4 * 1024 * 1024;
/// Most descriptors one request may pass.
const MAX_FDS: usize = 16;
/// Descriptor numbers a request may name (the helper's `fd:N` / `--report-fd N`).
pub(crate) const MAX_TARGET_FD: RawFd = 64;

/// One launch request (client → server).
#[derive(Debug, Serialize, Deserialize)]
struct Request {
    /// The helper's argv after the program name, starting with `__sandbox-helper`.
    args: Vec<String>,
    /// The helper's working directory.
    cwd: PathBuf,
    /// The helper's whole environment.
    env: Vec<(String, String)>,
    /// The descriptor number each passed descriptor gets in the helper, in order.
    fds: Vec<RawFd>,
    /// Template launches: the run's cgroup, made on the host by the server's handler, and
    /// the descriptor numbers of its join files (among `fds`,
    /// [`super::limits::Cgroup::join_files`]), through which init gets in before it starts
    /// anything.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    cgroup: Option<(super::limits::Cgroup, Vec<RawFd>)>,
}

/// A message from the server.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum Reply {
    /// The handler's pid: the process to signal (it forwards to the helper).
    Pid(i32),
    /// The helper's raw wait status.
    Status(i32),
    /// Like `Pid`, for a command forked from a prepared template ([`super::template`]).
    Template(i32),
    /// Only from a template's handler P to the server's handler: the command does not fit
    /// the template (why); nothing started, and the server's handler sends the client back
    /// to its cold path ([`relay_to_template`]). Never sent to a client.
    Unfit(String),
    /// To a client, with templates on, for a command no template can run (why): nothing
    /// started; the client takes its cold path, which is faster than this server's
    /// per-command helper (issue 12, measured: 1.06x idle, 1.29x under load slower than
    /// cold in a git repository, whose `.git/config` copy is per command).
    Cold(String),
}

/// The default socket: `$XDG_RUNTIME_DIR/cordon/serve.sock`, else
/// `/run/user/<uid>/cordon/serve.sock` when that runtime dir exists, else
/// `/tmp/cordon-<uid>/serve.sock` — the host's `/tmp` literally, never `$TMPDIR`: `:tmp`
/// can make `$TMPDIR` writable inside a sandbox, and a command there could then plant a
/// server of its own (breaker, stop 8), while the host's `/tmp` is always behind the
/// sandbox's private `/tmp`. [`SOCKET_ENV`] overrides it; a relative one is taken against
/// the current directory, by the server and its clients alike (new-user pass 152: `serve`
/// made it absolute and listened, `run` took it as it was and quietly ran cold).
pub fn socket_path() -> PathBuf {
    if let Some(p) = std::env::var_os(SOCKET_ENV).filter(|p| !p.is_empty()) {
        let p = PathBuf::from(p);
        return std::path::absolute(&p).unwrap_or(p);
    }
    // SAFETY: getuid has no preconditions.
    let uid = unsafe { libc::getuid() };
    let run = std::env::var_os("XDG_RUNTIME_DIR")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute() && p.is_dir())
        .or_else(|| Some(PathBuf::from(format!("/run/user/{uid}"))).filter(|p| p.is_dir()));
    match run {
        Some(r) => r.join("cordon").join("serve.sock"),
        None => PathBuf::from(format!("/tmp/cordon-{uid}")).join("serve.sock"),
    }
}

/// Creates (or checks) the socket's directory: a real directory (no symlink on its path),
/// owned by us, mode 0700. One that exists and is not is refused, naming the directory and
/// what it must be — never tightened: the parent of a socket path may be a shared
/// directory (`/tmp`, the home directory) whose mode is not cordon's to change (new-user
/// pass 150: a 0755 directory failed with EBADF, from `fchmod` on an `O_PATH` descriptor).
fn private_dir(dir: &Path) -> io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    match std::fs::DirBuilder::new().mode(0o700).create(dir) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(e),
    }
    let refuse = |why: String| {
        io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!(
                "{} {why}; the socket's directory must be a directory of yours with mode 0700 \
                 and no symlink on its path (cordon creates it so when it is missing)",
                dir.display()
            ),
        )
    };
    let fd = match sys::open_dir_nofollow(dir) {
        Ok(fd) => fd,
        Err(e) if matches!(e.raw_os_error(), Some(libc::ELOOP | libc::ENOTDIR)) => {
            let symlink = std::fs::symlink_metadata(dir).is_ok_and(|m| m.file_type().is_symlink());
            return Err(refuse(
                if symlink || e.raw_os_error() == Some(libc::ELOOP) {
                    "is, or is reached through, a symlink".into()
                } else {
                    "is not a directory".into()
                },
            ));
        }
        Err(e) => return Err(e),
    };
    let st = sys::fstat(fd.as_raw_fd())?;
    // SAFETY: getuid has no preconditions.
    if st.st_uid != unsafe { libc::getuid() } {
        return Err(refuse(format!("is owned by uid {}", st.st_uid)));
    }
    if st.st_mode & 0o077 != 0 {
        let mode = st.st_mode & 0o7777;
        // A shared directory (other-writable, sticky: `/tmp`) is not to be made private.
        let fix = if mode & 0o1002 != 0 {
            "a shared directory: choose a socket in a directory of its own".to_string()
        } else {
            format!(
                "`chmod 700 {}`, or choose a socket in a directory of its own",
                dir.display()
            )
        };
        return Err(refuse(format!("has mode {mode:o} ({fix})")));
    }
    Ok(())
}

/// Binds the server socket at `path` (mode 0600, in a private directory). A socket file
/// nobody answers on is replaced; a live server is an error (`AddrInUse`).
pub fn bind(path: &Path) -> io::Result<UnixListener> {
    let dir = path
        .parent()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "socket path has no parent"))?;
    private_dir(dir)?;
    if UnixStream::connect(path).is_ok() {
        return Err(io::Error::new(
            io::ErrorKind::AddrInUse,
            format!("a server already listens on {}", path.display()),
        ));
    }
    match std::fs::symlink_metadata(path) {
        Ok(m) if std::os::unix::fs::FileTypeExt::is_socket(&m.file_type()) => {
            std::fs::remove_file(path)?
        }
        Ok(_) => {
            return Err(io::Error::new(
                io::ErrorKind::AlreadyExists,
                format!("{} exists and is not a socket", path.display()),
            ))
        }
        Err(_) => {}
    }
    // The signals that end a server are held from here until its handler, which removes
    // the socket, is in place ([`remove_socket_when_ended`]): one that came between the
    // bind and the handler left the socket behind (seen under load in
    // `a_stopped_server_removes_its_socket`).
    ending_signals(libc::SIG_BLOCK);
    // SAFETY: umask only changes this process's file-creation mask; restored below.
    let old = unsafe { libc::umask(0o177) };
    let l = UnixListener::bind(path);
    // SAFETY: as above.
    unsafe { libc::umask(old) };
    if l.is_err() {
        ending_signals(libc::SIG_UNBLOCK);
    }
    l
}

/// Blocks (`SIG_BLOCK`) or unblocks (`SIG_UNBLOCK`) the signals that end a server
/// (SIGTERM, SIGINT, SIGHUP) in this thread.
fn ending_signals(how: libc::c_int) {
    // SAFETY: `set` is a valid sigset initialised by sigemptyset before use; a null old
    // set is allowed.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for sig in [libc::SIGTERM, libc::SIGINT, libc::SIGHUP] {
            libc::sigaddset(&mut set, sig);
        }
        libc::pthread_sigmask(how, &set, std::ptr::null_mut());
    }
}

/// Runs the server on `listener` until a signal ends it (SIGTERM, SIGINT or SIGHUP: the
/// socket file is removed first, [`remove_socket_when_ended`]).
/// With `templates`, eligible commands are forked from prepared templates
/// ([`super::template`]) and the others are sent back to the client's cold path
/// ([`Reply::Cold`]); without, a per-command helper is forked for every command.
/// Single-threaded on purpose: each connection is handled in a forked process, and a
/// fork of a single-threaded process is safe to run any code in.
///
/// Errors: `accept` failed for another reason than an interruption.
pub fn serve(listener: UnixListener, templates_on: bool) -> io::Result<()> {
    // Its commands are not in their callers' process groups (process::supervise_command).
    process::deliver_interrupts_to_all();
    remove_socket_when_ended(&listener);
    // Handlers and templates are reaped by the kernel.
    // SAFETY: setting a disposition to SIG_IGN is always valid.
    unsafe { libc::signal(libc::SIGCHLD, libc::SIG_IGN) };
    let me = Confinement::of("self").unwrap_or_default();
    let mut templates = super::template::Templates::new();
    // Why a command did not use a template, on the server's stderr.
    let verbose = std::env::var_os("CORDON_SERVE_VERBOSE").is_some_and(|v| v == "1");
    // Admitted connections whose request has not all come yet, read as it comes, so a
    // client that sends half a request and stalls holds up nobody else (attack pass 160,
    // F2: each stalled connection held every launch for the 2 s read timeout).
    let mut pending: Vec<Pending> = Vec::new();
    // One read buffer for every request (not 64 KiB zeroed per read on the launch path).
    let mut buf = vec![0u8; 64 * 1024];
    // The next request's handler, forked ahead ([`SpareHandler`]), and the handlers
    // started since it was last forked (pidfds, readable once exited) with the time of
    // the first: the next spare is forked once they have all ended, or after
    // [`SPARE_AFTER`].
    let mut spare: Option<SpareHandler> = None;
    let mut launched: Vec<OwnedFd> = Vec::new();
    let mut launched_since = std::time::Instant::now();
    // The limits of the last command routed to a template: the spare handler makes a
    // cgroup with them ahead ([`SpareHandler`]).
    let mut last_limits: Option<cordon_policy::limits::ResolvedLimits> = None;
    loop {
        templates.expire();
        let now = std::time::Instant::now();
        if spare.is_none()
            && (launched.is_empty() || now.duration_since(launched_since) >= SPARE_AFTER)
        {
            launched.clear();
            spare = SpareHandler::fork(last_limits);
        }
        pending.retain(|p| {
            let alive = p.deadline > now;
            if !alive {
                eprintln!("cordon serve: a client sent no whole request in time; dropped");
            }
            alive
        });
        let spare_wait = (spare.is_none() && !launched.is_empty()).then(|| {
            (launched_since + SPARE_AFTER)
                .saturating_duration_since(now)
                .as_millis() as i32
                + 1
        });
        let wait_ms = pending
            .iter()
            .map(|p| p.deadline.saturating_duration_since(now).as_millis() as i32 + 1)
            .chain(spare_wait)
            .min()
            .unwrap_or(30_000);
        let mut pfd: Vec<libc::pollfd> = std::iter::once(listener.as_raw_fd())
            .chain(pending.iter().map(|p| p.conn.as_raw_fd()))
            .chain(launched.iter().map(|h| h.as_raw_fd()))
            .map(|fd| libc::pollfd {
                fd,
                events: libc::POLLIN,
                revents: 0,
            })
            .collect();
        // SAFETY: `pfd` is a valid array of `pfd.len()` pollfd.
        if unsafe { libc::poll(pfd.as_mut_ptr(), pfd.len() as libc::nfds_t, wait_ms) } <= 0 {
            continue; // idle (templates expire above), a deadline, or EINTR
        }
        // Handlers that have exited.
        let exited: Vec<bool> = pfd[1 + pending.len()..]
            .iter()
            .map(|p| p.revents != 0)
            .collect();
        let mut i = 0;
        launched.retain(|_| {
            i += 1;
            !exited[i - 1]
        });
        // The requests that are now whole, in the order their connections came.
        let mut ready = Vec::new();
        for (p, pfd) in std::mem::take(&mut pending).into_iter().zip(&pfd[1..]) {
            if pfd.revents == 0 {
                pending.push(p);
                continue;
            }
            match p.read_more(&mut buf) {
                Ok(Read::More(p)) => pending.push(p),
                Ok(Read::Whole(conn, req, fds)) => ready.push((conn, req, fds)),
                // A liveness probe (connect and close): nothing to do.
                Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => {}
                Err(e) => eprintln!("cordon serve: {e}"),
            }
        }
        if pfd[0].revents != 0 {
            accept_pending(&listener, &me, &mut pending)?;
        }
        for (conn, req, fds) in ready {
            let handler = launch_request(
                conn,
                req,
                fds,
                &mut templates,
                (templates_on, verbose),
                &mut spare,
                &mut last_limits,
            );
            if let Some(h) = handler {
                if launched.is_empty() {
                    launched_since = std::time::Instant::now();
                }
                launched.push(h);
            }
        }
    }
}

/// How long the server lets the handlers it started be before it forks the next spare
/// handler anyway ([`SpareHandler`]): a command still running then is past its start.
const SPARE_AFTER: std::time::Duration = std::time::Duration::from_millis(50);

/// The next request's handler H, forked by the server ahead of the request (once the
/// handlers it started before have ended, or after [`SPARE_AFTER`]), so that the fork of
/// H and its first scheduling are not on the launch path (issue 12: the fork was
/// ~0.3 ms, and a new process on a busy machine waits for a CPU). It holds nothing of
/// the server's (every descriptor but its socket is closed at once) and waits for one
/// [`Job`] on its socket: the request, its descriptors and its route, exactly what a
/// handler forked for the request would have had, and then runs what that handler would
/// ([`run_handler`]). Its socket's end (the server gone) ends it with nothing run.
/// Without one (its fork failed, or a second request came first) the server forks a
/// handler per request as before.
///
/// It also makes the run's cgroup ahead, with the limits of the last command the server
/// routed to a template (issue 12: making it was ~0.2 ms of H's path, bpftrace): a new,
/// empty cgroup named after H, as H makes at the request; a request with other limits
/// (or none for a template) has it removed and gets its own made then, as before.
struct SpareHandler {
    /// The server's end of the socket the job is sent on.
    sock: UnixStream,
    /// H's pidfd (none before Linux 5.3).
    pidfd: Option<OwnedFd>,
}

/// What the server hands its spare handler with one request ([`SpareHandler`]); the
/// descriptors come with it, in order: the client's connection, the request's, then the
/// running token and the connection to P when `template` says they come.
#[derive(Serialize, Deserialize)]
struct Job {
    req: Request,
    /// `None`: the per-command helper. Else the command's limits, whether its running
    /// token comes, and the connection to P (or why there is none).
    template: Option<(
        cordon_policy::limits::ResolvedLimits,
        bool,
        Result<(), String>,
    )>,
    verbose: bool,
}

impl SpareHandler {
    /// In the server (single-threaded): forks the spare handler, which makes a cgroup
    /// with `limits` ahead; `None` when the fork failed.
    fn fork(limits: Option<cordon_policy::limits::ResolvedLimits>) -> Option<SpareHandler> {
        let (ours, theirs) = UnixStream::pair().ok()?;
        // SAFETY: the server is single-threaded.
        match unsafe { libc::fork() } {
            0 => {
                // Nothing of the server's: not the listener, the templates' sockets, nor
                // any client's connection. (The objects owning them are never dropped
                // here: the handler ends by `exit_now`.)
                close_all_but(&[0, 1, 2, theirs.as_raw_fd()]);
                let code = match spare_handler_main(theirs, limits) {
                    Ok(()) => 0,
                    Err(e) => {
                        eprintln!("cordon serve: {e}");
                        1
                    }
                };
                process::exit_now(code);
            }
            -1 => None,
            pid => {
                drop(theirs);
                Some(SpareHandler {
                    sock: ours,
                    pidfd: sys::pidfd_open(pid).ok(),
                })
            }
        }
    }

    /// Hands the request to the spare handler; its pidfd (to know when it ended). Nothing
    /// of the caller's is taken on failure (the descriptors are sent, not moved).
    /// A job the spare cannot read whole (more descriptors than one message of its reader
    /// takes, [`MAX_FDS`], or a line past [`REQUEST_LIMIT`]: review, a request with 15–16
    /// descriptors got no reply) is refused with `InvalidInput` before anything is sent,
    /// and the spare stays.
    fn take(&self, job: &Job, fds: &[RawFd]) -> io::Result<()> {
        let mut line = serde_json::to_vec(job).map_err(io::Error::other)?;
        line.push(b'\n');
        if fds.len() > MAX_FDS || line.len() > REQUEST_LIMIT {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "a job too large for the spare handler",
            ));
        }
        send_with_fds(&self.sock, &line, fds)
    }
}

/// The spare handler ([`SpareHandler`]): dies with the server, makes a cgroup with
/// `limits` ahead, waits for its job and runs it as a handler forked for it would.
fn spare_handler_main(
    sock: UnixStream,
    limits: Option<cordon_policy::limits::ResolvedLimits>,
) -> io::Result<()> {
    sys::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong)?;
    // Removed on every way out that does not hand it to the command.
    let premade = PremadeGuard(limits.map(|l| {
        let cg = super::limits::Cgroup::create_for_others(&l, super::limits::Sweep::Later);
        (l, cg)
    }));
    let mut line = Vec::new();
    let mut fds = Vec::new();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        match read_some(&sock, &mut buf, &mut line, &mut fds) {
            Ok(true) => break,
            Ok(false) => continue,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            // The server is gone (or ended this spare): nothing to run.
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(()),
            Err(e) => return Err(e),
        }
    }
    drop(sock);
    let job: Job = serde_json::from_slice(&line).map_err(io::Error::other)?;
    let extra = match &job.template {
        Some((_, running, to_p)) => usize::from(*running) + usize::from(to_p.is_ok()),
        None => 0,
    };
    if fds.len() != 1 + job.req.fds.len() + extra {
        return Err(io::Error::other("a job's descriptors do not match it"));
    }
    // The cgroup made ahead serves a command with exactly its limits; otherwise it goes.
    // What the cgroup enforces is the pids and memory limits only (a command that differs
    // in its timeout or open files gets the same cgroup).
    let premade = match (&job.template, premade.into_inner()) {
        (Some((limits, _, _)), Some((l, cg)))
            if (l.pids, l.memory_bytes) == (limits.pids, limits.memory_bytes) =>
        {
            Some((l, cg))
        }
        (_, other) => {
            drop(PremadeGuard(other));
            None
        }
    };
    let mut fds = fds.into_iter();
    let conn = UnixStream::from(fds.next().expect("counted above"));
    let req_fds: Vec<OwnedFd> = fds.by_ref().take(job.req.fds.len()).collect();
    let route = match job.template {
        Some((limits, running, to_p)) => {
            let running = if running { fds.next() } else { None };
            let to_p = match to_p {
                Ok(()) => Ok(UnixStream::from(fds.next().expect("counted above"))),
                Err(why) => Err(io::Error::other(why)),
            };
            Some((limits, running, to_p))
        }
        None => None,
    };
    run_handler(conn, job.req, req_fds, route, premade, job.verbose)
}

/// A cgroup made ahead by a spare handler, with the limits it was made for (`None`: the
/// host gave none, as [`super::limits::Cgroup::create_for_others`] says).
/// A spare handler's cgroup made ahead, removed when dropped unless
/// [`PremadeGuard::into_inner`] handed it on.
struct PremadeGuard(Option<Premade>);

impl PremadeGuard {
    fn into_inner(mut self) -> Option<Premade> {
        self.0.take()
    }
}

impl Drop for PremadeGuard {
    fn drop(&mut self) {
        if let Some((_, Some(c))) = self.0.take() {
            c.remove();
        }
    }
}

type Premade = (
    cordon_policy::limits::ResolvedLimits,
    Option<super::limits::Cgroup>,
);

/// What a handler H runs for one request, forked for it or spare ([`SpareHandler`]):
/// the relay to a template's P when the request was routed to one (`route`: its limits,
/// its running token, held until the command is done, and the connection to P; `premade`:
/// a cgroup with those limits made ahead), else the per-command helper.
fn run_handler(
    conn: UnixStream,
    req: Request,
    fds: Vec<OwnedFd>,
    route: Option<Routed>,
    premade: Option<Premade>,
    verbose: bool,
) -> io::Result<()> {
    match route {
        // `_running` is held until the command is done (the template's running token:
        // [`super::template::Templates::route`]).
        Some((limits, _running, to_p)) => {
            relay_to_template(conn, req, fds, to_p, &limits, premade, verbose)
        }
        None => handle_request(conn, req, fds),
    }
}

/// A request routed to a template, as its handler gets it: the command's limits, its
/// running token, and the connection to P ([`connect_template`]).
type Routed = (
    cordon_policy::limits::ResolvedLimits,
    Option<OwnedFd>,
    io::Result<UnixStream>,
);

/// Most admitted connections waiting for the rest of their request at once.
const MAX_PENDING: usize = 64;
/// How long an admitted client has to send its whole request (a client sends it at once).
const REQUEST_WAIT: std::time::Duration = std::time::Duration::from_secs(2);

/// An admitted connection whose request line is still coming ([`serve`]).
struct Pending {
    conn: UnixStream,
    line: Vec<u8>,
    fds: Vec<OwnedFd>,
    deadline: std::time::Instant,
}

/// What [`Pending::read_more`] read: not the whole request yet, or the whole of it with
/// its connection (blocking again) and descriptors.
enum Read {
    More(Pending),
    Whole(UnixStream, Request, Vec<OwnedFd>),
}

impl Pending {
    fn new(conn: UnixStream) -> io::Result<Pending> {
        conn.set_nonblocking(true)?;
        Ok(Pending {
            conn,
            line: Vec::new(),
            fds: Vec::new(),
            deadline: std::time::Instant::now() + REQUEST_WAIT,
        })
    }

    /// Reads what has come, into `buf` first.
    ///
    /// Errors: the client hung up (`UnexpectedEof`), sent too much, or a request that
    /// does not parse or names other descriptors than it passed ([`finish_request`]).
    fn read_more(mut self, buf: &mut [u8]) -> io::Result<Read> {
        loop {
            match read_some(&self.conn, buf, &mut self.line, &mut self.fds) {
                Ok(true) => break,
                Ok(false) => continue,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(Read::More(self)),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
        }
        let (req, fds) = finish_request(self.line, self.fds)?;
        check_targets(&req)?;
        self.conn.set_nonblocking(false)?;
        Ok(Read::Whole(self.conn, req, fds))
    }
}

/// Accepts one connection and, when its peer is admitted ([`admit`]), adds it to
/// `pending` (the oldest dropped beyond [`MAX_PENDING`]).
///
/// Errors: `accept` failed for another reason than an interruption or an aborted
/// connection.
fn accept_pending(
    listener: &UnixListener,
    me: &Confinement,
    pending: &mut Vec<Pending>,
) -> io::Result<()> {
    let conn = match listener.accept() {
        Ok((c, _)) => c,
        Err(e) if e.kind() == io::ErrorKind::Interrupted => return Ok(()),
        Err(e) if e.raw_os_error() == Some(libc::ECONNABORTED) => return Ok(()),
        Err(e) => return Err(e),
    };
    if let Err(why) = admit(&conn, me) {
        // A client gone before it could be checked (its /proc entry with it: another
        // `cordon serve` making sure none listens, a client killed at once) is nothing to
        // report (new-user pass 176, #4: "refused a client: peer: No such file or
        // directory" read as a fault).
        if !sys::socket_hung_up(conn.as_raw_fd()) {
            eprintln!("cordon serve: refused a client: {why}");
        }
        return Ok(());
    }
    if pending.len() >= MAX_PENDING {
        // The oldest has had the longest to send its request.
        pending.remove(0);
        eprintln!("cordon serve: too many unfinished requests; dropped the oldest");
    }
    match Pending::new(conn) {
        Ok(p) => pending.push(p),
        Err(e) => eprintln!("cordon serve: {e}"),
    }
    Ok(())
}

/// One whole request from an admitted client: routed to a template or the per-command
/// helper, and handled in a forked process ([`serve`]).
///
/// Returns the pidfd of the handler it started, if any (and one could be opened).
fn launch_request(
    conn: UnixStream,
    req: Request,
    fds: Vec<OwnedFd>,
    templates: &mut super::template::Templates,
    (templates_on, verbose): (bool, bool),
    spare: &mut Option<SpareHandler>,
    last_limits: &mut Option<cordon_policy::limits::ResolvedLimits>,
) -> Option<OwnedFd> {
    // A client that hung up before its request was taken (killed while this server was
    // stopped, or by its caller's `timeout`: attack pass 167, finding 5) gets no handler:
    // the request and its descriptors (the client's stdio, which its caller may be
    // waiting on) are dropped now. (A handler would fail at its first reply, before the
    // command starts, but only after a fork and a route.)
    if sys::socket_hung_up(conn.as_raw_fd()) {
        if verbose {
            eprintln!("cordon serve: a client hung up before its command started; not run");
        }
        return None;
    }
    let route = if templates_on {
        route(templates, &req, &fds)
    } else {
        Err("templates are off (--no-templates)".to_string())
    };
    if let (true, Err(why)) = (templates_on, &route) {
        // No template for it: back to the client's cold path, before anything is forked.
        if verbose {
            eprintln!("cordon serve: sent back to the cold path: {why}");
        }
        let _ = reply(&conn, &Reply::Cold(why.clone()));
        return None;
    }
    if let (Err(why), true) = (&route, verbose) {
        eprintln!("cordon serve: per-command helper: {why}");
    }
    // The template's per-command handler P is asked for before this process forks its
    // own handler H, so that the template starts P while H is forked and makes the run's
    // cgroup (issue 12: T's fork of P was ~0.5 ms after H's fork and cgroup, measured
    // with bpftrace). Only H ever holds the connection's other end; a failure here is
    // H's, as before (the client is sent back to its cold path).
    let route: Option<Routed> = route.ok().map(|r| {
        *last_limits = Some(r.limits);
        let to_p = connect_template(&r.ctl);
        drop(r.ctl);
        (r.limits, r.running, to_p)
    });
    // The spare handler, when there is one, takes the request with everything a handler
    // forked now would have had.
    if let Some(h) = spare.take() {
        let mut raw = vec![conn.as_raw_fd()];
        raw.extend(fds.iter().map(AsRawFd::as_raw_fd));
        let template = route.as_ref().map(|(limits, running, to_p)| {
            raw.extend(running.as_ref().map(AsRawFd::as_raw_fd));
            raw.extend(to_p.as_ref().map(AsRawFd::as_raw_fd));
            let to_p = match to_p {
                Ok(_) => Ok(()),
                Err(e) => Err(e.to_string()),
            };
            (*limits, running.is_some(), to_p)
        });
        let job = Job {
            req,
            template,
            verbose,
        };
        match h.take(&job, &raw) {
            // The server's copies of the descriptors are dropped on return.
            Ok(()) => return h.pidfd,
            // Too large for it: the spare stays for the next request.
            Err(e) if e.kind() == io::ErrorKind::InvalidInput => {
                *spare = Some(h);
                return fork_handler(conn, job.req, fds, route, verbose);
            }
            Err(e) => {
                // It is gone: a handler is forked for the request, as without one.
                if verbose {
                    eprintln!("cordon serve: the spare handler did not take a request: {e}");
                }
                return fork_handler(conn, job.req, fds, route, verbose);
            }
        }
    }
    fork_handler(conn, req, fds, route, verbose)
    // (The server's copy of the connection to P, if any, is dropped here: H holds it.)
}

/// Forks a handler H for one request ([`run_handler`]); its pidfd, if one could be
/// opened.
fn fork_handler(
    conn: UnixStream,
    req: Request,
    fds: Vec<OwnedFd>,
    route: Option<Routed>,
    verbose: bool,
) -> Option<OwnedFd> {
    // SAFETY: this process is single-threaded (see above).
    match unsafe { libc::fork() } {
        0 => {
            // Only this request's descriptors stay open in its handler: not the
            // listener, the templates' sockets, nor another client's connection or
            // descriptors (still coming, or ready after this one), which would stay
            // open as long as this command runs. The objects owning the closed ones
            // are never dropped here (the handler ends by `exit_now`).
            let mut keep = vec![0, 1, 2, conn.as_raw_fd()];
            keep.extend(fds.iter().map(AsRawFd::as_raw_fd));
            if let Some((_, running, to_p)) = &route {
                keep.extend(running.as_ref().map(AsRawFd::as_raw_fd));
                keep.extend(to_p.as_ref().map(AsRawFd::as_raw_fd));
            }
            close_all_but(&keep);
            let code = match run_handler(conn, req, fds, route, None, verbose) {
                Ok(()) => 0,
                Err(e) => {
                    eprintln!("cordon serve: {e}");
                    1
                }
            };
            process::exit_now(code);
        }
        -1 => {
            eprintln!("cordon serve: fork: {}", io::Error::last_os_error());
            None
        }
        pid => {
            drop(conn);
            sys::pidfd_open(pid).ok()
        }
    }
}

/// A new connection to a template's per-command handler P: one end is sent on `ctl` (a
/// duplicate of the template's control socket), without waiting — a template that is
/// not reading (its socket full) fails this, and its command is sent back to the cold
/// path by H, as when the template is gone.
fn connect_template(ctl: &OwnedFd) -> io::Result<UnixStream> {
    let (h, w) = UnixStream::pair()?;
    super::template::send_fd_with(ctl, w.as_raw_fd(), nix::sys::socket::MsgFlags::MSG_DONTWAIT)?;
    Ok(h)
}

/// What the server's ending signal handler removes: the socket path (NUL-terminated),
/// the device and inode it had when bound, and the server's pid.
struct SocketFile {
    path: std::ffi::CString,
    dev: libc::dev_t,
    ino: libc::ino_t,
    pid: libc::pid_t,
}

static SOCKET_FILE: std::sync::OnceLock<SocketFile> = std::sync::OnceLock::new();

/// On SIGTERM, SIGINT or SIGHUP the server removes its socket file — only while the path
/// still names the socket it bound (a newer server's is left alone) — and then ends by
/// the signal as before (new-user pass nu58 #13: a stopped server left `serve.sock`
/// behind). The handler is `SA_RESETHAND` and acts only in the server's own process: a
/// forked handler or template that gets the signal ends by it as with the default
/// disposition, and `execve` resets it for every command.
fn remove_socket_when_ended(listener: &UnixListener) {
    install_socket_removal(listener);
    // Held since the bind ([`bind`]): one that came in between is delivered now.
    ending_signals(libc::SIG_UNBLOCK);
}

/// [`remove_socket_when_ended`]'s handler, installed.
fn install_socket_removal(listener: &UnixListener) {
    let Some(path) = listener
        .local_addr()
        .ok()
        .and_then(|a| a.as_pathname().map(Path::to_path_buf))
    else {
        return;
    };
    let Ok(meta) = std::fs::symlink_metadata(&path) else {
        return;
    };
    let Ok(c) = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()) else {
        return;
    };
    use std::os::unix::fs::MetadataExt;
    let _ = SOCKET_FILE.set(SocketFile {
        path: c,
        dev: meta.dev() as libc::dev_t,
        ino: meta.ino() as libc::ino_t,
        // SAFETY: getpid has no preconditions.
        pid: unsafe { libc::getpid() },
    });
    extern "C" fn ended(sig: libc::c_int) {
        if let Some(f) = SOCKET_FILE.get() {
            // SAFETY: getpid, lstat, unlink and raise are async-signal-safe; `st` is a
            // valid out-parameter and `f.path` a NUL-terminated string that lives for the
            // process (a static set before the handler was installed).
            unsafe {
                if libc::getpid() == f.pid {
                    let mut st: libc::stat = std::mem::zeroed();
                    if libc::lstat(f.path.as_ptr(), &mut st) == 0
                        && st.st_dev == f.dev
                        && st.st_ino == f.ino
                    {
                        libc::unlink(f.path.as_ptr());
                    }
                }
                // SA_RESETHAND restored the default disposition: end by the signal.
                libc::raise(sig);
            }
        }
    }
    for sig in [libc::SIGTERM, libc::SIGINT, libc::SIGHUP] {
        // SAFETY: a zeroed sigaction with a valid handler and an empty mask is a valid
        // argument; the handler only makes async-signal-safe calls.
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = ended as extern "C" fn(libc::c_int) as libc::sighandler_t;
            sa.sa_flags = libc::SA_RESETHAND;
            libc::sigemptyset(&mut sa.sa_mask);
            libc::sigaction(sig, &sa, std::ptr::null_mut());
        }
    }
}

/// The template for a request ([`super::template::Templates::route`]), when its payload
/// comes on a descriptor; `Err`: the per-command helper.
fn route(
    templates: &mut super::template::Templates,
    req: &Request,
    fds: &[OwnedFd],
) -> Result<super::template::Routed, String> {
    // Layers the caller disabled through the helper's environment: the template was built
    // with every layer, so what it applied would not be what was planned.
    if req
        .env
        .iter()
        .any(|(k, v)| k == super::features::DISABLE_LAYERS_ENV && !v.is_empty())
    {
        return Err(format!(
            "the caller disabled layers ({})",
            super::features::DISABLE_LAYERS_ENV
        ));
    }
    let payload = payload_fd(req, fds)?;
    let at = |t: RawFd| {
        req.fds
            .iter()
            .position(|x| *x == t)
            .map(|i| fds[i].as_raw_fd())
    };
    let stdio: Vec<RawFd> = (0..3).filter_map(at).collect();
    templates.route(payload, &stdio)
}

/// The passed descriptor the request's helper reads its payload from
/// (`--permission-profile fd:N`); `Err` when it has none.
fn payload_fd<'a>(req: &Request, fds: &'a [OwnedFd]) -> Result<&'a OwnedFd, String> {
    let target = req
        .args
        .iter()
        .skip_while(|a| *a != "--permission-profile")
        .nth(1)
        .and_then(|v| v.strip_prefix(super::PAYLOAD_FROM_FD_PREFIX))
        .and_then(|n| n.parse::<RawFd>().ok())
        .ok_or("the payload is not on a descriptor")?;
    req.fds
        .iter()
        .position(|x| *x == target)
        .and_then(|i| fds.get(i))
        .ok_or_else(|| "the payload descriptor was not passed".to_string())
}

/// What a process's confinement looks like from outside, for [`admit`].
#[derive(Debug, Default, PartialEq, Eq)]
struct Confinement {
    /// Inodes of `/proc/<pid>/ns/{user,mnt,net,pid}`.
    namespaces: [u64; 4],
    /// `Seccomp_filters:` (or `Seccomp:` mode when the kernel has no filter count).
    seccomp: u64,
    /// `NoNewPrivs:`.
    no_new_privs: u64,
}

impl Confinement {
    fn of(pid: &str) -> io::Result<Confinement> {
        use std::os::unix::fs::MetadataExt;
        let mut c = Confinement::default();
        for (i, ns) in ["user", "mnt", "net", "pid"].iter().enumerate() {
            c.namespaces[i] = std::fs::metadata(format!("/proc/{pid}/ns/{ns}"))?.ino();
        }
        let status = std::fs::read_to_string(format!("/proc/{pid}/status"))?;
        let field = |name: &str| -> Option<u64> {
            status
                .lines()
                .find_map(|l| l.strip_prefix(name))
                .and_then(|v| v.trim().parse().ok())
        };
        // The filter count (Linux ≥ 5.9). Without it, `Seccomp:` is only the mode: a
        // filtered process's count is unknown (u64::MAX), which `admit` refuses.
        c.seccomp = match field("Seccomp_filters:") {
            Some(n) => n,
            None => match field("Seccomp:") {
                Some(0) => 0,
                _ => u64::MAX,
            },
        };
        c.no_new_privs = field("NoNewPrivs:").unwrap_or(1);
        Ok(c)
    }
}

/// The process at the other end of a unix stream socket, pinned: its pid as this process
/// sees it (`SO_PEERCRED`, taken at `connect`/`listen`) and, on Linux ≥ 6.5, a pidfd
/// (`SO_PEERPIDFD`) that proves the pid still names that process after its `/proc` files
/// are read (without it a peer that exits could have its pid reused by another process
/// between the accept and the check: the fallback of older kernels).
struct Peer {
    pid: libc::pid_t,
    uid: libc::uid_t,
    pidfd: Option<OwnedFd>,
}

impl Peer {
    /// The peer of `conn`. Errors: `SO_PEERCRED` failed.
    fn of(conn: &UnixStream) -> io::Result<Peer> {
        use nix::sys::socket::{getsockopt, sockopt::PeerCredentials, sockopt::PeerPidfd};
        let cred = getsockopt(conn, PeerCredentials).map_err(io::Error::from)?;
        // ENOPROTOOPT before 6.5: the pid alone (the check has a pid-reuse window there).
        let pidfd = getsockopt(conn, PeerPidfd).ok();
        Ok(Peer {
            pid: cred.pid(),
            uid: cred.uid(),
            pidfd,
        })
    }

    /// The peer's confinement, read from `/proc/<pid>`, then checked to still be the
    /// peer's: the pidfd has not signalled an exit, so the pid was not reused meanwhile.
    ///
    /// Errors: the pid is not visible here (0: the peer is in a pid namespace outside
    /// ours), `/proc` unreadable, or the peer exited during the check.
    fn confinement(&self) -> io::Result<Confinement> {
        if self.pid <= 0 {
            return Err(io::Error::other(
                "its pid is not visible here (another pid namespace)",
            ));
        }
        let c = Confinement::of(&self.pid.to_string())?;
        if let Some(fd) = &self.pidfd {
            let mut pfd = [libc::pollfd {
                fd: fd.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            }];
            // SAFETY: `pfd` is a valid array of one pollfd; timeout 0 does not block.
            let r = unsafe { libc::poll(pfd.as_mut_ptr(), 1, 0) };
            if r != 0 {
                return Err(io::Error::other(format!(
                    "pid {} exited while it was checked",
                    self.pid
                )));
            }
        }
        Ok(c)
    }
}

/// Why `peer` is not as free as `me`: in other namespaces, under more seccomp filters, or
/// `no_new_privs` where `me` is not — the marks of a sandbox. Used both ways: the server
/// admits no client more confined than itself, and a client trusts no server more
/// confined than itself (a listener planted by a sandboxed command).
fn more_confined(peer: &Confinement, me: &Confinement, pid: libc::pid_t) -> Option<String> {
    if peer.namespaces != me.namespaces {
        return Some(format!("pid {pid} is in other namespaces (a sandbox?)"));
    }
    if peer.seccomp == u64::MAX || peer.seccomp > me.seccomp || peer.no_new_privs > me.no_new_privs
    {
        return Some(format!(
            "pid {pid} is confined (seccomp or no_new_privs: a sandbox?)"
        ));
    }
    None
}

/// Whether the peer of `conn` may launch through this server: same uid, and no more
/// confined than the server (a sandboxed command must not escape through it).
fn admit(conn: &UnixStream, me: &Confinement) -> Result<(), String> {
    let peer = Peer::of(conn).map_err(|e| format!("SO_PEERCRED: {e}"))?;
    // SAFETY: getuid has no preconditions.
    if peer.uid != unsafe { libc::getuid() } {
        return Err(format!("uid {} is not the server's", peer.uid));
    }
    let c = peer.confinement().map_err(|e| format!("peer: {e}"))?;
    match more_confined(&c, me, peer.pid) {
        Some(why) => Err(why),
        None => Ok(()),
    }
}

/// Reads one request line and the descriptors sent with it (blocking).
fn read_request(conn: &UnixStream) -> io::Result<(Request, Vec<OwnedFd>)> {
    let mut line = Vec::new();
    let mut fds = Vec::new();
    let mut buf = vec![0u8; 64 * 1024];
    while !read_some(conn, &mut buf, &mut line, &mut fds)? {}
    finish_request(line, fds)
}

/// One `recvmsg` of a request: appends to `line` and `fds`; whether the line is whole.
///
/// Errors: the client hung up (`UnexpectedEof`), the line passed [`REQUEST_LIMIT`] or the
/// descriptors [`MAX_TARGET_FD`] (`EFBIG`), or the read failed (`WouldBlock` on a
/// non-blocking connection with nothing to read).
fn read_some(
    conn: &UnixStream,
    buf: &mut [u8],
    line: &mut Vec<u8>,
    fds: &mut Vec<OwnedFd>,
) -> io::Result<bool> {
    let (n, got) = super::sys::recv_with_fds::<MAX_FDS>(conn.as_raw_fd(), buf)?;
    fds.extend(got);
    if n == 0 {
        return Err(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            "client hung up",
        ));
    }
    line.extend_from_slice(&buf[..n]);
    if line.len() > REQUEST_LIMIT || fds.len() > MAX_TARGET_FD as usize {
        return Err(io::Error::from_raw_os_error(libc::EFBIG));
    }
    Ok(line.ends_with(b"\n"))
}

/// The request a whole line says, with the descriptors that came with it.
///
/// Errors: the line does not parse, or names another number of descriptors than came.
fn finish_request(line: Vec<u8>, fds: Vec<OwnedFd>) -> io::Result<(Request, Vec<OwnedFd>)> {
    let req: Request = serde_json::from_slice(&line).map_err(io::Error::other)?;
    if req.fds.len() != fds.len() {
        return Err(io::Error::other(format!(
            "{} descriptors named, {} passed",
            req.fds.len(),
            fds.len()
        )));
    }
    Ok((req, fds))
}

fn reply(conn: &UnixStream, r: &Reply) -> io::Result<()> {
    let mut line = serde_json::to_vec(r).map_err(io::Error::other)?;
    line.push(b'\n');
    (&*conn).write_all(&line)
}

/// How a handler starts the helper.
#[derive(Clone, Copy)]
enum Launcher<'a> {
    /// Forked from the server: `helper_main`, namespaces made per command.
    Fork,
    /// Forked from a template ([`super::template`]): `helper::main_prepared`.
    Template(&'a super::template::Prepared),
}

/// In a template (process P): one connection relayed by the server's handler, one helper
/// forked from the template. Like [`handle_request`], except that the first reply carries
/// a pidfd of P (its pid means nothing outside the template's pid namespace), and that a
/// command that does not fit the template ([`super::template::Prepared::accept`]) is
/// answered [`Reply::Unfit`] before anything starts: the server's handler then runs it on
/// the per-command helper.
pub(crate) fn handle_prepared(
    conn: UnixStream,
    prepared: &super::template::Prepared,
) -> io::Result<()> {
    let (req, fds) = match read_request(&conn) {
        Ok(r) => r,
        Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(()),
        Err(e) => return Err(e),
    };
    check_targets(&req)?;
    if let Err(why) = payload_fd(&req, &fds).and_then(|p| prepared.accept(p)) {
        return reply(&conn, &Reply::Unfit(why));
    }
    become_template_helper(conn, req, fds, prepared)
}

/// The rest of a template's handler P once the command fits: P answers with its pid and
/// its pidfd (the server's handler signals P through it), then becomes the helper itself
/// — no helper process is forked beneath it, one fork and one exit fewer per command
/// (issue 12) — and, as its last act, sends the helper's status (the raw wait status of an
/// exit with its code) on the connection, through a copy above every target number that
/// is close-on-exec (the command never holds it). Returns only when the first reply cannot
/// be sent (nothing started). P killed before it sends the status: the server's handler
/// reads the connection's end as the run killed.
fn become_template_helper(
    conn: UnixStream,
    req: Request,
    fds: Vec<OwnedFd>,
    prepared: &super::template::Prepared,
) -> io::Result<()> {
    // The handler (and so the command) dies with the template.
    sys::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong)?;
    // The pid first: once the server's handler has it, the run counts as started.
    let me = super::template::own_pidfd()?;
    // SAFETY: getpid has no preconditions.
    let mut line = serde_json::to_vec(&Reply::Template(unsafe { libc::getpid() }))
        .map_err(io::Error::other)?;
    line.push(b'\n');
    send_with_fds(&conn, &line, &[me.as_raw_fd()])?;
    drop(me);
    prepared.hold_for_run();
    let to = match sys::dup_cloexec_above(conn.as_raw_fd(), MAX_TARGET_FD) {
        Ok(fd) => UnixStream::from(fd),
        Err(e) => {
            eprintln!("cordon: refusing to run unconfined: cordon serve: dup: {e}");
            return reply(&conn, &Reply::Status(process::EXIT_SETUP << 8));
        }
    };
    drop(conn);
    prepared.set_handler_conn(to.as_raw_fd());
    let code = become_helper(req, fds, None, Launcher::Template(prepared));
    // The client's descriptors first (its stdio pipes, the report's): its readers see their
    // end now, not when this process's exit has paid for the watch and the namespaces it
    // holds (~17 ms measured, the inotify instance's last close).
    close_range(0, MAX_TARGET_FD - 1);
    // The server's handler gone: the run is over for everyone, nothing to tell.
    let _ = reply(&to, &Reply::Status((code & 0xff) << 8));
    process::exit_now(code);
}

/// The server's handler: one connection, one helper forked beneath it (a template's
/// handler is the helper itself: [`become_template_helper`]).
// Longer than most: one request's life in the server (report the pid, fork the helper,
// forward signals, wait), where each failure must answer the client.
fn handle_request(conn: UnixStream, req: Request, fds: Vec<OwnedFd>) -> io::Result<()> {
    // The handler (and so the helper and the sandbox) dies with the server.
    sys::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong)?;
    // SAFETY: restoring the default disposition is always valid.
    unsafe { libc::signal(libc::SIGCHLD, libc::SIG_DFL) };
    // Signals to the handler are forwarded to the helper; SIGCHLD says it exited.
    let mut sigs = process::FORWARDED.to_vec();
    sigs.push(libc::SIGCHLD);
    let set = sigset(&sigs);
    // SAFETY: `set` is a valid sigset_t.
    unsafe { libc::sigprocmask(libc::SIG_BLOCK, &set, std::ptr::null_mut()) };
    // SAFETY: `set` is valid; the new descriptor is owned below.
    let sfd = unsafe { libc::signalfd(-1, &set, libc::SFD_CLOEXEC) };
    if sfd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: signalfd returned a new descriptor.
    let sfd = unsafe { OwnedFd::from_raw_fd(sfd) };
    // The pid first: once the client has it, the run counts as started (no fallback to
    // the cold path could run the command a second time).
    // SAFETY: getpid has no preconditions.
    reply(&conn, &Reply::Pid(unsafe { libc::getpid() }))?;
    // The helper checks its parent against this pid, not against whoever it has when it
    // looks (a reaper, if this handler was killed meanwhile).
    super::helper::forking_a_helper();
    // SAFETY: the handler is single-threaded (forked from the single-threaded server).
    let helper = match unsafe { libc::fork() } {
        -1 => {
            eprintln!(
                "cordon: refusing to run unconfined: cordon serve: fork: {}",
                io::Error::last_os_error()
            );
            return reply(&conn, &Reply::Status(process::EXIT_SETUP << 8));
        }
        0 => {
            drop(sfd);
            let code = become_helper(req, fds, Some(conn.as_raw_fd()), Launcher::Fork);
            process::exit_now(code);
        }
        pid => pid,
    };
    drop(fds);
    let status = loop {
        let mut pfd = [
            libc::pollfd {
                fd: conn.as_raw_fd(),
                events: libc::POLLIN | libc::POLLRDHUP,
                revents: 0,
            },
            libc::pollfd {
                fd: sfd.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            },
        ];
        // SAFETY: `pfd` is a valid array of two pollfd.
        if unsafe { libc::poll(pfd.as_mut_ptr(), 2, -1) } < 0 {
            continue; // EINTR
        }
        if pfd[0].revents != 0 {
            // The client hung up (or spoke out of turn): the run is over for it.
            // SAFETY: kill has no memory-safety preconditions; `helper` is our child.
            unsafe { libc::kill(helper, libc::SIGKILL) };
            // Exited but not reaped (its pid still its own): the run's cgroup it could not
            // remove goes now.
            if sys::wait_exited_unreaped(helper).is_ok() {
                super::limits::remove_left_by(helper as u32);
            }
            let mut st = 0;
            // SAFETY: `st` is a valid int.
            unsafe { libc::waitpid(helper, &mut st, 0) };
            return Ok(());
        }
        if pfd[1].revents != 0 {
            let Some(signo) = read_signal(&sfd) else {
                continue;
            };
            if signo == libc::SIGCHLD {
                let mut st = 0;
                // SAFETY: `st` is a valid int; `helper` is our child.
                if unsafe { libc::waitpid(helper, &mut st, libc::WNOHANG) } == helper {
                    break st;
                }
            } else {
                // SAFETY: kill has no memory-safety preconditions; `helper` is our child
                // (not yet reaped, so the pid is still its).
                unsafe { libc::kill(helper, signo) };
            }
        }
    };
    reply(&conn, &Reply::Status(status))?;
    // Stay (and keep this pid) until the client hangs up, so a signal it sends late
    // cannot hit a reused pid. Bounded: a client that never closes is not waited for.
    let mut pfd = [libc::pollfd {
        fd: conn.as_raw_fd(),
        events: libc::POLLIN | libc::POLLRDHUP,
        revents: 0,
    }];
    // SAFETY: `pfd` is a valid array of one pollfd.
    unsafe { libc::poll(pfd.as_mut_ptr(), 1, 10_000) };
    Ok(())
}

fn check_targets(req: &Request) -> io::Result<()> {
    let mut seen = std::collections::HashSet::new();
    for t in &req.fds {
        if !(0..MAX_TARGET_FD).contains(t) || !seen.insert(*t) {
            return Err(io::Error::other(format!("bad descriptor number {t}")));
        }
    }
    if req.args.first().map(String::as_str) != Some(super::HELPER_SUBCOMMAND) {
        return Err(io::Error::other("not a helper invocation"));
    }
    Ok(())
}

/// The number of the next signal queued on the signalfd `sfd`; `None` when nothing was
/// read (EINTR, EAGAIN).
fn read_signal(sfd: &OwnedFd) -> Option<libc::c_int> {
    // SAFETY: signalfd_siginfo is plain data.
    let mut si: libc::signalfd_siginfo = unsafe { std::mem::zeroed() };
    // SAFETY: reading one signalfd_siginfo into a buffer of its size.
    let n = unsafe {
        libc::read(
            sfd.as_raw_fd(),
            &mut si as *mut _ as *mut libc::c_void,
            std::mem::size_of::<libc::signalfd_siginfo>(),
        )
    };
    (n > 0).then_some(si.ssi_signo as libc::c_int)
}

fn sigset(sigs: &[libc::c_int]) -> libc::sigset_t {
    // SAFETY: sigset_t is plain data; sigemptyset initialises it.
    let mut set: libc::sigset_t = unsafe { std::mem::zeroed() };
    // SAFETY: `set` is a valid sigset_t.
    unsafe { libc::sigemptyset(&mut set) };
    for s in sigs {
        // SAFETY: `set` is valid and `s` a valid signal number.
        unsafe { libc::sigaddset(&mut set, *s) };
    }
    set
}

/// In the forked helper process: the client's descriptors at their numbers (every other
/// descriptor closed), its cwd and environment, default signal state; then exactly what
/// `cordon __sandbox-helper …` would run. Returns the exit code.
/// `conn`: the connection to close (a forked helper's copy of its handler's; a template's
/// handler that is the helper keeps its own, [`super::template::Prepared::kept_fds`]).
fn become_helper(
    req: Request,
    fds: Vec<OwnedFd>,
    conn: Option<RawFd>,
    launcher: Launcher<'_>,
) -> i32 {
    let fail = |what: &str, e: io::Error| -> i32 {
        eprintln!("cordon: refusing to run unconfined: cordon serve: {what}: {e}");
        process::EXIT_SETUP
    };
    if let Some(c) = conn {
        sys::close_in_child(c);
    }
    // Out of the way of every target number first, then onto the targets.
    let mut high = Vec::new();
    for fd in fds {
        // SAFETY: F_DUPFD_CLOEXEC returns a new descriptor or -1.
        let h = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_DUPFD_CLOEXEC, 100) };
        if h < 0 {
            return fail("dup", io::Error::last_os_error());
        }
        high.push(h);
    }
    for (h, t) in high.iter().zip(&req.fds) {
        // SAFETY: dup2 onto a number in 0..64; the previous holder (if any) is closed.
        if unsafe { libc::dup2(*h, *t) } < 0 {
            return fail("dup2", io::Error::last_os_error());
        }
    }
    // Close everything that is not a target (the listener, the connection, the copies).
    let mut keep = req.fds.clone();
    if let Launcher::Template(p) = &launcher {
        keep.extend(p.kept_fds()); // above every target (`Prepared::accept`, `make_spares`)
    }
    close_all_but(&keep);
    if let Err(e) = std::env::set_current_dir(&req.cwd) {
        // In a template the sandbox's view decides: init enters the profile's cwd (or
        // refuses, naming it).
        if matches!(launcher, Launcher::Fork) {
            return fail("cwd", e);
        }
    }
    // The process is single-threaded: nothing reads the environment concurrently.
    for (k, _) in std::env::vars_os() {
        std::env::remove_var(k);
    }
    for (k, v) in &req.env {
        if !k.is_empty() && !k.contains('=') && !k.contains('\0') && !v.contains('\0') {
            std::env::set_var(k, v);
        }
    }
    process::reset_signals();
    let args: Vec<OsString> = req.args.into_iter().skip(1).map(OsString::from).collect();
    match launcher {
        Launcher::Fork => super::helper_main(args),
        Launcher::Template(p) => {
            if let Some((cg, targets)) = req.cgroup {
                // SAFETY: the targets were just put in place (dup2 above) and are owned
                // here; the helper moves init in through them, then they are closed.
                let procs: Vec<OwnedFd> = targets
                    .iter()
                    .map(|t| unsafe { OwnedFd::from_raw_fd(*t) })
                    .collect();
                if procs.len() != cg.directories() {
                    return fail(
                        "joining the run's cgroup",
                        std::io::Error::other("one join descriptor per cgroup directory"),
                    );
                }
                p.set_cgroup(cg, procs);
            }
            super::helper::main_prepared(args, p)
        }
    }
}

/// Closes every descriptor of this process except `keep` (in a forked child).
pub(crate) fn close_all_but(keep: &[RawFd]) {
    let mut keep = keep.to_vec();
    keep.sort_unstable();
    let mut from: RawFd = 0;
    for k in keep.iter().copied().chain([RawFd::MAX]) {
        if k > from {
            close_range(from, k - 1);
        }
        from = k.saturating_add(1);
    }
}

/// Sends `line` with `fds` (SCM_RIGHTS) on `conn`, then any rest of the line.
fn send_with_fds(conn: &UnixStream, line: &[u8], fds: &[RawFd]) -> io::Result<()> {
    use nix::sys::socket::{sendmsg, ControlMessage, MsgFlags};
    let cmsg = [ControlMessage::ScmRights(fds)];
    let iov = [io::IoSlice::new(line)];
    let mut sent = sendmsg::<()>(conn.as_raw_fd(), &iov, &cmsg, MsgFlags::MSG_NOSIGNAL, None)
        .map_err(io::Error::from)?;
    while sent < line.len() {
        sent += (&*conn).write(&line[sent..])?;
    }
    Ok(())
}

/// Nothing started: the client is told to take its cold path ([`Reply::Cold`], `why`).
fn send_back(conn: &UnixStream, why: &str) -> io::Result<()> {
    reply(conn, &Reply::Cold(why.to_string()))
}

/// In the server's handler (host namespaces): hands the request to a template's
/// per-command handler P over `to_p` (the connection the server made to P before it
/// forked this process, [`connect_template`]), answers the client with this process's
/// pid once P took it, forwards signals to P through its pidfd and relays the status.
/// Anything failing before P answers that it started the command — the template gone, P
/// finding that the command does not fit it ([`Reply::Unfit`]) — means nothing ran: the
/// client is sent back to its cold path ([`Reply::Cold`], said on stderr with `verbose`).
fn relay_to_template(
    conn: UnixStream,
    mut req: Request,
    fds: Vec<OwnedFd>,
    to_p: io::Result<UnixStream>,
    limits: &cordon_policy::limits::ResolvedLimits,
    premade: Option<Premade>,
    verbose: bool,
) -> io::Result<()> {
    sys::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong)?;
    // The run's cgroup, on the host; the command's init joins it through descriptors
    // opened here (this handler stays out: `pids.max` counts init and its supervisor
    // beside the command, as on the cold path).
    // What dead runs left is swept once the status went out (below), not on the launch
    // path.
    // (Or the one a spare handler made ahead with these very limits, [`SpareHandler`].)
    let cgroup = match premade {
        Some((_, cg)) => cg,
        None => super::limits::Cgroup::create_for_others(limits, super::limits::Sweep::Later),
    };
    // Without a cgroup that counts processes, the pids limit is `RLIMIT_NPROC` in the
    // command's user namespace, and every command of a template shares the template's: one
    // command's processes would eat another's budget (breaker, stop 18, as uid 1000). Such
    // a command takes the per-command helper, with a user namespace of its own.
    if limits.pids.is_some() && !cgroup.as_ref().is_some_and(|c| c.limits_enforced().0) {
        if let Some(c) = &cgroup {
            c.remove();
        }
        return send_back(&conn, "no cgroup counts its processes");
    }
    let procs = match cgroup.as_ref().map(|c| c.join_files()).transpose() {
        Ok(p) => p.unwrap_or_default(),
        Err(_) => {
            if let Some(c) = &cgroup {
                c.remove();
            }
            return send_back(&conn, "its cgroup cannot be joined");
        }
    };
    let mut all: Vec<RawFd> = fds.iter().map(|f| f.as_raw_fd()).collect();
    if let Some(c) = &cgroup {
        let mut free = (0..MAX_TARGET_FD).rev().filter(|t| !req.fds.contains(t));
        let targets: Vec<RawFd> = procs.iter().map_while(|_| free.next()).collect();
        req.fds.extend(&targets);
        all.extend(procs.iter().map(|f| f.as_raw_fd()));
        req.cgroup = Some((c.clone(), targets));
    }
    let started = (|| -> io::Result<(UnixStream, OwnedFd, Vec<u8>)> {
        let h = to_p?;
        let mut line = serde_json::to_vec(&req).map_err(io::Error::other)?;
        line.push(b'\n');
        send_with_fds(&h, &line, &all)?;
        let mut buf = vec![0u8; 4096];
        let (n, pidfd) = super::template::recv_fd(h.as_raw_fd(), &mut buf)?;
        buf.truncate(n);
        // The first line; anything after it is the start of the next (the status).
        let end = buf.iter().position(|b| *b == b'\n').unwrap_or(buf.len());
        let rest = buf.get(end + 1..).unwrap_or_default().to_vec();
        match (serde_json::from_slice::<Reply>(&buf[..end]), pidfd) {
            (Ok(Reply::Template(_)), Some(pidfd)) => Ok((h, pidfd, rest)),
            (Ok(Reply::Unfit(why)), _) => Err(io::Error::other(format!(
                "the command does not fit the template: {why}"
            ))),
            _ => Err(io::Error::other("the template did not start the command")),
        }
    })();
    drop(procs);
    let (h, pidfd, rest) = match started {
        Ok(s) => s,
        Err(why) => {
            if verbose {
                eprintln!("cordon serve: sent back to the cold path: {why}");
            }
            if let Some(c) = &cgroup {
                c.remove();
            }
            return send_back(&conn, &why.to_string());
        }
    };
    drop(fds);
    let set = sigset(&process::FORWARDED);
    // SAFETY: `set` is a valid sigset_t.
    unsafe { libc::sigprocmask(libc::SIG_BLOCK, &set, std::ptr::null_mut()) };
    // SAFETY: `set` is valid; the new descriptor is owned below.
    let sfd = unsafe { libc::signalfd(-1, &set, libc::SFD_CLOEXEC) };
    if sfd < 0 {
        super::template::pidfd_signal(&pidfd, libc::SIGKILL);
        return Err(io::Error::last_os_error());
    }
    // SAFETY: signalfd returned a new descriptor.
    let sfd = unsafe { OwnedFd::from_raw_fd(sfd) };
    // SAFETY: getpid has no preconditions.
    if let Err(e) = reply(&conn, &Reply::Template(unsafe { libc::getpid() })) {
        super::template::pidfd_signal(&pidfd, libc::SIGKILL);
        return Err(e);
    }
    // Bytes already read after the first line: parse them before waiting.
    let mut pending = !rest.is_empty();
    let mut from_p = BufReader::new(std::io::Read::chain(
        std::io::Cursor::new(rest),
        h.try_clone()?,
    ));
    let status = loop {
        if std::mem::take(&mut pending) {
            let mut line = String::new();
            if from_p.read_line(&mut line).is_ok() {
                if let Ok(Reply::Status(s)) = serde_json::from_str::<Reply>(&line) {
                    break s;
                }
            }
        }
        let mut pfd = [
            libc::pollfd {
                fd: conn.as_raw_fd(),
                events: libc::POLLIN | libc::POLLRDHUP,
                revents: 0,
            },
            libc::pollfd {
                fd: sfd.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            },
            libc::pollfd {
                fd: h.as_raw_fd(),
                events: libc::POLLIN | libc::POLLRDHUP,
                revents: 0,
            },
        ];
        // SAFETY: `pfd` is a valid array of three pollfd.
        if unsafe { libc::poll(pfd.as_mut_ptr(), 3, -1) } < 0 {
            continue; // EINTR
        }
        if pfd[0].revents != 0 {
            // The client hung up (or spoke out of turn): the run is over for it.
            super::template::pidfd_signal(&pidfd, libc::SIGKILL);
            // Until the killed tree is gone (P's end closes): the cgroup is then empty and
            // removable, and the template's running token (held by this process) is let go
            // only then (attack pass 42: without a cgroup it was let go at once, while the
            // tree could still touch the live cache layer). A tree slower than 2 s leaves
            // the directory to the sweep of dead runs.
            let _ = from_p
                .get_ref()
                .get_ref()
                .1
                .set_read_timeout(Some(std::time::Duration::from_secs(2)));
            let _ = from_p.read_line(&mut String::new());
            if let Some(c) = &cgroup {
                c.remove();
            }
            return Ok(());
        }
        if pfd[1].revents != 0 {
            if let Some(signo) = read_signal(&sfd) {
                super::template::pidfd_signal(&pidfd, signo);
            }
        }
        if pfd[2].revents != 0 {
            let mut line = String::new();
            let got = from_p.read_line(&mut line).unwrap_or(0);
            match serde_json::from_str::<Reply>(&line) {
                Ok(Reply::Status(s)) => break s,
                _ if got == 0 => break libc::SIGKILL, // P is gone: killed with the run
                _ => {}
            }
        }
    };
    // The command's tree has ended (P, the helper, reports after reaping init): the cgroup
    // is empty. The status goes out first: removing a cgroup waits for the kernel to take
    // it offline, which the client need not wait for.
    let sent = reply(&conn, &Reply::Status(status));
    if let Some(c) = &cgroup {
        c.remove();
        super::limits::sweep_dead_runs();
    }
    sent?;
    let mut pfd = [libc::pollfd {
        fd: conn.as_raw_fd(),
        events: libc::POLLIN | libc::POLLRDHUP,
        revents: 0,
    }];
    // SAFETY: `pfd` is a valid array of one pollfd.
    unsafe { libc::poll(pfd.as_mut_ptr(), 1, 10_000) };
    Ok(())
}

fn close_range(first: RawFd, last: RawFd) {
    if first < 0 || last < first {
        return;
    }
    const SYS_CLOSE_RANGE: libc::c_long = 436;
    // SAFETY: closing descriptor numbers has no memory-safety preconditions; none of
    // them is used (or owned) afterwards in this process.
    let r = unsafe { libc::syscall(SYS_CLOSE_RANGE, first as u32, last as u32, 0u32) };
    if r != 0 {
        for fd in first..=last.min(4096) {
            sys::close_in_child(fd);
        }
    }
}

// ---- client ----------------------------------------------------------------------------

static USE_SERVER: AtomicBool = AtomicBool::new(false);
static LAST_PATH: AtomicU8 = AtomicU8::new(0);
const PATH_COLD: u8 = 1;
const PATH_SERVER: u8 = 2;
const PATH_TEMPLATE: u8 = 3;

/// Lets [`spawn_reported`](super::spawn_reported)'s callers in this process use a running
/// server (`cordon run` sets it unless `--no-server`). Off by default: a library user opts
/// in.
pub fn set_use_server(on: bool) {
    USE_SERVER.store(on, Ordering::Relaxed);
}

/// Whether this process may use a running server ([`set_use_server`]).
pub fn use_server() -> bool {
    USE_SERVER.load(Ordering::Relaxed)
}

/// How the last helper of this process was started: `"cold"` (executed), `"server"`
/// (forked by `cordon serve`, namespaces made per command) or `"template"` (forked from a
/// prepared template of `cordon serve`); `None` before any.
pub fn last_path() -> Option<&'static str> {
    match LAST_PATH.load(Ordering::Relaxed) {
        PATH_COLD => Some("cold"),
        PATH_SERVER => Some("server"),
        PATH_TEMPLATE => Some("template"),
        _ => None,
    }
}

/// Records a cold launch (the server paths are recorded by [`launch`]).
pub(crate) fn record_cold() {
    LAST_PATH.store(PATH_COLD, Ordering::Relaxed);
}

/// Why the server sent this process's last request back to the cold path
/// ([`Reply::Cold`]), if it did: a report can tell "the server declined" from "no server"
/// (new-user pass 201, #7).
static SENT_BACK: std::sync::Mutex<Option<String>> = std::sync::Mutex::new(None);

/// The server's reason for sending this process's last request back to the cold path;
/// `None` when the last request was not sent back (or none was made).
pub fn last_sent_back() -> Option<String> {
    SENT_BACK.lock().unwrap_or_else(|e| e.into_inner()).clone()
}

/// How long a client waits for the server's first reply before it looks whether the server
/// is stopped ([`launch`]).
const STALLED_AFTER: std::time::Duration = std::time::Duration::from_secs(1);

/// Whether process `pid` is stopped (state `T` or `t` in `/proc/<pid>/stat`, the field
/// after the parenthesised command name).
fn process_stopped(pid: libc::pid_t) -> bool {
    pid > 0
        && std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
            s.rsplit_once(')')
                .and_then(|(_, rest)| rest.split_whitespace().next())
                .is_some_and(|state| state == "T" || state == "t")
        })
}

/// A helper started by the server, seen from the client.
#[derive(Debug)]
pub struct ServerChild {
    conn: BufReader<UnixStream>,
    pid: i32,
    status: Option<i32>,
    /// The connection ended without a status ([`ServerChild::lost`]).
    lost: bool,
}

impl ServerChild {
    /// The handler's pid: signals sent to it reach the helper; SIGKILL ends the run
    /// (the helper dies with the handler, the sandbox with the helper). Valid until this
    /// value is dropped.
    pub fn id(&self) -> u32 {
        self.pid as u32
    }

    /// The connection to the server's handler: shut down (`shutdown(2)`), it ends the run
    /// as the client's hang-up does — the handler kills the command's tree and removes the
    /// run's cgroup — and [`ServerChild::wait`] returns as for a killed handler. Valid
    /// until this value is dropped.
    pub fn connection_fd(&self) -> RawFd {
        self.conn.get_ref().as_raw_fd()
    }

    /// Whether the run ended without a status from the server: its handler was killed —
    /// by this process's timer or kill, or because the server stopped, restarted or died
    /// (which kills the commands it runs). Known once [`ServerChild::wait`] returned.
    pub fn lost(&self) -> bool {
        self.lost
    }

    /// Blocks until the helper exited; its raw wait status.
    ///
    /// Errors: the connection broke (the server died: the run is lost).
    pub fn wait(&mut self) -> io::Result<i32> {
        if let Some(s) = self.status {
            return Ok(s);
        }
        let mut line = String::new();
        if self.conn.read_line(&mut line)? == 0 {
            // The handler is gone without a status: it was killed (the timer's SIGKILL, or
            // the server died), and the helper and the sandbox with it.
            self.status = Some(libc::SIGKILL);
            self.lost = true;
            return Ok(libc::SIGKILL);
        }
        match serde_json::from_str::<Reply>(&line) {
            Ok(Reply::Status(s)) => {
                self.status = Some(s);
                Ok(s)
            }
            _ => Err(io::Error::new(
                io::ErrorKind::BrokenPipe,
                "the cordon server ended the run without a status",
            )),
        }
    }
}

/// Connects to the server at [`socket_path`] when this process may use one
/// ([`use_server`]) and it passes [`connect_trusted`]. `None`: use the cold path (a
/// server that is there but not trusted is named on stderr).
pub fn connect() -> Option<UnixStream> {
    if !use_server() {
        return None;
    }
    let path = socket_path();
    match connect_trusted(&path) {
        Ok(c) => Some(c),
        Err(e) if e.kind() == io::ErrorKind::PermissionDenied => {
            eprintln!(
                "cordon: note: not using the server at {}: {e}; running on the cold path",
                path.display()
            );
            None
        }
        Err(_) => None, // no server: the cold path, silently
    }
}

/// Connects to the server socket at `path` and checks who answers, so that a listener
/// planted by someone else — a sandboxed command of ours included — never gets a request
/// (it would receive our descriptors and could forge the report):
/// - the directory is opened without following any symlink, is owned by us and private
///   (no group/other bits), and the socket is reached through that descriptor (a rename
///   or symlink swap after the check cannot redirect the connect);
/// - the entry is a socket owned by us (not a symlink);
/// - the server process (`SO_PEERCRED`, pinned by `SO_PEERPIDFD`) runs as our uid, in our
///   namespaces, under no more seccomp filters and no `no_new_privs` we do not have.
///
/// Errors: `NotFound`/`ConnectionRefused` when nothing listens; `PermissionDenied` naming
/// the check that failed.
pub fn connect_trusted(path: &Path) -> io::Result<UnixStream> {
    let denied = |why: String| io::Error::new(io::ErrorKind::PermissionDenied, why);
    // SAFETY: getuid has no preconditions.
    let uid = unsafe { libc::getuid() };
    let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "socket path has no directory",
        ));
    };
    // A directory reached through a symlink is refused like an untrusted one, and said
    // (attack pass 204 U1: the run fell back to the cold path without a word).
    let dir_fd = sys::open_dir_nofollow(dir).map_err(|e| match e.raw_os_error() {
        Some(libc::ELOOP) | Some(libc::ENOTDIR) if dir.exists() => denied(format!(
            "{} is reached through a symlink (the socket's directory must be a real \
             directory of yours)",
            dir.display()
        )),
        _ => e,
    })?;
    let st = sys::fstat(dir_fd.as_raw_fd())?;
    if st.st_uid != uid || st.st_mode & 0o077 != 0 {
        return Err(denied(format!(
            "{} is not a private directory of this user (owner {}, mode {:o}; want 0700)",
            dir.display(),
            st.st_uid,
            st.st_mode & 0o7777
        )));
    }
    let cname = std::ffi::CString::new(std::os::unix::ffi::OsStrExt::as_bytes(name))
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "NUL in the socket name"))?;
    let st = sys::fstatat_nofollow(dir_fd.as_raw_fd(), &cname)?;
    if st.st_mode & libc::S_IFMT != libc::S_IFSOCK || st.st_uid != uid {
        return Err(denied(format!(
            "{} is not a socket owned by this user",
            path.display()
        )));
    }
    let pinned = PathBuf::from(format!("/proc/self/fd/{}", dir_fd.as_raw_fd())).join(name);
    let conn = UnixStream::connect(&pinned)?;
    let peer = Peer::of(&conn)?;
    if peer.uid != uid {
        return Err(denied(format!("the server runs as uid {}", peer.uid)));
    }
    let me = Confinement::of("self")?;
    let theirs = peer
        .confinement()
        .map_err(|e| denied(format!("the server cannot be checked: {e}")))?;
    if let Some(why) = more_confined(&theirs, &me, peer.pid) {
        return Err(denied(format!("the server {why}")));
    }
    Ok(conn)
}

/// Asks the server on `conn` to run the helper with `args` (starting with
/// `__sandbox-helper`), `cwd`, exactly `env`, and `fds` (descriptor in this process →
/// number in the helper; include 0, 1 and 2).
///
/// Errors: the request could not be sent or the server did not start it (then nothing
/// ran: the caller may fall back to the cold path).
pub fn launch(
    conn: UnixStream,
    args: Vec<String>,
    cwd: &Path,
    env: Vec<(String, String)>,
    fds: &[(RawFd, RawFd)],
) -> io::Result<ServerChild> {
    use nix::sys::socket::{sendmsg, ControlMessage, MsgFlags};
    *SENT_BACK.lock().unwrap_or_else(|e| e.into_inner()) = None;
    let req = Request {
        args,
        cwd: cwd.to_path_buf(),
        env,
        fds: fds.iter().map(|(_, t)| *t).collect(),
        cgroup: None,
    };
    let mut line = serde_json::to_vec(&req).map_err(io::Error::other)?;
    line.push(b'\n');
    let raw: Vec<RawFd> = fds.iter().map(|(f, _)| *f).collect();
    let cmsg = [ControlMessage::ScmRights(&raw)];
    let iov = [io::IoSlice::new(&line)];
    // Any failure before the server says it started the helper means nothing ran:
    // `ConnectionRefused`, so the caller takes the cold path (e.g. the server refused this
    // client and closed the connection).
    let refused = |e: io::Error| {
        io::Error::new(
            io::ErrorKind::ConnectionRefused,
            format!("the cordon server did not start the helper: {e}"),
        )
    };
    let mut sent = sendmsg::<()>(conn.as_raw_fd(), &iov, &cmsg, MsgFlags::MSG_NOSIGNAL, None)
        .map_err(|e| refused(e.into()))?;
    while sent < line.len() {
        sent += (&conn).write(&line[sent..]).map_err(refused)?;
    }
    // A server that does not answer is waited for (it may have read the request, and
    // falling back to the cold path could run the command twice), but one that is stopped
    // (Ctrl-Z in its terminal, SIGSTOP) is named, once, with what to do.
    let server_pid = Peer::of(&conn).map(|p| p.pid).unwrap_or(0);
    conn.set_read_timeout(Some(STALLED_AFTER))
        .map_err(refused)?;
    let mut conn = BufReader::new(conn);
    let mut first = String::new();
    let mut named = false;
    loop {
        match conn.read_line(&mut first) {
            Ok(_) => break,
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) =>
            {
                if !named && process_stopped(server_pid) {
                    named = true;
                    eprintln!(
                        "cordon: waiting for the cordon server (pid {server_pid}), which is \
                         stopped (Ctrl-Z or SIGSTOP): continue it (`kill -CONT {server_pid}`), \
                         or end it and run with --no-server"
                    );
                }
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(refused(e)),
        }
    }
    conn.get_ref().set_read_timeout(None).map_err(refused)?;
    let (pid, path) = match serde_json::from_str::<Reply>(&first) {
        Ok(Reply::Pid(pid)) if pid > 0 => (pid, PATH_SERVER),
        Ok(Reply::Template(pid)) if pid > 0 => (pid, PATH_TEMPLATE),
        Ok(Reply::Cold(why)) => {
            *SENT_BACK.lock().unwrap_or_else(|e| e.into_inner()) = Some(why.clone());
            return Err(refused(io::Error::other(format!(
                "no template can run it ({why}): the cold path runs it"
            ))));
        }
        _ => return Err(refused(io::Error::other("no pid in the reply"))),
    };
    LAST_PATH.store(path, Ordering::Relaxed);
    Ok(ServerChild {
        conn,
        pid,
        status: None,
        lost: false,
    })
}
