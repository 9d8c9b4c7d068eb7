//! Issue 11 §3: safe git configuration edits through the `cordon` binary. Inside the
//! sandbox `.git/config` is a writable private copy; after the run only allow-listed keys
//! land in the host file, under git's lock protocol; every other key is named and refused.

use std::path::Path;
use std::process::{Command, Output, Stdio};

mod support;
use support::{Project, CORDON};

fn git(dir: &Path, args: &[&str]) -> Output {
    Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
        .args(args)
        .current_dir(dir)
        .env("HOME", dir)
        .output()
        .unwrap()
}

/// A repository on `master` with one commit and `branch.master.remote = origin`.
fn project() -> Project {
    let p = Project::new("cordon-tc-git-");
    let dir = &p.dir;
    assert!(git(dir, &["symbolic-ref", "HEAD", "refs/heads/master"])
        .status
        .success());
    assert!(git(dir, &["commit", "-q", "--allow-empty", "-m", "first"])
        .status
        .success());
    assert!(git(dir, &["config", "branch.master.remote", "origin"])
        .status
        .success());
    p
}

fn cordon_cmd(p: &Project, script: &str) -> Command {
    p.cordon(&["run", "--", "sh", "-c", script])
}

fn run(p: &Project, script: &str) -> Output {
    cordon_cmd(p, script).output().unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn config(p: &Project) -> String {
    std::fs::read_to_string(p.dir.join(".git/config")).unwrap()
}

/// `git config --file <host file> --get <key>` (the host's own git reads the result).
fn get(p: &Project, key: &str) -> Option<String> {
    let o = git(&p.dir, &["config", "--file", ".git/config", "--get", key]);
    o.status
        .success()
        .then(|| text(&o.stdout).trim().to_string())
}

fn sandbox_available(_: &Project) -> bool {
    support::sandbox_available()
}

/// The failing inputs: `git branch -m main` (`-M` is asked about), `git remote add origin …`, `git config
/// user.email …` work inside and land on the host. Still works: a commit, a plain `mv`
/// (a rename the broker lets the kernel run).
#[test]
fn allowed_git_config_edits_round_trip() {
    let p = project();
    if !sandbox_available(&p) {
        return;
    }
    let o = run(
        &p,
        "set -e; git branch -m main; git remote add origin https://example.com/r.git; \
         git config user.email me@example.com; git config init.defaultBranch trunk; \
         git config --get user.email; git commit -q --allow-empty -m inside; \
         touch a; mv a b; test -f b",
    );
    assert_eq!(o.status.code(), Some(0), "stderr: {}", text(&o.stderr));
    assert_eq!(text(&o.stdout).trim(), "me@example.com");
    assert_eq!(get(&p, "branch.main.remote").as_deref(), Some("origin"));
    assert_eq!(get(&p, "branch.master.remote"), None);
    assert_eq!(
        get(&p, "remote.origin.url").as_deref(),
        Some("https://example.com/r.git")
    );
    assert_eq!(
        get(&p, "remote.origin.fetch").as_deref(),
        Some("+refs/heads/*:refs/remotes/origin/*")
    );
    assert_eq!(get(&p, "user.email").as_deref(), Some("me@example.com"));
    assert_eq!(get(&p, "init.defaultbranch").as_deref(), Some("trunk"));
    let branches = text(&git(&p.dir, &["branch", "--show-current"]).stdout);
    assert_eq!(branches.trim(), "main");
    let stderr = text(&o.stderr);
    assert!(
        stderr.contains("merged back") && stderr.contains("user.email"),
        "{stderr}"
    );
    assert!(!p.dir.join(".git/config.lock").exists());
}

/// Keys that run code or redirect git never land: the host file is unchanged byte for
/// byte and the note names each key.
#[test]
fn code_running_keys_are_refused_by_name() {
    let p = project();
    if !sandbox_available(&p) {
        return;
    }
    let before = config(&p);
    // `--yes`: setting an alias or a command key asks first (nu65); the broker's refusal
    // is what is tested here.
    let o = support::out(p.cordon(&[
        "run",
        "--yes",
        "--",
        "sh",
        "-c",
        "git config core.fsmonitor ./fsm.sh; git config core.hooksPath .hk; \
         git config alias.x '!id'; git config filter.lfs.clean evil; \
         git config include.path ../evil.cfg; git config remote.origin.uploadpack evil; \
         git config core.sshCommand evil; git config credential.helper '!evil'; \
         git config remote.evil.url 'ext::sh -c id'; \
         git config url.https://evil.example/.insteadOf https://good.example/; \
         git config --get core.hooksPath",
    ]));
    assert_eq!(o.status.code(), Some(0), "stderr: {}", text(&o.stderr));
    assert_eq!(text(&o.stdout).trim(), ".hk", "the copy is writable inside");
    assert_eq!(config(&p), before, "the host file must not change");
    let stderr = text(&o.stderr);
    for k in [
        "core.fsmonitor",
        "core.hookspath",
        "alias.x",
        "filter.lfs.clean",
        "include.path",
        "remote.origin.uploadpack",
        "core.sshcommand",
        "credential.helper",
        "remote.evil.url",
        "url.https://evil.example/.insteadof",
    ] {
        assert!(stderr.contains(k), "{k} not named in: {stderr}");
    }
    assert!(!stderr.contains("merged back:"), "{stderr}");
}

/// Two runs at once, each editing a different allowed key: both edits survive (each
/// merge re-reads the host file under the lock and applies only its own changes).
#[test]
fn concurrent_runs_lose_no_allowed_edit() {
    let p = project();
    if !sandbox_available(&p) {
        return;
    }
    let a = cordon_cmd(&p, "git config user.name 'Run A' && sleep 1")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // B edits a little later (two gits taking the same `config.lock` at once fail, as on
    // the host) but both copies are made before either run ends.
    let b = cordon_cmd(
        &p,
        "sleep 0.4 && git config user.email b@example.com && sleep 1",
    )
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
    let (a, b) = (a.wait_with_output().unwrap(), b.wait_with_output().unwrap());
    assert_eq!(a.status.code(), Some(0), "{}", text(&a.stderr));
    assert_eq!(b.status.code(), Some(0), "{}", text(&b.stderr));
    assert_eq!(get(&p, "user.name").as_deref(), Some("Run A"));
    assert_eq!(get(&p, "user.email").as_deref(), Some("b@example.com"));
    assert_eq!(get(&p, "branch.master.remote").as_deref(), Some("origin"));
}

/// Escape test: a `config.lock` symlink planted by the command (pointing outside the
/// workspace) is never followed by the host side: its target is not created, the planted
/// name is removed (git never makes its lock a symlink), and the allowed edit lands.
#[test]
fn planted_config_lock_symlink_is_not_followed() {
    let p = project();
    if !sandbox_available(&p) {
        return;
    }
    let outside = p.root.path().join("outside.txt");
    let o = run(
        &p,
        &format!(
            "git config user.email planted@example.com && ln -s {} .git/config.lock",
            outside.display()
        ),
    );
    assert_eq!(o.status.code(), Some(0), "stderr: {}", text(&o.stderr));
    assert!(
        std::fs::symlink_metadata(&outside).is_err(),
        "the host side wrote through the planted symlink"
    );
    assert!(std::fs::symlink_metadata(p.dir.join(".git/config.lock")).is_err());
    assert_eq!(
        get(&p, "user.email").as_deref(),
        Some("planted@example.com")
    );
}

/// The last `--json` line on stderr.
fn json_report(o: &Output) -> serde_json::Value {
    let err = text(&o.stderr);
    serde_json::from_str(err.lines().last().unwrap_or_default())
        .unwrap_or_else(|e| panic!("no JSON report ({e}): {err}"))
}

/// Issue 11: a `config.lock` the command leaves in the host `.git` (a `git config` killed
/// mid-write leaves the same) would jam every later config write, on the host and in the
/// next sandbox. The helper removes it (it was created during the run and nobody has it
/// open), says so in `--json`, and both the host's git and the next run's work. Sibling: a
/// lock that was there before the run (a host git's) is never touched.
#[test]
fn a_left_config_lock_is_removed_and_git_config_works_after() {
    let p = project();
    if !sandbox_available(&p) {
        return;
    }
    let lock = p.dir.join(".git/config.lock");
    let o = p
        .cordon(&[
            "run",
            "--json",
            "--",
            "sh",
            "-c",
            "git config user.email left@example.com && echo half > .git/config.lock",
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "stderr: {}", text(&o.stderr));
    assert!(!lock.exists(), "the left lock stayed: {}", text(&o.stderr));
    let v = json_report(&o);
    let gc = &v["git_config"][0];
    assert_eq!(gc["lock_removed"], true, "{v}");
    assert_eq!(gc["merged"][0], "user.email", "{v}");
    assert!(gc["notes"].to_string().contains("removed the lock"), "{v}");
    // The host's git and the next run both write the config.
    assert!(git(&p.dir, &["config", "user.name", "host"])
        .status
        .success());
    let o = run(&p, "git config user.email next@example.com");
    assert_eq!(o.status.code(), Some(0), "stderr: {}", text(&o.stderr));
    assert_eq!(get(&p, "user.email").as_deref(), Some("next@example.com"));
    // A lock that exists before the run is a host git's: left alone, with a note.
    std::fs::write(&lock, "host git at work\n").unwrap();
    let o = run(&p, "true");
    assert_eq!(o.status.code(), Some(0), "stderr: {}", text(&o.stderr));
    assert_eq!(
        std::fs::read_to_string(&lock).unwrap(),
        "host git at work\n"
    );
}

/// Issue 11 §4: refused keys are in `--json` too, each with why and the command that makes
/// the change on the host, to run outside cordon if meant; the stderr note says the same.
#[test]
fn refused_keys_are_in_the_json_report_with_what_to_do() {
    let p = project();
    if !sandbox_available(&p) {
        return;
    }
    let o = p
        .cordon(&[
            "run",
            "--json",
            "--yes",
            "--",
            "sh",
            "-c",
            "git config core.fsmonitor ./fsm.sh && git config user.name json",
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "stderr: {}", text(&o.stderr));
    let v = json_report(&o);
    let gc = &v["git_config"][0];
    assert_eq!(gc["merged"][0], "user.name", "{v}");
    assert_eq!(gc["refused"][0]["key"], "core.fsmonitor", "{v}");
    assert!(gc["refused"][0]["why"]
        .as_str()
        .is_some_and(|w| !w.is_empty()));
    assert_eq!(
        gc["refused"][0]["host_command"], "git config core.fsmonitor ./fsm.sh",
        "{v}"
    );
    let err = text(&o.stderr);
    assert!(
        err.contains("If you mean it, run outside cordon: `git config core.fsmonitor ./fsm.sh`"),
        "{err}"
    );
    // nu18 F11: the outcome (what a harness reads first) says so too, and stderr says it
    // once.
    assert_eq!(v["outcome"], "success", "{v}");
    assert!(
        v["hint"]
            .as_str()
            .is_some_and(|h| h.contains("core.fsmonitor (if you mean it, run `git config core.fsmonitor ./fsm.sh` outside cordon)")),
        "{v}"
    );
    assert_eq!(
        err.lines()
            .filter(|l| l.starts_with("cordon:") && l.contains("run outside cordon"))
            .count(),
        1,
        "{err}"
    );
    // Nothing to report: an empty list, not null.
    let o = p.cordon(&["run", "--json", "--", "true"]).output().unwrap();
    assert_eq!(json_report(&o)["git_config"], serde_json::json!([]));
}

/// Issue 11 §3: `git init` in a workspace without a repository is refused (its `.git` is
/// protected as a whole) with a hint saying what to do; nothing is created. Sibling: the
/// `git -C . init` spelling gets the same hint.
#[test]
fn git_init_without_a_repository_is_refused_with_a_hint() {
    let root = tempfile::Builder::new()
        .prefix("cordon-tc-init-")
        .tempdir_in("/var/tmp")
        .unwrap();
    let dir = root.path().join("proj");
    std::fs::create_dir_all(dir.join(".cordon")).unwrap();
    std::fs::write(dir.join(".cordon/marker"), "").unwrap();
    let p = Project {
        dir: dir.canonicalize().unwrap(),
        home: root.path().canonicalize().unwrap(),
        root,
    };
    if !sandbox_available(&p) {
        return;
    }
    // `cordon run -- ARGV` in the project.
    let run = |argv: &[&str]| {
        Command::new(CORDON)
            .arg("run")
            .arg("--")
            .args(argv)
            .current_dir(&p.dir)
            .env("HOME", &p.home)
            .env("PWD", &p.dir)
            .stdin(Stdio::null())
            .output()
            .unwrap()
    };
    for argv in [&["git", "init"][..], &["git", "-C", ".", "init", "-q"][..]] {
        let o = run(argv);
        assert_ne!(o.status.code(), Some(0), "{argv:?}");
        let stderr = text(&o.stderr);
        assert!(
            stderr.contains("cordon: sandbox-denied: `git init` cannot create")
                && stderr.contains("Run `git init` once outside cordon"),
            "{argv:?}: {stderr}"
        );
        assert!(!p.dir.join(".git/HEAD").exists());
        assert!(
            stderr.contains("the workspace has no repository"),
            "{stderr}"
        );
    }
    // New-user pass 176, #5: then `git add`/`git status` fail with git's own "not a git
    // repository"; the hint says the .git it found is cordon's placeholder and how to make
    // the repository. Twin: a command that is not about a repository gets no such hint.
    std::fs::write(p.dir.join("x"), "x\n").unwrap();
    for argv in [&["git", "add", "x"][..], &["git", "status"][..]] {
        let o = run(argv);
        let stderr = text(&o.stderr);
        assert_ne!(o.status.code(), Some(0), "{argv:?}: {stderr}");
        assert!(
            stderr.contains("the workspace has no git repository")
                && stderr.contains("cordon's empty placeholder")
                && stderr.contains("-- git init"),
            "{argv:?}: {stderr}"
        );
    }
    let o = run(&["sh", "-c", "exit 3"]);
    assert!(
        !text(&o.stderr).contains("no git repository"),
        "{}",
        text(&o.stderr)
    );
    // nu23 Q9: `git init` of a writable grant names that directory, not the workspace.
    let data = p.home.join("data");
    std::fs::create_dir_all(&data).unwrap();
    let o = Command::new(CORDON)
        .arg("run")
        .arg("-w")
        .arg(&data)
        .args(["--", "git", "init", "-b", "main"])
        .arg(&data)
        .current_dir(&p.dir)
        .env("HOME", &p.home)
        .env("PWD", &p.dir)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stderr = text(&o.stderr);
    assert!(
        stderr.contains(&format!("{} has no repository", data.display()))
            && !stderr.contains("the workspace has no repository"),
        "{stderr}"
    );
    // nu15 N3: `git clone URL .` fails on the placeholder ("not an empty directory") and
    // `cargo init` exits 0 having made no repository: both are named, with what to do.
    let src = p.home.join("src");
    let ok = Command::new("git")
        .args(["init", "-q"])
        .arg(&src)
        .status()
        .unwrap();
    assert!(ok.success());
    let run = |argv: &[&str]| {
        Command::new(CORDON)
            .arg("run")
            .arg("--")
            .args(argv)
            .current_dir(&p.dir)
            .env("HOME", &p.home)
            .stdin(Stdio::null())
            .output()
            .unwrap()
    };
    let o = run(&["git", "clone", "-q", src.to_str().unwrap(), "."]);
    assert_ne!(o.status.code(), Some(0));
    let stderr = text(&o.stderr);
    // nu16 N4: no `-w …/.git` advice: the `.cordon` placeholder keeps `.` non-empty
    // whatever is granted, so that could never work.
    assert!(
        stderr.contains("`git clone` into the workspace itself")
            && stderr.contains("git clone URL NAME")
            && !stderr.contains("-w "),
        "{stderr}"
    );
    // nu16 N7: the hint is the outcome's, in --json too, also for the command inside a
    // script.
    let o = Command::new(CORDON)
        .args(["run", "--json", "--", "sh", "-c"])
        .arg(format!("git clone -q {} .", src.display()))
        .current_dir(&p.dir)
        .env("HOME", &p.home)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let v = support::last_json(&o.stderr);
    assert!(
        v["hint"]
            .as_str()
            .is_some_and(|h| h.contains("`git clone` into the workspace itself")),
        "{v}"
    );
    let o = run(&["sh", "-c", "echo not cargo; exit 0"]);
    assert!(
        !text(&o.stderr).contains("placeholder"),
        "twin: {}",
        text(&o.stderr)
    );
    if Command::new("cargo")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
    {
        let o = run(&["cargo", "init", "-q", "--name", "x"]);
        let stderr = text(&o.stderr);
        assert!(
            stderr.contains("cordon: note: cargo took cordon's protected placeholder"),
            "{stderr}"
        );
    }
}

/// Breaker (stop 8): a `config.lock` the command leaves as a directory (or FIFO) jammed
/// every later `git config` silently. It is left alone (never removed recursively) and the
/// report says so, with what to do.
#[test]
fn a_left_non_file_config_lock_is_reported() {
    let p = project();
    if !sandbox_available(&p) {
        return;
    }
    let lock = p.dir.join(".git/config.lock");
    let o = p
        .cordon(&[
            "run",
            "--json",
            "--",
            "sh",
            "-c",
            "git config user.email left@example.com && mkdir .git/config.lock",
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "stderr: {}", text(&o.stderr));
    assert!(lock.is_dir());
    let v = json_report(&o);
    let said = v["git_config"].to_string();
    assert!(said.contains("not a regular file"), "{v}");
    assert!(text(&o.stderr).contains("remove it"), "{}", text(&o.stderr));
}

/// New-user pass nu24, F4: `git commit` without `-m` and without a terminal fails at once
/// with git's own advice (it waited at vim's "Press ENTER" until the timeout: vim could
/// not write `~/.viminfo` in the read-only home). Twins: `-m` commits; a `GIT_EDITOR` of
/// the caller's, or an `EDITOR` that needs no terminal, is kept.
#[test]
fn an_editor_without_a_terminal_fails_at_once() {
    let p = project();
    if !sandbox_available(&p) {
        return;
    }
    // What the command gets, whether or not this host has a `vi`.
    let o = p
        .cordon(&["run", "--", "sh", "-c", "echo \"editor=$GIT_EDITOR\""])
        .env_remove("GIT_EDITOR")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(
        text(&o.stdout).starts_with("editor=cordon_editor()"),
        "{}",
        text(&o.stdout)
    );
    let t0 = std::time::Instant::now();
    let o = p
        .cordon(&[
            "run",
            "--timeout",
            "60s",
            "--",
            "git",
            "commit",
            "--allow-empty",
        ])
        .env("EDITOR", "vi")
        .env_remove("GIT_EDITOR")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(
        t0.elapsed() < std::time::Duration::from_secs(30),
        "waited for an editor"
    );
    assert_ne!(o.status.code(), Some(0));
    assert!(
        text(&o.stderr).contains("cordon: no terminal for the editor"),
        "{}",
        text(&o.stderr)
    );
    // nu27 F6: git quotes the whole GIT_EDITOR after the failure: a short one.
    assert!(
        text(&o.stderr).lines().all(|l| l.len() < 300),
        "{}",
        text(&o.stderr)
    );
    let o = p
        .cordon(&[
            "run",
            "--",
            "git",
            "commit",
            "-q",
            "--allow-empty",
            "-m",
            "x",
        ])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let o = p
        .cordon(&["run", "--", "git", "commit", "-q", "--allow-empty"])
        .env("GIT_EDITOR", "sh -c 'echo from-editor > \"$1\"' --")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let log = git(&p.dir, &["log", "-1", "--format=%s"]);
    assert_eq!(text(&log.stdout).trim(), "from-editor");
    // nu26 F1: Debian's `editor` alternative (a terminal editor) fails at once too, by
    // name or path, whether or not this host has it.
    for editor in ["sensible-editor", "/usr/bin/editor"] {
        let o = p
            .cordon(&[
                "run",
                "--timeout",
                "60s",
                "--",
                "git",
                "commit",
                "--allow-empty",
            ])
            .env("EDITOR", editor)
            .env_remove("GIT_EDITOR")
            .env_remove("VISUAL")
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert!(
            text(&o.stderr).contains("cordon: no terminal for the editor"),
            "{editor}: {}",
            text(&o.stderr)
        );
    }
    // nu25 F1: an editor given inside the command (`-c core.editor=true`) is git's choice
    // and runs.
    let o = p
        .cordon(&[
            "run",
            "--",
            "git",
            "-c",
            "core.editor=true",
            "commit",
            "-q",
            "--amend",
            "--allow-empty",
        ])
        .env_remove("GIT_EDITOR")
        .env_remove("EDITOR")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    // attack46 N2: a caller's editor that needs no terminal is kept.
    let o = p
        .cordon(&[
            "run",
            "--",
            "git",
            "commit",
            "-q",
            "--amend",
            "--allow-empty",
        ])
        .env_remove("GIT_EDITOR")
        .env("EDITOR", "true")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
}

/// New-user pass nu25, F4: in a `.cordon` package inside a repository, git uses the
/// enclosing repository, whose git dir is the command's project too: `git add` is offered
/// `-w <repo>/.git`, and the approved retry works with that repository's hooks still
/// read-only.
#[test]
fn a_cordon_package_in_a_repository_is_offered_its_git_dir() {
    let p = project();
    if !sandbox_available(&p) {
        return;
    }
    let pkg = p.dir.join("packages/app");
    std::fs::create_dir_all(pkg.join(".cordon")).unwrap();
    std::fs::write(pkg.join(".cordon/marker"), "").unwrap();
    std::fs::write(pkg.join("new.txt"), "x\n").unwrap();
    let answers = p.root.path().join("answers");
    std::fs::write(&answers, "\"once\"\n").unwrap();
    let hook = p.dir.join(".git/hooks/pre-commit");
    let o = p
        .cordon_in(
            &pkg,
            &[
                "run",
                "--approvals-from",
                answers.to_str().unwrap(),
                "--",
                "sh",
                "-c",
                &format!(
                    "git add new.txt && {{ echo evil > {} || true; }}",
                    hook.display()
                ),
            ],
        )
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let err = text(&o.stderr);
    assert!(
        err.contains("retrying with") && err.contains(".git\""),
        "{err}"
    );
    assert_eq!(o.status.code(), Some(0), "{err}");
    let staged = git(&p.dir, &["diff", "--cached", "--name-only"]);
    assert!(
        text(&staged.stdout).contains("packages/app/new.txt"),
        "{err}"
    );
    assert!(!hook.exists(), "the hook was written");
}
