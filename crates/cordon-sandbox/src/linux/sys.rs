//! Thin wrappers over the kernel interfaces the helper uses. Every `unsafe` block of the
//! Linux backend that talks to the kernel directly lives here (the others are in
//! `process.rs` for fork/exec and signals), each with a `SAFETY:` comment.
//!
//! Constants are spelled out here (with the uapi header they come from) rather than taken
//! from `libc`, so the backend does not depend on how recent the `libc` crate is. Syscall
//! numbers >= 424 are the same on every architecture (the "unified" table).

use std::ffi::{CStr, CString};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::path::Path;

/// `open_tree(2)` (unified table).
const SYS_OPEN_TREE: libc::c_long = 428;
/// `move_mount(2)`.
const SYS_MOVE_MOUNT: libc::c_long = 429;
/// `fsopen(2)`.
const SYS_FSOPEN: libc::c_long = 430;
/// `fsconfig(2)`.
const SYS_FSCONFIG: libc::c_long = 431;
/// `fsmount(2)`.
const SYS_FSMOUNT: libc::c_long = 432;
/// `openat2(2)`.
const SYS_OPENAT2: libc::c_long = 437;
/// `mount_setattr(2)`.
const SYS_MOUNT_SETATTR: libc::c_long = 442;
/// `landlock_create_ruleset(2)`.
const SYS_LANDLOCK_CREATE_RULESET: libc::c_long = 444;

// <linux/mount.h>
const OPEN_TREE_CLONE: libc::c_uint = 1;
const OPEN_TREE_CLOEXEC: libc::c_uint = libc::O_CLOEXEC as libc::c_uint;
const AT_RECURSIVE: libc::c_uint = 0x8000;
const MOVE_MOUNT_F_EMPTY_PATH: libc::c_uint = 0x04;
const MOVE_MOUNT_T_EMPTY_PATH: libc::c_uint = 0x40;
const FSOPEN_CLOEXEC: libc::c_uint = 1;
const FSCONFIG_SET_FLAG: libc::c_uint = 0;
const FSCONFIG_SET_STRING: libc::c_uint = 1;
const FSCONFIG_CMD_CREATE: libc::c_uint = 6;
const FSMOUNT_CLOEXEC: libc::c_uint = 1;
/// `MOUNT_ATTR_RDONLY`: the mount is read-only (writes fail with `EROFS`).
pub const MOUNT_ATTR_RDONLY: u64 = 0x1;
/// `MOUNT_ATTR_NOSUID`: set-user-ID bits and file capabilities are ignored.
pub const MOUNT_ATTR_NOSUID: u64 = 0x2;
/// `MOUNT_ATTR_NODEV`: device nodes cannot be opened.
pub const MOUNT_ATTR_NODEV: u64 = 0x4;
/// `MOUNT_ATTR_NOEXEC`: nothing on the mount can be executed.
pub const MOUNT_ATTR_NOEXEC: u64 = 0x8;

// <linux/openat2.h>
const RESOLVE_NO_XDEV: u64 = 0x01;
const RESOLVE_NO_MAGICLINKS: u64 = 0x02;
const RESOLVE_NO_SYMLINKS: u64 = 0x04;
const RESOLVE_BENEATH: u64 = 0x08;

#[repr(C)]
struct OpenHow {
    flags: u64,
    mode: u64,
    resolve: u64,
}

#[repr(C)]
struct MountAttr {
    attr_set: u64,
    attr_clr: u64,
    propagation: u64,
    userns_fd: u64,
}

fn cstr(p: &Path) -> io::Result<CString> {
    use std::os::unix::ffi::OsStrExt;
    CString::new(p.as_os_str().as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "path contains a NUL byte"))
}

/// `Err(errno)` when a syscall (raw `long` or libc `int` return) reports failure.
fn check<T: Copy + Default + PartialOrd>(ret: T) -> io::Result<T> {
    if ret < T::default() {
        Err(io::Error::last_os_error())
    } else {
        Ok(ret)
    }
}

fn owned(fd: libc::c_long) -> OwnedFd {
    // SAFETY: `fd` was just returned by a successful syscall that creates a new descriptor;
    // nothing else owns it.
    unsafe { OwnedFd::from_raw_fd(fd as RawFd) }
}

/// Opens `rel` beneath `dirfd` as an `O_PATH` descriptor without following any symlink
/// (`openat2(2)` with `RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS`), so a path component swapped
/// for a symlink cannot redirect a mount. `rel` must be relative (an empty `rel` is not
/// allowed: use the directory descriptor itself).
pub fn open_beneath(dirfd: RawFd, rel: &Path) -> io::Result<OwnedFd> {
    open_path_beneath(dirfd, rel, 0)
}

/// [`open_beneath`] that also refuses to cross a mount point, bind mounts of the same
/// filesystem included (`RESOLVE_NO_XDEV`: `EXDEV` when `rel` is, or passes, a mount
/// point).
pub fn open_beneath_same_mount(dirfd: RawFd, rel: &Path) -> io::Result<OwnedFd> {
    open_path_beneath(dirfd, rel, RESOLVE_NO_XDEV)
}

/// `openat2(dirfd, rel, O_PATH | O_NOFOLLOW, RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
/// RESOLVE_NO_MAGICLINKS | extra)`.
fn open_path_beneath(dirfd: RawFd, rel: &Path, extra: u64) -> io::Result<OwnedFd> {
    let c = cstr(rel)?;
    let how = OpenHow {
        flags: (libc::O_PATH | libc::O_CLOEXEC | libc::O_NOFOLLOW) as u64,
        mode: 0,
        resolve: RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | extra,
    };
    // SAFETY: `c` is NUL-terminated and `how` is a valid `struct open_how` of the size passed;
    // both outlive the call.
    let fd = unsafe {
        libc::syscall(
            SYS_OPENAT2,
            dirfd,
            c.as_ptr(),
            &how as *const OpenHow,
            std::mem::size_of::<OpenHow>(),
        )
    };
    check(fd).map(owned)
}

/// `unlinkat(dirfd, name, dir ? AT_REMOVEDIR : 0)`: removes the file (or, with `dir`, the
/// empty directory) `name` in `dirfd` (a single component; nothing is followed).
pub fn unlinkat(dirfd: RawFd, name: &CStr, dir: bool) -> io::Result<()> {
    let flags = if dir { libc::AT_REMOVEDIR } else { 0 };
    // SAFETY: `name` is NUL-terminated and outlives the call.
    check(unsafe { libc::unlinkat(dirfd, name.as_ptr(), flags) } as libc::c_long).map(|_| ())
}

/// `renameat2(olddirfd, old, newdirfd, new, RENAME_NOREPLACE)`: renames the entry `old`
/// of `olddirfd` (single components; nothing is followed: a symlink is renamed itself),
/// failing with `EEXIST` rather than replacing `new`.
pub fn rename_noreplace(
    olddirfd: RawFd,
    old: &CStr,
    newdirfd: RawFd,
    new: &CStr,
) -> io::Result<()> {
    // The system call itself: musl has no `renameat2` wrapper.
    // SAFETY: both names are NUL-terminated and outlive the call.
    let r = unsafe {
        libc::syscall(
            libc::SYS_renameat2,
            olddirfd,
            old.as_ptr(),
            newdirfd,
            new.as_ptr(),
            libc::RENAME_NOREPLACE,
        )
    };
    check(r).map(|_| ())
}

/// `open(path, O_PATH | O_CLOEXEC [| O_DIRECTORY])`.
pub fn open_path(path: &Path, dir: bool) -> io::Result<OwnedFd> {
    let c = cstr(path)?;
    let mut flags = libc::O_PATH | libc::O_CLOEXEC;
    if dir {
        flags |= libc::O_DIRECTORY;
    }
    // SAFETY: `c` is NUL-terminated; the flags need no mode argument.
    let fd = unsafe { libc::open(c.as_ptr(), flags) };
    check(fd).map(|fd| owned(fd as libc::c_long))
}

/// `open_tree(dirfd, rel, OPEN_TREE_CLONE [| AT_RECURSIVE])`: a detached copy of the mount
/// (tree) at `rel` beneath `dirfd` (empty `rel` = `dirfd` itself). Recursive copies keep
/// the locked submounts a user namespace inherits, which a non-recursive copy would refuse.
pub fn clone_tree(dirfd: RawFd, rel: &str, recursive: bool) -> io::Result<OwnedFd> {
    let c = CString::new(rel).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    let mut flags = OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC;
    if recursive {
        flags |= AT_RECURSIVE;
    }
    if rel.is_empty() {
        flags |= libc::AT_EMPTY_PATH as libc::c_uint;
    }
    // SAFETY: `c` is NUL-terminated and outlives the call.
    let fd = unsafe { libc::syscall(SYS_OPEN_TREE, dirfd, c.as_ptr(), flags) };
    check(fd).map(owned)
}

/// `mount_setattr(fd, "", AT_EMPTY_PATH [| AT_RECURSIVE], {set, clr})`.
pub fn mount_setattr(fd: RawFd, recursive: bool, set: u64, clr: u64) -> io::Result<()> {
    let attr = MountAttr {
        attr_set: set,
        attr_clr: clr,
        propagation: 0,
        userns_fd: 0,
    };
    let mut flags = libc::AT_EMPTY_PATH as libc::c_uint;
    if recursive {
        flags |= AT_RECURSIVE;
    }
    // SAFETY: the path is a static empty C string; `attr` is a valid `struct mount_attr` of
    // the size passed and outlives the call.
    let r = unsafe {
        libc::syscall(
            SYS_MOUNT_SETATTR,
            fd,
            c"".as_ptr(),
            flags,
            &attr as *const MountAttr,
            std::mem::size_of::<MountAttr>(),
        )
    };
    check(r).map(|_| ())
}

/// Whether `mount_setattr(2)` exists (Linux >= 5.12): a call with an invalid descriptor
/// fails with `EBADF`/`EINVAL` when it does and `ENOSYS` when it does not.
pub fn has_mount_setattr() -> bool {
    // SAFETY: every pointer argument is null and the descriptor invalid; the kernel only
    // validates and returns an error.
    let r = unsafe {
        libc::syscall(
            SYS_MOUNT_SETATTR,
            -1,
            std::ptr::null::<libc::c_char>(),
            0,
            std::ptr::null::<MountAttr>(),
            0,
        )
    };
    !(r < 0 && io::Error::last_os_error().raw_os_error() == Some(libc::ENOSYS))
}

/// `move_mount(from, "", to, "", F_EMPTY_PATH | T_EMPTY_PATH)`: attaches the detached mount
/// `from` on top of the object `to` refers to.
pub fn attach(from: &OwnedFd, to: &OwnedFd) -> io::Result<()> {
    // SAFETY: both paths are static empty C strings; the descriptors are owned and open.
    let r = unsafe {
        libc::syscall(
            SYS_MOVE_MOUNT,
            from.as_raw_fd(),
            c"".as_ptr(),
            to.as_raw_fd(),
            c"".as_ptr(),
            MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH,
        )
    };
    check(r).map(|_| ())
}

/// `open_tree(dirfd, name, OPEN_TREE_CLONE | AT_SYMLINK_NOFOLLOW)`: a detached bind of the
/// entry `name` of `dirfd` itself, a symlink included (not followed). With
/// [`attach_at`] a symlink can be bound onto itself, which pins its name: `unlink`,
/// `rename` or replacing it then fail with `EBUSY` (issue 7 item 2).
pub fn clone_nofollow(dirfd: RawFd, name: &CStr) -> io::Result<OwnedFd> {
    let flags = OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | libc::AT_SYMLINK_NOFOLLOW as libc::c_uint;
    // SAFETY: `name` is NUL-terminated and outlives the call.
    let fd = unsafe { libc::syscall(SYS_OPEN_TREE, dirfd, name.as_ptr(), flags) };
    check(fd).map(owned)
}

/// `move_mount(from, "", dirfd, name, F_EMPTY_PATH)`: attaches the detached mount `from`
/// on the entry `name` of `dirfd` without following it when it is a symlink (no
/// `MOVE_MOUNT_T_SYMLINKS`), so a symlink is covered, not its target.
pub fn attach_at(from: &OwnedFd, dirfd: RawFd, name: &CStr) -> io::Result<()> {
    // SAFETY: both strings are NUL-terminated and outlive the call; `from` is owned and open.
    let r = unsafe {
        libc::syscall(
            SYS_MOVE_MOUNT,
            from.as_raw_fd(),
            c"".as_ptr(),
            dirfd,
            name.as_ptr(),
            MOVE_MOUNT_F_EMPTY_PATH,
        )
    };
    check(r).map(|_| ())
}

/// Creates a detached mount of a new `fstype` superblock (`fsopen` + `fsconfig` +
/// `fsmount`). `opts` are `key=value` string options; a `None` value sets a flag option.
/// `attrs` are `MOUNT_ATTR_*` flags for the new mount.
pub fn new_fs(fstype: &CStr, opts: &[(&CStr, Option<&CStr>)], attrs: u64) -> io::Result<OwnedFd> {
    // SAFETY: `fstype` is NUL-terminated and outlives the call.
    let fsfd = owned(check(unsafe {
        libc::syscall(SYS_FSOPEN, fstype.as_ptr(), FSOPEN_CLOEXEC)
    })?);
    for (k, v) in opts {
        let (cmd, val) = match v {
            Some(v) => (FSCONFIG_SET_STRING, v.as_ptr()),
            None => (FSCONFIG_SET_FLAG, std::ptr::null()),
        };
        // SAFETY: key and value are NUL-terminated (or null for a flag) and outlive the
        // call; `fsfd` is an open fs context.
        check(unsafe { libc::syscall(SYS_FSCONFIG, fsfd.as_raw_fd(), cmd, k.as_ptr(), val, 0) })?;
    }
    // SAFETY: `fsfd` is an open fs context; key and value are null for CMD_CREATE.
    check(unsafe {
        libc::syscall(
            SYS_FSCONFIG,
            fsfd.as_raw_fd(),
            FSCONFIG_CMD_CREATE,
            std::ptr::null::<libc::c_char>(),
            std::ptr::null::<libc::c_char>(),
            0,
        )
    })?;
    // SAFETY: `fsfd` is a created fs context.
    let m = unsafe { libc::syscall(SYS_FSMOUNT, fsfd.as_raw_fd(), FSMOUNT_CLOEXEC, attrs) };
    check(m).map(owned)
}

/// Classic `mount(2)` with no source/fstype, used for propagation changes.
pub fn make_rprivate(path: &CStr) -> io::Result<()> {
    // SAFETY: `path` is NUL-terminated; the other pointers are null, as allowed for a
    // propagation change.
    check(unsafe {
        libc::mount(
            std::ptr::null(),
            path.as_ptr(),
            std::ptr::null(),
            libc::MS_REC | libc::MS_PRIVATE,
            std::ptr::null(),
        )
    })
    .map(|_| ())
}

/// `mount("tmpfs", target, "tmpfs", flags, data)`.
pub fn mount_tmpfs(target: &CStr, data: &CStr) -> io::Result<()> {
    // SAFETY: every string is NUL-terminated and outlives the call.
    check(unsafe {
        libc::mount(
            c"tmpfs".as_ptr(),
            target.as_ptr(),
            c"tmpfs".as_ptr(),
            libc::MS_NOSUID | libc::MS_NODEV,
            data.as_ptr() as *const libc::c_void,
        )
    })
    .map(|_| ())
}

/// `pivot_root(new_root, put_old)`.
pub fn pivot_root(new_root: &CStr, put_old: &CStr) -> io::Result<()> {
    // SAFETY: both strings are NUL-terminated and outlive the call.
    check(unsafe { libc::syscall(libc::SYS_pivot_root, new_root.as_ptr(), put_old.as_ptr()) })
        .map(|_| ())
}

/// `umount2(path, MNT_DETACH)`.
pub fn detach(path: &CStr) -> io::Result<()> {
    // SAFETY: `path` is NUL-terminated.
    check(unsafe { libc::umount2(path.as_ptr(), libc::MNT_DETACH) }).map(|_| ())
}

/// `fchdir(fd)`.
pub fn fchdir(fd: &OwnedFd) -> io::Result<()> {
    // SAFETY: the descriptor is owned and open.
    check(unsafe { libc::fchdir(fd.as_raw_fd()) }).map(|_| ())
}

/// `mkdirat(dirfd, name, mode)`; `EEXIST` is success.
pub fn mkdirat(dirfd: RawFd, name: &CStr, mode: libc::mode_t) -> io::Result<()> {
    // SAFETY: `name` is NUL-terminated.
    match check(unsafe { libc::mkdirat(dirfd, name.as_ptr(), mode) }) {
        Ok(_) => Ok(()),
        Err(e) if e.raw_os_error() == Some(libc::EEXIST) => Ok(()),
        Err(e) => Err(e),
    }
}

/// Creates an empty regular file `name` in `dirfd` with `mode` (exclusive create; an
/// existing entry is success).
pub fn mkfileat(dirfd: RawFd, name: &CStr, mode: libc::mode_t) -> io::Result<()> {
    // SAFETY: `name` is NUL-terminated; O_CREAT takes the mode argument given.
    let fd = unsafe {
        libc::openat(
            dirfd,
            name.as_ptr(),
            libc::O_CREAT | libc::O_EXCL | libc::O_WRONLY | libc::O_CLOEXEC | libc::O_NOFOLLOW,
            mode as libc::c_uint,
        )
    };
    match check(fd) {
        Ok(fd) => {
            drop(owned(fd as libc::c_long));
            Ok(())
        }
        Err(e) if e.raw_os_error() == Some(libc::EEXIST) => Ok(()),
        Err(e) => Err(e),
    }
}

/// `fstat(fd)`.
pub fn fstat(fd: RawFd) -> io::Result<libc::stat> {
    // SAFETY: `stat` is plain old data; zeroed is a valid value to be overwritten.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: `st` is a valid, writable `struct stat`; a bad descriptor only fails.
    check(unsafe { libc::fstat(fd, &mut st) })?;
    Ok(st)
}

/// The filesystem type (`statfs` `f_type`, e.g. `PROC_SUPER_MAGIC`) of the file open as
/// `fd`, or `None` when it cannot be read.
pub fn fs_type(fd: RawFd) -> Option<libc::c_long> {
    // SAFETY: statfs is plain old data; the kernel fills it.
    let mut sf: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: `sf` is a valid statfs; the descriptor is open.
    // `f_type` is a `c_long` under glibc and an unsigned word under musl; the magic
    // numbers fit either.
    #[allow(clippy::unnecessary_cast)]
    (unsafe { libc::fstatfs(fd, &mut sf) } == 0).then_some(sf.f_type as libc::c_long)
}

/// `FS_IOC_GETVERSION` (`<linux/fs.h>`, `_IOR('v', 1, long)`).
const FS_IOC_GETVERSION: libc::c_ulong = 0x8008_7601;

/// The generation number of the inode open at `fd` (`FS_IOC_GETVERSION`: ext4, xfs, btrfs
/// and others give each new inode a fresh one, so an inode number reused after a removal is
/// told from the old).
///
/// Errors: the filesystem has none (`ENOTTY`, e.g. tmpfs).
pub fn inode_generation(fd: RawFd) -> io::Result<u64> {
    let mut generation: libc::c_long = 0;
    // SAFETY: FS_IOC_GETVERSION writes at most one `long` through the pointer, which is
    // valid and writable for that long.
    check(unsafe { libc::ioctl(fd, FS_IOC_GETVERSION as _, &mut generation) })?;
    Ok(generation as u64)
}

/// `fstatat(dirfd, name, AT_SYMLINK_NOFOLLOW)`: the entry itself, never what a symlink
/// points to.
pub fn fstatat_nofollow(dirfd: RawFd, name: &CStr) -> io::Result<libc::stat> {
    // SAFETY: `stat` is plain old data; zeroed is a valid value to be overwritten.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: `name` is NUL-terminated and `st` a valid, writable `struct stat`.
    check(unsafe { libc::fstatat(dirfd, name.as_ptr(), &mut st, libc::AT_SYMLINK_NOFOLLOW) })?;
    Ok(st)
}

/// `readlinkat(dirfd, name)`: the text of the symlink `name` in `dirfd` (up to
/// `PATH_MAX` bytes; a longer one is `ENAMETOOLONG`).
pub fn read_link_at(dirfd: RawFd, name: &[u8]) -> io::Result<std::path::PathBuf> {
    use std::os::unix::ffi::OsStringExt;
    let c = std::ffi::CString::new(name).map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))?;
    let mut buf = vec![0u8; libc::PATH_MAX as usize + 1];
    // SAFETY: `c` is NUL-terminated; `buf` is writable for its whole length.
    let n =
        check(unsafe { libc::readlinkat(dirfd, c.as_ptr(), buf.as_mut_ptr().cast(), buf.len()) })?;
    if n as usize >= buf.len() {
        return Err(io::Error::from_raw_os_error(libc::ENAMETOOLONG));
    }
    buf.truncate(n as usize);
    Ok(std::ffi::OsString::from_vec(buf).into())
}

/// `fcntl(fd, F_GETFL)`: the file status flags and access mode of an open descriptor.
pub fn status_flags(fd: RawFd) -> io::Result<libc::c_int> {
    // SAFETY: F_GETFL takes no argument and only reads descriptor state.
    check(unsafe { libc::fcntl(fd, libc::F_GETFL) })
}

/// `fcntl(fd, F_SETFL, flags)`: sets the file status flags the kernel lets change
/// (`O_APPEND`, `O_NONBLOCK`, `O_ASYNC`, `O_DIRECT`, `O_NOATIME`).
pub fn set_status_flags(fd: RawFd, flags: libc::c_int) -> io::Result<()> {
    // SAFETY: F_SETFL takes an int and only changes descriptor state.
    check(unsafe { libc::fcntl(fd, libc::F_SETFL, flags) }).map(|_| ())
}

/// `pidfd_open(pid, 0)` (close-on-exec, as every pidfd): a descriptor of the process
/// `pid`, readable once it has exited (Linux 5.3).
///
/// Errors: `ESRCH` when there is no such process, `ENOSYS` on an older kernel.
pub fn pidfd_open(pid: libc::pid_t) -> io::Result<OwnedFd> {
    // SAFETY: pidfd_open takes no memory; it returns a new descriptor or -1.
    let r = check(unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) })?;
    Ok(owned(r))
}

/// `ioctl(pidfd, PIDFD_GET_MNT_NAMESPACE, 0)`: a descriptor of the mount namespace of the
/// process `pidfd` refers to (Linux 6.11, `include/uapi/linux/pidfd.h`: `_IO(0xFF, 3)`;
/// the argument must be 0). Needs ptrace read access to it, as `/proc/PID/ns/mnt` does.
///
/// Errors: `EINVAL`/`ENOTTY` on an older kernel, `ESRCH` when it has exited, `EPERM`.
pub fn pidfd_mount_namespace(pidfd: &OwnedFd) -> io::Result<OwnedFd> {
    const PIDFD_GET_MNT_NAMESPACE: libc::c_ulong = (0xFF << 8) | 3;
    // SAFETY: a request that takes no pointer (its argument is 0); returns a new
    // descriptor or -1.
    let r = check(unsafe {
        libc::ioctl(
            pidfd.as_raw_fd(),
            PIDFD_GET_MNT_NAMESPACE as libc::Ioctl,
            0usize,
        )
    })?;
    Ok(owned(r as libc::c_long))
}

/// The mount at the absolute `path`, resolved beneath `root` (a descriptor of `/`)
/// without following any symlink (`openat2` `RESOLVE_NO_SYMLINKS`): whether `path` is
/// that mount's root (`statx` `STATX_ATTR_MOUNT_ROOT`) and the mount's ID
/// (`STATX_MNT_ID`), both Linux 5.8. `Ok(None)`: this kernel does not report them.
///
/// Errors: the path cannot be reached that way (missing, a symlink on the way, …).
pub fn mount_at(root: &OwnedFd, path: &Path) -> io::Result<Option<MountAt>> {
    let rel = path
        .strip_prefix("/")
        .map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    let fd = match open_beneath(root.as_raw_fd(), rel) {
        Ok(fd) => fd,
        // Under cordon's own seccomp filter `openat2` is ENOSYS.
        Err(e) if e.raw_os_error() == Some(libc::ENOSYS) => return mount_at_path(path),
        Err(e) => return Err(e),
    };
    mount_of(fd.as_raw_fd(), c"", libc::AT_EMPTY_PATH)
}

/// [`mount_at`] by `path` itself, without a descriptor (init after the command, whose
/// descriptors the command may have limited: `prlimit` on pid 1): `statx` with
/// `AT_SYMLINK_NOFOLLOW`, so the last component is not followed; a symlink earlier on the
/// path reaches the recorded mount only where that mount still covers what it was made
/// for (it moved with a renamed directory), else another mount, which the caller refuses.
///
/// Errors: the path cannot be reached.
pub fn mount_at_path(path: &Path) -> io::Result<Option<MountAt>> {
    let c = cstr(path)?;
    mount_of(libc::AT_FDCWD, &c, libc::AT_SYMLINK_NOFOLLOW)
}

/// [`mount_at`] of the file open as `fd` (an `O_PATH` descriptor will do): the mount it
/// was reached through, which for a descriptor handed in from outside is a mount of
/// another mount namespace.
///
/// Errors: `statx` failed.
pub fn mount_of_fd(fd: RawFd) -> io::Result<Option<MountAt>> {
    mount_of(fd, c"", libc::AT_EMPTY_PATH)
}

/// `statx(dirfd, name, flags, STATX_TYPE | STATX_MNT_ID)` read as a [`MountAt`].
fn mount_of(dirfd: RawFd, name: &CStr, flags: libc::c_int) -> io::Result<Option<MountAt>> {
    // SAFETY: statx is plain old data; the kernel fills it.
    let mut sx: libc::statx = unsafe { std::mem::zeroed() };
    let mask = libc::STATX_TYPE | libc::STATX_MNT_ID;
    // SAFETY: `name` is NUL-terminated and `sx` writable for the call.
    check(unsafe { libc::statx(dirfd, name.as_ptr(), flags, mask, &mut sx) })?;
    let bit = libc::STATX_ATTR_MOUNT_ROOT as u64;
    let told = sx.stx_attributes_mask & bit != 0 && sx.stx_mask & libc::STATX_MNT_ID != 0;
    Ok(told.then_some(MountAt {
        root: sx.stx_attributes & bit != 0,
        id: sx.stx_mnt_id,
    }))
}

/// What [`mount_at`] tells of a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MountAt {
    /// The path is the root of its mount (a mount point, as seen from here).
    pub root: bool,
    /// The mount's ID in this mount namespace (`STATX_MNT_ID`).
    pub id: u64,
}

/// `fcntl(fd, F_DUPFD_CLOEXEC, min)`: a close-on-exec duplicate of `fd` numbered `min`
/// or above (e.g. above every number a client's descriptor is put on).
pub fn dup_cloexec_above(fd: RawFd, min: RawFd) -> io::Result<OwnedFd> {
    // SAFETY: F_DUPFD_CLOEXEC creates a new descriptor, owned by the caller from here on.
    let r = check(unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, min) })?;
    Ok(owned(r as libc::c_long))
}

/// `fcntl(fd, F_DUPFD_CLOEXEC, 3)`: a close-on-exec duplicate of `fd`.
pub fn dup_cloexec(fd: RawFd) -> io::Result<OwnedFd> {
    dup_cloexec_above(fd, 3)
}

/// Opens the directory `rel` beneath `/` for use as the `dirfd` of `*at` calls: an
/// `O_PATH | O_DIRECTORY` descriptor resolved with `RESOLVE_NO_SYMLINKS` (no component
/// may be a symlink, the last one included), so it names the directory that is at that
/// path now, for good — a later rename or symlink swap of any component cannot redirect
/// it.
pub fn open_dir_nofollow(path: &Path) -> io::Result<OwnedFd> {
    let rel = path
        .strip_prefix("/")
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "the path must be absolute"))?;
    let root = open_path(Path::new("/"), true)?;
    if rel.as_os_str().is_empty() {
        return Ok(root);
    }
    let c = cstr(rel)?;
    let how = OpenHow {
        flags: (libc::O_PATH | libc::O_CLOEXEC | libc::O_NOFOLLOW | libc::O_DIRECTORY) as u64,
        mode: 0,
        resolve: RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
    };
    // SAFETY: `c` is NUL-terminated and `how` is a valid `struct open_how` of the size
    // passed; both outlive the call.
    let fd = unsafe {
        libc::syscall(
            SYS_OPENAT2,
            root.as_raw_fd(),
            c.as_ptr(),
            &how as *const OpenHow,
            std::mem::size_of::<OpenHow>(),
        )
    };
    check(fd).map(owned)
}

/// `mkdirat(dirfd, name, mode)`, exclusive: `EEXIST` is an error (unlike [`mkdirat`]).
pub fn mkdirat_excl(dirfd: RawFd, name: &CStr, mode: libc::mode_t) -> io::Result<()> {
    // SAFETY: `name` is NUL-terminated.
    check(unsafe { libc::mkdirat(dirfd, name.as_ptr(), mode) }).map(|_| ())
}

/// Opens the directory `name` in `dirfd` for reading, never following a symlink at `name`
/// (`O_DIRECTORY | O_NOFOLLOW`): a real descriptor (not `O_PATH`), for [`fchown`].
pub fn open_dir_at_nofollow(dirfd: RawFd, name: &CStr) -> io::Result<OwnedFd> {
    // SAFETY: `name` is NUL-terminated; no mode argument without O_CREAT.
    let fd = unsafe {
        libc::openat(
            dirfd,
            name.as_ptr(),
            libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC,
        )
    };
    check(fd).map(|fd| owned(fd as libc::c_long))
}

/// An `O_PATH` descriptor of the entry `name` in `dirfd`, a final symlink opened as itself
/// (`O_NOFOLLOW`): for looking at what is there (`fstat`) without reaching through it.
pub fn open_path_at_nofollow(dirfd: RawFd, name: &CStr) -> io::Result<OwnedFd> {
    // SAFETY: `name` is NUL-terminated; no mode argument without O_CREAT.
    let fd = unsafe {
        libc::openat(
            dirfd,
            name.as_ptr(),
            libc::O_PATH | libc::O_NOFOLLOW | libc::O_CLOEXEC,
        )
    };
    check(fd).map(|fd| owned(fd as libc::c_long))
}

/// `fchown(2)` on an open descriptor (never a path: nothing to redirect).
pub fn fchown(fd: RawFd, uid: libc::uid_t, gid: libc::gid_t) -> io::Result<()> {
    // SAFETY: fchown takes plain integers; `fd` is open.
    check(unsafe { libc::fchown(fd, uid, gid) }).map(|_| ())
}

/// Creates the regular file `name` in `dirfd` exclusively (`O_CREAT | O_EXCL |
/// O_NOFOLLOW`) and returns it open write-only; `EEXIST` is an error (unlike
/// [`mkfileat`]).
pub fn create_file_excl(dirfd: RawFd, name: &CStr, mode: libc::mode_t) -> io::Result<OwnedFd> {
    // SAFETY: `name` is NUL-terminated; O_CREAT takes the mode argument given.
    let fd = unsafe {
        libc::openat(
            dirfd,
            name.as_ptr(),
            libc::O_CREAT | libc::O_EXCL | libc::O_WRONLY | libc::O_CLOEXEC | libc::O_NOFOLLOW,
            mode as libc::c_uint,
        )
    };
    check(fd).map(|fd| owned(fd as libc::c_long))
}

/// Opens the file `name` in `dirfd` for writing, created (mode `mode`) or truncated,
/// never following a symlink at `name` (`ELOOP`) and never blocking on a FIFO
/// (`O_NONBLOCK`); the caller checks with [`fstat`] that it is a regular file.
pub fn open_write_nofollow(dirfd: RawFd, name: &CStr, mode: libc::mode_t) -> io::Result<OwnedFd> {
    // SAFETY: `name` is NUL-terminated; O_CREAT takes the mode argument given.
    let fd = unsafe {
        libc::openat(
            dirfd,
            name.as_ptr(),
            libc::O_CREAT
                | libc::O_WRONLY
                | libc::O_CLOEXEC
                | libc::O_NOFOLLOW
                | libc::O_NONBLOCK
                | libc::O_NOCTTY,
            mode as libc::c_uint,
        )
    };
    check(fd).map(|fd| owned(fd as libc::c_long))
}

/// `symlinkat(target, dirfd, name)`.
pub fn symlinkat(target: &CStr, dirfd: RawFd, name: &CStr) -> io::Result<()> {
    // SAFETY: both strings are NUL-terminated.
    check(unsafe { libc::symlinkat(target.as_ptr(), dirfd, name.as_ptr()) }).map(|_| ())
}

/// Writes `data` to `path` (opened write-only, no create): used for `/proc/self/uid_map`.
pub fn write_file(path: &CStr, data: &[u8]) -> io::Result<()> {
    // SAFETY: `path` is NUL-terminated; no mode needed without O_CREAT.
    let fd = check(unsafe { libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC) })?;
    let fd = owned(fd as libc::c_long);
    // SAFETY: `data` is a valid buffer of the length passed; `fd` is open.
    let n = unsafe {
        libc::write(
            fd.as_raw_fd(),
            data.as_ptr() as *const libc::c_void,
            data.len(),
        )
    };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// `prctl(option, arg2, 0, 0, 0)`.
pub fn prctl(option: libc::c_int, arg2: libc::c_ulong) -> io::Result<libc::c_int> {
    // SAFETY: the options used here take integer arguments only.
    check(unsafe {
        libc::prctl(
            option,
            arg2,
            0 as libc::c_ulong,
            0 as libc::c_ulong,
            0 as libc::c_ulong,
        )
    })
}

/// `prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL)`.
pub fn clear_ambient_caps() -> io::Result<()> {
    // SAFETY: integer arguments only.
    check(unsafe {
        libc::prctl(
            libc::PR_CAP_AMBIENT,
            libc::PR_CAP_AMBIENT_CLEAR_ALL as libc::c_ulong,
            0 as libc::c_ulong,
            0 as libc::c_ulong,
            0 as libc::c_ulong,
        )
    })
    .map(|_| ())
}

#[repr(C)]
struct CapHeader {
    version: u32,
    pid: libc::c_int,
}

#[repr(C)]
#[derive(Default, Clone, Copy)]
struct CapData {
    effective: u32,
    permitted: u32,
    inheritable: u32,
}

/// `_LINUX_CAPABILITY_VERSION_3` (<linux/capability.h>): two 32-bit words per set.
const LINUX_CAPABILITY_VERSION_3: u32 = 0x2008_0522;

/// Clears the effective, permitted and inheritable capability sets of the calling thread
/// (`capset(2)` with all-zero data).
pub fn clear_caps() -> io::Result<()> {
    keep_only_cap(None)
}

/// Sets the calling thread's effective and permitted capability sets to `cap` alone (a
/// number below 32) or to nothing, and its inheritable set to nothing (`capset(2)`).
pub fn keep_only_cap(cap: Option<u32>) -> io::Result<()> {
    let mut hdr = CapHeader {
        version: LINUX_CAPABILITY_VERSION_3,
        pid: 0,
    };
    let mut data = [CapData::default(); 2];
    if let Some(c) = cap.filter(|c| *c < 32) {
        data[0].effective = 1 << c;
        data[0].permitted = 1 << c;
    }
    // SAFETY: `hdr` and `data` are valid `cap_user_header_t`/`cap_user_data_t[2]` for
    // version 3 and outlive the call.
    check(unsafe { libc::syscall(libc::SYS_capset, &mut hdr as *mut CapHeader, data.as_ptr()) })
        .map(|_| ())
}

/// Raises (`on`) or lowers the capability `cap` (a number below 32) in the calling
/// thread's effective set, leaving its permitted and inheritable sets as they are (a
/// thread may lower and raise again what it keeps permitted). Returns whether `cap` was
/// effective before; nothing changes when it is not permitted.
pub fn set_effective_cap(cap: u32, on: bool) -> io::Result<bool> {
    let mut hdr = CapHeader {
        version: LINUX_CAPABILITY_VERSION_3,
        pid: 0,
    };
    let mut data = [CapData::default(); 2];
    // SAFETY: `hdr` and `data` are valid `cap_user_header_t`/`cap_user_data_t[2]` for
    // version 3 and outlive the call; the kernel fills `data`.
    check(unsafe {
        libc::syscall(
            libc::SYS_capget,
            &mut hdr as *mut CapHeader,
            data.as_mut_ptr(),
        )
    })?;
    let bit = 1u32 << (cap % 32);
    let was = data[0].effective & bit != 0;
    if cap >= 32 || data[0].permitted & bit == 0 || was == on {
        return Ok(was);
    }
    if on {
        data[0].effective |= bit;
    } else {
        data[0].effective &= !bit;
    }
    // SAFETY: as above; `data` holds the sets just read, one effective bit changed.
    check(unsafe { libc::syscall(libc::SYS_capset, &mut hdr as *mut CapHeader, data.as_ptr()) })
        .map(|_| was)
}

/// The Landlock ABI version the kernel offers (`landlock_create_ruleset(NULL, 0,
/// LANDLOCK_CREATE_RULESET_VERSION)`), or the error: `ENOSYS` (not built in) or
/// `EOPNOTSUPP` (disabled at boot).
pub fn landlock_abi() -> io::Result<u32> {
    // SAFETY: a null attribute with size 0 and the VERSION flag only queries the ABI.
    let r = unsafe {
        libc::syscall(
            SYS_LANDLOCK_CREATE_RULESET,
            std::ptr::null::<libc::c_void>(),
            0usize,
            1u32, // LANDLOCK_CREATE_RULESET_VERSION
        )
    };
    check(r).map(|v| v as u32)
}

/// `prctl(PR_GET_SECCOMP)`: 0 (none), 2 (filter mode already active), or an error when
/// the kernel has no seccomp.
pub fn seccomp_mode() -> io::Result<libc::c_int> {
    prctl(libc::PR_GET_SECCOMP, 0)
}

/// A classic BPF instruction (`struct sock_filter`).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SockFilter {
    /// Opcode.
    pub code: u16,
    /// Jump offset if true.
    pub jt: u8,
    /// Jump offset if false.
    pub jf: u8,
    /// Constant operand.
    pub k: u32,
}

#[repr(C)]
struct SockFprog {
    len: libc::c_ushort,
    filter: *const SockFilter,
}

/// Installs a seccomp filter on the calling thread (`seccomp(SECCOMP_SET_MODE_FILTER, 0,
/// prog)`). Requires `no_new_privs` or `CAP_SYS_ADMIN`.
pub fn install_seccomp(prog: &[SockFilter]) -> io::Result<()> {
    let fprog = SockFprog {
        len: prog.len() as libc::c_ushort,
        filter: prog.as_ptr(),
    };
    // SAFETY: `fprog` points at `prog`, which outlives the call; the kernel copies it.
    check(unsafe {
        libc::syscall(
            libc::SYS_seccomp,
            1 as libc::c_uint, // SECCOMP_SET_MODE_FILTER
            0 as libc::c_uint,
            &fprog as *const SockFprog,
        )
    })
    .map(|_| ())
}

/// `clone(flags | SIGCHLD)` with no new stack: behaves like `fork(2)` but can create
/// namespaces for the child only, so the caller stays in the host namespaces. Returns the
/// child's pid in the parent and 0 in the child.
///
/// # Safety
/// The caller must be single-threaded (like after `fork`, only the calling thread exists
/// in the child, and no lock may be held by another thread).
pub unsafe fn clone_fork(flags: libc::c_ulong) -> io::Result<libc::pid_t> {
    // SAFETY: with a null stack, clone duplicates the caller's stack copy-on-write like
    // fork; the remaining pointer arguments are null (no tid/tls requested). The caller
    // guarantees it is single-threaded.
    let r = unsafe {
        libc::syscall(
            libc::SYS_clone,
            flags | libc::SIGCHLD as libc::c_ulong,
            0usize,
            0usize,
            0usize,
            0usize,
        )
    };
    check(r).map(|p| p as libc::pid_t)
}

/// `uname(2)` release string.
pub fn kernel_release() -> String {
    // SAFETY: `utsname` is plain old data; zeroed is a valid value.
    let mut u: libc::utsname = unsafe { std::mem::zeroed() };
    // SAFETY: `u` is a valid, writable utsname.
    if unsafe { libc::uname(&mut u) } != 0 {
        return "unknown".into();
    }
    // SAFETY: the kernel NUL-terminates `release`.
    unsafe { CStr::from_ptr(u.release.as_ptr()) }
        .to_string_lossy()
        .into_owned()
}

/// `pipe2(O_CLOEXEC)`: (read end, write end).
pub fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: `fds` is a valid array of two ints.
    check(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) })?;
    Ok((owned(fds[0] as libc::c_long), owned(fds[1] as libc::c_long)))
}

/// Reads up to `buf.len()` bytes, retrying on `EINTR`.
pub fn read(fd: &OwnedFd, buf: &mut [u8]) -> io::Result<usize> {
    loop {
        // SAFETY: `buf` is valid for writes of its length; `fd` is open.
        let n = unsafe {
            libc::read(
                fd.as_raw_fd(),
                buf.as_mut_ptr() as *mut libc::c_void,
                buf.len(),
            )
        };
        if n >= 0 {
            return Ok(n as usize);
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

/// Writes all of `buf` (best effort, retrying on `EINTR`).
pub fn write_all(fd: RawFd, mut buf: &[u8]) {
    while !buf.is_empty() {
        // SAFETY: `buf` is valid for reads of its length.
        let n = unsafe { libc::write(fd, buf.as_ptr() as *const libc::c_void, buf.len()) };
        if n > 0 {
            buf = &buf[n as usize..];
        } else if n < 0 && io::Error::last_os_error().kind() == io::ErrorKind::Interrupted {
            continue;
        } else {
            return;
        }
    }
}

/// Blocks until the child `pid` exited, without reaping it (`waitid(WEXITED | WNOWAIT)`):
/// its pid stays its own until a `waitpid`, so nothing named after it can be another
/// process's meanwhile.
///
/// Errors: `waitid` failed other than by `EINTR` (not our child).
pub fn wait_exited_unreaped(pid: libc::pid_t) -> std::io::Result<()> {
    loop {
        // SAFETY: an all-zero siginfo_t is a valid value for waitid to fill.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        // SAFETY: `info` is valid for writes; waitid takes no other memory.
        let r = unsafe {
            libc::waitid(
                libc::P_PID,
                pid as libc::id_t,
                &mut info,
                libc::WEXITED | libc::WNOWAIT,
            )
        };
        if r == 0 {
            return Ok(());
        }
        let e = std::io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::EINTR) {
            return Err(e);
        }
    }
}

/// Whether the peer of the stream socket `fd` has closed its end or the socket failed
/// (`poll` for `POLLRDHUP`, no wait). A peer that only waits never shuts down its writing
/// half, so this is its hang-up.
pub fn socket_hung_up(fd: RawFd) -> bool {
    let mut p = libc::pollfd {
        fd,
        events: libc::POLLRDHUP,
        revents: 0,
    };
    // SAFETY: `p` is a valid pollfd array of length 1; a zero timeout does not block.
    let r = unsafe { libc::poll(&mut p, 1, 0) };
    r > 0 && p.revents & (libc::POLLRDHUP | libc::POLLHUP | libc::POLLERR | libc::POLLNVAL) != 0
}

/// Whether the read end `fd` has no writer left (`poll` reports `POLLHUP` at once).
pub fn peer_gone(fd: &OwnedFd) -> bool {
    let mut p = libc::pollfd {
        fd: fd.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: `p` is a valid pollfd array of length 1.
    let r = unsafe { libc::poll(&mut p, 1, 0) };
    r > 0 && (p.revents & libc::POLLHUP) != 0
}

/// Marks every descriptor from `first` up close-on-exec (`close_range(first, ~0,
/// CLOSE_RANGE_CLOEXEC)`, Linux >= 5.11; older kernels: each descriptor listed in
/// `/proc/self/fd` gets `FD_CLOEXEC`). So the command inherits only stdin, stdout and
/// stderr: a stray descriptor of the caller (a host directory, a socket) would otherwise
/// be a way around the sandbox.
///
/// Errors: neither way worked (the caller must not run the command with descriptors it
/// could not account for).
pub fn cloexec_from(first: libc::c_uint) -> io::Result<()> {
    const SYS_CLOSE_RANGE: libc::c_long = 436;
    const CLOSE_RANGE_CLOEXEC: libc::c_uint = 1 << 2;
    // SAFETY: close_range with CLOEXEC only changes descriptor flags.
    let r = unsafe {
        libc::syscall(
            SYS_CLOSE_RANGE,
            first,
            libc::c_uint::MAX,
            CLOSE_RANGE_CLOEXEC,
        )
    };
    if r == 0 {
        return Ok(());
    }
    let fds: Vec<libc::c_int> = std::fs::read_dir("/proc/self/fd")?
        .flatten()
        .filter_map(|e| e.file_name().to_str().and_then(|s| s.parse().ok()))
        .filter(|fd| *fd >= first as libc::c_int)
        .collect();
    for fd in fds {
        // SAFETY: setting FD_CLOEXEC on a descriptor number has no memory-safety
        // preconditions (a closed one just fails with EBADF).
        unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) };
    }
    Ok(())
}

/// A sealed memory file holding `data`, positioned at its start, close-on-exec: the spawn
/// that hands it to a child passes it by number ([`inherit_in_child`]). Used to hand the
/// helper its payload without an environment variable (whose size is capped at 128 KiB by
/// `MAX_ARG_STRLEN`) or argv (readable by every local user).
///
/// Never created inheritable: in a process that starts several children (`cordon mcp`,
/// a harness), an inheritable descriptor reaches every child started while it is open
/// (attack pass 148 F1).
pub fn sealed_memfd(name: &CStr, data: &[u8]) -> io::Result<OwnedFd> {
    // SAFETY: `name` is NUL-terminated; the new descriptor is owned from here on.
    let fd = check(unsafe {
        libc::memfd_create(name.as_ptr(), libc::MFD_ALLOW_SEALING | libc::MFD_CLOEXEC)
    })?;
    let fd = owned(fd as libc::c_long);
    let mut rest = data;
    while !rest.is_empty() {
        // SAFETY: `rest` is valid for reads of its length.
        let n = unsafe {
            libc::write(
                fd.as_raw_fd(),
                rest.as_ptr() as *const libc::c_void,
                rest.len(),
            )
        };
        if n < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        rest = &rest[n as usize..];
    }
    let seals = libc::F_SEAL_SEAL | libc::F_SEAL_SHRINK | libc::F_SEAL_GROW | libc::F_SEAL_WRITE;
    // SAFETY: F_ADD_SEALS takes an int and only changes the memfd's seals.
    check(unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_ADD_SEALS, seals) })?;
    // SAFETY: lseek only moves the file offset.
    if unsafe { libc::lseek(fd.as_raw_fd(), 0, libc::SEEK_SET) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(fd)
}

/// Takes ownership of an inherited descriptor number given on the command line: checks it
/// is open and marks it close-on-exec, so it never reaches the command.
///
/// Errors: `EBADF` when `fd` is not open, or `fd` is 0, 1 or 2 (`EINVAL`).
pub fn take_inherited_fd(fd: RawFd) -> io::Result<OwnedFd> {
    if fd <= 2 {
        return Err(io::Error::from_raw_os_error(libc::EINVAL));
    }
    // SAFETY: F_SETFD only changes descriptor flags; a closed number fails with EBADF.
    check(unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) })?;
    // SAFETY: the descriptor is open and, by the helper's contract, handed to it alone.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// The file status flags and access mode of `fd` (`fcntl(F_GETFL)`).
///
/// Errors: `EBADF` when `fd` is not open.
pub fn fd_status_flags(fd: RawFd) -> io::Result<i32> {
    // SAFETY: F_GETFL only reads the open file description's flags.
    check(unsafe { libc::fcntl(fd, libc::F_GETFL) })
}

/// `close(fd)` in a forked child that must not keep its copy of a descriptor its parent
/// owns (the parent's `OwnedFd` is not dropped in the child, which never returns).
pub fn close_in_child(fd: RawFd) {
    // SAFETY: closing a descriptor number has no memory-safety preconditions; the child
    // never uses it (nor drops an owner of it) afterwards.
    unsafe { libc::close(fd) };
}

/// Reads `fd` to its end (at most `limit` bytes).
///
/// Errors: a read error, or more than `limit` bytes (`EFBIG`).
pub fn read_to_end(fd: &OwnedFd, limit: usize) -> io::Result<Vec<u8>> {
    let mut out = Vec::new();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = read(fd, &mut buf)?;
        if n == 0 {
            return Ok(out);
        }
        if out.len() + n > limit {
            return Err(io::Error::from_raw_os_error(libc::EFBIG));
        }
        out.extend_from_slice(&buf[..n]);
    }
}

/// One byte from `fd` if one is there now (the descriptor is made non-blocking), else
/// `None` (nothing written, the writers gone, or an error).
pub fn read_ready_byte(fd: &OwnedFd) -> Option<u8> {
    // SAFETY: fcntl on a descriptor we own; no memory is passed.
    unsafe {
        let fl = libc::fcntl(fd.as_raw_fd(), libc::F_GETFL);
        libc::fcntl(fd.as_raw_fd(), libc::F_SETFL, fl | libc::O_NONBLOCK);
    }
    let mut b = [0u8; 1];
    match read(fd, &mut b) {
        Ok(1) => Some(b[0]),
        _ => None,
    }
}

/// Most descriptors one message can carry (`SCM_MAX_FD`, `include/net/scm.h`).
const SCM_MAX_FD: usize = 253;

/// Receives one message on the socket `fd` into `buf` with at most `N` descriptors sent
/// with it (`SCM_RIGHTS`, installed close-on-exec). Returns the number of bytes (0: the
/// other end closed) and the descriptors, owned.
///
/// Room is made for as many descriptors as a message can carry, so the kernel never cuts
/// the control data: every descriptor that came is owned here and closed when it is not
/// returned (attack pass 162: with room for `N`, a message with more was cut, the cut
/// message's control data went unparsed, and the `N` installed descriptors leaked, 16 per
/// connection until the server ran out).
///
/// Errors: `recvmsg` failed, its control data could not be parsed, or more than `N`
/// descriptors came (`EMSGSIZE`; they are closed).
pub fn recv_with_fds<const N: usize>(
    fd: RawFd,
    buf: &mut [u8],
) -> io::Result<(usize, Vec<OwnedFd>)> {
    use nix::sys::socket::{recvmsg, ControlMessageOwned, MsgFlags};
    let mut space = nix::cmsg_space!([RawFd; SCM_MAX_FD]);
    let mut iov = [io::IoSliceMut::new(buf)];
    let msg = recvmsg::<()>(fd, &mut iov, Some(&mut space), MsgFlags::MSG_CMSG_CLOEXEC)
        .map_err(io::Error::from)?;
    let mut fds = Vec::new();
    for c in msg.cmsgs().map_err(io::Error::from)? {
        if let ControlMessageOwned::ScmRights(r) = c {
            // SAFETY: the kernel just installed these descriptors in this process.
            fds.extend(r.into_iter().map(|f| unsafe { OwnedFd::from_raw_fd(f) }));
        }
    }
    if fds.len() > N {
        return Err(io::Error::from_raw_os_error(libc::EMSGSIZE));
    }
    Ok((msg.bytes, fds))
}

/// Makes `fd` survive into the program `cmd` starts (clears `FD_CLOEXEC` in the child,
/// between fork and exec; the parent's descriptor keeps its flag, so no other child
/// inherits it).
pub fn inherit_in_child(cmd: &mut std::process::Command, fd: RawFd) {
    use std::os::unix::process::CommandExt;
    // SAFETY: the closure only calls fcntl, which is async-signal-safe, and allocates
    // nothing.
    unsafe {
        cmd.pre_exec(move || {
            if libc::fcntl(fd, libc::F_SETFD, 0) < 0 {
                return Err(io::Error::last_os_error());
            }
            Ok(())
        })
    };
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::os::unix::fs::MetadataExt;

    /// Linux 6.11 or later (`PIDFD_GET_MNT_NAMESPACE`), from the release string.
    /// A kernel feature a test needs is missing: a failure on CI (`CI=true`, whose
    /// machines have it), a skip elsewhere.
    pub(crate) fn missing_feature(what: &str) {
        let why = format!("kernel {} has no {what}", kernel_release());
        if std::env::var("CI").as_deref() == Ok("true") {
            panic!("{why}");
        }
        eprintln!("skipped: {why}");
    }

    fn kernel_has_pidfd_namespaces() -> bool {
        let r = kernel_release();
        let mut parts = r.split(|c: char| !c.is_ascii_digit());
        let major: u32 = parts.next().and_then(|p| p.parse().ok()).unwrap_or(0);
        let minor: u32 = parts.next().and_then(|p| p.parse().ok()).unwrap_or(0);
        (major, minor) >= (6, 11)
    }

    /// The descriptor names this process's own mount namespace (the one the template's
    /// handler holds for a command's init, issue 12): same inode as `/proc/self/ns/mnt`.
    #[test]
    fn pidfd_mount_namespace_names_the_process_mount_namespace() {
        if !kernel_has_pidfd_namespaces() {
            return missing_feature("PIDFD_GET_MNT_NAMESPACE");
        }
        let pidfd = pidfd_open(std::process::id() as libc::pid_t).expect("pidfd_open");
        let ns = pidfd_mount_namespace(&pidfd).expect("PIDFD_GET_MNT_NAMESPACE");
        let held = fstat(ns.as_raw_fd()).expect("fstat of the namespace descriptor");
        let own = std::fs::metadata("/proc/self/ns/mnt").expect("/proc/self/ns/mnt");
        assert_eq!(held.st_ino as u64, own.ino());
        assert_eq!(held.st_dev as u64, own.dev());
    }

    /// The template's check of its covers (issue 12): a mount's root is one, a directory
    /// inside a mount is not, and a path through a symlink is not followed.
    #[test]
    fn mounts_are_told_by_root_and_id_without_following_symlinks() {
        let root = open_path(Path::new("/"), true).expect("open /");
        let Some(proc_root) = mount_at(&root, Path::new("/proc")).expect("/proc") else {
            return missing_feature("STATX_ATTR_MOUNT_ROOT");
        };
        assert!(proc_root.root, "/proc is a mount of its own");
        let pid = std::process::id();
        let inside = format!("/proc/{pid}/fdinfo");
        let inner = mount_at(&root, Path::new(&inside))
            .expect("a directory in /proc")
            .expect("told");
        assert!(!inner.root);
        assert_eq!(inner.id, proc_root.id, "the same mount as /proc");
        let top = mount_at(&root, Path::new("/etc"))
            .expect("/etc")
            .expect("told");
        assert_ne!(top.id, proc_root.id, "another mount than /proc");
        // /proc/self is a symlink: not followed, so not an answer.
        assert!(mount_at(&root, Path::new("/proc/self/fdinfo")).is_err());
    }
}
