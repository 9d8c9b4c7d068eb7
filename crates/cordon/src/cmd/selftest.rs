//! `cordon selftest`: escape and "still works" probes run through `cordon run` on this host
//! (macOS: the Seatbelt probes of issue 14; Linux: the same list against the Linux
//! backend), printed as a pass/fail table to paste into a bug report.

use crate::cli::SelftestArgs;
use anyhow::{Context, Result};
use serde_json::json;
use std::process::{Command, Stdio};

/// The probe script (POSIX sh). `--print-script` prints it for running by hand.
pub const SCRIPT: &str = include_str!("selftest.sh");

pub fn selftest(args: SelftestArgs) -> Result<i32> {
    if args.print_script {
        print!("{SCRIPT}");
        return Ok(0);
    }
    let exe = std::env::current_exe().context("cannot locate the cordon executable")?;
    let out = Command::new("/bin/sh")
        .args(["-c", SCRIPT, "cordon-selftest"])
        .arg(&exe)
        .stdin(Stdio::inherit())
        .stderr(Stdio::inherit())
        .output()
        .context("cannot run /bin/sh")?;
    let rows: Vec<(String, String, String)> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| {
            let mut f = l.splitn(3, '\t');
            Some((
                f.next()?.into(),
                f.next()?.into(),
                f.next().unwrap_or("").into(),
            ))
        })
        .collect();
    let failed = rows.iter().filter(|r| r.0 == "FAIL").count();
    let host = format!("{} {}", std::env::consts::OS, std::env::consts::ARCH);
    if args.json {
        let probes: Vec<_> = rows
            .iter()
            .map(|(r, n, d)| json!({"probe": n, "result": r, "detail": d}))
            .collect();
        println!(
            "{}",
            serde_json::to_string_pretty(&json!({
                "host": host, "cordon": env!("CARGO_PKG_VERSION"),
                "probes": probes, "failed": failed,
            }))?
        );
    } else {
        println!("cordon {} selftest on {host}", env!("CARGO_PKG_VERSION"));
        println!("| result | probe | detail |\n|---|---|---|");
        for (r, n, d) in &rows {
            println!("| {r} | {n} | {d} |");
        }
        println!(
            "{} probes, {failed} failed{}",
            rows.len(),
            if failed > 0 {
                " — please paste this table into a bug report"
            } else {
                ""
            }
        );
    }
    if rows.is_empty() || !out.status.success() || failed > 0 {
        return Ok(1);
    }
    Ok(0)
}
