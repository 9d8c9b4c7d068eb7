//! Behaviour of `resolve` / `ResolvedFilesystem::access_for` found while building overlays,
//! `environment_context` and `explain`. These tests state what the enforcing backends
//! do (they layer canonical `ResolvedEntry::path`s) and fail today; they are left for the
//! owner of `resolve.rs`; both are fixed and pinned here.
use cordon_policy::*;
use std::path::Path;

fn ctx() -> ResolveContext {
    ResolveContext {
        cwd: "/w".into(),
        home: Some("/h".into()),
        tmpdir: None,
        profile_files: vec![],
        ..Default::default()
    }
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

/// `access_for` takes the most specific match of either spelling, so a symlink inside a
/// writable root that leads outside it answers "writable" although the backends (which
/// only see the canonical target) refuse the write.
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

/// Protected paths are added as `read` entries, deeper than whatever covers them, so they
/// can *widen* a denied area: `.git` denied inside a writable workspace still leaves
/// `.git/hooks` readable.
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
