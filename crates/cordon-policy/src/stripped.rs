//! Credential-stripped views of config files (issue 11 §2, R-C2).
//!
//! Some files mix harmless settings with secrets: `~/.npmrc` (`registry=…` and
//! `//host/:_authToken=…`), `~/.pypirc`, `~/.docker/config.json`, `~/.gitconfig`,
//! `pip.conf`, `~/.cargo/config.toml`. Hiding them whole breaks tools; showing them leaks
//! tokens. The restricted built-in profiles hide each (a deny entry, so every backend that
//! cannot do better hides it); the Linux namespace backend instead binds, read-only over
//! the original, a copy with the secret parts removed ([`strip`]), parsed with a parser for
//! the format. A file that does not parse stays hidden whole, with a note.
//!
//! What is removed, per format (comments are always dropped, they may quote a secret):
//! - npmrc (the `configparser` crate set up as npm's ini: `key=value` split at the first
//!   `=`): `_authToken`, `_auth`, `_password`, `password`, `token`, and any `//host/:…`
//!   key naming one of these; passwords in URL values.
//! - pypirc / pip.conf (the `configparser` crate set up as Python's: `key = value` or
//!   `key: value`, indented continuation lines): `password`, `token`, and passwords in URL values
//!   (`index-url = https://user:pw@host/…` → `https://host/…`).
//! - docker `config.json` (serde_json): `auths.*.{auth,password,identitytoken,
//!   registrytoken}`, top-level `identitytoken`, `HttpHeaders` entries naming auth,
//!   tokens or cookies; `credsStore` / `credHelpers` are kept (they name a helper, hold no
//!   secret; whether the helper can reach its store is the network policy's business).
//! - gitconfig (gix-config, includes not followed): sections `credential*`, `include`,
//!   `includeIf` (an included file would be read unstripped), `url "<base>"` whose base
//!   carries a password, keys `extraHeader`, `password`, `token`, `oauth*`; passwords in
//!   URL values.
//! - cargo `config.toml` (toml): `registry.token`, `registries.*.token`,
//!   `registry.secret-key`, `registries.*.secret-key`, `[env]` variables whose name looks
//!   secret; passwords in URL values.

use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// The formats with a stripped view.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ConfigFormat {
    /// `~/.npmrc`.
    Npmrc,
    /// `~/.pypirc`.
    Pypirc,
    /// `pip.conf`.
    PipConf,
    /// `~/.docker/config.json`.
    DockerConfig,
    /// `~/.gitconfig`, `~/.config/git/config`.
    GitConfig,
    /// `~/.cargo/config.toml`.
    CargoConfig,
}

/// Config files (relative to `$HOME`) shown with credentials removed, and their format.
pub const STRIPPED_CONFIGS: &[(&str, ConfigFormat)] = &[
    (".npmrc", ConfigFormat::Npmrc),
    (".pypirc", ConfigFormat::Pypirc),
    (".docker/config.json", ConfigFormat::DockerConfig),
    (".gitconfig", ConfigFormat::GitConfig),
    (".config/git/config", ConfigFormat::GitConfig),
    (".config/pip/pip.conf", ConfigFormat::PipConf),
    (".pip/pip.conf", ConfigFormat::PipConf),
    (".cargo/config.toml", ConfigFormat::CargoConfig),
    (".cargo/config", ConfigFormat::CargoConfig),
];

/// The format of a built-in deny entry spelled `:home/<rel>` (or `$VAR/<rel>` for a
/// relocated one, [`crate::locations::STRIPPED_LOCATIONS`]) that has a stripped view.
pub fn format_of_spelling(spelling: &str) -> Option<ConfigFormat> {
    if let Some(f) = crate::locations::format_of_spelling(spelling) {
        return Some(f);
    }
    let rel = spelling.strip_prefix(":home/")?;
    STRIPPED_CONFIGS
        .iter()
        .find(|(r, _)| *r == rel)
        .map(|(_, f)| *f)
}

/// A file this run shows stripped (on backends that can), from [`crate::resolve`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StrippedFile {
    /// Canonical host path (what the deny entry hides).
    pub path: PathBuf,
    /// How to parse it.
    pub format: ConfigFormat,
}

/// A stripped copy and the names (never the values) of what was removed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stripped {
    /// The file as the command sees it.
    pub text: Vec<u8>,
    /// Keys or sections removed or redacted, e.g. `//registry.npmjs.org/:_authToken`.
    pub removed: Vec<String>,
}

/// Largest file stripped; a bigger one stays hidden.
pub const MAX_STRIPPED_BYTES: usize = 1 << 20;

/// Strips the secrets out of `input` of `format`. Errors (the file then stays hidden
/// whole): not UTF-8, larger than [`MAX_STRIPPED_BYTES`], or not parseable as `format`.
pub fn strip(format: ConfigFormat, input: &[u8]) -> Result<Stripped, String> {
    if input.len() > MAX_STRIPPED_BYTES {
        return Err(format!("larger than {MAX_STRIPPED_BYTES} bytes"));
    }
    let text = std::str::from_utf8(input).map_err(|e| format!("not UTF-8: {e}"))?;
    match format {
        ConfigFormat::Npmrc => strip_ini(text, IniDialect::Npm),
        ConfigFormat::Pypirc | ConfigFormat::PipConf => strip_ini(text, IniDialect::Python),
        ConfigFormat::DockerConfig => strip_docker(text),
        ConfigFormat::GitConfig => strip_git(input),
        ConfigFormat::CargoConfig => strip_cargo(text),
    }
}

/// Whether a key names a secret (case-insensitive, the last `:`/`.`-separated part).
pub(crate) fn secret_key(key: &str) -> bool {
    let k = key.to_ascii_lowercase();
    let last = k.rsplit([':', '.']).next().unwrap_or(&k).trim();
    matches!(
        last,
        "_authtoken"
            | "_auth"
            | "_password"
            | "password"
            | "passwd"
            | "token"
            | "auth"
            | "identitytoken"
            | "registrytoken"
            | "secret-key"
            | "extraheader"
    ) || last.starts_with("oauth")
}

/// `value` with the userinfo of every URL in it removed; `None` when nothing changed.
/// A URL is a whitespace-separated word with `://` that `url` parses.
fn redact_urls(value: &str) -> Option<String> {
    let mut changed = false;
    let words: Vec<String> = value
        .split(' ')
        .map(|w| {
            let (prefix, rest) = match w.find("://") {
                Some(i) => {
                    // `sparse+https://…`, `git+ssh://…`: parse from the last scheme part.
                    let start = w[..i].rfind('+').map(|p| p + 1).unwrap_or(0);
                    (&w[..start], &w[start..])
                }
                None => return w.to_string(),
            };
            match url::Url::parse(rest) {
                Ok(mut u) if u.password().is_some() || !u.username().is_empty() => {
                    let _ = u.set_password(None);
                    let _ = u.set_username("");
                    changed = true;
                    let mut s = u.to_string();
                    if !rest.ends_with('/') && s.ends_with('/') && u.path() == "/" {
                        s.pop();
                    }
                    format!("{prefix}{s}")
                }
                _ => w.to_string(),
            }
        })
        .collect();
    changed.then(|| words.join(" "))
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum IniDialect {
    /// npm's `ini`: `key=value` split at the first `=` (keys such as `//host/:_authToken`
    /// hold colons), `;`/`#` comment lines, a bare word means `key = true`, no
    /// continuation lines.
    Npm,
    /// Python `configparser`: split at the first `=` or `:`, indented continuation
    /// lines, every line a key with a value.
    Python,
}

/// The section name the `configparser` crate files keys before any `[section]` under
/// (one no real file can spell: it holds a NUL).
const TOP: &str = "\0top";

/// Parses `text` with the `configparser` crate in the given dialect, drops secret keys,
/// removes URL credentials from the other values, and writes it back (comments are
/// dropped: they may quote a secret). Keys keep their order and case.
///
/// Errors: what the parser reports, or (Python dialect) a line that is not `key = value`.
fn strip_ini(text: &str, dialect: IniDialect) -> Result<Stripped, String> {
    use configparser::ini::{Ini, IniDefault, WriteOptions};
    let mut defaults = IniDefault::default();
    defaults.default_section = TOP.to_string();
    defaults.case_sensitive = true;
    defaults.enable_inline_comments = false;
    defaults.comment_symbols = vec![';', '#'];
    match dialect {
        IniDialect::Npm => {
            defaults.delimiters = vec!['='];
            defaults.multiline = false;
        }
        IniDialect::Python => {
            defaults.delimiters = vec!['=', ':'];
            defaults.multiline = true;
        }
    }
    let mut ini = Ini::new_from_defaults(defaults);
    let map = ini.read(text.to_string())?;
    let mut removed = Vec::new();
    let mut out = Ini::new_from_defaults(ini.defaults());
    for (section, keys) in &map {
        let label = |k: &str| {
            if section == TOP {
                k.to_string()
            } else {
                format!("[{section}] {k}")
            }
        };
        if keys.is_empty() {
            // Keep an empty section header (e.g. `[distutils]` with nothing in it).
            out.get_mut_map().entry(section.clone()).or_default();
        }
        for (key, value) in keys {
            if secret_key(key) {
                removed.push(label(key));
                continue;
            }
            let value = match value {
                None if dialect == IniDialect::Python => {
                    return Err(format!(
                        "[{section}] `{key}`: neither a section, a key = value nor a comment"
                    ));
                }
                None => None,
                Some(v) => Some(match redact_urls_lines(v) {
                    Some(r) => {
                        removed.push(format!("{}: URL credentials", label(key)));
                        r
                    }
                    None => v.clone(),
                }),
            };
            out.set(section, key, value);
        }
    }
    let opts = WriteOptions::new_with_params(dialect == IniDialect::Python, 4, 0);
    Ok(Stripped {
        text: out.pretty_writes(&opts).into_bytes(),
        removed,
    })
}

/// [`redact_urls`] on every line of a (possibly multi-line) value.
fn redact_urls_lines(value: &str) -> Option<String> {
    let mut changed = false;
    let lines: Vec<String> = value
        .split('\n')
        .map(|l| match redact_urls(l) {
            Some(r) => {
                changed = true;
                r
            }
            None => l.to_string(),
        })
        .collect();
    changed.then(|| lines.join("\n"))
}

fn strip_docker(text: &str) -> Result<Stripped, String> {
    use serde_json::Value;
    let mut v: Value = serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))?;
    let Value::Object(top) = &mut v else {
        return Err("not a JSON object".into());
    };
    let mut removed = Vec::new();
    if top.remove("identitytoken").is_some() {
        removed.push("identitytoken".to_string());
    }
    if let Some(Value::Object(auths)) = top.get_mut("auths") {
        for (host, entry) in auths.iter_mut() {
            if let Value::Object(e) = entry {
                for k in ["auth", "password", "identitytoken", "registrytoken"] {
                    if e.remove(k).is_some() {
                        removed.push(format!("auths.{host}.{k}"));
                    }
                }
            }
        }
    }
    if let Some(Value::Object(h)) = top.get_mut("HttpHeaders") {
        let names: Vec<String> = h
            .keys()
            .filter(|k| {
                let l = k.to_ascii_lowercase();
                ["auth", "token", "cookie", "secret", "key"]
                    .iter()
                    .any(|s| l.contains(s))
            })
            .cloned()
            .collect();
        for n in names {
            h.remove(&n);
            removed.push(format!("HttpHeaders.{n}"));
        }
    }
    redact_json_urls(&mut v, "", &mut removed);
    let mut text = serde_json::to_string_pretty(&v).map_err(|e| e.to_string())?;
    text.push('\n');
    Ok(Stripped {
        text: text.into_bytes(),
        removed,
    })
}

fn redact_json_urls(v: &mut serde_json::Value, at: &str, removed: &mut Vec<String>) {
    use serde_json::Value;
    match v {
        Value::String(s) => {
            if let Some(r) = redact_urls(s) {
                *s = r;
                removed.push(format!("{at}: URL credentials"));
            }
        }
        Value::Array(a) => {
            for x in a {
                redact_json_urls(x, at, removed);
            }
        }
        Value::Object(o) => {
            for (k, x) in o.iter_mut() {
                let p = if at.is_empty() {
                    k.clone()
                } else {
                    format!("{at}.{k}")
                };
                redact_json_urls(x, &p, removed);
            }
        }
        _ => {}
    }
}

fn strip_git(input: &[u8]) -> Result<Stripped, String> {
    use gix_config::file::Metadata;
    let mut file = gix_config::File::from_bytes_no_includes(
        input,
        Metadata::default(),
        gix_config::file::init::Options {
            lossy: true, // comments dropped: they may quote a secret
            ..Default::default()
        },
    )
    .map_err(|e| format!("not a git config file: {e}"))?;
    let mut removed = Vec::new();
    let ids: Vec<_> = file.section_ids().collect();
    for id in ids {
        let Some(mut s) = file.section_mut_by_id(id) else {
            continue;
        };
        let name = s.header().name().to_string().to_ascii_lowercase();
        let sub = s.header().subsection_name().map(|b| b.to_string());
        let label = match &sub {
            Some(x) => format!("{name} \"{}\"", redact_urls(x).unwrap_or_else(|| x.clone())),
            None => name.clone(),
        };
        let whole = matches!(name.as_str(), "credential" | "include" | "includeif")
            || (name == "url" && sub.as_deref().and_then(redact_urls).is_some());
        if whole {
            drop(s);
            file.remove_section_by_id(id);
            removed.push(format!("[{label}]"));
            continue;
        }
        let keys: Vec<String> = s.value_names().collect();
        let mut done: Vec<String> = Vec::new();
        for k in keys {
            let kl = k.to_ascii_lowercase();
            if done.contains(&kl) {
                continue;
            }
            done.push(kl.clone());
            let values: Vec<String> = s.values(&k).iter().map(|v| v.to_string()).collect();
            let redacted: Vec<Option<String>> = values.iter().map(|v| redact_urls(v)).collect();
            let secret = secret_key(&kl);
            if !secret && redacted.iter().all(Option::is_none) {
                continue;
            }
            while s.remove(&k).is_some() {}
            if secret {
                removed.push(format!("{label}.{k}"));
                continue;
            }
            removed.push(format!("{label}.{k}: URL credentials"));
            for (v, r) in values.iter().zip(redacted) {
                let nv = r.unwrap_or_else(|| v.clone());
                s.push(k.as_str(), Some(gix_config::AsBStr::as_bstr(&nv)))
                    .map_err(|e| e.to_string())?;
            }
        }
    }
    let mut out = Vec::new();
    file.write_to(&mut out).map_err(|e| e.to_string())?;
    Ok(Stripped { text: out, removed })
}

fn strip_cargo(text: &str) -> Result<Stripped, String> {
    let mut t: toml::Table = text.parse().map_err(|e| format!("not TOML: {e}"))?;
    let mut removed = Vec::new();
    if let Some(toml::Value::Table(r)) = t.get_mut("registry") {
        for k in ["token", "secret-key"] {
            if r.remove(k).is_some() {
                removed.push(format!("registry.{k}"));
            }
        }
    }
    if let Some(toml::Value::Table(rs)) = t.get_mut("registries") {
        for (name, r) in rs.iter_mut() {
            if let toml::Value::Table(r) = r {
                for k in ["token", "secret-key"] {
                    if r.remove(k).is_some() {
                        removed.push(format!("registries.{name}.{k}"));
                    }
                }
            }
        }
    }
    if let Some(toml::Value::Table(env)) = t.get_mut("env") {
        let names: Vec<String> = env
            .keys()
            .filter(|k| {
                let u = k.to_ascii_uppercase();
                [
                    "TOKEN",
                    "SECRET",
                    "PASSWORD",
                    "PASSWD",
                    "KEY",
                    "AUTH",
                    "CREDENTIAL",
                ]
                .iter()
                .any(|s| u.contains(s))
            })
            .cloned()
            .collect();
        for n in names {
            env.remove(&n);
            removed.push(format!("env.{n}"));
        }
    }
    redact_toml_urls(&mut t, "", &mut removed);
    let text = toml::to_string(&t).map_err(|e| e.to_string())?;
    Ok(Stripped {
        text: text.into_bytes(),
        removed,
    })
}

fn redact_toml_urls(t: &mut toml::Table, at: &str, removed: &mut Vec<String>) {
    fn walk(v: &mut toml::Value, at: &str, removed: &mut Vec<String>) {
        match v {
            toml::Value::String(s) => {
                if let Some(r) = redact_urls(s) {
                    *s = r;
                    removed.push(format!("{at}: URL credentials"));
                }
            }
            toml::Value::Array(a) => {
                for x in a {
                    walk(x, at, removed);
                }
            }
            toml::Value::Table(t) => redact_toml_urls(t, at, removed),
            _ => {}
        }
    }
    for (k, v) in t.iter_mut() {
        let p = if at.is_empty() {
            k.clone()
        } else {
            format!("{at}.{k}")
        };
        walk(v, &p, removed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(f: ConfigFormat, t: &str) -> (String, Vec<String>) {
        let r = strip(f, t.as_bytes()).unwrap();
        (String::from_utf8(r.text).unwrap(), r.removed)
    }

    #[test]
    fn npmrc_keeps_settings_drops_tokens() {
        let (out, rm) = s(
            ConfigFormat::Npmrc,
            "registry=https://registry.npmjs.org/\nupdate-notifier=false\n\
             //registry.npmjs.org/:_authToken=npm_SECRET1\n; token npm_SECRET2\n\
             _auth = dXNlcjpTRUNSRVQz\n//npm.pkg.github.com/:_password=SECRET4\n\
             @scope:registry=https://u:SECRET5@npm.example.com/\nemail=a@b.c\n",
        );
        assert!(out.contains("registry=https://registry.npmjs.org/"));
        assert!(out.contains("update-notifier=false"));
        assert!(out.contains("email=a@b.c"));
        assert!(
            out.contains("@scope:registry=https://npm.example.com/"),
            "{out}"
        );
        assert!(
            !out.contains("SECRET") && !out.contains("dXNlcjpTRUNSRVQz"),
            "{out}"
        );
        assert_eq!(rm.len(), 4, "{rm:?}");
    }

    #[test]
    fn pypirc_and_pip_conf() {
        let (out, _) = s(
            ConfigFormat::Pypirc,
            "[distutils]\nindex-servers =\n    pypi\n    private\n\n[pypi]\nusername = __token__\n\
             password = pypi-SECRET\n\n[private]\nrepository: https://u:SECRET@p.example/\n",
        );
        // Written back by the configparser crate: `key = value`, continuation lines
        // indented by four spaces.
        assert!(
            out.contains("index-servers = \n    pypi\n    private"),
            "{out}"
        );
        assert!(out.contains("username = __token__"));
        assert!(!out.contains("SECRET"), "{out}");
        let (out, rm) = s(
            ConfigFormat::PipConf,
            "[global]\ntimeout = 60\nindex-url = https://user:SECRET@pypi.example/simple\n\
             extra-index-url =\n    https://a:SECRET@x.example/simple\n    https://y.example/simple\n",
        );
        assert!(out.contains("timeout = 60"));
        assert!(
            out.contains("index-url = https://pypi.example/simple"),
            "{out}"
        );
        assert!(out.contains("https://y.example/simple"));
        assert!(!out.contains("SECRET"), "{out}");
        assert_eq!(rm.len(), 2);
        assert!(strip(ConfigFormat::PipConf, b"[global]\nnot a key line\n").is_err());
    }

    /// The ini views come from the configparser crate: `=` inside npm values and `:` inside
    /// npm keys survive, a bare npm word stays, an unterminated section header is an error
    /// (the file is then hidden whole).
    #[test]
    fn ini_views_use_a_real_parser() {
        let (out, rm) = s(
            ConfigFormat::Npmrc,
            "registry=https://r.example/?a=b\n//r.example/:_authToken=x=y\nstrict-ssl\n",
        );
        assert!(out.contains("registry=https://r.example/?a=b"), "{out}");
        assert!(out.contains("strict-ssl\n"), "{out}");
        assert!(!out.contains("x=y"), "{out}");
        assert_eq!(rm, vec!["//r.example/:_authToken".to_string()]);
        for f in [ConfigFormat::Npmrc, ConfigFormat::PipConf] {
            assert!(strip(f, b"[global\ntimeout = 1\n").is_err(), "{f:?}");
        }
    }

    #[test]
    fn docker_config() {
        let (out, rm) = s(
            ConfigFormat::DockerConfig,
            r#"{"auths":{"ghcr.io":{"auth":"U0VDUkVU"},"x.io":{"identitytoken":"SECRET"}},
               "credsStore":"desktop","HttpHeaders":{"User-Agent":"d","X-Auth-Token":"SECRET"},
               "proxies":{"default":{"httpProxy":"http://u:SECRET@proxy:3128"}}}"#,
        );
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["credsStore"], "desktop");
        assert!(v["auths"]["ghcr.io"].is_object());
        assert_eq!(v["HttpHeaders"]["User-Agent"], "d");
        assert_eq!(v["proxies"]["default"]["httpProxy"], "http://proxy:3128");
        assert!(
            !out.contains("SECRET") && !out.contains("U0VDUkVU"),
            "{out}"
        );
        assert_eq!(rm.len(), 4, "{rm:?}");
        assert!(strip(ConfigFormat::DockerConfig, b"{not json").is_err());
    }

    #[test]
    fn gitconfig() {
        let (out, rm) = s(
            ConfigFormat::GitConfig,
            "[user]\n\tname = A\n\temail = a@b.c\n# token SECRET0\n[credential]\n\thelper = store\n\
             [credential \"https://x\"]\n\tusername = u\n[http]\n\textraHeader = Authorization: Bearer SECRET1\n\
             [url \"https://u:SECRET2@github.com/\"]\n\tinsteadOf = https://github.com/\n\
             [remote \"origin\"]\n\turl = https://bob:SECRET3@example.com/r.git\n\
             [include]\n\tpath = ~/.gitconfig-secret\n[core]\n\teditor = vim\n[github]\n\ttoken = SECRET4\n",
        );
        let flat = out.replace([' ', '\t'], "");
        assert!(
            flat.contains("name=A") && flat.contains("email=a@b.c"),
            "{out}"
        );
        assert!(flat.contains("editor=vim"), "{out}");
        assert!(out.contains("https://example.com/r.git"), "{out}");
        assert!(!out.contains("SECRET"), "{out}");
        assert!(!out.contains("credential") && !out.contains("gitconfig-secret"));
        assert!(rm.iter().any(|r| r == "[credential]"), "{rm:?}");
        assert!(strip(ConfigFormat::GitConfig, b"[unterminated\n").is_err());
    }

    #[test]
    fn cargo_config() {
        let (out, rm) = s(
            ConfigFormat::CargoConfig,
            "[registry]\ntoken = \"SECRET1\"\ndefault = \"mine\"\n[registries.mine]\n\
             index = \"sparse+https://u:SECRET2@r.example/index/\"\ntoken = \"SECRET3\"\n\
             [build]\njobs = 2\n[env]\nAPI_TOKEN = \"SECRET4\"\nRUST_LOG = \"info\"\n",
        );
        assert!(
            out.contains("jobs = 2") && out.contains("RUST_LOG"),
            "{out}"
        );
        assert!(out.contains("sparse+https://r.example/index/"), "{out}");
        assert!(!out.contains("SECRET"), "{out}");
        assert_eq!(rm.len(), 4, "{rm:?}");
        assert!(strip(ConfigFormat::CargoConfig, b"[build\n").is_err());
    }
}
