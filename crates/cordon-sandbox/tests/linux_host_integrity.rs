//! R-H3: nothing the command creates or changes carries setuid/setgid bits or file
//! capabilities on the host (issue 7 item 5); R-L1: a directory or `O_PATH` descriptor
//! given as stdio is refused (issue 7 item 8). Each escape test has a "still works" twin.
#![cfg(target_os = "linux")]

mod support;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use support::*;

/// Every file under `dir` (not following symlinks) whose mode has a set-id bit.
fn set_id_files(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let Ok(m) = e.path().symlink_metadata() else {
                continue;
            };
            if m.permissions().mode() & 0o6000 != 0 {
                out.push(format!(
                    "{} {:o}",
                    e.path().display(),
                    m.permissions().mode()
                ));
            }
            if m.is_dir() {
                stack.push(e.path());
            }
        }
    }
    out
}

/// Every route a command has to a set-id file, as a script that reports each attempt and
/// always exits 0 (the host-side check decides).
const SET_ID_ATTEMPTS: &str = r#"
cp /bin/sh x
chmod 4755 x && echo "chmod 4755 worked"
chmod 2755 x && echo "chmod 2755 worked"
chmod u+s x && echo "chmod u+s worked"
install -m 4755 /bin/sh y && echo "install -m 4755 worked"
mkdir -m 2755 d && echo "mkdir -m 2755 worked"
python3 - <<'EOF'
import os, stat
def attempt(name, f):
    try:
        f()
        print(name + " worked")
    except OSError as e:
        print(name + " failed: " + e.strerror)
attempt("open(O_CREAT, 04755)", lambda: os.close(os.open("z", os.O_CREAT | os.O_WRONLY, 0o4755)))
attempt("open(O_CREAT|O_EXCL, 02755)", lambda: os.close(os.open("z2", os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o2755)))
attempt("os.mkdir 02755", lambda: os.mkdir("d2", 0o2755))
attempt("os.chmod 04755", lambda: os.chmod("x", 0o4755))
attempt("fchmod 06755", lambda: os.fchmod(os.open("x", os.O_RDONLY), 0o6755))
attempt("mknod S_ISUID", lambda: os.mknod("n", stat.S_IFREG | 0o4755))
# File capabilities: a v2 vfs_cap_data giving cap_setuid, effective.
import struct
cap = struct.pack("<IIIII", 0x02000001, 1 << 7, 0, 0, 0)
attempt("setxattr security.capability", lambda: os.setxattr("x", "security.capability", cap))
EOF
exit 0
"#;

fn assert_no_set_id(s: &Sandbox) {
    let o = s.sh(SET_ID_ATTEMPTS);
    assert_ok(&o);
    let out = stdout(&o);
    assert!(
        !out.contains("worked"),
        "an attempt worked:\n{out}\n{}",
        stderr(&o)
    );
    let left = set_id_files(&s.ws);
    assert!(
        left.is_empty(),
        "set-id files left on the host: {left:?}\n{out}"
    );
    // No file capabilities either.
    let x = s.ws.join("x");
    assert!(x.exists(), "cp /bin/sh x must work: {}", stderr(&o));
    let mut buf = [0u8; 64];
    let c = std::ffi::CString::new(x.to_str().unwrap()).unwrap();
    // SAFETY: valid NUL-terminated path and a writable buffer of the given length.
    let n = unsafe {
        libc::getxattr(
            c.as_ptr(),
            c"security.capability".as_ptr(),
            buf.as_mut_ptr().cast(),
            buf.len(),
        )
    };
    assert!(n < 0, "security.capability was set on the host file");
}

/// The still-works twin: ordinary modes, executable files from git, `cp -p`.
const PLAIN_MODES: &str = r#"
set -e
echo 'echo hi' > s.sh
chmod 755 s.sh
chmod +x s.sh
./s.sh
cp -p s.sh s2.sh
install -m 755 s.sh s3.sh
mkdir -m 700 priv
python3 -c 'import os; os.chmod("s.sh", 0o644); os.close(os.open("new", os.O_CREAT|os.O_WRONLY, 0o600))'
git init -q repo
cd repo
git config user.email t@e; git config user.name t
printf '#!/bin/sh\necho from-git\n' > run.sh
chmod +x run.sh
git add run.sh
git commit -qm one
rm run.sh
git checkout -- run.sh
./run.sh
"#;

fn assert_plain_modes_work(s: &Sandbox) {
    let o = s.sh(PLAIN_MODES);
    assert_ok(&o);
    assert!(stdout(&o).contains("from-git"), "{}", stdout(&o));
    let mode = |p: &str| {
        std::fs::metadata(s.ws.join(p))
            .unwrap()
            .permissions()
            .mode()
            & 0o7777
    };
    assert_eq!(mode("s.sh"), 0o644);
    assert_eq!(mode("s3.sh"), 0o755);
    assert_eq!(mode("priv"), 0o700);
    assert_eq!(mode("repo/run.sh") & 0o111, 0o111);
}

/// Issue 7 item 5, rung 1.
#[test]
fn no_set_id_files_or_file_capabilities_rung_one() {
    if !require(&[
        Need::Userns,
        Need::Seccomp,
        Need::Tool("python3"),
        Need::Tool("install"),
    ]) {
        return;
    }
    assert_no_set_id(&Sandbox::new());
}

/// Issue 7 item 5, rung 2 (no user namespace: a root-started command is really root).
#[test]
fn no_set_id_files_or_file_capabilities_rung_two() {
    if !require(&[Need::Landlock(6), Need::Seccomp, Need::Tool("python3")]) {
        return;
    }
    let mut s = Sandbox::new().filesystem(
        cordon_policy::Access::Read,
        vec![
            entry(":workspace", cordon_policy::Access::Write),
            entry(":tmp", cordon_policy::Access::Write),
        ],
        false,
    );
    s.disabled_layers = vec!["userns".into()];
    assert_no_set_id(&s);
}

#[test]
fn plain_modes_and_executable_files_still_work() {
    if !require(&[
        Need::Userns,
        Need::Seccomp,
        Need::Tool("python3"),
        Need::Tool("git"),
    ]) {
        return;
    }
    assert_plain_modes_work(&Sandbox::new());
    let mut s = Sandbox::new().filesystem(
        cordon_policy::Access::Read,
        vec![
            entry(":workspace", cordon_policy::Access::Write),
            entry(":tmp", cordon_policy::Access::Write),
        ],
        false,
    );
    s.disabled_layers = vec!["userns".into()];
    if require(&[Need::Landlock(6)]) {
        assert_plain_modes_work(&s);
    }
}

/// `openat2` answers ENOSYS; glibc, python and coreutils fall back without a word.
#[test]
fn openat2_enosys_and_libc_fallback() {
    if !require(&[Need::Userns, Need::Seccomp, Need::Tool("python3")]) {
        return;
    }
    let s = Sandbox::new();
    let o = s.sh(r#"python3 - <<'EOF'
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
# struct open_how { u64 flags; u64 mode; u64 resolve; }
how = (ctypes.c_uint64 * 3)(os.O_RDONLY, 0, 0)
r = libc.syscall(437, -100, b"/", ctypes.byref(how), 24)
print("openat2", r, ctypes.get_errno())
EOF
cat /etc/hostname >/dev/null && ls / >/dev/null && echo tools-ok"#);
    assert_ok(&o);
    let out = stdout(&o);
    assert!(
        out.contains(&format!("openat2 -1 {}", libc::ENOSYS)),
        "{out}"
    );
    assert!(out.contains("tools-ok"), "{out}");
}

/// Opens `p` with `flags` (O_CLOEXEC added).
fn open_fd(p: &Path, flags: libc::c_int) -> std::os::fd::OwnedFd {
    use std::os::fd::FromRawFd;
    let c = std::ffi::CString::new(p.to_str().unwrap()).unwrap();
    // SAFETY: valid NUL-terminated path; the descriptor is owned from here on.
    let fd = unsafe { libc::open(c.as_ptr(), flags | libc::O_CLOEXEC) };
    assert!(fd >= 0, "open {}", p.display());
    // SAFETY: `fd` is a fresh descriptor nobody else owns.
    unsafe { std::os::fd::OwnedFd::from_raw_fd(fd) }
}

/// Issue 7 item 8: `cordon run -- reader < ~` would let the command `openat(0, ".ssh/…")`
/// past the deny mask. A directory or O_PATH descriptor on stdin, stdout or stderr is
/// refused (125, a message naming it), and the command never runs. Twin: a file, a pipe
/// and /dev/null on stdio work.
#[test]
fn directory_and_o_path_stdio_are_refused() {
    if !require(&[Need::Userns, Need::Tool("python3")]) {
        return;
    }
    let s = Sandbox::new();
    write(&s.home.join(".ssh/id_test"), "SECRET-KEY\n");
    let reader = "import os, sys\n\
                  fd = os.open('.ssh/id_test', os.O_RDONLY, dir_fd=0)\n\
                  sys.stderr.write(os.read(fd, 100).decode())";
    let cases: Vec<(&str, std::process::Stdio, u8)> = vec![
        (
            "< ~",
            open_fd(&s.home, libc::O_RDONLY | libc::O_DIRECTORY).into(),
            0,
        ),
        ("0<& O_PATH", open_fd(&s.home, libc::O_PATH).into(), 0),
        (
            "> dir (read-only dir as stdout)",
            open_fd(&s.home, libc::O_RDONLY).into(),
            1,
        ),
        (
            "O_PATH file as stdout",
            open_fd(&s.home.join(".ssh/id_test"), libc::O_PATH).into(),
            1,
        ),
    ];
    for (what, stdio, which) in cases {
        let mut c = s.command(&["python3", "-c", reader]);
        c.stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        if which == 0 {
            c.stdin(stdio);
        } else {
            c.stdout(stdio);
        }
        let o = c.output().unwrap();
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(125), "{what}: {err}");
        assert!(!err.contains("SECRET"), "{what}: the key leaked: {err}");
        assert!(err.contains("refusing to run"), "{what}: {err}");
        assert!(
            err.contains("a directory") || err.contains("O_PATH"),
            "{what}: {err}"
        );
    }
    // Twin: data streams on stdio are fine.
    write(&s.ws.join("in.txt"), "data\n");
    let o = s
        .command(&["sh", "-c", "cat; echo done"])
        .stdin(std::fs::File::open(s.ws.join("in.txt")).unwrap())
        .output()
        .unwrap();
    assert_ok(&o);
    assert_eq!(stdout(&o), "data\ndone\n");
    let mut ch = s
        .command(&["cat"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    ch.stdin.take().unwrap().write_all(b"piped\n").unwrap();
    let o = ch.wait_with_output().unwrap();
    assert_ok(&o);
    assert_eq!(stdout(&o), "piped\n");
}
