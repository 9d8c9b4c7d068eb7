//! One entry for everyone (R-E1, R-E2): [`TrustProfile::build`] turns (entry point, cwd,
//! config layers) into the runnable trust profile — the effective permission profile, the
//! per-command additional permissions, the config and profile files to protect, and the
//! exec-policy rules. `run`, `check`, `explain`, `context` and later servers all use it.
//!
//! A worker or worktree gets its own profile for its own cwd with [`TrustProfile::child`]:
//! it clones the parent's layers and builds anew; the parent is never mutated.

use cordon_execpolicy::Policy;
use cordon_policy::{
    effective_profile, select_profile, Access, AdditionalPermissions, Config, FilesystemPolicy,
    FsEntry, NetworkPolicy, PermissionProfile, ProfileKind,
};
use cordon_sandbox::{CommandRequest, HostFs};
use serde::{Deserialize, Serialize};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use thiserror::Error;

/// Which entry point builds the profile (recorded; every entry gets the same checks).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Entry {
    /// A CLI subcommand (`run`, `check`, `explain`, `context`, `status`, `profiles`).
    Cli(String),
    /// A background worker.
    Worker,
    /// A linked worktree.
    Worktree,
    /// A sub-agent.
    SubAgent,
    /// A server (exec / MCP).
    Server,
}

/// The configuration layers: what the user chose, as spelt (relative paths are read
/// against the cwd of the profile being built, so a child re-reads them for its own cwd).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Layers {
    /// Profile name (`--profile`), else the config's default, else `workspace-write`.
    pub profile: Option<String>,
    /// Config file (`--config`), else the user config if it exists.
    pub config: Option<PathBuf>,
    /// Extra writable paths (`-w`).
    pub writable: Vec<PathBuf>,
    /// `--allow-network`.
    pub allow_network: bool,
    /// `--with` JSON.
    pub with: Option<String>,
    /// `--deny-read` paths.
    pub deny_read: Vec<PathBuf>,
    /// `--network on|off|managed`: `Enabled` (on: an additional permission, R-O1),
    /// `Restricted` (off), `Managed` (out only through the filtering proxy with the
    /// profile's `network.allow`/`deny`/`ports`, issue 10 §4); `None` = the profile's mode.
    pub network: Option<NetworkPolicy>,
    /// `--local-port ADDR:PORT`: host loopback ports forwarded into the sandbox, appended
    /// to the profile's `network.local` (issue 10 §6).
    pub local_ports: Vec<String>,
    /// Extra exec-policy rule files (`--rules`).
    pub rule_files: Vec<PathBuf>,
    /// Plan mode: the profile's read-only view (R-A10).
    pub plan: bool,
    /// Files this run's cordon itself writes or reads its answers from (`--report`,
    /// `--approvals-from`): protected like its config, so that no widening — an approved
    /// retry included, which rebuilds from these layers — lets the command forge its report
    /// or answer its own questions (new-user pass nu23, Q1).
    pub sink_files: Vec<PathBuf>,
}

impl Layers {
    /// The `cordon explain` command that explains the profile these layers choose: with
    /// `--config FILE` and `--profile NAME` as given (shell words), so a suggestion made
    /// after a run or in a note is about the profile the command ran with.
    pub fn explain_command(&self) -> String {
        let mut cmd = String::from("cordon explain");
        if let Some(c) = &self.config {
            cmd.push_str(" --config ");
            cmd.push_str(&cordon_execpolicy::shell_word(&c.to_string_lossy()));
        }
        if let Some(p) = &self.profile {
            cmd.push_str(" --profile ");
            cmd.push_str(&cordon_execpolicy::shell_word(p));
        }
        cmd
    }
}

/// Errors building a trust profile (they say what to do).
#[derive(Debug, Error)]
pub enum TrustError {
    /// The config could not be loaded or the profile does not exist.
    #[error(transparent)]
    Config(#[from] cordon_policy::ConfigError),
    /// Exec-policy rules failed to load (e.g. an example that does not match).
    #[error(transparent)]
    Rules(#[from] cordon_execpolicy::LoadError),
    /// A rules file cannot be read.
    #[error("cannot read rules file {path}: {source}")]
    RulesFile {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// A usage error (flags that cannot apply to the chosen profile).
    #[error("{0}")]
    Usage(String),
    /// The additional permissions could not be merged.
    #[error(transparent)]
    Merge(#[from] cordon_policy::ResolveError),
}

/// The runnable trust profile for one entry point and cwd.
#[derive(Debug, Clone)]
pub struct TrustProfile {
    /// Who built it.
    pub entry: Entry,
    /// The cwd it was built for (absolute).
    pub cwd: PathBuf,
    /// `cwd` canonical (as spelled when it cannot be resolved), read once when built.
    pub real_cwd: PathBuf,
    /// The workspace of `real_cwd` ([`cordon_policy::find_workspace`]), found once when
    /// built: the one answer every check of this profile asks for that cwd.
    pub workspace: PathBuf,
    /// The layers it was built from (a child rebuilds from these).
    pub layers: Layers,
    /// The effective profile: base narrowed by `--deny-read`/`--network off`, widened by
    /// `additional` (R-O1), read-only in plan mode.
    pub profile: PermissionProfile,
    /// The per-command additional permissions, if any.
    pub additional: Option<AdditionalPermissions>,
    /// The loaded config, if any.
    pub config: Option<Config>,
    /// Config/profile/rules files and the session directory (protected inside writable
    /// roots, R-P3).
    pub files: Vec<PathBuf>,
    /// The exec-policy rules: config rules, the user's rules file, then `--rules` files.
    pub rules: Policy,
}

/// `$XDG_CONFIG_HOME/cordon/config.toml` or `~/.config/cordon/config.toml`.
pub fn user_config_path() -> Option<PathBuf> {
    user_config_dir().map(|d| d.join("config.toml"))
}

/// `$XDG_CONFIG_HOME/cordon/rules.toml` or `~/.config/cordon/rules.toml`: where "remember
/// as rule" answers are appended (loaded automatically).
pub fn user_rules_path() -> Option<PathBuf> {
    user_config_dir().map(|d| d.join("rules.toml"))
}

/// `$XDG_CONFIG_HOME/cordon`, else `$HOME/.config/cordon`. A relative `$XDG_CONFIG_HOME`
/// is ignored, as the XDG base directory spec says (it named a config inside the workspace
/// that was then never protected: breaker, stop 18); a relative `$HOME` gives none.
fn user_config_dir() -> Option<PathBuf> {
    if let Some(x) = std::env::var_os("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .filter(|x| x.is_absolute())
    {
        return Some(x.join("cordon"));
    }
    std::env::var_os("HOME")
        .map(PathBuf::from)
        .filter(|h| h.is_absolute())
        .map(|h| h.join(".config/cordon"))
}

/// The project a file that decides later runs lies in, if any (breaker, stop 19): the
/// workspace, or the nearest directory above `real` (canonical) that holds a `.git` or a
/// non-empty `.cordon`, up to the home (exclusive) — places sandboxed runs may write.
///
/// Also a writable root of an earlier run that did not keep `real` read-only
/// ([`crate::writable_history::unprotected_writer`]): an unmarked directory is a
/// workspace too, and a `-w` grant is writable (attack pass 156, H1).
pub fn project_holding(real: &Path, workspace: &Path) -> Option<PathBuf> {
    if real.starts_with(workspace) {
        return Some(workspace.to_path_buf());
    }
    marked_ancestor(real).or_else(|| crate::writable_history::unprotected_writer(real))
}

/// How a message names `place` from [`project_holding`]: "the project X" for the
/// workspace or a directory with a marker, else "X, a directory (or a file) an earlier
/// sandboxed run could write (recorded by cordon)" — a recorded writable root is no project (new-user
/// pass 182 #3: a `-w` directory without `.git` or `.cordon` was called "the project").
pub fn place_phrase(place: &Path, workspace: &Path) -> String {
    if place == workspace || cordon_policy::has_marker(&HostFs, place) {
        format!("the project {}", place.display())
    } else {
        // A `-w FILE` grant is recorded as the file (attack pass 233: "X, a directory" for
        // a file); looked at without following a link.
        let what = if std::fs::symlink_metadata(place).is_ok_and(|m| !m.is_dir()) {
            "a file"
        } else {
            "a directory"
        };
        format!(
            "{}, {what} an earlier sandboxed run could write (cordon recorded it as \
             writable)",
            place.display()
        )
    }
}

/// `real` itself (a directory that is a project: attack pass 156, M1) or the nearest
/// directory above it (canonical) that holds a workspace marker, up to the home
/// (exclusive): a project some run may write.
fn marked_ancestor(real: &Path) -> Option<PathBuf> {
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .and_then(|h| std::fs::canonicalize(h).ok());
    real.ancestors()
        .take_while(|a| a.parent().is_some() && Some(*a) != home.as_deref())
        .find(|a| cordon_policy::has_marker(&HostFs, a))
        .map(Path::to_path_buf)
}

/// Refuses (the message says why and what to do) cordon's own directories when an
/// environment variable puts them inside a project (`workspace` when given, or any
/// directory holding
/// a `.git` or a non-empty `.cordon`, up to the home): `$XDG_CONFIG_HOME/cordon` (the
/// configuration, the rules and the remembered hosts, which decide what later runs may do)
/// and `$XDG_STATE_HOME/cordon` (sessions, and the sweep records the next run carries out
/// on the host). Such a directory is protected only in the runs whose environment names
/// it: a run in that project without the variable can write it, and the next run that has
/// the variable would take what it wrote (attack pass 154: a planted `config.toml` made the
/// next run unconfined; a forged sweep record made it unlink and rename host files outside
/// every workspace). The default places (under the home) are protected in every run, so
/// only a variable that names another place is judged. Judged by place, not content.
///
/// Errors: the refusal, as one line for the user.
pub fn own_dirs_refusal(workspace: Option<&Path>) -> Result<(), String> {
    own_dirs_judged(workspace)?;
    // Passed with a workspace, which refuses whatever the judgement without one does.
    if workspace.is_some() {
        *OWN_DIRS_PASSED.lock().unwrap_or_else(|e| e.into_inner()) =
            Some((std::time::Instant::now(), own_dirs_inputs()));
    }
    Ok(())
}

/// The last judgement of [`own_dirs_refusal`] with a workspace that passed in this process:
/// when, and the variables it judged ([`own_dirs_inputs`]).
#[allow(clippy::type_complexity)]
static OWN_DIRS_PASSED: std::sync::Mutex<Option<(std::time::Instant, [Option<OsString>; 3])>> =
    std::sync::Mutex::new(None);

/// What [`own_dirs_refusal`] reads from the environment: `$XDG_CONFIG_HOME`,
/// `$XDG_STATE_HOME` and `$HOME`.
fn own_dirs_inputs() -> [Option<OsString>; 3] {
    ["XDG_CONFIG_HOME", "XDG_STATE_HOME", "HOME"].map(std::env::var_os)
}

/// Whether [`own_dirs_refusal`] passed with a workspace in this process within `age`, with
/// the variables it reads unchanged since: a caller about to judge again (without a
/// workspace, which that judgement covers) may take it. `cordon run` judges before the
/// command is resolved and again before the sweeps of earlier runs are finished, ~2 ms
/// later (issue 12: each judgement is 0.15-0.6 ms, measured). The host may change in
/// between, as it may after any judgement: `age` bounds how much older the answer is.
pub(crate) fn own_dirs_passed_within(age: std::time::Duration) -> bool {
    let passed = OWN_DIRS_PASSED.lock().unwrap_or_else(|e| e.into_inner());
    passed_judgement_holds(passed.as_ref(), &own_dirs_inputs(), age)
}

/// Whether the passed judgement `passed` (when, with which inputs) is younger than `age`
/// and was made with the inputs `now`.
fn passed_judgement_holds(
    passed: Option<&(std::time::Instant, [Option<OsString>; 3])>,
    now: &[Option<OsString>; 3],
    age: std::time::Duration,
) -> bool {
    passed.is_some_and(|(at, inputs)| at.elapsed() < age && inputs == now)
}

/// [`own_dirs_refusal`]'s judgement.
fn own_dirs_judged(workspace: Option<&Path>) -> Result<(), String> {
    for (var, what) in [
        (
            "XDG_CONFIG_HOME",
            "configuration (profiles, rules, remembered hosts)",
        ),
        ("XDG_STATE_HOME", "state (sessions, sweep records)"),
    ] {
        let Some(dir) = own_dir_named_by(var) else {
            continue;
        };
        let project = match workspace {
            Some(w) => project_holding(&dir, w),
            None => {
                marked_ancestor(&dir).or_else(|| crate::writable_history::unprotected_writer(&dir))
            }
        };
        if let Some(project) = project {
            return Err(format!(
                "{var} puts cordon's {what} in {}, inside the project {}, where sandboxed \
                 runs that do not set {var} may rewrite it, and this run would take what they \
                 wrote; point {var} outside every project, or unset it",
                dir.display(),
                project.display()
            ));
        }
    }
    // Wherever they are (another `$HOME` too: attack pass 156, M2), the files this run
    // trusts must not be where an earlier run could write without keeping them read-only.
    // One memo for the four paths, which share their ancestors (issue 12: each lenient
    // canonicalization walks up with a `realpath` per step).
    let memo = cordon_policy::paths::MemoFs::new(&HostFs);
    let real = |p: &Path| cordon_policy::paths::canonicalize_lenient(&memo, p);
    let history = crate::writable_history::History::load();
    if let Some((reg, why)) = history.unreadable() {
        return Err(format!(
            "cannot read the record of where earlier sandboxed runs could write ({why}), so \
             cordon's own files cannot be trusted; make {} a readable regular file again, or \
             remove it (every run then starts a new record)",
            reg.display()
        ));
    }
    for p in [
        user_config_path(),
        user_rules_path(),
        crate::hosts::remembered_hosts_path(),
        crate::cache::state_dir(),
    ]
    .into_iter()
    .flatten()
    {
        let p = real(&p);
        if let Some(root) = history.unprotected_writer(&p) {
            return Err(format!(
                "cordon's own file {} lies in {}, where an earlier sandboxed run could write \
                 without keeping it read-only (a run that did not read cordon's files from \
                 there), and this run would take what it wrote; keep cordon's configuration \
                 and state at their defaults under your home, or in a directory no sandboxed \
                 command has written",
                p.display(),
                root.display()
            ));
        }
    }
    Ok(())
}

/// Whether an entry point runs commands: every one but the CLI's read-only views
/// (`check`, `explain`, `context`, `status`, `profiles`), which show what a run would do
/// and say so when it would be refused.
fn runs_commands(entry: &Entry) -> bool {
    !matches!(entry, Entry::Cli(c) if c != "run")
}

/// How a configuration file is judged once opened ([`load_config_pinned`]): one named
/// with `--config` (no project may hold it) or cordon's own (no earlier run may have been
/// able to write it unprotected), for an entry point and the workspace of its cwd.
/// Each with the workspace of the profile's canonical cwd ([`TrustProfile::workspace`]).
enum Pinned<'a> {
    Named(&'a Entry, &'a Path),
    Own(&'a Entry, &'a Path),
}

/// Loads the configuration file `p` through one descriptor and judges the file that
/// descriptor reached, not the path again (attack pass 159, H2: a planted file swapped in
/// between the check and the read, or a symlink on the way flipped, was read unjudged),
/// for every entry point that runs commands, on every build (H1: `cordon mcp` judged its
/// files once at start and read them again for each command).
///
/// Errors: the file cannot be read (as [`Config::load`]), does not parse, or lies where
/// sandboxed runs could have written it.
fn load_config_pinned(p: &Path, how: Pinned<'_>) -> Result<Config, TrustError> {
    use std::io::Read as _;
    use std::os::unix::fs::OpenOptionsExt as _;
    let io = |message: String| {
        TrustError::Config(cordon_policy::ConfigError::Io {
            path: p.to_path_buf(),
            message,
        })
    };
    // Never a FIFO or device: opened without blocking, and only a regular file is read.
    let mut f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(p)
        .map_err(|e| io(e.to_string()))?;
    if !f.metadata().is_ok_and(|m| m.is_file()) {
        return Err(io(
            "not a regular file (a FIFO, device or directory is never read)".into(),
        ));
    }
    let (entry, workspace) = match how {
        Pinned::Named(e, w) | Pinned::Own(e, w) => (e, w),
    };
    if runs_commands(entry) {
        let real =
            opened_path(&f, p).ok_or_else(|| io("cannot tell which file was opened".into()))?;
        let holder = match how {
            Pinned::Named(..) => project_holding(&real, workspace),
            Pinned::Own(..) => crate::writable_history::unprotected_writer(&real),
        };
        if let Some(place) = holder {
            let named = match how {
                Pinned::Named(..) => format!("--config {}", p.display()),
                Pinned::Own(..) => format!("cordon's configuration {}", p.display()),
            };
            return Err(TrustError::Usage(format!(
                "{named}: the file ({}) lies in {}, where sandboxed runs may rewrite it, and \
                 this run would take what they wrote; keep it outside every project and every \
                 directory granted to a run, e.g. in ~/.config/cordon/",
                real.display(),
                place_phrase(&place, workspace)
            )));
        }
    }
    let mut text = String::new();
    f.read_to_string(&mut text).map_err(|e| io(e.to_string()))?;
    Ok(Config::parse(&text, p)?)
}

/// The path of the file `f` is open on (Linux: `/proc/self/fd/N`); elsewhere its
/// canonical path as named now.
fn opened_path(f: &std::fs::File, p: &Path) -> Option<PathBuf> {
    #[cfg(target_os = "linux")]
    {
        let _ = p;
        use std::os::fd::AsRawFd as _;
        std::fs::read_link(format!("/proc/self/fd/{}", f.as_raw_fd())).ok()
    }
    #[cfg(not(target_os = "linux"))]
    {
        // No `/proc` (macOS): the path as it resolves now (every run there was refused
        // with "cannot tell which file was opened" before).
        let _ = f;
        std::fs::canonicalize(p).ok()
    }
}

/// `$VAR/cordon` (canonical, as far as it exists) when the absolute `$VAR` names another
/// place than its default under the home (`~/.config`, `~/.local/state`).
fn own_dir_named_by(var: &str) -> Option<PathBuf> {
    let named = std::env::var_os(var)
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())?;
    let default = match var {
        "XDG_CONFIG_HOME" => ".config",
        _ => ".local/state",
    };
    let real = |p: &Path| cordon_policy::paths::canonicalize_lenient(&HostFs, p);
    let dir = real(&named.join("cordon"));
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .filter(|h| h.is_absolute());
    (home.map(|h| real(&h.join(default).join("cordon"))) != Some(dir.clone())).then_some(dir)
}

/// cordon's own files at their default places, whatever `$XDG_CONFIG_HOME` and
/// `$XDG_STATE_HOME` say now: `.config/cordon/{config,rules,network-hosts}.toml` and
/// `.local/state/cordon` under `$HOME` and under the account's home from the user database
/// (a login shell's cordon, without this environment's variables, reads them there).
fn default_cordon_files() -> Vec<PathBuf> {
    let homes = std::env::var_os("HOME")
        .map(PathBuf::from)
        .into_iter()
        .chain(cordon_sandbox::account_home())
        .filter(|h| h.is_absolute());
    let mut out = Vec::new();
    for h in homes {
        for f in [
            ".config/cordon/config.toml",
            ".config/cordon/rules.toml",
            ".config/cordon/network-hosts.toml",
            ".local/state/cordon",
        ] {
            let p = h.join(f);
            if !out.contains(&p) {
                out.push(p);
            }
        }
    }
    out
}

/// A path given on the command line (`-w`, `--deny-read`, `--with`), absolute: `~` and
/// `~/…` (quoted, so the shell left them) are the home directory, as in a profile entry
/// (new-user pass nu17 N8: `-w '~/x'` granted `CWD/~/x` in silence); a symbolic root
/// (`:workspace/dir`, [`cordon_policy::resolve::SYMBOLIC_ROOTS`]) is kept for resolution,
/// as in a profile entry (attack pass 53: `--deny-read :workspace/dir` hid a missing
/// `CWD/:workspace/dir`, in silence); anything else relative is taken against `cwd`.
fn absolute(p: &Path, cwd: &Path) -> String {
    if let Some(s) = p
        .to_str()
        .filter(|s| cordon_policy::resolve::is_symbolic_root_spelling(s))
    {
        return s.to_string();
    }
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .filter(|h| h.is_absolute());
    let tilde = p.to_str().and_then(|s| {
        s.strip_prefix("~/")
            .map(|r| r.trim_start_matches('/'))
            .or((s == "~").then_some(""))
    });
    let abs = match (tilde, home) {
        (Some(rest), Some(h)) => h.join(rest),
        _ if p.is_absolute() => p.to_path_buf(),
        _ => typed_cwd(cwd).join(p),
    };
    abs.to_string_lossy().into_owned()
}

/// The directory a relative command-line path is taken against: the typed cwd (`$PWD`,
/// [`cordon_policy::resolve::typed_cwd`]) when it names the same directory as `cwd`, else
/// `cwd`.
/// Taken against the physical `cwd`, a path typed in a directory reached through a
/// symlink an earlier sandboxed run planted in the project (`tools -> ~`, then `cd tools;
/// cordon run -w bin`) named `~/bin`, which cordon created and granted: the symlink was
/// never seen (attack pass 179, F1). Along the typed path the link is seen, and a grant
/// through a link inside a writable root is dropped (R-P2), as for `-w $PWD/bin`.
fn typed_cwd(cwd: &Path) -> PathBuf {
    let pwd = std::env::var_os("PWD").map(PathBuf::from);
    std::fs::canonicalize(cwd)
        .ok()
        .and_then(|real| cordon_policy::resolve::typed_cwd(&HostFs, &real, pwd.as_deref()))
        .unwrap_or_else(|| cwd.to_path_buf())
}

/// The host paths a command-line or `--with` entry names, for the checks made before
/// resolution: [`absolute`], with the symbolic roots expanded — `:root`, `:tmp`, `:home`
/// (`$HOME`), `:workspace` (the project root of `cwd`, [`cordon_policy::resolve::find_workspace`])
/// and `:minimal` (each of its paths). Attack pass 54 F1: `:workspace` and `:minimal` were
/// not checked, so `-w ':workspace/../../..'` granted `/`. An unknown root or a `:home`
/// without an absolute `$HOME` names nothing (resolution refuses or notes it).
fn host_paths(spelling: &str, cwd: &Path) -> Vec<PathBuf> {
    let Some((root, rest)) = cordon_policy::resolve::split_symbolic_root(spelling) else {
        return vec![PathBuf::from(absolute(Path::new(spelling), cwd))];
    };
    let bases: Vec<PathBuf> = match root {
        "root" => vec![PathBuf::from("/")],
        "tmp" => vec![PathBuf::from("/tmp")],
        "home" => std::env::var_os("HOME")
            .map(PathBuf::from)
            .filter(|h| h.is_absolute())
            .into_iter()
            .collect(),
        "workspace" => vec![cordon_policy::resolve::find_workspace(&HostFs, cwd)],
        "minimal" => cordon_policy::resolve::MINIMAL_PATHS
            .iter()
            .map(PathBuf::from)
            .collect(),
        _ => Vec::new(),
    };
    bases
        .iter()
        .map(|b| cordon_policy::paths::lexical_normalize(Path::new(rest), b))
        .collect()
}

impl TrustProfile {
    /// R-E1: builds the trust profile for `entry` in `cwd` from `layers`.
    ///
    /// Steps: load the config → select the profile → narrow (`--deny-read`, `--network
    /// off`) → widen by the additional permissions (R-O1) → plan mode's read-only view →
    /// load the exec-policy rules. Config, user-config and rules files and the session
    /// directory are listed for protection (R-P3) even when they do not exist yet.
    ///
    /// Errors: [`TrustError`], each saying what to change.
    pub fn build(entry: Entry, cwd: &Path, layers: &Layers) -> Result<TrustProfile, TrustError> {
        // Every file listed for protection is absolute: a relative `--config cfg.toml` was
        // taken against `/` when protected paths were computed, so the file the run read
        // stayed writable (breaker, stop 18).
        // A `..` is kept as spelled: the file read is where it leads on the disk (after a
        // symlink before it), and resolution normalises it that way and pins the links on
        // the way (attack pass 36, P1: `--config a/../b.toml` through `a -> d/e` read
        // `d/b.toml` while `./b.toml` was protected).
        let abs = |p: &Path| {
            if p.components().any(|c| c == std::path::Component::ParentDir) {
                cwd.join(p)
            } else {
                cordon_policy::paths::lexical_normalize(p, cwd)
            }
        };
        // A server (`cordon mcp`) or a harness builds a profile for every command: cordon's
        // own files are judged each time, not only when it started (attack pass 159, H1: a
        // directory written by another run after the start was trusted). `cordon run`
        // judges them before anything else (the CLI's `profile_files_refusal`).
        // The cwd's workspace, found once for every check below and kept with the profile.
        let real_cwd = std::fs::canonicalize(cwd).unwrap_or_else(|_| cwd.to_path_buf());
        let workspace = cordon_policy::find_workspace(&HostFs, &real_cwd);
        if runs_commands(&entry) && !matches!(entry, Entry::Cli(_)) {
            own_dirs_refusal(Some(&workspace)).map_err(TrustError::Usage)?;
        }
        let (config, mut files) = match &layers.config {
            Some(p) => (
                Some(load_config_pinned(p, Pinned::Named(&entry, &workspace))?),
                vec![abs(p)],
            ),
            None => match user_config_path().filter(|p| p.is_file()) {
                Some(p) => (
                    Some(load_config_pinned(&p, Pinned::Own(&entry, &workspace))?),
                    vec![p],
                ),
                None => (None, vec![]),
            },
        };
        // The session files and the remembered network hosts decide later runs' approvals
        // (R-A8): protected like the config (breaker: a run under `-w ~/.config` planted a
        // host in network-hosts.toml and later managed runs reached it unasked).
        // The `--rules` files decide what runs unasked: protected like the config (breaker,
        // stop 18: one inside the workspace was writable by the commands it governs).
        // cordon's whole state directory, not only the session store: the records of
        // sweeps still to finish (`sweeps/`) are acted on by the next run on the host
        // (attack pass 34, E1: under `-w ~/.local` a forged record made the next run
        // unlink and rename arbitrary host files).
        // Each in every place another cordon of this user looks for it: this
        // environment's `$XDG_*_HOME` and the defaults under `$HOME` and the account's
        // home (attack pass 35, P3: with `XDG_STATE_HOME` set, a command under `-w ~/.local`
        // forged a sweep record in `~/.local/state/cordon` that the user's own shell's
        // cordon then carried out).
        for u in [
            user_config_path(),
            user_rules_path(),
            crate::cache::state_dir(),
            crate::hosts::remembered_hosts_path(),
        ]
        .into_iter()
        .flatten()
        .chain(default_cordon_files())
        .chain(layers.rule_files.iter().map(|r| abs(r)))
        .chain(layers.sink_files.iter().map(|r| abs(r)))
        {
            if !files.contains(&u) {
                files.push(u);
            }
        }
        // A profile defined only in the project's `.cordon/config.toml` is "unknown": said
        // why (new-user pass nu24, F7d).
        let mut profile =
            select_profile(config.as_ref(), layers.profile.as_deref()).map_err(|e| {
                let ws = workspace_of(cwd, &real_cwd, &workspace);
                match (&e, unread_project_config(&ws)) {
                    (cordon_policy::ConfigError::UnknownProfile { .. }, Some(note)) => {
                        TrustError::Usage(format!("{e}; {note}"))
                    }
                    _ => TrustError::Config(e),
                }
            })?;
        narrow(&mut profile, layers, cwd)?;
        let additional = additional(layers, cwd, &profile)?;
        let mut profile = match &additional {
            Some(o) => {
                let mut req = CommandRequest::new(vec![], cwd.to_path_buf(), profile.clone());
                crate::writable_history::tell(&mut req);
                let ctx = req.resolve_context();
                effective_profile(&profile, Some(o), &ctx, &HostFs)?
            }
            None => profile,
        };
        if layers.plan {
            profile = crate::scope::read_only_view(&profile);
        }
        let rules = load_rules(config.as_ref(), &layers.rule_files)?;
        Ok(TrustProfile {
            entry,
            cwd: cwd.to_path_buf(),
            real_cwd,
            workspace,
            layers: layers.clone(),
            profile,
            additional: if layers.plan { None } else { additional },
            config,
            files,
            rules,
        })
    }

    /// R-E2: the trust profile of a worker or worktree in `cwd`, built anew from a clone of
    /// this profile's layers. `self` is not changed.
    ///
    /// Errors: as [`TrustProfile::build`].
    pub fn child(&self, entry: Entry, cwd: &Path) -> Result<TrustProfile, TrustError> {
        TrustProfile::build(entry, cwd, &self.layers.clone())
    }

    /// The exec-policy decision for `req` (its argv, cwd, home and profile; R-A2..R-A4).
    /// Deny-read entries block a rule's sandbox bypass: they are only enforced by the
    /// sandbox.
    pub fn evaluate(&self, req: &CommandRequest) -> cordon_execpolicy::DecisionRecord {
        self.rules.evaluate(&req.argv, &self.eval_context(req))
    }

    /// [`TrustProfile::evaluate`] for a command whose standard input is `stdin`: a shell or
    /// interpreter that reads its program there runs that text, which is judged too — as a
    /// heredoc of it when it is known before the run (an MCP `stdin`), as text known only at
    /// run time otherwise (a pipe into `cordon run -- sh`; new-user pass 201, #1: `echo 'git
    /// reset --hard' | cordon run -- sh` ran unasked, while `… | xargs git` was asked). The
    /// stricter of the two records is returned; a terminal's input is the person's (or,
    /// with `interactive`, capped where the run is started).
    pub fn evaluate_with_stdin(
        &self,
        req: &CommandRequest,
        stdin: &crate::drive::StdinSource,
    ) -> cordon_execpolicy::DecisionRecord {
        use crate::drive::StdinSource;
        // One context for both evaluations (it reads the user's git aliases from disk).
        let ctx = self.eval_context(req);
        let plain = self.rules.evaluate(&req.argv, &ctx);
        // Nothing to run (a terminal's input is the person's, `/dev/null` is empty), or
        // nothing stricter to find.
        if matches!(stdin, StdinSource::Terminal)
            || matches!(stdin, StdinSource::Known(t) if t.is_empty())
            || strictness(&plain) == 3
        {
            return plain;
        }
        let line = req
            .argv
            .iter()
            .map(|w| shlex::try_quote(w).map_or_else(|_| format!("{w:?}"), |q| q.into_owned()))
            .collect::<Vec<_>>()
            .join(" ");
        let script = match stdin {
            StdinSource::Terminal => return plain,
            StdinSource::Known(text) => {
                let mut delim = String::from("CORDON_STDIN");
                while text.lines().any(|l| l == delim) {
                    delim.push('_');
                }
                format!("{line} <<'{delim}'\n{text}\n{delim}")
            }
            StdinSource::Unknown => {
                format!("{line} <<< \"${}\"", cordon_execpolicy::RUN_TIME_STDIN_VAR)
            }
        };
        let fed = self.rules.evaluate_script(&script, &ctx);
        if strictness(&fed) > strictness(&plain) {
            fed
        } else {
            plain
        }
    }

    /// The evaluation context of `req`: its cwd, project, home, deny-read entries and the
    /// user's git aliases.
    fn eval_context(&self, req: &CommandRequest) -> cordon_execpolicy::EvalContext {
        let has_deny_read = match req.profile.effective_filesystem() {
            FilesystemPolicy::Restricted {
                default, entries, ..
            } => default == Access::Deny || entries.iter().any(|e| e.access == Access::Deny),
            FilesystemPolicy::Unrestricted => false,
        };
        let mut eval = cordon_execpolicy::EvalContext::default()
            .with_deny_read(has_deny_read)
            .with_cwd(req.cwd.to_string_lossy());
        // The project a delete must not take: the workspace root the resolver uses (the
        // nearest marked ancestor, placeholders excepted), else the cwd.
        let project = workspace_of(&req.cwd, &self.real_cwd, &self.workspace);
        eval = eval.with_project(project.to_string_lossy());
        let home = req.env.iter().find(|(k, _)| k == "HOME").map(|(_, h)| h);
        if let Some(h) = home {
            eval = eval.with_home(h.as_str());
        }
        // The user's git aliases, for `git ALIAS` (read only when the command runs git).
        if req
            .argv
            .iter()
            .any(|a| a.contains("git") || a.contains(char::is_whitespace))
        {
            let env: std::collections::BTreeMap<String, String> = req.env.iter().cloned().collect();
            let homes: Vec<std::path::PathBuf> = home
                .filter(|h| h.starts_with('/'))
                .map(std::path::PathBuf::from)
                .into_iter()
                .collect();
            eval = eval.with_git_aliases(cordon_policy::gitconfig::git_aliases(
                &HostFs, &req.cwd, &homes, &env,
            ));
        }
        eval
    }

    /// A [`CommandRequest`] for `argv` under this profile (cwd, profile files, env).
    pub fn command(&self, argv: Vec<String>) -> CommandRequest {
        let mut req = CommandRequest::new(argv, self.cwd.clone(), self.profile.clone());
        req.profile_files = self.files.clone();
        crate::writable_history::tell(&mut req);
        req
    }

    /// The host paths the `--writable` flags name, as the grants take them ([`host_paths`]:
    /// `~` and symbolic roots expanded, a relative path along the typed cwd), lexically
    /// normal — except `:tmp/…`, the sandbox's own `/tmp`, which is never made on the host
    /// (README). For the session's creation of a missing grant the merge left out as
    /// already given (a grant inside a writable root).
    pub fn writable_flag_paths(&self) -> Vec<PathBuf> {
        self.layers
            .writable
            .iter()
            .filter_map(|p| p.to_str())
            .filter(|s| !s.starts_with(":tmp"))
            .flat_map(|s| host_paths(s, &self.cwd))
            .map(|p| cordon_policy::paths::lexical_normalize(&p, Path::new("/")))
            .collect()
    }

    /// One line for each `--writable`/`--with` entry that the command will not get as asked
    /// (the merge leaves out what cannot take effect, R-O1): a grant that leads through a
    /// symlink, one a profile deny wins over, a `deny` under none of the extra grants (it
    /// only narrows the extra grant itself; `--deny-read` narrows the profile); and one for
    /// a write grant that takes the whole home directory ([`home_grant_note`]). Empty when every entry holds, or
    /// when the profile does not resolve (the run reports that). For `cordon run` to say on
    /// stderr (breaker, stop 18: they were dropped in silence).
    pub fn ungranted_extras(&self) -> Vec<String> {
        match self.ungranted_extras_checked() {
            Ok(notes) => notes,
            Err(why) => vec![why],
        }
    }

    /// [`TrustProfile::ungranted_extras`] for a run, with one resolution: `Err` with the
    /// refusal when an extra write or read grant (`--writable`, `--with`) is spelled
    /// through a symlink that leads elsewhere — one inside a writable root a confined
    /// command could have planted, which resolution drops. The run is refused (exit 125)
    /// rather than run without what was asked (new-user pass 239 #2: it ran with a note and
    /// failed on the denied write; README "a `-w` spelled through it is refused"). The
    /// real path, named by the person, is granted as usual.
    pub fn ungranted_extras_checked(&self) -> Result<Vec<String>, String> {
        let (linked, notes): (Vec<_>, Vec<_>) = self
            .ungranted_entries()
            .into_iter()
            .partition(|(_, through_link)| *through_link);
        if !linked.is_empty() {
            let linked: Vec<String> = linked.into_iter().map(|(n, _)| n).collect();
            return Err(linked.join("; "));
        }
        let mut out: Vec<String> = notes.into_iter().map(|(n, _)| n).collect();
        out.extend(self.unread_project_config());
        Ok(out)
    }

    /// The refusal of [`TrustProfile::ungranted_extras_checked`], or `None`.
    pub fn symlinked_grant_refusal(&self) -> Option<String> {
        self.ungranted_extras_checked().err()
    }

    /// A project configuration file cordon does not read (`.cordon/config.toml`,
    /// `.cordon/config.local.toml` of the workspace): said, since a profile defined there
    /// is otherwise "unknown" with no word why (new-user pass nu24, F7d). The project and
    /// local layers of R-P6 are not implemented: a sandboxed command may write the project,
    /// so such a file could widen later runs.
    fn unread_project_config(&self) -> Option<String> {
        unread_project_config(&workspace_of(&self.cwd, &self.real_cwd, &self.workspace))
    }

    /// [`TrustProfile::ungranted_extras`]' extra entries that do not take effect, each
    /// with whether it leads through a symlink ([`TrustProfile::symlinked_grant_refusal`]).
    fn ungranted_entries(&self) -> Vec<(String, bool)> {
        let Some(extra) = &self.additional else {
            return Vec::new();
        };
        let req = self.command(Vec::new());
        let Ok(r) = cordon_policy::resolve(&self.profile, &req.resolve_context(), &HostFs) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        // The host path an entry names: a symbolic root expanded as resolution expands it
        // (`:workspace/up/plain` is the workspace's `up/plain`: attack pass 242, F4, it was
        // read as a path under the cwd and called granted); `None` for the sandbox's own
        // `:tmp`, which is never the host's.
        let host_path = |spelling: &str| -> Option<PathBuf> {
            match cordon_policy::resolve::split_symbolic_root(spelling) {
                Some(("tmp", _)) => None,
                Some(("workspace", rest)) => Some(cordon_policy::paths::lexical_normalize(
                    Path::new(rest),
                    &r.workspace,
                )),
                Some(_) => host_paths(spelling, &self.cwd).into_iter().next(),
                None => Some(cordon_policy::paths::lexical_normalize(
                    Path::new(spelling),
                    &self.cwd,
                )),
            }
        };
        for e in &extra.entries {
            let source = e.source.as_deref().unwrap_or("--with");
            let Some(lexical) = host_path(&e.path) else {
                continue;
            };
            // A deny under one of the extra grants narrows it (that is what it is for); one
            // under none of them narrows nothing.
            let under_a_grant = extra.entries.iter().any(|g| {
                g.access != Access::Deny
                    && lexical.starts_with(cordon_policy::paths::lexical_normalize(
                        Path::new(&g.path),
                        &self.cwd,
                    ))
            });
            if e.access == Access::Deny && under_a_grant {
                continue;
            }
            if e.access == Access::Deny {
                out.push((
                    format!(
                        "{source} {}: a deny entry in additional permissions only narrows the \
                         extra grant itself; to hide a path from the command use --deny-read {}",
                        e.path, e.path
                    ),
                    false,
                ));
                continue;
            }
            // Under the private `/tmp` and not granted there, the host's path is not seen at
            // all (the tmpfs's write is not its: attack pass 242, F4, `-w t/x` with `t ->
            // /tmp` was called granted and dropped in silence).
            let got = match r.filesystem.seen(&HostFs, &lexical) {
                cordon_policy::Seen::PrivateTmp => Access::Deny,
                cordon_policy::Seen::Host(a) => a,
            };
            if got.width() >= e.access.width() {
                if e.access == Access::Write {
                    out.extend(home_grant_note(source, &e.path, &lexical).map(|n| (n, false)));
                }
                continue;
            }
            let real = cordon_policy::paths::canonicalize_lenient(&HostFs, &lexical);
            let through_link = real != lexical;
            let why = if through_link {
                format!(
                    "it leads through a symlink to {}, which a confined command could have \
                     planted; name the real path if you mean it",
                    real.display()
                )
            } else {
                format!(
                    "the profile's rules win there (`{} {}` says which)",
                    self.layers.explain_command(),
                    cordon_execpolicy::shell_word(&e.path)
                )
            };
            out.push((
                format!("{source} {} was not granted ({} here): {why}", e.path, got),
                through_link,
            ));
        }
        out
    }
}

/// The note for a write grant of the home directory or a directory above it, which the
/// command then gets whole (new-user pass 155, #10: `-w ~` was taken in silence, and a
/// command wrote `~/.profile`, which only the exec policy's reading of shell redirections
/// had kept it from).
fn home_grant_note(source: &str, spelled: &str, lexical: &Path) -> Option<String> {
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .filter(|h| h.is_absolute())?;
    let real = |p: &Path| cordon_policy::paths::canonicalize_lenient(&HostFs, p);
    let (home, granted) = (real(&home), real(lexical));
    home.starts_with(&granted).then(|| {
        // Said as what it is: the home itself, or the directory that holds it (new-user
        // finding: `-w ..` from `/var/tmp/x/rproj` with the home at `/var/tmp/x/home` was
        // said to make "your whole home directory" writable, while it granted `/var/tmp/x`).
        let what = if home == granted {
            "your whole home directory".to_string()
        } else {
            format!(
                "{}, which holds your home directory ({}), and so the whole home",
                granted.display(),
                home.display()
            )
        };
        format!(
            "{source} {spelled} makes {what} writable for this command: \
             ~/.config and other tools' settings it changes stay, and later commands run \
             with them (shell start-up files such as ~/.bashrc, ~/.profile and fish's conf.d, ssh's \
             ~/.ssh/authorized_keys, the login session's ~/.pam_environment, ~/.xprofile, \
             environment.d, autostart and systemd user units \
             and git's ~/.gitconfig stay protected, and one of them a \
             command creates is removed (a directory: named) after the run; other files that \
             run code are not: \
             Python's user site-packages (usercustomize.py, *.pth), ~/.local/bin, \
             ~/.bashrc.d, ~/.forward, editors' and tools' own start-up files such as \
             ~/.vimrc, and any file a start-up file of yours sources); grant only the \
             directory it needs if you can"
        )
    })
}

/// A `-w`/`--deny-read` path that starts with `:` must be one of the profile's symbolic
/// roots (attack pass 54 F7: `--deny-read ':Workspace/s'` was the relative path
/// `CWD/:Workspace/s` and hid nothing, in silence); `./:name` names such a file.
///
/// A path that is not UTF-8 is refused too (attack pass 177, F3: it was converted with
/// U+FFFD in place of each bad byte, so `--deny-read` hid a file that does not exist and
/// left the named one readable, and `-w` granted and created another directory): profile
/// entries, the helper's payload and the report carry UTF-8 only.
fn check_root_spelling(flag: &str, p: &Path) -> Result<(), TrustError> {
    if p.to_str().is_none() {
        return Err(TrustError::Usage(format!(
            "{flag} {}: the path is not UTF-8, which cordon cannot carry to the sandbox \
             (it would name another file); rename it, or name a directory above it whose \
             path is UTF-8",
            cordon_policy::paths::escaped(p.as_os_str().as_encoded_bytes())
        )));
    }
    let s = p.to_string_lossy();
    // Attack pass 55 F3: a quoted `$HOME/x` or `~root/x` (an MCP client's args are not
    // expanded by a shell) was a relative path that hid nothing.
    if let Some(head) = cordon_policy::resolve::unexpanded_head(&s) {
        return Err(TrustError::Usage(format!(
            "{flag} {s}: {head} is not expanded here (no shell read it); give the path \
             itself, or ~/… for your home directory"
        )));
    }
    if s.starts_with(':') && !cordon_policy::resolve::is_symbolic_root_spelling(&s) {
        return Err(TrustError::Usage(format!(
            "{flag} {s}: unknown symbolic root; use one of :workspace, :tmp, :home, :minimal, \
             :root (or ./{s} for a file of that name)"
        )));
    }
    Ok(())
}

fn narrow(profile: &mut PermissionProfile, layers: &Layers, cwd: &Path) -> Result<(), TrustError> {
    for p in &layers.deny_read {
        check_root_spelling("--deny-read", p)?;
        // Attack pass 54 F10: `--deny-read :root` (or `/`) hid every program and ended in
        // 127, "command not found".
        let spelled = p.to_string_lossy();
        if host_paths(&spelled, cwd)
            .iter()
            .any(|h| std::fs::canonicalize(h).unwrap_or_else(|_| h.clone()) == Path::new("/"))
        {
            return Err(TrustError::Usage(format!(
                "--deny-read {spelled}: that hides the whole filesystem, every program \
                 included; hide the paths the command must not read"
            )));
        }
    }
    for p in &layers.writable {
        check_root_spelling("--writable", p)?;
    }
    if !layers.deny_read.is_empty() {
        if profile.kind == ProfileKind::Disabled {
            return Err(TrustError::Usage(format!(
                "profile {:?} is disabled (no filesystem sandbox), so --deny-read cannot apply; \
                 choose a managed profile, e.g. --profile workspace-write",
                profile.name
            )));
        }
        if profile.filesystem == FilesystemPolicy::Unrestricted {
            profile.filesystem = FilesystemPolicy::Restricted {
                default: Access::Write,
                entries: Vec::new(),
                protect_metadata: false,
            };
        }
        profile.push_entries(
            layers
                .deny_read
                .iter()
                .map(|p| FsEntry::new(absolute(p, cwd), Access::Deny).with_source("--deny-read")),
        );
    }
    match layers.network {
        Some(NetworkPolicy::Restricted) => profile.network = NetworkPolicy::Restricted,
        Some(NetworkPolicy::Managed) => profile.network = NetworkPolicy::Managed,
        Some(NetworkPolicy::Enabled) | None => {}
    }
    if !layers.local_ports.is_empty() {
        // Exactly the named host ports, no more: a bad entry is a usage error, never
        // ignored.
        for l in &layers.local_ports {
            cordon_policy::network::parse_local(l).map_err(|e| {
                let e = e.trim_start_matches("network.local: ");
                TrustError::Usage(format!("--local-port: {e}"))
            })?;
            if !profile.network_rules.local.contains(l) {
                profile.network_rules.local.push(l.clone());
            }
        }
    }
    Ok(())
}

fn additional(
    layers: &Layers,
    cwd: &Path,
    profile: &PermissionProfile,
) -> Result<Option<AdditionalPermissions>, TrustError> {
    let mut overlay = match &layers.with {
        Some(json) => serde_json::from_str::<AdditionalPermissions>(json).map_err(|e| {
            TrustError::Usage(format!(
                "--with {json:?} is not valid additional permissions JSON ({e}); expected \
                 {{\"network\": true, \"entries\": [{{\"path\": \"/data\", \"access\": \"write\"}}]}}"
            ))
        })?,
        None => AdditionalPermissions::default(),
    };
    for e in &mut overlay.entries {
        if e.source.is_none() {
            e.source = Some("--with".into());
        }
        // Relative, as a `-w` path: along the typed cwd ([`typed_cwd`]).
        e.path = absolute(Path::new(&e.path), cwd);
    }
    overlay.entries.extend(
        layers
            .writable
            .iter()
            .map(|p| FsEntry::new(absolute(p, cwd), Access::Write).with_source("--writable")),
    );
    if layers.allow_network || layers.network == Some(NetworkPolicy::Enabled) {
        overlay.network = Some(true);
    }
    // Each grant's host paths, as spelled (symbolic roots expanded) and where they lead,
    // read once for the checks below.
    let grants: Vec<(&FsEntry, PathBuf, PathBuf)> = overlay
        .entries
        .iter()
        .filter(|e| e.access != Access::Deny)
        .flat_map(|e| {
            host_paths(&e.path, cwd).into_iter().map(move |p| {
                let real = cordon_policy::paths::canonicalize_lenient(&HostFs, &p);
                (e, p, real)
            })
        })
        .collect();
    // A grant under a tree the Linux sandbox rebuilds per command names a host path the
    // command would not see: a usage error, not a grant silently dropped (breaker, stop 18:
    // `-w /dev/shm/x` was accepted and nothing said it had no effect).
    if cfg!(target_os = "linux") {
        // As spelled and where it leads (attack pass 55 F5: a link to /dev/shm got
        // through, and the grant was dropped later with only a note).
        for (e, p, real) in &grants {
            if let Some(t) = cordon_policy::paths::REBUILT_TREES
                .iter()
                .find(|t| p.starts_with(t) || real.starts_with(t))
            {
                return Err(TrustError::Usage(format!(
                    "{} {}: {t} is rebuilt inside the sandbox for every command (a private, \
                     empty /dev/shm and a new /proc), so the host path would not be there; \
                     use a directory elsewhere (e.g. under /tmp or the project)",
                    e.source.as_deref().unwrap_or("--with"),
                    e.path
                )));
            }
        }
    }
    // `/tmp` itself: the sandbox's `/tmp` is a private tmpfs whatever is granted (the
    // host's is shared by every user and program), so the grant would change nothing — a
    // usage error naming what works, not a grant silently without effect (new-user pass
    // nu15 N2: `-w /tmp` ran, exit 0, and what the command wrote to /tmp was gone).
    if cfg!(target_os = "linux") && profile.kind != ProfileKind::Disabled {
        for (e, _, real) in &grants {
            if real == Path::new("/tmp") {
                return Err(TrustError::Usage(format!(
                    "{} {}: the sandbox's /tmp is a private tmpfs for every command, and the \
                     host's /tmp is never granted whole; grant the paths under it you need \
                     (-w /tmp/DIR or -w /tmp/FILE; a missing one is created as a directory), \
                     or keep the files in the project",
                    e.source.as_deref().unwrap_or("--with"),
                    e.path
                )));
            }
        }
    }
    // A write grant whose path starts with a top-level directory that does not exist: a
    // typo, which the sandbox would create on the host as root (new-user pass nu16 N9:
    // `-w /nonexistent/dir/x` made `/nonexistent`). A usage error; deeper missing paths are
    // created, and said so.
    // Attack pass 54 F8: `-w :home` without an absolute $HOME granted nothing, exit 0.
    if let Some(e) = overlay.entries.iter().find(|e| {
        e.access == Access::Write
            && cordon_policy::resolve::split_symbolic_root(&e.path)
                .is_some_and(|(r, _)| r == "home")
            && host_paths(&e.path, cwd).is_empty()
    }) {
        return Err(TrustError::Usage(format!(
            "{} {}: $HOME is not an absolute path here, so :home names nothing; set HOME, or \
             give the directory itself",
            e.source.as_deref().unwrap_or("--with"),
            e.path
        )));
    }
    if let Some(e) = overlay.entries.iter().find(|e| {
        e.access == Access::Write
            && cordon_policy::resolve::split_symbolic_root(&e.path)
                .is_some_and(|(r, _)| r == "minimal")
    }) {
        return Err(TrustError::Usage(format!(
            "{} {}: :minimal is the system's program and library directories (/usr, /bin, \
             /lib …), read-only in every profile; grant the directory the command writes",
            e.source.as_deref().unwrap_or("--with"),
            e.path
        )));
    }
    for (e, p, real) in grants.iter().filter(|(e, ..)| e.access == Access::Write) {
        // The whole filesystem: said as what it is (it was refused for a tree under it
        // too large to check, a reason about a directory the user never named: nu16 N9).
        if real == Path::new("/") {
            return Err(TrustError::Usage(format!(
                "{} {}: that grants the whole filesystem, which no sandbox profile can keep \
                 safe (cordon's own files, the credential stores, every repository's hooks); \
                 grant the directories the command needs, or run it without a sandbox on \
                 purpose (--profile danger-full-access)",
                e.source.as_deref().unwrap_or("--with"),
                e.path
            )));
        }
        if let Some(top) = p.ancestors().filter(|a| a.parent().is_some()).last() {
            if std::fs::symlink_metadata(top).is_err() {
                return Err(TrustError::Usage(format!(
                    "{} {}: {} does not exist, and cordon does not make a new top-level \
                     directory for a grant; check the path, or create it yourself first",
                    e.source.as_deref().unwrap_or("--with"),
                    e.path,
                    top.display()
                )));
            }
        }
    }
    if overlay.grants_nothing() {
        // Deny entries alone narrow nothing (they only carve holes in the extra grant):
        // said, not ignored (breaker, stop 18).
        if let Some(e) = overlay.entries.iter().find(|e| e.access == Access::Deny) {
            return Err(TrustError::Usage(format!(
                "--with: the deny entry {:?} grants and hides nothing on its own (a deny in \
                 additional permissions only narrows the extra grant itself); to hide a path \
                 from the command use --deny-read {}",
                e.path, e.path
            )));
        }
        return Ok(None);
    }
    if profile.kind == ProfileKind::Disabled && !overlay.entries.is_empty() {
        return Err(TrustError::Usage(format!(
            "profile {:?} is disabled (no filesystem sandbox): --writable/--with entries have nothing to widen",
            profile.name
        )));
    }
    Ok(Some(overlay))
}

/// The exec-policy rules (R-A3, R-P6 order): the config's `[[rules]]`, the user's rules
/// file (remembered answers), then each extra file. Examples are checked while loading.
///
/// Errors: a rules file that cannot be read or whose rules fail their checks.
pub fn load_rules(config: Option<&Config>, extra: &[PathBuf]) -> Result<Policy, TrustError> {
    let mut layers = Vec::new();
    if let Some(c) = config {
        if let Some(rules) = &c.rules {
            layers.push(Policy::from_toml_value(
                rules,
                &c.path.display().to_string(),
            )?);
        }
    }
    let mut files: Vec<PathBuf> = user_rules_path()
        .filter(|p| p.is_file())
        .into_iter()
        .collect();
    files.extend(extra.iter().cloned());
    for f in &files {
        // Never a FIFO or device (a planted FIFO hung the run, breaker stop 19).
        if std::fs::metadata(f).is_ok_and(|m| !m.is_file()) {
            return Err(TrustError::RulesFile {
                path: f.clone(),
                source: std::io::Error::other(
                    "not a regular file (a FIFO, device or directory is never read)",
                ),
            });
        }
        let text = std::fs::read_to_string(f).map_err(|source| TrustError::RulesFile {
            path: f.clone(),
            source,
        })?;
        layers.push(Policy::from_toml_str(&text, &f.display().to_string())?);
    }
    Ok(Policy::merge_layers(layers))
}

/// The workspace of `cwd` ([`cordon_policy::find_workspace`]): `workspace`, found for
/// `real_cwd`, when `cwd` is that directory as spelled (the same question, answered once);
/// else found now.
fn workspace_of(cwd: &Path, real_cwd: &Path, workspace: &Path) -> PathBuf {
    if cwd == real_cwd {
        workspace.to_path_buf()
    } else {
        cordon_policy::find_workspace(&HostFs, cwd)
    }
}

/// See [`TrustProfile::unread_project_config`]: the note for the workspace `ws`.
fn unread_project_config(ws: &Path) -> Option<String> {
    let found: Vec<String> = ["config.toml", "config.local.toml"]
        .iter()
        .map(|n| ws.join(".cordon").join(n))
        .filter(|p| p.is_file())
        .map(|p| p.display().to_string())
        .collect();
    (!found.is_empty()).then(|| {
        format!(
            "{} not read: cordon reads no project configuration yet (a sandboxed command \
             may write the project); put its profiles in ~/.config/cordon/config.toml",
            found.join(" and ")
        )
    })
}

/// How strongly a record holds a command back: 3 forbid, 2 an ask in every approval mode
/// ([`cordon_execpolicy::approval::explicit_ask`]), 1 an ask in untrusted mode only, 0 allow.
fn strictness(r: &cordon_execpolicy::DecisionRecord) -> u8 {
    use cordon_execpolicy::Decision;
    match r.decision {
        Decision::Forbid => 3,
        Decision::Ask if cordon_execpolicy::approval::explicit_ask(r) => 2,
        Decision::Ask => 1,
        Decision::Allow => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// New-user pass 182 #3: a recorded writable root without a marker was called "the
    /// project"; the workspace and a marked directory still are.
    #[test]
    fn a_place_is_named_for_what_it_is() {
        let d = tempfile::tempdir().unwrap();
        let ws = d.path().join("ws");
        let marked = d.path().join("marked");
        let grant = d.path().join("grant");
        for x in [&ws, &marked.join(".git"), &grant] {
            std::fs::create_dir_all(x).unwrap();
        }
        std::fs::write(marked.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
        assert!(place_phrase(&ws, &ws).starts_with("the project"));
        assert!(place_phrase(&marked, &ws).starts_with("the project"));
        let g = place_phrase(&grant, &ws);
        assert!(
            !g.contains("project") && g.contains("an earlier sandboxed run could write"),
            "{g}"
        );
    }

    /// A judgement of cordon's own directories is taken again only while it is young and
    /// the variables it read are unchanged (issue 12); one with a workspace that passed is
    /// recorded, and covers a judgement without one.
    #[test]
    fn a_passed_own_dirs_judgement_is_taken_only_while_fresh_and_unchanged() {
        use std::time::{Duration, Instant};
        let inputs = [
            Some(OsString::from("/x/cfg")),
            None,
            Some(OsString::from("/h")),
        ];
        let passed = (Instant::now(), inputs.clone());
        let long = Duration::from_secs(60);
        assert!(passed_judgement_holds(Some(&passed), &inputs, long));
        assert!(!passed_judgement_holds(None, &inputs, long), "none passed");
        assert!(
            !passed_judgement_holds(Some(&passed), &inputs, Duration::ZERO),
            "too old"
        );
        for changed in [
            [None, None, Some(OsString::from("/h"))],
            [
                Some(OsString::from("/x/cfg")),
                Some(OsString::from("/s")),
                Some(OsString::from("/h")),
            ],
            [
                Some(OsString::from("/x/cfg")),
                None,
                Some(OsString::from("/other")),
            ],
        ] {
            assert!(
                !passed_judgement_holds(Some(&passed), &changed, long),
                "{changed:?}"
            );
        }
        // This process's own judgement, with a workspace, is recorded when it passes.
        let ws = tempfile::tempdir().unwrap();
        if own_dirs_refusal(Some(ws.path())).is_ok() {
            assert!(own_dirs_passed_within(long));
            assert!(!own_dirs_passed_within(Duration::ZERO));
        }
    }

    #[test]
    fn child_builds_its_own_profile_and_leaves_the_parent_untouched() {
        let a = tempfile::tempdir().unwrap();
        let b = tempfile::tempdir().unwrap();
        let layers = Layers {
            writable: vec![PathBuf::from("out")],
            config: Some(a.path().join("missing-ok.toml")),
            ..Default::default()
        };
        // a missing --config is an error; use no config instead
        let layers = Layers {
            config: None,
            ..layers
        };
        let parent = TrustProfile::build(Entry::Cli("run".into()), a.path(), &layers).unwrap();
        let before_profile = parent.profile.clone();
        let before_additional = parent.additional.clone();
        let child = parent.child(Entry::Worktree, b.path()).unwrap();
        assert_eq!(child.cwd, b.path());
        assert_eq!(parent.cwd, a.path());
        assert_eq!(parent.profile, before_profile);
        assert_eq!(parent.additional, before_additional);
        // relative -w paths are read against each one's own cwd
        let w = |t: &TrustProfile| t.additional.as_ref().unwrap().entries[0].path.clone();
        assert!(w(&parent).starts_with(&a.path().to_string_lossy().to_string()));
        assert!(w(&child).starts_with(&b.path().to_string_lossy().to_string()));
        assert_eq!(child.entry, Entry::Worktree);
    }

    #[test]
    fn plan_layer_gives_the_read_only_view() {
        let a = tempfile::tempdir().unwrap();
        let t = TrustProfile::build(
            Entry::Cli("run".into()),
            a.path(),
            &Layers {
                plan: true,
                allow_network: true,
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!(t.profile.network, NetworkPolicy::Restricted);
        assert!(t.additional.is_none());
        match &t.profile.filesystem {
            FilesystemPolicy::Restricted { entries, .. } => {
                assert!(entries.iter().all(|e| e.access != Access::Write))
            }
            f => panic!("{f:?}"),
        }
    }

    #[test]
    fn usage_errors_say_what_to_do() {
        let a = tempfile::tempdir().unwrap();
        let e = TrustProfile::build(
            Entry::Cli("run".into()),
            a.path(),
            &Layers {
                profile: Some("danger-full-access".into()),
                deny_read: vec!["x".into()],
                ..Default::default()
            },
        )
        .unwrap_err();
        assert!(e.to_string().contains("--profile workspace-write"), "{e}");
    }

    #[test]
    fn local_ports_join_network_local_and_are_checked() {
        let a = tempfile::tempdir().unwrap();
        let build = |l: &str| {
            TrustProfile::build(
                Entry::Cli("run".into()),
                a.path(),
                &Layers {
                    local_ports: vec![l.into()],
                    ..Default::default()
                },
            )
        };
        let t = build("127.0.0.1:5432").unwrap();
        assert_eq!(t.profile.network_rules.local, vec!["127.0.0.1:5432"]);
        let e = build("192.168.0.1:5432").unwrap_err().to_string();
        assert!(
            e.contains("--local-port") && e.contains("not a loopback"),
            "{e}"
        );
        assert!(build("127.0.0.1:0").is_err());
    }

    /// New-user pass: with a piped stdin (`echo | cordon run -- python3 --version`) an
    /// interpreter given a version or help option was asked as reading its program there;
    /// it reads none, from a pipe or a known text. One that does read its program there is
    /// still asked about, the reason naming its standard input rather than a heredoc.
    #[test]
    fn stdin_is_judged_only_where_an_interpreter_reads_its_program() {
        use crate::drive::StdinSource;
        let a = tempfile::tempdir().unwrap();
        let t =
            TrustProfile::build(Entry::Cli("run".into()), a.path(), &Layers::default()).unwrap();
        let judge = |argv: &[&str], stdin: &StdinSource| {
            let req = t.command(argv.iter().map(|s| s.to_string()).collect());
            (t.evaluate(&req), t.evaluate_with_stdin(&req, stdin))
        };
        let piped = StdinSource::Unknown;
        let known = StdinSource::Known("import os; os.system('git reset --hard')\n".into());
        for argv in [
            &["python3", "--version"][..],
            &["python3", "-V"],
            &["python3", "-VV"],
            &["python3", "-h"],
            &["python", "-V"],
            &["bash", "--version"],
            &["bash", "--help"],
            &["node", "--version"],
            &["node", "-v"],
            &["perl", "-v"],
            &["perl", "-V"],
            &["ruby", "-v"],
            &["python3", "hello.py"],
            &["python3", "-m", "pytest"],
            &["bash", "-c", "source .venv/bin/activate && python -V"],
            &["bash", "-c", "PATH=$PWD/.venv/bin:$PATH python -V"],
        ] {
            for stdin in [&piped, &known] {
                let (plain, fed) = judge(argv, stdin);
                assert_eq!(
                    fed.decision, plain.decision,
                    "{argv:?} {stdin:?}: {}",
                    fed.reason
                );
                assert_eq!(
                    cordon_execpolicy::approval::explicit_ask(&fed),
                    cordon_execpolicy::approval::explicit_ask(&plain),
                    "{argv:?} {stdin:?}: {}",
                    fed.reason
                );
            }
        }
        for argv in [
            &["python3"][..],
            &["python3", "-"],
            &["python3", "-u"],
            &["bash", "-s"],
            &["sh"],
            &["sh", "--version"],
            &["perl"],
            &["node", "-"],
            &["tclsh", "--version"],
        ] {
            let (_, fed) = judge(argv, &piped);
            assert!(
                cordon_execpolicy::approval::explicit_ask(&fed),
                "{argv:?}: {}",
                fed.reason
            );
            assert!(fed.reason.contains("standard input"), "{}", fed.reason);
            assert!(!fed.reason.contains("heredoc"), "{}", fed.reason);
        }
        // A shell's known program is checked as the commands it holds.
        let (_, fed) = judge(&["sh"], &StdinSource::Known("git reset --hard\n".into()));
        assert!(
            cordon_execpolicy::approval::explicit_ask(&fed),
            "{}",
            fed.reason
        );
    }
}
