//! The `[network]` table beyond its mode (R-P4, issue 10 §3): host unix sockets the
//! command may reach in every network mode, and the consent that container-engine sockets
//! need. Pure: no OS calls.
//!
//! ```toml
//! [profiles.dev.network]
//! mode = "restricted"                          # enabled | restricted
//! unix_sockets = ["/run/user/1000/ssh-agent.sock", "~/.gnupg/S.gpg-agent"]
//! i_understand_host_root = false               # needed for docker.sock, podman.sock, …
//! ```

use serde::{Deserialize, Serialize};

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
