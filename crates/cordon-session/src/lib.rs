//! # cordon-session — the decision loop around one command (SPEC §6–§8)
//!
//! What an agent harness asks for every tool call: may this run, how, what happened, what
//! next. The CLI (`cordon run`) is one thin user of it; a server would be another.
//!
//! - [`TrustProfile::build`] (R-E1, R-E2): one constructor for every entry point, from
//!   (entry, cwd, layers); a worker clones the parent's layers and builds its own.
//! - [`ReviewableRequest`] and [`Answer`] (R-A7); [`Approver`]s: terminal, non-interactive
//!   (R-A6), scripted, `--yes`.
//! - [`SessionCache`] (R-A8): exact-key reuse of "for this session" answers, optionally
//!   persisted per session id.
//! - [`Scope`] (R-A9, R-A10): run ids and approval ids, late answers rejected, plan mode,
//!   the decision log.
//! - [`classify`] (R-F1): the outcome class with evidence, confidence and a hint.
//! - [`escalation()`] (R-F2): the smallest widening, as a new request needing a new answer.
//! - [`Harness`] (R-X1): the library API for agent harnesses — one-shot tool calls and
//!   long-running process sessions (stdin, incremental output, terminal, signals, kill),
//!   each through the same loop; `cordon mcp` is built on it.
//! - [`drive`]: the whole loop — rules → approval → sandbox → run → classify →
//!   hint/escalate.
//!
//! Dependencies point one way: CLI → cordon-session → cordon-sandbox / cordon-execpolicy →
//! cordon-policy.
#![deny(missing_docs)]

pub mod approver;
pub mod cache;
pub mod drive;
pub mod escalation;
pub mod harness;
pub mod hosts;
pub mod ids;
pub mod outcome;
mod pending_sweeps;
pub mod request;
pub mod runner;
pub mod scope;
pub mod session;
pub mod trust;
pub mod writable_history;

pub use approver::{
    choose_approver, has_tty, ApprovalFront, Approver, NonInteractive, Preapproved, Reply,
    ScriptedApprover, TerminalApprover,
};
pub use cache::{CacheKey, SessionCache};
pub use drive::{drive, interactive_start, Report, RunSpec, StdinSource};
pub use escalation::{escalation, Escalation, Widening};
pub use harness::{ExecParams, ExecResult, Harness, HarnessOptions};
pub use ids::{ApprovalId, RunId};
pub use outcome::{
    classify, Confidence, Evidence, EvidenceSource, Outcome, OutcomeClass, DENIAL_EVIDENCE_SOURCE,
    DENIAL_RECORDS_SOURCE,
};
pub use request::{Answer, NeededPermissions, RequestKind, ReviewableRequest};
pub use scope::{DecisionKind, Scope};
pub use session::{Session, Verdict};
pub use trust::{Entry, Layers, TrustProfile};
