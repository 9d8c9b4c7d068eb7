//! The `[network]` table beyond its mode (R-P4, issue 10 §3): host unix sockets the
//! command may reach in every network mode, and the consent that container-engine sockets
//! need. Pure: no OS calls.
//!
//! ```toml
//! [profiles.dev.network]
//! mode = "restricted"                          # enabled | restricted
//! unix_sockets = ["/run/user/1000/ssh-agent.sock", "~/.gnupg/S.gpg-agent"]
//! i_understand_host_root = false               # needed for docker.sock, podman.sock, …
//! local = ["127.0.0.1:5432", "[::1]:6379"]     # host loopback ports forwarded in
//! ```

use serde::{Deserialize, Serialize};
use std::net::SocketAddr;

/// Extra network rules of a profile (the `[network]` table minus `mode`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NetworkRules {
    /// Host pathname unix sockets the command may `connect(2)` to in every network mode
    /// (R-N2), spelled like filesystem entries (`/abs`, `~/…`, `:home/…`). Every other
    /// host socket outside the writable roots is refused, even with the network enabled.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unix_sockets: Vec<String>,
    /// Consent to list a container-engine socket (see [`container_engine_socket`]):
    /// whoever reaches one is root on the host.
    #[serde(default, skip_serializing_if = "is_false")]
    pub i_understand_host_root: bool,
    /// Hosts the filtering proxy lets through ([`crate::hosts`] spellings). A bare `*` is
    /// a load error.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allow: Vec<String>,
    /// Hosts the proxy refuses even when an allow entry matches (deny wins).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub deny: Vec<String>,
    /// When not empty, the only destination ports the proxy connects to.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ports: Vec<u16>,
    /// Host loopback services forwarded into the sandbox (issue 10 §6), `ADDR:PORT` with
    /// a loopback address (`127.0.0.1:5432`, `[::1]:6379`): inside, the same address and
    /// port reach exactly that host port through the relay; nothing else of the host's
    /// loopback is reachable. See [`parse_local`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub local: Vec<String>,
}

/// The port the managed network's proxy answers on inside the sandbox, on `127.0.0.1`
/// and `[::1]` (`HTTP_PROXY=http://127.0.0.1:3128`).
pub const MANAGED_PROXY_PORT: u16 = 3128;

/// Checks `network.local` against the network mode: with a managed network the proxy
/// holds `127.0.0.1:3128` and `[::1]:3128` inside, so a forward of either cannot be given.
///
/// Errors: such an entry, with what to do (a configuration error: no sandbox choice or
/// `--allow-unconfined` changes it).
pub fn check_local_for_mode(local: &[SocketAddr], managed: bool) -> Result<(), String> {
    match local
        .iter()
        .find(|a| managed && a.port() == MANAGED_PROXY_PORT && a.ip().is_loopback())
    {
        Some(a)
            if a.ip() == std::net::Ipv4Addr::LOCALHOST
                || a.ip() == std::net::Ipv6Addr::LOCALHOST =>
        {
            Err(format!(
                "network.local: {a} is where the managed network's proxy answers inside the \
             sandbox (port {MANAGED_PROXY_PORT}), so a host service on it cannot be forwarded \
             with a managed network; use network = \"restricted\" with this forward, or \
             serve it on another port"
            ))
        }
        _ => Ok(()),
    }
}

/// Parses one `network.local` entry: a loopback address (`127.0.0.0/8` or `::1`) and a
/// port 1–65535, e.g. `127.0.0.1:5432` or `[::1]:6379`.
///
/// Errors: not `ADDR:PORT`, port 0, or an address that is not loopback (a message naming
/// the entry and what to write instead).
pub fn parse_local(entry: &str) -> Result<SocketAddr, String> {
    let e = entry.trim();
    let a: SocketAddr = e.parse().map_err(|_| {
        format!(
            "network.local: {entry:?} is not ADDR:PORT with a loopback address and a port \
             1-65535 (e.g. \"127.0.0.1:5432\" or \"[::1]:6379\")"
        )
    })?;
    if a.port() == 0 {
        return Err(format!(
            "network.local: {entry:?}: 0 is not a port (1-65535)"
        ));
    }
    if !a.ip().is_loopback() {
        return Err(format!(
            "network.local: {entry:?} is not a loopback address: only host loopback services \
             (127.0.0.0/8, ::1) can be forwarded; for other hosts use network = \"managed\" \
             with network.allow"
        ));
    }
    Ok(a)
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// Names of container-engine (and similar host-root) sockets: a file name that starts
/// with one of these (case-insensitive) is one, e.g. `docker.sock`, `podman.sock`,
/// `containerd.sock`, `containerd.sock.ttrpc`, `docker-cli.sock`.
pub const CONTAINER_ENGINE_SOCKETS: &[&str] = &[
    "docker",
    "podman",
    "containerd",
    "cri-dockerd",
    "crio",
    "buildkitd",
    "lxd",
    "incus",
];

/// Whether `path`'s file name names a container-engine socket (R-N2): reaching one
/// means being able to start a privileged container that mounts the host's `/`.
/// Returns the engine name that matched.
pub fn container_engine_socket(path: &str) -> Option<&'static str> {
    let name = path
        .trim_end_matches('/')
        .rsplit('/')
        .next()
        .unwrap_or(path)
        .to_ascii_lowercase();
    CONTAINER_ENGINE_SOCKETS
        .iter()
        .copied()
        .find(|e| name.starts_with(e) && name.contains("sock"))
}

impl NetworkRules {
    /// Nothing set.
    pub fn is_empty(&self) -> bool {
        self.unix_sockets.is_empty()
            && !self.i_understand_host_root
            && self.allow.is_empty()
            && self.deny.is_empty()
            && self.ports.is_empty()
            && self.local.is_empty()
    }

    /// The parsed `network.local` entries, deduplicated, in order.
    ///
    /// Errors: the first bad entry (see [`parse_local`]).
    pub fn local_addrs(&self) -> Result<Vec<SocketAddr>, String> {
        let mut v: Vec<SocketAddr> = Vec::new();
        for e in &self.local {
            let a = parse_local(e)?;
            if !v.contains(&a) {
                v.push(a);
            }
        }
        Ok(v)
    }

    /// Checks the rules (R-N2): an empty spelling, or a container-engine socket without
    /// `i_understand_host_root = true`, is an error saying what to do.
    pub fn validate(&self) -> Result<(), String> {
        for s in &self.unix_sockets {
            if s.trim().is_empty() {
                return Err("network.unix_sockets has an empty path".into());
            }
            self.check_host_root(s)?;
        }
        for (list, entries) in [("allow", &self.allow), ("deny", &self.deny)] {
            for e in entries {
                crate::hosts::HostRule::parse(e).map_err(|m| format!("network.{list}: {m}"))?;
            }
        }
        if self.ports.contains(&0) {
            return Err("network.ports: 0 is not a port".into());
        }
        self.local_addrs()?;
        Ok(())
    }

    /// The error for a container-engine socket listed without consent (also used on the
    /// canonical path a spelling resolves to, so a symlink does not hide one).
    pub fn check_host_root(&self, path: &str) -> Result<(), String> {
        match container_engine_socket(path) {
            Some(engine) if !self.i_understand_host_root => Err(host_root_message(path, engine)),
            _ => Ok(()),
        }
    }
}

/// Why a container-engine socket needs consent, and how to give it.
pub fn host_root_message(path: &str, engine: &str) -> String {
    format!(
        "network.unix_sockets lists {path}, a {engine} socket: whoever can connect to it \
         is root on the host (it can start a privileged container that mounts /). Add \
         `i_understand_host_root = true` to the profile's [network] table if that is \
         intended"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn container_engine_sockets_are_recognised_by_name() {
        for p in [
            "/var/run/docker.sock",
            "/run/docker.sock",
            "/run/user/1000/podman/podman.sock",
            "/run/containerd/containerd.sock",
            "/run/containerd/containerd.sock.ttrpc",
            "~/.docker/run/docker.sock",
            "/home/u/.colima/default/docker.sock",
            "/tmp/Docker.sock",
        ] {
            assert!(container_engine_socket(p).is_some(), "{p}");
        }
        for p in [
            "/run/user/1000/ssh-agent.sock",
            "/run/user/1000/bus",
            "/tmp/dockerfile-notes.txt",
            "/home/u/podman/", // a directory named podman, no socket name
        ] {
            assert!(container_engine_socket(p).is_none(), "{p}");
        }
    }

    #[test]
    fn engine_sockets_need_consent() {
        let mut r = NetworkRules {
            unix_sockets: vec![
                "/run/user/1000/ssh.sock".into(),
                "/var/run/docker.sock".into(),
            ],
            ..Default::default()
        };
        let e = r.validate().unwrap_err();
        assert!(
            e.contains("/var/run/docker.sock") && e.contains("root on the host"),
            "{e}"
        );
        assert!(e.contains("i_understand_host_root = true"), "{e}");
        r.i_understand_host_root = true;
        assert!(r.validate().is_ok());
        r.unix_sockets.push(" ".into());
        assert!(r.validate().is_err());
    }

    #[test]
    fn local_entries_are_loopback_ports_only() {
        assert_eq!(
            parse_local("127.0.0.1:5432").unwrap(),
            "127.0.0.1:5432".parse().unwrap()
        );
        assert_eq!(
            parse_local(" [::1]:6379 ").unwrap(),
            "[::1]:6379".parse().unwrap()
        );
        assert!(parse_local("127.0.0.2:80").is_ok());
        for (bad, says) in [
            ("10.0.0.1:5432", "not a loopback address"),
            ("0.0.0.0:5432", "not a loopback address"),
            ("[::]:5432", "not a loopback address"),
            ("127.0.0.1:0", "0 is not a port"),
            ("127.0.0.1:65536", "not ADDR:PORT"),
            ("127.0.0.1", "not ADDR:PORT"),
            ("localhost:5432", "not ADDR:PORT"),
            ("5432", "not ADDR:PORT"),
        ] {
            let e = parse_local(bad).unwrap_err();
            assert!(
                e.contains(says) && e.starts_with("network.local"),
                "{bad}: {e}"
            );
        }
        let r = NetworkRules {
            local: vec![
                "127.0.0.1:5432".into(),
                "127.0.0.1:5432".into(),
                "[::1]:1".into(),
            ],
            ..Default::default()
        };
        assert_eq!(r.local_addrs().unwrap().len(), 2);
        assert!(r.validate().is_ok());
        let r = NetworkRules {
            local: vec!["192.168.1.1:22".into()],
            ..Default::default()
        };
        assert!(r.validate().is_err());
    }

    #[test]
    fn bare_star_is_a_load_error() {
        let r = NetworkRules {
            allow: vec!["crates.io".into(), "*".into()],
            ..Default::default()
        };
        let e = r.validate().unwrap_err();
        assert!(
            e.starts_with("network.allow: \"*\" would match every host"),
            "{e}"
        );
    }
}
