//! `cordon explain`: why a path is (not) readable or writable, which entry decided it, and
//! what the sandbox decision and the host's gaps are.

use crate::cli::ExplainArgs;
use crate::profile_args::{choose, preference};
use anyhow::Result;
use cordon_policy::explain_judged as explain_paths;
use cordon_sandbox::{CommandRequest, HostFs, SandboxManager};

pub fn explain(args: ExplainArgs) -> Result<i32> {
    let run_refusal = crate::profile_args::note_run_refusal(&args.profile);
    let chosen = choose(&args.profile)?;
    let cwd = crate::profile_args::current_dir()?;
    let mut req = CommandRequest::new(vec!["true".into()], cwd.clone(), chosen.profile);
    cordon_session::writable_history::tell(&mut req);
    req.preference = preference(args.sandbox);
    req.profile_files = chosen.files;
    let manager = SandboxManager::for_host_thorough();
    let a = manager.assess(&req).refused_by(run_refusal);
    let resolved = a.resolved?;
    // `cordon explain credential-stores`: the group the compact environment_context names.
    let group = cordon_policy::context::CREDENTIAL_GROUP;
    if args.paths.len() == 1
        && args.paths[0] == std::path::Path::new(group)
        && !cwd.join(group).exists()
    {
        let members: Vec<_> = resolved
            .filesystem
            .denied()
            .into_iter()
            .filter(|e| cordon_policy::context::in_credential_group(e))
            .collect();
        if args.profile.json {
            // Escaped: `json!` of a path that is not UTF-8 panics (L2).
            let paths: Vec<_> = members
                .iter()
                .map(|e| cordon_policy::paths::escaped(e.path.as_os_str().as_encoded_bytes()))
                .collect();
            println!(
                "{}",
                serde_json::to_string_pretty(&serde_json::json!({"group": group, "paths": paths}))?
            );
        } else {
            println!(
                "{group}: {} paths hidden from reads by the built-in profiles (credential \
                 stores under each home and where their tools' variables put them, system \
                 credential files):",
                members.len()
            );
            for e in members {
                println!("  {}", e.path.display());
            }
        }
        return Ok(0);
    }
    let (selection, status) = (a.selection, a.status);
    let prepared = a.prepared.map(|_| ());
    let paths: Vec<_> = args
        .paths
        .iter()
        .map(|p| {
            if p.is_absolute() {
                p.clone()
            } else {
                cwd.join(p)
            }
        })
        .collect();
    // A write grant is suggested only as a run would offer it after a denial.
    let judge = |p: &std::path::Path, g: &std::path::Path| {
        cordon_session::outcome::offerable_here(p, g, &resolved, &HostFs)
    };
    let mut e = explain_paths(
        &resolved,
        &HostFs,
        &paths,
        &selection,
        &status,
        prepared.as_ref().err().map(|s| s.as_str()),
        &judge,
    );
    e.notes.extend(super::owner_note(&resolved.workspace));
    // What init refuses at run time, beyond the profile's answer (new-user pass nu28, F3:
    // "writable" for a file the sandbox would not let the command write in place).
    #[cfg(target_os = "linux")]
    if selection.backend == cordon_policy::Backend::LinuxHelper {
        use std::os::unix::fs::MetadataExt;
        for (p, answer) in paths.iter().zip(e.paths.iter_mut()) {
            if let Ok(m) = std::fs::symlink_metadata(p) {
                if m.is_file() && m.nlink() > 1 {
                    answer.hard_links = Some(m.nlink());
                    e.notes.push(format!(
                        "{} has {} hard links: inside the sandbox it is not written in place, \
                         and its mode, owner, times, extended attributes and inode flags are \
                         not changed (chmod, chown, touch, setfattr, chattr: another name may \
                         lie outside the writable roots); write a new file and rename it over \
                         this one",
                        p.display(),
                        m.nlink()
                    ));
                }
            }
        }
    }
    // Hosts remembered at an approval prompt are let through without asking (nu20 G3).
    if resolved.profile.network == cordon_policy::NetworkPolicy::Managed {
        let remembered = cordon_session::hosts::remembered_hosts_of_user();
        e.network.remembered = remembered.clone();
        if let (false, Some(hint)) = (remembered.is_empty(), e.network.hint.as_mut()) {
            let file = cordon_session::hosts::remembered_hosts_path()
                .map(|p| p.display().to_string())
                .unwrap_or_default();
            hint.push_str(&format!(
                "; remembered at an approval prompt ({file}): {remembered:?}"
            ));
        }
    }
    if args.profile.json {
        // JSON cannot carry a non-UTF-8 path: named, not serde's bare message (L2).
        let text = serde_json::to_string_pretty(&e).map_err(|err| {
            let bad = resolved
                .non_utf8_path()
                .map(std::path::Path::to_path_buf)
                .or_else(|| paths.iter().find(|p| p.to_str().is_none()).cloned());
            match bad {
                Some(p) => anyhow::anyhow!(
                    "--json: the path {} is not valid UTF-8, which JSON cannot carry; use the \
                     text output",
                    cordon_policy::paths::escaped(p.as_os_str().as_encoded_bytes())
                ),
                None => anyhow::anyhow!("--json: {err}"),
            }
        })?;
        println!("{text}");
    } else {
        print!("{e}");
    }
    Ok(0)
}
