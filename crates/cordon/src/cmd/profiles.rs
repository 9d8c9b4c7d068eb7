//! `cordon profiles`: list built-in and configured profiles, and check each configured one
//! as far as it can be checked without a command: built (its `extends` chain, network and
//! limits values, its entries' spellings: a glob is refused). What depends on the host
//! (a path that leads through a symlink, a missing top-level directory) is said by `run`
//! and `explain`.

use crate::cli::ProfileArgs;
use crate::profile_args::choose;
use anyhow::Result;
use cordon_policy::profile::BUILTIN_PROFILES;

/// Exit 0 when every profile listed is usable, 125 when a configured one is not (new-user
/// pass 215, #4: `profiles` listed profiles with a glob entry or `allow = ["*"]` as fine,
/// and `run` then refused them). Each problem is named next to its profile (`--json`:
/// `error`).
pub fn profiles(args: ProfileArgs) -> Result<i32> {
    let chosen = choose(&args)?;
    let mut names: Vec<(String, &str, Option<String>)> = BUILTIN_PROFILES
        .iter()
        .map(|n| (n.to_string(), "built-in", None))
        .collect();
    if let Some(c) = &chosen.config {
        for n in c.profile_names() {
            // Building it runs every check that needs no host: the `extends` chain, the
            // network and limits values, each entry's spelling (a glob, with its line).
            let problem = c.profile(&n).err().map(|e| e.to_string());
            names.push((n, "config", problem));
        }
    }
    let bad = names.iter().any(|(_, _, p)| p.is_some());
    if args.json {
        let list: Vec<_> = names
            .iter()
            .map(|(n, src, problem)| {
                let mut v = serde_json::json!({"name": n, "source": src, "active": *n == chosen.profile.name});
                if let Some(p) = problem {
                    v["error"] = serde_json::json!(p);
                }
                v
            })
            .collect();
        println!("{}", serde_json::to_string_pretty(&list)?);
    } else {
        for (n, src, problem) in &names {
            let mark = if *n == chosen.profile.name { "*" } else { " " };
            match problem {
                None => println!("{mark} {n:<24} {src}"),
                Some(p) => println!("{mark} {n:<24} {src}  INVALID: {p}"),
            }
        }
    }
    if bad {
        eprintln!(
            "cordon: a configured profile is invalid (INVALID above): fix it before using it"
        );
        return Ok(125);
    }
    Ok(0)
}
