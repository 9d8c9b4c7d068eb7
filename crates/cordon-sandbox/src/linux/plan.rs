//! Choosing the rung (R-L5, R-S4): which layers will confine the command on this host, or a
//! refusal naming the guarantee that no available layer can give. Pure: no OS calls.

use super::features::{
    valid_layer_names, Availability, LinuxFeatures, DENIAL_RECORDS_LAYER, DISABLE_LAYERS_ENV,
};
use super::layer::{Enforcement, Layer};
use cordon_policy::{Access, EntryOrigin, NetworkPolicy, ResolvedFilesystem, ResolvedProfile};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::path::{Path, PathBuf};

/// Lowest Landlock ABI that confines writes on its own: ABI 3 handles `truncate(2)`, which
/// earlier ABIs leave open on any file the user may write by DAC.
pub const MIN_LANDLOCK_ABI_FS: u32 = 3;
/// Landlock ABI with TCP bind/connect rules (Linux 6.7).
pub const LANDLOCK_ABI_NET: u32 = 4;
/// Landlock ABI with scopes: abstract unix sockets and signals (Linux 6.12).
pub const LANDLOCK_ABI_SCOPE: u32 = 6;

/// The rung of the ladder the command runs on (R-L5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Rung {
    /// Rung 1: user + mount + pid + ipc (+ net) namespaces with a rebuilt root, plus
    /// Landlock and seccomp when available.
    Namespaces,
    /// Rung 2: no user namespaces; Landlock + seccomp + a supervisor (child subreaper) that
    /// kills every descendant when the command exits or the helper dies. Only when it still
    /// gives every guarantee the profile asks for.
    LandlockOnly,
}

/// The Landlock part of a plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LandlockPlan {
    /// ABI the ruleset is built for (the kernel's, capped at what the `landlock` crate
    /// knows).
    pub abi: u32,
    /// Filesystem rights are handled (restricted filesystem).
    pub fs: bool,
    /// TCP bind/connect are handled with no rule allowing any port (ABI >= 4, network
    /// restricted on rung 2; rung 1 has a private network namespace instead).
    pub tcp: bool,
    /// Connecting to abstract unix sockets created outside the sandbox is denied (ABI >= 6,
    /// every network mode).
    pub scope_abstract_unix: bool,
    /// Signalling processes outside the sandbox is denied (ABI >= 6).
    pub scope_signal: bool,
    /// Some guarantee rests on Landlock alone: the helper refuses to run when the kernel
    /// does not enforce the ruleset fully.
    pub required: bool,
}

/// The seccomp part of a plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SeccompPlan {
    /// `socket(2)` fails with `EPERM` for every family, `AF_UNIX` included (network
    /// restricted on rung 2). `socketpair(2)` keeps working.
    pub deny_sockets: bool,
    /// `socket(2)` only for `AF_UNIX`, `AF_INET`, `AF_INET6` (network restricted on rung
    /// 1: the private network namespace reaches nothing).
    #[serde(default)]
    pub local_families_only: bool,
    /// Some guarantee rests on seccomp (always true when `deny_sockets` or the unix-socket
    /// guard runs).
    pub required: bool,
}

/// What the helper will apply, decided by [`plan`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LinuxPlan {
    /// The rung.
    pub rung: Rung,
    /// A network namespace is created (rung 1, network restricted).
    pub net_namespace: bool,
    /// Init brings `lo` up in that namespace: the command gets a private 127.0.0.1/::1
    /// (see `super::loopback`).
    #[serde(default)]
    pub loopback: bool,
    /// Init judges the command's `connect(2)` calls (rung 1 with seccomp): pathname unix
    /// sockets only on writable mounts or in `network.unix_sockets` (see
    /// `super::unix_guard`).
    #[serde(default)]
    pub unix_guard: bool,
    /// Init also records the writing path calls the sandbox refuses (rides on the
    /// unix-socket guard's listener; a restricted filesystem; not disabled with
    /// `denial-records`): see `super::denial_records`.
    #[serde(default)]
    pub denial_records: bool,
    /// Managed network: init relays `127.0.0.1:3128` to cordon's filtering proxy, which
    /// the helper runs for exactly as long as the command (see `super::relay`).
    #[serde(default)]
    pub proxy_relay: bool,
    /// `network.local` (issue 10 §6), network restricted or managed: init listens on each
    /// of these host loopback addresses inside the namespace and relays to the helper,
    /// which connects to exactly that host port (see `super::relay`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub local_forwards: Vec<std::net::SocketAddr>,
    /// Landlock, if applied.
    pub landlock: Option<LandlockPlan>,
    /// Seccomp, if applied.
    pub seccomp: Option<SeccompPlan>,
    /// Rung 2: a supervisor process (a child subreaper in its own process group, forked by
    /// the helper) kills every remaining descendant when the command exits, and also when
    /// the helper is killed (SIGKILL included, alone or with its process group). Rung 1
    /// gets this from the pid namespace.
    pub kill_descendants: bool,
    /// The layers the helper will apply, in order (R-T5, R-S5): the prediction, typed. What
    /// the helper really applied comes back in its [`super::AppliedReport`], built the same
    /// way from what it did (Landlock's enforcement is then the kernel's answer).
    pub planned: Vec<Layer>,
    /// Things worth knowing that do not weaken a guarantee.
    pub notes: Vec<String>,
}

impl LinuxPlan {
    /// The planned layers in plain words, one line each (their `Display`).
    pub fn planned_lines(&self) -> Vec<String> {
        self.planned.iter().map(Layer::to_string).collect()
    }

    /// The planned layers joined with `"; "`.
    pub fn summary(&self) -> String {
        self.planned_lines().join("; ")
    }
}

/// The planned limits layer of `profile` (values only; a profile whose limits do not
/// resolve fails later, in the helper, with the reason).
fn limits_layer(profile: &ResolvedProfile) -> Layer {
    Layer::Limits {
        items: super::limits::resolve(profile)
            .map(|l| super::limits::planned(&l))
            .unwrap_or_default(),
    }
}

/// A refusal to run (R-S4): the guarantee the profile asks for, what it needs, and why that
/// is missing. Displays as `<guarantee> needs <needs>, but <reason>`; whoever reports it
/// adds the one `refusing to run unconfined: ` prefix (the helper, [`super::ConfineError`],
/// and `TransformError::Refused`), so the prefix is never doubled.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Refusal {
    /// The unmet guarantee, e.g. `deny-read of /home/u/.ssh`.
    pub guarantee: String,
    /// The mechanism it needs, e.g. `a mount namespace`.
    pub needs: String,
    /// Why that mechanism is unavailable, e.g. `user namespaces are unavailable
    /// (kernel.apparmor_restrict_unprivileged_userns=1)`.
    pub reason: String,
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} needs {}, but {}",
            self.guarantee, self.needs, self.reason
        )
    }
}

impl std::error::Error for Refusal {}

/// A place where the profile is *narrower* than an ancestor: Landlock (allow-only) cannot
/// express it, only a mount can.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CarveOut {
    /// The path.
    pub path: PathBuf,
    /// The guarantee in plain words (`deny-read of …`, `read-only protected path …`).
    pub guarantee: String,
}

/// The carve-outs of a filesystem policy: existing deny entries, protected paths (R-P3,
/// existing or not: a missing one must not be creatable), and read entries, each under an
/// ancestor (or default) that grants more. Missing deny entries are not carve-outs (there
/// is nothing to hide; on rung 1 the cover watch stops a run when one is created, rung 2
/// has no such watch).
pub fn carve_outs(fs: &ResolvedFilesystem) -> Vec<CarveOut> {
    let ResolvedFilesystem::Restricted { default, .. } = fs else {
        return Vec::new();
    };
    let layered = fs.layered();
    // `layered` has one entry per path: an entry's enclosing entries are found by looking
    // its proper ancestors up, not by comparing it with every other entry (that quadratic
    // loop was half of the client's CPU per launch, issue 12).
    let widest_above = widest_enclosing(&layered, default.width());
    let mut out = Vec::new();
    for (e, &widest) in layered.iter().zip(&widest_above) {
        if e.access.width() >= widest {
            continue;
        }
        let guarantee = match (&e.origin, e.access) {
            (EntryOrigin::Protected { reason }, _) => {
                format!("read-only protected path {} ({reason})", e.path.display())
            }
            (_, Access::Deny) if !e.exists || unreadable_system_credential(e) => continue,
            (_, Access::Deny) => format!("deny-read of {}", e.path.display()),
            _ => format!("read-only {} inside a writable root", e.path.display()),
        };
        out.push(CarveOut {
            path: e.path.clone(),
            guarantee,
        });
    }
    out
}

/// For each entry of `layered` (in order), the widest access among the entries at its
/// proper ancestors, at least `floor`. When every entry path is clean
/// ([`cordon_policy::paths::is_clean_path`]: how resolution makes them), the ancestors are
/// the byte prefixes before each `/` and are looked up by their bytes (`Path`'s `Hash`
/// and `ancestors` parse components: ~0.5M instructions per launch, issue 12); otherwise
/// by [`Path::ancestors`].
fn widest_enclosing(layered: &[&cordon_policy::ResolvedEntry], floor: u8) -> Vec<u8> {
    use std::os::unix::ffi::OsStrExt;
    if layered
        .iter()
        .all(|e| cordon_policy::paths::is_clean_path(&e.path))
    {
        let width_of: foldhash::HashMap<&[u8], u8> = layered
            .iter()
            .map(|e| (e.path.as_os_str().as_bytes(), e.access.width()))
            .collect();
        layered
            .iter()
            .map(|e| {
                let b = e.path.as_os_str().as_bytes();
                b.iter()
                    .enumerate()
                    .filter(|&(i, &c)| c == b'/' && i + 1 < b.len())
                    .map(|(i, _)| if i == 0 { &b[..1] } else { &b[..i] })
                    .filter_map(|a| width_of.get(a).copied())
                    .fold(floor, u8::max)
            })
            .collect()
    } else {
        let width_of: std::collections::HashMap<&Path, u8> = layered
            .iter()
            .map(|e| (e.path.as_path(), e.access.width()))
            .collect();
        layered
            .iter()
            .map(|e| {
                e.path
                    .ancestors()
                    .skip(1)
                    .filter_map(|a| width_of.get(a).copied())
                    .fold(floor, u8::max)
            })
            .collect()
    }
}

/// A built-in system credential file (R-H3: `/etc/shadow`, host keys …) this process
/// cannot read anyway: file permissions already hide it (it is root's), so it needs no
/// mount to be hidden and is no carve-out. As root it is readable, and it is one.
fn unreadable_system_credential(e: &cordon_policy::ResolvedEntry) -> bool {
    let builtin = matches!(&e.origin, EntryOrigin::Profile { spelling, .. }
        if cordon_policy::profile::SYSTEM_CREDENTIAL_FILES.contains(&spelling.as_str()));
    let Ok(c) = std::ffi::CString::new(e.path.as_os_str().as_encoded_bytes()) else {
        return false;
    };
    // SAFETY: `c` is a NUL-terminated path that outlives the calls.
    let denied = |mode| unsafe { libc::access(c.as_ptr(), mode) } != 0;
    builtin && denied(libc::R_OK) && (!e.is_dir || denied(libc::X_OK))
}

fn userns_reason(f: &LinuxFeatures) -> String {
    format!(
        "user namespaces are unavailable ({})",
        f.user_namespaces.reason().unwrap_or("unknown reason")
    )
}

fn landlock_reason(f: &LinuxFeatures) -> String {
    match &f.landlock {
        Availability::Available(a) => format!("the kernel offers Landlock ABI {a} only"),
        Availability::Unavailable(r) => {
            format!("landlock is unavailable ({r}; kernel {})", f.kernel_release)
        }
    }
}

/// R-N2 on every rung: host pathname unix sockets are reachable only when listed. The
/// unix-socket guard (`super::unix_guard`: seccomp user notification judged by the
/// sandbox's init) needs user namespaces and seccomp. Without it, a network that is on
/// (every host socket would be reachable) or a `network.unix_sockets` list (rung 2 denies
/// `socket()` with the network off: the listed sockets would be unreachable) is a refusal
/// naming what is missing. With the network off and nothing listed, rung 2's `socket()`
/// denial keeps every host socket out of reach.
///
/// Errors: the refusal.
fn unix_guard_needed(
    profile: &ResolvedProfile,
    net_restricted: bool,
    rung1: bool,
    features: &LinuxFeatures,
) -> Result<(), Refusal> {
    if rung1 && features.seccomp.is_available() {
        return Ok(());
    }
    let reason = if rung1 {
        seccomp_reason(features)
    } else {
        userns_reason(features)
    };
    let needs = "the unix-socket guard (user namespaces and seccomp user notification)";
    if !net_restricted {
        return Err(Refusal {
            guarantee: "with the network on, host unix sockets (docker.sock, the D-Bus and \
                        agent sockets) reachable only when listed in network.unix_sockets"
                .into(),
            needs: needs.into(),
            reason: format!("{reason}; run with the network off, or where user namespaces work"),
        });
    }
    if let Some(first) = profile.unix_sockets.first() {
        return Err(Refusal {
            guarantee: format!(
                "network.unix_sockets reachable ({} listed, e.g. {})",
                profile.unix_sockets.len(),
                first.display()
            ),
            needs: needs.into(),
            reason,
        });
    }
    Ok(())
}

fn seccomp_reason(f: &LinuxFeatures) -> String {
    format!(
        "seccomp is unavailable ({})",
        f.seccomp.reason().unwrap_or("unknown reason")
    )
}

/// The highest Landlock ABI the `landlock` crate in this build knows how to drive (the
/// last `landlock::ABI` variant, V7 for landlock 0.4.8). The cap is pinned by the test
/// `landlock_abi_is_capped_and_reported` below; raise this together with the crate.
pub const LANDLOCK_CRATE_MAX_ABI: u32 = 7;

/// The host loopback ports `network.local` forwards into the namespace (issue 10 §6):
/// none with the network enabled (the host's loopback is reachable anyway).
///
/// Errors: a bad entry, a forward on rung 2 (no namespace to forward into), or one on the
/// managed network's own relay port.
fn local_forwards(
    profile: &ResolvedProfile,
    net_restricted: bool,
    managed: bool,
    rung1: bool,
    features: &LinuxFeatures,
) -> Result<Vec<std::net::SocketAddr>, Refusal> {
    let guarantee = "network.local (exactly the listed host loopback ports)";
    let addrs = profile
        .profile
        .network_rules
        .local_addrs()
        .map_err(|e| Refusal {
            guarantee: guarantee.into(),
            needs: "loopback ADDR:PORT entries".into(),
            reason: e,
        })?;
    if !net_restricted || addrs.is_empty() {
        return Ok(Vec::new());
    }
    if !rung1 {
        return Err(Refusal {
            guarantee: guarantee.into(),
            needs: "a network namespace".into(),
            reason: userns_reason(features),
        });
    }
    if let Some(a) = addrs
        .iter()
        .find(|a| managed && a.port() == super::relay::PROXY_PORT)
        .filter(|a| {
            a.ip() == std::net::Ipv4Addr::LOCALHOST || a.ip() == std::net::Ipv6Addr::LOCALHOST
        })
    {
        return Err(Refusal {
            guarantee: guarantee.into(),
            needs: format!(
                "a port other than {}, the managed network's proxy relay",
                super::relay::PROXY_PORT
            ),
            reason: format!("network.local lists {a}"),
        });
    }
    Ok(addrs)
}

/// Decides how to confine `profile` on a host with `features` (R-L5, R-S4). Pure.
///
/// Rung 1 (user namespaces available): namespaces + rebuilt root; Landlock and seccomp
/// are added when available; seccomp is *required* when the network is restricted (it is
/// the only layer that stops `connect(2)` to a unix socket of a host service).
///
/// Rung 2 (no user namespaces): only when Landlock alone expresses the filesystem policy
/// (no carve-outs: see [`carve_outs`]) at ABI >= [`MIN_LANDLOCK_ABI_FS`], signals are
/// scoped (ABI >= [`LANDLOCK_ABI_SCOPE`]), and seccomp is available for a restricted
/// network. Descendants are killed by the supervisor when the command exits or the helper
/// dies.
///
/// Errors: a [`Refusal`] naming the first unmet guarantee.
// Longer than most: the whole rung decision (R-L5, R-S4) — rung 1, its layers and notes,
// then rung 2's stricter conditions — kept in one place so every refusal reads in order.
pub fn plan(profile: &ResolvedProfile, features: &LinuxFeatures) -> Result<LinuxPlan, Refusal> {
    let fs_restricted = matches!(profile.filesystem, ResolvedFilesystem::Restricted { .. });
    // Managed is restricted plus a relay to the proxy.
    let net_restricted = profile.profile.network != NetworkPolicy::Enabled;
    let managed = profile.profile.network == NetworkPolicy::Managed;
    let abi = features
        .landlock
        .value()
        .map(|a| (*a).min(LANDLOCK_CRATE_MAX_ABI));
    let mut notes = Vec::new();

    // A misspelt layer name would otherwise leave that layer on without a word (and a test
    // meant for a lower rung would pass on the wrong one): refuse before anything else.
    if !features.unknown_layers.is_empty() {
        let names: Vec<String> = features
            .unknown_layers
            .iter()
            .map(|n| format!("`{n}`"))
            .collect();
        return Err(Refusal {
            guarantee: format!(
                "the list of layers to disable ({DISABLE_LAYERS_ENV} or the payload's \
                 disabled_layers)"
            ),
            needs: format!("known layer names ({})", valid_layer_names()),
            reason: format!(
                "{} {}",
                names.join(", "),
                if names.len() == 1 {
                    "is not a layer"
                } else {
                    "are not layers"
                }
            ),
        });
    }

    if net_restricted && !features.seccomp.is_available() {
        return Err(Refusal {
            guarantee: "network restricted (no connection to unix sockets of host services)".into(),
            needs: "a seccomp filter".into(),
            reason: seccomp_reason(features),
        });
    }
    let rung1 = features.user_namespaces.is_available();
    unix_guard_needed(profile, net_restricted, rung1, features)?;
    let local_forwards = local_forwards(profile, net_restricted, managed, rung1, features)?;
    if managed && !rung1 {
        return Err(Refusal {
            guarantee: "managed network (only cordon's proxy reaches out)".into(),
            needs: "a network namespace".into(),
            reason: userns_reason(features),
        });
    }
    let seccomp = if features.seccomp.is_available() {
        Some(SeccompPlan {
            deny_sockets: net_restricted && !rung1,
            local_families_only: net_restricted && rung1,
            required: net_restricted,
        })
    } else {
        notes.push(format!(
            "{}: ptrace/namespace/io_uring syscalls are not filtered",
            seccomp_reason(features)
        ));
        None
    };

    if features.user_namespaces.is_available() {
        let landlock = abi.map(|abi| LandlockPlan {
            abi,
            fs: fs_restricted,
            // The private network namespace confines TCP on this rung.
            tcp: false,
            scope_abstract_unix: abi >= LANDLOCK_ABI_SCOPE,
            scope_signal: abi >= LANDLOCK_ABI_SCOPE,
            required: false,
        });
        // Always true here: without seccomp, `unix_guard_needed` refused every profile
        // that relies on the guard.
        let unix_guard = seccomp.is_some();
        if landlock.is_none() {
            notes.push(format!(
                "{}: mounts and namespaces alone confine the command",
                landlock_reason(features)
            ));
        }
        let mut planned = vec![
            Layer::Namespaces {
                net: net_restricted,
            },
            Layer::mounts(
                &profile.filesystem,
                profile.filesystem.top_view().private_tmp,
            ),
            limits_layer(profile),
            Layer::NoNewPrivs,
            Layer::Capabilities {
                bounding_and_securebits: true,
            },
        ];
        if let Some(l) = &landlock {
            planned.push(Layer::Landlock {
                plan: l.clone(),
                enforcement: Enforcement::Planned,
            });
        }
        if let Some(s) = &seccomp {
            planned.push(Layer::seccomp(s));
        }
        if unix_guard {
            planned.push(Layer::UnixGuard {
                listed: profile.unix_sockets.len(),
            });
        }
        let denial_records = unix_guard
            && fs_restricted
            && !features.disabled.iter().any(|d| d == DENIAL_RECORDS_LAYER);
        if denial_records {
            planned.push(Layer::DenialRecords);
        } else if unix_guard && fs_restricted {
            // The hard-link check runs in the same supervisor: said, not dropped silently
            // (attack pass 49, N3).
            notes.push(format!(
                "{DISABLE_LAYERS_ENV}={DENIAL_RECORDS_LAYER}: {}, so a file with several \
                 names is written and changed in place, and so are its other names, which may \
                 lie outside the writable roots",
                cordon_policy::context::HARD_LINKS_UNCHECKED
            ));
        }
        if managed {
            planned.push(Layer::ProxyRelay {
                port: super::relay::PROXY_PORT,
                addrs: Vec::new(),
            });
        }
        if !local_forwards.is_empty() {
            planned.push(Layer::LocalForwards {
                addrs: local_forwards.iter().map(|a| a.to_string()).collect(),
            });
        }
        planned.push(Layer::Environment);
        return Ok(LinuxPlan {
            rung: Rung::Namespaces,
            net_namespace: net_restricted,
            loopback: net_restricted,
            unix_guard,
            denial_records,
            proxy_relay: managed,
            local_forwards,
            landlock,
            seccomp,
            kill_descendants: false,
            planned,
            notes,
        });
    }

    // Rung 2: Landlock must say everything the mounts would have said.
    let mut cuts = carve_outs(&profile.filesystem);
    // Name a credential store first: it is what the user cares about most.
    cuts.sort_by_key(|c| {
        (
            !c.guarantee.starts_with("deny-read"),
            c.path.starts_with("/etc"),
        )
    });
    if let Some(c) = cuts.first() {
        let more = match cuts.len() - 1 {
            0 => String::new(),
            1 => "; 1 more carve-out needs it too".to_string(),
            n => format!("; {n} more carve-outs need it too"),
        };
        return Err(Refusal {
            guarantee: c.guarantee.clone(),
            needs: "a mount namespace (Landlock can only allow, not carve out)".into(),
            reason: format!("{}{more}", userns_reason(features)),
        });
    }
    let no_userns = userns_reason(features);
    let Some(abi) = abi else {
        return Err(Refusal {
            guarantee: if fs_restricted {
                "writes confined to the writable roots".into()
            } else {
                "no signals to processes outside the sandbox".into()
            },
            needs: "a mount namespace or Landlock".into(),
            reason: format!("{no_userns} and {}", landlock_reason(features)),
        });
    };
    if fs_restricted && abi < MIN_LANDLOCK_ABI_FS {
        return Err(Refusal {
            guarantee: "writes confined to the writable roots".into(),
            needs: format!("a mount namespace or Landlock ABI >= {MIN_LANDLOCK_ABI_FS} (truncate)"),
            reason: format!("{no_userns} and {}", landlock_reason(features)),
        });
    }
    if abi < LANDLOCK_ABI_SCOPE {
        return Err(Refusal {
            guarantee: "no signals to processes outside the sandbox".into(),
            needs: format!(
                "a pid namespace or Landlock ABI >= {LANDLOCK_ABI_SCOPE} (signal scope)"
            ),
            reason: format!("{no_userns} and {}", landlock_reason(features)),
        });
    }
    let landlock = LandlockPlan {
        abi,
        fs: fs_restricted,
        tcp: net_restricted && abi >= LANDLOCK_ABI_NET,
        scope_abstract_unix: true,
        scope_signal: true,
        required: true,
    };
    notes.push(format!(
        "{no_userns}: running on rung 2 (no private /tmp, /proc or /dev; host /tmp is \
         writable only if a writable entry covers it)"
    ));
    let mut planned = vec![
        limits_layer(profile),
        Layer::NoNewPrivs,
        Layer::Capabilities {
            bounding_and_securebits: true,
        },
        Layer::Landlock {
            plan: landlock.clone(),
            enforcement: Enforcement::Planned,
        },
    ];
    planned.extend(seccomp.as_ref().map(Layer::seccomp));
    planned.extend([Layer::Supervisor, Layer::Environment]);
    Ok(LinuxPlan {
        rung: Rung::LandlockOnly,
        net_namespace: false,
        loopback: false,
        unix_guard: false,
        denial_records: false,
        proxy_relay: false,
        local_forwards: Vec::new(),
        landlock: Some(landlock),
        seccomp,
        kill_descendants: true,
        planned,
        notes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use cordon_policy::{
        resolve, FilesystemPolicy, FsEntry, MemFs, PermissionProfile, ResolveContext,
    };
    use std::path::PathBuf;

    fn memfs() -> MemFs {
        MemFs::new()
            .dir("/home/u/proj/.git/hooks")
            .file("/home/u/proj/.git/config", "")
            .dir("/home/u/proj/.git/info")
            .file("/home/u/proj/.cordon/config.toml", "")
            .file("/home/u/.ssh/id_rsa", "k")
            .dir("/tmp")
            .dir("/usr")
    }

    fn ctx() -> ResolveContext {
        ResolveContext {
            cwd: PathBuf::from("/home/u/proj"),
            home: Some(PathBuf::from("/home/u")),
            tmpdir: None,
            profile_files: vec![],
            ..Default::default()
        }
    }

    fn resolved(p: &PermissionProfile) -> ResolvedProfile {
        resolve(p, &ctx(), &memfs()).unwrap()
    }

    fn custom(default: Access, entries: Vec<FsEntry>, protect: bool) -> PermissionProfile {
        let mut p = PermissionProfile::builtin("workspace-write").unwrap();
        p.filesystem = FilesystemPolicy::Restricted {
            default,
            entries,
            protect_metadata: protect,
        };
        p
    }

    fn no_userns(abi: u32) -> LinuxFeatures {
        let mut f = LinuxFeatures::full(abi);
        f.user_namespaces =
            Availability::Unavailable("kernel.apparmor_restrict_unprivileged_userns=1".into());
        f
    }

    #[test]
    fn full_host_gets_rung_one_with_everything() {
        let p = resolved(&PermissionProfile::builtin("workspace-write").unwrap());
        let plan = plan(&p, &LinuxFeatures::full(7)).unwrap();
        assert_eq!(plan.rung, Rung::Namespaces);
        assert!(plan.net_namespace);
        let l = plan.landlock.as_ref().unwrap();
        assert!(l.fs && !l.tcp && l.scope_abstract_unix && l.scope_signal && !l.required);
        let sc = plan.seccomp.as_ref().unwrap();
        assert!(!sc.deny_sockets && sc.local_families_only && sc.required);
        assert!(plan.loopback && plan.unix_guard);
        let s = plan.summary();
        assert!(s.contains("user+mount+pid+ipc+net namespaces"), "{s}");
        assert!(
            s.contains("landlock ABI 7 (fs, scope: abstract-unix, signal)"),
            "{s}"
        );
        assert!(s.contains("capabilities dropped"), "{s}");
        assert!(s.contains("environment"), "{s}");
    }

    #[test]
    fn network_enabled_gets_no_netns_and_no_socket_filter() {
        let mut p = PermissionProfile::builtin("workspace-write").unwrap();
        p.network = NetworkPolicy::Enabled;
        let plan = plan(&resolved(&p), &LinuxFeatures::full(7)).unwrap();
        assert!(!plan.net_namespace && !plan.loopback);
        // Host unix sockets stay guarded and abstract sockets scoped in every mode.
        assert!(plan.unix_guard);
        let sc = plan.seccomp.unwrap();
        assert!(!sc.deny_sockets && !sc.local_families_only);
        let l = plan.landlock.unwrap();
        assert!(!l.tcp && l.scope_abstract_unix && l.scope_signal);
    }

    #[test]
    fn landlock_abi_is_capped_and_reported() {
        let p = resolved(&PermissionProfile::builtin("read-only").unwrap());
        let plan = plan(&p, &LinuxFeatures::full(99)).unwrap();
        assert_eq!(plan.landlock.unwrap().abi, LANDLOCK_CRATE_MAX_ABI);
        let plan2 = super::plan(&p, &LinuxFeatures::full(3)).unwrap();
        let l = plan2.landlock.unwrap();
        assert!(!l.tcp && !l.scope_signal);
    }

    #[test]
    fn rung_one_without_landlock_still_runs() {
        let p = resolved(&PermissionProfile::builtin("workspace-write").unwrap());
        let mut f = LinuxFeatures::full(7);
        f.disable(&["landlock"]);
        let plan = plan(&p, &f).unwrap();
        assert_eq!(plan.rung, Rung::Namespaces);
        assert!(plan.landlock.is_none());
        assert!(plan
            .notes
            .iter()
            .any(|n| n.contains("landlock is unavailable")));
    }

    #[test]
    fn restricted_network_without_seccomp_is_refused() {
        let p = resolved(&PermissionProfile::builtin("workspace-write").unwrap());
        let mut f = LinuxFeatures::full(7);
        f.disable(&["seccomp"]);
        let r = plan(&p, &f).unwrap_err();
        assert!(r.to_string().starts_with("network restricted"), "{r}");
        assert!(r.reason.contains("seccomp is unavailable"), "{r}");
        // With the network enabled too: without seccomp there is no unix-socket guard,
        // and every host unix socket would be reachable (R-N2).
        let mut p2 = PermissionProfile::builtin("workspace-write").unwrap();
        p2.network = NetworkPolicy::Enabled;
        let r = plan(&resolved(&p2), &f).unwrap_err();
        assert!(r.needs.contains("unix-socket guard"), "{r}");
        assert!(r.reason.contains("seccomp is unavailable"), "{r}");
    }

    /// R-N2 on rung 2 (no user namespaces, so no guard): the network on, or a
    /// `network.unix_sockets` list, is refused naming the guard; the network off with
    /// nothing listed runs (socket() is denied there).
    #[test]
    fn rung_two_refuses_what_needs_the_unix_socket_guard() {
        let base = custom(
            Access::Read,
            vec![FsEntry::new(":workspace", Access::Write)],
            false,
        );
        let ok = plan(&resolved(&base), &no_userns(7)).unwrap();
        assert_eq!(ok.rung, Rung::LandlockOnly);
        assert!(ok.seccomp.unwrap().deny_sockets);

        let mut on = base.clone();
        on.network = NetworkPolicy::Enabled;
        let r = plan(&resolved(&on), &no_userns(7)).unwrap_err();
        assert!(r.guarantee.contains("host unix sockets"), "{r}");
        assert!(r.needs.contains("unix-socket guard"), "{r}");
        assert!(
            r.reason
                .contains("kernel.apparmor_restrict_unprivileged_userns=1"),
            "{r}"
        );

        let mut listed = resolved(&base);
        listed.unix_sockets = vec!["/run/user/1000/ssh-agent.sock".into()];
        let r = plan(&listed, &no_userns(7)).unwrap_err();
        assert!(
            r.guarantee.contains(
                "network.unix_sockets reachable (1 listed, e.g. /run/user/1000/ssh-agent.sock)"
            ),
            "{r}"
        );
        // Rung 1 with seccomp: the guard applies to both.
        assert!(plan(&listed, &LinuxFeatures::full(7)).unwrap().unix_guard);
    }

    #[test]
    fn deny_read_without_userns_is_refused_with_the_path() {
        let p = resolved(&PermissionProfile::builtin("workspace-write").unwrap());
        let r = plan(&p, &no_userns(7)).unwrap_err();
        let msg = r.to_string();
        assert!(
            msg.contains("deny-read of /home/u/.ssh needs a mount namespace"),
            "{msg}"
        );
        assert!(
            msg.contains("kernel.apparmor_restrict_unprivileged_userns=1"),
            "{msg}"
        );
    }

    #[test]
    fn protected_paths_without_userns_are_refused() {
        let p = custom(
            Access::Read,
            vec![FsEntry::new(":workspace", Access::Write)],
            true,
        );
        let r = plan(&resolved(&p), &no_userns(7)).unwrap_err();
        assert!(r.guarantee.contains("protected path /home/u/proj/."), "{r}");
        assert!(r.reason.contains("more carve-outs need it too"), "{r}");
    }

    #[test]
    fn missing_deny_entries_are_not_carve_outs() {
        let p = custom(
            Access::Read,
            vec![
                FsEntry::new(":workspace", Access::Write),
                FsEntry::new("~/.aws", Access::Deny),
            ],
            false,
        );
        assert!(carve_outs(&resolved(&p).filesystem).is_empty());
        let plan = plan(&resolved(&p), &no_userns(7)).unwrap();
        assert_eq!(plan.rung, Rung::LandlockOnly);
        assert!(plan.kill_descendants);
        let l = plan.landlock.clone().unwrap();
        assert!(l.required && l.fs && l.tcp && l.scope_signal && l.scope_abstract_unix);
        assert!(plan.planned.contains(&Layer::Supervisor));
        assert!(plan
            .planned_lines()
            .iter()
            .any(|a| a.contains("subreaper") && a.contains("helper is killed")));
    }

    #[test]
    fn default_deny_with_read_entries_is_fine_for_landlock() {
        let p = custom(
            Access::Deny,
            vec![
                FsEntry::new(":minimal", Access::Read),
                FsEntry::new(":workspace", Access::Write),
                FsEntry::new("~/.ssh", Access::Deny),
            ],
            false,
        );
        let r = resolved(&p);
        assert!(carve_outs(&r.filesystem).is_empty());
        assert_eq!(plan(&r, &no_userns(6)).unwrap().rung, Rung::LandlockOnly);
    }

    #[test]
    fn enclosing_widths_by_bytes_are_the_ancestors() {
        let p = custom(
            Access::Read,
            vec![
                FsEntry::new(":workspace", Access::Write),
                FsEntry::new(":workspace/.git", Access::Read),
                FsEntry::new(":workspace/.git/hooks", Access::Deny),
                FsEntry::new("/home/u", Access::Write),
                FsEntry::new("~/.ssh", Access::Deny),
                FsEntry::new("/", Access::Read),
            ],
            false,
        );
        let r = resolved(&p);
        let layered = r.filesystem.layered();
        let by_bytes = widest_enclosing(&layered, 0);
        let by_ancestors: Vec<u8> = layered
            .iter()
            .map(|e| {
                e.path
                    .ancestors()
                    .skip(1)
                    .filter_map(|a| layered.iter().find(|x| x.path == a))
                    .map(|x| x.access.width())
                    .fold(0, u8::max)
            })
            .collect();
        assert_eq!(by_bytes, by_ancestors);
        assert!(by_bytes.iter().any(|&w| w > 0), "{layered:?}");
    }

    #[test]
    fn read_only_entry_inside_writable_root_is_a_carve_out() {
        let p = custom(
            Access::Read,
            vec![
                FsEntry::new(":workspace", Access::Write),
                FsEntry::new(":workspace/.git", Access::Read),
            ],
            false,
        );
        let c = carve_outs(&resolved(&p).filesystem);
        assert_eq!(c.len(), 1);
        assert!(c[0].guarantee.contains("inside a writable root"));
        // Deny nested under a read entry under default deny is one too.
        let p = custom(
            Access::Deny,
            vec![
                FsEntry::new("/home/u", Access::Read),
                FsEntry::new("~/.ssh", Access::Deny),
            ],
            false,
        );
        assert_eq!(carve_outs(&resolved(&p).filesystem).len(), 1);
    }

    #[test]
    fn rung_two_needs_recent_landlock() {
        let p = custom(
            Access::Read,
            vec![FsEntry::new(":workspace", Access::Write)],
            false,
        );
        let r = resolved(&p);
        let e = plan(&r, &no_userns(2)).unwrap_err();
        assert!(e.needs.contains("ABI >= 3"), "{e}");
        let e = plan(&r, &no_userns(5)).unwrap_err();
        assert!(e.guarantee.contains("signals"), "{e}");
        let mut f = no_userns(7);
        f.disable(&["landlock"]);
        let e = plan(&r, &f).unwrap_err();
        assert!(e.reason.contains("landlock is unavailable"), "{e}");
        assert!(e.reason.contains("user namespaces are unavailable"), "{e}");
    }

    #[test]
    fn nothing_available_is_refused() {
        let p = resolved(&PermissionProfile::builtin("danger-full-access").unwrap());
        let mut f = no_userns(7);
        f.disable(&["landlock", "seccomp"]);
        let e = plan(&p, &f).unwrap_err();
        assert!(e.to_string().contains(" needs "), "{e}");
        // The prefix is added once by whoever reports the refusal, never here.
        assert!(!e.to_string().contains("refusing"), "{e}");
    }

    #[test]
    fn unknown_layer_names_are_refused_first() {
        let p = resolved(&PermissionProfile::builtin("workspace-write").unwrap());
        let mut f = LinuxFeatures::full(7);
        f.disable(&["landlok"]);
        let e = plan(&p, &f).unwrap_err();
        let msg = e.to_string();
        assert!(msg.contains("`landlok` is not a layer"), "{msg}");
        assert!(
            msg.contains("known layer names (userns, landlock, seccomp, denial-records, all)"),
            "{msg}"
        );
        assert!(msg.contains("CORDON_DISABLE_LAYERS"), "{msg}");
        f.disable(&["x"]);
        assert!(plan(&p, &f)
            .unwrap_err()
            .reason
            .contains("`landlok`, `x` are not layers"));
        // Known names only: plans (here rung 1 without Landlock).
        let mut f = LinuxFeatures::full(7);
        f.disable(&["landlock"]);
        assert!(plan(&p, &f).is_ok());
    }

    #[test]
    fn unrestricted_filesystem_runs_on_rung_one() {
        let p = resolved(&PermissionProfile::builtin("danger-full-access").unwrap());
        let plan = plan(&p, &LinuxFeatures::full(7)).unwrap();
        assert!(!plan.landlock.unwrap().fs);
        assert!(!plan.net_namespace);
    }
}
