//! Stopping a run whose cover the host took away (attack25 A5).
//!
//! cordon hides, strips or protects single files (and some directories) by mounting over
//! them in the sandbox's mount namespace ([`mounts::Layout::covers`]). Since Linux 3.18 a
//! process in *another* mount namespace may unlink or rename over a dentry that is a mount
//! point here, and the kernel then lazily detaches our mount: when the host replaces a
//! covered file by rename while a command runs — the user's own `git config user.name x`,
//! `npm login`, `gh auth`, an editor saving, `useradd` rewriting `/etc/shadow` — the
//! command sees the real file, and writes it where its Landlock rules allow. No kernel
//! mechanism pins a file-level mount against this, and Landlock cannot subtract a file from
//! a granted hierarchy; so cordon detects it and stops the run, failing closed.
//!
//! How: before the mounts are built, the helper (host side) puts an inotify watch on every
//! directory of [`mounts::Layout::cover_watches`] — the parent of each covered path and
//! every ancestor whose entry name lives in a host layer — for `IN_MOVED_FROM`,
//! `IN_MOVED_TO`, `IN_DELETE` and `IN_CREATE`. An event whose name leads to a cover (or a
//! queue overflow, which could hide one) makes the helper SIGKILL the sandbox's init — pid
//! 1 of the command's pid namespace, so the whole tree ends — and report the run as
//! stopped, naming the path: the outcome is `refused` and cordon exits 125 (it could not
//! keep its guarantee). The descriptor is signal-driven (`O_ASYNC`, `SIGIO` to the
//! helper), so the helper's wait for init wakes for it at once. Events are queued from the
//! moment a watch exists, so one between the watch and the mount build is not missed.
//!
//! Not triggers: cordon's own host-side writes happen outside the watched time or under
//! other names — placeholders of protected paths are created before the watch, the
//! `.git/config` broker writes `config.lock` (another name) and merges back into `config`
//! in place (no rename) after init was reaped; the command itself cannot rename a watched
//! name (each is a mount point in its view, or an ancestor pinned by a bind onto itself).
//!
//! Hidden paths not present at launch (attack28 F2): a deny entry that does not exist when
//! the profile is resolved gets no mount ([`mounts::Layout::absent`], named in the note "N
//! deny entries are not present"), so a credential store the host *creates* during the run
//! (`gh auth login`, `aws configure`, `kubectl` writing `~/.kube/config`) would be readable.
//! Each such path whose name lives in a host layer is watched like a cover: the same
//! ancestors, on the same descriptor ([`mounts::Layout::absent_covers`]). The deepest
//! ancestor that exists is watched for the next name down; when a name leading there
//! appears (`IN_CREATE`, `IN_MOVED_TO`) and it is the hidden path itself, the run is
//! stopped as for a lost cover (`cover_lost` says `… was created during the run`); when it
//! is a directory on the way (`mkdir ~/.config`), the watch goes down into it and looks for
//! names already made there before that watch existed ([`CoverWatch::descend`]), so only
//! the hidden path itself stops the run — a `~/.cache` or `~/.local` that another program
//! (cordon's own state among them) creates mid-run does not. Something other than a
//! directory on the way (a symlink could lead anywhere) stops it too. Removing a name that
//! only leads to such paths uncovers nothing and stops nothing. After the watches are set
//! up, every such path is checked to be still missing: one created between the
//! resolution and the watch makes cordon refuse the run (the next run hides it). In a
//! writable layer (a deny inside the workspace) the command creating the path itself is
//! seen the same way and stops its own run: the watch cannot tell who created it.
//!
//! `cordon serve` templates built their covers once: a command forked from one sets the
//! watch up in the template's handler (its paths resolve to the same host directories),
//! then checks that every cover is still a mount point of the template
//! ([`CoverWatch::check_still_mounted`]) and — in [`CoverWatch::start`], as on every path —
//! that every hidden path missing when the template was planned is still missing; a cover
//! already lost, or such a path created since, sends the command to the per-command helper,
//! which builds fresh covers (or refuses, for a path its stale profile did not hide).
//!
//! Residual window: between the host's rename and the SIGKILL the command keeps running.
//! Measured (test `cover_loss_kill_latency`, debug build, 2 shared cores, idle): the
//! command's last sign of life came 0.3-1.8 ms after the host *called* its write-and-rename
//! (-0.3 to +1.3 ms after the rename returned), and a Python loop doing nothing but
//! re-opening the replaced file managed 0-59 successful reads in that time. So a command
//! that is already polling the path can still read — or, where its layer is writable,
//! write — the real file once; under load the window grows. The watch narrows the exposure
//! to that window and makes the loss visible; it cannot close it. The same window applies
//! to a hidden path created on the host: a command polling for it can read it once
//! between its creation and the kill (a directory created on the way costs the helper one
//! more watch and a look inside before it sees the file, slightly longer).
//!
//! If inotify cannot be set up (`fs.inotify.max_user_instances` or `max_user_watches`
//! reached), the run is refused, naming the limit. A directory the helper may not even
//! search (`/root`, mode 0700, holding the stores of an account home, for a user who is not
//! root) is not watched: the command, with the same credentials, cannot reach beneath it
//! either.

use super::mounts::{self, Cover};
use super::sys;
use nix::errno::Errno;
use nix::sys::inotify::{AddWatchFlags, InitFlags, Inotify, WatchDescriptor};
use std::collections::HashMap;
use std::ffi::OsString;
use std::os::fd::{AsFd, AsRawFd, FromRawFd, RawFd};
use std::path::{Path, PathBuf};

/// The events that can take a cover away.
fn mask() -> AddWatchFlags {
    AddWatchFlags::IN_MOVED_FROM
        | AddWatchFlags::IN_MOVED_TO
        | AddWatchFlags::IN_DELETE
        | AddWatchFlags::IN_CREATE
        | AddWatchFlags::IN_ONLYDIR
        | AddWatchFlags::IN_DONT_FOLLOW
}

/// The inotify watch of one run's covers.
pub(crate) struct CoverWatch {
    inotify: Inotify,
    /// Per watch: the directory and the names in it that lead to a cover.
    dirs: HashMap<WatchDescriptor, (PathBuf, Vec<(OsString, Cover)>)>,
    /// The deny entries not present at launch that the watch looks out for
    /// ([`mounts::Layout::absent_covers`]): one coming into existence stops the run.
    absent: Vec<PathBuf>,
    /// Hidden or protected spellings reached through symlinks, with where they led when
    /// the plan was made ([`CoverWatch::check_links`]).
    through_links: Vec<(PathBuf, PathBuf)>,
    /// The first loss seen (the message), once one was.
    lost: Option<String>,
    /// Who closes the inotify instance last ([`CoverWatch::release`]).
    last_close: LastClose,
}

/// Which process pays for the last close of a watch's inotify instance (a grace period of
/// the kernel's, milliseconds: see [`CoverWatch::release`]).
enum LastClose {
    /// This process, through a detached grandchild forked at release.
    Here,
    /// A detached process holding a duplicate until the pipe whose write end this is
    /// closes ([`CoverWatch::hand_off`]): held, never read; its close lets that process go.
    Detached(#[allow(dead_code)] std::os::fd::OwnedFd),
    /// The process this one was forked from, which keeps its copy open until after the
    /// run's status is sent ([`CoverWatch::held_by_parent`]).
    Parent,
}

/// Why the watch could not be set up: the message of the refusal.
fn limit_message(what: &str, e: Errno) -> String {
    let limit = match e {
        Errno::EMFILE => "fs.inotify.max_user_instances",
        Errno::ENOSPC => "fs.inotify.max_user_watches",
        _ => "",
    };
    if limit.is_empty() {
        format!(
            "watching the host for replacements of hidden and protected paths failed \
             ({what}: {e}); without the watch the host replacing one of them during the run \
             would uncover it"
        )
    } else {
        format!(
            "watching the host for replacements of hidden and protected paths failed \
             ({what}: {e}): the inotify limit {limit} is reached (raise it with sysctl, or end \
             other watchers); without the watch the host replacing one of them during the \
             run would uncover it"
        )
    }
}

/// What a [`CoverWatch`] of a mount plan watches: [`mounts::Layout::cover_watches`] and the
/// paths of [`mounts::Layout::absent_covers`]. Pure; a template keeps its own (issue 12:
/// computing it was a tenth of a template command's CPU).
#[derive(Debug, Clone, Default)]
pub(crate) struct WatchPlan {
    dirs: Vec<mounts::CoverWatch>,
    absent: Vec<PathBuf>,
    /// [`mounts::Layout::resolved_through_links`].
    through_links: Vec<(PathBuf, PathBuf)>,
}

impl WatchPlan {
    /// The watch plan of `layout`.
    pub(crate) fn of(layout: &mounts::Layout) -> WatchPlan {
        let (dirs, absent) = layout.cover_watches_and_absent();
        WatchPlan {
            dirs,
            absent: absent.into_iter().map(|c| c.path).collect(),
            through_links: layout.resolved_through_links.clone(),
        }
    }
}

impl CoverWatch {
    /// Watches every directory of [`mounts::Layout::cover_watches`], shallow first (a
    /// directory missing now is watched through its parent's `IN_CREATE`), then checks that
    /// every hidden path not present at launch ([`mounts::Layout::absent_covers`]) is still
    /// absent. `Ok(None)`: the plan has no cover the host could take away and no such path.
    ///
    /// Errors: inotify could not be set up (a limit, named), a directory could not be
    /// watched for another reason than being absent, or a hidden path missing at
    /// resolution exists now: the caller refuses to run (a template's command takes the
    /// per-command helper, which refuses).
    pub(crate) fn start(layout: &mounts::Layout) -> Result<Option<CoverWatch>, String> {
        CoverWatch::start_planned(&WatchPlan::of(layout))
    }

    /// [`CoverWatch::start`] with the layout's watch plan computed already (a template
    /// computes it once for all its commands).
    pub(crate) fn start_planned(plan: &WatchPlan) -> Result<Option<CoverWatch>, String> {
        let watch = Self::watch_planned(plan)?;
        if let Some(w) = &watch {
            w.check_absent()?;
            w.check_links()?;
        }
        Ok(watch)
    }

    /// [`CoverWatch::start_planned`] without its last step ([`CoverWatch::check_absent`]):
    /// the watches only, made ahead of the command that will use them (a template makes
    /// the next command's while the current one runs, issue 12). The command's handler
    /// then reads what was queued since ([`CoverWatch::poll`]) and runs the check.
    pub(crate) fn watch_planned(plan: &WatchPlan) -> Result<Option<CoverWatch>, String> {
        if plan.dirs.is_empty() {
            return Ok(None);
        }
        let inotify = Inotify::init(InitFlags::IN_CLOEXEC | InitFlags::IN_NONBLOCK)
            .map_err(|e| limit_message("inotify_init1", e))?;
        let mut dirs = HashMap::new();
        for w in &plan.dirs {
            match inotify.add_watch(&w.dir, mask()) {
                Ok(wd) => {
                    let e = dirs
                        .entry(wd)
                        .or_insert_with(|| (w.dir.clone(), Vec::new()));
                    // Two spellings of one directory (a bind and its source) share a watch.
                    e.1.extend(w.names.iter().cloned());
                }
                // Absent (or no longer a directory): nothing is mounted beneath it now,
                // and its parent's watch sees it come back.
                Err(Errno::ENOENT | Errno::ENOTDIR) => {}
                Err(Errno::EACCES) if unreachable(&w.dir) => {}
                Err(e) => {
                    return Err(limit_message(
                        &format!("inotify_add_watch {}", w.dir.display()),
                        e,
                    ))
                }
            }
        }
        Ok(Some(CoverWatch {
            inotify,
            dirs,
            absent: plan.absent.clone(),
            through_links: plan.through_links.clone(),
            lost: None,
            last_close: LastClose::Here,
        }))
    }

    /// Every hidden path that was missing when the plan was made is still missing. One
    /// created between the profile's resolution (which found it missing, so nothing hides
    /// it) and the watches: nothing would stop the run for it. Run once the watches exist.
    ///
    /// Errors: the message of the refusal, naming the path.
    pub(crate) fn check_absent(&self) -> Result<(), String> {
        match self.absent.iter().find(|a| a.symlink_metadata().is_ok()) {
            Some(a) => Err(format!(
                "{} was created on the host after cordon looked for it, so this run would \
                 not hide it (it is a hidden path); run the command again: the next run \
                 hides it",
                a.display()
            )),
            None => Ok(()),
        }
    }

    /// Every hidden or protected path the plan reached through symlinks still resolves to
    /// where it did then ([`mounts::Layout::resolved_through_links`]). A link re-pointed
    /// between the profile's resolution and the watches would lead the spelling past its
    /// cover, and no event would come for it. Run once the watches exist.
    ///
    /// Errors: the message of the refusal, naming the spelling and both places.
    pub(crate) fn check_links(&self) -> Result<(), String> {
        for (spelled, planned) in &self.through_links {
            let now = cordon_policy::paths::canonicalize_lenient(&crate::HostFs, spelled);
            if now != *planned {
                return Err(format!(
                    "{} led to {} when cordon resolved it and leads to {} now (a symlink on \
                     the way was changed on the host), so this run would not hide or protect \
                     what it leads to; run the command again: the next run covers it",
                    spelled.display(),
                    planned.display(),
                    now.display()
                ));
            }
        }
        Ok(())
    }

    /// `p`, a name on the way to a hidden path that was not present at launch, came into
    /// existence (an event in its parent's watch, or found by [`CoverWatch::descend`]).
    ///
    /// Errors: the message that stops the run: `p` is one of those hidden paths, or
    /// [`CoverWatch::descend`] failed.
    fn appeared(&mut self, p: &Path) -> Result<(), String> {
        if self.absent.iter().any(|a| a == p) {
            return Err(created_message(p, p));
        }
        self.descend(p)
    }

    /// A directory on the way to a hidden path that was not present at launch came into
    /// existence at `dir`: it is watched for the names that lead on, and each of them that
    /// already exists (made before the watch) is followed the same way — so a hidden path
    /// created anywhere beneath is seen, while a directory that only *leads* there (`mkdir
    /// ~/.config`) stops nothing.
    ///
    /// Errors: the message that stops the run — a hidden path exists, something on the way
    /// is not a directory (a symlink could point anywhere), or the watch could not be added.
    fn descend(&mut self, dir: &Path) -> Result<(), String> {
        let next: Vec<(OsString, Cover)> = {
            let mut v: Vec<(OsString, Cover)> = Vec::new();
            for a in &self.absent {
                let Ok(rest) = a.strip_prefix(dir) else {
                    continue;
                };
                let Some(first) = rest.iter().next() else {
                    continue;
                };
                if !v.iter().any(|(n, _)| n == first) {
                    let cover = Cover {
                        path: a.clone(),
                        kind: mounts::CoverKind::Absent,
                    };
                    v.push((first.to_os_string(), cover));
                }
            }
            v
        };
        let Some((_, first)) = next.first() else {
            return Ok(());
        };
        let wd = match self.inotify.add_watch(dir, mask()) {
            Ok(wd) => wd,
            // Gone again: its removal is in the parent's queue, a new one would be too.
            Err(Errno::ENOENT) => return Ok(()),
            Err(Errno::ENOTDIR) => return Err(created_message(dir, &first.path)),
            Err(Errno::EACCES) if unreachable(dir) => return Ok(()),
            Err(e) => {
                return Err(limit_message(
                    &format!("inotify_add_watch {}", dir.display()),
                    e,
                ))
            }
        };
        let e = self
            .dirs
            .entry(wd)
            .or_insert_with(|| (dir.to_path_buf(), Vec::new()));
        for (n, c) in &next {
            if !e.1.iter().any(|(m, _)| m == n) {
                e.1.push((n.clone(), c.clone()));
            }
        }
        for (n, _) in next {
            let p = dir.join(&n);
            if p.symlink_metadata().is_ok() {
                self.appeared(&p)?;
            }
        }
        Ok(())
    }

    /// Moves the descriptor to a number at or above `min` (a template's handler hands
    /// the watch to a helper that puts the client's descriptors on low numbers).
    ///
    /// Errors: `fcntl(F_DUPFD_CLOEXEC)` failed.
    pub(crate) fn move_above(&mut self, min: RawFd) -> std::io::Result<()> {
        use nix::fcntl::{fcntl, FcntlArg};
        let fd = fcntl(self.inotify.as_fd(), FcntlArg::F_DUPFD_CLOEXEC(min))?;
        // SAFETY: a fresh duplicate of an inotify descriptor, owned from here on (the
        // original is closed when the old `Inotify` is dropped by the assignment).
        self.inotify = unsafe { Inotify::from_raw_fd(fd) };
        Ok(())
    }

    /// Ends the watch without making the caller wait for the kernel. Closing the last
    /// descriptor of an inotify instance waits for an SRCU grace period while its marks
    /// are freed (measured ~6 ms per run on this machine, more under load: it nearly
    /// doubled the cold launch, since the CLI waits for the helper's exit). So the last
    /// reference goes to a detached grandchild: it holds only this descriptor and a pipe,
    /// and exits — paying for the close on its own time — once the pipe's write end, held
    /// here, is closed. Without a fork the descriptor is simply closed here (slow, same
    /// result).
    pub(crate) fn release(self) {
        if !matches!(self.last_close, LastClose::Here) {
            // Another process holds the instance ([`CoverWatch::hand_off`],
            // [`CoverWatch::held_by_parent`]): this close is not the last (and closing the
            // pipe lets a detached holder go).
            return drop(self);
        }
        let ino = self.raw_fd();
        let Ok((r, w)) = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC) else {
            return drop(self);
        };
        let rfd = r.as_raw_fd();
        // SAFETY: fork in a process that may have other threads: the child and grandchild
        // only make async-signal-safe calls (fork, close_range, read, _exit).
        let child = unsafe { libc::fork() };
        if child == 0 {
            // SAFETY: as above; every descriptor but the watch and the pipe's read end is
            // closed (the report pipe among them, so the caller's reader is not held),
            // then the grandchild waits for EOF and exits.
            unsafe {
                if libc::fork() == 0 {
                    let (lo, hi) = (ino.min(rfd) as libc::c_uint, ino.max(rfd) as libc::c_uint);
                    let close_range = |a: libc::c_uint, b: libc::c_uint| {
                        if a <= b {
                            libc::syscall(libc::SYS_close_range, a, b, 0);
                        }
                    };
                    if lo > 0 {
                        close_range(0, lo - 1);
                    }
                    close_range(lo + 1, hi - 1);
                    close_range(hi + 1, libc::c_uint::MAX);
                    // Until EOF (or any error but an interrupted read: never spin).
                    let mut b = 0u8;
                    while libc::read(rfd, (&mut b as *mut u8).cast(), 1) < 0
                        && *libc::__errno_location() == libc::EINTR
                    {}
                    libc::_exit(0);
                }
                libc::_exit(0);
            }
        }
        if child > 0 {
            let _ = nix::sys::wait::waitpid(nix::unistd::Pid::from_raw(child), None);
        }
        drop(self);
        drop(w);
        drop(r);
    }

    /// Hands the last close of the inotify instance to the process that waits on the pipe
    /// whose write end is `closer` while it holds a duplicate of [`CoverWatch::raw_fd`]
    /// ([`super::mounts::StaleScratch::detach_cleanup`], forked while init builds the
    /// sandbox): [`CoverWatch::release`] then only closes, and no longer forks after the
    /// command ended (issue 12).
    pub(crate) fn hand_off(&mut self, closer: std::os::fd::OwnedFd) {
        self.last_close = LastClose::Detached(closer);
    }

    /// Says that the process this one was forked from keeps its copy of the descriptor
    /// open past this process's end — a template's per-command handler, which closes it
    /// only after it has sent the run's status ([`super::template::Prepared::take_cover_watch`]):
    /// [`CoverWatch::release`] then only closes (issue 12: the fork it made instead cost
    /// ~0.75 ms after every command from a template).
    pub(crate) fn held_by_parent(&mut self) {
        self.last_close = LastClose::Parent;
    }

    /// The descriptor (to keep open across a close-all).
    pub(crate) fn raw_fd(&self) -> RawFd {
        self.inotify.as_fd().as_raw_fd()
    }

    /// Makes the descriptor signal-driven for the calling process: `SIGIO` (blocked here,
    /// so it only wakes [`super::process::supervise_checking`]) whenever events arrive.
    /// Called by the process that waits on init (the helper), after any fork.
    ///
    /// Errors: `fcntl` failed (the caller refuses to run: nothing would wake it).
    pub(crate) fn arm(&self) -> std::io::Result<()> {
        super::process::signal_driven(self.inotify.as_fd().as_raw_fd())
    }

    /// Reads every queued event; the first that takes a cover away (or an overflow of the
    /// queue) is kept and returned, and every later call returns it too.
    pub(crate) fn poll(&mut self) -> Option<&str> {
        while self.lost.is_none() {
            let events = match self.inotify.read_events() {
                Ok(ev) if !ev.is_empty() => ev,
                Ok(_) | Err(Errno::EAGAIN) => break,
                Err(Errno::EINTR) => continue,
                Err(e) => {
                    self.lost = Some(format!(
                        "reading the watch of hidden and protected paths failed ({e}), so the \
                         host may have replaced one of them: the command was stopped"
                    ));
                    break;
                }
            };
            for ev in events {
                if ev.mask.contains(AddWatchFlags::IN_Q_OVERFLOW) {
                    self.lost = Some(
                        "too many changes in the directories of hidden and protected paths \
                         to tell whether the host replaced one of them (the inotify queue \
                         overflowed, fs.inotify.max_queued_events): the command was stopped"
                            .to_string(),
                    );
                    break;
                }
                let (Some((dir, names)), Some(name)) = (self.dirs.get(&ev.wd), &ev.name) else {
                    continue;
                };
                let Some((_, cover)) = names.iter().find(|(n, _)| n == name) else {
                    continue;
                };
                let p = dir.join(name);
                if cover.kind != mounts::CoverKind::Absent {
                    self.lost = Some(loss_message(&p, cover, ev.mask));
                    break;
                }
                // A name that leads only to hidden paths not present at launch: what
                // matters is something appearing there. (A removal uncovers nothing; a
                // directory renamed away keeps its watch, which then errs on the side of
                // stopping.)
                if !ev
                    .mask
                    .intersects(AddWatchFlags::IN_CREATE | AddWatchFlags::IN_MOVED_TO)
                {
                    continue;
                }
                if let Err(m) = self.appeared(&p) {
                    self.lost = Some(m);
                    break;
                }
            }
        }
        self.lost.as_deref()
    }

    /// For a command forked from a `cordon serve` template (in the template's mount
    /// namespace, after [`CoverWatch::start`]): every cover that was a mount point when the
    /// template was built ([`mounted_covers`]) must still be that same mount — the host
    /// may have replaced a path since (the server's identity check ran before this watch
    /// existed), or swapped another mount point in (`RENAME_EXCHANGE` of a covered
    /// directory with a protected one: attack pass 143 F2). Anything the watch saw
    /// meanwhile counts too.
    ///
    /// Each cover is asked of the kernel directly: reached without following a symlink,
    /// it must be the root of the mount recorded at the build (`STATX_MNT_ID`); reading
    /// and parsing the whole mountinfo was ~0.3 ms of each command's launch (issue 12).
    /// Where the kernel does not tell (before Linux 5.8), mountinfo is read, which knows
    /// mount points by path only.
    ///
    /// Errors: which cover is gone (the command takes the per-command helper instead).
    pub(crate) fn check_still_mounted(&mut self, covered: &[Covered]) -> Result<(), String> {
        if let Some(l) = self.poll() {
            return Err(l.to_string());
        }
        still_mounted(covered)
    }
}

/// [`CoverWatch::check_still_mounted`] without the watch: each of `covered` is still the
/// root of the mount recorded for it (mountinfo by path where the kernel does not tell).
///
/// Errors: which cover is gone.
fn still_mounted(covered: &[Covered]) -> Result<(), String> {
    match first_gone(covered, false)? {
        Some(g) => Err(gone(&g.path)),
        None => Ok(()),
    }
}

/// A cover [`first_gone`] found not standing: its path, and the error that kept it from
/// being looked at, if one did (`None`: it is not the recorded mount's root any more).
struct Gone {
    path: PathBuf,
    unreachable: Option<std::io::Error>,
}

/// The first of `covered` that is no longer the root of the mount recorded for it
/// (reached without following a symlink — `by_path`: the last component not followed,
/// no descriptor used; by path in mountinfo where the kernel does not tell mount IDs), or
/// `None`.
///
/// Errors: `/` or mountinfo cannot be read.
fn first_gone(covered: &[Covered], by_path: bool) -> Result<Option<Gone>, String> {
    let root = if by_path {
        None
    } else {
        Some(
            sys::open_path(Path::new("/"), true)
                .map_err(|e| format!("opening / to check the covers: {e}"))?,
        )
    };
    let mut unknown = false;
    for c in covered {
        let now = match &root {
            Some(r) => sys::mount_at(r, &c.path),
            None => sys::mount_at_path(&c.path),
        };
        let unreachable = match (now, c.mount) {
            (Ok(Some(now)), Some(built)) if now.root && now.id == built => continue,
            (Ok(None), None) => {
                unknown = true;
                break;
            }
            // Searching a directory on the way was refused: whether the cover stands
            // cannot be told (attack pass 145: a command's `chmod 000` of a directory above
            // a cover was reported as the cover replaced).
            (Err(e), _) if e.raw_os_error() == Some(libc::EACCES) && c.unreachable => continue,
            (Err(e), _) if e.raw_os_error() == Some(libc::EACCES) => Some(e),
            _ => None,
        };
        return Ok(Some(Gone {
            path: c.path.clone(),
            unreachable,
        }));
    }
    if !unknown {
        return Ok(None);
    }
    let points = mount_points()
        .map_err(|e| format!("reading /proc/self/mountinfo to check the covers: {e}"))?;
    Ok(covered
        .iter()
        .find(|c| !points.contains(&c.path))
        .map(|c| Gone {
            path: c.path.clone(),
            unreachable: None,
        }))
}

/// In init, once the root is built (a template's command: once its per-command places
/// are mounted), before anything runs: each cover at `paths` as mounted now, to be looked
/// at again when the command has ended ([`lost_after_run`]). `Ok(None)`: the kernel does
/// not tell mount IDs (before Linux 5.8), so that look is not made (the watch alone
/// decides, as before).
///
/// Errors: a cover is not mounted (the host replaced its path while the root was built).
pub(crate) fn record_covers(paths: Vec<PathBuf>) -> Result<Option<Vec<Covered>>, String> {
    let mut v = Vec::with_capacity(paths.len());
    for path in paths {
        match sys::mount_at_path(&path) {
            Ok(Some(m)) if m.root => v.push(Covered {
                path,
                mount: Some(m.id),
                unreachable: false,
            }),
            Err(e) if e.raw_os_error() == Some(libc::EACCES) => v.push(Covered {
                path,
                mount: None,
                unreachable: true,
            }),
            Ok(None) => return Ok(None),
            _ => {
                return Err(format!(
                    "refusing to run: {} changed on the host while the sandbox was built, so \
                     it is not covered",
                    path.display()
                ))
            }
        }
    }
    Ok(Some(v))
}

/// In init, once the command (and everything it started) has ended: the first cover of
/// `covered` ([`record_covers`]) that no longer stands, said as the run's cover loss. The
/// watch can miss it at the very end: the kernel moves a renamed entry before it queues
/// the event, so a command can read the new file and end before the event is there
/// (attack pass 144: a run that read a replaced `.env` ended `success`). `None`: every
/// cover stands.
pub(crate) fn lost_after_run(covered: &[Covered]) -> Option<String> {
    match first_gone(covered, true) {
        Ok(None) => None,
        Ok(Some(Gone {
            path,
            unreachable: Some(e),
        })) => Some(format!(
            "the cover of {} {} once the command had ended ({e}: a directory on its way \
             became unsearchable during the run, e.g. the command changed its permissions), \
             so cordon cannot tell whether the host replaced it meanwhile; restore the \
             permissions (chmod u+x on the directories above it) and run again",
            path.display(),
            crate::COVER_NOT_CHECKED
        )),
        Ok(Some(Gone {
            path,
            unreachable: None,
        })) => Some(format!(
            "{} was replaced during the run (on the host, or by the command where its parent \
             is writable), which removed the sandbox's cover of it: the command may have seen \
             what is there now; check it",
            path.display()
        )),
        Err(e) => Some(format!(
            "the covers of hidden and protected paths {} after the run ({e}), so one may have \
             been replaced",
            crate::COVER_NOT_CHECKED
        )),
    }
}

/// A cover of a template ([`mounted_covers`]): its path and the ID of the mount that
/// covers it (`None` where the kernel does not tell mount IDs).
#[derive(Debug, Clone)]
pub(crate) struct Covered {
    pub(crate) path: PathBuf,
    mount: Option<u64>,
    /// When recorded, a directory on its way could not be searched (`EACCES`) with the
    /// command's credentials: neither could the command reach it. Still so after the run
    /// is no loss; reachable by then, it is (nothing was recorded to compare with).
    unreachable: bool,
}

/// Why a template cannot serve a command: `cover` is no longer a mount point in it.
fn gone(cover: &Path) -> String {
    format!(
        "{} is no longer covered in the template (replaced on the host since it was built)",
        cover.display()
    )
}

/// Whether this process cannot search `dir` (or a directory above it): then neither can
/// the command, which runs with the same credentials and no capability over the host's
/// files, so nothing beneath needs watching — e.g. `/root` (mode 0700) holding the stores
/// of an account home for a user who is not root. (A directory it may search but not
/// read, 0711, cannot be watched yet can be reached: that stays a refusal.)
fn unreachable(dir: &Path) -> bool {
    matches!(
        nix::unistd::faccessat(
            nix::fcntl::AT_FDCWD,
            dir,
            nix::unistd::AccessFlags::X_OK,
            nix::fcntl::AtFlags::AT_EACCESS,
        ),
        Err(Errno::EACCES)
    )
}

/// In a template, once its root is built: the covers of `layout` that are mount points,
/// with the mount that covers each ([`Covered`]). A cover that is not one is an error
/// unless the build skipped its step and said so (`skipped`, e.g. an entry that vanished
/// before the build): a cover the host took away while the root was being built — a file
/// renamed over, a directory renamed — must not leave the template without it (attack
/// pass 143 F1: such a cover was dropped from the list, and the first command of that
/// template read the host's new file).
///
/// Errors: the cover that is missing.
pub(crate) fn mounted_covers(
    layout: &mounts::Layout,
    skipped: &[PathBuf],
) -> Result<Vec<Covered>, String> {
    let root = sys::open_path(Path::new("/"), true).map_err(|e| format!("opening /: {e}"))?;
    // Read only where the kernel does not tell mount roots (before Linux 5.8).
    let mut points: Option<Vec<PathBuf>> = None;
    let mut v = Vec::new();
    for c in layout.covers() {
        let mount = match sys::mount_at(&root, &c.path) {
            Ok(Some(m)) if m.root => Some(Some(m.id)),
            Ok(None) => {
                if points.is_none() {
                    points = Some(
                        mount_points().map_err(|e| format!("reading /proc/self/mountinfo: {e}"))?,
                    );
                }
                points
                    .as_ref()
                    .is_some_and(|p| p.contains(&c.path))
                    .then_some(None)
            }
            _ => None,
        };
        match mount {
            Some(mount) => v.push(Covered {
                path: c.path,
                mount,
                unreachable: false,
            }),
            None if skipped.contains(&c.path) => {}
            None => return Err(gone(&c.path)),
        }
    }
    Ok(v)
}

/// The message that stops a run: what was replaced, which cover it removed, and that the
/// command was stopped.
fn loss_message(path: &Path, cover: &Cover, mask: AddWatchFlags) -> String {
    let how = if mask.intersects(AddWatchFlags::IN_DELETE | AddWatchFlags::IN_MOVED_FROM) {
        "removed or renamed"
    } else {
        "replaced"
    };
    if path == cover.path {
        format!(
            "{} was {how} during the run (on the host, or by the command where its parent is \
             writable), which removes the sandbox's cover of it ({}): the command was \
             stopped; check what is there now",
            path.display(),
            cover.kind.words()
        )
    } else {
        format!(
            "{} was {how} during the run (on the host, or by the command where its parent is \
             writable), which removes the sandbox's cover of {} beneath it ({}): the command \
             was stopped; check what is there now",
            path.display(),
            cover.path.display(),
            cover.kind.words()
        )
    }
}

/// The message that stops a run when a hidden path that was not present at launch
/// (`hidden`), or a non-directory on the way to it (`path`), appeared on the host.
fn created_message(path: &Path, hidden: &Path) -> String {
    if path == hidden {
        format!(
            "{} was created during the run, a hidden path that was not present at launch \
             (so nothing covered it): the command was stopped",
            path.display()
        )
    } else {
        format!(
            "{} was created during the run, on the way to {} (a hidden path that was not \
             present at launch), as something other than a directory (a symlink could lead \
             anywhere): the command was stopped",
            path.display(),
            hidden.display()
        )
    }
}

/// The mount points of this process's mount namespace (`/proc/self/mountinfo`, field 5,
/// octal escapes decoded).
fn mount_points() -> std::io::Result<Vec<PathBuf>> {
    use std::os::unix::ffi::OsStringExt;
    let text = std::fs::read("/proc/self/mountinfo")?;
    let mut out = Vec::new();
    for line in text.split(|b| *b == b'\n') {
        let Some(field) = line.split(|b| *b == b' ').nth(4) else {
            continue;
        };
        let mut p = Vec::with_capacity(field.len());
        let mut i = 0;
        while i < field.len() {
            let oct = field
                .get(i + 1..i + 4)
                .filter(|d| d.iter().all(u8::is_ascii_digit));
            match (field[i], oct) {
                (b'\\', Some(d)) => {
                    p.push((d[0] - b'0') * 64 + (d[1] - b'0') * 8 + (d[2] - b'0'));
                    i += 4;
                }
                (b, _) => {
                    p.push(b);
                    i += 1;
                }
            }
        }
        out.push(PathBuf::from(OsString::from_vec(p)));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Attack pass 143 F2: a cover's path that is the root of another mount (a covered
    /// directory swapped with a protected one) is not that cover; the recorded mount is.
    #[test]
    fn a_cover_is_its_own_mount_not_any_mount_root() {
        let root = sys::open_path(Path::new("/"), true).unwrap();
        let (Some(proc_mount), Some(etc_mount)) = (
            sys::mount_at(&root, Path::new("/proc")).unwrap(),
            sys::mount_at(&root, Path::new("/etc")).unwrap(),
        ) else {
            return sys::tests::missing_feature("STATX_MNT_ID");
        };
        let cover = |id: u64| Covered {
            path: PathBuf::from("/proc"),
            mount: Some(id),
            unreachable: false,
        };
        assert_eq!(still_mounted(&[cover(proc_mount.id)]), Ok(()));
        assert_ne!(proc_mount.id, etc_mount.id);
        let swapped = still_mounted(&[cover(etc_mount.id)]).unwrap_err();
        assert!(swapped.contains("/proc is no longer covered"), "{swapped}");
        // A path inside a mount is not a mount point, whatever the ID.
        let inside = Covered {
            path: PathBuf::from("/proc/self/fdinfo").canonicalize().unwrap(),
            mount: Some(proc_mount.id),
            unreachable: false,
        };
        assert!(still_mounted(&[inside]).is_err());
    }

    /// Attack pass 144: init records each cover before the command and looks again after
    /// it; a cover whose path no longer leads to the recorded mount is the run's loss, and
    /// one that is not a mount when recorded refuses the run.
    #[test]
    fn covers_recorded_before_the_command_are_looked_at_after_it() {
        let Some(marks) = record_covers(vec![PathBuf::from("/proc")]).unwrap() else {
            return sys::tests::missing_feature("STATX_MNT_ID");
        };
        assert_eq!(marks.len(), 1);
        assert_eq!(lost_after_run(&marks), None);
        let root = sys::open_path(Path::new("/"), true).unwrap();
        let etc = sys::mount_at(&root, Path::new("/etc")).unwrap().unwrap();
        let replaced = [Covered {
            path: PathBuf::from("/proc"),
            mount: Some(etc.id),
            unreachable: false,
        }];
        let m = lost_after_run(&replaced).expect("another mount at the path");
        assert!(m.contains("/proc was replaced during the run"), "{m}");
        let d = tempfile::tempdir().unwrap();
        let e = record_covers(vec![d.path().canonicalize().unwrap()]).unwrap_err();
        assert!(e.contains("not covered"), "{e}");
    }

    /// Attack pass 143 F1: a planned cover that is not a mount point after the build —
    /// taken away by the host while it was built — is an error, not a cover left out; one
    /// the build skipped and said so is left out.
    #[test]
    fn a_cover_missing_after_the_build_is_an_error_unless_skipped() {
        let d = tempfile::tempdir().unwrap();
        let secret = d.path().canonicalize().unwrap().join(".netrc");
        std::fs::write(&secret, "password x\n").unwrap();
        let layout = mounts::Layout {
            base: mounts::Base::HostReadOnly,
            steps: vec![mounts::Step {
                path: secret.clone(),
                kind: mounts::StepKind::Mask { traverse: false },
                may_create: false,
            }],
            notes: Vec::new(),
            absent: Vec::new(),
            read_only_caches: Vec::new(),
            links: Vec::new(),
            resolved_through_links: Vec::new(),
        };
        assert_eq!(layout.covers().len(), 1, "the mask is a cover");
        let e = mounted_covers(&layout, &[]).unwrap_err();
        assert!(e.contains(".netrc is no longer covered"), "{e}");
        let kept = mounted_covers(&layout, std::slice::from_ref(&secret)).unwrap();
        assert!(kept.is_empty());
    }

    #[test]
    fn mountinfo_lists_root() {
        let m = mount_points().unwrap();
        assert!(m.iter().any(|p| p == Path::new("/")), "{m:?}");
    }

    /// A plan that hides nothing but the deny entries `absent` (not present at launch).
    fn absent_only(absent: &[PathBuf]) -> mounts::Layout {
        mounts::Layout {
            base: mounts::Base::HostReadOnly,
            steps: Vec::new(),
            notes: Vec::new(),
            absent: absent.to_vec(),
            read_only_caches: Vec::new(),
            links: Vec::new(),
            resolved_through_links: Vec::new(),
        }
    }

    fn events_settle() {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }

    /// attack28 F2: a hidden path missing at launch stops the run when it appears, through
    /// directories created on the way (`mkdir -p ~/.config/gh`), however far down; a
    /// directory that only leads there, other names beside it, and removals do not.
    #[test]
    fn a_hidden_path_created_during_the_run_is_seen_through_new_directories() {
        let d = tempfile::tempdir().unwrap();
        let home = d.path().canonicalize().unwrap();
        let gh = home.join(".config/gh");
        let netrc = home.join(".netrc");
        let deep = home.join(".m2/a/b/settings.xml");
        let mut w = CoverWatch::start(&absent_only(&[gh.clone(), netrc, deep.clone()]))
            .unwrap()
            .unwrap();
        std::fs::write(home.join("unrelated"), "x").unwrap();
        std::fs::create_dir(home.join(".config")).unwrap();
        std::fs::create_dir(home.join(".config/other")).unwrap();
        std::fs::create_dir_all(home.join(".m2/a")).unwrap();
        std::fs::remove_file(home.join("unrelated")).unwrap();
        events_settle();
        assert_eq!(w.poll(), None);
        // Made at once with its parent: found by the look inside the new directory.
        std::fs::create_dir_all(home.join(".m2/a/b")).unwrap();
        events_settle();
        assert_eq!(w.poll(), None);
        std::fs::write(&deep, "<password/>").unwrap();
        events_settle();
        let m = w.poll().unwrap().to_string();
        assert!(m.contains(&deep.display().to_string()), "{m}");
        assert!(m.contains("stopped"), "{m}");

        // `mkdir -p` of the hidden directory, in one go.
        let mut w = CoverWatch::start(&absent_only(&[home.join(".kube/config")]))
            .unwrap()
            .unwrap();
        std::fs::create_dir_all(home.join(".kube")).unwrap();
        events_settle();
        assert_eq!(w.poll(), None);
        std::fs::write(home.join(".kube/config"), "token").unwrap();
        events_settle();
        assert!(w.poll().unwrap().contains(".kube/config"));
        drop(w);
        let mut w = CoverWatch::start(&absent_only(std::slice::from_ref(&gh)))
            .unwrap()
            .unwrap();
        std::fs::create_dir_all(gh.join("x")).unwrap();
        events_settle();
        assert!(w.poll().unwrap().contains(&gh.display().to_string()));

        // A symlink on the way could lead anywhere: stopped.
        let cloud = home.join(".cloud/creds");
        let mut w = CoverWatch::start(&absent_only(&[cloud])).unwrap().unwrap();
        std::os::unix::fs::symlink(&home, home.join(".cloud")).unwrap();
        events_settle();
        assert!(w.poll().unwrap().contains("other than a directory"));

        // Present already when the watch starts (created after the resolution): refused.
        let e = CoverWatch::start(&absent_only(&[home.join(".config/other")]))
            .err()
            .unwrap();
        assert!(e.contains("run the command again"), "{e}");
    }

    #[test]
    fn messages_name_the_path_and_the_cover() {
        let c = Cover {
            path: PathBuf::from("/home/u/.config/gh"),
            kind: mounts::CoverKind::Hidden,
        };
        let m = loss_message(
            Path::new("/home/u/.config"),
            &c,
            AddWatchFlags::IN_MOVED_FROM,
        );
        assert!(m.contains("/home/u/.config "), "{m}");
        assert!(m.contains("cover of /home/u/.config/gh"), "{m}");
        assert!(m.contains("stopped"), "{m}");
        let m = limit_message("inotify_init1", Errno::EMFILE);
        assert!(m.contains("fs.inotify.max_user_instances"), "{m}");
        let m = limit_message("inotify_add_watch /x", Errno::ENOSPC);
        assert!(m.contains("fs.inotify.max_user_watches"), "{m}");
    }
}
