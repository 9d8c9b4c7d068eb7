//! Approval modes (R-A5) and the gate that combines an exec-policy decision with the mode
//! and the sandbox state (R-A1: the dimensions are decided separately, then combined).
//!
//! | decision | why | `untrusted` | `on-request` / `on-failure` | `never` | `bypass` |
//! |---|---|---|---|---|---|
//! | forbid | any | refuse | refuse | refuse | refuse |
//! | allow | rule / known-safe | run | run | run | run |
//! | ask | a rule says ask, a dangerous finding, or an unparsable / run-time-code construct | approval | approval | refuse | run |
//! | ask | unknown, opaque, or capped (redirect, …) | approval | run | run | run |
//!
//! Outside `untrusted`, a command nobody has a rule for runs: with the profile's sandbox
//! when it has one, and unconfined only where the user chose that explicitly (a `disabled`
//! profile, `--sandbox forbid`, `--allow-unconfined`).
//!
//! "approval" = [`Gate::Ask`]: run only if someone approves it (the caller pre-approved
//! with `--yes`, a person at a terminal, scripted answers); where no one can be asked
//! (R-A6) it is a refusal with the reason ([`Gate::nobody_to_ask`]).

use crate::{Decision, DecisionRecord};
use serde::{Deserialize, Serialize};
use std::fmt;

/// Approval mode (R-A5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ApprovalMode {
    /// Ask for anything that is not known-safe or allowed by a rule.
    Untrusted,
    /// Run sandboxed without asking; ask when a rule or a finding says so.
    #[default]
    OnRequest,
    /// The same as `on-request` (cordon asks for nothing more or less in this mode).
    OnFailure,
    /// Never ask: what would be asked is refused (sandboxed unknown commands still run).
    Never,
    /// No approvals at all. Creates no isolation of its own and is shown as such; `forbid`
    /// still refuses.
    Bypass,
}

impl ApprovalMode {
    /// The kebab-case name (`on-request`).
    pub fn as_str(self) -> &'static str {
        match self {
            ApprovalMode::Untrusted => "untrusted",
            ApprovalMode::OnRequest => "on-request",
            ApprovalMode::OnFailure => "on-failure",
            ApprovalMode::Never => "never",
            ApprovalMode::Bypass => "bypass",
        }
    }
}

impl fmt::Display for ApprovalMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The gate's answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "verdict", rename_all = "kebab-case")]
pub enum Gate {
    /// Run it.
    Run {
        /// Why it may run.
        reason: String,
    },
    /// Run it only if someone approves it; where no one can be asked it is refused
    /// ([`Gate::nobody_to_ask`]).
    Ask {
        /// Why it needs approval.
        reason: String,
    },
    /// Do not run it (never started: R-F1 `refused`).
    Refuse {
        /// Why, and what to do about it.
        reason: String,
    },
}

/// Whether an `ask` was raised explicitly in any segment
/// ([`crate::SegmentRecord::asks_explicitly`]) or by an opaque construct asked about in
/// every mode ([`crate::OpaqueKind::asks_in_every_mode`]: a script that does not parse
/// cleanly, text run as code at run time), rather than by default (unknown program, other
/// opaque constructs, or an allowed command capped by a redirect, …: new-user pass nu9,
/// with `allow npm test`, `npm test > log.txt` needed an approval; without the rule it
/// ran).
pub fn explicit_ask(record: &DecisionRecord) -> bool {
    record.decision == Decision::Ask
        && (record
            .segments
            .iter()
            .any(crate::SegmentRecord::asks_explicitly)
            || record.opaque.iter().any(|o| o.kind.asks_in_every_mode()))
}

/// Said in a refusal's reason where an approval was needed and no one can give it here
/// (R-A6); what follows it is how to approve (the run report's `hint`).
pub const NO_ONE_CAN_BE_ASKED: &str = "no one can be asked here (R-A6)";

/// How to approve `record` from the command line when no one can be asked: `--yes`, and an
/// allow rule where one would make it run (new-user pass nu12 M7).
pub fn cli_remedy(record: &DecisionRecord) -> String {
    format!(
        "pass --yes to approve it{}",
        match record.rule_blockers() {
            None => ", or add an allow rule".to_string(),
            Some(why) => format!(" (an allow rule does not cover it: {why})"),
        }
    )
}

impl Gate {
    /// This gate where no one can be asked (R-A6: no terminal, no scripted answers): an
    /// [`Gate::Ask`] is a refusal saying how to approve `record` from the command line;
    /// the others are unchanged.
    pub fn nobody_to_ask(self, record: &DecisionRecord) -> Gate {
        match self {
            Gate::Ask { reason } => Gate::Refuse {
                reason: format!(
                    "needs approval: {reason}; {NO_ONE_CAN_BE_ASKED}: {}",
                    cli_remedy(record)
                ),
            },
            g => g,
        }
    }
}

/// Combines the exec-policy `record` with the approval `mode` and whether the caller
/// pre-approved (`approved`, e.g. `--yes`). See the module table.
pub fn gate(record: &DecisionRecord, mode: ApprovalMode, approved: bool) -> Gate {
    let run = |r: &str| Gate::Run {
        reason: r.to_string(),
    };
    match record.decision {
        Decision::Forbid => {
            return Gate::Refuse {
                reason: format!("forbidden by exec policy: {}", record.reason),
            }
        }
        Decision::Allow => return run(&record.reason),
        Decision::Ask => {}
    }
    if mode == ApprovalMode::Bypass {
        return run("approval mode bypass: no approvals");
    }
    let ask = |why: &str| {
        if approved {
            run("approved by the caller (--yes)")
        } else {
            Gate::Ask {
                reason: why.to_string(),
            }
        }
    };
    if explicit_ask(record) {
        return match mode {
            ApprovalMode::Never => Gate::Refuse {
                reason: format!(
                    "approval mode never: {} would need approval, so it is refused; to \
                     run it, pass --approval-mode on-request --yes",
                    record.reason
                ),
            },
            _ => ask(&record.reason),
        };
    }
    match mode {
        ApprovalMode::Untrusted => ask(&record.reason),
        _ => run("no rule asks about it; approval mode does not ask for unknown commands"),
    }
}

/// What `cordon run` would do with a command under an approval mode when nobody has
/// pre-approved it (the exit status of `cordon check`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum RunWould {
    /// It would run (exit 0).
    Run,
    /// It would run only with approval (`--yes`) (exit 1).
    NeedsApproval,
    /// It would be refused whatever the approval (forbidden, or `never` mode) (exit 2).
    Refuse,
}

impl RunWould {
    /// `cordon check`'s exit status: 0 run, 1 needs approval, 2 refused.
    pub fn exit_code(self) -> i32 {
        match self {
            RunWould::Run => 0,
            RunWould::NeedsApproval => 1,
            RunWould::Refuse => 2,
        }
    }
}

/// What [`gate`] decides for `record` under `mode` without approval.
pub fn run_would(record: &DecisionRecord, mode: ApprovalMode) -> RunWould {
    match gate(record, mode, false) {
        Gate::Run { .. } => RunWould::Run,
        Gate::Ask { .. } => RunWould::NeedsApproval,
        Gate::Refuse { .. } => RunWould::Refuse,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{EvalContext, Policy};

    fn rec(cmd: &str, rules: &str) -> DecisionRecord {
        let p = if rules.is_empty() {
            Policy::empty()
        } else {
            Policy::from_toml_str(rules, "t.toml").unwrap()
        };
        p.evaluate_script(cmd, &EvalContext::default())
    }

    fn runs(g: &Gate) -> bool {
        matches!(g, Gate::Run { .. })
    }

    /// New-user pass nu9: an `allow` rule capped by a redirect (into the workspace or
    /// anywhere: the sandbox confines the write) is a default ask, not an explicit one, so
    /// the command runs wherever it would run with no rule; a rule that says `ask` still
    /// asks (twin), and `untrusted` still asks for the capped command.
    #[test]
    fn a_capped_allow_rule_is_never_stricter_than_no_rule() {
        use ApprovalMode::*;
        let allow = "[[rules]]\npattern = [\"npm\", \"test\"]\ndecision = \"allow\"\n";
        let ask = "[[rules]]\npattern = [\"npm\", \"test\"]\ndecision = \"ask\"\n";
        for cmd in ["npm test > log.txt", "npm test && echo ok > /var/tmp/x"] {
            let capped = rec(cmd, allow);
            let none = rec(cmd, "");
            assert_eq!(capped.decision, Decision::Ask, "{cmd}");
            for m in [OnRequest, OnFailure, Never] {
                assert!(runs(&gate(&capped, m, false)), "{cmd} {m}");
                assert_eq!(runs(&gate(&capped, m, false)), runs(&gate(&none, m, false)));
            }
            assert!(!runs(&gate(&capped, Untrusted, false)), "{cmd}");
            assert!(!runs(&gate(&rec(cmd, ask), OnRequest, false)), "{cmd}");
        }
    }

    /// nu12 M7: the refusal advises an allow rule only where one would make the command
    /// run (`cordon run` said so already; `cordon check` contradicted it). Twin: an
    /// unknown command in untrusted mode keeps the advice.
    #[test]
    fn allow_rule_advice_only_where_a_rule_helps() {
        let reason = |r: &DecisionRecord, m| match gate(r, m, false).nobody_to_ask(r) {
            Gate::Refuse { reason } => reason,
            other => panic!("{other:?}"),
        };
        let danger = reason(&rec("git reset --hard", ""), ApprovalMode::OnRequest);
        assert!(!danger.contains("or add an allow rule"), "{danger}");
        assert!(
            danger.contains("an allow rule does not cover it: a dangerous-command finding"),
            "{danger}"
        );
        // Only what applies is named (nu60).
        assert!(!danger.contains("cap"), "{danger}");
        assert!(!danger.contains("not parsed"), "{danger}");
        let unknown = reason(&rec("cargo build", ""), ApprovalMode::Untrusted);
        assert!(unknown.contains("or add an allow rule"), "{unknown}");
    }

    #[test]
    fn the_table() {
        use ApprovalMode::*;
        let safe = rec("git status", "");
        let unknown = rec("cargo build", "");
        let danger = rec("git reset --hard", "");
        let forbid = rec("rm -rf /", "");
        let ruled = rec(
            "npm publish",
            "[[rules]]\npattern = [\"npm\", \"publish\"]\ndecision = \"ask\"\njustification = \"publishes\"\n",
        );
        for m in [Untrusted, OnRequest, OnFailure, Never, Bypass] {
            assert!(runs(&gate(&safe, m, false)), "{m}");
            assert!(!runs(&gate(&forbid, m, true)), "{m}");
        }
        // unknown command: asked only in untrusted mode
        assert!(!runs(&gate(&unknown, Untrusted, false)));
        assert!(runs(&gate(&unknown, Untrusted, true)));
        for m in [OnRequest, OnFailure, Never, Bypass] {
            assert!(runs(&gate(&unknown, m, false)), "{m}");
        }
        // explicit asks need approval in every asking mode; never refuses them
        for r in [&danger, &ruled] {
            assert!(!runs(&gate(r, OnRequest, false)));
            assert!(!runs(&gate(r, Untrusted, false)));
            assert!(runs(&gate(r, OnRequest, true)));
            assert!(!runs(&gate(r, Never, true)));
            assert!(runs(&gate(r, Bypass, false)));
        }
        // run_would: what `cordon check` exits with
        assert_eq!(run_would(&unknown, OnRequest), RunWould::Run);
        assert_eq!(run_would(&unknown, Untrusted), RunWould::NeedsApproval);
        assert_eq!(run_would(&danger, OnRequest), RunWould::NeedsApproval);
        assert_eq!(run_would(&danger, Never), RunWould::Refuse);
        assert_eq!(run_would(&forbid, Bypass), RunWould::Refuse);
        assert_eq!(run_would(&safe, Untrusted), RunWould::Run);
        // an ask is refused only where no one can be asked, and the refusal says what to do
        assert!(matches!(gate(&danger, OnRequest, false), Gate::Ask { .. }));
        match gate(&danger, OnRequest, false).nobody_to_ask(&danger) {
            Gate::Refuse { reason } => assert!(
                reason.contains("--yes") && reason.contains(NO_ONE_CAN_BE_ASKED),
                "{reason}"
            ),
            g => panic!("{g:?}"),
        }
    }
}
