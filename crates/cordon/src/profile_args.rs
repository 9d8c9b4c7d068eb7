//! Turning `--profile/--config/-w/--deny-read/--network/--with` into a
//! [`PermissionProfile`]: the base profile from the config, narrowed by `--deny-read` and
//! `--network off`, then widened by the per-run additional permissions (R-O1).

use crate::cli::{NetworkArg, ProfileArgs, SandboxArg};
use anyhow::{bail, Context, Result};
use cordon_policy::{
    effective_profile, select_profile, Access, AdditionalPermissions, Config, FilesystemPolicy,
    FsEntry, NetworkPolicy, PermissionProfile, ProfileKind, SandboxPreference,
};
use cordon_sandbox::{CommandRequest, HostFs};
use std::path::PathBuf;

/// The profile chosen for a command, and where it came from.
pub struct Chosen {
    /// The effective profile: base with the overlay merged (what is enforced).
    pub profile: PermissionProfile,
    /// The per-run additional permissions, if any.
    pub overlay: Option<AdditionalPermissions>,
    /// The loaded config, if any.
    pub config: Option<Config>,
    /// Config files in use (protected inside writable roots, R-P3).
    pub files: Vec<PathBuf>,
}

/// The user config path: `$XDG_CONFIG_HOME/cordon/config.toml` or
/// `~/.config/cordon/config.toml`.
pub fn user_config_path() -> Option<PathBuf> {
    if let Some(x) = std::env::var_os("XDG_CONFIG_HOME").filter(|x| !x.is_empty()) {
        return Some(PathBuf::from(x).join("cordon/config.toml"));
    }
    std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config/cordon/config.toml"))
}

/// Maps `--sandbox` to the R-S1 preference.
pub fn preference(a: SandboxArg) -> SandboxPreference {
    match a {
        SandboxArg::Auto => SandboxPreference::Auto,
        SandboxArg::Require => SandboxPreference::Require,
        SandboxArg::Forbid => SandboxPreference::Forbid,
    }
}

fn absolute(p: &std::path::Path, cwd: &std::path::Path) -> String {
    let abs = if p.is_absolute() {
        p.to_path_buf()
    } else {
        cwd.join(p)
    };
    abs.to_string_lossy().into_owned()
}

/// Loads the config and builds the profile for `args`.
pub fn choose(args: &ProfileArgs) -> Result<Chosen> {
    let (config, files) = match &args.config {
        Some(p) => (Some(Config::load(p)?), vec![p.clone()]),
        None => match user_config_path().filter(|p| p.is_file()) {
            Some(p) => (Some(Config::load(&p)?), vec![p]),
            None => (None, vec![]),
        },
    };
    // The user config decides every later run's profile: keep it read-only whenever it
    // lies inside a writable root, even when it does not exist yet (R-P3).
    let mut files = files;
    if let Some(u) = user_config_path() {
        if !files.contains(&u) {
            files.push(u);
        }
    }
    let mut profile = select_profile(config.as_ref(), args.profile.as_deref())?;
    let cwd = std::env::current_dir().context("cannot read the current directory")?;

    // Narrowing adjustments.
    if !args.deny_read.is_empty() {
        if profile.kind == ProfileKind::Disabled {
            bail!(
                "profile {:?} is disabled (no filesystem sandbox), so --deny-read cannot apply; \
                 choose a managed profile, e.g. --profile workspace-write",
                profile.name
            );
        }
        if profile.filesystem == FilesystemPolicy::Unrestricted {
            profile.filesystem = FilesystemPolicy::Restricted {
                default: Access::Write,
                entries: Vec::new(),
                protect_metadata: false,
            };
        }
        profile.push_entries(
            args.deny_read
                .iter()
                .map(|p| FsEntry::new(absolute(p, &cwd), Access::Deny).with_source("--deny-read")),
        );
    }
    if args.network == Some(NetworkArg::Off) {
        profile.network = NetworkPolicy::Restricted;
    }

    // Widening: additional permissions for this run (R-O1).
    let mut overlay = match &args.with {
        Some(json) => serde_json::from_str::<AdditionalPermissions>(json)
            .with_context(|| format!("--with {json:?} is not valid additional permissions JSON (expected {{\"network\": true, \"entries\": [{{\"path\": \"/data\", \"access\": \"write\"}}]}})"))?,
        None => AdditionalPermissions::default(),
    };
    for e in &mut overlay.entries {
        if e.source.is_none() {
            e.source = Some("--with".into());
        }
    }
    overlay.entries.extend(
        args.writable
            .iter()
            .map(|p| FsEntry::new(absolute(p, &cwd), Access::Write).with_source("--writable")),
    );
    if args.allow_network || args.network == Some(NetworkArg::On) {
        overlay.network = Some(true);
    }
    let overlay = if overlay.grants_nothing() {
        None
    } else {
        Some(overlay)
    };
    if let Some(o) = &overlay {
        if profile.kind == ProfileKind::Disabled && !o.entries.is_empty() {
            bail!(
                "profile {:?} is disabled (no filesystem sandbox): --writable/--with entries have nothing to widen",
                profile.name
            );
        }
    }
    // Only an overlay needs the filesystem (to resolve its paths for the merge).
    let profile = match &overlay {
        Some(o) => {
            let ctx = CommandRequest::new(vec![], cwd, profile.clone()).resolve_context();
            effective_profile(&profile, Some(o), &ctx, &HostFs)?
        }
        None => profile,
    };
    Ok(Chosen {
        profile,
        overlay,
        config,
        files,
    })
}
