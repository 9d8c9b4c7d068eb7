//! `cordon status`: what this host can enforce, and the status triple of the active profile
//! (R-S5).

use crate::cli::StatusArgs;
use crate::profile_args::choose;
use anyhow::Result;
use cordon_sandbox::{CommandRequest, SandboxManager};
use serde_json::json;

pub fn status(args: StatusArgs) -> Result<i32> {
    let run_refusal = crate::profile_args::note_run_refusal(&args.profile);
    let chosen = choose(&args.profile)?;
    let cwd = crate::profile_args::current_dir()?;
    let mut req = CommandRequest::new(vec!["true".into()], cwd, chosen.profile.clone());
    cordon_session::writable_history::tell(&mut req);
    req.profile_files = chosen.files.clone();
    let manager = SandboxManager::for_host_thorough();
    // A profile that cannot be compiled here (e.g. the cwd is the home directory) is
    // reported, not fatal: the host facts are still worth showing.
    let cordon_sandbox::Assessment {
        selection,
        prepared,
        status,
        ..
    } = manager.assess(&req).refused_by(run_refusal);
    // R-H5: the profile's limits and how this host enforces each one.
    #[cfg(target_os = "linux")]
    let limits: Vec<String> = match chosen
        .profile
        .limits
        .resolve(cordon_sandbox::linux::limits::ram_bytes())
    {
        Ok(r) => cordon_sandbox::linux::limits::describe(&r),
        Err(e) => vec![format!("invalid: {e}")],
    };
    #[cfg(not(target_os = "linux"))]
    let limits: Vec<String> = vec!["not enforced on this OS".into()];
    #[cfg(target_os = "linux")]
    let host = {
        let mut h = serde_json::to_value(&manager.features)?;
        let (pathname, abstract_) = cordon_sandbox::linux::unix_socket_mechanism(&manager.features);
        h["unix_sockets"] = json!({"pathname": pathname, "abstract": abstract_});
        h
    };
    // Which denial evidence this host gives (issue 9 §5): kernel-side records when the
    // supervisor can run, else the labelled stderr heuristic.
    #[cfg(target_os = "linux")]
    let (denial_records, denial_evidence, landlock_audit) = {
        let src = cordon_sandbox::linux::denial_record_source(&manager.features);
        (
            match &src {
                Ok(s) => s.clone(),
                Err(why) => format!("none ({why})"),
            },
            if src.is_ok() {
                cordon_session::DENIAL_RECORDS_SOURCE
            } else {
                cordon_session::DENIAL_EVIDENCE_SOURCE
            },
            cordon_sandbox::linux::landlock_audit(&manager.features),
        )
    };
    #[cfg(not(target_os = "linux"))]
    let (denial_records, denial_evidence, landlock_audit) = (
        "none (no supervisor on this OS)".to_string(),
        cordon_session::DENIAL_EVIDENCE_SOURCE,
        "not applicable".to_string(),
    );
    let caches = cache_status(&chosen.profile);
    #[cfg(not(target_os = "linux"))]
    let host = json!({"os": format!("{:?}", manager.os)});

    let bare_warning = bare_repository_warning();
    if args.profile.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&json!({
                "host": host,
                "profile": chosen.profile.name,
                "backend": selection.backend,
                "should_sandbox_rule": selection.rule,
                "status": status,
                // A prediction (nothing ran): what a run here would apply.
                "would_apply": prepared.as_ref().ok(),
                "missing": prepared.as_ref().err(),
                "limits": limits,
                "denial_evidence": denial_evidence,
                "denial_records": {"source": denial_records, "landlock_audit": landlock_audit},
                "caches": caches,
                "warnings": bare_warning.iter().collect::<Vec<_>>(),
            }))?
        );
        return Ok(0);
    }
    if let Some(w) = &bare_warning {
        println!("warning: {w}");
    }
    println!("host");
    #[cfg(target_os = "linux")]
    {
        let f = &manager.features;
        println!("  kernel:           {}", f.kernel_release);
        println!(
            "  landlock:         {}",
            match &f.landlock {
                cordon_sandbox::linux::Availability::Available(abi) => format!("ABI {abi}"),
                other => other.to_string(),
            }
        );
        println!("  user namespaces:  {}", f.user_namespaces);
        println!("  seccomp:          {}", f.seccomp);
        println!(
            "  running as root:  {}",
            if f.running_as_root { "yes" } else { "no" }
        );
        let (pathname, abstract_) = cordon_sandbox::linux::unix_socket_mechanism(f);
        println!("  unix sockets:     {pathname}");
        println!("  abstract sockets: {abstract_}");
        if !f.disabled.is_empty() {
            println!(
                "  disabled layers:  {} (CORDON_DISABLE_LAYERS)",
                f.disabled.join(", ")
            );
        }
    }
    #[cfg(not(target_os = "linux"))]
    println!("  os: {:?}", manager.os);
    println!("  denial records:   {denial_records}");
    println!("  landlock audit:   {landlock_audit}");
    println!(
        "  denial evidence:  {}\n  cache overlays:   {}",
        denial_evidence,
        match (&caches["overlay"], caches["mode"].as_str()) {
            (serde_json::Value::Bool(true), _) => format!(
                "yes (upper layers on {}; caches = {})",
                caches["upper_fs"].as_str().unwrap_or("?"),
                caches["mode"]
            ),
            (_, Some(m)) => format!(
                "no ({}); known caches are read-only inside (caches = \"{m}\")",
                caches["reason"].as_str().unwrap_or("unknown")
            ),
            _ => "unknown".into(),
        }
    );
    println!("profile: {} ({})", chosen.profile.name, chosen.profile.kind);
    println!("backend: {}", selection.backend);
    let leg = |name: &str, f: &cordon_policy::Fact| {
        println!("  {name:<18} {:<5}  {}", f.value, f.reason);
    };
    leg("sandbox_requested", &status.sandbox_requested);
    leg("sandbox_available", &status.sandbox_available);
    leg("sandbox_enabled", &status.sandbox_enabled);
    match &prepared {
        Ok(layers) if !layers.is_empty() => {
            println!("would apply:");
            for l in layers {
                println!("  - {l}");
            }
        }
        Ok(_) => {}
        Err(missing) => println!("cannot confine: {missing}"),
    }
    println!("limits (R-H5):");
    for l in &limits {
        println!("  - {l}");
    }
    Ok(0)
}

/// Whether copy-on-write caches (R-C1) work on this host: probed by mounting a scratch
/// overlay in a user namespace with its upper layer where the real ones live.
fn cache_status(profile: &cordon_policy::PermissionProfile) -> serde_json::Value {
    let mode = profile.caches.to_string();
    let Some(home) = std::env::var_os("HOME").filter(|h| !h.is_empty()) else {
        return json!({"mode": mode, "overlay": false, "reason": "$HOME is not set"});
    };
    #[cfg(target_os = "linux")]
    {
        let root_path = cordon_policy::caches::overlay_root(std::path::Path::new(&home));
        // The probe makes the layers' directory where a run would; not where a run is
        // refused: under a relative HOME (in the cwd) or as a new top-level directory
        // (attack pass 181 F2/F4: `HOME=/ cordon status` made `/.cache`).
        if !root_path.is_absolute()
            || cordon_sandbox::linux::top_level_refusal(&root_path).is_some()
        {
            return json!({"mode": mode, "overlay": false, "reason": format!(
                "not probed: {} is not a place cordon makes its layers (HOME must be an \
                 absolute path, and no new top-level directory is made)",
                cordon_policy::paths::escaped(root_path.as_os_str().as_encoded_bytes())
            )});
        }
        // As text, bad bytes escaped: a `PathBuf` that is not UTF-8 made `json!` panic
        // (attack pass 179, F2: a non-UTF-8 HOME aborted `cordon status`).
        let root = cordon_policy::paths::escaped(root_path.as_os_str().as_encoded_bytes());
        match cordon_sandbox::linux::probe_overlay(&root_path) {
            Ok(fs) => json!({"mode": mode, "overlay": true, "upper_fs": fs, "root": root}),
            Err(why) => json!({"mode": mode, "overlay": false, "reason": why, "root": root}),
        }
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = home;
        json!({"mode": mode, "overlay": false, "reason": "overlay mounts are Linux-only"})
    }
}

/// A one-line warning when the user's git configuration (system, `~/.gitconfig`, XDG) does
/// not set `safe.bareRepository = explicit`: a confined command can lay out a bare
/// repository (`HEAD`, `objects/`, `refs/`, `config` with `core.fsmonitor`) in any
/// writable directory, and host git run there would use it and run its code (README
/// "Known limits").
fn bare_repository_warning() -> Option<String> {
    let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
    let mut files = vec![std::path::PathBuf::from("/etc/gitconfig")];
    let xdg = std::env::var_os("XDG_CONFIG_HOME")
        .map(std::path::PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| home.as_ref().map(|h| h.join(".config")));
    if let Some(x) = xdg {
        files.push(x.join("git/config"));
    }
    if let Some(h) = &home {
        files.push(h.join(".gitconfig"));
    }
    let v = cordon_policy::gitconfig::safe_bare_repository(&cordon_sandbox::HostFs, &files);
    if v.as_deref()
        .is_some_and(|v| v.eq_ignore_ascii_case("explicit"))
    {
        return None;
    }
    Some(
        "git's safe.bareRepository is not `explicit`: a sandboxed command can plant a bare \
         repository whose config runs code when you use git there; run \
         `git config --global safe.bareRepository explicit` (git >= 2.38)"
            .into(),
    )
}
