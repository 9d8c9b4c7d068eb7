//! Real-project acceptance tests (issue 11 §5), offline: everything is served from
//! 127.0.0.1 by a static HTTP server (`python3 -m http.server`) over fixtures generated
//! here. npm installs from a local registry into the copy-on-write cache (the host `~/.npm`
//! stays byte-for-byte unchanged); pip installs from a PEP 503 index into a venv; `make -j4`
//! hands its jobserver to a sub-make. (cargo offline with the network off:
//! `tests/caches.rs`, `cargo_builds_offline_from_the_warm_cache`; git edits:
//! `tests/toolchains_git.rs`.) On CI (`CI=true`) a missing tool or kernel feature fails.

use std::collections::BTreeMap;
use std::io::BufRead as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

mod support;

use support::{Project, CORDON};

fn project() -> Project {
    Project::new("cordon-tc-")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// `cordon run [flags] -- argv` in the project, with the fake HOME.
fn cordon(p: &Project, flags: &[&str], argv: &[&str]) -> Output {
    let mut args = vec!["run"];
    args.extend_from_slice(flags);
    args.push("--");
    args.extend_from_slice(argv);
    p.cordon(&args)
        .env_remove("MAKEFLAGS")
        .env_remove("MFLAGS")
        .env_remove("PIP_INDEX_URL")
        .env_remove("npm_config_registry")
        .env_remove("CARGO_HOME")
        .output()
        .unwrap()
}

/// A tool the test needs: present, or a skip (a failure on CI, which installs it).
fn need(tool: &str) -> bool {
    let ok = Command::new(tool)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "CI: {tool} is missing (.ci/run installs it)"
        );
        eprintln!("SKIP: {tool} not installed");
    }
    ok
}

fn sandbox_with_overlays(p: &Project) -> bool {
    let o = Command::new(CORDON)
        .args(["status", "--json"])
        .current_dir(&p.dir)
        .env("HOME", &p.home)
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("status --json");
    let ok = v["status"]["sandbox_enabled"]["value"].as_bool() == Some(true)
        && v["caches"]["overlay"].as_bool() == Some(true);
    if !ok {
        let why = format!("{} / {}", v["status"]["sandbox_enabled"], v["caches"]);
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "CI host must support the sandbox with cache overlays, but: {why}"
        );
        eprintln!("SKIP: {why}");
    }
    ok
}

/// The host's real python3 (a pyenv shim needs the real `$HOME`).
fn python() -> Option<PathBuf> {
    let o = Command::new("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .ok()?;
    o.status
        .success()
        .then(|| PathBuf::from(text(&o.stdout).trim()))
}

/// A static HTTP server on 127.0.0.1 (a free port) serving `dir`; killed on drop.
struct Server {
    child: Child,
    port: u16,
}

impl Server {
    fn start(python: &Path, dir: &Path) -> Server {
        let mut child = Command::new(python)
            .args(["-u", "-m", "http.server", "--bind", "127.0.0.1", "0"])
            .arg("--directory")
            .arg(dir)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        // "Serving HTTP on 127.0.0.1 port 37805 (http://127.0.0.1:37805/) ..."
        let port = line
            .split_whitespace()
            .skip_while(|w| *w != "port")
            .nth(1)
            .and_then(|w| w.parse().ok())
            .unwrap_or_else(|| panic!("no port in {line:?}"));
        Server { child, port }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Every entry under `p`: relative path → (kind, contents or link target).
fn snapshot(p: &Path) -> BTreeMap<PathBuf, (char, Vec<u8>)> {
    let mut out = BTreeMap::new();
    fn walk(base: &Path, p: &Path, out: &mut BTreeMap<PathBuf, (char, Vec<u8>)>) {
        let md = std::fs::symlink_metadata(p).unwrap();
        let rel = p.strip_prefix(base).unwrap().to_path_buf();
        if md.is_symlink() {
            let t = std::fs::read_link(p).unwrap();
            out.insert(rel, ('l', t.into_os_string().into_encoded_bytes()));
        } else if md.is_dir() {
            out.insert(rel, ('d', Vec::new()));
            for e in std::fs::read_dir(p).unwrap() {
                walk(base, &e.unwrap().path(), out);
            }
        } else {
            out.insert(rel, ('f', std::fs::read(p).unwrap()));
        }
    }
    walk(p, p, &mut out);
    out
}

/// Writes the npm registry fixture for package `tinylib@1.0.0` (packument + tarball with
/// sha1 and sha512 integrity) under `dir`, with tarball URLs on `port`.
const NPM_FIXTURE: &str = r#"
import base64, hashlib, io, json, os, sys, tarfile
root, port = sys.argv[1], sys.argv[2]
os.makedirs(f"{root}/tinylib/-", exist_ok=True)
pkg = {"name": "tinylib", "version": "1.0.0", "main": "index.js"}
buf = io.BytesIO()
with tarfile.open(fileobj=buf, mode="w:gz") as t:
    for name, data in [("package/package.json", json.dumps(pkg).encode()),
                       ("package/index.js", b"module.exports = () => 'tiny ok';\n")]:
        info = tarfile.TarInfo(name); info.size = len(data); info.mode = 0o644
        t.addfile(info, io.BytesIO(data))
tgz = buf.getvalue()
open(f"{root}/tinylib/-/tinylib-1.0.0.tgz", "wb").write(tgz)
dist = {"tarball": f"http://127.0.0.1:{port}/tinylib/-/tinylib-1.0.0.tgz",
        "shasum": hashlib.sha1(tgz).hexdigest(),
        "integrity": "sha512-" + base64.b64encode(hashlib.sha512(tgz).digest()).decode()}
doc = {"name": "tinylib", "dist-tags": {"latest": "1.0.0"},
       "versions": {"1.0.0": dict(pkg, dist=dist)}}
# http.server answers /tinylib/ with index.html
open(f"{root}/tinylib/index.html", "w").write(json.dumps(doc))
"#;

/// npm installs from a local registry through `--allow-network`; the download lands in
/// the workspace's copy-on-write layer of `~/.npm`, and the host `~/.npm` is unchanged.
#[test]
fn npm_installs_from_a_local_registry_into_the_overlay_cache() {
    let p = project();
    if !need("npm") || !need("node") || !sandbox_with_overlays(&p) {
        return;
    }
    let py = python().expect("python3");
    let reg = p.root.path().join("registry");
    std::fs::create_dir_all(&reg).unwrap();
    let server = Server::start(&py, &reg);
    let st = Command::new(&py)
        .args(["-c", NPM_FIXTURE])
        .arg(&reg)
        .arg(server.port.to_string())
        .status()
        .unwrap();
    assert!(st.success());
    let npm_home = p.home.join(".npm");
    std::fs::create_dir_all(npm_home.join("_cacache")).unwrap();
    std::fs::write(npm_home.join("host-file"), "host bytes\n").unwrap();
    let before = snapshot(&npm_home);
    std::fs::write(
        p.dir.join("package.json"),
        r#"{"name":"p","version":"1.0.0","dependencies":{"tinylib":"1.0.0"}}"#,
    )
    .unwrap();
    let registry = format!("http://127.0.0.1:{}/", server.port);
    let o = cordon(
        &p,
        &["--allow-network"],
        &[
            "npm",
            "install",
            "--registry",
            &registry,
            "--no-audit",
            "--no-fund",
            "--no-update-notifier",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "npm: {}", text(&o.stderr));
    let o = cordon(
        &p,
        &[],
        &["node", "-e", "console.log(require('tinylib')())"],
    );
    assert_eq!(text(&o.stdout), "tiny ok\n", "{}", text(&o.stderr));
    assert_eq!(snapshot(&npm_home), before, "the host ~/.npm changed");
    let layers = p.home.join(".cache/cordon/overlays");
    let key = std::fs::read_dir(&layers).unwrap().next().unwrap().unwrap();
    assert!(key.path().join("npm/upper/_cacache").is_dir());
}

/// Builds `tinypy-0.1.0-py3-none-any.whl` and a PEP 503 simple index for it under `dir`.
const PIP_FIXTURE: &str = r#"
import base64, hashlib, os, sys, zipfile
root = sys.argv[1]
os.makedirs(f"{root}/files", exist_ok=True)
os.makedirs(f"{root}/simple/tinypy", exist_ok=True)
files = {"tinypy/__init__.py": b"GREETING = 'pip ok'\n",
         "tinypy-0.1.0.dist-info/METADATA": b"Metadata-Version: 2.1\nName: tinypy\nVersion: 0.1.0\n",
         "tinypy-0.1.0.dist-info/WHEEL": b"Wheel-Version: 1.0\nGenerator: cordon-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"}
def h(b): return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(b).digest()).rstrip(b"=").decode()
record = "".join(f"{n},{h(b)},{len(b)}\n" for n, b in files.items()) + "tinypy-0.1.0.dist-info/RECORD,,\n"
name = "tinypy-0.1.0-py3-none-any.whl"
with zipfile.ZipFile(f"{root}/files/{name}", "w") as z:
    for n, b in files.items():
        z.writestr(n, b)
    z.writestr("tinypy-0.1.0.dist-info/RECORD", record)
digest = hashlib.sha256(open(f"{root}/files/{name}", "rb").read()).hexdigest()
open(f"{root}/simple/index.html", "w").write('<a href="tinypy/">tinypy</a>\n')
open(f"{root}/simple/tinypy/index.html", "w").write(
    f'<a href="../../files/{name}#sha256={digest}">{name}</a>\n')
"#;

/// pip installs from a local PEP 503 index into a venv made inside the sandbox.
#[test]
fn pip_installs_from_a_local_index_into_a_venv() {
    let p = project();
    if !sandbox_with_overlays(&p) {
        return;
    }
    let py = python().expect("python3");
    let venv_ok = Command::new(&py)
        .args(["-c", "import venv, ensurepip"])
        .status()
        .is_ok_and(|s| s.success());
    if !venv_ok {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "CI: python3-venv is missing"
        );
        eprintln!("SKIP: no venv/ensurepip");
        return;
    }
    let idx = p.root.path().join("index");
    assert!(Command::new(&py)
        .args(["-c", PIP_FIXTURE])
        .arg(&idx)
        .status()
        .unwrap()
        .success());
    let server = Server::start(&py, &idx);
    let pip_cache = p.home.join(".cache/pip");
    std::fs::create_dir_all(&pip_cache).unwrap();
    std::fs::write(pip_cache.join("host-file"), "host bytes\n").unwrap();
    let before = snapshot(&pip_cache);
    let script = format!(
        "set -e; {py} -m venv .venv; .venv/bin/pip install -q --disable-pip-version-check \
         --index-url http://127.0.0.1:{port}/simple/ tinypy; \
         .venv/bin/python -c 'import tinypy; print(tinypy.GREETING)'",
        py = py.display(),
        port = server.port
    );
    let o = cordon(&p, &["--allow-network"], &["sh", "-c", &script]);
    assert_eq!(text(&o.stdout), "pip ok\n", "{}", text(&o.stderr));
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(snapshot(&pip_cache), before, "the host pip cache changed");
}

/// `make -j4` runs jobs in parallel and hands its jobserver to a recursive sub-make
/// (no "jobserver unavailable" warning).
#[test]
fn make_j4_shares_its_jobserver_with_a_sub_make() {
    let p = project();
    if !need("make") || !sandbox_with_overlays(&p) {
        return;
    }
    std::fs::write(
        p.dir.join("Makefile"),
        "all: a b c d sub\n\
         a b c d:\n\t@sleep 0.2; echo $@ > $@.out\n\
         sub:\n\t@$(MAKE) --no-print-directory -f sub.mk\n",
    )
    .unwrap();
    std::fs::write(
        p.dir.join("sub.mk"),
        "all: x y\nx y:\n\t@echo $@ > $@.out\n",
    )
    .unwrap();
    let o = cordon(&p, &[], &["make", "-j4"]);
    let stderr = text(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{stderr}");
    assert!(!stderr.contains("jobserver unavailable"), "{stderr}");
    for f in ["a", "b", "c", "d", "x", "y"] {
        assert!(p.dir.join(format!("{f}.out")).is_file(), "{f}.out missing");
    }
}

/// A cargo project depending on a crate already in the registry cache (`itoa`, from the
/// cargo home that built these tests) builds and runs its tests with `--offline` and the
/// network off; the host registry is unchanged.
#[test]
fn cargo_tests_offline_with_the_network_off() {
    let p = project();
    if !sandbox_with_overlays(&p) {
        return;
    }
    let cargo = PathBuf::from(env!("CARGO"));
    let Some(reg) = support::seed_itoa_project(&p) else {
        return;
    };
    std::fs::write(
        p.dir.join("src/lib.rs"),
        "pub fn f(n: u32) -> String { itoa::Buffer::new().format(n).to_string() }\n\
         #[test] fn formats() { assert_eq!(f(4242), \"4242\"); }\n",
    )
    .unwrap();
    let before = snapshot(&reg);
    let path = format!(
        "{}:/usr/local/bin:/usr/bin:/bin",
        cargo.parent().unwrap().display()
    );
    let o = Command::new(CORDON)
        .args(["run", "--network", "off", "--"])
        .arg(&cargo)
        .args(["test", "--offline", "-q"])
        .current_dir(&p.dir)
        .env("HOME", &p.home)
        .env("PWD", &p.dir)
        .env("CARGO_HOME", p.home.join(".cargo"))
        .env("PATH", &path)
        .env_remove("CORDON_DISABLE_LAYERS")
        .env_remove("CORDON_PROFILE")
        .env_remove("CORDON_CONFIG")
        .env_remove("RUSTC_WRAPPER")
        .env_remove("CARGO_TARGET_DIR")
        .env_remove("CARGO_BUILD_TARGET_DIR")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "cargo test: {}", text(&o.stderr));
    assert!(text(&o.stdout).contains("1 passed"), "{}", text(&o.stdout));
    assert_eq!(snapshot(&reg), before, "the host registry changed");
}

/// Every entry of the fake home except cordon's own state (`~/.cache/cordon`).
fn home_snapshot(p: &Project) -> BTreeMap<PathBuf, (char, Vec<u8>)> {
    let mut s = snapshot(&p.home);
    // cordon's own cache and state (the layers; the git-dir census kept until swept).
    s.retain(|k, _| !k.starts_with(".cache/cordon") && !k.starts_with(".local/state/cordon"));
    s.remove(Path::new(".cache"));
    for d in [".local/state", ".local"] {
        let prefix = format!("{d}/");
        if !s.keys().any(|k| k.to_string_lossy().starts_with(&prefix)) {
            s.remove(Path::new(d));
        }
    }
    s
}

/// Issue 11: a new user has no `~/.npm`. Nothing is created in the home directory, yet
/// `npm install` works: npm's cache variable names a private per-workspace directory; the
/// home is unchanged; the next run in the workspace installs offline from what this one
/// downloaded (the registry is gone by then).
#[test]
fn npm_works_for_a_new_user_without_a_cache() {
    let p = project();
    if !need("npm") || !need("node") || !sandbox_with_overlays(&p) {
        return;
    }
    let py = python().expect("python3");
    let reg = p.root.path().join("registry");
    std::fs::create_dir_all(&reg).unwrap();
    let server = Server::start(&py, &reg);
    assert!(Command::new(&py)
        .args(["-c", NPM_FIXTURE])
        .arg(&reg)
        .arg(server.port.to_string())
        .status()
        .unwrap()
        .success());
    let before = home_snapshot(&p);
    std::fs::write(
        p.dir.join("package.json"),
        r#"{"name":"p","version":"1.0.0","dependencies":{"tinylib":"1.0.0"}}"#,
    )
    .unwrap();
    let registry = format!("http://127.0.0.1:{}/", server.port);
    let npm = |flags: &[&str], extra: &[&str]| {
        let mut argv = vec![
            "npm",
            "install",
            "--registry",
            &registry,
            "--no-audit",
            "--no-fund",
            "--no-update-notifier",
        ];
        argv.extend_from_slice(extra);
        cordon(&p, flags, &argv)
    };
    let o = npm(&["--allow-network"], &[]);
    assert_eq!(o.status.code(), Some(0), "npm: {}", text(&o.stderr));
    assert_eq!(home_snapshot(&p), before, "the home directory changed");
    assert!(!p.home.join(".npm").exists());
    drop(server);
    std::fs::remove_dir_all(p.dir.join("node_modules")).unwrap();
    let o = npm(&[], &["--offline"]);
    assert_eq!(o.status.code(), Some(0), "offline npm: {}", text(&o.stderr));
    let o = cordon(
        &p,
        &[],
        &["node", "-e", "console.log(require('tinylib')())"],
    );
    assert_eq!(text(&o.stdout), "tiny ok\n", "{}", text(&o.stderr));
    assert_eq!(home_snapshot(&p), before, "the home directory changed");
}

/// Sibling: a rustup user whose `~/.cargo` has no registry yet. The whole cargo home is
/// the copy-on-write layer (its config and binaries stay visible), so cargo can create
/// `registry/`; the host `~/.cargo` is unchanged and the next run sees the download. With
/// no `~/.cargo` at all, `CARGO_HOME` names a private directory.
#[test]
fn cargo_home_without_a_registry_is_one_private_layer() {
    let p = project();
    if !sandbox_with_overlays(&p) {
        return;
    }
    let cargo = p.home.join(".cargo");
    std::fs::create_dir_all(cargo.join("bin")).unwrap();
    std::fs::write(cargo.join("env"), "# rustup\n").unwrap();
    let before = home_snapshot(&p);
    let o = cordon(
        &p,
        &[],
        &[
            "sh",
            "-c",
            "mkdir -p ~/.cargo/registry/cache && echo dl > ~/.cargo/registry/cache/c \
             && cat ~/.cargo/env",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(text(&o.stdout), "# rustup\n");
    assert_eq!(home_snapshot(&p), before, "the host ~/.cargo changed");
    let o = cordon(
        &p,
        &[],
        &["cat", &format!("{}/registry/cache/c", cargo.display())],
    );
    assert_eq!(text(&o.stdout), "dl\n", "{}", text(&o.stderr));
    // No ~/.cargo: CARGO_HOME is a private, writable directory.
    std::fs::remove_dir_all(&cargo).unwrap();
    let o = cordon(
        &p,
        &[],
        &["sh", "-c", "touch \"$CARGO_HOME/x\" && echo $CARGO_HOME"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(
        text(&o.stdout).contains("/.cache/cordon/overlays/"),
        "{}",
        text(&o.stdout)
    );
    assert!(!cargo.exists());
}

/// Issue 11: two overlapping runs in one workspace must not mount overlays sharing an
/// upper/work directory (overlayfs calls that undefined behaviour: the second run's file
/// appeared inside the first run's live mount). Each run takes a slot under a lock: both
/// write their cache, the first sees only its own file, and the next run (slot 0 again)
/// sees what the first one wrote.
#[test]
fn concurrent_runs_get_their_own_cache_layers() {
    let p = project();
    if !sandbox_with_overlays(&p) {
        return;
    }
    std::fs::create_dir_all(p.home.join(".npm")).unwrap();
    let before = snapshot(&p.home.join(".npm"));
    let spawn = |script: &str| {
        p.cordon(&["run", "--", "sh", "-c", script])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let a = spawn("echo a > ~/.npm/a && sleep 2 && cat ~/.npm/a && ls ~/.npm");
    std::thread::sleep(std::time::Duration::from_millis(700));
    let b = spawn("echo b > ~/.npm/b && cat ~/.npm/b");
    let (a, b) = (a.wait_with_output().unwrap(), b.wait_with_output().unwrap());
    assert_eq!(
        (a.status.code(), text(&a.stdout).as_str()),
        (Some(0), "a\na\n"),
        "{}",
        text(&a.stderr)
    );
    assert_eq!(
        (b.status.code(), text(&b.stdout).as_str()),
        (Some(0), "b\n"),
        "{}",
        text(&b.stderr)
    );
    let o = cordon(&p, &[], &["cat", &format!("{}/.npm/a", p.home.display())]);
    assert_eq!(text(&o.stdout), "a\n", "{}", text(&o.stderr));
    assert_eq!(
        snapshot(&p.home.join(".npm")),
        before,
        "the host ~/.npm changed"
    );
}
