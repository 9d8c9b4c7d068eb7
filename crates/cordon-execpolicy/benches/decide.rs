//! Decision latency: one simple command, and a 5-segment `bash -lc` script (target ≤ 20 µs
//! including parsing).

use cordon_execpolicy::{EvalContext, Policy};
use criterion::{black_box, criterion_group, criterion_main, Criterion};

fn argv(s: &[&str]) -> Vec<String> {
    s.iter().map(|x| x.to_string()).collect()
}

fn bench(c: &mut Criterion) {
    let policy = Policy::from_toml_str(
        include_str!("../tests/fixtures/rules.toml"),
        "tests/fixtures/rules.toml",
    )
    .expect("rules load");
    let ctx = EvalContext::default();
    let one = argv(&["git", "status"]);
    let five = argv(&[
        "bash",
        "-lc",
        "cd crates && git status && cargo test -p foo 2>&1 | tee test.log && rm -rf target/tmp",
    ]);
    let r = policy.evaluate(&five, &ctx);
    assert_eq!(r.segments.len(), 5, "{}", r.render_text());
    c.bench_function("decide/1-segment argv", |b| {
        b.iter(|| policy.evaluate(black_box(&one), black_box(&ctx)))
    });
    c.bench_function("decide/5-segment bash -lc", |b| {
        b.iter(|| policy.evaluate(black_box(&five), black_box(&ctx)))
    });
    c.bench_function("decide/1-segment bash -lc", |b| {
        let a = argv(&["bash", "-lc", "git status"]);
        b.iter(|| policy.evaluate(black_box(&a), black_box(&ctx)))
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
