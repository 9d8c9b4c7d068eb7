//! Shells and interpreters (R-A2, R-A4): which programs run a script given with `-c`, and
//! which run a program fed on stdin or by a heredoc.

/// Shells whose `-c SCRIPT` is parsed (R-A2).
pub(crate) const SHELLS: &[&str] = &["bash", "sh", "zsh", "dash", "ksh", "mksh", "ash"];

/// Interpreters that run a program read from stdin / heredoc.
pub(crate) const INTERPRETERS: &[&str] = &[
    "bash",
    "sh",
    "zsh",
    "dash",
    "ksh",
    "mksh",
    "ash",
    "fish",
    "csh",
    "tcsh",
    "python",
    "python2",
    "python3",
    "perl",
    "ruby",
    "node",
    "nodejs",
    "php",
    "lua",
    "deno",
    "bun",
    "pwsh",
    "tclsh",
    "irb",
    "Rscript",
    "osascript",
];
