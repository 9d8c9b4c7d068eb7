//! Pseudo-terminals and process sessions for the library's long-running commands (R-X1):
//! a pty pair whose slave becomes the command's terminal (the helper binds it at
//! `/dev/console` inside the sandbox, see `mounts.rs`), its window size, and the
//! spawn-time setup that makes the helper a session leader (its own process group, the
//! pty as controlling terminal).

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::process::Command;

/// A new pseudo-terminal of `rows` × `cols`: `(master, slave)`, both close-on-exec from
/// the moment they exist (the slave reaches the command only as its stdin/stdout/stderr).
/// Atomically so: `openpty(3)` returns inheritable descriptors that are marked afterwards,
/// and a process spawning other children meanwhile (`cordon mcp`, a harness) would hand
/// one session's terminal to another's helper (the kind of attack pass 148 F1). The
/// master comes from `posix_openpt(O_CLOEXEC)`, the slave from `TIOCGPTPEER` (Linux ≥
/// 4.13), else by name with `O_CLOEXEC`.
///
/// Errors: no pty could be made (e.g. no free pty: `ENOSPC`/`EAGAIN`).
pub fn open_pty(rows: u16, cols: u16) -> io::Result<(OwnedFd, OwnedFd)> {
    use nix::fcntl::OFlag;
    let flags = OFlag::O_RDWR | OFlag::O_NOCTTY | OFlag::O_CLOEXEC;
    let master = nix::pty::posix_openpt(flags)?;
    nix::pty::grantpt(&master)?;
    nix::pty::unlockpt(&master)?;
    // SAFETY: TIOCGPTPEER takes open flags by value and returns a new descriptor.
    let peer = unsafe {
        libc::ioctl(
            master.as_raw_fd(),
            libc::TIOCGPTPEER,
            flags.bits() as libc::c_ulong,
        )
    };
    let slave = if peer >= 0 {
        // SAFETY: the ioctl returned a new descriptor this function now owns.
        unsafe { OwnedFd::from_raw_fd(peer) }
    } else {
        let name = nix::pty::ptsname_r(&master)?;
        nix::fcntl::open(name.as_str(), flags, nix::sys::stat::Mode::empty())?
    };
    // SAFETY: `into_raw_fd` hands over the master's descriptor, owned from here on.
    let master = unsafe { OwnedFd::from_raw_fd(std::os::fd::IntoRawFd::into_raw_fd(master)) };
    set_window_size(&master, rows, cols)?;
    Ok((master, slave))
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Both ends are close-on-exec from the start (a spawn on another thread must not
    /// inherit either), the slave is the master's terminal, and it has the size asked for.
    #[test]
    fn a_new_pty_is_close_on_exec_connected_and_sized() {
        let (m, s) = open_pty(33, 101).unwrap();
        for fd in [&m, &s] {
            // SAFETY: F_GETFD only reads the descriptor's flags.
            let flags = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_GETFD) };
            assert_eq!(flags & libc::FD_CLOEXEC, libc::FD_CLOEXEC);
        }
        let mut ws = winsize(0, 0);
        // SAFETY: TIOCGWINSZ writes one winsize through the valid pointer.
        let r = unsafe { libc::ioctl(s.as_raw_fd(), libc::TIOCGWINSZ, &mut ws) };
        assert_eq!(r, 0);
        assert_eq!((ws.ws_row, ws.ws_col), (33, 101));
        let mut slave = std::fs::File::from(s);
        std::io::Write::write_all(&mut slave, b"x\n").unwrap();
        let mut buf = [0u8; 8];
        let n = nix::unistd::read(&m, &mut buf).unwrap();
        assert!(buf[..n].starts_with(b"x"), "{:?}", &buf[..n]);
    }
}
