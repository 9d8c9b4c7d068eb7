//! Approvers: who answers a [`ReviewableRequest`] (R-A6, R-A7).
//!
//! - [`TerminalApprover`]: a person at a terminal (TTY on stdin and stderr); shows the
//!   request and reads one key: `o` once, `s` session, `r` remember as rule, `d` deny,
//!   `a` abort. Enter, Escape or end of input deny (default deny).
//! - [`NonInteractive`]: nobody can be asked (print mode, CI, background workers): every
//!   ask is denied with the reason (R-A6). Chosen automatically without a TTY.
//! - [`ScriptedApprover`]: answers from JSON lines (a file or a descriptor), for harnesses
//!   and tests. Each line is `"once"` or `{"answer": "session", "approval_id": "…"}`; an
//!   `approval_id`, when present, must name the request being answered (else the answer is
//!   rejected as late or misdirected, R-A9). End of input denies. Opened from a file or
//!   descriptor, it prints each request as `{"approval_request": …}` on stderr first.
//! - [`Preapproved`]: `--yes` — approve once, never cached.

use crate::ids::ApprovalId;
use crate::request::{Answer, ReviewableRequest};
use serde::{Deserialize, Serialize};
use std::io::{BufRead, Write};

/// An answer with the request it names and who gave it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reply {
    /// The approval id the answer is for (R-A9).
    pub approval_id: ApprovalId,
    /// The answer.
    pub answer: Answer,
    /// Who answered (`terminal`, `non-interactive`, `scripted`, `--yes`, `session cache`).
    pub by: String,
    /// Why, for denials that nobody chose (e.g. "no one can be asked here (R-A6)").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// Something that answers approval requests (from any thread: a harness shares its
/// session between the threads of its callers).
pub trait Approver: Send {
    /// Answers `req`. Must return an answer from `req.allowed_answers()`; implementations
    /// that cannot reach anyone deny.
    fn ask(&mut self, req: &ReviewableRequest) -> Reply;
    /// A short name for reports (`terminal`, `non-interactive`, `scripted`, `--yes`).
    fn name(&self) -> &'static str;
    /// Whether it can be asked about hosts while a command runs (R-P4 `ask`): false for
    /// approvers that would deny anyway (nobody there) or that approve only what they
    /// were shown (`--yes` saw the command, not the hosts it reaches). Without it, a
    /// managed network's unknown hosts are denied at once, without waiting.
    fn answers_hosts(&self) -> bool {
        true
    }
}

/// Every ask is denied with the reason (R-A6). The note says how a person could approve,
/// in the terms of the front end that asked ([`ApprovalFront`]): a CLI user has flags, an MCP
/// client has elicitation, a harness author has the `Approver` it passes in.
#[derive(Debug, Default, Clone)]
pub struct NonInteractive {
    /// Whose terms the denial note uses.
    pub front: ApprovalFront,
}

/// The front end a denial note is written for (what its user can do to approve).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub enum ApprovalFront {
    /// `cordon run` / `cordon check`: `--yes`, `--approvals-from FILE`.
    #[default]
    Cli,
    /// `cordon mcp`: the client has no form elicitation.
    Mcp,
    /// The library harness: constructed without an approver.
    Library,
}

impl ApprovalFront {
    /// What a person can do to approve, in this front end's terms. `rule_blocked`: why an
    /// `allow` rule would not make it run ([`ReviewableRequest::why_rule_does_not_help`]:
    /// a dangerous-command finding, a cap, an unparsed part, additional permissions), or
    /// `None` when one would (new-user passes nu11 M3, nu60).
    pub fn how_to_approve(self, rule_blocked: Option<&str>) -> String {
        let (how, rule) = match self {
            ApprovalFront::Cli => (
                "pass --yes to approve it once, --approvals-from FILE for scripted answers",
                "add an allow rule",
            ),
            ApprovalFront::Mcp => (
                "this MCP client does not support elicitation (form mode), so no one can \
                 approve it from here: use a client that does",
                "add an allow rule (in ~/.config/cordon/rules.toml, or a --rules file cordon mcp \
                 is started with: rules are not part of a profile)",
            ),
            ApprovalFront::Library => (
                "the harness was built without an approver: construct it with \
                 Harness::with_approver",
                "add an allow rule",
            ),
        };
        match rule_blocked {
            None => format!("{how}, or {rule}"),
            Some(why) => format!("{how} (an allow rule does not cover it: {why})"),
        }
    }
}

impl NonInteractive {
    /// A non-interactive approver whose notes use `front`'s terms.
    pub fn for_front(front: ApprovalFront) -> Self {
        NonInteractive { front }
    }
}

impl Approver for NonInteractive {
    fn ask(&mut self, req: &ReviewableRequest) -> Reply {
        let note = if req.kind == crate::request::RequestKind::ToolCall {
            format!(
                "needs approval: {}; {}: {}",
                req.reason,
                cordon_execpolicy::approval::NO_ONE_CAN_BE_ASKED,
                self.front
                    .how_to_approve(req.why_rule_does_not_help().as_deref())
            )
        } else {
            format!(
                "a retry was possible ({}), but no one can be asked here (R-A6)",
                req.reason
            )
        };
        Reply {
            approval_id: req.approval_id.clone(),
            answer: Answer::Deny,
            by: self.name().into(),
            note: Some(note),
        }
    }
    fn name(&self) -> &'static str {
        "non-interactive"
    }
    fn answers_hosts(&self) -> bool {
        false
    }
}

/// `--yes`: approve the tool call once (never cached for the session). A retry in a wider
/// form after a denial is not pre-approved (R-F2: it needs a new approval).
#[derive(Debug, Default, Clone)]
pub struct Preapproved;

impl Approver for Preapproved {
    fn ask(&mut self, req: &ReviewableRequest) -> Reply {
        if req.kind != crate::request::RequestKind::ToolCall {
            return Reply {
                approval_id: req.approval_id.clone(),
                answer: Answer::Deny,
                by: self.name().into(),
                note: Some(format!(
                    "--yes approves the command, not a retry in a wider form (R-F2); to \
                     retry: {}",
                    req.reason
                )),
            };
        }
        Reply {
            approval_id: req.approval_id.clone(),
            answer: Answer::Once,
            by: self.name().into(),
            note: None,
        }
    }
    fn name(&self) -> &'static str {
        "--yes"
    }
    fn answers_hosts(&self) -> bool {
        false
    }
}

/// One scripted answer line.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
enum ScriptLine {
    Bare(Answer),
    Full {
        answer: Answer,
        #[serde(default)]
        approval_id: Option<ApprovalId>,
    },
}

/// Answers from JSON lines, one per request, in order.
pub struct ScriptedApprover {
    input: Box<dyn BufRead + Send>,
    /// Every request seen, in order (for tests and reports: "one prompt per distinct key").
    pub seen: Vec<ReviewableRequest>,
    /// Print each request as one JSON line `{"approval_request": …}` on stderr before
    /// reading its answer (on for `--approvals-from`, so a harness knows the approval id).
    pub announce: bool,
}

impl ScriptedApprover {
    /// Reads answers from `input`.
    pub fn new(input: Box<dyn BufRead + Send>) -> ScriptedApprover {
        ScriptedApprover {
            input,
            seen: Vec::new(),
            announce: false,
        }
    }

    /// Answers from a fixed list (tests).
    pub fn from_answers(answers: &[Answer]) -> ScriptedApprover {
        let text: String = answers
            .iter()
            .map(|a| serde_json::to_string(a).unwrap_or_default() + "\n")
            .collect();
        ScriptedApprover::new(Box::new(std::io::Cursor::new(text.into_bytes())))
    }

    /// Opens `spec`: a file path, or `fd:N` / a bare number for an inherited descriptor.
    ///
    /// Errors: the file cannot be opened, or the descriptor is not open.
    pub fn open(spec: &str) -> std::io::Result<ScriptedApprover> {
        let fd = spec
            .strip_prefix("fd:")
            .unwrap_or(spec)
            .parse::<i32>()
            .ok()
            .filter(|_| !spec.contains('/'));
        // An inherited descriptor is re-opened through /dev/fd (no unsafe fd adoption;
        // closing ours never closes the caller's).
        let path = match fd {
            Some(n) if n >= 0 => format!("/dev/fd/{n}"),
            _ => spec.to_string(),
        };
        let reader = std::fs::File::open(&path)?;
        let mut s = ScriptedApprover::new(Box::new(std::io::BufReader::new(reader)));
        s.announce = true;
        Ok(s)
    }

    fn next_line(&mut self) -> Option<Result<ScriptLine, String>> {
        loop {
            let mut line = String::new();
            match self.input.read_line(&mut line) {
                Ok(0) => return None,
                Ok(_) => {}
                Err(e) => return Some(Err(format!("cannot read scripted answers: {e}"))),
            }
            let t = line.trim();
            if t.is_empty() || t.starts_with('#') {
                continue;
            }
            return Some(
                // What a valid line looks like, not the JSON library's words for the
                // mismatch (new-user pass nu17 N11: "data did not match any variant of
                // untagged enum ScriptLine").
                // A bare word (`once`, not `"once"`) is taken as the answer it names (new-user
                // pass nu26, F5: it was refused as a denial, and nothing said why).
                serde_json::from_str::<ScriptLine>(t)
                    .or_else(|e| {
                        serde_json::from_value::<Answer>(serde_json::Value::String(t.into()))
                            .map(ScriptLine::Bare)
                            .map_err(|_| e)
                    })
                    .map_err(|_| {
                        format!(
                            "scripted answer {t} is not valid: each line is one JSON string — \
                         \"once\", \"session\", \"remember-rule\", \"deny\" or \"abort\" \
                         (the request's \"answers\" list what it takes) — or an object \
                         {{\"answer\": \"once\", \"approval_id\": \"appr-…\"}}"
                        )
                    }),
            );
        }
    }
}

impl Approver for ScriptedApprover {
    fn ask(&mut self, req: &ReviewableRequest) -> Reply {
        self.seen.push(req.clone());
        if self.announce {
            // The harness sees what it answers: one JSON line on stderr.
            // With the answers it accepts (new-user pass nu16 N8).
            if let Ok(mut v) = serde_json::to_value(req) {
                v["answers"] = serde_json::json!(req.allowed_answers());
                if let Ok(j) = serde_json::to_string(&serde_json::json!({ "approval_request": v }))
                {
                    eprintln!("{j}");
                }
            }
        }
        let deny = |note: String| Reply {
            approval_id: req.approval_id.clone(),
            answer: Answer::Deny,
            by: "scripted".into(),
            note: Some(note),
        };
        match self.next_line() {
            None => deny("no scripted answer left: denied".into()),
            Some(Err(e)) => {
                let e = format!("{e}; taken as \"deny\"");
                // Said where the person sees it: the denial alone reads as a "no". A tool
                // call's refusal prints its reason (this note) already: said once
                // (new-user pass 150: the same line twice); a retry's or a host's denial
                // is not printed with its note.
                if req.kind != crate::request::RequestKind::ToolCall {
                    eprintln!("cordon: {e}");
                }
                deny(e)
            }
            Some(Ok(ScriptLine::Bare(answer))) => Reply {
                approval_id: req.approval_id.clone(),
                answer,
                by: "scripted".into(),
                note: None,
            },
            Some(Ok(ScriptLine::Full {
                answer,
                approval_id,
            })) => Reply {
                approval_id: approval_id.unwrap_or_else(|| req.approval_id.clone()),
                answer,
                by: "scripted".into(),
                note: None,
            },
        }
    }
    fn name(&self) -> &'static str {
        "scripted"
    }
}

/// An approver's name (`Reply::by`, the `by` of `--json`, which stays the name) as the
/// words a reason says it in: "denied by the scripted answers", not "denied by scripted"
/// (new-user pass 155, #11). A name not listed is said as it is.
pub fn by_phrase(by: &str) -> &str {
    match by {
        "scripted" => "the scripted answers",
        "terminal" => "the person at the terminal",
        "mcp client" => "the MCP client's user",
        "session cache" => "the session cache",
        "policy" => "the policy",
        other => other,
    }
}

/// Whether stdin and stderr are both terminals (the interactive prompt needs both).
pub fn has_tty() -> bool {
    use std::io::IsTerminal;
    std::io::stdin().is_terminal() && std::io::stderr().is_terminal()
}

/// A person at the terminal: prints the request on stderr and reads one key.
#[derive(Debug, Default)]
pub struct TerminalApprover {
    /// Whether a "session" answer outlives this process (`cordon run --session ID`). Without
    /// one the session is the run itself, and the prompt says so (new-user pass nu9, F23:
    /// `[s] for this session` was forgotten by the next `cordon run`).
    pub session_persists: bool,
}

impl TerminalApprover {
    /// The prompt line for `req`.
    pub fn prompt_line(&self, req: &ReviewableRequest) -> String {
        let opts: Vec<String> = req
            .allowed_answers()
            .iter()
            .map(|a| format!("[{}] {}", a.key(), self.label(*a)))
            .collect();
        format!("  {}  (Enter = deny) > ", opts.join("  "))
    }

    /// [`Answer::label`], except that a session answer without a persisted session is
    /// called what it is: for the rest of this run.
    fn label(&self, a: Answer) -> &'static str {
        match a {
            Answer::Session if !self.session_persists => {
                "for the rest of this run (--session ID keeps it across runs)"
            }
            a => a.label(),
        }
    }
}

/// What cordon writes to a terminal before its own lines after a command had it: whatever
/// the command left there must not hide or garble them (attack passes 39 C2 and 44 L3).
/// Normal attributes (SGR 0), a visible cursor, the ASCII character set in G0 and G1 and
/// G0 shifted in (a `ESC(0` / shift-out showed line-drawing symbols), line wrap on, and no
/// scroll region (reset between a cursor save and restore: DECSTBM homes the cursor).
pub const TERMINAL_RESET: &str = "\x1b[0m\x1b[?25h\x0f\x1b(B\x1b)B\x1b[?7h\x1b7\x1b[r\x1b8";

impl Approver for TerminalApprover {
    fn ask(&mut self, req: &ReviewableRequest) -> Reply {
        let term = console::Term::stderr();
        let mut err = std::io::stderr();
        // Keys typed (or pushed) before the question was shown answer nothing: the input
        // queue is discarded. Attributes a command left (hidden text, colours) are reset,
        // on a line of its own, so the question reads as printed.
        let _ = nix::sys::termios::tcflush(std::io::stdin(), nix::sys::termios::FlushArg::TCIFLUSH);
        let _ = write!(err, "{TERMINAL_RESET}\r\n");
        let _ = write!(err, "{}", req.render_text());
        let allowed = req.allowed_answers();
        let mut answer = Answer::Deny;
        for _ in 0..3 {
            let _ = write!(err, "{}", self.prompt_line(req));
            let _ = err.flush();
            match term.read_key() {
                // Ctrl-D (end of input) and other control keys: default deny, as Enter
                // (new user, stop 19: `'\u{4}' is not one of the answers`).
                Ok(console::Key::Char(c)) if c.is_control() => {
                    let _ = writeln!(err, "deny");
                    break;
                }
                Ok(console::Key::Char(c)) => match Answer::from_key(c) {
                    Some(a) if allowed.contains(&a) => {
                        answer = a;
                        let _ = writeln!(err, "{}", self.label(a));
                        break;
                    }
                    _ => {
                        let _ = writeln!(err, "'{c}' is not one of the answers");
                        continue;
                    }
                },
                _ => {
                    // Enter, Escape, end of input, read error: default deny.
                    let _ = writeln!(err, "deny");
                    break;
                }
            }
        }
        Reply {
            approval_id: req.approval_id.clone(),
            answer,
            by: self.name().into(),
            note: None,
        }
    }
    fn name(&self) -> &'static str {
        "terminal"
    }
}

/// Which approver a CLI entry point gets: `--approvals-from` wins, then `--yes`, then the
/// terminal when stdin and stderr are TTYs and `--non-interactive` was not given, else
/// [`NonInteractive`] (R-A6). `session_persists`: whether "session" answers are kept
/// beyond this process (`--session ID`), which the terminal prompt words.
///
/// Errors: the scripted source cannot be opened.
pub fn choose_approver(
    approvals_from: Option<&str>,
    yes: bool,
    non_interactive: bool,
    session_persists: bool,
) -> std::io::Result<Box<dyn Approver>> {
    if let Some(spec) = approvals_from {
        return Ok(Box::new(ScriptedApprover::open(spec)?));
    }
    if yes {
        return Ok(Box::new(Preapproved));
    }
    if !non_interactive && has_tty() {
        return Ok(Box::new(TerminalApprover { session_persists }));
    }
    Ok(Box::new(NonInteractive::default()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// nu17 N11: a line that is no answer is named with what a valid one looks like, not
    /// the JSON library's words; valid lines of both forms are read.
    #[test]
    fn an_invalid_scripted_answer_says_what_is_valid() {
        let input = "\"yes please\"\n# comment\n\"once\"\n{\"answer\":\"deny\"}\n";
        let mut a = ScriptedApprover::new(Box::new(std::io::Cursor::new(input)));
        let err = a.next_line().unwrap().unwrap_err();
        assert!(
            err.contains("\"remember-rule\"") && err.contains("approval_id"),
            "{err}"
        );
        assert!(
            !err.contains("untagged") && !err.contains("variant"),
            "{err}"
        );
        assert!(matches!(
            a.next_line(),
            Some(Ok(ScriptLine::Bare(Answer::Once)))
        ));
        assert!(matches!(
            a.next_line(),
            Some(Ok(ScriptLine::Full {
                answer: Answer::Deny,
                ..
            }))
        ));
    }

    #[test]
    fn choice_of_approver() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("answers");
        std::fs::write(&f, "\"once\"\n").unwrap();
        let spec = f.to_str().unwrap();
        assert_eq!(
            choose_approver(Some(spec), true, true, false)
                .unwrap()
                .name(),
            "scripted"
        );
        assert_eq!(
            choose_approver(None, true, false, false).unwrap().name(),
            "--yes"
        );
        assert_eq!(
            choose_approver(None, false, true, false).unwrap().name(),
            "non-interactive"
        );
        if !has_tty() {
            // no TTY → non-interactive without being told (R-A6)
            assert_eq!(
                choose_approver(None, false, false, false).unwrap().name(),
                "non-interactive"
            );
        }
        assert!(choose_approver(Some("/nonexistent/answers"), false, false, false).is_err());
    }

    /// nu9 F23: without `--session` a "session" answer lasts the run, and the prompt says
    /// so; with one it is kept for the session.
    #[test]
    fn the_session_answer_is_worded_by_what_keeps_it() {
        let req = make_request();
        let run_only = TerminalApprover::default().prompt_line(&req);
        assert!(
            run_only.contains("[s] for the rest of this run"),
            "{run_only}"
        );
        let kept = TerminalApprover {
            session_persists: true,
        }
        .prompt_line(&req);
        assert!(kept.contains("[s] for this session"), "{kept}");
    }

    /// A tool-call request for `make` under workspace-write.
    fn make_request() -> crate::ReviewableRequest {
        crate::ReviewableRequest::tool_call(
            crate::RunId::new(),
            &cordon_execpolicy::Policy::empty()
                .evaluate(&["make".into()], &cordon_execpolicy::EvalContext::default()),
            "/w".into(),
            crate::NeededPermissions {
                profile: cordon_policy::PermissionProfile::builtin("workspace-write").unwrap(),
                additional: None,
                sandboxed: true,
            },
            "x".into(),
        )
    }

    #[test]
    fn scripted_lines() {
        let req = make_request();
        let mut s = ScriptedApprover::new(Box::new(std::io::Cursor::new(
            b"# comment\n\n\"session\"\n{\"answer\": \"deny\"}\nnot json\n".to_vec(),
        )));
        assert_eq!(s.ask(&req).answer, Answer::Session);
        assert_eq!(s.ask(&req).answer, Answer::Deny);
        let bad = s.ask(&req);
        assert_eq!(bad.answer, Answer::Deny);
        assert!(bad.note.unwrap().contains("not valid"));
        // end of input denies
        let end = s.ask(&req);
        assert_eq!(end.answer, Answer::Deny);
        assert!(end.note.unwrap().contains("no scripted answer left"));
        assert_eq!(s.seen.len(), 4);
    }

    /// The denial note tells the user of each front end what *they* can do: CLI flags only
    /// to a CLI user (an MCP client has no `--yes` to pass).
    #[test]
    fn denial_note_speaks_the_front_ends_terms() {
        let req = make_request();
        let note = |front| {
            NonInteractive::for_front(front)
                .ask(&req)
                .note
                .unwrap_or_default()
        };
        assert!(note(ApprovalFront::Cli).contains("--yes"));
        for front in [ApprovalFront::Mcp, ApprovalFront::Library] {
            let n = note(front);
            assert!(n.contains("R-A6"), "{n}");
            assert!(
                !n.contains("--yes") && !n.contains("--approvals-from"),
                "{n}"
            );
        }
        assert!(note(ApprovalFront::Mcp).contains("elicitation"));
        assert!(note(ApprovalFront::Library).contains("with_approver"));
    }
}
