//! `cordon run`: build the trust profile, then hand the tool call to the decision loop
//! (`cordon_session::drive`: rules → approval → sandbox → run → classify → hint/escalate)
//! and report its outcome.

use crate::cli::{RunArgs, SandboxArg};
use crate::profile_args::{preference, trust};
use crate::EXIT_CORDON;
use anyhow::Result;
use cordon_execpolicy::{gate, ApprovalMode, Gate};
use cordon_policy::SandboxPreference;
use cordon_sandbox::{SandboxManager, TransformError};
use cordon_session::{drive, Report, RunSpec, Session};
use serde_json::json;

pub fn run(args: RunArgs) -> Result<i32> {
    let trust = trust("run", &args.profile, &args.rules.rules, args.plan)?;
    let mode = ApprovalMode::from(args.approval_mode);
    if args.dry_run {
        return dry_run(&args, &trust, mode);
    }
    let mut session = Session::for_cli(
        mode,
        args.approvals_from.as_deref(),
        args.yes,
        args.non_interactive,
        args.session.as_deref(),
    )
    .map_err(anyhow::Error::msg)?;
    let spec = RunSpec {
        argv: args.command.clone(),
        preference: preference(args.sandbox),
        preference_is_default: args.sandbox == SandboxArg::Auto,
        allow_unconfined: args.allow_unconfined,
        timeout: args.timeout,
        allow_unsandboxed_retry: false,
        // stderr is captured for classification, except for a program started without
        // arguments at a terminal (`cordon run -- bash`, a REPL): it keeps the terminal, so
        // an interactive shell stays interactive.
        capture_stderr: args.profile.json || !cordon_session::has_tty() || args.command.len() > 1,
    };
    let report = drive(&mut session, &SandboxManager::for_host(), &trust, &spec);
    print_report(&report, &session, args.profile.json)?;
    Ok(report.last().outcome.exit_code)
}

/// One stderr line per attempt (refusal reason or hint), and with `--json` the report with
/// the recorded decisions (R-A10).
fn print_report(report: &Report, session: &Session, json: bool) -> Result<()> {
    let mut r = Some(report);
    while let Some(a) = r {
        let o = &a.outcome;
        if let cordon_session::OutcomeClass::Refused { why } = &o.class {
            eprintln!("cordon: {why}");
        } else if let Some(h) = &o.hint {
            eprintln!("cordon: {}: {h}", o.class.name());
        }
        r = a.retry.as_deref();
    }
    if json {
        let last = report.last();
        let mut v = serde_json::to_value(report)?;
        let exec = last.exec.as_ref();
        v["exit_code"] = json!(last.outcome.exit_code);
        v["signal"] = json!(last.outcome.signal);
        v["backend"] = json!(exec.map(|e| e.backend));
        v["applied"] = json!(exec.map(|e| &e.applied));
        v["env_dropped"] = json!(exec.map(|e| &e.env_dropped));
        v["status"] = json!(exec.map(|e| &e.status));
        v["unconfined_reason"] = json!(exec.and_then(|e| e.unconfined_reason.as_ref()));
        // The outcome fields at the top level (`outcome`, `path`, `hint`, …) for the last
        // attempt; every attempt's outcome is under `outcome_detail` / `retry`.
        v["outcome_detail"] = serde_json::to_value(&report.outcome)?;
        v["decisions"] = serde_json::to_value(session.scope.log())?;
        if let serde_json::Value::Object(m) = serde_json::to_value(&last.outcome)? {
            for (k, x) in m {
                v[k] = x;
            }
        }
        if let cordon_session::OutcomeClass::Refused { why } = &last.outcome.class {
            v["reason"] = json!(why);
        }
        eprintln!("{}", serde_json::to_string(&v)?);
    }
    Ok(())
}

/// `--dry-run`: what would run, nothing executed, nobody asked (`--yes` counts as the
/// answer).
fn dry_run(
    args: &RunArgs,
    trust: &cordon_session::TrustProfile,
    mode: ApprovalMode,
) -> Result<i32> {
    let json = args.profile.json;
    let mut req = trust.command(args.command.clone());
    let record = trust.evaluate(&req);
    let gate = gate(&record, mode, args.yes);
    req.preference = preference(args.sandbox);
    if record.sandbox.bypass && req.preference == SandboxPreference::Auto {
        req.preference = SandboxPreference::Forbid;
    }
    req.allow_unconfined = args.allow_unconfined;
    let exec = match SandboxManager::for_host().transform(&req) {
        Ok(e) => e,
        Err(e) => {
            let status = match &e {
                TransformError::Refused { status, .. } => serde_json::to_value(status)?,
                _ => serde_json::Value::Null,
            };
            if json {
                eprintln!(
                    "{}",
                    json!({"outcome": "refused", "reason": e.to_string(), "status": status,
                           "exec_policy": serde_json::to_value(&record)?, "exit_code": EXIT_CORDON})
                );
            }
            eprintln!("cordon: {e}");
            return Ok(EXIT_CORDON as i32);
        }
    };
    print_dry_run(&exec, trust.additional.as_ref(), &gate, json)?;
    // The exit status says whether the command would run (0) or be refused (125).
    Ok(match gate {
        Gate::Run { .. } => 0,
        Gate::Refuse { .. } => EXIT_CORDON as i32,
    })
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
    rung1.then(|| cordon_sandbox::linux::layout(&r.filesystem))
}

#[cfg(not(target_os = "linux"))]
fn mount_plan(_exec: &cordon_sandbox::ExecRequest) -> Option<()> {
    None
}
