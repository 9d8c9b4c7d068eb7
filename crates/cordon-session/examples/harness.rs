//! A minimal agent harness on cordon's library API: run a one-shot command, then drive an
//! interactive Python REPL on a terminal, all inside the sandbox.
//!
//! ```text
//! cargo run -p cordon-session --example harness -- /path/to/cordon
//! ```
//!
//! The argument is the `cordon` executable, used as the sandbox helper (a program linking
//! the library must point at one; `cordon mcp` uses itself). Approvals are non-interactive
//! here (R-A6: what would be asked is refused with the reason); pass your own
//! [`cordon_session::Approver`] to [`Harness::with_approver`] to ask a person.

use cordon_session::harness::{ExecParams, Harness, HarnessOptions};
use std::time::{Duration, Instant};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let helper = std::env::args().nth(1).unwrap_or_else(|| "cordon".into());
    let mut opts = HarnessOptions::new(std::env::current_dir()?);
    opts.helper = Some(helper.into());
    let h = Harness::new(opts)?;

    // What the model should be told about its limits (R-M1).
    println!("{}", h.environment_context()?);

    // One-shot: waits for the end; the outcome is classified (R-F1) and the result says
    // what the sandbox applied.
    let r = h.exec(ExecParams::argv(["git", "status", "--short"]))?;
    println!("git status: {}\n{}", r.summary(), r.output.text);
    if let Some(s) = &r.sandbox {
        println!("applied: {}", s.applied.join("; "));
    }

    // A long-running, interactive session: python3 on a terminal.
    let r = h.exec(
        ExecParams::argv(["python3", "-q", "-i"])
            .tty(true)
            .yield_time(Duration::from_millis(500)),
    )?;
    let Some(id) = r.session_id else {
        println!("python3 did not start: {}", r.summary());
        return Ok(());
    };
    h.write_stdin(&id, b"print(6 * 7)\n")?;
    let mut seen = String::new();
    let deadline = Instant::now() + Duration::from_secs(10);
    while !seen.contains("42") && Instant::now() < deadline {
        seen += &h
            .read_output(&id, 4096, Duration::from_millis(500))?
            .output
            .text;
    }
    println!("python said: {}", seen.trim());
    h.write_stdin(&id, b"exit()\n")?;
    let end = h.wait(&id, Duration::from_secs(10), 4096)?;
    println!("python: {}", end.summary());
    // Dropping the harness kills whatever still runs.
    Ok(())
}
