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
use crate::resolve::{EntryOrigin, ResolvedEntry, ResolvedFilesystem};
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
    /// The tool's variable naming the cache's location (`BUN_INSTALL_CACHE_DIR`): when the
    /// cache is missing on the host, the command gets it pointed at a private
    /// per-workspace directory. Empty: none.
    #[serde(default)]
    pub env: String,
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
    /// The tool's variable naming this cache's location (`npm_config_cache`), or `""`:
    /// when the cache is missing on the host, the command gets it pointed at a private
    /// per-workspace directory ([`ResolvedCache::private_dir`]).
    pub env: &'static str,
}

/// A tool's home directory that holds some of the known caches and has one variable for
/// all of it (`CARGO_HOME`): when one of its caches is missing on the host, the whole home
/// gets the copy-on-write layer (or, when the home itself is missing, the variable points
/// at a private per-workspace directory). Its caches' own layers are not used then.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ToolHome {
    /// Short unique name (the layer's directory name).
    pub name: &'static str,
    /// Relative to `$HOME`.
    pub path: &'static str,
    /// The tool.
    pub tool: &'static str,
    /// The variable naming the home.
    pub env: &'static str,
    /// The names of the [`KNOWN_CACHES`] rows inside it.
    pub caches: &'static [&'static str],
    /// Other top-level entries of the home that are downloads, not configuration, and
    /// that its layer keeps between runs (see [`kept_in_layer`]).
    pub kept_state: &'static [&'static str],
}

/// Directory names of programs, libraries and configuration (`bin`, `lib`, `etc`, a version
/// manager's `shims`, …): a cache layer that keeps everything between runs is never made
/// on one, on a path through one, or on a directory holding one (attack passes 40 D2 and
/// 41 E2: what one run left there is what every later run of the project executes).
pub const CODE_DIR_NAMES: &[&str] = &[
    "bin", "sbin", "etc", "lib", "lib32", "lib64", "libexec", "shims",
];

/// Directory names of caches that hold programs a tool runs later, not downloads it reads:
/// pre-commit's hook environments (`~/.cache/pre-commit/repo…/py_env-…/bin/black`, run at
/// every `git commit`), corepack's package managers, the browsers of Playwright and
/// Puppeteer, Bazel's output base, Poetry's and pipx's virtual environments. Named as a
/// cache, but neither a keep-everything layer nor a one-off grant is made on one or below
/// one (attack pass 44, L4; nu23 Q2).
pub const PROGRAM_CACHE_NAMES: &[&str] = &[
    "pre-commit",
    "corepack",
    "ms-playwright",
    "puppeteer",
    "bazel",
    "virtualenvs",
    "pipx",
];

/// Whether a copy-on-write layer that keeps everything between runs (not a whole tool
/// home's, which keeps only its caches) may be made on `path` (canonical), a directory a
/// cache variable of the command's environment `env` names: only where caches live, since
/// what one run left there is what every later run of the project reads — and, in a
/// directory of programs, executes. Refused:
/// - a path through a directory of programs or configuration (`/usr/local/bin`,
///   `~/.local/bin`: attack pass 40, D2, a planted `git`) or through a cache of programs
///   ([`PROGRAM_CACHE_NAMES`]: attack pass 44, L4), or under `/usr`, `/etc`, `/boot`;
/// - a directory not named as a cache: one of its components says `cache`, or it is npm's
///   `.npm` (attack passes 42 H1 and 43 J3: what a directory holds tells only what it is
///   not — `PYTHONPATH` into it ran a planted `sitecustomize.py`, and a default's bare name
///   such as `uv` matched uv's tool area);
/// - a tool's prefix: one holding a [`CODE_DIR_NAMES`] directory or a directory of the
///   command's `PATH` (attack pass 41, E2: `npm_config_cache=/opt/tool`, a planted
///   `bin/git`).
fn may_keep_everything(
    fs: &dyn FsView,
    env: &std::collections::BTreeMap<String, String>,
    path: &Path,
) -> bool {
    let component = |f: &dyn Fn(&str) -> bool| {
        path.components()
            .any(|c| c.as_os_str().to_str().is_some_and(f))
    };
    if component(&|n| CODE_DIR_NAMES.contains(&n) || PROGRAM_CACHE_NAMES.contains(&n))
        || ["/usr", "/etc", "/boot"]
            .iter()
            .any(|t| path.starts_with(t))
    {
        return false;
    }
    let named_cache = component(&|n| n.to_ascii_lowercase().contains("cache"))
        || path.file_name() == Some(std::ffi::OsStr::new(".npm"));
    if !named_cache {
        return false;
    }
    let holds_code = CODE_DIR_NAMES
        .iter()
        .any(|n| fs.kind(&path.join(n)).is_some());
    let holds_path_dir = env.get("PATH").is_some_and(|v| {
        v.split(':')
            .filter(|d| d.starts_with('/'))
            .map(|d| canonicalize_lenient(fs, &lexical_normalize(Path::new(d), Path::new("/"))))
            .any(|d| d.starts_with(path))
    });
    !holds_code && !holds_path_dir
}

/// The tool homes (see [`ToolHome`]).
pub const TOOL_HOMES: &[ToolHome] = &[
    ToolHome {
        name: "cargo-home",
        path: ".cargo",
        tool: "cargo",
        env: "CARGO_HOME",
        caches: &["cargo-registry", "cargo-git"],
        kept_state: &[],
    },
    ToolHome {
        name: "gradle-home",
        path: ".gradle",
        tool: "gradle",
        env: "GRADLE_USER_HOME",
        caches: &["gradle"],
        // Downloaded Gradle distributions (`wrapper/dists`): fetched, not configured.
        kept_state: &["wrapper"],
    },
];

/// What a [`ToolHome`] layer keeps from one run to the next: the names of the entries of
/// its upper directory that are its caches (`registry`, `git` for `~/.cargo`; `caches`,
/// `wrapper` for `~/.gradle`). `None` for any other layer (a cache's own layer is all
/// cache). Everything else a run wrote into a whole-home layer — `~/.cargo/bin/cargo`
/// replaced, a new `config.toml`, a gradle init script, a whiteout hiding the host's file —
/// is discarded before the layer is mounted again, so one run cannot change the tools or
/// configuration of a later run (attack pass 25, A4; "nothing one run does may weaken
/// another").
pub fn kept_in_layer(name: &str) -> Option<Vec<&'static str>> {
    let h = TOOL_HOMES.iter().find(|h| h.name == name)?;
    let mut keep: Vec<&'static str> = h
        .caches
        .iter()
        .filter_map(|c| KNOWN_CACHES.iter().find(|k| k.name == *c))
        .filter_map(|k| k.path.strip_prefix(h.path)?.strip_prefix('/'))
        .collect();
    keep.extend(h.kept_state);
    Some(keep)
}

/// The built-in table of toolchain caches (rendered into the README; extended by a
/// profile's `extra_caches`).
pub const KNOWN_CACHES: &[KnownCache] = &[
    KnownCache {
        name: "cargo-registry",
        path: ".cargo/registry",
        tool: "cargo",
        env: "",
    },
    KnownCache {
        name: "cargo-git",
        path: ".cargo/git",
        tool: "cargo",
        env: "",
    },
    KnownCache {
        name: "npm",
        path: ".npm",
        tool: "npm",
        env: "npm_config_cache",
    },
    KnownCache {
        name: "yarn",
        path: ".cache/yarn",
        tool: "yarn (v1)",
        env: "YARN_CACHE_FOLDER",
    },
    KnownCache {
        name: "yarn-berry",
        path: ".yarn/berry/cache",
        tool: "yarn (berry)",
        env: "",
    },
    KnownCache {
        name: "pnpm-store",
        path: ".local/share/pnpm/store",
        tool: "pnpm",
        env: "",
    },
    KnownCache {
        name: "pip",
        path: ".cache/pip",
        tool: "pip",
        env: "PIP_CACHE_DIR",
    },
    KnownCache {
        name: "uv",
        path: ".cache/uv",
        tool: "uv",
        env: "UV_CACHE_DIR",
    },
    KnownCache {
        name: "go-mod",
        path: "go/pkg/mod",
        tool: "go (modules)",
        env: "GOMODCACHE",
    },
    KnownCache {
        name: "go-build",
        path: ".cache/go-build",
        tool: "go (build cache)",
        env: "GOCACHE",
    },
    KnownCache {
        name: "maven",
        path: ".m2/repository",
        tool: "maven",
        env: "",
    },
    KnownCache {
        name: "gradle",
        path: ".gradle/caches",
        tool: "gradle",
        env: "",
    },
];

/// Whether `var` names a built-in package cache's or tool home's location
/// ([`KnownCache::env`], [`ToolHome::env`]: `npm_config_cache`, `CARGO_HOME`, …).
pub fn is_cache_var(var: &str) -> bool {
    !var.is_empty()
        && (KNOWN_CACHES.iter().any(|k| k.env == var) || TOOL_HOMES.iter().any(|h| h.env == var))
}

/// The overlay state root under a home directory: `<home>/.cache/cordon/overlays`.
pub fn overlay_root(home: &Path) -> PathBuf {
    home.join(".cache/cordon/overlays")
}

/// [`workspace_key`] of `workspace` as `fs` shows it now: its identity and its `.git`'s —
/// unless that is an empty directory (cordon's own placeholder in a workspace without a
/// repository, made by its first run: the key must not change after that run).
pub fn workspace_key_of(fs: &dyn FsView, workspace: &Path) -> String {
    let dotgit = workspace.join(".git");
    let placeholder = fs.kind(&dotgit) == Some(FileKind::Dir) && fs.list_dir(&dotgit, 1).is_empty();
    let marker = if placeholder {
        None
    } else {
        fs.identity(&dotgit)
    };
    workspace_key(workspace, fs.identity(workspace), marker)
}

/// The key of a workspace's overlay directory: its base name (sanitised, at most 32
/// bytes) and the first 16 hex digits of the SHA-256 of its canonical path and its
/// `identity` ([`crate::paths::FsView::identity`]: device, inode, birth time), e.g.
/// `proj-3f2a…`. Distinct workspaces get distinct keys — and so does another directory
/// made later at the same path: a project removed and replaced by an unrelated one (a
/// harness reusing `/workspace`) must not inherit what the first wrote into its layers
/// (attack pass 34, E3: a crate source planted in `~/.cargo/registry/src` ran in the next
/// project's builds). `marker` is the identity of the workspace's `.git` (a directory or a
/// worktree's file), when there is one: a harness that empties a reused `/workspace` and
/// clones the next repository into the same directory keeps the directory's identity, not
/// the `.git`'s (attack pass 35, C1). The name is for humans.
pub fn workspace_key(
    workspace: &Path,
    identity: Option<crate::paths::FileIdentity>,
    marker: Option<crate::paths::FileIdentity>,
) -> String {
    use std::os::unix::ffi::OsStrExt;
    let mut h = Sha256::new();
    h.update(workspace.as_os_str().as_bytes());
    for (tag, id) in [(0u8, identity), (1u8, marker)] {
        if let Some((dev, ino, sec, nsec)) = id {
            h.update([tag]);
            for v in [dev, ino, sec as u64, u64::from(nsec)] {
                h.update(v.to_le_bytes());
            }
        }
    }
    let digest = h.finalize();
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
            env: k.env.into(),
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
    /// `Some(variable)`: the cache is missing on the host (a new user without `~/.npm`).
    /// Nothing is created in the home directory; the command gets `variable` =
    /// [`ResolvedCache::private_dir`], a writable directory kept per workspace, so the
    /// next run in the same workspace sees what this one downloaded. `path` is then the
    /// (missing) host path, for messages only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub env: Option<String>,
}

impl ResolvedCache {
    /// The private directory of a cache missing on the host: `<state>/data`.
    pub fn private_dir(&self) -> PathBuf {
        self.state.join("data")
    }
}

/// The caches of one run, in table order: those that exist on the host and that the
/// profile leaves readable but not writable (a writable one is already the user's choice;
/// a denied one stays hidden). `mode` is the profile's, except that `Shared` caches have
/// become writable entries during resolution and are reported as such, and that a
/// read-only workspace (`--plan`, the `read-only` profile, with or without a `-w`
/// elsewhere) turns `Overlay` into `ReadOnly` (attack pass 26 F1, 27 G2). Nothing when the
/// filesystem is unrestricted or `$HOME` is unknown.
///
/// With [`CacheMode::Overlay`], a cache missing on the host (a new user) is not left
/// unusable: a cache with a variable ([`KnownCache::env`]) gets a private per-workspace
/// directory ([`ResolvedCache::env`]); a cache inside a [`ToolHome`] makes the whole home
/// one layer (an overlay of `~/.cargo` when it exists, else `CARGO_HOME` pointed at a
/// private directory). Nothing is ever created in the home directory. A variable the
/// command's environment `env` already sets wins: no private directory is planned for it
/// (new-user pass nu14: `--dry-run` said `CARGO_HOME` pointed at one the run never used).
pub fn resolve_caches(
    mode: CacheMode,
    extra: &[CacheSpec],
    home: Option<&Path>,
    workspace: &Path,
    filesystem: &ResolvedFilesystem,
    fs: &dyn FsView,
    env: &std::collections::BTreeMap<String, String>,
) -> Vec<ResolvedCache> {
    let (Some(home), ResolvedFilesystem::Restricted { .. }) = (home, filesystem) else {
        return Vec::new();
    };
    // A run whose workspace is read-only (`--plan`, the `read-only` profile, even with a
    // `-w` elsewhere) gets the caches read-only: a copy-on-write layer would persist what
    // it wrote for the workspace's later, writable runs to execute (attack pass 26 F1: a
    // plan-mode run replaced `~/.cargo/bin/cargo` in the layer and the next `cargo build`
    // ran it; 27 G2: one `-w` elsewhere brought the layers back).
    let workspace_writable = filesystem.access_for(fs, workspace).access == Access::Write;
    let mode = if mode == CacheMode::Overlay && !workspace_writable {
        CacheMode::ReadOnly
    } else {
        mode
    };
    let home_c = canonicalize_lenient(fs, home);
    let root = overlay_root(&home_c).join(workspace_key_of(fs, workspace));
    let spelled = |rel: &str| {
        let p = lexical_normalize(Path::new(home_relative(rel)), home);
        p.starts_with(home).then_some(p)
    };
    let present = |rel: &str| spelled(rel).is_some_and(|p| fs.kind(&p) == Some(FileKind::Dir));
    let all = all_caches(extra);
    let homes: Vec<&ToolHome> = TOOL_HOMES
        .iter()
        .filter(|h| {
            mode == CacheMode::Overlay
                && h.caches
                    .iter()
                    .any(|n| all.iter().any(|c| c.name == *n && !present(&c.path)))
        })
        .collect();
    let user_set = |var: &str| env.contains_key(var);
    let layer = |name: &str, tool: &str, at: &Path, env: Option<&str>| -> Option<ResolvedCache> {
        if env.is_some_and(user_set) {
            return None;
        }
        let path = canonicalize_lenient(fs, at);
        let access = filesystem.access_for(fs, &path).access;
        let effective = match (mode, access, env) {
            (_, Access::Deny, _) => return None,
            (CacheMode::Shared, Access::Write, None) => CacheMode::Shared,
            (_, Access::Write, _) => return None,
            (CacheMode::Overlay, Access::Read, _) => CacheMode::Overlay,
            (_, Access::Read, Some(_)) => return None,
            (CacheMode::Shared, Access::Read, None) => CacheMode::ReadOnly,
            (m, Access::Read, None) => m,
        };
        Some(ResolvedCache {
            state: root.join(name),
            name: name.into(),
            tool: tool.into(),
            path,
            mode: effective,
            env: env.map(str::to_string),
        })
    };
    // A cache or tool home the command's environment points elsewhere (`CARGO_HOME`,
    // `npm_config_cache` set to an absolute path that is a directory): the layer is on the
    // directory the tool will use, not on the default under the home, which it never
    // reads (new-user pass nu17 N2: with `CARGO_HOME=/root/.cargo` and another `$HOME`,
    // `cargo fetch` failed on a read-only registry and the hint offered `-w`).
    // Never a top-level directory, nor one holding the home or the workspace: a layer
    // there would put much more than a cache under copy-on-write.
    let pointed = |var: &str| -> Option<PathBuf> {
        let p = Path::new(env.get(var)?);
        if !p.is_absolute() {
            return None;
        }
        let p = canonicalize_lenient(fs, &lexical_normalize(p, Path::new("/")));
        (fs.kind(&p) == Some(FileKind::Dir)
            && p.components().count() > 2
            && !home_c.starts_with(&p)
            && !workspace.starts_with(&p))
        .then_some(p)
    };
    // Its own layer, apart from the default location's (nu18 F8: `~/.cargo`'s and a
    // `CARGO_HOME` elsewhere shared one upper directory over two different lowers).
    // (The default location itself, named by the variable, keeps the default's layer.)
    let layer_pointed = |name: &str,
                         tool: &str,
                         at: &Path,
                         default: &str,
                         in_home: bool|
     -> Option<ResolvedCache> {
        use std::os::unix::ffi::OsStrExt;
        let path = canonicalize_lenient(fs, at);
        let own = spelled(default).is_some_and(|d| canonicalize_lenient(fs, &d) == path);
        // Never over what the profile hides or protects (unless it is the default
        // location, laid out as every default layer is): a layer there would let a
        // command make a missing denied or protected file (git's global config under
        // `npm_config_cache=~/.config`) in the layer, unseen by the cover watch, for
        // every later run of the project (attack pass 39, C3). A whole tool home's
        // layer keeps only its caches between runs: only those must be clear of them.
        let kept = kept_in_layer(name);
        let guarded = |e: &ResolvedEntry| {
            (e.access == Access::Deny || matches!(e.origin, EntryOrigin::Protected { .. }))
                && match &kept {
                    None => e.path.starts_with(&path),
                    Some(k) => k.iter().any(|d| e.path.starts_with(path.join(d))),
                }
        };
        if let ResolvedFilesystem::Restricted { entries, .. } = filesystem {
            if !own && entries.iter().any(guarded) {
                return None;
            }
        }
        // (A cache's own directory inside a tool home the variable names —
        // `$CARGO_HOME/registry` — is one by definition: `in_home`.)
        if !own && !in_home && kept.is_none() && !may_keep_everything(fs, env, &path) {
            return None;
        }
        // The layer as any other ([`layer`]), with a state directory of its own.
        let mut c = layer(name, tool, &path, None)?;
        if c.mode == CacheMode::Shared || own {
            return Some(c);
        }
        let digest = Sha256::digest(path.as_os_str().as_bytes());
        let tag: String = digest[..4].iter().map(|b| format!("{b:02x}")).collect();
        c.state = root.join(format!("{name}-at-{tag}"));
        Some(c)
    };
    let mut out = Vec::new();
    // Each home's variable looked at once.
    let pointed_homes: Vec<(&ToolHome, PathBuf)> = TOOL_HOMES
        .iter()
        .filter_map(|h| pointed(h.env).map(|base| (h, base)))
        .collect();
    // A tool home pointed elsewhere is treated as the default one is: its caches' own
    // layers when they are all there (so `cordon serve` keeps its templates, which a
    // whole-home layer rules out), the whole home as one layer when one is missing.
    for (h, base) in &pointed_homes {
        let subs: Vec<(&CacheSpec, PathBuf)> = all
            .iter()
            .filter(|c| h.caches.contains(&&*c.name))
            .filter_map(|c| {
                let rel = Path::new(home_relative(&c.path))
                    .strip_prefix(h.path)
                    .ok()?;
                Some((c, base.join(rel)))
            })
            .collect();
        let missing = subs.iter().any(|(_, p)| fs.kind(p) != Some(FileKind::Dir));
        if missing && mode == CacheMode::Overlay {
            out.extend(layer_pointed(h.name, h.tool, base, h.path, false));
            continue;
        }
        for (c, p) in subs {
            if fs.kind(&p) == Some(FileKind::Dir) {
                out.extend(layer_pointed(&c.name, &c.tool, &p, &c.path, true));
            }
        }
    }
    for c in &all {
        if !valid_cache_name(&c.name)
            || homes.iter().any(|h| h.caches.contains(&&*c.name))
            || pointed_homes
                .iter()
                .any(|(h, _)| h.caches.contains(&&*c.name))
        {
            continue;
        }
        if !c.env.is_empty() {
            if let Some(at) = pointed(&c.env) {
                out.extend(layer_pointed(&c.name, &c.tool, &at, &c.path, false));
                continue;
            }
        }
        let Some(at) = spelled(&c.path) else {
            continue;
        };
        let found = if fs.kind(&at) == Some(FileKind::Dir) {
            layer(&c.name, &c.tool, &at, None)
        } else if fs.kind(&at).is_none() && mode == CacheMode::Overlay && !c.env.is_empty() {
            layer(&c.name, &c.tool, &at, Some(&c.env))
        } else {
            None
        };
        out.extend(found);
    }
    for h in homes {
        if pointed_homes.iter().any(|(p, _)| *p == h) {
            continue;
        }
        let Some(at) = spelled(h.path) else {
            continue;
        };
        let found = match fs.kind(&at) {
            Some(FileKind::Dir) => layer(h.name, h.tool, &at, None),
            None => layer(h.name, h.tool, &at, Some(h.env)),
            Some(_) => None,
        };
        out.extend(found);
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

/// The README table of [`KNOWN_CACHES`] (markdown), with what a command gets when the
/// cache is missing on the host.
pub fn readme_table() -> String {
    let mut s = String::from("| name | path | tool | when missing |\n|---|---|---|---|\n");
    for k in KNOWN_CACHES {
        let home = TOOL_HOMES.iter().find(|h| h.caches.contains(&k.name));
        let missing = match (k.env, home) {
            ("", Some(h)) => format!("layer on `~/{}`, or `{}`", h.path, h.env),
            ("", None) => "—".to_string(),
            (v, _) => format!("`{v}`"),
        };
        s.push_str(&format!(
            "| `{}` | `~/{}` | {} | {missing} |\n",
            k.name, k.path, k.tool
        ));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A4 (attack pass 25): a whole-home layer keeps only its caches between runs.
    #[test]
    fn whole_home_layers_keep_only_their_caches() {
        assert_eq!(kept_in_layer("cargo-home").unwrap(), ["registry", "git"]);
        assert_eq!(kept_in_layer("gradle-home").unwrap(), ["caches", "wrapper"]);
        assert_eq!(kept_in_layer("cargo-registry"), None);
        assert_eq!(kept_in_layer("npm"), None);
    }

    #[test]
    fn workspace_keys_differ_and_are_single_components() {
        let a = workspace_key(Path::new("/home/u/a/proj"), None, None);
        let b = workspace_key(Path::new("/home/u/b/proj"), None, None);
        assert_ne!(a, b);
        assert!(a.starts_with("proj-"));
        assert!(valid_cache_name(&a));
        assert!(valid_cache_name(&workspace_key(Path::new("/"), None, None)));
        assert!(valid_cache_name(&workspace_key(
            Path::new("/x/a b/../"),
            None,
            None
        )));
        // attack34 E3: another directory at the same path (another inode or birth time)
        // has another key; the same one keeps its key.
        let p = Path::new("/workspace");
        let id = Some((1, 100, 1_700_000_000, 5));
        let first = workspace_key(p, id, None);
        assert_eq!(first, workspace_key(p, id, None));
        assert_ne!(
            first,
            workspace_key(p, Some((1, 101, 1_700_000_000, 5)), None)
        );
        assert_ne!(
            first,
            workspace_key(p, Some((1, 100, 1_700_000_900, 5)), None)
        );
        // attack35 C1: the same directory with a fresh clone in it (another `.git`).
        let cloned = workspace_key(p, id, Some((1, 200, 1_700_000_100, 0)));
        assert_ne!(first, cloned);
        assert_ne!(
            cloned,
            workspace_key(p, id, Some((1, 201, 1_700_000_200, 0)))
        );
        // The marker is not mistaken for the directory's own identity.
        assert_ne!(workspace_key(p, None, id), first);
        assert!(valid_cache_name(&first));
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
            .dir("/home/u/.cargo/git")
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
        let names: Vec<&str> = r
            .caches
            .iter()
            .filter(|c| c.env.is_none())
            .map(|c| c.name.as_str())
            .collect();
        assert_eq!(names, ["cargo-registry", "cargo-git", "npm", "pip"]);
        assert!(r.caches.iter().all(|c| c.mode == CacheMode::Overlay));
        assert_eq!(
            r.caches[0].state,
            Path::new("/home/u/.cache/cordon/overlays")
                .join(workspace_key(Path::new("/home/u/proj"), None, None))
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

    fn resolved_in(fs: &crate::MemFs, mode: CacheMode) -> Vec<ResolvedCache> {
        let mut p = crate::PermissionProfile::builtin("workspace-write").unwrap();
        p.caches = mode;
        let ctx = crate::ResolveContext {
            cwd: "/home/u/proj".into(),
            home: Some("/home/u".into()),
            ..Default::default()
        };
        crate::resolve(&p, &ctx, fs).unwrap().caches
    }

    /// New-user pass nu14: a cache variable the command's environment sets itself wins,
    /// so no private directory is planned for it (the dry-run said `CARGO_HOME` pointed
    /// at one the run never used). Twin: unset, the private directory is planned.
    #[test]
    fn a_cache_variable_the_user_set_gets_no_private_directory() {
        let fs = crate::MemFs::new().dir("/home/u/proj/.git/objects");
        let mut p = crate::PermissionProfile::builtin("workspace-write").unwrap();
        p.caches = CacheMode::Overlay;
        let mut ctx = crate::ResolveContext {
            cwd: "/home/u/proj".into(),
            home: Some("/home/u".into()),
            ..Default::default()
        };
        ctx.env.insert("CARGO_HOME".into(), "/opt/cargo".into());
        ctx.env
            .insert("PIP_CACHE_DIR".into(), "/var/tmp/pip".into());
        let c = crate::resolve(&p, &ctx, &fs).unwrap().caches;
        assert!(
            !c.iter().any(|c| c.name == "cargo-home" || c.name == "pip"),
            "{c:?}"
        );
        assert!(
            c.iter().any(|c| c.name == "npm"),
            "others still planned: {c:?}"
        );
        let c = resolved_in(&fs, CacheMode::Overlay);
        assert!(c.iter().any(|c| c.env.as_deref() == Some("CARGO_HOME")));
    }

    /// New-user pass nu17 N2: a cache or tool home the command's environment points at an
    /// existing directory gets its layer there (the Docker rust image's
    /// `CARGO_HOME=/usr/local/cargo`), not on the default under the home, which the tool
    /// never reads. Twin: a top-level directory, or one holding the home, gets none.
    #[test]
    fn a_cache_the_environment_points_elsewhere_is_layered_there() {
        let fs = crate::MemFs::new()
            .dir("/home/u/proj/.git/objects")
            .dir("/home/u/.cargo/registry")
            .dir("/usr/local/cargo/registry")
            .dir("/srv/cache/npm")
            .dir("/opt");
        let mut p = crate::PermissionProfile::builtin("workspace-write").unwrap();
        p.caches = CacheMode::Overlay;
        let mut ctx = crate::ResolveContext {
            cwd: "/home/u/proj".into(),
            home: Some("/home/u".into()),
            ..Default::default()
        };
        for (k, v) in [
            ("CARGO_HOME", "/usr/local/cargo/"),
            ("npm_config_cache", "/srv/cache/npm"),
            ("PIP_CACHE_DIR", "/opt"),
            ("UV_CACHE_DIR", "/home"),
        ] {
            ctx.env.insert(k.into(), v.into());
        }
        let c = crate::resolve(&p, &ctx, &fs).unwrap().caches;
        let at = |n: &str| c.iter().find(|c| c.name == n).map(|c| c.path.clone());
        // `git/` missing there: the whole home is one layer (as for `~/.cargo`).
        assert_eq!(at("cargo-home"), Some(PathBuf::from("/usr/local/cargo")));
        assert_eq!(at("npm"), Some(PathBuf::from("/srv/cache/npm")));
        assert_eq!(
            at("cargo-registry"),
            None,
            "cargo does not read ~/.cargo: {c:?}"
        );
        assert_eq!(at("pip"), None, "{c:?}");
        assert_eq!(at("uv"), None, "{c:?}");
        assert!(c
            .iter()
            .filter(|c| c.name == "cargo-home" || c.name == "npm")
            .all(|c| c.mode == CacheMode::Overlay && c.env.is_none()));
        // attack39 C3: never a layer over what the profile hides or protects (git's global
        // config and `gh` under `~/.config`).
        let mut ctx2 = ctx.clone();
        ctx2.env
            .insert("npm_config_cache".into(), "/home/u/.config".into());
        let fs2 = fs.clone().dir("/home/u/.config");
        let c2 = crate::resolve(&p, &ctx2, &fs2).unwrap().caches;
        assert!(
            !c2.iter().any(|c| c.path == Path::new("/home/u/.config")),
            "{c2:?}"
        );
        // attack40 D2: nor over a directory of programs or a system tree (it keeps
        // everything for later runs).
        for dir in ["/usr/local/bin", "/usr/local/etc", "/home/u/.local/bin"] {
            let mut ctx3 = ctx.clone();
            ctx3.env.insert("npm_config_cache".into(), dir.into());
            let fs3 = fs.clone().dir(dir);
            let c3 = crate::resolve(&p, &ctx3, &fs3).unwrap().caches;
            assert!(
                !c3.iter().any(|c| c.path == Path::new(dir)),
                "{dir}: {c3:?}"
            );
        }
        // attack41 E2: nor over a tool's prefix: one holding `bin/` (or `shims/`), or one
        // with a directory of the command's PATH in it.
        // (Each named as a cache, so that what refuses it is what it holds.)
        for (dir, fs4, path) in [
            (
                "/opt/tool-cache",
                fs.clone().dir("/opt/tool-cache/bin"),
                None,
            ),
            (
                "/home/u/.cache/pyenv",
                fs.clone().dir("/home/u/.cache/pyenv/shims"),
                None,
            ),
            (
                "/srv/tool-cache",
                fs.clone().dir("/srv/tool-cache/x/y"),
                Some("/usr/bin:/srv/tool-cache/x/y"),
            ),
            // attack42 H1: nor where it is not named as a cache (`PYTHONPATH` into it, a
            // tool prefix reached through a symlink in a PATH directory).
            (
                "/var/tmp/pylibs",
                fs.clone().dir("/var/tmp/pylibs/site"),
                None,
            ),
            (
                "/opt/nodejs",
                fs.clone().dir("/opt/nodejs/node-v20/bin"),
                None,
            ),
            // attack44 L4: nor over a cache of programs (pre-commit's hook environments,
            // whose `bin/` lies deeper than a direct child).
            (
                "/home/u/.cache/pre-commit",
                fs.clone()
                    .dir("/home/u/.cache/pre-commit/repoab12/py_env-python3/bin"),
                None,
            ),
            (
                "/home/u/.cache/ms-playwright",
                fs.clone().dir("/home/u/.cache/ms-playwright/chromium-1"),
                None,
            ),
        ] {
            let mut ctx4 = ctx.clone();
            ctx4.env.insert("npm_config_cache".into(), dir.into());
            if let Some(path) = path {
                ctx4.env.insert("PATH".into(), path.into());
            }
            let c4 = crate::resolve(&p, &ctx4, &fs4).unwrap().caches;
            assert!(
                !c4.iter().any(|c| c.path == Path::new(dir)),
                "{dir}: {c4:?}"
            );
        }
        // attack43 J3: a default's bare name is not a cache's (uv's own tool area).
        let mut ctx6 = ctx.clone();
        ctx6.env
            .insert("UV_CACHE_DIR".into(), "/home/u/.local/share/uv".into());
        let fs6 = fs.clone().dir("/home/u/.local/share/uv/tools");
        let c6 = crate::resolve(&p, &ctx6, &fs6).unwrap().caches;
        assert!(
            !c6.iter()
                .any(|c| c.path == Path::new("/home/u/.local/share/uv")),
            "{c6:?}"
        );
        // Twins: a cache directory (named as one, or npm's `.npm`) with other
        // entries, and the PATH elsewhere, is layered.
        for dir in ["/srv/tool-cache", "/srv/.npm"] {
            let mut ctx5 = ctx.clone();
            ctx5.env.insert("npm_config_cache".into(), dir.into());
            ctx5.env
                .insert("PATH".into(), "/usr/bin:/srv/toolbox/bin".into());
            let fs5 = fs
                .clone()
                .dir(&format!("{dir}/_cacache"))
                .dir("/srv/toolbox/bin");
            let c5 = crate::resolve(&p, &ctx5, &fs5).unwrap().caches;
            assert!(c5.iter().any(|c| c.path == Path::new(dir)), "{dir}: {c5:?}");
        }
        // nu18 F8: a layer of its own, not the one of `~/.cargo` (another lower).
        let state = |n: &str| c.iter().find(|c| c.name == n).map(|c| c.state.clone());
        let home_layer = state("cargo-home").unwrap();
        assert!(
            home_layer
                .file_name()
                .unwrap()
                .to_str()
                .unwrap()
                .starts_with("cargo-home-at-"),
            "{home_layer:?}"
        );
        // Every cache of the home there: each its own layer, no whole-home layer (which
        // would keep `cordon serve` from using a template).
        let fs = fs.dir("/usr/local/cargo/git");
        let c = crate::resolve(&p, &ctx, &fs).unwrap().caches;
        let at = |n: &str| c.iter().find(|c| c.name == n).map(|c| c.path.clone());
        assert_eq!(at("cargo-home"), None, "{c:?}");
        assert_eq!(
            at("cargo-registry"),
            Some(PathBuf::from("/usr/local/cargo/registry"))
        );
        assert_eq!(at("cargo-git"), Some(PathBuf::from("/usr/local/cargo/git")));
    }

    #[test]
    fn missing_caches_get_a_private_place_and_nothing_in_home() {
        // A new user: rustup made ~/.cargo/bin, no registry yet; no ~/.npm, no pip cache.
        let fs = crate::MemFs::new()
            .dir("/home/u/proj/.git/objects")
            .dir("/home/u/.cargo/bin")
            .dir("/home/u/.cache");
        let c = resolved_in(&fs, CacheMode::Overlay);
        let find = |n: &str| c.iter().find(|c| c.name == n);
        let npm = find("npm").expect("npm gets a private directory");
        assert_eq!(npm.env.as_deref(), Some("npm_config_cache"));
        assert_eq!(npm.mode, CacheMode::Overlay);
        assert_eq!(npm.path, Path::new("/home/u/.npm"));
        assert!(npm
            .private_dir()
            .starts_with("/home/u/.cache/cordon/overlays"));
        assert_eq!(
            find("pip").and_then(|c| c.env.as_deref()),
            Some("PIP_CACHE_DIR")
        );
        // ~/.cargo exists without a registry: the whole cargo home is the layer.
        let cargo = find("cargo-home").expect("cargo home layer");
        assert_eq!(
            (cargo.env.as_deref(), cargo.path.as_path()),
            (None, Path::new("/home/u/.cargo"))
        );
        assert!(find("cargo-registry").is_none() && find("cargo-git").is_none());
        // No variable, no place: maven stays as the tool finds it.
        assert!(find("maven").is_none());
        // No ~/.cargo at all: CARGO_HOME points at a private directory.
        let fs = crate::MemFs::new().dir("/home/u/proj/.git/objects");
        let c = resolved_in(&fs, CacheMode::Overlay);
        let cargo = c.iter().find(|c| c.name == "cargo-home").unwrap();
        assert_eq!(cargo.env.as_deref(), Some("CARGO_HOME"));
        // Both cargo caches present: two layers, as before.
        let fs = crate::MemFs::new()
            .dir("/home/u/proj/.git/objects")
            .dir("/home/u/.cargo/registry")
            .dir("/home/u/.cargo/git");
        let names: Vec<String> = resolved_in(&fs, CacheMode::Overlay)
            .iter()
            .filter(|c| c.env.is_none())
            .map(|c| c.name.clone())
            .collect();
        assert_eq!(names, ["cargo-registry", "cargo-git"]);
        // Other modes: nothing private (read-only means read-only).
        let fs = crate::MemFs::new().dir("/home/u/proj/.git/objects");
        assert!(resolved_in(&fs, CacheMode::ReadOnly).is_empty());
        assert!(resolved_in(&fs, CacheMode::Shared).is_empty());
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
            env: String::new(),
        }];
        let all = all_caches(&extra);
        assert_eq!(all.iter().filter(|c| c.name == "npm").count(), 1);
        assert!(all.iter().any(|c| c.path == "~/.npm-custom"));
    }
}
