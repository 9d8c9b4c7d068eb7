//! The library API for harnesses (`cordon_session::harness`, R-X1) against the real
//! sandbox: the `cordon` binary is the helper, each command its own helper process.
//! Bounded: small outputs, timeouts of seconds.

use cordon_session::harness::{ExecParams, Harness, HarnessOptions, OUTPUT_BUFFER_BYTES};
use std::path::PathBuf;
use std::time::{Duration, Instant};

mod support;

const CORDON: &str = env!("CARGO_BIN_EXE_cordon");

struct Ws {
    root: tempfile::TempDir,
    dir: PathBuf,
}

/// A workspace under /var/tmp with HOME outside it (so a write to HOME is denied).
fn ws() -> Ws {
    let root = tempfile::Builder::new()
        .prefix("cordon-harness-")
        .tempdir_in("/var/tmp")
        .unwrap();
    let dir = root.path().join("proj");
    std::fs::create_dir_all(dir.join(".git")).unwrap();
    // A marker is a git dir with HEAD (an empty `.git` is cordon's placeholder).
    std::fs::write(dir.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
    Ws { root, dir }
}

fn harness(w: &Ws, idle: Duration) -> Harness {
    // HOME is read from the environment by the resolver: one value for the whole test
    // binary (the workspace's parent is outside every writable root either way).
    let mut o = HarnessOptions::new(w.dir.clone());
    o.helper = Some(PathBuf::from(CORDON));
    o.idle_timeout = idle;
    Harness::new(o).unwrap()
}

fn sandbox_ready() -> bool {
    support::sandbox_available()
}

/// Host processes whose argv is exactly `argv`.
fn count_procs(argv: &[&str]) -> usize {
    let want: Vec<u8> = argv
        .iter()
        .flat_map(|a| [a.as_bytes(), b"\0"].concat())
        .collect();
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .bytes()
                .all(|b| b.is_ascii_digit())
        })
        .filter(|e| std::fs::read(e.path().join("cmdline")).is_ok_and(|c| c == want))
        .count()
}

fn wait_gone(argv: &[&str], secs: u64) -> usize {
    let end = Instant::now() + Duration::from_secs(secs);
    while count_procs(argv) > 0 && Instant::now() < end {
        std::thread::sleep(Duration::from_millis(50));
    }
    count_procs(argv)
}

#[test]
fn one_shot_is_confined_classified_and_reports_what_was_applied() {
    if !sandbox_ready() {
        return;
    }
    let w = ws();
    let h = harness(&w, Duration::from_secs(60));
    // still works: a file in the workspace, git, python3
    let r = h
        .exec(ExecParams::script(
            "echo hi > in.txt && cat in.txt && git --version >/dev/null && python3 -c 'print(1+1)'",
        ))
        .unwrap();
    let o = r.outcome.as_ref().unwrap();
    assert_eq!(o.class.name(), "success", "{r:?}");
    assert_eq!(r.output.text, "hi\n2\n");
    assert!(!r.sandbox.as_ref().unwrap().applied.is_empty(), "{r:?}");
    assert!(r.session_id.is_none() && !r.running);
    // escape: a write outside the workspace is denied by the sandbox and classified
    let outside = w.root.path().join("outside.txt");
    let r = h
        .exec(ExecParams::argv(["touch", outside.to_str().unwrap()]))
        .unwrap();
    assert_eq!(
        r.outcome.as_ref().unwrap().class.name(),
        "sandbox-denied",
        "{r:?}"
    );
    assert!(!outside.exists());
    // nu16 N2: the refusal reported on stdout only (as test runners do) is classified as
    // the cause too; through the library both pipes are the output.
    let r = h
        .exec(ExecParams::script(format!(
            "touch {} 2>&1; exit 1",
            outside.display()
        )))
        .unwrap();
    let o = r.outcome.as_ref().unwrap();
    assert_eq!(o.class.name(), "sandbox-denied", "{r:?}");
    assert!(!outside.exists());
    // nu17 N3: the quoted line is labelled by what was read (both pipes), not "stderr:".
    let quoted: Vec<&str> = o
        .evidence
        .iter()
        .filter(|e| e.source == cordon_session::outcome::EvidenceSource::ProgramOutput)
        .map(|e| e.detail.as_str())
        .collect();
    assert!(!quoted.is_empty(), "{o:?}");
    assert!(
        quoted.iter().all(|d| d.starts_with("output: ")),
        "{quoted:?}"
    );
}

#[test]
fn output_is_capped_with_markers_and_read_incrementally() {
    if !sandbox_ready() {
        return;
    }
    let w = ws();
    let h = harness(&w, Duration::from_secs(60));
    // A running command's output is read a cap at a time.
    let mut p = ExecParams::script("head -c 5000 /dev/zero | tr '\\0' a; sleep 30")
        .yield_time(Duration::from_millis(1500));
    p.max_output_bytes = 1000;
    let r = h.exec(p).unwrap();
    assert_eq!(r.output.text.len(), 1000);
    assert!(
        r.output.truncated && r.output.remaining_bytes == 4000,
        "{:?}",
        r.output
    );
    let id = r
        .session_id
        .clone()
        .expect("kept for the rest of the output");
    let rest = h.read_output(&id, 100_000, Duration::ZERO).unwrap();
    assert_eq!(rest.output.text.len(), 4000);
    h.kill(&id).unwrap();
    assert!(
        h.read_output(&id, 10, Duration::ZERO).is_err(),
        "forgotten once ended and read"
    );
    // An ended command's output over the cap: its start and its end, the middle counted
    // (new-user pass nu24, F3).
    let mut p = ExecParams::script("head -c 5000 /dev/zero | tr '\\0' a; echo; echo END");
    p.max_output_bytes = 1000;
    let r = h.exec(p).unwrap();
    assert!(r.session_id.is_none(), "{:?}", r.output);
    assert!(
        r.output.text.trim_end().ends_with("END"),
        "{:?}",
        r.output.text
    );
    assert!(r.output.text.contains("bytes of output left out here"));
    assert!(r.output.omitted_bytes > 3000 && r.output.remaining_bytes == 0);
    // more than the buffer keeps, before any read: the start stays (new-user pass 152),
    // the bytes after it are dropped and counted with what the answer leaves out
    let n = OUTPUT_BUFFER_BYTES + 3000;
    let r = h
        .exec(ExecParams::script(format!(
            "head -c {n} /dev/zero | tr '\\0' b"
        )))
        .unwrap();
    assert!(
        r.output.text.starts_with("bbbb"),
        "{}",
        &r.output.text[..120]
    );
    assert!(r.output.text.contains("bytes of output left out here"));
    assert_eq!(r.output.dropped_bytes, 3000);
}

/// New-user pass nu22, P2: the agent's SIGINT (its ^C) reaches every process of the
/// command, as a terminal's does: a shell waiting for `sleep` no longer defers it and runs
/// on to its end.
#[test]
fn interrupt_reaches_the_whole_command() {
    if !sandbox_ready() {
        return;
    }
    let w = ws();
    let h = harness(&w, Duration::from_secs(60));
    let r = h
        .exec(
            ExecParams::script("echo begin; sleep 60; echo end")
                .yield_time(Duration::from_millis(500)),
        )
        .unwrap();
    let id = r.session_id.clone().unwrap();
    h.signal(&id, libc::SIGINT).unwrap();
    let t0 = Instant::now();
    let r = h.wait(&id, Duration::from_secs(20), 1000).unwrap();
    assert!(!r.running, "still running after SIGINT");
    assert!(t0.elapsed() < Duration::from_secs(15), "{:?}", t0.elapsed());
    assert!(!r.output.text.contains("end"), "{}", r.output.text);
    // A SIGKILL the caller sends is a cancellation too, as `kill` is (attack pass 186 F6:
    // it was reported as a failed command).
    let r = h
        .exec(ExecParams::script("sleep 60").yield_time(Duration::from_millis(300)))
        .unwrap();
    let id = r.session_id.clone().unwrap();
    h.signal(&id, libc::SIGKILL).unwrap();
    let r = h.wait(&id, Duration::from_secs(20), 1000).unwrap();
    assert!(!r.running, "still running after SIGKILL");
    assert_eq!(
        r.outcome.as_ref().unwrap().class.name(),
        "cancelled",
        "{r:?}"
    );
    // New-user pass 243 #1: an interrupt the command survives is not the reason a later
    // kill gives; the kill is.
    let r = h
        .exec(ExecParams::script("trap '' INT; sleep 60").yield_time(Duration::from_millis(300)))
        .unwrap();
    let id = r.session_id.clone().unwrap();
    h.signal(&id, libc::SIGINT).unwrap();
    let r = h.wait(&id, Duration::from_millis(500), 1000).unwrap();
    assert!(r.running, "the ignored SIGINT ended it: {r:?}");
    let k = h.kill(&id).unwrap();
    let o = k.outcome.unwrap();
    assert_eq!(o.class.name(), "cancelled");
    let details: Vec<&str> = o.evidence.iter().map(|e| e.detail.as_str()).collect();
    assert!(details.contains(&"killed by the caller"), "{details:?}");
    assert!(!details.iter().any(|d| d.contains("SIGINT")), "{details:?}");
}

#[test]
fn sessions_take_stdin_signals_and_kill_the_whole_tree() {
    if !sandbox_ready() {
        return;
    }
    let w = ws();
    let h = harness(&w, Duration::from_secs(60));
    let r = h
        .exec(
            ExecParams::script(
                "trap 'echo got-int; exit 7' INT; read line; echo \"read:$line\"; \
                 while :; do sleep 0.05; done",
            )
            .stdin(true)
            .yield_time(Duration::from_millis(300)),
        )
        .unwrap();
    let id = r.session_id.clone().unwrap();
    assert!(r.running);
    h.write_stdin(&id, b"hello\n").unwrap();
    let mut seen = String::new();
    let end = Instant::now() + Duration::from_secs(10);
    while !seen.contains("read:hello") && Instant::now() < end {
        seen += &h
            .read_output(&id, 1000, Duration::from_millis(200))
            .unwrap()
            .output
            .text;
    }
    assert!(seen.contains("read:hello"), "{seen}");
    h.signal(&id, libc::SIGINT).unwrap();
    let r = h.wait(&id, Duration::from_secs(10), 1000).unwrap();
    assert!(r.output.text.contains("got-int"), "{r:?}");
    assert_eq!(r.outcome.as_ref().unwrap().exit_code, 7, "{r:?}");
    // The caller's interrupt is a cancellation, as the CLI's Ctrl-C is (new user, stop
    // 19: it was reported as a failed command).
    assert_eq!(
        r.outcome.as_ref().unwrap().class.name(),
        "cancelled",
        "{r:?}"
    );

    // kill: every process of the tree ends, the outcome is cancelled
    let r = h
        .exec(
            ExecParams::script("sleep 3141 & sleep 3141 & wait")
                .yield_time(Duration::from_millis(300)),
        )
        .unwrap();
    assert_eq!(count_procs(&["sleep", "3141"]), 2);
    let k = h.kill(r.session_id.as_deref().unwrap()).unwrap();
    assert_eq!(k.outcome.unwrap().class.name(), "cancelled");
    assert_eq!(wait_gone(&["sleep", "3141"], 5), 0);
}

/// Attack pass 148 F1: a session's end is reported when its own tree ends, not when a
/// session started after it does (the later session's helper inherited the earlier one's
/// outcome pipe, and the earlier end was read only once the later session exited). Twin:
/// the later session is still running, and its own end is reported too.
#[test]
fn an_earlier_sessions_end_does_not_wait_for_a_later_session() {
    if !sandbox_ready() {
        return;
    }
    let w = ws();
    let h = harness(&w, Duration::from_secs(60));
    let first = h
        .exec(
            ExecParams::script("sleep 0.5; echo first-done").yield_time(Duration::from_millis(100)),
        )
        .unwrap();
    let first = first.session_id.expect("still running after 100 ms");
    let second = h
        .exec(ExecParams::argv(["sleep", "2718"]).yield_time(Duration::from_millis(100)))
        .unwrap();
    let second = second.session_id.expect("sleep runs on");
    let start = Instant::now();
    let r = h.wait(&first, Duration::from_secs(20), 1000).unwrap();
    assert!(r.output.text.contains("first-done"), "{r:?}");
    assert_eq!(r.outcome.as_ref().map(|o| o.exit_code), Some(0), "{r:?}");
    assert!(
        start.elapsed() < Duration::from_secs(10),
        "the first session's end took {:?}: it waited for the second",
        start.elapsed()
    );
    assert_eq!(count_procs(&["sleep", "2718"]), 1, "the second still runs");
    let k = h.kill(&second).unwrap();
    assert_eq!(k.outcome.unwrap().class.name(), "cancelled");
    assert_eq!(wait_gone(&["sleep", "2718"], 5), 0);
}

/// nu11 M9: input given with the call reaches the command, then end of file (`wc -c`
/// ends); 200 KiB — more than a pipe holds — does not hold up the call. Twin: without it
/// stdin is empty.
#[test]
fn stdin_data_is_the_commands_input_then_end_of_file() {
    if !sandbox_ready() {
        return;
    }
    let w = ws();
    let h = harness(&w, Duration::from_secs(60));
    let data = "x".repeat(200 * 1024);
    let r = h
        .exec(
            ExecParams::script("wc -c; head -c 3 /dev/null")
                .stdin_data(data)
                .timeout(Duration::from_secs(30)),
        )
        .unwrap();
    assert_eq!(r.output.text.trim(), "204800", "{r:?}");
    assert_eq!(r.outcome.unwrap().exit_code, 0);
    let r = h.exec(ExecParams::script("wc -c")).unwrap();
    assert_eq!(r.output.text.trim(), "0", "{r:?}");
}

#[test]
fn timeout_ends_a_session_as_timed_out() {
    if !sandbox_ready() {
        return;
    }
    let w = ws();
    let h = harness(&w, Duration::from_secs(60));
    let r = h
        .exec(ExecParams::argv(["sleep", "30"]).timeout(Duration::from_millis(300)))
        .unwrap();
    assert_eq!(r.outcome.unwrap().class.name(), "timed-out");
}

/// A terminal session: the command sees a real terminal (`/dev/console` inside, the
/// window size set and changed by the caller); input injection stays refused (TIOCSTI).
#[test]
fn tty_session_has_a_terminal_and_injection_is_refused() {
    if !sandbox_ready() {
        return;
    }
    let w = ws();
    let h = harness(&w, Duration::from_secs(60));
    let mut p = ExecParams::script(
        "tty; stty size; read x; stty size; \
         python3 -c 'import fcntl, termios; fcntl.ioctl(0, termios.TIOCSTI, b\"x\"); print(\"INJECTED\")' \
           2>/dev/null || echo TIOCSTI_REFUSED",
    )
    .tty(true)
    .yield_time(Duration::from_millis(500));
    p.size = (21, 61);
    let r = h.exec(p).unwrap();
    let id = r.session_id.clone().unwrap();
    let mut seen = r.output.text;
    h.resize(&id, 33, 77).unwrap();
    h.write_stdin(&id, b"go\n").unwrap();
    let r = h.wait(&id, Duration::from_secs(10), 10_000).unwrap();
    seen += &r.output.text;
    let seen = seen.replace('\r', "");
    assert!(seen.starts_with("/dev/console\n21 61\n"), "{seen}");
    assert!(seen.contains("33 77\n"), "{seen}");
    assert!(
        seen.contains("TIOCSTI_REFUSED") && !seen.contains("INJECTED"),
        "{seen}"
    );
    assert_eq!(r.outcome.unwrap().class.name(), "success");
}

/// Attack pass 41, E1: a known-safe command given a terminal is capped at ask — what the
/// agent types there is not checked (git's pager runs `!cmd`). In `untrusted` mode, with
/// nobody to ask, `git log` on a terminal is refused and the pager never starts. Twin: the
/// same `git log` without a terminal runs without asking.
#[test]
fn a_known_safe_command_on_a_terminal_is_asked_about_in_untrusted_mode() {
    if !sandbox_ready() {
        return;
    }
    let w = ws();
    let mut o = HarnessOptions::new(w.dir.clone());
    o.helper = Some(PathBuf::from(CORDON));
    o.mode = cordon_execpolicy::ApprovalMode::Untrusted;
    let h = Harness::new(o).unwrap();
    let r = h
        .exec(
            ExecParams::argv(["git", "log"])
                .tty(true)
                .yield_time(Duration::from_millis(500)),
        )
        .unwrap();
    let o = r.outcome.unwrap();
    assert_eq!(o.class.name(), "refused", "{o:?}");
    assert!(r.session_id.is_none());
    let why = r.report.unwrap().exec_policy.reason;
    assert!(why.contains("interactive terminal"), "{why}");
    let r = h.exec(ExecParams::argv(["git", "log"])).unwrap();
    assert_ne!(r.outcome.unwrap().class.name(), "refused");
}

/// Dropping the harness kills every session's process tree; idle sessions expire.
#[test]
fn drop_and_idle_expiry_kill_sessions() {
    if !sandbox_ready() {
        return;
    }
    let w = ws();
    let h = harness(&w, Duration::from_secs(60));
    h.exec(ExecParams::argv(["sleep", "2718"]).yield_time(Duration::from_millis(300)))
        .unwrap();
    assert_eq!(count_procs(&["sleep", "2718"]), 1);
    drop(h);
    assert_eq!(wait_gone(&["sleep", "2718"], 5), 0, "outlived the harness");

    let h = harness(&w, Duration::from_millis(400));
    let r = h
        .exec(ExecParams::argv(["sleep", "2719"]).yield_time(Duration::from_millis(200)))
        .unwrap();
    assert_eq!(count_procs(&["sleep", "2719"]), 1);
    assert_eq!(
        wait_gone(&["sleep", "2719"], 5),
        0,
        "idle session not expired"
    );
    // nu24 F7f: the error says the idle rule killed it, not "never existed".
    let e = h
        .read_output(r.session_id.as_deref().unwrap(), 10, Duration::ZERO)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("killed after") && e.contains("idle-timeout"),
        "{e}"
    );
    let e = h
        .read_output("s-999", 10, Duration::ZERO)
        .unwrap_err()
        .to_string();
    assert!(e.contains("never existed"), "{e}");
}

/// Escape: additional permissions come from the agent; without an approval they widen
/// nothing (the write outside the workspace is refused before anything runs). Twin: the
/// same call approved by a person runs with the grant.
#[test]
fn additional_permissions_need_an_approval() {
    if !sandbox_ready() {
        return;
    }
    let w = ws();
    let outside = w.root.path().join("granted");
    std::fs::create_dir_all(&outside).unwrap();
    let target = outside.join("f.txt");
    let with = format!(
        r#"{{"entries": [{{"path": "{}", "access": "write"}}]}}"#,
        outside.display()
    );
    let call = || {
        ExecParams::argv(["touch", target.to_str().unwrap()])
            .additional_permissions(with.clone())
            .justification("needs the output directory")
    };
    let h = harness(&w, Duration::from_secs(60));
    let r = h.exec(call()).unwrap();
    let o = r.outcome.unwrap();
    assert_eq!(o.class.name(), "refused", "{o:?}");
    assert!(!target.exists(), "the agent widened its own sandbox");

    let mut opts = HarnessOptions::new(w.dir.clone());
    opts.helper = Some(PathBuf::from(CORDON));
    let approver = cordon_session::ScriptedApprover::from_answers(&[cordon_session::Answer::Once]);
    let h = Harness::with_approver(opts, Box::new(approver)).unwrap();
    let r = h.exec(call()).unwrap();
    assert_eq!(r.outcome.unwrap().class.name(), "success");
    assert!(target.exists());
    // nu17 N10: a cwd that does not exist is an error before any approval is asked (the
    // scripted approver has no answer left: asking would deny, not error).
    let e = h
        .exec(ExecParams::argv(["true"]).cwd(w.root.path().join("missing")))
        .unwrap_err();
    assert!(e.to_string().contains("does not exist"), "{e}");
}

/// Breaker (stop 22): the outside-cwd check read the typed cwd, resolution read it again.
/// The agent's own background command swaps `d` (a directory of the project) with `d` ->
/// the other project, and some calls with `cwd: "d"` ran with the other project as the
/// writable workspace, unapproved. What runs is now judged on what resolution made of the
/// cwd: no call writes into the other project, whatever the timing.
#[test]
fn a_cwd_swapped_for_a_symlink_between_check_and_run_does_not_move_the_workspace() {
    if !sandbox_ready() {
        return;
    }
    let w = ws();
    let other = w.root.path().join("other");
    std::fs::create_dir_all(other.join(".git")).unwrap();
    std::fs::write(other.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
    let flipper = Flipper::start(&w.dir, &other);
    let h = harness(&w, Duration::from_secs(60));
    let script = format!("touch {}/w$$", other.display());
    for _ in 0..60 {
        let _ = h.exec(ExecParams::argv(["sh", "-c", &script]).cwd(PathBuf::from("d")));
    }
    drop(flipper);
    let written: Vec<_> = std::fs::read_dir(&other)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('w'))
        .collect();
    assert!(
        written.is_empty(),
        "unapproved writes into the other project: {written:?}"
    );
}

/// Approves a write grant only when every path it shows lies inside `inside` (a person
/// reading the prompt); everything else is denied.
struct ApproveInside(PathBuf);

impl cordon_session::Approver for ApproveInside {
    fn ask(&mut self, req: &cordon_session::ReviewableRequest) -> cordon_session::Reply {
        let ok = req.needs.additional.as_ref().is_some_and(|a| {
            a.entries
                .iter()
                .all(|e| std::path::Path::new(&e.path).starts_with(&self.0))
        });
        cordon_session::Reply {
            approval_id: req.approval_id.clone(),
            answer: if ok {
                cordon_session::Answer::Once
            } else {
                cordon_session::Answer::Deny
            },
            by: "test".into(),
            note: None,
        }
    }

    fn name(&self) -> &'static str {
        "test"
    }
}

/// The same race on an extra grant (sibling of the cwd case): the person approves
/// `+write <proj>/d` (a directory of the project) and the agent's background command swaps
/// `d` for a symlink to another project before resolution. A write grant that leads through
/// a symlink is not granted (resolution), and the helper binds the resolved path without
/// following links: no approved call writes into the other project.
#[test]
fn an_approved_grant_swapped_for_a_symlink_does_not_widen_elsewhere() {
    if !sandbox_ready() {
        return;
    }
    let w = ws();
    let other = w.root.path().join("other");
    std::fs::create_dir_all(&other).unwrap();
    let flipper = Flipper::start(&w.dir, &other);
    let mut opts = HarnessOptions::new(w.dir.clone());
    opts.helper = Some(PathBuf::from(CORDON));
    let canon = std::fs::canonicalize(&w.dir).unwrap();
    let h = Harness::with_approver(opts, Box::new(ApproveInside(canon))).unwrap();
    let script = format!("touch {}/w$$", other.display());
    let grant = format!(
        r#"{{"entries":[{{"path":"{}","access":"write"}}]}}"#,
        w.dir.join("d").display()
    );
    for _ in 0..60 {
        let _ =
            h.exec(ExecParams::argv(["sh", "-c", &script]).additional_permissions(grant.clone()));
    }
    drop(flipper);
    let written: Vec<_> = std::fs::read_dir(&other)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        written.is_empty(),
        "writes into the other project: {written:?}"
    );
}

/// `dir/d` (a directory) and `dir/x` (a symlink to `target`), swapped with
/// `renameat2(RENAME_EXCHANGE)` every 300 µs by a thread until the flipper is dropped.
struct Flipper {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Flipper {
    fn start(dir: &std::path::Path, target: &std::path::Path) -> Flipper {
        std::fs::create_dir(dir.join("d")).unwrap();
        std::os::unix::fs::symlink(target, dir.join("x")).unwrap();
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let c = |n: &str| {
            std::ffi::CString::new(dir.join(n).into_os_string().into_encoded_bytes()).unwrap()
        };
        let (d, x, flag) = (c("d"), c("x"), stop.clone());
        let thread = std::thread::spawn(move || {
            while !flag.load(std::sync::atomic::Ordering::Relaxed) {
                // SAFETY: two valid NUL-terminated paths; RENAME_EXCHANGE swaps them.
                unsafe {
                    libc::renameat2(
                        libc::AT_FDCWD,
                        d.as_ptr(),
                        libc::AT_FDCWD,
                        x.as_ptr(),
                        libc::RENAME_EXCHANGE,
                    )
                };
                std::thread::sleep(Duration::from_micros(300));
            }
        });
        Flipper {
            stop,
            thread: Some(thread),
        }
    }
}

impl Drop for Flipper {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// A cwd outside the harness's makes that directory's project the writable workspace: a
/// widening like additional permissions, so it needs an approval (breaker finding: an MCP
/// `cwd: "../other"` wrote there unapproved).
#[test]
fn a_cwd_outside_the_harness_needs_an_approval() {
    if !sandbox_ready() {
        return;
    }
    let w = ws();
    let other = w.root.path().join("other");
    std::fs::create_dir_all(other.join(".git")).unwrap();
    // A marker is a git dir with HEAD (an empty `.git` is cordon's placeholder).
    std::fs::write(other.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
    let target = other.join("x");
    let call = || ExecParams::argv(["touch", "x"]).cwd(other.clone());
    let h = harness(&w, Duration::from_secs(60));
    let r = h.exec(call()).unwrap();
    let o = r.outcome.unwrap();
    assert_eq!(o.class.name(), "refused", "{o:?}");
    assert!(!target.exists(), "the agent widened its own sandbox by cwd");
    // Inside the harness's cwd: no approval needed.
    std::fs::create_dir_all(w.dir.join("sub")).unwrap();
    let r = h
        .exec(ExecParams::argv(["touch", "y"]).cwd(w.dir.join("sub")))
        .unwrap();
    assert_eq!(r.outcome.unwrap().class.name(), "success");
    assert!(w.dir.join("sub/y").exists());
    // Approved: it runs. nu22 P3: a command rule cannot answer a widening, so the request
    // offers none (`remember-rule` saved `allow touch x` for everywhere).
    let mut opts = HarnessOptions::new(w.dir.clone());
    opts.helper = Some(PathBuf::from(CORDON));
    let offered = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let h = Harness::with_approver(opts, Box::new(OnceRecording(offered.clone()))).unwrap();
    let r = h.exec(call()).unwrap();
    assert_eq!(r.outcome.unwrap().class.name(), "success");
    assert!(target.exists());
    let offered = offered.lock().unwrap();
    assert!(
        !offered.is_empty() && !offered[0].contains(&cordon_session::Answer::RememberRule),
        "{offered:?}"
    );
}

/// Attack pass 196: a cwd with `..` after a symlink (`lnk/..`, `lnk -> ../other/sub`) is the
/// directory the kernel takes it to — the link target's parent — for the approval, the
/// workspace check and the run alike (it was judged as `other`, resolved as the harness's
/// own directory, and refused as "changed between the check and the run"). Approved, the
/// command runs in `other`; twin: unapproved, nothing is written anywhere.
#[test]
fn a_cwd_with_dot_dot_after_a_symlink_is_the_kernels_directory() {
    if !sandbox_ready() {
        return;
    }
    let w = ws();
    let other = w.root.path().join("other");
    std::fs::create_dir_all(other.join(".git")).unwrap();
    std::fs::write(other.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
    std::fs::create_dir_all(other.join("sub")).unwrap();
    std::os::unix::fs::symlink(other.join("sub"), w.dir.join("lnk")).unwrap();
    let call = || ExecParams::argv(["touch", "made"]).cwd(PathBuf::from("lnk/.."));
    let h = harness(&w, Duration::from_secs(60));
    let r = h.exec(call()).unwrap();
    assert_eq!(r.outcome.unwrap().class.name(), "refused");
    assert!(!other.join("made").exists() && !w.dir.join("made").exists());
    let mut opts = HarnessOptions::new(w.dir.clone());
    opts.helper = Some(PathBuf::from(CORDON));
    let offered = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let h = Harness::with_approver(opts, Box::new(OnceRecording(offered.clone()))).unwrap();
    let r = h.exec(call()).unwrap();
    let o = r.outcome.unwrap();
    assert_eq!(o.class.name(), "success", "{o:?}");
    assert!(
        other.join("made").exists(),
        "ran elsewhere than the kernel's `lnk/..`"
    );
    assert!(!w.dir.join("made").exists());
}

/// Approves once, keeping the answers each request offered.
struct OnceRecording(std::sync::Arc<std::sync::Mutex<Vec<Vec<cordon_session::Answer>>>>);

impl cordon_session::Approver for OnceRecording {
    fn ask(&mut self, req: &cordon_session::ReviewableRequest) -> cordon_session::Reply {
        self.0.lock().unwrap().push(req.allowed_answers());
        cordon_session::Reply {
            approval_id: req.approval_id.clone(),
            answer: cordon_session::Answer::Once,
            by: "test".into(),
            note: None,
        }
    }

    fn name(&self) -> &'static str {
        "test"
    }
}

/// Attack pass 45, M5: additional permissions that name cordon's own config are refused
/// before anyone is asked (the form asked to approve `+write <config>`; an approved one
/// made the next command of the session unconfined). Twin: the approver's answer is still
/// there for the next widening, which runs with it.
#[test]
fn a_widening_onto_cordons_config_is_refused_unasked() {
    if !sandbox_ready() {
        return;
    }
    let w = ws();
    let cfg_dir = w.root.path().join("cfg");
    std::fs::create_dir_all(&cfg_dir).unwrap();
    let cfg = cfg_dir.join("cordon.toml");
    let text = "[profiles.mine]\nextends = \"workspace-write\"\n";
    std::fs::write(&cfg, text).unwrap();
    let mut opts = HarnessOptions::new(w.dir.clone());
    opts.helper = Some(PathBuf::from(CORDON));
    opts.layers.config = Some(cfg.clone());
    opts.layers.profile = Some("mine".into());
    let approver = cordon_session::ScriptedApprover::from_answers(&[cordon_session::Answer::Once]);
    let h = Harness::with_approver(opts, Box::new(approver)).unwrap();
    let grant = |p: &std::path::Path| {
        format!(
            r#"{{"entries": [{{"path": "{}", "access": "write"}}]}}"#,
            p.display()
        )
    };
    let script = format!(
        "printf '[profiles.mine]\\nextends = \"danger-full-access\"\\n' > {}",
        cfg.display()
    );
    let r = h
        .exec(ExecParams::argv(["sh", "-c", &script]).additional_permissions(grant(&cfg)))
        .unwrap();
    let o = r.outcome.unwrap();
    assert_eq!(o.class.name(), "refused", "{o:?}");
    assert!(format!("{o:?}").contains("cordon's own"), "{o:?}");
    assert_eq!(std::fs::read_to_string(&cfg).unwrap(), text);
    let data = w.root.path().join("data");
    std::fs::create_dir_all(&data).unwrap();
    let target = data.join("f.txt");
    let r = h
        .exec(
            ExecParams::argv(["touch", target.to_str().unwrap()])
                .additional_permissions(grant(&data)),
        )
        .unwrap();
    assert_eq!(r.outcome.unwrap().class.name(), "success");
    assert!(target.exists());
}

/// New-user pass nu24, F2: a shell the agent types into (stdin kept open) is judged by its
/// exit status, not by a denial it met and handled commands earlier. Twin: the same
/// commands as one script are `sandbox-denied`, naming the refused path.
#[test]
fn an_interactive_session_is_judged_by_its_exit() {
    if !sandbox_ready() {
        return;
    }
    let w = ws();
    let h = harness(&w, Duration::from_secs(60));
    let outside = w.root.path().join("outside.txt");
    let lines = format!("echo x > {}\necho next\nexit 3\n", outside.display());
    let r = h
        .exec(
            ExecParams::argv(["bash", "--norc"])
                .stdin(true)
                .yield_time(Duration::from_millis(300)),
        )
        .unwrap();
    let id = r.session_id.clone().unwrap();
    h.write_stdin(&id, lines.as_bytes()).unwrap();
    let r = h.wait(&id, Duration::from_secs(20), 10_000).unwrap();
    let o = r.outcome.unwrap();
    assert_eq!(o.exit_code, 3, "{o:?}");
    assert_eq!(o.class.name(), "command-failed", "{o:?}");
    let r = h
        .exec(ExecParams::script(format!(
            "echo x > {}; echo next; exit 3",
            outside.display()
        )))
        .unwrap();
    let o = r.outcome.unwrap();
    assert_eq!(o.class.name(), "sandbox-denied", "{o:?}");
}

/// A command that never reads its stdin held `write_stdin` (and every later call for that
/// session) until it ended: the call now returns after `stdin_wait`, saying how much was
/// written (a pipe's capacity, not all). Twin: a command that reads takes all of a large
/// input, in order.
#[test]
fn write_stdin_to_a_command_that_does_not_read_returns() {
    if !sandbox_ready() {
        return;
    }
    let w = ws();
    let mut o = HarnessOptions::new(w.dir.clone());
    o.helper = Some(PathBuf::from(CORDON));
    o.stdin_wait = Duration::from_millis(1500);
    let h = Harness::new(o).unwrap();
    let big: Vec<u8> = (0..1_000_000u32).map(|i| b'a' + (i % 26) as u8).collect();
    let r = h
        .exec(
            ExecParams::argv(["sleep", "30"])
                .stdin(true)
                .yield_time(Duration::from_millis(200)),
        )
        .unwrap();
    let id = r.session_id.clone().unwrap();
    let t = Instant::now();
    let e = h.write_stdin(&id, &big).unwrap_err();
    assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
    match &e {
        cordon_session::harness::HarnessError::StdinStalled { written, total, .. } => {
            assert!(*written < *total && *total == big.len(), "{e}")
        }
        other => panic!("{other}"),
    }
    assert!(e.to_string().contains("from byte"), "{e}");
    h.kill(&id).unwrap();
    // Twin: read whole by a command that reads (its count of bytes and a checksum).
    let r = h
        .exec(
            ExecParams::script("wc -c; echo done")
                .stdin(true)
                .yield_time(Duration::from_millis(200)),
        )
        .unwrap();
    let id = r.session_id.clone().unwrap();
    h.write_stdin(&id, &big).unwrap();
    h.close_stdin(&id).unwrap();
    let r = h.wait(&id, Duration::from_secs(20), 10_000).unwrap();
    assert!(r.output.text.contains("1000000"), "{}", r.output.text);
    assert_eq!(r.outcome.unwrap().exit_code, 0);
}

/// New-user pass 201, #1: a shell given its program as the call's `stdin` text runs that
/// text, judged like a heredoc: `rm f.txt` piped to `sh` needs an approval (refused here,
/// with no approver), while `echo hi` runs. A shell whose stdin stays open for later
/// `write_stdin` runs text known only at run time: asked about too.
#[test]
fn a_shell_given_its_program_on_stdin_is_judged_by_it() {
    if !sandbox_ready() {
        return;
    }
    let w = ws();
    std::fs::write(w.dir.join("f.txt"), "mine\n").unwrap();
    let h = harness(&w, Duration::from_secs(60));
    let r = h
        .exec(ExecParams::argv(["sh"]).stdin_data("rm -rf .git\n"))
        .unwrap();
    assert_eq!(r.outcome.unwrap().class.name(), "refused");
    assert!(w.dir.join(".git/HEAD").exists());
    let r = h
        .exec(ExecParams::argv(["sh"]).stdin_data("echo hi\n"))
        .unwrap();
    assert_eq!(r.outcome.unwrap().class.name(), "success");
    assert_eq!(r.output.text, "hi\n");
    // Stdin kept open for `write_stdin`: what the agent writes later is not checked, as on
    // a terminal: the run is capped (it runs here, in on-request mode, as `tty` does).
    let r = h
        .exec(
            ExecParams::argv(["sh"])
                .stdin(true)
                .yield_time(Duration::from_millis(200)),
        )
        .unwrap();
    let id = r.session_id.clone().unwrap();
    h.write_stdin(&id, b"echo typed\nexit 0\n").unwrap();
    let r = h.wait(&id, Duration::from_secs(20), 10_000).unwrap();
    assert_eq!(r.outcome.unwrap().class.name(), "success");
}

/// Attack pass 214 #1: `git push --force` written into a `sh` session (MCP `write_stdin`)
/// ran, while the same command given to `exec_command` is forbidden. A shell session's
/// lines are judged as they are written: a forbidden or dangerous one is not written, also
/// when it comes in pieces. Twins: ordinary lines (and a line naming an unknown program)
/// are written and run.
#[test]
fn a_shell_sessions_lines_are_judged_as_they_are_written() {
    if !sandbox_ready() {
        return;
    }
    let w = ws();
    let h = harness(&w, Duration::from_secs(60));
    let r = h
        .exec(
            ExecParams::argv(["sh"])
                .stdin(true)
                .yield_time(Duration::from_millis(300)),
        )
        .unwrap();
    let id = r.session_id.clone().unwrap();
    let e = h
        .write_stdin(&id, b"git push --force origin HEAD\n")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("not written") && e.contains("exec_command"),
        "{e}"
    );
    // An alias would hide what a later line runs from the check.
    let e = h
        .write_stdin(&id, b"alias p='git status'\n")
        .unwrap_err()
        .to_string();
    assert!(e.contains("not written"), "{e}");
    h.write_stdin(&id, b"git reset ").unwrap();
    let e = h.write_stdin(&id, b"--hard\n").unwrap_err().to_string();
    assert!(e.contains("not written"), "{e}");
    // Attack pass 224 #1: a backslash ending a comment continues nothing — the next line
    // is a command of its own, judged.
    let e = h
        .write_stdin(&id, b"true #\\\ngit push --force origin HEAD\n")
        .unwrap_err()
        .to_string();
    assert!(e.contains("not written"), "{e}");
    // The refused piece is not kept: the next line stands alone.
    h.write_stdin(
        &id,
        b"\necho still-here; some-unknown-tool-xyz 2>/dev/null; exit 0\n",
    )
    .unwrap();
    let r = h.wait(&id, Duration::from_secs(20), 10_000).unwrap();
    assert!(r.output.text.contains("still-here"), "{r:?}");
    assert_eq!(r.outcome.unwrap().exit_code, 0);
}

/// Re-probe 217 #1-#4, #6: what the shell has not run yet stays with the judge — a line
/// ended by a backslash, an open quote, a here-document opened before a command on its
/// line — and is judged again with the write that completes it; ^O ends a line; a session
/// whose command line starts a shell through a wrapper (`env sh`) is judged too. Twins: a
/// here-document whose text names a dangerous command as data, written in pieces, and a
/// backslash-continued ordinary line run.
#[test]
fn a_shell_sessions_open_constructs_are_judged_with_what_completes_them() {
    if !sandbox_ready() {
        return;
    }
    let w = ws();
    let h = harness(&w, Duration::from_secs(60));
    for argv in [vec!["sh"], vec!["env", "sh"]] {
        let r = h
            .exec(
                ExecParams::argv(argv.clone())
                    .stdin(true)
                    .yield_time(Duration::from_millis(300)),
            )
            .unwrap();
        let id = r.session_id.clone().unwrap();
        let refused = |pieces: &[&str]| {
            let (last, first) = pieces.split_last().unwrap();
            for p in first {
                h.write_stdin(&id, p.as_bytes()).unwrap();
            }
            let e = h.write_stdin(&id, last.as_bytes()).unwrap_err().to_string();
            assert!(e.contains("not written"), "{argv:?} {pieces:?}: {e}");
            // Close what the refused piece left open, so the next case starts clean.
        };
        refused(&["git reset \\\n", "--hard\n"]);
        h.write_stdin(&id, b"\n").unwrap();
        refused(&["echo '\n", "'; git reset --hard\n"]);
        h.write_stdin(&id, b"'\n").unwrap();
        // Refused at once: the parser cannot read it whole, so each line is judged.
        refused(&["cat <<EOF; git reset --hard\n"]);
        let e = h
            .write_stdin(&id, b"git reset --hard\x0f")
            .unwrap_err()
            .to_string();
        assert!(e.contains("not written"), "{e}");
        // Twins: data in a here-document, and an ordinary continued line.
        h.write_stdin(&id, b"cat <<'EOF' > notes.txt\n").unwrap();
        h.write_stdin(&id, b"never run git reset --hard here\n")
            .unwrap();
        h.write_stdin(&id, b"EOF\n").unwrap();
        h.write_stdin(&id, b"echo con\\\n").unwrap();
        h.write_stdin(&id, b"tinued; exit 0\n").unwrap();
        let r = h.wait(&id, Duration::from_secs(20), 10_000).unwrap();
        assert!(r.output.text.contains("continued"), "{argv:?} {r:?}");
        assert!(
            std::fs::read_to_string(w.dir.join("notes.txt"))
                .unwrap()
                .contains("git reset --hard"),
            "{argv:?}"
        );
    }
}

/// Fresh pass 218 #1-#3, #5: a NUL byte bash drops, line-editing keys and history
/// expansion changed what the shell ran after cordon judged the text, and `bash /dev/stdin`
/// was no shell session to the judge. Twins: an ordinary line with `!=` and `! ` runs.
#[test]
fn a_shell_sessions_rewritten_lines_are_refused() {
    if !sandbox_ready() {
        return;
    }
    let w = ws();
    let h = harness(&w, Duration::from_secs(60));
    for argv in [vec!["bash", "--norc"], vec!["bash", "/dev/stdin"]] {
        let r = h
            .exec(
                ExecParams::argv(argv.clone())
                    .stdin(true)
                    .yield_time(Duration::from_millis(300)),
            )
            .unwrap();
        let id = r.session_id.clone().unwrap();
        for text in [
            "git reset --ha\0rd\n",
            "git reset --harX\x7fd\n",
            "ls\x15git reset --hard\n",
            "\x1b[A\n",
            "^soft^hard\n",
            "!!\n",
        ] {
            let e = h.write_stdin(&id, text.as_bytes()).unwrap_err().to_string();
            assert!(e.contains("not written"), "{argv:?} {text:?}: {e}");
        }
        h.write_stdin(&id, b"[ 1 != 2 ] && ! false && echo fine; exit 0\n")
            .unwrap();
        let r = h.wait(&id, Duration::from_secs(20), 10_000).unwrap();
        assert!(r.output.text.contains("fine"), "{argv:?} {r:?}");
    }
}
