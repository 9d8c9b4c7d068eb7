//! Turning `--profile/--config/-w/--deny-read/--network/--with/--rules` into the layers of
//! the one trust-profile constructor (`cordon_session::TrustProfile::build`, R-E1).

use crate::cli::{NetworkArg, ProfileArgs, SandboxArg};
use anyhow::Result;
use cordon_policy::{Config, PermissionProfile, SandboxPreference};
use cordon_session::{Entry, Layers, TrustProfile};
use std::path::PathBuf;

/// The profile chosen for a command, and where it came from.
pub struct Chosen {
    /// The effective profile: base with the overlay merged (what is enforced).
    pub profile: PermissionProfile,
    /// The loaded config, if any.
    pub config: Option<Config>,
    /// Config files in use (protected inside writable roots, R-P3).
    pub files: Vec<PathBuf>,
}

/// Maps `--sandbox` to the R-S1 preference.
pub fn preference(a: SandboxArg) -> SandboxPreference {
    match a {
        SandboxArg::Auto => SandboxPreference::Auto,
        SandboxArg::Require => SandboxPreference::Require,
        SandboxArg::Forbid => SandboxPreference::Forbid,
    }
}

/// The configuration layers given on the command line.
pub fn layers(args: &ProfileArgs, rules: &[PathBuf], plan: bool) -> Layers {
    Layers {
        profile: args.profile.clone(),
        config: args.config.clone(),
        writable: args.writable.clone(),
        allow_network: args.allow_network,
        with: args.with.clone(),
        deny_read: args.deny_read.clone(),
        network: args.network.map(NetworkArg::policy),
        local_ports: args.local_port.clone(),
        rule_files: rules.to_vec(),
        plan,
        sink_files: Vec::new(),
    }
}

/// The trust profile of subcommand `entry` in the current directory (R-E1).
/// The current directory. `getcwd` fails with `ENAMETOOLONG` for a path longer than the
/// kernel's `PATH_MAX`: said as such, naming the limit (L3b: "File name too long").
///
/// Errors: the directory cannot be read (removed, too long, …).
pub fn current_dir() -> Result<PathBuf> {
    std::env::current_dir().map_err(|e| {
        if e.raw_os_error() == Some(libc::ENAMETOOLONG) {
            anyhow::anyhow!(
                "cannot read the current directory: its path is longer than the kernel \
                 accepts (PATH_MAX, {} bytes); run from a shorter path",
                cordon_policy::paths::PATH_MAX
            )
        } else if e.kind() == std::io::ErrorKind::NotFound {
            // New-user pass 182 #9: the bare "No such file or directory" said nothing to do.
            anyhow::anyhow!(
                "the current directory no longer exists (it was removed after you entered \
                 it); cd to an existing directory and run again"
            )
        } else {
            anyhow::Error::new(e).context("cannot read the current directory")
        }
    })
}

pub fn trust(
    entry: &str,
    args: &ProfileArgs,
    rules: &[PathBuf],
    plan: bool,
) -> Result<TrustProfile> {
    trust_with_sinks(entry, args, rules, plan, Vec::new())
}

/// [`trust`], with the files this run's cordon writes or reads answers from protected
/// (`sink_files`: `--report`, `--approvals-from`).
pub fn trust_with_sinks(
    entry: &str,
    args: &ProfileArgs,
    rules: &[PathBuf],
    plan: bool,
    sink_files: Vec<PathBuf>,
) -> Result<TrustProfile> {
    let cwd = crate::profile_args::current_dir()?;
    let mut layers = layers(args, rules, plan);
    layers.sink_files = sink_files;
    Ok(TrustProfile::build(
        Entry::Cli(entry.into()),
        &cwd,
        &layers,
    )?)
}

/// Loads the config and builds the profile for `args`.
pub fn choose(args: &ProfileArgs) -> Result<Chosen> {
    let t = trust("profile", args, &[], false)?;
    // Extra grants that will not hold are said wherever the profile is shown (explain,
    // context, status), as `cordon run` says them.
    match t.ungranted_extras_checked() {
        Ok(notes) => {
            for n in notes {
                eprintln!("cordon: note: {n}");
            }
        }
        // What `cordon run` refuses is said as a refusal (new-user pass 239 #2).
        Err(why) => eprintln!("cordon: note: `cordon run` would refuse this (exit 125): {why}"),
    }
    Ok(Chosen {
        profile: t.profile,
        config: t.config,
        files: t.files,
    })
}

/// The refusal [`profile_files_refusal`] would give `cordon run`, said on stderr by the
/// read-only views (`explain`, `context`, `status`), which read the files anyway: what they
/// show is then not what a run would do (attack pass 167, finding 3: `explain --config
/// PLANTED` showed the planted profile without a word).
/// Returns that refusal, for the view's own status to say (`Assessment::refused_by`).
pub fn note_run_refusal(args: &ProfileArgs) -> Option<String> {
    let e = profile_files_refusal(args, &[], None).err()?;
    let et = crate::cmd::error_text(&e);
    eprintln!("cordon: note: `cordon run` would refuse this: {et}");
    Some(format!("`cordon run` would refuse this: {et}"))
}

/// `cordon run` and `cordon mcp`: refuses (exit 125, nothing run) a `--config` or
/// `--rules` file that lies inside a project — the workspace, or any directory above the
/// file that holds a `.git` or a non-empty `.cordon` (up to your home): it is protected
/// only in the runs that name it, so any other run in that project — one without the
/// flag, a concurrent one, one started in the enclosing project — may rewrite it, and the
/// next run that reads it would take what that command wrote (breaker, stop 19:
/// `default_profile = "danger-full-access"` planted by one run, the next run with
/// `--config` unconfined; a first exemption for `.cordon/` did not hold: a nested
/// project's `.cordon/` is writable from the enclosing one, and a repository root's
/// missing `.cordon/` can be made). Judged by place, not by the file's content, which may
/// be the planted one.
///
/// `trust`, when given, is this run's profile built for the current directory: its
/// workspace ([`TrustProfile::workspace`]) is the one judged here when it was found for
/// the same canonical directory (not looked for again).
pub fn profile_files_refusal(
    args: &ProfileArgs,
    rules: &[PathBuf],
    trust: Option<&TrustProfile>,
) -> Result<()> {
    let cwd = crate::profile_args::current_dir()?;
    let fs = cordon_sandbox::HostFs;
    let real_cwd =
        std::fs::canonicalize(&cwd).map_err(|e| {
            match cordon_policy::paths::too_long("working directory", &cwd) {
                Some(why) => anyhow::anyhow!(why),
                None => anyhow::Error::new(e).context(format!("cannot resolve {}", cwd.display())),
            }
        })?;
    let workspace = match trust {
        Some(t) if t.real_cwd == real_cwd => t.workspace.clone(),
        _ => cordon_policy::find_workspace(&fs, &real_cwd),
    };
    let named = args
        .config
        .iter()
        .map(|p| ("--config", p))
        .chain(rules.iter().map(|p| ("--rules", p)));
    for (flag, p) in named {
        let Ok(real) = std::fs::canonicalize(cwd.join(p)) else {
            continue; // a missing file is reported by the loader
        };
        // Another name for the same file may lie inside a project (a hard link): the path
        // check cannot see it (new user, stop 19).
        use std::os::unix::fs::MetadataExt;
        if std::fs::metadata(&real).is_ok_and(|m| m.nlink() > 1) {
            anyhow::bail!(
                "{flag} {}: the file has other hard links, which may lie where sandboxed runs \
                 can write it; use a file with one name, outside every project (e.g. in \
                 ~/.config/cordon/)",
                p.display()
            );
        }
        if let Some(project) = project_holding(&real, &workspace) {
            anyhow::bail!(
                "{flag} {}: the file lies in {}, where sandboxed runs (those not given {flag}, \
                 or running at the same time) may rewrite it, and this run would take what \
                 they wrote; keep it outside every project and every directory granted to a \
                 run, e.g. in ~/.config/cordon/",
                p.display(),
                cordon_session::trust::place_phrase(&project, &workspace),
            );
        }
    }
    // The same holds for the directories `$XDG_CONFIG_HOME` and `$XDG_STATE_HOME` name
    // (attack pass 154, F1/F2).
    cordon_session::trust::own_dirs_refusal(Some(&workspace)).map_err(anyhow::Error::msg)?;
    Ok(())
}

/// The project a file that decides later runs lies in, if any
/// ([`cordon_session::trust::project_holding`]).
pub fn project_holding(real: &std::path::Path, workspace: &std::path::Path) -> Option<PathBuf> {
    cordon_session::trust::project_holding(real, workspace)
}
