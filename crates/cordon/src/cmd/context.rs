//! `cordon context`: the environment_context XML (R-M1), rendered from the same resolved
//! profile the transform would enforce.

use crate::cli::ContextArgs;
use crate::profile_args::{choose, preference};
use anyhow::{Context, Result};
use cordon_policy::{environment_context_with, resolve, Detail};
use cordon_sandbox::{CommandRequest, HostFs, SandboxManager, TransformError};

pub fn context(args: ContextArgs) -> Result<i32> {
    let chosen = choose(&args.profile)?;
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    let mut req = CommandRequest::new(vec!["true".into()], cwd, chosen.profile);
    req.preference = preference(args.sandbox);
    req.profile_files = chosen.files;
    let manager = SandboxManager::for_host();
    // The same object the transform compiles: take it from the ExecRequest when the
    // transform resolved one; otherwise (no sandbox requested, or refused) resolve once.
    let (resolved, status, backend) = match manager.transform(&req) {
        Ok(exec) => {
            let resolved = match exec.resolved {
                Some(r) => r,
                None => resolve(&req.profile, &req.resolve_context(), &HostFs)?,
            };
            (resolved, exec.status, exec.backend)
        }
        Err(TransformError::Refused { status, .. }) => (
            resolve(&req.profile, &req.resolve_context(), &HostFs)?,
            *status,
            cordon_policy::Backend::None,
        ),
        Err(e) => return Err(e.into()),
    };
    let detail = if args.full {
        Detail::Full
    } else {
        Detail::Compact
    };
    let xml = environment_context_with(
        &resolved,
        &status,
        backend,
        cordon_execpolicy::ApprovalMode::from(args.approval_mode).as_str(),
        detail,
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
