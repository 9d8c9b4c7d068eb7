//! The command's private loopback (R-L2, issue 10 §1): in a new network namespace the
//! kernel creates `lo` down; init brings it up (`SIOCSIFFLAGS` on a throw-away socket,
//! with `CAP_NET_ADMIN` over the namespace its user namespace owns) before confining
//! itself. The command can then listen on and connect to 127.0.0.1 and ::1 — its own
//! namespace's addresses; the host's listeners live in another namespace and are not
//! reachable.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

/// Sets `IFF_UP` on `lo` of the calling process's network namespace (idempotent: a
/// `lo` already up is left as it is, without a second `SIOCSIFFLAGS`).
///
/// Errors: the socket or either ioctl failed (e.g. `EPERM` outside a namespace the
/// caller administers).
pub fn bring_up_lo() -> io::Result<()> {
    // SAFETY: socket(2) has no memory-safety preconditions.
    let raw = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
    if raw < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `raw` is a fresh descriptor owned by nothing else.
    let sock = unsafe { OwnedFd::from_raw_fd(raw) };
    // SAFETY: ifreq is plain old data; all-zero is a valid value.
    let mut req: libc::ifreq = unsafe { std::mem::zeroed() };
    for (d, s) in req.ifr_name.iter_mut().zip(b"lo\0") {
        *d = *s as libc::c_char;
    }
    // SAFETY: `req` is a valid ifreq for SIOCGIFFLAGS, which writes ifru_flags.
    if unsafe {
        libc::ioctl(
            sock.as_raw_fd(),
            libc::SIOCGIFFLAGS as libc::Ioctl,
            &mut req,
        )
    } < 0
    {
        return Err(io::Error::last_os_error());
    }
    let up = (libc::IFF_UP | libc::IFF_RUNNING) as libc::c_short;
    // SAFETY: SIOCGIFFLAGS filled ifru_flags, the union member read and written here.
    unsafe {
        if req.ifr_ifru.ifru_flags & up == up {
            // Already up (a template's spare namespace is brought up when it is made):
            // setting the flags again costs a device notification per command.
            return Ok(());
        }
        req.ifr_ifru.ifru_flags |= up;
    }
    // SAFETY: `req` is a valid ifreq naming `lo` with the flags to set.
    if unsafe { libc::ioctl(sock.as_raw_fd(), libc::SIOCSIFFLAGS as libc::Ioctl, &req) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}
