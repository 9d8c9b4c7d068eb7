//! Prefix rules (R-A3): TOML format, load-time example checking, matching.

use std::fmt;
use std::sync::Arc;

use serde::Serialize;

use crate::error::{LoadError, RuleLocation};
use crate::knowledge::{fold_confusables, git_subcommand_index};
use crate::model::{Decision, ParsedCommand, ProgramKind, Segment};
use crate::parse::{parse_command, parse_script};

/// Where a rule runs when it allows a command (R-A3).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SandboxMode {
    /// Run inside the sandbox (default).
    #[default]
    Sandboxed,
    /// Run outside the sandbox, if every segment matched such a rule and the profile has no
    /// deny-read entries.
    Bypass,
}

/// A prefix pattern (R-A3): one entry per leading argv position, each a set of alternatives.
///
/// TOML / JSON shape: `["git", ["status", "diff"]]` (a nested array = alternatives).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pattern(Arc<Vec<Vec<String>>>);

impl Pattern {
    /// Build a pattern from per-position alternatives. Panics never; an empty pattern
    /// matches nothing.
    pub fn new(positions: Vec<Vec<String>>) -> Pattern {
        Pattern(Arc::new(positions))
    }
    /// The per-position alternatives.
    pub fn positions(&self) -> &[Vec<String>] {
        &self.0
    }
}

impl Serialize for Pattern {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        let mut seq = s.serialize_seq(Some(self.0.len()))?;
        for alts in self.0.iter() {
            if alts.len() == 1 {
                seq.serialize_element(&alts[0])?;
            } else {
                seq.serialize_element(alts)?;
            }
        }
        seq.end()
    }
}

impl fmt::Display for Pattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let q = |s: &String| serde_json::to_string(s).unwrap_or_default();
        let parts: Vec<String> = self
            .0
            .iter()
            .map(|alts| {
                if alts.len() == 1 {
                    q(&alts[0])
                } else {
                    format!("[{}]", alts.iter().map(q).collect::<Vec<_>>().join(", "))
                }
            })
            .collect();
        write!(f, "[{}]", parts.join(", "))
    }
}

/// Where a rule was loaded from (R-A3, R-P6: the label names the layer's file).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RuleSource {
    /// The label given to the loader (usually a file path).
    pub label: String,
    /// 0-based index of the rule within that source (displayed as `rule #index+1`).
    pub index: usize,
    /// 1-based line of the rule, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<usize>,
}

impl fmt::Display for RuleSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.label)?;
        if let Some(l) = self.line {
            write!(f, ":{l}")?;
        }
        // Counted from 1, as people count (new-user pass: the first rule was `#0`).
        write!(f, " rule #{}", self.index + 1)
    }
}

/// An example or counterexample (R-A3): a script string or an argv array.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum Example {
    /// Parsed as a shell script (`"git diff --stat"`).
    Script(String),
    /// Used as an argv (`["git", "diff"]`).
    Argv(Vec<String>),
}

impl Example {
    fn parse(&self) -> ParsedCommand {
        match self {
            Example::Script(s) => parse_script(s),
            Example::Argv(a) => parse_command(a),
        }
    }
    fn display(&self) -> String {
        match self {
            Example::Script(s) => s.clone(),
            Example::Argv(a) => serde_json::to_string(a).unwrap_or_default(),
        }
    }
}

/// One command rule (R-A3).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Rule {
    /// The prefix pattern.
    pub pattern: Pattern,
    /// What a match decides.
    pub decision: Decision,
    /// Why (shown to the user and recorded).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub justification: Option<String>,
    /// Sandbox bypass request (only meaningful for `allow`).
    pub sandbox: SandboxMode,
    /// Commands the rule must match (checked at load).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub examples: Vec<Example>,
    /// Commands the rule must not match (checked at load).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub counterexamples: Vec<Example>,
    /// `exact = true`: the pattern matches a command of exactly its length, not one with
    /// more arguments after it. A rule remembered at the approval prompt is exact: the
    /// person approved that command, not every extension of it (attack pass 45: a
    /// remembered `git fetch origin` allowed `git fetch origin --upload-pack=…`, which runs
    /// a program).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub exact: bool,
    /// Where the rule came from.
    pub source: RuleSource,
}

impl Rule {
    /// Does this rule's pattern match the segment?
    ///
    /// Position 0 matches the program: a pattern entry containing `/` must equal the program
    /// spelling exactly; a bare entry matches the resolved name of a bare or trusted-path
    /// program. `forbid`/`ask` rules additionally match untrusted paths, relative paths and
    /// look-alike spellings by their (folded) basename, so a stricter rule is never bypassed
    /// by spelling. Later positions match only statically known words. For `forbid`/`ask`
    /// rules on `git`, the pattern is also tried with git's global options skipped
    /// (`git -C . push` matches `["git", "push"]`); `allow` rules never skip anything.
    pub fn matches(&self, seg: &Segment) -> bool {
        let p = &self.pattern.0;
        if p.is_empty() || seg.argv.len() < p.len() || (self.exact && seg.argv.len() != p.len()) {
            return false;
        }
        let first = p[0].iter().any(|alt| {
            if alt.contains('/') {
                return seg.is_static(0) && seg.argv[0] == *alt;
            }
            match seg.program.kind {
                ProgramKind::Bare | ProgramKind::TrustedPath => seg.program.name == *alt,
                ProgramKind::Dynamic => false,
                _ if self.decision != Decision::Allow => {
                    let folded = fold_confusables(&seg.argv[0]);
                    folded.rsplit('/').next() == Some(alt.as_str())
                }
                _ => false,
            }
        });
        if !first {
            return false;
        }
        let rest_matches = |offset: usize| {
            p.iter().enumerate().skip(1).all(|(k, alts)| {
                let i = k + offset;
                i < seg.argv.len() && seg.is_static(i) && alts.contains(&seg.argv[i])
            })
        };
        if rest_matches(0) {
            return true;
        }
        // Strict rules must not be dodged by git's global options (`git -C . push`):
        // also match with them skipped. Never for `allow` (`git -c x=y status` stays unmatched).
        if self.decision != Decision::Allow && p.len() > 1 {
            if let Some(sub) = git_subcommand_index(seg) {
                return sub > 1 && rest_matches(sub - 1);
            }
        }
        false
    }

    fn location(&self) -> RuleLocation {
        RuleLocation {
            source_label: self.source.label.clone(),
            line: self.source.line,
            index: self.source.index,
            pattern: self.pattern.to_string(),
        }
    }
}

const KEYS: &[&str] = &[
    "pattern",
    "decision",
    "justification",
    "examples",
    "counterexamples",
    "sandbox",
    "exact",
];

fn line_of(src: &str, offset: usize) -> usize {
    src.as_bytes()[..offset.min(src.len())]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

/// Parse rules from TOML text (R-A3). Reads only the top-level `rules` array; other keys of
/// the (profile) document are ignored.
pub(crate) fn rules_from_str(src: &str, label: &str) -> Result<Vec<Rule>, LoadError> {
    // Unknown top-level keys are errors: a `[[rule]]` typo loaded zero rules without a
    // word, and a `forbid` rule vanished (new user, stop 19).
    // (A rules file may also be a whole config: its `[profile]`/`[profiles]` tables and
    // `default_profile` are someone else's keys, ignored here.)
    #[derive(serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Doc {
        #[serde(default)]
        rules: Vec<toml::Spanned<toml::Value>>,
        #[serde(default)]
        profile: Option<toml::Value>,
        #[serde(default)]
        profiles: Option<toml::Value>,
        #[serde(default)]
        default_profile: Option<toml::Value>,
    }
    let doc: Doc = toml::from_str(src).map_err(|e| LoadError::Toml {
        source_label: label.to_string(),
        message: e.to_string().trim_end().to_string(),
    })?;
    // Each rule's keys with their lines (toml's spans): an error about a key names the
    // key's line, not the `[[rules]]` header's (new-user pass: `decison` on line 3 was
    // said at line 1).
    let spans = toml::de::DeTable::parse(src).ok();
    let rule_tables: Vec<Option<&toml::de::DeTable<'_>>> = spans
        .as_ref()
        .and_then(|t| t.get_ref().get("rules"))
        .and_then(|r| r.get_ref().as_array())
        .map(|a| a.iter().map(|r| r.get_ref().as_table()).collect())
        .unwrap_or_default();
    let key_line = |index: usize, key: &str| -> Option<usize> {
        let table = rule_tables.get(index).copied().flatten()?;
        let (k, _) = table.get_key_value(key)?;
        Some(line_of(src, k.span().start))
    };
    let mut out = Vec::with_capacity(doc.rules.len());
    for (index, sp) in doc.rules.iter().enumerate() {
        let line = Some(line_of(src, sp.span().start));
        out.push(rule_from_value(sp.get_ref(), label, index, line, &|k| {
            key_line(index, k)
        })?);
    }
    check_examples(&out, &key_line)?;
    Ok(out)
}

/// Parse rules from an already-parsed TOML value: either a table with a `rules` array or the
/// array of rule tables itself.
pub(crate) fn rules_from_value(v: &toml::Value, label: &str) -> Result<Vec<Rule>, LoadError> {
    let arr = match v {
        toml::Value::Array(a) => a,
        toml::Value::Table(t) => match t.get("rules") {
            None => return Ok(Vec::new()),
            Some(toml::Value::Array(a)) => a,
            Some(_) => {
                return Err(LoadError::Toml {
                    source_label: label.to_string(),
                    message: "`rules` must be an array of tables".into(),
                })
            }
        },
        _ => {
            return Err(LoadError::Toml {
                source_label: label.to_string(),
                message: "expected a table with `rules` or an array of rule tables".into(),
            })
        }
    };
    let out = arr
        .iter()
        .enumerate()
        .map(|(i, r)| rule_from_value(r, label, i, None, &|_| None))
        .collect::<Result<Vec<_>, _>>()?;
    check_examples(&out, &|_, _| None)?;
    Ok(out)
}

// Longer than most: one short step per rule key (pattern, decision, justification, sandbox,
// examples), each with its own load error.
fn rule_from_value(
    v: &toml::Value,
    label: &str,
    index: usize,
    line: Option<usize>,
    key_line: &dyn Fn(&str) -> Option<usize>,
) -> Result<Rule, LoadError> {
    let mut at = RuleLocation {
        source_label: label.to_string(),
        line,
        index,
        pattern: "<invalid>".into(),
    };
    let err = |at: &RuleLocation, m: String| LoadError::InvalidRule {
        at: at.clone(),
        message: m,
    };
    // An error about one key: at that key's line when it is known.
    let err_at = |at: &RuleLocation, key: &str, m: String| LoadError::InvalidRule {
        at: RuleLocation {
            line: key_line(key).or(at.line),
            ..at.clone()
        },
        message: m,
    };
    let t = v
        .as_table()
        .ok_or_else(|| err(&at, "a rule must be a table".into()))?;
    let pattern = match t.get("pattern") {
        Some(p) => parse_pattern(p).map_err(|m| err_at(&at, "pattern", m))?,
        None => {
            return Err(err(
                &at,
                "missing `pattern`: add e.g. pattern = [\"git\", \"status\"]".into(),
            ))
        }
    };
    at.pattern = pattern.to_string();
    for k in t.keys() {
        if !KEYS.contains(&k.as_str()) {
            return Err(err_at(
                &at,
                k,
                format!("unknown key `{k}` (expected one of: {})", KEYS.join(", ")),
            ));
        }
    }
    let decision = match t.get("decision").map(|d| d.as_str()) {
        Some(Some("allow")) => Decision::Allow,
        Some(Some("ask")) => Decision::Ask,
        Some(Some("forbid")) => Decision::Forbid,
        Some(_) => {
            return Err(err_at(
                &at,
                "decision",
                "`decision` must be \"allow\", \"ask\" or \"forbid\"".into(),
            ))
        }
        None => {
            return Err(err(
                &at,
                "missing `decision`: add decision = \"allow\", \"ask\" or \"forbid\"".into(),
            ))
        }
    };
    let justification = match t.get("justification") {
        None => None,
        Some(toml::Value::String(s)) => Some(s.clone()),
        Some(_) => {
            return Err(err_at(
                &at,
                "justification",
                "`justification` must be a string".into(),
            ))
        }
    };
    let sandbox = match t.get("sandbox").map(|s| s.as_str()) {
        None | Some(Some("sandboxed")) => SandboxMode::Sandboxed,
        Some(Some("bypass")) => SandboxMode::Bypass,
        Some(_) => {
            return Err(err_at(
                &at,
                "sandbox",
                "`sandbox` must be \"sandboxed\" or \"bypass\"".into(),
            ))
        }
    };
    if sandbox == SandboxMode::Bypass && decision != Decision::Allow {
        return Err(err_at(
            &at,
            "sandbox",
            "`sandbox = \"bypass\"` is only meaningful with `decision = \"allow\"`".into(),
        ));
    }
    let examples =
        parse_examples(t.get("examples"), "examples").map_err(|m| err_at(&at, "examples", m))?;
    let counterexamples = parse_examples(t.get("counterexamples"), "counterexamples")
        .map_err(|m| err_at(&at, "counterexamples", m))?;
    let exact = match t.get("exact") {
        None => false,
        Some(toml::Value::Boolean(b)) => *b,
        Some(_) => return Err(err_at(&at, "exact", "`exact` must be true or false".into())),
    };
    Ok(Rule {
        pattern,
        decision,
        justification,
        sandbox,
        examples,
        counterexamples,
        exact,
        source: RuleSource {
            label: label.to_string(),
            index,
            line,
        },
    })
}

fn parse_pattern(p: &toml::Value) -> Result<Pattern, String> {
    let arr = p
        .as_array()
        .ok_or("`pattern` must be an array like [\"git\", [\"status\", \"diff\"]]")?;
    if arr.is_empty() {
        return Err("`pattern` must not be empty".into());
    }
    let mut out = Vec::with_capacity(arr.len());
    for (i, e) in arr.iter().enumerate() {
        let alts: Vec<String> = match e {
            toml::Value::String(s) => vec![s.clone()],
            toml::Value::Array(a) => a
                .iter()
                .map(|x| {
                    x.as_str()
                        .map(str::to_string)
                        .ok_or(format!("`pattern[{i}]`: alternatives must be strings"))
                })
                .collect::<Result<_, _>>()?,
            _ => {
                return Err(format!(
                    "`pattern[{i}]` must be a string or an array of strings"
                ))
            }
        };
        if alts.is_empty() || alts.iter().any(|s| s.is_empty()) {
            return Err(format!("`pattern[{i}]` must not be empty"));
        }
        out.push(alts);
    }
    Ok(Pattern::new(out))
}

fn parse_examples(v: Option<&toml::Value>, key: &str) -> Result<Vec<Example>, String> {
    let Some(v) = v else { return Ok(Vec::new()) };
    let arr = v
        .as_array()
        .ok_or(format!("`{key}` must be an array of strings"))?;
    arr.iter()
        .map(|e| match e {
            toml::Value::String(s) => Ok(Example::Script(s.clone())),
            toml::Value::Array(a) => a
                .iter()
                .map(|x| x.as_str().map(str::to_string))
                .collect::<Option<Vec<_>>>()
                .map(Example::Argv)
                .ok_or(format!(
                    "`{key}`: an argv example must be an array of strings"
                )),
            _ => Err(format!(
                "`{key}` entries must be strings or arrays of strings"
            )),
        })
        .collect()
}

/// Load-time check (R-A3): each example must be matched by its rule (some segment of the
/// parsed example), and no counterexample may be.
/// `key_line(index, key)`: the line of a rule's key, when known (the error is said there).
fn check_examples(
    rules: &[Rule],
    key_line: &dyn Fn(usize, &str) -> Option<usize>,
) -> Result<(), LoadError> {
    let at = |r: &Rule, key: &str| RuleLocation {
        line: key_line(r.source.index, key).or(r.source.line),
        ..r.location()
    };
    for r in rules {
        for ex in &r.examples {
            if !ex.parse().segments.iter().any(|s| r.matches(s)) {
                return Err(LoadError::ExampleDoesNotMatch {
                    at: at(r, "examples"),
                    example: ex.display(),
                });
            }
        }
        for ex in &r.counterexamples {
            if ex.parse().segments.iter().any(|s| r.matches(s)) {
                return Err(LoadError::CounterexampleMatches {
                    at: at(r, "counterexamples"),
                    example: ex.display(),
                });
            }
        }
    }
    Ok(())
}
