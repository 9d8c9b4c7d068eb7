//! The Linux backend (R-T3, R-L1..R-L6): confinement with kernel interfaces only — user,
//! mount, pid, ipc and net namespaces, the new mount API, Landlock, seccomp, capabilities
//! — no external binary.
//!
//! - [`probe`] / [`probe_fast`] → [`LinuxFeatures`]: what this kernel offers.
//! - [`plan`] (pure) → [`LinuxPlan`] (which rung, which layers, in words) or a
//!   [`Refusal`] naming the unmet guarantee (R-S4).
//! - [`helper_main`]: the helper process, invoked as
//!   `<exe> __sandbox-helper --permission-profile env:CORDON_PERMISSION_PROFILE -- <argv…>`
//!   with the payload ([`HelperPayload::encode`](cordon_policy::HelperPayload::encode)) in
//!   that environment variable (see [`PAYLOAD_ENV`]); the inline form
//!   `--permission-profile <payload>` is still accepted.
//! - [`confine_current_process`]: apply-once self-confinement (R-L6).
//!
//! Exit codes of the helper: the command's code; 128+N when the command was killed by
//! signal N; 127 command not found; 126 not executable; 125 nothing ran (bad payload,
//! refusal, setup failure), always with a `cordon: …` line on stderr.

mod caps;
mod features;
mod helper;
mod landlock_layer;
mod loopback;
mod mounts;
mod plan;
mod process;
mod relay;
mod seccomp_filter;
mod sys;
mod unix_guard;

pub use features::{
    probe, probe_fast, valid_layer_names, LinuxFeatures, ALL_LAYERS, DISABLE_LAYERS_ENV,
    LAYER_NAMES,
};
pub use mounts::{layout, Base, Layout, Step, StepKind};
pub use plan::{
    carve_outs, plan, CarveOut, LandlockPlan, LinuxPlan, Refusal, Rung, SeccompPlan,
    LANDLOCK_ABI_NET, LANDLOCK_ABI_SCOPE, LANDLOCK_CRATE_MAX_ABI, MIN_LANDLOCK_ABI_FS,
};
pub use process::{EXIT_NOEXEC, EXIT_NOTFOUND, EXIT_SETUP};
pub use seccomp_filter::denied_syscalls;
pub use unix_guard::mechanism as unix_socket_mechanism;

use cordon_policy::ResolvedProfile;
use std::ffi::OsString;

/// `argv[1]` that makes a cordon binary act as the sandbox helper (R-T3). The CLI must
/// dispatch on it before any other parsing: `if argv[1] == HELPER_SUBCOMMAND {
/// exit(helper_main(argv[2..])) }`.
pub const HELPER_SUBCOMMAND: &str = "__sandbox-helper";

/// The environment variable that carries the payload to the helper
/// (`--permission-profile env:CORDON_PERMISSION_PROFILE`).
///
/// The payload holds the command's whole environment and the path layout. In argv it
/// would be readable by every local user (`/proc/<pid>/cmdline` is mode 0444); a process's
/// environment (`/proc/<pid>/environ`, mode 0400 and ptrace-checked) is readable only by
/// the same user. The helper removes the variable from its own environment before doing
/// anything else, and the command's environment is the payload's, so it never reaches the
/// command.
pub const PAYLOAD_ENV: &str = "CORDON_PERMISSION_PROFILE";

/// The prefix of a `--permission-profile` value that names an environment variable holding
/// the payload (`env:NAME`) instead of the payload itself.
pub const PAYLOAD_FROM_ENV_PREFIX: &str = "env:";

/// Runs the sandbox helper and returns its exit code (see the module docs for the
/// codes). `args` are the arguments after [`HELPER_SUBCOMMAND`]:
/// `--permission-profile env:<NAME> [--report] -- <argv…>` (the payload is read from the
/// environment variable NAME, normally [`PAYLOAD_ENV`], which is then removed) or
/// `--permission-profile <payload> …` (inline; visible to every local user in
/// `/proc/<pid>/cmdline`, kept for compatibility and tests). `--report` prints the applied
/// layers, as enforced, to stderr before the command starts.
///
/// Must be called from a single-threaded process (it forks and creates namespaces), early,
/// without having changed signal dispositions other than Rust's default `SIGPIPE` ignore.
/// Payload of another version or malformed → 125 with a message, the command never runs.
pub fn helper_main(args: Vec<OsString>) -> i32 {
    helper::main(args)
}

/// Errors of [`confine_current_process`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConfineError {
    /// The profile asks for something self-confinement cannot give on this host (R-S4).
    Refused(Refusal),
    /// The process has more than one thread: Landlock and seccomp would confine only the
    /// calling thread.
    MultiThreaded(usize),
    /// A layer failed to apply; the process may be partly confined and must not continue
    /// as if it were unconfined or fully confined.
    Failed(String),
}

impl std::fmt::Display for ConfineError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ConfineError::Refused(r) => write!(f, "refusing to run unconfined: {r}"),
            ConfineError::MultiThreaded(n) => write!(
                f,
                "refusing to confine: the process has {n} threads; self-confinement must \
                 happen before any thread is started"
            ),
            ConfineError::Failed(e) => write!(f, "self-confinement failed: {e}"),
        }
    }
}

impl std::error::Error for ConfineError {}

fn thread_count() -> usize {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("Threads:"))
                .and_then(|v| v.trim().parse().ok())
        })
        .unwrap_or(1)
}

/// Self-confinement (R-L6), "apply once, irreversible": confines the *calling process*
/// with the rung-2 layers (no_new_privs, capabilities dropped, Landlock, seccomp) —
/// namespaces cannot be entered by a running process without side effects on its parent's
/// view, so a profile with carve-outs (deny entries, protected paths) is refused, as is
/// anything else rung 2 cannot guarantee (see [`plan`]). Processes spawned afterwards
/// inherit the confinement; nothing kills them at exit (the caller owns its children).
///
/// Returns the applied layers as enforced by the kernel.
///
/// Errors: [`ConfineError`]; on `Failed` the process may be partly confined: the caller
/// must stop or report, never continue silently.
pub fn confine_current_process(
    profile: &ResolvedProfile,
    features: &LinuxFeatures,
) -> Result<Vec<String>, ConfineError> {
    let n = thread_count();
    if n > 1 {
        return Err(ConfineError::MultiThreaded(n));
    }
    let mut f = features.clone();
    f.user_namespaces = false;
    f.userns_reason =
        Some("self-confinement cannot move the running process into new namespaces".into());
    let p = plan(profile, &f).map_err(ConfineError::Refused)?;
    helper::confine(profile, &p, Vec::new(), Vec::new()).map_err(ConfineError::Failed)
}
