//! Kernel-side denial records (issue 9 §5): the seccomp user-notification supervisor in
//! the sandbox's init records the writing path calls the sandbox refuses, on the helper's
//! report channel; the outcome uses them first. One `cordon` process per run.

mod support;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use support::Project;

fn project() -> Project {
    Project::new("cordon-denial-")
}

fn cordon(p: &Project, args: &[&str]) -> Command {
    p.cordon(args)
}

fn run(p: &Project, argv: &[&str]) -> (Output, serde_json::Value) {
    let mut args = vec!["run", "--json", "--yes", "--"];
    args.extend(argv);
    let o = cordon(p, &args).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    let line = err
        .lines()
        .rev()
        .find(|l| l.starts_with('{'))
        .unwrap_or_else(|| panic!("no JSON report in stderr: {err}"));
    let v = serde_json::from_str(line).unwrap();
    (o, v)
}

/// Whether this host gives denial records (`cordon status --json`); with CI=true it must.
fn records_available() -> bool {
    let p = project();
    let o = cordon(&p, &["status", "--json"]).output().unwrap();
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("status --json");
    let src = v["denial_records"]["source"]
        .as_str()
        .unwrap_or("")
        .to_string();
    let ok = src.starts_with("seccomp user notification");
    if !ok {
        if std::env::var("CI").as_deref() == Ok("true") {
            panic!("CI host must give kernel-side denial records, but: {src}");
        }
        eprintln!("SKIP: no denial records on this host: {src}");
    }
    ok
}

fn records(v: &serde_json::Value) -> &Vec<serde_json::Value> {
    v["denials"]["records"]
        .as_array()
        .unwrap_or_else(|| panic!("no denial records in the report: {v}"))
}

fn outside(p: &Project) -> PathBuf {
    let d = p.root.path().join("outside");
    std::fs::create_dir_all(&d).unwrap();
    d.canonicalize().unwrap()
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// New-user pass 150, item 6: a record's `grant` was the raw smallest grant
/// (`/var/tmp/x`, which holds the home) while the report's top-level `grant` was `null`
/// (cordon offers none there). One value: the record's grant is the one offered. Twin: an
/// offered grant is the same in both.
#[test]
fn a_records_grant_is_the_grant_offered() {
    if !records_available() {
        return;
    }
    let p = project();
    let above_home = p.home.parent().unwrap().canonicalize().unwrap();
    let target = above_home.join("o.txt");
    let (_, v) = run(&p, &["touch", s(&target)]);
    assert_eq!(v["outcome"], "sandbox-denied", "{v}");
    assert_eq!(records(&v)[0]["path"], s(&target), "{v}");
    assert!(v["grant"].is_null(), "{v}");
    assert!(records(&v)[0]["grant"].is_null(), "{v}");
    let dir = outside(&p);
    let (_, v) = run(&p, &["touch", s(&dir.join("x"))]);
    assert_eq!(v["grant"], s(&dir), "{v}");
    assert_eq!(records(&v)[0]["grant"], v["grant"], "{v}");
}

/// A write to a read-only path: one record {openat, path, EROFS, read-only rule, -w DIR},
/// and the outcome is sandbox-denied with high confidence from it.
#[test]
fn read_only_write_is_recorded() {
    if !records_available() {
        return;
    }
    let p = project();
    let dir = outside(&p);
    let target = dir.join("x");
    let (o, v) = run(&p, &["touch", s(&target)]);
    assert_eq!(o.status.code(), Some(1));
    let r = records(&v);
    assert_eq!(r.len(), 1, "{v}");
    assert_eq!(r[0]["path"], s(&target), "{v}");
    assert_eq!(r[0]["errno"], "EROFS", "{v}");
    assert!(r[0]["syscall"].as_str().unwrap().starts_with("open"), "{v}");
    assert!(
        r[0]["rule"].as_str().unwrap().starts_with("read-only"),
        "{v}"
    );
    assert_eq!(r[0]["grant"], s(&dir), "{v}");
    assert_eq!(v["outcome"], "sandbox-denied", "{v}");
    assert_eq!(v["confidence"], "high", "{v}");
    assert_eq!(v["syscall"], r[0]["syscall"], "{v}");
    assert!(!target.exists());
    // mkdir, unlink and rename outside too (the directory exists on the host).
    std::fs::write(dir.join("old"), "x").unwrap();
    let script = format!(
        "mkdir {d}/m; rm -f {d}/old; mv {d}/old {d}/new; exit 3",
        d = dir.display()
    );
    let (_, v) = run(&p, &["sh", "-c", &script]);
    let calls: Vec<&str> = records(&v)
        .iter()
        .map(|r| r["syscall"].as_str().unwrap())
        .collect();
    assert_eq!(calls.len(), 3, "{v}");
    assert!(calls[0].starts_with("mkdir"), "{calls:?}");
    assert!(calls[1].starts_with("unlink"), "{calls:?}");
    assert!(calls[2].starts_with("rename"), "{calls:?}");
    assert!(dir.join("old").exists());
}

/// A write to a protected git path (`.git/hooks/pre-commit`): record with the R-P3 rule
/// and EROFS. `.git/config` itself is a writable copy brokered back by allow list (issue
/// 11 §3), so `git branch -m` works and leaves no record, and a code-running key written
/// into the copy never reaches the host file.
#[test]
fn protected_git_path_is_recorded() {
    if !records_available() {
        return;
    }
    let p = project();
    let hook = p.dir.join(".git/hooks/pre-commit");
    let (_, v) = run(
        &p,
        &[
            "sh",
            "-c",
            "echo 'touch /tmp/pwned' > .git/hooks/pre-commit",
        ],
    );
    let r = records(&v);
    assert_eq!(r.len(), 1, "{v}");
    assert_eq!(r[0]["path"], s(&hook), "{v}");
    assert_eq!(r[0]["errno"], "EROFS", "{v}");
    assert!(
        r[0]["rule"]
            .as_str()
            .unwrap()
            .starts_with("protected (R-P3)"),
        "{v}"
    );
    assert_eq!(v["outcome"], "sandbox-denied", "{v}");
    assert_eq!(v["confidence"], "high", "{v}");
    assert!(!hook.exists());
    let before = std::fs::read(p.dir.join(".git/config")).unwrap();
    let (o, v) = run(&p, &["git", "config", "core.fsmonitor", "touch /tmp/pwned"]);
    assert_eq!(o.status.code(), Some(0), "{v}");
    assert!(records(&v).is_empty(), "{v}");
    assert_eq!(std::fs::read(p.dir.join(".git/config")).unwrap(), before);
    let (o, v) = run(&p, &["git", "branch", "-m", "main"]);
    assert_eq!(o.status.code(), Some(0), "{v}");
    assert!(records(&v).is_empty(), "{v}");
}

/// A forged "Permission denied" / "Read-only file system" about a read-only path, with
/// exit 1, stays command-failed: no record backs it, and with records the output alone
/// never makes a filesystem denial.
#[test]
fn forged_stderr_stays_command_failed() {
    if !records_available() {
        return;
    }
    let p = project();
    for line in [
        "Permission denied: /etc/x",
        "touch: cannot touch '/etc/x': Read-only file system",
        "cp: cannot create regular file '/root/.bashrc': Permission denied",
    ] {
        let (o, v) = run(&p, &["sh", "-c", &format!("echo \"{line}\" >&2; exit 1")]);
        assert_eq!(o.status.code(), Some(1));
        assert_eq!(v["outcome"], "command-failed", "{line}: {v}");
        assert_eq!(v["denials"]["total"], 0, "{v}");
        assert!(
            !String::from_utf8_lossy(&o.stderr).contains("-w "),
            "{line}"
        );
    }
}

/// The records survive the command closing every descriptor it has (and reopening
/// stdio): they are kept in init and travel on the helper's channel, which the command
/// never holds.
#[test]
fn records_survive_the_command_closing_its_descriptors() {
    if !records_available() {
        return;
    }
    let p = project();
    let dir = outside(&p);
    let target = dir.join("y");
    let script = format!(
        "import os\n\
         os.closerange(0, 4096)\n\
         for i in range(3): os.open('/dev/null', os.O_RDWR)\n\
         try: os.open('{t}', os.O_WRONLY | os.O_CREAT)\n\
         except OSError: pass\n\
         os.closerange(0, 4096)\n\
         os._exit(7)\n",
        t = target.display()
    );
    let (o, v) = run(&p, &["python3", "-c", &script]);
    assert_eq!(o.status.code(), Some(7));
    let r = records(&v);
    assert_eq!(r.len(), 1, "{v}");
    assert_eq!(r[0]["path"], s(&target), "{v}");
}

/// A race cannot turn the supervisor into an allow: while one thread swaps a symlink
/// between a writable directory and a read-only one (and renames the directory), another
/// keeps creating files through it. Whatever the supervisor judged, the kernel's mounts
/// still refuse every write to the read-only side.
#[test]
fn a_race_cannot_make_the_supervisor_allow_a_write() {
    if !records_available() {
        return;
    }
    let p = project();
    let dir = outside(&p);
    let script = format!(
        "import os, threading, time\n\
         os.makedirs('w', exist_ok=True)\n\
         stop = False\n\
         def swap():\n\
         \x20   i = 0\n\
         \x20   while not stop:\n\
         \x20       i += 1\n\
         \x20       try: os.unlink('l')\n\
         \x20       except OSError: pass\n\
         \x20       os.symlink('{o}' if i % 2 else 'w', 'l')\n\
         \x20       try: os.rename('w', 'w2'); os.rename('w2', 'w')\n\
         \x20       except OSError: pass\n\
         t = threading.Thread(target=swap); t.start()\n\
         ok = 0\n\
         for n in range(400):\n\
         \x20   try:\n\
         \x20       fd = os.open('l/f%d' % n, os.O_WRONLY | os.O_CREAT); os.close(fd); ok += 1\n\
         \x20   except OSError: pass\n\
         stop = True; t.join()\n\
         print(ok)\n",
        o = dir.display()
    );
    let (o, v) = run(&p, &["python3", "-c", &script]);
    assert_eq!(o.status.code(), Some(0), "{v}");
    let written: Vec<_> = std::fs::read_dir(&dir).unwrap().flatten().collect();
    assert!(written.is_empty(), "the race wrote outside: {written:?}");
    for r in records(&v) {
        assert!(r["path"].as_str().unwrap().starts_with(s(&dir)), "{r}");
    }
}

/// Escape test: the command cannot write a record. Init (which keeps them) is not dumpable,
/// so its descriptors under /proc/1/fd are out of reach; the helper's channel is outside
/// the sandbox. A forged record line anywhere the command can write changes nothing.
#[test]
fn the_command_cannot_write_a_fake_record() {
    if !records_available() {
        return;
    }
    let p = project();
    let fake = r#"{"records":[{"syscall":"openat","path":"/home/u","errno":"EROFS","rule":"read-only","grant":"/home/u"}],"total":1}"#;
    let script = format!(
        "for f in /proc/1/fd/*; do echo '{fake}' > \"$f\" 2>/dev/null; done; \
         echo '{{\"denials\":{fake}}}'; echo '{{\"denials\":{fake}}}' >&2; \
         echo 'cp: cannot create /home/u: Read-only file system' >&2; exit 1"
    );
    let (o, v) = run(&p, &["sh", "-c", &script]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(v["denials"]["total"], 0, "{v}");
    assert_eq!(v["outcome"], "command-failed", "{v}");
}

/// Still works under the supervisor: git commit, Python writing temp files (in the
/// workspace and the private /tmp), a small cargo build.
#[test]
fn everyday_writes_still_work() {
    if !records_available() {
        return;
    }
    let p = project();
    let (_, v) = run(
        &p,
        &[
            "sh",
            "-c",
            "echo a > a.txt && git add a.txt && \
             git -c user.name=t -c user.email=t@t commit -qm one && git log --oneline",
        ],
    );
    assert_eq!(v["outcome"], "success", "{v}");
    let (_, v) = run(
        &p,
        &[
            "python3",
            "-c",
            "import tempfile, os\n\
             with tempfile.NamedTemporaryFile(dir='.') as f: f.write(b'x')\n\
             with tempfile.TemporaryDirectory() as d: open(os.path.join(d, 'f'), 'w').write('y')\n\
             os.replace(tempfile.mkstemp(dir='.')[1], 'moved')\n",
        ],
    );
    assert_eq!(v["outcome"], "success", "{v}");
    assert_eq!(v["denials"]["total"], 0, "{v}");
    assert!(p.dir.join("moved").exists());
}

/// A cargo build (no dependencies, offline) under the supervisor.
#[test]
fn cargo_build_still_works() {
    if !records_available() {
        return;
    }
    let Some(cargo) = std::env::var_os("CARGO") else {
        return;
    };
    let p = project();
    std::fs::create_dir_all(p.dir.join("src")).unwrap();
    std::fs::write(
        p.dir.join("Cargo.toml"),
        "[package]\nname = \"tiny\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    )
    .unwrap();
    std::fs::write(
        p.dir.join("src/main.rs"),
        "fn main() { println!(\"hi\"); }\n",
    )
    .unwrap();
    let cargo = cargo.to_string_lossy().into_owned();
    let mut c = cordon(
        &p,
        &[
            "run",
            "--json",
            "--yes",
            "--",
            &cargo,
            "build",
            "--offline",
            "-q",
        ],
    );
    for k in ["RUSTUP_HOME", "CARGO_HOME", "RUSTUP_TOOLCHAIN", "PATH"] {
        if let Some(v) = std::env::var_os(k) {
            c.env(k, v);
        }
    }
    let o = c.output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(p.dir.join("target/debug/tiny").exists(), "{err}");
}

/// With the network off, package managers are told not to retry (npm spent 72 s retrying
/// DNS); with it on, nothing is added. A value the user set is kept.
#[test]
fn network_off_sets_the_fail_fast_knobs() {
    if !records_available() {
        return;
    }
    let p = project();
    let o = cordon(&p, &["run", "--yes", "--", "env"]).output().unwrap();
    let env = String::from_utf8_lossy(&o.stdout);
    for kv in [
        "npm_config_fetch_retries=0",
        "PIP_RETRIES=1",
        "CARGO_NET_RETRY=0",
    ] {
        assert!(env.lines().any(|l| l == kv), "{kv} missing: {env}");
    }
    let o = cordon(&p, &["run", "--yes", "--", "env"])
        .env("PIP_RETRIES", "3")
        .output()
        .unwrap();
    let env = String::from_utf8_lossy(&o.stdout);
    assert!(env.lines().any(|l| l == "PIP_RETRIES=3"), "{env}");
    let o = cordon(&p, &["run", "--yes", "--allow-network", "--", "env"])
        .output()
        .unwrap();
    let env = String::from_utf8_lossy(&o.stdout);
    assert!(!env.contains("npm_config_fetch_retries"), "{env}");
}

/// The race the hard-link refusal had (attack pass on CONTINUE, reproduced 4/4): the
/// supervisor judged a path, then answered CONTINUE and the kernel resolved it again. A
/// command that swapped names between the two wrote a host-made hard link to a file
/// outside the workspace. Three ways, each for a bounded time: renames of the last
/// component, a swap of a parent directory, and a second thread rewriting the path in the
/// caller's memory; and `truncate(2)` under the renames. The supervisor now opens what it judged and hands the descriptor over,
/// so the file outside stays as it was.
#[test]
fn a_rename_race_cannot_write_a_hard_linked_file() {
    if !records_available() {
        return;
    }
    let p = project();
    let dir = outside(&p);
    let target = dir.join("linked.txt");
    std::fs::write(&target, "ORIGINAL\n").unwrap();
    let race = p.dir.join("race");
    std::fs::create_dir_all(race.join("d1")).unwrap();
    std::fs::create_dir_all(race.join("d2")).unwrap();
    std::fs::hard_link(&target, race.join("hl")).unwrap();
    std::fs::hard_link(&target, race.join("d2/T")).unwrap();
    let script = "import os, threading, time, ctypes\n\
         os.chdir('race')\n\
         open('single', 'w').write('s\\n'); open('d1/T', 'w').write('s\\n')\n\
         libc = ctypes.CDLL(None, use_errno=True)\n\
         buf = ctypes.create_string_buffer(64)\n\
         stop = False\n\
         def last():\n\
         \x20   while not stop:\n\
         \x20       try:\n\
         \x20           os.rename('single', 'T'); os.rename('T', 'single')\n\
         \x20           os.rename('hl', 'T'); os.rename('T', 'hl')\n\
         \x20       except OSError: pass\n\
         def parent():\n\
         \x20   while not stop:\n\
         \x20       try:\n\
         \x20           os.rename('d1', 'dx'); os.rename('d2', 'd1')\n\
         \x20           os.rename('d1', 'd2'); os.rename('dx', 'd1')\n\
         \x20       except OSError: pass\n\
         def memory():\n\
         \x20   while not stop:\n\
         \x20       ctypes.memmove(buf, b'single\\0', 7); ctypes.memmove(buf, b'hl\\0', 3)\n\
         def by_os(name):\n\
         \x20   return lambda: os.open(name, os.O_WRONLY | os.O_APPEND)\n\
         def by_buf():\n\
         \x20   fd = libc.open(buf, os.O_WRONLY | os.O_APPEND)\n\
         \x20   if fd < 0: raise OSError(ctypes.get_errno(), 'open')\n\
         \x20   return fd\n\
         def trunc():\n\
         \x20   os.truncate('T', 0)\n\
         \x20   raise OSError(0, 'truncated, nothing to open')\n\
         total = 0\n\
         for swap, opener in ((last, by_os('T')), (parent, by_os('d1/T')), (memory, by_buf), (last, trunc)):\n\
         \x20   stop = False\n\
         \x20   t = threading.Thread(target=swap); t.start()\n\
         \x20   hits = tries = 0; t0 = time.time()\n\
         \x20   while time.time() - t0 < 3 and tries < 20000:\n\
         \x20       tries += 1\n\
         \x20       try: fd = opener()\n\
         \x20       except OSError: continue\n\
         \x20       if os.fstat(fd).st_nlink > 1:\n\
         \x20           os.write(fd, b'RACED-WRITE\\n'); hits += 1\n\
         \x20       os.close(fd)\n\
         \x20   stop = True; t.join()\n\
         \x20   print(swap.__name__, 'tries', tries, 'hits', hits)\n\
         \x20   total += hits\n\
         raise SystemExit(3 if total else 0)\n";
    let (o, v) = run(&p, &["python3", "-c", script]);
    let out = String::from_utf8_lossy(&o.stdout);
    let after = std::fs::read_to_string(&target).unwrap();
    assert!(
        after == "ORIGINAL\n",
        "the race wrote the file outside ({} lines): {out}",
        after.lines().count()
    );
    assert_eq!(o.status.code(), Some(0), "{out} {v}");
    // The refusals the supervisor saw are recorded as hard-link refusals.
    assert!(
        records(&v).iter().any(|r| r["rule"]
            .as_str()
            .is_some_and(|s| s.starts_with("a hard link"))),
        "{v}"
    );
}

/// Twin of the rename race: the write-opens the supervisor now performs itself behave as
/// the kernel's own. Writing, appending, truncating; creating with and without `O_EXCL`,
/// the mode under the umask (027 + 0666 → 0640); `O_CLOEXEC` kept exactly as asked; the
/// kernel's errors for a missing file, a directory, a symlink under `O_NOFOLLOW`, a file
/// named with a trailing slash; a FIFO with a reader (the writer waits for it); `/dev/null`
/// and `/dev/stderr`; git. A host-made hard link is still refused (`EACCES`) and recorded.
#[test]
fn write_opens_the_supervisor_performs_still_work() {
    // Attack pass 213 #3: `O_PATH` with a write flag is a path descriptor (the kernel
    // ignores the access mode), on a hard-linked or read-only file too: "opath ok ok".
    if !records_available() {
        return;
    }
    let p = project();
    let dir = outside(&p);
    let target = dir.join("linked.txt");
    std::fs::write(&target, "ORIGINAL\n").unwrap();
    std::fs::hard_link(&target, p.dir.join("hl")).unwrap();
    let script = "import os, fcntl, stat, ctypes, subprocess, errno\n\
         libc = ctypes.CDLL(None, use_errno=True)\n\
         def raw(path, flags, mode=0o666):\n\
         \x20   fd = libc.open(path.encode(), flags, mode)\n\
         \x20   if fd < 0: raise OSError(ctypes.get_errno(), path)\n\
         \x20   return fd\n\
         def fails(path, flags):\n\
         \x20   try: os.close(raw(path, flags))\n\
         \x20   except OSError as e: return errno.errorcode[e.errno]\n\
         \x20   return 'ok'\n\
         def cloexec(fd): return bool(fcntl.fcntl(fd, fcntl.F_GETFD) & fcntl.FD_CLOEXEC)\n\
         os.umask(0o027)\n\
         fd = raw('new', os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)\n\
         out = ['mode %o' % stat.S_IMODE(os.fstat(fd).st_mode), 'cloexec %s' % cloexec(fd)]\n\
         os.write(fd, b'one\\n'); os.close(fd)\n\
         fd = raw('new', os.O_WRONLY | os.O_APPEND | os.O_CLOEXEC)\n\
         out.append('cloexec %s' % cloexec(fd)); os.write(fd, b'two\\n'); os.close(fd)\n\
         out.append(repr(open('new').read()))\n\
         os.truncate('new', 3); out.append(repr(open('new').read()))\n\
         os.close(raw('new', os.O_RDWR | os.O_TRUNC)); out.append('size %d' % os.path.getsize('new'))\n\
         fd = raw('made', os.O_WRONLY | os.O_CREAT); os.close(fd); out.append('made %s' % os.path.exists('made'))\n\
         out.append('excl ' + fails('new', os.O_WRONLY | os.O_CREAT | os.O_EXCL))\n\
         out.append('missing ' + fails('missing', os.O_WRONLY))\n\
         out.append('dir ' + fails('.', os.O_WRONLY))\n\
         os.symlink('new', 'sl')\n\
         out.append('nofollow ' + fails('sl', os.O_WRONLY | os.O_NOFOLLOW))\n\
         out.append('slash ' + fails('new/', os.O_WRONLY))\n\
         out.append('linked ' + fails('hl', os.O_WRONLY | os.O_APPEND))\n\
         os.mkfifo('ff')\n\
         w = subprocess.Popen(['sh', '-c', 'echo via-fifo > ff'])\n\
         out.append(open('ff').read().strip()); w.wait()\n\
         r = subprocess.Popen(['cat', 'ff'], stdout=subprocess.PIPE)\n\
         with open('ff', 'w') as f: f.write('to-reader\\n')\n\
         out.append(r.communicate()[0].decode().strip())\n\
         out.append('nonblock ' + fails('ff', os.O_WRONLY | os.O_NONBLOCK))\n\
         out.append(subprocess.run(['sh', '-c', 'echo x > /dev/null && echo y | cat > /dev/null && echo e > /dev/stderr && echo ok'], capture_output=True, text=True).stdout.strip())\n\
         out.append('opath ' + fails('hl', os.O_PATH | os.O_WRONLY) + ' ' + fails('/etc/hostname', os.O_PATH | os.O_WRONLY | os.O_TRUNC))\n\
         print(' | '.join(out))\n";
    let (o, v) = run(&p, &["python3", "-c", script]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{out} {v}");
    assert_eq!(
        out.trim(),
        "mode 640 | cloexec False | cloexec True | 'one\\ntwo\\n' | 'one' | size 0 | made True | \
         excl EEXIST | missing ENOENT | dir EISDIR | nofollow ELOOP | slash ENOTDIR | \
         linked EACCES | via-fifo | to-reader | nonblock ENXIO | ok | opath ok ok",
        "{v}"
    );
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "ORIGINAL\n");
    let recs = records(&v);
    assert_eq!(recs.len(), 1, "{v}");
    assert!(recs[0]["path"].as_str().unwrap().ends_with("/hl"), "{v}");
    assert!(
        recs[0]["rule"].as_str().unwrap().starts_with("a hard link"),
        "{v}"
    );
    // git writes its index, objects and refs through the supervisor.
    let (_, v) = run(
        &p,
        &[
            "sh",
            "-c",
            "rm -f hl && git init -q . && echo a > a.txt && git add a.txt && \
             git -c user.name=t -c user.email=t@t commit -qm one && git log --oneline",
        ],
    );
    assert_eq!(v["outcome"], "success", "{v}");
}
