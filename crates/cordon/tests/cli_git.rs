//! End-to-end checks of issue 7 items 4 and 9 and issue 8 §6 through the `cordon` binary:
//! what `run`, `--dry-run`, `--json` and `explain` say agree.

use std::process::{Command, Output, Stdio};

mod support;
use support::{text, Project, CORDON};

fn project() -> Project {
    let p = Project::new("cordon-cli-git-");
    std::fs::create_dir_all(p.dir.join("sub")).unwrap();
    p
}

fn cordon(p: &Project, cwd: &std::path::Path, args: &[&str]) -> Output {
    p.cordon_in(cwd, args).output().unwrap()
}

/// `git init -q` in `dir`.
fn git_init(dir: &std::path::Path) {
    let st = Command::new("git")
        .args(["init", "-q"])
        .current_dir(dir)
        .status()
        .unwrap();
    assert!(st.success(), "git init in {}", dir.display());
}

/// `git commit --allow-empty` in `dir`, as a fixed author.
fn commit_empty(dir: &std::path::Path) {
    let st = Command::new("git")
        .args(["-c", "user.email=a@b", "-c", "user.name=a", "commit", "-q"])
        .args(["--allow-empty", "-m", "i"])
        .current_dir(dir)
        .status()
        .unwrap();
    assert!(st.success(), "git commit in {}", dir.display());
}

/// `cordon run --json -- sh -c SCRIPT` in `dir`, which must exit 0: its report.
fn json_run(p: &Project, dir: &std::path::Path, script: &str) -> serde_json::Value {
    let o = cordon(p, dir, &["run", "--json", "--", "sh", "-c", script]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    serde_json::from_str(text(&o.stderr).lines().last().unwrap()).unwrap()
}

fn sandbox_available(_: &Project) -> bool {
    support::sandbox_available()
}

/// Breaker (stop 21): a project under `/dev/shm`, which the sandbox rebuilds empty for
/// every command: `--dry-run` said it would run (exit 0) and the run failed entering the
/// directory. Now `run`, `--dry-run` and `explain` all refuse up front with the reason and
/// what to do; the same project elsewhere runs (twin).
#[test]
fn a_project_in_dev_shm_is_refused_identically_in_dry_run() {
    if !std::path::Path::new("/dev/shm").is_dir() {
        return;
    }
    let p = project();
    let shm = tempfile::Builder::new()
        .prefix("cordon-shm-")
        .tempdir_in("/dev/shm")
        .unwrap();
    let st = Command::new("git")
        .args(["init", "-q"])
        .current_dir(shm.path())
        .status()
        .unwrap();
    assert!(st.success());
    for args in [
        &["run", "--", "true"][..],
        &["run", "--dry-run", "--", "true"][..],
        &["explain"][..],
    ] {
        let o = cordon(&p, shm.path(), args);
        assert_eq!(o.status.code(), Some(125), "{args:?}: {}", text(&o.stderr));
        let err = text(&o.stderr);
        assert!(
            err.contains("inside /dev/shm, which the sandbox rebuilds"),
            "{args:?}: {err}"
        );
    }
    let o = cordon(&p, &p.dir, &["run", "--dry-run", "--", "true"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
}

/// Issue 8 §6: `--deny-read ..` from a subdirectory hides the cwd: `run` and `--dry-run`
/// both refuse up front with exit 125 and the reason (not "No such file or directory").
#[test]
fn deny_read_of_the_cwd_is_refused_identically_in_dry_run() {
    let p = project();
    let sub = p.dir.join("sub");
    for args in [
        &["run", "--deny-read", "..", "--", "pwd"][..],
        &["run", "--dry-run", "--deny-read", "..", "--", "pwd"][..],
    ] {
        let o = cordon(&p, &sub, args);
        assert_eq!(o.status.code(), Some(125), "{args:?}: {}", text(&o.stderr));
        let err = text(&o.stderr);
        assert!(
            err.contains("hides the working directory"),
            "{args:?}: {err}"
        );
        assert!(!err.contains("No such file"), "{args:?}: {err}");
    }
    // Still works: denying a sibling.
    let o = cordon(&p, &sub, &["run", "--deny-read", "../other", "--", "pwd"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
}

/// Issue 7 item 4: a configured deny path that does not exist is reported in `--json` and
/// in `explain`.
#[test]
fn missing_deny_path_is_reported_in_json_and_explain() {
    let p = project();
    if !sandbox_available(&p) {
        return;
    }
    let o = cordon(
        &p,
        &p.dir,
        &["run", "--json", "--deny-read", "conf/keys", "--", "true"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let err = text(&o.stderr);
    let line = err.lines().last().unwrap_or_default();
    let v: serde_json::Value = serde_json::from_str(line).expect("--json report");
    let notes = v["resolution_notes"].to_string();
    assert!(
        notes.contains("conf/keys") && notes.contains("does not exist"),
        "{notes}"
    );
    let o = cordon(
        &p,
        &p.dir,
        &["explain", "--deny-read", "conf/keys", "conf/keys"],
    );
    let out = text(&o.stdout);
    assert!(out.contains("does not exist"), "{out}");
    // Nothing there, so no stand-in is shown either (new-user pass 187 #3).
    assert!(
        out.contains("denied (cannot be read or written); not there now (below)")
            && !out.contains("stand-in"),
        "{out}"
    );
}

/// Issue 7 item 9: `TMPDIR=<ws>/.git/hooks` does not open the hooks: the command gets
/// `TMPDIR=/tmp`, a note says why, and nothing lands in the hooks directory.
#[test]
fn refused_tmpdir_points_the_command_at_tmp() {
    let p = project();
    if !sandbox_available(&p) {
        return;
    }
    let hooks = p.dir.join(".git/hooks");
    let o = Command::new(CORDON)
        .args([
            "run",
            "--json",
            "--",
            "sh",
            "-c",
            "echo \"$TMPDIR\"; echo x > \"$TMPDIR/planted\"",
        ])
        .current_dir(&p.dir)
        .env("HOME", &p.home)
        .env("TMPDIR", &hooks)
        .env_remove("CORDON_DISABLE_LAYERS")
        .env_remove("CORDON_PROFILE")
        .env_remove("CORDON_CONFIG")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(text(&o.stdout).trim(), "/tmp");
    assert!(!hooks.join("planted").exists());
    assert!(text(&o.stderr).contains("$TMPDIR"), "{}", text(&o.stderr));
}

/// Security finding (fake linked worktree): run 1 plants a "common dir" `fr/` whose
/// `refs`/`objects` (or `logs`) are symlinks to another repository's hooks and to `$HOME`,
/// plus a `.git` file and backlink making `sub/` look like its linked worktree. Run 2 from
/// `sub/` must grant nothing derived from it: `fr/`, its worktree dir, the victim's hooks
/// and the home stay read-only, in explain and in the sandbox, with a note saying why.
#[test]
fn planted_linked_worktree_with_symlinked_common_children_grants_nothing() {
    for sibling in [
        "ln -s \"$V\" fr/refs; ln -s \"$HOME\" fr/objects",
        "mkdir fr/refs fr/objects; ln -s \"$HOME\" fr/logs",
    ] {
        let p = project();
        if !sandbox_available(&p) {
            return;
        }
        let victim = p.dir.parent().unwrap().join("victim");
        std::fs::create_dir_all(victim.join(".git/hooks")).unwrap();
        let plant = format!(
            "V='{}'; mkdir -p sub fr/worktrees/wt; echo \"gitdir: $PWD/fr/worktrees/wt\" > sub/.git; \
             echo \"$PWD/sub/.git\" > fr/worktrees/wt/gitdir; echo ../.. > fr/worktrees/wt/commondir; \
             echo 'ref: refs/heads/master' > fr/worktrees/wt/HEAD; echo 'ref: refs/heads/master' > fr/HEAD; {sibling}",
            victim.join(".git/hooks").display()
        );
        let o = cordon(&p, &p.dir, &["run", "--", "sh", "-c", &plant]);
        assert!(o.status.success(), "{}", text(&o.stderr));
        let sub = p.dir.join("sub");
        let fr = p.dir.join("fr");
        let hooks = victim.join(".git/hooks");
        let o = cordon(
            &p,
            &sub,
            &[
                "explain",
                fr.to_str().unwrap(),
                hooks.to_str().unwrap(),
                p.home.to_str().unwrap(),
            ],
        );
        let out = text(&o.stdout);
        assert!(!out.contains(": writable"), "{out}");
        let probe = format!(
            "for d in '{}' '{}' '{}' '{}'; do touch \"$d/pwn\" 2>/dev/null && echo WROTE $d; done; true",
            fr.display(),
            fr.join("worktrees/wt").display(),
            hooks.display(),
            p.home.display()
        );
        let o = cordon(&p, &sub, &["run", "--", "sh", "-c", &probe]);
        assert!(o.status.success(), "{}", text(&o.stderr));
        assert!(!text(&o.stdout).contains("WROTE"), "{}", text(&o.stdout));
        for d in [&fr, &hooks, &p.home] {
            assert!(!d.join("pwn").exists(), "{} written", d.display());
        }
    }
}

/// Security finding 2: a run leaves `git status` clean. The placeholders cordon leaves
/// are empty directories git ignores (inside `.git`: `remotes/`, `branches/`, …), and a
/// repository root gets no `.cordon/` placeholder at all (stop 19: it made `git clean -fd`
/// fail).
#[test]
fn placeholders_leave_git_status_clean() {
    let p = project();
    if !sandbox_available(&p) {
        return;
    }
    let o = cordon(&p, &p.dir, &["run", "--", "true"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(
        p.dir.join(".git/remotes").is_dir(),
        "no placeholder was made"
    );
    assert!(
        !p.dir.join(".cordon").exists(),
        "a .cordon/ placeholder in a repository root"
    );
    let o = Command::new("git")
        .args(["status", "--porcelain", "--untracked-files=all"])
        .current_dir(&p.dir)
        .output()
        .unwrap();
    assert_eq!(text(&o.stdout), "", "git status is not clean");
    // A second run from a subdirectory keeps the repository as its workspace.
    let o = cordon(&p, &p.dir.join("sub"), &["run", "--", "true"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
}

/// Security finding 3: `cordon status` warns (text and `--json`) while the user's git
/// configuration does not set `safe.bareRepository = explicit`, and stops once it does.
#[test]
fn status_warns_until_safe_bare_repository_is_explicit() {
    let p = project();
    let warned = |p: &Project| {
        let o = cordon(p, &p.dir, &["status"]);
        let t = text(&o.stdout).contains("safe.bareRepository");
        let o = cordon(p, &p.dir, &["status", "--json"]);
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("status --json");
        let j = v["warnings"].to_string().contains("safe.bareRepository");
        assert_eq!(t, j, "text and --json disagree");
        t
    };
    let sys_sets_it = std::fs::read_to_string("/etc/gitconfig")
        .is_ok_and(|s| s.to_ascii_lowercase().contains("barerepository"));
    if !sys_sets_it {
        assert!(warned(&p), "no warning without safe.bareRepository");
    }
    std::fs::write(
        p.home.join(".gitconfig"),
        "[safe]\n\tbareRepository = explicit\n",
    )
    .unwrap();
    assert!(
        !warned(&p),
        "warning although safe.bareRepository = explicit"
    );
}

/// Breaker finding (stop 8): run 1 plants `sub/.git -> <another repository>/.git`; run 2
/// in `sub` had that repository's refs and objects writable. The link alone grants
/// nothing now; `git status` in `sub` still works (read-only git dir).
#[test]
fn planted_dotgit_symlink_does_not_open_another_repository() {
    if !support::sandbox_available() {
        return;
    }
    let p = project();
    let victim = p.root.path().join("victim");
    std::fs::create_dir_all(&victim).unwrap();
    for args in [
        &["init", "-q"][..],
        &["commit", "-q", "--allow-empty", "-m", "one"][..],
    ] {
        let st = Command::new("git")
            .args(args)
            .current_dir(&victim)
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@t")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@t")
            .status()
            .unwrap();
        assert!(st.success());
    }
    let head_ref = victim.join(".git/refs/heads");
    let before: Vec<_> = std::fs::read_dir(&head_ref)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    let plant = format!(
        "mkdir -p sub3 && ln -s {} sub3/.git",
        victim.join(".git").display()
    );
    let o = cordon(&p, &p.dir, &["run", "--yes", "--", "sh", "-c", &plant]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let sub3 = p.dir.join("sub3");
    let o = cordon(
        &p,
        &sub3,
        &[
            "run",
            "--yes",
            "--",
            "sh",
            "-c",
            "git status >/dev/null && echo READ; echo x > .git/refs/heads/evil && echo WROTE",
        ],
    );
    let so = text(&o.stdout);
    assert!(so.contains("READ"), "{so}{}", text(&o.stderr));
    assert!(!so.contains("WROTE"), "{so}");
    let after: Vec<_> = std::fs::read_dir(&head_ref)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(before, after, "the other repository's refs changed");
    let o = cordon(
        &p,
        &sub3,
        &["explain", victim.join(".git/refs").to_str().unwrap()],
    );
    let said = text(&o.stdout);
    assert!(said.contains("victim/.git/refs: read-only"), "{said}");
}

/// Breaker MEDIUM-3: `TMPDIR=/dev/shm/<dir>` was reported writable but the command saw the
/// sandbox's private, empty `/dev/shm` (its `TMPDIR` named nothing: every temp file failed).
/// Now `$TMPDIR` is refused with a note and the command gets a working `/tmp`; `explain`
/// no longer lists it as writable, and a `--writable` grant there is refused with a reason.
#[test]
fn tmpdir_under_dev_shm_falls_back_to_tmp() {
    let p = project();
    if !sandbox_available(&p) {
        return;
    }
    let shm = tempfile::Builder::new()
        .prefix("cordon-shm-")
        .tempdir_in("/dev/shm")
        .unwrap();
    let cmd = |args: &[&str]| {
        let mut c = Command::new(CORDON);
        c.args(args)
            .current_dir(&p.dir)
            .env("HOME", &p.home)
            .env("TMPDIR", shm.path())
            .env_remove("CORDON_DISABLE_LAYERS")
            .env_remove("CORDON_PROFILE")
            .env_remove("CORDON_CONFIG")
            .stdin(Stdio::null());
        c.output().unwrap()
    };
    let o = cmd(&[
        "run",
        "--",
        "sh",
        "-c",
        "echo \"$TMPDIR\"; t=$(mktemp) && echo ok > \"$t\" && cat \"$t\"",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(text(&o.stdout), "/tmp\nok\n", "{}", text(&o.stderr));
    assert!(text(&o.stderr).contains("$TMPDIR"), "{}", text(&o.stderr));
    let shm_s = shm.path().display().to_string();
    let o = cmd(&["explain"]);
    let writable = text(&o.stdout)
        .lines()
        .find(|l| l.trim_start().starts_with("writable:"))
        .unwrap_or_default()
        .to_string();
    assert!(!writable.contains(&shm_s), "{}", text(&o.stdout));
    // A `--writable` grant there is a usage error naming why, not a grant dropped in
    // silence (breaker, stop 18).
    let o = cmd(&["explain", "--writable", &shm_s]);
    assert_ne!(o.status.code(), Some(0));
    assert!(
        text(&o.stderr).contains("/dev is rebuilt inside the sandbox"),
        "{}",
        text(&o.stderr)
    );
}

/// New-user pass nu15 N2: `-w /tmp` changed nothing (the sandbox's /tmp stays private)
/// and exited 0 with the command's files gone; it is a usage error naming what works.
/// Twin: a host file under /tmp granted by its own path is readable and writable.
#[test]
fn granting_tmp_itself_is_refused_and_a_path_under_it_works() {
    let p = project();
    if !sandbox_available(&p) {
        return;
    }
    let host = tempfile::Builder::new()
        .prefix("cordon-tmpgrant-")
        .tempdir_in("/tmp")
        .unwrap();
    let f = host.path().join("f.txt");
    std::fs::write(&f, "host\n").unwrap();
    let cmd = |args: &[&str]| {
        let mut c = Command::new(CORDON);
        c.args(args)
            .current_dir(&p.dir)
            .env("HOME", &p.home)
            .env_remove("CORDON_PROFILE")
            .env_remove("CORDON_CONFIG")
            .stdin(Stdio::null());
        c.output().unwrap()
    };
    let o = cmd(&["run", "-w", "/tmp", "--", "true"]);
    assert_eq!(o.status.code(), Some(125), "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains("/tmp is a private tmpfs"),
        "{}",
        text(&o.stderr)
    );
    let fs_ = f.display().to_string();
    let o = cmd(&["explain", &fs_]);
    assert!(
        text(&o.stdout).contains(&format!("-w {fs_}")),
        "{}",
        text(&o.stdout)
    );
    let o = cmd(&[
        "run",
        "-w",
        &fs_,
        "--",
        "sh",
        "-c",
        &format!("cat {fs_} && echo more >> {fs_}"),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(text(&o.stdout), "host\n");
    assert_eq!(std::fs::read_to_string(&f).unwrap(), "host\nmore\n");
    // nu16 N9: a grant under a top-level directory that does not exist (a typo) is a usage
    // error, nothing made; `-w /` is refused as the whole filesystem; a deeper missing
    // grant is made and said so.
    let top = format!("/cordon-nu16-typo-{}", std::process::id());
    let o = cmd(&["run", "-w", &format!("{top}/dir/x"), "--", "true"]);
    assert_eq!(o.status.code(), Some(125), "{}", text(&o.stderr));
    assert!(!std::path::Path::new(&top).exists());
    let o = cmd(&["run", "-w", "/", "--", "true"]);
    assert_eq!(o.status.code(), Some(125), "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains("the whole filesystem"),
        "{}",
        text(&o.stderr)
    );
    let deep = host.path().join("made/x");
    let o = cmd(&["run", "-w", deep.to_str().unwrap(), "--", "true"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(deep.is_dir());
    // Each directory made is named (new-user pass 180, #4: only `made` was).
    assert!(
        text(&o.stderr).contains(&format!(
            "note: created the directories {} through {}",
            host.path().join("made").display(),
            deep.display()
        )),
        "{}",
        text(&o.stderr)
    );
    // The same inside the workspace (new-user pass, stop 40): `-w WS/build/out` was neither
    // made nor said, and the command's `touch build/out/x` failed.
    let inside = p.dir.join("build/out");
    let o = cmd(&[
        "run",
        "-w",
        inside.to_str().unwrap(),
        "--",
        "touch",
        "build/out/x",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(inside.join("x").is_file());
    assert!(
        text(&o.stderr).contains("note: created"),
        "{}",
        text(&o.stderr)
    );
    // Never a marker made by cordon inside a writable root (new-user pass 182 #4: `-w
    // .git/hooks` from a subdirectory made a repository, then blamed on the command; attack
    // pass 181 F6: `-w sub/.cordon/x`). The command may make them itself.
    std::fs::create_dir_all(p.dir.join("sub/deep")).unwrap();
    for marker in [".cordon/x", ".git/hooks"] {
        let grant = p.dir.join("sub/deep").join(marker);
        let o = cmd(&["run", "-w", grant.to_str().unwrap(), "--", "true"]);
        assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
        let made: Vec<_> = std::fs::read_dir(p.dir.join("sub/deep"))
            .unwrap()
            .flatten()
            .map(|e| e.file_name())
            .collect();
        assert!(made.is_empty(), "{marker}: {made:?} {}", text(&o.stderr));
    }
    // Twin: `:tmp/…` is the sandbox's own /tmp, never made on the host.
    let name = format!("cordon-tmpgrant-{}", std::process::id());
    let o = cmd(&["run", "-w", &format!(":tmp/{name}"), "--", "true"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(!std::path::Path::new("/tmp").join(&name).exists());
}

/// New-user pass 211, #5: a config file's writable entry for a missing directory inside
/// the workspace said "writable" in `explain` and was not made, so the command found
/// nothing there (`-w` for the same path was made). Now both are made and said; twin: a
/// built-in profile's entries make nothing, and a read-only entry is never made.
#[test]
fn a_config_entry_for_a_missing_directory_is_made_like_a_flag() {
    if !support::sandbox_available() {
        return;
    }
    let p = project();
    let cfg = p.home.join(".config/cordon");
    std::fs::create_dir_all(&cfg).unwrap();
    std::fs::write(
        cfg.join("config.toml"),
        "default_profile = \"dev\"\n[profiles.dev]\nextends = \"workspace-write\"\n\
         [[profiles.dev.filesystem.entries]]\npath = \"made/by/config\"\naccess = \"write\"\n\
         [[profiles.dev.filesystem.entries]]\npath = \"read/only\"\naccess = \"read\"\n",
    )
    .unwrap();
    let o = cordon(&p, &p.dir, &["run", "--", "touch", "made/by/config/x"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(p.dir.join("made/by/config/x").is_file());
    assert!(
        text(&o.stderr).contains("note: created the directories"),
        "{}",
        text(&o.stderr)
    );
    assert!(!p.dir.join("read").exists(), "a read entry made nothing");
}

/// Attack pass 210 #6: `explain` said "writable" on the line of a hard-linked file the
/// sandbox refuses to write in place (the note saying so came eleven lines later): the
/// path's own line says it, and `--json` carries `hard_links`. Twin: a file with one name
/// is plainly writable, with no `hard_links`.
#[test]
fn explain_says_a_hard_linked_file_is_not_written_in_place_on_its_line() {
    let p = project();
    let outside = p.home.join("store.js");
    std::fs::write(&outside, "x").unwrap();
    std::fs::hard_link(&outside, p.dir.join("hl.js")).unwrap();
    std::fs::write(p.dir.join("one.js"), "x").unwrap();
    let o = cordon(&p, &p.dir, &["explain", "hl.js", "one.js"]);
    let out = text(&o.stdout);
    let line = |name: &str| {
        out.lines()
            .find(|l| l.contains(name) && !l.starts_with("note"))
            .unwrap_or_default()
            .to_string()
    };
    assert!(line("hl.js").contains("not in place"), "{out}");
    assert!(line("one.js").ends_with(": writable"), "{out}");
    let o = cordon(&p, &p.dir, &["explain", "--json", "hl.js", "one.js"]);
    let v: serde_json::Value = serde_json::from_str(&text(&o.stdout)).unwrap();
    assert_eq!(v["paths"][0]["hard_links"], 2, "{v}");
    assert!(v["paths"][1].get("hard_links").is_none(), "{v}");
}

/// New-user pass nu9, F20: `git commit` inside a submodule failed (its git dir
/// `<super>/.git/modules/<name>` was read-only). It works now; escape twins in the same run:
/// the submodule's hooks and config stay read-only, and the superproject's own git dir
/// too; on the host the commit is there and `git status` works.
#[test]
fn a_commit_inside_a_submodule_works_and_its_hooks_stay_protected() {
    if !support::sandbox_available() {
        return;
    }
    let p = project();
    let git = |dir: &std::path::Path, args: &[&str]| {
        let o = Command::new("git")
            .args(["-c", "protocol.file.allow=always"])
            .args(args)
            .current_dir(dir)
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@example.invalid")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@example.invalid")
            .stderr(Stdio::piped())
            .output()
            .unwrap();
        assert!(o.status.success(), "git {args:?}: {}", text(&o.stderr));
        text(&o.stdout)
    };
    let lib = p.root.path().join("lib");
    std::fs::create_dir_all(&lib).unwrap();
    git(&lib, &["init", "-q"]);
    git(&lib, &["commit", "-q", "--allow-empty", "-m", "lib"]);
    git(&p.dir, &["commit", "-q", "--allow-empty", "-m", "super"]);
    git(
        &p.dir,
        &["submodule", "add", "-q", lib.to_str().unwrap(), "lib"],
    );
    git(&p.dir, &["commit", "-q", "-m", "add lib"]);
    let sub = p.dir.join("lib");
    let modules = p.dir.join(".git/modules/lib");
    let script = format!(
        "echo x > f && git add f && git commit -qm inside && echo COMMITTED; \
         echo evil > {m}/hooks/post-commit && echo HOOK_WRITTEN; \
         echo '[core]' >> {m}/config && echo CONFIG_WRITTEN; \
         touch {s}/.git/index.lock && echo SUPER_WRITTEN; true",
        m = modules.display(),
        s = p.dir.display()
    );
    let o = cordon(&p, &sub, &["run", "--yes", "--", "sh", "-c", &script]);
    let out = text(&o.stdout);
    assert!(out.contains("COMMITTED"), "{out}{}", text(&o.stderr));
    for leak in ["HOOK_WRITTEN", "CONFIG_WRITTEN", "SUPER_WRITTEN"] {
        assert!(!out.contains(leak), "{leak}: {out}");
    }
    assert!(!modules.join("hooks/post-commit").exists());
    assert_eq!(git(&sub, &["log", "-1", "--format=%s"]).trim(), "inside");
    // Again: the placeholders the first run left (a `commondir` saying `.`) do not take
    // the grant away (attack pass 27, G1: every later commit failed).
    let o = cordon(
        &p,
        &sub,
        &[
            "run",
            "--",
            "sh",
            "-c",
            "echo y > g && git add g && git commit -qm again",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(git(&sub, &["log", "-1", "--format=%s"]).trim(), "again");
    git(&p.dir, &["status", "--short"]);
}

/// Attack pass 26, F9: with `$XDG_CONFIG_HOME` unset (the usual case) git reads
/// `~/.config/git/config`; in a dotfiles repository at `~/.config` a command created it and
/// the host's next git ran its alias. It is protected (a placeholder when missing) like
/// `$XDG_CONFIG_HOME/git/config`; twin: the rest of the repository stays writable.
#[test]
fn gits_default_global_config_in_a_writable_root_is_protected() {
    if !support::sandbox_available() {
        return;
    }
    let p = project();
    let dotfiles = p.home.join(".config");
    std::fs::create_dir_all(&dotfiles).unwrap();
    git_init(&dotfiles);
    let o = p
        .cordon_in(
            &dotfiles,
            &[
                "run",
                "--",
                "sh",
                "-c",
                "mkdir -p git; printf '[alias]\\n\\tst = !touch planted\\n' > git/config && \
                 echo CONFIG_WRITTEN; echo a > git/attributes && echo ATTR_WRITTEN; \
                 echo ok > other && echo OTHER_OK",
            ],
        )
        .env_remove("XDG_CONFIG_HOME")
        .output()
        .unwrap();
    let out = text(&o.stdout);
    assert!(out.contains("OTHER_OK"), "{out}{}", text(&o.stderr));
    assert!(!out.contains("CONFIG_WRITTEN"), "{out}");
    assert!(!out.contains("ATTR_WRITTEN"), "{out}");
    assert_eq!(
        std::fs::read_to_string(dotfiles.join("git/config")).unwrap_or_default(),
        ""
    );
}

/// Attack pass 26, F6 and F4: a hard link an earlier run made before a file was protected
/// (a hook's script in the work tree) or denied (`.env`) let the next run write or read it
/// through the other name, which no mount covers. With init's hard-link check (rung 1 with
/// denial records) the run starts and a write through the other name is refused (new-user
/// pass nu28, F1/F7: after `cp -al` every run was refused); without it the run is refused
/// naming the file and how to find the other names, in `--dry-run` as in the run. A denied
/// file with a second name is refused either way (the check does not judge reads). Twin:
/// with the extra link removed the same run works and the cover holds.
#[test]
fn a_covered_file_with_another_hard_link_is_refused() {
    if !support::sandbox_available() || !support::denial_records_available() {
        return;
    }
    let p = project();
    std::fs::create_dir_all(p.dir.join("scripts")).unwrap();
    std::fs::create_dir_all(p.dir.join("docs")).unwrap();
    std::fs::write(p.dir.join("scripts/hook.sh"), "#!/bin/sh\necho benign\n").unwrap();
    // The earlier run's link, made while nothing protected the script.
    let o = cordon(
        &p,
        &p.dir,
        &["run", "--", "ln", "scripts/hook.sh", "docs/notes.txt"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    // The user installs the hook on the host: the script is now protected.
    std::os::unix::fs::symlink("../../scripts/hook.sh", p.dir.join(".git/hooks/pre-commit"))
        .unwrap();
    let write = ["run", "--", "sh", "-c", "echo evil > docs/notes.txt"];
    // Judged: the run starts, the write through the other name is refused.
    let o = cordon(
        &p,
        &p.dir,
        &[
            "run",
            "--json",
            "--",
            "sh",
            "-c",
            "echo evil > docs/notes.txt",
        ],
    );
    assert_ne!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let v = support::last_json(&o.stderr);
    assert_eq!(v["outcome"], "sandbox-denied", "{v}");
    assert!(
        v["denials"]["records"][0]["rule"]
            .as_str()
            .is_some_and(|r| r.starts_with("a hard link")),
        "{v}"
    );
    let o = cordon(&p, &p.dir, &["run", "--dry-run", "--", "true"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    // Not judged (the supervisor switched off): a state of the workspace to fix, not a
    // missing sandbox: the message names the file and how to fix it and never offers
    // `--allow-unconfined`, which does not override it either (running with no sandbox at
    // all is no answer to one uncovered file).
    let off = |args: &[&str]| {
        let mut c = p.cordon_in(&p.dir, args);
        c.env("CORDON_DISABLE_LAYERS", "denial-records");
        c.output().unwrap()
    };
    let unconfined = [
        "run",
        "--allow-unconfined",
        "--",
        "sh",
        "-c",
        "echo evil > docs/notes.txt",
    ];
    for args in [
        &write[..],
        &["run", "--dry-run", "--", "true"][..],
        &unconfined[..],
    ] {
        let o = off(args);
        assert_eq!(o.status.code(), Some(125), "{args:?}: {}", text(&o.stderr));
        let err = text(&o.stderr);
        assert!(err.contains("scripts/hook.sh has 2 hard links"), "{err}");
        assert!(err.contains("-samefile"), "{err}");
        assert!(err.contains("refusing to run: "), "{err}");
        assert!(!err.contains("allow-unconfined"), "{err}");
        assert!(!err.contains("without a sandbox"), "{err}");
    }
    assert_eq!(
        std::fs::read_to_string(p.dir.join("scripts/hook.sh")).unwrap(),
        "#!/bin/sh\necho benign\n"
    );
    std::fs::remove_file(p.dir.join("docs/notes.txt")).unwrap();
    let o = cordon(
        &p,
        &p.dir,
        &[
            "run",
            "--",
            "sh",
            "-c",
            "echo evil > scripts/hook.sh; echo ran",
        ],
    );
    assert_eq!(text(&o.stdout), "ran\n", "{}", text(&o.stderr));
    assert_eq!(
        std::fs::read_to_string(p.dir.join("scripts/hook.sh")).unwrap(),
        "#!/bin/sh\necho benign\n"
    );
    // F4: a denied file with a second name in the workspace.
    std::fs::write(p.dir.join("public.txt"), "API_SECRET=1\n").unwrap();
    std::fs::hard_link(p.dir.join("public.txt"), p.dir.join(".env")).unwrap();
    let o = cordon(
        &p,
        &p.dir,
        &["run", "--deny-read", ".env", "--", "cat", "public.txt"],
    );
    assert_eq!(o.status.code(), Some(125), "{}", text(&o.stderr));
    assert!(!text(&o.stdout).contains("API_SECRET"));
    assert!(
        text(&o.stderr).contains(".env has 2 hard links"),
        "{}",
        text(&o.stderr)
    );
}

/// Attack pass 26, F14: the global `core.hooksPath` is a repository of its own (hooks kept
/// in git) and the workspace: a command wrote `pre-commit` there and every host repository
/// ran it. The run is refused naming the key and file; twin: the same directory without
/// that setting is an ordinary workspace.
#[test]
fn a_workspace_that_is_the_global_hooks_directory_is_refused() {
    if !support::sandbox_available() {
        return;
    }
    let p = project();
    let hooks = p.home.join(".githooks");
    std::fs::create_dir_all(&hooks).unwrap();
    git_init(&hooks);
    let write = [
        "run",
        "--",
        "sh",
        "-c",
        "echo '#!/bin/sh' > pre-commit && echo WROTE",
    ];
    let o = cordon(&p, &hooks, &write);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    std::fs::remove_file(hooks.join("pre-commit")).unwrap();
    std::fs::write(
        p.home.join(".gitconfig"),
        format!("[core]\n\thooksPath = {}\n", hooks.display()),
    )
    .unwrap();
    let o = cordon(&p, &hooks, &write);
    assert_eq!(o.status.code(), Some(125), "{}", text(&o.stderr));
    assert!(!text(&o.stdout).contains("WROTE"));
    assert!(!hooks.join("pre-commit").exists());
    let err = text(&o.stderr);
    assert!(
        err.contains("core.hooksPath") && err.contains(".gitconfig"),
        "{err}"
    );
    // G7 (attack pass 27): a root inside the template directory (its `hooks/`, copied into
    // every new repository) is refused too.
    let tmpl_hooks = p.home.join("tmpl/hooks");
    std::fs::create_dir_all(&tmpl_hooks).unwrap();
    git_init(&tmpl_hooks);
    std::fs::write(
        p.home.join(".gitconfig"),
        format!(
            "[init]\n\ttemplateDir = {}\n",
            p.home.join("tmpl").display()
        ),
    )
    .unwrap();
    let o = cordon(&p, &tmpl_hooks, &write);
    assert_eq!(o.status.code(), Some(125), "{}", text(&o.stderr));
    let err = text(&o.stderr);
    assert!(
        err.contains("lies inside git's template directory"),
        "{err}"
    );
    assert!(!tmpl_hooks.join("pre-commit").exists());
}

/// Attack pass 26, F7: a cargo git checkout (`~/.cargo/git/checkouts/<dep>/<rev>`, a clone
/// with its own `.git`) as the cwd made the host cache the writable workspace, and later
/// host builds would compile what a command wrote there. Refused, naming the cache; twin:
/// `--profile read-only` there runs.
#[test]
fn a_clone_inside_a_package_cache_is_no_workspace() {
    if !support::sandbox_available() {
        return;
    }
    let p = project();
    let dep = p.home.join(".cargo/git/checkouts/dep-abc/1234567");
    std::fs::create_dir_all(&dep).unwrap();
    git_init(&dep);
    let o = cordon(&p, &dep, &["run", "--", "sh", "-c", "echo x > build.rs"]);
    assert_eq!(o.status.code(), Some(125), "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains("inside the package cache"),
        "{}",
        text(&o.stderr)
    );
    assert!(!dep.join("build.rs").exists());
    let o = cordon(&p, &dep, &["run", "--profile", "read-only", "--", "ls"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
}

/// Attack pass 27, G5: a second name three levels down in a protected directory (a
/// `core.hooksPath` tree) was not looked at, and junk files exhausting the walk's budget let
/// a shallower one through. Without init's hard-link check both refuse (deep walk; an
/// exhausted walk counts as linked); with it, a write through the other name is refused.
#[test]
fn hard_links_deep_in_a_protected_directory_are_found() {
    if !support::sandbox_available() || !support::denial_records_available() {
        return;
    }
    let p = project();
    let deep = p.dir.join(".githooks/a/b/c");
    std::fs::create_dir_all(&deep).unwrap();
    std::fs::write(deep.join("lib.sh"), "echo benign\n").unwrap();
    std::fs::hard_link(deep.join("lib.sh"), p.dir.join("notes.txt")).unwrap();
    let st = Command::new("git")
        .args(["config", "core.hooksPath", ".githooks"])
        .current_dir(&p.dir)
        .status()
        .unwrap();
    assert!(st.success());
    let o = cordon(
        &p,
        &p.dir,
        &["run", "--", "sh", "-c", "echo evil > notes.txt"],
    );
    assert_ne!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(
        std::fs::read_to_string(deep.join("lib.sh")).unwrap(),
        "echo benign\n"
    );
    let off = |args: &[&str]| {
        let mut c = p.cordon_in(&p.dir, args);
        c.env("CORDON_DISABLE_LAYERS", "denial-records");
        c.output().unwrap()
    };
    let o = off(&["run", "--", "true"]);
    assert_eq!(o.status.code(), Some(125), "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains("lib.sh has 2 hard links"),
        "{}",
        text(&o.stderr)
    );
    std::fs::remove_file(p.dir.join("notes.txt")).unwrap();
    let junk = p.dir.join(".githooks/junk");
    std::fs::create_dir_all(&junk).unwrap();
    for i in 0..4200 {
        std::fs::write(junk.join(format!("f{i}")), "").unwrap();
    }
    let o = off(&["run", "--", "true"]);
    assert_eq!(o.status.code(), Some(125), "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains("too many to check"),
        "{}",
        text(&o.stderr)
    );
    std::fs::remove_dir_all(&junk).unwrap();
    let o = cordon(&p, &p.dir, &["run", "--", "true"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
}

/// Attack pass 28, F1: a symlink the command makes inside `.git` (`logs/HEAD` to a file
/// outside, the user's rc file in the attack) and a FIFO (`COMMIT_EDITMSG`) are removed
/// after the run, so the host's next `git commit` neither appends its reflog line to the
/// outside file nor hangs; `--json` names both under `git_dirs`. Twin: the command's own
/// `git commit` inside the sandbox works, and a regular file it wrote in `.git` stays.
#[test]
fn entries_leading_out_of_the_git_dir_are_removed_after_the_run() {
    let p = project();
    if !sandbox_available(&p) {
        return;
    }
    let git = |args: &[&str]| {
        Command::new("timeout")
            .arg("20")
            .arg("git")
            .args(["-c", "user.name=u", "-c", "user.email=u@example.com"])
            .args(args)
            .current_dir(&p.dir)
            .stdin(Stdio::null())
            .output()
            .unwrap()
    };
    assert!(git(&["commit", "-q", "--allow-empty", "-m", "init"])
        .status
        .success());
    let outside = p.root.path().join("bashrc");
    std::fs::write(&outside, "# rc\n").unwrap();
    let script = format!(
        "git -c user.name=t -c user.email=t@example.com commit -q --allow-empty -m in-sandbox \
         && ln -sf {} .git/logs/HEAD && rm -f .git/COMMIT_EDITMSG && mkfifo .git/COMMIT_EDITMSG && echo kept > .git/NOTE",
        outside.display()
    );
    let o = cordon(
        &p,
        &p.dir,
        &["run", "--yes", "--json", "--", "sh", "-c", &script],
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let err = text(&o.stderr);
    assert!(err.contains("logs/HEAD a symlink to"), "{err}");
    let v = support::last_json(&o.stderr);
    let removed: Vec<String> = v["git_dirs"][0]["removed"]
        .as_array()
        .unwrap_or_else(|| panic!("{v}"))
        .iter()
        .map(|f| f["path"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(removed.len(), 2, "{removed:?}");
    // The host's git, afterwards: writes its reflog in the git dir, not outside.
    let c = git(&["commit", "-q", "--allow-empty", "-m", "on-host"]);
    assert!(c.status.success(), "{}", text(&c.stderr));
    assert_eq!(std::fs::read_to_string(&outside).unwrap(), "# rc\n");
    let log = git(&["log", "--format=%s"]);
    assert_eq!(text(&log.stdout), "on-host\nin-sandbox\ninit\n");
    assert!(p.dir.join(".git/NOTE").is_file());
    assert!(std::fs::symlink_metadata(p.dir.join(".git/logs/HEAD"))
        .unwrap()
        .file_type()
        .is_file());
}

/// Attack pass 29, F5 and F6: a run whose `cordon run` is killed (`kill -9`) before its
/// sweep has what it planted in the git dir removed by the next run, which names it as an
/// earlier command's (the census was recorded); a `--separate-git-dir` inside the
/// workspace is swept like `.git`. Twin: the next run itself still works.
#[test]
fn a_killed_runs_plant_is_swept_by_the_next_run_and_separate_git_dirs_are_swept() {
    let p = project();
    if !sandbox_available(&p) {
        return;
    }
    let outside = p.root.path().join("victim.rc");
    std::fs::write(&outside, "# rc\n").unwrap();
    let planted = p.dir.join(".git/FETCH_HEAD");
    let script = format!("ln -s {} .git/FETCH_HEAD && sleep 60", outside.display());
    let mut child = p
        .cordon_in(&p.dir, &["run", "--", "sh", "-c", &script])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let t0 = std::time::Instant::now();
    while std::fs::symlink_metadata(&planted).is_err() && t0.elapsed().as_secs() < 20 {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert!(
        std::fs::symlink_metadata(&planted).is_ok(),
        "the run never planted"
    );
    child.kill().unwrap(); // SIGKILL: no sweep by this run
    child.wait().unwrap();
    let o = cordon(&p, &p.dir, &["run", "--", "true"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let err = text(&o.stderr);
    assert!(
        err.contains("an earlier one whose cordon process ended"),
        "{err}"
    );
    assert!(std::fs::symlink_metadata(&planted).is_err(), "{err}");

    // A separate git dir inside the workspace.
    let sep = project();
    std::fs::remove_dir_all(sep.dir.join(".git")).unwrap();
    let st = Command::new("git")
        .args(["init", "-q", "--separate-git-dir=.gitdata"])
        .current_dir(&sep.dir)
        .status()
        .unwrap();
    assert!(st.success());
    let script = format!("ln -s {} .gitdata/FETCH_HEAD", outside.display());
    let o = cordon(&sep, &sep.dir, &["run", "--", "sh", "-c", &script]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains(".gitdata/FETCH_HEAD a symlink"),
        "{}",
        text(&o.stderr)
    );
    assert!(std::fs::symlink_metadata(sep.dir.join(".gitdata/FETCH_HEAD")).is_err());
}

/// Attack pass 212 #1: a `config.lock` left by a command whose `cordon run` was killed
/// (`kill -9`: its helper, which removes such a lock after a normal run, died with it)
/// jammed every later `git config`, on the host and in the sandbox, unsaid. The next run
/// removes it (made during the killed run, open by no process) and says so; the host's
/// `git config` works again. Twin: a lock that was there before the killed run started
/// (a host git's, or the user's) is left, and nothing is said of it.
#[test]
fn a_config_lock_a_killed_run_left_is_removed_by_the_next_run() {
    let p = project();
    if !sandbox_available(&p) {
        return;
    }
    let lock = p.dir.join(".git/config.lock");
    let killed_run = |p: &Project, script: &str| {
        let script = format!("{script}; touch .git/started; sleep 60");
        let mut child = p
            .cordon_in(&p.dir, &["run", "--", "sh", "-c", &script])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let started = p.dir.join(".git/started");
        let t0 = std::time::Instant::now();
        while !started.exists() && t0.elapsed().as_secs() < 20 {
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        assert!(started.exists(), "the run never started");
        child.kill().unwrap(); // SIGKILL: no cleanup by this run
        child.wait().unwrap();
        std::fs::remove_file(started).unwrap();
    };
    killed_run(&p, ": > .git/config.lock");
    assert!(lock.exists(), "the killed run left no lock");
    let o = cordon(&p, &p.dir, &["run", "--", "true"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let err = text(&o.stderr);
    assert!(!lock.exists(), "the killed run's lock stayed: {err}");
    assert!(
        err.contains("cordon: note:") && err.contains("removed the lock made after an earlier"),
        "{err}"
    );
    let st = Command::new("git")
        .args(["config", "user.name", "a"])
        .current_dir(&p.dir)
        .status()
        .unwrap();
    assert!(st.success(), "the host's git config still fails");

    // Twin: a lock there before the killed run started is not that run's.
    std::fs::write(&lock, "host git at work\n").unwrap();
    killed_run(&p, "true");
    let o = cordon(&p, &p.dir, &["run", "--", "true"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(
        std::fs::read_to_string(&lock).unwrap(),
        "host git at work\n"
    );
    assert!(
        !text(&o.stderr).contains("removed the lock"),
        "{}",
        text(&o.stderr)
    );
}

/// Attack pass 229 #1 (against the end a killed run's heartbeat gave, attack pass 219 #3):
/// `cordon run` is stopped (`SIGSTOP`; Ctrl-Z does the same to it when its command's child
/// left the process group) and its command's background child plants a link in `.git`
/// seconds later, then cordon is killed. The next run removes that link and names it, as
/// it does the link planted before the stop: a heartbeat that stopped with cordon says
/// nothing of when the sandbox ended.
#[test]
fn a_link_planted_while_cordon_was_stopped_is_removed_after_the_kill() {
    let p = project();
    if !sandbox_available(&p) {
        return;
    }
    let git = p.dir.join(".git");
    let started = git.join("started");
    let mut child = p
        .cordon_in(
            &p.dir,
            &[
                "run",
                "--no-server",
                "--",
                "sh",
                "-c",
                "ln -s /etc/passwd .git/FETCH_HEAD && touch .git/started && \
                 (sleep 6; ln -s /etc/passwd .git/late-link) & sleep 60",
            ],
        )
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // The command started, and the run's record is kept fresh.
    let records = p.home.join(".local/state/cordon/sweeps");
    let marked = || {
        std::fs::read_dir(&records).is_ok_and(|d| {
            d.flatten().any(|e| {
                std::fs::read_to_string(e.path()).is_ok_and(|t| t.contains("heartbeat_ms"))
            })
        })
    };
    let t0 = std::time::Instant::now();
    while !(started.exists() && marked()) && t0.elapsed().as_secs() < 20 {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert!(started.exists() && marked(), "the run never started");
    // Stopped: its heartbeat stops, its command's child goes on and plants the link.
    let pid = child.id() as libc::pid_t;
    // SAFETY: a signal to our own child, which has not been waited for.
    unsafe { libc::kill(pid, libc::SIGSTOP) };
    let t0 = std::time::Instant::now();
    while std::fs::symlink_metadata(git.join("late-link")).is_err() && t0.elapsed().as_secs() < 20 {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert!(
        std::fs::symlink_metadata(git.join("late-link")).is_ok(),
        "never planted"
    );
    child.kill().unwrap(); // SIGKILL: no sweep by this run
    child.wait().unwrap();
    std::fs::remove_file(&started).unwrap();
    let o = cordon(&p, &p.dir, &["run", "--no-server", "--", "true"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let err = text(&o.stderr);
    for name in ["FETCH_HEAD", "late-link"] {
        assert!(
            std::fs::symlink_metadata(git.join(name)).is_err(),
            "the killed run's {name} stayed: {err}"
        );
        assert!(
            err.contains(&format!("{name} a symlink to /etc/passwd")),
            "{err}"
        );
    }
}

/// Attack pass 29, F1: where lefthook is in use (a config of its exists), a missing
/// `lefthook-local.yml` a command creates — merged by lefthook onto `lefthook.yml` at the
/// host's next `git commit` — is removed after the run and named. Twin: in a repository
/// that does not use lefthook the same file is the command's to keep.
#[test]
fn a_hook_managers_config_a_run_creates_is_removed_where_the_manager_is_in_use() {
    let p = project();
    if !sandbox_available(&p) {
        return;
    }
    std::fs::write(p.dir.join("lefthook.yml"), "pre-commit:\n  commands: {}\n").unwrap();
    let o = cordon(
        &p,
        &p.dir,
        &[
            "run",
            "--",
            "sh",
            "-c",
            "echo 'pre-commit: {}' > lefthook-local.yml",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains("lefthook-local.yml, which lefthook runs"),
        "{}",
        text(&o.stderr)
    );
    assert!(!p.dir.join("lefthook-local.yml").exists());

    let q = project();
    let o = cordon(
        &q,
        &q.dir,
        &[
            "run",
            "--",
            "sh",
            "-c",
            "echo 'pre-commit: {}' > lefthook-local.yml",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(q.dir.join("lefthook-local.yml").is_file());
}

/// Attack pass 214 #4: pre-commit installed (its stock hook names
/// `--config=.pre-commit-config.yaml`) and the config missing: cordon put an empty
/// placeholder there, its own sweep removed it after the run blaming the command, and a
/// second run still going was cancelled (`cover_lost`). Now the name gets no placeholder:
/// `cordon run -- true` says nothing and leaves nothing, two overlapping runs both exit 0.
/// Twins: a command that creates the config gets it removed with the warning; an existing
/// config stays read-only.
#[test]
fn a_missing_config_the_pre_commit_hook_names_gets_no_placeholder() {
    let p = project();
    if !sandbox_available(&p) {
        return;
    }
    let hook = p.dir.join(".git/hooks/pre-commit");
    std::fs::write(
        &hook,
        "#!/usr/bin/env bash\n# File generated by pre-commit: https://pre-commit.com\n\
         # ID: 138fd403232d2ddd5efb44317e38bf03\n\
         INSTALL_PYTHON=/usr/bin/python3\n\
         ARGS=(hook-impl --config=.pre-commit-config.yaml --hook-type=pre-commit)\n\
         HERE=\"$(cd \"$(dirname \"$0\")\" && pwd)\"\nARGS+=(--hook-dir \"$HERE\" -- \"$@\")\n\
         exec \"$INSTALL_PYTHON\" -mpre_commit \"${ARGS[@]}\"\n",
    )
    .unwrap();
    let cfg = p.dir.join(".pre-commit-config.yaml");
    let o = cordon(&p, &p.dir, &["run", "--", "true"]);
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(!err.contains("warning"), "{err}");
    assert!(std::fs::symlink_metadata(&cfg).is_err(), "{err}");

    // Two overlapping runs: the first ending must not take anything from the second.
    let spawn = |secs: &str| {
        p.cordon(&["run", "--yes", "--no-server", "--", "sleep", secs])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let first = spawn("2");
    std::thread::sleep(std::time::Duration::from_millis(700));
    let second = spawn("4");
    for c in [first, second] {
        let o = c.wait_with_output().unwrap();
        let err = text(&o.stderr);
        assert_eq!(o.status.code(), Some(0), "{err}");
        assert!(!err.contains("warning"), "{err}");
    }
    assert!(std::fs::symlink_metadata(&cfg).is_err());

    // Twin: the command creates it — removed after the run, with the warning.
    let o = cordon(
        &p,
        &p.dir,
        &[
            "run",
            "--",
            "sh",
            "-c",
            "echo 'repos: []' > .pre-commit-config.yaml",
        ],
    );
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(
        err.contains(".pre-commit-config.yaml, which pre-commit runs"),
        "{err}"
    );
    assert!(std::fs::symlink_metadata(&cfg).is_err(), "{err}");

    // Twin: an existing config stays read-only.
    std::fs::write(&cfg, "repos: []\n").unwrap();
    let o = cordon(
        &p,
        &p.dir,
        &[
            "run",
            "--",
            "sh",
            "-c",
            "echo 'repos: [x]' > .pre-commit-config.yaml",
        ],
    );
    assert_ne!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(std::fs::read_to_string(&cfg).unwrap(), "repos: []\n");
}

/// Attack pass 214 #4, the kind: in a linked worktree (its `.git` a file) that uses
/// lefthook, a pre-commit hook in the main repository naming `--config=lefthook-local.yml`
/// still gets that name cordon's placeholder (the resolution cannot see the sweep that
/// keeps it absent there); the sweep must then leave it alone — no warning, and a second
/// run that overlaps the first is not cancelled when the first ends.
#[test]
fn a_placeholder_cordon_keeps_is_never_swept_as_the_commands() {
    let p = project();
    if !sandbox_available(&p) {
        return;
    }
    let git = |dir: &std::path::Path, args: &[&str]| {
        let st = Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@e"])
            .args(args)
            .current_dir(dir)
            .status()
            .unwrap();
        assert!(st.success(), "git {args:?}");
    };
    git(&p.dir, &["commit", "-q", "--allow-empty", "-m", "i"]);
    let wt = p.root.path().join("wt");
    git(&p.dir, &["worktree", "add", "-q", wt.to_str().unwrap()]);
    std::fs::write(wt.join("lefthook.yml"), "pre-commit: {}\n").unwrap();
    std::fs::write(
        p.dir.join(".git/hooks/pre-commit"),
        "#!/usr/bin/env bash\n# File generated by pre-commit: https://pre-commit.com\n\
         ARGS=(hook-impl --config=lefthook-local.yml --hook-type=pre-commit)\n",
    )
    .unwrap();
    let spawn = |secs: &str| {
        p.cordon_in(&wt, &["run", "--yes", "--no-server", "--", "sleep", secs])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let first = spawn("2");
    std::thread::sleep(std::time::Duration::from_millis(700));
    let second = spawn("4");
    for c in [first, second] {
        let o = c.wait_with_output().unwrap();
        let err = text(&o.stderr);
        assert_eq!(o.status.code(), Some(0), "{err}");
        assert!(!err.contains("lefthook-local.yml"), "{err}");
    }
    // Twin: still read-only to a command.
    let o = cordon(
        &p,
        &wt,
        &["run", "--", "sh", "-c", "echo x > lefthook-local.yml"],
    );
    assert_ne!(o.status.code(), Some(0), "{}", text(&o.stderr));
}

/// New-user pass nu14 (HIGH): a linked worktree checked out inside the project (`git
/// worktree add wt`) — a commit in it and `git gc` in the main checkout work (its admin
/// dir was read-only whole, as a nested repository's git dir); its admin files that
/// redirect git stay read-only.
#[test]
fn a_linked_worktree_inside_the_project_commits_and_gc_works() {
    let p = project();
    if !sandbox_available(&p) {
        return;
    }
    let git = |args: &[&str]| {
        let st = Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@e"])
            .args(args)
            .current_dir(&p.dir)
            .status()
            .unwrap();
        assert!(st.success(), "git {args:?}");
    };
    git_init(&p.dir);
    git(&["commit", "-q", "--allow-empty", "-m", "i"]);
    git(&["worktree", "add", "-q", "wt"]);
    let o = cordon(
        &p,
        &p.dir,
        &[
            "run",
            "--",
            "sh",
            "-c",
            "cd wt && git -c user.name=t -c user.email=t@e commit -q --allow-empty -m in-wt",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let o = cordon(&p, &p.dir, &["run", "--", "git", "gc", "-q"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(
        !text(&o.stderr).contains("HEAD.lock"),
        "{}",
        text(&o.stderr)
    );
    let o = cordon(
        &p,
        &p.dir,
        &[
            "run",
            "--",
            "sh",
            "-c",
            "echo /x > .git/worktrees/wt/commondir",
        ],
    );
    assert_ne!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(
        std::fs::read_to_string(p.dir.join(".git/worktrees/wt/commondir")).unwrap(),
        "../..\n"
    );
    // nu14 HIGH 3: `git worktree remove` cannot finish inside cordon (git would delete
    // the files first): refused before it runs, also inside a script, saying to run it
    // outside.
    std::fs::write(p.dir.join("wt/tracked.txt"), "x").unwrap();
    git(&["-C", "wt", "add", "tracked.txt"]);
    git(&["-C", "wt", "commit", "-q", "-m", "t"]);
    for argv in [
        &["git", "worktree", "remove", "wt"][..],
        &["sh", "-c", "git worktree remove --force wt"],
    ] {
        let o = cordon(&p, &p.dir, &[&["run", "--"][..], argv].concat());
        assert_eq!(o.status.code(), Some(125), "{}", text(&o.stderr));
        assert!(
            text(&o.stderr).contains("Run `git worktree remove` outside cordon"),
            "{}",
            text(&o.stderr)
        );
        assert!(p.dir.join("wt/tracked.txt").is_file());
        // Attack pass 238 #2: `check` and `--dry-run` give the run's verdict (they said
        // "would run", exit 0).
        let c = cordon(&p, &p.dir, &[&["check", "--"][..], argv].concat());
        assert_eq!(c.status.code(), Some(2), "{}", text(&c.stdout));
        assert!(
            text(&c.stdout).contains("would refuse — `git worktree remove` cannot finish"),
            "{}",
            text(&c.stdout)
        );
        let d = cordon(
            &p,
            &p.dir,
            &[&["run", "--dry-run", "--json", "--"][..], argv].concat(),
        );
        assert_eq!(d.status.code(), Some(125), "{}", text(&d.stderr));
        assert!(
            text(&d.stdout).contains("\"refuse\""),
            "{}",
            text(&d.stdout)
        );
    }
    // Twin: another worktree command is still said to run.
    let c = cordon(&p, &p.dir, &["check", "--", "git", "worktree", "list"]);
    assert_eq!(c.status.code(), Some(0), "{}", text(&c.stdout));
    // nu16 N1: the runs left no `modules/` placeholder in its admin dir, so the host's
    // `git worktree remove` (not forced) works.
    assert!(!p.dir.join(".git/worktrees/wt/modules").exists());
    git(&["worktree", "remove", "wt"]);
    assert!(!p.dir.join("wt").exists());
}

/// Attack pass 37, A1: with the workspace a linked worktree, its admin dir in the common
/// dir (`main/.git/worktrees/wt`) and `worktrees/` are pinned: a command can neither
/// exchange the admin dir for one of its own (`renameat2(RENAME_EXCHANGE)`) nor rename
/// `worktrees/` away; the protected `commondir` stays as it was. Twin: a commit in the
/// worktree and a `git worktree add` from it still work.
#[test]
fn a_linked_worktrees_admin_dir_cannot_be_swapped_from_inside() {
    let p = project();
    if !sandbox_available(&p) {
        return;
    }
    let git = |dir: &std::path::Path, args: &[&str]| {
        let st = Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@e"])
            .args(args)
            .current_dir(dir)
            .status()
            .unwrap();
        assert!(st.success(), "git {args:?}");
    };
    git_init(&p.dir);
    git(&p.dir, &["commit", "-q", "--allow-empty", "-m", "i"]);
    let wt = p.root.path().join("wt");
    git(&p.dir, &["worktree", "add", "-q", wt.to_str().unwrap()]);
    let g = p.dir.join(".git/worktrees");
    let script = format!(
        "import ctypes, os\n\
         l = ctypes.CDLL(None, use_errno=True)\n\
         g = '{g}'\n\
         os.mkdir(g + '/tmpx')\n\
         open(g + '/tmpx/commondir', 'w').write('/evil\\n')\n\
         x = l.syscall(316, -100, (g + '/tmpx').encode(), -100, (g + '/wt').encode(), 2)\n\
         r = l.syscall(316, -100, g.encode(), -100, (g + '.old').encode(), 0)\n\
         print('exchange', x, 'rename', r)\n",
        g = g.display()
    );
    let o = cordon(&p, &wt, &["run", "--", "python3", "-c", &script]);
    let out = text(&o.stdout);
    assert!(
        out.contains("exchange -1 rename -1"),
        "{out}\n{}",
        text(&o.stderr)
    );
    assert_eq!(
        std::fs::read_to_string(g.join("wt/commondir")).unwrap(),
        "../..\n"
    );
    assert!(g.is_dir() && !p.dir.join(".git/worktrees.old").exists());
    let o = cordon(
        &p,
        &wt,
        &[
            "run",
            "--",
            "git",
            "commit",
            "-q",
            "--allow-empty",
            "-m",
            "in-wt",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
}

/// New-user pass nu19 N1: the grant the denial offers for `git worktree add ../wt` (the
/// directory itself, made empty before the run) works: no `.git` or `.cordon` placeholder
/// is put into a grant cordon creates, and the worktree is made. Twin: cordon's own config
/// beneath such a grant stays protected (attack37 A5, in session.rs).
#[test]
fn a_worktree_beside_the_project_can_be_added_with_the_offered_grant() {
    let p = project();
    if !sandbox_available(&p) {
        return;
    }
    git_init(&p.dir);
    let st = Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@e"])
        .args(["commit", "-q", "--allow-empty", "-m", "i"])
        .current_dir(&p.dir)
        .status()
        .unwrap();
    assert!(st.success());
    let wt = p.root.path().join("wt");
    let o = cordon(
        &p,
        &p.dir,
        &["run", "--", "git", "worktree", "add", "../wt"],
    );
    assert_ne!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let err = text(&o.stderr);
    assert!(err.contains(&format!("-w {}", wt.display())), "{err}");
    let o = cordon(
        &p,
        &p.dir,
        &[
            "run",
            "-w",
            wt.to_str().unwrap(),
            "--",
            "git",
            "worktree",
            "add",
            "../wt",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(wt.join(".git").is_file(), "{}", text(&o.stderr));
    assert!(!wt.join(".cordon").exists());
    // attack40 D1: such a fresh grant is no place for a repository or project marker the
    // command makes: moved aside after the run, and said.
    let fresh = p.root.path().join("fresh");
    let o = cordon(
        &p,
        &p.dir,
        &[
            "run",
            "-w",
            fresh.to_str().unwrap(),
            "--",
            "sh",
            "-c",
            "git init -q ../fresh && mkdir ../fresh/.cordon && echo x > ../fresh/.cordon/m",
        ],
    );
    let err = text(&o.stderr);
    assert!(
        !fresh.join(".git").exists() && !fresh.join(".cordon").exists(),
        "{err}"
    );
    assert!(
        err.contains("in a directory cordon created for a grant"),
        "{err}"
    );
    // Not said again as a repository the command made, under the name cordon moved it to
    // (new-user pass 184 #1: "git run there runs them" about `.git.cordon-replaced`).
    assert!(
        !err.contains("the command made a git repository at"),
        "{err}"
    );

    // The same with `cordon run` killed (SIGKILL) before it could settle the grant: the
    // next run does, and says it was an earlier command's.
    let killed = p.root.path().join("killed");
    let mut child = p
        .cordon_in(
            &p.dir,
            &[
                "run",
                "-w",
                killed.to_str().unwrap(),
                "--",
                "sh",
                "-c",
                "git init -q ../killed && sleep 60",
            ],
        )
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let t0 = std::time::Instant::now();
    while !killed.join(".git/HEAD").exists() && t0.elapsed().as_secs() < 20 {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert!(killed.join(".git/HEAD").exists(), "the run never made it");
    child.kill().unwrap(); // SIGKILL: no settling by this run
    child.wait().unwrap();
    // Until the killed process's sandbox is gone (its helper dies with it).
    let t0 = std::time::Instant::now();
    let mut err = String::new();
    while killed.join(".git").exists() && t0.elapsed().as_secs() < 20 {
        let o = cordon(&p, &p.dir, &["run", "--", "true"]);
        assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
        err.push_str(&text(&o.stderr));
    }
    assert!(!killed.join(".git").exists(), "{err}");
    assert!(
        err.contains("an earlier one whose cordon process ended"),
        "{err}"
    );
    // Attack pass 42, H2: it may be the user's, made since: said, with what to do.
    assert!(err.contains("if you made it, move it back"), "{err}");
}

/// New-user pass nu17 N6: `git worktree prune` inside cordon cannot remove a stale
/// worktree's admin dir (pinned) and git exits 0: cordon names what is left and says to
/// run it outside. Twin: with nothing stale, no note; and the host's prune then works.
#[test]
fn a_worktree_prune_that_leaves_admin_dirs_says_so() {
    let p = project();
    if !sandbox_available(&p) {
        return;
    }
    let git = |args: &[&str]| {
        let st = Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@e"])
            .args(args)
            .current_dir(&p.dir)
            .status()
            .unwrap();
        assert!(st.success(), "git {args:?}");
    };
    git_init(&p.dir);
    git(&["commit", "-q", "--allow-empty", "-m", "i"]);
    let wt = p.root.path().join("wt");
    let st = Command::new("git")
        .args(["worktree", "add", "-q", wt.to_str().unwrap()])
        .current_dir(&p.dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert!(st.success(), "git worktree add");
    let o = cordon(&p, &p.dir, &["run", "--", "git", "worktree", "prune"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(
        !text(&o.stderr).contains("worktree prune"),
        "{}",
        text(&o.stderr)
    );
    std::fs::remove_dir_all(&wt).unwrap();
    let o = cordon(&p, &p.dir, &["run", "--", "git", "worktree", "prune"]);
    let err = text(&o.stderr);
    assert!(
        err.contains("cordon: note: `git worktree prune` cannot remove")
            && err.contains(".git/worktrees/wt")
            && err.contains("outside cordon"),
        "{err}"
    );
    git(&["worktree", "prune"]);
    assert!(!p.dir.join(".git/worktrees/wt").exists());
}

/// New-user pass nu17 N1: `git submodule update --init` in a linked worktree without
/// submodule git dirs yet is refused before it runs (git would clone them into the admin
/// dir's unprotected `modules/`, succeed, and cordon would set them aside after the run,
/// leaving the worktree broken), saying to run it outside; also through a command-line
/// alias. Twin: `git submodule status` runs, and the host's own update then works.
#[test]
fn a_submodule_update_in_a_linked_worktree_is_refused_up_front() {
    let p = project();
    if !sandbox_available(&p) {
        return;
    }
    let git_in = |dir: &std::path::Path, args: &[&str]| {
        let st = Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@e"])
            .args(["-c", "protocol.file.allow=always"])
            .args(args)
            .current_dir(dir)
            .status()
            .unwrap();
        assert!(st.success(), "git {args:?}");
    };
    let lib = p.root.path().join("lib");
    std::fs::create_dir_all(&lib).unwrap();
    git_init(&lib);
    git_in(&lib, &["commit", "-q", "--allow-empty", "-m", "lib"]);
    git_init(&p.dir);
    git_in(
        &p.dir,
        &["submodule", "add", "-q", lib.to_str().unwrap(), "lib"],
    );
    git_in(&p.dir, &["commit", "-q", "-m", "with lib"]);
    git_in(&p.dir, &["worktree", "add", "-q", "wt"]);
    let wt = p.dir.join("wt");
    for argv in [
        &[
            "git",
            "-c",
            "protocol.file.allow=always",
            "submodule",
            "update",
            "--init",
        ][..],
        &["sh", "-c", "git -c alias.su='submodule update' su --init"],
    ] {
        let o = cordon(&p, &wt, &[&["run", "--"][..], argv].concat());
        assert_eq!(o.status.code(), Some(125), "{}", text(&o.stderr));
        assert!(
            text(&o.stderr).contains("Run `git submodule update` outside cordon"),
            "{}",
            text(&o.stderr)
        );
        assert!(!p.dir.join(".git/worktrees/wt/modules").exists());
    }
    let o = cordon(&p, &wt, &["run", "--", "git", "submodule", "status"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    git_in(&wt, &["submodule", "update", "--init", "-q"]);
    assert!(wt.join("lib/.git").is_file());
}

/// Attack pass 30, A4b: a nested repository below the workspace (its git dir protected
/// whole, so no git-dir sweep walks it) that uses lefthook: a `lefthook-local.yml` a
/// command creates in its work tree is removed after the run and named, as at the
/// workspace's own root. Twin: a nested repository without lefthook keeps the file.
#[test]
fn a_nested_repositorys_hook_manager_config_a_run_creates_is_removed() {
    let p = project();
    if !sandbox_available(&p) {
        return;
    }
    let sub = p.dir.join("sub");
    git_init(&sub);
    std::fs::write(sub.join("lefthook.yml"), "pre-commit:\n  commands: {}\n").unwrap();
    let o = cordon(
        &p,
        &p.dir,
        &[
            "run",
            "--",
            "sh",
            "-c",
            "echo 'pre-commit: {}' > sub/lefthook-local.yml",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains("sub/lefthook-local.yml, which lefthook runs"),
        "{}",
        text(&o.stderr)
    );
    assert!(!sub.join("lefthook-local.yml").exists());

    let q = project();
    git_init(&q.dir.join("sub"));
    let o = cordon(
        &q,
        &q.dir,
        &[
            "run",
            "--",
            "sh",
            "-c",
            "echo 'pre-commit: {}' > sub/lefthook-local.yml",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(q.dir.join("sub/lefthook-local.yml").is_file());
}

/// Attack pass 35, P1: `core.hooksPath = tools/git/hooks` before `tools/` exists. cordon
/// makes `tools/git/` for the hooks dir's placeholder; those directories are pinned as
/// existing ones are, so the command cannot swap `tools` for a directory holding its own
/// hook (`renameat2(RENAME_EXCHANGE)`, which a plain rename check misses). Twin: `tools/`
/// stays writable.
#[test]
fn directories_made_for_a_placeholder_are_pinned() {
    let p = project();
    if !sandbox_available(&p) {
        return;
    }
    git_init(&p.dir);
    let st = Command::new("git")
        .args(["config", "core.hooksPath", "tools/git/hooks"])
        .current_dir(&p.dir)
        .status()
        .unwrap();
    assert!(st.success());
    let o = cordon(
        &p,
        &p.dir,
        &[
            "run",
            "--",
            "python3",
            "-c",
            "import os, ctypes\n\
             open('tools/other', 'w').write('ok')\n\
             os.makedirs('prep/git/hooks')\n\
             open('prep/git/hooks/pre-commit', 'w').write('#!/bin/sh\\necho planted\\n')\n\
             l = ctypes.CDLL(None, use_errno=True)\n\
             print('exchange', l.syscall(316, -100, b'tools', -100, b'prep', 2))\n",
        ],
    );
    assert!(
        p.dir.join("tools/other").is_file(),
        "still works: {}",
        text(&o.stderr)
    );
    assert!(
        !p.dir.join("tools/git/hooks/pre-commit").exists(),
        "{}{}",
        text(&o.stdout),
        text(&o.stderr)
    );
}

/// New-user pass nu19 N2: from a project under `/tmp`, `git worktree add ../wt` writes the
/// worktree into the command's private `/tmp` (discarded when it ends) while the branch
/// and admin dir stay: the outcome's hint says so and names the `-w` that makes it on the
/// host. Twin: with that grant the worktree is made on the host, and no such hint.
#[test]
fn a_worktree_added_into_the_private_tmp_is_named_as_discarded() {
    let p = project();
    if !sandbox_available(&p) {
        return;
    }
    let t = tempfile::Builder::new()
        .prefix("cordon-tmp-proj-")
        .tempdir_in("/tmp")
        .unwrap();
    let dir = t.path().canonicalize().unwrap().join("proj");
    std::fs::create_dir_all(&dir).unwrap();
    git_init(&dir);
    let st = Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@e"])
        .args(["commit", "-q", "--allow-empty", "-m", "i"])
        .current_dir(&dir)
        .status()
        .unwrap();
    assert!(st.success());
    let wt = dir.parent().unwrap().join("wt");
    let o = cordon(
        &p,
        &dir,
        &["run", "--json", "--", "git", "worktree", "add", "../wt"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let v: serde_json::Value =
        serde_json::from_str(text(&o.stderr).lines().last().unwrap()).unwrap();
    let hint = v["hint"].as_str().unwrap_or_default();
    assert!(
        hint.contains("private /tmp") && hint.contains(&format!("-w {}", wt.display())),
        "{v}"
    );
    // nu21 K6: prune first, or the retry makes `wt1`.
    assert!(hint.contains("git worktree prune"), "{v}");
    assert!(!wt.exists());
    // nu21 K6: any directory made beside the project there is named the same way.
    let v = json_run(&p, &dir, "mkdir -p ../build && echo x > ../build/a.txt");
    let build = dir.parent().unwrap().join("build");
    assert!(
        v["hint"]
            .as_str()
            .unwrap_or_default()
            .contains(&format!("-w {}", build.display())),
        "{v}"
    );
    // New-user pass nu58: a file written right beside the project must exist before `-w`
    // names it (`-w` makes a missing path a directory); following the hint works.
    let v = json_run(&p, &dir, "echo hi > ../newfile.txt");
    let newfile = dir.parent().unwrap().join("newfile.txt");
    let hint = v["hint"].as_str().unwrap_or_default();
    assert!(
        hint.contains(&format!("touch {}", newfile.display()))
            && hint.contains(&format!("-w {}", newfile.display())),
        "{v}"
    );
    std::fs::write(&newfile, "").unwrap();
    let o = cordon(
        &p,
        &dir,
        &[
            "run",
            "-w",
            newfile.to_str().unwrap(),
            "--",
            "sh",
            "-c",
            "echo hi > ../newfile.txt",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(std::fs::read_to_string(&newfile).unwrap(), "hi\n");
    std::fs::remove_file(&newfile).unwrap();
    // Attack pass 43, J2: what the command only read is not said to be written.
    let v = json_run(&p, &dir, "test ! -e ../nothere");
    assert!(
        !v["hint"].as_str().unwrap_or_default().contains("nothere"),
        "{v}"
    );
    let st = Command::new("git")
        .args(["worktree", "prune"])
        .current_dir(&dir)
        .status()
        .unwrap();
    assert!(st.success());
    let o = cordon(
        &p,
        &dir,
        &[
            "run",
            "--json",
            "-w",
            wt.to_str().unwrap(),
            "--",
            "git",
            "worktree",
            "add",
            "../wt",
            "wt",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(wt.join(".git").is_file(), "{}", text(&o.stderr));
    let v: serde_json::Value =
        serde_json::from_str(text(&o.stderr).lines().last().unwrap()).unwrap();
    assert!(
        !v["hint"]
            .as_str()
            .unwrap_or_default()
            .contains("private /tmp"),
        "{v}"
    );
}

/// New-user pass nu22, P1: a repository made beside the project (`git clone . ../x`) would
/// be moved aside from a `-w ../x` grant after the run (its config and hooks would run on
/// the host), so no grant is offered for it and the hint says what works. Twin: a plain
/// `mkdir ../x` is still offered its grant.
#[test]
fn a_clone_beside_the_project_is_not_offered_a_grant_that_cannot_keep_it() {
    let p = project();
    if !sandbox_available(&p) {
        return;
    }
    let st = Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@e"])
        .args(["commit", "-q", "--allow-empty", "-m", "i"])
        .current_dir(&p.dir)
        .status()
        .unwrap();
    assert!(st.success());
    let last = |o: &Output| -> serde_json::Value {
        serde_json::from_str(text(&o.stderr).lines().last().unwrap()).unwrap()
    };
    let o = cordon(
        &p,
        &p.dir,
        &["run", "--json", "--", "git", "clone", "-q", ".", "../x"],
    );
    let v = last(&o);
    assert_eq!(v["outcome"], "sandbox-denied", "{v}");
    assert_ne!(v["escalation"]["escalation"], "offered", "{v}");
    assert!(
        v["hint"]
            .as_str()
            .unwrap_or_default()
            .contains("outside cordon"),
        "{v}"
    );
    let o = cordon(&p, &p.dir, &["run", "--json", "--", "mkdir", "../y"]);
    let v = last(&o);
    assert_eq!(v["outcome"], "sandbox-denied", "{v}");
    assert!(
        v["hint"].as_str().unwrap_or_default().contains("-w "),
        "{v}"
    );
    // Attack pass 44, L1: a repository made below a grant is named after the run.
    let fresh = p.root.path().join("fresh");
    let o = cordon(
        &p,
        &p.dir,
        &[
            "run",
            "--json",
            "-w",
            fresh.to_str().unwrap(),
            "--",
            "git",
            "init",
            "-q",
            "../fresh/sub",
        ],
    );
    let v = last(&o);
    assert!(
        v["created_repositories"]
            .to_string()
            .contains(&fresh.join("sub").display().to_string()),
        "{v}"
    );
}

/// New-user pass nu58: `git undo` with `undo = reset --hard` in `~/.gitconfig` ran
/// without approval and threw the uncommitted change away. Now it needs approval like `git
/// reset --hard` (refused without a person: 125), and the change survives. Twin: a
/// harmless alias runs.
#[test]
fn a_git_config_alias_is_checked_as_what_it_runs() {
    let p = project();
    if !sandbox_available(&p) {
        return;
    }
    git_init(&p.dir);
    std::fs::write(
        p.home.join(".gitconfig"),
        "[alias]\n\tundo = reset --hard\n\tst = status --short\n[user]\n\tname = t\n\temail = t@e\n",
    )
    .unwrap();
    std::fs::write(p.dir.join("a.txt"), "one\n").unwrap();
    let st = Command::new("git")
        .args(["add", "a.txt"])
        .current_dir(&p.dir)
        .env("HOME", &p.home)
        .status()
        .unwrap();
    assert!(st.success());
    let st = Command::new("git")
        .args(["commit", "-qm", "one"])
        .current_dir(&p.dir)
        .env("HOME", &p.home)
        .status()
        .unwrap();
    assert!(st.success());
    std::fs::write(p.dir.join("a.txt"), "precious\n").unwrap();
    let o = cordon(
        &p,
        &p.dir,
        &["run", "--non-interactive", "--", "git", "undo"],
    );
    assert_eq!(o.status.code(), Some(125), "{}", text(&o.stderr));
    assert!(text(&o.stderr).contains("alias"), "{}", text(&o.stderr));
    assert_eq!(
        std::fs::read_to_string(p.dir.join("a.txt")).unwrap(),
        "precious\n"
    );
    let o = cordon(&p, &p.dir, &["run", "--non-interactive", "--", "git", "st"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(text(&o.stdout).contains("a.txt"), "{}", text(&o.stdout));
}

/// New-user pass nu62: `git config --global` in the sandbox fails on the read-only,
/// credential-stripped copy of `~/.gitconfig`; the hint says so and where to change it,
/// not that the (readable) file is hidden. Twin: the repository's own config works.
#[test]
fn a_global_git_config_edit_is_told_the_copy_is_read_only() {
    let p = project();
    if !sandbox_available(&p) {
        return;
    }
    git_init(&p.dir);
    std::fs::write(
        p.home.join(".gitconfig"),
        "[user]\n\tname = A\n[credential]\n\thelper = store\n",
    )
    .unwrap();
    let o = cordon(
        &p,
        &p.dir,
        &[
            "run",
            "--",
            "git",
            "config",
            "--global",
            "user.email",
            "x@y",
        ],
    );
    assert_ne!(o.status.code(), Some(0));
    let err = text(&o.stderr);
    assert!(
        err.contains("read-only copy with its credentials removed"),
        "{err}"
    );
    assert!(!err.contains("is hidden from this command"), "{err}");
    let o = cordon(
        &p,
        &p.dir,
        &["run", "--", "git", "config", "user.email", "x@y"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
}

/// New-user pass nu63: a writable root inside a git dir (`-w .git/hooks`, cordon's own
/// advice after a hook write is denied) gets no `.git`/`.cordon` placeholder; the write
/// it grants works.
#[test]
fn a_grant_inside_a_git_dir_leaves_no_placeholders() {
    let p = project();
    if !sandbox_available(&p) {
        return;
    }
    git_init(&p.dir);
    let o = cordon(
        &p,
        &p.dir,
        &[
            "run",
            "-w",
            ".git/hooks",
            "--",
            "sh",
            "-c",
            "echo x > .git/hooks/note",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(p.dir.join(".git/hooks/note").exists());
    for left in [".git/hooks/.git", ".git/hooks/.cordon"] {
        assert!(!p.dir.join(left).exists(), "{left} was left behind");
    }
}

/// Attack pass 166, finding 4: a sandboxed run planted `vendor/x/.git` saying `gitdir:
/// .git/index.lock`, and cordon made that file on the host (a placeholder for "the nested
/// repository's git dir") at every later run: the user's `git add` failed with "index.lock:
/// File exists"; `gitdir: src/main.rs` froze that file read-only for later runs. A `.git`
/// file naming no directory protects nothing beyond itself now, and a note says so. Twin:
/// git on the host and in the sandbox still work, and the planted `.git` file stays
/// read-only.
#[test]
fn a_gitdir_file_naming_no_directory_makes_nothing_on_the_host() {
    let p = project();
    if !sandbox_available(&p) {
        return;
    }
    git_init(&p.dir);
    std::fs::create_dir_all(p.dir.join("src")).unwrap();
    std::fs::write(p.dir.join("src/main.rs"), "fn main() {}\n").unwrap();
    let lock = p.dir.join(".git/index.lock");
    let plant = format!(
        "mkdir -p vendor/x vendor/y vendor/z && echo 'gitdir: {}' > vendor/x/.git && \
         echo 'gitdir: {}' > vendor/y/.git && echo 'gitdir: {}' > vendor/z/.git",
        lock.display(),
        p.dir.join("src/main.rs").display(),
        p.dir.join("src").display()
    );
    let o = cordon(&p, &p.dir, &["run", "--", "sh", "-c", &plant]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let o = cordon(
        &p,
        &p.dir,
        &[
            "run",
            "--json",
            "--",
            "sh",
            "-c",
            "echo 'fn main() { }' > src/main.rs && touch src/new.rs && \
             echo more >> vendor/x/.git",
        ],
    );
    let err = text(&o.stderr);
    assert!(
        !lock.exists(),
        "cordon made .git/index.lock on the host: {err}"
    );
    assert_eq!(
        std::fs::read_to_string(p.dir.join("src/main.rs")).unwrap(),
        "fn main() { }\n",
        "{err}"
    );
    assert_ne!(
        o.status.code(),
        Some(0),
        "the planted .git file was writable: {err}"
    );
    assert!(p.dir.join("src/new.rs").exists(), "{err}");
    assert!(err.contains("which is not a git dir"), "{err}");
    let st = std::process::Command::new("git")
        .args(["add", "src/main.rs"])
        .current_dir(&p.dir)
        .output()
        .unwrap();
    assert!(st.status.success(), "{}", text(&st.stderr));
}

/// Attack pass 188 F1: the project renamed on the host while a command runs (the run is
/// stopped: its covers moved away). The link the command planted in `.git` is removed
/// by the run's sweep where the git dir is now; it stayed (the sweep looked at the old
/// path), the next run took it for "there before", and the host's next `git commit`
/// appended its reflog line to the file it named.
#[test]
fn a_link_planted_in_git_before_the_project_is_renamed_is_removed() {
    let p = project();
    if !sandbox_available(&p) {
        return;
    }
    let target = p.home.join("bashrc");
    std::fs::write(&target, "").unwrap();
    std::fs::create_dir_all(p.dir.join("sync")).unwrap();
    let sync = p.dir.join("sync");
    let script = format!(
        "ln -sf {t} .git/refs/planted && touch sync/ready; i=0; while [ $i -lt 100 ]; do \
         sleep 0.05; i=$((i+1)); done",
        t = target.display(),
    );
    let mut c = p.cordon(&["run", "--yes", "--no-server", "--", "sh", "-c", &script]);
    let child = c
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let t0 = std::time::Instant::now();
    while !sync.join("ready").exists() && t0.elapsed() < std::time::Duration::from_secs(20) {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert!(sync.join("ready").exists(), "the command never planted");
    let moved = p.root.path().join("moved");
    std::fs::rename(&p.dir, &moved).unwrap();
    let o = child.wait_with_output().unwrap();
    let err = text(&o.stderr);
    assert!(
        std::fs::symlink_metadata(moved.join(".git/refs/planted")).is_err(),
        "the planted link stayed: {err}"
    );
    assert!(err.contains("cordon removed it"), "{err}");
}

/// A superproject in `p.dir` with the submodule `libsub` (its git dir in
/// `.git/modules/libsub`), deinitialised so `git submodule update --init` has work to do.
fn superproject_with_deinit_submodule(p: &Project) {
    let git = |dir: &std::path::Path, args: &[&str]| {
        let o = Command::new("git")
            .args(["-c", "protocol.file.allow=always"])
            .args(args)
            .current_dir(dir)
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@example.invalid")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@example.invalid")
            .stderr(Stdio::piped())
            .output()
            .unwrap();
        assert!(o.status.success(), "git {args:?}: {}", text(&o.stderr));
    };
    let lib = p.root.path().join("libsub");
    std::fs::create_dir_all(&lib).unwrap();
    git(&lib, &["init", "-q"]);
    std::fs::write(lib.join("l"), "l\n").unwrap();
    git(&lib, &["add", "."]);
    git(&lib, &["commit", "-qm", "l"]);
    git(&p.dir, &["commit", "-q", "--allow-empty", "-m", "i"]);
    git(&p.dir, &["submodule", "add", "-q", "../libsub", "libsub"]);
    git(&p.dir, &["commit", "-qm", "sub"]);
    git(&p.dir, &["submodule", "deinit", "-q", "-f", "libsub"]);
}

/// Hints finding 1: `git submodule update --init` with the submodule's git dir protected
/// offered `-w .git/modules/libsub`, then `-w .git/modules/libsub/config`, then the first
/// again. The first hint names both, and following it works in one step (the config gets
/// `core.worktree`). Twin: a `git config` of the workspace's own `.git/config` needs no
/// grant (a private copy merged back), and is offered none.
#[test]
fn a_submodule_update_hint_works_in_one_step() {
    if !support::sandbox_available() || !support::denial_records_available() {
        return;
    }
    let p = project();
    superproject_with_deinit_submodule(&p);
    let update = [
        "git",
        "-c",
        "protocol.file.allow=always",
        "submodule",
        "update",
        "--init",
    ];
    let mut args = vec!["run", "--json", "--"];
    args.extend(update);
    let o = cordon(&p, &p.dir, &args);
    let err = text(&o.stderr);
    let want = "allow writing it once with -w .git/modules/libsub, together with -w \
                .git/modules/libsub/config";
    assert!(err.contains(want), "{err}");
    assert!(!err.contains("does not name"), "{err}");
    let v: serde_json::Value = serde_json::from_str(err.lines().last().unwrap()).unwrap();
    assert_eq!(
        v["also_grant"][0],
        p.dir
            .join(".git/modules/libsub/config")
            .display()
            .to_string(),
        "{v}"
    );
    // As the first time (the failed run left the work tree's `.git` file behind).
    let st = Command::new("git")
        .args(["submodule", "deinit", "-q", "-f", "libsub"])
        .current_dir(&p.dir)
        .status()
        .unwrap();
    assert!(st.success());
    let mut args = vec![
        "run",
        "-w",
        ".git/modules/libsub",
        "-w",
        ".git/modules/libsub/config",
        "--",
    ];
    args.extend(update);
    let o = cordon(&p, &p.dir, &args);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let cfg = std::fs::read_to_string(p.dir.join(".git/modules/libsub/config")).unwrap();
    assert!(cfg.contains("worktree"), "{cfg}{}", text(&o.stderr));
    let o = cordon(
        &p,
        &p.dir,
        &["run", "--", "git", "config", "user.name", "x"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(!text(&o.stderr).contains("-w .git"), "{}", text(&o.stderr));
}

/// Hints finding 2: in a repository with an initialised submodule, `git status` (exit 0)
/// got a note offering `-w .git/modules/libsub` for the index refresh git gives up on.
/// No note now, plain or `--plan`; sibling: `git diff`. Twin: `git add` inside the
/// submodule, which needs that lock, fails and gets the hint.
/// Hints finding 3: a `--plan` run whose command exited 0 after a refused write is never
/// advised `-w` (stderr and `--json` `hint`), the denial's hint neither.
#[test]
fn index_refresh_refusals_are_quiet_and_plan_runs_never_advise_w() {
    if !support::sandbox_available() || !support::denial_records_available() {
        return;
    }
    let p = project();
    superproject_with_deinit_submodule(&p);
    let st = Command::new("git")
        .args([
            "-c",
            "protocol.file.allow=always",
            "submodule",
            "update",
            "--init",
            "-q",
        ])
        .current_dir(&p.dir)
        .status()
        .unwrap();
    assert!(st.success());
    for cmd in [&["git", "status", "--short"][..], &["git", "diff"][..]] {
        for plan in [false, true] {
            // A changed stat makes git want to write the submodule's index.
            std::fs::write(p.dir.join("libsub/l"), "l\n").unwrap();
            let mut args = vec!["run", "--json"];
            if plan {
                args.push("--plan");
            }
            args.push("--");
            args.extend(cmd);
            let o = cordon(&p, &p.dir, &args);
            let err = text(&o.stderr);
            assert_eq!(o.status.code(), Some(0), "{cmd:?}: {err}");
            assert!(
                !err.contains("cordon: note: the command exited 0"),
                "{cmd:?}: {err}"
            );
            let v: serde_json::Value = serde_json::from_str(err.lines().last().unwrap()).unwrap();
            assert!(v["hint"].is_null(), "{cmd:?} plan={plan}: {v}");
        }
    }
    std::fs::write(p.dir.join("libsub/new"), "n\n").unwrap();
    let o = cordon(
        &p,
        &p.dir,
        &["run", "--", "git", "-C", "libsub", "add", "new"],
    );
    let err = text(&o.stderr);
    assert_ne!(o.status.code(), Some(0), "{err}");
    assert!(
        err.contains("allow writing it once with -w ") && err.contains(".git/modules/libsub"),
        "{err}"
    );
    // Finding 3: exit 0 after a refused write in a --plan run, with -w given.
    let o = cordon(
        &p,
        &p.dir,
        &[
            "run",
            "--plan",
            "--json",
            "-w",
            ".git",
            "--",
            "sh",
            "-c",
            "echo x > planned; true",
        ],
    );
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(err.contains("do not apply to it"), "{err}");
    assert!(!err.contains("allow writing it once"), "{err}");
    assert!(err.contains("run it without --plan"), "{err}");
    let v: serde_json::Value = serde_json::from_str(err.lines().last().unwrap()).unwrap();
    let hint = v["hint"].as_str().unwrap_or_default();
    assert!(!hint.contains("-w ") || hint.contains("whatever -w"), "{v}");
    // Twin: the same failing.
    let o = cordon(
        &p,
        &p.dir,
        &["run", "--plan", "--", "sh", "-c", "echo x > planned"],
    );
    let err = text(&o.stderr);
    assert!(!err.contains("allow writing it once"), "{err}");
    // Twin without --plan: the note offers the grant.
    let o = cordon(
        &p,
        &p.dir,
        &[
            "run",
            "--",
            "sh",
            "-c",
            "echo x > .git/hooks/pre-push; true",
        ],
    );
    assert!(
        text(&o.stderr).contains("allow writing it once with -w .git/hooks"),
        "{}",
        text(&o.stderr)
    );
}

/// Attack pass 233 #1: a git command stopped before it finished (a timeout, a kill) leaves
/// its lock files, and every later host `git commit`/`git add` failed with "File exists"
/// with nothing said. The run now names each lock file it left (stderr and `--json`'s
/// `git_dirs[].left_locks`) with the command that removes it, and removes none (another
/// git may hold it). Twins: a lock that was there before the run is not the run's; a run
/// whose git commands finish leaves none and says nothing.
#[test]
fn lock_files_a_run_leaves_in_the_git_dir_are_named() {
    let p = project();
    if !sandbox_available(&p) {
        return;
    }
    std::fs::write(p.dir.join(".git/packed-refs.lock"), "").unwrap();
    let o = cordon(
        &p,
        &p.dir,
        &[
            "run",
            "--json",
            "--",
            "sh",
            "-c",
            "mkdir -p .git/refs/heads && touch .git/index.lock .git/refs/heads/main.lock",
        ],
    );
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    let index = p.dir.join(".git/index.lock");
    let main = p.dir.join(".git/refs/heads/main.lock");
    assert!(
        err.contains("git's lock files")
            && err.contains(&index.display().to_string())
            && err.contains(&main.display().to_string())
            && err.contains("rm -f"),
        "{err}"
    );
    assert!(!err.contains("packed-refs.lock"), "{err}");
    let report: serde_json::Value = serde_json::from_str(err.lines().last().unwrap()).unwrap();
    let left = report["git_dirs"][0]["left_locks"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert_eq!(left.len(), 2, "{report}");
    // Nothing removed: cordon cannot tell a stopped git's lock from a live one.
    assert!(index.is_file() && main.is_file());
    std::fs::remove_file(&index).unwrap();
    std::fs::remove_file(&main).unwrap();
    let o = cordon(&p, &p.dir, &["run", "--", "git", "status", "--short"]);
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(!err.contains("lock file"), "{err}");
}

/// Attack pass 233 #2: a linked worktree's missing `modules/` is writable during the run
/// (no placeholder: git would refuse `git worktree remove`) and settled after it; `explain`
/// said plain "writable" where the README says protected. It says both now, in text and
/// `--json`. Twin: the admin dir's `HEAD` is plain writable.
#[test]
fn explain_says_a_worktrees_modules_is_settled_after_the_run() {
    let p = project();
    commit_empty(&p.dir);
    let wt = p.dir.parent().unwrap().join(format!(
        "{}-wt",
        p.dir.file_name().unwrap().to_string_lossy()
    ));
    let st = Command::new("git")
        .args(["worktree", "add", "-q", wt.to_str().unwrap()])
        .current_dir(&p.dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert!(st.success(), "git worktree add");
    let name = wt.file_name().unwrap().to_str().unwrap().to_string();
    let modules = format!(".git/worktrees/{name}/modules");
    let head = format!(".git/worktrees/{name}/HEAD");
    let o = cordon(&p, &p.dir, &["explain", &modules, &head]);
    let said = text(&o.stdout);
    let _ = std::fs::remove_dir_all(&wt);
    assert!(
        said.contains("modules: writable during the run, then settled")
            && said.contains("modules.cordon-replaced"),
        "{said}"
    );
    assert!(said.contains("/HEAD: writable\n"), "{said}");
}

/// New-user pass 234 #1: `git worktree add -b NAME PATH` denied for PATH makes the branch
/// before it fails, so the approved retry failed with "a branch named … already exists"
/// and left an empty PATH. No retry is offered now (approvals given for every request do
/// not re-run it; `--json` has no retry); the hint names the grant and the command
/// without `-b`.
#[test]
fn a_denied_worktree_add_with_a_new_branch_is_not_retried() {
    let p = project();
    if !sandbox_available(&p) {
        return;
    }
    commit_empty(&p.dir);
    let wt = p.dir.parent().unwrap().join(format!(
        "{}-wtb",
        p.dir.file_name().unwrap().to_string_lossy()
    ));
    let wt_s = wt.to_str().unwrap();
    // Every request approved: a retry offered would run.
    let answers = p.home.join("answers");
    std::fs::write(&answers, "\"once\"\n\"once\"\n").unwrap();
    let approvals = answers.to_str().unwrap();
    let o = cordon(
        &p,
        &p.dir,
        &[
            "run",
            "--approvals-from",
            approvals,
            "--json",
            "--",
            "git",
            "worktree",
            "add",
            "-b",
            "feat",
            wt_s,
        ],
    );
    let err = text(&o.stderr);
    let _ = std::fs::remove_dir_all(&wt);
    assert_ne!(o.status.code(), Some(0), "{err}");
    assert!(!err.contains("already exists"), "retried: {err}");
    assert!(
        !err.contains("approval_request"),
        "a retry was offered: {err}"
    );
    let report: serde_json::Value = serde_json::from_str(err.lines().last().unwrap()).unwrap();
    assert_eq!(report["outcome"], "sandbox-denied", "{report}");
    assert!(report["retry"].is_null(), "{report}");
    let hint = report["hint"].as_str().unwrap_or_default();
    assert!(
        hint.contains(&format!("-w {wt_s}"))
            && hint.contains("git worktree add PATH feat")
            && hint.contains("no retry"),
        "{hint}"
    );
}
