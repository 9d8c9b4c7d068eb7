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
//! So every sandboxed run records, before its command starts, its writable roots and the
//! files and directories it kept read-only, in `writable-roots` of cordon's default state
//! directory under `$HOME` and under the account's home (both protected from every run,
//! whatever its environment). A trusted path is then refused ([`unprotected_writer`]) when
//! a recorded run could write it without having protected it. The records are JSON lines
//! (`{"root": …, "protected": […]}`), deduplicated, pruned of roots that no longer exist (a
//! directory removed takes what was planted in it along), at most [`MAX_RECORDS`]; the
//! file is opened without following a symlink and rewritten under an exclusive `flock`.
//!
//! Runs of cordon versions before this one left no records; `/tmp` is not recorded (the
//! namespace sandbox gives each command a private one; a Landlock-only run, rung 2, writes
//! the host's).

use serde::{Deserialize, Serialize};
use std::io::{Read as _, Seek as _, Write as _};
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::{Path, PathBuf};

/// The file name, in cordon's default state directory.
const FILE: &str = "writable-roots";
/// Most records kept (the oldest go first).
pub const MAX_RECORDS: usize = 4096;

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

fn read_records(path: &Path) -> Vec<Record> {
    let Ok(mut f) = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
    else {
        return Vec::new();
    };
    let mut s = String::new();
    if !f.metadata().is_ok_and(|m| m.is_file())
        || std::io::Read::by_ref(&mut f)
            .take(64 * 1024 * 1024)
            .read_to_string(&mut s)
            .is_err()
    {
        return Vec::new();
    }
    parse(&s)
}

fn parse(s: &str) -> Vec<Record> {
    s.lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// Records each of `roots` (a run's writable roots: absolute, canonical) with `protected`
/// (what it kept read-only), in every registry. Best effort: a registry that cannot be
/// written is skipped (`tracing` says why).
pub(crate) fn record(roots: &[PathBuf], protected: &[PathBuf]) {
    let roots: Vec<&PathBuf> = roots
        .iter()
        .filter(|r| r.is_absolute() && !r.starts_with("/tmp"))
        .collect();
    if roots.is_empty() {
        return;
    }
    let mut protected = protected.to_vec();
    protected.sort();
    protected.dedup();
    for reg in registries() {
        if let Err(e) = record_in(&reg, &roots, &protected) {
            tracing::debug!(registry = %reg.display(), %e, "writable roots not recorded");
        }
    }
}

fn record_in(reg: &Path, roots: &[&PathBuf], protected: &[PathBuf]) -> std::io::Result<()> {
    if let Some(dir) = reg.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let mut f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(reg)?;
    if !f.metadata()?.is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    nix::fcntl::Flock::lock(f.try_clone()?, nix::fcntl::FlockArg::LockExclusive)
        .map_err(|(_, e)| std::io::Error::from(e))
        .map(|lock| {
            let mut s = String::new();
            let _ = f.read_to_string(&mut s);
            let mut records = parse(&s);
            let new: Vec<Record> = roots
                .iter()
                .map(|r| Record {
                    root: (*r).clone(),
                    protected: protected.to_vec(),
                })
                .filter(|n| !records.contains(n))
                .collect();
            // Most runs repeat a record already there: nothing is checked or written then
            // (the launch path pays one locked read).
            if !new.is_empty() {
                records.extend(new);
                // A root that is gone took what was planted in it along.
                records.retain(|r| r.root.exists());
                if records.len() > MAX_RECORDS {
                    records = without_subsumed(records);
                }
                if records.len() > MAX_RECORDS {
                    records.drain(..records.len() - MAX_RECORDS);
                }
                let text: String = records
                    .iter()
                    .filter_map(|r| serde_json::to_string(r).ok())
                    .map(|l| l + "\n")
                    .collect();
                let _ = f
                    .set_len(0)
                    .and_then(|_| f.rewind())
                    .and_then(|_| f.write_all(text.as_bytes()));
            }
            drop(lock);
        })
}

/// `records` without those another one answers for: a record whose root lies beneath
/// another's, which protected nothing the other did not (every path it calls writable, the
/// other does too). Many runs in subdirectories of one recorded root (an agent's `cwd`s in
/// an unmarked directory) then cannot push that root's record out by the cap.
fn without_subsumed(records: Vec<Record>) -> Vec<Record> {
    let keep: Vec<bool> = records
        .iter()
        .enumerate()
        .map(|(i, b)| {
            !records.iter().enumerate().any(|(j, a)| {
                j != i
                    && b.root.starts_with(&a.root)
                    && (a.root != b.root || j < i)
                    && a.protected.iter().all(|p| b.protected.contains(p))
            })
        })
        .collect();
    records
        .into_iter()
        .zip(keep)
        .filter_map(|(r, k)| k.then_some(r))
        .collect()
}

/// The writable root of a recorded run that could write `path` (absolute, canonical as far
/// as it exists) without having kept it read-only, if any.
pub fn unprotected_writer(path: &Path) -> Option<PathBuf> {
    History::load().unprotected_writer(path)
}

/// The records of every registry, read once for several questions.
#[derive(Debug, Default)]
pub struct History(Vec<Record>);

impl History {
    /// Reads every registry (a missing or unreadable one adds nothing).
    pub fn load() -> History {
        History(
            registries()
                .iter()
                .flat_map(|reg| read_records(reg))
                .collect(),
        )
    }

    /// [`unprotected_writer`] among these records.
    pub fn unprotected_writer(&self, path: &Path) -> Option<PathBuf> {
        writer_in(&self.0, path)
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

    /// A record beneath another that protected no more is left out when the cap is near;
    /// one that protected less than the other stays (the other would not answer for it).
    #[test]
    fn subsumed_records_make_room_first() {
        let rec = |root: &str, protected: &[&str]| Record {
            root: root.into(),
            protected: protected.iter().map(PathBuf::from).collect(),
        };
        let kept = without_subsumed(vec![
            rec("/w", &["/h/cfg"]),
            rec("/w/a", &["/h/cfg"]),
            rec("/w/b", &["/h/cfg", "/w/b/x"]),
            rec("/w/c", &[]),
            rec("/w", &["/h/cfg"]),
            rec("/v", &[]),
        ]);
        assert_eq!(
            kept,
            vec![rec("/w", &["/h/cfg"]), rec("/w/c", &[]), rec("/v", &[])]
        );
    }
}
