//! The helper process (R-T3): `<exe> __sandbox-helper --permission-profile fd:N
//! [--report-fd M] -- <argv…>` with the payload in the inherited memfd N (or `env:NAME`,
//! or inline). Lean on purpose: no clap, no logging setup, a handful of syscalls before
//! the command runs. What it applied goes to M (an [`AppliedReport`], written by the process
//! that applied the layers, relayed by the helper on a status pipe) before the command
//! starts; errors are one [`HelperError`], mapped to the exit code in one place.
//!
//! Rung 1 process tree:
//!
//! ```text
//! cordon ─ helper (host namespaces; creates placeholders, forwards signals, relays the
//!            │       report of what was applied)
//!            └─ init, pid 1 of new user+mount+pid+ipc(+net) namespaces
//!                 (builds the root, confines itself, reaps, forwards signals)
//!                 └─ the command
//! ```
//!
//! When init exits (right after the command), the kernel kills every other process of the
//! pid namespace: nothing the command started outlives it (R-L3). If the helper dies,
//! init gets SIGKILL (`PR_SET_PDEATHSIG`), with the same effect; the helper itself gets
//! SIGKILL when cordon dies.
//!
//! Rung 2 (no user namespaces), with no pid namespace to take the tree down:
//!
//! ```text
//! cordon ─ helper (subreaper; forwards signals)
//!            └─ supervisor (subreaper, own process group; forwards signals, reaps)
//!                 └─ the command (back in the helper's process group; confined by
//!                    Landlock + seccomp + no_new_privs + dropped capabilities)
//! ```
//!
//! Orphans of the command's tree are reparented to the supervisor, which kills every
//! remaining descendant when the command exits — and when the helper dies, however it dies:
//! the kernel wakes it with `PR_SET_PDEATHSIG` (SIGKILL of the helper cannot be caught, so
//! the helper itself could not clean up). Being in its own process group, the supervisor
//! also survives a SIGKILL sent to the helper's whole group (a harness's timeout), and the
//! command cannot signal it (Landlock signal scope). If the supervisor is killed instead,
//! its orphans go to the helper (also a subreaper), which sweeps them when it sees the
//! supervisor exit. Only killing both at once, from outside, would leave the tree running.

use super::features::{probe_fast, Availability, LinuxFeatures};
use super::landlock_layer::{self, Grant, Prepared};
use super::layer::Layer;
use super::mounts;
use super::plan::{plan, LandlockPlan, LinuxPlan, Refusal, Rung};
use super::process::{self, CommandSpec, EXIT_SETUP};
use super::seccomp_filter;
use super::sys;
use super::{PAYLOAD_FROM_ENV_PREFIX, PAYLOAD_FROM_FD_PREFIX};
use crate::HostFs;
use cordon_policy::{Access, HelperPayload, NetworkPolicy, ResolvedProfile};
use serde::{Deserialize, Serialize};
use std::ffi::OsString;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::path::{Path, PathBuf};

/// Where the payload comes from.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum PayloadArg {
    /// The encoded payload itself, from argv.
    Inline(String),
    /// The name of the environment variable holding it (`env:NAME`).
    Env(String),
    /// An inherited descriptor to read it from (`fd:N`), e.g. a sealed memfd.
    Fd(RawFd),
}

/// Parsed helper arguments.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct HelperArgs {
    pub payload: PayloadArg,
    pub argv: Vec<OsString>,
    /// `--report`: print the applied layers to stderr (for people).
    pub report: bool,
    /// `--report-fd N`: write the [`AppliedReport`] as one JSON line to descriptor N, then
    /// close it, before the command starts (for the CLI; the command cannot write it).
    pub report_fd: Option<RawFd>,
}

/// What the helper really applied (R-S5, R-T5), written by the process that applied the
/// layers once they are in force and before the command starts, and handed to the caller on
/// a descriptor the command never holds (`--report-fd`). The caller's plan is only the
/// prediction; this is the fact.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AppliedReport {
    /// The rung the command runs on.
    pub rung: Rung,
    /// The applied layers, in the order they were applied, as enforced (Landlock's status
    /// as the kernel reported it).
    pub layers: Vec<Layer>,
    /// Things worth knowing that do not weaken a guarantee (skipped mounts, missing layers).
    pub notes: Vec<String>,
    /// Why a higher rung was planned but not used (e.g. `writing /proc/self/uid_map: EPERM`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fell_back: Option<String>,
    /// Kernel-side denial records of the run (issue 9 §5), when the supervisor ran: sent by
    /// the helper as a second line (`{"denials": …}`) once the command's tree has ended,
    /// and attached here by [`super::spawn_reported`]. `None`: no supervisor (rung 2, an
    /// unrestricted filesystem, seccomp unavailable, or disabled), or the run did not end
    /// normally.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub denials: Option<crate::denials::DenialReport>,
    /// What happened to each repository's `.git/config` after the run (issue 11 §3): keys
    /// merged back, keys refused (each with the command to run outside cordon if meant), a
    /// `config.lock` the command left behind and cordon removed. Sent on the second line
    /// like [`AppliedReport::denials`]; empty when no copy was edited.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub git_config: Vec<super::git_config_broker::MergeReport>,
    /// The signal that ended the command, told by init after its wait (see
    /// [`RunRecords::signal`]); sent on the second line like [`AppliedReport::denials`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signal: Option<i32>,
    /// The run was stopped because the host replaced a covered path (see
    /// [`RunRecords::cover_lost`]); sent on the second line like [`AppliedReport::denials`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cover_lost: Option<String>,
    /// The helper's own peak resident set in KiB (see [`RunRecords::helper_peak_rss_kib`]);
    /// sent on the second line like [`AppliedReport::denials`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub helper_peak_rss_kib: Option<u64>,
}

/// The helper's second line on `--report-fd`, after the command's tree has ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunRecords {
    /// The denial records (see [`AppliedReport::denials`]), when the supervisor ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub denials: Option<crate::denials::DenialReport>,
    /// See [`AppliedReport::git_config`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub git_config: Vec<super::git_config_broker::MergeReport>,
    /// The signal that ended the command (its exit code is then 128 + it), as init's wait
    /// saw it: a command that exits 143 and one killed by SIGTERM end the helper alike.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signal: Option<i32>,
    /// Why the helper stopped the run: the host replaced, removed or created a path that
    /// leads to one of the sandbox's covers (a hidden, stripped or protected path) while
    /// the command ran, which detaches the cover ([`super::cover_watch`]). The helper then
    /// exits 125: cordon could not keep its guarantee.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cover_lost: Option<String>,
    /// The helper's own peak resident set size in KiB once the command's tree has ended
    /// (`getrusage(RUSAGE_SELF).ru_maxrss`, getrusage(2)): the memory of the process that
    /// set up and supervised the sandbox, not the command's (issue 12: "peak RSS of the
    /// helper"). `None` when the kernel did not say.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub helper_peak_rss_kib: Option<u64>,
}

/// The helper's own peak resident set in KiB (getrusage(2), `RUSAGE_SELF`; Linux gives
/// `ru_maxrss` in KiB). `None` when the call fails.
fn own_peak_rss_kib() -> Option<u64> {
    nix::sys::resource::getrusage(nix::sys::resource::UsageWho::RUSAGE_SELF)
        .ok()
        .and_then(|u| u64::try_from(u.max_rss()).ok())
}

/// What the helper writes on `--report-fd`: one JSON line, before the command starts or
/// when it is clear the command will not (`{"applied": {…}}` / `{"not_run": {"reason": …}}`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HelperOutcome {
    /// Every layer is in force; the command starts next.
    Applied(AppliedReport),
    /// Nothing ran: the refusal or setup failure, as printed on stderr.
    NotRun {
        /// The message (`refusing to run unconfined: …`).
        reason: String,
    },
}

impl AppliedReport {
    /// The layers in plain words (their `Display`).
    pub fn applied(&self) -> Vec<String> {
        self.layers.iter().map(Layer::to_string).collect()
    }

    /// `rung 1` / `rung 2`.
    pub fn rung_label(&self) -> &'static str {
        match self.rung {
            Rung::Namespaces => "rung 1",
            Rung::LandlockOnly => "rung 2",
        }
    }
}

/// Why the helper did not run the command. One place maps it to the exit code (125) and
/// the message (R-S4: every refusal names what is missing).
#[derive(Debug, thiserror::Error)]
pub(crate) enum HelperError {
    /// Bad arguments or payload.
    #[error("sandbox helper: {0}")]
    Usage(String),
    /// A complete message: a path handle on stdio (issue 7 item 8), a payload that does
    /// not decode, a missing payload variable.
    #[error("{0}")]
    Message(String),
    /// The plan refuses (R-S4).
    #[error("refusing to run unconfined: {0}")]
    Refused(#[from] Refusal),
    /// A setup step failed.
    #[error("refusing to run unconfined: sandbox setup failed: {stage}{}: {source}",
            path.as_ref().map(|p| format!(" ({})", p.display())).unwrap_or_default())]
    Setup {
        /// The step, e.g. `PR_SET_PDEATHSIG`, `clone`, `placeholders`.
        stage: &'static str,
        /// The path involved, if any.
        path: Option<PathBuf>,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// A confinement layer could not be applied as planned.
    #[error(transparent)]
    Confine(#[from] ConfineFailure),
    /// The command did not start (127 not found, 126 not executable, 125 setup).
    #[error(transparent)]
    Spawn(#[from] process::SpawnError),
    /// The process that would run the command is gone; nothing to say, nothing ran.
    #[error("the parent process is gone")]
    ParentGone,
}

impl HelperError {
    fn setup(stage: &'static str, source: std::io::Error) -> HelperError {
        HelperError::Setup {
            stage,
            path: None,
            source,
        }
    }

    /// The exit code (the one place it is decided): 127/126 when the command could not be
    /// executed, else 125 — in every case the command did not run.
    fn exit_code(&self) -> i32 {
        match self {
            HelperError::Spawn(e) => e.exit_code(),
            _ => EXIT_SETUP,
        }
    }

    /// Prints the `cordon: …` line (unless there is nobody to read it) and returns
    /// [`HelperError::exit_code`].
    fn report(&self) -> i32 {
        if !matches!(self, HelperError::ParentGone) {
            eprintln!("cordon: {self}");
        }
        self.exit_code()
    }
}

fn payload_arg(v: String) -> Result<PayloadArg, String> {
    // The encoding is URL-safe base64, which has no `:`: the prefixes are unambiguous.
    if let Some(n) = v.strip_prefix(PAYLOAD_FROM_FD_PREFIX) {
        return n
            .parse::<RawFd>()
            .ok()
            .filter(|fd| *fd > 2)
            .map(PayloadArg::Fd)
            .ok_or_else(|| format!("--permission-profile {v:?}: not a descriptor number above 2"));
    }
    match v.strip_prefix(PAYLOAD_FROM_ENV_PREFIX) {
        Some(name) => {
            if name.is_empty() || name.contains('=') || name.contains('\0') {
                return Err(format!(
                    "--permission-profile {v:?}: not a valid environment variable name"
                ));
            }
            Ok(PayloadArg::Env(name.to_string()))
        }
        None => Ok(PayloadArg::Inline(v)),
    }
}

/// Parses `--permission-profile <p> [--report] [--report-fd N] -- <argv…>` (also
/// `--permission-profile=<p>`), where `<p>` is the payload, `env:NAME` or `fd:N`.
pub(crate) fn parse_args(args: Vec<OsString>) -> Result<HelperArgs, String> {
    let mut it = args.into_iter();
    let mut payload = None;
    let mut report = false;
    let mut report_fd = None;
    loop {
        let Some(a) = it.next() else {
            return Err("missing `--` before the command".into());
        };
        let s = a.to_string_lossy();
        if s == "--" {
            break;
        } else if s == "--permission-profile" {
            let v = it
                .next()
                .ok_or("--permission-profile needs a value")?
                .into_string()
                .map_err(|_| "the payload is not valid UTF-8")?;
            payload = Some(payload_arg(v)?);
        } else if let Some(v) = s.strip_prefix("--permission-profile=") {
            payload = Some(payload_arg(v.to_string())?);
        } else if s == "--report" {
            report = true;
        } else if s == "--report-fd" {
            let v = it.next().ok_or("--report-fd needs a descriptor number")?;
            let fd = v
                .to_str()
                .and_then(|v| v.parse::<RawFd>().ok())
                .filter(|fd| *fd > 2)
                .ok_or_else(|| format!("--report-fd {v:?}: not a descriptor number above 2"))?;
            report_fd = Some(fd);
        } else {
            return Err(format!("unexpected helper argument {s:?}"));
        }
    }
    let argv: Vec<OsString> = it.collect();
    let payload = payload.ok_or("missing --permission-profile")?;
    if argv.is_empty() {
        return Err("no command given after `--`".into());
    }
    Ok(HelperArgs {
        payload,
        argv,
        report,
        report_fd,
    })
}

/// Tests only: milliseconds the helper waits before it sets its parent-death signal.
pub const START_DELAY_ENV: &str = "CORDON_TEST_HELPER_START_DELAY_MS";

/// The pid of the process that forked this helper, set by it just before the fork (a
/// server's handler: [`super::server`]); 0 for a helper that was executed.
static FORKED_BY: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(0);

/// Called by a process about to fork a helper: the helper then checks its parent against
/// this process's pid ([`FORKED_BY`]), not against whoever it has when it looks (a reaper,
/// if this process was killed meanwhile).
pub(crate) fn forking_a_helper() {
    // SAFETY: getpid has no preconditions.
    let me = unsafe { libc::getpid() };
    FORKED_BY.store(me, std::sync::atomic::Ordering::Relaxed);
}

/// Sets `PR_SET_PDEATHSIG(SIGKILL)` for the calling process; `Ok(false)` when the parent
/// already died (the race between spawn and this call). An error means the helper (and so
/// the command) could outlive cordon: the caller must not go on.
///
/// A forked helper compares with the pid its parent had before the fork
/// ([`FORKED_BY`]): a parent killed before this runs has already left the helper to a
/// reaper, whose pid a `getppid` here would take for the parent's (attack pass 169,
/// finding 1: a server's command ran to its end after its client was killed).
fn die_with_parent() -> std::io::Result<bool> {
    let forked_by = FORKED_BY.load(std::sync::atomic::Ordering::Relaxed);
    // An executed helper: the pid its starter put in its environment (a starter killed
    // before this left it to a reaper, as for a forked one).
    let started_by = std::env::var(super::HELPER_PARENT_ENV)
        .ok()
        .and_then(|p| p.parse::<libc::pid_t>().ok())
        .filter(|p| *p > 0);
    let before = if forked_by > 0 {
        forked_by
    } else if let Some(p) = started_by {
        p
    } else {
        // SAFETY: getppid has no preconditions.
        unsafe { libc::getppid() }
    };
    sys::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong)?;
    // SAFETY: getppid has no preconditions.
    Ok(unsafe { libc::getppid() } == before)
}

/// Largest payload read from a descriptor (a profile and an environment: far below).
const PAYLOAD_FD_LIMIT: usize = 64 * 1024 * 1024;

/// The encoded payload. For `env:NAME`, the variable is removed from this process's
/// environment at once (whether or not it is usable), so nothing started later inherits it;
/// for `fd:N`, the descriptor is read to its end and closed.
fn take_payload(arg: PayloadArg) -> Result<String, String> {
    match arg {
        PayloadArg::Inline(p) => Ok(p),
        PayloadArg::Fd(fd) => {
            let f = sys::take_inherited_fd(fd)
                .map_err(|e| format!("sandbox helper: --permission-profile fd:{fd}: {e}"))?;
            let bytes = sys::read_to_end(&f, PAYLOAD_FD_LIMIT)
                .map_err(|e| format!("sandbox helper: reading the payload from fd {fd}: {e}"))?;
            String::from_utf8(bytes)
                .map_err(|_| format!("sandbox helper: the payload on fd {fd} is not UTF-8"))
        }
        PayloadArg::Env(name) => {
            let v = std::env::var_os(&name);
            // The helper is single-threaded: nothing reads the environment concurrently.
            std::env::remove_var(&name);
            v.ok_or_else(|| {
                format!(
                    "sandbox helper: the environment variable {name} \
                     (--permission-profile env:{name}) is not set"
                )
            })?
            .into_string()
            .map_err(|_| format!("sandbox helper: {name} is not valid UTF-8"))
        }
    }
}

/// Where the [`AppliedReport`] goes: stderr (`--report`) and/or the caller's descriptor.
struct Reporter {
    stderr: bool,
    fd: Option<OwnedFd>,
}

impl Reporter {
    /// In a forked child: close this process's copy of the caller's descriptor (only the
    /// helper writes to it).
    fn close_in_child(&self) {
        if let Some(fd) = &self.fd {
            sys::close_in_child(fd.as_raw_fd());
        }
    }

    /// Hands the report to the caller's descriptor (the stderr lines are printed by the
    /// process that applied the layers, before the command starts: [`print_report`]).
    fn deliver(&mut self, r: &AppliedReport) {
        self.write_line(&HelperOutcome::Applied(r.clone()));
    }

    /// The denial records and `.git/config` results, after the command's tree has ended
    /// (then the descriptor is closed).
    fn records(&mut self, r: RunRecords) {
        self.send(&r);
    }

    /// Tells the caller nothing ran, and why (what stderr also says).
    fn not_run(&mut self, reason: String) {
        self.send(&HelperOutcome::NotRun { reason });
    }

    fn send<T: Serialize>(&mut self, o: &T) {
        self.write_line(o);
        self.fd.take();
    }

    fn write_line<T: Serialize>(&mut self, o: &T) {
        if let Some(fd) = &self.fd {
            // Unserialisable (a path that is not UTF-8 slipped in): nothing is sent, and
            // the caller reports that the helper said nothing — never a panic.
            if let Ok(mut line) = serde_json::to_vec(o) {
                line.push(b'\n');
                sys::write_all(fd.as_raw_fd(), &line);
            }
        }
    }
}

/// `--report`: the applied layers on stderr, printed by the process that applied them
/// just before the command starts (so they come before anything the command prints).
fn print_report(r: &AppliedReport) {
    eprintln!(
        "cordon: sandbox: {}: {}",
        r.rung_label(),
        r.applied().join("; ")
    );
    if let Some(why) = &r.fell_back {
        eprintln!("cordon: sandbox note: fell back from rung 1: {why}");
    }
    for n in &r.notes {
        eprintln!("cordon: sandbox note: {n}");
    }
}

/// See [`super::helper_main`].
pub(crate) fn main(args: Vec<OsString>) -> i32 {
    main_with(args, None, None)
}

/// [`main`] in a process forked from the caller ([`super::forked`]) with `payload`, the
/// object the caller encoded into the payload descriptor `args` name: taken as it is (the
/// descriptor is closed unread) instead of decoded from the copy.
pub(crate) fn main_forked(args: Vec<OsString>, payload: HelperPayload) -> i32 {
    main_with(args, None, Some(payload))
}

/// [`main`] forked from a prepared template of `cordon serve` ([`super::template`]): the
/// same steps, except that the mount namespace (and the user namespace owning it) is the
/// template's, with its root already built; the command still gets its own pid, ipc and
/// network namespaces, fresh `/tmp`, `/proc`, `/dev/shm`, `/dev/pts`, Landlock, seccomp and
/// report. The payload is the one the template's handler read and found fitting
/// ([`super::template::Prepared::accept`]; a command that does not fit never gets here, it
/// takes the per-command helper); checked again where the plan is used.
pub(crate) fn main_prepared(args: Vec<OsString>, prepared: &super::template::Prepared) -> i32 {
    main_with(args, Some(prepared), None)
}

fn main_with(
    args: Vec<OsString>,
    prepared: Option<&super::template::Prepared>,
    forked: Option<HelperPayload>,
) -> i32 {
    let accepted = prepared.and_then(|p| p.take_payload());
    let (checked, plan) = match accepted {
        Some((payload, plan)) => (Some(payload), Some(plan)),
        None => (forked, None),
    };
    let features = prepared.map(|p| p.features.clone());
    match start(args, features, checked) {
        Ok((payload, args, reporter, features)) => {
            let mut reporter = reporter;
            let ran = match prepared {
                Some(p) => run_prepared(&payload, &args, features, &mut reporter, p, plan),
                None => run(&payload, &args, features, &mut reporter, None),
            };
            match ran {
                Ok(code) => code,
                Err(e) => {
                    if !matches!(e, HelperError::ParentGone) {
                        reporter.not_run(e.to_string());
                    }
                    e.report()
                }
            }
        }
        Err(e) => e.report(),
    }
}

type Started = (HelperPayload, HelperArgs, Reporter, LinuxFeatures);

/// Everything before the rung is chosen: parent-death signal, inherited descriptors,
/// stdio check, arguments, report descriptor, payload, features (probed, or the
/// template's: `known`). `checked`: the payload already in hand (read and checked by a
/// template's handler, or the caller's own object in a forked helper); the payload
/// descriptor is then closed unread.
fn start(
    args: Vec<OsString>,
    known: Option<LinuxFeatures>,
    checked: Option<HelperPayload>,
) -> Result<Started, HelperError> {
    if std::env::var_os(process::INTERRUPTS_TO_ALL_ENV).is_some() {
        process::deliver_interrupts_to_all();
    }
    // Tests only: widens the window between the helper's start and its parent-death signal
    // (milliseconds, at most 2 s), so that a test can kill cordon inside it
    // (`cli::a_command_never_outlives_a_cordon_killed_as_it_starts`). It delays nothing
    // else and grants nothing.
    if let Some(ms) = std::env::var(START_DELAY_ENV)
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
    {
        std::thread::sleep(std::time::Duration::from_millis(ms.min(2000)));
    }
    match die_with_parent() {
        Ok(true) => {}
        Ok(false) => return Err(HelperError::ParentGone), // cordon is gone
        Err(e) => {
            return Err(HelperError::setup(
                "PR_SET_PDEATHSIG (the command could outlive cordon)",
                e,
            ))
        }
    }
    sys::cloexec_from(3).map_err(|e| {
        HelperError::setup(
            "marking inherited descriptors close-on-exec (close_range failed and \
             /proc/self/fd is unreadable; is /proc mounted?)",
            e,
        )
    })?;
    // Before anything else: a path handle on stdio is refused.
    process::check_stdio().map_err(HelperError::Message)?;
    let mut args = parse_args(args).map_err(HelperError::Usage)?;
    let report_fd = match args.report_fd {
        Some(fd) => Some(
            sys::take_inherited_fd(fd)
                .map_err(|e| HelperError::Usage(format!("--report-fd {fd}: {e}")))?,
        ),
        None => None,
    };
    // Moved out (not copied): the inline payload can be large, and it is not needed again.
    let arg = std::mem::replace(&mut args.payload, PayloadArg::Inline(String::new()));
    let payload = match checked {
        // Read from the same descriptor by the template's handler, or the object the
        // caller encoded into it: not read twice.
        Some(p) => {
            if let PayloadArg::Fd(fd) = arg {
                drop(sys::take_inherited_fd(fd));
            }
            p
        }
        None => {
            let encoded = take_payload(arg).map_err(HelperError::Message)?;
            HelperPayload::decode(&encoded).map_err(|e| HelperError::Message(e.to_string()))?
        }
    };
    let mut features = known.unwrap_or_else(probe_fast);
    features.disable_by(
        &payload.disabled_layers,
        "the caller (payload disabled_layers)",
    );
    let reporter = Reporter {
        stderr: args.report,
        fd: report_fd,
    };
    Ok((payload, args, reporter, features))
}

fn run(
    payload: &HelperPayload,
    args: &HelperArgs,
    features: LinuxFeatures,
    reporter: &mut Reporter,
    fell_back: Option<String>,
) -> Result<i32, HelperError> {
    let plan = plan(&payload.profile, &features)?;
    match plan.rung {
        Rung::Namespaces => run_namespaces(payload, args, &plan, features, reporter, None),
        Rung::LandlockOnly => run_landlock_only(payload, args, &plan, reporter, fell_back),
    }
}

/// [`run`] from a template: rung 1 only, and only for the template's mount plan. `checked`:
/// the plan the template's handler computed for this very payload when it checked that it
/// fits ([`super::template::Prepared::accept`]); without one, planned and checked here.
fn run_prepared(
    payload: &HelperPayload,
    args: &HelperArgs,
    features: LinuxFeatures,
    reporter: &mut Reporter,
    prepared: &super::template::Prepared,
    checked: Option<super::plan::LinuxPlan>,
) -> Result<i32, HelperError> {
    let plan = match checked {
        Some(plan) => plan,
        None => {
            let plan = plan(&payload.profile, &features)?;
            super::template::check_fits(payload, &plan, prepared).map_err(|why| {
                HelperError::Message(format!(
                    "cordon serve: this command does not fit the \
                     prepared template: {why} (cordon run --no-server takes the cold path)"
                ))
            })?;
            plan
        }
    };
    run_namespaces(payload, args, &plan, features, reporter, Some(prepared))
}

/// What the process that applies the layers tells the helper on the status pipe.
#[derive(Debug, Serialize, Deserialize)]
enum SetupStatus {
    /// Every layer is in force; the command is about to start.
    Applied(AppliedReport),
    /// Rung 1 cannot work on this host after all (e.g. `uid_map` refused with EPERM in a
    /// root container without `CAP_SETFCAP`, or a fresh `/proc` refused): take the next
    /// rung, or refuse with this reason (R-S4).
    UsernsUnusable(String),
    /// Setup failed or was refused in the process that applies the layers: nothing runs.
    NotRun(String),
}

fn send_status(fd: &OwnedFd, s: &SetupStatus) {
    let bytes = serde_json::to_vec(s).expect("status serialises");
    sys::write_all(fd.as_raw_fd(), &bytes);
}

/// Reads the status pipe to its end (every writer closed it: the command has started, or
/// the setup process exited). `None`: nothing was sent (setup failed and said why).
fn read_status(fd: &OwnedFd) -> Option<SetupStatus> {
    let bytes = sys::read_to_end(fd, 1024 * 1024).ok()?;
    serde_json::from_slice(&bytes).ok()
}

/// The environment the helper gives the command for `payload` on this host, as [`run`]
/// passes it ([`child_env`]) on the rung it would take with the host's features now — for
/// `cordon run --dry-run`, which listed the payload's variables alone and undercounted
/// what the command gets (one truth; new-user pass 192, #2). `None` when no rung can
/// confine the payload here (the run is refused then).
pub fn command_env(payload: &HelperPayload) -> Option<Vec<(String, String)>> {
    let mut features = probe_fast();
    features.disable_by(
        &payload.disabled_layers,
        "the caller (payload disabled_layers)",
    );
    let plan = plan(&payload.profile, &features).ok()?;
    Some(child_env(payload, plan.rung))
}

/// The payload's variables, with `TMPDIR` kept when it names an existing directory the
/// sandbox lets the command write, else `/tmp` when that is writable, else left out; the
/// private cache directories' variables on rung 1, the offline knobs with the network
/// restricted, the proxy's variables with it managed.
fn child_env(payload: &HelperPayload, rung: Rung) -> Vec<(String, String)> {
    let fs = &payload.profile.filesystem;
    let host = HostFs;
    let private_tmp = rung == Rung::Namespaces && fs.top_view().private_tmp;
    let writable = |p: &Path| -> bool {
        if !p.is_absolute() {
            return false;
        }
        if private_tmp && p == Path::new("/tmp") {
            return true;
        }
        if !p.is_dir() {
            return false;
        }
        let a = fs.access_for(&host, p);
        if a.access != Access::Write {
            return false;
        }
        // On rung 1 the host /tmp is replaced by the private one: a path under it is only
        // there when an entry below /tmp binds it in.
        !(private_tmp
            && p.canonicalize()
                .map_or(true, |c| fs.hidden_by_private_tmp(&c)))
    };
    let mut env: Vec<(String, String)> = payload
        .env
        .iter()
        .filter(|(k, _)| k != "TMPDIR")
        .cloned()
        .collect();
    let given = payload
        .env
        .iter()
        .rev()
        .find(|(k, _)| k == "TMPDIR")
        .map(|(_, v)| v.clone());
    match given {
        Some(t) if writable(Path::new(&t)) => env.push(("TMPDIR".into(), t)),
        _ if writable(Path::new("/tmp")) => env.push(("TMPDIR".into(), "/tmp".into())),
        _ => {}
    }
    if rung == Rung::Namespaces {
        // Known caches missing on the host: the tool's variable names the private
        // directory the mount plan binds (`StepKind::CacheDir`). A value the user set wins.
        for c in &payload.profile.caches {
            if let (Some(var), cordon_policy::CacheMode::Overlay) = (&c.env, c.mode) {
                if !env.iter().any(|(k, _)| k == var) {
                    env.push((var.clone(), c.private_dir().display().to_string()));
                }
            }
        }
    }
    if payload.profile.profile.network == NetworkPolicy::Restricted {
        // Fail fast: nothing can be reached, so package managers must not retry (npm spent
        // 72 s retrying DNS). A value the user set is kept.
        for (k, v) in offline_env() {
            if !env.iter().any(|(e, _)| e == k) {
                env.push((k.to_string(), v.to_string()));
            }
        }
    }
    if rung == Rung::Namespaces && payload.profile.profile.network == NetworkPolicy::Managed {
        let vars = proxy_env();
        env.retain(|(k, _)| !vars.iter().any(|(v, _)| v == k));
        env.extend(vars);
    }
    env
}

/// The variables that point programs at the proxy port of a managed network (issue 10 §5):
/// `HTTP_PROXY`, `HTTPS_PROXY`, `ALL_PROXY` (SOCKS5 with remote DNS), `NO_PROXY` in both
/// cases (git, curl, Python, Go, Rust/reqwest, …), and npm's, pip's, yarn's and cargo's
/// own.
/// With the network off: the knobs that make package managers fail at once instead of
/// retrying a network that cannot answer (issue 9 §6): npm/yarn (fetch retries and their
/// backoff, and its background update check), pip (retries, timeout), cargo (net retries).
pub fn offline_env() -> &'static [(&'static str, &'static str)] {
    &[
        ("npm_config_fetch_retries", "0"),
        ("npm_config_fetch_retry_mintimeout", "100"),
        ("npm_config_fetch_retry_maxtimeout", "100"),
        ("npm_config_fetch_timeout", "5000"),
        // npm's update check looks the registry up in the background of any npm command
        // (new-user pass nu20, G2): a lookup nobody needs.
        ("npm_config_update_notifier", "false"),
        ("YARN_NETWORK_TIMEOUT", "5000"),
        // One retry, not none: with none pip says nothing of the network, only "No
        // matching distribution" (new-user pass nu21, K1); the retry fails at once too.
        ("PIP_RETRIES", "1"),
        ("PIP_TIMEOUT", "5"),
        ("CARGO_NET_RETRY", "0"),
    ]
}

pub(crate) fn proxy_env() -> Vec<(String, String)> {
    let http = format!("http://127.0.0.1:{}", super::relay::PROXY_PORT);
    let socks = format!("socks5h://127.0.0.1:{}", super::relay::PROXY_PORT);
    let no = "localhost,127.0.0.1,::1".to_string();
    let mut v = Vec::new();
    for (k, val) in [
        ("HTTP_PROXY", &http),
        ("HTTPS_PROXY", &http),
        ("ALL_PROXY", &socks),
        ("NO_PROXY", &no),
    ] {
        v.push((k.to_string(), val.clone()));
        v.push((k.to_ascii_lowercase(), val.clone()));
    }
    for k in [
        "npm_config_proxy",
        "npm_config_https_proxy",
        "PIP_PROXY",
        "YARN_HTTP_PROXY",
        "YARN_HTTPS_PROXY",
        "CARGO_HTTP_PROXY",
    ] {
        v.push((k.to_string(), http.clone()));
    }
    v
}

/// Worker threads of the helper's filtering proxy.
const PROXY_WORKERS: usize = 2;

/// Tasks the helper adds to the run's cgroup when it joins to run the proxy: its main
/// thread, the three that hold the command while a host is asked about
/// ([`super::pause::interpose`]) and the proxy's threads ([`cordon_proxy::max_threads`]);
/// `pids.max` is raised by as many.
const PROXY_TASKS: u64 = 4 + cordon_proxy::max_threads(PROXY_WORKERS);

/// The byte the helper sends init once the proxy runs ([`start_network`] waits for it).
const PROXY_STARTED: u8 = b'S';

/// Starts the filtering proxy for a managed network on the listeners init bound inside the
/// namespace (and serves the `network.local` forwards), with the
/// profile's `network.allow`/`deny`/`ports`; decisions go to `$CORDON_PROXY_LOG` (JSONL)
/// when set. `init` is the sandbox's init, whose namespace is held while a question about a
/// host is open ([`super::pause`]).
fn start_proxy(
    profile: &ResolvedProfile,
    plan: &LinuxPlan,
    listeners: super::relay::Listeners,
    init: libc::pid_t,
) -> Result<cordon_proxy::Running, String> {
    let policy = if plan.proxy_relay {
        cordon_proxy::ProxyPolicy::from_rules(&profile.profile.network_rules)?
    } else {
        cordon_proxy::ProxyPolicy::default()
    };
    let mut cfg = cordon_proxy::ProxyConfig::new(policy);
    if let Some(p) = std::env::var_os("CORDON_PROXY_LOG") {
        let f = super::open_append_nofollow(Path::new(&p))
            .map_err(|e| format!("cannot open CORDON_PROXY_LOG: {e}"))?;
        cfg.log = cordon_proxy::DecisionLog::default();
        cfg.log.add_file(f);
    }
    // The caller's copy (`cordon run` reads network-denied from it after the run).
    if let Some(f) = super::relay::decisions_from_env() {
        cfg.log.add_file(f);
    }
    // Someone can be asked about hosts no rule names (R-P4 `ask`): the caller's channel.
    // The command is stopped while each question is open (`pause`): it cannot repaint or
    // answer the prompt on the terminal it shares with the person asked.
    if let Some(s) = super::relay::ask_from_env().filter(|_| plan.proxy_relay) {
        let held = super::pause::Sandbox::of_init(init)
            .and_then(|sb| super::pause::interpose(s, sb, super::relay::ASK_TIMEOUT))
            .map_err(|e| format!("cannot hold the command while asking about hosts: {e}"))?;
        cfg.asker = Some(cordon_proxy::ask::Asker::new(
            held,
            super::relay::ASK_TIMEOUT,
        ));
    }
    // A restricted network with network.local has forwards only (init binds no proxy port).
    let forwards = listeners
        .local
        .into_iter()
        .zip(&plan.local_forwards)
        .map(|(listener, target)| cordon_proxy::LocalForward {
            listener,
            target: *target,
        })
        .collect();
    cordon_proxy::spawn_with(cfg, listeners.proxy, forwards, PROXY_WORKERS)
        .map_err(|e| format!("starting the proxy: {e}"))
}

/// The confinement every rung applies in the process that will fork (or be) the command:
/// Landlock ruleset prepared (while paths are reachable and capabilities still held),
/// `no_new_privs`, capabilities dropped, Landlock enforced, seccomp installed. Returns the
/// applied layers as reported by the kernel. `extra` and `optional` are Landlock rules on
/// descriptors (see [`landlock_layer::prepare`]). `layout`: on rung 1, the mount plan init
/// built, from which the filesystem rules are derived (so they are the mounts' own; `None`
/// derives them from `profile`, as [`landlock_layer::fs_rules`] does).
pub(crate) fn confine(
    profile: &ResolvedProfile,
    plan: &LinuxPlan,
    layout: Option<&mounts::Layout>,
    extra: Vec<(OwnedFd, Grant)>,
    optional: Vec<(OwnedFd, Grant)>,
) -> Result<Vec<Layer>, ConfineFailure> {
    let mut applied = Vec::new();
    // R-H5: rlimits, lowered once just before the command starts (inherited by it); the
    // report says how each limit is enforced, as found here.
    let rung1 = plan.rung == Rung::Namespaces;
    let limits = super::limits::resolve(profile).map_err(ConfineFailure::Failed)?;
    super::limits::apply_rlimits(&limits, rung1).map_err(ConfineFailure::Failed)?;
    applied.push(Layer::Limits {
        items: super::limits::enforced_here(&limits, rung1),
    });
    let prepared: Option<(Prepared, &LandlockPlan)> = match &plan.landlock {
        Some(l) => {
            let rules = match layout {
                Some(l)
                    if plan.rung == Rung::Namespaces
                        && !matches!(
                            profile.filesystem,
                            cordon_policy::ResolvedFilesystem::Unrestricted
                        ) =>
                {
                    landlock_layer::rules_from_layout(l)
                }
                _ => landlock_layer::fs_rules(profile, plan.rung),
            };
            landlock_layer::prepare(
                l,
                &rules,
                extra,
                optional,
                format!("landlock ABI {}", l.abi),
            )
            .map_err(ConfineFailure::Failed)?
            .map(|p| (p, l))
        }
        None => None,
    };
    sys::prctl(libc::PR_SET_NO_NEW_PRIVS, 1)
        .map_err(|e| ConfineFailure::Failed(format!("no_new_privs: {e}")))?;
    applied.push(Layer::NoNewPrivs);
    // Rung 1's init keeps CAP_SYS_PTRACE (its namespace's) for the denial-records
    // supervisor ([`super::caps::drop_all_but`]); the command never has it.
    let keep = (plan.rung == Rung::Namespaces && plan.denial_records)
        .then_some(super::caps::CAP_SYS_PTRACE);
    let d = super::caps::drop_all_but(keep).map_err(|e| ConfineFailure::Failed(e.to_string()))?;
    applied.push(Layer::Capabilities {
        bounding_and_securebits: d.bounding_and_securebits,
    });
    if let Some((p, l)) = prepared {
        applied.push(Layer::Landlock {
            plan: l.clone(),
            enforcement: p.enforce()?,
        });
    }
    if let Some(s) = &plan.seccomp {
        let prog = seccomp_filter::build(seccomp_filter::FilterOptions {
            deny_sockets: s.deny_sockets,
            local_families_only: s.local_families_only,
            allow_pidfd_getfd: plan.unix_guard,
        });
        sys::install_seccomp(&prog).map_err(|e| ConfineFailure::Failed(format!("seccomp: {e}")))?;
        applied.push(Layer::seccomp(s));
    }
    Ok(applied)
}

fn is_userns_refusal(e: &std::io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(libc::EPERM | libc::EINVAL | libc::ENOSPC | libc::EUSERS | libc::EACCES)
    )
}

/// Rung 1: prepares the host side (placeholders, channels, cgroup), clones init into new
/// namespaces ([`become_init`]), then, as the parent, delivers init's setup status, runs
/// the proxy and the limits watchdog for exactly as long as init lives, and collects what
/// init handed back (denial records, `.git/config` edits to merge).
// Longer than most: the parent's side of the clone, where each failure path must kill and
// reap init, leave the cgroup and close the alive pipe in order; split further, the steps
// would pass a dozen descriptors between them.
fn run_namespaces(
    payload: &HelperPayload,
    args: &HelperArgs,
    plan: &LinuxPlan,
    mut features: LinuxFeatures,
    reporter: &mut Reporter,
    prepared: Option<&super::template::Prepared>,
) -> Result<i32, HelperError> {
    let profile = &payload.profile;
    let limits = super::limits::resolve(profile).map_err(HelperError::Message)?;
    // This run's slot of the workspace's cache layers, held until the run has ended (a
    // template holds one of the template slots for its whole life).
    let mut _cache_slot = None;
    let mut stale = mounts::StaleScratch::default();
    let layout = match prepared {
        // The template built this plan (and prepared the host for it) once.
        Some(p) => p.layout.clone(),
        None => {
            let mut layout = mounts::layout_for(profile);
            super::limits::size_tmpfs(&mut layout, limits.tmpfs_bytes);
            _cache_slot = super::caches::claim_overlay_slot(&mut layout);
            // Missing writable grants created; placeholders are permanent
            // (`mounts::Placeholder`).
            let made = mounts::prepare_host(&layout, plan.denial_records).map_err(|e| {
                // `ENOSYS` for a host call (openat2) is another sandbox's seccomp filter
                // (cordon run inside cordon): the quick probe could not see that it forbids
                // namespaces too. The full probe's verdict is the one `--dry-run` and
                // `status` give (new-user pass nu27, F4: "create it yourself or drop the
                // grant" about a grant nobody gave).
                if e.kind() == std::io::ErrorKind::Unsupported {
                    if let Err(r) = super::plan::plan(profile, &super::features::probe()) {
                        return HelperError::Message(format!("refusing to run unconfined: {r}"));
                    }
                }
                HelperError::Message(format!("refusing to run unconfined: {e}"))
            })?;
            say_marker_placeholders(&made, &profile.workspace);
            // The overlays' old scratch dirs go aside now (under the slot lock), to be
            // removed off the launch's path, not by the mounts (issue 12).
            stale = mounts::set_aside_overlay_scratch(&layout);
            layout
        }
    };
    // The covers the host could take away are watched from before the mounts are built
    // (after the placeholders: cordon's own creations are not replacements). A template
    // command's watch was set up, and its covers checked, by the template's handler.
    let mut cover = match prepared {
        Some(p) => p.take_cover_watch(),
        None => super::cover_watch::CoverWatch::start(&layout)
            .map_err(|e| HelperError::Message(format!("refusing to run: {e}")))?,
    };
    // Everything the child needs is prepared before the clone.
    let env = child_env(payload, Rung::Namespaces);
    let spec = CommandSpec::new(&args.argv, &env).map_err(HelperError::Usage)?;
    // SAFETY: geteuid/getegid have no preconditions.
    let (uid, gid) = unsafe { (libc::geteuid(), libc::getegid()) };
    let Channels {
        alive: (alive_r, alive_w),
        status: (status_r, status_w),
        ended: (ended_r, ended_w),
        covers_end: (covers_end_r, covers_end_w),
        records,
        git_result,
        relay,
    } = Channels::prepare(profile, plan, &layout)?;
    // Which `config.lock` exists before the run (one the command leaves is removed after).
    let lock_watch = super::git_config_broker::watch_locks(&layout);
    process::block_signals();
    // R-H5: the run's cgroup (if the host gives one), made by the helper on the cold path
    // and by the server-side handler for a template's command (which removes it). On
    // cgroup v1 init moves itself in (a single thread writing `0` to `tasks`: 0.12 ms,
    // where any other move waits for an RCU grace period, 5-22 ms measured, issue 12)
    // before it confines itself, through descriptors opened here; on v2 the helper moves
    // init in right after the clone while init builds the root, and init waits on `gate`
    // for the outcome. Either way init starts nothing before it is in, so everything the
    // command starts inherits it. The cgroup is removed on every way out.
    let (mut cgroup, mut join_files) = match prepared.map(|p| p.take_cgroup()) {
        Some(Some((cg, files))) => (Some(cg), files),
        Some(None) => (None, Vec::new()),
        None => {
            let cg = super::limits::Cgroup::create_for_others(&limits, super::limits::Sweep::First);
            let files = cg
                .as_ref()
                .filter(|c| c.moves_itself())
                .map(|c| c.join_files());
            match files {
                Some(Err(_)) => {
                    // As when no cgroup could be made: init takes the rlimit fallbacks.
                    if let Some(c) = &cg {
                        c.remove();
                    }
                    (None, Vec::new())
                }
                Some(Ok(f)) => (cg, f),
                None => (cg, Vec::new()),
            }
        }
    };
    let self_join = cgroup.as_ref().is_some_and(|c| c.moves_itself());
    let gate = match &cgroup {
        Some(_) if !self_join => Some(sys::pipe().map_err(|e| HelperError::setup("pipe", e))?),
        _ => None,
    };
    let leave = |cg: &Option<super::limits::Cgroup>| {
        if let Some(c) = cg {
            c.remove();
        }
    };
    let mut flags =
        libc::CLONE_NEWUSER | libc::CLONE_NEWNS | libc::CLONE_NEWPID | libc::CLONE_NEWIPC;
    if prepared.is_some() {
        // Already in the template's user namespace (with its capabilities): the new mount
        // namespace is a copy of the template's built root.
        flags &= !libc::CLONE_NEWUSER;
    }
    // A template's command enters the network namespace the template made for it ahead of
    // time (new, empty, never entered) instead of cloning one.
    let spare_net = prepared
        .filter(|_| plan.net_namespace)
        .and_then(|p| p.take_spare_net());
    if plan.net_namespace && spare_net.is_none() {
        flags |= libc::CLONE_NEWNET;
    }
    // And the mount namespace made for it ahead of time (a copy of the template's root),
    // kept open here until this process exits: the command's mount tree is torn down after
    // the status went out, not on init's exit.
    let spare_mnt = prepared.and_then(|p| p.take_spare_mnt());
    if spare_mnt.is_some() {
        flags &= !libc::CLONE_NEWNS;
    }
    // SAFETY: the helper is single-threaded (no thread is ever started in it).
    let pid = match unsafe { sys::clone_fork(flags as libc::c_ulong) } {
        Ok(p) => p,
        Err(e) if prepared.is_none() && is_userns_refusal(&e) => {
            // The sysctls allowed it but something else (seccomp of a container, an
            // LSM) did not: learn it and try the next rung (or refuse).
            leave(&cgroup);
            let why = format!("clone(CLONE_NEWUSER) failed: {e}");
            features.user_namespaces = Availability::Unavailable(why.clone());
            return run(payload, args, features, reporter, Some(why));
        }
        Err(e) => {
            leave(&cgroup);
            return Err(HelperError::setup("clone", e));
        }
    };
    if pid == 0 {
        drop(alive_w);
        drop(status_r);
        drop(ended_r);
        drop(covers_end_r);
        drop(cover.take()); // the helper's
        drop(std::mem::take(&mut stale)); // the host's work dirs: never init's
        reporter.close_in_child();
        let enforced = cgroup
            .as_ref()
            .map(|c| c.limits_enforced())
            .unwrap_or_default();
        let cgroup_join = match gate {
            Some((r, w)) => {
                drop(w);
                Some((CgroupJoin::Gate(r), enforced))
            }
            None if self_join => Some((
                CgroupJoin::Itself(std::mem::take(&mut join_files)),
                enforced,
            )),
            None => None,
        };
        let records_w = records.map(|(r, w)| {
            drop(r);
            w
        });
        let ctx = InitContext {
            profile,
            plan,
            layout: &layout,
            spec: &spec,
            uid,
            gid,
            alive: alive_r,
            status: Some(status_w),
            ended: Some(ended_w),
            covers_end: Some(covers_end_w),
            print_report: reporter.stderr,
            relay: relay.map(|(ours, theirs)| {
                drop(ours);
                theirs
            }),
            records: records_w,
            git_result: git_result
                .as_ref()
                .and_then(|f| sys::dup_cloexec(f.as_raw_fd()).ok()),
            prepared,
            cgroup_join,
            spare_net,
            spare_mnt: spare_mnt.as_ref().map(|f| f.as_raw_fd()),
            spare_mnt_entered: false,
        };
        become_init(ctx);
    }
    // Closed when this process exits (after the status went out), never before init is
    // reaped.
    let spare_mnt_used = spare_mnt.is_some();
    std::mem::forget(spare_mnt);
    drop(alive_r);
    drop(status_w);
    // Init's mount namespace is referenced past init's exit — by the template's handler,
    // or below by the detached cleanup process — so that the helper's wait for init does
    // not include tearing the command's mount tree down (issue 12). Best effort.
    let init_mounts = match prepared {
        Some(_) if spare_mnt_used => None, // held above
        Some(p) => {
            p.hold_mount_namespace(pid);
            None
        }
        None => sys::pidfd_open(pid)
            .and_then(|p| sys::pidfd_mount_namespace(&p))
            .ok(),
    };
    drop(ended_w);
    drop(covers_end_w);
    // A template's handler is the helper: the server's handler H hanging up (killed for a
    // gone client or a `--timeout`) ends the command, as the helper's own death would.
    let handler = prepared.and_then(|p| p.handler_conn());
    // Nothing would wake the helper for a hang-up or a replacement: nothing runs.
    let armed = handler
        .map(process::signal_driven)
        .transpose()
        .map_err(|e| {
            (
                "watching the server's handler for its hang-up (fcntl O_ASYNC)",
                e,
            )
        })
        .and_then(|_| {
            cover.as_ref().map(|c| c.arm()).transpose().map_err(|e| {
                (
                    "making the watch of hidden and protected paths signal-driven (fcntl O_ASYNC)",
                    e,
                )
            })
        });
    if let Err((stage, e)) = armed {
        // SAFETY: kill has no memory-safety preconditions; `pid` is our child.
        unsafe { libc::kill(pid, libc::SIGKILL) };
        process::supervise(pid);
        leave(&cgroup);
        drop(alive_w);
        return Err(HelperError::setup(stage, e));
    }
    // While init builds the root: one detached process removes the overlays' set-aside
    // scratch dirs and takes the last close of the cover watch (both wait for the kernel),
    // so that neither the launch nor the end of the run does. Here the helper is still
    // single-threaded and outside the cgroup; a template's command (another process
    // shape) closes its watch as before.
    // Without a watch to take it, the pipe's write end is kept until init is reaped.
    let mut held_open = None;
    if prepared.is_none() {
        let hold: Vec<RawFd> = cover
            .as_ref()
            .map(|c| c.raw_fd())
            .into_iter()
            .chain(init_mounts.as_ref().map(|f| f.as_raw_fd()))
            .collect();
        if let Some(w) = stale.detach_cleanup(&hold) {
            match cover.as_mut() {
                Some(c) => c.hand_off(w),
                None => held_open = Some(w),
            }
        }
    }
    drop(init_mounts);
    if let Some((gate_r, gate_w)) = gate {
        drop(gate_r);
        // cgroup v2: init is outside the cgroup until here; it starts nothing before the
        // answer. The helper goes in first when it runs the proxy (its threads and memory
        // are the command's doing).
        let with_proxy = relay.is_some();
        let joined = cgroup.as_mut().is_some_and(|c| {
            (!with_proxy
                || c.join_self(&join_files).is_ok() && c.allow_more_pids(PROXY_TASKS).is_ok())
                && match prepared {
                    None => c.attach(pid).is_ok(),
                    Some(_) => c.attach_through(&join_files, pid).is_ok(),
                }
        });
        if !joined {
            // As when no cgroup could be made: init takes the rlimit fallbacks.
            leave(&cgroup);
            cgroup = None;
        }
        sys::write_all(gate_w.as_raw_fd(), if joined { b"J" } else { b"N" });
    } else if let (Some(c), true) = (cgroup.as_mut(), relay.is_some()) {
        // cgroup v1: init joins by itself; the helper joins too when it runs the proxy.
        // Should that fail, the proxy's use is not counted, as on a host without cgroups.
        if c.join_self(&join_files).is_ok() {
            let _ = c.allow_more_pids(PROXY_TASKS);
        }
    }
    drop(join_files);
    let records_r = records.map(|(r, w)| {
        drop(w);
        r
    });
    // The proxy lives exactly as long as the command's tree: until init is reaped. It is
    // started before init's report is read, so a proxy that cannot start is reported as
    // "nothing ran" (breaker: it was a command failure with every layer listed as applied).
    // Init binds the proxy's and the forwards' listeners inside the namespace and hands
    // them over (or ends: then its status says why, and nothing is served).
    let chan = relay.map(|(ours, theirs)| {
        drop(theirs);
        ours
    });
    let proxy = match chan.as_ref().map(super::relay::receive_listeners) {
        Some(Err(_)) => None,
        Some(Ok(listeners)) => Some(start_proxy(profile, plan, listeners, pid)),
        None => None,
    };
    let proxy = match proxy {
        Some(Err(e)) => {
            // SAFETY: kill has no memory-safety preconditions; `pid` is our child.
            unsafe { libc::kill(pid, libc::SIGKILL) };
            process::supervise(pid);
            leave(&cgroup);
            drop(alive_w);
            let why = format!("sandbox setup failed: {e}");
            reporter.not_run(why.clone());
            return Err(HelperError::Message(why));
        }
        Some(Ok(r)) => {
            // Init waits for this before it starts the command.
            if let Some(c) = &chan {
                sys::write_all(c.as_raw_fd(), &[PROXY_STARTED]);
            }
            Some(r)
        }
        None => None,
    };
    drop(chan);
    match read_status(&status_r) {
        Some(SetupStatus::Applied(r)) => reporter.deliver(&r),
        Some(SetupStatus::NotRun(why)) => reporter.not_run(why),
        Some(SetupStatus::UsernsUnusable(why)) if prepared.is_none() => {
            // Init exits at once; reap it, then take the next rung (or refuse).
            let mut st = 0;
            // SAFETY: `st` is a valid int; `pid` is our child.
            unsafe { libc::waitpid(pid, &mut st, libc::__WALL) };
            drop(alive_w);
            leave(&cgroup);
            features.user_namespaces = Availability::Unavailable(why.clone());
            return run(payload, args, features, reporter, Some(why));
        }
        Some(SetupStatus::UsernsUnusable(why)) => reporter.not_run(why),
        None => {} // init failed and said why; its exit code (125) follows
    }
    let mut watchdog = super::limits::Watchdog::start(pid, &limits, cgroup.as_ref());
    // A cover lost (host replaced a covered path): init — pid 1 of the command's pid
    // namespace — is killed, which ends the whole tree.
    let mut stop = false;
    let how = (watchdog.is_some(), cover.is_some() || handler.is_some());
    let mut check = || {
        if let Some(w) = watchdog.as_mut() {
            w.check();
        }
        let lost = cover.as_mut().and_then(|c| c.poll()).is_some();
        if (lost || handler.is_some_and(sys::socket_hung_up)) && !stop {
            // SAFETY: kill has no memory-safety preconditions; `pid` is our unreaped child.
            unsafe { libc::kill(pid, libc::SIGKILL) };
            stop = true;
        }
    };
    // Anything seen while the root was built.
    check();
    let code = match how {
        (true, _) => process::supervise_checking(pid, super::limits::Watchdog::EVERY, &mut check),
        (false, true) => process::supervise_checking(pid, COVER_RECHECK, &mut check),
        (false, false) => process::supervise(pid),
    };
    // Init is reaped: the detached process may drop what it held (its mount namespace).
    drop(held_open);
    // What the watch saw, else what init found when it looked at every cover after the
    // command: a rename's event can be queued after its new entry was already read (the
    // kernel moves the entry first), so a run that read a replaced file could end before
    // its watch said so (attack pass 144).
    let cover_lost = cover
        .as_mut()
        .and_then(|c| c.poll())
        .map(str::to_string)
        .or_else(|| {
            sys::read_to_end(&covers_end_r, 64 * 1024)
                .ok()
                .filter(|b| !b.is_empty())
                .map(|b| String::from_utf8_lossy(&b).into_owned())
        });
    // Before the broker's merge-back below (its writes are cordon's own); released, not
    // dropped: the last close of an inotify instance waits for the kernel.
    if let Some(c) = cover {
        c.release();
    }
    let ended = std::time::SystemTime::now();
    let denials = records_r.as_ref().and_then(super::denial_records::receive);
    // Init is gone (and every process of the sandbox with it): its report is complete. A
    // `config.lock` the command left is removed, then the allowed edits merged (host side).
    let git_config = super::git_config_broker::after_run(&lock_watch, ended, git_result.as_ref());
    for n in git_config.iter().flat_map(|r| &r.notes) {
        // Key names and values are the command's: shown printable (attack pass 39, C2).
        eprintln!("cordon: note: {}", cordon_policy::text::printable(n));
    }
    // What ended the command, as init's wait saw it (a byte: the signal; none: it exited).
    let signal = sys::read_ready_byte(&ended_r)
        .map(i32::from)
        .filter(|s| *s > 0 && code == 128 + s);
    if let Some(why) = &cover_lost {
        eprintln!("cordon: {why}");
    }
    reporter.records(RunRecords {
        denials,
        git_config,
        signal: signal.filter(|_| cover_lost.is_none()),
        cover_lost: cover_lost.clone(),
        helper_peak_rss_kib: own_peak_rss_kib(),
    });
    // A template's command: the server's handler made the cgroup and removes it after
    // passing the status on, or once it has killed this process; from here it could not
    // (`/sys/fs/cgroup` is read-only in the template's root: EROFS).
    let hit = super::limits::after_run(watchdog, cgroup.as_ref(), code, prepared.is_none());
    drop(proxy);
    drop(alive_w);
    if cover_lost.is_some() {
        // cordon could not keep its guarantee for this run.
        return Ok(EXIT_SETUP);
    }
    Ok(super::limits::finish(hit, &limits, code))
}

/// How often the cover watch is read when nothing else wakes the helper (a `SIGIO` does,
/// at once): a safety net, not the mechanism.
const COVER_RECHECK: std::time::Duration = std::time::Duration::from_secs(1);

/// The descriptors shared by the helper and init, made before the clone: a pipe whose
/// hang-up tells init the helper is gone, the setup-status pipe, the denial-records pipe,
/// the memory file init reports `.git/config` copies into, and the socket pair init hands
/// the proxy's (and `network.local`'s) listeners over ([`super::relay::send_listeners`]).
struct Channels {
    alive: (OwnedFd, OwnedFd),
    status: (OwnedFd, OwnedFd),
    /// Init → helper, once: the signal that ended the command (one byte), if one did.
    ended: (OwnedFd, OwnedFd),
    /// Init → helper, once the command has ended: why a cover no longer stands, if one
    /// does not ([`super::cover_watch::still_mounted`]; text, nothing when all stand).
    covers_end: (OwnedFd, OwnedFd),
    records: Option<(OwnedFd, OwnedFd)>,
    git_result: Option<OwnedFd>,
    /// (helper's end, init's end).
    relay: Option<(OwnedFd, OwnedFd)>,
}

impl Channels {
    fn prepare(
        profile: &ResolvedProfile,
        plan: &LinuxPlan,
        layout: &mounts::Layout,
    ) -> Result<Channels, HelperError> {
        let pipe = || sys::pipe().map_err(|e| HelperError::setup("pipe", e));
        let alive = pipe()?;
        let status = pipe()?;
        let ended = pipe()?;
        let covers_end = pipe()?;
        // Init → helper: the denial records, once the command's tree has ended.
        let records = if plan.denial_records {
            Some(pipe()?)
        } else {
            None
        };
        let git_result = if layout
            .steps
            .iter()
            .any(|s| s.kind == mounts::StepKind::GitConfig)
        {
            Some(
                super::git_config_broker::result_file()
                    .map_err(|e| HelperError::setup("memfd for the .git/config copies", e))?,
            )
        } else {
            None
        };
        let relay = if plan.proxy_relay || !plan.local_forwards.is_empty() {
            // Checked before anything starts: a bad list is a refusal, not a dead proxy.
            if plan.proxy_relay {
                cordon_proxy::ProxyPolicy::from_rules(&profile.profile.network_rules)
                    .map_err(|e| HelperError::Message(format!("refusing to run: {e}")))?;
            }
            Some(
                super::template::seqpacket_pair()
                    .map_err(|e| HelperError::setup("socketpair for the proxy's listeners", e))?,
            )
        } else {
            None
        };
        Ok(Channels {
            alive,
            status,
            ended,
            covers_end,
            records,
            git_result,
            relay,
        })
    }
}

/// The clone's child becomes pid 1 of the new namespaces: runs [`init_main`], reports a
/// setup failure on the status pipe, and exits with the command's code (never returns).
fn become_init(mut ctx: InitContext<'_>) -> ! {
    // A template's helper's connection to the server's handler is the helper's alone:
    // init, and so the command, never holds it.
    if let Some(fd) = ctx.prepared.and_then(|p| p.handler_conn()) {
        sys::close_in_child(fd);
    }
    let code = match init_main(&mut ctx) {
        Ok(code) => code,
        Err(e) => {
            if let (Some(st), false) = (&ctx.status, matches!(e, HelperError::ParentGone)) {
                send_status(st, &SetupStatus::NotRun(e.to_string()));
            }
            e.report()
        }
    };
    process::exit_now(code);
}

/// What pid 1 of the new namespaces needs (prepared by the helper before the clone).
struct InitContext<'a> {
    profile: &'a ResolvedProfile,
    plan: &'a LinuxPlan,
    layout: &'a mounts::Layout,
    spec: &'a CommandSpec,
    /// The helper's effective uid and gid, mapped to themselves.
    uid: libc::uid_t,
    gid: libc::gid_t,
    /// Read end of a pipe the helper holds open: hang-up means the helper is gone.
    alive: OwnedFd,
    /// Write end of the status pipe to the helper ([`SetupStatus`]); taken (closed) once
    /// the report is sent, before the command starts.
    status: Option<OwnedFd>,
    /// Write end of the pipe on which init tells the helper the signal that ended the
    /// command ([`RunRecords::signal`]).
    ended: Option<OwnedFd>,
    /// Write end of the pipe on which init tells the helper, after the command, a cover
    /// that no longer stands ([`Channels::covers_end`]).
    covers_end: Option<OwnedFd>,
    /// `--report`: print the applied layers before the command starts.
    print_report: bool,
    /// Managed network or `network.local`: init's end of the socket pair on which it hands
    /// the listeners it binds inside the namespace to the helper's proxy.
    relay: Option<OwnedFd>,
    /// Write end of the denial-records pipe to the helper (`plan.denial_records`).
    records: Option<OwnedFd>,
    /// The memory file init reports the `.git/config` copies into after the command
    /// ([`super::git_config_broker::report`]); the helper merges them.
    git_result: Option<OwnedFd>,
    /// Forked from a `cordon serve` template: the identity is mapped and the root built
    /// already; only the per-command places are mounted afresh.
    prepared: Option<&'a super::template::Prepared>,
    /// With a cgroup: how init gets into the run's cgroup ([`CgroupJoin`]) and which limits
    /// that cgroup enforces `(pids, memory)`. Init joins (or waits) before it confines
    /// itself.
    cgroup_join: Option<(CgroupJoin, (bool, bool))>,
    /// A template's command: the network namespace made for it ahead of time
    /// ([`super::template::Prepared::take_spare_net`]), which init enters first (it was
    /// cloned without `CLONE_NEWNET`).
    spare_net: Option<OwnedFd>,
    /// A template's command: the mount namespace made for it ahead of time
    /// ([`super::template::Prepared::take_spare_mnt`]), which init enters before anything
    /// else (it was cloned without `CLONE_NEWNS`, into the template's own namespace). The
    /// helper owns the descriptor; init's copy is closed once entered.
    spare_mnt: Option<RawFd>,
    /// `spare_mnt` was given and entered: its own mounts but `/proc` are made
    /// ([`mounts::PerCommand::AheadOfCommand`]).
    spare_mnt_entered: bool,
}

/// How init gets into the run's cgroup (R-H5; [`super::limits::Cgroup::moves_itself`]).
enum CgroupJoin {
    /// cgroup v2: the read end of the pipe on which the helper says whether it moved init
    /// in (`J`) or not (`N`: the rlimit fallbacks apply). A hang-up (helper gone) is a
    /// setup failure.
    Gate(OwnedFd),
    /// cgroup v1: one `tasks` descriptor per directory, opened on the host, through which
    /// init (single-threaded) moves itself in; a failed write means the rlimit fallbacks.
    Itself(Vec<OwnedFd>),
}

impl InitContext<'_> {
    fn send(&self, s: &SetupStatus) {
        if let Some(fd) = &self.status {
            send_status(fd, s);
        }
    }
}

/// Whether a failed write of `/proc/self/{setgroups,uid_map,gid_map}` means user
/// namespaces cannot be used here (rather than a fault of the sandbox): EPERM/EACCES, e.g.
/// mapping uid 0 needs `CAP_SETFCAP`, which a root container may lack.
fn is_map_refusal(e: &std::io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::EPERM | libc::EACCES))
}

/// Pid 1 of the new namespaces. Returns the exit code (never returns to the helper's
/// code path: the caller `_exit`s with it). The steps, in order: map the identity, pin the
/// host endpoints, build the root, start the network inside, confine, report, run the
/// command with its supervisors, hand back what the supervisors collected.
fn init_main(ctx: &mut InitContext<'_>) -> Result<i32, HelperError> {
    enter_namespaces(ctx)?;
    if matches!(ctx.cgroup_join, Some((CgroupJoin::Itself(_), _))) {
        // While init is one thread (the network relays are threads).
        join_cgroup(ctx)?;
    }
    let endpoints = pin_host_endpoints(ctx)?;
    let built = build_root(ctx)?;
    let git_configs = std::sync::Arc::new(built.git_configs);
    let relays = start_network(ctx)?;
    std::env::set_current_dir(&ctx.profile.cwd).map_err(|e| HelperError::Setup {
        stage: "entering the working directory",
        path: Some(ctx.profile.cwd.clone()),
        source: e,
    })?;
    join_cgroup(ctx)?;
    // In the command's own network namespace and before the seccomp filter that refuses
    // `AF_NETLINK`; without it the guard judges by connecting, as before.
    let listeners = (ctx.plan.unix_guard && ctx.plan.net_namespace)
        .then(|| super::unix_listeners::ListenerIndex::open().ok())
        .flatten();
    let extra: Vec<(OwnedFd, Grant)> = built
        .host_devpts
        .into_iter()
        .map(|fd| (fd, Grant::Dev))
        .collect();
    let applied = confine(
        ctx.profile,
        ctx.plan,
        Some(ctx.layout),
        extra,
        landlock_layer::stdio_grants(),
    )
    .map_err(HelperError::Confine)?;
    // Each cover as mounted here, before anything runs, with the credentials of the look
    // after the command (confined: no capability over the files), so a directory on the
    // way that was unsearchable all along is the same answer both times (new-user pass
    // 147: the host's `chmod 000` above a deny path let the command run, then refused).
    let cover_marks = match ctx.prepared {
        Some(p) => p.covered_paths(),
        None => ctx
            .layout
            .covers()
            .into_iter()
            .map(|c| c.path)
            .filter(|p| !built.skipped.contains(p))
            .collect(),
    };
    let cover_marks =
        super::cover_watch::record_covers(cover_marks).map_err(HelperError::Message)?;
    let denials = denial_supervisor(ctx, &applied);
    for w in &built.warnings {
        eprintln!("cordon: note: {w}");
    }
    // The command must not be able to read or write init's memory through /proc/1: a
    // failure here is a failed layer, not something to run without.
    sys::prctl(libc::PR_SET_DUMPABLE, 0).map_err(|e| HelperError::setup("PR_SET_DUMPABLE", e))?;
    let report = applied_report(
        ctx,
        applied,
        &endpoints,
        &relays,
        denials.is_some(),
        &built.notes,
    );
    if ctx.print_report {
        print_report(&report);
    }
    ctx.send(&SetupStatus::Applied(report));
    drop(ctx.status.take());
    let supervisors = Supervisors {
        allowed_sockets: endpoints.allowed_sockets,
        listeners,
        denials: denials.clone(),
        git_configs: std::sync::Arc::clone(&git_configs),
    };
    let code = run_supervised(ctx, supervisors)?;
    if let (Some(sig), Some(fd)) = (process::last_signal(), ctx.ended.take()) {
        sys::write_all(fd.as_raw_fd(), &[sig as u8]);
    }
    if let (Some(marks), Some(fd)) = (&cover_marks, ctx.covers_end.take()) {
        if let Some(lost) = super::cover_watch::lost_after_run(marks) {
            sys::write_all(fd.as_raw_fd(), lost.as_bytes());
        }
    }
    if let (Some(sup), Some(fd)) = (&denials, &ctx.records) {
        super::denial_records::send(fd, &sup.report());
    }
    if let (Some(out), false) = (&ctx.git_result, git_configs.is_empty()) {
        super::git_config_broker::report(&git_configs, out.as_raw_fd());
    }
    if code != 0 {
        let refused = denials.as_ref().map(|d| {
            d.report()
                .records
                .into_iter()
                .filter(|r| !r.is_network())
                .map(|r| r.path)
                .collect::<Vec<_>>()
        });
        failure_hints(ctx, &built.read_only_caches, refused.as_deref());
    }
    Ok(code)
}

/// Gets init into the run's cgroup ([`InitContext::cgroup_join`]): joins by itself (v1,
/// first thing, while init is single-threaded) or waits until the helper has moved it in
/// (v2, last thing before it confines itself, so the move overlaps building the root), and records which limits the cgroup
/// enforces, so the rlimits applied next only fall back where it does not. Errors: the
/// helper hung up.
fn join_cgroup(ctx: &mut InitContext<'_>) -> Result<(), HelperError> {
    let Some((how, (pids, memory))) = ctx.cgroup_join.take() else {
        return Ok(());
    };
    match how {
        CgroupJoin::Itself(files) => {
            if super::limits::Cgroup::join_current(&files).is_ok() {
                super::limits::Cgroup::enforced_by_cgroup(pids, memory);
            }
        }
        CgroupJoin::Gate(gate) => {
            let mut b = [0u8; 1];
            match sys::read(&gate, &mut b) {
                Ok(1) if b[0] == b'J' => super::limits::Cgroup::enforced_by_cgroup(pids, memory),
                Ok(1) => {}
                _ => return Err(HelperError::ParentGone),
            }
        }
    }
    Ok(())
}

/// Init's first step: die with the helper, and map the helper's uid/gid to themselves
/// (`setgroups` denied first). A refused mapping is reported as "user namespaces unusable"
/// so the helper falls back to the next rung.
fn enter_namespaces(ctx: &mut InitContext<'_>) -> Result<(), HelperError> {
    sys::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong)
        .map_err(|e| HelperError::setup("PR_SET_PDEATHSIG", e))?;
    if sys::peer_gone(&ctx.alive) {
        return Err(HelperError::ParentGone); // nobody to run the command for
    }
    process::install_init_handlers();
    if let Some(ns) = ctx.spare_mnt.take() {
        // Before anything touches a mount: until then init is in the template's namespace,
        // which every command of the template shares. A failure is fatal.
        // SAFETY: setns on a namespace descriptor this process holds; no memory is passed.
        let r = unsafe { libc::setns(ns, libc::CLONE_NEWNS) };
        let e = std::io::Error::last_os_error();
        sys::close_in_child(ns);
        if r != 0 {
            return Err(HelperError::setup(
                "entering the command's mount namespace",
                e,
            ));
        }
        ctx.spare_mnt_entered = true;
    }
    if let Some(ns) = ctx.spare_net.take() {
        // Before anything of the network is set up. A failure is fatal: init would stay in
        // the template's network namespace, the host's.
        // SAFETY: setns on a namespace descriptor we own; no memory is passed.
        if unsafe { libc::setns(ns.as_raw_fd(), libc::CLONE_NEWNET) } != 0 {
            return Err(HelperError::setup(
                "entering the command's network namespace",
                std::io::Error::last_os_error(),
            ));
        }
    }
    if ctx.prepared.is_some() {
        return Ok(()); // the template's user namespace is mapped already
    }
    let maps: [(&std::ffi::CStr, String); 3] = [
        (c"/proc/self/setgroups", "deny".to_string()),
        (c"/proc/self/uid_map", format!("{0} {0} 1\n", ctx.uid)),
        (c"/proc/self/gid_map", format!("{0} {0} 1\n", ctx.gid)),
    ];
    for (file, data) in &maps {
        if let Err(e) = sys::write_file(file, data.as_bytes()) {
            if is_map_refusal(&e) {
                let why = format!(
                    "writing {} failed: {e} (a root container without CAP_SETFCAP, or an \
                     LSM, forbids the identity mapping)",
                    file.to_string_lossy()
                );
                ctx.send(&SetupStatus::UsernsUnusable(why));
                return Err(HelperError::ParentGone); // the helper reports the fallback
            }
            return Err(HelperError::Setup {
                stage: "identity mapping",
                path: Some(PathBuf::from(file.to_string_lossy().into_owned())),
                source: e,
            });
        }
    }
    Ok(())
}

/// Host endpoints the command may reach, pinned in the host's view before the root is
/// rebuilt: the proxy's socket (managed network), each `network.local` socket, and the
/// `network.unix_sockets` allow list.
struct HostEndpoints {
    allowed_sockets: Vec<(PathBuf, Option<OwnedFd>)>,
}

fn pin_host_endpoints(ctx: &InitContext<'_>) -> Result<HostEndpoints, HelperError> {
    let allowed_sockets = if ctx.plan.unix_guard {
        super::unix_guard::pin_allowed(&ctx.profile.unix_sockets)
    } else {
        Vec::new()
    };
    Ok(HostEndpoints { allowed_sockets })
}

/// The mount plan applied ([`mounts::build`]). A refused fresh `/proc` means this host
/// cannot give rung 1 (reported as a fallback, not a failure).
fn build_root(ctx: &InitContext<'_>) -> Result<mounts::Built, HelperError> {
    if let Some(p) = ctx.prepared {
        // In the namespace made ahead, only `/proc` is left to mount.
        let which = if ctx.spare_mnt_entered {
            mounts::PerCommand::ProcOnly
        } else {
            mounts::PerCommand::All
        };
        mounts::refresh_per_command(ctx.layout, which)
            .map_err(|e| HelperError::setup("per-command mounts of the template", e))?;
        return Ok(p.built());
    }
    match mounts::build(ctx.layout) {
        Ok(b) => Ok(b),
        Err(e) if is_proc_refusal(&e) => {
            let why = format!(
                "a fresh /proc cannot be mounted here ({e}); the host's /proc is partly \
                 covered (as in a container)"
            );
            ctx.send(&SetupStatus::UsernsUnusable(why));
            Err(HelperError::ParentGone)
        }
        Err(e) => Err(HelperError::setup("mounts", e)),
    }
}

/// What init bound inside the namespace and handed to the helper's proxy: whether the
/// proxy port is served, and the `network.local` addresses (for the report).
struct Relays {
    /// The proxy port's addresses as bound (empty: not served).
    proxy: Vec<std::net::SocketAddr>,
    local: Vec<std::net::SocketAddr>,
}

/// Brings up the private loopback and, for a managed network or `network.local`, binds the
/// proxy port and each forwarded address inside the namespace and hands the listeners to
/// the helper ([`super::relay::send_listeners`]) before the command starts, so its first
/// connection is queued, not refused. Init keeps no copy.
fn start_network(ctx: &mut InitContext<'_>) -> Result<Relays, HelperError> {
    if ctx.plan.loopback {
        super::loopback::bring_up_lo()
            .map_err(|e| HelperError::setup("bringing up the private loopback (lo)", e))?;
    }
    let Some(chan) = ctx.relay.take() else {
        return Ok(Relays {
            proxy: Vec::new(),
            local: Vec::new(),
        });
    };
    let proxy = if ctx.plan.proxy_relay {
        super::relay::listen().map_err(|e| HelperError::setup("listening on the proxy port", e))?
    } else {
        Vec::new()
    };
    let local = ctx
        .plan
        .local_forwards
        .iter()
        .map(|a| {
            super::relay::listen_on(*a).map_err(|e| {
                HelperError::Message(format!(
                    "sandbox setup failed: network.local {a}: cannot listen on it inside the \
                     sandbox: {e}"
                ))
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let listeners = super::relay::Listeners { proxy, local };
    super::relay::send_listeners(&chan, &listeners)
        .map_err(|e| HelperError::setup("handing the listeners to the proxy", e))?;
    // The command starts only once the helper says the proxy runs: a proxy that cannot
    // start must leave nothing run (CI: under load the command ran before the helper
    // killed init for a proxy that failed to start).
    let mut ack = [0u8; 1];
    match nix::unistd::read(&chan, &mut ack) {
        Ok(1) if ack[0] == PROXY_STARTED => {}
        _ => {
            return Err(HelperError::Message(
                "sandbox setup failed: the proxy did not start".into(),
            ))
        }
    }
    Ok(Relays {
        proxy: listeners
            .proxy
            .iter()
            .filter_map(|l| l.local_addr().ok())
            .collect(),
        local: ctx.plan.local_forwards.clone(),
    })
}

/// What the denial-record supervisor judges with: the profile and the Landlock ruleset's
/// writable places from the same layout (only when fully enforced).
fn denial_supervisor(
    ctx: &InitContext<'_>,
    applied: &[Layer],
) -> Option<std::sync::Arc<super::denial_records::Supervisor>> {
    ctx.plan.denial_records.then(|| {
        let landlock = applied.iter().find_map(|l| match l {
            Layer::Landlock {
                plan,
                enforcement: super::layer::Enforcement::Full,
            } if plan.fs => Some((
                plan.abi,
                super::denial_records::landlock_writable(ctx.layout),
            )),
            _ => None,
        });
        // The filesystems this sandbox made fresh: the private `/tmp` (when the plan has
        // one) and `/dev/shm` (always, on rung 1).
        let mut own: Vec<&std::path::Path> = vec![std::path::Path::new("/dev/shm")];
        if ctx.layout.private_tmp() {
            own.push(std::path::Path::new("/tmp"));
        }
        std::sync::Arc::new(
            super::denial_records::Supervisor::new(ctx.profile, landlock)
                .with_own_filesystems(&own),
        )
    })
}

/// The report of what rung 1 applied: namespaces and mounts (in place now), then what
/// `confine` reports as enforced, then init's own supervisors and relays.
fn applied_report(
    ctx: &InitContext<'_>,
    applied: Vec<Layer>,
    endpoints: &HostEndpoints,
    relays: &Relays,
    denial_records: bool,
    mount_notes: &[String],
) -> AppliedReport {
    let private_tmp = ctx.profile.filesystem.top_view().private_tmp;
    let mut layers = vec![
        Layer::Namespaces {
            net: ctx.plan.net_namespace,
        },
        Layer::mounts(&ctx.profile.filesystem, private_tmp),
    ];
    layers.extend(applied);
    if ctx.plan.unix_guard {
        layers.push(Layer::UnixGuard {
            listed: endpoints.allowed_sockets.len(),
        });
    }
    if denial_records {
        layers.push(Layer::DenialRecords);
    }
    if !relays.proxy.is_empty() {
        layers.push(Layer::ProxyRelay {
            port: super::relay::PROXY_PORT,
            addrs: relays.proxy.iter().map(|a| a.to_string()).collect(),
        });
    }
    if !relays.local.is_empty() {
        layers.push(Layer::LocalForwards {
            addrs: relays.local.iter().map(|a| a.to_string()).collect(),
        });
    }
    layers.push(Layer::Environment);
    AppliedReport {
        rung: Rung::Namespaces,
        layers,
        notes: mount_notes
            .iter()
            .chain(ctx.plan.notes.iter())
            .cloned()
            .collect(),
        fell_back: None,
        denials: None,
        git_config: Vec::new(),
        signal: None,
        cover_lost: None,
        helper_peak_rss_kib: None,
    }
}

/// What init runs beside the command: the unix-socket guard's listener (connect, the
/// denial records, the `.git/config` broker).
struct Supervisors {
    allowed_sockets: Vec<(PathBuf, Option<OwnedFd>)>,
    /// The private network namespace's listening unix sockets, asked by the guard
    /// ([`super::unix_listeners`]); opened before init's seccomp filter.
    listeners: Option<super::unix_listeners::ListenerIndex>,
    denials: Option<std::sync::Arc<super::denial_records::Supervisor>>,
    git_configs: std::sync::Arc<Vec<super::git_config_broker::Copy>>,
}

/// Spawns the command (the guard's filter installed in it before exec), starts the
/// supervisors, and waits for the command's tree. A supervisor that cannot start takes the
/// tree down (its calls would wait forever).
fn run_supervised(ctx: &InitContext<'_>, sup: Supervisors) -> Result<i32, HelperError> {
    // Renames are notified only when a `.git/config` copy exists (the broker).
    let renames = !sup.git_configs.is_empty();
    let guard_chan = if ctx.plan.unix_guard {
        Some(
            super::unix_guard::channel()
                .map_err(|e| HelperError::setup("socketpair for the unix-socket guard", e))?,
        )
    } else {
        None
    };
    let child = process::spawn(ctx.spec, || {
        if let Some((_, theirs)) = &guard_chan {
            super::unix_guard::install_in_child(theirs, ctx.plan.denial_records, renames)?;
        }
        before_exec()
    })?;
    let abort = |what: &'static str, e: std::io::Error| {
        // SAFETY: kill has no memory-safety preconditions; `child` is our child.
        unsafe { libc::kill(child, libc::SIGKILL) };
        process::supervise(child);
        HelperError::setup(what, e)
    };
    if let Some((ours, theirs)) = guard_chan {
        drop(theirs);
        let cfg = super::unix_guard::GuardConfig {
            abstract_ok: ctx.plan.net_namespace
                || ctx
                    .plan
                    .landlock
                    .as_ref()
                    .is_some_and(|l| l.scope_abstract_unix),
            allowed: sup.allowed_sockets,
            listeners: sup.listeners,
            denials: sup.denials,
            git_configs: sup.git_configs,
            network_rule: ctx.plan.net_namespace.then(|| {
                if ctx.plan.proxy_relay {
                    "managed network (R-P4): only the proxy leaves the sandbox; a direct \
                     connection does not"
                        .to_string()
                } else {
                    "network off (R-P4): the sandbox's network namespace has only loopback"
                        .to_string()
                }
            }),
        };
        super::unix_guard::receive_listener(&ours)
            .and_then(|l| super::unix_guard::start(l, cfg))
            .map_err(|e| abort("starting the unix-socket guard", e))?;
    }
    let code = process::supervise_command(child);
    // The command has ended: what it left running (a `cmd &` still starting) goes now,
    // while the supervisors still answer its calls. Left to init's exit, the seccomp
    // listener is closed before the kernel kills the namespace, and a call in that window
    // fails with ENOSYS ("cannot create /dev/null: Function not implemented", new-user
    // pass nu15 N6).
    // Only as pid 1 of the command's own pid namespace: there -1 reaches every other
    // process in it and nothing outside it.
    // SAFETY: getpid and kill have no memory-safety preconditions.
    if unsafe { libc::getpid() } == 1 {
        // SAFETY: as above.
        unsafe { libc::kill(-1, libc::SIGKILL) };
    }
    Ok(code)
}

/// After a failed command: hints from what init knows (a cache left read-only, `git init`
/// without a repository). `refused`: the paths of the writes the denial records refused,
/// when they are kept — the cache hint is given only when one of them is in a read-only
/// cache (new-user pass nu15 N9: it came first on every failed write, a cache or not).
fn failure_hints(
    ctx: &InitContext<'_>,
    read_only_caches: &[(PathBuf, String)],
    refused: Option<&[PathBuf]>,
) {
    let in_cache = |p: &PathBuf| {
        ctx.profile
            .caches
            .iter()
            .filter(|c| c.mode == cordon_policy::CacheMode::ReadOnly)
            .map(|c| &c.path)
            .chain(read_only_caches.iter().map(|(c, _)| c))
            .any(|c| p.starts_with(c))
    };
    let cache_hint = refused.is_none_or(|r| r.iter().any(in_cache));
    if let Some(h) =
        super::caches::read_only_hint(ctx.profile, read_only_caches).filter(|_| cache_hint)
    {
        eprintln!("cordon: hint: {h}");
    }
}

/// The last step in the command's own process, after every layer is in force and the report
/// is sent, right before `execve`, on both rungs: the one place for per-command limits
/// (rlimits, joining a cgroup). An error is a setup failure: 125, the command does not run.
fn before_exec() -> Result<(), String> {
    Ok(())
}

/// Whether a failed mount build failed at the fresh `/proc` with a permission error (the
/// kernel refuses a new proc mount when the visible one is partly covered).
fn is_proc_refusal(e: &std::io::Error) -> bool {
    e.kind() == std::io::ErrorKind::PermissionDenied && e.to_string().contains("/proc")
}

/// Why [`confine`] did not apply every planned layer.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ConfineFailure {
    /// The kernel gives less than a guarantee needs (R-S4), e.g. Landlock not enforced.
    #[error("refusing to run unconfined: {0}")]
    Refused(String),
    /// A step failed (message names it).
    #[error("refusing to run unconfined: sandbox setup failed: {0}")]
    Failed(String),
}

impl From<landlock_layer::EnforceError> for ConfineFailure {
    fn from(e: landlock_layer::EnforceError) -> ConfineFailure {
        match e {
            landlock_layer::EnforceError::Failed(m) => ConfineFailure::Failed(m),
            landlock_layer::EnforceError::NotEnforced(m) => ConfineFailure::Refused(m),
        }
    }
}

fn run_landlock_only(
    payload: &HelperPayload,
    args: &HelperArgs,
    plan: &LinuxPlan,
    reporter: &mut Reporter,
    fell_back: Option<String>,
) -> Result<i32, HelperError> {
    let profile = &payload.profile;
    mounts::create_missing_grants(&mounts::layout_for(profile))
        .map_err(|e| HelperError::Message(format!("refusing to run: {e}")))?;
    if let Err(e) = std::env::set_current_dir(&profile.cwd) {
        return Err(HelperError::Usage(format!(
            "cannot enter the working directory {}: {e} (cd to an existing directory and \
             run again)",
            profile.cwd.display()
        )));
    }
    let env = child_env(payload, Rung::LandlockOnly);
    let spec = CommandSpec::new(&args.argv, &env).map_err(HelperError::Usage)?;
    // The helper is a subreaper too: if the supervisor is killed, its orphans come here
    // and are swept below.
    sys::prctl(libc::PR_SET_CHILD_SUBREAPER, 1)
        .map_err(|e| HelperError::setup("becoming a subreaper", e))?;
    let (status_r, status_w) = sys::pipe().map_err(|e| HelperError::setup("pipe", e))?;
    // Supervisor → helper: the signal that ended the command (as on rung 1).
    let (ended_r, ended_w) = sys::pipe().map_err(|e| HelperError::setup("pipe", e))?;
    // SAFETY: getpid/getpgrp have no preconditions.
    let (helper, pgrp) = unsafe { (libc::getpid(), libc::getpgrp()) };
    process::block_signals();
    // SAFETY: the helper is single-threaded, so the child may use the Rust runtime.
    let sup = unsafe { libc::fork() };
    if sup < 0 {
        return Err(HelperError::setup("fork", std::io::Error::last_os_error()));
    }
    if sup == 0 {
        drop(status_r);
        drop(ended_r);
        reporter.close_in_child();
        let mut sup_ctx = SupervisorContext {
            profile,
            plan,
            spec: &spec,
            helper,
            helper_pgrp: pgrp,
            status: Some(status_w),
            ended: Some(ended_w),
            fell_back,
            print_report: reporter.stderr,
        };
        let code = match supervisor_main(&mut sup_ctx) {
            Ok(c) => c,
            Err(e) => {
                if let (Some(st), false) = (&sup_ctx.status, matches!(e, HelperError::ParentGone)) {
                    send_status(st, &SetupStatus::NotRun(e.to_string()));
                }
                e.report()
            }
        };
        process::exit_now(code);
    }
    drop(status_w);
    drop(ended_w);
    match read_status(&status_r) {
        Some(SetupStatus::Applied(r)) => reporter.deliver(&r),
        Some(SetupStatus::NotRun(why)) => reporter.not_run(why),
        _ => {}
    }
    let code = process::supervise(sup);
    process::kill_descendants();
    let signal = sys::read_ready_byte(&ended_r)
        .map(i32::from)
        .filter(|s| *s > 0 && code == 128 + s);
    reporter.records(RunRecords {
        denials: None,
        git_config: Vec::new(),
        signal,
        cover_lost: None,
        helper_peak_rss_kib: own_peak_rss_kib(),
    });
    Ok(code)
}

/// Says on stderr which empty `.git`/`.cordon` placeholders were just made in a directory
/// other than the workspace — a `-w` grant such as `/etc` or `~`, or a bare repository in
/// the workspace (attack pass 191: it was called "the writable grant") — where nobody
/// expects them (new-user pass 182 #2: they appeared in `/etc` without a word). They stay (see
/// [`mounts::Placeholder`]); the workspace's own are the usual case and not said.
fn say_marker_placeholders(made: &[mounts::Placeholder], workspace: &std::path::Path) {
    for (dir, names) in marker_placeholders(made, workspace) {
        eprintln!("{}", marker_placeholder_note(dir, &names));
    }
}

/// The note for the marker placeholders `names` made in `dir`, naming only those.
fn marker_placeholder_note(dir: &std::path::Path, names: &[&str]) -> String {
    let (what, them, stay) = if names.len() == 1 {
        (
            format!("an empty {} directory", names[0]),
            "a read-only placeholder that keeps",
            "it stays",
        )
    } else {
        (
            format!("empty {} directories", names.join(" and ")),
            "read-only placeholders that keep",
            "they stay",
        )
    };
    format!(
        "cordon: note: made {what} in {} (a writable directory other than the workspace — a \
         grant, or a bare repository — with no project marker): {them} a command from making \
         a repository or a project there; {stay} (README: placeholders)",
        dir.display()
    )
}

/// The `.git`/`.cordon` placeholders of `made` outside `workspace`, by directory, each with
/// the names that were made there — only those (hints finding 4: `made empty .git and
/// .cordon directories in …/.git/modules/libsub` when only `.git` was made there).
fn marker_placeholders<'a>(
    made: &'a [mounts::Placeholder],
    workspace: &std::path::Path,
) -> Vec<(&'a std::path::Path, Vec<&'a str>)> {
    let mut out: Vec<(&std::path::Path, Vec<&str>)> = Vec::new();
    for p in made {
        let Some(name) = p
            .path
            .file_name()
            .and_then(|n| n.to_str())
            .filter(|n| *n == ".git" || *n == ".cordon")
        else {
            continue;
        };
        let Some(dir) = p.path.parent().filter(|d| *d != workspace) else {
            continue;
        };
        match out.iter_mut().find(|(d, _)| *d == dir) {
            Some((_, names)) if !names.contains(&name) => names.push(name),
            Some(_) => {}
            None => out.push((dir, vec![name])),
        }
    }
    out
}

/// What the rung-2 supervisor needs.
struct SupervisorContext<'a> {
    profile: &'a ResolvedProfile,
    plan: &'a LinuxPlan,
    spec: &'a CommandSpec,
    /// The helper's pid (the supervisor's parent) and process group.
    helper: libc::pid_t,
    helper_pgrp: libc::pid_t,
    /// Write end of the status pipe; the command's process writes the report on it. Taken
    /// (closed) once the command is spawned.
    status: Option<OwnedFd>,
    /// Write end of the pipe on which the supervisor tells the helper the signal that
    /// ended the command ([`RunRecords::signal`]).
    ended: Option<OwnedFd>,
    /// Why rung 1 was not used, when it was planned.
    fell_back: Option<String>,
    /// `--report`: print the applied layers before the command starts.
    print_report: bool,
}

/// The rung-2 supervisor (see the module docs). Returns its exit code: the command's, or
/// 125 when nothing ran.
fn supervisor_main(ctx: &mut SupervisorContext<'_>) -> Result<i32, HelperError> {
    process::block_supervisor_signals();
    let death = process::parent_death_signal();
    if sys::prctl(libc::PR_SET_PDEATHSIG, death as libc::c_ulong).is_err()
        || nix::unistd::getppid().as_raw() != ctx.helper
    {
        return Err(HelperError::ParentGone); // the helper is already gone: run nothing
    }
    // Its own process group, so a SIGKILL sent to the helper's group spares it.
    // SAFETY: setpgid has no memory-safety preconditions.
    if unsafe { libc::setpgid(0, 0) } != 0 {
        return Err(HelperError::setup(
            "setpgid",
            std::io::Error::last_os_error(),
        ));
    }
    sys::prctl(libc::PR_SET_CHILD_SUBREAPER, 1)
        .map_err(|e| HelperError::setup("becoming a subreaper", e))?;
    let helper_pgrp = ctx.helper_pgrp;
    let status = ctx.status.as_ref();
    let spawned = process::spawn(ctx.spec, || {
        let r = apply_in_command(ctx, helper_pgrp, status);
        if let (Err(why), Some(st)) = (&r, status) {
            send_status(st, &SetupStatus::NotRun(why.clone()));
        }
        r
    });
    // Only the command's process writes the report (or why nothing runs); the helper's
    // read ends once it execs or exits.
    drop(ctx.status.take());
    let child = match spawned {
        Ok(p) => p,
        Err(e) => {
            process::kill_descendants();
            return Err(e.into());
        }
    };
    // `None`: the helper died (SIGKILL included); nobody waits for the code any more.
    let code = process::supervise_while_parent(child, ctx.helper).unwrap_or(EXIT_SETUP);
    if let (Some(sig), Some(fd)) = (process::last_signal(), ctx.ended.take()) {
        sys::write_all(fd.as_raw_fd(), &[sig as u8]);
    }
    process::kill_descendants();
    Ok(code)
}

/// Rung 2, in the command's own process between fork and exec: back into the caller's
/// process group, die with the supervisor, confine, report, last per-command steps.
fn apply_in_command(
    ctx: &SupervisorContext<'_>,
    helper_pgrp: libc::pid_t,
    status: Option<&OwnedFd>,
) -> Result<(), String> {
    // Back into the caller's process group: the command stays in the terminal's
    // foreground group (job control, ^C) as if the supervisor were not there.
    // SAFETY: setpgid has no memory-safety preconditions.
    if unsafe { libc::setpgid(0, helper_pgrp) } != 0 {
        return Err(format!(
            "sandbox setup failed: joining the process group {helper_pgrp}: {}",
            std::io::Error::last_os_error()
        ));
    }
    // Dies with the supervisor (whose own death leaves the rest to the helper).
    sys::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong)
        .map_err(|e| format!("PR_SET_PDEATHSIG: {e}"))?;
    let mut applied = confine(
        ctx.profile,
        ctx.plan,
        None,
        Vec::new(),
        landlock_layer::stdio_grants(),
    )
    .map_err(|e| e.to_string())?;
    applied.push(Layer::Supervisor);
    applied.push(Layer::Environment);
    let report = AppliedReport {
        rung: Rung::LandlockOnly,
        layers: applied,
        notes: ctx.plan.notes.clone(),
        fell_back: ctx.fell_back.clone(),
        denials: None,
        git_config: Vec::new(),
        signal: None,
        cover_lost: None,
        helper_peak_rss_kib: None,
    };
    if ctx.print_report {
        print_report(&report);
    }
    // The status pipe is close-on-exec: the command never holds it.
    if let Some(st) = status {
        send_status(st, &SetupStatus::Applied(report));
    }
    before_exec()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Hints finding 4: the note named `.git and .cordon` in a submodule's git dir where
    /// only `.git` was made; it names what was made, per directory (sibling: only
    /// `.cordon`). Twin: both made, both named; the workspace's own are not said.
    #[test]
    fn marker_placeholder_note_names_only_what_was_made() {
        let ph = |p: &str| mounts::Placeholder {
            path: p.into(),
            dir: true,
        };
        let made = [
            ph("/w/.git/modules/libsub/.git"),
            ph("/w/.git/modules/libsub/hooks"),
            ph("/g/.cordon"),
            ph("/both/.git"),
            ph("/both/.cordon"),
            ph("/w/.git"),
            ph("/w/.cordon"),
        ];
        let got = marker_placeholders(&made, std::path::Path::new("/w"));
        let notes: Vec<String> = got
            .iter()
            .map(|(d, n)| marker_placeholder_note(d, n))
            .collect();
        assert_eq!(notes.len(), 3, "{notes:?}");
        assert!(
            notes[0].contains("made an empty .git directory in /w/.git/modules/libsub ")
                && notes[0].contains("it stays")
                && !notes[0].contains(".cordon"),
            "{}",
            notes[0]
        );
        assert!(
            notes[1].contains("made an empty .cordon directory in /g ")
                && !notes[1].contains(".git "),
            "{}",
            notes[1]
        );
        assert!(
            notes[2].contains("made empty .git and .cordon directories in /both ")
                && notes[2].contains("they stay"),
            "{}",
            notes[2]
        );
    }

    fn os(v: &[&str]) -> Vec<OsString> {
        v.iter().map(OsString::from).collect()
    }

    #[test]
    fn parses_arguments() {
        let a = parse_args(os(&["--permission-profile", "P", "--", "ls", "-l"])).unwrap();
        assert_eq!(a.payload, PayloadArg::Inline("P".into()));
        assert_eq!(a.argv, os(&["ls", "-l"]));
        assert!(!a.report);
        assert_eq!(a.report_fd, None);
        let a = parse_args(os(&["--report", "--permission-profile=Q", "--", "x", "--"])).unwrap();
        assert_eq!(a.payload, PayloadArg::Inline("Q".into()));
        assert_eq!(a.argv, os(&["x", "--"]));
        assert!(a.report);
        assert!(parse_args(os(&["--permission-profile", "P"])).is_err());
        assert!(parse_args(os(&["--permission-profile", "P", "--"])).is_err());
        assert!(parse_args(os(&["--", "ls"])).is_err());
        assert!(parse_args(os(&["--bogus", "--", "ls"])).is_err());
        let a = parse_args(os(&["--permission-profile", "env:CORDON_X", "--", "ls"])).unwrap();
        assert_eq!(a.payload, PayloadArg::Env("CORDON_X".into()));
        let a = parse_args(os(&["--permission-profile=env:Y", "--", "ls"])).unwrap();
        assert_eq!(a.payload, PayloadArg::Env("Y".into()));
        assert!(parse_args(os(&["--permission-profile", "env:", "--", "ls"])).is_err());
        assert!(parse_args(os(&["--permission-profile", "env:A=B", "--", "ls"])).is_err());
        let a = parse_args(os(&[
            "--permission-profile",
            "fd:5",
            "--report-fd",
            "7",
            "--",
            "x",
        ]))
        .unwrap();
        assert_eq!(a.payload, PayloadArg::Fd(5));
        assert_eq!(a.report_fd, Some(7));
        for bad in ["fd:1", "fd:x", "fd:"] {
            assert!(
                parse_args(os(&["--permission-profile", bad, "--", "x"])).is_err(),
                "{bad}"
            );
        }
        assert!(parse_args(os(&[
            "--permission-profile=P",
            "--report-fd",
            "2",
            "--",
            "x"
        ]))
        .is_err());
    }

    #[test]
    fn env_payload_is_taken_and_removed() {
        let name = "CORDON_TEST_TAKE_PAYLOAD";
        std::env::set_var(name, "PAYLOAD");
        assert_eq!(
            take_payload(PayloadArg::Env(name.into())).unwrap(),
            "PAYLOAD"
        );
        assert!(
            std::env::var_os(name).is_none(),
            "the variable must be removed"
        );
        let e = take_payload(PayloadArg::Env(name.into())).unwrap_err();
        assert!(e.contains(name), "{e}");
        assert_eq!(take_payload(PayloadArg::Inline("I".into())).unwrap(), "I");
    }
}
