//! The whole loop for one tool call: rules → approval → sandbox → run → classify →
//! hint / escalate (SPEC §6–§7). `cordon run` calls [`drive`]; a server would too.

use crate::escalation::{escalation, Escalation, Widening};
use crate::ids::RunId;
use crate::outcome::{classify, ClassifyContext, Outcome, OutcomeClass};
use crate::request::{NeededPermissions, ReviewableRequest};
use crate::runner::{self, RunOptions};
use crate::scope::DecisionKind;
use crate::session::{Session, Verdict};
use crate::trust::TrustProfile;
use cordon_execpolicy::DecisionRecord;
use cordon_policy::{should_sandbox, SandboxPreference};
use cordon_sandbox::{ExecRequest, HelperReport, HostFs, SandboxManager};
use serde::Serialize;
use std::time::Duration;

/// Exit code when cordon fails or refuses.
pub const EXIT_CORDON: i32 = 125;
/// Exit code when the command cannot be executed.
pub const EXIT_CANNOT_EXECUTE: i32 = 126;
/// Exit code when the command is not found.
pub const EXIT_NOT_FOUND: i32 = 127;

/// What to run and how.
#[derive(Debug, Clone)]
pub struct RunSpec {
    /// The command.
    pub argv: Vec<String>,
    /// Sandbox preference (R-S1).
    pub preference: SandboxPreference,
    /// `--sandbox` was left at `auto` (an exec-policy bypass rule may apply).
    pub preference_is_default: bool,
    /// Run unconfined if the sandbox cannot be prepared (R-S4 opt-in).
    pub allow_unconfined: bool,
    /// Wall-clock limit.
    pub timeout: Option<Duration>,
    /// The tool allows offering a retry outside the sandbox (R-F2).
    pub allow_unsandboxed_retry: bool,
    /// Capture stderr for classification ([`RunOptions::capture_stderr`]).
    pub capture_stderr: bool,
    /// Ask the Linux helper to print what it applied on stderr (`-v`).
    pub helper_verbose: bool,
}

/// What happened, for the report and `--json`.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// The run.
    pub run_id: RunId,
    /// The classified outcome (R-F1).
    pub outcome: Outcome,
    /// The exec-policy record.
    pub exec_policy: DecisionRecord,
    /// The approval verdict.
    pub approval: Verdict,
    /// What was spawned (absent when refused before the sandbox was prepared). Its payload
    /// descriptor is closed once the run ended.
    #[serde(skip)]
    pub exec: Option<ExecRequest>,
    /// What the sandbox helper reported on its own channel: what it applied, or why nothing
    /// ran (`None`: no helper, or it said nothing).
    #[serde(skip)]
    pub helper: Option<HelperReport>,
    /// The escalation decision after a denial, if one was considered.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub escalation: Option<Escalation>,
    /// Why the offered retry did not run (its request was denied), if so.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retry_refused: Option<String>,
    /// The person chose "abort" at the retry's request.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub retry_aborted: bool,
    /// The retry, when an escalation was approved.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retry: Option<Box<Report>>,
}

impl Report {
    /// The report of the last attempt (the retry if there was one).
    pub fn last(&self) -> &Report {
        match &self.retry {
            Some(r) => r.last(),
            None => self,
        }
    }

    /// Whether the person chose "abort".
    pub fn aborted(&self) -> bool {
        matches!(self.approval, Verdict::Refuse { abort: true, .. })
            || self.retry_aborted
            || self.retry.as_ref().is_some_and(|r| r.aborted())
    }
}

fn needs_for(trust: &TrustProfile, preference: SandboxPreference) -> NeededPermissions {
    NeededPermissions {
        profile: trust.profile.clone(),
        additional: trust.additional.clone(),
        sandboxed: preference != SandboxPreference::Forbid
            && should_sandbox(&trust.profile, preference, false),
    }
}

/// Runs one tool call through the loop. Warnings (running unconfined) and the hint line go
/// to stderr; everything else is in the [`Report`].
pub fn drive(
    session: &mut Session,
    manager: &SandboxManager,
    trust: &TrustProfile,
    spec: &RunSpec,
) -> Report {
    attempt(session, manager, trust, spec, None)
}

/// Steps 1–5 of one attempt: exec policy → approval (skipped for an approved retry) →
/// sandbox preparation → run → classification; then [`offer_retry`].
fn attempt(
    session: &mut Session,
    manager: &SandboxManager,
    trust: &TrustProfile,
    spec: &RunSpec,
    approved: Option<(RunId, Verdict)>,
) -> Report {
    let mut req = trust.command(spec.argv.clone());
    let record = trust.evaluate(&req);
    req.preference = spec.preference;
    req.allow_unconfined = spec.allow_unconfined;
    let bypass = record.sandbox.bypass && req.preference == SandboxPreference::Auto;
    if bypass {
        tracing::info!(reason = %record.sandbox.reason, "sandbox bypassed by exec-policy rule");
        req.preference = SandboxPreference::Forbid;
    }
    let needs = needs_for(trust, req.preference);
    let is_retry = approved.is_some();
    let (run_id, verdict) = match approved {
        Some(a) => a,
        None => {
            let run = session.scope.start_run();
            let v = session.decide(&run, &record, &trust.cwd, &needs);
            (run, v)
        }
    };
    let refused = |outcome: Outcome, verdict: Verdict, exec: Option<ExecRequest>| Report {
        run_id: run_id.clone(),
        outcome,
        exec_policy: record.clone(),
        approval: verdict,
        exec,
        helper: None,
        escalation: None,
        retry_refused: None,
        retry_aborted: false,
        retry: None,
    };
    if let Verdict::Refuse { reason, .. } = &verdict {
        session.scope.finish(&run_id);
        return refused(
            Outcome::refused(reason.clone(), EXIT_CORDON),
            verdict.clone(),
            None,
        );
    }
    let exec = match manager.transform(&req) {
        Ok(e) => e,
        Err(e) => {
            session.scope.record(
                DecisionKind::SandboxPreparation,
                Some(&run_id),
                None,
                format!("not prepared: {e}"),
            );
            session.scope.finish(&run_id);
            let why = e.to_string();
            return refused(Outcome::refused(why, EXIT_CORDON), verdict, None);
        }
    };
    session.scope.record(
        DecisionKind::SandboxPreparation,
        Some(&run_id),
        None,
        format!("{} backend: {}", exec.backend, exec.planned.join("; ")),
    );
    tracing::debug!(backend = %exec.backend, planned = ?exec.planned, "running");
    // Names only, never values (R-L4): the user learns what vanished and how to keep it.
    if !is_retry {
        if let Some(note) = cordon_policy::env::dropped_note(&exec.env_dropped, &req.env) {
            eprintln!("{note}");
        }
    }
    if !exec.status.sandbox_requested.value
        && req.preference == SandboxPreference::Forbid
        && should_sandbox(&req.profile, SandboxPreference::Auto, false)
        && !is_retry
    {
        eprintln!(
            "cordon: warning: running UNCONFINED: {} although profile {:?} asks for a sandbox",
            if bypass && spec.preference_is_default {
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
    let signals = runner::run(
        &exec,
        &RunOptions {
            timeout: spec.timeout,
            capture_stderr: spec.capture_stderr,
            helper_verbose: spec.helper_verbose,
        },
    );
    let mut helper = None;
    let outcome = match signals {
        // The program is cordon's own helper (or sandbox-exec) for a sandboxed run: its
        // absence is cordon's failure, never "command not found".
        Err(e) if exec.backend != cordon_policy::Backend::None => Outcome::refused(
            format!(
                "cannot start the sandbox helper {}: {e} (reinstall cordon)",
                exec.program
            ),
            EXIT_CORDON,
        ),
        Err(e) => {
            let code = match e.kind() {
                std::io::ErrorKind::NotFound => EXIT_NOT_FOUND,
                std::io::ErrorKind::PermissionDenied => EXIT_CANNOT_EXECUTE,
                _ => EXIT_CORDON,
            };
            Outcome::refused(format!("{}: {e}", exec.program), code)
        }
        Ok((sig, report)) => {
            helper = report;
            if sig.cancelled.is_some() || sig.timed_out.is_some() {
                session.scope.cancel(&run_id);
            }
            classify(
                &sig,
                &ClassifyContext {
                    resolved: exec.resolved.as_ref(),
                    fs: &HostFs,
                    // The command's cwd (the resolved profile's), not cordon's.
                    cwd: exec
                        .resolved
                        .as_ref()
                        .map_or(trust.cwd.as_path(), |r| r.cwd.as_path()),
                    network_enabled: needs.network(),
                },
            )
        }
    };
    session.scope.finish(&run_id);
    let mut exec = exec;
    exec.payload_fd = None;
    let report = Report {
        run_id: run_id.clone(),
        outcome,
        exec_policy: record.clone(),
        approval: verdict,
        exec: Some(exec),
        helper,
        escalation: None,
        retry_refused: None,
        retry_aborted: false,
        retry: None,
    };
    if is_retry
        || !matches!(
            report.outcome.class,
            OutcomeClass::SandboxDenied { .. } | OutcomeClass::NetworkDenied { .. }
        )
    {
        return report;
    }
    offer_retry(session, manager, trust, spec, report, &needs)
}

/// Step 6 (R-F2): after a denial, offer the smallest widening (or the unsandboxed form) as
/// a NEW request; run the retry only if that request is approved. Plan mode stays
/// read-only until it is left (R-A10): no widening inside it.
fn offer_retry(
    session: &mut Session,
    manager: &SandboxManager,
    trust: &TrustProfile,
    spec: &RunSpec,
    mut report: Report,
    needs: &NeededPermissions,
) -> Report {
    let record = report.exec_policy.clone();
    let run_id = report.run_id.clone();
    let esc = if trust.layers.plan {
        Escalation::NotOffered {
            reason: "plan mode is read-only until it is left (R-A10)".into(),
        }
    } else {
        escalation(
            &report.outcome,
            needs,
            session.mode,
            spec.allow_unsandboxed_retry,
        )
    };
    report.escalation = Some(esc.clone());
    let Escalation::Offered {
        widening,
        needs: wider,
    } = esc
    else {
        return report;
    };
    let new_run = session.scope.start_run();
    let first = ReviewableRequest::tool_call(
        run_id,
        &record,
        trust.cwd.clone(),
        needs.clone(),
        record.reason.clone(),
    );
    let retry_req = first.escalated(new_run.clone(), &report.outcome, wider, &widening);
    let verdict = session.ask(retry_req, &record);
    if let Verdict::Refuse { reason, abort } = &verdict {
        // (the first attempt's report stays as it was)
        session.scope.finish(&new_run);
        report.retry_refused = Some(reason.clone());
        report.retry_aborted = *abort;
        return report;
    }
    let mut layers = trust.layers.clone();
    let mut retry_spec = spec.clone();
    match &widening {
        Widening::Additional { permissions } => {
            if permissions.wants_network() {
                layers.allow_network = true;
            }
            layers
                .writable
                .extend(permissions.entries.iter().map(|e| e.path.clone().into()));
        }
        Widening::Unsandboxed => {
            retry_spec.preference = SandboxPreference::Forbid;
            retry_spec.preference_is_default = false;
        }
    }
    let retry_trust = match TrustProfile::build(trust.entry.clone(), &trust.cwd, &layers) {
        Ok(t) => t,
        Err(e) => {
            session.scope.finish(&new_run);
            report.retry = Some(Box::new(Report {
                run_id: new_run,
                outcome: Outcome::refused(
                    format!("cannot build the wider profile: {e}"),
                    EXIT_CORDON,
                ),
                exec_policy: record.clone(),
                approval: verdict,
                exec: None,
                helper: None,
                escalation: None,
                retry_refused: None,
                retry_aborted: false,
                retry: None,
            }));
            return report;
        }
    };
    eprintln!(
        "cordon: retrying with {} (approved by {})",
        match &widening {
            Widening::Additional { permissions } =>
                serde_json::to_string(permissions).unwrap_or_default(),
            Widening::Unsandboxed => "no sandbox".into(),
        },
        match &verdict {
            Verdict::Run { by, .. } => by.as_str(),
            _ => "?",
        }
    );
    report.retry = Some(Box::new(attempt(
        session,
        manager,
        &retry_trust,
        &retry_spec,
        Some((new_run, verdict)),
    )));
    report
}
