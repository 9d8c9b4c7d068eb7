//! `cordon serve`: the per-user launch server (issue 12 item 2; see
//! `cordon_sandbox::linux::server`).

use crate::cli::ServeArgs;
use anyhow::{Context, Result};
use cordon_sandbox::linux::server;

/// Binds the socket and serves until killed. Returns only on error.
pub fn serve(args: ServeArgs) -> Result<i32> {
    // A client that hangs up while the server writes to it must not end the server (and
    // every command it holds) by SIGPIPE; commands start with the default disposition.
    cordon_sandbox::ignore_sigpipe();
    let path = args.socket.unwrap_or_else(server::socket_path);
    // A relative path names a socket in the current directory (its directory is checked).
    let path = std::path::absolute(&path).unwrap_or(path);
    if args.print_socket {
        println!("{}", path.display());
        return Ok(0);
    }
    let listener = server::bind(&path)
        .with_context(|| format!("serve: cannot listen on {}", path.display()))?;
    eprintln!("cordon serve: listening on {}", path.display());
    server::serve(listener, !args.no_templates).context("cordon serve")?;
    Ok(0)
}
