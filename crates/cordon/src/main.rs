//! `cordon`: run a command confined by a permission profile.
//!
//! A thin shell over the libraries: argument parsing and printing live here; every decision
//! is made in `cordon-policy`, `cordon-execpolicy` and `cordon-sandbox`.

mod cli;
mod cmd;
mod profile_args;

use clap::Parser as _;
use std::process::ExitCode;

use cordon_sandbox::CordonExit;

/// Exit code when cordon itself fails or refuses (like `env`/`timeout`).
pub const EXIT_CORDON: u8 = CordonExit::Failed.code();
/// Exit code when the command exists but cannot be executed.
pub const EXIT_CANNOT_EXECUTE: u8 = CordonExit::CannotExecute.code();
/// Exit code when the command is not found.
pub const EXIT_NOT_FOUND: u8 = CordonExit::NotFound.code();

/// clap's message without its `error: `, its usage and its "for more information" line,
/// on one line: the whole of it (new-user pass: `check --json` with no command gave
/// "the following required arguments were not provided:", the arguments cut off).
fn usage_error_text(rendered: &str) -> String {
    let mut out = String::new();
    for line in rendered
        .lines()
        .map(str::trim)
        .take_while(|l| !l.starts_with("Usage:") && !l.starts_with("For more information"))
        .filter(|l| !l.is_empty())
    {
        if !out.is_empty() {
            out.push_str(if out.ends_with(':') { " " } else { "; " });
        }
        out.push_str(line.strip_prefix("error: ").unwrap_or(line));
    }
    out
}

fn main() -> ExitCode {
    // Before anything forks: an inherited "ignore" would have the kernel reap every child
    // (attack pass 35, L1: cordon hung once the command ended).
    #[cfg(unix)]
    cordon_sandbox::restore_default_sigchld();
    // The Linux helper is this same executable re-invoked (R-T3). Dispatch it before any
    // other work so it stays small and fast.
    #[cfg(target_os = "linux")]
    {
        let mut args = std::env::args_os();
        let _exe = args.next();
        if let Some(first) = args.next() {
            if first == cordon_sandbox::linux::HELPER_SUBCOMMAND {
                let code = cordon_sandbox::linux::helper_main(args.collect());
                return ExitCode::from(code.clamp(0, 255) as u8);
            }
        }
    }
    #[cfg(unix)]
    cordon_sandbox::restore_default_sigpipe();
    let cli = match cli::Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            use clap::error::ErrorKind;
            let code = match e.kind() {
                // Asked for. `cordon` with no command prints the help too, but as a usage
                // mistake (nu20 G7: it exited 0, unlike every other one).
                ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => 0,
                _ => EXIT_CORDON,
            };
            let _ = e.print();
            // The subcommand given (`run` or `check`), named in the hint (new-user pass:
            // `cordon check --json` was told `e.g. \`cordon run -- ls -la\``).
            let flags: Vec<std::ffi::OsString> = std::env::args_os()
                .skip(1)
                .take_while(|a| a != "--")
                .collect();
            let sub = flags
                .iter()
                .find(|a| *a == "run" || *a == "check")
                .map(|a| a.to_string_lossy().into_owned());
            let dashes = std::env::args_os().any(|a| a == "--");
            if let Some(sub) = &sub {
                if matches!(
                    e.kind(),
                    ErrorKind::UnknownArgument | ErrorKind::MissingRequiredArgument
                ) && !dashes
                {
                    // Already there: the error is about a misspelled flag (nu7). `args_os`:
                    // `args` panics on an argument that is not UTF-8 (L2).
                    eprintln!("hint: put the command after `--`, e.g. `cordon {sub} -- ls -la`");
                } else if e.kind() == ErrorKind::MissingRequiredArgument
                    && std::env::args_os().last().is_some_and(|a| a == "--")
                {
                    // `cordon run --` with nothing after it (new-user pass nu58).
                    eprintln!("hint: name the command after `--`, e.g. `cordon {sub} -- ls -la`");
                }
            }
            if code != 0 {
                // Last, so that a `--json` object is the last line of stderr.
                let raw: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
                let error = usage_error_text(&e.render().to_string());
                cmd::usage_refusal_report(&raw, &error);
                cmd::json_error_report(&raw, &error);
            }
            return ExitCode::from(code);
        }
    };
    // Logging is opt-in (-v or CORDON_LOG): building the filter costs start-up time that
    // every sandboxed command would pay.
    if cli.verbose || std::env::var_os("CORDON_LOG").is_some() {
        let filter = tracing_subscriber::EnvFilter::try_from_env("CORDON_LOG")
            .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("debug"));
        tracing_subscriber::fmt()
            .with_writer(std::io::stderr)
            .with_env_filter(filter)
            // Colour codes only for a terminal: a log file or a harness reading stderr gets
            // plain text.
            .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
            .without_time()
            .init();
    }
    let code = match cmd::dispatch(cli) {
        Ok(code) => code,
        Err(e) => {
            let et = cmd::error_text(&e);
            eprintln!("cordon: {et}");
            let raw: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
            cmd::json_error_report(&raw, &cmd::error_text(&e));
            EXIT_CORDON as i32
        }
    };
    ExitCode::from(code.clamp(0, 255) as u8)
}
