//! breaker4 MEDIUM-3: credential stores (and credential-mixing configs) that the tools'
//! own location variables put outside `$HOME` are hidden (or shown stripped) like their
//! `$HOME` spelling; explain names the variable, the context counts them in the
//! credential group; a location that would hide a whole tree refuses the run.
mod common;
use cordon_policy::*;
use std::path::{Path, PathBuf};

fn ctx(env: &[(&str, &str)]) -> ResolveContext {
    let mut c = common::ctx_at("/home/u/proj", "/home/u");
    c.env = cordon_policy::locations::context_env(env.iter().copied());
    c
}

fn fs() -> MemFs {
    MemFs::new()
        .dir("/home/u/proj/.git/hooks")
        .file("/home/u/proj/.git/config", "")
        .dir("/tmp")
        .file("/x/xdg/gh/hosts.yml", "oauth_token: gho_SECRET")
        .file("/x/xdg/git/credentials", "https://u:pw@github.com")
        .file("/x/cargo/credentials.toml", "token=\"CARGO\"")
        .file("/x/cargo/config.toml", "[build]\n")
        .file("/x/gnupg/private-keys-v1.d/k.key", "GPG")
        .file("/x/docker/config.json", "{}")
        .file("/x/kube/a", "token: A")
        .file("/x/kube/b", "token: B")
        .file("/x/netrc", "machine h password p")
        .file("/x/aws/credentials", "[default]")
        .file("/x/data/keyrings/login.keyring", "K")
}

fn builtin(name: &str) -> PermissionProfile {
    select_profile(None, Some(name)).unwrap()
}

fn access(r: &ResolvedProfile, fs: &MemFs, p: &str) -> Access {
    r.filesystem.access_for(fs, Path::new(p)).access
}

const ENV: &[(&str, &str)] = &[
    ("XDG_CONFIG_HOME", "/x/xdg"),
    ("XDG_DATA_HOME", "/x/data"),
    ("CARGO_HOME", "/x/cargo"),
    ("GNUPGHOME", "/x/gnupg"),
    ("DOCKER_CONFIG", "/x/docker"),
    ("KUBECONFIG", "/x/kube/a:kube/rel:/x/kube/b"),
    ("NETRC", "/x/netrc"),
    ("AWS_SHARED_CREDENTIALS_FILE", "/x/aws/credentials"),
    ("HISTFILE", "/dev/null"),
    ("PATH", "/usr/bin"),
];

#[test]
fn stores_are_hidden_where_their_variables_put_them() {
    let fs = fs();
    for profile in ["workspace-write", "read-only"] {
        let r = resolve(&builtin(profile), &ctx(ENV), &fs).unwrap();
        for p in [
            "/x/xdg/gh/hosts.yml",
            "/x/xdg/git/credentials",
            "/x/cargo/credentials.toml",
            "/x/gnupg/private-keys-v1.d/k.key",
            "/x/kube/a",
            "/x/kube/b",
            "/x/netrc",
            "/x/aws/credentials",
            "/x/data/keyrings/login.keyring",
        ] {
            assert_eq!(access(&r, &fs, p), Access::Deny, "{profile}: {p}");
        }
        // Settings files mixing secrets: hidden by the entry, shown stripped by the backend.
        let stripped: Vec<(&Path, stripped::ConfigFormat)> = r
            .stripped
            .iter()
            .map(|f| (f.path.as_path(), f.format))
            .collect();
        assert!(stripped.contains(&(
            Path::new("/x/docker/config.json"),
            stripped::ConfigFormat::DockerConfig
        )));
        assert!(stripped.contains(&(
            Path::new("/x/cargo/config.toml"),
            stripped::ConfigFormat::CargoConfig
        )));
        // /dev/null names no store: nothing denied there, no note either.
        assert_eq!(access(&r, &fs, "/dev/null"), Access::Read);
        assert!(
            !r.notes.iter().any(|n| n.contains("HISTFILE")),
            "{:?}",
            r.notes
        );
        // The rest of the tree is as before.
        assert_eq!(access(&r, &fs, "/x/cargo/bin"), Access::Read);
    }
}

#[test]
fn unset_and_relative_values_name_nothing() {
    let fs = fs();
    let r = resolve(
        &builtin("workspace-write"),
        &ctx(&[("CARGO_HOME", "x/cargo"), ("GNUPGHOME", "")]),
        &fs,
    )
    .unwrap();
    assert_eq!(access(&r, &fs, "/x/cargo/credentials.toml"), Access::Read);
    assert_eq!(
        access(&r, &fs, "/x/gnupg/private-keys-v1.d/k.key"),
        Access::Read
    );
    // No "skipped: $HOME is not set" noise for the variable entries.
    assert!(
        !r.notes.iter().any(|n| n.contains("skipped")),
        "{:?}",
        r.notes
    );
    // The $HOME stores are there as always.
    assert_eq!(
        access(&r, &fs, "/home/u/.cargo/credentials.toml"),
        Access::Deny
    );
}

#[test]
fn explain_and_context_name_the_variable_and_the_group() {
    let fs = fs();
    let p = builtin("workspace-write");
    let r = resolve(&p, &ctx(ENV), &fs).unwrap();
    let sel = select_initial(
        &p,
        SandboxPreference::Auto,
        false,
        Os::Linux,
        PlatformOptions::default(),
    );
    let status = SandboxStatus::new(&sel, Ok(()), true);
    let e = explain(
        &r,
        &fs,
        &[
            PathBuf::from("/x/cargo/credentials.toml"),
            PathBuf::from("/x/gnupg/private-keys-v1.d/k.key"),
        ],
        &sel,
        &status,
        None,
    );
    let pe = &e.paths[0];
    assert_eq!(pe.access, Access::Deny);
    assert!(
        matches!(&pe.decided_by, Decider::Entry { spelling, source, .. }
            if spelling == "$CARGO_HOME/credentials.toml"
                && source.as_deref() == Some("built-in workspace-write")),
        "{:?}",
        pe.decided_by
    );
    let pe = &e.paths[1];
    assert!(
        matches!(&pe.decided_by, Decider::Entry { spelling, .. } if spelling == "$GNUPGHOME"),
        "{:?}",
        pe.decided_by
    );
    assert!(
        pe.hint
            .as_deref()
            .is_some_and(|h| h.contains("well-known credential store")),
        "{:?}",
        pe.hint
    );
    // The relocated entries are members of the credential group, not separate lines.
    let grouped: Vec<PathBuf> = r
        .filesystem
        .denied()
        .into_iter()
        .filter(|e| context::in_credential_group(e))
        .map(|e| e.path.clone())
        .collect();
    assert!(grouped.contains(&PathBuf::from("/x/gnupg")), "{grouped:?}");
    assert!(grouped.contains(&PathBuf::from("/x/kube/b")), "{grouped:?}");
    let compact = environment_context(&r, &status, sel.backend, DEFAULT_APPROVAL_MODE);
    assert!(!compact.contains("/x/gnupg"), "{compact}");
    assert!(
        compact.contains(&format!("count=\"{}\"", grouped.len())),
        "{compact}"
    );
}

/// A location that would hide `/`, a home, a system directory or the workspace (or a
/// directory above them) refuses the run: hiding it would break every command, leaving it
/// readable would expose the store.
#[test]
fn a_location_that_would_hide_a_whole_tree_refuses_the_run() {
    let fs = fs();
    for (var, value) in [
        ("GNUPGHOME", "/"),
        ("GNUPGHOME", "/home/u"),
        ("GNUPGHOME", "/home"),
        ("PASSWORD_STORE_DIR", "/usr"),
        ("GH_CONFIG_DIR", "/home/u/proj"),
        ("NETRC", "/home/u/"),
        ("KUBECONFIG", "/x/kube/a:/"),
    ] {
        let err = resolve(&builtin("workspace-write"), &ctx(&[(var, value)]), &fs).unwrap_err();
        assert!(
            matches!(&err, ResolveError::StoreLocationTooWide { var: v, .. } if v == var),
            "{var}={value}: {err:?}"
        );
        let msg = err.to_string();
        assert!(msg.contains(&format!("env -u {var}")), "{msg}");
    }
    // Inside the workspace, or a tree of its own: hidden, the run goes on.
    let r = resolve(
        &builtin("workspace-write"),
        &ctx(&[("GNUPGHOME", "/home/u/proj/.gnupg-test")]),
        &fs,
    )
    .unwrap();
    assert_eq!(access(&r, &fs, "/home/u/proj/.gnupg-test/x"), Access::Deny);
    assert_eq!(access(&r, &fs, "/home/u/proj/src"), Access::Write);
    // A profile without the built-in list is not concerned.
    let mut p = builtin("workspace-write");
    p.filesystem = FilesystemPolicy::Restricted {
        default: Access::Read,
        entries: vec![FsEntry::new(":workspace", Access::Write)],
        protect_metadata: true,
    };
    assert!(resolve(&p, &ctx(&[("GNUPGHOME", "/")]), &fs).is_ok());
}

/// breaker5 MEDIUM-3: common stores that were readable are hidden under `$HOME` and where
/// their variables put them (the key file `GOOGLE_APPLICATION_CREDENTIALS` names too).
#[test]
fn breaker5_common_stores_are_hidden() {
    let home_files = [
        ".m2/settings.xml",
        ".m2/settings-security.xml",
        ".gradle/gradle.properties",
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
    ];
    let relocated = [
        ("HF_HOME", "/y/hf", "/y/hf/token"),
        ("HF_TOKEN_PATH", "/y/hftok", "/y/hftok"),
        ("SOPS_AGE_KEY_FILE", "/y/age.txt", "/y/age.txt"),
        ("RCLONE_CONFIG", "/y/rclone.conf", "/y/rclone.conf"),
        ("KAGGLE_CONFIG_DIR", "/y/kaggle", "/y/kaggle/kaggle.json"),
        ("COMPOSER_HOME", "/y/composer", "/y/composer/auth.json"),
        (
            "GRADLE_USER_HOME",
            "/y/gradle",
            "/y/gradle/gradle.properties",
        ),
        ("TF_CLI_CONFIG_FILE", "/y/tfrc", "/y/tfrc"),
        ("GOOGLE_APPLICATION_CREDENTIALS", "/y/sa.json", "/y/sa.json"),
        ("XDG_CACHE_HOME", "/y/cache", "/y/cache/huggingface/token"),
        ("XDG_CONFIG_HOME", "/y/cfg", "/y/cfg/sops/age/keys.txt"),
        ("XDG_CONFIG_HOME", "/y/cfg", "/y/cfg/rclone/rclone.conf"),
        ("XDG_CONFIG_HOME", "/y/cfg", "/y/cfg/kaggle/kaggle.json"),
        ("XDG_CONFIG_HOME", "/y/cfg", "/y/cfg/composer/auth.json"),
    ];
    let mut fs = fs().file("/y/gradle/init.gradle", "x");
    for f in home_files {
        fs = fs.file(&format!("/home/u/{f}"), "SECRET");
    }
    for (_, _, f) in relocated {
        fs = fs.file(f, "SECRET");
    }
    let mut env: Vec<(&str, &str)> = Vec::new();
    for (v, val, _) in relocated {
        if !env.iter().any(|(k, _)| *k == v) {
            env.push((v, val));
        }
    }
    for profile in ["workspace-write", "read-only"] {
        let r = resolve(&builtin(profile), &ctx(&env), &fs).unwrap();
        for f in home_files {
            let p = format!("/home/u/{f}");
            assert_eq!(access(&r, &fs, &p), Access::Deny, "{profile}: {p}");
        }
        for (v, _, p) in relocated {
            assert_eq!(access(&r, &fs, p), Access::Deny, "{profile}: {v} {p}");
        }
        // Only the store, not its neighbours.
        assert_eq!(access(&r, &fs, "/y/gradle/init.gradle"), Access::Read);
        assert_eq!(access(&r, &fs, "/home/u/.m2/repository"), Access::Read);
    }
}
