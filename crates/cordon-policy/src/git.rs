//! Git layouts whose git dir lives outside the writable root (issue 7 item 6): linked
//! worktrees (validated in `resolve`) and `.git` as a symlink to a git dir elsewhere.

use crate::paths::{depth, FileKind, FsView};
use std::path::{Path, PathBuf};

/// Checks that `target` (where the symlink `<root>/.git` leads) is a git dir that may be
/// granted writable: a real git dir (`HEAD`, `objects/`, `refs/`) outside `root`, not `/`,
/// not a home directory or above one, not above `root`. The link may have been planted by
/// a confined command, so nothing here trusts what lies inside `root`.
pub(crate) fn external_git_dir(
    fs: &dyn FsView,
    target: &Path,
    root: &Path,
    homes: &[PathBuf],
) -> Result<(), String> {
    if target.starts_with(root) {
        return Err("it lies inside the writable root".into());
    }
    if depth(target) == 0 || root.starts_with(target) || homes.iter().any(|h| h.starts_with(target))
    {
        return Err("it is `/`, a home directory, or above the workspace".into());
    }
    let real_git_dir = fs.kind(&target.join("HEAD")) == Some(FileKind::File)
        && fs.kind(&target.join("objects")) == Some(FileKind::Dir)
        && fs.kind(&target.join("refs")) == Some(FileKind::Dir);
    if !real_git_dir {
        return Err("it is not a git dir (HEAD, objects/, refs/)".into());
    }
    Ok(())
}
