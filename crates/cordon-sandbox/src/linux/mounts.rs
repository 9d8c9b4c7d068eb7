//! The filesystem view of rung 1 (R-L1): a new root built from mounts in a private mount
//! namespace.
//!
//! [`layout`] decides (purely) what to mount; [`build`] does it inside the sandbox's init
//! process with the new mount API (`open_tree` + `mount_setattr` + `move_mount`), so a
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
//! - a minimal `/dev` (null, zero, full, random, urandom, tty from the host; a new `devpts`
//!   instance; `shm` tmpfs; fd/stdin/stdout/stderr/ptmx symlinks; never block devices);
//! - a fresh `/proc` for the new pid namespace, with `sys`, `sysrq-trigger`, `irq` and
//!   `bus` read-only.
//!
//! Entries under `/dev` or `/proc` are ignored (those trees are rebuilt; noted).

use super::sys;
use cordon_policy::{Access, EntryOrigin, ResolvedFilesystem};
use std::ffi::{CStr, CString};
use std::io;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// What the new root starts from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Base {
    /// The host root, recursively read-only.
    HostReadOnly,
    /// The host root, writable.
    HostWritable,
    /// An empty tmpfs (read-only once built).
    Empty,
}

/// One mount step of the layout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StepKind {
    /// A fresh writable tmpfs (mode 1777) on `/tmp`.
    PrivateTmp,
    /// A recursive bind of the same host path; read-only unless `writable`.
    Bind {
        /// Writable bind.
        writable: bool,
        /// A protected path (R-P3): if it is missing at run time a placeholder is created
        /// on the host first, so the command cannot create it.
        protected: bool,
    },
    /// Hide the path: an empty mode-000 tmpfs (directory) or file, read-only.
    Mask,
}

/// A step: where, what, and whether its mountpoint may be created (true when the nearest
/// layer below it is a tmpfs of ours, never a host directory).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    /// Absolute path inside the sandbox (= host path).
    pub path: PathBuf,
    /// The mount.
    pub kind: StepKind,
    /// The mountpoint may be created (it lives in a tmpfs of ours).
    pub may_create: bool,
}

/// The whole mount plan for one profile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    /// The root.
    pub base: Base,
    /// Steps in order.
    pub steps: Vec<Step>,
    /// Skipped entries and why.
    pub notes: Vec<String>,
    /// `size=` of the private `/tmp` and `/dev/shm` tmpfs in bytes (R-H5 `limits.tmpfs`);
    /// `None`: the kernel default (half of RAM). Set by the helper from the profile.
    pub tmpfs_bytes: Option<u64>,
}

/// The options of a private tmpfs (`/tmp`, `/dev/shm`): mode 1777 and, when limited,
/// `size=`.
fn tmpfs_opts(size: &Option<CString>) -> Vec<(&CStr, Option<&CStr>)> {
    let mut o: Vec<(&CStr, Option<&CStr>)> = vec![(c"mode", Some(c"1777"))];
    if let Some(s) = size {
        o.push((c"size", Some(s.as_c_str())));
    }
    o
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Ctx {
    Host { writable: bool },
    Own,
}

fn under_rebuilt_tree(p: &Path) -> bool {
    p.starts_with("/proc") || p.starts_with("/dev")
}

/// Computes the mount layout of `fs` (pure). See the module docs for the rules.
pub fn layout(fs: &ResolvedFilesystem) -> Layout {
    let ResolvedFilesystem::Restricted { default, .. } = fs else {
        return Layout {
            base: Base::HostWritable,
            steps: Vec::new(),
            notes: Vec::new(),
            tmpfs_bytes: None,
        };
    };
    let layered = fs.layered();
    let root_access = layered
        .iter()
        .find(|e| e.path == Path::new("/"))
        .map(|e| e.access)
        .unwrap_or(*default);
    let base = match root_access {
        Access::Read => Base::HostReadOnly,
        Access::Write => Base::HostWritable,
        Access::Deny => Base::Empty,
    };
    let base_ctx = match base {
        Base::HostReadOnly => Ctx::Host { writable: false },
        Base::HostWritable => Ctx::Host { writable: true },
        Base::Empty => Ctx::Own,
    };
    let mut notes = Vec::new();
    let mut missing_denies: Vec<String> = Vec::new();
    let mut steps = Vec::new();
    let mut layers: Vec<(PathBuf, Ctx)> = Vec::new();
    let ctx_of = |layers: &[(PathBuf, Ctx)], p: &Path| -> Ctx {
        layers
            .iter()
            .rev()
            .filter(|(lp, _)| p.starts_with(lp) && p != lp)
            .max_by_key(|(lp, _)| lp.components().count())
            .map(|(_, c)| *c)
            .unwrap_or(base_ctx)
    };

    let tmp_denied = layered
        .iter()
        .any(|e| e.path == Path::new("/tmp") && e.access == Access::Deny);
    if !tmp_denied {
        steps.push(Step {
            path: PathBuf::from("/tmp"),
            kind: StepKind::PrivateTmp,
            may_create: base == Base::Empty,
        });
        layers.push((PathBuf::from("/tmp"), Ctx::Own));
    }

    for e in layered {
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
        if e.path == Path::new("/tmp") && !tmp_denied {
            continue; // the private /tmp stands for it
        }
        let parent = ctx_of(&layers, &e.path);
        let protected = matches!(e.origin, EntryOrigin::Protected { .. });
        match e.access {
            Access::Deny => {
                if !e.exists {
                    missing_denies.push(e.path.display().to_string());
                    continue;
                }
                if parent == Ctx::Own {
                    continue; // already invisible
                }
                steps.push(Step {
                    path: e.path.clone(),
                    kind: StepKind::Mask,
                    may_create: false,
                });
                layers.push((e.path.clone(), Ctx::Own));
            }
            Access::Read | Access::Write => {
                let writable = e.access == Access::Write;
                let placeholder = protected && parent == (Ctx::Host { writable: true });
                if !e.exists && !placeholder {
                    if !protected {
                        notes.push(format!(
                            "{} {}: does not exist, skipped",
                            e.access,
                            e.path.display()
                        ));
                    }
                    continue;
                }
                // A pinned directory is bound onto itself even though its parent shows the
                // same access: a mount point cannot be renamed or removed, so the protected
                // paths beneath it cannot be moved aside and re-created (R-P3).
                let pinned = matches!(e.origin, EntryOrigin::Pinned { .. });
                if parent == (Ctx::Host { writable }) && !pinned {
                    continue; // the parent layer already shows exactly this
                }
                steps.push(Step {
                    path: e.path.clone(),
                    kind: StepKind::Bind {
                        writable,
                        protected,
                    },
                    may_create: parent == Ctx::Own,
                });
                layers.push((e.path.clone(), Ctx::Host { writable }));
            }
        }
    }
    if !missing_denies.is_empty() {
        notes.push(format!(
            "{} deny entr{} not present, nothing to hide: {}",
            missing_denies.len(),
            if missing_denies.len() == 1 {
                "y is"
            } else {
                "ies are"
            },
            missing_denies.join(", ")
        ));
    }
    Layout {
        base,
        steps,
        notes,
        tmpfs_bytes: None,
    }
}

/// A protected path that did not exist and was created empty on the host so it could be
/// mounted read-only (R-P3). Removed by [`remove_placeholders`] only while it is still the
/// very entry created here, and still empty.
#[derive(Debug)]
pub struct Placeholder {
    /// A directory (else an empty file).
    pub dir: bool,
    /// The directory it was created in, opened (`O_PATH`, no symlink anywhere in the path)
    /// when it was created: removal acts on that directory even if, meanwhile, it was
    /// renamed or its path was made to lead elsewhere (e.g. `.git` swapped for a symlink).
    parent: OwnedFd,
    /// Its name in `parent`.
    name: CString,
    /// Size of the file placeholder as created (its contents are ours).
    size: libc::off_t,
    /// Device and inode of the entry created.
    dev: libc::dev_t,
    ino: libc::ino_t,
}

fn placeholder_is_dir(p: &Path) -> bool {
    matches!(
        p.file_name().and_then(|n| n.to_str()),
        Some("hooks" | "info" | ".git" | ".cordon" | "cordon" | "modules" | "worktrees")
    )
}

/// What a file placeholder holds. An empty `commondir` would make every git command in the
/// repository fail (git reads it as the location of the common directory), so its
/// placeholder says `.`: the git dir itself, which is what a missing `commondir` means.
/// It is still a read-only mount while the command runs, so the command cannot point git
/// elsewhere; and if it is left behind (helper killed), git keeps working.
fn placeholder_contents(p: &Path) -> &'static [u8] {
    match p.file_name().and_then(|n| n.to_str()) {
        Some("commondir") => b".\n",
        _ => b"",
    }
}

fn is_errno(e: &io::Error, errno: libc::c_int) -> bool {
    e.raw_os_error() == Some(errno)
}

/// Creates placeholders on the host for the protected binds of `layout` whose path is
/// missing now. Runs in the helper (host mount namespace) before the sandbox is built.
///
/// Each placeholder is created relative to a descriptor of its parent directory opened
/// without following any symlink (a path with a symlink in it is an error: the bind would
/// refuse it too), and its device and inode are recorded, so [`remove_placeholders`] can
/// remove exactly it and nothing a symlink planted later points to.
///
/// Side effect (documented for users): while the command runs, e.g. an empty `.cordon/`
/// or `.git/hooks/` exists in the workspace; [`remove_placeholders`] removes it afterwards
/// if it is still empty. A protected path whose parent is missing is skipped (the bind is
/// then skipped too, with a note).
///
/// Errors: creating a placeholder failed for another reason than a missing parent or an
/// entry that appeared meanwhile (the helper then refuses to run: the path could not be
/// protected).
pub fn create_placeholders(layout: &Layout) -> io::Result<Vec<Placeholder>> {
    let mut out = Vec::new();
    for s in &layout.steps {
        if !matches!(
            s.kind,
            StepKind::Bind {
                protected: true,
                ..
            }
        ) {
            continue;
        }
        match create_placeholder(&s.path) {
            Ok(Some(p)) => out.push(p),
            Ok(None) => {}
            Err(e) => {
                remove_placeholders(&out);
                return Err(io::Error::new(
                    e.kind(),
                    format!(
                        "cannot create placeholder for protected path {}: {e}",
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
fn create_placeholder(path: &Path) -> io::Result<Option<Placeholder>> {
    let (Some(parent), Some(name)) = (path.parent(), path.file_name()) else {
        return Ok(None);
    };
    let pfd = match sys::open_dir_nofollow(parent) {
        Ok(f) => f,
        Err(e) if is_errno(&e, libc::ENOENT) => return Ok(None),
        Err(e) => return Err(ctx_err(format!("opening {}", parent.display()), e)),
    };
    let cname = CString::new(name.as_bytes())?;
    match sys::fstatat_nofollow(pfd.as_raw_fd(), &cname) {
        Ok(_) => return Ok(None),
        Err(e) if is_errno(&e, libc::ENOENT) => {}
        Err(e) => return Err(e),
    }
    let dir = placeholder_is_dir(path);
    let created = if dir {
        sys::mkdirat_excl(pfd.as_raw_fd(), &cname, 0o755)
            .and_then(|()| sys::fstatat_nofollow(pfd.as_raw_fd(), &cname))
    } else {
        sys::create_file_excl(pfd.as_raw_fd(), &cname, 0o644).and_then(|f| {
            use std::io::Write as _;
            let mut file = std::fs::File::from(f);
            file.write_all(placeholder_contents(path))?;
            sys::fstat(file.as_raw_fd())
        })
    };
    match created {
        Ok(st) => Ok(Some(Placeholder {
            size: st.st_size,
            dir,
            parent: pfd,
            name: cname,
            dev: st.st_dev,
            ino: st.st_ino,
        })),
        // Someone else's entry appeared, or the parent went away: nothing of ours.
        Err(e) if is_errno(&e, libc::EEXIST) || is_errno(&e, libc::ENOENT) => Ok(None),
        Err(e) => Err(e),
    }
}

/// Removes the placeholders, deepest first, each only if the entry under its name in the
/// directory it was created in is still the one created (same device and inode, same type,
/// checked without following symlinks) and still as created (an empty directory; a file of
/// the size written). Never resolves the path again: a
/// directory on the way that was renamed or replaced by a symlink cannot redirect the
/// removal (`unlinkat` relative to the directory descriptor kept since creation).
pub fn remove_placeholders(p: &[Placeholder]) {
    for ph in p.iter().rev() {
        let dirfd = ph.parent.as_raw_fd();
        let Ok(st) = sys::fstatat_nofollow(dirfd, &ph.name) else {
            continue;
        };
        if st.st_dev != ph.dev || st.st_ino != ph.ino {
            continue; // not the entry created here any more
        }
        let kind = st.st_mode & libc::S_IFMT;
        if ph.dir {
            if kind == libc::S_IFDIR {
                // rmdir removes only an empty directory.
                let _ = sys::unlinkat(dirfd, &ph.name, libc::AT_REMOVEDIR);
            }
        } else if kind == libc::S_IFREG && st.st_size == ph.size {
            let _ = sys::unlinkat(dirfd, &ph.name, 0);
        }
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

/// Handles kept after [`build`]: descriptors the Landlock layer needs.
pub struct Built {
    /// `O_PATH` descriptor of the host's `/dev/pts`, so a terminal inherited from the host
    /// can still be reopened through `/proc/self/fd` under Landlock.
    pub host_devpts: Option<OwnedFd>,
    /// Skipped steps and why.
    pub notes: Vec<String>,
}

/// Builds the new root and pivots into it. Must run in a fresh mount namespace owned by a
/// user namespace in which the caller has `CAP_SYS_ADMIN`, inside the new pid namespace
/// (for `/proc`). Afterwards `/` is the new root and the host root is detached; the cwd
/// is `/`.
///
/// Errors: any failed mount step, with the step named (the caller refuses to run).
pub fn build(layout: &Layout) -> io::Result<Built> {
    let mut notes = layout.notes.clone();
    let mut make_ro: Vec<OwnedFd> = Vec::new();
    let tmpfs_size = layout
        .tmpfs_bytes
        .map(|b| CString::new(b.to_string()).expect("digits have no NUL"));
    const NOSUID_NODEV: u64 = sys::MOUNT_ATTR_NOSUID | sys::MOUNT_ATTR_NODEV;

    sys::make_rprivate(c"/").map_err(|e| ctx_err("making / private", e))?;
    // Staging: a tmpfs that becomes the root for the time of the build, with the host
    // root at /oldroot (bwrap's approach; /oldroot is never modified, so it is the
    // source of every bind).
    let staging = if Path::new("/tmp").is_dir() {
        c"/tmp"
    } else {
        c"/proc"
    };
    sys::mount_tmpfs(staging, c"mode=0700").map_err(|e| ctx_err("staging tmpfs", e))?;
    let st = sys::open_path(Path::new(staging.to_str().unwrap_or("/tmp")), true)?;
    sys::mkdirat(st.as_raw_fd(), c"newroot", 0o755)?;
    sys::mkdirat(st.as_raw_fd(), c"oldroot", 0o755)?;
    sys::mkfileat(st.as_raw_fd(), c"deny-file", 0)?;
    sys::fchdir(&st)?;
    sys::pivot_root(c".", c"oldroot").map_err(|e| ctx_err("pivot_root to staging", e))?;
    drop(st);
    std::env::set_current_dir("/")?;
    let oldroot = sys::open_path(Path::new("/oldroot"), true)?;
    let old = oldroot.as_raw_fd();

    // The base.
    {
        let target = sys::open_path(Path::new("/newroot"), true)?;
        match layout.base {
            Base::HostReadOnly | Base::HostWritable => {
                let tree = sys::clone_tree(old, "", true)
                    .map_err(|e| ctx_err("cloning the host root", e))?;
                let mut set = NOSUID_NODEV;
                if layout.base == Base::HostReadOnly {
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
                make_ro.push(t);
            }
        }
    }
    let root = sys::open_path(Path::new("/newroot"), true)?;
    let r = root.as_raw_fd();

    for s in &layout.steps {
        let rp = rel(&s.path);
        match &s.kind {
            StepKind::PrivateTmp => {
                let t = sys::new_fs(c"tmpfs", &tmpfs_opts(&tmpfs_size), NOSUID_NODEV)
                    .map_err(|e| ctx_err("private /tmp", e))?;
                let target = ensure_target(r, rp, true, s.may_create)
                    .map_err(|e| ctx_err("mountpoint /tmp", e))?;
                sys::attach(&t, &target).map_err(|e| ctx_err("attaching /tmp", e))?;
            }
            StepKind::Bind {
                writable,
                protected,
            } => {
                let src = match sys::open_beneath(old, rp) {
                    Ok(f) => f,
                    Err(e) if e.raw_os_error() == Some(libc::ENOENT) => {
                        notes.push(format!(
                            "{} {}: vanished before the sandbox was built, skipped",
                            if *protected { "protected" } else { "entry" },
                            s.path.display()
                        ));
                        continue;
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
                let target = ensure_target(r, rp, dir, s.may_create)
                    .map_err(|e| ctx_err(format!("mountpoint {}", s.path.display()), e))?;
                sys::attach(&tree, &target)
                    .map_err(|e| ctx_err(format!("binding {}", s.path.display()), e))?;
            }
            StepKind::Mask => {
                let target = match sys::open_beneath(r, rp) {
                    Ok(t) => t,
                    Err(e) if e.raw_os_error() == Some(libc::ENOENT) => continue,
                    Err(e) => return Err(ctx_err(format!("opening {}", s.path.display()), e)),
                };
                if is_dir_fd(&target)? {
                    let t = sys::new_fs(
                        c"tmpfs",
                        &[(c"mode", Some(c"000")), (c"size", Some(c"4k"))],
                        NOSUID_NODEV | sys::MOUNT_ATTR_NOEXEC,
                    )
                    .map_err(|e| ctx_err("mask tmpfs", e))?;
                    sys::attach(&t, &target)
                        .map_err(|e| ctx_err(format!("masking {}", s.path.display()), e))?;
                    make_ro.push(t);
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
            }
        }
    }

    // /dev
    let dev_tmpfs = sys::new_fs(
        c"tmpfs",
        &[(c"mode", Some(c"0755"))],
        sys::MOUNT_ATTR_NOSUID,
    )
    .map_err(|e| ctx_err("/dev tmpfs", e))?;
    {
        let target = ensure_target(r, Path::new("dev"), true, layout.base == Base::Empty)
            .map_err(|e| ctx_err("mountpoint /dev", e))?;
        sys::attach(&dev_tmpfs, &target).map_err(|e| ctx_err("attaching /dev", e))?;
    }
    let dev = sys::open_beneath(r, Path::new("dev"))?;
    let d = dev.as_raw_fd();
    for name in ["null", "zero", "full", "random", "urandom", "tty"] {
        let src = match sys::clone_tree(old, &format!("dev/{name}"), false) {
            Ok(s) => s,
            Err(e) => {
                notes.push(format!("/dev/{name} not available: {e}"));
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
        Err(e) => notes.push(format!("/dev/pts not available: {e}")),
    }
    sys::mkdirat(d, c"shm", 0o1777)?;
    {
        let shm = sys::new_fs(c"tmpfs", &tmpfs_opts(&tmpfs_size), NOSUID_NODEV)
            .map_err(|e| ctx_err("/dev/shm", e))?;
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
    make_ro.push(dev_tmpfs);
    drop(dev);

    // /proc
    {
        let proc_fs = sys::new_fs(c"proc", &[], NOSUID_NODEV | sys::MOUNT_ATTR_NOEXEC)
            .map_err(|e| ctx_err("mounting a fresh /proc", e))?;
        let target = ensure_target(r, Path::new("proc"), true, layout.base == Base::Empty)
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
    }

    for m in &make_ro {
        sys::mount_setattr(m.as_raw_fd(), false, sys::MOUNT_ATTR_RDONLY, 0)
            .map_err(|e| ctx_err("making a tmpfs read-only", e))?;
    }
    drop(make_ro);

    let host_devpts = sys::open_beneath(old, Path::new("dev/pts")).ok();
    drop(oldroot);

    // Into the new root; the staging root (with the host root under it) is detached.
    sys::fchdir(&root)?;
    sys::pivot_root(c".", c".").map_err(|e| ctx_err("pivot_root", e))?;
    sys::detach(c".").map_err(|e| ctx_err("detaching the old root", e))?;
    std::env::set_current_dir("/")?;
    Ok(Built { host_devpts, notes })
}

#[cfg(test)]
mod tests {
    use super::*;
    use cordon_policy::{
        resolve, FilesystemPolicy, FsEntry, MemFs, PermissionProfile, ResolveContext,
    };

    fn fs() -> MemFs {
        MemFs::new()
            .dir("/home/u/proj/.git/hooks")
            .file("/home/u/proj/.git/config", "")
            .dir("/home/u/.ssh")
            .file("/home/u/.netrc", "x")
            .dir("/tmp/ws/.git")
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
        assert_eq!(l.steps[0].kind, StepKind::PrivateTmp);
        assert_eq!(
            find(&l, "/home/u/proj").unwrap().kind,
            StepKind::Bind {
                writable: true,
                protected: false
            }
        );
        assert_eq!(find(&l, "/home/u/.ssh").unwrap().kind, StepKind::Mask);
        assert_eq!(find(&l, "/home/u/.netrc").unwrap().kind, StepKind::Mask);
        assert!(find(&l, "/home/u/.aws").is_none());
        assert!(l.notes.iter().any(|n| n.contains(".aws")));
        for p in ["/home/u/proj/.git/hooks", "/home/u/proj/.git/config"] {
            assert_eq!(
                find(&l, p).unwrap().kind,
                StepKind::Bind {
                    writable: false,
                    protected: true
                },
                "{p}"
            );
        }
        // Missing protected paths inside a writable root are kept (placeholders).
        assert!(find(&l, "/home/u/proj/.cordon").is_some());
        assert!(find(&l, "/home/u/proj/.git/info").is_some());
        // Deeper first never comes before shallower.
        let depths: Vec<usize> = l
            .steps
            .iter()
            .map(|s| s.path.components().count())
            .collect();
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
                protected: false
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
        assert_eq!(find(&l, "/home/u").unwrap().kind, StepKind::Mask);
        let proj = find(&l, "/home/u/proj").unwrap();
        assert!(proj.may_create, "inside the mask tmpfs");
    }

    #[test]
    fn proc_and_dev_entries_are_ignored_with_a_note() {
        let l = lay(
            Access::Read,
            vec![FsEntry::new("/dev/sda", Access::Write)],
            "/home/u/proj",
        );
        assert!(find(&l, "/dev/sda").is_none());
        assert!(l.notes.iter().any(|n| n.contains("/dev/sda")));
    }

    #[test]
    fn unrestricted_is_the_writable_host_root() {
        let l = layout(&ResolvedFilesystem::Unrestricted);
        assert_eq!(l.base, Base::HostWritable);
        assert!(l.steps.is_empty());
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
                    },
                    may_create: false,
                })
                .collect(),
            notes: Vec::new(),
            tmpfs_bytes: None,
        }
    }

    fn tmp() -> (tempfile::TempDir, PathBuf) {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().canonicalize().unwrap();
        (d, p)
    }

    /// Item 2: `.git` moved aside and replaced by a symlink while the command ran: removal
    /// acts on the directory the placeholders were created in (now `.g`), never on what
    /// the symlink points to. Fails when placeholders are removed by path.
    #[test]
    fn placeholder_removal_does_not_follow_a_planted_symlink() {
        let (_d, root) = tmp();
        let ws = root.join("ws");
        let elsewhere = root.join("elsewhere");
        std::fs::create_dir_all(ws.join(".git")).unwrap();
        let l = protected_layout(&[
            &ws.join(".git/hooks"),
            &ws.join(".git/info"),
            &ws.join(".git/config"),
        ]);
        let ph = create_placeholders(&l).unwrap();
        assert_eq!(ph.len(), 3);
        assert!(ws.join(".git/hooks").is_dir() && ws.join(".git/info").is_dir());
        assert_eq!(std::fs::read(ws.join(".git/config")).unwrap(), b"");
        // The attack: the same names, empty, elsewhere; .git swapped for a symlink there.
        for d in ["hooks", "info"] {
            std::fs::create_dir_all(elsewhere.join(d)).unwrap();
        }
        std::fs::write(elsewhere.join("config"), "").unwrap();
        std::fs::rename(ws.join(".git"), ws.join(".g")).unwrap();
        std::os::unix::fs::symlink(&elsewhere, ws.join(".git")).unwrap();
        remove_placeholders(&ph);
        for n in ["hooks", "info", "config"] {
            assert!(
                elsewhere.join(n).exists(),
                "{n} removed through the symlink"
            );
            assert!(
                !ws.join(".g").join(n).exists(),
                "own placeholder {n} left behind"
            );
        }
    }

    /// Only the very entry created, and only while empty: a placeholder replaced by another
    /// (empty) directory or a symlink, or given content, stays.
    #[test]
    fn placeholder_removal_only_removes_the_same_empty_entry() {
        let (_d, root) = tmp();
        let ws = root.join("ws");
        std::fs::create_dir_all(ws.join(".git")).unwrap();
        let l = protected_layout(&[
            &ws.join(".cordon"),
            &ws.join(".git/hooks"),
            &ws.join(".git/info"),
            &ws.join(".git/config"),
        ]);
        let ph = create_placeholders(&l).unwrap();
        assert_eq!(ph.len(), 4);
        // .cordon: replaced by a new empty directory (another inode: it is made while the
        // placeholder still exists, so the inode number cannot be reused).
        std::fs::create_dir(ws.join(".cordon.new")).unwrap();
        std::fs::remove_dir(ws.join(".cordon")).unwrap();
        std::fs::rename(ws.join(".cordon.new"), ws.join(".cordon")).unwrap();
        // hooks: replaced by a symlink to an empty directory.
        std::fs::remove_dir(ws.join(".git/hooks")).unwrap();
        std::fs::create_dir(root.join("target")).unwrap();
        std::os::unix::fs::symlink(root.join("target"), ws.join(".git/hooks")).unwrap();
        // info: given content; config: given content.
        std::fs::write(ws.join(".git/info/exclude"), "x").unwrap();
        std::fs::write(ws.join(".git/config"), "[core]\n").unwrap();
        remove_placeholders(&ph);
        assert!(ws.join(".cordon").is_dir());
        assert!(std::fs::symlink_metadata(ws.join(".git/hooks"))
            .unwrap()
            .file_type()
            .is_symlink());
        assert!(root.join("target").is_dir());
        assert!(ws.join(".git/info/exclude").exists());
        assert_eq!(std::fs::read(ws.join(".git/config")).unwrap(), b"[core]\n");
        // Twin: untouched placeholders are removed, and existing paths are never taken.
        let ph = create_placeholders(&protected_layout(&[
            &ws.join(".git/new"),
            &ws.join(".cordon"),
        ]))
        .unwrap();
        assert_eq!(ph.len(), 1, "an existing path is not a placeholder");
        remove_placeholders(&ph);
        assert!(!ws.join(".git/new").exists());
        assert!(ws.join(".cordon").is_dir());
    }

    /// A symlink on the way to a placeholder is refused, not followed; a missing parent is
    /// skipped.
    #[test]
    fn placeholder_paths_with_symlinks_are_refused() {
        let (_d, root) = tmp();
        std::fs::create_dir(root.join("real")).unwrap();
        std::os::unix::fs::symlink(root.join("real"), root.join("link")).unwrap();
        let e = create_placeholders(&protected_layout(&[&root.join("link/.cordon")])).unwrap_err();
        assert!(e.to_string().contains("link/.cordon"), "{e}");
        assert!(!root.join("real/.cordon").exists());
        let ph = create_placeholders(&protected_layout(&[&root.join("missing/.cordon")])).unwrap();
        assert!(ph.is_empty());
    }
}
