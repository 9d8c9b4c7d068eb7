//! Pseudo-terminals and process sessions for the library's long-running commands (R-X1):
//! a pty pair whose slave becomes the command's terminal (the helper binds it at
//! `/dev/console` inside the sandbox, see `mounts.rs`), its window size, and the
//! spawn-time setup that makes the helper a session leader (its own process group, the
//! pty as controlling terminal).

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::process::Command;

/// A new pseudo-terminal of `rows` × `cols`: `(master, slave)`, both close-on-exec (the
/// slave reaches the command only as its stdin/stdout/stderr).
///
/// Errors: `openpty` failed (e.g. no free pty: `ENOSPC`/`EAGAIN`).
pub fn open_pty(rows: u16, cols: u16) -> io::Result<(OwnedFd, OwnedFd)> {
    let mut master: libc::c_int = -1;
    let mut slave: libc::c_int = -1;
    let ws = winsize(rows, cols);
    // SAFETY: the out-pointers are valid ints; name is NULL (not wanted); termios NULL
    // (defaults); `ws` is a valid winsize read by the call.
    let r = unsafe {
        libc::openpty(
            &mut master,
            &mut slave,
            std::ptr::null_mut(),
            std::ptr::null(),
            &ws,
        )
    };
    if r != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: openpty succeeded: both are new descriptors this function now owns.
    let (m, s) = unsafe { (OwnedFd::from_raw_fd(master), OwnedFd::from_raw_fd(slave)) };
    for fd in [&m, &s] {
        // SAFETY: fcntl on a descriptor we own; no memory is involved.
        if unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_SETFD, libc::FD_CLOEXEC) } != 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok((m, s))
}

fn winsize(rows: u16, cols: u16) -> libc::winsize {
    libc::winsize {
        ws_row: rows,
        ws_col: cols,
        ws_xpixel: 0,
        ws_ypixel: 0,
    }
}

/// Sets the window size of the terminal `fd` (the master side): the kernel sends
/// `SIGWINCH` to the terminal's foreground process group.
///
/// Errors: `fd` is not a terminal (`ENOTTY`).
pub fn set_window_size(fd: &OwnedFd, rows: u16, cols: u16) -> io::Result<()> {
    let ws = winsize(rows, cols);
    // SAFETY: TIOCSWINSZ reads one `winsize` from the valid pointer.
    if unsafe { libc::ioctl(fd.as_raw_fd(), libc::TIOCSWINSZ, &ws) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Makes the process `cmd` spawns a session leader (`setsid`: a new session and process
/// group, so signals to the group reach only this run), with its stdin as controlling
/// terminal when `controlling_tty` (stdin must then be a pty slave). (The helper itself
/// asks for `SIGKILL` when the thread that started it dies, `PR_SET_PDEATHSIG`: a process
/// session never outlives the program that started it.)
pub fn attach_session(cmd: &mut Command, controlling_tty: bool) {
    use std::os::unix::process::CommandExt;
    // SAFETY: the closure runs between fork and exec and calls only async-signal-safe
    // functions (setsid, ioctl); it allocates nothing.
    unsafe {
        cmd.pre_exec(move || {
            if libc::setsid() < 0 {
                return Err(io::Error::last_os_error());
            }
            if controlling_tty && libc::ioctl(0, libc::TIOCSCTTY, 0) != 0 {
                return Err(io::Error::last_os_error());
            }
            Ok(())
        });
    }
}
