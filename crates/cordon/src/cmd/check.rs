//! `cordon check`: the exec-policy decision record for a command, without running it.

use crate::cli::CheckArgs;
use crate::profile_args::trust;
use anyhow::Result;
use cordon_execpolicy::{gate, ApprovalMode, Decision, Gate};

/// Exit status: 0 allow, 1 ask, 2 forbid (so scripts can branch on it); the output also
/// says what `cordon run` would do under the approval mode (unknown commands are `ask` for
/// the policy but run sandboxed outside `untrusted` mode).
pub fn check(args: CheckArgs) -> Result<i32> {
    let trust = trust("check", &args.profile, &args.rules.rules, false)?;
    let record = trust.evaluate(&trust.command(args.command.clone()));
    let mode = ApprovalMode::from(args.approval_mode);
    let verdict = gate(&record, mode, false);
    if args.profile.json {
        let mut v = serde_json::to_value(&record)?;
        v["approval_mode"] = serde_json::json!(mode.as_str());
        v["run_would"] = serde_json::to_value(&verdict)?;
        println!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        print!("{}", record.render_text());
        match verdict {
            Gate::Run { reason } => println!("cordon run ({mode}): would run — {reason}"),
            Gate::Refuse { reason } => println!("cordon run ({mode}): would refuse — {reason}"),
        }
    }
    Ok(match record.decision {
        Decision::Allow => 0,
        Decision::Ask => 1,
        Decision::Forbid => 2,
    })
}
