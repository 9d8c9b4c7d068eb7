//! What this kernel can give (R-L5): probed once, cheaply, and reported as facts.

use super::sys;
use serde::{Deserialize, Serialize};
use std::fmt;

/// Name of the environment variable listing layers to treat as unavailable
/// (comma-separated: `userns`, `landlock`, `seccomp`, or `all`). Used to exercise lower
/// rungs; a listed layer is only ever *removed*, so R-S4 still refuses when a guarantee is
/// left unmet. A name that is not a layer is never ignored: [`super::plan`] refuses to run
/// (see [`LinuxFeatures::unknown_layers`]).
pub const DISABLE_LAYERS_ENV: &str = "CORDON_DISABLE_LAYERS";

/// The layers that can be disabled by name ([`DISABLE_LAYERS_ENV`],
/// `HelperPayload::disabled_layers`). `namespaces` is accepted for `userns`, and
/// [`ALL_LAYERS`] stands for every one of them.
pub const LAYER_NAMES: &[&str] = &["userns", "landlock", "seccomp", DENIAL_RECORDS_LAYER];

/// The layer name that switches off kernel-side denial records (the seccomp
/// user-notification supervisor of writing path calls) and nothing else: for measuring its
/// overhead (`bench/denials.sh`). Confinement is unchanged without it.
pub const DENIAL_RECORDS_LAYER: &str = "denial-records";

/// The name that disables every layer of [`LAYER_NAMES`].
pub const ALL_LAYERS: &str = "all";

/// The accepted names, for messages: `userns, landlock, seccomp, all`.
pub fn valid_layer_names() -> String {
    let mut v: Vec<&str> = LAYER_NAMES.to_vec();
    v.push(ALL_LAYERS);
    v.join(", ")
}

/// Whether a mechanism is there: its value (an ABI version, or `()`), or the reason it is
/// not, in plain words (R-S5). One value, so a missing reason or a reason next to an
/// available layer cannot be expressed. JSON: `{"available": 7}` / `{"unavailable": "…"}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Availability<T> {
    /// Available, with its value.
    Available(T),
    /// Unavailable, and why (e.g. `kernel.apparmor_restrict_unprivileged_userns=1`).
    Unavailable(String),
}

impl<T> Availability<T> {
    /// Whether it is available.
    pub fn is_available(&self) -> bool {
        matches!(self, Availability::Available(_))
    }

    /// The value when available.
    pub fn value(&self) -> Option<&T> {
        match self {
            Availability::Available(v) => Some(v),
            Availability::Unavailable(_) => None,
        }
    }

    /// The reason when unavailable.
    pub fn reason(&self) -> Option<&str> {
        match self {
            Availability::Available(_) => None,
            Availability::Unavailable(r) => Some(r),
        }
    }

    /// From a probe's result.
    pub fn from_result(r: Result<T, String>) -> Availability<T> {
        match r {
            Ok(v) => Availability::Available(v),
            Err(why) => Availability::Unavailable(why),
        }
    }
}

impl<T: fmt::Display> fmt::Display for Availability<T> {
    /// `available`-side: the value (`()` shows as `yes`); otherwise `no (reason)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Availability::Available(v) => write!(f, "{v}"),
            Availability::Unavailable(r) => write!(f, "no ({r})"),
        }
    }
}

/// The value of an available on/off mechanism; displays as `yes`, serialises as `true`
/// (`{"available": true}`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Present;

impl Serialize for Present {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_bool(true)
    }
}

impl<'de> Deserialize<'de> for Present {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Present, D::Error> {
        match bool::deserialize(d)? {
            true => Ok(Present),
            false => Err(serde::de::Error::custom(
                "`available` takes `true`; an unavailable layer is `{\"unavailable\": reason}`",
            )),
        }
    }
}

impl fmt::Display for Present {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("yes")
    }
}

/// The confinement mechanisms this host offers, as probed by [`probe`] (or built by hand
/// in tests). Every `false`/`None` carries a reason in plain words, shown by
/// `cordon status` and in refusals (R-S4, R-S5).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LinuxFeatures {
    /// `uname -r`.
    pub kernel_release: String,
    /// Highest Landlock ABI the kernel offers (1 = Linux 5.13 fs, 2 = refer, 3 = truncate,
    /// 4 = TCP, 5 = ioctl on devices, 6 = scopes: abstract unix sockets and signals,
    /// 7 = audit logging flags), or why Landlock is unavailable.
    pub landlock: Availability<u32>,
    /// Whether this process can create user namespaces (and with them mount, pid, net and
    /// ipc namespaces), map its ids, mount a fresh `/proc` and use the new mount API
    /// (`mount_setattr`, Linux >= 5.12) — or why not, e.g.
    /// `kernel.apparmor_restrict_unprivileged_userns=1`.
    pub user_namespaces: Availability<Present>,
    /// Whether seccomp filters can be installed, or why not.
    pub seccomp: Availability<Present>,
    /// Whether the probing process runs as uid 0.
    pub running_as_root: bool,
    /// Layers switched off by [`DISABLE_LAYERS_ENV`] or the payload, as given.
    pub disabled: Vec<String>,
    /// Names given to be disabled that are not layers (e.g. a typo such as `landlok`).
    /// [`super::plan`] refuses to run while this is not empty: a misspelt layer must not
    /// silently leave the layer on (or, worse, hide that a test ran on the wrong rung).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unknown_layers: Vec<String>,
}

impl LinuxFeatures {
    /// A host with every layer available at `landlock_abi` (for tests of [`super::plan`]).
    pub fn full(landlock_abi: u32) -> LinuxFeatures {
        LinuxFeatures {
            kernel_release: "test".into(),
            landlock: Availability::Available(landlock_abi),
            user_namespaces: Availability::Available(Present),
            seccomp: Availability::Available(Present),
            running_as_root: false,
            disabled: Vec::new(),
            unknown_layers: Vec::new(),
        }
    }

    /// Marks the named layers unavailable (`userns` or `namespaces`, `landlock`, `seccomp`,
    /// or `all`; names are trimmed and case-insensitive, empty items are skipped). Only
    /// removes layers, never adds one. A name that is not a layer changes no layer and is
    /// recorded in [`LinuxFeatures::unknown_layers`], which makes [`super::plan`] refuse.
    pub fn disable<S: AsRef<str>>(&mut self, layers: &[S]) {
        self.disable_by(layers, DISABLE_LAYERS_ENV)
    }

    /// [`LinuxFeatures::disable`] with the reason naming who disabled them (e.g. `the
    /// payload`).
    pub fn disable_by<S: AsRef<str>>(&mut self, layers: &[S], by: &str) {
        let why = format!("disabled by {by}");
        for l in layers {
            let l = l.as_ref().trim().to_ascii_lowercase();
            if l.is_empty() {
                continue;
            }
            let all = l == ALL_LAYERS;
            let mut known = all;
            if all || l == "userns" || l == "namespaces" {
                known = true;
                if self.user_namespaces.is_available() {
                    self.user_namespaces = Availability::Unavailable(why.clone());
                }
            }
            if all || l == "landlock" {
                known = true;
                if self.landlock.is_available() {
                    self.landlock = Availability::Unavailable(why.clone());
                }
            }
            if all || l == "seccomp" {
                known = true;
                if self.seccomp.is_available() {
                    self.seccomp = Availability::Unavailable(why.clone());
                }
            }
            if all || l == DENIAL_RECORDS_LAYER {
                known = true;
            }
            if !known && !self.unknown_layers.contains(&l) {
                self.unknown_layers.push(l.clone());
            }
            if !self.disabled.contains(&l) {
                self.disabled.push(l);
            }
        }
    }

    /// Applies [`DISABLE_LAYERS_ENV`] from the current environment.
    pub fn disable_from_env(&mut self) {
        if let Ok(v) = std::env::var(DISABLE_LAYERS_ENV) {
            let list: Vec<&str> = v.split(',').collect();
            self.disable(&list);
        }
    }
}

impl fmt::Display for LinuxFeatures {
    /// One line per layer, e.g. for `cordon status`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "kernel: {}", self.kernel_release)?;
        let no = |r: &str| format!("unavailable ({r})");
        writeln!(
            f,
            "user namespaces: {}",
            self.user_namespaces.reason().map_or("available".into(), no)
        )?;
        match &self.landlock {
            Availability::Available(a) => writeln!(f, "landlock: ABI {a}")?,
            Availability::Unavailable(r) => writeln!(f, "landlock: {}", no(r))?,
        }
        write!(
            f,
            "seccomp: {}",
            self.seccomp.reason().map_or("available".into(), no)
        )
    }
}

fn read_sysctl(path: &str) -> Option<i64> {
    std::fs::read_to_string(path).ok()?.trim().parse().ok()
}

/// The user-namespace verdict from sysctls only (no process is created): `Err(reason)`
/// when a knob forbids them for this process.
fn userns_sysctls(root: bool) -> Result<(), String> {
    if read_sysctl("/proc/sys/user/max_user_namespaces") == Some(0) {
        return Err("user.max_user_namespaces=0".into());
    }
    if !root {
        if read_sysctl("/proc/sys/kernel/unprivileged_userns_clone") == Some(0) {
            return Err("kernel.unprivileged_userns_clone=0".into());
        }
        if read_sysctl("/proc/sys/kernel/apparmor_restrict_unprivileged_userns") == Some(1) {
            return Err("kernel.apparmor_restrict_unprivileged_userns=1".into());
        }
    }
    if !sys::has_mount_setattr() {
        return Err("the kernel lacks mount_setattr (Linux < 5.12)".into());
    }
    Ok(())
}

/// Probes the kernel without creating any process: Landlock ABI
/// (`landlock_create_ruleset` version query), seccomp (`prctl(PR_GET_SECCOMP)`), user
/// namespaces (sysctls `user.max_user_namespaces`, `kernel.unprivileged_userns_clone`,
/// `kernel.apparmor_restrict_unprivileged_userns`, and `mount_setattr` presence). A few
/// syscalls and file reads: this is what the helper uses at every start; it then learns
/// the last word on user namespaces from the `clone` itself. Honours
/// [`DISABLE_LAYERS_ENV`].
pub fn probe_fast() -> LinuxFeatures {
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    let landlock = Availability::from_result(match sys::landlock_abi() {
        Ok(v) if v > 0 => Ok(v),
        Ok(_) => Err("landlock reports ABI 0".to_string()),
        Err(e) => Err(match e.raw_os_error() {
            Some(libc::ENOSYS) => "the kernel is built without Landlock".to_string(),
            Some(libc::EOPNOTSUPP) => {
                "Landlock is disabled at boot (add it to the lsm= kernel parameter)".into()
            }
            _ => format!("landlock_create_ruleset: {e}"),
        }),
    });
    let seccomp = Availability::from_result(match sys::seccomp_mode() {
        Ok(_) if super::seccomp_filter::AUDIT_ARCH.is_none() => {
            Err("cordon has no seccomp filter for this CPU architecture".to_string())
        }
        Ok(_) => Ok(Present),
        Err(e) => Err(format!("prctl(PR_GET_SECCOMP): {e}")),
    });
    let mut f = LinuxFeatures {
        kernel_release: sys::kernel_release(),
        landlock,
        user_namespaces: Availability::from_result(userns_sysctls(root).map(|()| Present)),
        seccomp,
        running_as_root: root,
        disabled: Vec::new(),
        unknown_layers: Vec::new(),
    };
    f.disable_from_env();
    f
}

/// Full probe for `cordon status`: [`probe_fast`] plus a real test of what rung 1 needs
/// first — a short-lived child creates user + mount + pid namespaces (a seccomp policy of a
/// container or an LSM can forbid it even when every sysctl allows it), maps its uid and gid
/// (a root without `CAP_SETFCAP` cannot map uid 0) and mounts a fresh `/proc` (refused when
/// the visible `/proc` is partly covered). Costs two forks (about a millisecond).
pub fn probe() -> LinuxFeatures {
    let mut f = probe_fast();
    if f.user_namespaces.is_available() {
        if let Err(reason) = super::process::try_userns_in_child() {
            f.user_namespaces = Availability::Unavailable(reason);
        }
    }
    f
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn disable_only_removes() {
        let mut f = LinuxFeatures::full(6);
        f.disable(&["Landlock", " seccomp ", "bogus", ""]);
        assert!(f.user_namespaces.is_available());
        assert_eq!(f.landlock.value(), None);
        assert!(!f.seccomp.is_available());
        assert!(f.landlock.reason().unwrap().contains("disabled"));
        assert_eq!(f.disabled, vec!["landlock", "seccomp", "bogus"]);
        // Disabling twice keeps the first reason.
        f.disable(&["landlock"]);
        assert_eq!(f.disabled.len(), 3);
    }

    #[test]
    fn unknown_names_are_recorded_and_all_means_every_layer() {
        let mut f = LinuxFeatures::full(6);
        f.disable(&["userns", "landlok", " BOGUS ", "landlok"]);
        assert!(!f.user_namespaces.is_available());
        assert_eq!(
            f.landlock.value(),
            Some(&6),
            "a typo must not count as landlock"
        );
        assert_eq!(f.unknown_layers, vec!["landlok", "bogus"]);
        let mut f = LinuxFeatures::full(6);
        f.disable(&["namespaces", ""]);
        assert!(!f.user_namespaces.is_available());
        assert!(f.unknown_layers.is_empty());
        let mut f = LinuxFeatures::full(6);
        f.disable(&["All"]);
        assert!(
            !f.user_namespaces.is_available()
                && !f.landlock.is_available()
                && !f.seccomp.is_available()
        );
        assert!(f.unknown_layers.is_empty());
        assert_eq!(
            valid_layer_names(),
            "userns, landlock, seccomp, denial-records, all"
        );
    }

    #[test]
    fn probe_is_consistent() {
        let f = probe_fast();
        assert!(!f.to_string().is_empty());
        let v = serde_json::to_value(&f).unwrap();
        let back: LinuxFeatures = serde_json::from_value(v.clone()).unwrap();
        assert_eq!(back, f);
        let full = serde_json::to_value(LinuxFeatures::full(6)).unwrap();
        assert_eq!(full["seccomp"], serde_json::json!({"available": true}));
        assert_eq!(full["landlock"], serde_json::json!({"available": 6}));
        assert!(
            v["landlock"].get("available").is_some() || v["landlock"].get("unavailable").is_some(),
            "{v}"
        );
    }
}
