//! Two separate questions (R-S1..R-S5): does this command *need* a sandbox (a property of
//! the profile), and does this host *have* one (a property of the host)? The answers stay
//! separate facts all the way to the status triple.

use crate::profile::{NetworkPolicy, PermissionProfile, ProfileKind};
use serde::{Deserialize, Serialize};
use std::fmt;

/// The caller's sandbox preference for one command (R-S1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SandboxPreference {
    /// Decide from the profile's shape.
    #[default]
    Auto,
    /// Always sandbox.
    Require,
    /// Never sandbox.
    Forbid,
}

/// Which branch of R-S1 decided [`should_sandbox`]; shown by `cordon explain`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ShouldSandboxRule {
    /// preference `forbid` → false.
    PreferenceForbid,
    /// preference `require` → true.
    PreferenceRequire,
    /// auto, step 1: a managed-network requirement → true.
    ManagedNetwork,
    /// auto, step 2: network restricted and the profile is not external → true.
    NetworkRestricted,
    /// auto, step 2: network restricted but the profile is external (the caller owns the
    /// filesystem) → false.
    ExternalOwnsFilesystem,
    /// auto, step 3: network enabled and filesystem unrestricted → false.
    FullAccess,
    /// auto, step 4: anything else → true.
    RestrictedFilesystem,
}

impl ShouldSandboxRule {
    /// The boolean this rule returns.
    pub fn needed(self) -> bool {
        !matches!(
            self,
            ShouldSandboxRule::PreferenceForbid
                | ShouldSandboxRule::ExternalOwnsFilesystem
                | ShouldSandboxRule::FullAccess
        )
    }

    /// One sentence explaining the rule.
    pub fn describe(self) -> &'static str {
        match self {
            ShouldSandboxRule::PreferenceForbid => "sandbox preference is `forbid`",
            ShouldSandboxRule::PreferenceRequire => "sandbox preference is `require`",
            ShouldSandboxRule::ManagedNetwork => {
                "R-S1 step 1: a managed network is required, which only a sandbox can enforce"
            }
            ShouldSandboxRule::NetworkRestricted => {
                "R-S1 step 2: network is restricted and cordon owns the filesystem"
            }
            ShouldSandboxRule::ExternalOwnsFilesystem => {
                "R-S1 step 2: network is restricted but the profile is external (the caller confines the filesystem)"
            }
            ShouldSandboxRule::FullAccess => {
                "R-S1 step 3: network enabled and filesystem unrestricted: nothing to confine"
            }
            ShouldSandboxRule::RestrictedFilesystem => {
                "R-S1 step 4: the filesystem is restricted"
            }
        }
    }
}

/// R-S1, with the branch that fired. See [`should_sandbox`].
pub fn should_sandbox_rule(
    profile: &PermissionProfile,
    preference: SandboxPreference,
    managed_network_required: bool,
) -> ShouldSandboxRule {
    match preference {
        SandboxPreference::Forbid => return ShouldSandboxRule::PreferenceForbid,
        SandboxPreference::Require => return ShouldSandboxRule::PreferenceRequire,
        SandboxPreference::Auto => {}
    }
    if managed_network_required {
        return ShouldSandboxRule::ManagedNetwork;
    }
    if profile.network == NetworkPolicy::Managed && profile.kind != ProfileKind::External {
        return ShouldSandboxRule::ManagedNetwork;
    }
    if profile.network != NetworkPolicy::Enabled {
        return if profile.kind == ProfileKind::External {
            ShouldSandboxRule::ExternalOwnsFilesystem
        } else {
            ShouldSandboxRule::NetworkRestricted
        };
    }
    if profile.network == NetworkPolicy::Enabled && profile.filesystem_unrestricted() {
        return ShouldSandboxRule::FullAccess;
    }
    ShouldSandboxRule::RestrictedFilesystem
}

/// R-S1 `should_sandbox(profile, preference, managed_network_required) -> bool`:
/// `forbid` → false; `require` → true; `auto` → in exactly this order: managed network
/// required → true; network restricted → true unless the profile is `external`; network
/// enabled and filesystem unrestricted → false; otherwise → true.
pub fn should_sandbox(
    profile: &PermissionProfile,
    preference: SandboxPreference,
    managed_network_required: bool,
) -> bool {
    should_sandbox_rule(profile, preference, managed_network_required).needed()
}

/// Operating system family, for [`platform_sandbox`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Os {
    /// macOS.
    Macos,
    /// Linux.
    Linux,
    /// Windows.
    Windows,
    /// Anything else.
    Other,
}

impl Os {
    /// The OS this binary was compiled for.
    pub fn current() -> Os {
        if cfg!(target_os = "macos") {
            Os::Macos
        } else if cfg!(target_os = "linux") {
            Os::Linux
        } else if cfg!(target_os = "windows") {
            Os::Windows
        } else {
            Os::Other
        }
    }
}

/// Options that change which backend a host offers (R-S2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct PlatformOptions {
    /// Windows: use the restricted-token backend. Off by default.
    pub windows_sandbox: bool,
}

/// A sandbox backend kind. `None` = no wrapping (R-S3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Backend {
    /// No sandbox: argv passes through unchanged (R-T1).
    None,
    /// macOS `sandbox-exec` with an SBPL policy (R-T2).
    Seatbelt,
    /// cordon's Linux helper: namespaces, Landlock, seccomp (R-T3).
    LinuxHelper,
    /// Windows restricted token (R-T4).
    WindowsRestrictedToken,
}

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Backend::None => "none",
            Backend::Seatbelt => "seatbelt",
            Backend::LinuxHelper => "linux-helper",
            Backend::WindowsRestrictedToken => "windows-restricted-token",
        })
    }
}

/// R-S2: which backend implementation this host family can dispatch to. `None` means
/// "this host has no implementation", nothing else.
pub fn platform_sandbox(os: Os, options: PlatformOptions) -> Option<Backend> {
    match os {
        Os::Macos => Some(Backend::Seatbelt),
        Os::Linux => Some(Backend::LinuxHelper),
        Os::Windows if options.windows_sandbox => Some(Backend::WindowsRestrictedToken),
        Os::Windows | Os::Other => None,
    }
}

/// A boolean fact with the reason for its value (one leg of the status triple).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Fact {
    /// The value.
    pub value: bool,
    /// Why it has that value, in plain words.
    pub reason: String,
}

impl Fact {
    /// Builds a fact.
    pub fn new(value: bool, reason: impl Into<String>) -> Fact {
        Fact {
            value,
            reason: reason.into(),
        }
    }
}

/// R-S3: the initial selection. Needed-but-unavailable folds to [`Backend::None`], and the
/// fold is recorded (`requested = true, available = false`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Selection {
    /// The backend to dispatch to (`None` if not needed or not available).
    pub backend: Backend,
    /// Did the profile ask for a sandbox (R-S1), and which rule said so.
    pub requested: Fact,
    /// The R-S1 branch that fired.
    pub rule: ShouldSandboxRule,
    /// Does this host family have an implementation (R-S2).
    pub available: Fact,
}

/// R-S3 `select_initial`: asks R-S1, then R-S2, folding "needed but unavailable" to
/// [`Backend::None`] while recording both facts.
pub fn select_initial(
    profile: &PermissionProfile,
    preference: SandboxPreference,
    managed_network_required: bool,
    os: Os,
    options: PlatformOptions,
) -> Selection {
    let rule = should_sandbox_rule(profile, preference, managed_network_required);
    let platform = platform_sandbox(os, options);
    let requested = Fact::new(rule.needed(), rule.describe());
    let available = match platform {
        Some(b) => Fact::new(true, format!("{os:?} host has the {b} backend")),
        None => Fact::new(
            false,
            match os {
                Os::Windows => {
                    "Windows sandbox option is off; no backend to dispatch to".to_string()
                }
                _ => format!("no sandbox implementation for {os:?}"),
            },
        ),
    };
    let backend = match (rule.needed(), platform) {
        (true, Some(b)) => b,
        _ => Backend::None,
    };
    Selection {
        backend,
        requested,
        rule,
        available,
    }
}

/// R-S5: the status triple shown everywhere the state is shown.
/// `enabled = requested ∧ available ∧ prepared ∧ allowed by the approval mode`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SandboxStatus {
    /// The profile asked for a sandbox.
    pub sandbox_requested: Fact,
    /// The host has a backend for it.
    pub sandbox_available: Fact,
    /// The sandbox is actually applied to the command.
    pub sandbox_enabled: Fact,
}

impl SandboxStatus {
    /// Combines the selection with the backend's preparation result (`Err` carries what is
    /// missing, e.g. "landlock not available") and whether the approval mode allows the
    /// sandbox (`false` for a bypass).
    pub fn new(
        selection: &Selection,
        prepared: Result<(), String>,
        approval_allows: bool,
    ) -> SandboxStatus {
        let enabled = if !selection.requested.value {
            Fact::new(false, "not requested")
        } else if !selection.available.value {
            Fact::new(
                false,
                format!("unavailable: {}", selection.available.reason),
            )
        } else if let Err(missing) = prepared {
            Fact::new(false, format!("backend cannot prepare: {missing}"))
        } else if !approval_allows {
            Fact::new(false, "approval mode bypasses the sandbox")
        } else {
            Fact::new(
                true,
                format!("{} backend prepared for this command", selection.backend),
            )
        };
        SandboxStatus {
            sandbox_requested: selection.requested.clone(),
            sandbox_available: selection.available.clone(),
            sandbox_enabled: enabled,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::{Access, FilesystemPolicy, FsEntry};

    fn profile(kind: ProfileKind, fs: FilesystemPolicy, net: NetworkPolicy) -> PermissionProfile {
        let mut p = PermissionProfile::builtin("workspace-write").unwrap();
        p.kind = kind;
        p.filesystem = fs;
        p.network = net;
        p
    }
    fn restricted() -> FilesystemPolicy {
        FilesystemPolicy::Restricted {
            default: Access::Read,
            entries: vec![FsEntry::new(":workspace", Access::Write)],
            protect_metadata: true,
        }
    }

    /// A `managed` network profile is sandboxed (the proxy relay needs the namespace).
    #[test]
    fn managed_network_profile_is_sandboxed() {
        let p = profile(
            ProfileKind::Managed,
            FilesystemPolicy::Unrestricted,
            NetworkPolicy::Managed,
        );
        assert_eq!(
            should_sandbox_rule(&p, SandboxPreference::Auto, false),
            ShouldSandboxRule::ManagedNetwork
        );
    }

    /// R-S1: the four returns of the auto branch, in order, plus the preferences.
    #[test]
    fn should_sandbox_four_returns() {
        use NetworkPolicy::{Enabled, Restricted};
        use ProfileKind::*;
        use SandboxPreference::*;
        let un = FilesystemPolicy::Unrestricted;
        // step 1: managed network → true, even for full access
        let p = profile(Managed, un.clone(), Enabled);
        assert_eq!(
            should_sandbox_rule(&p, Auto, true),
            ShouldSandboxRule::ManagedNetwork
        );
        assert!(should_sandbox(&p, Auto, true));
        // step 2: network restricted → true …
        let p = profile(Managed, un.clone(), Restricted);
        assert_eq!(
            should_sandbox_rule(&p, Auto, false),
            ShouldSandboxRule::NetworkRestricted
        );
        assert!(should_sandbox(&p, Auto, false));
        // … unless external
        let p = profile(External, restricted(), Restricted);
        assert!(!should_sandbox(&p, Auto, false));
        // step 3: enabled + unrestricted → false
        let p = profile(Managed, un.clone(), Enabled);
        assert_eq!(
            should_sandbox_rule(&p, Auto, false),
            ShouldSandboxRule::FullAccess
        );
        assert!(!should_sandbox(&p, Auto, false));
        // step 4: otherwise → true
        let p = profile(Managed, restricted(), Enabled);
        assert_eq!(
            should_sandbox_rule(&p, Auto, false),
            ShouldSandboxRule::RestrictedFilesystem
        );
        assert!(should_sandbox(&p, Auto, false));
        // preferences override the shape
        assert!(!should_sandbox(
            &profile(Managed, restricted(), Restricted),
            Forbid,
            true
        ));
        assert!(should_sandbox(
            &profile(Disabled, un, Enabled),
            Require,
            false
        ));
    }

    /// The three worked cases in SPEC R-S1.
    #[test]
    fn should_sandbox_worked_cases() {
        use SandboxPreference::Auto;
        // disabled profile + managed network → true
        let p = profile(
            ProfileKind::Disabled,
            FilesystemPolicy::Unrestricted,
            NetworkPolicy::Enabled,
        );
        assert!(should_sandbox(&p, Auto, true));
        // whole root writable plus one deny entry, network enabled → true
        let fs = FilesystemPolicy::Restricted {
            default: Access::Write,
            entries: vec![FsEntry::new("/secret", Access::Deny)],
            protect_metadata: false,
        };
        let p = profile(ProfileKind::Managed, fs, NetworkPolicy::Enabled);
        assert!(should_sandbox(&p, Auto, false));
        // external profile, network restricted → false
        let p = profile(
            ProfileKind::External,
            restricted(),
            NetworkPolicy::Restricted,
        );
        assert_eq!(
            should_sandbox_rule(&p, Auto, false),
            ShouldSandboxRule::ExternalOwnsFilesystem
        );
        assert!(!should_sandbox(&p, Auto, false));
    }

    #[test]
    fn platform_sandbox_per_os() {
        let off = PlatformOptions::default();
        let on = PlatformOptions {
            windows_sandbox: true,
        };
        assert_eq!(platform_sandbox(Os::Macos, off), Some(Backend::Seatbelt));
        assert_eq!(platform_sandbox(Os::Linux, off), Some(Backend::LinuxHelper));
        assert_eq!(platform_sandbox(Os::Windows, off), None);
        assert_eq!(
            platform_sandbox(Os::Windows, on),
            Some(Backend::WindowsRestrictedToken)
        );
        assert_eq!(platform_sandbox(Os::Other, on), None);
    }

    /// R-S3: needed but unavailable folds to None and records both facts.
    #[test]
    fn select_initial_records_the_fold() {
        let p = PermissionProfile::builtin("workspace-write").unwrap();
        let s = select_initial(
            &p,
            SandboxPreference::Auto,
            false,
            Os::Windows,
            PlatformOptions::default(),
        );
        assert_eq!(s.backend, Backend::None);
        assert!(s.requested.value);
        assert!(!s.available.value);
        let st = SandboxStatus::new(&s, Ok(()), true);
        assert!(!st.sandbox_enabled.value);
        assert!(st.sandbox_enabled.reason.contains("unavailable"));

        let s = select_initial(
            &p,
            SandboxPreference::Auto,
            false,
            Os::Linux,
            PlatformOptions::default(),
        );
        assert_eq!(s.backend, Backend::LinuxHelper);
        let st = SandboxStatus::new(&s, Err("landlock not available".into()), true);
        assert!(!st.sandbox_enabled.value);
        assert!(st.sandbox_enabled.reason.contains("landlock"));
        assert!(SandboxStatus::new(&s, Ok(()), true).sandbox_enabled.value);
        assert!(!SandboxStatus::new(&s, Ok(()), false).sandbox_enabled.value);
    }

    #[test]
    fn not_needed_is_backend_none_even_when_available() {
        let p = PermissionProfile::builtin("danger-full-access").unwrap();
        let s = select_initial(
            &p,
            SandboxPreference::Auto,
            false,
            Os::Linux,
            PlatformOptions::default(),
        );
        assert_eq!(s.backend, Backend::None);
        assert!(!s.requested.value);
        assert!(s.available.value);
    }
}
