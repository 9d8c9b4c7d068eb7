//! Running an [`ExecRequest`] for the loop: the exit status, cordon's timer, cancellation,
//! and a tail of stderr for classification (copied through to cordon's stderr as it
//! arrives).
//!
//! `--timeout` kills the child with SIGKILL. For the Linux helper that is the whole tree:
//! the helper is the supervisor of the command's pid namespace, and the namespace's
//! processes die with it. Without a sandbox (backend none) only the direct child is killed.

use crate::outcome::RunSignals;
use cordon_sandbox::{ExecRequest, HelperReport};
use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Bytes of stderr kept for classification.
pub const STDERR_TAIL: usize = 16 * 1024;

/// How to run.
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// Wall-clock limit; the tree is killed when it passes (outcome `timed-out`).
    pub timeout: Option<Duration>,
    /// Pass stderr through a pipe and keep its tail for classification. When false the
    /// command keeps cordon's stderr (e.g. a terminal: an interactive shell stays
    /// interactive) and classification uses structured signals only.
    pub capture_stderr: bool,
    /// Ask the Linux helper to print what it applied on stderr (`-v`).
    pub helper_verbose: bool,
}

/// Spawns `exec`, copies its stderr through (keeping a tail) when asked, forwards
/// SIGINT/SIGTERM/SIGHUP/SIGQUIT, enforces the timeout, and waits. For the Linux helper also
/// returns what it reported on its report pipe (what it applied, or why nothing ran).
///
/// Errors: the spawn's `io::Error` (`NotFound` → 127, `PermissionDenied` → 126).
pub fn run(
    exec: &ExecRequest,
    opts: &RunOptions,
) -> std::io::Result<(RunSignals, Option<HelperReport>)> {
    let build = |args: Vec<String>| {
        let mut cmd = Command::new(&exec.program);
        cmd.args(args)
            .current_dir(&exec.cwd)
            .env_clear()
            .envs(exec.env.iter().map(|(k, v)| (k, v)))
            .stderr(if opts.capture_stderr {
                Stdio::piped()
            } else {
                Stdio::inherit()
            });
        cmd
    };
    let sandboxed = exec.backend != cordon_policy::Backend::None;
    #[cfg(target_os = "linux")]
    if exec.backend == cordon_policy::Backend::LinuxHelper {
        // The helper reports what it applied (or why nothing ran) on a pipe the command
        // never holds.
        let mut args = exec.args.clone();
        if opts.helper_verbose
            && args.first().map(String::as_str) == Some(cordon_sandbox::linux::HELPER_SUBCOMMAND)
        {
            args.insert(1, "--report".into());
        }
        // R-H5: the helper says which limit ended the run on a pipe only it holds (the
        // command's own exit code 124 or stderr cannot forge it).
        let channel = cordon_sandbox::linux::limits::OutcomeChannel::new().ok();
        let build = |args: Vec<String>| {
            let mut cmd = build(args);
            if let Some(c) = &channel {
                let (k, v) = c.env();
                cmd.env(k, v);
            }
            cmd
        };
        // `cordon serve` running (and allowed): the helper is forked there instead.
        let served = cordon_sandbox::linux::server::connect()
            .and_then(|conn| run_served(conn, exec, args.clone(), opts, channel.as_ref()));
        let (mut sig, report) = match served {
            Some(r) => r?,
            None => cordon_sandbox::linux::spawn_reported(args, build, |child| {
                wait(Proc::Child(child), opts, sandboxed)
            })?,
        };
        sig.limit = channel
            .and_then(|c| c.read())
            .map(|l| l.as_str().to_string());
        match &report {
            Some(cordon_sandbox::linux::HelperOutcome::NotRun { reason }) => {
                sig.helper_not_run = Some(reason.clone());
            }
            Some(cordon_sandbox::linux::HelperOutcome::Applied(_)) => sig.helper_applied = true,
            None => {}
        }
        return Ok((sig, report));
    }
    let child = build(exec.args.clone()).spawn()?;
    Ok((wait(Proc::Child(child), opts, sandboxed)?, None))
}

/// The helper through `cordon serve`: same descriptors, cwd and environment as the
/// spawned helper would get. `None` when the server did not start it (the caller takes
/// the cold path; nothing ran).
#[cfg(target_os = "linux")]
fn run_served(
    conn: std::os::unix::net::UnixStream,
    exec: &ExecRequest,
    args: Vec<String>,
    opts: &RunOptions,
    channel: Option<&cordon_sandbox::linux::limits::OutcomeChannel>,
) -> Option<std::io::Result<(RunSignals, Option<HelperReport>)>> {
    use std::os::fd::AsRawFd;
    let mut env = exec.env.clone();
    let mut extra = Vec::new();
    if let Some(c) = channel {
        let (k, v) = c.env();
        env.retain(|(n, _)| *n != k);
        if let Ok(fd) = v.parse::<i32>() {
            extra.push(fd);
        }
        env.push((k, v));
    }
    let pipe = if opts.capture_stderr {
        let (r, w) = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC).ok()?;
        Some((std::fs::File::from(r), w))
    } else {
        None
    };
    let stderr_w = pipe.as_ref().map(|(_, w)| w.as_raw_fd());
    let (r, w) = match pipe {
        Some((r, w)) => (Some(r), Some(w)),
        None => (None, None),
    };
    let sandboxed = exec.backend != cordon_policy::Backend::None;
    let res = cordon_sandbox::linux::spawn_reported_server(
        conn,
        args,
        std::path::Path::new(&exec.cwd),
        env,
        stderr_w,
        &extra,
        move |child| {
            drop(w); // the server holds its copy
            wait(Proc::Served(child, r), opts, sandboxed)
        },
    );
    match res {
        Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => None,
        other => Some(other),
    }
}

/// A started helper: spawned, or forked by `cordon serve`.
enum Proc {
    Child(std::process::Child),
    #[cfg(target_os = "linux")]
    Served(
        cordon_sandbox::linux::server::ServerChild,
        Option<std::fs::File>,
    ),
}

impl Proc {
    fn id(&self) -> u32 {
        match self {
            Proc::Child(c) => c.id(),
            #[cfg(target_os = "linux")]
            Proc::Served(c, _) => c.id(),
        }
    }

    fn take_stderr(&mut self) -> Option<Box<dyn Read + Send>> {
        match self {
            Proc::Child(c) => c.stderr.take().map(|p| Box::new(p) as Box<dyn Read + Send>),
            #[cfg(target_os = "linux")]
            Proc::Served(_, r) => r.take().map(|p| Box::new(p) as Box<dyn Read + Send>),
        }
    }

    /// Blocks until it exited, without releasing its pid.
    fn wait_exited(&mut self) -> std::io::Result<()> {
        match self {
            Proc::Child(c) => wait_exited(c),
            #[cfg(target_os = "linux")]
            Proc::Served(c, _) => c.wait().map(|_| ()),
        }
    }

    fn wait(&mut self) -> std::io::Result<std::process::ExitStatus> {
        match self {
            Proc::Child(c) => c.wait(),
            #[cfg(target_os = "linux")]
            Proc::Served(c, _) => {
                use std::os::unix::process::ExitStatusExt;
                c.wait().map(std::process::ExitStatus::from_raw)
            }
        }
    }
}

/// Waits for `child`: copies its stderr through (keeping a tail), forwards signals,
/// enforces the timeout.
fn wait(mut child: Proc, opts: &RunOptions, sandboxed: bool) -> std::io::Result<RunSignals> {
    let tail = Arc::new(Mutex::new(Vec::<u8>::new()));
    let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
    let tee = child.take_stderr().map(|mut pipe| {
        let tail = Arc::clone(&tail);
        std::thread::spawn(move || {
            let mut buf = [0u8; 8192];
            let mut err = std::io::stderr();
            loop {
                match pipe.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => {
                        let _ = err.write_all(&buf[..n]);
                        let _ = err.flush();
                        if let Ok(mut t) = tail.lock() {
                            t.extend_from_slice(&buf[..n]);
                            if t.len() > STDERR_TAIL {
                                let cut = t.len() - STDERR_TAIL;
                                t.drain(..cut);
                            }
                        }
                    }
                }
            }
            let _ = done_tx.send(());
        })
    });
    let cancelled = Arc::new(Mutex::new(None::<String>));
    #[cfg(unix)]
    let forwarder = forward_signals(child.id(), Arc::clone(&cancelled));
    // No polling on the launch path: block until the child exits. With a timeout, a timer
    // thread kills it; the child is only reaped after the timer has been told it exited,
    // so the pid it kills cannot have been reused.
    let timed_out = Arc::new(Mutex::new(None::<String>));
    let timer = opts.timeout.map(|t| {
        let (tx, rx) = std::sync::mpsc::channel::<()>();
        let pid = child.id();
        let timed_out = Arc::clone(&timed_out);
        let h = std::thread::spawn(move || {
            if let Err(std::sync::mpsc::RecvTimeoutError::Timeout) = rx.recv_timeout(t) {
                kill_unreaped(pid);
                if let Ok(mut g) = timed_out.lock() {
                    *g = Some(humantime::format_duration(t).to_string());
                }
            }
        });
        (tx, h)
    });
    child.wait_exited()?;
    if let Some((tx, h)) = timer {
        let _ = tx.send(());
        let _ = h.join();
    }
    let status = child.wait()?;
    let timed_out = timed_out.lock().ok().and_then(|g| g.clone());
    #[cfg(unix)]
    if let Some(h) = forwarder {
        h.close();
    }
    // Wait briefly for the rest of stderr; a leftover process holding the pipe (possible
    // only without a sandbox) must not hold cordon.
    if let Some(t) = tee {
        if done_rx.recv_timeout(Duration::from_millis(500)).is_ok() {
            let _ = t.join();
        }
    }
    let stderr_tail = tail
        .lock()
        .map(|t| String::from_utf8_lossy(&t).into_owned())
        .unwrap_or_default();
    #[cfg(unix)]
    let (code, signal) = {
        use std::os::unix::process::ExitStatusExt;
        (status.code(), status.signal())
    };
    #[cfg(not(unix))]
    let (code, signal) = (status.code(), None);
    let cancelled = cancelled.lock().ok().and_then(|c| c.clone());
    Ok(RunSignals {
        code,
        signal,
        timed_out,
        cancelled,
        limit: None,
        stderr_tail,
        sandboxed,
        helper_not_run: None,
        helper_applied: false,
    })
}

/// Blocks until `child` has exited, without reaping it (`waitid(WNOWAIT)`): its pid stays
/// reserved until [`std::process::Child::wait`] reaps it.
#[cfg(unix)]
fn wait_exited(child: &std::process::Child) -> std::io::Result<()> {
    use nix::sys::wait::{waitid, Id, WaitPidFlag};
    let pid = nix::unistd::Pid::from_raw(child.id() as i32);
    loop {
        match waitid(Id::Pid(pid), WaitPidFlag::WEXITED | WaitPidFlag::WNOWAIT) {
            Ok(_) => return Ok(()),
            Err(nix::errno::Errno::EINTR) => continue,
            Err(e) => return Err(e.into()),
        }
    }
}

#[cfg(not(unix))]
fn wait_exited(_child: &std::process::Child) -> std::io::Result<()> {
    Ok(())
}

/// SIGKILL to a child that has not been reaped yet (see [`wait_exited`]).
fn kill_unreaped(pid: u32) {
    #[cfg(unix)]
    let _ = nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid as i32),
        nix::sys::signal::Signal::SIGKILL,
    );
    #[cfg(not(unix))]
    let _ = pid;
}

#[cfg(unix)]
fn forward_signals(
    pid: u32,
    cancelled: Arc<Mutex<Option<String>>>,
) -> Option<signal_hook::iterator::Handle> {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGQUIT, SIGTERM};
    let mut signals =
        signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP, SIGQUIT]).ok()?;
    let handle = signals.handle();
    std::thread::spawn(move || {
        for sig in signals.forever() {
            if let Ok(s) = nix::sys::signal::Signal::try_from(sig) {
                if let Ok(mut c) = cancelled.lock() {
                    c.get_or_insert_with(|| format!("cancelled by {s}"));
                }
                let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid as i32), s);
            }
        }
    });
    Some(handle)
}
