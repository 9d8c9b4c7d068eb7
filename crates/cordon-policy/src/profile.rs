//! The permission profile: what the user *wants* (R-P1, R-P2, R-P4, R-P5).
//!
//! A [`PermissionProfile`] is pure data. It says nothing about what the host can enforce;
//! that is a separate fact (see [`crate::decision`]). Paths here are still *spellings*
//! (possibly symbolic, like `:workspace/build`); [`crate::resolve`] turns them into absolute,
//! normalised paths for one cwd.

use crate::network::NetworkRules;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;

/// Version of the profile / payload format. Bumped on any incompatible change; the Linux
/// helper refuses a payload of another version (R-T3).
pub const PROFILE_FORMAT_VERSION: u32 = 1;

/// Who builds the outer sandbox (R-P1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ProfileKind {
    /// cordon builds the wrapper and confines the child.
    Managed,
    /// No outer sandbox: full filesystem access. The network field is still honoured by
    /// R-S1 (a managed-network requirement still needs a sandbox).
    Disabled,
    /// The caller already confines the filesystem; cordon may still manage the network.
    External,
}

impl fmt::Display for ProfileKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ProfileKind::Managed => "managed",
            ProfileKind::Disabled => "disabled",
            ProfileKind::External => "external",
        })
    }
}

/// Access granted to a path (R-P2). For the same path, `Deny` beats `Write` beats `Read`
/// (the derived `Ord` encodes exactly that: `Read < Write < Deny`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Access {
    /// Readable (and executable), not writable.
    Read,
    /// Readable and writable (create, modify, delete, rename within).
    Write,
    /// Neither readable nor writable; the path looks absent or unreadable (R-L1).
    Deny,
}

impl Access {
    /// Whether this access lets the path be read.
    pub fn can_read(self) -> bool {
        matches!(self, Access::Read | Access::Write)
    }
    /// Whether this access lets the path be written.
    pub fn can_write(self) -> bool {
        matches!(self, Access::Write)
    }
    /// The "width" of an access for overlay arithmetic: deny (0) < read (1) < write (2).
    /// Not the tie-break order (see the type docs); used to say "not wider than".
    pub fn width(self) -> u8 {
        match self {
            Access::Deny => 0,
            Access::Read => 1,
            Access::Write => 2,
        }
    }
}

impl fmt::Display for Access {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Access::Read => "read",
            Access::Write => "write",
            Access::Deny => "deny",
        })
    }
}

/// One filesystem entry `{path, access}` (R-P2).
///
/// `path` is a spelling: absolute (`/data`), home-relative (`~/.ssh`), relative to the cwd
/// (`build`), or symbolic: `:workspace`, `:tmp`, `:home`, `:minimal`, `:root`, optionally
/// followed by `/sub/path` (e.g. `:workspace/target`). `:tmp` and `:minimal` expand to
/// several paths.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FsEntry {
    /// Path spelling (see the type docs).
    pub path: String,
    /// Access granted to the path and everything beneath it (unless a more specific entry
    /// says otherwise).
    pub access: Access,
    /// Where this entry was written (`/x/config.toml:12`, `built-in workspace-write`,
    /// `--writable`); filled in by the loader, shown by `cordon explain`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
}

impl FsEntry {
    /// Convenience constructor.
    pub fn new(path: impl Into<String>, access: Access) -> Self {
        FsEntry {
            path: path.into(),
            access,
            source: None,
        }
    }

    /// The same entry, tagged with where it was written.
    pub fn with_source(mut self, source: impl Into<String>) -> Self {
        self.source = Some(source.into());
        self
    }
}

/// Whether a path spelling uses glob syntax: `*`, `?`, a `[…]` class or a `{a,b}`
/// alternative. Such entries are refused (see [`GLOB_REFUSED`]), never taken literally.
pub fn has_glob_syntax(spelling: &str) -> bool {
    let class = spelling
        .find('[')
        .is_some_and(|i| spelling[i..].contains(']'));
    let alt = spelling.find('{').is_some_and(|i| {
        spelling[i..]
            .find('}')
            .is_some_and(|j| spelling[i..i + j].contains(','))
    });
    spelling.contains('*') || spelling.contains('?') || class || alt
}

/// Why glob entries (`**/.env`) are refused rather than expanded: cordon hides paths that
/// exist when the command starts (mounts and Landlock rules are per path), so a pattern
/// would silently miss every match created, renamed or copied later, and expanding `**`
/// under the readable root `/` means walking the whole disk at every launch.
pub const GLOB_REFUSED: &str = "glob patterns are not supported in filesystem entries \
     (a pattern would silently miss matching files created later); list each path, e.g. \
     `:workspace/.env`, or deny the directory that holds them";

/// Filesystem policy (R-P2).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "mode", rename_all = "kebab-case", deny_unknown_fields)]
pub enum FilesystemPolicy {
    /// Everything readable and writable.
    Unrestricted,
    /// Ordered entries plus the access of paths no entry covers.
    Restricted {
        /// Access for paths no entry covers: `read` (the whole disk readable, the usual
        /// default) or `deny` (only listed paths and `:minimal` visible). `write` makes the
        /// whole disk writable, which is what "root writable plus one deny entry" means.
        #[serde(default = "default_read")]
        default: Access,
        /// Entries, in order. Most specific path wins; ties: deny > write > read.
        #[serde(default)]
        entries: Vec<FsEntry>,
        /// Keep `.git` hooks/config, `.cordon/` and profile files read-only inside writable
        /// roots (R-P3). On by default.
        #[serde(default = "default_true")]
        protect_metadata: bool,
    },
}

fn default_read() -> Access {
    Access::Read
}
fn default_true() -> bool {
    true
}

/// Network policy (R-P4). `managed` (proxy with domain policy) arrives with the proxy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum NetworkPolicy {
    /// Full network access. Also read as `on`, the command line's word (`--network on`):
    /// one vocabulary in both places (new-user pass 155, #4).
    #[serde(alias = "on")]
    Enabled,
    /// No network at all: no socket reaches another host or the host's own loopback
    /// services, nor unix sockets outside the sandbox (R-L2). Also read as `off`.
    #[serde(alias = "off")]
    Restricted,
    /// Out only through cordon's filtering proxy (issue 10 §4, §5): `network.allow` /
    /// `deny` / `ports` decide per host; inside, the command has a private loopback and
    /// the proxy at `127.0.0.1:3128` (`HTTP_PROXY`, `HTTPS_PROXY`, `ALL_PROXY` set).
    Managed,
}

impl fmt::Display for NetworkPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            NetworkPolicy::Enabled => "enabled",
            NetworkPolicy::Restricted => "restricted",
            NetworkPolicy::Managed => "managed",
        })
    }
}

/// What to do when the profile needs confinement and the host cannot give it (R-S4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum OnUnavailable {
    /// Refuse to run (the default: fail closed).
    #[default]
    Refuse,
    /// Run unconfined anyway; an explicit, logged opt-in.
    RunUnconfined,
}

/// Environment policy (R-L4): which variables reach the child.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EnvPolicy {
    /// Extra case-insensitive glob patterns of variable *names* treated as secrets, on top
    /// of the built-in word tables and value formats of [`crate::env`] (default: none).
    #[serde(default = "default_secret_patterns")]
    pub secret_patterns: Vec<String>,
    /// Names (globs allowed) kept even when they match a secret pattern.
    #[serde(default)]
    pub keep: Vec<String>,
    /// Variables set (or overridden) in the child.
    #[serde(default)]
    pub set: BTreeMap<String, String>,
}

impl Default for EnvPolicy {
    fn default() -> Self {
        EnvPolicy {
            secret_patterns: default_secret_patterns(),
            keep: Vec::new(),
            set: BTreeMap::new(),
        }
    }
}

/// The default extra secret patterns: none. Secrets are recognised by the word tables and
/// value formats of [`crate::env`]; `env.secret_patterns` adds globs on top (R-L4).
pub fn default_secret_patterns() -> Vec<String> {
    Vec::new()
}

/// A permission profile (R-P1..R-P5): the whole intent for one command runner.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PermissionProfile {
    /// Profile name (`workspace-write`, or a user-defined one).
    pub name: String,
    /// Who builds the outer sandbox.
    pub kind: ProfileKind,
    /// Filesystem intent.
    pub filesystem: FilesystemPolicy,
    /// Network intent.
    pub network: NetworkPolicy,
    /// The rest of the `[network]` table: unix sockets reachable in every mode (R-N2).
    #[serde(default, skip_serializing_if = "NetworkRules::is_empty")]
    pub network_rules: NetworkRules,
    /// Environment scrubbing.
    #[serde(default)]
    pub env: EnvPolicy,
    /// Fail closed (default) or run unconfined when confinement is unavailable (R-S4).
    #[serde(default)]
    pub on_unavailable: OnUnavailable,
    /// Resource limits (R-H5); bounded by default.
    #[serde(default)]
    pub limits: crate::limits::Limits,
    /// How known package caches are shown inside (R-C1): a private copy-on-write layer per
    /// workspace (default), read-only, or the host's own cache writable. See
    /// [`crate::caches`].
    #[serde(default)]
    pub caches: crate::caches::CacheMode,
    /// Caches added to (or replacing rows of) [`crate::caches::KNOWN_CACHES`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub extra_caches: Vec<crate::caches::CacheSpec>,
}

/// Well-known credential stores hidden from reads by the restricted built-ins (R-P5).
/// Spellings are relative to `:home`.
pub const CREDENTIAL_STORES: &[&str] = &[
    ".ssh",
    ".aws",
    ".gnupg",
    ".config/gh",
    ".config/hub",
    ".netrc",
    ".kube",
    ".config/gcloud",
    ".azure",
    ".git-credentials",
    ".config/git/credentials",
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".password-store",
    ".vault-token",
    ".terraform.d/credentials.tfrc.json",
    ".config/op",
    ".local/share/keyrings",
    ".pgpass",
    ".my.cnf",
    ".config/containers/auth.json",
    ".gem/credentials",
    ".codex/auth.json",
    ".claude/.credentials.json",
    ".bash_history",
    ".zsh_history",
    // Attack pass 47, N3: the other shells' and REPLs' histories (typed tokens, `AUTH pw`,
    // `ALTER USER … PASSWORD`): fish, zsh under prezto/grml and zsh-newuser-install,
    // psql, mysql, python, node, redis-cli, sqlite, irb.
    ".local/share/fish/fish_history",
    ".zhistory",
    ".histfile",
    ".psql_history",
    ".mysql_history",
    ".python_history",
    ".node_repl_history",
    ".rediscli_history",
    ".sqlite_history",
    ".irb_history",
    // breaker5 MEDIUM-3: common stores that were readable.
    // Maven: `<server><password>` (and its master password).
    ".m2/settings.xml",
    ".m2/settings-security.xml",
    // Gradle: publishing/signing passwords mixed with settings; no stripped view (a Java
    // properties parser with its escapes and continuations is not written): hidden whole.
    ".gradle/gradle.properties",
    // Terraform CLI config (`credentials "<host>" { token = … }`), `$TF_CLI_CONFIG_FILE`'s
    // default.
    ".terraformrc",
    ".cache/huggingface/token",
    ".huggingface/token",
    ".config/sops/age/keys.txt",
    ".config/rclone/rclone.conf",
    ".kaggle/kaggle.json",
    ".config/kaggle/kaggle.json",
    ".pulumi/credentials.json",
    ".composer/auth.json",
    ".config/composer/auth.json",
    // Attack pass 45, M3: the counterparts of stores already hidden (gh → glab and tea,
    // codex/claude → Copilot and Gemini, `.npmrc` → yarn berry's `.yarnrc.yml`, AWS → s3cmd
    // and boto) and other CLIs' tokens. No stripped view: hidden whole.
    ".config/glab-cli",
    ".config/tea",
    ".config/github-copilot",
    ".gemini/oauth_creds.json",
    ".yarnrc.yml",
    ".config/pypoetry/auth.toml",
    ".databrickscfg",
    ".s3cfg",
    ".boto",
    ".fly/config.yml",
    ".config/doctl",
    ".oci",
    ".sentryclirc",
    ".config/hcloud",
    ".config/configstore/firebase-tools.json",
    ".snowflake/connections.toml",
    ".nuget/NuGet/NuGet.Config",
    ".netlify/config.json",
    ".local/share/com.vercel.cli/auth.json",
    ".ivy2/.credentials",
];

/// System credential files hidden from reads by the restricted built-ins (R-P5, R-H3): a
/// command cordon starts as root must not read them because uid 0 owns them. Absolute
/// paths; entries that do not exist on a host are skipped. Not listed (not secrets):
/// `/etc/passwd`, `/etc/group` (needed by every tool), `/etc/sudoers` (policy, no
/// credentials). `/root/.ssh` and the other stores under root's home are covered by
/// [`CREDENTIAL_STORES`] (the account's home).
pub const SYSTEM_CREDENTIAL_FILES: &[&str] = &[
    "/etc/shadow",
    "/etc/shadow-",
    "/etc/gshadow",
    "/etc/gshadow-",
    "/etc/security/opasswd",
    "/etc/ssh/ssh_host_rsa_key",
    "/etc/ssh/ssh_host_dsa_key",
    "/etc/ssh/ssh_host_ecdsa_key",
    "/etc/ssh/ssh_host_ed25519_key",
    "/etc/ssl/private",
    "/etc/pki/tls/private",
    "/etc/krb5.keytab",
    "/etc/NetworkManager/system-connections",
    "/etc/wireguard",
    "/etc/ppp/chap-secrets",
    "/etc/ppp/pap-secrets",
];

/// Whether an entry spelling is one of the built-in credential deny entries
/// (`:home/<store>` for [`CREDENTIAL_STORES`], a [`SYSTEM_CREDENTIAL_FILES`] path, or a
/// store spelled through its tool's location variable, [`crate::locations`]).
pub fn is_builtin_credential_spelling(spelling: &str) -> bool {
    let home_rest = spelling
        .strip_prefix(":home/")
        .or_else(|| spelling.strip_prefix("~/"));
    home_rest.is_some_and(|r| {
        CREDENTIAL_STORES.contains(&r)
            || crate::stripped::STRIPPED_CONFIGS
                .iter()
                .any(|(p, _)| *p == r)
    }) || SYSTEM_CREDENTIAL_FILES.contains(&spelling)
        || crate::locations::is_builtin_spelling(spelling)
}

fn credential_entries() -> Vec<FsEntry> {
    CREDENTIAL_STORES
        .iter()
        .chain(crate::stripped::STRIPPED_CONFIGS.iter().map(|(p, _)| p))
        .map(|p| FsEntry::new(format!(":home/{p}"), Access::Deny))
        // The same stores where the tools' own location variables put them (breaker4
        // MEDIUM-3): `$CARGO_HOME/credentials.toml`, `$GNUPGHOME`, `$KUBECONFIG`, ….
        .chain(
            crate::locations::builtin_spellings()
                .into_iter()
                .map(|p| FsEntry::new(p, Access::Deny)),
        )
        .chain(
            SYSTEM_CREDENTIAL_FILES
                .iter()
                .map(|p| FsEntry::new(*p, Access::Deny)),
        )
        .collect()
}

/// Names of the built-in profiles (R-P5), default first.
pub const BUILTIN_PROFILES: &[&str] = &["workspace-write", "read-only", "danger-full-access"];

/// The default profile name.
pub const DEFAULT_PROFILE: &str = "workspace-write";

impl PermissionProfile {
    /// A built-in profile by name (R-P5), or `None`.
    ///
    /// - `workspace-write`: managed; the whole disk readable, `:workspace` and `:tmp`
    ///   writable, credential stores denied, network restricted.
    /// - `read-only`: managed; the whole disk readable (credential stores denied), nothing
    ///   writable (on Linux the sandbox still gets a private, discarded `/tmp` tmpfs),
    ///   network restricted.
    /// - `danger-full-access`: disabled; no outer sandbox, network enabled.
    pub fn builtin(name: &str) -> Option<PermissionProfile> {
        match name {
            "workspace-write" => {
                let mut entries = vec![
                    FsEntry::new(":workspace", Access::Write),
                    FsEntry::new(":tmp", Access::Write),
                ];
                entries.extend(credential_entries());
                Some(PermissionProfile {
                    name: name.into(),
                    kind: ProfileKind::Managed,
                    filesystem: FilesystemPolicy::Restricted {
                        default: Access::Read,
                        entries,
                        protect_metadata: true,
                    },
                    network: NetworkPolicy::Restricted,
                    network_rules: NetworkRules::default(),
                    env: EnvPolicy::default(),
                    on_unavailable: OnUnavailable::Refuse,
                    limits: Default::default(),
                    caches: Default::default(),
                    extra_caches: Vec::new(),
                })
            }
            "read-only" => Some(PermissionProfile {
                name: name.into(),
                kind: ProfileKind::Managed,
                filesystem: FilesystemPolicy::Restricted {
                    default: Access::Read,
                    entries: credential_entries(),
                    protect_metadata: true,
                },
                network: NetworkPolicy::Restricted,
                network_rules: NetworkRules::default(),
                env: EnvPolicy::default(),
                on_unavailable: OnUnavailable::Refuse,
                limits: Default::default(),
                caches: Default::default(),
                extra_caches: Vec::new(),
            }),
            "danger-full-access" => Some(PermissionProfile {
                name: name.into(),
                kind: ProfileKind::Disabled,
                filesystem: FilesystemPolicy::Unrestricted,
                network: NetworkPolicy::Enabled,
                network_rules: NetworkRules::default(),
                env: EnvPolicy::default(),
                on_unavailable: OnUnavailable::Refuse,
                limits: Default::default(),
                caches: Default::default(),
                extra_caches: Vec::new(),
            }),
            _ => None,
        }
    }

    /// The filesystem policy that actually applies: a `disabled` profile is unrestricted
    /// whatever its `filesystem` field says (R-P1).
    pub fn effective_filesystem(&self) -> FilesystemPolicy {
        match self.kind {
            ProfileKind::Disabled => FilesystemPolicy::Unrestricted,
            _ => self.filesystem.clone(),
        }
    }

    /// Whether the effective filesystem policy is unrestricted.
    pub fn filesystem_unrestricted(&self) -> bool {
        matches!(self.effective_filesystem(), FilesystemPolicy::Unrestricted)
    }

    /// Appends entries to a restricted filesystem policy (no-op on unrestricted).
    pub fn push_entries(&mut self, extra: impl IntoIterator<Item = FsEntry>) {
        if let FilesystemPolicy::Restricted { entries, .. } = &mut self.filesystem {
            entries.extend(extra);
        }
    }
}
