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
