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

/// What [`drop_all`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dropped {
    /// The bounding set was emptied and securebits locked (needs `CAP_SETPCAP`, which an
    /// unprivileged process outside a user namespace does not have; it then has no
    /// capability to drop and `no_new_privs` keeps it that way).
    pub bounding_and_securebits: bool,
}

/// Drops every capability of the calling thread (see the module docs).
///
/// Errors: a step that should have succeeded failed (message names the step).
pub fn drop_all() -> Result<Dropped, String> {
    let mut bounding = true;
    for cap in 0..64u64 {
        match sys::prctl(libc::PR_CAPBSET_DROP, cap as libc::c_ulong) {
            Ok(_) => {}
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) => break, // past CAP_LAST_CAP
            Err(e) if e.raw_os_error() == Some(libc::EPERM) => {
                bounding = false;
                break;
            }
            Err(e) => {
                return Err(format!(
                    "dropping capability {cap} from the bounding set: {e}"
                ))
            }
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
        .map_err(|e| format!("setting securebits: {e}"))?;
    }
    sys::clear_ambient_caps().map_err(|e| format!("clearing ambient capabilities: {e}"))?;
    sys::clear_caps().map_err(|e| format!("clearing capabilities: {e}"))?;
    Ok(Dropped {
        bounding_and_securebits: bounding,
    })
}
