//! Rule loading (R-A3): format, load-time example checks, error messages, layers.

use cordon_execpolicy::{Decision, EvalContext, LoadError, Policy, SandboxMode};

fn argv(s: &[&str]) -> Vec<String> {
    s.iter().map(|x| x.to_string()).collect()
}

#[test]
fn sample_rules_load_with_sources_and_lines() {
    let src = include_str!("fixtures/rules.toml");
    let p = Policy::from_toml_str(src, "fixtures/rules.toml").unwrap();
    assert_eq!(p.rules().len(), 11);
    let r0 = &p.rules()[0];
    assert_eq!(r0.source.label, "fixtures/rules.toml");
    assert_eq!(r0.source.index, 0);
    let expected_line = src
        .lines()
        .position(|l| l.trim() == "[[rules]]")
        .map(|i| i + 1);
    assert_eq!(r0.source.line, expected_line);
    assert_eq!(
        r0.pattern.to_string(),
        r#"["git", ["status", "diff", "log"]]"#
    );
    assert_eq!(r0.justification.as_deref(), Some("read-only git"));
    let make = p
        .rules()
        .iter()
        .find(|r| r.pattern.to_string() == r#"["make", "test"]"#)
        .unwrap();
    assert_eq!(make.sandbox, SandboxMode::Bypass);
}

#[test]
fn failing_example_names_rule_and_file() {
    let src = r#"
[[rules]]
pattern = ["git", "status"]
decision = "allow"

[[rules]]
pattern = ["cargo", "test"]
decision = "allow"
examples = ["cargo test", "cargo build"]
"#;
    let err = Policy::from_toml_str(src, "/home/u/.config/cordon/config.toml").unwrap_err();
    match &err {
        LoadError::ExampleDoesNotMatch { at, example } => {
            assert_eq!(at.index, 1);
            assert_eq!(at.source_label, "/home/u/.config/cordon/config.toml");
            // The `examples` key's line, not the `[[rules]]` header's.
            assert_eq!(at.line, Some(9));
            assert_eq!(example, "cargo build");
        }
        other => panic!("unexpected error {other:?}"),
    }
    let msg = err.to_string();
    assert!(
        msg.contains("/home/u/.config/cordon/config.toml:9"),
        "{msg}"
    );
    // The second rule: counted from 1.
    assert!(msg.contains("rule #2"), "{msg}");
    assert!(msg.contains(r#"["cargo", "test"]"#), "{msg}");
    assert!(msg.contains("cargo build"), "{msg}");
}

#[test]
fn matching_counterexample_is_an_error() {
    let src = r#"
[[rules]]
pattern = ["git"]
decision = "allow"
counterexamples = ["git push --force"]
"#;
    let err = Policy::from_toml_str(src, "project.toml").unwrap_err();
    assert!(
        matches!(err, LoadError::CounterexampleMatches { .. }),
        "{err:?}"
    );
    let msg = err.to_string();
    assert!(msg.contains("project.toml:5: rule #1"), "{msg}");
    assert!(msg.contains("git push --force"), "{msg}");
}

#[test]
fn examples_are_parsed_like_commands() {
    // A script example is parsed: the rule matches a segment inside `bash -lc`.
    let src = r#"
[[rules]]
pattern = ["cargo", "test"]
decision = "allow"
examples = ["bash -lc 'cd x && cargo test'", ["cargo", "test", "-q"]]
counterexamples = ["echo cargo test", "'cargo' build"]
"#;
    Policy::from_toml_str(src, "x.toml").unwrap();
}

#[test]
fn unknown_keys_and_bad_values_are_errors() {
    let cases = [
        (
            "pattern = [\"ls\"]\ndecision = \"allow\"\njustifcation = \"typo\"",
            "unknown key `justifcation`",
        ),
        ("pattern = [\"ls\"]\ndecision = \"maybe\"", "`decision`"),
        ("pattern = [\"ls\"]", "missing `decision`"),
        ("decision = \"allow\"", "missing `pattern`"),
        ("pattern = []\ndecision = \"allow\"", "must not be empty"),
        ("pattern = [1]\ndecision = \"allow\"", "pattern[0]"),
        ("pattern = [\"ls\", []]\ndecision = \"allow\"", "pattern[1]"),
        (
            "pattern = [\"ls\"]\ndecision = \"ask\"\nsandbox = \"bypass\"",
            "bypass",
        ),
        (
            "pattern = [\"ls\"]\ndecision = \"allow\"\nsandbox = \"off\"",
            "`sandbox`",
        ),
        (
            "pattern = [\"ls\"]\ndecision = \"allow\"\nexamples = \"ls\"",
            "`examples`",
        ),
    ];
    for (body, needle) in cases {
        let src = format!("[[rules]]\n{body}\n");
        let err = Policy::from_toml_str(&src, "bad.toml").unwrap_err();
        assert!(
            matches!(err, LoadError::InvalidRule { .. }),
            "{body}: {err:?}"
        );
        let msg = err.to_string();
        assert!(msg.contains(needle), "{body}: {msg}");
        assert!(
            msg.starts_with("bad.toml:") && msg.contains(": rule #1 "),
            "{body}: {msg}"
        );
    }
}

#[test]
fn invalid_toml_names_the_source() {
    let err = Policy::from_toml_str("[[rules]\npattern = ", "broken.toml").unwrap_err();
    assert!(matches!(err, LoadError::Toml { .. }));
    assert!(
        err.to_string()
            .starts_with("broken.toml: invalid rules TOML"),
        "{err}"
    );
    let err = Policy::from_toml_str("rules = 3", "t.toml").unwrap_err();
    assert!(matches!(err, LoadError::Toml { .. }), "{err:?}");
}

#[test]
fn from_toml_value_accepts_table_or_array() {
    let v: toml::Value = toml::from_str(
        r#"
[[rules]]
pattern = ["ls"]
decision = "forbid"
examples = ["ls -la"]
"#,
    )
    .unwrap();
    let p = Policy::from_toml_value(&v, "profile:work").unwrap();
    assert_eq!(p.rules().len(), 1);
    assert_eq!(p.rules()[0].source.line, None);
    let arr = v.get("rules").unwrap().clone();
    let q = Policy::from_toml_value(&arr, "profile:work").unwrap();
    assert_eq!(p, q);
    let bad: toml::Value =
        toml::from_str("[[rules]]\npattern = [\"ls\"]\ndecision = \"allow\"\nexamples = [\"pwd\"]")
            .unwrap();
    assert!(matches!(
        Policy::from_toml_value(&bad, "v").unwrap_err(),
        LoadError::ExampleDoesNotMatch { .. }
    ));
}

#[test]
fn layers_merge_and_strictest_wins() {
    let user = Policy::from_toml_str(
        "[[rules]]\npattern = [\"cargo\"]\ndecision = \"allow\"\n",
        "user.toml",
    )
    .unwrap();
    let project = Policy::from_toml_str(
        "[[rules]]\npattern = [\"cargo\", \"publish\"]\ndecision = \"forbid\"\n[[rules]]\npattern = [\"make\"]\ndecision = \"allow\"\n",
        "project.toml",
    )
    .unwrap();
    let merged = Policy::merge_layers([user.clone(), project.clone()]);
    assert_eq!(merged.rules().len(), 3);
    let ctx = EvalContext::default();
    assert_eq!(
        merged.evaluate(&argv(&["cargo", "build"]), &ctx).decision,
        Decision::Allow
    );
    let rec = merged.evaluate(&argv(&["cargo", "publish"]), &ctx);
    assert_eq!(rec.decision, Decision::Forbid);
    assert_eq!(rec.segments[0].matched_rules.len(), 2);
    // An untrusted project layer may only narrow (R-P6).
    let narrowed = Policy::merge_layers([user, project.narrowing_only()]);
    assert_eq!(narrowed.rules().len(), 2);
    assert_eq!(
        narrowed.evaluate(&argv(&["make"]), &ctx).decision,
        Decision::Ask
    );
}

#[test]
fn alternatives_and_path_patterns() {
    let p = Policy::from_toml_str(
        r#"
[[rules]]
pattern = [["gradle", "./gradlew"], ["test", "check"]]
decision = "allow"
examples = ["gradle test", "./gradlew check"]
counterexamples = ["gradle build", "bin/gradlew test"]

[[rules]]
pattern = ["/opt/tools/bin/lint"]
decision = "allow"
examples = [["/opt/tools/bin/lint", "."]]
counterexamples = ["lint ."]
"#,
        "alt.toml",
    )
    .unwrap();
    let ctx = EvalContext::default();
    assert_eq!(
        p.evaluate(&argv(&["/opt/tools/bin/lint", "x"]), &ctx)
            .decision,
        Decision::Allow
    );
    assert_eq!(
        p.evaluate(&argv(&["lint", "x"]), &ctx).decision,
        Decision::Ask
    );
}

#[test]
fn trusted_program_paths_are_configurable() {
    let p = Policy::from_toml_str(
        "[[rules]]\npattern = [\"cargo\", \"test\"]\ndecision = \"allow\"\n",
        "t.toml",
    )
    .unwrap();
    let a = argv(&["/home/u/.cargo/bin/cargo", "test"]);
    let mut ctx = EvalContext::default();
    assert_eq!(p.evaluate(&a, &ctx).decision, Decision::Ask);
    ctx.parse
        .trusted_program_paths
        .insert("cargo".into(), vec!["/home/u/.cargo/bin".into()]);
    assert_eq!(p.evaluate(&a, &ctx).decision, Decision::Allow);
    // Trust is per program: another program in that directory is still untrusted.
    let b = argv(&["/home/u/.cargo/bin/ls"]);
    assert_eq!(p.evaluate(&b, &ctx).decision, Decision::Ask);
}

#[test]
fn forbid_rules_see_through_spellings() {
    let p = Policy::from_toml_str(
        "[[rules]]\npattern = [\"terraform\", \"destroy\"]\ndecision = \"forbid\"\n",
        "t.toml",
    )
    .unwrap();
    let ctx = EvalContext::default();
    for a in [
        argv(&["/tmp/terraform", "destroy"]),
        argv(&["./terraform", "destroy"]),
        argv(&["tеrraform", "destroy"]), // Cyrillic е
    ] {
        assert_eq!(p.evaluate(&a, &ctx).decision, Decision::Forbid, "{a:?}");
    }
}

#[test]
fn bypass_blocked_by_deny_read_is_explained() {
    let p = Policy::from_toml_str(
        "[[rules]]\npattern = [\"pytest\"]\ndecision = \"allow\"\nsandbox = \"bypass\"\n",
        "t.toml",
    )
    .unwrap();
    let ok = p.evaluate(&argv(&["pytest"]), &EvalContext::default());
    assert!(ok.sandbox.bypass);
    let blocked = p.evaluate(
        &argv(&["pytest"]),
        &EvalContext::default().with_deny_read(true),
    );
    assert_eq!(blocked.decision, Decision::Allow);
    assert!(!blocked.sandbox.bypass);
    assert!(
        blocked.sandbox.reason.contains("deny-read"),
        "{}",
        blocked.sandbox.reason
    );
}

#[test]
fn strict_rules_see_through_git_global_options() {
    let p = Policy::from_toml_str(
        r#"
[[rules]]
pattern = ["git", "push"]
decision = "forbid"
examples = ["git push", "git -C . push origin", "git --no-pager -c a=b push"]
counterexamples = ["git status", "git -C push status"]

[[rules]]
pattern = ["git", "status"]
decision = "allow"
examples = ["git status"]
counterexamples = ["git -c core.fsmonitor=evil status", "git -C /tmp/x status"]
"#,
        "git.toml",
    )
    .unwrap();
    let ctx = EvalContext::default();
    assert_eq!(
        p.evaluate(&argv(&["git", "-C", "..", "push"]), &ctx)
            .decision,
        Decision::Forbid
    );
    assert_eq!(
        p.evaluate(&argv(&["git", "-c", "x=y", "status"]), &ctx)
            .decision,
        Decision::Ask
    );
}

/// New user (stop 19): a `[[rule]]` typo (or any unknown top-level key) in a rules file is
/// an error naming it, not zero rules loaded (a `forbid` rule vanished without a word).
#[test]
fn unknown_top_level_keys_are_errors() {
    let src = "[[rule]]\npattern = [\"touch\"]\ndecision = \"forbid\"\n";
    let e = Policy::from_toml_str(src, "r4.toml").unwrap_err();
    let msg = e.to_string();
    assert!(msg.contains("rule") && msg.contains("r4.toml"), "{msg}");
    // An empty file is no rules (twin).
    assert!(Policy::from_toml_str("", "empty.toml")
        .unwrap()
        .rules()
        .is_empty());
}

/// New-user pass: `decison = "allow"` on line 3 was said at line 1 (the `[[rules]]`
/// header) as `rule #0`. An error about a key names that key's line, and rules are
/// counted from 1. Twin: an error about the rule as a whole (no key to blame) stays at
/// its header.
#[test]
fn a_keys_error_names_the_keys_line_and_rules_count_from_1() {
    let src = "[[rules]]\npattern = [\"ls\"]\ndecision = \"allow\"\n\n[[rules]]\n\
               pattern = [\"make\"]\n# a comment\ndecison = \"allow\"\n";
    let msg = Policy::from_toml_str(src, "r2.toml")
        .unwrap_err()
        .to_string();
    assert!(
        msg.starts_with("r2.toml:8: rule #2 [\"make\"]: unknown key `decison`"),
        "{msg}"
    );
    for (body, line) in [
        ("pattern = [\"ls\"]\n\ndecision = \"maybe\"", 4),
        ("pattern = [\"ls\"]\ndecision = \"allow\"\nexact = 1", 4),
        ("decision = \"allow\"\n\npattern = [1]", 4),
        (
            "pattern = [\"ls\"]\ndecision = \"allow\"\n\nexamples = [\"make\"]",
            5,
        ),
    ] {
        let src = format!("[[rules]]\n{body}\n");
        let msg = Policy::from_toml_str(&src, "r.toml")
            .unwrap_err()
            .to_string();
        assert!(
            msg.starts_with(&format!("r.toml:{line}: rule #1 ")),
            "{body}: {msg}"
        );
    }
    let msg = Policy::from_toml_str("\n[[rules]]\ndecision = \"allow\"\n", "r.toml")
        .unwrap_err()
        .to_string();
    assert!(msg.starts_with("r.toml:2: rule #1 "), "{msg}");
}

/// New-user pass 241: an allow rule for a command with a dangerous-command finding cannot
/// take effect, and says so (source, command, finding). Twin: an allow rule for a
/// command without one says nothing.
#[test]
fn an_allow_rule_a_finding_overrides_is_named() {
    let p = cordon_execpolicy::Policy::from_toml_str(
        r#"
[[rules]]
pattern = ["git", "status"]
decision = "allow"

[[rules]]
pattern = ["git", "reset", "--hard"]
decision = "allow"
"#,
        "rules.toml",
    )
    .unwrap();
    let moot = p.moot_allow_rules();
    assert_eq!(moot.len(), 1, "{moot:?}");
    assert!(
        moot[0]
            .starts_with("rules.toml:6 rule #2: this allow rule does not cover `git reset --hard`"),
        "{moot:?}"
    );
    assert!(moot[0].contains("no allow rule lifts it"), "{moot:?}");
}
