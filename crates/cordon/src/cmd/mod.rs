//! One module per subcommand.

use crate::cli::{Cli, Command};
use anyhow::Result;

mod cache;
mod check;
mod context;
mod explain;
mod mcp;
mod profiles;
mod proxy;
mod run;
mod selftest;
#[cfg(target_os = "linux")]
mod serve;
mod status;

/// Runs the chosen subcommand; returns the process exit code.
pub fn dispatch(cli: Cli) -> Result<i32> {
    match cli.command {
        Command::Run(a) => run::run(a),
        Command::Status(a) => status::status(a),
        Command::Check(a) => check::check(a),
        Command::Profiles(a) => profiles::profiles(a),
        Command::Context(a) => context::context(a),
        Command::Explain(a) => explain::explain(a),
        Command::Cache(c) => cache::cache(c),
        Command::Proxy(a) => proxy::proxy(a),
        Command::Selftest(a) => selftest::selftest(a),
        #[cfg(target_os = "linux")]
        Command::Serve(a) => serve::serve(a),
        #[cfg(not(target_os = "linux"))]
        Command::Serve(_) => anyhow::bail!("cordon serve: only on Linux"),
        Command::Mcp(a) => mcp::mcp(a),
    }
}
