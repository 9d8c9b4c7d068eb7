//! `cordon profiles`: list built-in and configured profiles.

use crate::cli::ProfileArgs;
use crate::profile_args::choose;
use anyhow::Result;
use cordon_policy::profile::BUILTIN_PROFILES;

pub fn profiles(args: ProfileArgs) -> Result<i32> {
    let chosen = choose(&args)?;
    let mut names: Vec<(String, &str)> = BUILTIN_PROFILES
        .iter()
        .map(|n| (n.to_string(), "built-in"))
        .collect();
    if let Some(c) = &chosen.config {
        for n in c.profile_names() {
            names.push((n, "config"));
        }
    }
    if args.json {
        let list: Vec<_> = names
            .iter()
            .map(|(n, src)| serde_json::json!({"name": n, "source": src, "active": *n == chosen.profile.name}))
            .collect();
        println!("{}", serde_json::to_string_pretty(&list)?);
    } else {
        for (n, src) in names {
            let mark = if n == chosen.profile.name { "*" } else { " " };
            println!("{mark} {n:<24} {src}");
        }
    }
    Ok(0)
}
