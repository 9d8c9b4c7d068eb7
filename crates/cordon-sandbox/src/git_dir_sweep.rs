//! What a confined command left in a writable git dir for the host's git (attack pass 28,
//! F1 and F4).
//!
//! The host's git trusts every path of its git dir. Most files there it replaces by
//! renaming a lock file over them, but many it opens and writes in place, following a
//! symlink: it appends to reflogs (`logs/HEAD`, `logs/refs/…`), truncates and writes
//! `FETCH_HEAD`, `COMMIT_EDITMSG`, `MERGE_MSG`, the sequencer and rebase state; and it
//! reads `MERGE_MSG`/`SQUASH_MSG` back as a commit message. A command that makes
//! `.git/logs/HEAD` a symlink to `~/.bashrc`, or `.git/FETCH_HEAD` one to any file, has
//! the user's next `git commit` or `git fetch` write outside every writable root (a reflog
//! line carries a branch name or `user.name` the command chose: code in the rc file); one
//! that links `.git/MERGE_MSG` to a hidden credential has the next commit copy it into the
//! repository. A FIFO there hangs the host's git. Inside a git dir nothing is ever
//! legitimately such an entry that a run made, so:
//!
//! - before the run, [`census`] lists each writable git dir's entries that are not regular
//!   files or directories (symlinks, FIFOs, sockets, devices) — a repo tool's checkout
//!   (`.git/objects -> ../.repo/…`) has some — and reads the in-progress state files
//!   ([`cordon_policy::git_state::STATE_FILES`]);
//! - after the run, [`sweep`] walks it again and removes every such entry the census did
//!   not list with the same inode, change time, link count and target, and says what the state files now hold that
//!   runs code at the host's `--continue` and was not there before
//!   ([`cordon_policy::git_state::pending_code`]: `exec` lines, a strategy that is not
//!   git's own).
//!
//! Every step is relative to a descriptor: the git dir (and the parent of every work-tree
//! path checked) is opened one component at a time from `/`, none followed if a symlink
//! (another run may have swapped an ancestor for one since the census), each
//! directory beneath it through its pinned parent with `O_NOFOLLOW`, entries are
//! `fstatat`ed without following and removed with `unlinkat` by name in the pinned
//! directory (which removes a symlink itself). Loose-object directories (`objects/xx/`)
//! are read for their entries' types only (a FIFO there hangs the host's `git log`). The
//! walk is breadth first, each directory's files judged before any directory below, and
//! bounded ([`BUDGET`] entries, regular files and loose objects not counted; [`MAX_DEPTH`] levels): a git
//! dir too large for it refuses the run at the census (cordon could not say afterwards
//! what a command left there); a sweep that ran out says why (`incomplete`). A census
//! is recorded until its sweep is made, so a run whose cordon process was killed first is
//! swept by the next run (`cordon-session`'s `pending_sweeps`). That run knows when the
//! killed run's sandbox was gone ([`Census::ended_ns`], from the record's heartbeat): an
//! entry born later (statx birth time, which nobody can set) is the host's — the user's,
//! a host git's — and is left, said as such, not removed and blamed on a sandboxed command
//! (attack pass 219 #3); where the filesystem keeps no birth time it is removed, as before.
//!
//! Residual window: while a command runs (and until its run ends), what it made is there;
//! a host `git commit` in that window follows it. Runs that overlap sweep each other's
//! entries at their ends (each removes what its own census did not list).

use nix::dir::Dir;
use nix::errno::Errno;
use nix::fcntl::{openat, readlinkat, OFlag};
use nix::sys::stat::{fstat, fstatat, FileStat, Mode};
use nix::unistd::{unlinkat, UnlinkatFlags};
use serde::{Deserialize, Serialize};
use std::ffi::OsStr;
use std::io::{self, Read};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// Most removed entries a [`Swept`] lists (the rest are counted).
pub const REMOVED_LISTED: usize = 1000;

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// Most entries one walk of a git dir looks at, regular files and loose objects not
/// counted (the reflogs, refs and worktrees subtrees are walked first). A git dir with
/// more refuses the run ([`census`] is incomplete): cordon cannot say what a command left
/// there (attack pass 29, F4: a walk that ran out of budget hid a planted symlink).
pub const BUDGET: usize = 1_048_576;
/// Deepest directory level entered below the git dir: beyond what a path can name
/// (`PATH_MAX` is 4096 bytes), so no tree a command can build is deeper (attack pass 30, A6:
/// a branch reflog 34 levels down was beyond the 32 the walk used to enter).
pub const MAX_DEPTH: usize = 2048;
/// Largest state file read.
const STATE_CAP: u64 = 1 << 20;

/// What an entry that is not a regular file or directory is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ForeignKind {
    /// A symbolic link.
    Symlink,
    /// A named pipe.
    Fifo,
    /// A unix socket.
    Socket,
    /// A character or block device.
    Device,
}

/// One entry of a git dir that is not a regular file or a directory.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Foreign {
    /// Where it is (the git dir's path joined with the entry's).
    pub path: PathBuf,
    /// What it is.
    pub kind: ForeignKind,
    /// A symlink's target, as stored.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target: Option<PathBuf>,
    /// Its inode, change time and link count (with `target`, what tells a planted entry
    /// from the one listed before: re-linking the same inode under the listed name changes
    /// its change time — attack pass 29, F3).
    #[serde(skip)]
    id: (u64, i64, i64, u64),
    /// Removed although an entry of this kind and target was listed at this path before
    /// the run: its inode, link count or change time differ (it was re-linked — e.g. a
    /// hard link made to it, which changes both). Said so, not "made" (nu13 LOW: a
    /// user's own symlink a command hard-linked was reported as the command's).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub relinked: bool,
}

/// A git dir as the run found it ([`census`]). Its [`Census::to_json`] form is what a
/// run records before the command starts, so that a later run can finish the sweep of one
/// whose cordon process ended first ([`Census::from_json`]).
#[derive(Debug, Clone, Default)]
pub struct Census {
    /// The git dir.
    pub git_dir: PathBuf,
    /// Its entries that are not regular files or directories.
    pub foreign: Vec<Foreign>,
    /// The in-progress state files present: (path relative to the git dir, content).
    state: Vec<(PathBuf, Vec<u8>)>,
    /// Why the walk did not see everything ([`BUDGET`], [`MAX_DEPTH`], a directory it
    /// could not read), with what to do; `None`: it did.
    pub incomplete: Option<String>,
    /// Files of the work tree that must still be absent after the run, with the tool that
    /// would run what a command put there (hook managers' configs:
    /// `cordon_policy::resolve::hook_configs_kept_absent`; in a census of its own, not
    /// walked, a granted home's missing shell start-up and ssh login files:
    /// `cordon_policy::ResolvedProfile::kept_absent`); set by the caller.
    pub absent: Vec<(PathBuf, String)>,
    /// The git dir is not walked ([`Census::kept_absent_only`]): only [`Census::absent`]
    /// is checked after the run.
    unwalked: bool,
    /// Work-tree files present before the run that must be the same file after it, with
    /// the tool and their (device, inode) then ([`Census::keep_same`]).
    pub kept_same: Vec<(PathBuf, String, FileIdentity)>,
    /// The names under `worktrees/` (linked worktrees' admin dirs) before the run.
    worktree_admins: Vec<std::ffi::OsString>,
    /// Those of [`Census::worktree_admins`] without a `modules/` (or with an empty one,
    /// the placeholder earlier versions left) before the run: it gets no placeholder
    /// (nu16 N1: git reads its mere existence as "this worktree contains submodules" and
    /// refuses `git worktree remove`/`move`, on the host too), so what the run leaves
    /// there is settled after it ([`settle_admin_modules`]).
    modules_absent: Vec<std::ffi::OsString>,
    /// Parent directories of [`Census::absent`] paths that were missing before the run
    /// ([`Census::note_absent_parents`]): one that is a symlink after it is the run's.
    absent_parents: Vec<PathBuf>,
    /// The git dir's (device, inode) when the census was taken: what finds it again once
    /// its project was renamed or moved on the same filesystem ([`Census::relocated`]).
    pub identity: Option<(u64, u64)>,
    /// The git dir, held open from the census on (not stored in a record): where it is
    /// now, whatever path it was renamed to while the command ran (attack pass 188 F1: a
    /// project renamed during a run left the link its command planted in `.git` unswept,
    /// and the next run took it for "there before").
    pin: Option<std::sync::Arc<OwnedFd>>,
    /// The git dir's `config.lock` (device, inode) at the census, if there was one: never
    /// removed for the run ([`clear_killed_runs_config_lock`]).
    pub config_lock: Option<(u64, u64)>,
    /// git's lock files (regular files named `*.lock`) present at the census: (path
    /// relative to the git dir, inode). One present after the run and not here is the
    /// run's ([`Swept::left_locks`]).
    locks: Vec<(PathBuf, u64)>,
    /// When the census began (nanoseconds since the epoch): a `config.lock` born before is
    /// not the run's.
    pub taken_ns: Option<i64>,
    /// When the run's command was gone at the latest (nanoseconds since the epoch), for a
    /// run whose cordon process was killed before its sweep — set by the run that finishes
    /// it (`cordon-session`'s `pending_sweeps`, from the record's heartbeat), never
    /// stored. Read only by [`clear_killed_runs_config_lock`]: a `config.lock` born after
    /// it is the host git's, not removed (attack pass 219 #3). [`sweep`] does not read it:
    /// the heartbeat stops with a *stopped* cordon process while its command's children
    /// may go on (attack pass 229 #1), so every entry the census did not list is the run's.
    pub ended_ns: Option<i128>,
}

/// What names one file, unchanged, over time: device, inode, birth time (`statx` `btime`;
/// zero where the filesystem has none) and change time, each time as seconds and
/// nanoseconds. An inode number alone is reused at once by a file created after a
/// removal; the change time moves with every new link to the file and every write through
/// one (attack pass 32, C4: another run hard-linked the config, and the same inode linked
/// back after a removal kept device, inode and birth time).
pub type FileIdentity = (u64, u64, (i64, u32), (i64, u32));

/// The identity of the entry `name` in the directory `dir`, not following a symlink there.
fn identity_at(dir: BorrowedFd<'_>, name: &OsStr) -> Option<FileIdentity> {
    let name = std::ffi::CString::new(name.as_bytes()).ok()?;
    // SAFETY: statx is plain data; all-zero is a valid value.
    let mut sx: libc::statx = unsafe { std::mem::zeroed() };
    // SAFETY: `dir` is an open descriptor, `name` a NUL-terminated string and `sx` a valid
    // statx buffer the kernel fills.
    let rc = unsafe {
        libc::statx(
            dir.as_raw_fd(),
            name.as_ptr(),
            libc::AT_SYMLINK_NOFOLLOW,
            libc::STATX_INO | libc::STATX_BTIME | libc::STATX_CTIME,
            &mut sx,
        )
    };
    if rc != 0 {
        return None;
    }
    let dev = libc::makedev(sx.stx_dev_major, sx.stx_dev_minor);
    let born = if sx.stx_mask & libc::STATX_BTIME != 0 {
        (sx.stx_btime.tv_sec, sx.stx_btime.tv_nsec)
    } else {
        (0, 0)
    };
    Some((
        dev,
        sx.stx_ino,
        born,
        (sx.stx_ctime.tv_sec, sx.stx_ctime.tv_nsec),
    ))
}

/// The parent of `path` opened with no symlink followed anywhere on the way
/// ([`open_dir_strict`]), and `path`'s name.
fn open_parent(path: &Path) -> Option<(OwnedFd, &OsStr)> {
    let (parent, name) = (path.parent()?, path.file_name()?);
    Some((open_dir_strict(parent).ok()?, name))
}

/// Opens the directory at the absolute `path` one component at a time from `/`, each
/// with `O_NOFOLLOW`: a symlink anywhere on the path fails the open (`ELOOP`/`ENOTDIR`).
/// Every path the sweep acts on was canonical when it was recorded, so a symlink on it
/// now was made since — by another run, whose sandbox did not pin this path (attack pass
/// 34, E2: run A replaced the parent of a git dir run B had listed with a symlink to `/`,
/// and B's sweep, as root, removed every symlink of `/etc`). A relative path or one with
/// `..` is refused (`EINVAL`).
fn open_dir_strict(path: &Path) -> nix::Result<OwnedFd> {
    use std::path::Component;
    let flags = OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
    if !path.is_absolute() {
        return Err(Errno::EINVAL);
    }
    let mut fd = nix::fcntl::open("/", flags, Mode::empty())?;
    for c in path.components() {
        match c {
            Component::RootDir | Component::CurDir => {}
            Component::Normal(n) => fd = openat(fd.as_fd(), n, flags, Mode::empty())?,
            Component::ParentDir | Component::Prefix(_) => return Err(Errno::EINVAL),
        }
    }
    Ok(fd)
}

/// A stored [`Foreign`]: path, kind, target, identity (inode, change time s and ns, link
/// count).
type StoredForeign = (PathBuf, ForeignKind, Option<PathBuf>, (u64, i64, i64, u64));

/// The stored form of a [`Census`] (every fact the comparison uses).
#[derive(Serialize, Deserialize)]
struct CensusRecord {
    git_dir: PathBuf,
    foreign: Vec<StoredForeign>,
    state: Vec<(PathBuf, Vec<u8>)>,
    incomplete: Option<String>,
    #[serde(default)]
    absent: Vec<(PathBuf, String)>,
    #[serde(default)]
    unwalked: bool,
    #[serde(default)]
    kept_same: Vec<(PathBuf, String, FileIdentity)>,
    #[serde(default)]
    worktree_admins: Vec<std::ffi::OsString>,
    #[serde(default)]
    modules_absent: Vec<std::ffi::OsString>,
    #[serde(default)]
    absent_parents: Vec<PathBuf>,
    #[serde(default)]
    identity: Option<(u64, u64)>,
    #[serde(default)]
    config_lock: Option<(u64, u64)>,
    #[serde(default)]
    taken_ns: Option<i64>,
    #[serde(default)]
    locks: Vec<(PathBuf, u64)>,
}

impl Census {
    /// A census that only keeps work-tree files absent: `absent` (path, tool) in the work
    /// tree of the git dir `git_dir`, which is not walked — a nested repository's git dir
    /// is read-only to the command (protected whole), so nothing can appear in it, but its
    /// work tree may be writable (attack pass 30, A4b: a nested repository's missing
    /// `lefthook-local.yml` was left for the host's next `git commit` there).
    pub fn kept_absent_only(git_dir: PathBuf, absent: Vec<(PathBuf, String)>) -> Census {
        Census {
            git_dir,
            absent,
            unwalked: true,
            ..Census::default()
        }
    }

    /// Takes the linked worktrees' admin dirs the resolution protected
    /// (`cordon_policy::ResolvedFilesystem::worktree_admins_protected`) for the ones there
    /// before the run, in place of this census's own listing: an admin dir made after the
    /// resolution (by an overlapping run) was writable to the command and is swept as new,
    /// and one whose `modules/` the resolution left unprotected has what the run left
    /// there settled, whatever it held by the time of the census (attack pass 36, M2).
    /// `None` (`worktrees/` read-only whole): the census's own listing stands, and no
    /// `modules/` is settled.
    pub fn adopt_protected_admins(&mut self, admins: Option<Vec<(std::ffi::OsString, bool)>>) {
        match admins {
            None => self.modules_absent.clear(),
            Some(list) => {
                self.modules_absent = list
                    .iter()
                    .filter(|(_, modules)| !modules)
                    .map(|(n, _)| n.clone())
                    .collect();
                self.worktree_admins = list.into_iter().map(|(n, _)| n).collect();
            }
        }
    }

    /// Records the work-tree files `present` (path, tool) as they are now (without following
    /// a symlink at the path): after the run, one that is not the same file any more is
    /// moved aside ([`Swept::replaced_configs`]). A path that is gone already is skipped.
    pub fn keep_same(&mut self, present: Vec<(PathBuf, String)>) {
        for (p, tool) in present {
            let id = open_parent(&p).and_then(|(dir, name)| identity_at(dir.as_fd(), name));
            if let Some(id) = id {
                self.kept_same.push((p, tool, id));
            }
        }
    }

    /// Records which parent directories of the [`Census::absent`] paths are missing now
    /// (call once `absent` is set, before the run): after the run, such a parent that is a
    /// symlink — the run's, leading a hook manager to a config elsewhere (`.config -> d`
    /// with `d/lefthook-local.yml`: attack pass 33, D2) — is removed.
    pub fn note_absent_parents(&mut self) {
        for (p, _) in &self.absent {
            if let Some(parent) = p.parent() {
                if std::fs::symlink_metadata(parent).is_err()
                    && !self.absent_parents.iter().any(|q| q == parent)
                {
                    self.absent_parents.push(parent.to_path_buf());
                }
            }
        }
    }

    /// Whether the walk saw everything.
    pub fn complete(&self) -> bool {
        self.incomplete.is_none()
    }

    /// The census as JSON, with everything [`sweep`] compares.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::to_value(CensusRecord {
            git_dir: self.git_dir.clone(),
            foreign: self
                .foreign
                .iter()
                .map(|f| (f.path.clone(), f.kind, f.target.clone(), f.id))
                .collect(),
            state: self.state.clone(),
            incomplete: self.incomplete.clone(),
            absent: self.absent.clone(),
            unwalked: self.unwalked,
            kept_same: self.kept_same.clone(),
            worktree_admins: self.worktree_admins.clone(),
            modules_absent: self.modules_absent.clone(),
            absent_parents: self.absent_parents.clone(),
            identity: self.identity,
            config_lock: self.config_lock,
            taken_ns: self.taken_ns,
            locks: self.locks.clone(),
        })
        .unwrap_or(serde_json::Value::Null)
    }

    /// A census stored by [`Census::to_json`]; `None` when it does not parse.
    pub fn from_json(v: serde_json::Value) -> Option<Census> {
        let r: CensusRecord = serde_json::from_value(v).ok()?;
        Some(Census {
            git_dir: r.git_dir,
            foreign: r
                .foreign
                .into_iter()
                .map(|(path, kind, target, id)| Foreign {
                    path,
                    kind,
                    target,
                    id,
                    relinked: false,
                })
                .collect(),
            state: r.state,
            incomplete: r.incomplete,
            absent: r.absent,
            unwalked: r.unwalked,
            kept_same: r.kept_same,
            worktree_admins: r.worktree_admins,
            modules_absent: r.modules_absent,
            absent_parents: r.absent_parents,
            identity: r.identity,
            pin: None,
            config_lock: r.config_lock,
            taken_ns: r.taken_ns,
            ended_ns: None,
            locks: r.locks,
        })
    }

    /// This census where its git dir is now, when the git dir is no longer at
    /// [`Census::git_dir`] (the project was renamed or moved on the same filesystem): found
    /// through the descriptor held since the census, or among `candidates` (git dirs a
    /// later run knows), by its (device, inode), and reopened there without following a
    /// symlink to check it; every path of the census moved with it. `None` while it is
    /// where it was, or when it cannot be found.
    pub fn relocated(&self, candidates: &[PathBuf]) -> Option<Census> {
        let id = self.identity?;
        let at = |p: &Path| {
            open_dir_strict(p)
                .ok()
                .and_then(|fd| fstat(&fd).ok())
                .is_some_and(|st| (st.st_dev, st.st_ino) == id)
        };
        // Reached without following a symlink, not merely by `lstat` (which follows a
        // parent swapped for a link to the moved directory, whose sweep would then fail).
        if at(&self.git_dir) {
            return None;
        }
        let pinned = self
            .pin
            .as_ref()
            .and_then(|fd| std::fs::read_link(format!("/proc/self/fd/{}", fd.as_raw_fd())).ok());
        let now = pinned
            .into_iter()
            .chain(candidates.iter().cloned())
            .find(|p| p.is_absolute() && at(p))?;
        Some(self.rebased(&now))
    }

    /// This census with every path under the old git dir (and, for a `.git` directory,
    /// under its old work tree) moved to `git_dir`.
    fn rebased(&self, git_dir: &Path) -> Census {
        let mut pairs = vec![(self.git_dir.clone(), git_dir.to_path_buf())];
        if self.git_dir.file_name() == Some(OsStr::new(".git")) {
            if let (Some(a), Some(b)) = (self.git_dir.parent(), git_dir.parent()) {
                pairs.push((a.to_path_buf(), b.to_path_buf()));
            }
        }
        let moved = |p: &Path| {
            pairs
                .iter()
                .find_map(|(from, to)| p.strip_prefix(from).ok().map(|rest| to.join(rest)))
                .unwrap_or_else(|| p.to_path_buf())
        };
        let mut c = self.clone();
        c.git_dir = git_dir.to_path_buf();
        for f in &mut c.foreign {
            f.path = moved(&f.path);
        }
        for (p, _) in &mut c.absent {
            *p = moved(p);
        }
        for (p, _, _) in &mut c.kept_same {
            *p = moved(p);
        }
        for p in &mut c.absent_parents {
            *p = moved(p);
        }
        c
    }
}

/// A linked-worktree admin dir the run made that no worktree names back ([`sweep`] removed
/// its `gitdir`). In `--json` as `[admin dir, why]`.
#[derive(Debug, Clone)]
pub struct DisarmedAdmin {
    /// The admin dir (`.git/worktrees/NAME`).
    pub admin: PathBuf,
    /// Why it was disarmed.
    pub why: String,
    /// The `.git` its `gitdir` named: where the worktree was to be.
    pub named: PathBuf,
}

impl Serialize for DisarmedAdmin {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        (&self.admin, &self.why).serialize(s)
    }
}

/// What [`sweep`] did to one git dir after the run.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Swept {
    /// The git dir.
    pub git_dir: PathBuf,
    /// Entries the run made (not in the census) and cordon removed: the first
    /// [`REMOVED_LISTED`] of them ([`Swept::removed_total`] says how many there were).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub removed: Vec<Foreign>,
    /// How many entries were removed (attack pass 32, C3: a million planted links made a
    /// report of a million entries; the list is cut at [`REMOVED_LISTED`]).
    #[serde(skip_serializing_if = "is_zero")]
    pub removed_total: usize,
    /// Entries the run made that could not be removed, with why.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub not_removed: Vec<(Foreign, String)>,
    /// In-progress state the run made or changed that runs code at the host's
    /// `--continue`: (state file, what runs).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub pending_code: Vec<(PathBuf, String)>,
    /// Linked-worktree admin dirs the run made that no worktree names back: their
    /// `gitdir` was removed.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub disarmed_worktrees: Vec<DisarmedAdmin>,
    /// Code-bearing files of linked-worktree admin dirs the run made, set aside
    /// ([`QuarantinedFile`]: path, where moved, why).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub quarantined: Vec<QuarantinedFile>,
    /// Why the walk did not see everything (before or after the run), with what to do;
    /// `None`: it did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub incomplete: Option<String>,
    /// Why the git dir could not be walked after the run (it was removed, or replaced by
    /// a symlink), if so.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Work-tree files that had to stay absent and the run created, removed: (path, the
    /// tool that would have run what it holds).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub removed_configs: Vec<(PathBuf, String)>,
    /// Such entries that could not be removed (a directory), with the tool.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub left_configs: Vec<(PathBuf, String)>,
    /// Work-tree files present before the run that are another file after it (replaced,
    /// or changed through another link, while the command ran), moved aside: (path, where
    /// it went — `None`: no free name, removed —, the tool). One that could be neither is
    /// in [`Swept::left_configs`].
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub replaced_configs: Vec<(PathBuf, Option<PathBuf>, String)>,
    /// The sweep was an earlier run's, finished by this one: that run's cordon process
    /// ended (killed) before it could make it.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub earlier_run: bool,
    /// What was done about a `config.lock` an earlier run (killed) left in the git dir:
    /// (removed, the note saying so) ([`clear_killed_runs_config_lock`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub config_lock: Option<(bool, String)>,
    /// git's lock files (`index.lock`, `HEAD.lock`, `refs/heads/main.lock`, …) that were
    /// not there before the run and are after it: a git command the run started was
    /// stopped before it finished (a timeout, a kill), or another git is running now.
    /// Not removed — cordon cannot tell which, and removing a live lock breaks that git —
    /// but said, since every later host git that needs the lock fails with "File exists"
    /// (attack pass 233 #1).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub left_locks: Vec<PathBuf>,
}

impl Swept {
    /// The sweep of `before`'s git dir that could not be made, with why.
    pub fn failed(before: &Census, error: String) -> Swept {
        Swept {
            git_dir: before.git_dir.clone(),
            error: Some(error),
            ..Swept::default()
        }
    }

    /// Whether there is anything to say.
    pub fn is_empty(&self) -> bool {
        self.removed.is_empty()
            && self.not_removed.is_empty()
            && self.pending_code.is_empty()
            && self.disarmed_worktrees.is_empty()
            && self.quarantined.is_empty()
            && self.removed_configs.is_empty()
            && self.left_configs.is_empty()
            && self.replaced_configs.is_empty()
            && self.config_lock.is_none()
            && self.left_locks.is_empty()
            && self.incomplete.is_none()
            && self.error.is_none()
    }

    /// Whether the walk saw everything.
    pub fn complete(&self) -> bool {
        self.incomplete.is_none()
    }
}

impl ForeignKind {
    /// The kind's name in a sentence ("symlink", "named pipe", …).
    pub fn name(self) -> &'static str {
        match self {
            ForeignKind::Symlink => "symlink",
            ForeignKind::Fifo => "named pipe",
            ForeignKind::Socket => "socket",
            ForeignKind::Device => "device",
        }
    }
}

/// Whether `name` is a lock file's: git takes `X.lock` to write `X` (`index.lock`,
/// `HEAD.lock`, `refs/heads/main.lock`, `packed-refs.lock`, `config.lock`).
fn is_lock(name: &OsStr) -> bool {
    name.as_bytes().ends_with(b".lock") && name.len() > ".lock".len()
}

fn kind_of(st: &FileStat) -> Option<ForeignKind> {
    match st.st_mode & libc::S_IFMT {
        libc::S_IFLNK => Some(ForeignKind::Symlink),
        libc::S_IFIFO => Some(ForeignKind::Fifo),
        libc::S_IFSOCK => Some(ForeignKind::Socket),
        libc::S_IFCHR | libc::S_IFBLK => Some(ForeignKind::Device),
        _ => None,
    }
}

fn is_dir(st: &FileStat) -> bool {
    st.st_mode & libc::S_IFMT == libc::S_IFDIR
}

/// A loose-object directory (`objects/xx`): checked itself, its files not listed.
fn loose_objects(rel: &Path) -> bool {
    let mut c = rel.components();
    matches!(
        (c.next(), c.next(), c.next()),
        (Some(a), Some(b), None)
            if a.as_os_str() == "objects"
                && b.as_os_str().len() == 2
                && b.as_os_str().as_bytes().iter().all(u8::is_ascii_hexdigit)
    )
}

/// The state file `rel` is (one of [`cordon_policy::git_state::STATE_FILES`]), relative
/// to the git dir whose state it is: the git dir itself, or a linked worktree's admin dir
/// `worktrees/<name>/` (attack pass 30, A2: a worktree's pending rebase went unreported).
fn state_file(rel: &Path) -> Option<&Path> {
    let is = |r: &Path| {
        cordon_policy::git_state::STATE_FILES
            .iter()
            .any(|s| Path::new(s) == r)
    };
    if is(rel) {
        return Some(rel);
    }
    let mut c = rel.components();
    match (c.next(), c.next()) {
        (Some(w), Some(_)) if w.as_os_str() == "worktrees" && is(c.as_path()) => Some(c.as_path()),
        _ => None,
    }
}

/// Why the walk could not look inside `rel` of `git_dir`, and what to do.
fn cannot_open(git_dir: &Path, rel: &Path, e: Errno) -> String {
    format!(
        "{} cannot be read ({}): make it readable (`chmod -R u+rwX {}`) or remove it",
        git_dir.join(rel).display(),
        e.desc(),
        git_dir.join(rel).display()
    )
}

/// Opens the directory `rel` below `top` one component at a time, each without following
/// a symlink, and checks it is the inode `id` (device, inode) seen when it was listed.
fn reopen(top: &OwnedFd, rel: &Path, id: (u64, u64)) -> nix::Result<OwnedFd> {
    let mut fd = top.try_clone().map_err(|_| Errno::EMFILE)?;
    for c in rel.components() {
        fd = openat(
            fd.as_fd(),
            c.as_os_str(),
            OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC,
            Mode::empty(),
        )?;
    }
    let st = fstat(&fd)?;
    if (st.st_dev, st.st_ino) != id {
        return Err(Errno::EAGAIN);
    }
    Ok(fd)
}

/// Reads the regular file `name` in `dir` without following a symlink (at most
/// [`STATE_CAP`] bytes).
fn read_at(dir: BorrowedFd<'_>, name: &OsStr) -> Option<Vec<u8>> {
    let fd = openat(
        dir,
        name,
        OFlag::O_RDONLY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC | OFlag::O_NONBLOCK,
        Mode::empty(),
    )
    .ok()?;
    if fstat(&fd).ok()?.st_mode & libc::S_IFMT != libc::S_IFREG {
        return None;
    }
    let mut out = Vec::new();
    std::fs::File::from(fd)
        .take(STATE_CAP)
        .read_to_end(&mut out)
        .ok()?;
    Some(out)
}

/// What ends the text of an in-progress state file larger than [`STATE_CAP`]: its first
/// [`STATE_CAP`] bytes, then this and its size and change time, so that a change to it
/// is still seen.
const TRUNCATED_STATE: &[u8] = b"\n\0cordon: not read whole: ";

/// An in-progress state file `name` in `dir` as [`read_at`] reads it, except that one
/// larger than [`STATE_CAP`] is marked so ([`TRUNCATED_STATE`]): git reads all of it, and
/// what lies past the cap (an `exec` line after a megabyte of comments: attack pass 39,
/// C1) would otherwise never be judged.
fn read_state_at(dir: BorrowedFd<'_>, name: &OsStr) -> Option<Vec<u8>> {
    let mut out = read_at(dir, name)?;
    if out.len() as u64 >= STATE_CAP {
        let st = fstatat(dir, name, nix::fcntl::AtFlags::AT_SYMLINK_NOFOLLOW).ok()?;
        if st.st_size as u64 > STATE_CAP {
            out.extend_from_slice(TRUNCATED_STATE);
            out.extend_from_slice(
                format!("{} {}.{}", st.st_size, st.st_ctime, st.st_ctime_nsec).as_bytes(),
            );
        }
    }
    Some(out)
}

/// The walk shared by [`census`] and [`sweep`]: `remove` decides, for each foreign entry
/// found, whether to remove it.
///
/// Breadth first, and in each directory every entry that is not a directory is judged
/// before any directory below is entered: entries a command piles up deep in the tree
/// cannot use up the budget before the shallower names git writes in place (`logs/HEAD`,
/// `FETCH_HEAD`) are looked at (attack pass 29, F4). Loose-object directories are read for
/// their entries' types only (`d_type`; no `fstatat` for a regular file) and do not count
/// against [`BUDGET`] (attack pass 29, F9: a FIFO there hangs every host `git log`).
struct Walk<'a> {
    git_dir: &'a Path,
    seen: usize,
    /// [`BUDGET`] (smaller in tests).
    budget: usize,
    /// The budget ran out ([`Walk::over_budget`]).
    over: bool,
    /// Why the walk did not see everything (the first reason, with what to do), if so.
    incomplete: Option<String>,
    foreign: Vec<Foreign>,
    state: Vec<(PathBuf, Vec<u8>)>,
    removed: Vec<Foreign>,
    not_removed: Vec<(Foreign, String)>,
    /// Regular files named `*.lock` seen: (path relative to the git dir, inode).
    locks: Vec<(PathBuf, u64)>,
    remove: Option<&'a dyn Fn(&Foreign) -> bool>,
}

impl<'a> Walk<'a> {
    /// A walk of `git_dir` that has seen nothing yet; `remove` decides, in a sweep, which
    /// entries that lead out are removed (`None`: a census, nothing is).
    fn new(
        git_dir: &'a Path,
        remove: Option<&'a dyn Fn(&Foreign) -> bool>,
        budget: usize,
    ) -> Walk<'a> {
        Walk {
            git_dir,
            seen: 0,
            budget,
            over: false,
            incomplete: None,
            foreign: Vec::new(),
            state: Vec::new(),
            removed: Vec::new(),
            not_removed: Vec::new(),
            locks: Vec::new(),
            remove,
        }
    }

    /// Records that the walk ran out of [`Walk::budget`] (once).
    fn over_budget(&mut self) {
        if self.over {
            return;
        }
        self.over = true;
        self.stop(format!(
            "it has more than {} entries (regular files and loose objects not counted): look \
             for what fills it (`find {} -path '*/objects/??' -prune -o -print | cut -d/ -f1-4 \
             | sort | uniq -c | sort -n | tail`) and remove it",
            self.budget,
            self.git_dir.display()
        ));
    }

    /// Records the first reason the walk is incomplete.
    fn stop(&mut self, why: String) {
        self.incomplete.get_or_insert(why);
    }

    /// Walks the directory `top` (the git dir) breadth first. The queue holds relative
    /// paths, not descriptors (a wide git dir would run out of them), each directory
    /// reopened from `top` one component at a time without following a symlink and checked
    /// to be the inode seen when it was queued. Loose-object directories are read only by
    /// the sweep, through their parent's open descriptor ([`Walk::loose`]).
    fn run(&mut self, top: OwnedFd) {
        // Two queues: the subtrees the host's git writes through (reflogs, refs, linked
        // worktrees' admin dirs) are walked before the rest, so entries a command padded
        // the git dir with elsewhere cannot use up the budget first (attack pass 31, B1).
        type Queue = std::collections::VecDeque<(PathBuf, usize, (u64, u64))>;
        let (mut first, mut rest): (Queue, Queue) = Default::default();
        first.push_back((PathBuf::new(), 0, (0, 0)));
        let written_through = |rel: &Path| {
            rel.components().next().is_some_and(|c| {
                matches!(c.as_os_str().as_bytes(), b"logs" | b"refs" | b"worktrees")
            })
        };
        while let Some((rel, depth, id)) = first.pop_front().or_else(|| rest.pop_front()) {
            if depth == 1 && !written_through(&rel) {
                self.seen += 1;
                if self.seen > self.budget {
                    self.over_budget();
                    continue;
                }
            }
            let opened = if rel.as_os_str().is_empty() {
                top.try_clone().map_err(|_| Errno::EMFILE)
            } else {
                reopen(&top, &rel, id)
            };
            let fd = match opened {
                Ok(f) => f,
                Err(e) => {
                    self.stop(cannot_open(self.git_dir, &rel, e));
                    continue;
                }
            };
            let mut listing = self.list_typed(&fd, &rel);
            if rel.as_os_str().is_empty() {
                // The written-through subtrees first, so they are queued within budget.
                listing.sort_by_key(|(n, _, _)| !written_through(Path::new(n)));
            }
            for (name, dtype, ino) in listing {
                // A regular file is neither followed by git's writes nor walked into: not
                // counted, and not looked at unless it is in-progress state (attack pass
                // 31, B1: a million hard links at the top used up the budget) or a lock.
                if dtype == Some(nix::dir::Type::File) {
                    if is_lock(&name) {
                        self.locks.push((rel.join(&name), ino));
                    }
                    if state_file(&rel.join(&name)).is_some() {
                        self.entry(&fd, &rel, &name, false);
                    }
                    continue;
                }
                // At the top, the other directories are counted when they are entered,
                // after the written-through subtrees (which padding beside them must not
                // starve: attack pass 31, B1); at most a budget of them is queued.
                let deferred = rel.as_os_str().is_empty() && !written_through(Path::new(&name));
                let Some((sub, st)) = self.entry(&fd, &rel, &name, false) else {
                    // Not a directory: in the sweep, removed when it leads out, and not
                    // counted (attack pass 32, C3: a million symlinks used up the budget
                    // before the walk reached a planted reflog link); in the census, counted
                    // (each is kept in memory).
                    if self.remove.is_none() && dtype != Some(nix::dir::Type::File) {
                        self.seen += 1;
                        if self.seen > self.budget {
                            self.over_budget();
                            return;
                        }
                    }
                    continue;
                };
                if !deferred {
                    self.seen += 1;
                }
                if self.seen > self.budget || (deferred && rest.len() >= self.budget) {
                    // Past the budget: what this listing holds is still looked at (a
                    // planted link beside the padding is removed), no directory is entered.
                    self.over_budget();
                    continue;
                }
                let sub_rel = rel.join(&sub);
                if loose_objects(&sub_rel) {
                    if self.remove.is_some() {
                        self.loose(&fd, &sub, &sub_rel);
                    }
                    continue;
                }
                if depth + 1 > MAX_DEPTH {
                    self.stop(format!(
                        "{} is deeper than {MAX_DEPTH} levels: remove it",
                        self.git_dir.join(&sub_rel).display()
                    ));
                    continue;
                }
                let queue = if written_through(&sub_rel) {
                    &mut first
                } else {
                    &mut rest
                };
                queue.push_back((sub_rel, depth + 1, (st.st_dev, st.st_ino)));
            }
        }
    }

    /// In the sweep, the loose-object directory `name` of the directory `parent` (at
    /// `rel`): every entry that is not a regular file is removed, whatever the census
    /// said — git never makes one there, and a FIFO in place of an object hangs every host
    /// `git log` (attack pass 29, F9). Only the entries' `d_type` is read for the rest.
    fn loose(&mut self, parent: &OwnedFd, name: &OsStr, rel: &Path) {
        let fd = match openat(
            parent.as_fd(),
            name,
            OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC,
            Mode::empty(),
        ) {
            Ok(f) => f,
            Err(e) => return self.stop(cannot_open(self.git_dir, rel, e)),
        };
        for (entry, dtype, _) in self.list_typed(&fd, rel) {
            if dtype != Some(nix::dir::Type::File) {
                self.entry(&fd, rel, &entry, true);
            }
        }
    }

    /// The names in the directory `fd` (at `rel`) with their `d_type` when the filesystem
    /// gives one, and their inode.
    fn list_typed(
        &mut self,
        fd: &OwnedFd,
        rel: &Path,
    ) -> Vec<(std::ffi::OsString, Option<nix::dir::Type>, u64)> {
        let listing = fd
            .try_clone()
            .map_err(|_| Errno::EMFILE)
            .and_then(Dir::from_fd);
        let listing = match listing {
            Ok(l) => l,
            Err(e) => {
                self.stop(cannot_open(self.git_dir, rel, e));
                return Vec::new();
            }
        };
        let mut names = Vec::new();
        for e in listing.into_iter() {
            let e = match e {
                Ok(e) => e,
                Err(e) => {
                    self.stop(cannot_open(self.git_dir, rel, e));
                    break;
                }
            };
            let name = OsStr::from_bytes(e.file_name().to_bytes()).to_os_string();
            if name == "." || name == ".." {
                continue;
            }
            names.push((name, e.file_type(), e.ino()));
        }
        names
    }

    /// Judges the entry `name` of the directory `fd` (at `rel`): a foreign entry is listed
    /// or removed (always removed with `remove_any`), a state file read; a directory is
    /// returned for the caller to enter.
    fn entry(
        &mut self,
        fd: &OwnedFd,
        rel: &Path,
        name: &OsStr,
        remove_any: bool,
    ) -> Option<(std::ffi::OsString, FileStat)> {
        let st = fstatat(fd.as_fd(), name, nix::fcntl::AtFlags::AT_SYMLINK_NOFOLLOW).ok()?;
        let rel = rel.join(name);
        if let Some(kind) = kind_of(&st) {
            let target = (kind == ForeignKind::Symlink)
                .then(|| readlinkat(fd.as_fd(), name).ok())
                .flatten()
                .map(PathBuf::from);
            let f = Foreign {
                path: self.git_dir.join(&rel),
                kind,
                target,
                id: (st.st_ino, st.st_ctime, st.st_ctime_nsec, st.st_nlink as u64),
                relinked: false,
            };
            match self.remove {
                Some(decide) if remove_any || decide(&f) => {
                    match unlinkat(fd.as_fd(), name, UnlinkatFlags::NoRemoveDir) {
                        Ok(()) | Err(Errno::ENOENT) => self.removed.push(f),
                        Err(e) => self.not_removed.push((f, e.desc().to_string())),
                    }
                }
                _ => self.foreign.push(f),
            }
            None
        } else if is_dir(&st) {
            Some((name.to_os_string(), st))
        } else {
            // Reached with a `d_type` of "unknown" (a regular file's lock is taken by the
            // listing otherwise, and no state file is named `*.lock`).
            if is_lock(name) && st.st_mode & libc::S_IFMT == libc::S_IFREG {
                self.locks.push((rel.clone(), st.st_ino));
            }
            if state_file(&rel).is_some() {
                if let Some(bytes) = read_state_at(fd.as_fd(), name) {
                    self.state.push((rel, bytes));
                }
            }
            None
        }
    }
}

/// Opens the git dir itself: a directory, its last component not a symlink.
fn open_git_dir(git_dir: &Path) -> io::Result<(OwnedFd, FileStat)> {
    let fd = open_dir_strict(git_dir).map_err(|e| {
        io::Error::new(
            io::Error::from(e).kind(),
            format!("{}: {e}", git_dir.display()),
        )
    })?;
    let st = fstat(&fd).map_err(io::Error::from)?;
    Ok((fd, st))
}

fn walk<'a>(
    git_dir: &'a Path,
    remove: Option<&'a dyn Fn(&Foreign) -> bool>,
    budget: usize,
) -> io::Result<Walk<'a>> {
    let (fd, _) = open_git_dir(git_dir)?;
    let mut w = Walk::new(git_dir, remove, budget);
    w.run(fd);
    Ok(w)
}

/// Before the run: `git_dir`'s entries that are not regular files or directories, and
/// its in-progress state files (see the module documentation).
///
/// Errors: the git dir cannot be opened as a directory without following a symlink.
pub fn census(git_dir: &Path) -> io::Result<Census> {
    // Read before anything is looked at: a `config.lock` born earlier is not the run's.
    let taken_ns = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .ok()
        .and_then(|d| i64::try_from(d.as_nanos()).ok());
    // Opened once: the walk takes a duplicate, the census keeps the descriptor.
    let (pin, st) = open_git_dir(git_dir)?;
    let config_lock = fstatat(
        &pin,
        "config.lock",
        nix::fcntl::AtFlags::AT_SYMLINK_NOFOLLOW,
    )
    .ok()
    .map(|l| (l.st_dev, l.st_ino));
    let mut w = Walk::new(git_dir, None, BUDGET);
    w.run(pin.try_clone()?);
    let admins = worktree_admins(git_dir);
    let modules_absent = admins
        .iter()
        .filter(|n| !admin_has_modules(git_dir, n))
        .cloned()
        .collect();
    Ok(Census {
        git_dir: git_dir.to_path_buf(),
        foreign: w.foreign,
        state: w.state,
        incomplete: w.incomplete,
        absent: Vec::new(),
        unwalked: false,
        kept_same: Vec::new(),
        worktree_admins: admins,
        modules_absent,
        absent_parents: Vec::new(),
        identity: Some((st.st_dev, st.st_ino)),
        pin: Some(std::sync::Arc::new(pin)),
        config_lock,
        taken_ns,
        ended_ns: None,
        locks: w.locks,
    })
}

/// Attack pass 212 #1: removes the `config.lock` a run whose cordon process was killed
/// left in the git dir of its census `before` (its helper, which removes such a lock after
/// a normal run, was killed with it), when it is provably that run's: not the one the
/// census saw, born after the census and before now, a regular file open by no process and
/// not written for a while, in the very directory the census saw (no symlink followed on
/// the way). A census without its time (an older record) removes nothing. When the run's
/// end is known ([`Census::ended_ns`]), a lock born after it is the host's and left
/// (attack pass 219 #3); where the filesystem keeps no birth time it is judged as before.
/// `Some((removed, note))` when there was such a lock to speak of.
pub fn clear_killed_runs_config_lock(before: &Census) -> Option<(bool, String)> {
    if before.unwalked {
        return None; // read-only to the command: nothing it could leave there
    }
    let started = i128::from(before.taken_ns?);
    #[cfg(target_os = "linux")]
    return crate::linux::git_config_broker::clear_killed_runs_lock(
        &before.git_dir,
        before.identity,
        before.config_lock,
        started,
        before.ended_ns,
    );
    #[cfg(not(target_os = "linux"))]
    {
        let _ = started;
        None
    }
}

/// Whether `git_dir/worktrees/<name>/modules` is there and is not an empty directory (a
/// file or symlink there counts: it is protected as it is, by the resolution). Opened
/// without following a symlink; what cannot be opened counts as there (nothing is done to
/// it after the run).
fn admin_has_modules(git_dir: &Path, name: &OsStr) -> bool {
    let Ok(admin) = open_dir_strict(&git_dir.join("worktrees").join(name)) else {
        return true;
    };
    match fstatat(
        admin.as_fd(),
        "modules",
        nix::fcntl::AtFlags::AT_SYMLINK_NOFOLLOW,
    ) {
        Err(Errno::ENOENT) => false,
        Err(_) => true,
        Ok(st) if is_dir(&st) => !dir_is_empty(admin.as_fd(), OsStr::new("modules")),
        Ok(_) => true,
    }
}

/// Whether the directory `name` in `dir` (not followed if a symlink) has no entries;
/// `false` when it cannot be read.
fn dir_is_empty(dir: BorrowedFd<'_>, name: &OsStr) -> bool {
    Dir::openat(
        dir,
        name,
        OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC,
        Mode::empty(),
    )
    .is_ok_and(|mut d| {
        d.iter()
            .flatten()
            .all(|e| matches!(e.file_name().to_bytes(), b"." | b".."))
    })
}

/// The names in `git_dir/worktrees/` (opened without following a symlink); empty when
/// there is none.
fn worktree_admins(git_dir: &Path) -> Vec<std::ffi::OsString> {
    let Ok((top, _)) = open_git_dir(git_dir) else {
        return Vec::new();
    };
    let Ok(dir) = Dir::openat(
        top.as_fd(),
        "worktrees",
        OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC,
        Mode::empty(),
    ) else {
        return Vec::new();
    };
    dir.into_iter()
        .flatten()
        .map(|e| OsStr::from_bytes(e.file_name().to_bytes()).to_os_string())
        .filter(|n| n != "." && n != "..")
        .collect()
}

/// After the run: every admin dir under `worktrees/` the run made whose `gitdir` does not
/// name a `.git` file that names it back (what `git worktree add` makes) has its `gitdir`
/// removed — the host's `git worktree repair` writes a `.git` file at the path it names,
/// outside the writable roots, leading to a git dir the command wrote (attack pass 33,
/// D1). Returns (admin dir, why) for each.
///
/// Every new admin dir also has its code-bearing files set aside
/// ([`quarantine_new_admin_files`], into `quarantined`), and every existing one that had no
/// `modules/` has what the run made there settled ([`settle_admin_modules`]).
fn disarm_new_worktree_admins(
    before: &Census,
    quarantined: &mut Vec<QuarantinedFile>,
) -> Vec<DisarmedAdmin> {
    let mut out = Vec::new();
    let Ok((top, _)) = open_git_dir(&before.git_dir) else {
        return out;
    };
    let Ok(wt) = openat(
        top.as_fd(),
        "worktrees",
        OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC,
        Mode::empty(),
    ) else {
        return out;
    };
    // Every name, however many (attack pass 36, A1: a listing cap let padding hide an
    // admin dir the command made); looked up in sets, not lists.
    let admins_before: std::collections::HashSet<&std::ffi::OsString> =
        before.worktree_admins.iter().collect();
    let modules_absent: std::collections::HashSet<&std::ffi::OsString> =
        before.modules_absent.iter().collect();
    for name in worktree_admins(&before.git_dir) {
        let existed = admins_before.contains(&name);
        // A name that is not UTF-8 cannot be carried in a resolution (every later run of
        // the project would be refused over it: attack pass 37, A7): a new one is moved out
        // of `worktrees/` under a readable name.
        if !existed && name.to_str().is_none() {
            let readable = std::ffi::OsString::from(
                name.as_bytes()
                    .iter()
                    .map(|b| format!("{b:02x}"))
                    .collect::<String>(),
            );
            let moved = move_out_of_worktrees_as(top.as_fd(), wt.as_fd(), &name, &readable)
                .map(|n| before.git_dir.join(n));
            quarantined.push((
                before.git_dir.join("worktrees").join(&name),
                moved,
                "its name is not UTF-8 (later runs could not name it)".to_string(),
            ));
            continue;
        }
        if existed && !modules_absent.contains(&name) {
            continue;
        }
        let Ok(admin) = openat(
            wt.as_fd(),
            name.as_os_str(),
            OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC,
            Mode::empty(),
        ) else {
            continue;
        };
        let here = before.git_dir.join("worktrees").join(&name);
        if existed {
            settle_admin_modules(admin.as_fd(), &here, quarantined);
            continue;
        }
        // Its `commondir` decides whose config and hooks git uses in that worktree: one
        // naming anything but this git dir (or none: git then takes the admin dir itself for
        // the common dir, its own config and hooks) is the command's, whoever made the
        // directory — moved out of `worktrees/` whole, so no worktree uses it (attack pass
        // 37, A3: a command rewrote the `commondir` of an admin dir another process added
        // during the run, and the host's `git status` there ran its fsmonitor).
        if let Some(why) = foreign_commondir(admin.as_fd(), &before.git_dir) {
            let moved = move_out_of_worktrees(top.as_fd(), wt.as_fd(), &name)
                .map(|n| before.git_dir.join(n));
            quarantined.push((here.clone(), moved, why));
            continue;
        }
        quarantine_new_admin_files(admin.as_fd(), &here, quarantined);
        let Some(named) = read_at(admin.as_fd(), OsStr::new("gitdir")) else {
            continue;
        };
        let dotgit = PathBuf::from(OsStr::from_bytes(named.trim_ascii()));
        // Read as every file here is ([`read_at`]: no symlink followed at the name, a
        // regular file only — a planted `gitdir` naming a FIFO must not hang the sweep).
        // Read only (nothing is changed through it): the worktree may be anywhere.
        let backlink = dotgit
            .parent()
            .zip(dotgit.file_name())
            .and_then(|(parent, name)| {
                let dir = nix::fcntl::open(
                    parent,
                    OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC,
                    Mode::empty(),
                )
                .ok()?;
                let t = String::from_utf8(read_at(dir.as_fd(), name)?).ok()?;
                let p = t.trim().strip_prefix("gitdir:")?.trim().to_string();
                Some(PathBuf::from(p))
            });
        let genuine = dotgit.is_absolute()
            && backlink.is_some_and(|b| {
                b == here || std::fs::canonicalize(&b).ok() == std::fs::canonicalize(&here).ok()
            });
        if genuine {
            continue;
        }
        if unlinkat(admin.as_fd(), "gitdir", UnlinkatFlags::NoRemoveDir).is_ok() {
            out.push(DisarmedAdmin {
                admin: here,
                why: format!(
                    "its gitdir named {}, which has no .git file naming it back",
                    dotgit.display()
                ),
                named: dotgit,
            });
        }
    }
    out
}

/// After the run, each directory cordon created for a writable grant (`roots`: missing at
/// resolution, made empty before the run, and so without the `.git` and `.cordon`
/// placeholders an existing root gets — `git worktree add ../wt` must be able to use it):
/// what would make it a repository or a project root the host trusts is moved aside — a
/// `.git` that is not a linked worktree's `.git` file naming an admin dir of one of
/// `git_dirs` that names it back (a `git init` there, or a `.git` file pointing at a git
/// dir the command wrote), and a `.cordon` (it would make the directory a later run's
/// workspace root). Attack pass 40, D1: the host's `git status` there ran the command's
/// `core.fsmonitor`. One [`Swept`] per root that had something, with what was moved.
///
/// `killed`: the roots are a killed run's, settled by a later run — what is there may
/// also have been made since, by the user: the reason says so, and the warning says to
/// move it back if it is theirs (attack pass 42, H2).
pub fn settle_fresh_roots(roots: &[PathBuf], git_dirs: &[PathBuf], killed: bool) -> Vec<Swept> {
    let mut out = Vec::new();
    for root in roots {
        let Ok(dir) = open_dir_strict(root) else {
            continue;
        };
        let mut quarantined = Vec::new();
        for name in [".git", ".cordon"] {
            let name = OsStr::new(name);
            let Ok(st) = fstatat(dir.as_fd(), name, nix::fcntl::AtFlags::AT_SYMLINK_NOFOLLOW)
            else {
                continue;
            };
            // An empty directory is a concurrent run's placeholder (the directory exists
            // for a run started since, so it got `.git`/`.cordon` bound read-only over
            // empty directories): renaming it would move that run's protection away with
            // it. Empty, it is nothing to git or cordon either.
            if st.st_mode & libc::S_IFMT == libc::S_IFDIR && empty_dir_at(dir.as_fd(), name) {
                continue;
            }
            let mut why = if name == ".cordon" {
                "a cordon project marker in a directory cordon created for a grant (it would \
                 make that directory a later run's workspace)"
                    .to_string()
            } else if st.st_mode & libc::S_IFMT == libc::S_IFREG
                && genuine_worktree_file(dir.as_fd(), root, git_dirs)
            {
                continue;
            } else {
                "a git repository in a directory cordon created for a grant (git run there \
                 would use its config and hooks)"
                    .to_string()
            };
            if killed {
                why.push_str(
                    "; that run was killed before it could check the directory, so this may \
                     also have been made since: if you made it, move it back",
                );
            }
            let moved = rename_aside(dir.as_fd(), name).map(|n| root.join(n));
            quarantined.push((root.join(name), moved, why));
        }
        if !quarantined.is_empty() {
            out.push(Swept {
                git_dir: root.clone(),
                quarantined,
                ..Swept::default()
            });
        }
    }
    out
}

/// Whether `name` in `dir` is a directory (not through a symlink) with no entries.
fn empty_dir_at(dir: BorrowedFd<'_>, name: &OsStr) -> bool {
    let flags = OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
    let Ok(fd) = openat(dir, name, flags, Mode::empty()) else {
        return false;
    };
    let Ok(mut d) = Dir::from_fd(fd) else {
        return false;
    };
    let empty = d
        .iter()
        .all(|e| e.is_ok_and(|e| matches!(e.file_name().to_bytes(), b"." | b"..")));
    empty
}

/// Whether the `.git` file in `dir` (the directory `root`) is a linked worktree's: `gitdir:
/// <git dir>/worktrees/<name>` for one of `git_dirs`, whose `gitdir` file names
/// `root/.git` back. Only read.
fn genuine_worktree_file(dir: BorrowedFd<'_>, root: &Path, git_dirs: &[PathBuf]) -> bool {
    let Some(text) = read_at(dir, OsStr::new(".git")) else {
        return false;
    };
    let Ok(text) = String::from_utf8(text) else {
        return false;
    };
    let Some(admin) = text
        .trim_end_matches(['\n', '\r'])
        .strip_prefix("gitdir: ")
        .map(PathBuf::from)
    else {
        return false;
    };
    let in_worktrees = admin.parent().is_some_and(|w| {
        w.file_name() == Some(OsStr::new("worktrees"))
            && w.parent().is_some_and(|g| git_dirs.iter().any(|d| d == g))
    });
    // Read as every file of a git dir here is: the admin dir opened without a symlink on
    // its path, `gitdir` a regular file not followed (a planted FIFO must not hang the
    // settle, a link must not lead it elsewhere).
    in_worktrees
        && open_dir_strict(&admin)
            .ok()
            .and_then(|a| read_at(a.as_fd(), OsStr::new("gitdir")))
            .is_some_and(|b| {
                let mut end = b.len();
                while end > 0 && matches!(b[end - 1], b'\n' | b'\r') {
                    end -= 1;
                }
                Path::new(OsStr::from_bytes(&b[..end])) == root.join(".git")
            })
}

/// Why the `commondir` of the linked-worktree admin dir `admin` (in the git dir `git_dir`)
/// may not lead git back to `git_dir`: missing, not a regular file, or anything but what
/// `git worktree add` writes (`../..`) or `git_dir`'s own absolute path with no symlink on
/// it. `None` when it is one of those. Only read, and only compared.
fn foreign_commondir(admin: BorrowedFd<'_>, git_dir: &Path) -> Option<String> {
    let Some(bytes) = read_at(admin, OsStr::new("commondir")) else {
        return Some(
            "it has no commondir (git would take it for a git dir of its own, with its own \
             config and hooks)"
                .to_string(),
        );
    };
    // As git reads it: only a final CR/LF dropped (attack pass 38, B1: a leading space,
    // trimmed here, made git resolve `<admin>/ ../..` — a directory the command made).
    // And only what `git worktree add` writes, `../..`, or the git dir's own absolute path
    // with no symlink on it: a path through a symlink the command can re-point later is
    // the command's (B2: `../../../lnk` with `lnk -> .git`, re-pointed by the next run).
    let mut end = bytes.len();
    while end > 0 && matches!(bytes[end - 1], b'\n' | b'\r') {
        end -= 1;
    }
    let named = PathBuf::from(OsStr::from_bytes(&bytes[..end]));
    let same = named == Path::new("../..")
        || (named.is_absolute()
            && named == git_dir
            && std::fs::canonicalize(&named).is_ok_and(|c| c == named));
    (!same).then(|| {
        format!(
            "its commondir named {}, not this repository's git dir (git would use that \
             directory's config and hooks in the worktree)",
            named.display()
        )
    })
}

/// Moves the admin dir `name` out of `worktrees/` (`wt`) into the git dir (`top`), as
/// `cordon-quarantined-worktree-<name>-<random>`, never replacing anything; the new name
/// (relative to the git dir), or `None` when it could not be moved.
fn move_out_of_worktrees(
    top: BorrowedFd<'_>,
    wt: BorrowedFd<'_>,
    name: &OsStr,
) -> Option<std::ffi::OsString> {
    move_out_of_worktrees_as(top, wt, name, name)
}

/// [`move_out_of_worktrees`], the new name made from `shown` rather than `name`.
fn move_out_of_worktrees_as(
    top: BorrowedFd<'_>,
    wt: BorrowedFd<'_>,
    name: &OsStr,
    shown: &OsStr,
) -> Option<std::ffi::OsString> {
    rename_to_free_name(wt, name, top, 16, |_| {
        let mut aside = std::ffi::OsString::from("cordon-quarantined-worktree-");
        aside.push(shown);
        aside.push(format!("-{:016x}", random_u64()?));
        Some(aside)
    })
}

/// Renames `name` in `from` into `to` under the first of up to `tries` names
/// `candidate(i)` gives that is free, never replacing what is there
/// (`RENAME_NOREPLACE`); the new name, or `None` when none was free, a candidate could not
/// be made, or the rename failed.
fn rename_to_free_name(
    from: BorrowedFd<'_>,
    name: &OsStr,
    to: BorrowedFd<'_>,
    tries: u32,
    mut candidate: impl FnMut(u32) -> Option<std::ffi::OsString>,
) -> Option<std::ffi::OsString> {
    for i in 0..tries {
        let aside = candidate(i)?;
        match rustix::fs::renameat_with(
            from,
            name,
            to,
            aside.as_os_str(),
            rustix::fs::RenameFlags::NOREPLACE,
        ) {
            Ok(()) => return Some(aside),
            Err(rustix::io::Errno::EXIST) => continue,
            Err(_) => return None,
        }
    }
    None
}

/// A file of a linked-worktree admin dir the run made that git would run code from, set
/// aside after the run: (its path, where it was moved — `None`: it could not be, and is
/// named as left — and why).
pub type QuarantinedFile = (PathBuf, Option<PathBuf>, String);

/// In a linked-worktree admin dir the run made (`admin`, at `here`): what an existing
/// admin dir protects (`config.worktree`, `modules/`: attack pass 32 C1) is the command's
/// own in a new one, and git runs code from it on the host — a `core.fsmonitor` in
/// `config.worktree` at `git status` in that worktree (with `extensions.worktreeConfig`,
/// which sparse checkouts set), a submodule git dir's hooks at `git submodule update`
/// there (attack pass 34, E5 and E6). So `modules/` is renamed aside, and so is a
/// `config.worktree` holding more than the sparse-checkout keys `git worktree add`
/// copies ([`cordon_policy::gitconfig::merge::worktree_config_refusal`]).
fn quarantine_new_admin_files(admin: BorrowedFd<'_>, here: &Path, out: &mut Vec<QuarantinedFile>) {
    settle_admin_modules(admin, here, out);
    let name = OsStr::new("config.worktree");
    let Ok(st) = fstatat(admin, name, nix::fcntl::AtFlags::AT_SYMLINK_NOFOLLOW) else {
        return;
    };
    let why = if st.st_mode & libc::S_IFMT != libc::S_IFREG {
        "not a regular file".to_string()
    } else {
        match read_at(admin, name)
            .map(|b| cordon_policy::gitconfig::merge::worktree_config_refusal(&b))
        {
            Some(None) => return, // sparse-checkout keys only
            Some(Some(why)) => why,
            None => "it could not be read".to_string(),
        }
    };
    let moved = rename_aside(admin, name).map(|n| here.join(n));
    out.push((here.join(name), moved, why));
}

/// After the run, the `modules` of a linked-worktree admin dir (`admin`, at `here`) that
/// had none before it (a new admin dir, or [`Census::modules_absent`]): submodule git
/// dirs the command made there — whose hooks the host's `git submodule update` in that
/// worktree would run (attack pass 32, C1; 34, E6) — are renamed aside and named in
/// `out`; an empty directory is removed (nothing in it, and git takes its mere existence
/// for "this worktree contains submodules": nu16 N1). Nothing there: nothing done.
fn settle_admin_modules(admin: BorrowedFd<'_>, here: &Path, out: &mut Vec<QuarantinedFile>) {
    let name = OsStr::new("modules");
    let Ok(st) = fstatat(admin, name, nix::fcntl::AtFlags::AT_SYMLINK_NOFOLLOW) else {
        return;
    };
    if is_dir(&st)
        && dir_is_empty(admin, name)
        && unlinkat(admin, name, UnlinkatFlags::RemoveDir).is_ok()
    {
        return;
    }
    let moved = rename_aside(admin, name).map(|n| here.join(n));
    out.push((
        here.join(name),
        moved,
        "submodule git dirs the command made (the host's `git submodule update` in that \
         worktree would run their hooks); that worktree's submodules have no git dir now: \
         remove their directories and run `git submodule update --init` outside cordon"
            .to_string(),
    ));
}

/// Whether `path` does not exist, as the system says (`ENOENT`/`ENOTDIR`), not merely
/// could not be looked at.
fn gone(path: &Path) -> bool {
    match std::fs::symlink_metadata(path) {
        Ok(_) => false,
        Err(e) => matches!(e.raw_os_error(), Some(libc::ENOENT | libc::ENOTDIR)),
    }
}

/// What [`remove_created`] found at a path that had to stay absent.
enum Created {
    /// Still absent.
    No,
    /// Something was there (a file or a symlink): removed.
    Removed,
    /// A directory, or it could not be removed: left.
    Left,
}

/// Removes what now exists at `path` (which was absent before the run): by name in its
/// parent directory, opened without following a symlink, never following one at `path`.
/// When the parent cannot be opened that way (it is, or passes through, a symlink a
/// command may have made: `.config -> sub`) but the tool reading `path` would find a
/// file there, nothing is removed through the link and the entry is [`Created::Left`]
/// (named, failing closed; attack pass 30 review).
fn remove_created(path: &Path) -> Created {
    let (Some(parent), Some(name)) = (path.parent(), path.file_name()) else {
        return Created::No;
    };
    let Ok(dir) = open_dir_strict(parent) else {
        // Absent only when the system says so: an unreadable parent (`chmod 000` by the
        // command) must not read as "still absent" (fails closed: named as left).
        return if gone(path) {
            Created::No
        } else {
            Created::Left
        };
    };
    let Ok(st) = fstatat(dir.as_fd(), name, nix::fcntl::AtFlags::AT_SYMLINK_NOFOLLOW) else {
        return Created::No;
    };
    if is_dir(&st) {
        return Created::Left;
    }
    match unlinkat(dir.as_fd(), name, UnlinkatFlags::NoRemoveDir) {
        Ok(()) | Err(Errno::ENOENT) => Created::Removed,
        Err(_) => Created::Left,
    }
}

/// Moves aside what is at `path` now when it is not the file `id` ([`FileIdentity`]) it was
/// before the run: renamed within its parent (opened without following a symlink) to
/// `<name>.cordon-replaced`, a name no hook manager reads. `Some(new path)` when moved.
fn move_aside_if_replaced(path: &Path, id: FileIdentity) -> Option<Aside> {
    // What cannot be looked at is not "unchanged" (a parent the command made unreadable):
    // left, and named; only a path that is gone is nothing to do.
    let Some((dir, name)) = open_parent(path) else {
        return (!gone(path)).then_some(Aside::Left);
    };
    match identity_at(dir.as_fd(), name) {
        Some(now) if now == id => return None,
        Some(_) => {}
        None => return (!gone(path)).then_some(Aside::Left),
    }
    // A free name (never replacing what is there: `RENAME_NOREPLACE`), then removal, and
    // only then "left" (attack pass 32, C5: a directory planted at the one name tried made
    // the rename fail, silently).
    if let Some(aside) = rename_aside(dir.as_fd(), name) {
        return Some(Aside::Moved(path.with_file_name(aside)));
    }
    let st = fstatat(dir.as_fd(), name, nix::fcntl::AtFlags::AT_SYMLINK_NOFOLLOW).ok()?;
    if !is_dir(&st) && unlinkat(dir.as_fd(), name, UnlinkatFlags::NoRemoveDir).is_ok() {
        return Some(Aside::Removed);
    }
    Some(Aside::Left)
}

/// Renames `name` in `dir` to `<name>.cordon-replaced`, or when that is taken to
/// `<name>.cordon-replaced.<16 random hex digits>` (up to 16 tries), never replacing what
/// is there (`RENAME_NOREPLACE`); the new name, or `None` when none was free or the rename
/// failed. Random, not counted: a command that made every counted name first kept what it
/// left in place (attack pass 36, M1).
fn rename_aside(dir: BorrowedFd<'_>, name: &OsStr) -> Option<std::ffi::OsString> {
    rename_to_free_name(dir, name, dir, 17, |i| {
        let mut aside = name.to_os_string();
        aside.push(".cordon-replaced");
        if i > 0 {
            aside.push(format!(".{:016x}", random_u64()?));
        }
        Some(aside)
    })
}

/// 64 random bits from the kernel (`getrandom(2)`); `None` when it has none to give.
fn random_u64() -> Option<u64> {
    let mut buf = [0u8; 8];
    // SAFETY: the kernel writes at most `buf.len()` bytes into `buf`, which lives
    // across the call.
    let n = unsafe { libc::getrandom(buf.as_mut_ptr().cast(), buf.len(), 0) };
    (n == 8).then(|| u64::from_ne_bytes(buf))
}

/// What [`move_aside_if_replaced`] did with a replaced file.
enum Aside {
    /// Renamed to this path.
    Moved(PathBuf),
    /// No free name: removed.
    Removed,
    /// Neither could be done (a directory, or an error): left, and named.
    Left,
}

/// After the run: removes from the git dir of `before` every entry that is not a regular
/// file or a directory and was not in `before` (same path, inode and target), and names
/// the in-progress state that runs code and is new or changed since `before`.
///
/// Errors: the git dir cannot be opened as a directory without following a symlink (it
/// was removed, or replaced by one: nothing is done through it).
///
/// A git dir renamed or moved since the census (with its project) is swept where it is
/// now ([`Census::relocated`]).
pub fn sweep(before: &Census) -> io::Result<Swept> {
    match before.relocated(&[]) {
        Some(moved) => sweep_within(&moved, BUDGET),
        None => sweep_within(before, BUDGET),
    }
}

/// [`sweep`] of every place the census's git dir may be after the run: where it is now
/// ([`Census::relocated`]) and, when another directory took its old path meanwhile (moved
/// aside and replaced), that one too, against the same census — a replacement made
/// during the run is no cleaner than the original. One result per place.
pub fn sweep_all(before: &Census) -> Vec<io::Result<Swept>> {
    let Some(moved) = before.relocated(&[]) else {
        return vec![sweep_within(before, BUDGET)];
    };
    let mut out = vec![sweep_within(&moved, BUDGET)];
    if open_dir_strict(&before.git_dir).is_ok() {
        out.push(sweep_within(before, BUDGET));
    }
    out
}

/// [`sweep`] with another budget than [`BUDGET`] (tests).
fn sweep_within(before: &Census, budget: usize) -> io::Result<Swept> {
    let listed = |f: &Foreign| {
        !before
            .foreign
            .iter()
            .any(|b| b.path == f.path && b.id == f.id && b.target == f.target && b.kind == f.kind)
    };
    let w = if before.unwalked {
        Walk::new(&before.git_dir, None, budget)
    } else {
        walk(&before.git_dir, Some(&listed), budget)?
    };
    let mut pending_code = Vec::new();
    for (rel, bytes) in &w.state {
        let was = before.state.iter().find(|(r, _)| r == rel).map(|(_, b)| b);
        if was == Some(bytes) {
            continue;
        }
        let Some(kind) = state_file(rel) else {
            continue;
        };
        let file = before.git_dir.join(rel);
        // Too large to read whole, and new or changed: judged as code (fails closed).
        if bytes
            .windows(TRUNCATED_STATE.len())
            .any(|w| w == TRUNCATED_STATE)
        {
            pending_code.push((
                file.clone(),
                format!(
                    "larger than {} MiB, so cordon did not read it whole: it may hold \
                     commands git runs; look at it before continuing the operation",
                    STATE_CAP >> 20
                ),
            ));
            continue;
        }
        let old = was
            .map(|b| cordon_policy::git_state::pending_code(kind, b))
            .unwrap_or_default();
        for what in cordon_policy::git_state::pending_code(kind, bytes) {
            // Once per file and finding (nu12 L1: two identical exec lines, two warnings).
            if !old.contains(&what) && !pending_code.iter().any(|(f, w)| *f == file && *w == what) {
                pending_code.push((file.clone(), what));
            }
        }
    }
    let (mut removed_configs, mut left_configs) = (Vec::new(), Vec::new());
    // A parent that was missing and is a symlink now: removed first (the link itself), so
    // that the config behind it is not read through it.
    for parent in &before.absent_parents {
        let Some((dir, name)) = open_parent(parent) else {
            continue;
        };
        let is_link = fstatat(dir.as_fd(), name, nix::fcntl::AtFlags::AT_SYMLINK_NOFOLLOW)
            .is_ok_and(|st| st.st_mode & libc::S_IFMT == libc::S_IFLNK);
        if is_link && unlinkat(dir.as_fd(), name, UnlinkatFlags::NoRemoveDir).is_ok() {
            let tools: Vec<&str> = before
                .absent
                .iter()
                .filter(|(p, _)| p.parent() == Some(parent.as_path()))
                .map(|(_, t)| t.as_str())
                .collect();
            removed_configs.push((
                parent.clone(),
                tools
                    .first()
                    .copied()
                    .unwrap_or("a hook manager")
                    .to_string(),
            ));
        }
    }
    for (path, tool) in &before.absent {
        match remove_created(path) {
            Created::No => {}
            Created::Removed => removed_configs.push((path.clone(), tool.clone())),
            Created::Left => left_configs.push((path.clone(), tool.clone())),
        }
    }
    let mut quarantined = Vec::new();
    let disarmed_worktrees = if before.unwalked {
        Vec::new()
    } else {
        disarm_new_worktree_admins(before, &mut quarantined)
    };
    let mut replaced_configs = Vec::new();
    for (p, tool, id) in &before.kept_same {
        match move_aside_if_replaced(p, *id) {
            None => {}
            Some(Aside::Moved(to)) => replaced_configs.push((p.clone(), Some(to), tool.clone())),
            Some(Aside::Removed) => replaced_configs.push((p.clone(), None, tool.clone())),
            Some(Aside::Left) => left_configs.push((p.clone(), tool.clone())),
        }
    }
    let mut removed = w.removed;
    let removed_total = removed.len();
    removed.truncate(REMOVED_LISTED);
    for f in &mut removed {
        f.relinked = before
            .foreign
            .iter()
            .any(|b| b.path == f.path && b.kind == f.kind && b.target == f.target);
    }
    let left_locks = if before.unwalked {
        Vec::new()
    } else {
        // Not the git dir's own `config.lock`: its own rules remove or name it
        // ([`clear_killed_runs_config_lock`], the helper after a run).
        w.locks
            .iter()
            .filter(|l| !before.locks.contains(l) && l.0 != Path::new("config.lock"))
            .map(|(rel, _)| before.git_dir.join(rel))
            .collect()
    };
    Ok(Swept {
        git_dir: before.git_dir.clone(),
        left_locks,
        removed_configs,
        left_configs,
        replaced_configs,
        removed,
        removed_total,
        not_removed: w.not_removed,
        pending_code,
        disarmed_worktrees,
        quarantined,
        incomplete: before.incomplete.clone().or(w.incomplete),
        error: None,
        earlier_run: false,
        config_lock: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::{symlink, PermissionsExt};

    /// Attack pass 40 D1 with a run started since: a fresh grant's `.git`/`.cordon` with
    /// anything in it is moved aside, but an empty directory there (a concurrent run's
    /// placeholder, bound read-only in its sandbox) stays where it is — moving it would
    /// carry that run's protection away.
    #[test]
    fn settling_a_fresh_grant_moves_a_repository_but_not_an_empty_placeholder() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path().canonicalize().unwrap().join("fresh");
        std::fs::create_dir_all(root.join(".git")).unwrap();
        std::fs::create_dir_all(root.join(".cordon")).unwrap();
        let swept = settle_fresh_roots(std::slice::from_ref(&root), &[], false);
        assert!(swept.is_empty(), "{swept:?}");
        assert!(root.join(".git").is_dir() && root.join(".cordon").is_dir());
        std::fs::write(root.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
        std::fs::write(root.join(".cordon/config.toml"), "").unwrap();
        let swept = settle_fresh_roots(std::slice::from_ref(&root), &[], false);
        assert_eq!(swept.len(), 1, "{swept:?}");
        assert_eq!(swept[0].quarantined.len(), 2, "{swept:?}");
        assert!(!root.join(".git").exists() && !root.join(".cordon").exists());
    }

    /// Attack pass 188 F1: the project renamed while its run ran (the run is stopped, its
    /// cover lost): the run's sweep finds its git dir where it is now, through the
    /// descriptor its census held, and removes the link the command planted there (the
    /// sweep failed with ENOENT, the link stayed and the next run took it for "there
    /// before"; the host's next `git commit` wrote through it). Twin: a link that was
    /// there before stays.
    #[test]
    fn a_git_dir_renamed_during_the_run_is_swept_where_it_is_now() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path().canonicalize().unwrap();
        let g = root.join("w4/.git");
        std::fs::create_dir_all(g.join("logs")).unwrap();
        symlink("/etc/hostname", g.join("before")).unwrap();
        let c = census(&g).unwrap();
        symlink("/etc/passwd", g.join("logs/HEAD")).unwrap();
        std::fs::rename(root.join("w4"), root.join("w4moved")).unwrap();
        let moved = root.join("w4moved/.git");
        let s = sweep(&c).unwrap();
        assert_eq!(s.git_dir, moved, "{s:?}");
        assert!(
            std::fs::symlink_metadata(moved.join("logs/HEAD")).is_err(),
            "the planted link stayed: {s:?}"
        );
        assert!(std::fs::symlink_metadata(moved.join("before")).is_ok());
        // Where it is, it is swept there, as before.
        assert!(c.relocated(&[]).is_some());
        let here = census(&moved).unwrap();
        assert!(here.relocated(&[]).is_none());
        // Moved aside and replaced by another directory at the old path: both are swept.
        let h = census(&moved).unwrap();
        std::fs::rename(&moved, root.join("w4moved/.git-aside")).unwrap();
        std::fs::create_dir_all(moved.join("refs")).unwrap();
        symlink("/etc/passwd", moved.join("refs/planted")).unwrap();
        symlink("/etc/passwd", root.join("w4moved/.git-aside/planted")).unwrap();
        let all: Vec<Swept> = sweep_all(&h).into_iter().map(Result::unwrap).collect();
        assert_eq!(all.len(), 2, "{all:?}");
        assert!(std::fs::symlink_metadata(moved.join("refs/planted")).is_err());
        assert!(std::fs::symlink_metadata(root.join("w4moved/.git-aside/planted")).is_err());
    }

    fn git_dir() -> (tempfile::TempDir, PathBuf) {
        let t = tempfile::tempdir().unwrap();
        let g = t.path().join(".git");
        for d in [
            "logs/refs/heads",
            "objects/ab",
            "objects/pack",
            "refs/heads",
            "hooks",
        ] {
            std::fs::create_dir_all(g.join(d)).unwrap();
        }
        std::fs::write(g.join("HEAD"), "ref: refs/heads/main\n").unwrap();
        std::fs::write(g.join("logs/HEAD"), "x\n").unwrap();
        (t, g)
    }

    /// attack34 E5/E6: in a linked-worktree admin dir the run made (a genuine one, named
    /// back by its worktree), a `modules/` and a `config.worktree` with a code key are moved
    /// aside. Twin: a `config.worktree` with only the sparse-checkout keys stays, and an
    /// admin dir that was there before is not touched.
    #[test]
    fn code_files_of_new_worktree_admin_dirs_are_set_aside() {
        let (t, g) = git_dir();
        let root = t.path().canonicalize().unwrap();
        let g = root.join(g.file_name().unwrap());
        let old = g.join("worktrees/old");
        std::fs::create_dir_all(old.join("modules/sub")).unwrap();
        let before = census(&g).unwrap();
        let mut admins = Vec::new();
        for (n, config) in [
            ("evil", "[core]\n\tfsmonitor = ../../x.sh\n"),
            ("sparse", "[core]\n\tsparseCheckout = true\n"),
        ] {
            let admin = g.join("worktrees").join(n);
            std::fs::create_dir_all(&admin).unwrap();
            let wt = root.join(n);
            std::fs::create_dir_all(&wt).unwrap();
            std::fs::write(wt.join(".git"), format!("gitdir: {}\n", admin.display())).unwrap();
            std::fs::write(
                admin.join("gitdir"),
                format!("{}\n", wt.join(".git").display()),
            )
            .unwrap();
            std::fs::write(admin.join("config.worktree"), config).unwrap();
            std::fs::write(admin.join("commondir"), "../..\n").unwrap();
            admins.push(admin);
        }
        std::fs::create_dir_all(admins[0].join("modules/sub/hooks")).unwrap();
        let swept = sweep(&Census::from_json(before.to_json()).unwrap()).unwrap();
        let mut set: Vec<_> = swept.quarantined.iter().map(|q| q.0.clone()).collect();
        set.sort();
        assert_eq!(
            set,
            [admins[0].join("config.worktree"), admins[0].join("modules")],
            "{swept:?}"
        );
        assert!(swept.quarantined.iter().all(|q| q.1.is_some()), "{swept:?}");
        assert!(!admins[0].join("config.worktree").exists());
        assert!(!admins[0].join("modules").exists());
        assert!(admins[0].join("modules.cordon-replaced/sub/hooks").is_dir());
        assert!(
            admins[1].join("config.worktree").is_file(),
            "sparse keys kept"
        );
        assert!(old.join("modules/sub").is_dir(), "an earlier admin dir");
        assert!(swept.disarmed_worktrees.is_empty(), "{swept:?}");
    }

    /// nu16 N1: an existing linked-worktree admin dir without `modules/` gets no placeholder
    /// (git refuses `git worktree remove` when the directory exists); after the run, the
    /// submodule git dirs a command made there are moved aside (attack pass 32, C1), and an
    /// empty `modules/` (what earlier versions left, or a command made) is removed. Twin:
    /// an admin dir whose `modules/` held submodule git dirs before keeps them.
    #[test]
    fn an_existing_admin_dirs_missing_modules_is_settled_after_the_run() {
        let (t, g) = git_dir();
        let root = t.path().canonicalize().unwrap();
        let g = root.join(g.file_name().unwrap());
        let [planted, emptied, real] =
            ["planted", "emptied", "real"].map(|n| g.join("worktrees").join(n));
        std::fs::create_dir_all(&planted).unwrap();
        std::fs::create_dir_all(emptied.join("modules")).unwrap();
        std::fs::create_dir_all(real.join("modules/sm")).unwrap();
        let before = Census::from_json(census(&g).unwrap().to_json()).unwrap();
        std::fs::create_dir_all(planted.join("modules/sub/hooks")).unwrap();
        let swept = sweep(&before).unwrap();
        let set: Vec<_> = swept.quarantined.iter().map(|q| q.0.clone()).collect();
        assert_eq!(set, [planted.join("modules")], "{swept:?}");
        assert!(planted.join("modules.cordon-replaced/sub/hooks").is_dir());
        assert!(!planted.join("modules").exists());
        assert!(!emptied.join("modules").exists(), "empty: removed");
        assert!(real.join("modules/sm").is_dir(), "there before: kept");
    }

    /// attack36 M2: the resolution saw `wt`'s `modules/` empty (no placeholder, not
    /// protected); an overlapping run filled it before this run's census. What the
    /// resolution protected decides, not the census's later look: it is settled after the
    /// run. Twin: one the resolution protected is kept. M1 too: every counted aside name
    /// made first does not keep it in place.
    #[test]
    fn the_resolutions_view_of_admin_dirs_decides_what_is_settled() {
        let (t, g) = git_dir();
        let root = t.path().canonicalize().unwrap();
        let g = root.join(g.file_name().unwrap());
        let [wt, kept] = ["wt", "kept"].map(|n| g.join("worktrees").join(n));
        std::fs::create_dir_all(wt.join("modules/sub/hooks")).unwrap();
        std::fs::create_dir_all(kept.join("modules/sm")).unwrap();
        for i in 0..16 {
            let aside = if i == 0 {
                "modules.cordon-replaced".to_string()
            } else {
                format!("modules.cordon-replaced.{i}")
            };
            std::fs::create_dir_all(wt.join(aside).join("x")).unwrap();
        }
        let mut before = census(&g).unwrap();
        before.adopt_protected_admins(Some(vec![("wt".into(), false), ("kept".into(), true)]));
        let before = Census::from_json(before.to_json()).unwrap();
        let swept = sweep(&before).unwrap();
        let set: Vec<_> = swept.quarantined.iter().map(|q| q.0.clone()).collect();
        assert_eq!(set, [wt.join("modules")], "{swept:?}");
        assert!(!wt.join("modules").exists(), "{swept:?}");
        let moved = swept.quarantined[0].1.clone().expect("moved aside");
        assert!(moved.join("sub/hooks").is_dir(), "{moved:?}");
        assert!(kept.join("modules/sm").is_dir(), "protected: kept");
    }

    /// attack36 A1: `worktrees/` read-only whole (`None`): nothing there is settled, and
    /// an admin dir the census listed is not taken for new.
    #[test]
    fn admin_dirs_protected_whole_are_not_settled() {
        let (t, g) = git_dir();
        let root = t.path().canonicalize().unwrap();
        let g = root.join(g.file_name().unwrap());
        let wt = g.join("worktrees/wt");
        std::fs::create_dir_all(&wt).unwrap();
        std::fs::write(wt.join("gitdir"), "/nowhere/.git\n").unwrap();
        let mut before = census(&g).unwrap();
        std::fs::create_dir_all(wt.join("modules/sm")).unwrap();
        before.adopt_protected_admins(None);
        let swept = sweep(&before).unwrap();
        assert!(swept.quarantined.is_empty(), "{swept:?}");
        assert!(wt.join("modules/sm").is_dir() && wt.join("gitdir").is_file());
    }

    /// attack38 B1/B2: a new admin dir's `commondir` is taken as git reads it (only a final
    /// CR/LF dropped) and must be what `git worktree add` writes: `" ../.."` (a directory
    /// named `" .."` for git) and a path through a symlink the command can re-point are
    /// moved out. Twins: `../..` with LF or CRLF stays.
    #[test]
    fn a_new_admin_dirs_commondir_must_be_gits_own_spelling() {
        let (t, g) = git_dir();
        let root = t.path().canonicalize().unwrap();
        let g = root.join(g.file_name().unwrap());
        std::fs::create_dir_all(g.join("worktrees")).unwrap();
        let before = census(&g).unwrap();
        symlink(&g, root.join("lnk")).unwrap();
        let rel_link = format!("../../../{}\n", "lnk");
        let cases = [
            ("space", " ../..\n", false),
            ("link", rel_link.as_str(), false),
            ("lf", "../..\n", true),
            ("crlf", "../..\r\n", true),
        ];
        for (n, c, _) in &cases {
            let a = g.join("worktrees").join(n);
            std::fs::create_dir_all(a.join(" ..")).unwrap();
            std::fs::write(a.join("commondir"), c).unwrap();
        }
        let swept = sweep(&before).unwrap();
        for (n, _, kept) in cases {
            let a = g.join("worktrees").join(n);
            assert_eq!(a.is_dir(), kept, "{n}: {swept:?}");
        }
    }

    /// attack37 A7: a new admin dir whose name is not UTF-8 is moved out of `worktrees/`
    /// under a readable name (later runs could not carry it and refused every command).
    #[test]
    fn a_new_admin_dir_named_in_bytes_is_moved_out() {
        let (t, g) = git_dir();
        let root = t.path().canonicalize().unwrap();
        let g = root.join(g.file_name().unwrap());
        std::fs::create_dir_all(g.join("worktrees")).unwrap();
        let before = census(&g).unwrap();
        let bad = g.join("worktrees").join(OsStr::from_bytes(b"\xff"));
        std::fs::create_dir_all(&bad).unwrap();
        std::fs::write(bad.join("commondir"), "../..\n").unwrap();
        let swept = sweep(&before).unwrap();
        assert_eq!(swept.quarantined.len(), 1, "{swept:?}");
        let to = swept.quarantined[0].1.clone().expect("moved");
        assert!(
            to.to_str().is_some_and(|s| s.contains("worktree-ff-")),
            "{to:?}"
        );
        assert!(to.join("commondir").is_file() && !bad.exists());
    }

    /// Attack pass 233 #1: the lock files a run leaves (new since the census, also in a
    /// stored census read back by a later run) are listed, never removed; one there before
    /// the run is not the run's, nor is a lock's name on a directory.
    #[test]
    fn lock_files_new_since_the_census_are_listed_not_removed() {
        let (_t, g) = git_dir();
        std::fs::create_dir_all(g.join("refs/heads")).unwrap();
        std::fs::write(g.join("packed-refs.lock"), "").unwrap();
        let before = census(&g).unwrap();
        let stored = Census::from_json(before.to_json()).unwrap();
        std::fs::write(g.join("index.lock"), "").unwrap();
        std::fs::write(g.join("refs/heads/main.lock"), "").unwrap();
        std::fs::create_dir(g.join("refs/heads/dir.lock")).unwrap();
        for c in [&before, &stored] {
            let s = sweep(c).unwrap();
            let mut left = s.left_locks.clone();
            left.sort();
            assert_eq!(
                left,
                vec![g.join("index.lock"), g.join("refs/heads/main.lock")],
                "{s:?}"
            );
            assert!(!s.is_empty());
        }
        assert!(g.join("index.lock").is_file() && g.join("refs/heads/main.lock").is_file());
    }

    /// attack34 E2: a parent of the git dir swapped for a symlink after the census (by
    /// another run) is not followed — nothing is removed in the directory the link leads
    /// to; the git dir itself is swept where it went (attack pass 188 F1). Twin: through
    /// the real parent, a link the run made is removed.
    #[test]
    fn a_git_dir_behind_a_swapped_parent_is_not_swept() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path().canonicalize().unwrap();
        let g = root.join("x/etc");
        std::fs::create_dir_all(g.join("refs")).unwrap();
        let before = census(&g).unwrap();
        // Elsewhere, a directory of the same name holding links (it stands for `/etc`).
        let victim = root.join("victim/etc");
        std::fs::create_dir_all(&victim).unwrap();
        symlink("/etc/hostname", victim.join("localtime")).unwrap();
        std::fs::rename(root.join("x"), root.join("x.real")).unwrap();
        symlink(root.join("victim"), root.join("x")).unwrap();
        let swept = sweep(&before);
        assert!(
            std::fs::symlink_metadata(victim.join("localtime")).is_ok(),
            "removed through the swapped parent: {swept:?}"
        );
        assert_eq!(
            swept.map(|s| s.git_dir).ok(),
            Some(root.join("x.real/etc")),
            "swept where the git dir is now"
        );
        // Twin: the real parent back, the run's link is removed.
        std::fs::remove_file(root.join("x")).unwrap();
        std::fs::rename(root.join("x.real"), root.join("x")).unwrap();
        symlink("/etc/hostname", g.join("refs/planted")).unwrap();
        let swept = sweep(&before).unwrap();
        assert_eq!(swept.removed.len(), 1, "{swept:?}");
        assert!(std::fs::symlink_metadata(g.join("refs/planted")).is_err());
    }

    /// attack28 F1: symlinks and a FIFO a run made in the git dir are removed after it —
    /// the symlink itself, never its target; one that was there before (a repo tool's
    /// layout) is kept. Twin: regular files and directories the run made stay.
    #[test]
    fn entries_a_run_made_that_lead_out_are_removed_and_earlier_ones_kept() {
        let (t, g) = git_dir();
        let outside = t.path().join("bashrc");
        std::fs::write(&outside, "# rc\n").unwrap();
        symlink("../../.repo/projects/p.git/rr-cache", g.join("rr-cache")).unwrap();
        let before = census(&g).unwrap();
        assert_eq!(before.foreign.len(), 1, "{:?}", before.foreign);
        assert!(before.complete());
        // The run:
        std::fs::remove_file(g.join("logs/HEAD")).unwrap();
        symlink(&outside, g.join("logs/HEAD")).unwrap();
        symlink(&outside, g.join("logs/refs/heads/main")).unwrap();
        nix::unistd::mkfifo(&g.join("COMMIT_EDITMSG"), Mode::from_bits_truncate(0o600)).unwrap();
        std::fs::write(g.join("MERGE_MSG"), "a regular file\n").unwrap();
        std::fs::create_dir(g.join("rebase-merge")).unwrap();
        let swept = sweep(&before).unwrap();
        let removed: Vec<_> = swept.removed.iter().map(|f| f.path.clone()).collect();
        assert_eq!(removed.len(), 3, "{swept:?}");
        for p in ["logs/HEAD", "logs/refs/heads/main", "COMMIT_EDITMSG"] {
            assert!(removed.contains(&g.join(p)), "{p}: {swept:?}");
            assert!(
                std::fs::symlink_metadata(g.join(p)).is_err(),
                "{p} still there"
            );
        }
        assert_eq!(std::fs::read_to_string(&outside).unwrap(), "# rc\n");
        assert!(
            std::fs::symlink_metadata(g.join("rr-cache")).is_ok(),
            "the earlier link"
        );
        assert!(g.join("MERGE_MSG").is_file() && g.join("rebase-merge").is_dir());
        assert!(swept.complete());
    }

    /// Attack pass 31, B1: padding the git dir cannot starve the subtrees the host's git
    /// writes through — regular files (a million hard links) are not counted, and `logs`,
    /// `refs` and `worktrees` are walked before other directories; a planted reflog link is
    /// removed although the walk runs out of budget in the padding (and says so).
    #[test]
    fn padding_the_git_dir_does_not_hide_a_planted_reflog_link() {
        let (t, g) = git_dir();
        let outside = t.path().join("bashrc");
        std::fs::write(&outside, "# rc\n").unwrap();
        let before = census(&g).unwrap();
        for i in 0..200 {
            std::fs::write(g.join(format!("pad-file-{i}")), "").unwrap();
        }
        for i in 0..50 {
            std::fs::create_dir_all(g.join(format!("pad{i}/a/b"))).unwrap();
        }
        std::fs::remove_file(g.join("logs/HEAD")).unwrap();
        symlink(&outside, g.join("logs/HEAD")).unwrap();
        symlink(&outside, g.join("logs/refs/heads/main")).unwrap();
        let swept = sweep_within(&before, 40).unwrap();
        for p in ["logs/HEAD", "logs/refs/heads/main"] {
            assert!(
                swept.removed.iter().any(|f| f.path == g.join(p)),
                "{p}: {swept:?}"
            );
        }
        assert!(
            swept.incomplete.is_some(),
            "the padding was not walked whole"
        );
    }

    /// Attack pass 33, D2: a kept-absent config's parent that was missing before the run
    /// and is a symlink after it (`.config -> d`, `d/lefthook-local.yml`) is removed — the
    /// link, not what it leads to. Twin: a parent that existed before is left alone.
    #[test]
    fn a_symlinked_parent_a_run_made_for_a_kept_absent_config_is_removed() {
        let (t, g) = git_dir();
        let before_dir = t.path().join("existing");
        std::fs::create_dir(&before_dir).unwrap();
        let mut before = census(&g).unwrap();
        before.absent = vec![
            (
                t.path().join(".config/lefthook-local.yml"),
                "lefthook".into(),
            ),
            (before_dir.join("lefthook-local.yml"), "lefthook".into()),
        ];
        before.note_absent_parents();
        let d = t.path().join("d");
        std::fs::create_dir(&d).unwrap();
        std::fs::write(d.join("lefthook-local.yml"), "pre-commit: {}\n").unwrap();
        symlink(&d, t.path().join(".config")).unwrap();
        let swept = sweep(&Census::from_json(before.to_json()).unwrap()).unwrap();
        assert!(
            std::fs::symlink_metadata(t.path().join(".config")).is_err(),
            "{swept:?}"
        );
        assert!(d.join("lefthook-local.yml").is_file(), "not followed");
        assert!(before_dir.is_dir());
        assert!(swept
            .removed_configs
            .iter()
            .any(|(p, _)| p == &t.path().join(".config")));
    }

    /// Attack pass 33, D1: a linked-worktree admin dir the run made whose `gitdir` names a
    /// `.git` file that does not name it back (the host's `git worktree repair` would write
    /// one there, outside) loses its `gitdir`. Twin: what `git worktree add` makes (the
    /// backlink agrees) is kept.
    #[test]
    fn a_planted_worktree_admin_dir_is_disarmed_and_a_genuine_one_kept() {
        let (t, g) = git_dir();
        let before = census(&g).unwrap();
        let evil = g.join("worktrees/evil");
        std::fs::create_dir_all(&evil).unwrap();
        std::fs::write(
            evil.join("gitdir"),
            t.path().join("outside/.git").to_str().unwrap(),
        )
        .unwrap();
        std::fs::write(evil.join("commondir"), "../..\n").unwrap();
        let good = g.join("worktrees/good");
        std::fs::create_dir_all(&good).unwrap();
        std::fs::write(good.join("commondir"), "../..\n").unwrap();
        std::fs::create_dir_all(t.path().join("good")).unwrap();
        let dotgit = t.path().join("good/.git");
        std::fs::write(&dotgit, format!("gitdir: {}\n", good.display())).unwrap();
        std::fs::write(good.join("gitdir"), format!("{}\n", dotgit.display())).unwrap();
        // One naming a FIFO: read without blocking (the sweep must not hang on it).
        let fifo = g.join("worktrees/fifo");
        std::fs::create_dir_all(&fifo).unwrap();
        nix::unistd::mkfifo(&t.path().join("pipe"), Mode::from_bits_truncate(0o600)).unwrap();
        std::fs::write(fifo.join("gitdir"), t.path().join("pipe").to_str().unwrap()).unwrap();
        std::fs::write(fifo.join("commondir"), "../..\n").unwrap();
        // attack37 A3: one whose commondir names another directory (its config and hooks),
        // or that has none (git takes it for a git dir of its own), is moved out of
        // `worktrees/` whole, with its gitdir genuine or not.
        let mut foreign = Vec::new();
        for (n, common) in [("foreign", Some("../../objects/info/zz\n")), ("bare", None)] {
            let a = g.join("worktrees").join(n);
            std::fs::create_dir_all(a.join("hooks")).unwrap();
            std::fs::write(a.join("gitdir"), format!("{}\n", dotgit.display())).unwrap();
            if let Some(c) = common {
                std::fs::write(a.join("commondir"), c).unwrap();
            }
            foreign.push(a);
        }
        let swept = sweep(&Census::from_json(before.to_json()).unwrap()).unwrap();
        let mut moved: Vec<_> = swept.quarantined.iter().map(|q| q.0.clone()).collect();
        moved.sort();
        assert_eq!(moved, [foreign[1].clone(), foreign[0].clone()], "{swept:?}");
        for q in &swept.quarantined {
            let to = q.1.clone().expect("moved");
            assert!(
                to.join("hooks").is_dir() && to.parent() == Some(g.as_path()),
                "{q:?}"
            );
            assert!(!q.0.exists());
        }
        let mut disarmed: Vec<_> = swept
            .disarmed_worktrees
            .iter()
            .map(|d| d.admin.clone())
            .collect();
        disarmed.sort();
        assert_eq!(disarmed, [evil.clone(), fifo.clone()], "{swept:?}");
        assert!(!evil.join("gitdir").exists());
        assert!(good.join("gitdir").is_file());
    }

    /// Attack pass 32, C3: symlinks a command planted to pad the git dir are removed and do
    /// not count against the sweep's budget, so a planted reflog link deeper in `logs/` is
    /// reached and removed too, and the sweep is whole.
    #[test]
    fn symlink_padding_does_not_use_up_the_sweep() {
        let (t, g) = git_dir();
        let outside = t.path().join("bashrc");
        std::fs::write(&outside, "# rc\n").unwrap();
        let before = census(&g).unwrap();
        std::fs::create_dir(g.join("logs/pad")).unwrap();
        for i in 0..1100 {
            symlink(&outside, g.join(format!("logs/pad/l{i}"))).unwrap();
        }
        symlink(&outside, g.join("logs/refs/heads/main")).unwrap();
        let swept = sweep_within(&before, 40).unwrap();
        assert!(std::fs::symlink_metadata(g.join("logs/refs/heads/main")).is_err());
        // Listed up to REMOVED_LISTED, counted whole.
        assert_eq!(swept.removed.len(), REMOVED_LISTED);
        assert_eq!(swept.removed_total, 1101);
        assert!(swept.complete(), "{}", swept.removed_total);
    }

    /// Attack pass 31, B2 / 32, C4, C5: a hook manager's config present before the run and
    /// another file after it (removed by another run and written again once the cover was
    /// gone), or the same inode changed through another link, is moved aside to a free name
    /// no manager reads (a directory planted at the first name does not stop it). Twin: an
    /// untouched config stays.
    #[test]
    fn a_config_replaced_or_relinked_during_the_run_is_moved_aside() {
        let (t, g) = git_dir();
        let replaced = t.path().join("lefthook-local.yml");
        let relinked = t.path().join("lefthook.yml");
        let kept = t.path().join(".pre-commit-config.yaml");
        for f in [&replaced, &relinked, &kept] {
            std::fs::write(f, "a: 1\n").unwrap();
        }
        let mut before = census(&g).unwrap();
        before.keep_same(vec![
            (replaced.clone(), "lefthook".into()),
            (relinked.clone(), "lefthook".into()),
            (kept.clone(), "pre-commit".into()),
            (t.path().join("gone.yml"), "lefthook".into()),
        ]);
        assert_eq!(before.kept_same.len(), 3, "a missing path is skipped");
        // Another name blocks the first free one (C5).
        std::fs::create_dir_all(t.path().join("lefthook-local.yml.cordon-replaced/x")).unwrap();
        std::fs::remove_file(&replaced).unwrap();
        std::fs::write(&replaced, "pre-commit: {evil: 1}\n").unwrap();
        // C4: a hard link made, the name removed, the same inode linked back.
        let stash = t.path().join("stash");
        std::fs::hard_link(&relinked, &stash).unwrap();
        std::fs::remove_file(&relinked).unwrap();
        std::fs::hard_link(&stash, &relinked).unwrap();
        std::fs::remove_file(&stash).unwrap();
        let stored = Census::from_json(before.to_json()).unwrap();
        let swept = sweep(&stored).unwrap();
        // The first name taken: a random one (attack pass 36, M1: counted names can all
        // be made first).
        let aside1 = swept.replaced_configs[0].1.clone().expect("moved");
        let aside1_name = aside1.file_name().unwrap().to_str().unwrap().to_string();
        let suffix = aside1_name
            .strip_prefix("lefthook-local.yml.cordon-replaced.")
            .unwrap_or_else(|| panic!("{aside1_name}"));
        assert!(
            suffix.len() == 16 && suffix.chars().all(|c| c.is_ascii_hexdigit()),
            "{aside1_name}"
        );
        let aside2 = t.path().join("lefthook.yml.cordon-replaced");
        assert_eq!(
            swept.replaced_configs,
            [
                (
                    replaced.clone(),
                    Some(aside1.clone()),
                    "lefthook".to_string()
                ),
                (
                    relinked.clone(),
                    Some(aside2.clone()),
                    "lefthook".to_string()
                )
            ]
        );
        assert!(!replaced.exists() && aside1.is_file());
        assert!(!relinked.exists() && aside2.is_file());
        assert!(kept.is_file(), "untouched: stays");
        assert!(!swept.is_empty());
    }

    /// nu13 LOW: a listed symlink the run hard-linked elsewhere changed identity (link
    /// count, change time): both names are removed (attack29 F3 needs that), and the
    /// listed one is marked re-linked, so the report does not say the command made it.
    #[test]
    fn a_listed_symlink_hard_linked_by_the_run_is_removed_as_relinked() {
        let (_t, g) = git_dir();
        symlink("../../.repo/projects/p.git/rr-cache", g.join("rr-cache")).unwrap();
        let before = census(&g).unwrap();
        std::fs::hard_link(g.join("rr-cache"), g.join("logs/rr")).unwrap();
        let swept = sweep(&before).unwrap();
        let by = |p: &str| swept.removed.iter().find(|f| f.path == g.join(p)).cloned();
        assert!(by("rr-cache").is_some_and(|f| f.relinked), "{swept:?}");
        assert!(by("logs/rr").is_some_and(|f| !f.relinked), "{swept:?}");
        assert_eq!(swept.removed.len(), 2, "{swept:?}");
    }

    /// A listed symlink retargeted by the run is a new entry: removed.
    #[test]
    fn a_listed_symlink_retargeted_is_removed() {
        let (t, g) = git_dir();
        symlink("../elsewhere", g.join("rr-cache")).unwrap();
        let before = census(&g).unwrap();
        std::fs::remove_file(g.join("rr-cache")).unwrap();
        symlink(t.path(), g.join("rr-cache")).unwrap();
        let swept = sweep(&before).unwrap();
        assert_eq!(swept.removed.len(), 1, "{swept:?}");
    }

    /// attack39 C1: a state file larger than cordon reads (an `exec` line after a megabyte
    /// of comments) is named as pending code, not judged on its first part; unchanged
    /// after the next run, it is not named again. Twin: a small one without code is not.
    #[test]
    fn a_state_file_too_large_to_read_whole_is_named() {
        let (_t, g) = git_dir();
        let before = census(&g).unwrap();
        std::fs::create_dir(g.join("rebase-merge")).unwrap();
        let mut todo = "#\n".repeat((STATE_CAP as usize) / 2 + 10);
        todo.push_str("exec sh evil\npick 1 a\n");
        std::fs::write(g.join("rebase-merge/git-rebase-todo"), &todo).unwrap();
        std::fs::write(g.join("rebase-merge/head-name"), "refs/heads/main\n").unwrap();
        let swept = sweep(&before).unwrap();
        assert_eq!(swept.pending_code.len(), 1, "{swept:?}");
        assert!(swept.pending_code[0].1.contains("did not read it whole"));
        let again = sweep(&census(&g).unwrap()).unwrap();
        assert!(again.pending_code.is_empty(), "{again:?}");
    }

    /// attack28 F4: a forged cherry-pick the run left is named; one that was there before
    /// the run, unchanged, is not.
    #[test]
    fn in_progress_state_that_runs_code_is_named_when_the_run_made_it() {
        let (_t, g) = git_dir();
        let before = census(&g).unwrap();
        std::fs::create_dir(g.join("sequencer")).unwrap();
        std::fs::write(
            g.join("sequencer/opts"),
            "[options]\n\tstrategy = x/../target/m\n",
        )
        .unwrap();
        std::fs::write(g.join("sequencer/todo"), "pick 1 a\nexec sh evil\n").unwrap();
        let swept = sweep(&before).unwrap();
        // The strategy, the exec line, and the commit still to apply (attack40 D3).
        assert_eq!(swept.pending_code.len(), 3, "{swept:?}");
        let again = sweep(&census(&g).unwrap()).unwrap();
        assert!(again.pending_code.is_empty(), "{again:?}");
    }

    /// A census stored and read back (a killed run's, finished by the next one) judges as
    /// the original: the earlier entry kept, the planted one removed.
    #[test]
    fn a_stored_census_judges_as_the_original() {
        let (t, g) = git_dir();
        symlink("../elsewhere", g.join("rr-cache")).unwrap();
        let before = Census::from_json(census(&g).unwrap().to_json()).unwrap();
        symlink(t.path(), g.join("FETCH_HEAD")).unwrap();
        let swept = sweep(&before).unwrap();
        assert_eq!(swept.removed.len(), 1, "{swept:?}");
        assert!(std::fs::symlink_metadata(g.join("rr-cache")).is_ok());
    }

    /// attack30 A6: a symlink far deeper than the old 32-level bound (a branch reflog
    /// `logs/refs/heads/d1/…/d40/x`) is removed; A2: a linked worktree's pending rebase
    /// (`worktrees/<name>/rebase-merge/`) is named like the main checkout's.
    #[test]
    fn deep_symlinks_and_a_worktrees_pending_rebase_are_found() {
        let (t, g) = git_dir();
        let before = census(&g).unwrap();
        let mut deep = g.join("logs/refs/heads");
        for i in 0..40 {
            deep.push(format!("d{i}"));
        }
        std::fs::create_dir_all(&deep).unwrap();
        symlink(t.path().join("victim"), deep.join("x")).unwrap();
        let rb = g.join("worktrees/wt/rebase-merge");
        std::fs::create_dir_all(&rb).unwrap();
        std::fs::write(rb.join("git-rebase-todo"), "exec touch /tmp/x\n").unwrap();
        let swept = sweep(&before).unwrap();
        assert!(swept.complete(), "{swept:?}");
        assert_eq!(swept.removed.len(), 1, "{swept:?}");
        assert!(std::fs::symlink_metadata(deep.join("x")).is_err());
        assert_eq!(swept.pending_code.len(), 1, "{swept:?}");
        assert!(swept.pending_code[0]
            .0
            .ends_with("worktrees/wt/rebase-merge/git-rebase-todo"));
    }

    /// A config that must stay absent, created behind a symlinked parent the run made
    /// (`.config -> sub`, then `sub/lefthook-local.yml`): not removed through the link,
    /// but named as left (it was reported as absent). Twin: behind a real directory it is
    /// removed.
    #[test]
    fn a_kept_absent_config_behind_a_symlinked_parent_is_named() {
        let (t, g) = git_dir();
        let root = t.path();
        let mut before = census(&g).unwrap();
        before.absent = vec![
            (root.join(".config/lefthook-local.yml"), "lefthook".into()),
            (root.join("lefthook-local.yml"), "lefthook".into()),
        ];
        std::fs::create_dir(root.join("sub")).unwrap();
        std::fs::write(root.join("sub/lefthook-local.yml"), "x").unwrap();
        symlink("sub", root.join(".config")).unwrap();
        std::fs::write(root.join("lefthook-local.yml"), "x").unwrap();
        let swept = sweep(&before).unwrap();
        assert_eq!(swept.left_configs.len(), 1, "{swept:?}");
        assert!(swept.left_configs[0]
            .0
            .ends_with(".config/lefthook-local.yml"));
        assert!(
            root.join("sub/lefthook-local.yml").is_file(),
            "not removed through the link"
        );
        assert_eq!(swept.removed_configs.len(), 1, "{swept:?}");
        assert!(!root.join("lefthook-local.yml").exists());
    }

    /// An unreadable directory in the git dir makes the census incomplete with a reason
    /// that names it and says what to do (it read "more than N entries" before).
    #[test]
    fn an_unreadable_directory_is_named_with_what_to_do() {
        if nix::unistd::geteuid().is_root() {
            return; // root reads a mode-000 directory anyway
        }
        let (_t, g) = git_dir();
        std::fs::set_permissions(g.join("refs/heads"), std::fs::Permissions::from_mode(0o000))
            .unwrap();
        let c = census(&g).unwrap();
        std::fs::set_permissions(g.join("refs/heads"), std::fs::Permissions::from_mode(0o755))
            .unwrap();
        let why = c.incomplete.unwrap();
        assert!(why.contains("refs/heads") && why.contains("chmod"), "{why}");
    }

    /// attack29 F9: a FIFO in place of a loose object is removed by the sweep, whatever
    /// the census (which does not read loose-object directories); the objects stay.
    #[test]
    fn a_fifo_among_loose_objects_is_removed() {
        let (_t, g) = git_dir();
        std::fs::write(g.join("objects/ab/cdef"), "blob").unwrap();
        nix::unistd::mkfifo(&g.join("objects/ab/0123"), Mode::from_bits_truncate(0o600)).unwrap();
        let before = census(&g).unwrap();
        assert!(before.foreign.is_empty(), "{:?}", before.foreign);
        let swept = sweep(&before).unwrap();
        assert_eq!(swept.removed.len(), 1, "{swept:?}");
        assert!(std::fs::symlink_metadata(g.join("objects/ab/0123")).is_err());
        assert!(g.join("objects/ab/cdef").is_file());
    }

    /// The git dir itself as a symlink is not walked through.
    #[test]
    fn a_git_dir_that_is_a_symlink_is_refused() {
        let (t, g) = git_dir();
        let l = t.path().join("link");
        symlink(&g, &l).unwrap();
        assert!(census(&l).is_err());
    }
}
