//! Table-driven decision suite (R-A2, R-A3, R-A4): every case in `tests/cases.toml` is
//! evaluated against `tests/fixtures/rules.toml` and must produce the expected decision (and,
//! where given, opaque flag, finding id, sandbox bypass and suggested rule).

use cordon_execpolicy::{Decision, EvalContext, Policy};
use serde::Deserialize;

#[derive(Deserialize)]
struct CaseFile {
    case: Vec<Case>,
}

/// Generated input: `prefix + unit*times + middle + close*times + suffix`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Gen {
    #[serde(default)]
    prefix: String,
    unit: String,
    times: usize,
    #[serde(default)]
    middle: String,
    #[serde(default)]
    close: String,
    #[serde(default)]
    suffix: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Case {
    script: Option<String>,
    argv: Option<Vec<String>>,
    generate: Option<Gen>,
    expect: Decision,
    opaque: Option<bool>,
    bypass: Option<bool>,
    finding: Option<String>,
    /// A finding id that must not be there (the twin of a `finding` case).
    no_finding: Option<String>,
    /// Text that one finding's reason must contain.
    reason_contains: Option<String>,
    /// Whether the ask is asked in every approval mode but `bypass`
    /// (`approval::explicit_ask`), not only in `untrusted`.
    asks: Option<bool>,
    /// `false` = no suggestion; an array = that pattern.
    suggest: Option<toml::Value>,
    cwd: Option<String>,
    home: Option<String>,
    deny_read: Option<bool>,
    #[allow(dead_code)]
    note: Option<String>,
}

fn policy() -> Policy {
    let src = include_str!("fixtures/rules.toml");
    Policy::from_toml_str(src, "tests/fixtures/rules.toml").expect("sample rules load")
}

#[test]
fn table_driven_cases() {
    let file: CaseFile = toml::from_str(include_str!("cases.toml")).expect("cases.toml parses");
    let policy = policy();
    assert!(file.case.len() >= 150, "only {} cases", file.case.len());
    let mut failures = Vec::new();
    for (i, c) in file.case.iter().enumerate() {
        let mut ctx = EvalContext::default();
        ctx.cwd = c.cwd.clone();
        ctx.home = c.home.clone();
        ctx.profile_has_deny_read = c.deny_read.unwrap_or(false);
        let (label, rec) = if let Some(s) = &c.script {
            (format!("script {s:?}"), policy.evaluate_script(s, &ctx))
        } else if let Some(a) = &c.argv {
            (format!("argv {a:?}"), policy.evaluate(a, &ctx))
        } else if let Some(g) = &c.generate {
            let s = format!(
                "{}{}{}{}{}",
                g.prefix,
                g.unit.repeat(g.times),
                g.middle,
                g.close.repeat(g.times),
                g.suffix
            );
            (
                format!("generated {:?}×{} ({} bytes)", g.unit, g.times, s.len()),
                policy.evaluate_script(&s, &ctx),
            )
        } else {
            panic!("case {i} has no script/argv/generate");
        };
        let mut problems = Vec::new();
        if rec.decision != c.expect {
            problems.push(format!(
                "decision {} != expected {}",
                rec.decision, c.expect
            ));
        }
        if let Some(o) = c.opaque {
            if rec.opaque.is_empty() == o {
                problems.push(format!(
                    "opaque = {} != expected {o}",
                    !rec.opaque.is_empty()
                ));
            }
        }
        if let Some(b) = c.bypass {
            if rec.sandbox.bypass != b {
                problems.push(format!("bypass = {} != expected {b}", rec.sandbox.bypass));
            }
        }
        if let Some(a) = c.asks {
            if cordon_execpolicy::approval::explicit_ask(&rec) != a {
                problems.push(format!("asks in every mode != expected {a}"));
            }
        }
        if let Some(f) = &c.finding {
            let ids: Vec<&str> = rec
                .segments
                .iter()
                .flat_map(|s| s.findings.iter().map(|f| f.id.as_str()))
                .collect();
            if !ids.contains(&f.as_str()) {
                problems.push(format!("finding {f} missing (have {ids:?})"));
            }
        }
        if let Some(t) = &c.reason_contains {
            let reasons: Vec<&str> = rec
                .segments
                .iter()
                .flat_map(|s| s.findings.iter().map(|f| f.reason.as_str()))
                .collect();
            if !reasons.iter().any(|r| r.contains(t.as_str())) {
                problems.push(format!(
                    "no finding's reason contains {t:?} (have {reasons:?})"
                ));
            }
        }
        if let Some(f) = &c.no_finding {
            let ids: Vec<&str> = rec
                .segments
                .iter()
                .flat_map(|s| s.findings.iter().map(|f| f.id.as_str()))
                .collect();
            if ids.contains(&f.as_str()) {
                problems.push(format!("finding {f} present (have {ids:?})"));
            }
        }
        if let Some(s) = &c.suggest {
            let got = rec.suggested_rule.as_ref().map(|r| r.pattern.clone());
            let want: Option<Vec<String>> = match s {
                toml::Value::Boolean(false) => None,
                toml::Value::Array(a) => Some(
                    a.iter()
                        .map(|x| x.as_str().expect("suggest entries are strings").to_string())
                        .collect(),
                ),
                other => panic!("case {i}: bad suggest {other:?}"),
            };
            if got != want {
                problems.push(format!("suggestion {got:?} != expected {want:?}"));
            }
        }
        if rec.decision == Decision::Allow && !rec.opaque.is_empty() {
            problems.push("allowed although opaque".into());
        }
        if !problems.is_empty() {
            let text = rec.render_text();
            let text = if text.len() > 3000 {
                format!(
                    "{}…",
                    &text[..text
                        .char_indices()
                        .nth(3000)
                        .map(|x| x.0)
                        .unwrap_or(text.len())]
                )
            } else {
                text
            };
            failures.push(format!(
                "case {i}: {label}\n  {}\n{}",
                problems.join("\n  "),
                text
            ));
        }
    }
    if !failures.is_empty() {
        panic!(
            "{} of {} cases failed:\n\n{}",
            failures.len(),
            file.case.len(),
            failures.join("\n")
        );
    }
}
