//! macOS Seatbelt backend (R-T2): SBPL policy text plus `-D` parameters.
//!
//! Only `/usr/bin/sandbox-exec` is trusted. Paths never appear in the policy text; each is
//! passed as a `-D KEY=path` parameter and referenced as `(param "KEY")`, so a path with
//! quotes or parentheses cannot change the policy. The generator is pure and tested as text
//! on any host.
//!
//! Most-specific-wins (R-P2) is encoded exactly: each entry's region is its subpath minus
//! the subpaths of deeper entries beneath it; the default region is `/` minus every entry.

use cordon_policy::paths::depth;
use cordon_policy::{Access, NetworkPolicy, ResolvedFilesystem, ResolvedProfile};
use std::fmt::Write as _;

/// The only `sandbox-exec` cordon runs.
pub const SANDBOX_EXEC: &str = "/usr/bin/sandbox-exec";

/// A generated policy: SBPL text and its `(KEY, path)` parameters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeatbeltPolicy {
    /// The SBPL text (contains no paths).
    pub text: String,
    /// Parameters, in order, as `(KEY, path)`.
    pub params: Vec<(String, String)>,
}

const PREAMBLE: &str = "(version 1)
(deny default)
(allow process-exec)
(allow process-fork)
(allow signal (target same-sandbox))
(allow process-info* (target same-sandbox))
(allow sysctl-read)
(allow mach-lookup (global-name \"com.apple.system.opendirectoryd.libinfo\"))
(allow ipc-posix-shm-read* ipc-posix-shm-write-data)
(allow file-write-data (literal \"/dev/null\") (literal \"/dev/tty\"))
";

/// Generates the SBPL policy for `profile` (R-T2).
pub fn policy(profile: &ResolvedProfile) -> SeatbeltPolicy {
    let mut text = String::from(PREAMBLE);
    let mut params = Vec::new();
    match &profile.filesystem {
        ResolvedFilesystem::Unrestricted => {
            text.push_str("(allow file-read* file-write*)\n");
        }
        ResolvedFilesystem::Restricted { default, .. } => {
            let layered = profile.filesystem.layered();
            let keys: Vec<String> = layered
                .iter()
                .enumerate()
                .map(|(i, e)| {
                    let key = format!("PATH_{i}");
                    params.push((key.clone(), e.path.to_string_lossy().into_owned()));
                    key
                })
                .collect();
            // Region of entry i: its subpath minus deeper entries beneath it.
            let region = |i: usize| -> String {
                let e = layered[i];
                let mut s = format!("(require-all (subpath (param \"{}\"))", keys[i]);
                for (j, d) in layered.iter().enumerate() {
                    if j != i && depth(&d.path) > depth(&e.path) && d.path.starts_with(&e.path) {
                        let _ = write!(s, " (require-not (subpath (param \"{}\")))", keys[j]);
                    }
                }
                s.push(')');
                s
            };
            let default_region = {
                let mut s = String::from("(require-all (subpath \"/\")");
                for k in &keys {
                    let _ = write!(s, " (require-not (subpath (param \"{k}\")))");
                }
                s.push(')');
                s
            };
            if default.can_read() {
                let _ = writeln!(text, "(allow file-read* {default_region})");
            }
            if default.can_write() {
                let _ = writeln!(text, "(allow file-write* {default_region})");
            }
            for (i, e) in layered.iter().enumerate() {
                if e.access.can_read() {
                    let _ = writeln!(text, "(allow file-read* {})", region(i));
                }
                if e.access == Access::Write {
                    let _ = writeln!(text, "(allow file-write* {})", region(i));
                }
            }
            // Let path lookups pass through denied ancestors' metadata (stat of `/`).
            text.push_str("(allow file-read-metadata (literal \"/\"))\n");
        }
    }
    match profile.profile.network {
        NetworkPolicy::Enabled => text.push_str("(allow network*)\n(allow system-socket)\n"),
        NetworkPolicy::Restricted | NetworkPolicy::Managed => {}
    }
    SeatbeltPolicy { text, params }
}

/// The wrapped command: `(program, args)` for
/// `/usr/bin/sandbox-exec -p <SBPL> -D KEY=path… -- <argv>`.
pub fn wrap(profile: &ResolvedProfile, argv: &[String]) -> (String, Vec<String>) {
    let p = policy(profile);
    let mut args = vec!["-p".to_string(), p.text];
    for (k, v) in p.params {
        args.push("-D".into());
        args.push(format!("{k}={v}"));
    }
    args.push("--".into());
    args.extend(argv.iter().cloned());
    (SANDBOX_EXEC.to_string(), args)
}

#[cfg(test)]
mod tests {
    use super::*;
    use cordon_policy::{resolve, MemFs, PermissionProfile, ResolveContext};

    fn resolved(name: &str) -> ResolvedProfile {
        let fs = MemFs::new()
            .dir("/Users/u/proj/.git/hooks")
            .file("/Users/u/proj/.git/config", "")
            .dir("/Users/u/.ssh")
            .dir("/tmp");
        let ctx = ResolveContext {
            cwd: "/Users/u/proj".into(),
            home: Some("/Users/u".into()),
            tmpdir: None,
            profile_files: vec![],
            ..Default::default()
        };
        resolve(&PermissionProfile::builtin(name).unwrap(), &ctx, &fs).unwrap()
    }

    /// Golden text for the default profile (R-T2): paths only as params.
    #[test]
    fn workspace_write_golden() {
        let r = resolved("workspace-write");
        let (prog, args) = wrap(&r, &["git".into(), "status".into()]);
        assert_eq!(prog, "/usr/bin/sandbox-exec");
        assert_eq!(args[0], "-p");
        let golden_path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/golden/seatbelt_workspace_write.sbpl"
        );
        if std::env::var_os("CORDON_BLESS").is_some() {
            std::fs::write(golden_path, &args[1]).unwrap();
        }
        let golden = std::fs::read_to_string(golden_path).unwrap();
        assert_eq!(
            args[1], golden,
            "regenerate with CORDON_BLESS=1 if intended"
        );
        assert!(
            !args[1].contains("/Users/u"),
            "no path spliced into the policy text"
        );
        let dashdash = args.iter().position(|a| a == "--").unwrap();
        assert_eq!(&args[dashdash + 1..], ["git", "status"]);
        assert!(
            args.contains(&"PATH_0=/Users/u/proj".to_string())
                || args
                    .iter()
                    .any(|a| a.starts_with("PATH_") && a.ends_with("=/Users/u/proj"))
        );
    }

    #[test]
    fn hostile_path_cannot_change_the_policy() {
        let fs = MemFs::new()
            .dir("/w/a\") (allow file-write* (subpath \"/")
            .dir("/tmp");
        let ctx = ResolveContext {
            cwd: "/w/a\") (allow file-write* (subpath \"/".into(),
            home: Some("/Users/u".into()),
            tmpdir: None,
            profile_files: vec![],
            ..Default::default()
        };
        let r = resolve(
            &PermissionProfile::builtin("workspace-write").unwrap(),
            &ctx,
            &fs,
        )
        .unwrap();
        let p = policy(&r);
        assert!(!p.text.contains("/w/a"));
        assert!(p
            .params
            .iter()
            .any(|(_, v)| v.contains("(allow file-write*")));
    }

    #[test]
    fn network_and_full_access() {
        let r = resolved("danger-full-access");
        let p = policy(&r);
        assert!(p.text.contains("(allow file-read* file-write*)"));
        assert!(p.text.contains("(allow network*)"));
        let r = resolved("read-only");
        let p = policy(&r);
        assert!(!p.text.contains("network"));
        assert!(!p.text.contains("file-write* (require"));
    }
}
