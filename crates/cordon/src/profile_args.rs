//! Turning `--profile/--config/-w/--deny-read/--network/--with/--rules` into the layers of
//! the one trust-profile constructor (`cordon_session::TrustProfile::build`, R-E1).

use crate::cli::{NetworkArg, ProfileArgs, SandboxArg};
use anyhow::{Context, Result};
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
        network: args.network.map(|n| match n {
            NetworkArg::On => cordon_policy::NetworkPolicy::Enabled,
            NetworkArg::Off => cordon_policy::NetworkPolicy::Restricted,
            NetworkArg::Managed => cordon_policy::NetworkPolicy::Managed,
        }),
        local_ports: args.local_port.clone(),
        rule_files: rules.to_vec(),
        plan,
    }
}

/// The trust profile of subcommand `entry` in the current directory (R-E1).
pub fn trust(
    entry: &str,
    args: &ProfileArgs,
    rules: &[PathBuf],
    plan: bool,
) -> Result<TrustProfile> {
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    Ok(TrustProfile::build(
        Entry::Cli(entry.into()),
        &cwd,
        &layers(args, rules, plan),
    )?)
}

/// Loads the config and builds the profile for `args`.
pub fn choose(args: &ProfileArgs) -> Result<Chosen> {
    let t = trust("profile", args, &[], false)?;
    // Extra grants that will not hold are said wherever the profile is shown (explain,
    // context, status), as `cordon run` says them.
    for n in t.ungranted_extras() {
        eprintln!("cordon: note: {n}");
    }
    Ok(Chosen {
        profile: t.profile,
        config: t.config,
        files: t.files,
    })
}
