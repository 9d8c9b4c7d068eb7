//! Command-line definitions (clap).

use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

/// cordon confines the commands a coding agent runs: one permission profile decides what
/// the command may read, write and reach, and the host's kernel enforces it.
///
/// With no configuration the `workspace-write` profile applies: the project (the nearest
/// directory with `.git`) is writable, the rest of the disk read-only, well-known credential
/// stores hidden, a private /tmp, and no network.
///
/// Exit codes: the command's own code (128+N when killed by signal N); 125 when cordon fails
/// or refuses; 126 when the command cannot be executed; 127 when it is not found.
#[derive(Debug, Parser)]
#[command(name = "cordon", version, propagate_version = true)]
pub struct Cli {
    /// Log what cordon decides (or set CORDON_LOG=debug).
    #[arg(short, long, global = true)]
    pub verbose: bool,
    #[command(subcommand)]
    pub command: Command,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run a command confined by a profile: `cordon run -- git status`.
    Run(RunArgs),
    /// Show what this host can enforce and the sandbox status of the active profile.
    Status(StatusArgs),
    /// List the built-in and configured profiles.
    Profiles(ProfileArgs),
}

/// How to choose and adjust the profile (shared by several subcommands).
#[derive(Debug, Clone, Args)]
pub struct ProfileArgs {
    /// Profile name: workspace-write (default), read-only, danger-full-access, or one
    /// defined in the config file.
    #[arg(short, long, env = "CORDON_PROFILE")]
    pub profile: Option<String>,
    /// Config file with named profiles (default: ~/.config/cordon/config.toml if present).
    #[arg(short, long, env = "CORDON_CONFIG")]
    pub config: Option<PathBuf>,
    /// Also make PATH writable (repeatable).
    #[arg(short = 'w', long = "writable", value_name = "PATH")]
    pub writable: Vec<PathBuf>,
    /// Hide PATH from reads (repeatable).
    #[arg(long = "deny-read", value_name = "PATH")]
    pub deny_read: Vec<PathBuf>,
    /// Network access for this run: `on` (enabled) or `off` (restricted).
    #[arg(long, value_enum)]
    pub network: Option<NetworkArg>,
    /// Output machine-readable JSON.
    #[arg(long)]
    pub json: bool,
}

/// `--network` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum NetworkArg {
    /// Network enabled.
    On,
    /// Network restricted (no sockets to anything but the sandbox's own socketpairs).
    Off,
}

/// `--sandbox` values (R-S1 preference).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum SandboxArg {
    /// Decide from the profile's shape.
    #[default]
    Auto,
    /// Always sandbox.
    Require,
    /// Never sandbox.
    Forbid,
}

/// `cordon run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    #[command(flatten)]
    pub profile: ProfileArgs,
    /// Sandbox preference: auto (from the profile), require, forbid.
    #[arg(long, value_enum, default_value_t)]
    pub sandbox: SandboxArg,
    /// If the sandbox is needed but this host cannot give it, run unconfined anyway
    /// (logged; the default is to refuse with exit 125).
    #[arg(long)]
    pub allow_unconfined: bool,
    /// The command and its arguments (after `--`).
    #[arg(required = true, last = true, value_name = "CMD")]
    pub command: Vec<String>,
}

/// `cordon status`.
#[derive(Debug, Args)]
pub struct StatusArgs {
    #[command(flatten)]
    pub profile: ProfileArgs,
}
