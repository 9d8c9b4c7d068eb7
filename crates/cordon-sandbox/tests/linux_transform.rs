//! R-T3 / R-S4 through [`SandboxManager::transform`]: the payload travels to the helper in
//! its environment (never in argv, which every local user can read in
//! `/proc/<pid>/cmdline`), refusals read `refusing to run unconfined: …` exactly once, and a
//! misspelt layer in `CORDON_DISABLE_LAYERS` is refused, never ignored.
#![cfg(target_os = "linux")]

mod support;
use cordon_sandbox::linux::{LinuxFeatures, PAYLOAD_ENV};
use cordon_sandbox::{CommandRequest, ExecRequest, SandboxManager, TransformError};
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use support::*;

/// A value only the command's environment holds (not a secret by name, so it is kept):
/// it must not appear in any process's argv.
const PRIVATE_VALUE: &str = "kept-value-5e0c1d9a";

fn request(s: &Sandbox, argv: &[&str]) -> CommandRequest {
    let mut r = CommandRequest::new(
        argv.iter().map(|a| a.to_string()).collect(),
        s.ws.clone(),
        s.profile.clone(),
    );
    r.env = s.env.clone();
    r.env.push(("BUILD_FLAVOR".into(), PRIVATE_VALUE.into()));
    // A stale copy in the caller's environment must not leak through either.
    r.env.push((PAYLOAD_ENV.into(), "stale".into()));
    r
}

fn manager() -> SandboxManager {
    SandboxManager::for_host().with_helper(PathBuf::from(helper_bin()))
}

fn spawn(exec: &ExecRequest) -> std::process::Child {
    exec.command()
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("helper starts")
}

/// Every process whose argv contains `needle`.
fn argv_holders(needle: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if !name.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        let Ok(raw) = std::fs::read(e.path().join("cmdline")) else {
            continue;
        };
        let cmd = String::from_utf8_lossy(&raw).replace('\0', " ");
        if cmd.contains(needle) {
            out.push((name, cmd));
        }
    }
    out
}

/// 64 characters of the payload as it would appear inline (base64) that only this run's
/// payload holds: the window over its workspace path. (The payload's first characters are
/// the same for every run of a profile, so tests running beside this one — other
/// sandboxes started with the payload in argv by the test support — would match them.)
fn unique_window(payload: &str, ws: &std::path::Path) -> String {
    let b = if payload.starts_with("eyJ") {
        payload.trim().to_string()
    } else {
        b64(payload.as_bytes())
    };
    let raw = unb64(&b);
    let needle = ws.to_str().unwrap().as_bytes();
    let off = raw
        .windows(needle.len())
        .position(|w| w == needle)
        .expect("the payload names the workspace");
    let start = (off / 3 + 1) * 4;
    b[start..(start + 64).min(b.len())].to_string()
}

/// L2: while a sandboxed command runs, the helper's argv holds neither the payload nor any
/// value of the command's environment; the command's environment does not hold the
/// payload variable; and the command works. Fails when the payload is passed inline.
#[test]
fn payload_is_not_in_the_helpers_argv() {
    if !require_full() {
        return;
    }
    let s = Sandbox::new();
    let script = "env > env.txt; echo ready; exec sleep 30";
    let exec = manager()
        .transform(&request(&s, &["sh", "-c", script]))
        .unwrap();
    let fd = exec.payload_fd.as_ref().expect("payload descriptor");
    use std::os::fd::AsRawFd;
    let fd_arg = format!("fd:{}", fd.as_raw_fd());
    assert_eq!(
        exec.args,
        vec![
            "__sandbox-helper".to_string(),
            "--permission-profile".into(),
            fd_arg.clone(),
            "--".into(),
            "sh".into(),
            "-c".into(),
            script.into(),
        ]
    );
    assert!(
        exec.env.iter().all(|(k, _)| k != PAYLOAD_ENV),
        "no payload variable (and the stale one is dropped)"
    );
    // The payload, read through the descriptor (the memfd is sealed and seekable).
    let payload = std::fs::read_to_string(format!("/proc/self/fd/{}", fd.as_raw_fd())).unwrap();
    assert!(payload.len() > 64);
    let mut child = spawn(&exec);
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    out.read_line(&mut line).unwrap();
    assert_eq!(line, "ready\n", "the command did not start");

    let cmdline = std::fs::read(format!("/proc/{}/cmdline", child.id())).unwrap();
    let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
    assert!(
        !cmdline.contains(&payload[..64]),
        "payload in argv: {cmdline}"
    );
    assert!(cmdline.contains(&fd_arg), "{cmdline}");
    // No process at all (helper, sandbox init, command) shows the payload or an
    // environment value in its argv.
    assert_eq!(argv_holders(PRIVATE_VALUE), vec![]);
    assert_eq!(argv_holders(&unique_window(&payload, &s.ws)), vec![]);

    // SAFETY: kill has no memory-safety preconditions; the pid is our child.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) };
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(143));
    let env = std::fs::read_to_string(s.ws.join("env.txt")).unwrap();
    assert!(
        env.lines()
            .any(|l| l == format!("BUILD_FLAVOR={PRIVATE_VALUE}")),
        "{env}"
    );
    assert!(!env.contains(PAYLOAD_ENV), "{env}");
}

/// The command never holds the payload descriptor (the helper reads and closes it).
#[test]
fn payload_descriptor_does_not_reach_the_command() {
    if !require_full() {
        return;
    }
    let s = Sandbox::new();
    let exec = manager()
        .transform(&request(
            &s,
            &["sh", "-c", "ls -l /proc/self/fd/ > fds.txt"],
        ))
        .unwrap();
    let o = spawn(&exec).wait_with_output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let fds = std::fs::read_to_string(s.ws.join("fds.txt")).unwrap();
    assert!(!fds.contains("memfd"), "{fds}");
}

/// The env form also works for a plain run to completion (exit code, stdout).
#[test]
fn env_payload_runs_the_command() {
    if !require_full() {
        return;
    }
    let s = Sandbox::new();
    let exec = manager()
        .transform(&request(&s, &["sh", "-c", "echo hi; exit 3"]))
        .unwrap();
    let o = spawn(&exec).wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    assert_eq!(stdout(&o), "hi\n");
}

/// A helper given `env:NAME` for an unset variable runs nothing.
#[test]
fn env_payload_missing_variable_runs_nothing() {
    let s = Sandbox::new();
    let o = Command::new(helper_bin())
        .args(["__sandbox-helper", "--permission-profile"])
        .arg(format!("env:{PAYLOAD_ENV}"))
        .args(["--", "sh", "-c", "echo ran > marker"])
        .current_dir(&s.ws)
        .env_remove(PAYLOAD_ENV)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(125));
    assert!(stderr(&o).contains(PAYLOAD_ENV), "{}", stderr(&o));
    assert!(!s.ws.join("marker").exists());
}

fn refusal_of(features: LinuxFeatures) -> String {
    let mut m = manager();
    m.features = features;
    let s = Sandbox::new();
    match m.transform(&request(&s, &["true"])) {
        Err(e @ TransformError::Refused { .. }) => e.to_string(),
        other => panic!("expected a refusal, got {other:?}"),
    }
}

/// Item 5: the refusal names what is missing with exactly one `refusing to run unconfined`.
#[test]
fn refusal_message_has_one_prefix() {
    let mut f = LinuxFeatures::full(7);
    f.disable(&["userns"]);
    let msg = refusal_of(f);
    assert_eq!(
        msg.matches("refusing to run unconfined").count(),
        1,
        "{msg}"
    );
    assert!(msg.starts_with("refusing to run unconfined: "), "{msg}");
    assert!(msg.contains("namespace"), "{msg}");
    // No sandbox here: running without one is the only other way, and it is offered.
    assert!(msg.contains("--allow-unconfined"), "{msg}");
}

/// Item 4: a misspelt layer name is refused (listing the valid names), never ignored — even
/// when everything else would run.
#[test]
fn unknown_disabled_layer_is_refused() {
    for list in [&["bogus"][..], &["userns", "landlok"][..]] {
        let mut f = LinuxFeatures::full(7);
        f.disable(list);
        let mut m = manager();
        m.features = f;
        let s = Sandbox::new();
        // A typo is a usage error: not even --allow-unconfined turns it into a run.
        let mut req = request(&s, &["true"]);
        req.allow_unconfined = true;
        let msg = match m.transform(&req) {
            Err(TransformError::Usage(msg)) => msg,
            other => panic!("expected a usage error, got {other:?}"),
        };
        let bad = list.last().unwrap();
        assert!(msg.contains(bad), "{msg}");
        for valid in ["userns", "landlock", "seccomp", "all"] {
            assert!(msg.contains(valid), "{valid} not listed: {msg}");
        }
    }
    // Twin: the known names alone plan fine.
    let mut f = LinuxFeatures::full(7);
    f.disable(&["landlock"]);
    let mut m = manager();
    m.features = f;
    let s = Sandbox::new();
    assert!(m.transform(&request(&s, &["true"])).is_ok());
}
