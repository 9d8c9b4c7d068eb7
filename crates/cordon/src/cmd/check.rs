//! `cordon check`: the exec-policy decision record for a command, without running it.

use crate::cli::CheckArgs;
use crate::exec_rules;
use crate::profile_args::choose;
use anyhow::{Context, Result};
use cordon_execpolicy::{gate, run_would, ApprovalMode, Gate};
use cordon_sandbox::CommandRequest;

/// Exit status: what `cordon run` would do under the active approval mode (R-A5): 0 run,
/// 1 needs approval (`--yes`), 2 refused. An unknown command is `ask` for the policy but
/// runs sandboxed outside `untrusted` mode, so it exits 0 there. The policy's raw verdict
/// (`decision`) stays in the JSON, next to `run_would` and `exit_code`.
pub fn check(args: CheckArgs) -> Result<i32> {
    let chosen = choose(&args.profile)?;
    let policy = exec_rules::load(chosen.config.as_ref(), &args.rules)?;
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    let req = CommandRequest::new(args.command.clone(), cwd, chosen.profile);
    let record = exec_rules::evaluate(&policy, &req);
    let mode = ApprovalMode::from(args.approval_mode);
    let verdict = gate(&record, mode, false);
    let outcome = run_would(&record, mode);
    if args.profile.json {
        let mut v = serde_json::to_value(&record)?;
        v["approval_mode"] = serde_json::json!(mode.as_str());
        v["run_would"] = serde_json::to_value(&verdict)?;
        v["outcome"] = serde_json::to_value(outcome)?;
        v["exit_code"] = serde_json::json!(outcome.exit_code());
        println!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        print!("{}", record.render_text());
        match verdict {
            Gate::Run { reason } => println!("cordon run ({mode}): would run — {reason}"),
            Gate::Refuse { reason } => println!("cordon run ({mode}): would refuse — {reason}"),
        }
    }
    Ok(outcome.exit_code())
}
