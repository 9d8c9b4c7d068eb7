//! Compiling a profile for one cwd: symbolic roots expanded, paths normalised, protected
//! paths added (R-P2, R-P3). The result, [`ResolvedProfile`], is the one object the
//! transform, the Linux helper payload, `environment_context` and `cordon explain` all read.

use crate::paths::{
    canonicalize_lenient, depth, is_link, lexical_normalize, Entry, FileKind, FsView, ReadRefusal,
    SMALL_FILE_CAP,
};
use crate::profile::{Access, FilesystemPolicy, PermissionProfile, PROFILE_FORMAT_VERSION};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use thiserror::Error;

/// The facts about the caller's environment that symbolic roots need.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResolveContext {
    /// The command's working directory (absolute).
    pub cwd: PathBuf,
    /// `$HOME`, if known. `:home` entries are dropped (with a note) when it is not.
    pub home: Option<PathBuf>,
    /// `$TMPDIR`, if set; `:tmp` is `/tmp` plus this.
    pub tmpdir: Option<PathBuf>,
    /// Profile/config files in use; inside a writable root they are protected (R-P3).
    pub profile_files: Vec<PathBuf>,
    /// The cwd as the user typed it (`$PWD`), when it names the same directory as `cwd`
    /// but through a symlink. The workspace is then found along this path, so a symlink
    /// planted inside a project cannot make its target the next run's workspace.
    #[serde(default)]
    pub logical_cwd: Option<PathBuf>,
    /// The account's home directory from the user database, when it differs from `home`:
    /// credential stores are hidden under both (R-P5), so an unset or wrong `$HOME` does
    /// not expose them.
    #[serde(default)]
    pub account_home: Option<PathBuf>,
    /// `$XDG_RUNTIME_DIR`, if set: `$TMPDIR` in, at or above it is never made writable
    /// (it holds the session's sockets).
    #[serde(default)]
    pub runtime_dir: Option<PathBuf>,
    /// The invoking environment's tool location and git configuration variables (only
    /// those, see [`crate::locations::context_env`]): credential stores are hidden also where
    /// `CARGO_HOME`, `GNUPGHOME`, `XDG_CONFIG_HOME`, … put them, and git configuration given
    /// through `GIT_CONFIG_*` is read like git's files (breaker4 MEDIUM-3, HIGH-3).
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub env: std::collections::BTreeMap<String, String>,
    /// The backend gives each command a private `/tmp` (the Linux namespace sandbox):
    /// `$TMPDIR` is then never made a writable root, and the command gets `TMPDIR=/tmp`.
    /// The host's `$TMPDIR` is where host programs and other runs write files they later
    /// run (pip's build checkouts, `go run`'s binaries): a command left running rewrote
    /// them (attack pass 47, N4).
    #[serde(default)]
    pub private_tmpdir: bool,
    /// The writable roots earlier sandboxed runs recorded (canonical; the session layer's
    /// writable-roots record): a symlink inside one may have been planted by such a run,
    /// so a write grant spelled through it is dropped like one through a symlink inside
    /// this run's roots (attack pass 166, finding 2).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub earlier_roots: Vec<PathBuf>,
    /// What those roots were when recorded, and the recorded roots no longer at their
    /// paths ([`crate::paths::FsView::identity`]'s device, inode and birth time; a birth time
    /// of `(0, 0)` is unknown): a root renamed since, or a directory above it, is found by
    /// what it is (attack pass 167, finding 1: the grant went through a link in a renamed
    /// root).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub earlier_identities: Vec<crate::paths::FileIdentity>,
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
    /// The working directory, which lies under `/tmp` where the sandbox's private `/tmp`
    /// would hide it: bound with the access the profile gives it, so the command can start
    /// there (issue 8 §1). See [`crate::view`].
    Cwd,
}

impl EntryOrigin {
    /// The rule that hides a denied path, as said in a denial's report and hint: `denied
    /// (deny-read SPELLING, SOURCE)` for the profile's or a flag's entry (the source says
    /// which: `--deny-read`, a config file and line, a built-in profile), else `denied by
    /// the profile`. One wording for reads and writes (new-user pass 146: a write to a
    /// `--deny-read` file was said to be "denied by the profile (deny entry)").
    pub fn deny_rule(origin: Option<&EntryOrigin>) -> String {
        match origin {
            Some(EntryOrigin::Profile {
                spelling, source, ..
            }) => format!(
                "denied (deny-read {spelling}{})",
                source
                    .as_deref()
                    .map(|s| format!(", {s}"))
                    .unwrap_or_default()
            ),
            _ => "denied by the profile".to_string(),
        }
    }
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
    /// Whether it is a directory (false when it is a file or missing — except a missing
    /// protected path git expects to be a directory, such as a configured `core.hooksPath`:
    /// true, so its placeholder can be a directory).
    pub is_dir: bool,
    /// Where it came from.
    pub origin: EntryOrigin,
    /// The symlinks the spelling passes through, in walk order, each named by where the
    /// link itself lives (a parent without symlinks + the link's name): e.g. for a
    /// protected `.git/hooks -> ../hk`, `<ws>/.git/hooks`. The backend pins these names
    /// (a link bound onto itself cannot be removed, renamed or replaced) so the spelling
    /// keeps leading to [`Self::path`] (R-P3, issue 7 item 2).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub links: Vec<PathBuf>,
}

/// The symlinks passed through when resolving the lexically normal absolute path `p`, each
/// named by its own location (see [`ResolvedEntry::links`]), following chains and `..`
/// physically like the kernel (at most 40 links). Uses [`FsView::read_link`].
pub fn symlinks_on(fs: &dyn FsView, p: &Path) -> Vec<PathBuf> {
    use std::collections::VecDeque;
    use std::ffi::OsString;
    let mut links = Vec::new();
    let mut cur = PathBuf::from("/");
    let mut rest: VecDeque<OsString> = p
        .components()
        .filter_map(|c| match c {
            std::path::Component::Normal(s) => Some(s.to_os_string()),
            std::path::Component::ParentDir => Some("..".into()),
            _ => None,
        })
        .collect();
    while let Some(c) = rest.pop_front() {
        if c == ".." {
            cur.pop();
            continue;
        }
        let loc = cur.join(&c);
        match fs.read_link(&loc) {
            Some(target) if links.len() < 40 => {
                if !links.contains(&loc) {
                    links.push(loc);
                }
                if target.is_absolute() {
                    cur = PathBuf::from("/");
                }
                for t in target.components().rev() {
                    match t {
                        std::path::Component::Normal(s) => rest.push_front(s.to_os_string()),
                        std::path::Component::ParentDir => rest.push_front("..".into()),
                        _ => {}
                    }
                }
            }
            Some(_) => break,
            None => cur = loc,
        }
    }
    links
}

/// A resolved filesystem policy.
///
/// Serialized internally tagged (`{"mode": "restricted", "default": …, "entries": […]}`);
/// read back through [`FilesystemRepr`], field by field: serde's derived reader for an
/// internally tagged enum first buffers the whole value (every entry) and then reads it a
/// second time, which was most of the helper's payload decode (issue 12).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "mode", rename_all = "kebab-case", try_from = "FilesystemRepr")]
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

/// [`ResolvedFilesystem::layered`] with entries identified by `key` and ordered by
/// `depth`: the strongest access per key, in first-seen order, then stably by depth.
fn collapse<'a, K: std::hash::Hash + Eq>(
    entries: &'a [ResolvedEntry],
    key: impl Fn(&'a ResolvedEntry) -> K,
    depth: impl Fn(&ResolvedEntry) -> usize,
) -> Vec<&'a ResolvedEntry> {
    let mut out: Vec<&ResolvedEntry> = Vec::with_capacity(entries.len());
    let mut index: std::collections::HashMap<K, usize> =
        std::collections::HashMap::with_capacity(entries.len());
    for e in entries {
        match index.entry(key(e)) {
            std::collections::hash_map::Entry::Occupied(i) => {
                let i = *i.get();
                if e.access > out[i].access {
                    out[i] = e;
                }
            }
            std::collections::hash_map::Entry::Vacant(v) => {
                v.insert(out.len());
                out.push(e);
            }
        }
    }
    // Stable, and each depth counted once (not once per comparison).
    out.sort_by_cached_key(|e| depth(e));
    out
}

/// The serialized shape of a [`ResolvedFilesystem`], read without buffering.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FilesystemRepr {
    mode: FilesystemMode,
    default: Option<Access>,
    entries: Option<Vec<ResolvedEntry>>,
}

/// The `mode` tag of a serialized [`ResolvedFilesystem`].
#[derive(Deserialize)]
#[serde(rename_all = "kebab-case")]
enum FilesystemMode {
    Unrestricted,
    Restricted,
}

impl TryFrom<FilesystemRepr> for ResolvedFilesystem {
    type Error = &'static str;

    fn try_from(r: FilesystemRepr) -> Result<Self, Self::Error> {
        match (r.mode, r.default, r.entries) {
            (FilesystemMode::Unrestricted, None, None) => Ok(ResolvedFilesystem::Unrestricted),
            (FilesystemMode::Unrestricted, _, _) => {
                Err("an unrestricted filesystem has no `default` or `entries`")
            }
            (FilesystemMode::Restricted, Some(default), Some(entries)) => {
                Ok(ResolvedFilesystem::Restricted { default, entries })
            }
            (FilesystemMode::Restricted, _, _) => {
                Err("a restricted filesystem needs `default` and `entries`")
            }
        }
    }
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
        access_in(default, entries, fs, path)
    }

    /// The entries collapsed per canonical path (ties resolved deny > write > read) and
    /// sorted shallow-first: the order in which a mount-based backend layers them, so a
    /// deeper path always overrides its ancestors.
    pub fn layered(&self) -> Vec<&ResolvedEntry> {
        let entries = match self {
            ResolvedFilesystem::Unrestricted => return Vec::new(),
            ResolvedFilesystem::Restricted { entries, .. } => entries,
        };
        // One hash lookup per entry: a linear search here made every launch compare
        // hundreds of paths with hundreds (Path equality walks components), the largest
        // CPU cost of `cordon run` in a profile. Clean paths (the resolver's canonical
        // ones) are keyed and counted by their bytes, where equal bytes and equal paths
        // agree (issue 12: hashing a `Path` walks its components; this runs a dozen
        // times per launch); any other path takes the component-wise way.
        if entries.iter().all(|e| crate::paths::is_clean_path(&e.path)) {
            return collapse(
                entries,
                |e| e.path.as_os_str().as_encoded_bytes(),
                |e| {
                    let b = e.path.as_os_str().as_encoded_bytes();
                    if b.len() == 1 {
                        0
                    } else {
                        b.iter().filter(|&&c| c == b'/').count()
                    }
                },
            );
        }
        collapse(entries, |e| e.path.as_path(), |e| depth(&e.path))
    }

    /// How this resolution protected the linked worktrees' admin dirs of the git dir
    /// `git_dir` (canonical, as [`ResolvedFilesystem::writable_git_dirs`] gives it): `None`
    /// when `worktrees/` is protected whole (or the git dir is); otherwise each admin dir it
    /// protected, by name, with whether its `modules/` is protected (an admin dir
    /// protected whole counts as having it). What the sweep after the run takes for "there
    /// before" — the resolution's view, not a second look at the disk, which an
    /// overlapping run could have changed in between (attack pass 36, M2).
    pub fn worktree_admins_protected(
        &self,
        git_dir: &Path,
    ) -> Option<Vec<(std::ffi::OsString, bool)>> {
        let worktrees = git_dir.join("worktrees");
        let protected = self.protected();
        if protected
            .iter()
            .any(|e| e.path == worktrees || e.path == git_dir)
        {
            return None;
        }
        let mut out: Vec<(std::ffi::OsString, bool)> = Vec::new();
        let mut index: std::collections::HashMap<std::ffi::OsString, usize> =
            std::collections::HashMap::new();
        let mut note = |name: &std::ffi::OsStr, modules: bool| match index.get(name) {
            Some(&i) => out[i].1 |= modules,
            None => {
                index.insert(name.to_os_string(), out.len());
                out.push((name.to_os_string(), modules));
            }
        };
        for e in &protected {
            let Ok(rel) = e.path.strip_prefix(&worktrees) else {
                continue;
            };
            let mut parts = rel.components();
            let Some(name) = parts.next() else { continue };
            match parts.next() {
                None => note(name.as_os_str(), true),
                Some(f) => note(name.as_os_str(), f.as_os_str() == "modules"),
            }
        }
        Some(out)
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

    /// The git dirs a command may write, which the host's git later trusts (attack pass
    /// 28, F1): each writable root's own `.git` when it is a directory (not a symlink, not
    /// cordon's placeholder), and the git dirs granted for a linked worktree or a
    /// submodule ([`EntryOrigin::GitWorktree`]); none that lies inside another listed one.
    /// Canonical paths, as the entries hold them.
    pub fn writable_git_dirs(&self, fs: &dyn FsView) -> Vec<PathBuf> {
        let mut dirs: Vec<PathBuf> = Vec::new();
        for e in self.writable_roots() {
            dirs.push(match e.origin {
                EntryOrigin::GitWorktree { .. } => e.path.clone(),
                _ => e.path.join(".git"),
            });
        }
        // Every other directory protected as a git dir ([`protect_git_dir`]: its `hooks`
        // entry): a `--separate-git-dir` or bare repository inside a writable root, a
        // linked worktree's common dir (attack pass 29, F6: those were never swept).
        for e in self.protected() {
            if let EntryOrigin::Protected { reason } = &e.origin {
                if reason == GIT_HOOKS_REASON && e.path.file_name() == Some("hooks".as_ref()) {
                    if let Some(d) = e.path.parent() {
                        dirs.push(d.to_path_buf());
                    }
                }
            }
        }
        dirs.retain(|d| {
            fs.kind(d) == Some(FileKind::Dir)
                && !is_link(fs, d)
                && !is_placeholder(fs, d)
                && self.access_for(fs, &d.join("HEAD")).access == Access::Write
        });
        dirs.sort();
        dirs.dedup();
        let all = dirs.clone();
        dirs.retain(|d| !all.iter().any(|o| o != d && d.starts_with(o)));
        dirs
    }

    /// The symlink through which the path spelled `spelled` (absolute, lexically normal)
    /// leads out of where it is spelled, when a write grant of that spelling would be
    /// dropped — the link lies inside a writable root, so a confined command could have
    /// planted it ([`redirected_out_of_roots`], the rule that drops `-w out` for
    /// `out -> /elsewhere`): the link itself, named where it lives. `None` when the
    /// spelling has no symlink or the rule keeps it. A denial reached through such a link
    /// offers no grant (hints finding 8: `echo x > out/f2` was offered `-w` of the
    /// link's target).
    pub fn redirected_write(&self, fs: &dyn FsView, spelled: &Path) -> Option<PathBuf> {
        let canonical = canonicalize_lenient(fs, spelled);
        if canonical == spelled {
            return None;
        }
        let writable: Vec<(PathBuf, PathBuf)> = self
            .writable_roots()
            .into_iter()
            .map(|e| (e.spelled.clone(), e.path.clone()))
            .collect();
        if !redirected_out_of_roots(spelled, &canonical, Access::Write, &writable, &[]) {
            return None;
        }
        // The first link that lies inside a writable root (not one above the root, such
        // as a workspace reached through a symlinked home).
        symlinks_on(fs, spelled).into_iter().find(|link| {
            link.parent().is_some_and(|dir| {
                writable
                    .iter()
                    .any(|(ws, wc)| dir.starts_with(ws) || dir.starts_with(wc))
            })
        })
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
        // Deny wins every per-path collapse in `layered`, so any deny entry survives it.
        match self {
            ResolvedFilesystem::Unrestricted => false,
            ResolvedFilesystem::Restricted { entries, .. } => {
                entries.iter().any(|e| e.access == Access::Deny)
            }
        }
    }
}

/// [`ResolvedFilesystem::access_for`] over a plain entry list, so resolution can ask it of
/// the entries built so far without cloning them into a [`ResolvedFilesystem`].
fn access_in(
    default: Access,
    entries: &[ResolvedEntry],
    fs: &dyn FsView,
    path: &Path,
) -> PathAccess {
    let lexical = lexical_normalize(path, Path::new("/"));
    let canonical = canonicalize_lenient(fs, &lexical);
    // Only the canonical spelling decides: it is what the backends enforce. (A symlink
    // inside a writable root that leads outside it is therefore not writable; an entry
    // spelled through a symlink applies at its target.) The spelled form is kept on
    // each entry for display.
    let mut best: Option<(usize, Access, usize)> = None;
    let under = crate::paths::Within::new(&canonical);
    for (i, e) in entries.iter().enumerate() {
        if !under.of(&e.path) {
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
    /// `network.unix_sockets` (R-N2) as absolute paths with every symlink resolved (as far
    /// as they exist): the host sockets the unix-socket guard lets the command reach.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unix_sockets: Vec<PathBuf>,
    /// Things resolution could not honour and skipped, in plain words (e.g. `:home` with
    /// no `$HOME`). Shown by `cordon explain`.
    pub notes: Vec<String>,
    /// The `$TMPDIR` that `:tmp` did not make writable because it is not a temp-like
    /// directory no other rule protects (issue 7 item 9); the command's `TMPDIR` is then
    /// set to `/tmp` (the private one on Linux).
    #[serde(default)]
    pub tmpdir_refused: Option<PathBuf>,
    /// The known package caches this run shows, and how (R-C1, [`crate::caches`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub caches: Vec<crate::caches::ResolvedCache>,
    /// Config files hidden by a built-in deny entry that the namespace backend shows as a
    /// copy with credentials removed (R-C2, [`crate::stripped`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stripped: Vec<crate::stripped::StrippedFile>,
    /// cordon's own files as the kernel finds them (canonical) and the symlinks on their
    /// spelled paths: config, rules, remembered hosts, the state directory, the run's
    /// `--report`/`--approvals-from` files ([`ResolveContext::profile_files`]). No write
    /// entry is, or lies inside, one ([`ResolveError::CordonFileWritable`]), and no grant
    /// that would make one writable is offered after a denial (attack pass 45, M4/M5).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cordon_files: Vec<PathBuf>,
    /// Missing files that must still be missing after the run, with who would run what a
    /// command put there ([`crate::login_files`]: a home's shell start-up and ssh login
    /// files inside a writable root, canonical). They get no placeholder (an empty
    /// `~/.bash_profile` would have bash skip `~/.profile`): the run's sweep removes one a
    /// command created, and says so (attack pass 224 #2).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub kept_absent: Vec<(PathBuf, String)>,
}

impl ResolvedProfile {
    /// The first path of this profile that is not valid UTF-8 — the cwd, the workspace, an
    /// entry (either spelling, its links, what it protects), a socket, a cache or a stripped
    /// file — which JSON (the helper's payload, reports) cannot carry. `None` when all are.
    pub fn non_utf8_path(&self) -> Option<&Path> {
        let entries = match &self.filesystem {
            ResolvedFilesystem::Restricted { entries, .. } => entries.as_slice(),
            ResolvedFilesystem::Unrestricted => &[],
        };
        let from_entries = entries.iter().flat_map(|e| {
            let origin: Option<&PathBuf> = match &e.origin {
                EntryOrigin::Pinned { protects } => Some(protects),
                EntryOrigin::GitWorktree { worktree } => Some(worktree),
                _ => None,
            };
            [&e.path, &e.spelled]
                .into_iter()
                .chain(e.links.iter())
                .chain(origin)
        });
        [&self.cwd, &self.workspace]
            .into_iter()
            .chain(from_entries)
            .chain(self.unix_sockets.iter())
            .chain(self.tmpdir_refused.iter())
            .chain(self.caches.iter().flat_map(|c| [&c.path, &c.state]))
            .chain(self.stripped.iter().map(|f| &f.path))
            .find(|p| p.to_str().is_none())
            .map(PathBuf::as_path)
    }
}

/// The command-line advice at the end of [`ResolveError::UnsafeWorkspace`]: a flag that
/// only the user starting cordon can pass (`cordon mcp` leaves it out for its agent).
pub const READ_ONLY_WORKSPACE_ADVICE: &str = "; or use --profile read-only";
/// The command-line advice in [`ResolveError::CodeDirRoot`] (as
/// [`READ_ONLY_WORKSPACE_ADVICE`]).
pub const READ_ONLY_CODE_DIR_ADVICE: &str = "use --profile read-only there, or ";
/// The command-line advice at the end of [`ResolveError::CwdInRebuiltTree`] (as
/// [`READ_ONLY_WORKSPACE_ADVICE`]).
pub const UNCONFINED_PROFILE_ADVICE: &str =
    ", or use --profile danger-full-access if you mean to run it unconfined";

/// The advice of a workspace refusal ([`ResolveError::UnsafeWorkspace`]) for a cwd that is
/// not in a project, in a shell's terms (`cordon mcp` says it in the call's).
pub const CD_INTO_PROJECT: &str = "cd into a project directory";

/// Errors from resolution.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum ResolveError {
    /// A `network.unix_sockets` entry is invalid or is a container-engine socket listed
    /// without `i_understand_host_root = true` (R-N2; a symlink to one counts).
    #[error("{0}")]
    UnixSocket(String),
    /// The cwd is not absolute.
    #[error("cwd must be an absolute path, got {0:?}")]
    RelativeCwd(PathBuf),
    /// The cwd does not exist.
    #[error("working directory {0:?} does not exist")]
    MissingCwd(PathBuf),
    /// The cwd was reached (`$PWD`) through a symlink that lies where an earlier
    /// sandboxed run could write, and no project on the typed path holds it: such a run
    /// could have planted it to make its target the next run's writable workspace (attack
    /// pass 242, F2).
    #[error(
        "the working directory {cwd} is reached through the symlink {link} (as {typed}), \
         which lies where an earlier sandboxed run could write, so such a run could have \
         planted it: cd to the real path ({cwd}) if you mean to work there"
    )]
    CwdThroughPlantedLink {
        /// The canonical cwd.
        cwd: PathBuf,
        /// The typed cwd (`$PWD`).
        typed: PathBuf,
        /// The symlink on it.
        link: PathBuf,
    },
    /// The cwd's path is longer than the kernel accepts (`PATH_MAX`): it cannot be looked
    /// up or entered by name (L3b: said to "not exist"). The message is
    /// [`crate::paths::too_long`]'s.
    #[error("{0}")]
    CwdTooLong(String),
    /// The workspace would be `/`, a home directory or a directory above one: making it
    /// writable would expose shell start-up files and cordon's own user config (R-P3).
    /// The second field says which of those applied and what to do ([`workspace_refusal`]).
    #[error("refusing to make {0} writable as the workspace: {1}{advice}", advice = READ_ONLY_WORKSPACE_ADVICE)]
    UnsafeWorkspace(PathBuf, String),
    /// A writable root is a directory git runs code from for every repository (the
    /// global `core.hooksPath` or `init.templateDir` names it: someone keeping their hooks
    /// in a repository): its missing hooks cannot be kept from being created (attack pass
    /// 26, F14). The second field names the key and the file that set it.
    #[error("refusing to make {0} writable: {1}, so a hook a command writes there runs on the host in every repository that uses it; {advice}edit a copy", advice = READ_ONLY_CODE_DIR_ADVICE)]
    CodeDirRoot(PathBuf, String),
    /// A writable entry (of the profile, a `-w`, an approved retry or an agent's
    /// additional permissions) is one of cordon's own files — its config, rules, remembered
    /// hosts, session store, `--report` or `--approvals-from` file — or lies inside one
    /// (R-P3): a command could rewrite what decides later runs (attack pass 45, M5: an
    /// approved `-w cordon.toml` made the profile `danger-full-access`). A grant that
    /// *holds* one is fine: the file stays protected inside it.
    #[error("refusing to make {0} writable: it is cordon's own {1}, which decides later runs and stays read-only to every command; edit it outside cordon")]
    CordonFileWritable(PathBuf, String),
    /// An entry has an empty path.
    #[error("entry {0}: empty path; write `:workspace` for the project root")]
    EmptyPath(usize),
    /// An error about one entry the user wrote in a config file, named by where it was
    /// written (`c.toml:4`), not by its place among the profile's entries, most of which are
    /// built in (new-user pass 192, #5: "entry 155" for the only entry of a profile).
    #[error("{message}")]
    InEntry {
        /// Where the entry was written (`/x/config.toml:12`).
        at: String,
        /// The error, with the entry named by `at`.
        message: String,
    },
    /// A deny entry under `:home`/`~` but no home directory is known, so the credential
    /// stores cannot be located and hidden (R-P5).
    #[error("entry {index} ({spelling:?}) hides a path under the home directory, but neither $HOME nor the user database names one; set HOME")]
    NoHome {
        /// Entry index.
        index: usize,
        /// The spelling.
        spelling: String,
    },
    /// An entry's path is a glob pattern (`**/.env`): refused, never taken literally.
    #[error("entry {index} ({spelling:?}): {}", crate::profile::GLOB_REFUSED)]
    Glob {
        /// Entry index.
        index: usize,
        /// The spelling.
        spelling: String,
    },
    /// [`ResolveError::Glob`] for an entry a flag added (`--deny-read '*.pem'`), named by
    /// the flag.
    #[error("{flag} {spelling:?}: {}", crate::profile::GLOB_REFUSED)]
    GlobFlag {
        /// The flag (`--deny-read`, `--writable`).
        flag: String,
        /// The spelling (made absolute).
        spelling: String,
    },
    /// An entry's path starts with a shell variable cordon does not know (`$HOME/x`,
    /// `${XDG_DATA_HOME}/y`) or another account's home (`~root/x`): refused, never taken
    /// as a directory named `$HOME` (attack pass 54 F6, 55 F3: a deny entry spelled so hid
    /// nothing, and said so only in `explain`).
    #[error("entry {index} ({spelling:?}): {var:?} is not expanded in a profile path (it would name a directory called {var:?} in the working directory); write `~/…` or `:home/…` for your home directory, `:workspace/…` for the project, or the path itself")]
    ShellVariable {
        /// Entry index.
        index: usize,
        /// The spelling.
        spelling: String,
        /// The variable as spelled (`$HOME`, `${HOME}`).
        var: String,
    },
    /// The working directory lies in a tree the Linux sandbox rebuilds for every command
    /// ([`crate::paths::REBUILT_TREES`]: `/dev` with a private, empty `/dev/shm`; `/proc`):
    /// the command could not even start there (breaker, stop 21: `--dry-run` said it would
    /// run, and the run failed entering the directory).
    #[error("the working directory {cwd} is inside {tree}, which the sandbox rebuilds for every command (a private, empty /dev/shm and a new /proc), so the command could not start there; move the project out of {tree} (e.g. under /var/tmp){advice}", advice = UNCONFINED_PROFILE_ADVICE)]
    CwdInRebuiltTree {
        /// The cwd (canonical).
        cwd: PathBuf,
        /// The rebuilt tree it is in.
        tree: String,
    },
    /// A writable root cordon cannot list or search (its permissions, e.g. `chmod 311`
    /// by an earlier command): the repositories inside it could not be looked for.
    #[error("cannot list the writable directory {root} (its permissions; an earlier command may have changed them), so cordon cannot look for the git repositories inside it; restore them with `chmod u+rwx {root}`")]
    RootUnlistable {
        /// The writable root.
        root: PathBuf,
    },
    /// A read or write entry whose `..` leaves through a symlink (`-w link/..`): where it
    /// lands depends on a link a confined command may have planted, and the spelling no
    /// longer shows it (breaker, stop 21).
    #[error("entry {index} ({spelling:?}): `..` after a symlink in {link} — it leads to {leads_to} now, but where depends on the link, which a command may have planted; spell the target path without `..` (e.g. {leads_to}, if that is the one)")]
    DotDotThroughLink {
        /// Entry index.
        index: usize,
        /// The spelling.
        spelling: String,
        /// The path (up to the `..`) whose symlink the `..` left through.
        link: PathBuf,
        /// Where the kernel takes the spelling now (new-user pass 182 #5: the message named
        /// no path to spell instead).
        leads_to: PathBuf,
    },
    /// A deny-read entry decides the command's working directory (e.g. `--deny-read ..`
    /// from a subdirectory of the workspace): the command could not even start there.
    #[error("deny-read entry {path} hides the working directory {cwd} (it is the cwd or an ancestor of it and no deeper grant re-opens the cwd); deny a narrower path, or run from outside it")]
    DenyCoversCwd {
        /// The denied path (canonical).
        path: PathBuf,
        /// The cwd (canonical).
        cwd: PathBuf,
    },
    /// A built-in credential entry spelled through a tool's location variable
    /// (`$GNUPGHOME`) names `/`, a system or shared top directory, a home or the workspace
    /// (or above them): hiding it would hide the whole tree, leaving it readable would expose
    /// the store, so the run is refused (fails closed; breaker4 MEDIUM-3).
    #[error("{var}={value} puts a credential store at {path} ({why}): hiding it would hide that whole tree and leaving it readable would expose the store, so cordon refuses to run; point {var} at the store's own directory or file, or unset it for cordon (`env -u {var} cordon …`)")]
    StoreLocationTooWide {
        /// The variable.
        var: String,
        /// Its value.
        value: String,
        /// The path it would hide.
        path: PathBuf,
        /// Why that is too wide.
        why: String,
    },
    /// An entry uses an unknown symbolic root.
    #[error("entry {index} ({spelling:?}): unknown symbolic root; use one of :workspace, :tmp, :home, :minimal, :root")]
    UnknownRoot {
        /// Entry index.
        index: usize,
        /// The spelling.
        spelling: String,
    },
}

/// The reason of the protected entry a cordon configuration, rules or session file gets
/// inside a writable root (R-P3): such a grant is never offered as a one-off widening.
pub const CONFIG_PROTECTION_REASON: &str = "cordon configuration (decides later runs' profile)";

/// Finds the project root for `cwd`: the nearest ancestor (including `cwd`) holding a
/// `.git` (directory or `gitdir:` file) or a `.cordon` directory; `cwd` itself if none;
/// a git dir that encloses that (a bare repository) instead.
pub fn find_workspace(fs: &dyn FsView, cwd: &Path) -> PathBuf {
    let mut cur = cwd.to_path_buf();
    let (workspace, marker) = loop {
        if has_marker(fs, &cur) {
            break (cur, true);
        }
        if !cur.pop() {
            break (cwd.to_path_buf(), false);
        }
    };
    // As [`locate`]: a git dir no marked project encloses is the workspace.
    widen_to_git_dir(
        fs,
        Location {
            cwd: cwd.to_path_buf(),
            workspace,
            marker,
            note: None,
        },
    )
    .workspace
}

/// The project roots that enclose `workspace`: each strict ancestor of it that holds a
/// workspace marker (see [`has_marker`]), nearest first, up to but not including `/` or a
/// home directory (`homes`, as spelled or canonical: the walk stops there).
///
/// Why: the workspace is the *nearest* marked ancestor of the cwd, and a confined command
/// that could write project `W` can plant a marker (`W/sub/.git/HEAD`, a `W/sub/.git`
/// `gitdir:` file, a non-empty `W/sub/.cordon/`) so that a later run from `W/sub` gets
/// `W/sub` as its workspace. A deny entry the user spelled on `:workspace` (`deny
/// :workspace/.env`) must still hide `W/.env` then: [`resolve`] expands deny entries
/// spelled on `:workspace` for the workspace *and* for every root listed here. Grants are
/// never widened this way (only the workspace is writable).
pub fn enclosing_project_roots(
    fs: &dyn FsView,
    workspace: &Path,
    homes: &[PathBuf],
) -> Vec<PathBuf> {
    let homes: Vec<PathBuf> = homes
        .iter()
        .flat_map(|h| [h.clone(), canonicalize_lenient(fs, h)])
        .collect();
    let mut out = Vec::new();
    let mut a = workspace.to_path_buf();
    while a.pop() {
        if depth(&a) == 0 || homes.contains(&a) {
            break;
        }
        if has_marker(fs, &a) {
            out.push(a.clone());
        }
    }
    out
}

/// Whether an entry spelling is rooted at `:workspace` (`:workspace` or `:workspace/…`).
fn on_workspace(spelling: &str) -> bool {
    spelling == ":workspace" || spelling.starts_with(":workspace/")
}

/// Where a command runs: its canonical cwd and the workspace `:workspace` stands for, with
/// a note when they were found along the typed path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    /// Canonical cwd.
    pub cwd: PathBuf,
    /// Canonical workspace.
    pub workspace: PathBuf,
    /// Whether a marker (`.git`, `.cordon/`) decided the workspace; `false` = the cwd
    /// itself, for lack of one.
    pub marker: bool,
    /// Set when the cwd was reached through a symlink and the workspace was taken along
    /// the typed path (`$PWD`).
    pub note: Option<String>,
}

/// Name of the note older cordon versions wrote into the placeholder for a missing
/// protected `.git` or `.cordon` directory (R-P3); placeholders are now empty directories
/// (git ignores them). Placeholders are permanent (never removed by cordon: removing one
/// would detach the read-only bind of a run still using it), so a directory holding only
/// this note is still not a marker for [`find_workspace`].
pub const PLACEHOLDER_NOTE: &str = "CORDON-PLACEHOLDER";

/// What the placeholder note says (for a person who finds it).
pub const PLACEHOLDER_NOTE_TEXT: &str = "Created by cordon: this protected name did not exist, \
so cordon made it (empty) to keep it read-only inside its sandbox.\nIt is not a workspace \
marker and not a repository. You may delete it when no cordon run is active; cordon \
recreates it when needed.\n";

/// Whether `dir` holds a workspace marker:
/// - `.git` as a file (a `gitdir:` pointer), or as a non-empty directory that holds `HEAD`
///   (what git itself requires of a git dir) or does not hold cordon's legacy
///   [`PLACEHOLDER_NOTE`];
/// - `.cordon` as a non-empty directory that does not hold the [`PLACEHOLDER_NOTE`].
///
/// So the permanent placeholder cordon leaves for a missing `.git`/`.cordon` (an empty
/// directory, which git ignores: it never shows in `git status`; older versions left the
/// note in it) never moves the workspace of a later run: a run in `W` followed by a run in
/// `W/sub` still picks `W/sub` when neither has a marker of its own.
///
/// Why an empty directory not counting can never give a confined command a wider
/// workspace than it could already get: to make a marker `X/.cordon` empty, a command must
/// be able to write inside it, and then it can remove `X/.cordon` outright, which has the
/// same effect (the search goes on above `X`). The protected marker of a command's own
/// workspace root is a read-only mount, so it can do neither. Creating an empty directory
/// only removes a marker that was not there. What changes is for the user: an empty
/// `.cordon/` they made by hand is no longer a marker (README: put the project config in it).
/// Shared by every caller that asks "is this a project root" (the CLI's refusal of
/// config files inside a project).
pub fn has_marker(fs: &dyn FsView, dir: &Path) -> bool {
    let git = dir.join(".git");
    let git_marker = match fs.kind(&git) {
        None => false,
        Some(FileKind::Dir) => !is_placeholder(fs, &git),
        Some(_) => true,
    };
    let cordon = dir.join(".cordon");
    git_marker || (fs.kind(&cordon) == Some(FileKind::Dir) && !is_placeholder(fs, &cordon))
}

/// Whether the directory `d` is cordon's placeholder: it is empty, or (left by older
/// versions) it holds the [`PLACEHOLDER_NOTE`] and no `HEAD` (so a `git init` over a `.git`
/// placeholder makes it a repository again).
fn is_placeholder(fs: &dyn FsView, d: &Path) -> bool {
    fs.is_empty_dir(d)
        || (fs.kind(&d.join(PLACEHOLDER_NOTE)) == Some(FileKind::File)
            && fs.kind(&d.join("HEAD")).is_none())
}

/// Finds the canonical cwd and the workspace for `ctx`.
///
/// When the cwd was reached through a symlink (`ctx.logical_cwd`, the typed `$PWD`, names
/// the same directory), the workspace is searched along the typed path, and a marker
/// reached *through* a symlink component is ignored: a symlink a confined command planted
/// inside a project (`ln -s / rootlink`, or a link to another repository) cannot make its
/// target the next run's workspace; the project that holds the link stays the workspace.
/// Errors: relative or missing cwd.
pub fn locate(ctx: &ResolveContext, fs: &dyn FsView) -> Result<Location, ResolveError> {
    locate_by_markers(ctx, fs).map(|l| widen_to_git_dir(fs, l))
}

/// A cwd inside a git dir that no marked project decides (a bare repository, e.g.
/// `cd repo.git/hooks`) has that git dir as its workspace, marked, so that its hooks,
/// config and the rest of [`protect_git_dir`] stay protected (breaker, stop 21: the cwd
/// itself — or `hooks/` — became the writable workspace, and a planted hook ran at the
/// next push). A marked project that encloses the git dir stays the workspace (`.git`
/// itself, or a bare repository inside a project, is protected by its scan), and so does
/// one inside the git dir outside its protected children.
fn widen_to_git_dir(fs: &dyn FsView, loc: Location) -> Location {
    let Some(g) = crate::git::enclosing_git_dir(fs, &loc.cwd) else {
        return loc;
    };
    // A marked project inside the git dir stays the workspace unless it lies in one of the
    // git dir's protected children (`repo.git/hooks/.cordon`, planted by a run there).
    let in_protected_child = loc.workspace.strip_prefix(&g).is_ok_and(|rel| {
        rel.components().next().is_some_and(|c| {
            c.as_os_str() == "worktrees"
                || GIT_DIR_PROTECTED
                    .iter()
                    .any(|(name, _)| c.as_os_str() == *name)
        })
    });
    if loc.marker && !in_protected_child && loc.workspace != g {
        return loc;
    }
    let note = (loc.workspace != g).then(|| {
        format!(
            "the cwd {} is inside the git directory {} (a bare repository): that is the \
             workspace, with its hooks and config protected",
            loc.cwd.display(),
            g.display()
        )
    });
    Location {
        note: note.or(loc.note),
        workspace: g,
        marker: true,
        cwd: loc.cwd,
    }
}

/// The typed working directory: `logical` (`$PWD`), absolute and lexically normalised,
/// when it names the directory `cwd` (canonical) is; `None` otherwise. The one judgement
/// of `$PWD` for the workspace search ([`locate`]) and for the relative paths a command
/// line gives (the session's grants: attack pass 179, F1).
pub fn typed_cwd(fs: &dyn FsView, cwd: &Path, logical: Option<&Path>) -> Option<PathBuf> {
    let l = lexical_normalize(logical.filter(|l| l.is_absolute())?, Path::new("/"));
    (fs.canonicalize(&l).as_deref() == Some(cwd)).then_some(l)
}

fn locate_by_markers(ctx: &ResolveContext, fs: &dyn FsView) -> Result<Location, ResolveError> {
    if !ctx.cwd.is_absolute() {
        return Err(ResolveError::RelativeCwd(ctx.cwd.clone()));
    }
    let cwd_lex = lexical_normalize(&ctx.cwd, Path::new("/"));
    let cwd = fs.canonicalize(&cwd_lex).ok_or_else(|| {
        match crate::paths::too_long("working directory", &ctx.cwd) {
            Some(why) => ResolveError::CwdTooLong(why),
            None => ResolveError::MissingCwd(ctx.cwd.clone()),
        }
    })?;
    let typed = typed_cwd(fs, &cwd, ctx.logical_cwd.as_deref()).filter(|l| *l != cwd);
    if let Some(typed) = typed {
        let mut a = typed.clone();
        loop {
            // Only a typed directory with no symlink anywhere on its path counts: one
            // reached through a link earlier on the path (`proj/t -> /tmp`, then `cd
            // proj/t/other-repo`) is the link's target, not a directory of the project
            // that holds the link (attack pass 242, F1: only a link as the last component
            // was passed over, and the other repository became the writable workspace).
            if fs.canonicalize(&a).as_deref() == Some(a.as_path()) && has_marker(fs, &a) {
                let ws = canonicalize_lenient(fs, &a);
                return Ok(Location {
                    note: Some(format!(
                        "the cwd {} is reached through a symlink ({}); the workspace is taken along the typed path: {}",
                        cwd.display(),
                        typed.display(),
                        ws.display()
                    )),
                    cwd,
                    workspace: ws,
                    marker: true,
                });
            }
            if !a.pop() {
                break;
            }
        }
        // No project on the typed path holds the link (`~/p2link -> /data/p2`, then
        // `cd ~/p2link/src`: the user's own link to a project root): the real path decides,
        // as without `$PWD` (new-user pass nu15 N1: the subdirectory became the workspace,
        // the project's own `.git` read-only, and placeholders were made in it) — unless
        // the link lies where an earlier sandboxed run could write (a `-w` directory: attack
        // pass 242, F2), which refuses.
        let links = symlinks_on(fs, &typed);
        if let Some(link) =
            planted_link_among(fs, &ctx.earlier_roots, &ctx.earlier_identities, &links)
        {
            return Err(ResolveError::CwdThroughPlantedLink {
                cwd,
                typed,
                link: link.clone(),
            });
        }
    }
    let mut a = cwd.clone();
    loop {
        if has_marker(fs, &a) {
            return Ok(Location {
                cwd,
                workspace: a,
                marker: true,
                note: None,
            });
        }
        if !a.pop() {
            break;
        }
    }
    Ok(Location {
        workspace: cwd.clone(),
        cwd,
        marker: false,
        note: None,
    })
}

/// Removes every read or write grant beneath a tree the Linux sandbox rebuilds per command
/// ([`crate::paths::REBUILT_TREES`]: `/dev` with a private `/dev/shm`, `/proc`), with a
/// note: the host path would not be there, so reporting it as readable or writable would
/// be false (breaker MEDIUM-3: `-w /dev/shm/x` was listed as writable while the command saw
/// an empty `/dev/shm`). Deny entries stay (they hide nothing that is there, harmlessly).
fn drop_rebuilt_tree_grants(out: &mut Vec<ResolvedEntry>, notes: &mut Vec<String>) {
    out.retain(|e| {
        // `within` is `Path::starts_with` as a byte test (no component parse per entry
        // and tree).
        let under = crate::paths::Within::new(&e.path);
        let tree = crate::paths::REBUILT_TREES
            .iter()
            .find(|t| under.of(Path::new(t)));
        match tree {
            Some(t) if e.access != Access::Deny => {
                notes.push(format!(
                    "{} {} dropped: {t} is rebuilt inside the sandbox for every command (a \
                     private, empty /dev/shm and a new /proc), so the host path is not there",
                    e.access,
                    e.path.display()
                ));
                false
            }
            _ => true,
        }
    });
}

/// Whether a workspace that no marker decided (the cwd itself) may be made writable: not
/// inside a home directory or a system tree ([`crate::paths::in_system_tree`]: temp trees
/// excepted). A confined command can
/// leave a symlink that a later harness `chdir`s through; without a marker nothing shows
/// where the project is.
fn fallback_too_sensitive(ws: &Path, homes: &[PathBuf], fs: &dyn FsView) -> bool {
    // Mount points and the directory of home directories hold other people's and other
    // projects' trees: never a marker-less workspace (breaker, stop 18: `/mnt` and, as
    // root, `/home` were accepted).
    crate::paths::SHARED_TOP_DIRS
        .iter()
        .any(|t| ws == Path::new(t))
        || homes
            .iter()
            .any(|h| ws.starts_with(canonicalize_lenient(fs, h)) || ws.starts_with(h))
        || crate::paths::in_system_tree(ws, None)
}

/// The home directories to consider: `$HOME` and the account's home, de-duplicated.
fn homes(ctx: &ResolveContext) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = Vec::new();
    for h in ctx.home.iter().chain(ctx.account_home.iter()) {
        let h = lexical_normalize(h, Path::new("/"));
        if h.is_absolute() && !v.contains(&h) {
            v.push(h);
        }
    }
    v
}

/// Why `ws` may not be made writable as the workspace — the root, a shared temp directory
/// itself (`/var/tmp`: every other project and repository in it, hooks included — breaker,
/// stop 18 — marker or not: a marker there is anyone's), a home directory or above one;
/// or, when no marker decided it, [`fallback_too_sensitive`] — said for the case that applied
/// with what to do (new-user pass nu9: one sentence listed five reasons, and its advice
/// "create a `.cordon/`" did not work — an empty `.cordon/` is not a marker). `None`: it
/// may.
fn workspace_refusal(
    ws: &Path,
    homes: &[PathBuf],
    fs: &dyn FsView,
    marker: bool,
) -> Option<String> {
    let project = "run `git init` there, or mark it for cordon with `mkdir -p .cordon && \
                   touch .cordon/workspace` (an empty `.cordon/` is not a marker)";
    if depth(ws) == 0 {
        return Some(format!("it is the root directory; {CD_INTO_PROJECT}"));
    }
    if let Some(t) = crate::paths::TEMP_TREES.iter().find(|t| ws == Path::new(t)) {
        return Some(format!(
            "it is the shared temp directory {t} itself, which holds every other project in \
             it; make a directory for the project (`mkdir {t}/proj && cd {t}/proj`)"
        ));
    }
    if homes
        .iter()
        .any(|h| canonicalize_lenient(fs, h).starts_with(ws) || h.starts_with(ws))
    {
        return Some(format!(
            "it is your home directory or above it (shell start-up files, cordon's own \
             configuration); {CD_INTO_PROJECT}"
        ));
    }
    // A clone inside a package cache (`~/.cargo/git/checkouts/<dep>/<rev>` has its own
    // `.git`): its marker would make the host cache writable, and every later host build
    // compiles what is written there (attack pass 26, F7).
    if let Some(cache) = homes.iter().find_map(|h| {
        let hc = canonicalize_lenient(fs, h);
        crate::caches::KNOWN_CACHES
            .iter()
            .map(|c| c.path)
            .chain(crate::caches::TOOL_HOMES.iter().map(|t| t.path))
            .map(|rel| hc.join(rel))
            .find(|c| ws.starts_with(c))
    }) {
        return Some(format!(
            "it is inside the package cache {}, whose contents later builds on the host run; \
             copy it out to work on it (`cp -r {} ~/src/`)",
            cache.display(),
            ws.display()
        ));
    }
    if marker || !fallback_too_sensitive(ws, homes, fs) {
        return None;
    }
    if crate::paths::SHARED_TOP_DIRS
        .iter()
        .any(|t| ws == Path::new(t))
    {
        return Some(format!(
            "it holds other people's or other disks' trees; {CD_INTO_PROJECT}"
        ));
    }
    let in_home = homes
        .iter()
        .any(|h| ws.starts_with(canonicalize_lenient(fs, h)) || ws.starts_with(h));
    let place = if in_home {
        "under your home"
    } else {
        "in a system tree"
    };
    Some(format!(
        "it is {place} and no project marker (`.git`, a non-empty `.cordon/`) was found in it \
         or above it, so nothing shows where the project is; {project}"
    ))
}

/// Expands one spelling into lexically-normal absolute paths. `Ok(vec![])` means the
/// root is unavailable here (noted by the caller). `pub(crate)` so overlays
/// ([`crate::overlay`]) expand spellings exactly as resolution does.
pub(crate) fn expand(
    fs: &dyn FsView,
    spelling: &str,
    index: usize,
    ctx: &ResolveContext,
    workspace: &Path,
) -> Result<Vec<PathBuf>, ResolveError> {
    expand_for(fs, spelling, index, ctx, workspace, Access::Read)
}

/// The symbolic roots an entry path may start with (`:workspace/src`): the roots
/// [`expand`] knows, R-P1.
pub const SYMBOLIC_ROOTS: [&str; 5] = ["workspace", "home", "root", "tmp", "minimal"];

/// `(root, rest)` of a spelling on one of [`SYMBOLIC_ROOTS`]: `:workspace//src/` →
/// `("workspace", "src/")` (the rest without leading `/`: attack pass 53 F1). `None` for
/// any other spelling, an unknown root (`:Workspace`) included.
pub fn split_symbolic_root(spelling: &str) -> Option<(&str, &str)> {
    let s = spelling.strip_prefix(':')?;
    let (root, rest) = s.split_once('/').unwrap_or((s, ""));
    SYMBOLIC_ROOTS
        .contains(&root)
        .then(|| (root, rest.trim_start_matches('/')))
}

/// Whether `spelling` starts with one of [`SYMBOLIC_ROOTS`] (`:tmp`, `:workspace/x`).
pub fn is_symbolic_root_spelling(spelling: &str) -> bool {
    split_symbolic_root(spelling).is_some()
}

/// The part of a path spelling no shell expanded: a leading `$VAR` / `${VAR}` or another
/// account's `~user` (`"$HOME"` of `$HOME/x`, `"~root"` of `~root/x`); `None` for every
/// other spelling (`~`, `~/x` are the home directory). Profile entries and command-line
/// paths spelled so are refused (attack passes 54 F6, 55 F3: they were relative paths
/// that hid nothing).
pub fn unexpanded_head(spelling: &str) -> Option<&str> {
    let other_home = spelling.starts_with('~') && spelling != "~" && !spelling.starts_with("~/");
    (spelling.starts_with('$') || other_home)
        .then(|| spelling.split('/').next().unwrap_or(spelling))
}

/// [`expand`] for an entry of the given access: `:home`/`~` deny entries expand under every
/// known home (`$HOME` and the account's), so a wrong `$HOME` hides nothing less; `:tmp`
/// ignores a `$TMPDIR` that is `/`, a home directory or above one, or the workspace or
/// above it (it would become writable wholesale).
pub(crate) fn expand_for(
    fs: &dyn FsView,
    spelling: &str,
    index: usize,
    ctx: &ResolveContext,
    workspace: &Path,
    access: Access,
) -> Result<Vec<PathBuf>, ResolveError> {
    expand_with_homes(fs, spelling, index, ctx, workspace, access, &homes(ctx))
}

/// [`expand_for`] with `all_homes` already [`homes`]`(ctx)`: resolution expands every
/// entry with one context, so it works the list out once, not once per entry.
fn expand_with_homes(
    fs: &dyn FsView,
    spelling: &str,
    index: usize,
    ctx: &ResolveContext,
    workspace: &Path,
    access: Access,
    all_homes: &[PathBuf],
) -> Result<Vec<PathBuf>, ResolveError> {
    if spelling.trim().is_empty() {
        return Err(ResolveError::EmptyPath(index));
    }
    // A read or write grant whose `..` leaves through a symlink is refused (a deny is
    // resolved as the kernel resolves it: that hides the real file).
    let crossed = std::cell::RefCell::new(None::<PathBuf>);
    let norm = |p: &Path, base: &Path| {
        let (n, c) = crate::paths::physical_normalize_traced(fs, p, base);
        if crossed.borrow().is_none() {
            *crossed.borrow_mut() = c;
        }
        n
    };
    let out = expand_bases(
        fs, spelling, index, ctx, workspace, access, all_homes, &norm,
    )?;
    if access != Access::Deny {
        // Only a link a command could have planted: in the workspace or where an earlier
        // sandboxed run could write. The user's own (a home reached through a symlink, a
        // link to a project made outside every writable root) is followed as the kernel
        // follows it (new-user pass 245 #1: `-w ../somedir` from `~/proj` with `$HOME` a
        // symlink was refused).
        let planted = crossed.into_inner().filter(|link| {
            let mut roots = ctx.earlier_roots.clone();
            roots.push(workspace.to_path_buf());
            planted_link_among(fs, &roots, &ctx.earlier_identities, &symlinks_on(fs, link))
                .is_some()
        });
        if let Some(link) = planted {
            return Err(ResolveError::DotDotThroughLink {
                index,
                spelling: spelling.to_string(),
                link,
                leads_to: out.first().cloned().unwrap_or_default(),
            });
        }
    }
    Ok(out)
}

#[allow(clippy::too_many_arguments)]
fn expand_bases(
    fs: &dyn FsView,
    spelling: &str,
    index: usize,
    ctx: &ResolveContext,
    workspace: &Path,
    access: Access,
    all_homes: &[PathBuf],
    norm: &dyn Fn(&Path, &Path) -> PathBuf,
) -> Result<Vec<PathBuf>, ResolveError> {
    if crate::profile::has_glob_syntax(spelling) {
        return Err(ResolveError::Glob {
            index,
            spelling: spelling.to_string(),
        });
    }
    let home_bases: &[PathBuf] = if access == Access::Deny {
        all_homes
    } else {
        ctx.home.as_slice()
    };
    let no_home = || {
        if access == Access::Deny {
            Err(ResolveError::NoHome {
                index,
                spelling: spelling.to_string(),
            })
        } else {
            Ok(vec![])
        }
    };
    // `:workspace//x` is `:workspace/x`, as a shell reads `$HOME//x` (attack pass 53 F1:
    // the rest was joined as the absolute `/x`, so a deny entry hid `/x` instead, and a
    // write entry granted it).
    let (root, rest) = if let Some(s) = spelling.strip_prefix(':') {
        match s.split_once('/') {
            Some((r, rest)) => (Some(r), rest.trim_start_matches('/')),
            None => (Some(s), ""),
        }
    } else {
        (None, spelling)
    };
    let bases: Vec<PathBuf> = match root {
        None => {
            // `$CARGO_HOME/credentials`: a tool's location variable from the invoking
            // environment (breaker4 MEDIUM-3); unset or relative names nothing.
            if let Some((var, rest)) = crate::locations::split_spelling(spelling) {
                return Ok(crate::locations::expand(
                    var,
                    rest,
                    &ctx.env,
                    ctx.home.as_deref(),
                ));
            }
            if let Some(head) = unexpanded_head(spelling) {
                return Err(ResolveError::ShellVariable {
                    index,
                    spelling: spelling.to_string(),
                    var: head.to_string(),
                });
            }
            if let Some(r) = spelling
                .strip_prefix("~/")
                .map(|r| r.trim_start_matches('/'))
                .or(if spelling == "~" { Some("") } else { None })
            {
                if home_bases.is_empty() {
                    return no_home();
                }
                return Ok(home_bases
                    .iter()
                    .map(|h| norm(&h.join(r), &ctx.cwd))
                    .collect());
            }
            return Ok(vec![norm(Path::new(spelling), &ctx.cwd)]);
        }
        Some("workspace") => vec![workspace.to_path_buf()],
        Some("home") => {
            if home_bases.is_empty() {
                return no_home();
            }
            home_bases.to_vec()
        }
        Some("root") => vec![PathBuf::from("/")],
        Some("tmp") => {
            let mut v = vec![PathBuf::from("/tmp")];
            if let Some(t) = &ctx.tmpdir {
                let t = crate::paths::physical_normalize(fs, t, &ctx.cwd);
                if t != Path::new("/tmp") && !tmp_too_wide(&t, all_homes, workspace) {
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
                norm(Path::new(rest), &b)
            }
        })
        .collect())
}

pub(crate) fn entry_for(
    fs: &dyn FsView,
    spelled: PathBuf,
    access: Access,
    origin: EntryOrigin,
) -> ResolvedEntry {
    let path = canonicalize_lenient(fs, &spelled);
    let kind = fs.kind(&path);
    let links = if path != spelled {
        symlinks_on(fs, &spelled)
    } else {
        Vec::new()
    };
    ResolvedEntry {
        path,
        spelled,
        access,
        exists: kind.is_some(),
        is_dir: kind == Some(FileKind::Dir),
        origin,
        links,
    }
}

/// Reads a `gitdir: <path>` file; returns the git dir it names (canonical, lenient), or
/// why not, naming the file (a FIFO, device or oversized file is never read: issue 7
/// item 7).
pub(crate) fn read_gitdir_file(fs: &dyn FsView, dotgit: &Path) -> Result<PathBuf, String> {
    let text = fs
        .read_small(dotgit, SMALL_FILE_CAP)
        .map_err(|r| format!("{}: {r}", dotgit.display()))?;
    let target = text
        .lines()
        .next()
        .and_then(|l| l.strip_prefix("gitdir:"))
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .ok_or_else(|| format!("{}: a .git file without a `gitdir:` line", dotgit.display()))?;
    let base = dotgit.parent().unwrap_or(Path::new("/"));
    // `..` as git (the kernel) resolves it (breaker, stop 21: `gitdir: lnk/../gs` was
    // taken as `sub/gs` while git used where `lnk` leads).
    Ok(canonicalize_lenient(
        fs,
        &crate::paths::physical_normalize(fs, Path::new(target), base),
    ))
}

/// `err` about the entry at `index`, renamed by where it was written when that is a config
/// file's line (`source` `/x/c.toml:4`): [`ResolveError::InEntry`]. Errors of built-in
/// entries, of flags, and those that name no entry are kept as they are.
fn named_by_source(err: ResolveError, index: usize, source: Option<&str>) -> ResolveError {
    let Some(at) = source.filter(|s| {
        !s.starts_with("--") && !s.starts_with("built-in") && s.rsplit_once(':').is_some()
    }) else {
        return err;
    };
    let text = err.to_string();
    let own = format!("entry {index}");
    let Some(rest) = text.strip_prefix(&own) else {
        return err;
    };
    ResolveError::InEntry {
        at: at.to_string(),
        message: format!("entry at {at}{rest}"),
    }
}

/// [`ResolveError::CwdInRebuiltTree`] when `cwd` (canonical) lies in a tree the sandbox
/// rebuilds per command.
fn cwd_in_rebuilt_tree(cwd: &Path) -> Option<ResolveError> {
    let tree = crate::paths::REBUILT_TREES
        .iter()
        .find(|t| cwd.starts_with(t))?;
    let tree = if cwd.starts_with("/dev/shm") {
        "/dev/shm"
    } else {
        tree
    };
    Some(ResolveError::CwdInRebuiltTree {
        cwd: cwd.to_path_buf(),
        tree: tree.to_string(),
    })
}

/// [`resolve`] for a command about to run (transform, `--dry-run`, `explain`): also
/// refuses a profile whose deny-read entry decides the working directory (e.g.
/// `--deny-read ..` from a subdirectory of the workspace), which the sandbox could not
/// even enter (issue 8 §6). [`resolve`] itself stays total, so overlay arithmetic can
/// compile any profile.
///
/// Errors: those of [`resolve`], and [`ResolveError::DenyCoversCwd`].
pub fn resolve_for_command(
    profile: &PermissionProfile,
    ctx: &ResolveContext,
    fs: &dyn FsView,
) -> Result<ResolvedProfile, ResolveError> {
    let r = resolve(profile, ctx, fs)?;
    crate::deny::check_cwd_not_denied(&r, fs)?;
    if let ResolvedFilesystem::Restricted { .. } = &r.filesystem {
        if let Some(e) = cwd_in_rebuilt_tree(&r.cwd) {
            return Err(e);
        }
    }
    Ok(r)
}

/// How the note about a home under the private /tmp begins (see [`is_home_under_tmp_note`]).
const HOME_UNDER_TMP_PREFIX: &str = "your home ";

/// Whether `note` (one of [`ResolvedProfile::notes`]) says the home lies under /tmp, which
/// each command gets private and empty (new-user pass nu58): `cordon run` prints it before
/// the command starts.
pub fn is_home_under_tmp_note(note: &str) -> bool {
    note.starts_with(HOME_UNDER_TMP_PREFIX) && note.contains("lies under /tmp")
}

/// The start of the note [`loopback_allow_notes`] makes.
const LOOPBACK_ALLOW_PREFIX: &str = "network.allow ";

/// Whether `note` (one of [`ResolvedProfile::notes`]) is one of [`loopback_allow_notes`]:
/// `cordon run` prints it before the command starts, as the command's own error (curl's
/// "connection refused") would not say why.
pub fn is_said_before_run(note: &str) -> bool {
    is_home_under_tmp_note(note)
        || (note.starts_with(LOOPBACK_ALLOW_PREFIX) && note.contains("NO_PROXY"))
}

/// With a managed network, a note for each `network.allow` rule naming a loopback address
/// (`127.0.0.1:18765`, `127.0.0.0/8`, `[::1]:80`, `localhost`): clients do not send those
/// destinations to the proxy at all (`NO_PROXY` names the command's own loopback), so the
/// rule alone reaches nothing of the host; a host service on a loopback port is reached by
/// forwarding it (`network.local`, `--local-port`) (new-user pass 192, #3).
fn loopback_allow_notes(profile: &PermissionProfile) -> Vec<String> {
    use crate::hosts::{HostPattern, HostRule};
    if profile.network != crate::NetworkPolicy::Managed {
        return Vec::new();
    }
    profile
        .network_rules
        .allow
        .iter()
        .filter(|text| {
            HostRule::parse(text).is_ok_and(|r| match r.pattern {
                HostPattern::Net(ip, _) => ip.is_loopback(),
                HostPattern::Exact(n) => n == "localhost",
                _ => false,
            })
        })
        .map(|text| {
            format!(
                "{LOOPBACK_ALLOW_PREFIX}{text:?} names a loopback address, which clients do not \
                 send to the proxy (NO_PROXY names localhost, 127.0.0.1 and ::1: the command's \
                 own loopback, where its own servers listen); to reach a service on the host's \
                 loopback, forward its port: network.local = [\"127.0.0.1:PORT\"] or \
                 --local-port 127.0.0.1:PORT"
            )
        })
        .collect()
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
    // Each path is looked up on the host once per resolution (the same ancestors come up
    // for every entry).
    let memo = crate::paths::MemoFs::new(fs);
    let fs: &dyn FsView = &memo;
    let Location {
        cwd,
        workspace,
        marker,
        note,
    } = locate(ctx, fs)?;
    let mut notes: Vec<String> = note.into_iter().collect();
    let all_homes = homes(ctx);
    let canonical_homes: Vec<PathBuf> = all_homes
        .iter()
        .map(|h| canonicalize_lenient(fs, h))
        .collect();

    let mut tmpdir_refused = None;
    let mut cordon_files: Vec<PathBuf> = Vec::new();
    let mut kept_absent: Vec<(PathBuf, String)> = Vec::new();
    let filesystem = match profile.effective_filesystem() {
        FilesystemPolicy::Unrestricted => ResolvedFilesystem::Unrestricted,
        FilesystemPolicy::Restricted {
            default,
            entries,
            protect_metadata,
        } => {
            let mut entries = entries;
            entries.extend(cache_entries(profile, ctx, fs));
            let mut out = Vec::new();
            let mut named: Vec<PathBuf> = Vec::new();
            // Deny entries on `:workspace` also hide their paths in every enclosing project
            // root: a marker planted below the project must not shrink them (HIGH-6).
            let enclosing = enclosing_project_roots(fs, &workspace, &all_homes);
            if !enclosing.is_empty()
                && entries
                    .iter()
                    .any(|e| e.access == Access::Deny && on_workspace(&e.path))
            {
                for root in &enclosing {
                    notes.push(format!(
                        "deny entries on :workspace also applied to the enclosing project root \
                         {} (the workspace {} is a project nested in it)",
                        root.display(),
                        workspace.display()
                    ));
                }
            }
            for (index, e) in entries.iter().enumerate() {
                // An entry from a flag is named by the flag the user typed, not by its
                // place among the profile's entries (new-user pass nu58: "entry 156").
                let by_flag = |err: ResolveError| match (err, e.source.as_deref()) {
                    (ResolveError::Glob { spelling, .. }, Some(flag)) if flag.starts_with("--") => {
                        ResolveError::GlobFlag {
                            flag: flag.to_string(),
                            spelling,
                        }
                    }
                    (err, source) => named_by_source(err, index, source),
                };
                let mut paths =
                    expand_with_homes(fs, &e.path, index, ctx, &workspace, e.access, &all_homes)
                        .map_err(by_flag)?;
                if e.access == Access::Deny && on_workspace(&e.path) {
                    for root in &enclosing {
                        paths.extend(expand_with_homes(
                            fs, &e.path, index, ctx, root, e.access, &all_homes,
                        )?);
                    }
                }
                let by_variable = crate::locations::split_spelling(&e.path);
                if let Some((var, _)) = by_variable {
                    let mut kept = Vec::new();
                    for p in paths {
                        if crate::locations::names_no_store(&p) {
                            if p != Path::new("/dev/null") {
                                notes.push(format!(
                                    "{} ({}) names no store: not hidden",
                                    e.path,
                                    p.display()
                                ));
                            }
                            continue;
                        }
                        if e.access == Access::Deny {
                            let c = canonicalize_lenient(fs, &p);
                            let why = crate::locations::too_wide(&p, &all_homes, &workspace)
                                .or_else(|| {
                                    crate::locations::too_wide(&c, &canonical_homes, &workspace)
                                });
                            if let Some(why) = why {
                                return Err(ResolveError::StoreLocationTooWide {
                                    var: var.to_string(),
                                    value: ctx.env.get(var).cloned().unwrap_or_default(),
                                    path: p,
                                    why: why.to_string(),
                                });
                            }
                        }
                        kept.push(p);
                    }
                    paths = kept;
                }
                if paths.is_empty() && by_variable.is_none() {
                    notes.push(format!(
                        "entry {index} ({:?}) skipped: $HOME is not set",
                        e.path
                    ));
                }
                if e.access == Access::Write && e.path.starts_with(":workspace") {
                    if let Some(why) = workspace_refusal(&workspace, &all_homes, fs, marker) {
                        // The real reason first when the cwd is where nothing can run.
                        return Err(cwd_in_rebuilt_tree(&cwd)
                            .unwrap_or(ResolveError::UnsafeWorkspace(workspace, why)));
                    }
                }
                for spelled in paths {
                    if e.path.starts_with(":tmp") && e.access != Access::Deny {
                        // `$TMPDIR` may lead (through a symlink) to `/`, a home or the
                        // workspace's ancestors: judged where it resolves.
                        let c = canonicalize_lenient(fs, &spelled);
                        if tmp_too_wide(&c, &canonical_homes, &workspace) {
                            // Said so that it is not read as "/tmp is not writable" (nu7):
                            // the namespace backend mounts a private /tmp anyway.
                            notes.push(format!(
                                "{} ({}): the host's {} is not made writable (that would make \
                                 a home, the workspace's parent or `/` writable); where the \
                                 sandbox mounts a private /tmp (the namespace backend), /tmp is \
                                 that private tmpfs, writable and discarded after the run",
                                e.path,
                                spelled.display(),
                                c.display()
                            ));
                            continue;
                        }
                    }
                    let origin = EntryOrigin::Profile {
                        index,
                        spelling: e.path.clone(),
                        source: e.source.clone(),
                    };
                    let mut r = entry_for(fs, spelled, e.access, origin);
                    // A writable grant for a missing path outside every writable root is
                    // made a directory on the host before the sandbox is built (the mount
                    // plan's create step): a root like any other, so what must stay
                    // read-only beneath it — cordon's own config, git's global config — is
                    // protected, placeholders included (attack pass 37, A5/A6: `-w
                    // ~/.config` on a host without one left both writable).
                    if !r.exists
                        && r.access == Access::Write
                        && !e.path.starts_with(":tmp")
                        && r.path.parent().is_some_and(|parent| {
                            access_in(default, &out, fs, parent).access != Access::Write
                        })
                    {
                        r.is_dir = true;
                    }
                    named.push(r.path.clone());
                    out.push(r);
                }
            }
            drop_redirected_grants(&mut out, &mut notes);
            drop_grants_through_planted_links(
                fs,
                &ctx.earlier_roots,
                &ctx.earlier_identities,
                &mut out,
                &mut notes,
            );
            tmpdir_refused = crate::tmpdir::drop_unsafe_tmpdir(
                fs,
                ctx,
                &canonical_homes,
                &workspace,
                &mut out,
                &mut notes,
            );
            if cfg!(target_os = "linux") {
                drop_rebuilt_tree_grants(&mut out, &mut notes);
            }
            // A dropped grant names nothing: its path keeps its protection.
            let kept: std::collections::HashSet<&Path> =
                out.iter().map(|e| e.path.as_path()).collect();
            named.retain(|n| kept.contains(n.as_path()));
            crate::deny::note_missing_denies(&out, &mut notes);
            // The pin steps' index of `out`'s paths, made by the first of them and kept up to
            // date by each (nothing else changes `out` between them).
            let mut pin_index = None;
            if protect_metadata {
                // Only a temp dir that `:tmp` itself would accept is exempt: a `$TMPDIR`
                // that resolves (through a symlink) to the workspace, an ancestor of it or
                // a home must not strip that root's protected paths.
                // A `$TMPDIR` dropped by the guard exempts nothing (issue 7 item 9).
                let tmp_roots: Vec<PathBuf> = expand(fs, ":tmp", 0, ctx, &workspace)?
                    .into_iter()
                    .map(|p| canonicalize_lenient(fs, &p))
                    .filter(|c| !tmp_too_wide(c, &canonical_homes, &workspace))
                    .filter(|c| {
                        *c == canonicalize_lenient(fs, Path::new("/tmp"))
                            || out
                                .iter()
                                .any(|e| e.path == *c && crate::tmpdir::from_tmp(e))
                    })
                    .collect();
                let roots: Vec<PathBuf> = out
                    .iter()
                    .filter(|e| e.access == Access::Write && e.is_dir)
                    .map(|e| e.path.clone())
                    .filter(|p| !tmp_roots.contains(p))
                    .collect();
                // Canonicalised once, not once per root; with the symlinks on the way as
                // spelled (attack pass 35, P2: a stowed `~/.config/cordon -> …` under
                // `-w ~/.config` was replaced by the command's own directory, and every
                // later run read its config).
                // Each with whether it is one of cordon's directories (its state directory,
                // the session store), told by the name as spelled: where a symlink leads
                // is named anything (attack pass 37, A8: `~/.local/state/cordon` linked to a
                // missing `state` got a file for its placeholder).
                let profile_files: Vec<ProfileFile> = ctx
                    .profile_files
                    .iter()
                    .map(|f| {
                        let links = symlinks_on(fs, &ctx.cwd.join(f));
                        let dir = f.file_name().is_some_and(|n| n == "cordon")
                            || f.ends_with("cordon/sessions");
                        (crate::paths::profile_file_path(fs, f, &ctx.cwd), links, dir)
                    })
                    .collect();
                for (f, links, _) in &profile_files {
                    for p in std::iter::once(f).chain(links) {
                        if !cordon_files.contains(p) {
                            cordon_files.push(p.clone());
                        }
                    }
                }
                // A write entry that is one of cordon's own files, or lies inside one (a
                // session store, the state directory): protection cannot hold there, so the
                // entry is refused (attack pass 45, M5).
                for e in out.iter().filter(|e| e.access == Access::Write) {
                    let own = profile_files.iter().find(|(f, links, _)| {
                        e.path.starts_with(f) || links.iter().any(|l| e.path.starts_with(l))
                    });
                    if let Some((f, _, dir)) = own {
                        let what = if *dir {
                            format!("state directory {}", f.display())
                        } else if e.path == *f {
                            "configuration, rules, answers or report file".to_string()
                        } else {
                            format!("file {}", f.display())
                        };
                        return Err(ResolveError::CordonFileWritable(e.path.clone(), what));
                    }
                }
                // Homes as spelled and as resolved: a linked worktree's common dir is
                // canonical, so a `$HOME` reached through a symlink is compared both ways.
                let home_forms: Vec<PathBuf> =
                    all_homes.iter().chain(&canonical_homes).cloned().collect();
                let mut extra = Vec::new();
                for root in &roots {
                    protected_for_root(
                        fs,
                        root,
                        &roots,
                        &profile_files,
                        &home_forms,
                        &mut extra,
                        &mut notes,
                    )?;
                }
                // Paths git configuration makes code (hooks dir, includes, filters,
                // `!` aliases, …) inside any writable root (issue 7 item 3).
                let write_roots: Vec<PathBuf> = out
                    .iter()
                    .chain(extra.iter())
                    .filter(|e| e.access == Access::Write && e.is_dir)
                    .map(|e| e.path.clone())
                    .collect();
                for root in &roots {
                    protect_git_config_targets(
                        fs,
                        root,
                        &all_homes,
                        &home_forms,
                        &ctx.env,
                        &write_roots,
                        &mut extra,
                        &mut notes,
                        false,
                    )?;
                    // The hook managers' configs at the top of every writable root, with or
                    // without a repository there (README: "whenever they exist"; attack
                    // pass 212 #3: in a workspace marked only by `.cordon/` they were
                    // writable): `git init` and the manager's `install` on the host, while
                    // a command runs or after, make the file the command wrote run code.
                    for (path, reason) in hook_delegates(fs, root, &[]) {
                        if !extra.iter().any(|e| e.path == path) {
                            extra.push(entry_for(
                                fs,
                                path,
                                Access::Read,
                                EntryOrigin::Protected { reason },
                            ));
                        }
                    }
                }
                // The same for every nested repository found below a writable root: its git
                // dir is read-only whole, but the files in its work tree that its hooks and
                // config run (a hook manager's `lefthook.yml`, a `core.hooksPath` there)
                // were writable (attack pass 31, B4). Existing paths only: a nested
                // repository may be a previous run's, and its config must not make cordon
                // create placeholders where it says.
                let nested_roots: Vec<PathBuf> = nested_repository_roots(extra.iter())
                    .into_iter()
                    .filter(|r| !roots.contains(r))
                    .collect();
                for root in &nested_roots {
                    let mut found = Vec::new();
                    let mut quiet = Vec::new();
                    protect_git_config_targets(
                        fs,
                        root,
                        &all_homes,
                        &home_forms,
                        &ctx.env,
                        &write_roots,
                        &mut found,
                        &mut quiet,
                        true,
                    )?;
                    if nested_repo_dirs(fs, root).is_none() {
                        // A submodule's `.git` file (its git dir in `.git/modules`): the
                        // managers' configs at the top of its work tree all the same.
                        for (path, reason) in hook_delegates(fs, root, &[]) {
                            found.push(entry_for(
                                fs,
                                path,
                                Access::Read,
                                EntryOrigin::Protected { reason },
                            ));
                        }
                    }
                    extra.extend(
                        found
                            .into_iter()
                            .filter(|e| fs.kind(&e.path).is_some() || is_link(fs, &e.path)),
                    );
                }
                // git's global/system config and attributes placed by the invoking
                // environment inside a writable root: read-only like `.git/config`, a
                // placeholder when missing (breaker4 HIGH-3, MEDIUM-3b: a command rewrote
                // `$GIT_CONFIG_GLOBAL` and the host's next `git status` ran its fsmonitor).
                for (f, spelling) in crate::gitconfig::env_git_files(&ctx.env, &ctx.cwd, &all_homes)
                {
                    // Through a dangling symlink too (a dotfiles layout's `~/.gitconfig ->
                    // dotfiles/gitconfig` before the file exists: attack pass 27, G6), so the
                    // file git would read is what is protected, a placeholder when missing.
                    let c = follow_links(fs, &f);
                    if write_roots
                        .iter()
                        .any(|r| c.starts_with(r) || f.starts_with(r))
                    {
                        let reason = crate::gitconfig::env_git_file_reason(&spelling);
                        if c != canonicalize_lenient(fs, &f) {
                            extra.push(entry_for(
                                fs,
                                c.clone(),
                                Access::Read,
                                EntryOrigin::Protected {
                                    reason: reason.clone(),
                                },
                            ));
                        }
                        extra.push(entry_for(
                            fs,
                            f,
                            Access::Read,
                            EntryOrigin::Protected { reason },
                        ));
                    }
                }
                // The files that run code at the user's next shell or login, in every home
                // whose file lies inside a writable root (`-w ~`, an approved grant of
                // `$HOME`: attack pass 224 #2, a `python3 -c` appended to `~/.bashrc`):
                // read-only when present; a missing one gets no placeholder (an empty
                // `~/.bash_profile` would have bash skip `~/.profile`) and is kept absent by
                // the run's sweep instead (below, once the entries are final).
                let login = login_files_in_roots(fs, &home_forms, &write_roots);
                let mut login_missing = Vec::new();
                for (p, tool) in login {
                    if fs.kind(&p).is_some() {
                        extra.push(entry_for(
                            fs,
                            p,
                            Access::Read,
                            EntryOrigin::Protected {
                                reason: crate::login_files::reason(tool),
                            },
                        ));
                    } else {
                        // Missing, or a symlink leading nowhere yet: where it leads is what
                        // must stay absent.
                        login_missing.push((canonicalize_lenient(fs, &p), tool));
                    }
                }
                let so_far = out.len();
                // Membership by hash, not a scan of every entry per protected path
                // (`path_hash` agrees with `Path`'s component-wise `==`); a path that may
                // be present is then looked for as before.
                let named_set: crate::paths::PathHashes =
                    named.iter().map(PathBuf::as_path).collect();
                let mut present: crate::paths::PathHashes =
                    out.iter().map(|o| o.path.as_path()).collect();
                for e in extra {
                    // Protection narrows to read-only; it never re-opens a denied area.
                    // (A deny of this very path that does not exist yet hides nothing: the
                    // protected placeholder keeps it from being created, e.g. a missing
                    // `$GIT_CONFIG_GLOBAL` that is also a stripped-config deny.)
                    if matches!(e.origin, EntryOrigin::Protected { .. }) {
                        let a = access_in(default, &out[..so_far], fs, &e.path);
                        let missing_same = a
                            .entry
                            .is_some_and(|i| out[i].path == e.path && !out[i].exists);
                        if a.access == Access::Deny && !missing_same {
                            continue;
                        }
                    }
                    let dup = present.may_hold(&e.path)
                        && out.iter().any(|o| o.path == e.path && o.origin == e.origin);
                    let explicitly_named = named_set.may_hold(&e.path)
                        && named.contains(&e.path)
                        && matches!(e.origin, EntryOrigin::Protected { .. })
                        && !out[..so_far]
                            .iter()
                            .any(|o| o.path == e.path && o.access == Access::Deny && !o.exists);
                    if !dup && !explicitly_named {
                        present.insert(&e.path, out.len());
                        out.push(e);
                    }
                }
                // A deny of a path that does not exist yet, where a protected placeholder
                // now stands, gives way to it: the backends would otherwise take the
                // (stronger, but empty) deny and skip the placeholder, and the command could
                // create the file (breaker4 MEDIUM-3b: a missing `$XDG_CONFIG_HOME/git/config`
                // in the workspace). The next run finds the file and the deny applies.
                let placeholders: std::collections::HashSet<PathBuf> = out[so_far..]
                    .iter()
                    .filter(|e| matches!(e.origin, EntryOrigin::Protected { .. }) && !e.exists)
                    .map(|e| e.path.clone())
                    .collect();
                out.retain(|o| {
                    !(o.access == Access::Deny && !o.exists && placeholders.contains(&o.path))
                });
                // Kept absent only where the command could create it: not where the user
                // named it, not under a deny (a hidden `~/.ssh` is the sandbox's own), and
                // not where a placeholder already stands.
                for (p, tool) in login_missing {
                    if !named.contains(&p)
                        && !placeholders.contains(&p)
                        && access_in(default, &out, fs, &p).access == Access::Write
                        && !kept_absent.iter().any(|(q, _)| *q == p)
                    {
                        kept_absent.push((p, tool.to_string()));
                    }
                }
                // Pinned below every writable root as it stands now — the git dirs granted
                // for a linked worktree or a submodule included (attack pass 37, A1: with the
                // workspace a linked worktree, nothing under the common dir was pinned, and a
                // command exchanged the worktree's admin dir for its own with
                // `renameat2(RENAME_EXCHANGE)`) — and each such git dir itself below the root
                // holding it (`worktrees/`: renamed away, it would carry the admin dir along).
                let pin_roots: Vec<PathBuf> = out
                    .iter()
                    .filter(|e| {
                        e.access == Access::Write
                            && e.is_dir
                            && !matches!(e.origin, EntryOrigin::Pinned { .. })
                    })
                    .map(|e| e.path.clone())
                    .filter(|p| !tmp_roots.contains(p))
                    .collect();
                pin_protected_ancestors(fs, default, &pin_roots, &mut out, &mut pin_index);
                let granted_git_dirs: Vec<PathBuf> = out
                    .iter()
                    .filter(|e| matches!(e.origin, EntryOrigin::GitWorktree { .. }))
                    .map(|e| e.path.clone())
                    .collect();
                pin_ancestors(
                    fs,
                    default,
                    &pin_roots,
                    &granted_git_dirs,
                    false,
                    &mut out,
                    &mut pin_index,
                );
            }
            // Deny entries inside writable roots keep their place even without metadata
            // protection: renaming an ancestor would carry the hidden files out from
            // under the next run's deny (issue 7 item 4).
            let write_roots: Vec<PathBuf> = out
                .iter()
                .filter(|e| e.access == Access::Write && e.is_dir)
                .map(|e| e.path.clone())
                .collect();
            let denies: Vec<PathBuf> = out
                .iter()
                .filter(|e| e.access == Access::Deny)
                .map(|e| e.path.clone())
                .collect();
            pin_ancestors(
                fs,
                default,
                &write_roots,
                &denies,
                false,
                &mut out,
                &mut pin_index,
            );
            let mut f = ResolvedFilesystem::Restricted {
                default,
                entries: out,
            };
            crate::view::keep_cwd_visible(&mut f, &cwd, fs);
            f
        }
    };
    let mut filesystem = filesystem;
    hide_writable_cache_layers(profile, &all_homes, &mut filesystem, fs);
    let caches = crate::caches::resolve_caches(
        profile.caches,
        &profile.extra_caches,
        ctx.home.as_deref(),
        &workspace,
        &filesystem,
        fs,
        &ctx.env,
    );
    // A home under /tmp is behind the private /tmp like the rest of the host's /tmp: said,
    // since nothing else tells why `~/.gitconfig` is gone (new-user pass nu58: git had no
    // identity and nothing said why).
    if let Some(h) = ctx.home.as_deref().filter(|h| h.is_absolute()) {
        if filesystem.top_view().private_tmp
            && filesystem.seen(fs, h) == crate::view::Seen::PrivateTmp
        {
            notes.push(format!(
                "{HOME_UNDER_TMP_PREFIX}{} lies under /tmp, which each command gets private and empty: \
                 nothing in it (~/.gitconfig, ~/.cargo, …) is seen by the command; {}; or set \
                 HOME outside /tmp",
                h.display(),
                crate::explain::private_tmp_grant(h, h)
            ));
        }
    }
    notes.extend(loopback_allow_notes(profile));
    let stripped = stripped_files(&filesystem);
    let unix_sockets = resolve_unix_sockets(profile, ctx, fs, &workspace)?;
    Ok(ResolvedProfile {
        format_version: PROFILE_FORMAT_VERSION,
        profile: profile.clone(),
        cwd,
        workspace,
        filesystem,
        unix_sockets,
        notes,
        tmpdir_refused,
        caches,
        stripped,
        cordon_files,
        kept_absent,
    })
}

/// The existing files hidden by a built-in deny entry of [`crate::stripped::STRIPPED_CONFIGS`]
/// (spelled `:home/<path>`, from a built-in profile): shown stripped where possible.
fn stripped_files(fs: &ResolvedFilesystem) -> Vec<crate::stripped::StrippedFile> {
    let ResolvedFilesystem::Restricted { entries, .. } = fs else {
        return Vec::new();
    };
    let mut out: Vec<crate::stripped::StrippedFile> = Vec::new();
    for e in entries {
        let EntryOrigin::Profile {
            spelling, source, ..
        } = &e.origin
        else {
            continue;
        };
        let builtin = source.as_deref().is_none_or(|s| s.starts_with("built-in"));
        if e.access != Access::Deny || !e.exists || e.is_dir || !builtin {
            continue;
        }
        if let Some(format) = crate::stripped::format_of_spelling(spelling) {
            if !out.iter().any(|o| o.path == e.path) {
                out.push(crate::stripped::StrippedFile {
                    path: e.path.clone(),
                    format,
                });
            }
        }
    }
    out
}

/// With `caches = "overlay"`, the overlay state root `<home>/.cache/cordon/overlays` of
/// every home is hidden when a grant would make it writable (`-w ~/.cache`): no run may
/// change another workspace's private layers (R-C1). (Where it is only readable, the
/// namespace backend hides it too, with a mask step of the mount plan; a deny entry there
/// would needlessly make the Landlock-only rung refuse.)
fn hide_writable_cache_layers(
    profile: &PermissionProfile,
    homes: &[PathBuf],
    filesystem: &mut ResolvedFilesystem,
    fs: &dyn FsView,
) {
    if profile.caches != crate::caches::CacheMode::Overlay {
        return;
    }
    for h in homes {
        let root = crate::caches::overlay_root(h);
        let c = canonicalize_lenient(fs, &root);
        if filesystem.access_for(fs, &c).access != Access::Write {
            continue;
        }
        if let ResolvedFilesystem::Restricted { default, entries } = filesystem {
            let index = entries.len();
            let deny = entry_for(
                fs,
                root,
                Access::Deny,
                EntryOrigin::Profile {
                    index,
                    spelling: ":home/.cache/cordon/overlays".into(),
                    source: Some(
                        "caches = \"overlay\" (private cache layers of every workspace)".into(),
                    ),
                },
            );
            let hidden = deny.path.clone();
            entries.push(deny);
            // Pinned like every deny entry's ancestors (this one is added after that step):
            // `mv ~/.cache/cordon elsewhere` carried the layers out from under the deny, and a
            // new `~/.cache/cordon/overlays` planted another workspace's layer (breaker).
            let write_roots: Vec<PathBuf> = entries
                .iter()
                .filter(|e| e.access == Access::Write && e.is_dir)
                .map(|e| e.path.clone())
                .collect();
            pin_ancestors(
                fs,
                *default,
                &write_roots,
                &[hidden],
                false,
                entries,
                &mut None,
            );
        }
    }
}

/// The entries the profile's `caches` mode adds (R-C1): with `shared`, each existing known
/// cache writable, naming its source for `explain`.
fn cache_entries(
    profile: &PermissionProfile,
    ctx: &ResolveContext,
    fs: &dyn FsView,
) -> Vec<crate::profile::FsEntry> {
    use crate::caches::{shared_entries, CacheMode};
    use crate::profile::FsEntry;
    match profile.caches {
        CacheMode::Overlay | CacheMode::ReadOnly => Vec::new(),
        CacheMode::Shared => shared_entries(&profile.extra_caches, ctx.home.as_deref(), fs)
            .into_iter()
            .map(|p| FsEntry::new(p, Access::Write).with_source("caches = \"shared\""))
            .collect(),
    }
}

/// `network.unix_sockets` expanded like filesystem entries and canonicalised; a
/// container-engine socket (by its spelling or where it resolves) without consent is an
/// error (R-N2).
fn resolve_unix_sockets(
    profile: &PermissionProfile,
    ctx: &ResolveContext,
    fs: &dyn FsView,
    workspace: &Path,
) -> Result<Vec<PathBuf>, ResolveError> {
    let rules = &profile.network_rules;
    rules.validate().map_err(ResolveError::UnixSocket)?;
    // A forward the managed network's own port holds (breaker, stop 20: it was a sandbox
    // refusal, which offered --allow-unconfined and then ran the command unconfined).
    crate::network::check_local_for_mode(
        &rules.local_addrs().map_err(ResolveError::UnixSocket)?,
        profile.network == crate::NetworkPolicy::Managed,
    )
    .map_err(ResolveError::UnixSocket)?;
    let mut out = Vec::new();
    for (index, s) in rules.unix_sockets.iter().enumerate() {
        for p in expand(fs, s, index, ctx, workspace)? {
            let c = canonicalize_lenient(fs, &p);
            rules
                .check_host_root(&c.to_string_lossy())
                .map_err(|e| ResolveError::UnixSocket(format!("{e} ({s} resolves to it)")))?;
            if !out.contains(&c) {
                out.push(c);
            }
        }
    }
    Ok(out)
}

/// Whether a temp dir that resolves to `c` is too wide to be writable wholesale (or exempt
/// from protected paths): `/`, a home directory or above one, or the workspace or above it.
pub(crate) fn tmp_too_wide(c: &Path, homes: &[PathBuf], workspace: &Path) -> bool {
    depth(c) == 0 || homes.iter().any(|h| h.starts_with(c)) || workspace.starts_with(c)
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
    let landing = honoured_roots(&writable);
    out.retain(|e| {
        if redirected_out_of_roots(&e.spelled, &e.path, e.access, &writable, &landing) {
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

/// Where the link of a note of [`drop_grants_through_planted_links`] lies, as the note
/// says it: `cordon run` finds those notes by it to say them on stderr.
pub const PLANTED_LINK_PLACE: &str = "a writable root of an earlier sandboxed run";

/// The first of `links` (symlinks on a path) that lies in a directory an earlier sandboxed
/// run could write: inside one of the `earlier` roots by path, or below a directory whose
/// device, inode and birth time one of `identities` recorded (a root renamed since).
fn planted_link_among<'a>(
    fs: &dyn FsView,
    earlier: &[PathBuf],
    identities: &[crate::paths::FileIdentity],
    links: &'a [PathBuf],
) -> Option<&'a PathBuf> {
    // The same directory: device and inode, and the birth time where both know it.
    let recorded = |a: &Path| {
        fs.identity(a).is_some_and(|(dev, ino, s, n)| {
            identities.iter().any(|&(d, i, rs, rn)| {
                d == dev
                    && i == ino
                    && ((rs, rn) == (0, 0) || (s, n) == (0, 0) || (rs, rn) == (s, n))
            })
        })
    };
    links.iter().find(|link| {
        let Some(dir) = link.parent() else {
            return false;
        };
        earlier.iter().any(|r| dir.starts_with(r))
            || (!identities.is_empty()
                && dir
                    .ancestors()
                    .filter(|a| a.parent().is_some())
                    .any(&recorded))
    })
}

/// A write grant spelled through a symlink that lies where a sandboxed run may have
/// planted it — inside a writable root an earlier run recorded (`earlier`: every run
/// records its roots before its command starts) — is dropped, with a note naming the link (attack pass 166, finding 2: a run planted `build -> ../victim` in
/// its project, and a later `-w project/build` from another workspace made the victim
/// writable, and cordon made its missing directories on the host). The links inside this
/// run's own roots are [`drop_redirected_grants`]'s.
fn drop_grants_through_planted_links(
    fs: &dyn FsView,
    earlier: &[PathBuf],
    identities: &[crate::paths::FileIdentity],
    out: &mut Vec<ResolvedEntry>,
    notes: &mut Vec<String>,
) {
    out.retain(|e| {
        if e.access != Access::Write || e.links.is_empty() {
            return true;
        }
        let planted = planted_link_among(fs, earlier, identities, &e.links);
        let Some(link) = planted else {
            return true;
        };
        notes.push(format!(
            "write entry {} dropped: it goes through the symlink {}, which lies in {PLANTED_LINK_PLACE}, \
             so such a run could have planted it; spell the target path instead ({})",
            e.spelled.display(),
            link.display(),
            e.path.display()
        ));
        false
    });
}

/// The rule behind [`drop_redirected_grants`], shared with the overlay arithmetic, for a
/// grant spelled `spelled` that resolves (through a symlink) to `canonical`, where the
/// symlink lies inside one of the `writable` roots (`(spelled, canonical)` pairs) and so
/// may have been planted by a confined command: a write grant is never honoured; a read
/// grant is not honoured when it lands outside every writable root that is itself honoured
/// (`landing`, from [`honoured_roots`]): a dropped write grant's target is no root.
pub(crate) fn redirected_out_of_roots(
    spelled: &Path,
    canonical: &Path,
    access: Access,
    writable: &[(PathBuf, PathBuf)],
    landing: &[(PathBuf, PathBuf)],
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
    let lands_in_a_root = landing
        .iter()
        .any(|(ws, wc)| ws != spelled && canonical.starts_with(wc));
    inside_a_root && !lands_in_a_root
}

/// The `writable` roots (`(spelled, canonical)` pairs) whose own write grant
/// [`redirected_out_of_roots`] keeps: a read grant landing under a dropped write grant's
/// target (e.g. `:workspace/link -> /etc`) must not count as landing in a writable root.
pub(crate) fn honoured_roots(writable: &[(PathBuf, PathBuf)]) -> Vec<(PathBuf, PathBuf)> {
    writable
        .iter()
        .filter(|(s, c)| !redirected_out_of_roots(s, c, Access::Write, writable, &[]))
        .cloned()
        .collect()
}

/// Pins every existing directory strictly between a writable root and a protected path
/// (e.g. `.git` for `.git/hooks`), so the protected path cannot be moved aside together
/// with its parent and re-created unprotected (R-P3).
fn pin_protected_ancestors(
    fs: &dyn FsView,
    default: Access,
    roots: &[PathBuf],
    out: &mut Vec<ResolvedEntry>,
    index: &mut Option<crate::paths::PathHashes>,
) {
    let protected: Vec<PathBuf> = out
        .iter()
        .filter(|e| matches!(e.origin, EntryOrigin::Protected { .. }))
        .map(|e| e.path.clone())
        .collect();
    // A protected path's missing directories are made with its placeholder: pinned too.
    pin_ancestors(fs, default, roots, &protected, true, out, index);
}

/// The entry that pins the existing directory `path` (bound onto itself, access unchanged:
/// writable) so that it cannot be renamed or removed, for the protected path `protects`.
fn pinned(path: PathBuf, protects: PathBuf) -> ResolvedEntry {
    ResolvedEntry {
        spelled: path.clone(),
        path,
        access: Access::Write,
        exists: true,
        is_dir: true,
        origin: EntryOrigin::Pinned { protects },
        links: Vec::new(),
    }
}

/// [`pinned`] for a directory that is missing now and that the placeholder step makes
/// (empty) before the sandbox is built, on the way to the protected path `protects`
/// (attack pass 35, P1: such a directory was left an ordinary one, and a command swapped
/// it for its own with `renameat2(RENAME_EXCHANGE)`, hook included).
fn pinned_missing(path: PathBuf, protects: PathBuf) -> ResolvedEntry {
    ResolvedEntry {
        spelled: path.clone(),
        path,
        access: Access::Write,
        exists: false,
        is_dir: true,
        origin: EntryOrigin::Pinned { protects },
        links: Vec::new(),
    }
}

/// Pins every existing writable directory strictly between the deepest of `roots` that
/// holds a target and that target (a protected path or a deny entry), so the target's
/// place cannot be renamed away and re-created (R-P3, issue 7 item 4). With `missing`
/// (protected paths, whose placeholder step makes their missing directories), a missing
/// one is pinned as well ([`pinned_missing`]). `index`: the paths of `out` by hash, made
/// here when `None`, kept up to date (so a caller may pass it to the next pin step when
/// nothing else changes `out` in between).
#[allow(clippy::too_many_arguments)]
fn pin_ancestors(
    fs: &dyn FsView,
    default: Access,
    roots: &[PathBuf],
    targets: &[PathBuf],
    missing: bool,
    out: &mut Vec<ResolvedEntry>,
    index: &mut Option<crate::paths::PathHashes>,
) {
    // The paths `out` holds, for "is this ancestor an entry already" without a scan of
    // every entry per ancestor (`path_hash` agrees with `Path`'s component-wise `==`).
    let present = index.get_or_insert_with(|| out.iter().map(|e| e.path.as_path()).collect());
    for p in targets.iter().cloned() {
        let Some(root) = roots
            .iter()
            .filter(|r| crate::paths::within(&p, r) && **r != p)
            .max_by_key(|r| depth(r))
        else {
            continue;
        };
        let mut a = p.clone();
        while a.pop() && a != *root && crate::paths::within(&a, root) {
            // The first entry with `a`'s hash is `a` itself, nearly always; else the scan.
            let held = present
                .first(&a)
                .is_some_and(|i| out[i].path == a || out.iter().any(|e| e.path == a));
            if held {
                continue;
            }
            if access_in(default, out, fs, &a).access != Access::Write {
                continue;
            }
            let pin = match fs.entry(&a) {
                Some(Entry::Kind(FileKind::Dir)) => pinned(a.clone(), p.clone()),
                None if missing => pinned_missing(a.clone(), p.clone()),
                _ => continue,
            };
            present.insert(&a, out.len());
            out.push(pin);
        }
    }
}

/// The parts of a git dir that run code or redirect git elsewhere (R-P3): hooks, config,
/// info (attributes select filters), `commondir` (points git at another dir's config and
/// hooks), `config.worktree`, `modules/` (submodule git dirs with their own hooks and
/// config), `worktrees/` (per-worktree `commondir` and config), and `remotes/` and
/// `branches/` (legacy remote definitions: where `git push` goes).
fn protect_git_dir(
    fs: &dyn FsView,
    prot: &dyn Fn(PathBuf, &str) -> ResolvedEntry,
    gitdir: &Path,
    out: &mut Vec<ResolvedEntry>,
) {
    for (name, why) in GIT_DIR_PROTECTED {
        out.push(prot(gitdir.join(name), why));
    }
    protect_worktree_admin(fs, prot, gitdir, out);
}

/// The linked worktrees' admin dirs of `gitdir` (`worktrees/<name>/`): what redirects git
/// there is protected — `commondir` (which git dir's config and hooks the worktree uses),
/// `gitdir` (git's backlink), `config.worktree` (read with `extensions.worktreeConfig`; a
/// placeholder when missing) — and the rest stays writable, as every git command of the
/// main checkout needs: `git gc` locks each worktree's `HEAD` and writes its reflogs (new
/// user nu12 H1: `.git/worktrees` read-only whole made `git gc` fail in the main checkout
/// of any repository with a linked worktree, and `git worktree add` need an extra grant).
/// An admin dir without `commondir` makes git use it as its own common dir: read-only
/// whole. A new admin dir a command makes is used only through a `.git` file naming it,
/// which can only lie in a writable root: a nested repository there (protected whole from
/// the next run, named after the run).
fn protect_worktree_admin(
    fs: &dyn FsView,
    prot: &dyn Fn(PathBuf, &str) -> ResolvedEntry,
    gitdir: &Path,
    out: &mut Vec<ResolvedEntry>,
) {
    let worktrees = gitdir.join("worktrees");
    if fs.kind(&worktrees) != Some(FileKind::Dir) || is_link(fs, &worktrees) {
        // A symlink there is a path git follows into another directory: read-only.
        if is_link(fs, &worktrees) {
            out.push(prot(worktrees, WORKTREES_REASON));
        }
        return;
    }
    let names = fs.list_dir(&worktrees, MAX_WORKTREE_ADMINS + 1);
    if names.len() > MAX_WORKTREE_ADMINS {
        // More than cordon looks at one by one: read-only whole, failing closed (attack
        // pass 36, A1: the admin dirs past a listing cap kept their `commondir` writable).
        out.push(prot(worktrees, TOO_MANY_WORKTREES_REASON));
        return;
    }
    for n in names {
        let admin = worktrees.join(&n);
        if is_link(fs, &admin) || fs.kind(&admin) != Some(FileKind::Dir) {
            if fs.kind(&admin).is_some() || is_link(fs, &admin) {
                out.push(prot(admin, WORKTREES_REASON));
            }
            continue;
        }
        if fs.kind(&admin.join("commondir")).is_none() && !is_link(fs, &admin.join("commondir")) {
            out.push(prot(admin, WORKTREES_REASON));
            continue;
        }
        protect_admin_files(fs, prot, &admin, out);
    }
}

/// [`WORKTREE_ADMIN_PROTECTED`] in the linked-worktree admin dir `admin`. `modules` only
/// when it is there and is not an empty directory: a placeholder there would make git
/// refuse `git worktree remove` and `move` of that worktree, on the host too (git takes
/// the directory's mere existence for "contains submodules": nu16 N1). A missing one is
/// settled after the run instead — what a command made there is set aside, an empty one
/// removed (`cordon_sandbox::git_dir_sweep`, whose census lists such admin dirs).
fn protect_admin_files(
    fs: &dyn FsView,
    prot: &dyn Fn(PathBuf, &str) -> ResolvedEntry,
    admin: &Path,
    out: &mut Vec<ResolvedEntry>,
) {
    for (f, why) in WORKTREE_ADMIN_PROTECTED {
        let p = admin.join(f);
        if f == "modules"
            && !is_link(fs, &p)
            && match fs.kind(&p) {
                None => true,
                Some(FileKind::Dir) => fs.list_dir(&p, 1).is_empty(),
                Some(_) => false,
            }
        {
            continue;
        }
        out.push(prot(p, why));
    }
}

/// Whether the `.git` file `dotgit` makes its directory a linked worktree of the git dir
/// `own` ([`own_linked_worktree`]): its hooks and config are `own`'s, so `cordon run` does
/// not name it as a repository the command made (new-user pass nu14).
pub fn is_linked_worktree_of(fs: &dyn FsView, own: &Path, dotgit: &Path) -> bool {
    if fs.kind(dotgit) != Some(FileKind::File) || is_link(fs, dotgit) {
        return false;
    }
    read_gitdir_file(fs, dotgit)
        .is_ok_and(|t| own_linked_worktree(fs, own, &canonicalize_lenient(fs, &t)))
}

/// Whether `admin` (canonical) is a linked worktree's admin dir of the git dir `own`:
/// `own/worktrees/<name>`, a directory (not a link) whose `commondir` is a regular file
/// naming `own` (as git resolves it, relative to `admin`). Such a dir takes its hooks and
/// config from `own`; one whose `commondir` names another directory is a git dir of its
/// own (a command could have planted it) and stays protected whole.
fn own_linked_worktree(fs: &dyn FsView, own: &Path, admin: &Path) -> bool {
    if admin.parent() != Some(own.join("worktrees").as_path())
        || is_link(fs, admin)
        || fs.kind(admin) != Some(FileKind::Dir)
        || fs.kind(own) != Some(FileKind::Dir)
        || is_link(fs, own)
    {
        return false;
    }
    let commondir = admin.join("commondir");
    if is_link(fs, &commondir) || fs.kind(&commondir) != Some(FileKind::File) {
        return false;
    }
    commondir_target(fs, admin).is_some_and(|c| c == own)
}

/// What redirects git in a linked worktree's admin dir (`<common>/worktrees/<name>/`):
/// protected there whether cordon grants that dir (the workspace is the linked worktree)
/// or not (the main checkout's other worktrees).
const WORKTREE_ADMIN_PROTECTED: [(&str, &str); 4] = [
    (
        "commondir",
        "commondir decides which git config and hooks are used",
    ),
    ("gitdir", "git's backlink to this worktree"),
    ("config.worktree", "git config can run code"),
    // git keeps a worktree's submodules' git dirs here (attack pass 32, C1: a planted
    // `modules/sub/hooks/post-checkout` ran at the host's `git submodule update`).
    (
        "modules",
        "submodule git dirs have their own hooks and config",
    ),
];

/// A cordon file as resolution protects it: where the kernel finds it
/// ([`crate::paths::profile_file_path`]), the symlinks on its spelled path, and whether it
/// is one of cordon's directories (state, sessions) rather than a file.
type ProfileFile = (PathBuf, Vec<PathBuf>, bool);

/// The most linked worktrees' admin dirs [`protect_worktree_admin`] protects one by one;
/// with more, `worktrees/` is read-only whole ([`TOO_MANY_WORKTREES_REASON`]). 4096; 64
/// in this crate's unit tests (a resolution of thousands of in-memory admin dirs takes
/// most of a minute in a debug build).
pub const MAX_WORKTREE_ADMINS: usize = if cfg!(test) { 64 } else { 4096 };

/// Why `worktrees/` is read-only whole when it holds more than [`MAX_WORKTREE_ADMINS`].
const TOO_MANY_WORKTREES_REASON: &str =
    "more linked worktrees than cordon checks one by one (4096): their admin dirs are read-only";

/// Why a linked worktree's admin dir (or `worktrees` itself, as a symlink) is read-only.
const WORKTREES_REASON: &str = "linked worktrees' commondir and config redirect git";

/// A git dir cordon recognised by its names (a bare repository, or a root that is a git
/// dir), protected so that the next run recognises it too: [`protect_git_dir`], and
/// `objects` and `refs` pinned (a directory bound onto itself cannot be renamed away;
/// anything else there is read-only), since a command that could remove or
/// swap them would hide the git dir from the next run's check while git still uses it
/// (breaker, stop 21); and the common dir its `commondir` names ([`protect_common_dir`]).
fn protect_found_git_dir(
    fs: &dyn FsView,
    prot: &dyn Fn(PathBuf, &str) -> ResolvedEntry,
    d: &Path,
    out: &mut Vec<ResolvedEntry>,
) {
    const KEEP: &str = "it makes this directory a git dir, whose hooks git runs";
    protect_git_dir(fs, prot, d, out);
    // A `.git` inside it would be taken first by a push or fetch to its path (breaker,
    // stop 21): kept as absent (cordon's empty placeholder).
    out.push(prot(d.join(".git"), crate::gitconfig::MISSING_GIT_REASON));
    // `objects` and `refs` pinned keep the check true next run (`HEAD` stays writable:
    // checkout and detached commits rename onto it).
    for name in ["objects", "refs"] {
        let p = d.join(name);
        match fs.entry(&p) {
            Some(Entry::Kind(FileKind::Dir)) => out.push(pinned(p, d.join("hooks"))),
            Some(_) => out.push(prot(p, KEEP)),
            None => {}
        }
    }
    protect_common_dir(fs, prot, d, out);
}

/// The common dir a git dir's `commondir` file names (resolved as git resolves it), when
/// it is a directory: git takes hooks and config from there, so [`protect_git_dir`] applies
/// to it too (breaker, stop 21: a nested `.git` file led to a git dir whose common dir's
/// hooks stayed writable).
fn protect_common_dir(
    fs: &dyn FsView,
    prot: &dyn Fn(PathBuf, &str) -> ResolvedEntry,
    gitdir: &Path,
    out: &mut Vec<ResolvedEntry>,
) {
    let Some(common) = commondir_target(fs, gitdir) else {
        return;
    };
    if common != gitdir && fs.kind(&common) == Some(FileKind::Dir) {
        protect_git_dir(fs, prot, &common, out);
    }
}

/// The children of a git dir that run code or redirect git, with why: read-only inside
/// every writable root (R-P3, [`protect_git_dir`]).
/// Why a git dir's `hooks` is protected; also what marks a directory protected as a git
/// dir ([`ResolvedFilesystem::writable_git_dirs`]).
const GIT_HOOKS_REASON: &str = "git hooks run code";

/// Why `name`, a child of a git dir, stays read-only inside every writable root (R-P3), or
/// `None`: the same table [`protect_git_dir`] protects by. A grant of the git dir does not
/// make such a child writable, so none is offered for it.
pub fn git_dir_protected(name: &str) -> Option<&'static str> {
    GIT_DIR_PROTECTED
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, why)| *why)
}

const GIT_DIR_PROTECTED: [(&str, &str); 9] = [
    ("hooks", GIT_HOOKS_REASON),
    ("config", crate::gitconfig::GIT_CONFIG_REASON),
    ("info", "git info/attributes selects filters that run code"),
    (
        "commondir",
        "commondir points git at another directory's config and hooks",
    ),
    ("config.worktree", "git config can run code"),
    (
        "modules",
        "submodule git dirs have their own hooks and config",
    ),
    // Remotes defined the old way (a file per remote) point `git push`/`fetch` at
    // another repository, whose hooks then run on the host (breaker, stop 18: a
    // planted `.git/remotes/origin` to a bare repository in the workspace).
    (
        "remotes",
        "legacy remote definitions point git push and fetch at another repository",
    ),
    (
        "branches",
        "legacy remote definitions point git push and fetch at another repository",
    ),
    // lazygit reads a per-repository config here (`git.paging.pager`, `customCommands`
    // run commands), unseen by `git status` (attack pass 28).
    (
        "lazygit.yml",
        "lazygit runs the pager and custom commands it sets",
    ),
];

/// Checks that `gitdir` (named by the `.git` file `dotgit` in writable root `root`) is a
/// genuine linked worktree's git dir and returns its common dir. A confined command can
/// write a `.git` file and everything inside its own root, so every fact is checked where
/// it cannot have written: `gitdir` is `<common>/worktrees/<name>`, outside `root`; its
/// `gitdir` backlink names `dotgit`; `<common>` is a real git dir (`HEAD`, `objects`,
/// `refs`) outside `root`, and is not `/`, a home directory or above one.
fn linked_worktree(
    fs: &dyn FsView,
    gitdir: &Path,
    dotgit: &Path,
    root: &Path,
    homes: &[PathBuf],
) -> Result<PathBuf, String> {
    if gitdir.starts_with(root) {
        return Err("its git dir lies inside the writable root".into());
    }
    let worktrees = gitdir.parent().ok_or("no parent")?;
    if worktrees.file_name() != Some(std::ffi::OsStr::new("worktrees")) {
        return Err("its git dir is not <repo>/worktrees/<name>".into());
    }
    let common = worktrees.parent().ok_or("no common dir")?.to_path_buf();
    let back_file = gitdir.join("gitdir");
    let back = fs
        .read_small(&back_file, SMALL_FILE_CAP)
        .map_err(|r| format!("no gitdir backlink: {}: {r}", back_file.display()))?;
    let back = canonicalize_lenient(
        fs,
        &crate::paths::physical_normalize(fs, Path::new(back.trim()), gitdir),
    );
    if back != canonicalize_lenient(fs, dotgit) {
        return Err("the git dir's backlink names another worktree".into());
    }
    let commondir = gitdir.join("commondir");
    match fs.read_small(&commondir, SMALL_FILE_CAP) {
        Ok(c) => {
            let c = canonicalize_lenient(
                fs,
                &crate::paths::physical_normalize(fs, Path::new(git_pointer(&c)), gitdir),
            );
            if c != common {
                return Err("its commondir does not name the repository it lives in".into());
            }
        }
        Err(ReadRefusal::Missing) => {}
        Err(r) => return Err(format!("{}: {r}", commondir.display())),
    }
    // Every pointer was read from files a confined command could have written: none of
    // the derived dirs may be reached through a symlink (one planted inside a writable
    // root would carry the grant anywhere), and the common dir must be a real git dir.
    if canonicalize_lenient(fs, gitdir) != gitdir || is_spelled_through_link(fs, dotgit) {
        return Err("its git dir is named through a symlink".into());
    }
    crate::git::real_git_dir(fs, &common)
        .map_err(|why| format!("its common dir is not a real git dir: {why}"))?;
    if common.starts_with(root)
        || depth(&common) == 0
        || homes.iter().any(|h| h.starts_with(&common))
    {
        return Err("its common dir is inside the root, `/`, or a home directory".into());
    }
    Ok(common)
}

/// Checks that `gitdir` (what the `.git` file `dotgit` of the writable root `root` names)
/// is the git dir of a submodule whose work tree is `root` (nu9 F20: `git commit` inside a
/// submodule failed, its git dir `<super>/.git/modules/<name>` being read-only): a real
/// git dir ([`crate::git::real_git_dir`]) outside `root`, without `commondir`, below a
/// `modules/` directory of another real git dir, reached through no symlink, and whose own
/// `config` names `root` as its work tree (`core.worktree`, resolved against the git dir as
/// git does). That backlink is the submodule's own config, which no confined command can
/// have written: it lies outside this root, and `modules/` and every git dir's `config` are
/// protected wherever they are inside a writable root (R-P3).
///
/// Errors: the first check that fails, in words.
fn submodule_git_dir(
    fs: &dyn FsView,
    gitdir: &Path,
    dotgit: &Path,
    root: &Path,
) -> Result<(), String> {
    if gitdir.starts_with(root) {
        return Err("its git dir lies inside the writable root".into());
    }
    if canonicalize_lenient(fs, gitdir) != gitdir || is_spelled_through_link(fs, dotgit) {
        return Err("its git dir is named through a symlink".into());
    }
    crate::git::real_git_dir(fs, gitdir)
        .map_err(|why| format!("its git dir is not a real git dir: {why}"))?;
    // cordon's own protected placeholder says `.` (the git dir itself, what a missing
    // `commondir` means): anything else points git elsewhere (attack pass 27, G1: the
    // placeholder the first run left made every later commit fail).
    let commondir = gitdir.join("commondir");
    if fs.entry(&commondir).is_some() {
        let own = fs
            .read_small(&commondir, SMALL_FILE_CAP)
            .is_ok_and(|c| c.trim() == "." || c.trim().is_empty());
        if !own {
            return Err("its git dir has a commondir".into());
        }
    }
    let superproject = gitdir
        .ancestors()
        .skip(1)
        .find(|a| a.file_name() == Some(std::ffi::OsStr::new("modules")))
        .and_then(Path::parent)
        .ok_or("its git dir is not <git dir>/modules/<name>")?;
    crate::git::real_git_dir(fs, superproject)
        .map_err(|why| format!("the directory holding modules/ is not a git dir: {why}"))?;
    let named = crate::gitconfig::core_worktree(fs, gitdir)?;
    if named != canonicalize_lenient(fs, root) {
        return Err(format!(
            "its core.worktree names {}, not this directory",
            named.display()
        ));
    }
    Ok(())
}

/// Where `p` leads: [`canonicalize_lenient`], and where the result is a symlink whose
/// target is missing (which `canonicalize` cannot follow), its target, up to 40 links as
/// the kernel. The path a program opening `p` would create.
fn follow_links(fs: &dyn FsView, p: &Path) -> PathBuf {
    let mut c = canonicalize_lenient(fs, p);
    for _ in 0..40 {
        let Some(next) = fs.read_link(&c) else { break };
        c = canonicalize_lenient(
            fs,
            &lexical_normalize(&next, c.parent().unwrap_or(Path::new("/"))),
        );
    }
    c
}

/// Whether the `gitdir:` line of the `.git` file `dotgit` names its target through a
/// symlink (its normalized spelling is not canonical). Unreadable counts as spelled
/// through one: the caller refuses the grant.
fn is_spelled_through_link(fs: &dyn FsView, dotgit: &Path) -> bool {
    let Ok(text) = fs.read_small(dotgit, SMALL_FILE_CAP) else {
        return true;
    };
    let Some(t) = text.lines().next().and_then(|l| l.strip_prefix("gitdir:")) else {
        return true;
    };
    let base = canonicalize_lenient(fs, dotgit.parent().unwrap_or(Path::new("/")));
    let spelled = lexical_normalize(Path::new(t.trim()), &base);
    canonicalize_lenient(fs, &spelled) != spelled
}

/// The git dir and common dir of the repository whose worktree is `root`: `.git` as a
/// directory (or a symlink to one; its `commondir` followed), or a validated linked
/// worktree's `.git` file. `None` when `root` holds no usable repository.
fn repo_dirs_of_root(
    fs: &dyn FsView,
    root: &Path,
    homes: &[PathBuf],
) -> Option<(PathBuf, PathBuf)> {
    let dotgit = root.join(".git");
    match fs.kind(&dotgit)? {
        FileKind::Dir => {
            let gitdir = canonicalize_lenient(fs, &dotgit);
            let common = commondir_target(fs, &gitdir).unwrap_or_else(|| gitdir.clone());
            Some((gitdir, common))
        }
        FileKind::File => {
            let gitdir = read_gitdir_file(fs, &dotgit).ok()?;
            let common = linked_worktree(fs, &gitdir, &dotgit, root, homes).ok()?;
            Some((gitdir, common))
        }
    }
}

/// The repository git uses in the writable root `root` — its work tree, git dir and common
/// dir — found as git finds it: `root`'s own `.git` (a directory, a linked worktree's
/// `gitdir:` file, or any other `gitdir:` file git follows: `--separate-git-dir`, a
/// submodule's checkout), else the nearest ancestor's (a `.cordon`-marked workspace inside
/// a repository). cordon's empty `.git` placeholder is no repository to git, and none here.
/// Used to protect what that repository's configuration runs inside the writable roots
/// (attack pass 45, M6: in all three layouts the `core.hooksPath` and `include.path`
/// targets in the workspace were writable, and the host's next `git commit` ran them);
/// never to grant anything.
fn repository_used_at(
    fs: &dyn FsView,
    root: &Path,
    homes: &[PathBuf],
) -> Option<(PathBuf, (PathBuf, PathBuf))> {
    let is_repo_marker = |d: &Path| {
        let dotgit = d.join(".git");
        match fs.kind(&dotgit) {
            Some(FileKind::Dir) => !fs.is_empty_dir(&dotgit),
            Some(FileKind::File) => true,
            None => false,
        }
    };
    if is_repo_marker(root) {
        return repo_dirs_of_root(fs, root, homes)
            .or_else(|| nested_repo_dirs(fs, root))
            .map(|d| (root.to_path_buf(), d));
    }
    let above = root.ancestors().skip(1).find(|a| is_repo_marker(a))?;
    nested_repo_dirs(fs, above).map(|d| (above.to_path_buf(), d))
}

/// The repository git uses at the directory `dir` as `(work tree, git dir, common dir)`:
/// [`repository_used_at`]'s answer, for the grant checks (the workspace's own repository,
/// an enclosing one included, is the command's project: new-user pass nu25, F4).
pub fn repository_at(
    fs: &dyn FsView,
    dir: &Path,
    homes: &[PathBuf],
) -> Option<(PathBuf, PathBuf, PathBuf)> {
    repository_used_at(fs, dir, homes).map(|(w, (g, c))| (w, g, c))
}

/// What the repository git uses at `at` (an existing directory, or the nearest existing
/// ancestor of a path) runs or reads as configuration, whatever lies in writable roots:
/// its work tree, and `(path, reason)` for its hooks directories, the targets of its
/// configuration's code keys (`core.hooksPath`, includes, filters, `core.fsmonitor`, …),
/// and what its hooks delegate to (hook managers' configs, husky's directory, linked
/// scripts). `None` outside any repository. For the grant check after a denial (attack
/// pass 45, M1: another repository's `core.hooksPath` hooks, `.husky/` and
/// `lefthook.yml` were offered as grants); `homes` as for resolution.
pub fn repository_code_paths(
    fs: &dyn FsView,
    at: &Path,
    homes: &[PathBuf],
) -> Option<(PathBuf, Vec<(PathBuf, String)>)> {
    let dir = at.ancestors().find(|a| fs.kind(a) == Some(FileKind::Dir))?;
    let (worktree, (gitdir, common)) = repository_used_at(fs, dir, homes)?;
    let repo = crate::gitconfig::RepoDirs {
        worktree: &worktree,
        gitdir: &gitdir,
        common: &common,
    };
    let mut notes = Vec::new();
    let targets = crate::gitconfig::code_paths(
        fs,
        &repo,
        homes,
        &std::collections::BTreeMap::new(),
        &mut notes,
    );
    let hook_dirs: Vec<PathBuf> = std::iter::once(common.join("hooks"))
        .chain(
            targets
                .iter()
                .filter(|t| t.key.eq_ignore_ascii_case("core.hookspath"))
                .map(|t| t.path.clone()),
        )
        .collect();
    let mut out: Vec<(PathBuf, String)> = hook_dirs
        .iter()
        .map(|d| (d.clone(), "git runs hooks from this directory".to_string()))
        .collect();
    out.extend(hook_delegates(fs, &worktree, &hook_dirs));
    out.extend(targets.iter().map(|t| (t.path.clone(), t.reason())));
    Some((worktree, out))
}

/// What the user's global and system git configuration runs or reads, for every
/// repository: `(path, reason)` for the targets of its code keys (`core.hooksPath` given as
/// an absolute path, `include.path`, `core.fsmonitor`, …), includes followed, from
/// `/etc/gitconfig`, `~/.gitconfig` and `~/.config/git/config` of each of `homes` and the
/// files `env` names (`GIT_CONFIG_GLOBAL`, `GIT_CONFIG_SYSTEM`) (attack
/// pass 46, N1: `-w` on the global hooks directory's `pre-commit`, or on the
/// `~/dotfiles/gitconfig` an include names, was offered after a denial, and the host's next
/// `git commit` ran what the command wrote). Relative targets, which git reads against each
/// repository, are left out.
pub fn global_git_code_paths(
    fs: &dyn FsView,
    homes: &[PathBuf],
    env: &std::collections::BTreeMap<String, String>,
) -> Vec<(PathBuf, String)> {
    let none = Path::new("/nonexistent/cordon-no-repository");
    let repo = crate::gitconfig::RepoDirs {
        worktree: none,
        gitdir: none,
        common: none,
    };
    let mut notes = Vec::new();
    crate::gitconfig::code_paths(fs, &repo, homes, env, &mut notes)
        .into_iter()
        .filter(|t| !t.path.starts_with(none))
        .map(|t| {
            let why = t.reason();
            (t.path, why)
        })
        .collect()
}

/// The work trees of the nested repositories among `entries`: the directories holding a
/// `.git` protected with [`NESTED_GIT_REASON`], as spelled or as resolved (a symlinked
/// `.git` resolves elsewhere: attack pass 32, C6), sorted, each once. One list for the
/// resolution's protections and the run's census of their hook-manager configs.
pub fn nested_repository_roots<'a>(
    entries: impl IntoIterator<Item = &'a ResolvedEntry>,
) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = entries
        .into_iter()
        .filter(|e| {
            matches!(&e.origin, EntryOrigin::Protected { reason } if reason == NESTED_GIT_REASON)
        })
        .flat_map(|e| [&e.spelled, &e.path])
        .filter(|p| p.file_name() == Some(".git".as_ref()))
        .filter_map(|p| p.parent().map(Path::to_path_buf))
        .collect();
    out.sort();
    out.dedup();
    out
}

/// The git dir and common dir of a nested repository at `root` (below a writable root;
/// its git dir is protected whole), however its `.git` leads there: a directory, a
/// symlink to one, or a `gitdir:` file (a submodule, `--separate-git-dir`) — attack pass
/// 32, C6: only a `.git` directory's config was read, so a submodule's `core.fsmonitor`
/// target in the work tree stayed writable. Used to protect more, never to grant.
fn nested_repo_dirs(fs: &dyn FsView, root: &Path) -> Option<(PathBuf, PathBuf)> {
    let dotgit = root.join(".git");
    let gitdir = if fs.kind(&dotgit) == Some(FileKind::File) && !is_link(fs, &dotgit) {
        canonicalize_lenient(fs, &read_gitdir_file(fs, &dotgit).ok()?)
    } else {
        canonicalize_lenient(fs, &dotgit)
    };
    if fs.kind(&gitdir) != Some(FileKind::Dir) {
        return None;
    }
    let common = commondir_target(fs, &gitdir).unwrap_or_else(|| gitdir.clone());
    Some((gitdir, common))
}

/// The directory a git dir's `commondir` file names, resolved as git resolves it (relative
/// to the git dir, then canonical); `None` when there is no readable `commondir`.
fn commondir_target(fs: &dyn FsView, gitdir: &Path) -> Option<PathBuf> {
    let c = fs
        .read_small(&gitdir.join("commondir"), SMALL_FILE_CAP)
        .ok()?;
    Some(canonicalize_lenient(
        fs,
        &crate::paths::physical_normalize(fs, Path::new(git_pointer(&c)), gitdir),
    ))
}

/// A git pointer file's text (`commondir`) as git reads it: only the final CR/LF
/// characters dropped (setup.c), not other whitespace — `" ../.."` is a directory named
/// `" .."` for git (attack pass 38, B1).
fn git_pointer(text: &str) -> &str {
    text.trim_end_matches(['\n', '\r'])
}

/// The hook managers' config files that must still be absent after a run in the work
/// tree `root` whose git dir is `gitdir` (attack pass 29, F1): a manager is in use when
/// one of its config files exists there or its hook is installed in `gitdir/hooks`, and
/// then every missing name it reads is one a command could create for the host's next
/// `git commit` to run (lefthook merges `lefthook-local.yml` onto `lefthook.yml`; an
/// installed pre-commit hook runs whatever `.pre-commit-config.yaml` appears), and the
/// missing config an installed pre-commit hook names (`pre-commit install -c FILE`,
/// `ARGS=(hook-impl --config=FILE …)`, the default name in a stock hook). They get no
/// placeholder (an untracked file in every such repository; attack pass 214 #4: the
/// stock hook's `--config=.pre-commit-config.yaml` made one, which this run's sweep then
/// removed, blaming the command and cancelling every other run it covered): the run's
/// sweep removes one a command made. `(path, manager)` pairs.
pub fn hook_configs_kept_absent(
    fs: &dyn FsView,
    root: &Path,
    gitdir: &Path,
) -> Vec<(PathBuf, &'static str)> {
    let hooks = gitdir.join("hooks");
    // Each hook read once for both managers (this runs on every launch).
    let texts: Vec<String> = fs
        .list_dir(&hooks, 256)
        .iter()
        .filter(|n| !n.to_string_lossy().ends_with(".sample"))
        .filter_map(|n| fs.read_small(&hooks.join(n), SMALL_FILE_CAP).ok())
        .collect();
    let installed = |needle: &str| texts.iter().any(|t| t.contains(needle));
    let mut out = Vec::new();
    for (tool, files) in HOOK_MANAGER_CONFIGS {
        let present = files.iter().any(|f| fs.kind(&root.join(f)).is_some());
        let needle = match tool {
            "pre-commit" => "File generated by pre-commit",
            _ => "lefthook",
        };
        if present || installed(needle) {
            for f in files {
                let p = root.join(f);
                if fs.kind(&p).is_none() && fs.read_link(&p).is_none() {
                    out.push((p, tool));
                }
            }
        }
    }
    for t in texts
        .iter()
        .filter(|t| t.contains("File generated by pre-commit"))
    {
        for cfg in pre_commit_configs(t) {
            let p = lexical_normalize(Path::new(&cfg), root);
            if p.starts_with(root)
                && p != root
                && fs.kind(&p).is_none()
                && fs.read_link(&p).is_none()
                && !out.iter().any(|(q, _)| *q == p)
            {
                out.push((p, "pre-commit"));
            }
        }
    }
    out
}

/// Each home's login files ([`crate::login_files::all`]) that lie inside one of
/// `write_roots` as spelled or where they lead, with who runs them: `homes` as spelled and
/// canonical, so a path may come twice (the caller's entries are de-duplicated).
pub(crate) fn login_files_in_roots(
    fs: &dyn FsView,
    homes: &[PathBuf],
    write_roots: &[PathBuf],
) -> Vec<(PathBuf, &'static str)> {
    let mut out: Vec<(PathBuf, &'static str)> = Vec::new();
    for h in homes {
        for (rel, tool) in crate::login_files::all() {
            let p = h.join(rel);
            if out.iter().any(|(q, _)| *q == p) {
                continue;
            }
            let c = canonicalize_lenient(fs, &p);
            if write_roots
                .iter()
                .any(|r| c.starts_with(r) || p.starts_with(r))
            {
                out.push((p, tool));
            }
        }
    }
    out
}

/// The hook managers' config files present in the work tree `root` (protected for the run,
/// [`hook_delegates`]), `(path, manager)`: the run's sweep checks each is still the file it
/// was — one replaced while the command ran (another run removed it, and the command wrote
/// the name once its cover was gone: attack pass 31, B2) is moved aside after the run.
pub fn hook_configs_present(fs: &dyn FsView, root: &Path) -> Vec<(PathBuf, &'static str)> {
    let mut out = Vec::new();
    for (tool, files) in HOOK_MANAGER_CONFIGS {
        for f in files {
            let p = root.join(f);
            // `read_link`, one syscall, for "the name is a symlink": `is_link` resolves
            // the path twice, for each of ~27 names per work tree on every launch.
            if fs.kind(&p) == Some(FileKind::File) || fs.read_link(&p).is_some() {
                out.push((p, tool));
            }
        }
    }
    out
}

/// The config files hook managers run commands from, per manager, relative to the work
/// tree: protected when present, whether or not the manager's hook is installed yet
/// ([`hook_delegates`]).
const HOOK_MANAGER_CONFIGS: [(&str, &[&str]); 2] = [
    ("pre-commit", &[".pre-commit-config.yaml"]),
    (
        "lefthook",
        // lefthook 2.x: {lefthook, .lefthook, .config/lefthook} and their `-local`
        // overrides, each .yml/.yaml/.json/.jsonc/.toml (attack pass 30, A1: the .jsonc and
        // `.config/…-local` names were missing), and the script dirs.
        &[
            "lefthook.yml",
            "lefthook.yaml",
            "lefthook.json",
            "lefthook.jsonc",
            "lefthook.toml",
            ".lefthook.yml",
            ".lefthook.yaml",
            ".lefthook.json",
            ".lefthook.jsonc",
            ".lefthook.toml",
            ".config/lefthook.yml",
            ".config/lefthook.yaml",
            ".config/lefthook.json",
            ".config/lefthook.jsonc",
            ".config/lefthook.toml",
            "lefthook-local.yml",
            "lefthook-local.yaml",
            "lefthook-local.json",
            "lefthook-local.jsonc",
            "lefthook-local.toml",
            ".lefthook-local.yml",
            ".lefthook-local.yaml",
            ".lefthook-local.json",
            ".lefthook-local.jsonc",
            ".lefthook-local.toml",
            ".config/lefthook-local.yml",
            ".config/lefthook-local.yaml",
            ".config/lefthook-local.json",
            ".config/lefthook-local.jsonc",
            ".config/lefthook-local.toml",
            ".lefthook",
            ".lefthook-local",
        ],
    ),
];

/// What a hooks dir's entries run beyond themselves (R-P3; breaker, stop 19): a protected
/// hook that is a symlink into the work tree (`.git/hooks/pre-commit ->
/// ../../scripts/pre-commit.sh`) left its target writable, and hook managers' dispatchers
/// run files outside the hooks dir: husky v9 (`core.hooksPath = .husky/_`) runs
/// `.husky/<hook>`; pre-commit's generated hooks read `.pre-commit-config.yaml`, lefthook's
/// read `lefthook.yml` (and its variants) — whose commands then ran on the host at the
/// next `git commit`. Returns `(path, reason)` pairs for existing paths: each link's
/// target, a husky hooks dir's parent as a whole, and the managers' config files at the
/// worktree root `root`. Reads at most 256 entries per hooks dir and 64 KiB per hook.
fn hook_delegates(fs: &dyn FsView, root: &Path, hook_dirs: &[PathBuf]) -> Vec<(PathBuf, String)> {
    let mut out = Vec::new();
    for dir in hook_dirs {
        let names = fs.list_dir(dir, 256);
        for n in &names {
            // git never runs `*.sample`: not read (every launch reads this dir).
            if n.to_string_lossy().ends_with(".sample") {
                continue;
            }
            let hook = dir.join(n);
            // A link whose target does not exist yet is protected too (a placeholder):
            // the command could otherwise create the file git will run (new user, stop 19).
            let link = fs.read_link(&hook).is_some() || is_link(fs, &hook);
            if link && fs.kind(&hook) != Some(FileKind::Dir) {
                let why = format!(
                    "git runs it as the hook {} (a symlink to it)",
                    hook.display()
                );
                if fs.kind(&hook).is_none() {
                    // Dangling: the file it names, found by following the links (up to
                    // 40, as the kernel), is protected with a placeholder.
                    let mut at = hook.clone();
                    for _ in 0..40 {
                        let Some(next) = fs.read_link(&at) else { break };
                        at = lexical_normalize(&next, at.parent().unwrap_or(Path::new("/")));
                    }
                    out.push((at, why));
                } else {
                    out.push((hook.clone(), why));
                }
            }
            let Ok(text) = fs.read_small(&hook, SMALL_FILE_CAP) else {
                continue;
            };
            // pre-commit installed with `-c FILE`: its hook names the config it runs
            // (`ARGS=(hook-impl --config=ci/pre-commit.yaml …)`), protected as it is
            // spelled, a placeholder when missing (attack pass 26, F11: only the default
            // name was protected, and the named one stayed writable).
            if text.contains("File generated by pre-commit") {
                for cfg in pre_commit_configs(&text) {
                    let p = lexical_normalize(Path::new(&cfg), root);
                    if p.starts_with(root) && !out.iter().any(|(q, _)| *q == p) {
                        out.push((
                            p,
                            format!(
                                "pre-commit runs the commands it lists from the hook {}",
                                hook.display()
                            ),
                        ));
                    }
                }
            }
            for (tool, files) in HOOK_MANAGER_CONFIGS {
                let generated = match tool {
                    "pre-commit" => text.contains("File generated by pre-commit"),
                    _ => text.contains("lefthook"),
                };
                if !generated {
                    continue;
                }
                for f in files {
                    let p = root.join(f);
                    if fs.kind(&p).is_some() && !out.iter().any(|(q, _)| *q == p) {
                        out.push((
                            p,
                            format!(
                                "{tool} runs the commands it lists from the hook {}",
                                hook.display()
                            ),
                        ));
                    }
                }
            }
        }
        // husky v9: hooksPath `<dir>/_` whose dispatcher runs `<dir>/<hook>`.
        if dir.file_name().is_some_and(|n| n == "_") && fs.kind(&dir.join("h")).is_some() {
            if let Some(parent) = dir.parent() {
                out.push((
                    parent.to_path_buf(),
                    format!(
                        "husky's dispatcher in {} runs the hooks kept here",
                        dir.display()
                    ),
                ));
            }
        }
    }
    // A manager's config at the top of the work tree, with or without its hook: the hook
    // can be installed on the host while a command runs (`pre-commit install`), and the
    // protected set is decided at launch (attack pass 28, F3: a running command rewrote
    // `.pre-commit-config.yaml` after the user installed the hook).
    for (tool, files) in HOOK_MANAGER_CONFIGS {
        for f in files {
            let p = root.join(f);
            if fs.kind(&p).is_some() && !out.iter().any(|(q, _)| *q == p) {
                out.push((
                    p,
                    format!(
                        "{tool} runs the commands it lists once its git hook is installed \
                         (which can happen while a command runs)"
                    ),
                ));
            }
        }
    }
    out
}

/// Adds a protected entry for every path the repository's effective git configuration
/// makes code (see [`crate::gitconfig::CODE_KEYS`]) that lies inside one of `write_roots`;
/// its reason names the key and the file that set it.
#[allow(clippy::too_many_arguments)]
fn protect_git_config_targets(
    fs: &dyn FsView,
    root: &Path,
    homes: &[PathBuf],
    home_forms: &[PathBuf],
    env: &std::collections::BTreeMap<String, String>,
    write_roots: &[PathBuf],
    out: &mut Vec<ResolvedEntry>,
    notes: &mut Vec<String>,
    nested: bool,
) -> Result<(), ResolveError> {
    let found = if nested {
        nested_repo_dirs(fs, root).map(|d| (root.to_path_buf(), d))
    } else {
        repository_used_at(fs, root, home_forms)
    };
    let Some((worktree, (gitdir, common))) = found else {
        return Ok(());
    };
    let root = worktree.as_path();
    let repo = crate::gitconfig::RepoDirs {
        worktree: root,
        gitdir: &gitdir,
        common: &common,
    };
    let targets = crate::gitconfig::code_paths(fs, &repo, homes, env, notes);
    // The hooks dirs git runs from: the common dir's `hooks`, and `core.hooksPath`.
    let hook_dirs: Vec<PathBuf> = std::iter::once(common.join("hooks"))
        .chain(
            targets
                .iter()
                .filter(|t| t.key.eq_ignore_ascii_case("core.hookspath"))
                .map(|t| t.path.clone()),
        )
        .collect();
    // The missing hook-manager configs the run's sweep removes when a command makes them
    // (the work tree of a `.git` directory: `git_census` in cordon-session): no
    // placeholder for them here — cordon's own would be an untracked file the sweep
    // then removed as the command's, pulling it from under every other run (attack pass
    // 214 #4: the stock pre-commit hook's `--config=.pre-commit-config.yaml`; a hook
    // symlinked to a missing `lefthook-local.yml` and a code key naming one are the same).
    let dotgit = root.join(".git");
    let kept: Vec<PathBuf> = if fs.kind(&dotgit) == Some(FileKind::Dir) && !is_link(fs, &dotgit) {
        hook_configs_kept_absent(fs, root, &dotgit)
            .into_iter()
            .map(|(p, _)| p)
            .collect()
    } else {
        Vec::new()
    };
    let kept_absent = |p: &Path| kept.iter().any(|k| k == p) && fs.kind(p).is_none();
    for (path, reason) in hook_delegates(fs, root, &hook_dirs) {
        if kept_absent(&path) {
            continue;
        }
        let c = canonicalize_lenient(fs, &path);
        if write_roots.iter().any(|r| c.starts_with(r)) {
            // Spelled as git reaches it (through the hook's link): every link on the way
            // is pinned too, so a chain `hook -> scripts/a -> b.sh` cannot be re-pointed at
            // `scripts/a` (breaker, stop 19).
            out.push(entry_for(
                fs,
                path,
                Access::Read,
                EntryOrigin::Protected { reason },
            ));
        }
    }
    for t in targets {
        let c = canonicalize_lenient(fs, &t.path);
        // A hooks or template directory that *is* a writable root: a protected entry at
        // the root's own path would lose to the root, and the hooks it lacks cannot be
        // kept from being created without placeholders git would run (F14).
        if t.dir {
            // The hooks directory itself (git runs its direct children), or the template
            // directory or anything inside it (`<templateDir>/hooks` is copied into every new
            // repository; attack pass 27, G7).
            let hooks = t.key.eq_ignore_ascii_case("core.hookspath");
            if let Some(r) = write_roots
                .iter()
                .find(|r| **r == c || **r == t.path || (!hooks && r.starts_with(&c)))
            {
                return Err(ResolveError::CodeDirRoot(
                    r.clone(),
                    format!(
                        "it {} git's {} (set in {})",
                        if **r == c || **r == t.path {
                            "is"
                        } else {
                            "lies inside"
                        },
                        if hooks {
                            "hooks directory, core.hooksPath"
                        } else {
                            "template directory, init.templateDir"
                        },
                        t.file.display()
                    ),
                ));
            }
        }
        // Inside a writable root by where it leads, or by how git spells it: a target
        // reached through a symlink that lives in a writable root (`!lk/q.sh` with `lk` a
        // link elsewhere) is protected too, so the link on the way is pinned (PinLink) and
        // cannot be swapped for a directory the command fills.
        if kept_absent(&t.path) {
            continue;
        }
        if write_roots
            .iter()
            .any(|r| c.starts_with(r) || t.path.starts_with(r))
        {
            let mut e = entry_for(
                fs,
                t.path.clone(),
                Access::Read,
                EntryOrigin::Protected { reason: t.reason() },
            );
            // A missing hooks or template dir: its placeholder must be a directory.
            if !e.exists && t.dir {
                e.is_dir = true;
            }
            out.push(e);
        }
    }
    Ok(())
}

/// The config files a pre-commit generated hook names (`--config=FILE` or `--config FILE`
/// in its `ARGS=(…)` line), as spelled (relative to the repository root).
fn pre_commit_configs(hook: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in hook.lines() {
        let Some(inner) = line
            .trim_start()
            .strip_prefix("ARGS=(")
            .and_then(|r| r.rsplit_once(')'))
            .map(|(a, _)| a)
        else {
            continue;
        };
        // The bash array's words, as the shell splits and unquotes them.
        let Some(words) = shlex::split(inner) else {
            continue;
        };
        for (i, w) in words.iter().enumerate() {
            let value = match w.strip_prefix("--config=") {
                Some(v) => Some(v),
                None if w == "--config" => words.get(i + 1).map(String::as_str),
                None => None,
            };
            if let Some(v) = value.filter(|v| !v.is_empty()) {
                if !out.iter().any(|o| o == v) {
                    out.push(v.to_string());
                }
            }
        }
    }
    out
}

/// The reason of a nested repository's protected `.git` (R-P3).
pub const NESTED_GIT_REASON: &str = "a nested repository's git dir: its config and hooks \
    run when git is used there, and when `git status` at the project root recurses into it";

/// Directories [`protect_nested_projects`] does not descend into: git dirs, and package and
/// build trees that hold other people's code (the places editors skip too). Such a
/// directory's own `.git` is looked up all the same (`target/.git` is a repository at the
/// project's top level).
pub const NESTED_SKIP: &[&str] = &[
    ".git",
    "node_modules",
    "target",
    ".venv",
    "venv",
    "__pycache__",
    ".tox",
    ".mypy_cache",
    ".pytest_cache",
    ".gradle",
];

/// Entries [`protect_nested_projects`] looks at per writable root, and how many levels deep.
pub const NESTED_SCAN_CAP: usize = 4096;
/// See [`NESTED_SCAN_CAP`]. Deep enough for real trees (a Java package path is ~10
/// levels); the entry cap is what bounds the cost (breaker, stop 21: a repository one
/// level past the old bound of 5 kept a writable `.git` and no note said so).
pub const NESTED_SCAN_DEPTH: usize = 16;

/// Protects, below writable root `root`, every nested repository's `.git` (a directory or
/// a `gitdir:` file) as a whole (R-P3; breaker, stop 19): a
/// command that rewrote `sub/.git/config` (or `sub/.git` to point at a git dir it made)
/// had its `core.fsmonitor` run on the host by the user's next `git status` in `sub` — or
/// at the project root, which recurses into every populated submodule and gitlink. Bounded
/// breadth-first: [`NESTED_SCAN_DEPTH`] levels, [`NESTED_SCAN_CAP`] entries, no symlinks
/// followed, [`NESTED_SKIP`] and the other writable roots (`all_roots`, scanned on their
/// own) not entered; a tree larger than that gets a note naming where the look stopped. Repositories the command creates during the run are not
/// covered (README, Known limits).
fn protect_nested_projects(
    fs: &dyn FsView,
    root: &Path,
    mut scan: NestedScan,
    prot: &dyn Fn(PathBuf, &str) -> ResolvedEntry,
    out: &mut Vec<ResolvedEntry>,
    notes: &mut Vec<String>,
) {
    // The submodules `.gitmodules` names are protected wherever they are, beyond the scan's
    // bounds (breaker, stop 19: 5000 files planted by one run hid the next run's `sm/.git`
    // past the cap, and `git status` at the root ran its redirected config).
    for sm in crate::gitconfig::submodule_paths(fs, root) {
        let dotgit = sm.join(".git");
        let kind = fs.kind(&dotgit);
        let placeholder = kind == Some(FileKind::Dir) && is_placeholder(fs, &dotgit);
        if (kind.is_some() || is_link(fs, &dotgit)) && !placeholder && !scan.found.contains(&dotgit)
        {
            scan.found.push(dotgit);
        }
    }
    for dotgit in scan.found {
        // A `gitdir:` file's git dir inside the root is protected too (breaker, stop 19:
        // `git init --separate-git-dir=.subgit sub` left `.subgit/config` writable); a
        // symlinked `.git` is protected as spelled, its target with it and the link pinned.
        let own = root.join(".git");
        if fs.kind(&dotgit) == Some(FileKind::File) && !is_link(fs, &dotgit) {
            if let Ok(target) = read_gitdir_file(fs, &dotgit) {
                let c = canonicalize_lenient(fs, &target);
                if c == own {
                    // The project's own git dir (a planted `gitdir: ../.git`): its own
                    // protections apply; making it read-only whole would block every later
                    // commit (breaker, stop 21).
                    notes.push(format!(
                        "{}: a .git file naming the project's own git dir; if you did \
                         not make it, remove it",
                        dotgit.display()
                    ));
                } else if fs.kind(&c) != Some(FileKind::Dir) || fs.kind(&c.join("HEAD")).is_none() {
                    // No git dir there (missing, a file, or a directory without the `HEAD`
                    // git needs to take it for one): nothing to protect, and no
                    // placeholder made in its name (attack pass 166, finding 4: `gitdir:
                    // .git/index.lock` had cordon make that file on the host at every run,
                    // jamming the user's git; `gitdir: src/main.rs` froze that file, and
                    // `gitdir: src` would freeze the directory, for later runs). The `.git`
                    // file itself stays read-only (below).
                    notes.push(format!(
                        "{}: a .git file naming {}, which is not a git dir (not a directory \
                         with a HEAD); if you did not make it, remove it",
                        dotgit.display(),
                        c.display()
                    ));
                } else if own_linked_worktree(fs, &own, &c) {
                    // A linked worktree of the project's own repository checked out inside
                    // it (`git worktree add wt`): its admin dir is protected file by file
                    // with the others ([`protect_worktree_admin`]), so commits in it and
                    // `git gc` in the main checkout work (new-user pass nu14: read-only
                    // whole, both failed); hooks and config come from the common dir.
                } else {
                    // Anywhere else in the root — `.git/objects/evil` included, which is
                    // writable (breaker, stop 21) — the git dir is read-only whole; and in
                    // any writable grant made so far (a submodule's or a linked worktree's
                    // git dir, writable outside the root: attack pass 27, G16).
                    let granted = out.iter().any(|e| {
                        e.access == Access::Write
                            && matches!(e.origin, EntryOrigin::GitWorktree { .. })
                            && c.starts_with(&e.path)
                    });
                    if c.starts_with(root) || granted {
                        out.push(prot(target.clone(), NESTED_GIT_REASON));
                    }
                    // Its common dir too, wherever the scan does not reach (breaker, stop
                    // 21: `gitdir: ../node_modules/gs` with `commondir` = `../c`).
                    protect_common_dir(fs, prot, &target, out);
                }
            }
        } else if is_link(fs, &dotgit) {
            // A symlinked nested `.git`: the common dir its target names as well (breaker,
            // stop 21).
            let target = canonicalize_lenient(fs, &dotgit);
            if target != own {
                protect_common_dir(fs, prot, &target, out);
            }
        }
        out.push(prot(dotgit, NESTED_GIT_REASON));
    }
    // A bare repository inside the root: what runs code in it is protected as in a `.git`
    // (its objects and refs stay writable, so a push to a local remote still works).
    for d in &scan.bare {
        protect_found_git_dir(fs, prot, d, out);
    }
    // A directory the scan could not list is read-only as a whole for this run: a
    // repository inside it could not be looked for, and the command must not be able to
    // plant one's config there (breaker, stop 20: `chmod 311 vendor` by one run hid
    // `vendor/lib/.git` from the next run's scan).
    for d in &scan.unlisted {
        out.push(prot(d.clone(), UNLISTED_REASON));
        notes.push(format!(
            "{}: cannot be listed or searched (its permissions), so cordon could not \
             look for repositories inside it: read-only in this run (`chmod u+rx` it to \
             have it scanned)",
            d.display()
        ));
    }
    if !scan.complete {
        notes.push(format!(
            "{}: looked for nested repositories in the first {NESTED_SCAN_CAP} entries and \
             {NESTED_SCAN_DEPTH} levels only \
             (the submodules git keeps in .git/modules or .gitmodules names are protected \
             anyway); a repository beyond them — one a command makes too, and is not \
             named after the run — keeps a writable .git, whose config git runs when used \
             there, and at the top when it is added as a gitlink: look with `git status \
             --ignore-submodules=all` first",
            root.display()
        ));
    }
}

/// Why a directory below a writable root is read-only: the nested-repository scan could
/// not list it ([`NestedScan::unlisted`]).
pub const UNLISTED_REASON: &str =
    "a directory cordon cannot list: repositories inside it could not be looked for";

/// What [`nested_git_entries`] found below one writable root.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NestedScan {
    /// Every `.git` (directory, `gitdir:` file or symlink; not cordon's empty placeholder)
    /// strictly below the root, breadth-first.
    pub found: Vec<PathBuf>,
    /// False when a bound stopped the walk: the entry cap, or directories at the deepest
    /// level looked at (their own `.git` looked up, nothing below them).
    pub complete: bool,
    /// Directories below the root that could not be listed (enterable, not readable):
    /// nothing below them was looked for, their own `.git` excepted.
    pub unlisted: Vec<PathBuf>,
    /// Directories strictly below the root that are git dirs themselves (`HEAD`,
    /// `objects/`, `refs/`: a bare repository such as a local `remote.git`), not entered.
    pub bare: Vec<PathBuf>,
    /// The root itself could not be listed or searched (nothing was looked for).
    pub root_unlisted: bool,
    /// The root itself is a git dir by its listing (nothing below it was looked for).
    pub root_git_dir: bool,
}

/// The nested repositories below writable root `root` (R-P3; breaker, stop 19), within
/// the bounds of [`NESTED_SCAN_DEPTH`] levels and [`NESTED_SCAN_CAP`] entries, not
/// following symlinks, not entering [`NESTED_SKIP`] nor the other writable roots
/// (`all_roots`, which have their own). Used at launch to protect them, and after a run to
/// report the ones the command made (`cordon run`).
pub fn nested_git_entries(fs: &dyn FsView, root: &Path, all_roots: &[PathBuf]) -> NestedScan {
    nested_git_entries_within(fs, root, all_roots, NESTED_SCAN_DEPTH)
}

/// How many levels the look for repositories a run made goes down (`cordon run`'s
/// `created_repositories`): as many as it may look at entries, so the entry cap alone
/// bounds it (attack pass 188 F6: a repository made 18 levels down, past the launch
/// scan's [`NESTED_SCAN_DEPTH`], and committed as a gitlink, was not named, and the host's
/// `git status` at the top ran its config). Reporting only: the launch scan keeps its depth,
/// since every repository it finds pins its ancestors.
pub const CREATED_SCAN_DEPTH: usize = NESTED_SCAN_CAP;

/// [`nested_git_entries`] down to `max_depth` levels.
pub fn nested_git_entries_within(
    fs: &dyn FsView,
    root: &Path,
    all_roots: &[PathBuf],
    max_depth: usize,
) -> NestedScan {
    let mut scan = NestedScan {
        found: Vec::new(),
        complete: true,
        unlisted: Vec::new(),
        bare: Vec::new(),
        root_unlisted: false,
        root_git_dir: false,
    };
    let mut seen = 0usize;
    // Each directory to look at, and whether to enter it: a package or build tree
    // ([`NESTED_SKIP`]) is not entered, but its own `.git` is looked up by name (breaker,
    // stop 21: `git init target && git add target` planted a gitlink whose config the
    // host's next `git status` at the root ran, and no note named it).
    let mut level = vec![(root.to_path_buf(), true)];
    for depth in 0..=max_depth {
        let mut next = Vec::new();
        for (d, enter) in level {
            // Another writable root (the workspace inside a wider `-w` grant) has its own
            // protected paths; its `.git` is not a nested one (its index must stay writable).
            if d != *root && all_roots.contains(&d) {
                continue;
            }
            let listing = if depth == max_depth || !enter {
                None
            } else {
                match fs.list_dir_typed(&d, NESTED_SCAN_CAP + 1 - seen) {
                    Some(names) => {
                        seen += names.len();
                        if seen > NESTED_SCAN_CAP {
                            scan.complete = false;
                            return scan;
                        }
                        Some(names)
                    }
                    None => {
                        // Not listable (`chmod 311`) or not searchable (`chmod 644`),
                        // possibly by an earlier run: what is below cannot be looked for
                        // (breakers, stops 20 and 21).
                        if d == *root {
                            scan.root_unlisted = true;
                        } else {
                            scan.unlisted.push(d.clone());
                        }
                        None
                    }
                }
            };
            // Above the deepest level a listing says whether there is a `.git` at all;
            // without one (deepest level, or not listable) `.git` is looked up by name.
            let has_git = listing
                .as_ref()
                .is_none_or(|names| names.iter().any(|(n, _)| n == ".git"));
            if d != *root && has_git {
                // `d` is reached through real directories only, so its path has no symlink
                // and one `entry` (an lstat) says what `.git` is: a symlink counts when it
                // leads somewhere, an empty placeholder directory of cordon's does not.
                let dotgit = d.join(".git");
                let found = match fs.entry(&dotgit) {
                    Some(Entry::Link(_)) => fs.kind(&dotgit).is_some(),
                    Some(Entry::Kind(FileKind::Dir)) => !is_placeholder(fs, &dotgit),
                    Some(Entry::Kind(FileKind::File)) => true,
                    None => {
                        // The listing names a `.git` that cannot be looked at (the
                        // directory lost its search permission, or it changed under the
                        // scan): what it is cannot be told, so `d` is unexamined.
                        if listing.is_some() && !scan.unlisted.contains(&d) {
                            scan.unlisted.push(d.clone());
                        }
                        false
                    }
                };
                if found {
                    scan.found.push(dotgit);
                }
            }
            // A git dir by its listing (no `stat`): a bare repository, whose hooks run
            // at the host's next push to it (breaker, stop 21). Not entered.
            // By name only, whatever each entry is (a symlinked `objects` or `refs` is
            // still a repository to git; breaker, stop 21), as `looks_like_git_dir`.
            let is_git_dir = listing.as_ref().is_some_and(|names| {
                crate::git::git_dir_names(|want| names.iter().any(|(n, _)| n == want))
            });
            if is_git_dir {
                // A root that is a git dir holds git's own files (`logs/` has `HEAD` and
                // `refs/`): nothing below it is a nested repository.
                if d == *root {
                    scan.root_git_dir = true;
                } else {
                    scan.bare.push(d.clone());
                }
                continue;
            }
            next.extend(
                listing
                    .into_iter()
                    .flatten()
                    .filter(|(n, dir)| *dir && n != ".git")
                    .map(|(n, _)| {
                        let enter = !NESTED_SKIP.iter().any(|s| n == *s);
                        (d.join(n), enter)
                    }),
            );
        }
        if next.is_empty() {
            return scan;
        }
        if depth + 1 == max_depth && next.iter().any(|(_, enter)| *enter) {
            // The next level is the last one looked at: its directories' `.git` is looked
            // up by name, what is below them is not (the note says so).
            scan.complete = false;
        }
        level = next;
    }
    scan
}

/// Other version-control systems whose per-repository files run code when their tool runs
/// on the host (attack pass 28: a writable `.hg/hgrc` gets `[hooks]`/`[extensions]` run by
/// the next `hg status`, a shell prompt's included): (the repository directory, the files
/// in it to protect, why). Protected where the repository directory exists in a writable
/// root, a placeholder when the file is missing.
const OTHER_VCS_CONFIGS: [(&str, &[&str], &str); 3] = [
    (
        ".hg",
        &[
            "hgrc",
            "hgrc-not-shared",
            "sharedpath",
            "requires",
            "store/requires",
        ],
        "Mercurial runs the hooks and extensions of a repository's hgrc (sharedpath names \
         another repository whose hgrc is read)",
    ),
    (
        ".sl",
        &["config", "sharedpath", "requires", "store/requires"],
        "Sapling runs the hooks and extensions of a repository's config",
    ),
    (
        ".jj",
        &["repo", "repo/store/git_target"],
        "Jujutsu reads repo/config.toml (aliases, pager, fix tools run code); a `repo` file \
         points at another repository",
    ),
];

/// Files of [`OTHER_VCS_CONFIGS`] whose mere presence changes what the tool does (an empty
/// `sharedpath` would make Mercurial look for the shared store at ""), or which every
/// repository has (`requires`: a `shared` requirement there makes `sharedpath` count —
/// attack pass 30, A5): protected when present, never given a placeholder.
const POINTER_FILES: [&str; 5] = [
    "sharedpath",
    "repo",
    "requires",
    "store/requires",
    "repo/store/git_target",
];

/// Protects [`OTHER_VCS_CONFIGS`] under `root`. Jujutsu's `.jj/repo` is a directory in the
/// main workspace (its `config.toml` protected) and a file naming the main repository in
/// other workspaces (protected itself).
fn protect_other_vcs(
    fs: &dyn FsView,
    prot: &dyn Fn(PathBuf, &str) -> ResolvedEntry,
    root: &Path,
    out: &mut Vec<ResolvedEntry>,
) {
    for (dir, files, why) in OTHER_VCS_CONFIGS {
        let d = root.join(dir);
        if fs.kind(&d) != Some(FileKind::Dir) || is_link(fs, &d) {
            continue;
        }
        for f in files {
            let p = d.join(f);
            let kind = fs.kind(&p);
            if dir == ".jj" && kind == Some(FileKind::Dir) && !is_link(fs, &p) {
                out.push(prot(p.join("config.toml"), why));
            } else if kind.is_some() || is_link(fs, &p) || !POINTER_FILES.contains(f) {
                out.push(prot(p, why));
            }
        }
    }
}

fn protected_for_root(
    fs: &dyn FsView,
    root: &Path,
    all_roots: &[PathBuf],
    profile_files: &[ProfileFile],
    homes: &[PathBuf],
    out: &mut Vec<ResolvedEntry>,
    notes: &mut Vec<String>,
) -> Result<(), ResolveError> {
    // One listing of the root answers both questions below and starts the nested scan.
    let scan = nested_git_entries(fs, root, all_roots);
    // A writable root cordon cannot list or search cannot be scanned for the repositories
    // inside it (breaker, stop 21: `chmod 311` of the project root by one run turned the
    // next run's scan off, silently). A root that does not exist yet is made by the run.
    if scan.root_unlisted && fs.kind(root) == Some(FileKind::Dir) {
        return Err(ResolveError::RootUnlistable {
            root: root.to_path_buf(),
        });
    }
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
    if scan.root_git_dir {
        // The root is itself a git dir (a bare repository as the workspace, `-w` of a git
        // dir, a submodule's git dir): what runs code in it is protected as in any `.git`
        // (breaker, stop 21).
        notes.push(format!(
            "{}: a git directory; its hooks, config and the other files git reads code \
             from stay read-only",
            root.display()
        ));
        protect_found_git_dir(fs, &prot, root, out);
    }
    protect_other_vcs(fs, &prot, root, out);
    // A root that does not exist yet — a grant cordon makes a directory for before the run
    // (`-w ../wt`) — gets cordon's own files and git's configs beneath it protected, but no
    // `.git` or `.cordon` placeholder: the directory is new and empty, and the placeholders
    // would make it "not empty" for what the grant is for (new-user pass nu19 N1: `git
    // worktree add ../wt` failed by every route once such grants became roots).
    // A root inside a git dir (`-w .git/hooks`, cordon's own advice after a hook write
    // was denied) is no project: a `.git` or `.cordon` there marks nothing git or cordon
    // would look for, so none is made (new-user pass nu63: empty `.git/hooks/.git/` and
    // `.git/hooks/.cordon/` were left behind).
    // Strictly below one: a `.git` root itself keeps them (git run inside it would find a
    // planted `.git/.git` before the git dir).
    let in_git_dir = root.parent().is_some_and(|parent| {
        parent
            .components()
            .any(|c| c.as_os_str() == std::ffi::OsStr::new(".git"))
    });
    if fs.kind(root).is_none() || in_git_dir {
        protect_profile_files(fs, &prot, root, profile_files, out);
        return Ok(());
    }
    let dotgit = root.join(".git");
    match fs.kind(&dotgit) {
        Some(FileKind::Dir)
            if is_link(fs, &dotgit) && !canonicalize_lenient(fs, &dotgit).starts_with(root) =>
        {
            // `.git` as a symlink to a git dir elsewhere (repo-tool layouts). Nothing proves
            // who made the link: an earlier confined run can plant `sub/.git -> <any
            // repository>/.git` and a later run in `sub` would get that repository's refs
            // and objects writable (breaker, stop 8). Unlike a linked worktree there is no
            // backlink outside the root to confirm it, so the target is never granted
            // from the link alone: it stays read-only unless the profile or `-w` names it,
            // and its code-running children are protected either way (R-P3).
            let target = canonicalize_lenient(fs, &dotgit);
            let what = match crate::git::external_git_dir(fs, &target, root, homes) {
                Ok(()) => "a git dir outside the workspace".to_string(),
                Err(why) => why,
            };
            notes.push(format!(
                "{}: a symlink to {} ({what}); a symlink inside a writable root may have \
                 been planted by an earlier run, so the link alone makes nothing writable — if \
                 the git dir is yours, grant it with `-w {}` (or a profile entry)",
                dotgit.display(),
                target.display(),
                target.display()
            ));
            protect_git_dir(fs, &prot, &dotgit, out);
        }
        Some(FileKind::Dir) if !is_placeholder(fs, &dotgit) => {
            protect_git_dir(fs, &prot, &dotgit, out)
        }
        Some(FileKind::File) => {
            out.push(prot(
                dotgit.clone(),
                "the .git file decides which git dir is used",
            ));
            match read_gitdir_file(fs, &dotgit) {
                Ok(gitdir) => match linked_worktree(fs, &gitdir, &dotgit, root, homes) {
                    Ok(common) => {
                        // The common dir as a whole (packed-refs.lock, gc.pid, refs and
                        // objects: every git operation of the worktree works and none
                        // loses data half-way), with its protected children as for any
                        // `.git`, and the worktree's own git dir (issue 7 item 6, R-P3).
                        protect_git_dir(fs, &prot, &common, out);
                        for dir in [common.clone(), gitdir.clone()] {
                            out.push(entry_for(
                                fs,
                                dir,
                                Access::Write,
                                EntryOrigin::GitWorktree {
                                    worktree: root.to_path_buf(),
                                },
                            ));
                        }
                        protect_admin_files(fs, &prot, &gitdir, out);
                    }
                    Err(_) if submodule_git_dir(fs, &gitdir, &dotgit, root).is_ok() => {
                        // A submodule's own git dir, writable as the work tree's own `.git`
                        // would be, with what runs code in it protected and `objects`/`refs`
                        // pinned (nu9 F20).
                        protect_found_git_dir(fs, &prot, &gitdir, out);
                        out.push(entry_for(
                            fs,
                            gitdir.clone(),
                            Access::Write,
                            EntryOrigin::GitWorktree {
                                worktree: root.to_path_buf(),
                            },
                        ));
                    }
                    Err(why) => {
                        notes.push(format!(
                            "{}: not a usable linked worktree or submodule ({why}; {}); its git \
                             dir is not made writable",
                            dotgit.display(),
                            submodule_git_dir(fs, &gitdir, &dotgit, root)
                                .err()
                                .unwrap_or_default()
                        ));
                        // Still the git dir git uses here (`--separate-git-dir`, a
                        // submodule): wherever it lies — inside this root, or in one a
                        // `-w` grants — what runs code in it stays protected (breaker,
                        // stop 21: `.gitstore/hooks` was writable, and cordon's own
                        // `-w <gitdir>` advice made a submodule's hooks writable).
                        // Whatever it holds now: the protected `.git` file names it, and
                        // a command can remove `HEAD` for one run to hide it from a check
                        // (breaker, stop 21).
                        if fs.kind(&gitdir) == Some(FileKind::Dir) {
                            protect_git_dir(fs, &prot, &gitdir, out);
                            protect_common_dir(fs, &prot, &gitdir, out);
                        }
                    }
                },
                Err(why) => notes.push(format!(
                    "{why}; it stays read-only and no git dir is made writable"
                )),
            }
        }
        // Missing, or cordon's placeholder for a missing one: read-only as a whole.
        _ => out.push(prot(dotgit, crate::gitconfig::MISSING_GIT_REASON)),
    }
    // `.cordon/` is a project marker: where the root has no repository, one the command
    // made would widen a later run's workspace (from a directory below), so even a missing
    // one is protected (a placeholder). A repository root is a project root already: there
    // only a `.cordon/` holding something is protected, and no empty placeholder is left
    // for `git clean -fd` to fail on (new user, stop 19: EBUSY on `.cordon/`).
    let dotcordon = root.join(".cordon");
    let repo_root = match fs.kind(&root.join(".git")) {
        Some(FileKind::Dir) => !is_placeholder(fs, &root.join(".git")),
        Some(_) => true,
        None => false,
    };
    let real_cordon = match fs.kind(&dotcordon) {
        Some(FileKind::Dir) => !is_placeholder(fs, &dotcordon) || is_link(fs, &dotcordon),
        Some(_) => true,
        None => false,
    };
    if !repo_root || real_cordon {
        out.push(prot(
            dotcordon,
            "cordon's project marker (it makes its directory a workspace root)",
        ));
    }
    protect_nested_projects(fs, root, scan, &prot, out, notes);
    protect_profile_files(fs, &prot, root, profile_files, out);
    Ok(())
}

/// cordon's own files ([`ProfileFile`]) in or through the writable root `root`, protected
/// where the kernel finds them (R-P3): `profile_files` are canonical already, each with the
/// symlinks on its spelled path, protected when the file or one of those links lies in
/// `root` (the links are bound onto themselves there, so the name cannot be pointed
/// elsewhere).
fn protect_profile_files(
    fs: &dyn FsView,
    prot: &dyn Fn(PathBuf, &str) -> ResolvedEntry,
    root: &Path,
    profile_files: &[ProfileFile],
    out: &mut Vec<ResolvedEntry>,
) {
    for (f, links, dir) in profile_files {
        if !f.starts_with(root) && !links.iter().any(|l| l.starts_with(root)) {
            continue;
        }
        // A missing file whose directory is missing too: protect the first missing
        // ancestor, so neither the directory nor the file can be created — but no higher
        // than cordon's own directory (`~/.config/cordon`): the placeholder step creates
        // the missing directories above it as ordinary ones, so protecting `~/.config`
        // itself would make every other tool's config read-only on the first run only.
        let mut p = f.clone();
        while let Some(parent) = p.parent() {
            if parent == root
                || fs.kind(parent).is_some()
                || p.file_name().is_some_and(|n| n == "cordon")
            {
                break;
            }
            p = parent.to_path_buf();
        }
        let ancestor = p != *f;
        // The session store is a directory (new-user pass nu11 H1, attack pass 26 F15: its
        // placeholder was an empty file, and every later `--session` failed).
        // So is cordon's state directory (named `cordon`, attack pass 34 E1).
        let sessions = p.ends_with("cordon/sessions")
            || p.file_name().is_some_and(|n| n == "cordon")
            || (*dir && p == *f);
        let mut e = prot(p, CONFIG_PROTECTION_REASON);
        // A missing directory above the file: its placeholder is a directory, so a later
        // run can still create the file's parents beneath it.
        e.is_dir |= ancestor || sessions;
        for l in links {
            if !e.links.contains(l) {
                e.links.push(l.clone());
            }
        }
        out.push(e);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::paths::MemFs;
    use crate::profile::{FsEntry, ProfileKind};

    /// The field-by-field reader takes what the derived writer wrote, in either mode, and
    /// refuses a shape that mixes them.
    #[test]
    fn resolved_filesystem_reads_back_what_it_wrote() {
        let r = resolve(
            &PermissionProfile::builtin("workspace-write").unwrap(),
            &ctx("/home/u/proj"),
            &fs(),
        )
        .unwrap();
        for fs in [r.filesystem.clone(), ResolvedFilesystem::Unrestricted] {
            let json = serde_json::to_string(&fs).unwrap();
            let back: ResolvedFilesystem = serde_json::from_str(&json).unwrap();
            assert_eq!(back, fs);
        }
        for bad in [
            r#"{"mode":"unrestricted","default":"read"}"#,
            r#"{"mode":"restricted","default":"read"}"#,
            r#"{"mode":"restricted","entries":[]}"#,
            r#"{"mode":"sideways"}"#,
            r#"{"default":"read","entries":[]}"#,
            r#"{"mode":"restricted","default":"read","entries":[],"extra":1}"#,
        ] {
            assert!(
                serde_json::from_str::<ResolvedFilesystem>(bad).is_err(),
                "{bad}"
            );
        }
        let ok: ResolvedFilesystem =
            serde_json::from_str(r#"{"entries":[],"default":"deny","mode":"restricted"}"#).unwrap();
        assert_eq!(
            ok,
            ResolvedFilesystem::Restricted {
                default: Access::Deny,
                entries: vec![]
            }
        );
    }

    proptest::proptest! {
        /// `layered` keys clean paths by their bytes: the same entries, in the same
        /// order, as the component-wise way (ties deny > write > read, shallow first).
        #[test]
        fn layered_by_bytes_is_layered_by_components(
            picks in proptest::collection::vec((0usize..9, 0u8..3), 0..40)
        ) {
            const PATHS: [&str; 9] =
                ["/", "/a", "/a/b", "/a/bc", "/ab", "/a/b/c", "/x", "/x/a", "/a/b/c/d"];
            let entries: Vec<ResolvedEntry> = picks
                .iter()
                .enumerate()
                .map(|(index, (p, a))| ResolvedEntry {
                    path: PATHS[*p].into(),
                    spelled: PATHS[*p].into(),
                    access: [Access::Read, Access::Write, Access::Deny][*a as usize],
                    exists: true,
                    is_dir: true,
                    origin: EntryOrigin::Profile {
                        index,
                        spelling: PATHS[*p].into(),
                        source: None,
                    },
                    links: vec![],
                })
                .collect();
            let fs = ResolvedFilesystem::Restricted { default: Access::Read, entries };
            let ResolvedFilesystem::Restricted { entries, .. } = &fs else { unreachable!() };
            let by_components = collapse(entries, |e| e.path.as_path(), |e| depth(&e.path));
            let by_bytes: Vec<*const ResolvedEntry> =
                fs.layered().into_iter().map(|e| e as *const _).collect();
            let want: Vec<*const ResolvedEntry> =
                by_components.into_iter().map(|e| e as *const _).collect();
            proptest::prop_assert_eq!(by_bytes, want);
        }
    }

    fn ctx(cwd: &str) -> ResolveContext {
        ResolveContext {
            cwd: cwd.into(),
            home: Some("/home/u".into()),
            tmpdir: None,
            profile_files: vec![],
            ..Default::default()
        }
    }

    /// The resolved access at `p`.
    fn access(r: &ResolvedProfile, fs: &MemFs, p: &str) -> Access {
        r.filesystem.access_for(fs, Path::new(p)).access
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
    /// New-user pass nu9: the refusal names the one case that applied and a fix that
    /// works (it listed five cases and advised an empty `.cordon/`, which is no marker).
    #[test]
    fn the_workspace_refusal_says_which_case_and_what_works() {
        let fs = MemFs::new()
            .dir("/home/u/scratch")
            .dir("/var/tmp")
            .dir("/srv/x");
        let homes = [PathBuf::from("/home/u")];
        let why = |ws: &str, marker| workspace_refusal(Path::new(ws), &homes, &fs, marker);
        let scratch = why("/home/u/scratch", false).unwrap();
        assert!(
            scratch.contains("under your home")
                && scratch.contains("touch .cordon/workspace")
                && !scratch.contains("temp directory"),
            "{scratch}"
        );
        assert!(why("/var/tmp", true)
            .unwrap()
            .contains("shared temp directory /var/tmp"));
        assert!(why("/home/u", true)
            .unwrap()
            .contains("your home directory"));
        assert!(why("/", true).unwrap().contains("root directory"));
        assert!(why("/srv/x", false).unwrap().contains("in a system tree"));
        // Twins: with a marker under the home, and a marker-less directory under a temp
        // tree, the workspace is allowed.
        assert_eq!(why("/home/u/scratch", true), None);
        assert_eq!(why("/var/tmp/proj", false), None);
    }

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
            // A repository root: no `.cordon` is protected until one holds something.
            ("/home/u/proj/.cordon/config.toml", Access::Write),
        ];
        for (path, want) in table {
            let got = r.filesystem.access_for(&fs, Path::new(path)).access;
            assert_eq!(got, want, "{path}");
        }
    }

    /// Project `W` with a marker planted in `W/sub` (`how`: a git dir with `HEAD`, a
    /// `gitdir:` file, or a non-empty `.cordon/`), `.env` files in both.
    fn nested(how: &str) -> MemFs {
        let fs = MemFs::new()
            .file("/home/u/W/.git/HEAD", "ref: refs/heads/main\n")
            .dir("/home/u/W/.git/hooks")
            .file("/home/u/W/.env", "TOKEN=1")
            .file("/home/u/W/secrets/key", "k")
            .file("/home/u/W/src/main.rs", "")
            .file("/home/u/W/sub/.env", "TOKEN=2")
            .dir("/tmp");
        match how {
            "git-dir" => fs.file("/home/u/W/sub/.git/HEAD", "ref: refs/heads/main\n"),
            "gitdir-file" => fs.file("/home/u/W/sub/.git", "gitdir: /home/u/W/.git\n"),
            "cordon-dir" => fs.file("/home/u/W/sub/.cordon/config.toml", ""),
            _ => unreachable!(),
        }
    }

    /// HIGH-6: a marker planted below the project makes the nested directory the
    /// workspace, but deny entries spelled on `:workspace` still hide the enclosing
    /// project's paths; the grant is not widened (only the nested workspace is writable),
    /// and the nested workspace's own protected paths stay.
    #[test]
    fn workspace_denies_cover_enclosing_project_roots() {
        let p = restricted(vec![
            FsEntry::new(":workspace", Access::Write),
            FsEntry::new(":workspace/.env", Access::Deny),
            FsEntry::new(":workspace/secrets", Access::Deny),
        ]);
        for how in ["git-dir", "gitdir-file", "cordon-dir"] {
            let fs = nested(how);
            let r = resolve(&p, &ctx("/home/u/W/sub"), &fs).unwrap();
            assert_eq!(r.workspace, PathBuf::from("/home/u/W/sub"), "{how}");
            let table = [
                ("/home/u/W/sub/.env", Access::Deny),
                ("/home/u/W/.env", Access::Deny),
                ("/home/u/W/secrets/key", Access::Deny),
                ("/home/u/W/sub/secrets/key", Access::Deny),
                ("/home/u/W/src/main.rs", Access::Read),
                ("/home/u/W/new-file", Access::Read),
                ("/home/u/W/sub/new-file", Access::Write),
                (
                    "/home/u/W/sub/.cordon/config.toml",
                    // A real `.cordon` is protected; in a repository root a missing one
                    // is not (no placeholder there).
                    if how == "cordon-dir" {
                        Access::Read
                    } else {
                        Access::Write
                    },
                ),
                ("/home/u/W/.git/hooks/pre-commit", Access::Read),
            ];
            for (path, want) in table {
                assert_eq!(access(&r, &fs, path), want, "{how}: {path}");
            }
            if how == "git-dir" {
                assert_eq!(access(&r, &fs, "/home/u/W/sub/.git/hooks/x"), Access::Read);
                assert_eq!(access(&r, &fs, "/home/u/W/sub/.git/index"), Access::Write);
            }
            assert!(
                r.notes.iter().any(|n| n.contains(
                    "deny entries on :workspace also applied to the enclosing project root \
                     /home/u/W"
                )),
                "{how}: {:?}",
                r.notes
            );
            // Only the nested workspace is a writable root.
            let roots: Vec<&Path> = r
                .filesystem
                .writable_roots()
                .iter()
                .map(|e| e.path.as_path())
                .collect();
            assert!(!roots.contains(&Path::new("/home/u/W")), "{how}: {roots:?}");
        }
    }

    /// The enclosing roots stop before a home directory (a home under git, e.g. dotfiles,
    /// is not a project) and `/`; without an enclosing marker nothing changes.
    #[test]
    fn enclosing_project_roots_stop_at_home() {
        let fs = nested("git-dir").file("/home/u/.git/HEAD", "ref: x\n");
        let homes = vec![PathBuf::from("/home/u")];
        assert_eq!(
            enclosing_project_roots(&fs, Path::new("/home/u/W/sub"), &homes),
            vec![PathBuf::from("/home/u/W")]
        );
        assert!(enclosing_project_roots(&fs, Path::new("/home/u/W"), &homes).is_empty());
        let fs = MemFs::new()
            .file("/.git/HEAD", "ref: x\n")
            .file("/srv/a/.git/HEAD", "ref: x\n")
            .file("/srv/a/b/.cordon/c", "")
            .dir("/srv/a/b/c/d");
        assert_eq!(
            enclosing_project_roots(&fs, Path::new("/srv/a/b/c/d"), &[]),
            vec![PathBuf::from("/srv/a/b"), PathBuf::from("/srv/a")]
        );
        let p = restricted(vec![
            FsEntry::new(":workspace", Access::Write),
            FsEntry::new(":workspace/.env", Access::Deny),
        ]);
        let fs = MemFs::new()
            .file("/home/u/.git/HEAD", "ref: x\n")
            .file("/home/u/.env", "")
            .file("/home/u/W/.git/HEAD", "ref: x\n")
            .dir("/tmp");
        let r = resolve(&p, &ctx("/home/u/W"), &fs).unwrap();
        assert_eq!(access(&r, &fs, "/home/u/W/.env"), Access::Deny);
        assert_eq!(access(&r, &fs, "/home/u/.env"), Access::Read);
        assert!(!r.notes.iter().any(|n| n.contains("enclosing project root")));
    }

    /// Attack pass 54 F6: an entry spelled on a shell variable cordon does not know is
    /// refused, naming what to write instead (it was a relative path that hid nothing).
    #[test]
    fn an_entry_on_an_unknown_shell_variable_is_refused() {
        let fs = fs();
        for spelling in [
            "$HOME/hs.txt",
            "${HOME}/x",
            "$UNSET/x",
            "${CARGO_HOME}/x",
            "~root/x",
        ] {
            let e = resolve(
                &restricted(vec![FsEntry::new(spelling, Access::Deny)]),
                &ctx("/home/u/proj"),
                &fs,
            )
            .unwrap_err();
            assert!(
                matches!(e, ResolveError::ShellVariable { .. }) && e.to_string().contains("~/"),
                "{spelling}: {e}"
            );
        }
    }

    /// Attack pass 53 F1: a doubled `/` after a symbolic root, `~` or a location variable
    /// is one `/`, as a shell reads `$HOME//x`: the entry stays under its root (a deny
    /// hid `/x` instead, a write granted `/x`).
    #[test]
    fn a_doubled_slash_after_a_root_stays_under_it() {
        let fs = fs()
            .dir("/src")
            .dir("/.ssh")
            .dir("/home/u/.cargo")
            .dir("/cargo-x");
        let mut c = ctx("/home/u/proj");
        c.env
            .insert("CARGO_HOME".to_string(), "/home/u/.cargo".to_string());
        for (spelling, access, at, not_at) in [
            (":workspace//src", Access::Deny, "/home/u/proj/src", "/src"),
            (
                ":workspace///src/",
                Access::Deny,
                "/home/u/proj/src",
                "/src",
            ),
            ("~//.ssh", Access::Deny, "/home/u/.ssh", "/.ssh"),
            (":home//.ssh", Access::Deny, "/home/u/.ssh", "/.ssh"),
            (":root//.ssh", Access::Deny, "/.ssh", "/home/u/.ssh"),
            ("$CARGO_HOME//x", Access::Write, "/home/u/.cargo/x", "/x"),
            (
                ":workspace//cargo-x",
                Access::Write,
                "/home/u/proj/cargo-x",
                "/cargo-x",
            ),
        ] {
            let r = resolve(&restricted(vec![FsEntry::new(spelling, access)]), &c, &fs).unwrap();
            let paths: Vec<&Path> = r
                .filesystem
                .layered()
                .into_iter()
                .filter(|e| e.access == access)
                .map(|e| e.path.as_path())
                .collect();
            assert!(paths.contains(&Path::new(at)), "{spelling}: {paths:?}");
            assert!(!paths.contains(&Path::new(not_at)), "{spelling}: {paths:?}");
        }
    }

    #[test]
    fn workspace_is_the_project_root_not_the_cwd() {
        let fs = fs();
        let r = resolve(&restricted(vec![]), &ctx("/home/u/proj/src/deep"), &fs).unwrap();
        assert_eq!(r.workspace, PathBuf::from("/home/u/proj"));
        assert_eq!(r.cwd, PathBuf::from("/home/u/proj/src/deep"));
    }

    /// Breaker (stop 19): files planted by one run pushed an existing submodule's `sm/.git`
    /// past the scan's cap, and the next run left it writable. Submodules `.gitmodules`
    /// names are protected wherever they are; the cap leaves a note (printed by `run`).
    #[test]
    fn submodules_are_protected_beyond_the_scan_cap() {
        let mut fs = fs()
            .file("/home/u/proj/.git/HEAD", "ref: refs/heads/main\n")
            .file(
                "/home/u/proj/.gitmodules",
                "[submodule \"sm\"]\n\tpath = zz/sm\n[submodule \"out\"]\n\tpath = ../../etc\n",
            )
            .file("/home/u/proj/zz/sm/.git", "gitdir: ../../.git/modules/sm\n");
        for i in 0..(NESTED_SCAN_CAP + 10) {
            fs = fs.file(&format!("/home/u/proj/build/f{i}"), "");
        }
        let p = PermissionProfile::builtin("workspace-write").unwrap();
        let r = resolve(&p, &ctx("/home/u/proj"), &fs).unwrap();
        let at = |q: &str| r.filesystem.access_for(&fs, Path::new(q)).access;
        assert_eq!(at("/home/u/proj/zz/sm/.git"), Access::Read);
        assert_eq!(at("/home/u/proj/zz/sm/src.c"), Access::Write);
        assert!(
            r.notes
                .iter()
                .any(|n| n.contains("looked for nested repositories")),
            "{:?}",
            r.notes
        );
    }

    /// Attack pass 27, G6: `~/.gitconfig` a dangling symlink into the workspace (a dotfiles
    /// repository before the file exists): the file git would read there is protected (a
    /// placeholder), not only the spelled link. Twin: the repository's other files stay
    /// writable.
    #[test]
    fn a_global_config_reached_through_a_dangling_link_is_protected() {
        let fs = MemFs::new()
            .dir("/home/u/dot/.git/hooks")
            .file("/home/u/dot/.git/HEAD", "ref: refs/heads/main\n")
            .symlink("/home/u/.gitconfig", "dot/gitconfig")
            .dir("/tmp");
        let p = PermissionProfile::builtin("workspace-write").unwrap();
        let r = resolve(&p, &ctx("/home/u/dot"), &fs).unwrap();
        assert_eq!(access(&r, &fs, "/home/u/dot/gitconfig"), Access::Read);
        assert_eq!(access(&r, &fs, "/home/u/dot/other"), Access::Write);
    }

    /// Attack pass 26, F2: the same with `.gitmodules` emptied by an earlier run (a
    /// work-tree file): the submodule git keeps in `.git/modules/<name>` is found by its own
    /// `core.worktree` (also a name with `/`), and stays protected beyond the cap. Twin: a
    /// module whose `core.worktree` leads outside the project names nothing there.
    #[test]
    fn submodules_git_keeps_are_protected_without_gitmodules() {
        let mut fs = fs()
            .file("/home/u/proj/.git/HEAD", "ref: refs/heads/main\n")
            .file("/home/u/proj/.gitmodules", "")
            .dir("/home/u/proj/.git/modules/a/b/objects")
            .dir("/home/u/proj/.git/modules/a/b/refs")
            .file(
                "/home/u/proj/.git/modules/a/b/HEAD",
                "ref: refs/heads/main\n",
            )
            .file(
                "/home/u/proj/.git/modules/a/b/config",
                "[core]\n\tworktree = ../../../../zz/sm\n",
            )
            .dir("/home/u/proj/.git/modules/out/objects")
            .dir("/home/u/proj/.git/modules/out/refs")
            .file(
                "/home/u/proj/.git/modules/out/HEAD",
                "ref: refs/heads/main\n",
            )
            .file(
                "/home/u/proj/.git/modules/out/config",
                "[core]\n\tworktree = /etc\n",
            )
            .file(
                "/home/u/proj/zz/sm/.git",
                "gitdir: ../../.git/modules/a/b\n",
            );
        for i in 0..(NESTED_SCAN_CAP + 10) {
            fs = fs.dir(&format!("/home/u/proj/build/d{i}"));
        }
        assert_eq!(
            crate::gitconfig::submodule_paths(&fs, Path::new("/home/u/proj")),
            [PathBuf::from("/home/u/proj/zz/sm")]
        );
        let p = PermissionProfile::builtin("workspace-write").unwrap();
        let r = resolve(&p, &ctx("/home/u/proj"), &fs).unwrap();
        let at = |q: &str| r.filesystem.access_for(&fs, Path::new(q)).access;
        assert_eq!(at("/home/u/proj/zz/sm/.git"), Access::Read);
        assert_eq!(at("/home/u/proj/zz/sm/src.c"), Access::Write);
        // G8 (attack pass 27): a linked worktree keeps its submodules' git dirs under its
        // own git dir, which its `.git` file names.
        let fs = MemFs::new()
            .file(
                "/home/u/wt/.git",
                "gitdir: /home/u/proj/.git/worktrees/wt\n",
            )
            .dir("/home/u/proj/.git/worktrees/wt/modules/sm/objects")
            .dir("/home/u/proj/.git/worktrees/wt/modules/sm/refs")
            .file(
                "/home/u/proj/.git/worktrees/wt/modules/sm/HEAD",
                "ref: refs/heads/m\n",
            )
            .file(
                "/home/u/proj/.git/worktrees/wt/modules/sm/config",
                "[core]\n\tworktree = ../../../../../../wt/sm\n",
            );
        assert_eq!(
            crate::gitconfig::submodule_paths(&fs, Path::new("/home/u/wt")),
            [PathBuf::from("/home/u/wt/sm")]
        );
    }

    /// The workspace inside a wider writable root (`-w /data/w` holding the project) is
    /// not a nested repository of that root: its `.git` index stays writable (git commit
    /// works), its hooks protected as the workspace's.
    #[test]
    fn the_workspace_inside_a_wider_root_is_not_nested() {
        let fs = MemFs::new()
            .dir("/data/w/proj/.git/hooks")
            .file("/data/w/proj/.git/HEAD", "ref: refs/heads/main\n")
            .file("/data/w/other/.git/HEAD", "ref: refs/heads/main\n")
            .dir("/tmp");
        let p = restricted(vec![
            FsEntry::new(":workspace", Access::Write),
            FsEntry::new("/data/w", Access::Write),
        ]);
        let r = resolve(&p, &ctx("/data/w/proj"), &fs).unwrap();
        let at = |q: &str| r.filesystem.access_for(&fs, Path::new(q)).access;
        assert_eq!(at("/data/w/proj/.git/index"), Access::Write);
        assert_eq!(at("/data/w/proj/.git/hooks/x"), Access::Read);
        assert_eq!(at("/data/w/other/.git/config"), Access::Read);
    }

    /// Attack pass 26, F11 (and F10's variants): pre-commit installed with `-c FILE` runs
    /// the config its hook names: missing, it is kept absent (the sweep removes one a
    /// command makes; no placeholder: attack pass 214 #4), present, protected; lefthook's
    /// json/toml and local variants are protected when present. Twin: another yaml file in
    /// the tree stays writable.
    #[test]
    fn hook_managers_named_configs_are_protected() {
        let hook = "#!/usr/bin/env bash\n# File generated by pre-commit: https://pre-commit.com\n\
                    INSTALL_PYTHON=/usr/bin/python3\n\
                    ARGS=(hook-impl --config=ci/pre-commit.yaml --hook-type=pre-commit)\n";
        let fs = fs()
            .file("/home/u/proj/.git/HEAD", "ref: refs/heads/main\n")
            .file("/home/u/proj/.git/hooks/pre-commit", hook)
            .file(
                "/home/u/proj/.git/hooks/commit-msg",
                "#!/bin/sh\n# lefthook\n",
            )
            .file("/home/u/proj/lefthook-local.toml", "")
            .file("/home/u/proj/ci/other.yaml", "");
        let p = PermissionProfile::builtin("workspace-write").unwrap();
        let r = resolve(&p, &ctx("/home/u/proj"), &fs).unwrap();
        let e = |q: &str| {
            let a = r.filesystem.access_for(&fs, Path::new(q));
            (
                a.access,
                a.entry.map(|i| match &r.filesystem {
                    ResolvedFilesystem::Restricted { entries, .. } => entries[i].exists,
                    _ => true,
                }),
            )
        };
        assert_eq!(e("/home/u/proj/ci/pre-commit.yaml").0, Access::Write);
        let root = Path::new("/home/u/proj");
        let kept = hook_configs_kept_absent(&fs, root, &root.join(".git"));
        assert!(
            kept.contains(&(root.join("ci/pre-commit.yaml"), "pre-commit")),
            "{kept:?}"
        );
        let present = fs
            .clone()
            .file("/home/u/proj/ci/pre-commit.yaml", "repos: []\n");
        let r2 = resolve(&p, &ctx("/home/u/proj"), &present).unwrap();
        assert_eq!(
            r2.filesystem
                .access_for(&present, Path::new("/home/u/proj/ci/pre-commit.yaml"))
                .access,
            Access::Read
        );
        assert!(
            !hook_configs_kept_absent(&present, root, &root.join(".git"))
                .iter()
                .any(|(p, _)| p.ends_with("ci/pre-commit.yaml"))
        );
        assert_eq!(e("/home/u/proj/lefthook-local.toml").0, Access::Read);
        assert_eq!(e("/home/u/proj/ci/other.yaml").0, Access::Write);
        assert_eq!(
            pre_commit_configs(
                "ARGS=(hook-impl --config \"a b.yaml\" --hook-type=x)\nARGS=(--config=c.yml)"
            ),
            ["a b.yaml", "c.yml"]
        );
    }

    /// Breaker (stop 19): what protected hooks run is protected too — a hook symlinked into
    /// the work tree (its target), husky v9's hook bodies next to `.husky/_`, and the
    /// config files of pre-commit and lefthook when their generated hooks are installed.
    /// Other work-tree files stay writable (twin).
    #[test]
    fn hook_delegates_are_protected() {
        let fs = fs()
            .file("/home/u/proj/.git/HEAD", "ref: refs/heads/main\n")
            .file("/home/u/proj/scripts/pre-commit.sh", "#!/bin/sh\n")
            .symlink(
                "/home/u/proj/.git/hooks/pre-commit",
                "/home/u/proj/scripts/pre-commit.sh",
            )
            .file(
                "/home/u/proj/.git/hooks/pre-push",
                "#!/usr/bin/env bash\n# File generated by pre-commit: https://pre-commit.com\n",
            )
            .file("/home/u/proj/.pre-commit-config.yaml", "repos: []\n")
            .file("/home/u/proj/scripts/other.sh", "")
            .symlink(
                "/home/u/proj/.git/hooks/post-commit",
                "/home/u/proj/scripts/notyet.sh",
            )
            .file("/home/u/proj/lefthook.yml", "");
        let p = PermissionProfile::builtin("workspace-write").unwrap();
        let r = resolve(&p, &ctx("/home/u/proj"), &fs).unwrap();
        let at = |q: &str| r.filesystem.access_for(&fs, Path::new(q)).access;
        assert_eq!(at("/home/u/proj/scripts/pre-commit.sh"), Access::Read);
        assert_eq!(at("/home/u/proj/scripts/notyet.sh"), Access::Read);
        assert_eq!(at("/home/u/proj/.pre-commit-config.yaml"), Access::Read);
        assert_eq!(at("/home/u/proj/scripts/other.sh"), Access::Write);
        // No lefthook hook installed: its config is protected all the same, since the hook
        // can be installed while a command runs (attack pass 28, F3).
        assert_eq!(at("/home/u/proj/lefthook.yml"), Access::Read);
        // husky v9.
        let fs = fs
            .file(
                "/home/u/proj/.git/config",
                "[core]\n\thooksPath = .husky/_\n",
            )
            .file("/home/u/proj/.husky/_/h", "#!/usr/bin/env sh\n")
            .file("/home/u/proj/.husky/pre-commit", "npm test\n");
        let r = resolve(&p, &ctx("/home/u/proj"), &fs).unwrap();
        let at = |q: &str| r.filesystem.access_for(&fs, Path::new(q)).access;
        assert_eq!(at("/home/u/proj/.husky/pre-commit"), Access::Read);
        assert_eq!(at("/home/u/proj/src/x.rs"), Access::Write);
    }

    /// Attack pass 212 #3: the hook managers' configs stay read-only in every writable
    /// root whenever they exist (README), a workspace marked only by `.cordon/` — no
    /// repository — and an extra `-w` directory included; twin: a plain file beside them
    /// stays writable.
    #[test]
    fn hook_manager_configs_are_protected_without_a_repository() {
        let fs = fs()
            .file("/home/u/proj/.cordon/workspace", "")
            .file("/home/u/proj/.pre-commit-config.yaml", "repos: []\n")
            .file("/home/u/proj/lefthook.yml", "")
            .file("/home/u/proj/.config/lefthook-local.toml", "")
            .file("/home/u/proj/notes.txt", "");
        let p = PermissionProfile::builtin("workspace-write").unwrap();
        let r = resolve(&p, &ctx("/home/u/proj"), &fs).unwrap();
        let at = |q: &str| r.filesystem.access_for(&fs, Path::new(q)).access;
        assert_eq!(at("/home/u/proj/.pre-commit-config.yaml"), Access::Read);
        assert_eq!(at("/home/u/proj/lefthook.yml"), Access::Read);
        assert_eq!(at("/home/u/proj/.config/lefthook-local.toml"), Access::Read);
        assert_eq!(at("/home/u/proj/notes.txt"), Access::Write);
        // Missing names get no placeholder (nothing to keep absent without a repository).
        assert_eq!(at("/home/u/proj/lefthook-local.yml"), Access::Write);
    }

    /// Attack pass 45, M6: the repository git uses in the workspace is read for code paths
    /// in every layout — an enclosing one (a `.cordon` workspace inside a repository), a
    /// `--separate-git-dir` work tree, a submodule checkout — so its `core.hooksPath` and
    /// `include.path` targets in the workspace stay read-only. Twin: the rest of the
    /// workspace stays writable.
    #[test]
    fn the_repository_git_uses_in_the_workspace_is_read_in_every_layout() {
        let p = PermissionProfile::builtin("workspace-write").unwrap();
        let cfg = "[core]\n\thooksPath = HOOKS\n[include]\n\tpath = INC\n";
        let cases = [
            // Enclosing repository; `pkg` is a `.cordon` workspace.
            (
                fs().file("/srv2/r/.git/HEAD", "ref: refs/heads/main\n")
                    .dir("/srv2/r/.git/objects")
                    .file(
                        "/srv2/r/.git/config",
                        &cfg.replace("HOOKS", "pkg/githooks")
                            .replace("INC", "../pkg/team.gitconfig"),
                    )
                    .file("/srv2/r/pkg/.cordon/marker", "")
                    .file("/srv2/r/pkg/githooks/pre-commit", "")
                    .file("/srv2/r/pkg/team.gitconfig", ""),
                "/srv2/r/pkg",
            ),
            // `git init --separate-git-dir=/srv2/s.git /srv2/s`.
            (
                fs().file("/srv2/s/.git", "gitdir: /srv2/s.git\n")
                    .file("/srv2/s.git/HEAD", "ref: refs/heads/main\n")
                    .dir("/srv2/s.git/objects")
                    .file(
                        "/srv2/s.git/config",
                        &cfg.replace("HOOKS", "githooks")
                            .replace("INC", "../s/team.gitconfig"),
                    )
                    .file("/srv2/s/githooks/pre-commit", "")
                    .file("/srv2/s/team.gitconfig", ""),
                "/srv2/s",
            ),
            // A submodule's checkout.
            (
                fs().file("/srv2/sup/.git/HEAD", "ref: refs/heads/main\n")
                    .file("/srv2/sup/sub/.git", "gitdir: ../.git/modules/sub\n")
                    .file("/srv2/sup/.git/modules/sub/HEAD", "ref: refs/heads/main\n")
                    .dir("/srv2/sup/.git/modules/sub/objects")
                    .file(
                        "/srv2/sup/.git/modules/sub/config",
                        &cfg.replace("HOOKS", "githooks")
                            .replace("INC", "../../../sub/team.gitconfig"),
                    )
                    .file("/srv2/sup/sub/githooks/pre-commit", "")
                    .file("/srv2/sup/sub/team.gitconfig", ""),
                "/srv2/sup/sub",
            ),
        ];
        for (fs, ws) in cases {
            let r = resolve(&p, &ctx(ws), &fs).unwrap();
            assert_eq!(r.workspace, Path::new(ws));
            let at = |q: &str| r.filesystem.access_for(&fs, &Path::new(ws).join(q)).access;
            assert_eq!(at("githooks/pre-commit"), Access::Read, "{ws}");
            assert_eq!(at("team.gitconfig"), Access::Read, "{ws}");
            assert_eq!(at("src/x.rs"), Access::Write, "{ws}");
        }
    }

    /// attack28: other version-control systems' per-repository config is protected where
    /// the repository exists (`.hg/hgrc` even when missing: a placeholder), pointer files
    /// only when present; a Jujutsu workspace's `.jj/repo` directory gets its
    /// `config.toml` protected. Twin: without the repository nothing is added, and the
    /// work tree stays writable.
    #[test]
    fn other_vcs_configs_are_protected() {
        let p = PermissionProfile::builtin("workspace-write").unwrap();
        let fs = fs()
            .file("/home/u/proj/.git/HEAD", "ref: refs/heads/main\n")
            .file("/home/u/proj/.hg/requires", "store\n")
            .file("/home/u/proj/.jj/repo/store/type", "git\n");
        let r = resolve(&p, &ctx("/home/u/proj"), &fs).unwrap();
        let at = |q: &str| r.filesystem.access_for(&fs, Path::new(q)).access;
        assert_eq!(at("/home/u/proj/.hg/hgrc"), Access::Read);
        assert_eq!(at("/home/u/proj/.hg/hgrc-not-shared"), Access::Read);
        assert_eq!(at("/home/u/proj/.jj/repo/config.toml"), Access::Read);
        let listed = |q: &str| {
            r.filesystem
                .protected()
                .iter()
                .any(|e| e.path == Path::new(q))
        };
        assert!(
            !listed("/home/u/proj/.hg/sharedpath"),
            "no placeholder for a pointer"
        );
        assert_eq!(at("/home/u/proj/.hg/store/x"), Access::Write);
        assert_eq!(at("/home/u/proj/src/x.rs"), Access::Write);
        let fs = fs
            .file("/home/u/proj/.hg/sharedpath", "/elsewhere/.hg\n")
            .file("/home/u/proj/.hg/store/requires", "share-safe\n");
        let r = resolve(&p, &ctx("/home/u/proj"), &fs).unwrap();
        // attack30 A5: `requires` (a `shared` requirement makes sharedpath count) too.
        for q in [".hg/sharedpath", ".hg/requires", ".hg/store/requires"] {
            assert_eq!(
                r.filesystem
                    .access_for(&fs, &Path::new("/home/u/proj").join(q))
                    .access,
                Access::Read,
                "{q}"
            );
        }
        let fs = super::tests::fs().file("/home/u/proj/.git/HEAD", "ref: refs/heads/main\n");
        let r = resolve(&p, &ctx("/home/u/proj"), &fs).unwrap();
        assert!(!r
            .filesystem
            .protected()
            .iter()
            .any(|e| e.path.starts_with("/home/u/proj/.hg")));
    }

    /// attack29 F1 / attack30 A1: where lefthook is in use (a config exists), every name
    /// lefthook 2.x reads and that is missing must stay absent, `.jsonc` and the
    /// `.config/…-local` overrides included. Twin: no manager in use, nothing listed.
    #[test]
    fn hook_configs_kept_absent_cover_every_lefthook_name() {
        let fs = fs()
            .file("/home/u/proj/.git/HEAD", "ref: refs/heads/main\n")
            .file("/home/u/proj/lefthook.yml", "pre-commit: {}\n");
        let root = Path::new("/home/u/proj");
        let kept = hook_configs_kept_absent(&fs, root, &root.join(".git"));
        let has = |n: &str| {
            kept.iter()
                .any(|(p, t)| p == &root.join(n) && *t == "lefthook")
        };
        for n in [
            "lefthook-local.yml",
            "lefthook-local.jsonc",
            ".config/lefthook-local.yml",
            ".lefthook-local.toml",
            ".lefthook",
        ] {
            assert!(has(n), "{n}: {kept:?}");
        }
        assert!(!has("lefthook.yml"), "present: protected, not kept absent");
        assert!(!kept.iter().any(|(_, t)| *t == "pre-commit"), "{kept:?}");
        let fs = super::tests::fs().file("/home/u/proj/.git/HEAD", "ref: refs/heads/main\n");
        assert!(hook_configs_kept_absent(&fs, root, &root.join(".git")).is_empty());
    }

    /// Attack pass 214 #4: a stock pre-commit hook (`--config=.pre-commit-config.yaml`)
    /// with the config missing: no protected entry (no placeholder on the host), the name
    /// is kept absent for the sweep — and so is a missing `lefthook-local.yml` a hook
    /// symlink points at where lefthook is in use: never both a placeholder and swept.
    /// Twins: an existing config stays read-only; a dangling hook link to a name no sweep
    /// removes keeps its placeholder.
    #[test]
    fn a_hook_named_missing_config_gets_no_placeholder_but_is_kept_absent() {
        let hook = "#!/usr/bin/env bash\n# File generated by pre-commit: https://pre-commit.com\n\
                    INSTALL_PYTHON=/usr/bin/python3\n\
                    ARGS=(hook-impl --config=.pre-commit-config.yaml --hook-type=pre-commit)\n";
        let root = Path::new("/home/u/proj");
        let base = fs()
            .file("/home/u/proj/.git/HEAD", "ref: refs/heads/main\n")
            .file("/home/u/proj/.git/hooks/pre-commit", hook);
        let p = PermissionProfile::builtin("workspace-write").unwrap();
        let protected = |fs: &MemFs, q: &str| {
            let r = resolve(&p, &ctx("/home/u/proj"), fs).unwrap();
            r.filesystem
                .protected()
                .iter()
                .find(|e| e.path == Path::new(q))
                .map(|e| e.exists)
        };
        let cfg = "/home/u/proj/.pre-commit-config.yaml";
        assert_eq!(protected(&base, cfg), None);
        let kept = hook_configs_kept_absent(&base, root, &root.join(".git"));
        assert_eq!(
            kept.iter().filter(|(p, _)| p == Path::new(cfg)).count(),
            1,
            "{kept:?}"
        );
        // Present: read-only, not kept absent.
        let present = base.clone().file(cfg, "repos: []\n");
        assert_eq!(protected(&present, cfg), Some(true));
        assert!(hook_configs_kept_absent(&present, root, &root.join(".git")).is_empty());
        // A hook linked to a missing name lefthook reads, lefthook in use: swept, no
        // placeholder.
        let linked = fs()
            .file("/home/u/proj/.git/HEAD", "ref: refs/heads/main\n")
            .file("/home/u/proj/lefthook.yml", "pre-commit: {}\n")
            .symlink(
                "/home/u/proj/.git/hooks/post-merge",
                "../../lefthook-local.yml",
            )
            .symlink("/home/u/proj/.git/hooks/pre-push", "../../scripts/push.sh");
        let local = "/home/u/proj/lefthook-local.yml";
        assert_eq!(protected(&linked, local), None);
        assert!(hook_configs_kept_absent(&linked, root, &root.join(".git"))
            .iter()
            .any(|(p, _)| p == Path::new(local)));
        // Twin: a missing target no sweep removes keeps its placeholder.
        assert_eq!(
            protected(&linked, "/home/u/proj/scripts/push.sh"),
            Some(false)
        );
    }

    /// A view where some directories are enterable but not listable (`chmod 311`).
    struct Unlistable<'a>(&'a MemFs, &'a [&'a str]);
    impl FsView for Unlistable<'_> {
        fn canonicalize(&self, p: &Path) -> Option<PathBuf> {
            self.0.canonicalize(p)
        }
        fn kind(&self, p: &Path) -> Option<FileKind> {
            self.0.kind(p)
        }
        fn read_to_string(&self, p: &Path) -> Option<String> {
            self.0.read_to_string(p)
        }
        fn read_link(&self, p: &Path) -> Option<PathBuf> {
            self.0.read_link(p)
        }
        fn list_dir(&self, p: &Path, cap: usize) -> Vec<std::ffi::OsString> {
            self.0.list_dir(p, cap)
        }
        fn list_dir_typed(&self, p: &Path, cap: usize) -> Option<Vec<(std::ffi::OsString, bool)>> {
            if self.1.iter().any(|u| p == Path::new(u)) {
                return None;
            }
            self.0.list_dir_typed(p, cap)
        }
    }

    /// Breaker (stop 20): a directory an earlier run made unlistable (`chmod 311`) hid the
    /// nested repositories in and below it from the scan. Its own `.git` is looked up by
    /// name, and the directory is read-only as a whole (with a note), since what is below
    /// it could not be looked for; a listable sibling stays writable (twin).
    #[test]
    fn unlistable_directories_hide_no_repository() {
        let mem = fs()
            .file("/home/u/proj/.git/HEAD", "ref: refs/heads/main\n")
            .file(
                "/home/u/proj/vendor/lib/.git/HEAD",
                "ref: refs/heads/main\n",
            )
            .file(
                "/home/u/proj/vendor/lib/deep/x/.git/HEAD",
                "ref: refs/heads/main\n",
            )
            .file("/home/u/proj/open/src.rs", "");
        let view = Unlistable(&mem, &["/home/u/proj/vendor/lib"]);
        let p = PermissionProfile::builtin("workspace-write").unwrap();
        let r = resolve(&p, &ctx("/home/u/proj"), &view).unwrap();
        let at = |q: &str| r.filesystem.access_for(&mem, Path::new(q)).access;
        assert_eq!(at("/home/u/proj/vendor/lib/.git/config"), Access::Read);
        assert_eq!(
            at("/home/u/proj/vendor/lib/deep/x/.git/config"),
            Access::Read
        );
        assert_eq!(at("/home/u/proj/vendor/lib/anything"), Access::Read);
        assert_eq!(at("/home/u/proj/open/src.rs"), Access::Write);
        assert_eq!(at("/home/u/proj/vendor/other"), Access::Write);
        assert!(
            r.notes
                .iter()
                .any(|n| n.contains("vendor/lib: cannot be listed")),
            "{:?}",
            r.notes
        );
        // One level up: nothing below `vendor` was listed; `vendor` is read-only.
        let view = Unlistable(&mem, &["/home/u/proj/vendor"]);
        let r = resolve(&p, &ctx("/home/u/proj"), &view).unwrap();
        let at = |q: &str| r.filesystem.access_for(&mem, Path::new(q)).access;
        assert_eq!(at("/home/u/proj/vendor/lib/.git/config"), Access::Read);
        assert_eq!(at("/home/u/proj/open/src.rs"), Access::Write);
    }

    /// A view where some directories can be listed but not searched (`chmod 644`): the
    /// listing names their entries, but nothing below them can be looked at.
    struct Unsearchable<'a>(&'a MemFs, &'a str);
    impl Unsearchable<'_> {
        fn hidden(&self, p: &Path) -> bool {
            p.starts_with(self.1) && p != Path::new(self.1)
        }
    }
    impl FsView for Unsearchable<'_> {
        fn canonicalize(&self, p: &Path) -> Option<PathBuf> {
            self.0.canonicalize(p)
        }
        fn kind(&self, p: &Path) -> Option<FileKind> {
            (!self.hidden(p)).then(|| self.0.kind(p)).flatten()
        }
        fn read_to_string(&self, p: &Path) -> Option<String> {
            (!self.hidden(p))
                .then(|| self.0.read_to_string(p))
                .flatten()
        }
        fn read_link(&self, p: &Path) -> Option<PathBuf> {
            (!self.hidden(p)).then(|| self.0.read_link(p)).flatten()
        }
        fn list_dir(&self, p: &Path, cap: usize) -> Vec<std::ffi::OsString> {
            if self.hidden(p) {
                return Vec::new();
            }
            self.0.list_dir(p, cap)
        }
    }

    /// Breaker (stop 21): a directory made readable but not searchable (`chmod 644`) by
    /// an earlier run listed its `.git`, whose lookup then failed and was taken for "no
    /// repository"; the command (which owns it) chmod'ed it back and wrote the nested
    /// repository's hooks. A `.git` that is listed but cannot be looked at makes the
    /// directory unexamined: read-only as a whole, with the note.
    #[test]
    fn unsearchable_directories_hide_no_repository() {
        let mem = fs()
            .file("/home/u/proj/.git/HEAD", "ref: refs/heads/main\n")
            .file("/home/u/proj/v3/.git/HEAD", "ref: refs/heads/main\n")
            .file("/home/u/proj/open/src.rs", "");
        let view = Unsearchable(&mem, "/home/u/proj/v3");
        let p = PermissionProfile::builtin("workspace-write").unwrap();
        let r = resolve(&p, &ctx("/home/u/proj"), &view).unwrap();
        let at = |q: &str| r.filesystem.access_for(&mem, Path::new(q)).access;
        assert_eq!(at("/home/u/proj/v3/.git/hooks/pre-commit"), Access::Read);
        assert_eq!(at("/home/u/proj/v3/other"), Access::Read);
        assert_eq!(at("/home/u/proj/open/src.rs"), Access::Write);
        assert!(
            r.notes
                .iter()
                .any(|n| n.contains("v3: cannot be listed or searched")),
            "{:?}",
            r.notes
        );
    }

    /// Breaker (stop 19): nested repositories' `.git` (directory or `gitdir:` file) are
    /// protected as a whole within the scan's bounds; package trees are not entered, a
    /// symlinked nested `.git` is named in a note, a directory symlink is not followed,
    /// and a tree deeper than the bound keeps its nested `.git` writable, with a note
    /// (documented). Breaker (stop 21): a repository six levels down (past the old bound)
    /// and one at the top of a package tree (`target/.git`) are found.
    #[test]
    fn nested_repositories_are_protected_within_the_scan_bounds() {
        let deep: String = (0..NESTED_SCAN_DEPTH).map(|i| format!("/d{i}")).collect();
        let fs = fs()
            .file("/home/u/proj/.git/HEAD", "ref: refs/heads/main\n")
            .file("/home/u/proj/vendor/a/.git/HEAD", "ref: refs/heads/main\n")
            .file("/home/u/proj/sm/.git", "gitdir: ../.git/modules/sm\n")
            .file(
                "/home/u/proj/node_modules/pkg/.git/HEAD",
                "ref: refs/heads/main\n",
            )
            .file("/home/u/proj/target/.git/HEAD", "ref: refs/heads/main\n")
            .dir("/data/other/.git")
            .symlink("/home/u/proj/out", "/data/other")
            .symlink("/home/u/proj/ln/.git", "/data/other/.git")
            .file(
                "/home/u/proj/a/b/c/d/e/f/.git/HEAD",
                "ref: refs/heads/main\n",
            )
            .file(
                &format!("/home/u/proj{deep}/.git/HEAD"),
                "ref: refs/heads/main\n",
            )
            .file(
                &format!("/home/u/proj{deep}/x/.git/HEAD"),
                "ref: refs/heads/main\n",
            )
            .file("/home/u/proj/sep/.git", "gitdir: ../.subgit\n")
            .file("/home/u/proj/.subgit/HEAD", "ref: refs/heads/main\n")
            .file("/home/u/proj/.subgit/config", "");
        let p = PermissionProfile::builtin("workspace-write").unwrap();
        let r = resolve(&p, &ctx("/home/u/proj"), &fs).unwrap();
        let at = |q: &str| r.filesystem.access_for(&fs, Path::new(q)).access;
        assert_eq!(at("/home/u/proj/vendor/a/.git/config"), Access::Read);
        assert_eq!(at("/home/u/proj/vendor/a/.git/hooks/x"), Access::Read);
        assert_eq!(at("/home/u/proj/sm/.git"), Access::Read);
        assert_eq!(at("/home/u/proj/vendor/a/src.rs"), Access::Write);
        assert_eq!(
            at("/home/u/proj/node_modules/pkg/.git/config"),
            Access::Write
        );
        assert_eq!(at("/home/u/proj/target/.git/config"), Access::Read);
        assert_eq!(at("/home/u/proj/target/debug/x"), Access::Write);
        assert_eq!(at("/home/u/proj/a/b/c/d/e/.git"), Access::Write);
        assert_eq!(at("/home/u/proj/a/b/c/d/e/f/.git/config"), Access::Read);
        // At the deepest level `.git` is looked up by name; below it nothing, and a note
        // says the walk stopped.
        assert_eq!(at(&format!("/home/u/proj{deep}/.git/config")), Access::Read);
        assert_eq!(
            at(&format!("/home/u/proj{deep}/x/.git/config")),
            Access::Write
        );
        assert!(
            r.notes
                .iter()
                .any(|n| n.contains(&format!("{NESTED_SCAN_DEPTH} levels only"))),
            "{:?}",
            r.notes
        );
        // The ancestors of a nested `.git` are pinned (it cannot be moved aside).
        let ResolvedFilesystem::Restricted { entries, .. } = &r.filesystem else {
            panic!()
        };
        assert!(entries
            .iter()
            .any(|e| e.path == Path::new("/home/u/proj/vendor")
                && matches!(e.origin, EntryOrigin::Pinned { .. })));
        // A symlinked nested `.git` is protected as spelled (breaker, stop 19: it only got
        // a note), and a `gitdir:` file's git dir inside the root too (`--separate-git-dir`).
        assert_eq!(at("/home/u/proj/ln/.git/config"), Access::Read);
        assert_eq!(at("/home/u/proj/.subgit/config"), Access::Read);
        assert_eq!(at("/home/u/proj/sep/file.txt"), Access::Write);
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

    /// Breaker (stop 21): an absolute entry with `..` after a symlink names what the kernel
    /// resolves it to (the deny hid `/opt/key` while the secret stayed readable).
    #[test]
    fn dotdot_after_a_symlink_in_entries_is_resolved_physically() {
        let fs = fs()
            .file("/var/sec/key", "s")
            .dir("/var/sec/sub")
            .symlink("/opt/lnk2", "/var/sec/sub");
        let p = restricted(vec![
            FsEntry::new(":workspace", Access::Write),
            FsEntry::new("/opt/lnk2/../key", Access::Deny),
        ]);
        let r = resolve(&p, &ctx("/home/u/proj"), &fs).unwrap();
        assert_eq!(access(&r, &fs, "/var/sec/key"), Access::Deny);
        assert_eq!(access(&r, &fs, "/var/sec/other"), Access::Read);
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
            .dir("/repo/.git/objects")
            .dir("/repo/.git/refs")
            .file("/repo/.git/HEAD", "ref: refs/heads/main\n")
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

    /// nu9 F20: in a submodule's work tree its git dir `<super>/.git/modules/<name>` is
    /// writable (`git commit` works), with hooks and config protected. Escape twins: a
    /// `core.worktree` naming another directory, or a git dir not under `modules/`, makes
    /// nothing writable.
    #[test]
    fn submodule_gets_its_git_dir_writable_and_hooks_protected() {
        let base = || {
            MemFs::new()
                .dir("/super/.git/hooks")
                .dir("/super/.git/objects")
                .dir("/super/.git/refs")
                .file("/super/.git/HEAD", "ref: refs/heads/main\n")
                .file("/super/.git/config", "")
                .dir("/super/.git/modules/sub/hooks")
                .dir("/super/.git/modules/sub/objects")
                .dir("/super/.git/modules/sub/refs")
                .file("/super/.git/modules/sub/HEAD", "ref: refs/heads/main\n")
                .file("/super/sub/.git", "gitdir: ../.git/modules/sub\n")
        };
        let p = restricted(vec![FsEntry::new(":workspace", Access::Write)]);
        let fs = base().file(
            "/super/.git/modules/sub/config",
            "[core]\n\tworktree = ../../../sub\n",
        );
        let r = resolve(&p, &ctx("/super/sub"), &fs).unwrap();
        let acc = |q: &str| r.filesystem.access_for(&fs, Path::new(q)).access;
        assert_eq!(acc("/super/.git/modules/sub/index"), Access::Write);
        assert_eq!(acc("/super/.git/modules/sub/objects/ab/cd"), Access::Write);
        assert_eq!(
            acc("/super/.git/modules/sub/hooks/pre-commit"),
            Access::Read
        );
        assert_eq!(acc("/super/.git/modules/sub/config"), Access::Read);
        assert_eq!(acc("/super/.git/modules/sub/modules/x"), Access::Read);
        assert_eq!(acc("/super/sub/.git"), Access::Read);
        assert_eq!(acc("/super/.git/index"), Access::Read);
        // G16 (attack pass 27): a git dir a command made inside the granted one, named by a
        // nested `.git` file in the work tree, is read-only whole in later runs.
        let fs2 = fs
            .dir("/super/.git/modules/sub/evil/objects")
            .dir("/super/.git/modules/sub/evil/refs")
            .file(
                "/super/.git/modules/sub/evil/HEAD",
                "ref: refs/heads/main\n",
            )
            .file("/super/.git/modules/sub/evil/config", "")
            .file(
                "/super/sub/inner/.git",
                "gitdir: ../../.git/modules/sub/evil\n",
            );
        let r2 = resolve(&p, &ctx("/super/sub"), &fs2).unwrap();
        let acc2 = |q: &str| r2.filesystem.access_for(&fs2, Path::new(q)).access;
        assert_eq!(acc2("/super/.git/modules/sub/evil/config"), Access::Read);
        assert_eq!(acc2("/super/.git/modules/sub/index"), Access::Write);
        // The backlink names another directory.
        let fs = base().file(
            "/super/.git/modules/sub/config",
            "[core]\n\tworktree = ../../../other\n",
        );
        let r = resolve(&p, &ctx("/super/sub"), &fs).unwrap();
        assert_eq!(
            access(&r, &fs, "/super/.git/modules/sub/index"),
            Access::Read
        );
        assert!(
            r.notes.iter().any(|n| n.contains("core.worktree names")),
            "{:?}",
            r.notes
        );
        // A git dir that is not below another git dir's modules/.
        let fs = MemFs::new()
            .dir("/elsewhere/sub/objects")
            .dir("/elsewhere/sub/refs")
            .file("/elsewhere/sub/HEAD", "ref: refs/heads/main\n")
            .file("/elsewhere/sub/config", "[core]\n\tworktree = /w\n")
            .file("/w/.git", "gitdir: /elsewhere/sub\n");
        let r = resolve(&p, &ctx("/w"), &fs).unwrap();
        assert_eq!(access(&r, &fs, "/elsewhere/sub/index"), Access::Read);
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
        assert_eq!(access(&r, &fs, "/etc/passwd"), Access::Read);
        assert_eq!(access(&r, &fs, "/wt/.git"), Access::Read);
        // Pointing at a real repo's worktree dir that does not point back fails too.
        let fs = MemFs::new()
            .dir("/repo/.git/hooks")
            .file("/repo/.git/worktrees/other/gitdir", "/elsewhere/.git\n")
            .file("/repo/.git/worktrees/other/commondir", "../..\n")
            .file("/wt/.git", "gitdir: /repo/.git/worktrees/other\n");
        let r = resolve(&p, &ctx("/wt"), &fs).unwrap();
        assert_eq!(access(&r, &fs, "/repo/.git/objects/x"), Access::Read);
    }

    /// A `.git` symlink leading to another repository's git dir grants nothing: an earlier
    /// confined run can plant `sub/.git -> /victim/.git`, and a later run in `sub` got the
    /// victim's refs and objects writable (breaker, stop 8). Named explicitly, the git dir
    /// is writable with its code-running children still protected.
    #[test]
    fn symlinked_git_dir_is_not_granted_by_the_link() {
        let fs = MemFs::new()
            .file("/victim/.git/HEAD", "ref: refs/heads/main\n")
            .dir("/victim/.git/objects")
            .dir("/victim/.git/refs/heads")
            .dir("/victim/.git/hooks")
            .file("/victim/.git/config", "")
            .dir("/p/sub")
            .symlink("/p/sub/.git", "/victim/.git");
        let p = restricted(vec![FsEntry::new(":workspace", Access::Write)]);
        let r = resolve(&p, &ctx("/p/sub"), &fs).unwrap();
        assert_eq!(
            access(&r, &fs, "/victim/.git/refs/heads/main"),
            Access::Read
        );
        assert_eq!(access(&r, &fs, "/victim/.git/objects/ab"), Access::Read);
        assert!(
            r.notes.iter().any(|n| n.contains("-w /victim/.git")),
            "{:?}",
            r.notes
        );
        // Its owner names it: writable, hooks and config still not.
        let p = restricted(vec![
            FsEntry::new(":workspace", Access::Write),
            FsEntry::new("/victim/.git", Access::Write),
        ]);
        let r = resolve(&p, &ctx("/p/sub"), &fs).unwrap();
        assert_eq!(
            access(&r, &fs, "/victim/.git/refs/heads/main"),
            Access::Write
        );
        assert_eq!(
            access(&r, &fs, "/victim/.git/hooks/pre-commit"),
            Access::Read
        );
        assert_eq!(access(&r, &fs, "/victim/.git/config"), Access::Read);
    }

    /// Breaker (stop 8): under `-w ~/.cache` the hidden cache-layer root's parent could be
    /// renamed (`mv ~/.cache/cordon …`), carrying every workspace's layers out from under
    /// the deny and letting a new `overlays/` be planted. It is pinned like any deny
    /// entry's ancestors; a sibling in `~/.cache` stays writable.
    #[test]
    fn hidden_cache_layer_root_cannot_be_moved_aside() {
        let fs = fs()
            .dir("/home/u/.cache/cordon/overlays/k/pip")
            .dir("/home/u/.cache/other");
        let mut p = restricted(vec![
            FsEntry::new(":workspace", Access::Write),
            FsEntry::new("/home/u/.cache", Access::Write),
        ]);
        p.caches = crate::caches::CacheMode::Overlay;
        let r = resolve(&p, &ctx("/home/u/proj"), &fs).unwrap();
        assert_eq!(
            access(&r, &fs, "/home/u/.cache/cordon/overlays/k/pip"),
            Access::Deny
        );
        let ResolvedFilesystem::Restricted { entries, .. } = &r.filesystem else {
            panic!()
        };
        assert!(
            entries
                .iter()
                .any(|e| e.path == Path::new("/home/u/.cache/cordon")
                    && matches!(e.origin, EntryOrigin::Pinned { .. })),
            "{entries:#?}"
        );
        assert_eq!(access(&r, &fs, "/home/u/.cache/other/x"), Access::Write);
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
        assert_eq!(access(&r, &fs, "/home/u/proj/.git/index"), Access::Write);
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
        assert_eq!(access(&r, &fs, "/etc/passwd"), Access::Read);
        assert_eq!(access(&r, &fs, "/data/real/x"), Access::Read);
        assert!(r.notes.iter().any(|n| n.contains("/etc")), "{:?}", r.notes);
        // A symlink outside any writable root is the user's own: honoured.
        let fs = MemFs::new()
            .dir("/data/cache")
            .symlink("/home/u/.cache", "/data/cache")
            .dir("/home/u/proj/.git/objects");
        let p = restricted(vec![
            FsEntry::new(":workspace", Access::Write),
            FsEntry::new("~/.cache", Access::Write),
        ]);
        let r = resolve(&p, &ctx("/home/u/proj"), &fs).unwrap();
        assert_eq!(access(&r, &fs, "/data/cache/x"), Access::Write);
    }

    /// Attack pass 242, F1: a link earlier on the typed path (`proj/root -> /`, then `cd
    /// proj/root/srv/victim`) does not make the marked directory beyond it the workspace:
    /// the project holding the link stays the workspace, and the target is read-only.
    /// F2: a link in a directory an earlier run could write, with no project on the typed
    /// path, refuses. Twin: the user's own link to a project (no earlier root) still
    /// takes the real path.
    #[test]
    fn a_link_anywhere_on_the_typed_cwd_does_not_choose_the_workspace() {
        let fs = MemFs::new()
            .dir("/p/.git/objects")
            .dir("/srv/victim/.git/objects")
            .symlink("/p/root", "/")
            .symlink("/p/t", "/srv")
            .dir("/plain")
            .symlink("/plain/vv", "/srv/victim");
        let p = restricted(vec![FsEntry::new(":workspace", Access::Write)]);
        for typed in ["/p/root/srv/victim", "/p/t/victim"] {
            let mut c = ctx("/srv/victim");
            c.logical_cwd = Some(typed.into());
            let r = resolve(&p, &c, &fs).unwrap();
            assert_eq!(r.workspace, PathBuf::from("/p"), "{typed}");
            assert_eq!(access(&r, &fs, "/srv/victim/f"), Access::Read, "{typed}");
            assert_eq!(
                access(&r, &fs, "/srv/victim/.git/hooks/x"),
                Access::Read,
                "{typed}"
            );
        }
        let mut c = ctx("/srv/victim");
        c.logical_cwd = Some("/plain/vv".into());
        c.earlier_roots = vec!["/plain".into()];
        assert!(matches!(
            resolve(&p, &c, &fs),
            Err(ResolveError::CwdThroughPlantedLink { .. })
        ));
        // Twin: the same link where no run could write: the real path decides.
        c.earlier_roots.clear();
        let r = resolve(&p, &c, &fs).unwrap();
        assert_eq!(r.workspace, PathBuf::from("/srv/victim"));
    }

    /// E1: `ln -s / rootlink` planted inside a project, then `cd rootlink && cordon run`:
    /// the workspace is found along the typed path, never the symlink's target.
    #[test]
    fn symlinked_cwd_does_not_move_the_workspace() {
        let fs = MemFs::new()
            .dir("/p/.git/objects")
            .dir("/etc")
            .symlink("/p/rootlink", "/");
        let p = restricted(vec![FsEntry::new(":workspace", Access::Write)]);
        let mut c = ctx("/p/rootlink");
        c.logical_cwd = Some("/p/rootlink".into());
        let r = resolve(&p, &c, &fs).unwrap();
        assert_eq!(r.workspace, PathBuf::from("/p"));
        assert_eq!(r.cwd, PathBuf::from("/"));
        assert_eq!(access(&r, &fs, "/etc/x"), Access::Read);
        assert!(
            r.notes.iter().any(|n| n.contains("symlink")),
            "{:?}",
            r.notes
        );
        // Without the typed path the target would be the workspace — and `/` is refused.
        assert!(matches!(
            resolve(&p, &ctx("/p/rootlink"), &fs),
            Err(ResolveError::UnsafeWorkspace(..))
        ));
    }

    /// nu15 N1: a cwd in a subdirectory of a project reached through the user's own
    /// link to the project root (no project on the typed path holds the link) has the
    /// project as its workspace, as the real path gives it.
    #[test]
    fn link_to_a_project_root_keeps_the_project_as_workspace() {
        let fs = MemFs::new()
            .dir("/data/code/p2/.git/objects")
            .dir("/data/code/p2/src")
            .dir("/home/u")
            .symlink("/home/u/p2link", "/data/code/p2");
        let p = restricted(vec![FsEntry::new(":workspace", Access::Write)]);
        let mut c = ctx("/data/code/p2/src");
        c.logical_cwd = Some("/home/u/p2link/src".into());
        let r = resolve(&p, &c, &fs).unwrap();
        assert_eq!(r.workspace, PathBuf::from("/data/code/p2"));
        assert_eq!(r.cwd, PathBuf::from("/data/code/p2/src"));
        assert_eq!(access(&r, &fs, "/data/code/p2/README"), Access::Write);
        // Twin: the typed path with no link is the same.
        c.logical_cwd = Some("/data/code/p2/src".into());
        assert_eq!(
            resolve(&p, &c, &fs).unwrap().workspace,
            PathBuf::from("/data/code/p2")
        );
    }

    /// E6: a workspace that is `/`, a home directory or above one is refused.
    #[test]
    fn home_or_root_as_workspace_is_refused() {
        let fs = MemFs::new().dir("/home/u/proj/.git/objects").dir("/tmp");
        let p = restricted(vec![FsEntry::new(":workspace", Access::Write)]);
        for cwd in ["/home/u", "/home", "/"] {
            assert!(
                matches!(
                    resolve(&p, &ctx(cwd), &fs),
                    Err(ResolveError::UnsafeWorkspace(..))
                ),
                "{cwd}"
            );
        }
        // The same cwd is fine for a profile that does not write the workspace.
        let ro = PermissionProfile::builtin("read-only").unwrap();
        assert!(resolve(&ro, &ctx("/home/u"), &fs).is_ok());
        // And a project below home is fine.
        assert!(resolve(&p, &ctx("/home/u/proj"), &fs).is_ok());
    }

    /// E2: a worktree structure the command wrote inside its own root is not trusted, nor
    /// one whose common dir is `/`.
    #[test]
    fn self_made_worktree_grants_nothing() {
        let fs = MemFs::new()
            .dir("/w/sub/x/worktrees/wt")
            .file("/w/sub/x/worktrees/wt/gitdir", "/w/sub/.git\n")
            .file("/w/sub/x/worktrees/wt/commondir", "/\n")
            .file("/w/sub/.git", "gitdir: x/worktrees/wt\n")
            .dir("/w/.git/objects")
            .dir("/etc");
        let p = restricted(vec![FsEntry::new(":workspace", Access::Write)]);
        let r = resolve(&p, &ctx("/w/sub"), &fs).unwrap();
        assert_eq!(access(&r, &fs, "/etc/x"), Access::Read);
        assert!(
            r.notes
                .iter()
                .any(|n| n.contains("not a usable linked worktree")),
            "{:?}",
            r.notes
        );
    }

    /// A `$TMPDIR` of `/` or a home directory does not become writable through `:tmp`.
    #[test]
    fn wide_tmpdir_is_ignored() {
        let fs = fs();
        let p = restricted(vec![FsEntry::new(":tmp", Access::Write)]);
        for t in ["/", "/home/u", "/home"] {
            let mut c = ctx("/home/u/proj");
            c.tmpdir = Some(t.into());
            let r = resolve(&p, &c, &fs).unwrap();
            assert_eq!(access(&r, &fs, "/home/u/.bashrc"), Access::Read, "{t}");
        }
    }

    /// Breaker (stop 18, new user): `cd /var/tmp && cordon run …` made the whole shared temp
    /// tree the workspace (the marker-less fallback allows temp trees), opening every
    /// repository in it. A temp tree itself is refused, marker or not; a project in it is
    /// not (sibling).
    #[test]
    fn a_shared_temp_tree_is_never_the_workspace() {
        let fs = fs()
            .dir("/var/tmp/other/.git/hooks")
            .file("/var/tmp/other/.git/HEAD", "ref: x\n")
            .dir("/var/tmp/plain");
        let p = restricted(vec![FsEntry::new(":workspace", Access::Write)]);
        assert!(matches!(
            resolve(&p, &ctx("/var/tmp"), &fs),
            Err(ResolveError::UnsafeWorkspace(..))
        ));
        let fs2 = fs.clone().file("/var/tmp/.git/HEAD", "ref: x\n");
        assert!(matches!(
            resolve(&p, &ctx("/var/tmp/plain"), &fs2),
            Err(ResolveError::UnsafeWorkspace(..))
        ));
        let r = resolve(&p, &ctx("/var/tmp/other"), &fs).unwrap();
        assert_eq!(r.workspace, Path::new("/var/tmp/other"));
        assert_eq!(access(&r, &fs, "/var/tmp/other/src"), Access::Write);
    }

    /// Breaker (stop 18): a marker-less top-level directory (`/mnt`, `/home` as root) is
    /// not a workspace; `TMPDIR` holding a repository (or being one) is refused; a project
    /// below a top-level directory and an empty temp dir are fine (siblings).
    #[test]
    fn top_level_fallback_and_tmpdir_holding_projects_are_refused() {
        let fs = fs()
            .dir("/mnt/disk")
            .dir("/data/proj/.git")
            .file("/data/proj/.git/HEAD", "ref: x\n")
            .dir("/var/tmp/u/clone/.git/hooks")
            .file("/var/tmp/u/clone/.git/HEAD", "ref: x\n")
            .dir("/var/tmp/mine");
        let p = restricted(vec![
            FsEntry::new(":workspace", Access::Write),
            FsEntry::new(":tmp", Access::Write),
        ]);
        for cwd in ["/mnt", "/home"] {
            assert!(
                matches!(
                    resolve(&p, &ctx(cwd), &fs),
                    Err(ResolveError::UnsafeWorkspace(..))
                ),
                "{cwd}"
            );
        }
        assert!(resolve(&p, &ctx("/data/proj"), &fs).is_ok());
        let mut c = ctx("/home/u/proj");
        c.tmpdir = Some("/var/tmp/u".into());
        let r = resolve(&p, &c, &fs).unwrap();
        assert_eq!(r.tmpdir_refused.as_deref(), Some(Path::new("/var/tmp/u")));
        assert!(
            r.notes.iter().any(|n| n.contains("holds the project")),
            "{:?}",
            r.notes
        );
        assert_eq!(
            access(&r, &fs, "/var/tmp/u/clone/.git/hooks/pre-commit"),
            Access::Read
        );
        c.tmpdir = Some("/var/tmp/mine".into());
        let r = resolve(&p, &c, &fs).unwrap();
        assert_eq!(r.tmpdir_refused, None);
        // A clone two levels down counts too (new user, stop 18: one level was looked at).
        let fs = fs
            .dir("/var/tmp/u2/deep/x/.git/hooks")
            .file("/var/tmp/u2/deep/x/.git/HEAD", "ref: x\n");
        c.tmpdir = Some("/var/tmp/u2".into());
        let r = resolve(&p, &c, &fs).unwrap();
        assert_eq!(r.tmpdir_refused.as_deref(), Some(Path::new("/var/tmp/u2")));
        assert_eq!(
            access(&r, &fs, "/var/tmp/u2/deep/x/.git/hooks/pre-commit"),
            Access::Read
        );
    }

    /// Attack pass 47, N4: with a private `/tmp` (the Linux namespace sandbox) the host's
    /// `$TMPDIR` is never a writable root, even when the guard would take it: host programs
    /// write there what they later run. Twin: without one (Seatbelt), the guard takes it.
    #[test]
    fn a_private_tmp_keeps_the_hosts_tmpdir_read_only() {
        let fs = fs().dir("/var/tmp/mine/pip-req-build-x");
        let p = restricted(vec![
            FsEntry::new(":workspace", Access::Write),
            FsEntry::new(":tmp", Access::Write),
        ]);
        let mut c = ctx("/home/u/proj");
        c.tmpdir = Some("/var/tmp/mine".into());
        c.private_tmpdir = true;
        let r = resolve(&p, &c, &fs).unwrap();
        assert_eq!(
            r.tmpdir_refused.as_deref(),
            Some(Path::new("/var/tmp/mine"))
        );
        assert!(
            r.notes.iter().any(|n| n.contains("host programs")),
            "{:?}",
            r.notes
        );
        assert_eq!(
            access(&r, &fs, "/var/tmp/mine/pip-req-build-x/setup.py"),
            Access::Read
        );
        // nu28 F5: typed `-w "$TMPDIR"` shares it on purpose: kept, no note.
        let typed = restricted(vec![
            FsEntry::new(":workspace", Access::Write),
            FsEntry::new(":tmp", Access::Write),
            FsEntry::new("/var/tmp/mine", Access::Write),
        ]);
        let r = resolve(&typed, &c, &fs).unwrap();
        assert_eq!(r.tmpdir_refused, None);
        assert!(!r.notes.iter().any(|n| n.contains("host programs")));
        c.private_tmpdir = false;
        let r = resolve(&p, &c, &fs).unwrap();
        assert_eq!(r.tmpdir_refused, None);
        assert_eq!(
            access(&r, &fs, "/var/tmp/mine/pip-req-build-x/setup.py"),
            Access::Write
        );
    }

    /// Breaker (stop 18): `TMPDIR=/var/tmp` made the whole shared temp tree writable, with
    /// every repository in it (other projects' `.git/hooks`), since temp roots carry no
    /// protected paths. A shared temp tree itself is refused; a directory of one's own in
    /// it is not (sibling). And a `$TMPDIR` that is a home or above the workspace is refused
    /// with a note, not dropped silently.
    #[test]
    fn shared_temp_tree_and_wide_tmpdir_are_refused_with_a_note() {
        let fs = fs()
            .dir("/var/tmp/other/.git/hooks")
            .file("/var/tmp/other/.git/HEAD", "ref: x\n")
            .dir("/var/tmp/me");
        let p = restricted(vec![
            FsEntry::new(":workspace", Access::Write),
            FsEntry::new(":tmp", Access::Write),
        ]);
        for t in ["/var/tmp", "/home/u", "/home"] {
            let mut c = ctx("/home/u/proj");
            c.tmpdir = Some(t.into());
            let r = resolve(&p, &c, &fs).unwrap();
            assert_eq!(r.tmpdir_refused.as_deref(), Some(Path::new(t)), "{t}");
            assert!(
                r.notes
                    .iter()
                    .any(|n| n.starts_with(&format!("$TMPDIR {t}"))),
                "{t}: {:?}",
                r.notes
            );
            assert_eq!(
                access(&r, &fs, "/var/tmp/other/.git/hooks/pre-commit"),
                Access::Read,
                "{t}"
            );
        }
        let mut c = ctx("/home/u/proj");
        c.tmpdir = Some("/var/tmp/me".into());
        let r = resolve(&p, &c, &fs).unwrap();
        assert_eq!(r.tmpdir_refused, None);
        assert_eq!(access(&r, &fs, "/var/tmp/me/x"), Access::Write);
    }

    /// A `$TMPDIR` or a grant under `/dev` (`/dev/shm/x`) or `/proc` is not reported as
    /// given: the Linux sandbox rebuilds those trees per command (a private, empty
    /// `/dev/shm`), so the host path would not be there (breaker MEDIUM-3). `$TMPDIR`
    /// falls back to the private `/tmp` (refused, with a note); `/var/tmp/x` still works
    /// (sibling case); a deny entry there stays.
    #[cfg(target_os = "linux")]
    #[test]
    fn grants_under_rebuilt_trees_are_dropped() {
        let fs = fs()
            .dir("/dev/shm/x")
            .dir("/var/tmp/x")
            .file("/proc/sys/kernel/x", "");
        let p = restricted(vec![
            FsEntry::new(":workspace", Access::Write),
            FsEntry::new(":tmp", Access::Write),
        ]);
        let mut c = ctx("/home/u/proj");
        c.tmpdir = Some("/dev/shm/x".into());
        let r = resolve(&p, &c, &fs).unwrap();
        assert_eq!(r.tmpdir_refused.as_deref(), Some(Path::new("/dev/shm/x")));
        assert!(
            r.notes
                .iter()
                .any(|n| n.contains("rebuilds for every command")),
            "{:?}",
            r.notes
        );
        assert_eq!(access(&r, &fs, "/dev/shm/x/f"), Access::Read);
        c.tmpdir = Some("/var/tmp/x".into());
        let r = resolve(&p, &c, &fs).unwrap();
        assert_eq!(r.tmpdir_refused, None);
        assert_eq!(access(&r, &fs, "/var/tmp/x/f"), Access::Write);

        let p = restricted(vec![
            FsEntry::new(":workspace", Access::Write),
            FsEntry::new("/dev/shm/x", Access::Write),
            FsEntry::new("/proc/sys/kernel/x", Access::Write),
            FsEntry::new("/dev/shm/x/secret", Access::Deny),
        ]);
        let r = resolve(&p, &ctx("/home/u/proj"), &fs).unwrap();
        let writable: Vec<&Path> = r
            .filesystem
            .writable_roots()
            .into_iter()
            .map(|e| e.path.as_path())
            .collect();
        assert!(
            !writable
                .iter()
                .any(|w| w.starts_with("/dev") || w.starts_with("/proc")),
            "{writable:?}"
        );
        for p in ["/dev/shm/x", "/proc/sys/kernel/x"] {
            assert!(
                r.notes
                    .iter()
                    .any(|n| n.contains(p) && n.contains("rebuilt")),
                "{p}: {:?}",
                r.notes
            );
        }
        assert_eq!(access(&r, &fs, "/dev/shm/x/secret"), Access::Deny);
    }

    /// A `$TMPDIR` in, at or above the session runtime directory is not made writable: it
    /// holds the session bus, gpg-agent and systemd's private socket (breaker, stop 8:
    /// `TMPDIR=$XDG_RUNTIME_DIR` made `/run/user/1001/bus` reachable). A temp dir beside it
    /// still is (sibling case).
    #[test]
    fn runtime_dir_tmpdir_is_not_writable() {
        let fs = fs()
            .file("/run/user/1001/bus", "")
            .dir("/run/user/1001/sub")
            .file("/var/tmp/rt/bus", "")
            .dir("/var/tmp/rt/tmp")
            .dir("/var/tmp/mine");
        let p = restricted(vec![FsEntry::new(":tmp", Access::Write)]);
        for (t, rt, probe) in [
            ("/run/user/1001", None, "/run/user/1001/bus"),
            ("/run/user/1001/sub", None, "/run/user/1001/sub/x"),
            ("/var/tmp/rt", Some("/var/tmp/rt"), "/var/tmp/rt/bus"),
            ("/var/tmp/rt/tmp", Some("/var/tmp/rt"), "/var/tmp/rt/tmp/x"),
            ("/var/tmp", Some("/var/tmp/rt"), "/var/tmp/rt/bus"),
        ] {
            let mut c = ctx("/home/u/proj");
            c.tmpdir = Some(t.into());
            c.runtime_dir = rt.map(Into::into);
            let r = resolve(&p, &c, &fs).unwrap();
            assert_eq!(access(&r, &fs, probe), Access::Read, "{t}");
            assert!(
                r.notes.iter().any(|n| n.contains("runtime directory")),
                "{t}: {:?}",
                r.notes
            );
        }
        let mut c = ctx("/home/u/proj");
        c.tmpdir = Some("/var/tmp/mine".into());
        c.runtime_dir = Some("/var/tmp/rt".into());
        let r = resolve(&p, &c, &fs).unwrap();
        assert_eq!(access(&r, &fs, "/var/tmp/mine/x"), Access::Write);
    }

    /// L1: credential stores are hidden under the account's home too (wrong/unset $HOME),
    /// and with no home at all the profile is refused rather than left unhidden.
    #[test]
    fn credential_stores_hidden_under_every_home() {
        let fs = fs().dir("/root/.ssh");
        let p = PermissionProfile::builtin("workspace-write").unwrap();
        let mut c = ctx("/home/u/proj");
        c.home = Some("/tmp".into());
        c.account_home = Some("/home/u".into());
        let r = resolve(&p, &c, &fs).unwrap();
        assert_eq!(access(&r, &fs, "/home/u/.ssh/id_rsa"), Access::Deny);
        assert_eq!(access(&r, &fs, "/tmp/.ssh/id_rsa"), Access::Deny);
        c.home = None;
        c.account_home = None;
        assert!(matches!(
            resolve(&p, &c, &fs),
            Err(ResolveError::NoHome { .. })
        ));
    }

    /// N4: a `$TMPDIR` symlink to `/` or a home is judged where it resolves.
    #[test]
    fn symlinked_tmpdir_is_judged_where_it_resolves() {
        let fs = fs().symlink("/var/l", "/").symlink("/var/h", "/home/u");
        let p = restricted(vec![FsEntry::new(":tmp", Access::Write)]);
        for t in ["/var/l", "/var/h"] {
            let mut c = ctx("/home/u/proj");
            c.tmpdir = Some(t.into());
            let r = resolve(&p, &c, &fs).unwrap();
            assert_eq!(access(&r, &fs, "/home/u/.profile"), Access::Read, "{t}");
            assert_eq!(access(&r, &fs, "/etc/x"), Access::Read, "{t}");
        }
    }

    /// N1: a marker reached through a symlink on the typed path does not count (a link to
    /// another repository), and a marker-less cwd under home is never a writable workspace.
    #[test]
    fn workspace_markers_through_links_and_markerless_homes() {
        let fs = MemFs::new()
            .dir("/home/u/proj/.git/objects")
            .dir("/srv/other/.git/objects")
            .dir("/home/u/.config")
            .symlink("/home/u/proj/o", "/srv/other")
            .symlink("/home/u/proj/cfg", "/home/u/.config");
        let p = restricted(vec![FsEntry::new(":workspace", Access::Write)]);
        let mut c = ctx("/home/u/proj/o");
        c.logical_cwd = Some("/home/u/proj/o".into());
        let r = resolve(&p, &c, &fs).unwrap();
        assert_eq!(r.workspace, PathBuf::from("/home/u/proj"));
        assert_eq!(access(&r, &fs, "/srv/other/x"), Access::Read);
        // No typed path: the cwd is ~/.config, no marker, under home → refused.
        assert!(matches!(
            resolve(&p, &ctx("/home/u/proj/cfg"), &fs),
            Err(ResolveError::UnsafeWorkspace(..))
        ));
    }

    /// The protected ancestor of a missing cordon config stops at cordon's own directory:
    /// a home without `~/.config` gets `~/.config/cordon` protected (a directory
    /// placeholder), not `~/.config` (which made every tool's config read-only on a
    /// first run and, as a file placeholder, broke every later run with ENOTDIR).
    #[test]
    fn missing_config_ancestor_stops_at_cordons_directory() {
        let fs = MemFs::new().dir("/home/u/proj/.git/objects");
        let p = restricted(vec![FsEntry::new("/home/u", Access::Write)]);
        let mut c = ctx("/home/u/proj");
        c.profile_files = vec!["/home/u/.config/cordon/config.toml".into()];
        let r = resolve(&p, &c, &fs).unwrap();
        let prot = r.filesystem.protected();
        assert!(prot
            .iter()
            .any(|e| e.path == Path::new("/home/u/.config/cordon") && e.is_dir));
        assert!(!prot.iter().any(|e| e.path == Path::new("/home/u/.config")));
        assert_eq!(access(&r, &fs, "/home/u/.config/other/x"), Access::Write);
    }

    /// Attack pass 45, M5: a write entry that is one of cordon's own files, lies inside
    /// its state directory, or reaches one through a symlink on its spelled path is
    /// refused; `cordon_files` lists them for the grant check. Twin: a root holding one is
    /// resolved, with the file protected inside it.
    #[test]
    fn a_write_entry_on_cordons_own_file_is_refused() {
        let fs = MemFs::new()
            .dir("/home/u/proj/.git/objects")
            .file("/srv/cfg/cordon.toml", "")
            .dir("/home/u/.local/state/cordon/sessions");
        let mut c = ctx("/home/u/proj");
        c.profile_files = vec![
            "/srv/cfg/cordon.toml".into(),
            "/home/u/.local/state/cordon".into(),
        ];
        for w in [
            "/srv/cfg/cordon.toml",
            "/home/u/.local/state/cordon/sessions",
        ] {
            let p = restricted(vec![
                FsEntry::new(":workspace", Access::Write),
                FsEntry::new(w, Access::Write),
            ]);
            let e = resolve(&p, &c, &fs).unwrap_err();
            assert!(
                matches!(&e, ResolveError::CordonFileWritable(p, _) if p == Path::new(w)),
                "{w}: {e}"
            );
        }
        let p = restricted(vec![
            FsEntry::new(":workspace", Access::Write),
            FsEntry::new("/srv/cfg", Access::Write),
        ]);
        let r = resolve(&p, &c, &fs).unwrap();
        assert_eq!(access(&r, &fs, "/srv/cfg/cordon.toml"), Access::Read);
        assert_eq!(access(&r, &fs, "/srv/cfg/other"), Access::Write);
        assert!(r
            .cordon_files
            .contains(&PathBuf::from("/srv/cfg/cordon.toml")));
    }

    /// N2: a missing user config whose directory is missing too is protected at its first
    /// missing ancestor.
    #[test]
    fn missing_config_dir_is_protected() {
        let fs = MemFs::new().dir("/home/u/.config/.git/objects");
        let p = restricted(vec![FsEntry::new(":workspace", Access::Write)]);
        let mut c = ctx("/home/u/.config");
        c.profile_files = vec!["/home/u/.config/cordon/config.toml".into()];
        let r = resolve(&p, &c, &fs).unwrap();
        assert_eq!(
            access(&r, &fs, "/home/u/.config/cordon/config.toml"),
            Access::Read
        );
        // The missing ancestor is protected as a directory (its placeholder must be one:
        // a file there broke every later run with ENOTDIR).
        assert!(r
            .filesystem
            .protected()
            .iter()
            .any(|e| e.path == Path::new("/home/u/.config/cordon") && e.is_dir));
    }

    /// attack36 P2: `~/.config/cordon` a symlink to a missing directory (a stow tree not
    /// yet made): the config would be read at the link's target once it exists, so that
    /// is protected (its first missing ancestor, a directory) as well as the link.
    /// P1: `--config a/../b.toml` through `a -> d/e` is the file at `d/b.toml`, as the
    /// kernel reads it, not the lexical `./b.toml`; the link `a` is pinned too.
    #[test]
    fn cordon_files_are_protected_where_the_kernel_finds_them() {
        let fs = MemFs::new()
            .dir("/home/u/.config/.git/objects")
            .dir("/home/u/.config/stow")
            .symlink("/home/u/.config/cordon", "stow/cordon")
            .dir("/home/u/.config/d/e")
            .file("/home/u/.config/d/b.toml", "")
            .file("/home/u/.config/b.toml", "")
            .symlink("/home/u/.config/a", "d/e")
            .dir("/home/u/.config/st")
            .symlink("/home/u/.config/st/cordon", "../state");
        let p = restricted(vec![FsEntry::new(":workspace", Access::Write)]);
        let mut c = ctx("/home/u/.config");
        c.profile_files = vec![
            "/home/u/.config/cordon/config.toml".into(),
            "a/../b.toml".into(),
            "/home/u/.config/st/cordon".into(),
        ];
        let r = resolve(&p, &c, &fs).unwrap();
        let prot = r.filesystem.protected();
        assert!(
            prot.iter()
                .any(|e| e.path == Path::new("/home/u/.config/stow/cordon") && e.is_dir),
            "{prot:#?}"
        );
        assert_eq!(
            access(&r, &fs, "/home/u/.config/stow/cordon/config.toml"),
            Access::Read
        );
        assert_eq!(access(&r, &fs, "/home/u/.config/d/b.toml"), Access::Read);
        // attack37 A8: cordon's state directory through a link to a missing `state`: its
        // placeholder is a directory, whatever the target is named.
        assert!(
            prot.iter()
                .any(|e| e.path == Path::new("/home/u/.config/state") && e.is_dir),
            "{prot:#?}"
        );
        assert_eq!(access(&r, &fs, "/home/u/.config/b.toml"), Access::Write);
        let links: Vec<&PathBuf> = prot.iter().flat_map(|e| &e.links).collect();
        for l in ["/home/u/.config/cordon", "/home/u/.config/a"] {
            assert!(links.contains(&&PathBuf::from(l)), "{l}: {links:?}");
        }
    }

    #[test]
    fn empty_path_is_an_error() {
        let p = restricted(vec![FsEntry::new("", Access::Write)]);
        assert_eq!(
            resolve(&p, &ctx("/home/u/proj"), &fs()),
            Err(ResolveError::EmptyPath(0))
        );
    }

    /// E4: the parts of `.git` that redirect git (commondir, modules, a linked worktree's
    /// admin files) are protected too, whether or not they exist yet. nu12 H1: the rest
    /// of a worktree's admin dir (`HEAD`, its lock, reflogs, index) is writable, so that
    /// `git gc` works in the main checkout; an admin dir without `commondir` (git would
    /// use it as its own common dir) is read-only whole.
    #[test]
    fn git_redirects_are_protected() {
        let fs = fs()
            .file("/home/u/proj/.git/worktrees/w/commondir", "../..\n")
            .file("/home/u/proj/.git/worktrees/w/gitdir", "/home/u/w/.git\n")
            .file("/home/u/proj/.git/worktrees/w/HEAD", "ref: refs/heads/w\n")
            .file(
                "/home/u/proj/.git/worktrees/broken/HEAD",
                "ref: refs/heads/b\n",
            );
        let p = restricted(vec![FsEntry::new(":workspace", Access::Write)]);
        let r = resolve(&p, &ctx("/home/u/proj"), &fs).unwrap();
        let at = |q: &str| {
            r.filesystem
                .access_for(&fs, &Path::new("/home/u/proj/.git").join(q))
                .access
        };
        for q in [
            "commondir",
            "modules/sub/config",
            "worktrees/w/commondir",
            "worktrees/w/gitdir",
            "worktrees/w/config.worktree",
            "worktrees/broken/HEAD",
            "worktrees/broken/commondir",
            "config.worktree",
        ] {
            assert_eq!(at(q), Access::Read, "{q}");
        }
        for q in [
            "worktrees/w/HEAD",
            "worktrees/w/HEAD.lock",
            "worktrees/w/logs/HEAD",
        ] {
            assert_eq!(at(q), Access::Write, "{q}");
        }
    }

    /// nu14: a linked worktree checked out inside the project (`git worktree add wt`) is
    /// not a nested repository: its admin dir keeps the file-by-file protection, so a
    /// commit in it and `git gc` in the main checkout work; its `.git` file stays
    /// read-only. Twin: an admin dir whose `commondir` names another directory (hooks and
    /// config from there) is read-only whole.
    #[test]
    fn a_linked_worktree_inside_the_project_keeps_its_admin_dir_writable() {
        let fs = fs()
            .file("/home/u/proj/.git/worktrees/wt/commondir", "../..\n")
            .file(
                "/home/u/proj/.git/worktrees/wt/gitdir",
                "/home/u/proj/wt/.git\n",
            )
            .file(
                "/home/u/proj/.git/worktrees/wt/HEAD",
                "ref: refs/heads/wt\n",
            )
            .file(
                "/home/u/proj/wt/.git",
                "gitdir: /home/u/proj/.git/worktrees/wt\n",
            )
            .dir("/home/u/evil/hooks")
            .file("/home/u/proj/.git/worktrees/ev/commondir", "/home/u/evil\n")
            .file(
                "/home/u/proj/.git/worktrees/ev/HEAD",
                "ref: refs/heads/ev\n",
            )
            .file(
                "/home/u/proj/ev/.git",
                "gitdir: /home/u/proj/.git/worktrees/ev\n",
            )
            .file("/home/u/proj/.git/worktrees/w2/commondir", "../..\n")
            .dir("/home/u/proj/.git/worktrees/wt/modules/sm/hooks");
        let p = restricted(vec![FsEntry::new(":workspace", Access::Write)]);
        let r = resolve(&p, &ctx("/home/u/proj"), &fs).unwrap();
        let at = |q: &str| r.filesystem.access_for(&fs, Path::new(q)).access;
        // nu16 N1: a missing `modules/` gets no protected entry (no placeholder, which made
        // git refuse `git worktree remove`; the sweep settles it after the run); one that
        // holds submodule git dirs stays protected.
        let protected: Vec<&Path> = r
            .filesystem
            .protected()
            .iter()
            .map(|e| e.path.as_path())
            .collect();
        assert!(!protected.contains(&Path::new("/home/u/proj/.git/worktrees/w2/modules")));
        assert!(protected.contains(&Path::new("/home/u/proj/.git/worktrees/w2/commondir")));
        assert!(protected.contains(&Path::new("/home/u/proj/.git/worktrees/wt/modules")));
        assert_eq!(
            at("/home/u/proj/.git/worktrees/wt/modules/sm/hooks/x"),
            Access::Read
        );
        for q in [
            "/home/u/proj/.git/worktrees/wt/HEAD",
            "/home/u/proj/.git/worktrees/wt/index.lock",
            "/home/u/proj/.git/worktrees/wt/logs/HEAD",
        ] {
            assert_eq!(at(q), Access::Write, "{q}");
        }
        for q in [
            "/home/u/proj/.git/worktrees/wt/commondir",
            "/home/u/proj/.git/worktrees/wt/config.worktree",
            "/home/u/proj/wt/.git",
            "/home/u/proj/.git/worktrees/ev/HEAD",
            "/home/u/proj/.git/worktrees/ev/index.lock",
            "/home/u/proj/ev/.git",
        ] {
            assert_eq!(at(q), Access::Read, "{q}");
        }
        // attack36 M2: the sweep's "there before" is this view — `w2` without a protected
        // `modules/`, `wt` with one, `ev` whole.
        let mut view = r
            .filesystem
            .worktree_admins_protected(Path::new("/home/u/proj/.git"))
            .expect("listed one by one");
        view.sort();
        assert_eq!(
            view,
            [
                ("ev".into(), true),
                ("w2".into(), false),
                ("wt".into(), true)
            ]
        );
    }

    /// attack36 A1: more linked worktrees' admin dirs than cordon lists one by one make
    /// `worktrees/` read-only whole — none past a listing cap keeps a writable
    /// `commondir` — and the sweep's view says so (`None`). Twin: at the cap, each is
    /// protected file by file.
    #[test]
    fn too_many_linked_worktrees_are_read_only_whole() {
        for (n, whole) in [
            (MAX_WORKTREE_ADMINS + 1, true),
            (MAX_WORKTREE_ADMINS, false),
        ] {
            let mut fs = fs();
            for i in 0..n {
                fs = fs.file(
                    &format!("/home/u/proj/.git/worktrees/w{i:05}/commondir"),
                    "../..\n",
                );
            }
            let p = restricted(vec![FsEntry::new(":workspace", Access::Write)]);
            let r = resolve(&p, &ctx("/home/u/proj"), &fs).unwrap();
            let at = |q: &str| r.filesystem.access_for(&fs, Path::new(q)).access;
            let last = format!("/home/u/proj/.git/worktrees/w{:05}/commondir", n - 1);
            assert_eq!(at(&last), Access::Read, "{n}");
            let head = format!("/home/u/proj/.git/worktrees/w{:05}/HEAD", n - 1);
            assert_eq!(at(&head) == Access::Read, whole, "{n}");
            let view = r
                .filesystem
                .worktree_admins_protected(Path::new("/home/u/proj/.git"));
            assert_eq!(view.is_none(), whole, "{n}");
            assert!(view.is_none_or(|v| v.len() == n), "{n}");
        }
    }

    #[test]
    fn missing_protected_paths_are_still_protected() {
        let fs = MemFs::new().dir("/p/.git/objects").dir("/tmp");
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
        // A repository root is a project root already: no `.cordon` placeholder there
        // (it broke `git clean -fd`, new user stop 19)…
        assert!(!prot.iter().any(|(p, _)| p == Path::new("/p/.cordon")));
        // temp dirs get no protected paths
        assert!(!prot.iter().any(|(p, _)| p.starts_with("/tmp")));
        // …but a root without a repository keeps a missing `.git` and `.cordon` protected
        // (either made by the command would be a marker widening a later run's workspace).
        let fs = MemFs::new().dir("/q/src").dir("/tmp");
        let r = resolve(&p, &ctx("/q"), &fs).unwrap();
        let prot: Vec<_> = r
            .filesystem
            .protected()
            .iter()
            .map(|e| (e.path.clone(), e.exists))
            .collect();
        assert!(
            prot.contains(&(PathBuf::from("/q/.cordon"), false)),
            "{prot:?}"
        );
        assert!(
            prot.contains(&(PathBuf::from("/q/.git"), false)),
            "{prot:?}"
        );
    }

    /// Attack pass 224 #2: with the home directory a writable root (`-w ~`, an approved
    /// grant of `$HOME`), its shell start-up files are read-only where they exist, and a
    /// missing one is kept absent (swept after the run) with no placeholder — an empty
    /// `~/.bash_profile` would have bash skip `~/.profile`. The account's home counts as
    /// well as `$HOME`, a dangling dotfile link keeps its target absent, a hidden `~/.ssh`
    /// keeps nothing, and an explicitly named file is the user's. Twin: the rest of the
    /// home stays writable, and a project root not holding a home keeps nothing.
    #[test]
    fn a_writable_home_keeps_its_login_files_read_only_or_absent() {
        let fs = fs()
            .file("/home/u/.bashrc", "")
            .file("/home/u/.profile", "")
            .file("/home/u/dotfiles/zshrc", "")
            .symlink("/home/u/.zshrc", "/home/u/dotfiles/zshrc")
            .symlink("/home/u/.zprofile", "/home/u/dotfiles/zprofile")
            .file("/home/u/notes.txt", "")
            .file("/home/u/.pam_environment", "")
            .file("/srv/acct/.bashrc", "");
        let mut p = PermissionProfile::builtin("workspace-write").unwrap();
        p.filesystem = FilesystemPolicy::Restricted {
            default: Access::Read,
            entries: vec![
                FsEntry::new(":workspace", Access::Write),
                FsEntry::new("/home/u", Access::Write),
                FsEntry::new("/srv/acct", Access::Write),
                FsEntry::new("/home/u/.kshrc", Access::Write),
                FsEntry::new(":home/.ssh", Access::Deny),
            ],
            protect_metadata: true,
        };
        let mut c = ctx("/home/u/proj");
        c.account_home = Some("/srv/acct".into());
        let r = resolve(&p, &c, &fs).unwrap();
        let protected = |path: &str| {
            r.filesystem.protected().iter().any(|e| {
                e.path == Path::new(path)
                    && matches!(&e.origin, EntryOrigin::Protected { reason }
                        if reason.contains("shell start-up file"))
            })
        };
        for f in [
            "/home/u/.bashrc",
            "/home/u/.profile",
            "/home/u/dotfiles/zshrc",
            "/srv/acct/.bashrc",
        ] {
            assert_eq!(access(&r, &fs, f), Access::Read, "{f}");
            assert!(protected(f), "{f}");
        }
        // PAM's environment file: read-only too, with its own reason.
        assert_eq!(access(&r, &fs, "/home/u/.pam_environment"), Access::Read);
        assert!(r.filesystem.protected().iter().any(|e| {
            e.path == Path::new("/home/u/.pam_environment")
                && matches!(&e.origin, EntryOrigin::Protected { reason }
                    if reason.contains("login session file"))
        }));
        let kept: Vec<&Path> = r.kept_absent.iter().map(|(p, _)| p.as_path()).collect();
        for f in [
            "/home/u/.bash_profile",
            "/home/u/.bash_login",
            "/home/u/.zshenv",
            "/home/u/.config/fish/config.fish",
            "/home/u/dotfiles/zprofile",
            "/srv/acct/.profile",
            "/home/u/.xprofile",
            "/home/u/.xsessionrc",
            "/home/u/.config/environment.d",
            // fish's start-up directories, as its config.fish.
            "/home/u/.config/fish/conf.d",
            "/home/u/.config/fish/functions",
            // Attack pass 246 #2.
            "/home/u/.login",
            "/home/u/.config/nushell/env.nu",
            "/home/u/.local/share/systemd/user",
            "/home/u/.local/share/dbus-1/services",
            "/home/u/.rhosts",
        ] {
            assert!(kept.contains(&Path::new(f)), "{f}: {kept:?}");
            // No placeholder: no protected entry on the missing path.
            assert!(
                !r.filesystem
                    .protected()
                    .iter()
                    .any(|e| e.path == Path::new(f)),
                "{f}"
            );
            assert_eq!(access(&r, &fs, f), Access::Write, "{f}");
        }
        assert!(r
            .kept_absent
            .iter()
            .all(|(_, t)| crate::login_files::is_login_tool(t)));
        // Named by the user: theirs. Under a deny: hidden already, nothing to sweep.
        assert!(!kept.contains(&Path::new("/home/u/.kshrc")), "{kept:?}");
        assert_eq!(access(&r, &fs, "/home/u/.kshrc"), Access::Write);
        assert!(
            !kept.iter().any(|p| p.starts_with("/home/u/.ssh")),
            "{kept:?}"
        );
        // Twin: the rest of the home is writable.
        assert_eq!(access(&r, &fs, "/home/u/notes.txt"), Access::Write);
        assert_eq!(access(&r, &fs, "/home/u/.cache/x"), Access::Write);
        // Twin: the workspace alone holds no home's login files.
        let p = restricted(vec![FsEntry::new(":workspace", Access::Write)]);
        let r = resolve(&p, &ctx("/home/u/proj"), &fs).unwrap();
        assert!(r.kept_absent.is_empty(), "{:?}", r.kept_absent);
        assert_eq!(access(&r, &fs, "/home/u/.bashrc"), Access::Read);
        assert!(!r
            .filesystem
            .protected()
            .iter()
            .any(|e| e.path.starts_with("/home/u/.bashrc")));
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

    /// A `$TMPDIR` that resolves (through a symlink) to the workspace does not exempt the
    /// workspace from its protected paths.
    #[test]
    fn tmpdir_linked_to_the_workspace_keeps_its_protection() {
        let fs = fs().symlink("/tmp/ws", "/home/u/proj");
        let p = restricted(vec![
            FsEntry::new(":workspace", Access::Write),
            FsEntry::new(":tmp", Access::Write),
        ]);
        let mut c = ctx("/home/u/proj");
        c.tmpdir = Some("/tmp/ws".into());
        let r = resolve(&p, &c, &fs).unwrap();
        let p = "/home/u/proj/.git/hooks/pre-commit";
        assert_eq!(
            r.filesystem.access_for(&fs, Path::new(p)).access,
            Access::Read,
            "{p}"
        );
    }

    /// A read grant through a planted symlink that lands under a *dropped* write grant's
    /// target is dropped too: that target is no writable root.
    #[test]
    fn read_grant_under_a_dropped_write_grant_is_dropped() {
        let fs = fs()
            .dir("/etc")
            .file("/etc/shadow", "")
            .symlink("/home/u/proj/wl", "/etc")
            .symlink("/home/u/proj/rl", "/etc/shadow");
        let mut p = restricted(vec![
            FsEntry::new(":workspace", Access::Write),
            FsEntry::new(":workspace/wl", Access::Write),
            FsEntry::new(":workspace/rl", Access::Read),
        ]);
        if let FilesystemPolicy::Restricted { default, .. } = &mut p.filesystem {
            *default = Access::Deny;
        }
        let r = resolve(&p, &ctx("/home/u/proj"), &fs).unwrap();
        assert_eq!(
            access(&r, &fs, "/etc/shadow"),
            Access::Deny,
            "{:?}",
            r.notes
        );
    }

    /// A linked worktree whose common dir is the home directory reached through a
    /// symlinked `$HOME` is refused, as it is for a `$HOME` spelled canonically.
    /// A real git dir (HEAD, objects/, refs/) at `d`, in `fs`.
    fn git_dir(fs: MemFs, d: &str) -> MemFs {
        fs.file(&format!("{d}/HEAD"), "ref: refs/heads/main\n")
            .dir(&format!("{d}/objects"))
            .dir(&format!("{d}/refs/heads"))
            .file(&format!("{d}/config"), "[core]\n")
            .dir(&format!("{d}/hooks"))
    }

    /// Breaker (stop 21): git dirs not named `.git` were not treated as git dirs. (L11) a
    /// `.git` file naming a git dir inside the workspace (`--separate-git-dir=.gitstore`);
    /// (L4) one outside it, granted by `-w` as cordon's own advice says; (L5) a bare
    /// repository inside the workspace (a local `remote.git`); (L6) a cwd inside a bare
    /// repository, even with a planted `.cordon/` in its `hooks/`. In every case the git
    /// dir's hooks and config are read-only; its objects and refs stay writable where the
    /// root is (twins).
    #[test]
    fn git_dirs_not_named_dot_git_keep_hooks_and_config_protected() {
        let p = restricted(vec![FsEntry::new(":workspace", Access::Write)]);
        let base = super::tests::fs;
        // L11
        let fs = git_dir(base(), "/w1/.gitstore").file("/w1/.git", "gitdir: /w1/.gitstore\n");
        let r = resolve(&p, &ctx("/w1"), &fs).unwrap();
        assert_eq!(
            access(&r, &fs, "/w1/.gitstore/hooks/pre-commit"),
            Access::Read
        );
        assert_eq!(access(&r, &fs, "/w1/.gitstore/config"), Access::Read);
        assert_eq!(access(&r, &fs, "/w1/.gitstore/objects/ab"), Access::Write);
        assert_eq!(access(&r, &fs, "/w1/src.rs"), Access::Write);
        // L4
        let fs = git_dir(base(), "/store/p.git")
            .dir("/w2")
            .file("/w2/.git", "gitdir: /store/p.git\n");
        let granted = restricted(vec![
            FsEntry::new(":workspace", Access::Write),
            FsEntry::new("/store/p.git", Access::Write),
        ]);
        let r = resolve(&granted, &ctx("/w2"), &fs).unwrap();
        assert_eq!(
            access(&r, &fs, "/store/p.git/hooks/pre-commit"),
            Access::Read
        );
        assert_eq!(access(&r, &fs, "/store/p.git/config"), Access::Read);
        assert_eq!(access(&r, &fs, "/store/p.git/index"), Access::Write);
        // L5
        let fs = git_dir(base(), "/home/u/proj/remote.git")
            .file("/home/u/proj/.git/HEAD", "ref: refs/heads/main\n");
        let r = resolve(&p, &ctx("/home/u/proj"), &fs).unwrap();
        assert_eq!(
            access(&r, &fs, "/home/u/proj/remote.git/hooks/pre-receive"),
            Access::Read
        );
        assert_eq!(
            access(&r, &fs, "/home/u/proj/remote.git/config"),
            Access::Read
        );
        assert_eq!(
            access(&r, &fs, "/home/u/proj/remote.git/objects/ab"),
            Access::Write
        );
        // A bare repository whose `objects` and `refs` an earlier run swapped for symlinks
        // (git still uses it), and one whose `HEAD` is a dangling symlink.
        let fs = base()
            .file("/home/u/proj/.git/HEAD", "ref: refs/heads/main\n")
            .file("/home/u/proj/r.git/HEAD", "ref: refs/heads/main\n")
            .dir("/home/u/proj/r.git/objs")
            .dir("/home/u/proj/r.git/rf")
            .symlink("/home/u/proj/r.git/objects", "/home/u/proj/r.git/objs")
            .symlink("/home/u/proj/r.git/refs", "/home/u/proj/r.git/rf")
            .dir("/home/u/proj/s.git/objects")
            .dir("/home/u/proj/s.git/refs")
            .symlink("/home/u/proj/s.git/HEAD", "/nowhere");
        let r = resolve(&p, &ctx("/home/u/proj"), &fs).unwrap();
        for q in [
            "r.git/hooks/post-receive",
            "r.git/config",
            "s.git/hooks/x",
            "s.git/config",
        ] {
            assert_eq!(
                access(&r, &fs, &format!("/home/u/proj/{q}")),
                Access::Read,
                "{q}"
            );
        }
        // L6, from the hooks dir, with and without a planted marker there.
        for fs in [
            git_dir(base(), "/var/tmp/bare.git"),
            git_dir(base(), "/var/tmp/bare.git").dir("/var/tmp/bare.git/hooks/.cordon/x"),
        ] {
            let r = resolve(&p, &ctx("/var/tmp/bare.git/hooks"), &fs).unwrap();
            assert_eq!(r.workspace, PathBuf::from("/var/tmp/bare.git"));
            assert_eq!(
                access(&r, &fs, "/var/tmp/bare.git/hooks/post-update"),
                Access::Read
            );
            assert_eq!(access(&r, &fs, "/var/tmp/bare.git/config"), Access::Read);
            assert_eq!(
                access(&r, &fs, "/var/tmp/bare.git/refs/heads/x"),
                Access::Write
            );
        }
    }

    /// Breaker (stop 21, second pass): a hostile run can change what marks a git dir
    /// (`HEAD` moved aside, `objects`/`refs` swapped for files, `HEAD` and `commondir` split
    /// from the rest) so that the next run's check misses it while git still uses it. The
    /// check is wider than git's, a recognised git dir's `HEAD` is read-only and its
    /// `objects`/`refs` are pinned, a `commondir` target is protected, the project's own
    /// `gitdir:` target is protected whatever it holds, and `gitdir:` `..` is resolved as
    /// git resolves it.
    #[test]
    fn git_dirs_stay_recognised_after_a_hostile_run() {
        let p = restricted(vec![FsEntry::new(":workspace", Access::Write)]);
        let base = super::tests::fs;
        let fs = base()
            .file("/home/u/proj/.git/HEAD", "ref: refs/heads/main\n")
            // HEAD moved aside
            .dir("/home/u/proj/a.git/objects")
            .dir("/home/u/proj/a.git/refs")
            .file("/home/u/proj/a.git/HEAD.bak", "ref: refs/heads/main\n")
            // objects and refs as files
            .file("/home/u/proj/c.git/HEAD", "ref: refs/heads/main\n")
            .file("/home/u/proj/c.git/objects", "")
            .file("/home/u/proj/c.git/refs", "")
            // HEAD + commondir here, the rest there
            .file("/home/u/proj/d.git/HEAD", "ref: refs/heads/main\n")
            .file("/home/u/proj/d.git/commondir", "../lib/dcommon\n")
            .dir("/home/u/proj/lib/dcommon/hooks")
            .file("/home/u/proj/lib/dcommon/config", "");
        let r = resolve(&p, &ctx("/home/u/proj"), &fs).unwrap();
        for q in [
            "a.git/hooks/post-receive",
            "a.git/config",
            "c.git/config",
            "d.git/config",
            "d.git/commondir",
            "lib/dcommon/hooks/post-receive",
            "lib/dcommon/config",
        ] {
            assert_eq!(
                access(&r, &fs, &format!("/home/u/proj/{q}")),
                Access::Read,
                "{q}"
            );
        }
        let ResolvedFilesystem::Restricted { entries, .. } = &r.filesystem else {
            panic!()
        };
        assert!(entries
            .iter()
            .any(|e| e.path == Path::new("/home/u/proj/a.git/objects")
                && matches!(e.origin, EntryOrigin::Pinned { .. })));
        assert_eq!(
            access(&r, &fs, "/home/u/proj/a.git/objects/ab"),
            Access::Write
        );
        assert_eq!(access(&r, &fs, "/home/u/proj/c.git/objects"), Access::Read);
        // The project's own separate git dir without HEAD, and `gitdir:` through a link.
        let fs = git_dir(base(), "/w1/.gitstore").file("/w1/.git", "gitdir: .gitstore\n");
        let fs = fs.file("/w1/.gitstore/HEAD.bak", "x");
        let r = resolve(&p, &ctx("/w1"), &fs).unwrap();
        assert_eq!(
            access(&r, &fs, "/w1/.gitstore/hooks/pre-commit"),
            Access::Read
        );
        let fs = git_dir(base(), "/w3/store/gs")
            .dir("/w3/store/x")
            .symlink("/w3/sub/lnk", "/w3/store/x")
            .file("/w3/sub/.git", "gitdir: lnk/../gs\n")
            .file("/w3/.git/HEAD", "ref: refs/heads/main\n");
        let r = resolve(&p, &ctx("/w3"), &fs).unwrap();
        assert_eq!(access(&r, &fs, "/w3/store/gs/config"), Access::Read);
        // A nested `.git` file into a package tree whose git dir names a common dir there;
        // a `.git` planted in a bare remote; a `.git` file naming the project's own git
        // dir (its objects stay writable: commits keep working).
        let fs = base()
            .file("/w4/.git/HEAD", "ref: refs/heads/main\n")
            .dir("/w4/.git/objects")
            .file("/w4/sub/.git", "gitdir: ../node_modules/gs\n")
            .file("/w4/node_modules/gs/HEAD", "ref: refs/heads/main\n")
            .file("/w4/node_modules/gs/commondir", "../c\n")
            .file("/w4/node_modules/c/config", "")
            .dir("/w4/node_modules/c/objects")
            .file("/w4/x/.git", "gitdir: ../.git\n");
        let fs = git_dir(fs, "/w4/remote.git");
        let r = resolve(&p, &ctx("/w4"), &fs).unwrap();
        assert_eq!(access(&r, &fs, "/w4/node_modules/c/config"), Access::Read);
        assert_eq!(access(&r, &fs, "/w4/remote.git/.git"), Access::Read);
        assert_eq!(access(&r, &fs, "/w4/.git/objects/ab"), Access::Write);
        assert!(
            r.notes
                .iter()
                .any(|n| n.contains("/w4/x/.git: a .git file naming the project's own git dir")),
            "{:?}",
            r.notes
        );
        // A git dir hidden in `.git/objects`, and a symlinked `.git` whose target names a
        // common dir in a package tree.
        let fs = git_dir(base(), "/w5/.git/objects/evil")
            .file("/w5/.git/HEAD", "ref: refs/heads/main\n")
            .file("/w5/y/.git", "gitdir: ../.git/objects/evil\n")
            .file("/w5/node_modules/gs2/HEAD", "ref: refs/heads/main\n")
            .file("/w5/node_modules/gs2/commondir", "../c2\n")
            .file("/w5/node_modules/c2/config", "")
            .symlink("/w5/sub2/.git", "/w5/node_modules/gs2");
        let r = resolve(&p, &ctx("/w5"), &fs).unwrap();
        assert_eq!(
            access(&r, &fs, "/w5/.git/objects/evil/config"),
            Access::Read
        );
        assert_eq!(access(&r, &fs, "/w5/.git/objects/ab"), Access::Write);
        assert_eq!(access(&r, &fs, "/w5/node_modules/c2/config"), Access::Read);
    }

    /// Breaker (stop 21): `-w link/..` named the parent of wherever a planted link leads,
    /// and the spelling no longer showed the link; a grant spelled so is refused. A deny
    /// spelled so hides the real file (twin).
    #[test]
    fn a_grant_whose_dotdot_leaves_through_a_symlink_is_refused() {
        let fs = fs()
            .dir("/home/u/.local/bin/x")
            .symlink("/home/u/proj/b", "/home/u/.local/bin/x");
        let p = restricted(vec![
            FsEntry::new(":workspace", Access::Write),
            FsEntry::new("/home/u/proj/b/..", Access::Write),
        ]);
        let e = resolve(&p, &ctx("/home/u/proj"), &fs).unwrap_err();
        assert!(matches!(e, ResolveError::DotDotThroughLink { .. }), "{e}");
        // It names where the spelling leads now, to spell instead (new-user pass 182 #5).
        assert!(
            e.to_string().contains("it leads to /home/u/.local/bin now"),
            "{e}"
        );
        let p = restricted(vec![
            FsEntry::new(":workspace", Access::Write),
            FsEntry::new("/home/u/proj/b/../x", Access::Deny),
        ]);
        let r = resolve(&p, &ctx("/home/u/proj"), &fs).unwrap();
        assert_eq!(access(&r, &fs, "/home/u/.local/bin/x/y"), Access::Deny);
        // New-user pass 245 #1: a link outside the workspace and every earlier writable
        // root (the user's own: a home reached through a symlink) is followed; in an
        // earlier run's root, refused again.
        let fs = fs
            .dir("/data/home/u/proj/.git/objects")
            .dir("/data/home/u/somedir")
            .symlink("/links/u", "/data/home/u");
        let p = restricted(vec![
            FsEntry::new(":workspace", Access::Write),
            FsEntry::new("/links/u/proj/../somedir", Access::Write),
        ]);
        let r = resolve(&p, &ctx("/data/home/u/proj"), &fs).unwrap();
        assert_eq!(access(&r, &fs, "/data/home/u/somedir/f"), Access::Write);
        let mut c = ctx("/data/home/u/proj");
        c.earlier_roots = vec!["/links".into()];
        let e = resolve(&p, &c, &fs).unwrap_err();
        assert!(matches!(e, ResolveError::DotDotThroughLink { .. }), "{e}");
    }

    /// Breaker (stop 21): a project root an earlier run made unlistable (`chmod 311`) hid
    /// every nested repository from the scan, silently; it is now refused with what to do.
    #[test]
    fn an_unlistable_writable_root_is_refused() {
        let mem = fs().file("/home/u/proj/.git/HEAD", "ref: refs/heads/main\n");
        let view = Unlistable(&mem, &["/home/u/proj"]);
        let p = PermissionProfile::builtin("workspace-write").unwrap();
        let e = resolve(&p, &ctx("/home/u/proj"), &view).unwrap_err();
        assert!(e.to_string().contains("chmod u+rwx /home/u/proj"), "{e}");
    }

    /// Breaker (stop 21): a `$TMPDIR` holding a bare repository (or inside one) is not made
    /// writable (it carries no protected paths), as for one holding a `.git` project; an
    /// empty temp directory still is (twin).
    #[test]
    fn tmpdir_holding_a_bare_repository_is_not_writable() {
        let p = PermissionProfile::builtin("workspace-write").unwrap();
        let fs = git_dir(super::tests::fs(), "/var/tmp/tb/r.git").dir("/var/tmp/empty");
        for (t, writable) in [
            ("/var/tmp/tb", false),
            ("/var/tmp/tb/r.git/hooks", false),
            ("/var/tmp/empty", true),
        ] {
            let mut c = ctx("/home/u/proj");
            c.tmpdir = Some(t.into());
            let r = resolve(&p, &c, &fs).unwrap();
            let probe = format!("{t}/x");
            let want = if writable {
                Access::Write
            } else {
                Access::Read
            };
            assert_eq!(access(&r, &fs, &probe), want, "{t}: {:?}", r.notes);
        }
    }

    #[test]
    fn worktree_common_dir_at_a_symlinked_home_is_refused() {
        let fs = MemFs::new()
            .dir("/data/u/proj")
            .file("/data/u/proj/.git", "gitdir: /data/u/worktrees/w\n")
            .file("/data/u/worktrees/w/gitdir", "/data/u/proj/.git\n")
            .file("/data/u/HEAD", "ref: refs/heads/main\n")
            .dir("/data/u/objects")
            .dir("/data/u/refs")
            .symlink("/home/u", "/data/u")
            .dir("/tmp");
        let p = restricted(vec![FsEntry::new(":workspace", Access::Write)]);
        let r = resolve(&p, &ctx("/home/u/proj"), &fs).unwrap();
        assert_eq!(r.workspace, PathBuf::from("/data/u/proj"));
        assert_eq!(access(&r, &fs, "/data/u/refs/heads/x"), Access::Read);
        assert!(
            r.notes
                .iter()
                .any(|n| n.contains("not a usable linked worktree")),
            "{:?}",
            r.notes
        );
    }

    /// A planted "common dir" whose `refs`/`objects`/`logs` are symlinks (to another
    /// repository's hooks, to `$HOME`) is not a real git dir: nothing derived from it is
    /// granted writable (security finding: fake linked worktree).
    #[test]
    fn fake_common_dir_with_symlinked_children_grants_nothing() {
        let base = || {
            MemFs::new()
                .dir("/p/sub")
                .dir("/victim/.git/hooks")
                .dir("/home/u")
                .file("/p/sub/.git", "gitdir: /p/fr/worktrees/wt\n")
                .file("/p/fr/worktrees/wt/gitdir", "/p/sub/.git\n")
                .file("/p/fr/worktrees/wt/commondir", "../..\n")
                .file("/p/fr/worktrees/wt/HEAD", "ref: refs/heads/master\n")
                .file("/p/fr/HEAD", "ref: refs/heads/master\n")
        };
        let p = restricted(vec![FsEntry::new(":workspace", Access::Write)]);
        let cases = [
            base()
                .symlink("/p/fr/refs", "/victim/.git/hooks")
                .symlink("/p/fr/objects", "/home/u"),
            base()
                .dir("/p/fr/refs")
                .dir("/p/fr/objects")
                .symlink("/p/fr/logs", "/home/u"),
        ];
        for fs in cases {
            let r = resolve(&p, &ctx("/p/sub"), &fs).unwrap();
            assert_eq!(access(&r, &fs, "/p/fr/x"), Access::Read);
            assert_eq!(access(&r, &fs, "/p/fr/worktrees/wt/index"), Access::Read);
            assert_eq!(access(&r, &fs, "/home/u/x"), Access::Read);
            assert_eq!(access(&r, &fs, "/victim/.git/hooks/x"), Access::Read);
            assert!(
                r.notes.iter().any(|n| n.contains("not a real git dir")),
                "{:?}",
                r.notes
            );
        }
        // The gitdir named through a symlink to the real repository's git dir.
        let fs = MemFs::new()
            .dir("/p/sub")
            .dir("/repo/.git/objects")
            .dir("/repo/.git/refs")
            .file("/repo/.git/HEAD", "ref: refs/heads/main\n")
            .file("/repo/.git/worktrees/wt/gitdir", "/p/sub/.git\n")
            .symlink("/p/lnk", "/repo/.git")
            .file("/p/sub/.git", "gitdir: /p/lnk/worktrees/wt\n");
        let r = resolve(&p, &ctx("/p/sub"), &fs).unwrap();
        assert_eq!(access(&r, &fs, "/repo/.git/objects/x"), Access::Read);
    }

    /// Still works: the same layout built by git (real children) is granted.
    #[test]
    fn real_common_dir_is_still_granted() {
        let fs = MemFs::new()
            .dir("/p/sub")
            .dir("/p/fr/refs")
            .dir("/p/fr/objects")
            .file("/p/sub/.git", "gitdir: /p/fr/worktrees/wt\n")
            .file("/p/fr/worktrees/wt/gitdir", "/p/sub/.git\n")
            .file("/p/fr/worktrees/wt/commondir", "../..\n")
            .file("/p/fr/HEAD", "ref: refs/heads/master\n");
        let p = restricted(vec![FsEntry::new(":workspace", Access::Write)]);
        let r = resolve(&p, &ctx("/p/sub"), &fs).unwrap();
        assert_eq!(access(&r, &fs, "/p/fr/objects/x"), Access::Write);
    }

    #[test]
    fn unix_sockets_resolve_and_a_symlinked_engine_socket_needs_consent() {
        let fs = MemFs::new()
            .dir("/home/u/proj/.git/objects")
            .dir("/run/user/1000")
            .file("/run/user/1000/agent.sock", "")
            .file("/run/docker.sock", "")
            .symlink("/run/user/1000/innocent.sock", "/run/docker.sock");
        let ctx = ResolveContext {
            cwd: "/home/u/proj".into(),
            home: Some("/home/u".into()),
            ..Default::default()
        };
        let mut p = PermissionProfile::builtin("workspace-write").unwrap();
        p.network_rules.unix_sockets = vec!["/run/user/1000/agent.sock".into()];
        let r = resolve(&p, &ctx, &fs).unwrap();
        assert_eq!(
            r.unix_sockets,
            vec![PathBuf::from("/run/user/1000/agent.sock")]
        );
        p.network_rules.unix_sockets = vec!["/run/user/1000/innocent.sock".into()];
        let e = resolve(&p, &ctx, &fs).unwrap_err().to_string();
        assert!(
            e.contains("/run/docker.sock") && e.contains("innocent.sock"),
            "{e}"
        );
        p.network_rules.i_understand_host_root = true;
        let r = resolve(&p, &ctx, &fs).unwrap();
        assert_eq!(r.unix_sockets, vec![PathBuf::from("/run/docker.sock")]);
    }
}
