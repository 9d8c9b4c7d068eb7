//! R-P3 / R-L1: inside a writable workspace, the parts of `.git` that run code (hooks,
//! config, info) stay read-only while `git add` + `git commit` work — also in a linked
//! worktree and when `.git/hooks` did not exist before the run.
#![cfg(target_os = "linux")]

mod support;
use std::path::Path;
use std::process::Command;
use support::*;

fn git(dir: &Path, args: &[&str]) {
    host_git(dir, args);
}

fn repo(dir: &Path) {
    host_repo(dir);
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

/// R-P3: a missing `.git/hooks` cannot be created; the placeholder that protects it stays
/// (permanent: removing it would unprotect an overlapping run) and is harmless.
#[test]
fn missing_hooks_dir_cannot_be_created_and_placeholder_is_harmless() {
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
    // The placeholder stays, empty.
    assert_eq!(
        std::fs::read_dir(s.ws.join(".git/hooks")).unwrap().count(),
        0
    );
    // And a non-git workspace does not become one: the placeholders are an empty `.git`
    // and `.cordon`, which git does not take for a repository.
    let s2 = with_git_env(Sandbox::new());
    let o = s2.sh("git init -q . ; mkdir .cordon; echo x > .cordon/config.toml; exit 0");
    assert_ok(&o);
    for d in [".git", ".cordon"] {
        let names: Vec<_> = std::fs::read_dir(s2.ws.join(d))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert!(names.is_empty(), "{d}: {names:?}");
    }
    let o = Command::new("git")
        .args(["rev-parse", "--git-dir"])
        .current_dir(&s2.ws)
        .env("GIT_CEILING_DIRECTORIES", s2.ws.parent().unwrap())
        .output()
        .unwrap();
    assert!(
        !o.status.success(),
        "the placeholder .git is taken for a repository"
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

/// R-P3: `.git/commondir` (missing in an ordinary repository) cannot be created to point
/// git at a directory with planted hooks/config, while git keeps working inside and no
/// placeholder left behind says `.` (git keeps working on the host). Fails if commondir
/// gets no placeholder (the write succeeds) or an empty one (git fails).
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
    assert_eq!(
        std::fs::read_to_string(s.ws.join(".git/commondir")).unwrap(),
        ".\n"
    );
    let o = Command::new("git")
        .args(["status", "--short"])
        .current_dir(&s.ws)
        .output()
        .unwrap();
    assert!(o.status.success(), "host git after the run");
}

/// Issue 7 item 2: protected names that are symlinks (`.git/hooks -> ../hk`,
/// `.git/config -> ../gitcfg`, `.cordon -> cordon-real`) are pinned — they cannot be
/// removed, renamed or replaced — and their targets stay read-only; git keeps working.
/// Fails without the `PinLink` steps (`rm .git/hooks && mkdir .git/hooks` plants a hook).
#[test]
fn symlinked_protected_names_are_pinned() {
    if !require_full() {
        return;
    }
    let s = with_git_env(Sandbox::new());
    repo(&s.ws);
    let ws = &s.ws;
    std::fs::rename(ws.join(".git/hooks"), ws.join("hk")).unwrap();
    std::os::unix::fs::symlink("../hk", ws.join(".git/hooks")).unwrap();
    std::fs::rename(ws.join(".git/config"), ws.join("gitcfg")).unwrap();
    std::os::unix::fs::symlink("../gitcfg", ws.join(".git/config")).unwrap();
    std::fs::create_dir(ws.join("cordon-real")).unwrap();
    std::os::unix::fs::symlink("cordon-real", ws.join(".cordon")).unwrap();
    let cfg_before = std::fs::read_to_string(ws.join("gitcfg")).unwrap();
    let o = s.sh(
        "rm -f .git/hooks 2>/dev/null; mkdir .git/hooks 2>/dev/null; \
         echo x > .git/hooks/pre-commit 2>/dev/null && echo PLANTED hook; \
         mv .git/hooks .git/h2 2>/dev/null && echo PLANTED moved-hooks; \
         ln -sfn /tmp .git/hooks 2>/dev/null && echo PLANTED relinked; \
         mv .git/config .git/c2 2>/dev/null && echo PLANTED moved-config; \
         echo '[core]' >> .git/config 2>/dev/null && echo PLANTED config; \
         echo x > hk/pre-commit 2>/dev/null && echo PLANTED hook-target; \
         rm -f .cordon 2>/dev/null; mkdir .cordon 2>/dev/null && echo PLANTED cordon; \
         echo x > cordon-real/x 2>/dev/null && echo PLANTED cordon-target; \
         echo c > c.txt && git add c.txt && git commit -qm c && echo GIT_OK",
    );
    assert_ok(&o);
    let out = stdout(&o);
    assert!(!out.contains("PLANTED"), "{out}");
    assert!(out.contains("GIT_OK"), "{out}{}", stderr(&o));
    for (name, target) in [(".git/hooks", "../hk"), (".git/config", "../gitcfg")] {
        assert_eq!(
            std::fs::read_link(ws.join(name)).unwrap(),
            Path::new(target),
            "{name}"
        );
    }
    assert!(std::fs::symlink_metadata(ws.join(".cordon"))
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(
        std::fs::read_to_string(ws.join("gitcfg")).unwrap(),
        cfg_before
    );
    assert!(!ws.join("hk/pre-commit").exists());
}

/// Sibling: a symlinked ancestor of the protected paths (`.git -> gd`, the git dir inside
/// the workspace) is pinned too: `rm .git && mkdir -p .git/hooks` cannot plant hooks.
#[test]
fn symlinked_git_dir_name_is_pinned() {
    if !require_full() {
        return;
    }
    let s = with_git_env(Sandbox::new());
    repo(&s.ws);
    std::fs::rename(s.ws.join(".git"), s.ws.join("gd")).unwrap();
    std::os::unix::fs::symlink("gd", s.ws.join(".git")).unwrap();
    let o = s.sh(
        "rm -f .git 2>/dev/null; mv .git g2 2>/dev/null && echo PLANTED moved; \
         mkdir -p .git/hooks 2>/dev/null; echo x > .git/hooks/pre-commit 2>/dev/null \
         && echo PLANTED hook; echo c > c.txt && git add c.txt && git commit -qm c && echo GIT_OK",
    );
    assert_ok(&o);
    assert!(!stdout(&o).contains("PLANTED"), "{}", stdout(&o));
    assert!(stdout(&o).contains("GIT_OK"), "{}", stderr(&o));
    assert_eq!(
        std::fs::read_link(s.ws.join(".git")).unwrap(),
        Path::new("gd")
    );
    assert!(!s.ws.join("gd/hooks/pre-commit").exists());
}
