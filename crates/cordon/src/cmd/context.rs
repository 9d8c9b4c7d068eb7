//! `cordon context`: the environment_context XML (R-M1), rendered from the same resolved
//! profile the transform would enforce.

use crate::cli::ContextArgs;
use crate::profile_args::{choose, preference};
use anyhow::Result;
use cordon_policy::{environment_context_remembering, Detail};
use cordon_sandbox::{CommandRequest, SandboxManager};

pub fn context(args: ContextArgs) -> Result<i32> {
    let _ = crate::profile_args::note_run_refusal(&args.profile);
    let chosen = choose(&args.profile)?;
    let cwd = crate::profile_args::current_dir()?;
    let mut req = CommandRequest::new(vec!["true".into()], cwd, chosen.profile);
    cordon_session::writable_history::tell(&mut req);
    req.preference = preference(args.sandbox);
    req.profile_files = chosen.files;
    let manager = SandboxManager::for_host();
    // The same object the transform compiles (one place: `context_parts`).
    let (resolved, status, backend) = manager.context_parts(&req).map_err(anyhow::Error::msg)?;
    let detail = if args.full {
        Detail::Full
    } else {
        Detail::Compact
    };
    let xml = environment_context_remembering(
        &resolved,
        &status,
        backend,
        cordon_execpolicy::ApprovalMode::from(args.approval_mode).as_str(),
        detail,
        &cordon_session::hosts::remembered_hosts_of_user(),
    );
    if args.profile.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({ "environment_context": xml }))?
        );
    } else {
        println!("{xml}");
    }
    Ok(0)
}
