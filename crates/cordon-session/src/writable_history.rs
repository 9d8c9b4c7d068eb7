//! Where earlier sandboxed runs could write, and what they kept read-only there (attack
//! pass 156, H1).
//!
//! cordon trusts some files it reads: its configuration, rules and remembered hosts, its
//! state directory (session answers, the sweep records the next run carries out on the
//! host), and the `--config`/`--rules` files named on the command line. Each run protects
//! the ones *it* knows of (R-P3), but a run that names another place (`$XDG_CONFIG_HOME`,
//! `$XDG_STATE_HOME`, another `$HOME`, `--config FILE`) reads files that an earlier run,
//! which did not know of that place, may have written — in its workspace (marked by a
//! `.git` or not: an unmarked cwd is a workspace too) or under a `-w` grant. A planted
//! `default_profile = "danger-full-access"` then ran the next command unconfined; a forged
//! sweep record made cordon rename host repositories.
//!
//! So every sandboxed run records, before its command starts, its writable roots (the
//! profile's write entries and its copy-on-write cache layers) and the files and
//! directories it kept read-only, in `writable-roots` of cordon's default state directory
//! under `$HOME` and under the account's home (both protected from every run, whatever its
//! environment); a run whose roots cannot be recorded does not start. A trusted path is
//! refused ([`unprotected_writer`]) when a recorded run could write it without having
//! protected it. The records are JSON lines (`{"root": …, "protected": […]}`), one per
//! root (the protection every run with that root gave), pruned of roots that no longer
//! exist (a directory removed takes what was planted in it along), never capped; the file
//! is replaced whole by a rename under a lock file, so a reader needs no lock.
//!
//! A root is recorded with the directory it named (device, inode, birth time): renamed or
//! moved on the host — it or a directory above it — it is found under its new name when
//! a trusted path lies in it (new-user pass 164, problem 2: a config planted under a `-w`
//! grant was trusted once the grant's directory was renamed). A recorded directory no
//! longer at its path is kept as moved (the latest [`MOVED_KEPT`]; a removed one cannot be
//! told from a renamed one).
//!
//! Runs of cordon versions before this one left no records; `/tmp` itself is not recorded
//! (the namespace sandbox gives each command a private one; a Landlock-only run, rung 2,
//! writes the host's); paths are compared as spelled after canonicalization, so another
//! name for a root (a bind mount) is not known as it.

use cordon_sandbox::HostFs;
use serde::{Deserialize, Serialize};
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The file name, in cordon's default state directory.
const FILE: &str = "writable-roots";

/// One run's writable root and what it kept read-only beneath it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
struct Record {
    root: PathBuf,
    protected: Protected,
    /// The directory `root` named when it was last recorded (none when it did not exist
    /// yet, or in records of earlier versions): found again under another name after a
    /// rename ([`History::unprotected_writer`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    id: Option<FileId>,
}

/// A directory that was a writable root and no longer lies at its recorded path (renamed,
/// moved, or removed: which, cannot be told), with the path it had.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Moved {
    moved: FileId,
    from: PathBuf,
}

/// How many [`Moved`] directories the registry keeps, the latest (a directory removed is
/// indistinguishable from one renamed, and a harness that makes and removes a workspace
/// per task would grow the registry, read by every run, without end).
const MOVED_KEPT: usize = 256;

/// Which directory (or file) a path names, whatever it is called: device, inode and, where the
/// filesystem keeps them, birth time and inode generation (ext4 gives a new directory the
/// inode number of one just removed — seen here at once, `mkdir` after `rmdir`; these tell
/// the new directory from the old). Read without following a final symlink.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
struct FileId {
    dev: u64,
    ino: u64,
    /// Birth time, seconds and nanoseconds since the epoch (`statx` `STATX_BTIME`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    born: Option<(i64, u32)>,
    /// Inode generation (`FS_IOC_GETVERSION`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    generation: Option<u64>,
}

impl FileId {
    /// The directory or regular file at `p` (no final symlink followed; a `-w FILE` grant
    /// is a root too: attack pass 166, finding 1), if one is there.
    fn of(p: &Path) -> Option<FileId> {
        let m = std::fs::symlink_metadata(p)
            .ok()
            .filter(|m| m.is_dir() || m.is_file())?;
        Some(FileId::with(p, &m))
    }

    /// The directory at `p`, whose metadata (no symlink followed) is `m`.
    fn with(p: &Path, m: &std::fs::Metadata) -> FileId {
        use std::os::unix::fs::MetadataExt as _;
        let born = m
            .created()
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map(|d| (d.as_secs() as i64, d.subsec_nanos()));
        // A birth time is enough (and costs no open).
        #[cfg(target_os = "linux")]
        let generation = born
            .is_none()
            .then(|| cordon_sandbox::linux::inode_generation_at(p))
            .flatten();
        #[cfg(not(target_os = "linux"))]
        let generation = None;
        FileId {
            dev: m.dev(),
            ino: m.ino(),
            born,
            generation,
        }
    }
}

/// One line of a registry: a [`Record`] or a [`Moved`] directory, written as the one or the
/// other and read as one flat object (an untagged enum buffered every line and tried each
/// shape in turn: ~8M instructions for a registry of 900 lines, half of a run's client).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
enum Line {
    Root(Record),
    Moved(Moved),
}

/// Every field a [`Line`] may have; a record's protected paths as the text they are, parsed
/// only for the records a question needs ([`Protected`]).
#[derive(Deserialize)]
struct AnyLine<'a> {
    root: Option<PathBuf>,
    #[serde(borrow)]
    protected: Option<&'a serde_json::value::RawValue>,
    id: Option<FileId>,
    moved: Option<FileId>,
    from: Option<PathBuf>,
}

/// What the runs with a root kept read-only (the paths, or the registry's JSON text of
/// them, parsed when asked: a run asks about a few of the registry's roots, and the
/// protected lists are most of its bytes — every cache layer of every workspace is a root).
#[derive(Debug, Clone)]
enum Protected {
    Paths(Vec<PathBuf>),
    Text(Box<serde_json::value::RawValue>),
}

impl Protected {
    /// The paths; text that is not a list of paths protects nothing (fail closed: the root
    /// is then a writer of everything beneath it).
    fn paths(&self) -> std::borrow::Cow<'_, [PathBuf]> {
        match self {
            Protected::Paths(p) => std::borrow::Cow::Borrowed(p),
            Protected::Text(t) => {
                std::borrow::Cow::Owned(serde_json::from_str(t.get()).unwrap_or_default())
            }
        }
    }
}

impl PartialEq for Protected {
    fn eq(&self, other: &Protected) -> bool {
        self.paths() == other.paths()
    }
}

impl Eq for Protected {}

impl Serialize for Protected {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Protected::Paths(p) => p.serialize(s),
            Protected::Text(t) => t.serialize(s),
        }
    }
}

/// What a registry holds: its roots and its moved directories.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Registry {
    records: Vec<Record>,
    moved: Vec<Moved>,
}

/// The registries: `<home>/.local/state/cordon/writable-roots` for `$HOME` and the
/// account's home (from the user database), each once.
fn registries() -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    let homes = std::env::var_os("HOME")
        .map(PathBuf::from)
        .into_iter()
        .chain(cordon_sandbox::account_home())
        .filter(|h| h.is_absolute());
    for h in homes {
        let p = h.join(".local/state/cordon").join(FILE);
        if !out.contains(&p) {
            out.push(p);
        }
    }
    out
}

/// The records of the registry `path` (none when it does not exist), read as any small
/// host file is ([`cordon_sandbox::hostfs::read_small_file`]: no final symlink followed, no
/// FIFO or device opened).
///
/// Errors: a registry that exists and cannot be read — never taken for an empty one (fail
/// closed: a writer would drop every record, a reader would trust every place).
///
/// Parsed once per process while the file is unchanged (a run asks three times; a
/// registry of a few hundred roots took ~1 ms to parse each time): the records of a file
/// whose device, inode, size, modification and change times are those seen when it was
/// parsed. A writer replaces the file by a rename (a new inode), so what another run wrote
/// meanwhile is read.
fn read_records(path: &Path) -> Result<Arc<Registry>, String> {
    use std::os::unix::fs::MetadataExt as _;
    type Stamp = (u64, u64, u64, i64, i64, i64, i64);
    static PARSED: std::sync::Mutex<Vec<(PathBuf, Stamp, Arc<Registry>)>> =
        std::sync::Mutex::new(Vec::new());
    let stamp_of = || -> Option<Stamp> {
        std::fs::symlink_metadata(path)
            .ok()
            .filter(|m| m.is_file())
            .map(|m| {
                (
                    m.dev(),
                    m.ino(),
                    m.size(),
                    m.mtime(),
                    m.mtime_nsec(),
                    m.ctime(),
                    m.ctime_nsec(),
                )
            })
    };
    let stamp = stamp_of();
    let mut parsed = PARSED.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, _, reg)) = parsed
        .iter()
        .find(|(p, st, _)| p == path && Some(*st) == stamp)
    {
        return Ok(Arc::clone(reg));
    }
    let reg = match cordon_sandbox::hostfs::read_small_file(path, 64 * 1024 * 1024) {
        Ok(s) => Arc::new(parse(&s)),
        Err(cordon_policy::paths::ReadRefusal::Missing) => return Ok(Arc::default()),
        Err(e) => return Err(format!("{}: {e:?}", path.display())),
    };
    // Kept only when the file read is the one stamped (not replaced in between).
    if let Some(st) = stamp.filter(|st| stamp_of() == Some(*st)) {
        parsed.retain(|(p, _, _)| p != path);
        parsed.push((path.to_path_buf(), st, Arc::clone(&reg)));
    }
    Ok(reg)
}

fn parse(s: &str) -> Registry {
    let mut reg = Registry::default();
    for line in s
        .lines()
        .filter_map(|l| serde_json::from_str::<AnyLine>(l).ok())
    {
        match line {
            AnyLine {
                root: Some(root),
                protected,
                id,
                ..
            } => reg.records.push(Record {
                root,
                protected: protected.map_or(Protected::Paths(Vec::new()), |t| {
                    Protected::Text(t.to_owned())
                }),
                id,
            }),
            AnyLine {
                moved: Some(moved),
                from: Some(from),
                ..
            } => reg.moved.push(Moved { moved, from }),
            _ => {}
        }
    }
    reg
}

/// Records each of `roots` (a run's writable roots: absolute, canonical) with `protected`
/// (what it kept read-only, as spelled and canonical), in every registry.
///
/// Errors: a registry that exists (or should) and could not be brought up to date — its
/// lock held too long by another process ([`LOCK_WAIT`]; a sandboxed command cannot open
/// the write-only lock file), or an I/O failure. The caller does not run the command then: an
/// unrecorded root is one a later run would trust (fail closed).
pub(crate) fn record(roots: &[PathBuf], protected: &[PathBuf]) -> Result<(), String> {
    // `/tmp` itself is the sandbox's private one; what lies below it is the host's where a
    // run reaches it (a workspace under /tmp: attack pass 158, H3).
    let roots: Vec<&PathBuf> = roots
        .iter()
        .filter(|r| r.is_absolute() && r.as_path() != Path::new("/tmp"))
        .collect();
    if roots.is_empty() {
        return Ok(());
    }
    // Compared with canonical paths later: a protected path reached through a symlink
    // (stow-style `~/.config/cordon -> ../dotfiles/…`) is kept in both spellings (attack
    // pass 158, M3: the canonical one was not found, and every run was refused). Resolved
    // only when the records are not already what the spelled paths give (issue 12: ~230
    // `readlink` calls per run otherwise).
    let regs = registries();
    let roots: Vec<(&PathBuf, Option<FileId>)> =
        roots.into_iter().map(|r| (r, FileId::of(r))).collect();
    let settled = |p: &[PathBuf]| {
        regs.iter()
            .all(|reg| read_records(reg).is_ok_and(|records| settled(&records, &roots, p)))
    };
    if settled(&sorted(protected.to_vec())) {
        return Ok(());
    }
    let protected = sorted(
        protected
            .iter()
            .flat_map(|p| {
                [
                    p.clone(),
                    cordon_policy::paths::canonicalize_lenient(&HostFs, p),
                ]
            })
            .collect(),
    );
    for reg in regs {
        // Each root recorded by path already, with no more protected than now: only the
        // identities are not up to date, which is not worth refusing the run for where the
        // registry cannot be written (a cordon inside a sandbox, which sees the host's
        // directories through its own mounts); the recorded identities stay as they were.
        let by_path =
            read_records(&reg).is_ok_and(|records| settled_as(&records, &roots, &protected, false));
        record_in(&reg, &roots, &protected)
            .or_else(|e| if by_path { Ok(()) } else { Err(e) })
            .map_err(|e| {
                format!(
                    "cannot record this run's writable roots in {} ({e}); later runs would trust \
                 what it writes there",
                    reg.display()
                )
            })?;
    }
    Ok(())
}

fn sorted(mut v: Vec<PathBuf>) -> Vec<PathBuf> {
    v.sort();
    v.dedup();
    v
}

/// How long [`record`] waits for the registry's lock.
pub const LOCK_WAIT: std::time::Duration = std::time::Duration::from_secs(2);

/// Merges `roots` into `reg`: one record per root, whose `protected` list is what every
/// recorded run with that root protected (the intersection: a path is trusted there only
/// if no run could write it). Records of roots that no longer exist are dropped (a root of
/// this run is kept: `-w` of a missing directory makes it later, attack pass 158, H2); no
/// record of an existing root is ever dropped (H1: a cap evicted the one that mattered).
/// Written to a new file renamed over the old one, so a reader sees one or the other,
/// never a half-written one (H4); writers take `writable-roots.lock` beside it, without
/// blocking for longer than [`LOCK_WAIT`].
///
/// A recorded root whose path no longer names the directory recorded (renamed, moved or
/// removed) leaves that directory among the registry's moved ones ([`MOVED_KEPT`]): what a
/// run wrote in it is found under its new name too.
fn record_in(
    reg: &Path,
    roots: &[(&PathBuf, Option<FileId>)],
    protected: &[PathBuf],
) -> std::io::Result<()> {
    let dir = reg
        .parent()
        .ok_or_else(|| std::io::Error::other("no directory"))?;
    std::fs::create_dir_all(dir)?;
    // Nothing new: no lock, no write (the launch path pays one read).
    let records = read_records(reg).map_err(std::io::Error::other)?;
    if settled(&records, roots, protected) {
        return Ok(());
    }
    // Write-only (mode 0200, opened for writing): a sandboxed command sees the state
    // directory read-only, so it cannot open the lock file at all — and so cannot hold
    // its lock (attack pass 166, finding 3: a command that took a shared `flock` on the
    // readable lock file refused every new run that had a root to record, for as long as
    // it ran). A lock file an earlier cordon made readable is made write-only first.
    let lock = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .mode(0o200)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(dir.join(format!("{FILE}.lock")))?;
    {
        use std::os::unix::fs::PermissionsExt as _;
        let m = lock.metadata()?;
        if !m.is_file() {
            return Err(std::io::Error::other("its lock is not a regular file"));
        }
        if m.permissions().mode() & 0o7777 != 0o200 {
            lock.set_permissions(std::fs::Permissions::from_mode(0o200))?;
        }
    }
    let deadline = std::time::Instant::now() + LOCK_WAIT;
    let mut lock = Some(lock);
    let held = loop {
        match nix::fcntl::Flock::lock(
            lock.take().expect("lock file"),
            nix::fcntl::FlockArg::LockExclusiveNonblock,
        ) {
            Ok(l) => break l,
            Err((f, nix::errno::Errno::EWOULDBLOCK)) if std::time::Instant::now() < deadline => {
                lock = Some(f);
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            Err((_, e)) => {
                return Err(std::io::Error::other(format!(
                    "its lock is held by another process ({e})"
                )))
            }
        }
    };
    // Again under the lock: another writer may have come first.
    let records = read_records(reg).map_err(std::io::Error::other)?;
    let mut merged = merge((*records).clone(), roots, protected);
    // Each recorded directory still where it was recorded; one that is not is moved.
    let Registry {
        records: all,
        moved,
    } = &mut merged;
    let mut followed: Vec<Record> = Vec::new();
    all.retain_mut(|r| {
        let now = FileId::of(&r.root);
        if let Some(was) = r.id.filter(|was| Some(*was) != now) {
            // Renamed within its directory (`mv ws ws.bak`, the common rename): the record
            // follows it by path (and identity), which no run's removed roots can push out
            // of the moved list (attack pass 167, finding 2); anything else is moved.
            let beside = renamed_beside(&r.root, was);
            if beside.is_none() {
                moved.push(Moved {
                    moved: was,
                    from: r.root.clone(),
                });
            }
            if let Some(to) = beside {
                let translate = |p: &PathBuf| match p.strip_prefix(&r.root) {
                    Ok(rest) if rest.as_os_str().is_empty() => to.clone(),
                    Ok(rest) => to.join(rest),
                    Err(_) => p.clone(),
                };
                followed.push(Record {
                    root: to.clone(),
                    protected: Protected::Paths(
                        r.protected.paths().iter().map(translate).collect(),
                    ),
                    id: Some(was),
                });
            }
        }
        r.id = now;
        roots.iter().any(|(root, _)| *root == &r.root) || r.root.exists()
    });
    for f in followed {
        match all.iter_mut().find(|r| r.root == f.root) {
            // Both: what both protected.
            Some(r) => {
                let theirs = f.protected.paths();
                let kept: Vec<PathBuf> = r
                    .protected
                    .paths()
                    .iter()
                    .filter(|p| theirs.contains(p))
                    .cloned()
                    .collect();
                r.protected = Protected::Paths(kept);
            }
            None => all.push(f),
        }
    }
    // A root inside another recorded root that protects no more than it adds nothing: every
    // path it answers "could write" for, the outer one does too (issue 12: records of the
    // per-workspace layer directories, from before they were one root, were hundreds of
    // lines read by every run). This run's own roots stay, so the next run finds them.
    let outer: Vec<(PathBuf, Vec<PathBuf>)> = all
        .iter()
        .map(|r| (r.root.clone(), r.protected.paths().into_owned()))
        .collect();
    all.retain(|r| {
        roots.iter().any(|(root, _)| *root == &r.root)
            || !outer.iter().any(|(o, op)| {
                o != &r.root && cordon_policy::paths::within(&r.root, o) && {
                    let rp = r.protected.paths();
                    op.iter().all(|p| rp.contains(p))
                }
            })
    });
    let excess = moved.len().saturating_sub(MOVED_KEPT);
    moved.drain(..excess);
    if merged != *records {
        let lines = merged
            .records
            .iter()
            .cloned()
            .map(Line::Root)
            .chain(merged.moved.iter().cloned().map(Line::Moved));
        let text: String = lines
            .filter_map(|l| serde_json::to_string(&l).ok())
            .map(|l| l + "\n")
            .collect();
        // A new file renamed over the old one (`write_private`: no symlink followed).
        crate::session::write_private(reg, text.as_bytes())?;
    }
    drop(held);
    Ok(())
}

/// Whether [`merge`] would leave `reg` as it is: each of `roots` recorded, naming the same
/// directory, with nothing protected that `protected` does not hold. Only those roots'
/// protected lists are parsed.
fn settled(reg: &Registry, roots: &[(&PathBuf, Option<FileId>)], protected: &[PathBuf]) -> bool {
    settled_as(reg, roots, protected, true)
}

/// [`settled`], the directories' identities compared only when `ids`.
fn settled_as(
    reg: &Registry,
    roots: &[(&PathBuf, Option<FileId>)],
    protected: &[PathBuf],
    ids: bool,
) -> bool {
    roots.iter().all(|(root, id)| {
        reg.records.iter().any(|r| {
            &r.root == *root
                && (!ids || r.id == *id)
                && r.protected.paths().iter().all(|p| protected.contains(p))
        })
    })
}

/// How many entries of a vanished root's directory [`renamed_beside`] looks at.
const BESIDE_SCAN: usize = 4096;

/// The entry of `root`'s directory that is the recorded `was` (a rename within that
/// directory), looked for among its first [`BESIDE_SCAN`] entries, no symlink followed.
fn renamed_beside(root: &Path, was: FileId) -> Option<PathBuf> {
    use std::os::unix::fs::DirEntryExt as _;
    let dir = root.parent()?;
    std::fs::read_dir(dir)
        .ok()?
        .take(BESIDE_SCAN)
        .filter_map(Result::ok)
        .filter(|e| e.ino() == was.ino)
        .map(|e| e.path())
        .find(|p| FileId::of(p) == Some(was))
}

/// `reg` with `roots` (each with the directory it names now) merged in ([`record_in`]);
/// a root that names another directory than recorded leaves the recorded one moved.
fn merge(
    mut reg: Registry,
    roots: &[(&PathBuf, Option<FileId>)],
    protected: &[PathBuf],
) -> Registry {
    for (root, id) in roots {
        match reg.records.iter_mut().find(|r| &r.root == *root) {
            Some(r) => {
                let mut kept = r.protected.paths().into_owned();
                kept.retain(|p| protected.contains(p));
                r.protected = Protected::Paths(kept);
                if let Some(was) = r.id.filter(|was| Some(*was) != *id) {
                    reg.moved.push(Moved {
                        moved: was,
                        from: r.root.clone(),
                    });
                }
                r.id = *id;
            }
            None => reg.records.push(Record {
                root: (*root).clone(),
                protected: Protected::Paths(protected.to_vec()),
                id: *id,
            }),
        }
    }
    reg
}

/// The writable root of a recorded run that could write `path` (absolute, canonical as far
/// as it exists) without having kept it read-only, if any.
pub fn unprotected_writer(path: &Path) -> Option<PathBuf> {
    History::load().unprotected_writer(path)
}

/// Tells `req` where earlier sandboxed runs could write ([`History::roots`],
/// [`History::identities`], from one read of the registries): a write grant through a
/// symlink there is dropped (R-P2). `run`, `explain`, `context`, `status` and the servers
/// all ask it, so they agree. A registry that cannot be read adds nothing here: a run is
/// refused for it ([`crate::trust::own_dirs_refusal`]).
pub fn tell(req: &mut cordon_sandbox::CommandRequest) {
    let h = History::load();
    req.earlier_roots = h.roots();
    req.earlier_identities = h.identities();
}

/// The records of every registry, read once for several questions.
#[derive(Debug, Default)]
pub struct History {
    /// Each registry read (shared with the per-process parse, [`read_records`]).
    registries: Vec<Arc<Registry>>,
    /// A registry that exists and could not be read: every place counts as written then.
    unreadable: Option<(PathBuf, String)>,
}

impl History {
    /// The writable roots recorded, as recorded (canonical), each once, in no particular
    /// order (a sort compares paths component by component: ~4M instructions for this
    /// machine's few hundred roots).
    fn roots(&self) -> Vec<PathBuf> {
        let mut seen = std::collections::HashSet::new();
        self.registries
            .iter()
            .flat_map(|reg| reg.records.iter().map(|r| r.root.clone()))
            .filter(|r| seen.insert(r.as_os_str().as_encoded_bytes().to_vec()))
            .collect()
    }

    /// The identities recorded — of the roots, and of the roots no longer at their paths —
    /// as [`cordon_policy::paths::FileIdentity`] (a birth time unknown is `(0, 0)`), each
    /// once.
    fn identities(&self) -> Vec<cordon_policy::paths::FileIdentity> {
        let mut out: Vec<cordon_policy::paths::FileIdentity> = self
            .registries
            .iter()
            .flat_map(|reg| {
                reg.records
                    .iter()
                    .filter_map(|r| r.id)
                    .chain(reg.moved.iter().map(|m| m.moved))
            })
            .map(|id| {
                let (s, n) = id.born.unwrap_or((0, 0));
                (id.dev, id.ino, s, n)
            })
            .collect();
        out.sort_unstable();
        out.dedup();
        out
    }

    /// Reads every registry (a missing one adds nothing; one that cannot be read is kept
    /// as such, [`History::unreadable`]).
    pub fn load() -> History {
        let mut h = History::default();
        for reg in registries() {
            match read_records(&reg) {
                Ok(r) => h.registries.push(r),
                Err(why) => h.unreadable = Some((reg, why)),
            }
        }
        h
    }

    /// The registry that could not be read and why, if any: the caller refuses what it
    /// would have trusted, naming it.
    pub fn unreadable(&self) -> Option<&(PathBuf, String)> {
        self.unreadable.as_ref()
    }

    /// [`unprotected_writer`] among these records.
    /// A registry that could not be read answers for every path (its own path is given).
    pub fn unprotected_writer(&self, path: &Path) -> Option<PathBuf> {
        if let Some((reg, _)) = &self.unreadable {
            return Some(reg.clone());
        }
        self.registries.iter().find_map(|reg| writer_in(reg, path))
    }
}

/// [`unprotected_writer`] among `reg`: a root that holds `path` by name, or a recorded
/// directory that holds it under another name (renamed or moved since, it and what a run
/// wrote in it: attack/new-user pass 164, problem 2). The directories above `path` are
/// looked at as they are now (no symlink followed); a root found renamed is judged by what
/// it protected under its recorded name, a moved one as protecting nothing.
fn writer_in(reg: &Registry, path: &Path) -> Option<PathBuf> {
    let unprotected = |r: &Record, as_recorded: &Path| {
        !r.protected
            .paths()
            .iter()
            .any(|p| as_recorded.starts_with(p))
    };
    // Byte-wise, as `Path::starts_with` answers (issue 12: hundreds of roots per question).
    let under = cordon_policy::paths::Within::new(path);
    if let Some(r) = reg
        .records
        .iter()
        .find(|r| under.of(&r.root) && unprotected(r, path))
    {
        return Some(r.root.clone());
    }
    if reg.records.iter().all(|r| r.id.is_none()) && reg.moved.is_empty() {
        return None;
    }
    use std::os::unix::fs::MetadataExt as _;
    let known = |dev: u64, ino: u64| {
        reg.records
            .iter()
            .filter_map(|r| r.id)
            .chain(reg.moved.iter().map(|m| m.moved))
            .any(|id| id.dev == dev && id.ino == ino)
    };
    for dir in path.ancestors().filter(|a| a.parent().is_some()) {
        // The device and inode first (one `statx`); the rest only for a known pair.
        let Some(m) = std::fs::symlink_metadata(dir)
            .ok()
            .filter(|m| (m.is_dir() || m.is_file()) && known(m.dev(), m.ino()))
        else {
            continue;
        };
        let id = FileId::with(dir, &m);
        let renamed = reg.records.iter().find(|r| {
            r.id == Some(id) && r.root != dir && {
                let rest = path.strip_prefix(dir).unwrap_or(Path::new(""));
                unprotected(r, &r.root.join(rest))
            }
        });
        if renamed.is_some() || reg.moved.iter().any(|m| m.moved == id) {
            return Some(dir.to_path_buf());
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A root that holds the path, without the path among what it protected, is a writer;
    /// a root that protected it (or a directory above it) is not, nor one beside it.
    #[test]
    fn records_say_who_could_write_a_path() {
        let recs = parse(
            "{\"root\":\"/w/p\",\"protected\":[\"/w/p/cfg/cordon\"]}\n\
             not json\n\
             {\"root\":\"/w/q\"}\n",
        );
        let find = |p: &str| writer_in(&recs, Path::new(p));
        assert_eq!(find("/w/p/cfg/cordon/config.toml"), None);
        assert_eq!(find("/w/p/other/cordon"), Some(PathBuf::from("/w/p")));
        assert_eq!(find("/w/q/x"), Some(PathBuf::from("/w/q")));
        assert_eq!(find("/w/r/x"), None);
    }

    /// Attack pass 158: one record per root, protecting only what every run with that
    /// root protected; no record of a root is evicted.
    #[test]
    fn records_merge_per_root_and_keep_only_common_protection() {
        let a = PathBuf::from("/w");
        let b = PathBuf::from("/v");
        let p = |v: &[&str]| v.iter().map(PathBuf::from).collect::<Vec<_>>();
        let r = merge(Registry::default(), &[(&a, None)], &p(&["/h/c", "/h/s"]));
        let r = merge(r, &[(&a, None), (&b, None)], &p(&["/h/c", "/x"]));
        assert_eq!(
            r.records,
            vec![
                Record {
                    root: a.clone(),
                    protected: Protected::Paths(p(&["/h/c"])),
                    id: None,
                },
                Record {
                    root: b.clone(),
                    protected: Protected::Paths(p(&["/h/c", "/x"])),
                    id: None,
                },
            ]
        );
        assert_eq!(merge(r.clone(), &[(&a, None)], &p(&["/h/c"])), r);
    }

    /// `settled` answers what comparing a merge with the registry answers, parsing only the
    /// roots asked about; a root gone missing is moved once, not at every run.
    #[test]
    fn settled_is_a_merge_that_changes_nothing() {
        let t = tempfile::tempdir().unwrap();
        let a = t.path().join("a");
        let b = t.path().join("b");
        std::fs::create_dir(&a).unwrap();
        let p = |v: &[&str]| v.iter().map(PathBuf::from).collect::<Vec<_>>();
        let ida = FileId::of(&a);
        let text = format!(
            "{{\"root\":{:?},\"protected\":[\"/h/c\",\"/h/s\"],\"id\":{}}}\n\
             {{\"root\":\"/elsewhere\",\"protected\":\"not a list\"}}\n",
            a.display().to_string(),
            serde_json::to_string(&ida).unwrap()
        );
        let reg = parse(&text);
        for (roots, prot) in [
            (vec![(&a, ida)], p(&["/h/c", "/h/s"])),
            (vec![(&a, ida)], p(&["/h/c", "/h/s", "/x"])),
            (vec![(&a, ida)], p(&["/h/c"])),
            (vec![(&a, None)], p(&["/h/c", "/h/s"])),
            (vec![(&a, ida), (&b, None)], p(&["/h/c", "/h/s"])),
        ] {
            assert_eq!(
                settled(&reg, &roots, &prot),
                merge(reg.clone(), &roots, &prot) == reg,
                "{roots:?} {prot:?}"
            );
        }
        // Text that is not a list of paths protects nothing.
        assert_eq!(
            writer_in(&reg, Path::new("/elsewhere/x")),
            Some(PathBuf::from("/elsewhere"))
        );
        std::fs::remove_dir(&a).unwrap();
        let once = merge(reg.clone(), &[(&a, None)], &p(&["/h/c"]));
        assert_eq!(once.moved.len(), 1);
        assert!(settled(&once, &[(&a, None)], &p(&["/h/c"])));
        assert_eq!(merge(once.clone(), &[(&a, None)], &p(&["/h/c"])), once);
    }

    /// Attack pass 166, finding 1: a `-w FILE` root renamed on the host is found under its
    /// new name too (no identity was recorded for a file).
    #[test]
    fn a_renamed_file_root_is_found_under_its_new_name() {
        let t = tempfile::tempdir().unwrap();
        let f = t.path().join("single.toml");
        std::fs::write(&f, "x").unwrap();
        let reg = merge(Registry::default(), &[(&f, FileId::of(&f))], &[]);
        assert!(reg.records[0].id.is_some());
        let g = t.path().join("s2.toml");
        std::fs::rename(&f, &g).unwrap();
        assert_eq!(writer_in(&reg, &g), Some(g.clone()));
        std::fs::write(t.path().join("other.toml"), "x").unwrap();
        assert_eq!(writer_in(&reg, &t.path().join("other.toml")), None);
    }

    /// Attack pass 167, finding 2: a root renamed within its directory is followed by the
    /// record when it is next written (by path, with its protection carried over), so
    /// removed roots evicting moved ones cannot make it trusted again.
    #[test]
    fn a_root_renamed_beside_itself_is_followed_by_path() {
        let t = tempfile::tempdir().unwrap();
        let reg_file = t.path().join("state/writable-roots");
        let ws = t.path().join("ws");
        std::fs::create_dir_all(ws.join("kept")).unwrap();
        let other = t.path().join("other");
        std::fs::create_dir_all(&other).unwrap();
        let prot = vec![ws.join("kept")];
        record_in(&reg_file, &[(&ws, FileId::of(&ws))], &prot).unwrap();
        let bak = t.path().join("ws.bak");
        std::fs::rename(&ws, &bak).unwrap();
        // Another run's new root rewrites the record.
        record_in(&reg_file, &[(&other, FileId::of(&other))], &[]).unwrap();
        let reg = read_records(&reg_file).unwrap();
        let r = reg
            .records
            .iter()
            .find(|r| r.root == bak)
            .expect("followed");
        assert_eq!(r.protected.paths().into_owned(), vec![bak.join("kept")]);
        assert_eq!(writer_in(&reg, &bak.join("x")), Some(bak.clone()));
        assert_eq!(writer_in(&reg, &bak.join("kept/x")), None);
        // Not among the moved (which removed roots push out): known by path.
        assert!(reg.moved.is_empty(), "{:?}", reg.moved);
    }

    /// A root inside another recorded root that protects no more is dropped when the
    /// record is written (it answers nothing the outer one does not); one whose protection
    /// is narrower than the outer's is kept, and so is a root of the run writing.
    #[test]
    fn a_root_inside_a_root_that_protects_no_more_is_dropped() {
        let t = tempfile::tempdir().unwrap();
        let reg_file = t.path().join("state/writable-roots");
        let outer = t.path().join("o");
        let inner = outer.join("in");
        let narrow = outer.join("narrow");
        for d in [&inner, &narrow] {
            std::fs::create_dir_all(d).unwrap();
        }
        let x = PathBuf::from("/x");
        let y = PathBuf::from("/y");
        record_in(
            &reg_file,
            &[(&inner, FileId::of(&inner))],
            &[x.clone(), y.clone()],
        )
        .unwrap();
        record_in(&reg_file, &[(&narrow, FileId::of(&narrow))], &[]).unwrap();
        // The outer root, with this run's protection: /x.
        record_in(
            &reg_file,
            &[(&outer, FileId::of(&outer))],
            std::slice::from_ref(&x),
        )
        .unwrap();
        let other = t.path().join("other");
        std::fs::create_dir_all(&other).unwrap();
        record_in(&reg_file, &[(&other, FileId::of(&other))], &[]).unwrap();
        let reg = read_records(&reg_file).unwrap();
        let roots: Vec<&PathBuf> = reg.records.iter().map(|r| &r.root).collect();
        assert!(!roots.contains(&&inner), "{roots:?}");
        assert!(roots.contains(&&narrow), "{roots:?}");
        assert!(
            roots.contains(&&outer) && roots.contains(&&other),
            "{roots:?}"
        );
        assert_eq!(writer_in(&reg, &inner.join("f")), Some(outer.clone()));
    }

    /// A directory made where one was just removed is another directory, though ext4 gives
    /// it the same inode number (a moved root's record would otherwise refuse it).
    #[test]
    fn a_reused_inode_number_is_another_directory() {
        let t = tempfile::tempdir().unwrap();
        let d = t.path().join("d");
        std::fs::create_dir(&d).unwrap();
        let before = FileId::of(&d).unwrap();
        std::fs::remove_dir(&d).unwrap();
        std::fs::create_dir(&d).unwrap();
        let after = FileId::of(&d).unwrap();
        assert_ne!(before, after);
        assert_eq!(FileId::of(&d), Some(after));
        assert_eq!(FileId::of(&t.path().join("none")), None);
    }

    /// New-user pass 164, problem 2: a root renamed on the host (or a directory above it)
    /// is still a place a run could write, under its new name, judged by what it protected
    /// under its recorded one; once the registry is rewritten, the directory is kept as
    /// moved and judged as protecting nothing. Twin: a directory beside it is not, nor one
    /// made at the old path.
    #[test]
    fn a_renamed_root_is_found_under_its_new_name() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path().join("p/root");
        std::fs::create_dir_all(root.join("kept")).unwrap();
        std::fs::create_dir_all(t.path().join("beside")).unwrap();
        let protected = vec![root.join("kept")];
        let reg = merge(
            Registry::default(),
            &[(&root, FileId::of(&root))],
            &protected,
        );
        assert!(reg.records[0].id.is_some());
        let renamed = t.path().join("q/other");
        std::fs::create_dir_all(t.path().join("q")).unwrap();
        std::fs::rename(&root, &renamed).unwrap();
        // The parent renamed too: the root is found through its own identity.
        let parent = t.path().join("moved-parent");
        std::fs::rename(t.path().join("q"), &parent).unwrap();
        let now = parent.join("other");
        assert_eq!(
            writer_in(&reg, &now.join("cordon/config.toml")),
            Some(now.clone())
        );
        assert_eq!(writer_in(&reg, &now.join("kept/config.toml")), None);
        assert_eq!(writer_in(&reg, &t.path().join("beside/config.toml")), None);
        // The old path made anew: still judged by name (as every root is), while the
        // directory recorded goes on being judged where it lies now, as moved.
        std::fs::create_dir_all(&root).unwrap();
        let moved = merge(reg.clone(), &[(&root, FileId::of(&root))], &protected);
        assert_eq!(moved.moved.len(), 1);
        assert_eq!(moved.moved[0].from, root);
        assert_eq!(
            writer_in(&moved, &now.join("kept/config.toml")),
            Some(now.clone())
        );
        assert_eq!(writer_in(&moved, &root.join("x")), Some(root.clone()));
        assert_eq!(
            writer_in(&moved, &t.path().join("beside/config.toml")),
            None
        );
        // Lines round-trip through the registry's text.
        let text: String = moved
            .records
            .iter()
            .cloned()
            .map(Line::Root)
            .chain(moved.moved.iter().cloned().map(Line::Moved))
            .map(|l| serde_json::to_string(&l).unwrap() + "\n")
            .collect();
        assert_eq!(parse(&text), moved);
    }
}
