//! The `.git/config` broker (issue 11 §3, R-P3): safe git configuration edits.
//!
//! A repository's `.git/config` can make the host's next `git` run code, so it is
//! protected (read-only). Yet `git branch -M main`, `git remote add`, `git config
//! user.email` are everyday work. The broker gives the sandbox a writable *private copy*
//! and merges back only keys that cannot run code or redirect git:
//!
//! 1. **Copy** ([`stage`], a [`super::mounts::StepKind::GitConfig`] step): while the root
//!    is built, the host file is read once without following symlinks; a copy of it in the
//!    staging tmpfs (not the host file) is bound writable over the protected bind.
//! 2. **Rename** ([`handle`]): git writes `config.lock` and renames it onto `config`, which
//!    is a mount point (`EBUSY`). The command's `rename`, `renameat` and `renameat2` calls
//!    are seccomp user notifications answered by init (the unix-socket guard's
//!    supervisor, [`super::unix_guard`]). A rename whose target is a copy (same inode, looked
//!    up in the caller's view) and whose source is `config.lock` beside it is emulated: the
//!    lock's content is written into the copy, the lock unlinked, 0 returned. Every other
//!    rename continues in the kernel unchanged (`SECCOMP_USER_NOTIF_FLAG_CONTINUE`: the
//!    caller's own syscall with its own rights). Init has the command's Landlock domain
//!    and credentials, and only copies a file the caller can read into a file it can
//!    write: a racing thread that swaps the path gains nothing.
//! 3. **Report** ([`report`]): when the command ends, init writes each copy's starting
//!    and final text into a memory file the helper made before the clone.
//! 4. **Merge** ([`merge_reported`], host side, in the helper): under git's own lock
//!    protocol (`config.lock` created `O_CREAT | O_EXCL | O_NOFOLLOW` beside `config`,
//!    in a `.git` opened without following symlinks), the host file is re-read (a
//!    concurrent run's edits survive) and [`cordon_policy::gitconfig::merge::merge`] applies
//!    the allowed edits; every refused key is named in a `cordon: note:`. A `config.lock`
//!    that exists (git running on the host, or planted) is never followed or written: the
//!    merge waits up to a second, then gives up with a note.
//! 5. **Left locks** ([`after_run`], before the merge): a `config.lock` the command left in
//!    the host `.git` (a `git config` killed mid-write, a planted file) would jam every
//!    later config write, on the host and in the sandbox. The helper removes it only when
//!    it is provably the run's (created during the run, not the one there before, open by
//!    no process, not written for a while); a host git's lock is never touched.
//!
//! The merged and refused keys (each refused one with the `git config` command to run
//! outside cordon if meant) and every note are in `--json` (`git_config`) too.

use std::fs::File;
use std::io::{self, Read as _};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The largest `.git/config` (and `config.lock`) the broker copies: bytes.
pub const MAX_CONFIG_BYTES: usize = cordon_policy::paths::CONFIG_FILE_CAP as usize;

/// One private copy, held by init.
#[derive(Debug)]
pub struct Copy {
    /// The repository's config path (host path = sandbox path).
    pub path: PathBuf,
    /// The host file's text when the copy was made.
    original: Vec<u8>,
    /// The copy, open read-write (opened before Landlock).
    file: Mutex<File>,
    /// Device and inode of the copy: what a rename's target must be.
    dev: u64,
    ino: u64,
}

/// Step 1: reads the host file `src` (already opened `O_PATH`, no symlink followed, by the
/// caller; `None` = missing: the copy starts empty) through `reopen` (a path naming that
/// descriptor), writes the copy `name` in the directory `staging`, and returns it with a
/// read-write handle. The caller binds it over the path.
///
/// Errors: not a regular file, larger than [`MAX_CONFIG_BYTES`], or an I/O failure.
pub fn stage(
    path: &Path,
    src: Option<(&OwnedFd, &Path)>,
    staging: &Path,
    name: &str,
) -> io::Result<Copy> {
    let mut original = Vec::new();
    if let Some((fd, reopen)) = src {
        if super::sys::fstat(fd.as_raw_fd())?.st_mode & libc::S_IFMT != libc::S_IFREG {
            return Err(io::Error::other("not a regular file"));
        }
        File::open(reopen)?
            .take(MAX_CONFIG_BYTES as u64 + 1)
            .read_to_end(&mut original)?;
        if original.len() > MAX_CONFIG_BYTES {
            return Err(io::Error::other("larger than 1 MiB"));
        }
    }
    let copy_path = staging.join(name);
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .custom_flags_nofollow()
        .open(&copy_path)?;
    file.write_all_at(&original, 0)?;
    let st = super::sys::fstat(file.as_raw_fd())?;
    Ok(Copy {
        path: path.to_path_buf(),
        original,
        file: Mutex::new(file),
        dev: st.st_dev,
        ino: st.st_ino,
    })
}

trait NoFollow {
    fn custom_flags_nofollow(&mut self) -> &mut Self;
}

impl NoFollow for std::fs::OpenOptions {
    fn custom_flags_nofollow(&mut self) -> &mut Self {
        use std::os::unix::fs::OpenOptionsExt;
        self.mode(0o644)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
    }
}

/// Whether syscall number `nr` is one the broker looks at.
pub fn is_rename(nr: i32) -> bool {
    #[cfg(target_arch = "x86_64")]
    if nr as libc::c_long == libc::SYS_rename {
        return true;
    }
    nr as libc::c_long == libc::SYS_renameat || nr as libc::c_long == libc::SYS_renameat2
}

/// The syscall numbers [`is_rename`] accepts, for the seccomp program.
pub fn rename_syscalls() -> Vec<u32> {
    let mut v = vec![libc::SYS_renameat as u32, libc::SYS_renameat2 as u32];
    #[cfg(target_arch = "x86_64")]
    v.push(libc::SYS_rename as u32);
    v
}

/// Step 2: answers a rename notification. `Some(result)` = emulated (the syscall's value
/// or an errno); `None` = not a rename onto a copy: let the kernel run it.
/// `still_valid` re-checks the notification (`SECCOMP_IOCTL_NOTIF_ID_VALID`) after the
/// caller's memory and descriptors were read and before anything is written: a caller that
/// died meanwhile (its tid reused) is not acted for.
pub fn handle(
    n: &libc::seccomp_notif,
    copies: &[Copy],
    still_valid: impl Fn() -> bool,
) -> Option<Result<i64, i32>> {
    let a = n.data.args;
    let nr = n.data.nr as libc::c_long;
    #[cfg(target_arch = "x86_64")]
    let (odir, optr, ndir, nptr) = if nr == libc::SYS_rename {
        (libc::AT_FDCWD, a[0], libc::AT_FDCWD, a[1])
    } else {
        (a[0] as i32, a[1], a[2] as i32, a[3])
    };
    #[cfg(not(target_arch = "x86_64"))]
    let (odir, optr, ndir, nptr) = (a[0] as i32, a[1], a[2] as i32, a[3]);
    if nr == libc::SYS_renameat2 && a[4] as u32 != 0 {
        return None; // RENAME_EXCHANGE / NOREPLACE / WHITEOUT: not git's lock protocol
    }
    let tid = n.pid;
    let new = read_path(tid, nptr).ok()?;
    let (ndirfd, nname) = parent_in_caller_view(tid, ndir, &new).ok()?;
    let st = super::sys::fstatat_nofollow(ndirfd.as_raw_fd(), &cstr(&nname)?).ok()?;
    let copy = copies
        .iter()
        .find(|c| c.dev == st.st_dev as u64 && c.ino == st.st_ino as u64)?;
    // The target is a copy: from here on the answer is ours (the kernel would say EBUSY).
    let old = match read_path(tid, optr) {
        Ok(p) => p,
        Err(e) => return Some(Err(e)),
    };
    let (odirfd, oname) = match parent_in_caller_view(tid, odir, &old) {
        Ok(x) => x,
        Err(e) => return Some(Err(e)),
    };
    let same_dir = match (
        super::sys::fstat(odirfd.as_raw_fd()),
        super::sys::fstat(ndirfd.as_raw_fd()),
    ) {
        (Ok(a), Ok(b)) => a.st_dev == b.st_dev && a.st_ino == b.st_ino,
        _ => false,
    };
    let mut lock_name = nname.clone();
    lock_name.extend_from_slice(b".lock");
    if !same_dir || oname != lock_name {
        return Some(Err(libc::EBUSY)); // what the kernel says for a mount point
    }
    if !still_valid() {
        return Some(Err(libc::ENOENT)); // the caller is gone: nothing is written for it
    }
    Some(emulate(copy, &odirfd, &oname))
}

/// Copies `<dir>/<name>` (a regular file, not followed if a symlink) into the copy and
/// unlinks it.
fn emulate(copy: &Copy, dir: &OwnedFd, name: &[u8]) -> Result<i64, i32> {
    let c = cstr(name).ok_or(libc::EINVAL)?;
    // SAFETY: `c` is NUL-terminated; the flags need no mode.
    let fd = unsafe {
        libc::openat(
            dir.as_raw_fd(),
            c.as_ptr(),
            libc::O_RDONLY | libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC,
        )
    };
    if fd < 0 {
        return Err(errno());
    }
    // SAFETY: `fd` is a fresh descriptor we own.
    let src = unsafe { File::from_raw_fd(fd) };
    let st = super::sys::fstat(src.as_raw_fd()).map_err(|_| libc::EIO)?;
    if st.st_mode & libc::S_IFMT != libc::S_IFREG {
        return Err(libc::EBUSY);
    }
    let mut text = Vec::new();
    (&src)
        .take(MAX_CONFIG_BYTES as u64 + 1)
        .read_to_end(&mut text)
        .map_err(|e| e.raw_os_error().unwrap_or(libc::EIO))?;
    if text.len() > MAX_CONFIG_BYTES {
        return Err(libc::EFBIG);
    }
    {
        let f = copy.file.lock().map_err(|_| libc::EIO)?;
        // Write, then cut to length: a failed write leaves the old text (plus at most a
        // partial overwrite that git then fails on), never an empty copy that the merge
        // would read as "every key removed".
        f.write_all_at(&text, 0)
            .map_err(|e| e.raw_os_error().unwrap_or(libc::EIO))?;
        f.set_len(text.len() as u64)
            .map_err(|e| e.raw_os_error().unwrap_or(libc::EIO))?;
    }
    // SAFETY: `c` is NUL-terminated; unlinkat takes no other memory.
    if unsafe { libc::unlinkat(dir.as_raw_fd(), c.as_ptr(), 0) } < 0 {
        return Err(errno());
    }
    Ok(0)
}

fn errno() -> i32 {
    io::Error::last_os_error()
        .raw_os_error()
        .unwrap_or(libc::EIO)
}

fn cstr(b: &[u8]) -> Option<std::ffi::CString> {
    std::ffi::CString::new(b.to_vec()).ok()
}

/// Reads a NUL-terminated path (at most `PATH_MAX` bytes) from the caller's memory, page
/// by page so a string near the end of a mapping is still read.
fn read_path(tid: u32, ptr: u64) -> Result<Vec<u8>, i32> {
    let mem = File::open(format!("/proc/{tid}/mem")).map_err(|_| libc::EPERM)?;
    let mut out = Vec::new();
    let mut at = ptr;
    while out.len() < libc::PATH_MAX as usize {
        let room = (4096 - (at % 4096)) as usize;
        let mut buf = vec![0u8; room];
        let n = mem.read_at(&mut buf, at).map_err(|_| libc::EFAULT)?;
        if n == 0 {
            return Err(libc::EFAULT);
        }
        if let Some(end) = buf[..n].iter().position(|b| *b == 0) {
            out.extend_from_slice(&buf[..end]);
            return if out.is_empty() {
                Err(libc::ENOENT)
            } else {
                Ok(out)
            };
        }
        out.extend_from_slice(&buf[..n]);
        at += n as u64;
    }
    Err(libc::ENAMETOOLONG)
}

/// Opens (`O_PATH | O_DIRECTORY`) the parent directory of `path` as the caller sees it
/// (relative to `dirfd` or its working directory, absolute against its root) and returns
/// it with the last component's name. Intermediate symlinks resolve as for the caller.
fn parent_in_caller_view(tid: u32, dirfd: i32, path: &[u8]) -> Result<(OwnedFd, Vec<u8>), i32> {
    let p = Path::new(std::ffi::OsStr::from_bytes(path));
    let name = p
        .file_name()
        .map(|n| n.as_bytes().to_vec())
        .ok_or(libc::EINVAL)?;
    let parent = p.parent().unwrap_or(Path::new(""));
    let base = if p.is_absolute() {
        PathBuf::from(format!("/proc/{tid}/root"))
    } else if dirfd == libc::AT_FDCWD {
        PathBuf::from(format!("/proc/{tid}/cwd"))
    } else {
        PathBuf::from(format!("/proc/{tid}/fd/{dirfd}"))
    };
    let full = base.join(parent.strip_prefix("/").unwrap_or(parent));
    let fd =
        super::sys::open_path(&full, true).map_err(|e| e.raw_os_error().unwrap_or(libc::ENOENT))?;
    Ok((fd, name))
}

/// What init reports per copy after the command ended.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub struct Reported {
    /// The repository's config path.
    pub path: PathBuf,
    /// Its text when the copy was made.
    pub original: Vec<u8>,
    /// The copy's text at the end (`None`: it could not be read, nothing is merged).
    pub edited: Option<Vec<u8>>,
}

/// A memory file (close-on-exec) the helper creates before the clone; init writes the
/// [`Reported`] copies into it ([`report`]), the helper reads them after init is gone.
///
/// Errors: `memfd_create` failed.
pub fn result_file() -> io::Result<OwnedFd> {
    // SAFETY: the name is NUL-terminated; the new descriptor is owned from here on.
    let fd = unsafe { libc::memfd_create(c"cordon-git-config".as_ptr(), libc::MFD_CLOEXEC) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fd` is a fresh descriptor we own.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Step 3 (init, after the command's tree is done): writes every copy's text into `out`.
pub fn report(copies: &[Copy], out: RawFd) {
    let list: Vec<Reported> = copies
        .iter()
        .map(|c| Reported {
            path: c.path.clone(),
            original: c.original.clone(),
            edited: c.file.lock().ok().and_then(|f| {
                let mut v = Vec::new();
                (&*f)
                    .take(MAX_CONFIG_BYTES as u64 + 1)
                    .read_to_end(&mut v)
                    .ok()
                    .filter(|_| v.len() <= MAX_CONFIG_BYTES)
                    .map(|_| v)
            }),
        })
        .collect();
    if let Ok(bytes) = serde_json::to_vec(&list) {
        // SAFETY: `out` is a descriptor we hold (the helper's memory file); the borrowed
        // File is never closed (ManuallyDrop).
        let f = std::mem::ManuallyDrop::new(unsafe { File::from_raw_fd(out) });
        let _ = f.write_all_at(&bytes, 0);
    }
}

/// What happened to one repository's `.git/config` after a run, as `--json` reports it
/// (`git_config`) and as the `cordon: note:` lines on stderr say it (`notes`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct MergeReport {
    /// The repository's config path.
    pub path: PathBuf,
    /// Keys whose new values were merged into the host file (`user.email`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub merged: Vec<String>,
    /// Keys the command changed that were not merged.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub refused: Vec<RefusedKey>,
    /// Whether a `config.lock` the command left behind was removed.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub lock_removed: bool,
    /// The lines printed as `cordon: note: …`, each saying what to do.
    pub notes: Vec<String>,
}

/// A key the merge refused.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct RefusedKey {
    /// The key (`core.fsmonitor`).
    pub key: String,
    /// Why (`can run code: …`).
    pub why: String,
    /// The command that makes the same change on the host, to run outside cordon if
    /// meant (`` `git config core.fsmonitor 'x'` ``).
    pub host_command: String,
}

impl MergeReport {
    fn new(path: &Path) -> MergeReport {
        MergeReport {
            path: path.to_path_buf(),
            merged: Vec::new(),
            refused: Vec::new(),
            lock_removed: false,
            notes: Vec::new(),
        }
    }
}

/// Steps 4 and 5 (the helper, host side, after init and with it every process of the
/// sandbox is gone, at `ended`): removes a `config.lock` the run left behind
/// ([`clear_left_lock`]), then merges what init reported in `file` into each host
/// `.git/config`. One report per config that had something to say.
pub fn after_run(
    watches: &[LockWatch],
    ended: std::time::SystemTime,
    file: Option<&OwnedFd>,
) -> Vec<MergeReport> {
    let mut out: Vec<MergeReport> = Vec::new();
    for w in watches {
        if let Some(note) = clear_left_lock(w, ended) {
            let mut r = MergeReport::new(&w.config);
            r.lock_removed = note.0;
            r.notes.push(note.1);
            out.push(r);
        }
    }
    for r in file.map(merge_reported).unwrap_or_default() {
        match out.iter_mut().find(|o| o.path == r.path) {
            Some(o) => {
                o.merged = r.merged;
                o.refused = r.refused;
                o.notes.extend(r.notes);
            }
            None => out.push(r),
        }
    }
    out
}

/// Step 4: merges what init reported in `file` into each host `.git/config`.
fn merge_reported(file: &OwnedFd) -> Vec<MergeReport> {
    let mut bytes = Vec::new();
    // SAFETY: the File borrows `file` and is never closed (ManuallyDrop).
    let f = std::mem::ManuallyDrop::new(unsafe { File::from_raw_fd(file.as_raw_fd()) });
    let mut at = 0u64;
    let mut buf = vec![0u8; 64 * 1024];
    while let Ok(n) = f.read_at(&mut buf, at) {
        if n == 0 || bytes.len() > 4 * MAX_CONFIG_BYTES {
            break;
        }
        bytes.extend_from_slice(&buf[..n]);
        at += n as u64;
    }
    if bytes.is_empty() {
        return Vec::new();
    }
    let list: Vec<Reported> = match serde_json::from_slice(&bytes) {
        Ok(l) => l,
        Err(e) => {
            let mut r = MergeReport::new(Path::new(""));
            r.notes.push(format!(
                "git config copies: report unreadable ({e}); nothing merged: make the \
                 edits again, outside cordon if they keep failing"
            ));
            return vec![r];
        }
    };
    let mut out = Vec::new();
    for r in list {
        let mut rep = MergeReport::new(&r.path);
        let Some(edited) = r.edited else {
            rep.notes.push(format!(
                "{}: the sandbox's copy could not be read back; nothing merged: make the \
                 edits again",
                r.path.display()
            ));
            out.push(rep);
            continue;
        };
        if edited == r.original {
            continue;
        }
        match merge_back(&r.path, &r.original, &edited) {
            Ok(o) => {
                if !o.merged.is_empty() {
                    rep.notes.push(format!(
                        "{}: merged back: {}",
                        r.path.display(),
                        o.merged.join(", ")
                    ));
                }
                rep.notes.extend(o.refusal_note(&r.path));
                rep.refused = o
                    .refused
                    .iter()
                    .zip(&o.commands)
                    .map(|((key, why), cmd)| RefusedKey {
                        key: key.clone(),
                        why: why.clone(),
                        host_command: cmd.trim_matches('`').to_string(),
                    })
                    .collect();
                rep.merged = o.merged;
            }
            Err(e) => rep.notes.push(format!(
                "{}: edits not merged back: {e}; make them again (outside cordon if it \
                 keeps failing)",
                r.path.display()
            )),
        }
        out.push(rep);
    }
    out
}

/// One repository's `config.lock` as it was before the run (issue 11: a lock the command
/// leaves behind, e.g. a `git config` killed mid-write or a planted file, jams every later
/// config write on the host and in the sandbox until removed).
pub struct LockWatch {
    /// The repository's config path.
    config: PathBuf,
    /// Its directory, opened without following symlinks before the run.
    dir: OwnedFd,
    /// Device and inode of a `config.lock` that existed before the run (never touched).
    before: Option<(u64, u64)>,
}

/// Before the clone: a [`LockWatch`] per [`super::mounts::StepKind::GitConfig`] step.
pub fn watch_locks(layout: &super::mounts::Layout) -> Vec<LockWatch> {
    layout
        .steps
        .iter()
        .filter(|s| s.kind == super::mounts::StepKind::GitConfig)
        .filter_map(|s| {
            let dir = super::sys::open_dir_nofollow(s.path.parent()?).ok()?;
            let before = super::sys::fstatat_nofollow(dir.as_raw_fd(), &lock_name(&s.path)?)
                .ok()
                .map(|st| (st.st_dev, st.st_ino));
            Some(LockWatch {
                config: s.path.clone(),
                dir,
                before,
            })
        })
        .collect()
}

fn lock_name(config: &Path) -> Option<std::ffi::CString> {
    let mut n = config.file_name()?.as_bytes().to_vec();
    n.extend_from_slice(b".lock");
    cstr(&n)
}

/// How long a lock's last write must lie in the past before it counts as abandoned: git
/// renames its lock within milliseconds of its last write.
const LOCK_SETTLE: std::time::Duration = std::time::Duration::from_millis(250);

/// Step 5: removes `config.lock` when it is provably the run's: it is not the one that
/// existed before, it was created (statx birth time, else change time) no later than
/// `ended` (the moment the sandbox's last process was gone), no process has it open (a
/// write lease is granted only then), and its last write is at least [`LOCK_SETTLE`] old
/// (a host git between writing and renaming its lock is waited out, then re-checked).
/// Everything through the directory opened before the run, nothing followed; the name is
/// removed only while it is still the file checked. `Some((removed, note))` when there was a
/// lock to speak of.
fn clear_left_lock(w: &LockWatch, ended: std::time::SystemTime) -> Option<(bool, String)> {
    let name = lock_name(&w.config)?;
    let lock_path = w.config.with_file_name(name.to_string_lossy().as_ref());
    let ended_ns = ended
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as i128)
        .unwrap_or(0);
    clear_lock_at(
        w.dir.as_raw_fd(),
        &name,
        &lock_path,
        w.before,
        None,
        (ended_ns, None),
        "the sandboxed command left behind (created during the run, open by no process)",
    )
}

/// How far a file's birth time may lie before the clock read just before it was made:
/// file times come from the kernel's coarse clock, a tick (at most 10 ms) behind.
const COARSE_CLOCK: i128 = 20_000_000;

/// Attack pass 212 #1: the `config.lock` a run whose cordon process was killed (so its
/// helper never ran [`after_run`]) left in the git dir `git_dir`, removed by the run that
/// finishes its sweep. `git_dir` is opened one component at a time, no symlink followed,
/// and must still be the directory the killed run's census saw (`identity`); the lock is
/// removed only when it is not the one there at the census (`before`), was created after
/// the census (`started_ns`, nanoseconds since the epoch, read before the census looked)
/// and before now, and — as after a normal run — is a regular file no process has open
/// and not written for [`LOCK_SETTLE`] (a host git's lock, held open for milliseconds, is
/// never touched). `ended_ns`: when the killed run's sandbox was gone at the latest, from
/// its record's heartbeat (attack pass 219 #3): a lock whose birth time (statx `btime`) is
/// later is the host's and left; where the filesystem keeps no birth time, or the end is
/// not known (a record of an older cordon), a lock made by hand on the host after the kill
/// is removed too (attack pass 213 #1), so the note says what was checked — a stale lock
/// — and does not claim the run made it. `Some((removed, note))` when there was a lock to
/// speak of.
pub(crate) fn clear_killed_runs_lock(
    git_dir: &Path,
    identity: Option<(u64, u64)>,
    before: Option<(u64, u64)>,
    started_ns: i128,
    ended_ns: Option<i128>,
) -> Option<(bool, String)> {
    let dir = super::sys::open_dir_nofollow(git_dir).ok()?;
    let st = super::sys::fstat(dir.as_raw_fd()).ok()?;
    if st.st_mode & libc::S_IFMT != libc::S_IFDIR || Some((st.st_dev, st.st_ino)) != identity {
        return None;
    }
    let name = c"config.lock";
    let lock_path = git_dir.join("config.lock");
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as i128)
        .unwrap_or(0);
    clear_lock_at(
        dir.as_raw_fd(),
        name,
        &lock_path,
        before,
        Some(started_ns - COARSE_CLOCK),
        (now, ended_ns),
        "made after an earlier sandboxed run began whose cordon process was killed before \
         it could look (no process has it open and it was not being written: a stale lock, \
         which git leaves only when killed, whoever made it)",
    )
}

/// Step 5's rule, for the lock `name` in the pinned directory `dir` (`lock_path` in
/// notes): removed when it is not `before`, was born no earlier than `born_after` (when
/// given) and no later than `ended.0` — nor, when the filesystem keeps a birth time (not
/// the change time standing in for it), than `ended.1` if given — is a regular file (a symlink born in that window is
/// removed too, following nothing), open by no process (a write lease is granted only
/// then), and not written for [`LOCK_SETTLE`]. `whose` completes the removal note.
fn clear_lock_at(
    dir: RawFd,
    name: &std::ffi::CStr,
    lock_path: &Path,
    before: Option<(u64, u64)>,
    born_after: Option<i128>,
    ended: (i128, Option<i128>),
    whose: &str,
) -> Option<(bool, String)> {
    let (ended_ns, ended_if_born_known) = ended;
    let st = super::sys::fstatat_nofollow(dir, name).ok()?;
    let id = (st.st_dev, st.st_ino);
    if before == Some(id) {
        return None; // not the run's: one the user (or a host git) had before
    }
    let in_run = |(born, exact): (i128, bool)| {
        born <= ended_ns
            && born_after.is_none_or(|a| born >= a)
            && !(exact && ended_if_born_known.is_some_and(|e| born > e))
    };
    let removed_note = || {
        Some((
            true,
            format!(
                "{}: removed the lock {whose}, so later `git config` writes work",
                lock_path.display()
            ),
        ))
    };
    let unlink_if_still = |id: (u64, u64)| {
        let still = super::sys::fstatat_nofollow(dir, name)
            .ok()
            .map(|s| (s.st_dev, s.st_ino));
        // SAFETY: `name` is NUL-terminated; unlinkat takes no other memory.
        still == Some(id) && unsafe { libc::unlinkat(dir, name.as_ptr(), 0) } == 0
    };
    if st.st_mode & libc::S_IFMT == libc::S_IFLNK {
        // git never makes its lock a symlink: one created during the run was planted by
        // the command. Removing the name follows nothing.
        let (born, _, exact) = statx_times(dir, name, libc::AT_SYMLINK_NOFOLLOW).ok()?;
        let born = (born, exact);
        return (in_run(born) && unlink_if_still(id)).then(removed_note)?;
    }
    let leave = |why: &str| {
        Some((
            false,
            format!(
                "{} exists ({why}); left alone: if no git is running, remove it, then \
                 `git config` works again",
                lock_path.display()
            ),
        ))
    };
    if st.st_mode & libc::S_IFMT != libc::S_IFREG {
        // Not git's (git's lock is a regular file): the command made it, and every later
        // `git config` fails on it. Never removed recursively here; said, with what to do
        // (breaker: a directory or FIFO lock jammed git silently).
        return leave("not a regular file: a directory or FIFO made during the run");
    }
    // SAFETY: `name` is NUL-terminated; the flags need no mode.
    let fd = unsafe {
        libc::openat(
            dir,
            name.as_ptr(),
            libc::O_RDONLY | libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC,
        )
    };
    if fd < 0 {
        return None; // gone meanwhile: a host git renamed it
    }
    // SAFETY: a fresh descriptor we own.
    let f = unsafe { OwnedFd::from_raw_fd(fd) };
    let Ok((born, modified, exact)) = birth_and_mtime(&f) else {
        return leave("its times cannot be read");
    };
    let fst = super::sys::fstat(f.as_raw_fd()).ok()?;
    if (fst.st_dev, fst.st_ino) != id {
        return None;
    }
    if !in_run((born, exact)) {
        return None; // created before or after the run: not the run's
    }
    let now = || {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as i128)
            .unwrap_or(0)
    };
    let settle = LOCK_SETTLE.as_nanos() as i128;
    if now() - modified < settle {
        std::thread::sleep(std::time::Duration::from_nanos(
            (settle - (now() - modified)).clamp(0, settle) as u64,
        ));
        match birth_and_mtime(&f) {
            Ok((_, m, _)) if m == modified => {}
            _ => return leave("it is being written"),
        }
    }
    // SAFETY: fcntl on a descriptor we own; F_SETLEASE takes an int.
    if unsafe { libc::fcntl(f.as_raw_fd(), libc::F_SETLEASE, libc::F_WRLCK) } < 0 {
        return leave("another process has it open, perhaps a git on the host");
    }
    let removed = unlink_if_still(id);
    // SAFETY: fcntl on a descriptor we own; releasing our lease.
    unsafe { libc::fcntl(f.as_raw_fd(), libc::F_SETLEASE, libc::F_UNLCK) };
    removed.then(removed_note)?
}

/// Birth time (statx `STATX_BTIME`; the change time where the filesystem has none) and
/// modification time of `f`, in nanoseconds since the epoch, and whether the first is a
/// birth time.
fn birth_and_mtime(f: &OwnedFd) -> io::Result<(i128, i128, bool)> {
    statx_times(f.as_raw_fd(), c"", libc::AT_EMPTY_PATH)
}

/// [`birth_and_mtime`] of `name` in `dir` (`flags`: `AT_EMPTY_PATH` with an empty name for
/// `dir` itself, `AT_SYMLINK_NOFOLLOW` for a symlink).
fn statx_times(
    dir: RawFd,
    name: &std::ffi::CStr,
    flags: libc::c_int,
) -> io::Result<(i128, i128, bool)> {
    // SAFETY: `statx` is plain old data; zeroed is a valid value to be overwritten.
    let mut sx: libc::statx = unsafe { std::mem::zeroed() };
    // SAFETY: `name` is NUL-terminated; `sx` is a valid, writable `struct statx`.
    let r = unsafe {
        libc::statx(
            dir,
            name.as_ptr(),
            flags,
            libc::STATX_BTIME | libc::STATX_CTIME | libc::STATX_MTIME,
            &mut sx,
        )
    };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    let ns = |t: libc::statx_timestamp| t.tv_sec as i128 * 1_000_000_000 + t.tv_nsec as i128;
    let exact = sx.stx_mask & libc::STATX_BTIME != 0;
    let born = if exact {
        ns(sx.stx_btime)
    } else {
        ns(sx.stx_ctime)
    };
    Ok((born, ns(sx.stx_mtime), exact))
}

/// This machine's host name (`gethostname()`), for the merge-back's "ssh to this machine"
/// refusal (breaker, stop 19). Empty when the call fails.
fn this_machine_names() -> Vec<String> {
    let mut buf = [0u8; 256];
    // SAFETY: `buf` is writable for its length; gethostname writes at most that many bytes.
    let r = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    if r != 0 {
        return Vec::new();
    }
    let end = buf.iter().position(|b| *b == 0).unwrap_or(buf.len());
    match std::str::from_utf8(&buf[..end]) {
        Ok(n) if !n.is_empty() => vec![n.to_string()],
        _ => Vec::new(),
    }
}

/// Applies the allowed edits (`original` → `edited`) to the host file `path` under git's
/// lock (`config.lock`, created exclusively, never followed, removed only while it is still
/// ours). The directory is opened without following symlinks; `config` is re-read under
/// the lock and written in place through a descriptor.
///
/// Errors: the lock stayed taken for a second, the directory or file is not what it
/// should be, a file does not parse, or an I/O failure (the lock is removed then).
pub fn merge_back(
    path: &Path,
    original: &[u8],
    edited: &[u8],
) -> Result<cordon_policy::gitconfig::merge::MergeOutcome, String> {
    let dir_path = path.parent().ok_or("no parent directory")?;
    let name = path.file_name().ok_or("no file name")?.as_bytes().to_vec();
    let dir = super::sys::open_dir_nofollow(dir_path).map_err(|e| {
        format!(
            "opening {} without following symlinks: {e}",
            dir_path.display()
        )
    })?;
    let mut lock_name = name.clone();
    lock_name.extend_from_slice(b".lock");
    let lock_c = cstr(&lock_name).ok_or("bad name")?;
    let name_c = cstr(&name).ok_or("bad name")?;
    let current = open_read(&dir, &name_c)?;
    let mode = current.as_ref().map(|(_, m)| *m).unwrap_or(0o644);
    let lock = take_lock(&dir, &lock_c, mode)?;
    let result = (|| {
        // Re-read under the lock: a concurrent writer finished before we got it.
        let current = open_read(&dir, &name_c)?
            .map(|(t, _)| t)
            .unwrap_or_default();
        // This machine's own name is refused as an ssh host like `localhost` (breaker,
        // stop 19: `$(hostname):/w/e.git` was merged back); pure policy cannot know it.
        let opts = cordon_policy::gitconfig::merge::MergeOptions {
            this_machine: this_machine_names(),
        };
        let out = cordon_policy::gitconfig::merge::merge_with(original, edited, &current, &opts)?;
        if let Some(text) = out.text.as_ref().filter(|t| t.len() > MAX_CONFIG_BYTES) {
            // A config cordon does not read would hide every command value in it from the
            // next run's protection: never made by a merge (runs growing it past the cap
            // one allowed key at a time).
            return Err(format!(
                "the merged config would be {} bytes, more than the {MAX_CONFIG_BYTES} cordon \
                 reads; nothing merged",
                text.len()
            ));
        }
        if let Some(text) = &out.text {
            // Written into `config` itself through a descriptor (opened without following
            // links, created exclusively if missing), not by renaming `config.lock`: the
            // sandboxed command can write `.git/` and so could swap its own file in at the
            // lock's name between our write and a rename (breaker review). The name
            // `config` is covered by the sandbox's copy, so the command cannot touch it;
            // the lock stays git's mutex.
            let file = open_config_for_write(&dir, &name_c, mode)?;
            file.write_all_at(text, 0).map_err(|e| e.to_string())?;
            file.set_len(text.len() as u64).map_err(|e| e.to_string())?;
            file.sync_all().map_err(|e| e.to_string())?;
        }
        Ok(out)
    })();
    // Remove the lock only while the name is still our file.
    let ours = super::sys::fstat(lock.as_raw_fd()).ok();
    let there = super::sys::fstatat_nofollow(dir.as_raw_fd(), &lock_c).ok();
    if let (Some(a), Some(b)) = (ours, there) {
        if a.st_dev == b.st_dev && a.st_ino == b.st_ino {
            // SAFETY: `lock_c` is NUL-terminated; unlinkat takes no other memory.
            unsafe { libc::unlinkat(dir.as_raw_fd(), lock_c.as_ptr(), 0) };
        }
    }
    result
}

/// `<dir>/<name>` opened for writing without following a symlink (a regular file), or
/// created exclusively with `mode` when it does not exist.
fn open_config_for_write(dir: &OwnedFd, name: &std::ffi::CStr, mode: u32) -> Result<File, String> {
    let open = |flags: libc::c_int| {
        // SAFETY: `name` is NUL-terminated; openat takes no other memory.
        let fd = unsafe {
            libc::openat(
                dir.as_raw_fd(),
                name.as_ptr(),
                flags | libc::O_WRONLY | libc::O_NOFOLLOW | libc::O_CLOEXEC,
                mode as libc::c_uint,
            )
        };
        if fd < 0 {
            Err(io::Error::last_os_error())
        } else {
            // SAFETY: a fresh descriptor we own.
            Ok(unsafe { File::from_raw_fd(fd) })
        }
    };
    let file = match open(0) {
        Err(e) if e.raw_os_error() == Some(libc::ENOENT) => open(libc::O_CREAT | libc::O_EXCL),
        other => other,
    }
    .map_err(|e| format!("opening .git/config for the merge: {e}"))?;
    let st = super::sys::fstat(file.as_raw_fd()).map_err(|e| e.to_string())?;
    if st.st_mode & libc::S_IFMT != libc::S_IFREG {
        return Err(".git/config is not a regular file; nothing merged".into());
    }
    Ok(file)
}

/// Reads `<dir>/<name>` (regular file, not followed): text and permission bits, or `None`
/// when missing.
fn open_read(dir: &OwnedFd, name: &std::ffi::CStr) -> Result<Option<(Vec<u8>, u32)>, String> {
    // SAFETY: `name` is NUL-terminated; the flags need no mode.
    let fd = unsafe {
        libc::openat(
            dir.as_raw_fd(),
            name.as_ptr(),
            libc::O_RDONLY | libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC,
        )
    };
    if fd < 0 {
        let e = io::Error::last_os_error();
        if e.raw_os_error() == Some(libc::ENOENT) {
            return Ok(None);
        }
        return Err(format!("reading the host's config: {e}"));
    }
    // SAFETY: `fd` is a fresh descriptor we own.
    let f = unsafe { File::from_raw_fd(fd) };
    let st = super::sys::fstat(f.as_raw_fd()).map_err(|e| e.to_string())?;
    if st.st_mode & libc::S_IFMT != libc::S_IFREG {
        return Err("the host's config is not a regular file".into());
    }
    let mut v = Vec::new();
    (&f).take(MAX_CONFIG_BYTES as u64 + 1)
        .read_to_end(&mut v)
        .map_err(|e| e.to_string())?;
    if v.len() > MAX_CONFIG_BYTES {
        return Err("the host's config is larger than 1 MiB".into());
    }
    Ok(Some((v, st.st_mode & 0o777)))
}

/// Creates the lock file exclusively (never following a symlink), retrying for up to a
/// second while it exists.
fn take_lock(dir: &OwnedFd, name: &std::ffi::CStr, mode: u32) -> Result<File, String> {
    for _ in 0..50 {
        // SAFETY: `name` is NUL-terminated; O_CREAT takes the mode argument given.
        let fd = unsafe {
            libc::openat(
                dir.as_raw_fd(),
                name.as_ptr(),
                libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW | libc::O_CLOEXEC,
                mode as libc::c_uint,
            )
        };
        if fd >= 0 {
            // SAFETY: `fd` is a fresh descriptor we own.
            let f = unsafe { File::from_raw_fd(fd) };
            // The umask narrowed it: the file gets the old config's mode.
            use std::os::unix::fs::PermissionsExt;
            let _ = f.set_permissions(std::fs::Permissions::from_mode(mode));
            return Ok(f);
        }
        let e = io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::EEXIST) {
            return Err(format!("creating {}: {e}", name.to_string_lossy()));
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    Err(format!(
        "{} exists (a git running on the host, or left behind; it is never followed): remove \
         it if no git is running and make the edit again",
        name.to_string_lossy()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A merge never makes a config larger than cordon reads (a later run could not see
    /// the command values in it); twin: an ordinary edit merges.
    #[test]
    fn a_merge_never_grows_the_config_past_what_cordon_reads() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config");
        let original = b"[core]\n\tbare = false\n".to_vec();
        std::fs::write(&path, &original).unwrap();
        let mut edited = original.clone();
        edited.extend_from_slice(b"[user]\n\tname = ");
        edited.extend(std::iter::repeat_n(b'a', MAX_CONFIG_BYTES));
        edited.push(b'\n');
        let e = merge_back(&path, &original, &edited).unwrap_err();
        assert!(e.contains("nothing merged"), "{e}");
        assert_eq!(std::fs::read(&path).unwrap(), original);
        let mut small = original.clone();
        small.extend_from_slice(b"[user]\n\tname = Ada\n");
        merge_back(&path, &original, &small).unwrap();
        assert!(String::from_utf8(std::fs::read(&path).unwrap())
            .unwrap()
            .contains("Ada"));
    }
}
