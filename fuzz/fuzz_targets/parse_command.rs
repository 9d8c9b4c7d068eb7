//! Fuzz the exec-policy parser and evaluator (R-A2): nothing may panic or overflow the stack,
//! and an allowed command is never opaque.
//!
//! Input: bytes, lossily decoded. The text is evaluated as a script, as `bash -lc TEXT`, and
//! as an argv split on NUL bytes.
#![no_main]

use cordon_execpolicy::{parse_command, parse_script, Decision, EvalContext, Policy};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let policy = Policy::empty();
    let ctx = EvalContext::default();

    let parsed = parse_script(&text);
    let _ = parsed.is_opaque();

    let argv: Vec<String> = text.split('\0').map(str::to_string).collect();
    let _ = parse_command(&argv);

    for rec in [
        policy.evaluate_script(&text, &ctx),
        policy.evaluate(
            &["bash".to_string(), "-lc".to_string(), text.to_string()],
            &ctx,
        ),
        policy.evaluate(&argv, &ctx),
    ] {
        if rec.decision == Decision::Allow {
            assert!(rec.opaque.is_empty(), "allowed an opaque command: {text:?}");
        }
        if rec.sandbox.bypass {
            assert_eq!(rec.decision, Decision::Allow);
        }
        let _ = rec.to_json();
        let _ = rec.render_text();
    }
});
