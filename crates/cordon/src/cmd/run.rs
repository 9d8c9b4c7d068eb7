//! `cordon run`: decide, wrap, run, report.

use crate::cli::RunArgs;
use crate::profile_args::{choose, preference};
use crate::{EXIT_CANNOT_EXECUTE, EXIT_CORDON, EXIT_NOT_FOUND};
use anyhow::{Context, Result};
use cordon_sandbox::{run as spawn, CommandRequest, SandboxManager, TransformError};
use serde_json::json;

pub fn run(args: RunArgs) -> Result<i32> {
    let chosen = choose(&args.profile)?;
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    let overlay = chosen.overlay.clone();
    let mut req = CommandRequest::new(args.command.clone(), cwd, chosen.profile);
    req.preference = preference(args.sandbox);
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
    if args.dry_run {
        print_dry_run(&exec, overlay.as_ref(), json)?;
        return Ok(0);
    }
    if let Some(reason) = &exec.unconfined_reason {
        tracing::warn!(reason = %reason, "running unconfined by explicit opt-in");
        eprintln!("cordon: warning: running UNCONFINED (explicit opt-in): {reason}");
    }
    tracing::debug!(backend = %exec.backend, applied = ?exec.applied, "running");
    let outcome = spawn(&exec);
    let (code, outcome_name) = match &outcome {
        Ok(st) => {
            let code = st.shell_code();
            (
                code,
                if code == 0 {
                    "success"
                } else {
                    "command-failed"
                },
            )
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

/// `--dry-run`: the ExecRequest as text or JSON, nothing executed (R-T5).
fn print_dry_run(
    exec: &cordon_sandbox::ExecRequest,
    overlay: Option<&cordon_policy::AdditionalPermissions>,
    json: bool,
) -> Result<()> {
    if json {
        let mut v = serde_json::to_value(exec)?;
        v["additional_permissions"] = serde_json::to_value(overlay)?;
        // Values of the environment stay out of the report; names are enough to review.
        v["env"] = json!(exec.env.iter().map(|(k, _)| k).collect::<Vec<_>>());
        println!("{}", serde_json::to_string_pretty(&v)?);
        return Ok(());
    }
    println!("backend:  {}", exec.backend);
    println!("program:  {}", exec.program);
    let shown: Vec<String> = exec
        .args
        .iter()
        .map(|a| {
            if a.len() > 80 {
                format!("<{} bytes>", a.len())
            } else {
                a.clone()
            }
        })
        .collect();
    println!("args:     {}", shown.join(" "));
    println!("cwd:      {}", exec.cwd.display());
    println!(
        "env:      {} variables passed, dropped as secrets: {}",
        exec.env.len(),
        if exec.env_dropped.is_empty() {
            "none".to_string()
        } else {
            exec.env_dropped.join(", ")
        }
    );
    for (name, f) in [
        ("requested", &exec.status.sandbox_requested),
        ("available", &exec.status.sandbox_available),
        ("enabled", &exec.status.sandbox_enabled),
    ] {
        println!("sandbox_{name:<10} {:<5} {}", f.value, f.reason);
    }
    if let Some(r) = &exec.unconfined_reason {
        println!("UNCONFINED: {r}");
    }
    if let Some(o) = overlay {
        println!(
            "additional permissions (merged, R-O1): {}",
            serde_json::to_string(o)?
        );
    }
    println!("applied:");
    for a in &exec.applied {
        println!("  - {a}");
    }
    if let Some(r) = &exec.resolved {
        if let cordon_policy::ResolvedFilesystem::Restricted { .. } = &r.filesystem {
            println!("writable roots:");
            for e in r.filesystem.writable_roots() {
                println!("  {}", e.path.display());
            }
        }
    }
    Ok(())
}
