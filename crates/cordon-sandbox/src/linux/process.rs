//! Processes (R-L3): signal forwarding, reaping, exec with exit-code conventions, and the
//! rung-2 sweep of descendants (by a supervisor that also outlives a killed helper).
//!
//! Exit codes: the command's own code; `128 + N` when it was killed by signal N; 127 when
//! it was not found; 126 when it could not be executed; 125 when the sandbox could not be
//! set up (nothing ran). Exec failures travel back through a close-on-exec pipe, so they are
//! never confused with a code the command chose.

use super::sys;
use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::sync::atomic::{AtomicI32, Ordering};

/// Exit code when the sandbox could not be set up or the run was refused.
pub const EXIT_SETUP: i32 = crate::CordonExit::Failed.status();
/// Exit code when the command exists but cannot be executed.
pub const EXIT_NOEXEC: i32 = crate::CordonExit::CannotExecute.status();
/// Exit code when the command was not found.
pub const EXIT_NOTFOUND: i32 = crate::CordonExit::NotFound.status();

/// Signals forwarded from the helper to the sandbox's init and from init to the command
/// ([`crate::run::FORWARDED_SIGNALS`]).
pub const FORWARDED: [libc::c_int; 8] = crate::run::FORWARDED_SIGNALS;

/// Restores what a freshly executed program has: an empty signal mask, the default
/// disposition of the [`FORWARDED`] signals and `SIGCHLD`, and `SIGPIPE` ignored (as the
/// Rust runtime leaves it). For a helper started by `fork` instead of `execve`
/// (`cordon serve`, [`super::forked`]).
pub(crate) fn reset_signals() {
    // SAFETY: an all-zero sigset_t is valid, and sigemptyset makes it the empty set.
    let mut empty: libc::sigset_t = unsafe { std::mem::zeroed() };
    // SAFETY: `empty` is valid; restoring an empty mask and default dispositions has no
    // memory-safety preconditions.
    unsafe {
        libc::sigemptyset(&mut empty);
        libc::sigprocmask(libc::SIG_SETMASK, &empty, std::ptr::null_mut());
        for s in FORWARDED {
            libc::signal(s, libc::SIG_DFL);
        }
        libc::signal(libc::SIGCHLD, libc::SIG_DFL);
        libc::signal(libc::SIGPIPE, libc::SIG_IGN);
    }
}

fn sigset(sigs: &[libc::c_int]) -> libc::sigset_t {
    // SAFETY: sigset_t is plain data; sigemptyset initialises it.
    let mut set: libc::sigset_t = unsafe { std::mem::zeroed() };
    // SAFETY: `set` is a valid sigset_t.
    unsafe { libc::sigemptyset(&mut set) };
    for s in sigs {
        // SAFETY: `set` is a valid, initialised sigset_t and `s` a valid signal number.
        unsafe { libc::sigaddset(&mut set, *s) };
    }
    set
}

fn supervised_set() -> libc::sigset_t {
    let mut v = FORWARDED.to_vec();
    v.push(libc::SIGCHLD);
    sigset(&v)
}

/// Blocks the forwarded signals and `SIGCHLD`, so they queue for [`supervise`] (set before
/// any fork so no signal is lost in between).
pub fn block_signals() {
    block(&supervised_set());
}

fn block(set: &libc::sigset_t) {
    // SAFETY: `set` is a valid sigset_t; the old mask is not needed.
    unsafe { libc::sigprocmask(libc::SIG_BLOCK, set, std::ptr::null_mut()) };
}

/// The signal the rung-2 supervisor asks the kernel for when the helper dies
/// (`PR_SET_PDEATHSIG`): the first real-time signal, which nothing else here uses. It is
/// only a wake-up: the supervisor acts on it only once its parent is really gone.
pub fn parent_death_signal() -> libc::c_int {
    libc::SIGRTMIN()
}

/// For the rung-2 supervisor, after [`block_signals`]: also blocks
/// [`parent_death_signal`] (taken by [`supervise_while_parent`]) and `SIGTTOU`/`SIGTTIN`
/// (the supervisor sits in a background process group; a message it prints must not stop
/// it when the terminal has `tostop` set). The command's mask is emptied before exec.
pub fn block_supervisor_signals() {
    block(&sigset(&[
        parent_death_signal(),
        libc::SIGTTOU,
        libc::SIGTTIN,
    ]));
}

extern "C" fn noop_handler(_: libc::c_int) {}

/// Installs a no-op handler for the forwarded signals. Needed in the pid namespace's init:
/// the kernel drops signals from the parent namespace to an init that has no handler for
/// them. The signals stay blocked and are taken with `sigwaitinfo`.
pub fn install_init_handlers() {
    for s in FORWARDED {
        // SAFETY: sigaction is plain data; zeroed then filled.
        let mut sa: libc::sigaction = unsafe { std::mem::zeroed() };
        sa.sa_sigaction = noop_handler as *const () as usize;
        // SAFETY: `sa.sa_mask` is a valid sigset_t.
        unsafe { libc::sigemptyset(&mut sa.sa_mask) };
        // SAFETY: `sa` is valid and `noop_handler` is async-signal-safe.
        unsafe { libc::sigaction(s, &sa, std::ptr::null_mut()) };
    }
}

/// In a child about to exec: default dispositions for the signals this process touched
/// (and `SIGPIPE`, which the Rust runtime ignores), and an empty signal mask.
fn reset_signals_for_exec() {
    for s in FORWARDED
        .iter()
        .chain([libc::SIGPIPE, libc::SIGCHLD].iter())
    {
        // SAFETY: setting the default disposition is always valid.
        unsafe { libc::signal(*s, libc::SIG_DFL) };
    }
    let empty = sigset(&[]);
    // SAFETY: `empty` is a valid sigset_t.
    unsafe { libc::sigprocmask(libc::SIG_SETMASK, &empty, std::ptr::null_mut()) };
}

/// `_exit(code)`: ends a forked child without running the parent's exit handlers.
pub fn exit_now(code: i32) -> ! {
    // SAFETY: _exit never returns and is always safe to call.
    unsafe { libc::_exit(code) }
}

/// Converts a `waitpid` status to the exit-code convention of the module docs.
pub fn code_of(status: libc::c_int) -> i32 {
    if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else if libc::WIFSIGNALED(status) {
        128 + libc::WTERMSIG(status)
    } else {
        EXIT_SETUP
    }
}

/// The signal that ended the last child a `supervise*` call waited for (0: it exited).
static LAST_SIGNAL: AtomicI32 = AtomicI32::new(0);

/// The signal that ended the child the last `supervise*` call of this process waited for,
/// or `None` when it exited (its code is then its own). Init asks after its command: the
/// code alone (128 + N) cannot tell `kill -TERM` from `exit 143`.
pub fn last_signal() -> Option<i32> {
    Some(LAST_SIGNAL.load(Ordering::Relaxed)).filter(|s| *s != 0)
}

/// `si_code` of a signal the kernel generated itself, e.g. from the terminal (`^C`).
const SI_KERNEL: libc::c_int = 0x80;

/// Waits for `child` while forwarding signals to it, reaping every other child that exits
/// meanwhile (init's duty, and the subreaper's). Returns `child`'s exit code.
///
/// A signal the kernel sent to the whole foreground process group (terminal `^C`, `^\`)
/// already reached the command, which is in the same group: it is not sent twice (init
/// passes it on to a command that left the group, [`left_the_group`]).
pub fn supervise(child: libc::pid_t) -> i32 {
    supervise_inner(child, None, None, Deliver::ToChild).unwrap_or(EXIT_SETUP)
}

/// Set in `cordon serve` (inherited by every process it forks): the commands it starts
/// are not in the caller's process group, so a `SIGINT`/`SIGQUIT` sent to that group
/// reaches only what cordon forwards ([`supervise_command`]).
static INTERRUPTS_TO_ALL: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Set (to anything) in a helper's environment by a caller whose commands' signals come
/// from an agent, not a process group (the MCP and library harness: its `signal` is the
/// agent's ^C): the helper then calls [`deliver_interrupts_to_all`].
pub const INTERRUPTS_TO_ALL_ENV: &str = "CORDON_INTERRUPTS_TO_ALL";

/// Whether this process has a controlling terminal. With one, the command stays in
/// cordon's process group, whether that is the terminal's foreground (a `^C` reaches it
/// directly) or a background job the shell may bring back with `fg` (the terminal is then
/// handed to that group: a command in another group would be stopped by `SIGTTIN` for
/// good — attack pass 46, N4). Without one, an interrupt comes from a program that signals
/// cordon (`child.kill('SIGINT')`): the cold path starts the helper in its own process
/// group and delivers interrupts to the whole command, as `cordon serve` does (nu23 Q4: a
/// shell waiting for `sleep` deferred a SIGINT sent to cordon alone).
pub fn has_controlling_terminal() -> bool {
    // SAFETY: a NUL-terminated path; the descriptor is closed below.
    let fd = unsafe {
        libc::open(
            c"/dev/tty".as_ptr(),
            libc::O_RDONLY | libc::O_NOCTTY | libc::O_CLOEXEC | libc::O_NONBLOCK,
        )
    };
    if fd < 0 {
        return false;
    }
    // SAFETY: closing the descriptor opened above.
    unsafe { libc::close(fd) };
    true
}

/// Marks this process (the launch server) and what it forks: see [`supervise_command`].
pub fn deliver_interrupts_to_all() {
    INTERRUPTS_TO_ALL.store(true, Ordering::Relaxed);
}

/// [`supervise`] for the sandbox's init (pid 1 of the command's pid namespace) waiting for
/// the command. Launched by `cordon serve`, a forwarded `SIGINT` or `SIGQUIT` goes to every
/// process of the namespace, as a terminal's or a `killpg` would reach the whole command
/// on the cold path, where the command is in the caller's process group (new-user pass
/// nu22, P2: a shell waiting for `sleep` deferred it, and the command ran on).
///
/// A forwarded `SIGINT`, `SIGTERM`, `SIGHUP` or `SIGQUIT` is followed by `SIGCONT` to the
/// same processes, as `timeout` does: a command that stopped itself (`kill -STOP $$`)
/// would otherwise keep the signal pending, and `cordon run` waiting, until someone
/// continued it (attack pass 171).
pub fn supervise_command(child: libc::pid_t) -> i32 {
    let all = INTERRUPTS_TO_ALL.load(Ordering::Relaxed);
    supervise_inner(child, None, None, Deliver::ToCommand { all }).unwrap_or(EXIT_SETUP)
}

/// How [`supervise_inner`] passes a forwarded signal on.
#[derive(Clone, Copy)]
enum Deliver {
    /// To the child alone (a helper or the client forwarding to the next process).
    ToChild,
    /// As init delivering to the command ([`supervise_command`]): `SIGINT` and `SIGQUIT`
    /// to every process of the namespace when `all`; terminating signals followed by
    /// `SIGCONT`.
    ToCommand { all: bool },
}

/// Makes `fd` signal-driven for this process: `SIGIO` (blocked, [`block_sigio`], so it
/// only wakes [`supervise_checking`]) when it has events — for a stream socket, also when
/// its peer hangs up. Called by the process that waits on init, after any fork.
///
/// Errors: `fcntl` failed (the caller refuses to run: nothing would wake it).
pub(crate) fn signal_driven(fd: std::os::fd::RawFd) -> std::io::Result<()> {
    block_sigio();
    // SAFETY: fcntl on a descriptor the caller owns; F_SETOWN takes a pid, no memory.
    if unsafe { libc::fcntl(fd, libc::F_SETOWN, libc::getpid()) } < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: as above; F_GETFL/F_SETFL take and return flags only.
    let fl = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    // SAFETY: as above.
    if fl < 0 || unsafe { libc::fcntl(fd, libc::F_SETFL, fl | libc::O_ASYNC) } < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// Blocks `SIGIO`, so that it only wakes [`supervise_checking`] (the cover watch's
/// descriptor is signal-driven, [`super::cover_watch::CoverWatch::arm`]).
pub fn block_sigio() {
    block(&sigset(&[libc::SIGIO]));
}

/// [`supervise`], and while the child lives calls `check` at least every `every` (the
/// limits watchdog, run in the supervising process itself instead of a forked one: a
/// `check` that kills the child makes the wait end with the child's death) and at once
/// whenever `SIGIO` arrives (the cover watch; blocked by [`block_sigio`]).
pub fn supervise_checking(
    child: libc::pid_t,
    every: std::time::Duration,
    check: &mut dyn FnMut(),
) -> i32 {
    supervise_inner(child, None, Some((every, check)), Deliver::ToChild).unwrap_or(EXIT_SETUP)
}

/// [`supervise`], and returns `None` as soon as `parent` (the pid this process had as its
/// parent) is gone — woken by [`parent_death_signal`], which the caller asked for with
/// `PR_SET_PDEATHSIG` and blocked ([`block_supervisor_signals`]).
pub fn supervise_while_parent(child: libc::pid_t, parent: libc::pid_t) -> Option<i32> {
    supervise_inner(child, Some(parent), None, Deliver::ToChild)
}

fn supervise_inner(
    child: libc::pid_t,
    parent: Option<libc::pid_t>,
    mut check: Option<(std::time::Duration, &mut dyn FnMut())>,
    deliver: Deliver,
) -> Option<i32> {
    let mut sigs = FORWARDED.to_vec();
    sigs.push(libc::SIGCHLD);
    if parent.is_some() {
        sigs.push(parent_death_signal());
    }
    if check.is_some() {
        sigs.push(libc::SIGIO);
    }
    let set = sigset(&sigs);
    let mut last_check = std::time::Instant::now();
    loop {
        // SAFETY: siginfo_t is plain data; zeroed is a valid value.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        let sig = match &mut check {
            None => {
                // SAFETY: `set` is a valid sigset_t and `info` a writable siginfo_t.
                unsafe { libc::sigwaitinfo(&set, &mut info) }
            }
            Some((every, f)) => {
                // Due even when other signals keep arriving.
                let left = every.saturating_sub(last_check.elapsed());
                if left.is_zero() {
                    f();
                    last_check = std::time::Instant::now();
                    continue;
                }
                let ts = libc::timespec {
                    tv_sec: left.as_secs() as libc::time_t,
                    tv_nsec: left.subsec_nanos() as libc::c_long,
                };
                // SAFETY: `set`, `info` and `ts` are valid for the call.
                unsafe { libc::sigtimedwait(&set, &mut info, &ts) }
            }
        };
        if sig < 0 {
            continue; // EINTR
        }
        if sig == libc::SIGIO {
            if let Some((_, f)) = &mut check {
                f();
            }
            continue;
        }
        if sig == libc::SIGCHLD {
            loop {
                let mut status = 0;
                // SAFETY: `status` is a valid int to write to.
                let pid = unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) };
                if pid <= 0 {
                    break;
                }
                if pid == child {
                    if libc::WIFSIGNALED(status) {
                        LAST_SIGNAL.store(libc::WTERMSIG(status), Ordering::Relaxed);
                    }
                    return Some(code_of(status));
                }
            }
        } else if sig == parent_death_signal() && parent.is_some() {
            // SAFETY: getppid has no preconditions.
            if Some(unsafe { libc::getppid() }) != parent {
                return None;
            }
            // A stray copy of the signal while the parent lives: nothing to do.
        } else if info.si_code != SI_KERNEL || left_the_group(deliver, child) {
            let (target, cont) = match deliver {
                Deliver::ToChild => (child, false),
                Deliver::ToCommand { all } => {
                    let target = if all && (sig == libc::SIGINT || sig == libc::SIGQUIT) {
                        -1 // as pid 1 of the namespace: every other process in it
                    } else {
                        child
                    };
                    (target, crate::run::ENDING_SIGNALS.contains(&sig))
                }
            };
            // SAFETY: kill has no memory-safety preconditions.
            unsafe { libc::kill(target, sig) };
            if cont {
                // SAFETY: as above.
                unsafe { libc::kill(target, libc::SIGCONT) };
            }
        }
    }
}

/// Whether init's command is out of init's process group, so a signal the terminal sent
/// to that group (`SI_KERNEL`, which init got as a member) did not reach it: init then
/// passes it on. The client no longer passes on its own copy of a terminal's signal (it
/// reached the command once already); a command that left the group (`setpgid(0, 0)`) got
/// no `^C` at all and `cordon run` waited on (attack pass 181, F1). Only for init
/// ([`Deliver::ToCommand`]): a helper's child is init, in the group.
fn left_the_group(deliver: Deliver, child: libc::pid_t) -> bool {
    if !matches!(deliver, Deliver::ToCommand { .. }) {
        return false;
    }
    // SAFETY: getpgid and getpgrp have no memory-safety preconditions.
    let (theirs, ours) = unsafe { (libc::getpgid(child), libc::getpgrp()) };
    theirs > 0 && theirs != ours
}

/// Everything needed to exec the command, prepared before forking.
pub struct CommandSpec {
    /// argv (argv[0] is the name given by the user).
    pub argv: Vec<CString>,
    /// `KEY=VALUE` strings: exactly the child's environment.
    pub env: Vec<CString>,
    /// `PATH` of the child's environment (a default when it has none).
    pub path: Vec<u8>,
}

impl CommandSpec {
    /// Builds a spec from argv and the environment pairs.
    ///
    /// Errors: a NUL byte in an argument or variable.
    pub fn new(
        argv: &[std::ffi::OsString],
        env: &[(String, String)],
    ) -> Result<CommandSpec, String> {
        let argv = argv
            .iter()
            .map(|a| CString::new(a.as_bytes()))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|_| "an argument contains a NUL byte".to_string())?;
        let envs = env
            .iter()
            .map(|(k, v)| CString::new(format!("{k}={v}")))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|_| "an environment variable contains a NUL byte".to_string())?;
        let path = env
            .iter()
            .rev()
            .find(|(k, _)| k == "PATH")
            .map(|(_, v)| v.as_bytes().to_vec())
            .unwrap_or_else(|| b"/usr/local/bin:/usr/bin:/bin".to_vec());
        Ok(CommandSpec {
            argv,
            env: envs,
            path,
        })
    }

    fn name(&self) -> String {
        self.argv[0].to_string_lossy().into_owned()
    }
}

/// Tries `execve` on each candidate of a `PATH` search, like `execvp`: a file the kernel
/// cannot execute (`ENOEXEC`, an executable script without `#!`) is run by `/bin/sh`, as
/// `env`, `timeout` and the shells do (new-user pass nu27, F1); returns the most telling
/// errno when every attempt failed.
fn exec_search(spec: &CommandSpec) -> libc::c_int {
    let mut argv: Vec<*const libc::c_char> = spec.argv.iter().map(|a| a.as_ptr()).collect();
    argv.push(std::ptr::null());
    let mut envp: Vec<*const libc::c_char> = spec.env.iter().map(|a| a.as_ptr()).collect();
    envp.push(std::ptr::null());
    let name = spec.argv[0].as_bytes();
    let try_exec = |p: &CString| -> libc::c_int {
        // SAFETY: `p`, `argv` and `envp` are NUL-terminated strings / null-terminated
        // arrays of them, alive for the call; execve only returns on failure.
        unsafe { libc::execve(p.as_ptr(), argv.as_ptr(), envp.as_ptr()) };
        let e = io::Error::last_os_error()
            .raw_os_error()
            .unwrap_or(libc::ENOENT);
        if e == libc::ENOEXEC {
            let mut sh_argv: Vec<*const libc::c_char> = vec![c"/bin/sh".as_ptr(), p.as_ptr()];
            sh_argv.extend_from_slice(&argv[1..]);
            // SAFETY: as above; `sh_argv` ends with the null pointer copied from `argv`.
            unsafe { libc::execve(c"/bin/sh".as_ptr(), sh_argv.as_ptr(), envp.as_ptr()) };
        }
        e
    };
    if name.contains(&b'/') {
        return try_exec(&spec.argv[0]);
    }
    let mut best = libc::ENOENT;
    for dir in spec.path.split(|b| *b == b':') {
        let dir: &[u8] = if dir.is_empty() { b"." } else { dir };
        let mut full = dir.to_vec();
        full.push(b'/');
        full.extend_from_slice(name);
        let Ok(full) = CString::new(full) else {
            continue;
        };
        match try_exec(&full) {
            libc::ENOENT | libc::ENOTDIR | libc::ESTALE | libc::ENODEV | libc::ETIMEDOUT => {}
            libc::EACCES => best = libc::EACCES,
            e => return e,
        }
    }
    best
}

/// Why the command did not start (reported by [`spawn`]); [`SpawnError::exit_code`] maps it.
#[derive(Debug, thiserror::Error)]
pub enum SpawnError {
    /// No such program (127): looked up in `PATH` ("command not found", as a shell says),
    /// or named by a path with a `/` that does not exist ("No such file or directory":
    /// new-user pass 168, 5).
    #[error("{name}: {why}", name = .0, why = if .0.contains('/') { "No such file or directory" } else { "command not found" })]
    NotFound(String),
    /// The program file exists, but what its first line or ELF header names to run it does
    /// not (127, as `execve` says `ENOENT`; new-user pass nu15 N7: "command not found"
    /// sent the user looking for the script itself).
    #[error("{name}: {why}")]
    InterpreterNotFound {
        /// The program as given.
        name: String,
        /// What is missing, in words.
        why: String,
    },
    /// The program exists but may not be executed (126): not executable (no `x` bit), or
    /// on a filesystem mounted `noexec` (the words say which is the likely one, not a
    /// sandbox refusal: new-user pass 168, 5).
    #[error("{0}: permission denied (not executable: no x bit, or on a noexec mount)")]
    PermissionDenied(String),
    /// The program named by a path is a directory (126; new-user pass nu14: `cordon run
    /// -- /etc` said "permission denied", which is what `execve` returns for it).
    #[error("{0}: is a directory")]
    IsDirectory(String),
    /// `execve` failed otherwise (126).
    #[error("{name}: cannot execute: {source}")]
    CannotExecute {
        /// The program as given.
        name: String,
        /// The errno of `execve`.
        #[source]
        source: io::Error,
    },
    /// A step before exec failed (125); the message is complete.
    #[error("{0}")]
    Setup(String),
}

impl SpawnError {
    /// 127 not found, 126 not executable, 125 setup.
    pub fn exit_code(&self) -> i32 {
        match self {
            SpawnError::NotFound(_) | SpawnError::InterpreterNotFound { .. } => EXIT_NOTFOUND,
            SpawnError::PermissionDenied(_)
            | SpawnError::IsDirectory(_)
            | SpawnError::CannotExecute { .. } => EXIT_NOEXEC,
            SpawnError::Setup(_) => EXIT_SETUP,
        }
    }
}

/// Forks the command: the child runs `in_child` (last confinement steps that must happen
/// in the command's own process, e.g. on rung 2), resets its signals and execs. Returns
/// the child's pid once the exec succeeded (the child failed before or at exec otherwise,
/// and is reaped).
///
/// Errors: [`SpawnError`] (command not found, not executable, a failed step).
pub fn spawn(
    spec: &CommandSpec,
    in_child: impl FnOnce() -> Result<(), String>,
) -> Result<libc::pid_t, SpawnError> {
    let (r, w) =
        sys::pipe().map_err(|e| SpawnError::Setup(format!("sandbox setup failed: pipe: {e}")))?;
    // SAFETY: the helper and init are single-threaded, so the child may allocate and
    // use the Rust runtime until it execs or exits.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(SpawnError::Setup(format!(
            "sandbox setup failed: fork: {}",
            io::Error::last_os_error()
        )));
    }
    if pid == 0 {
        drop(r);
        // No capability reaches the command, whatever its parent kept (rung 1's init
        // keeps CAP_SYS_PTRACE for its supervisor): cleared after `in_child` (which on
        // rung 2 drops the bounding set, needing CAP_SETPCAP) and before the exec.
        let cleared = || sys::clear_caps().map_err(|e| format!("clearing capabilities: {e}"));
        if let Err(msg) = in_child().and_then(|()| cleared()) {
            let mut b = vec![2u8];
            b.extend_from_slice(msg.as_bytes());
            sys::write_all(w.as_raw_fd(), &b);
            exit_now(EXIT_SETUP);
        }
        reset_signals_for_exec();
        let errno = exec_search(spec);
        let mut b = vec![1u8];
        b.extend_from_slice(&errno.to_le_bytes());
        sys::write_all(w.as_raw_fd(), &b);
        exit_now(if errno == libc::ENOENT {
            EXIT_NOTFOUND
        } else {
            EXIT_NOEXEC
        });
    }
    drop(w);
    let mut buf = vec![0u8; 4096];
    let n = read_all(&r, &mut buf);
    if n == 0 {
        return Ok(pid);
    }
    // The child failed before or at exec and exits by itself: reap it.
    let mut status = 0;
    // SAFETY: `status` is a valid int; `pid` is our child.
    unsafe { libc::waitpid(pid, &mut status, 0) };
    let name = spec.name();
    Err(match buf[0] {
        1 if n >= 5 => match i32::from_le_bytes([buf[1], buf[2], buf[3], buf[4]]) {
            libc::ENOENT => match missing_interpreter(&name) {
                Some(why) => SpawnError::InterpreterNotFound { name, why },
                None => SpawnError::NotFound(name),
            },
            libc::EACCES if name.contains('/') && std::path::Path::new(&name).is_dir() => {
                SpawnError::IsDirectory(name)
            }
            libc::EACCES | libc::EPERM => SpawnError::PermissionDenied(name),
            errno => SpawnError::CannotExecute {
                name,
                source: io::Error::from_raw_os_error(errno),
            },
        },
        _ => SpawnError::Setup(String::from_utf8_lossy(&buf[1..n]).into_owned()),
    })
}

/// For a program given by path that exists although `execve` said `ENOENT`: what it
/// names to run it that is missing — the interpreter of its `#!` line (with a carriage
/// return at its end called out: a script saved with Windows line endings), or an ELF
/// program's loader. `None` when the path does not exist or is neither.
fn missing_interpreter(name: &str) -> Option<String> {
    use std::io::Read;
    if !name.contains('/') {
        return None;
    }
    let mut head = [0u8; 256];
    let mut f = std::fs::File::open(name).ok()?;
    let n = f.read(&mut head).ok()?;
    let head = &head[..n];
    if head.starts_with(b"\x7fELF") {
        return Some(
            "cannot execute: its program loader (the ELF interpreter it names) is not \
             there (built for another system, or a library path missing in the sandbox)"
                .into(),
        );
    }
    let line = head.strip_prefix(b"#!")?;
    let line = &line[..line.iter().position(|b| *b == b'\n').unwrap_or(line.len())];
    let text = String::from_utf8_lossy(line);
    let interp = text
        .trim_start_matches([' ', '\t'])
        .split([' ', '\t'])
        .next()?;
    let crlf = interp.ends_with('\r');
    Some(format!(
        "cannot execute: its interpreter {} (from its #! line) was not found{}",
        interp.trim_end_matches('\r'),
        if crlf {
            " — the line ends in a carriage return (Windows line endings: convert the file \
             with dos2unix)"
        } else {
            ""
        }
    ))
}

fn read_all(fd: &OwnedFd, buf: &mut [u8]) -> usize {
    let mut n = 0;
    while n < buf.len() {
        match sys::read(fd, &mut buf[n..]) {
            Ok(0) | Err(_) => break,
            Ok(k) => n += k,
        }
    }
    n
}

/// The direct children of every process, from `/proc/*/stat`.
fn process_table() -> Vec<(libc::pid_t, libc::pid_t)> {
    let mut out = Vec::new();
    let Ok(rd) = std::fs::read_dir("/proc") else {
        return out;
    };
    for e in rd.flatten() {
        let Some(pid) = e
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<libc::pid_t>().ok())
        else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // pid (comm) state ppid …; comm may contain spaces and parentheses.
        let Some(after) = stat.rfind(')').map(|i| &stat[i + 1..]) else {
            continue;
        };
        let mut it = after.split_whitespace();
        let _state = it.next();
        if let Some(ppid) = it.next().and_then(|s| s.parse().ok()) {
            out.push((pid, ppid));
        }
    }
    out
}

/// Rung 2: kills (SIGKILL) every descendant of this process and reaps them, repeating
/// until none is left (bounded). The caller is a child subreaper, so orphans come back to
/// it and are reaped here (a descendant cannot leave the subtree: when its parent dies it
/// is reparented to the nearest subreaper above it, at worst the caller). Returns the
/// number of processes killed.
pub fn kill_descendants() -> usize {
    // SAFETY: getpid has no preconditions.
    let me = unsafe { libc::getpid() };
    let mut killed = 0;
    for _ in 0..200 {
        let table = process_table();
        let mut desc = vec![me];
        let mut i = 0;
        while i < desc.len() {
            let p = desc[i];
            for (c, pp) in &table {
                if *pp == p && !desc.contains(c) {
                    desc.push(*c);
                }
            }
            i += 1;
        }
        desc.remove(0);
        // Reap whatever already exited.
        loop {
            let mut st = 0;
            // SAFETY: `st` is a valid int.
            if unsafe { libc::waitpid(-1, &mut st, libc::WNOHANG) } <= 0 {
                break;
            }
        }
        if desc.is_empty() {
            break;
        }
        for p in &desc {
            // SAFETY: kill has no memory-safety preconditions.
            if unsafe { libc::kill(*p, libc::SIGKILL) } == 0 {
                killed += 1;
            }
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    killed
}

/// The stages of [`try_userns_in_child`], as the child's exit code.
const PROBE_STAGES: [&str; 5] = [
    "unshare(CLONE_NEWUSER|CLONE_NEWNS|CLONE_NEWPID) failed",
    "writing /proc/self/setgroups failed",
    "writing /proc/self/uid_map failed (a root container without CAP_SETFCAP, or an LSM, forbids the identity mapping)",
    "writing /proc/self/gid_map failed",
    "a fresh /proc cannot be mounted (the host's /proc is partly covered, as in a container)",
];

/// For [`super::probe`]: can a child of this process do what rung 1 does first — create a
/// user + mount + pid namespace, map its own uid and gid, and mount a fresh `/proc` in the
/// new pid namespace? `Err(reason)` names the first step that failed, so `cordon status`
/// predicts what a run will find (issue 7 item 12).
///
/// Safe to call from a multi-threaded process: between fork and `_exit` the children only
/// make system calls (no allocation; the maps are formatted before the fork).
pub fn try_userns_in_child() -> Result<(), String> {
    // SAFETY: geteuid/getegid have no preconditions.
    let (uid, gid) = unsafe { (libc::geteuid(), libc::getegid()) };
    let uid_map = format!("{uid} {uid} 1\n");
    let gid_map = format!("{gid} {gid} 1\n");
    let (r, w) = sys::pipe().map_err(|e| format!("pipe: {e}"))?;
    // SAFETY: the child only makes system calls (see above) and ends with _exit.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(format!("fork: {}", io::Error::last_os_error()));
    }
    if pid == 0 {
        let fail = |stage: u8, e: io::Error| -> ! {
            let errno = e.raw_os_error().unwrap_or(0);
            let mut b = [0u8; 5];
            b[0] = stage;
            b[1..].copy_from_slice(&errno.to_le_bytes());
            sys::write_all(w.as_raw_fd(), &b);
            exit_now(1)
        };
        // SAFETY: unshare has no memory-safety preconditions.
        if unsafe { libc::unshare(libc::CLONE_NEWUSER | libc::CLONE_NEWNS | libc::CLONE_NEWPID) }
            != 0
        {
            fail(0, io::Error::last_os_error());
        }
        for (i, (file, data)) in [
            (c"/proc/self/setgroups", b"deny".as_slice()),
            (c"/proc/self/uid_map", uid_map.as_bytes()),
            (c"/proc/self/gid_map", gid_map.as_bytes()),
        ]
        .into_iter()
        .enumerate()
        {
            if let Err(e) = sys::write_file(file, data) {
                fail(1 + i as u8, e);
            }
        }
        // The first child of the new pid namespace is its init: only there can proc be
        // mounted for it.
        // SAFETY: as above; the grandchild only makes system calls.
        let init = unsafe { libc::fork() };
        if init < 0 {
            fail(0, io::Error::last_os_error());
        }
        if init == 0 {
            if let Err(e) = sys::new_fs(c"proc", &[], 0) {
                fail(4, e);
            }
            exit_now(0);
        }
        let mut status = 0;
        // SAFETY: `status` is a valid int; `init` is our child.
        unsafe { libc::waitpid(init, &mut status, 0) };
        exit_now(0);
    }
    drop(w);
    let mut status = 0;
    // SAFETY: `status` is a valid int; `pid` is our child.
    unsafe { libc::waitpid(pid, &mut status, 0) };
    let mut buf = [0u8; 5];
    let n = read_all(&r, &mut buf);
    if n < 5 {
        return Ok(());
    }
    let errno = i32::from_le_bytes([buf[1], buf[2], buf[3], buf[4]]);
    let stage = PROBE_STAGES
        .get(buf[0] as usize)
        .copied()
        .unwrap_or("user namespace probe failed");
    Err(format!("{stage}: {}", io::Error::from_raw_os_error(errno)))
}

/// What makes a standard descriptor a path handle, if anything (issue 7 item 8).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PathHandle {
    /// A directory: `openat(fd, "…")` reaches every file below it, past every mask.
    Directory,
    /// An `O_PATH` descriptor: usable with `openat`, `linkat(AT_EMPTY_PATH)`, `fchdir`, …
    OPath,
}

impl std::fmt::Display for PathHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            PathHandle::Directory => "a directory",
            PathHandle::OPath => "an O_PATH descriptor",
        })
    }
}

/// Standard input, output and error are data streams, never path handles: a directory (or
/// `O_PATH`) descriptor would let the command open files relative to it, past every mount
/// mask and Landlock rule (`cordon run -- cmd < ~` → `openat(0, ".ssh/id_ed25519")`).
///
/// Errors: a message naming the first such descriptor and what to do instead; the caller
/// refuses to run (exit 125). A closed descriptor is fine.
pub fn check_stdio() -> Result<(), String> {
    for (fd, name) in [
        (0, "standard input"),
        (1, "standard output"),
        (2, "standard error"),
    ] {
        let kind = match sys::status_flags(fd) {
            Err(_) => continue, // closed
            Ok(fl) if fl & libc::O_PATH != 0 => Some(PathHandle::OPath),
            Ok(_) => match sys::fstat(fd) {
                Ok(st) if st.st_mode & libc::S_IFMT == libc::S_IFDIR => Some(PathHandle::Directory),
                _ => None,
            },
        };
        if let Some(k) = kind {
            return Err(format!(
                "refusing to run: {name} (fd {fd}) is {k}, which would let the command open \
                 files relative to it past every sandbox rule; redirect it from or to a file \
                 or /dev/null instead"
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// nu15 N7: a script whose `#!` interpreter is missing names the interpreter (and a
    /// carriage return); a missing file, or a name without a path, says nothing here.
    #[test]
    fn a_missing_interpreter_is_named() {
        let d = tempfile::tempdir().unwrap();
        let s = d.path().join("s.sh");
        std::fs::write(&s, "#!/nonexistent/interp -e\necho hi\n").unwrap();
        let why = missing_interpreter(s.to_str().unwrap()).unwrap();
        assert!(why.contains("interpreter /nonexistent/interp "), "{why}");
        std::fs::write(&s, "#!/bin/bash\r\necho hi\r\n").unwrap();
        let why = missing_interpreter(s.to_str().unwrap()).unwrap();
        assert!(
            why.contains("/bin/bash ") && why.contains("carriage return"),
            "{why}"
        );
        assert_eq!(
            missing_interpreter(d.path().join("nope").to_str().unwrap()),
            None
        );
        assert_eq!(missing_interpreter("s.sh"), None);
        std::fs::write(&s, "echo no shebang\n").unwrap();
        assert_eq!(missing_interpreter(s.to_str().unwrap()), None);
    }
}
