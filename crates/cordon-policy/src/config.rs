//! The TOML configuration file: named profiles (R-P5) and, later, layers (R-P6).
//!
//! ```toml
//! default_profile = "dev"            # optional; else the built-in `workspace-write`
//!
//! [profiles.dev]
//! extends = "workspace-write"        # optional: start from a built-in or another profile
//! network = "restricted"             # enabled | restricted (or a [network] table:)
//! kind = "managed"                   # managed | disabled | external
//! on_unavailable = "refuse"          # refuse | run-unconfined
//! caches = "overlay"                 # overlay | read-only | shared (package caches, R-C1)
//! extra_caches = [{ name = "bun", path = "~/.bun/install/cache", tool = "bun" }]
//!
//! [profiles.dev.filesystem]
//! mode = "restricted"                # restricted | unrestricted
//! default = "read"                   # access of paths no entry covers: read | write | deny
//! entries = [                        # appended to the base profile's entries
//!   { path = ":workspace", access = "write" },
//!   { path = "~/.cache/cargo", access = "write" },
//!   { path = ":home/secrets", access = "deny" },
//! ]
//!
//! [profiles.dev.network]             # instead of `network = "…"` above
//! mode = "restricted"
//! unix_sockets = ["/run/user/1000/ssh-agent.sock"]   # reachable in every mode (R-N2)
//! i_understand_host_root = false     # required to list docker.sock, podman.sock, …
//! allow = ["crates.io", "**.npmjs.org"]  # the filtering proxy's lists (`cordon proxy`)
//! deny = ["evil.crates.io"]          # deny wins; bare `*` is refused
//! ports = [443]                      # optional
//! local = ["127.0.0.1:5432"]         # host loopback ports forwarded into the sandbox
//!
//! [profiles.dev.env]
//! keep = ["GITHUB_TOKEN"]            # kept although they match a secret pattern
//! set = { RUST_LOG = "info" }
//! ```
//!
//! A malformed file is an error with the file, line and column; it is never replaced by a
//! default.

use crate::network::NetworkRules;
use crate::profile::{
    Access, EnvPolicy, FilesystemPolicy, FsEntry, NetworkPolicy, OnUnavailable, PermissionProfile,
    ProfileKind, BUILTIN_PROFILES, DEFAULT_PROFILE,
};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use thiserror::Error;

/// Errors loading a configuration file or selecting a profile.
#[derive(Debug, Error)]
pub enum ConfigError {
    /// The file could not be read.
    #[error("cannot read config {path}: {message}")]
    Io {
        /// File path.
        path: PathBuf,
        /// OS error text.
        message: String,
    },
    /// The TOML is malformed or has unknown/mistyped keys. `message` names line and column.
    #[error("invalid config {path}: {message}")]
    Parse {
        /// File path.
        path: PathBuf,
        /// The parser's message (includes line and column).
        message: String,
    },
    /// A profile name that is neither built in nor defined.
    #[error("unknown profile {name:?}; available: {available}")]
    UnknownProfile {
        /// The name asked for.
        name: String,
        /// Comma-separated available names.
        available: String,
    },
    /// A profile that is incomplete or extends itself.
    #[error("profile {name:?} in {path}: {message}")]
    Invalid {
        /// Profile name.
        name: String,
        /// File path.
        path: PathBuf,
        /// What is wrong and how to fix it.
        message: String,
    },
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileDef {
    default_profile: Option<toml::Spanned<String>>,
    #[serde(default)]
    profiles: BTreeMap<String, ProfileDef>,
    /// Exec-policy rules, parsed by `cordon-execpolicy`.
    #[serde(default)]
    rules: Option<toml::Value>,
}

#[derive(Debug, Deserialize, Clone)]
#[serde(deny_unknown_fields)]
struct ProfileDef {
    extends: Option<toml::Spanned<String>>,
    kind: Option<ProfileKind>,
    network: Option<NetDef>,
    on_unavailable: Option<OnUnavailable>,
    caches: Option<crate::caches::CacheMode>,
    #[serde(default)]
    extra_caches: Vec<crate::caches::CacheSpec>,
    filesystem: Option<FsDef>,
    env: Option<EnvDef>,
    limits: Option<crate::limits::LimitsDef>,
}

/// `network = "restricted"` or a `[network]` table.
#[derive(Debug, Clone)]
enum NetDef {
    Mode(NetworkPolicy),
    Table(NetTable),
}

/// A mode string or a table, with errors that name the accepted values (an untagged
/// derive said "data did not match any variant of untagged enum NetDef" to a user who
/// wrote `network = "restrict"`: new user, stop 18).
impl<'de> Deserialize<'de> for NetDef {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = NetDef;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str(
                    "\"enabled\", \"restricted\" or \"managed\", or a [network] table \
                     (mode, allow, deny, ports, local, unix_sockets)",
                )
            }
            fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<NetDef, E> {
                use serde::de::IntoDeserializer;
                NetworkPolicy::deserialize(s.into_deserializer())
                    .map(NetDef::Mode)
                    .map_err(|_: E| {
                        E::custom(format!(
                            "network = {s:?} is not a network mode: use \"enabled\", \
                             \"restricted\" or \"managed\""
                        ))
                    })
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, m: A) -> Result<NetDef, A::Error> {
                NetTable::deserialize(serde::de::value::MapAccessDeserializer::new(m))
                    .map(NetDef::Table)
            }
        }
        d.deserialize_any(V)
    }
}

#[derive(Debug, Deserialize, Clone)]
#[serde(deny_unknown_fields)]
struct NetTable {
    mode: Option<NetworkPolicy>,
    /// Appended to the base profile's list.
    #[serde(default)]
    unix_sockets: Vec<String>,
    i_understand_host_root: Option<bool>,
    /// Appended to the base profile's lists.
    #[serde(default)]
    allow: Vec<String>,
    #[serde(default)]
    deny: Vec<String>,
    /// Replaces the base profile's list when given.
    ports: Option<Vec<u16>>,
    /// Appended to the base profile's list.
    #[serde(default)]
    local: Vec<String>,
}

impl NetDef {
    fn mode(&self) -> Option<NetworkPolicy> {
        match self {
            NetDef::Mode(m) => Some(*m),
            NetDef::Table(t) => t.mode,
        }
    }
}

#[derive(Debug, Deserialize, Clone)]
#[serde(rename_all = "kebab-case")]
enum FsMode {
    Restricted,
    Unrestricted,
}

#[derive(Debug, Deserialize, Clone)]
#[serde(deny_unknown_fields)]
struct FsDef {
    mode: Option<FsMode>,
    default: Option<Access>,
    #[serde(default)]
    entries: Vec<toml::Spanned<FsEntry>>,
    protect_metadata: Option<bool>,
}

#[derive(Debug, Deserialize, Clone)]
#[serde(deny_unknown_fields)]
struct EnvDef {
    secret_patterns: Option<Vec<String>>,
    #[serde(default)]
    keep: Vec<String>,
    #[serde(default)]
    set: BTreeMap<String, String>,
}

/// A loaded configuration file.
#[derive(Debug, Clone)]
pub struct Config {
    /// The file it came from (for messages and `cordon explain`).
    pub path: PathBuf,
    source: String,
    default_profile: Option<String>,
    profiles: BTreeMap<String, ProfileDef>,
    /// The raw `[[rules]]` array, if any, for the exec policy.
    pub rules: Option<toml::Value>,
}

fn line_of(src: &str, offset: usize) -> usize {
    src[..offset.min(src.len())].matches('\n').count() + 1
}

impl Config {
    /// Parses configuration text. `path` is used in messages only.
    ///
    /// Errors: [`ConfigError::Parse`] with line and column for malformed TOML, unknown keys
    /// or wrong value types.
    pub fn parse(text: &str, path: &Path) -> Result<Config, ConfigError> {
        let def: FileDef = toml::from_str(text).map_err(|e| ConfigError::Parse {
            path: path.to_path_buf(),
            message: e.to_string().trim_end().to_string(),
        })?;
        // An `extends` that names no profile is said when the file is read, with its line,
        // not at the first use of the profile (new-user pass nu58: `cordon profiles` listed
        // the profile as fine, and `--profile dev` said only `unknown profile
        // "workspace-writ"`); so are a `default_profile` that names none and an `extends`
        // chain that comes back to itself (new-user pass 211, #6: both said no file or
        // line, and `cordon profiles` passed them).
        let known =
            |n: &str| PermissionProfile::builtin(n).is_some() || def.profiles.contains_key(n);
        let available = |except: Option<&str>| {
            let mut v: Vec<String> = BUILTIN_PROFILES.iter().map(|s| s.to_string()).collect();
            v.extend(
                def.profiles
                    .keys()
                    .filter(|k| Some(k.as_str()) != except)
                    .cloned(),
            );
            v.join(", ")
        };
        let invalid = |name: &str, at: usize, message: String| ConfigError::Invalid {
            name: name.to_string(),
            path: path.to_path_buf(),
            message: format!("line {}: {message}", line_of(text, at)),
        };
        for (name, d) in &def.profiles {
            let Some(parent) = &d.extends else { continue };
            if !known(parent.get_ref()) {
                return Err(invalid(
                    name,
                    parent.span().start,
                    format!(
                        "`extends = {:?}`: no such profile (available: {})",
                        parent.get_ref(),
                        available(Some(name))
                    ),
                ));
            }
            // Follow the chain inside this file: a built-in ends it, and so does a profile
            // that extends the built-in of its own name (allowed, see `build`).
            let mut chain = vec![name.as_str()];
            let mut at = parent.get_ref().as_str();
            while let Some(next) = def
                .profiles
                .get(at)
                .filter(|_| at != name || chain.len() > 1)
            {
                if chain.contains(&at) {
                    chain.push(at);
                    return Err(invalid(
                        name,
                        parent.span().start,
                        format!(
                            "`extends` goes round in a circle ({}); end the chain at a \
                             built-in profile, e.g. `extends = \"workspace-write\"`",
                            chain.join(" → ")
                        ),
                    ));
                }
                chain.push(at);
                match &next.extends {
                    Some(p) if p.get_ref() != at => at = p.get_ref().as_str(),
                    _ => break,
                }
            }
        }
        if let Some(d) = &def.default_profile {
            if !known(d.get_ref()) {
                return Err(ConfigError::Parse {
                    path: path.to_path_buf(),
                    message: format!(
                        "line {}: `default_profile = {:?}`: no such profile (available: {})",
                        line_of(text, d.span().start),
                        d.get_ref(),
                        available(None)
                    ),
                });
            }
        }
        Ok(Config {
            path: path.to_path_buf(),
            source: text.to_string(),
            default_profile: def.default_profile.map(toml::Spanned::into_inner),
            profiles: def.profiles,
            rules: def.rules,
        })
    }

    /// Reads and parses a file. Errors: [`ConfigError::Io`], [`ConfigError::Parse`].
    pub fn load(path: &Path) -> Result<Config, ConfigError> {
        // A FIFO or device is never opened: reading one would hang or flood (breaker,
        // stop 19: a FIFO planted at the config's name hung the next run).
        match std::fs::metadata(path) {
            Ok(m) if !m.is_file() => {
                return Err(ConfigError::Io {
                    path: path.to_path_buf(),
                    message: "not a regular file (a FIFO, device or directory is never read)"
                        .into(),
                })
            }
            _ => {}
        }
        let text = std::fs::read_to_string(path).map_err(|e| ConfigError::Io {
            path: path.to_path_buf(),
            message: e.to_string(),
        })?;
        Config::parse(&text, path)
    }

    /// Names of the profiles this file defines.
    pub fn profile_names(&self) -> Vec<String> {
        self.profiles.keys().cloned().collect()
    }

    /// The file's `default_profile`, if set.
    pub fn default_profile(&self) -> Option<&str> {
        self.default_profile.as_deref()
    }

    /// Builds the named profile: a user-defined one (following `extends`) or a built-in.
    pub fn profile(&self, name: &str) -> Result<PermissionProfile, ConfigError> {
        self.build(name, 0)
    }

    fn build(&self, name: &str, depth: usize) -> Result<PermissionProfile, ConfigError> {
        let invalid = |message: String| ConfigError::Invalid {
            name: name.to_string(),
            path: self.path.clone(),
            message,
        };
        if depth > 16 {
            return Err(invalid("`extends` chain is too long or circular".into()));
        }
        let Some(def) = self.profiles.get(name) else {
            return builtin_or_unknown(name, &self.profile_names());
        };
        let mut base = match def.extends.as_ref().map(toml::Spanned::get_ref) {
            Some(parent) if parent == name => {
                if PermissionProfile::builtin(parent).is_some() {
                    PermissionProfile::builtin(parent).expect("checked")
                } else {
                    return Err(invalid("a profile cannot extend itself".into()));
                }
            }
            Some(parent) => self.build(parent, depth + 1)?,
            None => {
                let has_mode = def.network.as_ref().and_then(NetDef::mode).is_some();
                if def.kind.is_none() || !has_mode || def.filesystem.is_none() {
                    return Err(invalid(
                        "a profile without `extends` must set `kind`, `network` and `[filesystem]` \
                         (or add `extends = \"workspace-write\"`)"
                            .into(),
                    ));
                }
                PermissionProfile {
                    name: name.into(),
                    kind: ProfileKind::Managed,
                    filesystem: FilesystemPolicy::Unrestricted,
                    network: NetworkPolicy::Restricted,
                    network_rules: NetworkRules::default(),
                    env: EnvPolicy::default(),
                    on_unavailable: OnUnavailable::Refuse,
                    limits: Default::default(),
                    caches: Default::default(),
                    extra_caches: Vec::new(),
                }
            }
        };
        base.name = name.to_string();
        if let Some(k) = def.kind {
            base.kind = k;
        }
        if let Some(n) = def.network.as_ref().and_then(NetDef::mode) {
            base.network = n;
        }
        if let Some(NetDef::Table(t)) = &def.network {
            base.network_rules
                .unix_sockets
                .extend(t.unix_sockets.iter().cloned());
            if let Some(c) = t.i_understand_host_root {
                base.network_rules.i_understand_host_root = c;
            }
            base.network_rules.allow.extend(t.allow.iter().cloned());
            base.network_rules.deny.extend(t.deny.iter().cloned());
            if let Some(p) = &t.ports {
                base.network_rules.ports = p.clone();
            }
            base.network_rules.local.extend(t.local.iter().cloned());
            base.network_rules.validate().map_err(invalid)?;
        }
        if let Some(o) = def.on_unavailable {
            base.on_unavailable = o;
        }
        if let Some(c) = def.caches {
            base.caches = c;
        }
        for c in &def.extra_caches {
            if !crate::caches::valid_cache_name(&c.name) {
                return Err(invalid(format!(
                    "extra_caches: name {:?} must be letters, digits, `-`, `_` or `.`",
                    c.name
                )));
            }
            base.extra_caches.retain(|e| e.name != c.name);
            base.extra_caches.push(c.clone());
        }
        if let Some(fs) = &def.filesystem {
            let mut entries: Vec<FsEntry> = Vec::with_capacity(fs.entries.len());
            for s in &fs.entries {
                let line = line_of(&self.source, s.span().start);
                let where_ = format!("{}:{line}", self.path.display());
                if crate::profile::has_glob_syntax(&s.get_ref().path) {
                    return Err(invalid(format!(
                        "{where_}: entry {:?}: {}",
                        s.get_ref().path,
                        crate::profile::GLOB_REFUSED
                    )));
                }
                entries.push(s.get_ref().clone().with_source(where_));
            }
            let mode = fs.mode.clone().unwrap_or(match base.filesystem {
                FilesystemPolicy::Unrestricted if !entries.is_empty() || fs.default.is_some() => {
                    FsMode::Restricted
                }
                FilesystemPolicy::Unrestricted => FsMode::Unrestricted,
                FilesystemPolicy::Restricted { .. } => FsMode::Restricted,
            });
            base.filesystem = match mode {
                FsMode::Unrestricted => {
                    if !entries.is_empty() {
                        return Err(invalid(
                            "filesystem mode `unrestricted` cannot have entries".into(),
                        ));
                    }
                    FilesystemPolicy::Unrestricted
                }
                FsMode::Restricted => {
                    let (mut d, mut es, mut pm) = match base.filesystem {
                        FilesystemPolicy::Restricted {
                            default,
                            entries,
                            protect_metadata,
                        } => (default, entries, protect_metadata),
                        FilesystemPolicy::Unrestricted => (Access::Read, Vec::new(), true),
                    };
                    if let Some(x) = fs.default {
                        d = x;
                    }
                    if let Some(x) = fs.protect_metadata {
                        pm = x;
                    }
                    es.extend(entries);
                    FilesystemPolicy::Restricted {
                        default: d,
                        entries: es,
                        protect_metadata: pm,
                    }
                }
            };
        }
        if let Some(l) = &def.limits {
            base.limits.merge(l);
            // Checked at load: a misspelt limit is an error naming the profile, not a
            // silent default.
            if let Err(e) = base.limits.resolve(1 << 30) {
                return Err(invalid(e.to_string()));
            }
        }
        if let Some(env) = &def.env {
            if let Some(p) = &env.secret_patterns {
                base.env.secret_patterns = p.clone();
            }
            base.env.keep.extend(env.keep.iter().cloned());
            base.env
                .set
                .extend(env.set.iter().map(|(k, v)| (k.clone(), v.clone())));
        }
        Ok(base)
    }
}

fn builtin_or_unknown(name: &str, defined: &[String]) -> Result<PermissionProfile, ConfigError> {
    if let Some(mut p) = PermissionProfile::builtin(name) {
        tag_builtin(&mut p);
        return Ok(p);
    }
    let mut available: Vec<String> = BUILTIN_PROFILES.iter().map(|s| s.to_string()).collect();
    available.extend(defined.iter().cloned());
    Err(ConfigError::UnknownProfile {
        name: name.to_string(),
        available: available.join(", "),
    })
}

fn tag_builtin(p: &mut PermissionProfile) {
    let src = format!("built-in {}", p.name);
    if let FilesystemPolicy::Restricted { entries, .. } = &mut p.filesystem {
        for e in entries {
            if e.source.is_none() {
                e.source = Some(src.clone());
            }
        }
    }
}

/// Selects a profile: `name` if given, else the config's `default_profile`, else
/// [`DEFAULT_PROFILE`]. Without a config only built-ins exist.
pub fn select_profile(
    config: Option<&Config>,
    name: Option<&str>,
) -> Result<PermissionProfile, ConfigError> {
    let name = name
        .or_else(|| config.and_then(|c| c.default_profile()))
        .unwrap_or(DEFAULT_PROFILE);
    match config {
        Some(c) => c.profile(name),
        None => builtin_or_unknown(name, &[]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// New user (stop 18): a typo in the network mode or a negative limit names what is
    /// accepted (it was serde's "did not match any variant of untagged enum …"); the
    /// accepted spellings still parse (siblings), from TOML and from JSON (the payload).
    #[test]
    fn typos_in_network_and_limits_name_what_is_accepted() {
        let at = Path::new("/c.toml");
        let err = |t: &str| Config::parse(t, at).unwrap_err().to_string();
        let e = err("[profiles.p]\nextends = \"workspace-write\"\nnetwork = \"restrict\"\n");
        assert!(
            e.contains("\"enabled\", \"restricted\" or \"managed\""),
            "{e}"
        );
        assert!(!e.contains("untagged"), "{e}");
        let e =
            err("[profiles.p]\nextends = \"workspace-write\"\n[profiles.p.limits]\npids = -1\n");
        assert!(
            e.contains("cannot be negative") && e.contains("unlimited"),
            "{e}"
        );
        assert!(!e.contains("untagged"), "{e}");
        let ok = "[profiles.p]\nextends = \"workspace-write\"\n[profiles.p.network]\nmode = \
                  \"managed\"\nallow = [\"pypi.org\"]\n[profiles.p.limits]\npids = 64\n\
                  memory = \"512M\"\n";
        let p = Config::parse(ok, at).unwrap().profile("p").unwrap();
        assert_eq!(p.network, NetworkPolicy::Managed);
        let v: crate::limits::LimitValue = serde_json::from_str("\"50%\"").unwrap();
        assert_eq!(v, crate::limits::LimitValue::Text("50%".into()));
        let v: crate::limits::LimitValue = serde_json::from_str("64").unwrap();
        assert_eq!(v, crate::limits::LimitValue::Number(64));
    }

    const SAMPLE: &str = r#"
default_profile = "dev"

[profiles.dev]
extends = "workspace-write"
network = "enabled"

[profiles.dev.filesystem]
entries = [
  { path = "~/.cache/cargo", access = "write" },
]

[profiles.locked]
kind = "managed"
network = "restricted"
[profiles.locked.filesystem]
mode = "restricted"
default = "deny"
entries = [{ path = ":minimal", access = "read" }]
"#;

    #[test]
    fn named_profile_extends_builtin_and_records_line() {
        let c = Config::parse(SAMPLE, Path::new("/cfg.toml")).unwrap();
        let p = select_profile(Some(&c), None).unwrap();
        assert_eq!(p.name, "dev");
        assert_eq!(p.network, NetworkPolicy::Enabled);
        let FilesystemPolicy::Restricted { entries, .. } = &p.filesystem else {
            panic!()
        };
        let last = entries.last().unwrap();
        assert_eq!(last.path, "~/.cache/cargo");
        assert_eq!(last.source.as_deref(), Some("/cfg.toml:10"));
        assert_eq!(
            entries[0].source.as_deref(),
            Some("built-in workspace-write")
        );
    }

    #[test]
    fn standalone_profile() {
        let c = Config::parse(SAMPLE, Path::new("/cfg.toml")).unwrap();
        let p = c.profile("locked").unwrap();
        assert!(matches!(
            p.filesystem,
            FilesystemPolicy::Restricted {
                default: Access::Deny,
                ..
            }
        ));
    }

    #[test]
    fn malformed_config_names_the_line_never_defaults() {
        let bad = "[profiles.x]\nextends = \"read-only\"\nnetwork = \"sometimes\"\n";
        let e = Config::parse(bad, Path::new("/c.toml")).unwrap_err();
        let msg = e.to_string();
        assert!(msg.contains("line 3"), "{msg}");
        assert!(msg.contains("/c.toml"), "{msg}");

        let unknown_key = "[profiles.x]\nextends = \"read-only\"\nnetwrok = \"enabled\"\n";
        let msg = Config::parse(unknown_key, Path::new("/c.toml"))
            .unwrap_err()
            .to_string();
        assert!(msg.contains("line 3") && msg.contains("netwrok"), "{msg}");

        let syntax = "[profiles.x\n";
        let msg = Config::parse(syntax, Path::new("/c.toml"))
            .unwrap_err()
            .to_string();
        assert!(msg.contains("line 1"), "{msg}");
    }

    #[test]
    fn unknown_profile_lists_available() {
        let e = select_profile(None, Some("nope")).unwrap_err().to_string();
        assert!(
            e.contains("workspace-write") && e.contains("read-only"),
            "{e}"
        );
    }

    #[test]
    fn incomplete_profile_says_how_to_fix() {
        let c = Config::parse(
            "[profiles.x]\nnetwork = \"enabled\"\n",
            Path::new("/c.toml"),
        )
        .unwrap();
        let e = c.profile("x").unwrap_err().to_string();
        assert!(e.contains("extends"), "{e}");
    }

    #[test]
    fn an_unknown_extends_is_refused_when_the_file_is_read() {
        let e = Config::parse(
            "[profiles.dev]\nextends = \"workspace-writ\"\n",
            Path::new("/c.toml"),
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("workspace-writ") && e.contains("line 2") && e.contains("/c.toml"),
            "{e}"
        );
        // Twins: a built-in and a profile of the same file.
        assert!(
            Config::parse("[profiles.dev]\nextends = \"read-only\"\n", Path::new("/c")).is_ok()
        );
        assert!(Config::parse(
            "[profiles.a]\nextends = \"b\"\n[profiles.b]\nextends = \"read-only\"\n",
            Path::new("/c")
        )
        .is_ok());
    }

    /// A circular `extends` is an error when the file is read, naming the file, the line
    /// and the circle (new-user pass 211, #6: it said no line, and `cordon profiles`
    /// passed it). Twin: a profile extending the built-in of its own name is no circle.
    #[test]
    fn circular_extends_is_an_error() {
        let e = Config::parse(
            "[profiles.a]\nextends = \"b\"\n[profiles.b]\nextends = \"a\"\n",
            Path::new("/c.toml"),
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("/c.toml") && e.contains("line 2"), "{e}");
        assert!(e.contains("a → b → a"), "{e}");
        let c = Config::parse(
            "[profiles.workspace-write]\nextends = \"workspace-write\"\n",
            Path::new("/c.toml"),
        )
        .unwrap();
        assert!(c.profile("workspace-write").is_ok());
    }

    /// New-user pass 211, #6: `default_profile = "nope"` said only `unknown profile "nope"`
    /// at the first run; it is an error of the file, with its line. An `extends` typo does
    /// not offer the profile itself. Twin: a default naming a built-in or a defined
    /// profile is fine.
    #[test]
    fn an_unknown_default_profile_names_the_file_and_line() {
        let e = Config::parse(
            "# x\ndefault_profile = \"nope\"\n[profiles.dev]\nextends = \"workspace-write\"\n",
            Path::new("/c.toml"),
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("/c.toml") && e.contains("line 2") && e.contains("nope"),
            "{e}"
        );
        assert!(e.contains("dev"), "{e}");
        let e = Config::parse(
            "[profiles.dev]\nextends = \"workspace-wrte\"\n",
            Path::new("/c.toml"),
        )
        .unwrap_err()
        .to_string();
        assert!(!e.contains(", dev"), "{e}");
        for d in ["dev", "read-only"] {
            let text = format!(
                "default_profile = \"{d}\"\n[profiles.dev]\nextends = \"workspace-write\"\n"
            );
            assert!(Config::parse(&text, Path::new("/c.toml")).is_ok(), "{d}");
        }
    }

    /// The command line's words (`--network on|off`) are read in a profile too, as
    /// string and as table (new-user pass 155, #4: `network = "off"` was a load error).
    #[test]
    fn network_mode_takes_the_command_lines_words() {
        for (word, mode) in [
            ("on", NetworkPolicy::Enabled),
            ("off", NetworkPolicy::Restricted),
            ("enabled", NetworkPolicy::Enabled),
            ("restricted", NetworkPolicy::Restricted),
        ] {
            let text = format!(
                "[profiles.s]\nextends = \"workspace-write\"\nnetwork = \"{word}\"\n\
                 [profiles.t]\nextends = \"workspace-write\"\n[profiles.t.network]\nmode = \"{word}\"\n"
            );
            let c = Config::parse(&text, Path::new("/cfg.toml")).unwrap();
            assert_eq!(c.profile("s").unwrap().network, mode, "{word}");
            assert_eq!(c.profile("t").unwrap().network, mode, "{word}");
        }
        let bad = "[profiles.s]\nextends = \"workspace-write\"\nnetwork = \"of\"\n";
        assert!(Config::parse(bad, Path::new("/cfg.toml")).is_err());
    }

    #[test]
    fn network_table_sets_mode_and_unix_sockets() {
        let text = r#"
[profiles.agent]
extends = "workspace-write"
[profiles.agent.network]
mode = "enabled"
unix_sockets = ["/run/user/1000/ssh-agent.sock"]

[profiles.child]
extends = "agent"
network = "restricted"

[profiles.more]
extends = "agent"
[profiles.more.network]
unix_sockets = ["~/.gnupg/S.gpg-agent"]
"#;
        let c = Config::parse(text, Path::new("/cfg.toml")).unwrap();
        let p = c.profile("agent").unwrap();
        assert_eq!(p.network, NetworkPolicy::Enabled);
        assert_eq!(
            p.network_rules.unix_sockets,
            vec!["/run/user/1000/ssh-agent.sock"]
        );
        // A mode string keeps the parent's sockets; a table appends to them.
        let child = c.profile("child").unwrap();
        assert_eq!(child.network, NetworkPolicy::Restricted);
        assert_eq!(child.network_rules.unix_sockets.len(), 1);
        let more = c.profile("more").unwrap();
        assert_eq!(more.network, NetworkPolicy::Enabled);
        assert_eq!(more.network_rules.unix_sockets.len(), 2);
    }

    #[test]
    fn network_local_is_read_and_checked_at_load() {
        let text = r#"
[profiles.db]
extends = "workspace-write"
[profiles.db.network]
local = ["127.0.0.1:5432"]
[profiles.bad]
extends = "workspace-write"
[profiles.bad.network]
local = ["10.1.2.3:5432"]
"#;
        let c = Config::parse(text, Path::new("/cfg.toml")).unwrap();
        let p = c.profile("db").unwrap();
        assert_eq!(p.network_rules.local, vec!["127.0.0.1:5432"]);
        let e = c.profile("bad").unwrap_err().to_string();
        assert!(e.contains("not a loopback address"), "{e}");
    }

    #[test]
    fn container_engine_socket_needs_consent_at_load() {
        let text = r#"
[profiles.d]
extends = "workspace-write"
[profiles.d.network]
unix_sockets = ["/var/run/docker.sock"]
"#;
        let c = Config::parse(text, Path::new("/cfg.toml")).unwrap();
        let e = c.profile("d").unwrap_err().to_string();
        assert!(
            e.contains("docker socket") && e.contains("root on the host"),
            "{e}"
        );
        assert!(e.contains("i_understand_host_root = true"), "{e}");
        let ok = text.replace(
            "unix_sockets",
            "i_understand_host_root = true\nunix_sockets",
        );
        let c = Config::parse(&ok, Path::new("/cfg.toml")).unwrap();
        assert!(c.profile("d").unwrap().network_rules.i_understand_host_root);
        // An unknown key in the table is an error, not ignored.
        let bad = "[profiles.x]\nextends = \"read-only\"\n[profiles.x.network]\nunix_socket = []\n";
        assert!(Config::parse(bad, Path::new("/cfg.toml"))
            .and_then(|c| c.profile("x"))
            .is_err());
    }
}
