//! The Landlock layer (R-L1, R-L2, R-L3, R-L5): filesystem rules, TCP (ABI >= 4) and scopes
//! (ABI >= 6), built for exactly the ABI in the plan and checked after `restrict_self`.
//!
//! Landlock is allow-only: every handled right is denied unless a rule on the path or an
//! ancestor allows it. So the rules are the readable and writable places; deny entries
//! and protected paths are left to the mounts (rung 1), and rung 2 only runs when there
//! are none (see `plan::carve_outs`).

use super::mounts::{self, Base, Layout, StepKind};
use super::plan::{LandlockPlan, Rung};
use cordon_policy::{Access, ResolvedFilesystem, ResolvedProfile};
use landlock::{
    Access as _, AccessFs, AccessNet, BitFlags, PathBeneath, Ruleset, RulesetAttr, RulesetCreated,
    RulesetCreatedAttr, RulesetStatus, Scope, ABI,
};
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};

/// What a rule grants.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Grant {
    /// Execute, read files, list directories.
    Read,
    /// Every handled filesystem right.
    Write,
    /// Read/write/ioctl on device files (and listing), for `/dev` entries.
    Dev,
    /// One file the command already holds open as stdin, stdout or stderr, with the access
    /// that descriptor was opened with (see [`stdio_grants`]).
    Stdio {
        /// The descriptor was opened for reading.
        read: bool,
        /// The descriptor was opened for writing.
        write: bool,
    },
}

/// Rules for the command's standard descriptors (0, 1, 2) that are regular files or named
/// FIFOs: the file itself (never its directory), with exactly the access its descriptor
/// was opened with (read → `read_file`; write → `write_file` and `truncate`).
///
/// Why it is safe: the command already holds these descriptors, opened before the sandbox
/// existed, so it can already read or write (and `ftruncate`) that file. Re-opening it
/// through `/dev/stdout` (`/proc/self/fd/1`) is a new `open(2)` that Landlock checks
/// against the *file's* path — which, for a harness that redirected the output to a log
/// file outside the writable roots, no rule allows, so `echo x > /dev/stdout` failed with
/// `EACCES`. A rule on that one inode with that one access gives nothing the descriptor
/// did not. Directories (a directory as stdin would open the whole tree beneath it),
/// sockets, devices and `O_PATH` descriptors get no rule; anonymous pipes need none
/// (Landlock does not check them) and are skipped when the rule is added.
pub fn stdio_grants() -> Vec<(OwnedFd, Grant)> {
    let mut out = Vec::new();
    for fd in 0..=2 {
        let Ok(st) = super::sys::fstat(fd) else {
            continue;
        };
        let kind = st.st_mode & libc::S_IFMT;
        if kind != libc::S_IFREG && kind != libc::S_IFIFO {
            continue;
        }
        let Ok(flags) = super::sys::status_flags(fd) else {
            continue;
        };
        if flags & libc::O_PATH != 0 {
            continue;
        }
        let (read, write) = match flags & libc::O_ACCMODE {
            libc::O_RDONLY => (true, false),
            libc::O_WRONLY => (false, true),
            libc::O_RDWR => (true, true),
            _ => continue,
        };
        if let Ok(dup) = super::sys::dup_cloexec(fd) {
            out.push((dup, Grant::Stdio { read, write }));
        }
    }
    out
}

/// The filesystem rules for `profile` on `rung` (absolute paths as seen by the command).
/// Missing paths are dropped when the rules are added.
///
/// On rung 1 they are derived from the mount plan ([`mounts::layout`], the same object
/// the helper mounts): the root's access, one rule per bind (writable or read), the
/// private `/tmp`, `/dev` (+ `/dev/shm`) and `/proc` — so Landlock and the mounts cannot
/// disagree. On rung 2 (no mounts) from the resolved entries, with the root's access
/// from the same [`cordon_policy::TopView`].
pub fn fs_rules(profile: &ResolvedProfile, rung: Rung) -> Vec<(PathBuf, Grant)> {
    if let ResolvedFilesystem::Unrestricted = &profile.filesystem {
        return Vec::new();
    }
    match rung {
        Rung::Namespaces => rules_from_layout(&mounts::layout_for(profile)),
        Rung::LandlockOnly => rules_landlock_only(&profile.filesystem),
    }
}

/// Rung 1: see [`fs_rules`].
pub fn rules_from_layout(layout: &Layout) -> Vec<(PathBuf, Grant)> {
    let mut out = Vec::new();
    for s in &layout.steps {
        match &s.kind {
            StepKind::Root { base } => match base {
                Base::HostReadOnly => out.push((PathBuf::from("/"), Grant::Read)),
                Base::HostWritable => out.push((PathBuf::from("/"), Grant::Write)),
                Base::Empty => {}
            },
            StepKind::Bind { writable, .. } => out.push((
                s.path.clone(),
                if *writable { Grant::Write } else { Grant::Read },
            )),
            StepKind::PrivateTmp { .. } | StepKind::Overlay { .. } | StepKind::CacheDir { .. } => {
                out.push((s.path.clone(), Grant::Write))
            }
            StepKind::Dev { .. } => {
                out.push((s.path.clone(), Grant::Dev));
                out.push((s.path.join("shm"), Grant::Write));
            }
            StepKind::Proc => out.push((s.path.clone(), Grant::Read)),
            StepKind::Staging
            | StepKind::PinLink
            | StepKind::CopyLink
            | StepKind::CreateDir
            | StepKind::Mask { .. }
            | StepKind::Stripped { .. }
            | StepKind::GitConfig
            | StepKind::ReadOnlyRemount
            | StepKind::Pivot => {}
        }
    }
    out
}

fn rules_landlock_only(fs: &ResolvedFilesystem) -> Vec<(PathBuf, Grant)> {
    let root_access = fs.top_view().root;
    let mut out = Vec::new();
    match root_access {
        Access::Read => out.push((PathBuf::from("/"), Grant::Read)),
        Access::Write => out.push((PathBuf::from("/"), Grant::Write)),
        Access::Deny => {}
    }
    for e in fs.layered() {
        // Missing paths are dropped when the rules are added (a missing writable grant
        // was created by the helper just before).
        if e.path == Path::new("/") {
            continue;
        }
        match e.access {
            Access::Read => out.push((e.path.clone(), Grant::Read)),
            Access::Write => out.push((e.path.clone(), Grant::Write)),
            Access::Deny => {}
        }
    }
    for d in [
        "/dev/null",
        "/dev/zero",
        "/dev/full",
        "/dev/random",
        "/dev/urandom",
        "/dev/tty",
        "/dev/ptmx",
        "/dev/pts",
    ] {
        out.push((PathBuf::from(d), Grant::Dev));
    }
    out.push((PathBuf::from("/dev/shm"), Grant::Write));
    if root_access == Access::Deny {
        out.push((PathBuf::from("/proc"), Grant::Read));
    }
    out
}

fn abi_of(n: u32) -> ABI {
    ABI::from(n as i32)
}

fn rights(abi: ABI, g: Grant) -> BitFlags<AccessFs> {
    let all = AccessFs::from_all(abi);
    match g {
        Grant::Read => AccessFs::from_read(abi),
        Grant::Write => all,
        Grant::Dev => {
            (AccessFs::ReadFile
                | AccessFs::WriteFile
                | AccessFs::ReadDir
                | AccessFs::Truncate
                | AccessFs::IoctlDev)
                & all
        }
        Grant::Stdio { read, write } => {
            let mut r = BitFlags::EMPTY;
            if read {
                r |= AccessFs::ReadFile;
            }
            if write {
                r |= AccessFs::WriteFile | AccessFs::Truncate;
            }
            r & AccessFs::from_file(abi)
        }
    }
}

/// A ruleset ready to enforce, and what it handles.
pub struct Prepared {
    ruleset: RulesetCreated,
    /// Human-readable description (`landlock ABI 7 (fs, tcp, scope: …)`).
    pub description: String,
    required: bool,
}

/// Creates the ruleset and adds the rules (opening each path, so call it while the paths
/// are reachable and before capabilities are dropped). `extra` are descriptors of places
/// outside the sandbox's root that inherited descriptors may still point to (the host's
/// `/dev/pts`). `optional` are rules added only if the kernel accepts them (the
/// [`stdio_grants`]: an anonymous pipe or a memfd cannot carry a rule, and needs none or
/// is not worth refusing the run for). Returns `Ok(None)` when the plan handles nothing.
///
/// Errors: the kernel refused the ruleset or a rule of `rules`/`extra` (message names the
/// step).
// Longer than most: one step per Landlock ABI feature (fs, net, scopes) with the
// best-effort/required decision next to each, in the kernel doc's order.
pub fn prepare(
    plan: &LandlockPlan,
    rules: &[(PathBuf, Grant)],
    extra: Vec<(OwnedFd, Grant)>,
    optional: Vec<(OwnedFd, Grant)>,
    description: String,
) -> Result<Option<Prepared>, String> {
    let abi = abi_of(plan.abi);
    let handled = if plan.fs {
        AccessFs::from_all(abi)
    } else {
        BitFlags::EMPTY
    };
    let mut scopes: BitFlags<Scope> = BitFlags::EMPTY;
    if plan.scope_signal {
        scopes |= Scope::Signal;
    }
    if plan.scope_abstract_unix {
        scopes |= Scope::AbstractUnixSocket;
    }
    if handled.is_empty() && !plan.tcp && scopes.is_empty() {
        return Ok(None);
    }
    let err = |what: &str, e: landlock::RulesetError| format!("landlock: {what}: {e}");
    let mut rs = Ruleset::default();
    if !handled.is_empty() {
        rs = rs
            .handle_access(handled)
            .map_err(|e| err("handling fs rights", e))?;
    }
    if plan.tcp {
        rs = rs
            .handle_access(AccessNet::BindTcp | AccessNet::ConnectTcp)
            .map_err(|e| err("handling tcp", e))?;
    }
    if !scopes.is_empty() {
        rs = rs.scope(scopes).map_err(|e| err("scopes", e))?;
    }
    let mut created = rs.create().map_err(|e| err("creating the ruleset", e))?;
    if !handled.is_empty() {
        for (path, g) in rules {
            // A path that cannot be opened gets no rule: Landlock then denies it (closed).
            // One lookup per rule: the type comes from the descriptor, not a second stat.
            let Ok(fd) = super::sys::open_path(path, false) else {
                continue;
            };
            let Ok(st) = super::sys::fstat(fd.as_raw_fd()) else {
                continue;
            };
            let mut access = rights(abi, *g) & handled;
            if st.st_mode & libc::S_IFMT != libc::S_IFDIR {
                access &= AccessFs::from_file(abi);
            }
            created = created
                .add_rule(PathBeneath::new(fd, access))
                .map_err(|e| err(&format!("rule for {}", path.display()), e))?;
        }
        for (fd, g) in extra {
            let access = rights(abi, g) & handled;
            created = created
                .add_rule(PathBeneath::new(fd, access))
                .map_err(|e| err("rule for the host terminal devices", e))?;
        }
        for (fd, g) in optional {
            let access = rights(abi, g) & handled;
            if access.is_empty() {
                continue;
            }
            // Tried on a scratch ruleset first: a refused rule consumes the ruleset it is
            // added to.
            let accepted = Ruleset::default()
                .handle_access(handled)
                .and_then(|r| r.create())
                .and_then(|r| r.add_rule(PathBeneath::new(&fd, access)))
                .is_ok();
            if accepted {
                created = created
                    .add_rule(PathBeneath::new(fd, access))
                    .map_err(|e| err("rule for a standard descriptor", e))?;
            }
        }
    }
    Ok(Some(Prepared {
        ruleset: created.no_new_privs(true),
        description,
        required: plan.required,
    }))
}

impl Prepared {
    /// Enforces the ruleset on the calling thread (inherited by every child) and checks
    /// what the kernel actually enforced. Returns the description with the status
    /// appended (`fully enforced` / `partially enforced`).
    ///
    /// Errors: `restrict_self` failed, or the ruleset was not fully enforced while a
    /// guarantee rests on Landlock alone (R-S4).
    pub fn enforce(self) -> Result<super::layer::Enforcement, EnforceError> {
        use super::layer::Enforcement;
        let status = self
            .ruleset
            .restrict_self()
            .map_err(|e| EnforceError::Failed(format!("landlock: restrict_self: {e}")))?;
        match status.ruleset {
            RulesetStatus::FullyEnforced => Ok(Enforcement::Full),
            RulesetStatus::PartiallyEnforced if !self.required => Ok(Enforcement::Partial),
            RulesetStatus::NotEnforced if !self.required => Ok(Enforcement::None),
            s => Err(EnforceError::NotEnforced(format!(
                "the filesystem policy rests on Landlock, but the kernel reported {s:?} for {}",
                self.description
            ))),
        }
    }
}

/// Why [`Prepared::enforce`] did not confine the process as planned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EnforceError {
    /// `landlock_restrict_self` failed.
    Failed(String),
    /// The kernel enforces less than a guarantee resting on Landlock alone needs (R-S4).
    NotEnforced(String),
}

#[cfg(test)]
mod tests {
    use super::*;
    use cordon_policy::{resolve, MemFs, PermissionProfile, ResolveContext};

    fn resolved(name: &str) -> ResolvedProfile {
        let fs = MemFs::new()
            .dir("/home/u/proj/.git/objects")
            .dir("/home/u/.ssh")
            .dir("/tmp");
        let ctx = ResolveContext {
            cwd: "/home/u/proj".into(),
            home: Some("/home/u".into()),
            tmpdir: None,
            profile_files: vec![],
            ..Default::default()
        };
        resolve(&PermissionProfile::builtin(name).unwrap(), &ctx, &fs).unwrap()
    }

    #[test]
    fn rung_one_rules() {
        let r = fs_rules(&resolved("workspace-write"), Rung::Namespaces);
        assert!(r.contains(&(PathBuf::from("/"), Grant::Read)));
        assert!(r.contains(&(PathBuf::from("/home/u/proj"), Grant::Write)));
        assert!(r.contains(&(PathBuf::from("/tmp"), Grant::Write)));
        assert!(r.contains(&(PathBuf::from("/dev"), Grant::Dev)));
        // Deny entries get no rule; /tmp is not listed twice.
        assert!(!r.iter().any(|(p, _)| p.starts_with("/home/u/.ssh")));
        assert_eq!(r.iter().filter(|(p, _)| p == Path::new("/tmp")).count(), 1);
    }

    #[test]
    fn rung_two_rules_name_devices_one_by_one() {
        let r = fs_rules(&resolved("read-only"), Rung::LandlockOnly);
        assert!(!r.iter().any(|(p, _)| p == Path::new("/dev")));
        assert!(r.contains(&(PathBuf::from("/dev/null"), Grant::Dev)));
        // read-only: nothing writable but /dev/shm (no private /tmp on rung 2).
        let writable: Vec<_> = r.iter().filter(|(_, g)| *g == Grant::Write).collect();
        assert_eq!(writable, vec![&(PathBuf::from("/dev/shm"), Grant::Write)]);
    }

    #[test]
    fn rights_per_abi() {
        assert!(!rights(ABI::V4, Grant::Dev).contains(AccessFs::IoctlDev));
        assert!(rights(ABI::V5, Grant::Dev).contains(AccessFs::IoctlDev));
        assert!(!rights(ABI::V7, Grant::Read).contains(AccessFs::WriteFile));
        assert!(rights(ABI::V7, Grant::Write).contains(AccessFs::Truncate));
        let w = rights(
            ABI::V7,
            Grant::Stdio {
                read: false,
                write: true,
            },
        );
        assert_eq!(w, AccessFs::WriteFile | AccessFs::Truncate);
        let r = rights(
            ABI::V7,
            Grant::Stdio {
                read: true,
                write: false,
            },
        );
        assert_eq!(r, BitFlags::from(AccessFs::ReadFile));
        // Never a directory right, never execute.
        let rw = rights(
            ABI::V7,
            Grant::Stdio {
                read: true,
                write: true,
            },
        );
        assert!(!rw.contains(AccessFs::ReadDir) && !rw.contains(AccessFs::Execute));
        assert!(!rights(
            ABI::V2,
            Grant::Stdio {
                read: false,
                write: true
            }
        )
        .contains(AccessFs::Truncate));
    }
}
