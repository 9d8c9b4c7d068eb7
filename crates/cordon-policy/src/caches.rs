//! Package caches of toolchains (issue 11, R-C1): which directories they are, and how a
//! confined command sees them.
//!
//! The host's caches hold code every later build runs (`~/.cargo/registry/src` is compiled
//! by each `cargo build` on the host), so a confined command must never write them. With
//! the default [`CacheMode::Overlay`] each known cache that the profile leaves readable
//! (not writable, not denied) is shown inside with the host's warm contents and a private,
//! per-workspace writable layer on top (an overlay mount in the sandbox's mount namespace,
//! upper and work dirs under `~/.cache/cordon/overlays/<workspace-key>/<cache-name>/`):
//! the next run in the same workspace sees what the last one downloaded, the host cache is
//! unchanged. The state root `~/.cache/cordon/overlays` itself is hidden inside every
//! sandbox (so an explicit `-w ~/.cache` cannot reach another workspace's layers).
//!
//! This module is pure: the table ([`KNOWN_CACHES`]), the modes, the per-workspace key and
//! [`resolve_caches`], which turns them into [`ResolvedCache`]s for one workspace.

use crate::paths::{canonicalize_lenient, lexical_normalize, FileKind, FsView};
use crate::profile::Access;
use crate::resolve::ResolvedFilesystem;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::fmt;
use std::path::{Path, PathBuf};

/// How the known package caches are shown inside (config `caches = "…"`, R-C1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CacheMode {
    /// Host contents visible, writes go to a private per-workspace layer (default).
    #[default]
    Overlay,
    /// Host contents visible, read-only (writes fail with `EROFS`; cordon prints a hint
    /// when the command fails).
    ReadOnly,
    /// The host cache itself is writable (as with `-w`): a confined command can poison
    /// what later unconfined builds run. Only for caches that exist.
    Shared,
}

impl fmt::Display for CacheMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            CacheMode::Overlay => "overlay",
            CacheMode::ReadOnly => "read-only",
            CacheMode::Shared => "shared",
        })
    }
}

/// A cache directory: a short name (used as the overlay directory name) and where it
/// lives, relative to the home directory.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CacheSpec {
    /// Short unique name, `[a-z0-9._-]+` (e.g. `cargo-registry`).
    pub name: String,
    /// Path relative to `$HOME` (`.cargo/registry`); `~/` and `:home/` prefixes accepted.
    pub path: String,
    /// The tool it belongs to (shown in tables).
    #[serde(default)]
    pub tool: String,
}

/// One row of the built-in table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KnownCache {
    /// Short unique name.
    pub name: &'static str,
    /// Relative to `$HOME`.
    pub path: &'static str,
    /// The tool.
    pub tool: &'static str,
}

/// The built-in table of toolchain caches (rendered into the README; extended by a
/// profile's `extra_caches`).
pub const KNOWN_CACHES: &[KnownCache] = &[
    KnownCache {
        name: "cargo-registry",
        path: ".cargo/registry",
        tool: "cargo",
    },
    KnownCache {
        name: "cargo-git",
        path: ".cargo/git",
        tool: "cargo",
    },
    KnownCache {
        name: "npm",
        path: ".npm",
        tool: "npm",
    },
    KnownCache {
        name: "yarn",
        path: ".cache/yarn",
        tool: "yarn (v1)",
    },
    KnownCache {
        name: "yarn-berry",
        path: ".yarn/berry/cache",
        tool: "yarn (berry)",
    },
    KnownCache {
        name: "pnpm-store",
        path: ".local/share/pnpm/store",
        tool: "pnpm",
    },
    KnownCache {
        name: "pip",
        path: ".cache/pip",
        tool: "pip",
    },
    KnownCache {
        name: "uv",
        path: ".cache/uv",
        tool: "uv",
    },
    KnownCache {
        name: "go-mod",
        path: "go/pkg/mod",
        tool: "go (modules)",
    },
    KnownCache {
        name: "go-build",
        path: ".cache/go-build",
        tool: "go (build cache)",
    },
    KnownCache {
        name: "maven",
        path: ".m2/repository",
        tool: "maven",
    },
    KnownCache {
        name: "gradle",
        path: ".gradle/caches",
        tool: "gradle",
    },
];

/// The overlay state root under a home directory: `<home>/.cache/cordon/overlays`.
pub fn overlay_root(home: &Path) -> PathBuf {
    home.join(".cache/cordon/overlays")
}

/// The key of a workspace's overlay directory: its base name (sanitised, at most 32
/// bytes) and the first 16 hex digits of the SHA-256 of its canonical path, e.g.
/// `proj-3f2a…`. Distinct workspaces get distinct keys; the name is for humans.
pub fn workspace_key(workspace: &Path) -> String {
    use std::os::unix::ffi::OsStrExt;
    let digest = Sha256::digest(workspace.as_os_str().as_bytes());
    let hex: String = digest.iter().take(8).map(|b| format!("{b:02x}")).collect();
    let base: String = workspace
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "root".into())
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .take(32)
        .collect();
    format!("{base}-{hex}")
}

/// Whether `name` is usable as a cache name (a single safe path component).
pub fn valid_cache_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name != "."
        && name != ".."
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

/// Every cache of a profile: the built-in table, then `extra` (an extra entry with a
/// built-in name replaces that row).
pub fn all_caches(extra: &[CacheSpec]) -> Vec<CacheSpec> {
    let mut out: Vec<CacheSpec> = KNOWN_CACHES
        .iter()
        .filter(|k| !extra.iter().any(|e| e.name == k.name))
        .map(|k| CacheSpec {
            name: k.name.into(),
            path: k.path.into(),
            tool: k.tool.into(),
        })
        .collect();
    out.extend(extra.iter().cloned());
    out
}

/// Strips `~/` or `:home/` from a cache path.
fn home_relative(p: &str) -> &str {
    p.strip_prefix("~/")
        .or_else(|| p.strip_prefix(":home/"))
        .unwrap_or(p)
        .trim_start_matches('/')
}

/// A known cache as resolved for one run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResolvedCache {
    /// Short name.
    pub name: String,
    /// The tool.
    pub tool: String,
    /// Canonical host path (the overlay's lower layer and its mountpoint).
    pub path: PathBuf,
    /// What the command gets.
    pub mode: CacheMode,
    /// For [`CacheMode::Overlay`]: the directory holding `upper/` and `work/`,
    /// `<home>/.cache/cordon/overlays/<workspace-key>/<name>`.
    pub state: PathBuf,
}

/// The caches of one run, in table order: those that exist on the host and that the
/// profile leaves readable but not writable (a writable one is already the user's choice;
/// a denied one stays hidden). `mode` is the profile's, except that `Shared` caches have
/// become writable entries during resolution and are reported as such. Nothing when the
/// filesystem is unrestricted or `$HOME` is unknown.
pub fn resolve_caches(
    mode: CacheMode,
    extra: &[CacheSpec],
    home: Option<&Path>,
    workspace: &Path,
    filesystem: &ResolvedFilesystem,
    fs: &dyn FsView,
) -> Vec<ResolvedCache> {
    let (Some(home), ResolvedFilesystem::Restricted { .. }) = (home, filesystem) else {
        return Vec::new();
    };
    let home_c = canonicalize_lenient(fs, home);
    let key = workspace_key(workspace);
    let root = overlay_root(&home_c).join(&key);
    let mut out = Vec::new();
    for c in all_caches(extra) {
        if !valid_cache_name(&c.name) {
            continue;
        }
        let spelled = lexical_normalize(Path::new(home_relative(&c.path)), home);
        if !spelled.starts_with(home) {
            continue;
        }
        if fs.kind(&spelled) != Some(FileKind::Dir) {
            continue;
        }
        let path = canonicalize_lenient(fs, &spelled);
        let access = filesystem.access_for(fs, &path).access;
        let effective = match (mode, access) {
            (_, Access::Deny) => continue,
            (CacheMode::Shared, Access::Write) => CacheMode::Shared,
            (_, Access::Write) => continue,
            (CacheMode::Shared, Access::Read) => CacheMode::ReadOnly,
            (m, Access::Read) => m,
        };
        out.push(ResolvedCache {
            state: root.join(&c.name),
            name: c.name,
            tool: c.tool,
            path,
            mode: effective,
        });
    }
    out
}

/// The writable entries `caches = "shared"` adds (`:home/<path>` for every cache in the
/// table that exists), spelled as profile entries so explain names their source.
pub fn shared_entries(extra: &[CacheSpec], home: Option<&Path>, fs: &dyn FsView) -> Vec<String> {
    let Some(home) = home else {
        return Vec::new();
    };
    all_caches(extra)
        .into_iter()
        .map(|c| home_relative(&c.path).to_string())
        .filter(|rel| fs.kind(&lexical_normalize(Path::new(rel), home)) == Some(FileKind::Dir))
        .map(|rel| format!(":home/{rel}"))
        .collect()
}

/// The README table of [`KNOWN_CACHES`] (markdown).
pub fn readme_table() -> String {
    let mut s = String::from("| name | path | tool |\n|---|---|---|\n");
    for k in KNOWN_CACHES {
        s.push_str(&format!("| `{}` | `~/{}` | {} |\n", k.name, k.path, k.tool));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workspace_keys_differ_and_are_single_components() {
        let a = workspace_key(Path::new("/home/u/a/proj"));
        let b = workspace_key(Path::new("/home/u/b/proj"));
        assert_ne!(a, b);
        assert!(a.starts_with("proj-"));
        assert!(valid_cache_name(&a));
        assert!(valid_cache_name(&workspace_key(Path::new("/"))));
        assert!(valid_cache_name(&workspace_key(Path::new("/x/a b/../"))));
    }

    #[test]
    fn names_are_unique_and_valid() {
        let mut names: Vec<&str> = KNOWN_CACHES.iter().map(|k| k.name).collect();
        assert!(names.iter().all(|n| valid_cache_name(n)));
        names.sort();
        names.dedup();
        assert_eq!(names.len(), KNOWN_CACHES.len());
        assert!(!valid_cache_name(".."));
        assert!(!valid_cache_name("a/b"));
    }

    fn resolved(mode: CacheMode, extra: Vec<crate::FsEntry>) -> crate::ResolvedProfile {
        let fs = crate::MemFs::new()
            .dir("/home/u/proj/.git/objects")
            .dir("/home/u/.cargo/registry")
            .dir("/home/u/.npm")
            .dir("/home/u/.cache/pip");
        let mut p = crate::PermissionProfile::builtin("workspace-write").unwrap();
        p.caches = mode;
        p.push_entries(extra);
        let ctx = crate::ResolveContext {
            cwd: "/home/u/proj".into(),
            home: Some("/home/u".into()),
            ..Default::default()
        };
        crate::resolve(&p, &ctx, &fs).unwrap()
    }

    #[test]
    fn modes_resolve_to_what_the_command_gets() {
        let fs = crate::MemFs::new();
        let r = resolved(CacheMode::Overlay, vec![]);
        let names: Vec<&str> = r.caches.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["cargo-registry", "npm", "pip"]);
        assert!(r.caches.iter().all(|c| c.mode == CacheMode::Overlay));
        assert_eq!(
            r.caches[0].state,
            Path::new("/home/u/.cache/cordon/overlays")
                .join(workspace_key(Path::new("/home/u/proj")))
                .join("cargo-registry")
        );
        // The state root is hidden, even under a write grant on ~/.cache.
        let r = resolved(
            CacheMode::Overlay,
            vec![crate::FsEntry::new("/home/u/.cache", Access::Write)],
        );
        let st = r
            .filesystem
            .access_for(&fs, Path::new("/home/u/.cache/cordon/overlays/x"));
        assert_eq!(st.access, Access::Deny);
        // A cache the user made writable is the user's choice: no overlay.
        assert!(!r.caches.iter().any(|c| c.name == "pip"));
        // Denied: stays hidden.
        let r = resolved(
            CacheMode::Overlay,
            vec![crate::FsEntry::new("/home/u/.npm", Access::Deny)],
        );
        assert!(!r.caches.iter().any(|c| c.name == "npm"));
        // Read-only: listed (for the hint), no state root hidden.
        let r = resolved(CacheMode::ReadOnly, vec![]);
        assert!(r.caches.iter().all(|c| c.mode == CacheMode::ReadOnly));
        let st = r
            .filesystem
            .access_for(&fs, Path::new("/home/u/.cache/cordon/overlays"));
        assert_eq!(st.access, Access::Read);
        // Shared: the host caches are writable entries.
        let r = resolved(CacheMode::Shared, vec![]);
        assert!(r.caches.iter().all(|c| c.mode == CacheMode::Shared));
        let st = r
            .filesystem
            .access_for(&fs, Path::new("/home/u/.cargo/registry/cache"));
        assert_eq!(st.access, Access::Write);
    }

    #[test]
    fn readme_shows_the_table() {
        let readme = include_str!("../../../README.md");
        assert!(
            readme.contains(&readme_table()),
            "README.md must contain the table of caches:\n{}",
            readme_table()
        );
    }

    #[test]
    fn extra_caches_replace_by_name() {
        let extra = vec![CacheSpec {
            name: "npm".into(),
            path: "~/.npm-custom".into(),
            tool: "npm".into(),
        }];
        let all = all_caches(&extra);
        assert_eq!(all.iter().filter(|c| c.name == "npm").count(), 1);
        assert!(all.iter().any(|c| c.path == "~/.npm-custom"));
    }
}
