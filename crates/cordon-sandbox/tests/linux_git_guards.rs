//! Issue 7 items 3, 4, 7, 9 in real sandbox runs: planted special files never hang or
//! flood resolution; git configuration that makes code keeps those paths read-only; deny
//! entries cannot be renamed away; `$TMPDIR` cannot turn a protected place writable.
#![cfg(target_os = "linux")]

mod support;
use cordon_policy::{resolve_for_command, HelperPayload, ResolveContext, ResolvedProfile};
use cordon_sandbox::HostFs;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::sync::mpsc;
use std::time::Duration;
use support::*;

fn git(dir: &Path, args: &[&str]) {
    host_git(dir, args);
}

fn repo(dir: &Path) {
    host_repo(dir);
}

fn ctx(s: &Sandbox, cwd: &Path) -> ResolveContext {
    ResolveContext {
        cwd: cwd.to_path_buf(),
        home: Some(s.home.clone()),
        ..Default::default()
    }
}

/// Resolves on the host side in a thread: a hang (a FIFO opened for reading) or a flood
/// (`/dev/zero`) fails the test after 20 s instead of blocking it.
fn resolve_bounded(s: &Sandbox, c: ResolveContext) -> ResolvedProfile {
    let p = s.profile.clone();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(resolve_for_command(&p, &c, &HostFs));
    });
    rx.recv_timeout(Duration::from_secs(20))
        .expect("resolution finished within 20 s (a planted FIFO or /dev/zero was read)")
        .expect("resolves")
}

/// Runs `sh -c script` in the sandbox compiled from `r`, killed after 30 s.
fn run_resolved(s: &Sandbox, r: ResolvedProfile, script: &str) -> Output {
    let cwd = r.cwd.clone();
    let payload = HelperPayload::new(r, s.env.clone()).encode().unwrap();
    let mut child = Command::new(helper_bin())
        .args([
            "__sandbox-helper",
            "--permission-profile",
            &payload,
            "--",
            "sh",
            "-c",
            script,
        ])
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while child.try_wait().unwrap().is_none() {
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            panic!("sandboxed command did not finish within 30 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

/// A sandbox for git tests (a git identity, no system config), or `None` (skipped; a
/// failure on CI) when the host lacks user namespaces, Landlock, seccomp or git.
fn git_sandbox() -> Option<Sandbox> {
    require(&[
        Need::Userns,
        Need::Landlock(1),
        Need::Seccomp,
        Need::Tool("git"),
    ])
    .then(|| {
        Sandbox::new()
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@t")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@t")
            .env("GIT_CONFIG_NOSYSTEM", "1")
    })
}

fn mkfifo(p: &Path) {
    let _ = std::fs::remove_file(p);
    nix::unistd::mkfifo(p, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
}

fn zero_link(p: &Path) {
    let _ = std::fs::remove_file(p);
    std::os::unix::fs::symlink("/dev/zero", p).unwrap();
}

/// Item 7: a FIFO or a symlink to `/dev/zero` at `.git`, `sub/.git`, `.git/commondir`,
/// `.git/config` or a linked worktree's `gitdir` never hangs or floods cordon; each one
/// that is read is refused by name; the sandbox still starts.
#[test]
fn planted_special_files_are_refused_by_name() {
    if !require_full() {
        return;
    }
    type Plant = fn(&Path);
    for (plant, kind) in [
        (mkfifo as Plant, "fifo"),
        (zero_link as Plant, "character device"),
    ] {
        // `.git` itself, and `sub/.git` (the cwd's nearest marker).
        for rel in [".git", "sub/.git"] {
            let s = Sandbox::new();
            std::fs::create_dir_all(s.ws.join("sub")).unwrap();
            let target = s.ws.join(rel);
            plant(&target);
            let cwd = target.parent().unwrap().to_path_buf();
            let r = resolve_bounded(&s, ctx(&s, &cwd));
            assert!(
                r.notes
                    .iter()
                    .any(|n| n.contains(&target.display().to_string()) && n.contains(kind)),
                "{rel} {kind}: {:?}",
                r.notes
            );
            assert_ok(&run_resolved(&s, r, "echo ok > f && cat f"));
        }
        // Inside a real `.git`: commondir and config are read at launch.
        for rel in [".git/commondir", ".git/config"] {
            let s = Sandbox::new();
            repo(&s.ws);
            let target = s.ws.join(rel);
            plant(&target);
            let r = resolve_bounded(&s, ctx(&s, &s.ws));
            if rel.ends_with("config") {
                assert!(
                    r.notes
                        .iter()
                        .any(|n| n.contains(&target.display().to_string()) && n.contains(kind)),
                    "{rel} {kind}: {:?}",
                    r.notes
                );
            }
            assert_ok(&run_resolved(&s, r, "echo ok > f && cat f"));
        }
        // A linked worktree whose git dir's `gitdir` backlink was replaced.
        let main = outside_dir();
        let main_repo = main.path().join("r");
        std::fs::create_dir_all(&main_repo).unwrap();
        repo(&main_repo);
        let s = Sandbox::new().keep(main);
        let wt = s.ws.join("wt");
        git(&main_repo, &["worktree", "add", "-q", wt.to_str().unwrap()]);
        let back = main_repo.join(".git/worktrees/wt/gitdir");
        plant(&back);
        let r = resolve_bounded(&s, ctx(&s, &wt));
        assert!(
            r.notes
                .iter()
                .any(|n| n.contains(&back.display().to_string()) && n.contains(kind)),
            "worktree gitdir {kind}: {:?}",
            r.notes
        );
        assert_ok(&run_resolved(&s, r, "true"));
    }
}

/// Item 3: with `core.hooksPath = .githooks` (husky), the command can neither create nor
/// change a hook there, while `git commit` still works (twin).
#[test]
fn configured_hooks_path_is_read_only() {
    let Some(s) = git_sandbox() else {
        return;
    };
    repo(&s.ws);
    git(&s.ws, &["config", "core.hooksPath", ".githooks"]);
    let r = resolve_bounded(&s, ctx(&s, &s.ws));
    let o = run_resolved(
        &s,
        r,
        "mkdir -p .githooks; printf '#!/bin/sh\\necho pwned\\n' > .githooks/pre-commit; \
         chmod +x .githooks/pre-commit; exit 0",
    );
    assert_ok(&o);
    assert!(
        !s.ws.join(".githooks/pre-commit").exists(),
        "a hook was planted in core.hooksPath"
    );
    // An existing hooks dir keeps its hooks unchanged. (The run above may have left a
    // permanent placeholder for the missing `.githooks`.)
    let hk = s.ws.join(".githooks");
    if hk.is_file() {
        std::fs::remove_file(&hk).unwrap();
    }
    write(&s.ws.join(".githooks/pre-commit"), "#!/bin/sh\nexit 0\n");
    let r = resolve_bounded(&s, ctx(&s, &s.ws));
    let o = run_resolved(&s, r, "echo 'echo pwned' >> .githooks/pre-commit; exit 0");
    assert_ok(&o);
    assert_eq!(
        std::fs::read_to_string(s.ws.join(".githooks/pre-commit")).unwrap(),
        "#!/bin/sh\nexit 0\n"
    );
    // Twin: commits work.
    let r = resolve_bounded(&s, ctx(&s, &s.ws));
    let o = run_resolved(
        &s,
        r,
        "echo b > b.txt && git add b.txt && git commit -qm second && git log --oneline | wc -l",
    );
    assert_ok(&o);
    assert_eq!(stdout(&o).trim(), "2");
}

/// Attack pass 55 finding (HIGH): `core.fsmonitor = bash fsmon.sh` (a script with no `/`,
/// existing or not) and `alias.lint = !python3 lint.py`: the scripts host git would run
/// stay read-only, and a glob's directory (`bash tools/*.sh`) cannot gain a match; `sh -e
/// x.sh` is a script too, and `origin/main` in an alias is no placeholder (attack pass 56).
#[test]
fn interpreter_scripts_named_in_git_config_are_read_only() {
    let Some(s) = git_sandbox() else {
        return;
    };
    repo(&s.ws);
    git(&s.ws, &["config", "core.fsmonitor", "bash fsmon.sh"]);
    git(&s.ws, &["config", "alias.lint", "!python3 -u lint.py"]);
    git(&s.ws, &["config", "alias.all", "!bash tools/*.sh"]);
    // Attack pass 56: `-e` is errexit for a shell, and a ref is not a file.
    git(&s.ws, &["config", "alias.strict", "!sh -e strict.sh"]);
    git(
        &s.ws,
        &[
            "config",
            "alias.sync",
            "!git fetch origin && git reset --hard origin/main",
        ],
    );
    write(&s.ws.join("lint.py"), "print('lint')\n");
    write(&s.ws.join("tools/ok.sh"), "echo ok\n");
    let r = resolve_bounded(&s, ctx(&s, &s.ws));
    let o = run_resolved(
        &s,
        r,
        "echo 'echo pwned' > fsmon.sh; echo 'print(1)' >> lint.py; \
         echo 'echo pwned' > tools/new.sh; echo 'echo pwned' >> tools/ok.sh; \
         echo 'echo pwned' > strict.sh; exit 0",
    );
    assert_ok(&o);
    assert!(
        std::fs::read_to_string(s.ws.join("strict.sh"))
            .unwrap_or_default()
            .is_empty(),
        "the `sh -e` script was written"
    );
    assert!(
        !s.ws.join("origin").exists(),
        "a ref in an alias became a placeholder in the project"
    );
    assert!(
        std::fs::read_to_string(s.ws.join("fsmon.sh"))
            .unwrap_or_default()
            .is_empty(),
        "the fsmonitor script was written"
    );
    assert_eq!(
        std::fs::read_to_string(s.ws.join("lint.py")).unwrap(),
        "print('lint')\n"
    );
    assert!(!s.ws.join("tools/new.sh").exists(), "a glob gained a match");
    assert_eq!(
        std::fs::read_to_string(s.ws.join("tools/ok.sh")).unwrap(),
        "echo ok\n"
    );
    // Twin: the rest of the project stays writable, and git works.
    let r = resolve_bounded(&s, ctx(&s, &s.ws));
    let o = run_resolved(
        &s,
        r,
        "echo b > b.txt && git add b.txt && git -c core.fsmonitor=false commit -qm b && cat b.txt",
    );
    assert_ok(&o);
    assert_eq!(stdout(&o).trim(), "b");
}

/// Attack pass 61: a script fed to a shell through another descriptor, named by a loop's
/// glob, or run by `find -exec` from a directory of the project stays read-only, and no new
/// match can appear; the rest of the project stays writable.
#[test]
fn scripts_fed_by_descriptor_loop_or_find_exec_are_read_only() {
    let Some(s) = git_sandbox() else {
        return;
    };
    repo(&s.ws);
    git(
        &s.ws,
        &["config", "core.fsmonitor", "exec 3<tools/p.sh; sh -s <&3"],
    );
    git(
        &s.ws,
        &[
            "config",
            "alias.each",
            "!for f in tools/z*.sh; do sh $f; done",
        ],
    );
    git(
        &s.ws,
        &[
            "config",
            "alias.hooks",
            "!find hooks -name '*.sh' -exec sh {} \\;",
        ],
    );
    // Attack pass 62: text read into the line, and a list read by a loop.
    git(
        &s.ws,
        &["config", "alias.ev", "!eval \"$(cat tools/e.sh)\""],
    );
    git(
        &s.ws,
        &[
            "config",
            "alias.lst",
            "!while read l; do sh \"$l\"; done < tools/list",
        ],
    );
    write(&s.ws.join("tools/p.sh"), "echo p\n");
    write(&s.ws.join("tools/z1.sh"), "echo z\n");
    write(&s.ws.join("hooks/h.sh"), "echo h\n");
    write(&s.ws.join("tools/e.sh"), "echo e\n");
    write(&s.ws.join("tools/l.sh"), "echo l\n");
    write(&s.ws.join("tools/list"), "tools/l.sh\n");
    let r = resolve_bounded(&s, ctx(&s, &s.ws));
    let o = run_resolved(
        &s,
        r,
        "echo 'echo pwned' >> tools/p.sh; echo 'echo pwned' >> tools/z1.sh; \
         echo 'echo pwned' > tools/z2.sh; echo 'echo pwned' >> hooks/h.sh; \
         echo 'echo pwned' > hooks/new.sh; echo 'echo pwned' >> tools/e.sh; \
         echo 'echo pwned' >> tools/l.sh; echo tools/z2.sh >> tools/list; \
         echo ok > other.txt; exit 0",
    );
    assert_ok(&o);
    for (f, want) in [
        ("tools/p.sh", "echo p\n"),
        ("tools/z1.sh", "echo z\n"),
        ("hooks/h.sh", "echo h\n"),
        ("tools/e.sh", "echo e\n"),
        ("tools/l.sh", "echo l\n"),
        ("tools/list", "tools/l.sh\n"),
    ] {
        assert_eq!(
            std::fs::read_to_string(s.ws.join(f)).unwrap(),
            want,
            "{f} was written"
        );
    }
    assert!(
        !s.ws.join("tools/z2.sh").exists(),
        "the loop's glob gained a match"
    );
    assert!(
        !s.ws.join("hooks/new.sh").exists(),
        "find's directory gained a script"
    );
    assert_eq!(
        std::fs::read_to_string(s.ws.join("other.txt")).unwrap(),
        "ok\n",
        "the rest of the project stays writable"
    );
}

/// Attack pass 57 (critical): one byte that is not UTF-8 in `.git/config` (a Latin-1
/// `user.name`, which a command can have merged back) made cordon skip the whole file, so
/// `core.fsmonitor = bash fsmon.sh` in it left `fsmon.sh` writable.
#[test]
fn a_config_byte_that_is_not_utf8_keeps_its_command_values_protected() {
    let Some(s) = git_sandbox() else {
        return;
    };
    repo(&s.ws);
    git(&s.ws, &["config", "core.fsmonitor", "bash fsmon.sh"]);
    let cfg = s.ws.join(".git/config");
    let mut bytes = std::fs::read(&cfg).unwrap();
    bytes.extend_from_slice(b"[user]\n\tname = Jos\xe9\n");
    std::fs::write(&cfg, bytes).unwrap();
    write(&s.ws.join("fsmon.sh"), "#!/bin/sh\n");
    let r = resolve_bounded(&s, ctx(&s, &s.ws));
    let o = run_resolved(
        &s,
        r,
        "echo 'echo pwned' >> fsmon.sh; echo ok > other.txt; exit 0",
    );
    assert_ok(&o);
    assert_eq!(
        std::fs::read_to_string(s.ws.join("fsmon.sh")).unwrap(),
        "#!/bin/sh\n",
        "the fsmonitor script of a config with a Latin-1 byte was written"
    );
    // Twin: the rest of the project is writable.
    assert_eq!(
        std::fs::read_to_string(s.ws.join("other.txt")).unwrap(),
        "ok\n"
    );
}

/// Item 3, found by a re-test: a configured code path whose *parent* does not exist yet
/// (`core.hooksPath = tools/git/hooks`, `include.path = conf/extra.cfg`) is protected too
/// (its missing directories are created first), instead of being skipped.
#[test]
fn configured_code_path_under_a_missing_parent_is_read_only() {
    if !require(&[
        Need::Userns,
        Need::Landlock(1),
        Need::Seccomp,
        Need::Tool("git"),
    ]) {
        return;
    }
    let s = Sandbox::new().env("GIT_CONFIG_NOSYSTEM", "1");
    repo(&s.ws);
    git(&s.ws, &["config", "core.hooksPath", "tools/git/hooks"]);
    git(&s.ws, &["config", "include.path", "../conf/extra.cfg"]);
    let r = resolve_bounded(&s, ctx(&s, &s.ws));
    let o = run_resolved(
        &s,
        r,
        "mkdir -p tools/git/hooks conf; echo pwned > tools/git/hooks/pre-commit; \
         printf '[core]\\n\\tfsmonitor = x\\n' > conf/extra.cfg; exit 0",
    );
    assert_ok(&o);
    assert!(
        !s.ws.join("tools/git/hooks/pre-commit").exists(),
        "a hook was planted under a missing core.hooksPath parent"
    );
    let cfg = s.ws.join("conf/extra.cfg");
    assert!(
        std::fs::read_to_string(&cfg).unwrap_or_default().is_empty(),
        "an included config file was planted under a missing parent"
    );
    // Twin: the rest of the new directories' parents stays writable.
    let r = resolve_bounded(&s, ctx(&s, &s.ws));
    let o = run_resolved(&s, r, "echo ok > tools/notes.txt && cat tools/notes.txt");
    assert_ok(&o);
    assert_eq!(stdout(&o).trim(), "ok");
}

/// Item 2 × 3, found by a re-test: a code path git reaches through a symlink that lives in
/// the workspace (`alias.q = !lk/q.sh`, `lk` → a directory elsewhere): the link is pinned,
/// so it cannot be replaced by a directory holding the command's own `q.sh`.
#[test]
fn symlink_on_the_way_to_a_configured_code_path_is_pinned() {
    if !require(&[
        Need::Userns,
        Need::Landlock(1),
        Need::Seccomp,
        Need::Tool("git"),
    ]) {
        return;
    }
    let s = Sandbox::new().env("GIT_CONFIG_NOSYSTEM", "1");
    repo(&s.ws);
    let elsewhere = tempfile::tempdir_in("/var/tmp").unwrap();
    write(&elsewhere.path().join("q.sh"), "echo hi\n");
    std::os::unix::fs::symlink(elsewhere.path(), s.ws.join("lk")).unwrap();
    git(&s.ws, &["config", "alias.q", "!lk/q.sh"]);
    let r = resolve_bounded(&s, ctx(&s, &s.ws));
    let o = run_resolved(&s, r, "rm lk && mkdir lk && echo pwned > lk/q.sh; exit 0");
    assert_ok(&o);
    assert!(
        std::fs::symlink_metadata(s.ws.join("lk"))
            .unwrap()
            .file_type()
            .is_symlink(),
        "the symlink on the way to alias.q's program was replaced"
    );
    // Twin: other files next to it stay writable.
    let r = resolve_bounded(&s, ctx(&s, &s.ws));
    let o = run_resolved(&s, r, "echo ok > other.txt && cat other.txt");
    assert_ok(&o);
    assert_eq!(stdout(&o).trim(), "ok");
}

/// Item 4: with `conf/keys` denied, `mv conf conf2` (and `mv conf/keys conf/k2`) fail, so the
/// next run's deny still hides the keys; writing elsewhere in `conf` works (twin). Sibling:
/// a deny spelled through a symlinked directory pins the real directory.
#[test]
fn deny_entries_cannot_be_renamed_away() {
    if !require_full() {
        return;
    }
    let mut s = Sandbox::new();
    let ws = s.ws.clone();
    write(&s.ws.join("conf/keys/k.pem"), "SECRET\n");
    std::os::unix::fs::symlink(s.ws.join("conf"), s.ws.join("link")).unwrap();
    for deny in ["conf/keys", "link/keys"] {
        s = s.filesystem(
            cordon_policy::Access::Read,
            vec![
                entry(":workspace", cordon_policy::Access::Write),
                entry(
                    &ws.join(deny).display().to_string(),
                    cordon_policy::Access::Deny,
                ),
            ],
            true,
        );
        let r = resolve_bounded(&s, ctx(&s, &s.ws));
        let o = run_resolved(
            &s,
            r,
            "mv conf conf2; mkdir -p conf; mv conf/keys conf/k2; \
             cat conf/keys/k.pem conf2/keys/k.pem conf/k2/k.pem; \
             echo ok > conf/other && cat conf/other",
        );
        assert!(!stdout(&o).contains("SECRET"), "{deny}: {}", stdout(&o));
        assert!(stdout(&o).contains("ok"), "{deny}: twin: {}", stderr(&o));
        assert!(s.ws.join("conf/keys/k.pem").exists(), "{deny}: moved away");
        assert!(!s.ws.join("conf2").exists(), "{deny}");
    }
}

/// Item 9: `$TMPDIR` at `<ws>/.git/hooks` or inside a denied directory does not become
/// writable (a note says so); a real temp dir does (twin).
#[test]
fn tmpdir_cannot_open_protected_places() {
    if !require_full() {
        return;
    }
    let s = Sandbox::new();
    repo(&s.ws);
    std::fs::create_dir_all(s.home.join(".ssh/tmp")).unwrap();
    for t in [s.ws.join(".git/hooks"), s.home.join(".ssh/tmp")] {
        let mut c = ctx(&s, &s.ws);
        c.tmpdir = Some(t.clone());
        let r = resolve_bounded(&s, c);
        assert!(
            r.notes.iter().any(|n| n.contains("$TMPDIR")),
            "{}: {:?}",
            t.display(),
            r.notes
        );
        let script = format!("echo x > {}/planted; exit 0", q(&t));
        assert_ok(&run_resolved(&s, r, &script));
        assert!(!t.join("planted").exists(), "{}", t.display());
    }
    let tmp = outside_dir();
    let mut c = ctx(&s, &s.ws);
    c.tmpdir = Some(tmp.path().to_path_buf());
    let r = resolve_bounded(&s, c);
    let o = run_resolved(&s, r, &format!("echo x > {}/f", q(tmp.path())));
    assert_ok(&o);
    assert!(tmp.path().join("f").exists());
}

/// Breaker (stop 19): a nested repository inside the workspace (a vendored clone, a
/// submodule's `.git` file) had a writable `.git`: its `core.fsmonitor` or hooks then ran
/// on the host at the user's next `git status` there — or at the project root, which
/// recurses into populated submodules. Its `.git` is read-only as a whole, and cannot be
/// moved aside with its parent; the nested work tree stays writable, and the top-level
/// repository still commits (twin).
#[test]
fn nested_repositories_keep_their_git_dir() {
    let Some(s) = git_sandbox() else {
        return;
    };
    repo(&s.ws);
    let nested = s.ws.join("vendor/lib");
    std::fs::create_dir_all(&nested).unwrap();
    repo(&nested);
    // A submodule-style checkout: `.git` is a `gitdir:` file.
    std::fs::create_dir_all(s.ws.join("sm")).unwrap();
    write(&s.ws.join("sm/.git"), "gitdir: ../.git/modules/sm\n");
    let config_before = std::fs::read_to_string(nested.join(".git/config")).unwrap();
    let r = resolve_bounded(&s, ctx(&s, &s.ws));
    let o = run_resolved(
        &s,
        r,
        "git -C vendor/lib config core.fsmonitor 'id > /tmp/pwned' ; \
         printf '#!/bin/sh\\nid\\n' > vendor/lib/.git/hooks/post-checkout ; \
         printf 'gitdir: ../evil\\n' > sm/.git ; \
         mv vendor/lib/.git vendor/lib/.git-old ; mv vendor vendor-old ; \
         echo work > vendor/lib/file.txt && echo top > top.txt && git add top.txt && \
         git commit -qm top && echo COMMITTED",
    );
    assert!(stdout(&o).contains("COMMITTED"), "{}", stderr(&o));
    assert_eq!(
        std::fs::read_to_string(nested.join(".git/config")).unwrap(),
        config_before,
        "the nested repository's config was rewritten"
    );
    assert!(
        !nested.join(".git/hooks/post-checkout").exists(),
        "hook planted"
    );
    assert_eq!(
        std::fs::read_to_string(s.ws.join("sm/.git")).unwrap(),
        "gitdir: ../.git/modules/sm\n",
        "the submodule's gitdir pointer was redirected"
    );
    assert!(nested.join(".git/HEAD").exists() && s.ws.join("vendor").is_dir());
    // Twin: the nested work tree is the workspace's, writable.
    assert_eq!(
        std::fs::read_to_string(nested.join("file.txt")).unwrap(),
        "work\n"
    );
}

/// Breaker (stop 19): a hook installed as a symlink into the work tree runs its target, so
/// the target is read-only inside; husky v9's hook bodies (`.husky/<hook>`, run by the
/// dispatcher in the protected `.husky/_`) too. Other scripts stay writable (twin).
#[test]
fn hook_targets_and_husky_bodies_are_read_only() {
    if !require(&[
        Need::Userns,
        Need::Landlock(1),
        Need::Seccomp,
        Need::Tool("git"),
    ]) {
        return;
    }
    let s = Sandbox::new().env("GIT_CONFIG_NOSYSTEM", "1");
    repo(&s.ws);
    write(
        &s.ws.join("scripts/pre-commit.sh"),
        "#!/bin/sh\necho lint\n",
    );
    write(&s.ws.join("scripts/other.sh"), "#!/bin/sh\n");
    // A two-link chain: hook -> scripts/a -> pre-commit.sh (breaker, stop 19: the middle
    // link could be re-pointed).
    std::os::unix::fs::symlink("pre-commit.sh", s.ws.join("scripts/a")).unwrap();
    std::os::unix::fs::symlink("../../scripts/a", s.ws.join(".git/hooks/pre-commit")).unwrap();
    write(&s.ws.join(".husky/_/h"), "#!/usr/bin/env sh\n");
    write(&s.ws.join(".husky/pre-push"), "npm test\n");
    git(&s.ws, &["config", "core.hooksPath", ".husky/_"]);
    let r = resolve_bounded(&s, ctx(&s, &s.ws));
    let o = run_resolved(
        &s,
        r,
        "echo 'id' >> scripts/pre-commit.sh; echo 'id' >> .husky/pre-push; \
         ln -sfn other.sh scripts/a; rm -f scripts/a; \
         echo '# ok' >> scripts/other.sh && echo EDITED",
    );
    assert!(stdout(&o).contains("EDITED"), "{}", stderr(&o));
    assert_eq!(
        std::fs::read_to_string(s.ws.join("scripts/pre-commit.sh")).unwrap(),
        "#!/bin/sh\necho lint\n"
    );
    assert_eq!(
        std::fs::read_to_string(s.ws.join(".husky/pre-push")).unwrap(),
        "npm test\n"
    );
    assert_eq!(
        std::fs::read_link(s.ws.join("scripts/a")).unwrap(),
        std::path::PathBuf::from("pre-commit.sh"),
        "the middle link was re-pointed"
    );
    assert!(std::fs::read_to_string(s.ws.join("scripts/other.sh"))
        .unwrap()
        .contains("# ok"));
}
