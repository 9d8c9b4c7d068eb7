//! Environment scrubbing (R-L4): variables whose names match a secret pattern are dropped
//! unless the profile keeps them.

use crate::profile::EnvPolicy;
use globset::{GlobBuilder, GlobSet, GlobSetBuilder};

/// The result of [`scrub_env`]: the variables the child gets, and the names dropped.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ScrubbedEnv {
    /// `(name, value)` pairs passed to the child, in input order, then `env.set` overrides.
    pub kept: Vec<(String, String)>,
    /// Names dropped as secrets (values are never recorded).
    pub dropped: Vec<String>,
}

/// Builds a case-insensitive set. If the set cannot be built at all, `fail_closed` decides
/// what it matches: everything (for secret patterns: drop every variable rather than none)
/// or nothing (for `keep`: keep no exception).
fn globset(patterns: &[String], fail_closed: bool) -> GlobSet {
    let mut b = GlobSetBuilder::new();
    for p in patterns {
        // An invalid glob is matched literally, so a typo never widens what is kept.
        let g = GlobBuilder::new(p)
            .case_insensitive(true)
            .build()
            .or_else(|_| {
                GlobBuilder::new(&globset::escape(p))
                    .case_insensitive(true)
                    .build()
            });
        if let Ok(g) = g {
            b.add(g);
        }
    }
    b.build().unwrap_or_else(|_| {
        if fail_closed {
            GlobSet::new([globset::Glob::new("*").expect("valid glob")]).unwrap_or_default()
        } else {
            GlobSet::empty()
        }
    })
}

/// Whether a value carries credentials whatever its name: a URL with user information
/// (`postgres://user:pass@db/x`, `https://token@host/`) or a PEM private key.
pub fn value_is_secret(value: &str) -> bool {
    let v = value.trim();
    if v.starts_with("-----BEGIN") && v.contains("PRIVATE KEY") {
        return true;
    }
    // A URL carrying any user information (`https://ghp_token@host/…` puts a token in
    // the user name) or a password.
    v.contains("://")
        && url::Url::parse(v).ok().is_some_and(|u| {
            !u.username().is_empty() && u.scheme() != "file"
                || u.password().is_some_and(|p| !p.is_empty())
        })
}

/// Applies `policy` to `vars` (R-L4). Names are matched case-insensitively against
/// `secret_patterns`, and values that are URLs with a password are secrets whatever the
/// name; a secret is dropped unless its name matches `keep`. `set` is applied last (an
/// explicit value always reaches the child).
pub fn scrub_env<I>(policy: &EnvPolicy, vars: I) -> ScrubbedEnv
where
    I: IntoIterator<Item = (String, String)>,
{
    let secret = globset(&policy.secret_patterns, true);
    let keep = globset(&policy.keep, false);
    let mut out = ScrubbedEnv::default();
    for (k, v) in vars {
        if policy.set.contains_key(&k) {
            continue;
        }
        if (secret.is_match(&k) || value_is_secret(&v)) && !keep.is_match(&k) {
            out.dropped.push(k);
        } else {
            out.kept.push((k, v));
        }
    }
    for (k, v) in &policy.set {
        out.kept.push((k.clone(), v.clone()));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(names: &[&str]) -> Vec<(String, String)> {
        names
            .iter()
            .map(|n| (n.to_string(), "v".to_string()))
            .collect()
    }

    #[test]
    fn drops_secrets_keeps_the_rest() {
        let p = EnvPolicy::default();
        let r = scrub_env(
            &p,
            vars(&[
                "PATH",
                "HOME",
                "AWS_SECRET_ACCESS_KEY",
                "GITHUB_TOKEN",
                "db_password",
                "OPENAI_API_KEY",
                "LANG",
                "NPM_CONFIG__AUTH",
            ]),
        );
        let kept: Vec<_> = r.kept.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(kept, ["PATH", "HOME", "LANG"]);
        assert_eq!(r.dropped.len(), 5);
    }

    /// Names the patterns miss, and values that are secrets whatever the name.
    #[test]
    fn odd_names_and_credential_urls() {
        let p = EnvPolicy::default();
        let r = scrub_env(
            &p,
            [
                ("GITHUB_PAT", "x"),
                ("CI_JOB_JWT", "x"),
                ("SENTRY_DSN", "https://k@o.example/1"),
                ("SLACK_WEBHOOK_URL", "https://hooks.example/T/B/x"),
                ("DATABASE_URL", "postgres://u:hunter2@db/x"),
                ("HOMEPAGE", "https://example.org/"),
                ("GH_URL", "https://ghp_x@github.com/o/r"),
                ("AUTHORIZATION", "Bearer x"),
                ("MYSQL_PWD", "x"),
                ("DB_PASS", "x"),
                ("BORG_PASSPHRASE", "x"),
                ("SIGNING", "-----BEGIN OPENSSH PRIVATE KEY-----\nabc"),
                ("PWD", "/home/u/proj"),
                ("OLDPWD", "/home/u"),
            ]
            .map(|(k, v)| (k.to_string(), v.to_string())),
        );
        let kept: Vec<_> = r.kept.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(kept, ["HOMEPAGE", "PWD", "OLDPWD"]);
        assert!(r.dropped.contains(&"DATABASE_URL".to_string()));
    }

    #[test]
    fn keep_and_set_win() {
        let mut p = EnvPolicy::default();
        p.keep.push("GITHUB_TOKEN".into());
        p.set.insert("API_KEY".into(), "fixed".into());
        let r = scrub_env(&p, vars(&["GITHUB_TOKEN", "API_KEY", "X_TOKEN"]));
        assert!(r.kept.contains(&("GITHUB_TOKEN".into(), "v".into())));
        assert!(r.kept.contains(&("API_KEY".into(), "fixed".into())));
        assert_eq!(r.dropped, vec!["X_TOKEN".to_string()]);
    }
}
