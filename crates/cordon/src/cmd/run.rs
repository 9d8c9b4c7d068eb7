//! `cordon run`: decide, wrap, run, report.

use crate::cli::RunArgs;
use crate::exec_rules;
use crate::profile_args::{choose, preference};
use crate::{EXIT_CANNOT_EXECUTE, EXIT_CORDON, EXIT_NOT_FOUND};
use anyhow::{Context, Result};
use cordon_execpolicy::{gate, ApprovalMode, Gate};
use cordon_policy::SandboxPreference;
use cordon_sandbox::{run as spawn, CommandRequest, SandboxManager, TransformError};
use serde_json::json;

pub fn run(args: RunArgs) -> Result<i32> {
    let chosen = choose(&args.profile)?;
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    let overlay = chosen.overlay.clone();
    let json = args.profile.json;
    let mode = ApprovalMode::from(args.approval_mode);

    let mut req = CommandRequest::new(args.command.clone(), cwd, chosen.profile);
    // Exec policy first (R-A2..R-A4): it may forbid, ask, or let a rule bypass the sandbox.
    let policy = exec_rules::load(chosen.config.as_ref(), &args.rules)?;
    let record = exec_rules::evaluate(&policy, &req);
    let gate = gate(&record, mode, args.yes);

    req.preference = preference(args.sandbox);
    if record.sandbox.bypass && req.preference == SandboxPreference::Auto {
        tracing::info!(reason = %record.sandbox.reason, "sandbox bypassed by exec-policy rule");
        req.preference = SandboxPreference::Forbid;
    }
    req.profile_files = chosen.files;
    req.allow_unconfined = args.allow_unconfined;

    let refuse = |reason: String, status: serde_json::Value| -> Result<i32> {
        if json {
            eprintln!(
                "{}",
                json!({"outcome": "refused", "reason": reason, "status": status,
                       "exec_policy": serde_json::to_value(&record)?, "exit_code": EXIT_CORDON})
            );
        }
        eprintln!("cordon: {reason}");
        Ok(EXIT_CORDON as i32)
    };

    // A refusal needs no sandbox to be prepared (a dry run still shows what would be).
    if let (Gate::Refuse { reason }, false) = (&gate, args.dry_run) {
        return refuse(reason.clone(), serde_json::Value::Null);
    }
    let manager = SandboxManager::for_host();
    let exec = match manager.transform(&req) {
        Ok(e) => e,
        Err(e) => {
            let status = match &e {
                TransformError::Refused { status, .. } => serde_json::to_value(status)?,
                _ => serde_json::Value::Null,
            };
            return refuse(e.to_string(), status);
        }
    };
    if args.dry_run {
        print_dry_run(&exec, overlay.as_ref(), &gate, json)?;
        // The exit status says whether the command would run (0) or be refused (125).
        return Ok(match gate {
            Gate::Run { .. } => 0,
            Gate::Refuse { .. } => EXIT_CORDON as i32,
        });
    }
    if !exec.status.sandbox_requested.value
        && req.preference == SandboxPreference::Forbid
        && cordon_policy::should_sandbox(&req.profile, SandboxPreference::Auto, false)
    {
        eprintln!(
            "cordon: warning: running UNCONFINED: {} although profile {:?} asks for a sandbox",
            if record.sandbox.bypass && args.sandbox == crate::cli::SandboxArg::Auto {
                format!(
                    "an exec-policy rule bypasses the sandbox ({})",
                    record.sandbox.reason
                )
            } else {
                "--sandbox forbid".to_string()
            },
            req.profile.name
        );
    }
    if let Some(reason) = &exec.unconfined_reason {
        eprintln!("cordon: warning: running UNCONFINED (explicit opt-in): {reason}");
    }
    tracing::debug!(backend = %exec.backend, applied = ?exec.applied, "running");
    if !json {
        // Nothing to report afterwards: become the command (or the helper) directly, so
        // signals, the exit status and the process tree need no relaying.
        let e = cordon_sandbox::exec_replace(&exec);
        return Ok(spawn_error(&exec, &e));
    }
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
        Err(e) => (spawn_error(&exec, e), "refused"),
    };
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
            "exec_policy": {"decision": record.decision, "reason": record.reason, "gate": gate},
        })
    );
    Ok(code)
}

/// Reports a failure to start `exec` and returns the exit code: 127 not found, 126 cannot
/// execute, else 125.
fn spawn_error(exec: &cordon_sandbox::ExecRequest, e: &std::io::Error) -> i32 {
    let code = match e.kind() {
        std::io::ErrorKind::NotFound => EXIT_NOT_FOUND,
        std::io::ErrorKind::PermissionDenied => EXIT_CANNOT_EXECUTE,
        _ => EXIT_CORDON,
    };
    eprintln!("cordon: {}: {e}", exec.program);
    code as i32
}

/// `--dry-run`: the ExecRequest as text or JSON, nothing executed (R-T5).
fn print_dry_run(
    exec: &cordon_sandbox::ExecRequest,
    overlay: Option<&cordon_policy::AdditionalPermissions>,
    gate: &Gate,
    json: bool,
) -> Result<()> {
    if json {
        let mut v = serde_json::to_value(exec)?;
        v["additional_permissions"] = serde_json::to_value(overlay)?;
        v["approval"] = serde_json::to_value(gate)?;
        // Values of the environment stay out of the report; names are enough to review.
        v["env"] = json!(exec.env.iter().map(|(k, _)| k).collect::<Vec<_>>());
        // The helper payload (passed in the helper's environment) is shown on its own, so
        // the helper can be invoked by hand: `--permission-profile <helper_payload>`. It
        // carries the (already scrubbed) environment values the command will get.
        #[cfg(target_os = "linux")]
        if let Some((_, p)) = exec
            .env
            .iter()
            .find(|(k, _)| k == cordon_sandbox::linux::PAYLOAD_ENV)
        {
            v["helper_payload"] = json!(p);
        }
        v["mount_plan"] = serde_json::to_value(mount_plan(exec))?;
        println!("{}", serde_json::to_string_pretty(&v)?);
        return Ok(());
    }
    match gate {
        Gate::Run { reason } => println!("approval: would run ({reason})"),
        Gate::Refuse { reason } => println!("approval: would REFUSE: {reason}"),
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
    #[cfg(target_os = "linux")]
    if let Some(plan) = mount_plan(exec) {
        println!("mount plan:");
        for (i, s) in plan.steps.iter().enumerate() {
            println!("  {:>2}. {s}", i + 1);
        }
        for n in &plan.notes {
            println!("  note: {n}");
        }
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

/// The mount plan the Linux helper applies on rung 1 (namespaces), computed from the same
/// resolved profile it receives (issue 13 §1); `None` for other backends and rungs.
#[cfg(target_os = "linux")]
fn mount_plan(exec: &cordon_sandbox::ExecRequest) -> Option<cordon_sandbox::linux::Layout> {
    let r = exec.resolved.as_ref()?;
    let rung1 = exec.backend == cordon_policy::Backend::LinuxHelper
        && exec.applied.iter().any(|a| a.contains("namespaces"));
    rung1.then(|| cordon_sandbox::linux::layout_for(r))
}

#[cfg(not(target_os = "linux"))]
fn mount_plan(_exec: &cordon_sandbox::ExecRequest) -> Option<()> {
    None
}
