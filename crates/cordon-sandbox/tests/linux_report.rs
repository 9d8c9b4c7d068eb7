//! R-S5 / R-T5 (issue 7 items 10, 11, 13): what the helper reports as applied is what it
//! did — on every rung the report (read from the helper's `--report-fd`, which the
//! command never holds) is compared with what the command observes inside
//! (`/proc/self/ns/*`, `/proc/self/status`, mountinfo, a write outside); rung 1 falls back
//! (or refuses with the reason) when the identity mapping is refused; the payload travels
//! in a descriptor, so a large environment works.
#![cfg(target_os = "linux")]

mod support;
use cordon_policy::Access;
use cordon_sandbox::linux::{spawn_reported, AppliedReport, HelperOutcome, Rung};
use std::process::{Command, Output, Stdio};
use support::*;

/// Runs `script` in `s` through `prefix` (e.g. `setpriv …`) and returns the output and the
/// helper's report (`None` when it says nothing ran).
fn run_reported(s: &Sandbox, prefix: &[&str], script: &str) -> (Output, Option<AppliedReport>) {
    let (o, r) = run_outcome(s, prefix, script);
    match r {
        Some(HelperOutcome::Applied(a)) => (o, Some(a)),
        _ => (o, None),
    }
}

/// [`run_reported`] with the raw outcome.
fn run_outcome(s: &Sandbox, prefix: &[&str], script: &str) -> (Output, Option<HelperOutcome>) {
    let mut args = vec!["__sandbox-helper".to_string()];
    args.push("--permission-profile".into());
    args.push(s.payload());
    args.extend(["--", "sh", "-c", script].map(String::from));
    spawn_reported(
        args,
        &[],
        |args| {
            let mut c = if prefix.is_empty() {
                Command::new(helper_bin())
            } else {
                let mut c = Command::new(prefix[0]);
                c.args(&prefix[1..]).arg(helper_bin());
                c
            };
            c.args(args)
                .current_dir(&s.ws)
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped());
            for (k, v) in &s.helper_env {
                c.env(k, v);
            }
            c
        },
        |child| child.wait_with_output(),
    )
    .expect("helper runs")
}

/// What the command sees of its own confinement.
const OBSERVE: &str = r#"
echo "userns=$(readlink /proc/self/ns/user)"
echo "netns=$(readlink /proc/self/ns/net)"
grep -E '^(NoNewPrivs|Seccomp|CapEff):' /proc/self/status | tr -d '\t ' | sed 's/:/=/'
awk '$5 == "/tmp" { for (i = 7; i <= NF; i++) if ($i == "-") { print "tmpfs_tmp=" $(i+1); break } }' /proc/self/mountinfo | tail -1
if echo x > "$OUTSIDE/probe" 2>/dev/null; then echo outside=writable; else echo outside=blocked; fi
if grep -q '/cordon-' /proc/self/cgroup; then echo cgroup=own; else echo cgroup=none; fi
echo "nofile=$(ulimit -n)"
"#;

fn observe(s: &Sandbox, outside: &std::path::Path) -> (Output, Option<AppliedReport>) {
    run_reported(s, &[], &format!("OUTSIDE={}\n{OBSERVE}", q(outside)))
}

fn field<'a>(out: &'a str, k: &str) -> &'a str {
    out.lines()
        .find_map(|l| l.strip_prefix(&format!("{k}=")))
        .unwrap_or("")
}

fn host_ns(n: &str) -> String {
    std::fs::read_link(format!("/proc/self/ns/{n}"))
        .unwrap()
        .display()
        .to_string()
}

/// Asserts that every layer the report names is observable inside, and that every
/// observable layer is named.
#[track_caller]
fn assert_report_matches(o: &Output, r: &AppliedReport) {
    let out = stdout(o);
    let has = |w: &str| r.applied().iter().any(|a| a.contains(w));
    let own_userns = field(&out, "userns") != host_ns("user");
    assert_eq!(has("user+mount+pid"), own_userns, "userns: {out}\n{r:?}");
    assert_eq!(r.rung == Rung::Namespaces, own_userns, "{out}\n{r:?}");
    let own_netns = field(&out, "netns") != host_ns("net");
    assert_eq!(has("+net namespaces"), own_netns, "netns: {out}\n{r:?}");
    assert_eq!(
        has("private /tmp"),
        field(&out, "tmpfs_tmp") == "tmpfs",
        "{out}\n{r:?}"
    );
    assert_eq!(
        has("no_new_privs"),
        field(&out, "NoNewPrivs") == "1",
        "{out}\n{r:?}"
    );
    assert_eq!(
        has("seccomp filter"),
        field(&out, "Seccomp") == "2",
        "{out}\n{r:?}"
    );
    assert_eq!(
        has("capabilities dropped"),
        field(&out, "CapEff") == "0000000000000000",
        "{out}\n{r:?}"
    );
    assert_eq!(
        has("landlock") || has("mounts:"),
        field(&out, "outside") == "blocked",
        "{out}\n{r:?}"
    );
    assert!(has("environment replaced"), "{r:?}");
    // R-H5: the limits line says how each limit is enforced; a cgroup named there is the
    // one the command is in, and the open-files rlimit is the one it has.
    let limits = r
        .applied()
        .into_iter()
        .find(|a| a.starts_with("limits: "))
        .unwrap_or_else(|| panic!("no limits layer: {r:?}"));
    assert_eq!(
        limits.contains("pids 4096: cgroup"),
        field(&out, "cgroup") == "own",
        "{out}\n{limits}"
    );
    assert!(
        limits.contains(&format!(
            "open files {}: RLIMIT_NOFILE",
            field(&out, "nofile")
        )),
        "{out}\n{limits}"
    );
}

fn rung_two_profile() -> Sandbox {
    Sandbox::new().filesystem(
        Access::Read,
        vec![
            entry(":workspace", Access::Write),
            entry(":tmp", Access::Write),
        ],
        false,
    )
}

#[test]
fn rung_one_report_matches_what_is_observable() {
    if !require_full() {
        return;
    }
    let outside = outside_dir();
    let s = Sandbox::new();
    let (o, r) = observe(&s, outside.path());
    assert_ok(&o);
    let r = r.expect("rung 1 reports");
    assert_eq!(r.rung, Rung::Namespaces);
    assert!(r.fell_back.is_none());
    assert_report_matches(&o, &r);
}

#[test]
fn rung_two_report_matches_what_is_observable() {
    if !require(&[Need::Landlock(6), Need::Seccomp]) {
        return;
    }
    let outside = outside_dir();
    let mut s = rung_two_profile();
    s.disabled_layers = vec!["userns".into()];
    let (o, r) = observe(&s, outside.path());
    assert_ok(&o);
    let r = r.expect("rung 2 reports");
    assert_eq!(r.rung, Rung::LandlockOnly);
    assert!(
        !r.applied()
            .iter()
            .any(|a| a.contains("user+mount") || a.contains("private /tmp")),
        "rung 2 must not claim namespaces or a private /tmp: {r:?}"
    );
    // The typed layers say the same.
    use cordon_sandbox::linux::Layer;
    assert!(r.layers.contains(&Layer::Supervisor), "{r:?}");
    assert!(
        !r.layers
            .iter()
            .any(|l| matches!(l, Layer::Namespaces { .. } | Layer::Mounts { .. })),
        "{r:?}"
    );
    assert_report_matches(&o, &r);
    // Without seccomp: nothing runs, whatever the network (off needs the socket filter,
    // on needs the unix-socket guard, R-N2), and nothing is claimed.
    let mut s = rung_two_profile().network(cordon_policy::NetworkPolicy::Enabled);
    s.disabled_layers = vec!["userns".into(), "seccomp".into()];
    let (o, r) = run_outcome(&s, &[], "echo ran");
    assert_eq!(o.status.code(), Some(125), "{}", stderr(&o));
    assert!(!stdout(&o).contains("ran"));
    match r {
        Some(HelperOutcome::NotRun { reason }) => {
            assert!(reason.contains("unix-socket guard"), "{reason}")
        }
        other => panic!("expected not_run, got {other:?}"),
    }
}

#[test]
fn rung_one_without_landlock_reports_so() {
    if !require_full() {
        return;
    }
    let outside = outside_dir();
    // (Without seccomp too, nothing would run: no unix-socket guard, R-N2.)
    let mut s = Sandbox::new().network(cordon_policy::NetworkPolicy::Enabled);
    s.disabled_layers = vec!["landlock".into()];
    let (o, r) = observe(&s, outside.path());
    assert_ok(&o);
    let r = r.expect("rung 1 reports");
    assert!(!r.applied().iter().any(|a| a.contains("landlock")), "{r:?}");
    assert_report_matches(&o, &r);
}

/// Nothing applied, nothing reported: a refusal leaves the report empty, and a command
/// cannot write a report of its own into the channel.
#[test]
fn refusal_reports_nothing_and_the_command_cannot_write_the_channel() {
    let mut s = Sandbox::new();
    s.disabled_layers = vec!["all".into()];
    let (o, r) = run_outcome(&s, &[], "echo ran");
    assert_eq!(o.status.code(), Some(125), "{}", stderr(&o));
    match r {
        Some(HelperOutcome::NotRun { reason }) => {
            assert!(reason.starts_with("refusing to run unconfined"), "{reason}");
            assert!(stderr(&o).contains(&reason), "{}", stderr(&o));
        }
        other => panic!("expected not_run, got {other:?}"),
    }
    if !require_full() {
        return;
    }
    // The command tries every descriptor above 2: none is the report pipe.
    let s = Sandbox::new();
    let forged = r#"{"rung":"namespaces","applied":["forged"],"notes":[]}"#;
    let (o, r) = run_reported(
        &s,
        &[],
        &format!("for fd in 3 4 5 6 7 8 9; do (echo '{forged}' >&$fd) 2>/dev/null && echo wrote-$fd; done; true"),
    );
    assert_ok(&o);
    assert!(!stdout(&o).contains("wrote-"), "{}", stdout(&o));
    let r = r.expect("report");
    assert!(!r.applied().iter().any(|a| a == "forged"), "{r:?}");
    // Rung 2 (the helper shares the pid namespace): no pipe of another process, the
    // helper's report pipe included, can be reached through /proc/<pid>/fd.
    if !require(&[Need::Landlock(6), Need::Seccomp]) {
        return;
    }
    let mut s = rung_two_profile();
    s.disabled_layers = vec!["userns".into()];
    let scan = format!(
        "for p in /proc/[0-9]*; do [ \"$p\" = /proc/$$ ] && continue; for fd in $p/fd/*; do \
         (echo '{forged}' > $fd) 2>/dev/null && echo \"wrote $fd\"; done; done; true"
    );
    let (o, r) = run_reported(&s, &[], &scan);
    assert_ok(&o);
    assert!(!stdout(&o).contains("wrote"), "{}", stdout(&o));
    let r = r.expect("rung 2 report");
    assert_eq!(r.rung, Rung::LandlockOnly);
    assert!(!r.applied().iter().any(|a| a == "forged"), "{r:?}");
}

/// Issue 7 item 10: a root without CAP_SETFCAP cannot map uid 0 into a user namespace
/// (EPERM on uid_map). That is "user namespaces unavailable": a profile that rung 2 can
/// serve runs there (and the report says why), one that needs mounts is refused naming
/// uid_map — never a bare setup failure.
#[test]
fn uid_map_eperm_falls_back_or_refuses_with_the_reason() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("SKIPPED: needs root (uid 0 mapping needs CAP_SETFCAP)");
        return;
    }
    if !require(&[
        Need::Userns,
        Need::Landlock(6),
        Need::Seccomp,
        Need::Tool("setpriv"),
    ]) {
        return;
    }
    let no_setfcap = ["setpriv", "--bounding-set=-setfcap"];
    let outside = outside_dir();
    let s = rung_two_profile();
    let (o, r) = run_reported(
        &s,
        &no_setfcap,
        &format!("OUTSIDE={}\n{OBSERVE}", q(outside.path())),
    );
    assert_ok(&o);
    let r = r.expect("fell back to rung 2 and reported");
    assert_eq!(r.rung, Rung::LandlockOnly, "{r:?}");
    assert!(
        r.fell_back
            .as_deref()
            .is_some_and(|w| w.contains("uid_map")),
        "{r:?}"
    );
    assert_report_matches(&o, &r);
    // A profile with carve-outs needs the mount namespace: refused, naming uid_map.
    let s = Sandbox::new();
    let (o, r) = run_outcome(&s, &no_setfcap, "echo ran > marker");
    assert_eq!(o.status.code(), Some(125), "{}", stderr(&o));
    assert!(
        matches!(&r, Some(HelperOutcome::NotRun { reason }) if reason.contains("uid_map")),
        "{r:?}"
    );
    let err = stderr(&o);
    assert!(
        err.contains("uid_map") && err.contains("refusing to run unconfined"),
        "{err}"
    );
    assert!(!s.ws.join("marker").exists());
}

/// The report says which signal ended the command, on both rungs (nu7: the helper exits
/// 128 + N either way, and a harness read every sandboxed SIGSEGV as `exit 139`); a
/// command that exits 143 itself has no signal (twin).
#[test]
fn the_signal_that_ended_the_command_is_reported_on_both_rungs() {
    if !require_full() {
        return;
    }
    let mut two = rung_two_profile();
    two.disabled_layers = vec!["userns".into()];
    for (s, rung) in [
        (Sandbox::new(), Rung::Namespaces),
        (two, Rung::LandlockOnly),
    ] {
        let (o, r) = run_reported(&s, &[], "kill -SEGV $$");
        let r = r.expect("reports");
        assert_eq!(r.rung, rung);
        assert_eq!(o.status.code(), Some(139), "{}", stderr(&o));
        assert_eq!(r.signal, Some(libc::SIGSEGV), "{rung:?}");
        let (o, r) = run_reported(&s, &[], "exit 143");
        assert_eq!(o.status.code(), Some(143));
        assert_eq!(r.expect("reports").signal, None, "{rung:?}");
    }
}
