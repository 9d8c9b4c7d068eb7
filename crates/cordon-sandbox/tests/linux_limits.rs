//! R-H5: resource limits. A fork bomb under `pids = 64`, memory under `memory = "64M"`
//! and a `sleep 30` under `timeout = "200ms"` end as `limit-exceeded{which}` (exit 124)
//! within seconds with no process of the tree left; `/tmp` is a tmpfs of `limits.tmpfs`
//! bytes. Bounded: small limits, short timeouts. Each "escape" test fails when its
//! enforcement is removed; the still-works twins run ordinary work under the same limits.
#![cfg(target_os = "linux")]

mod support;
use cordon_policy::limits::{LimitValue, Limits, ResolvedLimits};
use std::time::{Duration, Instant};
use support::*;

fn text(s: &str) -> Option<LimitValue> {
    Some(LimitValue::Text(s.into()))
}

/// Whether this host gives cordon a cgroup with pids and memory limits (root on a v1 host,
/// or a delegated v2 subtree). Missing: a skip, or a failure with `CI=true`.
fn require_cgroup() -> bool {
    let r = ResolvedLimits {
        pids: Some(64),
        memory_bytes: Some(64 << 20),
        ..Default::default()
    };
    let how = cordon_sandbox::linux::limits::describe(&r);
    let ok = how.iter().any(|h| h.starts_with("pids 64: cgroup"))
        && how
            .iter()
            .any(|h| h.contains("cgroup") && h.starts_with("memory"));
    if ok {
        return true;
    }
    let msg = format!("no cgroup for cordon on this host: {how:?}");
    if std::env::var("CI").as_deref() == Ok("true") {
        panic!("{msg} (CI=true: failing instead of skipping)");
    }
    eprintln!("SKIPPED: {msg}");
    false
}

fn sandbox(limits: Limits) -> Sandbox {
    let mut s = Sandbox::new();
    s.profile.limits = limits;
    s
}

/// Processes whose command line contains `marker`, anywhere on the host.
fn survivors(marker: &str) -> Vec<String> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        if let Ok(c) = std::fs::read(e.path().join("cmdline")) {
            let c = String::from_utf8_lossy(&c).replace('\0', " ");
            if c.contains(marker) && !c.contains("linux_limits") {
                out.push(format!("{}: {c}", e.file_name().to_string_lossy()));
            }
        }
    }
    out
}

#[test]
fn timeout_kills_the_whole_tree() {
    if !require_full() {
        return;
    }
    let s = sandbox(Limits {
        timeout: text("200ms"),
        ..Limits::default()
    });
    let t = Instant::now();
    let o = s.sh("sleep 31.5 & sleep 30.5; echo NOT-KILLED");
    let took = t.elapsed();
    assert_eq!(o.status.code(), Some(124), "{}", stderr(&o));
    assert!(took < Duration::from_secs(5), "took {took:?}");
    assert!(!stdout(&o).contains("NOT-KILLED"));
    assert!(
        stderr(&o).contains("limit-exceeded{timeout}"),
        "{}",
        stderr(&o)
    );
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(survivors("sleep 31.5"), Vec::<String>::new());
    assert_eq!(survivors("sleep 30.5"), Vec::<String>::new());
}

#[test]
fn a_command_within_the_timeout_keeps_its_exit_code() {
    if !require_full() {
        return;
    }
    let s = sandbox(Limits {
        timeout: text("20s"),
        ..Limits::default()
    });
    let o = s.sh("echo hi > /tmp/x && cat /tmp/x && exit 124");
    // The command's own 124 is its own: no limit line.
    assert_eq!(o.status.code(), Some(124));
    assert_eq!(stdout(&o).trim(), "hi");
    assert!(!stderr(&o).contains("limit-exceeded"), "{}", stderr(&o));
}

#[test]
fn fork_bomb_ends_under_the_pids_limit() {
    if !require_full() || !require_cgroup() {
        return;
    }
    let s = sandbox(Limits {
        pids: Some(LimitValue::Number(64)),
        timeout: text("20s"),
        ..Limits::default()
    });
    let t = Instant::now();
    let o = s.sh("while :; do sleep 29.5 & done");
    assert_eq!(o.status.code(), Some(124), "{}", stderr(&o));
    assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
    assert!(
        stderr(&o).contains("limit-exceeded{pids}"),
        "{}",
        stderr(&o)
    );
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(survivors("sleep 29.5"), Vec::<String>::new());
    // Still works: a few processes under the same limit.
    let o = s.sh("for i in 1 2 3 4 5; do sh -c 'echo $i' & done; wait");
    assert_ok(&o);
    assert_eq!(stdout(&o).lines().count(), 5);
}

#[test]
fn private_tmp_is_sized_by_limits_tmpfs() {
    if !require_full() {
        return;
    }
    let s = sandbox(Limits {
        tmpfs: text("16M"),
        ..Limits::default()
    });
    let o = s.sh("head -c 64M /dev/zero > /tmp/f; echo rc=$?; wc -c < /tmp/f; head -c 8M /dev/zero > /dev/shm/g; echo shm=$?");
    let out = stdout(&o);
    assert!(out.contains("rc=1"), "{out} {}", stderr(&o));
    assert!(
        stderr(&o).contains("No space left on device"),
        "{}",
        stderr(&o)
    );
    let size: u64 = out.lines().nth(1).unwrap().trim().parse().unwrap();
    assert!(size <= 16 << 20, "{size}");
    assert!(out.contains("shm=0"), "{out}");
    // Still works: a small temp file.
    let o = s.sh("echo hi > /tmp/small && cat /tmp/small");
    assert_eq!(stdout(&o).trim(), "hi");
}

#[test]
fn memory_limit_ends_a_large_allocation() {
    if !require_full() || !require_cgroup() {
        return;
    }
    let s = sandbox(Limits {
        memory: text("64M"),
        timeout: text("20s"),
        ..Limits::default()
    });
    let o = s.run(&[
        "python3",
        "-c",
        "x = bytearray(256 * 1024 * 1024); x[::4096] = b'1' * len(x[::4096]); print('ALLOCATED')",
    ]);
    assert_eq!(o.status.code(), Some(124), "{} {}", stdout(&o), stderr(&o));
    assert!(!stdout(&o).contains("ALLOCATED"));
    assert!(
        stderr(&o).contains("limit-exceeded{memory}"),
        "{}",
        stderr(&o)
    );
    // Still works: a small allocation.
    let o = s.run(&[
        "python3",
        "-c",
        "x = bytearray(8 * 1024 * 1024); print(len(x))",
    ]);
    assert_ok(&o);
}

#[test]
fn open_files_and_cpu_time_are_rlimits() {
    if !require_full() {
        return;
    }
    let s = sandbox(Limits {
        open_files: Some(LimitValue::Number(100)),
        cpu_time: text("30s"),
        ..Limits::default()
    });
    let o = s.sh("ulimit -n; ulimit -t");
    assert_eq!(
        stdout(&o).split_whitespace().collect::<Vec<_>>(),
        ["100", "30"],
        "{}",
        stderr(&o)
    );
}

/// Pids whose parent is `pid` (from `/proc/*/stat`).
fn children_of(pid: u32) -> Vec<u32> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(stat) = std::fs::read_to_string(e.path().join("stat")) else {
            continue;
        };
        // `pid (comm) state ppid …`; comm may hold spaces and parentheses.
        let Some(rest) = stat.rfind(')').map(|i| &stat[i + 1..]) else {
            continue;
        };
        let ppid = rest
            .split_whitespace()
            .nth(1)
            .and_then(|p| p.parse::<u32>().ok());
        if ppid == Some(pid) {
            if let Ok(p) = e.file_name().to_string_lossy().parse() {
                out.push(p);
            }
        }
    }
    out
}

/// The limits watchdog (timeout, cgroup counters) runs inside the helper while it waits:
/// no forked watchdog process per run (a fork, exit and reap on every cold launch). While
/// a command with a timeout runs, the helper's only child is the sandbox's init; the
/// timeout itself is still enforced (`timeout_kills_the_whole_tree`).
#[test]
fn the_limits_watchdog_is_not_an_extra_process() {
    use std::io::BufRead;
    if !require_full() {
        return;
    }
    let s = sandbox(Limits {
        timeout: text("20s"),
        ..Limits::default()
    });
    let mut child = s.spawn_sh("echo ready; sleep 2");
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert_eq!(line.trim(), "ready");
    std::thread::sleep(Duration::from_millis(200));
    let kids = children_of(child.id());
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(kids.len(), 1, "the helper's children: {kids:?} (init only)");
}

/// Managed network (issue 10 §5): connections to the proxy port cost the command nothing
/// of its pids budget. The proxy accepts on the listener init bound inside the namespace;
/// when init relayed each connection with two threads of its own, 40 held connections
/// under `pids = 24` ran the tree out of tasks and the later ones were never answered.
#[test]
fn proxy_connections_take_nothing_of_the_pids_budget() {
    if !require_full() || !require_cgroup() {
        return;
    }
    let mut s = sandbox(Limits {
        pids: Some(LimitValue::Number(24)),
        timeout: text("30s"),
        ..Limits::default()
    });
    s.profile.network = cordon_policy::NetworkPolicy::Managed;
    // A SOCKS5 greeting on each of 40 connections held open at once: every one answered.
    let o = s.run(&[
        "python3",
        "-c",
        r#"
import socket
held = []
for i in range(40):
    c = socket.create_connection(("127.0.0.1", 3128), timeout=5)
    c.sendall(b"\x05\x01\x00")
    held.append(c)
print(sum(c.recv(2) == b"\x05\x00" for c in held))
"#,
    ]);
    assert_ok(&o);
    assert_eq!(stdout(&o).trim(), "40", "{}", stderr(&o));
}
