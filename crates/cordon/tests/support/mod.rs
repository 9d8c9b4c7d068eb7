//! Shared fixtures of the `cordon` binary's end-to-end tests: a throw-away project (a git
//! repository and a fake HOME under `/var/tmp`, which the sandbox's private `/tmp` does not
//! hide), a `cordon` command with a clean environment, and the kernel-feature gate.
//!
//! Each test file uses what it needs (`mod support;`), so some items are unused in some
//! test crates.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// The `cordon` binary under test.
pub const CORDON: &str = env!("CARGO_BIN_EXE_cordon");

/// A temporary project: `root/proj` (a git repository, canonical path in `dir`) and
/// `root/home` (the HOME every `cordon` command of the test gets). Removed on drop.
pub struct Project {
    /// The temporary directory holding both (for paths outside the project).
    pub root: tempfile::TempDir,
    /// The project directory (canonical), the commands' cwd.
    pub dir: PathBuf,
    /// The fake home directory (canonical).
    pub home: PathBuf,
}

impl Project {
    /// A fresh project; `prefix` names the temporary directory (e.g. `cordon-cli-`).
    pub fn new(prefix: &str) -> Project {
        let root = tempfile::Builder::new()
            .prefix(prefix)
            .tempdir_in("/var/tmp")
            .unwrap();
        let dir = root.path().join("proj");
        let home = root.path().join("home");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::create_dir_all(&home).unwrap();
        let st = Command::new("git")
            .args(["init", "-q"])
            .current_dir(&dir)
            .status()
            .unwrap();
        assert!(st.success(), "git init failed");
        Project {
            dir: dir.canonicalize().unwrap(),
            home: home.canonicalize().unwrap(),
            root,
        }
    }

    /// `cordon ARGS` run in the project with HOME set to the fake home, stdin from
    /// /dev/null, a git identity, and none of the caller's cordon, XDG or TMPDIR settings.
    pub fn cordon(&self, args: &[&str]) -> Command {
        self.cordon_in(&self.dir, args)
    }

    /// [`Project::cordon`] with another cwd (`PWD` set to it too).
    pub fn cordon_in(&self, cwd: &Path, args: &[&str]) -> Command {
        let mut c = Command::new(CORDON);
        c.args(args)
            .current_dir(cwd)
            .env("PWD", cwd)
            .env("HOME", &self.home)
            .env_remove("XDG_STATE_HOME")
            .env_remove("XDG_CONFIG_HOME")
            .env_remove("XDG_CACHE_HOME")
            .env_remove("CORDON_DISABLE_LAYERS")
            .env_remove("CORDON_PROFILE")
            .env_remove("CORDON_CONFIG")
            .env_remove("TMPDIR");
        // The package caches' location variables of the environment running the tests
        // (rustup sets `CARGO_HOME` for `cargo test`): cordon layers the directory they
        // name, so a test that wants one sets it itself.
        for v in [
            "CARGO_HOME",
            "GOCACHE",
            "GOMODCACHE",
            "GRADLE_USER_HOME",
            "PIP_CACHE_DIR",
            "UV_CACHE_DIR",
            "YARN_CACHE_FOLDER",
            "npm_config_cache",
        ] {
            c.env_remove(v);
        }
        c
            // Never a `cordon serve` someone else started on this machine (it would run
            // its own binary's helper): the cold path unless a test names a socket.
            .env(
                "CORDON_SERVE_SOCKET",
                self.root.path().join("no-server.sock"),
            )
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@example.invalid")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@example.invalid")
            .stdin(Stdio::null());
        c
    }
}

/// The unprivileged uid (and gid) tests run cordon as when they run as root.
pub const TEST_UID: u32 = 1000;

impl Project {
    /// `c` (a [`Project::cordon`] command) run as `uid`:`uid` with no supplementary groups,
    /// through `setpriv`: the project and home are given to that user, and cordon is run
    /// from a copy in the project's temporary directory (the build tree may lie under a
    /// home only root can enter).
    pub fn as_user(&self, c: &Command, uid: u32) -> Command {
        let bin = self.root.path().join("cordon-bin");
        if !bin.exists() {
            std::fs::copy(c.get_program(), &bin).unwrap();
            // A child another test thread forked while the copy was open for writing holds
            // that descriptor until it executes, and executing the copy meanwhile fails
            // with ETXTBSY (seen once on CI: setpriv "Text file busy", exit 126). Wait until
            // it executes.
            for _ in 0..200 {
                match Command::new(&bin).arg("--version").output() {
                    Err(e) if e.raw_os_error() == Some(libc::ETXTBSY) => {
                        std::thread::sleep(std::time::Duration::from_millis(10))
                    }
                    _ => break,
                }
            }
        }
        let st = Command::new("chown")
            .arg("-R")
            .arg(format!("{uid}:{uid}"))
            .arg(self.root.path())
            .status()
            .unwrap();
        assert!(st.success(), "chown failed");
        let mut s = Command::new("/usr/bin/setpriv");
        s.arg(format!("--reuid={uid}"))
            .arg(format!("--regid={uid}"))
            .arg("--clear-groups")
            .arg(&bin)
            .args(c.get_args());
        for (k, v) in c.get_envs() {
            match v {
                Some(v) => s.env(k, v),
                None => s.env_remove(k),
            };
        }
        if let Some(d) = c.get_current_dir() {
            s.current_dir(d);
        }
        s.stdin(Stdio::null());
        s
    }
}

/// Whether this test can run cordon as [`TEST_UID`] ([`Project::as_user`]): it runs as
/// root, the sandbox is available and `setpriv` is there (on CI a missing `setpriv` is a
/// failure, not a skip).
pub fn can_run_as_user() -> bool {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 || !sandbox_available() {
        return false;
    }
    if !Path::new("/usr/bin/setpriv").exists() {
        assert_ne!(
            std::env::var("CI").as_deref(),
            Ok("true"),
            "setpriv missing"
        );
        return false;
    }
    true
}

/// Runs `c` to completion, capturing stdout and stderr.
pub fn out(mut c: Command) -> Output {
    c.output().unwrap()
}

/// Bytes as text (lossy).
pub fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Whether this host can run the default profile confined, from `cordon status --json`.
/// On CI (`CI=true`) a missing feature panics (a failure, not a skip); elsewhere it
/// prints a SKIP line and returns false.
pub fn sandbox_available() -> bool {
    let p = Project::new("cordon-probe-");
    let o = out(p.cordon(&["status", "--json"]));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("status --json");
    let enabled = v["status"]["sandbox_enabled"]["value"].as_bool() == Some(true);
    if !enabled {
        let why = v["status"]["sandbox_enabled"]["reason"].to_string();
        if std::env::var("CI").as_deref() == Ok("true") {
            panic!("CI host must support the Linux sandbox, but: {why}");
        }
        eprintln!("SKIP: sandbox unavailable on this host: {why}");
    }
    enabled
}

/// Whether this host's runs have init's denial records and hard-link check (rung 1 with
/// seccomp user notification), from `cordon status --json`. On CI a missing feature
/// panics; elsewhere it prints a SKIP line and returns false.
pub fn denial_records_available() -> bool {
    let p = Project::new("cordon-probe-");
    let o = out(p.cordon(&["status", "--json"]));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("status --json");
    let source = v["denial_records"]["source"].as_str().unwrap_or("");
    let ok = source.starts_with("seccomp user notification");
    if !ok {
        let why = v["denial_records"].to_string();
        if std::env::var("CI").as_deref() == Ok("true") {
            panic!("CI host must give denial records, but: {why}");
        }
        eprintln!("SKIP: no denial records on this host: {why}");
    }
    ok
}

/// Whether this host can run the default profile confined with copy-on-write cache
/// overlays (R-C1), from `cordon status --json`. On CI a missing feature panics; elsewhere
/// it prints a SKIP line and returns false.
pub fn overlays_available() -> bool {
    let p = Project::new("cordon-probe-");
    let o = out(p.cordon(&["status", "--json"]));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("status --json");
    let sandbox = v["status"]["sandbox_enabled"]["value"].as_bool() == Some(true);
    let overlay = v["caches"]["overlay"].as_bool() == Some(true);
    if !(sandbox && overlay) {
        let why = format!("{} / {}", v["status"]["sandbox_enabled"], v["caches"]);
        if std::env::var("CI").as_deref() == Ok("true") {
            panic!("CI host must support the sandbox with cache overlays, but: {why}");
        }
        eprintln!("SKIP: no cache overlays on this host: {why}");
    }
    sandbox && overlay
}

/// Whether `tool` is on PATH; on CI a missing tool panics (install it in `.ci/run`).
pub fn have(tool: &str) -> bool {
    let ok = Command::new("sh")
        .args(["-c", &format!("command -v {tool}")])
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !ok && std::env::var("CI").as_deref() == Ok("true") {
        panic!("CI host must have {tool} (install it in .ci/run)");
    }
    ok
}

/// Seeds `p` with an offline cargo project depending on the `itoa` crate: its index entry
/// and `.crate` are copied from the cargo home that built these tests into the fake
/// home's `~/.cargo/registry`, and `Cargo.toml` pins that version (the caller writes
/// `src/`). Returns the fake registry path, or `None` (a SKIP line; on CI a panic) when
/// the real registry has no `itoa`.
pub fn seed_itoa_project(p: &Project) -> Option<PathBuf> {
    let real_home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")))
        .unwrap();
    let Some((index_dir, krate)) = find_itoa(&real_home) else {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "CI: no itoa crate in {}/registry",
            real_home.display()
        );
        eprintln!("SKIP: no itoa crate in the cargo registry");
        return None;
    };
    let idx_name = index_dir.file_name().unwrap();
    let reg = p.home.join(".cargo/registry");
    let idx = reg.join("index").join(idx_name);
    std::fs::create_dir_all(idx.join(".cache/it/oa")).unwrap();
    for f in ["config.json", ".cache/it/oa/itoa"] {
        if index_dir.join(f).exists() {
            std::fs::copy(index_dir.join(f), idx.join(f)).unwrap();
        }
    }
    let cache = reg.join("cache").join(idx_name);
    std::fs::create_dir_all(&cache).unwrap();
    std::fs::copy(&krate, cache.join(krate.file_name().unwrap())).unwrap();
    let version = krate
        .file_stem()
        .unwrap()
        .to_str()
        .unwrap()
        .trim_start_matches("itoa-")
        .to_string();
    std::fs::write(
        p.dir.join("Cargo.toml"),
        format!(
            "[package]\nname = \"t\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\
             [dependencies]\nitoa = \"={version}\"\n"
        ),
    )
    .unwrap();
    std::fs::create_dir_all(p.dir.join("src")).unwrap();
    Some(reg)
}

/// The index directory and `.crate` file of `itoa` in `cargo_home`'s registry.
fn find_itoa(cargo_home: &Path) -> Option<(PathBuf, PathBuf)> {
    let cache = cargo_home.join("registry/cache");
    for d in std::fs::read_dir(&cache).ok()?.flatten() {
        let index = cargo_home.join("registry/index").join(d.file_name());
        if !index.join(".cache/it/oa/itoa").is_file() {
            continue;
        }
        for f in std::fs::read_dir(d.path()).ok()?.flatten() {
            let n = f.file_name().to_string_lossy().into_owned();
            if n.starts_with("itoa-") && n.ends_with(".crate") {
                return Some((index, f.path()));
            }
        }
    }
    None
}

/// The `--json` report of a run: the last line of its stderr that parses as JSON (the
/// command's own output comes before it). Panics, showing stderr, when there is none.
pub fn last_json(stderr: &[u8]) -> serde_json::Value {
    let err = text(stderr);
    err.lines()
        .rev()
        .find_map(|l| serde_json::from_str(l).ok())
        .unwrap_or_else(|| panic!("no JSON report: {err}"))
}

/// Gives the command `c` the file `f` as its descriptor `n` (e.g. `3>report.json` is
/// `pass_fd(&mut c, 3, File::create(..))`); `f` lives as long as `c`.
pub fn pass_fd(c: &mut Command, n: i32, f: std::fs::File) {
    use std::os::fd::AsRawFd;
    use std::os::unix::process::CommandExt;
    // SAFETY: only dup2/fcntl, both async-signal-safe, run between fork and exec.
    unsafe {
        c.pre_exec(move || {
            let raw = f.as_raw_fd();
            let rc = if raw == n {
                // dup2(n, n) keeps FD_CLOEXEC: clear it instead.
                libc::fcntl(n, libc::F_SETFD, 0)
            } else {
                libc::dup2(raw, n)
            };
            if rc < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}
