//! Kernel-side denial records (issue 9 §5, R-F1): a seccomp user-notification supervisor
//! for the path syscalls that **write**, run by the sandbox's init on the same listener as
//! the unix-socket guard (`super::unix_guard`: one program, one listener, dispatched by
//! syscall number through [`CALLS`]).
//!
//! The supervisor is a **reporter, not the boundary**. The mounts and Landlock enforce the
//! profile whatever it answers:
//! - when its judgment says the kernel allows a call that creates, removes, renames or
//!   links an entry, or changes metadata, it answers `SECCOMP_USER_NOTIF_FLAG_CONTINUE`:
//!   the kernel then performs the call with its own checks, on a fresh read of the
//!   caller's memory. The kernel documentation
//!   (`Documentation/userspace-api/seccomp_filter.rst`, "Userspace Notification") warns that
//!   CONTINUE is racy (TOCTOU: the caller may change the path after it was read) and must
//!   not be used to *allow* what the supervisor judged; for these calls it never is —
//!   CONTINUE only hands the call back to the kernel, whose mounts and Landlock decide. A
//!   race can at worst lose a record, never allow a write the kernel would deny;
//! - a write-open (`open`/`openat`/`creat` with `O_WRONLY`, `O_RDWR` or `O_TRUNC`; not
//!   `O_CREAT|O_EXCL`, which opens no existing file, so the kernel's own lookup can only
//!   make a new one-named file) and `truncate` are never answered CONTINUE: the supervisor performs them itself on what it
//!   judged ([`open_judged`], [`truncate_judged`]) and hands the descriptor over with
//!   `SECCOMP_IOCTL_NOTIF_ADDFD` + `SECCOMP_ADDFD_FLAG_SEND` (one step: installed and
//!   answered; Linux 5.14, before it the install then the answer). The hard-link refusal
//!   below is the supervisor's own, so a second lookup by the kernel would be a way round
//!   it (attack pass t15: a thread renaming names on the path between the check and the
//!   kernel's open wrote a host-made hard link, 4 tries in 4). Init may open for the
//!   command: it has the command's uid, gids and Landlock domain (it restricts itself
//!   before it forks the command, which gets no further domain), and of capabilities only
//!   `CAP_SYS_PTRACE`, which bears on no file permission; it is lowered while init looks
//!   into another process's `/proc/<pid>` for the command, and init's own `/proc/1` is
//!   refused (`EACCES`, as the kernel refuses the command: init is not dumpable);
//! - when its judgment says the kernel denies the call, it answers the errno the kernel
//!   would have given itself (`EROFS` on a read-only mount, `EACCES` for Landlock,
//!   `EBUSY` for a pinned or protected mount point) and records `{syscall, path, errno,
//!   rule, smallest grant}`. Answering it refuses nothing the kernel would have allowed:
//!   every denial needs both the resolved profile's verdict (the rule) and the kernel's
//!   own state (a read-only mount as `fstatvfs` reports it, or a path no Landlock rule of
//!   this sandbox's layout makes writable). When in doubt (unreadable memory, a symlink
//!   as the last component, a device, the caller gone) it answers CONTINUE without record.
//!
//! One refusal is its own: writing in place (open for writing, truncate) a regular file
//! that has more than one name (`st_nlink > 1`), or changing its metadata in place (mode,
//! owner, times, extended attributes: attack pass 48, N3, a store file made `0666`, its
//! mtime faked, a `user.*` attribute planted). The mounts and Landlock judge the name
//! the command uses; a hard link made on the host (pnpm's store, a `git clone` of a local
//! repository, uv's cache) shares its inode with a name outside every writable root, and
//! the write lands there (attack pass 47, N1: a command changed package code another
//! project ran on the host). The command cannot make such links to the outside itself
//! (`link(2)` across mounts is `EXDEV`; one it makes inside a writable root counts all the
//! same), and tools replace files by rename (cargo, git, pip) rather than write linked
//! ones in place, and set the mode and times of the files they make, not of linked ones.
//! The file is the one the kernel will reach: symlinks followed by hand, `/proc/self/fd/N`
//! and `/dev/fd/N` read as the caller's descriptors ([`judge_linked`]; attack pass 48,
//! N1); for a call on a descriptor (`fchmod`, `futimens`, `fsetxattr`) the caller's open
//! file ([`judge_meta`]). A `chmod` to the mode the file already has, and a change on a
//! read-only mount (the kernel's `EROFS`), pass. For writing the bytes there is no race
//! left: the path is read once from the caller's memory and walked once, by descriptor;
//! the file is checked on its pinned descriptor and opened again through
//! `/proc/self/fd/N` (a new file is made `O_CREAT|O_EXCL` in the pinned directory, with
//! the caller's mode and umask), so no rename, directory swap or rewrite of the path in
//! memory between the check and the open changes what is opened. A FIFO's writer waiting
//! for a reader, and a device whose open may block, are finished on a thread of their own
//! (the serve loop answers every process of the sandbox); `/dev/tty` opens the caller's
//! controlling terminal. The metadata calls (`chmod`, `utimensat`, `setxattr`… by path)
//! still answer CONTINUE after the check, and keep its race: a command built to win it can
//! change a linked file's mode, times or attributes (not its bytes).
//!
//! Only calls that may write trap: `open`/`openat`/`creat` with `O_WRONLY`, `O_RDWR`,
//! `O_CREAT` or `O_TRUNC` (the flags are checked in BPF, so read-only opens never leave
//! the kernel), `mkdir(at)`, `mknod(at)`, `unlink(at)`, `rmdir`, `rename(at, at2)`,
//! `link(at)`, `symlink(at)`, `truncate`; and the calls that change a file's metadata,
//! judged by the hard-link rule alone ([`PathCall::Meta`]): `chmod`, `fchmod`,
//! `fchmodat`, `fchmodat2`, `chown`, `lchown`, `fchown`, `fchownat`, `utime`, `utimes`,
//! `futimesat`, `utimensat`, `setxattr`, `lsetxattr`, `fsetxattr`, `setxattrat`,
//! `removexattr`, `lremovexattr`, `fremovexattr`, `removexattrat`, `file_setattr`, and
//! `ioctl` with one of
//! [`METADATA_IOCTLS`] (`chattr`'s inode flags and attributes, fs-verity). Each is a round
//! trip; they are rare next to opens (`strace -f -c` of a `cargo build` of three crates:
//! 27 `utimensat` and no other, against 9,533 `openat`). `openat2` is already `ENOSYS` for
//! the command (libc falls back to `openat`). `ftruncate`, `fallocate` and writes need a
//! descriptor open for writing, which the open's judgment already refused. Landlock does
//! not restrict metadata; a read-only mount refuses it with `EROFS` unrecorded.
//!
//! The records are kept in init (the command cannot reach init's memory: init is not
//! dumpable and `ptrace`/`process_vm_*` are denied by the filter), written on a pipe to the
//! helper when the command's tree has ended, and passed on by the helper on its report
//! descriptor: a channel the command never holds.

use crate::denials::{DenialRecord, DenialReport};
use cordon_policy::{Access, EntryOrigin, ResolvedFilesystem, ResolvedProfile};
use std::ffi::{CString, OsStr};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// How a trapped call names the paths it writes (argument indexes into
/// `seccomp_data.args`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PathCall {
    /// `open(path, flags)` / `openat(dirfd, path, flags)` / `creat(path)` (`flags: None`
    /// = `O_CREAT|O_WRONLY|O_TRUNC`).
    Open {
        /// Index of the directory descriptor, if any.
        dirfd: Option<usize>,
        /// Index of the path.
        path: usize,
        /// Index of the flags, if any.
        flags: Option<usize>,
    },
    /// Makes a new entry (`mkdir`, `mknod`, `symlink`'s link path, `link`'s new path).
    Create {
        /// Index of the directory descriptor, if any.
        dirfd: Option<usize>,
        /// Index of the new path.
        path: usize,
    },
    /// Removes an entry (`unlink`, `unlinkat`, `rmdir`).
    Remove {
        /// Index of the directory descriptor, if any.
        dirfd: Option<usize>,
        /// Index of the path.
        path: usize,
    },
    /// Moves an entry (`rename`, `renameat`, `renameat2`).
    Rename {
        /// Index of the old directory descriptor, if any.
        old_dirfd: Option<usize>,
        /// Index of the old path.
        old: usize,
        /// Index of the new directory descriptor, if any.
        new_dirfd: Option<usize>,
        /// Index of the new path.
        new: usize,
    },
    /// Writes an existing file in place (`truncate`).
    Truncate {
        /// Index of the path.
        path: usize,
    },
    /// Changes an existing file's metadata in place: its mode (`chmod` family), owner
    /// (`chown` family), times (`utime` family) or extended attributes (`setxattr`,
    /// `removexattr` families). Judged only by the hard-link refusal ([`judge_meta`]).
    Meta {
        /// Which file.
        at: MetaAt,
        /// Index of the new mode (the `chmod` family): a mode equal to the file's own
        /// changes nothing and is let through.
        mode: Option<usize>,
        /// Index of the new owner's uid, its gid the next argument (the `chown` family):
        /// an owner and group equal to the file's own (or `-1`) change nothing and are let
        /// through, unless the file has a set-user/group-ID bit or a file capability,
        /// which any `chown` clears (new-user pass nu30, F3).
        owner: Option<usize>,
    },
}

/// How a metadata call ([`PathCall::Meta`]) names its file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MetaAt {
    /// An open descriptor, `args[i]` (`fchmod`, `fchown`, `fsetxattr`, `fremovexattr`).
    Fd(usize),
    /// A path, relative to a directory descriptor or the cwd.
    Path {
        /// Index of the directory descriptor, if any.
        dirfd: Option<usize>,
        /// Index of the path.
        path: usize,
        /// Index of the `AT_*` flags, if any: `AT_SYMLINK_NOFOLLOW` (the last component
        /// itself), `AT_EMPTY_PATH` (an empty path: the descriptor `dirfd` itself).
        flags: Option<usize>,
        /// The last component is never followed (`lchown`, `lsetxattr`, `lremovexattr`).
        nofollow: bool,
        /// A NULL path means the descriptor `dirfd` itself (`utimensat`, `futimesat`).
        null_is_fd: bool,
    },
}

/// The dispatch table of the supervisor: syscall name, number, how it names its paths. The
/// seccomp program (`super::seccomp_filter::build_unix_guard_with`) traps exactly these
/// numbers (the open family only with a writing flag).
// Longer than most: the table of trapped syscalls (number, name, argument layout) per
// architecture, one line each; a table reads best in one place.
pub fn calls() -> Vec<(&'static str, i64, PathCall)> {
    use PathCall::*;
    let mut v = vec![
        (
            "openat",
            libc::SYS_openat,
            Open {
                dirfd: Some(0),
                path: 1,
                flags: Some(2),
            },
        ),
        (
            "mkdirat",
            libc::SYS_mkdirat,
            Create {
                dirfd: Some(0),
                path: 1,
            },
        ),
        (
            "mknodat",
            libc::SYS_mknodat,
            Create {
                dirfd: Some(0),
                path: 1,
            },
        ),
        (
            "symlinkat",
            libc::SYS_symlinkat,
            Create {
                dirfd: Some(1),
                path: 2,
            },
        ),
        (
            "linkat",
            libc::SYS_linkat,
            Create {
                dirfd: Some(2),
                path: 3,
            },
        ),
        (
            "unlinkat",
            libc::SYS_unlinkat,
            Remove {
                dirfd: Some(0),
                path: 1,
            },
        ),
        (
            "renameat",
            libc::SYS_renameat,
            Rename {
                old_dirfd: Some(0),
                old: 1,
                new_dirfd: Some(2),
                new: 3,
            },
        ),
        (
            "renameat2",
            libc::SYS_renameat2,
            Rename {
                old_dirfd: Some(0),
                old: 1,
                new_dirfd: Some(2),
                new: 3,
            },
        ),
        ("truncate", libc::SYS_truncate, Truncate { path: 0 }),
        ("fchmod", libc::SYS_fchmod, meta_fd(0, Some(1))),
        ("fchmodat", libc::SYS_fchmodat, meta_at(0, 1, None, Some(2))),
        ("fchmodat2", NR_FCHMODAT2, meta_at(0, 1, Some(3), Some(2))),
        ("fchown", libc::SYS_fchown, owned(meta_fd(0, None), 1)),
        (
            "fchownat",
            libc::SYS_fchownat,
            owned(meta_at(0, 1, Some(4), None), 2),
        ),
        (
            "utimensat",
            libc::SYS_utimensat,
            Meta {
                at: MetaAt::Path {
                    dirfd: Some(0),
                    path: 1,
                    flags: Some(3),
                    nofollow: false,
                    null_is_fd: true,
                },
                mode: None,
                owner: None,
            },
        ),
        ("setxattr", libc::SYS_setxattr, meta_named(0, false)),
        ("lsetxattr", libc::SYS_lsetxattr, meta_named(0, true)),
        ("fsetxattr", libc::SYS_fsetxattr, meta_fd(0, None)),
        ("removexattr", libc::SYS_removexattr, meta_named(0, false)),
        ("lremovexattr", libc::SYS_lremovexattr, meta_named(0, true)),
        ("fremovexattr", libc::SYS_fremovexattr, meta_fd(0, None)),
        ("setxattrat", NR_SETXATTRAT, meta_at(0, 1, Some(2), None)),
        (
            "removexattrat",
            NR_REMOVEXATTRAT,
            meta_at(0, 1, Some(2), None),
        ),
        // `chattr` by path (final pass, f32 N1: it set inode flags on a store file):
        // file_setattr(dfd, path, attr, size, at_flags).
        (
            "file_setattr",
            NR_FILE_SETATTR,
            meta_at(0, 1, Some(4), None),
        ),
        // Only the commands of `METADATA_IOCTLS` trap (checked in BPF).
        ("ioctl", libc::SYS_ioctl, meta_fd(0, None)),
    ];
    #[cfg(target_arch = "x86_64")]
    v.extend([
        (
            "open",
            libc::SYS_open,
            Open {
                dirfd: None,
                path: 0,
                flags: Some(1),
            },
        ),
        (
            "creat",
            libc::SYS_creat,
            Open {
                dirfd: None,
                path: 0,
                flags: None,
            },
        ),
        (
            "mkdir",
            libc::SYS_mkdir,
            Create {
                dirfd: None,
                path: 0,
            },
        ),
        (
            "mknod",
            libc::SYS_mknod,
            Create {
                dirfd: None,
                path: 0,
            },
        ),
        (
            "symlink",
            libc::SYS_symlink,
            Create {
                dirfd: None,
                path: 1,
            },
        ),
        (
            "link",
            libc::SYS_link,
            Create {
                dirfd: None,
                path: 1,
            },
        ),
        (
            "unlink",
            libc::SYS_unlink,
            Remove {
                dirfd: None,
                path: 0,
            },
        ),
        (
            "rmdir",
            libc::SYS_rmdir,
            Remove {
                dirfd: None,
                path: 0,
            },
        ),
        (
            "rename",
            libc::SYS_rename,
            Rename {
                old_dirfd: None,
                old: 0,
                new_dirfd: None,
                new: 1,
            },
        ),
        (
            "chmod",
            libc::SYS_chmod,
            Meta {
                at: MetaAt::Path {
                    dirfd: None,
                    path: 0,
                    flags: None,
                    nofollow: false,
                    null_is_fd: false,
                },
                mode: Some(1),
                owner: None,
            },
        ),
        ("chown", libc::SYS_chown, owned(meta_named(0, false), 1)),
        ("lchown", libc::SYS_lchown, owned(meta_named(0, true), 1)),
        ("utime", libc::SYS_utime, meta_named(0, false)),
        ("utimes", libc::SYS_utimes, meta_named(0, false)),
        (
            "futimesat",
            libc::SYS_futimesat,
            Meta {
                at: MetaAt::Path {
                    dirfd: Some(0),
                    path: 1,
                    flags: None,
                    nofollow: false,
                    null_is_fd: true,
                },
                mode: None,
                owner: None,
            },
        ),
    ]);
    v
}

/// `fchmodat2(2)` (Linux 6.6): `fchmodat` with `AT_SYMLINK_NOFOLLOW` and `AT_EMPTY_PATH`.
const NR_FCHMODAT2: i64 = 452;
/// `setxattrat(2)` (Linux 6.13; the unified table, x86_64 and aarch64 alike).
const NR_SETXATTRAT: i64 = 463;
/// `removexattrat(2)` (Linux 6.13).
const NR_REMOVEXATTRAT: i64 = 466;
/// `file_setattr(2)` (Linux 6.17): a file's inode flags and attributes by path, as
/// `FS_IOC_FSSETXATTR` does on a descriptor.
const NR_FILE_SETATTR: i64 = 469;

/// The `ioctl(2)` commands that change an open file's inode flags or attributes (`chattr`:
/// `FS_IOC_SETFLAGS` and its 32-bit twin, `FS_IOC_FSSETXATTR`, `FS_IOC_SETVERSION` and
/// ext4's own `EXT4_IOC_SETVERSION`) or make
/// it read-only for good (`FS_IOC_ENABLE_VERITY`), on a descriptor open for reading: they
/// trap as metadata calls on `args[0]`; every other command stays in the kernel. The
/// kernel truncates the command to 32 bits.
pub const METADATA_IOCTLS: [u32; 6] = [
    0x4008_6602, // FS_IOC_SETFLAGS = _IOW('f', 2, long)
    0x4004_6602, // FS_IOC32_SETFLAGS = _IOW('f', 2, int)
    0x401c_5820, // FS_IOC_FSSETXATTR = _IOW('X', 32, struct fsxattr)
    0x4008_7602, // FS_IOC_SETVERSION = _IOW('v', 2, long)
    0x4008_6604, // EXT4_IOC_SETVERSION = _IOW('f', 4, long) (final pass, f32 N2)
    0x4080_6685, // FS_IOC_ENABLE_VERITY = _IOW('f', 133, struct fsverity_enable_arg)
];

/// A metadata call on the open descriptor `args[i]`.
fn meta_fd(i: usize, mode: Option<usize>) -> PathCall {
    PathCall::Meta {
        at: MetaAt::Fd(i),
        mode,
        owner: None,
    }
}

/// A metadata call on `args[path]` relative to the descriptor `args[dirfd]`, with its
/// `AT_*` flags in `args[flags]`.
fn meta_at(dirfd: usize, path: usize, flags: Option<usize>, mode: Option<usize>) -> PathCall {
    PathCall::Meta {
        at: MetaAt::Path {
            dirfd: Some(dirfd),
            path,
            flags,
            nofollow: false,
            null_is_fd: false,
        },
        mode,
        owner: None,
    }
}

/// A metadata call on the path `args[path]` alone (`setxattr`, `chown`, `utimes`…);
/// `nofollow`: the `l…` variant, which acts on a symlink itself.
fn meta_named(path: usize, nofollow: bool) -> PathCall {
    PathCall::Meta {
        at: MetaAt::Path {
            dirfd: None,
            path,
            flags: None,
            nofollow,
            null_is_fd: false,
        },
        mode: None,
        owner: None,
    }
}

/// `call` (a `chown`), its new owner's uid in `args[uid]` and gid in `args[uid + 1]`.
fn owned(call: PathCall, uid: usize) -> PathCall {
    match call {
        PathCall::Meta { at, mode, .. } => PathCall::Meta {
            at,
            mode,
            owner: Some(uid),
        },
        other => other,
    }
}

/// `open` flags that make a call possibly write (trapped; anything else never leaves the
/// kernel).
pub const WRITING_OPEN_FLAGS: u32 =
    (libc::O_WRONLY | libc::O_RDWR | libc::O_CREAT | libc::O_TRUNC) as u32;

/// What the supervisor judges with: the resolved profile (the rules' names) and the
/// writable places of this sandbox's Landlock ruleset (from the same mount layout).
#[derive(Debug)]
pub struct Supervisor {
    filesystem: ResolvedFilesystem,
    /// Paths under which Landlock grants every write right (`Grant::Write` rules of the
    /// layout), when Landlock's filesystem rules are fully enforced; `None` otherwise (then
    /// only read-only mounts count as the kernel's refusal).
    landlock_writable: Option<Vec<PathBuf>>,
    /// `(st_dev, st_ino)` of init's standard descriptors opened for writing: Landlock has a
    /// rule on exactly those inodes (`landlock_layer::stdio_grants`).
    stdio: Vec<(u64, u64)>,
    /// Landlock handles `truncate` (ABI >= 3); below, truncating is only refused by a
    /// read-only mount.
    landlock_truncate: bool,
    /// `st_dev` of the filesystems this sandbox made for itself (the private `/tmp`, its
    /// `/dev/shm`): every name of a file there is the command's, so the hard-link refusal
    /// does not apply there (new-user pass nu30, F2: `os.link` then `os.chmod` in a
    /// `mkdtemp` directory failed).
    own_devices: Vec<u64>,
    /// Files this run gave a second name itself (`link` of a file that had one name: both
    /// names then lie in one writable mount), by device, inode and birth time: the
    /// hard-link refusal does not apply to them (new-user pass nu31, F2: `strip` of cargo's
    /// `target/release/app`, a hard link cargo made to `deps/app-<hash>` in the same run).
    made_here: Mutex<std::collections::HashSet<(u64, u64, i64, u32)>>,
    /// The IDs of the mounts of the sandbox's mount namespace (`/proc/self/mountinfo`, read
    /// at the first metadata call, off the launch path: the command cannot mount); `None`
    /// when it could not be read. A file
    /// reached through another mount was handed in from outside (the command's stdin,
    /// stdout or stderr, a descriptor passed over a socket): its metadata is the host's
    /// ([`refuse_linked`]; new-user pass 164: `os.fchmod(0, 0o666)` on a host file given as
    /// stdin changed it, and a copy of `/dev/null` too).
    mounts: std::sync::OnceLock<Option<std::collections::HashSet<u64>>>,
    records: Mutex<DenialReport>,
}

impl Supervisor {
    /// A supervisor for `profile`. `landlock`: the ABI and the writable places of a fully
    /// enforced Landlock filesystem ruleset ([`landlock_writable`]), or `None` when
    /// Landlock does not confine the filesystem (then only read-only mounts refuse).
    pub fn new(profile: &ResolvedProfile, landlock: Option<(u32, Vec<PathBuf>)>) -> Supervisor {
        let stdio = (0..=2)
            .filter(|fd| {
                super::sys::status_flags(*fd)
                    .is_ok_and(|f| f & libc::O_ACCMODE != libc::O_RDONLY && f & libc::O_PATH == 0)
            })
            .filter_map(|fd| super::sys::fstat(fd).ok())
            .map(|st| (st.st_dev, st.st_ino))
            .collect();
        Supervisor {
            filesystem: profile.filesystem.clone(),
            landlock_truncate: landlock.as_ref().is_some_and(|(abi, _)| *abi >= 3),
            landlock_writable: landlock.map(|(_, w)| w),
            stdio,
            own_devices: Vec::new(),
            made_here: Mutex::new(std::collections::HashSet::new()),
            mounts: std::sync::OnceLock::new(),
            records: Mutex::new(DenialReport::default()),
        }
    }

    /// This supervisor, told that the filesystems mounted at `paths` are the sandbox's own
    /// fresh tmpfs mounts ([`Supervisor::own_devices`]); a path that cannot be read or is
    /// not a tmpfs is left out (the refusal then applies there as anywhere).
    pub fn with_own_filesystems(mut self, paths: &[&Path]) -> Supervisor {
        for p in paths {
            let Ok(f) = std::fs::File::open(p) else {
                continue;
            };
            let tmpfs = super::sys::fs_type(f.as_raw_fd()) == Some(libc::TMPFS_MAGIC);
            if let (true, Ok(st)) = (tmpfs, super::sys::fstat(f.as_raw_fd())) {
                self.own_devices.push(st.st_dev);
            }
        }
        self
    }

    /// The records so far.
    pub fn report(&self) -> DenialReport {
        self.records.lock().map(|r| r.clone()).unwrap_or_default()
    }
}

/// The answer to one notification.
#[derive(Debug)]
pub enum Answer {
    /// `SECCOMP_USER_NOTIF_FLAG_CONTINUE`: the kernel performs the call with its checks.
    Continue,
    /// Fail the call with this errno (the one the kernel would have given).
    Deny(i32),
    /// The call was performed by the supervisor: it returns this value.
    Done(i64),
    /// A write-open the supervisor performed itself on the file it judged
    /// ([`open_judged`]): install `fd` in the caller and return its number
    /// (`SECCOMP_IOCTL_NOTIF_ADDFD` with `SECCOMP_ADDFD_FLAG_SEND`), close-on-exec when
    /// the caller asked for `O_CLOEXEC`.
    Install {
        /// The open file, init's descriptor of it.
        fd: OwnedFd,
        /// The caller asked for `O_CLOEXEC`.
        cloexec: bool,
        /// The file was made for this call, by this name in this directory: removed again
        /// when the caller is no longer waiting for the answer ([`Made::undo`]).
        made: Option<Made>,
    },
    /// A write-open that may block (a FIFO without a reader yet, a device other than the
    /// few that never block): finished off the serve loop ([`Waiting::finish`]), which
    /// answers every process of the sandbox.
    Wait(Waiting),
}

/// A file the supervisor made for a caller ([`Answer::Install`]).
#[derive(Debug)]
pub struct Made {
    dir: OwnedFd,
    name: CString,
}

impl Made {
    /// The caller did not get the descriptor (a signal interrupted its wait, and it will
    /// make the call again or give up): the file it never saw made is removed, if its name
    /// still names it, so a restarted `O_CREAT|O_EXCL` does not fail on it (`EEXIST`).
    pub fn undo(&self, fd: &OwnedFd) {
        let (Ok(st), Ok(now)) = (
            super::sys::fstat(fd.as_raw_fd()),
            super::sys::fstatat_nofollow(self.dir.as_raw_fd(), &self.name),
        ) else {
            return;
        };
        if (st.st_dev, st.st_ino) == (now.st_dev, now.st_ino) && st.st_size == 0 {
            // SAFETY: `name` is NUL-terminated; the directory descriptor is open.
            unsafe { libc::unlinkat(self.dir.as_raw_fd(), self.name.as_ptr(), 0) };
        }
    }
}

/// The open of a judged file that may block ([`Answer::Wait`]).
#[derive(Debug)]
pub struct Waiting {
    /// The judged file (an `O_PATH` descriptor): reopened, never looked up again.
    pinned: OwnedFd,
    /// The flags of the reopen ([`reopen_flags`]).
    flags: i32,
    /// The caller asked for `O_CLOEXEC`.
    cloexec: bool,
    /// A FIFO: polled with `O_NONBLOCK` (a blocked open could not be abandoned when the
    /// caller goes away); else one blocking open.
    fifo: bool,
}

impl Waiting {
    /// Opens the pinned file: a FIFO for writing is retried without blocking until a
    /// reader comes (`ENXIO` until then) or the notification is no longer valid
    /// (`still_valid`: the caller was interrupted or killed), then `O_NONBLOCK` is cleared
    /// as the caller asked for a blocking open. Returns the descriptor and whether it is
    /// to be close-on-exec, or the errno to answer.
    pub fn finish(self, still_valid: impl Fn() -> bool) -> Result<(OwnedFd, bool), i32> {
        if !self.fifo {
            return open_pinned(&self.pinned, self.flags).map(|f| (f, self.cloexec));
        }
        let mut pause = std::time::Duration::from_millis(1);
        loop {
            match open_pinned(&self.pinned, self.flags | libc::O_NONBLOCK) {
                Ok(f) => {
                    super::sys::set_status_flags(f.as_raw_fd(), self.flags & !libc::O_NONBLOCK)
                        .map_err(|e| e.raw_os_error().unwrap_or(libc::EIO))?;
                    return Ok((f, self.cloexec));
                }
                Err(libc::ENXIO) if still_valid() => {
                    std::thread::sleep(pause);
                    pause = (pause * 2).min(std::time::Duration::from_millis(50));
                }
                Err(e) => return Err(e),
            }
        }
    }
}

/// Judges one notification for a call of [`calls`] (`nr` not in the table: CONTINUE).
/// `still_valid` is `SECCOMP_IOCTL_NOTIF_ID_VALID` on the notification, asked after the
/// caller's memory was read (the pid may have been reused).
pub fn handle(sup: &Supervisor, n: &libc::seccomp_notif, still_valid: impl Fn() -> bool) -> Answer {
    // Built once per init, not per notification (every trapped write-open comes here).
    static TABLE: std::sync::OnceLock<Vec<(&'static str, i64, PathCall)>> =
        std::sync::OnceLock::new();
    let Some(&(name, _, call)) = TABLE
        .get_or_init(calls)
        .iter()
        .find(|(_, nr, _)| *nr == n.data.nr as i64)
    else {
        return Answer::Continue;
    };
    if n.data.nr as i64 == libc::SYS_ioctl && !METADATA_IOCTLS.contains(&(n.data.args[1] as u32)) {
        return Answer::Continue; // (the filter sends no other)
    }
    // `O_PATH` writes nothing: the kernel ignores every other flag but `O_CLOEXEC`,
    // `O_DIRECTORY` and `O_NOFOLLOW` (open(2)), so `O_PATH|O_WRONLY` gives a path
    // descriptor on any file the command can look up, as outside (attack pass 213 #3: it
    // was refused as a write of a read-only or hard-linked file).
    if let PathCall::Open { flags: Some(i), .. } = call {
        if n.data.args[i] as u32 as i32 & libc::O_PATH != 0 {
            return Answer::Continue;
        }
    }
    let verdict = match write_open(&n.data.args, call) {
        // A write-open is never answered CONTINUE: the kernel would look the path up
        // again (and read it again from the caller's memory), and a command that renames
        // or rewrites it in between reaches another file than the one judged.
        Some((dirfd, path, flags, mode)) => match judge_path(sup, n.pid, &n.data.args, call) {
            Some(v) => v,
            // `O_CREAT|O_EXCL` opens no file that exists (not even through a final
            // symlink: open(2), EEXIST), so whatever the kernel's second lookup reaches is
            // a new file with one name, in a directory the mounts and Landlock judge
            // themselves: CONTINUE cannot reach a hard-linked file. Left to the kernel, which
            // also keeps its own umask and default ACLs (init's create costs ~50 µs more:
            // the caller's umask read from /proc).
            None if flags & (libc::O_CREAT | libc::O_EXCL) == libc::O_CREAT | libc::O_EXCL => {
                return Answer::Continue
            }
            None => match open_judged(sup, n.pid, dirfd, path, flags, mode) {
                Ok(answer) => return answer,
                Err(v) => v,
            },
        },
        // `truncate(path, len)` alike: performed on the judged file (`ftruncate`).
        None if matches!(call, PathCall::Truncate { .. }) => {
            match judge_path(sup, n.pid, &n.data.args, call) {
                Some(v) => v,
                None => match truncate_judged(sup, n.pid, &n.data.args) {
                    Ok(answer) => return answer,
                    Err(v) => v,
                },
            }
        }
        None => match judge_call(sup, n.pid, &n.data.args, call) {
            Some(v) => v,
            None => {
                if matches!(name, "link" | "linkat") {
                    note_own_link(sup, n.pid, &n.data.args, name == "linkat");
                }
                return Answer::Continue;
            }
        },
    };
    if !still_valid() {
        return Answer::Continue; // the caller is gone: nothing to answer or record
    }
    let errno = verdict.errno;
    if let Ok(mut r) = sup.records.lock() {
        r.push(sup.record(name, verdict));
    }
    Answer::Deny(errno)
}

/// A `link`/`linkat` the supervisor lets through: when its source is a regular file with one
/// name, named by its own path inside a writable root, on the same mount as
/// the new name's directory, every name it will have lies in that writable mount (a link
/// across mounts fails with `EXDEV`), so it is noted as made here
/// ([`Supervisor::made_here`]). Nothing is noted when the source or the new name's
/// directory cannot be looked at (attack pass 51, N1: a link the kernel then refused with
/// `EXDEV`, of an outside name, was noted).
fn note_own_link(sup: &Supervisor, tid: u32, args: &[u64; 6], at: bool) {
    let (dirfd, path, flags) = if at {
        (Some(args[0]), args[1], args[4] as u32 as i32)
    } else {
        (None, args[0], 0)
    };
    let (new_dirfd, new_path) = if at {
        (Some(args[2]), args[3])
    } else {
        (None, args[1])
    };
    let Some(new_dir) = (Caller { tid }).entry(new_dirfd, new_path) else {
        return;
    };
    let raw = match read_c_string_checked(tid, path) {
        Ok(Some(raw)) => raw,
        _ => return,
    };
    let walked = if raw.is_empty() && flags & libc::AT_EMPTY_PATH != 0 {
        callers_fd(tid, args[0])
    } else if raw.is_empty() {
        return;
    } else {
        linked_target(tid, dirfd, raw, flags & libc::AT_SYMLINK_FOLLOW != 0)
    };
    let Ok(Some((f, shown, false))) = walked else {
        return;
    };
    let Ok(st) = super::sys::fstat(f.as_raw_fd()) else {
        return;
    };
    if st.st_mode & libc::S_IFMT != libc::S_IFREG || st.st_nlink != 1 {
        return;
    }
    // Only a source the command may write, named by its own path (not a removed name
    // reached through `/proc`), on the new name's mount: a link from elsewhere fails
    // (`EXDEV`), and its file must not be taken for the command's.
    let mount = mount_id(&f);
    if read_only_mount(f.as_raw_fd()) != Some(false)
        || sup.landlock_denies(&shown)
        || real_path(f.as_raw_fd()).as_deref() != Some(shown.as_path())
        || mount.is_none()
        || mount != mount_id(&new_dir.dir)
    {
        return;
    }
    if let (Some(key), Ok(mut made)) = (identity(&f, &st), sup.made_here.lock()) {
        made.insert(key);
    }
}

/// A file's device, inode and birth time (`statx` `btime`): which file this is, not only
/// which inode number (a number is reused once the file is gone).
fn identity(f: &OwnedFd, st: &libc::stat) -> Option<(u64, u64, i64, u32)> {
    // SAFETY: statx is plain old data; the kernel fills it.
    let mut sx: libc::statx = unsafe { std::mem::zeroed() };
    // SAFETY: an empty NUL-terminated path with AT_EMPTY_PATH names the descriptor itself;
    // `sx` is valid for writes.
    let r = unsafe {
        libc::statx(
            f.as_raw_fd(),
            c"".as_ptr(),
            libc::AT_EMPTY_PATH,
            libc::STATX_BTIME,
            &mut sx,
        )
    };
    (r == 0 && sx.stx_mask & libc::STATX_BTIME != 0).then_some((
        st.st_dev,
        st.st_ino,
        sx.stx_btime.tv_sec,
        sx.stx_btime.tv_nsec,
    ))
}

/// A regular file refused an in-place write for its other names ([`judge_linked`]).
#[derive(Debug, Clone, Copy)]
struct Linked {
    /// Its link count.
    names: u64,
    /// Reached through a descriptor whose name was removed: every name it still has lies
    /// elsewhere (nu29 F1: `O_PATH` open, unlink, reopen `/proc/self/fd/N`).
    unnamed: bool,
    /// Its metadata (mode, owner, times, extended attributes) was to change, not its
    /// bytes ([`PathCall::Meta`]).
    metadata: bool,
}

/// A call the kernel would refuse: where, why.
struct Verdict {
    /// The place as resolved (real directory path + the last component as named).
    path: PathBuf,
    errno: i32,
    /// What needs writing: the entry itself (open of an existing file, truncate) or its
    /// directory (create, remove, rename).
    grant: PathBuf,
    /// A mount point was in the way (`EBUSY`).
    busy: bool,
    /// A regular file with this many names, refused an in-place write ([`judge_linked`]).
    links: Option<Linked>,
    /// The hard-link check could not look at the file, and refused the call for that.
    blind: Option<Blind>,
}

impl Verdict {
    /// The refusal of a call the hard-link check could not judge ([`Blind`]), named by
    /// the path as the caller gave it (read if possible) against its `dirfd`.
    fn blind(tid: u32, dirfd: Option<u64>, ptr: u64, why: Blind) -> Verdict {
        let given = (ptr != 0)
            .then(|| read_c_string(tid, ptr))
            .flatten()
            .map(|b| PathBuf::from(OsStr::from_bytes(&b)));
        let path = match (given, dirfd.map(|d| d as u32 as i32)) {
            (Some(p), _) if p.is_absolute() => p,
            (Some(p), None | Some(libc::AT_FDCWD)) => {
                std::fs::read_link(format!("/proc/{tid}/cwd"))
                    .map(|c| c.join(&p))
                    .unwrap_or(p)
            }
            (Some(p), _) => p,
            (None, Some(fd)) if fd >= 0 => PathBuf::from(format!("/proc/{tid}/fd/{fd}")),
            (None, _) => PathBuf::from("(a path cordon could not read)"),
        };
        Verdict::unchecked(path, why)
    }

    /// The refusal of a call on `path` that the hard-link check could not judge.
    fn unchecked(path: PathBuf, why: Blind) -> Verdict {
        Verdict {
            grant: path.clone(),
            path,
            errno: libc::EACCES,
            busy: false,
            links: None,
            blind: Some(why),
        }
    }
}

impl Supervisor {
    /// Records a `connect` to the internet address `addr` (a raw `sockaddr_in`/`in6`) made
    /// while the sandbox's network namespace is not the host's: a non-loopback destination
    /// (it cannot leave the namespace) or a name lookup (port 53) — the kernel-side
    /// evidence a network failure is classified on (R-F1: the program's output alone does
    /// not get the network offered). `rule` says why nothing left. Loopback connections
    /// (local servers) are not recorded.
    pub fn note_network(&self, addr: &[u8], errno: Option<i32>, rule: &str) {
        let Some(sa) = inet_addr(addr) else { return };
        if sa.ip().is_loopback() && sa.port() != 53 {
            return;
        }
        let r = DenialRecord {
            syscall: DenialRecord::NETWORK_SYSCALL.to_string(),
            path: PathBuf::from(sa.to_string()),
            errno: errno.map_or("none", errno_name).to_string(),
            rule: rule.to_string(),
            grant: None,
        };
        if let Ok(mut d) = self.records.lock() {
            d.push(r);
        }
    }

    fn record(&self, syscall: &str, v: Verdict) -> DenialRecord {
        let (rule, grantable) = match (v.blind, v.links) {
            (Some(b), _) if [HANDED_IN.0, HOST_DEVICE.0].contains(&b.0) => (
                format!("{}: {}", crate::denials::HOST_METADATA_RULE, b.0),
                false,
            ),
            (Some(Blind(why)), _) => (
                format!(
                    "{}: {why}; a write in place or metadata change it cannot check for \
                     other hard links is refused",
                    crate::denials::UNCHECKED_RULE
                ),
                false,
            ),
            (None, links) => match links {
                Some(Linked {
                    names,
                    unnamed,
                    metadata,
                }) => (
                    format!(
                        "{} ({names} names{}): {} ({syscall}) in place changes every name of \
                         it, and another may lie outside the writable roots; write a new file \
                         and rename it over this one (cp F F.new && mv F.new F{}) to break the \
                         link",
                        crate::denials::HARD_LINK_RULE,
                        if unnamed {
                            ", reached through a descriptor whose own name was removed"
                        } else {
                            ""
                        },
                        if metadata {
                            crate::denials::HARD_LINK_METADATA
                        } else {
                            "writing the file"
                        },
                        if metadata {
                            ", then chmod or touch the new one"
                        } else {
                            ""
                        },
                    ),
                    false,
                ),
                None => self.rule_for(&v.path, v.busy),
            },
        };
        DenialRecord {
            syscall: syscall.to_string(),
            path: v.path,
            errno: errno_name(v.errno).to_string(),
            rule,
            grant: grantable.then_some(v.grant),
        }
    }

    /// The resolved profile's rule for `path` (the one truth `explain` shows), and whether
    /// a per-command `-w` grant can lift it.
    fn rule_for(&self, path: &Path, busy: bool) -> (String, bool) {
        let ResolvedFilesystem::Restricted { entries, .. } = &self.filesystem else {
            return ("a read-only mount of the sandbox".into(), false);
        };
        let pa = self.filesystem.access_for(&crate::HostFs, path);
        let entry = pa.entry.and_then(|i| entries.get(i));
        let origin = entry.map(|e| &e.origin);
        match (pa.access, origin) {
            (Access::Deny, origin) => (cordon_policy::EntryOrigin::deny_rule(origin), false),
            (_, Some(EntryOrigin::Protected { reason })) => {
                (format!("protected (R-P3): {reason}"), true)
            }
            (_, Some(EntryOrigin::Pinned { protects })) => (
                format!(
                    "pinned (R-P3): cannot be renamed or removed, it keeps {} protected",
                    protects.display()
                ),
                false,
            ),
            (Access::Read, Some(EntryOrigin::Profile { spelling, .. })) => {
                (format!("read-only (entry {spelling})"), true)
            }
            (Access::Read, _) => ("read-only: outside every writable root".into(), true),
            // A file granted on its own is bind-mounted on itself in a directory that is not
            // writable: writable in place, but a rename over it (EBUSY: the mount) or its
            // removal (EROFS: the directory) fails (new-user passes 234 #2 and 237 #2:
            // `sed -i`, `os.replace`, `mv x FILE` and `rm FILE` on a `-w FILE` were told no
            // grant could help). Its directory's grant lets them (the record's grant).
            (Access::Write, _)
                if entry.is_some_and(|e| e.path == path)
                    && cordon_policy::FsView::kind(&crate::HostFs, path)
                        == Some(cordon_policy::paths::FileKind::File) =>
            {
                (crate::denials::FILE_GRANT_RULE.into(), true)
            }
            (Access::Write, _) if busy => ("a mount point of the sandbox".into(), false),
            (Access::Write, _) => ("a read-only mount of the sandbox".into(), false),
        }
    }
}

/// `EROFS` → `"EROFS"`.
pub fn errno_name(e: i32) -> &'static str {
    match e {
        libc::EROFS => "EROFS",
        libc::EACCES => "EACCES",
        libc::EBUSY => "EBUSY",
        libc::EPERM => "EPERM",
        libc::ENETUNREACH => "ENETUNREACH",
        libc::EHOSTUNREACH => "EHOSTUNREACH",
        libc::ECONNREFUSED => "ECONNREFUSED",
        _ => "EIO",
    }
}

/// Steps of one judgment. `None`: CONTINUE (allowed, or not sure).
fn judge_call(sup: &Supervisor, tid: u32, args: &[u64; 6], call: PathCall) -> Option<Verdict> {
    judge_path(sup, tid, args, call).or_else(|| judge_linked(sup, tid, args, call))
}

/// The hard-link refusal ([`judge_file`]) for a write in place that [`judge_path`] let
/// through, on the file the kernel will reach: through symlinks (unless `O_NOFOLLOW`) and
/// through `/proc/self/fd/N`, `/dev/fd/N`, `/dev/stdout` as the *caller's* descriptors
/// (attack pass 48, N1: `ln -s linked l; echo x >> l` and a read-only descriptor reopened
/// for writing through `/proc/self/fd/N` wrote the file outside).
fn judge_linked(sup: &Supervisor, tid: u32, args: &[u64; 6], call: PathCall) -> Option<Verdict> {
    let (dirfd, ptr, follow) = match call {
        PathCall::Open { dirfd, path, flags } => {
            let flags = flags.map_or(libc::O_CREAT | libc::O_WRONLY | libc::O_TRUNC, |i| {
                args[i] as u32 as i32
            });
            let writes = flags & libc::O_ACCMODE != libc::O_RDONLY || flags & libc::O_TRUNC != 0;
            if !writes || flags & (libc::O_TMPFILE & !libc::O_DIRECTORY) != 0 {
                return None;
            }
            (
                dirfd.map(|i| args[i]),
                args[path],
                flags & libc::O_NOFOLLOW == 0,
            )
        }
        PathCall::Truncate { path } => (None, args[path], true),
        PathCall::Meta { at, mode, owner } => return judge_meta(sup, tid, args, at, mode, owner),
        _ => return None,
    };
    let walked = match read_c_string_checked(tid, ptr) {
        Ok(Some(raw)) if !raw.is_empty() => linked_target(tid, dirfd, raw, follow),
        Ok(_) => Ok(None), // the kernel fails it (EFAULT, ENOENT)
        Err(b) => Err(b),
    };
    match walked {
        Ok(Some((target, shown, unnamed))) => {
            refuse_linked(sup, &target, shown, unnamed, Change::Bytes)
        }
        Ok(None) => None,
        Err(b) => Some(Verdict::blind(tid, dirfd, ptr, b)),
    }
}

/// A write-open (`open`/`openat`/`creat` with `O_WRONLY`, `O_RDWR` or `O_TRUNC`) the
/// supervisor performs itself ([`open_judged`]): its directory descriptor, path pointer,
/// flags and mode. `None` for every other call, and for `O_TMPFILE` (a new unnamed file:
/// nothing existing is written) and `O_PATH` (no access at all) opens, which the kernel
/// performs (CONTINUE): the flags travel in a register, not in memory the caller can
/// change after the check.
fn write_open(args: &[u64; 6], call: PathCall) -> Option<(Option<u64>, u64, i32, u32)> {
    let PathCall::Open { dirfd, path, flags } = call else {
        return None;
    };
    let (flags, mode) = match flags {
        Some(i) => (args[i] as u32 as i32, args[i + 1] as u32),
        None => (
            libc::O_CREAT | libc::O_WRONLY | libc::O_TRUNC,
            args[path + 1] as u32,
        ),
    };
    let writes = flags & libc::O_ACCMODE != libc::O_RDONLY || flags & libc::O_TRUNC != 0;
    let tmpfile = flags & (libc::O_TMPFILE & !libc::O_DIRECTORY) != 0;
    (writes && !tmpfile && flags & libc::O_PATH == 0)
        .then(|| (dirfd.map(|i| args[i]), args[path], flags, mode & 0o7777))
}

/// The flags init opens a judged file with for the caller: the caller's, less what only
/// the lookup uses (`O_CREAT`, `O_EXCL`, `O_NOFOLLOW`: the file is already found) and
/// `O_CLOEXEC` (the caller's descriptor gets it by `newfd_flags`), plus `O_CLOEXEC` for
/// init's own copy and `O_NOCTTY` (a terminal must not become init's controlling
/// terminal).
fn reopen_flags(flags: i32) -> i32 {
    flags & !(libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW | libc::O_CLOEXEC)
        | libc::O_CLOEXEC
        | libc::O_NOCTTY
}

/// Opens the file `pinned` (an `O_PATH` descriptor) again, through `/proc/self/fd/N`:
/// that inode, not a name looked up again. Init has the command's uid, gids and Landlock
/// domain (it restricted itself before it forked the command), and no capability that
/// bears on opening a file (`CAP_SYS_PTRACE` only), so the kernel's checks give what they
/// give the command. Returns the errno on failure.
fn open_pinned(pinned: &OwnedFd, flags: i32) -> Result<OwnedFd, i32> {
    open_beneath_flags(
        libc::AT_FDCWD,
        format!("/proc/self/fd/{}", pinned.as_raw_fd()).as_bytes(),
        flags,
        0,
    )
}

/// `openat(dir, name, flags, mode)` (no `O_PATH` added), or the errno.
fn open_beneath_flags(dir: RawFd, name: &[u8], flags: i32, mode: u32) -> Result<OwnedFd, i32> {
    let c = CString::new(name).map_err(|_| libc::EINVAL)?;
    // SAFETY: `c` is a valid NUL-terminated name; `dir` is an open descriptor or AT_FDCWD.
    let fd = unsafe { libc::openat(dir, c.as_ptr(), flags | libc::O_CLOEXEC, mode) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error()
            .raw_os_error()
            .unwrap_or(libc::EIO));
    }
    // SAFETY: the kernel returned a new descriptor that we own.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// A write-open judged and performed by the supervisor (the race of CONTINUE, attack pass
/// t15: a command renamed names on the path between the check and the kernel's open and
/// wrote a host-made hard link). The path is read once from the caller's memory and
/// walked once by descriptor ([`walk`]); what the walk ends on is what is opened:
/// - an existing regular file: refused as today when it has another name
///   ([`refuse_linked`]), else opened again through its pinned descriptor
///   ([`open_pinned`]);
/// - nothing by that name, with `O_CREAT`: made in the pinned directory with
///   `O_CREAT|O_EXCL`, the caller's mode and umask ([`create_in`]); something that
///   appears meanwhile is walked again (twice at most);
/// - nothing, without `O_CREAT`: `ENOENT`; a directory: `EISDIR`; a socket: `ENXIO`; a
///   symlink the call does not follow: `ELOOP` (`EEXIST` with `O_EXCL`);
/// - a FIFO, opened without blocking the serve loop ([`Answer::Wait`]); a device node,
///   opened again like a file (`/dev/tty`: the caller's controlling terminal, [`ctty`]).
///
/// `Err`: a refusal to record (a hard link, a file the check could not look at).
fn open_judged(
    sup: &Supervisor,
    tid: u32,
    dirfd: Option<u64>,
    ptr: u64,
    flags: i32,
    mode: u32,
) -> Result<Answer, Verdict> {
    let raw = match read_c_string_checked(tid, ptr) {
        Ok(Some(raw)) if raw.is_empty() => return Ok(Answer::Deny(libc::ENOENT)),
        Ok(Some(raw)) => raw,
        Ok(None) if ptr == 0 => return Ok(Answer::Deny(libc::EFAULT)),
        Ok(None) => return Ok(Answer::Deny(libc::ESRCH)), // the caller is gone
        Err(b) => return Err(Verdict::blind(tid, dirfd, ptr, b)),
    };
    let slash = raw.ends_with(b"/");
    let creat = flags & libc::O_CREAT != 0;
    // (`O_CREAT|O_EXCL` never comes here: [`handle`] leaves it to the kernel.) A trailing
    // slash always follows the last symlink.
    let follow = slash || flags & libc::O_NOFOLLOW == 0;
    let cloexec = flags & libc::O_CLOEXEC != 0;
    let blind = |b| Verdict::blind(tid, dirfd, ptr, b);
    for _ in 0..3 {
        // Lowered at another process's /proc/<pid>, up to the open.
        let mut lowered = None;
        match walk(tid, dirfd, raw.clone(), follow, Some(&mut lowered)).map_err(blind)? {
            Found::Fails(e) => return Ok(Answer::Deny(e)),
            Found::Dir => return Ok(Answer::Deny(libc::EISDIR)),
            Found::Missing(..) if !creat => return Ok(Answer::Deny(libc::ENOENT)),
            Found::Missing(..) if slash => return Ok(Answer::Deny(libc::EISDIR)),
            Found::Missing(dir, name) => match create_in(tid, &dir, &name, flags, mode) {
                Ok(fd) => {
                    return Ok(Answer::Install {
                        fd,
                        cloexec,
                        made: Some(Made { dir, name }),
                    })
                }
                Err(libc::EEXIST) => continue, // made meanwhile: walk again
                Err(e) => return Ok(Answer::Deny(e)),
            },
            Found::File(f, shown, unnamed) => {
                return reopen(sup, tid, f, shown, unnamed, flags, slash);
            }
        }
    }
    // A name that keeps appearing and vanishing under the walk: only a race does that.
    Ok(Answer::Deny(libc::EAGAIN))
}

/// `truncate(path, len)` performed by the supervisor, for the race [`open_judged`] closes:
/// the path read and walked once, a regular file with another name refused
/// ([`refuse_linked`]), any other opened again for writing through its pinned descriptor
/// and `ftruncate`d (the kernel needs write permission on the file for both). The kernel's
/// errors otherwise: `ENOENT`, `EISDIR`, `EINVAL` for what is not a regular file.
fn truncate_judged(sup: &Supervisor, tid: u32, args: &[u64; 6]) -> Result<Answer, Verdict> {
    let ptr = args[0];
    let raw = match read_c_string_checked(tid, ptr) {
        Ok(Some(raw)) if raw.is_empty() => return Ok(Answer::Deny(libc::ENOENT)),
        Ok(Some(raw)) => raw,
        Ok(None) if ptr == 0 => return Ok(Answer::Deny(libc::EFAULT)),
        Ok(None) => return Ok(Answer::Deny(libc::ESRCH)),
        Err(b) => return Err(Verdict::blind(tid, None, ptr, b)),
    };
    let slash = raw.ends_with(b"/");
    let mut lowered = None;
    let found = walk(tid, None, raw, true, Some(&mut lowered))
        .map_err(|b| Verdict::blind(tid, None, ptr, b))?;
    let (f, shown, unnamed) = match found {
        Found::Fails(e) => return Ok(Answer::Deny(e)),
        Found::Missing(..) => return Ok(Answer::Deny(libc::ENOENT)),
        Found::Dir => return Ok(Answer::Deny(libc::EISDIR)),
        Found::File(f, shown, unnamed) => (f, shown, unnamed),
    };
    let Ok(st) = super::sys::fstat(f.as_raw_fd()) else {
        return Err(Verdict::unchecked(
            shown,
            Blind("cordon could not stat the file"),
        ));
    };
    match st.st_mode & libc::S_IFMT {
        libc::S_IFDIR => return Ok(Answer::Deny(libc::EISDIR)),
        _ if slash => return Ok(Answer::Deny(libc::ENOTDIR)),
        libc::S_IFREG => {}
        _ => return Ok(Answer::Deny(libc::EINVAL)),
    }
    if let Some(v) = refuse_linked(sup, &f, shown, unnamed, Change::Bytes) {
        return Err(v);
    }
    let fd = match open_pinned(&f, libc::O_WRONLY | libc::O_NOCTTY) {
        Ok(fd) => fd,
        Err(e) => return Ok(Answer::Deny(e)),
    };
    // SAFETY: ftruncate on a descriptor we hold; the length is the caller's.
    if unsafe { libc::ftruncate(fd.as_raw_fd(), args[1] as i64) } < 0 {
        return Ok(Answer::Deny(
            std::io::Error::last_os_error()
                .raw_os_error()
                .unwrap_or(libc::EIO),
        ));
    }
    Ok(Answer::Done(0))
}

/// [`open_judged`] for a file the walk found (an `O_PATH` descriptor `f`).
fn reopen(
    sup: &Supervisor,
    tid: u32,
    f: OwnedFd,
    shown: PathBuf,
    unnamed: bool,
    flags: i32,
    slash: bool,
) -> Result<Answer, Verdict> {
    let Ok(st) = super::sys::fstat(f.as_raw_fd()) else {
        return Err(Verdict::unchecked(
            shown,
            Blind("cordon could not stat the file"),
        ));
    };
    let cloexec = flags & libc::O_CLOEXEC != 0;
    let mine = reopen_flags(flags);
    let kind = st.st_mode & libc::S_IFMT;
    let done = |r: Result<OwnedFd, i32>| match r {
        Ok(fd) => Ok(Answer::Install {
            fd,
            cloexec,
            made: None,
        }),
        Err(e) => Ok(Answer::Deny(e)),
    };
    match kind {
        libc::S_IFDIR => Ok(Answer::Deny(libc::EISDIR)),
        libc::S_IFLNK => Ok(Answer::Deny(libc::ELOOP)), // O_NOFOLLOW
        _ if slash => Ok(Answer::Deny(libc::ENOTDIR)),
        libc::S_IFSOCK => Ok(Answer::Deny(libc::ENXIO)),
        libc::S_IFREG => {
            if let Some(v) = refuse_linked(sup, &f, shown, unnamed, Change::Bytes) {
                return Err(v);
            }
            done(open_pinned(&f, mine))
        }
        libc::S_IFIFO => {
            // Never blocks the serve loop: without a reader, a writer's open waits on a
            // thread of its own (`ENXIO` is the kernel's answer to a non-blocking one).
            match open_pinned(&f, mine | libc::O_NONBLOCK) {
                Ok(fd) => {
                    if flags & libc::O_NONBLOCK == 0 {
                        if let Err(e) = super::sys::set_status_flags(fd.as_raw_fd(), mine) {
                            return Ok(Answer::Deny(e.raw_os_error().unwrap_or(libc::EIO)));
                        }
                    }
                    Ok(Answer::Install {
                        fd,
                        cloexec,
                        made: None,
                    })
                }
                Err(libc::ENXIO) if flags & libc::O_NONBLOCK == 0 => Ok(Answer::Wait(Waiting {
                    pinned: f,
                    flags: mine,
                    cloexec,
                    fifo: true,
                })),
                Err(e) => Ok(Answer::Deny(e)),
            }
        }
        libc::S_IFCHR if st.st_rdev == libc::makedev(5, 0) => match ctty(tid, &f, mine) {
            Ok(r) => done(r),
            Err(why) => Err(Verdict::unchecked(shown, why)),
        },
        // The memory devices (`/dev/null`, `zero`, `full`, `random`, `urandom`), `ptmx`,
        // the pseudo-terminals: an open that never waits.
        libc::S_IFCHR
            if matches!(libc::major(st.st_rdev), 1 | 136..=143)
                || st.st_rdev == libc::makedev(5, 2) =>
        {
            done(open_pinned(&f, mine))
        }
        // Any other device may wait in its driver's open (a serial line's carrier).
        _ => Ok(Answer::Wait(Waiting {
            pinned: f,
            flags: mine,
            cloexec,
            fifo: false,
        })),
    }
}

/// Makes the file `name` in the pinned directory `dir` for the caller: `O_CREAT|O_EXCL`
/// (never an existing name, never through a symlink), the caller's `mode` under the
/// caller's umask (`Umask:` of `/proc/<tid>/status`, set on init for the call: the kernel
/// applies the umask itself, or the directory's default ACL instead of it). The file is
/// owned as the command's would be (init has its uid and gids).
fn create_in(
    tid: u32,
    dir: &OwnedFd,
    name: &CString,
    flags: i32,
    mode: u32,
) -> Result<OwnedFd, i32> {
    let umask = std::fs::read_to_string(format!("/proc/{tid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("Umask:"))
                .and_then(|v| u32::from_str_radix(v.trim(), 8).ok())
        })
        .ok_or(libc::ESRCH)?;
    let flags = reopen_flags(flags) | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW;
    // The umask is init's, not the thread's (init's seccomp filter refuses `unshare`, so
    // the serve thread cannot have one of its own): set for this one call, put back after.
    // Init's other threads make no files while the command runs.
    // SAFETY: umask only swaps the process's file mode creation mask.
    let old = unsafe { libc::umask(umask as libc::mode_t) };
    let r = open_beneath_flags(dir.as_raw_fd(), name.as_bytes(), flags, mode);
    // SAFETY: as above.
    unsafe { libc::umask(old) };
    r
}

/// The caller's controlling terminal for an open of `/dev/tty` (`pinned`): what that open
/// reaches depends on who opens it. No controlling terminal: `ENXIO`, as the kernel says.
/// Init's own session (the caller did not `setsid`): the same terminal, opened by init.
/// Another session: one of the caller's own descriptors open on that terminal, opened
/// again; none: refused (`Err`), never CONTINUE.
fn ctty(tid: u32, pinned: &OwnedFd, flags: i32) -> Result<Result<OwnedFd, i32>, Blind> {
    const NO_CTTY: Blind = Blind(
        "the calling process's controlling terminal is not open on any of its descriptors, \
         so cordon could not open /dev/tty for it",
    );
    // `(session, tty_nr)` from /proc/<pid>/stat (fields 6 and 7, after the command name).
    let stat = |who: &str| -> Option<(i64, u32)> {
        let s = std::fs::read_to_string(format!("/proc/{who}/stat")).ok()?;
        let rest = &s[s.rfind(')')? + 1..];
        let f: Vec<&str> = rest.split_whitespace().collect();
        Some((
            f.get(3)?.parse().ok()?,
            f.get(4)?.parse::<i64>().ok()? as u32,
        ))
    };
    let Some((session, tty_nr)) = stat(&tid.to_string()) else {
        return Ok(Err(libc::ESRCH));
    };
    if tty_nr == 0 {
        return Ok(Err(libc::ENXIO));
    }
    if stat("self") == Some((session, tty_nr)) {
        return Ok(open_pinned(pinned, flags));
    }
    // `tty_nr` is the kernel's `new_encode_dev`.
    let dev = libc::makedev(
        (tty_nr >> 8) & 0xfff,
        (tty_nr & 0xff) | ((tty_nr >> 12) & 0xfff00),
    );
    let fds = std::fs::read_dir(format!("/proc/{tid}/fd")).map_err(|_| NO_CTTY)?;
    for e in fds.flatten() {
        let link = e.path();
        let Ok(c) = CString::new(link.as_os_str().as_bytes()) else {
            continue;
        };
        // SAFETY: stat is plain old data; the kernel fills it.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        // SAFETY: `c` is NUL-terminated; `st` is valid for writes.
        if unsafe { libc::stat(c.as_ptr(), &mut st) } == 0
            && st.st_mode & libc::S_IFMT == libc::S_IFCHR
            && st.st_rdev == dev
        {
            return Ok(open_beneath_flags(
                libc::AT_FDCWD,
                link.as_os_str().as_bytes(),
                flags,
                0,
            ));
        }
    }
    Err(NO_CTTY)
}

/// What a call refused by the hard-link rule was to change.
#[derive(Debug, Clone, Copy)]
enum Change {
    /// The bytes (open for writing, truncate).
    Bytes,
    /// The metadata; `mode`: the new mode of a `chmod`; `owner`: the new uid and gid of a
    /// `chown` (`u32::MAX`: unchanged).
    Metadata {
        mode: Option<u32>,
        owner: Option<(u32, u32)>,
    },
}

/// The hard-link refusal for a metadata change ([`PathCall::Meta`]; attack pass 48, N3:
/// `chmod 0666`, `utime` and a `user.*` attribute through a host-made hard link changed
/// the store file outside). The file is the one the kernel will act on: a descriptor
/// (`fchmod`, a NULL path for `utimensat`, an empty one with `AT_EMPTY_PATH`) as the
/// caller's own open file, a path walked as for a write ([`linked_target`]), its last
/// symlink followed unless the call says not to (`AT_SYMLINK_NOFOLLOW`, `lchown`: then a
/// symlink is what changes, and it is not a regular file).
fn judge_meta(
    sup: &Supervisor,
    tid: u32,
    args: &[u64; 6],
    at: MetaAt,
    mode: Option<usize>,
    owner: Option<usize>,
) -> Option<Verdict> {
    let walked = meta_target(tid, args, at);
    let (target, shown, unnamed) = match walked {
        Ok(Some(t)) => t,
        Ok(None) => return None,
        Err(b) => {
            let (dirfd, ptr) = match at {
                MetaAt::Fd(i) => (Some(args[i]), 0),
                MetaAt::Path { dirfd, path, .. } => (dirfd.map(|i| args[i]), args[path]),
            };
            return Some(Verdict::blind(tid, dirfd, ptr, b));
        }
    };
    let mode = mode.map(|i| args[i] as u32);
    let owner = owner.map(|i| (args[i] as u32, args[i + 1] as u32));
    refuse_linked(
        sup,
        &target,
        shown,
        unnamed,
        Change::Metadata { mode, owner },
    )
}

/// The file a metadata call acts on ([`judge_meta`]).
fn meta_target(tid: u32, args: &[u64; 6], at: MetaAt) -> Walked {
    match at {
        MetaAt::Fd(i) => callers_fd(tid, args[i]),
        MetaAt::Path {
            dirfd,
            path,
            flags,
            nofollow,
            null_is_fd,
        } => {
            let flags = flags.map_or(0, |i| args[i] as u32 as i32);
            let ptr = args[path];
            let raw = if ptr == 0 {
                Vec::new()
            } else {
                match read_c_string_checked(tid, ptr)? {
                    Some(raw) => raw,
                    None => return Ok(None), // EFAULT, ENAMETOOLONG: the kernel's
                }
            };
            if raw.is_empty() {
                // The descriptor itself, or a call the kernel fails (ENOENT, EFAULT).
                let by_fd = (ptr == 0 && null_is_fd) || flags & libc::AT_EMPTY_PATH != 0;
                match dirfd {
                    Some(d) if by_fd => callers_fd(tid, args[d]),
                    _ => Ok(None),
                }
            } else {
                let follow = !nofollow && flags & libc::AT_SYMLINK_NOFOLLOW == 0;
                linked_target(tid, dirfd.map(|i| args[i]), raw, follow)
            }
        }
    }
}

/// The caller's open descriptor `fd` as an `O_PATH` descriptor of the same file (through
/// the kernel's magic link `/proc/<tid>/fd/N`), its name, and whether that name was
/// removed ([`Walked`]). `AT_FDCWD` (the cwd: a directory) and a bad descriptor give
/// nothing to check; a caller init may not inspect is [`NOT_INSPECTABLE`].
fn callers_fd(tid: u32, fd: u64) -> Walked {
    let fd = fd as u32 as i32;
    if fd < 0 {
        return Ok(None);
    }
    let link = format!("/proc/{tid}/fd/{fd}");
    let f = match open_beneath(libc::AT_FDCWD, link.as_bytes(), 0) {
        Ok(f) => f,
        Err(libc::EACCES | libc::EPERM) => return Err(NOT_INSPECTABLE),
        Err(e) => return lookup_error(e),
    };
    let named = real_path(f.as_raw_fd());
    let unnamed = named.is_none();
    Ok(Some((
        f,
        named.unwrap_or_else(|| PathBuf::from(link)),
        unnamed,
    )))
}

/// The refusal itself: `target` is a regular file with another name (or, reached through
/// a descriptor whose name was removed, any name at all), and not one of init's standard
/// descriptors (Landlock grants those). A metadata change is let through on a read-only
/// mount (the kernel answers `EROFS` itself, and nothing changes) and when the new mode of
/// a `chmod` is already the file's (nothing changes; package managers set the executable
/// bit on files that often have it already).
fn refuse_linked(
    sup: &Supervisor,
    target: &OwnedFd,
    shown: PathBuf,
    unnamed: bool,
    change: Change,
) -> Option<Verdict> {
    let Ok(st) = super::sys::fstat(target.as_raw_fd()) else {
        return Some(Verdict::unchecked(
            shown,
            Blind("cordon could not stat the file"),
        ));
    };
    // A file of the host's, handed in on a descriptor (any type: a device too): its mode,
    // times and attributes are not the command's, whatever its names. Unknown mounts
    // (no `STATX_MNT_ID`, no mount table) count as the host's.
    if matches!(change, Change::Metadata { .. }) {
        let mounts = sup.mounts.get_or_init(|| {
            std::fs::read_to_string("/proc/self/mountinfo")
                .ok()
                .map(|t| {
                    t.lines()
                        .filter_map(|l| l.split(' ').next()?.parse().ok())
                        .collect()
                })
        });
        let ours = match (mounts, super::sys::mount_of_fd(target.as_raw_fd())) {
            (Some(m), Ok(Some(at))) => m.contains(&at.id),
            _ => false,
        };
        if !ours {
            return Some(Verdict::unchecked(shown, HANDED_IN));
        }
        // A device node is the host's wherever the sandbox shows it (its `/dev` binds the
        // host's nodes: `chmod /dev/null` inside changed the host's; the command cannot
        // make device nodes of its own).
        if matches!(st.st_mode & libc::S_IFMT, libc::S_IFCHR | libc::S_IFBLK) {
            return Some(Verdict::unchecked(shown, HOST_DEVICE));
        }
    }
    // Another name, or only names elsewhere (the one it was opened by is gone).
    let elsewhere = st.st_nlink >= 2 || (unnamed && st.st_nlink >= 1);
    if st.st_mode & libc::S_IFMT != libc::S_IFREG
        || !elsewhere
        || sup.stdio.contains(&(st.st_dev, st.st_ino))
        || sup.own_devices.contains(&st.st_dev)
    {
        return None;
    }
    let made_here =
        identity(target, &st).is_some_and(|k| sup.made_here.lock().is_ok_and(|m| m.contains(&k)));
    if made_here {
        return None;
    }
    if let Change::Metadata { mode, owner } = change {
        // The kernel keeps the low 12 bits (`S_IALLUGO`) of a new mode.
        let same_mode = mode.is_some_and(|m| m & 0o7777 == st.st_mode & 0o7777);
        // A `chown` to the file's own owner and group changes nothing, unless it clears
        // a set-user-ID or set-group-ID bit (the kernel may clear set-group-ID even
        // without group execute: attack pass 50, N3) or a file capability.
        let same_owner = owner.is_some_and(|(u, g)| {
            (u == u32::MAX || u == st.st_uid)
                && (g == u32::MAX || g == st.st_gid)
                && st.st_mode & (libc::S_ISUID | libc::S_ISGID) == 0
                && !has_file_capability(target.as_raw_fd())
        });
        if same_mode || same_owner || read_only_mount(target.as_raw_fd()) == Some(true) {
            return None;
        }
    }
    Some(Verdict {
        path: shown.clone(),
        errno: libc::EACCES,
        grant: shown,
        busy: false,
        links: Some(Linked {
            // `nlink_t` is 64-bit on x86_64, 32-bit on aarch64.
            #[allow(clippy::unnecessary_cast)]
            names: st.st_nlink as u64,
            unnamed,
            metadata: matches!(change, Change::Metadata { .. }),
        }),
        blind: None,
    })
}

/// Why the hard-link check could not look at a call's file. The call is then refused
/// (`EACCES`): the check is all that stops a write through a host-made hard link, so what
/// it cannot see it does not let through (attack pass 49: a cwd deeper than `PATH_MAX`, a
/// directory on the way the command made unsearchable, and a process that made itself
/// non-dumpable each got past a check that gave up and answered CONTINUE).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Blind(&'static str);

/// What a non-dumpable caller gives: procfs refuses init a look at its memory and its
/// descriptors (the ptrace access check).
const NOT_INSPECTABLE: Blind = Blind(
    "the calling process cannot be inspected: it made itself non-dumpable \
     (prctl PR_SET_DUMPABLE 0) or runs a program it may not read",
);

/// A metadata change of a file reached through a mount outside the sandbox's
/// ([`Supervisor::mounts`]).
const HANDED_IN: Blind = Blind(
    "the file was handed to the command from outside the sandbox (its stdin, stdout or \
     stderr, or a descriptor passed to it), so its mode, times and attributes are the \
     host's; change them outside cordon",
);

/// A metadata change of a device node ([`refuse_linked`]).
const HOST_DEVICE: Blind = Blind(
    "it is a device node of the host's (the sandbox's /dev shows the host's nodes), so \
     its mode, owner and attributes are the host's; change them outside cordon",
);

/// A `/proc` name on the path that init could not follow as the caller would.
const PROC_UNRESOLVED: Blind = Blind("cordon could not follow a /proc name on the path");

/// A file found for the hard-link check: an `O_PATH` descriptor of it, its name in the
/// caller's view, and whether it was reached through a descriptor whose name was removed.
/// `Ok(None)`: nothing to check (the kernel fails the call itself, or makes a new file).
type Walked = Result<Option<(OwnedFd, PathBuf, bool)>, Blind>;

/// An error of init's own lookup: one the kernel gives the caller as well (a missing
/// component, not a directory, a loop, a name too long: the call fails the same way) is
/// nothing to check; any other means init could not see what the caller may reach.
fn lookup_error(e: i32) -> Walked {
    match e {
        libc::ENOENT | libc::ENOTDIR | libc::ELOOP | libc::ENAMETOOLONG | libc::EBADF => Ok(None),
        libc::ESRCH => Ok(None), // the caller is gone
        libc::EACCES | libc::EPERM => Err(Blind(
            "cordon's check may not look up a directory on the way to the file",
        )),
        _ => Err(Blind("cordon's check failed to look the file up")),
    }
}

/// `openat(dir, name, O_PATH | extra)`, or the errno.
fn open_beneath(dir: RawFd, name: &[u8], extra: libc::c_int) -> Result<OwnedFd, i32> {
    let c = CString::new(name).map_err(|_| libc::EINVAL)?;
    // SAFETY: `c` is a valid NUL-terminated name; `dir` is an open descriptor.
    let fd = unsafe { libc::openat(dir, c.as_ptr(), libc::O_PATH | libc::O_CLOEXEC | extra) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error()
            .raw_os_error()
            .unwrap_or(libc::EIO));
    }
    // SAFETY: the kernel returned a new descriptor that we own.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Whether `dir` is a directory of procfs.
fn on_procfs(dir: RawFd) -> bool {
    super::sys::fs_type(dir) == Some(libc::PROC_SUPER_MAGIC)
}

/// The file a path reaches for the caller `tid` ([`Walked`]): walked one component at a
/// time by descriptor from the caller's own root, cwd or `dirfd` (opened through the
/// kernel's magic links `/proc/<tid>/root`, `cwd`, `fd/N`: no path text is read back, so
/// neither its length nor an unsearchable directory above the cwd matters; `..` is the
/// kernel's), every symlink followed by hand (at most 40), `self` and `thread-self` at a
/// procfs root read as the caller's (so `/proc/self/…`, `/dev/fd/…`, `/dev/stdout` are the
/// caller's, not init's), and a procfs magic link (`/proc/<pid>/fd/N`, `cwd`, `root`)
/// followed through the kernel, which reaches the caller's open file or directory.
fn linked_target(tid: u32, dirfd: Option<u64>, raw: Vec<u8>, follow: bool) -> Walked {
    match walk(tid, dirfd, raw, follow, None)? {
        Found::File(f, shown, unnamed) => Ok(Some((f, shown, unnamed))),
        _ => Ok(None),
    }
}

/// What [`walk`] found at the end of a path.
enum Found {
    /// The file ([`Walked`]: an `O_PATH` descriptor, its name, reached through a removed
    /// name).
    File(OwnedFd, PathBuf, bool),
    /// Nothing by the last name, in this directory (pinned, `O_PATH`).
    Missing(OwnedFd, CString),
    /// The path ends in a directory by `.`, `..` or `/`.
    Dir,
    /// The kernel's lookup fails with this errno as well (`ENOENT` on the way, `ENOTDIR`,
    /// `ELOOP`, `ENAMETOOLONG`, `EBADF`).
    Fails(i32),
}

/// [`lookup_error`] for [`walk`]. `lowered`: init looks without `CAP_SYS_PTRACE`
/// ([`PtraceLowered`]), as the command would, so a refusal is the kernel's for the
/// command too.
fn walk_error(e: i32, lowered: bool) -> Result<Found, Blind> {
    if lowered && matches!(e, libc::EACCES | libc::EPERM) {
        return Ok(Found::Fails(e));
    }
    match lookup_error(e) {
        Ok(_) => Ok(Found::Fails(if e == libc::ESRCH {
            libc::ENOENT
        } else {
            e
        })),
        Err(b) => Err(b),
    }
}

/// A `/proc/<pid>` of a process other than the caller's, on the path of a write-open,
/// when init could not lower its `CAP_SYS_PTRACE` to look further as the command would.
const OTHER_PROCESS: Blind = Blind(
    "the path goes through /proc/<pid> of another process, and cordon could not give up \
     its own right to look into other processes to open it as the command would",
);

/// `CAP_SYS_PTRACE` out of the calling thread's effective set while this lives
/// ([`walk`]): init keeps it to inspect the caller (a non-dumpable one too), but what
/// another process's `/proc/<pid>` gives (its descriptors, its memory) must be what the
/// command may reach, no more.
struct PtraceLowered(bool);

impl PtraceLowered {
    fn new() -> Option<PtraceLowered> {
        super::sys::set_effective_cap(super::caps::CAP_SYS_PTRACE, false)
            .ok()
            .map(PtraceLowered)
    }
}

impl Drop for PtraceLowered {
    fn drop(&mut self) {
        if self.0 {
            // Failing leaves it lowered: the supervisor then sees less, never more.
            let _ = super::sys::set_effective_cap(super::caps::CAP_SYS_PTRACE, true);
        }
    }
}

/// [`linked_target`]'s walk. `unprivileged`: `None` for the hard-link check alone (init
/// looks with all it has); `Some` for a write-open init performs itself
/// ([`open_judged`]): at a `/proc/<pid>` of another thread group than the caller's,
/// `CAP_SYS_PTRACE` is lowered for the rest of the walk and the open, held in the slot.
fn walk(
    tid: u32,
    dirfd: Option<u64>,
    raw: Vec<u8>,
    follow: bool,
    unprivileged: Option<&mut Option<PtraceLowered>>,
) -> Result<Found, Blind> {
    let mut none = None;
    let own_proc_only = unprivileged.is_some();
    let unprivileged = unprivileged.unwrap_or(&mut none);
    let path = PathBuf::from(OsStr::from_bytes(&raw));
    let proc_dir = |what: &str| -> Result<OwnedFd, i32> {
        open_beneath(libc::AT_FDCWD, format!("/proc/{tid}/{what}").as_bytes(), 0)
    };
    let start = if path.is_absolute() {
        "root".to_string()
    } else {
        match dirfd.map(|d| d as u32 as i32) {
            None | Some(libc::AT_FDCWD) => "cwd".to_string(),
            Some(fd) if fd >= 0 => format!("fd/{fd}"),
            _ => return Ok(Found::Fails(libc::EBADF)),
        }
    };
    let mut dir = match proc_dir(&start) {
        Ok(d) => d,
        Err(libc::EACCES | libc::EPERM) => return Err(NOT_INSPECTABLE),
        Err(e) => return walk_error(e, unprivileged.is_some()),
    };
    // The name as the caller sees it, for the record; unknown when its text is longer
    // than the kernel gives back (then the file's own path, or the path as given).
    let mut logical: Option<PathBuf> = if path.is_absolute() {
        Some(PathBuf::from("/"))
    } else {
        std::fs::read_link(format!("/proc/{tid}/{start}"))
            .ok()
            .filter(|p| p.is_absolute())
    };
    let mut queue: std::collections::VecDeque<std::ffi::OsString> = path
        .components()
        .map(|c| c.as_os_str().to_owned())
        .collect();
    let mut hops = 0;
    let shown = |logical: &Option<PathBuf>, f: &OwnedFd, name: &OsStr| -> PathBuf {
        logical
            .as_ref()
            .map(|l| l.join(name))
            .or_else(|| real_path(f.as_raw_fd()))
            .unwrap_or_else(|| path.clone())
    };
    while let Some(comp) = queue.pop_front() {
        match comp.as_bytes() {
            b"/" => {
                dir = match proc_dir("root") {
                    Ok(d) => d,
                    Err(libc::EACCES | libc::EPERM) => return Err(NOT_INSPECTABLE),
                    Err(e) => return walk_error(e, unprivileged.is_some()),
                };
                logical = Some(PathBuf::from("/"));
            }
            b"." | b"" => {}
            b".." => {
                dir = match open_beneath(dir.as_raw_fd(), b"..", libc::O_DIRECTORY) {
                    Ok(d) => d,
                    Err(e) => return walk_error(e, unprivileged.is_some()),
                };
                if let Some(l) = logical.as_mut() {
                    l.pop();
                }
            }
            name => {
                let last = queue.is_empty();
                // Asked only where it matters (`self`, a link): a `statfs` per component
                // would be on every trapped write-open's path.
                let procfs = std::cell::OnceCell::new();
                let procfs = || *procfs.get_or_init(|| on_procfs(dir.as_raw_fd()));
                // `/proc/self` and `/proc/thread-self` name their reader: the caller's
                // process (its thread group, as the kernel reads it: attack pass 50, N2: a
                // thread with a descriptor table of its own) and thread.
                let own;
                let name: &[u8] = match name {
                    b"self" | b"thread-self" if procfs() => {
                        let Ok(tgid) = super::unix_guard::tgid_of(tid) else {
                            return Err(NOT_INSPECTABLE);
                        };
                        own = if name == b"self" {
                            format!("{tgid}")
                        } else {
                            format!("{tgid}/task/{tid}")
                        };
                        own.as_bytes()
                    }
                    n => n,
                };
                if own_proc_only
                    && !name.is_empty()
                    && name.iter().all(u8::is_ascii_digit)
                    && procfs()
                    && super::sys::fstat(dir.as_raw_fd()).is_ok_and(|st| st.st_ino == 1)
                {
                    let pid = std::str::from_utf8(name).ok().and_then(|n| n.parse().ok());
                    let own = super::unix_guard::tgid_of(tid).ok();
                    let theirs = pid.and_then(|p: u32| super::unix_guard::tgid_of(p).ok());
                    // SAFETY: getpid has no preconditions.
                    if theirs.is_some() && theirs == Some(unsafe { libc::getpid() }) {
                        // Init itself: a process always reaches its own /proc entries,
                        // lowered capability or not; the command never does (init is not
                        // dumpable), and the kernel refuses it.
                        return Ok(Found::Fails(libc::EACCES));
                    }
                    if theirs != own && unprivileged.is_none() {
                        // From here on, init looks and opens without CAP_SYS_PTRACE: as
                        // the command would (same uid, gids and Landlock domain).
                        *unprivileged = Some(PtraceLowered::new().ok_or(OTHER_PROCESS)?);
                    }
                }
                let f = match open_beneath(dir.as_raw_fd(), name, libc::O_NOFOLLOW) {
                    Ok(f) => f,
                    Err(libc::ENOENT) if last => {
                        let Ok(name) = CString::new(name) else {
                            return Ok(Found::Fails(libc::EINVAL));
                        };
                        return Ok(Found::Missing(dir, name));
                    }
                    // Init holds CAP_SYS_PTRACE in the caller's namespace and reads
                    // `self` as the caller's process: a name it cannot find the caller
                    // cannot either (the kernel fails the call too).
                    Err(e) => return walk_error(e, unprivileged.is_some()),
                };
                let st = match super::sys::fstat(f.as_raw_fd()) {
                    Ok(st) => st,
                    Err(e) => {
                        return walk_error(
                            e.raw_os_error().unwrap_or(libc::EIO),
                            unprivileged.is_some(),
                        )
                    }
                };
                let link = st.st_mode & libc::S_IFMT == libc::S_IFLNK;
                let name_os = OsStr::from_bytes(name);
                // A procfs link (`/proc/<pid>/fd/N`, `cwd`, `root`) is a magic link: the
                // open file or directory itself, not the text it reads as; followed by the
                // kernel, as a last component or on the way.
                if link && (!last || follow) && procfs() {
                    let f = match open_beneath(dir.as_raw_fd(), name, 0) {
                        Ok(f) => f,
                        Err(e @ (libc::EACCES | libc::EPERM)) if unprivileged.is_some() => {
                            return Ok(Found::Fails(e))
                        }
                        Err(libc::EACCES | libc::EPERM) => return Err(NOT_INSPECTABLE),
                        Err(libc::ENOENT | libc::ESRCH) => return Ok(Found::Fails(libc::ENOENT)),
                        Err(_) => return Err(PROC_UNRESOLVED),
                    };
                    let named = real_path(f.as_raw_fd());
                    if last {
                        // No name: the descriptor's own was removed (`(deleted)`).
                        let unnamed = named.is_none();
                        let at = named.unwrap_or_else(|| shown(&logical, &f, name_os));
                        return Ok(Found::File(f, at, unnamed));
                    }
                    logical = named;
                    dir = f;
                    continue;
                }
                if link && (!last || follow) {
                    hops += 1;
                    if hops > 40 {
                        return Ok(Found::Fails(libc::ELOOP));
                    }
                    let target = match super::sys::read_link_at(dir.as_raw_fd(), name) {
                        Ok(t) => t,
                        Err(e) => {
                            return walk_error(
                                e.raw_os_error().unwrap_or(libc::EIO),
                                unprivileged.is_some(),
                            )
                        }
                    };
                    for c in target.components().rev() {
                        queue.push_front(c.as_os_str().to_owned());
                    }
                    continue;
                }
                if last {
                    let at = shown(&logical, &f, name_os);
                    return Ok(Found::File(f, at, false));
                }
                if let Some(l) = logical.as_mut() {
                    l.push(name_os);
                }
                dir = f;
            }
        }
    }
    Ok(Found::Dir)
}

/// The judgment of one trapped call by the paths it names ([`judge_call`]).
fn judge_path(sup: &Supervisor, tid: u32, args: &[u64; 6], call: PathCall) -> Option<Verdict> {
    let sup_ctx = Caller { tid };
    match call {
        PathCall::Open { dirfd, path, flags } => {
            let flags = flags.map_or(libc::O_CREAT | libc::O_WRONLY | libc::O_TRUNC, |i| {
                args[i] as u32 as i32
            });
            if flags & (libc::O_TMPFILE & !libc::O_DIRECTORY) != 0 {
                return None;
            }
            let at = sup_ctx.entry(dirfd.map(|i| args[i]), args[path])?;
            let write_file = flags & libc::O_ACCMODE != libc::O_RDONLY;
            let truncates = flags & libc::O_TRUNC != 0;
            match at.kind() {
                Some(libc::S_IFREG) if write_file || truncates => {
                    judge_file(sup, &at, write_file || (truncates && sup.landlock_truncate))
                }
                Some(_) => None, // a symlink, device, directory…: the kernel decides
                None if flags & libc::O_CREAT != 0 => judge_dir(sup, &at, at.dir.as_raw_fd()),
                None => None, // ENOENT
            }
        }
        PathCall::Create { dirfd, path } => {
            let at = sup_ctx.entry(dirfd.map(|i| args[i]), args[path])?;
            if at.kind().is_some() {
                return None; // EEXIST comes first
            }
            judge_dir(sup, &at, at.dir.as_raw_fd())
        }
        PathCall::Remove { dirfd, path } => {
            let at = sup_ctx.entry(dirfd.map(|i| args[i]), args[path])?;
            at.kind()?;
            judge_dir(sup, &at, at.dir.as_raw_fd()).or_else(|| judge_busy(&at))
        }
        PathCall::Rename {
            old_dirfd,
            old,
            new_dirfd,
            new,
        } => {
            let from = sup_ctx.entry(old_dirfd.map(|i| args[i]), args[old])?;
            let to = sup_ctx.entry(new_dirfd.map(|i| args[i]), args[new])?;
            from.kind()?;
            // Parents on two mounts: EXDEV, before any other check.
            if mount_id(&from.dir)? != mount_id(&to.dir)? {
                return None;
            }
            judge_dir(sup, &to, to.dir.as_raw_fd())
                .or_else(|| judge_dir(sup, &from, from.dir.as_raw_fd()))
                .or_else(|| judge_busy(&from))
                .or_else(|| judge_busy(&to))
        }
        PathCall::Truncate { path } => {
            let at = sup_ctx.entry(None, args[path])?;
            match at.kind() {
                Some(libc::S_IFREG) => judge_file(sup, &at, sup.landlock_truncate),
                _ => None,
            }
        }
        // Landlock does not restrict metadata; a read-only mount refuses it unrecorded.
        PathCall::Meta { .. } => None,
    }
}

struct Caller {
    tid: u32,
}

/// A directory entry as the caller named it: its directory (resolved by the kernel, pinned
/// by an `O_PATH` descriptor), the directory's real path, and the last component.
struct Entry {
    dir: OwnedFd,
    dir_path: PathBuf,
    name: CString,
}

impl Entry {
    fn path(&self) -> PathBuf {
        self.dir_path.join(OsStr::from_bytes(self.name.as_bytes()))
    }

    /// The file type of the entry itself (not following a symlink), or `None` when it does
    /// not exist.
    fn kind(&self) -> Option<u32> {
        super::sys::fstatat_nofollow(self.dir.as_raw_fd(), &self.name)
            .ok()
            .map(|st| st.st_mode & libc::S_IFMT)
    }

    fn open_nofollow(&self) -> Option<OwnedFd> {
        // SAFETY: `name` is NUL-terminated; the directory descriptor is open.
        let fd = unsafe {
            libc::openat(
                self.dir.as_raw_fd(),
                self.name.as_ptr(),
                libc::O_PATH | libc::O_NOFOLLOW | libc::O_CLOEXEC,
            )
        };
        (fd >= 0).then(|| {
            // SAFETY: the kernel returned a new descriptor that we own.
            unsafe { OwnedFd::from_raw_fd(fd) }
        })
    }
}

impl Caller {
    /// Reads the path at `ptr` in the caller's memory and resolves its directory in the
    /// caller's view: relative to `dirfd` (`AT_FDCWD`: the caller's cwd) or its root.
    fn entry(&self, dirfd: Option<u64>, ptr: u64) -> Option<Entry> {
        let raw = read_path(self.tid, ptr)?;
        let mut bytes: &[u8] = &raw;
        while bytes.len() > 1 && bytes.ends_with(b"/") {
            bytes = &bytes[..bytes.len() - 1];
        }
        let p = Path::new(OsStr::from_bytes(bytes));
        let name = p.file_name()?; // `..`, `.`, `/` → None: the kernel decides
        if name == "." || name == ".." {
            return None;
        }
        let parent = p.parent().unwrap_or(Path::new(""));
        let base = if p.is_absolute() {
            format!("/proc/{}/root", self.tid)
        } else {
            match dirfd.map(|d| d as u32 as i32) {
                None | Some(libc::AT_FDCWD) => format!("/proc/{}/cwd", self.tid),
                Some(fd) if fd >= 0 => format!("/proc/{}/fd/{fd}", self.tid),
                Some(_) => return None,
            }
        };
        let rel = parent.strip_prefix("/").unwrap_or(parent);
        let dir_on = Path::new(&base).join(rel);
        let c = CString::new(dir_on.as_os_str().as_bytes()).ok()?;
        // SAFETY: `c` is a valid NUL-terminated path.
        let fd = unsafe {
            libc::open(
                c.as_ptr(),
                libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC,
            )
        };
        if fd < 0 {
            return None;
        }
        // SAFETY: the kernel returned a new descriptor that we own.
        let dir = unsafe { OwnedFd::from_raw_fd(fd) };
        let dir_path = real_path(dir.as_raw_fd())?;
        // procfs is not the profile's business (its access checks are per process, and
        // `/proc/self` would name init here): the kernel decides, unrecorded.
        if dir_path.starts_with("/proc") {
            return None;
        }
        Some(Entry {
            dir,
            dir_path,
            name: CString::new(name.as_bytes()).ok()?,
        })
    }
}

/// Reads a NUL-terminated path (at most `PATH_MAX` bytes) from the caller's memory, page
/// by page (a path near the end of a mapping must not fail the read). An empty path gives
/// `None` ([`read_c_string`] tells it apart).
fn read_path(tid: u32, ptr: u64) -> Option<Vec<u8>> {
    read_c_string(tid, ptr).filter(|p| !p.is_empty())
}

/// [`read_path`], an empty path included (`AT_EMPTY_PATH`).
fn read_c_string(tid: u32, ptr: u64) -> Option<Vec<u8>> {
    let mem = std::fs::File::open(format!("/proc/{tid}/mem")).ok()?;
    read_c_string_in(&mem, ptr)
}

/// [`read_c_string`] from the caller's memory already open as `mem`.
fn read_c_string_in(mem: &std::fs::File, ptr: u64) -> Option<Vec<u8>> {
    use std::os::unix::fs::FileExt;
    let mut out = Vec::new();
    let mut at = ptr;
    while out.len() < libc::PATH_MAX as usize {
        let room = 4096 - (at % 4096) as usize;
        let mut buf = vec![0u8; room];
        let n = mem.read_at(&mut buf, at).ok()?;
        if n == 0 {
            return None;
        }
        if let Some(end) = buf[..n].iter().position(|b| *b == 0) {
            out.extend_from_slice(&buf[..end]);
            return Some(out);
        }
        out.extend_from_slice(&buf[..n]);
        at += n as u64;
    }
    None
}

/// [`read_c_string`] for the hard-link check: a caller init may not inspect is
/// [`NOT_INSPECTABLE`], and a path init cannot read is [`UNREADABLE_PATH`] — never
/// "the kernel fails it too": the kernel reads memory `/proc/<tid>/mem` cannot (a
/// `memfd_secret` page, the `[vvar]` mapping; attack pass 50, N1). `Ok(None)`: a NULL
/// pointer, or the caller gone.
fn read_c_string_checked(tid: u32, ptr: u64) -> Result<Option<Vec<u8>>, Blind> {
    if ptr == 0 {
        return Ok(None);
    }
    match std::fs::File::open(format!("/proc/{tid}/mem")) {
        // The caller is gone: nothing to answer.
        Err(e) if matches!(e.raw_os_error(), Some(libc::ESRCH | libc::ENOENT)) => Ok(None),
        // Anything else is init's own failure, never the kernel's answer to the call
        // (attack pass 51, N2: the command lowered init's RLIMIT_NOFILE with `prlimit`, and
        // EMFILE let every write through).
        Err(_) => Err(NOT_INSPECTABLE),
        Ok(mem) => read_c_string_in(&mem, ptr).map(Some).ok_or(UNREADABLE_PATH),
    }
}

/// A path the caller passed that init could not read from its memory.
const UNREADABLE_PATH: Blind =
    Blind("cordon could not read the path the call names from the calling process's memory");

/// The path of an open descriptor in this process's view (`None` when deleted).
fn real_path(fd: RawFd) -> Option<PathBuf> {
    let p = std::fs::read_link(format!("/proc/self/fd/{fd}")).ok()?;
    (p.is_absolute() && !p.as_os_str().as_bytes().ends_with(b" (deleted)")).then_some(p)
}

/// The mount id of a descriptor (`/proc/self/fdinfo`).
fn mount_id(fd: &OwnedFd) -> Option<u64> {
    let s = std::fs::read_to_string(format!("/proc/self/fdinfo/{}", fd.as_raw_fd())).ok()?;
    s.lines()
        .find_map(|l| l.strip_prefix("mnt_id:"))
        .and_then(|v| v.trim().parse().ok())
}

/// Whether the file open as `fd` (an `O_PATH` descriptor) may carry a file capability
/// (`security.capability`): true unless the attribute is known to be absent.
fn has_file_capability(fd: RawFd) -> bool {
    let Ok(p) = CString::new(format!("/proc/self/fd/{fd}")) else {
        return true;
    };
    // SAFETY: `p` and the name are NUL-terminated; a NULL buffer of size 0 asks the size.
    let r = unsafe {
        libc::getxattr(
            p.as_ptr(),
            c"security.capability".as_ptr(),
            std::ptr::null_mut(),
            0,
        )
    };
    !(r < 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::ENODATA))
}

fn read_only_mount(fd: RawFd) -> Option<bool> {
    // SAFETY: statvfs is plain old data; the kernel fills it.
    let mut vfs: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: `vfs` is a valid statvfs; the descriptor is open.
    (unsafe { libc::fstatvfs(fd, &mut vfs) } == 0).then_some(vfs.f_flag & libc::ST_RDONLY != 0)
}

/// Writing in the directory of `at` (create, remove, rename): `EROFS` on a read-only
/// mount, else `EACCES` when no Landlock rule makes the directory writable.
fn judge_dir(sup: &Supervisor, at: &Entry, dirfd: RawFd) -> Option<Verdict> {
    let errno = if read_only_mount(dirfd)? {
        libc::EROFS
    } else if sup.landlock_denies(&at.dir_path) {
        libc::EACCES
    } else {
        return None;
    };
    Some(Verdict {
        path: at.path(),
        errno,
        grant: at.dir_path.clone(),
        busy: false,
        links: None,
        blind: None,
    })
}

/// Writing the existing regular file `at` (open for writing, truncate). `landlock_checks`:
/// Landlock handles this access (else only a read-only mount refuses it). A file with more
/// than one name is judged after this, on the file the kernel will reach
/// ([`judge_linked`]).
fn judge_file(sup: &Supervisor, at: &Entry, landlock_checks: bool) -> Option<Verdict> {
    let f = at.open_nofollow()?;
    let st = super::sys::fstat(f.as_raw_fd()).ok()?;
    let errno = if read_only_mount(f.as_raw_fd())? {
        libc::EROFS
    } else if landlock_checks
        && !sup.stdio.contains(&(st.st_dev, st.st_ino))
        && sup.landlock_denies(&at.path())
    {
        libc::EACCES
    } else {
        return None;
    };
    Some(Verdict {
        path: at.path(),
        errno,
        grant: at.path(),
        busy: false,
        links: None,
        blind: None,
    })
}

/// Removing or renaming a mount point (a protected file or pinned directory bound onto
/// itself): `EBUSY`.
fn judge_busy(at: &Entry) -> Option<Verdict> {
    let f = at.open_nofollow()?;
    (mount_id(&f)? != mount_id(&at.dir)?).then(|| Verdict {
        path: at.path(),
        errno: libc::EBUSY,
        grant: at.path(),
        busy: true,
        links: None,
        blind: None,
    })
}

impl Supervisor {
    /// Whether no Landlock rule of this sandbox lets the command write at `p`.
    fn landlock_denies(&self, p: &Path) -> bool {
        self.landlock_writable
            .as_ref()
            .is_some_and(|w| !w.iter().any(|root| p.starts_with(root)))
    }
}

/// Writes `report` as one JSON line on `fd` (init → helper, after the command's tree has
/// ended).
pub fn send(fd: &OwnedFd, report: &DenialReport) {
    // Every path in a record travels as text (`DenialRecord::path`), so this cannot fail;
    // if it ever did, no records arrive (the report says none came) — never a panic in
    // init.
    let Ok(mut line) = serde_json::to_vec(report) else {
        return;
    };
    line.push(b'\n');
    super::sys::write_all(fd.as_raw_fd(), &line);
}

/// Reads what [`send`] wrote (the helper, after init was reaped). `None`: nothing came
/// (the supervisor did not run, or init died first).
pub fn receive(fd: &OwnedFd) -> Option<DenialReport> {
    let bytes = super::sys::read_to_end(fd, 1024 * 1024).ok()?;
    serde_json::from_slice(&bytes).ok()
}

/// The writable places of a rung-1 Landlock ruleset built from `layout`.
pub fn landlock_writable(layout: &super::mounts::Layout) -> Vec<PathBuf> {
    super::landlock_layer::rules_from_layout(layout)
        .into_iter()
        .filter(|(_, g)| *g == super::landlock_layer::Grant::Write)
        .map(|(p, _)| p)
        .collect()
}

/// Which kernel-side denial records this host gives (`cordon status`), in words: `Ok` when
/// the supervisor runs (rung 1 with seccomp; a restricted filesystem), `Err(why not)`.
pub fn source(features: &super::LinuxFeatures) -> Result<String, String> {
    if features
        .disabled
        .iter()
        .any(|d| d == super::features::DENIAL_RECORDS_LAYER)
    {
        return Err(format!(
            "disabled ({}={})",
            super::DISABLE_LAYERS_ENV,
            super::features::DENIAL_RECORDS_LAYER
        ));
    }
    if !features.seccomp.is_available() {
        return Err(format!(
            "seccomp unavailable ({})",
            features.seccomp.reason().unwrap_or("?")
        ));
    }
    if !features.user_namespaces.is_available() {
        return Err(
            "no sandbox init on rung 2 (user namespaces unavailable): the supervisor runs in \
             rung 1's init"
                .into(),
        );
    }
    Ok(
        "seccomp user notification: init judges every writing path call and records the \
        refused ones (syscall, path, errno, rule, grant) on the helper's channel"
            .into(),
    )
}

/// Whether Landlock's own audit records (ABI >= 7) could be read here, in words. They are
/// not used: reading the audit log needs `CAP_AUDIT_READ` in the initial user namespace.
pub fn landlock_audit(features: &super::LinuxFeatures) -> String {
    let abi = features.landlock.value().copied().unwrap_or(0);
    let cap_audit_read = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("CapEff:"))
                .and_then(|v| u64::from_str_radix(v.trim(), 16).ok())
        })
        .is_some_and(|caps| caps & (1 << 37) != 0); // CAP_AUDIT_READ = 37
    let initial_userns = std::fs::read_to_string("/proc/self/uid_map")
        .is_ok_and(|m| m.split_whitespace().collect::<Vec<_>>() == ["0", "0", "4294967295"]);
    let base = if abi >= 7 {
        format!("Landlock ABI {abi} can log denials to the audit subsystem")
    } else {
        format!("Landlock ABI {abi} has no audit logging (needs ABI 7)")
    };
    let why = match (cap_audit_read, initial_userns) {
        (true, true) => "cordon does not read the audit log (most users cannot: it needs \
                         CAP_AUDIT_READ in the initial user namespace); the seccomp supervisor \
                         gives the same records to everyone"
            .to_string(),
        (cap, userns) => format!(
            "not readable here: it needs CAP_AUDIT_READ in the initial user namespace, and \
             this process {}",
            match (cap, userns) {
                (false, true) => "lacks CAP_AUDIT_READ",
                (true, false) => "runs in a nested user namespace",
                _ => "lacks CAP_AUDIT_READ and runs in a nested user namespace",
            }
        ),
    };
    format!("{base}; {why}")
}

/// The socket address in a raw `sockaddr_in` / `sockaddr_in6` (`None` for other families
/// or a short buffer).
fn inet_addr(a: &[u8]) -> Option<std::net::SocketAddr> {
    let family = u16::from_ne_bytes([*a.first()?, *a.get(1)?]) as i32;
    let port = u16::from_be_bytes([*a.get(2)?, *a.get(3)?]);
    match family {
        libc::AF_INET => {
            let ip: [u8; 4] = a.get(4..8)?.try_into().ok()?;
            Some(std::net::SocketAddr::from((ip, port)))
        }
        libc::AF_INET6 => {
            let ip: [u8; 16] = a.get(8..24)?.try_into().ok()?;
            Some(std::net::SocketAddr::from((ip, port)))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One entry per syscall; every argument index inside `seccomp_data.args`.
    #[test]
    fn the_table_names_each_call_once() {
        let calls = calls();
        let mut nrs: Vec<i64> = calls.iter().map(|(_, nr, _)| *nr).collect();
        nrs.sort_unstable();
        nrs.dedup();
        assert_eq!(nrs.len(), calls.len());
        for (name, _, call) in calls {
            if let PathCall::Meta { at, mode, .. } = call {
                let idx: Vec<usize> = match at {
                    MetaAt::Fd(i) => vec![i],
                    MetaAt::Path {
                        dirfd, path, flags, ..
                    } => [dirfd, Some(path), flags].into_iter().flatten().collect(),
                };
                assert!(idx.iter().chain(mode.iter()).all(|i| *i < 6), "{name}");
            }
        }
    }

    /// Attack pass 48, N3: every call that sets a mode on an existing file, and the other
    /// metadata families, are judged; the mode sits where the set-id check reads it.
    #[test]
    fn every_metadata_call_is_trapped() {
        let calls = calls();
        let meta = |n: &str| {
            calls
                .iter()
                .find(|(name, _, _)| *name == n)
                .map(|(_, _, c)| *c)
        };
        let mut names = vec![
            "fchmod",
            "fchmodat",
            "fchmodat2",
            "fchown",
            "fchownat",
            "utimensat",
            "setxattr",
            "lsetxattr",
            "fsetxattr",
            "setxattrat",
            "removexattr",
            "lremovexattr",
            "fremovexattr",
            "removexattrat",
        ];
        #[cfg(target_arch = "x86_64")]
        names.extend(["chmod", "chown", "lchown", "utime", "utimes", "futimesat"]);
        for n in names {
            assert!(
                matches!(meta(n), Some(PathCall::Meta { .. })),
                "{n} is not judged"
            );
        }
        for (name, nr, arg) in super::super::seccomp_filter::mode_setting_syscalls() {
            let super::super::seccomp_filter::ModeArg::Always(i) = arg else {
                continue;
            };
            if name.starts_with("mk") || name == "creat" {
                continue; // a new entry: the create and open judgments
            }
            let Some((_, _, PathCall::Meta { mode, .. })) = calls.iter().find(|(_, n, _)| *n == nr)
            else {
                panic!("{name} is not judged");
            };
            assert_eq!(*mode, Some(i as usize), "{name}");
        }
        // utimensat and futimesat act on the descriptor given a NULL path; the `l…`
        // variants never follow the last symlink.
        assert!(matches!(
            meta("utimensat"),
            Some(PathCall::Meta {
                at: MetaAt::Path {
                    null_is_fd: true,
                    ..
                },
                ..
            })
        ));
        assert!(matches!(
            meta("lsetxattr"),
            Some(PathCall::Meta {
                at: MetaAt::Path { nofollow: true, .. },
                ..
            })
        ));
    }
}
