//! R-L1: writes only inside writable roots, whatever the route (symlinks, hard links,
//! renames, /proc/*/root); deny-read entries unreadable with an empty listing; reads and
//! ordinary work inside the workspace keep working.
#![cfg(target_os = "linux")]

mod support;
use std::path::Path;
use support::*;

/// A host file outside every writable root, owned by whoever runs the tests.
fn outside_file() -> (tempfile::TempDir, std::path::PathBuf) {
    let d = outside_dir();
    let f = d.path().join("target.txt");
    write(&f, "orig\n");
    (d, f)
}

fn content(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_default()
}

#[test]
fn direct_write_outside_fails_write_inside_works() {
    if !require_full() {
        return;
    }
    let (_d, target) = outside_file();
    let s = Sandbox::new();
    let o = s.sh(&format!("echo pwned > {}", q(&target)));
    assert_fails(&o);
    assert_eq!(content(&target), "orig\n");
    // Appending, truncating and touching fail the same way.
    let o = s.sh(&format!(
        "echo x >> {t} || : ; truncate -s 0 {t} || : ; touch {t}.new || : ; exit 0",
        t = q(&target)
    ));
    assert_ok(&o);
    assert_eq!(content(&target), "orig\n");
    assert!(!target.with_extension("txt.new").exists());
    // Twin: the workspace is writable.
    let o = s.sh("echo ok > inside.txt && cat inside.txt");
    assert_ok(&o);
    assert_eq!(content(&s.ws.join("inside.txt")), "ok\n");
}

#[test]
fn root_owned_file_outside_is_not_writable_even_as_root() {
    if !require_full() {
        return;
    }
    let (_d, target) = outside_file();
    use std::os::unix::fs::MetadataExt;
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    if root {
        assert_eq!(std::fs::metadata(&target).unwrap().uid(), 0);
    }
    let s = Sandbox::new();
    let o = s.sh(&format!(
        "id -u; echo pwned > {t}; chmod 777 {t}; chown 1:1 {t}; exit 0",
        t = q(&target)
    ));
    assert_ok(&o);
    if root {
        assert_eq!(stdout(&o).lines().next(), Some("0"), "uid 0 maps to itself");
    }
    assert_eq!(content(&target), "orig\n");
    let m = std::fs::metadata(&target).unwrap();
    assert_eq!(m.mode() & 0o777, 0o644);
    assert_ne!(m.uid(), 1);
}

#[test]
fn symlinks_in_the_workspace_do_not_lead_outside() {
    if !require_full() {
        return;
    }
    let (d, target) = outside_file();
    let s = Sandbox::new();
    // A symlink planted by the host, one created inside, and a symlinked directory.
    std::os::unix::fs::symlink(&target, s.ws.join("host-link")).unwrap();
    std::os::unix::fs::symlink(d.path(), s.ws.join("dir-link")).unwrap();
    let o = s.sh(&format!(
        "echo a > host-link; ln -s {t} own-link && echo b > own-link; \
         echo c > dir-link/new.txt; echo d > dir-link/target.txt; exit 0",
        t = q(&target)
    ));
    assert_ok(&o);
    assert_eq!(content(&target), "orig\n");
    assert!(!d.path().join("new.txt").exists());
    // Twin: a symlink to a workspace file works, and reading through the link works.
    let o = s.sh("echo in > real.txt && ln -s real.txt l && echo more >> l && cat l host-link");
    assert_ok(&o);
    assert_eq!(stdout(&o), "in\nmore\norig\n");
}

#[test]
fn hard_links_and_renames_cannot_move_data_across() {
    if !require_full() {
        return;
    }
    let (d, target) = outside_file();
    let s = Sandbox::new();
    write(&s.ws.join("mine.txt"), "mine\n");
    let o = s.sh(&format!(
        "if ln {t} hl; then echo LINKED; echo x >> hl; fi; mv mine.txt {dir}/; \
         mv {t} stolen.txt; cp {t} copy.txt; exit 0",
        t = q(&target),
        dir = q(d.path())
    ));
    assert_ok(&o);
    assert!(
        !stdout(&o).contains("LINKED"),
        "hard link of an outside file"
    );
    assert_eq!(content(&target), "orig\n");
    assert!(s.ws.join("mine.txt").exists(), "mv out of the workspace");
    assert!(!d.path().join("mine.txt").exists());
    // mv of an outside file in degrades to copy + unlink: the copy is a read (allowed),
    // the unlink is not.
    assert!(target.exists(), "mv of an outside file in removed it");
    // Twin: copying in (a read) works, renames within the workspace work.
    assert_eq!(content(&s.ws.join("copy.txt")), "orig\n");
    let o = s.sh("mkdir sub && mv mine.txt sub/ && ln sub/mine.txt hl2 && cat hl2");
    assert_ok(&o);
    assert_eq!(stdout(&o), "mine\n");
}

#[test]
fn deleting_outside_fails() {
    if !require_full() {
        return;
    }
    let (d, target) = outside_file();
    std::fs::create_dir(d.path().join("sub")).unwrap();
    let s = Sandbox::new();
    let o = s.sh(&format!(
        "rm -f {t}; rmdir {sub}; rm -rf {dir}; exit 0",
        t = q(&target),
        sub = q(&d.path().join("sub")),
        dir = q(d.path())
    ));
    assert_ok(&o);
    assert!(target.exists());
    assert!(d.path().join("sub").is_dir());
    // Twin.
    write(&s.ws.join("gone.txt"), "x");
    assert_ok(&s.sh("rm gone.txt"));
    assert!(!s.ws.join("gone.txt").exists());
}

#[test]
fn proc_root_links_stay_inside() {
    if !require_full() {
        return;
    }
    let (_d, target) = outside_file();
    let s = Sandbox::new();
    let t = target.display().to_string();
    let o = s.sh(&format!(
        "echo a > /proc/self/root{t}; echo b > /proc/1/root{t}; echo c > /proc/$$/root{t}; \
         ls /proc | grep -c '^[0-9]'; exit 0"
    ));
    assert_ok(&o);
    assert_eq!(content(&target), "orig\n");
    // A fresh /proc for the pid namespace: only the sandbox's few processes.
    let n: usize = stdout(&o).trim().parse().unwrap();
    assert!(n <= 6, "{n} processes visible");
    // Twin: the same route into the workspace works.
    let ws = s.ws.display().to_string();
    let o = s.sh(&format!("echo ok > /proc/self/root{ws}/via-proc.txt"));
    assert_ok(&o);
    assert_eq!(content(&s.ws.join("via-proc.txt")), "ok\n");
}

#[test]
fn ordinary_work_in_the_workspace() {
    if !require_full() {
        return;
    }
    let (_d, target) = outside_file();
    let s = Sandbox::new();
    let o = s.sh(&format!(
        "printf '#!/bin/sh\\necho script-ran\\n' > s.sh && chmod +x s.sh && ./s.sh && \
         python3 -c 'open(\"py.txt\",\"w\").write(\"py\")' && cat py.txt && echo && \
         f=$(mktemp) && echo tmp > \"$f\" && cat \"$f\" && echo \"$TMPDIR\" && \
         cat {t} && head -c 4 /dev/urandom | wc -c && echo x > /dev/null && ls /dev/shm",
        t = q(&target)
    ));
    assert_ok(&o);
    assert_eq!(
        stdout(&o),
        "script-ran\npy\ntmp\n/tmp\norig\n4\n",
        "stderr: {}",
        stderr(&o)
    );
}

#[test]
fn workspace_outside_tmp_and_private_tmp() {
    if !require_full() {
        return;
    }
    let s = Sandbox::in_base(OUTSIDE_BASE);
    let host_tmp = tempdir_in("/tmp");
    write(&host_tmp.path().join("host-secret.txt"), "x");
    let o = s.sh(&format!(
        "echo ok > w.txt && mktemp >/dev/null && ls -A /tmp | wc -l; ls {h}; \
         echo pwn > /etc/cordon-test-pwn; exit 0",
        h = q(host_tmp.path())
    ));
    assert_ok(&o);
    assert_eq!(content(&s.ws.join("w.txt")), "ok\n");
    // The host /tmp is not visible: only the file mktemp made.
    assert_eq!(stdout(&o).trim(), "1");
    assert!(!Path::new("/etc/cordon-test-pwn").exists());
    assert!(stderr(&o).contains("No such file"), "{}", stderr(&o));
}

#[test]
fn deny_read_hides_credentials_but_not_the_rest_of_home() {
    if !require_full() {
        return;
    }
    let s = Sandbox::new();
    write(&s.home.join(".ssh/id_rsa"), "SECRET-KEY\n");
    write(&s.home.join(".netrc"), "machine x password SECRET-NETRC\n");
    write(&s.home.join("notes.txt"), "visible\n");
    let o = s.sh(
        "cat ~/.ssh/id_rsa; cat ~/.netrc; echo \"[$(ls -A ~/.ssh 2>/dev/null)]\"; \
         cp ~/.ssh/id_rsa stolen 2>/dev/null; cat ~/notes.txt; exit 0",
    );
    assert_ok(&o);
    let out = stdout(&o);
    assert!(!out.contains("SECRET"), "{out}");
    assert!(out.contains("[]"), "listing must be empty: {out}");
    assert!(out.contains("visible"), "{out}");
    assert!(!s.ws.join("stolen").exists());
    assert!(stderr(&o).contains("Permission denied"), "{}", stderr(&o));
    // The host copy is untouched.
    assert_eq!(content(&s.home.join(".ssh/id_rsa")), "SECRET-KEY\n");
}

#[test]
fn inherited_descriptors_do_not_reach_the_command() {
    if !require_full() {
        return;
    }
    let (_d, target) = outside_file();
    let c = std::ffi::CString::new(target.display().to_string()).unwrap();
    // SAFETY: a plain open without O_CLOEXEC, so the helper inherits it.
    let fd = unsafe { libc::open(c.as_ptr(), libc::O_WRONLY | libc::O_APPEND) };
    assert!(fd > 2);
    let s = Sandbox::new();
    // Written by python: dash reads `>&N` with N above 9 as a syntax error ("Bad fd
    // number"), and parallel tests often hold descriptors that high (a flaky failure).
    let o = s.sh(&format!(
        "python3 -c 'import os\ntry:\n    os.write({fd}, b\"pwned\"); print(\"WROTE\")\nexcept OSError: pass'; exit 0"
    ));
    // SAFETY: closing the descriptor opened above.
    unsafe { libc::close(fd) };
    assert_ok(&o);
    assert!(!stdout(&o).contains("WROTE"));
    assert_eq!(content(&target), "orig\n");
}
