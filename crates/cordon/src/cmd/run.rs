//! `cordon run`: decide, wrap, run, report.

use crate::cli::{RunArgs, SandboxArg};
use crate::profile_args::choose;
use crate::{EXIT_CANNOT_EXECUTE, EXIT_CORDON, EXIT_NOT_FOUND};
use anyhow::{Context, Result};
use cordon_policy::SandboxPreference;
use cordon_sandbox::{run as spawn, CommandRequest, SandboxManager, TransformError};
use serde_json::json;

pub fn run(args: RunArgs) -> Result<i32> {
    let chosen = choose(&args.profile)?;
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    let mut req = CommandRequest::new(args.command.clone(), cwd, chosen.profile);
    req.preference = match args.sandbox {
        SandboxArg::Auto => SandboxPreference::Auto,
        SandboxArg::Require => SandboxPreference::Require,
        SandboxArg::Forbid => SandboxPreference::Forbid,
    };
    req.profile_files = chosen.files;
    req.allow_unconfined = args.allow_unconfined;
    let json = args.profile.json;

    let manager = SandboxManager::for_host();
    let exec = match manager.transform(&req) {
        Ok(e) => e,
        Err(e) => {
            if json {
                let status = match &e {
                    TransformError::Refused { status, .. } => serde_json::to_value(status)?,
                    _ => serde_json::Value::Null,
                };
                eprintln!(
                    "{}",
                    json!({"outcome": "refused", "reason": e.to_string(), "status": status, "exit_code": EXIT_CORDON})
                );
            }
            eprintln!("cordon: {e}");
            return Ok(EXIT_CORDON as i32);
        }
    };
    if let Some(reason) = &exec.unconfined_reason {
        tracing::warn!(reason = %reason, "running unconfined by explicit opt-in");
        eprintln!("cordon: warning: running UNCONFINED (explicit opt-in): {reason}");
    }
    tracing::debug!(backend = %exec.backend, applied = ?exec.applied, "running");
    let outcome = spawn(&exec);
    let (code, outcome_name) = match &outcome {
        Ok(st) => {
            let code = st.shell_code();
            (code, if code == 0 { "success" } else { "command-failed" })
        }
        Err(e) => {
            let code = match e.kind() {
                std::io::ErrorKind::NotFound => EXIT_NOT_FOUND,
                std::io::ErrorKind::PermissionDenied => EXIT_CANNOT_EXECUTE,
                _ => EXIT_CORDON,
            };
            eprintln!("cordon: {}: {e}", exec.program);
            (code as i32, "refused")
        }
    };
    if json {
        eprintln!(
            "{}",
            json!({
                "outcome": outcome_name,
                "exit_code": code,
                "signal": outcome.as_ref().ok().and_then(|s| s.signal),
                "backend": exec.backend,
                "applied": exec.applied,
                "env_dropped": exec.env_dropped,
                "status": exec.status,
                "unconfined_reason": exec.unconfined_reason,
            })
        );
    }
    Ok(code)
}
