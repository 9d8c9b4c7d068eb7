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
/// Exit codes (as `env` and `timeout` use them): the command's own code (128+N when killed
/// by signal N: 137 when `--timeout` killed it, as `timeout -s KILL`); 124 when a limit of
/// the profile ended it (`limits.timeout`, pids, memory); 125 when cordon fails or
/// refuses; 126 when the command cannot be executed; 127 when it is not found.
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
    /// Decide allow / ask / forbid for a command without running it: parse it (bash -c
    /// scripts included), match the rules, and print the decision record.
    Check(CheckArgs),
    /// List the built-in and configured profiles.
    Profiles(ProfileArgs),
    /// Print the environment_context XML the model is given: its limits, rendered from the
    /// same profile object that is enforced.
    Context(ContextArgs),
    /// Explain, for each PATH, the effective access and which entry (file:line, built-in or
    /// flag) decided it; plus the network decision, the sandbox decision and what the host
    /// lacks.
    Explain(ExplainArgs),
    /// Copy-on-write package caches (R-C1): list or clear the private layers kept per
    /// workspace under ~/.cache/cordon/overlays.
    #[command(subcommand)]
    Cache(CacheCommand),
    /// Run the filtering proxy standalone (HTTP absolute-form, CONNECT and SOCKS5 on one
    /// port) with the profile's network.allow/deny/ports plus --allow/--deny/--port, for a
    /// harness that confines the command by other means. Runs until killed.
    Proxy(ProxyArgs),
    /// Run escape probes (move .git aside, hard link out, inherited descriptor, other
    /// processes' environment, TIOCSTI, …) and "still works" probes through `cordon run` on
    /// this host, and print a pass/fail table for bug reports. Exit 1 if a probe fails.
    Selftest(SelftestArgs),
    /// Run the per-user launch server: `cordon run` then forks each sandbox helper from it
    /// instead of executing a second cordon (every guarantee unchanged; `--no-server` opts
    /// out). Listens on $XDG_RUNTIME_DIR/cordon/serve.sock (0600) until killed. Commands in
    /// a git repository still take the cold path for now (their writable .git/config copy
    /// is per command): `cordon run --json` says which path a run took (`launch`) and why
    /// it was sent back (`server_sent_back`).
    Serve(ServeArgs),
    /// Serve the sandbox to an agent over MCP on stdin/stdout: tools exec_command,
    /// write_stdin, read_output, kill; the environment_context as a resource; approvals
    /// asked through MCP elicitation when the client supports it, else denied (R-A6).
    Mcp(McpArgs),
}

/// `cordon serve`.
#[derive(Debug, clap::Args)]
pub struct ServeArgs {
    /// The socket to listen on (default: $CORDON_SERVE_SOCKET, else
    /// $XDG_RUNTIME_DIR/cordon/serve.sock, else /run/user/UID/cordon/serve.sock, else
    /// /tmp/cordon-UID/serve.sock — the host's /tmp, never $TMPDIR).
    #[arg(long, value_name = "PATH")]
    pub socket: Option<std::path::PathBuf>,
    /// Print the socket path and exit.
    #[arg(long)]
    pub print_socket: bool,
    /// Fork the per-command helper for every command instead of forking from prepared
    /// sandbox templates (slower; for comparison).
    #[arg(long)]
    pub no_templates: bool,
}

/// `cordon mcp`.
#[derive(Debug, Args)]
// Its results are MCP messages: `--json` changes nothing here (nu20 G7).
#[command(mut_arg("json", |a| a.hide(true)))]
pub struct McpArgs {
    #[command(flatten)]
    pub profile: ProfileArgs,
    #[command(flatten)]
    pub rules: RulesArgs,
    /// Approval mode (R-A5): untrusted, on-request, on-failure, never, bypass.
    #[arg(long, value_enum, default_value_t = ApprovalArg::OnRequest)]
    pub approval_mode: ApprovalArg,
    /// Kill a session (and forget it) when no tool call named it for DURATION.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, default_value = "30m")]
    pub idle_timeout: std::time::Duration,
}

/// `cordon cache`.
#[derive(Debug, Subcommand)]
pub enum CacheCommand {
    /// List the known caches and the private layers kept for each workspace.
    List(CacheArgs),
    /// Remove private layers: every workspace's, or with --workspace only the current
    /// workspace's (the host caches are never touched). A workspace whose layers a running
    /// command is using is skipped and reported as busy ("busy" in --json); that is not an
    /// error (exit 0: clear again after the run ends). Exit 1 when a removal failed (each
    /// failure is named; the other workspaces are still cleared).
    Clear(CacheArgs),
}

/// Options of `cordon cache list|clear`.
#[derive(Debug, Args)]
pub struct CacheArgs {
    /// Only the workspace of the current directory.
    #[arg(long)]
    pub workspace: bool,
    /// Output machine-readable JSON.
    #[arg(long)]
    pub json: bool,
}

/// `cordon selftest`.
#[derive(Debug, Args)]
pub struct SelftestArgs {
    /// Print the probe script (POSIX sh) instead of running it.
    #[arg(long)]
    pub print_script: bool,
    /// Output machine-readable JSON.
    #[arg(long)]
    pub json: bool,
}

/// `cordon proxy` options.
#[derive(Debug, Clone, Args)]
pub struct ProxyArgs {
    /// Address to listen on (port 0 picks a free one; the chosen address is printed).
    #[arg(long, default_value = "127.0.0.1:0", value_name = "ADDR")]
    pub listen: std::net::SocketAddr,
    /// Allow HOST (repeatable): `example.com`, `*.example.com` (subdomains),
    /// `**.example.com` (apex and subdomains), `10.0.0.5`, `127.0.0.0/8`, each optionally
    /// `:PORT`. A bare `*` is refused.
    #[arg(long, value_name = "HOST")]
    pub allow: Vec<String>,
    /// Deny HOST (repeatable; deny wins over allow).
    #[arg(long, value_name = "HOST")]
    pub deny: Vec<String>,
    /// Only these destination ports (repeatable; default: any).
    // 0 is refused here, naming the flag (new-user pass: `--port 0` said
    // `network.ports: 0 is not a port`, the profile's key).
    #[arg(long = "port", value_name = "PORT", value_parser = clap::value_parser!(u16).range(1..))]
    pub ports: Vec<u16>,
    /// Append every decision as one JSON line to FILE.
    #[arg(long, value_name = "FILE")]
    pub log: Option<PathBuf>,
    /// Resolve NAME to IP instead of asking DNS (repeatable, `NAME=IP`); when given, names
    /// not listed do not resolve. For tests and benchmarks.
    #[arg(long = "map", value_name = "NAME=IP")]
    pub map: Vec<String>,
    /// Worker threads.
    #[arg(long, default_value_t = 2)]
    pub threads: usize,
    /// Take network.allow/deny/ports from this profile too (default: none; with --config
    /// alone, the file's default_profile).
    #[arg(short, long)]
    pub profile: Option<String>,
    /// Config file with named profiles.
    #[arg(short, long)]
    pub config: Option<PathBuf>,
    /// Print the listening address as JSON (`{"listen": "127.0.0.1:PORT"}`).
    #[arg(long)]
    pub json: bool,
}

/// How to choose and adjust the profile (shared by several subcommands).
#[derive(Debug, Clone, Args)]
pub struct ProfileArgs {
    /// Profile name: workspace-write, read-only, danger-full-access, or one defined in the
    /// config file (default: the config file's `default_profile`, else workspace-write).
    #[arg(short, long, env = "CORDON_PROFILE")]
    pub profile: Option<String>,
    /// Config file with named profiles (default: ~/.config/cordon/config.toml if present).
    #[arg(short, long, env = "CORDON_CONFIG")]
    pub config: Option<PathBuf>,
    /// Also make PATH writable for the command (with `cordon mcp`: for every command it runs;
    /// repeatable). An additional permission merged
    /// into the profile (R-O1); it never narrows anything.
    #[arg(
        short = 'w',
        long = "writable",
        visible_alias = "allow-write",
        value_name = "PATH"
    )]
    pub writable: Vec<PathBuf>,
    /// Enable the network for the command (with `cordon mcp`: for every command it runs; an
    /// additional permission, R-O1).
    #[arg(long)]
    pub allow_network: bool,
    /// Additional permissions as JSON, e.g.
    /// '{"network":true,"entries":[{"path":"/data","access":"write"}]}' (R-O1; with `cordon
    /// mcp`: for every command it runs).
    #[arg(long = "with", value_name = "PERMS")]
    pub with: Option<String>,
    /// Hide PATH from reads (repeatable; with `cordon mcp`: for every command it runs).
    /// PATH may start with a profile root (`:workspace/secrets`), as in a profile entry.
    #[arg(long = "deny-read", value_name = "PATH")]
    pub deny_read: Vec<PathBuf>,
    /// Network access for the command (with `cordon mcp`: every command it runs): `on`
    /// (or `enabled`), `off` (or `restricted`: a private loopback only) or `managed` (out only through cordon's filtering proxy, by the profile's
    /// `network.allow`/`deny`/`ports`; unknown hosts are asked about, or denied without a
    /// person).
    #[arg(long, value_enum)]
    pub network: Option<NetworkArg>,
    /// Forward this host loopback port into the sandbox (repeatable), e.g.
    /// `127.0.0.1:5432`: added to the profile's `network.local`; nothing else of the
    /// host's loopback is reachable.
    #[arg(long = "local-port", value_name = "ADDR:PORT")]
    pub local_port: Vec<String>,
    /// Output machine-readable JSON (`cordon run`: the run report, as the last line of
    /// stderr, the command's own output untouched, and with --dry-run on stdout; the
    /// other subcommands: on stdout).
    #[arg(long)]
    pub json: bool,
}

/// `--network` values. The profile's words are values of their own, not hidden aliases,
/// so that an error's "possible values" lists every word accepted (new-user pass:
/// `--network bogus` listed `on, off, managed`; `enabled` and `restricted` work too).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum NetworkArg {
    /// Network enabled.
    On,
    /// `on`, in the profile's word.
    Enabled,
    /// Network restricted: the command's own private loopback (127.0.0.1, ::1) and unix
    /// sockets in its writable roots; nothing of the host or beyond.
    Off,
    /// `off`, in the profile's word.
    Restricted,
    /// Out only through cordon's filtering proxy (HTTP, CONNECT, SOCKS5 at
    /// 127.0.0.1:3128; `HTTP_PROXY` & co. set): the profile's `network.allow`, `deny`
    /// and `ports` decide per host; unknown hosts are asked about (or denied).
    Managed,
}

impl NetworkArg {
    /// The profile's network policy this value sets.
    pub fn policy(self) -> cordon_policy::NetworkPolicy {
        match self {
            NetworkArg::On | NetworkArg::Enabled => cordon_policy::NetworkPolicy::Enabled,
            NetworkArg::Off | NetworkArg::Restricted => cordon_policy::NetworkPolicy::Restricted,
            NetworkArg::Managed => cordon_policy::NetworkPolicy::Managed,
        }
    }
}

/// `--backend` values (with `--dry-run`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum BackendArg {
    /// The macOS Seatbelt policy (`sandbox-exec -p … -D …`).
    Seatbelt,
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
    #[command(flatten)]
    pub rules: RulesArgs,
    /// Approval mode (R-A5): untrusted, on-request, on-failure, never, bypass.
    #[arg(long, value_enum, default_value_t = ApprovalArg::OnRequest)]
    pub approval_mode: ApprovalArg,
    /// Approve once, without asking, a command the exec policy would ask about.
    #[arg(short = 'y', long)]
    pub yes: bool,
    /// Never prompt: what would be asked is refused with the reason (R-A6). The default
    /// when stdin or stderr is not a terminal.
    #[arg(long)]
    pub non_interactive: bool,
    /// Read approval answers from FILE, or from descriptor N (`fd:N`): one JSON value per
    /// line, `"once"`, `"session"`, `"remember-rule"`, `"deny"`, `"abort"`, or
    /// `{"answer": "once", "approval_id": "…"}`. No answer left = deny.
    #[arg(long, value_name = "FILE|fd:N")]
    pub approvals_from: Option<String>,
    /// Share "for this session" approvals across runs with this id (kept in
    /// $XDG_STATE_HOME/cordon/sessions/ID.json, else ~/.local/state/cordon/sessions/).
    #[arg(long, value_name = "ID")]
    pub session: Option<String>,
    /// Do not use a running `cordon serve`: start the sandbox helper here (the cold path).
    #[arg(long)]
    pub no_server: bool,
    /// Kill the whole process tree after DURATION (e.g. 100ms, 30s, 5m; a bare number is
    /// seconds, as for `timeout`); outcome timed-out, exit 137 (as `timeout -s KILL`).
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub timeout: Option<std::time::Duration>,
    /// Plan mode (R-A10): run with the read-only view of the profile (nothing writable, no
    /// network).
    #[arg(long)]
    pub plan: bool,
    /// Print the ExecRequest (program, args, cwd, env names, backend, what is applied)
    /// without running anything. With --json, as JSON on stdout. Exits 0 if the command
    /// would run, 1 if it would ask for approval, 125 if it would be refused.
    #[arg(long)]
    pub dry_run: bool,
    /// Write the JSON report (outcome, exit code, what the sandbox really applied) to FILE
    /// when the run ends (created or truncated; refusals included). Unlike `--json`, whose
    /// report shares stderr with the command, the command cannot forge it. With `--json`
    /// too, the same report also ends stderr.
    #[arg(long, value_name = "FILE")]
    pub report: Option<PathBuf>,
    /// Write the JSON report to the inherited descriptor N (e.g. `3>&1 >/dev/null | jq .`) instead
    /// of stderr. N must be 3 or above, open, and open for writing; the command never
    /// inherits it. A report that cannot be written after the run exits 125.
    #[arg(long, value_name = "N", conflicts_with = "report")]
    pub json_fd: Option<i32>,
    /// With --dry-run: show what this backend would run instead of the host's.
    /// `seatbelt` prints the macOS SBPL policy and its -D parameters, on any host.
    #[arg(long, value_enum, requires = "dry_run")]
    pub backend: Option<BackendArg>,
    /// If the sandbox is needed but this host cannot give it, run unconfined anyway
    /// (logged; the default is to refuse with exit 125).
    #[arg(long)]
    pub allow_unconfined: bool,
    /// The command and its arguments (after `--`).
    #[arg(required = true, last = true, value_name = "CMD", value_parser = command_arg())]
    pub command: Vec<String>,
}

/// A command argument as UTF-8 text, or an error that names the argument (bad bytes as
/// `\xNN`) and what to do: the command reaches the sandbox helper and the run's report
/// as JSON text, which cannot carry other bytes. Before, clap's own "invalid UTF-8 was
/// detected in one or more arguments" named neither the argument nor a way round it.
fn command_arg() -> impl clap::builder::TypedValueParser<Value = String> {
    use clap::builder::TypedValueParser;
    clap::builder::OsStringValueParser::new().try_map(|a| {
        a.into_string().map_err(|bad| {
            format!(
                "the argument {} is not valid UTF-8, and cordon carries the command to the \
                 sandbox as UTF-8 text; let a shell inside the sandbox name the file instead \
                 (e.g. `-- sh -c 'cat ./caf*.txt'`), or rename it",
                cordon_policy::paths::escaped(bad.as_encoded_bytes())
            )
        })
    })
}

/// The longest `DURATION` taken (a year): a deadline is the clock plus it.
const MAX_DURATION: std::time::Duration = std::time::Duration::from_secs(365 * 24 * 3600);

fn parse_duration(s: &str) -> Result<std::time::Duration, String> {
    // A bare number is seconds, as `timeout 1` takes it (new-user pass 182 #9: `--timeout
    // 1` was refused for its missing unit); a fraction too (`1.5`).
    let seconds = s
        .parse::<f64>()
        .ok()
        .filter(|n| {
            n.is_finite() && *n >= 0.0 && s.bytes().all(|b| b.is_ascii_digit() || b == b'.')
        })
        .map(|n| std::time::Duration::try_from_secs_f64(n).map_err(|e| e.to_string()));
    match seconds.unwrap_or_else(|| humantime::parse_duration(s).map_err(|e| e.to_string())) {
        // `--timeout 0s` killed the command at once (new user, stop 19).
        Ok(d) if d.is_zero() => Err("must be more than 0 (examples: 100ms, 30s, 5m)".into()),
        // A deadline past what the clock can add panicked (attack pass 183, F2:
        // `--timeout 9999999999999999999`, exit 134).
        Ok(d) if d > MAX_DURATION => Err(format!(
            "{s} is longer than cordon waits for anything (365 days); use a shorter one, or none"
        )),
        Ok(d) => Ok(d),
        Err(e) => Err(format!(
            "{e} (examples: 100ms, 30s, 5m; a bare number is seconds)"
        )),
    }
}

/// `cordon status`.
#[derive(Debug, Args)]
pub struct StatusArgs {
    #[command(flatten)]
    pub profile: ProfileArgs,
}

/// `cordon context`.
#[derive(Debug, Args)]
pub struct ContextArgs {
    #[command(flatten)]
    pub profile: ProfileArgs,
    /// Sandbox preference: auto (from the profile), require, forbid.
    #[arg(long, value_enum, default_value_t)]
    pub sandbox: SandboxArg,
    /// Approval mode shown to the model (R-A5).
    #[arg(long, value_enum, default_value_t = ApprovalArg::OnRequest)]
    pub approval_mode: ApprovalArg,
    /// List every hidden path; by default the built-in credential stores are one
    /// `<deny_read_group>` element (`cordon explain credential-stores` lists them).
    #[arg(long)]
    pub full: bool,
}

/// `cordon explain`.
#[derive(Debug, Args)]
pub struct ExplainArgs {
    #[command(flatten)]
    pub profile: ProfileArgs,
    /// Sandbox preference: auto (from the profile), require, forbid.
    #[arg(long, value_enum, default_value_t)]
    pub sandbox: SandboxArg,
    /// Paths to explain (absolute or relative to the cwd).
    #[arg(value_name = "PATH")]
    pub paths: Vec<PathBuf>,
}

/// Exec-policy rule sources (shared by `run` and `check`).
#[derive(Debug, Clone, Args)]
pub struct RulesArgs {
    /// Extra exec-policy rules file (TOML with `[[rules]]`), in addition to the config
    /// file's rules (repeatable).
    #[arg(long = "rules", value_name = "FILE")]
    pub rules: Vec<PathBuf>,
}

/// `--approval-mode` values (R-A5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ApprovalArg {
    /// Ask for anything not known-safe.
    Untrusted,
    /// Run sandboxed; ask when a rule or a dangerous finding says so.
    OnRequest,
    /// The same as on-request: run sandboxed; ask when a rule or a dangerous finding says
    /// so (and for a wider retry after a denial, as on-request).
    OnFailure,
    /// Never ask: what would be asked is refused.
    Never,
    /// No approvals (no isolation of its own; forbid still refuses).
    Bypass,
}

impl From<ApprovalArg> for cordon_execpolicy::ApprovalMode {
    fn from(a: ApprovalArg) -> Self {
        use cordon_execpolicy::ApprovalMode as M;
        match a {
            ApprovalArg::Untrusted => M::Untrusted,
            ApprovalArg::OnRequest => M::OnRequest,
            ApprovalArg::OnFailure => M::OnFailure,
            ApprovalArg::Never => M::Never,
            ApprovalArg::Bypass => M::Bypass,
        }
    }
}

/// `cordon check`.
#[derive(Debug, Args)]
pub struct CheckArgs {
    #[command(flatten)]
    pub profile: ProfileArgs,
    #[command(flatten)]
    pub rules: RulesArgs,
    /// Approval mode to judge the decision under (R-A5), as `cordon run` would.
    #[arg(long, value_enum, default_value_t = ApprovalArg::OnRequest)]
    pub approval_mode: ApprovalArg,
    /// The command and its arguments (after `--`), e.g. `-- bash -lc "make && make test"`.
    #[arg(required = true, last = true, value_name = "CMD", value_parser = command_arg())]
    pub command: Vec<String>,
}

#[cfg(test)]
mod tests {
    /// A bare number is seconds, as `timeout` takes it (new-user pass 182 #9); units still
    /// work; zero, negative and junk are refused.
    #[test]
    fn a_bare_timeout_is_seconds() {
        use std::time::Duration;
        assert_eq!(parse_duration("1"), Ok(Duration::from_secs(1)));
        assert_eq!(parse_duration("1.5"), Ok(Duration::from_millis(1500)));
        assert_eq!(parse_duration("250ms"), Ok(Duration::from_millis(250)));
        assert!(parse_duration("0").is_err());
        assert!(parse_duration("-1").is_err());
        assert!(parse_duration("1e3").is_err());
        // Attack pass 183, F2: these panicked (exit 134).
        for huge in [
            "9999999999999999999",
            "99999999999999999999",
            "18446744073709552",
            "1000y",
        ] {
            assert!(parse_duration(huge).is_err(), "{huge}");
        }
        assert_eq!(parse_duration("365d"), Ok(MAX_DURATION));
        assert!(parse_duration("soon")
            .unwrap_err()
            .contains("a bare number is seconds"));
    }

    use super::*;
    use clap::CommandFactory;
    use std::collections::BTreeSet;

    const README: &str = include_str!("../../../README.md");

    /// Flags of other tools the README mentions (cargo, git, bash …), not cordon's.
    const OTHER_TOOLS: &[&str] = &[
        "--workspace",
        "--skip",            // another tool's flag named in the README's exec-policy lists
        "--setup",           // another tool's flag named in the README's exec-policy lists
        "--quit",            // another tool's flag named in the README's exec-policy lists
        "--prepare",         // another tool's flag named in the README's exec-policy lists
        "--conclude",        // another tool's flag named in the README's exec-policy lists
        "--cleanup",         // another tool's flag named in the README's exec-policy lists
        "--abort",           // another tool's flag named in the README's exec-policy lists
        "--norc",            // bash, in Known limits (a shell given options only)
        "--show-toplevel",   // git rev-parse, in the git config section
        "--exec",            // git rebase, in the git config section (aliases)
        "--discard-changes", // git switch, in the exec policy paragraph
        "--prune",           // git push, in the exec policy paragraph
        "--prune-tags",      // git fetch, in the exec policy paragraph
        "--tags",            // git fetch, in the exec policy paragraph
        "--remove-source-files", // rsync, in the exec policy paragraph
        "--args",            // gdb, in the exec policy paragraph (wrappers)
        "--colsep",          // GNU parallel, in the exec policy paragraph
        "--rename-section",  // git config, in the exec policy paragraph
        "--edit",            // git config, in the exec policy paragraph
        "--theirs",          // git checkout, in the exec policy paragraph
        "--staged",          // git restore, in the exec policy paragraph
        "--merge",           // git reset, in the exec policy paragraph
        "--force-with-lease", // git push, in the exec policy paragraph
        "--delete",          // git push, in the exec policy paragraph
        "--force",           // git worktree remove, in the exec policy paragraph
        "--force-remove",    // git update-index, in the exec policy paragraph
        "--separate-git-dir", // git init, in the git config section
        "--ignore-submodules", // git status, in Known limits
        "--skip-worktree",   // git update-index, in Known limits
        "--assume-unchanged",
        "--example",
        "--locked",
        "--release",
        "--short",
        "--hard",
        "--force",
        "--continue",
        "--depth",
        "--all-targets",
        "--test",
        "--zap-all",           // sgdisk, in the list of disk-destroying commands
        "--to-command",        // tar, in the exec policy paragraph (tool languages)
        "--checkpoint-action", // tar, likewise
        "--eval",              // make, likewise
        "--har",               // `git reset --har?`, a glob, in the exec policy paragraph
        "--mirror",            // git remote add, in the exec policy paragraph
        "--rcfile",            // bash, likewise
        "--expire",            // git prune, likewise
        "--run",               // nix-shell, likewise
        "--output",            // git diff, likewise
        "--keep",              // git reset, likewise
        "--config-env",        // git, likewise
    ];

    /// Every `--long` flag (and alias) of every subcommand, plus globals.
    fn clap_flags() -> BTreeSet<String> {
        let cmd = Cli::command();
        let mut out = BTreeSet::new();
        let mut add = |c: &clap::Command| {
            for a in c.get_arguments() {
                if let Some(l) = a.get_long() {
                    out.insert(format!("--{l}"));
                }
                for al in a.get_all_aliases().unwrap_or_default() {
                    out.insert(format!("--{al}"));
                }
                if let Some(s) = a.get_short() {
                    out.insert(format!("-{s}"));
                }
            }
        };
        add(&cmd);
        for sc in cmd.get_subcommands() {
            add(sc);
        }
        out.insert("--help".into());
        out.insert("--version".into());
        out
    }

    /// `--word` tokens in the README.
    fn readme_flags() -> BTreeSet<String> {
        let b = README.as_bytes();
        let mut out = BTreeSet::new();
        let mut i = 0;
        while i + 2 < b.len() {
            let boundary = i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'-');
            if boundary && b[i] == b'-' && b[i + 1] == b'-' && b[i + 2].is_ascii_lowercase() {
                let mut j = i + 2;
                while j < b.len() && (b[j].is_ascii_lowercase() || b[j] == b'-') {
                    j += 1;
                }
                out.insert(README[i..j].trim_end_matches('-').to_string());
                i = j;
            } else {
                i += 1;
            }
        }
        out
    }

    /// Issue 8 §6: the README names only flags cordon has (`-w` is `--writable`, alias
    /// `--allow-write`), and every flag of the main subcommands is documented.
    #[test]
    fn readme_flags_match_clap() {
        let clap = clap_flags();
        for f in readme_flags() {
            assert!(
                clap.contains(&f) || OTHER_TOOLS.contains(&f.as_str()),
                "README mentions {f}, which cordon does not have (another tool's flag? add \
                 it to OTHER_TOOLS)"
            );
        }
        let documented = readme_flags();
        let cmd = Cli::command();
        for sc in cmd.get_subcommands() {
            for a in sc.get_arguments() {
                if let Some(l) = a.get_long() {
                    let f = format!("--{l}");
                    assert!(
                        documented.contains(&f),
                        "`cordon {}` has {f}, which the README does not mention",
                        sc.get_name()
                    );
                }
            }
        }
        for sc in ["run", "check", "explain", "context", "status", "profiles"] {
            assert!(
                README.contains(&format!("cordon {sc}")),
                "README does not show `cordon {sc}`"
            );
        }
        // -w's long name, as the README spells it.
        assert!(README.contains("`--writable PATH`"));
    }

    /// New-user pass 150, item 4: `on-failure` was described as "ask only to escalate",
    /// while it asks exactly as `on-request` does (the gate's table in
    /// `cordon_execpolicy::approval`, the escalation and host asks, the README): its help
    /// says so, in every subcommand that takes the flag.
    #[test]
    fn on_failure_help_says_it_asks_as_on_request() {
        let cmd = Cli::command();
        let mut seen = Vec::new();
        for sc in cmd.get_subcommands() {
            for a in sc.get_arguments() {
                if a.get_long() != Some("approval-mode") {
                    continue;
                }
                let help = |name: &str| {
                    a.get_possible_values()
                        .into_iter()
                        .find(|v| v.get_name() == name)
                        .and_then(|v| v.get_help().map(|h| h.to_string()))
                        .unwrap_or_default()
                };
                let f = help("on-failure");
                assert!(
                    f.starts_with("The same as on-request") && !f.contains("only"),
                    "{}: {f}",
                    sc.get_name()
                );
                seen.push(sc.get_name().to_string());
            }
        }
        assert_eq!(seen, ["run", "check", "context", "mcp"]);
    }
}
