//! Copy-on-write package caches (issue 11 §1, R-C1), end to end through the `cordon`
//! binary: one sandbox per `cordon` process, bounded sizes and times.
//!
//! Tests that need overlay mounts in user namespaces check for them with `cordon status
//! --json`; on CI (`CI=true`) a missing feature fails the test, elsewhere it is a skip.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

mod support;
use support::{overlays_available, text, Project, CORDON};

/// A git project and a fake HOME with a warm cargo registry.
fn project() -> Project {
    let p = Project::new("cordon-caches-");
    let reg = p.home.join(".cargo/registry/cache/index.example");
    std::fs::create_dir_all(&reg).unwrap();
    std::fs::write(reg.join("dep-1.0.0.crate"), b"original crate bytes\n").unwrap();
    p
}

fn cordon(p: &Project, cwd: &Path, args: &[&str]) -> Output {
    p.cordon_in(cwd, args)
        .env_remove("CARGO_HOME")
        .output()
        .unwrap()
}

/// Every entry under `p`: relative path → (kind, contents or link target, mode).
fn snapshot(p: &Path) -> BTreeMap<PathBuf, (char, Vec<u8>, u32)> {
    use std::os::unix::fs::PermissionsExt;
    let mut out = BTreeMap::new();
    fn walk(base: &Path, p: &Path, out: &mut BTreeMap<PathBuf, (char, Vec<u8>, u32)>) {
        let md = std::fs::symlink_metadata(p).unwrap();
        let rel = p.strip_prefix(base).unwrap().to_path_buf();
        let mode = md.permissions().mode();
        if md.is_symlink() {
            let t = std::fs::read_link(p).unwrap();
            out.insert(rel, ('l', t.into_os_string().into_encoded_bytes(), mode));
        } else if md.is_dir() {
            out.insert(rel, ('d', Vec::new(), mode));
            for e in std::fs::read_dir(p).unwrap() {
                walk(base, &e.unwrap().path(), out);
            }
        } else {
            out.insert(rel, ('f', std::fs::read(p).unwrap(), mode));
        }
    }
    walk(p, p, &mut out);
    out
}

/// The host cache is never written; the next run in the same workspace sees what the last
/// one wrote; another workspace does not.
#[test]
fn overlay_cache_keeps_host_cache_and_persists_per_workspace() {
    if !overlays_available() {
        return;
    }
    let p = project();
    let reg = p.home.join(".cargo/registry");
    let before = snapshot(&reg);
    let script = "set -e; c=~/.cargo/registry/cache/index.example; \
                  echo poisoned > $c/dep-1.0.0.crate; echo new > $c/new-2.0.0.crate; \
                  mkdir -p ~/.cargo/registry/src/dep && echo src > ~/.cargo/registry/src/dep/lib.rs; \
                  rm -f ~/.cargo/registry/cache/index.example/dep-1.0.0.crate; echo WROTE";
    let o = cordon(&p, &p.dir, &["run", "--", "sh", "-c", script]);
    assert!(text(&o.stdout).contains("WROTE"), "{}", text(&o.stderr));
    assert_eq!(snapshot(&reg), before, "the host cache changed");

    let o = cordon(
        &p,
        &p.dir,
        &[
            "run",
            "--",
            "sh",
            "-c",
            "cat ~/.cargo/registry/cache/index.example/new-2.0.0.crate ~/.cargo/registry/src/dep/lib.rs; \
             test -e ~/.cargo/registry/cache/index.example/dep-1.0.0.crate && echo DEP_BACK",
        ],
    );
    let so = text(&o.stdout);
    assert_eq!(so, "new\nsrc\n", "second run: {so} {}", text(&o.stderr));

    // Another workspace sees the host's contents only.
    let other = p.dir.parent().unwrap().join("other");
    std::fs::create_dir_all(other.join(".git")).unwrap();
    // A marker is a git dir with HEAD (an empty `.git` is cordon's placeholder).
    std::fs::write(other.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
    let o = cordon(
        &p,
        &other,
        &[
            "run",
            "--",
            "sh",
            "-c",
            "ls ~/.cargo/registry/cache/index.example",
        ],
    );
    assert_eq!(text(&o.stdout), "dep-1.0.0.crate\n", "{}", text(&o.stderr));
    assert_eq!(snapshot(&reg), before);
}

/// Escape test (attack pass 34, E3): the layers belong to the workspace directory, not to
/// its path — a project removed and replaced by another at the same path does not see
/// what the first wrote into its cache layers. Twin: the same project's next run does.
#[test]
fn a_new_directory_at_the_same_path_gets_fresh_layers() {
    if !overlays_available() {
        return;
    }
    let p = project();
    let write = "echo planted > ~/.cargo/registry/planted && echo WROTE";
    let o = cordon(&p, &p.dir, &["run", "--", "sh", "-c", write]);
    assert!(text(&o.stdout).contains("WROTE"), "{}", text(&o.stderr));
    let look = "cat ~/.cargo/registry/planted 2>/dev/null || echo ABSENT";
    let o = cordon(&p, &p.dir, &["run", "--", "sh", "-c", look]);
    assert_eq!(
        text(&o.stdout),
        "planted\n",
        "still works: {}",
        text(&o.stderr)
    );
    // nu16 N3: a --plan run does not mount the layers (nothing may be written); when it
    // fails, the hint says what it did not see.
    let o = cordon(
        &p,
        &p.dir,
        &[
            "run",
            "--plan",
            "--",
            "sh",
            "-c",
            "cat ~/.cargo/registry/planted",
        ],
    );
    assert_ne!(o.status.code(), Some(0));
    assert!(
        text(&o.stderr).contains("not this project's copy-on-write layers"),
        "{}",
        text(&o.stderr)
    );
    // Another project at the same path.
    std::fs::remove_dir_all(&p.dir).unwrap();
    std::fs::create_dir_all(&p.dir).unwrap();
    let g = Command::new("git")
        .args(["init", "-q"])
        .current_dir(&p.dir)
        .status()
        .unwrap();
    assert!(g.success());
    let o = cordon(&p, &p.dir, &["run", "--", "sh", "-c", look]);
    assert_eq!(text(&o.stdout), "ABSENT\n", "{}", text(&o.stderr));
    // attack35 C1: the same directory emptied and a fresh repository made in it (a
    // harness reusing `/workspace`): fresh layers too.
    let o = cordon(&p, &p.dir, &["run", "--", "sh", "-c", write]);
    assert!(text(&o.stdout).contains("WROTE"), "{}", text(&o.stderr));
    std::fs::remove_dir_all(p.dir.join(".git")).unwrap();
    let g = Command::new("git")
        .args(["init", "-q"])
        .current_dir(&p.dir)
        .status()
        .unwrap();
    assert!(g.success());
    let o = cordon(&p, &p.dir, &["run", "--", "sh", "-c", look]);
    assert_eq!(text(&o.stdout), "ABSENT\n", "{}", text(&o.stderr));
}

/// Escape test: even with `-w ~/.cache`, the private layers (this workspace's and others')
/// are neither readable nor writable inside; the overlay of the own cache still works.
/// Fails if the overlay state root is not hidden.
#[test]
fn explicit_write_grant_on_cache_dir_does_not_expose_layers() {
    if !overlays_available() {
        return;
    }
    let p = project();
    // Another workspace's layer, on the host.
    let root = p.home.join(".cache/cordon/overlays");
    let victim = root.join("victim-0000000000000000/cargo-registry/upper/cache");
    std::fs::create_dir_all(&victim).unwrap();
    std::fs::write(victim.join("x.crate"), b"clean\n").unwrap();
    let script = format!(
        "echo bad > {v}/x.crate 2>/dev/null && echo WROTE_OTHER; \
         cat {v}/x.crate 2>/dev/null && echo READ_OTHER; \
         ls {r} 2>/dev/null && echo LISTED; \
         mkdir -p {r}/evil 2>/dev/null && echo CREATED; \
         echo ok > ~/.cache/mine && echo CACHE_WRITABLE; \
         echo y > ~/.cargo/registry/y && echo OWN_OVERLAY",
        v = victim.display(),
        r = root.display()
    );
    let cache_dir = p.home.join(".cache");
    let o = cordon(
        &p,
        &p.dir,
        &[
            "run",
            "-w",
            cache_dir.to_str().unwrap(),
            "--",
            "sh",
            "-c",
            &script,
        ],
    );
    let so = text(&o.stdout);
    assert!(so.contains("CACHE_WRITABLE"), "{so} {}", text(&o.stderr));
    assert!(so.contains("OWN_OVERLAY"), "{so} {}", text(&o.stderr));
    for bad in ["WROTE_OTHER", "READ_OTHER", "LISTED", "CREATED"] {
        assert!(!so.contains(bad), "{bad}: {so}");
    }
    assert_eq!(std::fs::read(victim.join("x.crate")).unwrap(), b"clean\n");
    assert!(!root.join("evil").exists());
}

/// `caches = "read-only"`: a write fails with EROFS and cordon prints the hint; the host
/// cache is unchanged. Twin: reading still works.
#[test]
fn read_only_caches_fail_with_hint() {
    if !overlays_available() {
        return;
    }
    let p = project();
    let cfg = caches_config(&p, "read-only");
    let reg = p.home.join(".cargo/registry");
    let before = snapshot(&reg);
    let cfgs = cfg.to_str().unwrap();
    let o = cordon(
        &p,
        &p.dir,
        &[
            "run",
            "--config",
            cfgs,
            "--",
            "sh",
            "-c",
            "cat ~/.cargo/registry/cache/index.example/dep-1.0.0.crate && \
             echo x > ~/.cargo/registry/cache/index.example/n.crate",
        ],
    );
    let (so, se) = (text(&o.stdout), text(&o.stderr));
    assert_ne!(o.status.code(), Some(0));
    assert!(so.contains("original crate bytes"), "{so}");
    assert!(se.contains("Read-only file system"), "{se}");
    assert!(
        se.contains("hint: package caches are read-only") && se.contains("caches = \"overlay\""),
        "{se}"
    );
    assert_eq!(snapshot(&reg), before);
    // nu15 N9: a failed write elsewhere (a read-only path that is no cache) gets no cache
    // hint.
    let o = cordon(
        &p,
        &p.dir,
        &[
            "run",
            "--config",
            cfgs,
            "--",
            "sh",
            "-c",
            "echo x > /usr/cordon-n9",
        ],
    );
    let se = text(&o.stderr);
    assert_ne!(o.status.code(), Some(0));
    assert!(!se.contains("package caches are read-only"), "{se}");
    assert!(
        !p.home.join(".cache/cordon/overlays").exists() || {
            // No layer is kept for a read-only cache.
            std::fs::read_dir(p.home.join(".cache/cordon/overlays"))
                .unwrap()
                .next()
                .is_none()
        }
    );
}

/// `cordon cache list` shows the workspace's layer; `cache clear --workspace` removes it
/// (and only it); the next run starts from the host's contents again.
#[test]
fn cache_list_and_clear() {
    if !overlays_available() {
        return;
    }
    let p = project();
    let o = cordon(
        &p,
        &p.dir,
        &["run", "--", "sh", "-c", "echo n > ~/.cargo/registry/n"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let root = p.home.join(".cache/cordon/overlays");
    let other = root.join("other-0000000000000000/npm/upper");
    std::fs::create_dir_all(&other).unwrap();

    let o = cordon(&p, &p.dir, &["cache", "list", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let ws = v["workspaces"].as_array().unwrap();
    let mine = ws.iter().find(|w| w["current"] == true).expect("current");
    assert!(mine["workspace"].as_str().unwrap().starts_with("proj-"));
    // `~/.cargo` has a registry but no `git/`: the whole cargo home is the layer.
    assert_eq!(mine["caches"][0]["name"], "cargo-home");
    assert_eq!(mine["caches"][0]["bytes"], 2);
    assert_eq!(ws.len(), 2);

    let o = cordon(&p, &p.dir, &["cache", "clear", "--workspace"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let left: Vec<String> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(left, vec!["other-0000000000000000".to_string()]);
    let o = cordon(
        &p,
        &p.dir,
        &[
            "run",
            "--",
            "sh",
            "-c",
            "test -e ~/.cargo/registry/n || echo GONE",
        ],
    );
    assert_eq!(text(&o.stdout), "GONE\n", "{}", text(&o.stderr));

    let o = cordon(&p, &p.dir, &["cache", "clear"]);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(std::fs::read_dir(&root).unwrap().count(), 0);
}

/// A cargo project whose dependency is in the (warm) registry cache builds and runs
/// offline with the network off; cargo unpacks the crate into the private layer, and the
/// host registry stays byte-for-byte unchanged. Uses the crate `itoa` from the cargo home
/// that built these tests (copied into the fake home: index entry and `.crate`).
#[test]
fn cargo_builds_offline_from_the_warm_cache() {
    if !overlays_available() {
        return;
    }
    let cargo = PathBuf::from(env!("CARGO"));
    let p = project();
    let Some(reg) = support::seed_itoa_project(&p) else {
        return;
    };
    std::fs::write(
        p.dir.join("src/main.rs"),
        "fn main() { println!(\"{}\", itoa::Buffer::new().format(4242)); }\n",
    )
    .unwrap();
    let before = snapshot(&reg);
    let bin = cargo.parent().unwrap();
    let path = format!("{}:/usr/local/bin:/usr/bin:/bin", bin.display());
    let home_cargo = p.home.join(".cargo");
    let o = Command::new(CORDON)
        .args(["run", "--network", "off", "--"])
        .arg(&cargo)
        .args(["run", "--offline", "-q"])
        .current_dir(&p.dir)
        .env("HOME", &p.home)
        .env("CARGO_HOME", &home_cargo)
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
    assert_eq!(
        text(&o.stdout),
        "4242\n",
        "cargo run under cordon: {}",
        text(&o.stderr)
    );
    assert_eq!(snapshot(&reg), before, "the host registry changed");
    assert!(
        !reg.join("src").exists(),
        "crate unpacked into the host cache"
    );
    // The unpacked sources live in this workspace's private layer.
    let layers = p.home.join(".cache/cordon/overlays");
    let key = std::fs::read_dir(&layers)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    // (No `~/.cargo/git` in the fake home: the whole cargo home is the layer.)
    assert!(key.join("cargo-home/upper/registry/src").is_dir());
}

/// Credential-stripped views (issue 11 §2, R-C2): the settings of `~/.npmrc`,
/// `~/.gitconfig`, `~/.docker/config.json`, `~/.cargo/config.toml` and pip.conf are
/// visible inside, their tokens and passwords are not (escape test: fails if the copy is
/// not stripped); a file that does not parse is hidden whole; the copies are read-only;
/// the host files are unchanged.
#[test]
fn config_files_are_shown_with_credentials_removed() {
    if !overlays_available() {
        return;
    }
    let p = project();
    let h = &p.home;
    let files: &[(&str, &str)] = &[
        (
            ".npmrc",
            "registry=https://registry.npmjs.org/\nupdate-notifier=false\n\
             //registry.npmjs.org/:_authToken=npm_S3CRET_A\n",
        ),
        (
            ".gitconfig",
            "[user]\n\tname = Tester\n[credential]\n\thelper = store\n\
             [url \"https://x:S3CRET_B@github.com/\"]\n\tinsteadOf = gh:\n",
        ),
        (
            ".docker/config.json",
            r#"{"auths":{"ghcr.io":{"auth":"S3CRET_C"}},"credsStore":"pass"}"#,
        ),
        (
            ".cargo/config.toml",
            "[build]\njobs = 3\n[registry]\ntoken = \"S3CRET_D\"\n",
        ),
        (
            ".config/pip/pip.conf",
            "[global]\nindex-url = https://u:S3CRET_E@pypi.example/simple\n",
        ),
        (".pypirc", "[pypi\npassword = S3CRET_F\n"),
    ];
    for (f, c) in files {
        let path = h.join(f);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, c).unwrap();
    }
    let before: Vec<Vec<u8>> = files
        .iter()
        .map(|(f, _)| std::fs::read(h.join(f)).unwrap())
        .collect();
    let script = "for f in .npmrc .gitconfig .docker/config.json .cargo/config.toml \
                  .config/pip/pip.conf .pypirc; do cat ~/$f 2>&1; echo; done; \
                  git config --global user.name; \
                  echo x >> ~/.npmrc 2>/dev/null && echo NPMRC_WRITABLE; true";
    let o = cordon(&p, &p.dir, &["run", "--", "sh", "-c", script]);
    let so = text(&o.stdout);
    assert!(!so.contains("S3CRET"), "a secret leaked:\n{so}");
    for want in [
        "registry=https://registry.npmjs.org/",
        "update-notifier=false",
        "\"credsStore\": \"pass\"",
        "jobs = 3",
        "index-url = https://pypi.example/simple",
        "Tester\n",
    ] {
        assert!(
            so.contains(want),
            "missing {want:?} in\n{so}\n{}",
            text(&o.stderr)
        );
    }
    assert!(
        so.contains("Permission denied"),
        "pypirc hidden whole: {so}"
    );
    assert!(!so.contains("NPMRC_WRITABLE"), "{so}");
    for ((f, _), b) in files.iter().zip(before) {
        assert_eq!(
            std::fs::read(h.join(f)).unwrap(),
            b,
            "{f} changed on the host"
        );
    }
    let o = cordon(&p, &p.dir, &["explain", h.join(".npmrc").to_str().unwrap()]);
    // Explained as the command sees it (new user, stop 18): read-only, a copy with the
    // credentials removed.
    assert!(
        text(&o.stdout).contains(".npmrc: read-only")
            && text(&o.stdout).contains("credentials removed"),
        "{}",
        text(&o.stdout)
    );
}

/// A hostile layer tree under `~/.cache/cordon/overlays/<key>/`, as a command writing its
/// copy-on-write layer (perhaps still running) can leave it: a symlink to an outside
/// directory in place of a directory, a mode-000 `work/work` with contents, and a key that
/// is itself a symlink. Returns the outside directories (each holds a file `keep`).
fn hostile_layers(p: &Project) -> (PathBuf, PathBuf) {
    use std::os::unix::fs::{symlink, PermissionsExt};
    let root = p.home.join(".cache/cordon/overlays");
    let (outside, outside_top) = (p.root.path().join("outside"), p.root.path().join("top"));
    for d in [&outside, &outside_top] {
        std::fs::create_dir_all(d).unwrap();
        std::fs::write(d.join("keep"), b"k").unwrap();
    }
    let layer = root.join("ws-1111111111111111/cargo-home");
    std::fs::create_dir_all(layer.join("upper/registry")).unwrap();
    std::fs::write(layer.join("upper/registry/n"), b"n").unwrap();
    symlink(&outside, layer.join("upper/swapped")).unwrap();
    std::fs::create_dir_all(layer.join("work/work/index/deep")).unwrap();
    std::fs::write(layer.join("work/work/index/deep/f"), b"f").unwrap();
    std::fs::set_permissions(
        layer.join("work/work/index"),
        PermissionsExt::from_mode(0o000),
    )
    .unwrap();
    std::fs::set_permissions(layer.join("work/work"), PermissionsExt::from_mode(0o000)).unwrap();
    symlink(&outside_top, root.join("ws-2222222222222222")).unwrap();
    (outside, outside_top)
}

/// `cache clear` removes a layer tree by descriptor (R-C1, HIGH-3): the symlinks a command
/// planted are removed, never followed (their targets' files and modes survive), a
/// key that is a symlink is not entered, mode-000 directories are removed; as root and as
/// a normal user (who needs the mode-000 directories made searchable first).
#[test]
fn cache_clear_never_follows_planted_links() {
    use std::os::unix::fs::PermissionsExt;
    // Run as root, the test also runs cordon as a normal user.
    let root_user = std::fs::metadata("/proc/self").map(|m| {
        use std::os::unix::fs::MetadataExt;
        m.uid() == 0
    });
    let mut users = vec![None];
    if root_user.unwrap_or(false) {
        users.push(Some(support::TEST_UID));
    }
    for user in users {
        let p = project();
        let (outside, outside_top) = hostile_layers(&p);
        let mode_before = std::fs::metadata(&outside).unwrap().permissions().mode();
        let c = p.cordon_in(&p.dir, &["cache", "clear", "--json"]);
        let c = match user {
            Some(uid) => p.as_user(&c, uid),
            None => c,
        };
        let o = support::out(c);
        assert_eq!(o.status.code(), Some(0), "{user:?}: {}", text(&o.stderr));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(
            v["removed"],
            serde_json::json!(["ws-1111111111111111"]),
            "{v}"
        );
        assert_eq!(v["busy"], serde_json::json!([]), "{v}");
        assert_eq!(v["failed"], serde_json::json!([]), "{v}");
        let root = p.home.join(".cache/cordon/overlays");
        assert!(!root.join("ws-1111111111111111").exists(), "{user:?}");
        for d in [&outside, &outside_top] {
            assert_eq!(std::fs::read(d.join("keep")).unwrap(), b"k", "{user:?}");
        }
        let mode = std::fs::metadata(&outside).unwrap().permissions().mode();
        assert_eq!(
            mode, mode_before,
            "{user:?}: the link's target was chmodded"
        );
        // The symlinked key is not a layer: left as it is.
        assert!(std::fs::symlink_metadata(root.join("ws-2222222222222222"))
            .unwrap()
            .is_symlink());
    }
}

/// A workspace whose layers a run is using (it holds a slot lock, here `.slot-2.lock`
/// held by `flock(1)`) is skipped and reported busy, its files untouched, while the other
/// workspaces are cleared; exit 0. Once the run ends, `cache clear` removes it.
#[test]
fn cache_clear_skips_a_workspace_in_use() {
    if !support::have("flock") {
        return;
    }
    let p = project();
    let root = p.home.join(".cache/cordon/overlays");
    let busy = root.join("busy-1111111111111111");
    let idle = root.join("idle-2222222222222222");
    for k in [&busy, &idle] {
        std::fs::create_dir_all(k.join("npm/upper/pkg")).unwrap();
        std::fs::write(k.join("npm/upper/pkg/f"), b"f").unwrap();
        std::fs::create_dir_all(k.join(".slot-1/npm/upper")).unwrap();
    }
    let lock = busy.join(".slot-2.lock");
    // `-o`: the lock is held by `flock` itself, not the shell, so killing it ends the run.
    let mut holder = Command::new("flock")
        .args(["-x", "-o"])
        .arg(&lock)
        .args(["-c", "echo locked; exec sleep 60"])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    {
        use std::io::BufRead;
        let mut line = String::new();
        std::io::BufReader::new(holder.stdout.as_mut().unwrap())
            .read_line(&mut line)
            .unwrap();
        assert_eq!(line, "locked\n");
    }
    let o = cordon(&p, &p.dir, &["cache", "clear", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let o2 = cordon(&p, &p.dir, &["cache", "clear"]);
    let _ = holder.kill();
    let _ = holder.wait();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(
        v["busy"],
        serde_json::json!(["busy-1111111111111111"]),
        "{v}"
    );
    assert_eq!(
        v["removed"],
        serde_json::json!(["idle-2222222222222222"]),
        "{v}"
    );
    assert!(!idle.exists());
    assert_eq!(std::fs::read(busy.join("npm/upper/pkg/f")).unwrap(), b"f");
    assert!(busy.join(".slot-1/npm/upper").is_dir());
    assert!(lock.exists());
    assert_eq!(o2.status.code(), Some(0));
    assert!(
        text(&o2.stdout).contains("skipped") && text(&o2.stdout).contains("busy-1111111111111111"),
        "{}",
        text(&o2.stdout)
    );

    let o = cordon(&p, &p.dir, &["cache", "clear", "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        v["removed"],
        serde_json::json!(["busy-1111111111111111"]),
        "{v}"
    );
    assert_eq!(std::fs::read_dir(&root).unwrap().count(), 0);
}

/// Still works: `cache clear` removes every workspace's layers, slots and lock files
/// included, and says what it removed; `--workspace` only the current one's.
#[test]
fn cache_clear_removes_every_layer() {
    let p = project();
    let root = p.home.join(".cache/cordon/overlays");
    let o = cordon(&p, &p.dir, &["cache", "clear"]);
    assert_eq!(o.status.code(), Some(0));
    assert!(
        text(&o.stdout).starts_with("nothing to clear"),
        "{}",
        text(&o.stdout)
    );
    for k in ["a-1111111111111111", "b-2222222222222222"] {
        let k = root.join(k);
        std::fs::create_dir_all(k.join("cargo-home/upper/registry/x")).unwrap();
        std::fs::create_dir_all(k.join("cargo-home/work/work")).unwrap();
        std::fs::create_dir_all(k.join(".slot-3/pip/upper")).unwrap();
        std::fs::write(k.join(".slot-0.lock"), b"").unwrap();
        std::fs::write(k.join(".slot-3.lock"), b"").unwrap();
    }
    let o = cordon(&p, &p.dir, &["cache", "clear"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let so = text(&o.stdout);
    assert!(
        so.contains("removed") && so.contains("a-1111111111111111"),
        "{so}"
    );
    assert!(so.contains("b-2222222222222222"), "{so}");
    assert_eq!(std::fs::read_dir(&root).unwrap().count(), 0);
}

/// `cache clear` finds the layers where runs put them when `$HOME` is spelled through a
/// symlink (runs keep them under the canonical home; the no-follow removal refused the
/// link and exited 1: breaker, stop 18).
#[test]
fn cache_clear_with_a_home_reached_through_a_symlink() {
    if !overlays_available() {
        return;
    }
    let p = project();
    let link = p.root.path().join("homelink");
    std::os::unix::fs::symlink(&p.home, &link).unwrap();
    let run = |args: &[&str]| {
        p.cordon_in(&p.dir, args)
            .env_remove("CARGO_HOME")
            .env("HOME", &link)
            .output()
            .unwrap()
    };
    let o = run(&["run", "--", "sh", "-c", "echo n > ~/.cargo/registry/n"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let root = p.home.join(".cache/cordon/overlays");
    assert!(std::fs::read_dir(&root).unwrap().next().is_some());
    let o = run(&["cache", "clear", "--json"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}{}",
        text(&o.stdout),
        text(&o.stderr)
    );
    assert!(
        std::fs::read_dir(&root).unwrap().next().is_none(),
        "{}",
        text(&o.stdout)
    );
}

/// Attack pass 25, A6: the private directory of a cache missing on the host (`~/.npm`
/// absent: `npm_config_cache` points at it) was explained as hidden and read-only, with
/// advice to grant it, while every run writes it. `explain` now says what the run does;
/// twin: the run really writes there, and a path beside it in the layer root stays hidden.
#[test]
fn explain_says_a_missing_caches_private_directory_is_writable() {
    if !overlays_available() {
        return;
    }
    let p = project();
    let o = cordon(
        &p,
        &p.dir,
        &[
            "run",
            "--",
            "sh",
            "-c",
            "touch \"$npm_config_cache/x\" && echo $npm_config_cache",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let dir = text(&o.stdout).trim().to_string();
    assert!(dir.contains("/.cache/cordon/overlays/"), "{dir}");
    let o = cordon(&p, &p.dir, &["explain", "--json", &format!("{dir}/x")]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("explain --json");
    let path = &v["paths"][0];
    assert_eq!(path["access"], "write", "{v}");
    assert_eq!(path["decided_by"]["kind"], "private-cache", "{v}");
    assert_eq!(path["decided_by"]["var"], "npm_config_cache", "{v}");
    assert!(path["hint"].is_null(), "no grant advice for it: {v}");
    let root = Path::new(&dir).ancestors().nth(3).unwrap();
    let o = cordon(
        &p,
        &p.dir,
        &["explain", "--json", &root.display().to_string()],
    );
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("explain --json");
    assert_ne!(v["paths"][0]["access"], "write", "{v}");
}

/// Attack pass 26, F1: a `--plan` or `read-only` run wrote the workspace's persistent
/// copy-on-write layer (`~/.cargo/bin/cargo` replaced) and the next ordinary run executed
/// it. With nothing writable the caches are read-only; twin: an ordinary run still writes
/// its layer, and the host cache is never written.
#[test]
fn nothing_writable_runs_get_read_only_caches() {
    if !overlays_available() {
        return;
    }
    let p = project();
    let reg = p.home.join(".cargo/registry");
    let before = snapshot(&reg);
    let plant =
        "echo planted > ~/.cargo/registry/cache/index.example/dep-1.0.0.crate && echo WROTE";
    // G2 (attack pass 27): one writable root elsewhere does not bring the layers back.
    let out = p.root.path().join("out").display().to_string();
    let wide = ["--profile", "read-only", "-w", out.as_str()];
    for flags in [&["--plan"][..], &["--profile", "read-only"][..], &wide[..]] {
        let mut args = vec!["run"];
        args.extend_from_slice(flags);
        args.extend_from_slice(&["--", "sh", "-c", plant]);
        let o = cordon(&p, &p.dir, &args);
        assert!(
            !text(&o.stdout).contains("WROTE"),
            "{flags:?}: the layer was writable"
        );
        // The hint says why (nu11 M7: no advice to set what the profile already has).
        let se = text(&o.stderr);
        assert!(
            se.contains("nothing is writable in this run"),
            "{flags:?}: {se}"
        );
        assert!(!se.contains("set `caches"), "{flags:?}: {se}");
        // And no `-w PATH` advice, which a plan run ignores.
        assert!(
            !se.contains("grant it with -w") && se.contains("needs a run that may write"),
            "{flags:?}: {se}"
        );
        let o = cordon(
            &p,
            &p.dir,
            &[
                "run",
                "--",
                "cat",
                &format!("{}/cache/index.example/dep-1.0.0.crate", reg.display()),
            ],
        );
        assert_eq!(text(&o.stdout), "original crate bytes\n", "{flags:?}");
    }
    let o = cordon(&p, &p.dir, &["run", "--", "sh", "-c", plant]);
    assert!(text(&o.stdout).contains("WROTE"), "{}", text(&o.stderr));
    assert_eq!(snapshot(&reg), before, "the host cache changed");
}

/// Attack pass 148: `caches = "shared"` makes the host's own cache writable, and a
/// `--plan` run wrote through it. Plan mode takes a shared cache as a layer, which a
/// read-only workspace gets read-only. Twin: without `--plan` the shared cache is the
/// host's, written.
#[test]
fn plan_mode_does_not_write_a_shared_cache() {
    if !overlays_available() {
        return;
    }
    let p = project();
    let cfg = caches_config(&p, "shared");
    let cfgs = cfg.to_str().unwrap();
    let planted = p.home.join(".cargo/registry/planted");
    let plant = "echo x > ~/.cargo/registry/planted && echo WROTE";
    let o = cordon(
        &p,
        &p.dir,
        &["run", "--config", cfgs, "--plan", "--", "sh", "-c", plant],
    );
    assert!(!text(&o.stdout).contains("WROTE"), "{}", text(&o.stderr));
    assert!(
        !planted.exists(),
        "a --plan run wrote the host's shared cache"
    );
    let o = cordon(
        &p,
        &p.dir,
        &["run", "--config", cfgs, "--", "sh", "-c", plant],
    );
    assert!(text(&o.stdout).contains("WROTE"), "{}", text(&o.stderr));
    assert!(planted.exists());
}

/// A config file in `p`'s home whose default profile extends `workspace-write` with
/// `caches = MODE`.
fn caches_config(p: &Project, mode: &str) -> PathBuf {
    let cfg = p.home.join("cordon.toml");
    std::fs::write(
        &cfg,
        format!(
            "default_profile = \"c\"\n[profiles.c]\nextends = \"workspace-write\"\n\
             caches = \"{mode}\"\n"
        ),
    )
    .unwrap();
    cfg
}

/// Attack pass 154, F3: with `~/.cargo` (or `~/.gradle`) missing on the host, the tool's
/// variable points at a private directory, which kept everything a run wrote there: a
/// planted `config.toml` naming a `rustc-wrapper` ran in every later `cargo build`. The
/// home is fresh per run now, with only its caches kept. Twin: what a run puts in the
/// caches (`registry/`, gradle's `caches/`) is there for the next run.
#[test]
fn a_missing_tool_homes_private_directory_keeps_only_its_caches() {
    if !support::sandbox_available() {
        return;
    }
    let p = Project::new("cordon-caches-");
    assert!(!p.home.join(".cargo").exists() && !p.home.join(".gradle").exists());
    let plant = "set -e; for h in \"$CARGO_HOME\" \"$GRADLE_USER_HOME\"; do \
                 mkdir -p \"$h/bin\" \"$h/init.d\"; echo planted > \"$h/config.toml\"; \
                 echo planted > \"$h/bin/cargo\"; echo planted > \"$h/init.d/a.gradle\"; done; \
                 mkdir -p \"$CARGO_HOME/registry\" \"$GRADLE_USER_HOME/caches\"; \
                 echo kept > \"$CARGO_HOME/registry/marker\"; \
                 echo kept > \"$GRADLE_USER_HOME/caches/marker\"; echo \"$CARGO_HOME\"";
    let o = cordon(&p, &p.dir, &["run", "--", "sh", "-c", plant]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(
        text(&o.stdout).contains("/.cache/cordon/overlays/"),
        "CARGO_HOME is the private directory: {}",
        text(&o.stdout)
    );
    let look = "for h in \"$CARGO_HOME\" \"$GRADLE_USER_HOME\"; do \
                for f in config.toml bin/cargo init.d/a.gradle; do \
                [ -e \"$h/$f\" ] && echo \"LEFT $f\"; done; done; \
                cat \"$CARGO_HOME/registry/marker\" \"$GRADLE_USER_HOME/caches/marker\"";
    let o = cordon(&p, &p.dir, &["run", "--", "sh", "-c", look]);
    let so = text(&o.stdout);
    assert!(!so.contains("LEFT"), "a run's files outlived it: {so}");
    assert_eq!(so.matches("kept").count(), 2, "{so} {}", text(&o.stderr));
}

/// Issue 12: every workspace's layers were a root of their own in the record of writable
/// roots, which every run reads (hundreds of lines on a machine used for a while). They are
/// one root now, the directory of all layers, which covers each of them (a config there is
/// refused as before). Twin: the workspace itself is still recorded.
#[test]
fn the_layers_of_every_workspace_are_one_recorded_root() {
    let p = project();
    if !support::sandbox_available() || !overlays_available() {
        return;
    }
    let other = p.root.path().join("other");
    std::fs::create_dir_all(other.join(".git")).unwrap();
    std::fs::write(other.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
    for dir in [&p.dir, &other] {
        let o = cordon(&p, dir, &["run", "--", "true"]);
        assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    }
    let reg = std::fs::read_to_string(p.home.join(".local/state/cordon/writable-roots")).unwrap();
    let overlays = p.home.join(".cache/cordon/overlays");
    let roots: Vec<String> = reg
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter_map(|v| v["root"].as_str().map(str::to_string))
        .collect();
    let layer_roots: Vec<&String> = roots
        .iter()
        .filter(|r| std::path::Path::new(r).starts_with(&overlays))
        .collect();
    assert_eq!(layer_roots, vec![&overlays.display().to_string()], "{reg}");
    assert!(roots.contains(&p.dir.display().to_string()), "{reg}");
    assert!(roots.contains(&other.display().to_string()), "{reg}");
}
