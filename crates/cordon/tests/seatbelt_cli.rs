//! The macOS backend seen from the CLI on any host (issue 14): the Seatbelt policy is
//! inspectable with `--dry-run --backend seatbelt`, and `cordon selftest` runs its probe
//! list through `cordon run` (here: against the Linux backend).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const CORDON: &str = env!("CARGO_BIN_EXE_cordon");

fn tmp() -> (tempfile::TempDir, PathBuf) {
    // Under /var/tmp so it is not hidden by the Linux sandbox's private /tmp.
    let root = tempfile::Builder::new()
        .prefix("cordon-sb-")
        .tempdir_in("/var/tmp")
        .unwrap();
    let dir = root.path().join("proj");
    std::fs::create_dir_all(dir.join(".git/hooks")).unwrap();
    std::fs::create_dir_all(root.path().join("home")).unwrap();
    let dir = dir.canonicalize().unwrap();
    (root, dir)
}

fn cordon(dir: &Path, home: &Path, args: &[&str]) -> Command {
    let mut c = Command::new(CORDON);
    c.args(args)
        .current_dir(dir)
        .env("HOME", home)
        .env_remove("CORDON_PROFILE")
        .env_remove("CORDON_CONFIG")
        .env_remove("CORDON_DISABLE_LAYERS")
        .stdin(Stdio::null());
    c
}

#[test]
fn dry_run_prints_the_seatbelt_policy_on_any_host() {
    let (root, dir) = tmp();
    let home = root.path().join("home");
    let o = cordon(
        &dir,
        &home,
        &["run", "--dry-run", "--backend", "seatbelt", "--", "true"],
    )
    .output()
    .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{out}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(out.contains("(version 1)\n(deny default)"), "{out}");
    // The workspace is a -D parameter, never spliced into the policy text.
    let param = format!("={}", dir.display());
    assert!(
        out.lines()
            .any(|l| l.starts_with(";   PATH_") && l.ends_with(&param)),
        "{out}"
    );
    let body: String = out.lines().filter(|l| !l.starts_with(';')).collect();
    assert!(
        !body.contains(&dir.display().to_string()),
        "a path in the policy text"
    );
    assert!(body.contains("(deny file-write-unlink file-write-create (literal (param \"PIN_"));
    // JSON: the policy and its parameters.
    let o = cordon(
        &dir,
        &home,
        &[
            "run",
            "--dry-run",
            "--backend",
            "seatbelt",
            "--json",
            "--",
            "true",
        ],
    )
    .output()
    .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["program"], "/usr/bin/sandbox-exec");
    assert!(v["params"]
        .as_object()
        .unwrap()
        .values()
        .any(|p| p.as_str() == Some(&dir.display().to_string())));
    // --backend only shows; it never runs anything.
    let o = cordon(&dir, &home, &["run", "--backend", "seatbelt", "--", "true"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(125));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--dry-run"));
}

#[test]
fn selftest_script_is_valid_sh() {
    let (root, dir) = tmp();
    let o = cordon(
        &dir,
        &root.path().join("home"),
        &["selftest", "--print-script"],
    )
    .output()
    .unwrap();
    assert!(o.status.success());
    let script = root.path().join("selftest.sh");
    std::fs::write(&script, &o.stdout).unwrap();
    let st = Command::new("/bin/sh")
        .arg("-n")
        .arg(&script)
        .status()
        .unwrap();
    assert!(st.success(), "sh -n rejects the probe script");
    let text = String::from_utf8_lossy(&o.stdout);
    for probe in [
        "move-git-aside",
        "hard-link-out",
        "read-denied-case-variant",
        "stty",
        "node-os-cpus",
        "python-multiprocessing",
        "inherited-descriptor",
        "other-process-environment",
        "tiocsti",
    ] {
        assert!(text.contains(probe), "{probe} missing from the probe list");
    }
}

/// The probes run on this host and none fails (escapes refused, ordinary tools work).
#[test]
fn selftest_passes_on_this_host() {
    let (root, dir) = tmp();
    let home = root.path().join("home");
    let o = cordon(&dir, &home, &["selftest", "--json"])
        .env("TMPDIR", root.path())
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&o.stdout)));
    let probes = v["probes"].as_array().unwrap();
    let runs = probes
        .iter()
        .any(|p| p["probe"] == "sandbox-runs" && p["result"] == "PASS");
    if !runs {
        assert_ne!(
            std::env::var("CI").as_deref(),
            Ok("true"),
            "CI host must run the sandbox: {v}"
        );
        eprintln!("SKIP: sandbox unavailable on this host: {v}");
        return;
    }
    assert_eq!(v["failed"], 0, "{v:#}");
    assert_eq!(o.status.code(), Some(0));
    // New-user pass 150, item 9: a pass says what was kept from happening, not "refused
    // (exit 0)", which read as a contradiction.
    for p in probes.iter().filter(|p| p["result"] == "PASS") {
        let detail = p["detail"].as_str().unwrap_or_default();
        assert!(!detail.starts_with("refused"), "{p}");
    }
    let env = probes
        .iter()
        .find(|p| p["probe"] == "other-process-environment")
        .unwrap();
    assert!(
        env["detail"]
            .as_str()
            .unwrap_or_default()
            .starts_with("another process's environment could not be read"),
        "{env}"
    );
    // nu20 G6: the probe project's cache layers are removed with it.
    let overlays = home.join(".cache/cordon/overlays");
    let left: Vec<_> = std::fs::read_dir(&overlays)
        .map(|d| d.flatten().map(|e| e.file_name()).collect())
        .unwrap_or_default();
    assert!(left.is_empty(), "{left:?}");
}

/// The probes prove something: against a "cordon" that runs commands unconfined, the escape
/// probes fail.
#[test]
fn selftest_probes_catch_an_unconfined_runner() {
    let (root, dir) = tmp();
    let o = cordon(
        &dir,
        &root.path().join("home"),
        &["selftest", "--print-script"],
    )
    .output()
    .unwrap();
    let script = root.path().join("selftest.sh");
    std::fs::write(&script, &o.stdout).unwrap();
    let fake = root.path().join("fake-cordon");
    std::fs::write(
        &fake,
        "#!/bin/sh\nwhile [ \"$1\" != \"--\" ]; do shift; done; shift; exec \"$@\"\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let o = Command::new("/bin/sh")
        .arg(&script)
        .arg(&fake)
        .env("HOME", root.path().join("home"))
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    for probe in [
        "move-git-aside",
        "replace-git-with-file",
        "write-git-hook",
        "hard-link-out",
        "write-outside",
        "read-denied",
        "move-denied-parent",
        "hard-link-denied",
        "inherited-descriptor",
    ] {
        assert!(
            out.lines()
                .any(|l| l == format!("FAIL\t{probe}\tescape worked")
                    || l.starts_with(&format!("FAIL\t{probe}\t"))),
            "{probe} did not catch an unconfined run:\n{out}"
        );
    }
}
