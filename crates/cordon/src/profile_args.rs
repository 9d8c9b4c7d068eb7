//! Turning `--profile/--config/-w/--deny-read/--network` into a [`PermissionProfile`].

use crate::cli::{NetworkArg, ProfileArgs};
use anyhow::{bail, Context, Result};
use cordon_policy::{
    select_profile, Access, Config, FilesystemPolicy, FsEntry, NetworkPolicy, PermissionProfile,
    ProfileKind,
};
use std::path::PathBuf;

/// The profile chosen for a command, and the files it came from.
pub struct Chosen {
    /// The profile after command-line adjustments.
    pub profile: PermissionProfile,
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

/// Loads the config and builds the profile for `args`.
pub fn choose(args: &ProfileArgs) -> Result<Chosen> {
    let (config, files) = match &args.config {
        Some(p) => (Some(Config::load(p)?), vec![p.clone()]),
        None => match user_config_path().filter(|p| p.is_file()) {
            Some(p) => (Some(Config::load(&p)?), vec![p]),
            None => (None, vec![]),
        },
    };
    let mut profile = select_profile(config.as_ref(), args.profile.as_deref())?;
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    let mut extra = Vec::new();
    for (paths, access, flag) in [
        (&args.writable, Access::Write, "--writable"),
        (&args.deny_read, Access::Deny, "--deny-read"),
    ] {
        for p in paths {
            let abs = if p.is_absolute() { p.clone() } else { cwd.join(p) };
            extra.push(FsEntry::new(abs.to_string_lossy(), access).with_source(flag));
        }
    }
    if !extra.is_empty() {
        if profile.kind == ProfileKind::Disabled {
            bail!(
                "profile {:?} is disabled (no filesystem sandbox), so --writable/--deny-read cannot apply; \
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
        profile.push_entries(extra);
    }
    if let Some(n) = args.network {
        profile.network = match n {
            NetworkArg::On => NetworkPolicy::Enabled,
            NetworkArg::Off => NetworkPolicy::Restricted,
        };
    }
    Ok(Chosen {
        profile,
        config,
        files,
    })
}
