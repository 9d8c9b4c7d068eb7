//! R-L6: `confine_current_process` confines the calling process for good (here: a
//! re-executed copy of this test binary running one test on its main thread), and refuses
//! a multi-threaded process instead of confining one thread silently.
#![cfg(target_os = "linux")]

mod support;
use cordon_policy::Access;
use cordon_sandbox::linux::{confine_current_process, probe_fast, ConfineError};
use std::process::Command;
use support::*;

const CHILD_ENV: &str = "CORDON_SELF_CONFINE_CHILD";

/// In the re-executed child: fork (the harness keeps a thread of its own; the forked
/// process has only this one), confine, then try to write outside and inside. Results go
/// to stdout as one line written with a raw `write(2)`.
#[test]
fn self_confine_child() {
    let Ok(spec) = std::env::var(CHILD_ENV) else {
        return; // only meaningful in the child
    };
    let (ws, outside) = spec.split_once('|').unwrap();
    let s =
        Sandbox::in_base("/tmp").filesystem(Access::Read, vec![entry(ws, Access::Write)], false);
    let resolved = s.resolved();
    let features = probe_fast();
    // SAFETY: the other thread of this process is the harness's main thread, parked in a
    // join; the child only runs this function's code and exits with _exit.
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        let line = match confine_current_process(&resolved, &features) {
            Ok(applied) => {
                let w_out = std::fs::write(outside, "pwned").is_ok();
                let w_in = std::fs::write(format!("{ws}/inside.txt"), "ok").is_ok();
                let sock = std::os::unix::net::UnixDatagram::unbound().is_ok();
                format!(
                    "APPLIED {}\nOUTSIDE {w_out} INSIDE {w_in} SOCKET {sock}\n",
                    applied
                        .iter()
                        .map(|l| l.to_string())
                        .collect::<Vec<_>>()
                        .join("; ")
                )
            }
            Err(e) => format!("REFUSED {e}\n"),
        };
        // SAFETY: writing a valid buffer to stdout, then leaving without unwinding.
        unsafe {
            libc::write(1, line.as_ptr() as *const libc::c_void, line.len());
            libc::_exit(0);
        }
    }
    let mut st = 0;
    // SAFETY: waiting for our own child.
    unsafe { libc::waitpid(pid, &mut st, 0) };
}

#[test]
fn confine_current_process_is_irreversible_and_reported() {
    if !require(&[Need::Landlock(6), Need::Seccomp]) {
        return;
    }
    let ws = tempdir_in("/tmp");
    let out = outside_dir();
    let target = out.path().join("t.txt");
    write(&target, "orig");
    let o = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "self_confine_child",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(
            CHILD_ENV,
            format!("{}|{}", ws.path().display(), target.display()),
        )
        .output()
        .unwrap();
    let out_s = stdout(&o);
    assert!(out_s.contains("APPLIED"), "{out_s}\n{}", stderr(&o));
    assert!(out_s.contains("landlock ABI"), "{out_s}");
    assert!(
        out_s.contains("OUTSIDE false INSIDE true SOCKET false"),
        "{out_s}"
    );
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "orig");
}

#[test]
fn multi_threaded_process_is_refused() {
    // The test harness runs tests on worker threads; make sure there are several.
    let t = std::thread::spawn(|| std::thread::sleep(std::time::Duration::from_millis(200)));
    let s = Sandbox::new().filesystem(
        Access::Read,
        vec![entry(":workspace", Access::Write)],
        false,
    );
    let r = confine_current_process(&s.resolved(), &probe_fast());
    assert!(
        matches!(r, Err(ConfineError::MultiThreaded(n)) if n > 1),
        "{r:?}"
    );
    t.join().unwrap();
    // Still unconfined: this process can write outside.
    let d = outside_dir();
    std::fs::write(d.path().join("x"), "x").unwrap();
}
