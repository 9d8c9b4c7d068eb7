//! `cordon explain`'s model: effective access, the deciding entry with its source, a hint,
//! the network decision, the R-S1 rule, the backend and what the host lacks.
mod common;
use cordon_policy::*;
use std::path::{Path, PathBuf};

const CONFIG: &str = r#"
[profiles.dev]
extends = "workspace-write"

[profiles.dev.filesystem]
entries = [
  { path = ":workspace/vendor", access = "read" },
  { path = "/data/shared", access = "write" },
]
"#;

fn fs() -> MemFs {
    MemFs::new()
        .dir("/home/u/proj/.git/hooks")
        .file("/home/u/proj/.git/config", "")
        .dir("/home/u/proj/src")
        .dir("/home/u/proj/vendor")
        .file("/home/u/proj/vendor/lib.rs", "")
        .file("/etc/hosts", "")
        .file("/etc/it's \"here\"", "")
        .dir("/home/u/.ssh")
        .dir("/data/shared")
        .dir("/data/other")
        .symlink("/home/u/proj/out", "/data/other")
        .symlink("/home/u/proj/shared", "/data/shared")
        .dir("/tmp")
}

fn ctx() -> ResolveContext {
    common::ctx_at("/home/u/proj", "/home/u")
}

fn dev() -> PermissionProfile {
    let c = Config::parse(CONFIG, Path::new("/home/u/.config/cordon/config.toml")).unwrap();
    c.profile("dev").unwrap()
}

/// `p` resolved on `fs` for Linux, with its selection and a ready status: what
/// [`explain_judged`] takes besides the paths.
fn resolved_on_linux(
    fs: &MemFs,
    p: &PermissionProfile,
) -> (ResolvedProfile, Selection, SandboxStatus) {
    let r = resolve(p, &ctx(), fs).unwrap();
    let sel = select_initial(
        p,
        SandboxPreference::Auto,
        false,
        Os::Linux,
        Default::default(),
    );
    let status = SandboxStatus::new(&sel, Ok(()), true);
    (r, sel, status)
}

fn run(p: &PermissionProfile, paths: &[&str], os: Os, prepared: Result<(), String>) -> Explanation {
    let fs = fs();
    let r = resolve(p, &ctx(), &fs).unwrap();
    let sel = select_initial(p, SandboxPreference::Auto, false, os, Default::default());
    let missing = prepared.clone().err();
    let status = SandboxStatus::new(&sel, prepared, true);
    let paths: Vec<PathBuf> = paths.iter().map(PathBuf::from).collect();
    explain(&r, &fs, &paths, &sel, &status, missing.as_deref())
}

#[test]
fn protected_path_under_git() {
    let e = run(&dev(), &[".git/hooks/pre-commit"], Os::Linux, Ok(()));
    let p = &e.paths[0];
    assert_eq!(
        p.absolute,
        PathBuf::from("/home/u/proj/.git/hooks/pre-commit")
    );
    assert_eq!(p.access, Access::Read);
    assert!(matches!(
        &p.decided_by,
        Decider::Protected { reason, path } if reason == "git hooks run code"
            && path == Path::new("/home/u/proj/.git/hooks")
    ));
    let hint = p.hint.as_deref().unwrap();
    assert!(
        hint.contains("R-P3") && hint.contains(r#"path = "/home/u/proj/.git/hooks""#),
        "{hint}"
    );
    // the index is writable: git commit works
    let e = run(&dev(), &[".git/index"], Os::Linux, Ok(()));
    assert_eq!(e.paths[0].access, Access::Write);
    assert!(e.paths[0].hint.is_none());
}

#[test]
fn credential_store_names_the_builtin() {
    let e = run(&dev(), &["/home/u/.ssh/id_ed25519"], Os::Linux, Ok(()));
    let p = &e.paths[0];
    assert_eq!(p.access, Access::Deny);
    assert_eq!(
        p.decided_by,
        Decider::Entry {
            spelling: ":home/.ssh".into(),
            source: Some("built-in workspace-write".into()),
            path: "/home/u/.ssh".into(),
        }
    );
    let hint = p.hint.as_deref().unwrap();
    assert!(hint.contains("credential store"), "{hint}");
    assert!(
        hint.contains(r#"{ path = "/home/u/.ssh/id_ed25519", access = "read" }"#)
            && hint.contains(
                r#"--with '{"entries":[{"access":"read","path":"/home/u/.ssh/id_ed25519"}]}'"#
            ),
        "{hint}"
    );
}

/// A read entry for the very path a deny names would lose the tie (R-P2): the hint says
/// so instead of suggesting it.
#[test]
fn deny_on_the_exact_path() {
    let e = run(&dev(), &["/home/u/.ssh"], Os::Linux, Ok(()));
    let hint = e.paths[0].hint.as_deref().unwrap();
    assert!(
        hint.contains("denies this exact path") && hint.contains("built-in workspace-write"),
        "{hint}"
    );
    assert!(!hint.contains("access = \"read\""), "{hint}");
    // A directory has paths beneath it to allow.
    assert!(
        hint.contains("or allow a path beneath it instead"),
        "{hint}"
    );
}

/// New-user pass 150, item 5: "allow a path beneath it" was offered for a file that a deny
/// names (`~/.npmrc` missing, `/etc/shadow`): only a directory has paths beneath it.
#[test]
fn a_denied_file_is_not_offered_a_path_beneath_it() {
    // Present and missing alike.
    let fs = fs().file("/etc/shadow", "");
    let p = dev();
    let (r, sel, status) = resolved_on_linux(&fs, &p);
    for path in ["/home/u/.npmrc", "/etc/shadow"] {
        let e = explain(&r, &fs, &[PathBuf::from(path)], &sel, &status, None);
        let hint = e.paths[0].hint.as_deref().unwrap();
        assert!(hint.contains("denies this exact path"), "{path}: {hint}");
        assert!(!hint.contains("beneath"), "{path}: {hint}");
    }
}

#[test]
fn config_entry_with_line() {
    let e = run(&dev(), &["vendor/lib.rs"], Os::Linux, Ok(()));
    let p = &e.paths[0];
    assert_eq!(p.access, Access::Read);
    assert_eq!(
        p.decided_by,
        Decider::Entry {
            spelling: ":workspace/vendor".into(),
            source: Some("/home/u/.config/cordon/config.toml:7".into()),
            path: "/home/u/proj/vendor".into(),
        }
    );
    let hint = p.hint.as_deref().unwrap();
    assert!(
        hint.starts_with("edit the entry at /home/u/.config/cordon/config.toml:7")
            && hint.contains("-w /home/u/proj/vendor/lib.rs"),
        "{hint}"
    );
}

#[test]
fn symlinked_paths_show_both_spellings() {
    let e = run(&dev(), &["out/x", "shared/y"], Os::Linux, Ok(()));
    // out -> /data/other: both spellings are shown.
    let p = &e.paths[0];
    assert_eq!(p.absolute, PathBuf::from("/home/u/proj/out/x"));
    assert_eq!(p.canonical, Some(PathBuf::from("/data/other/x")));
    assert!(e
        .to_string()
        .contains("/home/u/proj/out/x (-> /data/other/x)"));
    // shared -> /data/shared, which the config entry makes writable.
    let q = &e.paths[1];
    assert_eq!(q.canonical, Some(PathBuf::from("/data/shared/y")));
    assert_eq!(q.access, Access::Write);
}

#[test]
fn default_read_and_network_and_sandbox() {
    let e = run(
        &dev(),
        &["/etc/hosts"],
        Os::Linux,
        Err("landlock not available (kernel 5.10)".into()),
    );
    let p = &e.paths[0];
    assert_eq!(
        p.decided_by,
        Decider::Default {
            access: Access::Read
        }
    );
    assert!(p.hint.as_deref().unwrap().contains("-w /etc/hosts"));
    assert_eq!(e.network.mode, NetworkPolicy::Restricted);
    assert!(e
        .network
        .hint
        .as_deref()
        .unwrap()
        .contains(r#"network = "enabled""#));
    assert_eq!(e.sandbox.rule, ShouldSandboxRule::NetworkRestricted);
    assert_eq!(
        e.sandbox.rule_text,
        ShouldSandboxRule::NetworkRestricted.describe()
    );
    assert_eq!(e.sandbox.backend, Backend::LinuxHelper);
    assert!(!e.sandbox.status.sandbox_enabled.value);
    assert_eq!(
        e.host_missing.as_deref(),
        Some("landlock not available (kernel 5.10)")
    );
    assert!(
        e.enforcement.starts_with("NOT enforced"),
        "{}",
        e.enforcement
    );
    let text = e.to_string();
    assert!(
        text.contains("host lacks: landlock not available (kernel 5.10)"),
        "{text}"
    );
}

#[test]
fn disabled_and_external_profiles() {
    let e = run(
        &PermissionProfile::builtin("danger-full-access").unwrap(),
        &["/etc/passwd"],
        Os::Linux,
        Ok(()),
    );
    assert_eq!(e.paths[0].access, Access::Write);
    assert_eq!(e.paths[0].decided_by, Decider::Unrestricted);
    assert!(e.paths[0].hint.is_none());
    assert_eq!(e.sandbox.rule, ShouldSandboxRule::FullAccess);
    assert_eq!(e.sandbox.backend, Backend::None);

    let mut p = dev();
    p.kind = ProfileKind::External;
    let e = run(&p, &["/etc/hosts"], Os::Linux, Ok(()));
    assert!(e.paths[0].hint.as_deref().unwrap().contains("external"));
    assert_eq!(e.enforcement, "the caller (external profile)");
}

#[test]
fn hint_quotes_awkward_paths() {
    let e = run(&dev(), &["/etc/it's \"here\""], Os::Linux, Ok(()));
    let hint = e.paths[0].hint.as_deref().unwrap();
    // TOML string and shell word are both escaped by their libraries.
    assert!(hint.contains(r#"path = "/etc/it's \"here\"""#), "{hint}");
    assert!(hint.contains(r#"-w "/etc/it's \"here\"""#), "{hint}");
}

#[test]
fn text_and_json() {
    let e = run(
        &dev(),
        &[
            ".git/hooks/pre-commit",
            "/home/u/.ssh/id_ed25519",
            "vendor/lib.rs",
            "out/x",
            "src/main.rs",
        ],
        Os::Linux,
        Ok(()),
    );
    insta::assert_snapshot!("explain_text", e.to_string());
    let json = serde_json::to_value(&e).unwrap();
    assert_eq!(json["paths"][0]["decided_by"]["kind"], "protected");
    assert_eq!(
        json["paths"][2]["decided_by"]["source"],
        "/home/u/.config/cordon/config.toml:7"
    );
    assert_eq!(json["sandbox"]["rule"], "network-restricted");
    insta::assert_json_snapshot!("explain_json", e);
}

/// Issue 8 §1: a host file under `/tmp` that no entry grants is hidden by the private
/// `/tmp` on Linux (the sandbox shows an empty one); explain says so, with the fix, instead
/// of "read-only". Sibling: granted, it is readable; on macOS (no private /tmp) it is read.
#[test]
fn host_tmp_paths_are_reported_hidden_with_the_fix() {
    let e = run(&dev(), &["/tmp/x.sh"], Os::Linux, Ok(()));
    let p = &e.paths[0];
    assert_eq!(p.decided_by, Decider::PrivateTmp);
    assert_eq!(p.access, Access::Deny);
    let hint = p.hint.as_deref().unwrap();
    assert!(
        hint.contains("--with") && hint.contains("/tmp/x.sh"),
        "{hint}"
    );
    assert!(e.to_string().contains("hidden (private /tmp)"), "{e}");
    // The private /tmp itself is writable.
    let e = run(&dev(), &["/tmp"], Os::Linux, Ok(()));
    assert_eq!(e.paths[0].access, Access::Write);
    // Granted through --with: visible, readable, and the merged profile keeps the entry.
    let fs = fs().dir("/tmp/r.git");
    let extra: AdditionalPermissions =
        serde_json::from_str(r#"{"entries":[{"path":"/tmp/r.git","access":"read"}]}"#).unwrap();
    let merged = merge(&dev(), &extra, &ctx(), &fs).unwrap();
    let r = resolve(&merged, &ctx(), &fs).unwrap();
    assert_eq!(
        r.filesystem.seen(&fs, Path::new("/tmp/r.git/HEAD")),
        Seen::Host(Access::Read)
    );
    let e = run(&dev(), &["/tmp/x.sh"], Os::Macos, Ok(()));
    assert_ne!(e.paths[0].decided_by, Decider::PrivateTmp);
}

/// Breaker (stop 18): `/dev` and `/proc` are rebuilt inside the Linux sandbox, so explain
/// says what the command sees there — a private, writable `/dev/shm`, the sandbox's own
/// `/proc` — with no profile change to offer, instead of the host's "read-only" and a
/// grant that would be dropped. On macOS the profile decides (sibling).
#[test]
fn rebuilt_trees_are_explained_as_the_sandbox_shows_them() {
    let e = run(
        &dev(),
        &["/dev/shm/x", "/proc/1/environ"],
        Os::Linux,
        Ok(()),
    );
    assert_eq!(
        e.paths[0].decided_by,
        Decider::RebuiltTree {
            tree: "/dev".into()
        }
    );
    assert_eq!(e.paths[0].access, Access::Write);
    assert!(e.paths[0].hint.is_none());
    assert_eq!(e.paths[1].access, Access::Read);
    let e = run(&dev(), &["/dev/shm/x"], Os::Macos, Ok(()));
    assert!(!matches!(
        e.paths[0].decided_by,
        Decider::RebuiltTree { .. }
    ));
}

/// Issue 8 §1: `cd /tmp/proj && cordon run --profile read-only -- ls` — the cwd under the
/// private /tmp is kept visible with the profile's access (read), not widened.
#[test]
fn cwd_under_tmp_stays_visible_read_only() {
    let fs = MemFs::new().dir("/tmp/proj").dir("/home/u");
    let p = PermissionProfile::builtin("read-only").unwrap();
    let r = resolve(&p, &common::ctx_at("/tmp/proj", "/home/u"), &fs).unwrap();
    assert_eq!(
        r.filesystem.seen(&fs, Path::new("/tmp/proj/a")),
        Seen::Host(Access::Read)
    );
    assert_eq!(
        r.filesystem.seen(&fs, Path::new("/tmp/other")),
        Seen::PrivateTmp
    );
}

/// nu18 F5: a workspace under /tmp — the `:tmp` grant (it would hold the workspace) is
/// not given, but the namespace backend still mounts its private /tmp: explain says /tmp is
/// writable (the private one), as the run finds it. Twin: another path there is hidden.
#[test]
fn tmp_itself_is_the_private_tmp_for_a_workspace_under_it() {
    let fs = MemFs::new().dir("/tmp/proj/.git/objects").dir("/home/u");
    let p = PermissionProfile::builtin("workspace-write").unwrap();
    let r = resolve(&p, &common::ctx_at("/tmp/proj", "/home/u"), &fs).unwrap();
    let sel = select_initial(
        &p,
        SandboxPreference::Auto,
        false,
        Os::Linux,
        Default::default(),
    );
    let status = SandboxStatus::new(&sel, Ok(()), true);
    let paths = [PathBuf::from("/tmp"), PathBuf::from("/tmp/other")];
    let e = explain(&r, &fs, &paths, &sel, &status, None);
    assert_eq!(e.paths[0].access, Access::Write, "{e}");
    assert!(
        e.to_string()
            .contains("/tmp: writable (the sandbox's private /tmp)"),
        "{e}"
    );
    assert_eq!(e.paths[1].access, Access::Deny, "{e}");
}

/// New user (stop 18): on the Linux namespace backend `~/.gitconfig` is shown as a
/// read-only copy with the credentials removed (R-C2), so explain answers "read-only" with
/// that, not "denied" with a deny-beats-everything hint; elsewhere (macOS) it is hidden.
#[test]
fn stripped_config_is_explained_as_the_command_sees_it() {
    let fs = fs().file("/home/u/.gitconfig", "[user]\n\tname = u\n");
    let p = dev();
    let r = resolve(&p, &ctx(), &fs).unwrap();
    let explain_on = |os| {
        let sel = select_initial(&p, SandboxPreference::Auto, false, os, Default::default());
        let status = SandboxStatus::new(&sel, Ok(()), true);
        explain(
            &r,
            &fs,
            &[PathBuf::from("/home/u/.gitconfig")],
            &sel,
            &status,
            None,
        )
    };
    let e = explain_on(Os::Linux);
    assert_eq!(e.paths[0].access, Access::Read, "{e}");
    assert!(
        e.paths[0]
            .shown_as
            .as_deref()
            .is_some_and(|s| s.contains("credentials removed")),
        "{e}"
    );
    assert!(e.paths[0].hint.is_none(), "{e}");
    let e = explain_on(Os::Macos);
    assert_eq!(e.paths[0].access, Access::Deny, "{e}");
}

/// One truth (issue 11 §3): a repository's `.git/config` is a writable private copy inside
/// the namespace backend, with the allowed keys merged back; `explain` says so (it said
/// only "read-only", while `git config user.email …` worked inside). Elsewhere (Seatbelt)
/// it is plainly read-only, and a hook stays read-only without a copy.
#[test]
fn repository_config_is_explained_as_the_private_copy() {
    let e = run(&dev(), &[".git/config", ".git/hooks"], Os::Linux, Ok(()));
    assert_eq!(e.paths[0].access, Access::Read, "{e}");
    let shown = e.paths[0].shown_as.as_deref().unwrap_or_default();
    assert!(
        shown.contains("private copy") && shown.contains("user.{name,email}"),
        "{e}"
    );
    assert!(e.to_string().contains("merged back"), "{e}");
    assert!(e.paths[1].shown_as.is_none(), "{e}");
    // Hints finding 7: `access: read` stays the host file's, and a field says what is
    // enforced for the command's writes (a private copy, merged back with these keys), in
    // `--json` and the text; the "to change" no longer says it is kept read-only.
    let w = e.paths[0].command_writes.as_ref().expect("command_writes");
    assert_eq!(w.kind, "private-copy");
    assert!(w.merged_back.contains(&"user.email"), "{w:?}");
    let v = serde_json::to_value(&e).unwrap();
    assert_eq!(v["paths"][0]["access"], "read", "{v}");
    assert_eq!(
        v["paths"][0]["command_writes"]["kind"], "private-copy",
        "{v}"
    );
    let text = e.to_string();
    assert!(
        text.contains("the command writes a private copy, merged back")
            && text.contains("command writes: a private copy of this file"),
        "{text}"
    );
    let hint = e.paths[0].hint.as_deref().unwrap_or_default();
    assert!(!hint.contains("kept read-only"), "{hint}");
    assert!(hint.contains("outside cordon"), "{hint}");
    // Twins: a hook has no such field; on Seatbelt the config is plainly read-only.
    assert!(e.paths[1].command_writes.is_none(), "{e}");
    let e = run(&dev(), &[".git/config"], Os::Macos, Ok(()));
    assert_eq!(e.paths[0].access, Access::Read, "{e}");
    assert!(e.paths[0].shown_as.is_none(), "{e}");
    assert!(e.paths[0].command_writes.is_none(), "{e}");
}

/// The keys explain lists as merged back are the merge's allow list, one for one.
#[test]
fn explained_merged_back_keys_are_the_merge_allow_list() {
    let listed: Vec<String> = cordon_policy::gitconfig::MERGED_BACK_KEYS
        .iter()
        .map(|k| k.replace("<name>.", "").to_ascii_lowercase())
        .collect();
    let allowed: Vec<String> = cordon_policy::gitconfig::merge::ALLOWED
        .iter()
        .map(|(s, _, k)| format!("{s}.{k}"))
        .collect();
    assert_eq!(listed, allowed);
}

/// nu7: the write advice for a file that does not exist yet names its nearest existing
/// directory (a missing path given to `--allow-write` is created as a directory, so
/// granting the file itself made a directory of its name); an existing file is named
/// itself (twin).
#[test]
fn write_advice_for_a_missing_file_names_its_directory() {
    let e = run(&dev(), &["/data/other/report.txt"], Os::Linux, Ok(()));
    let hint = e.paths[0].hint.as_deref().unwrap();
    assert!(hint.contains("`-w /data/other`"), "{hint}");
    // nu17 N9: when the directory holding it is missing too, the first missing directory
    // on its way (which --allow-write creates), not the nearest existing ancestor, which
    // can hold much more (the workspace's parent).
    let e = run(
        &dev(),
        &["/data/other/new/deeper/report.txt"],
        Os::Linux,
        Ok(()),
    );
    let hint = e.paths[0].hint.as_deref().unwrap();
    assert!(hint.contains("`-w /data/other/new`"), "{hint}");
    assert!(hint.contains("first missing directory"), "{hint}");
    assert!(!hint.contains("-w /data/other/new/deeper"), "{hint}");
    let e = run(&dev(), &["/data/other"], Os::Linux, Ok(()));
    let hint = e.paths[0].hint.as_deref().unwrap();
    assert!(hint.contains("-w /data/other"), "{hint}");
    assert!(!hint.contains("does not exist"), "{hint}");
}

/// nu7: the network advice for a built-in profile (which cannot be edited) names a
/// profile extending it; a profile that runs without a sandbox does not claim to refuse
/// host sockets.
#[test]
fn advice_fits_builtins_and_unsandboxed_profiles() {
    let ws = PermissionProfile::builtin("workspace-write").unwrap();
    let text = run(&ws, &[], Os::Linux, Ok(())).to_string();
    assert!(
        text.contains("extends = \"workspace-write\"") && text.contains("--allow-network"),
        "{text}"
    );
    let full = PermissionProfile::builtin("danger-full-access").unwrap();
    let text = run(&full, &[], Os::Linux, Ok(())).to_string();
    assert!(!text.contains("refused in every network mode"), "{text}");
    assert!(text.contains("every host socket: reachable"), "{text}");
    let text = run(&dev(), &[], Os::Linux, Ok(())).to_string();
    assert!(text.contains("refused in every network mode"), "{text}");
}

/// New-user pass nu14 M7: a package cache missing on the host, whose tool is pointed at a
/// private directory, offers no grant (it advised making the real `~/.cache` writable);
/// it says where the tool writes instead. Twin: another read-only path keeps its hint.
#[test]
fn a_redirected_missing_cache_offers_no_grant() {
    let mut p = PermissionProfile::builtin("workspace-write").unwrap();
    p.caches = CacheMode::Overlay;
    let e = run(&p, &["/home/u/.cache/pip", "/etc/hosts"], Os::Linux, Ok(()));
    let pip = &e.paths[0];
    assert_eq!(pip.hint, None, "{pip:?}");
    assert!(
        pip.shown_as
            .as_deref()
            .unwrap_or("")
            .contains("PIP_CACHE_DIR points at"),
        "{pip:?}"
    );
    assert!(e.paths[1].hint.is_some(), "{:?}", e.paths[1]);
}

/// New-user pass 149: a write grant the caller's judgement refuses (the run's: the home
/// directory, for `~/.bashrc`) is not suggested; the hint says why and offers a directory
/// of one's own instead — unless that is refused too. Twin: without a refusal the grant is
/// suggested as before.
#[test]
fn a_refused_grant_is_not_suggested() {
    let fs = fs();
    let p = dev();
    let (r, sel, status) = resolved_on_linux(&fs, &p);
    let paths = [PathBuf::from("/home/u/.bashrc")];
    let refuse_home = |_: &Path, g: &Path| {
        if g == Path::new("/home/u") {
            Err("it would need /home/u writable: the home".to_string())
        } else {
            Ok(g.to_path_buf())
        }
    };
    let e = explain_judged(&r, &fs, &paths, &sel, &status, None, &refuse_home);
    let hint = e.paths[0].hint.clone().unwrap();
    assert!(
        hint.starts_with("it would need /home/u writable: the home"),
        "{hint}"
    );
    assert!(!hint.contains("-w /home/u "), "{hint}");
    assert!(hint.contains("-w /home/u/NAME"), "{hint}");
    let refuse_all = |_: &Path, _: &Path| Err("never".to_string());
    let e = explain_judged(&r, &fs, &paths, &sel, &status, None, &refuse_all);
    let hint = e.paths[0].hint.clone().unwrap();
    assert!(!hint.contains("-w /"), "{hint}");
    assert!(hint.contains("change the profile"), "{hint}");
    let other = [PathBuf::from("/data/other/x.txt")];
    for e in [
        explain(&r, &fs, &other, &sel, &status, None),
        explain_judged(&r, &fs, &other, &sel, &status, None, &refuse_home),
    ] {
        let hint = e.paths[0].hint.clone().unwrap();
        assert!(hint.contains("pass `-w /data/other`"), "{hint}");
    }
}

/// Attack pass 154, F5: a path the profile makes writable, on a filesystem the host mounts
/// read-only (a read-only bind mount inside the workspace), is not reported as plainly
/// writable: every write there fails. Twin: a writable path beside it is.
#[test]
fn a_writable_path_on_a_read_only_host_mount_says_so() {
    struct ReadOnlyBelow<'a>(&'a MemFs, &'a str);
    impl FsView for ReadOnlyBelow<'_> {
        fn canonicalize(&self, p: &Path) -> Option<PathBuf> {
            self.0.canonicalize(p)
        }
        fn kind(&self, p: &Path) -> Option<FileKind> {
            self.0.kind(p)
        }
        fn read_to_string(&self, p: &Path) -> Option<String> {
            self.0.read_to_string(p)
        }
        fn read_only_mount(&self, p: &Path) -> Option<bool> {
            Some(p.starts_with(self.1))
        }
    }
    let mem = fs().dir("/home/u/proj/ro");
    let view = ReadOnlyBelow(&mem, "/home/u/proj/ro");
    let (r, sel, status) = resolved_on_linux(&mem, &dev());
    let paths = [PathBuf::from("ro/f"), PathBuf::from("src/f")];
    let e = explain(&r, &view, &paths, &sel, &status, None);
    assert_eq!(e.paths[0].access, Access::Write);
    assert_eq!(e.paths[0].shown_as.as_deref(), Some(HOST_READ_ONLY_MOUNT));
    assert!(e.to_string().contains("but read-only on the host"), "{e}");
    assert_eq!(e.paths[1].access, Access::Write);
    assert_eq!(e.paths[1].shown_as, None);
}
