//! Issue 7 item 6: every git operation a confined command may run works in every common
//! layout — main repository under the host's `/tmp` or elsewhere × normal repository /
//! linked worktree / `.git` symlinked to a git dir elsewhere × commit, gc, pack-refs,
//! branch -D of a packed branch, stash, fetch from a local bare repository — and after
//! each, on the host, every branch, tag and object is intact (no operation that exits 0
//! loses data). Protected parts of the git dir stay read-only in every layout.
#![cfg(target_os = "linux")]

mod support;
use cordon_policy::Access;
use std::path::{Path, PathBuf};
use support::*;

fn git_out(dir: &Path, args: &[&str]) -> String {
    host_git(dir, args)
}

fn git(dir: &Path, args: &[&str]) {
    git_out(dir, args);
}

#[derive(Debug, Clone, Copy)]
enum Layout {
    Normal,
    Worktree,
    SymlinkedGitDir,
}

/// One prepared layout: the sandbox (its workspace is the worktree the command runs in),
/// the git dir holding refs and objects, and a bare repository to fetch from.
struct Case {
    s: Sandbox,
    common: PathBuf,
    bare: PathBuf,
}

/// A repository with `main` (2 commits), a packed branch `packed`, a loose branch `keep`
/// and a tag `t1`; laid out as `layout` with the git dir under `base`. A symlinked `.git`
/// makes nothing writable by itself (anyone inside a writable root can plant one), so that
/// layout's sandbox names the git dir explicitly, as its user would with `-w`.
fn setup(layout: Layout, base: &str) -> Case {
    let holder = tempdir_in(base);
    let hold = holder.path().canonicalize().unwrap();
    let bare_dir = outside_dir();
    let bare = bare_dir.path().canonicalize().unwrap().join("b.git");
    let s = Sandbox::in_base(base)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@t")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@t")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .keep(holder)
        .keep(bare_dir);
    let main = match layout {
        Layout::Normal => s.ws.clone(),
        Layout::Worktree | Layout::SymlinkedGitDir => hold.join("main"),
    };
    std::fs::create_dir_all(&main).unwrap();
    git(&main, &["init", "-q"]);
    write(&main.join("a.txt"), "a\n");
    git(&main, &["add", "."]);
    git(&main, &["commit", "-qm", "one"]);
    git(&main, &["branch", "packed"]);
    git(&main, &["tag", "t1"]);
    git(&main, &["pack-refs", "--all"]);
    write(&main.join("a.txt"), "b\n");
    git(&main, &["commit", "-qam", "two"]);
    git(&main, &["branch", "keep"]);
    git(
        &hold,
        &[
            "clone",
            "-q",
            "--bare",
            main.to_str().unwrap(),
            bare.to_str().unwrap(),
        ],
    );
    git(&bare, &["branch", "from-bare", "main~1"]);
    let common = match layout {
        Layout::Normal => main.join(".git"),
        Layout::Worktree => {
            std::fs::remove_dir(&s.ws).unwrap();
            git(
                &main,
                &["worktree", "add", "-q", "-b", "wt", s.ws.to_str().unwrap()],
            );
            main.join(".git")
        }
        Layout::SymlinkedGitDir => {
            // The repo-tool layout: the working files here, the git dir elsewhere.
            let gd = hold.join("gitdirs/p.git");
            std::fs::create_dir_all(gd.parent().unwrap()).unwrap();
            std::fs::rename(main.join(".git"), &gd).unwrap();
            std::os::unix::fs::symlink(&gd, s.ws.join(".git")).unwrap();
            write(&s.ws.join("a.txt"), "b\n");
            gd
        }
    };
    let s = match layout {
        Layout::SymlinkedGitDir => s.grant(&common, Access::Write),
        _ => s,
    };
    Case { s, common, bare }
}

/// Host-side integrity: every ref named in `want` resolves, and the object store is whole.
fn intact(c: &Case, want: &[&str], what: &str) {
    let refs = git_out(&c.common, &["for-each-ref", "--format=%(refname)"]);
    for r in want {
        assert!(
            refs.lines().any(|l| l == *r),
            "{what}: {r} lost; refs now:\n{refs}"
        );
    }
    git(&c.common, &["fsck", "--no-progress", "--no-dangling"]);
}

const BASE_REFS: &[&str] = &["refs/heads/main", "refs/heads/keep", "refs/tags/t1"];

fn ops(c: &Case) -> Vec<(&'static str, String, Vec<&'static str>)> {
    vec![
        (
            "commit",
            "echo c >> a.txt && git commit -qam c".into(),
            vec!["refs/heads/packed"],
        ),
        ("gc", "git gc -q".into(), vec!["refs/heads/packed"]),
        (
            "pack-refs",
            "git pack-refs --all".into(),
            vec!["refs/heads/packed"],
        ),
        ("branch -D", "git branch -D packed".into(), vec![]),
        (
            "stash",
            "echo s >> a.txt && git stash -q && git stash list | grep -q .".into(),
            vec!["refs/heads/packed", "refs/stash"],
        ),
        (
            "fetch",
            format!(
                "git fetch -q {} from-bare:refs/remotes/b/from-bare",
                q(&c.bare)
            ),
            vec!["refs/heads/packed", "refs/remotes/b/from-bare"],
        ),
    ]
}

fn matrix(base: &str) {
    for layout in [Layout::Normal, Layout::Worktree, Layout::SymlinkedGitDir] {
        let n = ops(&setup(layout, base)).len();
        for i in 0..n {
            let c = setup(layout, base);
            let (name, script, extra) = ops(&c).swap_remove(i);
            let what = format!("{layout:?} under {base}: {name}");
            let o = c.s.sh(&script);
            assert!(
                o.status.success(),
                "{what} failed: {}\n{}",
                stdout(&o),
                stderr(&o)
            );
            let mut want: Vec<&str> = BASE_REFS.to_vec();
            want.extend(extra);
            intact(&c, &want, &what);
            if name == "branch -D" {
                let refs = git_out(&c.common, &["for-each-ref", "--format=%(refname)"]);
                assert!(!refs.contains("refs/heads/packed"), "{what}: not deleted");
            }
        }
        // Protected parts of the git dir stay read-only in every layout.
        let c = setup(layout, base);
        let o = c.s.sh(&format!(
            "printf '#!/bin/sh\\necho pwned\\n' > {h}/pre-commit; echo '[alias]' >> {cfg}; exit 0",
            h = q(&c.common.join("hooks")),
            cfg = q(&c.common.join("config")),
        ));
        assert_ok(&o);
        assert!(
            !c.common.join("hooks/pre-commit").exists(),
            "{layout:?} {base}: hook planted"
        );
        assert!(
            !std::fs::read_to_string(c.common.join("config"))
                .unwrap()
                .contains("[alias]"),
            "{layout:?} {base}: config changed"
        );
        // The `.git` name itself cannot be replaced by a new repository with hooks.
        let o = c.s.sh(
            "rm -rf .git 2>/dev/null; mv .git g2 2>/dev/null; mkdir -p .git/hooks 2>/dev/null; \
             echo x > .git/hooks/pre-commit 2>/dev/null; exit 0",
        );
        assert_ok(&o);
        let dotgit = c.s.ws.join(".git");
        let meta = std::fs::symlink_metadata(&dotgit).unwrap();
        let kept = match layout {
            Layout::SymlinkedGitDir => meta.file_type().is_symlink(),
            Layout::Worktree => meta.is_file(),
            Layout::Normal => meta.is_dir(),
        };
        assert!(kept, "{layout:?} {base}: .git replaced");
        assert!(
            !c.common.join("hooks/pre-commit").exists(),
            "{layout:?} {base}: hook planted"
        );
    }
}

#[test]
fn git_operations_work_and_lose_nothing_with_the_repo_under_tmp() {
    if !require(&[
        Need::Userns,
        Need::Landlock(1),
        Need::Seccomp,
        Need::Tool("git"),
    ]) {
        return;
    }
    matrix("/tmp");
}

#[test]
fn git_operations_work_and_lose_nothing_with_the_repo_elsewhere() {
    if !require(&[
        Need::Userns,
        Need::Landlock(1),
        Need::Seccomp,
        Need::Tool("git"),
    ]) {
        return;
    }
    matrix(OUTSIDE_BASE);
}
