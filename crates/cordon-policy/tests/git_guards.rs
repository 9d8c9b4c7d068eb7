//! Issue 7 items 4, 7, 9 and issue 8 §6 at the policy level (MemFs): deny entries keep
//! their place, planted special files are never read, `$TMPDIR` only becomes writable when
//! it is temp-like, a deny entry over the cwd is refused.
mod common;
use cordon_policy::*;
use std::path::{Path, PathBuf};

fn profile(entries: Vec<FsEntry>) -> PermissionProfile {
    let mut p = PermissionProfile::builtin("workspace-write").unwrap();
    p.filesystem = FilesystemPolicy::Restricted {
        default: Access::Read,
        entries,
        protect_metadata: true,
    };
    p
}

fn entries(r: &ResolvedProfile) -> &[ResolvedEntry] {
    match &r.filesystem {
        ResolvedFilesystem::Restricted { entries, .. } => entries,
        ResolvedFilesystem::Unrestricted => &[],
    }
}

fn access(r: &ResolvedProfile, fs: &dyn FsView, p: &str) -> Access {
    r.filesystem.access_for(fs, Path::new(p)).access
}

/// Item 4: the directories between the workspace and a deny entry are pinned (bound onto
/// themselves), so `mv conf conf2` cannot carry `conf/keys` out from under the deny.
#[test]
fn ancestors_of_deny_entries_are_pinned() {
    let fs = MemFs::new()
        .dir("/w/.git/objects")
        .file("/w/conf/keys/k.pem", "secret")
        .dir("/h");
    let p = profile(vec![
        FsEntry::new(":workspace", Access::Write),
        FsEntry::new("/w/conf/keys", Access::Deny).with_source("--deny-read"),
    ]);
    let r = resolve(&p, &common::ctx_at("/w", "/h"), &fs).unwrap();
    let pin = entries(&r)
        .iter()
        .find(|e| e.path == Path::new("/w/conf"))
        .expect("conf pinned");
    assert_eq!(
        pin.origin,
        EntryOrigin::Pinned {
            protects: "/w/conf/keys".into()
        }
    );
    assert_eq!(pin.access, Access::Write);
    assert_eq!(access(&r, &fs, "/w/conf/keys/k.pem"), Access::Deny);
    assert_eq!(access(&r, &fs, "/w/conf/other"), Access::Write);
    // Without metadata protection the deny keeps its place all the same.
    let mut p = p;
    if let FilesystemPolicy::Restricted {
        protect_metadata, ..
    } = &mut p.filesystem
    {
        *protect_metadata = false;
    }
    let r = resolve(&p, &common::ctx_at("/w", "/h"), &fs).unwrap();
    assert!(entries(&r)
        .iter()
        .any(|e| e.path == Path::new("/w/conf") && matches!(e.origin, EntryOrigin::Pinned { .. })));
}

/// Item 4: a configured deny path that does not exist is reported, never silently
/// skipped; the built-in credential stores that do not exist are not noise.
#[test]
fn missing_deny_paths_are_reported() {
    let fs = MemFs::new().dir("/w/.git/objects").dir("/w/conf").dir("/h");
    let mut p = PermissionProfile::builtin("workspace-write").unwrap();
    if let FilesystemPolicy::Restricted { entries, .. } = &mut p.filesystem {
        entries.push(FsEntry::new("/w/conf/keys", Access::Deny).with_source("--deny-read"));
    }
    let r = resolve(&p, &common::ctx_at("/w", "/h"), &fs).unwrap();
    let hits: Vec<&String> = r
        .notes
        .iter()
        .filter(|n| n.contains("does not exist"))
        .collect();
    assert_eq!(hits.len(), 1, "{:?}", r.notes);
    assert!(hits[0].contains("/w/conf/keys"), "{hits:?}");
}

/// Issue 8 §6: `--deny-read ..` from a subdirectory of the workspace (the deny then
/// decides the cwd) is refused up front, naming the path, instead of failing inside the
/// sandbox with "No such file or directory". `resolve` itself stays total.
#[test]
fn deny_over_the_cwd_is_refused() {
    let fs = MemFs::new()
        .dir("/p/w/.git/objects")
        .dir("/p/w/sub")
        .dir("/h");
    for (cwd, d) in [
        ("/p/w/sub", "/p/w"),
        ("/p/w/sub", "/p/w/sub"),
        ("/p/w", "/p/w"),
    ] {
        let p = profile(vec![
            FsEntry::new(":workspace", Access::Write),
            FsEntry::new(d, Access::Deny),
        ]);
        match resolve_for_command(&p, &common::ctx_at(cwd, "/h"), &fs) {
            Err(ResolveError::DenyCoversCwd { path, .. }) => assert_eq!(path, PathBuf::from(d)),
            other => panic!("{cwd} {d}: {other:?}"),
        }
        assert!(resolve(&p, &common::ctx_at(cwd, "/h"), &fs).is_ok());
    }
    // Still works: a deny above the workspace (re-opened by the deeper workspace grant)
    // and a sibling are fine.
    for d in ["/p", "/p/other"] {
        let p = profile(vec![
            FsEntry::new(":workspace", Access::Write),
            FsEntry::new(d, Access::Deny),
        ]);
        assert!(resolve_for_command(&p, &common::ctx_at("/p/w/sub", "/h"), &fs).is_ok());
    }
}

/// Item 7: a `.git` that is a FIFO or a device (MemFs `special`) is never read; the
/// refusal names the path, and the `.git` stays protected.
#[test]
fn special_dot_git_files_are_refused_by_name() {
    for kind in ["fifo", "character device"] {
        let fs = MemFs::new()
            .dir("/w/.git/objects")
            .special("/w/sub/.git", kind)
            .dir("/h");
        let p = profile(vec![FsEntry::new(":workspace", Access::Write)]);
        let r = resolve(&p, &common::ctx_at("/w/sub", "/h"), &fs).unwrap();
        assert_eq!(r.workspace, PathBuf::from("/w/sub"));
        assert!(
            r.notes
                .iter()
                .any(|n| n.contains("/w/sub/.git") && n.contains(kind)),
            "{kind}: {:?}",
            r.notes
        );
        assert_eq!(access(&r, &fs, "/w/sub/.git"), Access::Read);
    }
    // A linked worktree whose `commondir` was replaced by a FIFO is not trusted.
    let fs = MemFs::new()
        .file("/w/.git", "gitdir: /r/.git/worktrees/w\n")
        .file("/r/.git/worktrees/w/gitdir", "/w/.git\n")
        .special("/r/.git/worktrees/w/commondir", "fifo")
        .file("/r/.git/HEAD", "ref: refs/heads/main\n")
        .dir("/r/.git/objects")
        .dir("/r/.git/refs")
        .dir("/h");
    let p = profile(vec![FsEntry::new(":workspace", Access::Write)]);
    let r = resolve(&p, &common::ctx_at("/w", "/h"), &fs).unwrap();
    assert!(
        r.notes
            .iter()
            .any(|n| n.contains("/r/.git/worktrees/w/commondir") && n.contains("fifo")),
        "{:?}",
        r.notes
    );
    assert_eq!(access(&r, &fs, "/r/.git/objects/x"), Access::Read);
}

fn tmp_profile() -> PermissionProfile {
    profile(vec![
        FsEntry::new(":workspace", Access::Write),
        FsEntry::new(":tmp", Access::Write),
        FsEntry::new("~/.ssh", Access::Deny),
    ])
}

fn with_tmpdir(t: &str) -> ResolveContext {
    let mut c = common::ctx_at("/home/u/w", "/home/u");
    c.tmpdir = Some(t.into());
    c.profile_files = vec!["/home/u/.config/cordon/config.toml".into()];
    c
}

/// Item 9: `$TMPDIR` of `/usr`, `/etc`, `<ws>/.git/hooks`, a dotdir under home, a
/// credential store or a directory holding the cordon config is not made writable, and a
/// note says so; a real temp dir is.
#[test]
fn tmpdir_becomes_writable_only_when_temp_like() {
    let fs = MemFs::new()
        .dir("/home/u/w/.git/hooks")
        .dir("/home/u/.ssh")
        .dir("/home/u/.config/cordon")
        .dir("/home/u/tmp")
        .dir("/usr/tmp")
        .dir("/etc")
        .dir("/tmp/u-1000")
        .dir("/var/tmp/x")
        .dir("/home/u/.ssh/tmp")
        .symlink("/tmp/sneaky", "/etc");
    for (t, probe) in [
        ("/usr", "/usr/bin/x"),
        ("/usr/tmp", "/usr/tmp/x"),
        ("/etc", "/etc/x"),
        ("/tmp/sneaky", "/etc/x"),
        ("/home/u/w/.git/hooks", "/home/u/w/.git/hooks/pre-commit"),
        ("/home/u/.config", "/home/u/.config/cordon/config.toml"),
        ("/home/u/.ssh/tmp", "/home/u/.ssh/tmp/x"),
    ] {
        let r = resolve(&tmp_profile(), &with_tmpdir(t), &fs).unwrap();
        assert_ne!(access(&r, &fs, probe), Access::Write, "{t}");
        assert!(
            r.notes
                .iter()
                .any(|n| n.contains(t) && n.contains("dropped")
                    || n.contains("$TMPDIR") && n.contains(t)),
            "{t}: {:?}",
            r.notes
        );
    }
    // Still works: real temp dirs become writable, with no note.
    for t in ["/tmp/u-1000", "/var/tmp/x", "/home/u/tmp"] {
        let r = resolve(&tmp_profile(), &with_tmpdir(t), &fs).unwrap();
        assert_eq!(access(&r, &fs, &format!("{t}/f")), Access::Write, "{t}");
        assert!(
            !r.notes.iter().any(|n| n.contains("$TMPDIR")),
            "{t}: {:?}",
            r.notes
        );
    }
}

/// Item 3: `core.hooksPath = .githooks` (husky) makes `.githooks` protected, whether or not
/// it exists, named with its key; an include in the global config that points into the
/// workspace and the commands it defines are protected too; the rest stays writable.
#[test]
fn git_config_code_paths_are_protected_by_key() {
    let fs = MemFs::new()
        .file(
            "/w/.git/config",
            "[core]\n\thooksPath = .githooks\n[alias]\n\tb = !tools/build.sh\n",
        )
        .file("/h/.gitconfig", "[include]\n\tpath = /w/team.gitconfig\n")
        .file(
            "/w/team.gitconfig",
            "[filter \"crypt\"]\n\tsmudge = ./bin/decrypt\n",
        )
        .dir("/w/src");
    let p = profile(vec![FsEntry::new(":workspace", Access::Write)]);
    let r = resolve(&p, &common::ctx_at("/w", "/h"), &fs).unwrap();
    for (path, key) in [
        ("/w/.githooks/pre-commit", "core.hooksPath"),
        ("/w/tools/build.sh", "alias.b"),
        ("/w/team.gitconfig", "include.path"),
        ("/w/bin/decrypt", "filter.crypt.smudge"),
    ] {
        let a = r.filesystem.access_for(&fs, Path::new(path));
        assert_eq!(a.access, Access::Read, "{path}");
        let e = &entries(&r)[a.entry.unwrap()];
        match &e.origin {
            EntryOrigin::Protected { reason } => assert!(reason.contains(key), "{reason}"),
            o => panic!("{path}: {o:?}"),
        }
    }
    assert_eq!(access(&r, &fs, "/w/src/main.rs"), Access::Write);
    assert_eq!(access(&r, &fs, "/w/tools/other.sh"), Access::Write);
    // The missing hooks dir is marked as a directory (its placeholder must be one).
    let hooks = entries(&r)
        .iter()
        .find(|e| e.path == Path::new("/w/.githooks"))
        .unwrap();
    assert!(!hooks.exists && hooks.is_dir);
    // The same in environment_context: the path with the key in its reason.
    let xml = environment_context(
        &r,
        &SandboxStatus::new(
            &select_initial(
                &p,
                SandboxPreference::Auto,
                false,
                Os::Linux,
                Default::default(),
            ),
            Ok(()),
            true,
        ),
        Backend::LinuxHelper,
        DEFAULT_APPROVAL_MODE,
    );
    assert!(
        xml.contains("/w/.githooks") && xml.contains("core.hooksPath"),
        "{xml}"
    );
}

/// The README's git configuration table lists every key of `CODE_KEYS` (spelled
/// `section.<name>.key` for keys with a subsection).
#[test]
fn readme_lists_every_code_key() {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../README.md"))
        .unwrap()
        .to_ascii_lowercase();
    for (section, sub, key, _, _) in cordon_policy::gitconfig::CODE_KEYS {
        let spelled = match (sub, *key) {
            // A fixed subsection (`gpg.ssh.defaultKeyCommand`, breaker5 LOW-3) is spelled out.
            (Some(s), k) if *s != "*" => format!("`{section}.{s}.{k}`"),
            (Some(_), k) => format!("`{section}.<name>.{k}`"),
            (None, "*") => format!("`{section}.<name>`"),
            (None, k) => format!("`{section}.{k}`"),
        };
        assert!(readme.contains(&spelled), "README lacks {spelled}");
    }
}

/// Item 4 sibling: a deny spelled through a symlink inside the workspace pins the real
/// directory and says that the symlink could be re-pointed.
#[test]
fn deny_through_a_workspace_symlink_is_pinned_and_noted() {
    let fs = MemFs::new()
        .dir("/w/.git/objects")
        .file("/w/conf/keys/k.pem", "secret")
        .symlink("/w/link", "/w/conf")
        .dir("/h");
    let p = profile(vec![
        FsEntry::new(":workspace", Access::Write),
        FsEntry::new("/w/link/keys", Access::Deny).with_source("--deny-read"),
    ]);
    let r = resolve(&p, &common::ctx_at("/w", "/h"), &fs).unwrap();
    assert_eq!(access(&r, &fs, "/w/conf/keys/k.pem"), Access::Deny);
    assert!(entries(&r)
        .iter()
        .any(|e| e.path == Path::new("/w/conf") && matches!(e.origin, EntryOrigin::Pinned { .. })));
    assert!(
        r.notes
            .iter()
            .any(|n| n.contains("/w/link/keys") && n.contains("symlink")),
        "{:?}",
        r.notes
    );
}

fn ctx_with_env(env: &[(&str, &str)]) -> ResolveContext {
    let mut c = common::ctx_at("/w", "/h");
    c.env = cordon_policy::locations::context_env(env.iter().copied());
    c
}

fn protected_reason(r: &ResolvedProfile, fs: &MemFs, path: &str) -> String {
    let a = r.filesystem.access_for(fs, Path::new(path));
    assert_eq!(a.access, Access::Read, "{path}");
    match &entries(r)[a.entry.unwrap()].origin {
        EntryOrigin::Protected { reason } => reason.clone(),
        o => panic!("{path}: {o:?}"),
    }
}

/// breaker4 HIGH-3: git configuration given through the environment is part of the
/// effective configuration: `GIT_CONFIG_COUNT` pairs, `GIT_CONFIG_PARAMETERS` (what
/// `git -c` passes on), `$GIT_CONFIG_GLOBAL`, `$GIT_CONFIG_SYSTEM` and
/// `$XDG_CONFIG_HOME/git/config` (read as well as the fixed files).
#[test]
fn git_config_from_the_environment_is_protected_like_the_files() {
    let fs = MemFs::new()
        .file("/w/.git/config", "")
        .dir("/w/src")
        .file("/etc/ci/gitconfig", "[alias]\n\tci = !./ci/run.sh\n")
        .file("/xdg/git/config", "[core]\n\tfsmonitor = tools/fsmon\n")
        .file("/sys-cfg", "[diff \"x\"]\n\ttextconv = ./bin/conv\n");
    let p = profile(vec![FsEntry::new(":workspace", Access::Write)]);
    let r = resolve(
        &p,
        &ctx_with_env(&[
            ("GIT_CONFIG_COUNT", "2"),
            ("GIT_CONFIG_KEY_0", "user.name"),
            ("GIT_CONFIG_VALUE_0", "Bob"),
            ("GIT_CONFIG_KEY_1", "core.hooksPath"),
            ("GIT_CONFIG_VALUE_1", ".githooks"),
            (
                "GIT_CONFIG_PARAMETERS",
                "'filter.crypt.smudge'='./bin/it'\\''s' 'alias.x=!scripts/x.sh' 'core.bare'",
            ),
            ("GIT_CONFIG_GLOBAL", "/etc/ci/gitconfig"),
            ("GIT_CONFIG_SYSTEM", "/sys-cfg"),
            ("XDG_CONFIG_HOME", "/xdg"),
        ]),
        &fs,
    )
    .unwrap();
    for (path, key, by) in [
        (
            "/w/.githooks/pre-commit",
            "core.hooksPath",
            "$GIT_CONFIG_KEY_1",
        ),
        (
            "/w/bin/it's",
            "filter.crypt.smudge",
            "$GIT_CONFIG_PARAMETERS",
        ),
        ("/w/scripts/x.sh", "alias.x", "$GIT_CONFIG_PARAMETERS"),
        ("/w/ci/run.sh", "alias.ci", "/etc/ci/gitconfig"),
        ("/w/tools/fsmon", "core.fsmonitor", "/xdg/git/config"),
        ("/w/bin/conv", "diff.x.textconv", "/sys-cfg"),
    ] {
        let reason = protected_reason(&r, &fs, path);
        assert!(
            reason.contains(key) && reason.contains(&format!("in {by}:")),
            "{path}: {reason}"
        );
    }
    let hooks = entries(&r)
        .iter()
        .find(|e| e.path == Path::new("/w/.githooks"))
        .unwrap();
    assert!(!hooks.exists && hooks.is_dir);
    assert_eq!(access(&r, &fs, "/w/src/main.rs"), Access::Write);
    assert!(r.notes.is_empty(), "{:?}", r.notes);
    // Without the environment none of it is protected.
    let r = resolve(&p, &common::ctx_at("/w", "/h"), &fs).unwrap();
    assert_eq!(access(&r, &fs, "/w/.githooks/pre-commit"), Access::Write);
}

/// breaker4 HIGH-3, MEDIUM-3b: a `$GIT_CONFIG_GLOBAL` file, or `$XDG_CONFIG_HOME/git/config`
/// and `attributes`, inside a writable root stays read-only (a placeholder when missing),
/// like `.git/config`; `/dev/null` names no file.
#[test]
fn git_config_files_placed_by_the_environment_in_the_workspace_are_protected() {
    let fs = MemFs::new()
        .file("/w/.git/config", "")
        .file("/w/.gcfg", "[user]\n\temail = a@b\n")
        .dir("/w/src");
    let p = profile(vec![FsEntry::new(":workspace", Access::Write)]);
    let r = resolve(
        &p,
        &ctx_with_env(&[
            ("GIT_CONFIG_GLOBAL", "/w/.gcfg"),
            ("XDG_CONFIG_HOME", "/w/.xdg"),
            ("GIT_CONFIG_SYSTEM", "/dev/null"),
        ]),
        &fs,
    )
    .unwrap();
    for (path, by) in [
        ("/w/.gcfg", "$GIT_CONFIG_GLOBAL"),
        ("/w/.xdg/git/config", "$XDG_CONFIG_HOME/git/config"),
        ("/w/.xdg/git/attributes", "$XDG_CONFIG_HOME/git/attributes"),
    ] {
        let reason = protected_reason(&r, &fs, path);
        assert!(reason.contains(by), "{path}: {reason}");
    }
    assert!(entries(&r)
        .iter()
        .any(|e| e.path == Path::new("/w/.xdg/git/config") && !e.exists && !e.is_dir));
    assert_eq!(access(&r, &fs, "/w/.xdg/other/x"), Access::Write);
    assert!(r.notes.is_empty(), "{:?}", r.notes);
}

/// With the built-in list, an existing `$GIT_CONFIG_GLOBAL` in the workspace is the
/// stripped-config deny (a read-only copy on the namespace backend); a missing
/// `$XDG_CONFIG_HOME/git/config` there still gets its protected placeholder.
#[test]
fn env_git_config_in_the_workspace_with_the_builtin_list() {
    let fs = MemFs::new()
        .file("/w/.git/config", "")
        .file("/w/.gcfg", "[user]\n\temail = a@b\n")
        .dir("/w/src");
    let p = select_profile(None, Some("workspace-write")).unwrap();
    let r = resolve(
        &p,
        &ctx_with_env(&[
            ("GIT_CONFIG_GLOBAL", "/w/.gcfg"),
            ("XDG_CONFIG_HOME", "/w/.xdg"),
        ]),
        &fs,
    )
    .unwrap();
    assert!(r.stripped.iter().any(|f| f.path == Path::new("/w/.gcfg")));
    // The missing file's placeholder, not the empty deny, decides (the backends take one
    // entry per path).
    let a = r
        .filesystem
        .access_for(&fs, Path::new("/w/.xdg/git/config"));
    assert_eq!(a.access, Access::Read);
    assert!(matches!(
        entries(&r)[a.entry.unwrap()].origin,
        EntryOrigin::Protected { .. }
    ));
    assert!(r
        .filesystem
        .layered()
        .iter()
        .any(|e| e.path == Path::new("/w/.xdg/git/config")
            && matches!(e.origin, EntryOrigin::Protected { .. })));
    assert!(entries(&r)
        .iter()
        .any(|e| e.path == Path::new("/w/.xdg/git/attributes")
            && matches!(e.origin, EntryOrigin::Protected { .. })));
}

/// Attack pass 186 F5: a `.git` file planted in the project that points at another
/// repository's linked worktree (its backlink names elsewhere) leaves that repository
/// read-only, and its config is not given a writable copy (git's `config.lock` beside it
/// could not be made; the copy made every later run per-command); the workspace's own
/// repository's config still is.
#[test]
fn only_configs_of_writable_git_dirs_are_brokered() {
    let fs = MemFs::new()
        .dir("/w/.git/objects")
        .file("/w/.git/HEAD", "ref: refs/heads/main\n")
        .file("/w/.git/config", "[core]\n")
        .file("/w/n2/.git", "gitdir: /r/.git/worktrees/wt\n")
        .file("/r/.git/worktrees/wt/gitdir", "/elsewhere/wt/.git\n")
        .file("/r/.git/worktrees/wt/commondir", "../..\n")
        .file("/r/.git/HEAD", "ref: refs/heads/main\n")
        .file("/r/.git/config", "[core]\n")
        .dir("/r/.git/objects")
        .dir("/r/.git/refs")
        .dir("/h");
    let p = profile(vec![FsEntry::new(":workspace", Access::Write)]);
    for cwd in ["/w/n2", "/w"] {
        let r = resolve(&p, &common::ctx_at(cwd, "/h"), &fs).unwrap();
        assert_eq!(access(&r, &fs, "/r/.git/config"), Access::Read, "{cwd}");
        let brokered = gitconfig::brokered_configs(&r);
        assert!(
            !brokered.contains(&PathBuf::from("/r/.git/config")),
            "{cwd}: {brokered:?}"
        );
    }
    let r = resolve(&p, &common::ctx_at("/w", "/h"), &fs).unwrap();
    assert!(
        gitconfig::brokered_configs(&r).contains(&PathBuf::from("/w/.git/config")),
        "{:?}",
        gitconfig::brokered_configs(&r)
    );
}
