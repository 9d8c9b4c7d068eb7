//! The host filesystem as a [`FsView`], with bounded reads of files a confined command
//! could have written (issue 7 item 7).
//!
//! Resolution reads `.git` files, `gitdir`/`commondir` pointers and git configuration from
//! inside writable roots. A previous run may have left a FIFO there (an ordinary `open`
//! blocks forever) or a symlink to `/dev/zero` (an ordinary read never ends). Every read
//! here therefore:
//! 1. resolves the path once (`realpath`) and opens the *resolved* path with
//!    `O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY` (a symlink swapped in after the
//!    check is refused, a FIFO does not block),
//! 2. checks with `fstat` on the opened descriptor that it is a regular file,
//! 3. reads at most `cap + 1` bytes and refuses a larger file,
//!
//! and says which path it refused and why ([`ReadRefusal`]), so resolution can name it.

use cordon_policy::paths::{FileKind, FsView, ReadRefusal, SMALL_FILE_CAP};
use std::io::Read;
use std::path::{Path, PathBuf};

/// The host filesystem as a [`FsView`]: `realpath`/`stat` for paths, and
/// [`read_small_file`] for every read.
#[derive(Debug, Default, Clone, Copy)]
pub struct HostFs;

impl FsView for HostFs {
    fn canonicalize(&self, p: &Path) -> Option<PathBuf> {
        std::fs::canonicalize(p).ok()
    }
    fn read_only_mount(&self, p: &Path) -> Option<bool> {
        let at = p.ancestors().find(|a| std::fs::metadata(a).is_ok())?;
        nix::sys::statvfs::statvfs(at)
            .ok()
            .map(|v| v.flags().contains(nix::sys::statvfs::FsFlags::ST_RDONLY))
    }
    fn kind(&self, p: &Path) -> Option<FileKind> {
        // `stat` never opens the file: safe on FIFOs and devices.
        std::fs::metadata(p).ok().map(|m| {
            if m.is_dir() {
                FileKind::Dir
            } else {
                FileKind::File
            }
        })
    }
    fn read_to_string(&self, p: &Path) -> Option<String> {
        read_small_file(p, SMALL_FILE_CAP).ok()
    }
    fn read_small(&self, p: &Path, cap: u64) -> Result<String, ReadRefusal> {
        read_small_file(p, cap)
    }
    fn read_small_lossy(&self, p: &Path, cap: u64) -> Result<String, ReadRefusal> {
        read_small_bytes(p, cap).map(|b| String::from_utf8_lossy(&b).into_owned())
    }
    fn identity(&self, p: &Path) -> Option<cordon_policy::paths::FileIdentity> {
        use std::os::unix::fs::MetadataExt;
        let m = std::fs::metadata(p).ok()?;
        // `statx` birth time; none on some filesystems.
        let born = m
            .created()
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or((0, 0), |d| (d.as_secs() as i64, d.subsec_nanos()));
        Some((m.dev(), m.ino(), born.0, born.1))
    }
    fn read_link(&self, p: &Path) -> Option<PathBuf> {
        // `readlink` never opens the target.
        std::fs::read_link(p).ok()
    }
    fn entry(&self, p: &Path) -> Option<cordon_policy::paths::Entry> {
        use cordon_policy::paths::Entry;
        // One `lstat` (never opens anything); a `readlink` only for a link.
        let m = std::fs::symlink_metadata(p).ok()?;
        if m.file_type().is_symlink() {
            return std::fs::read_link(p).ok().map(Entry::Link);
        }
        Some(Entry::Kind(if m.is_dir() {
            FileKind::Dir
        } else {
            FileKind::File
        }))
    }
    fn list_dir_typed(&self, p: &Path, cap: usize) -> Option<Vec<(std::ffi::OsString, bool)>> {
        // The listing's entry types (`d_type`; std falls back to `lstat` where the
        // filesystem gives none): a symlink is never a directory here. Never opens a file.
        // A directory that cannot be opened for listing is `None`; an entry that cannot
        // be read mid-listing makes the whole listing `None` too (never a short one).
        // A directory that can be listed but not searched (`chmod 644`) is `None` as
        // well: nothing in it can be looked at, so a `.git` the listing names could not be
        // told from an absent one (breaker, stop 21).
        let mut out = Vec::new();
        for e in std::fs::read_dir(p).ok()?.take(cap) {
            let e = e.ok()?;
            let dir = e.file_type().is_ok_and(|t| t.is_dir());
            out.push((e.file_name(), dir));
        }
        nix::unistd::faccessat(
            nix::fcntl::AT_FDCWD,
            p,
            nix::unistd::AccessFlags::X_OK,
            nix::fcntl::AtFlags::AT_EACCESS,
        )
        .ok()?;
        Some(out)
    }
    fn is_empty_dir(&self, p: &Path) -> bool {
        // Lists at most one entry; never opens a file.
        std::fs::read_dir(p).is_ok_and(|mut d| d.next().is_none())
    }
    fn list_dir(&self, p: &Path, cap: usize) -> Vec<std::ffi::OsString> {
        // Names only; never opens a file.
        std::fs::read_dir(p)
            .map(|d| {
                d.take(cap)
                    .filter_map(|e| e.ok().map(|e| e.file_name()))
                    .collect()
            })
            .unwrap_or_default()
    }
}

/// The kind of a non-regular file, in plain words.
fn kind_name(ft: std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if ft.is_fifo() {
            return "fifo";
        }
        if ft.is_char_device() {
            return "character device";
        }
        if ft.is_block_device() {
            return "block device";
        }
        if ft.is_socket() {
            return "socket";
        }
    }
    if ft.is_dir() {
        "directory"
    } else if ft.is_symlink() {
        "symlink"
    } else {
        "special file"
    }
}

/// Reads the regular text file at `p` (after resolving symlinks once) if it is at most
/// `cap` bytes. Never blocks on a FIFO, never reads a device, never reads more than
/// `cap + 1` bytes.
///
/// Errors: [`ReadRefusal::Missing`] (absent or dangling), [`ReadRefusal::NotRegular`]
/// (FIFO, device, socket, directory, or a symlink that appeared after resolution),
/// [`ReadRefusal::TooLarge`], [`ReadRefusal::Unreadable`] (permission, I/O, not UTF-8).
pub fn read_small_file(p: &Path, cap: u64) -> Result<String, ReadRefusal> {
    String::from_utf8(read_small_bytes(p, cap)?)
        .map_err(|_| ReadRefusal::Unreadable("not UTF-8 text".into()))
}

/// [`read_small_file`]'s bytes, whatever they hold.
///
/// Errors: as [`read_small_file`], except that bytes that are not UTF-8 are returned.
pub fn read_small_bytes(p: &Path, cap: u64) -> Result<Vec<u8>, ReadRefusal> {
    let resolved = match std::fs::canonicalize(p) {
        Ok(r) => r,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(ReadRefusal::Missing),
        Err(e) => return Err(ReadRefusal::Unreadable(e.to_string())),
    };
    read_small_pinned(&resolved, cap).map(|(buf, _)| buf)
}

/// The entry `rel` names beneath the directory `dir`, not followed if a symlink, as
/// `lstat` sees it — reached with no symlink followed anywhere (neither on `dir`'s own path
/// nor on `rel`'s) and never leaving `dir`: what a host-side look at a path that a file
/// inside a writable root named (a git index's gitlink) may see (attack pass 212 #2: an
/// index's `../victim` had cordon look outside the workspace). `None` when it is not
/// there, when the way there holds a symlink or `..`, or when `rel` is absolute or empty.
pub fn symlink_metadata_beneath(dir: &Path, rel: &Path) -> Option<std::fs::Metadata> {
    use std::path::Component;
    let mut parts = Vec::new();
    for c in rel.components() {
        match c {
            Component::Normal(n) => parts.push(n),
            Component::CurDir => {}
            _ => return None,
        }
    }
    let name = parts.pop()?;
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        let top = crate::linux::sys::open_dir_nofollow(dir).ok()?;
        let parent = if parts.is_empty() {
            top
        } else {
            let between: PathBuf = parts.iter().collect();
            crate::linux::sys::open_beneath(top.as_raw_fd(), &between).ok()?
        };
        let c = std::ffi::CString::new(std::os::unix::ffi::OsStrExt::as_bytes(name)).ok()?;
        let f = std::fs::File::from(
            crate::linux::sys::open_path_at_nofollow(parent.as_raw_fd(), &c).ok()?,
        );
        f.metadata().ok()
    }
    #[cfg(not(target_os = "linux"))]
    {
        // Each step looked at without following it (not race-free here).
        let mut at = dir.to_path_buf();
        if dir
            .ancestors()
            .any(|a| std::fs::symlink_metadata(a).map_or(true, |m| m.file_type().is_symlink()))
        {
            return None;
        }
        for p in parts {
            at.push(p);
            if !std::fs::symlink_metadata(&at).ok()?.is_dir() {
                return None;
            }
        }
        std::fs::symlink_metadata(at.join(name)).ok()
    }
}

/// [`read_small_bytes`] of `p` as spelled — its final component never followed, nothing
/// resolved first — with the metadata of the very file read (`fstat` of the descriptor
/// the bytes came from): what a host-side reader inside a writable root checks and keeps
/// is the file it read, not one found at the path before or after.
///
/// Errors: as [`read_small_bytes`]; a final symlink is [`ReadRefusal::NotRegular`].
pub fn read_small_pinned(p: &Path, cap: u64) -> Result<(Vec<u8>, std::fs::Metadata), ReadRefusal> {
    let mut opts = std::fs::OpenOptions::new();
    opts.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC | libc::O_NOCTTY);
    }
    let file = match opts.open(p) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(ReadRefusal::Missing),
        #[cfg(unix)]
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) => {
            return Err(ReadRefusal::NotRegular(
                "symlink (it changed while being read)".into(),
            ))
        }
        Err(e) => return Err(ReadRefusal::Unreadable(e.to_string())),
    };
    let meta = file
        .metadata()
        .map_err(|e| ReadRefusal::Unreadable(e.to_string()))?;
    if !meta.is_file() {
        return Err(ReadRefusal::NotRegular(kind_name(meta.file_type()).into()));
    }
    if meta.len() > cap {
        return Err(ReadRefusal::TooLarge(cap));
    }
    let mut buf = Vec::with_capacity(meta.len() as usize);
    file.take(cap + 1)
        .read_to_end(&mut buf)
        .map_err(|e| ReadRefusal::Unreadable(e.to_string()))?;
    if buf.len() as u64 > cap {
        return Err(ReadRefusal::TooLarge(cap));
    }
    Ok((buf, meta))
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    /// Attack pass 212 #2, sibling: a path an index names that passes git's checks but
    /// leads out through a symlink in the workspace (`link/main` with `link -> outside`)
    /// is not looked at; `..` and absolute paths neither; twin: a plain path below it is,
    /// and a final symlink is seen as itself.
    #[test]
    fn metadata_beneath_never_leaves_the_directory() {
        let t = tempfile::tempdir().unwrap();
        let ws = t.path().canonicalize().unwrap().join("ws");
        let outside = ws.with_file_name("outside");
        std::fs::create_dir_all(outside.join("main/.git")).unwrap();
        std::fs::create_dir_all(ws.join("sub/.git")).unwrap();
        std::os::unix::fs::symlink(&outside, ws.join("link")).unwrap();
        std::os::unix::fs::symlink(&outside, ws.join("sub/l")).unwrap();
        assert!(symlink_metadata_beneath(&ws, Path::new("link/main/.git")).is_none());
        assert!(symlink_metadata_beneath(&ws, Path::new("../outside/main/.git")).is_none());
        assert!(symlink_metadata_beneath(&ws, &outside.join("main/.git")).is_none());
        assert!(symlink_metadata_beneath(&ws, Path::new("sub/.git")).is_some_and(|m| m.is_dir()));
        assert!(symlink_metadata_beneath(&ws, Path::new("sub/l"))
            .is_some_and(|m| m.file_type().is_symlink()));
    }

    fn mkfifo(p: &Path) {
        nix::unistd::mkfifo(p, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
    }

    /// `entry` (one `lstat`) answers as `read_link` + `kind` do: a link (dangling too)
    /// with its target, a directory, a file, a FIFO (never opened), nothing.
    #[test]
    fn entry_agrees_with_read_link_and_kind() {
        use cordon_policy::paths::Entry;
        let d = tempfile::tempdir().unwrap();
        let p = |n: &str| d.path().join(n);
        std::fs::create_dir(p("dir")).unwrap();
        std::fs::write(p("file"), "x").unwrap();
        mkfifo(&p("fifo"));
        std::os::unix::fs::symlink("dir", p("link")).unwrap();
        std::os::unix::fs::symlink("nowhere", p("dangling")).unwrap();
        for n in ["dir", "file", "fifo", "link", "dangling", "missing"] {
            let q = p(n);
            let slow = match HostFs.read_link(&q) {
                Some(t) => Some(Entry::Link(t)),
                None => HostFs.kind(&q).map(Entry::Kind),
            };
            assert_eq!(HostFs.entry(&q), slow, "{n}");
        }
        assert_eq!(HostFs.entry(&p("link")), Some(Entry::Link("dir".into())));
        // The listing's types: only the real directory is one; `cap` bounds the listing.
        let mut typed = HostFs.list_dir_typed(d.path(), 100).unwrap();
        typed.sort();
        let want: Vec<(std::ffi::OsString, bool)> = ["dangling", "dir", "fifo", "file", "link"]
            .iter()
            .map(|n| (n.into(), *n == "dir"))
            .collect();
        assert_eq!(typed, want);
        assert_eq!(HostFs.list_dir_typed(d.path(), 2).unwrap().len(), 2);
        assert_eq!(HostFs.list_dir_typed(&p("file"), 2), None);
    }

    /// A FIFO is refused without blocking; a link to `/dev/zero` is refused without
    /// reading; a large file is refused; a normal file (also through a symlink) is read.
    #[test]
    fn refuses_fifos_devices_and_large_files() {
        let d = tempfile::tempdir().unwrap();
        let fifo = d.path().join("fifo");
        mkfifo(&fifo);
        assert_eq!(
            read_small_file(&fifo, 10),
            Err(ReadRefusal::NotRegular("fifo".into()))
        );
        let zero = d.path().join("zero");
        std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
        assert_eq!(
            read_small_file(&zero, 10),
            Err(ReadRefusal::NotRegular("character device".into()))
        );
        let big = d.path().join("big");
        std::fs::write(&big, vec![b'a'; 11]).unwrap();
        assert_eq!(read_small_file(&big, 10), Err(ReadRefusal::TooLarge(10)));
        let ok = d.path().join("ok");
        std::fs::write(&ok, "gitdir: x\n").unwrap();
        let link = d.path().join("link");
        std::os::unix::fs::symlink(&ok, &link).unwrap();
        assert_eq!(read_small_file(&link, 64).unwrap(), "gitdir: x\n");
        assert_eq!(
            read_small_file(&d.path().join("none"), 64),
            Err(ReadRefusal::Missing)
        );
        assert!(matches!(
            read_small_file(d.path(), 64),
            Err(ReadRefusal::NotRegular(_))
        ));
    }
}

/// The effective uid of this process (for advice that depends on running as root: inside
/// the sandbox root keeps no capability, so file modes apply to it as to anyone).
#[cfg(unix)]
pub fn effective_uid() -> u32 {
    nix::unistd::geteuid().as_raw()
}

/// Whether a process this one may look at has the file `path` open now: each
/// `/proc/PID/fd/N` is compared by (device, inode) with `path`, which is looked at without
/// following a symlink. Best effort (another user's descriptors are not visible to an
/// unprivileged caller); false when `path` is not there. A scan of every process: for the
/// rare case of a lock file found after a run, never on the launch path.
pub fn open_by_any_process(path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt as _;
    let Ok(m) = std::fs::symlink_metadata(path) else {
        return false;
    };
    let id = (m.dev(), m.ino());
    let Ok(procs) = std::fs::read_dir("/proc") else {
        return false;
    };
    procs
        .flatten()
        .filter(|p| {
            p.file_name()
                .to_str()
                .is_some_and(|n| n.bytes().all(|b| b.is_ascii_digit()))
        })
        .any(|p| {
            std::fs::read_dir(p.path().join("fd")).is_ok_and(|fds| {
                fds.flatten()
                    .any(|fd| std::fs::metadata(fd.path()).is_ok_and(|f| (f.dev(), f.ino()) == id))
            })
        })
}

#[cfg(test)]
mod open_by_tests {
    /// A file this process holds open is seen as open; closed, it is not (twin).
    #[test]
    fn a_file_held_open_is_seen_as_open() {
        let t = tempfile::tempdir().unwrap();
        let p = t.path().join("index.lock");
        let f = std::fs::File::create(&p).unwrap();
        assert!(super::open_by_any_process(&p));
        drop(f);
        assert!(!super::open_by_any_process(&p));
        assert!(!super::open_by_any_process(&t.path().join("missing")));
    }
}
