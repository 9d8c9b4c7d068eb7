//! Time scope of approvals (R-A9) and plan mode (R-A10), with the record of every decision.
//!
//! Every request carries a run id and an approval id. [`Scope::accept`] takes an answer only
//! while its run is live and the approval id is the run's current request; an answer for a
//! cancelled, finished or replaced run (or for an older request of a live run) is rejected
//! and logged.
//!
//! Plan mode: while it is on, commands run with a read-only profile ([`read_only_view`]).
//! Approving a plan, leaving plan mode, approving a tool call and preparing the sandbox are
//! four separate decisions, each recorded on its own: approving a plan neither leaves plan
//! mode nor approves any tool call.

use crate::approver::Reply;
use crate::ids::{ApprovalId, RunId};
use crate::request::Answer;
use cordon_policy::{Access, FilesystemPolicy, NetworkPolicy, PermissionProfile, ProfileKind};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// Where a run is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RunState {
    /// Started, not ended: answers for its current request are accepted.
    Live,
    /// Ended normally.
    Finished,
    /// Cancelled (by the user, a timeout or the harness).
    Cancelled,
    /// Replaced by a newer run (e.g. the agent re-issued the tool call).
    Replaced,
}

/// The kinds of recorded decision (R-A10: kept apart).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DecisionKind {
    /// A plan was approved or rejected.
    PlanApproval,
    /// Plan mode was entered.
    EnterPlanMode,
    /// Plan mode was left.
    LeavePlanMode,
    /// A tool call was approved, denied, or needed no approval.
    ToolApproval,
    /// The sandbox was prepared (or could not be).
    SandboxPreparation,
    /// An answer arrived for a run or request that is no longer current, and was rejected.
    LateAnswerRejected,
    /// A running command's unknown network host was approved or denied (R-P4 `ask`).
    NetworkHost,
}

/// One recorded decision.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DecisionEntry {
    /// What was decided.
    pub kind: DecisionKind,
    /// The run it belongs to, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<RunId>,
    /// The approval request it answers, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval_id: Option<ApprovalId>,
    /// The result in words (`approved once by the person at the terminal`, `prepared: landlock …`, …).
    pub detail: String,
}

/// Why an answer was not accepted (R-A9).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize)]
pub enum LateAnswer {
    /// The run is not known to this scope.
    #[error("answer for unknown run {0}")]
    UnknownRun(RunId),
    /// The run has ended.
    #[error("answer for run {run} rejected: the run is {state:?}")]
    RunEnded {
        /// The run.
        run: RunId,
        /// Its state.
        state: RunState,
    },
    /// The approval id is not the run's current request.
    #[error("answer for approval {got} rejected: {}", match current {
        Some(c) => format!("the request run {run} waits on is {c}"),
        None => format!("run {run} waits on no request"),
    })]
    NotCurrent {
        /// The run.
        run: RunId,
        /// The id the answer named.
        got: ApprovalId,
        /// The current request, if any.
        current: Option<ApprovalId>,
    },
}

/// Runs, their current requests, plan mode, and the decision log.
#[derive(Debug, Default, Clone)]
pub struct Scope {
    runs: HashMap<RunId, RunState>,
    current: HashMap<RunId, ApprovalId>,
    plan_mode: bool,
    log: Vec<DecisionEntry>,
}

impl Scope {
    /// An empty scope, not in plan mode.
    pub fn new() -> Scope {
        Scope::default()
    }

    /// Starts a run.
    pub fn start_run(&mut self) -> RunId {
        let id = RunId::new();
        self.runs.insert(id.clone(), RunState::Live);
        id
    }

    /// The state of `run`, if known.
    pub fn state(&self, run: &RunId) -> Option<RunState> {
        self.runs.get(run).copied()
    }

    /// Makes `approval` the current request of `run` (an older one is no longer answerable).
    pub fn issue(&mut self, run: &RunId, approval: &ApprovalId) {
        self.current.insert(run.clone(), approval.clone());
    }

    fn end(&mut self, run: &RunId, state: RunState) {
        if let Some(s) = self.runs.get_mut(run) {
            if *s == RunState::Live {
                *s = state;
            }
        }
        self.current.remove(run);
    }

    /// Marks `run` finished.
    pub fn finish(&mut self, run: &RunId) {
        self.end(run, RunState::Finished);
    }

    /// Marks `run` cancelled.
    pub fn cancel(&mut self, run: &RunId) {
        self.end(run, RunState::Cancelled);
    }

    /// Marks `run` replaced and starts its replacement.
    pub fn replace(&mut self, run: &RunId) -> RunId {
        self.end(run, RunState::Replaced);
        self.start_run()
    }

    /// Accepts `reply` for `run` if the run is live and the reply names its current
    /// request; otherwise logs and returns why not (R-A9).
    ///
    /// Errors: [`LateAnswer`].
    pub fn accept(&mut self, run: &RunId, reply: &Reply) -> Result<Answer, LateAnswer> {
        let verdict = match self.runs.get(run) {
            None => Err(LateAnswer::UnknownRun(run.clone())),
            Some(RunState::Live) => match self.current.get(run) {
                Some(cur) if *cur == reply.approval_id => Ok(reply.answer),
                cur => Err(LateAnswer::NotCurrent {
                    run: run.clone(),
                    got: reply.approval_id.clone(),
                    current: cur.cloned(),
                }),
            },
            Some(state) => Err(LateAnswer::RunEnded {
                run: run.clone(),
                state: *state,
            }),
        };
        match &verdict {
            Ok(_) => {
                // One answer per request.
                self.current.remove(run);
            }
            Err(e) => {
                tracing::warn!(%e, "late approval answer rejected");
                self.record(
                    DecisionKind::LateAnswerRejected,
                    Some(run),
                    Some(&reply.approval_id),
                    format!("{} ({:?} by {})", e, reply.answer, reply.by),
                );
            }
        }
        verdict
    }

    /// Records a decision.
    pub fn record(
        &mut self,
        kind: DecisionKind,
        run: Option<&RunId>,
        approval: Option<&ApprovalId>,
        detail: impl Into<String>,
    ) {
        self.log.push(DecisionEntry {
            kind,
            run_id: run.cloned(),
            approval_id: approval.cloned(),
            detail: detail.into(),
        });
    }

    /// The decision log, oldest first.
    pub fn log(&self) -> &[DecisionEntry] {
        &self.log
    }

    /// Whether plan mode is on.
    pub fn in_plan_mode(&self) -> bool {
        self.plan_mode
    }

    /// Enters plan mode (recorded).
    pub fn enter_plan_mode(&mut self, by: &str) {
        self.plan_mode = true;
        self.record(DecisionKind::EnterPlanMode, None, None, format!("by {by}"));
    }

    /// Records the approval (or rejection) of a plan. It does not leave plan mode and
    /// approves no tool call (R-A10).
    pub fn record_plan_approval(&mut self, approved: bool, by: &str) {
        self.record(
            DecisionKind::PlanApproval,
            None,
            None,
            format!(
                "plan {} by {by}",
                if approved { "approved" } else { "rejected" }
            ),
        );
    }

    /// Leaves plan mode (recorded). Tool calls are still decided one by one.
    pub fn leave_plan_mode(&mut self, by: &str) {
        self.plan_mode = false;
        self.record(DecisionKind::LeavePlanMode, None, None, format!("by {by}"));
    }

    /// The profile a command runs with now: `profile` itself, or its read-only view in
    /// plan mode.
    pub fn profile_for_now(&self, profile: &PermissionProfile) -> PermissionProfile {
        if self.plan_mode {
            read_only_view(profile)
        } else {
            profile.clone()
        }
    }
}

/// The read-only view of a profile (plan mode, R-A10): every write grant becomes read, the
/// network is restricted with nothing of the host's reachable through it (no
/// `network.local` forwards, no `network.unix_sockets`: a host database or daemon takes
/// writes as surely as a file does, attack pass 148 F2), and a shared package cache (the
/// host's own) is taken as a copy-on-write layer, which resolution makes read-only for a
/// read-only workspace (it was written through, attack pass 148); a profile cordon does not confine itself (disabled,
/// external) becomes the built-in `read-only` profile (a disabled profile cannot be made
/// read-only by itself).
pub fn read_only_view(profile: &PermissionProfile) -> PermissionProfile {
    let fallback = || {
        let mut p = PermissionProfile::builtin("read-only").expect("built-in read-only profile");
        p.name = format!("{} (plan mode)", profile.name);
        p
    };
    if profile.kind != ProfileKind::Managed {
        return fallback();
    }
    let mut p = profile.clone();
    p.name = format!("{} (plan mode)", profile.name);
    p.network = NetworkPolicy::Restricted;
    p.network_rules.local.clear();
    p.network_rules.unix_sockets.clear();
    // A shared cache is the host's own, writable: taken as a copy-on-write layer here,
    // which resolution makes read-only for any run whose workspace is read-only (with the
    // hint that says so), as it does for the default layers.
    if p.caches == cordon_policy::caches::CacheMode::Shared {
        p.caches = cordon_policy::caches::CacheMode::Overlay;
    }
    match &mut p.filesystem {
        FilesystemPolicy::Unrestricted => return fallback(),
        FilesystemPolicy::Restricted {
            default, entries, ..
        } => {
            if *default == Access::Write {
                *default = Access::Read;
            }
            for e in entries.iter_mut() {
                if e.access == Access::Write {
                    e.access = Access::Read;
                }
            }
        }
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reply(id: &ApprovalId, a: Answer) -> Reply {
        Reply {
            approval_id: id.clone(),
            answer: a,
            by: "test".into(),
            note: None,
        }
    }

    #[test]
    fn current_answer_accepted_once() {
        let mut s = Scope::new();
        let run = s.start_run();
        let a = ApprovalId::new();
        s.issue(&run, &a);
        assert_eq!(s.accept(&run, &reply(&a, Answer::Once)), Ok(Answer::Once));
        // the same answer again is no longer current
        let late = s.accept(&run, &reply(&a, Answer::Once));
        assert!(matches!(late, Err(LateAnswer::NotCurrent { .. })));
        // Said in words, not Rust's Debug text (nu9: "is Some(ApprovalId(…))").
        let text = late.unwrap_err().to_string();
        assert!(
            text.contains("waits on no request") && !text.contains("Some("),
            "{text}"
        );
        let b = ApprovalId::new();
        s.issue(&run, &b);
        let text = s
            .accept(&run, &reply(&a, Answer::Once))
            .unwrap_err()
            .to_string();
        assert!(text.contains(&format!("waits on is {b}")), "{text}");
    }

    #[test]
    fn late_answer_after_cancel_finish_or_replace_is_rejected_and_logged() {
        for end in ["cancel", "finish", "replace"] {
            let mut s = Scope::new();
            let run = s.start_run();
            let a = ApprovalId::new();
            s.issue(&run, &a);
            match end {
                "cancel" => s.cancel(&run),
                "finish" => s.finish(&run),
                _ => {
                    let new = s.replace(&run);
                    assert_eq!(s.state(&new), Some(RunState::Live));
                }
            }
            let got = s.accept(&run, &reply(&a, Answer::Session));
            assert!(
                matches!(got, Err(LateAnswer::RunEnded { .. })),
                "{end}: {got:?}"
            );
            let last = s.log().last().unwrap();
            assert_eq!(last.kind, DecisionKind::LateAnswerRejected, "{end}");
            assert_eq!(last.approval_id.as_ref(), Some(&a));
        }
    }

    #[test]
    fn answer_for_an_older_request_or_another_run_is_rejected() {
        let mut s = Scope::new();
        let run = s.start_run();
        let old = ApprovalId::new();
        s.issue(&run, &old);
        let new = ApprovalId::new();
        s.issue(&run, &new);
        assert!(s.accept(&run, &reply(&old, Answer::Once)).is_err());
        let other = s.start_run();
        assert!(s.accept(&other, &reply(&new, Answer::Once)).is_err());
        assert!(matches!(
            s.accept(&RunId::new(), &reply(&new, Answer::Once)),
            Err(LateAnswer::UnknownRun(_))
        ));
        assert_eq!(s.accept(&run, &reply(&new, Answer::Once)), Ok(Answer::Once));
    }

    #[test]
    fn plan_mode_is_read_only_until_left_and_decisions_are_separate() {
        let ws = PermissionProfile::builtin("workspace-write").unwrap();
        let mut s = Scope::new();
        s.enter_plan_mode("test");
        let p = s.profile_for_now(&ws);
        match &p.filesystem {
            FilesystemPolicy::Restricted {
                entries, default, ..
            } => {
                assert_ne!(*default, Access::Write);
                assert!(
                    entries.iter().all(|e| e.access != Access::Write),
                    "{entries:?}"
                );
                // deny entries (credential stores) are kept
                assert!(entries.iter().any(|e| e.access == Access::Deny));
            }
            f => panic!("{f:?}"),
        }
        assert_eq!(p.network, NetworkPolicy::Restricted);
        // approving the plan does not leave plan mode
        s.record_plan_approval(true, "test");
        assert!(s.in_plan_mode());
        assert_ne!(s.profile_for_now(&ws), ws);
        s.leave_plan_mode("test");
        assert_eq!(s.profile_for_now(&ws), ws);
        let kinds: Vec<DecisionKind> = s.log().iter().map(|e| e.kind).collect();
        assert_eq!(
            kinds,
            [
                DecisionKind::EnterPlanMode,
                DecisionKind::PlanApproval,
                DecisionKind::LeavePlanMode
            ]
        );
        // a disabled profile becomes the built-in read-only profile
        let full = PermissionProfile::builtin("danger-full-access").unwrap();
        let ro = read_only_view(&full);
        assert_eq!(ro.kind, ProfileKind::Managed);
        assert_eq!(ro.network, NetworkPolicy::Restricted);
    }

    /// Attack pass 148 F2: plan mode leaves nothing of the host that takes writes — no
    /// loopback forward (`network.local`), no host unix socket (`network.unix_sockets`),
    /// no writable cache (a shared one is the host's; a copy-on-write layer keeps what was
    /// written for later runs). Twin: outside plan mode the profile keeps all three.
    #[test]
    fn plan_mode_reaches_no_host_service_and_writes_no_cache() {
        let mut p = PermissionProfile::builtin("workspace-write").unwrap();
        p.network_rules.local = vec!["127.0.0.1:5432".into()];
        p.network_rules.unix_sockets = vec!["/run/app.sock".into()];
        for mode in [
            cordon_policy::caches::CacheMode::Shared,
            cordon_policy::caches::CacheMode::Overlay,
        ] {
            p.caches = mode;
            let ro = read_only_view(&p);
            assert!(ro.network_rules.local.is_empty(), "{:?}", ro.network_rules);
            assert!(
                ro.network_rules.unix_sockets.is_empty(),
                "{:?}",
                ro.network_rules
            );
            // Never the host's own: a layer, which resolution makes read-only for any
            // read-only workspace (tests/caches.rs: nothing_writable_runs_…).
            assert_eq!(ro.caches, cordon_policy::caches::CacheMode::Overlay);
            let mut s = Scope::new();
            assert_eq!(
                s.profile_for_now(&p),
                p,
                "outside plan mode nothing changes"
            );
            s.enter_plan_mode("test");
            assert_eq!(s.profile_for_now(&p), ro);
        }
    }
}
