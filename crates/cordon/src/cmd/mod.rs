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
        Command::Mcp(a) => mcp::mcp(a),
    }
}
