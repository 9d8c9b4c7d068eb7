//! The approval step of the loop: gate → session cache → approver → time-scope check →
//! cache / remember-rule (R-A5..R-A9).

use crate::approver::Approver;
use crate::cache::{eligible, CacheEntry, CacheKey, SessionCache};
use crate::ids::{ApprovalId, RunId};
use crate::request::{Answer, NeededPermissions, RememberRule, RequestKind, ReviewableRequest};
use crate::scope::{DecisionKind, Scope};
use cordon_execpolicy::{gate, ApprovalMode, DecisionRecord, Gate};
use serde::Serialize;
use std::path::{Path, PathBuf};

/// The approval verdict for one request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "verdict", rename_all = "kebab-case")]
pub enum Verdict {
    /// Run it.
    Run {
        /// Why it may run.
        reason: String,
        /// Who decided: `policy` (no approval needed), `session cache`, or the approver.
        by: String,
        /// The approval that allowed it, if one was given.
        #[serde(skip_serializing_if = "Option::is_none")]
        approval_id: Option<ApprovalId>,
        /// The answer, if one was given.
        #[serde(skip_serializing_if = "Option::is_none")]
        answer: Option<Answer>,
    },
    /// Do not run it (R-F1 `refused`).
    Refuse {
        /// Why, and what to do.
        reason: String,
        /// The person chose "abort": the caller should stop the agent's turn.
        abort: bool,
    },
}

impl Verdict {
    /// Whether the command may run.
    pub fn runs(&self) -> bool {
        matches!(self, Verdict::Run { .. })
    }
}

/// What the exec policy and the approval mode require (the table of
/// [`cordon_execpolicy::approval`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Need {
    /// Runs without asking.
    NotNeeded(String),
    /// Never runs (forbidden, or `never` mode for an explicit ask).
    Refused(String),
    /// Needs an approval.
    Ask(String),
}

/// Maps the record and mode onto [`Need`], from the existing gate table.
pub fn need(record: &DecisionRecord, mode: ApprovalMode) -> Need {
    match gate(record, mode, false) {
        Gate::Run { reason } => Need::NotNeeded(reason),
        Gate::Refuse { reason } => Need::Refused(reason),
        Gate::Ask { reason } => Need::Ask(reason),
    }
}

/// One agent session's approval state: mode, approver, cache, time scope and plan mode.
pub struct Session {
    /// Approval mode (R-A5).
    pub mode: ApprovalMode,
    /// Who answers.
    pub approver: Box<dyn Approver>,
    /// The session cache (R-A8).
    pub cache: SessionCache,
    /// Runs, requests, plan mode and the decision log (R-A9, R-A10).
    pub scope: Scope,
    /// Where "remember as rule" appends (None: the answer counts as once).
    pub rules_file: Option<PathBuf>,
    /// Requests put to the approver (the session cache answers the rest).
    pub prompts: usize,
}

impl Session {
    /// A session with an in-memory cache.
    pub fn new(mode: ApprovalMode, approver: Box<dyn Approver>) -> Session {
        Session {
            mode,
            approver,
            cache: SessionCache::in_memory(),
            scope: Scope::new(),
            rules_file: None,
            prompts: 0,
        }
    }

    /// The session of a CLI run: the approver from [`crate::choose_approver`], the session
    /// cache of `session_id` (persisted) or an in-memory one, and the user's rules file for
    /// "remember as rule".
    ///
    /// Errors: the scripted answers cannot be opened, or the session file is unusable.
    pub fn for_cli(
        mode: ApprovalMode,
        approvals_from: Option<&str>,
        yes: bool,
        non_interactive: bool,
        session_id: Option<&str>,
    ) -> Result<Session, String> {
        let approver =
            crate::choose_approver(approvals_from, yes, non_interactive, session_id.is_some())
                .map_err(|e| {
                    format!(
                        "cannot read approvals from {}: {e}",
                        approvals_from.unwrap_or("?")
                    )
                })?;
        let mut s = Session::new(mode, approver);
        if let Some(id) = session_id {
            s.cache = SessionCache::open(id).map_err(|e| e.to_string())?;
        }
        s.rules_file = crate::trust::user_rules_path();
        Ok(s)
    }

    /// Decides whether the tool call `record` may run in `cwd` with `needs`, as part of
    /// `run`. Records the decision.
    pub fn decide(
        &mut self,
        run: &RunId,
        record: &DecisionRecord,
        cwd: &Path,
        needs: &NeededPermissions,
    ) -> Verdict {
        match need(record, self.mode) {
            Need::NotNeeded(reason) => {
                self.scope.record(
                    DecisionKind::ToolApproval,
                    Some(run),
                    None,
                    format!("no approval needed: {reason}"),
                );
                Verdict::Run {
                    reason,
                    by: "policy".into(),
                    approval_id: None,
                    answer: None,
                }
            }
            Need::Refused(reason) => {
                self.scope.record(
                    DecisionKind::ToolApproval,
                    Some(run),
                    None,
                    format!("refused: {reason}"),
                );
                Verdict::Refuse {
                    reason,
                    abort: false,
                }
            }
            Need::Ask(reason) => {
                let req = ReviewableRequest::tool_call(
                    run.clone(),
                    record,
                    cwd.to_path_buf(),
                    needs.clone(),
                    reason,
                );
                self.ask(req, record)
            }
        }
    }

    /// Puts `req` to the session cache (tool calls only) and then the approver; checks the
    /// answer against the time scope; caches it or appends the rule when the answer says
    /// so. Escalations never use the cache: they always need a fresh answer (R-F2).
    pub fn ask(&mut self, req: ReviewableRequest, record: &DecisionRecord) -> Verdict {
        let run = req.run_id.clone();
        let key = CacheKey::new(record, &req.cwd, &req.needs);
        if req.kind == RequestKind::ToolCall {
            if let Some(hit) = self.cache.lookup(&key) {
                let reason = format!("approved for this session ({})", hit.approval_id);
                self.scope.record(
                    DecisionKind::ToolApproval,
                    Some(&run),
                    Some(&req.approval_id),
                    format!("session cache hit: {reason}"),
                );
                return Verdict::Run {
                    reason,
                    by: "session cache".into(),
                    approval_id: Some(ApprovalId::from_string(hit.approval_id.clone())),
                    answer: Some(Answer::Session),
                };
            }
        }
        self.scope.issue(&run, &req.approval_id);
        self.prompts += 1;
        let reply = self.approver.ask(&req);
        let answer = match self.scope.accept(&run, &reply) {
            Ok(a) => a,
            Err(late) => {
                return Verdict::Refuse {
                    reason: format!("{late}; the command did not run"),
                    abort: false,
                }
            }
        };
        let allowed = req.allowed_answers();
        let mut downgraded = None;
        let answer = if allowed.contains(&answer) {
            answer
        } else if req.takes(answer) {
            // A scripted or MCP "session" for a request whose session answer is not kept
            // (dangerous, opaque, an escalation), or "remember-rule" for one that offers no
            // rule (an ask rule decides, several segments ask): an approval all the same,
            // once — said so (new-user pass nu16 N8: it became a silent deny).
            downgraded = Some(answer);
            Answer::Once
        } else {
            Answer::Deny
        };
        let by = reply.by.clone();
        let who = crate::approver::by_phrase(&by);
        let detail = format!("{} by {who}", answer.label());
        self.scope.record(
            DecisionKind::ToolApproval,
            Some(&run),
            Some(&req.approval_id),
            detail,
        );
        match answer {
            Answer::Deny => Verdict::Refuse {
                reason: reply
                    .note
                    .unwrap_or_else(|| format!("denied by {who}: {}", req.reason)),
                abort: false,
            },
            Answer::Abort => Verdict::Refuse {
                reason: format!("aborted by {who}"),
                abort: true,
            },
            Answer::Session => {
                let mut reason = format!("approved for this session by {who}");
                if eligible(&req, record, answer) {
                    if let Err(e) = self.cache.insert(CacheEntry {
                        key,
                        approval_id: req.approval_id.to_string(),
                        by: by.clone(),
                    }) {
                        tracing::warn!(%e, "session cache not saved");
                        reason.push_str(&format!(" (not saved: {e})"));
                    }
                } else {
                    reason = format!(
                        "approved once by {who} (this command is not eligible for the session \
                         cache: opaque, dangerous, or an escalation)"
                    );
                }
                Verdict::Run {
                    reason,
                    by,
                    approval_id: Some(req.approval_id.clone()),
                    answer: Some(answer),
                }
            }
            Answer::RememberRule => {
                let reason = match (&self.rules_file, &req.remember) {
                    (Some(f), Some(rule)) => match append_rule(f, rule) {
                        Ok(()) => format!(
                            "approved by {who}; rule `allow {}` added to {}",
                            crate::request::shell_words(&rule.pattern),
                            f.display()
                        ),
                        Err(e) => format!("approved once by {who}; the rule was not saved: {e}"),
                    },
                    _ => format!("approved once by {who} (no rules file to remember it in)"),
                };
                Verdict::Run {
                    reason,
                    by,
                    approval_id: Some(req.approval_id.clone()),
                    answer: Some(answer),
                }
            }
            Answer::Once => Verdict::Run {
                reason: match downgraded {
                    Some(a) => format!(
                        "approved once by {who} (the answer `{}` is not offered for this \
                         request: {})",
                        a.label(),
                        if a == Answer::RememberRule {
                            "no rule can be remembered for it"
                        } else {
                            "it is not eligible for the session cache"
                        }
                    ),
                    None => format!("approved once by {who}"),
                },
                by,
                approval_id: Some(req.approval_id.clone()),
                answer: Some(answer),
            },
        }
    }
}

/// Appends `rule` to the rules file `path` after checking that the whole file still loads
/// (its examples match, R-A3). Written atomically, 0600, never through a symlink.
///
/// Errors: the existing file cannot be read, the result does not load, or the write fails.
pub fn append_rule(path: &Path, rule: &RememberRule) -> Result<(), String> {
    let existing = match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => {
            return Err(format!("{} is a symbolic link", path.display()))
        }
        Ok(_) => std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?,
        Err(_) => "# Rules remembered at cordon's approval prompt (R-A3).\n".to_string(),
    };
    let text = existing + &rule.to_toml("approved at the prompt (remember as rule)");
    cordon_execpolicy::Policy::from_toml_str(&text, &path.display().to_string())
        .map_err(|e| format!("the rule would not load: {e}"))?;
    write_private(path, text.as_bytes()).map_err(|e| format!("{}: {e}", path.display()))
}

#[cfg(unix)]
pub(crate) fn write_private(path: &Path, body: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)?;
    let tmp = dir.join(format!(
        ".{}.{}.tmp",
        path.file_name()
            .map(|f| f.to_string_lossy())
            .unwrap_or_default(),
        RunId::new()
    ));
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(&tmp)?;
    let r = f.write_all(body).and_then(|_| f.sync_all());
    drop(f);
    if let Err(e) = r.and_then(|_| std::fs::rename(&tmp, path)) {
        let _ = std::fs::remove_file(&tmp);
        return Err(e);
    }
    Ok(())
}

#[cfg(not(unix))]
pub(crate) fn write_private(path: &Path, body: &[u8]) -> std::io::Result<()> {
    std::fs::write(path, body)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::approver::{NonInteractive, Preapproved, ScriptedApprover};
    use cordon_execpolicy::{EvalContext, Policy};
    use cordon_policy::PermissionProfile;

    const RULES: &str = "[[rules]]\npattern = [\"npm\", \"publish\"]\ndecision = \"ask\"\njustification = \"publishes\"\n";

    fn rec(cmd: &[&str]) -> DecisionRecord {
        let p = Policy::from_toml_str(RULES, "t.toml").unwrap();
        let argv: Vec<String> = cmd.iter().map(|s| s.to_string()).collect();
        p.evaluate(&argv, &EvalContext::default())
    }
    fn needs() -> NeededPermissions {
        NeededPermissions {
            profile: PermissionProfile::builtin("workspace-write").unwrap(),
            additional: None,
            sandboxed: true,
        }
    }
    fn decide(s: &mut Session, cmd: &[&str]) -> Verdict {
        let run = s.scope.start_run();
        let v = s.decide(&run, &rec(cmd), Path::new("/w"), &needs());
        s.scope.finish(&run);
        v
    }

    /// The mode × {known-safe, rule ask, danger ask, unknown, forbid} × {TTY, no TTY}
    /// matrix. "TTY" is a person who approves once; "no TTY" is the non-interactive
    /// approver (R-A6).
    #[test]
    fn mode_by_kind_by_tty_matrix() {
        use ApprovalMode::*;
        let kinds: [(&str, &[&str]); 5] = [
            ("known-safe", &["git", "status"]),
            ("rule ask", &["npm", "publish"]),
            ("danger ask", &["git", "reset", "--hard"]),
            ("unknown", &["cargo", "build"]),
            ("forbid", &["rm", "-rf", "/"]),
        ];
        // expected: (runs with a person, prompts with a person, runs without a TTY)
        let expect = |mode: ApprovalMode, kind: &str| -> (bool, bool, bool) {
            match (kind, mode) {
                ("forbid", _) => (false, false, false),
                ("known-safe", _) => (true, false, true),
                (_, Bypass) => (true, false, true),
                ("rule ask" | "danger ask", Never) => (false, false, false),
                ("rule ask" | "danger ask", _) => (true, true, false),
                ("unknown", Untrusted) => (true, true, false),
                ("unknown", _) => (true, false, true),
                _ => unreachable!(),
            }
        };
        for mode in [Untrusted, OnRequest, OnFailure, Never, Bypass] {
            for (kind, cmd) in kinds {
                let (runs_tty, prompts, runs_no_tty) = expect(mode, kind);
                let mut tty = Session::new(
                    mode,
                    Box::new(ScriptedApprover::from_answers(&[Answer::Once])),
                );
                let v = decide(&mut tty, cmd);
                assert_eq!(v.runs(), runs_tty, "{mode} {kind} tty: {v:?}");
                assert_eq!(tty.prompts == 1, prompts, "{mode} {kind} prompts");
                let mut no_tty = Session::new(mode, Box::new(NonInteractive::default()));
                let v = decide(&mut no_tty, cmd);
                assert_eq!(v.runs(), runs_no_tty, "{mode} {kind} no tty: {v:?}");
                if let Verdict::Refuse { reason, .. } = &v {
                    assert!(!reason.is_empty());
                    if prompts {
                        assert!(reason.contains("R-A6"), "{reason}");
                    }
                }
            }
        }
    }

    #[test]
    fn session_answer_is_reused_for_the_same_key_only() {
        let mut s = Session::new(
            ApprovalMode::Untrusted,
            Box::new(ScriptedApprover::from_answers(&[
                Answer::Session,
                Answer::Once,
                Answer::Once,
            ])),
        );
        assert!(decide(&mut s, &["cargo", "build"]).runs());
        assert_eq!(s.prompts, 1);
        // same key through bash -lc: no prompt
        match decide(&mut s, &["bash", "-lc", "cargo build"]) {
            Verdict::Run { by, .. } => assert_eq!(by, "session cache"),
            v => panic!("{v:?}"),
        }
        assert_eq!(s.prompts, 1);
        // different key: prompt; "once" is not cached
        assert!(decide(&mut s, &["cargo", "test"]).runs());
        assert!(decide(&mut s, &["cargo", "test"]).runs());
        assert_eq!(s.prompts, 3);
    }

    #[test]
    fn dangerous_commands_are_asked_every_time() {
        let mut s = Session::new(
            ApprovalMode::OnRequest,
            Box::new(ScriptedApprover::from_answers(&[
                Answer::Session,
                Answer::Deny,
            ])),
        );
        assert!(decide(&mut s, &["git", "reset", "--hard"]).runs());
        assert!(!decide(&mut s, &["git", "reset", "--hard"]).runs());
        assert_eq!(s.prompts, 2);
    }

    #[test]
    fn deny_and_abort() {
        let mut s = Session::new(
            ApprovalMode::OnRequest,
            Box::new(ScriptedApprover::from_answers(&[
                Answer::Deny,
                Answer::Abort,
            ])),
        );
        match decide(&mut s, &["npm", "publish"]) {
            Verdict::Refuse { reason, abort } => {
                assert!(!abort);
                assert!(
                    reason.contains("denied by the scripted answers"),
                    "{reason}"
                );
                assert!(reason.contains("publishes"), "{reason}");
            }
            v => panic!("{v:?}"),
        }
        assert!(matches!(
            decide(&mut s, &["npm", "publish"]),
            Verdict::Refuse { abort: true, .. }
        ));
    }

    #[test]
    fn remember_rule_is_appended_validated_and_then_allows() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("cordon/rules.toml");
        let mut s = Session::new(
            ApprovalMode::Untrusted,
            Box::new(ScriptedApprover::from_answers(&[Answer::RememberRule])),
        );
        s.rules_file = Some(f.clone());
        assert!(decide(&mut s, &["bash", "-c", "git status && mytool --fix"]).runs());
        let text = std::fs::read_to_string(&f).unwrap();
        let p = Policy::from_toml_str(&text, "rules").unwrap();
        let argv = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let ctx = EvalContext::default();
        assert_eq!(
            p.evaluate(&argv(&["mytool", "--fix"]), &ctx).decision,
            cordon_execpolicy::Decision::Allow
        );
        // exactly that segment: not git status (known-safe anyway), not other args
        assert_ne!(
            p.evaluate(&argv(&["mytool", "--other"]), &ctx).decision,
            cordon_execpolicy::Decision::Allow
        );
        // nor the same with more arguments after it (attack pass 45: a remembered
        // `git fetch origin` allowed `git fetch origin --upload-pack=…`).
        assert_ne!(
            p.evaluate(&argv(&["mytool", "--fix", "--upload-pack=evil"]), &ctx)
                .decision,
            cordon_execpolicy::Decision::Allow
        );
        assert!(text.contains("exact = true"), "{text}");
    }

    /// nu16 N8: "remember-rule" for a request that offers no rule (a dangerous finding
    /// asks) approves once and says why, instead of a silent deny; nothing is written.
    #[test]
    fn remember_rule_not_offered_approves_once_and_says_so() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("cordon/rules.toml");
        let mut s = Session::new(
            ApprovalMode::OnRequest,
            Box::new(ScriptedApprover::from_answers(&[Answer::RememberRule])),
        );
        s.rules_file = Some(f.clone());
        match decide(&mut s, &["git", "reset", "--hard"]) {
            Verdict::Run { reason, answer, .. } => {
                assert_eq!(answer, Some(Answer::Once));
                assert!(reason.contains("not offered"), "{reason}");
            }
            v => panic!("{v:?}"),
        }
        assert!(!f.exists());
    }

    #[test]
    fn late_answer_after_cancel_is_rejected() {
        // Drive the scope by hand: issue, cancel, then answer.
        let mut s = Session::new(ApprovalMode::OnRequest, Box::new(NonInteractive::default()));
        let run = s.scope.start_run();
        let req = ReviewableRequest::tool_call(
            run.clone(),
            &rec(&["npm", "publish"]),
            "/w".into(),
            needs(),
            "x".into(),
        );
        s.scope.issue(&run, &req.approval_id);
        s.scope.cancel(&run);
        let reply = Preapproved.ask(&req);
        assert!(s.scope.accept(&run, &reply).is_err());
        assert_eq!(
            s.scope.log().last().unwrap().kind,
            DecisionKind::LateAnswerRejected
        );
        // through Session::ask: a scripted answer naming an old approval id is rejected
        let mut s = Session::new(
            ApprovalMode::OnRequest,
            Box::new(ScriptedApprover::new(Box::new(std::io::Cursor::new(
                br#"{"answer":"once","approval_id":"appr-old"}"#.to_vec(),
            )))),
        );
        let v = decide(&mut s, &["npm", "publish"]);
        match v {
            Verdict::Refuse { reason, .. } => assert!(reason.contains("rejected"), "{reason}"),
            v => panic!("{v:?}"),
        }
    }
}
