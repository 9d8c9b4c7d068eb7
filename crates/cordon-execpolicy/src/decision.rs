//! Evaluation: combine rules, built-in knowledge and parse results into a
//! [`DecisionRecord`] (R-A2, R-A3, R-A4).

use std::fmt;

use serde::Serialize;

use crate::knowledge::variables::is_sensitive_var;
use crate::knowledge::{self, resolve, Cwd, DangerCtx, Finding, Link};
use crate::model::*;
use crate::parse::ParseOptions;
use crate::rules::{Pattern, Rule, RuleSource, SandboxMode};

/// Caller-supplied facts for one evaluation. Approval modes (R-A5) are deliberately not
/// here: this crate answers "what do the rules and built-in knowledge say"; the approval
/// layer maps `ask` per mode. The struct is `#[non_exhaustive]` so it can grow; build it with
/// `EvalContext::default()` and set fields.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct EvalContext {
    /// The caller's profile has deny-read entries (R-P2). Such entries are only enforced by
    /// the sandbox, so they block sandbox bypass (the record says so).
    pub profile_has_deny_read: bool,
    /// The working directory, if known (absolute). Used to resolve relative targets of
    /// destructive commands (`rm -rf .` in `/`).
    pub cwd: Option<String>,
    /// The home directory, if known (absolute). `~` and `$HOME` are recognised without it.
    pub home: Option<String>,
    /// The project the command runs in, if known (absolute): the top of its git work tree
    /// or else the working directory. Deleting it, everything in it or its history asks
    /// (`rm_project`); without it the working directory stands for it.
    pub project: Option<String>,
    /// Program-name resolution options (trusted locations).
    pub parse: ParseOptions,
    /// The aliases of the user's git configuration (`[alias]` in `~/.gitconfig`, the
    /// repository's config; name lowercased → value): `git undo` with `undo = reset --hard`
    /// is checked as `git reset --hard` (new-user pass nu58). The caller reads them; this
    /// crate reads no files.
    pub git_aliases: std::collections::BTreeMap<String, String>,
}

impl EvalContext {
    /// Set [`EvalContext::profile_has_deny_read`].
    pub fn with_deny_read(mut self, v: bool) -> Self {
        self.profile_has_deny_read = v;
        self
    }
    /// Set [`EvalContext::cwd`].
    pub fn with_cwd(mut self, cwd: impl Into<String>) -> Self {
        self.cwd = Some(cwd.into());
        self
    }
    /// Set [`EvalContext::project`].
    pub fn with_project(mut self, project: impl Into<String>) -> Self {
        self.project = Some(project.into());
        self
    }
    /// Set [`EvalContext::home`].
    pub fn with_home(mut self, home: impl Into<String>) -> Self {
        self.home = Some(home.into());
        self
    }
    /// Set [`EvalContext::git_aliases`].
    pub fn with_git_aliases(mut self, aliases: std::collections::BTreeMap<String, String>) -> Self {
        self.git_aliases = aliases;
        self
    }
}

/// A rule that matched a segment, as recorded (R-A3, R-A7).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MatchedRule {
    /// The rule's pattern.
    pub pattern: Pattern,
    /// The rule's decision.
    pub decision: Decision,
    /// The rule's sandbox mode.
    pub sandbox: SandboxMode,
    /// The rule's justification.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub justification: Option<String>,
    /// Where the rule came from.
    pub source: RuleSource,
}

impl MatchedRule {
    fn from_rule(r: &Rule) -> Self {
        MatchedRule {
            pattern: r.pattern.clone(),
            decision: r.decision,
            sandbox: r.sandbox,
            justification: r.justification.clone(),
            source: r.source.clone(),
        }
    }
}

/// What decided a segment (R-A3 rule, R-A4 known-safe / dangerous, or the default).
/// JSON: `{"kind": "rule", "rule": 0}`, `{"kind": "known_safe", "reason": …}`, …
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Basis {
    /// The strictest matching rule (index into `matched_rules`).
    Rule {
        /// Index into [`SegmentRecord::matched_rules`].
        rule: usize,
    },
    /// The built-in known-safe list.
    KnownSafe {
        /// Why it is safe.
        reason: String,
    },
    /// The dangerous-command detector (index into `findings`).
    Dangerous {
        /// Index into [`SegmentRecord::findings`].
        finding: usize,
    },
    /// Nothing matched: the default (`ask`).
    Default {
        /// Why.
        reason: String,
    },
}

/// One segment of a [`DecisionRecord`] (R-A2): the parsed segment (flattened) plus its
/// decision and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SegmentRecord {
    /// The parsed segment (argv, wrappers, env, redirections, context, …).
    #[serde(flatten)]
    pub segment: Segment,
    /// This segment's decision.
    pub decision: Decision,
    /// What decided it.
    pub basis: Basis,
    /// Every rule that matched.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub matched_rules: Vec<MatchedRule>,
    /// Dangerous-command findings.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub findings: Vec<Finding>,
    /// Reasons that cap this segment at `ask` even if a rule or the safe list allows it
    /// (output redirection to a file, sensitive environment variable, look-alike name).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub caps: Vec<String>,
}

impl SegmentRecord {
    /// Whether this segment's `ask` was raised explicitly — by a rule that says `ask` or a
    /// dangerous finding — rather than by default (unknown program) or by a cap on an
    /// allowed command (a redirect, a sensitive variable, …). An explicit ask needs an
    /// approval in every mode but `bypass`; a default one only in `untrusted` (see
    /// [`crate::approval`]). A capped `allow` rule is not explicit: a rule never makes a
    /// command harder to run than no rule.
    pub fn asks_explicitly(&self) -> bool {
        self.decision == Decision::Ask
            && match &self.basis {
                Basis::Dangerous { .. } => true,
                Basis::Rule { rule } => self
                    .matched_rules
                    .get(*rule)
                    .is_none_or(|m| m.decision != Decision::Allow),
                _ => false,
            }
    }
}

/// Whether the command may run outside the sandbox, and why (R-A3; R-A1: bypassing the
/// approval never implies bypassing the sandbox).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SandboxVerdict {
    /// True only when every segment matched `sandbox = "bypass"` rules, nothing is opaque,
    /// the command is allowed and the profile has no deny-read entries.
    pub bypass: bool,
    /// Why (or why not).
    pub reason: String,
}

/// A reusable prefix rule suggested for "approve and remember" (R-A3 format; feeds the
/// session cache of R-A8). Never over-broad: see the crate docs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SuggestedRule {
    /// The prefix pattern (each element a literal word).
    pub pattern: Vec<String>,
    /// Always `allow`.
    pub decision: Decision,
    /// The segment it was derived from.
    pub from_segment: usize,
}

/// The full, serialisable answer for one command (R-A2, R-A3, R-A4; reviewable per R-A7).
///
/// JSON shape (stable): `{"command": [...], "decision": "ask", "reason": "...",
/// "sandbox": {"bypass": false, "reason": "..."}, "opaque": [...], "segments": [...],
/// "suggested_rule": {...} | null}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DecisionRecord {
    /// The command as given (argv, or `[script]` for [`crate::Policy::evaluate_script`]).
    pub command: Vec<String>,
    /// Overall decision: the strictest segment decision; never `allow` when opaque.
    pub decision: Decision,
    /// One-line explanation of the overall decision.
    pub reason: String,
    /// Sandbox bypass verdict.
    pub sandbox: SandboxVerdict,
    /// Opaque constructs found (empty = fully understood).
    pub opaque: Vec<OpaqueConstruct>,
    /// Substitutions, loops, conditionals and function definitions whose bodies were fully
    /// parsed and hold only known-safe commands: they do not make the command opaque.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub visible: Vec<OpaqueConstruct>,
    /// Stand-alone variable assignments in the script.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub assignments: Vec<EnvAssignment>,
    /// Per-segment records, in [`ParsedCommand::segments`] order.
    pub segments: Vec<SegmentRecord>,
    /// Suggested prefix rule for "approve and remember" (see crate docs), if any.
    pub suggested_rule: Option<SuggestedRule>,
}

impl DecisionRecord {
    /// Pretty JSON (the stable shape documented on the type).
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"))
    }

    /// Human-readable multi-line rendering (same as `Display`), for `cordon check`.
    pub fn render_text(&self) -> String {
        self.to_string()
    }

    /// Caps every allowed segment at `ask` because the command is given an interactive
    /// terminal whose input the caller writes (an MCP or library session with `tty`): what
    /// is typed there is never checked, and a known-safe or allowed program may run
    /// commands from it — git's pager (`less`) runs `!cmd` (attack pass 41, E1: `git log`
    /// on a terminal ran an unapproved, forbidden `touch` in `untrusted` mode). So the
    /// command counts as an unknown one (R-A2, R-A5): asked in `untrusted`, never bypassing
    /// the sandbox, never suggested as a rule. Commands already asked or forbidden are
    /// unchanged.
    pub fn cap_interactive(&mut self) {
        const WHY: &str = "given an interactive terminal whose input is not checked (a pager \
                           or prompt there can run other commands)";
        let mut capped = false;
        for r in &mut self.segments {
            if r.decision == Decision::Allow {
                r.caps.push(WHY.to_string());
                r.decision = Decision::Ask;
                capped = true;
            }
        }
        if !capped {
            return;
        }
        let (decision, reason) = overall(&self.segments, &self.opaque);
        self.decision = decision;
        self.reason = reason;
        self.sandbox = SandboxVerdict {
            bypass: false,
            reason: format!("the command is capped at ask ({WHY}); if it runs, it runs sandboxed"),
        };
        self.suggested_rule = None;
    }

    /// Whether an `allow` rule could make this command run without asking: nothing is
    /// opaque and no segment that is not allowed carries a dangerous-command finding or a
    /// cap (those override allow rules, R-A4). The advice "add an allow rule" is given
    /// only where this holds (new-user passes nu11 M3, nu12 M7).
    pub fn allow_rule_helps(&self) -> bool {
        self.opaque.is_empty()
            && self.segments.iter().all(|s| {
                s.decision == Decision::Allow || (s.findings.is_empty() && s.caps.is_empty())
            })
    }

    /// What makes this command ask whatever the rules say, naming only what applies (a
    /// dangerous-command finding, a cap, an unparsed part), joined with `"; "`; `None`
    /// when an `allow` rule would make it run ([`Self::allow_rule_helps`], new-user pass
    /// nu60).
    pub fn rule_blockers(&self) -> Option<String> {
        if self.allow_rule_helps() {
            return None;
        }
        let asking = || {
            self.segments
                .iter()
                .filter(|s| s.decision != Decision::Allow)
        };
        let mut why = Vec::new();
        if asking().any(|s| !s.findings.is_empty()) {
            why.push("a dangerous-command finding makes it ask");
        }
        if asking().any(|s| !s.caps.is_empty()) {
            why.push("a cap makes it ask");
        }
        if !self.opaque.is_empty() {
            why.push("part of it is not parsed");
        }
        Some(why.join("; "))
    }
}

fn shell_join(argv: &[String]) -> String {
    argv.iter()
        .map(|a| crate::model::shell_word(a))
        .collect::<Vec<_>>()
        .join(" ")
}

impl fmt::Display for DecisionRecord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "command:     {}", shell_join(&self.command))?;
        // An ask that no rule or finding makes is asked only in `untrusted` mode: the
        // headline says so, not a bare "ask" (new-user pass nu62: `check` headlined
        // `python3 app.py` "ask" and then said it would run).
        let only_untrusted = self.decision == Decision::Ask && !crate::approval::explicit_ask(self);
        if only_untrusted {
            writeln!(
                f,
                "exec policy: ask in untrusted mode only — {}",
                self.reason
            )?;
        } else {
            writeln!(f, "exec policy: {} — {}", self.decision, self.reason)?;
        }
        writeln!(
            f,
            "sandbox:     {} — {}",
            if self.sandbox.bypass {
                "bypass"
            } else if self.decision == Decision::Forbid {
                // New-user pass 146: "sandboxed — the command is forbidden" read as a
                // contradiction.
                "not run"
            } else {
                "sandboxed"
            },
            self.sandbox.reason
        )?;
        if !self.opaque.is_empty() {
            writeln!(f, "opaque:")?;
            for o in &self.opaque {
                writeln!(f, "  - {}: {}", o.kind, o.text)?;
            }
        }
        if !self.visible.is_empty() {
            writeln!(f, "visible (every command inside is known-safe):")?;
            for o in &self.visible {
                writeln!(f, "  - {}: {}", o.kind, o.text)?;
            }
        }
        writeln!(f, "segments:")?;
        for (i, s) in self.segments.iter().enumerate() {
            fmt_segment(f, i, s)?;
        }
        match &self.suggested_rule {
            Some(s) => writeln!(
                f,
                "suggested rule: {}",
                serde_json::to_string(&s.pattern).unwrap_or_default()
            ),
            None => writeln!(f, "suggested rule: none"),
        }
    }
}

/// One segment of the text rendering: decision and argv, then wrappers, env, redirections,
/// context, basis, findings, caps and notes.
fn fmt_segment(f: &mut fmt::Formatter<'_>, i: usize, s: &SegmentRecord) -> fmt::Result {
    let seg = &s.segment;
    // An ask no rule or finding makes is asked only in `untrusted` mode, as the headline
    // says: `unknown`, not a bare `ask` beside a command on-request runs (new-user pass
    // 155, #7).
    let label = if s.decision == Decision::Ask && !s.asks_explicitly() {
        "unknown"
    } else {
        s.decision.as_str()
    };
    writeln!(f, "  [{i}] {label:<6} {}", seg.display_words())?;
    if !seg.wrappers.is_empty() {
        let w: Vec<String> = seg.wrappers.iter().map(|w| shell_join(&w.argv)).collect();
        writeln!(f, "        via: {}", w.join(" → "))?;
    }
    if !seg.env.is_empty() {
        let e: Vec<String> = seg
            .env
            .iter()
            .map(|e| format!("{}={}", e.name, e.value))
            .collect();
        writeln!(f, "        env: {}", e.join(" "))?;
    }
    for r in &seg.redirections {
        let sep = if r.kind == RedirectKind::Dup { "" } else { " " };
        let kind = serde_json::to_value(r.kind).unwrap_or_default();
        writeln!(
            f,
            "        redirect: {}{}{sep}{} ({})",
            r.fd.as_deref().unwrap_or(""),
            r.op,
            r.target,
            kind.as_str().unwrap_or("")
        )?;
    }
    if !seg.context.is_empty() {
        let c: Vec<String> = seg
            .context
            .iter()
            .map(|c| match c {
                Context::Function(n) => format!("function {n}"),
                Context::ControlFlow(k) => k.clone(),
                other => serde_json::to_value(other)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_string))
                    .unwrap_or_default()
                    .replace('_', " "),
            })
            .collect();
        writeln!(f, "        context: {}", c.join(" > "))?;
    }
    let basis = match &s.basis {
        Basis::Rule { rule } => {
            let m = &s.matched_rules[*rule];
            format!(
                "rule {} ({}) from {}{}",
                m.pattern,
                m.decision,
                m.source,
                m.justification
                    .as_deref()
                    .map(|j| format!(": {j}"))
                    .unwrap_or_default()
            )
        }
        Basis::KnownSafe { reason } => reason.clone(),
        Basis::Dangerous { finding } => {
            format!("dangerous: {}", s.findings[*finding].reason)
        }
        Basis::Default { reason } => format!("default: {reason}"),
    };
    writeln!(f, "        basis: {basis}")?;
    for x in &s.findings {
        writeln!(f, "        finding: {} ({}) {}", x.id, x.decision, x.reason)?;
    }
    for c in &s.caps {
        writeln!(f, "        capped at ask: {c}")?;
    }
    for n in &seg.notes {
        writeln!(f, "        note: {n}")?;
    }
    Ok(())
}

/// Programs that are never suggested alone (a bare-name rule would be over-broad).
const NO_BARE_SUGGESTION: &[&str] = &[
    "git",
    "env",
    "sudo",
    "doas",
    "su",
    "xargs",
    "find",
    "fd",
    "exec",
    "command",
    "builtin",
    "eval",
    "source",
    ".",
    "nohup",
    "timeout",
    "nice",
    "ionice",
    "chrt",
    "taskset",
    "flock",
    "time",
    "stdbuf",
    "setsid",
    "rm",
    "dd",
    "chmod",
    "chown",
    "mv",
    "cp",
    "kill",
    "cargo",
    "npm",
    "npx",
    "pnpm",
    "yarn",
    "go",
    "docker",
    "podman",
    "kubectl",
    "pip",
    "pip3",
    "uv",
    "gh",
    "make",
    "awk",
    "sed",
    "perl",
    "ruby",
    "node",
    "nodejs",
    "deno",
    "bun",
    "php",
    "lua",
    "python",
    "python2",
    "python3",
    "curl",
    "wget",
    "ssh",
    "scp",
    "rsync",
    "tee",
    "install",
    "ln",
    "apt",
    "apt-get",
    "brew",
    "systemctl",
    "just",
    "bazel",
];

/// Derive a reusable prefix rule from a segment (see crate docs, "Suggested rules").
fn suggest(seg: &Segment) -> Option<Vec<String>> {
    if matches!(
        seg.program.kind,
        ProgramKind::Dynamic | ProgramKind::NonAscii | ProgramKind::UntrustedPath
    ) {
        return None;
    }
    let name = seg.program.name.clone();
    let base = name.rsplit('/').next().unwrap_or(&name);
    if crate::knowledge::shells::INTERPRETERS.contains(&base)
        && !matches!(base, "python" | "python3")
    {
        return None; // shells and interpreters: `bash -c`, `node -e`, … are banned
    }
    let mut pat = vec![seg.argv[0].clone()];
    if seg.program.kind == ProgramKind::Bare || seg.program.kind == ProgramKind::TrustedPath {
        pat[0] = name.clone();
    }
    let word_ok = |i: usize| {
        seg.is_static(i)
            && seg.argv[i].len() <= 32
            && !seg.argv[i].starts_with('-')
            && seg.argv[i]
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == ':')
    };
    if matches!(base, "python" | "python3") {
        // Only `python3 -m module`.
        if seg.argv.len() >= 3 && seg.is_static(1) && seg.argv[1] == "-m" && word_ok(2) {
            return Some(vec![name, "-m".into(), seg.argv[2].clone()]);
        }
        return None;
    }
    let mut i = 1;
    while i < seg.argv.len() && pat.len() < 3 && word_ok(i) {
        pat.push(seg.argv[i].clone());
        i += 1;
    }
    if pat.len() == 1 && NO_BARE_SUGGESTION.contains(&base) {
        return None;
    }
    if base == "find" || base == "xargs" {
        return None;
    }
    Some(pat)
}

fn known_builtin_cd(seg: &Segment) -> bool {
    seg.program.is_trusted_name() && matches!(seg.program.name.as_str(), "cd" | "pushd" | "popd")
}

/// Working-directory candidates while walking the segments in order (an
/// over-approximation: every `cd` target stays a candidate afterwards, at most 16). Each
/// candidate lists the `cd` segments it assumes did not take effect, so that a segment
/// that runs only after those `cd`s succeeded ([`Segment::after_cds`]) is not judged
/// where they would have left it.
struct CwdTracker<'c> {
    home: Option<&'c str>,
    cwds: Vec<Cwd>,
    /// For each candidate in `cwds`, the `cd` segments it assumes failed.
    skipped: Vec<Vec<usize>>,
    /// More candidates than the bound were seen: `skipped` is not complete, so no
    /// candidate is set aside.
    overflow: bool,
    /// Where the script starts (what the git aliases were read for).
    start: Cwd,
    /// The project ([`EvalContext::project`], else `start`).
    project: Cwd,
    git_aliases: &'c std::collections::BTreeMap<String, String>,
    /// How many more git alias expansions this evaluation may make.
    alias_budget: std::cell::Cell<u32>,
    /// Symbolic links made by the segments so far (`ln -s .git g`), at most 64.
    links: Vec<Link>,
    /// The script's stand-alone assignments that change what git reads
    /// ([`knowledge::git_environment`]).
    git_env: Vec<EnvAssignment>,
}

impl<'c> CwdTracker<'c> {
    fn new(ctx: &'c EvalContext, assignments: &[EnvAssignment]) -> Self {
        let home = ctx.home.as_deref();
        let start = match ctx.cwd.as_deref() {
            Some(c) if c.starts_with('/') => resolve(&Cwd::Rel(Vec::new()), c, home),
            _ => Cwd::Rel(Vec::new()),
        };
        let project = match ctx.project.as_deref() {
            Some(p) if p.starts_with('/') => resolve(&Cwd::Rel(Vec::new()), p, home),
            _ => start.clone(),
        };
        CwdTracker {
            home,
            cwds: vec![start.clone()],
            skipped: vec![Vec::new()],
            overflow: false,
            start,
            project,
            git_aliases: &ctx.git_aliases,
            alias_budget: std::cell::Cell::new(knowledge::GIT_ALIAS_BUDGET),
            links: Vec::new(),
            git_env: assignments
                .iter()
                .filter(|a| knowledge::git_environment(&a.name))
                .cloned()
                .collect(),
        }
    }

    /// The dangerous-command findings for segment `idx`, judged under the candidates (and
    /// the segment's own `env -C DIR` / `sudo -D DIR`).
    fn findings(&self, segments: &[Segment], idx: usize) -> Vec<Finding> {
        let after = &segments[idx].after_cds;
        let assumed: Vec<&Cwd> = self
            .cwds
            .iter()
            .zip(&self.skipped)
            .filter(|(_, skipped)| self.overflow || !skipped.iter().any(|k| after.contains(k)))
            .map(|(c, _)| c)
            .collect();
        let assumed = if assumed.is_empty() {
            self.cwds.iter().collect()
        } else {
            assumed
        };
        let seg_cwds: std::borrow::Cow<'_, [Cwd]> = match segments[idx].chdir.as_deref() {
            Some(d) => assumed.iter().map(|c| resolve(c, d, self.home)).collect(),
            None if assumed.len() == self.cwds.len() => std::borrow::Cow::Borrowed(&self.cwds),
            None => assumed.into_iter().cloned().collect(),
        };
        knowledge::dangerous(
            idx,
            &DangerCtx {
                segments,
                cwds: &seg_cwds,
                home: self.home,
                git_aliases: self.git_aliases,
                alias_budget: &self.alias_budget,
                moved: seg_cwds.iter().any(|c| *c != self.start),
                start: &self.project,
                links: &self.links,
                git_env: &self.git_env,
            },
        )
    }

    /// Add the targets of a `cd`/`pushd`/`popd` segment to the candidates, and the links
    /// an `ln -s` segment makes to the links.
    fn follow(&mut self, seg: &Segment, idx: usize) {
        for l in knowledge::symlinks_made(seg, &self.cwds, self.home) {
            if !self.links.contains(&l) && self.links.len() < 64 {
                self.links.push(l);
            }
        }
        if !known_builtin_cd(seg) {
            return;
        }
        let home = self.home;
        let target = seg
            .argv
            .iter()
            .enumerate()
            .skip(1)
            .rfind(|(_, a)| !a.starts_with('-') || a.as_str() == "-");
        let new: Vec<Cwd> = match target {
            _ if seg.program.name == "popd" => vec![Cwd::Unknown],
            None => self.cwds.iter().map(|c| resolve(c, "~", home)).collect(),
            Some((i, t)) if seg.is_static(i) && t != "-" => {
                self.cwds.iter().map(|c| resolve(c, t, home)).collect()
            }
            Some((_, t)) => match knowledge::home_spelled(t) {
                Some(t) => self.cwds.iter().map(|c| resolve(c, &t, home)).collect(),
                None => vec![Cwd::Unknown],
            },
        };
        // The `cd` took effect for each new candidate (which keeps the assumptions of the
        // one it came from); the old ones assume it did not. A target known only at run
        // time may be any candidate: from there on, none is set aside.
        let pairs: Vec<(Cwd, Vec<usize>)> = if self.overflow || new.contains(&Cwd::Unknown) {
            self.skipped.iter_mut().for_each(Vec::clear);
            new.into_iter().map(|c| (c, Vec::new())).collect()
        } else {
            let pairs = new.into_iter().zip(self.skipped.clone()).collect();
            for s in &mut self.skipped {
                s.push(idx);
            }
            pairs
        };
        for (c, skipped) in pairs {
            let seen = self
                .cwds
                .iter()
                .zip(&self.skipped)
                .any(|(c2, s2)| *c2 == c && *s2 == skipped);
            if seen {
                continue;
            }
            if self.cwds.len() >= 16 && !self.overflow {
                self.collapse();
            }
            if self.overflow && self.cwds.contains(&c) {
                continue;
            }
            if self.cwds.len() < 16 {
                self.cwds.push(c);
                self.skipped.push(skipped);
            }
        }
    }

    /// Past the bound: forget what each candidate assumes and keep each directory once,
    /// in the order first seen (the candidates an untagged walk would have), so no
    /// directory is lost to the tags.
    fn collapse(&mut self) {
        self.overflow = true;
        let mut distinct: Vec<Cwd> = Vec::new();
        for c in self.cwds.drain(..) {
            if !distinct.contains(&c) {
                distinct.push(c);
            }
        }
        self.skipped = vec![Vec::new(); distinct.len()];
        self.cwds = distinct;
    }
}

/// Functions defined so far in the script, and whether every command of each body was
/// allowed as known-safe (a call to such a function is then known-safe itself).
#[derive(Default)]
struct FunctionBodies {
    safe: Vec<(String, bool)>,
}

impl FunctionBodies {
    fn record(&mut self, seg: &Segment, verdict: &SegmentVerdict) {
        let known_safe =
            verdict.decision == Decision::Allow && matches!(verdict.basis, Basis::KnownSafe { .. });
        for (depth, c) in seg.context.iter().enumerate() {
            if let Context::Function(name) = c {
                // Defined at the top level of the script (not in a subshell, a
                // substitution, a conditional or a pipeline stage), so later calls see it.
                let top_level = depth == 0 && seg.pipeline.is_none() && !seg.background;
                let ok_here = known_safe && top_level;
                match self.safe.iter_mut().find(|(n, _)| n == name) {
                    Some((_, ok)) => *ok &= ok_here,
                    None => self.safe.push((name.clone(), ok_here)),
                }
            }
        }
    }

    /// The reason a call to a function defined earlier with a known-safe body is safe.
    fn safe_call(&self, seg: &Segment) -> Option<String> {
        if seg.program.kind != ProgramKind::Bare {
            return None;
        }
        let name = &seg.program.name;
        // A call inside the function's own body is recursion, not a visible call.
        let recursive = seg
            .context
            .iter()
            .any(|c| matches!(c, Context::Function(n) if n == name));
        self.safe
            .iter()
            .any(|(n, ok)| n == name && *ok && !recursive)
            .then(|| format!("calls function `{name}`, whose body is known-safe"))
    }
}

/// What decided one segment, before it is paired with the segment in a [`SegmentRecord`].
struct SegmentVerdict {
    decision: Decision,
    basis: Basis,
    matched_rules: Vec<MatchedRule>,
    findings: Vec<Finding>,
    caps: Vec<String>,
}

/// Reasons that cap an allowed segment at `ask` (see the crate docs).
fn caps(seg: &Segment) -> Vec<String> {
    let mut caps = Vec::new();
    for r in seg.file_writes() {
        caps.push(format!(
            "output redirection {}{} {}",
            r.fd.as_deref().unwrap_or(""),
            r.op,
            r.target
        ));
    }
    for e in &seg.env {
        // An editor or pager that does nothing (`GIT_EDITOR=true`, cordon's own advice for
        // a commit without a terminal; `GIT_PAGER=cat`) changes nothing that runs
        // (new-user pass nu63).
        let inert = matches!(
            e.name.as_str(),
            "GIT_EDITOR" | "GIT_SEQUENCE_EDITOR" | "EDITOR" | "VISUAL" | "GIT_PAGER" | "PAGER"
        ) && !e.dynamic
            && matches!(e.value.as_str(), "true" | ":" | "cat" | "false" | "");
        if is_sensitive_var(&e.name) && !inert {
            caps.push(format!("sets {} (changes what the command runs)", e.name));
        }
    }
    if seg.program.kind == ProgramKind::NonAscii {
        caps.push("program name contains non-ASCII or control characters".into());
    }
    if seg.program.kind == ProgramKind::Dynamic {
        caps.push("program name is not known statically".into());
    }
    caps
}

/// Combine matching rules, the known-safe verdict, findings and caps for one segment: the
/// strictest rule (or known-safe / default), then findings by `max` (an allow rule never
/// overrides a finding), then caps turn `allow` into `ask`.
fn segment_verdict(
    matched: &[&Rule],
    safe: Option<String>,
    findings: Vec<Finding>,
    caps: Vec<String>,
) -> SegmentVerdict {
    let rule_decision = matched.iter().map(|r| r.decision).max();
    let base = rule_decision.unwrap_or(if safe.is_some() {
        Decision::Allow
    } else {
        Decision::Ask
    });
    let finding_decision = findings.iter().map(|f| f.decision).max();
    let mut decision = base.max(finding_decision.unwrap_or(Decision::Allow));
    if decision == Decision::Allow && !caps.is_empty() {
        decision = Decision::Ask;
    }
    let matched_rules: Vec<MatchedRule> =
        matched.iter().map(|r| MatchedRule::from_rule(r)).collect();
    let basis = match (finding_decision, rule_decision) {
        (Some(fd), rd) if fd > base || (rd.is_none() && fd >= base) => Basis::Dangerous {
            finding: findings.iter().position(|f| f.decision == fd).unwrap_or(0),
        },
        (_, Some(rd)) => Basis::Rule {
            rule: matched_rules
                .iter()
                .position(|m| m.decision == rd)
                .unwrap_or(0),
        },
        (_, None) => match safe {
            Some(reason) => Basis::KnownSafe { reason },
            None => Basis::Default {
                reason: "no rule matched and the command is not known-safe".into(),
            },
        },
    };
    SegmentVerdict {
        decision,
        basis,
        matched_rules,
        findings,
        caps,
    }
}

/// Decide every segment in order (cwd tracking and function bodies depend on the order).
fn segment_verdicts(
    rules: &[Rule],
    segments: &[Segment],
    assignments: &[EnvAssignment],
    ctx: &EvalContext,
) -> Vec<SegmentVerdict> {
    let mut cwd = CwdTracker::new(ctx, assignments);
    let mut functions = FunctionBodies::default();
    let mut out = Vec::with_capacity(segments.len());
    for (idx, seg) in segments.iter().enumerate() {
        let findings = cwd.findings(segments, idx);
        cwd.follow(seg, idx);
        let matched: Vec<&Rule> = rules.iter().filter(|r| r.matches(seg)).collect();
        let safe = if matched.is_empty() {
            knowledge::known_safe(seg)
                .or_else(|| knowledge::known_safe_git_alias(seg, &ctx.git_aliases))
                .or_else(|| functions.safe_call(seg))
        } else {
            None
        };
        let verdict = segment_verdict(&matched, safe, findings, caps(seg));
        functions.record(seg, &verdict);
        out.push(verdict);
    }
    out
}

/// Split the parse's constructs into those that keep the command opaque and those that are
/// visible: substitutions, loops, conditionals and functions (bodies fully walked) count as
/// visible only when nothing else is opaque and every segment is allowed as known-safe.
fn split_visible(
    constructs: Vec<OpaqueConstruct>,
    records: &[SegmentRecord],
) -> (Vec<OpaqueConstruct>, Vec<OpaqueConstruct>) {
    let visible = !constructs.is_empty()
        && !records.is_empty()
        && constructs.iter().all(|c| c.kind.body_is_visible())
        && records
            .iter()
            .all(|r| r.decision == Decision::Allow && matches!(r.basis, Basis::KnownSafe { .. }));
    if visible {
        (Vec::new(), constructs)
    } else {
        (constructs, Vec::new())
    }
}

/// The overall decision and its one-line reason: the strictest segment, never `allow` when
/// opaque, `ask` without segments.
fn overall(records: &[SegmentRecord], opaque_list: &[OpaqueConstruct]) -> (Decision, String) {
    let opaque = !opaque_list.is_empty();
    let first = |d: Decision| {
        records
            .iter()
            .enumerate()
            .find(|(_, r)| r.decision == d)
            .map(|(i, r)| (i, r.segment.display(), why(r)))
    };
    match records.iter().map(|r| r.decision).max() {
        None => (
            Decision::Ask,
            if let Some(why) = asked_opaque(opaque_list) {
                format!("no command could be extracted: {why}")
            } else if opaque {
                format!(
                    "no command could be extracted ({})",
                    opaque_kinds(opaque_list)
                )
            } else {
                "no command found".to_string()
            },
        ),
        Some(Decision::Forbid) => {
            let (i, cmd, why) = first(Decision::Forbid).unwrap_or_default();
            // A built-in finding forbids in every mode and no allow rule lifts it: say
            // what is left to do (new-user pass nu18 F10: `git push --force-with-lease`
            // was refused with no next step, and an allow rule for it was silently moot).
            let dangerous = records
                .iter()
                .find(|r| r.decision == Decision::Forbid)
                .is_some_and(|r| matches!(r.basis, Basis::Dangerous { .. }));
            let next = if dangerous {
                "; cordon never runs this (no approval mode or allow rule lifts a \
                 dangerous-command finding): if you mean it, run it yourself outside cordon"
            } else {
                ""
            };
            (
                Decision::Forbid,
                format!("segment {i} `{cmd}` is forbidden: {why}{next}"),
            )
        }
        Some(Decision::Ask) => {
            // The segment that asks in every mode (a rule that says ask, a dangerous
            // finding) is the reason, before an unknown one that comes first (new-user
            // pass nu62: `find … -exec rm -rf {} +` was refused naming `find` as "asked only
            // in untrusted mode").
            let (i, cmd, why) = records
                .iter()
                .enumerate()
                .find(|(_, r)| r.decision == Decision::Ask && r.asks_explicitly())
                .map(|(i, r)| (i, r.segment.display(), why(r)))
                .or_else(|| first(Decision::Ask))
                .unwrap_or_default();
            // Only a rule that says ask or a dangerous finding asks in every mode; an
            // unknown or capped command is asked about only in `untrusted` (the approval
            // table), so it is not said to need an approval (new-user pass nu9: `check`
            // headlined every unknown command "needs approval", then said "would run").
            let explicit = records.get(i).is_some_and(SegmentRecord::asks_explicitly);
            let mut s = if explicit {
                // Every segment the approval covers is named, not the first alone
                // (new-user pass 239 #6: `git config core.editor vim; git config alias.st
                // status` asked about core.editor only).
                let also: Vec<String> = records
                    .iter()
                    .enumerate()
                    .filter(|(j, r)| *j != i && r.decision == Decision::Ask && r.asks_explicitly())
                    .map(|(j, r)| {
                        format!("segment {j} `{}`: {}", r.segment.display(), self::why(r))
                    })
                    .collect();
                let mut s = format!("segment {i} `{cmd}` needs approval: {why}");
                if !also.is_empty() {
                    s.push_str("; the approval also covers ");
                    s.push_str(&also.join("; "));
                }
                s
            } else if let Some(why) = asked_opaque(opaque_list) {
                format!("the command needs approval: {why}")
            } else {
                let capped = records.get(i).is_some_and(|r| !r.caps.is_empty());
                let what = if capped {
                    "is capped (asked only in untrusted mode)"
                } else {
                    "is not allowed by a rule (asked only in untrusted mode)"
                };
                format!("segment {i} `{cmd}` {what}: {why}")
            };
            if opaque {
                s.push_str(&format!(
                    "; script is opaque ({})",
                    opaque_kinds(opaque_list)
                ));
            }
            (Decision::Ask, s)
        }
        Some(Decision::Allow) if asked_opaque(opaque_list).is_some() => (
            Decision::Ask,
            format!(
                "the command needs approval: {}",
                asked_opaque(opaque_list).unwrap_or_default()
            ),
        ),
        Some(Decision::Allow) if opaque => (
            Decision::Ask,
            format!(
                "every visible segment is allowed, but the script is opaque ({}): never allowed",
                opaque_kinds(opaque_list)
            ),
        ),
        Some(Decision::Allow) => {
            let by_rule = records
                .iter()
                .filter(|r| matches!(r.basis, Basis::Rule { .. }))
                .count();
            (
                Decision::Allow,
                format!(
                    "every segment is allowed ({by_rule} by rule, {} known-safe)",
                    records.len() - by_rule
                ),
            )
        }
    }
}

/// The "approve and remember" suggestion (see the crate docs): only for a plain, non-opaque
/// `ask` whose first asking segment was decided by the default.
fn suggestion(
    decision: Decision,
    opaque: bool,
    records: &[SegmentRecord],
) -> Option<SuggestedRule> {
    if decision != Decision::Ask || opaque {
        return None;
    }
    let (i, r) = records
        .iter()
        .enumerate()
        .find(|(_, r)| r.decision == Decision::Ask)?;
    let plain = matches!(r.basis, Basis::Default { .. })
        && r.caps.is_empty()
        && r.findings.is_empty()
        && r.segment
            .wrappers
            .iter()
            .all(|w| w.name != "sudo" && w.name != "doas");
    if !plain {
        return None;
    }
    suggest(&r.segment).map(|pattern| SuggestedRule {
        pattern,
        decision: Decision::Allow,
        from_segment: i,
    })
}

/// Evaluate a parsed command against rules (R-A2, R-A3, R-A4). See the crate docs for the
/// combination table.
pub(crate) fn evaluate(
    rules: &[Rule],
    parsed: ParsedCommand,
    command: Vec<String>,
    ctx: &EvalContext,
) -> DecisionRecord {
    let ParsedCommand {
        segments,
        opaque: constructs,
        assignments,
    } = parsed;
    let verdicts = segment_verdicts(rules, &segments, &assignments, ctx);
    let records: Vec<SegmentRecord> = segments
        .into_iter()
        .zip(verdicts)
        .map(|(segment, v)| SegmentRecord {
            segment,
            decision: v.decision,
            basis: v.basis,
            matched_rules: v.matched_rules,
            findings: v.findings,
            caps: v.caps,
        })
        .collect();
    let (opaque, visible) = split_visible(constructs, &records);
    let (decision, reason) = overall(&records, &opaque);
    let sandbox = sandbox_verdict(decision, !opaque.is_empty(), &records, ctx);
    let suggested_rule = suggestion(decision, !opaque.is_empty(), &records);
    DecisionRecord {
        command,
        decision,
        reason,
        sandbox,
        opaque,
        visible,
        assignments,
        segments: records,
        suggested_rule,
    }
}

/// Why an opaque construct asked about in every mode ([`OpaqueKind::asks_in_every_mode`])
/// makes the command ask, naming the first one; `None` when there is none.
fn asked_opaque(o: &[OpaqueConstruct]) -> Option<String> {
    let c = o.iter().find(|c| c.kind.asks_in_every_mode())?;
    let what = match c.kind {
        OpaqueKind::ParseError => {
            "the script does not parse cleanly, so not every command in \
                                   it is known (never allowed)"
        }
        OpaqueKind::PromptExpansion => {
            "a value is expanded as a prompt (`${x@P}`, PS0/PS1/PS2/PS4), which runs the \
             command substitutions it holds"
        }
        OpaqueKind::ReevaluatedText => {
            "a variable holds command-substitution text and is \
                                        read again as code (arithmetic, a variable name, trap, \
                                        eval): that substitution runs unchecked"
        }
        OpaqueKind::UnparsedExpansion => {
            "an expansion the parser cannot read (backticks inside `${…}`, …) runs at run \
             time: what it runs is not checked"
        }
        OpaqueKind::CdSearchPath => {
            "CDPATH is set and the script runs cd, or PWD is set and read: the directory cd \
             goes to, and where the commands after it run, is not the one written"
        }
        _ => {
            "a shell's start-up code (a BASH_ENV/ENV that is not a static plain path, \
             PROMPT_COMMAND, an exported BASH_FUNC_ function) is set: what it runs is not \
             checked"
        }
    };
    Some(format!("{what} ({}: {})", c.kind, c.text))
}

fn opaque_kinds(o: &[OpaqueConstruct]) -> String {
    let mut kinds: Vec<&str> = o.iter().map(|c| c.kind.as_str()).collect();
    kinds.dedup();
    kinds.join(", ")
}

fn why(r: &SegmentRecord) -> String {
    match &r.basis {
        Basis::Dangerous { finding } => r.findings[*finding].reason.clone(),
        Basis::Rule { rule } => {
            let m = &r.matched_rules[*rule];
            let mut s = format!("rule {} ({}) from {}", m.pattern, m.decision, m.source);
            if let Some(j) = &m.justification {
                s.push_str(&format!(" — {j}"));
            }
            if m.decision == Decision::Allow && !r.caps.is_empty() {
                s.push_str(&format!("; capped at ask: {}", r.caps.join("; ")));
            }
            s
        }
        Basis::KnownSafe { reason } => {
            if r.caps.is_empty() {
                reason.clone()
            } else {
                format!("{reason}, but capped at ask: {}", r.caps.join("; "))
            }
        }
        Basis::Default { reason } => {
            if r.caps.is_empty() {
                reason.clone()
            } else {
                format!("{reason}; {}", r.caps.join("; "))
            }
        }
    }
}

fn sandbox_verdict(
    decision: Decision,
    opaque: bool,
    records: &[SegmentRecord],
    ctx: &EvalContext,
) -> SandboxVerdict {
    let no = |reason: String| SandboxVerdict {
        bypass: false,
        reason,
    };
    if decision == Decision::Forbid {
        return no("the command is forbidden; it does not run at all".into());
    }
    if decision != Decision::Allow {
        return no("the command is not allowed by rule; if it runs, it runs sandboxed".into());
    }
    if opaque {
        return no("the script is opaque".into());
    }
    for (i, r) in records.iter().enumerate() {
        let all_bypass = matches!(r.basis, Basis::Rule { .. })
            && !r.matched_rules.is_empty()
            && r.matched_rules
                .iter()
                .all(|m| m.sandbox == SandboxMode::Bypass);
        if !all_bypass {
            let what = match r.basis {
                Basis::KnownSafe { .. } => "allowed by the known-safe list",
                _ => "not allowed by a `sandbox = \"bypass\"` rule",
            };
            return no(format!(
                "segment {i} `{}` is {what}; bypass needs every segment to match only bypass rules",
                r.segment.display()
            ));
        }
    }
    if ctx.profile_has_deny_read {
        return no(
            "bypass blocked: the profile has deny-read entries, which only the sandbox enforces"
                .into(),
        );
    }
    SandboxVerdict {
        bypass: true,
        reason: "every segment matched a `sandbox = \"bypass\"` rule".into(),
    }
}
