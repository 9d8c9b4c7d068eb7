//! R-L2: with the network restricted, nothing reaches the host's own services — TCP and
//! UDP on 127.0.0.1 and ::1, a pathname unix socket, an abstract unix socket — while a
//! connected `socketpair` (asyncio's self-pipe) keeps working.
#![cfg(target_os = "linux")]

mod support;
use std::io::Read;
use std::net::{TcpListener, UdpSocket};
use std::os::linux::net::SocketAddrExt;
use std::os::unix::net::{SocketAddr, UnixListener};
use std::time::Duration;
use support::*;

/// Python that tries to reach `targets` (`kind host port` / `unix path` / `abstract name`)
/// and prints one `kind:OK` or `kind:ERR` line each.
const PROBE: &str = r#"
import socket, sys
def tcp(fam, host, port):
    s = socket.socket(fam, socket.SOCK_STREAM); s.settimeout(2); s.connect((host, port)); s.send(b"x")
def udp(fam, host, port):
    s = socket.socket(fam, socket.SOCK_DGRAM); s.sendto(b"x", (host, port))
def unix(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM); s.connect(path); s.send(b"x")
args = sys.argv[1:]
while args:
    kind = args.pop(0)
    try:
        if kind == "tcp4": tcp(socket.AF_INET, "127.0.0.1", int(args.pop(0)))
        elif kind == "tcp6": tcp(socket.AF_INET6, "::1", int(args.pop(0)))
        elif kind == "udp4": udp(socket.AF_INET, "127.0.0.1", int(args.pop(0)))
        elif kind == "udp6": udp(socket.AF_INET6, "::1", int(args.pop(0)))
        elif kind == "unix": unix(args.pop(0))
        elif kind == "abstract": unix("\0" + args.pop(0))
        print(kind + ":OK", flush=True)
    except Exception as e:
        print(kind + ":ERR " + type(e).__name__, flush=True)
"#;

#[test]
fn restricted_network_reaches_no_host_service() {
    if !require_full() {
        return;
    }
    let mut args: Vec<String> = Vec::new();
    let tcp4 = TcpListener::bind("127.0.0.1:0").unwrap();
    tcp4.set_nonblocking(true).unwrap();
    args.extend(["tcp4".into(), tcp4.local_addr().unwrap().port().to_string()]);
    let udp4 = UdpSocket::bind("127.0.0.1:0").unwrap();
    udp4.set_nonblocking(true).unwrap();
    args.extend(["udp4".into(), udp4.local_addr().unwrap().port().to_string()]);
    let tcp6 = TcpListener::bind("[::1]:0").ok();
    let udp6 = UdpSocket::bind("[::1]:0").ok();
    if let (Some(t), Some(u)) = (&tcp6, &udp6) {
        t.set_nonblocking(true).unwrap();
        u.set_nonblocking(true).unwrap();
        args.extend(["tcp6".into(), t.local_addr().unwrap().port().to_string()]);
        args.extend(["udp6".into(), u.local_addr().unwrap().port().to_string()]);
    } else {
        eprintln!("note: no IPv6 loopback on this host; ::1 cases not run");
    }
    // A pathname socket in a directory the sandbox can read (outside /tmp).
    let d = outside_dir();
    let sock_path = d.path().join("host.sock");
    let unix = UnixListener::bind(&sock_path).unwrap();
    unix.set_nonblocking(true).unwrap();
    args.extend(["unix".into(), sock_path.display().to_string()]);
    let name = format!("cordon-test-{}", std::process::id());
    let abs =
        UnixListener::bind_addr(&SocketAddr::from_abstract_name(name.as_bytes()).unwrap()).unwrap();
    abs.set_nonblocking(true).unwrap();
    args.extend(["abstract".into(), name]);

    let s = Sandbox::new();
    // Its own network namespace: only a loopback device (down).
    let o = s.sh("tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '");
    assert_eq!(stdout(&o), "lo\n", "{}", stderr(&o));
    let mut argv = vec!["python3", "-c", PROBE];
    argv.extend(args.iter().map(|a| a.as_str()));
    let o = s.run(&argv);
    assert_ok(&o);
    let out = stdout(&o);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), args.len() / 2, "{out}\n{}", stderr(&o));
    for l in &lines {
        assert!(l.contains(":ERR"), "reached a host service: {l}\n{out}");
    }
    // Nothing arrived on the host side.
    std::thread::sleep(Duration::from_millis(50));
    assert!(tcp4.accept().is_err());
    assert!(udp4.recv(&mut [0u8; 8]).is_err());
    if let (Some(t), Some(u)) = (&tcp6, &udp6) {
        assert!(t.accept().is_err());
        assert!(u.recv(&mut [0u8; 8]).is_err());
    }
    assert!(unix.accept().is_err());
    assert!(abs.accept().is_err());

    // Twin: with the network enabled the same probe reaches the listeners, so the probe
    // itself works and the restriction is what blocked it.
    let s = Sandbox::new().network(cordon_policy::NetworkPolicy::Enabled);
    let o = s.run(&[
        "python3",
        "-c",
        PROBE,
        "tcp4",
        &tcp4.local_addr().unwrap().port().to_string(),
    ]);
    assert_ok(&o);
    assert_eq!(stdout(&o).trim(), "tcp4:OK", "{}", stderr(&o));
    tcp4.set_nonblocking(false).unwrap();
    let (mut c, _) = tcp4.accept().unwrap();
    let mut b = [0u8; 1];
    c.read_exact(&mut b).unwrap();
    assert_eq!(&b, b"x");
}

#[test]
fn socketpair_and_asyncio_still_work() {
    if !require_full() {
        return;
    }
    let s = Sandbox::new();
    let o = s.run(&[
        "python3",
        "-c",
        "import asyncio, socket\n\
         asyncio.run(asyncio.sleep(0))\n\
         a, b = socket.socketpair()\n\
         a.sendall(b'ping'); print(b.recv(4).decode())\n\
         try:\n    socket.socket(socket.AF_UNIX)\n    print('socket-allowed')\n\
         except PermissionError:\n    print('socket-denied')",
    ]);
    assert_ok(&o);
    assert_eq!(stdout(&o), "ping\nsocket-denied\n", "{}", stderr(&o));
}
