//! Where earlier sandboxed runs could write, and what they kept read-only there (attack
//! pass 156, H1).
//!
//! cordon trusts some files it reads: its configuration, rules and remembered hosts, its
//! state directory (session answers, the sweep records the next run carries out on the
//! host), and the `--config`/`--rules` files named on the command line. Each run protects
//! the ones *it* knows of (R-P3), but a run that names another place (`$XDG_CONFIG_HOME`,
//! `$XDG_STATE_HOME`, another `$HOME`, `--config FILE`) reads files that an earlier run,
//! which did not know of that place, may have written — in its workspace (marked by a
//! `.git` or not: an unmarked cwd is a workspace too) or under a `-w` grant. A planted
//! `default_profile = "danger-full-access"` then ran the next command unconfined; a forged
//! sweep record made cordon rename host repositories.
//!
//! So every sandboxed run records, before its command starts, its writable roots (the
//! profile's write entries and its copy-on-write cache layers) and the files and
//! directories it kept read-only, in `writable-roots` of cordon's default state directory
//! under `$HOME` and under the account's home (both protected from every run, whatever its
//! environment); a run whose roots cannot be recorded does not start. A trusted path is
//! refused ([`unprotected_writer`]) when a recorded run could write it without having
//! protected it. The records are JSON lines (`{"root": …, "protected": […]}`), one per
//! root (the protection every run with that root gave), pruned of roots that no longer
//! exist (a directory removed takes what was planted in it along; one renamed away and
//! back loses its record), never capped; the file is replaced whole by a rename under a
//! lock file, so a reader needs no lock.
//!
//! Runs of cordon versions before this one left no records; `/tmp` itself is not recorded
//! (the namespace sandbox gives each command a private one; a Landlock-only run, rung 2,
//! writes the host's); paths are compared as spelled after canonicalization, so another
//! name for a root (a bind mount) is not known as it.

use cordon_sandbox::HostFs;
use serde::{Deserialize, Serialize};
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::{Path, PathBuf};

/// The file name, in cordon's default state directory.
const FILE: &str = "writable-roots";

/// One run's writable root and what it kept read-only beneath it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Record {
    root: PathBuf,
    #[serde(default)]
    protected: Vec<PathBuf>,
}

/// The registries: `<home>/.local/state/cordon/writable-roots` for `$HOME` and the
/// account's home (from the user database), each once.
fn registries() -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    let homes = std::env::var_os("HOME")
        .map(PathBuf::from)
        .into_iter()
        .chain(cordon_sandbox::account_home())
        .filter(|h| h.is_absolute());
    for h in homes {
        let p = h.join(".local/state/cordon").join(FILE);
        if !out.contains(&p) {
            out.push(p);
        }
    }
    out
}

/// The records of the registry `path` (none when it does not exist), read as any small
/// host file is ([`cordon_sandbox::hostfs::read_small_file`]: no final symlink followed, no
/// FIFO or device opened).
///
/// Errors: a registry that exists and cannot be read — never taken for an empty one (fail
/// closed: a writer would drop every record, a reader would trust every place).
fn read_records(path: &Path) -> Result<Vec<Record>, String> {
    match cordon_sandbox::hostfs::read_small_file(path, 64 * 1024 * 1024) {
        Ok(s) => Ok(parse(&s)),
        Err(cordon_policy::paths::ReadRefusal::Missing) => Ok(Vec::new()),
        Err(e) => Err(format!("{}: {e:?}", path.display())),
    }
}

fn parse(s: &str) -> Vec<Record> {
    s.lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// Records each of `roots` (a run's writable roots: absolute, canonical) with `protected`
/// (what it kept read-only, as spelled and canonical), in every registry.
///
/// Errors: a registry that exists (or should) and could not be brought up to date — its
/// lock held too long by another process ([`LOCK_WAIT`]: a sandboxed command can lock a
/// file it can read), or an I/O failure. The caller does not run the command then: an
/// unrecorded root is one a later run would trust (fail closed).
pub(crate) fn record(roots: &[PathBuf], protected: &[PathBuf]) -> Result<(), String> {
    // `/tmp` itself is the sandbox's private one; what lies below it is the host's where a
    // run reaches it (a workspace under /tmp: attack pass 158, H3).
    let roots: Vec<&PathBuf> = roots
        .iter()
        .filter(|r| r.is_absolute() && r.as_path() != Path::new("/tmp"))
        .collect();
    if roots.is_empty() {
        return Ok(());
    }
    // Compared with canonical paths later: a protected path reached through a symlink
    // (stow-style `~/.config/cordon -> ../dotfiles/…`) is kept in both spellings (attack
    // pass 158, M3: the canonical one was not found, and every run was refused). Resolved
    // only when the records are not already what the spelled paths give (issue 12: ~230
    // `readlink` calls per run otherwise).
    let regs = registries();
    let settled = |p: &[PathBuf]| {
        regs.iter().all(|reg| {
            read_records(reg).is_ok_and(|records| merge(records.clone(), &roots, p) == records)
        })
    };
    if settled(&sorted(protected.to_vec())) {
        return Ok(());
    }
    let protected = sorted(
        protected
            .iter()
            .flat_map(|p| {
                [
                    p.clone(),
                    cordon_policy::paths::canonicalize_lenient(&HostFs, p),
                ]
            })
            .collect(),
    );
    for reg in regs {
        record_in(&reg, &roots, &protected).map_err(|e| {
            format!(
                "cannot record this run's writable roots in {} ({e}); later runs would trust \
                 what it writes there",
                reg.display()
            )
        })?;
    }
    Ok(())
}

fn sorted(mut v: Vec<PathBuf>) -> Vec<PathBuf> {
    v.sort();
    v.dedup();
    v
}

/// How long [`record`] waits for the registry's lock.
pub const LOCK_WAIT: std::time::Duration = std::time::Duration::from_secs(2);

/// Merges `roots` into `reg`: one record per root, whose `protected` list is what every
/// recorded run with that root protected (the intersection: a path is trusted there only
/// if no run could write it). Records of roots that no longer exist are dropped (a root of
/// this run is kept: `-w` of a missing directory makes it later, attack pass 158, H2); no
/// record of an existing root is ever dropped (H1: a cap evicted the one that mattered).
/// Written to a new file renamed over the old one, so a reader sees one or the other,
/// never a half-written one (H4); writers take `writable-roots.lock` beside it, without
/// blocking for longer than [`LOCK_WAIT`].
fn record_in(reg: &Path, roots: &[&PathBuf], protected: &[PathBuf]) -> std::io::Result<()> {
    let dir = reg
        .parent()
        .ok_or_else(|| std::io::Error::other("no directory"))?;
    std::fs::create_dir_all(dir)?;
    // Nothing new: no lock, no write (the launch path pays one read).
    let records = read_records(reg).map_err(std::io::Error::other)?;
    let merged = merge(records.clone(), roots, protected);
    if merged == records {
        return Ok(());
    }
    let lock = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(dir.join(format!("{FILE}.lock")))?;
    let deadline = std::time::Instant::now() + LOCK_WAIT;
    let mut lock = Some(lock);
    let held = loop {
        match nix::fcntl::Flock::lock(
            lock.take().expect("lock file"),
            nix::fcntl::FlockArg::LockExclusiveNonblock,
        ) {
            Ok(l) => break l,
            Err((f, nix::errno::Errno::EWOULDBLOCK)) if std::time::Instant::now() < deadline => {
                lock = Some(f);
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            Err((_, e)) => {
                return Err(std::io::Error::other(format!(
                    "its lock is held by another process ({e})"
                )))
            }
        }
    };
    // Again under the lock: another writer may have come first.
    let records = read_records(reg).map_err(std::io::Error::other)?;
    let mut merged = merge(records.clone(), roots, protected);
    merged.retain(|r| roots.contains(&&r.root) || r.root.exists());
    if merged != records {
        let text: String = merged
            .iter()
            .filter_map(|r| serde_json::to_string(r).ok())
            .map(|l| l + "\n")
            .collect();
        // A new file renamed over the old one (`write_private`: no symlink followed).
        crate::session::write_private(reg, text.as_bytes())?;
    }
    drop(held);
    Ok(())
}

/// `records` with `roots` merged in ([`record_in`]).
fn merge(mut records: Vec<Record>, roots: &[&PathBuf], protected: &[PathBuf]) -> Vec<Record> {
    for root in roots {
        match records.iter_mut().find(|r| &r.root == *root) {
            Some(r) => r.protected.retain(|p| protected.contains(p)),
            None => records.push(Record {
                root: (*root).clone(),
                protected: protected.to_vec(),
            }),
        }
    }
    records
}

/// The writable root of a recorded run that could write `path` (absolute, canonical as far
/// as it exists) without having kept it read-only, if any.
pub fn unprotected_writer(path: &Path) -> Option<PathBuf> {
    History::load().unprotected_writer(path)
}

/// The records of every registry, read once for several questions.
#[derive(Debug, Default)]
pub struct History {
    records: Vec<Record>,
    /// A registry that exists and could not be read: every place counts as written then.
    unreadable: Option<(PathBuf, String)>,
}

impl History {
    /// Reads every registry (a missing one adds nothing; one that cannot be read is kept
    /// as such, [`History::unreadable`]).
    pub fn load() -> History {
        let mut h = History::default();
        for reg in registries() {
            match read_records(&reg) {
                Ok(r) => h.records.extend(r),
                Err(why) => h.unreadable = Some((reg, why)),
            }
        }
        h
    }

    /// The registry that could not be read and why, if any: the caller refuses what it
    /// would have trusted, naming it.
    pub fn unreadable(&self) -> Option<&(PathBuf, String)> {
        self.unreadable.as_ref()
    }

    /// [`unprotected_writer`] among these records.
    /// A registry that could not be read answers for every path (its own path is given).
    pub fn unprotected_writer(&self, path: &Path) -> Option<PathBuf> {
        if let Some((reg, _)) = &self.unreadable {
            return Some(reg.clone());
        }
        writer_in(&self.records, path)
    }
}

/// [`unprotected_writer`] among `records`.
fn writer_in(records: &[Record], path: &Path) -> Option<PathBuf> {
    records
        .iter()
        .find(|r| path.starts_with(&r.root) && !r.protected.iter().any(|p| path.starts_with(p)))
        .map(|r| r.root.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A root that holds the path, without the path among what it protected, is a writer;
    /// a root that protected it (or a directory above it) is not, nor one beside it.
    #[test]
    fn records_say_who_could_write_a_path() {
        let recs = parse(
            "{\"root\":\"/w/p\",\"protected\":[\"/w/p/cfg/cordon\"]}\n\
             not json\n\
             {\"root\":\"/w/q\"}\n",
        );
        let find = |p: &str| writer_in(&recs, Path::new(p));
        assert_eq!(find("/w/p/cfg/cordon/config.toml"), None);
        assert_eq!(find("/w/p/other/cordon"), Some(PathBuf::from("/w/p")));
        assert_eq!(find("/w/q/x"), Some(PathBuf::from("/w/q")));
        assert_eq!(find("/w/r/x"), None);
    }

    /// Attack pass 158: one record per root, protecting only what every run with that
    /// root protected; no record of a root is evicted.
    #[test]
    fn records_merge_per_root_and_keep_only_common_protection() {
        let a = PathBuf::from("/w");
        let b = PathBuf::from("/v");
        let p = |v: &[&str]| v.iter().map(PathBuf::from).collect::<Vec<_>>();
        let r = merge(Vec::new(), &[&a], &p(&["/h/c", "/h/s"]));
        let r = merge(r, &[&a, &b], &p(&["/h/c", "/x"]));
        assert_eq!(
            r,
            vec![
                Record {
                    root: a.clone(),
                    protected: p(&["/h/c"])
                },
                Record {
                    root: b.clone(),
                    protected: p(&["/h/c", "/x"])
                },
            ]
        );
        assert_eq!(merge(r.clone(), &[&a], &p(&["/h/c"])), r);
    }
}
