//! `cordon run`: decide, wrap, run, report.

use crate::cli::RunArgs;
use crate::exec_rules;
use crate::profile_args::{choose, preference};
use crate::{EXIT_CANNOT_EXECUTE, EXIT_CORDON, EXIT_NOT_FOUND};
use anyhow::{Context, Result};
use cordon_execpolicy::{gate, ApprovalMode, Gate};
use cordon_policy::SandboxPreference;
use cordon_sandbox::{run_reported, CommandRequest, SandboxManager, TransformError};
use serde_json::json;
use std::io::Write;

/// Where the JSON report goes (issue 8 §2). Only the file and descriptor sinks are out of
/// the command's reach; `--json` alone shares stderr with the command (documented).
enum Sink {
    None,
    Stderr,
    Writer(std::fs::File),
}

impl Sink {
    fn open(args: &RunArgs) -> Result<Sink> {
        if let Some(path) = &args.report {
            let f = std::fs::File::create(path)
                .with_context(|| format!("--report {}: cannot create the file", path.display()))?;
            return Ok(Sink::Writer(f));
        }
        if let Some(n) = args.json_fd {
            #[cfg(target_os = "linux")]
            return cordon_sandbox::linux::take_inherited_file(n)
                .map(Sink::Writer)
                .with_context(|| {
                    format!(
                        "--json-fd {n}: not an open descriptor above 2 (e.g. `{n}>report.json`)"
                    )
                });
            #[cfg(not(target_os = "linux"))]
            anyhow::bail!("--json-fd {n}: only supported on Linux; use --report FILE");
        }
        Ok(if args.profile.json {
            Sink::Stderr
        } else {
            Sink::None
        })
    }

    fn active(&self) -> bool {
        !matches!(self, Sink::None)
    }

    fn emit(&mut self, v: &serde_json::Value) {
        match self {
            Sink::None => {}
            Sink::Stderr => eprintln!("{v}"),
            Sink::Writer(f) => {
                if let Err(e) = writeln!(f, "{v}").and_then(|_| f.flush()) {
                    eprintln!("cordon: cannot write the report: {e}");
                }
            }
        }
    }
}

pub fn run(args: RunArgs) -> Result<i32> {
    let chosen = choose(&args.profile)?;
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    let overlay = chosen.overlay.clone();
    let json = args.profile.json;
    let mut sink = Sink::open(&args)?;
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
    if let Some(t) = &args.timeout {
        let v = cordon_policy::limits::LimitValue::Text(t.clone());
        if cordon_policy::limits::parse_duration_ms(&v).is_none_or(|ms| ms == 0) {
            anyhow::bail!("--timeout {t:?}: write a duration like 200ms, 30s, 10m or 2h");
        }
        req.profile.limits.timeout = Some(v);
    }

    let mut refuse = |reason: String, status: serde_json::Value| -> Result<i32> {
        if !args.dry_run {
            sink.emit(
                &json!({"outcome": "refused", "reason": reason, "status": status,
                   "applied": [],
                   "exec_policy": serde_json::to_value(&record)?, "exit_code": EXIT_CORDON}),
            );
        }
        eprintln!("cordon: {reason}");
        Ok(EXIT_CORDON as i32)
    };

    if args.backend == Some(crate::cli::BackendArg::Seatbelt) {
        return print_seatbelt(&req, json);
    }
    // A refusal needs no sandbox to be prepared (a dry run still shows what would be).
    if let (Gate::Refuse { reason }, false) = (&gate, args.dry_run) {
        return refuse(reason.clone(), serde_json::Value::Null);
    }
    // A dry run predicts: it probes as `cordon status` does (a real user namespace, uid
    // map and /proc mount), so its verdict matches the run's. A run learns the same facts
    // from its own attempt and falls back or refuses with the reason.
    let manager = if args.dry_run {
        SandboxManager::for_host_thorough()
    } else {
        SandboxManager::for_host()
    };
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
    // A report file the command could replace would be a forgeable report.
    if let (Some(path), Some(r)) = (&args.report, &exec.resolved) {
        let dir = std::fs::canonicalize(path)
            .ok()
            .and_then(|p| p.parent().map(|d| d.to_path_buf()));
        let writable = dir.as_ref().is_none_or(|d| {
            r.filesystem.access_for(&cordon_sandbox::HostFs, d).access
                == cordon_policy::Access::Write
        });
        if writable {
            return refuse(
                format!(
                    "--report {}: the command may write in that directory, so it could \
                     replace the report; put it outside every writable root, or use \
                     --json-fd N with a pipe",
                    path.display()
                ),
                serde_json::Value::Null,
            );
        }
    }
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
    // Names only, never values (R-L4): the user learns what vanished and how to keep it.
    if let Some(note) = cordon_policy::env::dropped_note(&exec.env_dropped, &req.env) {
        eprintln!("{note}");
    }
    if let Some(reason) = &exec.unconfined_reason {
        eprintln!("cordon: warning: running UNCONFINED (explicit opt-in): {reason}");
    }
    tracing::debug!(backend = %exec.backend, planned = ?exec.applied, "running");
    if !sink.active() {
        // Nothing to report afterwards: become the command (or the helper) directly, so
        // signals, the exit status and the process tree need no relaying. With -v the
        // helper prints what it really applied (not the plan) before the command starts.
        let mut exec = exec;
        #[cfg(target_os = "linux")]
        if tracing::enabled!(tracing::Level::DEBUG)
            && exec.backend == cordon_policy::Backend::LinuxHelper
            && exec.args.first().map(String::as_str)
                == Some(cordon_sandbox::linux::HELPER_SUBCOMMAND)
        {
            exec.args.insert(1, "--report".into());
        }
        let e = cordon_sandbox::exec_replace(&exec);
        return Ok(spawn_error(&exec, &e));
    }
    // R-H5: the helper says which limit ended the run on a pipe only it holds (the
    // command's own exit code 124 or stderr cannot forge it).
    #[cfg(target_os = "linux")]
    let channel = (exec.backend == cordon_policy::Backend::LinuxHelper)
        .then(cordon_sandbox::linux::limits::OutcomeChannel::new)
        .and_then(|c| c.ok());
    #[cfg(target_os = "linux")]
    let outcome = {
        let mut e = exec.clone();
        if let Some(c) = &channel {
            e.env.push(c.env());
        }
        run_reported(&e)
    };
    #[cfg(not(target_os = "linux"))]
    let outcome = run_reported(&exec);
    #[cfg(target_os = "linux")]
    let limit = channel.and_then(|c| c.read());
    #[cfg(not(target_os = "linux"))]
    let limit: Option<cordon_policy::limits::LimitKind> = None;
    let (code, mut outcome_name) = match &outcome {
        Ok((st, _)) => {
            let code = st.shell_code();
            (
                code,
                if limit.is_some() {
                    "limit-exceeded"
                } else if code == 0 {
                    "success"
                } else {
                    "command-failed"
                },
            )
        }
        Err(e) => (spawn_error(&exec, e), "refused"),
    };
    let facts = HelperFacts::of(outcome.as_ref().ok().and_then(|(_, r)| r.as_ref()))?;
    // What was applied is what the helper reports it did (R-S5); the plan is only the
    // prediction. Without a helper (backend none) cordon itself applied the scrubbing.
    let applied: serde_json::Value = if exec.backend == cordon_policy::Backend::None {
        json!(exec.applied)
    } else if let Some(mut a) = facts.applied.clone() {
        a.push(cordon_sandbox::scrubbed_note(exec.env_dropped.len()));
        json!(a)
    } else {
        // The helper applied nothing: it refused or failed before the command started.
        if code == EXIT_CORDON as i32 {
            outcome_name = "refused";
        }
        json!([])
    };
    let r = facts.report.as_ref();
    sink.emit(&json!({
        "outcome": outcome_name,
        "exit_code": code,
        "limit": limit,
        "signal": outcome.as_ref().ok().and_then(|(s, _)| s.signal),
        "reason": facts.not_run,
        "backend": exec.backend,
        "applied": applied,
        "rung": r.map(|h| h["rung"].clone()),
        "layers": r.map(|h| h["layers"].clone()),
        "notes": r.map(|h| h["notes"].clone()),
        // What resolution could not honour (a missing deny path, a refused $TMPDIR, a
        // planted special file it did not read): the notes explain and context show.
        "resolution_notes": exec.resolved.as_ref().map(|r| &r.notes),
        "fell_back": r.and_then(|h| h.get("fell_back").cloned()),
        "planned": exec.applied,
        "env_dropped": exec.env_dropped,
        "status": exec.status,
        "unconfined_reason": exec.unconfined_reason,
        "exec_policy": {"decision": record.decision, "reason": record.reason, "gate": gate},
    }));
    Ok(code)
}

/// What the helper said on its report descriptor, in the shapes the JSON report needs.
struct HelperFacts {
    /// The applied layers in words (`None`: nothing was applied).
    applied: Option<Vec<String>>,
    /// The typed report (`rung`, `layers`, `notes`, `fell_back`).
    report: Option<serde_json::Value>,
    /// Why nothing ran, as the helper printed it.
    not_run: Option<String>,
}

impl HelperFacts {
    fn of(r: Option<&cordon_sandbox::HelperReport>) -> Result<HelperFacts> {
        #[cfg(target_os = "linux")]
        {
            use cordon_sandbox::linux::HelperOutcome;
            Ok(match r {
                Some(HelperOutcome::Applied(a)) => HelperFacts {
                    applied: Some(a.applied()),
                    report: Some(serde_json::to_value(a)?),
                    not_run: None,
                },
                Some(HelperOutcome::NotRun { reason }) => HelperFacts {
                    applied: None,
                    report: None,
                    not_run: Some(reason.clone()),
                },
                None => HelperFacts {
                    applied: None,
                    report: None,
                    not_run: None,
                },
            })
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _ = r;
            Ok(HelperFacts {
                applied: None,
                report: None,
                not_run: None,
            })
        }
    }
}

/// Reports a failure to start `exec` and returns the exit code: 127 not found, 126 cannot
/// execute, else 125.
fn spawn_error(exec: &cordon_sandbox::ExecRequest, e: &std::io::Error) -> i32 {
    if exec.backend != cordon_policy::Backend::None {
        // The program is cordon's own helper (or sandbox-exec): its absence is cordon's
        // failure, never "command not found".
        eprintln!(
            "cordon: cannot start the sandbox helper {}: {e} (reinstall cordon)",
            exec.program
        );
        return EXIT_CORDON as i32;
    }
    let code = match e.kind() {
        std::io::ErrorKind::NotFound => EXIT_NOT_FOUND,
        std::io::ErrorKind::PermissionDenied => EXIT_CANNOT_EXECUTE,
        _ => EXIT_CORDON,
    };
    eprintln!("cordon: {}: {e}", exec.program);
    code as i32
}

/// The dry-run view of a resolved profile: profile name, cwd, workspace, network, notes, and
/// per filesystem entry its path, access, whether it exists and who set it.
fn compact_resolved(r: &serde_json::Value) -> serde_json::Value {
    let fs = &r["filesystem"];
    let filesystem = match fs.get("entries").and_then(|e| e.as_array()) {
        Some(entries) => json!({
            "default": fs["default"],
            "entries": entries.iter().map(|e| json!({
                "path": e["path"],
                "access": e["access"],
                "exists": e["exists"],
                "source": e["origin"].get("source").or(e["origin"].get("reason"))
                    .cloned().unwrap_or_else(|| e["origin"]["kind"].clone()),
            })).collect::<Vec<_>>(),
        }),
        None => fs.clone(),
    };
    json!({
        "profile": r["profile"]["name"],
        "cwd": r["cwd"],
        "workspace": r["workspace"],
        "network": r["profile"]["network"],
        "filesystem": filesystem,
        "notes": r["notes"],
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
        // The payload itself (a memfd handed to the helper) is not shown: it is the
        // resolved profile plus the environment values, which stay out of reports. The
        // resolved profile is shown compactly (one small object per entry), so the
        // output stays a few KiB however many built-in entries there are.
        if let Some(r) = v.get_mut("resolved").filter(|r| r.is_object()) {
            *r = compact_resolved(r);
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
                // The helper replaces /tmp with its own tmpfs: say so, or a reader expects
                // the host's /tmp (and its files) to be there.
                if e.path == std::path::Path::new("/tmp")
                    && exec.backend == cordon_policy::Backend::LinuxHelper
                {
                    println!(
                        "  /tmp (private: an empty tmpfs for this run, discarded afterwards; \
                         the host's /tmp is not visible)"
                    );
                } else {
                    println!("  {}", e.path.display());
                }
            }
        }
    }
    Ok(())
}

/// `--dry-run --backend seatbelt`: the SBPL policy and its `-D` parameters for this
/// command, on any host (for review, the lint and bug reports). The text output is itself
/// SBPL (the header is comments), so it can be saved and run with `sandbox-exec -f`.
fn print_seatbelt(req: &CommandRequest, json: bool) -> Result<i32> {
    use cordon_sandbox::seatbelt;
    let resolved = cordon_policy::resolve(
        &req.profile,
        &req.resolve_context(),
        &cordon_sandbox::HostFs,
    )?;
    let policy = seatbelt::policy(&resolved);
    let (program, args) = seatbelt::wrap(&resolved, &req.argv);
    if json {
        let params: serde_json::Map<String, serde_json::Value> = policy
            .params
            .iter()
            .map(|(k, v)| (k.clone(), json!(v)))
            .collect();
        println!(
            "{}",
            serde_json::to_string_pretty(&json!({
                "backend": "seatbelt", "program": program, "args": args,
                "policy": policy.text, "params": params,
            }))?
        );
        return Ok(0);
    }
    println!("; cordon seatbelt policy for: {}", req.argv.join(" "));
    println!("; run as: {program} -p <this policy> -D KEY=VALUE… -- <command>");
    println!("; parameters (-D):");
    for (k, v) in &policy.params {
        println!(";   {k}={v}");
    }
    print!("{}", policy.text);
    Ok(0)
}

/// The mount plan the Linux helper applies on rung 1 (namespaces), computed from the same
/// resolved profile it receives (issue 13 §1); `None` for other backends and rungs.
#[cfg(target_os = "linux")]
fn mount_plan(exec: &cordon_sandbox::ExecRequest) -> Option<cordon_sandbox::linux::Layout> {
    let r = exec.resolved.as_ref()?;
    let rung1 = exec.backend == cordon_policy::Backend::LinuxHelper
        && exec.applied.iter().any(|a| a.contains("namespaces"));
    rung1.then(|| {
        let mut l = cordon_sandbox::linux::layout(&r.filesystem);
        // The same tmpfs size= the helper sets (R-H5).
        if let Ok(lim) = cordon_sandbox::linux::limits::resolve(r) {
            cordon_sandbox::linux::limits::size_tmpfs(&mut l, lim.tmpfs_bytes);
        }
        l
    })
}

#[cfg(not(target_os = "linux"))]
fn mount_plan(_exec: &cordon_sandbox::ExecRequest) -> Option<()> {
    None
}
