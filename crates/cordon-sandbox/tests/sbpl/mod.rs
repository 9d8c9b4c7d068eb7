//! An evaluator for the subset of SBPL (Seatbelt profile language) cordon emits, so the
//! generated macOS policy can be checked on any host.
//!
//! Modelled semantics (from the production policies cited in `docs/macos.md`):
//! - `(version 1)`, then `(deny default)` or `(allow default)`;
//! - `(allow|deny OP… FILTER…)`: the rule applies when one of its operations matches the
//!   asked operation (`file-read*` is a prefix wildcard) and any of its filters matches (no
//!   filter: always);
//! - the **last** matching rule wins, whatever its specificity; none → the default;
//! - path filters see the resolved path: `literal` (equal), `subpath` (equal or beneath, by
//!   whole components), `prefix` (string prefix), `regex`; `(param "K")` is the `-D K=v`
//!   value (unbound: a compile error, as `sandbox-exec` refuses it);
//! - `require-all`, `require-any`, `require-not` combine filters;
//! - name filters: `sysctl-name(-prefix)`, `global-name`, `local-name`,
//!   `ipc-posix-name(-prefix)`, `ioctl-command`; other filters (`target`, `remote`, `local`,
//!   `mac-policy-name`, `vnode-type`, …) are kept opaque and never match a query.
#![allow(dead_code)]

use std::collections::BTreeMap;

/// An s-expression.
#[derive(Debug, Clone, PartialEq)]
pub enum Sexp {
    /// `( … )`.
    List(Vec<Sexp>),
    /// A bare symbol, e.g. `allow`, `file-read*`.
    Sym(String),
    /// A string literal `"…"`.
    Str(String),
    /// A regex literal `#"…"`.
    Regex(String),
    /// An integer.
    Int(i64),
}

/// Parses SBPL text into top-level forms. `;` starts a comment to the end of the line.
pub fn parse(text: &str) -> Result<Vec<Sexp>, String> {
    let b = text.as_bytes();
    let mut i = 0;
    let mut stack: Vec<Vec<Sexp>> = vec![Vec::new()];
    while i < b.len() {
        let c = b[i];
        match c {
            b';' => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            c if c.is_ascii_whitespace() => i += 1,
            b'(' => {
                stack.push(Vec::new());
                i += 1;
            }
            b')' => {
                let done = stack.pop().ok_or("unbalanced )")?;
                stack
                    .last_mut()
                    .ok_or("unbalanced ) at top level")?
                    .push(Sexp::List(done));
                i += 1;
            }
            b'"' | b'#' => {
                let regex = c == b'#';
                if regex {
                    if b.get(i + 1) != Some(&b'"') {
                        return Err(format!("unexpected # at {i}"));
                    }
                    i += 1;
                }
                i += 1;
                let mut s: Vec<u8> = Vec::new();
                loop {
                    let ch = *b.get(i).ok_or("unterminated string")?;
                    i += 1;
                    match ch {
                        b'"' => break,
                        b'\\' => {
                            let n = *b.get(i).ok_or("unterminated escape")?;
                            i += 1;
                            if regex && n != b'"' {
                                s.push(b'\\');
                            }
                            s.push(n);
                        }
                        other => s.push(other),
                    }
                }
                let s = String::from_utf8(s).map_err(|e| e.to_string())?;
                stack
                    .last_mut()
                    .unwrap()
                    .push(if regex { Sexp::Regex(s) } else { Sexp::Str(s) });
            }
            _ => {
                let start = i;
                while i < b.len()
                    && !b[i].is_ascii_whitespace()
                    && !matches!(b[i], b'(' | b')' | b'"' | b';')
                {
                    i += 1;
                }
                let tok = std::str::from_utf8(&b[start..i]).map_err(|e| e.to_string())?;
                stack.last_mut().unwrap().push(match tok.parse::<i64>() {
                    Ok(n) => Sexp::Int(n),
                    Err(_) => Sexp::Sym(tok.to_string()),
                });
            }
        }
    }
    if stack.len() != 1 {
        return Err("unbalanced (".into());
    }
    Ok(stack.pop().unwrap())
}

/// A compiled filter.
#[derive(Debug, Clone)]
pub enum Filter {
    /// Path equal.
    Literal(String),
    /// Path equal or beneath (whole components).
    Subpath(String),
    /// Path string prefix.
    Prefix(String),
    /// Path regex.
    Regex(regex::Regex),
    /// Every filter matches.
    All(Vec<Filter>),
    /// Some filter matches.
    Any(Vec<Filter>),
    /// The filter does not match.
    Not(Box<Filter>),
    /// A name filter: `(kind value)`, e.g. `sysctl-name "hw.ncpu"`.
    Name { kind: String, value: String },
    /// `(ioctl-command N)`.
    Ioctl(i64),
    /// A filter this model does not evaluate (never matches a query).
    Opaque(String),
}

/// One `(allow …)` / `(deny …)` rule.
#[derive(Debug, Clone)]
pub struct Rule {
    /// Allow (true) or deny.
    pub allow: bool,
    /// Operation names, possibly with a trailing `*` wildcard.
    pub ops: Vec<String>,
    /// Filters (any of them); empty = unconditional.
    pub filters: Vec<Filter>,
}

/// A compiled policy.
#[derive(Debug, Clone)]
pub struct Policy {
    /// `(allow default)` (true) or `(deny default)`.
    pub default_allow: bool,
    /// Rules in order.
    pub rules: Vec<Rule>,
    /// Every operation name used.
    pub ops_used: Vec<String>,
    /// Every filter name used.
    pub filters_used: Vec<String>,
    /// Every string literal (not parameters) used in a filter.
    pub literals: Vec<String>,
    /// Parameters referenced.
    pub params_used: Vec<String>,
}

/// Names of the path filters.
pub const PATH_FILTERS: &[&str] = &["literal", "subpath", "prefix", "regex"];
/// Names of the name filters.
pub const NAME_FILTERS: &[&str] = &[
    "sysctl-name",
    "sysctl-name-prefix",
    "global-name",
    "local-name",
    "ipc-posix-name",
    "ipc-posix-name-prefix",
];

/// Compiles parsed forms with the `-D` parameters. Errors: unknown form, unbound
/// parameter, bad regex, missing `(version 1)`.
pub fn compile(forms: &[Sexp], params: &BTreeMap<String, String>) -> Result<Policy, String> {
    let mut p = Policy {
        default_allow: false,
        rules: Vec::new(),
        ops_used: Vec::new(),
        filters_used: Vec::new(),
        literals: Vec::new(),
        params_used: Vec::new(),
    };
    let mut version = false;
    for f in forms {
        let Sexp::List(items) = f else {
            return Err(format!("top-level atom {f:?}"));
        };
        match items.first() {
            Some(Sexp::Sym(s)) if s == "version" => {
                if items.get(1) != Some(&Sexp::Int(1)) {
                    return Err("only (version 1) is supported".into());
                }
                version = true;
            }
            Some(Sexp::Sym(s)) if s == "allow" || s == "deny" => {
                let allow = s == "allow";
                let mut ops = Vec::new();
                let mut filters = Vec::new();
                for it in &items[1..] {
                    match it {
                        Sexp::Sym(op) => ops.push(op.clone()),
                        Sexp::List(_) => filters.push(filter(it, params, &mut p)?),
                        other => return Err(format!("unexpected {other:?} in a rule")),
                    }
                }
                if ops.is_empty() {
                    return Err("rule without an operation".into());
                }
                if ops == ["default"] {
                    if !filters.is_empty() {
                        return Err("(… default) takes no filter".into());
                    }
                    p.default_allow = allow;
                    p.ops_used.push("default".into());
                    continue;
                }
                p.ops_used.extend(ops.iter().cloned());
                p.rules.push(Rule {
                    allow,
                    ops,
                    filters,
                });
            }
            other => return Err(format!("unknown form {other:?}")),
        }
    }
    if !version {
        return Err("missing (version 1)".into());
    }
    Ok(p)
}

fn string_arg(
    it: Option<&Sexp>,
    params: &BTreeMap<String, String>,
    p: &mut Policy,
) -> Result<String, String> {
    match it {
        Some(Sexp::Str(s)) => {
            p.literals.push(s.clone());
            Ok(s.clone())
        }
        Some(Sexp::List(l)) if l.first() == Some(&Sexp::Sym("param".into())) => {
            p.filters_used.push("param".into());
            match l.get(1) {
                Some(Sexp::Str(k)) => {
                    p.params_used.push(k.clone());
                    params
                        .get(k)
                        .cloned()
                        .ok_or_else(|| format!("unbound parameter {k:?}"))
                }
                other => Err(format!("bad param {other:?}")),
            }
        }
        other => Err(format!("expected a string or (param …), got {other:?}")),
    }
}

/// Compiled regexes, cached per thread (the property test compiles thousands of policies).
fn compile_regex(r: &str) -> Result<regex::Regex, String> {
    thread_local! {
        static CACHE: std::cell::RefCell<BTreeMap<String, regex::Regex>> =
            const { std::cell::RefCell::new(BTreeMap::new()) };
    }
    CACHE.with(|c| {
        if let Some(re) = c.borrow().get(r) {
            return Ok(re.clone());
        }
        let re = regex::Regex::new(r).map_err(|e| e.to_string())?;
        c.borrow_mut().insert(r.to_string(), re.clone());
        Ok(re)
    })
}

fn filter(f: &Sexp, params: &BTreeMap<String, String>, p: &mut Policy) -> Result<Filter, String> {
    let Sexp::List(items) = f else {
        return Err(format!("filter must be a list: {f:?}"));
    };
    let Some(Sexp::Sym(name)) = items.first() else {
        return Err(format!("filter without a name: {f:?}"));
    };
    p.filters_used.push(name.clone());
    let subs = |p: &mut Policy| -> Result<Vec<Filter>, String> {
        items[1..].iter().map(|s| filter(s, params, p)).collect()
    };
    Ok(match name.as_str() {
        "literal" => Filter::Literal(string_arg(items.get(1), params, p)?),
        "subpath" => Filter::Subpath(string_arg(items.get(1), params, p)?),
        "prefix" => Filter::Prefix(string_arg(items.get(1), params, p)?),
        "regex" => match items.get(1) {
            Some(Sexp::Regex(r)) | Some(Sexp::Str(r)) => Filter::Regex(compile_regex(r)?),
            other => return Err(format!("bad regex {other:?}")),
        },
        "require-all" => Filter::All(subs(p)?),
        "require-any" => Filter::Any(subs(p)?),
        "require-not" => {
            let mut s = subs(p)?;
            if s.len() != 1 {
                return Err("require-not takes one filter".into());
            }
            Filter::Not(Box::new(s.remove(0)))
        }
        "ioctl-command" => match items.get(1) {
            Some(Sexp::Int(n)) => Filter::Ioctl(*n),
            other => return Err(format!("bad ioctl-command {other:?}")),
        },
        n if NAME_FILTERS.contains(&n) => Filter::Name {
            kind: n.to_string(),
            value: string_arg(items.get(1), params, p)?,
        },
        other => Filter::Opaque(other.to_string()),
    })
}

/// One question: an operation with the argument it is checked against.
#[derive(Debug, Clone, Default)]
pub struct Query<'a> {
    /// Operation, e.g. `file-read-data`.
    pub op: &'a str,
    /// The resolved path, for file (and unix-socket) operations.
    pub path: Option<&'a str>,
    /// `(kind, name)` for name filters, e.g. `("sysctl-name", "kern.procargs2")`.
    pub name: Option<(&'a str, &'a str)>,
    /// The ioctl command number.
    pub ioctl: Option<i64>,
}

fn op_matches(rule_op: &str, op: &str) -> bool {
    match rule_op.strip_suffix('*') {
        Some(prefix) => op.starts_with(prefix),
        None => rule_op == op,
    }
}

fn subpath(base: &str, path: &str) -> bool {
    if base == "/" {
        return path.starts_with('/');
    }
    let base = base.trim_end_matches('/');
    path == base || (path.starts_with(base) && path.as_bytes().get(base.len()) == Some(&b'/'))
}

impl Filter {
    fn matches(&self, q: &Query) -> bool {
        match self {
            Filter::Literal(s) => q.path == Some(s.as_str()),
            Filter::Subpath(s) => q.path.is_some_and(|p| subpath(s, p)),
            Filter::Prefix(s) => q.path.is_some_and(|p| p.starts_with(s.as_str())),
            Filter::Regex(r) => q.path.is_some_and(|p| r.is_match(p)),
            Filter::All(fs) => fs.iter().all(|f| f.matches(q)),
            Filter::Any(fs) => fs.iter().any(|f| f.matches(q)),
            Filter::Not(f) => !f.matches(q),
            Filter::Name { kind, value } => q.name.is_some_and(|(k, n)| {
                let (family, prefix) = match kind.strip_suffix("-prefix") {
                    Some(f) => (f, true),
                    None => (kind.as_str(), false),
                };
                k == family
                    && if prefix {
                        n.starts_with(value.as_str())
                    } else {
                        n == value
                    }
            }),
            Filter::Ioctl(n) => q.ioctl == Some(*n),
            Filter::Opaque(_) => false,
        }
    }
}

impl Policy {
    /// The verdict for `q`: the last matching rule, else the default.
    pub fn allows(&self, q: &Query) -> bool {
        let mut verdict = self.default_allow;
        for r in &self.rules {
            if r.ops.iter().any(|o| op_matches(o, q.op))
                && (r.filters.is_empty() || r.filters.iter().any(|f| f.matches(q)))
            {
                verdict = r.allow;
            }
        }
        verdict
    }

    /// Whether `op` on the resolved `path` is allowed.
    pub fn file(&self, op: &str, path: &str) -> bool {
        self.allows(&Query {
            op,
            path: Some(path),
            ..Default::default()
        })
    }
}

/// A filesystem operation, as Seatbelt checks it (paths resolved).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileOp {
    /// Read a file's contents: `file-read-data`.
    Read(String),
    /// Write an existing file's contents: `file-write-data`.
    Write(String),
    /// Create a new entry: `file-write-create`.
    Create(String),
    /// Remove an entry (unlink, rmdir): `file-write-unlink`.
    Unlink(String),
    /// Rename: `file-write-unlink` on the source, `file-write-create` on the destination.
    Rename(String, String),
    /// Hard link: `file-link` on the existing file, `file-write-create` on the new name.
    Link(String, String),
}

impl Policy {
    /// The verdict for a filesystem operation.
    pub fn file_op(&self, op: &FileOp) -> bool {
        match op {
            FileOp::Read(p) => self.file("file-read-data", p),
            FileOp::Write(p) => self.file("file-write-data", p),
            FileOp::Create(p) => self.file("file-write-create", p),
            FileOp::Unlink(p) => self.file("file-write-unlink", p),
            FileOp::Rename(s, d) => {
                self.file("file-write-unlink", s) && self.file("file-write-create", d)
            }
            FileOp::Link(s, d) => self.file("file-link", s) && self.file("file-write-create", d),
        }
    }
}

/// Parses and compiles `text` with `params`.
pub fn load(text: &str, params: &[(String, String)]) -> Result<Policy, String> {
    let forms = parse(text)?;
    let map: BTreeMap<String, String> = params.iter().cloned().collect();
    compile(&forms, &map)
}

#[cfg(test)]
mod self_tests {
    use super::*;

    #[test]
    fn last_match_wins_and_subpath_is_by_component() {
        let p = load(
            r#"(version 1) (deny default)
            (allow file-read* (subpath (param "A")))
            (deny file-read* (literal "/a/b"))
            ; comment
            (allow file-read-data (regex #"^/a/b$"))"#,
            &[("A".into(), "/a".into())],
        )
        .unwrap();
        assert!(p.file("file-read-data", "/a/b"));
        assert!(!p.file("file-read-metadata", "/a/b"));
        assert!(p.file("file-read-metadata", "/a/c"));
        assert!(!p.file("file-read-data", "/ab"));
        assert!(load(
            "(version 1) (allow file-read* (literal (param \"X\")))",
            &[]
        )
        .is_err());
    }
}
