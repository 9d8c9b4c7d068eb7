//! R-L3 / R-L4: no signals to host processes, no new namespaces or mounts, every process
//! gone when the command exits, exit codes and signals propagated, capabilities dropped
//! even as root, and exactly the payload environment.
#![cfg(target_os = "linux")]

mod support;
use std::io::{BufRead, BufReader};
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
    if !require_full() {
        return;
    }
    let s = Sandbox::new();
    let o = s.sh(
        "unshare -r true && echo UNSHARE-R; unshare -m true && echo UNSHARE-M; \
         mkdir -p /tmp/x && mount -t tmpfs none /tmp/x && echo MOUNTED; \
         mount --bind / /tmp/x && echo BOUND; umount /proc && echo UMOUNTED; \
         strace -o /dev/null true && echo TRACED; exit 0",
    );
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
    let mut want: Vec<String> = s
        .env
        .iter()
        .filter(|(k, _)| k != "TMPDIR")
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    // TMPDIR pointed nowhere useful: replaced by the private /tmp.
    want.push("TMPDIR=/tmp".into());
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
