//! The managed network's relay (issue 10 §5), run by init inside the command's private
//! network namespace: it listens on `127.0.0.1:`[`PROXY_PORT`] (and `[::1]` when the
//! namespace has IPv6) and carries every connection to the filtering proxy, which serves
//! a unix socket on the host (`cordon-proxy`, started by the helper). The socket file is
//! pinned by an `O_PATH` descriptor opened before the root is rebuilt and connected to
//! through `/proc/self/fd/N`, so the command never sees its path (and the unix-socket
//! guard refuses it anyway: it lives on a read-only mount). Nothing else leaves the
//! namespace: a program that ignores the proxy variables reaches nothing, and direct DNS
//! fails at once (no route, or a refused port on the private loopback).
//!
//! `network.local` (issue 10 §6) uses the same relay: for each listed host loopback port,
//! init listens on the same address and port inside the namespace and carries every
//! connection to a unix socket the helper serves on the host, which connects to exactly
//! that host port. Nothing else of the host's loopback is reachable.

use std::io;
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::path::Path;

/// The port the proxy answers on inside the sandbox (`HTTP_PROXY=http://127.0.0.1:3128`).
pub const PROXY_PORT: u16 = 3128;

/// Opens the proxy's socket file (`O_PATH`) in the current — host's — view.
///
/// Errors: the path cannot be opened.
pub fn pin(path: &Path) -> io::Result<OwnedFd> {
    super::sys::open_path(path, false)
}

/// Listens on `127.0.0.1:PROXY_PORT` and, if possible, `[::1]:PROXY_PORT` (before the
/// command starts, so its first connection is queued, not refused).
///
/// Errors: the IPv4 listener cannot be bound (the loopback must be up).
pub fn listen() -> io::Result<Vec<TcpListener>> {
    let mut v = vec![TcpListener::bind(("127.0.0.1", PROXY_PORT))?];
    if let Ok(l) = TcpListener::bind(("::1", PROXY_PORT)) {
        v.push(l);
    }
    Ok(v)
}

/// Listens on `addr` inside the namespace (a `network.local` forward), before the command
/// starts.
///
/// Errors: the address cannot be bound (e.g. `::1` without IPv6 in the namespace).
pub fn listen_on(addr: SocketAddr) -> io::Result<TcpListener> {
    TcpListener::bind(addr)
}

/// Starts one accept thread per listener; each connection gets a fresh connection to the
/// proxy and two copy threads.
///
/// Errors: a thread could not be started.
pub fn start(listeners: Vec<TcpListener>, target: OwnedFd) -> io::Result<()> {
    let via = std::sync::Arc::new(format!("/proc/self/fd/{}", target.as_raw_fd()));
    // The descriptor must outlive every connection: init keeps it until it exits.
    std::mem::forget(target);
    for l in listeners {
        let via = std::sync::Arc::clone(&via);
        std::thread::Builder::new()
            .name("proxy-relay".into())
            .spawn(move || {
                for c in l.incoming() {
                    let Ok(c) = c else { continue };
                    let via = std::sync::Arc::clone(&via);
                    let _ = std::thread::Builder::new()
                        .stack_size(128 * 1024)
                        .spawn(move || relay_one(c, &via));
                }
            })?;
    }
    Ok(())
}

fn relay_one(c: TcpStream, via: &str) {
    let Ok(up) = UnixStream::connect(via) else {
        return;
    };
    let _ = c.set_nodelay(true);
    let (Ok(c2), Ok(up2)) = (c.try_clone(), up.try_clone()) else {
        return;
    };
    let t = std::thread::Builder::new()
        .stack_size(128 * 1024)
        .spawn(move || {
            let (mut r, mut w) = (c2, up2);
            let _ = io::copy(&mut r, &mut w);
            let _ = w.shutdown(Shutdown::Write);
        });
    let (mut r, mut w) = (up, c);
    let _ = io::copy(&mut r, &mut w);
    let _ = w.shutdown(Shutdown::Write);
    if let Ok(t) = t {
        let _ = t.join();
    }
}
