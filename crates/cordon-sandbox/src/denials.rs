//! Kernel-side denial records (issue 9 §5, R-F1): what the sandbox refused, recorded by the
//! process that judged the call (the seccomp user-notification supervisor in the sandbox's
//! init, `linux::denial_records`) and handed to cordon on the helper's report channel — a
//! descriptor the command never holds, so the command cannot forge or erase a record.
//!
//! Platform-neutral data only: the supervisor lives in the Linux backend.

use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// At most this many records travel per run (the first ones); the rest are only counted
/// ([`DenialReport::total`]).
pub const MAX_RECORDS: usize = 32;

/// How a record's `rule` begins when a write in place to a file with several names was
/// refused (attack pass 47, N1): no `-w` lifts it; replacing the file does.
pub const HARD_LINK_RULE: &str = "a hard link";

/// The rule of a rename over (or a removal of) a file granted on its own (`-w FILE`), which
/// the sandbox mounts on itself: the record's grant is its directory.
pub const FILE_GRANT_RULE: &str = "a file granted on its own (-w FILE): writable in place, \
    but it cannot be replaced or removed (a tool that writes a new file and renames it over \
    this one, as sed -i and many editors do, meets the sandbox's mount on it)";

/// How a record's `rule` begins when the hard-link check could not look at the file a
/// write in place or metadata change was to reach (a process init may not inspect: it
/// made itself non-dumpable; a lookup init may not make) and so refused it (attack pass
/// 49: the check gave up and let such calls through). No `-w` lifts it.
pub const UNCHECKED_RULE: &str = "not checked for hard links";

/// How a record's `rule` begins when a metadata change (`chmod`, `utimensat`,
/// `setxattr`…) was refused because the file is the host's whatever its names: handed in
/// on a descriptor from outside the sandbox, or a device node (new-user pass 164). No
/// `-w` lifts it.
pub const HOST_METADATA_RULE: &str = "the host's metadata";

/// What a [`HARD_LINK_RULE`] record says was to change when the call changed the file's
/// metadata (`chmod`, `chown`, `utimensat`, `setxattr`…) rather than its bytes (attack
/// pass 48, N3).
pub const HARD_LINK_METADATA: &str = "changing the file's mode, owner, times or extended \
                                      attributes";

/// One refused call: `{syscall, path, errno, rule, smallest grant that would allow it}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DenialRecord {
    /// The system call, by name (`openat`, `mkdir`, `renameat2`, …).
    pub syscall: String,
    /// The path the call needed to write, absolute in the command's view with the
    /// directories resolved as the kernel resolved them (the last component as named).
    /// The command chose it: bytes that are not UTF-8 travel escaped (`\xff`), as JSON
    /// cannot carry them ([`path_text`]).
    #[serde(serialize_with = "path_text")]
    pub path: PathBuf,
    /// The errno the command got, by name (`EROFS`, `EACCES`, `EBUSY`): the one the kernel
    /// would have given for the same call.
    pub errno: String,
    /// The rule of the resolved profile that denies it (`protected (R-P3): …`,
    /// `read-only (entry /usr)`, `read-only: outside every writable root`, …).
    pub rule: String,
    /// The smallest grant that would allow it (`-w` of this path), when a per-command grant
    /// can: the file itself, or the directory a new entry is made in or removed from.
    /// `None` for a pinned directory or a deny entry; sent as `None` when the path is not
    /// UTF-8 (no grant is offered for a path cordon cannot name exactly). The session
    /// replaces it with the grant it offers for the record (none for a home directory or
    /// above, …), so a run report has one value (`cordon_session::outcome::offered_grant`).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "grant_text"
    )]
    pub grant: Option<PathBuf>,
}

/// Serialises a path a command chose as text, its non-UTF-8 bytes escaped (`\xff`): a
/// record must never fail to serialise (L2: the supervisor in the sandbox's init panicked
/// on `touch /etc/$'\xff'`, and the run's records were lost).
fn path_text<S: serde::Serializer>(p: &std::path::Path, s: S) -> Result<S::Ok, S::Error> {
    match p.to_str() {
        Some(t) => s.serialize_str(t),
        None => s.serialize_str(&cordon_policy::paths::escaped(
            p.as_os_str().as_encoded_bytes(),
        )),
    }
}

/// Serialises a grant: `None` for a path that is not UTF-8 (its escaped text would name
/// another path).
fn grant_text<S: serde::Serializer>(g: &Option<PathBuf>, s: S) -> Result<S::Ok, S::Error> {
    match g.as_deref().and_then(std::path::Path::to_str) {
        Some(t) => s.serialize_some(t),
        None => s.serialize_none(),
    }
}

impl DenialRecord {
    /// The `syscall` of a network attempt record: a `connect` to an internet address that
    /// could not leave the sandbox's network namespace (its `path` is `address:port`).
    pub const NETWORK_SYSCALL: &'static str = "connect";

    /// Whether this records a network attempt (not a path write).
    pub fn is_network(&self) -> bool {
        self.syscall == Self::NETWORK_SYSCALL
    }
}

/// The records of one run, in the order the calls were made (capped at [`MAX_RECORDS`]).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DenialReport {
    /// The first [`MAX_RECORDS`] records.
    pub records: Vec<DenialRecord>,
    /// How many calls were refused in all (≥ `records.len()`).
    pub total: u64,
}

impl DenialReport {
    /// Adds a record (kept while fewer than [`MAX_RECORDS`] are held; always counted).
    pub fn push(&mut self, r: DenialRecord) {
        self.total += 1;
        if self.records.len() < MAX_RECORDS {
            self.records.push(r);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capped_and_counted() {
        let mut d = DenialReport::default();
        for i in 0..40 {
            d.push(DenialRecord {
                syscall: "mkdir".into(),
                path: PathBuf::from(format!("/x/{i}")),
                errno: "EROFS".into(),
                rule: "read-only".into(),
                grant: None,
            });
        }
        assert_eq!(d.records.len(), MAX_RECORDS);
        assert_eq!(d.total, 40);
        assert_eq!(d.records[0].path, PathBuf::from("/x/0"));
    }
}
