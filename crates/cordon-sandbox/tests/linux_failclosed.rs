//! R-S4 / R-T3 / R-L5: the helper never runs a command it cannot confine as asked — bad
//! payloads and unmet guarantees exit 125 with a message and nothing runs; a lower rung
//! runs only when it still gives every guarantee.
#![cfg(target_os = "linux")]

mod support;
use cordon_policy::Access;
use std::process::Command;
use std::time::Duration;
use support::*;

fn run_with_payload(s: &Sandbox, payload: &str) -> std::process::Output {
    Command::new(helper_bin())
        .args([
            "__sandbox-helper",
            "--permission-profile",
            payload,
            "--",
            "sh",
            "-c",
        ])
        .arg("echo ran > marker")
        .current_dir(&s.ws)
        .output()
        .unwrap()
}

#[test]
fn garbage_or_foreign_version_payload_runs_nothing() {
    let s = Sandbox::new();
    for bad in ["not-base64!!", "e30", ""] {
        let o = run_with_payload(&s, bad);
        assert_eq!(o.status.code(), Some(125), "{bad}");
        assert!(
            stderr(&o).starts_with("cordon: malformed sandbox payload"),
            "{}",
            stderr(&o)
        );
    }
    // A payload from another cordon version.
    let mut v: serde_json::Value = serde_json::from_slice(&unb64(&s.payload())).unwrap();
    v["version"] = serde_json::json!(999);
    let other = b64(v.to_string().as_bytes());
    let o = run_with_payload(&s, &other);
    assert_eq!(o.status.code(), Some(125));
    assert!(stderr(&o).contains("version 999"), "{}", stderr(&o));
    assert!(!s.ws.join("marker").exists());
    // Usage errors too.
    let o = Command::new(helper_bin())
        .args(["__sandbox-helper", "--", "true"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(125));
    assert!(stderr(&o).contains("missing --permission-profile"));
    // Twin: the genuine payload runs.
    let o = run_with_payload(&s, &s.payload());
    if require_full() {
        assert_ok(&o);
        assert!(s.ws.join("marker").exists());
    }
}

#[test]
fn without_user_namespaces_carve_outs_are_refused_naming_the_guarantee() {
    if !require(&[Need::Landlock(6), Need::Seccomp]) {
        return;
    }
    let s = Sandbox::new().helper_env("CORDON_DISABLE_LAYERS", "userns");
    write(&s.home.join(".ssh/id_rsa"), "SECRET\n");
    let o = s.sh("echo ran > marker; cat ~/.ssh/id_rsa");
    assert_eq!(o.status.code(), Some(125));
    let err = stderr(&o);
    assert!(
        err.contains("refusing to run unconfined: deny-read of")
            && err.contains(".ssh needs a mount namespace"),
        "{err}"
    );
    assert!(
        err.contains("user namespaces are unavailable (disabled by CORDON_DISABLE_LAYERS)"),
        "{err}"
    );
    assert!(!s.ws.join("marker").exists());
    // The same through the payload's own list; protected paths are named when no
    // credential store exists.
    let mut s2 = Sandbox::new();
    s2.disabled_layers = vec!["userns".into()];
    let o = s2.sh("echo ran > marker");
    assert_eq!(o.status.code(), Some(125));
    // (As root, /etc/shadow is readable and so a carve-out of its own, named first.)
    let err = stderr(&o);
    assert!(
        err.contains("protected path") || err.contains("deny-read of /etc/shadow"),
        "{err}"
    );
    assert!(!s2.ws.join("marker").exists());
}

#[test]
fn without_user_namespaces_a_plain_profile_runs_on_landlock_and_seccomp() {
    if !require(&[Need::Landlock(6), Need::Seccomp]) {
        return;
    }
    let out = outside_dir();
    let target = out.path().join("t.txt");
    write(&target, "orig\n");
    let s = Sandbox::new()
        .filesystem(
            Access::Read,
            vec![
                entry(":workspace", Access::Write),
                entry(":tmp", Access::Write),
            ],
            false,
        )
        .helper_env("CORDON_DISABLE_LAYERS", "userns");
    let s = s.report();
    let mut victim = Command::new("sleep").arg("100").spawn().unwrap();
    let o = s.sh(&format!(
        "echo ok > w.txt; echo pwn > {t}; kill {v} && echo KILLED; \
         python3 -c 'import socket; socket.socket()' 2>/dev/null && echo SOCKET; \
         (sleep 1; echo late > marker) >/dev/null 2>&1 & \
         grep -E '^(NoNewPrivs|Seccomp):' /proc/self/status",
        t = q(&target),
        v = victim.id()
    ));
    assert_ok(&o);
    let err = stderr(&o);
    assert!(err.contains("cordon: sandbox: rung 2:"), "{err}");
    assert!(err.contains("fully enforced"), "{err}");
    assert_eq!(std::fs::read_to_string(s.ws.join("w.txt")).unwrap(), "ok\n");
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "orig\n");
    assert!(!stdout(&o).contains("KILLED"));
    assert!(!stdout(&o).contains("SOCKET"));
    assert!(stdout(&o).contains("NoNewPrivs:\t1"));
    assert!(stdout(&o).contains("Seccomp:\t2"));
    assert!(
        victim.try_wait().unwrap().is_none(),
        "host process killed from rung 2"
    );
    victim.kill().unwrap();
    victim.wait().unwrap();
    // The subreaper killed the background job.
    std::thread::sleep(Duration::from_millis(1500));
    assert!(
        !s.ws.join("marker").exists(),
        "a background process outlived rung 2"
    );
}

#[test]
fn rung_one_report_names_what_the_kernel_enforced() {
    if !require_full() {
        return;
    }
    let s = Sandbox::new().report();
    let o = s.run(&["true"]);
    assert_ok(&o);
    let err = stderr(&o);
    assert!(
        err.contains("cordon: sandbox: rung 1: user+mount+pid+ipc+net namespaces"),
        "{err}"
    );
    assert!(err.contains("landlock ABI"), "{err}");
    assert!(err.contains("enforced"), "{err}");
    assert!(err.contains("seccomp filter"), "{err}");
    assert!(err.contains("capabilities dropped"), "{err}");
}

/// Item 4: a layer name the helper does not know — in `CORDON_DISABLE_LAYERS` or in the
/// payload's list — is refused (125, the valid names listed), never silently ignored; the
/// command does not run. Twin: the known names run.
#[test]
fn unknown_layer_names_are_refused_not_ignored() {
    for list in ["bogus", "userns,landlok", " Seccomp , x"] {
        let s = Sandbox::new().helper_env("CORDON_DISABLE_LAYERS", list);
        let o = s.sh("echo ran > marker");
        assert_eq!(o.status.code(), Some(125), "{list}: {}", stderr(&o));
        let err = stderr(&o);
        assert!(
            err.starts_with("cordon: refusing to run unconfined: "),
            "{err}"
        );
        assert_eq!(
            err.matches("refusing to run unconfined").count(),
            1,
            "{err}"
        );
        assert!(
            err.contains("userns, landlock, seccomp, denial-records, all"),
            "{err}"
        );
        assert!(!s.ws.join("marker").exists(), "{list}: the command ran");
    }
    let mut s = Sandbox::new();
    s.disabled_layers = vec!["landlock".into(), "sec-comp".into()];
    let o = s.sh("echo ran > marker");
    assert_eq!(o.status.code(), Some(125), "{}", stderr(&o));
    assert!(stderr(&o).contains("`sec-comp`"), "{}", stderr(&o));
    assert!(!s.ws.join("marker").exists());
    // Twin: known names (any case, spaces, empty items) are accepted.
    if require_full() {
        let s = Sandbox::new().helper_env("CORDON_DISABLE_LAYERS", " Landlock ,,");
        let o = s.sh("echo ran > marker");
        assert_ok(&o);
        assert!(s.ws.join("marker").exists());
    }
}
