//! What the sandbox shows at the top of its tree, computed once from a
//! [`ResolvedFilesystem`] (issue 13 §1, issue 8 §1): the access of `/`, whether `/tmp` is a
//! private tmpfs, and whether a path under the host's `/tmp` is hidden by it. The Linux
//! mount plan, its Landlock rules, the helper's `TMPDIR` choice and `explain` all read these
//! answers, so they cannot disagree.

use crate::paths::{canonicalize_lenient, lexical_normalize, FsView};
use crate::profile::Access;
use crate::resolve::{EntryOrigin, ResolvedFilesystem};
use std::path::Path;

/// The top of the sandbox's tree (pure, no OS call).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct TopView {
    /// Access of `/`: its own entry, else the default (`write` when unrestricted).
    pub root: Access,
    /// `/tmp` is a fresh private tmpfs (restricted policy, `/tmp` not denied). Only the
    /// namespace backend (Linux rung 1) builds it; elsewhere the host `/tmp` is used.
    pub private_tmp: bool,
}

impl ResolvedFilesystem {
    /// The top of the tree: see [`TopView`].
    pub fn top_view(&self) -> TopView {
        match self {
            ResolvedFilesystem::Unrestricted => TopView {
                root: Access::Write,
                private_tmp: false,
            },
            ResolvedFilesystem::Restricted { default, entries } => {
                // The access `layered` collapses the entries at `p` to (the strongest),
                // without building the whole layered list (asked many times per launch).
                // Entry paths are canonical, so their bytes compare.
                let at = |p: &str| {
                    entries
                        .iter()
                        .filter(|e| e.path.as_os_str() == p)
                        .map(|e| e.access)
                        .max()
                };
                TopView {
                    root: at("/").unwrap_or(*default),
                    private_tmp: at("/tmp").is_none_or(|a| a != Access::Deny),
                }
            }
        }
    }

    /// Whether the canonical `path` (under the host's `/tmp`) is hidden by the private
    /// `/tmp`: it is, unless an entry strictly below `/tmp` covers it (such an entry is
    /// bound on top of the private tmpfs). `false` when there is no private `/tmp`.
    pub fn hidden_by_private_tmp(&self, path: &Path) -> bool {
        let ResolvedFilesystem::Restricted { entries, .. } = self else {
            return false;
        };
        if !path.starts_with("/tmp") || path == Path::new("/tmp") || !self.top_view().private_tmp {
            return false;
        }
        // An entry covers `path` when its path (strictly below /tmp, an ancestor of
        // `path`) collapses to a non-deny access in `layered`, i.e. no entry denies it.
        let below_tmp = |e: &&crate::resolve::ResolvedEntry| {
            e.path.starts_with("/tmp") && e.path != Path::new("/tmp") && path.starts_with(&e.path)
        };
        !entries.iter().filter(below_tmp).any(|e| {
            e.access != Access::Deny
                && !entries
                    .iter()
                    .any(|o| o.access == Access::Deny && o.path == e.path)
        })
    }
}

/// What the command finds at a path, as far as the policy decides it (the one view that
/// `explain`, the overlay merge and the mount plan share).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Seen {
    /// The host's object, with this access.
    Host(Access),
    /// Under the private `/tmp` and not granted: the host's object is not visible; the
    /// command sees an empty, writable `/tmp` whose contents are discarded at exit.
    PrivateTmp,
}

impl ResolvedFilesystem {
    /// What the command finds at `p` (absolute; lexically normalised and canonicalised
    /// leniently here), assuming the private `/tmp` of the namespace backend when the
    /// policy has one (see [`TopView::private_tmp`]).
    pub fn seen(&self, fs: &dyn FsView, p: &Path) -> Seen {
        let abs = lexical_normalize(p, Path::new("/"));
        let canonical = canonicalize_lenient(fs, &abs);
        if self.hidden_by_private_tmp(&canonical) {
            Seen::PrivateTmp
        } else {
            Seen::Host(self.access_for(fs, &abs).access)
        }
    }
}

/// Adds an [`EntryOrigin::Cwd`] entry when the cwd would be hidden by the private `/tmp`
/// (e.g. `cd /tmp/proj && cordon run --profile read-only -- ls`): the cwd is then bound
/// with the access the profile gives the host's directory (not widened: `read` stays
/// `read`; a denied cwd stays denied and the run is refused when entering it).
///
/// The `/tmp` entry itself is not that access: its `write` is the private tmpfs's, not the
/// host's `/tmp` (new-user pass 241 #1: a cwd reached through a symlink in the project,
/// `proj/other -> /tmp/victim`, was bound writable, `.git/hooks` and `.git/config` of that
/// repository included, since no workspace protection applies outside the workspace). So
/// a hidden cwd gets what the entries below `/tmp` and the default give it.
pub(crate) fn keep_cwd_visible(f: &mut ResolvedFilesystem, cwd: &Path, fs: &dyn FsView) {
    if !f.hidden_by_private_tmp(cwd) {
        return;
    }
    let access = match &*f {
        ResolvedFilesystem::Unrestricted => return,
        ResolvedFilesystem::Restricted { default, entries } => {
            let host_view: Vec<crate::resolve::ResolvedEntry> = entries
                .iter()
                .filter(|e| !(e.path == Path::new("/tmp") && e.access != Access::Deny))
                .cloned()
                .collect();
            ResolvedFilesystem::Restricted {
                default: *default,
                entries: host_view,
            }
            .access_for(fs, cwd)
            .access
        }
    };
    if access == Access::Deny {
        return;
    }
    let e = crate::resolve::entry_for(fs, cwd.to_path_buf(), access, EntryOrigin::Cwd);
    if let ResolvedFilesystem::Restricted { entries, .. } = f {
        entries.push(e);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{resolve, FilesystemPolicy, FsEntry, MemFs, PermissionProfile, ResolveContext};
    use std::path::PathBuf;

    fn fs_of(entries: Vec<FsEntry>, cwd: &str) -> ResolvedFilesystem {
        let mut p = PermissionProfile::builtin("workspace-write").unwrap();
        p.filesystem = FilesystemPolicy::Restricted {
            default: Access::Read,
            entries,
            protect_metadata: true,
        };
        let fs = MemFs::new()
            .dir("/tmp/ws/.git/objects")
            .dir("/tmp/r.git")
            .dir("/home/u/p/.git/objects");
        let ctx = ResolveContext {
            cwd: cwd.into(),
            home: Some("/home/u".into()),
            ..Default::default()
        };
        resolve(&p, &ctx, &fs).unwrap().filesystem
    }

    /// Issue 7 item 2: every hop of a symlink chain on the spelled path is listed (by
    /// where the link lives), `..` after a link is taken physically, and the resolved
    /// protected entry carries them.
    #[test]
    fn symlinks_on_follows_chains_and_dotdot() {
        use crate::resolve::symlinks_on;
        let fs = MemFs::new()
            .dir("/w/.git/objects")
            .dir("/w/real/hk2")
            .symlink("/w/.git/hooks", "../hk")
            .symlink("/w/hk", "real/hk2")
            .dir("/a/b")
            .dir("/a/c")
            .symlink("/w/l", "/a/b");
        assert_eq!(
            symlinks_on(&fs, Path::new("/w/.git/hooks/pre-commit")),
            [PathBuf::from("/w/.git/hooks"), PathBuf::from("/w/hk")]
        );
        assert_eq!(
            symlinks_on(&fs, Path::new("/w/l/../c")),
            [PathBuf::from("/w/l")]
        );
        assert!(symlinks_on(&fs, Path::new("/w/real/hk2")).is_empty());
        let mut p = PermissionProfile::builtin("workspace-write").unwrap();
        p.filesystem = FilesystemPolicy::Restricted {
            default: Access::Read,
            entries: vec![FsEntry::new(":workspace", Access::Write)],
            protect_metadata: true,
        };
        let ctx = ResolveContext {
            cwd: "/w".into(),
            home: Some("/h".into()),
            ..Default::default()
        };
        let r = resolve(&p, &ctx, &fs).unwrap();
        let ResolvedFilesystem::Restricted { entries, .. } = &r.filesystem else {
            panic!()
        };
        let hooks = entries
            .iter()
            .find(|e| e.spelled == Path::new("/w/.git/hooks"))
            .unwrap();
        assert_eq!(hooks.path, Path::new("/w/real/hk2"));
        assert_eq!(hooks.links.len(), 2);
    }

    /// New-user pass 241 #1: a cwd under the host's `/tmp` reached through a symlink in
    /// the project (the workspace is taken along the typed path) is bound read-only — the
    /// private tmpfs's `write` is not the host directory's — so another repository there
    /// keeps its hooks and config. Twin: a workspace under `/tmp` stays writable.
    #[test]
    fn a_cwd_under_tmp_outside_the_workspace_is_bound_read_only() {
        let fs = MemFs::new()
            .dir("/tmp/victim/.git/hooks")
            .dir("/home/u/p/.git/objects")
            .symlink("/home/u/p/other", "/tmp/victim");
        // The built-in profile, whose `:tmp` write entry is the private tmpfs.
        let p = PermissionProfile::builtin("workspace-write").unwrap();
        let ctx = ResolveContext {
            cwd: "/tmp/victim".into(),
            logical_cwd: Some("/home/u/p/other".into()),
            home: Some("/home/u".into()),
            ..Default::default()
        };
        let r = resolve(&p, &ctx, &fs).unwrap();
        assert_eq!(r.workspace, Path::new("/home/u/p"));
        let ResolvedFilesystem::Restricted { entries, .. } = &r.filesystem else {
            panic!()
        };
        let cwd = entries
            .iter()
            .find(|e| e.origin == EntryOrigin::Cwd)
            .expect("the cwd is kept visible");
        assert_eq!(cwd.path, Path::new("/tmp/victim"));
        assert_eq!(cwd.access, Access::Read);
        for path in [
            "/tmp/victim",
            "/tmp/victim/.git/hooks/pre-commit",
            "/tmp/victim/.git/config",
        ] {
            assert_eq!(
                r.filesystem.access_for(&fs, Path::new(path)).access,
                Access::Read,
                "{path}"
            );
        }
        // Twin: the workspace itself under /tmp is a writable root.
        let fs = MemFs::new().dir("/tmp/ws/.git/objects");
        let ctx = ResolveContext {
            cwd: "/tmp/ws".into(),
            home: Some("/home/u".into()),
            ..Default::default()
        };
        let r = resolve(&p, &ctx, &fs).unwrap();
        assert_eq!(
            r.filesystem.access_for(&fs, Path::new("/tmp/ws/a")).access,
            Access::Write
        );
    }

    #[test]
    fn top_view_and_private_tmp() {
        let f = fs_of(vec![FsEntry::new(":workspace", Access::Write)], "/home/u/p");
        assert_eq!(
            f.top_view(),
            TopView {
                root: Access::Read,
                private_tmp: true
            }
        );
        assert!(f.hidden_by_private_tmp(Path::new("/tmp/x.sh")));
        assert!(!f.hidden_by_private_tmp(Path::new("/tmp")));
        assert!(!f.hidden_by_private_tmp(Path::new("/home/u/p")));
        // An entry below /tmp is bound on top of the private tmpfs.
        let f = fs_of(
            vec![
                FsEntry::new(":workspace", Access::Write),
                FsEntry::new("/tmp/r.git", Access::Read),
            ],
            "/tmp/ws",
        );
        assert!(!f.hidden_by_private_tmp(Path::new("/tmp/ws/a")));
        assert!(!f.hidden_by_private_tmp(Path::new("/tmp/r.git/HEAD")));
        assert!(f.hidden_by_private_tmp(Path::new("/tmp/other")));
        // /tmp denied: no private tmpfs, nothing hidden by it.
        let f = fs_of(vec![FsEntry::new("/tmp", Access::Deny)], "/home/u/p");
        assert!(!f.top_view().private_tmp);
        assert!(!f.hidden_by_private_tmp(Path::new("/tmp/x")));
        assert_eq!(
            ResolvedFilesystem::Unrestricted.top_view().root,
            Access::Write
        );
    }
}
