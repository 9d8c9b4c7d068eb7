//! Environment scrubbing latency on the launch path (R-L4): a typical 60-variable
//! developer environment, a few secrets among them. Nothing is compiled per run (no regex);
//! target well under 0.1 ms.

use cordon_policy::env::scrub_env;
use cordon_policy::EnvPolicy;
use criterion::{black_box, criterion_group, criterion_main, Criterion};

fn typical_env() -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = [
        ("PATH", "/home/u/.cargo/bin:/usr/local/bin:/usr/bin:/bin"),
        ("HOME", "/home/u"),
        ("LANG", "en_US.UTF-8"),
        ("TERM", "xterm-256color"),
        ("SHELL", "/bin/bash"),
        ("PWD", "/home/u/proj"),
        (
            "LS_COLORS",
            "rs=0:di=01;34:ln=01;36:mh=00:pi=40;33:so=01;35:do=01;35",
        ),
        ("SSH_AUTH_SOCK", "/run/user/1000/ssh-agent.sock"),
        ("GITHUB_TOKEN", "ghp_abcdefghijklmnopqrstuvwxyz0123456789"),
        (
            "AWS_SECRET_ACCESS_KEY",
            "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        ),
        ("DATABASE_URL", "postgres://u:pw@db/x"),
        ("TOKENIZERS_PARALLELISM", "false"),
        ("INVOCATION_ID", "0f5c8a5e3b2d4c1e9f7a6b5c4d3e2f1a"),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    for i in 0..47 {
        v.push((
            format!("SOME_TOOL_SETTING_{i}"),
            format!("value-{i}-of-a-setting"),
        ));
    }
    v
}

fn bench(c: &mut Criterion) {
    let env = typical_env();
    let policy = EnvPolicy::default();
    let r = scrub_env(&policy, env.clone());
    assert_eq!(r.dropped.len(), 4, "{:?}", r.dropped);
    c.bench_function("scrub_env/60 variables, default policy", |b| {
        b.iter(|| scrub_env(black_box(&policy), black_box(env.clone())))
    });
    let mut kept = EnvPolicy::default();
    kept.keep.push("GITHUB_TOKEN".into());
    c.bench_function("scrub_env/60 variables, one env.keep glob", |b| {
        b.iter(|| scrub_env(black_box(&kept), black_box(env.clone())))
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
