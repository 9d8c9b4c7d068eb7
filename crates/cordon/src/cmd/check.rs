//! `cordon check`: the exec-policy decision record for a command, without running it.

use crate::cli::CheckArgs;
use crate::exec_rules;
use crate::profile_args::choose;
use anyhow::Result;
use cordon_execpolicy::Decision;

/// Exit status: 0 allow, 1 ask, 2 forbid (so scripts can branch on it).
pub fn check(args: CheckArgs) -> Result<i32> {
    let chosen = choose(&args.profile)?;
    let policy = exec_rules::load(chosen.config.as_ref(), &args.rules)?;
    let record = exec_rules::evaluate(&policy, &args.command, &chosen.profile)?;
    if args.profile.json {
        println!("{}", record.to_json());
    } else {
        print!("{}", record.render_text());
    }
    Ok(match record.decision {
        Decision::Allow => 0,
        Decision::Ask => 1,
        Decision::Forbid => 2,
    })
}
