//! Spawning an [`ExecRequest`]: the child's exit status, with signals forwarded.

use crate::ExecRequest;
use serde::Serialize;
use std::io;
use std::process::{Command, ExitStatus};

/// The exit codes cordon itself gives, like `env`/`timeout` — defined once, here, for the
/// CLI and the Linux helper. Every other code is the command's own (`128 + N` when it was
/// killed by signal N).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum CordonExit {
    /// 125: cordon failed or refused (bad usage, unmet guarantee, setup failure); nothing ran.
    Failed,
    /// 126: the command exists but cannot be executed.
    CannotExecute,
    /// 127: the command was not found.
    NotFound,
}

impl CordonExit {
    /// The code as a process exit status byte.
    pub const fn code(self) -> u8 {
        match self {
            CordonExit::Failed => 125,
            CordonExit::CannotExecute => 126,
            CordonExit::NotFound => 127,
        }
    }

    /// The code as the `i32` that `waitpid`/`std::process::exit` use.
    pub const fn status(self) -> i32 {
        self.code() as i32
    }
}

/// How a spawned command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct RunStatus {
    /// Exit code, when it exited normally.
    pub code: Option<i32>,
    /// Terminating signal number, when killed by a signal.
    pub signal: Option<i32>,
}

impl RunStatus {
    /// The exit code a shell would report: the code, or 128+signal (like `env`/`timeout`).
    pub fn shell_code(&self) -> i32 {
        match (self.code, self.signal) {
            (Some(c), _) => c,
            (None, Some(s)) => 128 + s,
            (None, None) => CordonExit::Failed.status(),
        }
    }

    fn from_status(s: ExitStatus) -> RunStatus {
        #[cfg(unix)]
        {
            use std::os::unix::process::ExitStatusExt;
            RunStatus {
                code: s.code(),
                signal: s.signal(),
            }
        }
        #[cfg(not(unix))]
        {
            RunStatus {
                code: s.code(),
                signal: None,
            }
        }
    }
}

/// Spawns `exec` (program, args, cwd and exactly `exec.env`), forwards SIGINT, SIGTERM,
/// SIGHUP and SIGQUIT to it while it runs, and waits.
///
/// Errors: the spawn's `io::Error` (`NotFound` → the caller reports 127,
/// `PermissionDenied` → 126).
pub fn run(exec: &ExecRequest) -> io::Result<RunStatus> {
    #[cfg(unix)]
    seatbelt_fds(exec)?;
    let mut cmd = exec.command();
    #[cfg(unix)]
    if exec.backend == cordon_policy::Backend::None {
        exec_like_execvp(&mut cmd);
    }
    wait_forwarding(cmd.spawn()?)
}

/// Makes `cmd` start its program as `execvp` does, which runs an executable file the
/// kernel cannot execute (`ENOEXEC`: a script without `#!`) with `/bin/sh`, as `env`,
/// `timeout` and the shells do (new-user pass nu27, F1: the unconfined path said "Exec
/// format error" and exited 125). The standard library uses `posix_spawn`, which has no
/// such fallback, unless the command has a `pre_exec` hook; it then forks and calls
/// `execvp`.
#[cfg(unix)]
pub fn exec_like_execvp(cmd: &mut Command) {
    use std::os::unix::process::CommandExt;
    // SAFETY: the hook does nothing, so it is trivially async-signal-safe.
    unsafe { cmd.pre_exec(|| Ok(())) };
}

/// What the helper reported: what it applied, or why nothing ran
/// ([`crate::linux::HelperOutcome`] on Linux).
#[cfg(target_os = "linux")]
pub type HelperReport = crate::linux::HelperOutcome;
/// What the helper reported it applied (no helper on this platform).
#[cfg(not(target_os = "linux"))]
pub type HelperReport = serde_json::Value;

/// [`run`], and for the Linux helper also what it really applied: the helper writes its
/// report to a pipe only cordon holds (`--report-fd`), closed before the command starts, so
/// the command can neither forge nor suppress it. `None` for other backends, or when the
/// helper applied nothing (it refused or failed; its message is on stderr).
pub fn run_reported(exec: &ExecRequest) -> io::Result<(RunStatus, Option<HelperReport>)> {
    #[cfg(target_os = "linux")]
    if exec.backend == cordon_policy::Backend::LinuxHelper {
        return crate::linux::spawn_reported(
            exec.args.clone(),
            &[],
            |args| exec.command_with(&args),
            wait_forwarding,
        );
    }
    Ok((run(exec)?, None))
}

fn wait_forwarding(mut child: std::process::Child) -> io::Result<RunStatus> {
    #[cfg(unix)]
    let forwarder = forward_signals(child.id(), |_| {});
    let status = child.wait();
    #[cfg(unix)]
    if let Some(h) = forwarder {
        h.close();
    }
    Ok(RunStatus::from_status(status?))
}

/// Replaces the current process with `exec` (program, args, cwd, exactly `exec.env`).
/// Returns only on failure, with the error (`NotFound` → 127, `PermissionDenied` → 126).
#[cfg(unix)]
pub fn exec_replace(exec: &ExecRequest) -> io::Error {
    use std::os::unix::process::CommandExt;
    if let Err(e) = seatbelt_fds(exec) {
        return e;
    }
    exec.command().exec()
}

/// Seatbelt checks paths at open time: descriptors above 2 that cordon inherited must not
/// reach the command (the Linux helper closes its own). Fails closed.
#[cfg(unix)]
fn seatbelt_fds(exec: &ExecRequest) -> io::Result<()> {
    if exec.backend == cordon_policy::Backend::Seatbelt {
        crate::seatbelt::cloexec_inherited_fds()?;
    }
    Ok(())
}

/// The signals cordon passes on to the command it runs — from `cordon run` to the helper,
/// from the helper to the sandbox's init, from init to the command — instead of being
/// ended by them: all that a caller sends to end or steer a command. One left out ended
/// cordon by its default action, with no report (attack pass 175 F3, new-user pass 176:
/// `SIGUSR1`, `SIGUSR2`, `SIGALRM`; `SIGCONT` did not resume a command that stopped
/// itself).
#[cfg(unix)]
pub const FORWARDED_SIGNALS: [libc::c_int; 8] = [
    libc::SIGINT,
    libc::SIGTERM,
    libc::SIGHUP,
    libc::SIGQUIT,
    libc::SIGUSR1,
    libc::SIGUSR2,
    libc::SIGALRM,
    libc::SIGCONT,
];

/// Of [`FORWARDED_SIGNALS`], those that ask for the run to end (the run is `cancelled`;
/// init follows each with `SIGCONT`, as `timeout` does); the others are the command's to
/// interpret.
#[cfg(unix)]
pub const ENDING_SIGNALS: [libc::c_int; 4] =
    [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT];

/// Passes each of [`FORWARDED_SIGNALS`] this process receives on to `pid`, from a thread
/// of its own, after calling `seen` with it. `None`: the handlers could not be installed.
/// Closing the returned handle ends the thread.
///
/// A signal the kernel sent to the terminal's foreground process group (`SI_KERNEL`: a
/// `^C`, a `^\`, or the hangup of a session leader that exited) is seen but not passed on
/// when `pid` is in this process's group: the command, in the same group, got it itself;
/// a hangup sent to cordon as the session leader is passed on (the group did not get it) — as init and
/// the helper already judge it (`supervise_inner`). Passed on, one `^C` reached the command
/// twice (new-user pass 180, #1: a Python script's handler ran twice, its traceback cut
/// off). A command in another group (launched by `cordon serve`) gets it only from here.
#[cfg(unix)]
pub fn forward_signals(
    pid: u32,
    seen: impl Fn(libc::c_int) + Send + 'static,
) -> Option<signal_hook::iterator::Handle> {
    use signal_hook::iterator::{exfiltrator::WithOrigin, SignalsInfo};
    use signal_hook::low_level::siginfo::Cause;
    let mut signals = SignalsInfo::<WithOrigin>::new(FORWARDED_SIGNALS).ok()?;
    let handle = signals.handle();
    std::thread::spawn(move || {
        let target = nix::unistd::Pid::from_raw(pid as i32);
        for origin in signals.forever() {
            let sig = origin.signal;
            if let Ok(s) = nix::sys::signal::Signal::try_from(sig) {
                seen(sig);
                // A hangup's SIGHUP and SIGCONT go to the session leader alone (the
                // terminal's other signals, and the SIGHUP of a leader that exited, to the
                // whole foreground group): cordon as the leader (`script -c 'cordon run
                // …'`, `ssh -t`) passes them on, or a closed terminal left the command
                // running (attack pass 183, F1).
                let to_leader_only = (sig == libc::SIGHUP || sig == libc::SIGCONT)
                    && nix::unistd::getsid(None).ok() == Some(nix::unistd::getpid());
                let from_terminal = matches!(origin.cause, Cause::Kernel)
                    && !to_leader_only
                    && nix::unistd::getpgid(Some(target)).ok() == Some(nix::unistd::getpgrp());
                if !from_terminal {
                    let _ = nix::sys::signal::kill(target, s);
                }
            }
        }
    });
    Some(handle)
}

/// Restores `SIGCHLD` to its default action: a parent that ignores it (some daemons and
/// harnesses do; the disposition survives `fork` and `execve`) would have the kernel reap
/// cordon's children itself, so no wait would ever see the helper or the command end, and
/// cordon would hang with the post-run sweep never made (attack pass 35, L1). Call it first
/// thing in `main`: the helper, init and the command inherit the default.
#[cfg(unix)]
pub fn restore_default_sigchld() {
    use nix::sys::signal::{signal, SigHandler, Signal};
    // SAFETY: installing SIG_DFL (not a handler function) cannot run code in signal
    // context; called first thing in `main`, before any thread is spawned.
    let _ = unsafe { signal(Signal::SIGCHLD, SigHandler::SigDfl) };
}

/// Ignores `SIGPIPE` from here on, so that a write to a pipe nobody reads fails with
/// `EPIPE` instead of killing the process: for the run report, written after the command
/// ended to a descriptor the caller chose (`--json-fd`), where a reader that went away
/// must give cordon's documented exit 125 and a message, not a silent death by signal
/// (new-user pass nu18 F1: exit 141 and nothing said).
#[cfg(unix)]
pub fn ignore_sigpipe() {
    use nix::sys::signal::{signal, SigHandler, Signal};
    // SAFETY: installing SIG_IGN (not a handler function) cannot run code in signal
    // context.
    let _ = unsafe { signal(Signal::SIGPIPE, SigHandler::SigIgn) };
}

/// Restores `SIGPIPE` to its default action. Rust's runtime sets it to
/// "ignore" at start-up. A CLI whose output is piped into `head` should end quietly like
/// other Unix tools instead of failing on `EPIPE`. Call it first thing in `main`.
#[cfg(unix)]
pub fn restore_default_sigpipe() {
    use nix::sys::signal::{signal, SigHandler, Signal};
    // SAFETY: installing SIG_DFL (not a handler function) cannot run code in signal
    // context; called before any thread is spawned.
    let _ = unsafe { signal(Signal::SIGPIPE, SigHandler::SigDfl) };
}
