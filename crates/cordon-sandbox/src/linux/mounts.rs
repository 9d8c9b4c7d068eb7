//! The filesystem view of rung 1 (R-L1): a new root built from mounts in a private mount
//! namespace.
//!
//! [`layout`] decides (purely) the whole plan as typed [`Step`]s — staging, root, the tree
//! (private `/tmp`, binds, pinned symlinks, masks), `/dev`, `/proc`, read-only remount,
//! pivot — from the resolved filesystem and its [`cordon_policy::TopView`] (root access and
//! private `/tmp`, computed once); `--dry-run` prints it and the Landlock rules of rung 1
//! are derived from it. [`build`] applies the steps in order, one small function per kind,
//! inside the sandbox's init process with the new mount API (`open_tree` + `mount_setattr` + `move_mount`), so a
//! bind is read-only *before* it becomes visible, and every target is opened with
//! `openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS)` so a path component swapped for a
//! symlink cannot redirect a mount.
//!
//! Layering, shallow first (so a deeper path always overrides its ancestors):
//! - the root: the host root, recursively read-only (`default = read`) or writable
//!   (`default = write`), or an empty tmpfs (`default = deny`);
//! - a private writable tmpfs on `/tmp` (unless `/tmp` is denied); entries under the host
//!   `/tmp` (e.g. a workspace there) are bound on top of it;
//! - each entry of `ResolvedFilesystem::layered()`: write → recursive bind of the host
//!   path, writable; read and protected paths (R-P3) → recursive bind, read-only; deny →
//!   an empty mode-000 read-only tmpfs (directories) or an empty mode-000 file bound
//!   read-only (files). A bind that would show exactly what its parent layer already shows
//!   is skipped; a deny entry that is missing, or already invisible, is skipped;
//! - each symlink on the way to a protected, denied or pinned path that lies in a writable
//!   layer: bound onto itself, so its name cannot be removed, renamed or replaced;
//! - a minimal `/dev` (null, zero, full, random, urandom, tty from the host; the terminal
//!   cordon runs in, if any, at `/dev/console` so `tty`/`ttyname()` resolve; a new `devpts`
//!   instance; `shm` tmpfs; fd/stdin/stdout/stderr/ptmx symlinks; never block devices);
//! - a fresh `/proc` for the new pid namespace, with `sys`, `sysrq-trigger`, `irq` and
//!   `bus` read-only.
//!
//! Entries under `/dev` or `/proc` are ignored (those trees are rebuilt; noted).

use super::sys;
use cordon_policy::{Access, CacheMode, EntryOrigin, ResolvedFilesystem, ResolvedProfile};
use std::ffi::{CStr, CString, OsStr};
use std::io;
use std::os::fd::{AsFd, AsRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// What the new root starts from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Base {
    /// The host root, recursively read-only.
    HostReadOnly,
    /// The host root, writable.
    HostWritable,
    /// An empty tmpfs (read-only once built).
    Empty,
}

/// One step of the mount plan. [`build`] applies them in order, one small function per
/// kind; [`layout`] decides them (purely).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "step", rename_all = "kebab-case")]
pub enum StepKind {
    /// `/` made private, a `mode=0700` tmpfs becomes the root for the time of the build
    /// with the host root at `/oldroot` (bubblewrap's approach; `/oldroot` is never
    /// modified and is the source of every bind) and the new root at `/newroot`.
    Staging,
    /// The new root: the host root (read-only or writable) or an empty tmpfs.
    Root {
        /// What it starts from.
        base: Base,
    },
    /// A fresh writable tmpfs (mode 1777) on `/tmp`.
    PrivateTmp {
        /// tmpfs `size=` option (e.g. `"512m"`); `None` = the kernel default (half of RAM).
        /// Hook for resource limits (issue 8 §4).
        size: Option<String>,
    },
    /// A recursive bind of the same host path; read-only unless `writable`.
    Bind {
        /// Writable bind.
        writable: bool,
        /// A protected path (R-P3): if it is missing at run time a placeholder is created
        /// on the host first, so the command cannot create it.
        protected: bool,
        /// The placeholder's kind when `protected` and missing: a directory (an empty one)
        /// or an empty file. From the resolved entry ([`ResolvedEntry::is_dir`]: a missing
        /// ancestor of a protected file, a configured hooks directory) or git's names.
        dir: bool,
    },
    /// A symlink on the way to a protected, denied or pinned path, bound onto itself so its
    /// name cannot be removed, renamed or replaced (the target gets its own step).
    PinLink,
    /// A symlink on the way to a granted path, where the layer around it is a tmpfs of
    /// ours (e.g. `/lib64 -> usr/lib64` on an empty root): recreated there with the host
    /// link's target, so the spelling the profile used keeps working inside.
    CopyLink,
    /// Host side, before the sandbox exists: create the missing directory of a writable
    /// grant the user spelled (`-w /tmp/w/new`, `--with`, a config entry), each missing
    /// component with an exclusive `mkdirat` beneath a parent opened without following
    /// symlinks; the [`StepKind::Bind`] that follows binds it. Failing → refusal.
    CreateDir,
    /// A known package cache (R-C1, [`cordon_policy::caches`]): an overlay mount at the
    /// cache's path with the host cache as its read-only lower layer and a private writable
    /// layer kept per workspace (`<state>/upper`, `<state>/work`, created on the host
    /// beforehand without following symlinks, mode 0700). The host cache is never written.
    /// If the kernel refuses the overlay (no overlayfs in user namespaces before Linux
    /// 5.11, an upper dir on an unsupported filesystem), the cache stays read-only as the
    /// layer below shows it, with a note: never a silent write to the host cache.
    Overlay {
        /// The cache's short name (`cargo-registry`).
        name: String,
        /// The per-workspace state directory holding `upper/` and `work/`.
        state: PathBuf,
    },
    /// A known package cache missing on the host (a new user without `~/.npm`, R-C1): the
    /// per-workspace directory `<state>/data` (created on the host beforehand without
    /// following symlinks, mode 0700, under the overlay state root, never in the home
    /// directory) bound writable at its own path beneath the hidden state root, and the
    /// tool's variable (`npm_config_cache`) pointed at it in the command's environment.
    /// If the bind fails the cache stays missing, with a note.
    CacheDir {
        /// The cache's short name (`npm`).
        name: String,
        /// The variable pointed at it.
        var: String,
    },
    /// A config file that mixes settings and secrets (R-C2, [`cordon_policy::stripped`]):
    /// read from the host without following symlinks, parsed, and a copy with the
    /// credentials removed bound read-only over it (the copy lives in the staging tmpfs).
    /// A file that does not parse (or is not a regular file) is hidden whole instead, as
    /// [`StepKind::Mask`], with a note naming it.
    Stripped {
        /// How to parse it.
        format: cordon_policy::stripped::ConfigFormat,
    },
    /// A repository's `.git/config` (issue 11 §3, [`super::git_config_broker`]): a writable
    /// private copy of the host file (read once, no symlink followed; the copy lives in the
    /// staging tmpfs) bound over the protected read-only bind of the same path, which
    /// stays in place below it. After the run only allow-listed keys are merged back into
    /// the host file. If the copy cannot be made, the protected bind stays (with a note).
    GitConfig,
    /// Hide the path: an empty mode-000 tmpfs (directory) or file, read-only.
    Mask {
        /// Something is bound beneath the hidden directory (e.g. a writable grant inside a
        /// denied one): its tmpfs gets mode 0111, traversable but not listable or readable,
        /// so the grant is reachable with exactly its reported access.
        traverse: bool,
    },
    /// A minimal `/dev`: null, zero, full, random, urandom, tty bound from the host; a new
    /// `devpts` instance; a `shm` tmpfs; fd/stdin/stdout/stderr/ptmx symlinks; never block
    /// devices.
    Dev {
        /// `size=` of the `/dev/shm` tmpfs; `None` = the kernel default. Hook for limits.
        shm_size: Option<String>,
    },
    /// A fresh `/proc` for the new pid namespace, with `sys`, `sysrq-trigger`, `irq` and
    /// `bus` read-only.
    Proc,
    /// Every tmpfs of ours that must not be written (the empty root, masks, `/dev`) made
    /// read-only, once everything is mounted on it.
    ReadOnlyRemount,
    /// `pivot_root` into the new root; the staging root with the host root under it is
    /// detached; the cwd becomes `/`.
    Pivot,
}

impl StepKind {
    /// Whether the step mounts something at its path inside the tree (as opposed to the
    /// fixed frame: staging, root, `/dev`, `/proc`, remount, pivot).
    pub fn is_tree(&self) -> bool {
        matches!(
            self,
            StepKind::PrivateTmp { .. }
                | StepKind::Bind { .. }
                | StepKind::PinLink
                | StepKind::CopyLink
                | StepKind::Overlay { .. }
                | StepKind::CacheDir { .. }
                | StepKind::Stripped { .. }
                | StepKind::GitConfig
                | StepKind::Mask { .. }
        )
    }
}

/// A step: where, what, and whether its mountpoint may be created (true when the nearest
/// layer below it is a tmpfs of ours, never a host directory).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Step {
    /// Absolute path inside the sandbox (= host path).
    pub path: PathBuf,
    /// The mount.
    #[serde(flatten)]
    pub kind: StepKind,
    /// The mountpoint may be created (it lives in a tmpfs of ours).
    pub may_create: bool,
}

impl std::fmt::Display for Step {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let p = self.path.display();
        match &self.kind {
            StepKind::Staging => write!(f, "staging root (host root at /oldroot)"),
            StepKind::Root { base } => match base {
                Base::HostReadOnly => write!(f, "root: host /, read-only"),
                Base::HostWritable => write!(f, "root: host /, writable"),
                Base::Empty => write!(f, "root: empty tmpfs"),
            },
            StepKind::PrivateTmp { size } => {
                write!(f, "{p}: private tmpfs")?;
                if let Some(s) = size {
                    write!(f, " (size {s})")?;
                }
                Ok(())
            }
            StepKind::Bind {
                writable,
                protected,
                ..
            } => write!(
                f,
                "{p}: bind, {}{}",
                if *writable { "writable" } else { "read-only" },
                if *protected { " (protected)" } else { "" }
            ),
            StepKind::PinLink => write!(f, "{p}: symlink pinned (bound onto itself)"),
            StepKind::CopyLink => write!(f, "{p}: symlink recreated (as on the host)"),
            StepKind::CreateDir => write!(
                f,
                "{p}: created on the host first, as a directory, if missing"
            ),
            StepKind::Overlay { name, state } => write!(
                f,
                "{p}: copy-on-write cache `{name}` (host cache read-only below, private layer \
                 in {})",
                state.display()
            ),
            StepKind::CacheDir { name, var } => write!(
                f,
                "{p}: private writable directory for the cache `{name}`, missing on the host \
                 ({var} points here)"
            ),
            StepKind::Stripped { format } => write!(
                f,
                "{p}: read-only copy with credentials removed ({format:?}; hidden whole if it \
                 does not parse)"
            ),
            StepKind::GitConfig => write!(
                f,
                "{p}: writable private copy; branch, remote, submodule url/active, user and \
                 init.defaultBranch edits merged back after the run, other keys refused"
            ),
            StepKind::Mask { traverse: false } => write!(f, "{p}: hidden (empty, mode 000)"),
            StepKind::Mask { traverse: true } => {
                write!(
                    f,
                    "{p}: hidden (empty, mode 0111: only the grants beneath it reachable)"
                )
            }
            StepKind::Dev { .. } => write!(f, "{p}: minimal /dev"),
            StepKind::Proc => write!(
                f,
                "{p}: fresh /proc (sys, sysrq-trigger, irq, bus read-only)"
            ),
            StepKind::ReadOnlyRemount => write!(f, "own tmpfs mounts made read-only"),
            StepKind::Pivot => write!(f, "pivot into the new root, host root detached"),
        }
    }
}

/// The whole mount plan for one profile.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Layout {
    /// The root (also in the [`StepKind::Root`] step).
    pub base: Base,
    /// Every step, in order: staging, root, the tree (shallow first), `/dev`, `/proc`,
    /// read-only remount, pivot.
    pub steps: Vec<Step>,
    /// Skipped entries and why.
    pub notes: Vec<String>,
    /// The deny entries not present at launch (canonical paths, in entry order): nothing
    /// is mounted for them, and the note naming them ([`absent_note`]) is made from this
    /// list. Those whose name lives in a host layer are watched while the command runs
    /// ([`Layout::cover_watches`]): one created on the host stops the run. A path cordon
    /// itself creates and hides (the overlay state root) is not in it.
    #[serde(skip)]
    pub absent: Vec<PathBuf>,
    /// Caches whose copy-on-write layer this run cannot have (every slot of the workspace
    /// taken by concurrent runs, [`super::caches::claim_overlay_slot`]): path and why.
    /// They stay read-only, with the hint.
    #[serde(skip)]
    pub read_only_caches: Vec<(PathBuf, String)>,
    /// The symlinks resolution went through on the way to a hidden or protected path whose
    /// names live in a host layer (the entries' [`cordon_policy::ResolvedEntry::links`]),
    /// with what they lead to: watched while the command runs like a cover's own name
    /// ([`Layout::cover_watches`]). The host re-pointing one (`ln -sfn other ~/a` for
    /// `~/.ssh -> a/b`) would lead the hidden spelling past its cover; the run is stopped
    /// instead (attack pass 173, finding 1).
    pub links: Vec<(PathBuf, CoverKind)>,
    /// Each hidden or protected entry reached through such links: its spelling and the
    /// path it resolved to when the plan was made. Checked once the watch exists
    /// ([`super::cover_watch::CoverWatch::check_links`]): a link re-pointed between the
    /// resolution and the watch leads the spelling elsewhere, and the run is refused
    /// (attack pass 174: through the server that window was 5–15 ms after the start).
    pub resolved_through_links: Vec<(PathBuf, PathBuf)>,
}

impl Layout {
    /// The steps that mount something inside the tree (see [`StepKind::is_tree`]).
    pub fn tree(&self) -> impl Iterator<Item = &Step> {
        self.steps.iter().filter(|s| s.kind.is_tree())
    }

    /// Whether `/tmp` is a private tmpfs.
    pub fn private_tmp(&self) -> bool {
        self.steps
            .iter()
            .any(|s| matches!(s.kind, StepKind::PrivateTmp { .. }))
    }
}

/// What a cover keeps from the command ([`Layout::covers`]): the mount at a path whose
/// dentry is the host's, which the host can detach by replacing that dentry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum CoverKind {
    /// A denied path ([`StepKind::Mask`]) or the host's `/tmp` behind the private one.
    Hidden,
    /// A copy with credentials removed ([`StepKind::Stripped`]).
    Stripped,
    /// A protected path (R-P3) or a read-only grant inside a writable layer
    /// ([`StepKind::Bind`]), including a `.git/config` with the broker's copy over it.
    ReadOnly,
    /// A copy-on-write cache layer over a writable host directory ([`StepKind::Overlay`]).
    Cache,
    /// A denied path that was not present at launch ([`Layout::absent`]): no mount, so
    /// nothing keeps it from the command once the host creates it.
    Absent,
}

impl CoverKind {
    /// In words, for the message that stops a run.
    pub fn words(self) -> &'static str {
        match self {
            CoverKind::Hidden => "a hidden path",
            CoverKind::Stripped => "a copy with credentials removed",
            CoverKind::ReadOnly => "a protected or read-only path",
            CoverKind::Cache => "a copy-on-write cache",
            CoverKind::Absent => "a hidden path that was not present at launch",
        }
    }
}

/// One cover of the plan: a tree step that shows the command *less* than the host layer it
/// is mounted in, at a path whose name lives in that host layer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cover {
    /// The covered path (host path = sandbox path).
    pub path: PathBuf,
    /// What the cover keeps from the command.
    pub kind: CoverKind,
}

/// A host directory to watch while the command runs ([`Layout::cover_watches`]) and the
/// entry names in it that lead to a cover: replacing, removing or creating one of them on
/// the host takes the cover away from the running command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CoverWatch {
    /// The directory (host path).
    pub dir: PathBuf,
    /// Each name in it that leads to a cover, with the first cover it leads to.
    pub names: Vec<(std::ffi::OsString, Cover)>,
}

impl Layout {
    /// Every cover of the plan (pure; one entry per path): masks, credential-stripped
    /// copies, protected binds and the `.git/config` copies over them, read-only binds and
    /// copy-on-write caches inside writable host layers, and the private `/tmp` over the
    /// host's — each only where the name it is mounted on lives in a host layer (a step on
    /// a tmpfs of ours cannot be detached by the host). Linux lazily detaches a mount in
    /// another mount namespace when the host unlinks or renames over its dentry (since
    /// 3.18), so each of these is lost for a running command when the host replaces the
    /// path — see [`Layout::cover_watches`].
    pub fn covers(&self) -> Vec<Cover> {
        self.covers_in(&Layers::of(self))
    }

    /// [`Layout::covers`] with the layers already built.
    fn covers_in(&self, layers: &Layers<'_>) -> Vec<Cover> {
        let mut v: Vec<Cover> = Vec::new();
        let mut seen = std::collections::HashSet::new();
        for s in self.tree() {
            if under_rebuilt_tree(&s.path) || s.path == Path::new("/") {
                continue;
            }
            let Ctx::Host { writable } = layers.ctx(&s.path) else {
                continue;
            };
            let kind = match &s.kind {
                StepKind::Mask { .. } | StepKind::PrivateTmp { .. } => CoverKind::Hidden,
                StepKind::Stripped { .. } => CoverKind::Stripped,
                StepKind::GitConfig => CoverKind::ReadOnly,
                StepKind::Bind {
                    protected: true, ..
                } => CoverKind::ReadOnly,
                StepKind::Bind {
                    writable: false, ..
                } if writable => CoverKind::ReadOnly,
                StepKind::Overlay { .. } if writable => CoverKind::Cache,
                _ => continue,
            };
            if seen.insert(s.path.as_path()) {
                v.push(Cover {
                    path: s.path.clone(),
                    kind,
                });
            }
        }
        v
    }

    /// The deny entries not present at launch ([`Layout::absent`]) whose name lives in a
    /// host layer, so that the host creating one would show it to the running command
    /// (one in a tmpfs of ours stays invisible): as covers of kind [`CoverKind::Absent`].
    pub fn absent_covers(&self) -> Vec<Cover> {
        self.absent_covers_in(&Layers::of(self))
    }

    /// [`Layout::absent_covers`] with the layers already built.
    fn absent_covers_in(&self, layers: &Layers<'_>) -> Vec<Cover> {
        self.absent
            .iter()
            .filter(|a| !under_rebuilt_tree(a) && layers.ctx(a) != Ctx::Own)
            .map(|a| Cover {
                path: a.clone(),
                kind: CoverKind::Absent,
            })
            .collect()
    }

    /// The host directories to watch so that no cover ([`Layout::covers`]) can be taken
    /// away unseen, shallow first: for each cover, its parent directory (for the cover's
    /// own name) and every ancestor up to `/` (for the name of the next directory down) —
    /// renaming an ancestor (`mv ~/.config ~/.config.old`, then a new `~/.config`) uncovers
    /// everything beneath it the same way — but only where that name lives in a host
    /// layer: names in a tmpfs of ours (an empty root, a mask, the private `/tmp`) are the
    /// sandbox's own. Removing or renaming a *watched* directory is seen as an event on
    /// its name in the directory above, which is watched too whenever that matters.
    ///
    /// The deny entries not present at launch ([`Layout::absent_covers`]) are watched the
    /// same way, after the covers (a name leading to both keeps its cover): each ancestor
    /// that exists when the watch starts, down to the parent, for the next name down.
    pub fn cover_watches(&self) -> Vec<CoverWatch> {
        self.cover_watches_and_absent().0
    }

    /// [`Layout::cover_watches`] and [`Layout::absent_covers`] from one layer index (a
    /// cover watch needs both; each built its own).
    pub fn cover_watches_and_absent(&self) -> (Vec<CoverWatch>, Vec<Cover>) {
        let layers = Layers::of(self);
        // Ancestors are shared by most covers (`/`, `$HOME`, `~/.config`): each path's
        // layer is found once, each watched directory looked up by map (issue 12: the
        // launch spent 10% of its CPU here once absent deny entries were watched).
        // foldhash: the default SipHash cost more than the lookups saved (issue 12).
        let mut ctx_of: foldhash::HashMap<&Path, Ctx> = Default::default();
        let mut index: foldhash::HashMap<&Path, usize> = Default::default();
        let mut out: Vec<CoverWatch> = Vec::new();
        let absent = self.absent_covers_in(&layers);
        let all: Vec<Cover> = self
            .covers_in(&layers)
            .into_iter()
            .chain(absent.iter().cloned())
            .chain(self.links.iter().map(|(path, kind)| Cover {
                path: path.clone(),
                kind: *kind,
            }))
            .collect();
        for c in &all {
            let mut child: &Path = &c.path;
            while let Some(dir) = child.parent() {
                let Some(name) = child.file_name() else {
                    break;
                };
                if *ctx_of.entry(child).or_insert_with(|| layers.ctx(child)) != Ctx::Own {
                    let i = *index.entry(dir).or_insert_with(|| {
                        out.push(CoverWatch {
                            dir: dir.to_path_buf(),
                            names: Vec::new(),
                        });
                        out.len() - 1
                    });
                    if !out[i].names.iter().any(|(n, _)| n == name) {
                        out[i].names.push((name.to_os_string(), c.clone()));
                    }
                }
                child = dir;
            }
        }
        out.sort_by_cached_key(|w| w.dir.components().count());
        (out, absent)
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Ctx {
    Host { writable: bool },
    Own,
}

/// The tree steps of a layout that hold names (binds, cache dirs, tmpfs, masks,
/// overlays) by path, with their context, and the base's context: which layer holds a
/// name ([`Layers::ctx`]), built once for many questions.
struct Layers<'a> {
    base: Ctx,
    /// Step path -> context; of two steps at one path the later one (it is mounted over
    /// the earlier).
    holders: foldhash::HashMap<&'a Path, Ctx>,
}

impl<'a> Layers<'a> {
    fn of(l: &'a Layout) -> Layers<'a> {
        let base = match l.base {
            Base::HostReadOnly => Ctx::Host { writable: false },
            Base::HostWritable => Ctx::Host { writable: true },
            Base::Empty => Ctx::Own,
        };
        let mut holders = foldhash::HashMap::default();
        for s in l.tree() {
            let c = match &s.kind {
                StepKind::Bind { writable, .. } => Ctx::Host {
                    writable: *writable,
                },
                StepKind::CacheDir { .. } => Ctx::Host { writable: true },
                StepKind::PrivateTmp { .. } | StepKind::Mask { .. } | StepKind::Overlay { .. } => {
                    Ctx::Own
                }
                _ => continue, // files and links hold no names
            };
            holders.insert(s.path.as_path(), c);
        }
        Layers { base, holders }
    }

    /// The context of the layer holding the name `p`: the deepest holder strictly above
    /// `p`, else the base. One map lookup per ancestor (issue 12: a scan of every step
    /// per path was 3-6 % of a cold launch's CPU in the cover-watch plan).
    fn ctx(&self, p: &Path) -> Ctx {
        p.ancestors()
            .skip(1)
            .find_map(|a| self.holders.get(a).copied())
            .unwrap_or(self.base)
    }
}

fn under_rebuilt_tree(p: &Path) -> bool {
    p.starts_with("/proc") || p.starts_with("/dev")
}

/// A grant the user wrote (a profile, config, flag or `--with` entry), other than the
/// `:tmp` root (a missing `$TMPDIR` is not created).
fn spelled_grant(e: &cordon_policy::ResolvedEntry) -> bool {
    matches!(&e.origin, EntryOrigin::Profile { spelling, .. } if !spelling.starts_with(":tmp"))
}

fn step(path: &str, kind: StepKind, may_create: bool) -> Step {
    Step {
        path: PathBuf::from(path),
        kind,
        may_create,
    }
}

/// The mount layout of a resolved profile (pure): [`layout`] of its filesystem plus one
/// [`StepKind::Overlay`] step per copy-on-write cache ([`ResolvedProfile::caches`]) and,
/// when there is one, the overlay state root hidden (created on the host first when it
/// was missing at resolve time, so even a first run cannot reach it). This is the plan
/// the helper applies, `--dry-run` prints and rung-1 Landlock rules are derived from.
// Longer than most: the fixed prefix of the plan (staging, root, /tmp, /dev, /proc) as
// typed steps, each a few lines, in the order they are applied.
pub fn layout_for(profile: &ResolvedProfile) -> Layout {
    let mut l = layout(&profile.filesystem);
    // Stripped views replace the masks of their files (R-C2).
    for s in &mut l.steps {
        if let StepKind::Mask { .. } = s.kind {
            if let Some(f) = profile.stripped.iter().find(|f| f.path == s.path) {
                s.kind = StepKind::Stripped { format: f.format };
            }
        }
    }
    // Each repository config gets a writable private copy over its protected bind.
    for path in cordon_policy::gitconfig::brokered_configs(profile) {
        let at = l.steps.iter().position(|s| {
            s.path == path
                && matches!(
                    s.kind,
                    StepKind::Bind {
                        protected: true,
                        writable: false,
                        ..
                    }
                )
        });
        if let Some(i) = at {
            l.steps.insert(
                i + 1,
                Step {
                    path,
                    kind: StepKind::GitConfig,
                    may_create: false,
                },
            );
        }
    }
    let overlays: Vec<&cordon_policy::ResolvedCache> = profile
        .caches
        .iter()
        .filter(|c| c.mode == CacheMode::Overlay)
        .collect();
    let Some(first) = overlays.first() else {
        return l;
    };
    // `<root>/<workspace-key>/<name>`: the state root is two levels up.
    let Some(root) = first.state.parent().and_then(Path::parent) else {
        return l;
    };
    // A private directory beneath the hidden root must be reachable by its path.
    let traverse = overlays.iter().any(|c| c.env.is_some());
    let mut extra = Vec::new();
    if let Some(s) = l.steps.iter_mut().find(|s| s.path == root) {
        if let StepKind::Mask { traverse: t } = &mut s.kind {
            *t |= traverse;
        }
    } else {
        extra.push(Step {
            path: root.to_path_buf(),
            kind: StepKind::CreateDir,
            may_create: false,
        });
        extra.push(Step {
            path: root.to_path_buf(),
            kind: StepKind::Mask { traverse },
            may_create: false,
        });
    }
    for c in overlays {
        extra.push(match &c.env {
            None => Step {
                path: c.path.clone(),
                kind: StepKind::Overlay {
                    name: c.name.clone(),
                    state: c.state.clone(),
                },
                may_create: false,
            },
            Some(var) => Step {
                path: c.private_dir(),
                kind: StepKind::CacheDir {
                    name: c.name.clone(),
                    var: var.clone(),
                },
                may_create: true,
            },
        });
    }
    // Into the tree, shallow first (stable), before /dev and /proc.
    let frame_end = l
        .steps
        .iter()
        .position(|s| matches!(s.kind, StepKind::Dev { .. }))
        .unwrap_or(l.steps.len());
    let tail = l.steps.split_off(frame_end);
    let mut tree: Vec<Step> = l.steps.split_off(2);
    tree.extend(extra);
    tree.sort_by_cached_key(|s| s.path.components().count());
    l.steps.extend(tree);
    l.steps.extend(tail);
    // The state root, when it was missing, is created and hidden now: not absent.
    let absent = l.absent.clone();
    l.set_absent(absent);
    l
}

/// Computes the mount layout of `fs` (pure). See the module docs for the rules.
pub fn layout(fs: &ResolvedFilesystem) -> Layout {
    let top = fs.top_view();
    let base = match top.root {
        Access::Read => Base::HostReadOnly,
        Access::Write => Base::HostWritable,
        Access::Deny => Base::Empty,
    };
    let (tree, notes, absent, (links, resolved_through_links)) = match fs {
        ResolvedFilesystem::Unrestricted => Default::default(),
        ResolvedFilesystem::Restricted { .. } => tree_steps(fs, base, top.private_tmp),
    };
    let own_root = base == Base::Empty;
    let mut steps = vec![
        step("/", StepKind::Staging, false),
        step("/", StepKind::Root { base }, false),
    ];
    steps.extend(tree);
    steps.extend([
        step("/dev", StepKind::Dev { shm_size: None }, own_root),
        step("/proc", StepKind::Proc, own_root),
        step("/", StepKind::ReadOnlyRemount, false),
        step("/", StepKind::Pivot, false),
    ]);
    let mut l = Layout {
        base,
        steps,
        notes,
        absent: Vec::new(),
        read_only_caches: Vec::new(),
        links,
        resolved_through_links,
    };
    l.set_absent(absent);
    l
}

/// What [`tree_steps`] gives: the steps, the notes, the deny entries not present, and the
/// links to watch with the spellings reached through them ([`Layout::links`],
/// [`Layout::resolved_through_links`]).
type TreeSteps = (
    Vec<Step>,
    Vec<String>,
    Vec<PathBuf>,
    (Vec<(PathBuf, CoverKind)>, Vec<(PathBuf, PathBuf)>),
);

/// The tree steps (private `/tmp`, binds, pins, masks), shallow first, notes, the deny
/// entries not present (skipped), and the links to watch ([`Layout::links`]).
// Longer than most: one arm per access (deny, read, write) with the layer bookkeeping that
// decides whether a step is needed; split, the layer stack would be threaded through each.
fn tree_steps(fs: &ResolvedFilesystem, base: Base, private_tmp: bool) -> TreeSteps {
    let layered = fs.layered();
    let base_ctx = match base {
        Base::HostReadOnly => Ctx::Host { writable: false },
        Base::HostWritable => Ctx::Host { writable: true },
        Base::Empty => Ctx::Own,
    };
    let mut notes = Vec::new();
    let mut missing_denies: Vec<PathBuf> = Vec::new();
    let mut steps = Vec::new();
    let mut layers: Vec<(PathBuf, Ctx)> = Vec::new();
    // `p` against every layer so far, once per entry: byte-wise where the paths are clean
    // (`within` answers as `Path::starts_with` does; issue 12: this component-wise scan
    // was most of `layout`).
    let ctx_of = |layers: &[(PathBuf, Ctx)], p: &Path| -> Ctx {
        let under = cordon_policy::paths::Within::new(p);
        layers
            .iter()
            .rev()
            .filter(|(lp, _)| under.of(lp) && p != lp)
            .max_by_key(|(lp, _)| lp.components().count())
            .map(|(_, c)| *c)
            .unwrap_or(base_ctx)
    };

    if private_tmp {
        steps.push(step(
            "/tmp",
            StepKind::PrivateTmp { size: None },
            base == Base::Empty,
        ));
        layers.push((PathBuf::from("/tmp"), Ctx::Own));
    }

    for e in layered.iter().copied() {
        if e.path == Path::new("/") {
            continue;
        }
        if under_rebuilt_tree(&e.path) {
            notes.push(format!(
                "{} ({}) ignored: /dev and /proc are rebuilt inside the sandbox",
                e.path.display(),
                e.access
            ));
            continue;
        }
        if e.path == Path::new("/tmp") && private_tmp {
            continue; // the private /tmp stands for it
        }
        let parent = ctx_of(&layers, &e.path);
        let protected = matches!(e.origin, EntryOrigin::Protected { .. });
        match e.access {
            Access::Deny => {
                if !e.exists {
                    missing_denies.push(e.path.clone());
                    continue;
                }
                if parent == Ctx::Own {
                    continue; // already invisible
                }
                steps.push(Step {
                    path: e.path.clone(),
                    kind: StepKind::Mask { traverse: false },
                    may_create: false,
                });
                layers.push((e.path.clone(), Ctx::Own));
            }
            Access::Read | Access::Write => {
                let writable = e.access == Access::Write;
                let placeholder = protected && parent == (Ctx::Host { writable: true });
                // A missing directory pinned on the way to a protected path: the
                // placeholder step makes it before the mounts (attack pass 35, P1).
                let made_first = matches!(e.origin, EntryOrigin::Pinned { .. })
                    && parent == (Ctx::Host { writable: true });
                if !e.exists && !placeholder && !made_first {
                    // A writable grant the user spelled for a missing path is honoured:
                    // created on the host first (issue 8 §1), unless the layer around it
                    // already lets the command create it.
                    let create =
                        writable && parent != (Ctx::Host { writable: true }) && spelled_grant(e);
                    if !create {
                        if !protected {
                            notes.push(format!(
                                "{} {}: does not exist, skipped",
                                e.access,
                                e.path.display()
                            ));
                        }
                        continue;
                    }
                    steps.push(Step {
                        path: e.path.clone(),
                        kind: StepKind::CreateDir,
                        may_create: false,
                    });
                }
                // A pinned directory is bound onto itself even though its parent shows the
                // same access: a mount point cannot be renamed or removed, so the protected
                // paths beneath it cannot be moved aside and re-created (R-P3).
                // So is a git dir granted for a linked worktree or a submodule: inside the
                // common dir (`.git/worktrees/<name>`) it would otherwise be an ordinary
                // directory a command could exchange for its own (attack pass 37, A1).
                let pinned = matches!(
                    e.origin,
                    EntryOrigin::Pinned { .. } | EntryOrigin::GitWorktree { .. }
                );
                if parent == (Ctx::Host { writable }) && !pinned {
                    continue; // the parent layer already shows exactly this
                }
                steps.push(Step {
                    path: e.path.clone(),
                    kind: StepKind::Bind {
                        writable,
                        protected,
                        dir: protected && (e.is_dir || placeholder_is_dir(&e.path)),
                    },
                    may_create: parent == Ctx::Own,
                });
                layers.push((e.path.clone(), Ctx::Host { writable }));
            }
        }
    }
    // Symlink names on the way to protected, denied and pinned paths, where the command
    // could replace them (in a writable host layer): pinned, after every layer is known.
    let mut pinned_links: Vec<&Path> = Vec::new();
    let mut watched_links: Vec<(PathBuf, CoverKind)> = Vec::new();
    let mut through_links: Vec<(PathBuf, PathBuf)> = Vec::new();
    // Symlinks on the way to grants, in a tmpfs of ours: recreated, so the spelling works.
    for e in &layered {
        if under_rebuilt_tree(&e.path) {
            continue;
        }
        let guarded = e.access == Access::Deny
            || matches!(
                e.origin,
                EntryOrigin::Protected { .. } | EntryOrigin::Pinned { .. }
            );
        if guarded && !e.links.is_empty() && !through_links.iter().any(|(sp, _)| *sp == e.spelled) {
            through_links.push((e.spelled.clone(), e.path.clone()));
        }
        for l in &e.links {
            // Any guarded link whose name is the host's: the host can re-point it while the
            // command runs, whatever the command may do to it.
            if guarded
                && matches!(ctx_of(&layers, l), Ctx::Host { .. })
                && !watched_links.iter().any(|(w, _)| w == l)
            {
                let kind = if e.access == Access::Deny {
                    CoverKind::Hidden
                } else {
                    CoverKind::ReadOnly
                };
                watched_links.push((l.clone(), kind));
            }
            if pinned_links.contains(&l.as_path()) {
                continue;
            }
            let kind = match ctx_of(&layers, l) {
                Ctx::Host { writable: true } if guarded => StepKind::PinLink,
                Ctx::Own if e.access != Access::Deny => StepKind::CopyLink,
                _ => continue,
            };
            pinned_links.push(l);
            steps.push(Step {
                path: l.clone(),
                may_create: kind == StepKind::CopyLink,
                kind,
            });
        }
    }
    // Shallow first (stable: equal depths keep their order).
    steps.sort_by_cached_key(|s| s.path.components().count());
    // A mask with binds beneath it must be traversable, or they are unreachable.
    let mounted: Vec<PathBuf> = steps
        .iter()
        .filter(|s| matches!(s.kind, StepKind::Bind { .. } | StepKind::PinLink))
        .map(|s| s.path.clone())
        .collect();
    for s in &mut steps {
        if let StepKind::Mask { traverse } = &mut s.kind {
            *traverse = mounted
                .iter()
                .any(|m| m.starts_with(&s.path) && *m != s.path);
        }
    }
    (steps, notes, missing_denies, (watched_links, through_links))
}

/// Most absent deny entries a note names; the rest are counted (new-user pass nu30, F6:
/// the built-in credential stores missing on a host made the note half of every `--json`
/// report).
const ABSENT_NAMED: usize = 8;

/// The note naming the deny entries not present at launch ([`Layout::absent`]), if any:
/// the first [`ABSENT_NAMED`], then how many more.
pub fn absent_note(absent: &[PathBuf]) -> Option<String> {
    let names: Vec<String> = absent
        .iter()
        .take(ABSENT_NAMED)
        .map(|p| p.display().to_string())
        .collect();
    let more = absent.len().saturating_sub(ABSENT_NAMED);
    (!names.is_empty()).then(|| {
        format!(
            "{} deny entr{} not present, nothing to hide (the run is stopped if {} created \
             on the host while the command runs): {}{}",
            absent.len(),
            if absent.len() == 1 { "y is" } else { "ies are" },
            if absent.len() == 1 { "it is" } else { "one is" },
            names.join(", "),
            if more > 0 {
                format!(" and {more} more (`cordon explain PATH` says whether a path is hidden)")
            } else {
                String::new()
            }
        )
    })
}

impl Layout {
    /// Sets [`Layout::absent`] to the paths of `absent` that no step mounts or creates at
    /// or beneath (the overlay state root is created and hidden by cordon itself; a
    /// writable grant beneath a missing deny creates it), and its note in
    /// [`Layout::notes`] to match (in place of the previous one).
    fn set_absent(&mut self, mut absent: Vec<PathBuf>) {
        // Sorted step paths: those within `a` share its bytes as a prefix, so they lie in
        // one run from `a` on (issue 12: this was every absent entry against every step,
        // component by component, four times per template command).
        let clean = |p: &Path| cordon_policy::paths::is_clean_path(p);
        if !self.steps.iter().all(|s| clean(&s.path)) || !absent.iter().all(|a| clean(a)) {
            absent.retain(|a| !self.steps.iter().any(|s| s.path.starts_with(a)));
            return self.replace_absent(absent);
        }
        let mut mounted: Vec<&[u8]> = self
            .steps
            .iter()
            .map(|s| s.path.as_os_str().as_encoded_bytes())
            .collect();
        mounted.sort_unstable();
        mounted.dedup();
        absent.retain(|a| {
            let ab = a.as_os_str().as_encoded_bytes();
            let from = mounted.partition_point(|m| *m < ab);
            !mounted[from..]
                .iter()
                .take_while(|m| m.starts_with(ab))
                .any(|m| cordon_policy::paths::within(Path::new(OsStr::from_bytes(m)), a))
        });
        self.replace_absent(absent);
    }

    /// [`Layout::absent`] := `absent`, with its note replaced in place.
    fn replace_absent(&mut self, absent: Vec<PathBuf>) {
        if absent == self.absent {
            return;
        }
        let old = absent_note(&self.absent);
        let new = absent_note(&absent);
        let at = old
            .as_ref()
            .and_then(|o| self.notes.iter().position(|n| n == o));
        match (at, new) {
            (Some(i), Some(n)) => self.notes[i] = n,
            (Some(i), None) => {
                self.notes.remove(i);
            }
            (None, Some(n)) => self.notes.push(n),
            (None, None) => {}
        }
        self.absent = absent;
    }
}

/// A protected path that did not exist and was created on the host so it could be mounted
/// read-only (R-P3). Placeholders are **permanent**: cordon never removes them. Removing
/// one would (Linux >= 3.18) detach the read-only bind of every other run still using it,
/// and runs overlap (issue 7 item 1). What stays behind is harmless: an empty directory
/// (`.git/hooks`, `.git/info`, `.git/modules`, `.git/worktrees`), an empty file
/// (`.git/config`, `.git/config.worktree`), `.git/commondir` saying `.` (what a missing
/// one means), or an empty `.git`/`.cordon` directory, which git neither takes for a
/// repository (no `HEAD`) nor lists in `git status`, and cordon does not take for a
/// workspace marker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placeholder {
    /// Where it was created.
    pub path: PathBuf,
    /// A directory (else a file).
    pub dir: bool,
}

fn placeholder_is_dir(p: &Path) -> bool {
    matches!(
        p.file_name().and_then(|n| n.to_str()),
        Some(
            "hooks"
                | "info"
                | ".git"
                | ".cordon"
                | "cordon"
                | "modules"
                | "worktrees"
                | "remotes"
                | "branches"
        )
    )
}

/// What a file placeholder holds. An empty `commondir` would make every git command in the
/// repository fail (git reads it as the location of the common directory), so its
/// placeholder says `.`: the git dir itself, which is what a missing `commondir` means.
/// It is a read-only mount while any command runs, so no command can point git elsewhere.
fn placeholder_contents(p: &Path) -> &'static [u8] {
    match p.file_name().and_then(|n| n.to_str()) {
        Some("commondir") => b".\n",
        _ => b"",
    }
}

fn is_errno(e: &io::Error, errno: libc::c_int) -> bool {
    e.raw_os_error() == Some(errno)
}

/// The host-side steps of `layout`, run by the helper (host mount namespace) before the
/// sandbox exists: [`StepKind::CreateDir`] for missing writable grants and the
/// placeholders of missing protected paths ([`create_placeholders`]). Returns the
/// placeholders created.
///
/// `writes_judged`: init's hard-link check will run ([`check_hard_links`]).
///
/// Errors: a covered file has another hard link ([`check_hard_links`]), or a directory or
/// placeholder could not be created (message names the path and what to do; the helper
/// refuses to run).
pub fn prepare_host(layout: &Layout, writes_judged: bool) -> io::Result<Vec<Placeholder>> {
    check_hard_links(layout, writes_judged).map_err(io::Error::other)?;
    create_missing_grants(layout)?;
    create_overlay_dirs(layout)?;
    create_placeholders(layout)
}

/// The host side of each [`StepKind::Overlay`]: `<state>/upper` and `<state>/work`, and
/// of each [`StepKind::CacheDir`]: its directory, created (mode 0700, owned by the
/// invoking user) without following any symlink. A failure is not a refusal: the cache
/// then stays read-only (or missing), with a note at build time.
pub fn create_overlay_dirs(layout: &Layout) -> io::Result<()> {
    for s in &layout.steps {
        match &s.kind {
            StepKind::Overlay { state, .. } => {
                for sub in ["upper", "work"] {
                    // Best effort: `apply_overlay` reports a missing layer as a note.
                    let _ = create_dir_nofollow_mode(&state.join(sub), 0o700);
                }
            }
            StepKind::CacheDir { name, .. } => {
                // A tool home's caches are bound into its per-run home ([`bind_tool_home`]).
                let kept = cordon_policy::caches::kept_in_layer(name).unwrap_or_default();
                for dir in
                    std::iter::once(s.path.clone()).chain(kept.iter().map(|k| s.path.join(k)))
                {
                    // Made once: a directory there already is not walked to again (issue 12:
                    // ten opens a directory); the mount opens it beneath, no symlink followed.
                    if !std::fs::symlink_metadata(&dir).is_ok_and(|m| m.is_dir()) {
                        let _ = create_dir_nofollow_mode(&dir, 0o700);
                    }
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// The name overlayfs gives its scratch directory in a work dir (`<state>/work/work`).
const OVERLAY_SCRATCH: &CStr = c"work";
/// The prefix of a scratch directory moved aside by [`set_aside_overlay_scratch`].
const SET_ASIDE_PREFIX: &[u8] = b".stale-";

/// Scratch directories of earlier overlay mounts moved out of the kernel's way by
/// [`set_aside_overlay_scratch`]: each work dir (pinned) with the names to remove in it.
#[derive(Debug, Default)]
pub struct StaleScratch(Vec<(OwnedFd, PathBuf, Vec<CString>)>);

/// Moves each cache overlay's scratch directory left by its last mount
/// (`<state>/work/work`, with the kernel's `incompat/volatile` mark in it) aside, to
/// `<state>/work/.stale-…`, before the layer is mounted again (issue 12). Mounted over an
/// existing scratch directory, overlayfs removes it first, and the volatile mark was
/// removed by cordon before that ([`clear_volatile_mark`]): three directory removals per
/// layer, and on a filesystem mounted with `discard` each one waits for the disk (ext4
/// discards the freed block synchronously: 0.2 ms on a quiet disk, 1.4–15 ms measured on a
/// busy one, every run, in init before the command starts). A rename frees nothing; the
/// kernel then makes a fresh scratch directory, and [`StaleScratch::remove_detached`]
/// removes the old one off the launch's path.
///
/// Called by the helper holding the layers' slot lock (no mount of this slot uses the work
/// dir). Every step is relative to the work dir, opened without following any symlink; a
/// rename that fails (first mount: nothing there) leaves things as they were, and the
/// mount cleans up as before. Set-aside directories an earlier run left (its remover was
/// killed) are collected too.
pub fn set_aside_overlay_scratch(layout: &Layout) -> StaleScratch {
    let mut out = Vec::new();
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    for (i, s) in layout.steps.iter().enumerate() {
        let StepKind::Overlay { state, .. } = &s.kind else {
            continue;
        };
        let shown = state.join("work");
        let Ok(dir) = sys::open_dir_nofollow(&shown) else {
            continue;
        };
        let mut names = leftover_set_asides(&dir);
        let Ok(name) = CString::new(format!(
            "{}{}-{nanos}-{i}",
            String::from_utf8_lossy(SET_ASIDE_PREFIX),
            std::process::id()
        )) else {
            continue;
        };
        if sys::rename_noreplace(dir.as_raw_fd(), OVERLAY_SCRATCH, dir.as_raw_fd(), &name).is_ok() {
            names.push(name);
        }
        if !names.is_empty() {
            out.push((dir, shown, names));
        }
    }
    StaleScratch(out)
}

/// The set-aside scratch directories ([`SET_ASIDE_PREFIX`]) in the work dir `dir`.
fn leftover_set_asides(dir: &OwnedFd) -> Vec<CString> {
    let Ok(fd) = sys::open_dir_at_nofollow(dir.as_raw_fd(), c".") else {
        return Vec::new();
    };
    let Ok(mut d) = nix::dir::Dir::from_fd(fd) else {
        return Vec::new();
    };
    d.iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_bytes().starts_with(SET_ASIDE_PREFIX))
        .map(|e| e.file_name().to_owned())
        .collect()
}

impl StaleScratch {
    /// Hands what outlasts the launch to one detached grandchild, so that the run waits
    /// for neither: it removes the set-aside directories, by descriptor and without
    /// following anything ([`super::tree_removal::remove_tree_at`]; on a disk mounted with
    /// `discard` each removal waits for the disk), and, given descriptors to `hold` — the
    /// cover watch's inotify instance, init's mount namespace — keeps a reference to each
    /// until the write end of a pipe, returned, is closed (when the caller releases its
    /// watch or drops it after the run, or dies), so that the caller's own close is never
    /// the last one (the last close of an inotify instance waits for an SRCU grace period:
    /// ~6 ms measured, see [`super::cover_watch::CoverWatch::release`]; the last reference
    /// to a mount namespace, for an RCU grace period when its mounts go, ~0.2-0.3 ms
    /// measured, issue 12). Only the intermediate child's exit is
    /// waited for. The grandchild keeps no other descriptor (not the caller's stdout,
    /// stderr, report pipe or sandbox channels) and takes no signal blocked. Best effort:
    /// what it does not remove, the next run collects; `None` when there was nothing to
    /// hand over or the fork failed (the caller then closes the watch itself).
    ///
    /// Must be called from a single-threaded process (the helper, before it starts the
    /// proxy's threads) that has not joined the command's cgroup.
    pub fn detach_cleanup(self, hold: &[RawFd]) -> Option<OwnedFd> {
        if self.0.is_empty() && hold.is_empty() {
            return None;
        }
        let pipe = if hold.is_empty() {
            None
        } else {
            Some(sys::pipe().ok()?)
        };
        let mut keep: Vec<RawFd> = self.0.iter().map(|(d, _, _)| d.as_raw_fd()).collect();
        keep.extend_from_slice(hold);
        keep.extend(pipe.as_ref().map(|(r, _)| r.as_raw_fd()));
        // SAFETY: the caller is single-threaded, so the child and grandchild may run any
        // code; both end with `_exit` and never return into the caller's frames.
        let child = unsafe { libc::fork() };
        if child == 0 {
            // SAFETY: as above.
            if unsafe { libc::fork() } == 0 {
                super::server::close_all_but(&keep);
                // SAFETY: an all-zero sigset_t is valid, and sigemptyset makes it empty;
                // unblocking every signal has no memory-safety preconditions.
                unsafe {
                    let mut empty: libc::sigset_t = std::mem::zeroed();
                    libc::sigemptyset(&mut empty);
                    libc::sigprocmask(libc::SIG_SETMASK, &empty, std::ptr::null_mut());
                }
                for (dir, shown, names) in &self.0 {
                    for n in names {
                        let name = OsStr::from_bytes(n.to_bytes());
                        let _ = super::tree_removal::remove_tree_at(
                            dir.as_fd(),
                            name,
                            &shown.join(name),
                        );
                    }
                }
                if let Some((r, _)) = &pipe {
                    // Until EOF (or any error but an interrupted read: never spin).
                    let mut b = [0u8; 1];
                    while matches!(sys::read(r, &mut b), Err(e) if e.kind() == io::ErrorKind::Interrupted)
                    {
                    }
                }
            }
            // SAFETY: ends the forked process without running the caller's exit handlers
            // or destructors.
            unsafe { libc::_exit(0) };
        }
        if child < 0 {
            return None;
        }
        let _ = nix::sys::wait::waitpid(nix::unistd::Pid::from_raw(child), None);
        pipe.map(|(_, w)| w)
    }
}

/// The [`StepKind::CreateDir`] steps of `layout` (also run on rung 2, which mounts
/// nothing, so a missing writable grant means the same on every rung).
///
/// Errors: as [`prepare_host`].
pub fn create_missing_grants(layout: &Layout) -> io::Result<()> {
    for s in layout
        .steps
        .iter()
        .filter(|s| s.kind == StepKind::CreateDir)
    {
        // cordon's own hidden state root (masked at the same path) is not the user's.
        let own = layout
            .steps
            .iter()
            .any(|t| t.path == s.path && matches!(t.kind, StepKind::Mask { .. }));
        create_grant_dir(&s.path, !own)?;
    }
    Ok(())
}

/// Makes the missing directory `path` (absolute, canonical) of a writable grant on the
/// host, with no symlink followed ([`create_dir_nofollow`]), and — when `say` — notes on
/// stderr the first directory it made (a mistyped `-w` otherwise left directories behind
/// in silence).
///
/// Errors: `InvalidInput` when the first missing directory would be a new top-level one
/// (new-user pass nu16 N9: `-w /nonexistent/dir/x` made `/nonexistent`); the creation's
/// own error, worded with what to do.
pub fn create_grant_dir(path: &Path, say: bool) -> io::Result<()> {
    let first_missing = first_missing(path);
    if let Some(why) = new_top_level(path, first_missing.as_deref()) {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, why));
    }
    create_dir_nofollow(path).map_err(|e| {
        io::Error::new(
            e.kind(),
            format!(
                "cannot create {} for its writable grant: {e}; create it yourself or drop \
                 the grant",
                path.display()
            ),
        )
    })?;
    if let Some(m) = first_missing.filter(|_| say) {
        // A name like a file's (`notes.txt`) was most likely meant as one (new-user pass
        // 146: `-w newfile.txt` made a directory, and the write into it failed).
        let file_like = path
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.rsplit_once('.'))
            .is_some_and(|(stem, ext)| {
                !stem.is_empty()
                    && (1..=4).contains(&ext.len())
                    && ext.chars().all(|c| c.is_ascii_alphanumeric())
            });
        // Each directory made is named: the grant's, and the first of its missing
        // parents (new-user pass 180, #4: `-w new/a/b` said only "created new").
        let made = if m == path {
            format!("the directory {}", path.display())
        } else {
            format!("the directories {} through {}", m.display(), path.display())
        };
        eprintln!(
            "cordon: note: created {made} on the host for the writable grant {} (it did \
             not exist); it stays after the run{}",
            path.display(),
            if file_like {
                format!(
                    "; -w grants a directory, so {} is one now: to write a new file, grant \
                     the directory it goes in",
                    path.display()
                )
            } else {
                String::new()
            }
        );
    }
    Ok(())
}

/// The first of `path`'s missing directories (the shallowest), when one is missing.
fn first_missing(path: &Path) -> Option<PathBuf> {
    path.ancestors()
        .take_while(|a| std::fs::symlink_metadata(a).is_err())
        .last()
        .map(Path::to_path_buf)
}

/// Why making `first_missing` for the grant `path` is refused: it would be a new
/// top-level directory (new-user pass nu16 N9: `-w /nonexistent/dir/x` made
/// `/nonexistent`; attack pass 181 F2: `HOME=/` made cordon's layers want `/.cache`).
fn new_top_level(path: &Path, first_missing: Option<&Path>) -> Option<String> {
    let m = first_missing.filter(|m| m.components().count() <= 2)?;
    Some(format!(
        "refusing to create {} (a new top-level directory) for the writable grant {}: check \
         the path, or create it yourself first",
        m.display(),
        path.display()
    ))
}

/// What [`create_missing_grants`] would refuse for `layout`, without making anything: a
/// missing grant whose first missing directory is a new top-level one. Checked when the
/// sandbox is prepared, so `--dry-run`, `status` and `explain` say what a run meets.
///
/// Errors: the refusal, worded as the creation's.
pub fn check_missing_grants(layout: &Layout) -> Result<(), String> {
    layout
        .steps
        .iter()
        .filter(|s| s.kind == StepKind::CreateDir)
        .find_map(|s| top_level_refusal(&s.path))
        .map_or(Ok(()), Err)
}

/// Why making the missing directories of `path` (absolute) would be refused: its first
/// missing directory is a new top-level one ([`create_grant_dir`]'s refusal); `None` when
/// it would not (or nothing is missing). Only looks.
pub fn top_level_refusal(path: &Path) -> Option<String> {
    new_top_level(path, first_missing(path).as_deref())
}

/// `mkdir -p` of the absolute `path` without following any symlink: each component is
/// opened beneath its parent with `RESOLVE_NO_SYMLINKS` and, when missing, created with an
/// exclusive `mkdirat` (one that appears meanwhile is taken if it is a directory).
fn create_dir_nofollow(path: &Path) -> io::Result<()> {
    create_dir_nofollow_mode(path, 0o755)
}

/// [`create_dir_nofollow`] creating missing components with `mode`.
pub(super) fn create_dir_nofollow_mode(path: &Path, mode: libc::mode_t) -> io::Result<()> {
    let mut cur = sys::open_dir_nofollow(Path::new("/"))?;
    for comp in rel(path).components() {
        let name = Path::new(comp.as_os_str());
        let next = match sys::open_beneath(cur.as_raw_fd(), name) {
            Ok(f) => f,
            Err(e) if is_errno(&e, libc::ENOENT) => {
                let cname = CString::new(comp.as_os_str().as_bytes())?;
                match sys::mkdirat_excl(cur.as_raw_fd(), &cname, mode) {
                    Ok(()) => {}
                    Err(e) if is_errno(&e, libc::EEXIST) => {}
                    Err(e) => return Err(e),
                }
                sys::open_beneath(cur.as_raw_fd(), name)?
            }
            Err(e) => return Err(e),
        };
        if !is_dir_fd(&next)? {
            return Err(io::Error::new(
                io::ErrorKind::NotADirectory,
                format!("{} is not a directory", name.display()),
            ));
        }
        cur = next;
    }
    Ok(())
}

/// Why the helper could not make the placeholder for the missing protected path `path`,
/// told before anything runs (breaker, stop 21: `--dry-run` said a command would run in a
/// project on a read-only file system, or one the user cannot write, and every run was
/// refused at the placeholder step): the nearest existing directory above it is on a
/// read-only file system, or the invoking user cannot write and search it. `None` when
/// the path exists, or nothing is known to stop the placeholder.
fn placeholder_blocker(path: &Path) -> Option<String> {
    if std::fs::symlink_metadata(path).is_ok() {
        return None;
    }
    let above = path.ancestors().skip(1).find(|a| a.exists())?;
    let read_only = nix::sys::statvfs::statvfs(above)
        .is_ok_and(|v| v.flags().contains(nix::sys::statvfs::FsFlags::ST_RDONLY));
    let (why, fix) = if read_only {
        (
            "its directory is on a read-only file system",
            "the project cannot be made writable here — run with `--profile read-only`".to_string(),
        )
    } else if nix::unistd::faccessat(
        nix::fcntl::AT_FDCWD,
        above,
        nix::unistd::AccessFlags::W_OK | nix::unistd::AccessFlags::X_OK,
        nix::fcntl::AtFlags::AT_EACCESS,
    )
    .is_err()
    {
        (
            "you cannot write its directory",
            format!(
                "if an earlier command changed that directory's permissions, restore them \
                 (`chmod u+rwx {}`); if the project is not yours to write, run with \
                 `--profile read-only`",
                above.display()
            ),
        )
    } else {
        return None;
    };
    Some(format!(
        "cannot protect {}: it does not exist and cordon cannot make its placeholder ({why}: \
         {}); {fix}",
        path.display(),
        above.display()
    ))
}

/// Checks that no file `layout` covers has a second name (attack pass 26, F6 and F4): a
/// read-only bind, a mask or a stripped copy covers one *name*; another hard link to the
/// same file, made by an earlier run before the file was protected or denied (a hook
/// script before `core.hooksPath` named it, an empty `.env` before the secret was written
/// into it), would let the command write or read it all the same. Landlock is no help (its
/// rules follow paths too). Checked: every protected path, and the regular files up to 16
/// levels inside a protected directory (`objects/` skipped: git's local clones hard-link
/// those, and they hold no code); every masked or stripped file, wherever it is (the other
/// name may lie in a writable root of an earlier run; attack pass 27, G17), and the files
/// inside a masked directory within a writable root (G4). At most [`HARD_LINK_BUDGET`]
/// entries are looked at; past that the run is refused (G5). Nothing is followed: each
/// parent is opened with no symlink on the way. Fails closed.
///
/// `writes_judged`: init's hard-link check runs for this command (rung 1 with denial
/// records): it refuses writing or changing in place any file with a second name, so a
/// protected file's other name cannot be written through either, and protected paths are
/// not walked (new-user pass nu28, F1/F7: after `cp -al proj proj.bak` every run in `proj`
/// was refused, one covered `.git` file at a time). Hidden and stripped files are checked
/// all the same: the other name would let the command *read* them, which init does not
/// judge.
///
/// Errors: the first such file, with its link count and what to do.
pub fn check_hard_links(layout: &Layout, writes_judged: bool) -> Result<(), String> {
    let roots: Vec<&Path> = layout
        .steps
        .iter()
        .filter(|s| matches!(s.kind, StepKind::Bind { writable: true, .. }))
        .map(|s| s.path.as_path())
        .collect();
    let mut budget = HARD_LINK_BUDGET;
    for s in &layout.steps {
        let inside = roots.iter().any(|r| s.path.starts_with(r));
        let (what, walk) = match s.kind {
            StepKind::Bind {
                protected: true,
                writable: false,
                ..
            } if !writes_judged => ("write", true),
            // Every masked file: the other name may lie in a root of an earlier run, not of
            // this one (attack pass 27, G17); a masked directory inside a root is walked
            // (G4). Credential-stripped configs are covered copies too (G4).
            StepKind::Mask { .. } | StepKind::Stripped { .. } => ("read", inside),
            _ => continue,
        };
        match linked_file(&s.path, walk, &mut budget) {
            None => {}
            Some(Linked::Unchecked(dir)) => {
                return Err(format!(
                    "{} holds more than {HARD_LINK_BUDGET} entries, too many to check for hard \
                     links (a file there with a second name could be {what} through it); make \
                     the tree smaller or keep it outside the writable roots",
                    dir.display()
                ));
            }
            Some(Linked::File(file, links)) => {
                let root = roots
                    .iter()
                    .filter(|r| file.starts_with(r))
                    .min_by_key(|r| r.as_os_str().len())
                    .map_or_else(|| Path::new("/"), |r| *r);
                return Err(format!(
                    "{} has {links} hard links: a command could {what} it through another name, \
                 which cordon's cover of this path does not reach (an earlier command may have \
                 made the link); list them with `find {} -samefile {}`, remove the extra \
                 names, and run again",
                    file.display(),
                    root.display(),
                    file.display()
                ));
            }
        }
    }
    Ok(())
}

/// Entries [`check_hard_links`] looks at per launch, at most.
const HARD_LINK_BUDGET: usize = 4096;

/// What [`linked_file`] found.
enum Linked {
    /// A regular file with this many links (more than one).
    File(PathBuf, u64),
    /// A directory whose walk ran out of budget: unchecked, so refused.
    Unchecked(PathBuf),
}

/// The first regular file with more than one link at `path` or, when `walk` and `path` is
/// a directory, up to 16 levels below it (not in `objects/`); `None` when there is none,
/// `path` is missing, or a component on its way is a symlink (covered elsewhere).
/// [`Linked::Unchecked`] when the budget runs out (G5).
fn linked_file(path: &Path, walk: bool, budget: &mut usize) -> Option<Linked> {
    let (parent, name) = (path.parent()?, path.file_name()?);
    let pfd = sys::open_dir_nofollow(parent).ok()?;
    linked_at(pfd.as_fd(), name, path, if walk { 16 } else { 0 }, budget)
}

fn linked_at(
    dir: std::os::fd::BorrowedFd<'_>,
    name: &std::ffi::OsStr,
    shown: &Path,
    depth: usize,
    budget: &mut usize,
) -> Option<Linked> {
    let cname = CString::new(name.as_bytes()).ok()?;
    let st = sys::fstatat_nofollow(dir.as_raw_fd(), &cname).ok()?;
    match st.st_mode & libc::S_IFMT {
        libc::S_IFREG if st.st_nlink > 1 => {
            Some(Linked::File(shown.to_path_buf(), st.st_nlink as u64))
        }
        libc::S_IFDIR if depth > 0 && name != "objects" => {
            use nix::fcntl::{openat, OFlag};
            let fd = openat(
                dir,
                cname.as_c_str(),
                OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC,
                nix::sys::stat::Mode::empty(),
            )
            .ok()?;
            let names: Vec<std::ffi::OsString> = {
                let mut d = nix::dir::Dir::from_fd(fd.try_clone().ok()?).ok()?;
                d.iter()
                    .filter_map(Result::ok)
                    .map(|e| std::ffi::OsStr::from_bytes(e.file_name().to_bytes()).to_owned())
                    .filter(|n| n != "." && n != "..")
                    .collect()
            };
            for n in names {
                if *budget == 0 {
                    return Some(Linked::Unchecked(shown.to_path_buf()));
                }
                *budget -= 1;
                if let Some(found) = linked_at(fd.as_fd(), &n, &shown.join(&n), depth - 1, budget) {
                    return Some(found);
                }
            }
            None
        }
        _ => None,
    }
}

/// Checks, before anything runs, that every placeholder `layout` needs can be made
/// ([`placeholder_blocker`]) and that no covered file has another name
/// ([`check_hard_links`]): what `--dry-run` and the plan report must be what the helper
/// then does. `writes_judged` as for [`check_hard_links`]. Errors: the first blocker, in
/// words.
pub fn check_placeholders(layout: &Layout, writes_judged: bool) -> Result<(), String> {
    check_hard_links(layout, writes_judged)?;
    for s in &layout.steps {
        if let StepKind::Bind {
            protected: true, ..
        } = s.kind
        {
            if let Some(why) = placeholder_blocker(&s.path) {
                return Err(why);
            }
        }
    }
    Ok(())
}

/// Creates (permanently, see [`Placeholder`]) the protected paths of `layout` that are
/// missing now and are bound onto a writable host layer. Runs in the helper (host mount
/// namespace) before the sandbox is built.
///
/// Each placeholder is created relative to a descriptor of its parent directory opened
/// without following any symlink (a path with a symlink in it is an error: the bind would
/// refuse it too), with an exclusive create (an entry that appears meanwhile, e.g. made by
/// a concurrent run, is left as it is and bound). The missing directories above a
/// protected path are created the same way (empty, permanent), so it is always bound.
///
/// Errors: creating a placeholder failed for another reason than an entry that appeared
/// meanwhile (the helper then refuses to run: the path could not be
/// protected).
pub fn create_placeholders(layout: &Layout) -> io::Result<Vec<Placeholder>> {
    let mut out = Vec::new();
    for s in &layout.steps {
        let StepKind::Bind {
            protected: true,
            dir,
            ..
        } = s.kind
        else {
            continue;
        };
        match create_placeholder(&s.path, dir) {
            Ok(Some(p)) => out.push(p),
            Ok(None) => {}
            Err(e) => {
                if let Some(why) = placeholder_blocker(&s.path) {
                    return Err(io::Error::new(e.kind(), format!("{why} ({e})")));
                }
                // EACCES here is a directory on the way that the invoking user cannot
                // search or write, often an earlier command's `chmod` (breaker, stop 21):
                // say what to do about it.
                let fix = if e.kind() == io::ErrorKind::PermissionDenied {
                    " (a directory on its way cannot be searched or written by you, \
                     perhaps changed by an earlier command: check `ls -ld` of the \
                     directories above it and restore them with `chmod u+rwx DIR`)"
                        .to_string()
                } else {
                    String::new()
                };
                return Err(io::Error::new(
                    e.kind(),
                    format!(
                        "cannot protect {}: making its mount point: {e}{fix}",
                        s.path.display()
                    ),
                ));
            }
        }
    }
    Ok(out)
}

/// One placeholder: `Ok(None)` when the path exists (whatever it is, a symlink included),
/// its parent does not, or it appeared while being created.
fn create_placeholder(path: &Path, dir: bool) -> io::Result<Option<Placeholder>> {
    let (Some(parent), Some(name)) = (path.parent(), path.file_name()) else {
        return Ok(None);
    };
    // A protected path whose parent does not exist yet (e.g. `core.hooksPath =
    // tools/git/hooks` before `tools/` exists) is protected all the same: the missing
    // directories are created first (no symlink followed, each relative to its parent's
    // descriptor), so the read-only bind has a mount point. Skipping it would let the
    // command create the path (fail open).
    let pfd = ensure_dir_nofollow(parent, 0)
        .map_err(|e| ctx_err(format!("opening {}", parent.display()), e))?;
    let cname = CString::new(name.as_bytes())?;
    match sys::fstatat_nofollow(pfd.as_raw_fd(), &cname) {
        Ok(_) => return Ok(None),
        Err(e) if is_errno(&e, libc::ENOENT) => {}
        Err(e) => return Err(e),
    }
    // Run as root in a directory someone else owns, the placeholder is given to that owner
    // (through its own descriptor, checked to be the entry just made): a root-owned
    // `.git/worktrees/` broke the user's `git worktree add` (breaker, stop 18).
    let owner = owner_for_placeholder(&pfd);
    let created = if dir {
        // Empty, including `.git`/`.cordon`: git ignores an empty directory (no `??`
        // in `git status`), and cordon does not take it for a workspace marker.
        sys::mkdirat_excl(pfd.as_raw_fd(), &cname, 0o755).map(|()| {
            if let Some((uid, gid)) = owner {
                give_new_dir(&pfd, &cname, uid, gid);
            }
        })
    } else {
        sys::create_file_excl(pfd.as_raw_fd(), &cname, 0o644).and_then(|f| {
            use std::io::Write as _;
            if let Some((uid, gid)) = owner {
                let _ = sys::fchown(f.as_raw_fd(), uid, gid);
            }
            std::fs::File::from(f).write_all(placeholder_contents(path))
        })
    };
    match created {
        Ok(()) => Ok(Some(Placeholder {
            path: path.to_path_buf(),
            dir,
        })),
        // Someone else's entry appeared, or the parent went away: nothing of ours.
        Err(e) if is_errno(&e, libc::EEXIST) || is_errno(&e, libc::ENOENT) => Ok(None),
        Err(e) => Err(e),
    }
}

/// `(uid, gid)` of the directory `pfd` when this process is root and the directory is not
/// root's: the owner a placeholder created in it is given to.
fn owner_for_placeholder(pfd: &OwnedFd) -> Option<(libc::uid_t, libc::gid_t)> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return None;
    }
    let st = sys::fstat(pfd.as_raw_fd()).ok()?;
    (st.st_uid != 0).then_some((st.st_uid, st.st_gid))
}

/// Gives the directory `name` just created in `pfd` to `uid:gid`: opened without
/// following a link and changed through that descriptor only if it is still a directory
/// of ours (root's) — an entry swapped in meanwhile by the directory's owner is left alone.
fn give_new_dir(pfd: &OwnedFd, name: &CStr, uid: libc::uid_t, gid: libc::gid_t) {
    let Ok(fd) = sys::open_dir_at_nofollow(pfd.as_raw_fd(), name) else {
        return;
    };
    if sys::fstat(fd.as_raw_fd()).is_ok_and(|st| st.st_uid == 0) {
        let _ = sys::fchown(fd.as_raw_fd(), uid, gid);
    }
}

/// Opens directory `path` with no symlink anywhere in it, creating it and any missing
/// ancestors (mode 0755) one level at a time relative to the parent's descriptor. Depth is
/// bounded; an ancestor that is not a directory (or a symlink) is an error.
fn ensure_dir_nofollow(path: &Path, depth: usize) -> io::Result<OwnedFd> {
    match sys::open_dir_nofollow(path) {
        Err(e) if is_errno(&e, libc::ENOENT) && depth < 32 => {
            let (Some(parent), Some(name)) = (path.parent(), path.file_name()) else {
                return Err(e);
            };
            let pfd = ensure_dir_nofollow(parent, depth + 1)?;
            let cname = CString::new(name.as_bytes())?;
            // Given to the parent's owner, as the placeholder below it is (breaker, stop
            // 19: root-owned `.husky/` and `.husky/_` kept the repository's owner from
            // installing hooks).
            let owner = owner_for_placeholder(&pfd);
            match sys::mkdirat_excl(pfd.as_raw_fd(), &cname, 0o755) {
                Ok(()) => {
                    if let Some((uid, gid)) = owner {
                        give_new_dir(&pfd, &cname, uid, gid);
                    }
                }
                Err(e) if is_errno(&e, libc::EEXIST) => {}
                Err(e) => return Err(e),
            }
            sys::open_dir_nofollow(path)
        }
        other => other,
    }
}

fn c(s: &str) -> CString {
    CString::new(s).expect("no NUL in static strings")
}

fn rel(p: &Path) -> &Path {
    p.strip_prefix("/").unwrap_or(p)
}

fn ctx_err(what: impl std::fmt::Display, e: io::Error) -> io::Error {
    io::Error::new(e.kind(), format!("{what}: {e}"))
}

fn is_dir_fd(fd: &OwnedFd) -> io::Result<bool> {
    // fstat on the descriptor itself: no dup/close per bind on the launch path.
    Ok(sys::fstat(fd.as_raw_fd())?.st_mode & libc::S_IFMT == libc::S_IFDIR)
}

/// Opens `rel` beneath `root`, creating it (and its parents) when missing and
/// `may_create`: a directory if `dir`, else an empty file.
fn ensure_target(root: RawFd, rel: &Path, dir: bool, may_create: bool) -> io::Result<OwnedFd> {
    match sys::open_beneath(root, rel) {
        Ok(fd) => Ok(fd),
        Err(e) if e.raw_os_error() == Some(libc::ENOENT) && may_create => {
            let name = rel
                .file_name()
                .ok_or_else(|| io::Error::from(io::ErrorKind::InvalidInput))?;
            let cname = CString::new(name.as_bytes())?;
            let parent = rel.parent().filter(|p| !p.as_os_str().is_empty());
            let pfd = match parent {
                Some(p) => Some(ensure_target(root, p, true, true)?),
                None => None,
            };
            let praw = pfd.as_ref().map(|f| f.as_raw_fd()).unwrap_or(root);
            if dir {
                sys::mkdirat(praw, &cname, 0o755)?;
            } else {
                sys::mkfileat(praw, &cname, 0o644)?;
            }
            sys::open_beneath(praw, Path::new(name))
        }
        Err(e) => Err(e),
    }
}

/// Opens the directory `rel` beneath `root` (the root itself when `rel` is empty), no
/// symlink followed.
fn open_dir_beneath(root: RawFd, rel: &Path) -> io::Result<OwnedFd> {
    if rel.as_os_str().is_empty() {
        return sys::dup_cloexec(root);
    }
    sys::open_beneath(root, rel)
}

/// Handles kept after [`build`]: descriptors the Landlock layer needs.
pub struct Built {
    /// `O_PATH` descriptor of the host's `/dev/pts`, so a terminal inherited from the host
    /// can still be reopened through `/proc/self/fd` under Landlock.
    pub host_devpts: Option<OwnedFd>,
    /// Skipped steps and why.
    pub notes: Vec<String>,
    /// [`StepKind::Overlay`] caches the kernel refused, left read-only: path and why.
    pub read_only_caches: Vec<(PathBuf, String)>,
    /// Things the user should always hear about (printed as `cordon: note: …` before the
    /// command runs), e.g. a config file hidden whole because it does not parse.
    pub warnings: Vec<String>,
    /// The writable `.git/config` copies ([`StepKind::GitConfig`]) for the broker.
    pub git_configs: Vec<super::git_config_broker::Copy>,
    /// The paths of the steps that mount nothing after all, each said in `notes` or
    /// `warnings` (an entry that vanished before the build, a cache left read-only, a
    /// `.git/config` left read-only): a template does not expect them to be mount points
    /// ([`super::cover_watch::mounted_covers`]).
    pub skipped: Vec<PathBuf>,
}

/// Builds the new root by applying the steps of `layout` in order, and pivots into it.
/// Must run in a fresh mount namespace owned by a user namespace in which the caller has
/// `CAP_SYS_ADMIN`, inside the new pid namespace (for `/proc`). Afterwards `/` is the new
/// root and the host root is detached; the cwd is `/`.
///
/// Errors: any failed mount step, with the step named (the caller refuses to run).
pub fn build(layout: &Layout) -> io::Result<Built> {
    let mut st = BuildState {
        old: None,
        root: None,
        make_ro: Vec::new(),
        host_devpts: None,
        notes: layout.notes.clone(),
        read_only_caches: layout.read_only_caches.clone(),
        stripped: 0,
        warnings: Vec::new(),
        git_configs: Vec::new(),
        skipped: Vec::new(),
    };
    for s in &layout.steps {
        match &s.kind {
            StepKind::Staging => apply_staging(&mut st)?,
            StepKind::Root { base } => apply_root(&mut st, *base)?,
            StepKind::PrivateTmp { size } => apply_private_tmp(&mut st, s, size.as_deref())?,
            StepKind::Bind {
                writable,
                protected,
                ..
            } => apply_bind(&mut st, s, *writable, *protected)?,
            StepKind::PinLink => apply_pin_link(&mut st, s)?,
            StepKind::CopyLink => apply_copy_link(&mut st, s)?,
            StepKind::CreateDir => {} // done by `prepare_host` before the sandbox exists
            StepKind::Overlay { name, state } => apply_overlay(&mut st, s, name, state)?,
            StepKind::CacheDir { name, var } => apply_cache_dir(&mut st, s, name, var),
            StepKind::Stripped { format } => apply_stripped(&mut st, s, *format)?,
            StepKind::GitConfig => apply_git_config(&mut st, s)?,
            StepKind::Mask { traverse } => apply_mask(&mut st, s, *traverse)?,
            StepKind::Dev { shm_size } => apply_dev(&mut st, s, shm_size.as_deref())?,
            StepKind::Proc => apply_proc(&mut st, s)?,
            StepKind::ReadOnlyRemount => apply_read_only(&mut st)?,
            StepKind::Pivot => apply_pivot(&mut st)?,
        }
    }
    Ok(Built {
        host_devpts: st.host_devpts,
        notes: st.notes,
        read_only_caches: st.read_only_caches,
        warnings: st.warnings,
        git_configs: st.git_configs,
        skipped: st.skipped,
    })
}

/// Template launches (issue 12, [`super::template`]): in a per-command mount namespace
/// copied from a template's built root (after its pivot), mounts afresh everything one
/// command could leave behind for the next — the private `/tmp`, this pid namespace's own
/// `/proc` (with its read-only entries), and `/dev`'s `shm` tmpfs and `pts` instance —
/// on top of the template's. Must run as pid 1 of the command's new pid namespace, with
/// `CAP_SYS_ADMIN` in the template's user namespace. The template refuses layouts with
/// other mounts beneath these places ([`per_command_places`]).
///
/// `which` says which of them: all (a command in a namespace of its own copy), all but
/// `/proc` (in the mount namespace the template makes ahead for the next command, where no
/// pid namespace of the command exists yet: [`PerCommand::AheadOfCommand`]), or `/proc`
/// alone (in that namespace, once entered).
///
/// Errors: a mount failed, named (the caller refuses to run).
pub fn refresh_per_command(layout: &Layout, which: PerCommand) -> io::Result<()> {
    let mut st = BuildState {
        old: None,
        root: Some(sys::open_path(Path::new("/"), true)?),
        make_ro: Vec::new(),
        host_devpts: None,
        notes: Vec::new(),
        read_only_caches: Vec::new(),
        stripped: 0,
        warnings: Vec::new(),
        git_configs: Vec::new(),
        skipped: Vec::new(),
    };
    let (proc, rest) = match which {
        PerCommand::All => (true, true),
        PerCommand::AheadOfCommand => (false, true),
        PerCommand::ProcOnly => (true, false),
    };
    for s in &layout.steps {
        match &s.kind {
            StepKind::Proc if proc => apply_proc(&mut st, s)?,
            _ if !rest => {}
            StepKind::PrivateTmp { size } => apply_private_tmp(&mut st, s, size.as_deref())?,
            StepKind::Dev { shm_size } => {
                let dev = sys::open_beneath(st.root()?, Path::new("dev"))?;
                // A command's own pty instance, or no command: the template's would be shared
                // with the commands before and after it (review: this failure was skipped).
                let pts = sys::new_fs(
                    c"devpts",
                    &[
                        (c"newinstance", None),
                        (c"ptmxmode", Some(c"0666")),
                        (c"mode", Some(c"620")),
                    ],
                    sys::MOUNT_ATTR_NOSUID | sys::MOUNT_ATTR_NOEXEC,
                )
                .map_err(|e| ctx_err("/dev/pts (a new instance per command)", e))?;
                let target = sys::open_beneath(dev.as_raw_fd(), Path::new("pts"))?;
                sys::attach(&pts, &target).map_err(|e| ctx_err("/dev/pts", e))?;
                let shm = new_tmpfs("1777", shm_size.as_deref(), NOSUID_NODEV)
                    .map_err(|e| ctx_err("/dev/shm", e))?;
                let target = sys::open_beneath(dev.as_raw_fd(), Path::new("shm"))?;
                sys::attach(&shm, &target).map_err(|e| ctx_err("/dev/shm", e))?;
            }
            StepKind::CacheDir { name, .. } => {
                if let Some(keep) = cordon_policy::caches::kept_in_layer(name) {
                    fresh_tool_home(&mut st, s, &keep)?;
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// A template's tool home ([`bind_tool_home`], built once) made fresh for one command: a
/// new tmpfs over it, with the template's binds of the home's caches cloned into it. What
/// one command writes elsewhere in the home is never seen by the next one forked from the
/// template, nor by one running beside it (attack pass 154, F3).
fn fresh_tool_home(st: &mut BuildState, s: &Step, keep: &[&str]) -> io::Result<()> {
    let rp = rel(&s.path);
    let shown = |k: &str| s.path.join(k).display().to_string();
    // The template's home: no command has seen it (each is given its own on top).
    let built = sys::open_beneath(st.root()?, rp)
        .map_err(|e| ctx_err(format!("opening {}", s.path.display()), e))?;
    let mut caches = Vec::new();
    for k in keep {
        match sys::open_beneath(built.as_raw_fd(), Path::new(k)) {
            Ok(at) => caches.push((
                *k,
                sys::clone_tree(at.as_raw_fd(), "", true)
                    .map_err(|e| ctx_err(format!("cloning {}", shown(k)), e))?,
            )),
            // Not mounted by the template (its private directory was not made): none.
            Err(e) if e.raw_os_error() == Some(libc::ENOENT) => {}
            Err(e) => return Err(ctx_err(format!("opening {}", shown(k)), e)),
        }
    }
    let home = new_tmpfs("0755", None, NOSUID_NODEV).map_err(|e| ctx_err("the tool home", e))?;
    sys::attach(&home, &built).map_err(|e| ctx_err("attaching the tool home", e))?;
    let home = sys::open_beneath(st.root()?, rp)
        .map_err(|e| ctx_err(format!("opening {}", s.path.display()), e))?;
    for (k, tree) in caches {
        let ck = CString::new(k)?;
        sys::mkdirat(home.as_raw_fd(), &ck, 0o755)?;
        let at = sys::open_beneath(home.as_raw_fd(), Path::new(k))?;
        match sys::attach(&tree, &at) {
            Ok(()) => {}
            // The private directory was removed on the host since the template bound it
            // (`cordon cache clear`): this command starts that cache empty, in its own home
            // (attack pass 156, L2: every command of the template exited 125).
            Err(e) if e.raw_os_error() == Some(libc::ENOENT) => {}
            Err(e) => return Err(ctx_err(format!("binding {}", shown(k)), e)),
        }
    }
    Ok(())
}

/// Which of a template command's own mounts [`refresh_per_command`] makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PerCommand {
    /// Every one: the command's mount namespace is a plain copy of the template's.
    All,
    /// All but `/proc`, which needs the command's pid namespace: made in the namespace the
    /// template prepares ahead for its next command (issue 12: off the launch path).
    AheadOfCommand,
    /// `/proc` alone, in a namespace made with [`PerCommand::AheadOfCommand`].
    ProcOnly,
}

/// The places [`refresh_per_command`] mounts afresh for each command of a template
/// (`/tmp` only when it is private).
pub fn per_command_places(layout: &Layout) -> Vec<&'static Path> {
    let mut v = vec![
        Path::new("/proc"),
        Path::new("/dev/shm"),
        Path::new("/dev/pts"),
    ];
    if layout.private_tmp() {
        v.push(Path::new("/tmp"));
    }
    v
}

/// What the steps share while the root is built.
struct BuildState {
    /// `/oldroot` (the host root) once staged.
    old: Option<OwnedFd>,
    /// `/newroot` once the root is attached.
    root: Option<OwnedFd>,
    /// Our tmpfs mounts to make read-only at [`StepKind::ReadOnlyRemount`].
    make_ro: Vec<OwnedFd>,
    host_devpts: Option<OwnedFd>,
    notes: Vec<String>,
    read_only_caches: Vec<(PathBuf, String)>,
    /// Stripped copies written so far (names their files in the staging tmpfs).
    stripped: usize,
    warnings: Vec<String>,
    git_configs: Vec<super::git_config_broker::Copy>,
    skipped: Vec<PathBuf>,
}

impl BuildState {
    fn old(&self) -> io::Result<RawFd> {
        self.old
            .as_ref()
            .map(|f| f.as_raw_fd())
            .ok_or_else(|| io::Error::other("mount plan: no staging step before this one"))
    }
    fn root(&self) -> io::Result<RawFd> {
        self.root
            .as_ref()
            .map(|f| f.as_raw_fd())
            .ok_or_else(|| io::Error::other("mount plan: no root step before this one"))
    }
}

const NOSUID_NODEV: u64 = sys::MOUNT_ATTR_NOSUID | sys::MOUNT_ATTR_NODEV;

fn apply_staging(st: &mut BuildState) -> io::Result<()> {
    sys::make_rprivate(c"/").map_err(|e| ctx_err("making / private", e))?;
    let staging = if Path::new("/tmp").is_dir() {
        c"/tmp"
    } else {
        c"/proc"
    };
    sys::mount_tmpfs(staging, c"mode=0700").map_err(|e| ctx_err("staging tmpfs", e))?;
    let dir = sys::open_path(Path::new(staging.to_str().unwrap_or("/tmp")), true)?;
    sys::mkdirat(dir.as_raw_fd(), c"newroot", 0o755)?;
    sys::mkdirat(dir.as_raw_fd(), c"oldroot", 0o755)?;
    sys::mkfileat(dir.as_raw_fd(), c"deny-file", 0)?;
    sys::fchdir(&dir)?;
    sys::pivot_root(c".", c"oldroot").map_err(|e| ctx_err("pivot_root to staging", e))?;
    drop(dir);
    std::env::set_current_dir("/")?;
    st.old = Some(sys::open_path(Path::new("/oldroot"), true)?);
    Ok(())
}

fn apply_root(st: &mut BuildState, base: Base) -> io::Result<()> {
    let target = sys::open_path(Path::new("/newroot"), true)?;
    match base {
        Base::HostReadOnly | Base::HostWritable => {
            let tree = sys::clone_tree(st.old()?, "", true)
                .map_err(|e| ctx_err("cloning the host root", e))?;
            let mut set = NOSUID_NODEV;
            if base == Base::HostReadOnly {
                set |= sys::MOUNT_ATTR_RDONLY;
            }
            sys::mount_setattr(tree.as_raw_fd(), true, set, 0)
                .map_err(|e| ctx_err("making the root read-only", e))?;
            sys::attach(&tree, &target).map_err(|e| ctx_err("attaching the root", e))?;
        }
        Base::Empty => {
            let t = sys::new_fs(c"tmpfs", &[(c"mode", Some(c"0755"))], NOSUID_NODEV)
                .map_err(|e| ctx_err("root tmpfs", e))?;
            sys::attach(&t, &target).map_err(|e| ctx_err("attaching the root tmpfs", e))?;
            st.make_ro.push(t);
        }
    }
    st.root = Some(sys::open_path(Path::new("/newroot"), true)?);
    Ok(())
}

/// tmpfs options: `mode`, plus `size` when given.
fn tmpfs_opts(mode: &CString, size: Option<&str>) -> io::Result<Vec<(CString, Option<CString>)>> {
    let mut o = vec![(c("mode"), Some(mode.clone()))];
    if let Some(s) = size {
        o.push((c("size"), Some(CString::new(s)?)));
    }
    Ok(o)
}

fn new_tmpfs(mode: &str, size: Option<&str>, attrs: u64) -> io::Result<OwnedFd> {
    let opts = tmpfs_opts(&c(mode), size)?;
    let refs: Vec<(&std::ffi::CStr, Option<&std::ffi::CStr>)> = opts
        .iter()
        .map(|(k, v)| (k.as_c_str(), v.as_deref()))
        .collect();
    sys::new_fs(c"tmpfs", &refs, attrs)
}

fn apply_private_tmp(st: &mut BuildState, s: &Step, size: Option<&str>) -> io::Result<()> {
    let t = new_tmpfs("1777", size, NOSUID_NODEV).map_err(|e| ctx_err("private /tmp", e))?;
    let target = ensure_target(st.root()?, rel(&s.path), true, s.may_create)
        .map_err(|e| ctx_err("mountpoint /tmp", e))?;
    sys::attach(&t, &target).map_err(|e| ctx_err("attaching /tmp", e))
}

fn apply_bind(st: &mut BuildState, s: &Step, writable: bool, protected: bool) -> io::Result<()> {
    let rp = rel(&s.path);
    let src = match sys::open_beneath(st.old()?, rp) {
        Ok(f) => f,
        Err(e) if e.raw_os_error() == Some(libc::ENOENT) => {
            st.notes.push(format!(
                "{} {}: vanished before the sandbox was built, skipped",
                if protected { "protected" } else { "entry" },
                s.path.display()
            ));
            st.skipped.push(s.path.clone());
            return Ok(());
        }
        Err(e) => return Err(ctx_err(format!("opening {}", s.path.display()), e)),
    };
    let dir = is_dir_fd(&src)?;
    let tree = sys::clone_tree(src.as_raw_fd(), "", true)
        .map_err(|e| ctx_err(format!("cloning {}", s.path.display()), e))?;
    let mut set = NOSUID_NODEV;
    if !writable {
        set |= sys::MOUNT_ATTR_RDONLY;
    }
    sys::mount_setattr(tree.as_raw_fd(), true, set, 0)
        .map_err(|e| ctx_err(format!("attributes of {}", s.path.display()), e))?;
    let target = ensure_target(st.root()?, rp, dir, s.may_create)
        .map_err(|e| ctx_err(format!("mountpoint {}", s.path.display()), e))?;
    sys::attach(&tree, &target).map_err(|e| ctx_err(format!("binding {}", s.path.display()), e))
}

fn apply_pin_link(st: &mut BuildState, s: &Step) -> io::Result<()> {
    let rp = rel(&s.path);
    let (Some(parent), Some(name)) = (rp.parent(), rp.file_name()) else {
        return Ok(());
    };
    let cname = CString::new(name.as_bytes())?;
    let fail =
        |what: &str, e: io::Error| ctx_err(format!("{what} the symlink {}", s.path.display()), e);
    let src_dir = open_dir_beneath(st.old()?, parent).map_err(|e| fail("opening", e))?;
    let stat =
        sys::fstatat_nofollow(src_dir.as_raw_fd(), &cname).map_err(|e| fail("checking", e))?;
    if stat.st_mode & libc::S_IFMT != libc::S_IFLNK {
        return Err(fail(
            "pinning",
            io::Error::other("it was replaced since launch; run again"),
        ));
    }
    let link = sys::clone_nofollow(src_dir.as_raw_fd(), &cname).map_err(|e| fail("cloning", e))?;
    let dst_dir = open_dir_beneath(st.root()?, parent).map_err(|e| fail("opening", e))?;
    sys::attach_at(&link, dst_dir.as_raw_fd(), &cname).map_err(|e| fail("pinning", e))
}

fn apply_copy_link(st: &mut BuildState, s: &Step) -> io::Result<()> {
    let rp = rel(&s.path);
    let (Some(parent), Some(name)) = (rp.parent(), rp.file_name()) else {
        return Ok(());
    };
    let src_dir = open_dir_beneath(st.old()?, parent)
        .map_err(|e| ctx_err(format!("opening {}", s.path.display()), e))?;
    let target = match nix::fcntl::readlinkat(&src_dir, name) {
        Ok(t) => t,
        Err(e) => {
            st.notes
                .push(format!("symlink {}: not recreated ({e})", s.path.display()));
            return Ok(());
        }
    };
    let dst_dir = if parent.as_os_str().is_empty() {
        open_dir_beneath(st.root()?, parent)?
    } else {
        ensure_target(st.root()?, parent, true, true)
            .map_err(|e| ctx_err(format!("mountpoint {}", s.path.display()), e))?
    };
    let cname = CString::new(name.as_bytes())?;
    let ctarget = CString::new(target.as_bytes())?;
    match sys::symlinkat(&ctarget, dst_dir.as_raw_fd(), &cname) {
        Ok(()) => Ok(()),
        Err(e) if is_errno(&e, libc::EEXIST) => Ok(()),
        Err(e) => Err(ctx_err(format!("recreating {}", s.path.display()), e)),
    }
}

/// Mounts the overlay of one cache. Every layer is opened on the host root beneath
/// `/oldroot` without following symlinks and handed to overlayfs as a
/// `/proc/self/fd/N` path, so what was checked is what is mounted. Any failure leaves the
/// cache as the layer below shows it (read-only) and records why.
fn apply_overlay(st: &mut BuildState, s: &Step, name: &str, state: &Path) -> io::Result<()> {
    match mount_overlay(st, s, name, state) {
        Ok(()) => Ok(()),
        Err(e) => {
            st.notes.push(format!(
                "cache `{name}` {}: copy-on-write layer unavailable ({e}); read-only",
                s.path.display()
            ));
            st.read_only_caches.push((s.path.clone(), e.to_string()));
            st.skipped.push(s.path.clone());
            Ok(())
        }
    }
}

fn mount_overlay(st: &mut BuildState, s: &Step, name: &str, state: &Path) -> io::Result<()> {
    let old = st.old()?;
    let lower = sys::open_beneath(old, rel(&s.path)).map_err(|e| ctx_err("lower layer", e))?;
    let upper =
        sys::open_beneath(old, &rel(state).join("upper")).map_err(|e| ctx_err("upper layer", e))?;
    let work =
        sys::open_beneath(old, &rel(state).join("work")).map_err(|e| ctx_err("work dir", e))?;
    for (fd, what) in [
        (&lower, "lower layer"),
        (&upper, "upper layer"),
        (&work, "work dir"),
    ] {
        if !is_dir_fd(fd)? {
            return Err(io::Error::other(format!("{what} is not a directory")));
        }
    }
    // A whole tool home's layer (`~/.cargo` without a registry) keeps only its caches:
    // what the last run left elsewhere in it (a replaced `bin/cargo`, a `config.toml`) is
    // removed, by descriptor and without following anything, before it is mounted again
    // (attack pass 25, A4). The run holds the layer's slot lock: no other mount uses it.
    if let Some(keep) = cordon_policy::caches::kept_in_layer(name) {
        super::tree_removal::empty_dir_at(upper.as_fd(), &state.join("upper"), &|n| {
            keep.iter().any(|k| k.as_bytes() == n.to_bytes())
        })
        .map_err(|e| ctx_err("clearing the layer's non-cache entries", e))?;
    }
    let via = |fd: &OwnedFd| CString::new(format!("/oldroot/proc/self/fd/{}", fd.as_raw_fd()));
    let (l, u, w) = (via(&lower)?, via(&upper)?, via(&work)?);
    let mount = |volatile: bool| {
        let mut opts = vec![
            (c"lowerdir", Some(l.as_c_str())),
            (c"upperdir", Some(u.as_c_str())),
            (c"workdir", Some(w.as_c_str())),
            (c"userxattr", None),
        ];
        if volatile {
            opts.push((c"volatile", None));
        }
        sys::new_fs(c"overlay", &opts, NOSUID_NODEV)
    };
    // `volatile`: no sync of the upper filesystem when the sandbox's mount namespace goes
    // away. Without it every run's teardown waits for a sync of the whole host disk the
    // cache lives on (tens of ms on a busy disk). The layer is a cache: after a host crash
    // it may miss the last writes, which the package managers re-fetch. The kernel leaves
    // `work/incompat/volatile` behind and refuses the next volatile mount while it is
    // there: removed first (beneath the pinned work dir, nothing followed: the `dirty` file, then
    // its directory). Kernels without
    // the option (< 5.10) get the plain mount.
    clear_volatile_mark(&work);
    let m = match mount(true) {
        Ok(m) => m,
        Err(_) => mount(false)?,
    };
    let target =
        sys::open_beneath(st.root()?, rel(&s.path)).map_err(|e| ctx_err("mountpoint", e))?;
    sys::attach(&m, &target)
}

/// Binds the private directory of a cache missing on the host ([`StepKind::CacheDir`]);
/// a failure leaves the cache missing, with a note (the tool then fails as it would
/// without cordon's help, naming the path). A whole tool home's ([`bind_tool_home`]) keeps
/// only its caches.
fn apply_cache_dir(st: &mut BuildState, s: &Step, name: &str, var: &str) {
    let r = match cordon_policy::caches::kept_in_layer(name) {
        Some(keep) => bind_tool_home(st, s, &keep),
        None => apply_bind(st, s, true, false),
    };
    if let Err(e) = r {
        st.notes.push(format!(
            "cache `{name}`: its private directory {} could not be mounted ({e}); {var} \
             points at a missing directory",
            s.path.display()
        ));
    }
}

/// A tool home missing on the host (`CARGO_HOME`, `GRADLE_USER_HOME` pointed at the
/// private directory): a fresh, empty tmpfs for this run, with only the home's caches
/// (`keep`: `registry`, `git`; `caches`, `wrapper`) bound into it from the private
/// directory. What a command writes elsewhere in the home — a `config.toml` naming a
/// `rustc-wrapper`, a replaced `bin/cargo`, a gradle init script — goes with the run, and
/// no concurrent run sees it (attack pass 154, F3: the whole directory was bound, and a
/// planted wrapper ran in every later `cargo build` of the project; the same rule as a
/// tool home's overlay layer, [`cordon_policy::caches::kept_in_layer`]).
fn bind_tool_home(st: &mut BuildState, s: &Step, keep: &[&str]) -> io::Result<()> {
    let rp = rel(&s.path);
    let private = sys::open_beneath(st.old()?, rp)
        .map_err(|e| ctx_err(format!("opening {}", s.path.display()), e))?;
    if !is_dir_fd(&private)? {
        return Err(io::Error::other("not a directory"));
    }
    let home = new_tmpfs("0755", None, NOSUID_NODEV).map_err(|e| ctx_err("the tool home", e))?;
    let target = ensure_target(st.root()?, rp, true, s.may_create)
        .map_err(|e| ctx_err(format!("mountpoint {}", s.path.display()), e))?;
    sys::attach(&home, &target).map_err(|e| ctx_err("attaching the tool home", e))?;
    let home = sys::open_beneath(st.root()?, rp)
        .map_err(|e| ctx_err(format!("opening {}", s.path.display()), e))?;
    for k in keep {
        // Made on the host beforehand ([`create_overlay_dirs`]); one that is not a
        // directory (planted) is left out.
        let Ok(cache) = sys::open_beneath(private.as_raw_fd(), Path::new(k)) else {
            continue;
        };
        if !is_dir_fd(&cache)? {
            continue;
        }
        let tree = sys::clone_tree(cache.as_raw_fd(), "", true)
            .map_err(|e| ctx_err(format!("cloning {k}"), e))?;
        sys::mount_setattr(tree.as_raw_fd(), true, NOSUID_NODEV, 0)
            .map_err(|e| ctx_err(format!("attributes of {k}"), e))?;
        let ck = CString::new(*k)?;
        sys::mkdirat(home.as_raw_fd(), &ck, 0o755)?;
        let at = sys::open_beneath(home.as_raw_fd(), Path::new(k))?;
        sys::attach(&tree, &at).map_err(|e| ctx_err(format!("binding {k}"), e))?;
    }
    Ok(())
}

/// Removes `work/incompat/volatile` beneath an overlay's pinned work dir (see
/// [`mount_overlay`]); best effort: when it stays, the mount falls back to a plain one.
fn clear_volatile_mark(work: &OwnedFd) {
    // The kernel's mark: `work/incompat/volatile/dirty` (a file) in its directory.
    if let Ok(d) = sys::open_beneath(work.as_raw_fd(), Path::new("work/incompat/volatile")) {
        let _ = sys::unlinkat(d.as_raw_fd(), c"dirty", false);
    }
    if let Ok(d) = sys::open_beneath(work.as_raw_fd(), Path::new("work/incompat")) {
        let _ = sys::unlinkat(d.as_raw_fd(), c"volatile", true);
    }
}

/// Binds a credential-stripped copy over a config file, or hides it whole (with a note)
/// when it cannot be read as a regular file or does not parse.
fn apply_stripped(
    st: &mut BuildState,
    s: &Step,
    format: cordon_policy::stripped::ConfigFormat,
) -> io::Result<()> {
    match stripped_copy(st, s, format) {
        Ok(()) => Ok(()),
        Err(e) => {
            st.warnings.push(format!(
                "{} is hidden whole: no copy with credentials removed could be made ({e}); \
                 fix the file's syntax to see its settings inside",
                s.path.display()
            ));
            apply_mask(st, s, false)
        }
    }
}

fn stripped_copy(
    st: &mut BuildState,
    s: &Step,
    format: cordon_policy::stripped::ConfigFormat,
) -> io::Result<()> {
    use std::io::{Read as _, Write as _};
    let src = sys::open_beneath(st.old()?, rel(&s.path))?;
    if sys::fstat(src.as_raw_fd())?.st_mode & libc::S_IFMT != libc::S_IFREG {
        return Err(io::Error::other("not a regular file"));
    }
    // Reopened for reading through the descriptor checked above.
    let f = std::fs::File::open(format!("/oldroot/proc/self/fd/{}", src.as_raw_fd()))?;
    let mut raw = Vec::new();
    f.take(cordon_policy::stripped::MAX_STRIPPED_BYTES as u64 + 1)
        .read_to_end(&mut raw)?;
    let out = cordon_policy::stripped::strip(format, &raw).map_err(io::Error::other)?;
    st.stripped += 1;
    let name = CString::new(format!("stripped-{}", st.stripped))?;
    let staging = sys::open_path(Path::new("/"), true)?;
    let copy = sys::create_file_excl(staging.as_raw_fd(), &name, 0o444)?;
    std::fs::File::from(copy).write_all(&out.text)?;
    let tree = sys::clone_tree(
        staging.as_raw_fd(),
        name.to_str().map_err(io::Error::other)?,
        false,
    )?;
    sys::mount_setattr(
        tree.as_raw_fd(),
        false,
        NOSUID_NODEV | sys::MOUNT_ATTR_NOEXEC | sys::MOUNT_ATTR_RDONLY,
        0,
    )?;
    let target = sys::open_beneath(st.root()?, rel(&s.path))?;
    sys::attach(&tree, &target)?;
    if !out.removed.is_empty() {
        st.notes.push(format!(
            "{}: shown with credentials removed ({})",
            s.path.display(),
            out.removed.join(", ")
        ));
    }
    Ok(())
}

fn apply_git_config(st: &mut BuildState, s: &Step) -> io::Result<()> {
    if let Err(e) = git_config_copy(st, s) {
        st.warnings.push(format!(
            "{} stays read-only: no private copy could be made ({e}); git commands that \
             change it fail with \"Device or resource busy\"",
            s.path.display()
        ));
        st.skipped.push(s.path.clone());
    }
    Ok(())
}

fn git_config_copy(st: &mut BuildState, s: &Step) -> io::Result<()> {
    let src = match sys::open_beneath(st.old()?, rel(&s.path)) {
        Ok(fd) => Some(fd),
        Err(e) if e.raw_os_error() == Some(libc::ENOENT) => None,
        Err(e) => return Err(e),
    };
    let reopen = src
        .as_ref()
        .map(|fd| PathBuf::from(format!("/oldroot/proc/self/fd/{}", fd.as_raw_fd())));
    let name = format!("git-config-{}", st.git_configs.len() + 1);
    let copy = super::git_config_broker::stage(
        &s.path,
        src.as_ref().zip(reopen.as_deref()),
        Path::new("/"),
        &name,
    )?;
    let staging = sys::open_path(Path::new("/"), true)?;
    let tree = sys::clone_tree(staging.as_raw_fd(), &name, false)?;
    sys::mount_setattr(
        tree.as_raw_fd(),
        false,
        NOSUID_NODEV | sys::MOUNT_ATTR_NOEXEC,
        0,
    )?;
    let target = sys::open_beneath(st.root()?, rel(&s.path))?;
    sys::attach(&tree, &target)?;
    st.git_configs.push(copy);
    Ok(())
}

fn apply_mask(st: &mut BuildState, s: &Step, traverse: bool) -> io::Result<()> {
    let target = match sys::open_beneath(st.root()?, rel(&s.path)) {
        Ok(t) => t,
        Err(e) if e.raw_os_error() == Some(libc::ENOENT) => {
            // Gone since it was planned: nothing to hide now; the cover watch sees it come
            // back (its name is watched like any cover's).
            st.skipped.push(s.path.clone());
            return Ok(());
        }
        Err(e) => return Err(ctx_err(format!("opening {}", s.path.display()), e)),
    };
    if is_dir_fd(&target)? {
        let mode = if traverse { c"0111" } else { c"000" };
        let t = sys::new_fs(
            c"tmpfs",
            &[(c"mode", Some(mode)), (c"size", Some(c"4k"))],
            NOSUID_NODEV | sys::MOUNT_ATTR_NOEXEC,
        )
        .map_err(|e| ctx_err("mask tmpfs", e))?;
        sys::attach(&t, &target)
            .map_err(|e| ctx_err(format!("masking {}", s.path.display()), e))?;
        st.make_ro.push(t);
    } else {
        let f = sys::clone_tree(libc::AT_FDCWD, "/deny-file", false)?;
        sys::mount_setattr(
            f.as_raw_fd(),
            false,
            NOSUID_NODEV | sys::MOUNT_ATTR_NOEXEC | sys::MOUNT_ATTR_RDONLY,
            0,
        )?;
        sys::attach(&f, &target)
            .map_err(|e| ctx_err(format!("masking {}", s.path.display()), e))?;
    }
    Ok(())
}

fn apply_dev(st: &mut BuildState, s: &Step, shm_size: Option<&str>) -> io::Result<()> {
    let r = st.root()?;
    let old = st.old()?;
    let dev_tmpfs =
        new_tmpfs("0755", None, sys::MOUNT_ATTR_NOSUID).map_err(|e| ctx_err("/dev tmpfs", e))?;
    {
        let target = ensure_target(r, rel(&s.path), true, s.may_create)
            .map_err(|e| ctx_err("mountpoint /dev", e))?;
        sys::attach(&dev_tmpfs, &target).map_err(|e| ctx_err("attaching /dev", e))?;
    }
    let dev = sys::open_beneath(r, Path::new("dev"))?;
    let d = dev.as_raw_fd();
    for name in ["null", "zero", "full", "random", "urandom", "tty"] {
        let src = match sys::clone_tree(old, &format!("dev/{name}"), false) {
            Ok(s) => s,
            Err(e) => {
                st.notes.push(format!("/dev/{name} not available: {e}"));
                continue;
            }
        };
        let cname = c(name);
        sys::mkfileat(d, &cname, 0o666)?;
        let target = sys::open_beneath(d, Path::new(name))?;
        sys::mount_setattr(
            src.as_raw_fd(),
            false,
            sys::MOUNT_ATTR_NOSUID | sys::MOUNT_ATTR_NOEXEC,
            0,
        )?;
        sys::attach(&src, &target).map_err(|e| ctx_err(format!("/dev/{name}"), e))?;
    }
    bind_host_terminal(st, d)?;
    sys::mkdirat(d, c"pts", 0o755)?;
    match sys::new_fs(
        c"devpts",
        &[
            (c"newinstance", None),
            (c"ptmxmode", Some(c"0666")),
            (c"mode", Some(c"620")),
        ],
        sys::MOUNT_ATTR_NOSUID | sys::MOUNT_ATTR_NOEXEC,
    ) {
        Ok(pts) => {
            let target = sys::open_beneath(d, Path::new("pts"))?;
            sys::attach(&pts, &target).map_err(|e| ctx_err("/dev/pts", e))?;
        }
        Err(e) => st.notes.push(format!("/dev/pts not available: {e}")),
    }
    sys::mkdirat(d, c"shm", 0o1777)?;
    {
        let shm = new_tmpfs("1777", shm_size, NOSUID_NODEV).map_err(|e| ctx_err("/dev/shm", e))?;
        let target = sys::open_beneath(d, Path::new("shm"))?;
        sys::attach(&shm, &target).map_err(|e| ctx_err("/dev/shm", e))?;
    }
    for (name, to) in [
        ("ptmx", "pts/ptmx"),
        ("fd", "/proc/self/fd"),
        ("stdin", "/proc/self/fd/0"),
        ("stdout", "/proc/self/fd/1"),
        ("stderr", "/proc/self/fd/2"),
    ] {
        sys::symlinkat(&c(to), d, &c(name))?;
    }
    st.make_ro.push(dev_tmpfs);
    Ok(())
}

/// The terminal cordon runs in (issue 11 §4): when one of fds 0–2 is a terminal of the
/// host's `/dev/pts`, that one node (never the rest of the host's `/dev/pts`) is bound at
/// `/dev/console`, so `tty` and `ttyname()` resolve inside (glibc looks for a node with the
/// terminal's device and inode under `/dev` when `/proc/self/fd/N` names a path that does
/// not exist in the sandbox); window size and job control are the terminal's own, and
/// input injection stays refused by the seccomp filter (`TIOCSTI`, `TIOCLINUX`). The node
/// is found through the host root by the name `/proc/self/fd/N` gives and bound only if its
/// device, inode and filesystem match the open descriptor.
fn bind_host_terminal(st: &mut BuildState, dev: RawFd) -> io::Result<()> {
    let old = st.old()?;
    for fd in 0..=2 {
        let Ok(open) = sys::fstat(fd) else { continue };
        if open.st_mode & libc::S_IFMT != libc::S_IFCHR {
            continue;
        }
        let Ok(name) = std::fs::read_link(format!("/oldroot/proc/self/fd/{fd}")) else {
            continue;
        };
        let Ok(rel_name) = name.strip_prefix("/dev/pts/") else {
            continue;
        };
        if rel_name.components().count() != 1 {
            continue;
        }
        let Ok(node) = sys::open_beneath(old, &Path::new("dev/pts").join(rel_name)) else {
            continue;
        };
        let found = sys::fstat(node.as_raw_fd())?;
        if (found.st_rdev, found.st_ino, found.st_dev) != (open.st_rdev, open.st_ino, open.st_dev) {
            continue;
        }
        let tree = sys::clone_tree(node.as_raw_fd(), "", false)
            .map_err(|e| ctx_err("cloning the terminal", e))?;
        sys::mount_setattr(
            tree.as_raw_fd(),
            false,
            sys::MOUNT_ATTR_NOSUID | sys::MOUNT_ATTR_NOEXEC,
            0,
        )?;
        sys::mkfileat(dev, c"console", 0o600)?;
        let target = sys::open_beneath(dev, Path::new("console"))?;
        sys::attach(&tree, &target).map_err(|e| ctx_err("/dev/console", e))?;
        return Ok(());
    }
    Ok(())
}

fn apply_proc(st: &mut BuildState, s: &Step) -> io::Result<()> {
    let r = st.root()?;
    let proc_fs = sys::new_fs(c"proc", &[], NOSUID_NODEV | sys::MOUNT_ATTR_NOEXEC)
        .map_err(|e| ctx_err("mounting a fresh /proc", e))?;
    let target = ensure_target(r, rel(&s.path), true, s.may_create)
        .map_err(|e| ctx_err("mountpoint /proc", e))?;
    sys::attach(&proc_fs, &target).map_err(|e| ctx_err("attaching /proc", e))?;
    let p = sys::open_beneath(r, Path::new("proc"))?;
    for sub in ["sys", "sysrq-trigger", "irq", "bus"] {
        // Only an absent entry is skipped: any other failure would leave it writable.
        let src = match sys::open_beneath(p.as_raw_fd(), Path::new(sub)) {
            Ok(f) => f,
            Err(e) if e.raw_os_error() == Some(libc::ENOENT) => continue,
            Err(e) => return Err(ctx_err(format!("opening /proc/{sub}"), e)),
        };
        let tree = sys::clone_tree(src.as_raw_fd(), "", true)?;
        sys::mount_setattr(tree.as_raw_fd(), true, sys::MOUNT_ATTR_RDONLY, 0)?;
        sys::attach(&tree, &src).map_err(|e| ctx_err(format!("/proc/{sub}"), e))?;
    }
    Ok(())
}

fn apply_read_only(st: &mut BuildState) -> io::Result<()> {
    for m in st.make_ro.drain(..) {
        sys::mount_setattr(m.as_raw_fd(), false, sys::MOUNT_ATTR_RDONLY, 0)
            .map_err(|e| ctx_err("making a tmpfs read-only", e))?;
    }
    Ok(())
}

fn apply_pivot(st: &mut BuildState) -> io::Result<()> {
    st.host_devpts = sys::open_beneath(st.old()?, Path::new("dev/pts")).ok();
    st.old = None;
    let root = st
        .root
        .take()
        .ok_or_else(|| io::Error::other("mount plan: no root step before the pivot"))?;
    // Into the new root; the staging root (with the host root under it) is detached.
    sys::fchdir(&root)?;
    sys::pivot_root(c".", c".").map_err(|e| ctx_err("pivot_root", e))?;
    sys::detach(c".").map_err(|e| ctx_err("detaching the old root", e))?;
    std::env::set_current_dir("/")?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use cordon_policy::{
        resolve, FilesystemPolicy, FsEntry, MemFs, PermissionProfile, ResolveContext,
    };

    /// The last mount's scratch dir (mode 000, with the kernel's volatile mark) is renamed
    /// aside, nothing is removed on the way, and a leftover set-aside dir is collected with
    /// it; the first mount of a layer (no scratch dir yet) sets nothing aside. (Removal is
    /// [`StaleScratch::detach_cleanup`]'s, by `tree_removal`; it forks, so it is not run in
    /// the multi-threaded test harness.)
    #[test]
    fn overlay_scratch_is_set_aside_not_removed() {
        use std::os::unix::fs::PermissionsExt;
        let t = tempfile::tempdir().unwrap();
        let state = t.path().canonicalize().unwrap().join("layer");
        let scratch = state.join("work/work");
        std::fs::create_dir_all(scratch.join("incompat/volatile")).unwrap();
        std::fs::write(scratch.join("incompat/volatile/dirty"), b"").unwrap();
        std::fs::create_dir_all(state.join("work/.stale-1-2-0/x")).unwrap();
        std::fs::set_permissions(&scratch, std::fs::Permissions::from_mode(0o000)).unwrap();
        let layout = Layout {
            base: Base::HostReadOnly,
            steps: vec![Step {
                path: PathBuf::from("/home/u/.npm"),
                kind: StepKind::Overlay {
                    name: "npm".into(),
                    state: state.clone(),
                },
                may_create: false,
            }],
            notes: Vec::new(),
            absent: Vec::new(),
            read_only_caches: Vec::new(),
            links: Vec::new(),
            resolved_through_links: Vec::new(),
        };
        let stale = set_aside_overlay_scratch(&layout);
        assert!(
            scratch.symlink_metadata().is_err(),
            "the scratch dir is out of the way"
        );
        let names: Vec<_> = stale.0[0]
            .2
            .iter()
            .map(|n| n.to_str().unwrap().to_string())
            .collect();
        assert_eq!(names.len(), 2, "{names:?}");
        assert!(names.contains(&".stale-1-2-0".to_string()));
        let moved = names.iter().find(|n| *n != ".stale-1-2-0").unwrap();
        assert!(moved.starts_with(".stale-"));
        let aside = state.join("work").join(moved);
        std::fs::set_permissions(&aside, std::fs::Permissions::from_mode(0o700)).unwrap();
        assert!(
            aside.join("incompat/volatile/dirty").exists(),
            "moved whole, not removed"
        );
        drop(stale);
        // A layer never mounted: nothing there, nothing set aside.
        std::fs::create_dir_all(t.path().join("fresh/work")).unwrap();
        let mut fresh = layout.clone();
        let StepKind::Overlay { state, .. } = &mut fresh.steps[0].kind else {
            unreachable!()
        };
        *state = t.path().canonicalize().unwrap().join("fresh");
        assert!(set_aside_overlay_scratch(&fresh).0.is_empty());
    }

    fn fs() -> MemFs {
        MemFs::new()
            .dir("/home/u/proj/.git/hooks")
            .file("/home/u/proj/.git/config", "")
            .dir("/home/u/.ssh")
            .file("/home/u/.netrc", "x")
            .dir("/tmp/ws/.git/objects")
            .dir("/usr")
            .dir("/etc")
    }

    fn lay(default: Access, entries: Vec<FsEntry>, cwd: &str) -> Layout {
        let mut p = PermissionProfile::builtin("workspace-write").unwrap();
        p.filesystem = FilesystemPolicy::Restricted {
            default,
            entries,
            protect_metadata: true,
        };
        let ctx = ResolveContext {
            cwd: cwd.into(),
            home: Some("/home/u".into()),
            tmpdir: None,
            profile_files: vec![],
            ..Default::default()
        };
        layout(&resolve(&p, &ctx, &fs()).unwrap().filesystem)
    }

    fn find<'a>(l: &'a Layout, p: &str) -> Option<&'a Step> {
        l.steps.iter().find(|s| s.path == Path::new(p))
    }

    #[test]
    fn workspace_write_layout() {
        let l = lay(
            Access::Read,
            vec![
                FsEntry::new(":workspace", Access::Write),
                FsEntry::new(":tmp", Access::Write),
                FsEntry::new("~/.ssh", Access::Deny),
                FsEntry::new("~/.netrc", Access::Deny),
                FsEntry::new("~/.aws", Access::Deny),
            ],
            "/home/u/proj",
        );
        assert_eq!(l.base, Base::HostReadOnly);
        assert_eq!(
            l.tree().next().unwrap().kind,
            StepKind::PrivateTmp { size: None }
        );
        assert_eq!(
            find(&l, "/home/u/proj").unwrap().kind,
            StepKind::Bind {
                writable: true,
                protected: false,
                dir: false
            }
        );
        assert_eq!(
            find(&l, "/home/u/.ssh").unwrap().kind,
            StepKind::Mask { traverse: false }
        );
        assert_eq!(
            find(&l, "/home/u/.netrc").unwrap().kind,
            StepKind::Mask { traverse: false }
        );
        assert!(find(&l, "/home/u/.aws").is_none());
        assert!(l.notes.iter().any(|n| n.contains(".aws")));
        for p in ["/home/u/proj/.git/hooks", "/home/u/proj/.git/config"] {
            assert_eq!(
                find(&l, p).unwrap().kind,
                StepKind::Bind {
                    writable: false,
                    protected: true,
                    dir: p.ends_with("hooks")
                },
                "{p}"
            );
        }
        // Missing protected paths inside a writable root are kept (placeholders); a
        // repository root gets no `.cordon` placeholder (stop 19: `git clean -fd`).
        assert!(find(&l, "/home/u/proj/.cordon").is_none());
        assert!(find(&l, "/home/u/proj/.git/info").is_some());
        // Deeper first never comes before shallower.
        let depths: Vec<usize> = l.tree().map(|s| s.path.components().count()).collect();
        assert!(depths.windows(2).all(|w| w[0] <= w[1]), "{depths:?}");
    }

    #[test]
    fn workspace_under_tmp_is_bound_onto_the_private_tmp() {
        let l = lay(
            Access::Read,
            vec![
                FsEntry::new(":workspace", Access::Write),
                FsEntry::new(":tmp", Access::Write),
            ],
            "/tmp/ws",
        );
        let ws = find(&l, "/tmp/ws").unwrap();
        assert!(ws.may_create);
        // Temp dirs get no protected paths; the workspace does.
        assert!(find(&l, "/tmp/ws/.git/hooks").is_some());
        assert!(!find(&l, "/tmp/ws/.git/hooks").unwrap().may_create);
        // The :tmp entry for /tmp itself becomes the private tmpfs, not a bind.
        assert_eq!(
            l.steps
                .iter()
                .filter(|s| s.path == Path::new("/tmp"))
                .count(),
            1
        );
    }

    #[test]
    fn default_deny_starts_empty_and_binds_read_entries() {
        let l = lay(
            Access::Deny,
            vec![
                FsEntry::new("/usr", Access::Read),
                FsEntry::new(":workspace", Access::Write),
                FsEntry::new("~/.ssh", Access::Deny),
            ],
            "/home/u/proj",
        );
        assert_eq!(l.base, Base::Empty);
        let usr = find(&l, "/usr").unwrap();
        assert!(usr.may_create);
        assert_eq!(
            usr.kind,
            StepKind::Bind {
                writable: false,
                protected: false,
                dir: false
            }
        );
        // Already invisible: no mask needed.
        assert!(find(&l, "/home/u/.ssh").is_none());
    }

    #[test]
    fn redundant_binds_are_skipped_and_nested_entries_layered() {
        let l = lay(
            Access::Read,
            vec![
                FsEntry::new("/etc", Access::Read),
                FsEntry::new("/home/u", Access::Deny),
                FsEntry::new("/home/u/proj", Access::Write),
            ],
            "/home/u/proj",
        );
        assert!(find(&l, "/etc").is_none());
        assert_eq!(
            find(&l, "/home/u").unwrap().kind,
            StepKind::Mask { traverse: true }
        );
        let proj = find(&l, "/home/u/proj").unwrap();
        assert!(proj.may_create, "inside the mask tmpfs");
    }

    /// A grant under `/dev` never becomes a mount: resolution drops it with a note
    /// (`cordon_policy` `grants_under_rebuilt_trees_are_dropped`), and the layout would
    /// skip it anyway (`under_rebuilt_tree`).
    #[test]
    fn proc_and_dev_entries_are_ignored() {
        let l = lay(
            Access::Read,
            vec![FsEntry::new("/dev/sda", Access::Write)],
            "/home/u/proj",
        );
        assert!(find(&l, "/dev/sda").is_none());
        assert!(l.steps.iter().all(|s| !s.path.starts_with("/dev/sda")));
    }

    #[test]
    fn unrestricted_is_the_writable_host_root() {
        let l = layout(&ResolvedFilesystem::Unrestricted);
        assert_eq!(l.base, Base::HostWritable);
        assert_eq!(l.tree().count(), 0);
        assert!(!l.private_tmp());
    }

    /// Issue 7 item 2: a protected name that is a symlink gets a `PinLink` step for the
    /// name and a read-only bind of its target; so does a symlinked `.cordon`, and a
    /// symlinked ancestor (`.git -> gd`) of the protected paths.
    #[test]
    fn symlinked_protected_names_are_pinned_and_targets_bound() {
        let fs = MemFs::new()
            .dir("/w/.git/info")
            .dir("/w/hk")
            .file("/w/gitcfg", "")
            .symlink("/w/.git/hooks", "../hk")
            .symlink("/w/.git/config", "../gitcfg")
            .dir("/w/c")
            .symlink("/w/.cordon", "c")
            .dir("/v/gd/hooks")
            .symlink("/v/.git", "gd");
        let mut p = PermissionProfile::builtin("workspace-write").unwrap();
        p.filesystem = FilesystemPolicy::Restricted {
            default: Access::Read,
            entries: vec![
                FsEntry::new(":workspace", Access::Write),
                FsEntry::new("/v", Access::Write),
            ],
            protect_metadata: true,
        };
        let ctx = ResolveContext {
            cwd: "/w".into(),
            home: Some("/h".into()),
            ..Default::default()
        };
        let l = layout(&resolve(&p, &ctx, &fs).unwrap().filesystem);
        for name in ["/w/.git/hooks", "/w/.git/config", "/w/.cordon", "/v/.git"] {
            assert_eq!(
                find(&l, name).map(|s| &s.kind),
                Some(&StepKind::PinLink),
                "{name}"
            );
        }
        for target in ["/w/hk", "/w/gitcfg", "/w/c", "/v/gd/hooks"] {
            assert_eq!(
                find(&l, target).map(|s| &s.kind),
                Some(&StepKind::Bind {
                    writable: false,
                    protected: true,
                    dir: target != "/w/gitcfg"
                }),
                "{target}"
            );
        }
        let depths: Vec<usize> = l.tree().map(|s| s.path.components().count()).collect();
        assert!(depths.windows(2).all(|w| w[0] <= w[1]), "{depths:?}");
    }

    /// attack25 A5: the covers are the steps that show less than the host layer they sit
    /// in, and the watch plan names, per host directory, exactly the names that lead to
    /// one — up to `/` while the names are the host's, never in a tmpfs of ours.
    #[test]
    fn covers_and_their_watches() {
        let l = lay(
            Access::Read,
            vec![
                FsEntry::new(":workspace", Access::Write),
                FsEntry::new("~/.ssh", Access::Deny),
                FsEntry::new("~/.netrc", Access::Deny),
            ],
            "/home/u/proj",
        );
        let covers = l.covers();
        let kind = |p: &str| {
            covers
                .iter()
                .find(|c| c.path == Path::new(p))
                .map(|c| c.kind)
        };
        assert_eq!(kind("/home/u/.netrc"), Some(CoverKind::Hidden));
        assert_eq!(kind("/home/u/.ssh"), Some(CoverKind::Hidden));
        assert_eq!(kind("/tmp"), Some(CoverKind::Hidden));
        assert_eq!(kind("/home/u/proj/.git/config"), Some(CoverKind::ReadOnly));
        assert_eq!(kind("/home/u/proj/.git/hooks"), Some(CoverKind::ReadOnly));
        // A writable grant is not a cover (losing it shows less, not more).
        assert_eq!(kind("/home/u/proj"), None);
        let w = l.cover_watches();
        let names = |d: &str| -> Vec<String> {
            w.iter()
                .find(|x| x.dir == Path::new(d))
                .map(|x| {
                    x.names
                        .iter()
                        .map(|(n, _)| n.to_string_lossy().into_owned())
                        .collect()
                })
                .unwrap_or_default()
        };
        assert!(names("/home/u").contains(&".netrc".to_string()), "{w:?}");
        assert!(names("/home/u").contains(&".ssh".to_string()), "{w:?}");
        assert!(names("/home/u").contains(&"proj".to_string()), "{w:?}");
        assert!(names("/home/u/proj/.git").contains(&"config".to_string()));
        assert!(names("/home/u/proj").contains(&".git".to_string()));
        assert!(names("/home").contains(&"u".to_string()));
        assert!(names("/").contains(&"home".to_string()));
        assert!(names("/").contains(&"tmp".to_string()));
        // Only names that lead to a cover: nothing else of the workspace or the home.
        assert_eq!(names("/home/u/proj"), [".git"]);
        // Shallow first: a directory is watched before the ones beneath it.
        let depths: Vec<usize> = w.iter().map(|x| x.dir.components().count()).collect();
        assert!(depths.windows(2).all(|d| d[0] <= d[1]), "{depths:?}");

        // An empty root: the workspace's name lives in a tmpfs of ours (the host renaming
        // it detaches nothing), the covers inside the workspace are still watched.
        let l = lay(
            Access::Deny,
            vec![
                FsEntry::new("/usr", Access::Read),
                FsEntry::new(":workspace", Access::Write),
            ],
            "/home/u/proj",
        );
        let w = l.cover_watches();
        assert!(
            w.iter().any(|x| x.dir == Path::new("/home/u/proj/.git")),
            "{w:?}"
        );
        assert!(
            w.iter().any(|x| x.dir == Path::new("/home/u/proj")),
            "{w:?}"
        );
        assert!(!w.iter().any(|x| x.dir == Path::new("/home/u")), "{w:?}");
        assert!(!w.iter().any(|x| x.dir == Path::new("/")), "{w:?}");
        // No cover at all (unrestricted): nothing to watch.
        assert!(layout(&ResolvedFilesystem::Unrestricted)
            .cover_watches()
            .is_empty());
    }

    /// Issue 12: the absent list is filtered by sorted byte prefixes; the answer is the
    /// component rule's — a step at or beneath an entry removes it, a sibling whose name
    /// merely starts with the entry's (`.ssh-agent` next to `.ssh`, sorted between `.ssh`
    /// and `.ssh/x`) does not, and an unclean path takes the component rule itself.
    #[test]
    fn absent_entries_under_a_step_are_dropped_by_component_not_by_bytes() {
        let mut l = Layout {
            base: Base::HostReadOnly,
            steps: [
                "/h/.ssh-agent",
                "/h/.kube/cache",
                "/h/.aws",
                "/h/a/b",
                "/h/.ssh.d/x",
            ]
            .iter()
            .map(|p| step(p, StepKind::CreateDir, false))
            .collect(),
            notes: vec!["other".into()],
            absent: Vec::new(),
            read_only_caches: Vec::new(),
            links: Vec::new(),
            resolved_through_links: Vec::new(),
        };
        let absent: Vec<PathBuf> = [
            "/h/.ssh", "/h/.kube", "/h/.aws", "/h/a/b/c", "/h/.ss", "/h/a",
        ]
        .iter()
        .map(PathBuf::from)
        .collect();
        let slow: Vec<PathBuf> = absent
            .iter()
            .filter(|a| !l.steps.iter().any(|s| s.path.starts_with(a)))
            .cloned()
            .collect();
        l.set_absent(absent.clone());
        assert_eq!(l.absent, slow);
        assert_eq!(
            l.absent,
            [PathBuf::from("/h/.ssh"), "/h/a/b/c".into(), "/h/.ss".into()]
        );
        assert_eq!(l.notes.len(), 2, "{:?}", l.notes);
        assert_eq!(l.notes[1], absent_note(&l.absent).unwrap());
        // Unclean (a trailing `/`): the component rule still drops `/h/.kube/`.
        l.set_absent(vec!["/h/.kube/".into(), "/h/.ssh".into()]);
        assert_eq!(l.absent, [PathBuf::from("/h/.ssh")]);
        assert_eq!(
            l.notes.len(),
            2,
            "the note is replaced in place: {:?}",
            l.notes
        );
        l.set_absent(Vec::new());
        assert_eq!(l.notes, ["other"]);
    }

    /// attack28 F2: the deny entries not present at launch are one list — the note names
    /// it, the watch plan watches it (where its names live in a host layer), none of it is
    /// a mount cover — and a path cordon creates and hides itself is not in it.
    #[test]
    fn absent_denies_are_noted_and_watched() {
        let l = lay(
            Access::Read,
            vec![
                FsEntry::new(":workspace", Access::Write),
                FsEntry::new("~/.netrc", Access::Deny),
                FsEntry::new("~/.config/gh", Access::Deny),
                FsEntry::new("~/.kube/config", Access::Deny),
                FsEntry::new("/tmp/x", Access::Deny),
            ],
            "/home/u/proj",
        );
        let absent: Vec<&str> = l.absent.iter().map(|p| p.to_str().unwrap()).collect();
        for a in ["/home/u/.config/gh", "/home/u/.kube/config", "/tmp/x"] {
            assert!(absent.contains(&a), "{absent:?}");
        }
        assert!(!absent.contains(&"/home/u/.netrc"), "present: {absent:?}");
        let note = absent_note(&l.absent).unwrap();
        assert!(l.notes.contains(&note), "{:?}", l.notes);
        assert!(note.contains("/home/u/.config/gh") && note.contains("stopped"));
        // Not mount covers (a template checks those are mount points).
        assert!(!l.covers().iter().any(|c| c.kind == CoverKind::Absent));
        // Watched: the deepest ancestors, one watch per directory; `/tmp/x` lives in the
        // private /tmp (the host creating it shows nothing).
        let w = l.cover_watches();
        let names = |d: &str| -> Vec<(String, CoverKind)> {
            w.iter()
                .find(|x| x.dir == Path::new(d))
                .map(|x| {
                    x.names
                        .iter()
                        .map(|(n, c)| (n.to_string_lossy().into_owned(), c.kind))
                        .collect()
                })
                .unwrap_or_default()
        };
        let home = names("/home/u");
        assert!(
            home.contains(&(".config".into(), CoverKind::Absent)),
            "{home:?}"
        );
        assert!(
            home.contains(&(".kube".into(), CoverKind::Absent)),
            "{home:?}"
        );
        assert!(
            home.contains(&(".netrc".into(), CoverKind::Hidden)),
            "{home:?}"
        );
        assert_eq!(names("/home/u/.config"), [("gh".into(), CoverKind::Absent)]);
        assert!(!w.iter().any(|x| x.dir == Path::new("/tmp")), "{w:?}");
        assert_eq!(
            w.iter().filter(|x| x.dir == Path::new("/home/u")).count(),
            1
        );

        // A path cordon creates and hides itself (the overlay state root, missing, gets a
        // create step and a mask in `layout_for`): not absent, not in the note.
        let mut l2 = l.clone();
        let root = PathBuf::from("/home/u/.config/gh");
        l2.steps.push(Step {
            path: root.clone(),
            kind: StepKind::Mask { traverse: false },
            may_create: false,
        });
        let all = l2.absent.clone();
        l2.set_absent(all);
        assert!(!l2.absent.contains(&root), "{:?}", l2.absent);
        let note = absent_note(&l2.absent).unwrap();
        let listed = note.rsplit(": ").next().unwrap();
        assert!(
            !listed.split(", ").any(|p| p == "/home/u/.config/gh"),
            "{note}"
        );
        assert_eq!(
            l2.notes
                .iter()
                .filter(|n| n.contains("not present"))
                .count(),
            1,
            "{:?}",
            l2.notes
        );
        assert!(l2.notes.contains(&note));
    }

    /// New-user pass nu30, F6: the note names the first few absent deny entries and
    /// counts the rest; a short list is named whole.
    #[test]
    fn absent_note_names_a_few_and_counts_the_rest() {
        let many: Vec<PathBuf> = (0..20)
            .map(|i| PathBuf::from(format!("/h/.c{i}")))
            .collect();
        let note = absent_note(&many).unwrap();
        assert!(
            note.starts_with("20 deny entries are not present"),
            "{note}"
        );
        assert!(
            note.contains("/h/.c7") && !note.contains("/h/.c8"),
            "{note}"
        );
        assert!(note.contains(" and 12 more"), "{note}");
        let one = absent_note(&many[..1]).unwrap();
        assert!(
            one.starts_with("1 deny entry is") && one.ends_with("/h/.c0"),
            "{one}"
        );
        assert_eq!(absent_note(&[]), None);
    }

    /// Issue 13 §1: the plan is the whole plan — the frame steps come in a fixed order
    /// around the tree, `/dev` and `/proc` may be created only on an empty root, and the
    /// private `/tmp` is there exactly when `/tmp` is not denied.
    #[test]
    fn plan_order_and_frame() {
        let kinds = |l: &Layout| -> Vec<String> {
            l.steps
                .iter()
                .map(|s| {
                    let j = serde_json::to_value(s).unwrap();
                    format!("{} {}", j["step"].as_str().unwrap(), s.path.display())
                })
                .collect()
        };
        let l = lay(
            Access::Read,
            vec![
                FsEntry::new(":workspace", Access::Write),
                FsEntry::new("~/.ssh", Access::Deny),
            ],
            "/home/u/proj",
        );
        let k = kinds(&l);
        assert_eq!(k[..3], ["staging /", "root /", "private-tmp /tmp"]);
        assert_eq!(
            k[k.len() - 4..],
            ["dev /dev", "proc /proc", "read-only-remount /", "pivot /"]
        );
        assert!(k.contains(&"bind /home/u/proj".to_string()), "{k:?}");
        assert!(k.contains(&"mask /home/u/.ssh".to_string()), "{k:?}");
        assert!(l.steps.iter().all(|s| !s.may_create || s.kind.is_tree()));
        // Empty root: /dev and /proc are created in our tmpfs; /tmp denied: no private /tmp.
        let l = lay(
            Access::Deny,
            vec![
                FsEntry::new("/usr", Access::Read),
                FsEntry::new("/tmp", Access::Deny),
            ],
            "/home/u/proj",
        );
        assert!(!l.private_tmp());
        assert!(l
            .steps
            .iter()
            .filter(|s| matches!(s.kind, StepKind::Dev { .. } | StepKind::Proc))
            .all(|s| s.may_create));
        // Readable text for --dry-run.
        assert_eq!(l.steps[1].to_string(), "root: empty tmpfs");
    }

    fn protected_layout(paths: &[&Path]) -> Layout {
        Layout {
            base: Base::HostReadOnly,
            steps: paths
                .iter()
                .map(|p| Step {
                    path: p.to_path_buf(),
                    kind: StepKind::Bind {
                        writable: false,
                        protected: true,
                        dir: placeholder_is_dir(p),
                    },
                    may_create: false,
                })
                .collect(),
            notes: Vec::new(),
            absent: Vec::new(),
            read_only_caches: Vec::new(),
            links: Vec::new(),
            resolved_through_links: Vec::new(),
        }
    }

    fn tmp() -> (tempfile::TempDir, PathBuf) {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().canonicalize().unwrap();
        (d, p)
    }

    /// Issue 7 item 1: placeholders are permanent and exclusive. Created once with the
    /// contents git expects, the marker names empty; a second run (or a
    /// concurrent one) finds them and creates nothing; an existing entry is never taken.
    #[test]
    fn placeholders_are_created_once_and_kept() {
        let (_d, root) = tmp();
        let ws = root.join("ws");
        std::fs::create_dir_all(ws.join(".git")).unwrap();
        let l = protected_layout(&[
            &ws.join(".cordon"),
            &ws.join(".git/hooks"),
            &ws.join(".git/commondir"),
            &ws.join(".git/config.worktree"),
        ]);
        let ph = create_placeholders(&l).unwrap();
        assert_eq!(ph.len(), 4);
        assert!(ws.join(".git/hooks").is_dir());
        assert_eq!(std::fs::read(ws.join(".git/commondir")).unwrap(), b".\n");
        assert_eq!(std::fs::read(ws.join(".git/config.worktree")).unwrap(), b"");
        // The marker name's placeholder is empty: git ignores it (`git status` clean).
        assert_eq!(std::fs::read_dir(ws.join(".cordon")).unwrap().count(), 0);
        assert_eq!(std::fs::read_dir(ws.join(".git/hooks")).unwrap().count(), 0);
        // Again: nothing new, nothing removed.
        assert!(create_placeholders(&l).unwrap().is_empty());
        assert!(ws.join(".cordon").is_dir() && ws.join(".git/commondir").exists());
    }

    /// A symlink on the way to a placeholder is refused, not followed; a missing parent is
    /// created (skipping it let the command create the protected path).
    #[test]
    fn placeholder_paths_with_symlinks_are_refused() {
        let (_d, root) = tmp();
        std::fs::create_dir(root.join("real")).unwrap();
        std::os::unix::fs::symlink(root.join("real"), root.join("link")).unwrap();
        let e = create_placeholders(&protected_layout(&[&root.join("link/.cordon")])).unwrap_err();
        assert!(e.to_string().contains("link/.cordon"), "{e}");
        assert!(!root.join("real/.cordon").exists());
        let ph = create_placeholders(&protected_layout(&[&root.join("missing/.cordon")])).unwrap();
        assert_eq!(ph.len(), 1);
        assert!(root.join("missing/.cordon").is_dir());
    }

    /// The plan of the built-in profile with two warm caches and two config files:
    /// one Overlay step per cache (shallow-first order kept, inside the tree, before
    /// `/dev`), the state root created and hidden, Stripped steps where the masks of the
    /// config files were, and rung-1 Landlock rules that make each overlay writable.
    #[test]
    fn caches_and_stripped_files_are_steps() {
        let fs = MemFs::new()
            .dir("/home/u/proj/.git/hooks")
            .dir("/home/u/.cargo/registry")
            .dir("/home/u/.cargo/git")
            .dir("/home/u/.npm")
            .file("/home/u/.npmrc", "registry=x\n")
            .file("/home/u/.gitconfig", "[user]\nname=a\n")
            .dir("/usr");
        let p = PermissionProfile::builtin("workspace-write").unwrap();
        let ctx = ResolveContext {
            cwd: "/home/u/proj".into(),
            home: Some("/home/u".into()),
            ..Default::default()
        };
        let r = resolve(&p, &ctx, &fs).unwrap();
        let l = layout_for(&r);
        let kinds: Vec<(String, &StepKind)> = l
            .steps
            .iter()
            .map(|s| (s.path.display().to_string(), &s.kind))
            .collect();
        let pos = |p: &str, f: &dyn Fn(&StepKind) -> bool| {
            kinds
                .iter()
                .position(|(q, k)| q == p && f(k))
                .unwrap_or_else(|| panic!("no step for {p}: {kinds:#?}"))
        };
        let reg = pos(
            "/home/u/.cargo/registry",
            &|k| matches!(k, StepKind::Overlay { name, .. } if name == "cargo-registry"),
        );
        let npm = pos("/home/u/.npm", &|k| matches!(k, StepKind::Overlay { .. }));
        let root = "/home/u/.cache/cordon/overlays";
        let create = pos(root, &|k| *k == StepKind::CreateDir);
        let mask = pos(root, &|k| matches!(k, StepKind::Mask { .. }));
        let dev = pos("/dev", &|k| matches!(k, StepKind::Dev { .. }));
        assert!(npm < reg && create < mask && reg < dev && mask < dev);
        // A cache missing on the host (pip): its private directory bound beneath the
        // hidden root, which is then traversable (only the binds beneath it reachable).
        let pip = pos(
            &format!(
                "{root}/{}/pip/data",
                cordon_policy::caches::workspace_key(Path::new("/home/u/proj"), None, None)
            ),
            &|k| matches!(k, StepKind::CacheDir { var, .. } if var == "PIP_CACHE_DIR"),
        );
        assert!(mask < pip && pip < dev);
        assert_eq!(kinds[mask].1, &StepKind::Mask { traverse: true });
        for f in ["/home/u/.npmrc", "/home/u/.gitconfig"] {
            pos(f, &|k| matches!(k, StepKind::Stripped { .. }));
        }
        // Other credential stores stay masks; nothing else changed kind.
        assert!(!kinds
            .iter()
            .any(|(q, k)| q == "/home/u/.npmrc" && matches!(k, StepKind::Mask { .. })));
        let rules = super::super::landlock_layer::rules_from_layout(&l);
        assert!(rules.iter().any(|(p, g)| p == Path::new("/home/u/.npm")
            && *g == super::super::landlock_layer::Grant::Write));
        // No overlay for a cache the profile already makes writable.
        let mut p2 = p.clone();
        p2.push_entries([FsEntry::new("/home/u/.npm", Access::Write)]);
        let l2 = layout_for(&resolve(&p2, &ctx, &fs).unwrap());
        assert!(!l2
            .steps
            .iter()
            .any(|s| s.path == Path::new("/home/u/.npm")
                && matches!(s.kind, StepKind::Overlay { .. })));
    }
}
