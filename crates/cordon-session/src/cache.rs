//! The session cache (R-A8): answers given "for this session", reused only for the exact
//! same key.
//!
//! **Key** = the canonical executed form (the parsed segments with their arguments,
//! environment assignments, redirections and non-shell wrappers; the `bash -lc` / `sh -c`
//! wrapper is dropped, so `bash -lc 'git init'` and `git init` share a key; an opaque
//! script keys on its exact argv), the cwd, and the needed permissions (the whole effective
//! profile — its identity — plus the additional permissions and whether it runs sandboxed).
//! Reuse needs every part equal: an approval never widens to another path, cwd,
//! permission or profile.
//!
//! **Eligible** answers: `session` for a tool call whose command is fully understood
//! (not opaque) and which no dangerous-command finding asked about — those are asked every
//! time. `once`, `--yes`, denials and escalations are never cached.
//!
//! **Persistence** (`--session ID`): `$XDG_STATE_HOME/cordon/sessions/ID.json`, else
//! `~/.local/state/cordon/sessions/ID.json`; directories 0700, the file 0600, versioned,
//! written atomically (a new file opened `O_EXCL|O_NOFOLLOW`, then renamed), read with
//! `O_NOFOLLOW` and refused unless it is a regular file owned by this user and not writable
//! by others. Confined commands cannot write it: it lies under `$HOME`, which is read-only
//! inside the sandbox by default — a profile that makes the state dir writable lets a
//! command forge approvals for later runs of that session (see the README).

use crate::request::{Answer, NeededPermissions, RequestKind, ReviewableRequest};
use cordon_execpolicy::{DecisionRecord, SegmentRecord};
use serde::{Deserialize, Serialize};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use thiserror::Error;

/// Current session file format version.
pub const SESSION_FORMAT_VERSION: u32 = 1;
/// The `format` tag of a session file.
pub const SESSION_FORMAT: &str = "cordon-session";
/// Largest session file read (bytes).
pub const MAX_SESSION_FILE: u64 = 4 * 1024 * 1024;

const SHELLS: &[&str] = &["bash", "sh", "zsh", "dash", "ksh", "mksh", "ash"];

/// The canonical executed form of one segment (JSON text of its effective parts).
fn canonical_segment(s: &SegmentRecord) -> String {
    let seg = &s.segment;
    let wrappers: Vec<&Vec<String>> = seg
        .wrappers
        .iter()
        .filter(|w| !SHELLS.contains(&w.name.as_str()))
        .map(|w| &w.argv)
        .collect();
    serde_json::json!({
        "argv": seg.argv,
        "wrappers": wrappers,
        "env": seg.env,
        "redirections": seg.redirections,
        "context": seg.context,
        "pipeline": seg.pipeline.map(|p| (p.index, p.len)),
        "background": seg.background,
        "chdir": seg.chdir,
    })
    .to_string()
}

/// The canonical executed form of a command: one entry per segment, or the exact argv
/// (prefixed `opaque:`) when the parser could not understand it.
pub fn canonical_command(record: &DecisionRecord) -> Vec<String> {
    if !record.opaque.is_empty() || record.segments.is_empty() {
        let mut v = vec!["opaque:".to_string()];
        v.extend(record.command.iter().cloned());
        return v;
    }
    record.segments.iter().map(canonical_segment).collect()
}

/// The session-cache key (R-A8). Every part must be equal for a hit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CacheKey {
    /// Canonical executed form ([`canonical_command`]).
    pub command: Vec<String>,
    /// Working directory.
    pub cwd: PathBuf,
    /// Needed permissions, including the whole effective profile (its identity).
    pub needs: NeededPermissions,
}

impl CacheKey {
    /// The key for a command.
    pub fn new(record: &DecisionRecord, cwd: &Path, needs: &NeededPermissions) -> CacheKey {
        CacheKey {
            command: canonical_command(record),
            cwd: cwd.to_path_buf(),
            needs: needs.clone(),
        }
    }
}

/// Whether an answer to `req` may be cached (module docs).
pub fn eligible(req: &ReviewableRequest, record: &DecisionRecord, answer: Answer) -> bool {
    answer == Answer::Session && req.kind == RequestKind::ToolCall && cacheable(record)
}

/// The part of [`eligible`] that depends on the command alone: nothing opaque, no
/// dangerous-command finding. What [`ReviewableRequest::session_answer_kept`] says.
pub fn cacheable(record: &DecisionRecord) -> bool {
    record.opaque.is_empty() && record.segments.iter().all(|s| s.findings.is_empty())
}

/// One cached approval.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CacheEntry {
    /// The key.
    pub key: CacheKey,
    /// The approval id that created it (R-A9 audit trail).
    pub approval_id: String,
    /// Who answered.
    pub by: String,
}

/// The on-disk shape.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct SessionFile {
    format: String,
    version: u32,
    id: String,
    entries: Vec<CacheEntry>,
}

/// Errors of the session cache.
#[derive(Debug, Error)]
pub enum CacheError {
    /// The session id is not a safe file name.
    #[error("session id {0:?} is not valid: use 1-64 characters from A-Z a-z 0-9 . _ - (not starting with '.')")]
    BadId(String),
    /// Neither `$XDG_STATE_HOME` nor `$HOME` is set.
    #[error("cannot find a state directory: set XDG_STATE_HOME or HOME")]
    NoStateDir,
    /// The file is not one cordon wrote, or is unsafe to trust.
    #[error("session file {path}: {why}; remove it to start the session afresh")]
    Untrusted {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        why: String,
    },
    /// I/O.
    #[error("session file {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
}

/// The session cache: in memory, optionally backed by a session file.
#[derive(Debug, Clone, Default)]
pub struct SessionCache {
    entries: Vec<CacheEntry>,
    file: Option<(String, PathBuf)>,
}

/// cordon's state directory: `$XDG_STATE_HOME/cordon` or `~/.local/state/cordon` (the
/// session store and the records of sweeps still to finish). Protected whole from every
/// sandboxed command, like cordon's configuration.
pub fn state_dir() -> Option<PathBuf> {
    sessions_dir().and_then(|s| s.parent().map(Path::to_path_buf))
}

/// `$XDG_STATE_HOME/cordon/sessions` or `~/.local/state/cordon/sessions`.
pub fn sessions_dir() -> Option<PathBuf> {
    if let Some(x) = std::env::var_os("XDG_STATE_HOME").filter(|x| !x.is_empty()) {
        let p = PathBuf::from(x);
        if p.is_absolute() {
            return Some(p.join("cordon/sessions"));
        }
    }
    std::env::var_os("HOME")
        .map(PathBuf::from)
        .filter(|h| h.is_absolute())
        .map(|h| h.join(".local/state/cordon/sessions"))
}

fn valid_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 64
        && !id.starts_with('.')
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b))
}

impl SessionCache {
    /// An empty, in-memory cache (one process).
    pub fn in_memory() -> SessionCache {
        SessionCache::default()
    }

    /// The cache of session `id`, loaded from its file under [`sessions_dir`] (empty if the
    /// file does not exist yet).
    ///
    /// Errors: a bad id, no state dir, or a file that is unreadable or untrusted.
    pub fn open(id: &str) -> Result<SessionCache, CacheError> {
        let dir = sessions_dir().ok_or(CacheError::NoStateDir)?;
        SessionCache::open_in(&dir, id)
    }

    /// Like [`SessionCache::open`] with an explicit sessions directory.
    ///
    /// Errors: as [`SessionCache::open`].
    pub fn open_in(dir: &Path, id: &str) -> Result<SessionCache, CacheError> {
        if !valid_id(id) {
            return Err(CacheError::BadId(id.into()));
        }
        if std::fs::symlink_metadata(dir).is_ok_and(|m| m.is_file()) {
            // An empty file there is the placeholder an older cordon made when a writable
            // grant covered the state directory (nu11 H1): say so, not "Not a directory".
            return Err(CacheError::Untrusted {
                path: dir.to_path_buf(),
                why: "is a file, not the sessions directory (an empty one is a placeholder an \
                      older cordon left when a writable grant covered it)"
                    .into(),
            });
        }
        let path = dir.join(format!("{id}.json"));
        let entries = read_file(&path, id)?.unwrap_or_default();
        Ok(SessionCache {
            entries,
            file: Some((id.to_string(), path)),
        })
    }

    /// The session file, if persisted.
    pub fn path(&self) -> Option<&Path> {
        self.file.as_ref().map(|(_, p)| p.as_path())
    }

    /// The cached entry for `key`, if every part is equal.
    pub fn lookup(&self, key: &CacheKey) -> Option<&CacheEntry> {
        self.entries.iter().find(|e| &e.key == key)
    }

    /// Number of cached approvals.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether nothing is cached.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Records an approval and persists the session file when there is one (re-reading it
    /// first so concurrent runs of one session keep each other's entries).
    ///
    /// Errors: the file cannot be written (the entry stays cached in memory).
    pub fn insert(&mut self, entry: CacheEntry) -> Result<(), CacheError> {
        if self.lookup(&entry.key).is_none() {
            self.entries.push(entry);
        }
        let Some((id, path)) = &self.file else {
            return Ok(());
        };
        let mut merged = read_file(path, id)?.unwrap_or_default();
        for e in &self.entries {
            if !merged.iter().any(|m| m.key == e.key) {
                merged.push(e.clone());
            }
        }
        write_file(path, id, &merged)?;
        self.entries = merged;
        Ok(())
    }
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> CacheError + '_ {
    move |source| CacheError::Io {
        path: path.to_path_buf(),
        source,
    }
}

#[cfg(unix)]
fn read_file(path: &Path, id: &str) -> Result<Option<Vec<CacheEntry>>, CacheError> {
    use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
    let untrusted = |why: &str| CacheError::Untrusted {
        path: path.to_path_buf(),
        why: why.into(),
    };
    let f = match std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path)
    {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) => {
            return Err(untrusted("is a symbolic link"))
        }
        Err(e) => return Err(io_err(path)(e)),
    };
    let meta = f.metadata().map_err(io_err(path))?;
    if !meta.file_type().is_file() {
        return Err(untrusted("is not a regular file"));
    }
    if meta.uid() != nix::unistd::geteuid().as_raw() {
        return Err(untrusted("is owned by another user"));
    }
    if meta.mode() & 0o022 != 0 {
        return Err(untrusted("is writable by group or others"));
    }
    if meta.len() > MAX_SESSION_FILE {
        return Err(untrusted("is larger than 4 MiB"));
    }
    let mut text = String::new();
    f.take(MAX_SESSION_FILE)
        .read_to_string(&mut text)
        .map_err(io_err(path))?;
    let file: SessionFile = serde_json::from_str(&text)
        .map_err(|e| untrusted(&format!("is not a cordon session file ({e})")))?;
    if file.format != SESSION_FORMAT || file.version != SESSION_FORMAT_VERSION {
        return Err(untrusted(&format!(
            "has format {:?} version {}, this cordon reads {SESSION_FORMAT:?} version {SESSION_FORMAT_VERSION}",
            file.format, file.version
        )));
    }
    if file.id != id {
        return Err(untrusted("belongs to another session id"));
    }
    Ok(Some(file.entries))
}

#[cfg(unix)]
fn write_file(path: &Path, id: &str, entries: &[CacheEntry]) -> Result<(), CacheError> {
    use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
    let dir = path.parent().ok_or(CacheError::NoStateDir)?;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(io_err(dir))?;
    let dmeta = std::fs::symlink_metadata(dir).map_err(io_err(dir))?;
    if !dmeta.is_dir() || dmeta.permissions().mode() & 0o022 != 0 {
        return Err(CacheError::Untrusted {
            path: dir.to_path_buf(),
            why: "is not a private directory (symlink, or writable by group or others)".into(),
        });
    }
    let body = serde_json::to_vec_pretty(&SessionFile {
        format: SESSION_FORMAT.into(),
        version: SESSION_FORMAT_VERSION,
        id: id.into(),
        entries: entries.to_vec(),
    })
    .map_err(|e| io_err(path)(std::io::Error::other(e)))?;
    let tmp = dir.join(format!(".{id}.{}.tmp", crate::ids::RunId::new()));
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(&tmp)
        .map_err(io_err(&tmp))?;
    let written = f.write_all(&body).and_then(|_| f.sync_all());
    drop(f);
    if let Err(e) = written.and_then(|_| std::fs::rename(&tmp, path)) {
        let _ = std::fs::remove_file(&tmp);
        return Err(io_err(path)(e));
    }
    Ok(())
}

#[cfg(not(unix))]
fn read_file(_: &Path, _: &str) -> Result<Option<Vec<CacheEntry>>, CacheError> {
    Ok(None)
}
#[cfg(not(unix))]
fn write_file(_: &Path, _: &str, _: &[CacheEntry]) -> Result<(), CacheError> {
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use cordon_execpolicy::{EvalContext, Policy};
    use cordon_policy::{AdditionalPermissions, FsEntry, NetworkPolicy, PermissionProfile};

    fn rec(argv: &[&str]) -> DecisionRecord {
        let argv: Vec<String> = argv.iter().map(|s| s.to_string()).collect();
        Policy::empty().evaluate(&argv, &EvalContext::default())
    }
    fn needs() -> NeededPermissions {
        NeededPermissions {
            profile: PermissionProfile::builtin("workspace-write").unwrap(),
            additional: None,
            sandboxed: true,
        }
    }
    fn key(argv: &[&str], cwd: &str, n: &NeededPermissions) -> CacheKey {
        CacheKey::new(&rec(argv), Path::new(cwd), n)
    }
    fn entry(k: CacheKey) -> CacheEntry {
        CacheEntry {
            key: k,
            approval_id: "appr-1".into(),
            by: "test".into(),
        }
    }

    #[test]
    fn shell_wrapper_shares_the_key_other_wrappers_do_not() {
        let n = needs();
        assert_eq!(
            key(&["bash", "-lc", "git init"], "/w", &n),
            key(&["git", "init"], "/w", &n)
        );
        assert_eq!(
            key(&["sh", "-c", "git init"], "/w", &n),
            key(&["git", "init"], "/w", &n)
        );
        assert_ne!(
            key(&["sudo", "git", "init"], "/w", &n),
            key(&["git", "init"], "/w", &n)
        );
        assert_ne!(
            key(&["bash", "-c", "git init > log"], "/w", &n),
            key(&["git", "init"], "/w", &n)
        );
        assert_ne!(
            key(&["env", "GIT_DIR=/x", "git", "init"], "/w", &n),
            key(&["git", "init"], "/w", &n)
        );
    }

    #[test]
    fn hit_and_miss_per_key_part() {
        let n = needs();
        let mut c = SessionCache::in_memory();
        c.insert(entry(key(&["cargo", "build"], "/w", &n))).unwrap();
        // hit: every part equal
        assert!(c.lookup(&key(&["cargo", "build"], "/w", &n)).is_some());
        assert!(c
            .lookup(&key(&["bash", "-lc", "cargo build"], "/w", &n))
            .is_some());
        // miss: command
        assert!(c
            .lookup(&key(&["cargo", "build", "--release"], "/w", &n))
            .is_none());
        assert!(c
            .lookup(&key(&["bash", "-c", "cargo build && rm -rf x"], "/w", &n))
            .is_none());
        // miss: cwd
        assert!(c.lookup(&key(&["cargo", "build"], "/other", &n)).is_none());
        // miss: additional permissions
        let mut wider = n.clone();
        wider.additional = Some(AdditionalPermissions {
            network: None,
            entries: vec![FsEntry::new("/data", cordon_policy::Access::Write)],
        });
        assert!(c.lookup(&key(&["cargo", "build"], "/w", &wider)).is_none());
        // miss: network
        let mut net = n.clone();
        net.profile.network = NetworkPolicy::Enabled;
        assert!(c.lookup(&key(&["cargo", "build"], "/w", &net)).is_none());
        // miss: profile identity
        let mut other = n.clone();
        other.profile = PermissionProfile::builtin("read-only").unwrap();
        assert!(c.lookup(&key(&["cargo", "build"], "/w", &other)).is_none());
        // miss: unsandboxed form
        let mut bare = n.clone();
        bare.sandboxed = false;
        assert!(c.lookup(&key(&["cargo", "build"], "/w", &bare)).is_none());
    }

    #[test]
    fn eligibility() {
        let n = needs();
        let r = rec(&["cargo", "build"]);
        let req = ReviewableRequest::tool_call(
            crate::RunId::new(),
            &r,
            "/w".into(),
            n.clone(),
            "x".into(),
        );
        assert!(eligible(&req, &r, Answer::Session));
        assert!(!eligible(&req, &r, Answer::Once));
        assert!(!eligible(&req, &r, Answer::Deny));
        let danger = rec(&["git", "reset", "--hard"]);
        assert!(!eligible(&req, &danger, Answer::Session));
        let opaque = rec(&["bash", "-c", "cargo build $(date)"]);
        assert!(!eligible(&req, &opaque, Answer::Session));
        let mut esc = req.clone();
        esc.kind = RequestKind::Escalation {
            after: "sandbox-denied".into(),
        };
        assert!(!eligible(&esc, &r, Answer::Session));
    }

    #[cfg(unix)]
    #[test]
    fn persisted_session_is_private_versioned_and_shared() {
        use std::os::unix::fs::PermissionsExt;
        let d = tempfile::tempdir().unwrap();
        let dir = d.path().join("sessions");
        let n = needs();
        let mut a = SessionCache::open_in(&dir, "agent-1").unwrap();
        assert!(a.is_empty());
        a.insert(entry(key(&["cargo", "build"], "/w", &n))).unwrap();
        let path = dir.join("agent-1.json");
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains("\"version\": 1"), "{text}");
        // a second process of the same session sees it; another session does not
        let b = SessionCache::open_in(&dir, "agent-1").unwrap();
        assert!(b.lookup(&key(&["cargo", "build"], "/w", &n)).is_some());
        let c = SessionCache::open_in(&dir, "agent-2").unwrap();
        assert!(c.is_empty());
        // concurrent writers keep each other's entries
        let mut b = b;
        a.insert(entry(key(&["make"], "/w", &n))).unwrap();
        b.insert(entry(key(&["npm", "test"], "/w", &n))).unwrap();
        let merged = SessionCache::open_in(&dir, "agent-1").unwrap();
        assert_eq!(merged.len(), 3);
    }

    #[cfg(unix)]
    #[test]
    fn unsafe_session_files_are_refused() {
        use std::os::unix::fs::PermissionsExt;
        let d = tempfile::tempdir().unwrap();
        let dir = d.path();
        assert!(matches!(
            SessionCache::open_in(dir, "../x"),
            Err(CacheError::BadId(_))
        ));
        assert!(matches!(
            SessionCache::open_in(dir, ".hidden"),
            Err(CacheError::BadId(_))
        ));
        // a symlink planted in place of the file (to a valid session file, so only the
        // no-follow open refuses it)
        std::fs::write(
            dir.join("target.json"),
            r#"{"format":"cordon-session","version":1,"id":"s1","entries":[]}"#,
        )
        .unwrap();
        std::fs::set_permissions(
            dir.join("target.json"),
            std::fs::Permissions::from_mode(0o600),
        )
        .unwrap();
        std::os::unix::fs::symlink(dir.join("target.json"), dir.join("s1.json")).unwrap();
        assert!(matches!(
            SessionCache::open_in(dir, "s1"),
            Err(CacheError::Untrusted { .. })
        ));
        // group/other-writable
        std::fs::write(dir.join("s2.json"), "{}").unwrap();
        std::fs::set_permissions(dir.join("s2.json"), std::fs::Permissions::from_mode(0o666))
            .unwrap();
        assert!(matches!(
            SessionCache::open_in(dir, "s2"),
            Err(CacheError::Untrusted { .. })
        ));
        // wrong version
        std::fs::write(
            dir.join("s3.json"),
            r#"{"format":"cordon-session","version":99,"id":"s3","entries":[]}"#,
        )
        .unwrap();
        std::fs::set_permissions(dir.join("s3.json"), std::fs::Permissions::from_mode(0o600))
            .unwrap();
        assert!(matches!(
            SessionCache::open_in(dir, "s3"),
            Err(CacheError::Untrusted { .. })
        ));
    }
}
