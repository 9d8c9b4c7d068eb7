//! Resource limits (R-H5) for one run: a cgroup where cordon can create one (cgroup v2, or
//! the v1 `pids`/`memory` hierarchies), rlimits otherwise and in addition, a watchdog for
//! the wall-clock timeout and for limits the kernel only counts, and the classified
//! outcome (`limit-exceeded{which}`).
//!
//! - **pids**: cgroup `pids.max` (counts the helper and init too, so 2 are added); fallback `RLIMIT_NPROC` in the sandbox's own user namespace (rung 1 only:
//!   outside one it counts every process of the user; the kernel exempts real root, so as
//!   root without a cgroup it is not enforced — `cordon status` says so).
//! - **memory**: cgroup `memory.max` / `memory.limit_in_bytes` for the whole tree; fallback
//!   `RLIMIT_DATA` per process (not `RLIMIT_AS`: runtimes reserve address space).
//! - **tmpfs**: `size=` of the private `/tmp` and `/dev/shm` (see `mounts`).
//! - **open files**: `RLIMIT_NOFILE`. **cpu time**: `RLIMIT_CPU` per process (`SIGXCPU`).
//! - **timeout**: the watchdog kills the sandbox's init; the pid namespace takes every
//!   process of the command with it.
//!
//! When the watchdog (in the helper, checking every 20 ms while it waits) sees a pids or memory event (`pids.events max`, `oom_kill`) or the
//! deadline, it kills the tree, and the helper prints one stderr line and exits 124 (like
//! `timeout`); with `--json` the limit travels to cordon on a pipe the command never holds
//! ([`OUTCOME_FD_ENV`]).

use super::sys;
use cordon_policy::limits::{LimitKind, ResolvedLimits};
use cordon_policy::ResolvedProfile;
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Exit code of a run ended by a limit (like `timeout(1)`).
pub const EXIT_LIMIT: i32 = 124;

/// Environment variable of the *helper* naming a descriptor it writes the limit that ended
/// the run to (one byte, [`LimitKind::code`]). Set by `cordon run --json`; never part of
/// the command's environment (that comes from the payload).
pub const OUTCOME_FD_ENV: &str = "CORDON_OUTCOME_FD";

/// Tasks of cordon's own inside the cgroup: init and its supervisor thread (cold path; the
/// helper stays outside, [`Cgroup::attach`]), or the helper and init (a template's command,
/// which joins with [`Cgroup::join_self`]).
const OWN_PROCESSES: u64 = 2;

/// Set in the helper when the cgroup limits memory, so the forked init/supervisor does not
/// add a per-process `RLIMIT_DATA` (the cgroup is the one that classifies).
static MEMORY_BY_CGROUP: AtomicBool = AtomicBool::new(false);
/// Set when the cgroup limits pids (no `RLIMIT_NPROC` then).
static PIDS_BY_CGROUP: AtomicBool = AtomicBool::new(false);

/// Total RAM of the host in bytes (`sysinfo`), 0 if unknown.
pub fn ram_bytes() -> u64 {
    // SAFETY: sysinfo is plain data; zeroed is valid and the kernel fills it.
    let mut si: libc::sysinfo = unsafe { std::mem::zeroed() };
    // SAFETY: `si` is a valid, writable sysinfo struct.
    if unsafe { libc::sysinfo(&mut si) } != 0 {
        return 0;
    }
    (si.totalram as u64).saturating_mul(si.mem_unit as u64)
}

/// The profile's limits in numbers for this host.
pub fn resolve(profile: &ResolvedProfile) -> Result<ResolvedLimits, String> {
    profile
        .profile
        .limits
        .resolve(ram_bytes())
        .map_err(|e| e.to_string())
}

/// `setrlimit`'s resource argument: glibc declares its own enum type, musl an `int`.
#[cfg(target_env = "gnu")]
type RlimitResource = libc::__rlimit_resource_t;
#[cfg(not(target_env = "gnu"))]
type RlimitResource = libc::c_int;

fn set_rlimit(res: RlimitResource, soft: u64, hard: u64) -> std::io::Result<()> {
    let r = libc::rlimit {
        rlim_cur: soft,
        rlim_max: hard,
    };
    // SAFETY: `r` is a valid rlimit.
    if unsafe { libc::setrlimit(res, &r) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

fn get_rlimit(res: RlimitResource) -> (u64, u64) {
    let mut r = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `r` is a valid, writable rlimit.
    unsafe { libc::getrlimit(res, &mut r) };
    (r.rlim_cur, r.rlim_max)
}

/// Sets `size=` (R-H5 `limits.tmpfs`) on the private `/tmp` and `/dev/shm` steps of the
/// mount plan (the `size` hooks of [`super::mounts::StepKind`]); `None` keeps the kernel
/// default (half of RAM).
pub fn size_tmpfs(layout: &mut super::mounts::Layout, bytes: Option<u64>) {
    use super::mounts::StepKind;
    let Some(b) = bytes else { return };
    for s in &mut layout.steps {
        match &mut s.kind {
            StepKind::PrivateTmp { size } => *size = Some(b.to_string()),
            StepKind::Dev { shm_size } => *shm_size = Some(b.to_string()),
            _ => {}
        }
    }
}

/// Lowers the rlimits of this process (inherited by the command): open files, CPU time,
/// and — when no cgroup does it — processes and per-process data memory. Called once,
/// just before the command is started. Never raises a limit. `own_user_namespace`: the
/// process runs in a user namespace of its own (rung 1), where `RLIMIT_NPROC` counts only
/// the sandbox's processes; outside one it would count every process of the user on the
/// host, so it is not set.
pub fn apply_rlimits(r: &ResolvedLimits, own_user_namespace: bool) -> Result<Vec<String>, String> {
    let mut applied = Vec::new();
    let mut lower = |res, name: &str, want: u64, slack: u64| -> Result<(), String> {
        let (soft, hard) = get_rlimit(res);
        let new_hard = hard.min(want.saturating_add(slack));
        let new_soft = soft.min(want).min(new_hard);
        set_rlimit(res, new_soft, new_hard).map_err(|e| format!("setrlimit({name}): {e}"))?;
        applied.push(format!("{name}={new_soft}"));
        Ok(())
    };
    if let Some(n) = r.open_files {
        lower(libc::RLIMIT_NOFILE, "RLIMIT_NOFILE", n, 0)?;
    }
    if let Some(s) = r.cpu_seconds {
        // SIGXCPU at the soft limit, SIGKILL 5 s later.
        lower(libc::RLIMIT_CPU, "RLIMIT_CPU", s, 5)?;
    }
    if let Some(n) = r.pids {
        if own_user_namespace && !PIDS_BY_CGROUP.load(Ordering::Relaxed) {
            lower(libc::RLIMIT_NPROC, "RLIMIT_NPROC", n, 0)?;
        }
    }
    if let Some(b) = r.memory_bytes {
        if !MEMORY_BY_CGROUP.load(Ordering::Relaxed) {
            lower(libc::RLIMIT_DATA, "RLIMIT_DATA", b, 0)?;
        }
    }
    Ok(applied)
}

/// One cgroup directory of ours and the directory to move back to.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
struct Dir {
    path: PathBuf,
    home: PathBuf,
}

/// The cgroup(s) created for one run.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct Cgroup {
    dirs: Vec<Dir>,
    /// Files whose `max N` / `oom_kill N` counters say a limit was hit.
    pids_events: Option<PathBuf>,
    memory_events: Option<PathBuf>,
    /// How each limit is enforced, for reports.
    pub how: Vec<String>,
    /// This process moved itself in ([`Cgroup::create`], [`Cgroup::join_self`]), so
    /// [`Cgroup::remove`] moves it back first; `false` after [`Cgroup::attach`] of another
    /// process (a move costs an RCU grace period on cgroup v1: ~7 ms of every run's wall
    /// time, measured, issue 12).
    #[serde(default)]
    joined: bool,
    /// The directories are cgroup v1 hierarchies: a single-threaded process joins by writing
    /// `0` to each `tasks` file ([`Cgroup::join_files`], [`Cgroup::join_current`]).
    #[serde(default)]
    v1: bool,
}

fn own_cgroups() -> Vec<(String, String)> {
    std::fs::read_to_string("/proc/self/cgroup")
        .unwrap_or_default()
        .lines()
        .filter_map(|l| {
            let mut it = l.splitn(3, ':');
            let _id = it.next()?;
            let ctrl = it.next()?.to_string();
            let path = it.next()?.to_string();
            Some((ctrl, path))
        })
        .collect()
}

fn write(p: &Path, s: &str) -> std::io::Result<()> {
    std::fs::OpenOptions::new()
        .write(true)
        .open(p)?
        .write_all(s.as_bytes())
}

/// Where a run's cgroup of controller `ctrl` goes (`None`: the v2 unified hierarchy):
/// beside this process's own cgroup (`own`, [`own_cgroups`]), if it has one there.
fn cgroup_home(own: &[(String, String)], ctrl: Option<&str>) -> Option<PathBuf> {
    let root = Path::new("/sys/fs/cgroup");
    match ctrl {
        None => {
            let (_, base) = own.iter().find(|(c, _)| c.is_empty())?;
            Some(root.join(base.trim_start_matches('/')))
        }
        Some(ctrl) => {
            let (_, base) = own.iter().find(|(c, _)| c.split(',').any(|x| x == ctrl))?;
            Some(root.join(ctrl).join(base.trim_start_matches('/')))
        }
    }
}

/// Whether this host mounts the v2 unified cgroup hierarchy at `/sys/fs/cgroup`.
fn cgroup_v2() -> bool {
    Path::new("/sys/fs/cgroup/cgroup.controllers").exists()
}

/// The directories this process's cgroups live in, where a helper it starts makes the
/// run's cgroup ([`Cgroup::create`]): the v2 one, or the v1 `pids` and `memory` ones.
fn cgroup_homes() -> Vec<PathBuf> {
    let own = own_cgroups();
    let ctrls: &[Option<&str>] = if cgroup_v2() {
        &[None]
    } else {
        &[Some("pids"), Some("memory")]
    };
    ctrls.iter().filter_map(|c| cgroup_home(&own, *c)).collect()
}

/// Removes the cgroup directory `path`, trying again every 2 ms until `deadline` while it
/// is busy (`EBUSY`: a killed tree still leaving it); then it is left to the sweep of dead
/// runs ([`sweep_dead`]).
fn remove_when_empty(path: &Path, deadline: Instant) {
    while let Err(e) = std::fs::remove_dir(path) {
        if e.raw_os_error() != Some(libc::EBUSY) || Instant::now() > deadline {
            break;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// Removes the run cgroups (`cordon-<pid>-…`, [`Cgroup::create`]) that the helper `pid`,
/// this process's child, killed before it could remove them (the server's handler ending a
/// run whose client hung up; `cordon run --timeout` on the cold path): each once empty,
/// waiting up to [`REMOVE_WAIT`] for the killed tree to leave it. Call it before `pid` is
/// reaped: until then no other process can have that pid, so no other run's cgroup has
/// the name (attack pass 175 F2: each such run left its cgroup until the sweep of dead
/// runs, a minute later at the earliest).
pub fn remove_left_by(pid: u32) {
    let prefix = format!("cordon-{pid}-");
    let deadline = Instant::now() + REMOVE_WAIT;
    for home in cgroup_homes() {
        let Ok(entries) = std::fs::read_dir(&home) else {
            continue;
        };
        for e in entries.flatten() {
            if e.file_name()
                .to_str()
                .is_some_and(|n| n.starts_with(&prefix))
            {
                remove_when_empty(&e.path(), deadline);
            }
        }
    }
}

/// When [`Cgroup::create_for_others`] sweeps the cgroups dead runs left
/// ([`sweep_dead`]): a listing of the cgroup home and a look at each `cordon-*` entry's
/// pid, ~6 % of `cordon serve`'s CPU per command when it was on the launch path (perf,
/// issue 12).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sweep {
    /// Before the run's cgroup is made (the cold path's helper).
    First,
    /// Not here: the caller sweeps once the command's status went out
    /// ([`sweep_dead_runs`]; `cordon serve`'s handler).
    Later,
}

/// Sweeps the cgroups dead runs left in this process's cgroup homes ([`sweep_dead`]).
pub fn sweep_dead_runs() {
    for home in cgroup_homes() {
        sweep_dead(&home);
    }
}

/// How old a dead helper's cgroup must be before [`sweep_dead`] removes it: far longer
/// than a live helper needs between creating its cgroup and moving into it (microseconds).
const SWEEP_MIN_AGE: std::time::Duration = std::time::Duration::from_secs(60);

/// Removes the cgroups `cordon-<pid>[-…]` under `home` whose helper `<pid>` is gone (a
/// helper killed by SIGKILL cannot remove its own) and that are older than
/// [`SWEEP_MIN_AGE`]. `rmdir` of a cgroup that still has processes fails and is ignored;
/// the age rule covers the one empty state of a live run — created, limits not yet
/// written, helper not yet moved in — which a helper in *another* pid namespace (where the
/// pid in the name does not exist) would otherwise remove, leaving that run without its
/// limits.
fn sweep_dead(home: &Path) {
    let Ok(entries) = std::fs::read_dir(home) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(rest) = name.to_str().and_then(|n| n.strip_prefix("cordon-")) else {
            continue;
        };
        let pid = rest.split('-').next().unwrap_or("");
        if pid.is_empty() || !pid.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        if Path::new("/proc").join(pid).exists() {
            continue;
        }
        let old_enough = e
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|age| age >= SWEEP_MIN_AGE);
        if old_enough {
            let _ = std::fs::remove_dir(e.path());
        }
    }
}

impl Cgroup {
    /// Creates a cgroup for this run with the pids and memory limits of `r`, and moves the
    /// calling process (the helper) into it, so everything it starts inherits it. `None`
    /// when this host gives cordon no cgroup (no delegation, v1 hierarchies not writable):
    /// the rlimit fallbacks apply.
    pub fn create(r: &ResolvedLimits) -> Option<Cgroup> {
        Self::make(r, true, Sweep::First)
    }

    /// [`Cgroup::create`] for another process to join (`cordon serve`'s handler for a
    /// template's command): the directories and limits only, the caller stays out — so
    /// `pids.max` counts exactly the helper and init beside the command, as on the cold
    /// path (the handler inside made the limit one lower than reported).
    ///
    /// `sweep`: when the cgroups dead runs left are swept ([`Sweep`]).
    pub fn create_for_others(r: &ResolvedLimits, sweep: Sweep) -> Option<Cgroup> {
        Self::make(r, false, sweep)
    }

    // Longer than most: the v2 and v1 cgroup hierarchies side by side (same steps, different
    // files), so their differences stay visible.
    fn make(r: &ResolvedLimits, join: bool, sweep: Sweep) -> Option<Cgroup> {
        if r.pids.is_none() && r.memory_bytes.is_none() {
            return None;
        }
        let mut cg = Cgroup::default();
        // Unique per run, not per pid: a helper killed by SIGKILL cannot remove its
        // cgroup, and a later helper with the same (reused) pid then found the name taken
        // and ran without any pids/memory limit (seen as a flaky fork-bomb test).
        let nonce = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        let name = format!("cordon-{}-{nonce:08x}", std::process::id());
        let own = own_cgroups();
        if cgroup_v2() {
            let home = cgroup_home(&own, None)?;
            if sweep == Sweep::First {
                sweep_dead(&home);
            }
            let dir = home.join(&name);
            std::fs::create_dir(&dir).ok()?;
            cg.dirs.push(Dir {
                path: dir.clone(),
                home,
            });
            if let Some(n) = r.pids {
                if write(&dir.join("pids.max"), &(n + OWN_PROCESSES).to_string()).is_ok() {
                    cg.pids_events = Some(dir.join("pids.events"));
                    cg.how.push(format!("pids {n}: cgroup v2 pids.max"));
                }
            }
            if let Some(b) = r.memory_bytes {
                if write(&dir.join("memory.max"), &b.to_string()).is_ok() {
                    let _ = write(&dir.join("memory.swap.max"), "0");
                    cg.memory_events = Some(dir.join("memory.events"));
                    cg.how
                        .push(format!("memory {b} bytes: cgroup v2 memory.max"));
                }
            }
        } else {
            cg.v1 = true;
            for (ctrl, limit_file, events, value) in [
                (
                    "pids",
                    "pids.max",
                    "pids.events",
                    r.pids.map(|n| n + OWN_PROCESSES),
                ),
                (
                    "memory",
                    "memory.limit_in_bytes",
                    "memory.oom_control",
                    r.memory_bytes,
                ),
            ] {
                let Some(value) = value else { continue };
                let Some(home) = cgroup_home(&own, Some(ctrl)) else {
                    continue;
                };
                if sweep == Sweep::First {
                    sweep_dead(&home);
                }
                let dir = home.join(&name);
                if std::fs::create_dir(&dir).is_err() {
                    continue;
                }
                cg.dirs.push(Dir {
                    path: dir.clone(),
                    home,
                });
                if write(&dir.join(limit_file), &value.to_string()).is_err() {
                    continue;
                }
                if ctrl == "pids" {
                    cg.pids_events = Some(dir.join(events));
                    cg.how.push(format!(
                        "pids {}: cgroup v1 pids.max",
                        value - OWN_PROCESSES
                    ));
                } else {
                    let _ = write(&dir.join("memory.memsw.limit_in_bytes"), &value.to_string());
                    cg.memory_events = Some(dir.join(events));
                    cg.how.push(format!(
                        "memory {value} bytes: cgroup v1 memory.limit_in_bytes"
                    ));
                }
            }
        }
        if cg.dirs.is_empty() {
            return None;
        }
        if join {
            let me = std::process::id().to_string();
            cg.joined = true;
            for d in &cg.dirs {
                if write(&d.path.join("cgroup.procs"), &me).is_err() {
                    cg.remove();
                    return None;
                }
            }
            cg.enforce_here();
        }
        Some(cg)
    }

    /// Moves the process `pid` (a child of this one: the sandbox's init, before it starts
    /// the command) into every directory of this cgroup, so everything it starts inherits
    /// it; this process stays where it is. The move is the slow part of a cgroup on v1 (the
    /// kernel waits for an RCU grace period): the helper does it while init builds the
    /// sandbox's root, instead of moving itself in before the clone and back out after.
    ///
    /// Errors: a `cgroup.procs` write failed (the caller removes the cgroup and lets init
    /// fall back to the rlimits, as when no cgroup could be made).
    pub fn attach(&self, pid: libc::pid_t) -> std::io::Result<()> {
        let pid = pid.to_string();
        for d in &self.dirs {
            write(&d.path.join("cgroup.procs"), &pid)?;
        }
        Ok(())
    }

    /// Moves this process (the helper) in as well, when it runs the filtering proxy for the
    /// command: the proxy's threads and memory (connections, buffers, its decision log)
    /// are driven by the command, so they count against the run's limits as they did when
    /// the helper joined before the clone (breaker, stop 18). `procs`: the `cgroup.procs`
    /// descriptors of a template's command ([`Cgroup::attach_through`]), empty on the
    /// cold path. [`Cgroup::remove`] moves it back out.
    ///
    /// Errors: a `cgroup.procs` write failed.
    pub(crate) fn join_self(&mut self, procs: &[OwnedFd]) -> std::io::Result<()> {
        if self.v1 {
            // Single-threaded here (the proxy's threads start after): the fast move.
            let own;
            let files = if procs.is_empty() {
                own = self.join_files()?;
                &own
            } else {
                procs
            };
            Self::join_current(files)?;
        } else {
            // SAFETY: getpid has no preconditions.
            let me = unsafe { libc::getpid() };
            if procs.is_empty() {
                self.attach(me)?;
            } else {
                self.attach_through(procs, me)?;
            }
        }
        self.joined = true;
        Ok(())
    }

    /// Raises `pids.max` by `extra` tasks: cordon's own threads that join the run's cgroup
    /// (the filtering proxy's, [`Cgroup::join_self`]), so the command keeps the budget its
    /// profile gives (breaker, stop 19: the proxy's nine threads came off `pids = 64`).
    ///
    /// Errors: `pids.max` cannot be read or written (the limit then stays as it was).
    pub(crate) fn allow_more_pids(&self, extra: u64) -> std::io::Result<()> {
        let Some(events) = &self.pids_events else {
            return Ok(());
        };
        let max = events.with_file_name("pids.max");
        let now: u64 = std::fs::read_to_string(&max)?
            .trim()
            .parse()
            .map_err(std::io::Error::other)?;
        write(&max, &(now + extra).to_string())
    }

    /// Which limits the cgroup enforces, as `(pids, memory)`: what a process that the
    /// helper [`attach`](Cgroup::attach)ed passes to [`Cgroup::enforced_by_cgroup`].
    pub fn limits_enforced(&self) -> (bool, bool) {
        (self.pids_events.is_some(), self.memory_events.is_some())
    }

    /// Records, in this process, that the cgroup enforces the pids/memory limits, so
    /// [`apply_rlimits`] does not add the per-process fallbacks.
    fn enforce_here(&self) {
        let (pids, memory) = self.limits_enforced();
        Self::enforced_by_cgroup(pids, memory);
    }

    /// Records, in this process (the sandbox's init after the helper attached it), which
    /// limits a cgroup enforces: `(pids, memory)` of [`Cgroup::limits_enforced`].
    pub fn enforced_by_cgroup(pids: bool, memory: bool) {
        PIDS_BY_CGROUP.store(pids, Ordering::Relaxed);
        MEMORY_BY_CGROUP.store(memory, Ordering::Relaxed);
    }

    /// Whether a process joins this cgroup by itself ([`Cgroup::join_current`] through
    /// [`Cgroup::join_files`]) rather than being moved in by its parent
    /// ([`Cgroup::attach`]): on cgroup v1. A move through `cgroup.procs` (and any move of
    /// another task) write-locks the kernel's `cgroup_threadgroup_rwsem`, which waits for an
    /// RCU grace period: 5–22 ms of wall time per run on this cgroup v1 host (measured,
    /// issue 12). A single thread moving *itself* through `tasks` (writing `0`) does not
    /// take that lock (kernel/cgroup/cgroup.c, `cgroup_procs_write_start`: a thread that is
    /// `current` cannot exit or exec under the writer): 0.12 ms, measured. Init is single-threaded when it joins, so
    /// moving its one thread moves the whole process. cgroup v2 has no such file for a move
    /// between domain cgroups (`cgroup.threads` stays inside one threaded domain), so there
    /// the parent moves init in.
    pub(crate) fn moves_itself(&self) -> bool {
        self.v1
    }

    /// The descriptors a process uses to join this run's cgroup, one per directory, opened
    /// for writing here (on the host, by the process that created the cgroup, so the
    /// kernel's permission check sees its credentials): each `tasks` file on v1 (the
    /// joining thread writes `0`, [`Cgroup::join_current`]), each `cgroup.procs` on v2 (the
    /// parent writes init's pid, [`Cgroup::attach_through`]). They work where
    /// `/sys/fs/cgroup` is not mounted or read-only (inside a sandbox).
    ///
    /// Errors: an `open` failed.
    pub(crate) fn join_files(&self) -> std::io::Result<Vec<OwnedFd>> {
        let file = if self.v1 { "tasks" } else { "cgroup.procs" };
        self.dirs
            .iter()
            .map(|d| {
                std::fs::OpenOptions::new()
                    .write(true)
                    .open(d.path.join(file))
                    .map(OwnedFd::from)
            })
            .collect()
    }

    /// Moves the calling thread into the cgroup through the `tasks` descriptors of
    /// [`Cgroup::join_files`] (cgroup v1, [`Cgroup::moves_itself`]): the whole process when
    /// it is single-threaded, as init is before it starts anything.
    ///
    /// Errors: a write failed (the caller takes the rlimit fallbacks).
    pub(crate) fn join_current(files: &[OwnedFd]) -> std::io::Result<()> {
        for fd in files {
            let mut f = std::fs::File::from(sys::dup_cloexec(fd.as_raw_fd())?);
            f.write_all(b"0")?;
        }
        Ok(())
    }

    /// How many directories (one per controller hierarchy on v1) the cgroup has: one
    /// `cgroup.procs` descriptor each for [`Cgroup::attach_through`].
    pub(crate) fn directories(&self) -> usize {
        self.dirs.len()
    }

    /// [`Cgroup::attach`] through `cgroup.procs` descriptors another process opened on the
    /// host ([`Cgroup::join_files`], one per directory): for a helper inside a template,
    /// where `/sys/fs/cgroup` is read-only. `pid` is as this process sees it.
    ///
    /// Errors: a descriptor is missing or a write failed (the caller refuses the cgroup).
    pub(crate) fn attach_through(
        &self,
        procs: &[OwnedFd],
        pid: libc::pid_t,
    ) -> std::io::Result<()> {
        if procs.len() != self.dirs.len() {
            return Err(std::io::Error::other(
                "one cgroup.procs descriptor per cgroup",
            ));
        }
        for fd in procs {
            let mut f = std::fs::File::from(sys::dup_cloexec(fd.as_raw_fd())?);
            f.write_all(pid.to_string().as_bytes())?;
        }
        Ok(())
    }

    /// Moves this process back where it came from if it joined, and removes the
    /// directories. Empty once init was reaped (the pid namespace is gone); after a kill
    /// the killed tree may still be exiting, and `rmdir` then fails with `EBUSY` until it
    /// has: tried again every 2 ms for up to [`REMOVE_WAIT`] (attack pass 175 F2: a
    /// killed client's run left its cgroup), then left to the sweep of dead runs.
    pub fn remove(&self) {
        let me = std::process::id().to_string();
        let deadline = Instant::now() + REMOVE_WAIT;
        for d in &self.dirs {
            if self.joined {
                let _ = write(&d.home.join("cgroup.procs"), &me);
            }
            remove_when_empty(&d.path, deadline);
        }
    }

    /// Which limit the kernel counted as hit, if any.
    fn tripped(&self) -> Option<LimitKind> {
        tripped(self.pids_events.as_deref(), self.memory_events.as_deref())
    }
}

/// Which limit the kernel counted as hit in these event files (`max N` in `pids.events`,
/// `oom_kill N` in the memory events), if any.
fn tripped(pids_events: Option<&Path>, memory_events: Option<&Path>) -> Option<LimitKind> {
    let counter = |p: Option<&Path>, key: &str| -> bool {
        p.and_then(|p| std::fs::read_to_string(p).ok())
            .is_some_and(|s| {
                s.lines().any(|l| {
                    let mut it = l.split_whitespace();
                    it.next() == Some(key)
                        && it.next().and_then(|n| n.parse::<u64>().ok()).unwrap_or(0) > 0
                })
            })
    };
    if counter(pids_events, "max") {
        return Some(LimitKind::Pids);
    }
    if counter(memory_events, "oom_kill") {
        return Some(LimitKind::Memory);
    }
    None
}

/// The watchdog of one run, kept by the helper itself while it waits for the sandbox's
/// init ([`Watchdog::check`] every [`Watchdog::EVERY`], from
/// [`super::process::supervise_checking`]): it kills init when the deadline passes or the
/// cgroup counts a pids/memory hit, and remembers which. (It was a forked process polling
/// on its own: one more fork, exit and reap on every run.)
#[derive(Debug)]
pub struct Watchdog {
    target: libc::pid_t,
    deadline: Option<Instant>,
    pids_events: Option<PathBuf>,
    memory_events: Option<PathBuf>,
    hit: Option<LimitKind>,
}

impl Watchdog {
    /// How often [`Watchdog::check`] runs while the command lives.
    pub const EVERY: Duration = Duration::from_millis(20);

    /// The watchdog for `target` (the sandbox's init). `None` when there is nothing to
    /// watch (no timeout, no cgroup).
    pub fn start(target: libc::pid_t, r: &ResolvedLimits, cg: Option<&Cgroup>) -> Option<Watchdog> {
        if r.timeout_ms.is_none() && cg.is_none() {
            return None;
        }
        Some(Watchdog {
            target,
            deadline: r
                .timeout_ms
                .map(|ms| Instant::now() + Duration::from_millis(ms)),
            pids_events: cg.and_then(|c| c.pids_events.clone()),
            memory_events: cg.and_then(|c| c.memory_events.clone()),
            hit: None,
        })
    }

    /// Kills the target (SIGKILL; the pid namespace ends with its init, taking every
    /// process of the command with it) once the deadline has passed or a cgroup counter
    /// says a limit was hit. The first hit is kept.
    pub fn check(&mut self) {
        if self.hit.is_some() {
            return;
        }
        let hit = if self.deadline.is_some_and(|d| Instant::now() >= d) {
            Some(LimitKind::Timeout)
        } else {
            tripped(self.pids_events.as_deref(), self.memory_events.as_deref())
        };
        if let Some(k) = hit {
            self.hit = Some(k);
            // SAFETY: kill has no memory-safety preconditions; `target` is our child.
            unsafe { libc::kill(self.target, libc::SIGKILL) };
        }
    }

    /// The limit it enforced, if any.
    pub fn stop(self) -> Option<LimitKind> {
        self.hit
    }
}

/// How long [`Cgroup::remove`] waits for a killed tree to leave the cgroup.
const REMOVE_WAIT: std::time::Duration = std::time::Duration::from_secs(1);

/// After the run: stops the watchdog, reads the cgroup's counters once more (a command
/// that failed after hitting the pids or memory limit, before the watchdog looked, ended
/// by that limit too; a command that succeeded anyway is not reclassified), and removes
/// the cgroup when `remove` (its maker removes it otherwise: the server's handler, once it
/// has passed the status on, for a template's command). Returns the limit that ended the
/// run, if any.
pub fn after_run(
    w: Option<Watchdog>,
    cg: Option<&Cgroup>,
    code: i32,
    remove: bool,
) -> Option<LimitKind> {
    let hit = w.and_then(|w| w.stop());
    let late = if code != 0 {
        cg.and_then(|c| c.tripped())
    } else {
        None
    };
    if let Some(c) = cg.filter(|_| remove) {
        c.remove();
    }
    hit.or(late)
}

/// After the run: reports a limit that ended it (stderr line, the `--json` outcome pipe)
/// and returns the exit code (124 for a limit, else `code`).
pub fn finish(hit: Option<LimitKind>, r: &ResolvedLimits, code: i32) -> i32 {
    let Some(k) = hit else { return code };
    let detail = match k {
        LimitKind::Timeout => format!("{} ms wall-clock timeout", r.timeout_ms.unwrap_or(0)),
        LimitKind::Pids => format!("more than {} processes", r.pids.unwrap_or(0)),
        LimitKind::Memory => format!("more than {} bytes of memory", r.memory_bytes.unwrap_or(0)),
        LimitKind::CpuTime => "CPU time".to_string(),
    };
    let field = k.profile_key();
    eprintln!(
        "cordon: limit-exceeded{{{k}}}: {detail}; the command and every process it started \
         were killed (raise limits.{field} in the profile)"
    );
    if let Some(fd) = std::env::var(OUTCOME_FD_ENV)
        .ok()
        .and_then(|v| v.parse::<i32>().ok())
        .filter(|fd| *fd > 2)
    {
        // SAFETY: the caller (cordon run) passed this descriptor for exactly this write;
        // ManuallyDrop keeps it open (it is closed when the helper exits).
        let f = std::mem::ManuallyDrop::new(unsafe { std::fs::File::from_raw_fd(fd) });
        let _ = (&*f).write_all(&[k.code()]);
    }
    EXIT_LIMIT
}

/// The `--json` side of [`OUTCOME_FD_ENV`]: a pipe whose write end the helper inherits.
pub struct OutcomeChannel {
    read: OwnedFd,
    write: Option<OwnedFd>,
}

impl OutcomeChannel {
    /// A new pipe, both ends close-on-exec: the helper's spawn passes the write end
    /// ([`super::pass_descriptors`]) to that helper alone. Inheritable, it reached every
    /// child started while it was open, and the run's end was read only once the last of
    /// them had exited (attack pass 148 F1).
    pub fn new() -> std::io::Result<OutcomeChannel> {
        let (read, write) = sys::pipe()?;
        Ok(OutcomeChannel {
            read,
            write: Some(write),
        })
    }

    /// `(name, value)` to add to the helper's environment.
    pub fn env(&self) -> (String, String) {
        let fd = self.write.as_ref().map(|w| w.as_raw_fd()).unwrap_or(-1);
        (OUTCOME_FD_ENV.to_string(), fd.to_string())
    }

    /// After the helper exited: the limit it reported, if any.
    pub fn read(mut self) -> Option<LimitKind> {
        drop(self.write.take());
        let mut b = [0u8; 1];
        let mut f = std::fs::File::from(self.read);
        match f.read(&mut b) {
            Ok(1) => LimitKind::from_code(b[0]),
            _ => None,
        }
    }
}

/// The limits of `r` as planned, one item each, values only (the mechanism is the host's
/// answer, known once init runs: [`enforced_here`]).
pub fn planned(r: &ResolvedLimits) -> Vec<String> {
    let mut out = Vec::new();
    out.push(
        r.pids
            .map_or("pids unlimited".into(), |n| format!("pids {n}")),
    );
    out.push(
        r.memory_bytes
            .map_or("memory unlimited".into(), |b| format!("memory {b} bytes")),
    );
    if let Some(b) = r.tmpfs_bytes {
        out.push(format!("tmpfs {b} bytes"));
    }
    if let Some(n) = r.open_files {
        out.push(format!("open files {n}"));
    }
    if let Some(s) = r.cpu_seconds {
        out.push(format!("cpu time {s} s"));
    }
    if let Some(ms) = r.timeout_ms {
        out.push(format!("timeout {ms} ms"));
    }
    out
}

/// How each limit of `r` is enforced for this run, as init finds it just before the
/// command starts (after the helper's cgroup answer and [`apply_rlimits`]; rlimit values
/// read back from the kernel): the applied
/// [`super::layer::Layer::Limits`] item list. `rung1`: the sandbox has its own user and
/// pid namespaces (tmpfs sizes, `RLIMIT_NPROC` per namespace, the helper's watchdog).
pub fn enforced_here(r: &ResolvedLimits, rung1: bool) -> Vec<String> {
    let by_pids = PIDS_BY_CGROUP.load(Ordering::Relaxed);
    let by_memory = MEMORY_BY_CGROUP.load(Ordering::Relaxed);
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    let mut out = Vec::new();
    out.push(match r.pids {
        None => "pids unlimited".into(),
        Some(n) if by_pids => format!("pids {n}: cgroup"),
        Some(n) if rung1 && !root => format!("pids {n}: RLIMIT_NPROC"),
        Some(n) if rung1 => format!(
            "pids {n}: NOT enforced (no cgroup, and the kernel exempts root from RLIMIT_NPROC)"
        ),
        Some(n) => format!("pids {n}: NOT enforced (no cgroup on the Landlock-only fallback)"),
    });
    out.push(match r.memory_bytes {
        None => "memory unlimited".into(),
        Some(b) if by_memory => format!("memory {b} bytes: cgroup"),
        Some(b) => format!("memory {b} bytes: RLIMIT_DATA per process"),
    });
    if let Some(b) = r.tmpfs_bytes {
        out.push(if rung1 {
            format!("tmpfs {b} bytes: size=")
        } else {
            format!("tmpfs {b} bytes: no private tmpfs on the Landlock-only fallback")
        });
    }
    // The rlimits as the kernel holds them now (a lower one inherited from the host stays
    // lower: the report says what is in force, not what was asked for).
    if r.open_files.is_some() {
        let (soft, _) = get_rlimit(libc::RLIMIT_NOFILE);
        out.push(format!("open files {soft}: RLIMIT_NOFILE"));
    }
    if r.cpu_seconds.is_some() {
        let (soft, _) = get_rlimit(libc::RLIMIT_CPU);
        out.push(format!("cpu time {soft} s: RLIMIT_CPU"));
    }
    if let Some(ms) = r.timeout_ms {
        out.push(if rung1 {
            format!("timeout {ms} ms: watchdog")
        } else {
            format!("timeout {ms} ms: NOT enforced (no watchdog on the Landlock-only fallback)")
        });
    }
    out
}

/// How each limit of `r` would be enforced on this host (for `cordon status`): probes
/// whether a cgroup can be created (and removes it).
pub fn describe(r: &ResolvedLimits) -> Vec<String> {
    let probe = Cgroup::create(r);
    let how = probe.as_ref().map(|c| c.how.clone()).unwrap_or_default();
    if let Some(c) = &probe {
        c.remove();
    }
    PIDS_BY_CGROUP.store(false, Ordering::Relaxed);
    MEMORY_BY_CGROUP.store(false, Ordering::Relaxed);
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    let mut out = Vec::new();
    let has = |k: &str| how.iter().find(|h| h.starts_with(k)).cloned();
    match (r.pids, has("pids")) {
        (None, _) => out.push("pids: unlimited".into()),
        (Some(_), Some(h)) => out.push(h),
        (Some(n), None) if root => out.push(format!(
            "pids {n}: NOT enforced (no cgroup, and the kernel exempts root from RLIMIT_NPROC)"
        )),
        (Some(n), None) => out.push(format!(
            "pids {n}: RLIMIT_NPROC in the sandbox's user namespace (not on the Landlock-only \
             fallback, where it would count all your processes)"
        )),
    }
    match (r.memory_bytes, has("memory")) {
        (None, _) => out.push("memory: unlimited".into()),
        (Some(_), Some(h)) => out.push(h),
        (Some(b), None) => out.push(format!(
            "memory {b} bytes: RLIMIT_DATA per process (no cgroup)"
        )),
    }
    out.push(match r.tmpfs_bytes {
        Some(b) => format!("tmpfs {b} bytes: size= of the private /tmp and /dev/shm"),
        None => "tmpfs: kernel default (half of RAM)".into(),
    });
    out.push(match r.open_files {
        Some(n) => format!("open files {n}: RLIMIT_NOFILE"),
        None => "open files: inherited".into(),
    });
    out.push(match r.cpu_seconds {
        Some(s) => format!("cpu time {s} s: RLIMIT_CPU per process"),
        None => "cpu time: unlimited".into(),
    });
    out.push(match r.timeout_ms {
        Some(ms) => format!("timeout {ms} ms: watchdog kills the pid namespace"),
        None => "timeout: none".into(),
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Leaked cgroups of dead helpers are removed (470 had piled up on a test machine, and
    /// a reused pid's name collision ran a command without its pids limit); a live
    /// helper's, a fresh one whose pid is not visible here (a run in another pid
    /// namespace, between creating its cgroup and moving in) and anything not ours are
    /// left alone.
    #[test]
    fn sweep_removes_only_dead_helpers_cgroups() {
        let d = tempfile::tempdir().unwrap();
        let me = std::process::id();
        let long_ago = std::time::SystemTime::now() - 2 * SWEEP_MIN_AGE;
        for (n, old) in [
            ("cordon-999999999-0000abcd".to_string(), true),
            ("cordon-999999998".to_string(), true),
            ("cordon-999999997-00000002".to_string(), false),
            (format!("cordon-{me}-00000001"), true),
            ("cordon-notapid".to_string(), true),
            ("other".to_string(), true),
        ] {
            let p = d.path().join(n);
            std::fs::create_dir(&p).unwrap();
            if old {
                std::fs::File::open(&p)
                    .unwrap()
                    .set_modified(long_ago)
                    .unwrap();
            }
        }
        sweep_dead(d.path());
        let mut left: Vec<String> = std::fs::read_dir(d.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        left.sort();
        let mut want = vec![
            "cordon-999999997-00000002".to_string(),
            format!("cordon-{me}-00000001"),
            "cordon-notapid".to_string(),
            "other".to_string(),
        ];
        want.sort();
        assert_eq!(left, want);
    }
}
