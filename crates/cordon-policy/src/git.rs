//! Git layouts whose git dir lives outside the writable root (issue 7 item 6): linked
//! worktrees (validated in `resolve`) and `.git` as a symlink to a git dir elsewhere.

use crate::paths::{canonicalize_lenient, depth, FileKind, FsView};
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
    real_git_dir(fs, target).map_err(|why| format!("it is not a real git dir ({why})"))
}

/// The children of a git dir that a derived grant must not reach through a symlink: the
/// ones every git dir has, and the ones git reads code, config or other repositories from.
const GIT_DIR_CHILDREN: [&str; 12] = [
    "HEAD",
    "objects",
    "refs",
    "logs",
    "hooks",
    "info",
    "config",
    "packed-refs",
    "index",
    "commondir",
    "worktrees",
    "modules",
];

/// Whether `dir` looks like a git dir (`HEAD`, `objects`, `refs`): a bare repository, a `--separate-git-dir`, a submodule's git dir, whatever
/// it is named (breaker, stop 21: only directories named `.git` were treated as git dirs,
/// so a bare `remote.git` in the workspace, a `gitdir:` file's target, or a cwd inside a
/// bare repository left hooks and config writable). Three `stat`s.
///
/// Deliberately wider than git (which wants `objects/` and `refs/` to be directories,
/// symlinks followed, and a valid `HEAD`): each name present in any form (a symlink, even
/// a dangling one, counts), since a command can swap one for a symlink between runs and
/// git still uses the directory (breaker, stop 21: `objects` as a symlink hid a bare
/// repository from the scan). Counting too much only protects more.
pub fn looks_like_git_dir(fs: &dyn FsView, dir: &Path) -> bool {
    git_dir_names(|n| fs.entry(&dir.join(n)).is_some())
}

/// The rule of [`looks_like_git_dir`] over which names a directory has: `objects` and
/// `refs`; or `HEAD` with one of `objects`, `refs` or `commondir` (git's own test, widened:
/// a command may have moved one name aside for a run, or split `HEAD` and `commondir`
/// from the rest).
pub(crate) fn git_dir_names(has: impl Fn(&str) -> bool) -> bool {
    (has("objects") && has("refs"))
        || (has("HEAD") && (has("objects") || has("refs") || has("commondir")))
}

/// The outermost directory at or above `dir` that [`looks_like_git_dir`], if any.
pub(crate) fn enclosing_git_dir(fs: &dyn FsView, dir: &Path) -> Option<PathBuf> {
    dir.ancestors()
        .filter(|a| a.parent().is_some() && looks_like_git_dir(fs, a))
        .last()
        .map(Path::to_path_buf)
}

/// Checks that `dir` is a real git dir a derived writable grant may cover: `HEAD` a
/// regular file, `objects/` and `refs/` directories, and none of [`GIT_DIR_CHILDREN`] a
/// symlink. A planted "common dir" whose `objects` or `refs` is a symlink to `$HOME` or
/// another repository's hooks would otherwise be granted writable with everything it
/// leads to (R-P3, README "Workspace safety": a grant spelled through a symlink inside a
/// writable root is dropped). `dir` itself must be canonical (reached through no symlink).
///
/// Errors: a sentence naming the first child that fails.
pub(crate) fn real_git_dir(fs: &dyn FsView, dir: &Path) -> Result<(), String> {
    if canonicalize_lenient(fs, dir) != dir {
        return Err(format!("{} is reached through a symlink", dir.display()));
    }
    for (name, want) in [
        ("HEAD", FileKind::File),
        ("objects", FileKind::Dir),
        ("refs", FileKind::Dir),
    ] {
        if fs.kind(&dir.join(name)) != Some(want) {
            return Err(format!("no {name} (HEAD, objects/, refs/)"));
        }
    }
    for name in GIT_DIR_CHILDREN {
        let child = dir.join(name);
        if fs.kind(&child).is_some() && canonicalize_lenient(fs, &child) != child {
            return Err(format!("{} is a symlink", child.display()));
        }
    }
    Ok(())
}
