//! Removing a directory tree that a sandboxed command may be changing at the same time
//! (the copy-on-write cache layers of R-C1: `cordon cache clear`, the overlay probe).
//!
//! The remover often runs as root, on a tree a confined command wrote — perhaps a command
//! that is still running. A path-based walk (`lstat(p)`, then `chmod(p)`, `opendir(p)`,
//! `unlink(p/…)`) checks one file and acts on another when a directory is swapped for a
//! symlink in between: root then chmods or deletes outside the tree. Here every step is
//! relative to a descriptor that pins what was checked:
//!
//! - the top is opened beneath its (pinned) parent with `O_NOFOLLOW` and must be a
//!   directory; each entry is opened beneath its pinned directory with
//!   `O_PATH | O_NOFOLLOW`, `fstat`ed, and only a directory is descended into (through
//!   that descriptor); everything else is `unlinkat`ed by name in the pinned directory,
//!   which removes a symlink itself, never its target;
//! - a directory without owner `rwx` (overlayfs leaves `work/work` at mode 000) is
//!   `chmod`ed through `/proc/self/fd/N` of its `O_PATH` descriptor: the inode checked,
//!   never a path that could have been swapped;
//! - a mount point (another filesystem, or a bind mount of the same one: `openat2` with
//!   `RESOLVE_NO_XDEV`, and `st_dev` compared with the top's) is not entered: the removal
//!   fails with an error naming it;
//! - a directory nested [`MAX_DEPTH`] levels deep is not descended into (a descriptor is
//!   held per level) but renamed, by descriptors, into the directory being emptied, whose
//!   next pass removes it: any depth is removed in bounded descriptors (attack pass 154,
//!   F4: a 300-deep tree a command made in a cache layer failed every later removal, and
//!   with it the layer for good). At most [`MAX_LIFTS`] such moves per removal.
//!
//! No path-based call is made below the top.

use nix::dir::Dir;
use nix::errno::Errno;
use nix::fcntl::{openat, OFlag};
use nix::sys::stat::{fstat, FileStat, Mode};
use nix::unistd::{unlinkat, UnlinkatFlags};
use std::ffi::{CStr, CString, OsStr};
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// How deep [`remove_tree_at`] descends (one open descriptor per level); a directory at
/// this depth is moved up to the top instead (see the module documentation).
pub const MAX_DEPTH: usize = 256;

/// How many too-deep directories one removal moves up before it gives up (a writer still
/// making deep trees).
const MAX_LIFTS: usize = 1 << 16;

/// The directory a removal empties (depth 0), where too-deep directories are moved, and
/// how many were moved.
struct Top<'a> {
    fd: BorrowedFd<'a>,
    lifted: std::cell::Cell<usize>,
}

/// How many times one directory is listed and emptied before a directory that keeps
/// getting new entries (a writer still at work) is given up on.
const PASSES: usize = 3;

fn err(e: Errno, what: &Path) -> io::Error {
    let e = io::Error::from(e);
    io::Error::new(e.kind(), format!("{}: {e}", what.display()))
}

fn is_dir(st: &FileStat) -> bool {
    st.st_mode & libc::S_IFMT == libc::S_IFDIR
}

/// `O_PATH | O_NOFOLLOW` descriptor of `name` in `dir`, never following a symlink there
/// and never crossing a mount point (`openat2` with `RESOLVE_NO_XDEV`: `EXDEV` for a mount
/// point, a bind mount of the same filesystem included).
fn pin(dir: BorrowedFd<'_>, name: &CStr) -> nix::Result<OwnedFd> {
    super::sys::open_beneath_same_mount(
        dir.as_raw_fd(),
        Path::new(OsStr::from_bytes(name.to_bytes())),
    )
    .map_err(|e| Errno::from_raw(e.raw_os_error().unwrap_or(libc::EIO)))
}

/// The error for a mount point met at `shown`.
fn mount_point(shown: &Path) -> io::Error {
    io::Error::other(format!(
        "{}: a mount point (another filesystem or a bind mount); not entered, not removed",
        shown.display()
    ))
}

/// Opens the directory pinned by `pinned` (whose `fstat` is `st`) for listing and
/// removing entries: made owner-`rwx` first if it is not (through the descriptor), then
/// `.` opened beneath it, so the directory listed is the inode that was checked.
fn open_pinned_dir(pinned: &OwnedFd, st: &FileStat, shown: &Path) -> io::Result<Dir> {
    if st.st_mode & 0o700 != 0o700 {
        // `chmod` on the magic link acts on the inode the `O_PATH` descriptor holds
        // (`fchmod` refuses `O_PATH` descriptors); nothing in the path can be swapped.
        let proc = PathBuf::from(format!("/proc/self/fd/{}", pinned.as_raw_fd()));
        let mode = (st.st_mode & 0o7777) | 0o700;
        std::fs::set_permissions(&proc, std::fs::Permissions::from_mode(mode))
            .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", shown.display())))?;
    }
    let fd = openat(
        pinned,
        c".",
        OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC,
        Mode::empty(),
    )
    .map_err(|e| err(e, shown))?;
    let now = fstat(&fd).map_err(|e| err(e, shown))?;
    if (now.st_dev, now.st_ino) != (st.st_dev, st.st_ino) {
        return Err(io::Error::other(format!(
            "{}: changed while being opened",
            shown.display()
        )));
    }
    Dir::from_fd(fd).map_err(|e| err(e, shown))
}

/// Removes the directory `name` in the directory `parent` and everything beneath it, by
/// descriptors only (see the module documentation): `name` must be a single component and
/// a directory (a symlink there is refused with `ELOOP`/`ENOTDIR`, and nothing is
/// removed). `shown` is the path used in error messages. Entries on another filesystem
/// than `name` (mount points) are not entered: an error names the first one met.
///
/// Errors: the first failure, naming the path; the tree is then partly removed.
pub fn remove_tree_at(parent: BorrowedFd<'_>, name: &OsStr, shown: &Path) -> io::Result<()> {
    let cname = CString::new(name.as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "name contains a NUL byte"))?;
    if name.is_empty() || name.as_bytes().contains(&b'/') || name == "." || name == ".." {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{}: not a single path component", name.to_string_lossy()),
        ));
    }
    let top = match pin(parent, &cname) {
        Ok(fd) => fd,
        Err(Errno::EXDEV) => return Err(mount_point(shown)),
        Err(e) => return Err(err(e, shown)),
    };
    let st = fstat(&top).map_err(|e| err(e, shown))?;
    if !is_dir(&st) {
        return Err(io::Error::new(
            io::ErrorKind::NotADirectory,
            format!("{}: not a directory (nothing removed)", shown.display()),
        ));
    }
    let mut dir = open_pinned_dir(&top, &st, shown)?;
    let held = dup(dir.as_fd(), shown)?;
    let t = Top {
        fd: held.as_fd(),
        lifted: Default::default(),
    };
    empty(&mut dir, shown, st.st_dev, 0, &t, &|_| false)?;
    drop(dir);
    unlinkat(parent, cname.as_c_str(), UnlinkatFlags::RemoveDir).map_err(|e| err(e, shown))
}

/// Removes every entry of the directory `dir` (already opened and checked by the caller)
/// except those `keep` names, with the same guarantees as [`remove_tree_at`]; `shown` is
/// its path for messages. `dir` itself stays.
pub fn empty_dir_at(
    dir: BorrowedFd<'_>,
    shown: &Path,
    keep: &dyn Fn(&CStr) -> bool,
) -> io::Result<()> {
    let st = fstat(dir).map_err(|e| err(e, shown))?;
    if !is_dir(&st) {
        return Err(io::Error::new(
            io::ErrorKind::NotADirectory,
            format!("{}: not a directory", shown.display()),
        ));
    }
    let fd = openat(
        dir,
        c".",
        OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC,
        Mode::empty(),
    )
    .map_err(|e| err(e, shown))?;
    let held = dup(fd.as_fd(), shown)?;
    let t = Top {
        fd: held.as_fd(),
        lifted: Default::default(),
    };
    let mut d = Dir::from_fd(fd).map_err(|e| err(e, shown))?;
    empty(&mut d, shown, st.st_dev, 0, &t, keep)
}

/// A second descriptor of `fd` (close-on-exec).
fn dup(fd: BorrowedFd<'_>, shown: &Path) -> io::Result<OwnedFd> {
    fd.try_clone_to_owned()
        .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", shown.display())))
}

/// Removes [`remove_tree_at`] `path`'s last component beneath its parent directory, which
/// is opened without following any symlink on the way ([`super::sys::open_dir_nofollow`]:
/// a symlinked component is an error, nothing is removed).
pub fn remove_tree(path: &Path) -> io::Result<()> {
    let (Some(parent), Some(name)) = (path.parent(), path.file_name()) else {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{}: no parent directory", path.display()),
        ));
    };
    let parent_fd = super::sys::open_dir_nofollow(parent)
        .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", parent.display())))?;
    remove_tree_at(parent_fd.as_fd(), name, path)
}

/// Empties the listed directory `dir` (on device `dev`, at depth `depth` below `top`).
fn empty(
    dir: &mut Dir,
    shown: &Path,
    dev: libc::dev_t,
    depth: usize,
    top: &Top<'_>,
    keep: &dyn Fn(&CStr) -> bool,
) -> io::Result<()> {
    let mut pass = 0;
    loop {
        // Listed first, removed after: a directory is not changed while it is read.
        let mut names = Vec::new();
        for e in dir.iter() {
            let e = e.map_err(|e| err(e, shown))?;
            let n = e.file_name();
            if n == c"." || n == c".." || keep(n) {
                continue;
            }
            names.push(n.to_owned());
        }
        if names.is_empty() {
            return Ok(());
        }
        let lifted = top.lifted.get();
        for name in names {
            let at = shown.join(OsStr::from_bytes(name.as_bytes()));
            remove_entry(dir.as_fd(), &name, &at, dev, depth, top)?;
        }
        pass += 1;
        // At the top, a pass that moved too-deep directories here made progress: the next
        // one removes them, however deep they went.
        if pass >= PASSES && (depth > 0 || top.lifted.get() == lifted) {
            break;
        }
    }
    // Still not empty after the last pass: the removal of the directory itself fails
    // with ENOTEMPTY and says so.
    Ok(())
}

/// Moves the directory `name` of `dir` (pinned, on the top's filesystem) into the top
/// under a new name, for the top's next pass to remove (see the module documentation).
fn lift(dir: BorrowedFd<'_>, name: &CStr, shown: &Path, top: &Top<'_>) -> io::Result<()> {
    let n = top.lifted.get();
    if n >= MAX_LIFTS {
        return Err(io::Error::other(format!(
            "{}: more than {MAX_LIFTS} directories nested over {MAX_DEPTH} deep",
            shown.display()
        )));
    }
    top.lifted.set(n + 1);
    let to = CString::new(format!(".cordon-deep-{}-{n}", std::process::id()))
        .map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    match nix::fcntl::renameat(dir, name, top.fd, to.as_c_str()) {
        Ok(()) | Err(Errno::ENOENT) => Ok(()),
        Err(e) => Err(err(e, shown)),
    }
}

/// Removes the entry `name` of the pinned directory `dir`.
fn remove_entry(
    dir: BorrowedFd<'_>,
    name: &CStr,
    shown: &Path,
    dev: libc::dev_t,
    depth: usize,
    top: &Top<'_>,
) -> io::Result<()> {
    let gone = |r: nix::Result<()>| match r {
        Ok(()) | Err(Errno::ENOENT) => Ok(()),
        Err(e) => Err(err(e, shown)),
    };
    let pinned = match pin(dir, name) {
        Ok(fd) => fd,
        Err(Errno::ENOENT) => return Ok(()),
        Err(Errno::EXDEV) => return Err(mount_point(shown)),
        Err(e) => return Err(err(e, shown)),
    };
    let st = fstat(&pinned).map_err(|e| err(e, shown))?;
    if !is_dir(&st) {
        // A symlink, file, FIFO, socket or device: the name is removed, never a target.
        // Swapped for a directory meanwhile: EISDIR, an error.
        return gone(unlinkat(dir, name, UnlinkatFlags::NoRemoveDir));
    }
    if st.st_dev != dev {
        return Err(mount_point(shown));
    }
    if depth + 1 >= MAX_DEPTH {
        return lift(dir, name, shown, top);
    }
    let mut sub = open_pinned_dir(&pinned, &st, shown)?;
    drop(pinned);
    empty(&mut sub, shown, dev, depth + 1, top, &|_| false)?;
    drop(sub);
    gone(unlinkat(dir, name, UnlinkatFlags::RemoveDir))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::{symlink, PermissionsExt};

    fn tmp() -> tempfile::TempDir {
        tempfile::Builder::new()
            .prefix("cordon-rm-")
            .tempdir_in("/var/tmp")
            .unwrap()
    }

    #[test]
    fn removes_a_tree_with_mode_000_directories_and_links() {
        let t = tmp();
        let top = t.path().join("top");
        std::fs::create_dir_all(top.join("a/work/work/inner")).unwrap();
        std::fs::write(top.join("a/work/work/inner/f"), b"x").unwrap();
        std::fs::write(top.join("a/f"), b"x").unwrap();
        symlink("/etc/passwd", top.join("a/l")).unwrap();
        std::fs::set_permissions(top.join("a/work/work"), PermissionsExt::from_mode(0o000))
            .unwrap();
        remove_tree(&top).unwrap();
        assert!(!top.exists());
    }

    #[test]
    fn a_symlinked_directory_is_unlinked_not_followed() {
        let t = tmp();
        let outside = t.path().join("outside");
        std::fs::create_dir(&outside).unwrap();
        std::fs::write(outside.join("keep"), b"k").unwrap();
        std::fs::set_permissions(&outside, PermissionsExt::from_mode(0o500)).unwrap();
        let top = t.path().join("top");
        std::fs::create_dir_all(top.join("upper")).unwrap();
        symlink(&outside, top.join("upper/d")).unwrap();
        remove_tree(&top).unwrap();
        assert!(!top.exists());
        assert_eq!(std::fs::read(outside.join("keep")).unwrap(), b"k");
        let mode = std::fs::metadata(&outside).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o500, "the link's target was chmodded");
    }

    /// A concurrent writer keeps exchanging a directory of the tree with a symlink to an
    /// outside directory (`renameat2(RENAME_EXCHANGE)`, atomic) while the tree is removed:
    /// whatever the timing, nothing outside is chmodded or removed. A path-based walk
    /// (`lstat`, then `chmod`/`opendir` of the same path) follows the link within a few
    /// rounds.
    #[cfg(target_env = "gnu")]
    #[test]
    fn a_directory_swapped_for_a_symlink_during_removal_is_not_followed() {
        use nix::fcntl::{renameat2, RenameFlags};
        use std::sync::atomic::{AtomicBool, Ordering};
        use std::sync::Arc;
        let t = tmp();
        let outside = t.path().join("outside");
        std::fs::create_dir(&outside).unwrap();
        for round in 0..300 {
            for i in 0..8 {
                std::fs::write(outside.join(format!("keep{i}")), b"k").unwrap();
            }
            std::fs::set_permissions(&outside, PermissionsExt::from_mode(0o755)).unwrap();
            let top = t.path().join(format!("top{round}"));
            let up = top.join("upper");
            std::fs::create_dir_all(&up).unwrap();
            for i in 0..8 {
                std::fs::create_dir(up.join(format!("d{i}"))).unwrap();
                std::fs::write(up.join(format!("d{i}/keep{i}")), b"in").unwrap();
                symlink(&outside, up.join(format!("l{i}"))).unwrap();
            }
            let stop = Arc::new(AtomicBool::new(false));
            let swapper = {
                let stop = stop.clone();
                let dir = std::fs::File::open(&up).unwrap();
                std::thread::spawn(move || {
                    while !stop.load(Ordering::Relaxed) {
                        for i in 0..8 {
                            let (d, l) = (format!("d{i}"), format!("l{i}"));
                            let _ = renameat2(
                                &dir,
                                d.as_str(),
                                &dir,
                                l.as_str(),
                                RenameFlags::RENAME_EXCHANGE,
                            );
                        }
                    }
                })
            };
            let _ = remove_tree(&top);
            stop.store(true, Ordering::Relaxed);
            swapper.join().unwrap();
            for i in 0..8 {
                assert!(
                    outside.join(format!("keep{i}")).exists(),
                    "round {round}: a file outside the tree was removed"
                );
            }
            let mode = std::fs::metadata(&outside).unwrap().permissions().mode();
            assert_eq!(
                mode & 0o777,
                0o755,
                "round {round}: the outside directory was chmodded"
            );
            // Without the writer the rest goes.
            if top.exists() {
                remove_tree(&top).unwrap();
            }
            assert!(!top.exists());
        }
    }

    #[test]
    fn a_symlinked_top_is_refused() {
        let t = tmp();
        let outside = t.path().join("outside");
        std::fs::create_dir(&outside).unwrap();
        std::fs::write(outside.join("keep"), b"k").unwrap();
        symlink(&outside, t.path().join("top")).unwrap();
        assert!(remove_tree(&t.path().join("top")).is_err());
        assert_eq!(std::fs::read(outside.join("keep")).unwrap(), b"k");
        assert!(std::fs::symlink_metadata(t.path().join("top")).is_ok());
    }

    /// A mount point inside the tree (here a bind mount of an outside directory: same
    /// filesystem, same `st_dev`) is not entered: an error names it and the files of the
    /// mounted directory survive. Needs root (mount).
    #[test]
    fn a_mount_point_in_the_tree_is_not_crossed() {
        if !nix::unistd::geteuid().is_root() {
            eprintln!("SKIP: bind mounts need root");
            return;
        }
        let t = tmp();
        let outside = t.path().join("outside");
        std::fs::create_dir(&outside).unwrap();
        std::fs::write(outside.join("keep"), b"k").unwrap();
        let top = t.path().join("top");
        let m = top.join("upper/m");
        std::fs::create_dir_all(&m).unwrap();
        let st = std::process::Command::new("mount")
            .arg("--bind")
            .arg(&outside)
            .arg(&m)
            .status()
            .unwrap();
        assert!(st.success(), "mount --bind failed");
        let r = remove_tree(&top);
        let _ = std::process::Command::new("umount").arg(&m).status();
        let e = r.unwrap_err();
        assert!(
            e.to_string().contains("mount point") && e.to_string().contains("upper/m"),
            "{e}"
        );
        assert_eq!(std::fs::read(outside.join("keep")).unwrap(), b"k");
        remove_tree(&top).unwrap();
    }

    #[test]
    fn empty_dir_at_keeps_what_it_is_told() {
        let t = tmp();
        std::fs::create_dir_all(t.path().join("d/x/y")).unwrap();
        std::fs::write(t.path().join("d/.lock"), b"").unwrap();
        let fd = super::super::sys::open_dir_nofollow(&t.path().join("d")).unwrap();
        empty_dir_at(fd.as_fd(), &t.path().join("d"), &|n| n == c".lock").unwrap();
        let left: Vec<_> = std::fs::read_dir(t.path().join("d"))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(left, vec![std::ffi::OsString::from(".lock")]);
    }

    /// Attack pass 154, F4: a tree deeper than [`MAX_DEPTH`] (made with relative
    /// `mkdir`s, so its paths are longer than `PATH_MAX` too) is removed whole, by
    /// [`remove_tree`] and by [`empty_dir_at`] (whose kept names stay); nothing outside
    /// is touched.
    #[test]
    fn a_tree_of_any_depth_is_removed() {
        let t = tmp();
        let deep = |top: &Path| {
            std::fs::create_dir_all(top).unwrap();
            let mut d = std::fs::File::open(top).unwrap();
            for i in 0..(MAX_DEPTH * 3 + 7) {
                let name = CString::new(format!("level-{i}-of-a-long-name")).unwrap();
                nix::sys::stat::mkdirat(&d, name.as_c_str(), Mode::from_bits_truncate(0o755))
                    .unwrap();
                if i % 100 == 0 {
                    let f = openat(
                        &d,
                        name.as_c_str(),
                        OFlag::O_CREAT | OFlag::O_WRONLY,
                        Mode::from_bits_truncate(0o644),
                    );
                    drop(f);
                }
                let fd = openat(
                    &d,
                    name.as_c_str(),
                    OFlag::O_RDONLY | OFlag::O_DIRECTORY,
                    Mode::empty(),
                )
                .unwrap();
                d = std::fs::File::from(fd);
            }
            std::fs::write(t.path().join("beside"), "x").unwrap();
        };
        deep(&t.path().join("top"));
        remove_tree(&t.path().join("top")).unwrap();
        assert!(!t.path().join("top").exists());
        deep(&t.path().join("layer/cache"));
        std::fs::write(t.path().join("layer/.lock"), "").unwrap();
        let fd = std::fs::File::open(t.path().join("layer")).unwrap();
        empty_dir_at(fd.as_fd(), &t.path().join("layer"), &|n| n == c".lock").unwrap();
        let left: Vec<_> = std::fs::read_dir(t.path().join("layer"))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(left, vec![std::ffi::OsString::from(".lock")]);
        assert!(t.path().join("beside").exists());
    }
}
