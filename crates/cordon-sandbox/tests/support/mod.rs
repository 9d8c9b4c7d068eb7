//! Shared support for the Linux sandbox integration tests: building payloads with
//! cordon-policy, running the helper binary in its own child process, and gating on kernel
//! features (a missing feature fails the test when `CI=true`, else skips it with a reason).
#![allow(dead_code)]

use cordon_policy::{
    resolve, Access, FilesystemPolicy, FsEntry, HelperPayload, NetworkPolicy, PermissionProfile,
    ResolveContext, ResolvedProfile,
};
use cordon_sandbox::linux::{probe, LinuxFeatures};
use cordon_sandbox::HostFs;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::OnceLock;

/// The helper binary under test.
pub fn helper_bin() -> &'static str {
    env!("CARGO_BIN_EXE_cordon-sandbox-helper")
}

fn features() -> &'static LinuxFeatures {
    static F: OnceLock<LinuxFeatures> = OnceLock::new();
    F.get_or_init(|| {
        // The gate reflects the host, not a variable set for one test.
        let mut f = probe();
        f.disabled.clear();
        f
    })
}

/// A kernel feature a test needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Need {
    /// User namespaces (rung 1).
    Userns,
    /// Landlock at this ABI or higher.
    Landlock(u32),
    /// Seccomp filters.
    Seccomp,
    /// A program on `PATH` (a negative check such as "strace fails" proves nothing when
    /// the program is simply missing).
    Tool(&'static str),
}

/// Whether `name` is an executable file in a directory of `PATH`.
pub fn on_path(name: &str) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::env::var_os("PATH").is_some_and(|p| {
        std::env::split_paths(&p).any(|d| {
            std::fs::metadata(d.join(name))
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
    })
}

/// True when every need is met. Otherwise: panics when `CI=true` (CI must have them), else
/// prints the skip reason and returns false (the test should return early).
pub fn require(needs: &[Need]) -> bool {
    let f = features();
    let mut missing = Vec::new();
    for n in needs {
        match n {
            Need::Userns if !f.user_namespaces.is_available() => missing.push(format!(
                "user namespaces ({})",
                f.user_namespaces.reason().unwrap_or("?")
            )),
            Need::Landlock(abi) if f.landlock.value().copied().unwrap_or(0) < *abi => {
                missing.push(format!("landlock ABI >= {abi} (have {})", f.landlock))
            }
            Need::Seccomp if !f.seccomp.is_available() => missing.push("seccomp".into()),
            Need::Tool(t) if !on_path(t) => missing.push(format!("the program {t} on PATH")),
            _ => {}
        }
    }
    if missing.is_empty() {
        return true;
    }
    let msg = format!("missing: {}", missing.join(", "));
    if std::env::var("CI").as_deref() == Ok("true") {
        panic!("{msg} (CI=true: failing instead of skipping)");
    }
    eprintln!("SKIPPED: {msg}");
    false
}

/// Gate for the common case: rung 1 with Landlock (any ABI) and seccomp.
pub fn require_full() -> bool {
    require(&[Need::Userns, Need::Landlock(1), Need::Seccomp])
}

/// The real python3 (pyenv shims need the real HOME; tests use a fake one).
pub fn python_dir() -> String {
    static P: OnceLock<String> = OnceLock::new();
    P.get_or_init(|| {
        let out = Command::new("python3")
            .args(["-c", "import sys,os;print(os.path.dirname(sys.executable))"])
            .output()
            .expect("python3 on the host");
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    })
    .clone()
}

/// Where tests put host files that lie outside every writable root (not under `/tmp`,
/// which the sandbox replaces by a private tmpfs).
pub const OUTSIDE_BASE: &str = "/var/tmp/cordon-tests";

/// A temp dir outside the sandbox's writable roots (under [`OUTSIDE_BASE`]).
pub fn outside_dir() -> tempfile::TempDir {
    tempdir_in(OUTSIDE_BASE)
}

/// A temp dir that is removed on drop, under `base`.
pub fn tempdir_in(base: &str) -> tempfile::TempDir {
    std::fs::create_dir_all(base).unwrap();
    tempfile::Builder::new()
        .prefix("cordon-test-")
        .tempdir_in(base)
        .unwrap()
}

/// One sandboxed run: a workspace, a fake home, a profile and an environment.
pub struct Sandbox {
    /// The workspace (cwd of the command).
    pub ws: PathBuf,
    /// A fake HOME (so credential-store deny entries never touch the real one).
    pub home: PathBuf,
    /// The profile (defaults to workspace-write).
    pub profile: PermissionProfile,
    /// Environment handed to the command (the payload env).
    pub env: Vec<(String, String)>,
    /// Layers disabled through the payload.
    pub disabled_layers: Vec<String>,
    /// Extra environment for the helper process itself.
    pub helper_env: Vec<(String, String)>,
    /// Pass `--report` (the helper prints the applied layers to stderr).
    pub report: bool,
    _dirs: Vec<tempfile::TempDir>,
}

impl Sandbox {
    /// A workspace under `/tmp` (the common case: the workspace must show through the
    /// private /tmp) and a fake home under [`OUTSIDE_BASE`] (visible, read-only).
    pub fn new() -> Sandbox {
        Sandbox::in_base("/tmp")
    }

    /// A workspace under `base` and a fake home under [`OUTSIDE_BASE`].
    pub fn in_base(base: &str) -> Sandbox {
        let ws_dir = tempdir_in(base);
        let home_dir = tempdir_in(OUTSIDE_BASE);
        let ws = ws_dir.path().canonicalize().unwrap();
        let home = home_dir.path().canonicalize().unwrap();
        let path = format!(
            "{}:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
            python_dir()
        );
        Sandbox {
            env: vec![
                ("PATH".into(), path),
                ("HOME".into(), home.display().to_string()),
                ("LANG".into(), "C".into()),
            ],
            ws,
            home,
            profile: PermissionProfile::builtin("workspace-write").unwrap(),
            disabled_layers: Vec::new(),
            helper_env: Vec::new(),
            report: false,
            _dirs: vec![ws_dir, home_dir],
        }
    }

    /// Uses a built-in profile.
    pub fn builtin(mut self, name: &str) -> Sandbox {
        self.profile = PermissionProfile::builtin(name).unwrap();
        self
    }

    /// Replaces the filesystem policy.
    pub fn filesystem(mut self, default: Access, entries: Vec<FsEntry>, protect: bool) -> Sandbox {
        self.profile.filesystem = FilesystemPolicy::Restricted {
            default,
            entries,
            protect_metadata: protect,
        };
        self
    }

    /// Adds one filesystem entry to the (restricted) profile, keeping its other entries.
    pub fn grant(mut self, path: &Path, access: Access) -> Sandbox {
        if let FilesystemPolicy::Restricted { entries, .. } = &mut self.profile.filesystem {
            entries.push(entry(path.to_str().unwrap(), access));
        }
        self
    }

    /// Sets the network policy.
    pub fn network(mut self, n: NetworkPolicy) -> Sandbox {
        self.profile.network = n;
        self
    }

    /// Adds a variable to the command's environment.
    pub fn env(mut self, k: &str, v: &str) -> Sandbox {
        self.env.push((k.into(), v.into()));
        self
    }

    /// Sets an environment variable of the helper process (e.g. CORDON_DISABLE_LAYERS).
    pub fn helper_env(mut self, k: &str, v: &str) -> Sandbox {
        self.helper_env.push((k.into(), v.into()));
        self
    }

    /// Asks the helper to report the applied layers on stderr.
    pub fn report(mut self) -> Sandbox {
        self.report = true;
        self
    }

    /// Keeps a temp dir alive as long as the sandbox.
    pub fn keep(mut self, d: tempfile::TempDir) -> Sandbox {
        self._dirs.push(d);
        self
    }

    /// The profile resolved for the workspace with the fake home.
    pub fn resolved(&self) -> ResolvedProfile {
        let ctx = ResolveContext {
            cwd: self.ws.clone(),
            home: Some(self.home.clone()),
            tmpdir: None,
            profile_files: vec![],
            ..Default::default()
        };
        resolve(&self.profile, &ctx, &HostFs).unwrap()
    }

    /// The encoded payload.
    pub fn payload(&self) -> String {
        let mut p = HelperPayload::new(self.resolved(), self.env.clone());
        p.disabled_layers = self.disabled_layers.clone();
        p.encode().unwrap()
    }

    /// The helper command for `argv` (not started).
    pub fn command(&self, argv: &[&str]) -> Command {
        let mut c = Command::new(helper_bin());
        c.arg("__sandbox-helper");
        if self.report {
            c.arg("--report");
        }
        c.arg("--permission-profile")
            .arg(self.payload())
            .arg("--")
            .args(argv)
            .current_dir(&self.ws)
            .stdin(Stdio::null());
        for (k, v) in &self.helper_env {
            c.env(k, v);
        }
        c
    }

    /// Runs `argv` in the sandbox to completion.
    pub fn run(&self, argv: &[&str]) -> Output {
        self.command(argv).output().expect("helper runs")
    }

    /// Runs `sh -c script`.
    pub fn sh(&self, script: &str) -> Output {
        self.run(&["sh", "-c", script])
    }

    /// Starts `sh -c script` with piped stdout/stderr.
    pub fn spawn_sh(&self, script: &str) -> Child {
        self.command(&["sh", "-c", script])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("helper starts")
    }
}

/// stdout as a string.
pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// stderr as a string.
pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Asserts success, printing both streams otherwise.
#[track_caller]
pub fn assert_ok(o: &Output) {
    assert!(
        o.status.success(),
        "expected success, got {:?}\nstdout: {}\nstderr: {}",
        o.status,
        stdout(o),
        stderr(o)
    );
}

/// Asserts failure (non-zero exit), printing both streams otherwise.
#[track_caller]
pub fn assert_fails(o: &Output) {
    assert!(
        !o.status.success(),
        "expected failure, got success\nstdout: {}\nstderr: {}",
        stdout(o),
        stderr(o)
    );
}

/// Writes a file (creating parents).
pub fn write(p: &Path, s: &str) {
    if let Some(d) = p.parent() {
        std::fs::create_dir_all(d).unwrap();
    }
    std::fs::write(p, s).unwrap();
}

/// Shell-quotes a path for a script.
pub fn q(p: &Path) -> String {
    format!("'{}'", p.display().to_string().replace('\'', "'\\''"))
}

/// Entry helper.
pub fn entry(p: &str, a: Access) -> FsEntry {
    FsEntry::new(p, a)
}

/// A network-restricted default.
pub fn restricted() -> NetworkPolicy {
    NetworkPolicy::Restricted
}

/// URL-safe base64 without padding (the payload encoding), for hand-made payloads.
pub fn b64(data: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut out = String::new();
    for chunk in data.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (b[0] as u32) << 16 | (b[1] as u32) << 8 | b[2] as u32;
        for i in 0..=chunk.len() {
            out.push(A[(n >> (18 - 6 * i) & 63) as usize] as char);
        }
    }
    out
}

/// Decodes [`b64`].
pub fn unb64(s: &str) -> Vec<u8> {
    let val = |c: u8| match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'-' => 62,
        _ => 63,
    };
    let mut out = Vec::new();
    for chunk in s.as_bytes().chunks(4) {
        let mut n = 0u32;
        for (i, c) in chunk.iter().enumerate() {
            n |= (val(*c) as u32) << (18 - 6 * i);
        }
        for i in 0..chunk.len() - 1 {
            out.push((n >> (16 - 8 * i)) as u8);
        }
    }
    out
}

/// Host-side `git ARGS` in `dir` (outside any sandbox) with a fixed identity, `main` as
/// the initial branch, HOME = `dir` and no system config; panics on failure. Returns stdout.
pub fn host_git(dir: &Path, args: &[&str]) -> String {
    let o = std::process::Command::new("git")
        .args([
            "-c",
            "init.defaultBranch=main",
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
        ])
        .args(args)
        .current_dir(dir)
        .env("HOME", dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "git {args:?} in {}: {}",
        dir.display(),
        stderr(&o)
    );
    stdout(&o)
}

/// A repository at `dir` with one commit (`a.txt`), made by [`host_git`].
pub fn host_repo(dir: &Path) {
    host_git(dir, &["init", "-q"]);
    write(&dir.join("a.txt"), "a\n");
    host_git(dir, &["add", "."]);
    host_git(dir, &["commit", "-qm", "init"]);
}
