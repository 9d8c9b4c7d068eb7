//! R-L3 / R-L4: no signals to host processes, no new namespaces or mounts, every process
//! gone when the command exits, exit codes and signals propagated, capabilities dropped
//! even as root, and exactly the payload environment.
#![cfg(target_os = "linux")]

mod support;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use support::*;

#[test]
fn cannot_signal_a_host_process() {
    if !require_full() {
        return;
    }
    let mut victim = Command::new("sleep").arg("100").spawn().unwrap();
    let pid = victim.id().to_string();
    let s = Sandbox::new();
    let o = s.sh(&format!("kill -TERM {pid}; kill -KILL {pid}; echo rc=$?"));
    assert_ok(&o);
    assert!(stdout(&o).contains("rc=1"), "{}", stdout(&o));
    std::thread::sleep(Duration::from_millis(50));
    assert!(
        victim.try_wait().unwrap().is_none(),
        "the host process was killed"
    );
    victim.kill().unwrap();
    victim.wait().unwrap();
    // Twin: signalling its own child works.
    let o = s.sh("sleep 10 & kill -TERM $! && wait $!; echo rc=$?");
    assert_eq!(stdout(&o).trim(), "rc=143");
}

#[test]
fn no_new_namespaces_mounts_or_ptrace() {
    if !require(&[
        Need::Userns,
        Need::Landlock(1),
        Need::Seccomp,
        Need::Tool("unshare"),
        Need::Tool("mount"),
        Need::Tool("umount"),
        Need::Tool("strace"),
    ]) {
        return;
    }
    let s = Sandbox::new();
    let o = s.sh("unshare -r true && echo UNSHARE-R; echo rc-unshare-r=$?; \
         unshare -m true && echo UNSHARE-M; echo rc-unshare-m=$?; \
         mkdir -p /tmp/x && mount -t tmpfs none /tmp/x && echo MOUNTED; echo rc-mount=$?; \
         mount --bind / /tmp/x && echo BOUND; echo rc-bind=$?; \
         umount /proc && echo UMOUNTED; echo rc-umount=$?; \
         strace -o /dev/null true && echo TRACED; echo rc-strace=$?; exit 0");
    assert_ok(&o);
    for bad in [
        "UNSHARE-R",
        "UNSHARE-M",
        "MOUNTED",
        "BOUND",
        "UMOUNTED",
        "TRACED",
    ] {
        assert!(!stdout(&o).contains(bad), "{bad}: {}", stdout(&o));
    }
    // Each attempt ran and was refused: not "command not found" (127) or "cannot
    // execute" (126), which would make the checks above pass for the wrong reason.
    for l in stdout(&o).lines().filter(|l| l.starts_with("rc-")) {
        assert!(
            !l.ends_with("=126") && !l.ends_with("=127"),
            "{l}: the tool did not run\n{}",
            stderr(&o)
        );
    }
    assert_eq!(
        stdout(&o).lines().filter(|l| l.starts_with("rc-")).count(),
        6
    );
    // Twin: the same shell runs ordinary commands.
    let o = s.sh("mkdir -p /tmp/x && touch /tmp/x/f && ls /tmp/x");
    assert_eq!(stdout(&o), "f\n");
}

#[test]
fn background_processes_are_gone_when_the_command_exits() {
    if !require_full() {
        return;
    }
    let s = Sandbox::new();
    let start = Instant::now();
    let o = s.sh("(sleep 1; echo late > marker) >/dev/null 2>&1 & echo started");
    assert_ok(&o);
    assert!(
        start.elapsed() < Duration::from_millis(900),
        "the helper waited for the background job"
    );
    std::thread::sleep(Duration::from_millis(1500));
    assert!(
        !s.ws.join("marker").exists(),
        "a background process outlived the command"
    );
    // Twin: the same job finishes when the command waits for it.
    let o = s.sh("(sleep 0.2; echo late > marker2) & wait");
    assert_ok(&o);
    assert!(s.ws.join("marker2").exists());
}

#[test]
fn exit_codes_and_signals_propagate() {
    if !require_full() {
        return;
    }
    let s = Sandbox::new();
    assert_eq!(s.sh("exit 3").status.code(), Some(3));
    assert_eq!(s.sh("kill -TERM $$").status.code(), Some(143));
    assert_eq!(s.sh("kill -KILL $$").status.code(), Some(137));
    let o = s.run(&["no-such-command-xyz"]);
    assert_eq!(o.status.code(), Some(127));
    assert!(stderr(&o).contains("cordon: no-such-command-xyz: command not found"));
    write(&s.ws.join("noexec.sh"), "#!/bin/sh\necho hi\n");
    let o = s.run(&["./noexec.sh"]);
    assert_eq!(o.status.code(), Some(126));
    assert!(
        stderr(&o).contains("cordon: ./noexec.sh: permission denied"),
        "{}",
        stderr(&o)
    );
    // The command's own 127 is not mistaken for "not found".
    let o = s.sh("exit 127");
    assert_eq!(o.status.code(), Some(127));
    assert!(!stderr(&o).contains("cordon:"));
    assert_eq!(s.run(&["true"]).status.code(), Some(0));
}

#[test]
fn sigterm_to_the_helper_reaches_the_command() {
    if !require_full() {
        return;
    }
    let s = Sandbox::new();
    let mut child =
        s.spawn_sh("trap 'echo got-term; exit 7' TERM; echo ready; while :; do sleep 0.05; done");
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    out.read_line(&mut line).unwrap();
    assert_eq!(line, "ready\n");
    // SAFETY: kill has no memory-safety preconditions; the pid is our child.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) };
    let status = child.wait().unwrap();
    line.clear();
    out.read_line(&mut line).unwrap();
    assert_eq!(line, "got-term\n");
    assert_eq!(status.code(), Some(7));
}

#[test]
fn capabilities_dropped_no_new_privs_and_seccomp() {
    if !require_full() {
        return;
    }
    let s = Sandbox::new();
    let o = s.run(&[
        "grep",
        "-E",
        "^(CapInh|CapPrm|CapEff|CapBnd|CapAmb|NoNewPrivs|Seccomp):",
        "/proc/self/status",
    ]);
    assert_ok(&o);
    let out = stdout(&o);
    for cap in ["CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"] {
        assert!(
            out.contains(&format!("{cap}:\t0000000000000000")),
            "{cap} not zero:\n{out}"
        );
    }
    assert!(out.contains("NoNewPrivs:\t1"), "{out}");
    assert!(out.contains("Seccomp:\t2"), "{out}");
    // As root: still no way to remount or write root-owned system files.
    let o = s.sh(
        "mount -o remount,rw / && echo REMOUNTED; echo x > /etc/cordon-pwn && echo WROTE; exit 0",
    );
    assert!(!stdout(&o).contains("REMOUNTED"));
    assert!(!stdout(&o).contains("WROTE"));
    assert!(!std::path::Path::new("/etc/cordon-pwn").exists());
}

#[test]
fn environment_is_exactly_the_payload_env() {
    if !require_full() {
        return;
    }
    let s = Sandbox::new()
        .env("KEEP_ME", "yes")
        .env("TMPDIR", "/nonexistent")
        .helper_env("HOST_SECRET_TOKEN", "leak");
    let o = s.run(&["env"]);
    assert_ok(&o);
    let mut got: Vec<String> = stdout(&o).lines().map(String::from).collect();
    got.sort();
    // Known caches missing in the (empty) fake home: each tool's variable names a private
    // per-workspace directory (issue 11), e.g. npm_config_cache.
    let private: Vec<String> = got
        .iter()
        .filter(|l| l.contains("/.cache/cordon/overlays/"))
        .cloned()
        .collect();
    assert!(
        private.iter().any(|l| l.starts_with("npm_config_cache=")),
        "{private:?}"
    );
    got.retain(|l| !private.contains(l));
    let mut want: Vec<String> = s
        .env
        .iter()
        .filter(|(k, _)| k != "TMPDIR")
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    // TMPDIR pointed nowhere useful: replaced by the private /tmp.
    want.push("TMPDIR=/tmp".into());
    // The network is off: the package managers' fail-fast knobs are added.
    want.extend(
        cordon_sandbox::linux::offline_env()
            .iter()
            .map(|(k, v)| format!("{k}={v}")),
    );
    want.sort();
    assert_eq!(got, want);
    // A TMPDIR inside a writable root is kept.
    let tmpdir = s.ws.join("t");
    std::fs::create_dir(&tmpdir).unwrap();
    let s2 = Sandbox::new().env("TMPDIR", "placeholder");
    let mut s2 = s2;
    s2.ws = s.ws.clone();
    s2.env.retain(|(k, _)| k != "TMPDIR");
    s2.env.push(("TMPDIR".into(), tmpdir.display().to_string()));
    let o = s2.run(&["sh", "-c", "echo $TMPDIR"]);
    assert_eq!(stdout(&o).trim(), tmpdir.display().to_string());
}

#[test]
fn stdin_and_stdout_are_passed_through() {
    if !require_full() {
        return;
    }
    let s = Sandbox::new();
    let mut c = s
        .command(&[
            "sh",
            "-c",
            "read x; echo got:$x; echo err >&2; echo again > /dev/stdout",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    c.stdin.take().unwrap().write_all(b"hello\n").unwrap();
    let o = c.wait_with_output().unwrap();
    assert_ok(&o);
    assert_eq!(stdout(&o), "got:hello\nagain\n");
    assert_eq!(stderr(&o), "err\n");
}

#[test]
fn pseudo_terminals_work_inside() {
    if !require_full() {
        return;
    }
    let s = Sandbox::new();
    let o = s.run(&[
        "python3",
        "-c",
        "import os, pty\nm, t = pty.openpty()\nos.write(t, b'x\\n')\nprint(os.read(m, 8))\nprint(os.ttyname(t))",
    ]);
    assert_ok(&o);
    assert_eq!(stdout(&o), "b'x\\r\\n'\n/dev/pts/0\n", "{}", stderr(&o));
}

/// A `sleep` argument no other process on the host uses, so a `/proc` scan finds exactly
/// the sleeps of one test.
fn unique_sleep(base: u32) -> String {
    use std::sync::atomic::{AtomicU32, Ordering};
    static N: AtomicU32 = AtomicU32::new(0);
    format!(
        "{base}.{}{:03}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    )
}

/// Pids of the `sleep` processes whose argv contains `arg` as one argument.
fn holders_of(arg: &str) -> Vec<libc::pid_t> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse().ok()) else {
            continue;
        };
        let Ok(raw) = std::fs::read(e.path().join("cmdline")) else {
            continue;
        };
        // Only `sleep` processes: `setsid sleep TAG` also has TAG in its argv for a moment
        // (and forks when it leads its group, the parent exiting), which made the count
        // reach 3 and drop back to 2 before the tree was complete.
        let mut argv = raw.split(|b| *b == 0);
        let is_sleep = argv
            .next()
            .is_some_and(|a0| a0 == b"sleep" || a0.ends_with(b"/sleep"));
        if is_sleep && argv.any(|a| a == arg.as_bytes()) {
            out.push(pid);
        }
    }
    out
}

/// The direct children of `pid`, from `/proc/*/stat`.
fn children_of(pid: libc::pid_t) -> Vec<libc::pid_t> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(child) = e.file_name().to_str().and_then(|s| s.parse().ok()) else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(e.path().join("stat")) else {
            continue;
        };
        let after = &stat[stat.rfind(')').unwrap() + 1..];
        if after.split_whitespace().nth(1) == Some(pid.to_string().as_str()) {
            out.push(child);
        }
    }
    out
}

/// What gets SIGKILL in [`survivors_after_sigkill`].
#[derive(Clone, Copy, PartialEq, Eq)]
enum Victim {
    /// The helper alone.
    Helper,
    /// The helper's whole process group (started as its own group).
    HelperGroup,
    /// The helper's only child: the rung-2 supervisor (rung 1: the namespace's init).
    HelperChild,
}

/// Starts a command tree (a `setsid` sleep, a backgrounded sleep, a foreground sleep, all
/// with `tag`), sends SIGKILL to `victim` and returns the survivors still running after a
/// grace period (killing them afterwards so a failing run leaves nothing behind either).
fn survivors_after_sigkill(s: &Sandbox, tag: &str, victim: Victim) -> Vec<libc::pid_t> {
    use std::os::unix::process::CommandExt;
    let script = format!(
        "setsid sleep {tag} >/dev/null 2>&1 & \
         (sleep {tag}; true) >/dev/null 2>&1 & \
         echo ready; sleep {tag}"
    );
    let mut cmd = s.command(&["sh", "-c", &script]);
    cmd.stdout(Stdio::piped()).stderr(Stdio::inherit());
    if victim == Victim::HelperGroup {
        cmd.process_group(0);
    }
    let mut child = cmd.spawn().unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    out.read_line(&mut line).unwrap();
    assert_eq!(line, "ready\n");
    // Let the background sleeps exec (generous: a loaded CI machine can be slow to fork).
    let start = Instant::now();
    while holders_of(tag).len() < 3 && start.elapsed() < Duration::from_secs(30) {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(holders_of(tag).len(), 3, "the tree did not start");
    let helper = child.id() as libc::pid_t;
    let target = match victim {
        Victim::Helper => helper,
        Victim::HelperGroup => -helper,
        Victim::HelperChild => {
            // Rung 1: the sandbox's init, the child in another pid namespace (the other
            // child is the limits watchdog). Rung 2: the supervisor, the only child.
            let ns = |p: libc::pid_t| std::fs::read_link(format!("/proc/{p}/ns/pid")).ok();
            let mut kids = children_of(helper);
            if kids.len() > 1 {
                kids.retain(|k| ns(*k) != ns(helper));
            }
            assert_eq!(kids.len(), 1, "the helper has one sandbox child: {kids:?}");
            kids[0]
        }
    };
    // SAFETY: kill has no memory-safety preconditions; the pid (group) is our child's or
    // its child's.
    unsafe { libc::kill(target, libc::SIGKILL) };
    child.wait().unwrap();
    let start = Instant::now();
    let mut left = holders_of(tag);
    while !left.is_empty() && start.elapsed() < Duration::from_secs(3) {
        std::thread::sleep(Duration::from_millis(20));
        left = holders_of(tag);
    }
    for p in &left {
        // SAFETY: as above; cleaning up what the sandbox failed to kill.
        unsafe { libc::kill(*p, libc::SIGKILL) };
    }
    left
}

fn rung_two() -> Sandbox {
    Sandbox::new()
        .filesystem(
            cordon_policy::Access::Read,
            vec![
                entry(":workspace", cordon_policy::Access::Write),
                entry(":tmp", cordon_policy::Access::Write),
            ],
            false,
        )
        .helper_env("CORDON_DISABLE_LAYERS", "userns")
}

/// Rung 2 with the full layer set, or a skip when the host lacks it; then SIGKILLs
/// `victim` while a tagged `sleep` runs and asserts nothing of the command survives.
fn assert_rung_two_sigkill_leaves_nothing(sleep: u32, victim: Victim) {
    if !require(&[Need::Landlock(6), Need::Seccomp]) {
        return;
    }
    let tag = unique_sleep(sleep);
    let left = survivors_after_sigkill(&rung_two(), &tag, victim);
    assert!(left.is_empty(), "survivors: {left:?}");
}

/// P1 (R-L3): on rung 2 (no user namespaces), SIGKILL of the helper — which nothing can
/// catch — still takes every process of the command with it, `setsid` ones included.
/// Fails when the only subreaper is the helper itself (orphans go to pid 1).
#[test]
fn rung_two_sigkill_of_the_helper_leaves_nothing_behind() {
    assert_rung_two_sigkill_leaves_nothing(2345, Victim::Helper);
}

/// The same when the whole process group of the helper is SIGKILLed (what a harness that
/// runs each command in its own group does on timeout).
#[test]
fn rung_two_sigkill_of_the_process_group_leaves_nothing_behind() {
    assert_rung_two_sigkill_leaves_nothing(2346, Victim::HelperGroup);
}

/// And when the supervisor itself is SIGKILLed: its orphans go to the helper (also a
/// subreaper), which sweeps them once it sees the supervisor gone.
#[test]
fn rung_two_sigkill_of_the_supervisor_leaves_nothing_behind() {
    assert_rung_two_sigkill_leaves_nothing(2348, Victim::HelperChild);
}

/// Rung 1: the pid namespace's init dies with the helper and takes the namespace with it.
#[test]
fn rung_one_sigkill_of_the_helper_leaves_nothing_behind() {
    if !require_full() {
        return;
    }
    for (name, victim) in [
        ("helper", Victim::Helper),
        ("group", Victim::HelperGroup),
        ("init", Victim::HelperChild),
    ] {
        let tag = unique_sleep(2347);
        let left = survivors_after_sigkill(&Sandbox::new(), &tag, victim);
        assert!(left.is_empty(), "{name}: survivors: {left:?}");
    }
}

/// Rung 2 still forwards signals and reports the command's own exit code through the
/// supervisor, and a terminal-less run keeps working.
#[test]
fn rung_two_signals_and_exit_codes_pass_through_the_supervisor() {
    if !require(&[Need::Landlock(6), Need::Seccomp]) {
        return;
    }
    let s = rung_two();
    assert_eq!(s.sh("exit 3").status.code(), Some(3));
    assert_eq!(s.sh("kill -KILL $$").status.code(), Some(137));
    assert_eq!(s.run(&["no-such-command-xyz"]).status.code(), Some(127));
    let mut child =
        s.spawn_sh("trap 'echo got-term; exit 7' TERM; echo ready; while :; do sleep 0.05; done");
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    out.read_line(&mut line).unwrap();
    assert_eq!(line, "ready\n");
    // SAFETY: kill has no memory-safety preconditions; the pid is our child.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) };
    let status = child.wait().unwrap();
    line.clear();
    out.read_line(&mut line).unwrap();
    assert_eq!(line, "got-term\n");
    assert_eq!(status.code(), Some(7));
}

/// Runs `script` with stdout on `out` (opened write-only) and stdin on `input` (read-only),
/// both outside every writable root; returns (exit code, stderr).
fn with_stdio_files(s: &Sandbox, script: &str, out: &Path, input: &Path) -> (i32, String) {
    let o = s
        .command(&["sh", "-c", script])
        .stdout(std::fs::OpenOptions::new().write(true).open(out).unwrap())
        .stdin(std::fs::File::open(input).unwrap())
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    (o.status.code().unwrap_or(-1), stderr(&o))
}

fn check_stdio_reopen(s: &Sandbox) {
    let dir = outside_dir();
    let out = dir.path().join("out.log");
    let input = dir.path().join("in.txt");
    let sibling = dir.path().join("sibling.txt");
    write(&out, "old contents\n");
    write(&input, "input-data\n");
    write(&sibling, "orig\n");
    let script = format!(
        "echo x > /dev/stdout && echo REOPEN-OK >&2; echo y >> /dev/stdout; \
         cat /dev/stdin >&2; cat < /proc/self/fd/0 >&2; \
         echo pwn > {sib} || echo SIBLING-DENIED >&2",
        sib = q(&sibling)
    );
    let (code, err) = with_stdio_files(s, &script, &out, &input);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("REOPEN-OK"), "{err}");
    assert_eq!(err.matches("input-data").count(), 2, "{err}");
    assert!(err.contains("SIBLING-DENIED"), "{err}");
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "x\ny\n");
    assert_eq!(std::fs::read_to_string(&sibling).unwrap(), "orig\n");
}

/// Item 6: a script that writes to `/dev/stdout` (or reads `/dev/stdin`) works when the
/// harness redirected it to a file outside the writable roots: re-opening a descriptor the
/// command already holds, with the access it was opened with, is not a new grant. A
/// sibling of that file stays read-only. Fails when Landlock sees only the profile's rules.
#[test]
fn dev_stdout_redirected_to_a_file_outside_can_be_reopened() {
    if !require_full() {
        return;
    }
    check_stdio_reopen(&Sandbox::new());
}

/// The same on rung 2, where Landlock is the whole filesystem policy.
#[test]
fn rung_two_dev_stdout_redirected_to_a_file_outside_can_be_reopened() {
    if !require(&[Need::Landlock(6), Need::Seccomp]) {
        return;
    }
    check_stdio_reopen(&rung_two());
}

/// The stdio allowance is exactly the descriptor's file with the descriptor's access: a
/// write-only stdout cannot be read back through `/dev/stdout`, and a directory given as
/// stdin grants nothing beneath it (default-deny profile on rung 2, where Landlock decides
/// alone).
#[test]
fn stdio_allowance_is_the_file_with_its_access_only() {
    if !require(&[Need::Landlock(6), Need::Seccomp]) {
        return;
    }
    use cordon_policy::Access;
    let s = Sandbox::new()
        .filesystem(
            Access::Deny,
            vec![
                entry(":minimal", Access::Read),
                entry(":workspace", Access::Write),
            ],
            false,
        )
        .helper_env("CORDON_DISABLE_LAYERS", "userns");
    let dir = outside_dir();
    let out = dir.path().join("out.log");
    let input = dir.path().join("in.txt");
    let sibling = dir.path().join("sibling.txt");
    write(&out, "secret-old-contents\n");
    write(&input, "input-data\n");
    write(&sibling, "sibling-data\n");
    let script = format!(
        "cat < /dev/stdout >&2 || echo READBACK-DENIED >&2; \
         cat {sib} >&2 || echo SIBLING-DENIED >&2; \
         cat /dev/stdin >&2; echo ok > /dev/stdout && echo REOPEN-OK >&2",
        sib = q(&sibling)
    );
    let (code, err) = with_stdio_files(&s, &script, &out, &input);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("REOPEN-OK"), "{err}");
    assert!(err.contains("SIBLING-DENIED"), "{err}");
    assert!(!err.contains("sibling-data"), "{err}");
    assert!(err.contains("input-data"), "{err}");
    assert!(err.contains("READBACK-DENIED"), "{err}");
    assert!(!err.contains("secret-old-contents"), "{err}");
    // A directory as stdin is refused outright (issue 7 item 8): nothing runs, nothing
    // beneath it is read.
    let o = s
        .command(&[
            "sh",
            "-c",
            &format!("ls /dev/stdin/ >&2; cat {} >&2; echo done >&2", q(&sibling)),
        ])
        .stdin(std::fs::File::open(dir.path()).unwrap())
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(125), "{err}");
    assert!(err.contains("is a directory"), "{err}");
    assert!(
        !err.contains("done") && !err.contains("sibling-data") && !err.contains("out.log"),
        "{err}"
    );
}
