//! The layers the helper applied (R-S5, R-T5, issue 13 §2), typed: built by the helper from
//! what it did — the plan's typed parts ([`LandlockPlan`], [`SeccompPlan`]), the kernel's
//! answers (Landlock enforcement, whether capabilities could be dropped) — never parsed
//! back from words. `Display` gives the line people read; serde gives `--json`.

use super::plan::{LandlockPlan, SeccompPlan};
use cordon_policy::{Access, ResolvedFilesystem};
use serde::{Deserialize, Serialize};
use std::fmt;

/// How much of a Landlock ruleset the kernel enforces (`restrict_self`'s answer).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Enforcement {
    /// Every handled right is enforced.
    Full,
    /// Some rights of the ruleset are not known to this kernel (tolerated only when no
    /// guarantee rests on Landlock alone).
    Partial,
    /// Nothing is enforced (tolerated only when no guarantee rests on Landlock alone).
    None,
    /// Not applied yet: the plan's prediction (the kernel answers when the helper applies
    /// it). Never in a helper's report.
    Planned,
}

/// What the command sees as `/` on rung 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RootView {
    /// Unrestricted filesystem: the host root, writable.
    HostWritable,
    /// The host root read-only, writable roots bound in.
    HostReadOnly,
    /// The host root writable apart from the carve-outs.
    HostWritableRestricted,
    /// An empty root with only the granted paths bound in.
    Empty,
}

/// One applied layer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "layer", rename_all = "kebab-case")]
pub enum Layer {
    /// New user, mount, pid and ipc namespaces (and net when the network is restricted).
    Namespaces {
        /// A network namespace too.
        net: bool,
    },
    /// The rebuilt root (rung 1).
    Mounts {
        /// What `/` is.
        root: RootView,
        /// Writable roots bound in.
        writable: usize,
        /// Existing deny entries masked.
        denied: usize,
        /// Protected paths re-bound read-only.
        protected: usize,
        /// A private `/tmp` (tmpfs).
        private_tmp: bool,
    },
    /// `PR_SET_NO_NEW_PRIVS`.
    NoNewPrivs,
    /// Capabilities.
    Capabilities {
        /// Bounding, ambient and effective sets emptied and securebits locked (false: the
        /// process held none and could not change the bounding set, i.e. unprivileged).
        bounding_and_securebits: bool,
    },
    /// A Landlock ruleset, as the kernel enforces it.
    Landlock {
        /// The plan it was built from.
        #[serde(flatten)]
        plan: LandlockPlan,
        /// The kernel's answer.
        enforcement: Enforcement,
    },
    /// The seccomp filter.
    Seccomp {
        /// `socket(2)` denied for every family.
        deny_sockets: bool,
        /// `socket(2)` allowed for unix/inet/inet6 only (private network namespace).
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        local_families_only: bool,
    },
    /// The unix-socket guard: init judges every `connect(2)` of the command (issue 10).
    UnixGuard {
        /// Host sockets listed in `network.unix_sockets`.
        listed: usize,
    },
    /// The managed network's proxy port inside the sandbox, served by cordon's filtering
    /// proxy in the helper.
    ProxyRelay {
        /// The port inside the sandbox (`127.0.0.1:PORT`).
        port: u16,
        /// The addresses init bound (applied: `127.0.0.1:3128` and, where the namespace has
        /// IPv6, `[::1]:3128`); empty in a plan.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        addrs: Vec<String>,
    },
    /// `network.local`: host loopback ports relayed into the namespace (issue 10 §6).
    LocalForwards {
        /// The forwarded addresses (`127.0.0.1:5432`), the same inside and on the host.
        addrs: Vec<String>,
    },
    /// Rung 2's supervisor (child subreaper) that kills every descendant.
    Supervisor,
    /// Kernel-side denial records: init judges the command's writing path calls (seccomp
    /// user notification) and records the ones the sandbox refuses (issue 9 §5).
    DenialRecords,
    /// The command's environment is the payload's (scrubbed) environment.
    Environment,
    /// Resource limits (R-H5), one item per limit: planned, the values
    /// ([`super::limits::planned`]); applied, each with how init found it enforced
    /// ([`super::limits::enforced_here`]: `pids 4096: cgroup`, `open files 16384:
    /// RLIMIT_NOFILE`, or `NOT enforced` and why).
    Limits {
        /// One entry per limit.
        items: Vec<String>,
    },
}

impl Layer {
    /// The mount layer of rung 1 for `fs`, counted from the resolved filesystem.
    pub fn mounts(fs: &ResolvedFilesystem, private_tmp: bool) -> Layer {
        match fs {
            ResolvedFilesystem::Unrestricted => Layer::Mounts {
                root: RootView::HostWritable,
                writable: 0,
                denied: 0,
                protected: 0,
                private_tmp: false,
            },
            ResolvedFilesystem::Restricted { default, .. } => Layer::Mounts {
                root: match default {
                    Access::Read => RootView::HostReadOnly,
                    Access::Write => RootView::HostWritableRestricted,
                    Access::Deny => RootView::Empty,
                },
                writable: fs.writable_roots().len(),
                denied: fs.denied().iter().filter(|e| e.exists).count(),
                protected: fs.protected().len(),
                private_tmp,
            },
        }
    }

    /// The seccomp layer of `plan`.
    pub fn seccomp(plan: &SeccompPlan) -> Layer {
        Layer::Seccomp {
            deny_sockets: plan.deny_sockets,
            local_families_only: plan.local_families_only,
        }
    }
}

impl fmt::Display for Layer {
    // Longer than most: one short arm per layer variant (the words people read).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Layer::Namespaces { net } => write!(
                f,
                "user+mount+pid+ipc{}",
                if *net {
                    "+net namespaces (private loopback up)"
                } else {
                    " namespaces"
                }
            ),
            Layer::Mounts {
                root: RootView::HostWritable,
                ..
            } => f.write_str("mounts: host root writable, fresh /proc, minimal /dev"),
            Layer::Mounts {
                root,
                writable,
                denied,
                protected,
                private_tmp,
            } => write!(
                f,
                "mounts: {} root, {writable} writable, {denied} denied, {protected} protected, \
                 {}fresh /proc, minimal /dev",
                match root {
                    RootView::HostReadOnly => "read-only host",
                    RootView::Empty => "empty",
                    _ => "writable host",
                },
                if *private_tmp { "private /tmp, " } else { "" }
            ),
            Layer::NoNewPrivs => f.write_str("no_new_privs"),
            Layer::Capabilities {
                bounding_and_securebits: true,
            } => f.write_str(
                "capabilities dropped (bounding, ambient, effective; securebits locked)",
            ),
            Layer::Capabilities {
                bounding_and_securebits: false,
            } => f.write_str("no capabilities held (unprivileged)"),
            Layer::Landlock { plan, enforcement } => {
                let mut parts = Vec::new();
                if plan.fs {
                    parts.push("fs".to_string());
                }
                if plan.tcp {
                    parts.push("tcp".to_string());
                }
                let mut scopes = Vec::new();
                if plan.scope_abstract_unix {
                    scopes.push("abstract-unix");
                }
                if plan.scope_signal {
                    scopes.push("signal");
                }
                if !scopes.is_empty() {
                    parts.push(format!("scope: {}", scopes.join(", ")));
                }
                write!(
                    f,
                    "landlock ABI {} ({}) {}",
                    plan.abi,
                    parts.join(", "),
                    match enforcement {
                        Enforcement::Full => "fully enforced",
                        Enforcement::Partial => "partially enforced",
                        Enforcement::None => "NOT enforced",
                        Enforcement::Planned => "planned",
                    }
                )
            }
            Layer::UnixGuard { listed } => write!(
                f,
                "unix-socket guard (connect judged by init: pathname sockets only on writable \
                 mounts or among the {listed} in network.unix_sockets; unix datagrams refused)"
            ),
            Layer::ProxyRelay { port, addrs } if !addrs.is_empty() => write!(
                f,
                "proxy port {} (port {port} inside) -> cordon's filtering proxy \
                 (network.allow/deny)",
                addrs.join(" and ")
            ),
            Layer::ProxyRelay { port, .. } => write!(
                f,
                "proxy port 127.0.0.1:{port} -> cordon's filtering proxy (network.allow/deny)"
            ),
            Layer::LocalForwards { addrs } => write!(
                f,
                "host loopback ports relayed in (network.local): {}; no other host port",
                addrs.join(", ")
            ),
            Layer::Seccomp {
                deny_sockets,
                local_families_only,
            } => write!(
                f,
                "seccomp filter (ptrace, new namespaces, mount, io_uring, keyring, bpf, perf, \
                 module/kexec, TIOCSTI, setuid/setgid modes{}; clone3 -> ENOSYS; foreign \
                 arch/x32 killed)",
                if *deny_sockets {
                    ", socket() of every family"
                } else if *local_families_only {
                    ", socket() other than unix/inet/inet6"
                } else {
                    ""
                }
            ),
            Layer::Supervisor => f.write_str(
                "supervisor (subreaper): every descendant killed when the command exits or the \
                 helper is killed",
            ),
            Layer::DenialRecords => f.write_str(
                "denial records (writing path calls judged by init via seccomp user \
                 notification; refusals recorded on the helper's channel; a file with several \
                 hard links is not written or changed in place)",
            ),
            Layer::Environment => f.write_str("environment replaced by the scrubbed payload env"),
            Layer::Limits { items } => write!(f, "limits: {}", items.join(", ")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_and_json() {
        let l = Layer::Landlock {
            plan: LandlockPlan {
                abi: 6,
                fs: true,
                tcp: true,
                scope_abstract_unix: false,
                scope_signal: true,
                required: false,
            },
            enforcement: Enforcement::Full,
        };
        assert_eq!(
            l.to_string(),
            "landlock ABI 6 (fs, tcp, scope: signal) fully enforced"
        );
        let v = serde_json::to_value(&l).unwrap();
        assert_eq!(v["layer"], "landlock");
        assert_eq!(v["abi"], 6);
        assert_eq!(v["enforcement"], "full");
        let back: Layer = serde_json::from_value(v).unwrap();
        assert_eq!(back, l);
        assert_eq!(
            Layer::Namespaces { net: true }.to_string(),
            "user+mount+pid+ipc+net namespaces (private loopback up)"
        );
        let m = Layer::mounts(&ResolvedFilesystem::Unrestricted, true);
        assert!(m.to_string().starts_with("mounts: host root writable"));
        let v = serde_json::to_value(Layer::Seccomp {
            deny_sockets: true,
            local_families_only: false,
        })
        .unwrap();
        assert_eq!(
            v,
            serde_json::json!({"layer": "seccomp", "deny_sockets": true})
        );
    }
}
