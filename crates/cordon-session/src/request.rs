//! The reviewable request (R-A7) and the answers to it.
//!
//! A request carries everything a person needs to decide: the argv and the parsed segments
//! (each with its decision and why), the cwd, the permissions the command would run with
//! (the profile plus the per-command additional permissions, as `cordon explain` shows
//! them), the matched rules and findings, the reason, and — when it is safe to offer — a
//! remember-rule that covers exactly the segment that asked.

use crate::ids::{ApprovalId, RunId};
use cordon_execpolicy::{Basis, Decision, DecisionRecord, SegmentRecord};
use cordon_policy::{AdditionalPermissions, NetworkPolicy, PermissionProfile};
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;
use std::path::PathBuf;

/// What the command would run with (R-A7, R-A8 key part): the profile (intent, already
/// widened by `additional`) and the per-command additional permissions that were merged in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NeededPermissions {
    /// The effective profile (base + `additional`, R-O1).
    pub profile: PermissionProfile,
    /// The per-command additional permissions (R-O1), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub additional: Option<AdditionalPermissions>,
    /// Whether the command runs inside the sandbox (false = unconfined, e.g. an escalation
    /// outside the sandbox or a rule's `sandbox = "bypass"`).
    pub sandboxed: bool,
}

impl NeededPermissions {
    /// Whether the network is enabled for the command.
    pub fn network(&self) -> bool {
        self.profile.network == NetworkPolicy::Enabled
            || self
                .additional
                .as_ref()
                .is_some_and(AdditionalPermissions::wants_network)
    }

    /// One line for a prompt: profile, network, extra grants, sandbox.
    pub fn summary(&self) -> String {
        let net = if self.network() {
            "on"
        } else if self.profile.network == NetworkPolicy::Managed {
            "managed (allow-listed hosts through cordon's proxy)"
        } else {
            "off"
        };
        let mut s = format!("profile {}, network {net}", self.profile.name);
        if let Some(a) = &self.additional {
            for e in &a.entries {
                let _ = write!(s, ", +{} {}", e.access_name(), e.path);
            }
        }
        s.push_str(if self.sandboxed {
            ", sandboxed"
        } else {
            ", UNSANDBOXED"
        });
        s
    }
}

/// Small helper so summaries read `+write /data`.
trait AccessName {
    fn access_name(&self) -> &'static str;
}
impl AccessName for cordon_policy::FsEntry {
    fn access_name(&self) -> &'static str {
        match self.access {
            cordon_policy::Access::Deny => "deny",
            cordon_policy::Access::Read => "read",
            cordon_policy::Access::Write => "write",
        }
    }
}

/// One parsed segment as shown for review.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReviewSegment {
    /// Index in the decision record.
    pub index: usize,
    /// The effective argv (wrappers looked through).
    pub argv: Vec<String>,
    /// This segment's decision.
    pub decision: Decision,
    /// Why: `rule "npm" "publish" (rules.toml:3): publishes`, `finding git_reset_hard: …`,
    /// `known-safe`, `no rule: …`.
    pub why: String,
    /// Whether an `allow` rule could decide this segment: no dangerous-command finding and
    /// no cap (the exec policy lets those override allow rules).
    #[serde(default = "yes")]
    pub rule_decides: bool,
}

/// What kind of decision is asked for (R-A10: these are separate, recorded decisions).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum RequestKind {
    /// May this tool call run as shown?
    ToolCall,
    /// A retry after a denial, in a wider form (R-F2). The first attempt may have had side
    /// effects.
    Escalation {
        /// The outcome class of the attempt that was denied.
        after: String,
    },
    /// The running command's managed network wants a destination that no
    /// `network.allow`/`network.deny` rule names (R-P4 `ask`): may it connect?
    NetworkHost {
        /// The destination host (normalised: lower case, no trailing dot; `[v6]`).
        host: String,
        /// The destination port.
        port: u16,
        /// `http`, `connect` or `socks5`.
        proto: String,
    },
}

/// A suggested "remember as rule" answer: an `allow` prefix rule that covers exactly the
/// segment that asked (never another segment of the pipeline), with itself as the example
/// checked when the rules load (R-A3).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RememberRule {
    /// Index of the segment it covers.
    pub segment: usize,
    /// The pattern: the segment's whole static argv.
    pub pattern: Vec<String>,
    /// The example (the segment as a command line).
    pub example: String,
}

impl RememberRule {
    /// The rule as a TOML `[[rules]]` table (validated by [`crate::rules_file`] before it is
    /// written), `exact`: it allows this command, not the same with more arguments.
    pub fn to_toml(&self, justification: &str) -> String {
        let q = |s: &str| toml::Value::String(s.to_string()).to_string();
        format!(
            "\n[[rules]]\npattern = [{}]\nexact = true\ndecision = \"allow\"\njustification = {}\nexamples = [{}]\n",
            self.pattern
                .iter()
                .map(|p| q(p))
                .collect::<Vec<_>>()
                .join(", "),
            q(justification),
            q(&self.example)
        )
    }
}

/// The wire form of [`ReviewableRequest::needs`]: `{"profile": {"name", "kind", "network",
/// "network_rules", "writable": [paths as spelled], "deny_entries": N (the profile's deny
/// entries as written: one may name several paths, which `cordon explain` counts), "caches",
/// "limits", "env_keep"?, "env_set"? (names)}, "additional", "sandboxed"}`.
fn needs_summary<S: serde::Serializer>(n: &NeededPermissions, s: S) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeMap;
    let fs = n.profile.effective_filesystem();
    let (writable, denied): (Vec<String>, usize) = match &fs {
        cordon_policy::FilesystemPolicy::Unrestricted => (vec!["/".to_string()], 0),
        cordon_policy::FilesystemPolicy::Restricted { entries, .. } => (
            entries
                .iter()
                .filter(|e| e.access == cordon_policy::Access::Write)
                .map(|e| e.path.clone())
                .collect(),
            entries
                .iter()
                .filter(|e| e.access == cordon_policy::Access::Deny)
                .count(),
        ),
    };
    // Everything that widens the sandbox beyond its name stays on the wire (attack pass
    // 42, H3: host sockets, loopback forwards, allowed hosts and kept secrets were left
    // out): the network rules, the variables kept or set (names only: values may be
    // secrets), the cache mode and the limits. Only the deny list is a count.
    let mut profile = serde_json::json!({
        "name": n.profile.name,
        "kind": n.profile.kind,
        "network": n.profile.network,
        "network_rules": n.profile.network_rules,
        "writable": writable,
        "deny_entries": denied,
        "caches": n.profile.caches,
        "limits": n.profile.limits,
    });
    if !n.profile.env.keep.is_empty() {
        profile["env_keep"] = serde_json::json!(n.profile.env.keep);
    }
    if !n.profile.env.set.is_empty() {
        profile["env_set"] = serde_json::json!(n.profile.env.set.keys().collect::<Vec<_>>());
    }
    let mut m = s.serialize_map(None)?;
    m.serialize_entry("profile", &profile)?;
    if let Some(a) = &n.additional {
        m.serialize_entry("additional", a)?;
    }
    m.serialize_entry("sandboxed", &n.sandboxed)?;
    m.end()
}

/// The reviewable request (R-A7). Serialized for a harness or person (the profile
/// summarised); never read back.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ReviewableRequest {
    /// The run this request belongs to (R-A9).
    pub run_id: RunId,
    /// This request's id; an answer must name it (R-A9).
    pub approval_id: ApprovalId,
    /// What is asked.
    pub kind: RequestKind,
    /// The argv as given.
    pub argv: Vec<String>,
    /// The parsed segments with their decisions.
    pub segments: Vec<ReviewSegment>,
    /// Opaque constructs (the parser could not understand them statically).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub opaque: Vec<String>,
    /// The working directory.
    pub cwd: PathBuf,
    /// Network hosts named in the command's arguments (`https://host/…`, `git@host:…`),
    /// when known.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hosts: Vec<String>,
    /// What it would run with. On the wire (`approval_request` lines, MCP) the profile is
    /// summarised ([`needs_summary`]): everything that widens it (writable entries, network
    /// rules, kept variables, caches, limits) and only how many entries it denies — not the
    /// whole built-in list (new-user pass nu18 F15: each request line was about 11 KB).
    #[serde(serialize_with = "needs_summary")]
    pub needs: NeededPermissions,
    /// Matched rules and findings that made it ask, one line each.
    pub matched: Vec<String>,
    /// Why it asks.
    pub reason: String,
    /// A remember-rule covering exactly the asking segment, when one can be offered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remember: Option<RememberRule>,
    /// A warning the approver must show (e.g. "the first attempt may have had side effects").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warning: Option<String>,
    /// Why the agent says it needs this (a harness's tool-call argument; the agent's
    /// words, shown as such, never a reason to approve by itself).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub justification: Option<String>,
    /// Whether a "session" answer is kept for the rest of the session: not for a command
    /// with a finding (dangerous) or an opaque part, nor for an escalation
    /// ([`crate::cache::eligible`]). When `false`, `session` is not among
    /// [`ReviewableRequest::allowed_answers`] (new-user pass nu11, M2: `[s]` was offered for
    /// `git reset --hard`, echoed, and the next run asked again).
    #[serde(default = "yes")]
    pub session_answer_kept: bool,
    /// The working directory asked for lies in another project, which would become the
    /// writable workspace (a harness's or MCP call's `cwd`): a widening no rule on
    /// commands grants. Not serialized (`reason` says so).
    #[serde(skip)]
    pub cwd_elsewhere: bool,
}

fn yes() -> bool {
    true
}

fn segment_why(s: &SegmentRecord) -> String {
    let mut why = match &s.basis {
        Basis::Rule { rule } => match s.matched_rules.get(*rule) {
            Some(r) => format!(
                "rule {} → {} ({}){}",
                r.pattern,
                r.decision,
                r.source,
                r.justification
                    .as_deref()
                    .map(|j| format!(": {j}"))
                    .unwrap_or_default()
            ),
            None => "rule".into(),
        },
        Basis::KnownSafe { reason } => format!("known-safe: {reason}"),
        Basis::Dangerous { finding } => match s.findings.get(*finding) {
            Some(f) => format!("finding {} → {}: {}", f.id, f.decision, f.reason),
            None => "dangerous-command finding".into(),
        },
        Basis::Default { reason } => format!("no rule: {reason}"),
    };
    for c in &s.caps {
        let _ = write!(why, "; capped at ask: {c}");
    }
    why
}

/// The remember-rule for `record`, if one may be offered: exactly one segment asks, and it
/// asks only by default (no rule, no finding, no cap — an `allow` rule could not override
/// those anyway), its program name is trusted and every word is static, and the command is
/// not opaque. The pattern is that segment's whole argv, so the rule never covers another
/// segment of the pipeline nor other arguments.
pub fn remember_rule(record: &DecisionRecord) -> Option<RememberRule> {
    if !record.opaque.is_empty() || record.decision != Decision::Ask {
        return None;
    }
    let mut asking = record
        .segments
        .iter()
        .enumerate()
        .filter(|(_, s)| s.decision != Decision::Allow);
    let (index, seg) = asking.next()?;
    if asking.next().is_some()
        || !matches!(seg.basis, Basis::Default { .. })
        || !seg.caps.is_empty()
        || !seg.findings.is_empty()
        || !seg.segment.dynamic_args.is_empty()
        || seg.segment.runtime_args
        || !seg.segment.program.is_trusted_name()
        || seg.segment.argv.is_empty()
    {
        return None;
    }
    let pattern = seg.segment.argv.clone();
    Some(RememberRule {
        segment: index,
        example: shell_words(&pattern),
        pattern,
    })
}

/// Hosts named in the static arguments of `record`'s segments: `scheme://[user@]host[:port]/…`
/// and scp-style `user@host:path`.
pub fn hosts_in(record: &DecisionRecord) -> Vec<String> {
    let mut hosts: Vec<String> = Vec::new();
    for s in &record.segments {
        for (i, a) in s.segment.argv.iter().enumerate().skip(1) {
            if !s.segment.is_static(i) {
                continue;
            }
            let host = if let Some((_, rest)) = a.split_once("://") {
                let auth = rest.split(['/', '?', '#']).next().unwrap_or("");
                let auth = auth.rsplit_once('@').map_or(auth, |(_, h)| h);
                if let Some(v6) = auth.strip_prefix('[') {
                    v6.split(']').next().unwrap_or("").to_string()
                } else {
                    auth.split(':').next().unwrap_or("").to_string()
                }
            } else if let Some((user_host, _)) = a.split_once(':').filter(|_| a.contains('@')) {
                user_host
                    .rsplit_once('@')
                    .map(|(_, h)| h.to_string())
                    .unwrap_or_default()
            } else {
                continue;
            };
            let ok = !host.is_empty()
                && host
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || ".-:".contains(c));
            if ok && !hosts.contains(&host) {
                hosts.push(host);
            }
        }
    }
    hosts
}

/// Joins words for display, quoting where a shell would need it ([`shell_word`]).
pub fn shell_words(argv: &[String]) -> String {
    argv.iter()
        .map(|a| shell_word(a))
        .collect::<Vec<_>>()
        .join(" ")
}

pub use cordon_execpolicy::shell_word;

impl ReviewableRequest {
    /// Builds the request for a tool call from its exec-policy `record`.
    pub fn tool_call(
        run_id: RunId,
        record: &DecisionRecord,
        cwd: PathBuf,
        needs: NeededPermissions,
        reason: String,
    ) -> ReviewableRequest {
        let segments: Vec<ReviewSegment> = record
            .segments
            .iter()
            .enumerate()
            .map(|(i, s)| ReviewSegment {
                index: i,
                argv: s.segment.argv.clone(),
                decision: s.decision,
                why: segment_why(s),
                rule_decides: s.findings.is_empty() && s.caps.is_empty(),
            })
            .collect();
        let matched = record
            .segments
            .iter()
            .filter(|s| s.decision != Decision::Allow)
            .map(segment_why)
            .collect();
        ReviewableRequest {
            run_id,
            approval_id: ApprovalId::new(),
            kind: RequestKind::ToolCall,
            argv: record.command.clone(),
            segments,
            opaque: record
                .opaque
                .iter()
                .map(|o| format!("{}: {}", o.kind, o.text))
                .collect(),
            hosts: hosts_in(record),
            cwd,
            needs,
            matched,
            reason,
            remember: remember_rule(record),
            warning: None,
            justification: None,
            session_answer_kept: crate::cache::cacheable(record),
            cwd_elsewhere: false,
        }
    }

    /// Whether an `allow` rule could make this tool call run: no asking segment asks for a
    /// dangerous-command finding or a cap, and nothing is opaque (the exec policy lets
    /// those override allow rules).
    pub fn allow_rule_helps(&self) -> bool {
        // Additional permissions (a write grant, a cwd in another project) are asked about
        // whatever the rules say (new-user pass nu14: an MCP refusal for a cwd elsewhere
        // advised an allow rule).
        self.needs.additional.is_none()
            && !self.cwd_elsewhere
            && self.opaque.is_empty()
            && self
                .segments
                .iter()
                .all(|s| s.decision == Decision::Allow || s.rule_decides)
    }

    /// Why an `allow` rule would not make this tool call run, naming only what applies
    /// here (new-user pass nu60: `git undo` was told about additional permissions, caps
    /// and unparsed parts it did not have); `None` when a rule would
    /// ([`Self::allow_rule_helps`]).
    pub fn why_rule_does_not_help(&self) -> Option<String> {
        if self.allow_rule_helps() {
            return None;
        }
        let mut why = Vec::new();
        if self.needs.additional.is_some() {
            why.push(
                "it asks for additional permissions (grant them when the server starts, \
                 `cordon mcp -w PATH`, or in the profile, or run from the project they are \
                 in)",
            );
        }
        // New-user pass 152: a `cwd` in another project was told to add an allow rule.
        if self.cwd_elsewhere {
            why.push(
                "its cwd is in another project, which would become writable (use a cwd \
                 inside this project, or start the server in that one)",
            );
        }
        let asking = || {
            self.segments
                .iter()
                .filter(|s| s.decision != Decision::Allow && !s.rule_decides)
        };
        if asking().any(|s| s.why.starts_with("finding ")) {
            why.push("a dangerous-command finding makes it ask");
        }
        if asking().any(|s| s.why.contains("capped at ask")) {
            why.push("a cap makes it ask");
        }
        if !self.opaque.is_empty() {
            why.push("part of it is not parsed");
        }
        if why.is_empty() {
            why.push("the exec policy asks whatever the rules say");
        }
        Some(why.join("; "))
    }

    /// The answers this request accepts (`RememberRule` only when a rule can be offered;
    /// escalations are never remembered beyond once/session).
    pub fn allowed_answers(&self) -> Vec<Answer> {
        if matches!(self.kind, RequestKind::NetworkHost { .. }) {
            // Remember = add the host to the remembered hosts (`crate::hosts`); abort
            // means nothing more than deny for a connection.
            return vec![
                Answer::Once,
                Answer::Session,
                Answer::RememberRule,
                Answer::Deny,
            ];
        }
        let mut v = vec![Answer::Once];
        if self.session_answer_kept && self.kind == RequestKind::ToolCall {
            v.push(Answer::Session);
        }
        // An exec-policy rule decides whether a command runs, not what it may reach: for a
        // request that widens the sandbox (additional permissions, another project as the
        // cwd) a remembered rule would not spare the next question (new-user pass nu17
        // N7: MCP wrote such a useless rule), so it is not offered.
        if self.remember.is_some()
            && self.kind == RequestKind::ToolCall
            && self.needs.additional.is_none()
        {
            v.push(Answer::RememberRule);
        }
        v.push(Answer::Deny);
        v.push(Answer::Abort);
        v
    }

    /// Whether `answer` is taken for this request: one it offers, or a `session` or
    /// `remember-rule` it does not offer where `once` is (an approval all the same, once:
    /// new-user pass nu16 N8). Every front reads answers by this rule (the session, the MCP
    /// form: nu20 G5 found it a deny there).
    pub fn takes(&self, answer: Answer) -> bool {
        let allowed = self.allowed_answers();
        allowed.contains(&answer)
            || (matches!(answer, Answer::Session | Answer::RememberRule)
                && allowed.contains(&Answer::Once))
    }

    /// The request as text for a person (the terminal prompt prints it; `cordon mcp` sends
    /// it as the elicitation message). Every value cordon did not write — argv, paths,
    /// hosts, rule text, the agent's justification — is shown through
    /// [`cordon_policy::text::printable`], so each line that looks like cordon's is
    /// cordon's (breaker, stop 22: a justification's newline forged a `runs with:` line and
    /// its escape sequences erased the real one).
    pub fn render_text(&self) -> String {
        use cordon_policy::text::printable as p;
        let mut s = String::new();
        let title = match &self.kind {
            RequestKind::ToolCall => "cordon: approval needed".to_string(),
            RequestKind::Escalation { after } => {
                format!("cordon: approval needed to RETRY after {}", p(after))
            }
            RequestKind::NetworkHost { host, port, proto } => format!(
                "cordon: the running command wants to reach {}:{port} ({}), which no \
                 network.allow rule names",
                p(host),
                p(proto)
            ),
        };
        let _ = writeln!(s, "{title}");
        let _ = writeln!(s, "  command: {}", p(&shell_words(&self.argv)));
        let _ = writeln!(s, "  cwd:     {}", p(&self.cwd.display().to_string()));
        let _ = writeln!(s, "  runs with: {}", p(&self.needs.summary()));
        if !self.hosts.is_empty() {
            let _ = writeln!(s, "  hosts:   {}", p(&self.hosts.join(", ")));
        }
        if self.segments.len() > 1 || self.segments.first().map(|x| &x.argv) != Some(&self.argv) {
            for seg in &self.segments {
                let _ = writeln!(
                    s,
                    "  [{}] {:<6} {}  — {}",
                    seg.index,
                    seg.decision.as_str(),
                    p(&shell_words(&seg.argv)),
                    p(&seg.why)
                );
            }
        }
        for o in &self.opaque {
            let _ = writeln!(s, "  not understood statically: {}", p(o));
        }
        let _ = writeln!(s, "  why: {}", p(&self.reason));
        if let Some(j) = &self.justification {
            let _ = writeln!(s, "  the agent says: {}", p(j));
        }
        if let Some(w) = &self.warning {
            let _ = writeln!(s, "  WARNING: {}", p(w));
        }
        // Only where the answer is offered (nu21 K4: a widening's form said `[r]` without
        // offering it).
        if let Some(r) = self
            .remember
            .as_ref()
            .filter(|_| self.allowed_answers().contains(&Answer::RememberRule))
        {
            let _ = writeln!(
                s,
                "  [r] would add the rule: allow {} (segment {})",
                p(&shell_words(&r.pattern)),
                r.segment
            );
        }
        s
    }
}

/// An answer to a [`ReviewableRequest`] (R-A7).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Answer {
    /// Run it this once.
    Once,
    /// Run it, and reuse the answer for the exact same key in this session (R-A8).
    Session,
    /// Run it, and append the offered remember-rule to the user's rules file.
    RememberRule,
    /// Do not run it; continue with the next tool call.
    Deny,
    /// Do not run it, and stop the agent's turn.
    Abort,
}

impl Answer {
    /// Whether the command may run.
    pub fn approves(self) -> bool {
        matches!(self, Answer::Once | Answer::Session | Answer::RememberRule)
    }

    /// The single key the terminal prompt reads for it.
    pub fn key(self) -> char {
        match self {
            Answer::Once => 'o',
            Answer::Session => 's',
            Answer::RememberRule => 'r',
            Answer::Deny => 'd',
            Answer::Abort => 'a',
        }
    }

    /// The answer for a key, if any.
    pub fn from_key(c: char) -> Option<Answer> {
        [
            Answer::Once,
            Answer::Session,
            Answer::RememberRule,
            Answer::Deny,
            Answer::Abort,
        ]
        .into_iter()
        .find(|a| a.key() == c.to_ascii_lowercase())
    }

    /// Words for the prompt line.
    pub fn label(self) -> &'static str {
        match self {
            Answer::Once => "once",
            Answer::Session => "for this session",
            Answer::RememberRule => "remember as rule",
            Answer::Deny => "deny",
            Answer::Abort => "abort",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cordon_execpolicy::{EvalContext, Policy};

    fn rec(argv: &[&str]) -> DecisionRecord {
        let argv: Vec<String> = argv.iter().map(|s| s.to_string()).collect();
        Policy::empty().evaluate(&argv, &EvalContext::default())
    }

    /// nu18 F15 and attack pass 42 H3: the request's profile on the wire is small (no deny
    /// list, only its count) but names everything that widens the sandbox: host unix
    /// sockets, loopback forwards, allowed hosts, kept and set variables (names only).
    #[test]
    fn the_wire_profile_is_small_and_names_every_widening() {
        let mut profile = cordon_policy::PermissionProfile::builtin("workspace-write").unwrap();
        profile.network_rules.unix_sockets = vec!["/run/docker.sock".into()];
        profile.network_rules.local = vec!["127.0.0.1:5432".into()];
        profile.network_rules.allow = vec!["pypi.org".into()];
        profile.env.keep = vec!["GITHUB_TOKEN".into()];
        profile
            .env
            .set
            .insert("API_KEY".into(), "s3cr3t-value".into());
        let needs = NeededPermissions {
            profile,
            additional: None,
            sandboxed: true,
        };
        let req = ReviewableRequest::tool_call(
            RunId::new(),
            &rec(&["make"]),
            "/w".into(),
            needs,
            "x".into(),
        );
        let wire = serde_json::to_string(&req).unwrap();
        assert!(wire.len() < 4096, "{} bytes: {wire}", wire.len());
        for named in [
            "/run/docker.sock",
            "127.0.0.1:5432",
            "pypi.org",
            "GITHUB_TOKEN",
            "API_KEY",
            "\"deny_entries\"",
        ] {
            assert!(wire.contains(named), "{named}: {wire}");
        }
        assert!(
            !wire.contains("s3cr3t-value") && !wire.contains(".ssh"),
            "{wire}"
        );
    }

    /// nu11 M2 and M3: `[s]` is offered only where a session answer is kept: not for a dangerous
    /// command (a finding), an opaque one or an escalation; twin: a plain unknown command.
    #[test]
    fn session_is_offered_only_where_it_is_kept() {
        let needs = NeededPermissions {
            profile: cordon_policy::PermissionProfile::builtin("workspace-write").unwrap(),
            additional: None,
            sandboxed: true,
        };
        let ask = |argv: &[&str]| {
            ReviewableRequest::tool_call(
                RunId::new(),
                &rec(argv),
                "/w".into(),
                needs.clone(),
                "x".into(),
            )
        };
        let dangerous = ask(&["git", "reset", "--hard"]);
        assert!(!dangerous.session_answer_kept);
        assert!(!dangerous.allowed_answers().contains(&Answer::Session));
        assert!(dangerous.allowed_answers().contains(&Answer::Once));
        let plain = ask(&["make", "build"]);
        assert!(plain.allowed_answers().contains(&Answer::Session));
        // nu11 M3: the non-interactive note advises an allow rule only where one works.
        assert!(!dangerous.allow_rule_helps());
        assert!(plain.allow_rule_helps());
        // nu60: the note names only what applies.
        assert_eq!(
            dangerous.why_rule_does_not_help().as_deref(),
            Some("a dangerous-command finding makes it ask")
        );
        assert_eq!(plain.why_rule_does_not_help(), None);
        let note = |r: &ReviewableRequest| {
            crate::Approver::ask(&mut crate::NonInteractive::default(), r)
                .note
                .unwrap_or_default()
        };
        assert!(
            !note(&dangerous).contains("or add an allow rule"),
            "{}",
            note(&dangerous)
        );
        assert!(
            note(&plain).contains("or add an allow rule"),
            "{}",
            note(&plain)
        );
        // nu14: additional permissions are asked about whatever the rules say.
        let mut granted = plain.clone();
        granted.needs.additional = Some(cordon_policy::AdditionalPermissions {
            network: Some(true),
            entries: Vec::new(),
        });
        assert!(!granted.allow_rule_helps());
        assert!(
            note(&granted).contains("additional permissions"),
            "{}",
            note(&granted)
        );
        // New-user pass 239 #7: and says how the server grants them for every command.
        assert!(
            note(&granted).contains("`cordon mcp -w PATH`"),
            "{}",
            note(&granted)
        );
        // New-user pass 152: a cwd in another project is no command a rule allows.
        let mut elsewhere = plain.clone();
        elsewhere.cwd_elsewhere = true;
        assert!(!elsewhere.allow_rule_helps());
        let n = note(&elsewhere);
        assert!(
            n.contains("its cwd is in another project") && !n.contains("or add an allow rule"),
            "{n}"
        );
        // nu17 N7: nor is a remembered rule offered for it (it would not spare the next
        // question); twin: the plain command's request offers one.
        assert!(plain.allowed_answers().contains(&Answer::RememberRule));
        assert!(!granted.allowed_answers().contains(&Answer::RememberRule));
        let mut retry = plain.clone();
        retry.kind = RequestKind::Escalation {
            after: "sandbox-denied".into(),
        };
        assert!(!retry.allowed_answers().contains(&Answer::Session));
    }

    /// Breaker (stop 22): an agent's justification, an extra grant's path and the argv are
    /// its own text; a newline or escape sequence in them cannot start or erase a line of
    /// the prompt. Twin: ordinary text is shown as it is.
    #[test]
    fn agent_text_cannot_forge_or_erase_prompt_lines() {
        let mut additional = cordon_policy::AdditionalPermissions::default();
        additional.entries.push(cordon_policy::FsEntry {
            path: "/home/u/.bashrc\n  runs with: profile read-only".into(),
            access: cordon_policy::Access::Write,
            source: None,
        });
        let needs = NeededPermissions {
            profile: cordon_policy::PermissionProfile::builtin("workspace-write").unwrap(),
            additional: Some(additional),
            sandboxed: true,
        };
        let argv = ["touch", "x\n  cwd:     /safe"];
        let mut r = ReviewableRequest::tool_call(
            RunId::new(),
            &rec(&argv),
            "/w".into(),
            needs,
            "asks for additional permissions".into(),
        );
        r.justification =
            Some("run tests\n  [0] allow  true  — known-safe\u{1b}[2K\u{1b}[1A\u{202e}".into());
        let text = r.render_text();
        assert_eq!(
            text.lines()
                .filter(|l| l.trim_start().starts_with("runs with:"))
                .count(),
            1,
            "{text}"
        );
        assert_eq!(
            text.lines()
                .filter(|l| l.trim_start().starts_with("cwd:"))
                .count(),
            1
        );
        assert!(
            !text.lines().any(|l| l.trim_start().starts_with("[0]")),
            "{text}"
        );
        assert!(
            !text.contains('\u{1b}') && !text.contains('\u{202e}'),
            "{text:?}"
        );
        assert!(
            text.contains("the agent says: run tests\\n  [0] allow"),
            "{text}"
        );
        // Twin: plain text unchanged.
        r.justification = Some("run the unit tests — café".into());
        assert!(r
            .render_text()
            .contains("the agent says: run the unit tests — café"));
    }

    #[test]
    fn remember_rule_covers_exactly_the_asking_segment() {
        // The first segment is known-safe; the rule must cover the second, not `git status`.
        let r = rec(&["bash", "-lc", "git status && cargo build --release"]);
        let rule = remember_rule(&r).expect("a rule is offered");
        assert_eq!(rule.segment, 1);
        assert_eq!(rule.pattern, ["cargo", "build", "--release"]);
        // Pipelines: the asking stage, not stage 0.
        let r = rec(&["bash", "-c", "cat x | mytool --fix"]);
        let rule = remember_rule(&r).expect("a rule is offered");
        assert_eq!(rule.pattern, ["mytool", "--fix"]);
        assert_eq!(rule.segment, 1);
    }

    #[test]
    fn remember_rule_not_offered_when_it_cannot_be_exact_or_would_not_help() {
        // two asking segments
        assert!(remember_rule(&rec(&["bash", "-c", "make && mytool"])).is_none());
        // a finding asks (an allow rule never overrides it)
        assert!(remember_rule(&rec(&["git", "reset", "--hard"])).is_none());
        // opaque
        assert!(remember_rule(&rec(&["bash", "-c", "mytool $(date)"])).is_none());
        // untrusted program path
        assert!(remember_rule(&rec(&["/tmp/mytool"])).is_none());
        // capped by a redirect
        assert!(remember_rule(&rec(&["bash", "-c", "mytool > out.txt"])).is_none());
    }

    #[test]
    fn remember_rule_toml_loads_and_its_example_matches() {
        let rule = remember_rule(&rec(&["cargo", "build", "--release"])).unwrap();
        let toml = rule.to_toml("approved at the prompt");
        let p = Policy::from_toml_str(&toml, "t").unwrap();
        let d = p.evaluate(
            &["cargo".into(), "build".into(), "--release".into()],
            &EvalContext::default(),
        );
        assert_eq!(d.decision, Decision::Allow);
    }

    #[test]
    fn hosts_named_in_arguments() {
        let r = rec(&[
            "bash",
            "-c",
            "curl -sS https://user@example.com:8443/x && git clone git@github.com:o/r.git && echo a:b",
        ]);
        assert_eq!(hosts_in(&r), ["example.com", "github.com"]);
        assert!(hosts_in(&rec(&["cargo", "build"])).is_empty());
    }

    #[test]
    fn answers_keys_round_trip() {
        for a in [
            Answer::Once,
            Answer::Session,
            Answer::RememberRule,
            Answer::Deny,
            Answer::Abort,
        ] {
            assert_eq!(Answer::from_key(a.key()), Some(a));
        }
        assert_eq!(Answer::from_key('x'), None);
        assert_eq!(
            serde_json::to_string(&Answer::RememberRule).unwrap(),
            "\"remember-rule\""
        );
    }

    /// New-user finding: a managed profile's prompt said "network off".
    #[test]
    fn summary_names_the_network_mode() {
        let mut profile = cordon_policy::PermissionProfile::builtin("workspace-write").unwrap();
        let line = |profile: &cordon_policy::PermissionProfile| {
            NeededPermissions {
                profile: profile.clone(),
                additional: None,
                sandboxed: true,
            }
            .summary()
        };
        assert!(line(&profile).contains("network off"));
        profile.network = NetworkPolicy::Managed;
        assert!(
            line(&profile).contains("network managed"),
            "{}",
            line(&profile)
        );
        profile.network = NetworkPolicy::Enabled;
        assert!(line(&profile).contains("network on"));
    }
}
