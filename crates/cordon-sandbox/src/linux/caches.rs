//! Copy-on-write package caches on Linux (R-C1): whether this host can mount them
//! ([`probe_overlay`], shown by `cordon status`), the hint printed when a command fails
//! while some cache is read-only ([`read_only_hint`]). The mounts themselves are
//! [`super::StepKind::Overlay`] steps of the mount plan.

use super::mounts::{Layout, StepKind};
use super::sys;
use cordon_policy::{CacheMode, ResolvedProfile};
use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::path::{Path, PathBuf};

/// How many runs of one workspace can have its copy-on-write cache layers at the same
/// time (each in its own slot); a run beyond that gets the caches read-only, with a note.
pub const OVERLAY_SLOTS: u32 = 4;

/// How many prepared templates of `cordon serve` ([`super::template`]) can hold one
/// workspace's copy-on-write layers at once. Their slots come after the runs' slots
/// (`OVERLAY_SLOTS..OVERLAY_SLOTS + TEMPLATE_SLOTS`), so a template — which keeps its
/// overlays mounted for its whole life, idle too — never takes a slot a run needs
/// (breaker: four idle templates left every later run of the workspace with read-only
/// caches, and a fifth template's commands were refused).
pub const TEMPLATE_SLOTS: u32 = 4;

/// Every slot lock a workspace's key directory can have (runs' and templates').
const ALL_SLOTS: u32 = OVERLAY_SLOTS + TEMPLATE_SLOTS;

/// Claims a slot of the workspace's copy-on-write layers for this run (R-C1). Overlayfs
/// forbids two mounts sharing an upper or work directory (`EBUSY`, or undefined results
/// on older kernels), and clearing the `volatile` mark of a work directory another run
/// has mounted would break that run: so a run first takes an exclusive `flock` on
/// `<key>/.slot-N.lock` (the key directory created and opened without following symlinks,
/// the lock file opened beneath it with `O_NOFOLLOW`), trying slots 0..[`OVERLAY_SLOTS`]
/// without waiting. Slot 0 keeps the layers in `<key>/<name>/`, slot N in
/// `<key>/.slot-N/<name>/` (the [`StepKind::Overlay`] steps of `layout` are rewritten).
/// The returned descriptor holds the claim: keep it until the run has ended (init, which
/// inherits it, holds it too; the command never does: close-on-exec). With every slot
/// taken, or when the lock cannot be taken at all, the overlay steps are dropped and their
/// caches listed in [`Layout::read_only_caches`] (read-only, with the hint) and in the
/// notes (so the run's report says what the plan promised and this run did not get).
/// `None` when the layout has no overlay.
pub fn claim_overlay_slot(layout: &mut Layout) -> Option<OwnedFd> {
    let why = match claim(layout, 0..OVERLAY_SLOTS) {
        Ok(fd) => return fd,
        Err(Unclaimed::Busy) => format!(
            "{OVERLAY_SLOTS} other runs in this workspace are using its copy-on-write layers; \
             run this after they end"
        ),
        Err(Unclaimed::Failed(why)) => why,
    };
    let mut dropped = Vec::new();
    let mut notes = Vec::new();
    layout.steps.retain(|s| match &s.kind {
        StepKind::Overlay { name, .. } => {
            notes.push(format!(
                "cache `{name}` {}: copy-on-write layer unavailable ({why}); read-only",
                s.path.display()
            ));
            dropped.push((s.path.clone(), why.clone()));
            false
        }
        _ => true,
    });
    layout.read_only_caches.extend(dropped);
    layout.notes.extend(notes);
    None
}

/// [`claim_overlay_slot`] for a prepared template of `cordon serve`: one of the
/// [`TEMPLATE_SLOTS`] template slots, never a run's. `Ok(None)`: the layout has no
/// overlay. Unlike a run, a template without a slot is not made with read-only caches
/// (its commands would not get what their plan says): `Err` says why, `layout`
/// untouched, and the command takes the server's per-command helper, which claims a
/// run's slot as the cold path does.
pub(crate) fn claim_template_slot(layout: &mut Layout) -> Result<Option<OwnedFd>, Unclaimed> {
    claim(layout, OVERLAY_SLOTS..ALL_SLOTS)
}

/// The workspace key directory holding the cache layers of `layout`'s overlays (whose
/// slots they claim); `None` without overlays.
pub(crate) fn overlay_key(layout: &Layout) -> Option<PathBuf> {
    layout.steps.iter().find_map(|s| match &s.kind {
        StepKind::Overlay { state, .. } => state.parent().map(Path::to_path_buf),
        _ => None,
    })
}

/// Why a slot could not be claimed.
pub(crate) enum Unclaimed {
    /// Every slot of the range is held.
    Busy,
    /// The key directory or a lock file could not be used.
    Failed(String),
}

/// Takes the first free slot of `slots` in the workspace key directory of `layout`'s
/// overlays and rewrites their state to it; `Ok(None)` when `layout` has no overlay.
fn claim(layout: &mut Layout, slots: std::ops::Range<u32>) -> Result<Option<OwnedFd>, Unclaimed> {
    let Some(key) = overlay_key(layout) else {
        return Ok(None);
    };
    let claim = (|| -> io::Result<Option<(u32, OwnedFd)>> {
        super::mounts::create_dir_nofollow_mode(&key, 0o700)?;
        let dir = sys::open_dir_nofollow(&key)?;
        for slot in slots {
            if let Some(fd) = lock_nb(&dir, slot)? {
                return Ok(Some((slot, fd)));
            }
        }
        Ok(None)
    })();
    match claim {
        Ok(Some((slot, fd))) => {
            if slot > 0 {
                for s in &mut layout.steps {
                    if let StepKind::Overlay { name, state } = &mut s.kind {
                        *state = key.join(format!(".slot-{slot}")).join(&*name);
                    }
                }
            }
            Ok(Some(fd))
        }
        Ok(None) => Err(Unclaimed::Busy),
        Err(e) => Err(Unclaimed::Failed(format!(
            "cannot lock the layers in {}: {e}",
            key.display()
        ))),
    }
}

/// Opens (creating, mode 0600) `.slot-<slot>.lock` beneath `dir` without following a
/// symlink and takes an exclusive `flock` without waiting: `Ok(None)` when another run
/// holds it.
fn lock_nb(dir: &OwnedFd, slot: u32) -> io::Result<Option<OwnedFd>> {
    let name = slot_lock_name(slot);
    // SAFETY: `name` is NUL-terminated; O_CREAT takes the mode argument given.
    let fd = unsafe {
        libc::openat(
            dir.as_raw_fd(),
            name.as_ptr(),
            libc::O_RDWR | libc::O_CREAT | libc::O_NOFOLLOW | libc::O_CLOEXEC | libc::O_NONBLOCK,
            0o600 as libc::c_uint,
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fd` is a fresh descriptor we own.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    if sys::fstat(fd.as_raw_fd())?.st_mode & libc::S_IFMT != libc::S_IFREG {
        return Err(io::Error::other(format!(
            "{} is not a regular file",
            name.to_string_lossy()
        )));
    }
    // SAFETY: flock on a descriptor we own; no memory is passed.
    if unsafe { libc::flock(fd.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } < 0 {
        let e = io::Error::last_os_error();
        return match e.raw_os_error() {
            Some(libc::EWOULDBLOCK) => Ok(None),
            _ => Err(e),
        };
    }
    Ok(Some(fd))
}

/// What [`clear_layers`] did with one workspace's copy-on-write layers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cleared {
    /// The layers (the whole `<key>` directory) were removed.
    Removed,
    /// A run (or a template of `cordon serve`) holds one of the workspace's slot locks (or
    /// one started while the layers were being removed): nothing of a running command's
    /// layers was touched.
    Busy,
    /// There was no such directory.
    Missing,
}

/// The name of slot `slot`'s lock file in a workspace key directory.
fn slot_lock_name(slot: u32) -> CString {
    CString::new(format!(".slot-{slot}.lock")).expect("no NUL in a lock name")
}

/// Removes the copy-on-write layers of the workspace `key` under the overlay state root
/// `root` (`~/.cache/cordon/overlays`), unless a run is using them (R-C1).
///
/// `root` is opened without following any symlink (as a run claiming a slot does), the
/// key directory beneath it with `O_NOFOLLOW`. Every slot lock `<key>/.slot-N.lock` is
/// then taken without waiting, as a run does when it claims a slot: if one is held, the
/// answer is [`Cleared::Busy`] and nothing is removed. With all of them held (no run can
/// claim a slot meanwhile), the layers are removed by descriptor
/// ([`super::tree_removal`]: no symlink a command planted in its layer is followed, no
/// mount point is crossed), then the lock files, then the key directory; a run that
/// started after the lock files went makes that last step fail with `ENOTEMPTY`, which is
/// reported as [`Cleared::Busy`] too (its new layers are left alone).
///
/// Errors: `key` is not a single path component, the key is not a directory, or a
/// removal failed (the message names the path).
pub fn clear_layers(root: &Path, key: &str) -> io::Result<Cleared> {
    use nix::errno::Errno;
    use nix::fcntl::{openat, OFlag};
    use nix::sys::stat::Mode;
    use nix::unistd::{unlinkat, UnlinkatFlags};
    use std::os::fd::AsFd;

    let shown = root.join(key);
    let in_shown = |e: Errno| {
        io::Error::new(
            io::Error::from(e).kind(),
            format!("{}: {e}", shown.display()),
        )
    };
    if key.is_empty() || key.contains('/') || key == "." || key == ".." {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{key:?} is not a workspace key"),
        ));
    }
    let ckey = CString::new(key)?;
    let root_fd = match sys::open_dir_nofollow(root) {
        Ok(fd) => fd,
        Err(e) if e.raw_os_error() == Some(libc::ENOENT) => return Ok(Cleared::Missing),
        Err(e) => return Err(io::Error::new(e.kind(), format!("{}: {e}", root.display()))),
    };
    let key_fd = match openat(
        root_fd.as_fd(),
        ckey.as_c_str(),
        OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC,
        Mode::empty(),
    ) {
        Ok(fd) => fd,
        Err(Errno::ENOENT) => return Ok(Cleared::Missing),
        Err(e) => return Err(in_shown(e)),
    };
    let mut held = Vec::new();
    for slot in 0..ALL_SLOTS {
        match lock_nb(&key_fd, slot)
            .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", shown.display())))?
        {
            Some(fd) => held.push(fd),
            None => return Ok(Cleared::Busy),
        }
    }
    let locks: Vec<CString> = (0..ALL_SLOTS).map(slot_lock_name).collect();
    super::tree_removal::empty_dir_at(key_fd.as_fd(), &shown, &|n| {
        locks.iter().any(|l| l.as_c_str() == n)
    })?;
    for l in &locks {
        match unlinkat(key_fd.as_fd(), l.as_c_str(), UnlinkatFlags::NoRemoveDir) {
            Ok(()) | Err(Errno::ENOENT) => {}
            Err(e) => return Err(in_shown(e)),
        }
    }
    let r = match unlinkat(root_fd.as_fd(), ckey.as_c_str(), UnlinkatFlags::RemoveDir) {
        Ok(()) | Err(Errno::ENOENT) => Ok(Cleared::Removed),
        Err(Errno::ENOTEMPTY) | Err(Errno::EEXIST) => Ok(Cleared::Busy),
        Err(e) => Err(in_shown(e)),
    };
    drop(held);
    r
}

/// Whether overlay mounts work in a user namespace with their upper layer in `state_root`
/// (the overlay state root, e.g. `~/.cache/cordon/overlays`, created if missing): a child
/// process in a new user + mount namespace mounts an overlay over scratch directories in
/// `<state_root>/.probe-<pid>`, writes a file through it, and checks it landed in the upper
/// layer only. `Ok(fs type of the upper dir)` or `Err(why not, in words)`.
///
/// Needs Linux >= 5.11 (overlayfs in user namespaces) and an upper filesystem that
/// supports it (ext4, xfs, btrfs, tmpfs…; not overlayfs, NFS or FUSE in most setups).
/// Must be called from a single-threaded process (it forks).
pub fn probe_overlay(state_root: &Path) -> Result<String, String> {
    std::fs::create_dir_all(state_root)
        .map_err(|e| format!("cannot create {}: {e}", state_root.display()))?;
    let dir = state_root.join(format!(".probe-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    for sub in ["lower", "upper", "work", "merged"] {
        std::fs::create_dir_all(dir.join(sub))
            .map_err(|e| format!("cannot create {}: {e}", dir.join(sub).display()))?;
    }
    let fstype = fs_type(state_root);
    let r = probe_in(&dir);
    let landed = dir.join("upper/probe").exists() && !dir.join("lower/probe").exists();
    let _ = super::tree_removal::remove_tree(&dir);
    match r {
        Ok(()) if landed => Ok(fstype),
        Ok(()) => Err("the overlay did not write to its upper layer".into()),
        Err(e) => Err(format!(
            "{e} (kernel {}; needs Linux >= 5.11 and an upper dir on a local filesystem, here \
             {fstype})",
            sys::kernel_release()
        )),
    }
}

/// The filesystem type name of `p` (`ext4`, `tmpfs`, …) from `/proc/self/mountinfo`'s
/// longest matching mount point.
fn fs_type(p: &Path) -> String {
    let Ok(info) = std::fs::read_to_string("/proc/self/mountinfo") else {
        return "unknown".into();
    };
    let p = std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    let mut best: Option<(usize, String)> = None;
    for line in info.lines() {
        let f: Vec<&str> = line.split(' ').collect();
        let Some(sep) = f.iter().position(|x| *x == "-") else {
            continue;
        };
        let (Some(mp), Some(ty)) = (f.get(4), f.get(sep + 1)) else {
            continue;
        };
        if p.starts_with(mp) && best.as_ref().is_none_or(|(l, _)| mp.len() >= *l) {
            best = Some((mp.len(), ty.to_string()));
        }
    }
    best.map(|b| b.1).unwrap_or_else(|| "unknown".into())
}

fn probe_in(dir: &Path) -> Result<(), String> {
    // SAFETY: geteuid/getegid have no preconditions.
    let (uid, gid) = unsafe { (libc::geteuid(), libc::getegid()) };
    let c = |p: PathBuf| CString::new(p.into_os_string().into_encoded_bytes());
    let (lower, upper, work, merged, file) = (
        c(dir.join("lower")).map_err(|e| e.to_string())?,
        c(dir.join("upper")).map_err(|e| e.to_string())?,
        c(dir.join("work")).map_err(|e| e.to_string())?,
        dir.join("merged"),
        dir.join("merged/probe"),
    );
    let (r, w) = sys::pipe().map_err(|e| e.to_string())?;
    // SAFETY: the caller is single-threaded (documented); the child only makes syscalls,
    // writes one byte and `_exit`s.
    let pid = unsafe { sys::clone_fork((libc::CLONE_NEWUSER | libc::CLONE_NEWNS) as u64) }
        .map_err(|e| format!("no user namespace: {e}"))?;
    if pid == 0 {
        drop(r);
        let step = || -> io::Result<()> {
            sys::write_file(c"/proc/self/setgroups", b"deny")?;
            sys::write_file(c"/proc/self/uid_map", format!("{uid} {uid} 1\n").as_bytes())?;
            sys::write_file(c"/proc/self/gid_map", format!("{gid} {gid} 1\n").as_bytes())?;
            let m = sys::new_fs(
                c"overlay",
                &[
                    (c"lowerdir", Some(lower.as_c_str())),
                    (c"upperdir", Some(upper.as_c_str())),
                    (c"workdir", Some(work.as_c_str())),
                    (c"userxattr", None),
                ],
                sys::MOUNT_ATTR_NOSUID | sys::MOUNT_ATTR_NODEV,
            )?;
            let target = sys::open_path(&merged, true)?;
            sys::attach(&m, &target)?;
            std::fs::write(&file, b"x")?;
            Ok(())
        };
        let code = match step() {
            Ok(()) => 0u8,
            Err(e) => e.raw_os_error().unwrap_or(libc::EIO) as u8,
        };
        sys::write_all(w.as_raw_fd(), &[code]);
        super::process::exit_now(0);
    }
    drop(w);
    let mut b = [0u8; 1];
    let n = sys::read(&r, &mut b).unwrap_or(0);
    let mut status = 0;
    // SAFETY: waiting for our own child; `status` is a valid out pointer.
    unsafe { libc::waitpid(pid, &mut status, 0) };
    match (n, b[0]) {
        (1, 0) => Ok(()),
        (1, e) => Err(format!(
            "mounting an overlay in a user namespace failed: {}",
            io::Error::from_raw_os_error(e as i32)
        )),
        _ => Err("the probe process died".into()),
    }
}

/// The hint printed (to stderr, by the helper) when a command fails while some known
/// cache is read-only in its sandbox: which caches, why, and what to do. `unavailable`
/// are the overlays the kernel refused at build time (path, reason). `None` when every
/// cache is writable one way or another.
pub fn read_only_hint(
    profile: &ResolvedProfile,
    unavailable: &[(PathBuf, String)],
) -> Option<String> {
    // Read-only by the profile's own `caches = "read-only"`, or because nothing is
    // writable in this run (`--plan`, the read-only profile: attack pass 26, F1).
    let by_profile = profile.profile.caches == CacheMode::ReadOnly;
    let mut items: Vec<String> = profile
        .caches
        .iter()
        .filter(|c| c.mode == CacheMode::ReadOnly)
        .map(|c| {
            let why = if by_profile {
                "caches = \"read-only\""
            } else {
                "nothing is writable in this run"
            };
            format!("{} ({why})", c.path.display())
        })
        .collect();
    items.extend(
        unavailable
            .iter()
            .map(|(p, why)| format!("{} (copy-on-write layer unavailable: {why})", p.display())),
    );
    if items.is_empty() {
        return None;
    }
    // The profile setting is advice only where the profile set it (new-user pass nu11,
    // M7: it was given to a profile with `caches = "overlay"` whose layers were busy).
    let overlay = if by_profile {
        "set `caches = \"overlay\"` in the profile (a private copy-on-write layer per \
         workspace; `cordon status` says whether this host supports it), or "
    } else {
        ""
    };
    // Where nothing is writable (`--plan`, the read-only profile), `-w` is no way out: a
    // plan run ignores it (the note of an earlier stop: the hint said "grant it with -w
    // PATH" and the next line that -w is ignored).
    let nothing_writable = !by_profile && unavailable.is_empty();
    let way = if nothing_writable {
        "it needs a run that may write (not --plan, not the read-only profile), which gets \
         the caches as copy-on-write layers"
            .to_string()
    } else {
        format!("{overlay}grant it with -w PATH (then the host cache itself is written)")
    };
    Some(format!(
        "package caches are read-only in this sandbox: {}. If the command failed writing one \
         (EROFS, \"Read-only file system\"), {way}",
        items.join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::linux::mounts::{Base, Step};

    /// A plan with one cache overlay whose layers live in `key`.
    fn plan(key: &Path) -> Layout {
        Layout {
            base: Base::HostReadOnly,
            steps: vec![Step {
                path: PathBuf::from("/home/u/.npm"),
                kind: StepKind::Overlay {
                    name: "npm".into(),
                    state: key.join("npm"),
                },
                may_create: false,
            }],
            notes: Vec::new(),
            absent: Vec::new(),
            read_only_caches: Vec::new(),
            links: Vec::new(),
            resolved_through_links: Vec::new(),
        }
    }

    fn state(l: &Layout) -> Option<PathBuf> {
        l.steps.iter().find_map(|s| match &s.kind {
            StepKind::Overlay { state, .. } => Some(state.clone()),
            _ => None,
        })
    }

    /// Templates take only the template slots: with all of them held, runs still get
    /// slot 0 and then the other run slots; a template beyond them gets none (and its plan
    /// is left as it was), where a run beyond the run slots gets the cache read-only, said
    /// in its notes.
    #[test]
    fn templates_and_runs_have_their_own_slots() {
        let dir = tempfile::tempdir().unwrap();
        let key = dir.path().join("ws-0123456789abcdef");
        let mut held = Vec::new();
        for n in 0..TEMPLATE_SLOTS {
            let mut l = plan(&key);
            let fd = claim_template_slot(&mut l).ok().flatten().expect("a slot");
            let slot = OVERLAY_SLOTS + n;
            assert_eq!(state(&l), Some(key.join(format!(".slot-{slot}/npm"))));
            held.push(fd);
        }
        let mut l = plan(&key);
        assert!(matches!(claim_template_slot(&mut l), Err(Unclaimed::Busy)));
        assert_eq!(l, plan(&key), "a template without a slot keeps its plan");
        for slot in 0..OVERLAY_SLOTS {
            let mut l = plan(&key);
            held.push(claim_overlay_slot(&mut l).expect("a run's slot"));
            let want = match slot {
                0 => key.join("npm"),
                n => key.join(format!(".slot-{n}/npm")),
            };
            assert_eq!(state(&l), Some(want));
            assert!(l.read_only_caches.is_empty() && l.notes.is_empty());
        }
        let mut l = plan(&key);
        assert!(claim_overlay_slot(&mut l).is_none());
        assert_eq!(state(&l), None);
        assert_eq!(l.read_only_caches.len(), 1);
        assert!(
            l.notes.len() == 1 && l.notes[0].contains("copy-on-write layer unavailable"),
            "{:?}",
            l.notes
        );
        // A template slot freed is taken again.
        held.remove(0);
        let mut l = plan(&key);
        assert!(claim_template_slot(&mut l).is_ok_and(|s| s.is_some()));
    }
}
