//! Compiling a profile for one cwd: symbolic roots expanded, paths normalised, protected
//! paths added (R-P2, R-P3). The result, [`ResolvedProfile`], is the one object the
//! transform, the Linux helper payload, `environment_context` and `cordon explain` all read.

use crate::paths::{canonicalize_lenient, depth, lexical_normalize, FileKind, FsView};
use crate::profile::{Access, FilesystemPolicy, PermissionProfile, PROFILE_FORMAT_VERSION};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use thiserror::Error;

/// The facts about the caller's environment that symbolic roots need.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResolveContext {
    /// The command's working directory (absolute).
    pub cwd: PathBuf,
    /// `$HOME`, if known. `:home` entries are dropped (with a note) when it is not.
    pub home: Option<PathBuf>,
    /// `$TMPDIR`, if set; `:tmp` is `/tmp` plus this.
    pub tmpdir: Option<PathBuf>,
    /// Profile/config files in use; inside a writable root they are protected (R-P3).
    pub profile_files: Vec<PathBuf>,
}

/// The system paths a process needs to start (`:minimal`).
pub const MINIMAL_PATHS: &[&str] = &[
    "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt", "/nix",
];

/// Where a resolved entry came from: the answer to "why is this path like this".
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum EntryOrigin {
    /// The profile's own entry number `index`, as spelled, with its source (config file and
    /// line, built-in name, or command-line flag) when known.
    Profile {
        /// Index into the profile's entry list.
        index: usize,
        /// The spelling in the profile (e.g. `:workspace`).
        spelling: String,
        /// Where the entry was written, e.g. `built-in workspace-write`, `/x/config.toml:12`.
        source: Option<String>,
    },
    /// A protected path inside a writable root (R-P3).
    Protected {
        /// Why it is protected (e.g. `git hooks run code`).
        reason: String,
    },
    /// A directory between a writable root and a protected path inside it, bound onto
    /// itself so it cannot be renamed or removed: otherwise a command could move `.git`
    /// aside and create a new, unprotected `.git/hooks` (R-P3). Its access is unchanged.
    Pinned {
        /// The protected path this directory leads to.
        protects: PathBuf,
    },
    /// Added so a linked worktree's `git commit` works: its git dir lives outside the
    /// worktree (R-P3).
    GitWorktree {
        /// The writable root whose `.git` file pointed here.
        worktree: PathBuf,
    },
}

/// One entry after resolution: absolute canonical path, with its original spelling kept.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResolvedEntry {
    /// Canonical absolute path (symlinks resolved). What enforcement uses.
    pub path: PathBuf,
    /// Lexically normalised path before symlink resolution (R-P2: both spellings kept).
    pub spelled: PathBuf,
    /// Access for this path and beneath.
    pub access: Access,
    /// Whether the path existed at resolve time.
    pub exists: bool,
    /// Whether it is a directory (false when missing or a file).
    pub is_dir: bool,
    /// Where it came from.
    pub origin: EntryOrigin,
}

/// A resolved filesystem policy.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "mode", rename_all = "kebab-case")]
pub enum ResolvedFilesystem {
    /// Everything readable and writable.
    Unrestricted,
    /// Entries with absolute paths; `default` for uncovered paths.
    Restricted {
        /// Access for paths no entry covers.
        default: Access,
        /// All entries in order (profile entries, then protected paths).
        entries: Vec<ResolvedEntry>,
    },
}

/// The answer to "what may happen to this path" (R-P2), with the deciding entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PathAccess {
    /// The effective access.
    pub access: Access,
    /// Index into the resolved entries of the entry that decided it; `None` = the default
    /// (or an unrestricted filesystem).
    pub entry: Option<usize>,
}

impl ResolvedFilesystem {
    /// Effective access for `path` (absolute, lexically normal), by most-specific-wins with
    /// deny > write > read on ties (R-P2). The path is canonicalised (symlinks resolved,
    /// missing tail kept) and compared with the entries' canonical paths, exactly as the
    /// backends enforce them.
    pub fn access_for(&self, fs: &dyn FsView, path: &Path) -> PathAccess {
        let (default, entries) = match self {
            ResolvedFilesystem::Unrestricted => {
                return PathAccess {
                    access: Access::Write,
                    entry: None,
                }
            }
            ResolvedFilesystem::Restricted { default, entries } => (*default, entries),
        };
        let lexical = lexical_normalize(path, Path::new("/"));
        let canonical = canonicalize_lenient(fs, &lexical);
        // Only the canonical spelling decides: it is what the backends enforce. (A symlink
        // inside a writable root that leads outside it is therefore not writable; an entry
        // spelled through a symlink applies at its target.) The spelled form is kept on
        // each entry for display.
        let mut best: Option<(usize, Access, usize)> = None;
        for (i, e) in entries.iter().enumerate() {
            if !canonical.starts_with(&e.path) {
                continue;
            }
            let d = depth(&e.path);
            let better = match best {
                None => true,
                Some((bd, ba, _)) => d > bd || (d == bd && e.access > ba),
            };
            if better {
                best = Some((d, e.access, i));
            }
        }
        let (access, entry) = best.map_or((default, None), |(_, a, i)| (a, Some(i)));
        PathAccess { access, entry }
    }

    /// The entries collapsed per canonical path (ties resolved deny > write > read) and
    /// sorted shallow-first: the order in which a mount-based backend layers them, so a
    /// deeper path always overrides its ancestors.
    pub fn layered(&self) -> Vec<&ResolvedEntry> {
        let entries = match self {
            ResolvedFilesystem::Unrestricted => return Vec::new(),
            ResolvedFilesystem::Restricted { entries, .. } => entries,
        };
        let mut out: Vec<&ResolvedEntry> = Vec::new();
        for e in entries {
            if let Some(slot) = out.iter_mut().find(|o| o.path == e.path) {
                if e.access > slot.access {
                    *slot = e;
                }
            } else {
                out.push(e);
            }
        }
        out.sort_by_key(|e| depth(&e.path));
        out
    }

    /// Canonical paths that are writable roots (entries with `write` access; pinned
    /// directories are not roots of their own).
    pub fn writable_roots(&self) -> Vec<&ResolvedEntry> {
        self.layered()
            .into_iter()
            .filter(|e| {
                e.access == Access::Write && !matches!(e.origin, EntryOrigin::Pinned { .. })
            })
            .collect()
    }

    /// Entries of a given origin kind that are denied.
    pub fn denied(&self) -> Vec<&ResolvedEntry> {
        self.layered()
            .into_iter()
            .filter(|e| e.access == Access::Deny)
            .collect()
    }

    /// Protected paths (R-P3).
    pub fn protected(&self) -> Vec<&ResolvedEntry> {
        self.layered()
            .into_iter()
            .filter(|e| matches!(e.origin, EntryOrigin::Protected { .. }))
            .collect()
    }

    /// Whether any entry denies reads (used e.g. to forbid a sandbox bypass).
    pub fn has_deny_read(&self) -> bool {
        !self.denied().is_empty()
    }
}

/// A profile compiled for one cwd. Serialised (versioned) as the Linux helper payload
/// (R-T3) and rendered into `environment_context` (R-M1): one object, never two copies.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResolvedProfile {
    /// [`PROFILE_FORMAT_VERSION`] at the time of resolution.
    pub format_version: u32,
    /// The intent, unchanged.
    pub profile: PermissionProfile,
    /// The command's cwd (canonical).
    pub cwd: PathBuf,
    /// The project root `:workspace` stands for (canonical).
    pub workspace: PathBuf,
    /// The compiled filesystem policy.
    pub filesystem: ResolvedFilesystem,
    /// Things resolution could not honour and skipped, in plain words (e.g. `:home` with
    /// no `$HOME`). Shown by `cordon explain`.
    pub notes: Vec<String>,
}

/// Errors from resolution.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum ResolveError {
    /// The cwd is not absolute.
    #[error("cwd must be an absolute path, got {0:?}")]
    RelativeCwd(PathBuf),
    /// The cwd does not exist.
    #[error("working directory {0:?} does not exist")]
    MissingCwd(PathBuf),
    /// An entry uses an unknown symbolic root.
    #[error("entry {index} ({spelling:?}): unknown symbolic root; use one of :workspace, :tmp, :home, :minimal, :root")]
    UnknownRoot {
        /// Entry index.
        index: usize,
        /// The spelling.
        spelling: String,
    },
}

/// Finds the project root for `cwd`: the nearest ancestor (including `cwd`) holding a
/// `.git` (directory or `gitdir:` file) or a `.cordon` directory; `cwd` itself if none.
pub fn find_workspace(fs: &dyn FsView, cwd: &Path) -> PathBuf {
    let mut cur = cwd.to_path_buf();
    loop {
        if fs.kind(&cur.join(".git")).is_some()
            || fs.kind(&cur.join(".cordon")) == Some(FileKind::Dir)
        {
            return cur;
        }
        if !cur.pop() {
            return cwd.to_path_buf();
        }
    }
}

/// Expands one spelling into lexically-normal absolute paths. `Ok(vec![])` means the
/// root is unavailable here (noted by the caller). `pub(crate)` so overlays
/// ([`crate::overlay`]) expand spellings exactly as resolution does.
pub(crate) fn expand(
    spelling: &str,
    index: usize,
    ctx: &ResolveContext,
    workspace: &Path,
) -> Result<Vec<PathBuf>, ResolveError> {
    let (root, rest) = if let Some(s) = spelling.strip_prefix(':') {
        match s.split_once('/') {
            Some((r, rest)) => (Some(r), rest),
            None => (Some(s), ""),
        }
    } else {
        (None, spelling)
    };
    let bases: Vec<PathBuf> = match root {
        None => {
            if let Some(r) =
                spelling
                    .strip_prefix("~/")
                    .or(if spelling == "~" { Some("") } else { None })
            {
                return Ok(match &ctx.home {
                    Some(h) => vec![lexical_normalize(&h.join(r), &ctx.cwd)],
                    None => vec![],
                });
            }
            return Ok(vec![lexical_normalize(Path::new(spelling), &ctx.cwd)]);
        }
        Some("workspace") => vec![workspace.to_path_buf()],
        Some("home") => ctx.home.iter().cloned().collect(),
        Some("root") => vec![PathBuf::from("/")],
        Some("tmp") => {
            let mut v = vec![PathBuf::from("/tmp")];
            if let Some(t) = &ctx.tmpdir {
                let t = lexical_normalize(t, &ctx.cwd);
                if t != Path::new("/tmp") {
                    v.push(t);
                }
            }
            v
        }
        Some("minimal") => MINIMAL_PATHS.iter().map(PathBuf::from).collect(),
        Some(_) => {
            return Err(ResolveError::UnknownRoot {
                index,
                spelling: spelling.to_string(),
            })
        }
    };
    Ok(bases
        .into_iter()
        .map(|b| {
            if rest.is_empty() {
                b
            } else {
                lexical_normalize(Path::new(rest), &b)
            }
        })
        .collect())
}

fn entry_for(
    fs: &dyn FsView,
    spelled: PathBuf,
    access: Access,
    origin: EntryOrigin,
) -> ResolvedEntry {
    let path = canonicalize_lenient(fs, &spelled);
    let kind = fs.kind(&path);
    ResolvedEntry {
        path,
        spelled,
        access,
        exists: kind.is_some(),
        is_dir: kind == Some(FileKind::Dir),
        origin,
    }
}

/// Reads a `gitdir: <path>` file; returns the git dir it names (canonical, lenient).
fn read_gitdir_file(fs: &dyn FsView, dotgit: &Path) -> Option<PathBuf> {
    let text = fs.read_to_string(dotgit)?;
    let target = text.lines().next()?.strip_prefix("gitdir:")?.trim();
    let base = dotgit.parent()?;
    Some(canonicalize_lenient(
        fs,
        &lexical_normalize(Path::new(target), base),
    ))
}

/// Compiles `profile` for `ctx` (R-P2, R-P3).
///
/// Order of the resulting entries: the profile's entries (each spelling possibly expanded to
/// several paths), then git-worktree write entries, then protected paths. Protected paths
/// are added for every writable directory root that is not a temp dir:
/// `.git/hooks`, `.git/config`, `.git/info` (or, for a linked worktree, the `.git` file and
/// the common dir's hooks/config/info plus the worktree's `config.worktree`), a missing
/// `.git` as a whole, `.cordon/`, and profile files that lie inside the root. A protected
/// path that some profile entry names explicitly is left to that entry.
///
/// Errors: relative or missing cwd, unknown symbolic root.
pub fn resolve(
    profile: &PermissionProfile,
    ctx: &ResolveContext,
    fs: &dyn FsView,
) -> Result<ResolvedProfile, ResolveError> {
    if !ctx.cwd.is_absolute() {
        return Err(ResolveError::RelativeCwd(ctx.cwd.clone()));
    }
    let cwd_lex = lexical_normalize(&ctx.cwd, Path::new("/"));
    let cwd = fs
        .canonicalize(&cwd_lex)
        .ok_or_else(|| ResolveError::MissingCwd(ctx.cwd.clone()))?;
    let workspace = find_workspace(fs, &cwd);
    let mut notes = Vec::new();

    let filesystem = match profile.effective_filesystem() {
        FilesystemPolicy::Unrestricted => ResolvedFilesystem::Unrestricted,
        FilesystemPolicy::Restricted {
            default,
            entries,
            protect_metadata,
        } => {
            let mut out = Vec::new();
            let mut named: Vec<PathBuf> = Vec::new();
            for (index, e) in entries.iter().enumerate() {
                let paths = expand(&e.path, index, ctx, &workspace)?;
                if paths.is_empty() {
                    notes.push(format!(
                        "entry {index} ({:?}) skipped: $HOME is not set",
                        e.path
                    ));
                }
                for spelled in paths {
                    let origin = EntryOrigin::Profile {
                        index,
                        spelling: e.path.clone(),
                        source: e.source.clone(),
                    };
                    let r = entry_for(fs, spelled, e.access, origin);
                    named.push(r.path.clone());
                    out.push(r);
                }
            }
            drop_redirected_grants(&mut out, &mut notes);
            if protect_metadata {
                let tmp_roots: Vec<PathBuf> = expand(":tmp", 0, ctx, &workspace)?
                    .into_iter()
                    .map(|p| canonicalize_lenient(fs, &p))
                    .collect();
                let roots: Vec<PathBuf> = out
                    .iter()
                    .filter(|e| e.access == Access::Write && e.is_dir)
                    .map(|e| e.path.clone())
                    .filter(|p| !tmp_roots.contains(p))
                    .collect();
                let mut extra = Vec::new();
                for root in &roots {
                    protected_for_root(fs, root, &ctx.profile_files, &mut extra);
                }
                let so_far = ResolvedFilesystem::Restricted {
                    default,
                    entries: out.clone(),
                };
                for e in extra {
                    // Protection narrows to read-only; it never re-opens a denied area.
                    if matches!(e.origin, EntryOrigin::Protected { .. })
                        && so_far.access_for(fs, &e.path).access == Access::Deny
                    {
                        continue;
                    }
                    let dup = out.iter().any(|o| o.path == e.path && o.origin == e.origin);
                    let explicitly_named = named.contains(&e.path)
                        && matches!(e.origin, EntryOrigin::Protected { .. });
                    if !dup && !explicitly_named {
                        out.push(e);
                    }
                }
                pin_protected_ancestors(fs, default, &roots, &mut out);
            }
            ResolvedFilesystem::Restricted {
                default,
                entries: out,
            }
        }
    };
    Ok(ResolvedProfile {
        format_version: PROFILE_FORMAT_VERSION,
        profile: profile.clone(),
        cwd,
        workspace,
        filesystem,
        notes,
    })
}

/// A read or write grant whose spelled path lies inside a writable root but which resolves
/// (through a symlink) to a place outside every writable root is dropped, with a note: a
/// confined command could have planted that symlink to widen the *next* run (R-P2).
fn drop_redirected_grants(out: &mut Vec<ResolvedEntry>, notes: &mut Vec<String>) {
    let writable: Vec<(PathBuf, PathBuf)> = out
        .iter()
        .filter(|e| e.access == Access::Write)
        .map(|e| (e.spelled.clone(), e.path.clone()))
        .collect();
    out.retain(|e| {
        if redirected_out_of_roots(&e.spelled, &e.path, e.access, &writable) {
            notes.push(format!(
                "{} entry {} dropped: it goes through a symlink inside a writable root (to \
                 {}); a confined command could have planted that symlink; spell the target \
                 path instead",
                e.access,
                e.spelled.display(),
                e.path.display()
            ));
            return false;
        }
        true
    });
}

/// The rule behind [`drop_redirected_grants`], shared with the overlay arithmetic, for a
/// grant spelled `spelled` that resolves (through a symlink) to `canonical`, where the
/// symlink lies inside one of the `writable` roots (`(spelled, canonical)` pairs) and so
/// may have been planted by a confined command: a write grant is never honoured; a read
/// grant is not honoured when it lands outside every writable root.
pub(crate) fn redirected_out_of_roots(
    spelled: &Path,
    canonical: &Path,
    access: Access,
    writable: &[(PathBuf, PathBuf)],
) -> bool {
    if access == Access::Deny || spelled == canonical {
        return false;
    }
    let inside_a_root = writable.iter().any(|(ws, wc)| {
        ws != spelled && (spelled.starts_with(ws) || spelled.starts_with(wc)) && spelled != wc
    });
    if access == Access::Write {
        // Dropping a write grant never widens anything, wherever it lands.
        return inside_a_root;
    }
    // Dropping a read grant is only safe (narrowing) where it leads outside every writable
    // root; inside one it may be a read-only carve-out.
    let lands_in_a_root = writable
        .iter()
        .any(|(ws, wc)| ws != spelled && canonical.starts_with(wc));
    inside_a_root && !lands_in_a_root
}

/// Pins every existing directory strictly between a writable root and a protected path
/// (e.g. `.git` for `.git/hooks`), so the protected path cannot be moved aside together
/// with its parent and re-created unprotected (R-P3).
fn pin_protected_ancestors(
    fs: &dyn FsView,
    default: Access,
    roots: &[PathBuf],
    out: &mut Vec<ResolvedEntry>,
) {
    let protected: Vec<PathBuf> = out
        .iter()
        .filter(|e| matches!(e.origin, EntryOrigin::Protected { .. }))
        .map(|e| e.path.clone())
        .collect();
    for p in protected {
        let Some(root) = roots
            .iter()
            .filter(|r| p.starts_with(r) && **r != p)
            .max_by_key(|r| depth(r))
        else {
            continue;
        };
        let mut a = p.clone();
        while a.pop() && a != *root && a.starts_with(root) {
            if out.iter().any(|e| e.path == a) {
                continue;
            }
            let here = ResolvedFilesystem::Restricted {
                default,
                entries: out.clone(),
            };
            if fs.kind(&a) != Some(FileKind::Dir) || here.access_for(fs, &a).access != Access::Write
            {
                continue;
            }
            out.push(ResolvedEntry {
                path: a.clone(),
                spelled: a.clone(),
                access: Access::Write,
                exists: true,
                is_dir: true,
                origin: EntryOrigin::Pinned {
                    protects: p.clone(),
                },
            });
        }
    }
}

/// Whether `gitdir` is a genuine linked-worktree git dir of `worktree`: git keeps a
/// `gitdir` file there pointing back at the worktree's `.git` file. Without that backlink
/// a `.git` file (which a confined command may have written) must not make anything
/// writable.
fn worktree_backlink_ok(fs: &dyn FsView, gitdir: &Path, dotgit: &Path) -> bool {
    let Some(back) = fs.read_to_string(&gitdir.join("gitdir")) else {
        return false;
    };
    let back = lexical_normalize(Path::new(back.trim()), gitdir);
    canonicalize_lenient(fs, &back) == canonicalize_lenient(fs, dotgit)
        && gitdir.parent().and_then(|p| p.file_name()) == Some(std::ffi::OsStr::new("worktrees"))
}

fn protected_for_root(
    fs: &dyn FsView,
    root: &Path,
    profile_files: &[PathBuf],
    out: &mut Vec<ResolvedEntry>,
) {
    let prot = |p: PathBuf, reason: &str| {
        entry_for(
            fs,
            p,
            Access::Read,
            EntryOrigin::Protected {
                reason: reason.to_string(),
            },
        )
    };
    let dotgit = root.join(".git");
    match fs.kind(&dotgit) {
        Some(FileKind::Dir) => {
            out.push(prot(dotgit.join("hooks"), "git hooks run code"));
            out.push(prot(
                dotgit.join("config"),
                "git config can run code (core.fsmonitor, aliases, filters)",
            ));
            out.push(prot(
                dotgit.join("info"),
                "git info/attributes selects filters that run code",
            ));
        }
        Some(FileKind::File) => {
            out.push(prot(
                dotgit.clone(),
                "the .git file decides which git dir is used",
            ));
            if let Some(gitdir) =
                read_gitdir_file(fs, &dotgit).filter(|g| worktree_backlink_ok(fs, g, &dotgit))
            {
                let common = fs
                    .read_to_string(&gitdir.join("commondir"))
                    .map(|c| {
                        canonicalize_lenient(fs, &lexical_normalize(Path::new(c.trim()), &gitdir))
                    })
                    .unwrap_or_else(|| gitdir.clone());
                for dir in [&gitdir, &common] {
                    out.push(entry_for(
                        fs,
                        dir.clone(),
                        Access::Write,
                        EntryOrigin::GitWorktree {
                            worktree: root.to_path_buf(),
                        },
                    ));
                }
                out.push(prot(common.join("hooks"), "git hooks run code"));
                out.push(prot(
                    common.join("config"),
                    "git config can run code (core.fsmonitor, aliases, filters)",
                ));
                out.push(prot(
                    common.join("info"),
                    "git info/attributes selects filters that run code",
                ));
                out.push(prot(
                    gitdir.join("config.worktree"),
                    "git config can run code",
                ));
            }
        }
        None => out.push(prot(
            dotgit,
            "a new .git would let a later unsandboxed git run planted hooks",
        )),
    }
    out.push(prot(root.join(".cordon"), "cordon's project configuration"));
    for f in profile_files {
        let f = canonicalize_lenient(fs, &lexical_normalize(f, Path::new("/")));
        if f.starts_with(root) {
            out.push(prot(f, "profile file in use"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::paths::MemFs;
    use crate::profile::{FsEntry, ProfileKind};

    fn ctx(cwd: &str) -> ResolveContext {
        ResolveContext {
            cwd: cwd.into(),
            home: Some("/home/u".into()),
            tmpdir: None,
            profile_files: vec![],
        }
    }

    fn restricted(entries: Vec<FsEntry>) -> PermissionProfile {
        let mut p = PermissionProfile::builtin("workspace-write").unwrap();
        p.filesystem = FilesystemPolicy::Restricted {
            default: Access::Read,
            entries,
            protect_metadata: true,
        };
        p
    }

    fn fs() -> MemFs {
        MemFs::new()
            .dir("/home/u/proj/.git/hooks")
            .file("/home/u/proj/.git/config", "")
            .dir("/home/u/proj/src/deep")
            .dir("/home/u/.ssh")
            .dir("/data/real")
            .symlink("/home/u/proj/link", "/data/real")
            .dir("/tmp")
    }

    /// R-P2 most-specific-wins table.
    #[test]
    fn most_specific_wins_table() {
        let p = restricted(vec![
            FsEntry::new(":workspace", Access::Write),
            FsEntry::new(":workspace/src", Access::Read),
            FsEntry::new(":workspace/src/deep", Access::Write),
            FsEntry::new("/home/u/proj/secret", Access::Read),
            FsEntry::new("/home/u/proj/secret", Access::Deny),
            FsEntry::new("/home/u/proj/secret", Access::Write),
            FsEntry::new("/home/u/proj/both", Access::Write),
            FsEntry::new("/home/u/proj/both", Access::Read),
        ]);
        let fs = fs();
        let r = resolve(&p, &ctx("/home/u/proj/src"), &fs).unwrap();
        let table = [
            ("/home/u/proj/file.txt", Access::Write),
            ("/home/u/proj/src/main.rs", Access::Read),
            ("/home/u/proj/src/deep/x", Access::Write),
            ("/home/u/proj/secret", Access::Deny),
            ("/home/u/proj/secret/inner", Access::Deny),
            ("/home/u/proj/both/f", Access::Write),
            ("/etc/passwd", Access::Read),
            ("/home/u/proj/.git/hooks/pre-commit", Access::Read),
            ("/home/u/proj/.git/config", Access::Read),
            ("/home/u/proj/.git/index", Access::Write),
            ("/home/u/proj/.cordon/config.toml", Access::Read),
        ];
        for (path, want) in table {
            let got = r.filesystem.access_for(&fs, Path::new(path)).access;
            assert_eq!(got, want, "{path}");
        }
    }

    #[test]
    fn workspace_is_the_project_root_not_the_cwd() {
        let fs = fs();
        let r = resolve(&restricted(vec![]), &ctx("/home/u/proj/src/deep"), &fs).unwrap();
        assert_eq!(r.workspace, PathBuf::from("/home/u/proj"));
        assert_eq!(r.cwd, PathBuf::from("/home/u/proj/src/deep"));
    }

    #[test]
    fn symlinked_entry_keeps_both_spellings() {
        let fs = fs();
        let p = restricted(vec![FsEntry::new(":workspace/link", Access::Deny)]);
        let r = resolve(&p, &ctx("/home/u/proj"), &fs).unwrap();
        let ResolvedFilesystem::Restricted { entries, .. } = &r.filesystem else {
            panic!()
        };
        assert_eq!(entries[0].path, PathBuf::from("/data/real"));
        assert_eq!(entries[0].spelled, PathBuf::from("/home/u/proj/link"));
        // Both spellings of the path are denied.
        for q in [
            "/home/u/proj/link/x",
            "/data/real/x",
            "/home/u/proj/src/../link",
        ] {
            assert_eq!(
                r.filesystem.access_for(&fs, Path::new(q)).access,
                Access::Deny,
                "{q}"
            );
        }
    }

    #[test]
    fn dotdot_in_entries_is_resolved() {
        let fs = fs();
        let p = restricted(vec![FsEntry::new("../../proj/src/../src", Access::Write)]);
        let r = resolve(&p, &ctx("/home/u/proj/src"), &fs).unwrap();
        let ResolvedFilesystem::Restricted { entries, .. } = &r.filesystem else {
            panic!()
        };
        assert_eq!(entries[0].path, PathBuf::from("/home/u/proj/src"));
    }

    #[test]
    fn explicit_entry_overrides_protection() {
        let fs = fs();
        let p = restricted(vec![
            FsEntry::new(":workspace", Access::Write),
            FsEntry::new(":workspace/.git/hooks", Access::Write),
        ]);
        let r = resolve(&p, &ctx("/home/u/proj"), &fs).unwrap();
        let a = r
            .filesystem
            .access_for(&fs, Path::new("/home/u/proj/.git/hooks/x"));
        assert_eq!(a.access, Access::Write);
        // config is still protected.
        let a = r
            .filesystem
            .access_for(&fs, Path::new("/home/u/proj/.git/config"));
        assert_eq!(a.access, Access::Read);
    }

    #[test]
    fn linked_worktree_gets_gitdir_writable_and_hooks_protected() {
        let fs = MemFs::new()
            .dir("/repo/.git/hooks")
            .file("/repo/.git/config", "")
            .file("/repo/.git/worktrees/wt/commondir", "../..\n")
            .file("/repo/.git/worktrees/wt/gitdir", "/wt/.git\n")
            .file("/wt/.git", "gitdir: /repo/.git/worktrees/wt\n");
        let p = restricted(vec![FsEntry::new(":workspace", Access::Write)]);
        let r = resolve(&p, &ctx("/wt"), &fs).unwrap();
        let f = &r.filesystem;
        let acc = |q: &str| f.access_for(&fs, Path::new(q)).access;
        assert_eq!(acc("/wt/.git"), Access::Read);
        assert_eq!(acc("/repo/.git/worktrees/wt/index"), Access::Write);
        assert_eq!(acc("/repo/.git/objects/ab/cd"), Access::Write);
        assert_eq!(acc("/repo/.git/hooks/pre-commit"), Access::Read);
        assert_eq!(acc("/repo/.git/config"), Access::Read);
        assert_eq!(acc("/repo/src"), Access::Read);
    }

    /// A `.git` file a confined command could have written must not make anything outside
    /// writable: without git's backlink the git dir is not trusted.
    #[test]
    fn forged_gitdir_file_grants_nothing() {
        let fs = MemFs::new()
            .dir("/etc")
            .file("/etc/commondir", ".\n")
            .file("/wt/.git", "gitdir: /etc\n");
        let p = restricted(vec![FsEntry::new(":workspace", Access::Write)]);
        let r = resolve(&p, &ctx("/wt"), &fs).unwrap();
        assert_eq!(
            r.filesystem
                .access_for(&fs, Path::new("/etc/passwd"))
                .access,
            Access::Read
        );
        assert_eq!(
            r.filesystem.access_for(&fs, Path::new("/wt/.git")).access,
            Access::Read
        );
        // Pointing at a real repo's worktree dir that does not point back fails too.
        let fs = MemFs::new()
            .dir("/repo/.git/hooks")
            .file("/repo/.git/worktrees/other/gitdir", "/elsewhere/.git\n")
            .file("/repo/.git/worktrees/other/commondir", "../..\n")
            .file("/wt/.git", "gitdir: /repo/.git/worktrees/other\n");
        let r = resolve(&p, &ctx("/wt"), &fs).unwrap();
        assert_eq!(
            r.filesystem
                .access_for(&fs, Path::new("/repo/.git/objects/x"))
                .access,
            Access::Read
        );
    }

    /// `.git` is pinned so `mv .git .git-old && mkdir -p .git/hooks` cannot plant hooks.
    #[test]
    fn directories_above_protected_paths_are_pinned() {
        let fs = fs();
        let p = restricted(vec![FsEntry::new(":workspace", Access::Write)]);
        let r = resolve(&p, &ctx("/home/u/proj"), &fs).unwrap();
        let ResolvedFilesystem::Restricted { entries, .. } = &r.filesystem else {
            panic!()
        };
        let pin = entries
            .iter()
            .find(|e| e.path == Path::new("/home/u/proj/.git"))
            .expect(".git pinned");
        assert!(matches!(pin.origin, EntryOrigin::Pinned { .. }));
        assert_eq!(pin.access, Access::Write);
        // Pinning changes no access and adds no writable root.
        assert_eq!(
            r.filesystem
                .access_for(&fs, Path::new("/home/u/proj/.git/index"))
                .access,
            Access::Write
        );
        assert!(r
            .filesystem
            .writable_roots()
            .iter()
            .all(|e| e.path != Path::new("/home/u/proj/.git")));
    }

    /// A grant spelled inside a writable root that a symlink leads outside every writable
    /// root is dropped (the symlink may have been planted by an earlier confined run).
    #[test]
    fn grants_redirected_out_of_writable_roots_are_dropped() {
        let fs = fs().dir("/etc").symlink("/home/u/proj/build", "/etc");
        let p = restricted(vec![
            FsEntry::new(":workspace", Access::Write),
            FsEntry::new(":workspace/build", Access::Write),
            FsEntry::new(":workspace/link", Access::Write),
        ]);
        let r = resolve(&p, &ctx("/home/u/proj"), &fs).unwrap();
        assert_eq!(
            r.filesystem
                .access_for(&fs, Path::new("/etc/passwd"))
                .access,
            Access::Read
        );
        assert_eq!(
            r.filesystem
                .access_for(&fs, Path::new("/data/real/x"))
                .access,
            Access::Read
        );
        assert!(r.notes.iter().any(|n| n.contains("/etc")), "{:?}", r.notes);
        // A symlink outside any writable root is the user's own: honoured.
        let fs = MemFs::new()
            .dir("/data/cache")
            .symlink("/home/u/.cache", "/data/cache")
            .dir("/home/u/proj/.git");
        let p = restricted(vec![
            FsEntry::new(":workspace", Access::Write),
            FsEntry::new("~/.cache", Access::Write),
        ]);
        let r = resolve(&p, &ctx("/home/u/proj"), &fs).unwrap();
        assert_eq!(
            r.filesystem
                .access_for(&fs, Path::new("/data/cache/x"))
                .access,
            Access::Write
        );
    }

    #[test]
    fn missing_protected_paths_are_still_protected() {
        let fs = MemFs::new().dir("/p/.git").dir("/tmp");
        let p = restricted(vec![
            FsEntry::new(":workspace", Access::Write),
            FsEntry::new(":tmp", Access::Write),
        ]);
        let r = resolve(&p, &ctx("/p"), &fs).unwrap();
        let prot: Vec<_> = r
            .filesystem
            .protected()
            .iter()
            .map(|e| (e.path.clone(), e.exists))
            .collect();
        assert!(prot.contains(&(PathBuf::from("/p/.git/hooks"), false)));
        assert!(prot.contains(&(PathBuf::from("/p/.cordon"), false)));
        // temp dirs get no protected paths
        assert!(!prot.iter().any(|(p, _)| p.starts_with("/tmp")));
    }

    #[test]
    fn disabled_profile_resolves_unrestricted() {
        let mut p = PermissionProfile::builtin("workspace-write").unwrap();
        p.kind = ProfileKind::Disabled;
        let r = resolve(&p, &ctx("/home/u/proj"), &fs()).unwrap();
        assert_eq!(r.filesystem, ResolvedFilesystem::Unrestricted);
    }

    #[test]
    fn unknown_root_is_an_error() {
        let p = restricted(vec![FsEntry::new(":wrkspace", Access::Write)]);
        assert!(matches!(
            resolve(&p, &ctx("/home/u/proj"), &fs()),
            Err(ResolveError::UnknownRoot { index: 0, .. })
        ));
    }

    #[test]
    fn credential_stores_are_denied_by_builtins() {
        let fs = fs();
        for name in ["workspace-write", "read-only"] {
            let p = PermissionProfile::builtin(name).unwrap();
            let r = resolve(&p, &ctx("/home/u/proj"), &fs).unwrap();
            let a = r
                .filesystem
                .access_for(&fs, Path::new("/home/u/.ssh/id_rsa"));
            assert_eq!(a.access, Access::Deny, "{name}");
        }
    }
}
