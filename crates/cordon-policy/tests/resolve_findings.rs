//! Behaviour of `resolve` / `ResolvedFilesystem::access_for` found wrong while building
//! overlays, `environment_context` and `explain`, now fixed and pinned here: the answers
//! match what the enforcing backends do (they layer canonical `ResolvedEntry::path`s).
mod common;
use cordon_policy::*;
use std::path::Path;

fn ctx() -> ResolveContext {
    common::ctx_at("/w", "/h")
}

fn profile(entries: Vec<FsEntry>) -> PermissionProfile {
    let mut p = PermissionProfile::builtin("workspace-write").unwrap();
    p.filesystem = FilesystemPolicy::Restricted {
        default: Access::Read,
        entries,
        protect_metadata: true,
    };
    p
}

/// Only the canonical spelling decides: a symlink inside a writable root that leads
/// outside it is not writable, as the backends (which see only the target) enforce.
/// (It once took the most specific match of either spelling and answered "writable".)
#[test]
fn symlink_leading_out_of_a_writable_root_is_not_writable() {
    let fs = MemFs::new()
        .dir("/w/.git")
        .dir("/d")
        .symlink("/w/out", "/d");
    let p = profile(vec![FsEntry::new(":workspace", Access::Write)]);
    let r = resolve(&p, &ctx(), &fs).unwrap();
    assert_eq!(
        r.filesystem.access_for(&fs, Path::new("/d/x")).access,
        Access::Read
    );
    assert_eq!(
        r.filesystem.access_for(&fs, Path::new("/w/out/x")).access,
        Access::Read
    );
}

/// Protected paths are `read` entries deeper than whatever covers them; they are left out
/// inside a denied area, so a denied `.git` keeps `.git/hooks` denied too (they once
/// re-opened it for reading).
#[test]
fn protection_never_widens_a_deny() {
    let fs = MemFs::new().dir("/w/.git/hooks");
    let p = profile(vec![
        FsEntry::new(":workspace", Access::Write),
        FsEntry::new(":workspace/.git", Access::Deny),
    ]);
    let r = resolve(&p, &ctx(), &fs).unwrap();
    assert_eq!(
        r.filesystem
            .access_for(&fs, Path::new("/w/.git/index"))
            .access,
        Access::Deny
    );
    assert_eq!(
        r.filesystem
            .access_for(&fs, Path::new("/w/.git/hooks/pre-commit"))
            .access,
        Access::Deny
    );
}

/// Issue 7 item 1: the permanent placeholders a run in `/p/w` leaves (empty `.git` and
/// `.cordon` directories; older versions left cordon's note in them) do not make `/p/w` the
/// workspace of a later run in `/p/w/sub`, which picks `/p/w/sub` as before. Fails when any
/// `.git`/`.cordon` directory counts as a marker.
#[test]
fn placeholders_do_not_move_the_workspace_of_a_later_run() {
    let note = |d: &str| format!("{d}/{PLACEHOLDER_NOTE}");
    let p = profile(vec![FsEntry::new(":workspace", Access::Write)]);
    let legacy = MemFs::new()
        .dir("/p/w/sub")
        .dir("/p/w/.git")
        .file(&note("/p/w/.git"), PLACEHOLDER_NOTE_TEXT)
        .dir("/p/w/.cordon")
        .file(&note("/p/w/.cordon"), PLACEHOLDER_NOTE_TEXT);
    let r = resolve(&p, &common::ctx_at("/p/w/sub", "/h"), &legacy).unwrap();
    assert_eq!(r.workspace, Path::new("/p/w/sub"));
    let fs = MemFs::new()
        .dir("/p/w/sub")
        .dir("/p/w/.git")
        .dir("/p/w/.cordon");
    let r = resolve(&p, &common::ctx_at("/p/w/sub", "/h"), &fs).unwrap();
    assert_eq!(r.workspace, Path::new("/p/w/sub"));
    // A run in `/p/w` itself keeps the placeholder `.git` read-only as a whole (no HEAD
    // can be planted to turn it into a repository).
    let r = resolve(&p, &common::ctx_at("/p/w", "/h"), &fs).unwrap();
    assert_eq!(r.workspace, Path::new("/p/w"));
    for x in ["/p/w/.git/HEAD", "/p/w/.git", "/p/w/.cordon/x"] {
        assert_eq!(
            r.filesystem.access_for(&fs, Path::new(x)).access,
            Access::Read,
            "{x}"
        );
    }
    // Twins: a real marker still counts — a `.git` with HEAD (git init over the
    // placeholder), a `.cordon/` holding the project config, a non-empty `.git` directory
    // without the note, a `.git` file.
    for fs in [
        MemFs::new()
            .dir("/p/w/sub")
            .dir("/p/w/.git")
            .file(&note("/p/w/.git"), "")
            .file("/p/w/.git/HEAD", "ref: refs/heads/main\n"),
        MemFs::new()
            .dir("/p/w/sub")
            .file("/p/w/.cordon/config.toml", ""),
        MemFs::new().dir("/p/w/sub").dir("/p/w/.git/objects"),
        MemFs::new()
            .dir("/p/w/sub")
            .dir("/g")
            .file("/p/w/.git", "gitdir: /g\n"),
    ] {
        let r = resolve(&p, &common::ctx_at("/p/w/sub", "/h"), &fs).unwrap();
        assert_eq!(r.workspace, Path::new("/p/w"), "{fs:?}");
    }
}
