//! Credential stores and credential-mixing config files that tools relocate through their
//! own environment variables (R-P5, R-C2; breaker4 MEDIUM-3).
//!
//! The built-in deny list ([`crate::profile::CREDENTIAL_STORES`]) and the stripped configs
//! ([`crate::stripped::STRIPPED_CONFIGS`]) are spelled relative to `$HOME`. Each tool reads
//! its store from a variable first (`CARGO_HOME`, `GNUPGHOME`, `DOCKER_CONFIG`,
//! `KUBECONFIG`, `XDG_CONFIG_HOME`, …); when that points elsewhere the store was plainly
//! readable. The built-in profiles therefore also carry entries spelled `$VAR` or
//! `$VAR/<path>` ([`STORE_LOCATIONS`], [`STRIPPED_LOCATIONS`]), expanded by resolution
//! from the invoking environment ([`crate::ResolveContext::env`]): only absolute values count
//! (a relative one is ignored, as the XDG spec says), `:`-separated lists for
//! [`LIST_VARS`], and a value under `/dev`, `/proc` or `/sys` (`HISTFILE=/dev/null`) names
//! no store. A location that would hide `/`, a system or shared top directory, a home or
//! the workspace (or a directory above one) refuses the run
//! ([`crate::ResolveError::StoreLocationTooWide`]): hiding it would break every command,
//! leaving it readable would expose the store.

use crate::stripped::ConfigFormat;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Credential stores a tool relocates through a variable (breaker4 MEDIUM-3): `(variable,
/// path under its value)`; an empty path means the value itself is the store. Each row
/// stands for a [`crate::profile::CREDENTIAL_STORES`] entry.
pub const STORE_LOCATIONS: &[(&str, &str)] = &[
    // `~/.config/<x>` stores.
    ("XDG_CONFIG_HOME", "gh"),
    ("XDG_CONFIG_HOME", "hub"),
    ("XDG_CONFIG_HOME", "gcloud"),
    ("XDG_CONFIG_HOME", "git/credentials"),
    ("XDG_CONFIG_HOME", "op"),
    ("XDG_CONFIG_HOME", "containers/auth.json"),
    // breaker5 MEDIUM-3.
    ("XDG_CONFIG_HOME", "sops/age/keys.txt"),
    ("XDG_CONFIG_HOME", "rclone/rclone.conf"),
    ("XDG_CONFIG_HOME", "kaggle/kaggle.json"),
    ("XDG_CONFIG_HOME", "composer/auth.json"),
    // Attack pass 45, M3.
    ("XDG_CONFIG_HOME", "glab-cli"),
    ("XDG_CONFIG_HOME", "tea"),
    ("XDG_CONFIG_HOME", "github-copilot"),
    ("XDG_CONFIG_HOME", "pypoetry/auth.toml"),
    ("XDG_CONFIG_HOME", "doctl"),
    ("XDG_CONFIG_HOME", "hcloud"),
    ("XDG_CONFIG_HOME", "configstore/firebase-tools.json"),
    // `~/.cache/<x>` stores (breaker5 MEDIUM-3: Hugging Face's default `$HF_HOME`).
    ("XDG_CACHE_HOME", "huggingface/token"),
    // `~/.local/share/<x>` stores.
    ("XDG_DATA_HOME", "keyrings"),
    ("XDG_DATA_HOME", "com.vercel.cli/auth.json"),
    ("XDG_DATA_HOME", "fish/fish_history"),
    // podman, buildah, skopeo: `$XDG_RUNTIME_DIR/containers/auth.json` first.
    ("XDG_RUNTIME_DIR", "containers/auth.json"),
    ("REGISTRY_AUTH_FILE", ""),
    ("GH_CONFIG_DIR", ""),
    // A shell told where its history is (attack pass 47, N3).
    ("HISTFILE", ""),
    ("HUB_CONFIG", ""),
    ("CARGO_HOME", "credentials"),
    ("CARGO_HOME", "credentials.toml"),
    ("GNUPGHOME", ""),
    ("KUBECONFIG", ""),
    ("NETRC", ""),
    ("AWS_SHARED_CREDENTIALS_FILE", ""),
    ("AWS_CONFIG_FILE", ""),
    ("CLOUDSDK_CONFIG", ""),
    ("AZURE_CONFIG_DIR", ""),
    ("PASSWORD_STORE_DIR", ""),
    ("OP_CONFIG_DIR", ""),
    ("PGPASSFILE", ""),
    // The terraform CLI config holds `credentials "<host>" { token = … }` blocks.
    ("TF_CLI_CONFIG_FILE", ""),
    ("CODEX_HOME", "auth.json"),
    ("CLAUDE_CONFIG_DIR", ".credentials.json"),
    ("HISTFILE", ""),
    // breaker5 MEDIUM-3: Maven has no location variable for `settings.xml` (only `-s`).
    ("HF_HOME", "token"),
    ("HF_TOKEN_PATH", ""),
    ("SOPS_AGE_KEY_FILE", ""),
    ("RCLONE_CONFIG", ""),
    ("KAGGLE_CONFIG_DIR", "kaggle.json"),
    ("COMPOSER_HOME", "auth.json"),
    ("GRADLE_USER_HOME", "gradle.properties"),
    // A service-account key; the variable itself is dropped by the secret scrubber (its
    // name says CREDENTIALS) but the file it names was readable. Default location is under
    // `~/.config/gcloud`.
    ("GOOGLE_APPLICATION_CREDENTIALS", ""),
];

/// Config files mixing settings and secrets that a tool relocates through a variable: shown
/// stripped like their `$HOME` spelling in [`crate::stripped::STRIPPED_CONFIGS`] (R-C2;
/// breaker4 MEDIUM-3): `(variable, path under its value, format)`.
pub const STRIPPED_LOCATIONS: &[(&str, &str, ConfigFormat)] = &[
    ("DOCKER_CONFIG", "config.json", ConfigFormat::DockerConfig),
    ("CARGO_HOME", "config.toml", ConfigFormat::CargoConfig),
    ("CARGO_HOME", "config", ConfigFormat::CargoConfig),
    ("XDG_CONFIG_HOME", "git/config", ConfigFormat::GitConfig),
    ("GIT_CONFIG_GLOBAL", "", ConfigFormat::GitConfig),
    ("XDG_CONFIG_HOME", "pip/pip.conf", ConfigFormat::PipConf),
    ("PIP_CONFIG_FILE", "", ConfigFormat::PipConf),
    ("NPM_CONFIG_USERCONFIG", "", ConfigFormat::Npmrc),
    ("npm_config_userconfig", "", ConfigFormat::Npmrc),
];

/// Location variables whose value is a `:`-separated list of files (breaker4 MEDIUM-3).
pub const LIST_VARS: &[&str] = &["KUBECONFIG"];

/// git's configuration variables read by resolution besides `XDG_CONFIG_HOME` (breaker4
/// HIGH-3); `GIT_CONFIG_KEY_<n>`/`GIT_CONFIG_VALUE_<n>` are kept as well.
pub const GIT_CONFIG_VARS: &[&str] = &[
    "GIT_CONFIG_GLOBAL",
    "GIT_CONFIG_SYSTEM",
    "GIT_CONFIG_NOSYSTEM",
    "GIT_CONFIG_PARAMETERS",
    "GIT_CONFIG_COUNT",
];

/// Whether `name` is a location variable of [`STORE_LOCATIONS`] or [`STRIPPED_LOCATIONS`].
pub fn is_location_var(name: &str) -> bool {
    STORE_LOCATIONS.iter().any(|(v, _)| *v == name)
        || STRIPPED_LOCATIONS.iter().any(|(v, _, _)| *v == name)
}

/// The part of the invoking environment resolution needs ([`crate::ResolveContext::env`]):
/// the location variables, git's configuration variables and the package caches' location
/// variables ([`crate::caches::is_cache_var`]: attack pass 37, A4 — without them a cache
/// the user pointed elsewhere got a private directory in the plan that the run never
/// used); everything else is left out
/// (breaker4 MEDIUM-3, HIGH-3).
pub fn context_env<'a, I>(vars: I) -> BTreeMap<String, String>
where
    I: IntoIterator<Item = (&'a str, &'a str)>,
{
    vars.into_iter()
        .filter(|(k, _)| {
            is_location_var(k)
                || GIT_CONFIG_VARS.contains(k)
                || crate::env::is_git_config_set_member(k)
                || crate::caches::is_cache_var(k)
        })
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// `$VAR` or `$VAR/<rest>` for a location variable: `(VAR, rest)`.
pub fn split_spelling(spelling: &str) -> Option<(&str, &str)> {
    let s = spelling.strip_prefix('$')?;
    let (var, rest) = s.split_once('/').unwrap_or((s, ""));
    // `$CARGO_HOME//x` is `$CARGO_HOME/x` (attack pass 53 F1: joined as the absolute `/x`).
    is_location_var(var).then_some((var, rest.trim_start_matches('/')))
}

/// Whether `spelling` is one of the built-in relocated credential entries (a row of
/// [`STORE_LOCATIONS`] or [`STRIPPED_LOCATIONS`] spelled `$VAR[/path]`).
pub fn is_builtin_spelling(spelling: &str) -> bool {
    split_spelling(spelling).is_some_and(|(var, rest)| {
        STORE_LOCATIONS.contains(&(var, rest))
            || STRIPPED_LOCATIONS
                .iter()
                .any(|(v, r, _)| *v == var && *r == rest)
    })
}

/// The stripped format of a `$VAR[/path]` spelling of [`STRIPPED_LOCATIONS`].
pub fn format_of_spelling(spelling: &str) -> Option<ConfigFormat> {
    let (var, rest) = split_spelling(spelling)?;
    STRIPPED_LOCATIONS
        .iter()
        .find(|(v, r, _)| *v == var && *r == rest)
        .map(|(_, _, f)| *f)
}

/// The entry spellings the built-in profiles add: `$VAR` or `$VAR/<path>` for every row.
pub fn builtin_spellings() -> Vec<String> {
    let spell = |v: &str, r: &str| {
        if r.is_empty() {
            format!("${v}")
        } else {
            format!("${v}/{r}")
        }
    };
    STORE_LOCATIONS
        .iter()
        .map(|(v, r)| spell(v, r))
        .chain(STRIPPED_LOCATIONS.iter().map(|(v, r, _)| spell(v, r)))
        .collect()
}

/// The paths a `$VAR[/rest]` spelling names in `env`: each absolute value (every element of
/// a [`LIST_VARS`] list) joined with `rest`, lexically normal. A value spelled `~` or
/// `~/…` is taken under `home` (`$HOME`, absolute), as gpg (`GNUPGHOME`) and the AWS tools
/// expand it (attack pass 54 F5: such a store was left readable; hiding it where a tool
/// would not look costs nothing). Unset, empty and other relative values name nothing.
pub fn expand(
    var: &str,
    rest: &str,
    env: &BTreeMap<String, String>,
    home: Option<&Path>,
) -> Vec<PathBuf> {
    let Some(value) = env.get(var) else {
        return Vec::new();
    };
    let parts: Vec<&str> = if LIST_VARS.contains(&var) {
        value.split(':').collect()
    } else {
        vec![value.as_str()]
    };
    let home = home.filter(|h| h.is_absolute());
    parts
        .into_iter()
        .map(|v| {
            // `$HOME/…` too: botocore expands variables in its file settings (attack pass
            // 55 F2).
            let tail = v
                .strip_prefix('~')
                .or_else(|| v.strip_prefix("${HOME}"))
                .or_else(|| v.strip_prefix("$HOME"));
            match (tail, &home) {
                (Some(r), Some(h)) if r.is_empty() || r.starts_with('/') => {
                    h.join(r.trim_start_matches('/'))
                }
                _ => PathBuf::from(v),
            }
        })
        .filter(|p| p.is_absolute())
        .map(|p| {
            let p = if rest.is_empty() {
                p.to_path_buf()
            } else {
                p.join(rest.trim_start_matches('/'))
            };
            crate::paths::lexical_normalize(&p, Path::new("/"))
        })
        .collect()
}

/// Whether an expanded store path names no store: a device, process or kernel file
/// (`HISTFILE=/dev/null`, `GIT_CONFIG_GLOBAL=/dev/null`).
pub fn names_no_store(p: &Path) -> bool {
    ["/dev", "/proc", "/sys"].iter().any(|t| p.starts_with(t))
}

/// Why hiding `p` would hide a whole tree the command needs (breaker4 MEDIUM-3): `/`, a
/// system, shared or temp top directory, a home or a directory above one, or the
/// workspace or a directory above it. `None` when `p` is narrow enough to hide.
pub fn too_wide(p: &Path, homes: &[PathBuf], workspace: &Path) -> Option<&'static str> {
    if crate::paths::depth(p) == 0 {
        return Some("the root directory");
    }
    let tops = crate::resolve::MINIMAL_PATHS
        .iter()
        .chain(crate::paths::SHARED_TOP_DIRS)
        .chain(crate::paths::TEMP_TREES)
        .chain(&["/var", "/home", "/root", "/srv", "/run", "/private"]);
    if homes.iter().any(|h| h.starts_with(p)) {
        return Some("a home directory or a directory above one");
    }
    if tops.into_iter().any(|t| p == Path::new(t)) {
        return Some("a system or shared top directory");
    }
    if workspace.starts_with(p) {
        return Some("the workspace or a directory above it");
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::CREDENTIAL_STORES;
    use crate::stripped::STRIPPED_CONFIGS;

    /// Attack pass 54 F5: a store variable spelled with `~` (gpg and the AWS tools expand
    /// it) names the store under `$HOME`; other relative values name nothing.
    #[test]
    fn a_tilde_value_is_under_home() {
        let env: BTreeMap<String, String> = [
            ("GNUPGHOME", "~/.gnupg-alt"),
            ("AWS_SHARED_CREDENTIALS_FILE", "~/.myaws/creds"),
            ("KUBECONFIG", "rel/k:~/k2"),
            ("AWS_CONFIG_FILE", "$HOME/.aws2/config"),
            ("DOCKER_CONFIG", "${HOME}/.d2"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        let home = Some(Path::new("/home/u"));
        assert_eq!(
            expand("GNUPGHOME", "private", &env, home),
            vec![PathBuf::from("/home/u/.gnupg-alt/private")]
        );
        assert_eq!(
            expand("AWS_SHARED_CREDENTIALS_FILE", "", &env, home),
            vec![PathBuf::from("/home/u/.myaws/creds")]
        );
        assert_eq!(
            expand("KUBECONFIG", "", &env, home),
            vec![PathBuf::from("/home/u/k2")]
        );
        assert_eq!(
            expand("AWS_CONFIG_FILE", "", &env, home),
            vec![PathBuf::from("/home/u/.aws2/config")]
        );
        assert_eq!(
            expand("DOCKER_CONFIG", "config.json", &env, home),
            vec![PathBuf::from("/home/u/.d2/config.json")]
        );
    }

    /// Attack pass 37, A4: the caches' location variables reach resolution (a cache the
    /// user pointed elsewhere got a private directory in the plan that the run never
    /// used); other variables still do not.
    #[test]
    fn cache_variables_reach_resolution() {
        let env = context_env([
            ("npm_config_cache", "/srv/npm"),
            ("CARGO_HOME", "/usr/local/cargo"),
            ("GOCACHE", "/g"),
            ("EDITOR", "vi"),
            ("AWS_SECRET_ACCESS_KEY", "x"),
        ]);
        let keys: Vec<&str> = env.keys().map(String::as_str).collect();
        assert_eq!(keys, ["CARGO_HOME", "GOCACHE", "npm_config_cache"]);
    }

    /// Every `$HOME` store under `~/.config` or `~/.local/share` has its XDG row, so the
    /// two lists cannot drift apart.
    #[test]
    fn every_xdg_store_has_its_variable_row() {
        for s in CREDENTIAL_STORES {
            if let Some(r) = s.strip_prefix(".config/") {
                assert!(
                    STORE_LOCATIONS.contains(&("XDG_CONFIG_HOME", r)),
                    "{s}: no XDG_CONFIG_HOME row"
                );
            }
            if let Some(r) = s.strip_prefix(".local/share/") {
                assert!(
                    STORE_LOCATIONS.contains(&("XDG_DATA_HOME", r)),
                    "{s}: no XDG_DATA_HOME row"
                );
            }
            // breaker5 MEDIUM-3: `~/.cache/huggingface/token`.
            if let Some(r) = s.strip_prefix(".cache/") {
                assert!(
                    STORE_LOCATIONS.contains(&("XDG_CACHE_HOME", r)),
                    "{s}: no XDG_CACHE_HOME row"
                );
            }
        }
        for (s, f) in STRIPPED_CONFIGS {
            if let Some(r) = s.strip_prefix(".config/") {
                assert!(
                    STRIPPED_LOCATIONS.contains(&("XDG_CONFIG_HOME", r, *f)),
                    "{s}: no XDG_CONFIG_HOME row"
                );
            }
        }
    }

    #[test]
    fn values_expand_only_when_absolute() {
        let env: BTreeMap<String, String> = [
            ("KUBECONFIG", "/a/config:rel/config::/b/../c/config"),
            ("CARGO_HOME", "relative/cargo"),
            ("GNUPGHOME", "/g/"),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        assert_eq!(
            expand("KUBECONFIG", "", &env, None),
            [PathBuf::from("/a/config"), PathBuf::from("/c/config")]
        );
        assert!(expand("CARGO_HOME", "credentials", &env, None).is_empty());
        assert!(expand("NETRC", "", &env, None).is_empty());
        assert_eq!(expand("GNUPGHOME", "", &env, None), [PathBuf::from("/g")]);
        assert_eq!(
            split_spelling("$CARGO_HOME/credentials"),
            Some(("CARGO_HOME", "credentials"))
        );
        assert_eq!(split_spelling("$NOT_A_LOCATION/x"), None);
        assert!(is_builtin_spelling("$DOCKER_CONFIG/config.json"));
        assert!(!is_builtin_spelling("$DOCKER_CONFIG/other"));
        assert_eq!(
            format_of_spelling("$DOCKER_CONFIG/config.json"),
            Some(ConfigFormat::DockerConfig)
        );
    }

    #[test]
    fn wide_locations_are_named() {
        let homes = [PathBuf::from("/home/u")];
        let ws = Path::new("/work/p");
        for p in ["/", "/usr", "/home", "/home/u", "/work/p", "/work", "/tmp"] {
            assert!(too_wide(Path::new(p), &homes, ws).is_some(), "{p}");
        }
        for p in ["/home/u/.gnupg", "/work/p/.gnupg", "/opt/gpg", "/tmp/x"] {
            assert!(too_wide(Path::new(p), &homes, ws).is_none(), "{p}");
        }
    }
}
