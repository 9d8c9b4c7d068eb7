//! Running an [`ExecRequest`] for the loop: the exit status, cordon's timer, cancellation,
//! and a tail of stderr for classification (copied through to cordon's stderr as it
//! arrives).
//!
//! `--timeout` kills the child with SIGKILL. For the Linux helper that is the whole tree:
//! the helper is the supervisor of the command's pid namespace, and the namespace's
//! processes die with it. Without a sandbox (backend none) only the direct child is killed.

use crate::outcome::RunSignals;
pub use cordon_proxy::ask::{HostAsk, HostReply};
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

/// The command's stderr pipe: read, and (on Unix) polled by the relay.
#[cfg(unix)]
trait StderrPipe: Read + Send + std::os::fd::AsFd {}
#[cfg(unix)]
impl<T: Read + Send + std::os::fd::AsFd> StderrPipe for T {}
#[cfg(not(unix))]
trait StderrPipe: Read + Send {}
#[cfg(not(unix))]
impl<T: Read + Send> StderrPipe for T {}

/// A stream's unfinished last line, held back so that another stream's output is not
/// spliced into it (new-user pass nu21, K3: curl writes its stderr a byte at a time, and
/// its stdout landed inside a line: `curl: (50006) …`). Used by cordon's stderr relay and
/// by the harness, which merges a session's stdout and stderr.
#[derive(Debug, Default)]
pub(crate) struct LineHold(Vec<u8>);

impl LineHold {
    /// The longest unfinished line held back: past it, everything goes out.
    pub(crate) const CAP: usize = 4096;

    /// Adds `bytes`; what may go out now: up to and including the last newline, or all of
    /// it once more than [`LineHold::CAP`] bytes are held.
    pub(crate) fn push(&mut self, bytes: &[u8]) -> Vec<u8> {
        self.0.extend_from_slice(bytes);
        let cut = match self.0.iter().rposition(|b| *b == b'\n') {
            Some(i) => i + 1,
            None if self.0.len() > Self::CAP => self.0.len(),
            None => 0,
        };
        self.0.drain(..cut).collect()
    }

    /// Everything held, let go (a reader asks, the stream paused or ended).
    pub(crate) fn take(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.0)
    }

    /// Whether nothing is held.
    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// How long the stderr relay holds an unfinished line while the command writes nothing.
#[cfg(unix)]
const HOLD_LINE: std::time::Duration = std::time::Duration::from_millis(20);

/// Whether `pipe` has something to read (or its end) within `wait`.
#[cfg(unix)]
fn readable_within(pipe: &dyn StderrPipe, wait: std::time::Duration) -> bool {
    use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
    let mut fds = [PollFd::new(pipe.as_fd(), PollFlags::POLLIN)];
    let ms = u16::try_from(wait.as_millis()).unwrap_or(u16::MAX);
    poll(&mut fds, PollTimeout::from(ms)).is_ok_and(|n| n > 0)
}

/// Receives captured stderr chunk by chunk ([`RunIo::stderr_sink`]).
pub type StderrSink = Box<dyn FnMut(&[u8]) + Send>;

/// Changes the command just before it is spawned ([`RunIo::prepare`]).
pub type PrepareCommand = Box<dyn FnOnce(&mut Command) + Send>;

/// Where a run's standard streams go and who may steer it, for callers other than the
/// CLI (the library's process sessions, [`crate::harness`]). The default is the CLI's: the
/// caller's stdin and stdout, stderr as [`RunOptions::capture_stderr`] says, copied to
/// cordon's stderr, no control handle.
#[derive(Default)]
pub struct RunIo {
    /// The command's stdin (`None`: inherited).
    pub stdin: Option<Stdio>,
    /// The command's stdout (`None`: inherited).
    pub stdout: Option<Stdio>,
    /// The command's stderr when it is not captured (`None`: inherited).
    pub stderr: Option<Stdio>,
    /// Receives the captured stderr, chunk by chunk, instead of cordon's own stderr.
    pub stderr_sink: Option<StderrSink>,
    /// Changes the command just before it is spawned (e.g. a new session with a
    /// controlling terminal: `cordon_sandbox::linux::pty::attach_session`).
    pub prepare: Option<PrepareCommand>,
    /// Told once the process exists: the handle that signals or kills it (see
    /// [`RunControl`]).
    pub on_spawn: Option<Box<dyn FnOnce(RunControl) + Send>>,
    /// Output to classify when stderr is not captured (e.g. a terminal's last bytes), read
    /// once the process tree has ended.
    pub tail: Option<Box<dyn FnOnce() -> String + Send>>,
}

impl std::fmt::Debug for RunIo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunIo").finish_non_exhaustive()
    }
}

/// What a [`RunControl`] asks of the running process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Control {
    /// The process has exited (sent by the runner itself).
    Exited,
    /// Deliver this signal.
    Signal(i32),
    /// Kill the tree (SIGKILL): outcome `cancelled`, with this reason.
    Kill,
}

/// Signals a running process safely: every signal goes through the runner's own timer
/// thread, which stops acting once the process has exited and before it is reaped, so a
/// signal can never reach a reused pid. Cheap to clone; useless after the run ended.
#[derive(Debug, Clone)]
pub struct RunControl {
    pid: u32,
    tx: std::sync::mpsc::Sender<Control>,
}

impl RunControl {
    /// The spawned process (the Linux helper, the supervisor of the command's pid
    /// namespace, for a sandboxed run).
    pub fn pid(&self) -> u32 {
        self.pid
    }
    /// Sends `signal` (a `libc::SIG*` number). The Linux helper forwards it to the
    /// command. Returns false when the run has already ended.
    pub fn signal(&self, signal: i32) -> bool {
        self.tx.send(Control::Signal(signal)).is_ok()
    }
    /// Kills the whole process tree (SIGKILL to the helper, whose pid namespace dies with
    /// it); the outcome is `cancelled` ("killed by the caller"). False when already ended.
    pub fn kill(&self) -> bool {
        self.tx.send(Control::Kill).is_ok()
    }
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
    run_with(exec, opts, RunIo::default())
}

/// [`run`] with the streams and control of `io` (the library's process sessions).
/// Signals reaching cordon itself are forwarded only when `io` is the default (the CLI).
///
/// Errors: as [`run`].
pub fn run_with(
    exec: &ExecRequest,
    opts: &RunOptions,
    io: RunIo,
) -> std::io::Result<(RunSignals, Option<HelperReport>)> {
    run_asking(exec, opts, io, None)
}

/// Answers the managed network's questions about hosts no rule names (R-P4 `ask`), on the
/// thread that called [`run_asking`].
pub type HostAsker<'a> = dyn FnMut(&HostAsk) -> HostReply + 'a;

/// [`run_with`], and while the command runs `asker` (when given) answers the proxy's
/// questions about destinations no `network.allow`/`deny` rule names, on this thread (the
/// approver need not be shared with another thread). Without an asker they are denied at
/// once. Each question waits at most [`cordon_sandbox::linux::ASK_TIMEOUT`] for its answer.
///
/// Errors: as [`run`].
pub fn run_asking(
    exec: &ExecRequest,
    opts: &RunOptions,
    mut io: RunIo,
    asker: Option<&mut HostAsker<'_>>,
) -> std::io::Result<(RunSignals, Option<HelperReport>)> {
    #[cfg(not(target_os = "linux"))]
    let _ = asker;
    let forward = io.stdin.is_none() && io.stdout.is_none() && io.on_spawn.is_none();
    #[cfg(target_os = "linux")]
    let default_stderr = io.stderr.is_none();
    let mut streams = (io.stdin.take(), io.stdout.take(), io.stderr.take());
    let prepare = io.prepare.take();
    let prepare_none = prepare.is_none();
    let build = move |args: Vec<String>| {
        let mut cmd = exec.command_with(&args);
        cmd.stderr(if opts.capture_stderr {
            Stdio::piped()
        } else {
            streams.2.take().unwrap_or_else(Stdio::inherit)
        });
        if let Some(s) = streams.0.take() {
            cmd.stdin(s);
        }
        if let Some(s) = streams.1.take() {
            cmd.stdout(s);
        }
        if let Some(p) = prepare {
            p(&mut cmd);
        }
        // Unconfined, the user's program itself: started as `execvp` would (nu27 F1).
        #[cfg(unix)]
        if exec.backend == cordon_policy::Backend::None {
            cordon_sandbox::run::exec_like_execvp(&mut cmd);
        }
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
        // The proxy's decisions (managed network) come back the same way: network-denied
        // is read from them, not from anything the command prints.
        let decisions = cordon_sandbox::linux::DecisionChannel::new().ok();
        // Someone can be asked about unknown hosts: the proxy's questions come back on a
        // socket the command never holds, and are answered on this thread.
        let ask = asker
            .is_some()
            .then(cordon_sandbox::linux::AskChannel::new)
            .and_then(Result::ok);
        let ask_env = ask.as_ref().map(|a| a.env());
        let mut asks = ask.map(|a| Asks {
            channel: Some(a),
            asker: asker.expect("asker given"),
        });
        let build = |args: Vec<String>| {
            let mut cmd = build(args);
            if let Some(c) = &channel {
                let (k, v) = c.env();
                cmd.env(k, v);
            }
            if let Some(d) = &decisions {
                let (k, v) = d.env();
                cmd.env(k, v);
            }
            if let Some((k, v)) = &ask_env {
                cmd.env(k, v);
            }
            cmd
        };
        // `cordon serve` running (and allowed): the helper is forked there instead. Only
        // with the default streams (the CLI); a library session's own stdio, PTY or
        // pre-exec step keeps the cold path. So does a run at a terminal: a command the
        // server starts is in the server's session, not the terminal's, so Ctrl-C reached
        // only its top process (`sh -c 'a; b'`, pipelines and make kept running) and a
        // shell had no job control (new-user pass nu9); on the cold path the command is in
        // the terminal's foreground process group, as without cordon.
        let at_terminal = {
            use std::io::IsTerminal;
            std::io::stdin().is_terminal()
                || std::io::stdout().is_terminal()
                || std::io::stderr().is_terminal()
        };
        let served = if forward && prepare_none && !at_terminal {
            cordon_sandbox::linux::server::connect().and_then(|conn| {
                run_served(
                    conn,
                    exec,
                    args.clone(),
                    opts,
                    [
                        channel.as_ref().map(|c| c.env()),
                        decisions.as_ref().map(|d| d.env()),
                        ask_env.clone(),
                    ],
                    asks.as_mut(),
                )
            })
        } else {
            None
        };
        // No controlling terminal (a harness spawned cordon in a session of its own): the
        // helper gets a process group of its own and delivers an interrupt cordon forwards
        // to the whole command, as `cordon serve` does — a group signal reaches only
        // cordon, which forwards it once (nu23 Q4). With a terminal the command stays in
        // cordon's group, foreground or background job (`fg`: attack pass 46, N4).
        let own_group =
            forward && prepare_none && !cordon_sandbox::linux::has_controlling_terminal();
        // No server: the helper is this program (the CLI), and this process has one
        // thread — fork it here instead of executing the binary again (issue 12).
        let forked = if served.is_none()
            && forward
            && prepare_none
            && default_stderr
            && cordon_sandbox::linux::forked::eligible(
                std::path::Path::new(&exec.program),
                std::path::Path::new(&exec.cwd),
            ) {
            Some(run_forked(
                exec,
                args.clone(),
                opts,
                [
                    channel.as_ref().map(|c| c.env()),
                    decisions.as_ref().map(|d| d.env()),
                    ask_env.clone(),
                ],
                std::mem::take(&mut io),
                asks.as_mut(),
                own_group,
            ))
        } else {
            None
        };
        let (mut sig, report) = match (served, forked) {
            (Some(r), _) => r?,
            (None, Some(r)) => r?,
            (None, None) => cordon_sandbox::linux::spawn_reported(
                args,
                &channel_fds(&[
                    channel.as_ref().map(|c| c.env()),
                    decisions.as_ref().map(|d| d.env()),
                    ask_env.clone(),
                ]),
                |a| {
                    let mut cmd = build(a);
                    if own_group {
                        use std::os::unix::process::CommandExt;
                        cmd.env(cordon_sandbox::linux::INTERRUPTS_TO_ALL_ENV, "1")
                            .process_group(0);
                    }
                    cmd
                },
                |child| {
                    wait(
                        Proc::Child(child),
                        opts,
                        sandboxed,
                        io,
                        forward,
                        asks.as_mut(),
                    )
                },
            )?,
        };
        sig.limit = channel
            .and_then(|c| c.read())
            .map(|l| l.as_str().to_string());
        let records = decisions.map(|d| d.read()).unwrap_or_default();
        sig.connect_failures = records
            .iter()
            .filter(|r| r.decision == "error")
            .map(|r| {
                let local = r.proto == "local";
                let target = match r.host.parse::<std::net::IpAddr>() {
                    Ok(ip) => std::net::SocketAddr::new(ip, r.port).to_string(),
                    Err(_) => format!("{}:{}", r.host, r.port),
                };
                crate::outcome::ConnectFailure {
                    target,
                    via: if local { "network.local" } else { "proxy" }.into(),
                    error: r.rule.clone(),
                }
            })
            .collect();
        sig.network_denied = records
            .into_iter()
            .filter(|r| r.decision == "deny")
            .map(|r| crate::outcome::ProxyDenial {
                host: r.host,
                port: r.port,
                rule: r.rule,
            })
            .collect();
        match &report {
            Some(cordon_sandbox::linux::HelperOutcome::NotRun { reason }) => {
                sig.helper_not_run = Some(reason.clone());
            }
            Some(cordon_sandbox::linux::HelperOutcome::Applied(a)) => {
                sig.helper_applied = true;
                sig.rebuilt_tmp = a.rung == cordon_sandbox::linux::Rung::Namespaces;
                sig.denials = a.denials.clone();
                sig.cover_lost = a.cover_lost.clone();
                // The helper exits 128 + N for a command killed by signal N; its report
                // says which it was (an `exit 143` is not a SIGTERM).
                if let Some(s) = a.signal.filter(|s| sig.code == Some(128 + s)) {
                    sig.code = None;
                    sig.signal = Some(s);
                }
            }
            None => {}
        }
        return Ok((sig, report));
    }
    let child = build(exec.args.clone()).spawn()?;
    Ok((
        wait(Proc::Child(child), opts, sandboxed, io, forward, None)?,
        None,
    ))
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
    channels: [Option<(String, String)>; 3],
    asks: Option<&mut Asks<'_, '_>>,
) -> Option<std::io::Result<(RunSignals, Option<HelperReport>)>> {
    use std::os::fd::AsRawFd;
    let (env, extra) = helper_env(exec, channels);
    let (r, w) = stderr_pipe(opts).ok()?;
    let stderr_w = w.as_ref().map(|w| w.as_raw_fd());
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
            wait(
                Proc::Served(child, r),
                opts,
                sandboxed,
                RunIo::default(),
                true,
                asks,
            )
        },
    );
    match res {
        Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => None,
        other => Some(other),
    }
}

/// The environment of a helper started without `Command` (by `cordon serve`, or forked
/// here): `exec.env` with the side channels' variables, and their descriptors.
#[cfg(target_os = "linux")]
fn helper_env(
    exec: &ExecRequest,
    channels: [Option<(String, String)>; 3],
) -> (Vec<(String, String)>, Vec<std::os::fd::RawFd>) {
    let mut env = exec.env.clone();
    let extra = channel_fds(&channels);
    // The same side channels as the cold path (limits hit, proxy decisions, host asks):
    // their descriptors at the same numbers, named by the same variables.
    for (k, v) in channels.into_iter().flatten() {
        env.retain(|(n, _)| *n != k);
        env.push((k, v));
    }
    (env, extra)
}

/// The descriptors of the side channels whose `(variable, number)` are `channels`: what
/// the helper's spawn passes to it, and to no other process (each is close-on-exec here).
#[cfg(target_os = "linux")]
fn channel_fds(channels: &[Option<(String, String)>]) -> Vec<std::os::fd::RawFd> {
    channels
        .iter()
        .flatten()
        .filter_map(|(_, v)| v.parse::<i32>().ok())
        .collect()
}

/// A pipe for the helper's stderr when the caller keeps it (`capture_stderr`): the read
/// end here, the write end for the helper.
#[cfg(target_os = "linux")]
fn stderr_pipe(
    opts: &RunOptions,
) -> std::io::Result<(Option<std::fs::File>, Option<std::os::fd::OwnedFd>)> {
    if !opts.capture_stderr {
        return Ok((None, None));
    }
    let (r, w) = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC)?;
    Ok((Some(std::fs::File::from(r)), Some(w)))
}

/// The helper forked from this process ([`cordon_sandbox::linux::forked`]): what the
/// spawned helper would get, without executing the binary again.
#[cfg(target_os = "linux")]
fn run_forked(
    exec: &ExecRequest,
    args: Vec<String>,
    opts: &RunOptions,
    channels: [Option<(String, String)>; 3],
    io: RunIo,
    asks: Option<&mut Asks<'_, '_>>,
    own_group: bool,
) -> std::io::Result<(RunSignals, Option<HelperReport>)> {
    use std::os::fd::AsRawFd;
    let (mut env, extra) = helper_env(exec, channels);
    if own_group {
        env.push((
            cordon_sandbox::linux::INTERRUPTS_TO_ALL_ENV.into(),
            "1".into(),
        ));
    }
    let (r, w) = stderr_pipe(opts)?;
    let sandboxed = exec.backend != cordon_policy::Backend::None;
    cordon_sandbox::linux::forked::spawn_reported_forked(
        args,
        exec.payload.as_deref(),
        std::path::Path::new(&exec.cwd),
        env,
        w.as_ref().map(|w| w.as_raw_fd()),
        &extra,
        own_group,
        move |child| {
            drop(w); // the helper holds its copy
            wait(Proc::Forked(child, r), opts, sandboxed, io, true, asks)
        },
    )
}

/// The proxy's questions of one run and who answers them.
struct Asks<'a, 'b> {
    /// The channel until the helper is started (then its caller's end is taken).
    #[cfg(target_os = "linux")]
    channel: Option<cordon_sandbox::linux::AskChannel>,
    asker: &'a mut HostAsker<'b>,
}

/// A started helper: spawned, or forked by `cordon serve`.
enum Proc {
    Child(std::process::Child),
    #[cfg(target_os = "linux")]
    Served(
        cordon_sandbox::linux::server::ServerChild,
        Option<std::fs::File>,
    ),
    /// Forked from this process ([`cordon_sandbox::linux::forked`]).
    #[cfg(target_os = "linux")]
    Forked(
        cordon_sandbox::linux::forked::ForkedHelper,
        Option<std::fs::File>,
    ),
}

impl Proc {
    fn id(&self) -> u32 {
        match self {
            Proc::Child(c) => c.id(),
            #[cfg(target_os = "linux")]
            Proc::Served(c, _) => c.id(),
            #[cfg(target_os = "linux")]
            Proc::Forked(c, _) => c.id(),
        }
    }

    /// For a helper `cordon serve` runs: the connection whose hang-up ends the run (the
    /// server's handler kills the command's tree and removes the run's cgroup, which a
    /// SIGKILL to the handler left behind: attack pass 175 F2). Valid while `self` is.
    fn hang_up_fd(&self) -> Option<i32> {
        match self {
            #[cfg(target_os = "linux")]
            Proc::Served(c, _) => Some(c.connection_fd()),
            _ => None,
        }
    }

    /// Whether the launcher went away without a status (`cordon serve` stopped or
    /// killed while the command ran).
    fn lost(&self) -> bool {
        match self {
            #[cfg(target_os = "linux")]
            Proc::Served(c, _) => c.lost(),
            _ => false,
        }
    }

    fn take_stderr(&mut self) -> Option<Box<dyn StderrPipe>> {
        match self {
            Proc::Child(c) => c.stderr.take().map(|p| Box::new(p) as Box<dyn StderrPipe>),
            #[cfg(target_os = "linux")]
            Proc::Served(_, r) | Proc::Forked(_, r) => {
                r.take().map(|p| Box::new(p) as Box<dyn StderrPipe>)
            }
        }
    }

    /// Blocks until it exited, without releasing its pid.
    fn wait_exited(&mut self) -> std::io::Result<()> {
        match self {
            Proc::Child(c) => wait_exited(c),
            #[cfg(target_os = "linux")]
            Proc::Served(c, _) => c.wait().map(|_| ()),
            #[cfg(target_os = "linux")]
            Proc::Forked(c, _) => c.wait_exited(),
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
            #[cfg(target_os = "linux")]
            Proc::Forked(c, _) => {
                use std::os::unix::process::ExitStatusExt;
                c.wait().map(std::process::ExitStatus::from_raw)
            }
        }
    }
}

use crate::outcome::LOST_SERVER;

/// Waits for `child`: copies its stderr through (keeping a tail), forwards signals,
/// enforces the timeout.
fn wait(
    mut child: Proc,
    opts: &RunOptions,
    sandboxed: bool,
    mut io: RunIo,
    forward: bool,
    asks: Option<&mut Asks<'_, '_>>,
) -> std::io::Result<RunSignals> {
    // The helper is spawned: the runs' records are kept fresh from now on, so that a run
    // finishing this one's sweep after a `kill -9` knows when its sandbox was gone.
    crate::pending_sweeps::command_started();
    let tail = Arc::new(Mutex::new(Vec::<u8>::new()));
    let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
    let mut sink = io.stderr_sink.take();
    // What the tee left on cordon's own stderr (the default sink).
    let line = Arc::new(Mutex::new(TeeLine::default()));
    let tee = child.take_stderr().map(|mut pipe| {
        let tail = Arc::clone(&tail);
        let line = Arc::clone(&line);
        std::thread::spawn(move || {
            let mut buf = [0u8; 8192];
            // On cordon's own stderr, an unfinished line is held until its newline or until
            // the command pauses (new-user pass nu21, K3: curl writes its stderr a byte at a
            // time, and with `2>&1` its stdout landed inside a line: `curl000: (56) …`).
            let mut held = LineHold::default();
            let copy = |bytes: &[u8]| {
                if bytes.is_empty() {
                    return;
                }
                if let Ok(mut l) = line.lock() {
                    // After the run was over nothing more is copied: a leftover process
                    // must not write after cordon's report.
                    if !l.closed {
                        let mut err = std::io::stderr().lock();
                        let _ = err.write_all(bytes);
                        let _ = err.flush();
                        l.open = bytes[bytes.len() - 1] != b'\n';
                    }
                }
            };
            loop {
                #[cfg(unix)]
                if sink.is_none() && !held.is_empty() && !readable_within(&*pipe, HOLD_LINE) {
                    copy(&held.take());
                }
                match pipe.read(&mut buf) {
                    Ok(0) | Err(_) => {
                        copy(&held.take());
                        break;
                    }
                    Ok(n) => {
                        match sink.as_mut() {
                            Some(s) => s(&buf[..n]),
                            // Held only where a pause can let it go (`readable_within`).
                            None if cfg!(unix) => copy(&held.push(&buf[..n])),
                            None => copy(&buf[..n]),
                        }
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
    let forwarder = forward
        .then(|| forward_signals(child.id(), Arc::clone(&cancelled)))
        .flatten();
    // No polling on the launch path: block until the child exits. With a timeout (or a
    // control handle), a timer thread kills or signals it; the child is only reaped after
    // the timer has been told it exited, so the pid it signals cannot have been reused.
    let timed_out = Arc::new(Mutex::new(None::<String>));
    // The timer killed the helper itself (not through `cordon serve`): the run's cgroup
    // is then removed here (below).
    let helper_killed = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let on_spawn = io.on_spawn.take();
    let timer = (opts.timeout.is_some() || on_spawn.is_some()).then(|| {
        let (tx, rx) = std::sync::mpsc::channel::<Control>();
        let pid = child.id();
        // Ends the run: a hang-up for one the server runs, else SIGKILL to the helper.
        // `child` (and so the connection) outlives this thread (joined below).
        let hang_up = child.hang_up_fd();
        let killed = Arc::clone(&helper_killed);
        let end_run = move || match hang_up {
            // SAFETY: shutdown on a descriptor `child` owns until after the join.
            #[cfg(unix)]
            Some(fd) => unsafe {
                libc::shutdown(fd, libc::SHUT_RDWR);
            },
            _ => {
                killed.store(true, std::sync::atomic::Ordering::Relaxed);
                kill_unreaped(pid)
            }
        };
        if let Some(f) = on_spawn {
            f(RunControl {
                pid,
                tx: tx.clone(),
            });
        }
        let timed_out = Arc::clone(&timed_out);
        let cancelled = Arc::clone(&cancelled);
        let limit = opts.timeout;
        let h = std::thread::spawn(move || {
            let mut deadline = limit.map(|t| (std::time::Instant::now() + t, t));
            let mut looked_again = false;
            loop {
                let msg = match deadline {
                    Some((at, _)) => {
                        rx.recv_timeout(at.saturating_duration_since(std::time::Instant::now()))
                    }
                    None => rx
                        .recv()
                        .map_err(|_| std::sync::mpsc::RecvTimeoutError::Disconnected),
                };
                match msg {
                    Ok(Control::Exited) | Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                        break
                    }
                    Ok(Control::Signal(s)) => {
                        // An interrupt the caller sends is a cancellation, as the CLI's
                        // forwarded Ctrl-C is (new user, stop 19: MCP `kill` with SIGINT
                        // was reported as a failed command); a SIGKILL it sends is one too
                        // (attack pass 186 F6: `kill` with "SIGKILL" said command-failed, `kill`
                        // without a signal cancelled).
                        #[cfg(unix)]
                        if cordon_sandbox::run::ENDING_SIGNALS.contains(&s) || s == libc::SIGKILL {
                            if let (Ok(mut c), Ok(sig)) =
                                (cancelled.lock(), nix::sys::signal::Signal::try_from(s))
                            {
                                // The latest such signal: an earlier one the command
                                // survived (a shell on a terminal ignores SIGINT) is not
                                // what ended it (new-user pass 243 #1).
                                *c = Some(format!("{sig} sent by the caller"));
                            }
                        }
                        signal_unreaped(pid, s)
                    }
                    Ok(Control::Kill) => {
                        if let Ok(mut c) = cancelled.lock() {
                            *c = Some("killed by the caller".to_string());
                        }
                        end_run();
                    }
                    Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                        // Woken well after the deadline: this process was not running (a
                        // stopped cordon, SIGSTOP then SIGCONT), and the command may have
                        // ended meanwhile. The waiting thread is given a moment to say so
                        // first, so an ended command is reported as it ended, not as timed
                        // out (attack pass 162, finding 2). One second look only.
                        if !looked_again && deadline.is_some_and(|(at, _)| at.elapsed() > LATE_WAKE)
                        {
                            looked_again = true;
                            if let Some((_, t)) = deadline {
                                deadline = Some((std::time::Instant::now() + LATE_GRACE, t));
                            }
                            continue;
                        }
                        end_run();
                        if let (Ok(mut g), Some((_, t))) = (timed_out.lock(), deadline) {
                            *g = Some(humantime::format_duration(t).to_string());
                        }
                        // Once: the Exited message still ends the loop.
                        deadline = None;
                    }
                }
            }
        });
        (tx, h)
    });
    match asks {
        #[cfg(target_os = "linux")]
        Some(a) => wait_exited_answering(&mut child, a)?,
        _ => child.wait_exited()?,
    }
    if let Some((tx, h)) = timer {
        let _ = tx.send(Control::Exited);
        let _ = h.join();
    }
    // A helper killed by the timer could not remove the run's cgroup; while it is not
    // reaped its pid is still its own (attack pass 175 F2).
    #[cfg(target_os = "linux")]
    if helper_killed.load(std::sync::atomic::Ordering::Relaxed) {
        cordon_sandbox::linux::limits::remove_left_by(child.id());
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
    // The command's last stderr line may lack its newline (`printf partial >&2`): cordon
    // ends it, so its own lines — and a `--json` report, the last line of stderr — start
    // on a line of their own (F2: a forged object followed by the report on one line was
    // read first by a streaming decoder).
    if let Ok(mut l) = line.lock() {
        l.closed = true;
        if l.open {
            let _ = std::io::stderr().write_all(b"\n");
        }
    }
    let mut stderr_tail = tail
        .lock()
        .map(|t| String::from_utf8_lossy(&t).into_owned())
        .unwrap_or_default();
    let stdout_seen = io.tail.is_some();
    if let Some(extra) = io.tail.take() {
        stderr_tail.push_str(&extra());
    }
    #[cfg(unix)]
    let (code, signal) = {
        use std::os::unix::process::ExitStatusExt;
        (status.code(), status.signal())
    };
    #[cfg(not(unix))]
    let (code, signal) = (status.code(), None);
    // A run through `cordon serve` that ended without a status and that nothing here
    // killed: the server went away (stopped, restarted, killed) and took the command with
    // it — said so, not reported as the command's own SIGKILL (new-user pass nu15 N5).
    let cancelled = cancelled
        .lock()
        .ok()
        .and_then(|c| c.clone())
        .or_else(|| (timed_out.is_none() && child.lost()).then(|| LOST_SERVER.to_string()));
    Ok(RunSignals {
        code,
        signal,
        timed_out,
        cancelled,
        limit: None,
        stderr_tail,
        stdout_seen,
        sandboxed,
        helper_not_run: None,
        helper_applied: false,
        network_denied: Vec::new(),
        connect_failures: Vec::new(),
        rebuilt_tmp: false,
        denials: None,
        cover_lost: None,
    })
}

/// The state of cordon's own stderr after the tee's copies of the command's stderr.
#[derive(Default)]
struct TeeLine {
    /// The last byte copied was not a newline.
    open: bool,
    /// The run is over: nothing more is copied.
    closed: bool,
}

/// [`Proc::wait_exited`] while answering the proxy's host questions on this thread: a
/// scoped thread waits for the exit, another reads questions; this one answers them in
/// order until the exit arrives.
#[cfg(target_os = "linux")]
fn wait_exited_answering(child: &mut Proc, asks: &mut Asks<'_, '_>) -> std::io::Result<()> {
    use std::io::BufRead;
    enum Event {
        Exited(std::io::Result<()>),
        Ask(HostAsk),
    }
    let Some(stream) = asks.channel.take().map(|c| c.into_caller()) else {
        return child.wait_exited();
    };
    let (tx, rx) = std::sync::mpsc::channel::<Event>();
    let reader = stream.try_clone()?;
    let mut writer = stream.try_clone()?;
    std::thread::scope(|scope| {
        let exit_tx = tx.clone();
        scope.spawn(move || {
            let _ = exit_tx.send(Event::Exited(child.wait_exited()));
        });
        scope.spawn(move || {
            let mut lines = std::io::BufReader::new(reader);
            let mut line = String::new();
            // Lines are bounded by the proxy (one small JSON object each); a reader
            // error or end of stream ends this thread.
            while matches!(lines.read_line(&mut line), Ok(n) if n > 0) {
                if let Ok(q) = serde_json::from_str::<HostAsk>(&line) {
                    if tx.send(Event::Ask(q)).is_err() {
                        break;
                    }
                }
                line.clear();
            }
        });
        let result = loop {
            match rx.recv() {
                Ok(Event::Ask(q)) => {
                    let reply = (asks.asker)(&q);
                    let mut out = serde_json::to_vec(&reply).unwrap_or_default();
                    out.push(b'\n');
                    let _ = writer.write_all(&out);
                }
                Ok(Event::Exited(r)) => break r,
                Err(_) => break Ok(()),
            }
        };
        // Wakes the reader (the helper's end may outlive it in a leftover process).
        let _ = stream.shutdown(std::net::Shutdown::Both);
        result
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

/// How late past the deadline a timer wake means this process was not running (stopped).
const LATE_WAKE: Duration = Duration::from_millis(50);
/// How long the command's end is then waited for before it is taken as timed out (the
/// waiting thread is resumed with this one; room for a loaded machine).
const LATE_GRACE: Duration = Duration::from_millis(250);

/// SIGKILL to a child that has not been reaped yet (see [`wait_exited`]).
fn kill_unreaped(pid: u32) {
    signal_unreaped(pid, libc::SIGKILL);
}

/// `signal` to a child that has not been reaped yet (see [`wait_exited`]).
fn signal_unreaped(pid: u32, signal: i32) {
    #[cfg(unix)]
    if let Ok(s) = nix::sys::signal::Signal::try_from(signal) {
        let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid as i32), s);
    }
    #[cfg(not(unix))]
    let _ = (pid, signal);
}

#[cfg(unix)]
fn forward_signals(
    pid: u32,
    cancelled: Arc<Mutex<Option<String>>>,
) -> Option<signal_hook::iterator::Handle> {
    cordon_sandbox::run::forward_signals(pid, move |sig| {
        if cordon_sandbox::run::ENDING_SIGNALS.contains(&sig) {
            if let (Ok(mut c), Ok(s)) = (cancelled.lock(), nix::sys::signal::Signal::try_from(sig))
            {
                c.get_or_insert_with(|| format!("cancelled by {s}"));
            }
        }
    })
}
