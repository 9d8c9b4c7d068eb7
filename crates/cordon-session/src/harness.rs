//! The library API for agent harnesses (R-X1, R-E1): one [`Harness`] per agent session
//! runs tool calls through the same loop as `cordon run` — exec policy → approval →
//! sandbox → run → classify ([`crate::drive`]'s [`prepare`] and [`conclude`]) — and keeps
//! commands that outlive the call as **process sessions**.
//!
//! ```no_run
//! use cordon_session::harness::{ExecParams, Harness, HarnessOptions};
//! use std::time::Duration;
//!
//! let h = Harness::new(HarnessOptions::new(std::env::current_dir().unwrap()))?;
//! // One-shot: waits for the end, returns the classified outcome and what was applied.
//! let r = h.exec(ExecParams::argv(["git", "status"]))?;
//! println!("{} {}", r.outcome.as_ref().unwrap().class.name(), r.output.text);
//! // A session: a Python REPL on a terminal inside the sandbox.
//! let s = h.exec(ExecParams::argv(["python3", "-i"]).tty(true).yield_time(Duration::from_millis(500)))?;
//! let id = s.session_id.unwrap();
//! h.write_stdin(&id, b"print(6*7)\n")?;
//! let out = h.read_output(&id, 4096, Duration::from_secs(2))?;
//! h.kill(&id)?;
//! # Ok::<(), cordon_session::harness::HarnessError>(())
//! ```
//!
//! Every call returns within its stated bound (`yield_time`, `wait`, `timeout`), and a
//! [`Harness`] is `Send + Sync` (share it in an `Arc`); from async code call it through
//! `tokio::task::spawn_blocking` (`cordon mcp` does). Approvals go to the
//! [`Approver`](crate::Approver) given at construction; it must answer from any thread.
//!
//! Lifetimes: a session ends with its process tree (R-X1: the outcome is R-F1's); idle
//! sessions (no call naming them for [`HarnessOptions::idle_timeout`]) are killed; dropping
//! the harness kills every session's process tree, and each helper also dies with the
//! thread that started it (the helper's own `PR_SET_PDEATHSIG`), so a crashed harness
//! leaves nothing behind.

use crate::approver::{Approver, NonInteractive, Reply};
use crate::drive::{conclude, finish_run, prepare, Prepared, Report, RunSpec};
use crate::outcome::Outcome;
use crate::request::ReviewableRequest;
use crate::runner::{self, RunControl, RunIo, RunOptions};
use crate::session::Session;
use crate::trust::{Entry, Layers, TrustError, TrustProfile};
use cordon_execpolicy::ApprovalMode;
use cordon_policy::SandboxPreference;
use cordon_sandbox::SandboxManager;
use serde::Serialize;
use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, Weak};
use std::time::{Duration, Instant};
use thiserror::Error;

/// Output kept per session and not yet read; older bytes are dropped (and counted) past it.
pub const OUTPUT_BUFFER_BYTES: usize = 1024 * 1024;

/// The start of a command's output kept when the buffer overflows before anything was
/// read: bytes dropped are then taken after it, not from it (new-user pass 152: a long
/// build that ended within one call lost its first lines, where its first error is).
pub const OUTPUT_HEAD_BYTES: usize = 64 * 1024;

/// Default cap on the bytes one read returns.
pub const DEFAULT_MAX_OUTPUT_BYTES: usize = 64 * 1024;

/// The longest [`Harness::write_stdin`] waits for a command to take its input.
pub const STDIN_WAIT: Duration = Duration::from_secs(10);

/// The most [`Harness::write_stdin`] writes at once, when the descriptor is writable (a
/// pipe then has a free page; a terminal, room for far more).
const STDIN_CHUNK: usize = 512;

/// Errors of the harness API (each says what to do).
#[derive(Debug, Error)]
pub enum HarnessError {
    /// The trust profile could not be built for the requested cwd and permissions (R-E1).
    #[error(transparent)]
    Trust(#[from] TrustError),
    /// No session has this id (never existed, finished and fully read, or expired).
    #[error("no session {0}: it finished and its output was read, expired, or never existed")]
    NoSession(String),
    /// The session was ended or let go by the idle rule ([`HarnessOptions::idle_timeout`]):
    /// what happened, said (new-user pass nu24, F7f: an idle-killed dev server read as
    /// "finished, expired, or never existed").
    #[error("no session {id}: {why}")]
    Expired {
        /// The session id.
        id: String,
        /// What the idle rule did.
        why: String,
    },
    /// The session's stdin is closed (or it was started without one).
    #[error("session {0} has no open stdin")]
    StdinClosed(String),
    /// The command did not take all of the input within [`HarnessOptions::stdin_wait`]:
    /// `written` of
    /// `total` bytes were written (the first ones), the rest were not.
    #[error(
        "session {id}: the command took {written} of {total} bytes of input within {} ms and \
         the rest were not written (it is not reading its stdin, or reads slowly): send the \
         rest later, from byte {written}, or close its stdin",
        waited.as_millis()
    )]
    StdinStalled {
        /// The session.
        id: String,
        /// How long the call waited ([`HarnessOptions::stdin_wait`]).
        waited: Duration,
        /// Bytes written, from the start of the input.
        written: usize,
        /// Bytes asked to be written.
        total: usize,
    },
    /// A request that cannot apply (e.g. resizing a session without a terminal).
    #[error("{0}")]
    Usage(String),
    /// An I/O error talking to the session's process.
    #[error("session {id}: {source}")]
    Io {
        /// The session.
        id: String,
        /// The error.
        source: std::io::Error,
    },
}

/// Writes `bytes` to `f` until `deadline`, each chunk only when there is room
/// ([`STDIN_CHUNK`]: the descriptor stays blocking, a terminal's reader shares it, and no
/// write blocks for long); how many bytes were written, the first ones.
///
/// Errors: the write failed (the command exited: `EPIPE`/`EIO`).
#[cfg(unix)]
fn write_within(f: &mut std::fs::File, bytes: &[u8], deadline: Instant) -> std::io::Result<usize> {
    use std::os::fd::AsFd as _;
    let mut written = 0;
    while written < bytes.len() {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            break;
        }
        let mut pfd = [nix::poll::PollFd::new(
            f.as_fd(),
            nix::poll::PollFlags::POLLOUT,
        )];
        let ms = u16::try_from(left.as_millis()).unwrap_or(u16::MAX);
        match nix::poll::poll(&mut pfd, ms) {
            Ok(0) | Err(nix::errno::Errno::EINTR) => continue,
            Ok(_) => {}
            Err(e) => return Err(e.into()),
        }
        let end = bytes.len().min(written + STDIN_CHUNK);
        match f.write(&bytes[written..end]) {
            Ok(n) => written += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(written)
}

/// [`write_within`] where there is no `poll`: the whole input, blocking.
#[cfg(not(unix))]
fn write_within(f: &mut std::fs::File, bytes: &[u8], _deadline: Instant) -> std::io::Result<usize> {
    f.write_all(bytes).map(|_| bytes.len())
}

/// How a harness is set up.
#[derive(Debug, Clone)]
pub struct HarnessOptions {
    /// The entry point recorded in every trust profile (R-E1): [`Entry::Server`] by default.
    pub entry: Entry,
    /// The default cwd of commands (absolute); a request's relative cwd is read against it.
    pub cwd: PathBuf,
    /// The configuration layers (profile, config, `-w`, network, rules), as on the CLI.
    pub layers: Layers,
    /// The approval mode (R-A5).
    pub mode: ApprovalMode,
    /// Sessions not named by any call for this long are killed (and forgotten).
    pub idle_timeout: Duration,
    /// The cordon executable run as the Linux sandbox helper (`None`: this executable,
    /// which must then dispatch the helper like the `cordon` CLI does; a harness linking
    /// the library into its own program points this at an installed `cordon`).
    pub helper: Option<PathBuf>,
    /// The longest [`Harness::write_stdin`] waits for a command to take its input
    /// ([`STDIN_WAIT`] by default).
    pub stdin_wait: Duration,
}

impl HarnessOptions {
    /// The defaults for `cwd`: entry `server`, default layers (the config's profile, else
    /// `workspace-write`), mode `on-request`, idle sessions killed after 30 minutes.
    pub fn new(cwd: PathBuf) -> HarnessOptions {
        HarnessOptions {
            entry: Entry::Server,
            cwd,
            layers: Layers::default(),
            mode: ApprovalMode::OnRequest,
            idle_timeout: Duration::from_secs(30 * 60),
            helper: None,
            stdin_wait: STDIN_WAIT,
        }
    }
}

/// What to run: an argv, or a shell script (run as `bash -c SCRIPT`; the exec policy
/// parses the script, so each of its commands is judged).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Command {
    /// The argv (`argv[0]` looked up in `PATH` inside the sandbox).
    Argv(Vec<String>),
    /// A shell script.
    Script(String),
}

impl Command {
    /// The argv that runs it.
    pub fn to_argv(&self) -> Vec<String> {
        match self {
            Command::Argv(a) => a.clone(),
            Command::Script(s) => vec!["bash".into(), "-c".into(), s.clone()],
        }
    }
}

/// One tool call.
#[derive(Debug, Clone)]
pub struct ExecParams {
    /// What to run.
    pub command: Command,
    /// Working directory (relative: against the harness's cwd; `None`: the harness's cwd).
    pub cwd: Option<PathBuf>,
    /// Wall-clock limit for the whole run; the tree is killed when it passes (`timed-out`).
    pub timeout: Option<Duration>,
    /// Additional permissions for this command only, as `--with` JSON (R-O1), e.g.
    /// `{"network": true, "entries": [{"path": "/data", "access": "write"}]}`. They come
    /// from the agent: any grant needs an approval, whatever the exec policy says of the
    /// command (`forbid` still refuses).
    pub additional_permissions: Option<String>,
    /// Why the agent wants this (shown to the person asked for approval).
    pub justification: Option<String>,
    /// Run on a pseudo-terminal (interactive programs: `python3 -i`, `bash`).
    pub tty: bool,
    /// Terminal size (rows, cols) when `tty`.
    pub size: (u16, u16),
    /// Return after this long even if the command still runs (then with a session id);
    /// `None`: wait for the end (bounded by `timeout`).
    pub yield_time: Option<Duration>,
    /// Keep stdin open for [`Harness::write_stdin`] (always with `tty`); otherwise the
    /// command's stdin is empty, or holds [`ExecParams::stdin_data`].
    pub stdin: bool,
    /// Bytes written to the command's stdin as it starts (a terminal's input with `tty`).
    /// Without `stdin` and `tty`, stdin is closed after them (end of file), as for
    /// `printf … | cmd`; with either, it stays open for [`Harness::write_stdin`].
    pub stdin_data: Option<Vec<u8>>,
    /// Cap on the output bytes returned with the result (the rest stays readable).
    pub max_output_bytes: usize,
}

impl ExecParams {
    /// A one-shot argv with the defaults (harness cwd, no timeout, no terminal, wait for
    /// the end, 64 KiB of output).
    pub fn argv<I, S>(argv: I) -> ExecParams
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        ExecParams::new(Command::Argv(argv.into_iter().map(Into::into).collect()))
    }
    /// A one-shot shell script (see [`Command::Script`]).
    pub fn script(script: impl Into<String>) -> ExecParams {
        ExecParams::new(Command::Script(script.into()))
    }
    fn new(command: Command) -> ExecParams {
        ExecParams {
            command,
            cwd: None,
            timeout: None,
            additional_permissions: None,
            justification: None,
            tty: false,
            size: (24, 80),
            yield_time: None,
            stdin: false,
            stdin_data: None,
            max_output_bytes: DEFAULT_MAX_OUTPUT_BYTES,
        }
    }
    /// Sets the working directory.
    pub fn cwd(mut self, cwd: impl Into<PathBuf>) -> Self {
        self.cwd = Some(cwd.into());
        self
    }
    /// Sets the wall-clock limit.
    pub fn timeout(mut self, t: Duration) -> Self {
        self.timeout = Some(t);
        self
    }
    /// Runs on a terminal (implies an open stdin).
    pub fn tty(mut self, tty: bool) -> Self {
        self.tty = tty;
        self
    }
    /// Keeps stdin open.
    pub fn stdin(mut self, open: bool) -> Self {
        self.stdin = open;
        self
    }
    /// Writes `data` to stdin as the command starts (see [`ExecParams::stdin_data`]).
    pub fn stdin_data(mut self, data: impl Into<Vec<u8>>) -> Self {
        self.stdin_data = Some(data.into());
        self
    }
    /// Returns after `t` with a session id if it still runs.
    pub fn yield_time(mut self, t: Duration) -> Self {
        self.yield_time = Some(t);
        self
    }
    /// Asks for additional permissions (`--with` JSON).
    pub fn additional_permissions(mut self, json: impl Into<String>) -> Self {
        self.additional_permissions = Some(json.into());
        self
    }
    /// Says why.
    pub fn justification(mut self, why: impl Into<String>) -> Self {
        self.justification = Some(why.into());
        self
    }
}

/// The line that starts a read after the buffer ([`OUTPUT_BUFFER_BYTES`]) dropped `dropped`
/// bytes: what the buffer keeps, not that anyone failed to read (new-user pass 150: "dropped
/// unread" in the answer to the very call that started the command).
fn dropped_marker(dropped: u64) -> String {
    format!(
        "[cordon: the {dropped} bytes of output before this were dropped: cordon keeps the \
         last {} MiB of a command's output between reads]\n",
        OUTPUT_BUFFER_BYTES / (1024 * 1024)
    )
}

/// The line between the kept start of the output ([`OUTPUT_HEAD_BYTES`]) and what follows
/// the bytes dropped after it, for text that ends with `before`: always a line of its own
/// (attack pass 153: after a kept start cut mid-line, the command chose the text in front
/// of cordon's marker, `(command output) ` included).
fn dropped_here_marker(dropped: u64, before: &str) -> String {
    format!(
        "{}[cordon: {dropped} bytes of output were dropped here: cordon keeps the start and \
         the last {} MiB of a command's output between reads]\n",
        if before.is_empty() || before.ends_with('\n') {
            ""
        } else {
            "\n"
        },
        OUTPUT_BUFFER_BYTES / (1024 * 1024)
    )
}

/// Output read from a session.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Output {
    /// The bytes read (stdout and stderr interleaved as they arrived; lossy UTF-8), with a
    /// `[cordon: …]` marker line first when older output was dropped.
    pub text: String,
    /// Bytes still unread after this read (more than the cap asked for).
    pub remaining_bytes: usize,
    /// Bytes of output dropped because the session's buffer was full
    /// ([`OUTPUT_BUFFER_BYTES`]), since the previous read.
    pub dropped_bytes: u64,
    /// Bytes of an ended command's output left out between the start and the end this
    /// read gives (`[cordon: N bytes of output left out here; …]` marks the place): more
    /// than `max_output_bytes` was left when it ended (new-user pass nu24, F3).
    #[serde(skip_serializing_if = "is_zero")]
    pub omitted_bytes: usize,
    /// `remaining_bytes > 0 || dropped_bytes > 0 || omitted_bytes > 0`, or this text marks
    /// where bytes were dropped.
    pub truncated: bool,
    /// Whether this text has a `[cordon: …dropped…]` marker line (a drop counted in an
    /// earlier answer is marked when a read reaches its place; one counted here may be
    /// marked later). Not part of the structured content.
    #[serde(skip)]
    pub drop_marked: bool,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// What the sandbox did for one run, as the helper reported it (R-H4: what was applied is
/// what the helper did; the plan is only the prediction).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct AppliedSandbox {
    /// The backend (`linux-helper`, `seatbelt`, `none`).
    pub backend: Option<String>,
    /// The layers applied, in words (empty: nothing ran, or nothing was confined).
    pub applied: Vec<String>,
    /// The layers planned before the run.
    pub planned: Vec<String>,
    /// Names of environment variables dropped as secrets.
    pub env_dropped: Vec<String>,
    /// Why the command ran unconfined, when it did (explicit opt-in only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unconfined_reason: Option<String>,
}

impl AppliedSandbox {
    /// From the last attempt of `report`.
    pub fn of(report: &Report) -> AppliedSandbox {
        let last = report.last();
        let Some(e) = last.exec.as_ref() else {
            return AppliedSandbox::default();
        };
        AppliedSandbox {
            backend: Some(e.backend.to_string()),
            applied: last.applied(),
            planned: e.planned.clone(),
            env_dropped: e.env_dropped.clone(),
            unconfined_reason: e.unconfined_reason.clone(),
        }
    }
}

/// The answer to [`Harness::exec`], [`Harness::read_output`]-like polls and
/// [`Harness::wait`].
#[derive(Debug, Clone, Serialize)]
pub struct ExecResult {
    /// The session id while the command runs or output is left to read; `None` once the
    /// session is over and fully read (it is then forgotten).
    pub session_id: Option<String>,
    /// Whether the process tree still runs.
    pub running: bool,
    /// Output since the previous read, capped.
    pub output: Output,
    /// The classified outcome (R-F1), once the run ended (or was refused).
    pub outcome: Option<Outcome>,
    /// What the sandbox applied, once known.
    pub sandbox: Option<AppliedSandbox>,
    /// The whole report of the loop (approval, exec policy, and after a denial the
    /// smallest widening that would allow it, R-F2), once the run ended.
    #[serde(skip)]
    pub report: Option<Report>,
}

impl ExecResult {
    /// A short line for people and models: `success (exit 0)`, `sandbox-denied … hint`,
    /// `running (session s-3)`.
    pub fn summary(&self) -> String {
        match (&self.outcome, &self.session_id) {
            (Some(o), _) => {
                let mut s = format!("{} (exit {})", o.class.name(), o.exit_code);
                let mut why = "";
                if let crate::OutcomeClass::Refused { why: w } = &o.class {
                    s.push_str(&format!(": {w}"));
                    why = w;
                }
                // A hint that only repeats how to approve, which the reason says already
                // (new-user pass 152: "use a client that does …; hint: no one could approve
                // it here: this MCP client does not support elicitation …").
                let repeats = |h: &str| {
                    h.strip_prefix(crate::drive::APPROVAL_HINT)
                        .is_some_and(|how| why.contains(how))
                };
                if let Some(h) = o.hint.as_deref().filter(|h| !repeats(h)) {
                    s.push_str(&format!("; hint: {h}"));
                }
                s
            }
            (None, Some(id)) => format!("running (session {id})"),
            (None, None) => "running".into(),
        }
    }
}

/// One process session's shared state.
struct Proc {
    id: String,
    tty: bool,
    state: Mutex<ProcState>,
    changed: Condvar,
    stdin: Mutex<Option<std::fs::File>>,
    master: Option<std::os::fd::OwnedFd>,
    control: Mutex<Option<RunControl>>,
    last_used: Mutex<Instant>,
    /// A shell session's input judge ([`ShellInput`]); `None` for other programs.
    shell_input: Option<Mutex<ShellInput>>,
}

/// What judges the lines an agent writes into a shell session (`bash`, `sh`, … reading
/// its commands from the session's stdin or terminal): each complete line is judged as
/// the script of `bash -c` under the session's profile, and a line the exec policy
/// forbids, or asks about for a dangerous-command finding, is not written (attack pass
/// 214 #1: `git push --force` written into an MCP `sh` session ran, forbidden as a
/// command); so is an `alias` or `eval`, which would run later text unseen. Text that only
/// parses badly or names unknown programs passes: the sandbox is the boundary there, and a
/// program started from the shell (a REPL) reads its own input. Not followed: functions and
/// variables set by earlier lines, and a terminal's line editing (^H, ^U, completion).
struct ShellInput {
    trust: TrustProfile,
    mode: ApprovalMode,
    /// The part of the last line not yet ended by a newline (judged with what follows).
    pending: String,
}

/// The most text a shell session's judge keeps while it does not form complete commands
/// (bytes).
const PENDING_CAP: usize = 256 << 10;

/// Whether the exec policy forbids `r` or one of its segments carries a dangerous-command
/// finding: what a shell session's judge refuses to write (an unknown program or a parse
/// error alone does not count).
fn forbidden_or_dangerous(r: &cordon_execpolicy::DecisionRecord) -> bool {
    r.decision == cordon_execpolicy::Decision::Forbid
        || r.segments.iter().any(|s| !s.findings.is_empty())
}

/// Why the shell would run other text than `lines` (complete lines written into a shell
/// session), if it would: line-editing and cursor keys (control bytes but tab, ^C, ^D, ^Z
/// and line ends; DEL; escape sequences), or history expansion (`!!`, `!$`, `!-1`,
/// `!word`, a line starting `^old^new`; not `!=`, `! `, `!(`, or `!` before a quote).
fn rewritten_by_the_shell(lines: &str) -> Option<&'static str> {
    if lines.chars().any(|c| {
        (c.is_ascii_control() && !matches!(c, '\t' | '\n' | '\r' | '\x03' | '\x04' | '\x1a'))
            || c == '\x7f'
    }) {
        return Some("line editing (a control, delete or escape key)");
    }
    let history = lines.lines().any(|l| {
        l.trim_start().starts_with('^')
            || l.as_bytes().windows(2).any(|w| {
                w[0] == b'!' && (w[1].is_ascii_alphanumeric() || b"!$^*-?#:".contains(&w[1]))
            })
    });
    history.then_some("history expansion (`!!`, `!$`, `!word`, `^old^new`)")
}

/// Whether `lines` ends with a backslash before its last line end (an odd run of them):
/// the shell joins the next line to it.
fn continued(lines: &str) -> bool {
    let body = lines.trim_end_matches(['\n', '\r']);
    body.len() + 1 >= lines.len() && body.bytes().rev().take_while(|b| *b == b'\\').count() % 2 == 1
}

impl ShellInput {
    /// `Err(why)` when the complete lines in `pending + text` hold a command the exec
    /// policy forbids or asks about for a dangerous finding; `Ok(rest)`: the new pending
    /// part after them.
    fn judge(&self, text: &str) -> Result<String, String> {
        // bash drops NUL bytes from its input: judged without them (pass 218 #1: `--fo\0rce`).
        let all = format!("{}{}", self.pending, text.replace('\0', ""));
        // A line ends at a newline, a carriage return, or readline's ^O (operate-and-get-
        // next runs the line: re-probe 217 #6).
        let Some(end) = all.rfind(['\n', '\r', '\x0f']) else {
            return Ok(all);
        };
        let (lines, rest) = all.split_at(end + 1);
        let lines = lines.replace('\x0f', "\n");
        // What the shell would run is not the text written when its line editor or history
        // rewrites it (pass 218 #2, #3: `--forcX` + DEL, ^U, arrow keys, `^farce^force`):
        // such a line is refused, not guessed at.
        if let Some(why) = rewritten_by_the_shell(&lines) {
            return Err(format!(
                "{why} is not followed by cordon's check of what a shell session runs: write \
                 the command out as it should run"
            ));
        }
        let req = self
            .trust
            .command(vec!["bash".into(), "-c".into(), lines.clone()]);
        let record = self.trust.evaluate(&req);
        // An alias or `eval` defines what later lines run out of this judge's sight (it
        // reads each line alone): refused in a shell session like a dangerous command.
        let hides_later = record.opaque.iter().any(|o| {
            matches!(
                o.kind,
                cordon_execpolicy::OpaqueKind::Alias | cordon_execpolicy::OpaqueKind::Eval
            )
        });
        let dangerous = hides_later || forbidden_or_dangerous(&record);
        // What the shell has not run yet stays with the judge: a construct left open (a
        // quote, a here-document, `if` without `fi`: the text does not parse) or a line
        // ended by a backslash is judged again with what completes it (re-probe 217 #1-#3:
        // `git push \` then `--force …` in the next write ran).
        let parse_error = record
            .opaque
            .iter()
            .any(|o| o.kind == cordon_execpolicy::OpaqueKind::ParseError);
        let open = parse_error || continued(&lines);
        // Text the parser cannot read whole (tree-sitter-bash fails on `cat <<EOF; cmd`,
        // a here-document opened before a command on its line: re-probe 217 #3) is also
        // judged line by line, each here-document operator read as a plain redirection:
        // a line that runs a dangerous command there is refused (a body line that names
        // one as data is refused too — the cost of not reading it whole).
        let dangerous = dangerous
            || (parse_error
                && lines.lines().any(|l| {
                    forbidden_or_dangerous(&self.trust.evaluate(&self.trust.command(vec![
                        "bash".into(),
                        "-c".into(),
                        l.replace("<<", "< "),
                    ])))
                }));
        let keep = if open { all.clone() } else { rest.to_string() };
        if keep.len() > PENDING_CAP {
            return Err(format!(
                "what was written into this shell has not formed complete commands for {} \
                 KiB (an open quote, here-document or block): end it, or start a new session",
                PENDING_CAP >> 10
            ));
        }
        match cordon_execpolicy::run_would(&record, self.mode) {
            cordon_execpolicy::RunWould::Run => Ok(keep),
            _ if !dangerous => Ok(keep),
            would => Err(format!(
                "the exec policy {} what this writes into the shell: {}",
                if would == cordon_execpolicy::RunWould::Refuse {
                    "refuses"
                } else {
                    "asks about"
                },
                record.reason
            )),
        }
    }
}

#[derive(Default)]
struct ProcState {
    unread: std::collections::VecDeque<u8>,
    /// The last [`runner::STDERR_TAIL`] bytes of output, read or not (for classification).
    recent: std::collections::VecDeque<u8>,
    dropped: u64,
    /// Of `dropped`, the bytes an answer already counted in its `dropped_bytes` while the
    /// marker waits for a read to reach its place after the kept start: an answer counts a
    /// drop when it happened, not when the marker is read (new-user pass: the first answer
    /// to `seq 1 200000` said 0 dropped and 1048271 more bytes of a 1.29 MB output).
    dropped_told: u64,
    /// Bytes at the front of `unread` that are the start of the output, kept when the
    /// buffer overflowed before any read ([`OUTPUT_HEAD_BYTES`]); `dropped` bytes were then
    /// taken after them.
    head: usize,
    /// Whether a reader has taken any output yet.
    read_any: bool,
    finished: Option<Report>,
    /// Without a terminal: the unfinished last line of stdout (0) and stderr (1), held
    /// until its newline so that the two pipes are merged at line boundaries
    /// ([`runner::LineHold`]); let go by a reader, or at the end.
    partial: [runner::LineHold; 2],
}

impl ProcState {
    /// Appends `bytes` to the output (unread, and the classification tail).
    fn emit(&mut self, bytes: &[u8]) {
        self.unread.extend(bytes);
        self.recent.extend(bytes);
        let old = self.recent.len().saturating_sub(runner::STDERR_TAIL);
        self.recent.drain(..old);
        let mut over = self.unread.len().saturating_sub(OUTPUT_BUFFER_BYTES);
        if over > 0 {
            // Nothing read yet: the start of the output stays (whole lines of it), and
            // what is dropped is taken after it.
            if !self.read_any && self.head == 0 && self.dropped == 0 {
                let mut keep = OUTPUT_HEAD_BYTES.min(self.unread.len() - over);
                // Never inside a character (attack pass 153: a lone lead byte was left
                // before the marker).
                while keep > 0 && keep < self.unread.len() && (self.unread[keep] & 0xC0) == 0x80 {
                    keep -= 1;
                }
                self.head = self
                    .unread
                    .iter()
                    .take(keep)
                    .rposition(|b| *b == b'\n')
                    .map_or(keep, |nl| nl + 1);
            }
            let start = self.head;
            // Through the end of the line cut into, so what is kept starts a line (new-user
            // pass nu24, F3).
            if let Some(nl) = self
                .unread
                .iter()
                .skip(start + over)
                .take(runner::LineHold::CAP)
                .position(|b| *b == b'\n')
            {
                over += nl + 1;
            }
            let over = over.min(self.unread.len() - start);
            self.unread.drain(start..start + over);
            self.dropped += over as u64;
        }
    }

    /// [`Proc::push_stream`]: whole lines of `stream` out, the unfinished rest held.
    fn push_stream(&mut self, stream: usize, bytes: &[u8]) {
        let out = self.partial[stream].push(bytes);
        self.emit(&out);
    }

    /// Lets go of the held unfinished lines, stdout's first.
    fn flush_partials(&mut self) {
        for i in 0..2 {
            let held = self.partial[i].take();
            self.emit(&held);
        }
    }
}

impl Proc {
    /// Output from the terminal (one stream: as it comes).
    fn push(&self, bytes: &[u8]) {
        if let Ok(mut st) = self.state.lock() {
            st.emit(bytes);
        }
        self.changed.notify_all();
    }

    /// Output from stdout (`stream` 0) or stderr (1) without a terminal: whole lines go
    /// out at once; an unfinished one is held ([`ProcState::partial`]).
    fn push_stream(&self, stream: usize, bytes: &[u8]) {
        if let Ok(mut st) = self.state.lock() {
            st.push_stream(stream, bytes);
        }
        self.changed.notify_all();
    }

    fn touch(&self) {
        if let Ok(mut t) = self.last_used.lock() {
            *t = Instant::now();
        }
    }

    /// Waits until the run ended, at most until `deadline` (`None`: no bound).
    fn wait_finished(&self, deadline: Option<Instant>) {
        let mut st = lock(&self.state);
        while st.finished.is_none() {
            let left = match deadline {
                Some(d) => d.saturating_duration_since(Instant::now()),
                None => Duration::from_secs(3600),
            };
            if left.is_zero() {
                return;
            }
            st = match self.changed.wait_timeout(st, left) {
                Ok((s, _)) => s,
                Err(p) => p.into_inner().0,
            };
        }
    }

    /// Waits until there is output or the run ended, at most `wait`; then takes up to
    /// `max` bytes (cut at a UTF-8 boundary).
    fn take(&self, max: usize, wait: Duration, whole: bool) -> (Output, Option<Report>) {
        let deadline = Instant::now() + wait;
        let mut st = match self.state.lock() {
            Ok(s) => s,
            Err(p) => p.into_inner(),
        };
        // `whole`: what arrives within the whole wait (until the run ends or `max` bytes are
        // there), not only the first of it ([`Harness::read_output_within`]).
        while st.finished.is_none()
            && if whole {
                st.unread.len() < max
            } else {
                st.unread.is_empty() && st.partial.iter().all(runner::LineHold::is_empty)
            }
        {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            st = match self.changed.wait_timeout(st, left) {
                Ok((s, _)) => s,
                Err(p) => p.into_inner().0,
            };
        }
        // A reader gets what is there, an unfinished line (a prompt) included.
        st.flush_partials();
        // The command ended with more than one answer holds: its start and its end, the
        // middle left out, each cut at a line (new-user pass nu24, F3: the first answer was
        // a 64 KiB slice from the middle, and the error at the end 15 reads away).
        if st.finished.is_some() && st.unread.len() > max && max >= 2 * HEAD_TAIL_MIN {
            st.read_any = true;
            let all: Vec<u8> = st.unread.drain(..).collect();
            let (head, tail, omitted) = head_and_tail(&all, max);
            let dropped = std::mem::take(&mut st.dropped);
            let told = std::mem::take(&mut st.dropped_told);
            let kept_start = std::mem::take(&mut st.head);
            let mut text = String::new();
            // Bytes dropped after the kept start lie in the middle left out (or, with a
            // head longer than the kept start, inside the head: marked where they were).
            let (left_out, head_marked) = match (dropped, kept_start) {
                (0, _) => (omitted as u64, None),
                (d, 0) => {
                    text.push_str(&dropped_marker(d));
                    (omitted as u64, None)
                }
                (d, k) if k >= head.len() => (omitted as u64 + d, None),
                (d, k) => (omitted as u64, Some((k, d))),
            };
            match head_marked {
                Some((k, d)) => {
                    text.push_str(&quote_lookalikes(&String::from_utf8_lossy(&head[..k])));
                    text.push_str(&dropped_here_marker(d, &text));
                    text.push_str(&quote_lookalikes(&String::from_utf8_lossy(&head[k..])));
                }
                None => text.push_str(&quote_lookalikes(&String::from_utf8_lossy(head))),
            }
            // A line of its own, as every cordon line (the head may end mid-line).
            if !text.is_empty() && !text.ends_with('\n') {
                text.push('\n');
            }
            text.push_str(&format!(
                "[cordon: {left_out} bytes of output left out here; the end of the output \
                 follows]\n"
            ));
            text.push_str(&quote_lookalikes(&String::from_utf8_lossy(tail)));
            return (
                Output {
                    text,
                    remaining_bytes: 0,
                    dropped_bytes: dropped - told,
                    omitted_bytes: omitted,
                    truncated: true,
                    drop_marked: dropped > 0,
                },
                st.finished.clone(),
            );
        }
        let n = st.unread.len().min(max);
        let bytes: Vec<u8> = st.unread.iter().take(n).copied().collect();
        // With more to come, the answer ends at a line's end when it holds one: a line cut
        // in two read as two whole lines (new-user pass 152: `15` and `9567` for 159567).
        let n = if n < st.unread.len() {
            bytes.iter().rposition(|b| *b == b'\n').map_or(n, |i| i + 1)
        } else {
            n
        };
        let cut = match std::str::from_utf8(&bytes[..n]) {
            Ok(_) => n,
            // An incomplete character at the end stays for the next read.
            Err(e) if e.error_len().is_none() && e.valid_up_to() > 0 => e.valid_up_to(),
            Err(_) => n,
        };
        st.unread.drain(..cut);
        if cut > 0 {
            st.read_any = true;
        }
        let mut text = String::new();
        // (bytes dropped that this answer counts, whether its text marks them)
        let (dropped, drop_marked) = if st.head > 0 {
            // The kept start first; the marker where the dropped bytes were, once a read
            // reaches it. The drop is counted now: it has happened.
            if cut < st.head {
                st.head -= cut;
                text.push_str(&quote_lookalikes(&String::from_utf8_lossy(&bytes[..cut])));
                let new = st.dropped - st.dropped_told;
                st.dropped_told = st.dropped;
                (new, false)
            } else {
                let k = std::mem::take(&mut st.head);
                let d = std::mem::take(&mut st.dropped);
                let told = std::mem::take(&mut st.dropped_told);
                text.push_str(&quote_lookalikes(&String::from_utf8_lossy(&bytes[..k])));
                if d > 0 {
                    text.push_str(&dropped_here_marker(d, &text));
                }
                text.push_str(&quote_lookalikes(&String::from_utf8_lossy(&bytes[k..cut])));
                (d - told, d > 0)
            }
        } else {
            let d = std::mem::take(&mut st.dropped);
            if d > 0 {
                text.push_str(&dropped_marker(d));
            }
            text.push_str(&quote_lookalikes(&String::from_utf8_lossy(&bytes[..cut])));
            (d, d > 0)
        };
        let remaining = st.unread.len();
        (
            Output {
                text,
                remaining_bytes: remaining,
                dropped_bytes: dropped,
                omitted_bytes: 0,
                truncated: remaining > 0 || dropped > 0 || drop_marked,
                drop_marked,
            },
            st.finished.clone(),
        )
    }
}

/// What the command printed, with every line that holds `[cordon:` marked as output
/// ([`OUTPUT_MARK`] before it): in a result's text, cordon's own lines (the summary, the
/// widening to ask for) follow the output, and a command could print look-alikes of them
/// (nu23 Q6: a forged "allow writing ~/bin" instruction). `structured_content` is
/// cordon's alone either way.
pub fn quote_lookalikes(output: &str) -> String {
    // Every character a reader may take for a line break starts a line: a fake marker
    // after `\r` or U+2028 began a displayed line unmarked (new-user pass nu26, F4).
    let breaks = |c: char| {
        matches!(
            c,
            '\n' | '\r' | '\u{0b}' | '\u{0c}' | '\u{85}' | '\u{2028}' | '\u{2029}'
        )
    };
    if !output.split(breaks).any(looks_like_a_marker) {
        return output.to_string();
    }
    output
        .split_inclusive(breaks)
        .map(|line| {
            if looks_like_a_marker(line) {
                format!("{OUTPUT_MARK}{line}")
            } else {
                line.to_string()
            }
        })
        .collect()
}

/// Whether `line` reads as one of cordon's `[cordon: …]` lines to a model: compared with
/// white space and invisible characters left out, case folded, and full-width brackets and
/// colons read as ASCII (attack pass 46, N5: `[cor\u{200b}don:`, `［cordon:`, `[cordon :`
/// and `[Cordon:` were not marked).
fn looks_like_a_marker(line: &str) -> bool {
    let folded: String = line
        .chars()
        .filter(|c| {
            !c.is_whitespace()
                && !matches!(
                    *c,
                    '\u{200b}'..='\u{200f}' | '\u{2060}' | '\u{feff}' | '\u{00ad}'
                )
        })
        .map(|c| match c {
            '［' => '[',
            '：' => ':',
            c => c,
        })
        .flat_map(char::to_lowercase)
        .collect();
    folded.contains("[cordon:")
}

/// Put before a line of the command's output that imitates one of cordon's
/// ([`quote_lookalikes`]).
pub const OUTPUT_MARK: &str = "(command output) ";

/// The smallest head or tail [`head_and_tail`] gives: below twice this, an answer is not
/// split.
const HEAD_TAIL_MIN: usize = 256;

/// `all` in at most `max` bytes: its first part and its last (a third and two thirds of
/// `max`: the end is where a failure is said), each cut at a line boundary when one is
/// near and at a UTF-8 boundary, with the number of bytes left out between them.
fn head_and_tail(all: &[u8], max: usize) -> (&[u8], &[u8], usize) {
    let head_max = max / 3;
    let tail_max = max - head_max;
    let mut head_end = head_max.min(all.len());
    if let Some(nl) = all[..head_end].iter().rposition(|b| *b == b'\n') {
        if nl + 1 >= head_max / 2 {
            head_end = nl + 1;
        }
    }
    while head_end > 0 && std::str::from_utf8(&all[..head_end]).is_err() {
        head_end -= 1;
    }
    let mut tail_start = all.len().saturating_sub(tail_max).max(head_end);
    if let Some(nl) = all[tail_start..].iter().position(|b| *b == b'\n') {
        if nl < tail_max / 2 {
            tail_start += nl + 1;
        }
    }
    while tail_start < all.len() && (all[tail_start] & 0xC0) == 0x80 {
        tail_start += 1;
    }
    (&all[..head_end], &all[tail_start..], tail_start - head_end)
}

/// How many sessions the idle rule ended are remembered, for [`HarnessError::Expired`].
const EXPIRED_REMEMBERED: usize = 256;

struct Inner {
    /// Sessions the idle rule ended or let go, with what it did (the latest
    /// [`EXPIRED_REMEMBERED`]).
    expired: Mutex<BTreeMap<String, String>>,
    opts: HarnessOptions,
    manager: SandboxManager,
    approvals: Mutex<Session>,
    justification: Arc<Mutex<Option<String>>>,
    procs: Mutex<BTreeMap<String, Arc<Proc>>>,
    next: AtomicU64,
}

impl Drop for Inner {
    fn drop(&mut self) {
        if let Ok(procs) = self.procs.get_mut() {
            for p in procs.values() {
                if let Some(c) = p.control.lock().ok().and_then(|c| c.clone()) {
                    c.kill();
                }
            }
        }
    }
}

/// The approver wrapper that shows the agent's justification with each request.
struct Justified {
    inner: Box<dyn Approver + Send>,
    justification: Arc<Mutex<Option<String>>>,
}

impl Approver for Justified {
    fn ask(&mut self, req: &ReviewableRequest) -> Reply {
        let j = self.justification.lock().ok().and_then(|j| j.clone());
        match j {
            Some(j) => {
                let mut req = req.clone();
                req.justification = Some(j);
                self.inner.ask(&req)
            }
            None => self.inner.ask(req),
        }
    }
    fn name(&self) -> &'static str {
        self.inner.name()
    }
    fn answers_hosts(&self) -> bool {
        self.inner.answers_hosts()
    }
}

/// A harness: the approval session, the sandbox manager and the process sessions of one
/// agent session. See the module docs.
pub struct Harness {
    inner: Arc<Inner>,
}

impl Harness {
    /// A harness whose approvals are denied with the reason (non-interactive, R-A6).
    ///
    /// Errors: the trust profile cannot be built for `opts.cwd` (checked once up front).
    pub fn new(opts: HarnessOptions) -> Result<Harness, HarnessError> {
        Harness::with_approver(
            opts,
            Box::new(NonInteractive::for_front(crate::ApprovalFront::Library)),
        )
    }

    /// A harness whose approvals go to `approver`.
    ///
    /// Errors: as [`Harness::new`].
    pub fn with_approver(
        opts: HarnessOptions,
        approver: Box<dyn Approver + Send>,
    ) -> Result<Harness, HarnessError> {
        TrustProfile::build(opts.entry.clone(), &opts.cwd, &opts.layers)?;
        let justification = Arc::new(Mutex::new(None));
        let mut session = Session::new(
            opts.mode,
            Box::new(Justified {
                inner: approver,
                justification: Arc::clone(&justification),
            }),
        );
        session.rules_file = crate::trust::user_rules_path();
        let mut manager = SandboxManager::for_host();
        if let Some(h) = &opts.helper {
            manager = manager.with_helper(h.clone());
        }
        let inner = Arc::new(Inner {
            opts,
            manager,
            approvals: Mutex::new(session),
            justification,
            procs: Mutex::new(BTreeMap::new()),
            expired: Mutex::new(BTreeMap::new()),
            next: AtomicU64::new(1),
        });
        spawn_reaper(Arc::downgrade(&inner));
        Ok(Harness { inner })
    }

    /// Why the resolved run may not start: its cwd (as resolution made it, physical) is
    /// outside the harness's cwd though the check before found the typed cwd inside
    /// (`approved_elsewhere` `None`), or differs from the outside directory the person
    /// approved. `None` when it is where it was judged to be.
    fn cwd_moved(
        &self,
        exec: &cordon_sandbox::ExecRequest,
        approved_elsewhere: Option<&Path>,
    ) -> Option<String> {
        let run_cwd = exec.resolved.as_ref().map_or(&exec.cwd, |r| &r.cwd);
        let base = self.base_cwd();
        let moved = match approved_elsewhere {
            None => !run_cwd.starts_with(&base),
            Some(approved) => run_cwd != approved,
        };
        moved.then(|| {
            format!(
                "the cwd resolved to {}, not where it was judged to be ({}): a path on its \
                 way changed between the check and the run (e.g. a directory swapped for a \
                 symlink); nothing ran",
                run_cwd.display(),
                approved_elsewhere.map_or_else(
                    || format!("inside {}", base.display()),
                    |a| a.display().to_string()
                )
            )
        })
    }

    /// The cwd a call names, absolute (relative: against the harness's cwd), as typed.
    fn typed_cwd(&self, cwd: Option<&Path>) -> PathBuf {
        let o = &self.inner.opts;
        let typed = match cwd {
            Some(c) if c.is_absolute() => c.to_path_buf(),
            Some(c) => o.cwd.join(c),
            None => o.cwd.clone(),
        };
        // A `..` is taken as the kernel takes it, after any symlink before it (`lnk/..` is
        // the link target's parent): the approval, the workspace check and the run then
        // judge one directory (attack pass 196: `ws/lnk/..` was judged as the target's
        // parent, resolved as `ws`, and refused as "changed between check and run").
        if typed
            .components()
            .any(|c| c == std::path::Component::ParentDir)
        {
            if let Ok(c) = std::fs::canonicalize(&typed) {
                return c;
            }
        }
        typed
    }

    /// `Some(cwd)` when `cwd` (canonical where it exists) is not inside the harness's cwd.
    fn outside_cwd(&self, cwd: &Path) -> Option<PathBuf> {
        let c = canonical(cwd);
        (!c.starts_with(self.base_cwd())).then_some(c)
    }

    /// The harness's cwd, canonical where it exists: what "inside" is judged against.
    fn base_cwd(&self) -> PathBuf {
        canonical(&self.inner.opts.cwd)
    }

    /// The trust profile for `cwd` (relative: against the harness's cwd) with `with`
    /// additional permissions: the one constructor (R-E1).
    ///
    /// Errors: [`HarnessError::Trust`].
    pub fn trust(
        &self,
        cwd: Option<&Path>,
        with: Option<&str>,
    ) -> Result<TrustProfile, HarnessError> {
        let o = &self.inner.opts;
        let cwd = self.typed_cwd(cwd);
        let mut layers = o.layers.clone();
        if let Some(w) = with {
            layers.with = Some(w.to_string());
        }
        Ok(TrustProfile::build(o.entry.clone(), &cwd, &layers)?)
    }

    /// The `environment_context` (R-M1) for the harness's cwd, rendered from the profile
    /// a command would be confined by.
    ///
    /// Errors: the profile cannot be built or resolved.
    pub fn environment_context(&self) -> Result<String, HarnessError> {
        let trust = self.trust(None, None)?;
        let req = trust.command(vec!["true".into()]);
        let (resolved, status, backend) = self
            .inner
            .manager
            .context_parts(&req)
            .map_err(HarnessError::Usage)?;
        Ok(cordon_policy::environment_context_remembering(
            &resolved,
            &status,
            backend,
            self.inner.opts.mode.as_str(),
            cordon_policy::Detail::Compact,
            &crate::hosts::remembered_hosts_of_user(),
        ))
    }

    /// Runs one tool call: exec policy → approval → sandbox → start. Waits for the end
    /// (or `yield_time`), and returns the output so far with the classified outcome, or
    /// — when it still runs — a session id for [`Harness::write_stdin`],
    /// [`Harness::read_output`], [`Harness::wait`], [`Harness::kill`]. A refusal
    /// (forbidden, denied approval, sandbox unavailable) is an `Ok` result with outcome
    /// `refused`: the command never ran.
    ///
    /// Errors: the trust profile cannot be built (bad cwd or additional permissions).
    pub fn exec(&self, params: ExecParams) -> Result<ExecResult, HarnessError> {
        let trust = self.trust(
            params.cwd.as_deref(),
            params.additional_permissions.as_deref(),
        )?;
        // A cwd that is not a directory is an error before anything is asked: a person
        // must not be asked to approve a directory that is then refused (new-user pass
        // nu17 N10).
        if !trust.cwd.is_dir() {
            return Err(HarnessError::Usage(format!(
                "cwd {} is not a directory{}: give an existing directory (relative paths are \
                 taken against {})",
                trust.cwd.display(),
                if trust.cwd.exists() {
                    ""
                } else {
                    " (it does not exist)"
                },
                self.inner.opts.cwd.display()
            )));
        }
        let spec = RunSpec {
            argv: params.command.to_argv(),
            preference: SandboxPreference::Auto,
            preference_is_default: true,
            allow_unconfined: false,
            timeout: params.timeout,
            allow_unsandboxed_retry: false,
            capture_stderr: !params.tty,
            helper_verbose: false,
            // What the agent types into a terminal is not checked (attack pass 41, E1), nor
            // what it writes later into a stdin kept open (a persistent shell): capped alike
            // (new-user pass 201: only the terminal was).
            interactive: params.tty || params.stdin,
            terminal: params.tty,
            stdin: if params.tty || params.stdin {
                crate::drive::StdinSource::Terminal
            } else {
                match &params.stdin_data {
                    None => crate::drive::StdinSource::Known(String::new()),
                    Some(b) => std::str::from_utf8(b)
                        .map_or(crate::drive::StdinSource::Unknown, |t| {
                            crate::drive::StdinSource::Known(t.to_string())
                        }),
                }
            },
        };
        let prepared = {
            let mut session = lock(&self.inner.approvals);
            set(&self.inner.justification, params.justification.clone());
            let elsewhere = self.outside_cwd(&trust.cwd);
            let approved =
                self.approve_widening(&mut session, &trust, &spec, &params, elsewhere.as_deref());
            let p = match approved {
                Ok(approved) => prepare(&mut session, &self.inner.manager, &trust, &spec, approved),
                Err(refused) => Err(refused),
            };
            // The check above read the typed cwd; resolution read it again. What runs is
            // what resolution made of it: judged again here, so a directory swapped for a
            // symlink in between cannot move the run (breaker, stop 22: an agent's own
            // background session flipped `d` <-> `d -> ../other`, and 1 in 20 calls made the
            // other project the writable workspace without an approval).
            let p = match p {
                Ok(prep) => match self.cwd_moved(&prep.exec, elsewhere.as_deref()) {
                    Some(why) => {
                        session.scope.finish(&prep.run_id);
                        Err(Box::new(Report::not_run(
                            prep.run_id.clone(),
                            prep.record.clone(),
                            Outcome::refused(why.clone(), crate::drive::EXIT_CORDON),
                            crate::Verdict::Refuse {
                                reason: why,
                                abort: false,
                            },
                        )))
                    }
                    None => Ok(prep),
                },
                Err(e) => Err(e),
            };
            set(&self.inner.justification, None);
            p
        };
        let prepared = match prepared {
            Ok(p) => p,
            Err(report) => {
                let report = *report;
                return Ok(ExecResult {
                    session_id: None,
                    running: false,
                    output: Output::default(),
                    outcome: Some(report.outcome.clone()),
                    sandbox: Some(AppliedSandbox::of(&report)),
                    report: Some(report),
                });
            }
        };
        let proc = self.start(prepared, trust, &spec, &params)?;
        let wait = params.yield_time.unwrap_or(Duration::MAX);
        self.collect(&proc, params.max_output_bytes, wait, true, false)
    }

    /// Additional permissions come from the agent, not from the person who configured the
    /// harness: a widening always needs an approval (R-O1, R-A7), whatever the exec policy
    /// says of the command (a `forbid` still refuses; bypass mode approves). `Ok(None)`: no
    /// widening asked, the loop decides as usual; `Ok(Some(..))`: approved, the loop runs it
    /// without asking again.
    fn approve_widening(
        &self,
        session: &mut Session,
        trust: &TrustProfile,
        spec: &RunSpec,
        params: &ExecParams,
        elsewhere: Option<&Path>,
    ) -> Result<Option<(crate::RunId, crate::Verdict)>, Box<Report>> {
        // Two ways an agent widens its own sandbox: additional permissions, and a cwd
        // outside the harness's (its project becomes the writable workspace). Each needs
        // an approval (breaker finding: `cwd: "../other"` wrote there unapproved).
        let grants = params.additional_permissions.as_deref().filter(|_| {
            trust
                .additional
                .as_ref()
                .is_some_and(|a| !a.grants_nothing())
        });
        let json = match (grants, elsewhere) {
            (None, None) => return Ok(None),
            (Some(g), None) => g.to_string(),
            (None, Some(d)) => format!(
                "(cwd {} outside {}: its project becomes writable)",
                d.display(),
                self.inner.opts.cwd.display()
            ),
            (Some(g), Some(d)) => format!(
                "{g} (cwd {} outside {}: its project becomes writable)",
                d.display(),
                self.inner.opts.cwd.display()
            ),
        };
        let json = json.as_str();
        let req = trust.command(spec.argv.clone());
        let record = trust.evaluate_with_stdin(&req, &spec.stdin);
        let run = session.scope.start_run();
        let refuse = |session: &mut Session, reason: String| {
            session.scope.finish(&run);
            Box::new(Report::not_run(
                run.clone(),
                record.clone(),
                Outcome::refused(reason.clone(), crate::drive::EXIT_CORDON),
                crate::Verdict::Refuse {
                    reason,
                    abort: false,
                },
            ))
        };
        // A widening the sandbox cannot take (a grant on cordon's own config) is refused
        // before anyone is asked (attack pass 45, M5).
        if let Err(e) = self.inner.manager.transform(&req) {
            return Err(refuse(session, e.to_string()));
        }
        let why = match crate::session::need(&record, session.mode) {
            crate::session::Need::Refused(r) => return Err(refuse(session, r)),
            _ if session.mode == ApprovalMode::Never => {
                return Err(refuse(
                    session,
                    format!(
                        "additional permissions {json} need an approval, and approval mode \
                         never asks"
                    ),
                ))
            }
            crate::session::Need::Ask(r) => {
                format!("{r}; and it asks for additional permissions {json}")
            }
            crate::session::Need::NotNeeded(_) if session.mode == ApprovalMode::Bypass => {
                return Ok(Some((
                    run,
                    crate::Verdict::Run {
                        reason: "bypass mode: additional permissions approved".into(),
                        by: "policy".into(),
                        approval_id: None,
                        answer: None,
                    },
                )))
            }
            crate::session::Need::NotNeeded(_) => {
                format!("asks for additional permissions {json}")
            }
        };
        let needs = crate::request::NeededPermissions {
            profile: trust.profile.clone(),
            additional: trust.additional.clone(),
            sandboxed: true,
        };
        let mut ask =
            ReviewableRequest::tool_call(run.clone(), &record, trust.cwd.clone(), needs, why);
        // What is asked is a widening (permissions, or another project writable): a command
        // rule cannot answer it, so none is offered (new-user pass nu22, P3: `remember-rule`
        // for a cwd outside the project saved `allow npm test` for everywhere, and the same
        // call was asked again).
        ask.remember = None;
        ask.cwd_elsewhere = elsewhere.is_some();
        match session.ask(ask, &record) {
            v @ crate::Verdict::Run { .. } => Ok(Some((run, v))),
            crate::Verdict::Refuse { reason, .. } => Err(refuse(session, reason)),
        }
    }

    fn start(
        &self,
        prepared: Prepared,
        trust: TrustProfile,
        spec: &RunSpec,
        params: &ExecParams,
    ) -> Result<Arc<Proc>, HarnessError> {
        let id = format!("s-{}", self.inner.next.fetch_add(1, Ordering::Relaxed));
        let io_err = |source| HarnessError::Io {
            id: id.clone(),
            source,
        };
        let mut io = RunIo::default();
        let mut readers: Vec<Box<dyn Read + Send>> = Vec::new();
        let mut stdin_w = None;
        let mut master = None;
        if params.tty {
            let (m, s) = open_pty(params.size).map_err(io_err)?;
            let dup = |fd: &std::os::fd::OwnedFd| fd.try_clone().map_err(io_err);
            io.stdin = Some(Stdio::from(dup(&s)?));
            io.stdout = Some(Stdio::from(dup(&s)?));
            io.stderr = Some(Stdio::from(s));
            readers.push(Box::new(std::fs::File::from(dup(&m)?)));
            stdin_w = Some(std::fs::File::from(dup(&m)?));
            master = Some(m);
        } else {
            if params.stdin || params.stdin_data.is_some() {
                let (r, w) = std::io::pipe().map_err(io_err)?;
                io.stdin = Some(Stdio::from(r));
                stdin_w = Some(std::fs::File::from(std::os::fd::OwnedFd::from(w)));
            } else {
                io.stdin = Some(Stdio::null());
            }
            let (r, w) = std::io::pipe().map_err(io_err)?;
            io.stdout = Some(Stdio::from(w));
            readers.push(Box::new(r));
        }
        let proc = Arc::new(Proc {
            id: id.clone(),
            tty: params.tty,
            state: Mutex::new(ProcState::default()),
            changed: Condvar::new(),
            stdin: Mutex::new(stdin_w),
            master,
            control: Mutex::new(None),
            last_used: Mutex::new(Instant::now()),
            shell_input: ((params.tty || params.stdin) && crate::drive::shell_start(&spec.argv))
                .then(|| {
                    Mutex::new(ShellInput {
                        trust: trust.clone(),
                        mode: self.inner.opts.mode,
                        pending: String::new(),
                    })
                }),
        });
        if !params.tty {
            let p = Arc::clone(&proc);
            io.stderr_sink = Some(Box::new(move |b: &[u8]| p.push_stream(1, b)));
        }
        if let Some(data) = params.stdin_data.clone() {
            // On a thread of its own: a command that reads slowly (or not at all) must not
            // hold up the call; the write ends with EPIPE once the command is gone.
            let p = Arc::clone(&proc);
            let close = !params.stdin && !params.tty;
            std::thread::spawn(move || {
                let mut g = lock(&p.stdin);
                if let Some(f) = g.as_mut() {
                    let _ = f.write_all(&data);
                }
                if close {
                    *g = None;
                }
            });
        }
        let tty = params.tty;
        let interactive = (tty || params.stdin) && crate::interactive_start(&spec.argv);
        #[cfg(target_os = "linux")]
        {
            io.prepare = Some(Box::new(move |cmd: &mut std::process::Command| {
                // The agent's `signal` (SIGINT as its ^C) reaches the whole command, as a
                // terminal's does (new-user pass nu22, P2).
                cmd.env(cordon_sandbox::linux::INTERRUPTS_TO_ALL_ENV, "1");
                cordon_sandbox::linux::pty::attach_session(cmd, tty)
            }));
        }
        {
            let p = Arc::clone(&proc);
            io.on_spawn = Some(Box::new(move |c: RunControl| {
                *lock(&p.control) = Some(c);
            }));
        }
        // The reader threads end at end of file (every writer closed), or — for a
        // terminal — at EIO once the command's side is gone.
        let (eof_tx, eof_rx) = std::sync::mpsc::channel::<()>();
        for mut r in readers {
            let p = Arc::clone(&proc);
            let eof = eof_tx.clone();
            std::thread::spawn(move || {
                let mut buf = [0u8; 8192];
                loop {
                    match r.read(&mut buf) {
                        Ok(0) | Err(_) => break,
                        Ok(n) if tty => p.push(&buf[..n]),
                        Ok(n) => p.push_stream(0, &buf[..n]),
                    }
                }
                let _ = eof.send(());
            });
        }
        drop(eof_tx);
        if tty {
            // Classification reads the terminal's last output (stdout and stderr share it).
            let p = Arc::clone(&proc);
            io.tail = Some(Box::new(move || {
                // Let the reader catch up with what the command wrote last.
                std::thread::sleep(Duration::from_millis(50));
                let st = lock(&p.state);
                let v: Vec<u8> = st.recent.iter().copied().collect();
                String::from_utf8_lossy(&v).into_owned()
            }));
        }
        let opts = RunOptions {
            timeout: spec.timeout,
            capture_stderr: spec.capture_stderr,
            helper_verbose: false,
        };
        let inner = Arc::downgrade(&self.inner);
        let mode = self.inner.opts.mode;
        let p = Arc::clone(&proc);
        // Unknown hosts of a managed network go to the harness's approver (R-P4 `ask`),
        // asked from this run's thread.
        let ctx = crate::hosts::HostAskContext {
            run_id: prepared.run_id.clone(),
            argv: spec.argv.clone(),
            cwd: trust.cwd.clone(),
            needs: prepared.needs.clone(),
        };
        let asks = trust.profile.network == cordon_policy::NetworkPolicy::Managed;
        std::thread::Builder::new()
            .name(format!("cordon-{id}"))
            .spawn(move || {
                let weak = inner.clone();
                let mut asker = |q: &runner::HostAsk| match weak.upgrade() {
                    Some(h) => lock(&h.approvals).ask_host(&ctx, q),
                    None => runner::HostReply {
                        id: q.id,
                        allow: false,
                        rule: "the harness is gone".into(),
                    },
                };
                let mut ran = runner::run_asking(
                    &prepared.exec,
                    &opts,
                    io,
                    asks.then_some(&mut asker as &mut runner::HostAsker<'_>),
                );
                // The Command (holding the other ends) is gone: drain what is left.
                let deadline = Instant::now() + Duration::from_millis(500);
                while eof_rx
                    .recv_timeout(deadline.saturating_duration_since(Instant::now()))
                    .is_ok()
                {}
                // Without a terminal, classification reads both pipes as the caller gets
                // them, not stderr alone: test runners report on stdout (new-user pass
                // nu16 N2: a refused path pytest printed was "named by no output").
                if let (Ok((sig, _)), false) = (&mut ran, tty) {
                    let mut st = lock(&p.state);
                    // Both pipes are at their end: nothing is held back any more.
                    st.flush_partials();
                    let v: Vec<u8> = st.recent.iter().copied().collect();
                    sig.stderr_tail = String::from_utf8_lossy(&v).into_owned();
                    sig.stdout_seen = true;
                }
                // A shell or REPL the agent types into (a terminal, or stdin kept open) is
                // judged by its exit status and signals only, as at the CLI's terminal: its
                // output holds many commands' messages, and a denial the agent saw and
                // handled long before is not why it exited (new-user pass nu24, F2: `ls
                // ~/.ssh`, five commands, then `exit 3` was `sandbox-denied`).
                if let (Ok((sig, _)), true) = (&mut ran, interactive) {
                    sig.stderr_tail.clear();
                    sig.stdout_seen = false;
                }
                let needs = prepared.needs.clone();
                let mut report = conclude(prepared, &trust, ran);
                // After a denial: the smallest widening (R-F2), as advice: the caller asks
                // for it with `additional_permissions`, which needs its own approval.
                if matches!(
                    report.outcome.class,
                    crate::OutcomeClass::SandboxDenied { .. }
                        | crate::OutcomeClass::NetworkDenied { .. }
                ) && !trust.layers.plan
                {
                    report.escalation =
                        Some(crate::escalation(&report.outcome, &needs, mode, false));
                }
                if let Some(h) = inner.upgrade() {
                    let mut approvals = lock(&h.approvals);
                    crate::drive::record_network_denials(&mut approvals, &report);
                    finish_run(&mut approvals, &report.run_id, &report.outcome);
                }
                if let Ok(mut st) = p.state.lock() {
                    st.finished = Some(report);
                }
                if let Ok(mut s) = p.stdin.lock() {
                    *s = None;
                }
                p.changed.notify_all();
            })
            .map_err(io_err)?;
        lock(&self.inner.procs).insert(id, Arc::clone(&proc));
        Ok(proc)
    }

    fn get(&self, id: &str) -> Result<Arc<Proc>, HarnessError> {
        let p = lock(&self.inner.procs).get(id).cloned().ok_or_else(|| {
            match lock(&self.inner.expired).get(id) {
                Some(why) => HarnessError::Expired {
                    id: id.to_string(),
                    why: why.clone(),
                },
                None => HarnessError::NoSession(id.to_string()),
            }
        })?;
        p.touch();
        Ok(p)
    }

    /// Reads up to `max_bytes` of `proc`'s output, waiting at most `wait` for some (or for
    /// the end when `until_end`); forgets the session once it ended and was fully read.
    fn collect(
        &self,
        proc: &Arc<Proc>,
        max_bytes: usize,
        wait: Duration,
        until_end: bool,
        whole: bool,
    ) -> Result<ExecResult, HarnessError> {
        if until_end {
            proc.wait_finished(Instant::now().checked_add(wait));
        }
        let (mut out, finished) = proc.take(
            max_bytes,
            if until_end { Duration::ZERO } else { wait },
            whole,
        );
        out.truncated |= out.remaining_bytes > 0 || out.dropped_bytes > 0 || out.omitted_bytes > 0;
        let done = finished.is_some() && out.remaining_bytes == 0;
        if done {
            lock(&self.inner.procs).remove(&proc.id);
        }
        Ok(ExecResult {
            session_id: (!done).then(|| proc.id.clone()),
            running: finished.is_none(),
            output: out,
            outcome: finished.as_ref().map(|r| r.last().outcome.clone()),
            sandbox: finished.as_ref().map(AppliedSandbox::of),
            report: finished,
        })
    }

    /// Writes `bytes` to the session's stdin (a terminal's input when it has one: `\x03`
    /// is ^C there); `close` then closes stdin (end of file).
    ///
    /// Errors: no such session; stdin closed; the write failed (the command exited).
    ///
    /// Waits at most [`STDIN_WAIT`] for the command to take the input (a command that
    /// never reads its stdin held the call, and every later one for that session, until it
    /// ended): [`HarnessError::StdinStalled`] then says how much was written.
    pub fn write_stdin(&self, id: &str, bytes: &[u8]) -> Result<(), HarnessError> {
        let p = self.get(id)?;
        // A shell session's lines are judged before they are written (see [`ShellInput`]).
        let mut judged = None;
        if let Some(j) = &p.shell_input {
            let j = lock(j);
            match j.judge(&String::from_utf8_lossy(bytes)) {
                Ok(rest) => judged = Some(rest),
                Err(why) => {
                    return Err(HarnessError::Usage(format!(
                        "session {id}: not written: {why}; run it with exec_command, which \
                         asks for approval when it is needed"
                    )))
                }
            }
        }
        let mut g = lock(&p.stdin);
        let f = g
            .as_mut()
            .ok_or_else(|| HarnessError::StdinClosed(id.to_string()))?;
        let wait = self.inner.opts.stdin_wait;
        let written =
            write_within(f, bytes, Instant::now() + wait).map_err(|source| HarnessError::Io {
                id: id.to_string(),
                source,
            })?;
        if let (Some(j), Some(rest)) = (&p.shell_input, judged) {
            lock(j).pending = rest;
        }
        if written < bytes.len() {
            return Err(HarnessError::StdinStalled {
                id: id.to_string(),
                waited: wait,
                written,
                total: bytes.len(),
            });
        }
        Ok(())
    }

    /// Closes the session's stdin (end of file for a pipe; for a terminal, use `\x04`).
    ///
    /// Errors: no such session.
    pub fn close_stdin(&self, id: &str) -> Result<(), HarnessError> {
        let p = self.get(id)?;
        if !p.tty {
            *lock(&p.stdin) = None;
        }
        Ok(())
    }

    /// Output since the last read, at most `max_bytes`, waiting up to `wait` for some to
    /// arrive (returns at once when there is some, or the run ended). With the outcome
    /// once the run ended.
    ///
    /// Errors: no such session.
    pub fn read_output(
        &self,
        id: &str,
        max_bytes: usize,
        wait: Duration,
    ) -> Result<ExecResult, HarnessError> {
        self.read(id, max_bytes, wait, false)
    }

    /// [`Harness::read_output`] that gathers what arrives within the whole `wait`, not
    /// only the first of it: it returns when `wait` has passed, the run ended, or
    /// `max_bytes` are there. For a caller that reads once per turn (an agent's
    /// `write_stdin`): `echo A; sleep 0.3; echo B` read with 2 s gets both lines, not `A`
    /// now and `B` on the next call (new-user pass 157, #2).
    ///
    /// Errors: no such session.
    pub fn read_output_within(
        &self,
        id: &str,
        max_bytes: usize,
        wait: Duration,
    ) -> Result<ExecResult, HarnessError> {
        self.read(id, max_bytes, wait, true)
    }

    /// [`Harness::read_output`] (`whole` false) and [`Harness::read_output_within`].
    fn read(
        &self,
        id: &str,
        max_bytes: usize,
        wait: Duration,
        whole: bool,
    ) -> Result<ExecResult, HarnessError> {
        let p = self.get(id)?;
        self.collect(&p, max_bytes, wait, false, whole)
    }

    /// Waits up to `timeout` for the run to end, collecting up to `max_bytes` of output.
    ///
    /// Errors: no such session.
    pub fn wait(
        &self,
        id: &str,
        timeout: Duration,
        max_bytes: usize,
    ) -> Result<ExecResult, HarnessError> {
        let p = self.get(id)?;
        self.collect(&p, max_bytes, timeout, true, false)
    }

    /// Sends `signal` (`libc::SIG*`) to the session's command (through the helper, which
    /// forwards it).
    ///
    /// Errors: no such session, or its run already ended.
    pub fn signal(&self, id: &str, signal: i32) -> Result<(), HarnessError> {
        let p = self.get(id)?;
        let c = lock(&p.control).clone();
        match c {
            Some(c) if c.signal(signal) => Ok(()),
            _ => Err(HarnessError::Usage(format!("session {id} has ended"))),
        }
    }

    /// Resizes the session's terminal (the command gets `SIGWINCH`).
    ///
    /// Errors: no such session, or it has no terminal.
    pub fn resize(&self, id: &str, rows: u16, cols: u16) -> Result<(), HarnessError> {
        let p = self.get(id)?;
        let m = p
            .master
            .as_ref()
            .ok_or_else(|| HarnessError::Usage(format!("session {id} has no terminal")))?;
        set_size(m, rows, cols).map_err(|source| HarnessError::Io {
            id: id.to_string(),
            source,
        })
    }

    /// Kills the session's whole process tree and returns its final result (outcome
    /// `cancelled`, unless it had already ended), waiting up to 5 s for the end.
    ///
    /// Errors: no such session.
    pub fn kill(&self, id: &str) -> Result<ExecResult, HarnessError> {
        let p = self.get(id)?;
        if let Some(c) = lock(&p.control).clone() {
            c.kill();
        }
        let r = self.collect(
            &p,
            DEFAULT_MAX_OUTPUT_BYTES,
            Duration::from_secs(5),
            true,
            false,
        )?;
        // Killed: what is left unread is not wanted.
        lock(&self.inner.procs).remove(id);
        Ok(ExecResult {
            session_id: None,
            ..r
        })
    }

    /// The ids of the sessions the harness holds (running, or with output left to read).
    pub fn sessions(&self) -> Vec<String> {
        lock(&self.inner.procs).keys().cloned().collect()
    }

    /// Ends the harness's work before its owner exits: kills every session's process tree
    /// and waits, up to `timeout`, until each run has been concluded — its report made
    /// and what it left in the writable git dirs swept ([`crate::drive::conclude`]). A
    /// server calls it before exiting (attack pass 29, F5: `cordon mcp` exited when its
    /// client closed stdin while a command ran, before the run's thread concluded, so the
    /// run's git-dir sweep never happened). Returns the ids of the sessions not concluded
    /// when `timeout` passed.
    pub fn shutdown(&self, timeout: Duration) -> Vec<String> {
        let procs: Vec<Arc<Proc>> = lock(&self.inner.procs).values().cloned().collect();
        for p in &procs {
            if let Some(c) = lock(&p.control).clone() {
                c.kill();
            }
        }
        let deadline = Instant::now() + timeout;
        let mut left = Vec::new();
        for p in procs {
            let mut st = lock(&p.state);
            while st.finished.is_none() {
                let now = Instant::now();
                if now >= deadline {
                    left.push(p.id.clone());
                    break;
                }
                st = match p.changed.wait_timeout(st, deadline - now) {
                    Ok((g, _)) => g,
                    Err(e) => e.into_inner().0,
                };
            }
        }
        left
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    match m.lock() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    }
}

fn set(slot: &Mutex<Option<String>>, v: Option<String>) {
    *lock(slot) = v;
}

#[cfg(target_os = "linux")]
fn open_pty(size: (u16, u16)) -> std::io::Result<(std::os::fd::OwnedFd, std::os::fd::OwnedFd)> {
    cordon_sandbox::linux::pty::open_pty(size.0, size.1)
}

#[cfg(not(target_os = "linux"))]
fn open_pty(_size: (u16, u16)) -> std::io::Result<(std::os::fd::OwnedFd, std::os::fd::OwnedFd)> {
    Err(std::io::Error::new(
        std::io::ErrorKind::Unsupported,
        "terminal sessions are supported on Linux only",
    ))
}

#[cfg(target_os = "linux")]
fn set_size(m: &std::os::fd::OwnedFd, rows: u16, cols: u16) -> std::io::Result<()> {
    cordon_sandbox::linux::pty::set_window_size(m, rows, cols)
}

#[cfg(not(target_os = "linux"))]
fn set_size(_m: &std::os::fd::OwnedFd, _rows: u16, _cols: u16) -> std::io::Result<()> {
    Err(std::io::Error::new(
        std::io::ErrorKind::Unsupported,
        "terminal sessions are supported on Linux only",
    ))
}

/// Kills sessions idle for longer than the harness's `idle_timeout`, and forgets ended
/// ones nobody read for as long. Ends with the harness.
fn spawn_reaper(inner: Weak<Inner>) {
    let _ = std::thread::Builder::new()
        .name("cordon-reaper".into())
        .spawn(move || loop {
            let Some(h) = inner.upgrade() else { return };
            let idle = h.opts.idle_timeout;
            let tick = (idle / 4).clamp(Duration::from_millis(100), Duration::from_secs(5));
            let expired: Vec<Arc<Proc>> = lock(&h.procs)
                .values()
                .filter(|p| lock(&p.last_used).elapsed() >= idle)
                .cloned()
                .collect();
            for p in expired {
                let running = lock(&p.state).finished.is_none();
                if let Some(c) = lock(&p.control).clone() {
                    c.kill();
                }
                lock(&h.procs).remove(&p.id);
                let why = if running {
                    format!(
                        "it was killed after {} with no call naming it (the server's \
                         --idle-timeout; name a long-running session in a read_output call \
                         now and then to keep it)",
                        humantime::format_duration(idle)
                    )
                } else {
                    format!(
                        "it ended and its output went unread for {} (the server's \
                         --idle-timeout), so it was let go",
                        humantime::format_duration(idle)
                    )
                };
                let mut gone = lock(&h.expired);
                gone.insert(p.id.clone(), why);
                while gone.len() > EXPIRED_REMEMBERED {
                    gone.pop_first();
                }
            }
            drop(h);
            std::thread::sleep(tick);
        });
}

/// `p` with symlinks resolved where it exists, else as given.
fn canonical(p: &Path) -> PathBuf {
    std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// nu26 F4: a fake marker after any character a reader takes for a line break (`\r`,
    /// U+2028, U+0085, form feed) is marked where its line starts, not only after `\n`.
    /// Twin: output without a look-alike is returned as it was.
    #[test]
    fn a_lookalike_after_any_line_break_is_marked() {
        for br in [
            "\n", "\r", "\u{2028}", "\u{2029}", "\u{85}", "\u{0c}", "\u{0b}",
        ] {
            let out = quote_lookalikes(&format!("ok{br}[cordon: exit 0]\n"));
            assert!(
                out.contains(&format!("{br}{OUTPUT_MARK}[cordon: exit 0]")),
                "{br:?}: {out:?}"
            );
            assert!(!out.starts_with(OUTPUT_MARK), "{br:?}: {out:?}");
        }
        let plain = "a\rb\u{2028}c\n";
        assert_eq!(quote_lookalikes(plain), plain);
    }

    /// New-user pass nu21, K3: stderr written a byte at a time (curl) and stdout without a
    /// newline (`-w '%{http_code}'`) are merged at line boundaries: the stderr line whole,
    /// then the stdout text once let go; a held prompt reaches a reader.
    #[test]
    fn pipes_are_merged_at_line_boundaries() {
        let mut st = ProcState::default();
        let err = b"curl: (56) CONNECT tunnel failed\n";
        for (i, b) in err.iter().enumerate() {
            st.push_stream(1, std::slice::from_ref(b));
            if i == 8 {
                st.push_stream(0, b"000");
            }
        }
        st.push_stream(0, b"ok\nmore");
        st.flush_partials();
        let all: Vec<u8> = st.unread.iter().copied().collect();
        assert_eq!(
            String::from_utf8_lossy(&all),
            "curl: (56) CONNECT tunnel failed\n000ok\nmore"
        );
        // An endless line is not held for ever.
        let mut st = ProcState::default();
        st.push_stream(1, &vec![b'x'; runner::LineHold::CAP + 1]);
        assert_eq!(st.unread.len(), runner::LineHold::CAP + 1);
    }

    fn proc() -> Proc {
        Proc {
            id: "s-1".into(),
            tty: false,
            state: Mutex::new(ProcState::default()),
            changed: Condvar::new(),
            stdin: Mutex::new(None),
            master: None,
            control: Mutex::new(None),
            last_used: Mutex::new(Instant::now()),
            shell_input: None,
        }
    }

    /// New-user pass nu24, F3: an ended command's output larger than an answer is given as
    /// its start and its end, each cut at a line, with what was left out counted; the full
    /// buffer drops whole lines. Twin: output that fits is not split.
    #[test]
    fn an_ended_commands_long_output_keeps_its_start_and_end() {
        let all: String = (0..5000).map(|i| format!("line {i}\n")).collect();
        let all = format!("{all}error: the failure\n");
        let (head, tail, omitted) = head_and_tail(all.as_bytes(), 3000);
        let (h, t) = (
            std::str::from_utf8(head).unwrap(),
            std::str::from_utf8(tail).unwrap(),
        );
        assert!(h.starts_with("line 0\n") && h.ends_with('\n'), "{h}");
        assert!(
            t.starts_with("line ") && t.ends_with("error: the failure\n"),
            "{t}"
        );
        assert!(head.len() + tail.len() <= 3000);
        assert_eq!(head.len() + tail.len() + omitted, all.len());
        let (head, tail, omitted) = head_and_tail(b"short\n", 3000);
        assert_eq!((head.len() + tail.len(), omitted), (6, 0));
        // The full buffer drops through the end of the line it cuts into (once something
        // was read: before that, the start is kept and the drop taken after it).
        let p = proc();
        p.push(b"r\n");
        p.take(usize::MAX, Duration::ZERO, false);
        p.push(b"partial line\n");
        p.push(&vec![b'y'; OUTPUT_BUFFER_BYTES - 5]);
        let (o, _) = p.take(20, Duration::ZERO, false);
        assert!(
            o.text.contains("between reads]\ny"),
            "{:?}",
            &o.text[..60.min(o.text.len())]
        );
        assert_eq!(o.dropped_bytes, 13);
    }

    #[test]
    fn reads_stop_at_character_boundaries_and_say_what_is_left() {
        let p = proc();
        p.push("aé€b".as_bytes()); // 1 + 2 + 3 + 1 bytes
        let (o, _) = p.take(2, Duration::ZERO, false); // "a" + half of "é": only "a"
        assert_eq!(o.text, "a");
        assert_eq!(o.remaining_bytes, 6);
        assert!(o.truncated);
        let (o, _) = p.take(5, Duration::ZERO, false);
        assert_eq!(o.text, "é€");
        let (o, _) = p.take(5, Duration::ZERO, false);
        assert_eq!(
            (o.text.as_str(), o.remaining_bytes, o.truncated),
            ("b", 0, false)
        );
    }

    /// New-user pass 152: with more output to come, a read ends at the end of a line it
    /// holds, not in the middle of one (the rest of the line comes with the next read).
    /// Twin: a chunk without a line break is cut where the limit falls.
    #[test]
    fn reads_with_more_to_come_end_at_a_line() {
        let p = proc();
        p.push(b"159566\n159567\n159568\n");
        let (o, _) = p.take(10, Duration::ZERO, false);
        assert_eq!(o.text, "159566\n");
        let (o, _) = p.take(10, Duration::ZERO, false);
        assert_eq!(o.text, "159567\n");
        let (o, _) = p.take(100, Duration::ZERO, false);
        assert_eq!(o.text, "159568\n");
        let p = proc();
        p.push(b"abcdefghij\n");
        let (o, _) = p.take(4, Duration::ZERO, false);
        assert_eq!(o.text, "abcd");
    }

    #[test]
    fn a_full_buffer_drops_the_oldest_output_and_says_so_once() {
        let p = proc();
        // Read once: from then on the buffer keeps the last 1 MiB.
        p.push(b"first\n");
        assert_eq!(p.take(usize::MAX, Duration::ZERO, false).0.text, "first\n");
        p.push(&vec![b'x'; OUTPUT_BUFFER_BYTES]);
        p.push(b"tail");
        let (o, _) = p.take(usize::MAX, Duration::ZERO, false);
        assert_eq!(o.dropped_bytes, 4);
        // What the buffer keeps, not that the output went unread (new-user pass 150,
        // item 12: said so in the answer to the call that started the command).
        assert!(
            o.text.starts_with(
                "[cordon: the 4 bytes of output before this were dropped: cordon keeps the \
                 last 1 MiB of a command's output between reads]\n"
            ),
            "{}",
            &o.text[..120]
        );
        assert!(!o.text.contains("unread"), "{}", &o.text[..120]);
        assert!(o.text.ends_with("xtail"));
        p.push(b"more");
        let (o, _) = p.take(usize::MAX, Duration::ZERO, false);
        assert_eq!((o.text.as_str(), o.dropped_bytes), ("more", 0));
    }

    /// New-user pass 152: output that overflows the buffer before anything was read keeps
    /// its start (where a build's first error is): the bytes dropped are taken after it,
    /// and the marker stands where they were — read in pieces, or in one answer once the
    /// command has ended.
    #[test]
    fn an_overflow_before_any_read_keeps_the_start() {
        let lines: String = (1..=200_000).map(|i| format!("{i}\n")).collect();
        let p = proc();
        p.push(lines.as_bytes());
        let (o, _) = p.take(16 * 1024, Duration::ZERO, false);
        assert!(o.text.starts_with("1\n2\n3\n"), "{}", &o.text[..40]);
        assert!(
            !o.text.contains("[cordon:"),
            "the marker comes where the drop was"
        );
        let mut rest = String::new();
        loop {
            let (o, _) = p.take(64 * 1024, Duration::ZERO, false);
            if o.text.is_empty() {
                break;
            }
            rest.push_str(&o.text);
        }
        assert_eq!(rest.matches("were dropped here").count(), 1);
        assert!(rest.ends_with("200000\n"));
        // Ended within one answer: the start, one line for all that was left out, the end.
        // The kept start cut inside a line (no line break in it), even inside a character:
        // cordon's marker still starts a line, after no broken character (attack pass 153).
        let p = proc();
        let mut long = vec![b'a'; OUTPUT_HEAD_BYTES - 1];
        long.extend("é(command output) ".as_bytes());
        long.extend(lines.as_bytes());
        p.push(&long);
        let mut all = String::new();
        loop {
            let (o, _) = p.take(64 * 1024, Duration::ZERO, false);
            if o.text.is_empty() {
                break;
            }
            all.push_str(&o.text);
        }
        let at = all.find("[cordon:").expect("a marker");
        assert!(all[..at].ends_with("a\n"), "{:?}", &all[at - 20..at + 20]);
        assert!(!all.contains('\u{fffd}'));
        let p = proc();
        p.push(lines.as_bytes());
        let record = cordon_execpolicy::Policy::empty().evaluate(
            &["true".to_string()],
            &cordon_execpolicy::EvalContext::default(),
        );
        p.state.lock().unwrap().finished = Some(Report::not_run(
            crate::RunId::new(),
            record,
            crate::Outcome::refused("x".to_string(), 0),
            crate::Verdict::Refuse {
                reason: "x".into(),
                abort: false,
            },
        ));
        let (o, _) = p.take(64 * 1024, Duration::ZERO, false);
        assert!(o.text.starts_with("1\n2\n"), "{}", &o.text[..40]);
        assert_eq!(o.text.matches("[cordon:").count(), 1, "{}", o.text.len());
        assert!(o.text.contains("bytes of output left out here"));
        assert!(o.text.ends_with("200000\n"));
        assert!(o.dropped_bytes > 0);
    }

    /// New-user pass: `seq 1 200000` read 300 bytes at a time said 0 bytes dropped and
    /// 1048271 more of a 1.29 MB output; the drop came one read late. Each answer counts
    /// the bytes dropped by then (the marker still stands where they were, once), so what
    /// it gives, what was dropped and what remains add up to the output. Twin: the ended
    /// command's start-and-end answer after it does not count that drop again.
    #[test]
    fn an_answer_counts_the_bytes_dropped_before_it() {
        let lines: String = (1..=200_000).map(|i| format!("{i}\n")).collect();
        let total = lines.len() as u64;
        // Paged in small reads while it runs.
        let p = proc();
        p.push(lines.as_bytes());
        let (o, _) = p.take(300, Duration::ZERO, false);
        assert!(o.text.ends_with("102\n"), "{}", o.text);
        assert!(
            o.dropped_bytes > 0 && !o.drop_marked && o.truncated,
            "{o:?}"
        );
        assert_eq!(
            o.text.len() as u64 + o.dropped_bytes + o.remaining_bytes as u64,
            total
        );
        let (mut given, mut dropped) = (o.text.len() as u64, o.dropped_bytes);
        let mut markers = 0;
        loop {
            let (o, _) = p.take(64 * 1024, Duration::ZERO, false);
            if o.text.is_empty() {
                break;
            }
            dropped += o.dropped_bytes;
            let text = match o.text.find("[cordon:") {
                Some(at) => {
                    markers += 1;
                    assert!(o.drop_marked && o.dropped_bytes == 0, "{o:?}");
                    let end = at + o.text[at..].find('\n').unwrap() + 1;
                    format!("{}{}", &o.text[..at], &o.text[end..])
                }
                None => o.text.clone(),
            };
            given += text.len() as u64;
        }
        assert_eq!((markers, given + dropped), (1, total));
        // Ended: the first answer counts the drop; the start-and-end answer after it
        // does not count it again (its "left out here" line still says where it was).
        let p = proc();
        p.push(lines.as_bytes());
        let (o, _) = p.take(300, Duration::ZERO, false);
        let first = o.dropped_bytes;
        assert!(first > 0);
        p.state.lock().unwrap().finished = Some(Report::not_run(
            crate::RunId::new(),
            cordon_execpolicy::Policy::empty().evaluate(
                &["true".to_string()],
                &cordon_execpolicy::EvalContext::default(),
            ),
            crate::Outcome::refused("x".to_string(), 0),
            crate::Verdict::Refuse {
                reason: "x".into(),
                abort: false,
            },
        ));
        let (o, _) = p.take(64 * 1024, Duration::ZERO, false);
        assert!(
            o.text.contains("bytes of output left out here"),
            "{}",
            o.text.len()
        );
        assert_eq!(o.dropped_bytes, 0, "counted twice");
        assert!(o.omitted_bytes > 0);
    }

    /// New-user pass 157, #2: a read that gathers the whole wait gets the output that
    /// arrives after its first line too (an agent's `write_stdin` got `A`, and `B` one
    /// call late); a plain read returns at the first. Twin: `max` bytes end the wait.
    #[test]
    fn a_whole_window_read_gathers_what_arrives_within_it() {
        let p = Arc::new(proc());
        let later = |p: &Arc<Proc>| {
            let q = Arc::clone(p);
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(150));
                q.push_stream(0, b"B\n");
            })
        };
        p.push_stream(0, b"A\n");
        let t = later(&p);
        let (o, _) = p.take(1024, Duration::from_secs(5), false);
        assert_eq!(o.text, "A\n");
        t.join().unwrap();
        p.take(1024, Duration::ZERO, false);
        p.push_stream(0, b"A\n");
        let t = later(&p);
        let start = Instant::now();
        let (o, _) = p.take(1024, Duration::from_millis(600), true);
        assert_eq!(o.text, "A\nB\n");
        assert!(start.elapsed() >= Duration::from_millis(600));
        t.join().unwrap();
        p.push_stream(0, b"0123456789\n");
        let start = Instant::now();
        let (o, _) = p.take(4, Duration::from_secs(5), true);
        assert!(!o.text.is_empty());
        assert!(start.elapsed() < Duration::from_secs(4));
    }

    #[test]
    fn an_empty_read_waits_at_most_its_bound() {
        let p = proc();
        let t = Instant::now();
        let (o, f) = p.take(10, Duration::from_millis(50), false);
        assert!(o.text.is_empty() && f.is_none());
        assert!(t.elapsed() >= Duration::from_millis(50));
    }
}
