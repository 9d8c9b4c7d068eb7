//! Git-dir sweeps (and fresh-grant settling) a run could not make itself (attack pass 29,
//! F5).
//!
//! A run sweeps its writable git dirs when it is concluded ([`crate::drive::conclude`]),
//! comparing them with its census from before the command started. When the cordon
//! process that owns the run dies first (`kill -9` of `cordon run`, the OOM killer), the
//! sandbox dies with it, but nothing is swept — and the next run's census would list what
//! the killed command planted as "there before", keeping it for good.
//!
//! So each run records its census, before the command starts, in a file of the user's
//! state directory (`$XDG_STATE_HOME/cordon/sweeps/`, else
//! `~/.local/state/cordon/sweeps/`; cordon's state directory is protected from every
//! sandboxed command whatever its writable roots, like its configuration) named after its process and run, and removes it once swept. Every run first
//! finishes the records whose process is gone (its pid no longer runs the same process:
//! start time compared), sweeping against the census the dead run took, and reports what
//! that removed as an earlier run's ([`Swept::earlier_run`]).
//!
//! Without a state directory (no `HOME`), or when a record cannot be written, the run goes
//! on (its own sweep at the end still happens); the gap is the killed-owner case only.
//!
//! # When the killed run ended (attack pass 219 #3, 229 #1)
//!
//! Once its command is started ([`command_started`]) and until it is concluded, a run keeps
//! its record's modification time fresh — a [`HEARTBEAT`] thread touches it every second,
//! and once more when it stops — and marks the record so (`"heartbeat_ms"`, written only
//! once the thread runs: a record without it, or of an older cordon, gets no end). The run
//! that finishes the record takes the killed run's command as gone by the record's
//! modification time plus [`HEARTBEAT`] and [`OUTLIVES`] ([`end_of`]), and a stale
//! `config.lock` born later is the host git's: left (`Census::ended_ns`). The thread is
//! started only after the helper is spawned, so the helper's single-threaded fork (issue
//! 12) is kept.
//!
//! Only that lock is judged by the end: the git dir's other entries and the paths kept
//! absent are removed whatever their birth (fails closed), so a user's own link made in
//! `.git` after a `kill -9` is removed too. The heartbeat stops with a *stopped* cordon
//! process (Ctrl-Z, which its command's `setsid` child escapes; `kill -STOP`) while that
//! child still runs: what it planted after the last touch would have been taken for the
//! host's (attack pass 229 #1: a `.git/logs` symlink and a `~/.profile` were left). A late
//! lock the command made only jams git. A heartbeat that ends only with the sandbox (from
//! the helper, whose death takes the sandbox down) would make the end sound for the rest.
//!
//! How long a sandbox outlives its killed cordon process: the helper gets `SIGKILL` when
//! cordon dies (`PR_SET_PDEATHSIG`), the sandbox's init (pid 1 of its pid namespace) when
//! the helper dies, and the kernel kills every process of a pid namespace whose init died;
//! rung 2's supervisor kills every descendant; through `cordon serve` the handler ends the
//! run when the client hangs up. Measured (`kill -9` of `cordon run` whose command appended
//! a timestamp to a file in a loop): the last line was written at most 14 ms after the
//! kill, cold path and server alike; [`OUTLIVES`] allows two seconds. The record is in
//! cordon's state directory, which no sandboxed command can write, and a birth time cannot
//! be set by anyone; a filesystem without birth times leaves the lock to be removed.

use cordon_sandbox::git_dir_sweep::{
    clear_killed_runs_config_lock, settle_fresh_roots, sweep, Census, Swept,
};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, SystemTime};

/// How often a run's record is touched while its command may run.
pub(crate) const HEARTBEAT: Duration = Duration::from_secs(1);
/// How long after its cordon process died a sandbox may still make an entry: the kernel's
/// teardown (measured at most 14 ms), a system call that was under way, a late touch of
/// the record, the coarse clock of file times.
const OUTLIVES: Duration = Duration::from_secs(2);

/// `$XDG_STATE_HOME/cordon/sweeps` or `~/.local/state/cordon/sweeps`.
fn dir() -> Option<PathBuf> {
    crate::cache::state_dir().map(|p| p.join("sweeps"))
}

/// The start time of process `pid` (field 22 of `/proc/PID/stat`, clock ticks since
/// boot): with the pid, what names one process over its life (a pid is reused). `None`
/// for a process that has ended but is not reaped yet (state `Z` or `X`): it runs no
/// more code (attack pass 41: the run right after a `kill -9` of `cordon run` took the
/// unreaped owner for a live one and left its sweep for later).
fn start_time(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) is in parentheses and may hold spaces: fields after the
    // last `)`.
    let rest = &stat[stat.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace();
    if matches!(fields.next(), Some("Z" | "X")) {
        return None;
    }
    fields.nth(18)?.parse().ok()
}

/// A run's record ([`record`]) until its sweep: removed when dropped, unless
/// [`SweepRecord::into_path`] took it first (the run's command may have run; [`conclude`]
/// decides from its sweep). A run refused after its census was taken (the harness's cwd
/// re-check, a terminal that could not be opened) ran nothing, so nothing is left to sweep:
/// its record went nowhere before and piled up once its process ended — a record whose git
/// dir is gone is kept a week for a moved project, and every later run read and claimed
/// each of them (measured: 396 such records made `cordon run -- true` 26 ms instead of 11).
///
/// [`conclude`]: crate::drive::conclude
#[derive(Debug)]
pub(crate) struct SweepRecord {
    path: Option<PathBuf>,
    /// Its heartbeat ([`command_started`]), stopped when the record is taken or dropped.
    beat: Option<Arc<Mutex<Beat>>>,
}

impl SweepRecord {
    /// The record's path, while it is the attempt's.
    pub(crate) fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// The record's path, now the caller's to remove ([`done`]) once swept; its heartbeat
    /// stopped, the record touched a last time (the command is over).
    pub(crate) fn into_path(mut self) -> PathBuf {
        self.stop();
        self.path.take().unwrap_or_default()
    }

    fn stop(&mut self) {
        if let Some(b) = self.beat.take() {
            if let Ok(mut b) = b.lock() {
                b.stop();
            }
        }
    }
}

impl Drop for SweepRecord {
    fn drop(&mut self) {
        self.stop();
        if let Some(p) = self.path.take() {
            done(&p);
        }
    }
}

/// A record's heartbeat: what [`command_started`] needs to start it, then the running
/// thread.
#[derive(Debug)]
struct Beat {
    path: PathBuf,
    /// The record's content (marked `"heartbeat_ms"` once the thread runs).
    body: serde_json::Value,
    /// Told to stop by dropping the sender; touches the record a last time then.
    thread: Option<(std::sync::mpsc::Sender<()>, std::thread::JoinHandle<()>)>,
    /// Stopped (or never to be started): not started again.
    over: bool,
}

/// The heartbeats of records written but not yet started ([`command_started`]).
static ARMED: Mutex<Vec<Weak<Mutex<Beat>>>> = Mutex::new(Vec::new());

impl Beat {
    /// Rewrites the record marked as kept fresh, then touches it every [`HEARTBEAT`] from a
    /// thread until [`Beat::stop`]. Nothing when the mark cannot be written (the record
    /// then gets no end: judged as before).
    fn start(&mut self) {
        if self.over || self.thread.is_some() {
            return;
        }
        let mut body = self.body.clone();
        body["heartbeat_ms"] = serde_json::json!(HEARTBEAT.as_millis() as u64);
        let Some(file) = write_atomically(&self.path, &body) else {
            return;
        };
        let (tx, rx) = std::sync::mpsc::channel::<()>();
        let (path, unmarked) = (self.path.clone(), self.body.clone());
        let spawned = std::thread::Builder::new()
            .name("cordon-sweep-heartbeat".into())
            .spawn(move || loop {
                let stop = !matches!(
                    rx.recv_timeout(HEARTBEAT),
                    Err(std::sync::mpsc::RecvTimeoutError::Timeout)
                );
                if file.set_modified(SystemTime::now()).is_err() {
                    // The record can no longer say how long the run lived: unmarked, so
                    // the run finishing it takes every new entry for the command's.
                    let _ = write_atomically(&path, &unmarked);
                    return;
                }
                if stop {
                    return;
                }
            });
        match spawned {
            Ok(h) => self.thread = Some((tx, h)),
            // No thread: unmarked again (fails closed).
            Err(_) => {
                let _ = write_atomically(&self.path, &self.body);
            }
        }
    }

    /// Stops the heartbeat, which touches the record a last time; never started again.
    fn stop(&mut self) {
        self.over = true;
        if let Some((tx, h)) = self.thread.take() {
            drop(tx);
            let _ = h.join();
        }
    }
}

/// Writes `body` to `path` by a temporary file renamed over it: the file written, open.
fn write_atomically(path: &Path, body: &serde_json::Value) -> Option<std::fs::File> {
    use std::io::Write as _;
    let name = path.file_name()?.to_string_lossy();
    let tmp = path.with_file_name(format!(".{name}.tmp"));
    let mut f = std::fs::File::create(&tmp).ok()?;
    f.write_all(&serde_json::to_vec(body).ok()?).ok()?;
    std::fs::rename(&tmp, path).ok()?;
    Some(f)
}

/// Called once a run's command may be running (its helper spawned; [`crate::runner`]):
/// starts the heartbeat of every record written and not started yet ([`Beat::start`]). A
/// record of a run that has not spawned yet (another session of a harness) is started
/// early, which only makes its end later. Not before the spawn: the helper is forked from
/// a single-threaded process (issue 12).
pub(crate) fn command_started() {
    let armed = match ARMED.lock() {
        Ok(mut a) => std::mem::take(&mut *a),
        Err(_) => return,
    };
    for b in armed.iter().filter_map(Weak::upgrade) {
        if let Ok(mut b) = b.lock() {
            b.start();
        }
    }
}

/// When the run of the record `v`, whose owner is gone, had no process left at the latest
/// (nanoseconds since the epoch): its modification time `modified` plus [`HEARTBEAT`] and
/// [`OUTLIVES`], for a record kept fresh (`"heartbeat_ms"`); `None` for another.
fn end_of(v: &serde_json::Value, modified: SystemTime) -> Option<i128> {
    let every = Duration::from_millis(v["heartbeat_ms"].as_u64()?);
    let last = modified.duration_since(std::time::UNIX_EPOCH).ok()?;
    i128::try_from((last + every.max(HEARTBEAT) + OUTLIVES).as_nanos()).ok()
}

/// Records `census` and `fresh_roots` (the directories this run creates for writable
/// grants, settled after it: [`settle_fresh_roots`]) for the run `run_id` of this process:
/// the record, removed when dropped unless the run takes its path to remove once swept.
/// `None`: nothing to record, or it could not be written.
pub(crate) fn record(
    run_id: &str,
    census: &[Census],
    fresh_roots: &[PathBuf],
) -> Option<SweepRecord> {
    if census.is_empty() && fresh_roots.is_empty() {
        return None;
    }
    // A path that is not UTF-8 has no JSON spelling (`json!` would panic): no record.
    let fresh_roots = serde_json::to_value(fresh_roots).ok()?;
    let dir = dir()?;
    std::fs::create_dir_all(&dir).ok()?;
    let pid = std::process::id();
    let v = serde_json::json!({
        "pid": pid,
        "start": start_time(pid),
        "census": census.iter().map(Census::to_json).collect::<Vec<_>>(),
        "fresh_roots": fresh_roots,
    });
    let path = dir.join(format!("{pid}-{run_id}.json"));
    write_atomically(&path, &v)?;
    let beat = Arc::new(Mutex::new(Beat {
        path: path.clone(),
        body: v,
        thread: None,
        over: false,
    }));
    if let Ok(mut a) = ARMED.lock() {
        a.retain(|w| w.strong_count() > 0);
        a.push(Arc::downgrade(&beat));
    }
    Some(SweepRecord {
        path: Some(path),
        beat: Some(beat),
    })
}

/// Removes a record made by [`record`] (its run was swept).
pub(crate) fn done(path: &Path) {
    let _ = std::fs::remove_file(path);
}

/// How long a record whose git dir is not at its path any more is kept for a later run to
/// find it by identity (a project renamed or moved while its run's owner was killed).
const KEEP_MOVED: std::time::Duration = std::time::Duration::from_secs(7 * 24 * 3600);

/// Finishes the sweeps of runs whose cordon process is gone: each such record's censuses
/// swept — a git dir no longer at its path where `candidates` (the git dirs of the run
/// about to start) hold it by identity ([`Census::relocated`]) — the record removed. What
/// they found, marked as earlier runs'.
pub(crate) fn finish_orphans(candidates: &[PathBuf]) -> Vec<Swept> {
    // Records in a state directory a variable puts inside a project may be forged by a
    // run that did not protect it: never acted on (attack pass 154, F2). The CLI refuses
    // such a run before this ([`crate::trust::own_dirs_refusal`]); a harness is kept from
    // acting on them here.
    // A judgement that passed with a workspace moments ago (`cordon run`'s, before the
    // command was resolved) is taken (issue 12).
    let judged = crate::trust::own_dirs_passed_within(std::time::Duration::from_millis(50));
    let refused = if judged {
        Ok(())
    } else {
        crate::trust::own_dirs_refusal(None)
    };
    if let Err(why) = refused {
        tracing::warn!(%why, "pending sweep records not read");
        return Vec::new();
    }
    match dir() {
        Some(dir) => finish_orphans_in(candidates, &dir),
        None => Vec::new(),
    }
}

/// Drops from `s.left_locks` the lock files that may belong to something still running:
/// any, when another live cordon run (by its sweep record, other than `own`) took a census
/// of the same git dir — its command may be in the middle of a git command —; else each
/// lock a process has open now (a host git at work). What is left is a lock no one holds:
/// the run's own, left by a git it stopped (new-user pass 237 #1: a run named, with `rm
/// -f`, the `index.lock` of a concurrent run). Only looked at when there is one.
pub(crate) fn keep_unheld_locks(s: &mut Swept, own: Option<&Path>) {
    if s.left_locks.is_empty() {
        return;
    }
    if another_live_run_on(&s.git_dir, own) {
        s.left_locks.clear();
        return;
    }
    s.left_locks
        .retain(|l| !cordon_sandbox::hostfs::open_by_any_process(l));
}

/// Whether a cordon run running now recorded a census of `git_dir` (its sweep record in
/// [`dir`], other than `own`; a run of this process counts too: `cordon mcp` runs several).
fn another_live_run_on(git_dir: &Path, own: Option<&Path>) -> bool {
    dir().is_some_and(|d| another_live_run_in(&d, git_dir, own))
}

/// [`another_live_run_on`] with the records in `dir`.
fn another_live_run_in(dir: &Path, git_dir: &Path, own: Option<&Path>) -> bool {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return false;
    };
    entries.flatten().any(|e| {
        let p = e.path();
        if p.extension().is_none_or(|x| x != "json") || Some(p.as_path()) == own {
            return false;
        }
        let Ok(text) = cordon_sandbox::hostfs::read_small_file(&p, 16 * 1024 * 1024) else {
            return false;
        };
        let Ok(v) = serde_json::from_str::<serde_json::Value>(&text) else {
            return false;
        };
        alive(v["pid"].as_u64().unwrap_or(0) as u32, v["start"].as_u64())
            && v["census"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|c| c["git_dir"].as_str().map(Path::new) == Some(git_dir))
    })
}

/// Whether process `pid` that started at `start` (clock ticks since boot) still runs.
fn alive(pid: u32, start: Option<u64>) -> bool {
    let started = (pid != 0).then(|| start_time(pid)).flatten();
    started.is_some() && started == start
}

/// Who claimed a record (`<name>.claimed-<pid>-<start>`): `None` for another file, `Some(None)`
/// for a claim that names nobody (`<name>.claimed`, cordon before this rule).
fn claimer(path: &Path) -> Option<Option<(u32, u64)>> {
    let ext = path.extension()?.to_str()?;
    let rest = ext.strip_prefix("claimed")?;
    if rest.is_empty() {
        return Some(None);
    }
    let (pid, start) = rest.strip_prefix('-')?.split_once('-')?;
    Some(Some((pid.parse().ok()?, start.parse().ok()?)))
}

/// A record kept only for git dirs that are gone from their paths ([`KEEP_MOVED`]) is
/// parked under a name that says until when (seconds since the epoch) and which git dirs
/// (device, inode) it waits for: `<run>.parked-<until>-<dev>_<ino>[-<dev>_<ino>…]`. Later
/// runs read it only when one of their own git dirs has such an identity, and remove it
/// past `until`, from its name alone: a directory of them costs a run one listing, not a
/// read, two renames and a path walk each (issue 12: 396 records of deleted temporary
/// projects made every `cordon run` 15 ms slower).
fn parked_name(stem: &str, until: u64, ids: &[(u64, u64)]) -> String {
    let ids: Vec<String> = ids.iter().map(|(d, i)| format!("{d}_{i}")).collect();
    format!("{stem}.parked-{until}-{}", ids.join("-"))
}

/// What a parked record's name says ([`parked_name`]): until when, and the identities.
/// `None` for another name.
fn parked(path: &Path) -> Option<(u64, Vec<(u64, u64)>)> {
    let ext = path.extension()?.to_str()?;
    let mut parts = ext.strip_prefix("parked-")?.split('-');
    let until = parts.next()?.parse().ok()?;
    let ids = parts
        .map(|p| {
            let (d, i) = p.split_once('_')?;
            Some((d.parse().ok()?, i.parse().ok()?))
        })
        .collect::<Option<Vec<_>>>()?;
    Some((until, ids))
}

/// Seconds since the epoch of `t`.
fn epoch_secs(t: std::time::SystemTime) -> u64 {
    t.duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// [`finish_orphans`] in the records directory `dir`.
fn finish_orphans_in(candidates: &[PathBuf], dir: &Path) -> Vec<Swept> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let me = std::process::id();
    let my_claim = format!("claimed-{me}-{}", start_time(me).unwrap_or(0));
    let now = epoch_secs(std::time::SystemTime::now());
    // The identities of this run's git dirs, looked up once when a parked record is met (a
    // first filter; [`Census::relocated`] checks again without following a link).
    let mut own_ids: Option<Vec<(u64, u64)>> = None;
    let mut out = Vec::new();
    for e in entries.flatten() {
        let path = e.path();
        let parked_until = parked(&path);
        if let Some((until, ids)) = &parked_until {
            let until = *until;
            if now > until {
                let _ = std::fs::remove_file(&path);
                continue;
            }
            let own = own_ids.get_or_insert_with(|| {
                use std::os::unix::fs::MetadataExt;
                candidates
                    .iter()
                    .filter_map(|c| std::fs::symlink_metadata(c).ok())
                    .map(|m| (m.dev(), m.ino()))
                    .collect()
            });
            if !ids.iter().any(|id| own.contains(id)) {
                continue;
            }
        }
        let record = path.extension().is_some_and(|x| x == "json") || parked_until.is_some();
        // A claim whose claimer is gone (it crashed while finishing the record) is an
        // orphan record again (attack pass 30: a `.claimed` file was never retried).
        let orphan_claim = match claimer(&path) {
            Some(Some((pid, start))) => !alive(pid, Some(start)),
            Some(None) => true,
            None => false,
        };
        if !record && !orphan_claim {
            continue;
        }
        let Ok(bytes) = std::fs::read(&path) else {
            continue;
        };
        let Ok(v) = serde_json::from_slice::<serde_json::Value>(&bytes) else {
            let _ = std::fs::remove_file(&path);
            continue;
        };
        if record && alive(v["pid"].as_u64().unwrap_or(0) as u32, v["start"].as_u64()) {
            continue; // its own run sweeps it
        }
        // Claimed by renaming, under this process's name (two runs starting at once
        // finish it once; one that dies midway leaves a claim the next run takes over).
        let claimed = path.with_extension(&my_claim);
        if std::fs::rename(&path, &claimed).is_err() {
            continue;
        }
        let path = path.with_extension("json");
        let modified = std::fs::metadata(&claimed).and_then(|m| m.modified()).ok();
        // Young enough to wait for a run in a project that moved with its git dir.
        let young = modified
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|age| age < KEEP_MOVED);
        // When its sandbox was gone: what was born later is the host's (attack pass 219 #3).
        let ended_ns = modified.and_then(|m| end_of(&v, m));
        let mut finished = true;
        // Not finished only because these git dirs moved away (young): parked.
        let mut waits_for = Vec::new();
        let mut only_moved = true;
        let mut known = Vec::new();
        for c in v["census"].as_array().into_iter().flatten() {
            let Some(census) = Census::from_json(c.clone()) else {
                continue;
            };
            // Where its git dir is now, when the run about to start holds it under another
            // name (attack pass 188 F1: the project was renamed).
            let mut census = census.relocated(candidates).unwrap_or(census);
            known.push(census.git_dir.clone());
            let mut s = match sweep(&census) {
                Ok(s) => s,
                Err(e) => Swept::failed(&census, e.to_string()),
            };
            // Gone from its path but known by identity: kept a while for the run in the
            // project it moved with, which finds it among its own git dirs.
            let moved_away = census.identity.is_some() && git_dir_gone(&s);
            finished &= swept_whole(&s) && !(moved_away && young);
            match census.identity {
                Some(id) if moved_away && young => waits_for.push(id),
                _ => only_moved &= swept_whole(&s),
            }
            s.earlier_run = true;
            // The `config.lock` its command left (attack pass 212 #1: a `git config` whose
            // run was killed jammed every later config write, on the host too): its helper
            // would have removed it; removed now when provably that run's.
            // The end bounds only this (a lock left by the host's git after the kill is
            // the host's): a lock the command made late jams git, it runs nothing.
            if s.error.is_none() {
                census.ended_ns = ended_ns;
                s.config_lock = clear_killed_runs_config_lock(&census);
            }
            // A git dir removed since (a project deleted, a temporary directory gone):
            // nothing is left there for git to use, and nothing to say.
            keep_unheld_locks(&mut s, None);
            if !s.is_empty() && !git_dir_gone(&s) {
                out.push(s);
            }
        }
        // The grants the dead run created: a repository or project marker its command made
        // there is moved aside as its own run would have (attack pass 40, D1; a killed run
        // left them to the host's git).
        let fresh: Vec<PathBuf> =
            serde_json::from_value(v["fresh_roots"].clone()).unwrap_or_default();
        for mut s in settle_fresh_roots(&fresh, &known, true) {
            s.earlier_run = true;
            out.push(s);
        }
        // Not finished (a directory still unreadable): kept for the next run; waiting only
        // for git dirs gone from their paths: parked until its week is over.
        let born = modified.map(epoch_secs).unwrap_or(now);
        let _ = if finished {
            std::fs::remove_file(&claimed)
        } else if only_moved && !waits_for.is_empty() {
            let stem = path.file_stem().unwrap_or_default().to_string_lossy();
            let until = born.saturating_add(KEEP_MOVED.as_secs());
            let name = parked_name(&stem, until, &waits_for);
            // A name too long for the filesystem (many git dirs): read by every run.
            std::fs::rename(
                &claimed,
                if name.len() <= 255 {
                    dir.join(name)
                } else {
                    path
                },
            )
        } else {
            std::fs::rename(&claimed, &path)
        };
    }
    out
}

/// Whether `s` looked at its whole git dir (or the git dir is gone): only then may its
/// census be dropped. A sweep a command cut short (`chmod 000 .git/logs` over a planted
/// link) keeps the census, so the run after the directory is readable again removes the
/// link instead of listing it as "there before" (new-user pass nu13, HIGH).
pub(crate) fn swept_whole(s: &Swept) -> bool {
    git_dir_gone(s) || (s.error.is_none() && s.complete())
}

/// Whether the sweep `s` could not open its git dir because nothing is there any more.
fn git_dir_gone(s: &Swept) -> bool {
    s.error.is_some()
        && std::fs::symlink_metadata(&s.git_dir)
            .is_err_and(|e| e.kind() == std::io::ErrorKind::NotFound)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// nu13 HIGH: a census is dropped only after a whole sweep (or when its git dir is
    /// gone); a sweep cut short, or one that could not open an existing git dir, keeps it.
    #[test]
    fn a_census_is_kept_until_its_git_dir_was_swept_whole() {
        let t = tempfile::tempdir().unwrap();
        let whole = Swept {
            git_dir: t.path().to_path_buf(),
            ..Swept::default()
        };
        assert!(swept_whole(&whole));
        let cut = Swept {
            incomplete: Some("logs cannot be read".into()),
            ..whole.clone()
        };
        assert!(!swept_whole(&cut));
        let unopened = Swept {
            error: Some("permission denied".into()),
            ..whole.clone()
        };
        assert!(!swept_whole(&unopened), "the git dir is there: keep");
        let gone = Swept {
            git_dir: t.path().join("removed"),
            error: Some("no such file".into()),
            ..Swept::default()
        };
        assert!(
            swept_whole(&gone),
            "the git dir is gone: nothing left to sweep"
        );
    }

    /// Attack pass 30 (minor): a record claimed by a run that died while finishing it
    /// (`<name>.claimed-<pid>-<start>` of a process that is gone, or the old unnamed
    /// `.claimed`) is finished by the next run; a live claimer's is left to it.
    #[test]
    fn a_claim_whose_claimer_died_is_finished_by_the_next_run() {
        let t = tempfile::tempdir().unwrap();
        let gone_git = t.path().join("gone/.git");
        let census = Census::kept_absent_only(gone_git, Vec::new()).to_json();
        let body = serde_json::json!({"pid": u32::MAX - 1, "start": 1, "census": [census]});
        let me = std::process::id();
        let dead = t.path().join(format!("1-r1.claimed-{}-7", u32::MAX - 1));
        let legacy = t.path().join("2-r2.claimed");
        let live = t
            .path()
            .join(format!("3-r3.claimed-{me}-{}", start_time(me).unwrap()));
        for p in [&dead, &legacy, &live] {
            std::fs::write(p, serde_json::to_vec(&body).unwrap()).unwrap();
        }
        finish_orphans_in(&[], t.path());
        assert!(!dead.exists() && !legacy.exists(), "finished and removed");
        assert!(live.exists(), "a live claimer's record is its own");
        let left: Vec<_> = std::fs::read_dir(t.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(left.len(), 1, "{left:?}");
    }

    /// A record whose git dir was removed since (its project deleted) is not reported
    /// (the next run printed "could not look at …/.git after the run" once per such
    /// record), and is dropped once older than [`KEEP_MOVED`] — until then a later run may
    /// find it moved (below). Twin: a git dir still there is swept and reported when
    /// something was left in it.
    #[test]
    fn a_record_of_a_removed_git_dir_is_dropped_silently() {
        let t = tempfile::tempdir().unwrap();
        let records = t.path().join("records");
        std::fs::create_dir_all(&records).unwrap();
        let [gone, kept] = ["gone", "kept"].map(|n| t.path().join(n).join(".git"));
        for g in [&gone, &kept] {
            std::fs::create_dir_all(g.join("refs")).unwrap();
        }
        let write = |name: &str, g: &Path| {
            let census = cordon_sandbox::git_dir_sweep::census(g).unwrap().to_json();
            let body = serde_json::json!({"pid": u32::MAX - 1, "start": 1, "census": [census]});
            std::fs::write(records.join(name), serde_json::to_vec(&body).unwrap()).unwrap();
        };
        write("1-a.json", &gone);
        write("2-b.json", &kept);
        std::fs::remove_dir_all(t.path().join("gone")).unwrap();
        std::os::unix::fs::symlink("/etc/passwd", kept.join("refs/x")).unwrap();
        let out = finish_orphans_in(&[], &records);
        assert_eq!(out.len(), 1, "{out:?}");
        assert_eq!(out[0].git_dir, kept);
        // The removed one's record waits (young), unsaid, parked until its week is over;
        // once that is past, it is dropped.
        let left: Vec<_> = std::fs::read_dir(&records).unwrap().flatten().collect();
        assert_eq!(left.len(), 1, "{left:?}");
        let (until, ids) = parked(&left[0].path()).expect("parked");
        let now = epoch_secs(std::time::SystemTime::now());
        assert!(
            until > now && until <= now + KEEP_MOVED.as_secs(),
            "{until}"
        );
        assert_eq!(ids.len(), 1);
        let past = records.join(parked_name("1-a", now - 60, &ids));
        std::fs::rename(left[0].path(), &past).unwrap();
        assert!(finish_orphans_in(&[], &records).is_empty());
        assert_eq!(std::fs::read_dir(&records).unwrap().count(), 0);
    }

    /// Issue 12: a parked record (its git dirs gone from their paths) is not read by a run
    /// none of whose git dirs has its identity — 396 of them made every run 15 ms slower —
    /// and is read by one that has (twin: a garbage record under a parked name is removed
    /// once read, left while not).
    #[test]
    fn a_parked_record_is_read_only_by_a_run_with_its_git_dir() {
        use std::os::unix::fs::MetadataExt;
        let t = tempfile::tempdir().unwrap();
        let records = t.path().join("records");
        std::fs::create_dir_all(&records).unwrap();
        let git = t.path().join("p/.git");
        std::fs::create_dir_all(&git).unwrap();
        let m = std::fs::metadata(&git).unwrap();
        let until = epoch_secs(std::time::SystemTime::now()) + 3600;
        let p = records.join(parked_name("9-z", until, &[(m.dev(), m.ino())]));
        std::fs::write(&p, b"not json").unwrap();
        assert!(finish_orphans_in(&[t.path().join("elsewhere/.git")], &records).is_empty());
        assert!(p.exists(), "read by a run without its git dir");
        finish_orphans_in(std::slice::from_ref(&git), &records);
        assert!(!p.exists(), "not read by the run with its git dir");
        assert_eq!(
            parked_name("1-run-ab-3", 17, &[(1, 2), (3, 4)]),
            "1-run-ab-3.parked-17-1_2-3_4"
        );
        assert_eq!(
            parked(Path::new("/x/1-run-ab-3.parked-17-1_2-3_4")),
            Some((17, vec![(1, 2), (3, 4)]))
        );
        assert_eq!(parked(Path::new("/x/1-run-ab-3.json")), None);
    }

    /// Issue 12: a record whose run never started its command (refused after the census,
    /// the harness's cwd re-check) is removed when dropped; one the run took to sweep is
    /// left for it.
    /// New-user pass 237 #1: a lock file another live run may be using is not named as
    /// this run's: a record of a live run (this process, with its start time) on the same
    /// git dir counts; the run's own record, a dead run's and another git dir's do not.
    #[test]
    fn a_live_run_on_the_same_git_dir_is_found_by_its_record() {
        let t = tempfile::tempdir().unwrap();
        let git = t.path().join("p/.git");
        let me = std::process::id();
        let write = |name: &str, pid: u32, start: Option<u64>, g: &Path| {
            let p = t.path().join(name);
            let body = serde_json::json!({"pid": pid, "start": start,
                "census": [{"git_dir": g}]});
            std::fs::write(&p, serde_json::to_vec(&body).unwrap()).unwrap();
            p
        };
        let own = write("1-own.json", me, start_time(me), &git);
        write("2-dead.json", u32::MAX - 1, Some(1), &git);
        write("3-other.json", me, start_time(me), &t.path().join("q/.git"));
        assert!(!another_live_run_in(t.path(), &git, Some(&own)));
        write("4-live.json", me, start_time(me), &git);
        assert!(another_live_run_in(t.path(), &git, Some(&own)));
    }

    #[test]
    fn a_record_is_removed_when_its_run_never_started() {
        let t = tempfile::tempdir().unwrap();
        let [a, b] = ["a.json", "b.json"].map(|n| t.path().join(n));
        for p in [&a, &b] {
            std::fs::write(p, b"{}").unwrap();
        }
        drop(SweepRecord {
            path: Some(a.clone()),
            beat: None,
        });
        assert!(!a.exists());
        let taken = SweepRecord {
            path: Some(b.clone()),
            beat: None,
        }
        .into_path();
        assert_eq!(taken, b);
        assert!(b.exists());
    }

    /// Attack pass 188 F1: a run killed before its sweep, and its project renamed: the
    /// next run in the renamed project finds the recorded git dir among its own by
    /// identity and removes the link the killed run's command planted, instead of taking
    /// it for "there before".
    #[test]
    fn a_record_of_a_renamed_project_is_swept_where_it_is_now() {
        let t = tempfile::tempdir().unwrap();
        let records = t.path().join("records");
        std::fs::create_dir_all(&records).unwrap();
        let git = t.path().join("w4/.git");
        std::fs::create_dir_all(git.join("logs")).unwrap();
        let census = cordon_sandbox::git_dir_sweep::census(&git)
            .unwrap()
            .to_json();
        let body = serde_json::json!({"pid": u32::MAX - 1, "start": 1, "census": [census]});
        std::fs::write(records.join("1-a.json"), serde_json::to_vec(&body).unwrap()).unwrap();
        std::os::unix::fs::symlink("/etc/passwd", git.join("logs/HEAD")).unwrap();
        std::fs::rename(t.path().join("w4"), t.path().join("w4moved")).unwrap();
        let moved = t.path().join("w4moved/.git");
        // A run elsewhere does not find it: kept.
        assert!(finish_orphans_in(&[], &records).is_empty());
        assert_eq!(std::fs::read_dir(&records).unwrap().count(), 1);
        let out = finish_orphans_in(std::slice::from_ref(&moved), &records);
        assert_eq!(out.len(), 1, "{out:?}");
        assert_eq!(out[0].git_dir, moved);
        assert!(
            std::fs::symlink_metadata(moved.join("logs/HEAD")).is_err(),
            "the planted link is still there"
        );
        assert_eq!(std::fs::read_dir(&records).unwrap().count(), 0);
    }

    /// Attack pass 212 #1: a `config.lock` a killed run's command left (made after its
    /// census, not written since, open by no process) is removed by the run that finishes
    /// its sweep, and said; twins: one that was there at the census, and one a process
    /// (a host git) holds open right now, are left — the held one said, the other not.
    #[test]
    fn a_config_lock_a_killed_run_left_is_removed_by_the_next_run() {
        let t = tempfile::tempdir().unwrap();
        let records = t.path().join("records");
        std::fs::create_dir_all(&records).unwrap();
        let [left, before, held] =
            ["left", "before", "held"].map(|n| t.path().join(n).join(".git"));
        for g in [&left, &before, &held] {
            std::fs::create_dir_all(g.join("refs")).unwrap();
            std::fs::write(g.join("config"), "[core]\n").unwrap();
        }
        std::fs::write(before.join("config.lock"), "user's").unwrap();
        let census: Vec<_> = [&left, &before, &held]
            .iter()
            .map(|g| cordon_sandbox::git_dir_sweep::census(g).unwrap().to_json())
            .collect();
        let body = serde_json::json!({"pid": u32::MAX - 1, "start": 1, "census": census});
        std::fs::write(records.join("1-a.json"), serde_json::to_vec(&body).unwrap()).unwrap();
        // The killed run's command: `: > .git/config.lock` (its mtime set back past the
        // settle time, as a lock left seconds ago).
        let old = std::time::SystemTime::now() - std::time::Duration::from_secs(5);
        for g in [&left, &held] {
            let f = std::fs::File::create(g.join("config.lock")).unwrap();
            f.set_modified(old).unwrap();
        }
        std::fs::File::options()
            .write(true)
            .open(before.join("config.lock"))
            .unwrap()
            .set_modified(old)
            .unwrap();
        // A host git holding its lock open right now.
        let _open = std::fs::File::open(held.join("config.lock")).unwrap();
        let out = finish_orphans_in(&[], &records);
        assert!(
            std::fs::symlink_metadata(left.join("config.lock")).is_err(),
            "the killed run's lock is still there: {out:?}"
        );
        assert!(
            before.join("config.lock").exists(),
            "the lock there before was removed"
        );
        assert!(
            held.join("config.lock").exists(),
            "a lock held open was removed"
        );
        let lock = |g: &Path| {
            out.iter()
                .find(|s| s.git_dir == *g)
                .and_then(|s| s.config_lock.clone())
        };
        let (removed, note) = lock(&left).expect("the removal is said");
        assert!(removed && note.contains("removed the lock"), "{note}");
        assert!(note.contains("left/.git/config.lock"), "{note}");
        assert_eq!(
            lock(&before),
            None,
            "nothing is said of a lock there before"
        );
        let (removed, note) = lock(&held).expect("the held lock is said");
        assert!(!removed && note.contains("left alone"), "{note}");
        assert_eq!(std::fs::read_dir(&records).unwrap().count(), 0);
    }

    /// Whether the filesystem of `dir` keeps birth times (statx `btime`).
    fn keeps_birth_times(dir: &Path) -> bool {
        let probe = dir.join(".btime-probe");
        std::fs::write(&probe, "").unwrap();
        let f = std::fs::File::open(&probe).unwrap();
        let born = f.metadata().unwrap().created().is_ok();
        std::fs::remove_file(probe).unwrap();
        born
    }

    /// A killed run's record kept fresh (`heartbeat_ms`), its last touch `last`, for
    /// the censuses `census` (JSON), in `records`.
    fn heartbeat_record(records: &Path, census: Vec<serde_json::Value>, last: SystemTime) {
        let body = serde_json::json!({
            "pid": u32::MAX - 1, "start": 1, "census": census,
            "heartbeat_ms": HEARTBEAT.as_millis() as u64,
        });
        let p = records.join("1-a.json");
        std::fs::write(&p, serde_json::to_vec(&body).unwrap()).unwrap();
        std::fs::File::options()
            .write(true)
            .open(&p)
            .unwrap()
            .set_modified(last)
            .unwrap();
    }

    /// Attack pass 229 #1: entries born after a killed run's last heartbeat may still be
    /// its command's (cordon was stopped, then killed, while a child its command started
    /// went on): the git dir's entries are removed whatever their birth, and said as the
    /// killed run's — only a stale `config.lock` is judged by the end (below). (The
    /// record's last touch is set back instead of waiting.)
    #[test]
    fn entries_born_after_a_killed_runs_heartbeat_are_still_removed() {
        let t = tempfile::tempdir().unwrap();
        let records = t.path().join("records");
        std::fs::create_dir_all(&records).unwrap();
        let git = t.path().join("p6/.git");
        std::fs::create_dir_all(git.join("logs")).unwrap();
        let census = cordon_sandbox::git_dir_sweep::census(&git)
            .unwrap()
            .to_json();
        std::os::unix::fs::symlink("/etc/passwd", git.join("logs/HEAD")).unwrap();
        std::thread::sleep(Duration::from_millis(30));
        let end = SystemTime::now();
        std::thread::sleep(Duration::from_millis(30));
        // Born after the heartbeat's end.
        std::os::unix::fs::symlink("/etc/passwd", git.join("objects-alias")).unwrap();
        nix::unistd::mkfifo(
            &git.join("hostfifo"),
            nix::sys::stat::Mode::from_bits_truncate(0o600),
        )
        .unwrap();
        heartbeat_record(&records, vec![census], end - HEARTBEAT - OUTLIVES);
        let out = finish_orphans_in(&[], &records);
        assert_eq!(out.len(), 1, "{out:?}");
        assert!(out[0].earlier_run);
        assert_eq!(out[0].removed.len(), 3, "{out:?}");
        for n in ["logs/HEAD", "objects-alias", "hostfifo"] {
            assert!(std::fs::symlink_metadata(git.join(n)).is_err(), "{n}");
        }
        assert_eq!(std::fs::read_dir(&records).unwrap().count(), 0);
    }

    /// Attack pass 219 #3, the `config.lock` twin: a lock born after the killed run's
    /// sandbox was gone (a host git killed meanwhile, or the user's) is left and not
    /// spoken of; one born during the run is removed as a stale lock.
    #[test]
    fn a_config_lock_born_after_a_killed_runs_end_is_left() {
        let t = tempfile::tempdir().unwrap();
        let records = t.path().join("records");
        std::fs::create_dir_all(&records).unwrap();
        let [during, after] = ["during", "after"].map(|n| t.path().join(n).join(".git"));
        for g in [&during, &after] {
            std::fs::create_dir_all(g.join("refs")).unwrap();
            std::fs::write(g.join("config"), "[core]\n").unwrap();
        }
        let census: Vec<_> = [&during, &after]
            .iter()
            .map(|g| cordon_sandbox::git_dir_sweep::census(g).unwrap().to_json())
            .collect();
        let old = SystemTime::now() - Duration::from_secs(5);
        let lock = |g: &Path| {
            let f = std::fs::File::create(g.join("config.lock")).unwrap();
            f.set_modified(old).unwrap(); // not being written
        };
        lock(&during);
        std::thread::sleep(Duration::from_millis(30));
        let end = SystemTime::now();
        std::thread::sleep(Duration::from_millis(30));
        lock(&after);
        heartbeat_record(&records, census, end - HEARTBEAT - OUTLIVES);
        let out = finish_orphans_in(&[], &records);
        assert!(
            std::fs::symlink_metadata(during.join("config.lock")).is_err(),
            "the lock made during the run stayed: {out:?}"
        );
        let note = |g: &Path| {
            out.iter()
                .find(|s| s.git_dir == *g)
                .and_then(|s| s.config_lock.clone())
        };
        assert!(note(&during).is_some_and(|(removed, _)| removed));
        if !keeps_birth_times(&after) {
            return; // judged as before: a stale lock, removed
        }
        assert!(
            after.join("config.lock").exists(),
            "the host's lock was removed"
        );
        assert_eq!(note(&after), None, "{out:?}");
    }

    /// A run's heartbeat: started once the command may run, it marks the record
    /// (`heartbeat_ms`); when the record is taken (the run concluded) it stops and touches
    /// it a last time. A record whose heartbeat never started has no mark (no end).
    #[test]
    fn a_records_heartbeat_marks_it_and_touches_it_at_the_end() {
        let t = tempfile::tempdir().unwrap();
        let p = t.path().join("1-r.json");
        let body = serde_json::json!({"pid": 1, "census": []});
        write_atomically(&p, &body).unwrap();
        let beat = Arc::new(Mutex::new(Beat {
            path: p.clone(),
            body,
            thread: None,
            over: false,
        }));
        ARMED.lock().unwrap().push(Arc::downgrade(&beat));
        let read = || serde_json::from_slice::<serde_json::Value>(&std::fs::read(&p).unwrap());
        assert_eq!(read().unwrap()["heartbeat_ms"], serde_json::Value::Null);
        command_started();
        assert_eq!(read().unwrap()["heartbeat_ms"], 1000);
        assert!(beat.lock().unwrap().thread.is_some());
        let old = SystemTime::now() - Duration::from_secs(600);
        std::fs::File::options()
            .write(true)
            .open(&p)
            .unwrap()
            .set_modified(old)
            .unwrap();
        let r = SweepRecord {
            path: Some(p.clone()),
            beat: Some(beat.clone()),
        };
        assert_eq!(r.into_path(), p);
        let b = beat.lock().unwrap();
        assert!(b.thread.is_none() && b.over);
        let age = std::fs::metadata(&p).unwrap().modified().unwrap().elapsed();
        assert!(
            age.as_ref().is_ok_and(|a| *a < Duration::from_secs(5)),
            "{age:?}"
        );
        let v = read().unwrap();
        let end = end_of(&v, std::fs::metadata(&p).unwrap().modified().unwrap()).unwrap();
        let now = SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos() as i128;
        assert!(end > now && end <= now + 3_100_000_000, "{end} {now}");
        assert_eq!(
            end_of(&serde_json::json!({"pid": 1}), SystemTime::now()),
            None
        );
    }

    /// This process's start time is read, and a pid that does not run has none.
    #[test]
    fn start_times_name_processes() {
        assert!(start_time(std::process::id()).is_some());
        assert!(start_time(u32::MAX - 1).is_none());
        // Attack pass 41: a process that ended but is not reaped yet (a zombie) runs no
        // more: it has no start time, so its records are finished.
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        let t0 = std::time::Instant::now();
        while start_time(pid).is_some() && t0.elapsed().as_secs() < 10 {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        assert!(start_time(pid).is_none(), "the zombie counted as running");
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
        assert!(stat.contains(") Z "), "{stat}");
        child.wait().unwrap();
    }
}
