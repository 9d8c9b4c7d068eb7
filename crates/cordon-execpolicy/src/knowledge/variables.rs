//! Shell variables that matter to the policy (R-A2): names whose assignment changes what
//! other commands run, and arithmetic evaluation of names and subscripts.

/// Variables whose assignment changes what other commands do (program lookup, loader,
/// shell start-up, git/pager hooks). Assigning one caps a segment at `ask`; a stand-alone
/// assignment of one in a script makes the script opaque.
pub(crate) fn is_sensitive_var(name: &str) -> bool {
    const EXACT: &[&str] = &[
        "PATH",
        "BASH_ENV",
        "ENV",
        "IFS",
        "SHELLOPTS",
        "BASHOPTS",
        "PS4",
        "PROMPT_COMMAND",
        "CDPATH",
        "HOME",
        "PAGER",
        "MANPAGER",
        "EDITOR",
        "VISUAL",
        "BROWSER",
        "LESSOPEN",
        "LESSCLOSE",
        "PYTHONPATH",
        "PYTHONSTARTUP",
        "PYTHONHOME",
        "NODE_OPTIONS",
        "NODE_PATH",
        "PERL5OPT",
        "PERL5LIB",
        "RUBYOPT",
        "RUBYLIB",
        "JAVA_TOOL_OPTIONS",
        "SSH_ASKPASS",
        "SUDO_ASKPASS",
        "RUSTC_WRAPPER",
        "RUSTC",
        "ZDOTDIR",
        "XDG_CONFIG_HOME",
    ];
    const PREFIX: &[&str] = &["LD_", "DYLD_", "GIT_", "BASH_FUNC_"];
    EXACT.contains(&name) || PREFIX.iter().any(|p| name.starts_with(p))
}

/// A shell identifier (`[A-Za-z_][A-Za-z0-9_]*`).
pub(crate) fn is_identifier(s: &str) -> bool {
    let mut cs = s.chars();
    matches!(cs.next(), Some(c) if c == '_' || c.is_ascii_alphabetic())
        && cs.all(|c| c == '_' || c.is_ascii_alphanumeric())
}

/// Whether a test/printf argv can run code by arithmetic evaluation. In `[[ … ]]` the operands
/// of `-eq -ne -lt -le -gt -ge` are arithmetic expressions; the name after `-v` (`[[`, `[`,
/// `test`, `printf -v`) may be an array element. A subscript such as `a[$(cmd)]`, spelled
/// directly or held in a variable, runs `cmd`. Only integer literals and plain identifiers
/// are known harmless.
pub(crate) fn runs_arithmetic(argv: &[String], double_bracket: bool) -> bool {
    let int = |t: &str| {
        let d = t.strip_prefix(['-', '+']).unwrap_or(t);
        (!d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))
            || matches!(t, "$#" | "$?" | "$$" | "$!")
    };
    argv.iter().enumerate().any(|(i, t)| match t.as_str() {
        "-v" => argv.get(i + 1).is_some_and(|n| !is_identifier(n)),
        "-eq" | "-ne" | "-lt" | "-le" | "-gt" | "-ge" if double_bracket => {
            !(i > 0 && int(&argv[i - 1]) && argv.get(i + 1).is_some_and(|n| int(n)))
        }
        _ => false,
    })
}
