//! The same escape and "still works" checks on both launch paths of `cordon run` (issue 12
//! item 2): the cold path (`--no-server`: the helper is executed) and the server path (the
//! helper is forked by a running `cordon serve`). Every run asserts, from `--json`, which
//! path it really took (`"launch"`). One sandbox per child process.

mod support;

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};
use support::{last_json, overlays_available, sandbox_available, text, CORDON};

#[derive(Clone, Copy, Debug, PartialEq)]
enum Launch {
    Cold,
    /// Through a `--no-templates` server, in the git project: the server forks its
    /// per-command helper (a server with templates sends a command no template can run —
    /// the git project's `.git/config` copy is per command — back to the cold path).
    Server,
    /// Through the server, in a directory outside any repository: forked from a prepared
    /// template.
    Template,
}

impl Launch {
    fn name(self) -> &'static str {
        match self {
            Launch::Cold => "cold",
            Launch::Server => "server",
            Launch::Template => "template",
        }
    }
}

/// A project (tests/support) with a key in its fake HOME, and a running server on a
/// private socket.
struct Project {
    p: support::Project,
    dir: PathBuf,
    /// A workspace outside any repository (the template path).
    plain: PathBuf,
    home: PathBuf,
    /// `cordon serve` (templates on): the template path.
    server: Child,
    /// `cordon serve --no-templates`: the server's per-command helper ([`Launch::Server`]).
    plain_server: Child,
}

impl Drop for Project {
    fn drop(&mut self) {
        for s in [&mut self.server, &mut self.plain_server] {
            let _ = s.kill();
            let _ = s.wait();
        }
    }
}

impl Project {
    /// The socket of the server with templates.
    fn socket(&self) -> PathBuf {
        self.p.root.path().join("run").join("serve.sock")
    }

    /// The socket `launch` goes through (the `--no-templates` server's for
    /// [`Launch::Server`]).
    fn socket_of(&self, launch: Launch) -> PathBuf {
        match launch {
            Launch::Server => self.p.root.path().join("run2").join("serve.sock"),
            _ => self.socket(),
        }
    }

    /// The server `launch` goes through.
    fn server_of(&mut self, launch: Launch) -> &mut Child {
        match launch {
            Launch::Server => &mut self.plain_server,
            _ => &mut self.server,
        }
    }

    /// The workspace the commands of `launch` run in.
    fn dir(&self, launch: Launch) -> &Path {
        match launch {
            Launch::Template => &self.plain,
            _ => &self.dir,
        }
    }

    fn cordon(&self, launch: Launch, args: &[&str]) -> Command {
        let mut all = vec!["run", "--json"];
        if launch == Launch::Cold {
            all.push("--no-server");
        }
        all.extend_from_slice(args);
        let mut c = self.p.cordon_in(self.dir(launch), &all);
        c.env("CORDON_SERVE_SOCKET", self.socket_of(launch));
        c
    }

    /// `cordon run --json [--no-server] ARGS` started with its output piped, once `ready`
    /// exists (the command made it; at most 20 s).
    fn spawn_until(&self, launch: Launch, args: &[&str], ready: &Path) -> Child {
        let child = self
            .cordon(launch, args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let t0 = Instant::now();
        while !ready.exists() && t0.elapsed() < Duration::from_secs(20) {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(
            ready.exists(),
            "{launch:?}: the command never made {}",
            ready.display()
        );
        child
    }

    /// Runs `cordon run --json [--no-server] -- sh -c script`; checks the path taken.
    fn sh(&self, launch: Launch, script: &str) -> Output {
        self.sh_with(launch, &[], script)
    }

    /// [`Project::sh`] with `args` before the command (`--yes` for a script the exec
    /// policy asks about, whose enforcement is what a test checks).
    fn sh_with(&self, launch: Launch, args: &[&str], script: &str) -> Output {
        let mut all = args.to_vec();
        all.extend_from_slice(&["--", "sh", "-c", script]);
        let o = self.cordon(launch, &all).output().unwrap();
        let report = last_json(&o.stderr);
        assert_eq!(
            report["launch"].as_str(),
            Some(launch.name()),
            "launch path; stderr: {}",
            text(&o.stderr)
        );
        o
    }
}

fn project() -> Project {
    let p = support::Project::new("cordon-serve-");
    std::fs::create_dir_all(p.home.join(".ssh")).unwrap();
    std::fs::write(p.home.join(".ssh/id_rsa"), "PRIVATE KEY MATERIAL\n").unwrap();
    let server = spawn_server(&p.root.path().join("run").join("serve.sock"));
    let plain_server = spawn_server_with(
        &p.root.path().join("run2").join("serve.sock"),
        &["--no-templates"],
    );
    let plain = p.root.path().join("plain");
    std::fs::create_dir_all(&plain).unwrap();
    Project {
        dir: p.dir.clone(),
        plain,
        home: p.home.clone(),
        p,
        server,
        plain_server,
    }
}

/// `cordon serve --socket sock`, once it listens.
fn spawn_server(sock: &Path) -> Child {
    spawn_server_with(sock, &[])
}

/// `cordon serve --socket sock EXTRA`, once it listens.
fn spawn_server_with(sock: &Path, extra: &[&str]) -> Child {
    let server = Command::new(CORDON)
        .arg("serve")
        .arg("--socket")
        .arg(sock)
        .args(extra)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while std::os::unix::net::UnixStream::connect(sock).is_err() {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "cordon serve did not listen"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    server
}

const BOTH: [Launch; 2] = [Launch::Cold, Launch::Server];
const ALL: [Launch; 3] = [Launch::Cold, Launch::Server, Launch::Template];

/// The command holds no descriptor of cordon's on any path — not the connection to the
/// server's handler (a template's helper is its per-command handler now: a status line
/// written there would be taken as the run's), not a pipe of the helper's — and init's are
/// out of its reach. Twin: its own stdio are there, and a file it opens works.
#[test]
fn the_command_holds_only_its_stdio_on_every_path() {
    if !sandbox_available() {
        return;
    }
    let p = project();
    for l in ALL {
        let o = p.sh(
            l,
            "exec 3>own-fd.txt; echo mine >&3; ls /proc/self/fd; \
             for f in /proc/1/fd/*; do \
               (exec 5>>\"$f\") 2>/dev/null && echo \"INIT-FD-OPENED $f\"; \
               (exec 5<\"$f\") 2>/dev/null && echo \"INIT-FD-OPENED $f\"; \
             done; cat own-fd.txt",
        );
        assert_eq!(o.status.code(), Some(0), "{l:?}: {}", text(&o.stderr));
        let out = text(&o.stdout);
        let mut lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.pop(), Some("mine"), "{l:?}: {out}");
        // 0-2, the command's own 3, and the directory `ls` reads.
        assert_eq!(lines, ["0", "1", "2", "3", "4"], "{l:?}: {out}");
        assert!(!out.contains("INIT-FD-OPENED"), "{l:?}: {out}");
    }
}

/// R-L1: writing outside the project fails; inside works.
#[test]
fn write_outside_fails_inside_works_on_both_paths() {
    if !sandbox_available() {
        return;
    }
    let p = project();
    for l in ALL {
        let outside = p.home.join(format!("outside-{}.txt", l.name()));
        let o = p.sh(l, &format!("echo x > {}", outside.display()));
        assert_ne!(o.status.code(), Some(0), "{l:?}");
        assert!(!outside.exists(), "{l:?}: wrote outside the project");
        let inside = format!("inside-{}.txt", l.name());
        let o = p.sh(l, &format!("echo x > {inside}"));
        assert_eq!(o.status.code(), Some(0), "{l:?}: {}", text(&o.stderr));
        assert!(p.dir(l).join(&inside).exists(), "{l:?}");
    }
}

/// Attack pass 47, N1: a file of the project that is a hard link to a file outside every
/// writable root (pnpm's store, a local `git clone`'s objects) cannot be written in place,
/// through `>>`, `O_RDWR` or `truncate`: the outside file keeps its bytes, and the report
/// records the refusal. Twins: the same file replaced by a rename works (what cargo, git
/// and pip do), and a file with one name is written as before.
#[test]
fn a_hard_link_to_a_file_outside_cannot_be_written_in_place_on_every_path() {
    if !sandbox_available() {
        return;
    }
    let p = project();
    for l in ALL {
        let store = p.home.join(format!("store-{}.js", l.name()));
        std::fs::write(&store, "original\n").unwrap();
        let linked = p.dir(l).join(format!("linked-{}.js", l.name()));
        std::fs::hard_link(&store, &linked).unwrap();
        let name = linked.file_name().unwrap().to_str().unwrap().to_string();
        let writes = [
            format!("echo pwned >> {name}"),
            format!("python3 -c 'open(\"{name}\", \"r+\").write(\"pwned\")'"),
            format!("truncate -s 0 {name}"),
            // attack48 N1: through a symlink, and by reopening a read-only descriptor.
            format!("ln -sf {name} l-{name} && echo pwned >> l-{name}"),
            format!(
                "python3 -c 'import os; fd = os.open(\"{name}\", os.O_RDONLY); \
                 open(\"/proc/self/fd/%d\" % fd, \"a\").write(\"pwned\")'"
            ),
            format!("ln -sfn /dev/fd dfd && exec 3<{name} && echo pwned >> dfd/3"),
            // Review: through a descriptor of the file's directory, and the cwd link.
            format!("exec 4<. && P=/proc/self/fd/4/{name} && echo pwned >> $P"),
            format!("P=/proc/self/cwd/{name} && echo pwned >> $P"),
            // nu29 F1: its project name removed first, the descriptor reopened.
            format!(
                "python3 -c 'import os; fd = os.open(\"{name}\", os.O_PATH); \
                 os.unlink(\"{name}\"); \
                 os.write(os.open(\"/proc/self/fd/%d\" % fd, os.O_WRONLY), b\"pwned\")'"
            ),
        ]
        .into_iter()
        .map(|w| (w, "a hard link"))
        .collect::<Vec<_>>();
        // Attack pass 49, N1: where the check once gave up, it looks — a cwd deeper than
        // PATH_MAX (its text cannot be read back), a directory above the cwd the command
        // made unsearchable; N2: a process that made itself non-dumpable (init looks at it
        // with its CAP_SYS_PTRACE; where it cannot look, it refuses).
        let deep = "d".repeat(200);
        for (write, rule) in writes.into_iter().chain([
            (
                format!(
                    "python3 -c 'import os\nfor _ in range(25): os.makedirs(\"{deep}\", \
                     exist_ok=True); os.chdir(\"{deep}\")\n\
                     open(\"../\" * 25 + \"{name}\", \"a\").write(\"pwned\")'"
                ),
                "a hard link",
            ),
            (
                format!(
                    "mkdir -p hide/in && mv {name} hide/in/ && cd hide/in && chmod 0 ../../hide \
                     && echo pwned >> {name}"
                ),
                "a hard link",
            ),
            (
                format!(
                    "python3 -c 'import ctypes; ctypes.CDLL(None).prctl(4, 0, 0, 0, 0); \
                     open(\"{name}\", \"a\").write(\"pwned\")'"
                ),
                "a hard link",
            ),
            // Attack pass 51, N1: a link the kernel refuses (EXDEV, of the outside name)
            // does not make the file the run's own; N2: init's lowered descriptor limit
            // (prlimit on pid 1) refuses rather than lets through.
            (
                format!(
                    "exec 3< {name} && rm {name} && {{ ln {store} noted-{name} || true; }} && \
                     ln -L /proc/self/fd/3 {name} && echo pwned >> {name}",
                    store = store.display()
                ),
                "a hard link",
            ),
            (
                format!(
                    "python3 -c 'import resource; \
                     resource.prlimit(1, resource.RLIMIT_NOFILE, (1, 1)); \
                     open(\"{name}\", \"a\").write(\"pwned\")'"
                ),
                "not checked for hard links",
            ),
        ]) {
            // (Linked again on the host: a case may have removed the project's name.)
            let _ = std::fs::remove_file(&linked);
            std::fs::hard_link(&store, &linked).unwrap();
            let o = p.sh(l, &write);
            if p.dir(l).join("hide").exists() {
                let _ = Command::new("chmod")
                    .arg("-R")
                    .arg("u+rwx")
                    .arg(p.dir(l).join("hide"))
                    .status();
            }
            assert_ne!(o.status.code(), Some(0), "{l:?} {write}");
            assert_eq!(
                std::fs::read_to_string(&store).unwrap(),
                "original\n",
                "{l:?}: `{write}` changed the file outside"
            );
            let v = last_json(&o.stderr);
            assert_eq!(v["outcome"], "sandbox-denied", "{l:?} {write}: {v}");
            assert!(
                v["denials"]["records"][0]["rule"]
                    .as_str()
                    .is_some_and(|r| r.starts_with(rule)),
                "{l:?} {write}: {v}"
            );
            let _ = std::fs::remove_dir_all(p.dir(l).join("hide"));
        }
        // Twin: a non-dumpable process still reads, and writes files with one name and
        // /dev/null (nu31 F1: ssh-agent and gpg-agent hung or failed; init keeps
        // CAP_SYS_PTRACE in the sandbox's user namespace to look at such a process).
        let o = p.sh(
            l,
            &format!(
                "python3 -c 'import ctypes; ctypes.CDLL(None).prctl(4, 0, 0, 0, 0); \
                 print(open(\"{name}\").read(), end=\"\"); \
                 open(\"/dev/null\", \"w\").write(\"x\"); \
                 open(\"own-{name}\", \"w\").write(\"x\")'"
            ),
        );
        assert_eq!(o.status.code(), Some(0), "{l:?}: {}", text(&o.stderr));
        assert_eq!(text(&o.stdout), "original\n");
        assert!(p.dir(l).join(format!("own-{name}")).exists(), "{l:?}");
        let _ = std::fs::remove_file(&linked);
        std::fs::hard_link(&store, &linked).unwrap();
        let o = p.sh(
            l,
            &format!(
                "cp {name} n.tmp && echo new >> n.tmp && mv n.tmp {name} && echo x > one-{name}"
            ),
        );
        assert_eq!(o.status.code(), Some(0), "{l:?}: {}", text(&o.stderr));
        assert_eq!(std::fs::read_to_string(&linked).unwrap(), "original\nnew\n");
        assert_eq!(std::fs::read_to_string(&store).unwrap(), "original\n");
    }
}

/// Attack pass 50: routes to a host-made hard link a shell cannot take — the path held in
/// memory `/proc/<pid>/mem` cannot read (a `memfd_secret` page: refused unchecked, N1),
/// and `/proc/self/fd/N` opened by a thread with a descriptor table of its own, which the
/// kernel reads as the process's descriptor (N2) — are refused on every launch path, and
/// the outside file is unchanged. Twin: the thread writes a file with one name (a path
/// cordon cannot read stays refused, whatever it names).
#[test]
fn a_hard_link_is_judged_whatever_memory_or_thread_names_it() {
    if !sandbox_available() || !support::have("cc") {
        return;
    }
    let p = project();
    let prog = p.home.join("hardlink_routes");
    let st = Command::new("cc")
        .arg("-O1")
        .arg("-o")
        .arg(&prog)
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hardlink_routes.c"))
        .status()
        .unwrap();
    assert!(st.success(), "cc failed");
    let prog = prog.display().to_string();
    for l in ALL {
        let store = p.home.join(format!("routes-store-{}.js", l.name()));
        let linked = p.dir(l).join(format!("routes-{}.js", l.name()));
        let name = linked.file_name().unwrap().to_str().unwrap().to_string();
        for (mode, rule) in [
            ("secret", "not checked for hard links"),
            ("thread", "a hard link"),
        ] {
            let _ = std::fs::remove_file(&linked);
            std::fs::write(&store, "original\n").unwrap();
            std::fs::hard_link(&store, &linked).unwrap();
            let o = p.sh(l, &format!("{prog} {mode} {name}"));
            if o.status.code() == Some(3) {
                eprintln!("SKIP {mode}: {}", text(&o.stdout));
                continue;
            }
            assert_eq!(
                o.status.code(),
                Some(1),
                "{l:?} {mode}: {}",
                text(&o.stdout)
            );
            assert_eq!(
                std::fs::read_to_string(&store).unwrap(),
                "original\n",
                "{l:?}: `{mode}` changed the file outside"
            );
            let v = last_json(&o.stderr);
            assert!(
                v["denials"]["records"][0]["rule"]
                    .as_str()
                    .is_some_and(|r| r.starts_with(rule)),
                "{l:?} {mode}: {v}"
            );
            // Twin: one name (a path cordon cannot read is refused whatever it names).
            std::fs::remove_file(&linked).unwrap();
            std::fs::write(&linked, "mine\n").unwrap();
            let o = p.sh(l, &format!("{prog} {mode} {name}"));
            let want = if mode == "thread" { 0 } else { 1 };
            assert_eq!(
                o.status.code(),
                Some(want),
                "{l:?} {mode}: {}",
                text(&o.stdout)
            );
            if mode == "thread" {
                assert_eq!(std::fs::read_to_string(&linked).unwrap(), "mine\npwned\n");
            }
        }
    }
}

/// The mode, the mtime, and the extended attributes and inode flags (`lsattr`) of a file,
/// as the host sees them.
fn metadata_of(f: &Path) -> (u32, i64, Vec<String>) {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::metadata(f).unwrap();
    let x = Command::new("python3")
        .args([
            "-c",
            "import os, sys, fcntl; p = sys.argv[1]\n\
             [print(n, os.getxattr(p, n).hex()) for n in sorted(os.listxattr(p))]\n\
             b = bytearray(8); fcntl.ioctl(os.open(p, os.O_RDONLY), 0x80086601, b)\n\
             print(\"flags\", b.hex())",
        ])
        .arg(f)
        .output()
        .unwrap();
    assert!(x.status.success(), "{}", text(&x.stderr));
    let lines = text(&x.stdout).lines().map(str::to_string).collect();
    (m.mode() & 0o7777, m.mtime(), lines)
}

/// Attack pass 48, N3 (nu29 F2): the metadata of a project file that is a hard link to a
/// file outside every writable root is not changed in place either — `chmod`, `touch`,
/// `utime`, `setxattr`/`removexattr`, `chown`, `chattr`, by path, through a symlink or
/// `/proc/self/fd/N`, and on a descriptor (`fchmod`, `futimens`, `fsetxattr`,
/// `fchmodat2(fd, "", AT_EMPTY_PATH)`): the outside file keeps its mode, mtime and
/// attributes, and the report records the refusal. Twins: the same operations on files
/// with one name (new ones, `cp -p`), a `chmod` to the linked file's own mode, and
/// `git init`, `add`, `commit` work as before.
#[test]
fn a_hard_link_to_a_file_outside_keeps_its_metadata_on_every_path() {
    if !sandbox_available() {
        return;
    }
    let p = project();
    let py = |body: &str| format!("python3 -c 'import os, sys, ctypes\n{body}'");
    for l in ALL {
        let store = p.home.join(format!("meta-store-{}.py", l.name()));
        let linked = p.dir(l).join(format!("meta-{}.py", l.name()));
        let name = linked.file_name().unwrap().to_str().unwrap().to_string();
        let relink = || {
            let _ = std::fs::remove_file(&linked);
            let _ = std::fs::remove_file(&store);
            std::fs::write(&store, "print(\"store\")\n").unwrap();
            let ok = Command::new("sh")
                .arg("-c")
                .arg(format!(
                    "chmod 0644 {s} && touch -d 2024-05-01 {s} && \
                     python3 -c 'import os; os.setxattr(\"{s}\", \"user.keep\", b\"kept\")'",
                    s = store.display()
                ))
                .status()
                .unwrap();
            assert!(ok.success());
            std::fs::hard_link(&store, &linked).unwrap();
        };
        relink();
        let before = metadata_of(&store);
        assert_eq!(before.0, 0o644);
        assert_eq!(before.2.len(), 2, "user xattrs on /var/tmp: {:?}", before.2);
        for change in [
            format!("chmod 0666 {name}"),
            format!("chmod +x {name}"),
            format!("touch {name}"),
            format!("touch -h -d 1999-01-01 {name}"),
            py(&format!("os.chmod(\"{name}\", 0o666)")),
            py(&format!("os.utime(\"{name}\", (0, 0))")),
            py(&format!(
                "os.setxattr(\"{name}\", \"user.a48\", b\"planted\")"
            )),
            py(&format!("os.removexattr(\"{name}\", \"user.keep\")")),
            // Inode flags (FS_IOC_SETFLAGS on a read-only descriptor).
            format!("chattr +d {name}"),
            // Through a symlink and the procfs names of a read-only descriptor.
            format!("ln -sf {name} l-{name} && chmod 0600 l-{name}"),
            format!("exec 3<{name} && chmod 0600 /dev/fd/3"),
            py(&format!(
                "fd = os.open(\"{name}\", os.O_RDONLY)\nos.utime(\"/proc/self/fd/%d\" % fd, (0, 0))"
            )),
            // On a read-only descriptor.
            py(&format!(
                "os.fchmod(os.open(\"{name}\", os.O_RDONLY), 0o666)"
            )),
            py(&format!(
                "os.utime(os.open(\"{name}\", os.O_RDONLY), (0, 0))"
            )),
            py(&format!(
                "os.setxattr(os.open(\"{name}\", os.O_RDONLY), \"user.a48\", b\"planted\")"
            )),
            py(&format!(
                "os.removexattr(os.open(\"{name}\", os.O_RDONLY), \"user.keep\")"
            )),
            // fchmodat2(fd, "", mode, AT_EMPTY_PATH) on an O_PATH descriptor.
            py(&format!(
                "fd = os.open(\"{name}\", os.O_PATH)\n\
                 libc = ctypes.CDLL(None, use_errno=True)\n\
                 if libc.syscall(452, fd, b\"\", 0o666, 0x1000):\n\
                 \x20   e = ctypes.get_errno(); raise OSError(e, os.strerror(e))"
            )),
            // nu29 F1's route: its project name removed first, the descriptor reused.
            py(&format!(
                "fd = os.open(\"{name}\", os.O_PATH)\nos.unlink(\"{name}\")\n\
                 os.chmod(\"/proc/self/fd/%d\" % fd, 0o666)"
            )),
            // Final pass f32: `file_setattr(2)` (chattr by path, Linux 6.17) and ext4's
            // own EXT4_IOC_SETVERSION on a read-only descriptor.
            py(&format!(
                "libc = ctypes.CDLL(None, use_errno=True)\n\
                 fa = ctypes.create_string_buffer(24)\n\
                 if libc.syscall(468, -100, b\"{name}\", fa, 24, 0):\n\
                 \x20   e = ctypes.get_errno(); raise OSError(e, os.strerror(e))\n\
                 x = int.from_bytes(fa.raw[:8], \"little\") | 0x80\n\
                 fb = ctypes.create_string_buffer(x.to_bytes(8, \"little\") + fa.raw[8:], 24)\n\
                 if libc.syscall(469, -100, b\"{name}\", fb, 24, 0):\n\
                 \x20   e = ctypes.get_errno(); raise OSError(e, os.strerror(e))"
            )),
            py(&format!(
                "import fcntl, struct\n\
                 fcntl.ioctl(os.open(\"{name}\", os.O_RDONLY), 0x40086604, struct.pack(\"l\", 12345))"
            )),
            // Attack pass 49, N2: a non-dumpable process (refused unchecked).
            py(&format!(
                "ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)\nos.chmod(\"{name}\", 0o666)"
            )),
        ] {
            relink();
            let o = p.sh(l, &change);
            assert_ne!(o.status.code(), Some(0), "{l:?} `{change}`");
            assert_eq!(
                metadata_of(&store),
                before,
                "{l:?}: `{change}` changed the file outside"
            );
            let v = last_json(&o.stderr);
            let records = v["denials"]["records"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            assert!(
                records.iter().any(|r| r["rule"].as_str().is_some_and(|r| {
                    (r.starts_with("a hard link") && r.contains("mode, owner, times"))
                        || r.starts_with("not checked for hard links")
                }) && r["errno"] == "EACCES"),
                "{l:?} `{change}`: {v}"
            );
            assert_eq!(v["outcome"], "sandbox-denied", "{l:?} `{change}`: {v}");
        }
        // Twins: files with one name, the linked file's own mode, a copy, hard links
        // whose every name is in the sandbox's own `/tmp` or `/dev/shm` (nu30 F2), a link
        // the run made itself in the project (nu31 F2: `strip` after `cargo build`), git.
        relink();
        let new = format!("new-{}", l.name());
        let o = p.sh(
            l,
            &format!(
                "set -e; touch {new}.txt; chattr +d {new}.txt; printf \"#!/bin/sh\\necho ran\\n\" > {new}.sh; \
                 chmod +x {new}.sh; ./{new}.sh; touch -d 2020-01-01 {new}.sh; \
                 python3 -c \"import os; os.setxattr(\\\"{new}.sh\\\", \\\"user.ok\\\", b\\\"1\\\"); \
                 os.utime(os.open(\\\"{new}.sh\\\", os.O_RDONLY), (0, 0))\"; \
                 chmod 0644 {name}; cp -p {name} {new}.py; chmod 0600 {new}.py; \
                 python3 -c \"import os; os.chown(\\\"{name}\\\", os.getuid(), os.getgid()); \
                 os.chown(os.open(\\\"{name}\\\", os.O_RDONLY), -1, os.getgid())\"; \
                 t=$(mktemp -d); echo a > $t/a; ln $t/a $t/b; chmod +x $t/a; touch $t/b; \
                 echo o > own-{new}; ln own-{new} own2-{new}; echo p >> own-{new}; \
                 chmod +x own2-{new}; touch own-{new}; \
                 echo b >> $t/b; echo s > /dev/shm/s; ln /dev/shm/s /dev/shm/s2; \
                 chmod 0600 /dev/shm/s2; echo t >> /dev/shm/s; \
                 git init -q g-{new}; cd g-{new}; echo a > a; chmod +x a; git add a; \
                 git commit -qm a; git log --oneline | wc -l"
            ),
        );
        assert_eq!(o.status.code(), Some(0), "{l:?}: {}", text(&o.stderr));
        assert_eq!(text(&o.stdout), "ran\n1\n", "{l:?}: {}", text(&o.stderr));
        let v = last_json(&o.stderr);
        assert!(
            v["denials"]["total"].as_u64().unwrap_or(0) == 0,
            "{l:?}: nothing refused: {v}"
        );
        assert_eq!(metadata_of(&store), before, "{l:?}");
        let made = std::fs::metadata(p.dir(l).join(format!("{new}.sh"))).unwrap();
        use std::os::unix::fs::MetadataExt;
        assert_eq!((made.mode() & 0o111, made.mtime()), (0o111, 0), "{l:?}");
        // A chown to the same owner (nu30 F3, let through above) still clears a
        // set-user-ID bit: refused on such a file.
        relink();
        std::fs::set_permissions(&store, std::os::unix::fs::PermissionsExt::from_mode(0o4755))
            .unwrap();
        let o = p.sh(
            l,
            &py(&format!("os.chown(\"{name}\", os.getuid(), os.getgid())")),
        );
        assert_ne!(o.status.code(), Some(0), "{l:?}: {}", text(&o.stderr));
        assert_eq!(
            std::fs::metadata(&store).unwrap().mode() & 0o7777,
            0o4755,
            "{l:?}"
        );
    }
}

/// The credential store is unreadable; stdout reaches the caller on both paths.
#[test]
fn secret_read_fails_on_both_paths() {
    if !sandbox_available() {
        return;
    }
    let p = project();
    for l in ALL {
        let o = p.sh(l, "cat ~/.ssh/id_rsa; echo DONE");
        let so = text(&o.stdout);
        assert!(so.contains("DONE"), "{l:?}: stdout is passed through: {so}");
        assert!(!so.contains("PRIVATE KEY"), "{l:?}: {so}");
    }
}

/// No connection to the host's loopback; a private loopback works inside.
#[test]
fn network_is_private_on_both_paths() {
    if !sandbox_available() {
        return;
    }
    let p = project();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    for l in ALL {
        let o = p.sh(
            l,
            &format!(
                "python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", {port}), \
                 timeout=2)' 2>/dev/null && echo NET_LEAKED; echo DONE"
            ),
        );
        let so = text(&o.stdout);
        assert!(
            so.contains("DONE") && !so.contains("NET_LEAKED"),
            "{l:?}: {so}"
        );
    }
    listener.set_nonblocking(true).unwrap();
    assert!(listener.accept().is_err(), "nothing may have connected");
}

/// git commits, python writes a temp file; a hook cannot be planted and a code-running key
/// written into the brokered `.git/config` copy never reaches the host file.
#[test]
fn git_python_and_protected_git_config_on_both_paths() {
    if !sandbox_available() {
        return;
    }
    let p = project();
    for l in BOTH {
        let name = l.name();
        // Approved: the exec policy asks about a direct `.git/config` write; what the
        // sandbox does with it is checked here.
        let o = p.sh_with(
            l,
            &["--yes"],
            &format!(
                "echo {name} > f-{name} && git add f-{name} && git commit -qm {name} && echo GIT_OK; \
                 python3 -c 'import tempfile; f=tempfile.NamedTemporaryFile(); f.write(b\"x\"); f.flush(); print(\"PY_OK\")'; \
                 echo '[core] hooksPath = /x' >> .git/config; \
                 echo 'touch /tmp/pwned' > .git/hooks/post-commit && echo HOOK_WRITTEN; true"
            ),
        );
        let so = text(&o.stdout);
        assert!(so.contains("GIT_OK"), "{l:?}: {so} {}", text(&o.stderr));
        assert!(so.contains("PY_OK"), "{l:?}: {so} {}", text(&o.stderr));
        assert!(!so.contains("HOOK_WRITTEN"), "{l:?}: {so}");
        assert!(!p.dir.join(".git/hooks/post-commit").exists(), "{l:?}");
        let cfg = std::fs::read_to_string(p.dir.join(".git/config")).unwrap();
        assert!(!cfg.contains("hooksPath"), "{l:?}: {cfg}");
    }
}

/// Exit codes and stderr capture are the command's on both paths; a missing command is 127.
#[test]
fn exit_codes_on_both_paths() {
    if !sandbox_available() {
        return;
    }
    let p = project();
    for l in ALL {
        let o = p.sh(l, "echo oops >&2; exit 7");
        assert_eq!(o.status.code(), Some(7), "{l:?}");
        assert!(text(&o.stderr).contains("oops"), "{l:?}");
        let o = p
            .cordon(l, &["--", "no-such-command-cordon"])
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(127), "{l:?}: {}", text(&o.stderr));
    }
}

/// New-user pass nu15 N6: a background job still starting when the command exits ends
/// with it, quietly — not with its calls failing `ENOSYS` ("cannot create /dev/null:
/// Function not implemented") in the window where init's supervisors are gone. Twin: the
/// command's own output and exit code are kept, and a job the command waits for runs.
#[test]
fn a_job_left_running_ends_quietly_on_every_path() {
    if !sandbox_available() {
        return;
    }
    let p = project();
    for l in ALL {
        for _ in 0..10 {
            let o = p.sh(l, "sleep 1 >/dev/null 2>&1 & echo started; exit 3");
            assert_eq!(o.status.code(), Some(3), "{l:?}");
            assert_eq!(text(&o.stdout), "started\n", "{l:?}");
            let err = text(&o.stderr);
            assert!(!err.contains("not implemented"), "{l:?}: {err}");
        }
        let o = p.sh(l, "(echo waited > /dev/null; echo ok) & wait");
        assert_eq!(text(&o.stdout), "ok\n", "{l:?}: {}", text(&o.stderr));
    }
}

/// A `--timeout` kills the tree on both paths (the server path kills the handler; the
/// helper and the sandbox die with it).
#[test]
fn timeout_kills_the_tree_on_both_paths() {
    if !sandbox_available() {
        return;
    }
    let p = project();
    for l in ALL {
        let marker = p.dir(l).join(format!("late-{}", l.name()));
        let start = Instant::now();
        let o = p
            .cordon(
                l,
                &[
                    "--timeout",
                    "300ms",
                    "--",
                    "sh",
                    "-c",
                    &format!("sleep 2; touch {}", marker.display()),
                ],
            )
            .output()
            .unwrap();
        assert!(start.elapsed() < Duration::from_secs(2), "{l:?}");
        let v = last_json(&o.stderr);
        assert_eq!(v["outcome"].as_str(), Some("timed-out"), "{l:?}: {v}");
        assert_eq!(v["launch"].as_str(), Some(l.name()), "{l:?}: {v}");
        std::thread::sleep(Duration::from_millis(2200));
        assert!(!marker.exists(), "{l:?}: the tree outlived the timeout");
    }
}

/// Attack pass 171: a command that stopped itself (`kill -STOP $$`) ends when cordon is
/// sent SIGTERM, on every path: the signal is followed by SIGCONT, as `timeout` does (the
/// cold path waited until someone continued the command, SIGTERM pending). Twin: the
/// command had stopped (it did not go on by itself), and SIGTERM ends it, not SIGCONT
/// alone (`resumed` is never printed; the exit is 143, by the signal).
#[test]
fn a_stopped_command_ends_when_cordon_is_terminated_on_every_path() {
    if !sandbox_available() {
        return;
    }
    let p = project();
    for l in ALL {
        let ready = p.dir(l).join(format!("stopping-{}", l.name()));
        let script = format!("touch {}; kill -STOP $$; echo resumed", ready.display());
        let child = p.spawn_until(l, &["--", "sh", "-c", &script], &ready);
        // Stopped for a while: nothing ends it by itself.
        std::thread::sleep(Duration::from_millis(300));
        // SAFETY: kill has no memory-safety preconditions; the pid is our child's.
        unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
        let o = wait_at_most(child, Duration::from_secs(10))
            .unwrap_or_else(|| panic!("{l:?}: cordon still waits on the stopped command"));
        assert_eq!(text(&o.stdout), "", "{l:?}: the command went on");
        assert_eq!(o.status.code(), Some(143), "{l:?}: {}", text(&o.stderr));
    }
}

/// Attack pass 175 F3, new-user pass 176: SIGUSR1, SIGUSR2, SIGALRM and SIGCONT sent to
/// cordon reach the command on every path (SIGCONT resumes one that stopped itself), as the signals that end a run do (they ended cordon by
/// their default action: no report, the command killed with the sandbox). A command that
/// traps one goes on and exits as it chooses (`success`, 0); one that does not is ended by
/// it, and the report says so (exit 128+N, the signal named).
#[test]
fn user_signals_sent_to_cordon_reach_the_command_on_every_path() {
    if !sandbox_available() {
        return;
    }
    let p = project();
    for l in ALL {
        for (sig, name, trapped) in [
            (libc::SIGUSR1, "USR1", true),
            (libc::SIGALRM, "ALRM", true),
            (libc::SIGUSR2, "USR2", false),
            (libc::SIGCONT, "CONT", true),
        ] {
            let ready = p.dir(l).join(format!("ready-{}-{name}", l.name()));
            let trap = if trapped {
                format!("trap 'echo got-{name}; exit 0' {name}; ")
            } else {
                String::new()
            };
            // SIGCONT: the command stopped itself, and goes on once continued.
            let wait = if sig == libc::SIGCONT {
                "kill -STOP $$; sleep 5"
            } else {
                "while :; do sleep 0.05; done"
            };
            let script = format!("{trap}touch {}; {wait}", ready.display());
            let child = p.spawn_until(l, &["--", "sh", "-c", &script], &ready);
            // Past `touch` (stopped, for SIGCONT: sent earlier, it would continue nothing).
            std::thread::sleep(Duration::from_millis(300));
            // SAFETY: kill has no memory-safety preconditions; the pid is our child's.
            unsafe { libc::kill(child.id() as i32, sig) };
            let o = wait_at_most(child, Duration::from_secs(10))
                .unwrap_or_else(|| panic!("{l:?} {name}: the command ran on"));
            let v = last_json(&o.stderr);
            assert_eq!(v["launch"].as_str(), Some(l.name()), "{l:?} {name}");
            if trapped {
                assert_eq!(text(&o.stdout), format!("got-{name}\n"), "{l:?}");
                assert_eq!(o.status.code(), Some(0), "{l:?} {name}: {v}");
                assert_eq!(v["outcome"], "success", "{l:?} {name}: {v}");
            } else {
                assert_eq!(o.status.code(), Some(128 + sig), "{l:?} {name}: {v}");
                assert_eq!(v["signal"], sig, "{l:?} {name}: {v}");
            }
        }
    }
}

/// `child`'s output once it has exited, or `None` (and `child` killed) after `d`.
fn wait_at_most(child: Child, d: Duration) -> Option<Output> {
    let pid = child.id() as i32;
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(d) {
        Ok(o) => Some(o.unwrap()),
        Err(_) => {
            // SAFETY: kill has no memory-safety preconditions; the pid is our child's.
            unsafe { libc::kill(pid, libc::SIGKILL) };
            None
        }
    }
}

/// New-user pass nu22, P2: a SIGINT sent to cordon's process group (`timeout -s INT`, a
/// harness's `killpg`) stops the whole command on every path — through the server too,
/// where the command is not in the caller's group (a shell waiting for `sleep` deferred
/// it, and the command ran to its end). nu23 Q4: so does one sent to cordon's pid alone
/// (Node's `child.kill('SIGINT')`), on the cold path too, where the report said
/// `cancelled` for a command that ran to its end and exited 0.
#[test]
fn an_interrupt_to_the_process_group_stops_the_command_on_every_path() {
    use std::os::unix::process::CommandExt;
    if !sandbox_available() {
        return;
    }
    let p = project();
    for (l, to_group) in ALL.into_iter().flat_map(|l| [(l, true), (l, false)]) {
        let tag = format!("{}-{}", l.name(), if to_group { "group" } else { "pid" });
        let marker = p.dir(l).join(format!("went-on-{tag}"));
        let started = p.dir(l).join(format!("started-{tag}"));
        // The shell waits for a foreground child that says it has started: an interrupt
        // sent once `started` exists finds the child already forked. With `touch started;
        // sleep 15` it could land while bash forks `sleep` (the kernel restarts that fork,
        // bash's handler takes the signal, the new child never gets it, and bash goes on
        // when `sleep` exits 0): a race inside bash, at a terminal's ^C as well, seen as
        // one flaky "ran on" in ~30 runs under load.
        let script = format!(
            "sh -c 'touch {}; exec sleep 15'; touch {}",
            started.display(),
            marker.display()
        );
        let mut cmd = p.cordon(l, &["--", "bash", "-c", &script]);
        // A session of its own, as a harness's `start_new_session`: no controlling
        // terminal, whether or not the tests run at one; its own process group too.
        // SAFETY: setsid is async-signal-safe and touches no memory.
        unsafe {
            cmd.pre_exec(|| {
                if libc::setsid() < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let child = cmd
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let t0 = Instant::now();
        while !started.exists() && t0.elapsed() < Duration::from_secs(20) {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(started.exists(), "{l:?}: never started");
        let target = if to_group {
            -(child.id() as i32)
        } else {
            child.id() as i32
        };
        // SAFETY: kill has no memory-safety preconditions; the group is the child's own.
        unsafe { libc::kill(target, libc::SIGINT) };
        let t1 = Instant::now();
        let o = child.wait_with_output().unwrap();
        assert!(t1.elapsed() < Duration::from_secs(10), "{tag}: ran on");
        let v = last_json(&o.stderr);
        assert_eq!(v["launch"].as_str(), Some(l.name()), "{tag}");
        assert!(
            !marker.exists(),
            "{tag}: the command went on after the interrupt"
        );
        assert_eq!(o.status.code(), Some(130), "{tag}: {}", text(&o.stderr));
        assert_eq!(v["outcome"], "cancelled", "{tag}: {v}");
    }
}

/// New-user pass nu15 N5: a server stopped while it runs a command takes the command with
/// it, and the report says so (outcome `cancelled`, the server named), not "killed by
/// signal 9" as the command's own failure. Twin: a command that finishes is unaffected.
#[test]
fn a_stopped_server_is_named_as_the_end_of_its_commands() {
    if !sandbox_available() {
        return;
    }
    let mut p = project();
    for l in [Launch::Server, Launch::Template] {
        let o = p.sh(l, "true");
        assert_eq!(o.status.code(), Some(0), "{l:?}: {}", text(&o.stderr));
    }
    let run = p
        .cordon(Launch::Server, &["--", "sleep", "30"])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(700));
    p.server_of(Launch::Server).kill().unwrap();
    let _ = p.server_of(Launch::Server).wait();
    let o = run.wait_with_output().unwrap();
    let v = last_json(&o.stderr);
    assert_eq!(v["launch"].as_str(), Some("server"), "{v}");
    assert_eq!(v["outcome"].as_str(), Some("cancelled"), "{v}");
    assert!(
        v["evidence"]
            .to_string()
            .contains("the cordon server ended"),
        "{v}"
    );
    // nu16 N6: said on stderr too, not only in --json.
    assert!(
        text(&o.stderr).contains("cordon: cancelled: the cordon server ended"),
        "{}",
        text(&o.stderr)
    );
}

/// A server stopped before it answered (Ctrl-Z in its terminal) held every client in
/// silence. The client now names it, once, with what to do, and keeps waiting (falling back
/// could run the command twice): continued, the server runs the command. Twin: a server
/// that answers says nothing of the kind.
#[test]
fn a_client_names_a_stopped_server_it_waits_for() {
    if !sandbox_available() {
        return;
    }
    let mut p = project();
    let o = p.sh(Launch::Server, "true");
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(!text(&o.stderr).contains("which is stopped"));
    let pid = p.server_of(Launch::Server).id() as libc::pid_t;
    // SAFETY: a signal to the server this test started (still its child: the pid is ours).
    assert_eq!(unsafe { libc::kill(pid, libc::SIGSTOP) }, 0);
    let run = p
        .cordon(Launch::Server, &["--", "sh", "-c", "echo ran"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(3000));
    // SAFETY: as above.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGCONT) }, 0);
    let o = run.wait_with_output().unwrap();
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert_eq!(text(&o.stdout), "ran\n");
    assert_eq!(err.matches("which is stopped").count(), 1, "{err}");
    assert!(err.contains(&format!("kill -CONT {pid}")), "{err}");
    assert_eq!(last_json(&o.stderr)["launch"].as_str(), Some("server"));
}

/// Attack pass 167, finding 5: a client killed while the server was stopped (its caller's
/// `timeout`): once the server goes on, that command must not run with no one waiting for
/// it (the server drops a request whose client hung up; a handler's first reply would fail
/// too). Twin: the next client's command runs.
#[test]
fn a_request_whose_client_is_gone_is_not_run() {
    if !sandbox_available() {
        return;
    }
    let mut p = project();
    let o = p.sh(Launch::Server, "true");
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let marker = p.dir(Launch::Server).join("RAN");
    let pid = p.server_of(Launch::Server).id() as libc::pid_t;
    // SAFETY: signals to the server this test started (its child: the pid is ours).
    assert_eq!(unsafe { libc::kill(pid, libc::SIGSTOP) }, 0);
    let mut run = p
        .cordon(Launch::Server, &["--", "touch", marker.to_str().unwrap()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    run.kill().unwrap();
    let _ = run.wait();
    // SAFETY: as above.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGCONT) }, 0);
    std::thread::sleep(Duration::from_millis(1500));
    assert!(
        !marker.exists(),
        "the command of a client that was gone ran"
    );
    let o = p.sh(Launch::Server, &format!("touch {}", marker.display()));
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(marker.exists());
}

/// A sandboxed command cannot launch through the server (it would run outside its own
/// sandbox): the server refuses a peer in other namespaces, and the nested `cordon run`
/// takes the cold path, inside the outer sandbox. The socket is put in the workspace, where
/// the sandbox's unix-socket guard lets the command connect: only the server's own check
/// stands between the command and an unconfined launch.
/// R-H5 on every launch path: the command runs inside the run's own cgroup (pids and
/// memory bound the whole tree), which the helper now moves init into after the clone
/// instead of joining itself (issue 12: a self-move cost an RCU grace period, ~7 ms, on
/// every run). Where the host gives cordon no cgroup (not root, no delegation) no path has
/// one; under CI (root on a cgroup host) every path must.
#[test]
fn the_command_runs_in_the_runs_cgroup_on_every_path() {
    if !sandbox_available() {
        return;
    }
    let p = project();
    let in_own = |l: Launch| -> bool {
        let o = p.sh(l, "cat /proc/self/cgroup");
        assert_eq!(o.status.code(), Some(0), "{l:?}: {}", text(&o.stderr));
        text(&o.stdout)
            .lines()
            .any(|line| line.contains("pids") && line.contains("/cordon-"))
            || text(&o.stdout)
                .lines()
                .any(|line| line.starts_with("0::") && line.contains("/cordon-"))
    };
    let cold = in_own(Launch::Cold);
    if std::env::var("CI").as_deref() == Ok("true") {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } == 0 {
            assert!(cold, "no run cgroup on the cold path (root, CI)");
        }
    }
    for l in [Launch::Server, Launch::Template] {
        assert_eq!(in_own(l), cold, "{l:?} differs from the cold path");
    }
}

/// The run's cgroup is removed once the run is over, on every launch path: by the helper
/// on the cold path, by the server's handler (after it passed the status on) for a
/// template's command, whose helper leaves it to that handler (issue 12). A leftover
/// directory would keep its limits and counters for nothing, one per command. Attack
/// pass 175 F2: so it is after `--timeout` on every path (the timer killed the helper, or
/// the server's handler, before either could remove it), and after the client was killed
/// on the server paths (the handler killed the helper that made it).
#[test]
fn the_runs_cgroup_is_removed_after_the_run_on_every_path() {
    if !sandbox_available() {
        return;
    }
    let p = project();
    // `N:pids:/a/cordon-…` (v1) or `0::/a/cordon-…` (v2): where it is on the host.
    let dirs_of = |cgroup: &str| -> Vec<PathBuf> {
        cgroup
            .lines()
            .filter(|line| line.contains("/cordon-"))
            .filter_map(|line| {
                let mut it = line.splitn(3, ':');
                let (_, ctrl, path) = (it.next()?, it.next()?, it.next()?);
                let base = match ctrl.split(',').find(|c| *c == "pids" || *c == "memory") {
                    Some(c) => format!("/sys/fs/cgroup/{c}"),
                    None if line.starts_with("0::") => "/sys/fs/cgroup".into(),
                    None => return None,
                };
                Some(Path::new(&base).join(path.trim_start_matches('/')))
            })
            .collect()
    };
    let gone = |what: &str, dirs: &[PathBuf]| {
        // SAFETY: geteuid has no preconditions.
        if std::env::var("CI").as_deref() == Ok("true") && unsafe { libc::geteuid() } == 0 {
            assert!(!dirs.is_empty(), "{what}: no run cgroup (root, CI)");
        }
        // The server's handler removes it just after the client has the status.
        let deadline = Instant::now() + Duration::from_secs(3);
        while dirs.iter().any(|d| d.exists()) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        let left: Vec<_> = dirs.iter().filter(|d| d.exists()).collect();
        assert!(
            left.is_empty(),
            "{what}: the run's cgroup is left: {left:?}"
        );
    };
    for l in ALL {
        let o = p.sh(l, "cat /proc/self/cgroup");
        assert_eq!(o.status.code(), Some(0), "{l:?}: {}", text(&o.stderr));
        gone(&format!("{l:?}"), &dirs_of(&text(&o.stdout)));
        // Ended by `--timeout`, and (server paths) by the client's death.
        for killed in [false, true] {
            if killed && l == Launch::Cold {
                continue; // nothing of cordon's is left to remove it (documented)
            }
            let file = p.dir(l).join(format!("cg-{}-{killed}", l.name()));
            let script = format!("cat /proc/self/cgroup > {}; sleep 10", file.display());
            let mut args = vec!["--", "sh", "-c", &script];
            if !killed {
                args.splice(0..0, ["--timeout", "1s"]);
            }
            let mut child = p
                .cordon(l, &args)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap();
            let t0 = Instant::now();
            while std::fs::read_to_string(&file).map_or(true, |s| s.is_empty())
                && t0.elapsed() < Duration::from_secs(20)
            {
                std::thread::sleep(Duration::from_millis(20));
            }
            if killed {
                child.kill().unwrap();
            }
            let status = child.wait().unwrap();
            assert_eq!(
                status.code(),
                (!killed).then_some(137),
                "{l:?} killed={killed}"
            );
            let what = format!("{l:?} killed={killed}");
            gone(&what, &dirs_of(&std::fs::read_to_string(&file).unwrap()));
        }
    }
}

#[test]
fn sandboxed_command_cannot_use_the_server() {
    if !sandbox_available() {
        return;
    }
    let p = project();
    let sock = p.dir.join("srv").join("s.sock");
    let mut inner = spawn_server_with(&sock, &["--no-templates"]);
    let outside = p.home.join("escaped.txt");
    let script = format!(
        "{CORDON} run --json -w {home} -- sh -c 'echo x > {out}'; true",
        home = p.home.display(),
        out = outside.display()
    );
    let o = p
        .cordon(Launch::Server, &["--", "sh", "-c", &script])
        .env("CORDON_SERVE_SOCKET", &sock)
        .output()
        .unwrap();
    let _ = inner.kill();
    let _ = inner.wait();
    let err = text(&o.stderr);
    assert_eq!(last_json(&o.stderr)["launch"].as_str(), Some("server"));
    // The nested run's report (the first JSON line) must not say it used the server.
    let nested = err
        .lines()
        .find_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .map(|v| v["launch"].clone());
    assert!(
        !outside.exists(),
        "escaped through the server (nested launch: {nested:?})"
    );
    assert_ne!(nested.as_ref().and_then(|v| v.as_str()), Some("server"));
}

/// The socket is private: mode 0600 in a 0700 directory.
#[test]
fn socket_is_private() {
    let p = project();
    use std::os::unix::fs::PermissionsExt;
    let mode = |q: &Path| std::fs::metadata(q).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&p.socket()), 0o600);
    assert_eq!(mode(p.socket().parent().unwrap()), 0o700);
}

/// New-user pass 150, item 1: a socket directory that exists and is not private (0755) was
/// refused with "Bad file descriptor" (`fchmod` on an `O_PATH` descriptor). It is refused
/// with the directory named and what it must be, and left as it was (it may be shared);
/// so is a symlink to a directory. Twin: a missing directory is created 0700 and served
/// in (`socket_is_private`).
#[test]
fn a_socket_directory_that_is_not_private_is_refused_by_name() {
    use std::os::unix::fs::PermissionsExt;
    let root = tempfile::Builder::new()
        .prefix("cordon-serve-dir-")
        .tempdir_in("/var/tmp")
        .unwrap();
    let open = root.path().join("open");
    std::fs::create_dir(&open).unwrap();
    std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o755)).unwrap();
    let link = root.path().join("link");
    let private = root.path().join("private");
    std::fs::create_dir(&private).unwrap();
    std::fs::set_permissions(&private, std::fs::Permissions::from_mode(0o700)).unwrap();
    std::os::unix::fs::symlink(&private, &link).unwrap();
    for (dir, why) in [
        (&open, "has mode 755"),
        (&link, "is, or is reached through, a symlink"),
    ] {
        let o = Command::new("timeout")
            .arg("10")
            .arg(CORDON)
            .args(["serve", "--socket"])
            .arg(dir.join("s.sock"))
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let err = text(&o.stderr);
        assert_eq!(o.status.code(), Some(125), "{err}");
        assert!(
            err.contains(&format!("{} {why}", dir.display()))
                && err.contains("must be a directory of yours with mode 0700"),
            "{err}"
        );
        assert!(!err.contains("os error"), "{err}");
    }
    let mode = std::fs::metadata(&open).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o755, "the directory was changed");
    assert!(!private.join("s.sock").exists());
}

/// New-user pass 152: a relative `CORDON_SERVE_SOCKET` is read against the current
/// directory by `run` as by `serve` (the server listened at the absolute path and `run`
/// quietly took the cold path). Twin: `--no-server` still runs cold.
#[test]
fn a_relative_socket_names_the_same_server_for_run() {
    let p = project();
    let o =
        p.p.cordon_in(&p.plain, &["run", "--json", "--", "true"])
            .env("CORDON_SERVE_SOCKET", "../run/serve.sock")
            .output()
            .unwrap();
    assert_eq!(
        last_json(&o.stderr)["launch"].as_str(),
        Some("template"),
        "{}",
        text(&o.stderr)
    );
    let o =
        p.p.cordon_in(&p.plain, &["run", "--json", "--no-server", "--", "true"])
            .env("CORDON_SERVE_SOCKET", "../run/serve.sock")
            .output()
            .unwrap();
    assert_eq!(last_json(&o.stderr)["launch"].as_str(), Some("cold"));
}

/// One truth: the report of a run is the same on both paths — the layers the helper
/// applied, the rung, and the kernel-side denial records of a denied write (new-user
/// finding: through the server `applied` was empty and the records missing, so a denial
/// was only a low-confidence guess).
#[test]
fn the_report_is_the_same_on_both_paths() {
    if !sandbox_available() {
        return;
    }
    let p = project();
    let mut seen = Vec::new();
    for l in ALL {
        let o = p.sh(l, PROBE);
        let v = last_json(&o.stderr);
        let applied = v["applied"].as_array().cloned().unwrap_or_default();
        assert!(applied.len() >= 5, "{l:?}: {v}");
        assert_eq!(v["rung"], "namespaces", "{l:?}: {v}");
        assert_eq!(v["outcome"], "sandbox-denied", "{l:?}: {v}");
        assert_eq!(v["confidence"], "high", "{l:?}: {v}");
        let records = v["denials"]["records"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        assert_eq!(records.len(), 1, "{l:?}: {v}");
        seen.push((applied, records[0]["path"].clone()));
    }
    assert_eq!(seen[0], seen[1]);
    // The template's workspace is another directory: compare with a cold run there.
    let o =
        p.p.cordon_in(
            &p.plain,
            &["run", "--json", "--no-server", "--", "sh", "-c", PROBE],
        )
        .output()
        .unwrap();
    let v = last_json(&o.stderr);
    assert_eq!(v["launch"], "cold");
    let applied = v["applied"].as_array().cloned().unwrap_or_default();
    let record = v["denials"]["records"][0]["path"].clone();
    assert_eq!((applied, record), seen[2]);
}

const PROBE: &str = "touch /usr/cordon-serve-probe; exit 1";

/// The fake server a sandboxed command plants: binds `argv[1]` (in a 0700 directory it
/// makes), logs each request to `argv[2]`, and answers as a server would (a pid, status
/// 0) without running anything.
const PLANTED_SERVER: &str = r#"
import os, socket, sys
sock, log = sys.argv[1], sys.argv[2]
os.mkdir(os.path.dirname(sock), 0o700)
s = socket.socket(socket.AF_UNIX)
s.bind(sock)
s.listen(8)
open(log, "w").write("LISTENING\n")
while True:
    c, _ = s.accept()
    c.settimeout(2)
    try:
        data = c.recv(65536)
    except Exception:
        data = b""
    if data:
        open(log, "a").write("REQUEST " + data.decode(errors="replace") + "\n")
        c.sendall(b'{"pid":1}\n{"status":0}\n')
    c.close()
"#;

/// A same-uid listener planted by a sandboxed command (in a private directory it made,
/// where the client looks for the server) is not trusted: the client sends it nothing and
/// runs the command on the cold path. Without the client's check of the server process
/// (namespaces, confinement) the request — descriptors included — went to the fake, which
/// answered "status 0" for a command that never ran.
#[test]
fn client_does_not_trust_a_planted_listener() {
    if !sandbox_available() {
        return;
    }
    let p = project();
    let sock = p.dir.join("planted").join("serve.sock");
    let log = p.dir.join("planted.log");
    let mut fake =
        p.p.cordon(&["run", "--no-server", "--", "python3", "-c", PLANTED_SERVER])
            .arg(&sock)
            .arg(&log)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .spawn()
            .unwrap();
    let start = Instant::now();
    while !std::fs::read_to_string(&log).is_ok_and(|l| l.contains("LISTENING")) {
        if start.elapsed() > Duration::from_secs(20) {
            let _ = fake.kill();
            panic!("the planted listener did not start");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let marker = p.dir.join("ran-for-real");
    let o = p
        .cordon(
            Launch::Server,
            &["--", "sh", "-c", "echo yes > ran-for-real"],
        )
        .env("CORDON_SERVE_SOCKET", &sock)
        .output()
        .unwrap();
    let _ = fake.kill();
    let _ = fake.wait();
    let logged = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(
        !logged.contains("REQUEST"),
        "the planted listener got a request: {logged}"
    );
    assert_eq!(
        last_json(&o.stderr)["launch"].as_str(),
        Some("cold"),
        "{}",
        text(&o.stderr)
    );
    assert!(marker.exists(), "the command did not run");
    assert!(
        text(&o.stderr).contains("not using the server"),
        "the refusal is named: {}",
        text(&o.stderr)
    );
}

/// The twin: the real server, in a private directory of ours, is trusted (the server path
/// is taken) — and a socket directory that is not private is not.
#[test]
fn client_trusts_the_real_server_only_in_a_private_directory() {
    if !sandbox_available() {
        return;
    }
    let p = project();
    let o = p.sh(Launch::Server, "true");
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    use std::os::unix::fs::PermissionsExt;
    let dir = p.socket_of(Launch::Server).parent().unwrap().to_path_buf();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    let o = p.cordon(Launch::Server, &["--", "true"]).output().unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(last_json(&o.stderr)["launch"].as_str(), Some("cold"));
    assert!(text(&o.stderr).contains("not a private directory"));
}

/// `home/.ssh -> a/b` and `home/a -> x`, with a key in each of `x/b` and `y/b` (`KEY-X`,
/// `KEY-Y`): a hidden path reached through two symlinks.
fn ssh_through_links(home: &Path) {
    let _ = std::fs::remove_dir_all(home.join(".ssh"));
    for (d, key) in [("x", "KEY-X"), ("y", "KEY-Y")] {
        std::fs::create_dir_all(home.join(d).join("b")).unwrap();
        std::fs::write(home.join(d).join("b/id_rsa"), key).unwrap();
    }
    std::os::unix::fs::symlink("x", home.join("a")).unwrap();
    std::os::unix::fs::symlink("a/b", home.join(".ssh")).unwrap();
}

/// Re-points `home/a` to `to` by renaming a new link over it, as `ln -sfn` does.
fn repoint_a(home: &Path, to: &str) {
    let tmp = home.join("a.new");
    let _ = std::fs::remove_file(&tmp);
    std::os::unix::fs::symlink(to, &tmp).unwrap();
    std::fs::rename(&tmp, home.join("a")).unwrap();
}

/// Attack pass 173, finding 1: a symlink on the way to a hidden path (`~/.ssh -> a/b`,
/// `~/a -> x`) re-pointed on the host while the command runs (`~/a -> y`) led the hidden
/// spelling past its cover, and the run said `success`. The links resolution went through
/// are watched like the cover's own name: the run is stopped (`cancelled`, 125) and the
/// other directory's key is never read. Twin: without the change, the key stays hidden
/// and the run succeeds.
#[test]
fn a_link_on_the_way_to_a_hidden_path_repointed_during_the_run_stops_it_on_every_path() {
    if !sandbox_available() {
        return;
    }
    let p = project();
    let h = &p.home;
    ssh_through_links(h);
    let read = "for i in $(seq 30); do cat ~/.ssh/id_rsa 2>/dev/null; sleep 0.05; done; echo DONE";
    for l in ALL {
        let o = p.sh(l, "true");
        assert_eq!(o.status.code(), Some(0), "{l:?}: {}", text(&o.stderr));
        // Twin: nothing changes, nothing is read.
        let o = p.sh(l, read);
        assert_eq!(text(&o.stdout), "DONE\n", "{l:?}: {}", text(&o.stderr));
        assert_eq!(o.status.code(), Some(0), "{l:?}");
        let child = p
            .cordon(l, &["--", "sh", "-c", read])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(600));
        repoint_a(h, "y");
        let o = child.wait_with_output().unwrap();
        let out = text(&o.stdout);
        assert!(!out.contains("KEY-"), "{l:?}: a hidden key was read: {out}");
        let v = last_json(&o.stderr);
        // Stopped while it ran; or, on a loaded machine where the command had not started
        // by the change, refused before it did (the watch's check): either way not run on.
        assert!(
            v["outcome"] == "cancelled" || v["outcome"] == "refused",
            "{l:?}: {v}"
        );
        assert_eq!(o.status.code(), Some(125), "{l:?}");
        // Back for the next path.
        repoint_a(h, "x");
    }
}

/// Attack pass 174: a link on the way to a hidden path re-pointed between the profile's
/// resolution and the start of the watch (5–15 ms after the start, through the server)
/// sent no event, and the run read the other directory's key for its whole length. The
/// watch now checks, once it exists, that each hidden spelling still resolves where it
/// did: the run is refused (125) and nothing is read. The window is widened here with the
/// test-only start delay of the helper, which comes before its watch on the cold path and
/// the server's per-command helper. Twin: the same delay without a change runs (exit 0).
#[test]
fn a_link_repointed_before_the_watch_starts_refuses_the_run() {
    if !sandbox_available() {
        return;
    }
    let p = project();
    let h = &p.home;
    ssh_through_links(h);
    for l in [Launch::Cold, Launch::Server] {
        let run = || {
            let mut c = p.cordon(l, &["--", "sh", "-c", "cat ~/.ssh/id_rsa; echo DONE"]);
            c.env("CORDON_TEST_HELPER_START_DELAY_MS", "800");
            c.stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        };
        let o = run().wait_with_output().unwrap();
        assert_eq!(o.status.code(), Some(0), "{l:?}: {}", text(&o.stderr));
        let child = run();
        std::thread::sleep(Duration::from_millis(300));
        repoint_a(h, "y");
        let o = child.wait_with_output().unwrap();
        let out = text(&o.stdout);
        assert!(!out.contains("KEY-"), "{l:?}: a hidden key was read: {out}");
        assert_eq!(o.status.code(), Some(125), "{l:?}: {}", text(&o.stderr));
        assert!(
            text(&o.stderr).contains("a symlink on the way was changed"),
            "{l:?}: {}",
            text(&o.stderr)
        );
        repoint_a(h, "x");
    }
}

/// Commands forked from one template at the same time each have a mount namespace of
/// their own (made ahead of the command, or cloned): one's fresh `/tmp` never covers the
/// other's, and the template's own mounts do not pile up command after command. Twin: each
/// command's own `/tmp` file is there for it to read back.
#[test]
fn concurrent_template_commands_have_their_own_mounts() {
    if !sandbox_available() {
        return;
    }
    let p = project();
    p.sh(Launch::Template, "true");
    let first = p.sh(Launch::Template, "grep -c . /proc/self/mounts");
    let a = p
        .cordon(
            Launch::Template,
            &[
                "--",
                "sh",
                "-c",
                "echo a > /tmp/mine; sleep 1.5; cat /tmp/mine; ls /tmp",
            ],
        )
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(500));
    let b = p.sh(Launch::Template, "ls /tmp; echo b > /tmp/other; echo B_OK");
    assert_eq!(text(&b.stdout), "B_OK\n", "{}", text(&b.stderr));
    let a = a.wait_with_output().unwrap();
    assert_eq!(text(&a.stdout), "a\nmine\n", "{}", text(&a.stderr));
    for _ in 0..3 {
        p.sh(Launch::Template, "true");
    }
    let last = p.sh(Launch::Template, "grep -c . /proc/self/mounts");
    assert_eq!(text(&first.stdout), text(&last.stdout), "mounts piled up");
}

/// A template never carries one command's state into the next: files in `/tmp` and
/// `/dev/shm`, a process left running, a pty — the second command forked from the same
/// template sees none of them (each gets fresh `/tmp`, `/dev/shm`, `/dev/pts`, `/proc` and
/// pid namespace, as on the cold path). The twin: both run, and a file written in the
/// workspace does persist (it is the host's).
#[test]
fn template_carries_no_state_between_commands() {
    if !sandbox_available() {
        return;
    }
    let p = project();
    // The first run creates host directories the mount plan names (cache layers), which
    // changes the plan: the next two commands share one template.
    p.sh(Launch::Template, "true");
    let o = p.sh(
        Launch::Template,
        "echo a > /tmp/left; echo b > /dev/shm/left; echo c > kept; \
         python3 -c 'import os; os.openpty(); print(\"PTY_OK\")'; \
         (sleep 30 &) ; echo FIRST_OK",
    );
    let so = text(&o.stdout);
    assert!(
        so.contains("FIRST_OK") && so.contains("PTY_OK"),
        "{so} {}",
        text(&o.stderr)
    );
    let o = p.sh(
        Launch::Template,
        "ls /tmp /dev/shm /dev/pts; echo COMMS $(cat /proc/[0-9]*/comm | tr '\\n' ' '); \
         echo KEPT_$(cat kept)",
    );
    let so = text(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{so} {}", text(&o.stderr));
    assert!(!so.contains("left"), "state carried over: {so}");
    assert!(
        !so.lines().any(|l| l.trim() == "0"),
        "a pty carried over: {so}"
    );
    let comms = so
        .lines()
        .find_map(|l| l.strip_prefix("COMMS "))
        .unwrap_or_default();
    assert!(comms.contains("sh"), "{so}");
    assert!(
        !comms.contains("sleep"),
        "a process of another command is visible: {so}"
    );
    assert!(so.contains("KEPT_c"), "the workspace write persists: {so}");
}

/// A template follows the host: when the workspace directory is replaced (same path, new
/// directory), the next command gets a new template whose bind is the new directory — a
/// stale one would write into the deleted directory (lost, or another tree's).
#[test]
fn template_follows_a_replaced_workspace() {
    if !sandbox_available() {
        return;
    }
    let p = project();
    p.sh(Launch::Template, "true");
    let o = p.sh(Launch::Template, "echo x > before");
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(p.plain.join("before").exists());
    std::fs::remove_dir_all(&p.plain).unwrap();
    std::fs::create_dir(&p.plain).unwrap();
    let o = p.sh(Launch::Template, "echo x > after");
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(
        p.plain.join("after").exists(),
        "the write went to the old directory"
    );
}

/// Breaker (stop 8): with a host package cache present the template holds a cache slot of
/// its own, and every command after the first was refused as "not fitting" the template
/// (exit 125). Three commands in a row all run from the template.
#[test]
fn template_keeps_serving_with_a_cache_overlay() {
    if !sandbox_available() {
        return;
    }
    let p = project();
    std::fs::create_dir_all(p.home.join(".npm")).unwrap();
    for i in 0..3 {
        let o = p.sh(Launch::Template, "true");
        assert_eq!(o.status.code(), Some(0), "run {i}: {}", text(&o.stderr));
    }
}

/// Attack pass 41, E4: a template's cache layers are mounted live, shared by every command
/// forked from it, so while one of its commands runs the next takes the per-command helper
/// and a cache slot of its own: a write to `~/.npm` by the second is not seen by the first
/// while it runs. Twin: once the first is done, the template serves again.
#[test]
fn a_concurrent_command_does_not_share_a_templates_live_cache_layer() {
    if !overlays_available() {
        return;
    }
    let p = project();
    std::fs::create_dir_all(p.home.join(".npm/_cacache")).unwrap();
    p.sh(Launch::Template, "true");
    let flag = p.p.root.path().join("plain/started");
    let long = p
        .cordon(
            Launch::Template,
            &[
                "--",
                "sh",
                "-c",
                "touch started; i=0; while [ ! -e go ] && [ $i -lt 200 ]; do sleep 0.05; \
                 i=$((i+1)); done; ls ~/.npm/_cacache",
            ],
        )
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    while !flag.exists() && t0.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(flag.exists(), "the first command never started");
    // In the same workspace, with the same plan: the same template's.
    let o =
        p.p.cordon_in(
            &p.plain,
            &[
                "run",
                "--json",
                "--",
                "sh",
                "-c",
                "echo planted > ~/.npm/_cacache/from-second && touch go",
            ],
        )
        .env("CORDON_SERVE_SOCKET", p.socket())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let v = last_json(&o.stderr);
    // The template is busy: the server sends it back to the cold path.
    assert_eq!(v["launch"], "cold", "{v}");
    let first = long.wait_with_output().unwrap();
    assert_eq!(first.status.code(), Some(0), "{}", text(&first.stderr));
    assert_eq!(last_json(&first.stderr)["launch"], "template");
    assert!(
        !text(&first.stdout).contains("from-second"),
        "the running command saw the other's cache write: {}",
        text(&first.stdout)
    );
    p.sh(Launch::Template, "true");
}

/// How many mounts `/proc/self/mountinfo` (as printed by the command) has at `/tmp`: a
/// command forked from a template gets a fresh private `/tmp` over the template's own (2);
/// a helper that builds the whole plan for the command mounts one (1). What tells, from
/// inside, which path really ran it.
fn tmp_mounts(mountinfo: &str) -> usize {
    mountinfo
        .lines()
        .filter(|l| l.split(' ').nth(4) == Some("/tmp"))
        .count()
}

/// Tester's finding: with a package cache present, each template of a workspace held one
/// of its 4 cache slots; the fifth distinct template (here: a fifth `-w` grant) got the
/// caches read-only, so its plan was not the one the server routed by, and its commands
/// were refused with exit 125 ("does not fit the prepared template") — the plain command
/// after them too. Six distinct grants in one workspace through one server all run; each
/// report's `launch` is the path that really ran it (a template's command has the
/// template's `/tmp` beneath its own), and with more plans than template slots some are
/// sent back to the cold path.
#[test]
fn distinct_grants_in_one_workspace_all_run_and_say_how() {
    if !sandbox_available() {
        return;
    }
    let p = project();
    std::fs::create_dir_all(p.home.join(".npm")).unwrap();
    // The first run creates the cache layers' directories (the plan after it differs).
    p.sh(Launch::Template, "true");
    let mut launches = Vec::new();
    let mut run = |args: &[&str], what: &str| {
        let o = p.cordon(Launch::Template, args).output().unwrap();
        let err = text(&o.stderr);
        assert_eq!(o.status.code(), Some(0), "{what}: {err}");
        let launch = last_json(&o.stderr)["launch"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let want = match launch.as_str() {
            "template" => 2,
            "server" | "cold" => 1,
            other => panic!("{what}: launch {other:?}: {err}"),
        };
        assert_eq!(
            tmp_mounts(&text(&o.stdout)),
            want,
            "{what}: the report says {launch}: {}",
            text(&o.stdout)
        );
        launches.push(launch);
    };
    for i in 1..=6 {
        let grant = p.p.root.path().join(format!("grant-{i}"));
        std::fs::create_dir_all(&grant).unwrap();
        let grant = grant.display().to_string();
        for n in 0..2 {
            run(
                &["-w", &grant, "--", "cat", "/proc/self/mountinfo"],
                &format!("grant {i}, run {n}"),
            );
        }
    }
    run(&["--", "cat", "/proc/self/mountinfo"], "the plain command");
    assert!(launches.iter().any(|l| l == "template"), "{launches:?}");
    assert!(launches.iter().any(|l| l == "cold"), "{launches:?}");
}

/// Templates never take the cache slots of runs: with four templates of a workspace alive
/// (idle), a `--no-server` run there still gets the copy-on-write cache its dry-run plans
/// (before, the templates held all 4 slots and the run got the cache read-only: its write
/// failed with EROFS while `--dry-run` promised a private writable layer), its report has
/// no note of a missing layer, and the host cache is untouched.
#[test]
fn templates_leave_runs_their_cache_slots() {
    if !overlays_available() {
        return;
    }
    let p = project();
    std::fs::create_dir_all(p.home.join(".npm")).unwrap();
    p.sh(Launch::Template, "true");
    for i in 1..=3 {
        let grant = p.p.root.path().join(format!("grant-{i}"));
        std::fs::create_dir_all(&grant).unwrap();
        let o = p
            .cordon(
                Launch::Template,
                &["-w", &grant.display().to_string(), "--", "true"],
            )
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
        assert_eq!(last_json(&o.stderr)["launch"], "template");
    }
    let cold = |args: &[&str]| {
        let mut all = vec!["run", "--no-server"];
        all.extend_from_slice(args);
        p.p.cordon_in(&p.plain, &all).output().unwrap()
    };
    let npm = p.home.join(".npm");
    let o = cold(&["--dry-run", "--", "true"]);
    let plan = format!("{}{}", text(&o.stdout), text(&o.stderr));
    assert!(
        plan.contains(&format!("{}: copy-on-write cache `npm`", npm.display())),
        "{plan}"
    );
    let o = cold(&[
        "--json",
        "--",
        "sh",
        "-c",
        "echo x > ~/.npm/from-run && cat ~/.npm/from-run",
    ]);
    let v = last_json(&o.stderr);
    assert_eq!(v["launch"], "cold", "{v}");
    assert_eq!(
        o.status.code(),
        Some(0),
        "the cache was not writable copy-on-write: {}",
        text(&o.stderr)
    );
    assert!(
        !v["notes"]
            .to_string()
            .contains("copy-on-write layer unavailable"),
        "{v}"
    );
    assert!(!npm.join("from-run").exists(), "the host cache was written");
}

/// Breaker (stop 8): a credential file deleted and written again (as a token refresh
/// does) often gets the old inode number back; the template's mask stayed on the deleted
/// file and the new secret was readable. The identity check now sees the change time.
#[test]
fn template_hides_a_rewritten_secret() {
    if !sandbox_available() {
        return;
    }
    use std::os::unix::fs::MetadataExt;
    let p = project();
    let netrc = p.home.join(".netrc");
    std::fs::write(&netrc, "password OLDPW\n").unwrap();
    let o = p.sh(Launch::Template, "cat \"$HOME/.netrc\"");
    assert!(!text(&o.stdout).contains("OLDPW"), "{}", text(&o.stdout));
    let old = std::fs::metadata(&netrc).unwrap().ino();
    // Rewrite it until the filesystem hands the old inode number back (ext4 usually
    // does at once); the secret must stay hidden either way.
    for _ in 0..50 {
        std::fs::remove_file(&netrc).unwrap();
        std::fs::write(&netrc, "password NEWPW\n").unwrap();
        if std::fs::metadata(&netrc).unwrap().ino() == old {
            break;
        }
    }
    let o = p.sh(Launch::Template, "cat \"$HOME/.netrc\"");
    assert!(
        !text(&o.stdout).contains("NEWPW"),
        "the rewritten secret was readable through the template"
    );
}

/// Breaker (stop 8): with `CORDON_DISABLE_LAYERS=landlock` the template path still applied
/// the template's Landlock while the plan said none (planned and applied disagreed). A
/// request with disabled layers takes the per-command helper, which applies what it says.
#[test]
fn disabled_layers_do_not_use_a_template() {
    if !sandbox_available() {
        return;
    }
    let p = project();
    p.sh(Launch::Template, "true");
    let o = p
        .cordon(Launch::Template, &["--", "true"])
        .env("CORDON_DISABLE_LAYERS", "landlock")
        .output()
        .unwrap();
    let v = last_json(&o.stderr);
    assert_ne!(v["launch"], "template", "{v}");
    let applied = v["applied"].to_string();
    assert!(!applied.contains("\"landlock\""), "applied: {applied}");
}

/// New-user pass (nu9): with a server running, Ctrl-C at a terminal reached only the top
/// process of a served command (`sh -c 'a; b'`, pipelines, make kept running) and
/// `cordon run -- bash` had no job control, because a served command lives in the
/// server's session. A run at a terminal takes the cold path. Twin: the same run on pipes
/// is served from the template.
#[test]
fn a_run_at_a_terminal_takes_the_cold_path() {
    if !support::sandbox_available() {
        return;
    }
    let p = project();
    let o = p
        .cordon(Launch::Template, &["--", "true"])
        .output()
        .unwrap();
    assert_eq!(
        last_json(&o.stderr)["launch"],
        "template",
        "{}",
        text(&o.stderr)
    );
    // The same command with a pseudo-terminal on stdio (python's pty module).
    let c = p.cordon(Launch::Template, &["--", "true"]);
    let argv: Vec<String> = std::iter::once(c.get_program())
        .chain(c.get_args())
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let mut py = Command::new("python3");
    py.args([
        "-c",
        "import pty, sys; sys.exit(pty.spawn(sys.argv[1:]) >> 8)",
    ])
    .args(&argv)
    .current_dir(c.get_current_dir().unwrap());
    for (k, v) in c.get_envs() {
        match v {
            Some(v) => py.env(k, v),
            None => py.env_remove(k),
        };
    }
    let o = py.output().unwrap();
    let all = text(&o.stdout);
    assert!(all.contains("\"launch\":\"cold\""), "{all}");
}

/// Attack pass 25, A4: a `~/.cargo` without `registry/` is one copy-on-write layer as a
/// whole; one command replaced `~/.cargo/bin/cargo` and wrote `config.toml` there and every
/// later command of the workspace ran them. The layer now keeps only its caches between
/// runs, on every path, and a template (which would keep the layer mounted from one
/// command to the next) is not used for such a workspace. Twin: the download in
/// `registry/` is kept, and the planted tool works within its own command.
#[test]
fn a_whole_home_layer_keeps_only_its_caches_on_every_path() {
    if !sandbox_available() || !overlays_available() {
        return;
    }
    let p = project();
    let cargo = p.home.join(".cargo");
    std::fs::create_dir_all(cargo.join("bin")).unwrap();
    std::fs::write(cargo.join("bin/cargo"), "#!/bin/sh\necho host-cargo\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(
        cargo.join("bin/cargo"),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    std::fs::write(cargo.join("env"), "# rustup\n").unwrap();
    let plant = "printf '#!/bin/sh\\necho planted\\n' > ~/.cargo/bin/cargo && \
                 echo '[build]' > ~/.cargo/config.toml && rm ~/.cargo/env && \
                 mkdir -p ~/.cargo/registry/cache && echo dl > ~/.cargo/registry/cache/c && \
                 ~/.cargo/bin/cargo";
    let look = "~/.cargo/bin/cargo; test -e ~/.cargo/config.toml && echo config-kept; \
                cat ~/.cargo/env ~/.cargo/registry/cache/c";
    let run = |launch: Launch, script: &str| {
        let o = p
            .cordon(launch, &["--", "sh", "-c", script])
            .output()
            .unwrap();
        let v = last_json(&o.stderr);
        // No template for such a workspace: the server with templates sends it back to
        // the cold path; the `--no-templates` one runs its per-command helper.
        let expected = if launch == Launch::Server {
            "server"
        } else {
            "cold"
        };
        assert_eq!(v["launch"], expected, "{launch:?}: {}", text(&o.stderr));
        o
    };
    for launch in ALL {
        let o = run(launch, plant);
        assert_eq!(
            (o.status.code(), text(&o.stdout).as_str()),
            (Some(0), "planted\n"),
            "{launch:?}: {}",
            text(&o.stderr)
        );
        let o = run(launch, look);
        assert_eq!(
            text(&o.stdout),
            "host-cargo\n# rustup\ndl\n",
            "{launch:?}: the next command ran what the last one planted; {}",
            text(&o.stderr)
        );
    }
    assert_eq!(
        std::fs::read_to_string(cargo.join("bin/cargo")).unwrap(),
        "#!/bin/sh\necho host-cargo\n"
    );
    assert!(!cargo.join("registry").exists() && !cargo.join("config.toml").exists());
}

/// Issue 12: the server keeps what it computed per profile text, and a template takes the
/// profile it was made for without parsing it again when a command's profile text is the
/// same. Two profiles with one mount plan share a template; each command must still run
/// with its own (here: its open-files limit), and a profile seen before again with its own.
#[test]
fn a_template_runs_each_commands_own_profile() {
    if !sandbox_available() {
        return;
    }
    let p = project();
    let config = p.p.root.path().join("limits.toml");
    let mut seen = Vec::new();
    for n in [1000, 2000, 1000, 2000] {
        std::fs::write(
            &config,
            format!(
                "[profiles.a]\nextends = \"workspace-write\"\n[profiles.a.limits]\nopen_files = {n}\n"
            ),
        )
        .unwrap();
        let c = config.display().to_string();
        let o = p
            .cordon(
                Launch::Template,
                &["-c", &c, "-p", "a", "--", "sh", "-c", "ulimit -n"],
            )
            .output()
            .unwrap();
        let report = last_json(&o.stderr);
        assert_eq!(report["launch"], "template", "{}", text(&o.stderr));
        seen.push(text(&o.stdout).trim().to_string());
    }
    assert_eq!(seen, ["1000", "2000", "1000", "2000"]);
}

/// Issue 12: a template makes the next command's network namespace ahead of time. Each
/// command must still have one of its own — never the host's, never one a command running
/// beside it is in — with a working private loopback (a server and a client of its own on
/// 127.0.0.1), on every path. (Commands are compared while all of them run: the kernel
/// reuses a freed namespace's inode number.)
#[test]
fn every_command_has_a_network_namespace_of_its_own_on_every_path() {
    if !sandbox_available() {
        return;
    }
    let p = project();
    let host = std::fs::read_link("/proc/self/ns/net").unwrap();
    let script = "readlink /proc/self/ns/net; python3 -c '
import socket
s = socket.socket(); s.bind((\"127.0.0.1\", 0)); s.listen(1)
c = socket.create_connection(s.getsockname(), timeout=2); a, _ = s.accept()
c.sendall(b\"ping\"); print(a.recv(4).decode())'; sleep 1";
    p.sh(Launch::Template, "true");
    for l in ALL {
        let running: Vec<Child> = (0..3)
            .map(|_| {
                p.cordon(l, &["--", "sh", "-c", script])
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        let mut seen = std::collections::HashSet::new();
        for c in running {
            let o = c.wait_with_output().unwrap();
            let (out, err) = (text(&o.stdout), text(&o.stderr));
            assert_eq!(last_json(&o.stderr)["launch"], l.name(), "{err}");
            let mut lines = out.lines();
            let ns = lines.next().unwrap_or_default().to_string();
            assert!(ns.starts_with("net:["), "{l:?}: {out} {err}");
            assert_ne!(Path::new(&ns), host, "{l:?}: the host's network namespace");
            assert!(seen.insert(ns.clone()), "{l:?}: {ns} is another command's");
            assert_eq!(lines.next(), Some("ping"), "{l:?}: loopback: {out}");
        }
    }
}

/// nu58 #13: a server stopped by SIGTERM, SIGINT or SIGHUP removes its socket file and
/// ends by the signal; a socket path a newer server took over is left alone, and a
/// command run through the server still ends normally (its handler is not the server).
#[test]
fn a_stopped_server_removes_its_socket() {
    if !sandbox_available() {
        return;
    }
    let root = tempfile::tempdir_in("/var/tmp").unwrap();
    for (i, sig) in [libc::SIGTERM, libc::SIGINT, libc::SIGHUP]
        .into_iter()
        .enumerate()
    {
        let sock = root.path().join(format!("run{i}")).join("serve.sock");
        let mut server = spawn_server(&sock);
        // SAFETY: kill with a valid pid and signal.
        unsafe { libc::kill(server.id() as libc::pid_t, sig) };
        let status = server.wait().unwrap();
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(status.signal(), Some(sig), "{status:?}");
        assert!(!sock.exists(), "signal {sig}: the socket was left behind");
    }
    // Twin: the path now names another socket (a newer server's): not removed.
    let sock = root.path().join("run9").join("serve.sock");
    let mut server = spawn_server(&sock);
    std::fs::remove_file(&sock).unwrap();
    let newer = std::os::unix::net::UnixListener::bind(&sock).unwrap();
    // SAFETY: as above.
    unsafe { libc::kill(server.id() as libc::pid_t, libc::SIGTERM) };
    let _ = server.wait();
    assert!(sock.exists(), "a newer server's socket was removed");
    drop(newer);
}

/// Attack pass 154, F3: with `~/.cargo` and `~/.gradle` missing on the host, `CARGO_HOME`
/// and `GRADLE_USER_HOME` point at a private directory; a `config.toml` (a
/// `rustc-wrapper`), `bin/cargo` or gradle init script one command planted there ran in
/// every later one. Each command now gets a fresh home with only the caches kept, on
/// every path — a template's commands included (each gets its own home over the
/// template's). Twin: what a command puts in the caches is there for the next one.
#[test]
fn a_missing_tool_home_is_fresh_for_each_command_on_every_path() {
    if !sandbox_available() {
        return;
    }
    let p = project();
    assert!(!p.p.home.join(".cargo").exists() && !p.p.home.join(".gradle").exists());
    for launch in ALL {
        let plant = format!(
            "set -e; for h in \"$CARGO_HOME\" \"$GRADLE_USER_HOME\"; do \
             mkdir -p \"$h/bin\" \"$h/init.d\"; echo planted > \"$h/config.toml\"; \
             echo planted > \"$h/bin/cargo\"; echo planted > \"$h/init.d/a.gradle\"; done; \
             echo {launch:?} >> \"$CARGO_HOME/registry/marker\"; \
             echo {launch:?} >> \"$GRADLE_USER_HOME/caches/marker\""
        );
        // A first command makes the private directories (and the template that later
        // commands are forked from, its plan's places now there).
        p.sh(launch, "true");
        let o = p.sh(launch, &plant);
        assert_eq!(o.status.code(), Some(0), "{launch:?}: {}", text(&o.stderr));
        let look = "for h in \"$CARGO_HOME\" \"$GRADLE_USER_HOME\"; do \
                    for f in config.toml bin/cargo init.d/a.gradle; do \
                    [ -e \"$h/$f\" ] && echo \"LEFT $f\"; done; done; \
                    cat \"$CARGO_HOME/registry/marker\" \"$GRADLE_USER_HOME/caches/marker\"";
        let o = p.sh(launch, look);
        let so = text(&o.stdout);
        assert!(
            !so.contains("LEFT"),
            "{launch:?}: a command's files outlived it: {so}"
        );
        assert_eq!(
            so.matches(&format!("{launch:?}")).count(),
            2,
            "{launch:?}: the caches were not kept: {so} {}",
            text(&o.stderr)
        );
    }
}

/// Attack pass 160, F2: the server read each request to its end before it looked at the
/// next connection, with a 2 s timeout, so a client that sent half a request and stalled
/// held up every launch (6 such connections: `true` took 12 s). Requests are read as they
/// come: with 6 stalled connections open, commands on every path through the server still
/// start at once. Twin: a stalled client that finishes its request late is still served —
/// an incomplete request is not taken for a whole one (it fails to parse and is dropped,
/// the server staying up).
#[test]
fn a_client_that_stalls_holds_up_no_other() {
    if !sandbox_available() {
        return;
    }
    let p = project();
    // Warm first (the template made), so the runs timed below are launches only.
    for launch in [Launch::Template, Launch::Server] {
        assert_eq!(p.sh(launch, "true").status.code(), Some(0));
    }
    use std::io::Write;
    let mut stalled: Vec<std::os::unix::net::UnixStream> = (0..6)
        .map(|i| {
            let l = if i % 2 == 0 {
                Launch::Template
            } else {
                Launch::Server
            };
            let mut s = std::os::unix::net::UnixStream::connect(p.socket_of(l)).unwrap();
            s.write_all(b"{\"args\":").unwrap();
            s
        })
        .collect();
    for launch in [Launch::Template, Launch::Server] {
        let t = Instant::now();
        let o = p.sh(launch, "echo started");
        assert_eq!(o.status.code(), Some(0), "{launch:?}: {}", text(&o.stderr));
        assert_eq!(text(&o.stdout).trim(), "started", "{launch:?}");
        // Each stalled connection used to cost 2 s (the first alone held a run 2 s).
        assert!(
            t.elapsed() < Duration::from_millis(1900),
            "{launch:?}: a run waited {:?} behind stalled clients",
            t.elapsed()
        );
    }
    // The rest of a stalled request, late: it ends its line (and so is read) but is not a
    // request; the server drops it and still serves.
    let s = &mut stalled[0];
    s.write_all(b"\"x\"\n").unwrap();
    drop(stalled);
    let o = p.sh(Launch::Template, "echo again");
    assert_eq!(text(&o.stdout).trim(), "again", "{}", text(&o.stderr));
}

/// Attack pass 162, finding 1: a same-uid client that sent more descriptors in one message
/// than a request may carry (17 or more) left the server holding the 16 that fitted, for
/// good, until it ran out of descriptors and turned every client away. Every descriptor
/// that comes is now closed unless a request keeps it: the server's count stays where it
/// was, and it still serves.
#[test]
fn descriptors_a_client_sends_beyond_a_request_are_not_kept() {
    if !sandbox_available() {
        return;
    }
    let p = project();
    let count = || {
        std::fs::read_dir(format!("/proc/{}/fd", p.server.id()))
            .unwrap()
            .count()
    };
    // Warm (a template made), so nothing else changes the count below.
    assert_eq!(p.sh(Launch::Template, "true").status.code(), Some(0));
    let before = count();
    let script = "import socket, os, array, sys\n\
                  for n in (17, 40, 253):\n\
                  \x20   fds = [os.open('/dev/null', os.O_RDONLY) for _ in range(n)]\n\
                  \x20   s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])\n\
                  \x20   s.sendmsg([b' '], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array('i', fds))])\n\
                  \x20   s.close()\n";
    let o = Command::new("python3")
        .args(["-c", script])
        .arg(p.socket())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    std::thread::sleep(Duration::from_millis(300));
    let after = count();
    assert!(
        after <= before + 2,
        "the server kept descriptors a client sent: {before} before, {after} after"
    );
    let o = p.sh(Launch::Template, "echo served");
    assert_eq!(text(&o.stdout).trim(), "served", "{}", text(&o.stderr));
}

/// A server with templates sends a git repository's command (its `.git/config` copy is per
/// command) back to the cold path, which is faster than its own per-command helper, and the
/// report says so (new-user pass 201 #7: "cold" could not be told from "no server"). Twin:
/// `--no-server` says nothing of a server; a plain workspace takes a template.
#[test]
fn a_git_repository_is_sent_back_to_the_cold_path_and_said() {
    if !sandbox_available() {
        return;
    }
    let p = project();
    let o =
        p.p.cordon_in(&p.dir, &["run", "--json", "--", "true"])
            .env("CORDON_SERVE_SOCKET", p.socket())
            .output()
            .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let v = last_json(&o.stderr);
    assert_eq!(v["launch"], "cold", "{v}");
    assert!(
        v["server_sent_back"]
            .as_str()
            .is_some_and(|w| w.contains(".git/config")),
        "{v}"
    );
    let o = p.cordon(Launch::Cold, &["--", "true"]).output().unwrap();
    assert!(last_json(&o.stderr)["server_sent_back"].is_null());
    let o = p.sh(Launch::Template, "true");
    assert!(last_json(&o.stderr)["server_sent_back"].is_null());
}

/// Attack pass 204 U1: a socket path whose directory is reached through a symlink is not
/// trusted — and the run says so, as for any other untrusted socket, before it takes the
/// cold path. Twin: the real directory's path is used.
#[test]
fn a_socket_through_a_symlinked_directory_is_said_and_not_used() {
    if !sandbox_available() {
        return;
    }
    let p = project();
    let link = p.p.root.path().join("runlink");
    std::os::unix::fs::symlink(p.socket().parent().unwrap(), &link).unwrap();
    let o =
        p.p.cordon_in(&p.plain, &["run", "--json", "--", "true"])
            .env("CORDON_SERVE_SOCKET", link.join("serve.sock"))
            .output()
            .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(last_json(&o.stderr)["launch"], "cold");
    assert!(
        text(&o.stderr).contains("reached through a symlink"),
        "{}",
        text(&o.stderr)
    );
    let o = p.sh(Launch::Template, "true");
    assert_eq!(o.status.code(), Some(0));
}
