//! The cold path's helper forked from the calling process instead of executed (issue 12).
//!
//! `cordon run` without a server used to `execve` itself as `cordon __sandbox-helper …`:
//! the whole binary loaded, relocated and initialised a second time (glibc's start-up alone
//! is ~1 ms of CPU on a VM that traps `cpuid`), then the payload decoded. When the caller
//! is single-threaded and the helper executable *is* the running one, the same helper code
//! runs in a `fork` of the caller instead: what it receives is exactly what the executed
//! helper would (the argument list, the environment, the working directory, descriptors
//! 0–2, the report pipe, the payload descriptor and the side channels at their numbers —
//! every other descriptor closed, signal state reset), so confinement and report are the
//! same; only the second program start is gone. `cordon serve` forks its per-command
//! helper the same way ([`super::server`]).
//!
//! Not taken (the caller executes the helper as before) when the process has more than
//! one thread (a fork of a multi-threaded process may only call async-signal-safe code,
//! and the helper does much more), when the helper program is another file (a harness's
//! own helper binary, or this binary replaced on disk since it started), or when the
//! working directory is not a directory (the spawn's error is the one reported).

use super::{helper, process, server, sys, HelperOutcome, HELPER_SUBCOMMAND};
use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::fs::MetadataExt;
use std::path::Path;

/// A helper forked by [`spawn_reported_forked`], seen from the caller.
#[derive(Debug)]
pub struct ForkedHelper {
    pid: libc::pid_t,
    status: Option<i32>,
}

impl ForkedHelper {
    /// The helper's pid (signals sent to it are forwarded to the command).
    pub fn id(&self) -> u32 {
        self.pid as u32
    }

    /// Blocks until the helper exited, without reaping it (`waitid(WNOWAIT)`): its pid
    /// stays reserved until [`ForkedHelper::wait`].
    ///
    /// Errors: `waitid` failed other than by `EINTR`.
    pub fn wait_exited(&self) -> io::Result<()> {
        if self.status.is_some() {
            return Ok(());
        }
        super::sys::wait_exited_unreaped(self.pid)
    }

    /// Reaps the helper: its raw wait status (as `waitpid` gives it).
    ///
    /// Errors: `waitpid` failed other than by `EINTR`.
    pub fn wait(&mut self) -> io::Result<i32> {
        if let Some(s) = self.status {
            return Ok(s);
        }
        loop {
            let mut status = 0;
            // SAFETY: `status` is valid for writes; the pid is our child.
            let r = unsafe { libc::waitpid(self.pid, &mut status, 0) };
            if r == self.pid {
                self.status = Some(status);
                return Ok(status);
            }
            let e = io::Error::last_os_error();
            if e.raw_os_error() != Some(libc::EINTR) {
                return Err(e);
            }
        }
    }
}

/// Whether the helper `program` can be forked from this process instead of executed:
/// this process has one thread, `program` is the file this process runs (same device and
/// inode as `/proc/self/exe`) and `cwd` is a directory.
pub fn eligible(program: &Path, cwd: &Path) -> bool {
    single_threaded() && same_executable(program) && cwd.is_dir()
}

fn single_threaded() -> bool {
    std::fs::read_dir("/proc/self/task").is_ok_and(|d| d.take(2).count() == 1)
}

fn same_executable(program: &Path) -> bool {
    match (
        std::fs::metadata(program),
        std::fs::metadata("/proc/self/exe"),
    ) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

/// [`super::spawn_reported`] with the helper forked from this process ([`eligible`] must
/// hold): `args` as the helper would get them (starting with [`HELPER_SUBCOMMAND`]), with
/// this process's stdin and stdout, `stderr` (or this process's) as its stderr, the
/// payload descriptor named in `args`, the report pipe and `extra` descriptors at their
/// numbers, `cwd` and exactly `env`; in a process group of its own when `own_group`
/// (as `Command::process_group(0)` would). `wait` gets the [`ForkedHelper`]. `payload`:
/// the object the payload descriptor of `args` was encoded from
/// ([`crate::ExecRequest::payload`]), which the helper then takes as it is instead of
/// decoding the descriptor's copy.
///
/// Errors: pipe creation or `fork` failed (nothing ran).
#[allow(clippy::too_many_arguments)]
pub fn spawn_reported_forked<T>(
    mut args: Vec<String>,
    payload: Option<&cordon_policy::HelperPayload>,
    cwd: &Path,
    env: Vec<(String, String)>,
    stderr: Option<RawFd>,
    extra: &[RawFd],
    own_group: bool,
    wait: impl FnOnce(ForkedHelper) -> io::Result<T>,
) -> io::Result<(T, Option<HelperOutcome>)> {
    let (r, w) = sys::pipe()?;
    let at = usize::from(args.first().map(String::as_str) == Some(HELPER_SUBCOMMAND));
    args.insert(at, "--report-fd".into());
    args.insert(at + 1, w.as_raw_fd().to_string());
    let mut keep = vec![0, 1, 2, w.as_raw_fd()];
    keep.extend(super::payload_fd_of(&args));
    keep.extend_from_slice(extra);
    // Everything the child needs, built before the fork.
    let helper_args: Vec<std::ffi::OsString> = args.into_iter().skip(at).map(Into::into).collect();
    let cwd = cwd.to_path_buf();
    // Nothing buffered here may be written twice (once by each process).
    {
        use std::io::Write as _;
        let _ = io::stdout().flush();
        let _ = io::stderr().flush();
    }
    // The helper checks its parent against this pid, not against whoever it has when it
    // looks: a caller killed before the helper set its parent-death signal has left it to
    // a reaper (check pass 170: the command started after `cordon run` was SIGKILLed).
    super::helper::forking_a_helper();
    // SAFETY: this process is single-threaded ([`eligible`]), so the child may run any
    // code; it ends with `_exit` and never returns into the caller's frames.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(io::Error::last_os_error());
    }
    if pid == 0 {
        // SAFETY: setpgid has no memory-safety preconditions.
        if own_group && unsafe { libc::setpgid(0, 0) } != 0 {
            // SAFETY: as below.
            unsafe { libc::_exit(process::EXIT_SETUP) };
        }
        // Cloned here, in the child's copy of this memory: the caller pays nothing.
        let code = become_helper(helper_args, payload.cloned(), &cwd, &env, stderr, &keep);
        // SAFETY: `_exit` ends this forked process without running the caller's exit
        // handlers or destructors (the executed helper's would not run here either).
        unsafe { libc::_exit(code) };
    }
    server::record_cold();
    drop(w);
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(sys::read_to_end(&r, 1024 * 1024).unwrap_or_default());
    });
    let out = wait(ForkedHelper { pid, status: None })?;
    let bytes = rx
        .recv_timeout(std::time::Duration::from_secs(2))
        .unwrap_or_default();
    Ok((out, super::parse_report(&bytes)))
}

/// In the forked child: what `execve` of the helper would have given it (descriptors,
/// cwd, environment, signal state), then the helper. Returns its exit code.
fn become_helper(
    args: Vec<std::ffi::OsString>,
    payload: Option<cordon_policy::HelperPayload>,
    cwd: &Path,
    env: &[(String, String)],
    stderr: Option<RawFd>,
    keep: &[RawFd],
) -> i32 {
    let fail = |what: &str, e: io::Error| -> i32 {
        eprintln!("cordon: refusing to run unconfined: starting the helper: {what}: {e}");
        process::EXIT_SETUP
    };
    if let Some(fd) = stderr {
        // SAFETY: dup2 onto 2; the previous stderr is closed, `fd` stays open.
        if unsafe { libc::dup2(fd, 2) } < 0 {
            return fail("dup2", io::Error::last_os_error());
        }
    }
    server::close_all_but(keep);
    if let Err(e) = std::env::set_current_dir(cwd) {
        return fail("cwd", e);
    }
    // Single-threaded: nothing reads the environment concurrently.
    for (k, _) in std::env::vars_os() {
        std::env::remove_var(k);
    }
    for (k, v) in env {
        if !k.is_empty() && !k.contains('=') && !k.contains('\0') && !v.contains('\0') {
            std::env::set_var(k, v);
        }
    }
    signals_as_after_exec();
    match payload {
        Some(p) => helper::main_forked(args, p),
        None => helper::main(args),
    }
}

/// The signal state `execve` of a Rust program would leave: an empty mask (as the
/// spawning `Command` sets it), every caught signal back to its default (ignored ones
/// stay ignored, as across `execve`: `nohup cordon run …` keeps SIGHUP ignored), and
/// `SIGPIPE` ignored (the Rust runtime's start-up).
fn signals_as_after_exec() {
    // SAFETY: an all-zero sigset_t is valid, and sigemptyset makes it the empty set.
    let mut empty: libc::sigset_t = unsafe { std::mem::zeroed() };
    // SAFETY: `empty` is a valid set; no memory-safety preconditions otherwise.
    unsafe {
        libc::sigemptyset(&mut empty);
        libc::sigprocmask(libc::SIG_SETMASK, &empty, std::ptr::null_mut());
    }
    for sig in 1..libc::SIGRTMIN() {
        if sig == libc::SIGKILL || sig == libc::SIGSTOP {
            continue;
        }
        // SAFETY: an all-zero sigaction is a valid value for sigaction to fill.
        let mut old: libc::sigaction = unsafe { std::mem::zeroed() };
        // SAFETY: querying (null new action) into a valid `old`.
        if unsafe { libc::sigaction(sig, std::ptr::null(), &mut old) } != 0 {
            continue;
        }
        if old.sa_sigaction != libc::SIG_DFL && old.sa_sigaction != libc::SIG_IGN {
            // SAFETY: restoring the default disposition of a valid signal number.
            unsafe { libc::signal(sig, libc::SIG_DFL) };
        }
    }
    // SAFETY: as above.
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_IGN) };
}
