//! R-P3 / R-L1: inside a writable workspace, the parts of `.git` that run code (hooks,
//! config, info) stay read-only while `git add` + `git commit` work — also in a linked
//! worktree and when `.git/hooks` did not exist before the run.
#![cfg(target_os = "linux")]

mod support;
use std::path::Path;
use std::process::Command;
use support::*;

fn git(dir: &Path, args: &[&str]) {
    let o = Command::new("git")
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
        "git {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

fn repo(dir: &Path) {
    git(dir, &["init", "-q"]);
    write(&dir.join("a.txt"), "a\n");
    git(dir, &["add", "."]);
    git(dir, &["commit", "-qm", "init"]);
}

fn with_git_env(s: Sandbox) -> Sandbox {
    s.env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@t")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@t")
        .env("GIT_CONFIG_NOSYSTEM", "1")
}

const ATTACK: &str = "printf '#!/bin/sh\\necho pwned\\n' > .git/hooks/pre-commit; \
    chmod +x .git/hooks/pre-commit; \
    echo '[core]' >> .git/config; \
    git config core.hooksPath /tmp/evil; \
    echo '* filter=evil' > .git/info/attributes; \
    rm -rf .git/hooks; mv .git/hooks .git/hooks2; exit 0";

#[test]
fn hooks_and_config_are_read_only_while_commit_works() {
    if !require_full() {
        return;
    }
    let s = with_git_env(Sandbox::new());
    repo(&s.ws);
    let config_before = std::fs::read_to_string(s.ws.join(".git/config")).unwrap();
    let hooks_before = std::fs::read_dir(s.ws.join(".git/hooks")).unwrap().count();
    let o = s.sh(ATTACK);
    assert_ok(&o);
    assert_eq!(
        std::fs::read_to_string(s.ws.join(".git/config")).unwrap(),
        config_before
    );
    assert!(!s.ws.join(".git/hooks/pre-commit").exists());
    assert_eq!(
        std::fs::read_dir(s.ws.join(".git/hooks")).unwrap().count(),
        hooks_before
    );
    assert!(!s.ws.join(".git/info/attributes").exists());
    // Twin: ordinary git work writes the index, objects and refs.
    let o = s.sh(
        "echo b > b.txt && git add b.txt && git commit -qm second && git log --oneline | wc -l",
    );
    assert_ok(&o);
    assert_eq!(stdout(&o).trim(), "2");
}

#[test]
fn linked_worktree_commit_works_hooks_stay_read_only() {
    if !require_full() {
        return;
    }
    let main_dir = tempdir_in("/tmp");
    let main = main_dir.path().canonicalize().unwrap();
    repo(&main);
    let s = with_git_env(Sandbox::new()).keep(main_dir);
    std::fs::remove_dir(&s.ws).unwrap();
    git(&main, &["worktree", "add", "-q", s.ws.to_str().unwrap()]);
    let o = s.sh(&format!(
        "echo x > {h}/pre-commit; echo '[alias]' >> {c}; echo gitdir: /tmp > .git; \
         echo w > w.txt && git add w.txt && git commit -qm wt && git log --oneline | wc -l",
        h = q(&main.join(".git/hooks")),
        c = q(&main.join(".git/config"))
    ));
    assert_ok(&o);
    assert_eq!(stdout(&o).trim(), "2");
    assert!(!main.join(".git/hooks/pre-commit").exists());
    assert!(!std::fs::read_to_string(main.join(".git/config"))
        .unwrap()
        .contains("alias"));
    assert!(std::fs::read_to_string(s.ws.join(".git"))
        .unwrap()
        .starts_with("gitdir: "));
    assert!(!std::fs::read_to_string(s.ws.join(".git"))
        .unwrap()
        .contains("/tmp\n"));
}

#[test]
fn missing_hooks_dir_cannot_be_created_and_is_not_left_behind() {
    if !require_full() {
        return;
    }
    let s = with_git_env(Sandbox::new());
    repo(&s.ws);
    std::fs::remove_dir_all(s.ws.join(".git/hooks")).unwrap();
    let o = s.sh(
        "mkdir -p .git/hooks; printf '#!/bin/sh\\necho pwned\\n' > .git/hooks/pre-commit; \
         ls -A .git/hooks | wc -l; echo c > c.txt && git add c.txt && git commit -qm c",
    );
    assert_ok(&o);
    assert_eq!(stdout(&o).trim(), "0");
    // The placeholder used to protect it is gone after the run.
    assert!(!s.ws.join(".git/hooks").exists());
    // And a non-git workspace does not become one.
    let s2 = with_git_env(Sandbox::new());
    let o = s2.sh("git init -q . ; mkdir .cordon; echo x > .cordon/config.toml; exit 0");
    assert_ok(&o);
    assert!(!s2.ws.join(".git").exists(), "placeholder .git left behind");
    assert!(
        !s2.ws.join(".cordon").exists(),
        "placeholder .cordon left behind"
    );
}

/// R-P3: `.git` itself is pinned (a mount point), so it cannot be moved aside (or a
/// linked worktree's `.git` file replaced) and a fresh, unprotected `.git/hooks`
/// created in its place for a later, unsandboxed git to run. Fails if the pin is removed.
#[test]
fn git_dir_cannot_be_moved_aside_to_plant_hooks() {
    if !require_full() {
        return;
    }
    let s = with_git_env(Sandbox::new());
    repo(&s.ws);
    let o = s.sh("mv .git .git-old; \
         mkdir -p .git/hooks 2>/dev/null; \
         printf '#!/bin/sh\\necho pwned\\n' > .git/hooks/pre-commit; exit 0");
    assert_ok(&o);
    assert!(!s.ws.join(".git-old").exists(), "{}", stderr(&o));
    assert!(!s.ws.join(".git/hooks/pre-commit").exists());
    // Twin: the pinned .git still takes ordinary writes.
    let o = s.sh("echo c > c.txt && git add c.txt && git commit -qm third && echo OK");
    assert_ok(&o);
    assert!(stdout(&o).contains("OK"));
}

/// Item 2: the placeholders are removed relative to the directory they were created in,
/// and only while they are the very (empty) entries created. Here a host process (the
/// pinned `.git` cannot be renamed from inside) moves `.git` aside during the run and
/// plants a symlink to another directory holding empty `hooks`/`info` and an empty
/// `config`: the cleanup must not delete those. Fails when placeholders are removed by
/// path.
#[test]
fn placeholder_cleanup_does_not_follow_a_planted_symlink() {
    if !require_full() {
        return;
    }
    let s = with_git_env(Sandbox::new());
    repo(&s.ws);
    for d in ["hooks", "info"] {
        let _ = std::fs::remove_dir_all(s.ws.join(".git").join(d));
    }
    let elsewhere = outside_dir();
    let e = elsewhere.path();
    std::fs::create_dir(e.join("hooks")).unwrap();
    std::fs::create_dir(e.join("info")).unwrap();
    std::fs::write(e.join("config"), "").unwrap();
    let mut child = s.spawn_sh("echo ready; while [ ! -e go ]; do sleep 0.02; done");
    let mut out = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    std::io::BufRead::read_line(&mut out, &mut line).unwrap();
    assert_eq!(line, "ready\n");
    assert!(s.ws.join(".git/hooks").is_dir(), "placeholder not created");
    std::fs::rename(s.ws.join(".git"), s.ws.join(".git-moved")).unwrap();
    std::os::unix::fs::symlink(e, s.ws.join(".git")).unwrap();
    std::fs::write(s.ws.join("go"), "").unwrap();
    let status = child.wait().unwrap();
    assert!(status.success(), "{status:?}");
    for n in ["hooks", "info", "config"] {
        assert!(
            e.join(n).exists(),
            "{n} deleted through the planted symlink"
        );
    }
    // Twin: the placeholders themselves (in the moved directory) are gone.
    assert!(!s.ws.join(".git-moved/hooks").exists());
    assert!(!s.ws.join(".git-moved/info").exists());
    assert!(
        s.ws.join(".git-moved/config").exists(),
        "the real config stays"
    );
}

/// R-P3: `.git/commondir` (missing in an ordinary repository) cannot be created to point
/// git at a directory with planted hooks/config, while git keeps working inside and no
/// placeholder is left behind. Fails if commondir gets no placeholder (the write succeeds)
/// or an empty one (git fails).
#[test]
fn commondir_cannot_be_planted_and_git_still_works() {
    if !require_full() {
        return;
    }
    let s = with_git_env(Sandbox::new());
    repo(&s.ws);
    let o = s.sh(
        "mkdir -p evil/hooks; echo ../evil > .git/commondir 2>/dev/null && echo PLANTED; \
         git status --short >/dev/null && git commit -q --allow-empty -m x && echo GIT_OK",
    );
    assert_ok(&o);
    assert!(!stdout(&o).contains("PLANTED"), "{}", stdout(&o));
    assert!(
        stdout(&o).contains("GIT_OK"),
        "{} {}",
        stdout(&o),
        stderr(&o)
    );
    assert!(
        !s.ws.join(".git/commondir").exists(),
        "placeholder left behind"
    );
}
