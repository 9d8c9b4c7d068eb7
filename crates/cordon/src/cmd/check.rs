//! `cordon check`: the exec-policy decision record for a command, without running it.

use crate::cli::CheckArgs;
use crate::profile_args::trust;
use anyhow::Result;
use cordon_execpolicy::{gate, run_would, ApprovalMode, Gate};

/// Exit status: what `cordon run` would do under the active approval mode (R-A5): 0 run,
/// 1 needs approval (`--yes`), 2 refused (by the policy, or because the profile cannot be
/// resolved into a sandbox here, as `run --dry-run` would say). An unknown command is `ask` for the policy but
/// runs sandboxed outside `untrusted` mode, so it exits 0 there. The policy's raw verdict
/// (`decision`) stays in the JSON, next to `run_would` and `exit_code`. A program not
/// found or not executable (as `cordon run` would look for it) is noted on stderr with
/// the exit status the run would end with (127 or 126) and is `program_found: false`,
/// `program_problem` and `program_exit_code` in the JSON; the exit status stays the
/// policy's.
pub fn check(args: CheckArgs) -> Result<i32> {
    // `check` runs nothing, so a --config/--rules file inside a project is read; `run`
    // and `mcp` would refuse it, and the user is told now rather than at the first run.
    // What is read is judged by what `run` would do: refused, exit 2 (attack pass 169,
    // finding 2: `check --rules FILE` said "would run", exit 0, with the refused rules).
    let files_refused =
        crate::profile_args::profile_files_refusal(&args.profile, &args.rules.rules, None)
            .err()
            .map(|e| crate::cmd::error_text(&e));
    if let Some(why) = &files_refused {
        eprintln!("cordon: note: `cordon run` would refuse this: {why}");
    }
    // A refused file that does not even load is still a refusal (2), as its note says
    // (check pass 170: an invalid refused rules file exited 125).
    let trust = match trust("check", &args.profile, &args.rules.rules, false) {
        Ok(t) => t,
        Err(e) if files_refused.is_some() => {
            let et = crate::cmd::error_text(&e);
            eprintln!("cordon: {et}");
            return Ok(2);
        }
        // Extra grants that cannot be resolved into a sandbox (`-w link/..`): what the run
        // refuses, exit 2 as for a grant spelled through a link (attack pass 246: 125 here,
        // 2 for `-w link`).
        Err(e)
            if matches!(
                e.downcast_ref::<cordon_session::trust::TrustError>(),
                Some(cordon_session::trust::TrustError::Merge(_))
            ) =>
        {
            let et = crate::cmd::error_text(&e);
            eprintln!("cordon: `cordon run` would refuse this: {et}");
            return Ok(2);
        }
        Err(e) => return Err(e),
    };
    // An allow rule a dangerous-command finding overrides is moot: said where rules are
    // tried out (new-user pass 241: it loaded in silence).
    for n in trust.rules.moot_allow_rules() {
        eprintln!("cordon: warning: {n}");
    }
    let mut req = trust.command(args.command.clone());
    // As `cordon run` judges it: a shell reading its program from this stdin runs that
    // text (attack pass 204, W1: `echo … | cordon check -- sh` said "run").
    let record = trust.evaluate_with_stdin(&req, &super::run::cli_stdin());
    let mode = ApprovalMode::from(args.approval_mode);
    let mut verdict = gate(&record, mode, false);
    let outcome = run_would(&record, mode);
    // What the policy lets run must also be a sandbox the profile resolves to here: `run`
    // refuses a workspace that is the home directory, a deny entry hiding the cwd, … (new-user
    // pass nu58: `check` said "would run" where `run` exited 125). Same resolution as
    // `run --dry-run`, without running anything.
    let mut exit = outcome.exit_code();
    if let Some(why) = files_refused {
        verdict = Gate::Refuse { reason: why };
        exit = 2;
    }
    // A grant spelled through a symlink refuses the run (new-user pass 245 #2: `check -w
    // build` said "would run" where the run exited 125).
    if exit != 2 {
        if let Some(why) = trust.symlinked_grant_refusal() {
            verdict = Gate::Refuse { reason: why };
            exit = 2;
        }
    }
    if exit != 2 {
        if record.sandbox.bypass {
            req.preference = cordon_policy::SandboxPreference::Forbid;
        }
        let transformed = cordon_sandbox::SandboxManager::for_host().transform(&req);
        let refusal = match &transformed {
            Err(e) => Some(format!("the sandbox cannot be set up: {e}")),
            // What the run refuses whatever anyone answers (`git worktree remove`, plan
            // mode unconfined): the run's own verdict (attack pass 238 #2).
            Ok(_) => {
                cordon_session::drive::refusal_before_run(&transformed, &record, trust.layers.plan)
            }
        };
        if let Some(reason) = refusal {
            verdict = Gate::Refuse { reason };
            exit = 2;
        }
    }
    // A program that is not there would end the run with 127 (as `--dry-run` notes).
    let missing = args
        .command
        .first()
        .and_then(|p| super::run::program_problem(p, &trust.cwd).map(|problem| (p, problem)));
    if args.profile.json {
        let mut v = serde_json::to_value(&record)?;
        v["approval_mode"] = serde_json::json!(mode.as_str());
        v["run_would"] = serde_json::to_value(&verdict)?;
        // One answer: a refusal found after the policy's (a refused rules file, a sandbox
        // that cannot be set up) is the outcome too (check pass 170: exit 2 with
        // `"outcome": "run"`).
        let outcome = if exit == 2 {
            cordon_execpolicy::approval::RunWould::Refuse
        } else {
            outcome
        };
        v["outcome"] = serde_json::to_value(outcome)?;
        v["exit_code"] = serde_json::json!(exit);
        v["program_found"] = serde_json::json!(missing.is_none());
        if let Some((_, problem)) = &missing {
            v["program_problem"] = serde_json::json!(problem.why);
            v["program_exit_code"] = serde_json::json!(problem.exit_code);
        }
        println!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        print!("{}", record.render_text());
        match verdict {
            Gate::Run { reason } => println!("cordon run ({mode}): would run — {reason}"),
            // Exit 1 is "needs approval" (README): said so, not "refuse" (new user, stop
            // 19: the text said refuse while the code said ask). Who would be asked is
            // the run's to know (new-user pass 150: "no one can be asked here" at a
            // terminal): both cases are said.
            Gate::Ask { reason } => println!(
                "cordon run ({mode}): needs approval — {reason}; it asks at a terminal or \
                 through --approvals-from; where no one can be asked, {}",
                cordon_execpolicy::approval::cli_remedy(&record)
            ),
            Gate::Refuse { reason } => println!("cordon run ({mode}): would refuse — {reason}"),
        }
    }
    if let Some((p, problem)) = missing {
        eprintln!("{}", problem.note(p));
    }
    Ok(exit)
}
