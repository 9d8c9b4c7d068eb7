//! One module per subcommand.

use crate::cli::{Cli, Command};
use anyhow::Result;

mod cache;
mod check;
mod context;
mod explain;
mod mcp;
mod mcp_args;
mod mcp_stdio;
mod profiles;
mod proxy;
mod run;
mod selftest;
#[cfg(target_os = "linux")]
mod serve;
mod status;

pub use run::usage_refusal_report;

/// With `--json` (before any `--`) on a subcommand other than `run` (whose refusal report
/// has a run report's shape, [`usage_refusal_report`]) and `mcp` (whose results are MCP
/// messages), the failure as one JSON object on stdout, where the subcommand's JSON goes:
/// `{"error": MESSAGE, "exit_code": 125}` (new-user pass 192, #6: `cordon explain --json
/// --profile nosuch` printed text only). `raw`: the arguments after the program name.
pub fn json_error_report(raw: &[std::ffi::OsString], error: &str) {
    let flags: Vec<&std::ffi::OsStr> = raw
        .iter()
        .map(std::ffi::OsString::as_os_str)
        .take_while(|a| *a != "--")
        .collect();
    let sub = flags
        .iter()
        .find(|a| !a.as_encoded_bytes().starts_with(b"-"));
    // `run --dry-run --json` prints its plan on stdout: its failure goes there too (the
    // run's refusal report stays on stderr; new-user pass 201 #2).
    let dry_run = flags.iter().any(|a| *a == "--dry-run");
    if sub.is_none_or(|s| (*s == "run" && !dry_run) || *s == "mcp")
        || !flags.iter().any(|a| *a == "--json")
    {
        return;
    }
    let v = serde_json::json!({ "error": error, "exit_code": crate::EXIT_CORDON });
    println!("{v}");
}

/// `e` and its causes, each said once: `{e:#}` repeated a cause whose text the error
/// above it already holds (new-user pass: `cannot read rules file …: No such file or
/// directory (os error 2): No such file or directory (os error 2)`, a `thiserror`
/// message with `{source}` in it, then its source again). Every error cordon prints goes
/// through this.
pub fn error_text(e: &anyhow::Error) -> String {
    let mut out = e.to_string();
    let mut above = out.clone();
    for cause in e.chain().skip(1) {
        let s = cause.to_string();
        if !above.contains(&s) {
            out.push_str(": ");
            out.push_str(&s);
        }
        above = s;
    }
    out
}

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

/// Root running in a workspace another user owns: inside the sandbox root keeps no
/// capability (no `CAP_DAC_OVERRIDE`), so the files' own modes apply and writes can fail
/// with "Permission denied" though the profile makes the workspace writable (host layouts:
/// a root agent in a checkout bind-mounted from uid 1000). The note says what to do; `None`
/// when cordon does not run as root, the workspace is root's, or cannot be looked at. Said
/// by `run` after a failed run and by `explain` (one truth: explain said "writable").
#[cfg(unix)]
pub(crate) fn owner_note(workspace: &std::path::Path) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    if cordon_sandbox::hostfs::effective_uid() != 0 {
        return None;
    }
    let m = std::fs::metadata(workspace).ok().filter(|m| m.uid() != 0)?;
    Some(format!(
        "you run cordon as root, and the workspace {} is owned by uid {}: inside the sandbox \
         root keeps no capability, so the files' own permissions apply and writing them can \
         fail with \"Permission denied\"; run cordon as that user (e.g. `setpriv --reuid={} \
         --regid={} --init-groups cordon run …`)",
        workspace.display(),
        m.uid(),
        m.uid(),
        m.gid()
    ))
}

/// See the unix version.
#[cfg(not(unix))]
pub(crate) fn owner_note(_: &std::path::Path) -> Option<String> {
    None
}

#[cfg(test)]
mod tests {
    /// An error whose message holds its source, as `thiserror`'s `"…: {source}"` does.
    #[derive(Debug)]
    struct Holds(std::io::Error);
    impl std::fmt::Display for Holds {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            write!(f, "cannot read rules file r.toml: {}", self.0)
        }
    }
    impl std::error::Error for Holds {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            Some(&self.0)
        }
    }

    /// New-user pass: the cause of `--rules missing.toml` was printed twice. Each cause is
    /// said once. Twin: a cause the message does not hold is still said, after a context.
    #[test]
    fn a_cause_the_message_holds_is_not_said_again() {
        let io = || std::io::Error::from(std::io::ErrorKind::NotFound);
        let e = anyhow::Error::new(Holds(io()));
        let t = super::error_text(&e);
        assert_eq!(t.matches(&io().to_string()).count(), 1, "{t}");
        let e = anyhow::Error::new(Holds(io())).context("loading the profile");
        let t = super::error_text(&e);
        assert!(
            t.starts_with("loading the profile: cannot read rules file"),
            "{t}"
        );
        assert_eq!(t.matches(&io().to_string()).count(), 1, "{t}");
        let e = anyhow::Error::new(io()).context("cannot open x");
        assert_eq!(super::error_text(&e), format!("cannot open x: {}", io()));
    }
}
