//! Dropping every capability before exec (R-L3), even when cordon runs as root: the
//! bounding set is emptied, the ambient set cleared, securebits set and locked so that
//! uid 0 gains nothing through `execve`, then the effective, permitted and inheritable
//! sets are cleared.

use super::sys;

// <linux/securebits.h>
const SECBIT_NOROOT: libc::c_ulong = 1 << 0;
const SECBIT_NOROOT_LOCKED: libc::c_ulong = 1 << 1;
const SECBIT_NO_SETUID_FIXUP: libc::c_ulong = 1 << 2;
const SECBIT_NO_SETUID_FIXUP_LOCKED: libc::c_ulong = 1 << 3;
const SECBIT_KEEP_CAPS_LOCKED: libc::c_ulong = 1 << 5;
const SECBIT_NO_CAP_AMBIENT_RAISE: libc::c_ulong = 1 << 6;
const SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED: libc::c_ulong = 1 << 7;

/// What [`drop_all_but`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dropped {
    /// The bounding set was emptied and securebits locked (needs `CAP_SETPCAP`, which an
    /// unprivileged process outside a user namespace does not have; it then has no
    /// capability to drop and `no_new_privs` keeps it that way).
    pub bounding_and_securebits: bool,
}

/// The step of [`drop_all_but`] that failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CapStep {
    /// `PR_CAPBSET_DROP` of this capability number.
    Bounding(u64),
    /// `PR_SET_SECUREBITS` (set and lock).
    Securebits,
    /// `PR_CAP_AMBIENT_CLEAR_ALL`.
    Ambient,
    /// `capset` with empty effective, permitted and inheritable sets.
    Sets,
}

impl std::fmt::Display for CapStep {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CapStep::Bounding(cap) => write!(f, "dropping capability {cap} from the bounding set"),
            CapStep::Securebits => f.write_str("setting securebits"),
            CapStep::Ambient => f.write_str("clearing ambient capabilities"),
            CapStep::Sets => f.write_str("clearing capabilities"),
        }
    }
}

/// A failed [`drop_all_but`]: the step and the OS error.
#[derive(Debug, thiserror::Error)]
#[error("{step}: {source}")]
pub struct CapsError {
    /// What was being done.
    pub step: CapStep,
    /// The kernel's answer.
    #[source]
    pub source: std::io::Error,
}

/// `CAP_SYS_PTRACE` (<linux/capability.h>).
pub const CAP_SYS_PTRACE: u32 = 19;

/// Drops every capability of the calling thread (see the module docs), except that `keep` stays in the effective and permitted sets (the bounding
/// set is emptied all the same, so no program executed from here on gets it back: the
/// command, forked and executed by the keeper, has none). Rung 1's init keeps
/// `CAP_SYS_PTRACE` in the sandbox's user namespace so its seccomp supervisor can read the
/// memory and descriptors of a command that made itself non-dumpable (new-user pass nu31,
/// F1: `ssh-agent`, `gpg-agent`). The command's fork clears it before `execve`
/// ([`super::process::spawn`]).
///
/// Errors: [`CapsError`], a step that should have succeeded failed.
pub fn drop_all_but(keep: Option<u32>) -> Result<Dropped, CapsError> {
    let err = |step| move |source| CapsError { step, source };
    let mut bounding = true;
    for cap in 0..64u64 {
        match sys::prctl(libc::PR_CAPBSET_DROP, cap as libc::c_ulong) {
            Ok(_) => {}
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) => break, // past CAP_LAST_CAP
            Err(e) if e.raw_os_error() == Some(libc::EPERM) => {
                bounding = false;
                break;
            }
            Err(e) => return Err(err(CapStep::Bounding(cap))(e)),
        }
    }
    if bounding {
        sys::prctl(
            libc::PR_SET_SECUREBITS,
            SECBIT_NOROOT
                | SECBIT_NOROOT_LOCKED
                | SECBIT_NO_SETUID_FIXUP
                | SECBIT_NO_SETUID_FIXUP_LOCKED
                | SECBIT_KEEP_CAPS_LOCKED
                | SECBIT_NO_CAP_AMBIENT_RAISE
                | SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED,
        )
        .map_err(err(CapStep::Securebits))?;
    }
    sys::clear_ambient_caps().map_err(err(CapStep::Ambient))?;
    // Kept only where the bounding set is empty: nothing executed can regain it.
    sys::keep_only_cap(keep.filter(|_| bounding)).map_err(err(CapStep::Sets))?;
    Ok(Dropped {
        bounding_and_securebits: bounding,
    })
}
