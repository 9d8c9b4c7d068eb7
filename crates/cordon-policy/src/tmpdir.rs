//! The `$TMPDIR` guard (issue 7 item 9): `:tmp` stands for the private `/tmp` plus
//! `$TMPDIR`, and `$TMPDIR` becomes a writable root only when it is a temp-like directory
//! that no other rule protects. Otherwise it is dropped with a note and the command uses the
//! private `/tmp`.
//!
//! Temp-like, judged where `$TMPDIR` resolves (symlinks followed):
//! 1. an existing directory;
//! 2. under a temp tree (`/tmp`, `/var/tmp`, macOS `/private/tmp`,
//!    `/private/var/folders`, `/var/folders`), or one of its path components is named `tmp`,
//!    `temp` or `.tmp` (any case), e.g. `~/tmp`, `/scratch/tmp/u`;
//! 3. not inside a system tree (`/etc`, `/usr`, `/var`, …) other than those temp trees;
//! 4. not `/`, a home directory or above one, the workspace or above it, nor a shared
//!    temp tree itself (`/var/tmp`: other projects' repositories live there);
//! 5. not in, at or above a session runtime directory (`/run/user/<uid>`,
//!    `$XDG_RUNTIME_DIR`): it holds the session's sockets (D-Bus, gpg-agent, systemd's
//!    private socket, cordon serve), and a writable root makes every socket in it
//!    reachable (breaker, stop 8: `TMPDIR=$XDG_RUNTIME_DIR` opened the session bus);
//! 6. not inside another writable root (there it would override that root's protected
//!    paths, e.g. `<ws>/.git/hooks`), not inside or above a deny-read entry, not at or above
//!    a profile/config file.

use crate::paths::{canonicalize_lenient, depth, is_link, lexical_normalize, FileKind, FsView};
use crate::profile::Access;
use crate::resolve::{EntryOrigin, ResolveContext, ResolvedEntry};
use std::path::{Path, PathBuf};

/// What the guard needs to know besides the path.
pub(crate) struct TmpdirFacts<'a> {
    /// Canonical home directories.
    pub homes: &'a [PathBuf],
    /// Canonical workspace.
    pub workspace: &'a Path,
    /// Canonical profile/config files.
    pub profile_files: &'a [PathBuf],
    /// Every other resolved entry so far (writable roots, deny entries).
    pub entries: &'a [ResolvedEntry],
    /// The session's runtime directory (`$XDG_RUNTIME_DIR`, canonical), if known.
    pub runtime_dir: Option<&'a Path>,
}

/// Why `$TMPDIR`, resolving to `c`, must not become a writable root; `None` = temp-like.
pub(crate) fn tmpdir_refusal(fs: &dyn FsView, c: &Path, f: &TmpdirFacts) -> Option<String> {
    if fs.kind(c) != Some(FileKind::Dir) {
        return Some("it is not an existing directory".into());
    }
    if depth(c) == 0 {
        return Some("it is `/`".into());
    }
    if let Some(h) = f.homes.iter().find(|h| h.starts_with(c)) {
        return Some(format!(
            "it is the home directory {} or above it",
            h.display()
        ));
    }
    if f.workspace.starts_with(c) {
        return Some("it is the workspace or above it".into());
    }
    let runtime = f
        .runtime_dir
        .filter(|r| c.starts_with(r) || r.starts_with(c))
        .or_else(|| c.starts_with("/run/user").then_some(c));
    if let Some(r) = runtime {
        return Some(format!(
            "it is (in or above) the session runtime directory {}, which holds the \
             session's sockets (D-Bus, gpg-agent, systemd)",
            r.display()
        ));
    }
    for e in f.entries {
        if e.path == c {
            continue;
        }
        if e.access == Access::Write && e.is_dir && !from_tmp(e) && c.starts_with(&e.path) {
            return Some(format!(
                "it lies inside the writable root {}, whose protected paths it would override",
                e.path.display()
            ));
        }
        if e.access == Access::Deny && (c.starts_with(&e.path) || e.path.starts_with(c)) {
            return Some(format!(
                "it is inside or above the deny-read entry {}",
                e.path.display()
            ));
        }
    }
    if let Some(t) = crate::paths::TEMP_TREES.iter().find(|t| c == Path::new(t)) {
        return Some(format!(
            "it is the shared temp directory {t} itself, where other users and projects keep \
             their files (repositories among them, whose hooks it would open); use a \
             directory of your own in it, e.g. {t}/$USER"
        ));
    }
    if let Some(p) = f.profile_files.iter().find(|p| p.starts_with(c)) {
        return Some(format!("it holds the cordon configuration {}", p.display()));
    }
    let in_temp_tree = crate::paths::TEMP_TREES.iter().any(|t| c.starts_with(t));
    if let Some(t) = crate::paths::REBUILT_TREES
        .iter()
        .find(|t| c.starts_with(t))
    {
        return Some(format!(
            "it lies under {t}, which the sandbox rebuilds for every command (a private, \
             empty /dev/shm and a new /proc): the host directory would not be there"
        ));
    }
    if crate::paths::in_system_tree(c, None) {
        return Some("it lies in a system tree".into());
    }
    let temp_named = c.components().any(|comp| {
        let s = comp.as_os_str().to_string_lossy().to_ascii_lowercase();
        matches!(s.as_str(), "tmp" | "temp" | ".tmp")
    });
    if !in_temp_tree && !temp_named {
        return Some(
            "it is not a temp directory (not under /tmp or /var/tmp, and \
             no path component is named tmp or temp)"
                .into(),
        );
    }
    // Last: the only check that lists a directory (on every run with such a `$TMPDIR`).
    if let Some(repo) = holds_a_project(fs, c) {
        return Some(format!(
            "it holds the project {} (its `.git`/`.cordon` would be writable with no \
             protected paths, and git runs its hooks outside any sandbox); use an empty \
             temp directory of your own",
            repo.display()
        ));
    }
    None
}

/// Entries [`holds_a_project`] looks at in all, and how deep it goes below `$TMPDIR`.
const SCAN_CAP: usize = 4096;
const SCAN_DEPTH: usize = 4;

/// A project (a directory holding `.git` or `.cordon`, or a git dir) at `c` or below it,
/// or a git dir enclosing `c`, if any: a temp
/// directory that holds repositories (`TMPDIR=/var/tmp/u` with scratch clones) is not made
/// a writable root, since temp roots carry no protected paths (breaker, stop 18; a clone
/// two levels down was missed by a one-level look). Bounded: [`SCAN_DEPTH`] levels and
/// [`SCAN_CAP`] entries in all; a tree larger than that counts as holding one (fail
/// closed: the command then gets the private `/tmp`).
fn holds_a_project(fs: &dyn FsView, c: &Path) -> Option<PathBuf> {
    // A git dir itself (a bare repository) counts too (breaker, stop 21), and so does one
    // that encloses `c`.
    if let Some(g) = crate::git::enclosing_git_dir(fs, c) {
        return Some(g);
    }
    let marked = |d: &Path| {
        [".git", ".cordon"]
            .iter()
            .any(|m| fs.kind(&d.join(m)).is_some())
            || crate::git::looks_like_git_dir(fs, d)
    };
    let mut seen = 0usize;
    let mut level = vec![c.to_path_buf()];
    for _ in 0..=SCAN_DEPTH {
        let mut next = Vec::new();
        for d in level {
            if marked(&d) {
                return Some(d);
            }
            let names = fs.list_dir(&d, SCAN_CAP + 1 - seen);
            seen += names.len();
            if seen > SCAN_CAP {
                return Some(c.join("…"));
            }
            next.extend(
                names
                    .into_iter()
                    .map(|n| d.join(n))
                    .filter(|p| fs.kind(p) == Some(FileKind::Dir) && !is_link(fs, p)),
            );
        }
        if next.is_empty() {
            return None;
        }
        level = next;
    }
    // Deeper than looked: fail closed.
    Some(c.join("…"))
}

/// Whether `e` came from a `:tmp` spelling.
pub(crate) fn from_tmp(e: &ResolvedEntry) -> bool {
    matches!(&e.origin, EntryOrigin::Profile { spelling, .. } if spelling.starts_with(":tmp"))
}

/// Removes every non-deny `:tmp` entry that lies under `$TMPDIR` (as spelled) when
/// `$TMPDIR` fails [`tmpdir_refusal`], with a note naming it and the reason. Returns the
/// refused `$TMPDIR` (the command's `TMPDIR` is then pointed at the private `/tmp`).
pub(crate) fn drop_unsafe_tmpdir(
    fs: &dyn FsView,
    ctx: &ResolveContext,
    homes: &[PathBuf],
    workspace: &Path,
    out: &mut Vec<ResolvedEntry>,
    notes: &mut Vec<String>,
) -> Option<PathBuf> {
    let t = crate::paths::physical_normalize(fs, ctx.tmpdir.as_ref()?, &ctx.cwd);
    if t == Path::new("/tmp") {
        return None;
    }
    // `:tmp` never expanded to a `$TMPDIR` that is `/`, a home or above one, or the
    // workspace or above it (`resolve::expand_for`): refused just the same, with the same
    // note and the command pointed at the private /tmp (breaker: it was dropped silently).
    let lexical_homes: Vec<PathBuf> = ctx
        .home
        .iter()
        .chain(ctx.account_home.iter())
        .map(|h| lexical_normalize(h, Path::new("/")))
        .collect();
    if crate::resolve::tmp_too_wide(&t, &lexical_homes, workspace)
        || crate::resolve::tmp_too_wide(&t, homes, workspace)
    {
        let note = format!(
            "$TMPDIR {} is not made writable: it is `/`, a home directory or above one, or \
             the workspace or above it; temporary files go to the private /tmp",
            t.display()
        );
        if !notes.contains(&note) {
            notes.push(note);
        }
        return Some(t);
    }
    // A `$TMPDIR` the person made writable themselves (`-w "$TMPDIR"`) is shared on
    // purpose: kept, and no note (new-user pass nu28, F5).
    if ctx.private_tmpdir
        && out
            .iter()
            .any(|e| e.access == Access::Write && !from_tmp(e) && e.path == t)
    {
        return None;
    }
    let mut refused = None;
    let runtime_dir = ctx
        .runtime_dir
        .as_ref()
        .filter(|r| r.is_absolute())
        .map(|r| canonicalize_lenient(fs, &lexical_normalize(r, Path::new("/"))));
    let profile_files: Vec<PathBuf> = ctx
        .profile_files
        .iter()
        .map(|f| crate::paths::profile_file_path(fs, f, &ctx.cwd))
        .collect();
    let mut i = 0;
    while i < out.len() {
        let e = &out[i];
        if from_tmp(e) && e.access != Access::Deny && e.spelled.starts_with(&t) {
            let others: Vec<ResolvedEntry> = out
                .iter()
                .enumerate()
                .filter(|(j, _)| *j != i)
                .map(|(_, o)| o.clone())
                .collect();
            let facts = TmpdirFacts {
                homes,
                workspace,
                profile_files: &profile_files,
                entries: &others,
                runtime_dir: runtime_dir.as_deref(),
            };
            let why = if ctx.private_tmpdir {
                Some(
                    "host programs and other runs use it too, and a command could rewrite \
                     what they write there and later run"
                        .to_string(),
                )
            } else {
                tmpdir_refusal(fs, &e.path, &facts)
            };
            if let Some(why) = why {
                let note = format!(
                    "$TMPDIR {} (resolves to {}) is not made writable: {why}; temporary \
                     files go to the private /tmp",
                    t.display(),
                    e.path.display()
                );
                if !notes.contains(&note) {
                    notes.push(note);
                }
                out.remove(i);
                refused = Some(t.clone());
                continue;
            }
        }
        i += 1;
    }
    refused
}
