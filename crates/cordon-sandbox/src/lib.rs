//! # cordon-sandbox
//!
//! The sandbox manager: from a [`PermissionProfile`] and one command to an [`ExecRequest`]
//! that, when spawned, runs the command confined by what this host can really enforce.
//!
//! The flow mirrors SPEC §2–§3:
//! 1. [`SandboxManager::select`] asks R-S1 (does the profile need a sandbox?) and R-S2 (does
//!    this host family have a backend?) and keeps both answers (R-S3).
//! 2. [`SandboxManager::transform`] resolves the profile for the cwd, asks the backend to
//!    *prepare* (on Linux: probe the kernel and plan the layers), and returns an
//!    [`ExecRequest`] (R-T5) — or refuses with the missing guarantee named (R-S4).
//! 3. [`run`] spawns it, forwards signals and returns the child's status.
//!
//! Backends: [`linux`] (namespaces + Landlock + seccomp helper, R-T3/R-L*), [`seatbelt`]
//! (macOS SBPL text, R-T2). Backend `none` passes argv through unchanged (R-T1).
#![deny(missing_docs)]

pub mod denials;
#[cfg(unix)]
pub mod git_dir_sweep;
pub mod hostfs;
#[cfg(target_os = "linux")]
pub mod linux;
pub mod run;
pub mod seatbelt;

pub use hostfs::HostFs;

#[cfg(unix)]
pub use run::{exec_replace, ignore_sigpipe, restore_default_sigchld, restore_default_sigpipe};
pub use run::{run, run_reported, CordonExit, HelperReport, RunStatus};

use cordon_policy::env::scrub_env;
use cordon_policy::{
    resolve_for_command, select_initial, Backend, HelperPayload, OnUnavailable, Os,
    PermissionProfile, PlatformOptions, ProfileKind, ResolveContext, ResolveError, ResolvedProfile,
    SandboxPreference, SandboxStatus, Selection,
};
use serde::Serialize;
use std::path::{Path, PathBuf};
use thiserror::Error;

/// The current user's home directory from the user database (`getpwuid`), if any.
pub fn account_home() -> Option<PathBuf> {
    #[cfg(unix)]
    {
        // Asked several times per run; the user database is read once (each lookup parses
        // `/etc/passwd` through NSS: issue 12).
        static HOME: std::sync::OnceLock<Option<PathBuf>> = std::sync::OnceLock::new();
        HOME.get_or_init(|| {
            nix::unistd::User::from_uid(nix::unistd::getuid())
                .ok()
                .flatten()
                .map(|u| u.dir)
                .filter(|d| d.is_absolute())
        })
        .clone()
    }
    #[cfg(not(unix))]
    {
        None
    }
}

/// The layer cordon itself applies before any backend: `environment scrubbed: N secret
/// variable(s) dropped` (R-L4). Reports list it after the backend's layers.
pub fn scrubbed_note(dropped: usize) -> String {
    format!("environment scrubbed: {dropped} secret variable(s) dropped")
}

/// The file this program's code was loaded from: the helper to re-invoke (R-T3).
///
/// `std::env::current_exe()` (`/proc/self/exe`) names the *dynamic loader* when cordon is
/// started as `/lib64/ld-linux-x86-64.so.2 ./cordon …`; re-invoking that with
/// `__sandbox-helper` fails. On Linux the answer comes from `/proc/self/maps`: the file
/// mapped at the address of this very function. Elsewhere, or when that cannot be read,
/// `current_exe()`.
pub fn this_executable() -> Option<PathBuf> {
    #[cfg(target_os = "linux")]
    if let Some(p) = linux::mapped_file_of(this_executable as *const () as usize) {
        return Some(p);
    }
    std::env::current_exe().ok()
}

/// The variables [`CommandRequest::resolve_context`] reads by name (besides the location
/// and git configuration variables), and `XDG_STATE_HOME`, where cordon keeps its own
/// state, which every profile hides from the command.
const RESOLUTION_VARS: &[&str] = &["HOME", "TMPDIR", "PWD", "XDG_RUNTIME_DIR", "XDG_STATE_HOME"];

/// This process's environment as UTF-8 pairs, and the names (bad bytes escaped) of the
/// variables left out because their name or value is not UTF-8 — never a panic
/// (`std::env::vars()` panics on them: L2). The helper's own `CORDON_HELPER_PARENT` is
/// dropped without a word (cordon sets it for its helper alone).
pub fn process_env() -> (Vec<(String, String)>, Vec<String>) {
    let mut kept = Vec::new();
    let mut left_out = Vec::new();
    for (k, v) in std::env::vars_os() {
        match (k.into_string(), v.into_string()) {
            // cordon's word to its own helper, never the caller's to pass to a command
            // (check pass 170: a value the caller set reached the command).
            #[cfg(target_os = "linux")]
            (Ok(k), Ok(_)) if k == linux::HELPER_PARENT_ENV => {}
            (Ok(k), Ok(v)) => kept.push((k, v)),
            (Ok(k), Err(_)) => left_out.push(k),
            (Err(k), _) => left_out.push(cordon_policy::paths::escaped(k.as_encoded_bytes())),
        }
    }
    (kept, left_out)
}

/// Why a command cannot be run in `cwd`: it is not valid UTF-8, and neither the helper's
/// payload, an approval request nor the run's report (all JSON) can carry it. `None` for
/// a UTF-8 path.
pub fn cwd_not_utf8(cwd: &Path) -> Option<String> {
    cwd.to_str().is_none().then(|| {
        format!(
            "the working directory {} is not valid UTF-8, and cordon cannot encode it for \
             the sandbox helper or the run's report; rename it or run from another directory",
            cordon_policy::paths::escaped(cwd.as_os_str().as_encoded_bytes())
        )
    })
}

/// One command to run, with everything the manager needs to decide and wrap it.
#[derive(Debug, Clone, Serialize)]
pub struct CommandRequest {
    /// The user's argv; `argv[0]` is the program (looked up in `PATH` by the runner).
    pub argv: Vec<String>,
    /// Working directory (absolute).
    pub cwd: PathBuf,
    /// The caller's environment (scrubbed per R-L4 before it reaches the child).
    pub env: Vec<(String, String)>,
    /// The caller's variables left out of `env` because their name or value is not valid
    /// UTF-8 (names shown with the bad bytes escaped, e.g. `X` or `A\xffB`): the command
    /// does not get them, and a run is refused when resolution reads one
    /// ([`CommandRequest::unreadable_env`]).
    pub env_not_utf8: Vec<String>,
    /// The permission profile (already widened by any per-command overlay).
    pub profile: PermissionProfile,
    /// Sandbox preference (R-S1).
    pub preference: SandboxPreference,
    /// Whether a managed network is required (R-S1 step 1).
    pub managed_network_required: bool,
    /// Config/profile files in use (protected inside writable roots, R-P3).
    pub profile_files: Vec<PathBuf>,
    /// Run unconfined when the sandbox is needed but cannot be prepared (R-S4 opt-in).
    /// Also enabled by the profile's `on_unavailable = "run-unconfined"`.
    pub allow_unconfined: bool,
    /// The writable roots earlier sandboxed runs recorded
    /// ([`ResolveContext::earlier_roots`]); empty: none known.
    pub earlier_roots: Vec<PathBuf>,
    /// Their identities, and those of recorded roots no longer at their paths
    /// ([`ResolveContext::earlier_identities`]).
    pub earlier_identities: Vec<cordon_policy::paths::FileIdentity>,
}

impl CommandRequest {
    /// A request for `argv` in `cwd` with the current process environment, `Auto`
    /// preference, no managed network, fail-closed.
    pub fn new(argv: Vec<String>, cwd: PathBuf, profile: PermissionProfile) -> CommandRequest {
        let (env, env_not_utf8) = process_env();
        CommandRequest {
            argv,
            cwd,
            env,
            env_not_utf8,
            profile,
            preference: SandboxPreference::Auto,
            managed_network_required: false,
            profile_files: Vec::new(),
            allow_unconfined: false,
            earlier_roots: Vec::new(),
            earlier_identities: Vec::new(),
        }
    }

    /// Why this request cannot be resolved faithfully: a variable resolution reads (`HOME`,
    /// `TMPDIR`, `PWD`, `XDG_RUNTIME_DIR`, `XDG_STATE_HOME`, a tool's location variable, git's
    /// configuration variables) was left out as not UTF-8, so what it names could not be hidden or
    /// protected; or `HOME` is a relative path. `None` when every such variable was read.
    pub fn unreadable_env(&self) -> Option<String> {
        let read = |n: &str| {
            RESOLUTION_VARS.contains(&n)
                || cordon_policy::locations::is_location_var(n)
                || cordon_policy::locations::GIT_CONFIG_VARS.contains(&n)
                || cordon_policy::env::is_git_config_set_member(n)
        };
        let names: Vec<&str> = self
            .env_not_utf8
            .iter()
            .map(String::as_str)
            .filter(|n| read(n))
            .collect();
        let (s, are, them) = if names.len() > 1 {
            ("s", "are", "them")
        } else {
            ("", "is", "it")
        };
        if !names.is_empty() {
            return Some(format!(
                "the environment variable{s} {} {are} not valid UTF-8: cordon reads {them} to \
                 decide what to hide and protect and cannot encode {them}; set {them} to a \
                 UTF-8 path or unset {them}",
                names.join(", "),
            ));
        }
        // A relative HOME names a directory under the cwd: cordon's own layers were made
        // there, inside the writable workspace, and the credential stores hidden at the
        // wrong place (attack pass 181, F4: `HOME=rel` let the command write into
        // `rel/.cache/cordon/overlays`).
        self.env
            .iter()
            .find(|(n, v)| n == "HOME" && !v.is_empty() && !Path::new(v).is_absolute())
            .map(|(_, v)| {
                format!(
                    "the environment variable HOME is not an absolute path ({}): cordon reads \
                     it to decide what to hide and protect, and keeps its own layers under it; \
                     set it to an absolute path",
                    cordon_policy::text::printable(v)
                )
            })
    }

    /// The [`ResolveContext`] for this request (HOME, TMPDIR, the tools' location variables
    /// and git's configuration variables from its env).
    pub fn resolve_context(&self) -> ResolveContext {
        let get = |k: &str| {
            self.env
                .iter()
                .find(|(n, _)| n == k)
                .map(|(_, v)| PathBuf::from(v))
                .filter(|p| p.is_absolute())
        };
        ResolveContext {
            cwd: self.cwd.clone(),
            home: get("HOME"),
            tmpdir: get("TMPDIR"),
            profile_files: self.profile_files.clone(),
            // The typed cwd, so a symlink in the path cannot move the workspace.
            logical_cwd: get("PWD"),
            account_home: account_home(),
            runtime_dir: get("XDG_RUNTIME_DIR"),
            // Where the tools' own variables put credential stores, and git configuration
            // given through the environment (breaker4 MEDIUM-3, HIGH-3).
            env: cordon_policy::locations::context_env(
                self.env.iter().map(|(k, v)| (k.as_str(), v.as_str())),
            ),
            // The namespace sandbox's /tmp is the command's own (attack pass 47, N4).
            private_tmpdir: cfg!(target_os = "linux"),
            earlier_roots: self.earlier_roots.clone(),
            earlier_identities: self.earlier_identities.clone(),
        }
    }
}

/// The transform's result (R-T5): what to spawn, and what was applied. Never a string.
#[derive(Debug, Clone, Serialize)]
pub struct ExecRequest {
    /// Program to execute (the user's `argv[0]` for backend none; the helper otherwise).
    pub program: String,
    /// Arguments after the program.
    pub args: Vec<String>,
    /// Working directory for the spawned process. For backend none this is the caller's
    /// cwd exactly as given (R-T1: no local cwd is prepared).
    pub cwd: PathBuf,
    /// The full environment of the spawned process.
    pub env: Vec<(String, String)>,
    /// The backend that will confine the command.
    pub backend: Backend,
    /// What the backend *plans* to apply, one item per layer, in plain words (e.g.
    /// "landlock ABI 7 …"): the prediction. What the Linux helper really applied is its
    /// [`linux::AppliedReport`], returned by [`run::run_reported`].
    pub planned: Vec<String>,
    /// Names of environment variables dropped as secrets (values never recorded).
    pub env_dropped: Vec<String>,
    /// The status triple (R-S5).
    pub status: SandboxStatus,
    /// The R-S3 selection behind it.
    pub selection: Selection,
    /// The resolved profile (absent for backend none, which resolves nothing).
    pub resolved: Option<ResolvedProfile>,
    /// Set when the command runs unconfined although a sandbox was needed (the explicit
    /// opt-in of R-S4): the reason the sandbox could not be applied.
    pub unconfined_reason: Option<String>,
    /// The helper's payload (a sealed memfd, close-on-exec: `args` name it as
    /// `--permission-profile fd:N`, and [`ExecRequest::command`] passes it to the process
    /// it starts, and to no other). Kept open as long as the request lives; spawn the
    /// request from this process.
    #[cfg(unix)]
    #[serde(skip)]
    pub payload_fd: Option<std::sync::Arc<std::os::fd::OwnedFd>>,
    /// The payload `payload_fd` holds, as the object it was encoded from: a helper forked
    /// from this process ([`linux::forked`]) takes it as it is instead of decoding the
    /// descriptor's copy (issue 12: the decode was ~0.5 ms of every cold run). The same
    /// object, so what the helper enforces is what the caller resolved and reports.
    #[cfg(target_os = "linux")]
    #[serde(skip)]
    pub payload: Option<std::sync::Arc<HelperPayload>>,
}

impl ExecRequest {
    /// The process this request starts: `program` with `args`, in `cwd`, with exactly
    /// `env`, and the payload descriptor (if any) passed to it alone
    /// ([`linux::pass_descriptors`]). Spawn it from this process while the request lives.
    pub fn command(&self) -> std::process::Command {
        self.command_with(&self.args)
    }

    /// [`ExecRequest::command`] with other arguments (the caller inserted options into a
    /// copy of `args`, e.g. `--report-fd`).
    pub fn command_with<S: AsRef<std::ffi::OsStr>>(&self, args: &[S]) -> std::process::Command {
        let mut cmd = std::process::Command::new(&self.program);
        cmd.args(args)
            .current_dir(&self.cwd)
            .env_clear()
            .envs(self.env.iter().map(|(k, v)| (k, v)));
        #[cfg(target_os = "linux")]
        if let Some(fd) = &self.payload_fd {
            use std::os::fd::AsRawFd;
            linux::pass_descriptors(&mut cmd, &[fd.as_raw_fd()]);
            // The helper checks that its parent is still this process, by pid: one killed
            // before the helper set its parent-death signal has left it to a reaper.
            cmd.env(linux::HELPER_PARENT_ENV, std::process::id().to_string());
        }
        cmd
    }
}

/// The result of [`SandboxManager::assess`].
#[derive(Debug)]
pub struct Assessment {
    /// R-S3 selection.
    pub selection: Selection,
    /// The profile compiled for the request's cwd, or why it cannot be.
    pub resolved: Result<ResolvedProfile, ResolveError>,
    /// The layers the backend would apply, or what is missing (also when `resolved` failed).
    pub prepared: Result<Vec<String>, String>,
    /// The status triple (R-S5).
    pub status: SandboxStatus,
}

impl Assessment {
    /// This assessment with the refusal `why` a run would meet before the sandbox (cordon's
    /// own files in a place a sandboxed run could write, judged by the CLI), when there is
    /// one: `prepared` is that refusal and the status says the sandbox is not enabled, as
    /// `cordon run` would find (attack pass 181, F3: `status` said it was enforced while
    /// `run` refused). `None`: unchanged.
    pub fn refused_by(mut self, why: Option<String>) -> Assessment {
        if let Some(why) = why {
            self.status = SandboxStatus::new(&self.selection, Err(why.clone()), true);
            self.prepared = Err(why);
        }
        self
    }
}

/// What a run's `cover_lost` says when cordon could not look at a cover after the command
/// (a directory on its way became unsearchable, or the check itself failed), rather than
/// saw it replaced: the outcome's hint tells the two apart by it.
pub const COVER_NOT_CHECKED: &str = "could not be checked";

/// The command-line advice at the end of [`TransformError::Refused`]: a flag only the
/// user starting cordon can pass (`cordon mcp` says it in its own terms).
pub const ALLOW_UNCONFINED_ADVICE: &str =
    " (pass --allow-unconfined to run without a sandbox anyway)";

/// Why a command cannot be transformed.
#[derive(Debug, Error)]
pub enum TransformError {
    /// Empty argv.
    #[error("no command given")]
    EmptyCommand,
    /// The profile could not be resolved for the cwd.
    #[error(transparent)]
    Resolve(#[from] ResolveError),
    /// R-S4: confinement is needed and this host cannot give it. The message names what is
    /// missing and offers `--allow-unconfined`, the only other way to run here.
    #[error("refusing to run unconfined: {reason}{advice}", advice = ALLOW_UNCONFINED_ADVICE)]
    Refused {
        /// What is missing, in plain words.
        reason: String,
        /// The status triple at the time of refusal.
        status: Box<SandboxStatus>,
    },
    /// The sandbox could confine the command, but a path on the host is in a state its cover
    /// cannot reach (a protected or hidden file with a second hard link, a protected path
    /// whose placeholder cannot be made). Fixing that path is the way forward: running
    /// without a sandbox would drop every guarantee instead of the one at stake, so neither
    /// `--allow-unconfined` nor `on_unavailable = "run-unconfined"` overrides it, and the
    /// message does not offer it.
    #[error("refusing to run: {reason}")]
    HostState {
        /// What is wrong, with which path, and how to fix it.
        reason: String,
        /// The status triple at the time of refusal.
        status: Box<SandboxStatus>,
    },
    /// A usage error that no opt-in can override (e.g. an unknown layer name).
    #[error("{0}")]
    Usage(String),
    /// The helper executable is missing (R-T3: no downgrade).
    #[error(
        "sandbox helper {0:?} not found or not executable; reinstall cordon or set the helper path"
    )]
    HelperMissing(PathBuf),
}

/// Why [`SandboxManager::prepare_checked`] cannot prepare a backend.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unprepared {
    /// The backend cannot give a guarantee of the profile on this host (a missing kernel
    /// feature, no backend): only running unconfined could run the command here (R-S4).
    Unavailable(String),
    /// The backend could, but a host path is in a state it refuses to cover (a covered file
    /// with a second hard link, a placeholder that cannot be made). The message names the
    /// path and what to do; fixing it lets the run go ahead.
    HostState(String),
}

impl Unprepared {
    /// The message, in plain words.
    pub fn into_message(self) -> String {
        match self {
            Unprepared::Unavailable(m) | Unprepared::HostState(m) => m,
        }
    }
}

/// The sandbox manager: host facts plus the helper location. Cheap to clone; create once.
#[derive(Debug, Clone)]
pub struct SandboxManager {
    /// The host OS family.
    pub os: Os,
    /// Platform options (R-S2).
    pub options: PlatformOptions,
    /// The executable re-invoked as the Linux helper (default: the current executable).
    pub helper_exe: Option<PathBuf>,
    /// Linux kernel features, probed once.
    #[cfg(target_os = "linux")]
    pub features: linux::LinuxFeatures,
}

impl SandboxManager {
    /// A manager for this host: probes the kernel (Linux) once. The helper defaults to
    /// the current executable, which must dispatch [`linux::HELPER_SUBCOMMAND`] to
    /// [`linux::helper_main`] (the `cordon` CLI does).
    ///
    /// Uses the fast probe (no process is created; user-namespace support is read from
    /// sysctls). The helper learns the real answer from its own `clone` and refuses (or
    /// falls back to a rung that still gives every guarantee) if it differs. Use
    /// [`SandboxManager::for_host_thorough`] where an accurate report matters more than
    /// start-up time (`cordon status`).
    pub fn for_host() -> SandboxManager {
        SandboxManager {
            os: Os::current(),
            options: PlatformOptions::default(),
            helper_exe: this_executable(),
            #[cfg(target_os = "linux")]
            features: linux::probe_fast(),
        }
    }

    /// Like [`SandboxManager::for_host`], but probes user namespaces by really creating one
    /// in a short-lived child process.
    pub fn for_host_thorough() -> SandboxManager {
        SandboxManager {
            os: Os::current(),
            options: PlatformOptions::default(),
            helper_exe: this_executable(),
            #[cfg(target_os = "linux")]
            features: linux::probe(),
        }
    }

    /// Sets the helper executable (e.g. the `cordon-sandbox-helper` binary).
    pub fn with_helper(mut self, exe: PathBuf) -> SandboxManager {
        self.helper_exe = Some(exe);
        self
    }

    /// R-S3 for `req` on this host.
    pub fn select(&self, req: &CommandRequest) -> Selection {
        select_initial(
            &req.profile,
            req.preference,
            req.managed_network_required,
            self.os,
            self.options,
        )
    }

    /// Asks the selected backend whether it can give every guarantee of `resolved` here.
    /// `Ok(applied layers)` or `Err(what is missing)`; [`SandboxManager::prepare_checked`]
    /// says which kind of problem it is.
    pub fn prepare(
        &self,
        backend: Backend,
        resolved: &ResolvedProfile,
    ) -> Result<Vec<String>, String> {
        self.prepare_checked(backend, resolved)
            .map_err(Unprepared::into_message)
    }

    /// [`SandboxManager::prepare`], telling a backend that cannot confine on this host
    /// ([`Unprepared::Unavailable`]) from a host path it refuses to cover as it is
    /// ([`Unprepared::HostState`]).
    pub fn prepare_checked(
        &self,
        backend: Backend,
        resolved: &ResolvedProfile,
    ) -> Result<Vec<String>, Unprepared> {
        match backend {
            Backend::None => Ok(Vec::new()),
            #[cfg(target_os = "linux")]
            Backend::LinuxHelper => {
                let plan = linux::plan(resolved, &self.features)
                    .map_err(|r| Unprepared::Unavailable(r.to_string()))?;
                // The placeholders the helper will make for missing protected paths, and the
                // covered files' hard links: refused here, as the helper would refuse (one
                // verdict for dry-run and run).
                let layout = linux::layout_for(resolved);
                if plan.rung == linux::Rung::Namespaces {
                    linux::check_placeholders(&layout, plan.denial_records)
                        .map_err(Unprepared::HostState)?;
                }
                // A missing grant that would be a new top-level directory: refused here as
                // the creation refuses it (every rung creates them).
                linux::check_missing_grants(&layout).map_err(Unprepared::HostState)?;
                // The plan's notes too (what the host cannot give, a layer switched off):
                // `--dry-run` says what a run would say (attack pass 49, N3).
                let mut lines = plan.planned_lines();
                lines.extend(plan.notes.iter().map(|n| format!("note: {n}")));
                Ok(lines)
            }
            // The policy is applied once to a trial command and a deny probe (R-S4).
            Backend::Seatbelt if self.os == Os::Macos => {
                seatbelt::prepare(resolved).map_err(Unprepared::Unavailable)
            }
            other => {
                let _ = resolved;
                Err(Unprepared::Unavailable(format!(
                    "the {other} backend is not implemented on this build"
                )))
            }
        }
    }

    /// What `environment_context` (R-M1) is rendered from, for `req`: the resolved profile
    /// the transform compiles (taken from the transform when it resolved one, else
    /// resolved the same way), the status triple, and the backend (`None` when the
    /// transform refused). One place for the CLI's `cordon context` and the harness.
    ///
    /// Errors: the transform failed for another reason than a refusal, or the profile
    /// cannot be resolved for `req`'s cwd (the message says why).
    pub fn context_parts(
        &self,
        req: &CommandRequest,
    ) -> Result<(ResolvedProfile, SandboxStatus, Backend), String> {
        let resolve = || {
            resolve_for_command(&req.profile, &req.resolve_context(), &HostFs)
                .map_err(|e| e.to_string())
        };
        match self.transform(req) {
            Ok(exec) => {
                let mut resolved = match exec.resolved {
                    Some(r) => r,
                    None => resolve()?,
                };
                // What the backend will not do on this host is said to the model too.
                resolved.notes.extend(
                    exec.planned
                        .iter()
                        .filter_map(|l| l.strip_prefix("note: "))
                        .filter(|n| n.contains(cordon_policy::context::HARD_LINKS_UNCHECKED))
                        .map(str::to_string),
                );
                Ok((resolved, exec.status, exec.backend))
            }
            Err(
                TransformError::Refused { status, .. } | TransformError::HostState { status, .. },
            ) => Ok((resolve()?, *status, Backend::None)),
            Err(e) => Err(e.to_string()),
        }
    }

    /// What the sandbox would be for `req` without building a command: the R-S3
    /// selection, the resolved profile (or why it cannot be compiled here), the layers the
    /// backend would apply (or what is missing), and the status triple (R-S5). Used by
    /// `cordon status` and `cordon explain`; [`SandboxManager::transform`] is the path that
    /// runs commands.
    pub fn assess(&self, req: &CommandRequest) -> Assessment {
        let selection = self.select(req);
        let resolved = resolve_for_command(&req.profile, &req.resolve_context(), &HostFs);
        // What `transform` refuses for it, `cordon status` and `explain` say too (attack
        // pass 179, F5: with a non-UTF-8 HOME they said "enabled" while every run was
        // refused).
        let prepared = match (&resolved, req.unreadable_env()) {
            (_, Some(why)) => Err(why),
            (Err(e), None) => Err(e.to_string()),
            (Ok(r), None) if selection.requested.value && selection.available.value => {
                self.prepare(selection.backend, r)
            }
            (Ok(_), None) => Ok(Vec::new()),
        };
        let status = SandboxStatus::new(&selection, prepared.clone().map(|_| ()), true);
        Assessment {
            selection,
            resolved,
            prepared,
            status,
        }
    }

    /// R-T1/R-T3/R-T5: compile `req` into an [`ExecRequest`].
    ///
    /// Errors: [`TransformError::Refused`] when a needed sandbox cannot be prepared and the
    /// caller did not opt in to running unconfined (R-S4); [`TransformError::HostState`]
    /// when a host path must be fixed first (no opt-in overrides it); [`TransformError::HelperMissing`]
    /// when the Linux helper is missing; resolution errors.
    pub fn transform(&self, req: &CommandRequest) -> Result<ExecRequest, TransformError> {
        if req.argv.first().is_none_or(|p| p.is_empty()) {
            return Err(TransformError::EmptyCommand);
        }
        // A misspelt CORDON_DISABLE_LAYERS is a usage error, not an unavailable layer:
        // `--allow-unconfined` must not turn a typo into an unconfined run.
        #[cfg(target_os = "linux")]
        if !self.features.unknown_layers.is_empty() {
            return Err(TransformError::Usage(format!(
                "unknown layer name(s) in {}: {}; valid names: {}, all",
                linux::DISABLE_LAYERS_ENV,
                self.features.unknown_layers.join(", "),
                linux::LAYER_NAMES.join(", ")
            )));
        }
        // The run is reported in JSON, which cannot carry a non-UTF-8 path: refused and
        // named, on every backend (L2: the payload's serialisation panicked).
        if let Some(why) = cwd_not_utf8(&req.cwd) {
            return Err(TransformError::Usage(why));
        }
        let selection = self.select(req);
        let scrub = req.profile.kind != ProfileKind::Disabled;
        let (env, env_dropped) = if scrub {
            let s = scrub_env(&req.profile.env, req.env.iter().cloned());
            // `_` is what the invoking shell last ran: cordon itself, whose path says
            // nothing true about the command (a shell in the sandbox sets its own).
            let kept = s.kept.into_iter().filter(|(k, _)| k != "_").collect();
            (kept, s.dropped)
        } else {
            (req.env.clone(), Vec::new())
        };
        let allow_unconfined =
            req.allow_unconfined || req.profile.on_unavailable == OnUnavailable::RunUnconfined;

        let passthrough = |status: SandboxStatus, reason: Option<String>, resolved| {
            let mut applied = Vec::new();
            if scrub {
                applied.push(scrubbed_note(env_dropped.len()));
            }
            ExecRequest {
                program: req.argv[0].clone(),
                args: req.argv[1..].to_vec(),
                cwd: req.cwd.clone(),
                env: env.clone(),
                backend: Backend::None,
                planned: applied,
                env_dropped: env_dropped.clone(),
                status,
                selection: selection.clone(),
                resolved,
                unconfined_reason: reason,
                #[cfg(unix)]
                payload_fd: None,
                #[cfg(target_os = "linux")]
                payload: None,
            }
        };

        if !selection.requested.value {
            let status = SandboxStatus::new(&selection, Ok(()), true);
            return Ok(passthrough(status, None, None));
        }
        if selection.backend == Backend::None {
            // Needed, but this host family has no backend (R-S3 fold).
            let status = SandboxStatus::new(&selection, Ok(()), true);
            let reason = selection.available.reason.clone();
            if allow_unconfined {
                return Ok(passthrough(status, Some(reason), None));
            }
            return Err(TransformError::Refused {
                reason,
                status: Box::new(status),
            });
        }

        // A variable resolution reads that could not be read: what it names would be
        // neither hidden nor protected. No opt-in overrides it (L2: fail closed).
        if let Some(why) = req.unreadable_env() {
            return Err(TransformError::Usage(why));
        }
        let resolved = resolve_for_command(&req.profile, &req.resolve_context(), &HostFs)?;
        // Neither the helper's payload nor the run's report can carry a path that is not
        // UTF-8 (a nested repository a command named `$'\xff'`): refused and named, on
        // every backend, before anything runs.
        if let Some(p) = resolved.non_utf8_path() {
            return Err(TransformError::Usage(
                cordon_policy::PayloadError::NotUtf8(cordon_policy::paths::escaped(
                    p.as_os_str().as_encoded_bytes(),
                ))
                .to_string(),
            ));
        }
        // A `$TMPDIR` the guard refused is not writable: point the command at /tmp.
        let env: Vec<(String, String)> = match &resolved.tmpdir_refused {
            Some(_) => env
                .iter()
                .cloned()
                .map(|(k, v)| {
                    if k == "TMPDIR" {
                        (k, "/tmp".into())
                    } else {
                        (k, v)
                    }
                })
                .collect(),
            None => env.clone(),
        };
        let prepared = self.prepare_checked(selection.backend, &resolved);
        let status = SandboxStatus::new(
            &selection,
            prepared
                .clone()
                .map(|_| ())
                .map_err(Unprepared::into_message),
            true,
        );
        let layers = match prepared {
            Ok(l) => l,
            // A path to fix, not a missing sandbox: no opt-in turns it into an unconfined run.
            Err(Unprepared::HostState(reason)) => {
                return Err(TransformError::HostState {
                    reason,
                    status: Box::new(status),
                });
            }
            Err(Unprepared::Unavailable(missing)) => {
                if allow_unconfined {
                    return Ok(passthrough(status, Some(missing), Some(resolved)));
                }
                return Err(TransformError::Refused {
                    reason: missing,
                    status: Box::new(status),
                });
            }
        };
        let mut applied = layers;
        applied.push(scrubbed_note(env_dropped.len()));

        #[cfg(unix)]
        #[allow(unused_mut)]
        let mut payload_fd = None;
        #[cfg(target_os = "linux")]
        let mut payload_object = None;
        let (program, args, env) = match selection.backend {
            #[cfg(target_os = "linux")]
            Backend::LinuxHelper => {
                let exe = self
                    .helper_exe
                    .clone()
                    .ok_or_else(|| TransformError::HelperMissing(PathBuf::from("<current exe>")))?;
                if !exe.is_file() {
                    return Err(TransformError::HelperMissing(exe));
                }
                // The payload (the command's whole environment and the path layout) goes
                // in a sealed memfd the helper inherits (`--permission-profile fd:N`):
                // not in argv, which every local user can read in /proc/<pid>/cmdline,
                // and not in one environment variable, capped at 128 KiB by the kernel.
                // The old variable name is reserved: a copy in the caller's environment
                // reaches neither the helper nor the command.
                let child_env: Vec<(String, String)> = env
                    .into_iter()
                    .filter(|(k, _)| k != linux::PAYLOAD_ENV)
                    .collect();
                let object = HelperPayload::new(resolved.clone(), child_env.clone());
                let payload = object
                    .encode_json()
                    .map_err(|e| TransformError::Usage(e.to_string()))?;
                payload_object = Some(std::sync::Arc::new(object));
                let fd = linux::payload_descriptor(&payload).map_err(|e| {
                    TransformError::Usage(format!(
                        "cannot hand the payload to the sandbox helper (memfd_create: {e})"
                    ))
                })?;
                use std::os::fd::AsRawFd;
                let mut args = vec![
                    linux::HELPER_SUBCOMMAND.to_string(),
                    "--permission-profile".to_string(),
                    format!("{}{}", linux::PAYLOAD_FROM_FD_PREFIX, fd.as_raw_fd()),
                    "--".to_string(),
                ];
                args.extend(req.argv.iter().cloned());
                payload_fd = Some(std::sync::Arc::new(fd));
                (exe.to_string_lossy().into_owned(), args, child_env)
            }
            Backend::Seatbelt => {
                let (program, args) = seatbelt::wrap(&resolved, &req.argv);
                (program, args, env)
            }
            other => {
                return Err(TransformError::Refused {
                    reason: format!("the {other} backend is not implemented on this build"),
                    status: Box::new(status),
                })
            }
        };
        Ok(ExecRequest {
            program,
            args,
            cwd: resolved.cwd.clone(),
            env,
            backend: selection.backend,
            planned: applied,
            env_dropped,
            status,
            selection,
            resolved: Some(resolved),
            unconfined_reason: None,
            #[cfg(unix)]
            payload_fd,
            #[cfg(target_os = "linux")]
            payload: payload_object,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(profile: &str) -> CommandRequest {
        // A directory of its own under the temp dir: the temp dir itself is never a
        // workspace.
        let ws = std::env::temp_dir().join("cordon-lib-tests");
        let _ = std::fs::create_dir_all(&ws);
        let mut r = CommandRequest::new(
            vec!["git".into(), "status".into()],
            ws,
            PermissionProfile::builtin(profile).unwrap(),
        );
        r.env = vec![
            ("PATH".into(), "/usr/bin:/bin".into()),
            ("GITHUB_TOKEN".into(), "s3cret".into()),
            ("HOME".into(), "/nonexistent-home".into()),
        ];
        r
    }

    /// R-T1: backend none passes argv through unchanged and prepares no cwd.
    #[test]
    fn none_backend_passes_argv_unchanged() {
        let m = SandboxManager::for_host();
        let mut r = req("danger-full-access");
        r.cwd = PathBuf::from("/some/other/host/path/that/does/not/exist");
        let e = m.transform(&r).unwrap();
        assert_eq!(e.backend, Backend::None);
        assert_eq!(e.program, "git");
        assert_eq!(e.args, vec!["status"]);
        assert_eq!(e.cwd, r.cwd);
        assert!(e.resolved.is_none());
        assert!(!e.status.sandbox_requested.value);
    }

    /// R-S3/R-S4: needed but the host family has no backend → refused, fold recorded.
    #[test]
    fn needed_but_unavailable_is_refused_with_reason() {
        let mut m = SandboxManager::for_host();
        m.os = Os::Windows;
        let e = m.transform(&req("workspace-write")).unwrap_err();
        match e {
            TransformError::Refused { reason, status } => {
                assert!(reason.contains("Windows"), "{reason}");
                assert!(status.sandbox_requested.value);
                assert!(!status.sandbox_available.value);
                assert!(!status.sandbox_enabled.value);
            }
            other => panic!("{other}"),
        }
        // Explicit opt-in runs unconfined, and says so.
        let mut r = req("workspace-write");
        r.allow_unconfined = true;
        let e = m.transform(&r).unwrap();
        assert_eq!(e.backend, Backend::None);
        assert!(e.unconfined_reason.is_some());
        assert!(!e.status.sandbox_enabled.value);
        // Secrets are still scrubbed for a managed profile.
        assert!(e.env.iter().all(|(k, _)| k != "GITHUB_TOKEN"));
        assert_eq!(e.env_dropped, vec!["GITHUB_TOKEN".to_string()]);
    }

    /// The invoking shell's `_` (cordon's own path) does not reach the command; with
    /// scrubbing off (a disabled profile) the environment is passed as given.
    #[test]
    fn the_invoking_shells_underscore_is_not_passed_on() {
        let mut m = SandboxManager::for_host();
        m.os = Os::Windows;
        let mut r = req("workspace-write");
        r.allow_unconfined = true;
        r.env.push(("_".into(), "/usr/local/bin/cordon".into()));
        let e = m.transform(&r).unwrap();
        assert!(e.env.iter().all(|(k, _)| k != "_"), "{:?}", e.env);
        assert!(e.env.iter().any(|(k, _)| k == "PATH"));
        assert!(e.env_dropped.iter().all(|k| k != "_"));
        let mut r = req("danger-full-access");
        r.env.push(("_".into(), "/usr/local/bin/cordon".into()));
        let e = m.transform(&r).unwrap();
        assert!(e.env.iter().any(|(k, _)| k == "_"));
    }

    /// R-T3: helper missing → error, no downgrade.
    #[cfg(target_os = "linux")]
    #[test]
    fn missing_helper_is_an_error_not_a_downgrade() {
        let m = SandboxManager::for_host().with_helper(PathBuf::from("/nonexistent/cordon-helper"));
        if m.prepare(
            Backend::LinuxHelper,
            &resolve_for_command(
                &req("workspace-write").profile,
                &req("workspace-write").resolve_context(),
                &HostFs,
            )
            .unwrap(),
        )
        .is_err()
        {
            // Host cannot sandbox at all; the refusal path is covered elsewhere.
            return;
        }
        match m.transform(&req("workspace-write")) {
            Err(TransformError::HelperMissing(p)) => {
                assert_eq!(p, PathBuf::from("/nonexistent/cordon-helper"))
            }
            other => panic!("{other:?}"),
        }
    }
}
